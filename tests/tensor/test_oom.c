/* test_oom.c - every constructor and op under allocation failure: failing
 * the 1st, 2nd, ... allocation (alone, then with every later one) must give
 * NULL with ER_OOM and leave objects, allocator bytes and tensor bytes as
 * they were, until a run sees no failure and succeeds. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "tensor/ts_internal.h"
#include "tensor/tt.h"

TestSuite(oom, .init = tt_begin);

typedef struct job {
    ts_op op;
    ts_tensor *self;
    ts_args args;
    ts_tensor *(*ctor)(struct job *j);
} job;

static ts_tensor *run(job *j)
{
    return j->ctor ? j->ctor(j) : ts_apply(j->op, j->self, &j->args);
}

/* Returns how many failure points were exercised. */
static int oom_loop(const char *name, job *j)
{
    int points = 0;
    for (int persistent = 0; persistent <= 1; persistent++) {
        for (uint64_t n = 1; n < 1000; n++) {
            uint64_t objs = obj_live_count(), bytes = al_live_bytes();
            uint64_t data = ts_data_bytes(), start = al_alloc_count();
            er_clear();
            al_fail_at(n, persistent);
            ts_tensor *r = run(j);
            al_fail_at(0, 0);
            uint64_t made = al_alloc_count() - start;
            if (made < n) {
                cr_assert_not_null(r, "%s: no failure injected but: %s", name, er_message());
                tt_drop(r);
                break;
            }
            cr_assert_null(r, "%s: allocation %llu failed (persistent %d) but a tensor came "
                           "back", name, (unsigned long long)n, persistent);
            cr_assert_eq(er_kind_get(), ER_OOM, "%s: failure %llu gave %s: %s", name,
                         (unsigned long long)n,
                         er_kind_name(er_kind_get()) ? er_kind_name(er_kind_get()) : "none",
                         er_message());
            cr_assert_eq(obj_live_count(), objs, "%s: failure %llu leaked objects", name,
                         (unsigned long long)n);
            cr_assert_eq(obj_zombie_count(), 0, "%s: zombies", name);
            cr_assert_eq(al_live_bytes(), bytes, "%s: failure %llu leaked %lld bytes", name,
                         (unsigned long long)n, (long long)(al_live_bytes() - bytes));
            cr_assert_eq(ts_data_bytes(), data, "%s: data bytes", name);
            points++;
        }
    }
    er_clear();
    return points;
}

static void check_op(ts_op op, ts_tensor *self, const ts_args *a, int min_points)
{
    job j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.self = self;
    if (a)
        j.args = *a;
    int points = oom_loop(ts_op_name(op), &j);
    cr_assert_geq(points, min_points, "%s: only %d failure points", ts_op_name(op), points);
}

static int64_t g_sizes[] = {4, 4};

static ts_tensor *mk_empty(job *j)
{
    (void)j;
    return ts_empty(2, g_sizes, TS_F32, ts_cpu(), TS_INIT_RAND, 0);
}
static ts_tensor *mk_strided(job *j)
{
    (void)j;
    return ts_empty_strided(2, g_sizes, (int64_t[]){1, 4}, TS_F64, ts_cpu(), 1);
}
static ts_tensor *mk_meta(job *j)
{
    (void)j;
    return ts_empty(2, g_sizes, TS_F32, ts_meta(), TS_INIT_ONES, 0);
}
static ts_tensor *mk_coo(job *j)
{
    (void)j;
    return ts_sparse_coo(2, g_sizes, 3, 1, TS_F32, ts_cpu(), 0);
}
static ts_tensor *mk_coo_meta(job *j)
{
    (void)j;
    return ts_sparse_coo(2, g_sizes, 3, 2, TS_F32, ts_meta(), 1);
}
static ts_tensor *mk_csr(job *j)
{
    (void)j;
    return ts_sparse_csr(3, 3, 4, TS_F32, ts_cpu());
}
static ts_tensor *mk_quantized(job *j)
{
    (void)j;
    return ts_quantized(2, g_sizes);
}
static ts_tensor *mk_from_storage(job *j)
{
    return ts_from_storage(j->self->storage, 1, (int64_t[]){4}, (int64_t[]){4}, 1, TS_F32);
}
static ts_tensor *mk_fake(job *j)
{
    return ts_fake_new(j->self, NULL, ts_cpu(), 7);
}

Test(oom, constructors)
{
    ts_tensor *(*ctors[])(job *) = {mk_empty, mk_strided, mk_meta, mk_coo, mk_coo_meta,
                                    mk_csr, mk_quantized};
    const char *names[] = {"empty", "empty_strided", "empty meta", "sparse_coo",
                           "sparse_coo meta", "sparse_csr", "quantized"};
    int mins[] = {2, 2, 2, 5, 5, 7, 2};
    for (int i = 0; i < 7; i++) {
        job j = {0};
        j.ctor = ctors[i];
        int p = oom_loop(names[i], &j);
        cr_assert_geq(p, mins[i], "%s: %d failure points", names[i], p);
    }
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 2);
    job j = {0};
    j.ctor = mk_from_storage;
    j.self = a;
    cr_assert_geq(oom_loop("from_storage", &j), 1);
    j.ctor = mk_fake;
    j.self = m;
    cr_assert_geq(oom_loop("fake_new", &j), 1);
    ts_storage *s = NULL;
    for (uint64_t n = 1; n <= 2; n++) {
        uint64_t bytes = al_live_bytes();
        er_clear();
        al_fail_at(n, 0);
        s = ts_storage_new(100, ts_cpu(), TS_INIT_ZEROS);
        al_fail_at(0, 0);
        cr_assert_null(s, "storage_new under failure %llu", (unsigned long long)n);
        cr_assert_eq(er_kind_get(), ER_OOM);
        cr_assert_eq(al_live_bytes(), bytes);
    }
    er_clear();
    tt_drop(m);
    tt_drop(a);
    tt_end();
}

Test(oom, views)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    ts_tensor *c = tt_empty_dt(TS_C64, ts_cpu(), 2, 4, 4);
    ts_tensor *r2 = tt_empty(2, 4, 2);
    ts_tensor *col = tt_empty(2, 4, 1);
    ts_args s = {0};
    s.n = s.n2 = 2;
    s.v[0] = 2; s.v[1] = 2; s.v2[0] = 1; s.v2[1] = 2;
    check_op(TS_OP_VIEW, a, tt_args(1, 16), 1);
    check_op(TS_OP_RESHAPE, a, tt_args(2, 2, 8), 1);
    check_op(TS_OP_RESHAPE, t, tt_args(1, 16), 3);   /* the copying path */
    check_op(TS_OP_T, a, NULL, 1);
    check_op(TS_OP_TRANSPOSE, a, tt_args(2, 0, 1), 1);
    check_op(TS_OP_SLICE, a, tt_args(3, 0, 1, 3), 1);
    check_op(TS_OP_SELECT, a, tt_args(2, 0, 1), 1);
    check_op(TS_OP_NARROW, a, tt_args(3, 1, 1, 2), 1);
    check_op(TS_OP_UNSQUEEZE, a, tt_args(1, 0), 1);
    check_op(TS_OP_SQUEEZE, a, tt_args(0), 1);
    check_op(TS_OP_EXPAND, col, tt_args(2, 4, 4), 1);
    check_op(TS_OP_AS_STRIDED, a, &s, 1);
    check_op(TS_OP_DIAGONAL, a, tt_args(0), 1);
    check_op(TS_OP_DETACH, a, NULL, 1);
    check_op(TS_OP_VIEW_AS_REAL, c, NULL, 1);
    check_op(TS_OP_VIEW_AS_COMPLEX, r2, NULL, 1);
    check_op(TS_OP_NEG_VIEW, a, NULL, 1);
    check_op(TS_OP_CONJ, c, NULL, 1);
    tt_drop(col);
    tt_drop(r2);
    tt_drop(c);
    tt_drop(t);
    tt_drop(a);
    tt_end();
}

Test(oom, ops)
{
    ts_tensor *a = tt_empty(2, 4, 4), *b = tt_empty(1, 4);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, a, NULL));
    ts_args other = {0};
    other.other = b;
    ts_args sc = {0};
    sc.has_scalar = 1;
    sc.scalar = 2;
    ts_args mm = {0};
    mm.other = a;
    ts_args to = {0};
    to.has_dtype = 1;
    to.dtype = TS_F64;
    ts_args tm = {0};
    tm.has_device = 1;
    tm.device = ts_meta();
    ts_args dim = {0};
    dim.has_dim = 1;
    dim.dim = 0;
    check_op(TS_OP_CLONE, a, NULL, 3);
    check_op(TS_OP_CONTIGUOUS, t, NULL, 3);
    check_op(TS_OP_TO, a, &to, 3);
    check_op(TS_OP_TO, a, &tm, 3);
    check_op(TS_OP_ADD, a, &other, 3);
    check_op(TS_OP_MUL, a, &sc, 3);
    check_op(TS_OP_MATMUL, a, &mm, 3);
    check_op(TS_OP_SUM, a, NULL, 3);
    check_op(TS_OP_SUM, a, &dim, 3);
    /* in-place ops allocate nothing: the loop sees success at once */
    check_op(TS_OP_ADD_, a, &other, 0);
    check_op(TS_OP_ZERO_, a, NULL, 0);
    tt_drop(t);
    tt_drop(b);
    tt_drop(a);
    tt_end();
}

Test(oom, sparse_ops)
{
    int64_t sz[] = {3, 3};
    ts_tensor *u = tt_ok(ts_sparse_coo(2, sz, 4, 2, TS_F32, ts_cpu(), 0));
    ts_tensor *c = tt_ok(ts_sparse_coo(2, sz, 4, 2, TS_F32, ts_cpu(), 1));
    ts_tensor *csr = tt_ok(ts_sparse_csr(3, 3, 4, TS_F32, ts_cpu()));
    ts_tensor *d = tt_empty(2, 3, 3);
    ts_args to = {0};
    to.has_dtype = 1;
    to.dtype = TS_F64;
    ts_args tm = {0};
    tm.has_device = 1;
    tm.device = ts_meta();
    check_op(TS_OP_COALESCE, u, NULL, 5);
    check_op(TS_OP_TO_DENSE, u, NULL, 3);
    check_op(TS_OP_TO_DENSE, csr, NULL, 3);
    check_op(TS_OP_TO_SPARSE, d, NULL, 5);
    check_op(TS_OP_TO_SPARSE, d, tt_args(1, 1), 5);
    check_op(TS_OP_INDICES, c, NULL, 1);
    check_op(TS_OP_VALUES, c, NULL, 1);
    check_op(TS_OP_VALUES, csr, NULL, 1);
    check_op(TS_OP_CLONE, u, NULL, 5);
    check_op(TS_OP_CLONE, csr, NULL, 7);
    check_op(TS_OP_DETACH, u, NULL, 1);
    check_op(TS_OP_TO, u, &to, 5);
    check_op(TS_OP_TO, u, &tm, 5);
    uint64_t before = obj_live_count();
    check_op(TS_OP_ZERO_, c, NULL, 4);
    cr_assert_eq(c->nnz, 0, "the run that succeeded zeroed it");
    cr_assert_eq(obj_live_count(), before, "old children replaced, not leaked");
    tt_drop(d);
    tt_drop(csr);
    tt_drop(c);
    tt_drop(u);
    tt_end();
}

Test(oom, zero_under_failure_leaves_sparse_unchanged)
{
    int64_t sz[] = {3, 3};
    ts_tensor *c = tt_ok(ts_sparse_coo(2, sz, 4, 2, TS_F32, ts_cpu(), 1));
    ts_tensor *vals = c->values;
    al_fail_at(1, 1);
    tt_err(ts_apply(TS_OP_ZERO_, c, NULL), ER_OOM, NULL);
    al_fail_at(0, 0);
    cr_assert_eq(c->nnz, 4);
    cr_assert_eq(c->values, vals);
    tt_drop(c);
    tt_end();
}
