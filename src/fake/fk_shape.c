/* fk_shape.c - ShapeEnv, reduced to what holds memory (designs.md
 * "pytorch-2.3" table): its tracked fakes (tracked_fakes, strong: a compile
 * appends each graph input's fake, tr.input) and its own op cache, whose
 * keys are stripped of ShapeEnv references (_fake_tensor_utils.py@
 * a29b95dc:124-140,235-244), so that it holds nothing but a count here.
 * Its backed symbols (s0, s1, ...) are hints in the order made: a dynamic
 * conversion gives each dimension of size 2 or more the symbol of that
 * size, made when none has it (duck sizing; 0 and 1 stay numbers), as
 * ShapeEnv.create_symbol does with duck_shape and specialize_zero_one on.
 * A fake with symbolic sizes holds its ShapeEnv (its "shape_env" edge,
 * fk_mode3.c), as a SymInt's node does, and its sizes' signature (a
 * "sym_sizes" attribute: a hash of each dimension's expression), which
 * keys its ops in the ShapeEnv's cache (SymInt keys, pytorch#127596). */
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "fake/fk_internal.h"

typedef struct fk_shape_env {
    obj hdr;
    ts_tensor **tracked;        /* strong */
    size_t ntracked, cap_tracked;
    uint64_t *keys;             /* its op cache */
    size_t nkeys, cap_keys;
    int64_t unbacked;           /* unbacked symbols made (u0, u1, ...) */
    int64_t *hints;             /* backed symbols: s<i> stands for hints[i] */
    size_t nsym, cap_sym;
} fk_shape_env;

static void se_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_shape_env *se = (fk_shape_env *)self;
    for (size_t i = 0; i < se->ntracked; i++)
        visit(&se->tracked[i]->hdr, "tracked", (long)i, arg);
}

static void untrack_all(fk_shape_env *se)
{
    ts_tensor **v = se->tracked;
    size_t n = se->ntracked, cap = se->cap_tracked;
    se->tracked = NULL;
    se->ntracked = se->cap_tracked = 0;
    for (size_t i = 0; i < n; i++)
        obj_decref(&v[i]->hdr);
    al_free(v, cap * sizeof *v, AL_K_OBJECT);
}

static void se_release(obj *self)
{
    fk_shape_env *se = (fk_shape_env *)self;
    untrack_all(se);
    al_free(se->keys, se->cap_keys * sizeof *se->keys, AL_K_MEMO);
    se->keys = NULL;
    se->nkeys = se->cap_keys = 0;
    al_free(se->hints, se->cap_sym * sizeof *se->hints, AL_K_OBJECT);
    se->hints = NULL;
    se->nsym = se->cap_sym = 0;
}

static uint64_t se_owned(const obj *self)
{
    const fk_shape_env *se = (const fk_shape_env *)self;
    return se->cap_tracked * sizeof *se->tracked + se->cap_keys * sizeof *se->keys +
           se->cap_sym * sizeof *se->hints;
}

static void se_describe(const obj *self, char *buf, size_t n)
{
    const fk_shape_env *se = (const fk_shape_env *)self;
    snprintf(buf, n, "ShapeEnv tracked=%zu cache=%zu symbols=%zu", se->ntracked, se->nkeys,
             se->nsym);
}

static const obj_type se_type = {
    .name = "ShapeEnv", .kind = OBJ_GENERIC, .traverse = se_traverse,
    .release = se_release, .owned_bytes = se_owned, .describe = se_describe,
};

obj *fk_shape_env_new(void)
{
    return obj_new(&se_type, sizeof(fk_shape_env));
}

int fk_is_shape_env(const obj *o) { return o && o->type == &se_type; }

int64_t fk_shape_env_cache_size(const obj *o)
{
    return (int64_t)((const fk_shape_env *)o)->nkeys;
}

int64_t fk_shape_env_tracked(const obj *o)
{
    return (int64_t)((const fk_shape_env *)o)->ntracked;
}

int64_t fk_shape_env_unbacked(const obj *o)
{
    return fk_is_shape_env(o) ? ((const fk_shape_env *)o)->unbacked : 0;
}

int64_t fk_shape_new_unbacked(obj *o)
{
    return ((fk_shape_env *)o)->unbacked++;
}

int fk_shape_track(obj *o, ts_tensor *f)
{
    fk_shape_env *se = (fk_shape_env *)o;
    if (al_grow(&se->tracked, &se->cap_tracked, se->ntracked, sizeof *se->tracked, 4,
                AL_K_OBJECT, "fk tracked fakes") < 0)
        return er_set(ER_OOM, "out of memory growing tracked_fakes");
    obj_incref(&f->hdr);
    se->tracked[se->ntracked++] = f;
    return 0;
}

void fk_shape_untrack(obj *o)
{
    untrack_all((fk_shape_env *)o);
}

int fk_shape_cached(const obj *o, uint64_t key)
{
    const fk_shape_env *se = (const fk_shape_env *)o;
    for (size_t i = 0; i < se->nkeys; i++)
        if (se->keys[i] == key)
            return 1;
    return 0;
}

int fk_shape_cache(obj *o, uint64_t key)
{
    fk_shape_env *se = (fk_shape_env *)o;
    if (fk_shape_cached(o, key))
        return 0;
    if (al_grow(&se->keys, &se->cap_keys, se->nkeys, sizeof *se->keys, 8, AL_K_MEMO,
                "fk ShapeEnv op cache") < 0)
        return er_set(ER_OOM, "out of memory growing a ShapeEnv's op cache");
    se->keys[se->nkeys++] = key;
    return 0;
}

/* ---- backed symbols and symbolic sizes ---- */

int64_t fk_shape_env_symbols(const obj *o)
{
    return fk_is_shape_env(o) ? (int64_t)((const fk_shape_env *)o)->nsym : 0;
}

int64_t fk_shape_symbol_for(obj *o, int64_t hint)
{
    fk_shape_env *se = (fk_shape_env *)o;
    for (size_t i = 0; i < se->nsym; i++)
        if (se->hints[i] == hint)
            return (int64_t)i;
    if (al_grow(&se->hints, &se->cap_sym, se->nsym, sizeof *se->hints, 8, AL_K_OBJECT,
                "fk ShapeEnv symbols") < 0)
        return er_set(ER_OOM, "out of memory making a ShapeEnv symbol");
    se->hints[se->nsym] = hint;
    return (int64_t)se->nsym++;
}

int fk_shape_hint(const obj *o, int64_t sym, int64_t *hint)
{
    const fk_shape_env *se = (const fk_shape_env *)o;
    if (sym < 0 || (uint64_t)sym >= se->nsym) {
        if (se->nsym == 0)
            return er_set(ER_SHAPE, "s%lld: its ShapeEnv has no symbol yet (a dynamic "
                          "conversion makes them)", (long long)sym);
        return er_set(ER_SHAPE, "s%lld: its ShapeEnv has %zu symbol%s (s0..s%zu)",
                      (long long)sym, se->nsym, se->nsym == 1 ? "" : "s", se->nsym - 1);
    }
    *hint = se->hints[sym];
    return 0;
}

/* Expression hashes: a symbol's names its ShapeEnv and index; + and *
 * hash their operands in either order (s0*2 is 2*s0), - and // in order;
 * adding 0 or multiplying by 1 changes nothing. Nothing else is
 * simplified (s0 + s0 is not 2*s0). An expression without a symbol is a
 * number and has no hash (0). */
static uint64_t mixh(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

uint64_t fk_sym_of_symbol(const obj *se, int64_t sym)
{
    uint64_t h = mixh(mixh(0x53594d42ull, se->id), (uint64_t)sym);
    return h ? h : 1;
}

uint64_t fk_sym_combine(int op, int64_t a, uint64_t ha, int64_t b, uint64_t hb)
{
    if (!ha && !hb)
        return 0;
    /* what sympy simplifies at once: x + 0, x - 0, x * 1, x // 1 are x,
     * x * 0 is 0 (the other operand is the symbolic one) */
    int64_t k = ha ? b : a;
    uint64_t hx = ha ? ha : hb;
    if (!(ha && hb)) {
        if ((op == '+' && k == 0) || (op == '*' && k == 1) ||
            (ha && (op == '-' && k == 0)) || (ha && op == '/' && k == 1))
            return hx;
        if (op == '*' && k == 0)
            return 0;
    }
    uint64_t x = ha ? ha : mixh(0x434f4e53ull, (uint64_t)a);
    uint64_t y = hb ? hb : mixh(0x434f4e53ull, (uint64_t)b);
    if ((op == '+' || op == '*') && x > y) {
        uint64_t t = x;
        x = y;
        y = t;
    }
    uint64_t h = mixh(mixh(mixh(0x4f50ull, (uint64_t)op), x), y);
    return h ? h : 1;
}

uint64_t fk_sym_sizes_sig(int n, const int64_t *v, const uint64_t *sym)
{
    uint64_t h = 0x53495a45ull;
    int any = 0;
    for (int i = 0; i < n; i++) {
        any |= sym[i] != 0;
        h = mixh(h, sym[i] ? sym[i] : mixh(0x434f4e53ull, (uint64_t)v[i]));
    }
    return any ? (h ? h : 1) : 0;
}

/* A fake's "sym_sizes": its signature, holding nothing. */
typedef struct fk_symsizes {
    obj hdr;
    uint64_t sig;
} fk_symsizes;

static void symsizes_describe(const obj *self, char *buf, size_t n)
{
    snprintf(buf, n, "symbolic sizes %016llx",
             (unsigned long long)((const fk_symsizes *)self)->sig);
}

static const obj_type symsizes_type = {
    .name = "SymSizes", .kind = OBJ_GENERIC, .describe = symsizes_describe,
};

uint64_t fk_fake_sym_sig(const ts_tensor *t)
{
    const obj *o = t ? obj_attr_get(&t->hdr, "sym_sizes") : NULL;
    return o && o->type == &symsizes_type ? ((const fk_symsizes *)o)->sig : 0;
}

int fk_fake_set_sym(ts_tensor *f, obj *se, uint64_t sig)
{
    fk_symsizes *o = (fk_symsizes *)obj_new(&symsizes_type, sizeof *o);
    if (!o)
        return -1;
    o->sig = sig;
    int rc = obj_attr_set(&f->hdr, "sym_sizes", &o->hdr);
    obj_decref(&o->hdr);
    if (rc == 0 && se && obj_attr_set(&f->hdr, "shape_env", se) < 0)
        return -1;
    return rc;
}

int fk_fake_dynamic_sizes(ts_tensor *f, obj *se)
{
    uint64_t sym[TS_MAX_DIM];
    int n = f->ndim;
    for (int i = 0; i < n && i < TS_MAX_DIM; i++) {
        sym[i] = 0;
        if (f->sizes[i] < 2)
            continue;           /* 0 and 1 are specialized */
        int64_t s = fk_shape_symbol_for(se, f->sizes[i]);
        if (s < 0)
            return -1;
        sym[i] = fk_sym_of_symbol(se, s);
    }
    uint64_t sig = fk_sym_sizes_sig(n, f->sizes, sym);
    return sig ? fk_fake_set_sym(f, NULL, sig) : 0;
}
