/* cli_common.c - what the subcommands share: the common option rows, the
 * environment a command runs in (allocator, injections, output files) and
 * the scenario files named on a command line. */
#include "cli/cli.h"

#include "heap/hp.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "scenario/sc_supp.h"
#include "scenario/sc.h"
#include "report/rp_jw.h"

#ifndef FAKEGC_COMMIT
#define FAKEGC_COMMIT "unknown"
#endif
#ifndef FAKEGC_BUILD_TYPE
#define FAKEGC_BUILD_TYPE "unknown"
#endif

static void help_formats_make(void);
static void help_compat_make(void);

/* The help texts made from tables, once. */
static void help_make(void)
{
    static int made;
    if (made)
        return;
    made = 1;
    help_formats_make();
    help_compat_make();
    cli_run_help_make();
    cli_record_help_make();
    cli_stress_help_make();
    cli_oom_help_make();
    cli_diff_help_make();
    cli_merge_help_make();
}

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    help_make();
    rp_jw_build_set(FAKEGC_VERSION, FAKEGC_COMMIT, FAKEGC_BUILD_TYPE);   /* every JSON says it */
    c->allocator = "libc";
    sc_options_default(&c->sc);
    c->format = RP_TEXT;
    c->jobs = 1;
    c->timeout = 120;   /* per scenario: a hung one costs 2 minutes, not the run */
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    op_verror(&cli_prog, cmd, fmt, ap);
    va_end(ap);
}

int cli_parse(const op_cmd *cmd, void *base, int argc, char **argv, char ***ops, int *nops)
{
    cli_common_init(base);
    ((cli_common *)base)->cmd = cmd;
    return op_parse(&cli_prog, cmd, base, argc, argv, ops, nops);
}

/* ---- the common rows ---- */

/* --compat DESIGN: at is the cli_common (the row's offset is 0). */
static int parse_compat(void *at, const char *v, char *err, size_t n)
{
    cli_common *c = at;
    fk_design_id d;
    if (fk_design_from_name(v, &d) != 0) {
        char names[128];
        fk_design_names(names, sizeof names);
        snprintf(err, n, "unknown value (expected %s)", names);
        return -1;
    }
    c->compat = v;
    c->sc.design = (int)d;
    return 0;
}

/* --compat's help, made from the design table before any parse (help_make):
 * the first design --compat accepts, and what the default models. */
static char help_compat[256];

static void help_compat_make(void)
{
    const fk_design *first = fk_design_get(FK_D_DEFAULT + 1), *def = fk_design_get(FK_D_DEFAULT);
    snprintf(help_compat, sizeof help_compat,
             "the memo design (wins over config compat), one of\n"
             "`fakegc list designs` (%s, ...); without:\n"
             "a recording's torch's, else fakegc's design\n(%s)",
             first->name, def->brief);
}

/* --format's words (op_words): the report formats up to a set (rp_formats). */
static int formats_plain(void *at, const char *v, char *buf, size_t n)
{
    (void)at, (void)v;
    rp_format_words(RP_FSET_PLAIN, buf, n);
    return 0;
}

static int formats_tests(void *at, const char *v, char *buf, size_t n)
{
    (void)at, (void)v;
    rp_format_words(RP_FSET_TESTS, buf, n);
    return 0;
}

static int formats_scan(void *at, const char *v, char *buf, size_t n)
{
    (void)at, (void)v;
    rp_format_words(RP_FSET_SCAN, buf, n);
    return 0;
}

/* The format rows' help, made from rp_formats when a command starts (its
 * names, options and titles; the notes here name none): --format's per set,
 * then each --NAME FILE's. */
enum { HELP_WIDTH = 53 };
static char help_format[RP_FSET_SCAN + 1][320];
static char help_also[RP_FORMATS][160];

void cli_wrap(char *s, int width)
{
    char *line = s, *space = NULL;
    for (char *p = s; *p; p++) {
        if (*p == '\n')
            line = p + 1, space = NULL;
        else if (*p == ' ')
            space = p;
        if (p - line >= width && space)
            *space = '\n', line = space + 1, space = NULL;
    }
}

/* What --format says of format k in set (NULL: its name alone). */
static const char *format_note(int k, int set, char *buf, size_t n)
{
    const char *title = rp_formats[k].title;
    switch (k) {
    case RP_TEXT: return "default";
    case RP_JSON:
        return set == RP_FSET_PLAIN ? "stable, for scripts; its schema in fakegc-report(5)" : NULL;
    case RP_SARIF: snprintf(buf, n, "%s for code scanning", title); return buf;
    case RP_GITHUB: snprintf(buf, n, "%s: ::error file=F,line=L::...", title); return buf;
    }
    return NULL;
}

static void help_format_set(int set, char *buf, size_t n)
{
    size_t k = 0;
    int last = 0;
    for (int i = 0; i < RP_FORMATS; i++)
        if (rp_formats[i].set <= set)
            last = i;
    for (int i = 0; i < RP_FORMATS && k < n; i++) {
        char nb[96];
        if (rp_formats[i].set > set)
            continue;
        const char *note = format_note(i, set, nb, sizeof nb);
        k += (size_t)snprintf(buf + k, n - k, "%s%s%s%s%s", i == 0 ? "" : i == last ? " or " : ", ",
                              rp_formats[i].name, note ? " (" : "", note ? note : "", note ? ")" : "");
    }
    cli_wrap(buf, HELP_WIDTH);
}

static void help_formats_make(void)
{
    const rp_format_row *f = rp_formats;
    for (int set = 0; set <= RP_FSET_SCAN; set++)
        help_format_set(set, help_format[set], sizeof help_format[set]);
    for (int i = 0; i < RP_FORMATS; i++) {
        char more[128] = "";
        if (i == RP_JSON)
            snprintf(more, sizeof more, ", in the same run (e.g. --format %s %s r.%s %s ci.xml)",
                     f[RP_TEXT].name, f[RP_JSON].option, f[RP_JSON].name, f[RP_JUNIT].option);
        if (i == RP_SARIF)
            snprintf(more, sizeof more,
                     ": a result per failing verdict group or failed expectation, at the program's line");
        /* code scanning's formats are about the report, the others are it */
        snprintf(help_also[i], sizeof help_also[i], "also write %s%s to FILE%s",
                 f[i].set == RP_FSET_SCAN ? "" : "the report as ", f[i].title, more);
        cli_wrap(help_also[i], HELP_WIDTH);
    }
}

static int parse_never(void *at, const char *v, char *err, size_t n)
{
    (void)v, (void)err, (void)n;
    *(int *)at = RP_COLOR_NEVER;
    return 0;
}

#define C cli_common
/* A --NAME FILE row of rp_formats: also write that format to FILE. */
#define ALSO_ROW(F)                                                              \
    {rp_formats[F].option, 0, OP_K_OUT, 0, 0, CLI_O_ALSO, "FILE", NULL, 0, 0,  \
     offsetof(C, also[F]), NULL, help_also[F]}
static const op_opt common_rows[] = {
    {"--allocator", 0, OP_K_STR, 0, 0, CLI_O_ALLOCATOR, "NAME", NULL, 0, 0,
     offsetof(C, allocator), NULL,
     "libc (default), jemalloc, tracking, guard, arena;\n"
     "wrappers compose: tracking/jemalloc, fail:N/libc\n(fakegc list allocators)"},
    {"--inject", 0, OP_K_STR, 0, 0, CLI_O_INJECT, "BUG[,BUG]", NULL, 0, 0,
     offsetof(C, inject), NULL, "re-introduce known bugs (fakegc list bugs)"},
    {"--compat", 0, OP_K_FN, 0, 0, CLI_O_COMPAT, "DESIGN", NULL, 0, 0, 0, parse_compat,
     help_compat},
    {"--gc", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_GC, "MODE", "manual|auto|stress", 0, 0,
     offsetof(C, sc.gc), NULL, "manual, auto or stress (overrides config gc)"},
    {"--sweep", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_SWEEP, "POLICY", "eager|periodic", 0, 0,
     offsetof(C, sc.sweep), NULL, "eager or periodic (overrides config sweep)"},
    {"--format", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_JSON, "FMT", NULL, 0, 0,
     offsetof(C, format), formats_plain, help_format[RP_FSET_PLAIN]},
    {"--format", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_SCAN, "FMT", NULL, 0, 0,
     offsetof(C, format), formats_scan, help_format[RP_FSET_SCAN]},
    {"--format", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_FORMAT, "FMT", NULL, 0, 0,
     offsetof(C, format), formats_tests, help_format[RP_FSET_TESTS]},
    {"--examples", 0, OP_K_UINT, OP_SZ(C, sc.examples), 0, CLI_O_FORMAT, "K", NULL, 1, 1000,
     offsetof(C, sc.examples), NULL,
     "examples kept per group of retained objects (default\n3; text shows 1, -v all K)"},
    {"--output", 0, OP_K_OUT, 0, 0, CLI_O_OUTPUT, "FILE", NULL, 0, 0, offsetof(C, output),
     NULL, "write the report there (default stdout), whole or\n"
           "not at all (a temporary file renamed into place)"},
    ALSO_ROW(RP_JSON), ALSO_ROW(RP_JUNIT), ALSO_ROW(RP_TAP),
    ALSO_ROW(RP_TEXT), ALSO_ROW(RP_SARIF), ALSO_ROW(RP_GITHUB),
    {"--dot", 0, OP_K_OUT, 0, 0, CLI_O_DOT, "FILE", NULL, 0, 0, offsetof(C, dot), NULL,
     "Graphviz retention graph of what was retained: one\n"
     "graph, a titled cluster per failing scenario"},
    {"--objects", 0, OP_K_OUT, 0, 0, CLI_O_DOT, "FILE", NULL, 0, 0, offsetof(C, objects), NULL,
     "every object behind a failure or retained at\n"
     "teardown, one JSON line each (fakegc-objects/1),\n"
     "streamed: the report keeps groups and examples"},
    {"--timeline", 0, OP_K_OUT, 0, 0, CLI_O_TIMELINE, "FILE.svg", NULL, 0, 0,
     offsetof(C, timeline), NULL, "live objects and bytes after each statement"},
    {"--html", 0, OP_K_OUT, 0, 0, CLI_O_HTML, "FILE", NULL, 0, 0, offsetof(C, html), NULL,
     "one self-contained page to look at (summary, groups,\n"
     "dominator tree, growth, timeline; a diff's page)"},
    {"--jobs", 'j', OP_K_FN, 0, 0, CLI_O_JOBS, "N", NULL, 0, 0, offsetof(C, jobs), vl_jobs,
     "N worker processes (0: one per CPU); a crash in\n"
     "one is that scenario's error, the others go on"},
    {"--timeout", 0, OP_K_UINT, OP_SZ(C, timeout), 0, CLI_O_JOBS, "S", NULL, 0, 86400,
     offsetof(C, timeout), NULL,
     "with --jobs: a scenario running longer than S seconds\n"
     "is that scenario's error (default 120, 0: none)"},
    {"--repeat", 0, OP_K_UINT, OP_SZ(C, sc.repeat), 0, CLI_O_REPEAT, "N", NULL, 1, 1000000,
     offsetof(C, sc.repeat), NULL,
     "N rounds in one process; fail only on retention\n"
     "that grows with the number of rounds"},
    {"--verify", 0, OP_K_FLAG, sizeof(int), 0, CLI_O_VERIFY, NULL, NULL, 0, 0,
     offsetof(C, sc.verify), NULL, "check heap and memo invariants after every statement"},
    {"--max-bytes", 0, OP_K_SIZE, OP_SZ(C, sc.max_bytes), 0, CLI_O_LIMITS, "N", NULL, 0,
     UINT64_MAX, offsetof(C, sc.max_bytes), NULL, "real tensor data bytes (default 1G; K/M/G suffixes)"},
    {"--max-statements", 0, OP_K_UINT, OP_SZ(C, sc.max_statements), 0, CLI_O_LIMITS, "N", NULL,
     0, UINT64_MAX, offsetof(C, sc.max_statements), NULL,
     "statements executed per scenario (default 100000000)"},
    {"--max-objects", 0, OP_K_UINT, OP_SZ(C, sc.max_objects), 0, CLI_O_LIMITS, "N", NULL, 0,
     UINT64_MAX, offsetof(C, sc.max_objects), NULL,
     "live objects (default 10000000)\n(--max-* 0: no limit)"},
    {"--filter", 'k', OP_K_STR, 0, 0, CLI_O_SELECT, "PATTERN", NULL, 0, 0, offsetof(C, match),
     NULL, "only the scenarios whose path contains PATTERN or\n"
           "matches it as a glob (*, ?, [...]): -k weak, -k 'memo/*'"},
    {"--exitfirst", 'x', OP_K_FLAG, sizeof(int), 0, CLI_O_STOP, NULL, NULL, 0, 0,
     offsetof(C, exitfirst), NULL, "stop at the first failed scenario (--max-failures 1)"},
    {"--max-failures", 0, OP_K_UINT, OP_SZ(C, max_failures), 0, CLI_O_STOP, "N", NULL, 1,
     UINT64_MAX, offsetof(C, max_failures), NULL,
     "stop after N failed scenarios (those in hand finish);\n"
     "the report holds those that ran"},
    {"--quiet", 'q', OP_K_FLAG, sizeof(int), 0, CLI_O_OUTPUT_STYLE, NULL, NULL, 0, 0,
     offsetof(C, quiet), NULL, "quieter"},
    {"--verbose", 'v', OP_K_FLAG, sizeof(int), 0, CLI_O_OUTPUT_STYLE, NULL, NULL, 0, 0,
     offsetof(C, verbose), NULL, "more detail"},
    {"--color", 0, OP_K_ENUM, sizeof(int), 0, CLI_O_OUTPUT_STYLE, "WHEN", "auto|always|never",
     0, 0, offsetof(C, color_when), NULL,
     "ANSI colour: auto (the default: on a terminal, not\n"
     "with NO_COLOR set or TERM=dumb; FORCE_COLOR set:\n"
     "always), always, never"},
    {"--no-color", 0, OP_K_FN, 0, 0, CLI_O_OUTPUT_STYLE, NULL, NULL, 0, 0,
     offsetof(C, color_when), parse_never, "--color=never"},
    OP_ALIAS("--no-colour", "--no-color"),
    {"--help", 'h', OP_K_HELP, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL, "this text"},
    {"--version", 0, OP_K_VERSION, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL,
     "the version, commit and build type"},
    OP_END};
#undef C
#undef ALSO_ROW

const op_prog cli_prog = {"fakegc", common_rows, cli_version};

void cli_order_apply(const vl_order *o, cli_common *c, char *spec, size_t n,
                     struct obj_config *saved)
{
    if (o->reuse && !strstr(c->allocator, "guard")) {
        snprintf(spec, n, "guard:q=0/%s", c->allocator);
        c->allocator = spec;
    }
    *saved = obj_get_config();
    obj_config oc = *saved;
    oc.callbacks_reverse = o->reverse;
    oc.defer_callbacks = o->defer;
    oc.weak_clear_late = o->late;
    obj_configure(&oc);   /* workers fork after this and inherit it */
}

int cli_flush_stdout(const char *cmd)
{
    return op_flush_stdout(&cli_prog, cmd);
}

int cli_version(FILE *f)
{
    fprintf(f, "fakegc %s (commit %s, %s build)\n", FAKEGC_VERSION, FAKEGC_COMMIT,
            FAKEGC_BUILD_TYPE);
    return ferror(f) ? -1 : 0;
}

const char *cli_version_commit(void)
{
    return FAKEGC_COMMIT;
}

#ifdef FAKEGC_CANARY
/* A block lost on purpose: the pointer is stored, then overwritten. */
static char *volatile canary_sink;

__attribute__((noinline)) void cli_canary_leak(const char *where)
{
    const char *want = getenv("FAKEGC_CANARY_LEAK");
    if (!want || strcmp(want, where) != 0)
        return;
    char *p = malloc(64);
    if (p)
        snprintf(p, 64, "canary leak in %s", where);
    canary_sink = p;
    canary_sink = NULL;
}
#endif

/* ---- output files ---- */

FILE *cli_output_file(const cli_common *c, const char *opt)
{
    return rp_outs_file(&c->outs, opt);
}

static void set_files(cli_common *c)
{
    FILE *o = cli_output_file(c, "--output");
    c->out = o ? o : stdout;
    c->dot_f = cli_output_file(c, "--dot");
    c->timeline_f = cli_output_file(c, "--timeline");
    c->objects_f = cli_output_file(c, "--objects");
    c->html_f = cli_output_file(c, "--html");
}

static void discard_outputs(cli_common *c)
{
    rp_outs_abort(&c->outs);
    set_files(c);
}

struct gather {
    cli_common *c;
    const char *paths[RP_OUTS_MAX], *names[RP_OUTS_MAX];
    size_t n;
};

static void gather(const op_opt *r, void *arg)
{
    struct gather *g = arg;
    const char *path = *(const char **)((char *)g->c + r->off);
    if (path && g->n < RP_OUTS_MAX) {
        g->paths[g->n] = path;
        g->names[g->n++] = r->name;
    }
}

int cli_outputs_not_inputs(const cli_common *c, const char *cmd, char *const *inputs, size_t n)
{
    char err[600];
    if (rp_outs_not_inputs(&c->outs, (const char *const *)inputs, n, err, sizeof err) == 0)
        return 0;
    cli_error(cmd, "%s", err);
    return -1;
}

/* Every OP_K_OUT row's file opened (--dot's graph begun), and every
 * OP_K_IN row's file readable and not an output. */
static int open_outputs(cli_common *c, const char *cmd)
{
    struct gather out = {.c = c}, in = {.c = c};
    char err[600];
    if (c->cmd) {
        op_rows_each(&cli_prog, c->cmd, OP_K_OUT, gather, &out);
        op_rows_each(&cli_prog, c->cmd, OP_K_IN, gather, &in);
    }
    if (rp_outs_setup(&c->outs, out.names, out.paths, out.n, in.names, in.paths, in.n, err,
                      sizeof err) < 0) {
        cli_error(cmd, "%s", err);
        return -1;
    }
    set_files(c);
    if (c->dot_f && hp_dot_begin(c->dot_f) != 0) {
        cli_error(cmd, "--dot: cannot write %s: %s", c->dot, strerror(errno ? errno : EIO));
        discard_outputs(c);
        return -1;
    }
    return 0;
}

int cli_outputs_commit(cli_common *c, const char *cmd)
{
    char who[64];
    snprintf(who, sizeof who, "fakegc %s", cmd);
    if (c->dot_f)
        hp_dot_end(c->dot_f);   /* a write error fails the commit */
    int rc = rp_outs_commit(&c->outs, who);
    set_files(c);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(cmd, "cannot write the report to standard output: %s",
                  strerror(errno ? errno : EIO));
        clearerr(stdout);
        rc = -1;
    }
    return rc;
}

int cli_env_setup(cli_common *c, const char *cmd)
{
    char err[512];
    c->alloc = NULL;
    c->out = stdout;
    if (as_create(c->allocator, &c->alloc, err, sizeof err) != 0) {
        cli_error(cmd, "--allocator: %s", err);
        return -1;
    }
    al_install(c->alloc);
    if (fk_inject(c->inject ? c->inject : "", err, sizeof err) != 0 ||
        (c->sc.design >= 0 && fk_inject_check(c->inject, (fk_design_id)c->sc.design, err,
                                           sizeof err) != 0)) {
        cli_error(cmd, "--inject: %s", err);
        goto undo;
    }
    if (open_outputs(c, cmd) < 0)
        goto undo;
    c->color = c->format == RP_TEXT && rp_color_wanted(c->color_when, c->out);
    er_clear();
    return 0;
undo:
    fk_inject("", err, sizeof err);
    al_install(NULL);
    al_destroy(c->alloc);
    c->alloc = NULL;
    return -1;
}

void cli_env_teardown(cli_common *c)
{
    char err[256];
    discard_outputs(c);
    fflush(stdout);
    fk_inject("", err, sizeof err);
    al_install(NULL);
    if (c->alloc)
        al_destroy(c->alloc);
    c->alloc = NULL;
}

int cli_write_reports(cli_common *c, const char *cmd, const rp_run *run, int main_report)
{
    rp_options ro = {c->color, c->verbose, c->quiet, c->subject};
    int rc = 0;
    errno = 0;
    if (main_report && (rp_write(run, c->format, c->out, &ro) != 0 || fflush(c->out) != 0)) {
        cli_error(cmd, "cannot write the report to %s: %s",
                  c->output ? c->output : "standard output", strerror(errno ? errno : EIO));
        rc = -1;
    }
    for (int k = 0; k < RP_FORMATS; k++) {
        const char *opt = rp_formats[k].option;
        FILE *f = cli_output_file(c, opt);
        rp_options plain = {0, c->verbose, 0, c->subject};
        errno = 0;
        if (f && rp_write(run, (rp_format)k, f, &plain) != 0) {
            cli_error(cmd, "%s: cannot write %s: %s", opt, c->also[k],
                      strerror(errno ? errno : EIO));
            rc = -1;
        }
    }
    return rc;
}

/* ---- scenario files ---- */

void cli_where(const char *rel, const char *src_sub, char *buf, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            slash = strrchr(exe, '/');
            if (slash && strcmp(slash, "/bin") == 0) {
                *slash = '\0';
                snprintf(buf, n, "%s/%s", exe, rel);
                if (stat(buf, &st) == 0)
                    return;
            }
        }
    }
    snprintf(buf, n, "%s/%s", FAKEGC_SOURCE_DIR, src_sub);
}

int cli_scenarios(cli_common *c, const char *cmd, char **paths, int npaths, vl_shard *shard,
                  sc_files *files)
{
    char def[4096], who[64];
    char *defs[] = {def};
    if (npaths == 0) {
        char data[PATH_MAX];
        cli_where(FAKEGC_REL_DATA, "", data, sizeof data);
        sc_files_default(data, def, sizeof def);
        paths = defs;
        npaths = 1;
    }
    snprintf(who, sizeof who, "fakegc %s", cmd);
    int rc = sc_files_collect(who, paths, npaths, files);
    if (rc < 0)
        return rc == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL;
    if (cli_outputs_not_inputs(c, cmd, files->v, files->n) < 0)
        return CLI_EXIT_USAGE;
    if (c->match && sc_files_match(files, c->match) == 0) {
        cli_error(cmd, "-k %s: no scenario matches", c->match);
        return CLI_EXIT_USAGE;
    }
    if (shard) {
        shard->total = files->n;
        sc_files_shard(files, shard->k, shard->n);
    }
    return 0;
}

int cli_suppressions(const char *path, struct sc_supp *out)
{
    sc_supp s;
    char err[600];
    if (sc_supp_read(&s, path, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    if (out)
        *out = s;
    else
        sc_supp_free(&s);
    return 0;
}
