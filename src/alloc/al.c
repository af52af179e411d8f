/* al.c - the front functions, their always-on counters, fault injection,
 * and al_destroy / al_wrap_new. Building an allocator from a spec string
 * ("tracking/guard/arena") is src/allocspec's: alloc knows no wrapper.
 *
 * The front is the only place that counts: wrappers and base allocators see
 * the calls the front lets through. Single-threaded like the rest of fakegc
 * (--jobs uses processes), so the counters are plain globals.
 */
#include "alloc/al_wrap.h"
#include "vg/vg.h"

#include <stdio.h>
#include <string.h>

static al_allocator *cur;       /* NULL: al_libc_default() */
static al_stats st;
static uint64_t attempts;       /* allocation attempts since install */
static uint64_t fail_n;         /* 0: no injection */
static uint64_t fail_base;      /* attempts when al_fail_at was called */
static int fail_persistent;
static al_trace_fn trace_fn;    /* al_trace: one call per counted attempt */
static void *trace_arg;

static const char *const kind_names[AL_K_COUNT] = {
    "storage", "object", "memo", "attr", "scenario", "heap", "report", "other",
};

int al_kind_is_model(al_kind k)
{
    return k == AL_K_STORAGE || k == AL_K_OBJECT || k == AL_K_MEMO || k == AL_K_ATTR;
}

const char *al_kind_name(al_kind k)
{
    return (unsigned)k < AL_K_COUNT ? kind_names[k] : "?";
}

static al_allocator *current(void)
{
    return cur ? cur : al_libc_default();
}

/* ---- pools ---------------------------------------------------------------- */

static al_pool *pools;          /* pools that have cached a block */
static int pool_on = -1;        /* -1: not decided for the current allocator */
static size_t cached_bytes;     /* in all pools, at most AL_POOL_BYTES */

static int pools_enabled(void)
{
    if (pool_on < 0) {
        al_allocator *a = current();
        pool_on = !vg_running() && !VG_ASAN_ENABLED;
        for (; a->inner && pool_on; a = a->inner)
            pool_on = a->xpool != NULL;
    }
    return pool_on;
}

/* The chain's base: where a cached block goes back to. */
static al_allocator *base_of(al_allocator *a)
{
    while (a->inner)
        a = a->inner;
    return a;
}

void al_pool_flush_all(void)
{
    al_allocator *a = current(), *base = base_of(a);
    for (al_pool *p = pools; p; p = p->next) {
        size_t n = p->size ? p->size : 1;
        while (p->head) {
            void *b = p->head;
            memcpy(&p->head, b, sizeof p->head);
            if (a != base)
                (void)a->xpool(a->ctx, AL_POOL_FLUSH, b, n, p->kind, NULL);
            base->xfree(base->ctx, b, n, p->kind);
        }
        p->n = 0;
        p->listed = 0;
    }
    pools = NULL;
    cached_bytes = 0;
}

void al_install(al_allocator *a)
{
    al_pool_flush_all();        /* cached blocks go back to their allocator */
    pool_on = -1;
    cur = a;
    memset(&st, 0, sizeof st);
    attempts = 0;
    fail_n = 0;
    fail_base = 0;
    fail_persistent = 0;
}

al_allocator *al_current(void)
{
    return current();
}

void al_fail_at(uint64_t n, int persistent)
{
    fail_n = n;
    fail_base = attempts;
    fail_persistent = persistent != 0;
}

uint64_t al_alloc_count(void)
{
    return attempts;
}

void al_trace(al_trace_fn fn, void *arg)
{
    trace_fn = fn;
    trace_arg = arg;
}

/* Count one allocation attempt; 1 if fault injection says it must fail. */
static int attempt_fails(al_kind kind, const char *site)
{
    attempts++;
    if (trace_fn)
        trace_fn(trace_arg, kind, site);
    if (!fail_n)
        return 0;
    uint64_t i = attempts - fail_base;
    return i == fail_n || (fail_persistent && i > fail_n);
}

static al_kind clamp_kind(al_kind kind)
{
    return (unsigned)kind < AL_K_COUNT ? kind : AL_K_OTHER;
}

static void count_alloc(size_t n, al_kind kind)
{
    st.live_blocks++;
    st.live_bytes += n;
    if (st.live_bytes > st.peak_bytes)
        st.peak_bytes = st.live_bytes;
    st.total_allocs++;
    st.kind_blocks[kind]++;
    st.kind_bytes[kind] += n;
}

static void count_free(size_t n, al_kind kind)
{
    st.live_blocks--;
    st.live_bytes -= n;
    st.total_frees++;
    st.kind_blocks[kind]--;
    st.kind_bytes[kind] -= n;
}

void *al_malloc(size_t n, al_kind kind, const char *site)
{
    kind = clamp_kind(kind);
    if (attempt_fails(kind, site)) {
        st.failed_allocs++;
        return NULL;
    }
    al_allocator *a = current();
    void *p = a->xmalloc(a->ctx, n ? n : 1, kind, site);
    if (!p) {
        st.failed_allocs++;
        return NULL;
    }
    count_alloc(n, kind);
    return p;
}

enum { POOL_COLD_AT = 16 };   /* cached blocks past which the next may be cold */

/* Prefetch a block for writing, its first 512 bytes at most. */
static void prefetch_block(const char *p, size_t size)
{
    size_t n = size < 512 ? size : 512;
    for (size_t off = 0; off < n; off += 64)
        __builtin_prefetch(p + off, 1);
}

void *al_pool_get(al_pool *pool, const char *site)
{
    if (!pool->head || !pools_enabled())
        return al_malloc(pool->size, pool->kind, site);
    al_kind kind = clamp_kind(pool->kind);
    if (attempt_fails(kind, site)) {
        st.failed_allocs++;
        return NULL;
    }
    void *b = pool->head;
    al_allocator *a = current();
    if (a->inner && a->xpool(a->ctx, AL_POOL_GET, b, pool->size, kind, site) != 0) {
        st.failed_allocs++;
        return NULL;
    }
    memcpy(&pool->head, b, sizeof pool->head);
    /* The next get reads the next block's link and the caller zeroes the
     * block: misses when the pool's blocks went cold, which a long list
     * says (a batch freed since); start them now, so they overlap the work
     * until then (convert/miss: the link read was 12% of it). A short list
     * holds blocks freed just now, still in the cache. */
    if (pool->n > POOL_COLD_AT)
        prefetch_block(pool->head, pool->size);
    pool->n--;
    cached_bytes -= pool->size;
    count_alloc(pool->size, kind);
    return b;
}

size_t al_pool_cached_bytes(void)
{
    return cached_bytes;
}

void al_pool_put(al_pool *pool, void *p)
{
    if (!p)
        return;
    if (cached_bytes + pool->size > AL_POOL_BYTES || !pools_enabled()) {
        al_free(p, pool->size, pool->kind);
        return;
    }
    al_allocator *a = current();
    al_kind kind = clamp_kind(pool->kind);
    if (a->inner && a->xpool(a->ctx, AL_POOL_PUT, p, pool->size, kind, NULL) != 0) {
        count_free(pool->size, kind);   /* as al_free of an unknown block */
        return;
    }
    memcpy(p, &pool->head, sizeof pool->head);
    pool->head = p;
    pool->n++;
    cached_bytes += pool->size;
    if (!pool->listed) {
        pool->listed = 1;
        pool->next = pools;
        pools = pool;
    }
    count_free(pool->size, kind);
}

void *al_calloc(size_t count, size_t n, al_kind kind, const char *site)
{
    size_t total;
    if (__builtin_mul_overflow(count, n, &total)) {
        (void)attempt_fails(clamp_kind(kind), site);
        st.failed_allocs++;
        return NULL;
    }
    void *p = al_malloc(total, kind, site);
    if (p)
        memset(p, 0, total);
    return p;
}

void al_free(void *p, size_t n, al_kind kind)
{
    if (!p)
        return;
    kind = clamp_kind(kind);
    al_allocator *a = current();
    a->xfree(a->ctx, p, n ? n : 1, kind);
    count_free(n, kind);
}

void *al_realloc(void *p, size_t old_n, size_t n, al_kind kind, const char *site)
{
    if (!p)
        return al_malloc(n, kind, site);
    if (n == 0) {
        al_free(p, old_n, kind);
        return NULL;
    }
    kind = clamp_kind(kind);
    if (n > old_n && attempt_fails(kind, site)) {
        st.failed_allocs++;
        return NULL;
    }
    al_allocator *a = current();
    void *q = a->xrealloc(a->ctx, p, old_n ? old_n : 1, n, kind, site);
    if (!q) {
        st.failed_allocs++;
        return NULL;
    }
    st.total_reallocs++;
    st.live_bytes = st.live_bytes - old_n + n;
    st.kind_bytes[kind] = st.kind_bytes[kind] - old_n + n;
    if (st.live_bytes > st.peak_bytes)
        st.peak_bytes = st.live_bytes;
    return q;
}

int al_grow(void *pv, size_t *cap, size_t n, size_t elem, size_t first, al_kind kind,
            const char *site)
{
    return al_reserve(pv, cap, n + 1, elem, first, kind, site);
}

int al_reserve_grow(void *pv, size_t *cap, size_t need, size_t elem, size_t first,
                    al_kind kind, const char *site)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first;
    while (nc && nc < need && nc <= SIZE_MAX / 2)
        nc *= 2;
    void *p;
    memcpy(&p, pv, sizeof p);   /* pv is a T **: read and write it as bytes */
    if (nc < need || nc > SIZE_MAX / elem)
        return -1;
    void *np = al_realloc(p, *cap * elem, nc * elem, kind, site);
    if (!np)
        return -1;
    memcpy(pv, &np, sizeof np);
    *cap = nc;
    return 0;
}

char *al_strdup(const char *s, al_kind kind, const char *site)
{
    size_t n = strlen(s) + 1;
    char *d = al_malloc(n, kind, site);
    if (d)
        memcpy(d, s, n);
    return d;
}

uint64_t al_footprint(void)
{
    for (al_allocator *a = current(); a; a = a->inner)
        if (a->xfootprint)
            return a->xfootprint(a->ctx);
    return 0;
}

void al_stats_get(al_stats *out)
{
    *out = st;
}

uint64_t al_live_bytes(void)
{
    return st.live_bytes;
}

uint64_t al_live_blocks(void)
{
    return st.live_blocks;
}

uint64_t al_live_bytes_kind(al_kind k)
{
    return (unsigned)k < AL_K_COUNT ? st.kind_bytes[k] : 0;
}

size_t al_usable_size(const void *p)
{
    al_allocator *a = current();
    return p && a->xsize ? a->xsize(a->ctx, p) : 0;
}

void al_destroy(al_allocator *a)
{
    if (a && a == cur)
        al_install(NULL);       /* never leave the front pointing at freed memory */
    while (a) {
        al_allocator *inner = a->inner;
        if (a->xdestroy)
            a->xdestroy(a);
        a = inner;
    }
}

al_allocator *al_wrap_new(const char *wrapper, al_allocator *inner, void *ctx,
                          const al_allocator *methods)
{
    size_t n = strlen(wrapper) + 1 + strlen(inner->name) + 1;
    char *name = al_sys_malloc(n);
    if (!name) {
        al_sys_free(ctx);
        return NULL;
    }
    snprintf(name, n, "%s/%s", wrapper, inner->name);
    al_allocator *a = al_obj_new(name, ctx, methods);
    al_sys_free(name);
    if (a)
        a->inner = inner;
    return a;
}
