/* fk_mode3.c - version 3 of the fake mode (designs.md "Additions, version
 * 3"): fake_mode(shape_env=, propagate_real=, mode_ref=), m.fake(t,
 * constant=, dynamic=), what a conversion gives each fake it builds, and the
 * hooks around an op on fakes (the dispatch cache, constant propagation).
 *
 * Edges a fake gains here (fakegc names them as PyTorch's attributes):
 *   "constant"    the real tensor of a constant conversion (fk_const.c);
 *   "real_tensor" a copy of its real tensor, in a propagate_real mode
 *                 (meta_utils.py@0f315d37:1725, fake_tensor.py@946abe14:961-966);
 *   "shape_env"   the ShapeEnv its symbolic sizes belong to (dynamic=true,
 *                 and ops on such fakes).
 * A fake of a mode_ref="weak" mode holds the mode's weak handle instead of
 * the mode (pytorch#168326's fix; the fake-holds-mode bug undoes it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/us.h"
#include "core/wr.h"
#include "fake/fk_internal.h"

obj *fk_mode_holder(fk_mode *m)
{
    return m->weak_self && !fk_bug_state.fake_holds_mode ? m->weak_self : &m->hdr;
}

obj *fk_mode_new_v3(fk_policy policy, int64_t sweep_every, const fk_mode_opts *o)
{
    if (o->shape_env && !fk_is_shape_env(o->shape_env)) {
        er_set(ER_TYPE, "fake_mode(shape_env=) needs a shape_env()");
        return NULL;
    }
    fk_mode *m = (fk_mode *)fk_mode_new(policy, sweep_every);
    if (!m)
        return NULL;
    obj_set_ref(&m->shape_env, o->shape_env);
    m->propagate_real = o->propagate_real != 0;
    if (o->mode_ref_weak) {
        m->weak_self = wr_new(&m->hdr, NULL, NULL);
        if (!m->weak_self) {
            obj_decref(&m->hdr);
            return NULL;
        }
    }
    return &m->hdr;
}

obj *fk_fake_mode_of(ts_tensor *t)
{
    if (!ts_is_fake(t) || !t->mode) {
        er_set(ER_TYPE, "'Tensor' object has no attribute 'fake_mode' (not a fake tensor)");
        return NULL;
    }
    if (t->mode->type->kind != OBJ_WEAKREF)
        return t->mode;
    obj *m = wr_get(t->mode);
    if (!m)
        er_set(ER_DEAD_REF, "the fake's mode (FakeTensorMode#%llu, held weakly) is dead",
               (unsigned long long)wr_target_id(t->mode));
    return m;
}

obj *fk_mode_shape_env(obj *mode)
{
    return fk_is_mode(mode) ? ((fk_mode *)mode)->shape_env : NULL;
}

/* The conversion in progress (m.fake(t, constant=, dynamic=)): what each
 * fake it builds gets. Conversions do not nest across modes. */
static ts_tensor *making_const;   /* constant = t (the top tensor, even for a
                                     base built on the way: the "BUG" comment
                                     at fake_tensor.py@946abe14:327-329) */
static obj *making_dynamic;       /* the ShapeEnv of a dynamic conversion */
static uint64_t built;            /* fakes built so far (a miss moves it) */

/* The closure cycle of pytorch#175660: a garbage cell and closure that
 * hold the MetaConverter until the collector runs. */
typedef struct fk_closure {
    obj hdr;
    obj *conv, *cell;          /* strong: the converter; itself (the cycle) */
} fk_closure;

static void closure_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_closure *c = (fk_closure *)self;
    if (c->conv)
        visit(c->conv, "closure", -1, arg);
    if (c->cell)
        visit(c->cell, "cell", -1, arg);
}

static void closure_release(obj *self)
{
    fk_closure *c = (fk_closure *)self;
    obj_clear_ref(&c->conv);
    obj_clear_ref(&c->cell);
}

static const obj_type closure_type = {
    .name = "closure", .kind = OBJ_GENERIC, .traverse = closure_traverse,
    .release = closure_release,
};

static int leave_closure_cycle(fk_mode *m)
{
    fk_closure *c = (fk_closure *)obj_new(&closure_type, sizeof *c);
    if (!c)
        return -1;
    obj_set_ref(&c->conv, &m->converter->meta->hdr);
    obj_set_ref(&c->cell, &c->hdr);
    obj_decref(&c->hdr);           /* garbage now: only the cycle holds it */
    return 0;
}

int fk_v3_built(fk_mode *m, ts_tensor *fake, ts_tensor *real)
{
    built++;
    if (making_const && fk_const_set(fake, making_const) < 0)
        return -1;
    if (making_dynamic && (obj_attr_set(&fake->hdr, "shape_env", making_dynamic) < 0 ||
                           fk_fake_dynamic_sizes(fake, making_dynamic) < 0))
        return -1;
    if (m->propagate_real && !real->base && real->layout == TS_STRIDED &&
        !ts_is_meta(real) && !ts_is_fake(real)) {
        ts_args none;
        memset(&none, 0, sizeof none);
        ts_tensor *copy = ts_apply(TS_OP_CLONE, real, &none);
        int rc = copy ? obj_attr_set(&fake->hdr, "real_tensor", &copy->hdr) : -1;
        obj_decref(copy ? &copy->hdr : NULL);
        if (rc < 0)
            return -1;
    }
    if (fk_bug_state.converter_closure_cycle && leave_closure_cycle(m) < 0)
        return -1;
    return 0;
}

ts_tensor *fk_fake_v3(obj *mode, ts_tensor *t, const fk_fake_opts *o)
{
    if (!fk_is_mode(mode)) {
        er_set(ER_TYPE, "fake() needs a fake mode");
        return NULL;
    }
    fk_mode *m = (fk_mode *)mode;
    if ((o->constant || o->dynamic) && o->device) {
        er_set(ER_TYPE, "fake(t, device=) takes neither constant= nor dynamic=");
        return NULL;
    }
    if (o->dynamic && (o->constant || !m->shape_env)) {
        er_set(ER_TYPE, "fake(t, dynamic=true) needs a mode with a shape_env and no "
               "constant=true");
        return NULL;
    }
    if (o->constant && fk_const_check(t) < 0)
        return NULL;
    ts_tensor *saved_const = making_const;
    obj *saved_dyn = making_dynamic;
    uint64_t before = built;
    making_const = o->constant ? t : NULL;
    making_dynamic = o->dynamic ? m->shape_env : NULL;
    ts_tensor *f = fk_fake(mode, t, o->device);
    making_const = saved_const;
    making_dynamic = saved_dyn;
    /* a memo hit returns the fake unchanged (fake_tensor.py@946abe14:304) */
    if (f && o->constant && built != before && fk_const_record(m->converter, f, t) < 0) {
        obj_decref(&f->hdr);
        return NULL;
    }
    return f;
}

/* ---- around an op on fakes ---- */

static obj *symbolic_of(const ts_tensor *t)
{
    obj *se = t && ts_is_fake(t) ? obj_attr_get(&t->hdr, "shape_env") : NULL;
    return fk_is_shape_env(se) ? se : NULL;
}

int fk_v3_pre_op(ts_op op, ts_tensor *self, const ts_args *a, obj *holder, fk_opctx *cx,
                 ts_tensor **out)
{
    memset(cx, 0, sizeof *cx);
    *out = NULL;
    obj *mode = holder;
    if (holder && holder->type->kind == OBJ_WEAKREF && !(mode = wr_get(holder)))
        return er_set(ER_DEAD_REF, "%s: the fakes' mode (held weakly) is dead",
                      ts_op_name(op));
    cx->mode = mode;
    if (!fk_is_mode(mode))
        return 0;
    fk_mode *m = (fk_mode *)mode;
    const ts_tensor *other = a ? a->other : NULL;
    cx->symbolic = symbolic_of(self) ? symbolic_of(self) : symbolic_of(other);
    uint64_t s1 = fk_fake_sym_sig(self), s2 = other && ts_is_fake(other) ?
                                                  fk_fake_sym_sig(other) : 0;
    if (s1 || s2)      /* the op, its arguments and its inputs' expressions */
        cx->sym_in = fk_sym_combine('@', 0, fk_op_key(op, self, a) | 1, 0,
                                    fk_sym_combine('&', 1, s1, 2, s2));
    if (fk_cache_pre_op(op, self, a, m, cx) < 0)
        return -1;
    int rc = fk_const_pre_op(op, self, a, m, out);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    fk_const_written(op, self, m);
    return 0;
}

int fk_v3_post_op(ts_op op, ts_tensor *self, const ts_args *a, ts_tensor *out, fk_opctx *cx)
{
    (void)op, (void)a;
    if (out != self && cx->symbolic && obj_attr_set(&out->hdr, "shape_env", cx->symbolic) < 0)
        return -1;
    /* its sizes are a function of the op and its inputs' expressions: the
     * same op on the same symbolic inputs gives the same signature */
    if (out && out != self && cx->sym_in && fk_fake_set_sym(out, NULL, cx->sym_in) < 0)
        return -1;
    return fk_cache_post_op(cx, out);
}

/* ---- premature-weak-clear (pytorch#145253): the collector clears the
 * weak references to every object a collected cycle referenced that
 * survives; here the memo keys. Edges are recorded before collecting. */

typedef struct edge_rec {
    uint64_t src, dst;
    obj *to;
} edge_rec;

typedef struct edge_log {
    edge_rec *v;
    size_t n, cap;
    const obj *from;
    int failed;
} edge_log;

static void log_edge(obj *child, const char *label, long index, void *arg)
{
    edge_log *l = arg;
    (void)label, (void)index;
    if (child->type->kind != OBJ_TENSOR || l->failed)
        return;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 256;
        edge_rec *nv = al_realloc(l->v, l->cap * sizeof *nv, ncap * sizeof *nv, AL_K_HEAP,
                                  "fk edge log");
        if (!nv) {
            l->failed = 1;
            return;
        }
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = (edge_rec){l->from->id, child->id, child};
}

uint64_t fk_collect_young(int generation)
{
    return gc_collect_gen(generation);
}

uint64_t fk_collect(void)
{
    if (!fk_bug_state.premature_weak_clear)
        return gc_collect();
    edge_log l = {0};
    for (obj *o = obj_live_first(); o && !l.failed; o = obj_iter_next(o)) {
        l.from = o;
        obj_traverse(o, log_edge, &l);
    }
    uint64_t freed = gc_collect();
    us live = US_INIT(AL_K_HEAP, "fk live ids");
    int oom = l.failed || us_reserve(&live, (size_t)obj_live_count() + 1) != 0;
    for (obj *o = obj_live_first(); !oom && o; o = obj_iter_next(o))
        us_add(&live, o->id);   /* reserved: cannot fail */
    for (size_t i = 0; !oom && i < l.n; i++)
        if (!us_has(&live, l.v[i].src) && us_has(&live, l.v[i].dst))
            fk_forget_key(l.v[i].to);
    us_free(&live);
    al_free(l.v, l.cap * sizeof *l.v, AL_K_HEAP);
    return freed;
}
