/* ts_view.c - view ops: new tensors over the same storage, holding their
 * base (the original non-view tensor). Geometry rules and messages follow
 * PyTorch 1.13 (observed with torch 1.13 and written into the tests). */
#include "tensor/ts_internal.h"

#include <string.h>

#include "core/er.h"

static ts_tensor *view_of(ts_tensor *self, const ts_args *a)
{
    int64_t numel = ts_numel(self), shape[TS_MAX_DIM], st[TS_MAX_DIM];
    if (ts_shape_infer(a->n, a->v, numel, shape))
        return NULL;
    if (!ts_shape_view_strides(self->ndim, self->sizes, self->strides, a->n, shape, st)) {
        char s1[256], s2[256], s3[256];
        er_set(ER_SHAPE, "view size is not compatible with input tensor's size and stride "
               "(at least one dimension spans across two contiguous subspaces). Use "
               ".reshape(...) instead. (sizes %s, strides %s, view %s)",
               ts_fmt_shape(s1, sizeof s1, self->ndim, self->sizes),
               ts_fmt_shape(s2, sizeof s2, self->ndim, self->strides),
               ts_fmt_shape(s3, sizeof s3, a->n, shape));
        return NULL;
    }
    return ts_make_view(self, a->n, shape, st, self->storage_offset);
}

static ts_tensor *reshape_of(ts_tensor *self, const ts_args *a)
{
    int64_t numel = ts_numel(self), shape[TS_MAX_DIM], st[TS_MAX_DIM];
    if (ts_shape_infer(a->n, a->v, numel, shape))
        return NULL;
    if (ts_shape_view_strides(self->ndim, self->sizes, self->strides, a->n, shape, st))
        return ts_make_view(self, a->n, shape, st, self->storage_offset);
    /* No view possible: a contiguous copy, which is not a view. */
    ts_tensor *c = ts_clone_to(self, self->device, self->dtype, 1);
    if (!c)
        return NULL;
    if (ts_set_ndim(c, a->n) != 0) {
        obj_decref(&c->hdr);
        return NULL;
    }
    memcpy(c->sizes, shape, (size_t)a->n * sizeof *shape);
    ts_shape_contig_strides(a->n, shape, c->strides);
    return c;
}

static ts_tensor *transpose_of(ts_tensor *self, int64_t d0, int64_t d1)
{
    int a0, a1;
    if (ts_wrap_dim(d0, self->ndim, 1, &a0) || ts_wrap_dim(d1, self->ndim, 1, &a1))
        return NULL;
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    ts_copy_dims(sz, self->sizes, self->ndim);
    ts_copy_dims(st, self->strides, self->ndim);
    if (self->ndim > 0) {
        int64_t t = sz[a0]; sz[a0] = sz[a1]; sz[a1] = t;
        t = st[a0]; st[a0] = st[a1]; st[a1] = t;
    }
    return ts_make_view(self, self->ndim, sz, st, self->storage_offset);
}

static ts_tensor *slice_of(ts_tensor *self, int64_t dim, int64_t start, int64_t end,
                           int64_t step)
{
    int d;
    if (self->ndim == 0) {
        er_set(ER_SHAPE, "slice() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (ts_wrap_dim(dim, self->ndim, 1, &d))
        return NULL;
    if (step <= 0) {
        er_set(ER_SHAPE, "slice step must be positive (got %lld)", (long long)step);
        return NULL;
    }
    int64_t size = self->sizes[d];
    if (start < 0)
        start += size;
    if (end < 0)
        end += size;
    if (start < 0)
        start = 0;
    else if (start >= size)
        start = size;
    if (end < start)
        end = start;
    else if (end >= size)
        end = size;
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM], off;
    ts_copy_dims(sz, self->sizes, self->ndim);
    ts_copy_dims(st, self->strides, self->ndim);
    int64_t len = end - start;
    sz[d] = len == 0 ? 0 : (len - 1) / step + 1;
    if (__builtin_mul_overflow(start, st[d], &off) ||
        __builtin_add_overflow(off, self->storage_offset, &off) ||
        __builtin_mul_overflow(st[d], step, &st[d])) {
        er_set(ER_SHAPE, "slice(%d, %lld, %lld, %lld): stride or offset overflows", d,
               (long long)start, (long long)end, (long long)step);
        return NULL;
    }
    return ts_make_view(self, self->ndim, sz, st, off);
}

static ts_tensor *select_of(ts_tensor *self, int64_t dim, int64_t index)
{
    int d;
    char s[256];
    if (self->ndim == 0) {
        er_set(ER_SHAPE, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (ts_wrap_dim(dim, self->ndim, 1, &d))
        return NULL;
    int64_t size = self->sizes[d];
    if (index < -size || index >= size) {
        er_set(ER_SHAPE, "select(): index %lld out of range for tensor of size %s at "
               "dimension %d", (long long)index,
               ts_fmt_shape(s, sizeof s, self->ndim, self->sizes), d);
        return NULL;
    }
    if (index < 0)
        index += size;
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i == d)
            continue;
        sz[k] = self->sizes[i];
        st[k++] = self->strides[i];
    }
    return ts_make_view(self, self->ndim - 1, sz, st,
                        self->storage_offset + index * self->strides[d]);
}

static ts_tensor *narrow_of(ts_tensor *self, int64_t dim, int64_t start, int64_t length)
{
    int d;
    if (self->ndim == 0) {
        er_set(ER_SHAPE, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (ts_wrap_dim(dim, self->ndim, 1, &d))
        return NULL;
    int64_t cur = self->sizes[d];
    if (start != cur) {
        /* PyTorch wraps start like a dim index over the size (a size 0 dim
         * wraps like a scalar: [-1, 0]) */
        int64_t n = cur > 0 ? cur : 1;
        if (start < -n || start >= n) {
            er_set(ER_SHAPE, "Dimension out of range (expected to be in range of [%lld, "
                   "%lld], but got %lld)", (long long)-n, (long long)(n - 1),
                   (long long)start);
            return NULL;
        }
        if (start < 0)
            start += n;
    }
    if (length < 0 || start > cur - length) {
        er_set(ER_SHAPE, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
               (long long)start, (long long)length, (long long)cur);
        return NULL;
    }
    return slice_of(self, d, start, start + length, 1);
}

static ts_tensor *unsqueeze_of(ts_tensor *self, int64_t dim)
{
    int d;
    if (ts_wrap_dim(dim, self->ndim + 1, 1, &d))
        return NULL;
    if (self->ndim + 1 > TS_MAX_DIM) {
        er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)",
               self->ndim + 1, TS_MAX_DIM);
        return NULL;
    }
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    int k = 0;
    for (int i = 0; i <= self->ndim; i++) {
        if (i == d) {
            sz[k] = 1;
            st[k++] = d >= self->ndim ? 1 : self->sizes[d] * self->strides[d];
        }
        if (i < self->ndim) {
            sz[k] = self->sizes[i];
            st[k++] = self->strides[i];
        }
    }
    return ts_make_view(self, self->ndim + 1, sz, st, self->storage_offset);
}

static ts_tensor *squeeze_of(ts_tensor *self, const ts_args *a)
{
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    int k = 0, d = -1;
    if (a->n == 1 && ts_wrap_dim(a->v[0], self->ndim, 1, &d))
        return NULL;
    for (int i = 0; i < self->ndim; i++) {
        int drop = self->sizes[i] == 1 && (a->n == 0 || i == d);
        if (drop)
            continue;
        sz[k] = self->sizes[i];
        st[k++] = self->strides[i];
    }
    return ts_make_view(self, k, sz, st, self->storage_offset);
}

static ts_tensor *expand_of(ts_tensor *self, const ts_args *a)
{
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    if (ts_shape_expand(self->ndim, self->sizes, self->strides, a->n, a->v, sz, st))
        return NULL;
    return ts_make_view(self, a->n, sz, st, self->storage_offset);
}

static ts_tensor *as_strided_of(ts_tensor *self, const ts_args *a)
{
    char s1[256], s2[256];
    uint64_t need;
    if (a->n != a->n2) {
        er_set(ER_SHAPE, "mismatch in length of strides and shape (sizes %s, strides %s)",
               ts_fmt_shape(s1, sizeof s1, a->n, a->v),
               ts_fmt_shape(s2, sizeof s2, a->n2, a->v2));
        return NULL;
    }
    if (ts_shape_check(a->n, a->v))
        return NULL;
    for (int i = 0; i < a->n; i++) {
        if (a->v2[i] < 0) {
            er_set(ER_SHAPE, "as_strided: Negative strides are not supported at the "
                   "moment, got strides: %s", ts_fmt_shape(s2, sizeof s2, a->n2, a->v2));
            return NULL;
        }
    }
    if (a->offset < 0) {
        er_set(ER_SHAPE, "Tensor: invalid storage offset %lld", (long long)a->offset);
        return NULL;
    }
    if (ts_shape_storage_bytes(a->n, a->v, a->v2, a->offset, ts_dtype_size(self->dtype),
                               &need))
        return NULL;
    if (need > self->storage->nbytes) {
        er_set(ER_SHAPE, "setStorage: sizes %s, strides %s, storage offset %lld, and "
               "itemsize %zu requiring a storage size of %llu are out of bounds for storage "
               "of size %llu", ts_fmt_shape(s1, sizeof s1, a->n, a->v),
               ts_fmt_shape(s2, sizeof s2, a->n2, a->v2), (long long)a->offset,
               ts_dtype_size(self->dtype), (unsigned long long)need,
               (unsigned long long)self->storage->nbytes);
        return NULL;
    }
    return ts_make_view(self, a->n, a->v, a->v2, a->offset);
}

static ts_tensor *diagonal_of(ts_tensor *self, const ts_args *a)
{
    int64_t offset = a->n > 0 ? a->v[0] : 0;
    int64_t d1_ = a->n > 1 ? a->v[1] : 0, d2_ = a->n > 2 ? a->v[2] : 1;
    int d1, d2;
    if (ts_wrap_dim(d1_, self->ndim, 1, &d1) || ts_wrap_dim(d2_, self->ndim, 1, &d2))
        return NULL;
    if (d1 == d2 || self->ndim < 2) {
        er_set(ER_SHAPE, "diagonal dimensions cannot be identical %lld, %lld",
               (long long)d1_, (long long)d2_);
        return NULL;
    }
    int64_t n1 = self->sizes[d1], n2 = self->sizes[d2], diag;
    int64_t off = self->storage_offset;
    if (offset >= 0) {
        int64_t m = offset > n2 ? -1 : n2 - offset;
        diag = n1 < m ? n1 : m;
    } else {
        int64_t m = -offset > n1 ? -1 : n1 + offset;
        diag = m < n2 ? m : n2;
    }
    if (diag < 0)
        diag = 0;
    if (diag > 0)
        off += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    int k = 0;
    for (int i = 0; i < self->ndim; i++) {
        if (i == d1 || i == d2)
            continue;
        sz[k] = self->sizes[i];
        st[k++] = self->strides[i];
    }
    sz[k] = diag;
    st[k++] = self->strides[d1] + self->strides[d2];
    return ts_make_view(self, k, sz, st, off);
}

static ts_tensor *detach_of(ts_tensor *self)
{
    /* Shares the storage but is not a view (no base), as in PyTorch. */
    ts_tensor *t = ts_alloc_tensor(self->ndim);
    if (!t)
        return NULL;
    t->dtype = self->dtype;
    t->device = self->device;
    ts_copy_dims(t->sizes, self->sizes, self->ndim);
    ts_copy_dims(t->strides, self->strides, self->ndim);
    t->storage_offset = self->storage_offset;
    t->neg = self->neg;
    t->conj = self->conj;
    t->quantized = self->quantized;
    obj_incref(&self->storage->hdr);
    t->storage = self->storage;
    return t;
}

static ts_tensor *view_as_real_of(ts_tensor *self)
{
    if (!ts_dtype_is_complex(self->dtype)) {
        er_set(ER_TYPE, "view_as_real is only supported for complex tensors (got %s)",
               ts_dtype_name(self->dtype));
        return NULL;
    }
    if (self->conj) {
        er_set(ER_TYPE, "view_as_real doesn't work on unresolved conjugated tensors.");
        return NULL;
    }
    if (self->ndim + 1 > TS_MAX_DIM) {
        er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)",
               self->ndim + 1, TS_MAX_DIM);
        return NULL;
    }
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM];
    for (int i = 0; i < self->ndim; i++) {
        sz[i] = self->sizes[i];
        st[i] = self->strides[i] * 2;
    }
    sz[self->ndim] = 2;
    st[self->ndim] = 1;
    ts_tensor *v = ts_make_view(self, self->ndim + 1, sz, st, self->storage_offset * 2);
    if (v)
        v->dtype = ts_dtype_to_real(self->dtype);
    return v;
}

static ts_tensor *view_as_complex_of(ts_tensor *self)
{
    char s[256];
    if (self->dtype != TS_F32 && self->dtype != TS_F64) {
        er_set(ER_TYPE, "view_as_complex is only supported for float and double tensors "
               "(half would give complex32, which is not modelled), but got a tensor of "
               "scalar type: %s", ts_dtype_name(self->dtype));
        return NULL;
    }
    if (self->ndim == 0) {
        er_set(ER_SHAPE, "Input tensor must have one or more dimensions");
        return NULL;
    }
    int last = self->ndim - 1;
    if (self->sizes[last] != 2) {
        er_set(ER_SHAPE, "Tensor must have a last dimension of size 2 (sizes %s)",
               ts_fmt_shape(s, sizeof s, self->ndim, self->sizes));
        return NULL;
    }
    if (self->strides[last] != 1) {
        er_set(ER_SHAPE, "Tensor must have a last dimension with stride 1 (strides %s)",
               ts_fmt_shape(s, sizeof s, self->ndim, self->strides));
        return NULL;
    }
    int64_t st[TS_MAX_DIM];
    for (int i = 0; i < last; i++) {
        if (self->strides[i] % 2 != 0) {
            er_set(ER_SHAPE, "Tensor must have a stride divisible by 2 for all but last "
                   "dimension (strides %s)",
                   ts_fmt_shape(s, sizeof s, self->ndim, self->strides));
            return NULL;
        }
        st[i] = self->strides[i] / 2;
    }
    if (self->storage_offset % 2 != 0) {
        er_set(ER_SHAPE, "Tensor must have a storage_offset divisible by 2 (offset %lld)",
               (long long)self->storage_offset);
        return NULL;
    }
    ts_tensor *v = ts_make_view(self, last, self->sizes, st, self->storage_offset / 2);
    if (v)
        v->dtype = self->dtype == TS_F32 ? TS_C64 : TS_C128;
    return v;
}

/* view(dtype), PyTorch 1.13.1's view_dtype: same storage, not a view, no
 * grad; a different element size rescales the last dimension. */
static ts_tensor *view_dtype_of(ts_tensor *self, ts_dtype dt)
{
    size_t from = ts_dtype_size(self->dtype), to = ts_dtype_size(dt);
    const char *a = ts_dtype_name(self->dtype), *b = ts_dtype_name(dt);
    if (from != to && self->conj) {
        er_set(ER_TYPE, "torch.Tensor.view is not supported for conjugate view tensors "
               "when converting to a different dtype.");
        return NULL;
    }
    if (from != to && self->neg) {
        er_set(ER_TYPE, "torch.Tensor.view is not supported for tensors with negative bit "
               "set when converting to a different dtype.");
        return NULL;
    }
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM], off = self->storage_offset;
    int n = self->ndim, last = n - 1;
    ts_copy_dims(sz, self->sizes, n);
    ts_copy_dims(st, self->strides, n);
    if (from != to) {
        if (n == 0) {
            er_set(ER_SHAPE, "self.dim() cannot be 0 to view %s as %s (different element "
                   "sizes)", a, b);
            return NULL;
        }
        if (st[last] != 1) {
            er_set(ER_SHAPE, "self.stride(-1) must be 1 to view %s as %s (different element "
                   "sizes), but got %lld", a, b, (long long)st[last]);
            return NULL;
        }
        if (from > to) {
            int64_t r = (int64_t)(from / to);
            sz[last] *= r;
            for (int i = 0; i < last; i++)
                st[i] *= r;
            off *= r;
        } else {
            int64_t r = (int64_t)(to / from);
            if (sz[last] % r) {
                er_set(ER_SHAPE, "self.size(-1) must be divisible by %lld to view %s as %s "
                       "(different element sizes), but got %lld", (long long)r, a, b,
                       (long long)sz[last]);
                return NULL;
            }
            if (off % r) {
                er_set(ER_SHAPE, "self.storage_offset() must be divisible by %lld to view %s "
                       "as %s (different element sizes), but got %lld", (long long)r, a, b,
                       (long long)off);
                return NULL;
            }
            for (int i = 0; i < last; i++) {
                if (st[i] % r) {
                    er_set(ER_SHAPE, "self.stride(%d) must be divisible by %lld to view %s "
                           "as %s (different element sizes), but got %lld", i,
                           (long long)r, a, b, (long long)st[i]);
                    return NULL;
                }
                st[i] /= r;
            }
            sz[last] /= r;
            off /= r;
        }
    }
    ts_tensor *t = ts_alloc_tensor(n);
    if (!t)
        return NULL;
    t->dtype = dt;
    t->device = self->device;
    ts_copy_dims(t->sizes, sz, n);
    ts_copy_dims(t->strides, st, n);
    t->storage_offset = off;
    t->neg = self->neg;
    t->conj = self->conj;
    obj_incref(&self->storage->hdr);
    t->storage = self->storage;
    return t;
}

/* t.real / t.imag of a complex tensor: views at stride 2 (imag one element
 * on); the conj bit is resolved into them (imag of a conj view is negated). */
static ts_tensor *part_of(ts_tensor *self, int imag)
{
    if (!ts_dtype_is_complex(self->dtype)) {
        if (!imag) {
            obj_incref(&self->hdr);   /* PyTorch: real of a real tensor is self */
            return self;
        }
        er_set(ER_TYPE, "imag is not implemented for tensors with non-complex dtypes.");
        return NULL;
    }
    int64_t st[TS_MAX_DIM];
    for (int i = 0; i < self->ndim; i++)
        st[i] = self->strides[i] * 2;
    ts_tensor *v = ts_make_view(self, self->ndim, self->sizes, st,
                                self->storage_offset * 2 + imag);
    if (v) {
        v->dtype = ts_dtype_to_real(self->dtype);
        v->neg = (self->neg != 0) != (imag && self->conj) ? 1u : 0u;
        v->conj = 0;
    }
    return v;
}

ts_tensor *ts_view_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    const int64_t *v = a->v;
    ts_tensor *r;
    switch (op) {
    case TS_OP_VIEW:
        return a->has_dtype ? view_dtype_of(self, a->dtype) : view_of(self, a);
    case TS_OP_REAL:
    case TS_OP_IMAG:
        return part_of(self, op == TS_OP_IMAG);
    case TS_OP_RESHAPE:
        return reshape_of(self, a);
    case TS_OP_T:
        if (self->ndim > 2) {
            er_set(ER_SHAPE, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                   self->ndim);
            return NULL;
        }
        return self->ndim < 2 ? transpose_of(self, 0, 0) : transpose_of(self, 0, 1);
    case TS_OP_TRANSPOSE:
        return transpose_of(self, v[0], v[1]);
    case TS_OP_SLICE:
        return slice_of(self, v[0], v[1], v[2], a->n > 3 ? v[3] : 1);
    case TS_OP_SELECT:
        return select_of(self, v[0], v[1]);
    case TS_OP_NARROW:
        return narrow_of(self, v[0], v[1], v[2]);
    case TS_OP_UNSQUEEZE:
        return unsqueeze_of(self, v[0]);
    case TS_OP_SQUEEZE:
        return squeeze_of(self, a);
    case TS_OP_EXPAND:
        return expand_of(self, a);
    case TS_OP_AS_STRIDED:
        return as_strided_of(self, a);
    case TS_OP_DIAGONAL:
        return diagonal_of(self, a);
    case TS_OP_DETACH:
        return detach_of(self);
    case TS_OP_VIEW_AS_REAL:
        return view_as_real_of(self);
    case TS_OP_VIEW_AS_COMPLEX:
        return view_as_complex_of(self);
    case TS_OP_NEG_VIEW:
        r = ts_make_view(self, self->ndim, self->sizes, self->strides, self->storage_offset);
        if (r)
            r->neg = self->neg ^ 1u;
        return r;
    case TS_OP_CONJ:
        if (!ts_dtype_is_complex(self->dtype)) {
            obj_incref(&self->hdr);   /* PyTorch: conj() of a real tensor is self */
            return self;
        }
        r = ts_make_view(self, self->ndim, self->sizes, self->strides, self->storage_offset);
        if (r)
            r->conj = self->conj ^ 1u;
        return r;
    default:
        er_set(ER_INTERNAL, "ts_view_apply: %s is not a view op", ts_op_name(op));
        return NULL;
    }
}
