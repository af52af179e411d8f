/* fk_internal.h - structures shared by the files of src/fake. */
#ifndef FAKEGC_FK_INTERNAL_H
#define FAKEGC_FK_INTERNAL_H

#include "core/wt.h"
#include "fake/fk.h"

typedef struct fk_mconv {
    obj hdr;                    /* OBJ_META_CONVERTER */
    wt_table *tensor_memo;      /* real tensor -> meta tensor (strong values) */
    wt_table *storage_memo;     /* real storage -> meta storage (strong values) */
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
/* Run deferred (id-reuse) finalizers now; returns how many ran. */
size_t fk_run_deferred(void);

#endif
