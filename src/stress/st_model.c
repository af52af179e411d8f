/* st_model.c - the stress model's objects, counts, memo tables and
 * collections (see st_model.h for what is modelled and why). */
#include "stress/st_model.h"

#include <string.h>

#include "alloc/al.h"
#include "fake/fk.h"

const char *const m_dtype_name[D_COUNT] = {"f16", "bf16", "f32", "f64", "c64", "c128",
                                           "i8",  "u8",   "i32", "i64", "bool"};
const uint8_t m_dtype_size[D_COUNT] = {2, 2, 4, 8, 8, 16, 1, 1, 4, 8, 1};
const uint8_t m_dtype_cat[D_COUNT] = {DC_FLOAT, DC_FLOAT, DC_FLOAT, DC_FLOAT, DC_COMPLEX,
                                      DC_COMPLEX, DC_INT, DC_INT, DC_INT, DC_INT, DC_BOOL};
const char *const m_dev_name[DV_COUNT] = {"cpu", "cuda", "cuda:1", "meta", "lazy"};

/* ---- small vectors ---- */

static int pv_push(model *m, mpvec *v, int32_t k, int32_t val)
{
    if (v->n == v->cap) {
        uint32_t nc = v->cap ? v->cap * 2 : 8;
        mpair *np = al_realloc(v->p, v->cap * sizeof *np, nc * sizeof *np, AL_K_SCENARIO,
                               "st model memo");
        if (!np) {
            m->oom = 1;
            return -1;
        }
        v->p = np;
        v->cap = nc;
    }
    v->p[v->n].k = k;
    v->p[v->n].v = val;
    v->n++;
    return 0;
}

static int iv_push(model *m, mivec *v, int32_t x)
{
    if (v->n == v->cap) {
        uint32_t nc = v->cap ? v->cap * 2 : 16;
        int32_t *np = al_realloc(v->p, v->cap * sizeof *np, nc * sizeof *np, AL_K_SCENARIO,
                                 "st model list");
        if (!np) {
            m->oom = 1;
            return -1;
        }
        v->p = np;
        v->cap = nc;
    }
    v->p[v->n++] = x;
    return 0;
}

static void pv_free(mpvec *v)
{
    al_free(v->p, v->cap * sizeof *v->p, AL_K_SCENARIO);
    memset(v, 0, sizeof *v);
}

static void iv_free(mivec *v)
{
    al_free(v->p, v->cap * sizeof *v->p, AL_K_SCENARIO);
    memset(v, 0, sizeof *v);
}

int32_t m_lookup(const mpvec *v, int32_t key)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->p[i].k == key)
            return v->p[i].v;
    return -1;
}

static int pv_has(const mpvec *v, int32_t key)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->p[i].k == key)
            return 1;
    return 0;
}

/* Remove key's entry; returns its value (the caller drops the memo's
 * reference when the table holds values strongly), or -1. */
static int32_t pv_remove(mpvec *v, int32_t key)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->p[i].k == key) {
            int32_t val = v->p[i].v;
            v->p[i] = v->p[--v->n];
            return val;
        }
    return -1;
}

/* ---- model ---- */

int m_init(model *m, const st_config *c)
{
    memset(m, 0, sizeof *m);
    m->c = c;
    for (int i = 0; i < NVARS; i++)
        m->var[i] = -1;
    m->next_opkey = -2;
    m->mk_cst = m->mk_se = -1;
    m->gen_mid = m->gen_old = -1;
    m_dc_init(m);
    m->ncap = 1024;
    m->n = al_malloc(m->ncap * sizeof *m->n, AL_K_SCENARIO, "st model nodes");
    m->mcap = 8;
    m->m = al_malloc(m->mcap * sizeof *m->m, AL_K_SCENARIO, "st model modes");
    if (!m->n || !m->m) {
        m_free(m);
        return -1;
    }
    return 0;
}

void m_free(model *m)
{
    for (uint32_t i = 0; i < m->nm; i++) {
        pv_free(&m->m[i].fake);
        pv_free(&m->m[i].meta);
        pv_free(&m->m[i].stor);
        pv_free(&m->m[i].mstor);
        pv_free(&m->m[i].cmap);
        iv_free(&m->m[i].pending);
    }
    al_free(m->n, m->ncap * sizeof *m->n, AL_K_SCENARIO);
    al_free(m->m, m->mcap * sizeof *m->m, AL_K_SCENARIO);
    iv_free(&m->work);
    pv_free(&m->tracked);
    m_dc_free(m);
    al_free(m->deferred, m->capdeferred * sizeof *m->deferred, AL_K_SCENARIO);
    memset(m, 0, sizeof *m);
}

int32_t m_new(model *m, uint8_t kind)
{
    if (m->nn == m->ncap) {
        uint32_t nc = m->ncap * 2;
        mnode *np = al_realloc(m->n, m->ncap * sizeof *np, nc * sizeof *np, AL_K_SCENARIO,
                               "st model nodes");
        if (!np) {
            m->oom = 1;
            return -1;
        }
        m->n = np;
        m->ncap = nc;
    }
    int32_t i = (int32_t)m->nn++;
    mnode *x = &m->n[i];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->alive = 1;
    x->rc = 1;
    x->storage = x->base = x->grad = x->meta = x->mode = -1;
    x->ind = x->val = x->crow = x->col = -1;
    x->attr[0] = x->attr[1] = -1;
    x->se = x->cst = x->rcopy = x->vsrc = -1;
    x->cs = x->um = -1;
    x->target = x->mi = -1;
    x->flags = NF_LEAF;
    return i;
}

void m_ref(model *m, int32_t i)
{
    if (i >= 0 && m->n[i].alive)
        m->n[i].rc++;
}

static void die(model *m, int32_t i);

static void drain(model *m)
{
    if (m->draining)
        return;
    m->draining = 1;
    /* first dead, first processed: the core's death queue (src/core/obj.c),
     * so deferred finalizers run in the order the implementation queues them */
    for (uint32_t h = 0; h < m->work.n; h++)
        die(m, m->work.p[h]);
    m->work.n = 0;
    m->draining = 0;
}

void m_unref(model *m, int32_t i)
{
    if (i < 0 || !m->n[i].alive)
        return;
    if (--m->n[i].rc > 0)
        return;
    m->n[i].alive = 0;
    iv_push(m, &m->work, i);
    drain(m);
}

void m_set_edge(model *m, int32_t *slot, int32_t v)
{
    int32_t old = *slot;
    m_ref(m, v);
    *slot = v;
    m_unref(m, old);
}

/* ---- memo finalizers and callbacks ---- */

/* MetaConverter's del_ten for key `key` (storage s: its StorageWeakRef, or
 * -1) in mode md. */
static void meta_finalizer(model *m, mmode *md, int32_t key, int32_t s)
{
    if (!md->alive)
        return;
    if (md->one) {
        /* 2.0 del_ten: pops the one memo's entry (a weak value) */
        pv_remove(&md->fake, key);
        pv_remove(&md->meta, key);
    } else {
        m_unref(m, pv_remove(&md->meta, key));
    }
    if (s < 0)
        return;
    if (!m->n[s].alive)
        m_unref(m, pv_remove(&md->stor, s));
    else if (md->policy == FK_SWEEP_PERIODIC)
        iv_push(m, &md->pending, s);
}

static void defer_push(model *m, int32_t mi, int32_t key, int32_t s)
{
    if (m->ndeferred == m->capdeferred) {
        uint32_t nc = m->capdeferred ? m->capdeferred * 2 : 16;
        mdef *np = al_realloc(m->deferred, m->capdeferred * sizeof *np, nc * sizeof *np,
                              AL_K_SCENARIO, "st model deferred");
        if (!np) {
            m->oom = 1;
            return;
        }
        m->deferred = np;
        m->capdeferred = nc;
    }
    m->deferred[m->ndeferred].mi = mi;
    m->deferred[m->ndeferred].key = key;
    m->deferred[m->ndeferred].stor = s;
    m->ndeferred++;
}

void m_run_deferred(model *m)
{
    /* finalizers may queue more (a meta value dying frees what it held) */
    for (uint32_t i = 0; i < m->ndeferred; i++) {
        mdef d = m->deferred[i];
        meta_finalizer(m, &m->m[d.mi], d.key, d.stor);
    }
    m->ndeferred = 0;
}

/* Callbacks of a dead node (it reads as dead already). */
static void callbacks(model *m, int32_t i)
{
    mnode *x = &m->n[i];
    if (x->kind == NK_TENSOR) {
        for (uint32_t k = 0; k < m->nm; k++) {
            mmode *md = &m->m[k];
            if (!md->alive)
                continue;
            /* meta_utils.py set_tensor_memo: weak_st = StorageWeakRef(
             * t.storage()) is taken when the entry is made, so after a
             * set_ it is the old storage. 1.13: one finalizer with the
             * meta entry; 2.0: one per insertion (meta_utils.py@003dca52:197) */
            while (md->fins && pv_has(&md->mstor, i) &&
                   (md->one || m_lookup(&md->meta, i) >= 0)) {
                int32_t s = pv_remove(&md->mstor, i);
                if (m->c->defer_callbacks)
                    defer_push(m, (int32_t)k, i, s);
                else
                    meta_finalizer(m, md, i, s);
                if (!md->one)
                    break;
            }
            if (!md->ids && !md->one)
                pv_remove(&md->fake, i);      /* the fake memo's key died */
            for (uint32_t e = 0; md->one && !x->fake && e < md->meta.n;) {
                if (md->meta.p[e].v == i)     /* a weak meta value died */
                    md->meta.p[e] = md->meta.p[--md->meta.n];
                else
                    e++;
            }
            /* ... or a plain meta entry of the one memo (mode.meta(t)) */
            for (uint32_t e = 0; md->one && !x->fake && e < md->fake.n;) {
                if (md->fake.p[e].v == i)
                    md->fake.p[e] = md->fake.p[--md->fake.n];
                else
                    e++;
            }
        }
        if (x->fake && x->mode >= 0) {       /* value died: WeakValueDictionary */
            /* the memos holding it: its converter's (x->mi), and its
             * mode's (2.3: an op output, a conversion's fake-view step) */
            int32_t mis[2] = {x->mi >= 0 ? x->mi : m->n[x->mode].mi, m->n[x->mode].mi};
            for (int j = 0; j < 2 - (mis[0] == mis[1]); j++) {
                mmode *md = &m->m[mis[j]];
                for (uint32_t e = 0; md->alive && e < md->fake.n;) {
                    if (md->fake.p[e].v == i)
                        md->fake.p[e] = md->fake.p[--md->fake.n];
                    else
                        e++;
                }
            }
        }
    } else if (x->kind == NK_STORAGE) {
        if (x->flags & NF_DATA)
            m->bytes -= x->nbytes;
        for (uint32_t k = 0; k < m->nm; k++) {
            mmode *md = &m->m[k];
            if (md->alive && md->ids) {
                /* 2.3: a meta storage died, its id -> storage entry goes */
                for (uint32_t e = 0; e < md->stor.n;)
                    if (md->stor.p[e].v == i)
                        md->stor.p[e] = md->stor.p[--md->stor.n];
                    else
                        e++;
            } else if (md->alive && md->policy == FK_SWEEP_EAGER) {
                m_unref(m, pv_remove(&md->stor, i));
            }
        }
    } else if (x->kind == NK_MODE) {
        mmode *md = &m->m[x->mi];
        md->alive = 0;
        if (!(x->flags & (NF_MC | NF_FC)))
            m->live_modes--;
        /* the converter goes with it: its tables are freed */
        for (uint32_t e = 0; e < md->meta.n && !md->one; e++)
            m_unref(m, md->meta.p[e].v);
        for (uint32_t e = 0; e < md->stor.n && !md->ids; e++)
            m_unref(m, md->stor.p[e].v);
        md->meta.n = md->stor.n = md->fake.n = md->pending.n = md->mstor.n = 0;
        m_cmap_drop(m, md, 0);

    }
}

/* Drop every strong edge a dead node holds. */
/* The strong edges of x (17 at most) into e; how many. */
static int strong_edges(const model *m, const mnode *x, int32_t *e)
{
    int32_t v[17] = {x->storage, x->base, x->grad, x->meta, m_strong_mode(m, x), x->ind,
                     x->val,     x->crow, x->col,  x->attr[0], x->attr[1], x->se,
                     x->cst,     x->rcopy, x->cs, x->um, x->vsrc};
    memcpy(e, v, sizeof v);
    return 17;
}

void m_untrack(model *m, int32_t se, int only_alive)
{
    for (uint32_t k = 0; k < m->tracked.n;) {
        mpair p = m->tracked.p[k];
        if (p.k == se && (!only_alive || m->n[p.v].alive)) {
            m->tracked.p[k] = m->tracked.p[--m->tracked.n];
            m_unref(m, p.v);
            k = 0;       /* an unref may have changed the table */
        } else {
            k++;
        }
    }
}

void m_cmap_drop(model *m, mmode *md, int unconst_only)
{
    for (uint32_t k = 0; k < md->cmap.n;) {
        mpair p = md->cmap.p[k];
        if (unconst_only && !(m->n[p.k].alive && m->n[p.k].cst < 0)) {
            k++;
            continue;
        }
        memmove(&md->cmap.p[k], &md->cmap.p[k + 1], (md->cmap.n - k - 1) * sizeof *md->cmap.p);
        md->cmap.n--;
        m_unref(m, p.v);     /* a storage's death changes no constant map */
    }
}

static void release(model *m, int32_t i)
{
    mnode *x = &m->n[i];
    int32_t e[17];
    int ne = strong_edges(m, x, e);
    x->storage = x->base = x->grad = x->meta = x->mode = -1;
    x->ind = x->val = x->crow = x->col = -1;
    x->attr[0] = x->attr[1] = -1;
    x->se = x->cst = x->rcopy = x->vsrc = -1;
    x->cs = x->um = -1;
    for (int k = 0; k < ne; k++)
        m_unref(m, e[k]);
    if (m->n[i].kind == NK_SHAPE_ENV)
        m_untrack(m, i, 0);
}

/* A collection's first step for garbage node i (src/core/gc.c phase 5: every
 * garbage object but the storages is released before any callback runs):
 * drop its edges to survivors and to the held garbage storages, so a
 * survivor that the callbacks then release reads as expired to the later
 * ones (a meta storage held by a memo and by collected meta tensors).
 * Edges to other garbage need nothing (it reads as dead already); the mode
 * edge stays, the callbacks read it (no callback releases a mode). */
static void release_to_survivors(model *m, int32_t i)
{
    mnode *x = &m->n[i];
    int32_t *e[16] = {&x->storage, &x->base, &x->grad, &x->meta, &x->ind,
                      &x->val,     &x->crow, &x->col,  &x->attr[0], &x->attr[1],
                      &x->se,      &x->cst,  &x->rcopy, &x->cs, &x->um, &x->vsrc};
    if (x->kind == NK_SHAPE_ENV)
        m_untrack(m, i, 1);
    for (int k = 0; k < 16; k++) {
        int32_t c = *e[k];
        if (c >= 0 && m->n[c].alive) {
            *e[k] = -1;
            m_unref(m, c);
            x = &m->n[i];
        }
    }
}

static void die(model *m, int32_t i)
{
    callbacks(m, i);
    release(m, i);
}

/* ---- collection ---- */

/* Mark c and queue it, when it is a live node not marked yet. */
static void mark_one(model *m, mivec *st, int32_t c)
{
    if (c >= 0 && m->n[c].alive && !(m->n[c].flags & NF_MARK)) {
        m->n[c].flags |= NF_MARK;
        iv_push(m, st, c);
    }
}

/* A mode's strong values: its kept constant storages, and its meta and
 * storage memos' values where they are strong (1.x). */
static void mark_mode_values(model *m, mivec *st, const mmode *md)
{
    for (uint32_t k = 0; k < md->cmap.n; k++)
        mark_one(m, st, md->cmap.p[k].v);
    for (int tbl = md->one; tbl < 2 - md->ids; tbl++) {
        const mpvec *v = tbl ? &md->stor : &md->meta;
        for (uint32_t k = 0; k < v->n; k++)
            mark_one(m, st, v->p[k].v);
    }
}

static void mark(model *m, int32_t root)
{
    mivec *st = &m->work;   /* the worklist is empty outside drains */
    uint32_t base = st->n;
    if (root < 0 || !m->n[root].alive || (m->n[root].flags & NF_MARK))
        return;
    mark_one(m, st, root);
    while (st->n > base) {
        int32_t i = st->p[--st->n];
        mnode *x = &m->n[i];
        int32_t e[17];
        int ne = strong_edges(m, x, e);
        for (int k = 0; k < ne; k++)
            mark_one(m, st, e[k]);
        for (uint32_t k = 0; x->kind == NK_SHAPE_ENV && k < m->tracked.n; k++)
            if (m->tracked.p[k].k == i)
                mark_one(m, st, m->tracked.p[k].v);
        if (x->kind == NK_MODE)
            mark_mode_values(m, st, &m->m[x->mi]);
    }
}

static void mark_roots(model *m)
{
    for (int i = 0; i < NVARS; i++)
        mark(m, m->var[i]);
    for (int i = 0; i < m->nwith; i++)
        mark(m, m->with[i]);
}

static void unmark_all(model *m)
{
    for (uint32_t i = 0; i < m->nn; i++)
        m->n[i].flags &= (uint16_t)~NF_MARK;
}

int m_reaches_view(model *m, int32_t v)
{
    int found = 0;
    mark(m, v);
    for (uint32_t i = 0; i < m->nn && !found; i++)
        found = (m->n[i].flags & NF_MARK) && m->n[i].kind == NK_TENSOR && m->n[i].base >= 0;
    unmark_all(m);
    return found;
}

int m_held(model *m, int32_t i)
{
    for (uint32_t k = 0; k < m->nn; k++) {
        int32_t e[17];
        int ne = m->n[k].alive && (int32_t)k != i ? strong_edges(m, &m->n[k], e) : 0;
        for (int j = 0; j < ne; j++)
            if (e[j] == i)
                return 1;
    }
    return 0;
}

static int node_gen(const model *m, int32_t i)
{
    return i <= m->gen_old ? 2 : i <= m->gen_mid ? 1 : 0;
}

void m_gc(model *m, int sweep) { m_gc_gen(m, 2, sweep); }

void m_gc_gen(model *m, int gen, int sweep)
{
    int32_t top = (int32_t)m->nn - 1;
    mark_roots(m);
    /* a live view holds its base from C++, where the collector cannot see
     * it (fk_design.base_held_from_cpp): the base is kept as if from outside */
    const fk_design *d = fk_design_get((fk_design_id)m->c->design);
    for (uint32_t i = 0; d && d->base_held_from_cpp && i < m->nn; i++)
        if (m->n[i].alive && m->n[i].kind == NK_TENSOR && m->n[i].base >= 0)
            mark(m, m->n[i].base);
    /* a young collection: the older generations are roots */
    for (uint32_t i = 0; gen < 2 && i < m->nn; i++)
        if (m->n[i].alive && node_gen(m, (int32_t)i) > gen)
            mark(m, (int32_t)i);
    if (gen == 0)
        m->gen_mid = top > m->gen_mid ? top : m->gen_mid;
    else
        m->gen_mid = m->gen_old = top > m->gen_old ? top : m->gen_old;
    /* garbage: alive and unmarked; all of it reads as dead at once, but the
     * storages: C++ objects CPython's collector does not track, alive (held)
     * through the callbacks (CPython's handle_weakrefs runs before its
     * delete_garbage), and dying after them, oldest first */
    uint32_t first = m->nn, ng = 0;
    for (uint32_t i = 0; i < m->nn; i++) {
        mnode *x = &m->n[i];
        if (x->alive && !(x->flags & NF_MARK) && x->kind == NK_STORAGE) {
            x->flags |= NF_HELD;
            x->rc++;               /* the collector's hold */
        } else if (x->alive && !(x->flags & NF_MARK)) {
            x->alive = 0;
            x->flags |= NF_MARK;   /* reuse the bit: garbage of this run */
            if (first == m->nn)
                first = i;
            ng++;
        } else {
            x->flags &= (uint16_t)~NF_MARK;
        }
    }
    if (ng) {
        m->draining = 1;           /* deaths caused here wait for the drain */
        for (uint32_t i = first; i < m->nn; i++)
            if (m->n[i].flags & NF_MARK)
                release_to_survivors(m, (int32_t)i);
        /* the converters of dead modes free their tables first */
        for (uint32_t i = first; i < m->nn; i++)
            if ((m->n[i].flags & NF_MARK) && m->n[i].kind == NK_MODE)
                callbacks(m, (int32_t)i);
        for (uint32_t i = first; i < m->nn; i++)
            if ((m->n[i].flags & NF_MARK) && m->n[i].kind != NK_MODE)
                callbacks(m, (int32_t)i);
        for (uint32_t i = first; i < m->nn; i++)
            if (m->n[i].flags & NF_MARK) {
                m->n[i].flags &= (uint16_t)~NF_MARK;
                release(m, (int32_t)i);
            }
        m->draining = 0;
        drain(m);
    }
    for (uint32_t i = 0; i < m->nn; i++)
        if (m->n[i].flags & NF_HELD) {
            m->n[i].flags &= (uint16_t)~NF_HELD;
            m_unref(m, (int32_t)i);
        }
    /* fk_sweep_all's order: the newest converter first (a sweep can free a
     * meta storage another converter has pending: 2.x converts meta tensors) */
    if (sweep)
        for (uint32_t k = m->nm; k-- > 0;)
            if (m->m[k].alive)
                m_sweep(m, &m->m[k]);
    m_run_deferred(m);
}

void m_end_statement(model *m)
{
    m->op_hit = 0;
    m_run_deferred(m);
    if (m->c->gc_stress)
        m_gc(m, 0);
}

int64_t m_unreachable(model *m, int *predictable)
{
    mark_roots(m);
    int64_t n = 0;
    int ok = 1;
    for (uint32_t i = 0; i < m->nn; i++) {
        mnode *x = &m->n[i];
        if (!x->alive)
            continue;
        if (x->flags & NF_MARK)
            continue;
        n++;
        if (x->kind == NK_MODE || (x->flags & NF_MEMO) || (x->kind == NK_TENSOR && x->fake))
            ok = 0;
    }
    unmark_all(m);
    *predictable = ok;
    return n;
}

/* ---- tensors ---- */

int64_t m_numel(const mnode *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->sizes[i];
    return n;
}

void m_contig(int nd, const int64_t *sz, int64_t *st)
{
    int64_t z = 1;
    for (int d = nd - 1; d >= 0; d--) {
        st[d] = z;
        z *= sz[d] > 1 ? sz[d] : 1;
    }
}

uint64_t m_storage_bytes(int nd, const int64_t *sz, const int64_t *st, int64_t off, uint8_t dt)
{
    for (int i = 0; i < nd; i++)
        if (sz[i] == 0)
            return 0;
    int64_t span = off + 1;
    for (int i = 0; i < nd; i++)
        span += st[i] * (sz[i] - 1);
    return (uint64_t)span * m_dtype_size[dt];
}

int m_is_contiguous(int nd, const int64_t *sz, const int64_t *st)
{
    for (int i = 0; i < nd; i++)
        if (sz[i] == 0)
            return 1;
    int64_t z = 1;
    for (int d = nd - 1; d >= 0; d--)
        if (sz[d] != 1) {
            if (st[d] != z)
                return 0;
            z *= sz[d];
        }
    return 1;
}

/* Non-overlapping and dense: the dims of size >= 2, ordered by stride,
 * tile memory without holes (clone keeps such strides). */
int m_is_dense(int nd, const int64_t *sz, const int64_t *st)
{
    int d[M_MAXD], k = 0;
    for (int i = 0; i < nd; i++)
        if (sz[i] >= 2)
            d[k++] = i;
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && st[d[j]] < st[d[j - 1]]; j--) {
            int t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    int64_t req = 1;
    for (int i = 0; i < k; i++) {
        if (st[d[i]] != req)
            return 0;
        req *= sz[d[i]];
    }
    return 1;
}

/* PyTorch's computeStride: the old dims fall into chunks that are
 * contiguous among themselves; each chunk must be covered exactly by
 * consecutive new dims. 1 with out filled, or 0 when no view exists. */
int m_view_strides(int nd, const int64_t *sz, const int64_t *st, int nn, const int64_t *nsz,
                   int64_t *out)
{
    if (nd == 0) {
        for (int i = 0; i < nn; i++)
            out[i] = 1;
        return 1;
    }
    int64_t numel = 1;
    for (int i = 0; i < nd; i++)
        numel *= sz[i];
    if (numel == 0) {
        int same = nd == nn;
        for (int i = 0; same && i < nd; i++)
            same = sz[i] == nsz[i];
        if (same) {
            memcpy(out, st, (size_t)nd * sizeof *st);
            return 1;
        }
        m_contig(nn, nsz, out);
        return 1;
    }
    int vd = nn - 1;
    int64_t base_stride = st[nd - 1], chunk = 1, vchunk = 1;
    for (int d = nd - 1; d >= 0; d--) {
        chunk *= sz[d];
        if (d == 0 || (sz[d - 1] != 1 && st[d - 1] != chunk * base_stride)) {
            while (vd >= 0 && (vchunk < chunk || nsz[vd] == 1)) {
                out[vd] = vchunk * base_stride;
                vchunk *= nsz[vd];
                vd--;
            }
            if (vchunk != chunk)
                return 0;
            if (d > 0) {
                base_stride = st[d - 1];
                chunk = 1;
                vchunk = 1;
            }
        }
    }
    return vd == -1;
}

int32_t m_storage(model *m, uint64_t nbytes, uint8_t dev)
{
    int32_t i = m_new(m, NK_STORAGE);
    if (i < 0)
        return -1;
    mnode *s = &m->n[i];
    s->nbytes = nbytes;
    s->dev = dev;
    if (dev != DV_META && nbytes > 0) {
        s->flags |= NF_DATA;
        m->bytes += nbytes;
    }
    return i;
}

int32_t m_strided(model *m, int nd, const int64_t *sz, const int64_t *st, uint8_t dt,
                  uint8_t dev)
{
    int64_t cs[M_MAXD];
    if (!st) {
        m_contig(nd, sz, cs);
        st = cs;
    }
    int32_t s = m_storage(m, m_storage_bytes(nd, sz, st, 0, dt), dev);
    if (s < 0)
        return -1;
    int32_t i = m_new(m, NK_TENSOR);
    if (i < 0)
        return -1;
    mnode *t = &m->n[i];
    t->storage = s;        /* takes the storage's creation reference */
    t->dtype = dt;
    t->dev = dev;
    t->ndim = (int8_t)nd;
    memcpy(t->sizes, sz, (size_t)nd * sizeof *sz);
    memcpy(t->strides, st, (size_t)nd * sizeof *st);
    return i;
}

int32_t m_view(model *m, int32_t self, int nd, const int64_t *sz, const int64_t *st,
               int64_t off)
{
    int32_t i = m_new(m, NK_TENSOR);
    if (i < 0)
        return -1;
    mnode *v = &m->n[i], *s = &m->n[self];
    int32_t base = s->base >= 0 ? s->base : self;
    v->dtype = s->dtype;
    v->dev = s->dev;
    v->ndim = (int8_t)nd;
    memcpy(v->sizes, sz, (size_t)nd * sizeof *sz);
    memcpy(v->strides, st, (size_t)nd * sizeof *st);
    v->offset = off;
    v->flags = (uint16_t)(s->flags & (NF_NEG | NF_CONJ | NF_QUANT | NF_USTR));
    if (s->flags & NF_RG)
        v->flags |= NF_RG;
    else
        v->flags |= NF_LEAF;
    v->storage = s->storage;
    m_ref(m, s->storage);
    v->base = base;
    m_ref(m, base);
    return i;
}

static int32_t child(model *m, int nd, const int64_t *sz, uint8_t dt, uint8_t dev)
{
    return m_strided(m, nd, sz, NULL, dt, dev);
}

int32_t m_coo(model *m, int nd, const int64_t *sz, int sd, int64_t nnz, uint8_t dt,
              uint8_t dev, int coalesced)
{
    if (dev == DV_META)
        nnz = 0;
    int64_t isz[2] = {sd, nnz}, vsz[M_MAXD + 1];
    vsz[0] = nnz;
    for (int i = sd; i < nd; i++)
        vsz[1 + i - sd] = sz[i];
    int32_t ind = child(m, 2, isz, D_I64, dev);
    int32_t val = child(m, 1 + nd - sd, vsz, dt, dev);
    int32_t i = m_new(m, NK_TENSOR);
    if (ind < 0 || val < 0 || i < 0)
        return -1;
    mnode *t = &m->n[i];
    t->layout = LY_COO;
    t->dtype = dt;
    t->dev = dev;
    t->ndim = (int8_t)nd;
    memcpy(t->sizes, sz, (size_t)nd * sizeof *sz);
    t->sd = (int8_t)sd;
    t->nnz = nnz;
    if (coalesced)
        t->flags |= NF_COAL;
    t->ind = ind;
    t->val = val;
    return i;
}

int32_t m_csr(model *m, int64_t r, int64_t c, int64_t nnz, uint8_t dt, uint8_t dev)
{
    int64_t cn = r + 1;
    int32_t crow = child(m, 1, &cn, D_I64, dev);
    int32_t col = child(m, 1, &nnz, D_I64, dev);
    int32_t val = child(m, 1, &nnz, dt, dev);
    int32_t i = m_new(m, NK_TENSOR);
    if (crow < 0 || col < 0 || val < 0 || i < 0)
        return -1;
    mnode *t = &m->n[i];
    t->layout = LY_CSR;
    t->dtype = dt;
    t->dev = dev;
    t->ndim = 2;
    t->sizes[0] = r;
    t->sizes[1] = c;
    t->sd = 2;
    t->nnz = nnz;
    t->crow = crow;
    t->col = col;
    t->val = val;
    return i;
}

int32_t m_fake_new(model *m, int32_t meta, int32_t mode, uint8_t fdev)
{
    int32_t i = m_new(m, NK_TENSOR);
    if (i < 0)
        return -1;
    mnode *f = &m->n[i], *t = &m->n[meta];
    f->fake = 1;
    f->layout = t->layout;
    f->dtype = t->dtype;
    f->dev = fdev;
    f->fdev = fdev;
    f->ndim = t->ndim;
    f->sd = t->sd;
    f->nnz = t->nnz;
    memcpy(f->sizes, t->sizes, sizeof f->sizes);
    memcpy(f->strides, t->strides, sizeof f->strides);
    f->offset = t->offset;
    /* an op's result keeps the grad state autograd gave it */
    f->flags = (uint16_t)(t->flags & (NF_USTR | NF_COAL | NF_RG | NF_LEAF));
    f->meta = meta;        /* takes the caller's reference */
    f->mode = mode;
    m_ref(m, m_strong_mode(m, f));
    return i;
}

int32_t m_strong_mode(const model *m, const mnode *x)
{
    if (x->mode >= 0 && x->fake && (m->n[x->mode].flags & NF_WMODE))
        return -1;
    return x->mode;
}

/* ---- modes ---- */

int32_t m_mode_new(model *m, int is_mc, int policy, int64_t every)
{
    if (m->nm == m->mcap) {
        uint32_t nc = m->mcap * 2;
        mmode *np = al_realloc(m->m, m->mcap * sizeof *np, nc * sizeof *np, AL_K_SCENARIO,
                               "st model modes");
        if (!np) {
            m->oom = 1;
            return -1;
        }
        m->m = np;
        m->mcap = nc;
    }
    int32_t i = m_new(m, NK_MODE);
    if (i < 0)
        return -1;
    mmode *md = &m->m[m->nm];
    memset(md, 0, sizeof *md);
    md->node = i;
    md->policy = (uint8_t)policy;
    md->alive = 1;
    md->freq = every < 1 ? 1 : every;
    const fk_design *d = fk_design_get((fk_design_id)m->c->design);
    md->one = !d->fake_memo;
    md->ids = fk_design_table(d, FK_T_LOOKUP_TENSOR)->exists;
    md->fins = (uint8_t)fk_design_has_finalizers(d);
    md->sweeps = (uint8_t)fk_design_sweeps(d);
    md->opmemo = d->op_outputs_memoized;
    md->csr = d->csr_converts;
    md->ctormemo = d->ctor_outputs_memoized;
    md->metanone = d->meta_miss_none;
    md->metasize = d->meta_storage_size;
    md->cstkept = d->const_storage_kept;
    if (!md->sweeps)
        md->freq = 0;        /* sweep_every reads 0 */
    m->n[i].mi = (int32_t)m->nm++;
    if (is_mc)
        m->n[i].flags |= NF_MC;
    else
        m->live_modes++;
    return i;
}

mmode *m_mode_of_var(model *m, int slot)
{
    int32_t i = m->var[slot];
    if (i < 0 || m->n[i].kind != NK_MODE || !m->n[i].alive)
        return NULL;
    return &m->m[m->n[i].mi];
}

/* check_for_expired_weak_storages (meta_utils.py@003dca52:143-161): every
 * pending ref is read first (new_li / stor_to_delete), then the expired
 * ones' entries are popped. Popping a value can kill a meta storage that is
 * itself pending (2.x converts meta tensors): it was read alive, so it stays
 * pending until the next sweep. */
uint64_t m_sweep(model *m, mmode *md)
{
    uint64_t freed = 0;
    uint32_t n = md->pending.n, keep = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t s = md->pending.p[i];
        if (m->n[s].alive) {
            md->pending.p[i] = md->pending.p[keep];
            md->pending.p[keep++] = s;
        }
    }
    /* [keep, n) expired; refs appended meanwhile follow them */
    for (uint32_t i = keep; i < n; i++) {
        int32_t v = pv_remove(&md->stor, md->pending.p[i]);
        if (v >= 0) {
            freed++;
            m_unref(m, v);
        }
    }
    uint32_t late = md->pending.n - n;
    if (late)
        memmove(md->pending.p + keep, md->pending.p + n, late * sizeof *md->pending.p);
    md->pending.n = keep + late;
    if ((int64_t)keep > md->freq)
        md->freq = keep;
    return freed;
}

int m_meta_unsupported(model *m, int32_t t)
{
    const mnode *x = &m->n[t];
    return x->fake || x->layout == LY_CSR || (x->flags & (NF_QUANT | NF_NEG | NF_CONJ)) ||
           (x->base >= 0 && m->n[x->base].layout != LY_STRIDED) || x->dev == DV_META ||
           x->dev == DV_LAZY;
}

static int32_t meta_tensor(model *m, mmode *md, int32_t t);

/* The meta of view t made off base meta b (its as_strided): t's geometry
 * and dtype, none of b's neg/conj/quantized bits. New ref, or -1. */
static int32_t view_off(model *m, int32_t t, int32_t b)
{
    const mnode *x = &m->n[t];
    int64_t sz[M_MAXD], st[M_MAXD];
    memcpy(sz, x->sizes, sizeof sz);
    memcpy(st, x->strides, sizeof st);
    int32_t r = m_view(m, b, x->ndim, sz, st, x->offset);
    if (r >= 0) {
        m->n[r].dtype = m->n[t].dtype;
        m->n[r].flags &= (uint16_t)~(NF_NEG | NF_CONJ | NF_QUANT);
    }
    return r;
}

/* A converted meta r takes t's grad, neg/conj and stride flags; a memo
 * value (or part of one). */
static void memo_flags(model *m, int32_t r, int32_t t)
{
    const uint16_t copied = NF_RG | NF_LEAF | NF_NEG | NF_CONJ | NF_USTR;
    m->n[r].flags = (uint16_t)((m->n[r].flags & ~copied) | (m->n[t].flags & copied) | NF_MEMO);
}

static int32_t convert_fresh(model *m, mmode *md, int32_t t)
{
    const mnode *x = &m->n[t];
    int32_t r;
    if (x->layout == LY_COO) {
        int64_t sz[M_MAXD];
        memcpy(sz, x->sizes, sizeof sz);
        r = m_coo(m, x->ndim, sz, x->sd, 0, x->dtype, DV_META, (x->flags & NF_COAL) != 0);
        if (r >= 0) {
            m->n[m->n[r].ind].flags |= NF_MEMO;
            m->n[m->n[m->n[r].ind].storage].flags |= NF_MEMO;
            m->n[m->n[r].val].flags |= NF_MEMO;
            m->n[m->n[m->n[r].val].storage].flags |= NF_MEMO;
        }
    } else if (x->layout == LY_CSR) {
        /* csr_converts: _sparse_compressed_tensor_with_dims(0, ...) on meta */
        r = m_csr(m, x->sizes[0], x->sizes[1], 0, x->dtype, DV_META);
        if (r >= 0) {
            m->n[m->n[r].crow].flags |= NF_MEMO;
            m->n[m->n[m->n[r].crow].storage].flags |= NF_MEMO;
            m->n[m->n[r].col].flags |= NF_MEMO;
            m->n[m->n[m->n[r].col].storage].flags |= NF_MEMO;
            m->n[m->n[r].val].flags |= NF_MEMO;
            m->n[m->n[m->n[r].val].storage].flags |= NF_MEMO;
        }
    } else if (x->base >= 0) {
        int32_t b = meta_tensor(m, md, x->base);
        if (b < 0)
            return -1;
        r = view_off(m, t, b);
        m_unref(m, b);
    } else {
        int32_t s = x->storage;
        int32_t ms = m_lookup(&md->stor, s);
        int fresh = ms < 0;
        if (fresh) {
            ms = m_storage(m, m->n[s].nbytes, DV_META);
            if (ms < 0 || pv_push(m, &md->stor, s, ms) < 0)
                return -1;
            m->n[ms].flags |= NF_MEMO;
        }
        /* r.set_(meta_storage, ...) on meta: the storage takes this tensor's
         * extent, larger or smaller than before (PyTorch 1.13.1); 2.x: a
         * fresh one at offset 0 the extent, else it only grows (fk.h) */
        x = &m->n[t];   /* m_storage may have moved the nodes */
        uint64_t ext = m_storage_bytes(x->ndim, x->sizes, x->strides, x->offset, x->dtype);
        if (md->metasize == FK_MS_EXTENT || (md->metasize == FK_MS_GROWS && fresh && !x->offset) ||
            m->n[ms].nbytes < ext)
            m->n[ms].nbytes = ext;
        r = m_new(m, NK_TENSOR);
        if (r < 0)
            return -1;
        x = &m->n[t];
        mnode *y = &m->n[r];
        y->dtype = x->dtype;
        y->dev = DV_META;
        y->ndim = x->ndim;
        memcpy(y->sizes, x->sizes, sizeof y->sizes);
        memcpy(y->strides, x->strides, sizeof y->strides);
        y->offset = x->offset;
        y->storage = ms;
        if (!(fresh && md->ids))
            m_ref(m, ms);    /* 2.3: the memo holds a fresh one weakly */
        y->flags = (uint16_t)(x->flags & NF_USTR);
    }
    if (r < 0)
        return -1;
    memo_flags(m, r, t);
    return r;
}

/* see [expired-storages]: every meta_tensor call counts, in designs
 * that sweep */
static void count_call(model *m, mmode *md)
{
    if (md->sweeps && ++md->count >= md->freq) {
        m_sweep(m, md);
        md->count = 0;
    }
}

static int32_t meta_tensor(model *m, mmode *md, int32_t t)
{
    count_call(m, md);
    int32_t hit = m_lookup(&md->meta, t);
    if (hit >= 0) {
        m_ref(m, hit);
        return hit;
    }
    int32_t r = convert_fresh(m, md, t);
    if (r < 0)
        return -1;
    if (pv_push(m, &md->meta, t, r) < 0)   /* the memo keeps the creation ref */
        return -1;
    const mnode *x = &m->n[t];
    if (md->fins &&
        pv_push(m, &md->mstor, t, x->layout == LY_STRIDED ? x->storage : -1) < 0)
        return -1;
    if (!md->one)
        m_ref(m, r);   /* 2.x: weak values, the caller has the only reference */
    return r;
}

/* 2.x: what the MetaConverter rejects for a fake ("meta converter nyi"):
 * a fake, sparse CSR, a view of a sparse base, lazy; neg/conj and meta
 * tensors convert (meta_utils.py@003dca52:679,711-716,
 * meta_utils.py@0f315d37:1897-1904) */
static int one_unsupported(const model *m, const mmode *md, int32_t t)
{
    const mnode *x = &m->n[t];
    return x->fake || (x->layout == LY_CSR && !md->csr) ||
           (x->base >= 0 && m->n[x->base].layout != LY_STRIDED) || x->dev == DV_LAZY;
}

/* What each fake a 2.x conversion builds gets (designs.md "Additions,
 * version 3"): the constant of m.fake(t, constant=true) (the top tensor,
 * a base built on the way included: fake_tensor.py@946abe14:327-329), the
 * ShapeEnv of m.fake(t, dynamic=true), and in a propagate_real mode a copy
 * (clone) of its real tensor when that is a strided non-view real tensor
 * (meta_utils.py@0f315d37:1725, fake_tensor.py@946abe14:961-966). */
static int32_t from_real(model *m, mmode *md, int32_t t, int32_t owner);

static int built(model *m, int32_t owner, int32_t f, int32_t t)
{
    m->nbuilt++;
    if (m->mk_cst >= 0)
        m_set_edge(m, &m->n[f].cst, m->mk_cst);
    /* pytorch#177496: a 0-d CPU constant is the fake's constant_scalar too */
    if (m->mk_cst >= 0 && m->cscalar && m->n[m->mk_cst].ndim == 0 &&
        m->n[m->mk_cst].dev == DV_CPU)
        m_set_edge(m, &m->n[f].cs, m->mk_cst);
    if (m->mk_se >= 0)
        m_set_edge(m, &m->n[f].se, m->mk_se);
    const mnode *x = &m->n[t];
    if (!m->m[m->n[owner].mi].propreal || x->base >= 0 || x->layout != LY_STRIDED ||
        x->fake || x->dev == DV_META)
        return 0;
    st_action a = {.op = A_NEWOP, .sub = NO_CLONE, .dst = -1, .a = -1, .b = -1};
    mplan p;
    if (m_newop_plan(m, t, -1, &a, &p) != MERR_NONE)
        return 0;            /* the generator converts no such tensor here */
    int32_t c = m_run_plan(m, t, &p, 0);
    if (c < 0)
        return -1;
    m->n[f].rcopy = c;       /* the clone's reference */
    return 0;
}

int32_t m_fake_v3(model *m, mmode *md, int32_t t, int32_t cst, int32_t se)
{
    m->mk_cst = cst;
    m->mk_se = se;
    uint64_t before = m->nbuilt;
    int32_t f = from_real(m, md, t, md->node);
    m->mk_cst = m->mk_se = -1;
    /* add_constant_storage_mapping after a miss (a hit returns the fake
     * unchanged, fake_tensor.py@946abe14:304); under const_storage_kept its
     * StorageWeakRef keeps the constant's storage (fake/fk_const.c) */
    if (f >= 0 && cst >= 0 && md->cstkept && m->nbuilt != before &&
        pv_push(m, &md->cmap, f, m->n[cst].storage) == 0)
        m_ref(m, m->n[cst].storage);
    return f;
}

/* ---- pytorch-2.14: item() memos (fake_tensor.py@946abe14
 * UnbackedMemoDescriptor), version counters, constant_scalar ---- */

static int32_t family_root(const model *m, int32_t t)
{
    while (m->n[t].base >= 0)
        t = m->n[t].base;
    return t;
}

void m_bump_version(model *m, int32_t t)
{
    int32_t r = family_root(m, t);
    m->n[r].ver = (m->n[r].ver + 1) & 0xfffffu;
}

int32_t m_item(model *m, int32_t f, int32_t se)
{
    mnode *x = &m->n[f];
    uint32_t ver = m->n[family_root(m, f)].ver;
    uint32_t ep = m->m[m->n[x->mode].mi].epoch;
    if (x->um >= 0) {
        if (x->umvc == ver && x->umep == ep)
            return x->umsym;
        m_set_edge(m, &m->n[f].um, -1);       /* __get__ forgets a stale memo */
    }
    int32_t sym = m->n[se].nunb++;
    if (!m->infer) {
        m_set_edge(m, &m->n[f].um, se);
        m->n[f].umsym = sym;
        m->n[f].umvc = ver;
        m->n[f].umep = ep;
    }
    return sym;
}

int m_item_stale(const model *m, int32_t f)
{
    const mnode *x = &m->n[f];
    return x->um >= 0 && x->mode >= 0 && x->umvc == m->n[family_root(m, f)].ver &&
           x->umep != m->m[m->n[x->mode].mi].epoch;
}

void m_clear_constant(model *m, int32_t f)
{
    m_set_edge(m, &m->n[f].cst, -1);
    m_set_edge(m, &m->n[f].cs, -1);
}

void m_track(model *m, int32_t se, int32_t f)
{
    if (pv_push(m, &m->tracked, se, f) == 0)
        m_ref(m, f);
}

/* 2.x: the one memo's conversion (fake/fk_conv.c one_memo_fake): the base
 * first, the view's fake off the base's fake (a view of it, which it
 * holds), grad recursively, the entry last with its finalizer (2.0); in 2.3
 * the fake-view step is an op whose output gets an entry of its own. */
static int32_t one_fake(model *m, mmode *md, int32_t t, int32_t owner)
{
    count_call(m, md);
    int32_t hit = m_lookup(&md->fake, t);
    if (hit >= 0) {
        m_ref(m, hit);
        return hit;
    }
    const mnode *x = &m->n[t];
    int32_t bf = -1, r;
    if (x->base >= 0 && x->layout == LY_STRIDED) {
        bf = one_fake(m, md, x->base, owner);
        if (bf < 0)
            return -1;
        if (!m->n[bf].fake) {
            /* the base's entry is mode.meta(base)'s plain meta tensor
             * (fk_conv.c one_memo_fake_at): a plain meta view, memoized */
            r = view_off(m, t, bf);
            m_unref(m, bf);
            if (r < 0)
                return -1;
            memo_flags(m, r, t);
            if (pv_push(m, &md->fake, t, r) < 0)
                return -1;
            x = &m->n[t];
            if (md->fins &&
                pv_push(m, &md->mstor, t, x->layout == LY_STRIDED ? x->storage : -1) < 0)
                return -1;
            return r;
        }
        r = view_off(m, t, m->n[bf].meta);
        if (r >= 0)
            memo_flags(m, r, t);
    } else {
        r = convert_fresh(m, md, t);
    }
    if (r < 0)
        return -1;
    int32_t f = m_fake_new(m, r, owner, m->n[t].dev);
    if (f < 0)
        return -1;
    x = &m->n[t];
    mnode *y = &m->n[f];
    y->flags = (uint16_t)((y->flags & ~(NF_RG | NF_LEAF)) | (x->flags & (NF_RG | NF_LEAF)));
    y->base = bf;                       /* bf's reference */
    y->mi = (int32_t)(md - m->m);
    if (built(m, owner, f, t) < 0)
        return -1;
    x = &m->n[t];                       /* built() may have moved the nodes */
    /* dispatched to the owner mode: its converter memoizes it */
    mmode *om = &m->m[m->n[owner].mi];
    if (bf >= 0 && om->opmemo && pv_push(m, &om->fake, m->next_opkey--, f) < 0)
        return -1;
    if (x->grad >= 0) {
        int32_t g = one_fake(m, md, x->grad, owner);
        if (g < 0)
            return -1;
        m->n[f].grad = g;
    }
    if (pv_push(m, &md->fake, t, f) < 0)
        return -1;
    if (md->fins) {
        x = &m->n[t];
        if (pv_push(m, &md->mstor, t, x->layout == LY_STRIDED ? x->storage : -1) < 0)
            return -1;
    }
    return f;
}

void m_op_output(model *m, int32_t f)
{
    const mnode *y = &m->n[f];
    if (f < 0 || !y->fake || y->mode < 0)
        return;
    mmode *md = &m->m[m->n[y->mode].mi];
    if (md->alive && md->opmemo && !m->op_hit)
        pv_push(m, &md->fake, m->next_opkey--, f);
}

/* mode.meta(t) with one memo (fake/fk_conv.c meta_in_memo): the entry
 * (a fake when a conversion made it), else a plain meta tensor memoized; a
 * view off its base's entry, off a fake as an op: a fake view of it. */
static int32_t meta_in_memo(model *m, mmode *md, int32_t t)
{
    count_call(m, md);
    int32_t hit = m_lookup(&md->fake, t), r;
    if (hit >= 0) {
        m_ref(m, hit);
        return hit;
    }
    if (m->n[t].base >= 0 && m->n[t].layout == LY_STRIDED) {
        int32_t b = meta_in_memo(m, md, m->n[t].base);
        if (b < 0)
            return -1;
        if (!m->n[b].fake) {
            r = view_off(m, t, b);
            m_unref(m, b);
            if (r >= 0)
                memo_flags(m, r, t);
        } else {
            int32_t v = view_off(m, t, m->n[b].meta);
            if (v < 0)
                return -1;
            memo_flags(m, v, t);
            r = m_fake_new(m, v, md->node, m->n[b].fdev);
            if (r < 0)
                return -1;
            m->n[r].base = b;                  /* b's reference */
            m->n[r].mi = (int32_t)(md - m->m);
            if (md->opmemo && pv_push(m, &md->fake, m->next_opkey--, r) < 0)
                return -1;
        }
    } else {
        r = convert_fresh(m, md, t);
    }
    if (r < 0 || pv_push(m, &md->fake, t, r) < 0)
        return -1;
    const mnode *x = &m->n[t];
    if (md->fins &&
        pv_push(m, &md->mstor, t, x->layout == LY_STRIDED ? x->storage : -1) < 0)
        return -1;
    return r;
}

void m_ctor_output(model *m, int32_t f)
{
    if (f < 0 || m->n[f].mode < 0)
        return;
    mmode *md = &m->m[m->n[m->n[f].mode].mi];
    if (md->alive && md->ctormemo)
        pv_push(m, &md->fake, m->next_opkey--, f);
}

int32_t m_meta_convert(model *m, mmode *md, int32_t t)
{
    if (md->one && !(m->n[md->node].flags & NF_MC)) {
        if ((m->n[t].flags & NF_QUANT) || one_unsupported(m, md, t)) {
            md->misses++;
            if (md->metanone)
                return M_META_NONE;
            m_ref(m, t);
            return t;
        }
        md->hits++;
        return meta_in_memo(m, md, t);
    }
    if (m_meta_unsupported(m, t)) {
        md->misses++;
        m_ref(m, t);
        return t;
    }
    md->hits++;
    return meta_tensor(m, md, t);
}

/* Would from_real_tensor(t) succeed, fail at once (nothing converted), or
 * fail after converting something (a grad that cannot be converted)? */
static int fake_check_real(model *m, mmode *md, int32_t t, int depth)
{
    if (m_lookup(&md->fake, t) >= 0)
        return MERR_NONE;
    const mnode *x = &m->n[t];
    if (x->flags & NF_QUANT)
        return depth ? MERR_SKIP : MERR_UNSUP;
    if (md->one ? one_unsupported(m, md, t)
                : m_meta_unsupported(m, t) && (x->fake || x->dev != DV_META))
        return depth ? MERR_SKIP : MERR_UNSUP;
    if (x->grad >= 0) {
        if (depth > 8)
            return MERR_SKIP;
        int r = fake_check_real(m, md, x->grad, depth + 1);
        if (r != MERR_NONE)
            return MERR_SKIP;
    }
    return MERR_NONE;
}

int m_fake_check(model *m, mmode *md, int32_t t, int with_device)
{
    if (with_device) {
        const mnode *x = &m->n[t];
        return x->fake || x->dev != DV_META ? MERR_TYPE : MERR_NONE;
    }
    return fake_check_real(m, md, t, 0);
}

/* meta_utils.py MetaConverter.meta_tensor / FakeTensor.from_meta_and_device:
 * a converted fake is a leaf with its source's requires_grad (the
 * conversion runs under no_grad and calls requires_grad_), whatever the
 * source was (scenarios/v2/leaf_and_grad.scn) */
static void converted_leaf(mnode *f, const mnode *src)
{
    f->flags = (uint16_t)((f->flags & ~NF_RG) | NF_LEAF | (src->flags & NF_RG));
}

static int32_t from_real(model *m, mmode *md, int32_t t, int32_t owner)
{
    int32_t hit = m_lookup(&md->fake, t);
    if (hit >= 0) {
        m_ref(m, hit);
        return hit;
    }
    if (md->one) {
        md->hits++;    /* once: the recursion is the MetaConverter's */
        return one_fake(m, md, t, owner);
    }
    int32_t mt = m_meta_convert(m, md, t);
    if (mt < 0)
        return -1;
    int32_t f = m_fake_new(m, mt, owner, m->n[t].dev);
    if (f < 0)
        return -1;
    m->n[f].mi = (int32_t)(md - m->m);   /* the memo it is a value of */
    mnode *x = &m->n[t];
    converted_leaf(&m->n[f], x);
    if (x->grad >= 0) {
        int32_t g = from_real(m, md, m->n[t].grad, owner);
        if (g < 0)
            return -1;
        m->n[f].grad = g;
    }
    if (pv_push(m, &md->fake, t, f) < 0)
        return -1;
    return f;
}

int32_t m_fake(model *m, mmode *md, int32_t t, int with_device, uint8_t dev)
{
    if (!with_device)
        return from_real(m, md, t, md->node);
    int32_t hit = m_lookup(&md->fake, t);
    if (hit >= 0) {
        m_ref(m, hit);
        return hit;
    }
    int32_t src = t;
    if (md->ids && m->n[t].layout == LY_STRIDED) {
        /* 2.3: the fake is a new TensorImpl over t's storage, it does not
         * keep t (fk_conv.c from_meta_and_device) */
        const uint16_t kept = NF_NEG | NF_CONJ | NF_QUANT | NF_USTR | NF_RG;
        src = m_alias(m, t, m->n[t].dtype, (uint16_t)((m->n[t].flags & kept) | NF_LEAF));
        if (src < 0)
            return -1;
    } else {
        m_ref(m, t);
    }
    int32_t f = m_fake_new(m, src, md->node, dev);
    if (f < 0)
        return -1;
    converted_leaf(&m->n[f], &m->n[t]);
    if (pv_push(m, &md->fake, t, f) < 0)
        return -1;
    /* 2.0: the FakeTensorConverter's finalizer on the meta tensor only pops
     * the entry (fake_tensor.py@6ec61862:229-244,304-313) */
    if (md->one && md->fins && pv_push(m, &md->mstor, t, -1) < 0)
        return -1;
    m->n[f].mi = (int32_t)(md - m->m);
    return f;
}

/* fake_tensor.py FakeTensorConverter.__call__(fake_mode, t): the memo is
 * the converter's own (a hit whatever the mode), the FakeTensor holds the
 * mode it was made for. */
int32_t m_convert(model *m, mmode *md, int32_t t, int32_t owner)
{
    return from_real(m, md, t, owner);
}

int32_t m_converter_new(model *m, int policy, int64_t every)
{
    int32_t i = m_mode_new(m, 1, policy, every);
    if (i >= 0)
        m->n[i].flags = (uint16_t)((m->n[i].flags & ~NF_MC) | NF_FC);
    return i;
}

/* PyTorch's Tensor.set_(source): the storage edge moves to source's
 * storage (the old one may die now), the geometry is source's; base, grad
 * and flags stay (the generator only uses sources that do not require
 * grad). The memo entries keyed by t stay: a fake memo hit keeps the old
 * geometry, as in PyTorch 1.13.1. */
void m_set_(model *m, int32_t t, int32_t src)
{
    mnode *x = &m->n[t];
    const mnode *y = &m->n[src];
    x->ndim = y->ndim;
    memcpy(x->sizes, y->sizes, sizeof x->sizes);
    memcpy(x->strides, y->strides, sizeof x->strides);
    x->offset = y->offset;
    x->flags = (uint16_t)((x->flags & ~NF_USTR) | (y->flags & NF_USTR));
    m_set_edge(m, &x->storage, y->storage);
}

/* view(dtype), same element size: view_dtype in PyTorch 1.13.1 makes an
 * alias with a new TensorImpl over the storage; _base is None and it does
 * not require grad. */
int32_t m_alias(model *m, int32_t t, uint8_t dtype, uint16_t flags)
{
    int32_t r = m_new(m, NK_TENSOR);
    if (r < 0)
        return -1;
    const mnode *x = &m->n[t];
    mnode *y = &m->n[r];
    y->dtype = dtype;
    y->dev = x->dev;
    y->ndim = x->ndim;
    memcpy(y->sizes, x->sizes, sizeof y->sizes);
    memcpy(y->strides, x->strides, sizeof y->strides);
    y->offset = x->offset;
    y->flags = flags;
    y->storage = x->storage;
    m_ref(m, x->storage);
    return r;
}

int32_t m_view_dtype(model *m, int32_t t, uint8_t dtype)
{
    return m_alias(m, t, dtype, (uint16_t)(NF_LEAF | (m->n[t].flags & NF_USTR)));
}
