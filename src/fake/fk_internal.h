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

typedef struct fk_fconv {
    obj hdr;                    /* OBJ_FAKE_CONVERTER */
    wt_table *tensor_memo;      /* real tensor -> fake tensor (weak values) */
    fk_mconv *meta;             /* strong */
    obj *self_ref;
    const fk_design *design;    /* the design current when it was made */
    struct fk_fconv *list_prev, *list_next;
} fk_fconv;

typedef struct fk_mode {
    obj hdr;                    /* OBJ_FAKE_MODE */
    fk_fconv *converter;        /* strong */
} fk_mode;

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
