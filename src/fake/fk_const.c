/* fk_const.c - constant fakes (designs.md, "Common to both 2.x designs"
 * rule 6; the same machinery is in 1.13.1: fake_tensor.py@1.13.1:140-169,
 * 195-215,871-873).
 *
 * A fake's constant is its "constant" edge (FakeTensor.constant: a strong
 * reference to a real tensor). The converter's constant map
 * (constant_storage_mapping, fake_tensor.py@946abe14:241-253) has one ref
 * per constant conversion: StorageWeakRef(constant's storage) and
 * weakref.ref(fake), both weak counts here. Refs leave only through
 * invalidate_constant_aliases (:255-268) - refs to dead fakes stay, so the
 * map only grows otherwise (memo_constants) - and, since pytorch#184445,
 * through clear_non_cpu_constants. Under const_storage_kept (pytorch-2.3:
 * 2.6.0) a ref's StorageWeakRef keeps the storage object alive, a strong
 * count here: measured on 2.6.0, `with m: x = torch.tensor(())` (a
 * propagated constant) then `del x` leaves describer.lookup_storage at 1
 * while the ref stays in the map, and a StorageWeakRef kept on a plain
 * tensor's storage does the same until it is dropped; 2.14.1 drops the
 * entry with the tensor (tests/record/probe_const_storage.py).
 *
 * Constant propagation (:1554-1587, CONSTANT_NUMEL_LIMIT 1 at :98): an op
 * whose fake inputs all carry constants runs on the constants; when every
 * tensor result may be a constant (numel <= 1, strided, not meta:
 * may_turn_const, :1898-1904) the results are constant conversions
 * (memoized), else their storages' constants are invalidated and the op runs
 * on meta. An in-place op writing a constant fake otherwise invalidates that
 * constant's storage (invalidate_written_to_constants, :1592,1906-1922). */
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "fake/fk_internal.h"

#define CONSTANT_NUMEL_LIMIT 1
static const char const_attr[] = "constant";

ts_tensor *fk_const_get(const ts_tensor *f)
{
    /* the edge is an attribute a scenario could set to anything */
    obj *c = obj_attr_get(&f->hdr, const_attr);
    return c && ts_is_tensor(c) && !obj_expired(c) ? ts_of(c) : NULL;
}

/* pytorch#177496 (~2.12): a fake of a 0-d CPU tensor also keeps it as
 * constant_scalar (for __bool__ and item()); the design (pytorch-2.14)
 * drops it whenever constant is cleared, which constant-scalar-kept undoes. */
static const char scalar_attr[] = "constant_scalar";

int fk_const_set(ts_tensor *f, ts_tensor *c)
{
    if (obj_attr_set(&f->hdr, const_attr, c ? &c->hdr : NULL) < 0)
        return -1;
    if (!fk_design_now()->constant_scalar)
        return 0;
    if (!c)
        return fk_bug_state.constant_scalar_kept ? 0 : obj_attr_set(&f->hdr, scalar_attr, NULL);
    if (c->ndim == 0 && c->device.type == TS_DEV_CPU)
        return obj_attr_set(&f->hdr, scalar_attr, &c->hdr);
    return 0;
}

int fk_constant_of(ts_tensor *f, ts_tensor **out)
{
    if (!ts_is_fake(f))
        return er_set(ER_TYPE, "constant() needs a fake tensor ('Tensor' object has no "
                      "attribute 'constant')");
    *out = fk_const_get(f);
    return 0;
}

/* ---- the map ---- */

/* The ref's counts back (a kept storage may die here). */
static void cref_release(fk_cref r)
{
    obj_weak_decref(&r.fake->hdr);
    if (r.kept)
        obj_decref(&r.st->hdr);
    else
        obj_weak_decref(&r.st->hdr);
}

void fk_cmap_free(fk_cmap *m)
{
    fk_cref *v = m->v;
    size_t n = m->n, cap = m->cap;
    m->v = NULL;
    m->n = m->cap = 0;
    for (size_t i = 0; i < n; i++)
        cref_release(v[i]);
    al_free(v, cap * sizeof *v, AL_K_MEMO);
}

void fk_cmap_traverse_weak(const fk_cmap *m, obj_visit_fn visit, void *arg)
{
    for (size_t i = 0; i < m->n; i++) {
        if (!m->v[i].kept)
            visit(&m->v[i].st->hdr, "constant_map", (long)i, arg);
        visit(&m->v[i].fake->hdr, "constant_ref", (long)i, arg);
    }
}

void fk_cmap_traverse(const fk_cmap *m, obj_visit_fn visit, void *arg)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].kept)
            visit(&m->v[i].st->hdr, "constant_map", (long)i, arg);
}

static int cmap_add(fk_cmap *m, ts_storage *st, ts_tensor *f)
{
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 4;
        fk_cref *nv = al_realloc(m->v, m->cap * sizeof *nv, ncap * sizeof *nv, AL_K_MEMO,
                                 "fk constant map");
        if (!nv)
            return er_set(ER_OOM, "out of memory growing the constant map");
        m->v = nv;
        m->cap = ncap;
    }
    int kept = fk_design_now()->const_storage_kept;
    if (kept)
        obj_incref(&st->hdr);
    else
        obj_weak_incref(&st->hdr);
    obj_weak_incref(&f->hdr);
    m->v[m->n] = (fk_cref){.st = st, .fake = f, .kept = kept};
    m->n++;
    return 0;
}

/* Drop ref i (order kept: the map is read in insertion order). */
static void cmap_drop(fk_cmap *m, size_t i)
{
    fk_cref r = m->v[i];
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
    cref_release(r);
}

/* invalidate_constant_aliases(t): every live fake recorded under t's
 * storage loses its constant, and the storage's refs leave. */
void fk_const_invalidate(fk_fconv *fc, const ts_tensor *t)
{
    if (t->layout != TS_STRIDED || !t->storage || ts_is_fake(t))
        return;
    for (size_t i = 0; i < fc->cmap.n;) {
        fk_cref r = fc->cmap.v[i];
        if (r.st != t->storage) {
            i++;
            continue;
        }
        if (!obj_expired(&r.fake->hdr))
            fk_const_set(r.fake, NULL);
        cmap_drop(&fc->cmap, i);
    }
}

/* make_constant=True: t must be able to be one (TypeError otherwise). */
int fk_const_check(const ts_tensor *t)
{
    if (ts_is_fake(t) || t->layout != TS_STRIDED || ts_is_meta(t) ||
        ts_numel(t) > CONSTANT_NUMEL_LIMIT)
        return er_set(ER_TYPE, "fake(t, constant=true) needs a real strided tensor of at "
                      "most %d element, got %s%s with %lld", CONSTANT_NUMEL_LIMIT,
                      ts_is_fake(t) ? "a fake" : ts_is_meta(t) ? "a meta" : "a",
                      t->layout == TS_STRIDED ? " tensor" : " sparse tensor",
                      (long long)ts_numel(t));
    return 0;
}

/* add_constant_storage_mapping(f) after a constant conversion of t. */
int fk_const_record(fk_fconv *fc, ts_tensor *f, ts_tensor *t)
{
    return cmap_add(&fc->cmap, t->storage, f);
}

int64_t fk_clear_non_cpu_constants(obj *mode)
{
    if (!fk_is_mode(mode))
        return er_set(ER_TYPE, "clear_non_cpu_constants() needs a fake mode");
    if (fk_bug_state.constant_retains_real)
        return 0;                       /* before pytorch#184445 */
    fk_mode *m = (fk_mode *)mode;
    obj *holder = fk_mode_holder(m);
    int64_t n = 0;
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o)) {
        if (o->type->kind != OBJ_TENSOR || !ts_is_fake(ts_of(o)) || ts_of(o)->mode != holder)
            continue;
        ts_tensor *c = fk_const_get(ts_of(o));
        if (c && c->device.type != TS_DEV_CPU) {
            fk_const_set(ts_of(o), NULL);
            n++;
        }
    }
    /* their map refs: those whose fake lives without a constant now */
    fk_cmap *cm = &m->converter->cmap;
    for (size_t i = 0; i < cm->n;)
        if (!obj_expired(&cm->v[i].fake->hdr) && !fk_const_get(cm->v[i].fake))
            cmap_drop(cm, i);
        else
            i++;
    return n;
}

/* ---- propagation ---- */

static int may_turn_const(const ts_tensor *t)
{
    return t->layout == TS_STRIDED && !ts_is_fake(t) && !ts_is_meta(t) &&
           ts_numel(t) <= CONSTANT_NUMEL_LIMIT;
}

/* The op on the constants of self (and other), when they all carry one:
 * 1 with *out a constant fake, 0 to run on meta (aliases of a result that
 * cannot be constant invalidated), -1 on error. */
int fk_const_pre_op(ts_op op, ts_tensor *self, const ts_args *a, fk_mode *m,
                    ts_tensor **out)
{
    const ts_tensor *other = a ? a->other : NULL;
    ts_tensor *cs = fk_const_get(self);
    ts_tensor *co = other && ts_is_fake(other) ? fk_const_get(other) : NULL;
    *out = NULL;
    /* in-place view ops (set_) and the grad flag are not run on constants */
    if (!cs || (other && !co) || op == TS_OP_SET_ || op == TS_OP_REQUIRES_GRAD_)
        return 0;
    ts_args inner;
    if (a)
        inner = *a;
    else
        memset(&inner, 0, sizeof inner);
    inner.other = co;
    ts_tensor *r = ts_apply(op, cs, &inner);
    if (!r)
        return -1;
    if (may_turn_const(r)) {
        fk_fake_opts fo = {.constant = 1};
        *out = fk_fake_v3(&m->hdr, r, &fo);
        obj_decref(&r->hdr);
        return *out ? 1 : -1;
    }
    fk_const_invalidate(m->converter, r);
    obj_decref(&r->hdr);
    return 0;
}

/* invalidate_written_to_constants: an in-place op writes self. */
void fk_const_written(ts_op op, ts_tensor *self, fk_mode *m)
{
    ts_tensor *c = ts_op_is_inplace(op) ? fk_const_get(self) : NULL;
    if (c)
        fk_const_invalidate(m->converter, c);
}
