/* cli_opt.h - a command's options as rows (jemalloc's CONF_HANDLE_* rows,
 * Lua's luaL_Reg): one table per command plus one common table. Everything
 * about an option is said once, in its row, and the rest comes from the
 * rows: the parser (--name V, --name=V, -x V, -xV, a unique prefix of a
 * long name, "did you mean", "ambiguous option"), `--help`, and
 * `fakegc list options [CMD]` (bash completion and the man pages' OPTIONS).
 *
 *   typedef struct frob_args {
 *       cli_common c;            // first: the common rows store into it
 *       uint64_t times;
 *       int dry;
 *   } frob_args;
 *   static const cli_opt rows[] = {
 *       CLI_UINT("--times", 0, "N", frob_args, times, 1, 100, "do it N times"),
 *       CLI_FLAG("--dry-run", 'n', frob_args, dry, "only say what would be done"),
 *       CLI_END
 *   };
 *   const cli_cmd cli_frob_cmd = {"frob", "[OPTIONS] FILE", "Frob a file.", rows,
 *                                 CLI_O_FORMAT | CLI_O_OUTPUT, "exit status: ...", NULL};
 *
 *   int cli_frob(int argc, char **argv)
 *   {
 *       frob_args a = {.times = 1};
 *       char **ops; int nops;
 *       int r = cli_parse(&cli_frob_cmd, &a, argc, argv, &ops, &nops);
 *       if (r != CLI_PARSE_OK) return cli_parse_exit(r);   // help printed, or an error
 *       ... arguments, cli_env_setup, one engine call, one document, an exit code ...
 *   }
 *
 * A row of kind CLI_K_OUT is an output file: every output of a command is
 * opened (so checked) by cli_env_setup before any work, refused when two
 * outputs name one file or an output names an input (cli.h), and put in
 * place whole by cli_outputs_commit. A new output option gets all of that
 * by being a CLI_OUT row.
 */
#ifndef FAKEGC_CLI_OPT_H
#define FAKEGC_CLI_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind {
    CLI_K_FLAG,     /* no value: the int at off becomes 1 */
    CLI_K_UINT,     /* an unsigned number in [lo, hi] (size: 1, 2, 4 or 8 bytes) */
    CLI_K_SIZE,     /* the same with K/M/G/T suffixes (powers of 1024) */
    CLI_K_STR,      /* any word: the const char * at off points at it */
    CLI_K_ENUM,     /* one of words ("a|b|c"): the int at off gets its index */
    CLI_K_WORD,     /* one of words: the const char * at off points at it */
    CLI_K_IN,       /* an input file: the const char *; checked against the outputs */
    CLI_K_OUT,      /* an output file: the const char *; see above */
    CLI_K_DIR,      /* an output folder: the const char * */
    CLI_K_FN,       /* a value parsed by fn */
    CLI_K_HELP,     /* --help: print the help, exit 0 */
    CLI_K_VERSION,  /* --version: print the version, exit 0 */
    CLI_K_ALIAS     /* another spelling of the row named by words */
} cli_kind;

/* A CLI_K_FN row's parser: store v (its value) at `at` (the row's field).
 * 0, or -1 with what was expected in err ("expected K/N with 0 <= K < N"). */
typedef int (*cli_opt_fn)(void *at, const char *v, char *err, size_t n);

typedef struct cli_opt {
    const char *name;       /* "--format"; NULL ends a table */
    char shrt;              /* 'j' for -j, or 0 */
    unsigned char kind;     /* cli_kind */
    unsigned char size;     /* bytes at off (UINT/SIZE) */
    unsigned char hidden;   /* an alias: parsed when spelled whole, not in --help, not
                               a prefix's candidate */
    unsigned mask;          /* common rows: the CLI_O_* bit that selects it */
    const char *arg;        /* "FILE", "N": the value's name in --help (NULL: a flag) */
    const char *words;      /* ENUM/WORD: "text|json"; FN: its completion words or NULL */
    uint64_t lo, hi;        /* UINT/SIZE bounds */
    size_t off;             /* where the value is stored, from the start of the args */
    cli_opt_fn fn;          /* FN */
    const char *help;       /* its --help text; '\n' starts an indented line */
} cli_opt;

#define CLI_SZ(T, f) ((unsigned char)sizeof(((T *)0)->f))
#define CLI_FLAG(n, s, T, f, h) \
    {n, s, CLI_K_FLAG, CLI_SZ(T, f), 0, 0, NULL, NULL, 0, 0, offsetof(T, f), NULL, h}
#define CLI_UINT(n, s, a, T, f, lo, hi, h) \
    {n, s, CLI_K_UINT, CLI_SZ(T, f), 0, 0, a, NULL, lo, hi, offsetof(T, f), NULL, h}
#define CLI_SIZE(n, a, T, f, h) \
    {n, 0, CLI_K_SIZE, CLI_SZ(T, f), 0, 0, a, NULL, 0, UINT64_MAX, offsetof(T, f), NULL, h}
#define CLI_STR(n, a, T, f, h) \
    {n, 0, CLI_K_STR, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define CLI_ENUM(n, a, w, T, f, h) \
    {n, 0, CLI_K_ENUM, CLI_SZ(T, f), 0, 0, a, w, 0, 0, offsetof(T, f), NULL, h}
#define CLI_WORD(n, a, w, T, f, h) \
    {n, 0, CLI_K_WORD, 0, 0, 0, a, w, 0, 0, offsetof(T, f), NULL, h}
#define CLI_IN(n, a, T, f, h) \
    {n, 0, CLI_K_IN, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define CLI_OUT(n, a, T, f, h) \
    {n, 0, CLI_K_OUT, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define CLI_DIR(n, a, T, f, h) \
    {n, 0, CLI_K_DIR, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define CLI_FN(n, s, a, w, T, f, fn, h) \
    {n, s, CLI_K_FN, 0, 0, 0, a, w, 0, 0, offsetof(T, f), fn, h}
/* An alias of the row `of` (parsed only when spelled whole). */
#define CLI_ALIAS(n, of) {n, 0, CLI_K_ALIAS, 0, 1, 0, NULL, of, 0, 0, 0, NULL, NULL}
#define CLI_END {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL, NULL}

/* A command: its rows, the common rows it takes (a CLI_O_* mask; a row of
 * its own overrides the common row of the same name) and its --help text
 * around the options. */
typedef struct cli_cmd {
    const char *name;        /* "run" */
    const char *usage;       /* "[OPTIONS] [PATH...]" */
    const char *about;       /* the paragraphs before "options:" */
    const cli_opt *opts;     /* CLI_END-terminated */
    unsigned common;
    const char *tail;        /* after the options ("exit status: ...") */
    void (*more)(FILE *f);   /* more help after the tail (stress: its weights), or NULL */
    const char *summary;     /* one line for `fakegc --help` */
} cli_cmd;

/* The common rows (cli_common.c) and every command (main.c). */
extern const cli_opt cli_common_rows[];
const cli_cmd *const *cli_commands(size_t *n);
const cli_cmd *cli_command(const char *name);

enum { CLI_PARSE_OK = 0, CLI_PARSE_DONE = 1, CLI_PARSE_ERROR = -1 };

/* Parse argv[1..argc) by cmd's rows into base (whose first member is a
 * cli_common, which cli_common_init sets first). Operands (words not
 * options, everything after "--", a lone "-") are gathered in order at
 * *ops (argv's own array, from argv + 1), *nops of them.
 * A long option spelled by a unique prefix is rewritten in argv to its
 * whole name, so that argv can be replayed (cli_repro_command). Returns
 * CLI_PARSE_OK; CLI_PARSE_DONE when --help or --version was printed (exit
 * 0, or 2 when writing it failed: see cli_parse_exit); CLI_PARSE_ERROR with
 * the message printed ("unknown option '--formt'; did you mean
 * '--format'?"). */
int cli_parse(const cli_cmd *cmd, void *base, int argc, char **argv, char ***ops, int *nops);
/* The exit status for a cli_parse result that is not CLI_PARSE_OK. */
int cli_parse_exit(int r);

/* The row of cmd (its own, then the common rows it takes) named name
 * exactly, or NULL. */
const cli_opt *cli_opt_find(const cli_cmd *cmd, const char *name);
/* Does the word a (an argv word, "--name" or "--name=v" or "-x") name a row
 * of cmd that takes a value from the next word? For replaying a command line. */
int cli_opt_takes_next(const cli_cmd *cmd, const char *a);

/* `fakegc CMD --help`. 0, or -1 when f could not be written. */
int cli_help(const cli_cmd *cmd, FILE *f);
/* `fakegc list options [CMD]`: one line per option, tab-separated:
 * command, long name, short name ("-" none), kind (flag, number, size,
 * string, choice, input, output, folder, value), the value's name ("-"),
 * its words ("a|b", "-"), and the first line of its help. For bash
 * completion and the man pages. cmd NULL: every command. */
void cli_list_options(const cli_cmd *cmd, FILE *f);

/* Every row of kind `kind` that cmd takes, in order: calls fn(row, arg)
 * for each; for the outputs (CLI_K_OUT) and inputs (CLI_K_IN). */
void cli_rows_each(const cli_cmd *cmd, int kind, void (*fn)(const cli_opt *row, void *arg),
                   void *arg);

#endif
