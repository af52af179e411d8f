/* gc.h - the cycle collector, in CPython's phases (Python/gc.c):
 *
 *  1. copy counts: gc_refs = strong for every live object;
 *  2. subtract internal references: for every edge a->b, b.gc_refs--;
 *  3. move unreachable: objects with gc_refs > 0 are reachable from outside
 *     (scenario variables, C locals); everything they reach is reachable;
 *     the rest is garbage;
 *  4. weak references: callbacks registered on garbage whose owner is also
 *     garbage are unregistered without running; the others stay and run when
 *     the garbage dies (as CPython runs callbacks only for weakrefs that
 *     survive);
 *  5. clear: hold every garbage object, call its type's release (dropping its
 *     references), then drop the holds, so the garbage dies by ordinary
 *     refcounting. Every garbage object reads as expired before the first
 *     callback runs; garbage dies in creation order.
 * (Phases 1+2, and 4+5, run as fused passes when debug is off; the hold of
 * phase 5 is taken as phase 3 moves an object out. Same result, fewer
 * passes over the heap.)
 * Between phases, with gc_set_debug(1), the collector validates its lists.
 *
 * Cost: O(live objects + edges); no heap allocation (the lists reuse the
 * registry links; the passes after the first run over an mmap'ed scratch
 * array of the live objects with prefetching, 8 bytes per live object, kept
 * between collections).
 */
#ifndef FAKEGC_GC_H
#define FAKEGC_GC_H

#include <stddef.h>
#include <stdint.h>

struct obj;

typedef struct gc_stats {
    uint64_t collections;
    uint64_t collected;       /* objects that died in the last collection */
    uint64_t examined;        /* live objects examined by the last one */
    uint64_t total_collected;
    uint64_t garbage;         /* objects found unreachable by the last one */
    uint64_t resurrected;     /* garbage still referenced after clear (a
                                 traverse that under-reports); total */
    uint64_t debug_failures;  /* collections abandoned by debug validation,
                                 or on a broken live list */
} gc_stats;

/* Full collection. Returns the number of objects that died because of it
 * (garbage, and anything the callbacks run by its deaths dropped); zombies
 * (a dead garbage object whose header a weak holder keeps) count as died.
 * Returns 0 without collecting when called from inside a death or callback.
 * With debug on, a broken invariant abandons the collection before anything
 * is released: 0, ER_INTERNAL set, debug_failures + 1. So does, in either
 * mode, a live list whose links do not reach its count of objects. */
uint64_t gc_collect(void);
/* Generations (CPython's three, Python/gc.c gc_collect_main(generation)):
 * an object is made in generation 0; one that survives a collection of
 * generation g (or older) moves to min(g + 1, 2). gc_collect_gen(g)
 * examines generations 0..g only: the objects of older generations are
 * not collected, and what they reference is reachable from outside (they
 * are held as roots through the collection). g >= 2 is gc_collect(). The
 * bookkeeping is two id watermarks (ids are issued in creation order), so
 * a full collection costs nothing more; a young one takes one extra pass
 * over the live objects and a block of pointers to the old ones (ER_OOM,
 * 0 and nothing collected, when it cannot be had). */
uint64_t gc_collect_gen(int generation);
/* o's generation now (0, 1 or 2). */
int gc_generation(const struct obj *o);
/* Forget the watermarks: every live object is young again (between
 * scenarios). */
void gc_generations_reset(void);
void gc_stats_get(gc_stats *out);
void gc_set_debug(int on);

/* Automatic mode (CPython's threshold 700): gc_note_alloc is called by
 * obj_new; when allocations minus deaths since the last collection exceed
 * the threshold and auto mode is on, the next gc_maybe_collect() collects. */
void gc_set_auto(int on, uint64_t threshold);
int gc_get_debug(void);
uint64_t gc_maybe_collect(void);   /* returns objects freed (0 if none) */
void gc_note_alloc(void);
void gc_note_death(void);
/* The collector's array of n object pointers (scratch memory: no heap
 * block), for a caller's own pass between collections; its contents are
 * unspecified and a collection overwrites them. NULL when it cannot be had. */
void **gc_scratch_array(size_t n);

/* References the collector cannot see (obj_type.gc_hidden: a tensor's base
 * held from C++): 1 when the live object target is reached by strong edges
 * (every edge, as reports see them) from an object such a reference holds,
 * that object included - the collector keeps it for as long as the hidden
 * reference's holder lives, whatever else holds it; 0 when not (or from
 * inside a collection); -1 with ER_OOM when the collector's scratch array
 * cannot be had. O(live objects + edges); the scratch array is overwritten. */
int gc_hidden_holds(const struct obj *target);

#endif
