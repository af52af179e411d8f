/* in_tracking.h - the tracking wrapper: knows every live block.
 *
 *   al_allocator *a;
 *   as_create("tracking/arena", &a, err, sizeof err);
 *   al_install(a);
 *   ... run ...
 *   in_tracking_stats st;
 *   in_tracking_get(a, &st);              // live, peak, per kind
 *   in_tracking_site sc;
 *   in_tracking_site_get(a, "ts_storage_new", &sc);   // per site
 *   a->xreport(a->ctx, stderr);           // live blocks grouped by site
 *
 * It keeps a hash table of live blocks (pointer -> size, kind, site) and a
 * table of sites, and counts only the totals as blocks come and go:
 * in_tracking_get and in_tracking_site_get walk the block table for the
 * per-kind and per-site live counts, so they cost O(live blocks). Blocks
 * cached in a pool in front of it (al_pool) are freed blocks to it. It changes nothing the program sees, except that a free of
 * a pointer it does not know (a double free, or a pointer from another
 * allocator) is not passed on: it is counted and reported on stderr as
 * `fakegc: tracking: free of unknown block ...`. A free with a size other
 * than the allocated one is counted (size_mismatches) and the block freed
 * with its real size. Pointers are stored disguised, so under Valgrind a
 * block leaked by the program is still reported as lost, not as reachable
 * through this table. Its own tables use glibc directly, not the front.
 */
#ifndef FAKEGC_IN_TRACKING_H
#define FAKEGC_IN_TRACKING_H

#include "alloc/al.h"

typedef struct in_tracking_stats {
    uint64_t live_blocks, live_bytes, peak_bytes;
    uint64_t total_allocs, total_frees;
    uint64_t kind_blocks[AL_K_COUNT], kind_bytes[AL_K_COUNT];
    uint64_t unknown_frees, size_mismatches;
} in_tracking_stats;

typedef struct in_tracking_site {
    uint64_t allocs;                 /* allocations ever made from the site */
    uint64_t live_blocks, live_bytes;
} in_tracking_site;

typedef struct in_tracking_block {
    const void *p;
    size_t n;
    al_kind kind;
    const char *site;
    uint64_t seq;                    /* 1-based allocation number */
} in_tracking_block;

/* Wrap inner; NULL when out of memory (inner untouched). */
al_allocator *in_tracking_new(al_allocator *inner);

/* The tracking layer of a chain (a itself or one of its inner ones), or
 * NULL when there is none. The functions below accept any chain. */
al_allocator *in_tracking_of(al_allocator *a);

/* 0, or -1 when the chain has no tracking layer. */
int in_tracking_get(al_allocator *a, in_tracking_stats *out);

/* Counts for a site, matched by string content; -1 when the chain has no
 * tracking layer, 0 otherwise (all zero for a site never seen). */
int in_tracking_site_get(al_allocator *a, const char *site, in_tracking_site *out);

/* Copy up to max live blocks, oldest first, into out; returns how many are
 * live (may exceed max). */
size_t in_tracking_live(al_allocator *a, in_tracking_block *out, size_t max);

#endif
