/* hp_sum.c - summaries at any size: selections, interned path shapes,
 * groups with a few examples each, and the biggest retainers.
 *
 * Shapes are nodes of a trie: a shape is its parent shape plus one element
 * (a root name, "unreachable", "weak", "Type.label" of a strong or a weak
 * edge, or the elision "..."). Every tree node's chain shape (tsh) is its
 * parent's plus one edge, so the whole heap costs one trie step per object;
 * chains longer than HP_PATH_EDGES take the same head/elision/tail form as
 * the printed paths (hp_path.c), so a shape reads exactly like
 * hp_path_shape of the object's path.
 */
#include "heap/hp_int.h"

#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

/* --- selection ------------------------------------------------------------- */

void hp_select_clear(hp_graph *g)
{
    for (size_t v = 0; v < g->n; v++)
        g->region[v] &= (uint8_t)~HP_F_SEL;
    g->nsel = 0;
}

void hp_select(hp_graph *g, const obj *o)
{
    uint32_t v = hp_lookup(g, o);
    if (v == HP_NONE || (g->region[v] & HP_F_SEL))
        return;
    g->region[v] |= HP_F_SEL;
    g->nsel++;
}

size_t hp_selected(const hp_graph *g) { return g ? g->nsel : 0; }

size_t hp_select_since(hp_graph *g, uint64_t first_id)
{
    size_t k = 0;
    for (size_t v = 0; g && v < g->nlive; v++)
        if (g->objs[v]->id >= first_id && !(g->region[v] & HP_F_SEL)) {
            g->region[v] |= HP_F_SEL;
            k++;
        }
    if (g)
        g->nsel += k;
    return k;
}

size_t hp_select_role(hp_graph *g, const obj *from, obj_role role)
{
    uint32_t u = hp_lookup(g, from);
    if (u == HP_NONE || u >= g->nlive)
        return 0;
    const hp_edges *E = &g->strong;
    uint32_t label = HP_NONE;
    int want = 0;
    size_t n = 0;
    for (uint32_t k = E->off[u]; k < E->off[u + 1]; k++) {
        const hp_edge *e = &E->e[k];
        if (e->label != label) {   /* a table's edges share their label */
            label = e->label;
            want = obj_edge_role(from, g->labels[label]) == role;
        }
        if (want && !(g->region[e->dst] & HP_F_SEL)) {
            g->region[e->dst] |= HP_F_SEL;
            n++;
        }
    }
    g->nsel += n;
    return n;
}

enum { HEADER_AHEAD = 16 };   /* nodes ahead whose header a pass prefetches */

static int covered(const hp_graph *g, hp_which w, uint32_t v)
{
    return w == HP_SEL_ALL || (g->region[v] & HP_F_SEL);
}

/* --- the shape trie -------------------------------------------------------- */

enum { SH_ROOT, SH_UNREACH, SH_WEAKROOT, SH_SEDGE, SH_WEDGE, SH_ELIDE };

typedef struct shnode {
    uint32_t parent, label;   /* label: edge label, or root index */
    const char *type;         /* holder's type name (edges) */
    uint8_t tag;
} shnode;

typedef struct trie {
    shnode *n; size_t len, cap;
    ix index;                   /* (parent, label, type, tag) -> node */
} trie;

static uint64_t sh_hash(const shnode *k)
{
    return ix_hash_mix((uint64_t)k->parent << 32 | k->label,
                       (uint64_t)(uintptr_t)k->type ^ (uint64_t)k->tag << 56);
}

static int sh_eq(const void *ctx, uint32_t id, const void *key)
{
    const shnode *s = &((const trie *)ctx)->n[id], *k = key;
    return s->parent == k->parent && s->label == k->label && s->type == k->type &&
           s->tag == k->tag;
}

/* The child of `parent` (HP_NONE: a first element) by one element. */
static uint32_t sh_child(trie *t, uint32_t parent, uint8_t tag, const char *type, uint32_t label)
{
    shnode key = {parent, label, type, tag};
    uint64_t h = sh_hash(&key);
    uint32_t id = ix_find(&t->index, h, sh_eq, t, &key);
    if (id != IX_NONE)
        return id;
    if (t->len == t->cap &&
        (al_grow(&t->n, &t->cap, t->len, sizeof *t->n, 256, AL_K_HEAP, "hp_shape") != 0 ||
         ix_reserve(&t->index, t->cap) != 0)) {
        er_set(ER_OOM, "out of memory interning path shapes");
        return HP_NONE;
    }
    t->n[t->len] = key;
    ix_add(&t->index, h, (uint32_t)t->len);   /* reserved: cannot fail */
    return (uint32_t)t->len++;
}

static void trie_free(trie *t)
{
    if (t->n)
        al_free(t->n, t->cap * sizeof *t->n, AL_K_HEAP);
    ix_free(&t->index);
    memset(t, 0, sizeof *t);
}

static uint32_t sh_edge(trie *t, const hp_graph *g, uint32_t parent, const hp_edges *E,
                        uint32_t k, uint8_t tag)
{
    const hp_edge *e = &E->e[k];
    const char *type = g->objs[e->src]->type->name;
    return sh_child(t, parent, tag, type ? type : "?", e->label);
}

/* The first element of v's tree (a reachable root's name or "unreachable"). */
static uint32_t sh_tree_root(trie *t, const hp_graph *g, uint32_t v)
{
    if (HP_REGION(g, v) == HP_R_REACH)
        return sh_child(t, HP_NONE, SH_ROOT, NULL, g->pedge[v]);
    return sh_child(t, HP_NONE, SH_UNREACH, NULL, 0);
}

/* Head (HP_PATH_HEAD edges from anc), "...", then the last `tail` edges
 * above x. */
static uint32_t sh_elided(trie *t, const hp_graph *g, const uint32_t *tsh, uint32_t x,
                          size_t tail)
{
    uint32_t s = sh_child(t, tsh[hp_anc(g, x)], SH_ELIDE, NULL, 0);
    uint32_t ks[HP_PATH_TAIL];
    for (size_t i = 0; i < tail; i++, x = HP_PNODE(g, x))
        ks[tail - 1 - i] = g->pedge[x];
    for (size_t i = 0; i < tail && s != HP_NONE; i++)
        s = sh_edge(t, g, s, &g->strong, ks[i], SH_SEDGE);
    return s;
}

/* tsh[v]: the shape of v's tree chain (v a node of a BFS tree), computed
 * on demand and kept. A node deeper than HP_PATH_EDGES needs its head
 * ancestor's shape (depth HP_PATH_HEAD) first, any other its parent's.
 * HP_NONE on OOM. */
static uint32_t tree_shape(trie *t, const hp_graph *g, uint32_t *tsh, uint32_t v)
{
    uint32_t stack[2 * HP_PATH_EDGES + 4];
    size_t sp = 0;
    uint32_t x = v;
    while (tsh[x] == HP_NONE) {
        if (HP_PNODE(g, x) == HP_NONE) {
            tsh[x] = sh_tree_root(t, g, x);
            if (tsh[x] == HP_NONE)
                return HP_NONE;
            break;
        }
        stack[sp++] = x;
        x = g->depth[x] > HP_PATH_EDGES ? hp_anc(g, x) : HP_PNODE(g, x);
    }
    while (sp--) {
        uint32_t y = stack[sp];
        tsh[y] = g->depth[y] > HP_PATH_EDGES
                     ? sh_elided(t, g, tsh, y, HP_PATH_TAIL)
                     : sh_edge(t, g, tsh[HP_PNODE(g, y)], &g->strong, g->pedge[y], SH_SEDGE);
        if (tsh[y] == HP_NONE)
            return HP_NONE;
    }
    return tsh[v];
}

/* An object's own shape: its tree chain, or its cycle, or (zombies) its weak
 * holder's chain plus the weak edge. Cycle members of small parts intern
 * their shortest cycle; HP_NONE on OOM. */
static uint32_t own_shape(trie *t, hp_graph *g, uint32_t *tsh, uint32_t v)
{
    if (HP_REGION(g, v) == HP_R_ZOMBIE) {
        uint32_t w = g->zedge[v - g->nlive];
        if (w == HP_NONE)
            return sh_child(t, HP_NONE, SH_WEAKROOT, NULL, 0);
        uint32_t h = g->weak.e[w].src;
        if (HP_REGION(g, h) == HP_R_UNREACH && hp_scc_cyclic(g, h))
            return HP_NONE - 1;   /* rare: ask for the full path */
        uint32_t base = tree_shape(t, g, tsh, h);
        if (base != HP_NONE && g->depth[h] + 1 > HP_PATH_EDGES)
            base = sh_elided(t, g, tsh, h, HP_PATH_TAIL - 1);
        return base == HP_NONE ? HP_NONE : sh_edge(t, g, base, &g->weak, w, SH_WEDGE);
    }
    if (HP_REGION(g, v) == HP_R_UNREACH) {
        if (hp_scc_cyclic(g, v) && hp_scc_source(g, v) &&
            (hp_scc_size(g, v) <= HP_SMALL_SCC || hp_scc_rep(g, v) == v))
            return HP_NONE - 1;   /* its own cycle: from its path */
    }
    return tree_shape(t, g, tsh, v);
}

/* The shape of a path's strings, for the rare objects whose shape is their
 * cycle: the printed path elements, re-read. */
static uint32_t path_shape(trie *t, const hp_graph *g, const hp_retained *r)
{
    /* one element per path string: intern the stripped text as a root-like
     * element chain; labels are kept as their own interned text pointers */
    uint32_t s = HP_NONE;
    char buf[256];
    for (size_t i = 0; i + 1 < r->path_len; i++) {
        char *const one[1] = {r->path[i]};
        hp_path_shape(one, 1, buf, sizeof buf);
        /* intern the element text among the graph's labels is not possible
         * (const); use the trie with a string hash as label */
        uint64_t h = ix_hash_str(buf);
        s = sh_child(t, s, SH_ELIDE + 1, NULL, (uint32_t)(h ^ (h >> 32)));
        if (s == HP_NONE)
            return HP_NONE;
    }
    (void)g;
    return s;
}

/* --- via strings ----------------------------------------------------------- */

static char *via_string(const trie *t, const hp_graph *g, uint32_t s, obj_kind kind,
                        const hp_retained *ex)
{
    if (s != HP_NONE && t->n[s].tag == SH_ELIDE + 1 && ex) {
        size_t len = hp_path_shape(ex->path, ex->path_len, NULL, 0);
        char *b = al_malloc(len + 1, AL_K_HEAP, "hp_group_via");
        if (b)
            hp_path_shape(ex->path, ex->path_len, b, len + 1);
        else
            er_set(ER_OOM, "out of memory naming a group");
        return b;
    }
    uint32_t chain[4 * HP_PATH_EDGES];
    size_t n = 0;
    for (uint32_t x = s; x != HP_NONE && n < 4 * HP_PATH_EDGES; x = t->n[x].parent)
        chain[n++] = x;
    size_t cap = 64;
    for (size_t i = 0; i < n; i++) {
        const shnode *e = &t->n[chain[i]];
        cap += 8 + (e->type ? strlen(e->type) : 0) +
               (e->tag == SH_SEDGE || e->tag == SH_WEDGE ? strlen(g->labels[e->label]) : 0) +
               (e->tag == SH_ROOT ? strlen(hp_root_name(g, e->label)) : 0);
    }
    char *b = hp_xalloc(cap, 1);
    if (!b)
        return NULL;
    size_t used = 0;
    char tmp[300], st[300];
    for (size_t i = n; i-- > 0;) {
        const shnode *e = &t->n[chain[i]];
        switch (e->tag) {
        case SH_ROOT: snprintf(tmp, sizeof tmp, "%s", hp_root_name(g, e->label)); break;
        case SH_UNREACH: snprintf(tmp, sizeof tmp, "unreachable"); break;
        case SH_WEAKROOT: snprintf(tmp, sizeof tmp, "weak"); break;
        case SH_ELIDE: snprintf(tmp, sizeof tmp, "... "); break;
        default: snprintf(tmp, sizeof tmp, "%s.%s", e->type, g->labels[e->label]); break;
        }
        /* strip "#id" and "[index]" like hp_path_shape */
        char *const one[1] = {tmp};
        hp_path_shape(one, 1, st, sizeof st);
        used += (size_t)snprintf(b + used, cap - used, "%s -> ", st);
    }
    snprintf(b + used, cap - used, "%s", obj_kind_name(kind));
    char *via = al_strdup(b, AL_K_HEAP, "hp_group_via");
    hp_xfree(b, cap, 1);
    if (!via)
        er_set(ER_OOM, "out of memory naming a group");
    return via;
}

/* --- groups ---------------------------------------------------------------- */

typedef struct grp {
    hp_group g;
    uint32_t shape;
    uint32_t site;              /* the objects' interned site (obj.site) */
    uint32_t *ex; size_t nex;   /* best examples: retained desc, id asc */
} grp;

typedef struct gtab {
    grp *v; size_t len, cap;
    ix index;                   /* (type, site, shape, reason, holder) -> group */
    size_t k;
} gtab;

typedef struct grp_key {
    const obj *o;
    hp_reason reason;
    uint32_t shape;
    uint8_t hold;
} grp_key;

static uint64_t grp_hash(const grp_key *k)
{
    return ix_hash_mix((uint64_t)(uintptr_t)k->o->type,
                       (uint64_t)k->o->site << 32 ^ (uint64_t)k->shape << 8 ^
                       (uint64_t)k->reason << 4 ^ k->hold);
}

static int grp_same(const void *ctx, uint32_t id, const void *key)
{
    const grp *a = &((const gtab *)ctx)->v[id];
    const grp_key *k = key;
    return a->shape == k->shape && a->g.reason == k->reason &&
           a->g.holder == (hp_holder)k->hold && a->g.kind == k->o->type->kind &&
           a->g.type_name == k->o->type->name && a->site == k->o->site;
}

static int ex_better(const hp_graph *g, uint32_t a, uint32_t b)
{
    if (g->ret[a] != g->ret[b])
        return g->ret[a] > g->ret[b];
    return g->objs[a]->id < g->objs[b]->id;
}

static void grp_offer(grp *a, const hp_graph *g, uint32_t v, size_t k)
{
    if (k == 0)
        return;
    if (a->nex == k && !ex_better(g, v, a->ex[k - 1]))
        return;
    size_t i = a->nex < k ? a->nex++ : k - 1;
    while (i > 0 && ex_better(g, v, a->ex[i - 1])) {
        a->ex[i] = a->ex[i - 1];
        i--;
    }
    a->ex[i] = v;
}

/* Twice the room (64 groups at first), taken when half of it is used. */
static int gtab_grow(gtab *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 64;
    grp *nv = al_realloc(t->v, t->cap * sizeof *nv, ncap * sizeof *nv, AL_K_HEAP, "hp_group");
    if (!nv)
        return -1;
    t->v = nv;
    t->cap = ncap;
    return ix_reserve(&t->index, ncap);
}

static grp *gtab_get(gtab *t, const obj *o, hp_reason reason, uint32_t shape, uint8_t hold)
{
    grp_key key = {o, reason, shape, hold};
    uint64_t h = grp_hash(&key);
    uint32_t id = ix_find(&t->index, h, grp_same, t, &key);
    if (id != IX_NONE)
        return &t->v[id];
    uint32_t *ex = NULL;
    if ((2 * t->len >= t->cap && gtab_grow(t) != 0) || !(ex = hp_xalloc(t->k, sizeof *ex))) {
        er_set(ER_OOM, "out of memory grouping retained objects");
        return NULL;
    }
    grp *a = &t->v[t->len];
    memset(a, 0, sizeof *a);
    a->ex = ex;
    a->g.kind = o->type->kind;
    a->g.type_name = o->type->name;
    a->g.site = obj_site_of(o);
    a->site = o->site;
    a->g.reason = reason;
    a->g.holder = (hp_holder)hold;
    a->shape = shape;
    ix_add(&t->index, h, (uint32_t)t->len);   /* reserved: cannot fail */
    t->len++;
    return a;
}

static hp_reason reason_of(const hp_graph *g, uint32_t v)
{
    switch (HP_REGION(g, v)) {
    case HP_R_REACH: return HP_REACHABLE;
    case HP_R_UNREACH: return (g->region[v] & HP_F_LEAK) ? HP_REFCOUNT_LEAK : HP_UNREACHABLE;
    default: return g->zpend[v - g->nlive] ? HP_PENDING_STORAGE : HP_STALE_MEMO;
    }
}

static int grp_cmp(const void *pa, const void *pb)
{
    const grp *x = pa, *y = pb;
    int tx = hp_holder_tier(x->g.holder), ty = hp_holder_tier(y->g.holder);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->g.total_bytes != y->g.total_bytes)
        return x->g.total_bytes > y->g.total_bytes ? -1 : 1;
    if (x->g.count != y->g.count)
        return x->g.count > y->g.count ? -1 : 1;
    return x->g.example < y->g.example ? -1 : x->g.example > y->g.example;
}

/* --- biggest retainers ----------------------------------------------------- */

static void top_describe(hp_graph *g, uint32_t p, hp_top *tp)
{
    const obj *o = g->objs[p];
    tp->id = o->id;
    tp->kind = o->type->kind;
    tp->type_name = o->type->name;
    tp->retained_bytes = g->ret[p];
    tp->count = g->dcount[p];
    /* the largest part: children held directly by p, by kind and label */
    struct { obj_kind kind; uint32_t label; uint64_t n; } part[8];
    size_t np = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        if (g->idom[v] != p || HP_PNODE(g, v) != p)
            continue;
        uint32_t lab = g->strong.e[g->pedge[v]].label;
        obj_kind kd = g->objs[v]->type->kind;
        size_t i = 0;
        while (i < np && (part[i].kind != kd || part[i].label != lab))
            i++;
        if (i == np) {
            if (np == 8)
                continue;
            part[np].kind = kd;
            part[np].label = lab;
            part[np++].n = 0;
        }
        part[i].n += g->dcount[v];
    }
    size_t best = 0;
    for (size_t i = 1; i < np; i++)
        if (part[i].n > part[best].n)
            best = i;
    tp->main_count = np ? part[best].n : 0;
    tp->main_kind = np ? part[best].kind : OBJ_GENERIC;
    snprintf(tp->main_via, sizeof tp->main_via, "%s", np ? g->labels[part[best].label] : "");
    /* dominator chain, root first */
    uint32_t chain[16];
    size_t n = 0;
    for (uint32_t x = p; x < g->n && n < 16; x = g->idom[x])
        chain[n++] = x;
    size_t used = 0;
    tp->path[0] = '\0';
    uint32_t top = chain[n - 1];
    const char *root = HP_REGION(g, top) == HP_R_UNREACH ? "unreachable"
                     : HP_PNODE(g, top) == HP_NONE ? hp_root_name(g, g->pedge[top]) : "roots";
    used += (size_t)snprintf(tp->path + used, sizeof tp->path - used, "%s", root);
    if (n == 16 && used < sizeof tp->path)
        used += (size_t)snprintf(tp->path + used, sizeof tp->path - used, " -> ...");
    for (size_t i = n; i-- > 0 && used < sizeof tp->path;) {
        const obj *x = g->objs[chain[i]];
        used += (size_t)snprintf(tp->path + used, sizeof tp->path - used, " -> %s#%llu",
                                 x->type->name ? x->type->name : "?",
                                 (unsigned long long)x->id);
    }
}

/* The candidates, once per snapshot: the HP_TOP top-level dominators
 * (children of the virtual roots) that retain the most and are big (a
 * small heap's report has its groups), each walked down to the head of
 * what accumulates. */
static int find_tops(hp_graph *g)
{
    size_t n = g->n;
    uint32_t *big = hp_xalloc(n + 3, sizeof *big);
    if (!g->tops)
        g->tops = hp_xalloc(HP_TOP, sizeof *g->tops);
    if (!big || !g->tops) {
        hp_xfree(big, n + 3, sizeof *big);
        return -1;
    }
    memset(g->tops, 0, HP_TOP * sizeof *g->tops);
    for (size_t v = 0; v < n + 3; v++)
        big[v] = HP_NONE;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t p = g->idom[v];
        if (p == HP_NONE)
            continue;
        if (big[p] == HP_NONE || g->ret[v] > g->ret[big[p]])
            big[p] = v;
    }
    uint32_t cand[HP_TOP];
    size_t nc = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (g->idom[v] == HP_NONE || g->idom[v] < n)
            continue;
        if (nc == HP_TOP && g->ret[v] <= g->ret[cand[HP_TOP - 1]])
            continue;
        size_t i = nc < HP_TOP ? nc++ : HP_TOP - 1;
        while (i > 0 && g->ret[v] > g->ret[cand[i - 1]]) {
            cand[i] = cand[i - 1];
            i--;
        }
        cand[i] = v;
    }
    for (size_t i = 0; i < nc; i++) {
        uint32_t p = cand[i];
        if (g->dcount[p] < 64 && g->ret[p] < (1u << 20))
            continue;
        g->tops[g->ntops].from = g->ret[p];
        for (int steps = 0; steps < 64; steps++) {
            uint32_t c = big[p];
            /* stop at the head of a list of alike objects: the list is
             * what accumulates */
            if (c == HP_NONE || g->ret[c] * 5 < g->ret[p] * 4 ||
                g->objs[c]->type == g->objs[p]->type)
                break;
            p = c;
        }
        g->tops[g->ntops].node = p;
        top_describe(g, p, &g->tops[g->ntops++].t);
    }
    hp_xfree(big, n + 3, sizeof *big);
    g->tops_done = 1;
    return 0;
}

/* The bytes of the marked objects each candidate dominates (itself
 * included): a node's mask of the candidates among its dominators is found
 * once, walking up to the first dominator whose mask is known. */
enum { MASK_KNOWN = 0x80 };

static int tops_marked(hp_graph *g, uint64_t sel[HP_TOP])
{
    size_t n = g->n;
    uint8_t *mask = hp_xalloc(n ? n : 1, 1);
    uint32_t *up = hp_xalloc(n ? n : 1, sizeof *up);
    if (!mask || !up) {
        hp_xfree(mask, n ? n : 1, 1);
        hp_xfree(up, n ? n : 1, sizeof *up);
        return -1;
    }
    memset(mask, 0, n);
    for (uint32_t v = 0; v < n; v++) {
        if (!covered(g, HP_SEL_MARKED, v))
            continue;
        size_t sp = 0;
        uint32_t x = v;
        while (x < n && !(mask[x] & MASK_KNOWN)) {
            up[sp++] = x;
            x = g->idom[x];
        }
        uint8_t m = x < n ? mask[x] : MASK_KNOWN;
        while (sp) {
            x = up[--sp];
            for (size_t i = 0; i < g->ntops; i++)
                if (g->tops[i].node == x)
                    m |= (uint8_t)(1u << i);
            mask[x] = m;
        }
        for (size_t i = 0; i < g->ntops; i++)
            if (mask[v] & (1u << i))
                sel[i] += hp_self(g, v);
    }
    hp_xfree(mask, n ? n : 1, 1);
    hp_xfree(up, n ? n : 1, sizeof *up);
    return 0;
}

/* Those worth a line in a summary covering scope_bytes: 1% of it. A
 * summary of marked objects names only the candidates that dominate 1% of
 * their bytes, those dominating the most first: the retainer of other
 * objects than those behind a failing expectation is not its culprit. */
static int top_retainers(hp_graph *g, hp_which which, uint64_t scope_bytes, hp_summary *out)
{
    if (!g->tops_done && find_tops(g) != 0)
        return -1;
    uint64_t sel[HP_TOP] = {0};
    if (which == HP_SEL_MARKED && g->ntops && tops_marked(g, sel) != 0)
        return -1;
    out->top = hp_tops_alloc();
    if (!out->top)
        return -1;
    uint64_t kept[HP_TOP];   /* the weights of out->top, descending */
    for (size_t i = 0; i < g->ntops; i++) {
        uint64_t w = which == HP_SEL_MARKED ? sel[i] : g->tops[i].from;
        if (!w || w * 100 < scope_bytes)
            continue;
        size_t at = out->ntop++;
        for (; at > 0 && w > kept[at - 1]; at--) {
            out->top[at] = out->top[at - 1];
            kept[at] = kept[at - 1];
        }
        out->top[at] = g->tops[i].t;
        kept[at] = w;
    }
    return 0;
}

hp_top *hp_tops_alloc(void)
{
    hp_top *t = hp_xalloc(HP_TOP, sizeof *t);
    if (!t) {
        er_set(ER_OOM, "out of memory for the biggest retainers");
        return NULL;
    }
    memset(t, 0, HP_TOP * sizeof *t);
    return t;
}

/* --- the summary ----------------------------------------------------------- */

void hp_summary_free(hp_summary *s)
{
    if (!s)
        return;
    hp_groups_free(s->groups, s->ngroups);
    hp_retained_free(s->examples, s->nexamples);
    hp_xfree(s->top, HP_TOP, sizeof *s->top);
    memset(s, 0, sizeof *s);
}

static void gtab_free(gtab *t)
{
    for (size_t i = 0; i < t->len; i++)
        hp_xfree(t->v[i].ex, t->k, sizeof(uint32_t));
    if (t->v)
        al_free(t->v, t->cap * sizeof *t->v, AL_K_HEAP);
    ix_free(&t->index);
}

static int build_groups(hp_graph *g, hp_which which, trie *t, gtab *gt, hp_summary *out)
{
    uint32_t *tsh = hp_xalloc(g->n, sizeof *tsh);
    if (!tsh)
        return -1;
    for (size_t v = 0; v < g->n; v++)
        tsh[v] = HP_NONE;
    int rc = 0;
    hp_retained tmp;
    memset(&tmp, 0, sizeof tmp);
    for (uint32_t v = 0; rc == 0 && v < g->n; v++) {
        /* the headers are read in node (creation) order, which a leak's
         * survivors do not keep in memory: fetch them ahead */
        if (v + HEADER_AHEAD < g->n && covered(g, which, v + HEADER_AHEAD))
            __builtin_prefetch(g->objs[v + HEADER_AHEAD]);
        if (!covered(g, which, v))
            continue;
        uint32_t s = own_shape(t, g, tsh, v);
        if (s == HP_NONE - 1) {
            /* a cycle member: its path's shape */
            if (hp_fill_record(g, v, &tmp) != 0 ||
                (s = path_shape(t, g, &tmp)) == HP_NONE) {
                rc = -1;
                break;
            }
            hp_retained_clear(&tmp);
        }
        if (s == HP_NONE) {
            rc = -1;
            break;
        }
        hp_reason reason = reason_of(g, v);
        grp *a = gtab_get(gt, g->objs[v], reason, s, g->hold[v]);
        if (!a) {
            rc = -1;
            break;
        }
        uint64_t self = hp_self(g, v);
        a->g.count++;
        a->g.total_bytes += self;
        a->g.total_retained += g->ret[v];
        grp_offer(a, g, v, gt->k);
        out->total++;
        out->total_bytes += self;
    }
    hp_retained_clear(&tmp);
    hp_xfree(tsh, g->n, sizeof *tsh);
    return rc;
}

static int emit(hp_graph *g, const trie *t, gtab *gt, hp_summary *out)
{
    for (size_t i = 0; i < gt->len; i++)
        gt->v[i].g.example = gt->v[i].nex ? gt->v[i].ex[0] : 0;   /* tie-break */
    if (gt->len)   /* qsort(NULL, 0) is undefined: a heap with nothing to group */
        qsort(gt->v, gt->len, sizeof *gt->v, grp_cmp);
    size_t nex = 0;
    for (size_t i = 0; i < gt->len; i++)
        nex += gt->v[i].nex;
    out->groups = hp_xalloc(gt->len, sizeof *out->groups);
    out->examples = hp_xalloc(nex, sizeof *out->examples);
    if (!out->groups || !out->examples)
        return -1;
    memset(out->groups, 0, (gt->len ? gt->len : 1) * sizeof *out->groups);
    memset(out->examples, 0, (nex ? nex : 1) * sizeof *out->examples);
    out->nexamples = nex;
    out->ngroups = gt->len;
    size_t at = 0;
    for (size_t i = 0; i < gt->len; i++) {
        grp *a = &gt->v[i];
        hp_group *o = &out->groups[i];
        *o = a->g;
        o->via = NULL;
        o->example = at;
        o->nexamples = a->nex;
        o->bytes_each = o->count ? o->total_bytes / o->count : 0;
        for (size_t j = 0; j < a->nex; j++)
            if (hp_fill_record(g, a->ex[j], &out->examples[at++]) != 0)
                return -1;
        o->via = via_string(t, g, a->shape, o->kind, a->nex ? &out->examples[o->example] : NULL);
        if (!o->via)
            return -1;
    }
    return 0;
}

int hp_summarize(hp_graph *g, hp_which which, size_t k, hp_summary *out)
{
    memset(out, 0, sizeof *out);
    if (hp_analyze(g) != 0 || hp_holders(g) != 0)
        return -1;
    trie t;
    memset(&t, 0, sizeof t);
    t.index = (ix)IX_INIT(AL_K_HEAP, "hp_shape");
    gtab gt;
    memset(&gt, 0, sizeof gt);
    gt.index = (ix)IX_INIT(AL_K_HEAP, "hp_group");
    gt.k = k ? k : 1;
    int rc = -1;
    if (build_groups(g, which, &t, &gt, out) != 0 || emit(g, &t, &gt, out) != 0 ||
        top_retainers(g, which, out->total_bytes, out) != 0)
        goto out;
    rc = 0;
out:
    gtab_free(&gt);
    trie_free(&t);
    if (rc != 0) {
        hp_summary_free(out);
        er_set(ER_OOM, "out of memory summarizing the heap");
    }
    return rc;
}

int hp_each(hp_graph *g, hp_which which, int (*fn)(const hp_retained *r, void *arg), void *arg)
{
    if (hp_analyze(g) != 0)
        return -1;
    hp_retained r;
    memset(&r, 0, sizeof r);
    int rc = 0;
    for (uint32_t v = 0; v < g->n && rc == 0; v++) {
        if (!covered(g, which, v))
            continue;
        if (hp_fill_record(g, v, &r) != 0)
            rc = -1;
        else
            rc = fn(&r, arg);
    }
    hp_retained_clear(&r);
    return rc;
}
