/* hp_int.h - the heap module's private graph, shared by its .c files.
 *
 * Nodes are numbered 0..n-1: the live registry in order (0..nlive-1), then
 * the zombies. Strong edges live in a CSR array indexed by source node;
 * weak edges in a list sorted by source (off is NULL), keeping only edges
 * to zombies (a weak edge to a live object explains nothing a report
 * prints). Every per-node array has exactly n entries; every array is
 * freed with the size it was allocated with (al_free needs it).
 */
#ifndef FAKEGC_HP_INT_H
#define FAKEGC_HP_INT_H

#include <stdint.h>

#include "core/ix.h"
#include "heap/hp.h"

#define HP_NONE UINT32_MAX
/* SCCs up to this size show each member its own shortest cycle. */
#define HP_SMALL_SCC 64u
#define HP_LCACHE 64u

/* 16 bytes: a snapshot of millions of objects keeps one per reference. */
typedef struct hp_edge {
    uint32_t src, dst;
    uint32_t label;          /* interned label number */
    int32_t index;           /* slot, or -1 (slots past INT32_MAX clamp) */
} hp_edge;

typedef struct hp_edges {
    uint32_t *off;           /* n + 1; NULL for the weak list */
    hp_edge *e;
    size_t n, cap;
} hp_edges;

enum { HP_R_ZOMBIE = 0, HP_R_REACH = 1, HP_R_UNREACH = 2 };
/* Flag bits of region[]: HP_REGION(x) is the HP_R_* value. */
enum { HP_F_ROOT = 4,     /* held directly by a root */
       HP_F_SEL = 8,      /* selected (hp_select) */
       HP_F_LEAK = 16,    /* reference-count leak (hp_analyze) */
       HP_F_TROOT = 32 }; /* a root of a BFS tree (no parent) */
#define HP_REGION(g, v) ((g)->region[v] & 3u)
/* v's parent in its BFS tree, or HP_NONE (a tree root, a zombie) */
#define HP_PNODE(g, v) \
    (((g)->region[v] & HP_F_TROOT) || (g)->pedge[v] == HP_NONE \
         ? HP_NONE : (g)->strong.e[(g)->pedge[v]].src)
enum { HP_SCC_CYCLIC = 1, HP_SCC_SOURCE = 2 };
/* region[] bit of an acyclic unreachable node that no other part reaches */
enum { HP_F_SRC = 64 };
/* region[] bit of a live finalizer (rooted implicitly), set by hp_build,
 * which reads each header anyway: later passes need not */
enum { HP_F_FIN = 128 };

struct hp_graph {
    size_t n, nlive;
    obj **objs;   /* node -> object; each object's gc_refs holds its node
                     number while the snapshot lives (no hash table: the
                     collector only reads gc_refs inside a collection) */
    hp_edges strong, weak;
    /* interned edge labels */
    char **labels; size_t nlabels, labels_cap;
    ix lidx;                              /* label text -> number */
    const char *lc_ptr[HP_LCACHE];        /* label pointer -> number cache */
    uint32_t lc_id[HP_LCACHE];
    /* roots: copies of the caller's; index nroots is "finalizers" */
    hp_root *roots; size_t nroots;
    /* first edge to an object in neither registry list (hp_verify) */
    int unknown_seen;
    uint32_t unknown_src; int64_t unknown_index; const void *unknown_ptr;
    char unknown_label[48];
    int oom;                              /* a visitor ran out of memory */

    /* reachability (hp_snapshot): BFS forest from the roots, then (in
     * analyze) from the sources of the unreachable part */
    uint8_t *region;                      /* HP_R_* | HP_F_* bits */
    /* BFS tree: pedge is the edge from the parent (its src is the parent),
     * or for a tree root (HP_F_TROOT) the root index / HP_NONE */
    uint32_t *pedge, *depth;
    /* the ancestor at depth HP_PATH_HEAD of a deep node (hp_anc): NULL
     * while no node is deeper than HP_PATH_EDGES */
    uint32_t *anc;
    uint64_t nunreach, nzombie;

    /* analysis (lazy) */
    int analyzed;
    /* Strongly connected parts of the unreachable region. Only cyclic
     * ones (two or more objects, or a self-loop) are numbered: scc[v] is
     * HP_NONE for every other node, whose part is itself (hp_scc_* below);
     * a million acyclic garbage objects cost no per-part arrays. */
    uint32_t *scc;                        /* n: cyclic part number or HP_NONE */
    uint32_t *scc_rep, *scc_size; uint8_t *scc_flags; size_t nscc;
    uint32_t *zedge;                      /* zombies: chosen weak edge */
    uint8_t *zpend;                       /* zombies: held by a pending list */
    uint64_t *ret;                        /* retained bytes, n + 3 */
    uint32_t *idom;                       /* dominator, n + 3 (n..n+2 virtual) */
    uint32_t *dcount;                     /* objects in the dominator subtree */
    /* holders found (edges + roots + finalizer registry) of the
     * reference-count leaks (HP_F_LEAK), by node: sorted pairs */
    struct hp_found { uint32_t v, found; } *found; size_t nfound;
    size_t nsel;                          /* objects marked HP_F_SEL */
    /* scratch for big cycles (lazy) */
    uint32_t *tmark, *tq, *tpar; uint32_t tgen;
    char *buf; size_t buf_cap;            /* path formatting */
    /* the biggest retainers (hp_sum.c), found once per snapshot: each with
     * the retained bytes of the top-level dominator it was reached from,
     * which decide per summary whether it is worth a line, and its node
     * (what a summary of marked objects asks: does it dominate them?) */
    struct hp_topc { hp_top t; uint64_t from; uint32_t node; } *tops; size_t ntops;
    int tops_done;
    /* holder classes (hp_hold.c): the roots the caller marked in use
     * (nroots bytes, NULL: none), and an hp_holder per node (NULL until
     * hp_holders) */
    uint8_t *root_use;
    uint8_t *hold;
};

/* v's strongly connected part (v unreachable): cyclic or not, its size,
 * its representative (lowest node), whether no other part reaches it. */
static inline int hp_scc_cyclic(const hp_graph *g, uint32_t v)
{
    return g->scc[v] != HP_NONE;
}
static inline uint32_t hp_scc_size(const hp_graph *g, uint32_t v)
{
    return hp_scc_cyclic(g, v) ? g->scc_size[g->scc[v]] : 1;
}
static inline uint32_t hp_scc_rep(const hp_graph *g, uint32_t v)
{
    return hp_scc_cyclic(g, v) ? g->scc_rep[g->scc[v]] : v;
}
static inline int hp_scc_source(const hp_graph *g, uint32_t v)
{
    return hp_scc_cyclic(g, v) ? (g->scc_flags[g->scc[v]] & HP_SCC_SOURCE) != 0
                               : (g->region[v] & HP_F_SRC) != 0;
}

/* Arrays of the analysis (hp_mem.c): a block of 4 MiB or more is kept
 * when freed for the next request it fits; hp_mem_flush (called by
 * hp_release) gives back every kept block not in use. */
void *hp_xalloc(size_t count, size_t size);           /* ER_OOM on NULL */
void hp_xfree(void *p, size_t count, size_t size);
void hp_mem_flush(void);
uint32_t hp_lookup(const hp_graph *g, const obj *o);  /* HP_NONE if absent */
uint64_t hp_self(const hp_graph *g, uint32_t v);      /* bytes of node v */
uint32_t hp_anc(const hp_graph *g, uint32_t v);       /* head ancestor */
uint32_t hp_found(const hp_graph *g, uint32_t v);     /* holders found of a
                                                         HP_F_LEAK node */
hp_holder hp_holder_at(const hp_graph *g, uint32_t v);   /* after hp_holders */
/* Path elements of node v as strings (hp_path.c). */
int hp_fill_record(hp_graph *g, uint32_t v, hp_retained *r);
/* Build nodes and edges (weak ones too when with_weak). 0 or -1. */
int hp_build(hp_graph *g, const hp_root *roots, size_t nroots, int with_weak);
void hp_release(hp_graph *g);                         /* frees g's arrays */
int hp_analyze(hp_graph *g);                          /* 0 or -1 (ER_OOM) */
const char *hp_root_name(const hp_graph *g, uint32_t idx);
/* The edge's role (obj_type.edge_role) is OBJ_ROLE_PENDING. */
int hp_edge_is_pending(const hp_graph *g, const hp_edge *e);

#endif
