/* wr.h - weak handles and finalizers, as objects.
 *
 * A weak handle (kind OBJ_WEAKREF) is Python's weakref.ref / PyTorch's
 * StorageWeakRef: it holds a *weak* count on its target, so the target's
 * header stays readable after death, and wr_get returns NULL once the target
 * has died. An optional callback runs when the target dies (while the handle
 * itself is alive).
 *
 * A finalizer (kind OBJ_FINALIZER) is weakref.finalize(target, fn): it
 * stays alive (held by the finalizer registry, as in CPython) until its
 * target dies or it is detached; then it runs fn once and dies. The
 * finalizer holds a strong reference to `payload` (the closure's captured
 * objects, e.g. a weak handle to a converter) and releases it after fn.
 *
 *   obj *w = wr_new(t, NULL, NULL);       // weakref.ref(t)
 *   obj_decref(t);                        // t dies
 *   assert(wr_get(w) == NULL && wr_expired(w));
 */
#ifndef FAKEGC_WR_H
#define FAKEGC_WR_H

#include "obj.h"

typedef void (*wr_callback)(obj *handle, void *arg);

/* New weak handle to target (alive). cb (may be NULL) runs when target dies
 * with the handle still alive; by then wr_get(handle) is already NULL, and
 * cb may drop the handle or other objects. NULL on OOM (or ER_DEAD_REF when
 * target is dead). A dead handle drops its weak count: wr_target_raw is
 * then NULL, wr_target_id still answers. */
obj *wr_new(obj *target, wr_callback cb, void *arg);
obj *wr_get(obj *handle);            /* borrowed target, or NULL if dead */
int wr_expired(const obj *handle);
obj *wr_target_raw(const obj *handle); /* header, alive or dead (for keys) */
uint64_t wr_target_id(const obj *handle);

typedef void (*wr_finalize_fn)(obj *finalizer, obj *payload, void *arg);

/* weakref.finalize(target, fn): NULL on OOM (or ER_DEAD_REF when target is
 * dead). The returned object is owned by the finalizer registry (the caller
 * gets no reference). When target dies, fn(finalizer, payload, arg) runs
 * once (fn may be NULL), then payload is released and the registry drops
 * the finalizer. The registry's reference is not an edge of any object, so
 * the collector always treats a pending finalizer (and its payload) as
 * reachable, as CPython does. */
obj *wr_finalize(obj *target, wr_finalize_fn fn, obj *payload, void *arg);
/* finalize.detach(): unregister without calling fn, release the payload,
 * drop the registry's reference. Returns 1 if it was pending, else 0. */
int wr_finalizer_detach(obj *finalizer);
int wr_finalizer_alive(const obj *finalizer);   /* still pending */
/* Pending finalizers (for census and tests). */
uint64_t wr_finalizer_count(void);

#endif
