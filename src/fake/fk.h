/* fk.h - MetaConverter, FakeTensorConverter, fake modes, and the fake op
 * wrapper: PyTorch 1.13's torch/_subclasses/meta_utils.py and
 * fake_tensor.py, modelled for their memory behaviour (fakegc-semantics(7)).
 *
 *   obj *m = fk_mode_new(FK_SWEEP_EAGER, 128);
 *   ts_tensor *f = fk_fake(m, t, NULL);      // memoized; new reference
 *   fk_counters c; fk_counters_get(m, &c);   // c.memo_fake == 1
 *
 * Object graph (strong edges): fake tensor -> its meta tensor, its mode;
 * mode -> FakeTensorConverter -> MetaConverter -> meta tensors (tensor memo
 * values) and meta storages (storage memo values). Memo keys are weak; the
 * fake memo's values are weak. Finalizers (weakref.finalize on the real
 * tensor) hold a weak handle to their converter and remove the entries.
 *
 * Returned tensors are new references; NULL with the error record set
 * (ER_UNSUPPORTED with PyTorch's reason, ER_TYPE, ER_SHAPE, ER_OOM).
 */
#ifndef FAKEGC_FK_H
#define FAKEGC_FK_H

#include <stdint.h>

#include "core/obj.h"
#include "tensor/ts.h"

typedef enum fk_policy {
    FK_SWEEP_EAGER,      /* storage entry leaves when the storage dies */
    FK_SWEEP_PERIODIC    /* PyTorch 1.13: pending list, swept every N */
} fk_policy;
const char *fk_policy_name(fk_policy p);
int fk_policy_from_name(const char *s, fk_policy *out);

/* ---- memo designs (fakegc-semantics(7), DESIGNS) ----
 * One row per design; the fake layer reads the current row instead of
 * branching on a compat mode. Objects take the design current when they are
 * made (modes, converters); the scenario runner sets it per scenario.
 * FK_D_DEFAULT is fakegc's own design (no --compat, no config compat). */
typedef enum fk_design_id {
    FK_D_DEFAULT, FK_D_1_13, FK_D_2_0, FK_D_2_3, FK_D_2_14, FK_D_COUNT
} fk_design_id;

/* The weak tables a design has (fk_design.tables[]). */
typedef enum fk_table_id {
    FK_T_TENSOR_MEMO,     /* MetaConverter.tensor_memo */
    FK_T_STORAGE_MEMO,    /* MetaConverter.storage_memo */
    FK_T_FAKE_MEMO,       /* FakeTensorConverter.tensor_memo (1.13) */
    FK_T_LOOKUP_TENSOR,   /* MetaTensorDescriber.lookup_tensor (2.3) */
    FK_T_LOOKUP_STORAGE,  /* MetaTensorDescriber.lookup_storage (2.3) */
    FK_T_COUNT
} fk_table_id;

/* What a table keys on: the real object itself (a weak key), or the
 * describer's integer id for it (a strong key that never dies). */
typedef enum fk_key_kind {
    FK_KEY_NONE, FK_KEY_TENSOR, FK_KEY_STORAGE, FK_KEY_TENSOR_ID, FK_KEY_STORAGE_ID
} fk_key_kind;

/* Which deaths clear an entry (fk_table_spec.clears). */
enum {
    FK_CLR_KEY = 1u << 0,       /* the key's own weak callback (WeakIdKeyDictionary) */
    FK_CLR_VALUE = 1u << 1,     /* its weak value dies (WeakValueDictionary) */
    FK_CLR_FINALIZER = 1u << 2, /* a weakref.finalize on the real tensor (del_ten) */
    FK_CLR_SWEEP = 1u << 3      /* a pending StorageWeakRef, at the next sweep */
};

typedef struct fk_table_spec {
    unsigned char exists;
    unsigned char key;          /* fk_key_kind */
    unsigned char value_weak;   /* the value is held weakly */
    unsigned char clears;       /* FK_CLR_* */
} fk_table_spec;

/* fk_design.meta_storage_size */
typedef enum fk_ms_size { FK_MS_EXTENT, FK_MS_GROWS, FK_MS_REAL } fk_ms_size;

typedef struct fk_design {
    const char *name;          /* the --compat / config compat value */
    const char *what;          /* one line: what it models */
    const char *brief;         /* what it models in a few words, where help
                                  describes it (the default's: --compat's
                                  help); NULL: help does not */
    fk_policy policy;          /* of modes made without sweep= */
    unsigned char fake_memo;   /* the FakeTensorConverter has a memo of its own;
                                  0: one memo, the MetaConverter's, whose
                                  values are the fakes it builds */
    unsigned char memo_values_weak; /* MetaConverter memo values are weak: an
                                  entry leaves when its value dies */
    unsigned char fakes_are_views;  /* a fake of a view is a view of its base's
                                  fake, and holds it */
    unsigned char fix_weakref_leak; /* a fake memo hit makes the fake immortal */
    unsigned char view_flags_from_base; /* a converted view's requires_grad and
                                  leafness are its as_strided's off the meta
                                  base, not the real view's */
    unsigned char op_outputs_memoized; /* each new output of an op dispatched
                                  on fakes (a conversion's fake-view step
                                  included) gets a tensor-memo entry of its
                                  own under a fresh id (from_meta_and_device) */
    unsigned char ctor_outputs_memoized; /* a constructor's fake under `with`
                                  gets a tensor-memo entry under a fresh id
                                  (from_meta_and_device), as op outputs do */
    unsigned char views_keep_source; /* a view op on a fake view: the output
                                  keeps that fake view alive (ts_tensor.view_src) */
    unsigned char meta_storage_size; /* a converted non-view's meta storage
                                  (fk_ms_size): FK_MS_EXTENT each conversion
                                  sets it to exactly the tensor's extent;
                                  FK_MS_GROWS a fresh one at storage offset 0
                                  takes the extent (empty_strided), another
                                  the real storage's size, and set_ over a
                                  memoized one only grows it; FK_MS_REAL the
                                  real storage's size, set_ only grows it */
    unsigned char foreign_fakes_raise; /* an op under `with m` on a fake of
                                  another mode raises TypeError ("Mixing
                                  fake modes NYI"); 0: its output is m's */
    unsigned char meta_miss_none;  /* mode.meta(t) of a tensor its one-memo
                                  MetaConverter rejects answers NotImplemented
                                  (the scenario's none), not t itself */
    unsigned char csr_converts;    /* a sparse CSR tensor converts (to a meta
                                  CSR, nnz 0), a hit; 0: "meta converter nyi" */
    /* the lifecycle after 2.3 (fakegc-semantics(7), DESIGNS) */
    unsigned char unbacked_memo;   /* f.item() memoizes its unbacked symbol on
                                  the fake (item_memo, holding the ShapeEnv),
                                  valid while the fake's version counter and
                                  its mode's epoch are those it was made
                                  under; not stored in inference mode;
                                  tracer(m) starts a retrace: m.epoch + 1 */
    unsigned char post_compile_gc; /* FK_PCGC_*: what tr.finish() collects */
    unsigned char constant_scalar; /* a constant fake of a 0-d CPU tensor also
                                  holds it as constant_scalar, cleared with
                                  constant; a storage access (f.storage())
                                  clears constant */
    unsigned char const_storage_kept; /* the constant map's StorageWeakRef
                                  keeps the storage object (and so its
                                  lookup_storage id) alive after its tensor
                                  died, until the ref leaves the map */
    unsigned char base_held_from_cpp; /* a view holds its base from C++,
                                  where the collector cannot see it: the
                                  base, and what it reaches, live while the
                                  view does (ts_set_base_hidden) */
    fk_table_spec tables[FK_T_COUNT];
} fk_design;

/* fk_design.post_compile_gc: Dynamo's collection after a compile */
enum { FK_PCGC_NONE, FK_PCGC_YOUNG /* gc.collect(1) */, FK_PCGC_FULL /* gc.collect() */ };

/* The row's table t ({0} when the design has none). */
const fk_table_spec *fk_design_table(const fk_design *d, fk_table_id t);
/* The design keeps finalizers / a pending list with its sweep. */
int fk_design_has_finalizers(const fk_design *d);
int fk_design_sweeps(const fk_design *d);

const fk_design *fk_design_get(fk_design_id id);       /* NULL: no such row */
/* The --compat names ("pytorch-1.13", ...); "default" is not one. 0 or -1. */
int fk_design_from_name(const char *s, fk_design_id *out);
/* "pytorch-1.13, ..." into buf (for messages); returns its length. */
size_t fk_design_names(char *buf, size_t n);
void fk_design_set(fk_design_id id);
fk_design_id fk_design_current(void);
const fk_design *fk_design_now(void);
/* The row's rules are consistent (no rule that needs a table it lacks).
 * 0 or -1 with why. */
int fk_design_verify(fk_design_id id, char *why, size_t n);
/* The same checks on any row (tests build broken ones): each table's key
 * kind allows the deaths that clear it, id keys need the describer's
 * lookup table, weak values are cleared by their death, a periodic policy
 * needs a sweep, and the flags agree with the tables. */
int fk_design_check(const fk_design *d, char *why, size_t n);

/* Injectable bugs (fakegc-semantics(7), INJECTABLE BUGS); all off by default. */
typedef struct fk_bugs {
    int strong_memo;               /* memo keys hold real tensors strongly */
    int strong_storage_memo;       /* storage memo holds storages strongly */
    int finalizer_holds_converter; /* finalizer payload is the converter */
    int no_sweep;                  /* pending storages never checked */
    int id_reuse;                  /* keys are addresses (+ deferred finalizers,
                                      set by the caller via obj_configure) */
    int strong_fake_value;         /* fake memo values strong: a cycle */
    int fix_weakref;               /* PyTorch 1.13.1's own leak: a fake memo
                                      hit calls _fix_weakref, after which the
                                      fake (and so its mode) is never freed */
    /* version 3, designs.md "Injectable bugs" (each a PyTorch fault) */
    int constant_retains_real;     /* finish/clear_non_cpu_constants keep them */
    int cache_holds_shape_env;     /* symbolic ops cached with their ShapeEnv */
    int no_clear_after_compile;    /* tr.finish() leaves the mode's tables */
    int converter_closure_cycle;   /* a miss leaves a cycle holding the converter */
    int fake_holds_mode;           /* mode_ref="weak" ignored */
    int premature_weak_clear;      /* gc clears weak refs of survivors */
    int tracer_holds_real;         /* a graph argument holds its real example */
    int shape_env_tracks_real;     /* tr.finish() leaves se.tracked */
    /* the lifecycle after 2.3 (pytorch-2.14) */
    int codegen_closure_cycle;     /* tr.input(t) leaves a garbage cycle holding t */
    int young_gc_after_compile;    /* tr.finish() collects generations 0-1 only */
    int unbacked_memo_retrace;     /* an item memo ignores the mode's epoch */
    int inference_memo;            /* item memos are stored in inference mode */
    int constant_scalar_kept;      /* clearing constant leaves constant_scalar */
} fk_bugs;
void fk_set_bugs(const fk_bugs *b);
fk_bugs fk_get_bugs(void);

/* Apply a comma-separated list of bug names ("strong-memo,
 * early-free"): sets fk_bugs, ts_bugs and the ordering knobs a bug needs
 * (id-reuse defers callbacks). "" or NULL resets everything to off.
 * 0, or -1 with a message naming the valid bugs in err. */
int fk_inject(const char *csv, char *err, size_t errlen);
/* The list fk_inject last applied ("" when none). */
const char *fk_inject_active(void);
/* The bug names with one-line descriptions, for `fakegc list bugs`. */
typedef struct fk_bug_info {
    const char *name, *what;
    unsigned designs;          /* bit (1u << fk_design_id) per design it applies to */
} fk_bug_info;
const fk_bug_info *fk_bug_list(size_t *n);
/* The names of the designs in the mask `designs` (bit 1u << fk_design_id),
 * sep between them, dflt for FK_D_DEFAULT ("default, pytorch-1.13"), in
 * buf (n > 0, truncated at a whole name). Its length. */
size_t fk_designs_named(unsigned designs, const char *sep, const char *dflt, char *buf,
                        size_t n);
/* Every bug of csv applies to design d: 0, or -1 with "bug 'X' does not
 * apply to pytorch-2.3 (it applies to: ...)" in err. Unknown names are
 * fk_inject's to report (0 here). */
int fk_inject_check(const char *csv, fk_design_id d, char *err, size_t errlen);

/* ---- MetaConverter ---- */
obj *fk_meta_converter_new(fk_policy policy, int64_t sweep_every);
/* MetaConverter.__call__: meta tensor for t (new ref), or t itself (new ref)
 * on a miss (unsupported input). Counts hits/misses as PyTorch 1.13. */
ts_tensor *fk_meta_convert(obj *mc, ts_tensor *t);
/* check_for_expired_weak_storages now; returns storage entries freed. */
uint64_t fk_meta_sweep(obj *mc);

/* ---- fake modes ---- */
obj *fk_mode_new(fk_policy policy, int64_t sweep_every);
/* mode.fake(t) / mode.fake(t, device=...): FakeTensorConverter.__call__. */
ts_tensor *fk_fake(obj *mode, ts_tensor *t, const ts_device *device);
/* A stand-alone FakeTensorConverter() with its own MetaConverter. */
obj *fk_fake_converter_new(fk_policy policy, int64_t sweep_every);
int fk_is_fake_converter(const obj *o);
/* converter(mode, t): a fake of `mode` (it holds the mode), memoized in the
 * converter `conv` (not in the mode's own converter). */
ts_tensor *fk_convert(obj *conv, obj *mode, ts_tensor *t);
/* mode.meta(t): its MetaConverter's result. A tensor it rejects (a miss)
 * comes back as itself, or, where the design says meta_miss_none, as NULL
 * with *none set and no error (PyTorch's NotImplemented); with none NULL,
 * that answer is an UnsupportedFakeTensor error. */
ts_tensor *fk_mode_meta(obj *mode, ts_tensor *t, int *none);
/* mode.sweep(): the expired-storage check of its MetaConverter. */
uint64_t fk_sweep(obj *mode_or_converter);
/* A constructor inside `with mode`: wrap a freshly built meta tensor as a
 * fake tensor of mode on `device`, memoized only where the design says
 * (ctor_outputs_memoized) and never when op_output (an op's output written
 * by its geometry, a recording's op_out(): PyTorch made it without a memo
 * entry). 0-1 new reference. */
ts_tensor *fk_wrap_new(obj *mode, ts_tensor *meta, ts_device device, int op_output);

/* Fake-aware op: if self (or args->other) is fake, run op on the meta
 * tensors and wrap each tensor output as a fake of the same mode (an
 * in-place op returns self). Mixing fakes of two modes, or a fake with a
 * real non-meta tensor, is ER_TYPE. Otherwise ts_apply. */
ts_tensor *fk_apply(ts_op op, ts_tensor *self, const ts_args *a);
/* fk_apply under `with active` (NULL: outside any with), PyTorch 1.13.1's
 * FakeTensorMode.__torch_dispatch__: fakes of two modes -> ER_TYPE "Mixing
 * modes"; a fake with a non-fake tensor (meta included) -> ER_TYPE
 * "non-Fake Tensor inputs"; the result is a fake of `active` when given,
 * else of the inputs' mode. In-place ops on a fake refresh its metadata
 * from its meta tensor (set_). */
ts_tensor *fk_apply_in(ts_op op, ts_tensor *self, const ts_args *a, obj *active);

/* ---- counters ---- */
typedef struct fk_counters {
    int64_t memo_fake;     /* -1 for a stand-alone MetaConverter */
    int64_t memo_meta, memo_storage, pending;
    int64_t hits, misses, sweep_every, check_count;
    /* version 3: the tensor memo's keys, the storage memo's keys, the
     * constant map's refs (no constants are made: 0) */
    int64_t memo_tensor_ids, memo_storage_ids, memo_constants;
} fk_counters;
/* From a mode, a FakeTensorConverter or a MetaConverter. 0 or -1 (ER_TYPE). */
int fk_counters_get(obj *o, fk_counters *out);
int fk_is_mode(const obj *o);
int fk_is_meta_converter(const obj *o);

/* Sweep every live MetaConverter (gc() does this). Returns entries freed. */
uint64_t fk_sweep_all(void);
/* Memo entries whose key is dead but still present, over every converter. */
uint64_t fk_stale_all(void);
/* Memo hits that returned an object made for another key (possible only
 * with address keys, the id-reuse bug). Sticky until fk_reset. */
uint64_t fk_wrong_hits(void);
/* Between scenarios: run deferred finalizers, zero fk_wrong_hits. */
void fk_reset(void);

/* Invariants of one converter (or all when o is NULL): memo counts match
 * their tables; every tensor-memo key is alive (eager) or its finalizer is
 * pending; every storage-memo key is alive, or expired and pending
 * (periodic); pending <= the sweep bound; every fake-memo hit's source_id
 * equals the key's id. 0 or -1 with why. */
int fk_verify(obj *o, char *why, size_t n);

extern const obj_type fk_mode_type, fk_fake_converter_type, fk_meta_converter_type;

/* ---- version 3: constants, ShapeEnv, tracer, dispatch cache ----
 * (designs.md "Common to both 2.x designs" rule 6 and "Additions, version 3".)
 * fk_const.c: a constant conversion gives `constant = t` (strong, the
 * fake's "constant" edge) to each fake it builds and records a weak ref to
 * the returned fake under StorageWeakRef(t's storage) in the converter's
 * constant map (memo_constants). fk_shape.c: ShapeEnv (tracked fakes, its
 * own op cache) and dynamic fakes (their "shape_env" edge). fk_tracer.c: a
 * compile's graph arguments. fk_cache.c: the process-wide dispatch cache
 * (live only where the design has one). Each returns NULL / -1 with the
 * error set (ER_TYPE for misuse, ER_OOM). */

/* Options of fake_mode() beyond the sweep policy. */
typedef struct fk_mode_opts {
    obj *shape_env;        /* NULL, or a ShapeEnv the mode holds */
    int propagate_real;    /* converted non-view fakes hold a real copy */
    int mode_ref_weak;     /* its fakes hold it weakly */
} fk_mode_opts;
obj *fk_mode_new_v3(fk_policy policy, int64_t sweep_every, const fk_mode_opts *o);

/* How m.fake(t, ...) converts. */
typedef struct fk_fake_opts {
    const ts_device *device;   /* from_meta_and_device, or NULL */
    int constant;              /* make_constant=True */
    int dynamic;               /* sizes are symbols of the mode's ShapeEnv */
} fk_fake_opts;
ts_tensor *fk_fake_v3(obj *mode, ts_tensor *t, const fk_fake_opts *o);

/* f.constant(): the real tensor fake f holds as its constant (borrowed),
 * or NULL when it has none; -1 (ER_TYPE) when f is not a fake. */
int fk_constant_of(ts_tensor *f, ts_tensor **out);
/* m.clear_non_cpu_constants(): how many constants it dropped. */
int64_t fk_clear_non_cpu_constants(obj *mode);
/* m.clear_weakrefs(): empties the mode's describer tables (lookup_tensor,
 * lookup_storage), as TorchDynamo does at a compile's end from PyTorch 2.14
 * (torch/_dynamo/convert_frame.py 2.14.1:216-246,
 * _clear_fake_mode_weakrefs); its memos stay. Returns the entries dropped;
 * -1 with ER_TYPE when mode is no mode or its design has no describer
 * (pytorch-1.13, pytorch-2.0). */
int64_t fk_mode_clear_weakrefs(obj *mode);
/* The mode a fake belongs to (borrowed): NULL with ER_DEAD_REF when its
 * weak mode reference died; ER_TYPE when t is not a fake. */
obj *fk_fake_mode_of(ts_tensor *t);
/* The ShapeEnv a mode holds (borrowed), or NULL. */
obj *fk_mode_shape_env(obj *mode);

obj *fk_shape_env_new(void);
int fk_is_shape_env(const obj *o);
int64_t fk_shape_env_cache_size(const obj *se);
int64_t fk_shape_env_tracked(const obj *se);
/* Backed symbols (fk_shape.c). fk_shape_env_symbols: how many (se.symbols).
 * fk_shape_symbol_for: the symbol whose hint is `hint`, made when none is
 * (duck sizing), or -1 (ER_OOM). fk_shape_hint: s<sym>'s hint into *hint,
 * 0; -1 with ER_SHAPE when the ShapeEnv has no such symbol. */
int64_t fk_shape_env_symbols(const obj *se);
int64_t fk_shape_symbol_for(obj *se, int64_t hint);
int fk_shape_hint(const obj *se, int64_t sym, int64_t *hint);
/* Symbolic size expressions as hashes (0: a plain number, no symbol):
 * s<sym> of se; a op b ('+', '-', '*', '/' for //) from the operands'
 * values and hashes (+ and * in either order hash alike); the signature
 * of n sizes (v: hints, sym: their hashes), 0 when none is symbolic. */
uint64_t fk_sym_of_symbol(const obj *se, int64_t sym);
uint64_t fk_sym_combine(int op, int64_t a, uint64_t ha, int64_t b, uint64_t hb);
uint64_t fk_sym_sizes_sig(int n, const int64_t *v, const uint64_t *sym);
/* A fake's size signature (0: none), and setting it: f then holds se too
 * (its "shape_env" edge) when se is given. 0 or -1 (ER_OOM). */
uint64_t fk_fake_sym_sig(const ts_tensor *f);
int fk_fake_set_sym(ts_tensor *f, obj *se, uint64_t sig);

/* make_fx's GraphModule, reduced (fk_graph.c): a holder whose user
 * attributes are its nodes' meta["val"]; NULL with ER_OOM. */
obj *fk_graph_module_new(void);
int fk_is_graph_module(const obj *o);

obj *fk_tracer_new(obj *mode);
int fk_is_tracer(const obj *o);
ts_tensor *fk_tracer_input(obj *tr, ts_tensor *t);   /* new reference */
int fk_tracer_finish(obj *tr);

/* The dispatch cache: one per process, entries held by no object (the
 * scenario runner clears it before each scenario and before reclaiming). */
typedef struct fk_cache_stats {
    int64_t size, hits, misses, bypasses;
    uint64_t bytes;             /* the entries' table (AL_K_MEMO, no object's) */
} fk_cache_stats;
void fk_cache_stats_get(fk_cache_stats *out);
void fk_cache_clear(void);
/* Drop the entries that hold no object (their counters stay), freeing the
 * table when none is left: what a scenario leaves in the process's cache
 * is then only what its entries hold. */
void fk_cache_trim(void);
/* A handle object for `fake_cache()` (new reference; one while held). */
obj *fk_cache_handle(void);
int fk_is_cache_handle(const obj *o);
/* The cache as an object while its entries hold objects (only under
 * cache-holds-shape-env), else NULL (borrowed): the handle, whose edges
 * are the entries' ("entry", N), for reports' roots ("fake_cache"). */
obj *fk_cache_anchor(void);
/* gc(): a full collection (gc_collect), under premature-weak-clear also
 * clearing the memo keys of what the collected objects referenced. */
uint64_t fk_collect(void);
/* gc(N), N < 2: a collection of generations 0..N (gc_collect_gen). */
uint64_t fk_collect_young(int generation);

/* ---- the lifecycle after 2.3 (fk_unbacked.c; designs with unbacked_memo) ----
 * f.item() on a fake whose mode has a ShapeEnv: the number of the unbacked
 * symbol it stands for (u0 is 0), into *out. A valid memo (made at the
 * fake's version and its mode's epoch) answers again; else the ShapeEnv
 * makes a new symbol, and, outside inference mode, the fake memoizes it
 * (its "item_memo" edge to a SymInt that holds the ShapeEnv). 0 or -1:
 * ER_TYPE (not a fake, no ShapeEnv, the design has no such memo), ER_SHAPE
 * (numel != 1), ER_DEAD_REF (the mode is dead), ER_OOM. */
int fk_item(ts_tensor *f, int64_t *out);
/* inference_mode(on): torch.inference_mode() around what follows. */
void fk_set_inference_mode(int on);
int fk_inference_mode(void);
/* An in-place op (or set_) ran on t: its view family's version + 1. */
void fk_bump_version(ts_tensor *t);
/* A mode's epoch (retraces begun), a ShapeEnv's unbacked symbols made. */
int64_t fk_mode_epoch(const obj *mode);
int64_t fk_shape_env_unbacked(const obj *se);
/* f.storage() on a fake: under constant_scalar designs its constant is
 * cleared (pytorch#177496's untyped_storage). 0 or -1 (ER_OOM). */
int fk_storage_accessed(ts_tensor *f);
/* Between scenarios: inference mode off. */
void fk_unbacked_reset(void);

#endif
