/* scr.h - scratch memory outside the heap.
 *
 * A scratch area is mmap'ed, page-rounded and kept between uses (it only
 * grows, by doubling). It is not a heap block: no allocator counter,
 * fault-injection attempt or memory checker sees it, so using it changes
 * no observable of the model ("no allocation" stays true of the heap).
 *
 *   static scr s;
 *   obj **v = scr_reserve(&s, n * sizeof *v);   // NULL: take a path
 *                                               // that needs none
 * Contents are unspecified after a reserve that grows (not copied), zero
 * the first time a page is touched. Single-threaded, like the core.
 *
 * A mapping of SCR_HUGE bytes or more is advised MADV_HUGEPAGE before
 * anything touches it (advice only; Debian's transparent huge pages are
 * `madvise`): such areas are the collector's object array and the big
 * tables' sort scratch, written in full at their first use, and with
 * 4 KiB pages that first use paid a page fault per 4 KiB (the first
 * collection of 1M objects, 8 MB of array: 62 ns per object against 43
 * with huge pages, medians on a KVM guest).
 */
#ifndef FAKEGC_SCR_H
#define FAKEGC_SCR_H

#include <stddef.h>

enum { SCR_HUGE = 4 << 20 };

typedef struct scr {
    void *p;
    size_t bytes;     /* mapped */
} scr;

/* At least `bytes` of scratch, or NULL when the mapping fails. */
void *scr_reserve(scr *s, size_t bytes);
/* Unmap s (no-op when empty); s is then empty, as a zeroed scr. A table
 * that must keep its contents when it grows reserves a second scr, copies,
 * and releases the first. */
void scr_release(scr *s);

#endif
