/* test_ops.c - clone, contiguous, to, add, mul, matmul, sum and the
 * in-place ops: shapes, strides, dtypes, devices, values, grads, errors.
 * Expected values observed with PyTorch 1.13, written in by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/obj.h"
#include "tensor/ts_internal.h"
#include "tensor/tt.h"

TestSuite(ops, .init = tt_begin);

static ts_tensor *filled(int64_t rows, int64_t cols)
{
    ts_tensor *t = tt_empty(2, rows, cols);
    for (int64_t i = 0; i < rows * cols; i++)
        tt_set(t, i, (double)i);
    return t;
}

static ts_args with(const ts_tensor *o)
{
    ts_args a;
    memset(&a, 0, sizeof a);
    a.other = o;
    return a;
}

static ts_args scalar(double x)
{
    ts_args a;
    memset(&a, 0, sizeof a);
    a.has_scalar = 1;
    a.scalar = x;
    return a;
}

static ts_tensor *op2(ts_op op, ts_tensor *a, const ts_tensor *b)
{
    ts_args args = with(b);
    return ts_apply(op, a, &args);
}

Test(ops, clone)
{
    ts_tensor *a = filled(4, 4);
    ts_tensor *c = tt_ok(ts_apply(TS_OP_CLONE, a, NULL));
    cr_assert_neq(c->storage, a->storage);
    cr_assert_not(ts_is_view(c));
    tt_geom(c, "[4, 4]", "[4, 1]", 0);
    for (int i = 0; i < 16; i++)
        cr_assert_eq(tt_at(c, i), i);
    tt_drop(c);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    c = tt_ok(ts_apply(TS_OP_CLONE, t, NULL));
    tt_geom(c, "[4, 4]", "[1, 4]", 0);   /* dense layouts are preserved */
    cr_assert_eq(tt_at(c, 1), 4, "c[0][1] == a[1][0]");
    tt_drop(c);
    ts_tensor *s = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(4, 1, 0, 4, 2)));
    c = tt_ok(ts_apply(TS_OP_CLONE, s, NULL));
    tt_geom(c, "[4, 2]", "[2, 1]", 0);   /* not dense -> contiguous */
    cr_assert_eq(tt_at(c, 3), 6);
    tt_drop(c);
    ts_tensor *n = tt_ok(ts_apply(TS_OP_NEG_VIEW, a, NULL));
    c = tt_ok(ts_apply(TS_OP_CLONE, n, NULL));
    cr_assert_eq(c->neg, 0, "clone resolves the neg bit");
    cr_assert_eq(tt_at(c, 5), -5);
    tt_drop(c);
    tt_drop(n);
    tt_drop(s);
    tt_drop(t);
    tt_drop(a);
    tt_end();
}

Test(ops, contiguous)
{
    ts_tensor *a = filled(4, 4);
    ts_tensor *c = tt_ok(ts_apply(TS_OP_CONTIGUOUS, a, NULL));
    cr_assert_eq(c, a, "contiguous() of a contiguous tensor is self");
    cr_assert_eq(a->hdr.strong, 2);
    tt_drop(c);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    c = tt_ok(ts_apply(TS_OP_CONTIGUOUS, t, NULL));
    cr_assert_neq(c, t);
    cr_assert_not(ts_is_view(c));
    tt_geom(c, "[4, 4]", "[4, 1]", 0);
    cr_assert_eq(tt_at(c, 1), 4);
    tt_drop(c);
    tt_drop(t);
    ts_tensor *z = tt_empty_dt(TS_C64, ts_cpu(), 1, 3);
    ts_tensor *cj = tt_ok(ts_apply(TS_OP_CONJ, z, NULL));
    c = tt_ok(ts_apply(TS_OP_CONTIGUOUS, cj, NULL));
    cr_assert_eq(c, cj, "a contiguous conj view stays itself (and conj)");
    tt_drop(c);
    tt_drop(cj);
    tt_drop(z);
    tt_drop(a);
    tt_end();
}

Test(ops, to_device_and_dtype)
{
    ts_tensor *a = filled(4, 4);
    ts_args args = {0};
    args.has_device = 1;
    args.device = ts_cpu();
    ts_tensor *r = tt_ok(ts_apply(TS_OP_TO, a, &args));
    cr_assert_eq(r, a, "to(cpu) of a cpu tensor is self");
    tt_drop(r);
    args.has_dtype = 1;
    args.dtype = TS_F32;
    r = tt_ok(ts_apply(TS_OP_TO, a, &args));
    cr_assert_eq(r, a, "nothing changes -> self");
    tt_drop(r);
    args.dtype = TS_F64;
    r = tt_ok(ts_apply(TS_OP_TO, a, &args));
    cr_assert_neq(r, a);
    cr_assert_eq(r->dtype, TS_F64);
    cr_assert_eq(r->storage->nbytes, 128);
    cr_assert_eq(tt_at(r, 7), 7);
    tt_drop(r);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    ts_args tm = {0};
    tm.has_device = 1;
    tm.device = ts_meta();
    ts_tensor *m = tt_ok(ts_apply(TS_OP_TO, t, &tm));
    cr_assert(ts_is_meta(m));
    tt_geom(m, "[4, 4]", "[1, 4]", 0);
    cr_assert_null(m->storage->data);
    ts_args tc = {0};
    tc.has_device = 1;
    tc.device = ts_cpu();
    tt_err(ts_apply(TS_OP_TO, m, &tc), ER_TYPE, "Cannot copy out of meta tensor; no data!");
    tm.has_dtype = 1;
    tm.dtype = TS_F16;
    ts_tensor *m16 = tt_ok(ts_apply(TS_OP_TO, a, &tm));
    cr_assert_eq(m16->dtype, TS_F16);
    tt_drop(m16);
    ts_device cuda;
    ts_device_parse("cuda:1", &cuda);
    tc.device = cuda;
    ts_tensor *g = tt_ok(ts_apply(TS_OP_TO, a, &tc));
    cr_assert_eq(g->device.index, 1);
    cr_assert_eq(tt_at(g, 15), 15, "bytes copied to the modelled device");
    tt_drop(g);
    tt_drop(m);
    tt_drop(t);
    tt_drop(a);
    tt_end();
}

Test(ops, requires_grad_of_results)
{
    int64_t sz[] = {4, 4};
    ts_tensor *g = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_ZEROS, 1));
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_args one = scalar(1);
    ts_tensor *r = tt_ok(ts_apply(TS_OP_ADD, g, &one));
    cr_assert(r->requires_grad && !r->is_leaf, "g + 1");
    tt_drop(r);
    r = tt_ok(op2(TS_OP_ADD, a, g));
    cr_assert(r->requires_grad && !r->is_leaf, "a + g");
    tt_drop(r);
    r = tt_ok(op2(TS_OP_MATMUL, g, a));
    cr_assert(r->requires_grad && !r->is_leaf, "g @ a");
    tt_drop(r);
    r = tt_ok(ts_apply(TS_OP_SUM, g, NULL));
    cr_assert(r->requires_grad && !r->is_leaf, "g.sum()");
    tt_drop(r);
    r = tt_ok(ts_apply(TS_OP_CLONE, g, NULL));
    cr_assert(r->requires_grad && !r->is_leaf, "g.clone()");
    tt_drop(r);
    r = tt_ok(ts_apply(TS_OP_CONTIGUOUS, g, NULL));
    cr_assert(r == g && r->is_leaf, "g.contiguous() is g, a leaf");
    tt_drop(r);
    ts_args to = {0};
    to.has_dtype = 1;
    to.dtype = TS_F64;
    r = tt_ok(ts_apply(TS_OP_TO, g, &to));
    cr_assert(r->requires_grad && !r->is_leaf, "g.to(f64)");
    tt_drop(r);
    to.dtype = TS_I32;
    r = tt_ok(ts_apply(TS_OP_TO, g, &to));
    cr_assert(!r->requires_grad && r->is_leaf, "g.to(i32) cannot require grad");
    tt_drop(r);
    r = tt_ok(op2(TS_OP_ADD, a, a));
    cr_assert(!r->requires_grad && r->is_leaf, "a + a");
    tt_drop(r);
    tt_drop(a);
    tt_drop(g);
    tt_end();
}

static void bshape(int na, const int64_t *a, int nb, const int64_t *b, const char *sz,
                   const char *st)
{
    ts_tensor *x = tt_ok(ts_empty(na, a, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *y = tt_ok(ts_empty(nb, b, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *r = tt_ok(op2(TS_OP_ADD, x, y));
    tt_geom(r, sz, st, 0);
    tt_drop(r);
    r = tt_ok(op2(TS_OP_MUL, x, y));
    tt_geom(r, sz, st, 0);
    tt_drop(r);
    tt_drop(y);
    tt_drop(x);
}

Test(ops, broadcasting)
{
    bshape(2, (int64_t[]){4, 4}, 1, (int64_t[]){4}, "[4, 4]", "[4, 1]");
    bshape(2, (int64_t[]){4, 4}, 2, (int64_t[]){4, 1}, "[4, 4]", "[4, 1]");
    bshape(3, (int64_t[]){2, 1, 4}, 2, (int64_t[]){3, 1}, "[2, 3, 4]", "[12, 4, 1]");
    bshape(2, (int64_t[]){0, 4}, 1, (int64_t[]){1}, "[0, 4]", "[4, 1]");
    bshape(0, NULL, 1, (int64_t[]){3}, "[3]", "[1]");
    ts_tensor *a = tt_empty(2, 4, 4), *b = tt_empty(1, 3);
    tt_err(op2(TS_OP_ADD, a, b), ER_SHAPE,
           "The size of tensor a (4) must match the size of tensor b (3) at non-singleton "
           "dimension 1");
    ts_tensor *c = tt_empty(2, 2, 3), *d = tt_empty(2, 3, 2);
    tt_err(op2(TS_OP_MUL, c, d), ER_SHAPE,
           "The size of tensor a (3) must match the size of tensor b (2)");
    /* outputs follow the inputs' layout: (a.t() + a.t()).stride() == (1, 4) */
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    ts_tensor *r = tt_ok(op2(TS_OP_ADD, t, t));
    tt_geom(r, "[4, 4]", "[1, 4]", 0);
    tt_drop(r);
    r = tt_ok(op2(TS_OP_ADD, t, a));
    tt_geom(r, "[4, 4]", "[1, 4]", 0);
    tt_drop(r);
    r = tt_ok(op2(TS_OP_ADD, a, t));
    tt_geom(r, "[4, 4]", "[4, 1]", 0);
    tt_drop(r);
    tt_drop(t);
    tt_drop(d);
    tt_drop(c);
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

static ts_dtype result_of(ts_dtype x, int nx, ts_dtype y, int ny)
{
    int64_t s[] = {3};
    ts_tensor *a = tt_ok(ts_empty(nx, s, x, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *b = tt_ok(ts_empty(ny, s, y, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *r = tt_ok(op2(TS_OP_ADD, a, b));
    ts_dtype d = r->dtype;
    tt_drop(r);
    tt_drop(b);
    tt_drop(a);
    return d;
}

static ts_dtype scalar_result(ts_dtype x, double v)
{
    int64_t s[] = {3};
    ts_tensor *a = tt_ok(ts_empty(1, s, x, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_args sc = scalar(v);
    ts_tensor *r = tt_ok(ts_apply(TS_OP_MUL, a, &sc));
    ts_dtype d = r->dtype;
    tt_drop(r);
    tt_drop(a);
    return d;
}

Test(ops, promotion)
{
    cr_assert_eq(result_of(TS_I32, 1, TS_I64, 1), TS_I64);
    cr_assert_eq(result_of(TS_F16, 1, TS_BF16, 1), TS_F32);
    cr_assert_eq(result_of(TS_BOOL, 1, TS_U8, 1), TS_U8);
    cr_assert_eq(result_of(TS_I64, 1, TS_F16, 1), TS_F16);
    cr_assert_eq(result_of(TS_F64, 1, TS_C64, 1), TS_C128);
    cr_assert_eq(result_of(TS_BOOL, 1, TS_BOOL, 1), TS_BOOL);
    cr_assert_eq(result_of(TS_F16, 1, TS_F64, 0), TS_F16, "0-dim operands rank lower");
    cr_assert_eq(result_of(TS_I32, 1, TS_F64, 0), TS_F64);
    cr_assert_eq(result_of(TS_F32, 1, TS_C128, 0), TS_C64);
    cr_assert_eq(scalar_result(TS_I32, 1.5), TS_F32, "int tensor * 1.5");
    cr_assert_eq(scalar_result(TS_BOOL, 2), TS_I64, "bool tensor * 2");
    cr_assert_eq(scalar_result(TS_U8, 2), TS_U8);
    cr_assert_eq(scalar_result(TS_F16, 2), TS_F16);
    tt_end();
}

Test(ops, values_and_devices)
{
    int64_t s[] = {2, 2};
    ts_tensor *o = tt_ok(ts_empty(2, s, TS_F32, ts_cpu(), TS_INIT_ONES, 0));
    ts_tensor *r = tt_ok(op2(TS_OP_ADD, o, o));
    for (int i = 0; i < 4; i++)
        cr_assert_eq(tt_at(r, i), 2);
    tt_drop(r);
    ts_args three = scalar(3);
    ts_tensor *f = filled(2, 2);
    r = tt_ok(ts_apply(TS_OP_MUL, f, &three));
    cr_assert_eq(tt_at(r, 3), 9);
    tt_drop(r);
    /* complex: (1+1i) * (1+1i) = 2i */
    ts_tensor *c = tt_ok(ts_empty(1, (int64_t[]){1}, TS_C64, ts_cpu(), TS_INIT_ONES, 0));
    double v[2] = {1, 1};
    ts_store(TS_C64, ts_data_ptr(c), v);
    r = tt_ok(op2(TS_OP_MUL, c, c));
    ts_load(TS_C64, ts_data_ptr(r), 0, 0, v);
    cr_assert(v[0] == 0 && v[1] == 2, "(1+i)^2 = %g%+gi", v[0], v[1]);
    tt_drop(r);
    /* devices: cpu with meta is an error; a 0-dim cpu tensor goes anywhere */
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 3), *x = tt_empty(1, 3), *z = tt_empty(0);
    tt_err(op2(TS_OP_ADD, x, m), ER_TYPE,
           "Expected all tensors to be on the same device, but found at least two devices, "
           "meta and cpu!");
    r = tt_ok(op2(TS_OP_ADD, m, z));
    cr_assert(ts_is_meta(r));
    tt_geom(r, "[3]", "[1]", 0);
    tt_drop(r);
    r = tt_ok(op2(TS_OP_ADD, m, m));
    cr_assert(ts_is_meta(r) && r->storage->data == NULL, "meta results have no bytes");
    tt_drop(r);
    ts_args none = {0};
    tt_err(ts_apply(TS_OP_ADD, x, &none), ER_TYPE, "needs a tensor or a number");
    tt_drop(z);
    tt_drop(x);
    tt_drop(m);
    tt_drop(c);
    tt_drop(f);
    tt_drop(o);
    tt_end();
}

static void mm_shape(int na, const int64_t *a, int nb, const int64_t *b, const char *sz)
{
    ts_tensor *x = tt_ok(ts_empty(na, a, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *y = tt_ok(ts_empty(nb, b, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *r = tt_ok(op2(TS_OP_MATMUL, x, y));
    tt_geom(r, sz, NULL, 0);
    cr_assert(ts_shape_is_contiguous(r->ndim, r->sizes, r->strides));
    tt_drop(r);
    tt_drop(y);
    tt_drop(x);
}

static void mm_err(int na, const int64_t *a, int nb, const int64_t *b, er_kind k,
                   const char *msg)
{
    ts_tensor *x = tt_ok(ts_empty(na, a, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *y = tt_ok(ts_empty(nb, b, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    tt_err(op2(TS_OP_MATMUL, x, y), k, msg);
    tt_drop(y);
    tt_drop(x);
}

Test(ops, matmul_shapes)
{
    mm_shape(1, (int64_t[]){3}, 1, (int64_t[]){3}, "[]");
    mm_shape(2, (int64_t[]){2, 3}, 1, (int64_t[]){3}, "[2]");
    mm_shape(1, (int64_t[]){3}, 2, (int64_t[]){3, 2}, "[2]");
    mm_shape(2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 4}, "[2, 4]");
    mm_shape(3, (int64_t[]){5, 2, 3}, 2, (int64_t[]){3, 4}, "[5, 2, 4]");
    mm_shape(3, (int64_t[]){5, 2, 3}, 1, (int64_t[]){3}, "[5, 2]");
    mm_shape(1, (int64_t[]){3}, 3, (int64_t[]){5, 3, 2}, "[5, 2]");
    mm_shape(4, (int64_t[]){5, 1, 2, 3}, 3, (int64_t[]){4, 3, 6}, "[5, 4, 2, 6]");
    mm_shape(2, (int64_t[]){2, 3}, 3, (int64_t[]){5, 3, 4}, "[5, 2, 4]");
    mm_err(1, (int64_t[]){3}, 1, (int64_t[]){4}, ER_SHAPE,
           "inconsistent tensor size, expected tensor [3] and src [4] to have the same number "
           "of elements, but got 3 and 4 elements respectively");
    mm_err(2, (int64_t[]){2, 3}, 2, (int64_t[]){4, 4}, ER_SHAPE,
           "shapes [2, 3] and [4, 4] cannot be multiplied");
    mm_err(4, (int64_t[]){5, 2, 2, 3}, 3, (int64_t[]){4, 3, 6}, ER_SHAPE,
           "The size of tensor a (2) must match the size of tensor b (4) at non-singleton "
           "dimension 1");
    mm_err(0, NULL, 1, (int64_t[]){3}, ER_SHAPE,
           "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
    ts_tensor *x = tt_empty(1, 3), *y = tt_empty_dt(TS_F64, ts_cpu(), 1, 3);
    tt_err(op2(TS_OP_MATMUL, x, y), ER_TYPE, "same dtype, but found f32 and f64");
    ts_args none = {0};
    tt_err(ts_apply(TS_OP_MATMUL, x, &none), ER_TYPE, "needs a tensor");
    tt_drop(y);
    tt_drop(x);
    tt_end();
}

Test(ops, matmul_values)
{
    ts_tensor *a = tt_empty(2, 2, 2), *b = tt_empty(2, 2, 2);
    double av[] = {1, 2, 3, 4}, bv[] = {5, 6, 7, 8}, want[] = {19, 22, 43, 50};
    for (int i = 0; i < 4; i++) {
        tt_set(a, i, av[i]);
        tt_set(b, i, bv[i]);
    }
    ts_tensor *r = tt_ok(op2(TS_OP_MATMUL, a, b));
    for (int i = 0; i < 4; i++)
        cr_assert_eq(tt_at(r, i), want[i], "r[%d] = %g", i, tt_at(r, i));
    tt_drop(r);
    /* transposed operand: a @ b.t() = [[17, 23], [39, 53]] */
    ts_tensor *bt = tt_ok(ts_apply(TS_OP_T, b, NULL));
    r = tt_ok(op2(TS_OP_MATMUL, a, bt));
    double want2[] = {17, 23, 39, 53};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(tt_at(r, i), want2[i], "r[%d] = %g", i, tt_at(r, i));
    tt_drop(r);
    /* 1-D dot and batched broadcast: [2,2,2] @ [2] */
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SELECT, b, tt_args(2, 0, 0)));   /* [5, 6] */
    r = tt_ok(op2(TS_OP_MATMUL, v, v));
    cr_assert_eq(tt_at(r, 0), 61);
    tt_drop(r);
    ts_tensor *e = tt_ok(ts_apply(TS_OP_EXPAND, a, tt_args(3, 2, 2, 2)));
    r = tt_ok(op2(TS_OP_MATMUL, e, v));
    tt_geom(r, "[2, 2]", "[2, 1]", 0);
    cr_assert_eq(tt_at(r, 2), 17, "batch 1 row 0: 1*5 + 2*6");
    cr_assert_eq(tt_at(r, 3), 39);
    tt_drop(r);
    tt_drop(e);
    tt_drop(v);
    tt_drop(bt);
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

Test(ops, sum)
{
    int64_t s[] = {3, 4};
    ts_tensor *o = tt_ok(ts_empty(2, s, TS_F32, ts_cpu(), TS_INIT_ONES, 0));
    ts_tensor *r = tt_ok(ts_apply(TS_OP_SUM, o, NULL));
    tt_geom(r, "[]", "[]", 0);
    cr_assert_eq(tt_at(r, 0), 12);
    tt_drop(r);
    ts_args d = {0};
    d.has_dim = 1;
    d.dim = 1;
    r = tt_ok(ts_apply(TS_OP_SUM, o, &d));
    tt_geom(r, "[3]", "[1]", 0);
    cr_assert_eq(tt_at(r, 2), 4);
    tt_drop(r);
    d.dim = 0;
    r = tt_ok(ts_apply(TS_OP_SUM, o, &d));
    tt_geom(r, "[4]", "[1]", 0);
    cr_assert_eq(tt_at(r, 0), 3);
    tt_drop(r);
    r = tt_ok(ts_apply(TS_OP_SUM, o, tt_args(1, -1)));
    tt_geom(r, "[3]", "[1]", 0);
    tt_drop(r);
    d.dim = 2;
    tt_err(ts_apply(TS_OP_SUM, o, &d), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, o, NULL));
    d.dim = 0;
    r = tt_ok(ts_apply(TS_OP_SUM, t, &d));
    tt_geom(r, "[3]", "[1]", 0);
    cr_assert_eq(tt_at(r, 0), 4);
    tt_drop(r);
    tt_drop(t);
    /* dtypes: integral and bool sums are i64, floats keep theirs */
    ts_dtype in[] = {TS_I32, TS_BOOL, TS_U8, TS_F16, TS_C64}, out[] = {TS_I64, TS_I64, TS_I64,
                                                                       TS_F16, TS_C64};
    for (int i = 0; i < 5; i++) {
        ts_tensor *x = tt_ok(ts_empty(1, (int64_t[]){3}, in[i], ts_cpu(), TS_INIT_ONES, 0));
        r = tt_ok(ts_apply(TS_OP_SUM, x, NULL));
        cr_assert_eq(r->dtype, out[i], "sum of %s", ts_dtype_name(in[i]));
        cr_assert_eq(tt_at(r, 0), 3);
        tt_drop(r);
        tt_drop(x);
    }
    ts_tensor *z = tt_empty(0);
    d.dim = -1;
    r = tt_ok(ts_apply(TS_OP_SUM, z, &d));
    tt_geom(r, "[]", "[]", 0);
    tt_drop(r);
    d.dim = 1;
    tt_err(ts_apply(TS_OP_SUM, z, &d), ER_SHAPE, "range of [-1, 0], but got 1");
    tt_drop(z);
    ts_tensor *e = tt_empty(2, 2, 0);
    r = tt_ok(ts_apply(TS_OP_SUM, e, tt_args(1, 1)));
    tt_geom(r, "[2]", "[1]", 0);
    cr_assert_eq(tt_at(r, 1), 0);
    tt_drop(r);
    tt_drop(e);
    tt_drop(o);
    tt_end();
}

Test(ops, in_place_returns_self_and_writes)
{
    ts_tensor *a = filled(4, 4);
    ts_args one = scalar(1);
    ts_tensor *r = tt_ok(ts_apply(TS_OP_ADD_, a, &one));
    cr_assert_eq(r, a, "add_ returns self");
    cr_assert_eq(a->hdr.strong, 2, "with a new reference");
    tt_drop(r);
    cr_assert_eq(tt_at(a, 5), 6);
    ts_tensor *row = tt_ok(ts_empty(1, (int64_t[]){4}, TS_F32, ts_cpu(), TS_INIT_ONES, 0));
    r = tt_ok(op2(TS_OP_MUL_, a, row));
    tt_drop(r);
    cr_assert_eq(tt_at(a, 5), 6, "times ones, broadcast over rows");
    ts_tensor *d = tt_empty_dt(TS_F64, ts_cpu(), 2, 4, 4);
    r = tt_ok(op2(TS_OP_MUL_, a, d));
    cr_assert_eq(r->dtype, TS_F32, "self keeps its dtype");
    cr_assert_eq(tt_at(a, 5), 0);
    tt_drop(r);
    tt_drop(d);
    /* zero_ on a slice writes exactly the viewed elements */
    ts_tensor *b = filled(4, 4);
    ts_tensor *s = tt_ok(ts_apply(TS_OP_SLICE, b, tt_args(3, 1, 1, 3)));
    r = tt_ok(ts_apply(TS_OP_ZERO_, s, NULL));
    cr_assert_eq(r, s);
    tt_drop(r);
    for (int i = 0; i < 16; i++) {
        int inside = i % 4 == 1 || i % 4 == 2;
        cr_assert_eq(tt_at(b, i), inside ? 0 : i, "b[%d] = %g", i, tt_at(b, i));
    }
    /* a neg view writes the resolved value back (torch: -0 stored) */
    ts_tensor *n = tt_ok(ts_apply(TS_OP_NEG_VIEW, b, NULL));
    r = tt_ok(ts_apply(TS_OP_ADD_, n, &one));
    tt_drop(r);
    cr_assert_eq(tt_at(n, 4), -3, "n[4] was -4, +1");
    cr_assert_eq(tt_at(b, 4), 3, "stored through the neg bit");
    /* zero_ on an expanded tensor is allowed, add_ is not */
    ts_tensor *c = tt_empty(2, 4, 1);
    ts_tensor *e = tt_ok(ts_apply(TS_OP_EXPAND, c, tt_args(2, 4, 4)));
    r = tt_ok(ts_apply(TS_OP_ZERO_, e, NULL));
    tt_drop(r);
    tt_err(ts_apply(TS_OP_ADD_, e, &one), ER_SHAPE,
           "unsupported operation: more than one element of the written-to tensor refers to "
           "a single memory location");
    tt_drop(e);
    tt_drop(c);
    tt_drop(n);
    tt_drop(s);
    tt_drop(b);
    tt_drop(row);
    tt_drop(a);
    tt_end();
}

Test(ops, in_place_errors)
{
    ts_args one = scalar(1), half = scalar(1.5);
    ts_tensor *a = tt_empty(2, 4, 4), *five = tt_empty(1, 5);
    tt_err(op2(TS_OP_ADD_, a, five), ER_SHAPE,
           "The size of tensor a (4) must match the size of tensor b (5) at non-singleton "
           "dimension 1");
    ts_tensor *c = tt_empty(2, 4, 1);
    tt_err(op2(TS_OP_ADD_, c, a), ER_SHAPE,
           "output with shape [4, 1] doesn't match the broadcast shape [4, 4]");
    ts_tensor *i = tt_empty_dt(TS_I32, ts_cpu(), 1, 3), *f = tt_empty(1, 3);
    tt_err(op2(TS_OP_ADD_, i, f), ER_TYPE,
           "result type f32 can't be cast to the desired output type i32");
    tt_err(ts_apply(TS_OP_ADD_, i, &half), ER_TYPE, "result type f32 can't be cast");
    ts_tensor *r = tt_ok(ts_apply(TS_OP_ADD_, i, &one));
    tt_drop(r);
    int64_t sz[] = {4, 4};
    ts_tensor *g = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_ZEROS, 1));
    tt_err(ts_apply(TS_OP_ADD_, g, &one), ER_TYPE,
           "a leaf Variable that requires grad is being used in an in-place operation.");
    tt_err(ts_apply(TS_OP_ZERO_, g, NULL), ER_TYPE, "a leaf Variable that requires grad");
    ts_tensor *gt = tt_ok(ts_apply(TS_OP_T, g, NULL));
    tt_err(ts_apply(TS_OP_ADD_, gt, &one), ER_TYPE,
           "a view of a leaf Variable that requires grad is being used in an in-place "
           "operation.");
    /* a plain tensor taking a grad operand in place becomes a non-leaf */
    r = tt_ok(op2(TS_OP_ADD_, a, g));
    cr_assert(a->requires_grad && !a->is_leaf);
    tt_drop(r);
    /* meta: checks run, nothing is written */
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 3);
    r = tt_ok(ts_apply(TS_OP_ADD_, m, &one));
    cr_assert_eq(r, m);
    tt_drop(r);
    tt_err(op2(TS_OP_ADD_, f, m), ER_TYPE, "same device");
    tt_drop(m);
    tt_drop(gt);
    tt_drop(g);
    tt_drop(f);
    tt_drop(i);
    tt_drop(c);
    tt_drop(five);
    tt_drop(a);
    tt_end();
}

Test(ops, zero_writes_real_bytes)
{
    int64_t sz[] = {8};
    ts_tensor *r = tt_ok(ts_empty(1, sz, TS_F64, ts_cpu(), TS_INIT_RAND, 0));
    ts_tensor *z = tt_ok(ts_apply(TS_OP_ZERO_, r, NULL));
    const unsigned char *p = r->storage->data;
    for (uint64_t i = 0; i < r->storage->nbytes; i++)
        cr_assert_eq(p[i], 0, "byte %llu", (unsigned long long)i);
    tt_drop(z);
    tt_drop(r);
    tt_end();
}

Test(ops, sparse_and_fake_operands_are_refused)
{
    ts_tensor *a = tt_empty(2, 3, 3);
    int64_t sz[] = {3, 3};
    ts_tensor *s = tt_ok(ts_sparse_coo(2, sz, 1, 2, TS_F32, ts_cpu(), 1));
    tt_err(op2(TS_OP_ADD, a, s), ER_TYPE, "sparse");
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 2, 3, 3);
    ts_tensor *f = tt_ok(ts_fake_new(m, NULL, ts_cpu(), 0));
    tt_err(op2(TS_OP_MUL, a, f), ER_TYPE, "fake");
    tt_err(ts_apply(TS_OP_COALESCE, a, NULL), ER_TYPE, "expects a sparse tensor");
    tt_err(ts_apply(TS_OP_INDICES, a, NULL), ER_TYPE, "expects a sparse tensor");
    ts_tensor *d = tt_ok(ts_apply(TS_OP_TO_DENSE, a, NULL));
    cr_assert_eq(d, a, "to_dense() of a dense tensor is self");
    tt_drop(d);
    tt_err(ts_apply(TS_OP_CLONE, NULL, NULL), ER_TYPE, "needs a tensor");
    tt_drop(f);
    tt_drop(m);
    tt_drop(s);
    tt_drop(a);
    tt_end();
}
