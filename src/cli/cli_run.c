/* cli_run.c - `fakegc run [PATH...]`: parse every scenario first (any
 * parse error: exit 2, nothing runs), then run them in sorted order, in this
 * process or in --jobs worker processes, and write one report. */
#include "cli/cli.h"
#include "cli/cli_shard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/er.h"
#include "core/obj.h"
#include "report/rp_collect.h"
#include "report/rp_html.h"
#include "scenario/sc_batch.h"
#include "scenario/sc_supp.h"

/* `run`'s command line: the common rows' cli_common, then its own. */
typedef struct run_args {
    cli_common c;
    cli_run_more m;
} run_args;

/* One run of the engine (cli_run_files). */
typedef struct run_state {
    cli_common *c;
    cli_run_more m;
    sc_supp rules;              /* --suppress's rules, read before anything runs */
    int changed;                /* a file changed since it was parsed (exit 2) */
    sc_program **progs;
    size_t n, done;
    rp_collect col;
} run_state;

static const op_opt rows[] = {
    OP_FN("--order", 0, "KNOB[,KNOB]", CLI_ORDER_WORDS, run_args, m.order, vl_order_parse,
          "the orderings `fakegc stress --order` explores:\n" CLI_ORDER_HELP),
    OP_STR("--suppress", "FILE", run_args, m.suppress,
           "suppression rules for every verdict, one a line:\n"
           "  NAME: class=C kind=K site=GLOB holder=GLOB\n"
           "(as `fakegc record --suppress`; they win over the\n"
           "scenarios' own); a bad file is exit 2, nothing runs"),
    CLI_SHARD_ROW(run_args, m.shard,
                  "only the files i (of the sorted list) with i mod N\n"
                  "== K; the report says which shard it is, and\n"
                  "`fakegc merge` joins the N reports"),
    OP_END};

/* The tail, its examples' format words from rp_formats (cli_run_help_make). */
static char run_tail[1024];

void cli_run_help_make(void)
{
    const rp_format_row *f = rp_formats;
    snprintf(run_tail, sizeof run_tail,
             "Exit status:\n  0 everything held; 1 an expectation failed, something was\n"
             "  retained, or the guard allocator caught a bad access (a finding); 2 usage\n"
             "  or parse error (nothing ran), or a write error; 3 internal error; 130\n"
             "  interrupted.\n\n"
             "Examples:\n"
             "  fakegc run scenarios/memo  every .scn under the folder\n"
             "  fakegc run -q --jobs 2 %s ci.xml %s ci.%s scenarios  a CI run\n"
             "  fakegc run --inject strong-memo --html page.html scenarios/memo  a bug, on a page\n"
             "  fakegc run --format %s scenarios  annotations for a GitHub log",
             f[RP_JUNIT].option, f[RP_SARIF].option, f[RP_SARIF].name, f[RP_GITHUB].name);
}

const op_cmd cli_run_cmd = {
    "run", "[OPTIONS] [PATH...]",
    "Run scenario files, or every *.scn under the given folders (default\n"
    "scenarios/, or the installed ones: fakegc --data-dir), in sorted order.\n"
    "Every file is parsed before anything runs: a file that does not parse is\n"
    "reported as FILE:LINE:COL: error: ... and the run exits 2, with a complete\n"
    "report saying so (status error; JUnit: an <error> per file; TAP: Bail out!).\n"
    "Each scenario's PASS/FAIL line is printed as it finishes; Ctrl-C prints\n"
    "the summary of what finished and exits 130.\n"
    "When walking folders, a sub-folder named errors/ (scenarios/errors/) is\n"
    "skipped: its scripts are meant to be rejected by the parser; so is one\n"
    "named leaks/ (scenarios/recorded/leaks/: recordings of leaking programs,\n"
    "whose verdict fails). Name such a file (or the folder itself) to run it.",
    rows,
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_SCAN |
        CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_JOBS | CLI_O_REPEAT |
        CLI_O_VERIFY | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO | CLI_O_HTML |
        CLI_O_SELECT | CLI_O_STOP,
    run_tail, NULL, "run scenario files (or every *.scn under folders)", 0};

/* ---- running ---- */

/* The command line's settings (c->sc) and the run's own: its files, the
 * interrupt flag, the dominator tree when a page or a JSON wants it. */
static void run_options(const cli_common *c, sc_options *o)
{
    *o = c->sc;
    o->dot = c->dot_f;
    o->objects = c->objects_f;
    o->stop = wk_interrupt_flag();
    /* the page's tree, and the JSON's (workers, diff pages) */
    o->dom_tree = c->html || c->format == RP_JSON || c->also[RP_JSON];
}

static void run_init(rp_run *run, const cli_common *c, rp_collect *col, size_t n)
{
    rp_collect_run(col, run, n, c->inject);
    run->tool = "fakegc";
    run->version = FAKEGC_VERSION;
    run->commit = cli_version_commit();
    run->allocator = c->allocator;
    run->compat = c->compat;
}

/* PASS/FAIL lines as each scenario finishes: on stdout when the text report
 * goes there (it then leaves them out), on stderr when it is a terminal and
 * the report goes elsewhere. */
static void stream_init(run_state *a)
{
    const cli_common *c = a->c;
    int text_stdout = c->format == RP_TEXT && c->out == stdout;
    rp_options ro = {text_stdout ? c->color : rp_color_wanted(c->color_when, stderr), 0, c->quiet,
                     c->subject};
    rp_collect_stream(&a->col, text_stdout ? stdout : isatty(2) ? stderr : NULL, &ro,
                      isatty(2) && !c->quiet);
}

/* A scenario's record is complete: -x, its line, the progress line, and a
 * file that changed since it was parsed (the input's fault, exit 2). */
static void scenario_done(void *arg, size_t i)
{
    run_state *a = arg;
    const rp_scenario *s = &a->col.res[i];
    if (s->status == RP_FAIL || s->status == RP_ERROR)
        wk_note_failure();   /* --max-failures */
    if (s->status == RP_ERROR && sc_program_changed(a->progs[i])) {
        cli_error("run", "%s", s->error ? s->error : s->file);
        a->changed = 1;
    }
    rp_collect_said(&a->col, i);
    a->done++;
    rp_progress(a->c->quiet, a->done, a->n,
                a->done < a->n ? sc_program_file(a->progs[a->done]) : "");
}

static int scenario_stop(void) { return wk_interrupted() ? wk_interrupted() : -wk_stopping(); }
static void in_worker(void *arg) { (void)arg, cli_canary_leak("worker"); }

/* Parse every file; the diagnostics go to stderr. When some file does not
 * parse, the report still gets written, complete: that file with status
 * error and its diagnostics, the others skipped (not run). The number of
 * files that did not parse, or -1 out of memory. */
static int parse_all(run_state *a, const sc_files *f)
{
    cli_common *c = a->c;
    size_t cap = f->n ? f->n : 1;
    char **diag = al_calloc(cap, sizeof *diag, AL_K_SCENARIO, "diags");
    if (!diag)
        return -1;
    size_t bad = sc_check_files(f->v, f->n, a->progs, diag, stderr,
                                rp_color_wanted(c->color_when, stderr));
    rp_collect col;
    if (bad && rp_collect_init(&col, f->n, 0) == 0) {
        char stopped[128];
        snprintf(stopped, sizeof stopped, "%zu file%s did not parse; nothing was run", bad,
                 bad == 1 ? "" : "s");
        fprintf(stderr, "fakegc run: %s\n", stopped);
        rp_collect_not_run(&col, f->v, diag);
        rp_run run;
        run_init(&run, c, &col, f->n);
        run.stopped = stopped;
        /* text on stdout would only repeat the diagnostics on stderr; the
         * page and the timeline are complete documents saying so too */
        int wr = cli_write_reports(c, "run", &run, !(c->format == RP_TEXT && !c->output));
        if (wr == 0 && c->html_f)
            wr = rp_write_html(c->html_f, &run, NULL, 0);
        if (wr == 0 && c->timeline_f)
            wr = rp_write_timeline_svg(c->timeline_f, NULL, 0);
        if (wr == 0)   /* else the previous files stay as they were (teardown) */
            cli_outputs_commit(c, "run");   /* the report says why nothing ran */
        rp_collect_free(&col);
        er_clear();
    }
    for (size_t i = 0; i < f->n; i++)
        free(diag[i]);
    al_free(diag, cap * sizeof *diag, AL_K_SCENARIO);
    return (int)bad;
}

/* The report of the ran scenarios (of nprogs) and the exit code. */
static int report(run_state *a, size_t ran, size_t nprogs, const char *repro)
{
    cli_common *c = a->c;
    const rp_scenario *res = a->col.res;
    const rp_timeline *tl = a->col.tl;
    rp_run run;
    run_init(&run, c, &a->col, ran);
    run.interrupted = wk_interrupt_name();
    if (!run.interrupted && ran < nprogs)
        run.interrupted = "max-failures";
    run.planned = nprogs;
    run.shard_k = a->m.shard.k;
    run.shard_n = a->m.shard.n;
    run.shard_total = a->m.shard.total;
    run.host = a->m.shard.n ? cli_hostname() : NULL;
    run.subject = c->subject;
    run.program = c->program;
    int rc = 0;
    if (c->format == RP_TEXT && c->out == stdout) {   /* the PASS/FAIL lines are out already */
        rp_options ro = {c->color, c->verbose, c->quiet, c->subject};
        errno = 0;
        if (rp_write_text_tail(&run, stdout, &ro) != 0 || fflush(stdout) != 0) {
            cli_error("run", "cannot write the report to standard output: %s",
                      strerror(errno ? errno : EIO));
            rc = -1;
        }
        rc |= cli_write_reports(c, "run", &run, 0);
    } else {
        rc = cli_write_reports(c, "run", &run, 1);
    }
    if (rc == 0 && c->html_f && rp_write_html(c->html_f, &run, tl, tl ? ran : 0) != 0) {
        cli_error("run", "--html: cannot write %s: %s", c->html,
                  er_kind_get() == ER_OOM ? "out of memory" : strerror(errno ? errno : EIO));
        rc = -1;
    }
    if (rc == 0 && cli_outputs_commit(c, "run") < 0)
        rc = -1;
    int exit_code = run.errors ? CLI_EXIT_INTERNAL : run.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    rp_collect_say_stopped(stderr, "fakegc run", &run);
    if (wk_interrupted())
        exit_code = wk_interrupt_exit();
    for (size_t i = 0; a->m.shard.n && i < ran; i++)
        if (res[i].status != RP_PASS)
            fprintf(stderr, "fakegc run: shard %u/%u: %s %s; in one process: %s %s\n",
                    a->m.shard.k, a->m.shard.n, rp_status_name(res[i].status), res[i].file, repro,
                    res[i].file);
    return rc ? CLI_EXIT_USAGE : exit_code;   /* a write error: path and errno printed */
}

/* Run the parsed programs (here, or in workers: --jobs, or the guard
 * allocator whose findings must be that scenario's) and report: the exit
 * code. */
static int run_all(run_state *a, const char *repro)
{
    cli_common *c = a->c;
    if (rp_collect_init(&a->col, a->n, c->timeline || c->html) < 0) {
        cli_error("run", "out of memory");
        return CLI_EXIT_INTERNAL;
    }
    wk_interrupt_install();
    wk_stop_after(c->exitfirst ? 1 : c->max_failures);
    stream_init(a);
    int guarded = strstr(c->allocator, "guard") != NULL ||
                  (c->inject && strstr(c->inject, "early-free"));
    sc_batch b = {.jobs = c->jobs > 1 ? (size_t)c->jobs : (size_t)guarded, .timeout = c->timeout,
                  .done = scenario_done, .stop = scenario_stop, .in_worker = in_worker, .arg = a};
    run_options(c, &b.opt);
    b.opt.suppress = a->m.suppress ? &a->rules : NULL;
    char err[400] = "";
    rp_progress(c->quiet, 0, a->n, a->n ? sc_program_file(a->progs[0]) : "");
    ssize_t ran = sc_batch_run(&b, a->progs, a->n, &a->col, err, sizeof err);
    rp_progress(c->quiet, a->n, a->n, "");
    int exit_code = ran == -2 ? CLI_EXIT_USAGE : ran < 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    if (ran < 0)
        cli_error("run", "--jobs: %s", err);
    if (b.own_oom) {   /* once, in words, instead of records without a name */
        cli_error("run", "out of memory in fakegc itself (not in the model) after %zd of %zu "
                  "scenarios: nothing reported", ran, a->n);
        exit_code = CLI_EXIT_USAGE;
    }
    int tl_bad = exit_code == CLI_EXIT_OK && c->timeline &&
                 (rp_write_timeline_svg(c->timeline_f, a->col.tl, (size_t)ran) != 0 ||
                  ferror(c->timeline_f));
    if (tl_bad)
        cli_error("run", "--timeline: cannot write %s: %s", c->timeline,
                  strerror(errno ? errno : EIO));
    if (exit_code == CLI_EXIT_OK)
        exit_code = report(a, (size_t)ran, a->n, repro);
    if ((tl_bad && exit_code != CLI_EXIT_INTERNAL) || (a->changed && !wk_interrupted()))
        exit_code = CLI_EXIT_USAGE;
    rp_collect_free(&a->col);
    return exit_code;
}

int cli_run_files(cli_common *c, const cli_run_more *m, char **paths, int npaths,
                  const char *repro)
{
    run_state a = {.c = c, .m = {.shard = VL_SHARD_NONE}};
    if (m)
        a.m = *m;
    char spec[160];
    obj_config saved;
    cli_order_apply(&a.m.order, c, spec, sizeof spec, &saved);
    if (cli_env_setup(c, "run") < 0) {
        obj_configure(&saved);
        return CLI_EXIT_USAGE;
    }
    obj_set_memcheck_findings(1);
    sc_files files = {0};
    int exit_code = a.m.suppress && cli_suppressions(a.m.suppress, &a.rules) < 0
                        ? CLI_EXIT_USAGE
                        : cli_scenarios(c, "run", paths, npaths, &a.m.shard, &files);
    size_t cap = files.n ? files.n : 1;
    if (exit_code == CLI_EXIT_OK &&
        !(a.progs = al_calloc(cap, sizeof *a.progs, AL_K_SCENARIO, "programs"))) {
        cli_error("run", "out of memory");
        exit_code = CLI_EXIT_INTERNAL;
    }
    if (exit_code == CLI_EXIT_OK) {
        int bad = parse_all(&a, &files);
        exit_code = bad < 0 ? CLI_EXIT_INTERNAL : bad ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    a.n = files.n;
    if (exit_code == CLI_EXIT_OK)
        exit_code = run_all(&a, repro ? repro : "fakegc run");
    for (size_t i = 0; a.progs && i < files.n; i++)
        sc_program_free(a.progs[i]);
    al_free(a.progs, a.progs ? cap * sizeof *a.progs : 0, AL_K_SCENARIO);
    sc_files_free(&files);
    sc_supp_free(&a.rules);
    obj_configure(&saved);
    cli_env_teardown(c);
    return exit_code;
}

int cli_run(int argc, char **argv)
{
    run_args a = {.m = {.shard = VL_SHARD_NONE}};
    char **paths;
    int npaths;
    int r = cli_parse(&cli_run_cmd, &a, argc, argv, &paths, &npaths);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    char repro[1024];
    cli_repro_command(repro, sizeof repro, &cli_run_cmd, argc, argv, NULL, 1, NULL);
    return cli_run_files(&a.c, &a.m, paths, npaths, repro);
}
