/* The stress model's version-3 rules (st_dcache.c) on their own. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "alloc/al.h"
#include "fake/fk.h"
#include "stress/st.h"
#include "stress/st_model.h"

static int32_t tensor2(model *m, int64_t a, int64_t b)
{
    int64_t sz[2] = {a, b};
    return m_strided(m, 2, sz, NULL, D_F32, DV_CPU);
}

/* pytorch-2.3's dispatch cache in the model (st_dcache.c): a second op
 * with the same call and operand metadata is a hit (its output gets no memo
 * entry); other metadata, another call: misses; a propagate_real mode and
 * a symbolic operand do not use it; the other designs have none. */
Test(model, dispatch_cache_of_pytorch_2_3)
{
    st_config c;
    st_config_default(&c);
    c.design = FK_D_2_3;
    model m;
    cr_assert_eq(m_init(&m, &c), 0);
    cr_assert(eq(int, m.dcache, 1));
    mmode *md = &m.m[m.n[m_mode_new(&m, 0, FK_SWEEP_EAGER, 128)].mi];
    int32_t f = m_fake(&m, md, tensor2(&m, 2, 3), 0, DV_CPU);
    int32_t g = m_fake(&m, md, tensor2(&m, 3, 2), 0, DV_CPU);
    cr_assert(eq(int, m_dc_dispatch(&m, f, -1, ".clone()"), 0));
    cr_assert(eq(int, m_dc_dispatch(&m, f, -1, ".clone()"), 1));
    cr_assert(eq(int, m.op_hit, 1));
    m_end_statement(&m);
    cr_assert(eq(int, m.op_hit, 0));
    cr_assert(eq(int, m_dc_dispatch(&m, f, -1, ".mul(2)"), 0));
    cr_assert(eq(int, m_dc_dispatch(&m, g, -1, ".clone()"), 0));
    cr_assert(eq(int, m_dc_dispatch(&m, f, g, ".matmul"), 0));
    cr_assert(eq(i64, m.dc_hits, 1));
    cr_assert(eq(i64, m.dc_misses, 4));
    cr_assert(eq(sz, m.ndc, 4));
    cr_assert(eq(int, m_dc_dispatch(&m, f, -1, NULL), 0), "a sparse output bypasses");
    mmode *pr = &m.m[m.n[m_mode_new(&m, 0, FK_SWEEP_EAGER, 128)].mi];
    pr->propreal = 1;
    int32_t h = m_fake(&m, pr, tensor2(&m, 2, 3), 0, DV_CPU);
    cr_assert(eq(int, m_dc_dispatch(&m, h, -1, ".clone()"), 0), "propagate_real: no cache");
    int32_t se = m_new(&m, NK_SHAPE_ENV);
    m_set_edge(&m, &m.n[g].se, se);
    cr_assert(eq(int, m_dc_dispatch(&m, g, -1, ".clone()"), 0), "symbolic: its ShapeEnv's");
    cr_assert(eq(i64, m.dc_hits, 1));
    cr_assert(eq(sz, m.ndc, 4));
    /* finish(): the mode's tables empty, nothing dies of it */
    cr_assert(md->fake.n > 0);
    m_finish_clears(&m, md);
    cr_assert(eq(u32, md->fake.n, 0));
    cr_assert(eq(int, m.n[f].alive, 1));
    m_free(&m);

    st_config_default(&c);
    cr_assert_eq(m_init(&m, &c), 0);
    cr_assert(eq(int, m.dcache, 0), "the default design has no dispatch cache");
    m_free(&m);
    cr_assert(eq(u64, al_live_bytes_kind(AL_K_SCENARIO), 0));
}
