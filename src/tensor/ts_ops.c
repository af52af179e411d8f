/* ts_ops.c - ops that make new tensors or write in place: clone,
 * contiguous, to, add, mul, matmul, sum, add_, mul_, zero_. Real tensors
 * get real bytes, read and written element by element through their
 * strides (so a use-after-free of a storage touches freed memory); meta
 * tensors get metadata only. */
#include "tensor/ts_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/er.h"

/* ---- element conversion ---- */

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t double_to_half(double x)
{
    uint16_t s = signbit(x) ? 0x8000 : 0;
    if (isnan(x))
        return 0x7e00;
    x = fabs(x);
    if (x >= 65520.0)
        return (uint16_t)(s | 0x7c00);
    if (x < ldexp(1, -14))
        return (uint16_t)(s | (uint16_t)rint(x * ldexp(1, 24)));
    int e;
    double f = frexp(x, &e);   /* x = f * 2^e, f in [0.5, 1) */
    int m = (int)rint((2 * f - 1) * 1024);
    int E = e - 1 + 15;
    if (m == 1024) {
        m = 0;
        E++;
    }
    if (E >= 31)
        return (uint16_t)(s | 0x7c00);
    return (uint16_t)(s | (uint16_t)(E << 10) | (uint16_t)m);
}

static float to_float(double x)
{
    if (isnan(x))
        return NAN;
    if (x > FLT_MAX)
        return INFINITY;
    if (x < -FLT_MAX)
        return -INFINITY;
    return (float)x;
}

static uint16_t double_to_bf16(double x)
{
    float f = to_float(x);
    uint32_t u;
    if (isnan(f))
        return 0x7fc0;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static double bf16_to_double(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int64_t clamp_int(double x, double lo, double hi)
{
    if (isnan(x))
        return 0;
    if (x <= lo)
        return (int64_t)lo;
    if (x >= hi)
        return (int64_t)hi;
    return (int64_t)x;
}

void ts_load(ts_dtype dt, const unsigned char *p, int neg, int conj, double v[2])
{
    float f;
    double d;
    uint16_t h;
    int8_t i8;
    int32_t i32;
    int64_t i64;
    v[0] = v[1] = 0;
    switch (dt) {
    case TS_F16: memcpy(&h, p, 2); v[0] = half_to_double(h); break;
    case TS_BF16: memcpy(&h, p, 2); v[0] = bf16_to_double(h); break;
    case TS_F32: memcpy(&f, p, 4); v[0] = f; break;
    case TS_F64: memcpy(&d, p, 8); v[0] = d; break;
    case TS_C64:
        memcpy(&f, p, 4); v[0] = f;
        memcpy(&f, p + 4, 4); v[1] = f;
        break;
    case TS_C128:
        memcpy(&d, p, 8); v[0] = d;
        memcpy(&d, p + 8, 8); v[1] = d;
        break;
    case TS_I8: memcpy(&i8, p, 1); v[0] = i8; break;
    case TS_U8: v[0] = p[0]; break;
    case TS_I32: memcpy(&i32, p, 4); v[0] = i32; break;
    case TS_I64: memcpy(&i64, p, 8); v[0] = (double)i64; break;
    case TS_BOOL: v[0] = p[0] != 0; break;
    default: break;
    }
    if (neg) {
        v[0] = -v[0];
        v[1] = -v[1];
    }
    if (conj)
        v[1] = -v[1];
}

void ts_store(ts_dtype dt, unsigned char *p, const double v[2])
{
    float f;
    double d;
    uint16_t h;
    int8_t i8;
    int32_t i32;
    int64_t i64;
    switch (dt) {
    case TS_F16: h = double_to_half(v[0]); memcpy(p, &h, 2); break;
    case TS_BF16: h = double_to_bf16(v[0]); memcpy(p, &h, 2); break;
    case TS_F32: f = to_float(v[0]); memcpy(p, &f, 4); break;
    case TS_F64: d = v[0]; memcpy(p, &d, 8); break;
    case TS_C64:
        f = to_float(v[0]); memcpy(p, &f, 4);
        f = to_float(v[1]); memcpy(p + 4, &f, 4);
        break;
    case TS_C128:
        d = v[0]; memcpy(p, &d, 8);
        d = v[1]; memcpy(p + 8, &d, 8);
        break;
    case TS_I8: i8 = (int8_t)clamp_int(v[0], -128, 127); memcpy(p, &i8, 1); break;
    case TS_U8: p[0] = (unsigned char)clamp_int(v[0], 0, 255); break;
    case TS_I32:
        i32 = (int32_t)clamp_int(v[0], -2147483648.0, 2147483647.0);
        memcpy(p, &i32, 4);
        break;
    case TS_I64:
        /* 2^63 is not an int64; stay just below it */
        i64 = clamp_int(v[0], -9223372036854775808.0, 9223372036854774784.0);
        memcpy(p, &i64, 8);
        break;
    case TS_BOOL: p[0] = (v[0] != 0 || v[1] != 0) ? 1 : 0; break;
    default: break;
    }
}

void ts_fill_init(unsigned char *p, int64_t n, ts_dtype dt, ts_init init)
{
    size_t isz = ts_dtype_size(dt);
    for (int64_t i = 0; i < n; i++, p += isz) {
        double v[2] = {0, 0};
        if (init == TS_INIT_ONES) {
            v[0] = 1;
        } else if (init == TS_INIT_RAND) {
            if (ts_dtype_is_floating(dt) || ts_dtype_is_complex(dt)) {
                v[0] = (double)(ts_rand_u64() >> 11) * 0x1.0p-53;
                v[1] = (double)(ts_rand_u64() >> 11) * 0x1.0p-53;
            } else {
                v[0] = (double)(ts_rand_u64() % (dt == TS_BOOL ? 2 : 10));
            }
        }
        ts_store(dt, p, v);
    }
}

unsigned char *ts_data_ptr(const ts_tensor *t)
{
    if (!t->storage || !t->storage->data)
        return NULL;
    return (unsigned char *)t->storage->data +
           (size_t)t->storage_offset * ts_dtype_size(t->dtype);
}

/* ---- strided iteration ---- */

enum { MAX_OPS = 3, ITER_DIMS = TS_MAX_DIM + 2 };

typedef struct iter_op {
    unsigned char *p;
    int64_t st[ITER_DIMS];   /* in elements */
    size_t isz;
} iter_op;

/* Call fn once per index of `sizes`, with each operand's element address. */
static void iter_run(int ndim, const int64_t *sizes, int nops, iter_op *ops,
                     void (*fn)(unsigned char **p, void *ctx), void *ctx)
{
    int64_t idx[ITER_DIMS] = {0};
    ptrdiff_t bst[MAX_OPS][ITER_DIMS];
    unsigned char *p[MAX_OPS];
    for (int d = 0; d < ndim; d++)
        if (sizes[d] == 0)
            return;
    for (int k = 0; k < nops; k++) {
        p[k] = ops[k].p;
        for (int d = 0; d < ndim; d++)
            bst[k][d] = (ptrdiff_t)ops[k].st[d] * (ptrdiff_t)ops[k].isz;
    }
    for (;;) {
        fn(p, ctx);
        int d = ndim - 1;
        for (; d >= 0; d--) {
            idx[d]++;
            for (int k = 0; k < nops; k++)
                p[k] += bst[k][d];
            if (idx[d] < sizes[d])
                break;
            for (int k = 0; k < nops; k++)
                p[k] -= bst[k][d] * (ptrdiff_t)sizes[d];
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}

static void set_op(iter_op *op, const ts_tensor *t, unsigned char *p)
{
    op->p = p;
    op->isz = ts_dtype_size(t->dtype);
    memcpy(op->st, t->strides, (size_t)t->ndim * sizeof *t->strides);
}

/* t's strides broadcast to an output of nd dims with sizes `sizes`. */
static void broadcast_strides(const ts_tensor *t, int nd, const int64_t *sizes, int64_t *out)
{
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - t->ndim);
        if (j < 0 || (t->sizes[j] == 1 && sizes[i] != 1))
            out[i] = 0;
        else
            out[i] = t->strides[j];
    }
}

typedef struct copy_ctx {
    ts_dtype sdt, ddt;
    int neg, conj;
} copy_ctx;

static void copy_fn(unsigned char **p, void *vctx)
{
    copy_ctx *c = vctx;
    double v[2];
    ts_load(c->sdt, p[1], c->neg, c->conj, v);
    ts_store(c->ddt, p[0], v);
}

void ts_copy_elems(ts_tensor *dst, const ts_tensor *src)
{
    unsigned char *d = ts_data_ptr(dst), *s = ts_data_ptr(src);
    if (!d || !s)
        return;
    iter_op ops[2];
    set_op(&ops[0], dst, d);
    set_op(&ops[1], src, s);
    copy_ctx c = {src->dtype, dst->dtype, src->neg, src->conj};
    iter_run(dst->ndim, dst->sizes, 2, ops, copy_fn, &c);
}

typedef struct move_ctx {
    ts_dtype sdt, ddt;
    int accumulate;
} move_ctx;

static void move_fn(unsigned char **p, void *vctx)
{
    move_ctx *c = vctx;
    double v[2], acc[2];
    ts_load(c->sdt, p[1], 0, 0, v);
    if (c->accumulate) {
        ts_load(c->ddt, p[0], 0, 0, acc);
        v[0] += acc[0];
        v[1] += acc[1];
    }
    ts_store(c->ddt, p[0], v);
}

void ts_move_elems(int ndim, const int64_t *sizes, unsigned char *dst, const int64_t *dst_st,
                   ts_dtype ddt, const unsigned char *src, const int64_t *src_st,
                   ts_dtype sdt, int accumulate)
{
    iter_op ops[2];
    ops[0].p = dst;
    ops[0].isz = ts_dtype_size(ddt);
    ops[1].p = (unsigned char *)src;
    ops[1].isz = ts_dtype_size(sdt);
    memcpy(ops[0].st, dst_st, (size_t)ndim * sizeof *dst_st);
    memcpy(ops[1].st, src_st, (size_t)ndim * sizeof *src_st);
    move_ctx c = {sdt, ddt, accumulate};
    iter_run(ndim, sizes, 2, ops, move_fn, &c);
}

/* ---- new tensors from one input ---- */

ts_tensor *ts_clone_to(ts_tensor *self, ts_device dev, ts_dtype dt, int contiguous)
{
    dev = ts_device_norm(dev);
    if (self->device.type == TS_DEV_META && dev.type != TS_DEV_META) {
        er_set(ER_TYPE, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    int dense = !contiguous && ts_shape_is_dense(self->ndim, self->sizes, self->strides);
    ts_tensor *out = ts_new_strided(self->ndim, self->sizes, dense ? self->strides : NULL,
                                    dt, dev, TS_INIT_NONE);
    if (!out)
        return NULL;
    ts_copy_elems(out, self);
    out->quantized = self->quantized && dt == self->dtype;
    ts_set_result_grad(out, self->requires_grad && ts_dtype_can_require_grad(dt));
    return out;
}

int ts_to_target(ts_tensor *self, const ts_args *a, ts_device *dev, ts_dtype *dt)
{
    *dev = a->has_device ? ts_device_norm(a->device) : self->device;
    *dt = a->has_dtype ? a->dtype : self->dtype;
    if ((unsigned)*dt >= TS_DTYPE_COUNT)
        return er_set(ER_TYPE, "to(): unknown dtype %d", (int)*dt);
    if (ts_device_eq(*dev, self->device) && *dt == self->dtype) {
        obj_incref(&self->hdr);
        return 1;
    }
    return 0;
}

static ts_tensor *to_of(ts_tensor *self, const ts_args *a)
{
    ts_device dev;
    ts_dtype dt;
    int k = ts_to_target(self, a, &dev, &dt);
    if (k != 0)
        return k > 0 ? self : NULL;
    return ts_clone_to(self, dev, dt, 0);
}

/* ---- binary ops ---- */

static int check_other(ts_op op, const ts_tensor *o)
{
    if (o->flavour == TS_FAKE)
        return er_set(ER_TYPE, "%s(): the other operand is a fake tensor; fake tensors must "
                      "go through their fake mode", ts_op_name(op));
    if (o->layout != TS_STRIDED)
        return er_set(ER_TYPE, "%s() of a strided and a sparse tensor is not supported",
                      ts_op_name(op));
    if (o->quantized)
        return er_set(ER_TYPE, "%s() is not supported for quantized tensors", ts_op_name(op));
    return 0;
}

/* Both on one device, except that a 0-dim cpu tensor goes with any device
 * (as PyTorch's cpu scalars do). */
static int common_device(const ts_tensor *a, const ts_tensor *b, ts_device *out)
{
    if (ts_device_eq(a->device, b->device)) {
        *out = a->device;
        return 0;
    }
    if (b->ndim == 0 && b->device.type == TS_DEV_CPU) {
        *out = a->device;
        return 0;
    }
    if (a->ndim == 0 && a->device.type == TS_DEV_CPU) {
        *out = b->device;
        return 0;
    }
    char d1[32], d2[32];
    ts_device_format(a->device, d1, sizeof d1);
    ts_device_format(b->device, d2, sizeof d2);
    return er_set(ER_TYPE, "Expected all tensors to be on the same device, but found at "
                  "least two devices, %s and %s!", d2, d1);
}

static ts_operand_kind kind_of(const ts_tensor *t)
{
    return t->ndim > 0 ? TS_OPK_DIM : TS_OPK_ZERO;
}

static ts_dtype binary_dtype(const ts_tensor *self, const ts_args *a)
{
    ts_dtype dts[2] = {self->dtype, TS_I64};
    ts_operand_kind ks[2] = {kind_of(self), TS_OPK_WRAPPED};
    if (a->other) {
        dts[1] = a->other->dtype;
        ks[1] = kind_of(a->other);
    } else if (a->scalar_bool) {
        dts[1] = TS_BOOL;
    } else {
        dts[1] = a->scalar == floor(a->scalar) && isfinite(a->scalar) ? TS_I64 : TS_F32;
    }
    return ts_result_type(2, dts, ks);
}

typedef struct bin_ctx {
    ts_op op;
    ts_dtype adt, bdt, odt;
    int aneg, aconj, bneg, bconj, oneg, oconj;
    int has_b;
    double scalar;
} bin_ctx;

/* p[0] output, p[1] a, p[2] b (when has_b). */
static void bin_fn(unsigned char **p, void *vctx)
{
    bin_ctx *c = vctx;
    double x[2], y[2] = {c->scalar, 0}, r[2];
    ts_load(c->adt, p[1], c->aneg, c->aconj, x);
    if (c->has_b)
        ts_load(c->bdt, p[2], c->bneg, c->bconj, y);
    if (c->op == TS_OP_ADD || c->op == TS_OP_ADD_) {
        r[0] = x[0] + y[0];
        r[1] = x[1] + y[1];
    } else if (c->op == TS_OP_SUB) {
        r[0] = x[0] - y[0];
        r[1] = x[1] - y[1];
    } else if (c->op == TS_OP_NEG) {
        r[0] = -x[0];
        r[1] = -x[1];
    } else {
        r[0] = x[0] * y[0] - x[1] * y[1];
        r[1] = x[0] * y[1] + x[1] * y[0];
    }
    if (c->odt == TS_BOOL && c->op == TS_OP_ADD) {
        r[0] = (x[0] != 0 || y[0] != 0);
        r[1] = 0;
    }
    /* writing through a neg/conj view stores the resolved value back */
    if (c->oneg) {
        r[0] = -r[0];
        r[1] = -r[1];
    }
    if (c->oconj)
        r[1] = -r[1];
    ts_store(c->odt, p[0], r);
}

static ts_tensor *binary_of(ts_op op, ts_tensor *self, const ts_args *a)
{
    const ts_tensor *o = a->other;
    ts_device dev = self->device;
    int nd = self->ndim;
    int64_t shape[TS_MAX_DIM], sa[TS_MAX_DIM], sb[TS_MAX_DIM], st[TS_MAX_DIM];
    if (!o && !a->has_scalar && op != TS_OP_NEG) {
        er_set(ER_TYPE, "%s() needs a tensor or a number", ts_op_name(op));
        return NULL;
    }
    if (op == TS_OP_NEG && self->dtype == TS_BOOL) {
        er_set(ER_TYPE, "Negation, the `-` operator, on a bool tensor is not supported.");
        return NULL;
    }
    if (op == TS_OP_SUB && (self->dtype == TS_BOOL || (o && o->dtype == TS_BOOL) ||
                            (!o && a->scalar_bool))) {
        er_set(ER_TYPE, "Subtraction, the `-` operator, with a bool tensor is not supported.");
        return NULL;
    }
    if (o) {
        if (check_other(op, o) || common_device(self, o, &dev) ||
            ts_shape_broadcast(self->ndim, self->sizes, o->ndim, o->sizes, &nd, shape))
            return NULL;
    } else {
        memcpy(shape, self->sizes, (size_t)self->ndim * sizeof *shape);
    }
    ts_dtype dt = op == TS_OP_NEG ? self->dtype : binary_dtype(self, a);
    broadcast_strides(self, nd, shape, sa);
    const int64_t *ins[2] = {sa, sb};
    if (o)
        broadcast_strides(o, nd, shape, sb);
    ts_shape_like_strides(nd, shape, o ? 2 : 1, ins, st);
    ts_tensor *out = ts_new_strided(nd, shape, st, dt, dev, TS_INIT_NONE);
    if (!out)
        return NULL;
    unsigned char *po = ts_data_ptr(out), *pa = ts_data_ptr(self);
    unsigned char *pb = o ? ts_data_ptr(o) : NULL;
    if (po && pa && (!o || pb)) {
        iter_op ops[3];
        set_op(&ops[0], out, po);
        ops[1].p = pa;
        ops[1].isz = ts_dtype_size(self->dtype);
        memcpy(ops[1].st, sa, sizeof sa);
        if (o) {
            ops[2].p = pb;
            ops[2].isz = ts_dtype_size(o->dtype);
            memcpy(ops[2].st, sb, sizeof sb);
        }
        bin_ctx c = {op, self->dtype, o ? o->dtype : dt, dt, self->neg, self->conj,
                     o ? o->neg : 0, o ? o->conj : 0, 0, 0, o != NULL, a->scalar};
        iter_run(nd, shape, o ? 3 : 2, ops, bin_fn, &c);
    }
    ts_set_result_grad(out, self->requires_grad || (o && o->requires_grad));
    return out;
}

/* ---- in place ---- */

static int check_inplace_grad(const ts_tensor *self, int any_requires_grad)
{
    if (!any_requires_grad)
        return 0;
    if (self->base && self->requires_grad && self->base->is_leaf &&
        self->base->requires_grad)
        return er_set(ER_TYPE, "a view of a leaf Variable that requires grad is being used "
                      "in an in-place operation.");
    if (self->requires_grad && self->is_leaf)
        return er_set(ER_TYPE, "a leaf Variable that requires grad is being used in an "
                      "in-place operation.");
    return 0;
}

int ts_inplace_grad_check(const ts_tensor *self, const ts_tensor *other)
{
    return check_inplace_grad(self, self->requires_grad || (other && other->requires_grad));
}

static void zero_fn(unsigned char **p, void *vctx)
{
    const size_t *isz = vctx;
    memset(p[0], 0, *isz);
}

static ts_tensor *inplace_of(ts_op op, ts_tensor *self, const ts_args *a)
{
    const ts_tensor *o = op == TS_OP_ZERO_ ? NULL : a->other;
    char s1[256], s2[256];
    if (op != TS_OP_ZERO_ && !o && !a->has_scalar) {
        er_set(ER_TYPE, "%s() needs a tensor or a number", ts_op_name(op));
        return NULL;
    }
    if (o && check_other(op, o))
        return NULL;
    if (!a->grad_checked && ts_inplace_grad_check(self, o))
        return NULL;
    if (op != TS_OP_ZERO_) {
        for (int i = 0; i < self->ndim; i++) {
            if (self->strides[i] == 0 && self->sizes[i] > 1) {
                er_set(ER_SHAPE, "unsupported operation: more than one element of the "
                       "written-to tensor refers to a single memory location. Please "
                       "clone() the tensor before performing the operation. (sizes %s, "
                       "strides %s)", ts_fmt_shape(s1, sizeof s1, self->ndim, self->sizes),
                       ts_fmt_shape(s2, sizeof s2, self->ndim, self->strides));
                return NULL;
            }
        }
    }
    int64_t sb[TS_MAX_DIM];
    if (o) {
        ts_device dev;
        int nd;
        int64_t shape[TS_MAX_DIM];
        if (common_device(self, o, &dev) ||
            ts_shape_broadcast(self->ndim, self->sizes, o->ndim, o->sizes, &nd, shape))
            return NULL;
        int same = nd == self->ndim;
        for (int i = 0; same && i < nd; i++)
            same = shape[i] == self->sizes[i];
        if (!same) {
            er_set(ER_SHAPE, "output with shape %s doesn't match the broadcast shape %s",
                   ts_fmt_shape(s1, sizeof s1, self->ndim, self->sizes),
                   ts_fmt_shape(s2, sizeof s2, nd, shape));
            return NULL;
        }
        broadcast_strides(o, self->ndim, self->sizes, sb);
    }
    if (op != TS_OP_ZERO_) {
        ts_dtype rt = binary_dtype(self, a);
        if (!ts_can_cast(rt, self->dtype)) {
            er_set(ER_TYPE, "result type %s can't be cast to the desired output type %s",
                   ts_dtype_name(rt), ts_dtype_name(self->dtype));
            return NULL;
        }
    }
    unsigned char *ps = ts_data_ptr(self);
    unsigned char *pb = o ? ts_data_ptr(o) : NULL;
    if (ps && op == TS_OP_ZERO_) {
        iter_op ops[1];
        size_t isz = ts_dtype_size(self->dtype);
        set_op(&ops[0], self, ps);
        iter_run(self->ndim, self->sizes, 1, ops, zero_fn, &isz);
    } else if (ps && (!o || pb)) {
        iter_op ops[3];
        set_op(&ops[0], self, ps);
        set_op(&ops[1], self, ps);
        if (o) {
            ops[2].p = pb;
            ops[2].isz = ts_dtype_size(o->dtype);
            memcpy(ops[2].st, sb, sizeof sb);
        }
        bin_ctx c = {op, self->dtype, o ? o->dtype : self->dtype, self->dtype,
                     self->neg, self->conj, o ? o->neg : 0, o ? o->conj : 0,
                     self->neg, self->conj, o != NULL, a->scalar};
        iter_run(self->ndim, self->sizes, o ? 3 : 2, ops, bin_fn, &c);
    }
    if (o && o->requires_grad && !self->requires_grad) {
        self->requires_grad = 1;
        self->is_leaf = 0;
    }
    obj_incref(&self->hdr);
    return self;
}

/* ---- matmul ---- */

typedef struct mm_ctx {
    ts_dtype adt, bdt, odt;
    int aneg, aconj, bneg, bconj;
    int64_t m;
    ptrdiff_t ak, bk;   /* byte strides along the contracted dim */
} mm_ctx;

static void mm_fn(unsigned char **p, void *vctx)
{
    mm_ctx *c = vctx;
    double acc[2] = {0, 0}, x[2], y[2];
    const unsigned char *pa = p[1], *pb = p[2];
    for (int64_t k = 0; k < c->m; k++, pa += c->ak, pb += c->bk) {
        ts_load(c->adt, pa, c->aneg, c->aconj, x);
        ts_load(c->bdt, pb, c->bneg, c->bconj, y);
        acc[0] += x[0] * y[0] - x[1] * y[1];
        acc[1] += x[0] * y[1] + x[1] * y[0];
    }
    ts_store(c->odt, p[0], acc);
}

static ts_tensor *matmul_of(ts_tensor *self, const ts_args *a)
{
    const ts_tensor *o = a->other;
    char s1[256], s2[256];
    ts_device dev;
    if (!o) {
        er_set(ER_TYPE, "matmul() needs a tensor");
        return NULL;
    }
    if (check_other(TS_OP_MATMUL, o) || common_device(self, o, &dev))
        return NULL;
    int d1 = self->ndim, d2 = o->ndim;
    if (d1 == 0 || d2 == 0) {
        er_set(ER_SHAPE, "both arguments to matmul need to be at least 1D, but they are "
               "%dD and %dD", d1, d2);
        return NULL;
    }
    if (self->dtype != o->dtype) {
        er_set(ER_TYPE, "matmul: expected both tensors to have the same dtype, but found "
               "%s and %s", ts_dtype_name(self->dtype), ts_dtype_name(o->dtype));
        return NULL;
    }
    int64_t n = d1 > 1 ? self->sizes[d1 - 2] : 1, m1 = self->sizes[d1 - 1];
    int64_t m2 = d2 > 1 ? o->sizes[d2 - 2] : o->sizes[0], p = d2 > 1 ? o->sizes[d2 - 1] : 1;
    if (m1 != m2) {
        if (d1 == 1 && d2 == 1)
            er_set(ER_SHAPE, "inconsistent tensor size, expected tensor [%lld] and src "
                   "[%lld] to have the same number of elements, but got %lld and %lld "
                   "elements respectively", (long long)m1, (long long)m2, (long long)m1,
                   (long long)m2);
        else
            er_set(ER_SHAPE, "matmul: shapes %s and %s cannot be multiplied (%lld != %lld)",
                   ts_fmt_shape(s1, sizeof s1, d1, self->sizes),
                   ts_fmt_shape(s2, sizeof s2, d2, o->sizes), (long long)m1, (long long)m2);
        return NULL;
    }
    int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0, nb;
    int64_t batch[TS_MAX_DIM], shape[TS_MAX_DIM];
    if (ts_shape_broadcast(nb1, self->sizes, nb2, o->sizes, &nb, batch))
        return NULL;
    int nd = 0;
    for (int i = 0; i < nb; i++)
        shape[nd++] = batch[i];
    if (d1 > 1)
        shape[nd++] = n;
    if (d2 > 1)
        shape[nd++] = p;
    ts_tensor *out = ts_new_strided(nd, shape, NULL, self->dtype, dev, TS_INIT_NONE);
    if (!out)
        return NULL;
    unsigned char *po = ts_data_ptr(out), *pa = ts_data_ptr(self), *pb = ts_data_ptr(o);
    if (po && pa && pb) {
        /* iterate over batch + [n, p]; the contraction runs inside mm_fn */
        int64_t isizes[ITER_DIMS];
        iter_op ops[3];
        memset(ops, 0, sizeof ops);
        ops[0].p = po;
        ops[1].p = pa;
        ops[2].p = pb;
        ops[0].isz = ops[1].isz = ops[2].isz = ts_dtype_size(self->dtype);
        int64_t full[ITER_DIMS], ost[ITER_DIMS];
        for (int i = 0; i < nb; i++)
            full[i] = batch[i];
        full[nb] = n;
        full[nb + 1] = p;
        ts_shape_contig_strides(nb + 2, full, ost);
        for (int i = 0; i < nb + 2; i++) {
            isizes[i] = full[i];
            ops[0].st[i] = ost[i];
        }
        for (int i = 0; i < nb; i++) {
            int j1 = i - (nb - nb1), j2 = i - (nb - nb2);
            ops[1].st[i] = (j1 < 0 || (self->sizes[j1] == 1 && batch[i] != 1)) ? 0
                           : self->strides[j1];
            ops[2].st[i] = (j2 < 0 || (o->sizes[j2] == 1 && batch[i] != 1)) ? 0
                           : o->strides[j2];
        }
        ops[1].st[nb] = d1 > 1 ? self->strides[d1 - 2] : 0;
        ops[1].st[nb + 1] = 0;
        ops[2].st[nb] = 0;
        ops[2].st[nb + 1] = d2 > 1 ? o->strides[d2 - 1] : 0;
        size_t isz = ts_dtype_size(self->dtype);
        mm_ctx c = {self->dtype, o->dtype, out->dtype, self->neg, self->conj, o->neg,
                    o->conj, m1, (ptrdiff_t)(self->strides[d1 - 1] * (int64_t)isz),
                    (ptrdiff_t)((d2 > 1 ? o->strides[d2 - 2] : o->strides[0]) * (int64_t)isz)};
        iter_run(nb + 2, isizes, 3, ops, mm_fn, &c);
    }
    ts_set_result_grad(out, self->requires_grad || o->requires_grad);
    return out;
}

/* ---- sum ---- */

typedef struct sum_ctx {
    ts_dtype idt, odt;
    int neg, conj;
} sum_ctx;

static void sum_fn(unsigned char **p, void *vctx)
{
    sum_ctx *c = vctx;
    double x[2], acc[2];
    ts_load(c->idt, p[1], c->neg, c->conj, x);
    ts_load(c->odt, p[0], 0, 0, acc);
    acc[0] += x[0];
    acc[1] += x[1];
    ts_store(c->odt, p[0], acc);
}

static ts_tensor *sum_of(ts_tensor *self, const ts_args *a)
{
    int has_dim = a->has_dim || a->n == 1;
    int64_t dim = a->has_dim ? a->dim : a->n == 1 ? a->v[0] : 0;
    int d = -1;
    if (has_dim && ts_wrap_dim(dim, self->ndim, 1, &d))
        return NULL;
    ts_dtype dt = (ts_dtype_is_integral(self->dtype) || self->dtype == TS_BOOL)
                  ? TS_I64 : self->dtype;
    int64_t shape[TS_MAX_DIM];
    int nd = 0;
    if (has_dim) {
        for (int i = 0; i < self->ndim; i++)
            if (i != d)
                shape[nd++] = self->sizes[i];
    }
    ts_tensor *out = ts_new_strided(nd, shape, NULL, dt, self->device, TS_INIT_ZEROS);
    if (!out)
        return NULL;
    unsigned char *po = ts_data_ptr(out), *pi = ts_data_ptr(self);
    if (po && pi) {
        iter_op ops[2];
        memset(ops, 0, sizeof ops);
        ops[0].p = po;
        ops[0].isz = ts_dtype_size(dt);
        int k = 0;
        for (int i = 0; i < self->ndim; i++)
            ops[0].st[i] = (!has_dim || i == d || self->ndim == 0) ? 0 : out->strides[k++];
        set_op(&ops[1], self, pi);
        sum_ctx c = {self->dtype, dt, self->neg, self->conj};
        iter_run(self->ndim, self->sizes, 2, ops, sum_fn, &c);
    }
    ts_set_result_grad(out, self->requires_grad);
    return out;
}

/* ---- memory formats ---- */

/* contiguous(memory_format=channels_last): self when already so, else a
 * copy with channels-last strides; 4-d only (checked first, as PyTorch). */
static ts_tensor *contiguous_cl(ts_tensor *self)
{
    int64_t st[TS_MAX_DIM];
    if (ts_memfmt_strides(TS_CHANNELS_LAST, self->ndim, self->sizes, st))
        return NULL;
    if (ts_shape_is_cl_contiguous(self->ndim, self->sizes, self->strides)) {
        obj_incref(&self->hdr);
        return self;
    }
    ts_tensor *out = ts_new_strided(self->ndim, self->sizes, st, self->dtype, self->device,
                                    TS_INIT_NONE);
    if (!out)
        return NULL;
    ts_copy_elems(out, self);
    out->quantized = self->quantized;
    ts_set_result_grad(out, self->requires_grad);
    return out;
}

/* ---- set_ ---- */

/* The source geometry of set_: a tensor's, a whole storage as 1-d, or the
 * one given. */
static int set_source(ts_tensor *self, const ts_args *a, ts_storage **s, int *n,
                      int64_t *sz, int64_t *st, int64_t *off)
{
    const ts_tensor *o = a->other;
    if (o) {
        if (o->layout != TS_STRIDED || !o->storage)
            return er_set(ER_TYPE, "set_(): the source must be a strided tensor");
        if (o->dtype != self->dtype)
            return er_set(ER_TYPE, "set_(): source dtype %s does not match the tensor's %s",
                          ts_dtype_name(o->dtype), ts_dtype_name(self->dtype));
        *s = o->storage;
        *n = o->ndim;
        ts_copy_dims(sz, o->sizes, o->ndim);
        ts_copy_dims(st, o->strides, o->ndim);
        *off = o->storage_offset;
        return 0;
    }
    if (!a->storage)
        return er_set(ER_TYPE, "set_() needs a tensor or a storage");
    *s = a->storage;
    if (!a->set_geom) {
        *n = 1;
        sz[0] = (int64_t)(a->storage->nbytes / ts_dtype_size(self->dtype));
        st[0] = 1;
        *off = 0;
        return 0;
    }
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "set_(): %d sizes but %d strides", a->n, a->n2);
    *n = a->n;
    ts_copy_dims(sz, a->v, a->n);
    ts_copy_dims(st, a->v2, a->n);
    *off = a->offset;
    return 0;
}

static ts_tensor *set_of(ts_tensor *self, const ts_args *a)
{
    ts_storage *s = NULL;
    int n = 0;
    int64_t sz[TS_MAX_DIM], st[TS_MAX_DIM], off = 0;
    uint64_t need;
    if (set_source(self, a, &s, &n, sz, st, &off))
        return NULL;
    int src_rg = a->other && a->other->requires_grad;
    if (!ts_device_eq(s->device, self->device)) {
        char d1[32], d2[32];
        ts_device_format(self->device, d1, sizeof d1);
        ts_device_format(s->device, d2, sizeof d2);
        er_set(ER_TYPE, "Attempted to set the storage of a tensor on device \"%s\" to a "
               "storage on different device \"%s\".", d1, d2);
        return NULL;
    }
    if (!a->grad_checked && check_inplace_grad(self, self->requires_grad || src_rg))
        return NULL;
    for (int i = 0; i < n; i++)
        if (st[i] < 0) {
            er_set(ER_SHAPE, "set_(): negative strides are not supported");
            return NULL;
        }
    if (off < 0) {
        er_set(ER_SHAPE, "Tensor: invalid storage offset %lld", (long long)off);
        return NULL;
    }
    if (ts_shape_check(n, sz) ||
        ts_shape_storage_bytes(n, sz, st, off, ts_dtype_size(self->dtype), &need) ||
        ts_reserve_dims(self, n) || ts_storage_grow(s, need))
        return NULL;
    obj_incref(&s->hdr);
    ts_storage *old = self->storage;
    self->storage = s;
    obj_decref(old ? &old->hdr : NULL);
    self->ndim = n;   /* room reserved above */
    ts_copy_dims(self->sizes, sz, n);
    ts_copy_dims(self->strides, st, n);
    self->storage_offset = off;
    if (src_rg && !self->requires_grad) {
        self->requires_grad = 1;
        self->is_leaf = 0;
    }
    obj_incref(&self->hdr);
    return self;
}

/* ---- dispatch (strided tensors) ---- */

ts_tensor *ts_ops_apply(ts_op op, ts_tensor *self, const ts_args *a)
{
    switch (op) {
    case TS_OP_CLONE:
        return ts_clone_to(self, self->device, self->dtype, 0);
    case TS_OP_CONTIGUOUS:
        if (a->has_mfmt && a->mfmt == TS_CHANNELS_LAST)
            return contiguous_cl(self);
        if (ts_shape_is_contiguous(self->ndim, self->sizes, self->strides)) {
            obj_incref(&self->hdr);
            return self;
        }
        return ts_clone_to(self, self->device, self->dtype, 1);
    case TS_OP_TO:
        return to_of(self, a);
    case TS_OP_ADD:
    case TS_OP_MUL:
    case TS_OP_SUB:
    case TS_OP_NEG:
        return binary_of(op, self, a);
    case TS_OP_SET_:
        return set_of(self, a);
    case TS_OP_MATMUL:
        return matmul_of(self, a);
    case TS_OP_SUM:
        return sum_of(self, a);
    case TS_OP_ADD_:
    case TS_OP_MUL_:
    case TS_OP_ZERO_:
        return inplace_of(op, self, a);
    case TS_OP_TO_DENSE:
        obj_incref(&self->hdr);   /* PyTorch: to_dense() of a dense tensor is self */
        return self;
    case TS_OP_TO_SPARSE:
        return ts_to_sparse(self, a);
    case TS_OP_COALESCE:
    case TS_OP_INDICES:
    case TS_OP_VALUES:
        er_set(ER_TYPE, "%s() expects a sparse tensor, got a strided one", ts_op_name(op));
        return NULL;
    default:
        er_set(ER_INTERNAL, "ts_ops_apply: unexpected op %s", ts_op_name(op));
        return NULL;
    }
}
