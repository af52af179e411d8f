/* hp_census.c - a bounded census of a heap too big to snapshot (hp.h
 * hp_census): groups by kind, type and creating site in a table of at
 * most max_groups entries, and the objects holding the most references
 * directly. No per-object array: memory is the table and HP_TOP records. */
#include "heap/hp_int.h"

#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

typedef struct ckey {
    const obj_type *type;
    uint32_t site;      /* interned (obj.site) */
    uint8_t zombie;
    hp_group g;
} ckey;

typedef struct ctab {
    ckey *v; size_t len, cap, max;
    ix index;                   /* (type, site, zombie) -> v */
    ckey other;                 /* past max: counted here */
} ctab;

static uint64_t ck_hash(const obj *o, int zombie)
{
    return ix_hash_mix((uint64_t)(uintptr_t)o->type, (uint64_t)o->site << 1 | (uint64_t)zombie);
}

static int ck_eq(const void *ctx, uint32_t id, const void *key)
{
    const ckey *k = &((const ctab *)ctx)->v[id], *x = key;
    return k->type == x->type && k->site == x->site && k->zombie == x->zombie;
}

static void ck_init(ckey *k, const obj *o, int zombie)
{
    memset(k, 0, sizeof *k);
    k->type = o->type;
    k->site = o->site;
    k->zombie = (uint8_t)zombie;
    k->g.kind = o->type->kind;
    k->g.type_name = o->type->name;
    k->g.site = obj_site_of(o);
    k->g.reason = HP_UNTRACED;
    k->g.holder = HP_HOLD_UNTRACED;
}

/* The group of o: found, new, or `other` when the table is full. */
static ckey *ck_get(ctab *t, const obj *o, int zombie)
{
    ckey key = {.type = o->type, .site = o->site, .zombie = (uint8_t)zombie};
    uint64_t h = ck_hash(o, zombie);
    uint32_t id = ix_find(&t->index, h, ck_eq, t, &key);
    if (id != IX_NONE)
        return &t->v[id];
    if (t->len == t->max)
        return &t->other;
    ck_init(&t->v[t->len], o, zombie);
    ix_add(&t->index, h, (uint32_t)t->len);   /* reserved for max: cannot fail */
    return &t->v[t->len++];
}

/* References one object holds, by label (the few most common). */
typedef struct fan {
    uint64_t n, bytes;
    struct { const char *label; obj_kind kind; uint64_t n; } part[8];
    size_t np;
} fan;

static void fan_visit(obj *child, const char *label, long index, void *arg)
{
    fan *f = arg;
    (void)index;
    if (!child)
        return;
    f->n++;
    f->bytes += obj_self_bytes(child);
    for (size_t i = 0; i < f->np; i++)
        if (f->part[i].label == label) {   /* labels are static strings */
            f->part[i].n++;
            return;
        }
    if (f->np < 8) {
        f->part[f->np].label = label;
        f->part[f->np].kind = child->type->kind;
        f->part[f->np++].n = 1;
    }
}

static void top_offer(hp_top *top, size_t *ntop, obj *o, const fan *f)
{
    /* worth a line as hp_summarize's are: 64 references or 1 MiB held */
    if ((f->n < 64 && obj_self_bytes(o) + f->bytes < (1u << 20)) ||
        (*ntop == HP_TOP && f->n <= top[HP_TOP - 1].count))
        return;
    size_t i = *ntop < HP_TOP ? (*ntop)++ : HP_TOP - 1;
    while (i > 0 && f->n > top[i - 1].count) {
        top[i] = top[i - 1];
        i--;
    }
    hp_top *t = &top[i];
    memset(t, 0, sizeof *t);
    t->id = o->id;
    t->kind = o->type->kind;
    t->type_name = o->type->name;
    t->count = f->n;
    t->retained_bytes = obj_self_bytes(o) + f->bytes;
    size_t best = 0;
    for (size_t k = 1; k < f->np; k++)
        if (f->part[k].n > f->part[best].n)
            best = k;
    if (f->np) {
        t->main_count = f->part[best].n;
        t->main_kind = f->part[best].kind;
        snprintf(t->main_via, sizeof t->main_via, "%s", f->part[best].label ? f->part[best].label : "?");
    }
    snprintf(t->path, sizeof t->path, "not traced (it holds these directly)");
}

static int cmp_group(const void *a, const void *b)
{
    const hp_group *x = a, *y = b;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int emit(ctab *t, hp_summary *out)
{
    size_t ng = t->len + (t->other.g.count > 0);
    out->groups = hp_xalloc(ng ? ng : 1, sizeof *out->groups);
    if (!out->groups)
        return -1;
    memset(out->groups, 0, (ng ? ng : 1) * sizeof *out->groups);
    for (size_t i = 0; i < t->len; i++)
        out->groups[i] = t->v[i].g;
    if (t->other.g.count) {
        out->groups[t->len] = t->other.g;
        out->groups[t->len].type_name = "(other)";
    }
    out->ngroups = ng;
    for (size_t i = 0; i < ng; i++) {
        hp_group *g = &out->groups[i];
        g->bytes_each = g->count ? g->total_bytes / g->count : 0;
        g->total_retained = g->total_bytes;
        if (!(g->via = al_strdup("not traced", AL_K_HEAP, "hp_census")))
            return er_set(ER_OOM, "out of memory naming a census group");
    }
    if (ng)
        qsort(out->groups, ng, sizeof *out->groups, cmp_group);
    return 0;
}

int hp_census(size_t max_groups, hp_summary *out)
{
    memset(out, 0, sizeof *out);
    ctab t;
    memset(&t, 0, sizeof t);
    t.max = max_groups ? max_groups : 1;
    t.index = (ix)IX_INIT(AL_K_HEAP, "hp_census");
    t.v = hp_xalloc(t.max, sizeof *t.v);
    out->top = hp_xalloc(HP_TOP, sizeof *out->top);
    int rc = -1;
    if (!t.v || ix_reserve(&t.index, t.max) != 0 || !out->top)
        goto out;
    memset(out->top, 0, HP_TOP * sizeof *out->top);
    t.other.g.reason = HP_UNTRACED;
    t.other.g.holder = HP_HOLD_UNTRACED;
    t.other.g.kind = OBJ_GENERIC;
    obj *lists[2] = {obj_live_first(), obj_zombie_first()};
    for (int l = 0; l < 2; l++)
        for (obj *o = lists[l]; o; o = obj_iter_next(o)) {
            ckey *k = ck_get(&t, o, l);
            uint64_t b = obj_self_bytes(o);
            k->g.count++;
            k->g.total_bytes += b;
            out->total++;
            out->total_bytes += b;
            if (l == 0) {
                fan f;
                memset(&f, 0, sizeof f);
                obj_traverse(o, fan_visit, &f);
                top_offer(out->top, &out->ntop, o, &f);
            }
        }
    rc = emit(&t, out);
out:
    hp_xfree(t.v, t.max, sizeof *t.v);
    ix_free(&t.index);
    if (rc != 0) {
        hp_summary_free(out);
        return er_set(ER_OOM, "out of memory taking a census of the heap");
    }
    return 0;
}
