/* hp_dtree.c - the dominator tree, aggregated and capped, for a page that
 * lets a person expand it (Eclipse MAT's dominator tree grouped by class).
 *
 * A node of the aggregated tree is a set of sibling objects in the real
 * dominator tree that share their type and the label of the edge that
 * holds them (their BFS parent edge, or the root that names them): the
 * children of an aggregated node are the dominator-tree children of all its
 * members, grouped again. The nodes with the most retained bytes are
 * expanded first, until max_nodes are kept; each object belongs to at most
 * one node, so the whole walk is O(V) after hp_analyze.
 */
#include "heap/hp_int.h"

#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

enum { DT_TOP_ROOTS, DT_TOP_UNREACH, DT_TOP_WEAK };
#define DT_NO_LABEL UINT32_MAX
#define DT_ROOT_BIT 0x80000000u
#define DT_BUCKETS 4096u   /* distinct (type, label) pairs looked at per node */

typedef struct dt_bucket {
    const obj_type *type;
    uint32_t label;
    uint32_t first;            /* first member (node number) */
    uint64_t count, shallow, retained;
    uint32_t keep;             /* index in the output + 1, or 0 */
} dt_bucket;

typedef struct dt_work {
    hp_graph *g;
    uint32_t *coff, *cl;       /* children CSR over n + 3 parents */
    uint32_t *pool;            /* members of kept nodes */
    size_t pool_used;
    uint32_t *moff, *mlen;     /* per output node: its members in pool */
    hp_dtree *t;
    size_t max_nodes, max_kids;
    dt_bucket *b; size_t nb;   /* buckets of the node being expanded */
    uint32_t *bh;              /* bucket hash: index + 1 */
    uint32_t *canon;           /* per root: the first root of its name's shape
                                  ("KEEP[0]", "KEEP[1]": "KEEP[]"), or NULL */
} dt_work;

void hp_human_bytes(uint64_t b, char *buf, size_t n)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    if (b < 1024) {
        snprintf(buf, n, "%llu B", (unsigned long long)b);
        return;
    }
    double v = (double)b / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof unit / sizeof *unit) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.1f %s", v, unit[u]);
}

/* A root name's shape: what brackets hold dropped ("KEEP[3]" -> "KEEP[]"). */
static void name_shape(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    int depth = 0;
    for (; *s && k + 1 < n; s++) {
        depth -= *s == ']' && depth > 0;
        if (!depth)
            buf[k++] = *s;
        depth += *s == '[';
    }
    buf[k] = '\0';
}

/* Roots of one name shape share their first's index: the members of a
 * list the program holds are one node. Quadratic in the roots, which are
 * the program's variables and holds (a few hundred). */
static uint32_t *root_canon(const hp_graph *g)
{
    size_t n = g->nroots + 1;   /* + the finalizers' implicit root */
    uint32_t *c = hp_xalloc(n, sizeof *c);
    if (!c)
        return NULL;
    char a[96], b[96];
    for (uint32_t i = 0; i < n; i++) {
        c[i] = i;
        name_shape(hp_root_name(g, i), a, sizeof a);
        for (uint32_t j = 0; j < i && c[i] == i; j++)
            if (c[j] == j && (name_shape(hp_root_name(g, j), b, sizeof b), strcmp(a, b) == 0))
                c[i] = j;
    }
    return c;
}

/* The edge that holds v in its BFS tree: a label number, a root index with
 * DT_ROOT_BIT, or DT_NO_LABEL. */
static uint32_t holder_label(const dt_work *w, uint32_t v)
{
    const hp_graph *g = w->g;
    if (HP_REGION(g, v) == HP_R_ZOMBIE) {
        uint32_t e = g->zedge ? g->zedge[v - g->nlive] : HP_NONE;
        return e == HP_NONE ? DT_NO_LABEL : g->weak.e[e].label;
    }
    if (g->region[v] & HP_F_TROOT) {
        uint32_t r = g->pedge[v];
        if (r == HP_NONE)
            return DT_NO_LABEL;
        return (w->canon && r <= g->nroots ? w->canon[r] : r) | DT_ROOT_BIT;
    }
    return g->pedge[v] == HP_NONE ? DT_NO_LABEL : g->strong.e[g->pedge[v]].label;
}

/* many: the label of several members (a root's name shape) */
static void label_text(const hp_graph *g, uint32_t label, int many, char *buf, size_t n)
{
    char shape[96];
    if (label == DT_NO_LABEL) {
        snprintf(buf, n, "%s", "");
    } else if (label & DT_ROOT_BIT) {
        const char *name = hp_root_name(g, label & ~DT_ROOT_BIT);
        if (many)
            name_shape(name, shape, sizeof shape);
        snprintf(buf, n, "root %s", many ? shape : name);
    } else
        snprintf(buf, n, "%s", g->labels[label]);
}

/* Children lists of the dominator tree: parent idom[v], zombies (no
 * dominator) under the virtual node n + 2. */
static int build_children(dt_work *w)
{
    hp_graph *g = w->g;
    size_t n = g->n, N = n + 3;
    w->coff = hp_xalloc(N + 1, sizeof *w->coff);
    w->cl = hp_xalloc(n ? n : 1, sizeof *w->cl);
    if (!w->coff || !w->cl)
        return -1;
    memset(w->coff, 0, (N + 1) * sizeof *w->coff);
    for (uint32_t v = 0; v < n; v++) {
        uint32_t p = g->idom[v] == HP_NONE ? (uint32_t)n + 2 : g->idom[v];
        w->coff[p + 1]++;
    }
    for (size_t p = 0; p < N; p++)
        w->coff[p + 1] += w->coff[p];
    for (uint32_t v = 0; v < n; v++) {
        uint32_t p = g->idom[v] == HP_NONE ? (uint32_t)n + 2 : g->idom[v];
        w->cl[w->coff[p]++] = v;
    }
    for (size_t p = N; p > 0; p--)
        w->coff[p] = w->coff[p - 1];
    w->coff[0] = 0;
    return 0;
}

static int add_node(dt_work *w, uint32_t parent, const dt_bucket *b, uint32_t moff,
                    uint32_t mlen)
{
    hp_dtree *t = w->t;
    if (t->n == t->cap)
        return -1;   /* cap reached: the caller stops */
    hp_dnode *d = &t->nodes[t->n];
    memset(d, 0, sizeof *d);
    d->parent = parent;
    d->count = b->count;
    d->shallow = b->shallow;
    d->retained = b->retained;
    if (b->type) {
        const obj *o = w->g->objs[b->first];
        d->kind = b->type->kind;
        d->type_name = b->type->name ? b->type->name : "?";
        d->first_id = o->id;
        d->zombie = HP_REGION(w->g, b->first) == HP_R_ZOMBIE;
        label_text(w->g, b->label, b->count > 1, d->label, sizeof d->label);
        char desc[48] = "";
        if (!d->zombie && o->type->describe)
            o->type->describe(o, desc, sizeof desc);
        snprintf(d->example, sizeof d->example, "%s#%llu%s%s", obj_kind_name(d->kind),
                 (unsigned long long)o->id, desc[0] ? " " : "", desc);
    }
    w->moff[t->n] = moff;
    w->mlen[t->n] = mlen;
    t->n++;
    return 0;
}

static dt_bucket *bucket_get(dt_work *w, const obj_type *type, uint32_t label)
{
    uint64_t x = (uint64_t)(uintptr_t)type * 0x9E3779B97F4A7C15ULL ^ label * 0xC2B2AE3DULL;
    size_t mask = 2 * DT_BUCKETS - 1;
    for (size_t i = (size_t)(x >> 20) & mask;; i = (i + 1) & mask) {
        if (!w->bh[i]) {
            if (w->nb == DT_BUCKETS)
                return &w->b[DT_BUCKETS];   /* the overflow bucket */
            w->b[w->nb] = (dt_bucket){type, label, 0, 0, 0, 0, 0};
            w->bh[i] = (uint32_t)++w->nb;
            return &w->b[w->nb - 1];
        }
        dt_bucket *b = &w->b[w->bh[i] - 1];
        if (b->type == type && b->label == label)
            return b;
    }
}

static int by_retained(const void *pa, const void *pb)
{
    const dt_bucket *a = pa, *b = pb;
    if (a->retained != b->retained)
        return a->retained > b->retained ? -1 : 1;
    return a->count > b->count ? -1 : a->count < b->count;
}

/* Group the children of node x's members, keep the biggest groups. */
static void expand(dt_work *w, uint32_t x)
{
    hp_graph *g = w->g;
    hp_dnode *d = &w->t->nodes[x];
    d->expanded = 1;
    w->nb = 0;
    memset(w->bh, 0, 2 * DT_BUCKETS * sizeof *w->bh);
    w->b[DT_BUCKETS] = (dt_bucket){NULL, DT_NO_LABEL, 0, 0, 0, 0, 0};
    const uint32_t *m = w->pool + w->moff[x];
    for (uint32_t i = 0; i < w->mlen[x]; i++)
        for (uint32_t k = w->coff[m[i]]; k < w->coff[m[i] + 1]; k++) {
            uint32_t c = w->cl[k];
            if (c >= g->n)
                continue;
            dt_bucket *b = bucket_get(w, g->objs[c]->type, holder_label(w, c));
            if (!b->count)
                b->first = c;
            b->count++;
            b->shallow += hp_self(g, c);
            b->retained += g->ret[c];
        }
    if (w->nb)
        qsort(w->b, w->nb, sizeof *w->b, by_retained);
    const dt_bucket *ov = &w->b[DT_BUCKETS];
    d->more_groups = ov->count ? 1 : 0;
    d->more_count = ov->count;
    d->more_retained = ov->retained;
    for (size_t i = 0; i < w->nb; i++) {
        dt_bucket *b = &w->b[i];
        if (i < w->max_kids && w->t->n < w->t->cap) {
            b->keep = (uint32_t)w->t->n + 1;
            add_node(w, x, b, (uint32_t)w->pool_used, 0);
            w->pool_used += b->count;
            w->t->nodes[x].nkids++;
        } else {
            d = &w->t->nodes[x];
            d->more_groups++;
            d->more_count += b->count;
            d->more_retained += b->retained;
        }
    }
    /* members of the kept groups: the hash again, over the sorted buckets */
    memset(w->bh, 0, 2 * DT_BUCKETS * sizeof *w->bh);
    size_t nb = w->nb;
    w->nb = 0;
    for (size_t i = 0; i < nb; i++) {
        dt_bucket keep = w->b[i];
        dt_bucket *b = bucket_get(w, keep.type, keep.label);
        *b = keep;
    }
    for (uint32_t i = 0; i < w->mlen[x]; i++)
        for (uint32_t k = w->coff[m[i]]; k < w->coff[m[i] + 1]; k++) {
            uint32_t c = w->cl[k];
            if (c >= g->n)
                continue;
            const dt_bucket *b = bucket_get(w, g->objs[c]->type, holder_label(w, c));
            if (b->keep)
                w->pool[w->moff[b->keep - 1] + w->mlen[b->keep - 1]++] = c;
        }
}

/* The unexpanded node that retains the most, or HP_NONE. */
static uint32_t next_to_expand(const hp_dtree *t)
{
    uint32_t best = HP_NONE;
    for (size_t i = 0; i < t->n; i++)
        if (!t->nodes[i].expanded &&
            (best == HP_NONE || t->nodes[i].retained > t->nodes[best].retained))
            best = (uint32_t)i;
    return best;
}

static void work_free(dt_work *w)
{
    size_t n = w->g->n;
    hp_xfree(w->coff, n + 4, sizeof *w->coff);
    hp_xfree(w->cl, n ? n : 1, sizeof *w->cl);
    hp_xfree(w->pool, n + 3, sizeof *w->pool);
    if (w->t->cap) {
        hp_xfree(w->moff, w->t->cap, sizeof *w->moff);
        hp_xfree(w->mlen, w->t->cap, sizeof *w->mlen);
    }
    hp_xfree(w->b, DT_BUCKETS + 1, sizeof *w->b);
    hp_xfree(w->bh, 2 * DT_BUCKETS, sizeof *w->bh);
    hp_xfree(w->canon, w->g->nroots + 1, sizeof *w->canon);
}

/* The three top-level nodes: what the roots hold, the unreachable part,
 * the zombies that only weak edges keep. */
static void add_tops(dt_work *w)
{
    hp_graph *g = w->g;
    uint32_t n = (uint32_t)g->n;
    static const char *const name[] = {"roots", "unreachable", "held only weakly"};
    for (uint32_t k = 0; k < 3; k++) {
        dt_bucket b = {NULL, DT_NO_LABEL, 0, 0, 0, 0, 0};
        if (k < 2) {
            b.count = g->dcount[n + k];
            b.retained = g->ret[n + k];
        } else {
            for (uint32_t i = w->coff[n + 2]; i < w->coff[n + 3]; i++)
                if (w->cl[i] < n) {
                    b.count++;
                    b.retained += g->ret[w->cl[i]];
                }
        }
        if (!b.count)
            continue;
        w->pool[w->pool_used] = n + k;
        add_node(w, HP_DT_TOP, &b, (uint32_t)w->pool_used++, 1);
        snprintf(w->t->nodes[w->t->n - 1].label, sizeof w->t->nodes->label, "%s", name[k]);
    }
}

int hp_dom_tree(hp_graph *g, size_t max_nodes, size_t max_kids, hp_dtree *out)
{
    memset(out, 0, sizeof *out);
    if (!g || hp_analyze(g) != 0)
        return -1;
    dt_work w = {0};
    w.g = g;
    w.t = out;
    w.max_nodes = max_nodes < 3 ? 3 : max_nodes;
    w.max_kids = max_kids ? max_kids : 1;
    out->nodes = al_malloc(w.max_nodes * sizeof *out->nodes, AL_K_HEAP, "hp_dtree");
    if (!out->nodes)
        return er_set(ER_OOM, "out of memory building the dominator tree");
    out->cap = w.max_nodes;
    w.moff = hp_xalloc(out->cap, sizeof *w.moff);
    w.mlen = hp_xalloc(out->cap, sizeof *w.mlen);
    w.pool = hp_xalloc(g->n + 3, sizeof *w.pool);
    w.b = hp_xalloc(DT_BUCKETS + 1, sizeof *w.b);
    w.bh = hp_xalloc(2 * DT_BUCKETS, sizeof *w.bh);
    w.canon = root_canon(g);
    if (!w.moff || !w.mlen || !w.pool || !w.b || !w.bh || !w.canon ||
        build_children(&w) != 0) {
        work_free(&w);
        hp_dtree_free(out);
        return er_set(ER_OOM, "out of memory building the dominator tree");
    }
    add_tops(&w);
    for (uint32_t x; out->n < out->cap && (x = next_to_expand(out)) != HP_NONE;)
        expand(&w, x);
    /* what was never looked at below the cut */
    for (size_t i = 0; i < out->n; i++) {
        const hp_dnode *d = &out->nodes[i];
        if (!d->expanded && d->count && d->retained > d->shallow)
            out->unexpanded++;
        out->groups_seen += 1 + d->more_groups;
    }
    out->objects = g->n;
    work_free(&w);
    return 0;
}

void hp_dtree_free(hp_dtree *t)
{
    if (t->nodes)
        al_free(t->nodes, t->cap * sizeof *t->nodes, AL_K_HEAP);
    memset(t, 0, sizeof *t);
}
