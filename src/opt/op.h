/* op.h - a program's options as rows (jemalloc's CONF_HANDLE_* rows, Lua's
 * luaL_Reg): one table per command plus one common table. Everything about
 * an option is said once, in its row, and the rest comes from the rows: the
 * parser (--name V, --name=V, -x V, -xV, a unique prefix of a long name,
 * "did you mean", "ambiguous option"), `--help`, and one line per option for
 * shell completion and man pages (op_list_options). The engine knows no
 * command: the program describes itself in an op_prog (its name, which
 * begins every message, its common rows, its --version), each command in an
 * op_cmd.
 *
 *   typedef struct frob_args {
 *       uint64_t times;
 *       int dry;
 *   } frob_args;
 *   static const op_opt rows[] = {
 *       OP_UINT("--times", 0, "N", frob_args, times, 1, 100, "do it N times"),
 *       OP_FLAG("--dry-run", 'n', frob_args, dry, "only say what would be done"),
 *       OP_END
 *   };
 *   static const op_cmd frob_cmd = {"frob", "[OPTIONS] FILE", "Frob a file.", rows,
 *                                   0, "exit status: ...", NULL, "frob a file", 0};
 *   static const op_prog prog = {"tool", common_rows, print_version};
 *
 *   frob_args a = {.times = 1};
 *   char **ops; int nops;
 *   int r = op_parse(&prog, &frob_cmd, &a, argc, argv, &ops, &nops);
 *   if (r != OP_PARSE_OK) return op_parse_exit(r);   // help printed, or an error
 *
 * Errors are "NAME CMD: MESSAGE" lines on stderr ("tool frob: unknown
 * option '--tims'; did you mean '--times'? (tool frob --help)").
 * A row of kind OP_K_OUT is an output file and OP_K_IN an input file: the
 * engine only stores them; op_rows_each lets the program open and check
 * every one of them before any work.
 */
#ifndef FAKEGC_OP_H
#define FAKEGC_OP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum op_kind {
    OP_K_FLAG,      /* no value: the int at off becomes 1 */
    OP_K_UINT,      /* an unsigned number in [lo, hi] (size: 1, 2, 4 or 8 bytes) */
    OP_K_SIZE,      /* the same with K/M/G/T suffixes (powers of 1024) */
    OP_K_STR,       /* any word: the const char * at off points at it */
    OP_K_ENUM,      /* one of words ("a|b|c"): the int at off gets its index */
    OP_K_WORD,      /* one of words: the const char * at off points at it */
    OP_K_IN,        /* an input file: the const char *; checked against the outputs */
    OP_K_OUT,       /* an output file: the const char *; see above */
    OP_K_DIR,       /* an output folder: the const char * */
    OP_K_FN,        /* a value parsed by fn */
    OP_K_HELP,      /* --help: print the help, exit 0 */
    OP_K_VERSION,   /* --version: print the version, exit 0 */
    OP_K_ALIAS      /* another spelling of the row named by words */
} op_kind;

/* An OP_K_FN row's parser: store v (its value) at `at` (the row's field).
 * 0, or -1 with what was expected in err ("expected K/N with 0 <= K < N"). */
typedef int (*op_fn)(void *at, const char *v, char *err, size_t n);

typedef struct op_opt {
    const char *name;       /* "--format"; NULL ends a table */
    char shrt;              /* 'j' for -j, or 0 */
    unsigned char kind;     /* op_kind */
    unsigned char size;     /* bytes at off (UINT/SIZE) */
    unsigned char hidden;   /* an alias: parsed when spelled whole, not in --help, not
                               a prefix's candidate */
    unsigned mask;          /* common rows: the bits that select it (op_cmd.common) */
    const char *arg;        /* "FILE", "N": the value's name in --help (NULL: a flag) */
    const char *words;      /* ENUM/WORD: "text|json"; FN: its completion words or NULL */
    uint64_t lo, hi;        /* UINT/SIZE bounds */
    size_t off;             /* where the value is stored, from the start of the args */
    op_fn fn;               /* FN */
    const char *help;       /* its --help text; '\n' starts an indented line */
} op_opt;

#define OP_SZ(T, f) ((unsigned char)sizeof(((T *)0)->f))
#define OP_FLAG(n, s, T, f, h) \
    {n, s, OP_K_FLAG, OP_SZ(T, f), 0, 0, NULL, NULL, 0, 0, offsetof(T, f), NULL, h}
#define OP_UINT(n, s, a, T, f, lo, hi, h) \
    {n, s, OP_K_UINT, OP_SZ(T, f), 0, 0, a, NULL, lo, hi, offsetof(T, f), NULL, h}
#define OP_SIZE(n, a, T, f, h) \
    {n, 0, OP_K_SIZE, OP_SZ(T, f), 0, 0, a, NULL, 0, UINT64_MAX, offsetof(T, f), NULL, h}
#define OP_STR(n, a, T, f, h) \
    {n, 0, OP_K_STR, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define OP_ENUM(n, a, w, T, f, h) \
    {n, 0, OP_K_ENUM, OP_SZ(T, f), 0, 0, a, w, 0, 0, offsetof(T, f), NULL, h}
#define OP_WORD(n, a, w, T, f, h) \
    {n, 0, OP_K_WORD, 0, 0, 0, a, w, 0, 0, offsetof(T, f), NULL, h}
#define OP_IN(n, a, T, f, h) \
    {n, 0, OP_K_IN, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define OP_OUT(n, a, T, f, h) \
    {n, 0, OP_K_OUT, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define OP_DIR(n, a, T, f, h) \
    {n, 0, OP_K_DIR, 0, 0, 0, a, NULL, 0, 0, offsetof(T, f), NULL, h}
#define OP_FN(n, s, a, w, T, f, fn, h) \
    {n, s, OP_K_FN, 0, 0, 0, a, w, 0, 0, offsetof(T, f), fn, h}
/* An alias of the row `of` (parsed only when spelled whole). */
#define OP_ALIAS(n, of) {n, 0, OP_K_ALIAS, 0, 1, 0, NULL, of, 0, 0, 0, NULL, NULL}
#define OP_END {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL, NULL}

/* A command: its rows, the common rows it takes (a mask of the program's
 * bits; a row of its own overrides the common row of the same name) and its
 * --help text around the options. */
typedef struct op_cmd {
    const char *name;        /* "run" */
    const char *usage;       /* "[OPTIONS] [PATH...]" */
    const char *about;       /* the paragraphs before "options:" */
    const op_opt *opts;      /* OP_END-terminated */
    unsigned common;         /* selects the common rows whose mask has one of these bits */
    const char *tail;        /* after the options: "Exit status:\n  ...", "Examples:\n  ..." */
    void (*more)(FILE *f);   /* more help before the tail (stress: its weights), or NULL */
    const char *summary;     /* one line for the program's own --help */
    /* 1: the options end at the first operand, as lua.c's collectargs ends
     * them at the script: everything after it is the operand's own (a
     * program's arguments), with or without "--". 0: GNU getopt's order. */
    int operands_end;
} op_cmd;

/* The program: its name (the first word of every message and usage line),
 * the rows every command may take (a row of mask 0 is taken by all, others
 * by the commands whose op_cmd.common has one of its bits; NULL: none) and
 * what --version prints (0, or -1 when f failed). */
typedef struct op_prog {
    const char *name;
    const op_opt *common;
    int (*version)(FILE *f);
} op_prog;

enum { OP_MAX_ROWS = 128 };
/* The rows cmd takes, in --help's order, at out (OP_MAX_ROWS of room): its
 * own, then the common ones it selects that it does not override (of two
 * common rows of one name, the first). Their number. */
size_t op_rows(const op_prog *p, const op_cmd *cmd, const op_opt **out);

enum { OP_PARSE_OK = 0, OP_PARSE_DONE = 1, OP_PARSE_ERROR = -1 };

/* Parse argv[1..argc) by cmd's rows into base (the struct the rows'
 * offsets are in). Operands (words not options, everything after "--", a
 * lone "-"; with cmd->operands_end, everything from the first operand on)
 * are gathered in order at *ops (argv's own array, from argv + 1),
 * *nops of them; argv is permuted as GNU getopt does (options first).
 * A long option spelled by a unique prefix is rewritten in argv to its
 * whole name, so that argv can be replayed. Returns OP_PARSE_OK;
 * OP_PARSE_DONE when --help or --version was printed on stdout and
 * flushed (OP_PARSE_ERROR when writing it failed, said why); OP_PARSE_ERROR
 * with the message printed ("unknown option '--formt'; did you mean
 * '--format'?"). */
int op_parse(const op_prog *p, const op_cmd *cmd, void *base, int argc, char **argv,
             char ***ops, int *nops);
/* The exit status for an op_parse result that is not OP_PARSE_OK: 0 after
 * --help or --version, else 2 (a usage error). */
int op_parse_exit(int r);

/* A row's words ("a|b|c"; NULL when it has none). An ENUM or WORD row
 * whose words are NULL reads them from a table kept elsewhere (the report
 * formats' rp_formats) through its fn, called as fn(NULL, NULL, buf, n):
 * it writes the words into buf and returns 0. */
const char *op_words(const op_opt *r, char *buf, size_t n);

/* The row of cmd (its own, then the common rows it takes) named name
 * exactly (an alias: the row it names), or NULL. */
const op_opt *op_find(const op_prog *p, const op_cmd *cmd, const char *name);
/* Does the word a (an argv word, "--name" or "--name=v" or "-x") name a row
 * of cmd that takes a value from the next word? For replaying a command line. */
int op_takes_next(const op_prog *p, const op_cmd *cmd, const char *a);

/* `NAME CMD --help`. 0, or -1 when f could not be written. */
int op_help(const op_prog *p, const op_cmd *cmd, FILE *f);
/* One line per option of cmd, tab-separated: command, long name, short
 * name ("-" none), kind (flag, number, size, string, choice, input, output,
 * folder, value), the value's name ("-"), its words ("a|b", "-"), and the
 * first line of its help. For shell completion and man pages. */
void op_list_options(const op_prog *p, const op_cmd *cmd, FILE *f);

/* Every row of kind `kind` that cmd takes, in order: calls fn(row, arg)
 * for each; for the outputs (OP_K_OUT) and inputs (OP_K_IN). */
void op_rows_each(const op_prog *p, const op_cmd *cmd, int kind,
                  void (*fn)(const op_opt *row, void *arg), void *arg);

/* "NAME CMD: MESSAGE" (cmd NULL: "NAME: MESSAGE") and a newline on stderr. */
void op_verror(const op_prog *p, const char *cmd, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void op_error(const op_prog *p, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Flush stdout: 0, or -1 with "NAME CMD: cannot write to standard output:
 * strerror" printed. */
int op_flush_stdout(const op_prog *p, const char *cmd);

#endif
