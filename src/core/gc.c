/* gc.c - the cycle collector (CPython's Python/gc.c phases).
 *
 * No heap allocation: the rescued list (and, on the debug path, the
 * unreachable list) borrows the registry links, gc_refs lives in the
 * header, and OBJ_F_GC_MARK marks the objects the collector has taken off
 * the live list. The only memory of its own is an mmap'ed array of object
 * pointers the passes after the first run over (see "the object array");
 * on that path the garbage is in the array alone, on no list, and phase 3
 * rebuilds the live list from the survivors.
 *
 * Passes over the heap (the cost is memory traffic, so passes are what
 * count): subtract (phases 1+2: gc_refs initialised on first touch), move
 * unreachable (phase 3, also taking the phase-5 hold), release (phases 4+5,
 * and the deaths of the objects whose holders are all released: see
 * release_and_drop), drop (the other deaths). With debug on, phases 1 and 4
 * run as their own passes so each phase can be validated, and every death
 * waits for the drop pass.
 *
 * Phase 3 scans the live list from its tail (newest first). Objects usually
 * point at older ones (a tensor is made after its storage), so a reachable
 * object is usually scanned before the objects it reaches, and those are
 * marked reachable before the scan gets to them: few objects are moved out
 * tentatively and then rescued. Rescued objects wait on their own list and
 * are merged back by id, so the live list keeps creation order.
 */
#include "gc.h"

#include <stddef.h>

#include "er.h"
#include "obj.h"
#include "obj_int.h"
#include "scr.h"
#include "alloc/al.h"

static gc_stats stats;
static int debug_on;
static int auto_on;
static uint64_t auto_threshold = 700;
static uint64_t allocs_since, deaths_since;
static int collecting;

void gc_stats_get(gc_stats *out) { *out = stats; }
void gc_set_debug(int on) { debug_on = on; }
int gc_get_debug(void) { return debug_on; }

void gc_set_auto(int on, uint64_t threshold)
{
    auto_on = on;
    auto_threshold = threshold;
}

void gc_note_alloc(void) { allocs_since++; }
void gc_note_death(void) { deaths_since++; }

uint64_t gc_maybe_collect(void)
{
    if (auto_on && allocs_since > deaths_since &&
        allocs_since - deaths_since > auto_threshold)
        return gc_collect();
    return 0;
}

/* --- the object array ------------------------------------------------------
 *
 * Each pass is a walk of a linked list, and a list walk is a chain of
 * dependent loads: when the list order is not the address order (glibc
 * hands reused memory back in a scrambled order: its tcache refills reverse
 * runs of 7 chunks, and every round scrambles further) each object costs a
 * cache miss the hardware cannot prefetch. So the first pass also writes
 * the live objects into an array, and the later passes run over the array
 * with a software prefetch PREFETCH objects ahead: misses overlap, and the
 * cost per object no longer depends on where the allocator put it.
 *
 * The array is mmap'ed scratch, kept between collections: not a heap
 * block, so no allocator counter, fault-injection attempt or memory
 * checker sees it, and "no allocation" stays true of the heap. When it
 * cannot be had the collector runs the list passes (the debug path). */
enum { PREFETCH = 12 };

/* How many ids newer than an object its holders may be for it to die in
 * the release pass (release_and_drop), and the flags that say so. */
enum { DROP_NEAR = 64 };
#define GC_HOLDER_FLAGS (OBJ_F_GC_LATE | OBJ_F_GC_FAR)

static scr arr_scr;

/* Room for n pointers, or NULL. */
static obj **arr_reserve(size_t n)
{
    return scr_reserve(&arr_scr, n * sizeof(obj *));
}

void **gc_scratch_array(size_t n) { return collecting ? NULL : (void **)arr_reserve(n); }

/* --- phases ------------------------------------------------------------- */

/* gc_refs starts at the strong count. The header keeps it in 32 bits: a
 * count past INT32_MAX (2^31 references, 16 GB of pointers) is held at
 * INT32_MAX, and such an object is only ever kept alive wrongly, never
 * collected wrongly, unless 2^31 of its references are internal. */
static int32_t start_refs(const obj *o)
{
    return o->strong > INT32_MAX ? INT32_MAX : (int32_t)o->strong;
}

/* Phase 1 as its own pass (debug mode only, so it can be validated). */
static void update_refs(obj_list *live)
{
    for (obj *o = live->head; o; o = o->next) {
        o->gc_refs = start_refs(o);
        o->flags |= OBJ_F_GC_REFS;
    }
}

static void init_refs(obj *o)
{
    if (!(o->flags & OBJ_F_GC_REFS)) {
        o->gc_refs = start_refs(o);
        o->flags |= OBJ_F_GC_REFS;
    }
}

/* arg is the parent. A child held by a newer object is flagged: phase 5
 * may drop an object as soon as it is released only when no newer object
 * (released after it) holds it, or when every newer holder is less than
 * DROP_NEAR ids newer and so released by the time the release has gone
 * that far (see release_and_drop). */
static void visit_decref(obj *child, const char *label, long index, void *arg)
{
    (void)label, (void)index;
    if (!child)
        return;
    if (child->strong == 0 || (child->flags & OBJ_F_DEAD))
        obj_report_dead_use(child, "a reference to (seen by the collector)");
    init_refs(child);
    child->gc_refs--;
    uint64_t parent = ((const obj *)arg)->id;
    if (parent > child->id)
        child->flags |= parent - child->id < DROP_NEAR ? OBJ_F_GC_LATE
                                                       : OBJ_F_GC_LATE | OBJ_F_GC_FAR;
}

static void subtract_one(obj *o)
{
    init_refs(o);
    obj_gc_traverse(o, visit_decref, o);
}

static void subtract_at(obj *o, size_t i, void *v)
{
    ((obj **)v)[i] = o;
    subtract_one(o);
}

/* Phase 2, and phase 1 folded in: an object's gc_refs is initialised the
 * first time the pass meets it, as itself or as a child (OBJ_F_GC_REFS says
 * it was; phase 3 clears the flag). One pass over the heap instead of two.
 * With the array v, the list is walked from both ends at once
 * (obj_walk_both; v still gets it in list order): the counts and flags do
 * not depend on the order. -1 when the list is not live->n long (a broken
 * registry): v is then not the heap, and the collection must not go on. */
static int subtract_refs(obj_list *live, obj **v)
{
    if (v)
        return obj_walk_both(live->head, live->tail, (size_t)live->n, subtract_at, v);
    for (obj *o = live->head; o; o = o->next)
        subtract_one(o);
    return 0;
}

typedef struct scan_ctx {
    obj_list *unreachable;
    obj_list *rescued;
} scan_ctx;

/* Which path this collection takes: on the array path the garbage is on
 * no list (it is in the array) and the unreachable list is only its count;
 * on the list path (debug) the garbage is linked on it. */
static int garbage_listed;

/* o leaves the tentatively unreachable. */
static void leave_unreachable(obj_list *unreachable, obj *o)
{
    if (garbage_listed)
        obj_int_list_unlink(unreachable, o);
    else
        unreachable->n--;
}

/* child is reachable from a reachable object. */
static void visit_reachable(obj *child, const char *label, long index, void *arg)
{
    (void)label, (void)index;
    scan_ctx *c = arg;
    if (!child)
        return;
    if (child->flags & OBJ_F_GC_MARK) {          /* tentatively unreachable */
        leave_unreachable(c->unreachable, child);
        child->flags &= ~(uint32_t)(OBJ_F_GC_MARK | GC_HOLDER_FLAGS);
        child->strong--;                         /* give back the hold */
        child->gc_refs = 1;
        obj_int_list_append(c->rescued, child);  /* scanned later */
    } else if (child->gc_refs <= 0) {
        child->gc_refs = 1;                      /* not scanned yet */
    }
}

/* Bottom-up merge sort of a NULL-terminated list by id (prev links are
 * rebuilt by the caller). */
static obj *sort_by_id(obj *head)
{
    if (!head)
        return NULL;
    for (size_t width = 1;; width *= 2) {
        obj *p = head, *tail = NULL;
        head = NULL;
        size_t merges = 0;
        while (p) {
            merges++;
            obj *q = p;
            size_t psize = 0;
            for (size_t i = 0; i < width && q; i++) {
                psize++;
                q = q->next;
            }
            size_t qsize = width;
            while (psize > 0 || (qsize > 0 && q)) {
                obj *e;
                if (psize == 0) {
                    e = q, q = q->next, qsize--;
                } else if (qsize == 0 || !q || p->id <= q->id) {
                    e = p, p = p->next, psize--;
                } else {
                    e = q, q = q->next, qsize--;
                }
                if (tail)
                    tail->next = e;
                else
                    head = e;
                tail = e;
            }
            p = q;
        }
        tail->next = NULL;
        if (merges <= 1)
            return head;
    }
}

/* Merge `add` (any order) into `live` (sorted by id). */
static void merge_back(obj_list *live, obj_list *add)
{
    if (!add->head)
        return;
    obj *q = sort_by_id(add->head);
    *add = (obj_list){0};
    obj *p = live->head;
    while (q) {
        obj *nq = q->next;
        while (p && p->id < q->id)
            p = p->next;
        q->next = p;
        q->prev = p ? p->prev : live->tail;
        if (q->prev)
            q->prev->next = q;
        else
            live->head = q;
        if (p)
            p->prev = q;
        else
            live->tail = q;
        live->n++;
        q = nq;
    }
}

/* Phase 3 for one object: 1 when it is reachable (and its children are
 * then reachable too), 0 when it is tentatively unreachable, and held
 * (strong + 1: the first step of phase 5, done here to save a pass); a
 * rescue gives the hold back. Every object is visited once, which is where
 * OBJ_F_GC_REFS is cleared. */
static int scan_one(obj *o, scan_ctx *c)
{
    if (o->gc_refs > 0) {
        o->flags &= ~(uint32_t)(OBJ_F_GC_REFS | GC_HOLDER_FLAGS);
        obj_gc_traverse(o, visit_reachable, c);
        return 1;
    }
    o->flags = (o->flags & ~(uint32_t)OBJ_F_GC_REFS) | OBJ_F_GC_MARK;
    o->strong++;
    return 0;
}

/* Phase 3 over the array v of the n live objects (list order), from the
 * end. The live list is rebuilt from the reachable ones as the scan goes
 * (each put in front), so the garbage's links are never written; it is
 * packed into v's tail in creation order (*first: the oldest) and is on no
 * list. Rescued ones stay there unmarked; the later passes skip them. */
static void scan_array(obj_list *live, obj **v, size_t n, scan_ctx *c, size_t *first)
{
    obj_list kept = {0};
    size_t w = n;
    for (size_t i = n; i-- > 0;) {
        if (i >= PREFETCH)
            __builtin_prefetch(v[i - PREFETCH], 1);
        obj *o = v[i];
        if (scan_one(o, c)) {
            o->prev = NULL;
            o->next = kept.head;
            *(kept.head ? &kept.head->prev : &kept.tail) = o;
            kept.head = o;
            kept.n++;
        } else {
            c->unreachable->n++;
            v[--w] = o;                /* w > i until written: read already */
        }
    }
    *live = kept;
    *first = w;
}

/* Without the array (debug): the same scan over the live list, the garbage
 * moved to the unreachable list. */
static void scan_list(obj_list *live, scan_ctx *c)
{
    obj *o = live->tail;
    while (o) {
        obj *prev = o->prev;
        if (!scan_one(o, c)) {
            obj_int_list_unlink(live, o);
            obj_int_list_append(c->unreachable, o);
        }
        o = prev;
    }
}

static void move_unreachable(obj_list *live, obj_list *unreachable, obj **v, size_t n,
                             size_t *first)
{
    obj_list rescued = {0};
    scan_ctx c = {unreachable, &rescued};
    if (v)
        scan_array(live, v, n, &c, first);
    else
        scan_list(live, &c);
    for (obj *o = rescued.head; o; o = o->next)     /* grows while we walk it */
        obj_gc_traverse(o, visit_reachable, &c);
    merge_back(live, &rescued);
}

static int owner_is_garbage(const obj_cb *cb)
{
    return cb->owner && (cb->owner->flags & OBJ_F_GC_MARK);
}

/* Phase 4 for one garbage object: callbacks whose owner is garbage too
 * never run (CPython runs a weakref's callback only when the weakref
 * survives). */
static void handle_weakrefs_of(obj *o)
{
    obj_cb *cb = o->callbacks;
    if (!cb)
        return;
    size_t n = 0;
    do {
        n++;
        cb = cb->next;
    } while (cb != o->callbacks);
    for (size_t i = 0; i < n; i++) {
        obj_cb *next = cb->next;
        if (owner_is_garbage(cb))
            obj_cb_unregister(cb);
        cb = next;
    }
}

static void handle_weakrefs(obj_list *unreachable)
{
    for (obj *o = unreachable->head; o; o = o->next)
        handle_weakrefs_of(o);
}

/* Phase 5. Every garbage object is already held (phase 3). Release each,
 * in creation order, breaking the cycles (with phase 4 folded in when it
 * did not run as its own pass); then the garbage dies. The whole phase is
 * one drain scope: objects without callbacks die quietly in the drop pass
 * (nothing can observe the order), the others are queued and drained at
 * the end, when every garbage object CPython's collector tracks reads as
 * expired (strong 0): CPython clears the weakrefs to its garbage before it
 * runs their callbacks (handle_weakrefs, Python/gc.c).
 *
 * A storage is not such an object: it is a C++ StorageImpl that no
 * collector tracks, and a StorageWeakRef reads its C++ count. CPython runs
 * the callbacks (handle_weakrefs) before it clears the garbage
 * (delete_garbage), so a garbage tensor still holds its storage while the
 * callbacks run, and the storage dies after them, when its last holder is
 * cleared. So a garbage storage (without user attributes: those make it a
 * Python-level object) is neither released nor dropped before the drain:
 * it keeps the collector's hold through the callbacks, and the hold goes
 * after them (finish_one), when it dies as any object does (its callbacks,
 * then its release). An object still referenced after the release (strong
 * > 1: an edge its traverse did not report, or a callback's new
 * reference) goes back to the live list instead. */
static int held_through_callbacks(const obj *o)
{
    return o->type->kind == OBJ_STORAGE && !(o->flags & OBJ_F_ATTRS);
}

/* o has left the garbage: back to the live list, or its death. */
static void finish_one(obj_list *live, obj *o)
{
    o->flags &= ~(uint32_t)GC_HOLDER_FLAGS;
    if (o->strong != 1) {
        o->flags &= ~(uint32_t)OBJ_F_GC_MARK;
        o->strong--;
        obj_int_list_insert_sorted(live, o);
        stats.resurrected++;
    } else if (o->callbacks || held_through_callbacks(o)) {
        obj_decref(o);                       /* queued (or, held, dies now) */
    } else {
        obj_int_kill_released(o);
    }
}

static void drop_one(obj_list *live, obj_list *unreachable, obj *o)
{
    leave_unreachable(unreachable, o);
    finish_one(live, o);
}

/* Can o die now, in the release pass? Released, held by the collector only
 * (strong 1), with no weak callback to queue and no weak reference to make
 * it a zombie: it dies as it would in the drop pass, where nothing can
 * observe the order such objects die in. The zombies and the queued deaths
 * keep theirs: they wait for the drop pass. */
static int dies_quietly(const obj *o)
{
    return o->strong == 1 && !o->callbacks && o->weak == 0 && !held_through_callbacks(o);
}

/* o dies quietly (weak 0: its memory goes at once, flags and all). */
static void drop_quiet(obj_list *unreachable, obj *o)
{
    leave_unreachable(unreachable, o);
    obj_int_kill_released(o);
}

/* Phase 5's release on the array path, with the drop folded in for the
 * objects that may die at once: while an object is in the cache, not in a
 * second pass over the garbage (at 1M objects that pass streamed the heap
 * again). An object may die once every garbage object holding it has been
 * released: then its count is final (an extra release by one of its
 * holders has already taken it to 0 and been reported, the hold still on).
 * Without a newer holder (OBJ_F_GC_LATE) that is right after its own
 * release; with newer holders all less than DROP_NEAR ids newer, once the
 * release has passed its id + DROP_NEAR. The others are packed into
 * v[first..w) in creation order (NULL where one died later) for the drop
 * pass; w is returned. */
static size_t release_and_drop(obj_list *unreachable, int weakrefs_done, obj **v,
                               size_t first, size_t n)
{
    size_t w = first, k = first;     /* v[k..w): waiting for their holders */
    for (size_t i = first; i < n; i++) {
        if (i + PREFETCH < n)
            __builtin_prefetch(v[i + PREFETCH], 1);
        obj *o = v[i];
        if (!(o->flags & OBJ_F_GC_MARK))
            continue;
        uint64_t id = o->id;
        if (!weakrefs_done)
            handle_weakrefs_of(o);
        if (!held_through_callbacks(o))
            obj_int_release(o);
        if (!(o->flags & OBJ_F_GC_LATE) && dies_quietly(o))
            drop_quiet(unreachable, o);
        else
            v[w++] = o;                  /* w <= i: v[i] is read already */
        for (; k < w && v[k]->id + DROP_NEAR <= id; k++)
            if ((v[k]->flags & GC_HOLDER_FLAGS) == OBJ_F_GC_LATE && dies_quietly(v[k])) {
                drop_quiet(unreachable, v[k]);
                v[k] = NULL;
            }
    }
    return w;
}

/* The held storages (held_through_callbacks) die after the drain, each
 * with its whole cascade before the next, as a cleared tensor's storage
 * does in CPython's delete_garbage; the others still held count as
 * off-list meanwhile. */
static void finish_held(obj_list *live, obj_list *unreachable, obj **v, size_t first,
                        size_t h, obj_list *held)
{
    for (size_t i = first; i < h; i++) {
        obj_int_set_offlist(h - i);
        leave_unreachable(unreachable, v[i]);
        finish_one(live, v[i]);
    }
    obj *o;
    while ((o = held->head) != NULL) {
        obj_int_set_offlist((uint64_t)held->n);
        obj_int_list_unlink(held, o);
        finish_one(live, o);
    }
    obj_int_set_offlist(0);
}

/* v[first..n): the garbage in creation order (array path), or v NULL (the
 * unreachable list, whose tail is the oldest). Both visit the same objects
 * in the same order; an object rescued after it was packed is unmarked and
 * skipped. The held storages wait in v[first..h) or on `held`. */
static void clear_garbage(obj_list *live, obj_list *unreachable, int weakrefs_done,
                          obj **v, size_t first, size_t n)
{
    int prev = obj_int_drain_enter();
    obj_int_set_collector_release(1);
    obj_list held = {0};
    size_t h = first;
    if (v) {
        size_t w = release_and_drop(unreachable, weakrefs_done, v, first, n);
        obj_int_set_collector_release(0);
        for (size_t i = first; i < w; i++)
            if (v[i] && held_through_callbacks(v[i]))
                v[h++] = v[i];               /* h <= i: v[i] is read already */
            else if (v[i])
                drop_one(live, unreachable, v[i]);
    } else {
        for (obj *o = unreachable->tail; o; o = o->prev) {
            if (!weakrefs_done)
                handle_weakrefs_of(o);
            if (!held_through_callbacks(o))
                obj_int_release(o);
        }
        obj_int_set_collector_release(0);
        obj *o;
        while ((o = unreachable->tail) != NULL) {
            if (held_through_callbacks(o)) {
                obj_int_list_unlink(unreachable, o);
                obj_int_list_append(&held, o);
            } else {
                drop_one(live, unreachable, o);
            }
        }
    }
    obj_int_set_offlist((uint64_t)(h - first) + (uint64_t)held.n);
    obj_int_drain_exit(prev);
    finish_held(live, unreachable, v, first, h, &held);
}

/* --- debug validation ------------------------------------------------------ */

static int debug_fail(const char *what, const obj *o)
{
    er_set(ER_INTERNAL, "gc debug: %s (%s #%llu)", what,
           o ? o->type->name : "-", o ? (unsigned long long)o->id : 0ULL);
    stats.debug_failures++;
    return -1;
}

static int check_copied(const obj_list *live)
{
    for (const obj *o = live->head; o; o = o->next)
        if (o->gc_refs != start_refs(o) || (o->flags & OBJ_F_GC_MARK))
            return debug_fail("update_refs: gc_refs != strong", o);
    return 0;
}

static int check_subtracted(const obj_list *live)
{
    for (const obj *o = live->head; o; o = o->next)
        if (o->gc_refs < 0)
            return debug_fail("subtract_refs: more edges traversed than strong refs", o);
    return 0;
}

static void visit_check_reachable(obj *child, const char *label, long index,
                                  void *arg)
{
    (void)label, (void)index;
    if (child && (child->flags & OBJ_F_GC_MARK))
        *(const obj **)arg = child;
}

static int check_unreachable(obj_list *live, const obj_list *unreachable)
{
    uint64_t last = 0;
    for (obj *o = live->head; o; o = o->next) {
        if (o->id <= last)
            return debug_fail("move_unreachable: live list out of order", o);
        if (o->flags & OBJ_F_GC_MARK)
            return debug_fail("move_unreachable: marked object on the live list", o);
        const obj *bad = NULL;
        obj_gc_traverse(o, visit_check_reachable, &bad);
        if (bad)
            return debug_fail("move_unreachable: reachable object points at garbage",
                              bad);
        last = o->id;
    }
    for (const obj *o = unreachable->head; o; o = o->next)
        if (!(o->flags & OBJ_F_GC_MARK) || o->gc_refs > 0)
            return debug_fail("move_unreachable: unmarked or referenced garbage", o);
    if (live->n + unreachable->n != obj_live_count())
        return debug_fail("move_unreachable: objects lost", NULL);
    return 0;
}

static int check_weakrefs(const obj_list *unreachable)
{
    for (const obj *o = unreachable->head; o; o = o->next) {
        const obj_cb *cb = o->callbacks;
        if (!cb)
            continue;
        do {
            if (owner_is_garbage(cb))
                return debug_fail("handle_weakrefs: garbage-owned callback left", o);
            cb = cb->next;
        } while (cb != o->callbacks);
    }
    return 0;
}

/* Undo phases 1-3 after a failed validation. */
static void restore(obj_list *live, obj_list *unreachable)
{
    for (obj *o = unreachable->head; o; o = o->next) {
        o->flags &= ~(uint32_t)OBJ_F_GC_MARK;
        o->strong--;
    }
    merge_back(live, unreachable);
    for (obj *o = live->head; o; o = o->next)
        o->flags &= ~(uint32_t)(OBJ_F_GC_REFS | GC_HOLDER_FLAGS);
    obj_int_set_offlist(0);
}

/* --- references the collector cannot see -------------------------------- */

typedef struct hidden_walk {
    obj **q;
    size_t n, cap;
} hidden_walk;

static void visit_hidden(obj *child, const char *label, long index, void *arg)
{
    (void)label, (void)index;
    hidden_walk *w = arg;
    if (!child || child->strong == 0 || (child->flags & OBJ_F_GC_MARK) || w->n == w->cap)
        return;
    child->flags |= OBJ_F_GC_MARK;
    w->q[w->n++] = child;
}

int gc_hidden_holds(const obj *target)
{
    if (collecting || !target)
        return 0;
    size_t cap = (size_t)obj_live_count();
    hidden_walk w = {arr_reserve(cap ? cap : 1), 0, cap};
    if (!w.q) {
        er_set(ER_OOM, "gc_hidden_holds: no room for %zu object pointers", cap);
        return -1;
    }
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o))
        if (o->type->gc_hidden)
            o->type->gc_hidden(o, visit_hidden, &w);
    for (size_t i = 0; i < w.n; i++)             /* w.n grows while we walk */
        obj_traverse(w.q[i], visit_hidden, &w);
    int held = 0;
    for (size_t i = 0; i < w.n; i++) {
        held |= w.q[i] == target;
        w.q[i]->flags &= ~(uint32_t)OBJ_F_GC_MARK;
    }
    return held;
}

/* --- generations ---------------------------------------------------------
 *
 * Ids are issued in creation order, so a generation is a range of ids:
 * objects up to old_max survived a collection of generation 1 or 2 (they
 * are in generation 2), those up to mid_max one of generation 0 (in 1),
 * the newer ones none (in 0). A collection of generation g moves every
 * survivor of generations 0..g up one: it raises the watermarks to the
 * newest live id. */
static uint64_t mid_max, old_max;

int gc_generation(const obj *o)
{
    return o->id <= old_max ? 2 : o->id <= mid_max ? 1 : 0;
}

void gc_generations_reset(void) { mid_max = old_max = 0; }

static uint64_t newest_live_id(void)
{
    const obj_list *live = obj_int_live();
    return live->tail ? live->tail->id : 0;
}

static uint64_t collect(void);

uint64_t gc_collect(void)
{
    if (collecting || obj_int_draining())
        return 0;
    uint64_t top = newest_live_id();
    uint64_t died = collect();
    mid_max = old_max = top > old_max ? top : old_max;
    return died;
}

uint64_t gc_collect_gen(int g)
{
    if (g >= 2)
        return gc_collect();
    if (collecting || obj_int_draining())
        return 0;
    if (g < 0)
        g = 0;
    /* the objects of generations g+1..2 are roots: hold each once */
    uint64_t limit = g == 0 ? mid_max : old_max, top = newest_live_id();
    size_t nold = 0, i = 0;
    for (obj *o = obj_live_first(); o && o->id <= limit; o = obj_iter_next(o))
        nold++;
    obj **old = nold ? al_malloc(nold * sizeof *old, AL_K_HEAP, "gc old generations") : NULL;
    if (nold && !old) {
        er_set(ER_OOM, "gc(%d): no room to hold the %zu objects of the older generations", g,
               nold);
        return 0;
    }
    for (obj *o = obj_live_first(); o && i < nold; o = obj_iter_next(o), i++) {
        obj_incref(o);
        old[i] = o;
    }
    uint64_t died = collect();
    if (g == 0)
        mid_max = top > mid_max ? top : mid_max;
    else
        mid_max = old_max = top > old_max ? top : old_max;
    for (i = 0; i < nold; i++)
        obj_decref(old[i]);
    al_free(old, nold * sizeof *old, AL_K_HEAP);
    return died;
}

static uint64_t collect(void)
{
    collecting = 1;
    obj_list *live = obj_int_live();
    obj_list unreachable = {0};
    uint64_t deaths0 = obj_death_count();
    stats.examined = live->n;

    if (debug_on) {
        update_refs(live);
        if (check_copied(live))
            goto abandon;
    }
    /* the array path when not debugging (debug validates the lists) */
    size_t n = (size_t)live->n, first = 0;
    obj **v = !debug_on && n ? arr_reserve(n) : NULL;
    garbage_listed = v == NULL;
    if (subtract_refs(live, v) != 0) {
        er_set(ER_INTERNAL, "gc: the live list does not hold its %zu objects (a broken "
               "registry; obj_verify says where)", n);
        stats.debug_failures++;
        goto abandon;
    }
    if (debug_on && check_subtracted(live))
        goto abandon;
    move_unreachable(live, &unreachable, v, n, &first);
    obj_int_set_offlist(unreachable.n);
    if (debug_on && check_unreachable(live, &unreachable))
        goto abandon;
    if (debug_on) {
        handle_weakrefs(&unreachable);
        if (check_weakrefs(&unreachable))
            goto abandon;
    }
    stats.garbage = unreachable.n;
    clear_garbage(live, &unreachable, debug_on, v, first, n);

    uint64_t died = obj_death_count() - deaths0;
    stats.collections++;
    stats.collected = died;
    stats.total_collected += died;
    allocs_since = deaths_since = 0;
    collecting = 0;
    return died;

abandon:
    restore(live, &unreachable);
    collecting = 0;
    return 0;
}
