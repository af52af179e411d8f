/* hp_dot.c - the retention graph of some records, for Graphviz. */
#include "heap/hp_int.h"

#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "esc/es.h"

static void dot_str(FILE *f, const char *s)
{
    fputc('"', f);
    es_fputs(f, s, ES_DOT);
    fputc('"', f);
}

/* id -> node: the nodes indexed by their objects' ids */
static int id_eq(const void *ctx, uint32_t v, const void *key)
{
    const hp_graph *g = ctx;
    return g->objs[v]->id == *(const uint64_t *)key;
}

static int idmap_build(ix *m, const hp_graph *g)
{
    if (ix_reserve(m, g->n) != 0)
        return er_set(ER_OOM, "out of memory indexing the heap's objects");
    for (uint32_t v = 0; v < g->n; v++)
        ix_add(m, g->objs[v]->id, v);   /* reserved: cannot fail */
    return 0;
}

static uint32_t idmap_get(const ix *m, const hp_graph *g, uint64_t id)
{
    return ix_find(m, id, id_eq, g, &id);
}

enum { INC_PATH = 1, INC_RECORD = 2 };

static void include_chain(const hp_graph *g, uint8_t *inc, uint8_t *sccmark, uint32_t x)
{
    while (x != HP_NONE && !(inc[x] & INC_PATH)) {
        inc[x] |= INC_PATH;
        if (HP_REGION(g, x) == HP_R_UNREACH && hp_scc_cyclic(g, x) &&
            hp_scc_size(g, x) <= HP_SMALL_SCC)
            sccmark[g->scc[x]] = 1;
        x = HP_PNODE(g, x);
    }
}

static const char *fill_of(const hp_graph *g, uint32_t v)
{
    switch (HP_REGION(g, v)) {
    case HP_R_REACH: return "lightblue";
    case HP_R_UNREACH: return "salmon";
    default: return g->zpend[v - g->nlive] ? "khaki" : "lightgrey";
    }
}

static void edge_label(const hp_graph *g, const hp_edge *e, FILE *f)
{
    char idx[32] = "";
    if (e->index >= 0)
        snprintf(idx, sizeof idx, "[%lld]", (long long)e->index);
    fputs(" [label=", f);
    fputc('"', f);
    es_fputs(f, g->labels[e->label], ES_DOT);
    fputs(idx, f);
    fputc('"', f);
}

int hp_write_dot(hp_graph *g, const hp_retained *r, size_t n, FILE *f, uint32_t cl,
                 const char *title)
{
    if (hp_analyze(g) != 0)
        return -1;
    ix m = IX_INIT(AL_K_HEAP, "hp_dot");
    uint8_t *inc = hp_xalloc(g->n, 1);
    uint8_t *sccmark = hp_xalloc(g->nscc, 1);
    int rc = -1;
    if (!inc || !sccmark || idmap_build(&m, g) != 0)
        goto out;
    memset(inc, 0, g->n ? g->n : 1);
    memset(sccmark, 0, g->nscc ? g->nscc : 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = idmap_get(&m, g, r[i].id);
        if (v == HP_NONE)
            continue;
        inc[v] |= INC_RECORD;
        if (HP_REGION(g, v) == HP_R_ZOMBIE) {
            inc[v] |= INC_PATH;
            uint32_t e = g->zedge[v - g->nlive];
            if (e != HP_NONE)
                include_chain(g, inc, sccmark, g->weak.e[e].src);
        } else {
            include_chain(g, inc, sccmark, v);
        }
    }
    for (uint32_t v = 0; v < g->nlive; v++)
        if (HP_REGION(g, v) == HP_R_UNREACH && hp_scc_cyclic(g, v) && sccmark[g->scc[v]])
            inc[v] |= INC_PATH;

    fprintf(f, "  subgraph cluster_%u {\n    label=", cl);
    dot_str(f, title ? title : "");
    fputs(";\n", f);
    for (uint32_t v = 0; v < g->n; v++) {
        if (!inc[v])
            continue;
        const obj *o = g->objs[v];
        char label[256], self[32], ret[32];
        hp_human_bytes(hp_self(g, v), self, sizeof self);
        hp_human_bytes(g->ret[v], ret, sizeof ret);
        snprintf(label, sizeof label, "%s#%llu\n%s\n%s, retains %s",
                 obj_kind_name(o->type->kind), (unsigned long long)o->id,
                 o->type->name ? o->type->name : "?", self, ret);
        fprintf(f, "    s%u_o%llu [label=", cl, (unsigned long long)o->id);
        dot_str(f, label);
        fprintf(f, ", fillcolor=%s%s];\n", (inc[v] & INC_RECORD) ? fill_of(g, v) : "white",
                (inc[v] & INC_RECORD) ? ", penwidth=2" : "");
    }
    /* roots */
    for (size_t i = 0; i < g->nroots; i++) {
        uint32_t v = hp_lookup(g, g->roots[i].o);
        if (v == HP_NONE || v >= g->nlive || !(inc[v] & INC_PATH))
            continue;
        fprintf(f, "    s%u_root%zu [shape=ellipse, fillcolor=palegreen, label=", cl, i);
        dot_str(f, hp_root_name(g, (uint32_t)i));
        fprintf(f, "];\n    s%u_root%zu -> s%u_o%llu;\n", cl, i, cl,
                (unsigned long long)g->objs[v]->id);
    }
    int fin_root = 0;
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (!(inc[v] & INC_PATH) || g->objs[v]->type->kind != OBJ_FINALIZER)
            continue;
        if (!fin_root) {
            fprintf(f, "    s%u_root%zu [shape=ellipse, fillcolor=palegreen, "
                       "label=\"finalizers\"];\n", cl, g->nroots);
            fin_root = 1;
        }
        fprintf(f, "    s%u_root%zu -> s%u_o%llu;\n", cl, g->nroots, cl,
                (unsigned long long)g->objs[v]->id);
    }
    /* strong edges among included objects, weak edges to included zombies */
    for (uint32_t v = 0; v < g->nlive; v++) {
        if (!inc[v])
            continue;
        for (uint32_t k = g->strong.off[v]; k < g->strong.off[v + 1]; k++) {
            const hp_edge *e = &g->strong.e[k];
            if (!inc[e->dst])
                continue;
            fprintf(f, "    s%u_o%llu -> s%u_o%llu", cl, (unsigned long long)g->objs[v]->id, cl,
                    (unsigned long long)g->objs[e->dst]->id);
            edge_label(g, e, f);
            fputs("];\n", f);
        }
    }
    for (uint32_t k = 0; k < g->weak.n; k++) {   /* weak edges: a list by source */
        const hp_edge *e = &g->weak.e[k];
        if (!inc[e->src] || !inc[e->dst] || e->dst < g->nlive)
            continue;
        fprintf(f, "    s%u_o%llu -> s%u_o%llu", cl, (unsigned long long)g->objs[e->src]->id, cl,
                (unsigned long long)g->objs[e->dst]->id);
        edge_label(g, e, f);
        fputs(", style=dashed];\n", f);
    }
    fputs("  }\n", f);
    if (ferror(f)) {
        er_set(ER_INTERNAL, "write error on the DOT output");
        goto out;
    }
    rc = 0;
out:
    hp_xfree(inc, g->n, 1);
    hp_xfree(sccmark, g->nscc, 1);
    ix_free(&m);
    return rc;
}

int hp_dot_begin(FILE *f)
{
    fputs("digraph fakegc {\n  rankdir=LR;\n  labelloc=t;\n"
          "  label=\"fakegc retention graph\\nfill: lightblue reachable, salmon unreachable or "
          "refcount leak, khaki pending-storage, lightgrey stale-memo; thick border: a "
          "reported object; dashed: weak edge\";\n"
          "  node [shape=box, style=filled, fillcolor=white, fontname=\"monospace\"];\n"
          "  edge [fontname=\"monospace\", fontsize=10];\n", f);
    return ferror(f) ? -1 : 0;
}

int hp_dot_end(FILE *f)
{
    fputs("}\n", f);
    return ferror(f) ? -1 : 0;
}
