/* cli.h - the subcommands of `fakegc` and what they share: the common
 * options (as rows, opt/op.h), the environment a command runs in (the
 * allocator, injected bugs, its output files), exit codes and messages.
 *
 * Every subcommand is `int cli_NAME(int argc, char **argv)` with argv[0] the
 * command name ("run"), described by `const op_cmd cli_NAME_cmd` (its
 * rows and help), in its own file src/cli/cli_NAME.c, and returns the
 * process exit status (CLI_EXIT_*); main.c dispatches through a table.
 * The shape of a command: its rows (opt/op.h), cli_parse, then
 * cli_env_setup (outputs open), one engine call writing one document to
 * c.out, cli_outputs_commit, cli_env_teardown and the exit status.
 */
#ifndef FAKEGC_CLI_H
#define FAKEGC_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "report/rp.h"
#include "report/rp_out.h"
#include "report/rp_term.h"
#include "opt/op.h"
#include "scenario/sc.h"
#include "scenario/sc_files.h"
#include "value/vl.h"
#include "worker/wk_stop.h"

/* FAKEGC_VERSION ("0.4.0"): CMake's project(VERSION), defined by the build
 * (FAKEGC_CLI_DEFS) with the commit and build type; written nowhere else. */
#ifndef FAKEGC_VERSION
#error "FAKEGC_VERSION is defined by the build (CMakeLists.txt, FAKEGC_CLI_DEFS)"
#endif

enum {
    CLI_EXIT_OK = 0,        /* everything held */
    CLI_EXIT_FAIL = 1,      /* an expectation failed, something was retained, a check found a problem */
    CLI_EXIT_USAGE = 2,     /* usage error, or a scenario that does not parse (nothing ran) */
    CLI_EXIT_INTERNAL = 3   /* a bug in fakegc itself */
};

/* The formats of a comparison, `diff`'s and `bench --compare`'s writers
 * (text, JSON, a markdown table for a pull request), spelled once; the
 * value parsed is the word's index, 0 to 2, in this order. */
#define CLI_COMPARE_FORMATS "text|json|markdown"

/* The subcommands (defined in cli_NAME.c) and their rows. */
int cli_run(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_stress(int argc, char **argv);
int cli_shrink(int argc, char **argv);
int cli_oom(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_merge(int argc, char **argv);
extern const op_cmd cli_run_cmd, cli_list_cmd, cli_stress_cmd, cli_shrink_cmd, cli_oom_cmd,
    cli_diff_cmd, cli_bench_cmd, cli_merge_cmd;
int cli_record(int argc, char **argv);
extern const op_cmd cli_record_cmd;

/* `run`'s engine, for `run` and for the commands that judge scenario files
 * (record's recording, stress --html's reproducer), on options already
 * resolved: c as cli_parse left it (its cmd's output rows are opened here:
 * cli_env_setup, then torn down: cli_env_teardown), m the options of
 * `run`'s own (NULL: none), paths the files or folders (npaths 0: the
 * default scenarios), repro the command line that reruns one file (NULL:
 * "fakegc run"). The exit status, as `fakegc run` gives it. */
typedef struct cli_run_more {
    vl_order order;              /* --order */
    vl_shard shard;              /* --shard K/N (VL_SHARD_NONE: all) */
    const char *suppress;        /* --suppress FILE, or NULL */
} cli_run_more;
typedef struct cli_common cli_common;
int cli_run_files(cli_common *c, const cli_run_more *m, char **paths, int npaths,
                  const char *repro);

/* "fakegc 0.4.0 (commit abc1234, Debug)": the version, the commit it was
 * built from and the build type, on f. 0, or -1 when f failed. */
int cli_version(FILE *f);
/* The same as one string ("0.4.0 abc1234 Debug"'s parts), for reports. */
const char *cli_version_commit(void);

/* The program for the option engine (opt/op.h): "fakegc", the common rows
 * (cli_common.c) and cli_version. */
extern const op_prog cli_prog;
/* Every command (main.c), and the one named name or NULL. */
const op_cmd *const *cli_commands(size_t *n);
const op_cmd *cli_command(const char *name);
/* op_parse by cmd's rows into base, whose first member is a cli_common:
 * cli_common_init'ed first, its cmd set to cmd. */
int cli_parse(const op_cmd *cmd, void *base, int argc, char **argv, char ***ops, int *nops);

/* The common rows a command takes (op_cmd.common): the mask of a row of
 * cli_prog.common. */
enum {
    CLI_O_ALLOCATOR = 1u << 0,   /* --allocator NAME */
    CLI_O_INJECT = 1u << 1,      /* --inject BUG[,BUG] */
    CLI_O_COMPAT = 1u << 2,      /* --compat pytorch-1.13 */
    CLI_O_GC = 1u << 3,          /* --gc manual|auto|stress */
    CLI_O_SWEEP = 1u << 4,       /* --sweep eager|periodic */
    CLI_O_FORMAT = 1u << 5,      /* --format text|json|junit|tap, --examples K */
    CLI_O_OUTPUT = 1u << 6,      /* --output FILE */
    CLI_O_DOT = 1u << 7,         /* --dot FILE, --objects FILE */
    CLI_O_TIMELINE = 1u << 8,    /* --timeline FILE.svg */
    CLI_O_JOBS = 1u << 9,        /* --jobs N, --timeout S */
    CLI_O_REPEAT = 1u << 10,     /* --repeat N */
    CLI_O_VERIFY = 1u << 11,     /* --verify */
    CLI_O_LIMITS = 1u << 12,     /* --max-bytes N, --max-statements N, --max-objects N */
    CLI_O_OUTPUT_STYLE = 1u << 13, /* -q, -v, --color WHEN, --no-color */
    CLI_O_ALSO = 1u << 14,       /* --json FILE, --junit FILE, --tap FILE, --text FILE */
    CLI_O_HTML = 1u << 15,       /* --html FILE (rp_html.h) */
    CLI_O_SELECT = 1u << 16,     /* -k PATTERN */
    CLI_O_STOP = 1u << 17,       /* -x, --max-failures N */
    CLI_O_JSON = 1u << 18,       /* --format text|json (before CLI_O_FORMAT's) */
    CLI_O_SCAN = 1u << 19        /* --format ...|sarif|github (before CLI_O_FORMAT's) */
};


struct cli_common {
    const char *allocator;       /* spec for as_create; default "libc" */
    const char *inject;          /* CSV or NULL */
    const char *compat;          /* a design name (fk_design_from_name) or NULL */
    /* The run's settings, where the common rows store them: --compat
     * (sc.design: its fk_design_id, -1 without), --gc, --sweep, --repeat,
     * --verify, --max-bytes, --max-statements, --max-objects, --examples.
     * An engine takes this sc_options as it is (sc_options_default's values
     * for what the command line did not say); the files (dot, objects)
     * are the engine's to set. */
    sc_options sc;
    rp_format format;
    const char *output, *dot, *timeline, *objects;
    int jobs;                    /* >= 1 */
    int quiet, verbose;
    int color_when;              /* --color: RP_COLOR_* (--no-color: never) */
    uint32_t timeout;            /* --timeout S: a worker's limit (--jobs), 0 none */
    const char *also[RP_FORMATS];   /* --text/--json/--junit/--tap/--sarif/--github FILE,
                                       by rp_format */
    const char *html;            /* --html FILE */
    const char *subject;         /* what the report is on (record: its program), or NULL */
    const char *program;         /* record's program as given (rp_run.program), or NULL */
    const char *match;           /* -k: a path substring or glob */
    uint64_t max_failures;       /* stop after N failed scenarios (0: never) */
    int exitfirst;               /* -x: --max-failures 1 */
    const op_cmd *cmd;          /* set by cli_parse: the rows parsed */
    /* set by cli_env_setup */
    al_allocator *alloc;
    FILE *out;                   /* report destination (stdout or --output) */
    FILE *dot_f, *timeline_f, *objects_f, *html_f;  /* --dot, --timeline, --objects,
                                                       --html destinations, or NULL */
    rp_outs outs;                /* every output given, open */
    int color;                   /* colour in the text report */
};

/* Zeroes c and sets the defaults; the first call also makes the help texts
 * made from tables (cli_*_help_make), which --help, `list options` and the
 * man pages read. */
void cli_common_init(cli_common *c);
/* Each command's help made from the word tables (formats, designs, leak
 * classes): its about, rows' help or tail's examples point at what it
 * fills. A command whose help names a word has one, called by
 * cli_common_init. */
void cli_run_help_make(void);
void cli_record_help_make(void);
void cli_stress_help_make(void);
void cli_oom_help_make(void);
void cli_diff_help_make(void);
void cli_merge_help_make(void);
/* Breaks s's lines at spaces so that none is over width characters (help
 * text made at run time: op's '\n' starts an indented line). */
void cli_wrap(char *s, int width);

/* Create and install the allocator, inject bugs, and open every output the
 * command line gave (each OP_K_OUT row: temporary files next to their
 * targets, rp_out.h), so that an unwritable output, or two outputs naming
 * one file (by device and inode, or by the real path of their folders:
 * `--output a --dot ./a`), or an output naming a OP_K_IN row's file, is
 * refused before any work. 0, or -1 with a usage message printed (exit 2). */
int cli_env_setup(cli_common *c, const char *cmd);
/* The open file of output option opt ("--junit"), or NULL when not given. */
FILE *cli_output_file(const cli_common *c, const char *opt);
/* Refuse (-1, message printed, exit 2) any output that names one of the n
 * input files: `run f.scn --junit f.scn` overwrote its own input. */
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
/* Write `run` in c->format to c->out (unless main_report is 0) and in every
 * --json/--junit/--tap/--text format to its own file (whole or not at
 * all). 0, or -1 printed. c->out itself is put in place by
 * cli_outputs_commit, after this. */
int cli_write_reports(cli_common *c, const char *cmd, const rp_run *run, int main_report);

/* Valgrind canaries (tests/CMakeLists.txt, fakegc_canary): in a build with
 * FAKEGC_CANARY defined, cli_canary_leak("diff") loses a 64-byte block when
 * the environment has FAKEGC_CANARY_LEAK=diff, so that the `valgrind` label
 * can prove it sees a leak in that code path. Nothing in a normal build. */
#ifdef FAKEGC_CANARY
void cli_canary_leak(const char *where);
#else
#define cli_canary_leak(where) ((void)0)
#endif

/* --order KNOB[,KNOB] (stress, run): a OP_K_FN row of vl_order_parse. */
#define CLI_ORDER_HELP                                                             \
    "reverse (weak callbacks newest first), defer (callbacks\n"                     \
    "at the next statement), reuse (addresses reused at once:\n"                   \
    "guard:q=0), weakrefs-late (weak handles cleared after the\n"                  \
    "callbacks), weakrefs-first (the default), all, none"
#define CLI_ORDER_WORDS "reverse|defer|reuse|weakrefs-late|weakrefs-first|all|none"
/* Install the orderings (obj_configure) and, for reuse, put the guard
 * allocator with no quarantine under c's allocator (spec: room for it).
 * *saved gets the configuration before, for obj_configure at the end. */
struct obj_config;
void cli_order_apply(const vl_order *o, cli_common *c, char *spec, size_t n,
                     struct obj_config *saved);
/* Flush stdout: 0, or -1 with "fakegc CMD: cannot write to standard
 * output: strerror" printed (exit 2). */
int cli_flush_stdout(const char *cmd);

/* "fakegc CMD: MESSAGE" on stderr (op_verror). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The scenario files of a command line (sc_files.h; with no path
 * ./scenarios when there is one, else the installed ones: fakegc
 * --data-dir), -k and --shard applied (shard may be
 * NULL), none of them an output of c: 0, or the exit code (printed). */
int cli_scenarios(cli_common *c, const char *cmd, char **paths, int npaths,
                  vl_shard *shard, sc_files *files);
/* Where an installed folder or file is (rel: under FAKEGC_REL_LIBEXEC or
 * FAKEGC_REL_DATA): beside the binary's prefix (PREFIX/bin/fakegc ->
 * PREFIX/rel) when that exists, else the source tree's src_sub this binary
 * was built from. */
void cli_where(const char *rel, const char *src_sub, char *buf, size_t n);
/* A --suppress FILE, read before anything runs: 0 with its rules in *out
 * (NULL: only checked), or -1 with "FILE:LINE: error: ..." (or "FILE: is a
 * folder") on stderr: the caller exits 2. */
struct sc_supp;
int cli_suppressions(const char *path, struct sc_supp *out);

#endif
