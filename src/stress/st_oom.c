/* st_oom.c - the out-of-memory loop: SQLite's method (test_malloc.c) of
 * failing allocations one at a time, once with a transient failure and once
 * with a persistent one, checking after each run that nothing leaked.
 *
 * Failing the 1st, 2nd, 3rd ... allocation reruns the scenario once per
 * allocation: quadratic, 2,530 s for a 5000-iteration churn. So a baseline
 * run maps every allocation attempt to its context (C site, kind,
 * statement, the statement's execution folded past ST_OOM_FOLD, via
 * al_trace and the on_statement hook) and only the first attempt of each
 * context is failed; the rest are counted as duplicates skipped. The runs
 * are deterministic, so the k-th attempt of a failing run is the k-th of
 * the baseline up to the failure. (o->every keeps the full loop.) */
#include "stress/st.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "worker/wk.h"

static void add_finding(st_oom_result *r, int persistent, uint64_t k, const char *what)
{
    if (r->nfindings < ST_OOM_MAX_FINDINGS) {
        st_oom_finding *f = &r->f[r->nfindings];
        f->persistent = persistent;
        f->point = k;
        snprintf(f->what, sizeof f->what, "%s", what);
    }
    r->nfindings++;
}

/* How a run ended, judged against a clean OutOfMemory. Writes why (empty
 * when the run was clean). */
static void judge(const rp_scenario *s, int baseline_passed, char *why, size_t n)
{
    why[0] = '\0';
    if (s->nretained > 0) {
        const hp_retained *x = &s->retained[0];
        char path[120] = "";
        if (x->path && x->path_len)
            hp_path_shape(x->path, x->path_len, path, sizeof path);
        snprintf(why, n, "%zu object%s retained at the end check, the first %s#%" PRIu64
                 " created at %s:%u%s%s", s->nretained, s->nretained == 1 ? "" : "s",
                 obj_kind_name(x->kind), x->id, x->site.file ? x->site.file : "?",
                 x->site.line, path[0] ? " via " : "", path);
        return;
    }
    if (s->leaked_bytes) {
        snprintf(why, n, "%" PRIu64 " bytes leaked (end check)", s->leaked_bytes);
        return;
    }
    if (s->status == RP_ERROR) {
        snprintf(why, n, "internal error: %s", s->error ? s->error : "?");
        return;
    }
    if (s->status == RP_FAIL && baseline_passed) {
        for (size_t i = 0; i < s->nfailures; i++) {
            const rp_failure *f = &s->failures[i];
            if ((f->cause == RP_FC_RAISED || f->cause == RP_FC_SETUP) && f->raised == ER_OOM)
                continue;
            snprintf(why, n, "line %u: %s  actual: %s (not a clean OutOfMemory)", f->line,
                     f->text ? f->text : "", f->actual ? f->actual : "");
            return;
        }
    }
}

/* Live allocator bytes per kind, to name what a run left behind. */
static void kinds_now(uint64_t *k)
{
    for (int i = 0; i < AL_K_COUNT; i++)
        k[i] = al_live_bytes_kind((al_kind)i);
}

static void leftover(const uint64_t *before, char *why, size_t n)
{
    uint64_t now[AL_K_COUNT];
    kinds_now(now);
    size_t w = 0;
    for (int i = 0; i < AL_K_COUNT && w < n; i++)
        if (now[i] != before[i])
            w += (size_t)snprintf(why + w, n - w, "%s%" PRId64 " B %s", w ? ", " : "",
                                  (int64_t)(now[i] - before[i]), al_kind_name((al_kind)i));
    uint64_t objs = obj_live_count() + obj_zombie_count();
    if (objs && w < n)
        snprintf(why + w, n - w, "%s%" PRIu64 " objects", w ? ", " : "", objs);
}

/* Where the forked child is, for the parent: a crash is reported at it. */
typedef struct progress_page {
    volatile int persistent;
    volatile uint64_t point;
} progress_page;

static progress_page *page;   /* set in the forked child */

/* ---- the context map (plain malloc: it must not move al_'s counts) ---- */

typedef struct attempt {
    const char *site;
    uint32_t seq;                /* statements finished before it */
    uint8_t kind;
} attempt;

typedef struct ctx_map {
    attempt *a;
    size_t na, capa;
    uint32_t *line, *iter;       /* per finished statement */
    size_t ns, caps;
    int oom;                     /* a push failed: fall back to every point */
} ctx_map;

static int push(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    void *nv = realloc(*v, nc * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

static void on_attempt(void *arg, al_kind kind, const char *site)
{
    ctx_map *m = arg;
    if (m->oom || push((void **)&m->a, &m->capa, m->na, sizeof *m->a) < 0) {
        m->oom = 1;
        return;
    }
    m->a[m->na++] = (attempt){site, (uint32_t)m->ns, (uint8_t)kind};
}

static void on_stmt(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    (void)objects, (void)bytes;
    ctx_map *m = arg;
    if (m->oom || push((void **)&m->line, &m->caps, m->ns, sizeof *m->line) < 0) {
        m->oom = 1;
        return;
    }
    m->line[m->ns++] = line;
}

static void map_free(ctx_map *m)
{
    free(m->a);
    free(m->line);
    free(m->iter);
    memset(m, 0, sizeof *m);
}

/* iter[s] = how many earlier statements had line[s] (a line's executions). */
static int fold_iterations(ctx_map *m)
{
    uint32_t maxl = 0;
    for (size_t s = 0; s < m->ns; s++)
        if (m->line[s] > maxl)
            maxl = m->line[s];
    uint32_t *count = calloc((size_t)maxl + 1, sizeof *count);
    m->iter = malloc((m->ns ? m->ns : 1) * sizeof *m->iter);
    if (!count || !m->iter) {
        free(count);
        return -1;
    }
    for (size_t s = 0; s < m->ns; s++)
        m->iter[s] = count[m->line[s]]++;
    free(count);
    return 0;
}

typedef struct ctx_key {
    const char *site;
    uint32_t line, iter;
    uint8_t kind, used;
} ctx_key;

static uint64_t key_hash(const ctx_key *k)
{
    uint64_t h = (uint64_t)(uintptr_t)k->site * 0x9e3779b97f4a7c15u;
    h ^= ((uint64_t)k->line << 32 | (uint64_t)k->iter << 8 | k->kind) * 0xc2b2ae3d27d4eb4fu;
    return h ^ (h >> 31);
}

/* The 1-based attempt numbers to fail: the first of each context, in order.
 * *npoints of them in a malloc'd array (NULL when out of memory). */
static uint64_t *context_points(const ctx_map *m, size_t *npoints)
{
    size_t cap = 64;
    while (cap < 2 * m->na + 2)
        cap *= 2;
    ctx_key *tab = calloc(cap, sizeof *tab);
    uint64_t *pts = malloc((m->na ? m->na : 1) * sizeof *pts);
    if (!tab || !pts) {
        free(tab);
        free(pts);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->na; i++) {
        const attempt *a = &m->a[i];
        ctx_key k = {a->site, 0, 0, a->kind, 1};
        if (a->seq < m->ns) {   /* in statement seq (it finished after) */
            k.line = m->line[a->seq];
            k.iter = m->iter[a->seq] < ST_OOM_FOLD ? m->iter[a->seq] : ST_OOM_FOLD;
        }
        size_t j = (size_t)key_hash(&k) & (cap - 1);
        for (; tab[j].used; j = (j + 1) & (cap - 1))
            if (tab[j].site == k.site && tab[j].line == k.line && tab[j].iter == k.iter &&
                tab[j].kind == k.kind)
                break;
        if (tab[j].used)
            continue;
        tab[j] = k;
        pts[n++] = i + 1;
    }
    free(tab);
    *npoints = n;
    return pts;
}

static void show_progress(const st_oom_opts *o, int mode, uint64_t i, uint64_t n)
{
    static struct timespec last;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (i + 1 < n && (now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) <
                         100000000L)
        return;
    last = now;
    fprintf(stderr, "\r\033[K[oom] %.150s: %s point %" PRIu64 "/%" PRIu64,
            o->name ? o->name : "", mode ? "persistent" : "transient", i + 1, n);
    if (i + 1 >= n)
        fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* One failing run at attempt k; 1 when the k-th attempt never came. */
static int fail_run(const sc_program *p, const st_oom_opts *o, st_oom_result *r, int mode,
                    uint64_t k, int passed, uint64_t *before)
{
    if (page) {
        page->persistent = mode;
        page->point = k;
    }
    rp_scenario s;
    uint64_t c0 = al_alloc_count();
    al_fail_at(k, mode);
    memset(&s, 0, sizeof s);
    sc_run(p, &o->sc, &s);
    al_fail_at(0, 0);
    uint64_t used = al_alloc_count() - c0;
    char why[240];
    judge(&s, passed, why, sizeof why);
    rp_scenario_clear(&s);
    fk_reset();
    er_clear();
    if (!why[0]) {
        char left[200] = "";
        leftover(before, left, sizeof left);
        if (left[0])
            snprintf(why, sizeof why, "live after the run: %s", left);
    }
    if (why[0]) {
        add_finding(r, mode, k, why);
        /* what leaked stays leaked: measure the next run from here */
        kinds_now(before);
    }
    return used < k;
}

int st_oom_program(const sc_program *p, const st_oom_opts *o, st_oom_result *r)
{
    memset(r, 0, sizeof *r);
    ctx_map m;
    memset(&m, 0, sizeof m);
    sc_options so = o->sc;
    if (!o->every) {
        so.on_statement = on_stmt;
        so.on_statement_arg = &m;
        al_trace(on_attempt, &m);
    }
    rp_scenario s;
    memset(&s, 0, sizeof s);
    uint64_t a0 = al_alloc_count();
    sc_run(p, &so, &s);
    al_trace(NULL, NULL);
    r->attempts = al_alloc_count() - a0;
    r->baseline_status = s.status;
    r->allocations = s.allocations;
    rp_scenario_clear(&s);
    fk_reset();
    er_clear();
    if (r->baseline_status == RP_ERROR) {
        map_free(&m);
        return -1;
    }
    int passed = r->baseline_status == RP_PASS;
    uint64_t before[AL_K_COUNT];
    kinds_now(before);
    size_t npts = 0;
    uint64_t *pts = NULL;
    if (!o->every && !m.oom && fold_iterations(&m) == 0)
        pts = context_points(&m, &npts);
    map_free(&m);
    if (pts) {
        r->contexts = npts;
        r->skipped = r->attempts - npts;
    }
    for (int mode = 0; mode < 2; mode++) {
        if (!(o->modes & (1 << mode)))
            continue;
        for (uint64_t i = 0;; i++) {
            if (pts && i >= npts)
                break;
            if (o->max_fail && i >= o->max_fail) {
                r->capped[mode] = 1;
                break;
            }
            if (o->progress) {
                uint64_t n = pts ? npts : r->attempts;
                show_progress(o, mode, i, o->max_fail && o->max_fail < n ? o->max_fail : n);
            }
            uint64_t k = pts ? pts[i] : i + 1;
            if (fail_run(p, o, r, mode, k, passed, before))
                break;       /* the k-th allocation never came: nothing failed */
            r->points[mode]++;
        }
    }
    if (o->progress) {   /* the line ends with the loop, capped or not */
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    free(pts);
    return 0;
}

/* st_oom_forked's child and the parent: the shared bytes. */
typedef struct oom_shared {
    progress_page at;
    st_oom_result r;
    int rc;
} oom_shared;

typedef struct oom_job {
    const sc_program *p;
    const st_oom_opts *o;
} oom_job;

static void oom_child(void *arg, void *shared)
{
    const oom_job *j = arg;
    oom_shared *sh = shared;
    page = &sh->at;
    st_oom_result cr;
    sh->rc = st_oom_program(j->p, j->o, &cr);
    sh->r = cr;
}

int st_oom_forked(const sc_program *p, const st_oom_opts *o, st_oom_result *r)
{
    oom_job oj = {p, o};
    wk_job j = {oom_child, &oj, sizeof(oom_shared), 0, NULL};
    static oom_shared sh;   /* large: not on the stack */
    wk_end e;
    memset(r, 0, sizeof *r);
    if (wk_run(&j, &sh, &e) < 0)
        return st_oom_program(p, o, r);
    if (e.how == WK_OK) {
        *r = sh.r;
        return sh.rc;
    }
    r->crash_persistent = sh.at.persistent;
    r->crash_point = sh.at.point;
    if (e.how == WK_FINDING) {
        r->finding = 1;
        r->finding_line = e.line;
        snprintf(r->finding_what, sizeof r->finding_what, "%s", e.what);
    } else {
        r->crashed = 1;
        wk_describe(&e, r->crash, sizeof r->crash);
    }
    return 0;
}
