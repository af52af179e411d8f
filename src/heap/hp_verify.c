/* hp_verify.c - heap invariants: counts against the edges actually held. */
#include "heap/hp_int.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"


/* "Type#id" and "kind#id" */
static void name_of(const obj *o, char *buf, size_t n, int kind)
{
    snprintf(buf, n, "%s#%llu",
             kind ? obj_kind_name(o->type->kind) : (o->type->name ? o->type->name : "?"),
             (unsigned long long)o->id);
}

static void edge_name(const hp_graph *g, uint32_t src, const char *label, int64_t index,
                      char *buf, size_t n)
{
    char who[96];
    name_of(g->objs[src], who, sizeof who, 0);
    if (index >= 0)
        snprintf(buf, n, "%s.%s[%lld]", who, label, (long long)index);
    else
        snprintf(buf, n, "%s.%s", who, label);
}

static int check(hp_graph *g, const uint32_t *incoming, uint32_t *rootrefs, char *why,
                 size_t wn)
{
    char a[128], b[192];
    for (size_t r = 0; r < g->nroots; r++) {
        const obj *o = g->roots[r].o;
        if (!o)
            continue;
        const char *rn = hp_root_name(g, (uint32_t)r);
        uint32_t v = hp_lookup(g, o);
        if (v == HP_NONE)
            return er_why(why, wn, "root '%s' points to an object in neither registry list (%p)",
                        rn, (const void *)o);
        if (v >= g->nlive) {
            name_of(o, a, sizeof a, 1);
            return er_why(why, wn, "root '%s' holds dead %s", rn, a);
        }
        rootrefs[v]++;
    }
    if (g->unknown_seen) {
        edge_name(g, g->unknown_src, g->unknown_label, g->unknown_index, b, sizeof b);
        return er_why(why, wn, "%s points to an object in neither registry list (%p)", b,
                    g->unknown_ptr);
    }
    for (size_t v = 0; v < g->n; v++) {
        const obj *o = g->objs[v];
        name_of(o, a, sizeof a, 0);
        if (v < g->nlive) {
            if (o->flags & OBJ_F_DEAD)
                return er_why(why, wn, "%s is in the live registry but flagged dead", a);
            if (o->strong == 0)
                return er_why(why, wn, "%s is in the live registry with strong count 0", a);
        } else {
            if (o->strong != 0)
                return er_why(why, wn, "zombie %s has strong count %u", a, o->strong);
            if (o->weak == 0)
                return er_why(why, wn, "zombie %s has weak count 0 (should have been freed)", a);
            if (!(o->flags & OBJ_F_DEAD))
                return er_why(why, wn, "zombie %s is not flagged dead", a);
        }
    }
    for (size_t k = 0; k < g->strong.n; k++) {
        const hp_edge *e = &g->strong.e[k];
        if (e->dst < g->nlive)
            continue;
        edge_name(g, e->src, g->labels[e->label], e->index, b, sizeof b);
        name_of(g->objs[e->dst], a, sizeof a, 1);
        return er_why(why, wn, "%s holds dead %s strongly", b, a);
    }
    for (size_t v = 0; v < g->nlive; v++) {
        const obj *o = g->objs[v];
        uint32_t fin = o->type->kind == OBJ_FINALIZER;
        uint32_t own = (o->flags & OBJ_F_OWNERLESS) != 0;   /* a modelled leak's */
        uint64_t want = (uint64_t)incoming[v] + rootrefs[v] + fin + own;
        if (o->strong != want) {
            name_of(o, a, sizeof a, 0);
            return er_why(why, wn,
                        "strong count of %s (%s) is %u, but %llu references were found: "
                        "%u strong edges, %u roots, %u finalizer registry",
                        a, obj_kind_name(o->type->kind), o->strong, (unsigned long long)want,
                        incoming[v], rootrefs[v], fin);
        }
    }
    return 0;
}

int hp_verify(const hp_root *roots, size_t nroots, char *why, size_t n)
{
    hp_graph g;
    memset(&g, 0, sizeof g);
    uint32_t *incoming = NULL, *rootrefs = NULL;
    int rc = -1;
    if (hp_build(&g, roots, nroots, 0) != 0)
        goto oom;
    incoming = hp_xalloc(g.n, sizeof *incoming);
    rootrefs = hp_xalloc(g.n, sizeof *rootrefs);
    if (!incoming || !rootrefs)
        goto oom;
    memset(incoming, 0, (g.n ? g.n : 1) * sizeof *incoming);
    memset(rootrefs, 0, (g.n ? g.n : 1) * sizeof *rootrefs);
    for (size_t k = 0; k < g.strong.n; k++)
        incoming[g.strong.e[k].dst]++;
    rc = check(&g, incoming, rootrefs, why, n);
    goto out;
oom:
    er_why(why, n, "%s", er_kind_get() == ER_OOM ? "out of memory" : er_message());
out:
    hp_xfree(incoming, g.n, sizeof *incoming);
    hp_xfree(rootrefs, g.n, sizeof *rootrefs);
    hp_release(&g);
    return rc;
}
