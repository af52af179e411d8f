/* hp.h - heap analysis: census, reachability from roots, shortest retention
 * paths, dominators and retained sizes, grouping, heap invariants.
 *
 * The graph is a snapshot of every live object and every zombie (dead, but
 * its header kept by weak holders) with the strong edges of obj_traverse
 * and the weak edges (to zombies) of each type's traverse_weak. Roots are named by the
 * caller (scenario variables, the `with` stack); live finalizers are rooted
 * implicitly (CPython's finalizer registry holds them), as root "finalizers".
 *
 *   hp_root roots[] = {{"m", mode, 0}, {"t", t, 0}};
 *   hp_graph *g = hp_snapshot(roots, 2);          // NULL on OOM
 *   hp_retained *r; size_t n;
 *   hp_retained_all(g, &r, &n);                   // every live/zombie object
 *   ... r[i].path = {"m", "FakeTensorMode#2.converter", ..., "storage#41"}
 *   hp_retained_free(r, n); hp_free(g);
 *
 * Cost: snapshot, BFS and dominators are O(V + E) (Cooper-Harvey-Kennedy
 * iterative dominators on a reverse-postorder numbering, near-linear in
 * practice); a report on 1M objects must take seconds, not minutes. All
 * scratch memory comes from the allocator with kind AL_K_HEAP.
 */
#ifndef FAKEGC_HP_H
#define FAKEGC_HP_H

#include <stdio.h>
#include <stdint.h>

#include "core/obj.h"

/* A named root: a scenario variable, a `with` entry. `name` must outlive
 * the graph made from it; `o` may be NULL (ignored). A root counts as one
 * strong reference held outside the heap (see hp_verify). */
typedef struct hp_root {
    const char *name;
    obj *o;
    size_t var_len;   /* the variable name starts with: its first var_len
                         characters ("KEEP" of "KEEP[3]"); 0: all of it */
} hp_root;

typedef struct hp_graph hp_graph;

/* Snapshot the registry (live objects, then zombies) with their strong and
 * weak edges, and find what the roots reach. Only live objects are
 * traversed: a zombie has released what it owned. Edges to objects in
 * neither registry list are dropped (hp_verify reports them). NULL with
 * ER_OOM (or ER_LIMIT past 2^32 - 8 objects or edges). Dominators, cycles
 * and retained sizes are computed on first use by the functions below. */
hp_graph *hp_snapshot(const hp_root *roots, size_t nroots);
void hp_free(hp_graph *g);   /* g may be NULL */

typedef enum hp_reason {
    HP_REACHABLE,        /* a strong path from a root holds it */
    HP_UNREACHABLE,      /* alive, but no root reaches it: a cycle or a
                            reference-count leak */
    HP_STALE_MEMO,       /* dead (zombie) header kept by a memo key */
    HP_PENDING_STORAGE,  /* dead storage header kept by a pending list */
    HP_REFCOUNT_LEAK,    /* alive, no root reaches it, in no cycle, and its
                            strong count is more than the holders found
                            (edges, roots, finalizer registry): somebody
                            forgot a decref */
    HP_UNTRACED          /* counted by hp_census, never traced: not known */
} hp_reason;
const char *hp_reason_name(hp_reason r);   /* "reachable", "unreachable",
                                              "stale-memo", "pending-storage",
                                              "refcount-leak", "untraced" */

/* Holder classes (hp_hold.c): how unexpected what keeps an object alive
 * is, most unexpected first. Reports rank by tier (hp_holder_tier): 0, the
 * culprits - held only through a memo's entries, only from the finalizer
 * registry, only through a pending list (or a dead header kept by a memo
 * key or a pending list), or lost (alive, no root reaches it); 1, held by a
 * variable (a root) through ordinary references; 2, the same by a root
 * the caller marked in use (hp_root_in_use: the program reads it later,
 * so holding it is expected). "Only": an object that a variable also
 * reaches without passing a memo or pending edge is the variable's. */
typedef enum hp_holder {
    HP_HOLD_MEMO, HP_HOLD_FINALIZER, HP_HOLD_PENDING, HP_HOLD_LOST,
    HP_HOLD_VARIABLE, HP_HOLD_IN_USE,
    HP_HOLD_UNTRACED,    /* hp_census: not known (tier 1) */
    HP_HOLD_COUNT
} hp_holder;
const char *hp_holder_name(hp_holder h);   /* "memo", "finalizer", "pending",
                                              "lost", "variable", "in use",
                                              "untraced" */
int hp_holder_parse(const char *s, hp_holder *out);   /* 0, or -1 unknown */
int hp_holder_tier(hp_holder h);           /* 0 culprit, 1 variable, 2 in use */

/* What a retained object's path starts from (path[0]): one of the roots
 * given to hp_snapshot (named by it), the implicit root of live finalizers
 * ("finalizers"), nothing ("unreachable": a cycle or a leaked object), or
 * only weak holders ("weak"). */
typedef enum hp_root_kind {
    HP_RK_PROGRAM, HP_RK_FINALIZERS, HP_RK_UNREACHABLE, HP_RK_WEAK
} hp_root_kind;

typedef struct hp_retained {
    uint64_t id;
    obj_kind kind;
    const char *type_name;   /* obj_type name, static */
    obj_site site;
    uint64_t bytes;          /* obj_self_bytes */
    uint64_t retained_bytes; /* bytes of its dominator subtree */
    hp_reason reason;
    hp_holder holder;
    uint32_t strong;         /* strong count when recorded */
    uint32_t found;          /* holders found (refcount-leak: < strong) */
    /* Shortest chain from a root: path[0] is the root name ("finalizers"
     * for the implicit root of live finalizers), then one element per edge,
     * "Type#id.label" or "Type#id.label[index]" naming the holder, last
     * "kind#id" (obj_kind_name) of the object itself:
     *   m, FakeTensorMode#2.converter, ..., MetaConverter#4.storage_memo[0],
     *   storage#41
     * Unreachable (path[0] = "unreachable"): for a member of a cycle that
     * nothing else holds, the shortest cycle through it, so the first and
     * the last element name the same object; otherwise the chain from such
     * a cycle (or from a leaked object nothing holds) down to the object.
     * In a cycle of more than 64 objects only the lowest-id member shows
     * its cycle, the others their chain from it.
     * Zombies: the path of the best weak holder (a pending list first, then
     * a reachable holder, then the shortest), then the weak edge
     * ("MetaConverter#4.pending[2]"); path[0] = "weak" when no weak holder
     * is visible.
     * Paths of more than HP_PATH_EDGES edges keep the first HP_PATH_HEAD
     * and the last HP_PATH_TAIL edges around one element "... N more ...".
     * path points into one allocation of path_alloc bytes (AL_K_HEAP)
     * holding the pointers and the strings; make it with
     * hp_retained_set_path. */
    char **path;
    size_t path_len;
    size_t path_alloc;
    hp_root_kind root;       /* what path[0] is (HP_RK_PROGRAM when read back
                                or without a path) */
    uint64_t weak_holder;    /* a zombie's: the id of the object whose weak
                                edge keeps it (a converter's pending list or
                                memo key; its path's last holder); 0 none */
    char describe[64];       /* type's describe() for live objects, else "" */
    size_t root_len;         /* HP_RK_PROGRAM: the root's variable is path[0]'s
                                first root_len characters (hp_root.var_len);
                                0: all of path[0] */
    uint32_t fold_hops;      /* bit i: path[i] is folded into the hop
                                before it: an edge out of a converter
                                (OBJ_FAKE_CONVERTER, OBJ_META_CONVERTER) or
                                an attribute with its type's attr_spelling;
                                set with the path by hp_fill_record; 0 read
                                back */
} hp_retained;

enum { HP_PATH_EDGES = 12, HP_PATH_HEAD = 6, HP_PATH_TAIL = 5 };

/* Replace r's path by a copy of elems[0..n). 0, or -1 with ER_OOM (r's
 * path unchanged). */
int hp_retained_set_path(hp_retained *r, const char *const *elems, size_t n);

/* The path's shape: elements joined by " -> " with "#id" and "[index]"
 * stripped and an elision element as "...":
 *   "m -> FakeTensorMode.converter -> MetaConverter.storage_memo -> storage"
 * Writes at most cap bytes including the NUL (snprintf-style); returns the
 * full length. */
size_t hp_path_shape(char *const *path, size_t n, char *buf, size_t cap);

/* A path joined into text (hp_path_shape, hp_group.via, hp_top.path, a
 * verdict group's example path, and the same read back from JSON) has its
 * elements separated by HP_PATH_SEP. The writers that lay such a path out
 * element by element walk it with this iterator, the one reader of the
 * separator, never by searching the text themselves:
 *     hp_path_it it = hp_path_walk(via);
 *     while (hp_path_next(&it))
 *         use(it.elem, it.len);   // it.index: 0 the root; it.last: the kind
 * it.elem points into the text (not NUL-terminated at it.len; the rest of the
 * path, from this element on, is it.elem itself). NULL or "" walks as one
 * empty element. An element's text never holds the separator (edge labels,
 * type names and index contents are written without it); one that did would
 * be walked as two. */
#define HP_PATH_SEP " -> "
enum { HP_PATH_SEP_LEN = 4 };
typedef struct hp_path_it {
    const char *elem;        /* this element's first byte */
    size_t len;              /* its length */
    size_t index;            /* 0 for the first element */
    int last;                /* no element follows */
    const char *next_;       /* private: where the next element starts */
} hp_path_it;
hp_path_it hp_path_walk(const char *joined);
int hp_path_next(hp_path_it *it);   /* 1: it is the next element; 0: no more */

/* Every live and zombie object in the snapshot, largest retained first
 * (then lowest id). *out is an array of exactly *n records (AL_K_HEAP;
 * NULL when empty). 0, or -1 with ER_OOM (nothing allocated).
 * Retained size: obj_self_bytes summed over the object's subtree in the
 * dominator tree of strong edges from the roots; unreachable objects are
 * dominated from a second virtual root of their own (so a leaked cycle's
 * first member retains the cycle); a zombie retains its own header only. */
int hp_retained_all(hp_graph *g, hp_retained **out, size_t *n);
/* The same for one object. -1 with ER_OOM, or ER_INTERNAL when o is not in
 * the snapshot. */
int hp_retained_one(hp_graph *g, const obj *o, hp_retained *out);
void hp_retained_free(hp_retained *r, size_t n);   /* records and array */
void hp_retained_clear(hp_retained *r);   /* frees one record's strings */

/* Groups of alike retained objects: same kind, type, creating site, reason,
 * holder and path shape (hp_path_shape), the culprits first (lowest
 * hp_holder_tier), then largest total_bytes (then count, then first
 * member):
 * "20000 x storage, 64 B each, via m -> ... -> MetaConverter.storage_memo
 * -> storage". */
typedef struct hp_group {
    obj_kind kind;
    const char *type_name;   /* borrowed from the records */
    obj_site site;
    hp_reason reason;
    hp_holder holder;        /* part of the group key */
    uint64_t count;
    uint64_t bytes_each;     /* total_bytes / count */
    uint64_t total_bytes;    /* sum of members' bytes */
    uint64_t total_retained; /* sum of members' retained_bytes (members that
                                dominate each other count twice) */
    char *via;               /* path shape, owned (AL_K_HEAP) */
    size_t example;          /* index of its first member in the records */
    size_t nexamples;        /* hp_summarize: records example.. of this group;
                                hp_group_records: 1 */
} hp_group;
/* *out: exactly *ngroups groups (AL_K_HEAP), NULL when n == 0. 0, or -1
 * with ER_OOM (nothing allocated). */
int hp_group_records(const hp_retained *r, size_t n, hp_group **out, size_t *ngroups);
void hp_groups_free(hp_group *g, size_t n);

/* --- summaries: what the report prints at any size ------------------------
 *
 * hp_summarize never makes a record (or a string) per object: groups come
 * from interned path shapes (a shape is its parent's shape plus one edge),
 * and only the examples get paths. Cost O(V + E) after hp_analyze, scratch
 * 8 bytes per object.
 *
 *   hp_select_clear(g); for each o: hp_select(g, o);
 *   hp_summary s; hp_summarize(g, HP_SEL_MARKED, 3, &s);
 *   ... s.total objects, s.groups[i] with s.examples[groups[i].example ..]
 *   hp_summary_free(&s);
 */
typedef enum hp_which { HP_SEL_ALL, HP_SEL_MARKED } hp_which;

void hp_select_clear(hp_graph *g);
/* Mark o (no-op for objects outside the snapshot, or NULL). */
void hp_select(hp_graph *g, const obj *o);
size_t hp_selected(const hp_graph *g);
/* Mark every live object of the snapshot whose id is at least first_id
 * (made since obj_next_id() gave first_id): what a growth() counts as
 * new. Returns how many were newly marked. */
size_t hp_select_since(hp_graph *g, uint64_t first_id);
/* Mark the targets of from's strong edges in the snapshot whose role
 * (obj_edge_role of from and the edge's label) is `role`: the entries of a
 * memo, read from the snapshot's edge array (touching no target object,
 * where hp_select of each would read its header). Returns how many were
 * newly marked; 0 when from is not in the snapshot. */
size_t hp_select_role(hp_graph *g, const obj *from, obj_role role);

/* One of the objects that retain the most (Eclipse MAT's "biggest
 * objects"): a node of the dominator tree found by walking down from a
 * top-level dominator while one child of another type retains at least 80%
 * of it (so a list of alike objects is named by its head). */
typedef struct hp_top {
    uint64_t id;
    obj_kind kind;
    const char *type_name;
    uint64_t retained_bytes;
    uint64_t count;          /* objects it dominates, itself included */
    uint64_t main_count;     /* the largest part of them: */
    obj_kind main_kind;      /*   main_count x main_kind ... */
    char main_via[48];       /*   ... held through edge label main_via */
    char path[256];          /* its dominator chain from its root:
                                "m -> FakeTensorMode#1 -> ... -> MetaConverter#3" */
} hp_top;

typedef struct hp_summary {
    uint64_t total;          /* objects covered */
    uint64_t total_bytes;    /* their bytes */
    hp_group *groups; size_t ngroups;        /* biggest total_bytes first */
    hp_retained *examples; size_t nexamples; /* per group, largest retained first */
    hp_top *top; size_t ntop;                /* up to HP_TOP, biggest first */
} hp_summary;

enum { HP_TOP = 3 };

/* Summarize every live and zombie object (HP_SEL_ALL) or the marked ones,
 * keeping up to k examples per group. Top retainers: those retaining at
 * least 1% of the covered bytes and at least 64 objects or 1 MiB. 0, or -1
 * with ER_OOM (*out zeroed). */
int hp_summarize(hp_graph *g, hp_which which, size_t k, hp_summary *out);
void hp_summary_free(hp_summary *s);
/* HP_TOP zeroed entries, as a summary's top (hp_summary_free frees them):
 * a report read back fills them; NULL with ER_OOM. */
hp_top *hp_tops_alloc(void);

/* A census for a heap too big to snapshot within memory bounds (a limit
 * stopped the program): every live and zombie object is counted in
 * groups by kind, type and creating site (reason HP_UNTRACED, holder
 * HP_HOLD_UNTRACED, via "not traced"; at most max_groups groups, the
 * objects of any further key counted in one last group of type
 * "(other)"), and the HP_TOP objects holding the most references
 * directly (64 or more, or 1 MiB with what they point to) become the top
 * retainers: count = references it holds,
 * retained_bytes = its own bytes plus those of what they point to,
 * main_count/main_kind/main_via the label holding the most, path "not
 * traced". No examples. Memory O(max_groups), time O(V + E); reads every
 * object's header and edges. 0, or -1 with ER_OOM (*out zeroed). */
int hp_census(size_t max_groups, hp_summary *out);

/* Stream every covered object as a record (with its path), largest
 * retained first is NOT promised: snapshot order. One record lives at a
 * time; fn returns 0 to go on. 0, -1 (ER_OOM) or fn's non-zero value. */
int hp_each(hp_graph *g, hp_which which, int (*fn)(const hp_retained *r, void *arg),
            void *arg);

/* Mark root i (the index in hp_snapshot's roots) as one the program still
 * uses (in_use 1) or not (0, the default): what it holds is classed
 * HP_HOLD_IN_USE. Call before summarizing. 0, or -1 (i out of range, or
 * ER_OOM). */
int hp_root_in_use(hp_graph *g, size_t i, int in_use);
/* Classify every object of the snapshot (after hp_analyze; done on first
 * use by hp_summarize, hp_retained_*, hp_each). 0, or -1 with ER_OOM. */
int hp_holders(hp_graph *g);
/* o's holder class: 0, or -1 (ER_OOM; ER_INTERNAL when o is not in g). */
int hp_holder_of(hp_graph *g, const obj *o, hp_holder *out);

/* Live objects no root reaches through strong edges (cheap: known after
 * hp_snapshot). */
uint64_t hp_unreachable_count(const hp_graph *g);
uint64_t hp_live_count(const hp_graph *g);
uint64_t hp_zombie_count(const hp_graph *g);

/* Graphviz retention graphs. A DOT file is one digraph, however many
 * scenarios it shows: hp_dot_begin writes its header (title and the colour
 * legend), each hp_write_dot one titled cluster (`subgraph cluster_K`, node
 * names prefixed with sK_ so that clusters never share a node), hp_dot_end
 * the closing brace. `dot -Tsvg` renders all of it.
 *
 * A cluster holds the given records (made from g): each record's object,
 * the chain that holds it up to its root (or its cycle), the roots as
 * ellipses, every strong edge among those objects labelled "label[index]",
 * weak edges to zombies dashed; nodes say "kind#id", type, bytes and
 * retained bytes. Records not in g are skipped. 0, or -1 (ER_OOM, or a
 * write error). */
int hp_dot_begin(FILE *f);
int hp_write_dot(hp_graph *g, const hp_retained *r, size_t n, FILE *f, uint32_t k,
                 const char *title);
int hp_dot_end(FILE *f);
/* The same cluster at scale, from a summary's groups (hp_dotg.c): one node
 * per group, "200000 x tensor (tensor)" with its first example's describe,
 * bytes each / in all / retained in KiB, MiB...; its path shape drawn as
 * the chain of holder types that leads to it (shared prefixes drawn once),
 * the weak last edge of a zombie group dashed. At most HP_SHOW_GROUPS
 * groups, the cluster's label says "kept X of Y groups". 0 or -1 (a write
 * error). */
int hp_write_dot_groups(const hp_group *gr, size_t ngr, const hp_retained *ex, size_t nex,
                        FILE *f, uint32_t k, const char *title);

/* Heap invariants (stress mode, `run --verify`): every live object's strong
 * count equals its incoming strong edges plus root references (+1 for live
 * finalizers, +1 for OBJ_F_OWNERLESS: a modelled leak's); no live object has OBJ_F_DEAD or strong == 0; every zombie
 * has strong == 0, weak > 0 and OBJ_F_DEAD; no strong edge and no root
 * points to a zombie or to an object in neither registry list. 0, or -1
 * with the first violation (in registry order) in why, e.g.
 *   "strong count of Node#4 (generic) is 3, but 2 references were found:
 *    1 strong edges, 1 roots, 0 finalizer registry"
 * On OOM: -1, ER_OOM and "out of memory" in why. */
int hp_verify(const hp_root *roots, size_t nroots, char *why, size_t n);

/* --- the dominator tree, aggregated and capped (hp_dtree.c) -----------------
 *
 * Eclipse MAT's dominator tree grouped by class, for a page a person
 * expands: a node is the set of sibling objects of the dominator tree that
 * share their type and the label of the edge (or the root) that holds them.
 * The three top-level nodes (parent HP_DT_TOP, type_name NULL, label
 * "roots", "unreachable", "held only weakly") cover what the named roots
 * and finalizers dominate, the unreachable part and the zombies. The nodes
 * that retain the most are expanded first, up to max_nodes nodes and
 * max_kids children per node; what a node's cut left out is in more_*.
 * Cost O(V) after the analysis, scratch 12 bytes per object.
 *
 *   hp_dtree t;
 *   if (hp_dom_tree(g, 200, 12, &t) == 0) { ... t.nodes[i] ...; hp_dtree_free(&t); }
 */
#define HP_DT_TOP UINT32_MAX
/* What a page or an aggregated DOT graph shows at most: groups per heap
 * state, examples per group, tree nodes, children per tree node. */
enum { HP_SHOW_GROUPS = 20, HP_SHOW_EXAMPLES = 1, HP_SHOW_NODES = 200, HP_SHOW_KIDS = 12 };
typedef struct hp_dnode {
    uint32_t parent;          /* index of its parent in nodes, or HP_DT_TOP */
    obj_kind kind;
    const char *type_name;    /* static; NULL for a top-level node */
    char label[48];           /* the edge that holds the first member:
                                 "tensor_memo", "root m", or "" */
    char example[64];         /* "tensor#7 f32[4, 4] cpu" (its first member) */
    uint64_t first_id;
    uint64_t count, shallow, retained;   /* members, their own bytes, the
                                            bytes their subtrees hold */
    uint32_t nkids;           /* children kept (nodes whose parent is it) */
    uint64_t more_groups, more_count, more_retained;   /* children left out */
    uint8_t expanded;         /* its children were grouped */
    uint8_t zombie;           /* its members are zombies */
} hp_dnode;
typedef struct hp_dtree {
    hp_dnode *nodes; size_t n, cap;   /* nodes: cap allocated (AL_K_HEAP) */
    uint64_t objects;         /* objects in the snapshot */
    uint64_t groups_seen;     /* nodes kept plus the groups the cuts left out */
    uint64_t unexpanded;      /* kept nodes that retain more than themselves
                                 but whose children were not grouped */
} hp_dtree;
/* 0, or -1 with ER_OOM (*out zeroed). */
int hp_dom_tree(hp_graph *g, size_t max_nodes, size_t max_kids, hp_dtree *out);
void hp_dtree_free(hp_dtree *t);   /* t zeroed; safe on a zeroed tree */

/* "64 B", "1.5 KiB", "3.2 MiB": bytes for people (DOT labels, pages). */
void hp_human_bytes(uint64_t b, char *buf, size_t n);

#endif
