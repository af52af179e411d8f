/* cli_run.c - `fakegc run [PATH...]`: parse every scenario first (any
 * parse error: exit 2, nothing runs), then run them in sorted order, in this
 * process or in --jobs worker processes, and write one report. */
#include "cli/cli.h"
#include "cli/cli_shard.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/er.h"
#include "core/obj.h"
#include "core/wt.h"
#include "fake/fk.h"
#include "instrument/in_guard.h"
#include "report/rp_collect.h"
#include "report/rp_html.h"
#include "report/rp_timeline.h"
#include "scenario/sc.h"
#include "worker/wk.h"

typedef struct run_args {
    cli_common c;
    cli_order order;
    cli_shard shard;
    int own_oom;                /* fakegc's own allocations failed (--allocator ...:all) */
    int changed;                /* a file changed since it was parsed (exit 2) */
} run_args;

static const cli_opt rows[] = {
    CLI_FN("--order", 0, "KNOB[,KNOB]", CLI_ORDER_WORDS, run_args, order, cli_parse_order,
           "the orderings `fakegc stress --order` explores:\n" CLI_ORDER_HELP),
    CLI_SHARD_ROW(run_args, shard,
                  "only the files i (of the sorted list) with i mod N\n"
                  "== K; the report says which shard it is, and\n"
                  "`fakegc merge` joins the N reports"),
    CLI_END};

const cli_cmd cli_run_cmd = {
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
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_FORMAT |
        CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_JOBS | CLI_O_REPEAT | CLI_O_VERIFY |
        CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO | CLI_O_HTML | CLI_O_SELECT | CLI_O_STOP,
    "exit status: 0 everything held; 1 an expectation failed, something was\n"
    "retained, or the guard allocator caught a bad access (a finding); 2 usage\n"
    "or parse error (nothing ran), or a write error; 3 internal error; 130\n"
    "interrupted.",
    NULL, "run scenario files (or every *.scn under folders)"};

/* ---- running ---- */

static void run_options(const cli_common *c, sc_options *o, FILE *dot)
{
    sc_options_default(o);
    o->gc = c->gc;
    o->sweep = c->sweep;
    o->design = c->design;      /* its row gives the default policy */
    o->max_bytes = c->max_bytes;
    o->max_statements = c->max_statements;
    o->max_objects = c->max_objects;
    o->examples = c->examples;
    o->verify = c->verify;
    o->repeat = c->repeat;
    o->dot = dot;
    o->objects = c->objects_f;
    o->stop = cli_interrupt_flag();
    /* the page's tree, and the JSON's (workers, diff pages) */
    o->dom_tree = c->html || c->format == RP_JSON || c->also[RP_JSON];
}

/* ---- streamed results and Ctrl-C ---- */

typedef struct streamer {
    const cli_common *c;
    FILE *f;               /* where the PASS/FAIL lines go, NULL: nowhere */
    rp_options ro;
    size_t done, total;
    uint32_t passed, failed, skipped;
} streamer;

/* Lines on stdout when the text report goes there (the report then leaves
 * them out), on stderr when it is a terminal and the report goes elsewhere. */
static void stream_init(streamer *st, const cli_common *c, size_t total)
{
    memset(st, 0, sizeof *st);
    st->c = c;
    st->total = total;
    int text_stdout = c->format == RP_TEXT && c->out == stdout;
    st->f = text_stdout ? stdout : isatty(2) ? stderr : NULL;
    st->ro.color = text_stdout ? c->color : cli_color_wanted(c, stderr);
    st->ro.quiet = c->quiet;
}

static void stream_done(streamer *st, const rp_scenario *s)
{
    if (s->status == RP_FAIL || s->status == RP_ERROR)
        cli_note_failure();   /* --max-failures */
    st->done++;
    st->passed += s->status == RP_PASS;
    st->skipped += s->status == RP_SKIP;
    st->failed += s->status == RP_FAIL || s->status == RP_ERROR;
    if (st->f && !(st->c->quiet && (s->status == RP_PASS || s->status == RP_SKIP))) {
        if (isatty(2) && !st->c->quiet)
            fputs("\r\033[K", stderr);   /* the progress line gives way */
        rp_write_status_line(s, st->f, &st->ro);
        fflush(st->f);
    }
}

static int streamed_to_stdout(const cli_common *c)
{
    return c->format == RP_TEXT && c->out == stdout;
}

static void timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    if (arg)
        rp_timeline_add_memo(arg, line, objects, bytes, wt_count_all());
}

/* A series for p, with its marks known before the run (so that their
 * statements are kept as events): 0, or -1 (out of memory). */
static int timeline_begin(rp_timeline *t, const sc_program *p)
{
    if (rp_timeline_begin(t, sc_program_file(p)) < 0)
        return -1;
    sc_program_marks(p, t->marks, RP_TIMELINE_LINES);
    return 0;
}

/* The chart's title and the failed lines. */
static void timeline_end(rp_timeline *t, const rp_scenario *s)
{
    uint32_t lines[256];
    size_t n = 0;
    for (size_t k = 0; k < s->nfailures && n < 256; k++)
        if (s->failures[k].line)
            lines[n++] = s->failures[k].line;
    rp_timeline_end(t, (int)s->status, lines, n);
}

static int write_timeline(const char *path, FILE *f, const rp_timeline *tl, size_t n)
{
    if (!tl) {
        cli_error("run", "--timeline: cannot write %s: out of memory", path);
        return -1;
    }
    if (rp_write_timeline_svg(f, tl, n) != 0 || ferror(f)) {
        cli_error("run", "--timeline: cannot write %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

/* The injected bugs as a list (for the report). */
typedef struct inject_list {
    const char *v[32];
    char buf[512];
    size_t n;
} inject_list;

static void inject_split(const cli_common *c, inject_list *l)
{
    l->n = 0;
    if (!c->inject || !*c->inject)
        return;
    snprintf(l->buf, sizeof l->buf, "%s", c->inject);
    char *save = NULL;
    for (char *tok = strtok_r(l->buf, ",", &save); tok && l->n < 32;
         tok = strtok_r(NULL, ",", &save))
        l->v[l->n++] = tok;
}

static void run_init(rp_run *run, const cli_common *c, const inject_list *inj,
                     rp_scenario *res, size_t n)
{
    memset(run, 0, sizeof *run);
    run->tool = "fakegc";
    run->version = FAKEGC_VERSION;
    run->commit = cli_version_commit();
    run->allocator = c->allocator;
    run->compat = c->compat;
    run->inject = (const char **)inj->v;
    run->ninject = inj->n;
    run->scenarios = res;
    run->n = n;
    rp_run_count(run);
}

/* Parse every file; the diagnostics go to stderr. When some file does not
 * parse, the report still gets written, complete: that file with status
 * error and its diagnostics, the others skipped (not run). Returns the
 * number of files that did not parse, or -1 out of memory. */
static int parse_all(cli_common *c, const sc_files *files, sc_program **progs, size_t *nprogs,
                     const inject_list *inj)
{
    int bad = 0, dcolor = cli_color_wanted(c, stderr);
    size_t budget = SC_KEEP_BUDGET;   /* past it, programs are re-parsed when they run */
    char **diag = al_malloc((files->n ? files->n : 1) * sizeof *diag, AL_K_SCENARIO, "diags");
    if (!diag)
        return -1;
    for (size_t i = 0; i < files->n; i++) {
        int nerr = 0;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        sc_program *p = sc_check_file(files->v[i], m ? m : stderr, m ? 0 : dcolor, &nerr,
                                      &budget);
        if (m)
            fclose(m);
        diag[i] = NULL;
        if (p) {
            progs[(*nprogs)++] = p;
        } else {
            bad++;
            if (dcolor && text) {   /* again, in colour, for the terminal */
                sc_program *q = sc_parse_file(files->v[i], stderr, 1, &nerr);
                sc_program_free(q);
            } else if (text) {
                fputs(text, stderr);
            }
            diag[i] = text;
            text = NULL;
        }
        free(text);
    }
    if (bad) {
        char stopped[128];
        snprintf(stopped, sizeof stopped, "%d file%s did not parse; nothing was run", bad,
                 bad == 1 ? "" : "s");
        fprintf(stderr, "fakegc run: %s\n", stopped);
        rp_scenario *res = al_malloc(files->n * sizeof *res, AL_K_REPORT, "cli results");
        if (res) {
            memset(res, 0, files->n * sizeof *res);
            for (size_t i = 0; i < files->n; i++) {
                rp_scenario_set_file(&res[i], files->v[i]);
                res[i].status = diag[i] ? RP_ERROR : RP_SKIP;
                if (diag[i]) {
                    size_t l = strlen(diag[i]);
                    while (l && diag[i][l - 1] == '\n')
                        diag[i][--l] = '\0';
                }
                rp_scenario_set_error(&res[i], diag[i] ? diag[i] : "not run: " "another file did not parse");
            }
            rp_run run;
            run_init(&run, c, inj, res, files->n);
            run.stopped = stopped;
            /* text on stdout would only repeat the diagnostics on stderr */
            if (cli_write_reports(c, "run", &run, !(c->format == RP_TEXT && !c->output)) == 0)
                cli_outputs_commit(c, "run");   /* the report says why nothing ran */
            for (size_t i = 0; i < files->n; i++)
                rp_scenario_clear(&res[i]);
            al_free(res, files->n * sizeof *res, AL_K_REPORT);
        }
        er_clear();
    }
    for (size_t i = 0; i < files->n; i++)
        free(diag[i]);
    al_free(diag, (files->n ? files->n : 1) * sizeof *diag, AL_K_SCENARIO);
    return bad;
}

/* The error record of a file that changed since it was parsed is the
 * input's fault, not fakegc's: said with its path, and exit 2. */
static void check_changed(run_args *a, const rp_scenario *r, const sc_program *p)
{
    if (r->status == RP_ERROR && sc_program_changed(p)) {
        cli_error("run", "%s", r->error ? r->error : sc_program_file(p));
        a->changed = 1;
    }
}

/* The scenarios in this process, in order, until the end, an interruption
 * or --max-failures: the number with a complete record. */
static size_t run_here(run_args *a, sc_program **progs, size_t n, rp_collect *col, streamer *st)
{
    sc_options o;
    run_options(&a->c, &o, a->c.dot_f);
    size_t i = 0;
    for (; i < n && !cli_interrupted() && !cli_stopping(); i++) {
        rp_scenario *r = &col->res[i];
        cli_progress(&a->c, i, n, sc_program_file(progs[i]));
        rp_timeline *t = col->tl && timeline_begin(&col->tl[i], progs[i]) == 0 ? &col->tl[i] : NULL;
        o.on_statement = t ? timeline_hook : NULL;
        o.on_statement_arg = t;
        o.dot_cluster = (uint32_t)i;
        sc_run(progs[i], &o, r);
        if (cli_interrupted() || !r->file) {   /* stopped in hand, or no room for */
            rp_scenario_clear(r);               /* the record: not a finished one */
            a->own_oom |= !cli_interrupted();
            break;
        }
        if (t)
            timeline_end(t, r);
        check_changed(a, r, progs[i]);
        stream_done(st, r);
    }
    cli_progress(&a->c, n, n, "");
    return i;
}

/* ---- --jobs: the scenarios in reused worker processes (wk_pool_run) ---- */

enum { F_RECORD, F_TIMELINE, F_DOT, F_OBJECTS, NFILES };

typedef struct jobs {
    run_args *a;
    sc_program **progs;
    size_t n, finished;
    rp_collect *col;
    streamer *st;
    wk_spool side[2];   /* --dot, --objects pieces, put back in scenario order */
} jobs;

typedef struct tl_keep {
    rp_timeline t;
    int fd;
} tl_keep;

/* A finding ends the worker: its series so far, with a last point at the
 * statement in hand (the values before it: it did not finish). */
static void keep_timeline(void *arg, uint32_t line, const char *what)
{
    tl_keep *k = arg;
    rp_timeline *t = &k->t;
    (void)what;
    rp_timeline_add(t, line, t->n ? t->objects[t->n - 1] : 0, t->n ? t->bytes[t->n - 1] : 0);
    (void)rp_timeline_save(k->fd, t);
}

static FILE *side_file(int fd, int want)
{
    int d = want ? dup(fd) : -1;
    FILE *f = d < 0 ? NULL : fdopen(d, "w");
    if (!f && d >= 0)
        close(d);
    return f;
}

/* In a worker: scenario i, its record, series and side files to files[]. */
static int worker_one(void *arg, size_t i, const int *files)
{
    jobs *j = arg;
    const cli_common *c = &j->a->c;
    FILE *df = side_file(files[F_DOT], c->dot_f != NULL);
    FILE *of = side_file(files[F_OBJECTS], c->objects_f != NULL);
    if ((c->dot_f && !df) || (c->objects_f && !of))
        return -1;
    sc_options o;
    run_options(c, &o, df);
    o.objects = of;
    o.dot_cluster = (uint32_t)i;
    tl_keep k = {.fd = files[F_TIMELINE]};
    if (j->col->tl && timeline_begin(&k.t, j->progs[i]) == 0) {
        o.on_statement = timeline_hook;
        o.on_statement_arg = &k.t;
        wk_on_finding(keep_timeline, &k);
    }
    rp_scenario s = {0};
    sc_run(j->progs[i], &o, &s);
    int bad = cli_interrupted() != 0;   /* stopped in hand: no record */
    cli_canary_leak("worker");
    bad = bad || rp_collect_write_one(files[F_RECORD], &s) < 0;
    bad |= (df && fclose(df) != 0) | (of && fclose(of) != 0);
    if (k.t.stmt) {
        timeline_end(&k.t, &s);
        bad |= rp_timeline_save(k.fd, &k.t) != 0;
        rp_timeline_clear(&k.t);
    }
    rp_scenario_clear(&s);
    return bad ? -1 : 0;
}

/* How a worker's death reads in its scenario's error. */
static void death_words(const jobs *j, const wk_end *e, char *msg, size_t n)
{
    const char *sep = e->what[0] ? ": " : "";
    if (e->how == WK_TIMEOUT)
        snprintf(msg, n, "worker timed out after %u s (--timeout)", j->a->c.timeout);
    else if (e->how == WK_SIGNAL)
        snprintf(msg, n, "worker crashed: signal %d (%s)%s%.255s", e->code, strsignal(e->code),
                 sep, e->what);
    else if (e->how == WK_EXIT)
        snprintf(msg, n, "worker exited with status %d%s%.255s", e->code, sep, e->what);
    else
        snprintf(msg, n, "%s", e->what);   /* WK_LOST: "cannot start a worker: ..." */
}

/* In the parent, as scenario i ends: its record (or how it ended), its
 * series, its side files, its PASS/FAIL line. */
static void job_done(void *arg, size_t i, const wk_end *e, const int *files)
{
    jobs *j = arg;
    const char *file = sc_program_file(j->progs[i]);
    rp_scenario *r = &j->col->res[i];
    char msg[400];
    if (e->how != WK_OK && cli_interrupted())
        return;   /* stopped in hand by the interruption: no record */
    if (e->how == WK_OK) {
        rp_collect_read(j->col, i, files[F_RECORD], file);
    } else if (e->how == WK_FINDING) {
        wk_finding_kind(e->what, msg, sizeof msg);
        rp_collect_finding(j->col, i, file, e->line, msg, e->what);
    } else {
        death_words(j, e, msg, sizeof msg);
        rp_collect_error(j->col, i, file, msg);
    }
    int got = j->col->tl && rp_collect_load_timeline(j->col, i, files[F_TIMELINE]) == 0;
    if (j->col->tl && !(got && e->how == WK_OK) &&
        (got || timeline_begin(&j->col->tl[i], j->progs[i]) == 0))
        timeline_end(&j->col->tl[i], r);
    for (int k = 0; k < 2; k++)
        (void)wk_spool_add(&j->side[k], i, files[F_DOT + k]);
    check_changed(j->a, r, j->progs[i]);
    stream_done(j->st, r);
    j->finished++;
    cli_progress(&j->a->c, j->finished, j->n, j->finished < j->n ? file : "");
}

static int job_stop(void)
{
    return cli_interrupted() ? cli_interrupted() : cli_stopping() ? -1 : 0;
}

static int finished(void *arg, size_t i)
{
    return ((const jobs *)arg)->col->res[i].file != NULL;
}

/* The scenarios in min(--jobs, n) workers: the number with a record, or
 * (size_t)-1 with the exit code in *exit_code (printed). */
static size_t run_jobs(run_args *a, sc_program **progs, size_t n, rp_collect *col, streamer *st,
                       int *exit_code)
{
    jobs j = {a, progs, n, 0, col, st, {{0}, {0}}};
    wk_pool_ops ops = {NFILES, a->c.timeout, worker_one, job_done, job_stop, &j};
    char err[300];
    FILE *to[2] = {a->c.dot_f, a->c.objects_f};
    int sbad = wk_spool_init(&j.side[0], n) < 0 || wk_spool_init(&j.side[1], n) < 0;
    if (sbad) {
        const char *tmp = getenv("TMPDIR");
        cli_error("run", "--jobs: cannot make a temporary file in %s: %s (set TMPDIR to a "
                  "writable folder)", tmp && *tmp ? tmp : "/tmp", strerror(errno));
        *exit_code = CLI_EXIT_USAGE;   /* the environment, not a bug of ours */
    } else if (wk_pool_run(&ops, n, a->c.jobs > 1 ? (size_t)a->c.jobs : 1, err, sizeof err) < 0) {
        cli_error("run", "--jobs: %s", err);
        *exit_code = CLI_EXIT_INTERNAL;
    }
    for (int k = 0; k < 2 && !sbad; k++)
        if (to[k] && wk_spool_write(&j.side[k], to[k], finished, &j) < 0)
            cli_error("run", "cannot copy the workers' %s: %s", k ? "--objects" : "--dot",
                      strerror(errno ? errno : EIO));
    wk_spool_free(&j.side[0]);
    wk_spool_free(&j.side[1]);
    return cli_interrupted() || cli_stopping() ? rp_collect_keep_finished(col) : n;
}

/* The report of the ran scenarios (of nprogs) and the exit code. */
static int report(run_args *a, rp_scenario *res, size_t ran, size_t nprogs,
                  const inject_list *inj, const char *repro, const rp_timeline *tl)
{
    cli_common *c = &a->c;
    rp_run run;
    run_init(&run, c, inj, res, ran);
    run.interrupted = cli_interrupt_name();
    if (!run.interrupted && ran < nprogs)
        run.interrupted = "max-failures";
    run.planned = nprogs;
    run.shard_k = a->shard.k;
    run.shard_n = a->shard.n;
    run.shard_total = a->shard.total;
    run.host = a->shard.n ? cli_hostname() : NULL;
    int rc = 0;
    if (streamed_to_stdout(c)) {   /* the PASS/FAIL lines are out already */
        rp_options ro = {c->color, c->verbose, c->quiet};
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
    if (cli_interrupted()) {
        fprintf(stderr, "fakegc run: interrupted by %s: the report holds the scenarios "
                "that finished\n%zu of %zu finished: %u passed, %u failed\n",
                run.interrupted, ran, nprogs, run.passed, run.failed);
        exit_code = cli_interrupt_exit();
    } else if (ran < nprogs) {
        fprintf(stderr, "fakegc run: stopped after %u failed scenario%s (--max-failures): "
                "%zu of %zu ran\n", run.failed, run.failed == 1 ? "" : "s", ran, nprogs);
    }
    for (size_t i = 0; a->shard.n && i < ran; i++)
        if (res[i].status != RP_PASS)
            fprintf(stderr, "fakegc run: shard %u/%u: %s %s; in one process: %s %s\n",
                    a->shard.k, a->shard.n, rp_status_name(res[i].status), res[i].file, repro,
                    res[i].file);
    return rc ? CLI_EXIT_USAGE : exit_code;   /* a write error: path and errno printed */
}

/* Run the parsed programs (here, or in workers: --jobs, or the guard
 * allocator whose findings must be that scenario's) and report: the exit
 * code. */
static int run_all(run_args *a, sc_program **progs, size_t n, const inject_list *inj,
                   const char *repro)
{
    cli_common *c = &a->c;
    rp_collect col;
    if (rp_collect_init(&col, n, c->timeline || c->html) < 0) {
        cli_error("run", "out of memory");
        return CLI_EXIT_INTERNAL;
    }
    cli_interrupt_install();
    cli_stop_after(c->exitfirst ? 1 : c->max_failures);
    streamer st;
    stream_init(&st, c, n);
    int guarded = strstr(c->allocator, "guard") != NULL ||
                  (c->inject && strstr(c->inject, "early-free"));
    int exit_code = CLI_EXIT_OK;
    size_t ran = c->jobs > 1 || guarded ? run_jobs(a, progs, n, &col, &st, &exit_code)
                                        : run_here(a, progs, n, &col, &st);
    if (a->own_oom) {   /* once, in words, instead of records without a name */
        cli_error("run", "out of memory in fakegc itself (not in the model) after %zu of %zu "
                  "scenarios: nothing reported", ran, n);
        exit_code = CLI_EXIT_USAGE;
    }
    int tl_bad = exit_code == CLI_EXIT_OK && c->timeline &&
                 write_timeline(c->timeline, c->timeline_f, col.tl, ran) < 0;
    if (exit_code == CLI_EXIT_OK)
        exit_code = report(a, col.res, ran, n, inj, repro, col.tl);
    if ((tl_bad && exit_code != CLI_EXIT_INTERNAL) || (a->changed && !cli_interrupted()))
        exit_code = CLI_EXIT_USAGE;
    rp_collect_free(&col);
    return exit_code;
}

int cli_run(int argc, char **argv)
{
    run_args a = {.shard = CLI_SHARD_NONE};
    cli_common_init(&a.c);
    char **paths;
    int npaths;
    int r = cli_parse(&cli_run_cmd, &a, argc, argv, &paths, &npaths);
    if (r != CLI_PARSE_OK)
        return cli_parse_exit(r);
    char repro[1024];
    cli_repro_command(repro, sizeof repro, &cli_run_cmd, argc, argv, NULL, 1, NULL);
    char spec[160];
    obj_config saved;
    cli_order_apply(&a.order, &a.c, spec, sizeof spec, &saved);
    if (cli_env_setup(&a.c, "run") < 0) {
        obj_configure(&saved);
        return CLI_EXIT_USAGE;
    }
    obj_set_memcheck_findings(1);
    sc_files files = {0};
    size_t nprogs = 0;
    sc_program **progs = NULL;
    inject_list inj;
    inject_split(&a.c, &inj);
    int exit_code = cli_scenarios(&a.c, "run", paths, npaths, &a.shard, &files);
    if (exit_code == CLI_EXIT_OK &&
        !(progs = al_malloc((files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO, "programs"))) {
        cli_error("run", "out of memory");
        exit_code = CLI_EXIT_INTERNAL;
    }
    if (exit_code == CLI_EXIT_OK) {
        int bad = parse_all(&a.c, &files, progs, &nprogs, &inj);
        exit_code = bad < 0 ? CLI_EXIT_INTERNAL : bad ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (exit_code == CLI_EXIT_OK)
        exit_code = run_all(&a, progs, nprogs, &inj, repro);
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, progs ? (files.n ? files.n : 1) * sizeof *progs : 0, AL_K_SCENARIO);
    sc_files_free(&files);
    obj_configure(&saved);
    cli_env_teardown(&a.c);
    return exit_code;
}
