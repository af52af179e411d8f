/* ts_internal.h - what the files of src/tensor share; not a public header
 * (tests include it to check the pure shape logic directly).
 *
 * Shape helpers follow PyTorch 1.13's ATen rules (infer_size,
 * computeStride, inferExpandGeometry, maybe_wrap_dim, computeStorageNbytes,
 * is_contiguous, is_non_overlapping_and_dense, TensorIterator's output
 * permutation); each returns 0, or -1 with ER_SHAPE and a message naming
 * the sizes that did not fit.
 */
#ifndef FAKEGC_TS_INTERNAL_H
#define FAKEGC_TS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tensor/ts.h"

/* Copy n dims; src may be NULL when n is 0 (memcpy may not get NULL). */
/* Room for n dims without changing ndim (before side effects that must
 * not be undone): 0, or -1 with ER_OOM. */
int ts_reserve_dims(ts_tensor *t, int n);

static inline void ts_copy_dims(int64_t *dst, const int64_t *src, int n)
{
    if (n > 0)
        memcpy(dst, src, (size_t)n * sizeof *dst);
}

/* ---- formatting ---- */
/* "[3, 5]" into buf (always NUL-terminated). Returns buf. */
char *ts_fmt_shape(char *buf, size_t n, int ndim, const int64_t *v);

/* ---- shape logic (ts_shape.c) ---- */
/* ndim in [0, TS_MAX_DIM] and every size >= 0. */
int ts_shape_check(int ndim, const int64_t *sizes);
/* Product of sizes; -1 with ER_SHAPE on overflow. */
int ts_shape_numel(int ndim, const int64_t *sizes, int64_t *out);
void ts_shape_contig_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* Bytes a storage needs for this geometry (computeStorageNbytes): 0 when a
 * size is 0, else (offset + 1 + sum (size-1)*stride) * itemsize. Negative
 * strides or offset, or overflow -> ER_SHAPE. */
int ts_shape_storage_bytes(int ndim, const int64_t *sizes, const int64_t *strides,
                           int64_t offset, size_t itemsize, uint64_t *out);
/* maybe_wrap_dim: d in [-ndim, ndim) -> [0, ndim). With ndim 0 and
 * wrap_scalar, the range is [-1, 0]; without, any d is an error. */
int ts_wrap_dim(int64_t d, int ndim, int wrap_scalar, int *out);
/* infer_size for view/reshape: at most one -1, numel must match. */
int ts_shape_infer(int n, const int64_t *shape, int64_t numel, int64_t *out);
/* computeStride: strides for viewing (sizes, strides) as new_sizes without
 * a copy; returns 1 and fills out, or 0 when no view is possible. */
int ts_shape_view_strides(int ndim, const int64_t *sizes, const int64_t *strides,
                          int nnew, const int64_t *new_sizes, int64_t *out);
/* Broadcast two shapes (infer_size). out has max(na, nb) dims. */
int ts_shape_broadcast(int na, const int64_t *a, int nb, const int64_t *b,
                       int *nout, int64_t *out);
/* inferExpandGeometry. */
int ts_shape_expand(int ndim, const int64_t *sizes, const int64_t *strides,
                    int n, const int64_t *target, int64_t *out_sizes,
                    int64_t *out_strides);
int ts_shape_is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides);
int ts_shape_is_dense(int ndim, const int64_t *sizes, const int64_t *strides);
/* is_contiguous(memory_format=channels_last): 4-d, dims 1, 3, 2, 0 packed. */
int ts_shape_is_cl_contiguous(int ndim, const int64_t *sizes, const int64_t *strides);
/* Strides of a new output that follows the layout of its inputs
 * (TensorIterator::reorder_dimensions + compatible strides). Each input's
 * strides are given already broadcast to ndim (0 for broadcast dims). */
void ts_shape_like_strides(int ndim, const int64_t *sizes, int ninputs,
                           const int64_t *const *in_strides, int64_t *out);

/* ---- dtype helpers (ts_dtype.c) ---- */
/* Result type of a binary op (PyTorch's result_type): operands are
 * "dimensioned" tensors (ndim > 0), zero-dim tensors, and wrapped scalars
 * (a scalar counts as i64 when integral, else as f32, the default dtype). */
typedef enum ts_operand_kind { TS_OPK_DIM, TS_OPK_ZERO, TS_OPK_WRAPPED } ts_operand_kind;
ts_dtype ts_result_type(int n, const ts_dtype *dt, const ts_operand_kind *kind);
int ts_can_cast(ts_dtype from, ts_dtype to);
int ts_dtype_is_integral(ts_dtype d);      /* bool excluded */
ts_dtype ts_dtype_to_real(ts_dtype d);     /* c64 -> f32, c128 -> f64 */
/* "cuda" (index -1) becomes "cuda:0", as a tensor's device always has one. */
ts_device ts_device_norm(ts_device d);

/* ---- element access (ts_ops.c) ---- */
/* Element value as (re, im), honouring the neg/conj bits given. */
void ts_load(ts_dtype dt, const unsigned char *p, int neg, int conj, double v[2]);
void ts_store(ts_dtype dt, unsigned char *p, const double v[2]);
/* Address of t's first element (NULL when t has no data: meta, released). */
unsigned char *ts_data_ptr(const ts_tensor *t);
uint64_t ts_rand_u64(void);
/* Fill a contiguous range of n elements of dt with init. */
void ts_fill_init(unsigned char *p, int64_t n, ts_dtype dt, ts_init init);
/* Copy src's elements into dst (same sizes), converting dtypes and
 * resolving neg/conj bits. Nothing happens when either has no data. */
void ts_copy_elems(ts_tensor *dst, const ts_tensor *src);
/* dst[i] = src[i] (or += with accumulate) over `sizes`, strides in
 * elements, no neg/conj bits. */
void ts_move_elems(int ndim, const int64_t *sizes, unsigned char *dst, const int64_t *dst_st,
                   ts_dtype ddt, const unsigned char *src, const int64_t *src_st,
                   ts_dtype sdt, int accumulate);

/* ---- tensor internals (ts_tensor.c) ---- */
extern ts_bugs ts_bug_flags;
/* A zeroed tensor object: strided, real, leaf, cpu. NULL with ER_OOM. */
/* A zeroed real strided f32 cpu leaf with ndim dims (sizes and strides to
 * be written by the caller), or NULL (ER_OOM). */
ts_tensor *ts_alloc_tensor(int ndim);
/* A new real/meta strided tensor with its own storage. strides NULL ->
 * contiguous. Checks sizes, overflow, the byte limit. */
ts_tensor *ts_new_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                          ts_dtype dt, ts_device dev, ts_init init);
/* A view of self (shares its storage, base = self's base or self). Copies
 * dtype, device, flags and grad requirements. */
ts_tensor *ts_make_view(ts_tensor *self, int ndim, const int64_t *sizes,
                        const int64_t *strides, int64_t offset);
/* Outputs of ops on tensors requiring grad require grad and are not leaves. */
void ts_set_result_grad(ts_tensor *out, int requires_grad);
/* Device and storage pointers set, dtype checks, etc. */
int ts_dtype_can_require_grad(ts_dtype d);

/* ---- per-file entry points behind ts_apply ---- */
ts_tensor *ts_requires_grad_(ts_tensor *self, int b);
ts_tensor *ts_view_apply(ts_op op, ts_tensor *self, const ts_args *a);
ts_tensor *ts_ops_apply(ts_op op, ts_tensor *self, const ts_args *a);
ts_tensor *ts_sparse_apply(ts_op op, ts_tensor *self, const ts_args *a);
/* Strided tensor -> sparse COO (to_sparse); in ts_sparse.c. */
ts_tensor *ts_to_sparse(ts_tensor *self, const ts_args *a);
/* Clone with preserved (dense) or contiguous strides onto dev/dtype. */
ts_tensor *ts_clone_to(ts_tensor *self, ts_device dev, ts_dtype dt, int contiguous);
/* to()'s target for self: *dev and *dt (self's own where a leaves one
 * out) and 0; -1 with ER_TYPE for an unknown dtype; 1 when self is there
 * already (to() returns self: a new reference is taken). */
int ts_to_target(ts_tensor *self, const ts_args *a, ts_device *dev, ts_dtype *dt);

#endif
