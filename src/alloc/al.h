/* al.h - the allocator interface: one table, chosen at run time.
 *
 * Every allocation in fakegc goes through al_malloc/al_free/al_realloc with a
 * kind tag and the size. The front functions keep always-on counters (live
 * blocks and bytes, per kind, peak) so that heap_bytes() and the end-of-run
 * "nothing live" check cost nothing extra; wrappers add more (per-site
 * tracking, guard zones, fault injection).
 *
 *   al_allocator *a;                      // as_create: allocspec/as.h
 *   if (as_create("tracking/jemalloc", &a, err, sizeof err) != 0) usage(err);
 *   al_install(a);            // the process-wide allocator from now on
 *   void *p = al_malloc(64, AL_K_STORAGE, "ts_storage_new");
 *   al_free(p, 64, AL_K_STORAGE);
 *   al_install(NULL); al_destroy(a);
 *
 * Contract of the table (modelled on SQLite's sqlite3_mem_methods and Lua's
 * lua_Alloc): xmalloc returns NULL on failure and never aborts; xfree gets
 * the exact size the block was allocated with (callers always know it);
 * xrealloc with a NULL block is xmalloc, returns NULL on failure leaving the
 * old block valid. A pointer is only ever freed by the allocator that made it.
 */
#ifndef FAKEGC_AL_H
#define FAKEGC_AL_H

#include <stddef.h>
#include <stdint.h>

typedef enum al_kind {
    AL_K_STORAGE = 0,   /* tensor data bytes */
    AL_K_OBJECT,        /* object headers and bodies (tensor, storage, ...) */
    AL_K_MEMO,          /* weak-table buckets and entries */
    AL_K_ATTR,          /* user attribute arrays */
    AL_K_SCENARIO,      /* AST, interpreter values, source text */
    AL_K_HEAP,          /* heap analysis scratch (census, paths, dominators) */
    AL_K_REPORT,        /* report buffers */
    AL_K_OTHER,
    AL_K_COUNT
} al_kind;

const char *al_kind_name(al_kind k);

typedef struct al_stats {
    uint64_t live_blocks, live_bytes, peak_bytes;
    uint64_t total_allocs, total_frees, failed_allocs;
    uint64_t kind_blocks[AL_K_COUNT], kind_bytes[AL_K_COUNT];
    uint64_t total_reallocs;  /* successful al_realloc of a live block */
} al_stats;

/* What al_allocator.xpool is told about a pool block (see al_pool). */
typedef enum al_pool_op {
    AL_POOL_PUT,     /* the live block p enters a pool: to the wrapper it is
                        freed, its memory stays in the pool; -1 if p is not
                        a live block (then it is neither cached nor passed on) */
    AL_POOL_GET,     /* p leaves the pool, allocated again from site; -1 when
                        the wrapper cannot record it (the get fails, p stays
                        cached) */
    AL_POOL_FLUSH    /* p, cached, is about to be freed to the base allocator
                        of the chain, past the wrappers; 0 */
} al_pool_op;

typedef struct al_allocator al_allocator;
struct al_allocator {
    const char *name;     /* "libc", "tracking/jemalloc", ... */
    void *ctx;
    void *(*xmalloc)(void *ctx, size_t n, al_kind kind, const char *site);
    void (*xfree)(void *ctx, void *p, size_t n, al_kind kind);
    void *(*xrealloc)(void *ctx, void *p, size_t old_n, size_t n, al_kind kind,
                      const char *site);
    size_t (*xsize)(void *ctx, const void *p);  /* usable size */
    /* Wrapper-specific report (tracking: per-site table; guard: findings);
     * may be NULL. Writes human-readable text to the FILE* given as void*. */
    void (*xreport)(void *ctx, void *file);
    void (*xdestroy)(al_allocator *self);       /* frees self and ctx */
    al_allocator *inner;  /* the wrapped allocator, NULL for a base one */
    /* Bytes the allocator holds from the system (its own footprint, not
     * what was asked of it); NULL: ask the inner one. */
    uint64_t (*xfootprint)(void *ctx);
    /* Pools in front of a wrapper: NULL keeps the pools off while this
     * wrapper is in the chain (guard, fail: they see every block as its own
     * allocation); a wrapper that has it passes each op on to an inner
     * wrapper. Base allocators leave it NULL and never see it called. */
    int (*xpool)(void *ctx, al_pool_op op, void *p, size_t n, al_kind kind,
                 const char *site);
};

/* Destroys a and its inner allocators (blocks still live in them are leaked,
 * and stay visible to Valgrind as such). Destroying the installed allocator
 * installs plain libc first. */
void al_destroy(al_allocator *a);
/* Allocators are built from a spec string ("tracking/arena") by
 * src/allocspec (as_create), the layer above this one and instrument/.
 * New allocators and wrappers are written against alloc/al_wrap.h. */

/* Install the process-wide allocator (NULL: back to plain libc). Zeroes the
 * front counters (they are per install: al_stats_get reads them) and
 * disables al_fail_at; the allocator itself is untouched (a wrapper's own
 * counts go on). Install only while no block is live: a block is freed by
 * the allocator current at al_free, and must be freed by the one that made
 * it. */
void al_install(al_allocator *a);
/* The allocator in use; never NULL (a static libc one when none is
 * installed; al_destroy leaves that one alone). */
al_allocator *al_current(void);

/* Sizes: n == 0 is allowed (a unique block; free it with n == 0). site is a
 * string with static lifetime (a literal: wrappers keep the pointer).
 * al_realloc(NULL, 0, n) is al_malloc; al_realloc(p, old, 0) frees p and
 * returns NULL; on failure it returns NULL and p stays valid with old_n. */
void *al_malloc(size_t n, al_kind kind, const char *site);
void *al_calloc(size_t count, size_t n, al_kind kind, const char *site); /* overflow -> NULL */
void al_free(void *p, size_t n, al_kind kind);          /* p may be NULL */
void *al_realloc(void *p, size_t old_n, size_t n, al_kind kind, const char *site);
char *al_strdup(const char *s, al_kind kind, const char *site); /* free with strlen+1 */
/* Room for element n of the array at *(T **)pv, elem bytes each, *cap of
 * them: when n == *cap, al_realloc to twice as many (first when 0).
 *   if (al_grow(&v->p, &v->cap, v->n, sizeof *v->p, 64, AL_K_REPORT, "x") < 0) ...
 * 0, or -1 when out of memory (the array and *cap as they were). */
int al_grow(void *pv, size_t *cap, size_t n, size_t elem, size_t first, al_kind kind,
            const char *site);
/* Room for need elements in the array at *(T **)pv: when need > *cap, to
 * the first of *cap (first when 0) doubled that holds them. al_grow(n) is
 * al_reserve(n + 1).
 *   if (al_reserve(&b->p, &b->cap, b->len + n + 1, 1, 64, AL_K_REPORT, "x") < 0) ...
 * 0, or -1 when out of memory (the array and *cap as they were). */
int al_reserve_grow(void *pv, size_t *cap, size_t need, size_t elem, size_t first,
                    al_kind kind, const char *site);   /* al_reserve past its test */
static inline int al_reserve(void *pv, size_t *cap, size_t need, size_t elem, size_t first,
                             al_kind kind, const char *site)
{
    return need <= *cap ? 0 : al_reserve_grow(pv, cap, need, elem, first, kind, site);
}

/* Pools: a free list of same-sized blocks in front of the allocator, for
 * records made and dropped by the thousand (finalizers, memo entries).
 *
 *   static al_pool fin_pool = AL_POOL_INIT(sizeof(fin), AL_K_OBJECT);
 *   fin *f = al_pool_get(&fin_pool, "fin_attach");   // NULL on failure
 *   al_pool_put(&fin_pool, f);
 *
 * Every observable is that of al_malloc/al_free of pool->size bytes: the
 * front counters, the fault-injection attempt (a get is one), the kind.
 * Only the allocator below sees fewer calls. All pools together cache at
 * most AL_POOL_BYTES (al_pool_cached_bytes): enough for a memo of 1M
 * entries, emptied at once, to refill from its pool and not from glibc's
 * bins, and little enough that a teardown of millions of objects leaves few
 * cold blocks for the flush; a put past the budget is an al_free. al_install
 * (and so al_destroy of the installed allocator) first gives every cached
 * block back to the allocator that made it. Under wrappers that have
 * xpool (tracking) a put frees the block to them and a get allocates it
 * again, so they still see every block; pools are bypassed (get is
 * al_malloc, put is al_free) when a wrapper in the chain has no xpool
 * (guard, fail) and under Valgrind or ASan (each block stays a block of its
 * own to the checker). The contents of a block from get are undefined. */
typedef struct al_pool {
    size_t size;
    al_kind kind;
    void *head;                 /* cached blocks, linked through their first word */
    uint32_t n;
    int listed;                 /* on the front's list of pools to flush */
    struct al_pool *next;
} al_pool;
#define AL_POOL_INIT(sz, k) { (sz), (k), NULL, 0, 0, NULL }
#define AL_POOL_BYTES ((size_t)32 << 20)
size_t al_pool_cached_bytes(void);           /* what all pools hold now */
void *al_pool_get(al_pool *pool, const char *site);
void al_pool_put(al_pool *pool, void *p);     /* p may be NULL */
/* Give every cached block back (al_install does it). */
void al_pool_flush_all(void);

/* Front counters since the last al_install. */
void al_stats_get(al_stats *out);
/* The installed allocator's own footprint, so that allocators can be
 * compared by memory (the front counters count requested bytes, the same
 * for every allocator): libc - glibc's mallinfo2() arena + hblkhd (the
 * whole process's glibc heap); jemalloc - its stats.resident; arena - its
 * slabs (64 KiB each). Wrappers report their inner allocator's. */
uint64_t al_footprint(void);
uint64_t al_live_bytes(void);
uint64_t al_live_bytes_kind(al_kind k);
uint64_t al_live_blocks(void);
/* Usable size of a live block of the current allocator (>= its size); 0 when
 * the allocator cannot tell. */
size_t al_usable_size(const void *p);

/* Fault injection, usable without the fail: wrapper (the oom loop uses it):
 * fail allocation number n (1-based, counted from this call) and, if
 * persistent, every one after it. n == 0 disables. An attempt is every
 * al_malloc, al_calloc, al_strdup and every al_realloc that grows a block
 * (a shrink is never failed on purpose). An injected failure returns NULL without
 * reaching the allocator and counts in failed_allocs.
 *
 *   for (uint64_t k = 1;; k++) {           // the oom loop
 *       al_install(a); al_fail_at(k, 0);
 *       int rc = run();                    // must fail cleanly or pass
 *       check(al_live_blocks() == 0);
 *       if (al_alloc_count() < k) break;   // no allocation was failed
 *   }
 */
void al_fail_at(uint64_t n, int persistent);
uint64_t al_alloc_count(void);     /* allocations attempted since install */

/* Call fn(arg, kind, site) for every attempt al_alloc_count counts, in
 * order, before fault injection decides it (the OOM loop's context map,
 * st_oom.c). fn must not allocate through al_. NULL stops it. */
typedef void (*al_trace_fn)(void *arg, al_kind kind, const char *site);
void al_trace(al_trace_fn fn, void *arg);

/* The model's allocation kinds (the core, tensor and fake layers: storage,
 * object, memo, attr), which `fail:N` counts by default, as opposed to
 * fakegc's own (scenario, heap, report, other). */
int al_kind_is_model(al_kind k);

/* jemalloc's stats.allocated (bytes the whole process holds from jemalloc,
 * all arenas), read after an epoch bump; 0 if stats are unavailable. */
uint64_t al_jemalloc_allocated(void);

/* The arena allocator's size class for a request of n bytes (n == 0 is
 * treated as 1), or 0 when n is above the largest class (4096) and the
 * arena passes it to glibc. */
size_t al_arena_class_size(size_t n);

#endif
