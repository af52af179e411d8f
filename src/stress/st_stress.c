/* st_stress.c - the stress loop: lifecycles from consecutive seeds in a
 * forked worker (so a crash is a finding, not the end of the run), the
 * progress line, and writing and shrinking what failed. */
#include "stress/st.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc/al.h"
#include "worker/wk.h"

/* What the worker tells the parent, in the shared bytes (wk_run). */
typedef struct shared {
    volatile uint64_t steps, statements, lifecycles, max_live;
    volatile uint64_t current_seed, current_index, steps_before;   /* the lifecycle running */
    volatile int failed;
    volatile uint64_t fail_seed, fail_index, fail_steps;
    volatile int lost;                  /* the worker could not go on: first says why */
    char cls[ST_CLASS_LEN];
    st_class_kind cls_kind;
    char query[RP_QUERY_LEN];
    char first[256];
} shared;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

uint64_t st_stress_lifecycles(const st_stress_opts *o)
{
    if (!o->max_steps)
        return UINT64_MAX;
    uint64_t per = o->cfg.steps ? o->cfg.steps : 1;
    return o->max_steps / per + (o->max_steps % per != 0);
}

/* The campaign's lifecycle i has seed `seed + i`; shard K of N runs
 * i = K, K+N, K+2N, ... so the N shards together run exactly the
 * lifecycles of one process. The j-th lifecycle of this shard: */
static uint64_t index_at(const st_stress_opts *o, uint64_t j)
{
    uint64_t n = o->shard_n ? o->shard_n : 1;
    return o->shard_k + j * n;
}

/* Steps until the failing line: the action of the first failing line. */
static uint64_t steps_into(const uint32_t *lines, size_t nlines, uint32_t line, size_t nacts)
{
    if (line == 0 || line > nlines || !lines)
        return nacts;
    for (uint32_t l = line; l > 0; l--)
        if (lines[l - 1] != UINT32_MAX)
            return (uint64_t)lines[l - 1] + 1;
    return nacts;
}

/* The failing lifecycle, for the parent: seed, steps up to the failing
 * line, class and first failure. Async-signal-safe (it also reports a
 * finding from the guard's fault handler). */
static void copy(char *d, size_t n, const char *s)
{
    size_t k = 0;
    while (s[k] && k + 1 < n) {
        d[k] = s[k];
        k++;
    }
    d[k] = '\0';
}

static shared *w_sh;                 /* the worker's view of its lifecycle */
static const uint32_t *w_lines;
static size_t w_nlines, w_nacts;

static void note_failure(const st_outcome *out)
{
    shared *sh = w_sh;
    sh->fail_seed = sh->current_seed;
    sh->fail_index = sh->current_index;
    sh->fail_steps = sh->steps + steps_into(w_lines, w_nlines, out->first_line, w_nacts);
    copy(sh->cls, sizeof sh->cls, out->ncls ? out->cls[0] : "?");
    sh->cls_kind = out->ncls ? out->kind[0] : ST_CK_FAILURE;
    copy(sh->query, sizeof sh->query, out->ncls ? out->query[0] : "");
    copy(sh->first, sizeof sh->first, out->first);
    /* the failing lifecycle counts: it ran up to its failure */
    sh->statements += out->statements;
    sh->lifecycles++;
    sh->failed = 1;
}

/* A finding ended the worker (wk.h): it is the lifecycle's failure. */
static void note_finding(void *arg, uint32_t line, const char *what)
{
    static st_outcome o;
    (void)arg;
    st_finding_outcome(line, what, &o);
    note_failure(&o);
}

typedef struct job {
    const st_stress_opts *o;
    double t0, last;
} job;

/* The worker: lifecycles until a limit or the first failure. */
static void worker(void *arg, void *shared_)
{
    const job *jb = arg;
    const st_stress_opts *o = jb->o;
    double t0 = jb->t0;
    shared *sh = shared_;
    st_env env = o->env;
    w_sh = sh;
    wk_on_finding(note_finding, NULL);
    uint64_t total = st_stress_lifecycles(o);
    for (uint64_t j = 0;; j++) {
        uint64_t index = index_at(o, j);
        if (index >= total)
            break;
        if (o->max_seconds > 0 && now_s() - t0 >= o->max_seconds)
            break;
        uint64_t seed = o->seed + index;
        sh->current_seed = seed;
        sh->current_index = index;
        sh->steps_before = sh->steps;
        st_script s = {0};
        st_text t = {0};
        uint32_t *lines = NULL;
        size_t nlines = 0;
        if (st_generate(&o->cfg, seed, &s, &t, &lines, &nlines) < 0) {
            snprintf(sh->first, sizeof sh->first, "out of memory generating seed %" PRIu64,
                     seed);
            sh->lost = 1;
            return;
        }
        env.sc.verify_every = 0;
        if (o->check_every && s.n) {
            /* every K steps; a lifecycle shorter than K is verified once, at
             * its last statement, when a multiple of K falls inside it */
            uint64_t stmts = st_count_statements(t.p);
            uint64_t every = o->check_every * stmts / s.n;
            if (every == 0)
                every = 1;
            if (every >= stmts) {
                uint64_t before = sh->steps, after = before + s.n;
                every = before / o->check_every != after / o->check_every ? stmts : 0;
            }
            env.sc.verify_every = every;
        }
        char name[64];
        snprintf(name, sizeof name, "stress-seed-%" PRIu64 ".scn", seed);
        w_lines = lines;
        w_nlines = nlines;
        w_nacts = s.n;
        st_outcome out;
        st_run_text(&env, name, t.p ? t.p : "", &out);
        if (out.status != ST_PASS) {
            note_failure(&out);
            st_lines_free(lines, nlines);
            st_script_free(&s);
            st_text_free(&t);
            return;
        }
        sh->steps += s.n;
        sh->statements += out.statements;
        sh->lifecycles++;
        if (out.live_objects > sh->max_live)
            sh->max_live = out.live_objects;
        st_lines_free(lines, nlines);
        st_script_free(&s);
        st_text_free(&t);
    }
}

/* path gets text whole or not at all: written beside it and renamed, the
 * partial file removed on failure (a full disk leaves no empty reproducer
 * that would pass when run). 0, or -1 with errno. */
static int write_file(const char *path, const char *text)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.part.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    errno = 0;
    int bad = fputs(text, f) < 0;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    int e = errno;
    bad |= fclose(f) != 0;
    if (!e)
        e = errno;
    if (!bad && rename(tmp, path) == 0)
        return 0;
    if (!e)
        e = errno ? errno : EIO;
    unlink(tmp);
    errno = e;
    return -1;
}

/* A write that failed: its path and errno, and no file named. */
static void write_failed(st_stress_result *r, const char *path, char *named)
{
    r->write_error = errno ? errno : EIO;
    snprintf(r->unwritten, sizeof r->unwritten, "%s", path);
    if (named)
        named[0] = '\0';   /* never name a file that was not written */
}

static int mkdirs(const char *dir)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void progress(const shared *sh, double t0, int final)
{
    double dt = now_s() - t0;
    fprintf(stderr, "\rstress: %" PRIu64 " steps, %.0f steps/s, %" PRIu64
            " lifecycles, %" PRIu64 " objects live (max), %d failures   %s",
            sh->steps, dt > 0 ? (double)sh->steps / dt : 0.0, sh->lifecycles, sh->max_live,
            sh->failed, final ? "\n" : "");
    fflush(stderr);
}

static void handle_failure(const st_stress_opts *o, st_stress_result *r)
{
    st_script s = {0};
    st_text t = {0};
    if (st_generate(&o->cfg, r->fail_seed, &s, &t, NULL, NULL) < 0) {
        errno = ENOMEM;
        write_failed(r, "the lifecycle", NULL);
        return;
    }
    const char *dir = o->out_dir ? o->out_dir : "build/stress";
    if (mkdirs(dir) < 0) {
        write_failed(r, dir, NULL);
    } else {
        snprintf(r->file, sizeof r->file, "%s/stress-seed-%" PRIu64 ".scn", dir, r->fail_seed);
        if (write_file(r->file, t.p ? t.p : "") < 0)
            write_failed(r, r->file, r->file);
    }
    r->file_statements = st_count_statements(t.p);
    if (o->shrink) {
        st_shrink_stats ss;
        if (st_shrink_script(&o->cfg, &o->env, &s, t.p ? t.p : "", r->cls, r->cls_kind,
                             o->check_clean, &r->min_text, &ss) == 0) {
            r->min_statements = ss.after_statements;
            r->shrink_runs = ss.runs;
            if (!r->write_error) {
                snprintf(r->min_file, sizeof r->min_file, "%s/stress-seed-%" PRIu64 ".min.scn",
                         dir, r->fail_seed);
                st_text hdr = {0};
                st_text_printf(&hdr, "# %s\n# shrunk from %s (%zu statements) by fakegc stress\n",
                               r->cls, r->file, r->file_statements);
                st_text_add(&hdr, r->min_text.p ? r->min_text.p : "",
                            r->min_text.p ? strlen(r->min_text.p) : 0);
                if (write_file(r->min_file, hdr.p ? hdr.p : "") < 0)
                    write_failed(r, r->min_file, r->min_file);
                st_text_free(&hdr);
            }
        }
    }
    st_script_free(&s);
    st_text_free(&t);
}

static void tick(void *arg, const void *shared_)
{
    job *jb = arg;
    if (jb->o->progress && now_s() - jb->last >= 0.5) {
        progress(shared_, jb->t0, 0);
        jb->last = now_s();
    }
}

int st_stress(const st_stress_opts *o, st_stress_result *r)
{
    memset(r, 0, sizeof *r);
    static shared sh;
    job jb = {o, now_s(), 0};
    jb.last = jb.t0;
    wk_job j = {worker, &jb, sizeof sh, 0, tick};
    wk_end e;
    if (wk_run(&j, &sh, &e) < 0) {
        snprintf(r->first, sizeof r->first, "%s", e.what);
        return -1;
    }
    r->seconds = now_s() - jb.t0;
    r->steps = sh.steps;
    r->statements = sh.statements;
    r->lifecycles = sh.lifecycles;
    r->max_live = sh.max_live;
    int rc = 0;
    if (sh.failed) {   /* a failing check, or a finding (which ended the worker) */
        r->failed = 1;
        r->fail_seed = sh.fail_seed;
        r->fail_index = sh.fail_index;
        r->fail_steps = sh.fail_steps;
        snprintf(r->cls, sizeof r->cls, "%s", sh.cls);
        r->cls_kind = sh.cls_kind;
        snprintf(r->query, sizeof r->query, "%s", sh.query);
        snprintf(r->first, sizeof r->first, "%s", sh.first);
    } else if (sh.lost) {
        snprintf(r->first, sizeof r->first, "%s", sh.first);
        rc = -1;
    } else if (e.how != WK_OK) {
        r->failed = 1;
        r->fail_seed = sh.current_seed;
        r->fail_index = sh.current_index;
        r->fail_steps = sh.steps_before + o->cfg.steps;
        r->lifecycles++;   /* the one that crashed */
        char words[300];
        wk_class(&e, r->cls, sizeof r->cls);   /* as st_run_forked: shrinking matches */
        r->cls_kind = e.how == WK_FINDING ? ST_CK_FINDING : ST_CK_CRASH;
        wk_describe(&e, words, sizeof words);
        snprintf(r->first, sizeof r->first, "the worker %s in seed %" PRIu64, words,
                 r->fail_seed);
    }
    if (r->failed && r->fail_steps > r->steps)
        r->steps = r->fail_steps;
    if (o->progress)
        progress(&sh, jb.t0, 1);
    if (r->failed && rc == 0)
        handle_failure(o, r);
    return rc;
}
