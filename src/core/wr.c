/* wr.c - weak handles and finalizers.
 *
 * Both are objects carrying an obj_cb registration on their target, owned
 * by themselves (so the collector drops the registration when the handle
 * or finalizer is garbage together with its target).
 */
#include "wr.h"

#include <stddef.h>
#include <stdio.h>

#include "er.h"

typedef struct wr_handle {
    obj hdr;
    obj *target;          /* weak count held; NULL once the handle is released */
    uint64_t target_id;
    wr_callback cb;
    void *arg;
    obj_cb reg;           /* on target, only when cb != NULL */
} wr_handle;

typedef struct wr_fin {
    obj hdr;
    obj *payload;         /* strong */
    wr_finalize_fn fn;
    void *arg;
    uint64_t target_id;
    obj_cb reg;           /* on target while pending */
    struct wr_fin *reg_prev, *reg_next;   /* finalizer registry */
    int pending;
} wr_fin;

/* The finalizer registry: one strong reference per pending finalizer. */
static struct {
    wr_fin *head, *tail;
    uint64_t n;
} registry;

/* --- weak handles -------------------------------------------------------- */

static void handle_release(obj *self)
{
    wr_handle *h = (wr_handle *)self;
    obj_cb_unregister(&h->reg);
    obj *t = h->target;
    h->target = NULL;
    obj_weak_decref(t);
}

static void handle_traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    wr_handle *h = (wr_handle *)self;
    if (h->target)
        visit(h->target, "target", -1, arg);
}

static void handle_describe(const obj *self, char *buf, size_t n)
{
    const wr_handle *h = (const wr_handle *)self;
    snprintf(buf, n, "-> #%llu%s", (unsigned long long)h->target_id,
             wr_expired(self) ? " (dead)" : "");
}

static const obj_type handle_type = {
    .name = "weakref",
    .kind = OBJ_WEAKREF,
    .traverse_weak = handle_traverse_weak,
    .release = handle_release,
    .describe = handle_describe,
};

static wr_handle *handle_of(obj_cb *cb)
{
    return (wr_handle *)(void *)((char *)cb - offsetof(wr_handle, reg));
}

static void handle_fire(obj_cb *cb, obj *dying)
{
    (void)dying;
    wr_handle *h = handle_of(cb);
    if (h->cb)
        h->cb(&h->hdr, h->arg);
}

static const wr_handle *as_handle(const obj *o)
{
    return o && o->type == &handle_type ? (const wr_handle *)o : NULL;
}

obj *wr_new(obj *target, wr_callback cb, void *arg)
{
    if (!target || obj_expired(target)) {
        er_set(ER_DEAD_REF, "weak reference to a dead object");
        return NULL;
    }
    wr_handle *h = (wr_handle *)obj_new(&handle_type, sizeof *h);
    if (!h)
        return NULL;
    h->target = target;
    obj_weak_incref(target);
    h->target_id = target->id;
    h->cb = cb;
    h->arg = arg;
    if (cb) {
        h->reg.fn = handle_fire;
        h->reg.owner = &h->hdr;
        obj_cb_register(target, &h->reg);
    }
    return &h->hdr;
}

/* Alive for a weak handle: not dead, or dead with its callbacks still
 * running under obj_config.weak_clear_late. */
static int handle_sees(const obj *target)
{
    return !obj_expired(target) || (target->flags & OBJ_F_FINALIZING);
}

obj *wr_get(obj *handle)
{
    const wr_handle *h = as_handle(handle);
    return h && h->target && handle_sees(h->target) ? h->target : NULL;
}

int wr_expired(const obj *handle)
{
    const wr_handle *h = as_handle(handle);
    return !h || !h->target || !handle_sees(h->target);
}

obj *wr_target_raw(const obj *handle)
{
    const wr_handle *h = as_handle(handle);
    return h ? h->target : NULL;
}

uint64_t wr_target_id(const obj *handle)
{
    const wr_handle *h = as_handle(handle);
    return h ? h->target_id : 0;
}

/* --- finalizers ------------------------------------------------------------ */

static void registry_unlink(wr_fin *f)
{
    if (f->reg_prev)
        f->reg_prev->reg_next = f->reg_next;
    else
        registry.head = f->reg_next;
    if (f->reg_next)
        f->reg_next->reg_prev = f->reg_prev;
    else
        registry.tail = f->reg_prev;
    f->reg_prev = f->reg_next = NULL;
    registry.n--;
}

static void fin_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    wr_fin *f = (wr_fin *)self;
    if (f->payload)
        visit(f->payload, "payload", -1, arg);
}

/* Only reached with the finalizer still pending if someone else held a
 * reference and the registry's was lost; keep the registry consistent. */
static void fin_release(obj *self)
{
    wr_fin *f = (wr_fin *)self;
    obj_cb_unregister(&f->reg);
    if (f->pending) {
        f->pending = 0;
        registry_unlink(f);
    }
    obj_clear_ref(&f->payload);
}

static void fin_describe(const obj *self, char *buf, size_t n)
{
    const wr_fin *f = (const wr_fin *)self;
    snprintf(buf, n, "finalize(#%llu)%s", (unsigned long long)f->target_id,
             f->pending ? "" : " done");
}

static const obj_type fin_type = {
    .name = "finalize",
    .kind = OBJ_FINALIZER,
    .traverse = fin_traverse,
    .release = fin_release,
    .describe = fin_describe,
};

static wr_fin *fin_of(obj_cb *cb)
{
    return (wr_fin *)(void *)((char *)cb - offsetof(wr_fin, reg));
}

/* End a pending finalizer: payload released, registry reference dropped. */
static void fin_retire(wr_fin *f)
{
    f->pending = 0;
    obj_cb_unregister(&f->reg);
    registry_unlink(f);
    obj_clear_ref(&f->payload);
    obj_decref(&f->hdr);
}

static void fin_fire(obj_cb *cb, obj *dying)
{
    (void)dying;
    wr_fin *f = fin_of(cb);
    if (!f->pending)
        return;
    if (f->fn)
        f->fn(&f->hdr, f->payload, f->arg);
    if (f->pending)            /* fn may have detached it */
        fin_retire(f);
}

obj *wr_finalize(obj *target, wr_finalize_fn fn, obj *payload, void *arg)
{
    if (!target || obj_expired(target)) {
        er_set(ER_DEAD_REF, "finalize on a dead object");
        return NULL;
    }
    wr_fin *f = (wr_fin *)obj_new(&fin_type, sizeof *f);
    if (!f)
        return NULL;
    f->payload = payload;
    obj_incref(payload);
    f->fn = fn;
    f->arg = arg;
    f->target_id = target->id;
    f->reg.fn = fin_fire;
    f->reg.owner = &f->hdr;
    obj_cb_register(target, &f->reg);
    /* obj_new's reference becomes the registry's */
    f->pending = 1;
    f->reg_prev = registry.tail;
    if (registry.tail)
        registry.tail->reg_next = f;
    else
        registry.head = f;
    registry.tail = f;
    registry.n++;
    return &f->hdr;
}

int wr_finalizer_detach(obj *finalizer)
{
    if (!finalizer || finalizer->type != &fin_type)
        return 0;
    wr_fin *f = (wr_fin *)finalizer;
    if (!f->pending)
        return 0;
    fin_retire(f);
    return 1;
}

int wr_finalizer_alive(const obj *finalizer)
{
    return finalizer && finalizer->type == &fin_type &&
           ((const wr_fin *)finalizer)->pending;
}

uint64_t wr_finalizer_count(void) { return registry.n; }
