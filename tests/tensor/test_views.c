/* test_views.c - view ops: geometry, base, storage sharing, flags, errors.
 * Every expected size/stride/offset/message was observed with PyTorch 1.13
 * (torch.empty(4, 4) etc.) and written in by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/gc.h"
#include "core/obj.h"
#include "tensor/ts_internal.h"
#include "tensor/tt.h"

TestSuite(views, .init = tt_begin);

/* Apply op to a with args, check it is a view of base `base` sharing a's
 * storage, and its geometry. Returns the view (caller drops). */
static ts_tensor *check_view(ts_op op, ts_tensor *a, const ts_args *args, ts_tensor *base,
                             const char *sz, const char *st, int64_t off)
{
    ts_tensor *v = tt_ok(ts_apply(op, a, args));
    cr_assert_eq(v->base, base, "%s: base", ts_op_name(op));
    cr_assert(ts_is_view(v), "%s: is_view", ts_op_name(op));
    cr_assert_eq(v->storage, a->storage, "%s: shares the storage", ts_op_name(op));
    tt_geom(v, sz, st, off);
    return v;
}

#define VIEW_CASE(op, args, sz, st, off) \
    tt_drop(check_view((op), a, (args), a, (sz), (st), (off)))

Test(views, view_and_reshape)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_VIEW, tt_args(1, 16), "[16]", "[1]", 0);
    VIEW_CASE(TS_OP_VIEW, tt_args(2, 2, 8), "[2, 8]", "[8, 1]", 0);
    VIEW_CASE(TS_OP_VIEW, tt_args(2, -1, 2), "[8, 2]", "[2, 1]", 0);
    VIEW_CASE(TS_OP_VIEW, tt_args(3, 2, -1, 2), "[2, 4, 2]", "[8, 2, 1]", 0);
    VIEW_CASE(TS_OP_RESHAPE, tt_args(1, -1), "[16]", "[1]", 0);
    tt_err(ts_apply(TS_OP_VIEW, a, tt_args(2, 3, 5)), ER_SHAPE,
           "shape '[3, 5]' is invalid for input of size 16");
    tt_err(ts_apply(TS_OP_RESHAPE, a, tt_args(2, 3, 5)), ER_SHAPE,
           "shape '[3, 5]' is invalid for input of size 16");
    tt_err(ts_apply(TS_OP_VIEW, a, tt_args(2, -1, -1)), ER_SHAPE,
           "only one dimension can be inferred");

    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    tt_err(ts_apply(TS_OP_VIEW, t, tt_args(1, 16)), ER_SHAPE,
           "view size is not compatible with input tensor's size and stride");
    /* a.t().view(4, 2, 2): a view of a view has the original base */
    tt_drop(check_view(TS_OP_VIEW, t, tt_args(3, 4, 2, 2), a, "[4, 2, 2]", "[1, 8, 4]", 0));
    /* a.t().reshape(2, 8) copies: not a view, own storage, contiguous */
    ts_tensor *r = tt_ok(ts_apply(TS_OP_RESHAPE, t, tt_args(2, 2, 8)));
    cr_assert_not(ts_is_view(r), "reshape copy is not a view");
    cr_assert_neq(r->storage, a->storage, "reshape copy has its own storage");
    tt_geom(r, "[2, 8]", "[8, 1]", 0);
    cr_assert_not_null(r->storage->data, "a real copy has real bytes");
    /* a.t().reshape(4, 4) keeps the view */
    tt_drop(check_view(TS_OP_RESHAPE, t, tt_args(2, 4, 4), a, "[4, 4]", "[1, 4]", 0));
    tt_drop(r);
    tt_drop(t);

    /* a[1:3].reshape(8): base a, offset 4 */
    ts_tensor *s = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 3)));
    tt_drop(check_view(TS_OP_RESHAPE, s, tt_args(1, 8), a, "[8]", "[1]", 4));
    tt_drop(s);
    /* a[:, 1:3].reshape(4, 2) views, .reshape(8) copies */
    s = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 1, 1, 3)));
    tt_drop(check_view(TS_OP_RESHAPE, s, tt_args(2, 4, 2), a, "[4, 2]", "[4, 1]", 1));
    r = tt_ok(ts_apply(TS_OP_RESHAPE, s, tt_args(1, 8)));
    cr_assert_not(ts_is_view(r));
    tt_geom(r, "[8]", "[1]", 0);
    tt_drop(r);
    tt_drop(s);
    tt_drop(a);
    tt_end();
}

Test(views, reshape_copy_keeps_values)
{
    ts_tensor *a = tt_empty(2, 2, 3);
    for (int i = 0; i < 6; i++)
        tt_set(a, i, i);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));   /* [3, 2] */
    ts_tensor *r = tt_ok(ts_apply(TS_OP_RESHAPE, t, tt_args(1, 6)));
    double want[] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(tt_at(r, i), want[i], "element %d: %g", i, tt_at(r, i));
    tt_drop(r);
    tt_drop(t);
    tt_drop(a);
    tt_end();
}

Test(views, view_of_zero_dim_and_empty)
{
    ts_tensor *z = tt_empty(0);
    tt_drop(check_view(TS_OP_VIEW, z, tt_args(1, 1), z, "[1]", "[1]", 0));
    tt_drop(check_view(TS_OP_VIEW, z, tt_args(1, -1), z, "[1]", "[1]", 0));
    tt_drop(check_view(TS_OP_VIEW, z, tt_args(3, 1, 1, 1), z, "[1, 1, 1]", "[1, 1, 1]", 0));
    ts_tensor *two = tt_empty(1, 2);
    tt_err(ts_apply(TS_OP_VIEW, two, tt_args(0)), ER_SHAPE,
           "shape '[]' is invalid for input of size 2");
    ts_tensor *e = tt_empty(2, 0, 3);
    tt_err(ts_apply(TS_OP_VIEW, e, tt_args(2, 0, -1)), ER_SHAPE,
           "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
           "dimension size -1 can be any value and is ambiguous");
    tt_drop(e);
    tt_drop(two);
    tt_drop(z);
    tt_end();
}

Test(views, transpose_and_t)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_T, NULL, "[4, 4]", "[1, 4]", 0);
    VIEW_CASE(TS_OP_TRANSPOSE, tt_args(2, 0, 1), "[4, 4]", "[1, 4]", 0);
    VIEW_CASE(TS_OP_TRANSPOSE, tt_args(2, -1, -2), "[4, 4]", "[1, 4]", 0);
    VIEW_CASE(TS_OP_TRANSPOSE, tt_args(2, 1, 1), "[4, 4]", "[4, 1]", 0);
    tt_err(ts_apply(TS_OP_TRANSPOSE, a, tt_args(2, 0, 2)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    ts_tensor *b = tt_empty(3, 2, 3, 4);
    tt_err(ts_apply(TS_OP_T, b, NULL), ER_SHAPE,
           "t() expects a tensor with <= 2 dimensions, but self is 3D");
    ts_tensor *c = tt_empty(1, 3), *z = tt_empty(0);
    tt_drop(check_view(TS_OP_T, c, NULL, c, "[3]", "[1]", 0));
    tt_drop(check_view(TS_OP_T, z, NULL, z, "[]", "[]", 0));
    tt_drop(z);
    tt_drop(c);
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

Test(views, slice)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, 1, 3), "[2, 4]", "[4, 1]", 4);      /* a[1:3] */
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 1, 1, 3), "[4, 2]", "[4, 1]", 1);      /* a[:,1:3] */
    VIEW_CASE(TS_OP_SLICE, tt_args(4, 0, 0, 4, 2), "[2, 4]", "[8, 1]", 0);   /* a[::2] */
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, -3, -1), "[2, 4]", "[4, 1]", 4);    /* a[-3:-1] */
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, -100, 100), "[4, 4]", "[4, 1]", 0);
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, 3, 1), "[0, 4]", "[4, 1]", 12);     /* a[3:1] */
    VIEW_CASE(TS_OP_SLICE, tt_args(4, 1, 0, 4, 3), "[4, 2]", "[4, 3]", 0);   /* a[:, ::3] */
    VIEW_CASE(TS_OP_SLICE, tt_args(4, 0, 2, 100, 3), "[1, 4]", "[12, 1]", 8);
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, 5, 100), "[0, 4]", "[4, 1]", 16);
    VIEW_CASE(TS_OP_SLICE, tt_args(3, 0, -100, -50), "[0, 4]", "[4, 1]", 0);
    VIEW_CASE(TS_OP_SLICE, tt_args(4, 1, 1, INT64_C(1) << 62, INT64_C(1) << 62), "[4, 1]",
              "[4, 4611686018427387904]", 1);
    tt_err(ts_apply(TS_OP_SLICE, a, tt_args(4, 0, 0, 2, 0)), ER_SHAPE,
           "slice step must be positive");
    tt_err(ts_apply(TS_OP_SLICE, a, tt_args(4, 0, 0, 2, -1)), ER_SHAPE,
           "slice step must be positive");
    tt_err(ts_apply(TS_OP_SLICE, a, tt_args(3, 2, 0, 2)), ER_SHAPE,
           "expected to be in range of [-2, 1], but got 2");
    ts_tensor *w = tt_empty(2, 4, 8);
    tt_err(ts_apply(TS_OP_SLICE, w, tt_args(4, 0, 0, 4, INT64_MAX)), ER_SHAPE, "overflow");
    tt_drop(w);
    ts_tensor *z = tt_empty(0);
    tt_err(ts_apply(TS_OP_SLICE, z, tt_args(3, 0, 0, 2)), ER_SHAPE,
           "slice() cannot be applied to a 0-dim tensor.");
    tt_drop(z);
    tt_err(ts_apply(TS_OP_SLICE, a, tt_args(2, 0, 1)), ER_TYPE,
           "slice() takes 3 to 4 integer arguments (2 given)");
    tt_drop(a);
    tt_end();
}

Test(views, select_and_narrow)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_SELECT, tt_args(2, 0, 1), "[4]", "[1]", 4);
    VIEW_CASE(TS_OP_SELECT, tt_args(2, 1, -1), "[4]", "[4]", 3);
    tt_err(ts_apply(TS_OP_SELECT, a, tt_args(2, 0, 4)), ER_SHAPE,
           "select(): index 4 out of range for tensor of size [4, 4] at dimension 0");
    tt_err(ts_apply(TS_OP_SELECT, a, tt_args(2, 0, -5)), ER_SHAPE,
           "select(): index -5 out of range for tensor of size [4, 4] at dimension 0");
    tt_err(ts_apply(TS_OP_SELECT, a, tt_args(2, 2, 0)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    VIEW_CASE(TS_OP_NARROW, tt_args(3, 0, 1, 2), "[2, 4]", "[4, 1]", 4);
    VIEW_CASE(TS_OP_NARROW, tt_args(3, 0, -1, 1), "[1, 4]", "[4, 1]", 12);
    VIEW_CASE(TS_OP_NARROW, tt_args(3, 0, 4, 0), "[0, 4]", "[4, 1]", 16);
    tt_err(ts_apply(TS_OP_NARROW, a, tt_args(3, 0, 3, 2)), ER_SHAPE,
           "start (3) + length (2) exceeds dimension size (4).");
    tt_err(ts_apply(TS_OP_NARROW, a, tt_args(3, 0, 1, -1)), ER_SHAPE,
           "start (1) + length (-1) exceeds dimension size (4).");
    tt_err(ts_apply(TS_OP_NARROW, a, tt_args(3, 0, 5, 0)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-4, 3], but got 5)");
    tt_err(ts_apply(TS_OP_NARROW, a, tt_args(3, 0, -5, 1)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-4, 3], but got -5)");
    ts_tensor *z = tt_empty(0);
    tt_err(ts_apply(TS_OP_SELECT, z, tt_args(2, 0, 0)), ER_SHAPE,
           "select() cannot be applied to a 0-dim tensor.");
    tt_err(ts_apply(TS_OP_NARROW, z, tt_args(3, 0, 0, 1)), ER_SHAPE,
           "narrow() cannot be applied to a 0-dim tensor.");
    tt_drop(z);
    tt_drop(a);
    tt_end();
}

Test(views, unsqueeze_and_squeeze)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_UNSQUEEZE, tt_args(1, 0), "[1, 4, 4]", "[16, 4, 1]", 0);
    VIEW_CASE(TS_OP_UNSQUEEZE, tt_args(1, 2), "[4, 4, 1]", "[4, 1, 1]", 0);
    VIEW_CASE(TS_OP_UNSQUEEZE, tt_args(1, -1), "[4, 4, 1]", "[4, 1, 1]", 0);
    tt_err(ts_apply(TS_OP_UNSQUEEZE, a, tt_args(1, 3)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
    tt_err(ts_apply(TS_OP_UNSQUEEZE, a, tt_args(1, -4)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-3, 2], but got -4)");
    VIEW_CASE(TS_OP_SQUEEZE, tt_args(1, 0), "[4, 4]", "[4, 1]", 0);
    tt_err(ts_apply(TS_OP_SQUEEZE, a, tt_args(1, 5)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-2, 1], but got 5)");
    ts_tensor *u = tt_ok(ts_apply(TS_OP_VIEW, a, tt_args(4, 1, 4, 1, 4)));
    tt_drop(check_view(TS_OP_SQUEEZE, u, tt_args(0), a, "[4, 4]", "[4, 1]", 0));
    tt_drop(check_view(TS_OP_SQUEEZE, u, tt_args(1, 2), a, "[1, 4, 4]", "[16, 4, 1]", 0));
    tt_drop(check_view(TS_OP_SQUEEZE, u, tt_args(1, -2), a, "[1, 4, 4]", "[16, 4, 1]", 0));
    tt_drop(u);
    ts_tensor *z = tt_empty(0);
    tt_drop(check_view(TS_OP_SQUEEZE, z, tt_args(0), z, "[]", "[]", 0));
    tt_drop(check_view(TS_OP_SQUEEZE, z, tt_args(1, -1), z, "[]", "[]", 0));
    tt_err(ts_apply(TS_OP_SQUEEZE, z, tt_args(1, 1)), ER_SHAPE,
           "expected to be in range of [-1, 0], but got 1");
    tt_drop(check_view(TS_OP_UNSQUEEZE, z, tt_args(1, -1), z, "[1]", "[1]", 0));
    tt_drop(z);
    /* at the dimension limit */
    ts_tensor *m = tt_ok(ts_apply(TS_OP_VIEW, a, tt_args(16, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                         1, 1, 1, 4, 4)));
    tt_err(ts_apply(TS_OP_UNSQUEEZE, m, tt_args(1, 0)), ER_SHAPE, "too many dimensions: 17");
    tt_drop(m);
    tt_drop(a);
    tt_end();
}

Test(views, expand)
{
    ts_tensor *a = tt_empty(2, 4, 1);
    VIEW_CASE(TS_OP_EXPAND, tt_args(2, 4, 3), "[4, 3]", "[1, 0]", 0);
    VIEW_CASE(TS_OP_EXPAND, tt_args(2, -1, 3), "[4, 3]", "[1, 0]", 0);
    VIEW_CASE(TS_OP_EXPAND, tt_args(3, 2, 4, 3), "[2, 4, 3]", "[0, 1, 0]", 0);
    VIEW_CASE(TS_OP_EXPAND, tt_args(2, 4, 0), "[4, 0]", "[1, 0]", 0);
    VIEW_CASE(TS_OP_EXPAND, tt_args(2, 4, 1), "[4, 1]", "[1, 1]", 0);
    tt_err(ts_apply(TS_OP_EXPAND, a, tt_args(3, 4, 3, 1)), ER_SHAPE,
           "The expanded size of the tensor (3) must match the existing size (4) at "
           "non-singleton dimension 1.  Target sizes: [4, 3, 1].  Tensor sizes: [4, 1]");
    tt_err(ts_apply(TS_OP_EXPAND, a, tt_args(3, -1, -1, 3)), ER_SHAPE,
           "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
           "dimension 0");
    ts_tensor *z = tt_empty(0);
    tt_drop(check_view(TS_OP_EXPAND, z, tt_args(1, 3), z, "[3]", "[0]", 0));
    tt_drop(check_view(TS_OP_EXPAND, z, tt_args(0), z, "[]", "[]", 0));
    tt_drop(z);
    ts_tensor *b = tt_empty(2, 4, 4);
    tt_drop(check_view(TS_OP_EXPAND, b, tt_args(3, 2, -1, 4), b, "[2, 4, 4]", "[0, 4, 1]", 0));
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

static ts_args strided(int n, const int64_t *sz, const int64_t *st, int64_t off)
{
    ts_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.n2 = n;
    ts_copy_dims(a.v, sz, n);
    ts_copy_dims(a.v2, st, n);
    a.offset = off;
    return a;
}

Test(views, as_strided)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_args s = strided(2, (int64_t[]){2, 2}, (int64_t[]){1, 2}, 1);
    VIEW_CASE(TS_OP_AS_STRIDED, &s, "[2, 2]", "[1, 2]", 1);
    s = strided(1, (int64_t[]){0}, (int64_t[]){1}, 17);
    VIEW_CASE(TS_OP_AS_STRIDED, &s, "[0]", "[1]", 17);
    s = strided(0, NULL, NULL, 15);
    VIEW_CASE(TS_OP_AS_STRIDED, &s, "[]", "[]", 15);
    s = strided(2, (int64_t[]){4, 4}, (int64_t[]){4, 1}, 1);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE,
           "setStorage: sizes [4, 4], strides [4, 1], storage offset 1, and itemsize 4 "
           "requiring a storage size of 68 are out of bounds for storage of size 64");
    s = strided(0, NULL, NULL, 16);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE,
           "requiring a storage size of 68 are out of bounds for storage of size 64");
    s = strided(2, (int64_t[]){2, 2}, (int64_t[]){-1, 2}, 1);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE,
           "as_strided: Negative strides are not supported at the moment, got strides: "
           "[-1, 2]");
    s = strided(1, (int64_t[]){2}, (int64_t[]){1}, -1);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE, "invalid storage offset -1");
    s = strided(1, (int64_t[]){-1}, (int64_t[]){1}, 0);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE, "negative dimension -1");
    s = strided(2, (int64_t[]){2, 2}, (int64_t[]){1, 1}, 0);
    s.n2 = 1;
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE, "mismatch in length of strides and shape");
    s = strided(1, (int64_t[]){INT64_C(1) << 62}, (int64_t[]){INT64_C(1) << 62}, 0);
    tt_err(ts_apply(TS_OP_AS_STRIDED, a, &s), ER_SHAPE, "overflowed");
    /* offsets are absolute: a view of a[1:] keeps base a */
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 4)));
    s = strided(1, (int64_t[]){2}, (int64_t[]){1}, 1);
    tt_drop(check_view(TS_OP_AS_STRIDED, v, &s, a, "[2]", "[1]", 1));
    tt_drop(v);
    /* meta tensors are bounds-checked against their meta storage too */
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 2, 4, 4);
    s = strided(2, (int64_t[]){4, 4}, (int64_t[]){4, 1}, 1);
    tt_err(ts_apply(TS_OP_AS_STRIDED, m, &s), ER_SHAPE, "out of bounds for storage of size 64");
    tt_drop(m);
    tt_drop(a);
    tt_end();
}

Test(views, diagonal)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    VIEW_CASE(TS_OP_DIAGONAL, tt_args(0), "[4]", "[5]", 0);
    VIEW_CASE(TS_OP_DIAGONAL, tt_args(1, 1), "[3]", "[5]", 1);
    VIEW_CASE(TS_OP_DIAGONAL, tt_args(1, -1), "[3]", "[5]", 4);
    VIEW_CASE(TS_OP_DIAGONAL, tt_args(1, 5), "[0]", "[5]", 0);
    ts_tensor *b = tt_empty(3, 2, 3, 4);
    tt_drop(check_view(TS_OP_DIAGONAL, b, tt_args(3, 0, 1, 2), b, "[2, 3]", "[12, 5]", 0));
    tt_drop(check_view(TS_OP_DIAGONAL, b, tt_args(3, 1, 0, 2), b, "[3, 2]", "[4, 13]", 1));
    tt_err(ts_apply(TS_OP_DIAGONAL, b, tt_args(3, 0, 1, 1)), ER_SHAPE,
           "diagonal dimensions cannot be identical 1, 1");
    ts_tensor *c = tt_empty(1, 3);
    tt_err(ts_apply(TS_OP_DIAGONAL, c, tt_args(0)), ER_SHAPE,
           "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    tt_drop(c);
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

Test(views, detach_is_not_a_view)
{
    int64_t sz[] = {4, 4};
    ts_tensor *g = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 1));
    ts_tensor *d = tt_ok(ts_apply(TS_OP_DETACH, g, NULL));
    cr_assert_not(ts_is_view(d), "detach is not a view");
    cr_assert_null(d->base);
    cr_assert_eq(d->storage, g->storage, "but shares the storage");
    cr_assert_eq(d->storage->hdr.strong, 2, "storage held by both");
    cr_assert_eq(d->requires_grad, 0);
    cr_assert_eq(d->is_leaf, 1);
    tt_geom(d, "[4, 4]", "[4, 1]", 0);
    /* detach of a view keeps the view's geometry */
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, g, tt_args(3, 0, 1, 3)));
    cr_assert(v->requires_grad && !v->is_leaf, "a view of a grad leaf is a non-leaf");
    ts_tensor *dv = tt_ok(ts_apply(TS_OP_DETACH, v, NULL));
    tt_geom(dv, "[2, 4]", "[4, 1]", 4);
    cr_assert_null(dv->base);
    tt_drop(dv);
    tt_drop(v);
    tt_drop(d);
    tt_drop(g);
    tt_end();
}

Test(views, view_as_real_and_complex)
{
    ts_tensor *c = tt_empty_dt(TS_C64, ts_cpu(), 2, 4, 4);
    ts_tensor *r = check_view(TS_OP_VIEW_AS_REAL, c, NULL, c, "[4, 4, 2]", "[8, 2, 1]", 0);
    cr_assert_eq(r->dtype, TS_F32);
    ts_tensor *back = check_view(TS_OP_VIEW_AS_COMPLEX, r, NULL, c, "[4, 4]", "[4, 1]", 0);
    cr_assert_eq(back->dtype, TS_C64);
    tt_drop(back);
    tt_drop(r);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, c, NULL));
    tt_drop(check_view(TS_OP_VIEW_AS_REAL, t, NULL, c, "[4, 4, 2]", "[2, 8, 1]", 0));
    tt_drop(t);
    ts_tensor *s = tt_ok(ts_apply(TS_OP_SLICE, c, tt_args(3, 0, 1, 3)));
    tt_drop(check_view(TS_OP_VIEW_AS_REAL, s, NULL, c, "[2, 4, 2]", "[8, 2, 1]", 8));
    tt_drop(s);
    ts_tensor *cj = tt_ok(ts_apply(TS_OP_CONJ, c, NULL));
    tt_err(ts_apply(TS_OP_VIEW_AS_REAL, cj, NULL), ER_TYPE,
           "view_as_real doesn't work on unresolved conjugated tensors.");
    tt_drop(cj);
    ts_tensor *d = tt_empty_dt(TS_C128, ts_cpu(), 1, 3);
    r = check_view(TS_OP_VIEW_AS_REAL, d, NULL, d, "[3, 2]", "[2, 1]", 0);
    cr_assert_eq(r->dtype, TS_F64);
    tt_drop(r);
    tt_drop(d);
    tt_drop(c);

    ts_tensor *f = tt_empty(1, 4);
    tt_err(ts_apply(TS_OP_VIEW_AS_REAL, f, NULL), ER_TYPE,
           "view_as_real is only supported for complex tensors");
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, f, NULL), ER_SHAPE,
           "Tensor must have a last dimension of size 2");
    tt_drop(f);
    ts_tensor *r2 = tt_empty(2, 4, 2);
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, r2, NULL, r2, "[4]", "[1]", 0));
    s = tt_ok(ts_apply(TS_OP_SLICE, r2, tt_args(3, 0, 1, 4)));
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, s, NULL, r2, "[3]", "[1]", 1));
    tt_drop(s);
    t = tt_ok(ts_apply(TS_OP_T, r2, NULL));
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, t, NULL), ER_SHAPE,
           "Tensor must have a last dimension of size 2");
    tt_drop(t);
    tt_drop(r2);
    ts_tensor *r3 = tt_empty(3, 3, 4, 2);
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, r3, NULL, r3, "[3, 4]", "[4, 1]", 0));
    t = tt_ok(ts_apply(TS_OP_TRANSPOSE, r3, tt_args(2, 0, 1)));
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, t, NULL, r3, "[4, 3]", "[1, 4]", 0));
    tt_drop(t);
    tt_drop(r3);
    /* torch.empty(3, 2)[::2] -> [2] stride (2,) */
    ts_tensor *e = tt_empty(2, 3, 2);
    s = tt_ok(ts_apply(TS_OP_SLICE, e, tt_args(4, 0, 0, 3, 2)));
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, s, NULL, e, "[2]", "[2]", 0));
    tt_drop(s);
    /* torch.empty(2,2).t().contiguous().t(): last stride 2 */
    ts_args as = {0};
    as.n = as.n2 = 2;
    as.v[0] = 2; as.v[1] = 2; as.v2[0] = 1; as.v2[1] = 2;
    s = tt_ok(ts_apply(TS_OP_AS_STRIDED, e, &as));
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, s, NULL), ER_SHAPE,
           "Tensor must have a last dimension with stride 1");
    tt_drop(s);
    as.v2[0] = 3; as.v2[1] = 1;
    s = tt_ok(ts_apply(TS_OP_AS_STRIDED, e, &as));
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, s, NULL), ER_SHAPE,
           "Tensor must have a stride divisible by 2 for all but last dimension");
    tt_drop(s);
    as.v2[0] = 2; as.offset = 1;
    s = tt_ok(ts_apply(TS_OP_AS_STRIDED, e, &as));
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, s, NULL), ER_SHAPE,
           "Tensor must have a storage_offset divisible by 2");
    tt_drop(s);
    tt_drop(e);
    ts_tensor *one = tt_empty(1, 2);
    tt_drop(check_view(TS_OP_VIEW_AS_COMPLEX, one, NULL, one, "[]", "[]", 0));
    tt_drop(one);
    ts_tensor *i = tt_empty_dt(TS_I32, ts_cpu(), 2, 4, 2);
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, i, NULL), ER_TYPE, "got a tensor of scalar type: i32");
    tt_drop(i);
    ts_tensor *h = tt_empty_dt(TS_F16, ts_cpu(), 2, 4, 2);
    tt_err(ts_apply(TS_OP_VIEW_AS_COMPLEX, h, NULL), ER_TYPE, "complex32");
    tt_drop(h);
    tt_end();
}

Test(views, neg_and_conj_bits)
{
    ts_tensor *r = tt_empty(1, 3);
    ts_tensor *n = check_view(TS_OP_NEG_VIEW, r, NULL, r, "[3]", "[1]", 0);
    cr_assert_eq(n->neg, 1);
    ts_tensor *nn = check_view(TS_OP_NEG_VIEW, n, NULL, r, "[3]", "[1]", 0);
    cr_assert_eq(nn->neg, 0, "neg twice clears the bit");
    tt_drop(nn);
    /* detach keeps the bit; views carry it */
    ts_tensor *d = tt_ok(ts_apply(TS_OP_DETACH, n, NULL));
    cr_assert_eq(d->neg, 1);
    tt_drop(d);
    tt_drop(n);
    /* conj of a real tensor is the tensor itself */
    ts_tensor *same = tt_ok(ts_apply(TS_OP_CONJ, r, NULL));
    cr_assert_eq(same, r, "conj() of a real tensor returns self");
    cr_assert_eq(r->hdr.strong, 2, "with a new reference");
    tt_drop(same);
    ts_tensor *c = tt_empty_dt(TS_C64, ts_cpu(), 2, 4, 4);
    ts_tensor *cj = check_view(TS_OP_CONJ, c, NULL, c, "[4, 4]", "[4, 1]", 0);
    cr_assert_eq(cj->conj, 1);
    ts_tensor *ct = check_view(TS_OP_T, cj, NULL, c, "[4, 4]", "[1, 4]", 0);
    cr_assert_eq(ct->conj, 1, "views keep the conj bit");
    tt_drop(ct);
    ts_tensor *cc = check_view(TS_OP_CONJ, cj, NULL, c, "[4, 4]", "[4, 1]", 0);
    cr_assert_eq(cc->conj, 0);
    tt_drop(cc);
    tt_drop(cj);
    tt_drop(c);
    tt_drop(r);
    tt_end();
}

Test(views, views_of_meta_tensors_share_meta_storage)
{
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 2, 8, 8);
    cr_assert_null(m->storage->data, "meta has no bytes");
    cr_assert_eq(m->storage->nbytes, 256, "but knows its size");
    ts_tensor *v = check_view(TS_OP_SLICE, m, tt_args(3, 0, 2, 4), m, "[2, 8]", "[8, 1]", 16);
    cr_assert(ts_is_meta(v));
    tt_drop(v);
    tt_drop(m);
    tt_end();
}

Test(views, view_holds_base_and_storage_alive)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_storage *s = a->storage;
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 3)));
    ts_tensor *w = tt_ok(ts_apply(TS_OP_T, v, NULL));
    cr_assert_eq(a->hdr.strong, 3, "a held by its two views");
    cr_assert_eq(s->hdr.strong, 3, "storage held by three tensors");
    tt_drop(a);
    cr_assert_eq(a->hdr.strong, 2, "base alive through its views");
    tt_drop(v);
    tt_drop(w);
    tt_end();
}

Test(views, requires_grad_propagates_to_views)
{
    int64_t sz[] = {4, 4};
    ts_tensor *g = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 1));
    ts_tensor *v = tt_ok(ts_apply(TS_OP_T, g, NULL));
    cr_assert(v->requires_grad, "view requires grad");
    cr_assert_not(v->is_leaf, "view of a grad tensor is not a leaf");
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *w = tt_ok(ts_apply(TS_OP_T, a, NULL));
    cr_assert(w->is_leaf && !w->requires_grad, "view of a plain tensor is a leaf");
    tt_drop(w);
    tt_drop(a);
    tt_drop(v);
    tt_drop(g);
    tt_end();
}

/* PyTorch's view -> base reference is held from C++ (ts_set_base_hidden):
 * a cycle base.attr -> holder -> view -> base survives a full collection
 * with the rule and is garbage without it; gc_hidden_holds names what the
 * hidden reference keeps; dropping the view frees the cycle at the next
 * collection. */
static void base_cycle(int hidden)
{
    ts_set_base_hidden(hidden);
    ts_tensor *a = tt_empty(2, 4, 3);
    ts_tensor *v = tt_ok(ts_apply(TS_OP_T, a, NULL));
    ts_tensor *h = tt_empty(1, 1);                /* a plain tensor as the holder */
    obj *holder = &h->hdr;
    cr_assert_eq(obj_attr_set(&a->hdr, "proxy", holder), 0);
    cr_assert_eq(obj_attr_set(holder, "val", &v->hdr), 0);
    obj *wa = &a->hdr, *wh = holder;
    obj_weak_incref(wa);
    obj_weak_incref(wh);
    tt_drop(h);
    tt_drop(v);
    cr_assert_eq(gc_hidden_holds(wh), hidden, "hidden: %d, holds: %d", hidden,
                 gc_hidden_holds(wh));
    tt_drop(a);
    gc_collect();
    cr_assert_eq(!obj_expired(wa), hidden, "rule %d: base alive %d", hidden, !obj_expired(wa));
    cr_assert_eq(!obj_expired(wh), hidden, "rule %d: holder alive %d", hidden,
                 !obj_expired(wh));
    if (hidden) {   /* the view goes: the base is visible again, the cycle garbage */
        obj_attr_set(wh, "val", NULL);
        gc_collect();
        cr_assert(obj_expired(wa), "the base outlived its last view");
    }
    obj_weak_decref(wa);
    obj_weak_decref(wh);
    ts_set_base_hidden(0);
}

Test(views, base_held_from_cpp_is_not_collected)
{
    base_cycle(0);
    base_cycle(1);
    tt_end();
}
