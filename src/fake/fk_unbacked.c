/* fk_unbacked.c - the unbacked memos of a fake (designs with unbacked_memo:
 * pytorch-2.14), the version counter that invalidates them, and inference
 * mode, which keeps them from being stored.
 *
 * fake_tensor.py@946abe14 UnbackedMemoDescriptor: item_memo (nonzero_memo,
 * unique_memo alike) is an unbacked SymInt kept on the fake with the
 * fake's _version and its mode's epoch; __get__ answers it only while both
 * are unchanged (and forgets it otherwise), __set__ stores nothing while
 * torch.is_inference_mode_enabled() (pytorch#122147; #122127 was the
 * memo of an inference tensor, which has no version counter). Its
 * local_scalar_dense (item) asks the memo first, else the mode's ShapeEnv
 * for a new unbacked symbol, and memoizes it. A SymInt holds its SymNode,
 * which holds the ShapeEnv: the memo keeps the ShapeEnv alive. The epoch
 * is bumped where a retrace begins (collect_metadata_analysis.py@95bc63ca
 * "prevent memoization from applying": fake_mode.epoch += 1; pytorch#154647,
 * #185499): tracer(m) here. */
#include <stdio.h>
#include <string.h>

#include "core/er.h"
#include "fake/fk_internal.h"

/* The memo: a SymInt, holding the ShapeEnv of its symbol. */
typedef struct fk_symint {
    obj hdr;
    obj *shape_env;            /* strong */
    int64_t sym;               /* u<sym> */
    uint32_t version;          /* the fake's version when it was made */
    uint32_t epoch;            /* its mode's epoch then */
} fk_symint;

static void sym_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_symint *s = (fk_symint *)self;
    if (s->shape_env)
        visit(s->shape_env, "shape_env", -1, arg);
}

static void sym_release(obj *self) { obj_clear_ref(&((fk_symint *)self)->shape_env); }

static void sym_describe(const obj *self, char *buf, size_t n)
{
    snprintf(buf, n, "SymInt u%lld", (long long)((const fk_symint *)self)->sym);
}

static const obj_type symint_type = {
    .name = "SymInt", .kind = OBJ_GENERIC, .traverse = sym_traverse,
    .release = sym_release, .describe = sym_describe,
};

static const char memo_attr[] = "item_memo";
static int inference_on;

void fk_set_inference_mode(int on) { inference_on = on != 0; }
int fk_inference_mode(void) { return inference_on; }
void fk_unbacked_reset(void) { inference_on = 0; }

static ts_tensor *root_of(ts_tensor *t)
{
    while (t->base)
        t = t->base;
    return t;
}

void fk_bump_version(ts_tensor *t)
{
    ts_tensor *r = root_of(t);
    r->version = (r->version + 1) & 0xfffffu;
}

int64_t fk_mode_epoch(const obj *mode)
{
    return fk_is_mode(mode) ? (int64_t)((const fk_mode *)mode)->epoch : 0;
}

/* The memo of f, if still valid at (version, epoch); a stale one is
 * forgotten, as __get__ does. 0 or -1 (ER_OOM never: clearing frees). */
static fk_symint *valid_memo(ts_tensor *f, uint32_t version, uint32_t epoch)
{
    obj *o = obj_attr_get(&f->hdr, memo_attr);
    if (!o || o->type != &symint_type)
        return NULL;
    fk_symint *s = (fk_symint *)o;
    int same_epoch = s->epoch == epoch || fk_bug_state.unbacked_memo_retrace;
    if (s->version == version && same_epoch)
        return s;
    obj_attr_set(&f->hdr, memo_attr, NULL);
    return NULL;
}

static int store_memo(ts_tensor *f, obj *se, int64_t sym, uint32_t version, uint32_t epoch)
{
    if (inference_on && !fk_bug_state.inference_memo)
        return 0;
    fk_symint *s = (fk_symint *)obj_new(&symint_type, sizeof *s);
    if (!s)
        return -1;
    obj_set_ref(&s->shape_env, se);
    s->sym = sym;
    s->version = version;
    s->epoch = epoch;
    int rc = obj_attr_set(&f->hdr, memo_attr, &s->hdr);
    obj_decref(&s->hdr);
    return rc;
}

/* item() of a fake outside the designs with unbacked memos: ER_TYPE naming
 * them (the design table's names). */
static int unbacked_only(void)
{
    unsigned with = 0;
    for (int d = 0; d < FK_D_COUNT; d++)
        if (fk_design_get((fk_design_id)d) && fk_design_get((fk_design_id)d)->unbacked_memo)
            with |= 1u << d;
    char names[96];
    fk_designs_named(with, ", ", "default", names, sizeof names);
    return er_set(ER_TYPE, "item(): fakegc models item() of a fake only under designs "
                  "with unbacked memos (%s)", names);
}

int fk_item(ts_tensor *f, int64_t *out)
{
    if (!fk_design_now()->unbacked_memo)
        return unbacked_only();
    if (!ts_is_fake(f))
        return er_set(ER_TYPE, "item() needs a fake tensor (a real tensor's item() is its "
                      "value, which fakegc does not keep)");
    if (ts_numel(f) != 1)
        return er_set(ER_SHAPE, "a Tensor with %lld elements cannot be converted to Scalar",
                      (long long)ts_numel(f));
    obj *mode = fk_fake_mode_of(f);
    if (!mode)
        return -1;
    fk_mode *m = (fk_mode *)mode;
    if (!m->shape_env)
        return er_set(ER_TYPE, "item(): DataDependentOutputException (the fake's mode has "
                      "no shape_env)");
    uint32_t version = root_of(f)->version, epoch = m->epoch;
    fk_symint *s = valid_memo(f, version, epoch);
    if (s) {
        *out = s->sym;
        return 0;
    }
    int64_t sym = fk_shape_new_unbacked(m->shape_env);
    if (store_memo(f, m->shape_env, sym, version, epoch) < 0)
        return -1;
    *out = sym;
    return 0;
}

int fk_storage_accessed(ts_tensor *f)
{
    if (!fk_design_now()->constant_scalar || !ts_is_fake(f) || !fk_const_get(f))
        return 0;
    return fk_const_set(f, NULL);
}
