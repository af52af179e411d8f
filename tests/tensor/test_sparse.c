/* test_sparse.c - sparse COO and CSR tensors. Behaviour observed with
 * PyTorch 1.13: indices() is an alias that is not a view, values() is a view
 * whose _base is the sparse tensor, both raise on an uncoalesced tensor;
 * stride() of a COO tensor answers (1, 0, ...); CSR has no strides and is
 * not is_sparse. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/obj.h"
#include "tensor/ts_internal.h"
#include "tensor/tt.h"

TestSuite(sparse, .init = tt_begin);

static ts_tensor *coo(int64_t r, int64_t c, int64_t nnz, int sd, int coalesced)
{
    int64_t sz[] = {r, c};
    return tt_ok(ts_sparse_coo(2, sz, nnz, sd, TS_F32, ts_cpu(), coalesced));
}

static int64_t q(const ts_tensor *t, ts_query qu, int64_t arg)
{
    int64_t v = -999;
    cr_assert_eq(ts_query_run(t, qu, arg, &v), 0, "%s: %s", ts_query_name(qu), er_message());
    return v;
}

Test(sparse, coo_metadata)
{
    ts_tensor *s = coo(3, 3, 2, 2, 0);
    cr_assert_eq(s->layout, TS_SPARSE_COO);
    cr_assert_null(s->storage, "no storage of its own");
    cr_assert_eq(s->sparse_dim, 2);
    cr_assert_eq(s->dense_dim, 0);
    cr_assert_eq(s->nnz, 2);
    cr_assert_eq(s->coalesced, 0);
    cr_assert_eq(s->indices->dtype, TS_I64);
    tt_geom(s->indices, "[2, 2]", "[2, 1]", 0);
    tt_geom(s->values, "[2]", "[1]", 0);
    cr_assert_eq(q(s, TS_Q_IS_SPARSE, 0), 1);
    cr_assert_eq(q(s, TS_Q_IS_COALESCED, 0), 0);
    cr_assert_eq(q(s, TS_Q_NUMEL, 0), 9);
    cr_assert_eq(q(s, TS_Q_DIM, 0), 2);
    cr_assert_eq(q(s, TS_Q_STORAGE_OFFSET, 0), 0);
    cr_assert_eq(q(s, TS_Q_STRIDE, 0), 1, "torch 1.13: stride() == (1, 0)");
    cr_assert_eq(q(s, TS_Q_STRIDE, 1), 0);
    cr_assert_eq(q(s, TS_Q_IS_VIEW, 0), 0);
    /* entries sit at the first row-major positions: (0,0), (0,1) */
    cr_assert_eq(tt_at(s->indices, 0), 0);
    cr_assert_eq(tt_at(s->indices, 1), 0);
    cr_assert_eq(tt_at(s->indices, 2), 0);
    cr_assert_eq(tt_at(s->indices, 3), 1);
    cr_assert_eq(tt_at(s->values, 1), 1, "values are ones");
    cr_assert_eq(ts_data_bytes(), 2 * 2 * 8 + 2 * 4, "children have real bytes");
    tt_drop(s);

    int64_t sz3[] = {3, 4, 5};
    ts_tensor *h = tt_ok(ts_sparse_coo(3, sz3, 4, 1, TS_F64, ts_cpu(), 0));
    cr_assert_eq(h->dense_dim, 2);
    tt_geom(h->values, "[4, 4, 5]", "[20, 5, 1]", 0);
    tt_geom(h->indices, "[1, 4]", "[4, 1]", 0);
    cr_assert_eq(q(h, TS_Q_STRIDE, 2), 0);
    tt_drop(h);
    tt_end();
}

Test(sparse, coo_meta_has_no_entries)
{
    int64_t sz[] = {3, 3};
    ts_tensor *m = tt_ok(ts_sparse_coo(2, sz, 5, 2, TS_F32, ts_meta(), 0));
    cr_assert_eq(m->nnz, 0);
    cr_assert_eq(m->coalesced, 0, "the meta converter's flag is kept");
    cr_assert(ts_is_meta(m->indices) && ts_is_meta(m->values));
    tt_geom(m->indices, "[2, 0]", NULL, 0);
    cr_assert_eq(ts_data_bytes(), 0);
    tt_drop(m);
    tt_end();
}

Test(sparse, coo_errors)
{
    int64_t sz[] = {3, 3}, neg[] = {3, -1}, zero[] = {0, 3};
    tt_err(ts_sparse_coo(2, sz, 1, 3, TS_F32, ts_cpu(), 0), ER_SHAPE,
           "sparse_dim 3 must be in [0, 2] for sizes [3, 3]");
    tt_err(ts_sparse_coo(2, sz, -1, 2, TS_F32, ts_cpu(), 0), ER_SHAPE, "nnz must be >= 0");
    tt_err(ts_sparse_coo(2, neg, 1, 2, TS_F32, ts_cpu(), 0), ER_SHAPE, "negative dimension");
    tt_err(ts_sparse_coo(2, sz, 10, 2, TS_F32, ts_cpu(), 1), ER_SHAPE,
           "a coalesced tensor of sparse sizes [3, 3] holds at most 9 entries, not 10");
    tt_err(ts_sparse_coo(2, zero, 1, 2, TS_F32, ts_cpu(), 0), ER_SHAPE, "no positions");
    tt_end();
}

Test(sparse, coalesce)
{
    ts_tensor *c = coo(3, 3, 1, 2, 1);
    ts_tensor *r = tt_ok(ts_apply(TS_OP_COALESCE, c, NULL));
    cr_assert_eq(r, c, "coalesce() of a coalesced tensor is self");
    tt_drop(r);
    tt_drop(c);

    ts_tensor *s = coo(3, 3, 2, 2, 0);
    r = tt_ok(ts_apply(TS_OP_COALESCE, s, NULL));
    cr_assert_neq(r, s, "a new tensor");
    cr_assert(r->coalesced && r->nnz == 2);
    cr_assert_neq(r->values, s->values);
    tt_drop(r);
    tt_drop(s);

    /* 10 entries over 9 positions: the 10th repeats (0,0) and is summed */
    s = coo(3, 3, 10, 2, 0);
    r = tt_ok(ts_apply(TS_OP_COALESCE, s, NULL));
    cr_assert_eq(r->nnz, 9);
    cr_assert_eq(tt_at(r->values, 0), 2, "duplicates summed");
    cr_assert_eq(tt_at(r->values, 8), 1);
    tt_geom(r->indices, "[2, 9]", "[9, 1]", 0);
    cr_assert_eq(tt_at(r->indices, 8), 2, "last entry's row");
    cr_assert_eq(tt_at(r->indices, 17), 2, "last entry's col");
    tt_drop(r);
    tt_drop(s);

    int64_t sz[] = {3, 3};
    ts_tensor *m = tt_ok(ts_sparse_coo(2, sz, 0, 2, TS_F32, ts_meta(), 0));
    r = tt_ok(ts_apply(TS_OP_COALESCE, m, NULL));
    cr_assert(ts_is_meta(r->values) && r->coalesced && r->nnz == 0);
    tt_drop(r);
    tt_drop(m);
    tt_end();
}

Test(sparse, to_dense)
{
    int64_t sz[] = {3, 4};
    ts_tensor *s = tt_ok(ts_sparse_coo(2, sz, 2, 1, TS_F32, ts_cpu(), 0));   /* rows 0, 1 */
    ts_tensor *d = tt_ok(ts_apply(TS_OP_TO_DENSE, s, NULL));
    cr_assert_eq(d->layout, TS_STRIDED);
    tt_geom(d, "[3, 4]", "[4, 1]", 0);
    for (int i = 0; i < 12; i++)
        cr_assert_eq(tt_at(d, i), i < 8 ? 1 : 0, "d[%d] = %g", i, tt_at(d, i));
    tt_drop(d);
    tt_drop(s);
    /* duplicates add up */
    s = coo(2, 2, 5, 2, 0);
    d = tt_ok(ts_apply(TS_OP_TO_DENSE, s, NULL));
    cr_assert_eq(tt_at(d, 0), 2);
    cr_assert_eq(tt_at(d, 3), 1);
    tt_drop(d);
    tt_drop(s);
    /* meta: a meta dense tensor (PyTorch 1.13 raises here; see the report) */
    ts_tensor *m = tt_ok(ts_sparse_coo(2, sz, 0, 2, TS_F32, ts_meta(), 1));
    d = tt_ok(ts_apply(TS_OP_TO_DENSE, m, NULL));
    cr_assert(ts_is_meta(d));
    tt_geom(d, "[3, 4]", "[4, 1]", 0);
    tt_drop(d);
    tt_drop(m);
    tt_end();
}

Test(sparse, to_sparse)
{
    ts_tensor *r = tt_empty(2, 3, 4);
    for (int i = 0; i < 12; i++)
        tt_set(r, i, i + 1);
    ts_tensor *s = tt_ok(ts_apply(TS_OP_TO_SPARSE, r, NULL));
    cr_assert(s->layout == TS_SPARSE_COO && s->coalesced);
    cr_assert_eq(s->sparse_dim, 2);
    cr_assert_eq(s->nnz, 12, "every position is an entry in the model");
    tt_geom(s->values, "[12]", "[1]", 0);
    cr_assert_eq(tt_at(s->values, 5), 6);
    tt_drop(s);
    ts_args a = {0};
    a.has_sparse_dim = 1;
    a.sparse_dim = 1;
    s = tt_ok(ts_apply(TS_OP_TO_SPARSE, r, &a));
    cr_assert_eq(s->sparse_dim, 1);
    cr_assert_eq(s->dense_dim, 1);
    cr_assert_eq(s->nnz, 3);
    tt_geom(s->values, "[3, 4]", "[4, 1]", 0);
    ts_tensor *d = tt_ok(ts_apply(TS_OP_TO_DENSE, s, NULL));
    for (int i = 0; i < 12; i++)
        cr_assert_eq(tt_at(d, i), i + 1, "round trip %d", i);
    tt_drop(d);
    tt_err(ts_apply(TS_OP_TO_SPARSE, s, NULL), ER_TYPE, "expects a strided tensor");
    tt_drop(s);
    /* from a transposed view, positions follow the view */
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, r, NULL));
    s = tt_ok(ts_apply(TS_OP_TO_SPARSE, t, tt_args(1, 1)));
    tt_geom(s->values, "[4, 3]", "[3, 1]", 0);
    cr_assert_eq(tt_at(s->values, 1), 5, "t[0][1] == r[1][0]");
    tt_drop(s);
    tt_drop(t);
    a.sparse_dim = 3;
    tt_err(ts_apply(TS_OP_TO_SPARSE, r, &a), ER_SHAPE,
           "sparse_dim must be less than or equal to self.dim()");
    a.sparse_dim = 0;
    tt_err(ts_apply(TS_OP_TO_SPARSE, r, &a), ER_SHAPE,
           "sparse_dim must be >0 if dimensionality > 0");
    a.sparse_dim = -1;
    tt_err(ts_apply(TS_OP_TO_SPARSE, r, &a), ER_SHAPE, "must be >0");
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 2, 3, 4);
    s = tt_ok(ts_apply(TS_OP_TO_SPARSE, m, NULL));
    cr_assert(s->nnz == 0 && ts_is_meta(s->values));
    tt_drop(s);
    tt_drop(m);
    tt_drop(r);
    tt_end();
}

Test(sparse, indices_and_values)
{
    ts_tensor *u = coo(3, 3, 2, 2, 0);
    tt_err(ts_apply(TS_OP_INDICES, u, NULL), ER_TYPE,
           "Cannot get indices on an uncoalesced tensor, please call .coalesce() first");
    tt_err(ts_apply(TS_OP_VALUES, u, NULL), ER_TYPE,
           "Cannot get values on an uncoalesced tensor, please call .coalesce() first");
    ts_tensor *c = tt_ok(ts_apply(TS_OP_COALESCE, u, NULL));
    ts_tensor *i = tt_ok(ts_apply(TS_OP_INDICES, c, NULL));
    cr_assert_not(ts_is_view(i), "indices() is not a view in torch 1.13");
    cr_assert_eq(i->storage, c->indices->storage, "but aliases the indices");
    cr_assert_neq(i, c->indices, "a new tensor object");
    tt_geom(i, "[2, 2]", "[2, 1]", 0);
    cr_assert_eq(i->dtype, TS_I64);
    ts_tensor *v = tt_ok(ts_apply(TS_OP_VALUES, c, NULL));
    cr_assert(ts_is_view(v), "values() is a view");
    cr_assert_eq(v->base, c, "whose base is the sparse tensor itself");
    cr_assert_eq(v->storage, c->values->storage);
    tt_geom(v, "[2]", "[1]", 0);
    /* a view of values() keeps the sparse base */
    ts_tensor *vv = tt_ok(ts_apply(TS_OP_UNSQUEEZE, v, tt_args(1, 0)));
    cr_assert_eq(vv->base, c);
    tt_drop(vv);
    tt_drop(c);
    cr_assert_eq(v->base->hdr.strong, 1, "values() keeps its sparse base alive");
    tt_drop(v);
    tt_drop(i);
    tt_drop(u);

    int64_t sz[] = {3, 3};
    ts_tensor *m = tt_ok(ts_sparse_coo(2, sz, 0, 2, TS_F32, ts_meta(), 1));
    v = tt_ok(ts_apply(TS_OP_VALUES, m, NULL));
    cr_assert(ts_is_meta(v) && v->base == m);
    tt_drop(v);
    tt_drop(m);
    tt_end();
}

Test(sparse, clone_detach_to_zero)
{
    ts_tensor *s = coo(3, 3, 2, 2, 0);
    ts_tensor *c = tt_ok(ts_apply(TS_OP_CLONE, s, NULL));
    cr_assert(c->layout == TS_SPARSE_COO && c->nnz == 2 && !c->coalesced);
    cr_assert_neq(c->values->storage, s->values->storage, "clone copies the children");
    tt_drop(c);
    ts_tensor *d = tt_ok(ts_apply(TS_OP_DETACH, s, NULL));
    cr_assert_eq(d->values, s->values, "detach shares the children");
    cr_assert_eq(s->values->hdr.strong, 2);
    tt_drop(d);
    ts_args a = {0};
    a.has_device = 1;
    a.device = ts_meta();
    ts_tensor *m = tt_ok(ts_apply(TS_OP_TO, s, &a));
    cr_assert(ts_is_meta(m->values) && m->nnz == 0 && m->coalesced,
              "torch: S.to('meta') is coalesced with nnz 0");
    tt_drop(m);
    ts_args f = {0};
    f.has_dtype = 1;
    f.dtype = TS_F64;
    ts_tensor *w = tt_ok(ts_apply(TS_OP_TO, s, &f));
    cr_assert(w->dtype == TS_F64 && w->values->dtype == TS_F64 && w->nnz == 2);
    tt_drop(w);
    f.dtype = TS_F32;
    w = tt_ok(ts_apply(TS_OP_TO, s, &f));
    cr_assert_eq(w, s, "nothing changes -> self");
    tt_drop(w);
    ts_tensor *old = s->values;
    obj_incref(&old->hdr);
    ts_tensor *z = tt_ok(ts_apply(TS_OP_ZERO_, s, NULL));
    cr_assert_eq(z, s);
    cr_assert(s->nnz == 0 && s->coalesced);
    cr_assert_eq(old->hdr.strong, 1, "old values dropped");
    tt_geom(s->values, "[0]", NULL, 0);
    tt_drop(old);
    tt_drop(z);
    ts_tensor *k = tt_ok(ts_apply(TS_OP_CONTIGUOUS, s, NULL));
    cr_assert_eq(k, s);
    tt_drop(k);
    tt_err(ts_apply(TS_OP_VIEW, s, tt_args(1, 9)), ER_TYPE,
           "view() is not supported for sparse COO tensors");
    tt_err(ts_apply(TS_OP_T, s, NULL), ER_TYPE, "not supported for sparse COO");
    tt_err(ts_apply(TS_OP_SUM, s, NULL), ER_TYPE, "not supported for sparse COO");
    tt_drop(s);
    tt_end();
}

Test(sparse, csr)
{
    ts_tensor *c = tt_ok(ts_sparse_csr(2, 3, 4, TS_F32, ts_cpu()));
    cr_assert_eq(c->layout, TS_SPARSE_CSR);
    tt_geom(c->crow, "[3]", "[1]", 0);
    tt_geom(c->col, "[4]", "[1]", 0);
    tt_geom(c->values, "[4]", "[1]", 0);
    cr_assert_eq(c->nnz, 4);
    cr_assert_eq(tt_at(c->crow, 1), 3);
    cr_assert_eq(tt_at(c->crow, 2), 4);
    cr_assert_eq(tt_at(c->col, 3), 0);
    cr_assert_eq(q(c, TS_Q_IS_SPARSE, 0), 0, "torch: a CSR tensor is not is_sparse");
    cr_assert_eq(q(c, TS_Q_NUMEL, 0), 6);
    cr_assert_eq(q(c, TS_Q_STORAGE_OFFSET, 0), 0);
    int64_t out;
    tt_rc_err(ts_query_run(c, TS_Q_STRIDE, 0, &out), ER_TYPE,
              "Sparse CSR tensors do not have strides");
    tt_rc_err(ts_query_run(c, TS_Q_IS_COALESCED, 0, &out), ER_TYPE, "sparse COO");
    ts_tensor *v = tt_ok(ts_apply(TS_OP_VALUES, c, NULL));
    cr_assert(ts_is_view(v) && v->base == c);
    tt_drop(v);
    ts_tensor *d = tt_ok(ts_apply(TS_OP_TO_DENSE, c, NULL));
    double want[] = {1, 1, 1, 1, 0, 0};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(tt_at(d, i), want[i], "d[%d]", i);
    tt_drop(d);
    ts_tensor *k = tt_ok(ts_apply(TS_OP_CLONE, c, NULL));
    cr_assert(k->layout == TS_SPARSE_CSR && k->values != c->values);
    tt_drop(k);
    k = tt_ok(ts_apply(TS_OP_DETACH, c, NULL));
    cr_assert(k->crow == c->crow && k->col == c->col);
    tt_drop(k);
    tt_err(ts_apply(TS_OP_INDICES, c, NULL), ER_TYPE, "not supported for sparse CSR");
    tt_err(ts_apply(TS_OP_COALESCE, c, NULL), ER_TYPE, "not supported for sparse CSR");
    ts_args a = {0};
    a.has_device = 1;
    a.device = ts_meta();
    tt_err(ts_apply(TS_OP_TO, c, &a), ER_TYPE,
           "Unsupported device type for SparseCsr layout: meta");
    char buf[64];
    ts_tensor_type.describe(&c->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "sparse_csr f32[2, 3] nnz=4");
    tt_drop(c);
    tt_err(ts_sparse_csr(2, 2, 1, TS_F32, ts_meta()), ER_TYPE,
           "Unsupported device type for SparseCsr layout: meta");
    tt_err(ts_sparse_csr(2, 2, 5, TS_F32, ts_cpu()), ER_SHAPE,
           "nnz 5 does not fit a CSR tensor of size [2, 2]");
    tt_err(ts_sparse_csr(-1, 2, 0, TS_F32, ts_cpu()), ER_SHAPE, "negative dimension");
    tt_end();
}
