/* test_tensor.c - constructors, storages and data bytes, the type
 * descriptors, fake wrappers, queries, grads and the injectable bugs. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "tensor/ts_internal.h"
#include "tensor/tt.h"

TestSuite(tensor, .init = tt_begin);

static const obj_type mode_type = {.name = "test_mode", .kind = OBJ_GENERIC};

Test(tensor, empty_is_contiguous_with_real_bytes)
{
    uint64_t before = al_live_bytes_kind(AL_K_STORAGE);
    ts_tensor *a = tt_empty(2, 4, 4);
    cr_assert(ts_is_tensor(&a->hdr));
    cr_assert(ts_is_storage(&a->storage->hdr));
    cr_assert_eq(a->hdr.type->kind, OBJ_TENSOR);
    cr_assert_eq(a->storage->hdr.type->kind, OBJ_STORAGE);
    tt_geom(a, "[4, 4]", "[4, 1]", 0);
    cr_assert_eq(a->storage->nbytes, 64);
    cr_assert_not_null(a->storage->data);
    cr_assert_eq(al_live_bytes_kind(AL_K_STORAGE) - before, 64, "64 data bytes allocated");
    cr_assert_eq(ts_data_bytes(), 64);
    cr_assert(a->is_leaf && !a->requires_grad && !ts_is_view(a) && !ts_is_meta(a));
    cr_assert_eq(a->flavour, TS_REAL);
    cr_assert_eq(a->layout, TS_STRIDED);
    tt_drop(a);
    cr_assert_eq(ts_data_bytes(), 0, "bytes freed at death");
    cr_assert_eq(al_live_bytes_kind(AL_K_STORAGE), before);
    tt_end();
}

Test(tensor, init_writes_typed_values)
{
    int64_t sz[] = {2, 3};
    for (int d = 0; d < TS_DTYPE_COUNT; d++) {
        ts_tensor *o = tt_ok(ts_empty(2, sz, (ts_dtype)d, ts_cpu(), TS_INIT_ONES, 0));
        ts_tensor *z = tt_ok(ts_empty(2, sz, (ts_dtype)d, ts_cpu(), TS_INIT_ZEROS, 0));
        for (int i = 0; i < 6; i++) {
            cr_assert_eq(tt_at(o, i), 1.0, "ones %s[%d] = %g", ts_dtype_name((ts_dtype)d), i,
                         tt_at(o, i));
            cr_assert_eq(tt_at(z, i), 0.0, "zeros %s[%d]", ts_dtype_name((ts_dtype)d), i);
        }
        tt_drop(o);
        tt_drop(z);
    }
    ts_tensor *r = tt_ok(ts_empty(2, sz, TS_F64, ts_cpu(), TS_INIT_RAND, 0));
    int distinct = 0;
    for (int i = 0; i < 6; i++) {
        double v = tt_at(r, i);
        cr_assert(v >= 0 && v < 1, "rand in [0, 1): %g", v);
        distinct += i > 0 && v != tt_at(r, i - 1);
    }
    cr_assert_gt(distinct, 3, "rand values vary");
    tt_drop(r);
    tt_end();
}

Test(tensor, empty_errors)
{
    int64_t neg[] = {2, -3}, big[] = {INT64_C(1) << 62, 4}, sz[] = {3};
    tt_err(ts_empty(2, neg, TS_F32, ts_cpu(), TS_INIT_NONE, 0), ER_SHAPE,
           "Trying to create tensor with negative dimension -3: [2, -3]");
    tt_err(ts_empty(2, big, TS_F32, ts_cpu(), TS_INIT_NONE, 0), ER_SHAPE,
           "overflowed with sizes=[4611686018427387904, 4]");
    int64_t huge[] = {INT64_C(1) << 40, INT64_C(1) << 40};
    tt_err(ts_empty(2, huge, TS_F32, ts_meta(), TS_INIT_NONE, 0), ER_SHAPE,
           "[1099511627776, 1099511627776]");
    int64_t half[] = {INT64_C(1) << 31, INT64_C(1) << 31};
    tt_err(ts_empty(2, half, TS_F32, ts_meta(), TS_INIT_NONE, 0), ER_SHAPE,
           "overflowed with sizes=[2147483648, 2147483648]");
    int64_t many[TS_MAX_DIM + 1];
    for (int i = 0; i <= TS_MAX_DIM; i++)
        many[i] = 1;
    tt_err(ts_empty(TS_MAX_DIM + 1, many, TS_F32, ts_cpu(), TS_INIT_NONE, 0), ER_SHAPE,
           "too many dimensions: 17");
    tt_err(ts_empty(1, sz, TS_I32, ts_cpu(), TS_INIT_NONE, 1), ER_TYPE,
           "Only Tensors of floating point and complex dtype can require gradients");
    tt_err(ts_empty(1, sz, TS_BOOL, ts_cpu(), TS_INIT_NONE, 1), ER_TYPE, "require gradients");
    ts_tensor *c = tt_ok(ts_empty(1, sz, TS_C64, ts_cpu(), TS_INIT_NONE, 1));
    cr_assert(c->requires_grad);
    tt_drop(c);
    tt_end();
}

Test(tensor, empty_strided)
{
    int64_t sz[] = {2, 3};
    ts_tensor *t = tt_ok(ts_empty_strided(2, sz, (int64_t[]){1, 2}, TS_F32, ts_cpu(), 0));
    tt_geom(t, "[2, 3]", "[1, 2]", 0);
    cr_assert_eq(t->storage->nbytes, 24, "6 elements");
    tt_drop(t);
    t = tt_ok(ts_empty_strided(2, sz, (int64_t[]){0, 0}, TS_F32, ts_cpu(), 0));
    cr_assert_eq(t->storage->nbytes, 4, "torch: storage().size() == 1");
    tt_drop(t);
    t = tt_ok(ts_empty_strided(2, sz, (int64_t[]){4, 1}, TS_F32, ts_cpu(), 0));
    cr_assert_eq(t->storage->nbytes, 28, "torch: storage().size() == 7");
    tt_drop(t);
    tt_err(ts_empty_strided(2, sz, (int64_t[]){-1, 1}, TS_F32, ts_cpu(), 0), ER_SHAPE,
           "overflowed with sizes=[2, 3] and strides=[-1, 1]");
    tt_end();
}

Test(tensor, devices_and_meta)
{
    int64_t sz[] = {4, 4};
    ts_tensor *m = tt_ok(ts_empty(2, sz, TS_F32, ts_meta(), TS_INIT_ONES, 0));
    cr_assert(ts_is_meta(m));
    cr_assert_null(m->storage->data);
    cr_assert_eq(m->storage->nbytes, 64);
    cr_assert_eq(ts_data_bytes(), 0, "meta storages have no data bytes");
    ts_device cuda;
    cr_assert_eq(ts_device_parse("cuda", &cuda), 0);
    ts_tensor *g = tt_ok(ts_empty(2, sz, TS_F32, cuda, TS_INIT_NONE, 0));
    cr_assert_eq(g->device.type, TS_DEV_CUDA);
    cr_assert_eq(g->device.index, 0, "cuda becomes cuda:0");
    cr_assert_not_null(g->storage->data, "modelled cuda tensors have bytes");
    cr_assert_eq(ts_data_bytes(), 64);
    tt_drop(g);
    tt_drop(m);
    tt_end();
}

Test(tensor, byte_limit)
{
    int64_t sz[] = {4, 4};
    ts_set_max_bytes(100);
    ts_tensor *a = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 0));
    tt_err(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 0), ER_LIMIT,
           "past the limit of 100");
    ts_tensor *m = tt_ok(ts_empty(2, sz, TS_F32, ts_meta(), TS_INIT_NONE, 0));
    tt_err(ts_apply(TS_OP_CLONE, a, NULL), ER_LIMIT, "limit");
    cr_assert_eq(ts_data_bytes(), 64);
    tt_drop(a);
    a = tt_ok(ts_empty(2, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 0));
    ts_set_max_bytes(0);
    ts_tensor *b = tt_ok(ts_apply(TS_OP_CLONE, a, NULL));
    tt_drop(b);
    tt_drop(m);
    tt_drop(a);
    tt_end();
}

Test(tensor, storage_new_directly)
{
    ts_storage *s = ts_storage_new(10, ts_cpu(), TS_INIT_ONES);
    cr_assert_not_null(s);
    cr_assert_eq(((unsigned char *)s->data)[9], 1, "raw ones bytes");
    cr_assert_eq(ts_storage_type.owned_bytes(&s->hdr), 10);
    char buf[64];
    ts_storage_type.describe(&s->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "storage 10 bytes cpu");
    ts_storage *z = ts_storage_new(0, ts_cpu(), TS_INIT_ZEROS);
    cr_assert_null(z->data, "no bytes for an empty storage");
    ts_storage *m = ts_storage_new(10, ts_meta(), TS_INIT_ZEROS);
    cr_assert_eq(ts_storage_type.owned_bytes(&m->hdr), 0);
    /* release is idempotent */
    ts_storage_type.release(&s->hdr);
    cr_assert_null(s->data);
    cr_assert_eq(ts_data_bytes(), 0);
    ts_storage_type.release(&s->hdr);
    obj_decref(&s->hdr);
    obj_decref(&z->hdr);
    obj_decref(&m->hdr);
    tt_end();
}

Test(tensor, quantized)
{
    int64_t sz[] = {2, 3};
    ts_tensor *q = tt_ok(ts_quantized(2, sz));
    cr_assert(q->quantized);
    cr_assert_eq(q->dtype, TS_I8);
    cr_assert_not_null(q->storage->data);
    cr_assert_eq(ts_data_bytes(), 6);
    ts_tensor *t = tt_ok(ts_apply(TS_OP_T, q, NULL));
    cr_assert(t->quantized && ts_is_view(t), "views of quantized tensors stay quantized");
    tt_geom(t, "[3, 2]", "[1, 3]", 0);
    ts_tensor *c = tt_ok(ts_apply(TS_OP_CLONE, q, NULL));
    cr_assert(c->quantized);
    ts_args one = {0};
    one.has_scalar = 1;
    one.scalar = 1;
    tt_err(ts_apply(TS_OP_ADD, q, &one), ER_TYPE, "quantized");
    tt_err(ts_apply(TS_OP_SUM, q, NULL), ER_TYPE, "quantized");
    tt_err(ts_apply(TS_OP_ZERO_, q, NULL), ER_TYPE, "quantized");
    tt_err(ts_apply(TS_OP_VIEW_AS_REAL, q, NULL), ER_TYPE, "quantized");
    ts_args to = {0};
    to.has_dtype = 1;
    to.dtype = TS_F32;
    tt_err(ts_apply(TS_OP_TO, q, &to), ER_TYPE, "quantized");
    char buf[64];
    ts_tensor_type.describe(&q->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "quantized i8[2, 3] cpu");
    tt_drop(c);
    tt_drop(t);
    tt_drop(q);
    tt_end();
}

/* ---- type descriptor ---- */

typedef struct edges {
    const char *label[16];
    obj *child[16];
    int n;
} edges;

static void collect(obj *child, const char *label, long index, void *arg)
{
    edges *e = arg;
    (void)index;
    e->label[e->n] = label;
    e->child[e->n++] = child;
}

static const char *labels(obj *o)
{
    static char buf[256];
    edges e = {0};
    ts_tensor_type.traverse(o, collect, &e);
    buf[0] = '\0';
    for (int i = 0; i < e.n; i++) {
        strcat(buf, i ? "," : "");
        strcat(buf, e.label[i]);
    }
    return buf;
}

Test(tensor, traverse_labels)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    cr_assert_str_eq(labels(&a->hdr), "storage");
    ts_tensor *v = tt_ok(ts_apply(TS_OP_T, a, NULL));
    cr_assert_str_eq(labels(&v->hdr), "storage,base");
    ts_tensor *g = tt_empty(2, 4, 4);
    cr_assert_eq(ts_set_grad(a, g), 0);
    cr_assert_str_eq(labels(&a->hdr), "storage,grad");
    int64_t sz[] = {3, 3};
    ts_tensor *s = tt_ok(ts_sparse_coo(2, sz, 1, 2, TS_F32, ts_cpu(), 0));
    cr_assert_str_eq(labels(&s->hdr), "indices,values");
    ts_tensor *c = tt_ok(ts_sparse_csr(2, 2, 1, TS_F32, ts_cpu()));
    cr_assert_str_eq(labels(&c->hdr), "values,crow_indices,col_indices");
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 2);
    obj *mode = obj_new(&mode_type, sizeof(obj));
    ts_tensor *f = tt_ok(ts_fake_new(m, mode, ts_cpu(), 0));
    cr_assert_str_eq(labels(&f->hdr), "meta,mode");
    /* after release nothing is visited, and a second release is harmless */
    ts_tensor_type.release(&v->hdr);
    cr_assert_str_eq(labels(&v->hdr), "");
    cr_assert_eq(a->hdr.strong, 1, "released view dropped its base");
    ts_tensor_type.release(&v->hdr);
    cr_assert_eq(a->hdr.strong, 1);
    uint64_t own = ts_tensor_type.owned_bytes(&a->hdr);
    cr_assert_eq(own, 0, "a tensor of <= %d dims owns no buffer, got %llu", TS_INLINE_DIM,
                 (unsigned long long)own);
    tt_drop(f);
    obj_decref(mode);
    tt_drop(m);
    tt_drop(c);
    tt_drop(s);
    tt_drop(g);
    tt_drop(v);
    tt_drop(a);
    tt_end();
}

Test(tensor, describe)
{
    char buf[128];
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor_type.describe(&a->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "f32[4, 4] cpu");
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 2);
    ts_tensor_type.describe(&m->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "f32[2] meta");
    ts_device cuda0;
    ts_device_parse("cuda:0", &cuda0);
    ts_tensor *f = tt_ok(ts_fake_new(m, NULL, cuda0, a->hdr.id));
    ts_tensor_type.describe(&f->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "fake f32[2] cuda:0");
    int64_t sz[] = {3, 3};
    ts_tensor *s = tt_ok(ts_sparse_coo(2, sz, 1, 2, TS_F32, ts_cpu(), 0));
    ts_tensor_type.describe(&s->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "sparse_coo f32[3, 3] nnz=1");
    ts_tensor *z = tt_empty_dt(TS_C128, ts_cpu(), 0);
    ts_tensor_type.describe(&z->hdr, buf, sizeof buf);
    cr_assert_str_eq(buf, "c128[] cpu");
    ts_tensor_type.describe(&a->hdr, buf, 6);
    cr_assert_str_eq(buf, "f32[4", "truncated to the buffer");
    tt_drop(z);
    tt_drop(s);
    tt_drop(f);
    tt_drop(m);
    tt_drop(a);
    tt_end();
}

/* ---- fake wrappers and ts_from_storage ---- */

Test(tensor, fake_new_copies_metadata_and_holds_meta_and_mode)
{
    int64_t sz[] = {4, 4};
    ts_tensor *m = tt_ok(ts_empty(2, sz, TS_F32, ts_meta(), TS_INIT_NONE, 1));
    ts_tensor *mt = tt_ok(ts_apply(TS_OP_T, m, NULL));
    obj *mode = obj_new(&mode_type, sizeof(obj));
    ts_device cuda;
    ts_device_parse("cuda", &cuda);
    ts_tensor *f = tt_ok(ts_fake_new(mt, mode, cuda, 42));
    cr_assert(ts_is_fake(f));
    cr_assert_not(ts_is_meta(f), "a fake tensor is not a meta tensor");
    cr_assert_null(f->storage);
    cr_assert_eq(f->meta, mt);
    cr_assert_eq(f->mode, mode);
    cr_assert_eq(mode->strong, 2, "mode held strongly");
    cr_assert_eq(mt->hdr.strong, 2, "meta held strongly");
    cr_assert_eq(f->source_id, 42);
    cr_assert_eq(f->device.type, TS_DEV_CUDA);
    cr_assert_eq(f->device.index, 0);
    tt_geom(f, "[4, 4]", "[1, 4]", 0);
    cr_assert(f->requires_grad && !f->is_leaf);
    int64_t v;
    cr_assert_eq(ts_query_run(f, TS_Q_IS_VIEW, 0, &v), 0);
    cr_assert_eq(v, 0, "PyTorch 1.13: a fake made from a view is a fresh wrapper, not a view");
    cr_assert_eq(ts_query_run(f, TS_Q_NUMEL, 0, &v), 0);
    cr_assert_eq(v, 16);
    tt_err(ts_apply(TS_OP_T, f, NULL), ER_TYPE, "fake mode");
    ts_tensor *real = tt_empty(1, 2);
    tt_err(ts_fake_new(real, mode, ts_cpu(), 0), ER_TYPE, "must be a meta tensor");
    tt_drop(real);
    tt_drop(f);
    cr_assert_eq(mode->strong, 1, "fake released its mode");
    obj_decref(mode);
    tt_drop(mt);
    tt_drop(m);
    tt_end();
}

Test(tensor, from_storage)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *t = tt_ok(ts_from_storage(a->storage, 2, (int64_t[]){2, 2},
                                         (int64_t[]){1, 2}, 1, TS_F32));
    tt_geom(t, "[2, 2]", "[1, 2]", 1);
    cr_assert_not(ts_is_view(t), "not a view");
    cr_assert_eq(t->storage, a->storage);
    cr_assert_eq(a->storage->hdr.strong, 2);
    tt_err(ts_from_storage(a->storage, 2, (int64_t[]){4, 4}, (int64_t[]){4, 1}, 1, TS_F32),
           ER_SHAPE, "requiring a storage size of 68 are out of bounds for storage of size 64");
    tt_err(ts_from_storage(a->storage, 1, (int64_t[]){2}, (int64_t[]){-1}, 0, TS_F32),
           ER_SHAPE, "Negative strides");
    /* a meta storage of the same size works the same way */
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 2, 4, 4);
    ts_tensor *mt = tt_ok(ts_from_storage(m->storage, 2, (int64_t[]){4, 4},
                                          (int64_t[]){1, 4}, 0, TS_F32));
    cr_assert(ts_is_meta(mt));
    tt_drop(mt);
    tt_drop(m);
    tt_drop(t);
    tt_drop(a);
    tt_end();
}

/* ---- queries ---- */

static int64_t q(const ts_tensor *t, ts_query qu, int64_t arg)
{
    int64_t v = -999;
    cr_assert_eq(ts_query_run(t, qu, arg, &v), 0, "%s: %s", ts_query_name(qu), er_message());
    return v;
}

Test(tensor, queries)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 3)));
    cr_assert_eq(q(v, TS_Q_NUMEL, 0), 8);
    cr_assert_eq(q(v, TS_Q_DIM, 0), 2);
    cr_assert_eq(q(v, TS_Q_STORAGE_OFFSET, 0), 4);
    cr_assert_eq(q(v, TS_Q_NBYTES, 0), 32);
    cr_assert_eq(q(v, TS_Q_IS_VIEW, 0), 1);
    cr_assert_eq(q(a, TS_Q_IS_VIEW, 0), 0);
    cr_assert_eq(q(a, TS_Q_IS_SPARSE, 0), 0);
    cr_assert_eq(q(a, TS_Q_REQUIRES_GRAD, 0), 0);
    cr_assert_eq(q(v, TS_Q_SIZE, 0), 2);
    cr_assert_eq(q(v, TS_Q_SIZE, -1), 4);
    cr_assert_eq(q(v, TS_Q_STRIDE, 0), 4);
    cr_assert_eq(q(v, TS_Q_STRIDE, -1), 1);
    int64_t out;
    tt_rc_err(ts_query_run(v, TS_Q_SIZE, 2, &out), ER_SHAPE,
              "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    tt_rc_err(ts_query_run(v, TS_Q_STRIDE, -3, &out), ER_SHAPE, "but got -3");
    tt_rc_err(ts_query_run(a, TS_Q_IS_COALESCED, 0, &out), ER_TYPE, "sparse COO");
    ts_tensor *z = tt_empty(0);
    tt_rc_err(ts_query_run(z, TS_Q_SIZE, 0, &out), ER_SHAPE,
              "Dimension specified as 0 but tensor has no dimensions");
    tt_rc_err(ts_query_run(z, TS_Q_STRIDE, 0, &out), ER_SHAPE, "no dimensions");
    cr_assert_eq(q(z, TS_Q_NUMEL, 0), 1);
    cr_assert_eq(ts_numel(z), 1);
    ts_tensor *e = tt_empty(2, 0, 3);
    cr_assert_eq(q(e, TS_Q_NUMEL, 0), 0);
    cr_assert_eq(q(e, TS_Q_NBYTES, 0), 0);
    ts_tensor *c = tt_empty_dt(TS_C128, ts_cpu(), 1, 3);
    cr_assert_eq(q(c, TS_Q_NBYTES, 0), 48);
    tt_drop(c);
    tt_drop(e);
    tt_drop(z);
    tt_drop(v);
    tt_drop(a);
    tt_end();
}

/* ---- grads ---- */

Test(tensor, set_grad)
{
    int64_t sz[] = {3};
    ts_tensor *t = tt_ok(ts_empty(1, sz, TS_F32, ts_cpu(), TS_INIT_NONE, 1));
    ts_tensor *g = tt_empty(1, 3);
    cr_assert_eq(ts_set_grad(t, g), 0);
    cr_assert_eq(t->grad, g);
    cr_assert_eq(g->hdr.strong, 2, "grad held strongly");
    ts_tensor *g2 = tt_empty(1, 3);
    cr_assert_eq(ts_set_grad(t, g2), 0);
    cr_assert_eq(g->hdr.strong, 1, "old grad dropped");
    cr_assert_eq(ts_set_grad(t, NULL), 0);
    cr_assert_null(t->grad);
    cr_assert_eq(g2->hdr.strong, 1);

    tt_rc_err(ts_set_grad(t, t), ER_TYPE, "can't assign Variable as its own grad");
    ts_tensor *w4 = tt_empty(1, 4), *w13 = tt_empty(2, 1, 3);
    tt_rc_err(ts_set_grad(t, w4), ER_SHAPE, "assigned grad has data of a different size");
    tt_rc_err(ts_set_grad(t, w13), ER_SHAPE, "([1, 3] for a tensor of size [3])");
    ts_tensor *d = tt_empty_dt(TS_F64, ts_cpu(), 1, 3);
    tt_rc_err(ts_set_grad(t, d), ER_TYPE, "assigned grad has data of a different type");
    ts_tensor *m = tt_empty_dt(TS_F32, ts_meta(), 1, 3);
    tt_rc_err(ts_set_grad(t, m), ER_TYPE, "assigned grad has data of a different type");
    ts_device c0, c1;
    ts_device_parse("cuda:0", &c0);
    ts_device_parse("cuda:1", &c1);
    ts_tensor *a0 = tt_empty_dt(TS_F32, c0, 1, 3), *a1 = tt_empty_dt(TS_F32, c1, 1, 3);
    tt_rc_err(ts_set_grad(a0, a1), ER_TYPE, "located on a different device");
    /* a non-contiguous grad of the right size is fine; so is an int grad on
     * an int tensor, and a sparse grad on a dense tensor */
    ts_tensor *b = tt_empty(2, 2, 3);
    ts_tensor *bt = tt_ok(ts_apply(TS_OP_T, b, NULL));
    ts_tensor *t32 = tt_empty(2, 3, 2);
    cr_assert_eq(ts_set_grad(t32, bt), 0);
    ts_tensor *i = tt_empty_dt(TS_I32, ts_cpu(), 1, 3), *ig = tt_empty_dt(TS_I32, ts_cpu(), 1, 3);
    cr_assert_eq(ts_set_grad(i, ig), 0);
    ts_tensor *sp = tt_ok(ts_sparse_coo(1, sz, 0, 1, TS_F32, ts_cpu(), 1));
    cr_assert_eq(ts_set_grad(t, sp), 0, "sparse grad of a dense tensor");
    tt_rc_err(ts_set_grad(sp, g), ER_TYPE, "different type");
    cr_assert_eq(ts_set_grad(m, m), -1);
    er_clear();
    tt_drop(sp);
    tt_drop(ig);
    tt_drop(i);
    tt_drop(t32);
    tt_drop(bt);
    tt_drop(b);
    tt_drop(a1);
    tt_drop(a0);
    tt_drop(m);
    tt_drop(d);
    tt_drop(w13);
    tt_drop(w4);
    tt_drop(g2);
    tt_drop(g);
    tt_drop(t);
    tt_end();
}

Test(tensor, grad_cycle_through_view_is_freed_by_release)
{
    /* t.grad = t.view(...) makes t -> grad -> base -> t; the collector frees
     * such cycles by calling release, which must break it. */
    ts_tensor *t = tt_empty(1, 4);
    ts_tensor *v = tt_ok(ts_apply(TS_OP_VIEW, t, tt_args(1, 4)));
    cr_assert_eq(ts_set_grad(t, v), 0);
    tt_drop(v);
    cr_assert_eq(t->hdr.strong, 2, "t held by the root and its grad's base");
    ts_tensor_type.release(&t->hdr);   /* as the collector does */
    tt_drop(t);
    tt_end();
}

/* ---- injectable bugs ---- */

static void run_views(int with_bug)
{
    ts_bugs b = {with_bug, 0};
    ts_set_bugs(&b);
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 3)));
    ts_tensor *w = tt_ok(ts_apply(TS_OP_T, v, NULL));
    tt_drop(w);
    tt_drop(v);
    tt_drop(a);
    if (with_bug) {
        cr_assert_eq(obj_live_count(), 2, "base and its storage leak: %llu live",
                     (unsigned long long)obj_live_count());
        cr_assert_eq(a->hdr.strong, 2, "one extra reference per view, never dropped");
        cr_assert_eq(ts_data_bytes(), 64, "the base's bytes stay live");
        ts_set_bugs(NULL);
        obj_decref(&a->hdr);
        obj_decref(&a->hdr);
    }
}

Test(tensor, bug_view_base_leak_keeps_base_alive)
{
    run_views(1);
    tt_end();
}

Test(tensor, bug_view_base_leak_off_frees_everything)
{
    run_views(0);
    tt_end();
}

Test(tensor, bug_view_base_leak_on_values_view)
{
    ts_bugs b = {1, 0};
    ts_set_bugs(&b);
    int64_t sz[] = {3, 3};
    ts_tensor *s = tt_ok(ts_sparse_coo(2, sz, 1, 2, TS_F32, ts_cpu(), 1));
    ts_tensor *v = tt_ok(ts_apply(TS_OP_VALUES, s, NULL));
    tt_drop(v);
    tt_drop(s);
    cr_assert_eq(s->hdr.strong, 1, "the sparse base leaks");
    ts_set_bugs(NULL);
    obj_decref(&s->hdr);
    tt_end();
}

Test(tensor, bug_early_free_kills_a_shared_storage)
{
    ts_bugs b = {0, 1};
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *d = tt_ok(ts_apply(TS_OP_DETACH, a, NULL));
    ts_storage *s = a->storage;
    cr_assert_eq(s->hdr.strong, 2);
    obj_weak_incref(&s->hdr);   /* keep the header readable to look at it */
    ts_set_bugs(&b);
    tt_drop(d);
    /* a still points at s, but s is dead and its bytes are gone: any use
     * through a is a use-after-free (not done here). */
    cr_assert_eq(a->storage, s);
    cr_assert(obj_expired(&s->hdr), "storage died under a live tensor");
    cr_assert_null(s->data, "its bytes were freed");
    cr_assert_eq(ts_data_bytes(), 0);
    /* clean up without touching the dead storage through a */
    ts_set_bugs(NULL);
    a->storage = NULL;
    tt_drop(a);
    obj_weak_decref(&s->hdr);
    tt_end();
}

Test(tensor, bug_early_free_off_keeps_storage)
{
    ts_tensor *a = tt_empty(2, 4, 4);
    ts_tensor *d = tt_ok(ts_apply(TS_OP_DETACH, a, NULL));
    tt_drop(d);
    cr_assert_eq(a->storage->hdr.strong, 1, "one holder left");
    cr_assert_not_null(a->storage->data);
    ts_tensor *z = tt_ok(ts_apply(TS_OP_ZERO_, a, NULL));   /* touches the bytes */
    tt_drop(z);
    tt_drop(a);
    tt_end();
}

/* A tensor's inline dims are sized to the rank it is made with (1 to
 * TS_INLINE_DIM; a scalar has room for 1, more than TS_INLINE_DIM dims get
 * their own array at once); set_ to a higher rank than the inline array
 * holds moves the dims to an array of their own, keeping every value. */
Test(tensor, dims_sized_to_rank)
{
    int64_t s4[4] = {2, 3, 4, 5}, s1[1] = {7};
    const uint64_t fixed = offsetof(ts_tensor, dims);
    for (int nd = 0; nd <= 6; nd++) {
        int64_t s6[6] = {1, 2, 1, 3, 1, 2};
        ts_tensor *t = tt_ok(ts_empty(nd, s6, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
        uint64_t cap = nd < 1 || nd > TS_INLINE_DIM ? 1 : (uint64_t)nd;
        cr_expect_eq(t->hdr.size, fixed + 16 * cap, "%d dims: %u bytes, want %llu", nd,
                     t->hdr.size, (unsigned long long)(fixed + 16 * cap));
        uint64_t own = ts_tensor_type.owned_bytes(&t->hdr);
        uint64_t want = nd > TS_INLINE_DIM ? 2 * TS_MAX_DIM * sizeof(int64_t) : 0;
        cr_expect_eq(own, want, "%d dims own %llu bytes, want %llu", nd,
                     (unsigned long long)own, (unsigned long long)want);
        tt_drop(t);
    }
    ts_tensor *src = tt_ok(ts_empty(4, s4, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_tensor *one = tt_ok(ts_empty(1, s1, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    cr_assert_eq(one->hdr.size, fixed + 16, "1 dim: %u bytes, want %llu", one->hdr.size,
                 (unsigned long long)(fixed + 16));
    ts_args a = {0};
    a.other = src;
    ts_tensor *r = tt_ok(ts_apply(TS_OP_SET_, one, &a));
    cr_assert_eq(one->ndim, 4, "set_ made it %d-dim, want 4", one->ndim);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(one->sizes[i], s4[i], "size %d: %lld, want %lld", i,
                     (long long)one->sizes[i], (long long)s4[i]);
        cr_expect_eq(one->strides[i], src->strides[i], "stride %d: %lld, want %lld", i,
                     (long long)one->strides[i], (long long)src->strides[i]);
    }
    uint64_t own = ts_tensor_type.owned_bytes(&one->hdr);
    cr_expect_eq(own, 2 * TS_MAX_DIM * sizeof(int64_t), "after set_ it owns %llu bytes",
                 (unsigned long long)own);
    obj_decref(&r->hdr);
    tt_drop(one);
    tt_drop(src);
}

/* Dims past TS_INLINE_DIM: an array of the tensor's own (counted as its
 * bytes), made by the constructor or by set_ to a higher rank, and kept
 * while a zombie still describes its shape. */
Test(tensor, dims_beyond_inline)
{
    int64_t s6[6] = {1, 2, 1, 3, 1, 2}, s2[2] = {3, 4};
    ts_tensor *big = tt_ok(ts_empty(6, s6, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    uint64_t own = ts_tensor_type.owned_bytes(&big->hdr);
    cr_assert_eq(own, 2 * TS_MAX_DIM * sizeof(int64_t), "6 dims own %llu bytes",
                 (unsigned long long)own);
    cr_assert_eq(big->ndim, 6, "ndim %d", big->ndim);
    cr_assert_eq(big->sizes[5], 2, "sizes[5] %lld", (long long)big->sizes[5]);
    cr_assert_eq(big->strides[0], 12, "strides[0] %lld", (long long)big->strides[0]);
    ts_tensor *small = tt_ok(ts_empty(2, s2, TS_F32, ts_cpu(), TS_INIT_ZEROS, 0));
    ts_args a = {0};
    a.other = big;
    ts_tensor *r = tt_ok(ts_apply(TS_OP_SET_, small, &a));
    cr_assert_eq(r, small, "set_ is in place");
    cr_assert_eq(small->ndim, 6, "set_ made it %d-dim", small->ndim);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(small->sizes[i], s6[i], "size %d: %lld, want %lld", i,
                     (long long)small->sizes[i], (long long)s6[i]);
    own = ts_tensor_type.owned_bytes(&small->hdr);
    cr_assert_eq(own, 2 * TS_MAX_DIM * sizeof(int64_t), "after set_ %llu bytes",
                 (unsigned long long)own);
    /* a zombie still describes its shape */
    obj_weak_incref(&small->hdr);
    obj_decref(&r->hdr);
    tt_drop(small);
    cr_assert(obj_expired(&small->hdr), "small is a zombie");
    char d[128];
    ts_tensor_type.describe(&small->hdr, d, sizeof d);
    cr_expect(strstr(d, "[1, 2, 1, 3, 1, 2]") != NULL, "zombie describes %s", d);
    obj_weak_decref(&small->hdr);
    tt_drop(big);
}
