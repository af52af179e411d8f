/* ts.h - storages and tensors (real, meta, sparse, quantized, and the fake
 * tensor *struct*; fake behaviour lives in src/fake).
 *
 * Every function returning an object returns a NEW strong reference the
 * caller owns (drop it with obj_decref(&t->hdr)), or NULL with the error
 * record set (ER_SHAPE "what did not fit", ER_TYPE, ER_OOM). Inputs are
 * borrowed. Nothing is leaked on any error path.
 *
 *   ts_tensor *a = ts_empty(2, (int64_t[]){8, 8}, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
 *   ts_args args = {0}; args.n = 4; args.v[0]=0; args.v[1]=2; args.v[2]=4; args.v[3]=1;
 *   ts_tensor *v = ts_apply(TS_OP_SLICE, a, &args);   // a[2:4], base a
 *   obj_decref(&v->hdr); obj_decref(&a->hdr);
 *
 * Ownership (fakegc-semantics(7)): a storage owns its data bytes (from the
 * allocator, kind AL_K_STORAGE; none on meta), freed when the storage dies;
 * its header is freed when its weak count also reaches 0. A tensor owns its
 * storage, its `base` (views), its `grad`, its sparse components, and (fake
 * tensors) its meta tensor and mode.
 */
#ifndef FAKEGC_TS_H
#define FAKEGC_TS_H

#include <stddef.h>
#include <stdint.h>

#include "core/obj.h"

#define TS_MAX_DIM 16

typedef enum ts_dtype {
    TS_F16, TS_BF16, TS_F32, TS_F64, TS_C64, TS_C128,
    TS_I8, TS_U8, TS_I32, TS_I64, TS_BOOL,
    TS_DTYPE_COUNT
} ts_dtype;

const char *ts_dtype_name(ts_dtype d);           /* "f32" */
int ts_dtype_from_name(const char *s, ts_dtype *out); /* 0 or -1 */
size_t ts_dtype_size(ts_dtype d);                /* bytes per element */
int ts_dtype_is_complex(ts_dtype d);
int ts_dtype_is_floating(ts_dtype d);
/* Promotion (fakegc-semantics(7)): bool < integers < floating < complex;
 * same category -> the wider; f16 with bf16 -> f32; an integer with u8 ->
 * the signed wider; a real with a complex -> the complex wide enough. */
ts_dtype ts_promote(ts_dtype a, ts_dtype b);

typedef enum ts_device_type { TS_DEV_CPU, TS_DEV_CUDA, TS_DEV_META, TS_DEV_LAZY } ts_device_type;
typedef struct ts_device { ts_device_type type; int index; /* -1: none */ } ts_device;
ts_device ts_cpu(void);
ts_device ts_meta(void);
/* "cpu", "cuda", "cuda:1", "meta", "lazy" -> 0, else -1 with ER_TYPE. */
int ts_device_parse(const char *s, ts_device *out);
void ts_device_format(ts_device d, char *buf, size_t n);   /* "cuda:1" */
int ts_device_eq(ts_device a, ts_device b);

typedef enum ts_layout { TS_STRIDED, TS_SPARSE_COO, TS_SPARSE_CSR } ts_layout;
const char *ts_layout_name(ts_layout l);         /* "strided", "sparse_coo" */

/* Memory formats (torch.contiguous_format, torch.channels_last). */
typedef enum ts_memfmt { TS_CONTIGUOUS_FORMAT, TS_CHANNELS_LAST, TS_MEMFMT_COUNT } ts_memfmt;
const char *ts_memfmt_name(ts_memfmt f);         /* "channels_last" */
int ts_memfmt_from_name(const char *s, ts_memfmt *out);   /* 0 or -1 */
/* Strides of a new tensor of these sizes in format f (c10's
 * get_channels_last_strides_2d: strides[1] = 1, [3] = sizes[1],
 * [2] = [3] * sizes[3], [0] = [2] * sizes[2]). channels_last needs 4 dims,
 * else ER_SHAPE "required rank 4 tensor to use channels_last format". */
int ts_memfmt_strides(ts_memfmt f, int ndim, const int64_t *sizes, int64_t *out);

typedef struct ts_storage {
    obj hdr;                 /* kind OBJ_STORAGE */
    uint64_t nbytes;
    ts_device device;
    void *data;              /* NULL on meta, and once released */
} ts_storage;

/* Which kind of tensor object (for census and reports). Meta tensors are
 * strided tensors on device meta; fake tensors are wrappers. */
typedef enum ts_flavour { TS_REAL, TS_FAKE } ts_flavour;

/* Dims up to TS_INLINE_DIM live in the tensor (dims[]), in an inline array
 * sized to the rank the tensor is made with (max(ndim, 1) sizes, then as
 * many strides): a 1-dim tensor is 232 bytes with the 64-byte header (a
 * 240-byte malloc chunk), a 4x4 one 248 (256), a 4-dim one 280 (288). A
 * tensor given more dims than its inline array holds (by its constructor,
 * or by set_ and the in-place ops) gets an array of TS_MAX_DIM of its
 * own, freed with the object. sizes and
 * strides point at whichever, so t->sizes[i] reads the same either way;
 * ts_set_ndim is the one way to change ndim. */
#define TS_INLINE_DIM 4

typedef struct ts_tensor {
    obj hdr;                 /* kind OBJ_TENSOR */
    ts_flavour flavour;
    ts_layout layout;
    ts_dtype dtype;
    ts_device device;        /* fake tensors: the device they pretend to be on */
    int ndim;
    int dim_cap;             /* entries sizes and strides have room for */
    int sparse_dim;          /* sparse COO (here to fill the hole before sizes) */
    int64_t *sizes;          /* dim_cap entries, the first ndim meaningful */
    int64_t *strides;        /* strided only */
    int64_t storage_offset;
    ts_storage *storage;     /* strong; NULL for sparse and fake tensors */
    struct ts_tensor *base;  /* strong; the view's base (never itself a view) */
    struct ts_tensor *grad;  /* strong; NULL if none */
    unsigned requires_grad : 1, is_leaf : 1, neg : 1, conj : 1,
             quantized : 1, coalesced : 1,
             inline_cap : 3,   /* entries dims[] has room for (1..4) */
             version : 20;     /* the version counter (in-place ops), kept by
                                  the root of a view family, modulo 2^20 */
    /* sparse COO: indices i64 [sparse_dim, nnz], values [nnz, dense...];
     * sparse CSR: crow [rows+1], col [nnz], values [nnz] */
    int dense_dim;
    int64_t nnz;
    struct ts_tensor *indices, *values, *crow, *col;   /* strong */
    /* fake tensors */
    struct ts_tensor *meta;  /* strong: the meta tensor it wraps */
    obj *mode;               /* strong: its fake mode */
    struct ts_tensor *view_src; /* strong, or NULL: a fake view made by a view
                                op on a fake that is itself a view keeps that
                                fake (PyTorch 2.x's autograd view chain;
                                fk_design.views_keep_source) */
    uint64_t source_id;      /* id of the tensor it was converted from, 0 if
                                none; a memo hit for key K must return a fake
                                whose source_id is K's id */
    int64_t dims[];          /* inline_cap sizes, then inline_cap strides */
} ts_tensor;

/* Make t n-dimensional (0 <= n <= TS_MAX_DIM), keeping its first
 * min(ndim, n) sizes and strides: 0, or -1 with ER_OOM when the array for
 * more dims than its inline array holds cannot be had (t unchanged). */
int ts_set_ndim(ts_tensor *t, int n);

static inline ts_tensor *ts_of(obj *o) { return (ts_tensor *)o; }
int ts_is_tensor(const obj *o);                  /* kind OBJ_TENSOR */
int ts_is_storage(const obj *o);
int ts_is_meta(const ts_tensor *t);              /* real tensor on meta */
int ts_is_fake(const ts_tensor *t);
int ts_is_view(const ts_tensor *t);              /* base != NULL */

/* ---- constructors ---- */
typedef enum ts_init { TS_INIT_NONE, TS_INIT_ZEROS, TS_INIT_ONES, TS_INIT_RAND } ts_init;
/* Raw bytes: NONE leaves them unwritten, ONES writes 0x01 bytes, RAND
 * random bytes (deterministic PRNG). ER_LIMIT past ts_set_max_bytes. */
ts_storage *ts_storage_new(uint64_t nbytes, ts_device dev, ts_init init);
/* Typed init: ones are 1 of the dtype, rand uniform [0, 1) for floating
 * and complex dtypes (small integers otherwise). TS_INIT_NONE (empty)
 * still zero-fills real bytes, so that ops reading them are deterministic
 * and Valgrind-clean. "cuda" becomes "cuda:0"; cuda and lazy tensors are
 * modelled with real bytes like cpu ones. requires_grad on a non-floating,
 * non-complex dtype -> ER_TYPE. */
ts_tensor *ts_empty(int ndim, const int64_t *sizes, ts_dtype dt, ts_device dev,
                    ts_init init, int requires_grad);
ts_tensor *ts_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                            ts_dtype dt, ts_device dev, int requires_grad);
/* Sparse COO: entry k sits at row-major position k mod P of the sparse
 * dims (P their product; indices really written, values are ones), so
 * coalesce() keeps min(nnz, P) entries. On meta nnz is 0 and `coalesced`
 * is kept as given (the meta converter sets it). The flag is taken as
 * given for real tensors too (PyTorch would mark nnz < 2 coalesced).
 * stride(d) answers 1 for d == 0 and 0 after (what PyTorch 1.13 does). */
ts_tensor *ts_sparse_coo(int ndim, const int64_t *sizes, int64_t nnz, int sparse_dim,
                         ts_dtype dt, ts_device dev, int coalesced);
/* CSR: entry k at (k / cols, k % cols); nnz <= rows*cols; meta or lazy ->
 * ER_TYPE (PyTorch has no meta CSR). Not is_sparse(), no strides. */
ts_tensor *ts_sparse_csr(int64_t rows, int64_t cols, int64_t nnz, ts_dtype dt,
                         ts_device dev);
/* The meta CSR tensor PyTorch 2.3+'s MetaConverter builds for a CSR one
 * (_sparse_compressed_tensor_with_dims(0, ...) on meta): nnz 0, its parts
 * on meta. Only the converter makes one; the language cannot. */
ts_tensor *ts_sparse_csr_meta(int64_t rows, int64_t cols, ts_dtype dt);
ts_tensor *ts_quantized(int ndim, const int64_t *sizes);
/* A tensor with these exact strided metadata over an existing storage
 * (as_strided/set_; used by the meta converter). Not a view (base NULL). */
ts_tensor *ts_from_storage(ts_storage *s, int ndim, const int64_t *sizes,
                           const int64_t *strides, int64_t offset, ts_dtype dt);
/* Fake tensor wrapping `meta` (a meta tensor), of `mode`, pretending to be
 * on `device`. Metadata are copied from meta. */
ts_tensor *ts_fake_new(ts_tensor *meta, obj *mode, ts_device device, uint64_t source_id);

/* ---- operations (views, new tensors, in-place, sparse) ---- */
typedef enum ts_op {
    TS_OP_VIEW, TS_OP_RESHAPE, TS_OP_T, TS_OP_TRANSPOSE, TS_OP_SLICE,
    TS_OP_SELECT, TS_OP_NARROW, TS_OP_UNSQUEEZE, TS_OP_SQUEEZE, TS_OP_EXPAND,
    TS_OP_AS_STRIDED, TS_OP_DIAGONAL, TS_OP_DETACH, TS_OP_VIEW_AS_REAL,
    TS_OP_VIEW_AS_COMPLEX, TS_OP_NEG_VIEW, TS_OP_CONJ,
    TS_OP_CLONE, TS_OP_CONTIGUOUS, TS_OP_TO, TS_OP_ADD, TS_OP_MUL,
    TS_OP_MATMUL, TS_OP_SUM,
    TS_OP_ADD_, TS_OP_MUL_, TS_OP_ZERO_,
    TS_OP_COALESCE, TS_OP_TO_DENSE, TS_OP_TO_SPARSE, TS_OP_INDICES, TS_OP_VALUES,
    /* version 2 of the language */
    TS_OP_NEG, TS_OP_SUB, TS_OP_REAL, TS_OP_IMAG, TS_OP_REQUIRES_GRAD_, TS_OP_SET_,
    TS_OP_COUNT
} ts_op;

/* Arguments of an op, filled by the interpreter or the stress generator.
 * Positional integers go in v[0..n) in the spec's order:
 *   view/reshape/expand: sizes; transpose: d0 d1; slice: dim start stop
 *   [step]; select: dim i; narrow: dim start len; unsqueeze/squeeze: d;
 *   as_strided: sizes in v, strides in v2, offset; diagonal: [offset [d0 d1]].
 * squeeze with n == 0 squeezes every size-1 dim. */
typedef struct ts_args {
    int n;  int64_t v[TS_MAX_DIM];
    int n2; int64_t v2[TS_MAX_DIM];
    int64_t offset;               /* as_strided: absolute storage offset */
    const ts_tensor *other;       /* add/mul/matmul/add_/mul_ operand */
    int has_scalar; double scalar;/* add/mul by a number instead; for type
                                     promotion an integral value is an int
                                     scalar (i64), any other a float one */
    int has_dim; int64_t dim;     /* sum(dim=) */
    int has_dtype; ts_dtype dtype;
    int has_device; ts_device device;
    int has_sparse_dim; int64_t sparse_dim;
    int scalar_bool;              /* the scalar is a bool (add(true)) */
    int has_mfmt; ts_memfmt mfmt; /* contiguous(memory_format=) */
    /* set_: the source is `other` (a tensor), or `storage` (borrowed) with,
     * when set_geom, offset, sizes in v[0..n) and strides in v2[0..n2) */
    ts_storage *storage; int set_geom;
    /* add_ mul_ zero_ set_: autograd's in-place check was made already, on
     * the tensors the user holds (src/fake: the fakes, whose grad flags are
     * their own, not their meta tensors'); skip it on self */
    int grad_checked;
} ts_args;

const char *ts_op_name(ts_op op);              /* "slice" */
int ts_op_from_name(const char *name, ts_op *out);   /* 0 or -1 */
/* view with has_dtype is view(dtype): reinterprets the bytes over the same
 * storage and is NOT a view (PyTorch 1.13.1): base NULL, never requires
 * grad; another element size scales the last dimension (stride 1, size and
 * offset divisible, else ER_SHAPE; neg/conj bits -> ER_TYPE).
 * neg(): a new tensor (bool -> ER_TYPE); sub(o): like add (bool operands ->
 * ER_TYPE); real()/imag(): views of a complex tensor's parts (real() of a
 * real tensor is self, imag() -> ER_TYPE); requires_grad_(v[0] if n else 1):
 * in place (ER_TYPE on a non-leaf set to false, or an integer dtype set to
 * true); set_: in place, self takes the source's storage and geometry (not
 * a view: base unchanged), a geometry past the storage's end grows it.
 *
 * Shares storage with self: the view ops (view .. conj, including detach,
 * which is not a view, and reshape, which copies when it must), indices()
 * (an alias, not a view, as in PyTorch 1.13) and values() (a view whose
 * base is the sparse tensor). */
int ts_op_is_view(ts_op op);
int ts_op_is_inplace(ts_op op);                /* returns self */
/* Autograd's check_inplace for writing self in place (other: the operand
 * or set_ source, may be NULL): 0, or ER_TYPE when self is a leaf that
 * requires grad, or a view of one, and the result would require grad. */
int ts_inplace_grad_check(const ts_tensor *self, const ts_tensor *other);
/* Minimum and maximum number of positional integers (max -1: up to
 * TS_MAX_DIM), for arity checks before running. */
void ts_op_arity(ts_op op, int *min_n, int *max_n);

/* Run op on a real or meta tensor (not a fake one: src/fake wraps those).
 * Returns a new reference. In-place ops return self with a new reference.
 * Sparse COO supports clone detach contiguous conj(real) to coalesce
 * to_dense indices values zero_; CSR clone detach contiguous values
 * to_dense to(same); quantized tensors the view ops (not view_as_real/
 * complex), clone and contiguous; anything else -> ER_TYPE. indices() and
 * values() of an uncoalesced COO tensor -> ER_TYPE (PyTorch raises).
 * to_dense/to_sparse on meta give meta results (PyTorch 1.13 has no meta
 * kernel for them). Binary ops: one device, except a 0-dim cpu operand. */
ts_tensor *ts_apply(ts_op op, ts_tensor *self, const ts_args *a);

/* ---- queries returning no tensor ---- */
typedef enum ts_query {
    TS_Q_NUMEL, TS_Q_DIM, TS_Q_STORAGE_OFFSET, TS_Q_NBYTES, TS_Q_IS_VIEW,
    TS_Q_IS_SPARSE, TS_Q_IS_COALESCED, TS_Q_REQUIRES_GRAD, TS_Q_SIZE,
    TS_Q_STRIDE,
    /* version 2: booleans; is_contiguous's arg is a ts_memfmt */
    TS_Q_IS_LEAF, TS_Q_IS_FAKE, TS_Q_IS_META, TS_Q_IS_NEG, TS_Q_IS_CONJ,
    TS_Q_IS_INFERENCE, TS_Q_IS_CONTIGUOUS, TS_Q_COUNT
} ts_query;
const char *ts_query_name(ts_query q);
int ts_query_from_name(const char *name, ts_query *out);
int ts_query_takes_arg(ts_query q);            /* size(d), stride(d) */
int ts_query_is_bool(ts_query q);              /* is_view ... is_contiguous */
/* 0 and *out, or -1 (ER_SHAPE for a bad dim, ER_TYPE e.g. stride of a CSR
 * tensor or is_coalesced of a non-COO one). is_view of a fake tensor is
 * its meta tensor's. nbytes is numel * itemsize for every layout. */
int ts_query_run(const ts_tensor *t, ts_query q, int64_t arg, int64_t *out);

int64_t ts_numel(const ts_tensor *t);
/* Grow a storage to at least nbytes (set_ past its end; real bytes are
 * reallocated, new bytes zeroed; ER_LIMIT/ER_OOM). Never shrinks. */
int ts_storage_grow(ts_storage *s, uint64_t nbytes);
/* Bytes of storage t's strided geometry reaches (computeStorageNbytes:
 * (offset + 1 + sum (size-1)*stride) * itemsize, 0 with a zero size or on
 * overflow). */
uint64_t ts_storage_extent(const ts_tensor *t);
/* Set t.grad = g (g may be NULL). ER_TYPE/ER_SHAPE when g does not match. */
int ts_set_grad(ts_tensor *t, ts_tensor *g);

/* Live real data bytes (sum of live non-meta storages' nbytes). */
uint64_t ts_data_bytes(void);
/* Guard for --max-bytes: constructors fail with ER_LIMIT when a new storage
 * would push ts_data_bytes() past it. 0: no limit. */
void ts_set_max_bytes(uint64_t max);

/* Type descriptors (for census by kind in reports). */
extern const obj_type ts_storage_type, ts_tensor_type;

/* Injectable bugs handled in this module (fakegc-semantics(7)):
 *   view_base_leak: a view takes one reference too many on its base;
 *   early_free: a tensor releases its storage reference twice. */
typedef struct ts_bugs { int view_base_leak, early_free; } ts_bugs;
void ts_set_bugs(const ts_bugs *b);

/* PyTorch's rule for a view's base (THPVariable_subclass_traverse,
 * torch/csrc/autograd/python_variable.cpp): a view holds its base's
 * TensorImpl from C++, and a tensor whose TensorImpl C++ shares is not
 * traversed, its references treated as roots; Python's gc never sees the
 * view -> base reference. on: the collector does not see a view's base
 * edge (obj_type.gc_traverse leaves it out, gc_hidden gives it), so a base
 * and all it reaches live while a view of it does, cycles through the view
 * included. Reports still see the edge. The fake layer sets it from the
 * memo design's row; off by default. */
void ts_set_base_hidden(int on);
int ts_base_hidden(void);

#endif
