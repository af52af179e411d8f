/* hp_hold.c - holder classes: how unexpected the thing that keeps an
 * object alive is (hp.h "holders").
 *
 * Two breadth-first passes over strong edges that are not internal (an
 * edge whose obj_edge_role is not OBJ_ROLE_PLAIN belongs to a memo or a
 * pending list): first from the roots marked in use, then from the other
 * named roots. What they reach is held by a variable. Every other
 * reachable object is held only through internals: its shortest chain
 * (the BFS tree of hp_snapshot) says which - the finalizer registry when
 * the chain starts there, else the first internal edge on it. Unreachable
 * live objects are lost; zombies are kept by a pending list or a memo key.
 * Cost O(V + E), one byte per object plus a queue of 4 bytes per object
 * while it runs.
 */
#include "heap/hp_int.h"

#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

static const char *const holder_names[HP_HOLD_COUNT] = {
    [HP_HOLD_MEMO] = "memo",         [HP_HOLD_FINALIZER] = "finalizer",
    [HP_HOLD_PENDING] = "pending",   [HP_HOLD_LOST] = "lost",
    [HP_HOLD_VARIABLE] = "variable", [HP_HOLD_IN_USE] = "in use",
    [HP_HOLD_UNTRACED] = "untraced",
};

const char *hp_holder_name(hp_holder h)
{
    return (unsigned)h < HP_HOLD_COUNT ? holder_names[h] : "?";
}

int hp_holder_parse(const char *s, hp_holder *out)
{
    for (int h = 0; h < HP_HOLD_COUNT && s; h++)
        if (strcmp(s, holder_names[h]) == 0) {
            *out = (hp_holder)h;
            return 0;
        }
    return -1;
}

int hp_holder_tier(hp_holder h)
{
    return h == HP_HOLD_IN_USE ? 2 : h == HP_HOLD_VARIABLE || h == HP_HOLD_UNTRACED ? 1 : 0;
}

int hp_root_in_use(hp_graph *g, size_t i, int in_use)
{
    if (!g || i >= g->nroots)
        return -1;
    if (!g->root_use) {
        if (!in_use)
            return 0;
        g->root_use = hp_xalloc(g->nroots, 1);
        if (!g->root_use)
            return -1;
        memset(g->root_use, 0, g->nroots);
    }
    g->root_use[i] = in_use != 0;
    hp_xfree(g->hold, g->n, 1);   /* computed again on next use */
    g->hold = NULL;
    return 0;
}

/* The role of edge k (strong), OBJ_ROLE_PLAIN for an ordinary reference. */
static obj_role role_of(const hp_graph *g, uint32_t k)
{
    const hp_edge *e = &g->strong.e[k];
    return obj_edge_role(g->objs[e->src], g->labels[e->label]);
}

/* Marks with `cls` what the queued nodes reach over plain edges, among
 * the nodes not yet classified (HP_HOLD_COUNT). */
static void plain_bfs(hp_graph *g, uint8_t *hold, uint32_t *q, size_t qt, uint8_t cls)
{
    const hp_edges *E = &g->strong;
    for (size_t qh = 0; qh < qt; qh++) {
        uint32_t u = q[qh];
        for (uint32_t k = E->off[u]; k < E->off[u + 1]; k++) {
            uint32_t w = E->e[k].dst;
            if (hold[w] != HP_HOLD_COUNT || role_of(g, k) != OBJ_ROLE_PLAIN)
                continue;
            hold[w] = cls;
            q[qt++] = w;
        }
    }
}

static size_t seed_roots(hp_graph *g, uint8_t *hold, uint32_t *q, int in_use, uint8_t cls)
{
    size_t qt = 0;
    for (size_t r = 0; r < g->nroots; r++) {
        if ((g->root_use && g->root_use[r]) != in_use)
            continue;
        uint32_t v = hp_lookup(g, g->roots[r].o);
        if (v == HP_NONE || v >= g->nlive || hold[v] != HP_HOLD_COUNT)
            continue;
        hold[v] = cls;
        q[qt++] = v;
    }
    return qt;
}

/* A reachable node left over: its chain's first internal feature. The
 * chain is walked up to a classified node (q as the stack), then down. */
static void chain_class(hp_graph *g, uint8_t *hold, uint32_t *q, uint32_t v)
{
    size_t sp = 0;
    uint32_t x = v;
    while (hold[x] == HP_HOLD_COUNT) {
        uint32_t p = HP_PNODE(g, x);
        if (p == HP_NONE) {   /* a tree root: the finalizers' (variables' are set) */
            hold[x] = HP_HOLD_FINALIZER;
            break;
        }
        q[sp++] = x;
        x = p;
    }
    while (sp--) {
        uint32_t y = q[sp];
        uint8_t up = hold[HP_PNODE(g, y)];
        if (hp_holder_tier((hp_holder)up) == 0)
            hold[y] = up;   /* internal above: the first feature wins */
        else
            switch (role_of(g, g->pedge[y])) {
            case OBJ_ROLE_PENDING: hold[y] = HP_HOLD_PENDING; break;
            case OBJ_ROLE_PLAIN: hold[y] = up; break;
            default: hold[y] = HP_HOLD_MEMO; break;
            }
    }
}

int hp_holders(hp_graph *g)
{
    if (g->hold)
        return 0;
    if (hp_analyze(g) != 0)
        return -1;
    size_t n = g->n;
    uint8_t *hold = hp_xalloc(n, 1);
    uint32_t *q = hp_xalloc(n, sizeof *q);
    if (!hold || !q) {
        hp_xfree(hold, n, 1);
        hp_xfree(q, n, sizeof *q);
        return er_set(ER_OOM, "out of memory classifying holders");
    }
    memset(hold, HP_HOLD_COUNT, n);
    plain_bfs(g, hold, q, seed_roots(g, hold, q, 1, HP_HOLD_IN_USE), HP_HOLD_IN_USE);
    plain_bfs(g, hold, q, seed_roots(g, hold, q, 0, HP_HOLD_VARIABLE), HP_HOLD_VARIABLE);
    for (uint32_t v = 0; v < n; v++) {
        if (hold[v] != HP_HOLD_COUNT)
            continue;
        switch (HP_REGION(g, v)) {
        case HP_R_REACH: chain_class(g, hold, q, v); break;
        case HP_R_UNREACH: hold[v] = HP_HOLD_LOST; break;
        default:
            hold[v] = g->zpend[v - g->nlive] ? HP_HOLD_PENDING : HP_HOLD_MEMO;
            break;
        }
    }
    hp_xfree(q, n, sizeof *q);
    g->hold = hold;
    return 0;
}

hp_holder hp_holder_at(const hp_graph *g, uint32_t v)
{
    return g->hold ? (hp_holder)g->hold[v] : HP_HOLD_VARIABLE;
}

int hp_holder_of(hp_graph *g, const obj *o, hp_holder *out)
{
    uint32_t v = hp_lookup(g, o);
    if (v == HP_NONE)
        return er_set(ER_INTERNAL, "object not in the snapshot");
    if (hp_holders(g) != 0)
        return -1;
    *out = (hp_holder)g->hold[v];
    return 0;
}
