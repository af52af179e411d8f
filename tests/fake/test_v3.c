/* Tests of the version-3 fake layer (src/fake/fk_const.c, fk_mode3.c,
 * fk_shape.c, fk_tracer.c, fk_cache.c; designs.md rule 6 and "Additions,
 * version 3"): the constant map, propagation and invalidation, weak mode
 * references, the dispatch cache per design, a compile's end, and the
 * bugs that undo each. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/er.h"
#include "core/gc.h"
#include "core/wr.h"
#include "fake/fk.h"

static void v_setup(void)
{
    fk_inject("", NULL, 0);
    fk_design_set(FK_D_DEFAULT);
    fk_cache_clear();
    er_clear();
}

static void v_teardown(void)
{
    fk_cache_clear();
    fk_design_set(FK_D_DEFAULT);
    fk_reset();
    gc_collect();
    fk_inject("", NULL, 0);
    cr_assert_eq(obj_leftover(), 0, "objects left after the test");
}

#define EQ(a, b) do { long a_ = (long)(a), b_ = (long)(b); \
    cr_assert_eq(a_, b_, "%s == %ld, want %ld", #a, a_, b_); } while (0)

TestSuite(v3, .init = v_setup, .fini = v_teardown);

static int64_t constants(obj *m)
{
    fk_counters c;
    cr_assert_eq(fk_counters_get(m, &c), 0);
    return c.memo_constants;
}

static ts_tensor *scalar(ts_device dev)
{
    ts_tensor *t = ts_empty(0, NULL, TS_I64, dev, TS_INIT_ZEROS, 0);
    cr_assert_not_null(t);
    return t;
}

static ts_tensor *cfake(obj *m, ts_tensor *t)
{
    fk_fake_opts o = {.constant = 1};
    ts_tensor *f = fk_fake_v3(m, t, &o);
    cr_assert_not_null(f, "%s", er_message());
    return f;
}

Test(v3, constant_conversion_records_one_ref_and_a_hit_none)
{
    fk_design_set(FK_D_2_0);
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    ts_tensor *c = scalar(ts_cpu()), *got = NULL;
    ts_tensor *f = cfake(m, c);
    EQ(fk_constant_of(f, &got), 0);
    cr_assert_eq(got, c);
    EQ(constants(m), 1);
    ts_tensor *g = cfake(m, c);
    cr_assert_eq(g, f, "a memo hit returns the fake");
    EQ(constants(m), 1);
    EQ(c->storage->hdr.weak >= 1, 1);
    obj_decref(&g->hdr);
    obj_decref(&f->hdr);
    EQ(constants(m), 1);                   /* a ref to a dead fake stays */
    obj_decref(&c->hdr);
    obj_decref(m);
}

Test(v3, constant_must_be_small_and_real)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    int64_t sz[1] = {3};
    ts_tensor *t = ts_empty(1, sz, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0);
    fk_fake_opts o = {.constant = 1};
    cr_assert_null(fk_fake_v3(m, t, &o));
    EQ(er_kind_get(), ER_TYPE);
    er_clear();
    EQ(constants(m), 0);
    obj_decref(&t->hdr);
    obj_decref(m);
}

Test(v3, propagation_and_invalidation)
{
    fk_design_set(FK_D_2_0);
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    ts_tensor *c = scalar(ts_cpu()), *got = NULL;
    ts_tensor *f = cfake(m, c);
    ts_args a;
    memset(&a, 0, sizeof a);
    a.other = f;
    ts_tensor *h = fk_apply(TS_OP_ADD, f, &a);
    cr_assert_not_null(h);
    EQ(fk_constant_of(h, &got), 0);
    cr_assert_not_null(got, "an op on constants of 1 element gives a constant");
    EQ(constants(m), 2);
    /* an in-place write by a non-constant fake */
    ts_tensor *r = scalar(ts_cpu());
    ts_tensor *x = fk_fake(m, r, NULL);
    a.other = x;
    ts_tensor *same = fk_apply(TS_OP_ADD_, f, &a);
    cr_assert_eq(same, f);
    EQ(fk_constant_of(f, &got), 0);
    cr_assert_null(got, "written by a non-constant: no constant");
    EQ(constants(m), 1);
    obj_decref(&same->hdr);
    obj_decref(&x->hdr);
    obj_decref(&r->hdr);
    obj_decref(&h->hdr);
    obj_decref(&f->hdr);
    obj_decref(&c->hdr);
    obj_decref(m);
}

Test(v3, clear_non_cpu_constants_and_the_bug)
{
    for (int bug = 0; bug < 2; bug++) {
        fk_inject(bug ? "constant-retains-real" : "", NULL, 0);
        obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
        ts_device cuda;
        cr_assert_eq(ts_device_parse("cuda", &cuda), 0);
        ts_tensor *c = scalar(cuda), *k = scalar(ts_cpu()), *got = NULL;
        ts_tensor *fc = cfake(m, c), *fk = cfake(m, k);
        EQ(fk_clear_non_cpu_constants(m), bug ? 0 : 1);
        EQ(fk_constant_of(fc, &got), 0);
        cr_assert_eq(got, bug ? c : NULL);
        EQ(fk_constant_of(fk, &got), 0);
        cr_assert_eq(got, k);
        EQ(constants(m), bug ? 2 : 1);
        obj_decref(&fc->hdr);
        obj_decref(&fk->hdr);
        obj_decref(&c->hdr);
        obj_decref(&k->hdr);
        obj_decref(m);
    }
}

Test(v3, weak_mode_ref_and_fake_holds_mode)
{
    for (int bug = 0; bug < 2; bug++) {
        fk_inject(bug ? "fake-holds-mode" : "", NULL, 0);
        fk_mode_opts mo = {.mode_ref_weak = 1};
        obj *m = fk_mode_new_v3(FK_SWEEP_EAGER, 128, &mo);
        ts_tensor *t = scalar(ts_cpu());
        ts_tensor *f = fk_fake(m, t, NULL);
        obj *wm = wr_new(m, NULL, NULL);
        cr_assert_eq(fk_fake_mode_of(f), m);
        obj_decref(m);
        EQ(wr_get(wm) == NULL, !bug);
        EQ(fk_fake_mode_of(f) == NULL, !bug);
        if (!bug)
            EQ(er_kind_get(), ER_DEAD_REF);
        er_clear();
        obj_decref(&f->hdr);
        obj_decref(wm);
        obj_decref(&t->hdr);
    }
}

static fk_cache_stats cache(void)
{
    fk_cache_stats s;
    fk_cache_stats_get(&s);
    return s;
}

/* x.mul(2) twice on fakes of a fresh mode: misses, hits */
static void mul_twice(void)
{
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    int64_t sz[1] = {4};
    ts_tensor *t = ts_empty(1, sz, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0);
    ts_tensor *x = fk_fake(m, t, NULL);
    ts_args a;
    memset(&a, 0, sizeof a);
    a.has_scalar = 1;
    a.scalar = 2;
    ts_tensor *y = fk_apply(TS_OP_MUL, x, &a), *z = fk_apply(TS_OP_MUL, x, &a);
    cr_assert(y && z);
    obj_decref(&z->hdr);
    obj_decref(&y->hdr);
    obj_decref(&x->hdr);
    obj_decref(&t->hdr);
    obj_decref(m);
}

Test(v3, dispatch_cache_live_under_23_only)
{
    fk_design_set(FK_D_2_0);
    mul_twice();
    EQ(cache().size, 0);
    EQ(cache().misses, 0);
    fk_design_set(FK_D_2_3);
    mul_twice();
    EQ(cache().size, 1);
    EQ(cache().misses, 1);
    EQ(cache().hits, 1);
    mul_twice();
    EQ(cache().hits, 3);
    fk_cache_clear();
    EQ(cache().size, 0);
    EQ(cache().hits, 0);
}

static int64_t weak_on(const obj *o) { return (int64_t)o->weak; }

Test(v3, finish_clears_under_23_unless_no_clear_after_compile)
{
    for (int bug = 0; bug < 2; bug++) {
        fk_inject(bug ? "no-clear-after-compile" : "", NULL, 0);
        fk_design_set(FK_D_2_3);
        obj *se = fk_shape_env_new();
        fk_mode_opts mo = {.shape_env = se};
        obj *m = fk_mode_new_v3(FK_SWEEP_EAGER, 128, &mo);
        obj *tr = fk_tracer_new(m);
        int64_t sz[1] = {4};
        ts_tensor *p = ts_empty(1, sz, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0);
        ts_tensor *f = fk_tracer_input(tr, p);
        cr_assert_not_null(f);
        EQ(fk_shape_env_tracked(se), 1);
        EQ(weak_on(&p->hdr), 2);           /* lookup key, TensorWeakRef */
        EQ(fk_tracer_finish(tr), 0);
        EQ(fk_shape_env_tracked(se), 0);
        EQ(weak_on(&p->hdr), bug ? 1 : 0);
        obj_decref(&f->hdr);
        obj_decref(tr);
        obj_decref(m);
        obj_decref(se);
        obj_decref(&p->hdr);
    }
}

Test(v3, premature_weak_clear_forgets_survivors_keys)
{
    for (int bug = 0; bug < 2; bug++) {
        fk_inject(bug ? "premature-weak-clear" : "", NULL, 0);
        fk_design_set(FK_D_2_0);
        obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
        ts_tensor *g = scalar(ts_cpu());
        ts_tensor *f = fk_fake(m, g, NULL);
        ts_tensor *box = scalar(ts_cpu());        /* box.held = g; box.me = box */
        cr_assert_eq(obj_attr_set(&box->hdr, "held", &g->hdr), 0);
        cr_assert_eq(obj_attr_set(&box->hdr, "me", &box->hdr), 0);
        obj_decref(&box->hdr);
        fk_collect();
        fk_counters c;
        fk_counters_get(m, &c);
        EQ(c.memo_meta, bug ? 0 : 1);
        obj_decref(&f->hdr);
        obj_decref(&g->hdr);
        obj_decref(m);
    }
}
