/* fk_ops.c - the fake op wrapper, constructors under a mode, and the
 * injectable-bug switchboard. */
#include <stdio.h>
#include <string.h>

#include "core/er.h"
#include "core/wr.h"
#include "fake/fk_internal.h"

ts_tensor *fk_wrap_new(obj *mode, ts_tensor *meta, ts_device device, int op_output)
{
    if (!fk_is_mode(mode)) {
        er_set(ER_TYPE, "not a fake mode");
        return NULL;
    }
    ts_tensor *f = ts_fake_new(meta, fk_mode_holder((fk_mode *)mode), device, 0);
    if (f && !op_output && ((fk_mode *)mode)->converter->design->ctor_outputs_memoized &&
        fk_memo_op_output(mode, f) != 0) {
        obj_decref(&f->hdr);
        return NULL;
    }
    return f;
}

/* After set_ on a fake's meta tensor the fake's metadata follow it (the
 * only in-place op that changes geometry; a fake wrapping a meta tensor
 * the scenario also holds keeps its own copy otherwise, as PyTorch's
 * _make_subclass does). */
static int refresh_from_meta(ts_tensor *f)
{
    const ts_tensor *m = f->meta;
    if (ts_set_ndim(f, m->ndim) != 0)
        return -1;
    memcpy(f->sizes, m->sizes, (size_t)m->ndim * sizeof *f->sizes);
    memcpy(f->strides, m->strides, (size_t)m->ndim * sizeof *f->strides);
    f->storage_offset = m->storage_offset;
    if (m->requires_grad && !f->requires_grad) {
        f->requires_grad = 1;
        f->is_leaf = 0;
    }
    return 0;
}

static const char non_fake_msg[] =
    "%s: Invoking operators with non-Fake Tensor inputs in FakeTensorMode is not yet "
    "supported. Please convert all Tensors to FakeTensors first.";

/* The active mode's design says a fake of another mode raises
 * (foreign_fakes_raise), and self is one (its inputs share its mode here). */
static int foreign_fake(obj *active, const ts_tensor *self)
{
    if (!fk_is_mode(active) || !((fk_mode *)active)->converter->design->foreign_fakes_raise)
        return 0;
    obj *h = self->mode;
    obj *of = h && h->type->kind == OBJ_WEAKREF ? wr_get(h) : h;
    return of != active;
}

ts_tensor *fk_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    return fk_apply_in(op, self, a, NULL);
}

/* Run op on the meta tensors behind fakes and wrap the result. */
ts_tensor *fk_apply_in(ts_op op, ts_tensor *self, const ts_args *a, obj *active)
{
    const ts_tensor *other = a ? a->other : NULL;
    int self_fake = ts_is_fake(self);
    int other_fake = other && ts_is_fake(other);
    if (!self_fake && !other_fake)
        return ts_apply(op, self, a);
    if (op == TS_OP_REQUIRES_GRAD_)
        return ts_apply(op, self, a);   /* a flag of the fake itself */

    obj *mode = self_fake ? self->mode : other->mode;
    ts_device dev = self_fake ? self->device : other->device;
    if (self_fake && other_fake && self->mode != other->mode) {
        er_set(ER_TYPE, "%s: Mixing modes NYI (fake tensors from two different fake "
               "modes)", ts_op_name(op));
        return NULL;
    }
    if (!self_fake || (other && !other_fake)) {
        er_set(ER_TYPE, non_fake_msg, ts_op_name(op));
        return NULL;
    }
    if (active && foreign_fake(active, self)) {
        er_set(ER_TYPE, "%s: Mixing fake modes NYI (a fake of another mode under `with`)",
               ts_op_name(op));
        return NULL;
    }
    if (active)
        mode = fk_is_mode(active) ? fk_mode_holder((fk_mode *)active) : active;
    ts_args inner;
    if (a)
        inner = *a;
    else
        memset(&inner, 0, sizeof inner);
    ts_tensor *m_self = self->meta;
    if (other_fake)
        inner.other = other->meta;
    if (ts_op_is_inplace(op)) {
        /* autograd checks the fakes the user holds (their grad flags are
         * their own: requires_grad_() sets the fake's, not its meta
         * tensor's), before FakeTensorMode runs the op on meta */
        if (ts_inplace_grad_check(self, other) < 0)
            return NULL;
        inner.grad_checked = 1;
    }
    if (op == TS_OP_TO && inner.has_device) {
        /* The fake moves; its meta tensor stays on meta. */
        dev = inner.device;
        inner.has_device = 0;
    }
    /* version 3: the dispatch cache, constant propagation (fk_mode3.c) */
    fk_opctx cx;
    ts_tensor *done;
    if (fk_v3_pre_op(op, self, a, mode, &cx, &done) < 0 || done) {
        if (done == self && ts_op_is_inplace(op))
            fk_bump_version(self);       /* a cache hit runs no kernel; autograd bumps it */
        return done;
    }
    /* Autograd runs above the fake mode: an out-of-place op's result
     * requires grad, and is no leaf, when a fake input requires grad, as
     * for real tensors (PyTorch 1.13.1: f.requires_grad_(); f.mul(2).is_leaf
     * is False, and its requires_grad_(False) raises). The meta tensors
     * carry their fakes' flags for the op. */
    ts_tensor *m_other = other_fake ? other->meta : NULL;
    int lend = !ts_op_is_inplace(op);
    unsigned s_rg = m_self->requires_grad, s_leaf = m_self->is_leaf;
    unsigned o_rg = m_other ? m_other->requires_grad : 0, o_leaf = m_other ? m_other->is_leaf : 0;
    if (lend) {
        m_self->requires_grad = self->requires_grad;
        m_self->is_leaf = self->is_leaf;
        if (m_other && m_other != m_self) {
            m_other->requires_grad = other->requires_grad;
            m_other->is_leaf = other->is_leaf;
        }
    }
    ts_tensor *r = ts_apply(op, m_self, &inner);
    if (lend) {
        if (m_other && m_other != m_self) {
            m_other->requires_grad = o_rg & 1u;
            m_other->is_leaf = o_leaf & 1u;
        }
        m_self->requires_grad = s_rg & 1u;
        m_self->is_leaf = s_leaf & 1u;
    }
    if (!r)
        return NULL;
    if (r == m_self) {
        /* in place (or an op that returned its input): the same fake */
        obj_decref(&r->hdr);
        if (op == TS_OP_SET_ && refresh_from_meta(self) != 0)
            return NULL;   /* the meta tensor moved; its fake could not follow */
        if (ts_op_is_inplace(op) || op == TS_OP_SET_)
            fk_bump_version(self);
        if (fk_v3_post_op(op, self, a, self, &cx) != 0)
            return NULL;
        obj_incref(&self->hdr);
        return self;
    }
    ts_tensor *out = ts_fake_new(r, mode, dev, 0);
    obj_decref(&r->hdr);
    if (out && ts_op_is_view(op) && op != TS_OP_DETACH && r->base) {
        /* PyTorch: a view of a fake is a view whose _base is the fake (or
         * that fake's own base). */
        out->base = self->base ? self->base : self;
        obj_incref(&out->base->hdr);
        if (self->base && fk_design_now()->views_keep_source) {
            out->view_src = self;
            obj_incref(&self->hdr);
        }
    }
    /* an output served from the dispatch cache gets no memo entry
     * (fake_tensor.py@946abe14:1350-1398, derived) */
    if (out && ((!cx.cache_hit && fk_memo_op_output(cx.mode, out) != 0) ||
                fk_v3_post_op(op, self, a, out, &cx) != 0)) {
        obj_decref(&out->hdr);
        return NULL;
    }
    return out;
}

#define D(x) (1u << (x))
#define V2 (D(FK_D_2_0) | D(FK_D_2_3))   /* the 2.x designs */
#define V23 D(FK_D_2_3)                  /* 2.3's own */
/* the bugs of every design: not pytorch-2.14's, whose lifecycle is checked
 * by its own five */
#define ALL (((1u << FK_D_COUNT) - 1) & ~D(FK_D_2_14))

/* fix-weakref's line names the design that ships it from the design table
 * (made by fk_bug_list). */
static char fix_weakref_what[160];

/* designs.md "Injectable bugs": each bug with the designs it applies to.
 * fix-weakref is 1.13.1's own leak: on in pytorch-1.13 (asking for it
 * again is allowed), injectable in the default design. */
static const fk_bug_info bug_list[] = {
    {"strong-memo", "memo keys hold the real tensor strongly (before the seed's fix)", ALL},
    {"strong-storage-memo", "the storage memo holds real storages strongly (no StorageWeakRef)",
     ALL},
    {"finalizer-holds-converter", "the memo finalizer holds its converter strongly",
     ALL & ~D(FK_D_2_3)},
    {"no-sweep", "pending expired storages are never checked", ALL & ~D(FK_D_2_3)},
    {"id-reuse", "memo keys are addresses and finalizers run late: stale hits", ALL},
    {"strong-fake-value", "the fake memo holds its fake tensors strongly: a cycle", ALL},
    {"view-base-leak", "a view takes one reference too many on its base", ALL},
    {"early-free", "a tensor releases its storage reference twice (use after free)", ALL},
    {"fix-weakref", fix_weakref_what, D(FK_D_DEFAULT) | D(FK_D_1_13)},
    /* designs.md "Injectable bugs": PyTorch 2.x's own leaks, each with its PR */
    {"fake-holds-mode", "mode_ref=\"weak\" is ignored: fakes hold their mode and its tables "
     "strongly (pytorch#168326, #169388)", V2},
    {"premature-weak-clear", "gc() clears the weak refs (memo keys) of every object a "
     "collected cycle referenced that survives (pytorch#145253, fixed by #164269)", V2},
    {"tracer-holds-real", "a graph argument holds its real example strongly (pytorch#100515)",
     V2},
    {"constant-retains-real", "tr.finish() and m.clear_non_cpu_constants() keep constants: an "
     "example fake keeps its real CUDA tensor (pytorch#124345, #184445)", V23},
    {"cache-holds-shape-env", "ops with symbolic inputs are stored in the process's dispatch "
     "cache with unstripped keys holding their ShapeEnv (pytorch#127596)", V23},
    {"no-clear-after-compile", "tr.finish() leaves the mode's tables, so weak refs stay on the "
     "real tensors (pytorch#171209, #141548)", V23},
    {"converter-closure-cycle", "every miss leaves a garbage closure cycle holding the "
     "MetaConverter, alive until gc() (pytorch#175660)", V23},
    {"shape-env-tracks-real", "tr.finish() leaves se.tracked: tracked fakes and their real "
     "copies stay (pytorch#193015, #190093)", V23},
    /* the lifecycle after 2.3: pytorch-2.14's fixes undone */
    {"codegen-closure-cycle", "tr.input(t) leaves a garbage closure cycle (PyCodegen's "
     "collect_temp_source) holding the real input t until a collection (pytorch#155778, "
     "fixed by #155791)", D(FK_D_2_14)},
    {"young-gc-after-compile", "tr.finish() collects generations 0 and 1 only "
     "(gc.collect(1)), so garbage already in generation 2 survives the compile "
     "(pytorch#142519, fixed by #184969)", D(FK_D_2_14)},
    {"unbacked-memo-retrace", "an item() memo is reused across a retrace: its epoch is not "
     "checked (pytorch#154647, #185499)", D(FK_D_2_14)},
    {"inference-memo", "item() memoizes in inference mode, where tensors have no version "
     "counter (pytorch#122127, fixed by #122147)", D(FK_D_2_14)},
    {"constant-scalar-kept", "clearing a fake's constant leaves its constant_scalar: the 0-d "
     "real tensor stays (pytorch#177496)", D(FK_D_2_14)},
};

size_t fk_designs_named(unsigned designs, const char *sep, const char *dflt, char *buf,
                        size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int d = 0; d < FK_D_COUNT; d++)
        if (designs & D(d)) {
            int k = snprintf(buf + w, n - w, "%s%s", w ? sep : "",
                             d == FK_D_DEFAULT ? dflt : fk_design_get((fk_design_id)d)->name);
            if (k < 0 || (size_t)k >= n - w) {
                buf[w] = '\0';   /* the name did not fit: cut before it */
                break;
            }
            w += (size_t)k;
        }
    return w;
}

const fk_bug_info *fk_bug_list(size_t *n)
{
    snprintf(fix_weakref_what, sizeof fix_weakref_what,
             "PyTorch 1.13.1's own leak: after a fake memo hit the fake and its mode are never "
             "freed (on in %s; fixed by pytorch#90823)", fk_design_get(FK_D_1_13)->name);
    *n = sizeof bug_list / sizeof bug_list[0];
    return bug_list;
}

static char active[512];

const char *fk_inject_active(void) { return active; }

int fk_inject_check(const char *csv, fk_design_id d, char *err, size_t errlen)
{
    const char *p = csv ? csv : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        for (size_t i = 0; i < sizeof bug_list / sizeof bug_list[0]; i++) {
            const fk_bug_info *b = &bug_list[i];
            if (strlen(b->name) != len || memcmp(b->name, p, len) != 0 ||
                (b->designs & D(d)))
                continue;
            if (err && errlen) {
                int w = snprintf(err, errlen, "bug '%s' does not apply to %s (it applies to: ",
                                 b->name, d == FK_D_DEFAULT ? "the default design"
                                                            : fk_design_get(d)->name);
                if (w > 0 && (size_t)w < errlen)
                    w += (int)fk_designs_named(b->designs, " ", "the default design", err + w,
                                               errlen - (size_t)w);
                if (w > 0 && (size_t)w < errlen)
                    snprintf(err + w, errlen - (size_t)w, ")");
            }
            return -1;
        }
        p = e ? e + 1 : p + len;
    }
    return 0;
}

int fk_inject(const char *csv, char *err, size_t errlen)
{
    fk_bugs fb;
    ts_bugs tb;
    memset(&fb, 0, sizeof fb);
    memset(&tb, 0, sizeof tb);
    const char *p = csv ? csv : "";
    size_t len = 0;
    char name[64];
    while (*p) {
        const char *e = strchr(p, ',');
        len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0 || len >= sizeof name) {
            len = len ? sizeof name - 1 : 0;
            goto bad;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (strcmp(name, "strong-memo") == 0) fb.strong_memo = 1;
        else if (strcmp(name, "strong-storage-memo") == 0) fb.strong_storage_memo = 1;
        else if (strcmp(name, "finalizer-holds-converter") == 0) fb.finalizer_holds_converter = 1;
        else if (strcmp(name, "no-sweep") == 0) fb.no_sweep = 1;
        else if (strcmp(name, "id-reuse") == 0) fb.id_reuse = 1;
        else if (strcmp(name, "strong-fake-value") == 0) fb.strong_fake_value = 1;
        else if (strcmp(name, "view-base-leak") == 0) tb.view_base_leak = 1;
        else if (strcmp(name, "early-free") == 0) tb.early_free = 1;
        else if (strcmp(name, "fix-weakref") == 0) fb.fix_weakref = 1;
        else if (strcmp(name, "fake-holds-mode") == 0) fb.fake_holds_mode = 1;
        else if (strcmp(name, "premature-weak-clear") == 0) fb.premature_weak_clear = 1;
        else if (strcmp(name, "tracer-holds-real") == 0) fb.tracer_holds_real = 1;
        else if (strcmp(name, "constant-retains-real") == 0) fb.constant_retains_real = 1;
        else if (strcmp(name, "cache-holds-shape-env") == 0) fb.cache_holds_shape_env = 1;
        else if (strcmp(name, "no-clear-after-compile") == 0) fb.no_clear_after_compile = 1;
        else if (strcmp(name, "converter-closure-cycle") == 0) fb.converter_closure_cycle = 1;
        else if (strcmp(name, "shape-env-tracks-real") == 0) fb.shape_env_tracks_real = 1;
        else if (strcmp(name, "codegen-closure-cycle") == 0) fb.codegen_closure_cycle = 1;
        else if (strcmp(name, "young-gc-after-compile") == 0) fb.young_gc_after_compile = 1;
        else if (strcmp(name, "unbacked-memo-retrace") == 0) fb.unbacked_memo_retrace = 1;
        else if (strcmp(name, "inference-memo") == 0) fb.inference_memo = 1;
        else if (strcmp(name, "constant-scalar-kept") == 0) fb.constant_scalar_kept = 1;
        else {
            p = name;
            len = strlen(name);
            goto bad;
        }
        p = e ? e + 1 : p + len;
    }
    fk_set_bugs(&fb);
    ts_set_bugs(&tb);
    snprintf(active, sizeof active, "%s", csv ? csv : "");
    return 0;
bad:
    if (err && errlen) {
        size_t n;
        const fk_bug_info *b = fk_bug_list(&n);
        int w = snprintf(err, errlen, "unknown bug '%.*s'; valid bugs:",
                         (int)(len < 60 ? len : 60), p);
        for (size_t i = 0; i < n && w > 0 && (size_t)w < errlen; i++)
            w += snprintf(err + w, errlen - (size_t)w, "%s %s", i ? "," : "",
                          b[i].name);
    }
    return -1;
}
