/* ts_sparse.c - sparse COO and CSR tensors: construction, coalesce,
 * to_dense, to_sparse, indices(), values(), and the few other ops PyTorch
 * 1.13 runs on them.
 *
 * Model of the data: a COO tensor's entry k sits at the (k mod P)-th
 * position of its sparse dims in row-major order (P = their product), so
 * entries repeat only when nnz > P and coalescing keeps min(nnz, P) of
 * them. The indices are really written, and coalesce/to_dense read them
 * back (bounds-checked), so every real byte is touched. */
#include "tensor/ts_internal.h"

#include <string.h>

#include "core/er.h"

static void drop(ts_tensor *t)
{
    if (t)
        obj_decref(&t->hdr);
}

static int sparse_positions(int sd, const int64_t *sizes, int64_t *out)
{
    int64_t p = 1;
    for (int i = 0; i < sd; i++) {
        if (__builtin_mul_overflow(p, sizes[i], &p)) {
            char s[256];
            return er_set(ER_SHAPE, "sparse sizes %s overflow int64",
                          ts_fmt_shape(s, sizeof s, sd, sizes));
        }
    }
    *out = p;
    return 0;
}

/* Write the first nnz row-major positions (mod P) into an i64 [sd, nnz]
 * indices tensor. */
static void write_indices(ts_tensor *ind, int sd, const int64_t *sizes, int64_t nnz, int64_t P)
{
    unsigned char *p = ts_data_ptr(ind);
    if (!p || P == 0)
        return;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t lin = k % P;
        for (int d = sd - 1; d >= 0; d--) {
            double v[2] = {(double)(lin % sizes[d]), 0};
            lin /= sizes[d];
            ts_store(TS_I64, p + (size_t)(d * ind->strides[0] + k * ind->strides[1]) * 8, v);
        }
    }
}

/* Linear row-major position of entry k, or -1 when an index is out of
 * range (indices written through an alias can be anything). */
static int64_t entry_position(const ts_tensor *ind, int sd, const int64_t *sizes, int64_t k)
{
    const unsigned char *p = ts_data_ptr(ind);
    int64_t lin = 0;
    for (int d = 0; d < sd; d++) {
        double v[2];
        ts_load(TS_I64, p + (size_t)(d * ind->strides[0] + k * ind->strides[1]) * 8, 0, 0, v);
        if (v[0] < 0 || v[0] >= (double)sizes[d])
            return -1;
        lin = lin * sizes[d] + (int64_t)v[0];
    }
    return lin;
}

/* A COO tensor over the given children (their references are taken over;
 * on failure they are dropped). */
static ts_tensor *coo_wrap(int ndim, const int64_t *sizes, int sd, ts_dtype dt, ts_device dev,
                           int64_t nnz, int coalesced, ts_tensor *ind, ts_tensor *val)
{
    ts_tensor *t = ts_alloc_tensor(ndim);
    if (!t) {
        drop(ind);
        drop(val);
        return NULL;
    }
    t->layout = TS_SPARSE_COO;
    t->dtype = dt;
    t->device = dev;
    ts_copy_dims(t->sizes, sizes, ndim);
    /* PyTorch 1.13 answers stride() of a COO tensor with its default
     * strides: 1 for dim 0, then 0 (observed). */
    for (int i = 0; i < ndim; i++)
        t->strides[i] = i == 0 ? 1 : 0;
    t->sparse_dim = sd;
    t->dense_dim = ndim - sd;
    t->nnz = nnz;
    t->coalesced = coalesced != 0;
    t->indices = ind;
    t->values = val;
    return t;
}

/* Children of a COO tensor with nnz entries: indices written, values
 * filled with init. */
static int coo_children(int ndim, const int64_t *sizes, int sd, ts_dtype dt, ts_device dev,
                        int64_t nnz, int64_t P, ts_init init, ts_tensor **ind, ts_tensor **val)
{
    int64_t isz[2] = {sd, nnz}, vsz[TS_MAX_DIM + 1];
    vsz[0] = nnz;
    for (int i = sd; i < ndim; i++)
        vsz[1 + i - sd] = sizes[i];
    *ind = ts_new_strided(2, isz, NULL, TS_I64, dev, TS_INIT_NONE);
    if (!*ind)
        return -1;
    *val = ts_new_strided(1 + ndim - sd, vsz, NULL, dt, dev, init);
    if (!*val) {
        drop(*ind);
        *ind = NULL;
        return -1;
    }
    write_indices(*ind, sd, sizes, nnz, P);
    return 0;
}

ts_tensor *ts_sparse_coo(int ndim, const int64_t *sizes, int64_t nnz, int sparse_dim,
                         ts_dtype dt, ts_device dev, int coalesced)
{
    char s[256];
    int64_t P = 0;   /* set by sparse_positions; gcc -O3 cannot see it */
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
        er_set(ER_TYPE, "unknown dtype %d", (int)dt);
        return NULL;
    }
    if (ts_shape_check(ndim, sizes))
        return NULL;
    if (sparse_dim < 0 || sparse_dim > ndim) {
        er_set(ER_SHAPE, "sparse_dim %d must be in [0, %d] for sizes %s", sparse_dim, ndim,
               ts_fmt_shape(s, sizeof s, ndim, sizes));
        return NULL;
    }
    if (nnz < 0) {
        er_set(ER_SHAPE, "nnz must be >= 0 (got %lld)", (long long)nnz);
        return NULL;
    }
    if (sparse_positions(sparse_dim, sizes, &P))
        return NULL;
    dev = ts_device_norm(dev);
    if (dev.type == TS_DEV_META) {
        nnz = 0;   /* a meta COO tensor has no entries; it keeps its flag */
    } else if (nnz > 0 && P == 0) {
        er_set(ER_SHAPE, "nnz %lld entries do not fit in sparse sizes %s (no positions)",
               (long long)nnz, ts_fmt_shape(s, sizeof s, sparse_dim, sizes));
        return NULL;
    } else if (coalesced && nnz > P) {
        er_set(ER_SHAPE, "a coalesced tensor of sparse sizes %s holds at most %lld entries, "
               "not %lld", ts_fmt_shape(s, sizeof s, sparse_dim, sizes), (long long)P,
               (long long)nnz);
        return NULL;
    }
    ts_tensor *ind, *val;
    if (coo_children(ndim, sizes, sparse_dim, dt, dev, nnz, P, TS_INIT_ONES, &ind, &val))
        return NULL;
    /* PyTorch 1.13: sparse_coo_tensor with fewer than 2 entries is
     * coalesced whatever was asked (torch 1.13.1: nnz 0 and 1 -> True). A
     * meta tensor keeps its flag (the meta converter copies it). */
    if (nnz < 2 && dev.type != TS_DEV_META)
        coalesced = 1;
    return coo_wrap(ndim, sizes, sparse_dim, dt, dev, nnz, coalesced, ind, val);
}

static ts_tensor *csr_new(int64_t rows, int64_t cols, int64_t nnz, ts_dtype dt,
                          ts_device dev);

ts_tensor *ts_sparse_csr(int64_t rows, int64_t cols, int64_t nnz, ts_dtype dt, ts_device dev)
{
    char d[32];
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
        er_set(ER_TYPE, "unknown dtype %d", (int)dt);
        return NULL;
    }
    dev = ts_device_norm(dev);
    if (dev.type == TS_DEV_META || dev.type == TS_DEV_LAZY) {
        ts_device_format(dev, d, sizeof d);
        er_set(ER_TYPE, "Unsupported device type for SparseCsr layout: %s", d);
        return NULL;
    }
    return csr_new(rows, cols, nnz, dt, dev);
}

ts_tensor *ts_sparse_csr_meta(int64_t rows, int64_t cols, ts_dtype dt)
{
    if ((unsigned)dt >= TS_DTYPE_COUNT) {
        er_set(ER_TYPE, "unknown dtype %d", (int)dt);
        return NULL;
    }
    return csr_new(rows, cols, 0, dt, ts_meta());
}

static ts_tensor *csr_new(int64_t rows, int64_t cols, int64_t nnz, ts_dtype dt,
                          ts_device dev)
{
    int64_t sizes[2] = {rows, cols}, cap = 0;
    char s[256];
    if (ts_shape_check(2, sizes) || sparse_positions(2, sizes, &cap))
        return NULL;
    if (nnz < 0 || nnz > cap) {
        er_set(ER_SHAPE, "nnz %lld does not fit a CSR tensor of size %s", (long long)nnz,
               ts_fmt_shape(s, sizeof s, 2, sizes));
        return NULL;
    }
    int64_t crow_n = rows + 1;
    ts_tensor *crow = ts_new_strided(1, &crow_n, NULL, TS_I64, dev, TS_INIT_NONE);
    if (!crow)
        return NULL;
    ts_tensor *col = ts_new_strided(1, &nnz, NULL, TS_I64, dev, TS_INIT_NONE);
    if (!col) {
        drop(crow);
        return NULL;
    }
    ts_tensor *val = ts_new_strided(1, &nnz, NULL, dt, dev, TS_INIT_ONES);
    if (!val) {
        drop(crow);
        drop(col);
        return NULL;
    }
    ts_tensor *t = ts_alloc_tensor(2);
    if (!t) {
        drop(crow);
        drop(col);
        drop(val);
        return NULL;
    }
    /* entry k at (k / cols, k % cols) */
    unsigned char *pc = ts_data_ptr(crow), *pl = ts_data_ptr(col);
    for (int64_t r = 0; pc && r <= rows; r++) {
        double v[2] = {(double)(r * cols < nnz ? r * cols : nnz), 0};
        ts_store(TS_I64, pc + r * 8, v);
    }
    for (int64_t k = 0; pl && k < nnz; k++) {
        double v[2] = {(double)(k % cols), 0};
        ts_store(TS_I64, pl + k * 8, v);
    }
    t->layout = TS_SPARSE_CSR;
    t->dtype = dt;
    t->device = dev;
    t->sizes[0] = rows;
    t->sizes[1] = cols;
    t->sparse_dim = 2;
    t->nnz = nnz;
    t->crow = crow;
    t->col = col;
    t->values = val;
    return t;
}

/* ---- COO ops ---- */

static ts_tensor *coalesce_of(ts_tensor *self)
{
    if (self->coalesced) {
        obj_incref(&self->hdr);
        return self;
    }
    int64_t P;
    int sd = self->sparse_dim;
    if (sparse_positions(sd, self->sizes, &P))
        return NULL;
    int64_t nnz = self->nnz < P ? self->nnz : P;
    if (self->device.type == TS_DEV_META)
        nnz = 0;
    ts_tensor *ind, *val;
    if (coo_children(self->ndim, self->sizes, sd, self->dtype, self->device, nnz, P,
                     TS_INIT_ZEROS, &ind, &val))
        return NULL;
    /* sum duplicates: entry k adds into slot position(k) */
    unsigned char *pv = ts_data_ptr(val), *ps = ts_data_ptr(self->values);
    if (pv && ps && ts_data_ptr(self->indices)) {
        size_t isz = ts_dtype_size(self->dtype);
        for (int64_t k = 0; k < self->nnz; k++) {
            int64_t pos = entry_position(self->indices, sd, self->sizes, k);
            if (pos < 0 || pos >= nnz)
                continue;
            ts_move_elems(val->ndim - 1, val->sizes + 1,
                          pv + (size_t)(pos * val->strides[0]) * isz, val->strides + 1,
                          val->dtype,
                          ps + (size_t)(k * self->values->strides[0]) * isz,
                          self->values->strides + 1, self->values->dtype, 1);
        }
    }
    ts_tensor *t = coo_wrap(self->ndim, self->sizes, sd, self->dtype, self->device, nnz, 1,
                            ind, val);
    if (t)
        ts_set_result_grad(t, self->requires_grad);
    return t;
}

static ts_tensor *coo_to_dense(ts_tensor *self)
{
    int sd = self->sparse_dim;
    ts_tensor *out = ts_new_strided(self->ndim, self->sizes, NULL, self->dtype, self->device,
                                    TS_INIT_ZEROS);
    if (!out)
        return NULL;
    unsigned char *po = ts_data_ptr(out), *ps = ts_data_ptr(self->values);
    if (po && ps && ts_data_ptr(self->indices)) {
        size_t isz = ts_dtype_size(self->dtype);
        for (int64_t k = 0; k < self->nnz; k++) {
            int64_t pos = entry_position(self->indices, sd, self->sizes, k);
            if (pos < 0)
                continue;
            /* row-major position over the sparse dims -> element offset */
            int64_t off = 0, rest = pos;
            for (int d = sd - 1; d >= 0; d--) {
                off += (rest % self->sizes[d]) * out->strides[d];
                rest /= self->sizes[d];
            }
            ts_move_elems(self->ndim - sd, self->sizes + sd, po + (size_t)off * isz,
                          out->strides + sd, out->dtype,
                          ps + (size_t)(k * self->values->strides[0]) * isz,
                          self->values->strides + 1, self->values->dtype, 1);
        }
    }
    ts_set_result_grad(out, self->requires_grad);
    return out;
}

ts_tensor *ts_to_sparse(ts_tensor *self, const ts_args *a)
{
    int64_t sd64 = a->has_sparse_dim ? a->sparse_dim : a->n == 1 ? a->v[0] : self->ndim;
    if (sd64 > self->ndim) {
        er_set(ER_SHAPE, "sparse_dim must be less than or equal to self.dim() (%lld > %d)",
               (long long)sd64, self->ndim);
        return NULL;
    }
    if (sd64 <= 0 && self->ndim > 0) {
        er_set(ER_SHAPE, "sparse_dim must be >0 if dimensionality > 0 (got %lld)",
               (long long)sd64);
        return NULL;
    }
    if (sd64 < 0)
        sd64 = 0;
    int sd = (int)sd64;
    int64_t P = 0;   /* as in ts_sparse_coo */
    if (sparse_positions(sd, self->sizes, &P))
        return NULL;
    int64_t nnz = self->device.type == TS_DEV_META ? 0 : P;
    ts_tensor *ind, *val;
    if (coo_children(self->ndim, self->sizes, sd, self->dtype, self->device, nnz, P,
                     TS_INIT_NONE, &ind, &val))
        return NULL;
    /* gather: entry k is the dense block at row-major position k */
    unsigned char *pv = ts_data_ptr(val), *ps = ts_data_ptr(self);
    if (pv && ps) {
        size_t isz = ts_dtype_size(self->dtype);
        for (int64_t k = 0; k < nnz; k++) {
            int64_t off = 0, rest = k;
            for (int d = sd - 1; d >= 0; d--) {
                off += (rest % self->sizes[d]) * self->strides[d];
                rest /= self->sizes[d];
            }
            ts_move_elems(self->ndim - sd, self->sizes + sd,
                          pv + (size_t)(k * val->strides[0]) * isz, val->strides + 1,
                          val->dtype, ps + (size_t)off * isz, self->strides + sd,
                          self->dtype, 0);
        }
        if (self->neg || self->conj) {
            /* values were copied raw: apply the bits on the (contiguous) block */
            int64_t n = ts_numel(val);
            for (int64_t i = 0; i < n; i++) {
                double v[2];
                ts_load(val->dtype, pv + (size_t)i * isz, self->neg, self->conj, v);
                ts_store(val->dtype, pv + (size_t)i * isz, v);
            }
        }
    }
    ts_tensor *t = coo_wrap(self->ndim, self->sizes, sd, self->dtype, self->device, nnz, 1,
                            ind, val);
    if (t)
        ts_set_result_grad(t, self->requires_grad);
    return t;
}

/* values(): a view of the values child whose base is the sparse tensor
 * itself (PyTorch: `s.values()._base is s`). */
static ts_tensor *values_view(ts_tensor *self)
{
    ts_tensor *src = self->values;
    ts_tensor *v = ts_alloc_tensor(src->ndim);
    if (!v)
        return NULL;
    v->dtype = src->dtype;
    v->device = src->device;
    ts_copy_dims(v->sizes, src->sizes, src->ndim);
    ts_copy_dims(v->strides, src->strides, src->ndim);
    v->storage_offset = src->storage_offset;
    ts_set_result_grad(v, self->requires_grad);
    obj_incref(&src->storage->hdr);
    v->storage = src->storage;
    obj_incref(&self->hdr);
    v->base = self;
    if (ts_bug_flags.view_base_leak)
        obj_incref(&self->hdr);
    return v;
}

static ts_tensor *coo_clone_to(ts_tensor *self, ts_device dev, ts_dtype dt)
{
    if (dev.type == TS_DEV_META && self->device.type != TS_DEV_META)
        return ts_sparse_coo(self->ndim, self->sizes, 0, self->sparse_dim, dt, dev, 1);
    ts_tensor *ind = ts_clone_to(self->indices, dev, TS_I64, 0);
    if (!ind)
        return NULL;
    ts_tensor *val = ts_clone_to(self->values, dev, dt, 0);
    if (!val) {
        drop(ind);
        return NULL;
    }
    ts_tensor *t = coo_wrap(self->ndim, self->sizes, self->sparse_dim, dt, dev, self->nnz,
                            self->coalesced, ind, val);
    if (t)
        ts_set_result_grad(t, self->requires_grad && ts_dtype_can_require_grad(dt));
    return t;
}

static ts_tensor *sparse_detach(ts_tensor *self)
{
    ts_tensor *t = ts_alloc_tensor(self->ndim);
    if (!t)
        return NULL;
    t->layout = self->layout;
    t->dtype = self->dtype;
    t->device = self->device;
    ts_copy_dims(t->sizes, self->sizes, self->ndim);
    ts_copy_dims(t->strides, self->strides, self->ndim);
    t->sparse_dim = self->sparse_dim;
    t->dense_dim = self->dense_dim;
    t->nnz = self->nnz;
    t->coalesced = self->coalesced;
    ts_tensor *kids[4] = {self->indices, self->values, self->crow, self->col};
    for (int i = 0; i < 4; i++)
        if (kids[i])
            obj_incref(&kids[i]->hdr);
    t->indices = self->indices;
    t->values = self->values;
    t->crow = self->crow;
    t->col = self->col;
    return t;
}

static ts_tensor *coo_zero(ts_tensor *self)
{
    ts_tensor *ind, *val;
    if (coo_children(self->ndim, self->sizes, self->sparse_dim, self->dtype, self->device,
                     0, 1, TS_INIT_NONE, &ind, &val))
        return NULL;
    ts_tensor *old_i = self->indices, *old_v = self->values;
    self->indices = ind;
    self->values = val;
    self->nnz = 0;
    self->coalesced = 1;
    drop(old_i);
    drop(old_v);
    obj_incref(&self->hdr);
    return self;
}

static ts_tensor *csr_to_dense(ts_tensor *self)
{
    ts_tensor *out = ts_new_strided(2, self->sizes, NULL, self->dtype, self->device,
                                    TS_INIT_ZEROS);
    if (!out)
        return NULL;
    unsigned char *po = ts_data_ptr(out), *pc = ts_data_ptr(self->crow);
    unsigned char *pl = ts_data_ptr(self->col), *pv = ts_data_ptr(self->values);
    size_t isz = ts_dtype_size(self->dtype);
    int64_t one = 1;
    for (int64_t r = 0; po && pc && pl && pv && r < self->sizes[0]; r++) {
        double lo[2], hi[2];
        ts_load(TS_I64, pc + r * 8, 0, 0, lo);
        ts_load(TS_I64, pc + (r + 1) * 8, 0, 0, hi);
        for (int64_t k = (int64_t)lo[0]; k < (int64_t)hi[0]; k++) {
            double c[2];
            if (k < 0 || k >= self->nnz)
                break;
            ts_load(TS_I64, pl + k * 8, 0, 0, c);
            if (c[0] < 0 || c[0] >= (double)self->sizes[1])
                continue;
            ts_move_elems(1, &one, po + (size_t)(r * out->strides[0] + (int64_t)c[0]) * isz,
                          &one, out->dtype, pv + (size_t)(k * self->values->strides[0]) * isz,
                          &one, self->values->dtype, 1);
        }
    }
    return out;
}

static ts_tensor *csr_clone(ts_tensor *self)
{
    ts_tensor *crow = ts_clone_to(self->crow, self->device, TS_I64, 0);
    ts_tensor *col = crow ? ts_clone_to(self->col, self->device, TS_I64, 0) : NULL;
    ts_tensor *val = col ? ts_clone_to(self->values, self->device, self->dtype, 0) : NULL;
    ts_tensor *t = val ? ts_alloc_tensor(2) : NULL;
    if (!t) {
        drop(crow);
        drop(col);
        drop(val);
        return NULL;
    }
    t->layout = TS_SPARSE_CSR;
    t->dtype = self->dtype;
    t->device = self->device;
    ts_copy_dims(t->sizes, self->sizes, 2);
    t->sparse_dim = self->sparse_dim;
    t->nnz = self->nnz;
    t->crow = crow;
    t->col = col;
    t->values = val;
    return t;
}

static ts_tensor *unsupported(ts_op op, const ts_tensor *self)
{
    er_set(ER_TYPE, "%s() is not supported for sparse %s tensors", ts_op_name(op),
           self->layout == TS_SPARSE_COO ? "COO" : "CSR");
    return NULL;
}

static ts_tensor *coo_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    ts_device dev;
    ts_dtype dt;
    int k;
    switch (op) {
    case TS_OP_CLONE:
        return coo_clone_to(self, self->device, self->dtype);
    case TS_OP_DETACH:
        return sparse_detach(self);
    case TS_OP_CONTIGUOUS:
        obj_incref(&self->hdr);
        return self;
    case TS_OP_CONJ:
        if (ts_dtype_is_complex(self->dtype))
            return unsupported(op, self);
        obj_incref(&self->hdr);
        return self;
    case TS_OP_TO:
        k = ts_to_target(self, a, &dev, &dt);
        if (k != 0)
            return k > 0 ? self : NULL;
        return coo_clone_to(self, dev, dt);
    case TS_OP_COALESCE:
        return coalesce_of(self);
    case TS_OP_TO_DENSE:
        return coo_to_dense(self);
    case TS_OP_INDICES:
        if (!self->coalesced) {
            er_set(ER_TYPE, "Cannot get indices on an uncoalesced tensor, please call "
                   ".coalesce() first");
            return NULL;
        }
        /* an alias of the indices, not a view (PyTorch: _is_view() False) */
        return ts_from_storage(self->indices->storage, self->indices->ndim,
                               self->indices->sizes, self->indices->strides,
                               self->indices->storage_offset, TS_I64);
    case TS_OP_VALUES:
        if (!self->coalesced) {
            er_set(ER_TYPE, "Cannot get values on an uncoalesced tensor, please call "
                   ".coalesce() first");
            return NULL;
        }
        return values_view(self);
    case TS_OP_ZERO_:
        return coo_zero(self);
    case TS_OP_TO_SPARSE:
        er_set(ER_TYPE, "to_sparse() expects a strided tensor, got a sparse COO one");
        return NULL;
    default:
        return unsupported(op, self);
    }
}

static ts_tensor *csr_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    switch (op) {
    case TS_OP_CLONE:
        return csr_clone(self);
    case TS_OP_DETACH:
        return sparse_detach(self);
    case TS_OP_CONTIGUOUS:
        obj_incref(&self->hdr);
        return self;
    case TS_OP_VALUES:
        return values_view(self);
    case TS_OP_TO_DENSE:
        return csr_to_dense(self);
    case TS_OP_TO:
        if ((!a->has_device || ts_device_eq(ts_device_norm(a->device), self->device)) &&
            (!a->has_dtype || a->dtype == self->dtype)) {
            obj_incref(&self->hdr);
            return self;
        }
        if (a->has_device && a->device.type == TS_DEV_META) {
            er_set(ER_TYPE, "Unsupported device type for SparseCsr layout: meta");
            return NULL;
        }
        return unsupported(op, self);
    default:
        return unsupported(op, self);
    }
}

ts_tensor *ts_sparse_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    if (self->layout == TS_SPARSE_COO)
        return coo_apply(op, self, a);
    return csr_apply(op, self, a);
}
