/* sc_batch.c - many programs into one collection of records, here or in
 * workers (see sc_batch.h). */
#include "scenario/sc_batch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/wt.h"
#include "worker/wk.h"

size_t sc_check_files(char *const *files, size_t n, sc_program **progs, char **diags,
                      FILE *diag, int color)
{
    size_t bad = 0, budget = SC_KEEP_BUDGET;   /* past it, programs are parked */
    for (size_t i = 0; i < n; i++) {
        int nerr = 0;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        progs[i] = sc_check_file(files[i], m ? m : diag, m ? 0 : color, &nerr, &budget);
        if (m)
            fclose(m);
        diags[i] = NULL;
        if (!progs[i]) {
            bad++;
            if (color && text)   /* again, in colour, for the terminal */
                sc_program_free(sc_parse_file(files[i], diag, 1, &nerr));
            else if (text)
                fputs(text, diag);
            diags[i] = text;
            text = NULL;
        }
        free(text);
    }
    return bad;
}

static void timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    if (arg)
        rp_timeline_add_memo(arg, line, objects, bytes, wt_count_all());
}

static void site_hook(void *arg, const char *file, uint32_t line, uint32_t round,
                      uint64_t event)
{
    if (arg)
        rp_timeline_site(arg, file, line, round, event);
}

static void failure_hook(void *arg, uint32_t line)
{
    if (arg)
        rp_timeline_failed(arg, line);
}

/* A series for p, its marks known before the run (so that their statements
 * are kept as events): 0, or -1 (out of memory). */
static int timeline_begin(rp_timeline *t, const sc_program *p)
{
    if (rp_timeline_begin(t, sc_program_file(p)) < 0)
        return -1;
    sc_program_marks(p, t);
    return 0;
}

/* The chart's title and the failed lines (a recording's: with the
 * program's site of each). */
static void timeline_end(rp_timeline *t, const rp_scenario *s)
{
    rp_tl_fail fails[256];
    size_t n = 0;
    for (size_t k = 0; k < s->nfailures && n < 256; k++) {
        const rp_failure *x = &s->failures[k];
        if (!x->line)
            continue;
        rp_tl_fail *y = &fails[n++];
        memset(y, 0, sizeof *y);
        y->line = x->line, y->prog_line = x->prog_file ? x->prog_line : 0;
        snprintf(y->prog_file, sizeof y->prog_file, "%s", x->prog_file ? x->prog_file : "");
    }
    rp_timeline_end(t, (int)s->status, fails, n);
}

static int stopped_in_hand(const sc_batch *b)
{
    return b->opt.stop && *b->opt.stop;
}

static int asked_to_stop(const sc_batch *b)
{
    return b->stop && b->stop() != 0;
}

/* ---- in this process ---- */

static size_t run_here(sc_batch *b, sc_program *const *progs, size_t n, rp_collect *col)
{
    sc_options o = b->opt;
    size_t i = 0;
    for (; i < n && !asked_to_stop(b); i++) {
        rp_scenario *r = &col->res[i];
        rp_timeline *t = col->tl && timeline_begin(&col->tl[i], progs[i]) == 0 ? &col->tl[i] : NULL;
        o.on_statement = t ? timeline_hook : NULL;
        o.on_program_site = t ? site_hook : NULL;
        o.on_failure = t ? failure_hook : NULL;
        o.on_statement_arg = t;
        o.dot_cluster = (uint32_t)i;
        sc_run(progs[i], &o, r);
        if (stopped_in_hand(b) || !r->file) {   /* stopped in hand, or no room for */
            rp_scenario_clear(r);               /* the record: not a finished one */
            b->own_oom |= !stopped_in_hand(b);
            break;
        }
        if (t)
            timeline_end(t, r);
        if (b->done)
            b->done(b->arg, i);
    }
    return i;
}

/* ---- in workers (wk_pool_run) ---- */

enum { F_RECORD, F_TIMELINE, F_DOT, F_OBJECTS, NFILES };

typedef struct jobs {
    sc_batch *b;
    sc_program *const *progs;
    rp_collect *col;
    wk_spool side[2];   /* the dot and objects pieces, put back in program order */
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

/* In a worker: program i, its record, series and side files to files[]. */
static int worker_one(void *arg, size_t i, const int *files)
{
    jobs *j = arg;
    const sc_batch *b = j->b;
    FILE *df = side_file(files[F_DOT], b->opt.dot != NULL);
    FILE *of = side_file(files[F_OBJECTS], b->opt.objects != NULL);
    if ((b->opt.dot && !df) || (b->opt.objects && !of))
        return -1;
    sc_options o = b->opt;
    o.dot = df;
    o.objects = of;
    o.dot_cluster = (uint32_t)i;
    tl_keep k = {.fd = files[F_TIMELINE]};
    if (j->col->tl && timeline_begin(&k.t, j->progs[i]) == 0) {
        o.on_statement = timeline_hook;
        o.on_program_site = site_hook;
        o.on_failure = failure_hook;
        o.on_statement_arg = &k.t;
        wk_on_finding(keep_timeline, &k);
    }
    rp_scenario s = {0};
    sc_run(j->progs[i], &o, &s);
    int bad = stopped_in_hand(b);   /* no record */
    if (b->in_worker)
        b->in_worker(b->arg);
    bad = bad || rp_collect_write_one(files[F_RECORD], &s) < 0;
    int dot_bad = df && fclose(df) != 0;   /* both files are closed, whatever the first says */
    int obj_bad = of && fclose(of) != 0;
    bad = bad || dot_bad || obj_bad;
    if (k.t.stmt) {
        timeline_end(&k.t, &s);
        bad |= rp_timeline_save(k.fd, &k.t) != 0;
        rp_timeline_clear(&k.t);
    }
    rp_scenario_clear(&s);
    return bad ? -1 : 0;
}

/* How a worker's death reads in its program's error. */
static void death_words(const wk_end *e, char *msg, size_t n)
{
    const char *sep = e->what[0] ? ": " : "";
    if (e->how == WK_TIMEOUT)
        snprintf(msg, n, "worker timed out after %u s (--timeout)", e->timeout);
    else if (e->how == WK_SIGNAL)
        snprintf(msg, n, "worker crashed: signal %d (%s)%s%.255s", e->code, strsignal(e->code),
                 sep, e->what);
    else if (e->how == WK_EXIT)
        snprintf(msg, n, "worker exited with status %d%s%.255s", e->code, sep, e->what);
    else
        snprintf(msg, n, "%s", e->what);   /* WK_LOST: "cannot start a worker: ..." */
}

/* In the parent, as program i ends: its record (or how it ended), its
 * series, its side files. */
static void job_done(void *arg, size_t i, const wk_end *e, const int *files)
{
    jobs *j = arg;
    const char *file = sc_program_file(j->progs[i]);
    rp_scenario *r = &j->col->res[i];
    char msg[400];
    if (e->how != WK_OK && j->b->stop && j->b->stop() > 0)
        return;   /* stopped in hand by the signal: no record */
    if (e->how == WK_OK) {
        rp_collect_read(j->col, i, files[F_RECORD], file);
    } else if (e->how == WK_FINDING) {
        wk_finding_kind(e->what, msg, sizeof msg);
        rp_collect_finding(j->col, i, file, e->line, msg, e->what);
    } else {
        death_words(e, msg, sizeof msg);
        rp_collect_error(j->col, i, file, msg);
    }
    int got = j->col->tl && rp_collect_load_timeline(j->col, i, files[F_TIMELINE]) == 0;
    if (j->col->tl && !(got && e->how == WK_OK) &&
        (got || timeline_begin(&j->col->tl[i], j->progs[i]) == 0))
        timeline_end(&j->col->tl[i], r);
    for (int k = 0; k < 2; k++)
        (void)wk_spool_add(&j->side[k], i, files[F_DOT + k]);
    if (j->b->done)
        j->b->done(j->b->arg, i);
}

static int finished(void *arg, size_t i)
{
    return ((const jobs *)arg)->col->res[i].file != NULL;
}

static ssize_t run_jobs(sc_batch *b, sc_program *const *progs, size_t n, rp_collect *col,
                        char *err, size_t errn)
{
    jobs j = {b, progs, col, {{0}, {0}}};
    wk_pool_ops ops = {NFILES, b->timeout, worker_one, job_done, b->stop, &j};
    FILE *to[2] = {b->opt.dot, b->opt.objects};
    ssize_t rc = n;
    if (wk_spool_init(&j.side[0], n) < 0 || wk_spool_init(&j.side[1], n) < 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(err, errn, "cannot make a temporary file in %s: %s (set TMPDIR to a writable "
                 "folder)", tmp && *tmp ? tmp : "/tmp", strerror(errno));
        rc = -2;
    } else if (wk_pool_run(&ops, n, b->jobs, err, errn) < 0) {
        rc = -1;
    }
    for (int k = 0; k < 2 && rc >= 0; k++)
        if (to[k] && wk_spool_write(&j.side[k], to[k], finished, &j) < 0)
            fprintf(stderr, "fakegc: cannot copy the workers' %s: %s\n",
                    k ? "objects" : "graphs", strerror(errno ? errno : EIO));
    wk_spool_free(&j.side[0]);
    wk_spool_free(&j.side[1]);
    return rc;
}

ssize_t sc_batch_run(sc_batch *b, sc_program *const *progs, size_t n, rp_collect *col,
                     char *err, size_t errn)
{
    if (!b->jobs)
        return (ssize_t)run_here(b, progs, n, col);
    ssize_t rc = run_jobs(b, progs, n, col, err, errn);
    if (rc >= 0 && asked_to_stop(b))
        rc = (ssize_t)rp_collect_keep_finished(col);
    return rc;
}
