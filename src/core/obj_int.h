/* obj_int.h - core-private plumbing shared by obj.c and gc.c. Not for other
 * modules: everything here bypasses the registry's invariants unless used
 * in the order gc.c uses it.
 *
 * The collector borrows the registry links (obj.prev/next) to move objects
 * between lists without allocating; obj.c owns the live list and needs to
 * know, when an object dies, whether it is on it (OBJ_F_GC_MARK clear) or
 * held off-list by the collector (OBJ_F_GC_MARK set).
 */
#ifndef FAKEGC_OBJ_INT_H
#define FAKEGC_OBJ_INT_H

#include "obj.h"

/* A NULL-terminated doubly linked list through obj.prev/next. */
typedef struct obj_list {
    obj *head, *tail;
    uint64_t n;
} obj_list;

/* Inline: the collector calls these once per garbage object. */
static inline void obj_int_list_append(obj_list *l, obj *o)
{
    o->next = NULL;
    o->prev = l->tail;
    if (l->tail)
        l->tail->next = o;
    else
        l->head = o;
    l->tail = o;
    l->n++;
}

static inline void obj_int_list_unlink(obj_list *l, obj *o)
{
    if (o->prev)
        o->prev->next = o->next;
    else
        l->head = o->next;
    if (o->next)
        o->next->prev = o->prev;
    else
        l->tail = o->prev;
    o->prev = o->next = NULL;
    l->n--;
}

/* Insert o (not on any list) into l, which is sorted by id, at its place;
 * searches from the tail (cheap when o is among the newest). */
void obj_int_list_insert_sorted(obj_list *l, obj *o);

/* The live registry list. live.n counts the objects on the list; objects
 * the collector holds off-list are counted by obj_live_count() only. */
obj_list *obj_int_live(void);

/* A drain scope: deaths inside it are queued and processed when the
 * outermost scope ends. enter returns the previous state for exit. */
int obj_int_drain_enter(void);
void obj_int_drain_exit(int prev);
int obj_int_draining(void);

/* --- obj_side.c: what lives beside the header --- */
/* The current site's index, interned now if it is new; OBJ_INT_SITE_NONE
 * when the site table cannot grow. Inline: obj_new asks every time, and
 * the site changes once a statement. */
#define OBJ_INT_SITE_NONE UINT32_MAX
extern uint32_t obj_int_cur_site;        /* interned, or OBJ_INT_SITE_NONE */
uint32_t obj_int_site_intern(void);
uint32_t obj_int_site_count(void);       /* sites interned (for obj_verify) */
static inline uint32_t obj_int_site_current(void)
{
    return obj_int_cur_site != OBJ_INT_SITE_NONE ? obj_int_cur_site : obj_int_site_intern();
}
/* o's attributes (OBJ_F_ATTRS): visited as obj_traverse's tail, their
 * bytes (records and names), dropped at release; objects in the map. */
void obj_int_attrs_traverse(obj *o, obj_visit_fn visit, void *arg);
uint64_t obj_int_attrs_bytes(const obj *o);
void obj_int_attrs_clear(obj *o);
size_t obj_int_attr_objects(void);

/* Drop what o owns: the type's release, then its attributes (inline: the
 * collector calls it once per garbage object). */
static inline void obj_int_release(obj *o)
{
    if (o->type->release)
        o->type->release(o);
    if (o->flags & OBJ_F_ATTRS)
        obj_int_attrs_clear(o);
}

/* The collector's quiet death: o is off-list (OBJ_F_GC_MARK), released,
 * has strong == 1 (the collector's hold) and no callbacks. It dies without
 * going through the queue: freed at once, or parked as a zombie. */
void obj_int_kill_released(obj *o);

/* The collector's off-list objects (for obj_verify); 0 outside gc. */
void obj_int_set_offlist(uint64_t n);

/* On while the collector releases its garbage (phase 5, before the drop):
 * every garbage object is then held (strong >= 1, the phase-3 hold) and
 * still linked on the collector's unreachable list, so a decref that takes
 * one to 0 drops a reference nobody had (an early free, a double decref).
 * Such a decref is refused - the hold stays, the object is not queued
 * (queueing it would relink it while the unreachable list still points at
 * it, and the drain would then walk a corrupted list) - and reported like a
 * decref of a dead object (obj_report_dead_use: the hook, UseAfterFree). */
void obj_int_set_collector_release(int on);

#endif
