/* hp_graph.c - the heap snapshot: nodes, edges, reachability, and the lazy
 * analysis (strongly connected parts of the unreachable heap, weak holders
 * of zombies, dominators and retained sizes).
 *
 * Everything is iterative (explicit stacks and queues), so a million-long
 * chain costs O(1) C stack.
 */
#include "heap/hp_int.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"

/* --- allocation helpers --------------------------------------------------- */

static uint32_t *u32_array(size_t n, uint32_t fill)
{
    uint32_t *a = hp_xalloc(n, sizeof *a);
    if (a)
        for (size_t i = 0; i < n; i++)
            a[i] = fill;
    return a;
}

static uint8_t *u8_array(size_t n, uint8_t fill)
{
    uint8_t *a = hp_xalloc(n, 1);
    if (a)
        memset(a, fill, n ? n : 1);
    return a;
}

/* --- node lookup ---------------------------------------------------------- */

/* Node i's number as kept in the header (past INT32_MAX: none, and the
 * lookup scans). */
static int32_t node_number(size_t i) { return i <= INT32_MAX ? (int32_t)i : -1; }

/* hp_build stores each object's node number in its gc_refs (the collector's
 * scratch, only meaningful inside a collection). An object outside the
 * registry lists has some other value there, so the number is checked
 * against objs[]; if a collection ran since the snapshot, a linear scan
 * finds the object again. */
static uint32_t lookup_fast(const hp_graph *g, const obj *o)
{
    int32_t h = o->gc_refs;
    if (h >= 0 && (uint64_t)h < g->n && g->objs[h] == o)
        return (uint32_t)h;
    return HP_NONE;
}

uint32_t hp_lookup(const hp_graph *g, const obj *o)
{
    if (!o || !g->objs)
        return HP_NONE;
    uint32_t v = lookup_fast(g, o);
    if (v != HP_NONE)
        return v;
    for (size_t i = 0; i < g->n; i++)
        if (g->objs[i] == o)
            return (uint32_t)i;
    return HP_NONE;
}

uint64_t hp_self(const hp_graph *g, uint32_t v)
{
    return v < g->nlive ? obj_self_bytes(g->objs[v]) : g->objs[v]->size;
}

/* --- labels --------------------------------------------------------------- */

/* Labels the index has room for at first: most snapshots have fewer. */
enum { HP_LABELS0 = 32 };

static int label_eq(const void *ctx, uint32_t id, const void *key)
{
    const hp_graph *g = ctx;
    return strcmp(g->labels[id], key) == 0;
}

static uint32_t intern(hp_graph *g, const char *s)
{
    if (!s)
        s = "";
    uint64_t h = ix_hash_str(s);
    uint32_t id = ix_find(&g->lidx, h, label_eq, g, s);
    if (id != IX_NONE)
        return id;
    char *copy = NULL;
    if (ix_reserve(&g->lidx, g->nlabels < HP_LABELS0 ? HP_LABELS0 : g->nlabels + 1) != 0 ||
        al_grow(&g->labels, &g->labels_cap, g->nlabels, sizeof *g->labels, 16, AL_K_HEAP,
                "hp_labels") != 0 ||
        !(copy = al_strdup(s, AL_K_HEAP, "hp_label")) ||
        ix_add(&g->lidx, h, (uint32_t)g->nlabels) != 0) {
        if (copy)
            al_free(copy, strlen(copy) + 1, AL_K_HEAP);
        er_set(ER_OOM, "out of memory interning edge labels");
        return HP_NONE;
    }
    g->labels[g->nlabels] = copy;
    return (uint32_t)g->nlabels++;
}

int hp_edge_is_pending(const hp_graph *g, const hp_edge *e)
{
    return obj_edge_role(g->objs[e->src], g->labels[e->label]) == OBJ_ROLE_PENDING;
}

const char *hp_root_name(const hp_graph *g, uint32_t idx)
{
    if (idx < g->nroots)
        return g->roots[idx].name ? g->roots[idx].name : "?";
    return "finalizers";
}

/* --- building ------------------------------------------------------------- */

enum { MAX_ELEMS = UINT32_MAX - 8 };

typedef struct vctx {
    hp_graph *g;
    hp_edges *E;
    uint32_t src;
} vctx;

static void visit(obj *child, const char *label, long index, void *arg)
{
    vctx *c = arg;
    hp_graph *g = c->g;
    if (g->oom || !child)
        return;
    uint32_t dst = lookup_fast(g, child);
    if (dst == HP_NONE) {
        if (!g->unknown_seen) {
            g->unknown_seen = 1;
            g->unknown_src = c->src;
            g->unknown_index = index;
            g->unknown_ptr = child;
            snprintf(g->unknown_label, sizeof g->unknown_label, "%s", label ? label : "");
        }
        return;
    }
    hp_edges *E = c->E;
    if (E == &g->weak && dst < g->nlive)
        return;   /* weak edges matter only as holders of zombies */
    if (E->n == E->cap) {
        if (E->cap >= MAX_ELEMS / 2) {
            g->oom = 1;
            er_set(ER_LIMIT, "heap analysis: too many edges");
            return;
        }
        size_t ncap = E->cap ? E->cap * 2 : 1024;
        hp_edge *ne = al_realloc(E->e, E->cap * sizeof *ne, ncap * sizeof *ne, AL_K_HEAP,
                                 "hp_edges");
        if (!ne) {
            g->oom = 1;
            er_set(ER_OOM, "out of memory collecting heap edges");
            return;
        }
        E->e = ne;
        E->cap = ncap;
    }
    /* Labels are stable strings (literals, table and attribute labels):
     * a pointer-keyed cache saves hashing the text for every edge. */
    size_t ci = ((uintptr_t)label >> 4 ^ (uintptr_t)label >> 10) & (HP_LCACHE - 1);
    uint32_t lab;
    if (label && g->lc_ptr[ci] == label) {
        lab = g->lc_id[ci];
    } else {
        lab = intern(g, label);
        if (lab == HP_NONE) {
            g->oom = 1;
            return;
        }
        g->lc_ptr[ci] = label;
        g->lc_id[ci] = lab;
    }
    hp_edge *e = &E->e[E->n++];
    e->src = c->src;
    e->dst = dst;
    e->label = lab;
    e->index = index > INT32_MAX ? INT32_MAX : index < 0 ? -1 : (int32_t)index;
}

/* Give back what doubling left unused: the edges are the snapshot's
 * largest array. A failed shrink keeps the bigger one. */
static void shrink_edges(hp_edges *E)
{
    if (E->cap == E->n || E->n == 0)
        return;
    hp_edge *ne = al_realloc(E->e, E->cap * sizeof *ne, E->n * sizeof *ne, AL_K_HEAP,
                             "hp_edges");
    if (ne) {
        E->e = ne;
        E->cap = E->n;
    }
}

static void number_one(obj *o, size_t i, void *arg)
{
    hp_graph *g = arg;
    o->gc_refs = node_number(i);
    uint8_t fin = o->type->kind == OBJ_FINALIZER ? HP_F_FIN : 0;
    g->region[i] = (uint8_t)(HP_R_UNREACH | fin);
    g->objs[i] = o;
}

/* Number the live list 0..nlive-1 in creation order (obj_walk_both: two
 * misses in flight). nlive, or -1 when the list disagrees with its count. */
static size_t number_live(hp_graph *g)
{
    int rc = obj_walk_both(obj_live_first(), obj_live_last(), g->nlive, number_one, g);
    return rc == 0 ? g->nlive : (size_t)-1;
}

/* Strong edges get CSR offsets; weak ones (few: only those to zombies)
 * are a list sorted by source, without offsets (off stays NULL). */
static int collect_edges(hp_graph *g, hp_edges *E, int weak)
{
    if (!weak) {
        E->off = hp_xalloc(g->n + 1, sizeof *E->off);
        if (!E->off)
            return -1;
    }
    vctx c = {g, E, 0};
    for (size_t i = 0; i < g->n; i++) {
        if (E->off)
            E->off[i] = (uint32_t)E->n;
        if (i >= g->nlive)
            continue;
        obj *o = g->objs[i];
        c.src = (uint32_t)i;
        if (!weak)
            obj_traverse(o, visit, &c);
        else if (o->type->traverse_weak)
            o->type->traverse_weak(o, visit, &c);
        if (g->oom)
            return -1;
    }
    if (E->off)
        E->off[g->n] = (uint32_t)E->n;
    shrink_edges(E);
    return 0;
}

int hp_build(hp_graph *g, const hp_root *roots, size_t nroots, int with_weak)
{
    /* the lists' lengths are kept: counting them is a pointer chase */
    size_t nlive = (size_t)obj_live_listed(), nz = (size_t)obj_zombie_count();
    if (nlive + nz >= MAX_ELEMS)
        return er_set(ER_LIMIT, "heap analysis: too many objects (%zu)", nlive + nz);
    g->n = nlive + nz;
    g->nlive = nlive;
    g->nzombie = nz;
    g->lidx = (ix)IX_INIT(AL_K_HEAP, "hp_labels");
    g->roots = hp_xalloc(nroots, sizeof *g->roots);
    if (!g->roots)
        return -1;
    if (nroots)
        memcpy(g->roots, roots, nroots * sizeof *roots);
    g->nroots = nroots;
    g->objs = hp_xalloc(g->n, sizeof *g->objs);
    g->region = u8_array(g->n, HP_R_ZOMBIE);
    if (!g->objs || !g->region)
        return -1;
    size_t i = number_live(g);
    obj *z = obj_zombie_first();
    for (; z && i < g->n; z = obj_iter_next(z)) {
        z->gc_refs = node_number(i);
        g->objs[i++] = z;
    }
    if (i == (size_t)-1 || z || i != g->n)
        return er_set(ER_INTERNAL, "heap analysis: the registry lists disagree with "
                      "their counts (%zu live, %zu zombies)", nlive, nz);
    if (collect_edges(g, &g->strong, 0) != 0)
        return -1;
    /* weak edges are kept only to zombies: none, nothing to walk (a 1M-entry
     * weak memo is 3M visits for nothing) */
    if (with_weak && nz && collect_edges(g, &g->weak, 1) != 0)
        return -1;
    return 0;
}

static void free_edges(hp_edges *E, size_t n)
{
    if (E->off)
        hp_xfree(E->off, n + 1, sizeof *E->off);
    if (E->e)
        al_free(E->e, E->cap * sizeof *E->e, AL_K_HEAP);
    memset(E, 0, sizeof *E);
}

void hp_release(hp_graph *g)
{
    size_t n = g->n;
    hp_xfree(g->objs, n, sizeof *g->objs);
    free_edges(&g->strong, n);
    free_edges(&g->weak, n);
    for (size_t l = 0; l < g->nlabels; l++)
        al_free(g->labels[l], strlen(g->labels[l]) + 1, AL_K_HEAP);
    if (g->labels)
        al_free(g->labels, g->labels_cap * sizeof *g->labels, AL_K_HEAP);
    ix_free(&g->lidx);
    hp_xfree(g->roots, g->nroots, sizeof *g->roots);
    hp_xfree(g->region, n, 1);
    hp_xfree(g->pedge, n, sizeof(uint32_t));
    hp_xfree(g->depth, n, sizeof(uint32_t));
    hp_xfree(g->anc, n, sizeof(uint32_t));
    hp_xfree(g->scc, n, sizeof(uint32_t));
    hp_xfree(g->scc_rep, g->nscc, sizeof(uint32_t));
    hp_xfree(g->scc_size, g->nscc, sizeof(uint32_t));
    hp_xfree(g->scc_flags, g->nscc, 1);
    hp_xfree(g->zedge, g->nzombie, sizeof(uint32_t));
    hp_xfree(g->zpend, g->nzombie, 1);
    hp_xfree(g->ret, n + 3, sizeof(uint64_t));
    hp_xfree(g->idom, n + 3, sizeof(uint32_t));
    hp_xfree(g->dcount, n + 3, sizeof(uint32_t));
    hp_xfree(g->found, g->nfound, sizeof *g->found);
    hp_xfree(g->tmark, n, sizeof(uint32_t));
    hp_xfree(g->tq, n, sizeof(uint32_t));
    hp_xfree(g->tpar, n, sizeof(uint32_t));
    if (g->buf)
        al_free(g->buf, g->buf_cap, AL_K_HEAP);
    hp_xfree(g->tops, HP_TOP, sizeof *g->tops);
    hp_xfree(g->root_use, g->nroots, 1);
    hp_xfree(g->hold, n, 1);
    memset(g, 0, sizeof *g);
    hp_mem_flush();
}

void hp_free(hp_graph *g)
{
    if (!g)
        return;
    hp_release(g);
    al_free(g, sizeof *g, AL_K_HEAP);
}

/* --- reachability from the roots ------------------------------------------- */

static void tree_root(hp_graph *g, uint32_t v, uint32_t root_idx, uint32_t *q, size_t *qt)
{
    g->depth[v] = 0;
    g->region[v] |= HP_F_TROOT;
    g->pedge[v] = root_idx;
    q[(*qt)++] = v;
}

/* Breadth-first from the queued tree roots over strong edges into nodes of
 * region `from`, which become region `to`; then the head ancestors of the
 * deep nodes. 0, or -1 (ER_OOM). */
static int fill_anc(hp_graph *g, const uint32_t *q, size_t qt);

static int bfs(hp_graph *g, uint32_t *q, size_t qh, size_t qt, uint8_t from, uint8_t to)
{
    const hp_edges *E = &g->strong;
    while (qh < qt) {
        uint32_t u = q[qh++];
        for (uint32_t k = E->off[u]; k < E->off[u + 1]; k++) {
            uint32_t w = E->e[k].dst;
            if (HP_REGION(g, w) != from || g->depth[w] != HP_NONE)
                continue;
            g->region[w] = (uint8_t)((g->region[w] & ~3u) | to);
            g->depth[w] = g->depth[u] + 1;
            g->pedge[w] = k;
            q[qt++] = w;
        }
    }
    return fill_anc(g, q, qt);
}

/* anc (hp_int.h) exists only when some node is deeper than HP_PATH_EDGES:
 * the paths and shapes of shallow nodes never ask for it (hp_anc walks
 * up the few steps), and at a million objects it is 4 B each. q is in BFS
 * order, parents before children. */
static int fill_anc(hp_graph *g, const uint32_t *q, size_t qt)
{
    size_t i = 0;
    while (i < qt && g->depth[q[i]] <= HP_PATH_EDGES)
        i++;
    if (i == qt)
        return 0;
    if (!g->anc && !(g->anc = u32_array(g->n, HP_NONE)))
        return -1;
    for (i = 0; i < qt; i++) {
        uint32_t w = q[i];
        g->anc[w] = g->depth[w] <= HP_PATH_HEAD ? w : g->anc[HP_PNODE(g, w)];
    }
    return 0;
}

uint32_t hp_anc(const hp_graph *g, uint32_t v)
{
    if (g->anc && g->anc[v] != HP_NONE)
        return g->anc[v];
    while (g->depth[v] != HP_NONE && g->depth[v] > HP_PATH_HEAD)
        v = HP_PNODE(g, v);
    return v;
}

static int reach(hp_graph *g)
{
    size_t n = g->n;
    g->pedge = u32_array(n, HP_NONE);
    g->depth = u32_array(n, HP_NONE);
    uint32_t *q = hp_xalloc(n, sizeof *q);
    if (!g->pedge || !g->depth || !q) {
        hp_xfree(q, n, sizeof *q);
        return -1;
    }
    size_t qt = 0;
    for (size_t r = 0; r < g->nroots; r++) {
        uint32_t v = hp_lookup(g, g->roots[r].o);
        if (v == HP_NONE || v >= g->nlive)
            continue;
        g->region[v] |= HP_F_ROOT;
        if (g->depth[v] == HP_NONE) {
            g->region[v] = (uint8_t)((g->region[v] & ~3u) | HP_R_REACH);
            tree_root(g, v, (uint32_t)r, q, &qt);
        }
    }
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (!(g->region[v] & HP_F_FIN))
            continue;
        g->region[v] |= HP_F_ROOT;
        if (g->depth[v] == HP_NONE) {
            g->region[v] = (uint8_t)((g->region[v] & ~3u) | HP_R_REACH);
            tree_root(g, v, (uint32_t)g->nroots, q, &qt);
        }
    }
    int rc = bfs(g, q, 0, qt, HP_R_UNREACH, HP_R_REACH);
    hp_xfree(q, n, sizeof *q);
    if (rc != 0)
        return -1;
    g->nunreach = 0;
    for (size_t v = 0; v < g->nlive; v++)
        g->nunreach += HP_REGION(g, v) == HP_R_UNREACH;
    return 0;
}

hp_graph *hp_snapshot(const hp_root *roots, size_t nroots)
{
    hp_graph *g = al_malloc(sizeof *g, AL_K_HEAP, "hp_snapshot");
    if (!g) {
        er_set(ER_OOM, "out of memory taking a heap snapshot");
        return NULL;
    }
    memset(g, 0, sizeof *g);
    if (hp_build(g, roots, nroots, 1) != 0 || reach(g) != 0) {
        hp_free(g);
        return NULL;
    }
    return g;
}

uint64_t hp_unreachable_count(const hp_graph *g) { return g ? g->nunreach : 0; }
uint64_t hp_live_count(const hp_graph *g) { return g ? g->nlive : 0; }
uint64_t hp_zombie_count(const hp_graph *g) { return g ? g->nzombie : 0; }

/* --- analysis: SCCs of the unreachable part (Tarjan, iterative) ------------ */

/* Keep numbers and per-part arrays for the cyclic parts only (hp_int.h):
 * acyclic nodes get scc HP_NONE and their source flag in region. map has
 * room for every part number. 0, or -1 (ER_OOM: g's arrays unchanged). */
static int compact_sccs(hp_graph *g, uint32_t *map)
{
    size_t m = 0, nu = g->nunreach;
    for (size_t s = 0; s < g->nscc; s++)
        map[s] = (g->scc_flags[s] & HP_SCC_CYCLIC) ? (uint32_t)m++ : HP_NONE;
    uint32_t *rep = hp_xalloc(m, sizeof *rep), *size = hp_xalloc(m, sizeof *size);
    uint8_t *fl = hp_xalloc(m, 1);
    if (!rep || !size || !fl) {
        hp_xfree(rep, m, sizeof *rep);
        hp_xfree(size, m, sizeof *size);
        hp_xfree(fl, m, 1);
        return -1;
    }
    for (size_t s = 0; s < g->nscc; s++)
        if (map[s] != HP_NONE) {
            rep[map[s]] = g->scc_rep[s];
            size[map[s]] = g->scc_size[s];
            fl[map[s]] = g->scc_flags[s];
        }
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (HP_REGION(g, v) != HP_R_UNREACH)
            continue;
        uint32_t s = g->scc[v];
        if (map[s] == HP_NONE && (g->scc_flags[s] & HP_SCC_SOURCE))
            g->region[v] |= HP_F_SRC;
        g->scc[v] = map[s];
    }
    hp_xfree(g->scc_rep, nu, sizeof *g->scc_rep);
    hp_xfree(g->scc_size, nu, sizeof *g->scc_size);
    hp_xfree(g->scc_flags, nu, 1);
    g->scc_rep = rep;
    g->scc_size = size;
    g->scc_flags = fl;
    g->nscc = m;
    return 0;
}

static int tarjan(hp_graph *g)
{
    size_t n = g->n, nu = g->nunreach;
    const hp_edges *E = &g->strong;
    uint32_t *idx = u32_array(n, HP_NONE), *low = hp_xalloc(n, sizeof *low);
    uint32_t *stk = hp_xalloc(nu, sizeof *stk);
    uint32_t *cs_node = hp_xalloc(nu, sizeof *cs_node), *cs_pos = hp_xalloc(nu, sizeof *cs_pos);
    uint8_t *onstk = u8_array(n, 0);
    g->scc = u32_array(n, HP_NONE);
    g->scc_rep = hp_xalloc(nu, sizeof *g->scc_rep);
    g->scc_size = hp_xalloc(nu, sizeof *g->scc_size);
    g->scc_flags = u8_array(nu, 0);
    int rc = -1;
    if (!idx || !low || !stk || !cs_node || !cs_pos || !onstk || !g->scc || !g->scc_rep ||
        !g->scc_size || !g->scc_flags)
        goto out;
    uint32_t counter = 0;
    size_t sp = 0, csp = 0;
    g->nscc = 0;
    for (uint32_t r = 0; r < g->nlive; r++) {
        if (HP_REGION(g, r) != HP_R_UNREACH || idx[r] != HP_NONE)
            continue;
        idx[r] = low[r] = counter++;
        stk[sp++] = r;
        onstk[r] = 1;
        cs_node[csp] = r;
        cs_pos[csp++] = E->off[r];
        while (csp) {
            uint32_t v = cs_node[csp - 1];
            uint32_t pos = cs_pos[csp - 1];
            if (pos < E->off[v + 1]) {
                cs_pos[csp - 1]++;
                uint32_t w = E->e[pos].dst;
                if (HP_REGION(g, w) != HP_R_UNREACH)
                    continue;
                if (idx[w] == HP_NONE) {
                    idx[w] = low[w] = counter++;
                    stk[sp++] = w;
                    onstk[w] = 1;
                    cs_node[csp] = w;
                    cs_pos[csp++] = E->off[w];
                } else if (onstk[w] && idx[w] < low[v]) {
                    low[v] = idx[w];
                }
                continue;
            }
            csp--;
            if (low[v] == idx[v]) {
                uint32_t s = (uint32_t)g->nscc++, size = 0, rep = v, x;
                do {
                    x = stk[--sp];
                    onstk[x] = 0;
                    g->scc[x] = s;
                    size++;
                    if (x < rep)
                        rep = x;
                } while (x != v);
                g->scc_rep[s] = rep;
                g->scc_size[s] = size;
                g->scc_flags[s] = HP_SCC_SOURCE | (size > 1 ? HP_SCC_CYCLIC : 0);
            }
            if (csp) {
                uint32_t u = cs_node[csp - 1];
                if (low[v] < low[u])
                    low[u] = low[v];
            }
        }
    }
    /* Self-loops make a one-object cycle; an edge between two parts makes
     * the target part a non-source. */
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (HP_REGION(g, v) != HP_R_UNREACH)
            continue;
        for (uint32_t k = E->off[v]; k < E->off[v + 1]; k++) {
            uint32_t w = E->e[k].dst;
            if (HP_REGION(g, w) != HP_R_UNREACH)
                continue;
            if (w == v)
                g->scc_flags[g->scc[v]] |= HP_SCC_CYCLIC;
            else if (g->scc[w] != g->scc[v])
                g->scc_flags[g->scc[w]] &= (uint8_t)~HP_SCC_SOURCE;
        }
    }
    rc = compact_sccs(g, low);   /* low is free now: the renumbering */
out:
    if (rc != 0) {   /* the per-part arrays still have room for every part */
        hp_xfree(g->scc_rep, nu, sizeof *g->scc_rep);
        hp_xfree(g->scc_size, nu, sizeof *g->scc_size);
        hp_xfree(g->scc_flags, nu, 1);
        g->scc_rep = g->scc_size = NULL;
        g->scc_flags = NULL;
        g->nscc = 0;
    }
    hp_xfree(idx, n, sizeof *idx);
    hp_xfree(low, n, sizeof *low);
    hp_xfree(stk, nu, sizeof *stk);
    hp_xfree(cs_node, nu, sizeof *cs_node);
    hp_xfree(cs_pos, nu, sizeof *cs_pos);
    hp_xfree(onstk, n, 1);
    return rc;
}

/* Breadth-first from the representatives of source parts over the
 * unreachable region (the same tree arrays, depth restarting at 0). */
static int unreach_forest(hp_graph *g)
{
    uint32_t *q = hp_xalloc(g->nunreach, sizeof *q);
    if (!q)
        return -1;
    size_t qt = 0;
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (HP_REGION(g, v) != HP_R_UNREACH)
            continue;
        if (hp_scc_rep(g, v) == v && hp_scc_source(g, v))
            tree_root(g, v, HP_NONE, q, &qt);
    }
    int rc = bfs(g, q, 0, qt, HP_R_UNREACH, HP_R_UNREACH);
    hp_xfree(q, g->nunreach, sizeof *q);
    return rc;
}

/* --- analysis: the weak holder of each zombie ------------------------------ */

static int holder_pending(const hp_graph *g, uint32_t e)
{
    const hp_edge *we = &g->weak.e[e];
    if (hp_edge_is_pending(g, we))
        return 1;
    uint32_t h = we->src;   /* a weak handle kept on a pending list */
    return HP_PNODE(g, h) != HP_NONE && hp_edge_is_pending(g, &g->strong.e[g->pedge[h]]);
}

static int better_holder(const hp_graph *g, uint32_t a, uint32_t b)
{
    int pa = holder_pending(g, a), pb = holder_pending(g, b);
    if (pa != pb)
        return pa;
    uint32_t ha = g->weak.e[a].src, hb = g->weak.e[b].src;
    int ra = HP_REGION(g, ha) == HP_R_REACH, rb = HP_REGION(g, hb) == HP_R_REACH;
    if (ra != rb)
        return ra;
    if (g->depth[ha] != g->depth[hb])
        return g->depth[ha] < g->depth[hb];
    return a < b;
}

static int weak_holders(hp_graph *g)
{
    size_t nz = g->nzombie;
    g->zedge = u32_array(nz, HP_NONE);
    g->zpend = u8_array(nz, 0);
    if (!g->zedge || !g->zpend)
        return -1;
    for (uint32_t k = 0; k < g->weak.n; k++) {
        uint32_t z = g->weak.e[k].dst;
        if (z < g->nlive)
            continue;
        uint32_t *best = &g->zedge[z - g->nlive];
        if (*best == HP_NONE || better_holder(g, k, *best))
            *best = k;
    }
    for (size_t z = 0; z < nz; z++)
        g->zpend[z] = g->zedge[z] != HP_NONE && holder_pending(g, g->zedge[z]);
    return 0;
}

/* --- analysis: dominators (Cooper, Harvey & Kennedy) ----------------------- */

/* Virtual nodes: VR holds the roots' targets, VU the sources of the
 * unreachable part, S both. Edges from the unreachable part into the
 * reachable one are ignored: garbage does not keep anything alive. */
typedef struct dom {
    hp_graph *g;
    uint32_t VR, VU, S;
    uint32_t *vr, *vu; size_t nvr, nvu, nvr_cap, nvu_cap;
    size_t n, N;                  /* nodes; with the virtual ones */
    uint32_t *po, *rpo, *idom;    /* postorder numbers, reverse postorder, results */
    size_t npo;                   /* nodes the search reached */
    int back;                     /* it met a back edge */
    uint32_t *roff, *rsrc;        /* predecessors within a region (reverse CSR) */
} dom;

static int same_region(const hp_graph *g, uint32_t u, uint32_t w)
{
    return HP_REGION(g, u) == HP_REGION(g, w) && HP_REGION(g, u) != HP_R_ZOMBIE;
}

/* The successor of v at *pos, or HP_NONE at the end. */
static uint32_t succ(const dom *d, uint32_t v, uint32_t *pos)
{
    if (v == d->S) {
        if (*pos >= 2)
            return HP_NONE;
        return (*pos)++ == 0 ? d->VR : d->VU;
    }
    if (v == d->VR)
        return *pos < d->nvr ? d->vr[(*pos)++] : HP_NONE;
    if (v == d->VU)
        return *pos < d->nvu ? d->vu[(*pos)++] : HP_NONE;
    const hp_edges *E = &d->g->strong;
    uint32_t k = E->off[v] + *pos;
    for (; k < E->off[v + 1]; k++) {
        uint32_t w = E->e[k].dst;
        if (same_region(d->g, v, w)) {
            *pos = k + 1 - E->off[v];
            return w;
        }
    }
    *pos = k - E->off[v];
    return HP_NONE;
}

static uint32_t intersect(const uint32_t *po, const uint32_t *idom, uint32_t a, uint32_t b)
{
    while (a != b) {
        while (po[a] < po[b])
            a = idom[a];
        while (po[b] < po[a])
            b = idom[b];
    }
    return a;
}

/* VR's successors in root order (named roots, then finalizers), VU's the
 * unreachable forest's roots. */
static int dom_roots(dom *d)
{
    hp_graph *g = d->g;
    d->nvr_cap = g->nroots;
    for (uint32_t v = 0; v < g->nlive; v++) {
        d->nvr_cap += (g->region[v] & HP_F_FIN) != 0;
        d->nvu_cap += HP_REGION(g, v) == HP_R_UNREACH && HP_PNODE(g, v) == HP_NONE;
    }
    d->vr = hp_xalloc(d->nvr_cap, sizeof *d->vr);
    d->vu = hp_xalloc(d->nvu_cap, sizeof *d->vu);
    if (!d->vr || !d->vu)
        return -1;
    for (size_t r = 0; r < g->nroots; r++) {
        uint32_t v = hp_lookup(g, g->roots[r].o);
        if (v != HP_NONE && v < g->nlive)
            d->vr[d->nvr++] = v;
    }
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (g->region[v] & HP_F_FIN)
            d->vr[d->nvr++] = v;
        if (HP_REGION(g, v) == HP_R_UNREACH && HP_PNODE(g, v) == HP_NONE)
            d->vu[d->nvu++] = v;
    }
    return 0;
}

/* Iterative depth-first search from S: postorder numbers (po), the nodes in
 * reverse postorder at the end of rpo, whether there is a back edge. */
static int dom_search(dom *d)
{
    size_t N = d->N;
    uint32_t *st_node = hp_xalloc(N, sizeof *st_node), *st_pos = hp_xalloc(N, sizeof *st_pos);
    if (!st_node || !st_pos) {
        hp_xfree(st_node, N, sizeof *st_node);
        hp_xfree(st_pos, N, sizeof *st_pos);
        return -1;
    }
    uint32_t *po = d->po, *rpo = d->rpo;
    size_t sp = 0, npo = 0;
    int back = 0;
    st_node[sp] = d->S;
    st_pos[sp++] = 0;
    po[d->S] = HP_NONE - 1;   /* "on the stack": any value but HP_NONE */
    while (sp) {
        uint32_t v = st_node[sp - 1];
        uint32_t w = succ(d, v, &st_pos[sp - 1]);
        if (w == HP_NONE) {
            sp--;
            po[v] = (uint32_t)npo;
            rpo[N - 1 - npo] = v;
            npo++;
            continue;
        }
        if (po[w] != HP_NONE) {
            back |= po[w] == HP_NONE - 1;   /* w is on the stack */
            continue;
        }
        po[w] = HP_NONE - 1;
        st_node[sp] = w;
        st_pos[sp++] = 0;
    }
    d->npo = npo;
    d->back = back;
    hp_xfree(st_node, N, sizeof *st_node);
    hp_xfree(st_pos, N, sizeof *st_pos);
    return 0;
}

/* Predecessors within a region (reverse CSR): v's are rsrc[roff[v] ..
 * roff[v + 1]). */
static int dom_preds(dom *d)
{
    const hp_graph *g = d->g;
    const hp_edges *E = &g->strong;
    size_t n = d->n;
    d->roff = u32_array(n + 1, 0);
    d->rsrc = hp_xalloc(E->n, sizeof *d->rsrc);
    if (!d->roff || !d->rsrc)
        return -1;
    uint32_t *roff = d->roff;
    for (uint32_t k = 0; k < E->n; k++)
        if (same_region(g, E->e[k].src, E->e[k].dst))
            roff[E->e[k].dst + 1]++;
    for (size_t v = 0; v < n; v++)
        roff[v + 1] += roff[v];
    /* fill backwards from each node's end: roff ends as the starts */
    uint32_t total = roff[n];
    for (uint32_t k = (uint32_t)E->n; k-- > 0;)
        if (same_region(g, E->e[k].src, E->e[k].dst))
            d->rsrc[--roff[E->e[k].dst + 1]] = E->e[k].src;
    /* roff[v + 1] is v's start now: shift */
    memmove(roff, roff + 1, n * sizeof *roff);
    roff[n] = total;
    return 0;
}

/* The immediate dominators, in reverse postorder until nothing changes
 * (one pass when the search met no back edge: every predecessor's idom is
 * final before its successors are looked at). */
static void dom_solve(dom *d, const uint32_t *order)
{
    const hp_graph *g = d->g;
    uint32_t *idom = d->idom;
    const uint32_t *po = d->po, *roff = d->roff, *rsrc = d->rsrc;
    const uint32_t VR = d->VR, VU = d->VU;
    size_t n = d->n, npo = d->npo;
    idom[d->S] = d->S;
    idom[VR] = d->S;
    idom[VU] = d->S;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < npo; i++) {
            uint32_t v = order[i];
            if (v >= n)
                continue;
            uint32_t nd = HP_NONE;
            if (HP_REGION(g, v) == HP_R_REACH && (g->region[v] & HP_F_ROOT))
                nd = VR;
            else if (HP_REGION(g, v) == HP_R_UNREACH && HP_PNODE(g, v) == HP_NONE)
                nd = VU;
            for (uint32_t k = roff[v]; k < roff[v + 1]; k++) {
                uint32_t p = rsrc[k];
                if (idom[p] == HP_NONE)
                    continue;
                nd = nd == HP_NONE ? p : intersect(po, idom, p, nd);
            }
            if (idom[v] != nd) {
                idom[v] = nd;
                changed = d->back;
            }
        }
    }
}

/* Every node's retained bytes and dominated count: its own plus what it
 * dominates, summed up the tree in postorder. */
static int dom_retained(dom *d, const uint32_t *order)
{
    hp_graph *g = d->g;
    size_t N = d->N;
    g->ret = hp_xalloc(N, sizeof *g->ret);
    g->dcount = hp_xalloc(N, sizeof *g->dcount);
    if (!g->ret || !g->dcount)
        return -1;
    for (size_t v = 0; v < N; v++) {
        g->ret[v] = v < d->n ? hp_self(g, (uint32_t)v) : 0;
        g->dcount[v] = v < d->n;
    }
    for (size_t i = d->npo; i-- > 0;) {
        uint32_t v = order[i];
        if (v != d->S && d->idom[v] != HP_NONE) {
            g->ret[d->idom[v]] += g->ret[v];
            g->dcount[d->idom[v]] += g->dcount[v];
        }
    }
    return 0;
}

/* The search's arrays (po and the predecessors); the results stay. */
static void dom_search_free(dom *d)
{
    hp_xfree(d->po, d->N, sizeof *d->po);
    hp_xfree(d->roff, d->n + 1, sizeof *d->roff);
    hp_xfree(d->rsrc, d->g->strong.n, sizeof *d->rsrc);
    d->po = d->roff = d->rsrc = NULL;
}

static int dominators(hp_graph *g)
{
    size_t n = g->n, N = n + 3;
    dom d;
    memset(&d, 0, sizeof d);
    d.g = g;
    d.VR = (uint32_t)n, d.VU = (uint32_t)n + 1, d.S = (uint32_t)n + 2;
    d.n = n, d.N = N;
    d.po = u32_array(N, HP_NONE);
    d.idom = u32_array(N, HP_NONE);
    d.rpo = hp_xalloc(N, sizeof *d.rpo);
    int rc = -1;
    if (!d.po || !d.idom || !d.rpo || dom_roots(&d) != 0 || dom_search(&d) != 0 ||
        dom_preds(&d) != 0)
        goto out;
    const uint32_t *order = d.rpo + (N - d.npo);   /* reverse postorder, S first */
    dom_solve(&d, order);
    /* The search's arrays go before the results come: the peak is the
     * larger of the two, not their sum. */
    dom_search_free(&d);
    if (dom_retained(&d, order) != 0)
        goto out;
    g->idom = d.idom;
    d.idom = NULL;
    rc = 0;
out:
    dom_search_free(&d);
    hp_xfree(d.idom, N, sizeof *d.idom);
    hp_xfree(d.rpo, N, sizeof *d.rpo);
    hp_xfree(d.vr, d.nvr_cap, sizeof *d.vr);
    hp_xfree(d.vu, d.nvu_cap, sizeof *d.vu);
    return rc;
}

/* Reference-count leaks: an unreachable object outside any cycle whose
 * strong count is more than the holders the snapshot can see (strong edges,
 * roots, the finalizer registry). The counts are kept for the leaks only
 * (records print them), as pairs sorted by node. */
static int refcount_leaks(hp_graph *g)
{
    uint32_t *found = u32_array(g->nlive, 0);
    if (!found)
        return -1;
    const hp_edges *E = &g->strong;
    for (uint32_t k = 0; k < E->n; k++)
        if (E->e[k].dst < g->nlive)
            found[E->e[k].dst]++;
    for (size_t r = 0; r < g->nroots; r++) {
        uint32_t v = hp_lookup(g, g->roots[r].o);
        if (v != HP_NONE && v < g->nlive)
            found[v]++;
    }
    size_t nleak = 0;
    for (uint32_t v = 0; v < g->nlive; v++) {
        found[v] += (g->region[v] & HP_F_FIN) != 0;
        if (HP_REGION(g, v) != HP_R_UNREACH || hp_scc_cyclic(g, v))
            continue;
        if (g->objs[v]->strong > found[v]) {
            g->region[v] |= HP_F_LEAK;
            nleak++;
        }
    }
    g->found = hp_xalloc(nleak, sizeof *g->found);
    if (!g->found) {
        hp_xfree(found, g->nlive, sizeof *found);
        return -1;
    }
    g->nfound = 0;
    for (uint32_t v = 0; v < g->nlive; v++)
        if (g->region[v] & HP_F_LEAK)
            g->found[g->nfound++] = (struct hp_found){v, found[v]};
    hp_xfree(found, g->nlive, sizeof *found);
    return 0;
}

uint32_t hp_found(const hp_graph *g, uint32_t v)
{
    size_t lo = 0, hi = g->found ? g->nfound : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->found[mid].v < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nfound && g->found && g->found[lo].v == v ? g->found[lo].found : 0;
}

int hp_analyze(hp_graph *g)
{
    if (g->analyzed)
        return 0;
    if (g->nunreach && (tarjan(g) != 0 || unreach_forest(g) != 0 || refcount_leaks(g) != 0))
        goto fail;
    if (weak_holders(g) != 0 || dominators(g) != 0)
        goto fail;
    g->analyzed = 1;
    return 0;
fail:
    /* Drop partial results so a later call starts over. */
    hp_xfree(g->scc, g->n, sizeof(uint32_t));
    hp_xfree(g->scc_rep, g->nscc, sizeof(uint32_t));
    hp_xfree(g->scc_size, g->nscc, sizeof(uint32_t));
    hp_xfree(g->scc_flags, g->nscc, 1);
    hp_xfree(g->zedge, g->nzombie, sizeof(uint32_t));
    hp_xfree(g->zpend, g->nzombie, 1);
    hp_xfree(g->ret, g->n + 3, sizeof(uint64_t));
    hp_xfree(g->idom, g->n + 3, sizeof(uint32_t));
    hp_xfree(g->dcount, g->n + 3, sizeof(uint32_t));
    hp_xfree(g->found, g->nfound, sizeof *g->found);
    g->scc = g->scc_rep = g->scc_size = g->zedge = NULL;
    g->idom = g->dcount = NULL;
    g->found = NULL;
    g->nfound = g->nscc = 0;
    g->scc_flags = g->zpend = NULL;
    g->ret = NULL;
    /* The unreachable forest may be half-built: reset it. */
    for (size_t v = 0; v < g->nlive; v++)
        if (HP_REGION(g, v) == HP_R_UNREACH) {
            g->region[v] &= (uint8_t)~(HP_F_LEAK | HP_F_SRC);
            g->region[v] &= (uint8_t)~HP_F_TROOT;
            g->depth[v] = g->pedge[v] = HP_NONE;
            if (g->anc)
                g->anc[v] = HP_NONE;
        }
    return -1;
}
