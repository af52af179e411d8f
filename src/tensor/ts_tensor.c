/* ts_tensor.c - the tensor object: its type descriptor, constructors of
 * strided tensors, views' common part, fake wrappers, queries, grads, and
 * the injectable bugs. */
#include "tensor/ts_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

ts_bugs ts_bug_flags;

void ts_set_bugs(const ts_bugs *b)
{
    if (b)
        ts_bug_flags = *b;
    else
        memset(&ts_bug_flags, 0, sizeof ts_bug_flags);
}

/* ---- type descriptor ---- */

static int base_hidden;

void ts_set_base_hidden(int on) { base_hidden = on; }
int ts_base_hidden(void) { return base_hidden; }

/* Every strong edge, the base's when `base` says so. */
static void traverse_edges(obj *self, obj_visit_fn visit, void *arg, int base)
{
    ts_tensor *t = ts_of(self);
    if (t->storage)
        visit(&t->storage->hdr, "storage", -1, arg);
    if (t->base && base)
        visit(&t->base->hdr, "base", -1, arg);
    if (t->grad)
        visit(&t->grad->hdr, "grad", -1, arg);
    if (t->indices)
        visit(&t->indices->hdr, "indices", -1, arg);
    if (t->values)
        visit(&t->values->hdr, "values", -1, arg);
    if (t->crow)
        visit(&t->crow->hdr, "crow_indices", -1, arg);
    if (t->col)
        visit(&t->col->hdr, "col_indices", -1, arg);
    if (t->meta)
        visit(&t->meta->hdr, "meta", -1, arg);
    if (t->mode)
        visit(t->mode, "mode", -1, arg);
    if (t->view_src)
        visit(&t->view_src->hdr, "view_src", -1, arg);
}

static void tensor_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    traverse_edges(self, visit, arg, 1);
}

/* What the collector sees: under the rule, not the base, which a view holds
 * from C++ (its TensorImpl), where Python's gc cannot see it. */
static void tensor_gc_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    traverse_edges(self, visit, arg, !base_hidden);
}

static void tensor_gc_hidden(obj *self, obj_visit_fn visit, void *arg)
{
    ts_tensor *t = ts_of(self);
    if (base_hidden && t->base)
        visit(&t->base->hdr, "base", -1, arg);
}

static void clear_tensor_ref(ts_tensor **slot)
{
    ts_tensor *old = *slot;
    *slot = NULL;
    if (old)
        obj_decref(&old->hdr);
}

/* Every field is NULLed before its reference is dropped, so a second call
 * (collector, then death) does nothing. With early_free the storage loses
 * one reference too many: while another tensor still holds it, it dies
 * under that tensor's feet. */
static void tensor_release(obj *self)
{
    ts_tensor *t = ts_of(self);
    ts_storage *s = t->storage;
    if (s) {
        t->storage = NULL;
        if (ts_bug_flags.early_free)
            obj_decref(&s->hdr);
        obj_decref(&s->hdr);
    }
    clear_tensor_ref(&t->base);
    clear_tensor_ref(&t->grad);
    clear_tensor_ref(&t->indices);
    clear_tensor_ref(&t->values);
    clear_tensor_ref(&t->crow);
    clear_tensor_ref(&t->col);
    clear_tensor_ref(&t->meta);
    obj_clear_ref(&t->mode);
    clear_tensor_ref(&t->view_src);
}

/* The dims array of a tensor given more dims than its inline array holds
 * goes with its memory, not at release: a zombie still describes its
 * shape. */
enum { BIG_DIMS_BYTES = 2 * TS_MAX_DIM * sizeof(int64_t) };

static void use_inline_dims(ts_tensor *t)
{
    t->sizes = t->dims;
    t->strides = t->dims + t->inline_cap;
    t->dim_cap = (int)t->inline_cap;
}

static uint64_t tensor_owned(const obj *self)
{
    const ts_tensor *t = ts_of((obj *)self);
    return t->sizes != t->dims ? BIG_DIMS_BYTES : 0;
}

static void tensor_dispose(obj *self)
{
    ts_tensor *t = ts_of(self);
    if (t->sizes != t->dims)
        al_free(t->sizes, BIG_DIMS_BYTES, AL_K_OBJECT);
    use_inline_dims(t);
}

int ts_reserve_dims(ts_tensor *t, int n)
{
    if (n > t->dim_cap) {
        int64_t *big = al_malloc(BIG_DIMS_BYTES, AL_K_OBJECT, "tensor dims");
        if (!big)
            return er_set(ER_OOM, "out of memory for the dims of a %d-dim tensor", n);
        ts_copy_dims(big, t->sizes, t->ndim);
        ts_copy_dims(big + TS_MAX_DIM, t->strides, t->ndim);
        t->sizes = big;
        t->strides = big + TS_MAX_DIM;
        t->dim_cap = TS_MAX_DIM;
    }
    return 0;
}

int ts_set_ndim(ts_tensor *t, int n)
{
    if (ts_reserve_dims(t, n) != 0)
        return -1;
    t->ndim = n;
    return 0;
}

static void tensor_describe(const obj *self, char *buf, size_t n)
{
    const ts_tensor *t = (const ts_tensor *)self;
    char shape[256], dev[32];
    ts_fmt_shape(shape, sizeof shape, t->ndim, t->sizes);
    ts_device_format(t->device, dev, sizeof dev);
    const char *dt = ts_dtype_name(t->dtype);
    if (t->layout == TS_SPARSE_COO || t->layout == TS_SPARSE_CSR)
        snprintf(buf, n, "%s%s %s%s nnz=%lld%s%s", t->flavour == TS_FAKE ? "fake " : "",
                 t->layout == TS_SPARSE_COO ? "sparse_coo" : "sparse_csr", dt, shape,
                 (long long)t->nnz, t->device.type == TS_DEV_CPU ? "" : " ",
                 t->device.type == TS_DEV_CPU ? "" : dev);
    else
        snprintf(buf, n, "%s%s%s%s %s", t->flavour == TS_FAKE ? "fake " : "",
                 t->quantized ? "quantized " : "", dt, shape, dev);
}

/* Three tensors and a storage per conversion, dropped by the thousand: a
 * pool per inline size in front of the allocator (same counters, checker
 * view and fault points as al_malloc; alloc/al.h). */
#define TENSOR_BYTES(cap) (offsetof(ts_tensor, dims) + 2 * (cap) * sizeof(int64_t))
static al_pool tensor_pools[TS_INLINE_DIM] = {
    AL_POOL_INIT(TENSOR_BYTES(1), AL_K_OBJECT), AL_POOL_INIT(TENSOR_BYTES(2), AL_K_OBJECT),
    AL_POOL_INIT(TENSOR_BYTES(3), AL_K_OBJECT), AL_POOL_INIT(TENSOR_BYTES(4), AL_K_OBJECT),
};

const obj_type ts_tensor_type = {
    .name = "tensor",
    .kind = OBJ_TENSOR,
    .traverse = tensor_traverse,
    .traverse_weak = NULL,
    .release = tensor_release,
    .owned_bytes = tensor_owned,   /* the dims past the inline array */
    .describe = tensor_describe,
    .pool = tensor_pools,
    .npools = TS_INLINE_DIM,
    .dispose = tensor_dispose,
    .gc_traverse = tensor_gc_traverse,
    .gc_hidden = tensor_gc_hidden,
};

/* ---- predicates ---- */

int ts_is_tensor(const obj *o) { return o && o->type == &ts_tensor_type; }
int ts_is_meta(const ts_tensor *t)
{
    return t->flavour == TS_REAL && t->device.type == TS_DEV_META;
}
int ts_is_fake(const ts_tensor *t) { return t->flavour == TS_FAKE; }
int ts_is_view(const ts_tensor *t) { return t->base != NULL; }

int64_t ts_numel(const ts_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->sizes[i];
    return n;
}

int ts_dtype_can_require_grad(ts_dtype d)
{
    return ts_dtype_is_floating(d) || ts_dtype_is_complex(d);
}

void ts_set_result_grad(ts_tensor *out, int requires_grad)
{
    out->requires_grad = requires_grad != 0;
    out->is_leaf = requires_grad == 0;
}

/* ---- construction ---- */

ts_tensor *ts_alloc_tensor(int ndim)
{
    /* past TS_INLINE_DIM the dims go to an array of their own at once */
    int cap = ndim < 1 || ndim > TS_INLINE_DIM ? 1 : ndim;
    ts_tensor *t = (ts_tensor *)obj_new(&ts_tensor_type, TENSOR_BYTES(cap));
    if (!t)
        return NULL;
    t->inline_cap = (unsigned)cap & 7u;
    use_inline_dims(t);
    if (ts_set_ndim(t, ndim) != 0) {
        obj_decref(&t->hdr);
        return NULL;
    }
    t->flavour = TS_REAL;
    t->layout = TS_STRIDED;
    t->dtype = TS_F32;
    t->device = ts_cpu();
    t->is_leaf = 1;
    return t;
}

ts_tensor *ts_new_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                          ts_dtype dt, ts_device dev, ts_init init)
{
    int64_t st[TS_MAX_DIM], numel;
    uint64_t nbytes;
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
        er_set(ER_TYPE, "unknown dtype %d", (int)dt);
        return NULL;
    }
    if (ts_shape_check(ndim, sizes) || ts_shape_numel(ndim, sizes, &numel))
        return NULL;
    if (strides) {
        ts_copy_dims(st, strides, ndim);
    } else {
        ts_shape_contig_strides(ndim, sizes, st);
    }
    if (ts_shape_storage_bytes(ndim, sizes, st, 0, ts_dtype_size(dt), &nbytes))
        return NULL;
    dev = ts_device_norm(dev);
    /* Bytes are always written: empty() gets zeros (ops read what they
     * copy, and reading uninitialised bytes would be noise under Valgrind);
     * typed ones/rand are written below over the elements. */
    ts_init raw = init == TS_INIT_ZEROS || init == TS_INIT_NONE ? TS_INIT_ZEROS
                                                                : TS_INIT_NONE;
    ts_storage *s = ts_storage_new(nbytes, dev, raw);
    if (!s)
        return NULL;
    ts_tensor *t = ts_alloc_tensor(ndim);
    if (!t) {
        obj_decref(&s->hdr);
        return NULL;
    }
    t->storage = s;
    t->dtype = dt;
    t->device = dev;
    ts_copy_dims(t->sizes, sizes, ndim);
    ts_copy_dims(t->strides, st, ndim);
    if (s->data && (init == TS_INIT_ONES || init == TS_INIT_RAND))
        ts_fill_init(s->data, (int64_t)(nbytes / ts_dtype_size(dt)), dt, init);
    return t;
}

static int check_grad_dtype(ts_dtype dt, int requires_grad)
{
    if (requires_grad && !ts_dtype_can_require_grad(dt))
        return er_set(ER_TYPE, "Only Tensors of floating point and complex dtype can "
                      "require gradients (got %s)", ts_dtype_name(dt));
    return 0;
}

ts_tensor *ts_empty(int ndim, const int64_t *sizes, ts_dtype dt, ts_device dev,
                    ts_init init, int requires_grad)
{
    if (check_grad_dtype(dt, requires_grad))
        return NULL;
    ts_tensor *t = ts_new_strided(ndim, sizes, NULL, dt, dev, init);
    if (t)
        t->requires_grad = requires_grad != 0;
    return t;
}

ts_tensor *ts_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                            ts_dtype dt, ts_device dev, int requires_grad)
{
    if (check_grad_dtype(dt, requires_grad))
        return NULL;
    if (!strides) {
        er_set(ER_SHAPE, "empty_strided needs strides");
        return NULL;
    }
    ts_tensor *t = ts_new_strided(ndim, sizes, strides, dt, dev, TS_INIT_NONE);
    if (t)
        t->requires_grad = requires_grad != 0;
    return t;
}

ts_tensor *ts_quantized(int ndim, const int64_t *sizes)
{
    ts_tensor *t = ts_new_strided(ndim, sizes, NULL, TS_I8, ts_cpu(), TS_INIT_ZEROS);
    if (t)
        t->quantized = 1;
    return t;
}

/* as_strided's checks (setStorage): non-negative strides, offset and
 * sizes, and the geometry inside the storage. */
static int check_in_storage(const ts_storage *s, int ndim, const int64_t *sizes,
                            const int64_t *strides, int64_t offset, ts_dtype dt)
{
    char s1[256], s2[256];
    uint64_t need;
    if (ts_shape_check(ndim, sizes))
        return -1;
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return er_set(ER_SHAPE, "as_strided: Negative strides are not supported at "
                          "the moment, got strides: %s",
                          ts_fmt_shape(s1, sizeof s1, ndim, strides));
    if (offset < 0)
        return er_set(ER_SHAPE, "Tensor: invalid storage offset %lld", (long long)offset);
    if (ts_shape_storage_bytes(ndim, sizes, strides, offset, ts_dtype_size(dt), &need))
        return -1;
    if (need > s->nbytes)
        return er_set(ER_SHAPE, "setStorage: sizes %s, strides %s, storage offset %lld, "
                      "and itemsize %zu requiring a storage size of %llu are out of bounds "
                      "for storage of size %llu", ts_fmt_shape(s1, sizeof s1, ndim, sizes),
                      ts_fmt_shape(s2, sizeof s2, ndim, strides), (long long)offset,
                      ts_dtype_size(dt), (unsigned long long)need,
                      (unsigned long long)s->nbytes);
    return 0;
}

ts_tensor *ts_from_storage(ts_storage *s, int ndim, const int64_t *sizes,
                           const int64_t *strides, int64_t offset, ts_dtype dt)
{
    if (!s || obj_expired(&s->hdr)) {
        er_set(ER_TYPE, "ts_from_storage: no live storage");
        return NULL;
    }
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
        er_set(ER_TYPE, "unknown dtype %d", (int)dt);
        return NULL;
    }
    if (check_in_storage(s, ndim, sizes, strides, offset, dt))
        return NULL;
    ts_tensor *t = ts_alloc_tensor(ndim);
    if (!t)
        return NULL;
    obj_incref(&s->hdr);
    t->storage = s;
    t->dtype = dt;
    t->device = s->device;
    ts_copy_dims(t->sizes, sizes, ndim);
    ts_copy_dims(t->strides, strides, ndim);
    t->storage_offset = offset;
    return t;
}

ts_tensor *ts_make_view(ts_tensor *self, int ndim, const int64_t *sizes,
                        const int64_t *strides, int64_t offset)
{
    if (ndim > TS_MAX_DIM) {
        er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)", ndim,
               TS_MAX_DIM);
        return NULL;
    }
    ts_tensor *v = ts_alloc_tensor(ndim);
    if (!v)
        return NULL;
    ts_tensor *base = self->base ? self->base : self;
    v->dtype = self->dtype;
    v->device = self->device;
    ts_copy_dims(v->sizes, sizes, ndim);
    ts_copy_dims(v->strides, strides, ndim);
    v->storage_offset = offset;
    v->neg = self->neg;
    v->conj = self->conj;
    v->quantized = self->quantized;
    ts_set_result_grad(v, self->requires_grad);
    obj_incref(&self->storage->hdr);
    v->storage = self->storage;
    obj_incref(&base->hdr);
    v->base = base;
    if (ts_bug_flags.view_base_leak)
        obj_incref(&base->hdr);   /* the injected leak: never dropped */
    return v;
}

ts_tensor *ts_fake_new(ts_tensor *meta, obj *mode, ts_device device, uint64_t source_id)
{
    if (!meta || meta->flavour != TS_REAL || meta->device.type != TS_DEV_META) {
        er_set(ER_TYPE, "ts_fake_new: the wrapped tensor must be a meta tensor");
        return NULL;
    }
    ts_tensor *f = ts_alloc_tensor(meta->ndim);
    if (!f)
        return NULL;
    f->flavour = TS_FAKE;
    f->layout = meta->layout;
    f->dtype = meta->dtype;
    f->device = ts_device_norm(device);
    ts_copy_dims(f->sizes, meta->sizes, meta->ndim);
    ts_copy_dims(f->strides, meta->strides, meta->ndim);
    f->storage_offset = meta->storage_offset;
    f->requires_grad = meta->requires_grad;
    f->is_leaf = meta->is_leaf;
    f->neg = meta->neg;
    f->conj = meta->conj;
    f->quantized = meta->quantized;
    f->coalesced = meta->coalesced;
    f->sparse_dim = meta->sparse_dim;
    f->dense_dim = meta->dense_dim;
    f->nnz = meta->nnz;
    f->source_id = source_id;
    obj_incref(&meta->hdr);
    f->meta = meta;
    if (mode) {
        obj_incref(mode);
        f->mode = mode;
    }
    return f;
}

/* ---- queries ---- */

int ts_query_run(const ts_tensor *t, ts_query q, int64_t arg, int64_t *out)
{
    int d;
    switch (q) {
    case TS_Q_NUMEL:
        *out = ts_numel(t);
        return 0;
    case TS_Q_DIM:
        *out = t->ndim;
        return 0;
    case TS_Q_STORAGE_OFFSET:
        *out = t->layout == TS_STRIDED ? t->storage_offset : 0;
        return 0;
    case TS_Q_NBYTES:
        *out = ts_numel(t) * (int64_t)ts_dtype_size(t->dtype);
        return 0;
    case TS_Q_IS_VIEW:
        /* As PyTorch 1.13: a fake made by conversion is not a view (it is
         * a fresh wrapper even for a view's meta tensor); a view op on a
         * fake returns a fake whose base is the fake (src/fake sets it). */
        *out = t->base != NULL;
        return 0;
    case TS_Q_IS_SPARSE:
        *out = t->layout == TS_SPARSE_COO;   /* PyTorch: CSR is not is_sparse */
        return 0;
    case TS_Q_IS_COALESCED:
        if (t->layout != TS_SPARSE_COO)
            return er_set(ER_TYPE, "is_coalesced expects a sparse COO tensor, got a %s one",
                          t->layout == TS_STRIDED ? "strided" : "sparse CSR");
        *out = t->coalesced;
        return 0;
    case TS_Q_REQUIRES_GRAD:
        *out = t->requires_grad;
        return 0;
    case TS_Q_SIZE:
        if (ts_wrap_dim(arg, t->ndim, 0, &d))
            return -1;
        *out = t->sizes[d];
        return 0;
    case TS_Q_STRIDE:
        if (t->layout == TS_SPARSE_CSR)
            return er_set(ER_TYPE, "Sparse CSR tensors do not have strides");
        if (ts_wrap_dim(arg, t->ndim, 0, &d))
            return -1;
        *out = t->strides[d];
        return 0;
    case TS_Q_IS_LEAF:
        *out = t->is_leaf;
        return 0;
    case TS_Q_IS_FAKE:
        *out = ts_is_fake(t);
        return 0;
    case TS_Q_IS_META:
        *out = ts_is_meta(t);   /* a fake answers for its fake device */
        return 0;
    case TS_Q_IS_NEG:
        *out = t->neg;
        return 0;
    case TS_Q_IS_CONJ:
        *out = t->conj;
        return 0;
    case TS_Q_IS_INFERENCE:
        *out = 0;               /* no inference mode is modelled */
        return 0;
    case TS_Q_IS_CONTIGUOUS:
        if (t->layout != TS_STRIDED)
            return er_set(ER_TYPE, "is_contiguous of a sparse tensor: it has no strides");
        *out = arg == TS_CHANNELS_LAST
             ? ts_shape_is_cl_contiguous(t->ndim, t->sizes, t->strides)
             : ts_shape_is_contiguous(t->ndim, t->sizes, t->strides);
        return 0;
    default:
        return er_set(ER_TYPE, "unknown query %d", (int)q);
    }
}

/* ---- grad ---- */

int ts_set_grad(ts_tensor *t, ts_tensor *g)
{
    if (!g) {
        clear_tensor_ref(&t->grad);
        return 0;
    }
    if (g == t)
        return er_set(ER_TYPE, "can't assign Variable as its own grad");
    int same_type = g->dtype == t->dtype && g->device.type == t->device.type;
    int sparse_grad = same_type && g->layout == TS_SPARSE_COO;
    if (!((same_type && g->layout == t->layout) || sparse_grad))
        return er_set(ER_TYPE, "assigned grad has data of a different type (%s %s for a "
                      "%s %s tensor)", ts_dtype_name(g->dtype),
                      g->layout == TS_STRIDED ? "strided" : "sparse",
                      ts_dtype_name(t->dtype), t->layout == TS_STRIDED ? "strided" : "sparse");
    if (t->device.type == TS_DEV_CUDA && g->device.index != t->device.index)
        return er_set(ER_TYPE, "assigned grad has data located on a different device");
    int same = g->ndim == t->ndim;
    for (int i = 0; same && i < t->ndim; i++)
        same = g->sizes[i] == t->sizes[i];
    if (!same) {
        char s1[256], s2[256];
        return er_set(ER_SHAPE, "assigned grad has data of a different size (%s for a "
                      "tensor of size %s)", ts_fmt_shape(s1, sizeof s1, g->ndim, g->sizes),
                      ts_fmt_shape(s2, sizeof s2, t->ndim, t->sizes));
    }
    obj_incref(&g->hdr);
    clear_tensor_ref(&t->grad);
    t->grad = g;
    return 0;
}

/* ---- dispatch ---- */

ts_tensor *ts_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    static const ts_args none;
    if (!a)
        a = &none;
    if (!self) {
        er_set(ER_TYPE, "%s() needs a tensor", ts_op_name(op));
        return NULL;
    }
    if ((unsigned)op >= TS_OP_COUNT) {
        er_set(ER_TYPE, "unknown op %d", (int)op);
        return NULL;
    }
    if (op == TS_OP_REQUIRES_GRAD_)   /* a flag: the fake's own, not its meta's */
        return ts_requires_grad_(self, a->n ? a->v[0] != 0 : 1);
    if (self->flavour == TS_FAKE) {
        er_set(ER_TYPE, "%s() on a fake tensor must go through its fake mode",
               ts_op_name(op));
        return NULL;
    }
    int lo, hi;
    ts_op_arity(op, &lo, &hi);
    if (op == TS_OP_VIEW && a->has_dtype)
        lo = hi = 0;   /* view(dtype) */
    if (hi < 0)
        hi = TS_MAX_DIM;
    if (a->n < lo || a->n > hi) {
        er_set(ER_TYPE, "%s() takes %d to %d integer arguments (%d given)", ts_op_name(op),
               lo, hi, a->n);
        return NULL;
    }
    if (self->layout != TS_STRIDED)
        return ts_sparse_apply(op, self, a);
    if (!self->storage) {
        er_set(ER_INTERNAL, "%s() on a tensor without storage (already released?)",
               ts_op_name(op));
        return NULL;
    }
    if (self->quantized && !(op <= TS_OP_CONJ && op != TS_OP_VIEW_AS_REAL &&
                             op != TS_OP_VIEW_AS_COMPLEX) && op != TS_OP_CLONE &&
        op != TS_OP_CONTIGUOUS) {
        er_set(ER_TYPE, "%s() is not supported for quantized tensors", ts_op_name(op));
        return NULL;
    }
    if (op <= TS_OP_CONJ || op == TS_OP_REAL || op == TS_OP_IMAG)
        return ts_view_apply(op, self, a);
    return ts_ops_apply(op, self, a);
}

/* requires_grad_(b): a flag on a leaf; PyTorch refuses to clear it on a
 * non-leaf and to set it on a non-floating dtype. Returns self. */
ts_tensor *ts_requires_grad_(ts_tensor *self, int b)
{
    if (!b && !self->is_leaf) {
        er_set(ER_TYPE, "you can only change requires_grad flags of leaf variables.");
        return NULL;
    }
    if (b && !ts_dtype_can_require_grad(self->dtype)) {
        er_set(ER_TYPE, "only Tensors of floating point dtype can require gradients (got %s)",
               ts_dtype_name(self->dtype));
        return NULL;
    }
    if (self->is_leaf)
        self->requires_grad = b != 0;
    obj_incref(&self->hdr);
    return self;
}
