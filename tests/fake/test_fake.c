/* Tests of src/fake against fakegc-semantics(7): the observed PyTorch 1.13
 * sequence under both policies, the counting rules, every unsupported case,
 * grads, mode death, the adaptive sweep frequency, churn, and the
 * injectable bugs of this layer. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/wr.h"
#include "fake/fk.h"

static uint64_t base_bytes;

static void setup(void)
{
    fk_inject("", NULL, 0);
    er_clear();
    base_bytes = al_live_bytes();
}

static void teardown(void)
{
    fk_reset();
    gc_collect();
    fk_inject("", NULL, 0);
    cr_expect_eq(obj_leftover(), 0, "objects left after the test");
    cr_expect_eq(al_live_bytes(), base_bytes, "allocator bytes left: %llu",
                 (unsigned long long)(al_live_bytes() - base_bytes));
}

TestSuite(fake, .init = setup, .fini = teardown);

static ts_tensor *mk2(int64_t a, int64_t b)
{
    int64_t s[2] = {a, b};
    ts_tensor *t = ts_empty(2, s, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
    cr_assert_not_null(t, "ts_empty: %s", er_message());
    return t;
}

static ts_tensor *op(ts_op o, ts_tensor *t, int n, const int64_t *v)
{
    ts_args a;
    memset(&a, 0, sizeof a);
    a.n = n;
    for (int i = 0; i < n; i++)
        a.v[i] = v[i];
    ts_tensor *r = fk_apply(o, t, &a);
    cr_assert_not_null(r, "%s: %s", ts_op_name(o), er_message());
    return r;
}

static ts_tensor *fake(obj *m, ts_tensor *t)
{
    ts_tensor *f = fk_fake(m, t, NULL);
    cr_assert_not_null(f, "fake: %s", er_message());
    return f;
}

static void drop(void *t) { obj_decref((obj *)t); }

#define EXPECT_MEMO(m, f, me, st, pe)                                         \
    do {                                                                      \
        fk_counters c_;                                                       \
        cr_assert_eq(fk_counters_get((m), &c_), 0);                           \
        cr_expect_eq(c_.memo_fake, (f), "memo_fake %lld != %d",               \
                     (long long)c_.memo_fake, (f));                           \
        cr_expect_eq(c_.memo_meta, (me), "memo_meta %lld != %d",              \
                     (long long)c_.memo_meta, (me));                          \
        cr_expect_eq(c_.memo_storage, (st), "memo_storage %lld != %d",        \
                     (long long)c_.memo_storage, (st));                       \
        cr_expect_eq(c_.pending, (pe), "pending %lld != %d",                  \
                     (long long)c_.pending, (pe));                            \
    } while (0)

/* fakegc-semantics(7) "Observed sequence", counter by counter. */
static void observed_sequence(fk_policy pol)
{
    int per = pol == FK_SWEEP_PERIODIC;
    obj *m = fk_mode_new(pol, 128);
    cr_assert_not_null(m);
    ts_tensor *a = mk2(8, 8);
    ts_tensor *fa = fake(m, a);
    EXPECT_MEMO(m, 1, 1, 1, 0);
    ts_tensor *v = op(TS_OP_SLICE, a, 4, (int64_t[]){0, 2, 4, 1});
    ts_tensor *fv = fake(m, v);
    EXPECT_MEMO(m, 2, 2, 1, 0);
    ts_tensor *w = op(TS_OP_T, a, 0, NULL);
    ts_tensor *fw = fake(m, w);
    EXPECT_MEMO(m, 3, 3, 1, 0);
    fk_counters c;
    fk_counters_get(m, &c);
    cr_expect_eq(c.hits, 3);
    cr_expect_eq(c.misses, 0);
    cr_expect_eq(c.check_count, 5, "a view counts 2: got %lld", (long long)c.check_count);
    drop(v);
    EXPECT_MEMO(m, 2, 2, 1, per ? 1 : 0);
    drop(w);
    drop(fw);
    EXPECT_MEMO(m, 1, 1, 1, per ? 2 : 0);
    drop(fa);
    EXPECT_MEMO(m, 0, 1, 1, per ? 2 : 0);
    drop(a);
    /* periodic: the dead storage lingers until the next sweep */
    EXPECT_MEMO(m, 0, 0, per ? 1 : 0, per ? 3 : 0);
    cr_expect_eq(fk_stale_all(), per ? 1u : 0u);
    cr_expect_eq(fk_sweep(m), per ? 1u : 0u);
    EXPECT_MEMO(m, 0, 0, 0, 0);
    drop(fv);
    drop(m);
}

Test(fake, observed_sequence_periodic) { observed_sequence(FK_SWEEP_PERIODIC); }
Test(fake, observed_sequence_eager) { observed_sequence(FK_SWEEP_EAGER); }

Test(fake, memo_hit_returns_same_fake_and_counts_nothing)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f1 = fake(m, a), *f2 = fake(m, a);
    cr_expect_eq(f1, f2);
    fk_counters c;
    fk_counters_get(m, &c);
    cr_expect_eq(c.hits, 1, "a FakeTensorConverter hit never reaches the MetaConverter");
    cr_expect_eq(c.check_count, 1);
    cr_expect_eq(f1->source_id, a->hdr.id);
    cr_expect(ts_is_fake(f1));
    cr_expect_eq(f1->device.type, TS_DEV_CPU);
    cr_expect_eq(f1->meta->device.type, TS_DEV_META);
    cr_expect_eq(f1->sizes[0], 4);
    drop(f1); drop(f2); drop(a); drop(m);
}

Test(fake, shared_storage_shares_meta_storage)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *d = op(TS_OP_DETACH, a, 0, NULL);
    cr_expect_not(ts_is_view(d));
    ts_tensor *fa = fake(m, a), *fd = fake(m, d);
    cr_expect_neq(fa->meta, fd->meta, "detach gets its own meta tensor");
    cr_expect_eq(fa->meta->storage, fd->meta->storage, "over one meta storage");
    EXPECT_MEMO(m, 2, 2, 1, 0);
    drop(fa); drop(fd); drop(d); drop(a); drop(m);
}

Test(fake, view_of_unconverted_base_adds_two_entries)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(6, 6);
    ts_tensor *v = op(TS_OP_SLICE, a, 4, (int64_t[]){1, 1, 5, 2});
    ts_tensor *t2 = op(TS_OP_T, v, 0, NULL);
    cr_expect_eq(t2->base, a, "the base of a view of a view is the original");
    ts_tensor *mv = fk_mode_meta(m, t2, NULL);
    cr_assert_not_null(mv);
    EXPECT_MEMO(m, 0, 2, 1, 0);
    cr_expect_eq(mv->device.type, TS_DEV_META);
    for (int i = 0; i < t2->ndim; i++) {
        cr_expect_eq(mv->sizes[i], t2->sizes[i]);
        cr_expect_eq(mv->strides[i], t2->strides[i]);
    }
    cr_expect_eq(mv->storage_offset, t2->storage_offset);
    drop(mv); drop(t2); drop(v); drop(a); drop(m);
}

Test(fake, unsupported_cases)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    fk_counters c;
    /* CSR: meta conversion misses, fake conversion raises */
    ts_tensor *csr = ts_sparse_csr(3, 3, 2, TS_F32, ts_cpu());
    cr_assert_not_null(csr);
    ts_tensor *r = fk_mode_meta(m, csr, NULL);
    cr_expect_eq(r, csr, "a miss returns the input");
    drop(r);
    cr_expect_null(fk_fake(m, csr, NULL));
    cr_expect_eq(er_kind_get(), ER_UNSUPPORTED);
    cr_expect_str_eq(er_message(), "meta converter nyi");
    er_clear();
    /* quantized: raised before the meta converter is asked */
    ts_tensor *q = ts_quantized(2, (int64_t[]){2, 2});
    fk_counters_get(m, &c);
    int64_t misses = c.misses;
    cr_expect_null(fk_fake(m, q, NULL));
    cr_expect_str_eq(er_message(), "quantized nyi in meta tensors");
    fk_counters_get(m, &c);
    cr_expect_eq(c.misses, misses);
    er_clear();
    /* neg bit */
    ts_tensor *a = mk2(2, 2);
    ts_tensor *n = op(TS_OP_NEG_VIEW, a, 0, NULL);
    cr_expect_null(fk_fake(m, n, NULL));
    cr_expect_str_eq(er_message(), "meta converter nyi");
    er_clear();
    /* lazy device */
    ts_device lazy;
    ts_device_parse("lazy", &lazy);
    ts_tensor *lz = ts_empty(1, (int64_t[]){3}, TS_F32, lazy, TS_INIT_NONE, 0);
    cr_expect_null(fk_fake(m, lz, NULL));
    er_clear();
    /* a view whose base is sparse */
    ts_tensor *sp = ts_sparse_coo(2, (int64_t[]){3, 3}, 2, 2, TS_F32, ts_cpu(), 1);
    ts_tensor *vals = op(TS_OP_VALUES, sp, 0, NULL);
    cr_expect_null(fk_fake(m, vals, NULL));
    cr_expect_eq(er_kind_get(), ER_UNSUPPORTED);
    er_clear();
    fk_counters_get(m, &c);
    cr_expect_eq(c.misses, 5);
    cr_expect_eq(c.hits, 0);
    EXPECT_MEMO(m, 0, 0, 0, 0);
    drop(vals); drop(sp); drop(lz); drop(n); drop(a); drop(q); drop(csr);
    drop(m);
}

Test(fake, meta_tensor_becomes_fake_with_and_without_device)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *mt = ts_empty(2, (int64_t[]){2, 3}, TS_F32, ts_meta(), TS_INIT_NONE, 0);
    ts_tensor *f = fk_fake(m, mt, NULL);
    cr_assert_not_null(f, "%s", er_message());
    cr_expect_eq(f->device.type, TS_DEV_META);
    cr_expect_eq(f->meta, mt, "the meta tensor itself is wrapped");
    drop(f);
    ts_device cuda;
    ts_device_parse("cuda:0", &cuda);
    ts_tensor *mt2 = ts_empty(1, (int64_t[]){5}, TS_F32, ts_meta(), TS_INIT_NONE, 0);
    ts_tensor *g = fk_fake(m, mt2, &cuda);
    cr_assert_not_null(g);
    cr_expect_eq(g->device.type, TS_DEV_CUDA);
    cr_expect_eq(g->device.index, 0);
    /* a device with a real tensor is an error */
    ts_tensor *a = mk2(1, 1);
    cr_expect_null(fk_fake(m, a, &cuda));
    cr_expect_eq(er_kind_get(), ER_TYPE);
    er_clear();
    drop(g); drop(mt2); drop(mt); drop(a); drop(m);
}

Test(fake, sparse_coo_converts_without_storage_entry)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *sp = ts_sparse_coo(3, (int64_t[]){4, 5, 6}, 7, 2, TS_F64, ts_cpu(), 0);
    cr_assert_not_null(sp);
    ts_tensor *f = fake(m, sp);
    ts_tensor *ms = f->meta;
    cr_expect_eq(ms->layout, TS_SPARSE_COO);
    cr_expect_eq(ms->sparse_dim, 2);
    cr_expect_eq(ms->dense_dim, 1);
    cr_expect_eq(ms->nnz, 0, "nnz is 0 on meta");
    cr_expect_eq(ms->dtype, TS_F64);
    cr_expect_eq(ms->coalesced, 0);
    EXPECT_MEMO(m, 1, 1, 0, 0);
    drop(f); drop(sp);
    EXPECT_MEMO(m, 0, 0, 0, 0);
    drop(m);
}

Test(fake, grads_are_converted_with_their_own_entries)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = ts_empty(2, (int64_t[]){3, 3}, TS_F32, ts_cpu(), TS_INIT_NONE, 1);
    ts_tensor *g = mk2(3, 3);
    cr_assert_eq(ts_set_grad(a, g), 0, "%s", er_message());
    ts_tensor *f = fake(m, a);
    cr_assert_not_null(f->grad);
    cr_expect(ts_is_fake(f->grad));
    cr_expect_eq(f->grad->source_id, g->hdr.id);
    cr_expect(f->requires_grad);
    EXPECT_MEMO(m, 2, 2, 2, 0);
    drop(f); drop(g); drop(a); drop(m);
}

Test(fake, mode_dies_while_real_tensors_live)
{
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f = fake(m, a);
    drop(f);
    drop(m);
    cr_expect_eq(obj_live_count_kind(OBJ_FAKE_MODE), 0);
    cr_expect_eq(obj_live_count_kind(OBJ_FAKE_CONVERTER), 0);
    cr_expect_eq(obj_live_count_kind(OBJ_META_CONVERTER), 0);
    cr_expect_eq(obj_live_count_kind(OBJ_FINALIZER), 2, "finalizers wait for a");
    drop(a);   /* finalizers find their converter dead and skip */
    cr_expect_eq(obj_live_count_kind(OBJ_FINALIZER), 0);
}

Test(fake, adaptive_frequency)
{
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 4);
    ts_tensor *a = mk2(16, 16);
    for (int i = 0; i < 10; i++) {
        ts_tensor *v = op(TS_OP_SELECT, a, 2, (int64_t[]){0, i});
        ts_tensor *mv = fk_mode_meta(m, v, NULL);
        drop(mv);
        drop(v);   /* pending grows; the storage lives on in a */
    }
    fk_counters c;
    fk_counters_get(m, &c);
    /* 1 (a) + 2 per view = 21 calls; sweeps at 4, 8, ... while pending <= 4,
     * then the frequency rises to len(pending) */
    cr_expect_geq(c.sweep_every, 4);
    fk_sweep(m);
    fk_counters_get(m, &c);
    cr_expect_eq(c.pending, 10, "live storages stay pending");
    cr_expect_eq(c.sweep_every, 10, "frequency = max(frequency, len(pending))");
    drop(a);
    drop(m);
}

Test(fake, periodic_sweep_happens_on_the_nth_request)
{
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 3);
    ts_tensor *a = mk2(2, 2);
    ts_tensor *ma = fk_mode_meta(m, a, NULL);   /* count 1 */
    drop(ma);
    drop(a);                              /* pending 1, storage dead */
    EXPECT_MEMO(m, 0, 0, 1, 1);
    ts_tensor *b = mk2(2, 2);
    ts_tensor *mb = fk_mode_meta(m, b, NULL);   /* count 2 */
    drop(mb);
    EXPECT_MEMO(m, 0, 1, 2, 1);
    ts_tensor *mb2 = fk_mode_meta(m, b, NULL);  /* count 3: sweep first */
    drop(mb2);
    EXPECT_MEMO(m, 0, 1, 1, 0);
    fk_counters c;
    fk_counters_get(m, &c);
    cr_expect_eq(c.check_count, 0);
    drop(b);
    drop(m);
}

Test(fake, fake_op_wrapper)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 6);
    ts_tensor *f = fake(m, a);
    ts_tensor *ft = op(TS_OP_T, f, 0, NULL);
    cr_expect(ts_is_fake(ft));
    cr_expect_eq(ft->mode, m);
    cr_expect_eq(ft->sizes[0], 6);
    cr_expect_eq(ft->sizes[1], 4);
    /* in place returns the same fake */
    ts_args args;
    memset(&args, 0, sizeof args);
    ts_tensor *z = fk_apply(TS_OP_ZERO_, f, &args);
    cr_expect_eq(z, f);
    /* a query with no tensor result works on fakes */
    int64_t numel = 0;
    cr_expect_eq(ts_query_run(ft, TS_Q_NUMEL, 0, &numel), 0);
    cr_expect_eq(numel, 24);
    /* mixing fake and real is a TypeError */
    args.other = a;
    cr_expect_null(fk_apply(TS_OP_ADD, f, &args));
    cr_expect_eq(er_kind_get(), ER_TYPE);
    er_clear();
    drop(z); drop(ft); drop(f); drop(a); drop(m);
}

Test(fake, churn_keeps_memos_bounded)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    obj *p = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    for (int i = 0; i < 100000; i++) {
        ts_tensor *a = mk2(4, 4);
        ts_tensor *f = fake(m, a), *g = fake(p, a);
        drop(f); drop(g); drop(a);
        fk_counters c;
        fk_counters_get(m, &c);
        if (c.memo_fake || c.memo_meta || c.memo_storage || c.pending)
            cr_assert_fail("eager memo not empty after lifecycle %d", i);
        fk_counters_get(p, &c);
        if (c.memo_fake || c.memo_meta || c.pending > c.sweep_every ||
            c.memo_storage > c.sweep_every)
            cr_assert_fail("periodic memo past its bound after lifecycle %d", i);
    }
    drop(m); drop(p);
}

/* --- injectable bugs of this layer -------------------------------------- */

Test(fake, bug_strong_memo_keeps_real_tensor)
{
    fk_inject("strong-memo", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    obj *w = wr_new(&a->hdr, NULL, NULL);
    ts_tensor *f = fake(m, a);
    drop(f);
    drop(a);
    cr_expect_not_null(wr_get(w), "strong-memo: the deleted tensor lives on");
    drop(m);
    cr_expect_null(wr_get(w), "until its converter dies");
    drop(w);
}

Test(fake, no_bug_real_tensor_dies)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    obj *w = wr_new(&a->hdr, NULL, NULL);
    ts_tensor *f = fake(m, a);
    drop(a);
    cr_expect_null(wr_get(w));
    drop(f); drop(w); drop(m);
}

Test(fake, bug_strong_fake_value_needs_the_collector)
{
    fk_inject("strong-fake-value", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f = fake(m, a);
    obj *w = wr_new(m, NULL, NULL);
    drop(f);
    drop(m);
    cr_expect_not_null(wr_get(w), "fake -> mode -> converter -> memo -> fake");
    drop(a);  /* the finalizer removes the memo entry: the cycle breaks */
    cr_expect_null(wr_get(w));
    drop(w);
}

Test(fake, bug_strong_fake_value_cycle_collected)
{
    fk_inject("strong-fake-value", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f = fake(m, a);
    obj *w = wr_new(m, NULL, NULL);
    drop(f);
    drop(m);
    cr_expect_gt(gc_collect(), 0);
    cr_expect_null(wr_get(w), "only the collector frees the cycle");
    drop(a); drop(w);
}

Test(fake, bug_finalizer_holds_converter)
{
    fk_inject("finalizer-holds-converter", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f = fake(m, a);
    drop(f);
    drop(m);
    cr_expect_eq(obj_live_count_kind(OBJ_META_CONVERTER), 1,
                 "the converter outlives its mode while a lives");
    drop(a);
    cr_expect_eq(obj_live_count_kind(OBJ_META_CONVERTER), 0);
}

Test(fake, bug_no_sweep)
{
    fk_inject("no-sweep", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *ma = fk_mode_meta(m, a, NULL);
    drop(ma); drop(a);
    cr_expect_eq(fk_sweep(m), 0);
    EXPECT_MEMO(m, 0, 0, 1, 1);
    drop(m);
}

Test(fake, bug_strong_storage_memo)
{
    fk_inject("strong-storage-memo", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    uint64_t before = ts_data_bytes();
    ts_tensor *a = mk2(4, 4);
    ts_tensor *ma = fk_mode_meta(m, a, NULL);
    drop(ma); drop(a);
    cr_expect_eq(ts_data_bytes() - before, 64, "the real storage bytes stay");
    drop(m);
    cr_expect_eq(ts_data_bytes(), before);
}

Test(fake, bug_id_reuse_gives_a_wrong_hit)
{
    /* The arena hands a freed block of the same size class straight back
     * (glibc usually does too, but Valgrind's malloc never does), so a new
     * tensor lands at the address of the dead one. */
    char err[256];
    al_allocator *arena;
    cr_assert_eq(as_create("arena", &arena, err, sizeof err), 0, "%s", err);
    al_install(arena);
    fk_inject("id-reuse", NULL, 0);
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    int wrong = 0;
    for (int i = 0; i < 50 && !wrong; i++) {
        ts_tensor *a = mk2(4, 4);
        ts_tensor *ma = fk_mode_meta(m, a, NULL);
        drop(ma);
        drop(a);                       /* finalizer deferred: stale entry */
        ts_tensor *b = mk2(2, 2);      /* at a's address */
        ts_tensor *mb = fk_mode_meta(m, b, NULL);
        if (mb->sizes[0] != 2)
            wrong = 1;
        drop(mb); drop(b);
        fk_sweep(m);                   /* late finalizers run */
    }
    cr_expect(wrong, "an address key must eventually hit a stale entry");
    cr_expect_gt(fk_wrong_hits(), 0);
    char why[256];
    cr_expect_eq(fk_verify(NULL, why, sizeof why), -1);
    drop(m);
    fk_reset();
    cr_expect_eq(obj_leftover(), 0);
    cr_expect_eq(al_live_bytes(), 0, "the arena got everything back");
    al_install(NULL);
    al_destroy(arena);
}

Test(fake, ids_never_give_a_wrong_hit)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    for (int i = 0; i < 50; i++) {
        ts_tensor *a = mk2(4, 4);
        ts_tensor *ma = fk_mode_meta(m, a, NULL);
        drop(ma); drop(a);
        ts_tensor *b = mk2(2, 2);
        ts_tensor *mb = fk_mode_meta(m, b, NULL);
        cr_expect_eq(mb->sizes[0], 2);
        drop(mb); drop(b);
    }
    char why[256];
    cr_expect_eq(fk_verify(NULL, why, sizeof why), 0, "%s", why);
    drop(m);
}

Test(fake, oom_in_conversion_leaks_nothing)
{
    ts_tensor *a = mk2(4, 4);
    for (uint64_t n = 1; n < 40; n++) {
        obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
        cr_assert_not_null(m);
        al_fail_at(n, 0);
        ts_tensor *f = fk_fake(m, a, NULL);
        al_fail_at(0, 0);
        if (f) {
            drop(f);
        } else {
            cr_expect_eq(er_kind_get(), ER_OOM);
            fk_counters c;
            fk_counters_get(m, &c);
            cr_expect_eq(c.memo_fake, 0, "no fake entry for a failed call");
        }
        er_clear();
        drop(m);
    }
    drop(a);   /* teardown checks that nothing at all is left */
}

Test(fake, views_of_fakes_hold_their_base_fake)
{
    obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
    ts_tensor *a = mk2(4, 4);
    ts_tensor *f = fake(m, a);
    ts_tensor *ft = op(TS_OP_T, f, 0, NULL);
    ts_tensor *ftt = op(TS_OP_T, ft, 0, NULL);
    cr_expect_eq(ft->base, f, "PyTorch: the view's _base is the fake");
    cr_expect_eq(ftt->base, f, "never a view of a view");
    ts_tensor *c = op(TS_OP_CLONE, f, 0, NULL);
    cr_expect_null(c->base, "a copy is not a view");
    ts_tensor *v = op(TS_OP_SLICE, a, 3, (int64_t[]){0, 0, 2});
    ts_tensor *fv = fake(m, v);
    cr_expect_null(fv->base, "a converted view is a fresh fake (PyTorch 1.13)");
    drop(fv); drop(v); drop(c); drop(ftt); drop(ft); drop(f); drop(a); drop(m);
}
