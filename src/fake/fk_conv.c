/* fk_conv.c - MetaConverter and FakeTensorConverter with their weak memos,
 * finalizers and the expired-storage sweep (PyTorch 1.13's meta_utils.py
 * and fake_tensor.py; see fakegc-semantics(7) for every rule modelled here). */
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/wr.h"
#include "fake/fk_internal.h"

fk_bugs fk_bug_state;

/* A fake that _fix_weakref made immortal (pytorch-1.13, or the fix-weakref
 * bug in the default design): the reference it took is no holder's. */
#define FK_F_IMMORTAL OBJ_F_OWNERLESS

static fk_mconv *mconv_list;      /* every live MetaConverter */
static fk_fconv *fconv_list;      /* every live FakeTensorConverter */
static uint64_t wrong_hits;       /* memo hits answered for another key */

void fk_set_bugs(const fk_bugs *b)
{
    if (b)
        fk_bug_state = *b;
    else
        memset(&fk_bug_state, 0, sizeof fk_bug_state);
}

fk_bugs fk_get_bugs(void) { return fk_bug_state; }

const char *fk_policy_name(fk_policy p)
{
    return p == FK_SWEEP_PERIODIC ? "periodic" : "eager";
}

int fk_policy_from_name(const char *s, fk_policy *out)
{
    if (strcmp(s, "eager") == 0)
        *out = FK_SWEEP_EAGER;
    else if (strcmp(s, "periodic") == 0)
        *out = FK_SWEEP_PERIODIC;
    else
        return er_set(ER_TYPE, "unknown sweep policy '%s' (eager, periodic)", s);
    return 0;
}

/* ---------------------------------------------------------------------
 * Finalizers: weakref.finalize(t, del_ten). A finalizer is held by the
 * (implicit) finalizer registry - its one strong reference is its own -
 * until its tensor dies; then it runs del_ten and dies. It holds its
 * converter through the converter's shared weak handle (strongly, under the
 * finalizer-holds-converter bug).
 * ------------------------------------------------------------------- */

typedef struct fk_fin {
    obj hdr;                  /* OBJ_FINALIZER */
    obj_cb cb;                /* on the real tensor */
    obj *conv_ref;            /* strong: weak handle to the converter, or
                                 the converter itself (bug) */
    uint64_t key_id;
    const obj *key_addr;      /* the key's address (a big memo finds it by that) */
    ts_storage *weak_st;      /* StorageWeakRef: a weak count, or NULL */
    int is_meta;              /* MetaConverter's del_ten, else the fake one */
    struct fk_fin *defer_next;
} fk_fin;

static fk_fin *deferred_head, *deferred_tail;

static void fin_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_fin *f = (fk_fin *)self;
    if (f->conv_ref)
        visit(f->conv_ref, "converter", -1, arg);
}

static void fin_traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    fk_fin *f = (fk_fin *)self;
    if (f->weak_st)
        visit(&f->weak_st->hdr, "storage_ref", -1, arg);
}

static void fin_release(obj *self)
{
    fk_fin *f = (fk_fin *)self;
    obj_cb_unregister(&f->cb);
    obj_clear_ref(&f->conv_ref);
    if (f->weak_st) {
        ts_storage *s = f->weak_st;
        f->weak_st = NULL;
        obj_weak_decref(&s->hdr);
    }
}

static void fin_describe(const obj *self, char *buf, size_t n)
{
    const fk_fin *f = (const fk_fin *)self;
    snprintf(buf, n, "finalize(tensor#%llu, %s del_ten)",
             (unsigned long long)f->key_id,
             f->is_meta ? "MetaConverter" : "FakeTensorConverter");
}

/* Two finalizers per conversion, dropped with their tensors: a pool in
 * front of the allocator (same counters, checker view and fault points as
 * al_malloc; see alloc/al.h). */
static al_pool fin_pool = AL_POOL_INIT(sizeof(fk_fin), AL_K_OBJECT);

static const obj_type fin_type = {
    .name = "finalize", .kind = OBJ_FINALIZER, .traverse = fin_traverse,
    .traverse_weak = fin_traverse_weak, .release = fin_release,
    .describe = fin_describe, .pool = &fin_pool,
};

/* The converter a finalizer refers to, or NULL when it has died. */
static obj *fin_converter(fk_fin *f)
{
    if (!f->conv_ref)
        return NULL;
    if (f->conv_ref->type->kind == OBJ_WEAKREF)
        return wr_get(f->conv_ref);
    return obj_expired(f->conv_ref) ? NULL : f->conv_ref;
}

static int memo_remove(wt_table *t, uint64_t id, const obj *addr)
{
    if (fk_bug_state.id_reuse)
        return wt_remove(t, addr);
    return wt_remove_stored(t, addr, id);
}

static int pending_push(fk_mconv *mc, ts_storage *s);

/* del_ten of both converters. */
static void fin_run(fk_fin *f)
{
    obj *conv = fin_converter(f);
    if (conv && f->is_meta) {
        fk_mconv *mc = (fk_mconv *)conv;
        memo_remove(mc->tensor_memo, f->key_id, f->key_addr);
        if (f->weak_st && obj_expired(&f->weak_st->hdr))
            wt_remove(mc->storage_memo, &f->weak_st->hdr);
        else if (f->weak_st && mc->policy == FK_SWEEP_PERIODIC) {
            /* [expired-storages]: the tensor has not released its storage
             * yet, so it is retained here and checked periodically. A
             * failed append only delays reclamation to converter death. */
            pending_push(mc, f->weak_st);
        }
    } else if (conv) {
        fk_fconv *fc = (fk_fconv *)conv;
        memo_remove(fc->tensor_memo, f->key_id, f->key_addr);
    }
    fin_release(&f->hdr);
    obj_decref(&f->hdr);            /* the registry's reference: it dies */
}

static void fin_fire(obj_cb *cb, obj *dying)
{
    (void)dying;
    fk_fin *f = (fk_fin *)((char *)cb - offsetof(fk_fin, cb));
    if (fk_bug_state.id_reuse) {
        /* Finalizers run late: the stale entry outlives its key's memory. */
        f->defer_next = NULL;
        if (deferred_tail)
            deferred_tail->defer_next = f;
        else
            deferred_head = f;
        deferred_tail = f;
        return;
    }
    fin_run(f);
}

size_t fk_run_deferred(void)
{
    size_t n = 0;
    while (deferred_head) {
        fk_fin *f = deferred_head;
        deferred_head = f->defer_next;
        if (!deferred_head)
            deferred_tail = NULL;
        fin_run(f);
        n++;
    }
    return n;
}

/* weakref.finalize(t, del_ten) for converter `conv`. 0 or -1 (ER_OOM). */
static int fin_attach(ts_tensor *t, obj *conv, obj *self_ref, int is_meta,
                      ts_storage *weak_st)
{
    fk_fin *f = (fk_fin *)obj_new(&fin_type, sizeof(fk_fin));
    if (!f)
        return -1;
    f->key_id = t->hdr.id;
    f->key_addr = &t->hdr;
    f->is_meta = is_meta;
    f->conv_ref = fk_bug_state.finalizer_holds_converter ? conv : self_ref;
    obj_incref(f->conv_ref);
    if (weak_st) {
        f->weak_st = weak_st;
        obj_weak_incref(&weak_st->hdr);
    }
    f->cb.fn = fin_fire;
    f->cb.owner = &f->hdr;
    obj_cb_register(&t->hdr, &f->cb);
    return 0;
}

/* ---------------------------------------------------------------------
 * MetaTensorDescriber (pytorch-2.3): the integer ids it gives real tensors
 * and storages are Python ints, modelled as objects: lookup_tensor and
 * lookup_storage hold them as values, tensor_memo and storage_memo as keys
 * (a dict holds its keys strongly), so an id lives while either table has
 * it. Each is made once per describer, so identity is equality, and they
 * count from 0 in each describer, never reused ("Don't use id() directly",
 * meta_utils.py@0f315d37:214,248-258).
 * ------------------------------------------------------------------- */

typedef struct fk_mid {
    obj hdr;                  /* OBJ_GENERIC */
    int64_t id;
    int storage;              /* MetaStorageId, else MetaTensorId */
} fk_mid;

static void mid_describe(const obj *self, char *buf, size_t n)
{
    const fk_mid *m = (const fk_mid *)self;
    snprintf(buf, n, "%s %lld", m->storage ? "MetaStorageId" : "MetaTensorId",
             (long long)m->id);
}

static al_pool mid_pool = AL_POOL_INIT(sizeof(fk_mid), AL_K_OBJECT);

static const obj_type mid_type = {
    .name = "MetaId", .kind = OBJ_GENERIC, .describe = mid_describe, .pool = &mid_pool,
};

/* A fresh id (a new reference): the describer's next tensor or storage id. */
static obj *mid_new(struct fk_mconv *mc, int storage)
{
    fk_mid *m = (fk_mid *)obj_new(&mid_type, sizeof *m);
    if (!m)
        return NULL;
    m->storage = storage;
    m->id = storage ? mc->next_storage_id++ : mc->next_tensor_id++;
    return &m->hdr;
}

/* get_tensor_id / get_storage_id (meta_utils.py@0f315d37:248-258): key's
 * id, made and entered on first sight. Borrowed; NULL with ER_OOM. */
static obj *describer_id(fk_mconv *mc, int storage, obj *key)
{
    wt_table *lookup = storage ? mc->lookup_storage : mc->lookup_tensor;
    obj *id = wt_get(lookup, key);
    if (id)
        return id;
    id = mid_new(mc, storage);
    if (!id)
        return NULL;
    int rc = wt_put(lookup, key, id);
    obj_decref(id);
    return rc == 0 ? id : NULL;
}

/* describe_tensor: ids for t's storage, then t, then its grad's, then its
 * base's (meta_utils.py@0f315d37:311,384,457,472); sparse tensors have no
 * storage id (:303-311). 0 or -1 (ER_OOM). */
static int describe_at(fk_mconv *mc, ts_tensor *t, int depth);

static int describe(fk_mconv *mc, ts_tensor *t) { return describe_at(mc, t, 0); }

/* As meta_tensor, describe_tensor recurses into grad and base without end
 * for a grad that reaches its tensor again (PyTorch: RecursionError). */
static int describe_at(fk_mconv *mc, ts_tensor *t, int depth)
{
    if (!mc->lookup_tensor)
        return 0;
    if (depth >= 200)
        return er_set(ER_LIMIT, "maximum recursion depth exceeded describing tensor#%llu "
                      "(its grad reaches it again through a view's base)",
                      (unsigned long long)t->hdr.id);
    if (t->layout == TS_STRIDED && t->storage &&
        !describer_id(mc, 1, &t->storage->hdr))
        return -1;
    if (!describer_id(mc, 0, &t->hdr))
        return -1;
    if (t->grad && describe_at(mc, t->grad, depth + 1) != 0)
        return -1;
    if (t->base && t->layout == TS_STRIDED && describe_at(mc, t->base, depth + 1) != 0)
        return -1;
    return 0;
}

/* The key of t's tensor-memo entry: t, or (describer) its id, NULL when it
 * has none (lookup_tensor.get(t), fake_tensor.py@946abe14:270-274). */
static obj *tensor_key(fk_mconv *mc, ts_tensor *t)
{
    return mc->lookup_tensor ? wt_get(mc->lookup_tensor, &t->hdr) : &t->hdr;
}

/* ---------------------------------------------------------------------
 * MetaConverter
 * ------------------------------------------------------------------- */

static int pending_push(fk_mconv *mc, ts_storage *s)
{
    if (al_grow(&mc->pending, &mc->cap_pending, mc->npending, sizeof *mc->pending, 16,
                AL_K_MEMO, "fk pending list") < 0)
        return er_set(ER_OOM, "out of memory growing the pending list");
    obj_weak_incref(&s->hdr);
    mc->pending[mc->npending++] = s;
    return 0;
}

static void mconv_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_mconv *mc = (fk_mconv *)self;
    if (mc->tensor_memo)
        wt_traverse(mc->tensor_memo, visit, arg);
    if (mc->storage_memo)
        wt_traverse(mc->storage_memo, visit, arg);
    if (mc->lookup_tensor)
        wt_traverse(mc->lookup_tensor, visit, arg);
    if (mc->lookup_storage)
        wt_traverse(mc->lookup_storage, visit, arg);
    if (mc->self_ref)
        visit(mc->self_ref, "self_ref", -1, arg);
}

static void mconv_traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    fk_mconv *mc = (fk_mconv *)self;
    if (mc->tensor_memo)
        wt_traverse_weak(mc->tensor_memo, visit, arg);
    if (mc->storage_memo)
        wt_traverse_weak(mc->storage_memo, visit, arg);
    if (mc->lookup_tensor)
        wt_traverse_weak(mc->lookup_tensor, visit, arg);
    if (mc->lookup_storage)
        wt_traverse_weak(mc->lookup_storage, visit, arg);
    for (size_t i = 0; i < mc->npending; i++)
        visit(&mc->pending[i]->hdr, "pending", (long)i, arg);
}

static void mconv_release(obj *self)
{
    fk_mconv *mc = (fk_mconv *)self;
    if (mc->list_prev || mc->list_next || mconv_list == mc) {
        if (mc->list_prev)
            mc->list_prev->list_next = mc->list_next;
        else
            mconv_list = mc->list_next;
        if (mc->list_next)
            mc->list_next->list_prev = mc->list_prev;
        mc->list_prev = mc->list_next = NULL;
    }
    /* the converter's death drops its four tables (2.3) */
    wt_table *tabs[4] = {mc->tensor_memo, mc->storage_memo, mc->lookup_tensor,
                         mc->lookup_storage};
    mc->tensor_memo = mc->storage_memo = mc->lookup_tensor = mc->lookup_storage = NULL;
    for (int i = 0; i < 4; i++)
        wt_free(tabs[i]);
    ts_storage **p = mc->pending;
    size_t np = mc->npending, cap = mc->cap_pending;
    mc->pending = NULL;
    mc->npending = mc->cap_pending = 0;
    for (size_t i = 0; i < np; i++)
        obj_weak_decref(&p[i]->hdr);
    al_free(p, cap * sizeof *p, AL_K_MEMO);
    obj_clear_ref(&mc->self_ref);
}

static uint64_t mconv_owned(const obj *self)
{
    const fk_mconv *mc = (const fk_mconv *)self;
    uint64_t n = mc->cap_pending * sizeof(ts_storage *);
    if (mc->tensor_memo)
        n += wt_bytes(mc->tensor_memo);
    if (mc->storage_memo)
        n += wt_bytes(mc->storage_memo);
    if (mc->lookup_tensor)
        n += wt_bytes(mc->lookup_tensor);
    if (mc->lookup_storage)
        n += wt_bytes(mc->lookup_storage);
    return n;
}

static void mconv_describe(const obj *self, char *buf, size_t n)
{
    const fk_mconv *mc = (const fk_mconv *)self;
    snprintf(buf, n, "MetaConverter %s memo=%zu storage_memo=%zu pending=%zu",
             fk_policy_name(mc->policy),
             mc->tensor_memo ? wt_count(mc->tensor_memo) : 0,
             mc->storage_memo ? wt_count(mc->storage_memo) : 0, mc->npending);
}

/* The converters' edge labels, for reports (obj_type.edge_role). */
static obj_role conv_edge_role(const obj *self, const char *label)
{
    (void)self;
    if (strcmp(label, "tensor_memo") == 0 || strcmp(label, "lookup_tensor") == 0)
        return OBJ_ROLE_TENSOR_MEMO;
    if (strcmp(label, "storage_memo") == 0 || strcmp(label, "lookup_storage") == 0)
        return OBJ_ROLE_STORAGE_MEMO;
    if (strcmp(label, "pending") == 0)
        return OBJ_ROLE_PENDING;
    return OBJ_ROLE_PLAIN;
}

const obj_type fk_meta_converter_type = {
    .name = "MetaConverter", .kind = OBJ_META_CONVERTER,
    .traverse = mconv_traverse, .traverse_weak = mconv_traverse_weak,
    .release = mconv_release, .owned_bytes = mconv_owned,
    .describe = mconv_describe, .edge_role = conv_edge_role,
};

static wt_key_mode tensor_key_mode(void)
{
    if (fk_bug_state.strong_memo)
        return WT_KEY_STRONG;
    return fk_bug_state.id_reuse ? WT_KEY_ADDRESS : WT_KEY_WEAK;
}

/* A table of design d as its row says (fk_design.tables), with the
 * injected bugs: strong-memo / id-reuse on real-tensor keys,
 * strong-storage-memo on real-storage keys, strong-fake-value on the fake
 * tables' values. Ids are keys a dict holds strongly. The storage memo of
 * a periodic policy leaves its dead keys to the sweep. NULL: no such table
 * (no error), or ER_OOM (*oom set). */
static wt_table *table_new(const fk_design *d, fk_table_id t, fk_policy policy,
                           const char *label, int *oom)
{
    const fk_table_spec *sp = fk_design_table(d, t);
    if (!sp->exists)
        return NULL;
    wt_key_mode km = sp->key == FK_KEY_TENSOR ? tensor_key_mode()
                   : sp->key == FK_KEY_STORAGE && fk_bug_state.strong_storage_memo
                   ? WT_KEY_STRONG
                   : sp->key == FK_KEY_STORAGE ? WT_KEY_WEAK : WT_KEY_STRONG;
    int fakes = t == FK_T_FAKE_MEMO || (t == FK_T_TENSOR_MEMO && sp->value_weak);
    wt_val_mode vm = sp->value_weak && !(fakes && fk_bug_state.strong_fake_value)
        ? WT_VAL_WEAK : WT_VAL_STRONG;
    unsigned flags = vm == WT_VAL_WEAK && (sp->clears & FK_CLR_VALUE)
        ? WT_REMOVE_ON_VALUE_DEATH : 0;
    /* an address key (id-reuse) is a cached id(): its entry outlives it */
    if ((sp->clears & FK_CLR_KEY) && km != WT_KEY_ADDRESS &&
        !(policy == FK_SWEEP_PERIODIC && (sp->clears & FK_CLR_SWEEP)))
        flags |= WT_REMOVE_ON_KEY_DEATH;
    wt_table *w = wt_new(km, vm, flags, label);
    if (!w)
        *oom = 1;
    return w;
}

obj *fk_meta_converter_new(fk_policy policy, int64_t sweep_every)
{
    if (sweep_every < 1)
        sweep_every = 1;
    fk_mconv *mc = (fk_mconv *)obj_new(&fk_meta_converter_type, sizeof *mc);
    if (!mc)
        return NULL;
    mc->policy = policy;
    mc->design = fk_design_now();
    const fk_design *d = mc->design;
    /* without a sweep (2.3) sweep_every and check_count read 0 */
    mc->check_expired_frequency = fk_design_sweeps(d) ? sweep_every : 0;
    int oom = 0;
    mc->tensor_memo = table_new(d, FK_T_TENSOR_MEMO, policy, "tensor_memo", &oom);
    mc->storage_memo = table_new(d, FK_T_STORAGE_MEMO, policy, "storage_memo", &oom);
    mc->lookup_tensor = table_new(d, FK_T_LOOKUP_TENSOR, policy, "lookup_tensor", &oom);
    mc->lookup_storage = table_new(d, FK_T_LOOKUP_STORAGE, policy, "lookup_storage", &oom);
    if (!oom)
        mc->self_ref = wr_new(&mc->hdr, NULL, NULL);
    if (oom || !mc->tensor_memo || !mc->storage_memo || !mc->self_ref) {
        er_set(ER_OOM, "out of memory creating a MetaConverter");
        obj_decref(&mc->hdr);
        return NULL;
    }
    mc->list_next = mconv_list;
    if (mconv_list)
        mconv_list->list_prev = mc;
    mconv_list = mc;
    return &mc->hdr;
}

int fk_is_meta_converter(const obj *o)
{
    return o && o->type == &fk_meta_converter_type;
}

/* check_for_expired_weak_storages (meta_utils.py@003dca52:143-161): every
 * pending ref is read first (new_li / stor_to_delete), then the expired
 * ones' entries are popped. Popping a value can free a meta storage that is
 * itself pending (2.x converts meta tensors): it was read alive, so it stays
 * pending until the next sweep. */
static uint64_t mconv_sweep(fk_mconv *mc)
{
    if (fk_bug_state.no_sweep)
        return 0;
    uint64_t freed = 0;
    size_t n = mc->npending, keep = 0;
    for (size_t i = 0; i < n; i++) {
        ts_storage *s = mc->pending[i];
        if (!obj_expired(&s->hdr)) {
            mc->pending[i] = mc->pending[keep];
            mc->pending[keep++] = s;
        }
    }
    /* [keep, n) expired; refs appended meanwhile (a storage's death runs
     * no finalizer, so none are) would follow them */
    for (size_t i = keep; i < n; i++) {
        ts_storage *s = mc->pending[i];
        freed += (uint64_t)wt_remove(mc->storage_memo, &s->hdr);
        obj_weak_decref(&s->hdr);
    }
    size_t late = mc->npending - n;
    if (late)
        memmove(mc->pending + keep, mc->pending + n, late * sizeof *mc->pending);
    mc->npending = keep + late;
    if ((int64_t)keep > mc->check_expired_frequency)
        mc->check_expired_frequency = (int64_t)keep;
    return freed;
}

uint64_t fk_meta_sweep(obj *mc) { return mconv_sweep((fk_mconv *)mc); }

/* meta_storage(s): the meta storage memoized for real storage s, under s
 * or (2.3) its id, as a new reference: in 2.3 the memo holds it weakly, so
 * the tensor made over it must take it before this reference goes
 * (meta_utils.py@0f315d37:1748-1756,1771; its storage_memo entry leaves
 * when no fake holds the storage any more). */
static ts_storage *meta_storage(fk_mconv *mc, ts_storage *s, int *fresh)
{
    *fresh = 0;
    obj *key = mc->lookup_storage ? wt_get(mc->lookup_storage, &s->hdr) : &s->hdr;
    if (!key) {
        er_set(ER_INTERNAL, "storage#%llu has no describer id",
               (unsigned long long)s->hdr.id);
        return NULL;
    }
    obj *hit = wt_get(mc->storage_memo, key);
    if (hit) {
        obj_incref(hit);
        return (ts_storage *)hit;
    }
    ts_storage *ms = ts_storage_new(s->nbytes, ts_meta(), TS_INIT_NONE);
    if (ms && wt_put(mc->storage_memo, key, &ms->hdr) != 0) {
        obj_decref(&ms->hdr);
        return NULL;
    }
    *fresh = 1;
    return ms;
}

/* set_tensor_memo: insert under t (or its id), then, where the design has
 * them, attach the finalizer; undo on failure. */
static int mconv_memo_set(fk_mconv *mc, ts_tensor *t, ts_tensor *r)
{
    obj *key = tensor_key(mc, t);
    if (!key)
        return er_set(ER_INTERNAL, "tensor#%llu has no describer id",
                      (unsigned long long)t->hdr.id);
    if (wt_put(mc->tensor_memo, key, &r->hdr) != 0)
        return -1;
    if (!fk_design_has_finalizers(mc->design))
        return 0;    /* 2.3: no finalizer (meta_utils.py@0f315d37:818-819) */
    ts_storage *weak_st = t->layout == TS_STRIDED ? t->storage : NULL;
    if (fin_attach(t, &mc->hdr, mc->self_ref, 1, weak_st) != 0) {
        wt_remove(mc->tensor_memo, key);
        return -1;
    }
    return 0;
}

/* r (a new reference, or NULL) memoized under t: r, or NULL with r dropped. */
static ts_tensor *memoized(fk_mconv *mc, ts_tensor *t, ts_tensor *r)
{
    if (r && mconv_memo_set(mc, t, r) != 0) {
        obj_decref(&r->hdr);
        return NULL;
    }
    return r;
}

/* The entry under key (t itself, or its id), checked against t: a value
 * made for another tensor is a wrong hit, possible only with address keys
 * (id-reuse). */
static ts_tensor *memo_lookup_key(wt_table *memo, const obj *key, ts_tensor *t)
{
    obj *v = key ? wt_get(memo, key) : NULL;
    if (v && ts_of(v)->source_id != t->hdr.id)
        wrong_hits++;
    return v ? ts_of(v) : NULL;
}

static ts_tensor *memo_lookup(wt_table *memo, ts_tensor *t)
{
    return memo_lookup_key(memo, &t->hdr, t);
}

/* MetaConverter.tensor_memo's entry for t (lookup_tensor first in 2.3). */
static ts_tensor *mconv_memo_get(fk_mconv *mc, ts_tensor *t)
{
    return memo_lookup_key(mc->tensor_memo, tensor_key(mc, t), t);
}

/* see [expired-storages]: every meta_tensor call, recursive ones too,
 * counts toward the next sweep, in designs that sweep */
static void count_toward_sweep(fk_mconv *mc)
{
    if (fk_design_sweeps(mc->design) &&
        ++mc->check_expired_count >= mc->check_expired_frequency) {
        mconv_sweep(mc);
        mc->check_expired_count = 0;
    }
}

/* FakeTensorConverter._get_memo: in PyTorch 1.13.1 a hit calls
 * out._fix_weakref(), which hands the Python object's ownership to its C++
 * TensorImpl: from then on nothing frees the fake (measured: the fake and
 * its mode survive `del` of every name and of the real tensor, and
 * gc.collect()). Modelled as a reference nobody owns. */
static ts_tensor *fake_memo_hit(fk_fconv *fc, ts_tensor *t)
{
    ts_tensor *hit = memo_lookup(fc->tensor_memo, t);
    int leak = fk_bug_state.fix_weakref || fc->design->fix_weakref_leak;
    if (hit && leak && !(hit->hdr.flags & FK_F_IMMORTAL)) {
        hit->hdr.flags |= FK_F_IMMORTAL;
        obj_incref(&hit->hdr);
    }
    return hit;
}

/* base: the view's base converted already (a new reference, consumed), or
 * NULL to convert it here through the memo. */
static ts_tensor *convert_fresh(fk_mconv *mc, ts_tensor *t, ts_tensor *base)
{
    ts_tensor *r = NULL;
    if (t->layout == TS_SPARSE_COO) {
        r = ts_sparse_coo(t->ndim, t->sizes, 0, t->sparse_dim, t->dtype,
                          ts_meta(), t->coalesced);
    } else if (t->layout == TS_SPARSE_CSR) {
        r = ts_sparse_csr_meta(t->sizes[0], t->sizes[1], t->dtype);   /* csr_converts */
    } else if (t->base) {
        /* Views in two steps: meta-fy the base (memoized), then view it. */
        if (!base)
            base = fk_meta_tensor(mc, t->base);
        if (!base)
            return NULL;
        ts_tensor *src = base;
        if (base->dtype != t->dtype &&
            ts_dtype_is_complex(base->dtype) != ts_dtype_is_complex(t->dtype)) {
            ts_args none;
            memset(&none, 0, sizeof none);
            src = ts_apply(ts_dtype_is_complex(base->dtype) ? TS_OP_VIEW_AS_REAL
                                                            : TS_OP_VIEW_AS_COMPLEX,
                           base, &none);
            obj_decref(&base->hdr);
            if (!src)
                return NULL;
        }
        ts_args a;
        memset(&a, 0, sizeof a);
        a.n = a.n2 = t->ndim;
        memcpy(a.v, t->sizes, (size_t)t->ndim * sizeof a.v[0]);
        memcpy(a.v2, t->strides, (size_t)t->ndim * sizeof a.v2[0]);
        a.offset = t->storage_offset;
        r = ts_apply(TS_OP_AS_STRIDED, src, &a);
        obj_decref(&src->hdr);
    } else {
        int fresh;
        ts_storage *ms = meta_storage(mc, t->storage, &fresh);
        if (!ms)
            return NULL;
        /* meta_utils.py: r.set_(meta_storage, offset, size, stride) with
         * no_dispatch; on meta that resizes the storage to exactly this
         * geometry's extent, so a meta storage's nbytes is the extent of the
         * last non-view tensor converted over it (PyTorch 1.13.1: 8 bytes
         * after a 2-float tensor over a 16-byte storage, even when a 16-byte
         * one was converted before). 2.x: fk.h fk_ms_size */
        uint64_t ext = ts_storage_extent(t);
        fk_ms_size how = (fk_ms_size)mc->design->meta_storage_size;
        if (how == FK_MS_EXTENT || (how == FK_MS_GROWS && fresh && !t->storage_offset) ||
            ms->nbytes < ext)
            ms->nbytes = ext;
        r = ts_from_storage(ms, t->ndim, t->sizes, t->strides,
                            t->storage_offset, t->dtype);
        obj_decref(&ms->hdr);
    }
    if (!r)
        return NULL;
    if (!(t->base && t->layout == TS_STRIDED && mc->design->view_flags_from_base)) {
        r->requires_grad = t->requires_grad;
        r->is_leaf = t->is_leaf;
    }
    r->neg = t->neg;
    r->conj = t->conj;
    r->source_id = t->hdr.id;
    return r;
}

ts_tensor *fk_meta_tensor(fk_mconv *mc, ts_tensor *t)
{
    count_toward_sweep(mc);
    ts_tensor *hit = mconv_memo_get(mc, t);
    if (hit) {
        /* one memo (2.x): a mode's entries are fakes; their meta tensor */
        hit = ts_is_fake(hit) ? hit->meta : hit;
        obj_incref(&hit->hdr);
        return hit;
    }
    return memoized(mc, t, convert_fresh(mc, t, NULL));
}

static int meta_unsupported(const ts_tensor *t)
{
    return ts_is_fake(t) || t->layout == TS_SPARSE_CSR || t->quantized ||
           (t->base && t->base->layout != TS_STRIDED) || t->neg || t->conj ||
           t->device.type == TS_DEV_META || t->device.type == TS_DEV_LAZY;
}

ts_tensor *fk_meta_convert(obj *o, ts_tensor *t)
{
    fk_mconv *mc = (fk_mconv *)o;
    if (meta_unsupported(t)) {
        mc->misses++;
        obj_incref(&t->hdr);
        return t;
    }
    mc->hits++;
    /* 2.3: described after the checks, before converting
     * (meta_utils.py@0f315d37:1897-1910, then describe_tensor) */
    if (describe(mc, t) != 0)
        return NULL;
    return fk_meta_tensor(mc, t);
}

/* ---------------------------------------------------------------------
 * FakeTensorConverter
 * ------------------------------------------------------------------- */

static void fconv_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_fconv *fc = (fk_fconv *)self;
    if (fc->meta)
        visit(&fc->meta->hdr, "meta_converter", -1, arg);
    if (fc->tensor_memo)
        wt_traverse(fc->tensor_memo, visit, arg);
    if (fc->self_ref)
        visit(fc->self_ref, "self_ref", -1, arg);
    fk_cmap_traverse(&fc->cmap, visit, arg);
}

static void fconv_traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    fk_fconv *fc = (fk_fconv *)self;
    if (fc->tensor_memo)
        wt_traverse_weak(fc->tensor_memo, visit, arg);
    fk_cmap_traverse_weak(&fc->cmap, visit, arg);
}

static void fconv_release(obj *self)
{
    fk_fconv *fc = (fk_fconv *)self;
    if (fc->list_prev || fc->list_next || fconv_list == fc) {
        if (fc->list_prev)
            fc->list_prev->list_next = fc->list_next;
        else
            fconv_list = fc->list_next;
        if (fc->list_next)
            fc->list_next->list_prev = fc->list_prev;
        fc->list_prev = fc->list_next = NULL;
    }
    wt_table *tm = fc->tensor_memo;
    fc->tensor_memo = NULL;
    if (tm)
        wt_free(tm);
    fk_cmap_free(&fc->cmap);
    obj *m = fc->meta ? &fc->meta->hdr : NULL;
    fc->meta = NULL;
    obj_decref(m);
    obj_clear_ref(&fc->self_ref);
}

static uint64_t fconv_owned(const obj *self)
{
    const fk_fconv *fc = (const fk_fconv *)self;
    /* and its constant map's table (constant_storage_mapping) */
    return (fc->tensor_memo ? wt_bytes(fc->tensor_memo) : 0) + fc->cmap.cap * sizeof *fc->cmap.v;
}

const obj_type fk_fake_converter_type = {
    .name = "FakeTensorConverter", .kind = OBJ_FAKE_CONVERTER,
    .traverse = fconv_traverse, .traverse_weak = fconv_traverse_weak,
    .release = fconv_release, .owned_bytes = fconv_owned,
    .edge_role = conv_edge_role,
};

static void mode_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_mode *m = (fk_mode *)self;
    if (m->converter)
        visit(&m->converter->hdr, "converter", -1, arg);
    if (m->shape_env)
        visit(m->shape_env, "shape_env", -1, arg);
    if (m->weak_self)
        visit(m->weak_self, "weak_self", -1, arg);
}

static void mode_release(obj *self)
{
    fk_mode *m = (fk_mode *)self;
    obj *c = m->converter ? &m->converter->hdr : NULL;
    m->converter = NULL;
    obj_decref(c);
    obj_clear_ref(&m->shape_env);
    obj_clear_ref(&m->weak_self);
}

const obj_type fk_mode_type = {
    .name = "FakeTensorMode", .kind = OBJ_FAKE_MODE,
    .traverse = mode_traverse, .release = mode_release,
};

int fk_is_mode(const obj *o) { return o && o->type == &fk_mode_type; }

static fk_fconv *fconv_new(fk_policy policy, int64_t sweep_every)
{
    fk_fconv *fc = (fk_fconv *)obj_new(&fk_fake_converter_type, sizeof *fc);
    if (!fc)
        return NULL;
    fc->design = fk_design_now();
    /* A WeakValueDictionary keyed by WeakTensorRefKey: the finalizer
     * removes an entry when its key dies, the dictionary when its value
     * dies. */
    fc->tensor_memo = fk_bug_state.strong_fake_value
        ? wt_new(tensor_key_mode(), WT_VAL_STRONG, 0, "tensor_memo")
        : wt_new(tensor_key_mode(), WT_VAL_WEAK, WT_REMOVE_ON_VALUE_DEATH,
                 "tensor_memo");
    if (fc->tensor_memo)
        fc->meta = (fk_mconv *)fk_meta_converter_new(policy, sweep_every);
    if (fc->meta)
        fc->self_ref = wr_new(&fc->hdr, NULL, NULL);
    if (!fc->tensor_memo || !fc->meta || !fc->self_ref) {
        er_set(ER_OOM, "out of memory creating a FakeTensorConverter");
        obj_decref(&fc->hdr);
        return NULL;
    }
    fc->list_next = fconv_list;
    if (fconv_list)
        fconv_list->list_prev = fc;
    fconv_list = fc;
    return fc;
}

obj *fk_mode_new(fk_policy policy, int64_t sweep_every)
{
    fk_mode *m = (fk_mode *)obj_new(&fk_mode_type, sizeof *m);
    if (!m)
        return NULL;
    m->converter = fconv_new(policy, sweep_every);
    if (!m->converter) {
        obj_decref(&m->hdr);
        return NULL;
    }
    return &m->hdr;
}

static int fconv_memo_set(fk_fconv *fc, ts_tensor *t, ts_tensor *out)
{
    if (wt_put(fc->tensor_memo, &t->hdr, &out->hdr) != 0)
        return -1;
    if (fin_attach(t, &fc->hdr, fc->self_ref, 0, NULL) != 0) {
        wt_remove(fc->tensor_memo, &t->hdr);
        return -1;
    }
    return 0;
}

/* One memo (fakegc-semantics(7), DESIGNS, pytorch-2.0): the
 * MetaConverter builds the fake by a callback and memoizes it as a weak
 * value; a view's fake is made off its base's fake and is a view of it;
 * grad converts recursively; one finalizer per insertion (mconv_memo_set).
 * meta_utils.py@003dca52:293-296 (every call counts), :298,685 (a hit
 * returns the entry), :355 (base first), :593,617-626 (storage entry),
 * :671 (grad), :197-198 (finalizer last). */
static ts_tensor *one_memo_fake_at(fk_mconv *mc, fk_mode *mode, ts_tensor *t);

/* The entry is set last, so a grad that reaches its tensor again through a
 * view's base (t.grad = t.view(...)) recurses without end, as in PyTorch 2.x
 * (a RecursionError): stopped at a depth no real tensor reaches. */
enum { FK_MAX_CONVERT_DEPTH = 200 };
static int convert_depth;

static ts_tensor *one_memo_fake(fk_mconv *mc, fk_mode *mode, ts_tensor *t)
{
    if (convert_depth >= FK_MAX_CONVERT_DEPTH) {
        er_set(ER_LIMIT, "maximum recursion depth exceeded converting tensor#%llu "
               "(its grad reaches it again through a view's base)",
               (unsigned long long)t->hdr.id);
        return NULL;
    }
    convert_depth++;
    ts_tensor *r = one_memo_fake_at(mc, mode, t);
    convert_depth--;
    return r;
}

static ts_tensor *one_memo_fake_at(fk_mconv *mc, fk_mode *mode, ts_tensor *t)
{
    count_toward_sweep(mc);
    ts_tensor *hit = mconv_memo_get(mc, t);
    if (hit) {
        obj_incref(&hit->hdr);
        return hit;
    }
    ts_tensor *basef = NULL, *basem = NULL;
    if (t->base && t->layout == TS_STRIDED) {
        basef = one_memo_fake(mc, mode, t->base);
        if (!basef)
            return NULL;
        if (!ts_is_fake(basef)) {
            /* the base's entry is a plain meta tensor (mode.meta(base)):
             * the view is made off it, a plain meta view, memoized */
            return memoized(mc, t, convert_fresh(mc, t, basef));
        }
        basem = basef->meta;
        obj_incref(&basem->hdr);
    }
    ts_tensor *r = convert_fresh(mc, t, basem);
    ts_tensor *out = r ? ts_fake_new(r, fk_mode_holder(mode), t->device, t->hdr.id) : NULL;
    obj_decref(r ? &r->hdr : NULL);
    if (!out) {
        obj_decref(basef ? &basef->hdr : NULL);
        return NULL;
    }
    out->requires_grad = t->requires_grad;
    out->is_leaf = t->is_leaf;       /* derived: meta_tensor keeps leafness */
    out->base = basef;               /* holds the base's fake (its reference) */
    /* 2.3: the fake-view step is an op on the base's fake, whose output
     * from_meta_and_device memoizes under a fresh id
     * (meta_utils.py@0f315d37:1205; fake_tensor.py@946abe14:1869) */
    if ((basef && fk_memo_op_output(&mode->hdr, out) != 0) || fk_v3_built(mode, out, t) != 0) {
        obj_decref(&out->hdr);
        return NULL;
    }
    if (t->grad) {
        ts_tensor *g = one_memo_fake(mc, mode, t->grad);
        if (!g || ts_set_grad(out, g) != 0) {
            obj_decref(g ? &g->hdr : NULL);
            obj_decref(&out->hdr);
            return NULL;
        }
        obj_decref(&g->hdr);
    }
    if (mconv_memo_set(mc, t, out) != 0) {
        obj_decref(&out->hdr);
        return NULL;
    }
    return out;
}

/* What 2.x's MetaConverter rejects ("meta converter nyi"): sparse CSR
 * unless the design converts it, a view of a sparse base, lazy
 * (meta_utils.py@003dca52:711-716); neg/conj bits convert (:679). Quantized
 * is refused before (fake_tensor.py@946abe14:310). */
static int one_memo_unsupported(const fk_design *d, const ts_tensor *t)
{
    return ts_is_fake(t) || (t->layout == TS_SPARSE_CSR && !d->csr_converts) ||
           (t->base && t->base->layout != TS_STRIDED) || t->device.type == TS_DEV_LAZY;
}

static ts_tensor *from_real_one_memo(fk_fconv *fc, fk_mode *mode, ts_tensor *t)
{
    fk_mconv *mc = fc->meta;
    /* a hit is returned before anything else, no counter moves
     * (fake_tensor.py@6ec61862:259, fake_tensor.py@946abe14:304; in 2.3
     * through lookup_tensor.get, which gives no id, :270-274) */
    ts_tensor *hit = mconv_memo_get(mc, t);
    if (hit) {    /* a plain meta tensor too, where mode.meta(t) put one */
        obj_incref(&hit->hdr);
        return hit;
    }
    if (t->quantized) {
        er_set(ER_UNSUPPORTED, "quantized nyi in meta tensors");
        return NULL;
    }
    if (one_memo_unsupported(mc->design, t)) {
        mc->misses++;
        er_set(ER_UNSUPPORTED, "meta converter nyi");
        return NULL;
    }
    mc->hits++;
    if (describe(mc, t) != 0)
        return NULL;
    return one_memo_fake(mc, mode, t);
}

static ts_tensor *from_real_tensor(fk_fconv *fc, fk_mode *mode, ts_tensor *t)
{
    if (!fc->design->fake_memo)
        return from_real_one_memo(fc, mode, t);
    ts_tensor *hit = fake_memo_hit(fc, t);
    if (hit) {
        obj_incref(&hit->hdr);
        return hit;
    }
    if (t->quantized) {
        er_set(ER_UNSUPPORTED, "quantized nyi in meta tensors");
        return NULL;
    }
    ts_tensor *meta_t = fk_meta_convert(&fc->meta->hdr, t);
    if (!meta_t)
        return NULL;
    if (meta_t->device.type != TS_DEV_META || ts_is_fake(meta_t)) {
        obj_decref(&meta_t->hdr);
        er_set(ER_UNSUPPORTED, "meta converter nyi");
        return NULL;
    }
    ts_tensor *out = ts_fake_new(meta_t, fk_mode_holder(mode), t->device, t->hdr.id);
    obj_decref(&meta_t->hdr);
    if (!out || fk_v3_built(mode, out, t) != 0) {
        obj_decref(out ? &out->hdr : NULL);
        return NULL;
    }
    out->requires_grad = t->requires_grad;
    out->is_leaf = 1;   /* _make_subclass: a leaf, even for a non-leaf source */
    if (t->grad) {
        ts_tensor *g = from_real_tensor(fc, mode, t->grad);
        if (!g || ts_set_grad(out, g) != 0) {
            obj_decref(g ? &g->hdr : NULL);
            obj_decref(&out->hdr);
            return NULL;
        }
        obj_decref(&g->hdr);
    }
    if (fconv_memo_set(fc, t, out) != 0) {
        obj_decref(&out->hdr);
        return NULL;
    }
    return out;
}

static ts_tensor *from_meta_and_device(fk_mode *mode, ts_tensor *t,
                                       ts_device device)
{
    fk_fconv *fc = mode->converter;
    int one = !fc->design->fake_memo;
    ts_tensor *hit = one ? mconv_memo_get(fc->meta, t) : fake_memo_hit(fc, t);
    if (hit) {
        obj_incref(&hit->hdr);
        return hit;
    }
    /* 2.3: FakeTensor(fake_mode, t, device) is _make_subclass, a new
     * TensorImpl over t's storage: the fake does not keep t, so t's
     * lookup_tensor entry leaves with t (measured on 2.6.0 and 2.14.1) */
    ts_tensor *src = t;
    if (one && fc->meta->lookup_tensor && t->layout == TS_STRIDED && t->storage) {
        src = ts_from_storage(t->storage, t->ndim, t->sizes, t->strides, t->storage_offset,
                              t->dtype);
        if (!src)
            return NULL;
        src->requires_grad = t->requires_grad;
        src->neg = t->neg;
        src->conj = t->conj;
    }
    ts_tensor *out = ts_fake_new(src, fk_mode_holder(mode), device, t->hdr.id);
    if (src != t)
        obj_decref(&src->hdr);
    if (!out)
        return NULL;
    /* FakeTensor(fake_mode, t, device) is _make_subclass(cls, t,
     * t.requires_grad): a leaf, even over a meta tensor that is not */
    out->is_leaf = 1;
    if (one && fc->meta->lookup_tensor) {
        /* 2.3: set_tensor_memo gives t an id (fake_tensor.py@946abe14:
         * 276-278,426-427), a lookup_tensor entry that lives as long as t */
        fk_mconv *mc = fc->meta;
        obj *id = describer_id(mc, 0, &t->hdr);
        if (!id || wt_put(mc->tensor_memo, id, &out->hdr) != 0) {
            obj_decref(&out->hdr);
            return NULL;
        }
        return out;
    }
    if (one) {
        /* 2.x: memoized under the meta tensor in the one memo, with the
         * FakeTensorConverter's finalizer, which only pops the entry
         * (fake_tensor.py@6ec61862:229-244,304-313) */
        fk_mconv *mc = fc->meta;
        if (wt_put(mc->tensor_memo, &t->hdr, &out->hdr) != 0 ||
            fin_attach(t, &mc->hdr, mc->self_ref, 1, NULL) != 0) {
            wt_remove(mc->tensor_memo, &t->hdr);
            obj_decref(&out->hdr);
            return NULL;
        }
        return out;
    }
    if (fconv_memo_set(fc, t, out) != 0) {
        obj_decref(&out->hdr);
        return NULL;
    }
    return out;
}

int fk_memo_op_output(obj *mode, ts_tensor *out)
{
    if (!fk_is_mode(mode) || !ts_is_fake(out))
        return 0;
    fk_mconv *mc = ((fk_mode *)mode)->converter->meta;
    if (!mc->design->op_outputs_memoized || !mc->lookup_tensor)
        return 0;
    /* from_meta_and_device(meta output) in 2.3: a fresh id, the entry
     * id -> fake; the meta output's lookup_tensor entry leaves when the op
     * returns, as PyTorch's fake does not hold it (derived; pytorch#178584).
     * The entry leaves with the fake (weak value). */
    obj *id = mid_new(mc, 0);
    if (!id)
        return -1;
    int rc = wt_put(mc->tensor_memo, id, &out->hdr);
    obj_decref(id);
    return rc;
}

ts_tensor *fk_fake(obj *mode, ts_tensor *t, const ts_device *device)
{
    if (!fk_is_mode(mode)) {
        er_set(ER_TYPE, "fake() needs a fake mode");
        return NULL;
    }
    fk_mode *m = (fk_mode *)mode;
    if (!device)
        return from_real_tensor(m->converter, m, t);
    if (ts_is_fake(t) || t->device.type != TS_DEV_META) {
        char dev[32];
        ts_device_format(t->device, dev, sizeof dev);
        er_set(ER_TYPE, "fake(t, device=...) needs a meta tensor, got a %s "
               "tensor on %s", ts_is_fake(t) ? "fake" : "real", dev);
        return NULL;
    }
    return from_meta_and_device(m, t, *device);
}

obj *fk_fake_converter_new(fk_policy policy, int64_t sweep_every)
{
    fk_fconv *fc = fconv_new(policy, sweep_every);
    return fc ? &fc->hdr : NULL;
}

int fk_is_fake_converter(const obj *o)
{
    return o && o->type == &fk_fake_converter_type;
}

ts_tensor *fk_convert(obj *conv, obj *mode, ts_tensor *t)
{
    if (!fk_is_fake_converter(conv) || !fk_is_mode(mode)) {
        er_set(ER_TYPE, "converter(mode, t) needs a FakeTensorConverter and a fake mode");
        return NULL;
    }
    return from_real_tensor((fk_fconv *)conv, (fk_mode *)mode, t);
}

/* mode.meta(t) with one memo: MetaConverter.__call__ with its default
 * callback on the memo its mode's conversions fill (meta_utils.py@v2.6.0:
 * 770-779 get/set_tensor_memo, 837 meta_tensor). A hit answers the entry,
 * a fake when a conversion made it; otherwise a plain meta tensor, memoized
 * (a weak value: it leaves with the caller's reference). A view is made off
 * its base's entry: off a fake, as_strided dispatches to the mode, so the
 * view is a fake view of it, an op output (memoized under a fresh id too).
 * Checked on 2.6.0 and 2.14.1 (scripts/xref: 03_sparse_coo.scn,
 * 04_unsupported.scn, 08_hits_misses.scn). */
static ts_tensor *meta_in_memo(fk_mconv *mc, fk_mode *mode, ts_tensor *t)
{
    count_toward_sweep(mc);
    ts_tensor *hit = mconv_memo_get(mc, t), *r;
    if (hit) {
        obj_incref(&hit->hdr);
        return hit;
    }
    if (t->base && t->layout == TS_STRIDED) {
        ts_tensor *b = meta_in_memo(mc, mode, t->base);
        if (!b)
            return NULL;
        if (!ts_is_fake(b)) {
            r = convert_fresh(mc, t, b);
        } else {
            obj_incref(&b->meta->hdr);
            ts_tensor *v = convert_fresh(mc, t, b->meta);
            r = v ? ts_fake_new(v, fk_mode_holder(mode), b->device, t->hdr.id) : NULL;
            obj_decref(v ? &v->hdr : NULL);
            if (!r) {
                obj_decref(&b->hdr);
                return NULL;
            }
            r->base = b;                   /* holds the base's fake (its reference) */
            if (fk_memo_op_output(&mode->hdr, r) != 0) {
                obj_decref(&r->hdr);
                return NULL;
            }
        }
    } else {
        r = convert_fresh(mc, t, NULL);
    }
    return memoized(mc, t, r);
}

ts_tensor *fk_mode_meta(obj *mode, ts_tensor *t, int *none)
{
    if (none)
        *none = 0;
    if (fk_is_meta_converter(mode))
        return fk_meta_convert(mode, t);
    if (!fk_is_mode(mode)) {
        er_set(ER_TYPE, "meta() needs a fake mode or a meta converter");
        return NULL;
    }
    fk_fconv *fc = ((fk_mode *)mode)->converter;
    if (!fc->design->fake_memo) {
        /* one memo: the mode's MetaConverter called with no callback;
         * what it rejects is a miss, answered as the design says */
        fk_mconv *mc = fc->meta;
        if (t->quantized || one_memo_unsupported(mc->design, t)) {
            mc->misses++;
            if (mc->design->meta_miss_none) {
                if (!none)
                    er_set(ER_UNSUPPORTED, "the MetaConverter answered NotImplemented");
                else
                    *none = 1;
                return NULL;
            }
            obj_incref(&t->hdr);
            return t;
        }
        mc->hits++;
        return describe(mc, t) == 0 ? meta_in_memo(mc, (fk_mode *)mode, t) : NULL;
    }
    return fk_meta_convert(&fc->meta->hdr, t);
}

static fk_mconv *meta_of(obj *o)
{
    if (fk_is_meta_converter(o))
        return (fk_mconv *)o;
    if (fk_is_mode(o))
        return ((fk_mode *)o)->converter->meta;
    if (o && o->type == &fk_fake_converter_type)
        return ((fk_fconv *)o)->meta;
    return NULL;
}

uint64_t fk_sweep(obj *o)
{
    fk_run_deferred();
    fk_mconv *mc = meta_of(o);
    return mc ? mconv_sweep(mc) : 0;
}

uint64_t fk_sweep_all(void)
{
    fk_run_deferred();
    uint64_t n = 0;
    for (fk_mconv *mc = mconv_list; mc; mc = mc->list_next)
        n += mconv_sweep(mc);
    return n;
}

int fk_counters_get(obj *o, fk_counters *out)
{
    fk_mconv *mc = meta_of(o);
    if (!mc)
        return er_set(ER_TYPE, "not a fake mode or converter");
    memset(out, 0, sizeof *out);
    out->memo_fake = -1;
    fk_fconv *fc = fk_is_mode(o) ? ((fk_mode *)o)->converter
                 : o->type == &fk_fake_converter_type ? (fk_fconv *)o : NULL;
    if (fc)   /* one memo (2.x): the fakes are the MetaConverter's entries */
        out->memo_fake = (int64_t)wt_count(fc->design->fake_memo ? fc->tensor_memo
                                                                 : mc->tensor_memo);
    out->memo_meta = (int64_t)wt_count(mc->tensor_memo);
    out->memo_storage = (int64_t)wt_count(mc->storage_memo);
    /* 2.3: the describer's tables; else the memos' keys */
    out->memo_tensor_ids = (int64_t)wt_count(mc->lookup_tensor ? mc->lookup_tensor
                                                               : mc->tensor_memo);
    out->memo_storage_ids = (int64_t)wt_count(mc->lookup_storage ? mc->lookup_storage
                                                                 : mc->storage_memo);
    out->memo_constants = fc ? (int64_t)fc->cmap.n : 0;
    out->pending = (int64_t)mc->npending;
    out->hits = mc->hits;
    out->misses = mc->misses;
    out->sweep_every = mc->check_expired_frequency;
    out->check_count = mc->check_expired_count;
    return 0;
}

uint64_t fk_stale_all(void)
{
    uint64_t n = 0;
    for (fk_mconv *mc = mconv_list; mc; mc = mc->list_next) {
        n += wt_stale(mc->tensor_memo) + wt_stale(mc->storage_memo);
        if (mc->lookup_tensor)
            n += wt_stale(mc->lookup_tensor) + wt_stale(mc->lookup_storage);
    }
    for (fk_fconv *fc = fconv_list; fc; fc = fc->list_next)
        n += wt_stale(fc->tensor_memo);
    return n;
}

uint64_t fk_wrong_hits(void) { return wrong_hits; }

/* set_ can let a storage die while a converted tensor that had it lives:
 * that tensor's del_ten (its finalizer holds the StorageWeakRef) pops the
 * entry later, as PyTorch does. */
static int awaited_by_finalizer(fk_mconv *mc, const obj *key)
{
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o)) {
        if (o->type != &fin_type)
            continue;
        fk_fin *f = (fk_fin *)o;
        if (f->is_meta && f->weak_st && &f->weak_st->hdr == key &&
            fin_converter(f) == &mc->hdr)
            return 1;
    }
    return 0;
}

/* 2.3: the describer's keys are alive (their callbacks remove them at
 * death; not address keys, the id-reuse bug), and nothing is pending. */
static int verify_describer(fk_mconv *mc, char *why, size_t n)
{
    if (!mc->lookup_tensor)
        return 0;
    if (wt_verify(mc->lookup_tensor, why, n) != 0 ||
        wt_verify(mc->lookup_storage, why, n) != 0)
        return -1;
    if (mc->npending || mc->check_expired_count) {
        snprintf(why, n, "MetaConverter#%llu: no sweep in %s, yet %zu pending",
                 (unsigned long long)mc->hdr.id, mc->design->name, mc->npending);
        return -1;
    }
    if (fk_bug_state.id_reuse)
        return 0;
    wt_table *tabs[2] = {mc->lookup_tensor, mc->lookup_storage};
    for (int i = 0; i < 2; i++) {
        wt_iter it;
        obj *key, *val;
        uint64_t id;
        wt_iter_init(&it, tabs[i]);
        while (wt_iter_next(&it, &key, &id, &val))
            if (obj_expired(key)) {
                snprintf(why, n, "MetaConverter#%llu: %s key #%llu is dead",
                         (unsigned long long)mc->hdr.id, i ? "lookup_storage"
                         : "lookup_tensor", (unsigned long long)id);
                return -1;
            }
    }
    return 0;
}

static int verify_mconv(fk_mconv *mc, char *why, size_t n)
{
    if (wt_verify(mc->tensor_memo, why, n) != 0 ||
        wt_verify(mc->storage_memo, why, n) != 0 || verify_describer(mc, why, n) != 0)
        return -1;
    wt_iter it;
    obj *key, *val;
    uint64_t id;
    /* Every storage-memo key is alive, or (periodic) expired and pending. */
    wt_iter_init(&it, mc->storage_memo);
    while (wt_iter_next(&it, &key, &id, &val)) {
        if (!obj_expired(key))
            continue;
        int found = 0;
        for (size_t i = 0; i < mc->npending && !found; i++)
            found = &mc->pending[i]->hdr == key;
        if (!found)
            found = awaited_by_finalizer(mc, key);
        if (!found && !fk_bug_state.no_sweep) {
            snprintf(why, n, "MetaConverter#%llu: storage_memo key storage#%llu "
                     "is dead and not pending", (unsigned long long)mc->hdr.id,
                     (unsigned long long)id);
            return -1;
        }
    }
    if (mc->policy == FK_SWEEP_EAGER && mc->npending) {
        snprintf(why, n, "MetaConverter#%llu: eager policy with %zu pending",
                 (unsigned long long)mc->hdr.id, mc->npending);
        return -1;
    }
    /* Every tensor-memo key is alive (its finalizer removes it at death),
     * unless finalizers are deferred (id-reuse). */
    if (!fk_bug_state.id_reuse) {
        wt_iter_init(&it, mc->tensor_memo);
        while (wt_iter_next(&it, &key, &id, &val)) {
            if (obj_expired(key)) {
                snprintf(why, n, "MetaConverter#%llu: tensor_memo key tensor#%llu "
                         "is dead", (unsigned long long)mc->hdr.id,
                         (unsigned long long)id);
                return -1;
            }
        }
    }
    return 0;
}

int fk_verify(obj *o, char *why, size_t n)
{
    if (wrong_hits) {
        snprintf(why, n, "%llu memo hit(s) returned an object made for another "
                 "key (stale entry at a reused address)",
                 (unsigned long long)wrong_hits);
        return -1;
    }
    if (o) {
        fk_mconv *mc = meta_of(o);
        return mc ? verify_mconv(mc, why, n) : 0;
    }
    for (fk_mconv *mc = mconv_list; mc; mc = mc->list_next)
        if (verify_mconv(mc, why, n) != 0)
            return -1;
    for (fk_fconv *fc = fconv_list; fc; fc = fc->list_next)
        if (wt_verify(fc->tensor_memo, why, n) != 0)
            return -1;
    return 0;
}

void fk_reset(void)
{
    fk_cache_clear();
    fk_run_deferred();
    wrong_hits = 0;
}

/* pytorch#171209: the converter's tables are emptied at a compile's end,
 * the describer's four in 2.3 included, so that no weak ref is left on the
 * real tensors */
void fk_mode_clear_tables(fk_mode *m)
{
    fk_fconv *fc = m->converter;
    fk_mconv *mc = fc->meta;
    wt_table *tabs[5] = {fc->tensor_memo, mc->tensor_memo, mc->storage_memo,
                         mc->lookup_tensor, mc->lookup_storage};
    for (int i = 0; i < 5; i++)
        if (tabs[i])
            wt_clear(tabs[i]);
}

int64_t fk_mode_clear_weakrefs(obj *mode)
{
    if (!fk_is_mode(mode))
        return er_set(ER_TYPE, "clear_weakrefs() needs a fake mode");
    fk_mconv *mc = ((fk_mode *)mode)->converter->meta;
    if (!mc->lookup_tensor || !mc->lookup_storage)
        return er_set(ER_TYPE, "clear_weakrefs(): the mode's design has no describer tables");
    int64_t n = (int64_t)(wt_count(mc->lookup_tensor) + wt_count(mc->lookup_storage));
    wt_clear(mc->lookup_tensor);
    wt_clear(mc->lookup_storage);
    return n;
}

void fk_forget_key(const obj *key)
{
    for (fk_mconv *mc = mconv_list; mc; mc = mc->list_next) {
        wt_remove(mc->tensor_memo, key);
        if (mc->lookup_tensor)
            wt_remove(mc->lookup_tensor, key);
    }
    for (fk_fconv *fc = fconv_list; fc; fc = fc->list_next)
        wt_remove(fc->tensor_memo, key);
}
