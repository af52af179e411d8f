/* cli.h - the subcommands of `fakegc` and the option parsing they share.
 *
 * Every subcommand is `int cli_NAME(int argc, char **argv)` with argv[0] the
 * command name ("run") and returns the process exit status (CLI_EXIT_*). It
 * lives in its own file src/cli/cli_NAME.c; main.c dispatches through a
 * table whose entries are weak references, so a command that is not built
 * yet is reported as such instead of breaking the link.
 *
 *   int cli_frob(int argc, char **argv)
 *   {
 *       cli_common c; cli_common_init(&c);
 *       for (int i = 1; i < argc; i++) {
 *           int r = cli_common_option(&c, CLI_O_ALLOCATOR | CLI_O_FORMAT, argc, argv, &i);
 *           if (r < 0) return CLI_EXIT_USAGE;        // message printed
 *           if (r > 0) continue;
 *           ... command-specific options and operands ...
 *       }
 *       if (cli_env_setup(&c, "frob") < 0) return CLI_EXIT_USAGE;
 *       ... work ...
 *       cli_env_teardown(&c);
 *   }
 */
#ifndef FAKEGC_CLI_H
#define FAKEGC_CLI_H

#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "report/rp.h"
#include "report/rp_out.h"

#define FAKEGC_VERSION "0.1.0"

enum {
    CLI_EXIT_OK = 0,        /* everything held */
    CLI_EXIT_FAIL = 1,      /* an expectation failed, something was retained, a check found a problem */
    CLI_EXIT_USAGE = 2,     /* usage error, or a scenario that does not parse (nothing ran) */
    CLI_EXIT_INTERNAL = 3   /* a bug in fakegc itself */
};

/* The subcommands (defined in cli_NAME.c). */
int cli_run(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_stress(int argc, char **argv);
int cli_shrink(int argc, char **argv);
int cli_oom(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_merge(int argc, char **argv);
/* Their --help texts (what `fakegc NAME --help` prints), for main.c's
 * abbreviation rule. */
void cli_run_help(FILE *f);
void cli_list_help(FILE *f);
void cli_stress_help(FILE *f);
void cli_shrink_help(FILE *f);
void cli_oom_help(FILE *f);
void cli_diff_help(FILE *f);
void cli_bench_help(FILE *f);
void cli_merge_help(FILE *f);

/* Common options; a command passes the mask of those it accepts. */
enum {
    CLI_O_ALLOCATOR = 1u << 0,   /* --allocator NAME */
    CLI_O_INJECT = 1u << 1,      /* --inject BUG[,BUG] */
    CLI_O_COMPAT = 1u << 2,      /* --compat pytorch-1.13 */
    CLI_O_GC = 1u << 3,          /* --gc manual|auto|stress */
    CLI_O_SWEEP = 1u << 4,       /* --sweep eager|periodic */
    CLI_O_FORMAT = 1u << 5,      /* --format text|json|junit|tap */
    CLI_O_OUTPUT = 1u << 6,      /* --output FILE */
    CLI_O_DOT = 1u << 7,         /* --dot FILE, --objects FILE */
    CLI_O_TIMELINE = 1u << 8,    /* --timeline FILE.svg */
    CLI_O_JOBS = 1u << 9,        /* --jobs N */
    CLI_O_REPEAT = 1u << 10,     /* --repeat N */
    CLI_O_VERIFY = 1u << 11,     /* --verify */
    CLI_O_LIMITS = 1u << 12,     /* --max-bytes N, --max-statements N, --max-objects N */
    CLI_O_OUTPUT_STYLE = 1u << 13, /* -q, -v, --no-color */
    CLI_O_ALSO = 1u << 14,       /* --json FILE, --junit FILE, --tap FILE, --text FILE */
    CLI_O_HTML = 1u << 15        /* --html FILE (rp_html.h) */
};

typedef struct cli_common {
    const char *allocator;       /* spec for as_create; default "libc" */
    const char *inject;          /* CSV or NULL */
    const char *compat;          /* a design name (fk_design_from_name) or NULL */
    int design;                  /* its fk_design_id, -1 without --compat */
    int gc;                      /* -1 or SC_GC_* */
    int sweep;                   /* -1 or fk_policy */
    rp_format format;
    const char *output, *dot, *timeline, *objects;
    int jobs;                    /* >= 1 */
    uint32_t repeat;             /* >= 1 */
    int verify;
    uint64_t max_bytes, max_statements, max_objects;
    uint32_t examples;           /* --examples K (0: the default, 3) */
    int quiet, verbose, no_color;
    uint32_t timeout;            /* --timeout S: a worker's limit (--jobs), 0 none */
    const char *also[4];         /* --text/--json/--junit/--tap FILE, by rp_format */
    const char *html;            /* --html FILE */
    FILE *html_f;                /* set by cli_env_setup, like dot_f */
    rp_out html_o;
    /* set by cli_env_setup */
    al_allocator *alloc;
    FILE *out;                   /* report destination (stdout or --output) */
    FILE *dot_f, *timeline_f, *objects_f;  /* --dot, --timeline, --objects
                                              destinations, or NULL */
    rp_out out_o, dot_o, timeline_o, objects_o;  /* the files behind them (rp_out.h) */
    int color;                   /* colour in the text report */
} cli_common;

void cli_common_init(cli_common *c);

/* Consume argv[*i] (and its value) if it is a common option in mask.
 * Returns 1 consumed (*i on the last word used), 0 not a common option, -1
 * usage error (message printed on stderr). `cmd` names the command in
 * messages. */
int cli_common_option(cli_common *c, unsigned mask, const char *cmd, int argc, char **argv,
                      int *i);

/* "--name VALUE" or "--name=VALUE": 1 and *value when argv[*i] is the
 * option, 0 when it is not, -1 (message printed) when the value is missing. */
int cli_opt_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                  const char **value);

/* Unsigned integer with optional K/M/G/T suffix (powers of 1024) when
 * `sizes` is set. 0 or -1. */
int cli_parse_u64(const char *s, int sizes, uint64_t *out);

/* Create and install the allocator, inject bugs, open --output, --dot and
 * --timeline (temporary files next to their targets, rp_out.h: an
 * unwritable output is refused before any work). 0, or -1 with a usage
 * message printed (exit 2). */
int cli_env_setup(cli_common *c, const char *cmd);
/* Refuse (-1, message printed, exit 2) an --output, --dot or --timeline that
 * names one of the n input files: `run f.scn --output f.scn` overwrote its
 * own input. */
int cli_outputs_not_inputs(const cli_common *c, const char *cmd, char *const *inputs,
                           size_t n);
/* Put the finished outputs in place (rename) and flush stdout. 0, or -1
 * with "fakegc CMD: --output: cannot write PATH: strerror" printed: the
 * caller exits CLI_EXIT_USAGE (2), the documented code for a write error.
 * Call once, after the last write; outputs not committed are discarded by
 * cli_env_teardown and the previous files stay as they were. */
int cli_outputs_commit(cli_common *c, const char *cmd);
/* Undo cli_env_setup: discard uncommitted outputs, reset injections,
 * uninstall and destroy the allocator. Everything allocated through it must
 * be freed. */
void cli_env_teardown(cli_common *c);
/* Drop the outputs not yet committed (--output, --dot, --timeline): the
 * previous files, if any, stay as they were. */
void cli_output_abort(cli_common *c);

/* Write `run` in c->format to c->out (unless main_report is 0) and in every
 * --json/--junit/--tap/--text format to its own file (whole or not at
 * all). 0, or -1 printed. c->out itself is put in place by
 * cli_outputs_commit, after this. */
int cli_write_reports(cli_common *c, const char *cmd, const rp_run *run, int main_report);

/* The closest word to `word` among names[0..n) (stride bytes apart, a
 * const char * at the start of each), within an edit distance of 2, or
 * NULL. For "did you mean" in option and command errors. */
const char *cli_suggest(const char *word, const void *names, size_t n, size_t stride);
/* "unknown option '--formt'; did you mean '--format'? (fakegc run --help)",
 * choosing among the options in the help text `help`. */
void cli_unknown_option(const char *cmd, const char *opt, void (*help)(FILE *));
/* getopt_long's abbreviations for every command (main.c calls it before
 * the command): each "--pre[=V]" in argv[1..argc) (up to a "--") that is a
 * prefix of exactly one long option in `help`'s text is rewritten to that
 * option ("--form json" -> "--format json"); a word that is the exact name
 * stays, an unknown one is left for the command's did-you-mean. A prefix
 * of several: "ambiguous option '--ma' could be --max-bytes, ..." printed,
 * -1 (exit 2). 0 otherwise. */
int cli_expand_abbreviations(const char *cmd, int argc, char **argv, void (*help)(FILE *));

/* SIGINT and SIGTERM ask a command to stop after the scenario in hand: the
 * first one sets a flag (cli_interrupted), the second one kills as usual.
 * A command checks the flag between scenarios, reports what finished with
 * the report marked interrupted, and exits cli_interrupt_exit() (130 for
 * SIGINT, 143 for SIGTERM). Workers forked after the install inherit it. */
void cli_interrupt_install(void);
int cli_interrupted(void);           /* the signal number, or 0 */
/* The flag itself, for sc_options.stop: a scenario in hand stops at its
 * next statement (its record is then dropped, not reported). */
const volatile sig_atomic_t *cli_interrupt_flag(void);
const char *cli_interrupt_name(void); /* "SIGINT", "SIGTERM" or NULL */
int cli_interrupt_exit(void);        /* 128 + the signal number */

/* Valgrind canaries (tests/CMakeLists.txt, fakegc_canary): in a build with
 * FAKEGC_CANARY defined, cli_canary_leak("diff") loses a 64-byte block when
 * the environment has FAKEGC_CANARY_LEAK=diff, so that the `valgrind` label
 * can prove it sees a leak in that code path. Nothing in a normal build. */
#ifdef FAKEGC_CANARY
void cli_canary_leak(const char *where);
#else
#define cli_canary_leak(where) ((void)0)
#endif

/* --order KNOB[,KNOB] (stress, run): reverse, defer, reuse, weakrefs-late,
 * weakrefs-first, all, none, each setting its flag. 0, or -1 printed. */
int cli_parse_order(const char *cmd, const char *v, int *reverse, int *defer, int *reuse,
                    int *late);

/* "[3/58] scenarios/memo/churn.scn" on stderr, rewritten in place: only on
 * a terminal and not with -q (cli.md). done == total clears the line. */
void cli_progress(const cli_common *c, size_t done, size_t total, const char *file);

/* "fakegc CMD: MESSAGE" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Colour on f: a terminal, NO_COLOR unset or empty, and no --no-color. */
int cli_color_wanted(int no_color, FILE *f);

/* Help lines for the common options in mask. */
void cli_common_help(FILE *f, unsigned mask);

/* Scenario files named on a command line: each path is a file, or a folder
 * walked for *.scn (sub-folders named `errors` are skipped: those scripts
 * must be rejected). Sorted, so runs are in a stable order.
 *
 *   cli_files f = {0};
 *   if (cli_collect_scenarios("run", paths, npaths, &f) < 0) ... // printed
 *   ... f.v[0 .. f.n) ...
 *   cli_files_free(&f);
 *
 * Returns 0, -1 for a path that cannot be read (CLI_EXIT_USAGE), -2 when
 * out of memory (CLI_EXIT_INTERNAL). */
typedef struct cli_files {
    char **v;
    size_t n, cap;
} cli_files;
int cli_collect_scenarios(const char *cmd, char *const *paths, int npaths, cli_files *out);
void cli_files_free(cli_files *f);

#endif
