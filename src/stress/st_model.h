/* st_model.h - the stress model: its own objects, strong edges, reference
 * counts and memo tables, re-stating fakegc-semantics(7) without reading the
 * core. Internal to src/stress (st_model.c is the model's objects and
 * memos, st_rules.c its op rules, st_gen.c the actions that drive it).
 *
 * Deliberately simple: every object the scenario can observe is a node with
 * a count of strong references (variables, the `with` stack, edges from
 * live nodes). A count reaching 0 kills the node: its memo finalizers run
 * (meta entries, fake entries, the storage rule of the mode's policy), then
 * it drops its edges. A collection kills every live node no root reaches,
 * all at once (so a storage dying in the same collection reads as expired
 * to its tensor's finalizer), drops their edges to survivors, then runs
 * their callbacks, then drops the rest (src/core/gc.c's phase 5). With deferred callbacks the meta finalizers wait for the end of
 * the statement. Objects the core makes that no scenario can observe
 * (converters, finalizer objects, self references) are not modelled; modes
 * own their memo values directly.
 */
#ifndef FAKEGC_ST_MODEL_H
#define FAKEGC_ST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "stress/st.h"

#define M_MAXD 5               /* dimensions the generator ever makes */

enum { NK_NONE, NK_TENSOR, NK_STORAGE, NK_MODE, NK_WEAK,
       NK_TRACER,       /* version 3: tracer(m); mode edge, graph args in attr[] */
       NK_SHAPE_ENV };  /* version 3: shape_env(); its tracked fakes in model.tracked */
enum { LY_STRIDED, LY_COO, LY_CSR };
enum { DV_CPU, DV_CUDA, DV_CUDA1, DV_META, DV_LAZY, DV_COUNT };
enum { DC_FLOAT, DC_COMPLEX, DC_INT, DC_BOOL };
enum {
    D_F16, D_BF16, D_F32, D_F64, D_C64, D_C128, D_I8, D_U8, D_I32, D_I64, D_BOOL, D_COUNT
};

/* node flags */
enum {
    NF_QUANT = 1u << 0, NF_NEG = 1u << 1, NF_CONJ = 1u << 2, NF_RG = 1u << 3,
    NF_LEAF = 1u << 4, NF_COAL = 1u << 5,
    NF_MEMO = 1u << 6,     /* made by a converter (memo value or part of one) */
    NF_USTR = 1u << 7,     /* strides (and so offsets of views) not predicted:
                              no stride-dependent ops or checks */
    NF_DATA = 1u << 8,     /* storage with data bytes */
    NF_MARK = 1u << 9,     /* reachability scratch */
    NF_MC = 1u << 10,      /* NK_MODE: a stand-alone MetaConverter */
    NF_FC = 1u << 12,      /* NK_MODE: a stand-alone FakeTensorConverter (not a mode) */
    NF_WMODE = 1u << 13,   /* NK_MODE: fake_mode(mode_ref="weak"): its fakes hold
                              it weakly (pytorch#168326's fix) */
    NF_HELD = 1u << 14,    /* a garbage storage the collection holds through
                              its callbacks (src/core/gc.c phase 5) */
    NF_SET = 1u << 11      /* set_ re-pointed it: a view of it converted later
                              would meet the meta memoized before set_, too
                              small (PyTorch 1.13.1 raises setStorage out of
                              bounds); the generator converts no such view */
};

typedef struct mnode {
    uint8_t kind, alive, fake, layout, dtype, dev, fdev;
    int8_t ndim, sd;
    uint16_t flags;
    uint32_t rc;
    int64_t sizes[M_MAXD], strides[M_MAXD], offset, nnz;
    int32_t storage, base, grad, meta, mode, ind, val, crow, col;
    int32_t vsrc;            /* a fake view's source fake view (views_keep_source) */
    int32_t attr[2];
    int32_t se;              /* version 3: a mode's ShapeEnv; a dynamic fake's (and
                                an op output's on one) */
    int32_t cst;             /* a constant fake's constant (the real tensor) */
    int32_t rcopy;           /* a propagate_real fake's copy of its real tensor */
    /* pytorch-2.14 (st_dcache.c's rows say where) */
    int32_t cs;              /* a constant fake's constant_scalar (a 0-d CPU constant) */
    int32_t um;              /* a fake's item memo: the ShapeEnv its SymInt holds */
    int32_t umsym;           /* ... its symbol, made at version umvc, epoch umep */
    uint32_t umvc, umep;
    uint32_t ver;            /* the version counter (kept by a view family's root) */
    int32_t nunb;            /* NK_SHAPE_ENV: unbacked symbols made */
    int32_t target;          /* NK_WEAK */
    int32_t mi;              /* NK_MODE: index in model.modes */
    uint64_t nbytes;         /* NK_STORAGE */
} mnode;

typedef struct mpair { int32_t k, v; } mpair;
typedef struct mpvec { mpair *p; uint32_t n, cap; } mpvec;
typedef struct mivec { int32_t *p; uint32_t n, cap; } mivec;

/* A meta finalizer waiting for the end of the statement: the storage is
 * the one captured when the memo entry was made (its StorageWeakRef). */
typedef struct mdef { int32_t mi, key, stor; } mdef;

typedef struct mmode {
    int32_t node;
    uint8_t policy;          /* FK_SWEEP_EAGER / FK_SWEEP_PERIODIC */
    uint8_t alive;
    /* the design's rules (fake/fk.h, its row's tables), per converter:
     * one   one tensor memo, the MetaConverter's, of weak values (2.x): a
     *       mode's fakes are its values (`fake`), `meta` only for a
     *       stand-alone MetaConverter;
     * ids   2.3's describer: entries are keyed by ids that outlive their
     *       real objects, storage-memo values are weak;
     * fins  finalizers on converted tensors (1.13, 2.0), one per insertion
     *       under `one`;
     * sweeps a pending list and its sweep; opmemo op outputs memoized */
    uint8_t one, ids, fins, sweeps, opmemo;
    uint8_t csr;             /* the design converts sparse CSR (fk_design.csr_converts) */
    uint8_t ctormemo;        /* constructors' fakes memoized (ctor_outputs_memoized) */
    uint8_t metasize;        /* meta storages' size (meta_storage_size) */
    uint8_t metanone;        /* mode.meta(rejected) answers none (meta_miss_none) */
    uint8_t cstkept;         /* the constant map holds storages (const_storage_kept) */
    uint8_t propreal;        /* fake_mode(propagate_real=true) */
    int64_t freq, count, hits, misses;
    uint32_t epoch;          /* pytorch-2.14: retraces begun (tracer(m)) */
    mpvec fake, meta, stor;  /* key node -> value node */
    mpvec mstor;             /* meta key -> the storage it had when its entry was
                                made (its finalizer's StorageWeakRef; weak) */
    mivec pending;           /* storage nodes, duplicates kept */
    mpvec cmap;              /* cstkept: the constant map, a constant conversion's
                                fake -> its constant's storage (held) */
} mmode;

/* actions (st_gen.c) */
enum {
    A_CTOR = 1, A_VIEW, A_NEWOP, A_INPLACE, A_SPARSE, A_MODE, A_MCONV, A_FAKE, A_META,
    A_REFAKE, A_ATTR, A_GRAD, A_DEL, A_WEAK, A_GC, A_SWEEP, A_WITH, A_END,
    A_SET, A_DTVIEW, A_STORAGE,  /* version 2: set_, view(dtype), t.storage() */
    A_FCONV, A_CFAKE,            /* version 2: fake_converter(), c.fake(m, t) */
    A_TRACER,                    /* version 3: tracer(m), tr.input(t), tr.finish() (sub) */
    A_CYCLE,                     /* h = k.unsqueeze(0); h.x = h; del h; gc() */
    A_SHAPE_ENV,                 /* version 3: c = shape_env() */
    A_ITEM, A_INFER              /* pytorch-2.14: expect f.item() == N, inference_mode(b) */
};

/* action variants (st_action.sub) and flags */
enum { C_EMPTY, C_ZEROS, C_ONES, C_RAND, C_STRIDED, C_COO, C_CSR, C_QUANT };
enum {
    VW_VIEW, VW_RESHAPE, VW_T, VW_TRANSPOSE, VW_SLICE, VW_SELECT, VW_NARROW, VW_UNSQUEEZE,
    VW_SQUEEZE, VW_EXPAND, VW_DIAGONAL, VW_DETACH, VW_NEG, VW_CONJ, VW_REAL, VW_AS_STRIDED,
    VW_COUNT
};
enum {
    NO_CLONE, NO_CONTIG, NO_TO_DTYPE, NO_TO_DEVICE, NO_ADD, NO_MUL, NO_SUM, NO_SUM_DIM,
    NO_MATMUL, NO_TO_DENSE, NO_COUNT
};
enum { IP_ADD, IP_MUL, IP_ZERO };
enum { SP_COALESCE, SP_INDICES, SP_VALUES, SP_TO_SPARSE };

/* flags */
enum {
    F_DTYPE = 1, F_DEVICE = 2, F_RG = 4, F_COAL = 8, F_SD = 16, F_EVERY = 32, F_STEP = 64,
    F_DST = 128,
    F_WREF = F_DTYPE,        /* A_MODE: mode_ref="weak" */
    F_SE = F_COAL,           /* A_MODE: shape_env=b (version 3) */
    F_PROP = F_SD,           /* A_MODE: propagate_real=true */
    F_CONST = F_COAL,        /* A_FAKE: constant=true */
    F_DYN = F_SD             /* A_FAKE: dynamic=true */
};

/* variable slots: t0..t7 f0..f5 m0..m2 c0..c1 w0..w3 */
enum { V_T = 0, NV_T = 8, V_F = 8, NV_F = 6, V_M = 14, NV_M = 3, V_C = 17, NV_C = 2,
       V_W = 19, NV_W = 4, NVARS = 23 };

typedef struct model {
    const st_config *c;
    mnode *n;
    uint32_t nn, ncap;
    mmode *m;
    uint32_t nm, mcap;
    int32_t var[NVARS];
    int32_t with[8];
    int nwith;
    uint64_t bytes;          /* live data bytes (bytes()) */
    uint32_t live_modes;     /* live("mode") */
    mivec work;              /* nodes whose count reached 0 */
    struct mdef *deferred;   /* deferred meta finalizers */
    uint32_t ndeferred, capdeferred;
    int draining;
    int oom;
    int32_t next_opkey;      /* 2.3: fresh keys (ids) of op outputs, < -1 */
    /* version-3 rules of the design (st_dcache.c) */
    uint8_t dcache;          /* a process-wide dispatch cache */
    uint8_t finish_clears;   /* tr.finish() clears the mode's tables */
    uint8_t vsrc;            /* a view of a fake view keeps it (mnode.vsrc) */
    int op_hit;              /* the op in hand was served from the cache */
    uint64_t *dc;            /* the cache's keys */
    size_t ndc, capdc;
    int64_t dc_hits, dc_misses;
    mpvec tracked;           /* ShapeEnv node -> a fake it tracks (strong) */
    /* pytorch-2.14's rules (st_dcache.c) and state */
    uint8_t umemo;           /* item() memos (version counter, epoch, inference) */
    uint8_t pcgc;            /* tr.finish() ends with a full collection */
    uint8_t cscalar;         /* constant_scalar; f.storage() clears constant */
    uint8_t infer;           /* inference mode is on */
    int32_t gen_mid, gen_old;   /* generations: nodes up to gen_old are in 2,
                                   up to gen_mid in 1, newer ones in 0 */
    int32_t mk_cst, mk_se;   /* the conversion in hand: constant=, dynamic= */
    uint64_t nbuilt;         /* fakes conversions built (a miss moves it) */
} model;

extern const char *const m_dtype_name[D_COUNT];
extern const uint8_t m_dtype_size[D_COUNT];
extern const uint8_t m_dtype_cat[D_COUNT];
extern const char *const m_dev_name[DV_COUNT];

int m_init(model *m, const st_config *c);
void m_free(model *m);

/* nodes */
int32_t m_new(model *m, uint8_t kind);            /* rc 1, alive; -1 on OOM */
static inline mnode *M(model *m, int32_t i) { return &m->n[i]; }
void m_ref(model *m, int32_t i);                  /* i may be -1 */
/* A new tensor node with t's device, geometry and storage (a reference
 * taken), the given dtype and flags: its index, or -1 on OOM. */
int32_t m_alias(model *m, int32_t t, uint8_t dtype, uint16_t flags);
void m_unref(model *m, int32_t i);                /* may kill; drains */
void m_set_edge(model *m, int32_t *slot, int32_t v);   /* ref v, unref old */

/* tensors */
int32_t m_storage(model *m, uint64_t nbytes, uint8_t dev);
int32_t m_strided(model *m, int nd, const int64_t *sz, const int64_t *st, uint8_t dt,
                  uint8_t dev);    /* st NULL: contiguous */
int32_t m_view(model *m, int32_t self, int nd, const int64_t *sz, const int64_t *st,
               int64_t off);
int32_t m_coo(model *m, int nd, const int64_t *sz, int sd, int64_t nnz, uint8_t dt,
              uint8_t dev, int coalesced);
int32_t m_csr(model *m, int64_t r, int64_t c, int64_t nnz, uint8_t dt, uint8_t dev);
int32_t m_fake_new(model *m, int32_t meta, int32_t mode, uint8_t fdev);   /* takes meta's ref */
/* The mode a node holds strongly: a fake's mode unless that is a
 * mode_ref="weak" mode (then -1), a tracer's mode. */
int32_t m_strong_mode(const model *m, const mnode *x);
/* t.set_(src) (PyTorch's set_(Tensor)): t takes src's storage and geometry. */
void m_set_(model *m, int32_t t, int32_t src);
/* t.view(dtype) for a dtype of the same element size: a new tensor over
 * t's storage, not a view, no grad (PyTorch 1.13.1). New ref. */
int32_t m_view_dtype(model *m, int32_t t, uint8_t dtype);
uint64_t m_storage_bytes(int nd, const int64_t *sz, const int64_t *st, int64_t off,
                         uint8_t dt);
int64_t m_numel(const mnode *t);
int m_is_contiguous(int nd, const int64_t *sz, const int64_t *st);
int m_is_dense(int nd, const int64_t *sz, const int64_t *st);
int m_view_strides(int nd, const int64_t *sz, const int64_t *st, int nn, const int64_t *nsz,
                   int64_t *out);
void m_contig(int nd, const int64_t *sz, int64_t *st);

/* modes and conversion */
int32_t m_mode_new(model *m, int is_mc, int policy, int64_t every);
uint64_t m_sweep(model *m, mmode *md);
int m_meta_unsupported(model *m, int32_t t);
/* new ref, -1 on error, M_META_NONE: the design's NotImplemented (none) */
#define M_META_NONE (-2)
int32_t m_meta_convert(model *m, mmode *md, int32_t t);
int32_t m_lookup(const mpvec *v, int32_t key);             /* value or -1 */
/* fake conversion: 0 ok (*out new ref), or an error class (MERR_*) with no
 * side effects beyond what PyTorch does before raising (misses). */
enum { MERR_NONE = 0, MERR_SHAPE, MERR_TYPE, MERR_UNSUP, MERR_SKIP };
int m_fake_check(model *m, mmode *md, int32_t t, int with_device);
int32_t m_fake(model *m, mmode *md, int32_t t, int with_device, uint8_t dev);
/* converter(mode, t) of a stand-alone FakeTensorConverter md: memoized in
 * md, the fake holds `owner` (a mode node). New ref. */
int32_t m_convert(model *m, mmode *md, int32_t t, int32_t owner);
/* m.fake(t, constant=true) (cst: t) / m.fake(t, dynamic=true) (se: the
 * mode's ShapeEnv): each fake the conversion builds holds cst / se. */
int32_t m_fake_v3(model *m, mmode *md, int32_t t, int32_t cst, int32_t se);
/* md's constant map loses its refs (unconst_only: those whose fake lives
 * without a constant, clear_non_cpu_constants' second step), their kept
 * storages released. */
void m_cmap_drop(model *m, mmode *md, int unconst_only);
/* se.tracked gains f (tr.input on a mode with a ShapeEnv). */
void m_track(model *m, int32_t se, int32_t f);
/* se's tracked fakes (only_alive: those still alive) leave model.tracked,
 * their references dropped (a dead ShapeEnv, tr.finish() under 2.3). */
void m_untrack(model *m, int32_t se, int only_alive);
/* A new fake output f of an op: memoized under a fresh key where the
 * design memoizes op outputs (2.3's from_meta_and_device). */
void m_op_output(model *m, int32_t f);
/* A constructor's fake f under `with`: its mode's memo entry where the
 * design memoizes constructors' outputs (pytorch-2.14). */
void m_ctor_output(model *m, int32_t f);
/* fake_converter(): an NK_MODE node flagged NF_FC with its own memos. */
int32_t m_converter_new(model *m, int policy, int64_t every);

/* version 3 (st_dcache.c): the design's dispatch cache and finish() rules */
void m_dc_init(model *m);
void m_dc_free(model *m);
/* Can the model say whether an op on slot node self (other: the other
 * operand's slot node or -1) hits the cache? (1 without a cache) */
int m_dc_predictable(const model *m, int32_t self, int32_t other);
/* The op `call` (its text from the first '.', tensor operands left out)
 * on fake self and other, which succeeds: 1 served from the cache (m->op_hit
 * set: its output gets no memo entry), 0 run (its key stored) or bypassed
 * (call NULL: a sparse output). */
int m_dc_dispatch(model *m, int32_t self, int32_t other, const char *call);
/* The ShapeEnv of a symbolic operand (self's first), or -1: the op's
 * output holds it. */
int32_t m_dc_symbolic(const model *m, int32_t self, int32_t other);
/* tr.finish() on a tracer of md: 2.3 empties md's tables (pytorch#171209),
 * its ShapeEnv's tracked fakes (pytorch#193015) and drops its fakes'
 * non-cpu constants (pytorch#184445). */
void m_finish_clears(model *m, mmode *md);

/* statement boundary: deferred finalizers, then (gc stress) a collection */
void m_end_statement(model *m);
void m_gc(model *m, int sweep);
/* A live view (a tensor with a base) is reachable from node v by strong
 * edges, v included. */
int m_reaches_view(model *m, int32_t v);
/* Another live node holds i by a strong edge (an attribute, ...). */
int m_held(model *m, int32_t i);
/* gc(N): a collection of generations 0..N (N >= 2: m_gc); what older
 * generations hold is kept; survivors move up one (src/core/gc.c). */
void m_gc_gen(model *m, int generation, int sweep);
/* pytorch-2.14: f.item() on fake node f whose mode has ShapeEnv se: the
 * symbol it answers (a valid memo's, else a new one, memoized outside
 * inference mode). An in-place op on t: its family's version + 1. A
 * constant fake's constant cleared (f.storage()): constant_scalar too. */
int32_t m_item(model *m, int32_t f, int32_t se);
void m_bump_version(model *m, int32_t t);
/* f's item() memo is stale by the mode's epoch alone (a retrace began
 * since it was stored; its version is the same). */
int m_item_stale(const model *m, int32_t f);
void m_clear_constant(model *m, int32_t f);
void m_run_deferred(model *m);

/* predictions */
int64_t m_unreachable(model *m, int *predictable);
mmode *m_mode_of_var(model *m, int slot);   /* live mode/converter bound at slot */

/* ---- op rules (st_rules.c): what PyTorch 1.13.1 makes of an op, as
 * tables of rows citing the rule each models ---- */

/* what an op's result is */
enum { P_SELF = 1, P_VIEW, P_DETACH, P_NEW, P_COO, P_CSR_CLONE, P_SDETACH, P_INDICES,
       P_VALUES };

typedef struct mplan {
    int kind;                /* P_* */
    int nd;
    int64_t sz[M_MAXD], st[M_MAXD], off;
    uint8_t dtype, dev;
    int ustr, contig, quant, rg, toggle;   /* toggle: NF_NEG / NF_CONJ bits to flip */
    int sd, coal;
    int64_t nnz;
} mplan;

/* The plan of action a (A_VIEW, A_NEWOP, A_SPARSE: a->sub) on node ti (a
 * fake's meta tensor), bi the other operand's node or -1: MERR_NONE with
 * *p, the error PyTorch raises, or MERR_SKIP (not predicted). No side
 * effects. */
int m_view_plan(const model *m, int32_t ti, const st_action *a, mplan *p);
int m_newop_plan(const model *m, int32_t ti, int32_t bi, const st_action *a, mplan *p);
int m_sparse_plan(const model *m, int32_t ti, const st_action *a, mplan *p);
/* The PyTorch rule a view / new-tensor row models (NULL past the table). */
const char *m_view_rule_source(int vw);
const char *m_new_rule_source(int no);
/* Operands ti and b of a binary op (slot nodes): fakes of one mode, or no
 * fake at all; *bi the node the op reads. MERR_NONE or MERR_TYPE. */
int m_operands(const model *m, int32_t ti, int32_t b, int32_t *bi);
/* An in-place op (A_INPLACE) on slot node si (a fake: the grad check on
 * the fake, the rest on its meta tensor): MERR_NONE, the error, MERR_SKIP. */
int m_inplace_rule(const model *m, int32_t si, const st_action *a);
/* Make plan p's result from slot node ti (a fake: on its meta tensor, then
 * wrapped as a fake; view_op: a view's fake is a view of the fake). New
 * reference, or -1 on OOM. */
int32_t m_run_plan(model *m, int32_t ti, const mplan *p, int view_op);
/* Constructor action a (sizes sz, dtype dt) on device `where` (meta inside
 * `with`): MERR_NONE, the error, or MERR_SKIP. */
int m_ctor_rule(const model *m, const st_action *a, const int64_t *sz, uint8_t dt,
                uint8_t where);
/* Build it (inside `with`: on meta, a fake of the innermost mode on dev).
 * New reference, or -1 on OOM. */
int32_t m_ctor(model *m, const st_action *a, const int64_t *sz, uint8_t dt, uint8_t dev);
int m_can_rg(uint8_t dtype);              /* floating or complex */
int64_t m_prod(const int64_t *v, int n);

#endif
