/* fk_cache.c - FakeTensorMode's dispatch cache (designs.md "pytorch-2.3",
 * Dispatch cache), and the version-3 rules each design has.
 *
 * One cache per process, shared by every mode (fake_tensor.py@946abe14:
 * 928-931). Key: the op, each tensor argument's metadata (dtype, sizes,
 * strides, device, layout, storage offset, storage nbytes, requires_grad,
 * conj/neg) and the op's other arguments (:1157-1186); never a tensor, mode
 * or ShapeEnv (:813-835,1264). Kept here as a 64-bit hash of that key. An
 * entry holds nothing - except under cache-holds-shape-env, where an op
 * with symbolic inputs is stored with its unstripped key, which holds the
 * ShapeEnv (before pytorch#127596). Bypass (counted, nothing stored): a
 * constant input, a sparse input (:1244-1266,1299-1300), a sparse output
 * (_make_cache_entry); a mode with
 * propagate_real does not use the cache (:982-985,1449-1452). Ops with
 * symbolic inputs are cached on their ShapeEnv (_fake_tensor_utils.py@
 * a29b95dc:235-244). The cache is not an object: `fake_cache()` is a
 * handle to it, and the scenario runner clears it before each scenario. */
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"
#include "fake/fk_internal.h"

/* ---- the rules of each design (rows by design; none: all off) ---- */

static const fk_v3_rules rules[] = {
    /* fake_tensor.py@946abe14:928-931 (the cache), tr.finish()'s clears:
     * pytorch#171209 (tables), #193015 (se.tracked), #184445 (constants) */
    {FK_D_2_3, 1, 1, 0},
    /* unchanged through 2.14 (designs.md "After 2.3"); PyTorch 2.14.1, run:
     * an op repeated on a symbolic fake is a hit of its ShapeEnv's cache,
     * counted with a miss for the first (cache_info(): hits 1, misses 1,
     * size 0; fakegc-semantics(7)) */
    {FK_D_2_14, 1, 1, 1},
};
static const fk_v3_rules none;

const fk_v3_rules *fk_v3_rules_now(void)
{
    fk_design_id d = fk_design_current();
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].design == d)
            return &rules[i];
    return &none;
}

/* ---- entries ---- */

typedef struct entry {
    uint64_t key;
    obj *hold;                  /* strong: the bug's ShapeEnv, else NULL */
} entry;

static entry *entries;
static size_t nentries, cap_entries;
static fk_cache_stats stats;
static obj *anchor;             /* strong: the handle, while an entry holds */

void fk_cache_stats_get(fk_cache_stats *out)
{
    *out = stats;
    out->size = (int64_t)nentries;
    out->bytes = cap_entries * sizeof *entries;
}

void fk_cache_clear(void)
{
    entry *v = entries;
    size_t n = nentries, cap = cap_entries;
    entries = NULL;
    nentries = cap_entries = 0;
    memset(&stats, 0, sizeof stats);
    for (size_t i = 0; i < n; i++)
        obj_decref(v[i].hold);
    al_free(v, cap * sizeof *v, AL_K_MEMO);
    obj_clear_ref(&anchor);
}

void fk_cache_trim(void)
{
    size_t keep = 0;
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].hold)
            entries[keep++] = entries[i];
    nentries = keep;
    if (!keep) {
        al_free(entries, cap_entries * sizeof *entries, AL_K_MEMO);
        entries = NULL;
        cap_entries = 0;
    }
}

static int lookup(uint64_t key)
{
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].key == key)
            return 1;
    return 0;
}

static int store(uint64_t key, obj *hold)
{
    if (nentries == cap_entries) {
        size_t ncap = cap_entries ? cap_entries * 2 : 16;
        entry *nv = al_realloc(entries, cap_entries * sizeof *nv, ncap * sizeof *nv,
                               AL_K_MEMO, "fk dispatch cache");
        if (!nv)
            return er_set(ER_OOM, "out of memory growing the dispatch cache");
        entries = nv;
        cap_entries = ncap;
    }
    if (hold && !anchor && !(anchor = fk_cache_handle()))
        return -1;
    obj_incref(hold);
    entries[nentries++] = (entry){key, hold};
    return 0;
}

/* ---- the key ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    return ix_hash_u64(h, v);
}

static uint64_t tensor_key(uint64_t h, const ts_tensor *t)
{
    const ts_tensor *m = ts_is_fake(t) ? t->meta : t;
    h = mix(h, (uint64_t)t->dtype);
    h = mix(h, (uint64_t)t->layout);
    h = mix(h, (uint64_t)t->device.type << 32 | (uint32_t)t->device.index);
    h = mix(h, (uint64_t)t->ndim);
    for (int d = 0; d < t->ndim; d++) {
        h = mix(h, (uint64_t)t->sizes[d]);
        h = mix(h, t->layout == TS_STRIDED ? (uint64_t)t->strides[d] : 0);
    }
    h = mix(h, (uint64_t)t->storage_offset);
    h = mix(h, m && m->storage ? m->storage->nbytes : 0);
    return mix(h, (uint64_t)(t->requires_grad | t->neg << 1 | t->conj << 2));
}

uint64_t fk_op_key(ts_op op, const ts_tensor *self, const ts_args *a)
{
    uint64_t h = mix(IX_FNV_BASIS, (uint64_t)op);
    h = tensor_key(h, self);
    if (!a)
        return h;
    if (a->other)
        h = tensor_key(h, a->other);
    h = mix(h, (uint64_t)a->n);
    for (int i = 0; i < a->n && i < TS_MAX_DIM; i++)
        h = mix(h, (uint64_t)a->v[i]);
    h = mix(h, (uint64_t)a->n2);
    for (int i = 0; i < a->n2 && i < TS_MAX_DIM; i++)
        h = mix(h, (uint64_t)a->v2[i]);
    uint64_t sc;
    memcpy(&sc, &a->scalar, sizeof sc);
    h = mix(h, (uint64_t)a->offset);
    h = mix(h, a->has_scalar ? sc ^ (uint64_t)a->scalar_bool : 1);
    h = mix(h, a->has_dim ? (uint64_t)a->dim : ~0ull);
    h = mix(h, a->has_dtype ? (uint64_t)a->dtype : ~0ull);
    h = mix(h, a->has_device ? (uint64_t)a->device.type << 32 | (uint32_t)a->device.index
                             : ~0ull);
    h = mix(h, a->has_sparse_dim ? (uint64_t)a->sparse_dim : ~0ull);
    h = mix(h, a->has_mfmt ? (uint64_t)a->mfmt : ~0ull);
    return mix(h, (uint64_t)a->set_geom);
}

/* ---- around an op ---- */

/* A symbolic op in its ShapeEnv's cache: a hit serves its output from the
 * entry (no memo entry); a miss is stored once the op ran. Counted in the
 * process counters where the design says so. */
static int se_lookup(fk_opctx *cx, uint64_t key)
{
    int counted = fk_v3_rules_now()->se_cache_counted;
    if (fk_shape_cached(cx->symbolic, key)) {
        if (counted) {
            stats.hits++;
            cx->cache_hit = 1;
        }
        return 0;
    }
    if (counted)
        stats.misses++;
    cx->se_store = 1;
    cx->key = key;
    return 0;
}

int fk_cache_pre_op(ts_op op, ts_tensor *self, const ts_args *a, fk_mode *m, fk_opctx *cx)
{
    if (!fk_v3_rules_now()->dispatch_cache || m->propagate_real)
        return 0;
    const ts_tensor *other = a ? a->other : NULL;
    if (fk_const_get(self) || (other && ts_is_fake(other) && fk_const_get(other)) ||
        self->layout != TS_STRIDED || (other && other->layout != TS_STRIDED) ||
        op == TS_OP_SET_) {
        stats.bypasses++;
        return 0;
    }
    uint64_t key = fk_op_key(op, self, a);
    obj *hold = NULL;
    if (cx->symbolic) {
        /* keyed by its inputs' SymInts (their size expressions), not only
         * their hints; stored once the op ran, as a miss of the process
         * cache is: an op that raises leaves no entry (fake_tensor.py@
         * 946abe14:1143-1148) */
        key = mix(key, cx->sym_in);
        if (!fk_bug_state.cache_holds_shape_env)
            return se_lookup(cx, key);
        key = mix(key, cx->symbolic->id);    /* the key holds its ShapeEnv */
        hold = cx->symbolic;
    }
    if (lookup(key)) {
        stats.hits++;
        cx->cache_hit = 1;
        return 0;
    }
    cx->cache_store = 1;
    cx->key = key;
    cx->hold = hold;
    return 0;
}

int fk_cache_post_op(fk_opctx *cx, const ts_tensor *out)
{
    if (cx->cache_store && out && out->layout != TS_STRIDED) {
        /* _make_cache_entry: a sparse output is not cached ("sparse
         * output", fake_tensor.py@946abe14 _make_cache_entry) */
        cx->cache_store = 0;
        stats.bypasses++;
        return 0;
    }
    if (cx->se_store) {
        cx->se_store = 0;
        return fk_shape_cache(cx->symbolic, cx->key);
    }
    if (!cx->cache_store)
        return 0;
    cx->cache_store = 0;
    if (store(cx->key, cx->hold) < 0)
        return -1;
    stats.misses++;
    return 0;
}

/* ---- the handle `fake_cache()` returns ---- */

static obj *handle;

/* The entries' holds are the cache's (anchor keeps the handle alive while
 * there are any): reported as the handle's edges. */
static void handle_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    if (self != anchor)
        return;
    for (size_t i = 0; i < nentries; i++)
        if (entries[i].hold)
            visit(entries[i].hold, "entry", (long)i, arg);
}

static void handle_release(obj *self)
{
    if (handle == self)
        handle = NULL;
}

static const obj_type handle_type = {
    .name = "fake_cache", .kind = OBJ_GENERIC, .traverse = handle_traverse,
    .release = handle_release,
};

obj *fk_cache_anchor(void) { return anchor; }

obj *fk_cache_handle(void)
{
    if (handle) {
        obj_incref(handle);
        return handle;
    }
    handle = obj_new(&handle_type, sizeof(obj));
    return handle;
}

int fk_is_cache_handle(const obj *o) { return o && o->type == &handle_type; }
