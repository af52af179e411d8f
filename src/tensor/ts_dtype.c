/* ts_dtype.c - dtypes, promotion, devices, and the name tables of ops and
 * queries. */
#include "tensor/ts_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/er.h"

static const char *const dtype_names[TS_DTYPE_COUNT] = {
    [TS_F16] = "f16", [TS_BF16] = "bf16", [TS_F32] = "f32", [TS_F64] = "f64",
    [TS_C64] = "c64", [TS_C128] = "c128", [TS_I8] = "i8",   [TS_U8] = "u8",
    [TS_I32] = "i32", [TS_I64] = "i64",   [TS_BOOL] = "bool",
};

static const size_t dtype_sizes[TS_DTYPE_COUNT] = {
    [TS_F16] = 2, [TS_BF16] = 2, [TS_F32] = 4, [TS_F64] = 8,  [TS_C64] = 8,
    [TS_C128] = 16, [TS_I8] = 1, [TS_U8] = 1,  [TS_I32] = 4, [TS_I64] = 8,
    [TS_BOOL] = 1,
};

const char *ts_dtype_name(ts_dtype d)
{
    return (unsigned)d < TS_DTYPE_COUNT ? dtype_names[d] : "?";
}

int ts_dtype_from_name(const char *s, ts_dtype *out)
{
    for (int i = 0; i < TS_DTYPE_COUNT; i++) {
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (ts_dtype)i;
            return 0;
        }
    }
    return -1;
}

size_t ts_dtype_size(ts_dtype d)
{
    return (unsigned)d < TS_DTYPE_COUNT ? dtype_sizes[d] : 0;
}

int ts_dtype_is_complex(ts_dtype d) { return d == TS_C64 || d == TS_C128; }

int ts_dtype_is_floating(ts_dtype d)
{
    return d == TS_F16 || d == TS_BF16 || d == TS_F32 || d == TS_F64;
}

int ts_dtype_is_integral(ts_dtype d)
{
    return d == TS_I8 || d == TS_U8 || d == TS_I32 || d == TS_I64;
}

ts_dtype ts_dtype_to_real(ts_dtype d)
{
    return d == TS_C64 ? TS_F32 : d == TS_C128 ? TS_F64 : d;
}

static int category(ts_dtype d)
{
    if (d == TS_BOOL)
        return 0;
    if (ts_dtype_is_integral(d))
        return 1;
    if (ts_dtype_is_floating(d))
        return 2;
    return 3;
}

/* Width rank inside a category. */
static int rank(ts_dtype d)
{
    switch (d) {
    case TS_I8: case TS_U8: return 1;
    case TS_I32: return 3;
    case TS_I64: return 4;
    case TS_F16: case TS_BF16: return 2;
    case TS_F32: return 4;
    case TS_F64: return 8;
    case TS_C64: return 4;
    case TS_C128: return 8;
    default: return 0;
    }
}

/* The narrowest complex type that holds the real type r. */
static ts_dtype complex_for(ts_dtype r)
{
    return r == TS_F64 ? TS_C128 : TS_C64;
}

ts_dtype ts_promote(ts_dtype a, ts_dtype b)
{
    if (a == b)
        return a;
    int ca = category(a), cb = category(b);
    if (ca != cb) {
        ts_dtype hi = ca > cb ? a : b, lo = ca > cb ? b : a;
        /* complex with a float: wide enough for the float's width */
        if (category(hi) == 3 && category(lo) == 2)
            return rank(lo) > rank(hi) ? complex_for(lo) : hi;
        return hi;
    }
    if (ca == 1) {
        /* u8 with i8: PyTorch gives i16, which is not modelled; i32 is the
         * narrowest modelled signed type that holds both. */
        if ((a == TS_U8 && b == TS_I8) || (a == TS_I8 && b == TS_U8))
            return TS_I32;
    }
    if (ca == 2 && rank(a) == rank(b))
        return TS_F32;  /* f16 with bf16 */
    return rank(a) >= rank(b) ? a : b;
}

static ts_dtype promote_undef(int *have, ts_dtype cur, ts_dtype d)
{
    if (!*have) {
        *have = 1;
        return d;
    }
    return ts_promote(cur, d);
}

/* combine_categories(higher, lower) from c10; hv/lv: defined? */
static int combine(int hv, ts_dtype higher, int lv, ts_dtype lower, ts_dtype *out)
{
    if (hv && ts_dtype_is_complex(higher)) {
        *out = higher;
        return 1;
    }
    if (lv && ts_dtype_is_complex(lower)) {
        /* keep the value type of a floating `higher` (no c32 here: f16 and
         * bf16 become c64) */
        *out = hv && ts_dtype_is_floating(higher) ? complex_for(higher) : lower;
        return 1;
    }
    if (hv && ts_dtype_is_floating(higher)) {
        *out = higher;
        return 1;
    }
    if (hv && (higher == TS_BOOL || (lv && ts_dtype_is_floating(lower)))) {
        *out = lv ? ts_promote(higher, lower) : higher;
        return 1;
    }
    if (hv) {
        *out = higher;
        return 1;
    }
    if (lv) {
        *out = lower;
        return 1;
    }
    return 0;
}

ts_dtype ts_result_type(int n, const ts_dtype *dt, const ts_operand_kind *kind)
{
    int hd = 0, hz = 0, hw = 0;
    ts_dtype dim = TS_F32, zero = TS_F32, wrapped = TS_F32;
    for (int i = 0; i < n; i++) {
        if (kind[i] == TS_OPK_DIM)
            dim = promote_undef(&hd, dim, dt[i]);
        else if (kind[i] == TS_OPK_ZERO)
            zero = promote_undef(&hz, zero, dt[i]);
        else
            wrapped = promote_undef(&hw, wrapped, dt[i]);
    }
    ts_dtype low = TS_F32, res = TS_F32;
    int hl = combine(hz, zero, hw, wrapped, &low);
    if (!combine(hd, dim, hl, low, &res))
        return TS_F32;
    return res;
}

int ts_can_cast(ts_dtype from, ts_dtype to)
{
    if (ts_dtype_is_complex(from) && !ts_dtype_is_complex(to))
        return 0;
    if (ts_dtype_is_floating(from) && ts_dtype_is_integral(to))
        return 0;
    if (from != TS_BOOL && to == TS_BOOL)
        return 0;
    return 1;
}

/* ---- devices ---- */

ts_device ts_cpu(void) { return (ts_device){TS_DEV_CPU, -1}; }
ts_device ts_meta(void) { return (ts_device){TS_DEV_META, -1}; }

int ts_device_parse(const char *s, ts_device *out)
{
    if (strcmp(s, "cpu") == 0) {
        *out = ts_cpu();
        return 0;
    }
    if (strcmp(s, "meta") == 0) {
        *out = ts_meta();
        return 0;
    }
    if (strcmp(s, "lazy") == 0) {
        *out = (ts_device){TS_DEV_LAZY, -1};
        return 0;
    }
    if (strcmp(s, "cuda") == 0) {
        *out = (ts_device){TS_DEV_CUDA, -1};
        return 0;
    }
    if (strncmp(s, "cuda:", 5) == 0 && s[5] >= '0' && s[5] <= '9') {
        long v = 0;
        const char *p = s + 5;
        for (; *p >= '0' && *p <= '9' && v < 100000; p++)
            v = v * 10 + (*p - '0');
        if (*p == '\0' && v < 65536 && !(s[5] == '0' && s[6] != '\0')) {
            *out = (ts_device){TS_DEV_CUDA, (int)v};
            return 0;
        }
    }
    return er_set(ER_TYPE, "invalid device string: '%s' (expected cpu, cuda, cuda:N, meta "
                  "or lazy)", s);
}

void ts_device_format(ts_device d, char *buf, size_t n)
{
    const char *name = d.type == TS_DEV_CPU ? "cpu" : d.type == TS_DEV_CUDA ? "cuda"
                     : d.type == TS_DEV_META ? "meta" : "lazy";
    if (d.index >= 0)
        snprintf(buf, n, "%s:%d", name, d.index);
    else
        snprintf(buf, n, "%s", name);
}

int ts_device_eq(ts_device a, ts_device b)
{
    return a.type == b.type && a.index == b.index;
}

ts_device ts_device_norm(ts_device d)
{
    if (d.type == TS_DEV_CUDA && d.index < 0)
        d.index = 0;
    if (d.type != TS_DEV_CUDA)
        d.index = -1;
    return d;
}

/* ---- ops and queries ---- */

static const char *const op_names[TS_OP_COUNT] = {
    [TS_OP_VIEW] = "view", [TS_OP_RESHAPE] = "reshape", [TS_OP_T] = "t",
    [TS_OP_TRANSPOSE] = "transpose", [TS_OP_SLICE] = "slice", [TS_OP_SELECT] = "select",
    [TS_OP_NARROW] = "narrow", [TS_OP_UNSQUEEZE] = "unsqueeze", [TS_OP_SQUEEZE] = "squeeze",
    [TS_OP_EXPAND] = "expand", [TS_OP_AS_STRIDED] = "as_strided",
    [TS_OP_DIAGONAL] = "diagonal", [TS_OP_DETACH] = "detach",
    [TS_OP_VIEW_AS_REAL] = "view_as_real", [TS_OP_VIEW_AS_COMPLEX] = "view_as_complex",
    [TS_OP_NEG_VIEW] = "neg_view", [TS_OP_CONJ] = "conj", [TS_OP_CLONE] = "clone",
    [TS_OP_CONTIGUOUS] = "contiguous", [TS_OP_TO] = "to", [TS_OP_ADD] = "add",
    [TS_OP_MUL] = "mul", [TS_OP_MATMUL] = "matmul", [TS_OP_SUM] = "sum",
    [TS_OP_ADD_] = "add_", [TS_OP_MUL_] = "mul_", [TS_OP_ZERO_] = "zero_",
    [TS_OP_COALESCE] = "coalesce", [TS_OP_TO_DENSE] = "to_dense",
    [TS_OP_TO_SPARSE] = "to_sparse", [TS_OP_INDICES] = "indices", [TS_OP_VALUES] = "values",
    [TS_OP_NEG] = "neg", [TS_OP_SUB] = "sub", [TS_OP_REAL] = "real", [TS_OP_IMAG] = "imag",
    [TS_OP_REQUIRES_GRAD_] = "requires_grad_", [TS_OP_SET_] = "set_",
};

const char *ts_op_name(ts_op op)
{
    return (unsigned)op < TS_OP_COUNT ? op_names[op] : "?";
}

int ts_op_from_name(const char *name, ts_op *out)
{
    for (int i = 0; i < TS_OP_COUNT; i++) {
        if (strcmp(name, op_names[i]) == 0) {
            *out = (ts_op)i;
            return 0;
        }
    }
    return -1;
}

int ts_op_is_view(ts_op op)
{
    return (op >= TS_OP_VIEW && op <= TS_OP_CONJ) || op == TS_OP_INDICES ||
           op == TS_OP_VALUES || op == TS_OP_REAL || op == TS_OP_IMAG;
}

int ts_op_is_inplace(ts_op op)
{
    return op == TS_OP_ADD_ || op == TS_OP_MUL_ || op == TS_OP_ZERO_ ||
           op == TS_OP_REQUIRES_GRAD_ || op == TS_OP_SET_;
}

void ts_op_arity(ts_op op, int *min_n, int *max_n)
{
    int lo = 0, hi = 0;
    switch (op) {
    case TS_OP_VIEW: case TS_OP_RESHAPE: case TS_OP_EXPAND: case TS_OP_AS_STRIDED:
        lo = 0; hi = -1; break;
    case TS_OP_TRANSPOSE: case TS_OP_SELECT: lo = hi = 2; break;
    case TS_OP_SLICE: lo = 3; hi = 4; break;
    case TS_OP_NARROW: lo = hi = 3; break;
    case TS_OP_UNSQUEEZE: lo = hi = 1; break;
    case TS_OP_SQUEEZE: case TS_OP_SUM: case TS_OP_TO_SPARSE: case TS_OP_REQUIRES_GRAD_:
        lo = 0; hi = 1; break;
    case TS_OP_SET_: lo = 0; hi = -1; break;
    case TS_OP_DIAGONAL: lo = 0; hi = 3; break;
    default: lo = hi = 0; break;
    }
    *min_n = lo;
    *max_n = hi;
}

static const char *const query_names[TS_Q_COUNT] = {
    [TS_Q_NUMEL] = "numel", [TS_Q_DIM] = "dim", [TS_Q_STORAGE_OFFSET] = "storage_offset",
    [TS_Q_NBYTES] = "nbytes", [TS_Q_IS_VIEW] = "is_view", [TS_Q_IS_SPARSE] = "is_sparse",
    [TS_Q_IS_COALESCED] = "is_coalesced", [TS_Q_REQUIRES_GRAD] = "requires_grad",
    [TS_Q_SIZE] = "size", [TS_Q_STRIDE] = "stride", [TS_Q_IS_LEAF] = "is_leaf",
    [TS_Q_IS_FAKE] = "is_fake", [TS_Q_IS_META] = "is_meta", [TS_Q_IS_NEG] = "is_neg",
    [TS_Q_IS_CONJ] = "is_conj", [TS_Q_IS_INFERENCE] = "is_inference",
    [TS_Q_IS_CONTIGUOUS] = "is_contiguous",
};

const char *ts_query_name(ts_query q)
{
    return (unsigned)q < TS_Q_COUNT ? query_names[q] : "?";
}

int ts_query_from_name(const char *name, ts_query *out)
{
    for (int i = 0; i < TS_Q_COUNT; i++) {
        if (strcmp(name, query_names[i]) == 0) {
            *out = (ts_query)i;
            return 0;
        }
    }
    return -1;
}

int ts_query_takes_arg(ts_query q) { return q == TS_Q_SIZE || q == TS_Q_STRIDE; }

int ts_query_is_bool(ts_query q)
{
    return q == TS_Q_IS_VIEW || q == TS_Q_IS_SPARSE || q == TS_Q_IS_COALESCED ||
           q == TS_Q_REQUIRES_GRAD || q >= TS_Q_IS_LEAF;
}

const char *ts_layout_name(ts_layout l)
{
    return l == TS_SPARSE_COO ? "sparse_coo" : l == TS_SPARSE_CSR ? "sparse_csr" : "strided";
}

static const char *const memfmt_names[TS_MEMFMT_COUNT] = {
    [TS_CONTIGUOUS_FORMAT] = "contiguous_format", [TS_CHANNELS_LAST] = "channels_last",
};

const char *ts_memfmt_name(ts_memfmt f)
{
    return (unsigned)f < TS_MEMFMT_COUNT ? memfmt_names[f] : "?";
}

int ts_memfmt_from_name(const char *s, ts_memfmt *out)
{
    for (int i = 0; i < TS_MEMFMT_COUNT; i++)
        if (strcmp(s, memfmt_names[i]) == 0) {
            *out = (ts_memfmt)i;
            return 0;
        }
    return -1;
}

int ts_memfmt_strides(ts_memfmt f, int ndim, const int64_t *sizes, int64_t *out)
{
    if (f != TS_CHANNELS_LAST) {
        ts_shape_contig_strides(ndim, sizes, out);
        return 0;
    }
    if (ndim != 4)
        return er_set(ER_SHAPE, "required rank 4 tensor to use channels_last format");
    out[1] = 1;
    out[3] = sizes[1];
    out[2] = out[3] * sizes[3];
    out[0] = out[2] * sizes[2];
    return 0;
}
