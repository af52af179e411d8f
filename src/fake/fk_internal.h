/* fk_internal.h - structures shared by the files of src/fake. */
#ifndef FAKEGC_FK_INTERNAL_H
#define FAKEGC_FK_INTERNAL_H

#include "core/wt.h"
#include "fake/fk.h"

typedef struct fk_mconv {
    obj hdr;                    /* OBJ_META_CONVERTER */
    /* Keys and values as the design's tables say (fk_design.tables): in
     * 1.13 and 2.0 real tensor -> meta tensor or fake, real storage -> meta
     * storage; in 2.3 id -> fake (or meta tensor) and id -> meta storage,
     * weak values, the ids being the describer's id objects. */
    wt_table *tensor_memo;
    wt_table *storage_memo;
    /* 2.3's MetaTensorDescriber (NULL in other designs): real tensor -> id,
     * real storage -> id, weak keys; ids from counters, never reused */
    wt_table *lookup_tensor, *lookup_storage;
    int64_t next_tensor_id, next_storage_id;
    ts_storage **pending;       /* maybe_storages_to_delete: weak counts */
    size_t npending, cap_pending;
    fk_policy policy;
    int64_t check_expired_frequency, check_expired_count;
    int64_t hits, misses;
    const fk_design *design;    /* the design current when it was made */
    obj *self_ref;              /* weakref.ref(self), shared by finalizers */
    struct fk_mconv *list_prev, *list_next;   /* every live converter */
} fk_mconv;

/* The constant map (fake_tensor.py@946abe14:241-268): one ref per constant
 * conversion, a StorageWeakRef key and a weakref.ref to the fake (both
 * weak counts). Entries leave only by invalidate_constant_aliases (and
 * clear_non_cpu_constants). fk_const.c. */
typedef struct fk_cref {
    ts_storage *st;             /* strong when `kept` (const_storage_kept) */
    ts_tensor *fake;
    int kept;
} fk_cref;
typedef struct fk_cmap {
    fk_cref *v;
    size_t n, cap;
} fk_cmap;
void fk_cmap_free(fk_cmap *m);
void fk_cmap_traverse_weak(const fk_cmap *m, obj_visit_fn visit, void *arg);
void fk_cmap_traverse(const fk_cmap *m, obj_visit_fn visit, void *arg);   /* kept storages */

typedef struct fk_fconv {
    obj hdr;                    /* OBJ_FAKE_CONVERTER */
    wt_table *tensor_memo;      /* real tensor -> fake tensor (weak values) */
    fk_mconv *meta;             /* strong */
    obj *self_ref;
    const fk_design *design;    /* the design current when it was made */
    struct fk_fconv *list_prev, *list_next;
    fk_cmap cmap;               /* version 3: constant_storage_mapping */
} fk_fconv;

typedef struct fk_mode {
    obj hdr;                    /* OBJ_FAKE_MODE */
    fk_fconv *converter;        /* strong */
    /* version 3 */
    obj *shape_env;             /* strong, or NULL */
    obj *weak_self;             /* mode_ref="weak": what its fakes hold */
    unsigned propagate_real : 1;
    unsigned epoch : 31;        /* retraces begun (fake_mode.epoch) */
} fk_mode;

/* What a fake of `m` holds as its mode: m, or m's weak handle. */
obj *fk_mode_holder(fk_mode *m);
/* A fake was just built for real tensor `real` by a conversion of `m`:
 * the constant, real copy and ShapeEnv the conversion in progress gives it.
 * 0 or -1 (ER_OOM). fk_const.c. */
int fk_v3_built(fk_mode *m, ts_tensor *fake, ts_tensor *real);
/* Around an op on fakes (fk_apply_in, mode: what the fakes hold as their
 * mode): fk_v3_pre_op checks the dispatch cache and propagates constants
 * (*out set: the op's result, nothing else to run); fk_v3_post_op stores
 * the cache entry of a miss and gives the output its ShapeEnv. fk_mode3.c. */
typedef struct fk_opctx {
    int cache_hit;              /* served from the dispatch cache */
    int cache_store;            /* a miss to store once the op ran */
    int se_store;               /* ... in the ShapeEnv's own cache (symbolic) */
    uint64_t key;
    obj *hold;                  /* what the entry holds (the bug's ShapeEnv) */
    obj *symbolic;              /* the inputs' ShapeEnv, when symbolic */
    uint64_t sym_in;            /* the op and its inputs' size signatures, or 0 */
    obj *mode;                  /* the mode itself (not its weak handle) */
} fk_opctx;
int fk_v3_pre_op(ts_op op, ts_tensor *self, const ts_args *a, obj *mode, fk_opctx *cx,
                 ts_tensor **out);
int fk_v3_post_op(ts_op op, ts_tensor *self, const ts_args *a, ts_tensor *out,
                  fk_opctx *cx);

/* The version-3 rules of a design (fk_cache.c: rows by design name). */
typedef struct fk_v3_rules {
    fk_design_id design;
    unsigned dispatch_cache : 1;   /* the process-wide dispatch cache */
    unsigned finish_clears : 1;    /* tr.finish() clears tables, tracked, constants */
    unsigned se_cache_counted : 1; /* a symbolic op's ShapeEnv-cache lookup counts a
                                      hit or a miss in the process counters */
} fk_v3_rules;
/* The op's dispatch-cache key (fk_cache.c): its arguments' metadata. */
uint64_t fk_op_key(ts_op op, const ts_tensor *self, const ts_args *a);
const fk_v3_rules *fk_v3_rules_now(void);
int fk_cache_pre_op(ts_op op, ts_tensor *self, const ts_args *a, fk_mode *m, fk_opctx *cx);
int fk_cache_post_op(fk_opctx *cx, const ts_tensor *out);

/* fk_const.c */
ts_tensor *fk_const_get(const ts_tensor *f);          /* borrowed, or NULL */
/* c NULL: none (and, where the design has constant_scalar, no
 * constant_scalar either, unless constant-scalar-kept); a 0-d CPU c is
 * also the fake's constant_scalar there */
int fk_const_set(ts_tensor *f, ts_tensor *c);
void fk_const_invalidate(fk_fconv *fc, const ts_tensor *t);
int fk_const_check(const ts_tensor *t);
int fk_const_record(fk_fconv *fc, ts_tensor *f, ts_tensor *t);
int fk_const_pre_op(ts_op op, ts_tensor *self, const ts_args *a, fk_mode *m,
                    ts_tensor **out);
void fk_const_written(ts_op op, ts_tensor *self, fk_mode *m);

/* fk_shape.c */
int64_t fk_shape_new_unbacked(obj *se);        /* the new symbol's number */
int fk_shape_track(obj *se, ts_tensor *f);
void fk_shape_untrack(obj *se);
int fk_shape_cache(obj *se, uint64_t key);     /* its own op cache */
int fk_shape_cached(const obj *se, uint64_t key);
/* A dynamic conversion's fake f: each dimension of size 2 or more gets
 * the symbol of its size (made when none has it), and f its signature. */
int fk_fake_dynamic_sizes(ts_tensor *f, obj *se);

/* fk_conv.c: the tables a compile's end clears (tr.finish() under 2.3),
 * and every memo entry keyed by `key` (premature-weak-clear). */
void fk_mode_clear_tables(fk_mode *m);
void fk_forget_key(const obj *key);

extern fk_bugs fk_bug_state;

/* MetaConverter.meta_tensor without the hit/miss accounting. */
ts_tensor *fk_meta_tensor(fk_mconv *mc, ts_tensor *t);
/* A new output of an op dispatched on fakes of `mode`: in designs that
 * memoize op outputs (2.3's from_meta_and_device), its entry under a fresh
 * id. 0, or -1 (ER_OOM). */
int fk_memo_op_output(obj *mode, ts_tensor *out);
/* Run deferred (id-reuse) finalizers now; returns how many ran. */
size_t fk_run_deferred(void);

#endif
