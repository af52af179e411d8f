/* st_dcache.c - the model's version-3 rules per design: the process-wide
 * dispatch cache of FakeTensorMode (designs.md "pytorch-2.3", Dispatch
 * cache) and what a compile's finish() clears. Re-stated from PyTorch's
 * source; nothing here asks the fake layer.
 *
 * The cache (fake_tensor.py@946abe14:928-931: a class attribute, one per
 * process, shared by every mode) maps a key made of the op, its arguments
 * as passed and each tensor argument's metadata (dtype, layout, device,
 * sizes, strides, storage offset, storage nbytes, requires_grad, neg/conj:
 * :1157-1186, _prep_args_for_hash :1244-1266) to an output description.
 * The model keeps the keys, as a hash of the call as written (receiver
 * and tensor operands left out) and of its fake operands' metadata. A
 * sparse input (:1299-1300) or output (_make_cache_entry: "sparse output")
 * bypasses it, nothing stored; a hit serves the
 * output from the entry, without from_meta_and_device (:1350-1398), so the
 * output gets no tensor_memo entry (derived); a miss runs the op and
 * stores its entry (:1143-1148). A mode made with propagate_real does not
 * use it (:982-985,1449-1452). An op with a symbolic input (a dynamic fake,
 * or an op output on one) is cached on its ShapeEnv, never in the process
 * cache (_fake_tensor_utils.py@a29b95dc:235-244): its output always gets
 * an entry, and holds that ShapeEnv. Constant inputs bypass it too, but
 * the generator runs no op on a constant fake (constant propagation is not
 * modelled).
 */
#include <string.h>

#include "alloc/al.h"
#include "core/ix.h"
#include "fake/fk.h"
#include "stress/st_model.h"

typedef struct dc_row {
    fk_design_id design;
    uint8_t dispatch_cache;  /* FakeTensorMode.cache: fake_tensor.py@946abe14:928-931 */
    uint8_t finish_clears;   /* tr.finish() clears the mode's four tables: pytorch#171209
                                (with se.tracked, pytorch#193015, and non-cpu constants,
                                pytorch#184445, neither of which the generator makes) */
    /* the lifecycle after 2.3 (fakegc-semantics(7), DESIGNS, pytorch-2.14) */
    uint8_t unbacked_memo;   /* f.item() memos: UnbackedMemoDescriptor (fake_tensor.py@
                                946abe14), epoch bumped per retrace (tracer(m)) */
    uint8_t post_compile_gc; /* tr.finish() ends with gc.collect() (pytorch#184969) */
    uint8_t constant_scalar; /* pytorch#177496; f.storage() clears constant */
    uint8_t views_keep_source; /* a view op on a fake view keeps it (measured
                                on 2.6.0 and 2.14.1: scripts/xref 09) */
} dc_row;

static const dc_row rows[] = {
    {FK_D_2_3, 1, 1, 0, 0, 0, 1},
    {FK_D_2_14, 1, 1, 1, 1, 1, 1},
};

void m_dc_init(model *m)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if ((int)rows[i].design == m->c->design) {
            m->dcache = rows[i].dispatch_cache;
            m->finish_clears = rows[i].finish_clears;
            m->umemo = rows[i].unbacked_memo;
            m->pcgc = rows[i].post_compile_gc;
            m->cscalar = rows[i].constant_scalar;
            m->vsrc = rows[i].views_keep_source;
        }
}

void m_dc_free(model *m)
{
    al_free(m->dc, m->capdc * sizeof *m->dc, AL_K_SCENARIO);
    m->dc = NULL;
    m->ndc = m->capdc = 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return ix_hash_u64(h, v);
}

/* A fake operand's metadata (_prep_args_for_hash: extract_tensor_metadata
 * of the fake; neg/conj are its meta tensor's, as the fake copies them). */
static uint64_t meta_key(const model *m, uint64_t h, int32_t f)
{
    const mnode *x = &m->n[f], *mt = &m->n[x->meta];
    h = mix(h, x->dtype);
    h = mix(h, x->layout);
    h = mix(h, x->fdev);
    h = mix(h, (uint64_t)x->ndim);
    for (int d = 0; d < x->ndim; d++) {
        h = mix(h, (uint64_t)x->sizes[d]);
        h = mix(h, (uint64_t)x->strides[d]);
    }
    h = mix(h, (uint64_t)x->offset);
    h = mix(h, mt->storage >= 0 ? m->n[mt->storage].nbytes : 0);
    return mix(h, (uint64_t)((x->flags & NF_RG) != 0) | (uint64_t)((mt->flags & NF_NEG) != 0) << 1 |
                      (uint64_t)((mt->flags & NF_CONJ) != 0) << 2);
}

static int strided_known(const model *m, int32_t f)
{
    return f < 0 || (m->n[f].layout == LY_STRIDED && !(m->n[f].flags & NF_USTR));
}

static int has_const(const model *m, int32_t f)
{
    return f >= 0 && m->n[f].fake && m->n[f].cst >= 0;
}

int m_dc_predictable(const model *m, int32_t self, int32_t other)
{
    if (has_const(m, self) || has_const(m, other))
        return 0;
    if (!m->dcache || !m->n[self].fake)
        return 1;
    /* a sparse input bypasses; strides the model does not know make the
     * key unknown */
    int sparse = m->n[self].layout != LY_STRIDED || (other >= 0 && m->n[other].layout != LY_STRIDED);
    return sparse || (strided_known(m, self) && strided_known(m, other));
}

int32_t m_dc_symbolic(const model *m, int32_t self, int32_t other)
{
    if (m->n[self].fake && m->n[self].se >= 0)
        return m->n[self].se;
    return other >= 0 && m->n[other].fake ? m->n[other].se : -1;
}

int m_dc_dispatch(model *m, int32_t self, int32_t other, const char *call)
{
    m->op_hit = 0;
    if (!m->dcache || !m->n[self].fake)
        return 0;
    int32_t mode = m->nwith ? m->with[m->nwith - 1] : m->n[self].mode;
    if (mode >= 0 && m->m[m->n[mode].mi].propreal)
        return 0;                                         /* no cache at all */
    if (!call || m->n[self].layout != LY_STRIDED ||
        (other >= 0 && m->n[other].layout != LY_STRIDED))
        return 0;                                         /* bypass */
    if (m_dc_symbolic(m, self, other) >= 0)
        return 0;                                         /* its ShapeEnv's */
    uint64_t h = IX_FNV_BASIS;
    for (const char *p = call; *p; p++)
        h = mix(h, (uint8_t)*p);
    h = meta_key(m, h, self);
    if (other >= 0)
        h = meta_key(m, mix(h, 1), other);
    for (size_t i = 0; i < m->ndc; i++)
        if (m->dc[i] == h) {
            m->dc_hits++;
            m->op_hit = 1;
            return 1;
        }
    if (al_grow(&m->dc, &m->capdc, m->ndc, sizeof *m->dc, 16, AL_K_SCENARIO,
                "st model dispatch cache") < 0) {
        m->oom = 1;
        return 0;
    }
    m->dc[m->ndc++] = h;
    m->dc_misses++;
    return 0;
}

void m_finish_clears(model *m, mmode *md)
{
    /* pytorch#171209: the describer's lookups and the MetaConverter's
     * tensor_memo and storage_memo are emptied; their values are weak in
     * this design, so nothing dies of it */
    if (!m->finish_clears || !md->alive || !md->ids)
        return;
    md->fake.n = md->meta.n = md->stor.n = 0;
    int32_t mode = md->node;
    /* pytorch#193015: the mode's ShapeEnv forgets its tracked fakes */
    if (m->n[mode].se >= 0)
        m_untrack(m, m->n[mode].se, 0);
    /* pytorch#184445: clear_non_cpu_constants() on the mode's live fakes */
    for (uint32_t i = 0; i < m->nn; i++) {
        const mnode *x = &m->n[i];
        if (x->alive && x->fake && x->mode == mode && x->cst >= 0 &&
            m->n[x->cst].dev != DV_CPU)
            m_clear_constant(m, (int32_t)i);
    }
    /* ... and the refs of the map whose fakes live without one now */
    m_cmap_drop(m, md, 1);
}
