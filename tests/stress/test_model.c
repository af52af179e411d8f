/* The stress model on its own: counts, deaths and memo tables for
 * hand-written step sequences (fakegc-semantics(7)'s observed PyTorch sequence
 * among them), and rendered actions that the interpreter must agree with. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "stress/st.h"
#include "stress/st_model.h"

static st_config cfg;
static model M0;

static void setup(void)
{
    st_config_default(&cfg);
    cr_assert_eq(m_init(&M0, &cfg), 0);
}

static void teardown_model(void)
{
    m_free(&M0);
    cr_assert_eq(al_live_bytes_kind(AL_K_SCENARIO), 0, "the model leaked %llu bytes",
                 (unsigned long long)al_live_bytes_kind(AL_K_SCENARIO));
}

static int32_t tensor2(model *m, int64_t a, int64_t b)
{
    int64_t sz[2] = {a, b};
    return m_strided(m, 2, sz, NULL, D_F32, DV_CPU);
}

static void counts(mmode *md, uint32_t fake, uint32_t meta, uint32_t stor, uint32_t pend,
                   const char *when)
{
    cr_assert_eq(md->fake.n, fake, "%s: memo_fake %u, want %u", when, md->fake.n, fake);
    cr_assert_eq(md->meta.n, meta, "%s: memo_meta %u, want %u", when, md->meta.n, meta);
    cr_assert_eq(md->stor.n, stor, "%s: memo_storage %u, want %u", when, md->stor.n, stor);
    cr_assert_eq(md->pending.n, pend, "%s: pending %u, want %u", when, md->pending.n, pend);
}

/* fakegc-semantics(7), "Observed sequence (PyTorch 1.13, one mode)", periodic. */
Test(model, observed_pytorch_sequence, .init = setup, .fini = teardown_model)
{
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_PERIODIC, 128);
    mmode *md = &m->m[m->n[mode].mi];
    int32_t a = tensor2(m, 8, 8);
    cr_assert_eq(m->bytes, 256, "an 8x8 f32 tensor has 256 data bytes");
    int32_t fa = m_fake(m, md, a, 0, DV_CPU);
    counts(md, 1, 1, 1, 0, "fa = fake(a)");

    int64_t vsz[2] = {2, 8}, vst[2] = {8, 1};
    int32_t v = m_view(m, a, 2, vsz, vst, 16);
    cr_assert_eq(m->n[v].base, a, "a slice's base is a");
    int32_t fv = m_fake(m, md, v, 0, DV_CPU);
    counts(md, 2, 2, 1, 0, "fv = fake(a[2:4])");

    int64_t wsz[2] = {8, 8}, wst[2] = {1, 8};
    int32_t w = m_view(m, a, 2, wsz, wst, 0);
    int32_t fw = m_fake(m, md, w, 0, DV_CPU);
    counts(md, 3, 3, 1, 0, "fw = fake(a.t())");

    m_unref(m, v);
    counts(md, 2, 2, 1, 1, "del v");
    m_unref(m, w);
    m_unref(m, fw);
    counts(md, 1, 1, 1, 2, "del w, fw");
    m_unref(m, fa);
    counts(md, 0, 1, 1, 2, "del fa");
    m_unref(m, a);
    counts(md, 0, 0, 1, 3, "del a (pending keeps duplicates)");
    cr_assert_eq(m->bytes, 0, "the storage died with its last tensor");
    cr_assert_eq(m_sweep(m, md), 1, "one expired storage entry is swept");
    counts(md, 0, 0, 0, 0, "after the sweep");
    m_unref(m, fv);
    m_unref(m, mode);
    cr_assert_eq(m->live_modes, 0);
}

Test(model, eager_policy_frees_storage_entry_at_once, .init = setup, .fini = teardown_model)
{
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_EAGER, 128);
    mmode *md = &m->m[m->n[mode].mi];
    int32_t t = tensor2(m, 4, 4);
    int32_t f = m_fake(m, md, t, 0, DV_CPU);
    counts(md, 1, 1, 1, 0, "fake");
    m_unref(m, t);
    counts(md, 0, 0, 0, 0, "del t under eager");
    cr_assert(m->n[f].alive, "the fake tensor outlives its source");
    m_unref(m, f);
    m_unref(m, mode);
}

/* Periodic rules: every conversion step counts, a view counts twice, the
 * sweep runs when the count reaches the frequency, and the frequency grows
 * to the pending list's length. */
Test(model, periodic_counting_and_adaptive_frequency, .init = setup, .fini = teardown_model)
{
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_PERIODIC, 3);
    mmode *md = &m->m[m->n[mode].mi];
    int32_t t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = tensor2(m, 1, 2);
        int32_t f = m_fake(m, md, t[i], 0, DV_CPU);
        m_unref(m, f);
    }
    /* 4 conversions: the 3rd swept (nothing pending) and restarted the count */
    cr_assert_eq(md->count, 1, "check_count after 4 conversions with frequency 3");
    cr_assert_eq(md->hits, 4);
    for (int i = 0; i < 4; i++)
        m_unref(m, t[i]);
    counts(md, 0, 0, 4, 4, "four real tensors died");
    int32_t u = tensor2(m, 2, 2);
    int64_t vs[1] = {4}, vt[1] = {1};
    int32_t v = m_view(m, u, 1, vs, vt, 0);
    int32_t mv = m_meta_convert(m, md, v);   /* count 2, 3: sweep at 3 */
    cr_assert_eq(md->count, 0, "the view's base conversion reached the frequency");
    counts(md, 0, 2, 1, 0, "the sweep freed the 4 dead storage entries");
    cr_assert_eq(md->freq, 3, "nothing stayed pending: the frequency is unchanged");
    m_unref(m, mv);
    m_unref(m, v);
    m_unref(m, u);
    m_unref(m, mode);
}

Test(model, cycle_lives_until_gc_and_finalizer_sees_live_storage, .init = setup,
     .fini = teardown_model)
{
    cfg.policy = FK_SWEEP_PERIODIC;
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_PERIODIC, 128);
    m->var[V_M] = mode;
    mmode *md = &m->m[m->n[mode].mi];
    int32_t a = tensor2(m, 2, 2), b = tensor2(m, 2, 2);
    m->var[V_T] = a;
    m->var[V_T + 1] = b;
    int32_t ma = m_meta_convert(m, md, a);
    m_unref(m, ma);
    m_set_edge(m, &m->n[a].attr[0], b);
    m_set_edge(m, &m->n[b].attr[0], a);
    m->var[V_T] = m->var[V_T + 1] = -1;
    m_unref(m, a);
    m_unref(m, b);
    cr_assert(m->n[a].alive && m->n[b].alive, "a cycle keeps both alive");
    int ok = 0;
    cr_assert_eq(m_unreachable(m, &ok), 4, "2 tensors + 2 storages are unreachable");
    cr_assert(ok, "plain tensors and storages: predictable");
    m_gc(m, 0);
    cr_assert(!m->n[a].alive && !m->n[b].alive);
    /* a's finalizer ran before a released its storage (CPython's
     * handle_weakrefs before delete_garbage): the storage read alive and is
     * pending; it died after the callbacks, so the sweep drops its entry
     * (PyTorch 1.13.1: meta 0, storage 1, pending 1 after gc.collect()) */
    counts(md, 0, 0, 1, 1, "after gc");
    cr_assert_eq(m->bytes, 0);
    m_sweep(m, md);
    counts(md, 0, 0, 0, 0, "after the sweep");
    m->var[V_M] = -1;
    m_unref(m, mode);
}

Test(model, deferred_finalizers_wait_for_the_statement, .init = setup, .fini = teardown_model)
{
    cfg.defer_callbacks = 1;
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_PERIODIC, 128);
    mmode *md = &m->m[m->n[mode].mi];
    int32_t t = tensor2(m, 2, 2);
    int32_t f = m_fake(m, md, t, 0, DV_CPU);
    m_unref(m, f);
    m_unref(m, t);
    counts(md, 0, 1, 1, 0, "before the safe point the meta entry is still there");
    m_end_statement(m);
    /* at the safe point the storage is dead already: no pending, entry gone */
    counts(md, 0, 0, 0, 0, "deferred finalizer with a dead storage");
    m_unref(m, mode);
}

Test(model, unsupported_conversions, .init = setup, .fini = teardown_model)
{
    model *m = &M0;
    int32_t mode = m_mode_new(m, 0, FK_SWEEP_EAGER, 128);
    mmode *md = &m->m[m->n[mode].mi];
    int32_t csr = m_csr(m, 2, 2, 1, D_F32, DV_CPU);
    cr_assert_eq(m_fake_check(m, md, csr, 0), MERR_UNSUP);
    int32_t q = tensor2(m, 1, 1);
    m->n[q].flags |= NF_QUANT;
    cr_assert_eq(m_fake_check(m, md, q, 0), MERR_UNSUP);
    cr_assert_eq(m_fake_check(m, md, q, 1), MERR_TYPE, "device= needs a meta tensor");
    int64_t sz[1] = {3};
    int32_t meta = m_strided(m, 1, sz, NULL, D_F32, DV_META);
    /* csr: crow 3 x i64 + col 1 x i64 + values 1 x f32; q: 1 x f32; meta: none */
    cr_assert_eq(m->bytes, 24 + 8 + 4 + 4, "meta storages have no data bytes");
    m_unref(m, meta);
    m_unref(m, q);
    m_unref(m, csr);
    cr_assert_eq(m->bytes, 0);
    m_unref(m, mode);
}

/* Rendering: hand-written actions, every check after every action; the
 * interpreter must agree with every prediction. */
static void render_and_run(const st_action *a, size_t n, const char *must_have)
{
    st_config c;
    st_config_default(&c);
    c.expect_all = 2;
    st_text t = {0};
    size_t applied = 0;
    cr_assert_eq(st_render(&c, a, n, &t, NULL, NULL, &applied), 0);
    cr_assert_eq(applied, n, "every action applies (%zu of %zu):\n%s", applied, n, t.p);
    if (must_have)
        cr_assert(strstr(t.p, must_have), "the model predicts \"%s\":\n%s", must_have, t.p);
    st_env e;
    st_env_default(&e);
    e.sc.verify = 1;
    st_env_prepare(&e);
    st_outcome o;
    st_run_text(&e, "render.scn", t.p, &o);
    cr_assert_eq(o.status, ST_PASS, "the core disagrees: %s\n%s", o.first, t.p);
    st_text_free(&t);
}

static st_action act(uint8_t op, uint8_t sub, int dst, int a, int b)
{
    st_action x;
    memset(&x, 0, sizeof x);
    x.op = op;
    x.sub = sub;
    x.dst = (int8_t)dst;
    x.a = (int8_t)a;
    x.b = (int8_t)b;
    return x;
}

Test(render, periodic_views_and_deletions_agree_with_the_core)
{
    st_action a[8];
    a[0] = act(A_MODE, 2, V_M, -1, -1);                 /* m0 = fake_mode(sweep="periodic") */
    a[1] = act(A_CTOR, C_EMPTY, V_T, -1, -1);           /* t0 = empty(4, 4) */
    a[1].n = 2, a[1].v[0] = 4, a[1].v[1] = 4;
    a[2] = act(A_VIEW, VW_T, V_T + 1, V_T, -1);         /* t1 = t0.t() */
    a[3] = act(A_FAKE, 0, V_F, V_M, V_T + 1);           /* f0 = m0.fake(t1) */
    a[4] = act(A_DEL, 0, -1, V_T + 1, -1);              /* del t1 */
    a[5] = act(A_DEL, 0, -1, V_T, -1);                  /* del t0 */
    a[6] = act(A_SWEEP, 0, -1, V_M, -1);                /* expect m0.sweep() == 1 */
    a[7] = act(A_DEL, 0, -1, V_F, -1);
    render_and_run(a, 8, "expect m0.pending == 2");
}

Test(render, cycles_weakrefs_and_gc_agree_with_the_core)
{
    st_action a[9];
    a[0] = act(A_CTOR, C_ONES, V_T, -1, -1);
    a[0].n = 1, a[0].v[0] = 3;
    a[1] = act(A_CTOR, C_ZEROS, V_T + 1, -1, -1);
    a[1].n = 1, a[1].v[0] = 3;
    a[2] = act(A_ATTR, 0, -1, V_T, V_T + 1);            /* t0.x = t1 */
    a[3] = act(A_ATTR, 1, -1, V_T + 1, V_T);            /* t1.y = t0 */
    a[4] = act(A_WEAK, 0, V_W, V_T, -1);                /* w0 = weakref(t0) */
    a[5] = act(A_DEL, 0, -1, V_T, V_T + 1);
    a[6] = act(A_GC, 0, -1, -1, -1);
    a[7] = act(A_CTOR, C_RAND, V_T, -1, -1);
    a[7].n = 0;
    a[8] = act(A_DEL, 0, -1, V_W, -1);
    render_and_run(a, 9, "expect unreachable() == 4");
}

Test(render, unsupported_fakes_are_expected_to_raise)
{
    st_action a[5];
    a[0] = act(A_MODE, 0, V_M, -1, -1);
    a[1] = act(A_CTOR, C_CSR, V_T, -1, -1);
    a[1].n = 2, a[1].v[0] = 2, a[1].v[1] = 2, a[1].v2[0] = 1;
    a[2] = act(A_FAKE, 0, V_F, V_M, V_T);               /* raises, counts a miss */
    a[3] = act(A_CTOR, C_QUANT, V_T + 1, -1, -1);
    a[3].n = 1, a[3].v[0] = 2;
    a[4] = act(A_FAKE, 0, V_F, V_M, V_T + 1);           /* raises, counts nothing */
    render_and_run(a, 5, "expect raises(UnsupportedFakeTensor, m0.fake(t0))");
}

/* The op rules (st_rules.c): every view and new-tensor op has a row that
 * names the PyTorch rule it models, and a few rows give what PyTorch does. */
Test(model, every_op_rule_row_cites_pytorch, .init = setup, .fini = teardown_model)
{
    for (int vw = 0; vw < VW_COUNT; vw++)
        cr_assert(m_view_rule_source(vw) != NULL, "view op %d has no rule row", vw);
    for (int no = 0; no < NO_COUNT; no++)
        cr_assert(m_new_rule_source(no) != NULL, "new-tensor op %d has no rule row", no);
    cr_assert(m_view_rule_source(VW_COUNT) == NULL);
}

Test(model, op_rules_predict_pytorch, .init = setup, .fini = teardown_model)
{
    model *m = &M0;
    int32_t t = tensor2(m, 4, 6);
    mplan p;
    /* t.slice(1, 1, 5, 2): sizes (4, 2), strides (6, 2), offset 1 */
    st_action a = {.op = A_VIEW, .sub = VW_SLICE, .n = 3, .v = {1, 1, 5, 2}, .flags = F_STEP};
    cr_assert_eq(m_view_plan(m, t, &a, &p), MERR_NONE);
    cr_assert_eq(p.kind, P_VIEW, "slice is a view: kind %d", p.kind);
    cr_assert(p.sz[1] == 2 && p.st[1] == 2 && p.off == 1, "slice: size %lld stride %lld "
              "offset %lld, want 2 2 1", (long long)p.sz[1], (long long)p.st[1],
              (long long)p.off);
    /* t.narrow(0, 3, 2) runs past the end: RuntimeError (ShapeError) */
    a = (st_action){.op = A_VIEW, .sub = VW_NARROW, .n = 3, .v = {0, 3, 2}};
    cr_assert_eq(m_view_plan(m, t, &a, &p), MERR_SHAPE);
    /* view_as_real of a real tensor: TypeError */
    a = (st_action){.op = A_VIEW, .sub = VW_REAL};
    cr_assert_eq(m_view_plan(m, t, &a, &p), MERR_TYPE);
    /* t.t().view(24) cannot be a view; reshape copies, contiguous */
    int64_t sz[2] = {6, 4}, st[2] = {1, 6};
    int32_t tt = m_view(m, t, 2, sz, st, 0);
    a = (st_action){.op = A_VIEW, .sub = VW_VIEW, .n = 1, .v = {24}};
    cr_assert_eq(m_view_plan(m, tt, &a, &p), MERR_SHAPE);
    a.sub = VW_RESHAPE;
    cr_assert_eq(m_view_plan(m, tt, &a, &p), MERR_NONE);
    cr_assert(p.kind == P_NEW && p.contig, "reshape copies: kind %d contig %d", p.kind,
              p.contig);
    /* sum() of an integer tensor is i64; contiguous() of a contiguous one is itself */
    int32_t i = m_strided(m, 2, (int64_t[]){2, 3}, NULL, D_I32, DV_CPU);
    a = (st_action){.op = A_NEWOP, .sub = NO_SUM};
    cr_assert_eq(m_newop_plan(m, i, -1, &a, &p), MERR_NONE);
    cr_assert(p.dtype == D_I64 && p.nd == 0, "sum: dtype %d nd %d", p.dtype, p.nd);
    a.sub = NO_CONTIG;
    cr_assert_eq(m_newop_plan(m, i, -1, &a, &p), MERR_NONE);
    cr_assert_eq(p.kind, P_SELF);
    /* a sparse COO's view: TypeError; its conj (not complex): itself */
    int32_t s = m_coo(m, 2, (int64_t[]){3, 3}, 2, 2, D_F32, DV_CPU, 0);
    a = (st_action){.op = A_VIEW, .sub = VW_T};
    cr_assert_eq(m_view_plan(m, s, &a, &p), MERR_TYPE);
    a.sub = VW_CONJ;
    cr_assert_eq(m_view_plan(m, s, &a, &p), MERR_NONE);
    cr_assert_eq(p.kind, P_SELF);
    m_unref(m, s);
    m_unref(m, i);
    m_unref(m, tt);
    m_unref(m, t);
}
