/* in_tracking.c - live-block table, per-kind and per-site counts.
 *
 * Blocks: open addressing with linear probing and backward-shift deletion
 * (no tombstones), load kept under 1/2. Keys are pointers XORed with DISGUISE
 * so that memcheck, which treats any defined word that looks like a pointer
 * as a reference, does not see the table as holding the program's blocks.
 * Sites: keyed by the site pointer (sites are literals, so one pointer per
 * call site in practice); equal strings at different addresses are merged
 * when read (in_tracking_site_get, the report).
 */
#include "instrument/in_tracking.h"

#include "alloc/al_wrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DISGUISE ((uintptr_t)0xA5A5A5A5A5A5A5A5ull)

typedef struct blk {
    uintptr_t key;          /* disguised pointer; 0 = empty slot */
    size_t n;
    uint64_t seq;
    uint32_t site;          /* index into sites */
    uint16_t kind;
    uint16_t cached;        /* in a pool in front of the wrapper: freed to the
                               program, its memory still the pool's */
} blk;

typedef struct site_ent {
    const char *site;
    uint64_t allocs;            /* allocations ever made from the site */
} site_ent;

typedef struct trk_ctx {
    al_allocator *inner;
    blk *tab;
    size_t cap, used;           /* cap is a power of two */
    site_ent *sites;
    size_t nsites, capsites;
    uint32_t *site_idx;         /* hash of site pointer -> index + 1 */
    size_t cap_idx;
    struct { const char *site; uint32_t idx; } recent[64];   /* by site bits */
    in_tracking_stats st;
} trk_ctx;

static size_t hash_ptr(uintptr_t x)
{
    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static int tab_grow(trk_ctx *c)
{
    size_t ncap = c->cap ? c->cap * 2 : 256;
    blk *nt = al_sys_calloc(ncap, sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->tab[i].key)
            continue;
        size_t j = hash_ptr(c->tab[i].key) & (ncap - 1);
        while (nt[j].key)
            j = (j + 1) & (ncap - 1);
        nt[j] = c->tab[i];
    }
    al_sys_free(c->tab);
    c->tab = nt;
    c->cap = ncap;
    return 0;
}

/* The table's key of block p (disguised, so a leak checker does not count
 * the table as holding the block). */
static uintptr_t key_of(const void *p)
{
    return (uintptr_t)p ^ DISGUISE;
}

/* A block the program holds (not one cached in a pool). */
static int is_live(const blk *b)
{
    return b->key && !b->cached;
}

/* Slot of key, or of the empty slot where it would go. */
static size_t tab_find(const trk_ctx *c, uintptr_t key)
{
    size_t j = hash_ptr(key) & (c->cap - 1);
    while (c->tab[j].key && c->tab[j].key != key)
        j = (j + 1) & (c->cap - 1);
    return j;
}

static void tab_delete(trk_ctx *c, size_t i)
{
    size_t mask = c->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!c->tab[j].key)
            break;
        size_t home = hash_ptr(c->tab[j].key) & mask;
        /* move j back to i if its home is not cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            c->tab[i] = c->tab[j];
            i = j;
        }
    }
    c->tab[i].key = 0;
    c->used--;
}

__attribute__((noinline)) static long site_index_slow(trk_ctx *c, const char *site);

/* Index of the site entry for site, created if needed; -1 on OOM. The
 * recent[] cache answers most calls with one compare. */
static long site_index(trk_ctx *c, const char *site)
{
    if (!site)
        site = "?";
    size_t r = ((uintptr_t)site >> 3) & 63;
    if (c->recent[r].site == site)
        return c->recent[r].idx;
    long si = site_index_slow(c, site);
    if (si >= 0) {
        c->recent[r].site = site;
        c->recent[r].idx = (uint32_t)si;
    }
    return si;
}

__attribute__((noinline)) static long site_index_slow(trk_ctx *c, const char *site)
{
    uintptr_t key = (uintptr_t)site;
    if (c->cap_idx) {
        size_t j = hash_ptr(key) & (c->cap_idx - 1);
        while (c->site_idx[j]) {
            if (c->sites[c->site_idx[j] - 1].site == site)
                return (long)c->site_idx[j] - 1;
            j = (j + 1) & (c->cap_idx - 1);
        }
    }
    if (c->nsites == c->capsites) {
        size_t ncap = c->capsites ? c->capsites * 2 : 32;
        site_ent *ns = al_sys_realloc(c->sites, ncap * sizeof *ns);
        if (!ns)
            return -1;
        c->sites = ns;
        c->capsites = ncap;
    }
    if ((c->nsites + 1) * 2 > c->cap_idx) {
        size_t ncap = c->cap_idx ? c->cap_idx * 2 : 64;
        uint32_t *ni = al_sys_calloc(ncap, sizeof *ni);
        if (!ni)
            return -1;
        for (size_t i = 0; i < c->nsites; i++) {
            size_t j = hash_ptr((uintptr_t)c->sites[i].site) & (ncap - 1);
            while (ni[j])
                j = (j + 1) & (ncap - 1);
            ni[j] = (uint32_t)(i + 1);
        }
        al_sys_free(c->site_idx);
        c->site_idx = ni;
        c->cap_idx = ncap;
    }
    size_t idx = c->nsites++;
    c->sites[idx] = (site_ent){ .site = site };
    size_t j = hash_ptr(key) & (c->cap_idx - 1);
    while (c->site_idx[j])
        j = (j + 1) & (c->cap_idx - 1);
    c->site_idx[j] = (uint32_t)(idx + 1);
    return (long)idx;
}

/* Count b's block live / no longer live. Only the totals (and the peak)
 * are kept as blocks come and go; the per-kind and per-site live counts
 * are read off the table when asked (in_tracking_get, _site_get). */
static void count_live(trk_ctx *c, const blk *b)
{
    c->st.live_blocks++;
    c->st.live_bytes += b->n;
    if (c->st.live_bytes > c->st.peak_bytes)
        c->st.peak_bytes = c->st.live_bytes;
}

static void count_dead(trk_ctx *c, const blk *b)
{
    c->st.live_blocks--;
    c->st.live_bytes -= b->n;
}

/* Put a block in the table (which has room) and count it live. */
static void track_insert(trk_ctx *c, void *p, size_t n, al_kind kind, size_t si,
                         uint64_t seq)
{
    uintptr_t key = key_of(p);
    size_t j = tab_find(c, key);
    c->tab[j] = (blk){ .key = key, .n = n, .seq = seq, .site = (uint32_t)si,
                       .kind = (uint16_t)kind };
    c->used++;
    count_live(c, &c->tab[j]);
}

/* Make room for one more block; -1 when the table cannot grow. */
static int tab_reserve(trk_ctx *c)
{
    return (c->used + 1) * 2 > c->cap ? tab_grow(c) : 0;
}

/* Record a new block; -1 when out of memory. */
static int track_add(trk_ctx *c, void *p, size_t n, al_kind kind, const char *site)
{
    if (tab_reserve(c) != 0)
        return -1;
    long si = site_index(c, site);
    if (si < 0)
        return -1;
    c->st.total_allocs++;
    c->sites[si].allocs++;
    track_insert(c, p, n, kind, (size_t)si, c->st.total_allocs);
    return 0;
}

/* Forget slot j's block (its stats), returning a copy of the entry. */
static blk track_remove(trk_ctx *c, size_t j)
{
    blk b = c->tab[j];
    count_dead(c, &b);
    tab_delete(c, j);
    return b;
}

/* Count and report a free of a block the table does not hold live; -1. Out
 * of line: the hot callers stay small enough to need few registers. */
__attribute__((noinline, cold))
static long unknown_block(trk_ctx *c, const void *p, size_t n, al_kind kind, const char *op)
{
    c->st.unknown_frees++;
    fprintf(stderr, "fakegc: tracking: %s of unknown block %p (%zu bytes, kind %s):"
            " double free or a pointer from another allocator; not passed on\n",
            op, p, n, al_kind_name(kind));
    return -1;
}

/* Slot of a live block, or -1 (reported) when p is unknown. */
static inline long lookup_live(trk_ctx *c, const void *p, size_t n, al_kind kind,
                               const char *op)
{
    if (c->cap) {
        size_t j = tab_find(c, key_of(p));
        if (c->tab[j].key && !c->tab[j].cached)
            return (long)j;
    }
    return unknown_block(c, p, n, kind, op);
}

static void *trk_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    trk_ctx *c = ctx;
    void *p = c->inner->xmalloc(c->inner->ctx, n, kind, site);
    if (p && track_add(c, p, n, kind, site) != 0) {
        c->inner->xfree(c->inner->ctx, p, n, kind);
        return NULL;
    }
    return p;
}

static void trk_free(void *ctx, void *p, size_t n, al_kind kind)
{
    trk_ctx *c = ctx;
    if (!p)
        return;
    long j = lookup_live(c, p, n, kind, "free");
    if (j < 0)
        return;
    blk b = track_remove(c, (size_t)j);
    if (b.n != n)
        c->st.size_mismatches++;
    c->st.total_frees++;
    c->inner->xfree(c->inner->ctx, p, b.n, (al_kind)b.kind);
}

/* The same op for an inner wrapper (0 when the inner allocator is a base). */
static int pass_on(trk_ctx *c, al_pool_op op, void *p, size_t n, al_kind kind,
                   const char *site)
{
    al_allocator *in = c->inner;
    return in->inner ? in->xpool(in->ctx, op, p, n, kind, site) : 0;
}

/* A pool in front of the wrapper (al_allocator.xpool): a cached block
 * stays in the table, flagged, so that a put and a get are one probe each
 * and a free of a cached block is still a double free. What can fail is
 * checked before the op goes on to an inner wrapper. */
static int pool_put(trk_ctx *c, void *p, size_t n, al_kind kind)
{
    long j = lookup_live(c, p, n, kind, "free");
    if (j < 0 || pass_on(c, AL_POOL_PUT, p, n, kind, NULL) != 0)
        return -1;
    blk *b = &c->tab[j];
    if (b->n != n)
        c->st.size_mismatches++;
    count_dead(c, b);
    b->cached = 1;
    c->st.total_frees++;
    return 0;
}

/* Slot of p when it is cached in a pool, or -1. */
static long cached_slot(const trk_ctx *c, const void *p)
{
    if (!c->cap)
        return -1;
    size_t j = tab_find(c, key_of(p));
    return c->tab[j].key && c->tab[j].cached ? (long)j : -1;
}

static int pool_get(trk_ctx *c, void *p, size_t n, al_kind kind, const char *site)
{
    long si = site_index(c, site);          /* may grow the site table */
    long j = cached_slot(c, p);
    if (si < 0 || j < 0 || pass_on(c, AL_POOL_GET, p, n, kind, site) != 0)
        return -1;
    blk *b = &c->tab[j];
    b->cached = 0;
    b->site = (uint32_t)si;
    b->kind = (uint16_t)kind;
    b->n = n;
    b->seq = ++c->st.total_allocs;
    c->sites[si].allocs++;
    count_live(c, b);
    return 0;
}

static int pool_flush(trk_ctx *c, void *p, size_t n, al_kind kind)
{
    long j = cached_slot(c, p);
    if (j >= 0)
        tab_delete(c, (size_t)j);
    return pass_on(c, AL_POOL_FLUSH, p, n, kind, NULL);
}

static int trk_pool(void *ctx, al_pool_op op, void *p, size_t n, al_kind kind,
                    const char *site)
{
    return op == AL_POOL_PUT   ? pool_put(ctx, p, n, kind)
           : op == AL_POOL_GET ? pool_get(ctx, p, n, kind, site)
                               : pool_flush(ctx, p, n, kind);
}

static void *trk_realloc(void *ctx, void *p, size_t old_n, size_t n,
                         al_kind kind, const char *site)
{
    trk_ctx *c = ctx;
    if (!p)
        return trk_malloc(ctx, n, kind, site);
    long j = lookup_live(c, p, old_n, kind, "realloc");
    if (j < 0)
        return NULL;
    /* Make room first so that recording the new block cannot fail after
     * the inner realloc has moved it. */
    if (tab_reserve(c) != 0)
        return NULL;
    long si = site_index(c, site);
    if (si < 0)
        return NULL;
    j = (long)tab_find(c, key_of(p));   /* the table may have moved */
    size_t real_old = c->tab[j].n;
    if (real_old != old_n)
        c->st.size_mismatches++;
    void *q = c->inner->xrealloc(c->inner->ctx, p, real_old, n, kind, site);
    if (!q)
        return NULL;
    /* A realloc is not a new allocation: the block keeps its number and
     * now belongs to the site that resized it. */
    blk b = track_remove(c, (size_t)j);
    track_insert(c, q, n, (al_kind)b.kind, (size_t)si, b.seq);
    return q;
}

static size_t trk_size(void *ctx, const void *p)
{
    trk_ctx *c = ctx;
    return c->inner->xsize ? c->inner->xsize(c->inner->ctx, p) : 0;
}

typedef struct site_sum {
    const char *site;
    uint64_t blocks, bytes;
    unsigned kinds;             /* bit per al_kind */
} site_sum;

static int by_bytes_desc(const void *a, const void *b)
{
    const site_sum *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return strcmp(x->site, y->site);
}

static void trk_report(void *ctx, void *file)
{
    trk_ctx *c = ctx;
    FILE *f = file;
    fprintf(f, "tracking: %llu live blocks, %llu bytes (peak %llu bytes; "
            "%llu allocations, %llu frees",
            (unsigned long long)c->st.live_blocks, (unsigned long long)c->st.live_bytes,
            (unsigned long long)c->st.peak_bytes, (unsigned long long)c->st.total_allocs,
            (unsigned long long)c->st.total_frees);
    if (c->st.unknown_frees || c->st.size_mismatches)
        fprintf(f, "; %llu unknown frees, %llu size mismatches",
                (unsigned long long)c->st.unknown_frees,
                (unsigned long long)c->st.size_mismatches);
    fprintf(f, ")\n");
    if (!c->st.live_blocks)
        return;
    site_sum *sum = al_sys_calloc(c->nsites ? c->nsites : 1, sizeof *sum);
    if (!sum) {
        fprintf(f, "  (out of memory for the per-site table)\n");
        return;
    }
    size_t ns = 0;
    for (size_t i = 0; i < c->cap; i++) {
        if (!is_live(&c->tab[i]))
            continue;
        const char *site = c->sites[c->tab[i].site].site;
        size_t k = 0;
        while (k < ns && strcmp(sum[k].site, site) != 0)
            k++;
        if (k == ns)
            sum[ns++].site = site;
        sum[k].blocks++;
        sum[k].bytes += c->tab[i].n;
        sum[k].kinds |= 1u << c->tab[i].kind;
    }
    qsort(sum, ns, sizeof *sum, by_bytes_desc);
    fprintf(f, "  %-32s %10s %12s  %s\n", "site", "blocks", "bytes", "kinds");
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "  %-32s %10llu %12llu  ", sum[k].site,
                (unsigned long long)sum[k].blocks, (unsigned long long)sum[k].bytes);
        const char *sep = "";
        for (unsigned kd = 0; kd < AL_K_COUNT; kd++)
            if (sum[k].kinds & (1u << kd)) {
                fprintf(f, "%s%s", sep, al_kind_name((al_kind)kd));
                sep = ",";
            }
        fprintf(f, "\n");
    }
    al_sys_free(sum);
}

static void trk_destroy(al_allocator *self)
{
    trk_ctx *c = self->ctx;
    al_sys_free(c->tab);
    al_sys_free(c->sites);
    al_sys_free(c->site_idx);
    al_sys_free(c);
    al_obj_free(self);
}

static const al_allocator trk_methods = {
    .xmalloc = trk_malloc, .xfree = trk_free, .xrealloc = trk_realloc, .xsize = trk_size,
    .xreport = trk_report, .xdestroy = trk_destroy, .xpool = trk_pool};

al_allocator *in_tracking_new(al_allocator *inner)
{
    trk_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->inner = inner;
    return al_wrap_new("tracking", inner, c, &trk_methods);
}

al_allocator *in_tracking_of(al_allocator *a)
{
    for (; a; a = a->inner)
        if (a->xmalloc == trk_malloc)
            return a;
    return NULL;
}

int in_tracking_get(al_allocator *a, in_tracking_stats *out)
{
    a = in_tracking_of(a);
    if (!a)
        return -1;
    trk_ctx *c = a->ctx;
    *out = c->st;
    memset(out->kind_blocks, 0, sizeof out->kind_blocks);
    memset(out->kind_bytes, 0, sizeof out->kind_bytes);
    for (size_t i = 0; i < c->cap; i++)
        if (is_live(&c->tab[i])) {
            out->kind_blocks[c->tab[i].kind]++;
            out->kind_bytes[c->tab[i].kind] += c->tab[i].n;
        }
    return 0;
}

int in_tracking_site_get(al_allocator *a, const char *site, in_tracking_site *out)
{
    memset(out, 0, sizeof *out);
    a = in_tracking_of(a);
    if (!a)
        return -1;
    trk_ctx *c = a->ctx;
    for (size_t i = 0; i < c->nsites; i++)
        if (strcmp(c->sites[i].site, site) == 0)
            out->allocs += c->sites[i].allocs;
    for (size_t i = 0; i < c->cap; i++)
        if (is_live(&c->tab[i]) && strcmp(c->sites[c->tab[i].site].site, site) == 0) {
            out->live_blocks++;
            out->live_bytes += c->tab[i].n;
        }
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    const in_tracking_block *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t in_tracking_live(al_allocator *a, in_tracking_block *out, size_t max)
{
    a = in_tracking_of(a);
    if (!a)
        return 0;
    trk_ctx *c = a->ctx;
    if (max >= c->st.live_blocks) {
        size_t k = 0;
        for (size_t i = 0; i < c->cap; i++) {
            if (!is_live(&c->tab[i]))
                continue;
            out[k++] = (in_tracking_block){
                .p = (const void *)(c->tab[i].key ^ DISGUISE), .n = c->tab[i].n,
                .kind = (al_kind)c->tab[i].kind,
                .site = c->sites[c->tab[i].site].site, .seq = c->tab[i].seq };
        }
        if (k > 1)
            qsort(out, k, sizeof *out, by_seq);
    } else if (max > 0) {
        /* Keep the max oldest: repeated selection, fine for small max. */
        uint64_t after = 0;
        for (size_t k = 0; k < max; k++) {
            size_t best = c->cap;
            for (size_t i = 0; i < c->cap; i++)
                if (is_live(&c->tab[i]) && c->tab[i].seq > after &&
                    (best == c->cap || c->tab[i].seq < c->tab[best].seq))
                    best = i;
            out[k] = (in_tracking_block){
                .p = (const void *)(c->tab[best].key ^ DISGUISE), .n = c->tab[best].n,
                .kind = (al_kind)c->tab[best].kind,
                .site = c->sites[c->tab[best].site].site, .seq = c->tab[best].seq };
            after = c->tab[best].seq;
        }
    }
    return c->st.live_blocks;
}
