/* bn_suite.c - the benchmarks themselves and the repeat/median driver.
 *
 * Each benchmark is one function that performs ONE repeat: it runs batches
 * (setup untimed, the measured operations timed, teardown untimed) until
 * ctx->min_ns of timed work is done, and returns the operations and timed
 * nanoseconds. The driver calls it cfg->repeats times and takes the median.
 */
#include "bench/bn.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/obj.h"
#include "core/wt.h"
#include "fake/fk.h"
#include "heap/hp.h"
#include "scenario/sc.h"
#include "tensor/ts.h"

/* stress/steps needs src/stress (built after this module was written);
 * without its header the benchmark reports "not available". */
#if defined(__has_include)
#if __has_include("stress/st.h")
#include "stress/st.h"
#define HAVE_STRESS 1
#endif
#endif

typedef struct ctx {
    const bn_config *cfg;
    uint64_t min_ns;
    uint64_t ops, ns, cpu_ns;   /* this repeat so far */
    size_t small;      /* the "1k" size */
    size_t big;        /* the "1m" size (10k with --quick) */
    size_t huge;       /* the "10m" size (20k with --quick) */
    char msg[200];     /* BN_UNAVAILABLE reason */
    char note[200];    /* a remark for the result */
} ctx;

typedef int (*bench_fn)(ctx *c);

/* The creation site of every object the benchmarks make. */
static const char SITE[] = "bench";

/* ---- timing and helpers ------------------------------------------------ */

/* Wall time (CLOCK_MONOTONIC: what is reported) and this thread's CPU
 * time (shows how much of the wall time the machine's load stole). */
typedef struct stamp {
    uint64_t wall, cpu;
} stamp;

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Start and end read the two clocks in mirror order, so that neither
 * interval contains the other clock's read. */
static stamp stamp_now(void)
{
    stamp s;
    s.cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
    s.wall = ns_of(CLOCK_MONOTONIC);
    return s;
}

static stamp stamp_end(void)
{
    stamp s;
    s.wall = ns_of(CLOCK_MONOTONIC);
    s.cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
    return s;
}

static void add_time(ctx *c, stamp t0, stamp t1)
{
    c->ns += t1.wall - t0.wall;
    c->cpu_ns += t1.cpu > t0.cpu ? t1.cpu - t0.cpu : 0;
}

/* Another batch? At least one, then until min_ns of timed work. */
static int more(const ctx *c)
{
    return c->ops == 0 || c->ns < c->min_ns;
}

/* Keeps a value (or a memory effect) from being optimized away. */
static inline void keep(const void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Fisher-Yates with a fixed seed: every run looks keys up in one order. */
static void shuffle(obj **v, size_t n)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next(&s) % i);
        obj *t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* A generic node with one strong edge: weak-table keys, 2-cycles, leaks. */
typedef struct node {
    obj hdr;
    obj *next;
} node;

static void node_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    node *b = (node *)self;
    if (b->next)
        visit(b->next, "next", -1, arg);
}

static void node_release(obj *self) { obj_clear_ref(&((node *)self)->next); }

static const obj_type node_type = {.name = "BenchNode", .kind = OBJ_GENERIC,
                                   .traverse = node_traverse, .release = node_release};

/* A list holding n nodes: the root of the report benchmark's leak. */
typedef struct list {
    obj hdr;
    obj **items;
    size_t n;
} list;

static void list_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    list *l = (list *)self;
    for (size_t i = 0; i < l->n; i++)
        visit(l->items[i], "items", (long)i, arg);
}

static void list_release(obj *self)
{
    list *l = (list *)self;
    obj **items = l->items;
    size_t n = l->n;
    l->items = NULL;
    l->n = 0;
    for (size_t i = 0; i < n; i++)
        obj_decref(items[i]);
    al_free(items, n * sizeof *items, AL_K_OTHER);
}

static uint64_t list_owned(const obj *self) { return ((const list *)self)->n * sizeof(obj *); }

static const obj_type list_type = {.name = "BenchList", .kind = OBJ_GENERIC,
                                   .traverse = list_traverse, .release = list_release,
                                   .owned_bytes = list_owned};

static obj **objs_new(size_t n)
{
    obj **v = al_calloc(n, sizeof *v, AL_K_OTHER, "bench.objs");
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        v[i] = obj_new(&node_type, sizeof(node));
        if (!v[i]) {
            for (size_t j = 0; j < i; j++)
                obj_decref(v[j]);
            al_free(v, n * sizeof *v, AL_K_OTHER);
            return NULL;
        }
    }
    return v;
}

static void objs_free(obj **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        obj_decref(v[i]);
    al_free(v, n * sizeof *v, AL_K_OTHER);
}

static ts_tensor **tensors_alloc(size_t n)
{
    return al_calloc(n, sizeof(ts_tensor *), AL_K_OTHER, "bench.tensors");
}

static void tensors_free(ts_tensor **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        if (v[i])
            obj_decref(&v[i]->hdr);
    al_free(v, n * sizeof *v, AL_K_OTHER);
}

static const int64_t size4x4[2] = {4, 4};

static ts_tensor *real4x4(void)
{
    return ts_empty(2, size4x4, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
}

static obj *mode_new(const ctx *c)
{
    return fk_mode_new(c->cfg->sweep, 128);
}

/* ---- alloc, refcount ---------------------------------------------------- */

static int b_alloc_pair(ctx *c)
{
    enum { BATCH = 100000 };
    while (more(c)) {
        stamp t0 = stamp_now();
        for (int i = 0; i < BATCH; i++) {
            void *p = al_malloc(64, AL_K_OTHER, "bench.alloc");
            if (!p)
                return -1;
            keep(p);
            al_free(p, 64, AL_K_OTHER);
        }
        add_time(c, t0, stamp_end());
        c->ops += BATCH;
    }
    return 0;
}

static int b_refcount(ctx *c)
{
    enum { BATCH = 1000000 };
    obj *o = obj_new(&node_type, sizeof(node));
    if (!o)
        return -1;
    while (more(c)) {
        stamp t0 = stamp_now();
        for (int i = 0; i < BATCH; i++) {
            obj_incref(o);
            keep(o);   /* the count is stored and reloaded: no folding */
            obj_decref(o);
        }
        add_time(c, t0, stamp_end());
        c->ops += BATCH;
    }
    obj_decref(o);
    return 0;
}

/* ---- weak tables --------------------------------------------------------- */

static obj *shared_value;

static wt_table *table_new(void)
{
    return wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "bench_memo");
}

static int table_fill(wt_table *t, obj **keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (wt_put(t, keys[i], shared_value) != 0)
            return -1;
    return 0;
}

typedef enum { WT_INSERT, WT_LOOKUP, WT_REMOVE } wt_what;

/* Lookups and removes go in random order, or with in_order in the order the
 * keys were made (oldest first: the order a memo's keys die in when
 * tensors are dropped as they were made), which measures the same work
 * without the cache misses of random order. */
static int wt_bench(ctx *c, size_t n, wt_what what, int in_order)
{
    int rc = -1;
    wt_table *t = NULL;
    obj **keys = objs_new(n);
    obj **order = al_calloc(n, sizeof *order, AL_K_OTHER, "bench.order");
    shared_value = obj_new(&node_type, sizeof(node));
    if (!keys || !order || !shared_value)
        goto out;
    memcpy(order, keys, n * sizeof *keys);
    if (!in_order)
        shuffle(order, n);
    if (what == WT_LOOKUP) {
        if (!(t = table_new()) || table_fill(t, keys, n) != 0)
            goto out;
    }
    while (more(c)) {
        if (what != WT_LOOKUP) {
            if (!(t = table_new()))
                goto out;
            if (what == WT_REMOVE && table_fill(t, keys, n) != 0)
                goto out;
        }
        stamp t0 = stamp_now(), t1;
        if (what == WT_INSERT) {
            for (size_t i = 0; i < n; i++)
                if (wt_put(t, keys[i], shared_value) != 0)
                    goto out;
            t1 = stamp_end();
        } else if (what == WT_LOOKUP) {
            size_t found = 0;
            for (size_t i = 0; i < n; i++)
                found += wt_get(t, order[i]) != NULL;
            t1 = stamp_end();
            if (found != n) {
                er_set(ER_INTERNAL, "weak table lookup found %zu of %zu keys", found, n);
                goto out;
            }
        } else {
            size_t removed = 0;
            for (size_t i = 0; i < n; i++)
                removed += (size_t)wt_remove(t, order[i]);
            t1 = stamp_end();
            if (removed != n) {
                er_set(ER_INTERNAL, "weak table removed %zu of %zu keys", removed, n);
                goto out;
            }
        }
        add_time(c, t0, t1);
        c->ops += n;
        if (what != WT_LOOKUP) {
            wt_free(t);
            t = NULL;
        }
    }
    rc = 0;
out:
    wt_free(t);
    if (order)
        al_free(order, n * sizeof *order, AL_K_OTHER);
    objs_free(keys, n);
    obj_decref(shared_value);
    shared_value = NULL;
    return rc;
}

static int b_wt_insert_1k(ctx *c) { return wt_bench(c, c->small, WT_INSERT, 0); }
static int b_wt_lookup_1k(ctx *c) { return wt_bench(c, c->small, WT_LOOKUP, 0); }
static int b_wt_remove_1k(ctx *c) { return wt_bench(c, c->small, WT_REMOVE, 0); }
static int b_wt_insert_1m(ctx *c) { return wt_bench(c, c->big, WT_INSERT, 0); }
static int b_wt_lookup_1m(ctx *c) { return wt_bench(c, c->big, WT_LOOKUP, 0); }
static int b_wt_remove_1m(ctx *c) { return wt_bench(c, c->big, WT_REMOVE, 0); }
static int b_wt_lookup_1m_in_order(ctx *c) { return wt_bench(c, c->big, WT_LOOKUP, 1); }
static int b_wt_remove_1m_in_order(ctx *c) { return wt_bench(c, c->big, WT_REMOVE, 1); }
static int b_wt_insert_10m(ctx *c) { return wt_bench(c, c->huge, WT_INSERT, 0); }
static int b_wt_lookup_10m(ctx *c) { return wt_bench(c, c->huge, WT_LOOKUP, 0); }
static int b_wt_remove_10m(ctx *c) { return wt_bench(c, c->huge, WT_REMOVE, 0); }

/* ---- conversion ------------------------------------------------------------ */

enum { CONV_BATCH = 1000 };

/* fk_fake over batches of pre-made tensors (made by `make`) in mode m,
 * fakes kept until the batch is timed, then everything dropped untimed. */
static int convert_loop(ctx *c, obj *m, ts_tensor *(*make)(void))
{
    int rc = -1;
    ts_tensor **real = tensors_alloc(CONV_BATCH), **fake = tensors_alloc(CONV_BATCH);
    if (!real || !fake)
        goto out;
    while (more(c)) {
        for (size_t i = 0; i < CONV_BATCH; i++)
            if (!(real[i] = make()))
                goto out;
        stamp t0 = stamp_now();
        for (size_t i = 0; i < CONV_BATCH; i++)
            if (!(fake[i] = fk_fake(m, real[i], NULL)))
                goto out;
        add_time(c, t0, stamp_end());
        c->ops += CONV_BATCH;
        for (size_t i = 0; i < CONV_BATCH; i++) {
            obj_decref(&fake[i]->hdr);
            obj_decref(&real[i]->hdr);
            fake[i] = real[i] = NULL;
        }
    }
    rc = 0;
out:
    tensors_free(fake, CONV_BATCH);
    tensors_free(real, CONV_BATCH);
    return rc;
}

static int convert_batches(ctx *c, ts_tensor *(*make)(void))
{
    obj *m = mode_new(c);
    int rc = m ? convert_loop(c, m, make) : -1;
    obj_decref(m);
    return rc;
}

static int b_convert_miss(ctx *c)
{
    return convert_batches(c, real4x4);
}

/* n real 4x4 tensors converted in mode m and kept (real and fake alive):
 * the memos hold n entries each while the next benchmark runs. Made and
 * dropped untimed. */
typedef struct background {
    ts_tensor **real, **fake;
    size_t n;
} background;

static void background_drop(background *b)
{
    tensors_free(b->fake, b->n);
    tensors_free(b->real, b->n);
    memset(b, 0, sizeof *b);
}

static int background_make(background *b, obj *m, size_t n)
{
    memset(b, 0, sizeof *b);
    b->real = tensors_alloc(n);
    b->fake = tensors_alloc(n);
    b->n = n;
    if (!b->real || !b->fake)
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (!(b->real[i] = real4x4()) || !(b->fake[i] = fk_fake(m, b->real[i], NULL)))
            goto fail;
    return 0;
fail:
    background_drop(b);
    return -1;
}

/* convert/miss while the memos already hold n live conversions. */
static int convert_at(ctx *c, size_t n)
{
    int rc = -1;
    obj *m = mode_new(c);
    background bg = {0};
    if (m && background_make(&bg, m, n) == 0)
        rc = convert_loop(c, m, real4x4);
    background_drop(&bg);
    obj_decref(m);
    return rc;
}

static int b_convert_miss_1k(ctx *c) { return convert_at(c, c->small); }
/* --quick: a 2k background (the smoke test runs every row under memcheck) */
static size_t background_big(const ctx *c) { return c->cfg->quick ? 2000 : c->big; }
static int b_convert_miss_1m(ctx *c) { return convert_at(c, background_big(c)); }

static ts_tensor *sparse4x4(void)
{
    return ts_sparse_coo(2, size4x4, 2, 2, TS_F32, ts_cpu(), 0);
}

static int b_sparse_convert(ctx *c)
{
    return convert_batches(c, sparse4x4);
}

static int b_convert_hit(ctx *c)
{
    enum { BATCH = 100000 };
    int rc = -1;
    obj *m = mode_new(c);
    ts_tensor *t = real4x4(), *f0 = NULL;
    if (!m || !t || !(f0 = fk_fake(m, t, NULL)))
        goto out;
    while (more(c)) {
        stamp t0 = stamp_now();
        for (int i = 0; i < BATCH; i++) {
            ts_tensor *f = fk_fake(m, t, NULL);
            if (f != f0) {
                er_set(ER_INTERNAL, "memo hit returned another fake tensor");
                if (f)
                    obj_decref(&f->hdr);
                goto out;
            }
            obj_decref(&f->hdr);
        }
        add_time(c, t0, stamp_end());
        c->ops += BATCH;
    }
    rc = 0;
out:
    if (f0)
        obj_decref(&f0->hdr);
    if (t)
        obj_decref(&t->hdr);
    obj_decref(m);
    return rc;
}

/* One lifecycle: make a real 4x4 tensor, fake it, drop the fake, drop the
 * real tensor (its finalizer removes the memo entries; the storage entry
 * leaves at once (eager) or at the next sweep (periodic)). */
static int lifecycle(obj *m)
{
    ts_tensor *t = real4x4();
    if (!t)
        return -1;
    ts_tensor *f = fk_fake(m, t, NULL);
    if (!f) {
        obj_decref(&t->hdr);
        return -1;
    }
    obj_decref(&f->hdr);
    obj_decref(&t->hdr);
    return 0;
}

/* Lifecycles in a mode whose memos hold n live conversions (0: none). */
static int lifecycle_at(ctx *c, size_t n)
{
    enum { BATCH = 10000 };
    obj *m = mode_new(c);
    background bg = {0};
    if (!m || (n && background_make(&bg, m, n) != 0)) {
        obj_decref(m);
        return -1;
    }
    int rc = 0;
    while (rc == 0 && more(c)) {
        stamp t0 = stamp_now();
        for (int i = 0; i < BATCH && rc == 0; i++)
            rc = lifecycle(m);
        add_time(c, t0, stamp_end());
        c->ops += BATCH;
    }
    background_drop(&bg);
    obj_decref(m);
    return rc;
}

static int b_lifecycle(ctx *c) { return lifecycle_at(c, 0); }
static int b_lifecycle_1k(ctx *c) { return lifecycle_at(c, c->small); }
static int b_lifecycle_1m(ctx *c) { return lifecycle_at(c, background_big(c)); }

enum { FANOUT = 64 };

static int b_view_fanout(ctx *c)
{
    int rc = -1;
    obj *m = mode_new(c);
    ts_tensor *base = NULL;
    ts_tensor **views = tensors_alloc(FANOUT), **fakes = tensors_alloc(FANOUT);
    if (!m || !views || !fakes)
        goto out;
    while (more(c)) {
        if (!(base = ts_empty(2, (const int64_t[]){FANOUT, 16}, TS_F32, ts_cpu(),
                              TS_INIT_NONE, 0)))
            goto out;
        for (int i = 0; i < FANOUT; i++) {
            ts_args a;
            memset(&a, 0, sizeof a);
            a.n = 2;
            a.v[0] = 0;
            a.v[1] = i;
            if (!(views[i] = ts_apply(TS_OP_SELECT, base, &a)))
                goto out;
        }
        stamp t0 = stamp_now();
        for (int i = 0; i < FANOUT; i++)
            if (!(fakes[i] = fk_fake(m, views[i], NULL)))
                goto out;
        add_time(c, t0, stamp_end());
        c->ops += FANOUT;
        for (int i = 0; i < FANOUT; i++) {
            obj_decref(&fakes[i]->hdr);
            obj_decref(&views[i]->hdr);
            fakes[i] = views[i] = NULL;
        }
        obj_decref(&base->hdr);
        base = NULL;
    }
    rc = 0;
out:
    tensors_free(fakes, FANOUT);
    tensors_free(views, FANOUT);
    if (base)
        obj_decref(&base->hdr);
    obj_decref(m);
    return rc;
}

/* ---- collector, interpreter, stress, report ------------------------------ */

/* n objects (n even) in 2-cycles, nothing else holding them. */
static int make_cycles(size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        obj *a = obj_new(&node_type, sizeof(node));
        if (!a)
            return -1;
        obj *b = obj_new(&node_type, sizeof(node));
        if (!b) {
            obj_decref(a);
            return -1;
        }
        /* Each takes the other's creation reference: a is held by b only,
         * b by a only. */
        ((node *)a)->next = b;
        ((node *)b)->next = a;
    }
    return 0;
}

static int gc_cycles(ctx *c, size_t n)
{
    n &= ~(size_t)1;
    while (more(c)) {
        if (make_cycles(n) != 0) {
            gc_collect();
            return -1;
        }
        stamp t0 = stamp_now();
        uint64_t freed = gc_collect();
        add_time(c, t0, stamp_end());
        c->ops += n;
        if (freed != n)
            return er_set(ER_INTERNAL, "gc_collect freed %llu of %zu objects in 2-cycles",
                          (unsigned long long)freed, n);
    }
    return 0;
}

enum { INTERP_ITER = 20000, INTERP_ITER_QUICK = 500 };

static int b_gc_cycles(ctx *c) { return gc_cycles(c, c->big); }
static int b_gc_cycles_1k(ctx *c) { return gc_cycles(c, c->small); }
static int b_gc_cycles_10m(ctx *c) { return gc_cycles(c, c->huge); }

static int b_interp(ctx *c)
{
    char src[256];
    int iters = c->cfg->quick ? INTERP_ITER_QUICK : INTERP_ITER;
    snprintf(src, sizeof src,
             "m = fake_mode()\n"
             "repeat %d\n"
             "  t = empty(4, 4)\n"
             "  f = m.fake(t)\n"
             "  del f, t\n"
             "end\n",
             iters);
    sc_options o;
    sc_options_default(&o);
    o.sweep = (int)c->cfg->sweep;
    while (more(c)) {
        rp_scenario r;
        memset(&r, 0, sizeof r);
        stamp t0 = stamp_now();
        int rc = sc_run_source("bench/interp.scn", src, &o, &r, NULL);
        stamp t1 = stamp_end();
        /* The interpreter leaves the current site pointing into the program
         * it just freed: objects made next would carry a dangling site. */
        obj_set_site(SITE, 0);
        uint64_t stmts = r.statements;
        int ok = rc == 0 && r.status == RP_PASS;
        if (!ok && rc != -2)
            er_set(ER_INTERNAL, "the interpreter benchmark's scenario %s: %s",
                   rc == 0 ? "failed" : "errored", r.error ? r.error : "(no message)");
        else if (rc == -2)
            er_set(ER_INTERNAL, "the interpreter benchmark's scenario does not parse");
        rp_scenario_clear(&r);
        if (!ok)
            return -1;
        if (stmts == 0)
            stmts = 3ull * (uint64_t)iters + 2;
        add_time(c, t0, t1);
        c->ops += stmts;
    }
    return 0;
}

/* What one stress worker does per lifecycle (src/stress/st_stress.c), in
 * this process: generate the seed's actions and their scenario text, run
 * it, check it passed. One operation is one generated action (a "step" of
 * `fakegc stress`); the fork of the real command is not included. */
static int b_stress(ctx *c)
{
#ifdef HAVE_STRESS
    st_config sc;
    st_config_default(&sc);
    sc.policy = (int)c->cfg->sweep;
    st_env env;
    st_env_default(&env);
    env.sc.sweep = (int)c->cfg->sweep;
    uint64_t seed = 1, failed = 0, first_seed = 0;
    char first[120] = "";
    while (more(c)) {
        st_script s = {0};
        st_text t = {0};
        st_outcome out;
        memset(&out, 0, sizeof out);
        stamp t0 = stamp_now();
        if (st_generate(&sc, seed, &s, &t, NULL, NULL) < 0) {
            st_script_free(&s);
            st_text_free(&t);
            return er_set(ER_OOM, "out of memory generating stress seed %llu",
                          (unsigned long long)seed);
        }
        int status = st_run_text(&env, "bench-stress.scn", t.p ? t.p : "", &out);
        stamp t1 = stamp_end();
        obj_set_site(SITE, 0);
        size_t steps = s.n;
        st_script_free(&s);
        st_text_free(&t);
        /* A lifecycle whose checks fail still ran all its steps: the time
         * counts, and the failure is reported (it is a finding for
         * `fakegc stress`, not a reason to lose the measurement). */
        if (status != ST_PASS && failed++ == 0) {
            first_seed = seed;
            snprintf(first, sizeof first, "%.119s", out.first);
        }
        add_time(c, t0, t1);
        c->ops += steps;
        seed++;
    }
    if (failed)
        snprintf(c->note, sizeof c->note,
                 "%llu of %llu lifecycles failed their checks; first: seed %llu, %.60s "
                 "(fakegc stress --seed %llu reproduces it)",
                 (unsigned long long)failed, (unsigned long long)(seed - 1),
                 (unsigned long long)first_seed, first, (unsigned long long)first_seed);
    return 0;
#else
    snprintf(c->msg, sizeof c->msg, "not available: src/stress is not built");
    return 1;
#endif
}

/* The report path `run` takes: the strong-memo leak scenario (two
 * failing memo expectations) run whole and its text report written, at
 * `iters` iterations (--quick: 10k); per object retained. */
static int report_run(ctx *c, int iters)
{
    if (c->cfg->quick)
        iters = 10000;
    char src[320], err[128];
    snprintf(src, sizeof src,
             "m = fake_mode()\n"
             "repeat %d\n"
             "  t = empty(1)\n"
             "  f = m.fake(t)\n"
             "  del f, t\n"
             "end\n"
             "expect m.memo_meta == 0\n"
             "expect m.memo_storage == 0\n",
             iters);
    sc_options o;
    sc_options_default(&o);
    o.max_objects = 0;   /* 10M steps hold 60M objects: `run --max-objects 0` */
    while (more(c)) {
        if (fk_inject("strong-memo", err, sizeof err) != 0)
            return er_set(ER_INTERNAL, "report bench: %s", err);
        rp_scenario r;
        memset(&r, 0, sizeof r);
        stamp t0 = stamp_now();
        /* parsed here and freed after the report: records name sites in
         * the program's text */
        sc_program *p = sc_parse("bench/report.scn", src, strlen(src), NULL, 0, NULL);
        int rc = p ? sc_run(p, &o, &r) : -2;
        FILE *null = fopen("/dev/null", "w");
        rp_run run;
        memset(&run, 0, sizeof run);
        run.tool = "fakegc";
        run.version = "bench";
        run.allocator = "libc";
        run.scenarios = &r;
        run.n = 1;
        rp_run_count(&run);
        rp_options ro = {0};
        if (null) {
            rp_write(&run, RP_TEXT, null, &ro);
            fclose(null);
        }
        stamp t1 = stamp_end();
        sc_program_free(p);
        fk_inject("", err, sizeof err);
        obj_set_site(SITE, 0);
        uint64_t objs = r.nfailures ? r.failures[0].objects_total : 0;
        int ok = rc == 0 && r.status == RP_FAIL && objs == 2ull * (uint64_t)iters;
        rp_scenario_clear(&r);
        if (!ok)
            return er_set(ER_INTERNAL, "report bench: the leak was not reported whole");
        add_time(c, t0, t1);
        c->ops += objs;
    }
    return 0;
}

static int b_report_run_10k(ctx *c) { return report_run(c, 10000); }
static int b_report_run_100k(ctx *c) { return report_run(c, 100000); }
static int b_report_run_1m(ctx *c) { return report_run(c, 1000000); }
/* MemAvailable in bytes (0 if unknown). */
static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* 10M lifecycles hold 18 GB of model and 0.6 GB of analysis: run only
 * where that fits (--quick: 10k, always). */
static int b_report_run_10m(ctx *c)
{
    uint64_t need = 21ull << 30, have = mem_available();
    if (!c->cfg->quick && have < need) {
        snprintf(c->msg, sizeof c->msg, "not available: needs about 21 GiB, %.1f GiB available",
                 (double)have / (double)(1ull << 30));
        return 1;
    }
    return report_run(c, 10000000);
}

static int b_report_leak(ctx *c)
{
    size_t n = c->big;
    while (more(c)) {
        list *l = (list *)obj_new(&list_type, sizeof(list));
        if (!l)
            return -1;
        if (!(l->items = objs_new(n))) {
            obj_decref(&l->hdr);
            return -1;
        }
        l->n = n;
        hp_root root = {"leak", &l->hdr, 0};
        hp_retained *r = NULL;
        size_t nr = 0;
        hp_group *g = NULL;
        size_t ng = 0;
        int rc = -1;
        stamp t0 = stamp_now();
        hp_graph *gr = hp_snapshot(&root, 1);
        if (gr && hp_retained_all(gr, &r, &nr) == 0 && hp_group_records(r, nr, &g, &ng) == 0)
            rc = 0;
        stamp t1 = stamp_end();
        if (rc == 0 && nr != n + 1)
            rc = er_set(ER_INTERNAL, "the report found %zu records for %zu objects", nr, n + 1);
        hp_groups_free(g, ng);
        hp_retained_free(r, nr);
        hp_free(gr);
        obj_decref(&l->hdr);
        if (rc != 0)
            return -1;
        add_time(c, t0, t1);
        c->ops += nr;
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------ */

typedef struct bench {
    const char *name;
    bench_fn fn;
    double target_ns;
    const char *what;
} bench;

static const bench suite[] = {
    {"alloc/pair", b_alloc_pair, 0,
     "al_malloc(64) + al_free(64) through the installed allocator"},
    {"refcount/incdec", b_refcount, 0, "obj_incref + obj_decref on a live object"},
    {"weaktable/insert-1k", b_wt_insert_1k, 0,
     "wt_put of 1k keys into an empty weak-keyed table (keys made untimed)"},
    {"weaktable/lookup-1k", b_wt_lookup_1k, 0, "wt_get of 1k keys in random order"},
    {"weaktable/remove-1k", b_wt_remove_1k, 0,
     "wt_remove of 1k keys in random order (table filled untimed)"},
    {"weaktable/insert-1m", b_wt_insert_1m, 0, "as insert-1k with 1M keys (10k with --quick)"},
    {"weaktable/lookup-1m", b_wt_lookup_1m, 0, "as lookup-1k with 1M keys, random order"},
    {"weaktable/remove-1m", b_wt_remove_1m, 0, "as remove-1k with 1M keys, random order"},
    {"weaktable/lookup-1m-in-order", b_wt_lookup_1m_in_order, 0,
     "as lookup-1m, the keys in the order they were made"},
    {"weaktable/remove-1m-in-order", b_wt_remove_1m_in_order, 0,
     "as remove-1m, the keys in the order they were made (oldest first)"},
    {"weaktable/insert-10m", b_wt_insert_10m, 0,
     "as insert-1k with 10M keys (20k with --quick; about 2 GB)"},
    {"weaktable/lookup-10m", b_wt_lookup_10m, 0, "as lookup-1k with 10M keys, random order"},
    {"weaktable/remove-10m", b_wt_remove_10m, 0, "as remove-1k with 10M keys, random order"},
    {"convert/miss", b_convert_miss, 300,
     "fk_fake on a fresh strided 4x4 real tensor (tensor made untimed): a memo miss"},
    {"convert/miss-1k", b_convert_miss_1k, 0,
     "convert/miss while the memos hold 1k live conversions (made untimed)"},
    {"convert/miss-1m", b_convert_miss_1m, 0,
     "convert/miss while the memos hold 1M live conversions (2k with --quick; "
     "about 2.5 GB; 10M would need 25 GB)"},
    {"convert/hit", b_convert_hit, 25,
     "fk_fake on an already converted tensor (memo hit) + dropping the result"},
    {"lifecycle/churn", b_lifecycle, 1000,
     "make a real 4x4 tensor, fake it, drop both (entries reclaimed per --sweep)"},
    {"lifecycle/churn-1k", b_lifecycle_1k, 0,
     "lifecycle/churn while the memos hold 1k live conversions (made untimed)"},
    {"lifecycle/churn-1m", b_lifecycle_1m, 0,
     "lifecycle/churn while the memos hold 1M live conversions (2k with --quick)"},
    {"view/fanout-64", b_view_fanout, 0,
     "fk_fake of 64 select() views of one base (base and views made untimed); per view"},
    {"sparse/convert", b_sparse_convert, 0,
     "fk_fake on a fresh sparse COO 4x4 tensor, nnz 2 (made untimed)"},
    {"gc/cycles-1m", b_gc_cycles, 50,
     "gc_collect of 1M objects in 2-cycles (built untimed); per object"},
    {"gc/cycles-1k", b_gc_cycles_1k, 0, "as gc/cycles-1m with 1k objects"},
    {"gc/cycles-10m", b_gc_cycles_10m, 0,
     "as gc/cycles-1m with 10M objects (20k with --quick; about 1.2 GB)"},
    {"interp/statements", b_interp, 0,
     "sc_run_source of `repeat` { make, fake, del }; per statement executed"},
    {"stress/steps", b_stress, 0, "fakegc stress steps (generator + model check); per step"},
    {"report/leak-1m", b_report_leak, 0,
     "hp_snapshot + hp_retained_all + hp_group_records on 1M leaked objects; per object"},
    {"report/run-10k", b_report_run_10k, 0,
     "run + text report of a 10k-step strong-memo leak (2 failing expectations); per "
     "object behind the first"},
    {"report/run-100k", b_report_run_100k, 0, "as report/run-10k with 100k steps"},
    {"report/run-1m", b_report_run_1m, 0, "as report/run-10k with 1M steps (10k with --quick)"},
    {"report/run-10m", b_report_run_10m, 0,
     "as report/run-10k with 10M steps (10k with --quick); needs about 21 GiB free"},
};
#define NSUITE (sizeof suite / sizeof suite[0])

static const char *names[NSUITE];

const char *const *bn_names(size_t *n)
{
    for (size_t i = 0; i < NSUITE; i++)
        names[i] = suite[i].name;
    if (n)
        *n = NSUITE;
    return names;
}

size_t bn_count(void) { return NSUITE; }

const char *bn_describe(size_t i) { return i < NSUITE ? suite[i].what : ""; }

int bn_find(const char *name)
{
    for (size_t i = 0; i < NSUITE; i++)
        if (strcmp(name, suite[i].name) == 0)
            return (int)i;
    return -1;
}

void bn_config_default(bn_config *c)
{
    memset(c, 0, sizeof *c);
    c->sweep = FK_SWEEP_EAGER;
    c->repeats = 5;
    c->min_ns = 50000000ull;
}

void bn_config_quick(bn_config *c)
{
    bn_config_default(c);
    c->quick = 1;
    c->min_ns = 2000000ull;
}

const char *bn_build_kind(void)
{
#if defined(__OPTIMIZE__) && defined(NDEBUG)
    return "release";
#elif defined(__OPTIMIZE__)
    return "optimized";
#else
    return "debug";
#endif
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bn_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { MAX_REPEATS = 1000 };

int bn_run(size_t i, const bn_config *cfg, bn_result *out)
{
    memset(out, 0, sizeof *out);
    if (i >= NSUITE) {
        out->status = BN_ERROR;
        snprintf(out->message, sizeof out->message, "no benchmark number %zu", i);
        return -1;
    }
    const bench *b = &suite[i];
    out->name = b->name;
    out->target_ns = b->target_ns;
    ctx c;
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.min_ns = cfg->min_ns;
    c.small = 1000;
    c.big = cfg->quick ? 10000 : 1000000;
    c.huge = cfg->quick ? 20000 : 10000000;
    uint32_t reps = cfg->repeats < 1 ? 1 : cfg->repeats > MAX_REPEATS ? MAX_REPEATS : cfg->repeats;

    obj_set_site(SITE, 0);
    /* A fresh install zeroes the front counters: peak is this benchmark's.
     * Blocks live before (the gate's baseline, when it re-runs one) stay
     * live, and only what this run leaves is a leak. */
    uint64_t live_before = al_live_blocks(), bytes_before = al_live_bytes();
    if (live_before == 0)
        al_install(al_current());
    er_clear();

    double per[MAX_REPEATS], cpu[MAX_REPEATS];
    uint64_t opsv[MAX_REPEATS];
    int rc = 0;
    for (uint32_t r = 0; r < reps; r++) {
        c.ops = c.ns = c.cpu_ns = 0;
        rc = b->fn(&c);
        if (rc != 0)
            break;
        uint64_t ops = c.ops;
        if (ops == 0) {
            rc = er_set(ER_INTERNAL, "no operation was timed");
            break;
        }
        per[r] = (double)c.ns / (double)ops;
        cpu[r] = (double)c.cpu_ns / (double)ops;
        opsv[r] = ops;
    }
    al_stats st;
    al_stats_get(&st);
    out->peak_bytes = st.peak_bytes;
    if (rc > 0) {
        out->status = BN_UNAVAILABLE;
        snprintf(out->message, sizeof out->message, "%s", c.msg);
        return 0;
    }
    if (rc == 0 && al_live_blocks() != live_before)
        rc = er_set(ER_INTERNAL, "%llu blocks (%llu bytes) were left live",
                    (unsigned long long)(al_live_blocks() - live_before),
                    (unsigned long long)(al_live_bytes() - bytes_before));
    if (rc != 0) {
        out->status = BN_ERROR;
        snprintf(out->message, sizeof out->message, "%s%s",
                 *er_message() ? er_message() : "failed",
                 al_live_blocks() != live_before ? " (and blocks were left live)" : "");
        return -1;
    }
    out->nsamples = reps < BN_SAMPLES ? reps : BN_SAMPLES;
    memcpy(out->samples, per, out->nsamples * sizeof *per);
    memcpy(out->cpu_samples, cpu, out->nsamples * sizeof *cpu);
    double sorted[MAX_REPEATS];
    memcpy(sorted, per, reps * sizeof *per);
    out->ns_per_op = bn_median(sorted, reps);
    out->min_ns = sorted[0];
    out->max_ns = sorted[reps - 1];
    out->repeats = reps;
    out->cpu_ns_per_op = bn_median(cpu, reps);
    /* ops of the repeat closest to the median */
    size_t best = 0;
    for (size_t r = 1; r < reps; r++) {
        double d = per[r] - out->ns_per_op, bd = per[best] - out->ns_per_op;
        if ((d < 0 ? -d : d) < (bd < 0 ? -bd : bd))
            best = r;
    }
    out->ops = opsv[best];
    out->status = BN_OK;
    snprintf(out->note, sizeof out->note, "%s", c.note);
    return 0;
}

int bn_trace_memo(const bn_config *cfg, uint64_t n, FILE *f)
{
    obj *m = fk_mode_new(cfg->sweep, 128);
    if (!m)
        return -1;
    fprintf(f, "lifecycle,memo_storage,pending,memo_meta,memo_fake\n");
    for (uint64_t i = 1; i <= n; i++) {
        if (lifecycle(m) != 0) {
            obj_decref(m);
            return -1;
        }
        fk_counters k;
        if (fk_counters_get(m, &k) != 0) {
            obj_decref(m);
            return -1;
        }
        fprintf(f, "%llu,%lld,%lld,%lld,%lld\n", (unsigned long long)i,
                (long long)k.memo_storage, (long long)k.pending, (long long)k.memo_meta,
                (long long)k.memo_fake);
    }
    obj_decref(m);
    return 0;
}
