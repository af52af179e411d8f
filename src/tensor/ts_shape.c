/* ts_shape.c - pure shape logic, after PyTorch 1.13's ATen helpers. No
 * allocation happens here; every error is ER_SHAPE with the sizes that did
 * not fit. */
#include "tensor/ts_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/er.h"

char *ts_fmt_shape(char *buf, size_t n, int ndim, const int64_t *v)
{
    size_t used = 0;
    if (n == 0)
        return buf;
    buf[0] = '\0';
    int w = snprintf(buf, n, "[");
    if (w > 0)
        used = (size_t)w;
    for (int i = 0; i < ndim && used < n; i++) {
        w = snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)v[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

int ts_shape_check(int ndim, const int64_t *sizes)
{
    char s[256];
    if (ndim < 0 || ndim > TS_MAX_DIM)
        return er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)",
                      ndim, TS_MAX_DIM);
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0)
            return er_set(ER_SHAPE,
                          "Trying to create tensor with negative dimension %lld: %s",
                          (long long)sizes[i], ts_fmt_shape(s, sizeof s, ndim, sizes));
    return 0;
}

int ts_shape_numel(int ndim, const int64_t *sizes, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (__builtin_mul_overflow(n, sizes[i], &n)) {
            char s[256];
            return er_set(ER_SHAPE, "storage size calculation overflowed with sizes=%s "
                          "(numel overflows int64)", ts_fmt_shape(s, sizeof s, ndim, sizes));
        }
    }
    *out = n;
    return 0;
}

void ts_shape_contig_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        /* max(size, 1), as PyTorch: strides stay meaningful around 0 sizes */
        st *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

int ts_shape_storage_bytes(int ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset, size_t itemsize, uint64_t *out)
{
    char s1[256], s2[256];
    if (offset < 0)
        return er_set(ER_SHAPE, "invalid storage offset %lld", (long long)offset);
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *out = 0;
            return 0;
        }
    }
    uint64_t size = (uint64_t)offset + 1;
    int ovf = 0;
    for (int i = 0; i < ndim; i++) {
        uint64_t span;
        if (strides[i] < 0 || sizes[i] < 0) {
            ovf = 1;
            break;
        }
        ovf |= __builtin_mul_overflow((uint64_t)strides[i], (uint64_t)(sizes[i] - 1), &span);
        ovf |= __builtin_add_overflow(size, span, &size);
    }
    ovf = ovf || __builtin_mul_overflow(size, (uint64_t)itemsize, &size);
    if (ovf || size > (uint64_t)INT64_MAX)
        return er_set(ER_SHAPE,
                      "storage size calculation overflowed with sizes=%s and strides=%s",
                      ts_fmt_shape(s1, sizeof s1, ndim, sizes),
                      ts_fmt_shape(s2, sizeof s2, ndim, strides));
    *out = size;
    return 0;
}

int ts_wrap_dim(int64_t d, int ndim, int wrap_scalar, int *out)
{
    int n = ndim;
    if (n == 0) {
        if (!wrap_scalar)
            return er_set(ER_SHAPE, "Dimension specified as %lld but tensor has no dimensions",
                          (long long)d);
        n = 1;
    }
    if (d < -(int64_t)n || d >= (int64_t)n)
        return er_set(ER_SHAPE,
                      "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                      -n, n - 1, (long long)d);
    *out = (int)(d < 0 ? d + n : d);
    return 0;
}

int ts_shape_infer(int n, const int64_t *shape, int64_t numel, int64_t *out)
{
    char s[256];
    int infer = -1;
    int64_t newsize = 1;
    if (n > TS_MAX_DIM)
        return er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)",
                      n, TS_MAX_DIM);
    for (int i = 0; i < n; i++) {
        if (shape[i] == -1) {
            if (infer >= 0)
                return er_set(ER_SHAPE, "only one dimension can be inferred");
            infer = i;
        } else if (shape[i] >= 0) {
            if (__builtin_mul_overflow(newsize, shape[i], &newsize))
                return er_set(ER_SHAPE, "shape '%s' is invalid for input of size %lld",
                              ts_fmt_shape(s, sizeof s, n, shape), (long long)numel);
        } else {
            return er_set(ER_SHAPE, "invalid shape dimension %lld", (long long)shape[i]);
        }
    }
    if (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0)) {
        ts_copy_dims(out, shape, n);
        if (infer >= 0) {
            if (newsize == 0)
                return er_set(ER_SHAPE,
                              "cannot reshape tensor of 0 elements into shape %s because "
                              "the unspecified dimension size -1 can be any value and is "
                              "ambiguous", ts_fmt_shape(s, sizeof s, n, shape));
            out[infer] = numel / newsize;
        }
        return 0;
    }
    if (infer >= 0 && newsize == 0 && numel == 0)
        return er_set(ER_SHAPE,
                      "cannot reshape tensor of 0 elements into shape %s because "
                      "the unspecified dimension size -1 can be any value and is "
                      "ambiguous", ts_fmt_shape(s, sizeof s, n, shape));
    return er_set(ER_SHAPE, "shape '%s' is invalid for input of size %lld",
                  ts_fmt_shape(s, sizeof s, n, shape), (long long)numel);
}

/* A view re-chunks the old dims into groups that are contiguous with each
 * other ("chunks"); each chunk must be covered exactly by new dims. */
int ts_shape_view_strides(int ndim, const int64_t *sizes, const int64_t *strides,
                          int nnew, const int64_t *new_sizes, int64_t *out)
{
    if (ndim == 0) {
        for (int i = 0; i < nnew; i++)
            out[i] = 1;
        return 1;
    }
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++)
        numel *= sizes[i];
    if (numel == 0) {
        int same = ndim == nnew;
        for (int i = 0; same && i < ndim; i++)
            same = sizes[i] == new_sizes[i];
        if (same) {
            ts_copy_dims(out, strides, ndim);
            return 1;
        }
        for (int d = nnew - 1; d >= 0; d--) {
            if (d == nnew - 1)
                out[d] = 1;
            else
                out[d] = (new_sizes[d + 1] > 1 ? new_sizes[d + 1] : 1) * out[d + 1];
        }
        return 1;
    }
    int view_d = nnew - 1;
    int64_t chunk_base_stride = strides[ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int td = ndim - 1; td >= 0; td--) {
        tensor_numel *= sizes[td];
        int chunk_end = td == 0;
        if (!chunk_end) {
            int64_t want;
            chunk_end = sizes[td - 1] != 1 &&
                        (__builtin_mul_overflow(tensor_numel, chunk_base_stride, &want) ||
                         strides[td - 1] != want);
        }
        if (chunk_end) {
            while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
                out[view_d] = view_numel * chunk_base_stride;
                view_numel *= new_sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return 0;
            if (td > 0) {
                chunk_base_stride = strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

int ts_shape_broadcast(int na, const int64_t *a, int nb, const int64_t *b,
                       int *nout, int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i;
        int da = na - 1 - off, db = nb - 1 - off;
        int64_t sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return er_set(ER_SHAPE,
                          "The size of tensor a (%lld) must match the size of tensor b "
                          "(%lld) at non-singleton dimension %d",
                          (long long)sa, (long long)sb, i);
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return 0;
}

int ts_shape_expand(int ndim, const int64_t *sizes, const int64_t *strides,
                    int n, const int64_t *target, int64_t *out_sizes,
                    int64_t *out_strides)
{
    char s1[256], s2[256];
    if (n < ndim)
        return er_set(ER_SHAPE,
                      "expand(%s, size=%s): the number of sizes provided (%d) must be "
                      "greater or equal to the number of dimensions in the tensor (%d)",
                      ts_fmt_shape(s1, sizeof s1, ndim, sizes),
                      ts_fmt_shape(s2, sizeof s2, n, target), n, ndim);
    if (n > TS_MAX_DIM)
        return er_set(ER_SHAPE, "too many dimensions: %d (at most %d are supported)",
                      n, TS_MAX_DIM);
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i;
        int dim = ndim - 1 - off;
        int64_t size = dim >= 0 ? sizes[dim] : 1;
        int64_t stride;
        if (dim >= 0)
            stride = strides[dim];
        else if (i == n - 1)
            stride = 0;  /* a 0-dim tensor: PyTorch ends with stride 0 here */
        else
            stride = out_sizes[i + 1] * out_strides[i + 1];
        int64_t want = target[i];
        if (want == -1) {
            if (dim < 0)
                return er_set(ER_SHAPE,
                              "The expanded size of the tensor (-1) isn't allowed in a "
                              "leading, non-existing dimension %d", i);
            want = size;
        }
        if (want < 0)
            return er_set(ER_SHAPE, "The expanded size of the tensor (%lld) isn't allowed",
                          (long long)want);
        if (size != want) {
            if (size != 1)
                return er_set(ER_SHAPE,
                              "The expanded size of the tensor (%lld) must match the "
                              "existing size (%lld) at non-singleton dimension %d.  Target "
                              "sizes: %s.  Tensor sizes: %s", (long long)want,
                              (long long)size, i, ts_fmt_shape(s1, sizeof s1, n, target),
                              ts_fmt_shape(s2, sizeof s2, ndim, sizes));
            size = want;
            stride = 0;
        }
        out_sizes[i] = size;
        out_strides[i] = stride;
    }
    return 0;
}

int ts_shape_is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides)
{
    int64_t z = 1;
    for (int i = 0; i < ndim; i++)
        if (sizes[i] == 0)
            return 1;
    for (int d = ndim - 1; d >= 0; d--) {
        if (sizes[d] != 1) {
            if (strides[d] != z)
                return 0;
            z *= sizes[d];
        }
    }
    return 1;
}

int ts_shape_is_dense(int ndim, const int64_t *sizes, const int64_t *strides)
{
    if (ndim == 1)
        return sizes[0] < 2 || strides[0] == 1;
    int perm[TS_MAX_DIM];
    for (int i = 0; i < ndim; i++)
        perm[i] = i;
    /* insertion sort by stride; dims of size < 2 go last */
    for (int i = 1; i < ndim; i++) {
        int v = perm[i], j = i - 1;
        while (j >= 0) {
            int u = perm[j];
            int before = sizes[v] >= 2 && (sizes[u] < 2 || strides[v] < strides[u]);
            if (!before)
                break;
            perm[j + 1] = u;
            j--;
        }
        perm[j + 1] = v;
    }
    int64_t req = 1;
    for (int i = 0; i < ndim; i++) {
        int d = perm[i];
        if (sizes[d] < 2)
            return 1;
        if (strides[d] != req)
            return 0;
        req *= sizes[d];
    }
    return 1;
}

/* 1: dim0 should come after dim1; -1: before; 0: ambiguous. */
static int should_swap(int dim0, int dim1, const int64_t *sizes, int ninputs,
                       const int64_t *const *in)
{
    for (int k = 0; k < ninputs; k++) {
        int64_t s0 = in[k][dim0], s1 = in[k][dim1];
        if (s0 == 0 || s1 == 0)
            continue;
        if (s0 < s1)
            return -1;
        if (s0 > s1)
            return 1;
        if (sizes[dim0] > sizes[dim1])
            return 1;
    }
    return 0;
}

void ts_shape_like_strides(int ndim, const int64_t *sizes, int ninputs,
                           const int64_t *const *in_strides, int64_t *out)
{
    /* perm[0] is the fastest-moving dim */
    int perm[TS_MAX_DIM];
    for (int i = 0; i < ndim; i++)
        perm[i] = ndim - 1 - i;
    for (int i = 1; i < ndim; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int c = should_swap(perm[dim0], perm[dim1], sizes, ninputs, in_strides);
            if (c > 0) {
                int tmp = perm[dim0];
                perm[dim0] = perm[dim1];
                perm[dim1] = tmp;
                dim1 = dim0;
            } else if (c < 0) {
                break;
            }
        }
    }
    int inverted = 1;
    for (int j = 0; j < ndim; j++)
        if (perm[j] != ndim - 1 - j)
            inverted = 0;
    if (inverted) {
        ts_shape_contig_strides(ndim, sizes, out);
        return;
    }
    int64_t st = 1;
    for (int j = 0; j < ndim; j++) {
        out[perm[j]] = st;
        st *= sizes[perm[j]];
    }
}

/* c10's compute_channels_last_contiguous_2d: 4-d only, dims in the order
 * 1, 3, 2, 0 packed, size-1 dims skipped. */
int ts_shape_is_cl_contiguous(int ndim, const int64_t *sizes, const int64_t *strides)
{
    static const int order[4] = {1, 3, 2, 0};
    if (ndim != 4)
        return 0;
    int64_t expected = 1;
    for (int k = 0; k < 4; k++) {
        int d = order[k];
        if (sizes[d] != 1) {
            if (strides[d] != expected)
                return 0;
            expected *= sizes[d];
        }
    }
    return 1;
}
