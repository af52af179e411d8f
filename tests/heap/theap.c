/* theap.c - the heap tests' object types. */
#include "heap/theap.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"

static void traverse(obj *self, obj_visit_fn visit, void *arg)
{
    th_obj *t = (th_obj *)self;
    for (int i = 0; i < TH_SLOTS; i++)
        if (t->child[i])
            visit(t->child[i], t->clabel[i], t->cindex[i], arg);
}

static void traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    th_obj *t = (th_obj *)self;
    for (int i = 0; i < TH_SLOTS; i++)
        if (t->weak[i])
            visit(t->weak[i], t->wlabel[i], t->windex[i], arg);
}

static void release(obj *self)
{
    th_obj *t = (th_obj *)self;
    for (int i = 0; i < TH_SLOTS; i++) {
        obj_clear_ref(&t->child[i]);
        obj *w = t->weak[i];
        t->weak[i] = NULL;
        if (w)
            obj_weak_decref(w);
    }
}

static uint64_t owned_bytes(const obj *self)
{
    const th_obj *t = (const th_obj *)self;
    return (self->flags & OBJ_F_DEAD) ? 0 : t->owned;
}

static void describe(const obj *self, char *buf, size_t n)
{
    snprintf(buf, n, "test %s", self->type->name);
}

/* Test nodes say what their edges are the way the fake layer does: an
 * edge labelled "pending" is a pending list, "memo" a tensor memo's entry
 * (obj_type.edge_role). */
static obj_role edge_role(const obj *self, const char *label)
{
    (void)self;
    return strcmp(label, "pending") == 0 ? OBJ_ROLE_PENDING
         : strcmp(label, "memo") == 0    ? OBJ_ROLE_TENSOR_MEMO
                                         : OBJ_ROLE_PLAIN;
}

#define TYPE(var, nm, k)                                                                 \
    const obj_type var = {.name = nm, .kind = k, .traverse = traverse,                   \
                          .traverse_weak = traverse_weak, .release = release,            \
                          .owned_bytes = owned_bytes, .describe = describe,              \
                          .edge_role = edge_role}

TYPE(th_node, "Node", OBJ_GENERIC);
TYPE(th_mode, "FakeTensorMode", OBJ_FAKE_MODE);
TYPE(th_fconv, "FakeTensorConverter", OBJ_FAKE_CONVERTER);
TYPE(th_mconv, "MetaConverter", OBJ_META_CONVERTER);
TYPE(th_storage, "storage", OBJ_STORAGE);
TYPE(th_fin, "finalize", OBJ_FINALIZER);
TYPE(th_wref, "StorageWeakRef", OBJ_WEAKREF);

obj *th_new(const obj_type *t, uint64_t owned)
{
    obj *o = obj_new(t, sizeof(th_obj));
    cr_assert_not_null(o, "obj_new failed");
    ((th_obj *)o)->owned = owned;
    return o;
}

void th_set(obj *a, int slot, obj *b, const char *label, long index)
{
    th_obj *t = (th_obj *)a;
    obj_set_ref(&t->child[slot], b);
    t->clabel[slot] = label;
    t->cindex[slot] = index;
}

void th_weak(obj *a, int slot, obj *b, const char *label, long index)
{
    th_obj *t = (th_obj *)a;
    if (b)
        obj_weak_incref(b);
    obj *old = t->weak[slot];
    t->weak[slot] = b;
    t->wlabel[slot] = label;
    t->windex[slot] = index;
    if (old)
        obj_weak_decref(old);
}

static char ring[8][160];
static int ring_at;

const char *th_edge(const obj *o, const char *label, long index)
{
    char *b = ring[ring_at++ & 7];
    if (index >= 0)
        snprintf(b, 160, "%s#%llu.%s[%ld]", o->type->name, (unsigned long long)o->id, label,
                 index);
    else
        snprintf(b, 160, "%s#%llu.%s", o->type->name, (unsigned long long)o->id, label);
    return b;
}

const char *th_node_name(const obj *o)
{
    char *b = ring[ring_at++ & 7];
    snprintf(b, 160, "%s#%llu", obj_kind_name(o->type->kind), (unsigned long long)o->id);
    return b;
}

static uint64_t base_bytes;

void th_setup(void)
{
    er_clear();
    obj_set_site("t.scn", 1);
    cr_assert_eq(obj_leftover(), 0, "objects left from before");
    base_bytes = al_live_bytes();
}

void th_teardown(void)
{
    al_fail_at(0, 0);
    gc_collect();
    cr_expect_eq(obj_leftover(), 0, "objects left after the test");
    cr_expect_eq(al_live_bytes(), base_bytes, "allocator bytes left: %lld",
                 (long long)(al_live_bytes() - base_bytes));
}
