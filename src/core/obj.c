/* obj.c - object header, registry, the death worklist and weak callbacks
 * (sites and user attributes: obj_side.c).
 *
 * Lists. Every object is on exactly one list through obj.prev/next:
 *   live     strong > 0, in creation (id) order;
 *   queue    strong == 0, waiting to be processed (OBJ_F_QUEUED);
 *   zombies  dead and released, weak > 0 (OBJ_F_DEAD);
 * or on none: while being processed (OBJ_F_QUEUED, unlinked from queue), or
 * while the collector holds it (OBJ_F_GC_MARK, see gc.c).
 *
 * Deaths. obj_decref to 0 moves the object to the queue; the outermost
 * caller (no drain running) drains the queue: callbacks, release, then free
 * or park on the zombie list. Deaths caused while draining are queued, so
 * the stack never grows with the length of an ownership chain, and no
 * object's memory is freed while a callback (which may hold pointers into
 * it) is running.
 */
#include "obj.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "vg/vg.h"
#include "er.h"
#include "gc.h"
#include "obj_int.h"

static uint64_t next_id = 1;
static obj_list live, queue, zombies;
static uint64_t live_total;          /* live list + collector-held objects */
static uint64_t live_kind[OBJ_KIND_COUNT];
static uint64_t offlist;             /* collector-held, counted in live_total */
static int collector_release;        /* see obj_int_set_collector_release */
static uint64_t deaths;
static int draining;
static obj_config config;
/* Pending deferred callbacks: a ring through obj_cb.next/prev around this
 * sentinel. A queued cb has target == NULL and next != NULL. */
static obj_cb deferred = {&deferred, &deferred, NULL, NULL, NULL};
static size_t deferred_n;

static const char *const kind_names[OBJ_KIND_COUNT] = {
    [OBJ_STORAGE] = "storage",
    [OBJ_TENSOR] = "tensor",
    [OBJ_FAKE_MODE] = "fake_mode",
    [OBJ_FAKE_CONVERTER] = "fake_converter",
    [OBJ_META_CONVERTER] = "meta_converter",
    [OBJ_FINALIZER] = "finalizer",
    [OBJ_WEAKREF] = "weakref",
    [OBJ_GENERIC] = "generic",
};

/* --- lists ---------------------------------------------------------------- */

void obj_int_list_insert_sorted(obj_list *l, obj *o)
{
    obj *p = l->tail;
    while (p && p->id > o->id)
        p = p->prev;
    /* insert after p (at the head when p is NULL) */
    o->prev = p;
    o->next = p ? p->next : l->head;
    if (o->next)
        o->next->prev = o;
    else
        l->tail = o;
    if (p)
        p->next = o;
    else
        l->head = o;
    l->n++;
}

obj_list *obj_int_live(void) { return &live; }
void obj_int_set_offlist(uint64_t n) { offlist = n; }
void obj_int_set_collector_release(int on) { collector_release = on; }
int obj_int_draining(void) { return draining; }

void obj_traverse(obj *o, obj_visit_fn visit, void *arg)
{
    if (o->type->traverse)
        o->type->traverse(o, visit, arg);
    if (o->flags & OBJ_F_ATTRS)
        obj_int_attrs_traverse(o, visit, arg);
}

void obj_gc_traverse(obj *o, obj_visit_fn visit, void *arg)
{
    void (*t)(obj *, obj_visit_fn, void *) =
        o->type->gc_traverse ? o->type->gc_traverse : o->type->traverse;
    if (t)
        t(o, visit, arg);
    if (o->flags & OBJ_F_ATTRS)
        obj_int_attrs_traverse(o, visit, arg);
}

uint64_t obj_self_bytes(const obj *o)
{
    uint64_t n = o->size;
    if (o->type->owned_bytes)
        n += o->type->owned_bytes(o);
    return n + obj_int_attrs_bytes(o);
}

/* --- callbacks -------------------------------------------------------------- */

static void ring_unlink(obj *t, obj_cb *cb)
{
    if (cb->next == cb) {
        t->callbacks = NULL;
    } else {
        cb->prev->next = cb->next;
        cb->next->prev = cb->prev;
        if (t->callbacks == cb)
            t->callbacks = cb->next;
    }
    cb->next = cb->prev = NULL;
    cb->target = NULL;
}

int obj_cb_register(obj *target, obj_cb *cb)
{
    if (!target || obj_expired(target))
        return er_set(ER_DEAD_REF, "weak callback on a dead object");
    obj_cb_unregister(cb);
    cb->target = target;
    obj_cb *h = target->callbacks;
    if (!h) {
        cb->next = cb->prev = cb;
        target->callbacks = cb;
    } else {
        cb->next = h;
        cb->prev = h->prev;
        h->prev->next = cb;
        h->prev = cb;
    }
    return 0;
}

void obj_cb_unregister(obj_cb *cb)
{
    if (!cb)
        return;
    if (cb->target) {
        ring_unlink(cb->target, cb);
    } else if (cb->next) {          /* pending on the deferred queue */
        cb->prev->next = cb->next;
        cb->next->prev = cb->prev;
        cb->next = cb->prev = NULL;
        deferred_n--;
    }
}

static void deferred_push(obj_cb *cb)
{
    cb->next = &deferred;
    cb->prev = deferred.prev;
    deferred.prev->next = cb;
    deferred.prev = cb;
    deferred_n++;
}

/* A registration whose owner has died is withdrawn, not run. The owner's
 * memory is still there: a dead owner is queued or being processed (its
 * release, which unregisters, has not run yet), otherwise cb would be
 * unlinked already. This is what makes "a callback dropped another weak
 * holder of the dying object" skip that holder's callback even though the
 * holder's own death is queued behind the current one. */
static int owner_dead(const obj_cb *cb)
{
    return cb->owner && cb->owner->strong == 0;
}

/* Run (or defer) every callback on the dying o. Each is unlinked before it
 * runs, and the ring is re-read after each call, because a callback may
 * unregister others. */
static void run_callbacks(obj *o)
{
    int late = config.weak_clear_late && !config.defer_callbacks;
    if (late)
        o->flags |= OBJ_F_FINALIZING;
    while (o->callbacks) {
        obj_cb *cb = config.callbacks_reverse ? o->callbacks->prev : o->callbacks;
        ring_unlink(o, cb);
        if (owner_dead(cb))
            continue;
        if (config.defer_callbacks)
            deferred_push(cb);
        else if (cb->fn)
            cb->fn(cb, o);
    }
    o->flags &= ~(uint32_t)OBJ_F_FINALIZING;
}

/* --- life and death --------------------------------------------------------- */

/* The pool of type's that serves objects of this size, or NULL. */
static al_pool *pool_for(const obj_type *type, size_t size)
{
    al_pool *p = type->pool;
    if (!p)
        return NULL;
    if (p->size == size)
        return p;
    for (unsigned i = 1; i < type->npools; i++)
        if (p[i].size == size)
            return &p[i];
    return NULL;
}

obj *obj_new(const obj_type *type, size_t size)
{
    if (!type || (unsigned)type->kind >= OBJ_KIND_COUNT || size < sizeof(obj) ||
        size > UINT32_MAX) {
        er_set(ER_INTERNAL, "obj_new: bad type or size %zu", size);
        return NULL;
    }
    const char *name = type->name ? type->name : "obj_new";
    uint32_t site = obj_int_site_current();
    if (site == OBJ_INT_SITE_NONE) {
        er_set(ER_OOM, "out of memory interning the site of a %s", name);
        return NULL;
    }
    al_pool *pool = pool_for(type, size);
    obj *o = pool ? al_pool_get(pool, name) : al_malloc(size, AL_K_OBJECT, name);
    if (!o) {
        er_set(ER_OOM, "out of memory allocating a %s (%zu bytes)", name, size);
        return NULL;
    }
    memset(o, 0, size);
    o->type = type;
    o->id = next_id++;
    o->strong = 1;
    o->size = (uint32_t)size;
    o->site = site;
    obj_int_list_append(&live, o);
    live_total++;
    live_kind[type->kind]++;
    gc_note_alloc();
    return o;
}

static void free_obj(obj *o)
{
    if (o->type->dispose)
        o->type->dispose(o);
    al_pool *pool = pool_for(o->type, o->size);
    if (pool)
        al_pool_put(pool, o);
    else
        al_free(o, o->size, AL_K_OBJECT);
}

/* Process queued deaths until none is left; draining is set by the caller. */
static void process_queue(void)
{
    obj *o;
    while ((o = queue.head) != NULL) {
        obj_int_list_unlink(&queue, o);
        run_callbacks(o);
        obj_int_release(o);
        o->flags &= ~(uint32_t)OBJ_F_QUEUED;
        if (o->weak == 0)
            free_obj(o);
        else
            obj_int_list_append(&zombies, o);
    }
}

int obj_int_drain_enter(void)
{
    int prev = draining;
    draining = 1;
    return prev;
}

void obj_int_drain_exit(int prev)
{
    if (!prev) {
        process_queue();
        draining = 0;
    }
}

static void die(obj *o)
{
    if ((o->flags & OBJ_F_GC_MARK) && collector_release) {
        o->strong = 1;                /* the collector's hold stays */
        obj_report_dead_use(o, "decref past its last reference (the collector held it)");
        return;
    }
    if (o->flags & OBJ_F_GC_MARK)     /* held off-list by the collector */
        o->flags &= ~(uint32_t)OBJ_F_GC_MARK;
    else
        obj_int_list_unlink(&live, o);
    live_total--;
    live_kind[o->type->kind]--;
    o->flags |= OBJ_F_DEAD | OBJ_F_QUEUED;
    obj_int_list_append(&queue, o);
    deaths++;
    gc_note_death();
    if (!draining) {
        draining = 1;
        process_queue();
        draining = 0;
    }
}

void obj_int_kill_released(obj *o)
{
    o->strong = 0;
    o->flags = (o->flags & ~(uint32_t)OBJ_F_GC_MARK) | OBJ_F_DEAD;
    live_total--;
    live_kind[o->type->kind]--;
    deaths++;               /* not gc_note_death: the collection resets it */
    if (o->weak == 0)
        free_obj(o);
    else
        obj_int_list_append(&zombies, o);
}

static void (*dead_decref_hook)(const char *what);

void obj_set_dead_decref_hook(void (*hook)(const char *what)) { dead_decref_hook = hook; }

static int memcheck_findings;

void obj_set_memcheck_findings(int on) { memcheck_findings = on; }

void obj_report_dead_use(const obj *o, const char *how)
{
    const char *name = o->type && o->type->name ? o->type->name : "object";
    char what[160];
    snprintf(what, sizeof what, "use-after-free: %s of dead %s #%llu", how, name,
             (unsigned long long)o->id);
    if (memcheck_findings)
        vg_report_bad_access(what);   /* memcheck sees it first */
    if (dead_decref_hook)
        dead_decref_hook(what);
    er_set(ER_USE_AFTER_FREE, "%s of dead %s #%llu", how, name, (unsigned long long)o->id);
}

void obj_decref_slow(obj *o)
{
    if (o->strong == 0) {
        obj_report_dead_use(o, "decref");
        return;
    }
    o->strong = 0;
    die(o);
}

void obj_weak_incref(obj *o)
{
    if (o)
        o->weak++;
}

void obj_weak_decref(obj *o)
{
    if (!o)
        return;
    if (o->weak == 0) {
        er_set(ER_INTERNAL, "weak decref of %s #%llu with weak 0", o->type->name,
               (unsigned long long)o->id);
        return;
    }
    if (--o->weak == 0 && (o->flags & (OBJ_F_DEAD | OBJ_F_QUEUED)) == OBJ_F_DEAD) {
        obj_int_list_unlink(&zombies, o);
        free_obj(o);
    }
}

size_t obj_safepoint(void)
{
    if (draining)
        return 0;
    size_t n = 0;
    draining = 1;
    while (deferred.next != &deferred) {
        obj_cb *cb = deferred.next;
        obj_cb_unregister(cb);
        if (owner_dead(cb))
            continue;
        if (cb->fn)
            cb->fn(cb, NULL);
        n++;
        process_queue();
    }
    draining = 0;
    return n;
}

size_t obj_deferred_count(void) { return deferred_n; }
uint64_t obj_death_count(void) { return deaths; }

/* --- config, registry ------------------------------------------------------- */

void obj_configure(const obj_config *cfg) { config = *cfg; }
obj_config obj_get_config(void) { return config; }

obj *obj_live_first(void) { return live.head; }
obj *obj_live_last(void) { return live.tail; }
obj *obj_zombie_first(void) { return zombies.head; }
uint64_t obj_next_id(void) { return next_id; }

uint64_t obj_live_count(void) { return live_total; }
uint64_t obj_zombie_count(void) { return zombies.n; }
uint64_t obj_live_listed(void) { return live.n; }

uint64_t obj_live_count_kind(obj_kind k)
{
    return (unsigned)k < OBJ_KIND_COUNT ? live_kind[k] : 0;
}

const char *obj_kind_name(obj_kind k)
{
    return (unsigned)k < OBJ_KIND_COUNT ? kind_names[k] : "?";
}


/* Walk one list checking links; returns its length, or UINT64_MAX when the
 * links are broken (why filled). */
static uint64_t walk(const obj_list *l, const char *name, char *why, size_t n)
{
    uint64_t len = 0;
    const obj *prev = NULL;
    for (const obj *o = l->head; o; o = o->next) {
        if (o->prev != prev || ++len > l->n) {
            er_why(why, n, "%s list: broken link at #%llu", name,
                 (unsigned long long)o->id);
            return UINT64_MAX;
        }
        prev = o;
    }
    if (prev != l->tail || len != l->n) {
        er_why(why, n, "%s list: tail or length wrong (%llu, recorded %llu)", name,
             (unsigned long long)len, (unsigned long long)l->n);
        return UINT64_MAX;
    }
    return len;
}

static int check_callbacks(const obj *o, char *why, size_t n)
{
    const obj_cb *h = o->callbacks;
    if (!h)
        return 0;
    const obj_cb *cb = h;
    do {
        if (cb->target != o || cb->next->prev != cb)
            return er_why(why, n, "callback ring of #%llu is broken",
                        (unsigned long long)o->id);
        cb = cb->next;
    } while (cb != h);
    return 0;
}

int obj_verify(char *why, size_t n)
{
    if (walk(&live, "live", why, n) == UINT64_MAX ||
        walk(&zombies, "zombie", why, n) == UINT64_MAX ||
        walk(&queue, "death queue", why, n) == UINT64_MAX)
        return -1;
    uint64_t kinds[OBJ_KIND_COUNT] = {0};
    uint64_t last = 0, with_attrs = 0;
    uint32_t nsites = obj_int_site_count();
    for (const obj *o = live.head; o; o = o->next) {
        with_attrs += (o->flags & OBJ_F_ATTRS) != 0;
        unsigned long long id = (unsigned long long)o->id;
        if (!o->type || (unsigned)o->type->kind >= OBJ_KIND_COUNT)
            return er_why(why, n, "live #%llu has no valid type", id);
        if (o->strong == 0)
            return er_why(why, n, "live #%llu has strong 0", id);
        if (o->flags & (OBJ_F_DEAD | OBJ_F_QUEUED | OBJ_F_GC_MARK | OBJ_F_GC_REFS))
            return er_why(why, n, "live #%llu has flags 0x%x", id, o->flags);
        if (o->id <= last || o->id >= next_id)
            return er_why(why, n, "live #%llu out of creation order", id);
        if (o->size < sizeof(obj))
            return er_why(why, n, "live #%llu has size %u", id, o->size);
        if (o->site >= nsites)
            return er_why(why, n, "live #%llu has site %u of %u interned", id, o->site,
                        nsites);
        if (check_callbacks(o, why, n))
            return -1;
        kinds[o->type->kind]++;
        last = o->id;
    }
    if (live.n + offlist != live_total)
        return er_why(why, n, "live count %llu != listed %llu + held %llu",
                    (unsigned long long)live_total, (unsigned long long)live.n,
                    (unsigned long long)offlist);
    for (const obj *o = queue.head; o; o = o->next)
        with_attrs += (o->flags & OBJ_F_ATTRS) != 0;
    if (offlist == 0 && with_attrs != obj_int_attr_objects())
        return er_why(why, n, "%llu objects flagged with attributes, %zu in the map",
                    (unsigned long long)with_attrs, obj_int_attr_objects());
    if (offlist == 0)
        for (int k = 0; k < OBJ_KIND_COUNT; k++)
            if (kinds[k] != live_kind[k])
                return er_why(why, n, "live %s count %llu, listed %llu", kind_names[k],
                            (unsigned long long)live_kind[k],
                            (unsigned long long)kinds[k]);
    for (const obj *o = zombies.head; o; o = o->next) {
        unsigned long long id = (unsigned long long)o->id;
        if (o->strong != 0 || o->weak == 0)
            return er_why(why, n, "zombie #%llu has strong %u weak %u", id, o->strong,
                        o->weak);
        if ((o->flags & (OBJ_F_DEAD | OBJ_F_QUEUED | OBJ_F_GC_MARK)) != OBJ_F_DEAD)
            return er_why(why, n, "zombie #%llu has flags 0x%x", id, o->flags);
        if (o->callbacks || (o->flags & OBJ_F_ATTRS))
            return er_why(why, n, "zombie #%llu still has callbacks or attributes", id);
    }
    for (const obj *o = queue.head; o; o = o->next)
        if (o->strong != 0 ||
            (o->flags & (OBJ_F_DEAD | OBJ_F_QUEUED)) != (OBJ_F_DEAD | OBJ_F_QUEUED))
            return er_why(why, n, "queued #%llu is not dying", (unsigned long long)o->id);
    size_t nd = 0;
    for (const obj_cb *cb = deferred.next; cb != &deferred; cb = cb->next) {
        if (cb->target || cb->next->prev != cb || ++nd > deferred_n)
            return er_why(why, n, "deferred callback queue is broken");
    }
    if (nd != deferred_n)
        return er_why(why, n, "deferred callback count %zu, listed %zu", deferred_n, nd);
    return 0;
}

uint64_t obj_leftover(void)
{
    uint64_t left = live_total + zombies.n + queue.n;
    if (left == 0)
        next_id = 1;
    return left;
}

static void hold_for_reclaim(obj *o)
{
    obj_incref(o);
    while (o->callbacks)
        obj_cb_unregister(o->callbacks);
}

static void hold_at(obj *o, size_t i, void *v)
{
    ((obj **)v)[i] = o;
    hold_for_reclaim(o);
}

/* Hold every live object; with scratch, walking the list from both ends
 * at once (obj_walk_both), v getting the list in order as prefetch hints
 * for the walks that follow. n when v was filled, else 0. */
static size_t hold_all(obj **v)
{
    if (!v) {
        for (obj *o = live.head; o; o = o->next)
            hold_for_reclaim(o);
        return 0;
    }
    (void)obj_walk_both(live.head, live.tail, (size_t)live.n, hold_at, v);
    return (size_t)live.n;
}

enum { RECLAIM_AHEAD = 16 };

/* Prefetch hint i of n (v may be stale: a prefetch of any address is
 * harmless; the walks themselves follow the list). */
static void hint(obj **v, size_t n, size_t i)
{
    if (i + RECLAIM_AHEAD < n)
        __builtin_prefetch(v[i + RECLAIM_AHEAD], 1);
}

uint64_t obj_reclaim_all(void)
{
    uint64_t forced = 0;
    obj **v = live.n > RECLAIM_AHEAD ? (obj **)gc_scratch_array(live.n) : NULL;
    size_t n = hold_all(v), i = 0;
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o), i++) {
        hint(v, n, i);
        obj_int_release(o);
    }
    obj *o;
    for (i = 0; (o = obj_live_first()) != NULL; i++) {
        hint(v, n, i);
        while (o->callbacks)
            obj_cb_unregister(o->callbacks);
        o->strong = 1;
        obj_decref(o);
        forced++;
    }
    obj_safepoint();
    while ((o = obj_zombie_first()) != NULL) {
        o->weak = 1;
        obj_weak_decref(o);
        forced++;
    }
    return forced;
}
