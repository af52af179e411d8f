/* tcore.c - shared helpers of the core tests (see tcore.h). */
#include "core/tcore.h"

#include <criterion/criterion.h>

#include "alloc/al.h"
#include "core/gc.h"

void (*tn_release_hook)(obj *self);
static uint64_t baseline;

static void tn_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    tnode *n = (tnode *)self;
    for (int i = 0; i < TN_SLOTS; i++)
        if (n->slot[i])
            visit(n->slot[i], "slot", i, arg);
}

static void tn_release(obj *self)
{
    tnode *n = (tnode *)self;
    if (tn_release_hook)
        tn_release_hook(self);
    for (int i = 0; i < TN_SLOTS; i++)
        obj_clear_ref(&n->slot[i]);
}

const obj_type tnode_type = {
    .name = "tnode",
    .kind = OBJ_GENERIC,
    .traverse = tn_traverse,
    .release = tn_release,
};

obj *tn_new_tag(int tag)
{
    obj *o = obj_new(&tnode_type, sizeof(tnode));
    cr_assert_not_null(o, "obj_new(tnode) failed");
    ((tnode *)o)->tag = tag;
    return o;
}

obj *tn_new(void) { return tn_new_tag(0); }

void tn_set(obj *n, int i, obj *v) { obj_set_ref(&((tnode *)n)->slot[i], v); }
obj *tn_get(const obj *n, int i) { return ((const tnode *)n)->slot[i]; }
int tn_tag(const obj *n) { return ((const tnode *)n)->tag; }

void tc_begin(void)
{
    baseline = al_live_bytes();
    gc_set_debug(1);
}

void tc_verify(void)
{
    char why[256] = "";
    cr_assert_eq(obj_verify(why, sizeof why), 0, "obj_verify: %s", why);
}

void tc_end(void)
{
    tc_verify();
    cr_assert_eq(obj_deferred_count(), 0, "deferred callbacks left: %zu",
                 obj_deferred_count());
    cr_assert_eq(obj_leftover(), 0, "objects left: %llu live, %llu zombie",
                 (unsigned long long)obj_live_count(),
                 (unsigned long long)obj_zombie_count());
    cr_assert_eq(al_live_bytes(), baseline, "allocator bytes %llu, baseline %llu",
                 (unsigned long long)al_live_bytes(), (unsigned long long)baseline);
}

void tc_log_add(tc_log *l, int x)
{
    cr_assert_lt(l->n, 64, "log full");
    l->v[l->n++] = x;
}
