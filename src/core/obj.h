/* obj.h - the object model: header, strong/weak counts, kinds, the registry,
 * weak callbacks and user attributes.
 *
 * Ownership follows c10's intrusive_ptr:
 *   - strong count reaches 0 -> the object *dies*: it leaves the live
 *     registry, every weak callback registered on it runs (in registration
 *     order; see obj_config), then its type's release() drops what it owns;
 *   - once strong == 0 and weak == 0, its memory is freed.
 * So a weak holder (a weak table key, a weak handle) keeps a dead object's
 * header readable (`obj_expired(o)` is "strong == 0") but not what it owned.
 *
 * Deaths never recurse on the C stack: obj_decref pushes a dying object on a
 * worklist and the outermost call drains it, so releasing a million-long
 * chain uses O(1) stack. Callbacks may drop other objects; those deaths are
 * queued on the same worklist.
 *
 *   obj *o = obj_new(&my_type, sizeof(my_struct));   // strong 1, weak 0
 *   obj_incref(o); obj_decref(o); obj_decref(o);     // dies, then freed
 */
#ifndef FAKEGC_OBJ_H
#define FAKEGC_OBJ_H

#include <stddef.h>
#include <stdint.h>

typedef enum obj_kind {
    OBJ_STORAGE = 0,
    OBJ_TENSOR,          /* every tensor flavour: real, meta, sparse, fake */
    OBJ_FAKE_MODE,
    OBJ_FAKE_CONVERTER,  /* FakeTensorConverter */
    OBJ_META_CONVERTER,  /* MetaConverter */
    OBJ_FINALIZER,       /* weakref.finalize */
    OBJ_WEAKREF,         /* weak handle (weakref.ref, StorageWeakRef) */
    OBJ_GENERIC,         /* test nodes, stress-model helpers */
    OBJ_KIND_COUNT
} obj_kind;

typedef struct obj obj;
typedef struct obj_type obj_type;
typedef struct obj_cb obj_cb;
typedef struct obj_attr obj_attr;

/* What an edge is, for reports and census (obj_type.edge_role): the layer
 * that owns a field says so, so heap analysis and scenario code need not
 * know its labels. */
typedef enum obj_role {
    OBJ_ROLE_PLAIN = 0,
    OBJ_ROLE_TENSOR_MEMO,    /* an entry (key or value) of a tensor memo */
    OBJ_ROLE_STORAGE_MEMO,   /* an entry of a storage memo */
    OBJ_ROLE_PENDING         /* a dead storage's header on a pending list */
} obj_role;

/* Edge visitor: `child` is a strong reference held by the object being
 * traversed; `label` names the field ("storage", "base", "grad", "attr:x",
 * "tensor_memo"), `index` is a slot number or -1. */
typedef void (*obj_visit_fn)(obj *child, const char *label, long index,
                             void *arg);

struct obj_type {
    const char *name;   /* "storage", "tensor", "FakeTensorMode", ... */
    obj_kind kind;
    /* Visit every strong reference this object holds, except user
     * attributes (the core visits those itself). May be NULL (no edges). */
    void (*traverse)(obj *self, obj_visit_fn visit, void *arg);
    /* Visit weak references (weak memo keys/values) for reports only; may
     * be NULL. Same visitor shape; the collector never calls it. */
    void (*traverse_weak)(obj *self, obj_visit_fn visit, void *arg);
    /* Drop every strong reference (obj_decref / obj_clear_ref) and free every
     * owned buffer. Idempotent: the collector calls it on cyclic garbage
     * while the object is still alive, and death calls it again. After it,
     * traverse must visit nothing. May be NULL. */
    void (*release)(obj *self);
    /* Bytes this object owns outside its header allocation (data bytes,
     * arrays, table memory), for reports. May be NULL (0). */
    uint64_t (*owned_bytes)(const obj *self);
    /* Short description for reports ("f32[4, 4] cpu"); may be NULL. Writes
     * at most n bytes including the NUL. */
    void (*describe)(const obj *self, char *buf, size_t n);
    /* The role of this object's edges labelled `label` (as its traverse or
     * traverse_weak passes them); may be NULL (every edge OBJ_ROLE_PLAIN). */
    obj_role (*edge_role)(const obj *self, const char *label);
    /* Where objects of this type get their memory: NULL for al_malloc, or
     * an array of npools pools (npools 0 reads as 1), each of blocks of one
     * size (records made and dropped by the thousand, e.g. finalizers, and
     * tensors sized to their rank). An object whose size is a pool's comes
     * from that pool, any other from al_malloc. Same counters and same
     * checker view either way (alloc/al.h). */
    struct al_pool *pool;
    unsigned npools;
    /* Just before the object's memory goes (it is dead, released, and no
     * weak holder is left): free what release had to keep because a
     * zombie still shows it (a tensor's dims past its inline array). May be
     * NULL. */
    void (*dispose)(obj *self);
    /* The collector's traverse (CPython's tp_traverse, which need not visit
     * every reference an object holds: PyTorch's does not visit a tensor's
     * base held from C++): NULL, the collector runs traverse. It visits a
     * subset of traverse's edges; gc_hidden visits the rest (both NULL, or
     * both set). A reference the collector does not see is never
     * subtracted, so its target reads as held from outside while its holder
     * lives, and so does everything the target reaches. Reports, paths and
     * census run traverse: the edge is a strong reference like any other. */
    void (*gc_traverse)(obj *self, obj_visit_fn visit, void *arg);
    void (*gc_hidden)(obj *self, obj_visit_fn visit, void *arg);
    /* How the program spells an attribute of this object in a holder path,
     * folded into the hop before it: "graph node " for an fx GraphModule,
     * whose attributes are its nodes' meta["val"], so a path reads
     * "COMPILED[0].graph node mm", not "COMPILED[0] -> GraphModule#4.attr:mm".
     * NULL: the hop is "TYPE#id.attr:NAME". */
    const char *attr_spelling;
};

/* The prefix of an attribute edge's label ("attr:NAME"). */
#define OBJ_ATTR_LABEL "attr:"
enum { OBJ_ATTR_LABEL_LEN = sizeof OBJ_ATTR_LABEL - 1 };


/* Where an object was made: scenario FILE:LINE, or a C function name with
 * line 0. `file` must outlive the object (interned by the caller). */
typedef struct obj_site {
    const char *file;
    uint32_t line;
} obj_site;

/* A weak callback registration, embedded in whatever owns it (a weak handle,
 * a finalizer, a weak-table entry). `fn` runs once when the target dies,
 * after every weak reference to the target reads as expired and before the
 * target releases what it owns. The registration is already unlinked when
 * fn runs. A registration whose owner has died (strong 0) by the time its
 * turn comes is withdrawn without running. fn may drop objects (including the target's other weak holders
 * and the owner of this registration). With obj_config.defer_callbacks the
 * call happens at the next obj_safepoint() and `dying` is NULL (its memory
 * may be gone: that is the point of the knob). */
struct obj_cb {
    obj_cb *next, *prev;     /* circular list on the target; managed by obj.c */
    obj *target;             /* NULL when not registered */
    void (*fn)(obj_cb *cb, obj *dying);
    obj *owner;              /* the object this registration lives in, or
                                NULL; the collector skips callbacks whose
                                owner is itself garbage. The owner's
                                release must unregister it. */
};

/* One cache line (64 bytes on LP64): the collector's passes, the
 * snapshot and every registry walk stream headers, so what few objects
 * have lives outside: user attributes in a side table (OBJ_F_ATTRS), the
 * site as an index into a table of interned sites. */
struct obj {
    const obj_type *type;
    uint64_t id;             /* never reused in a process, starts at 1 */
    uint32_t strong, weak;   /* the collector reads strong as at most
                                INT32_MAX (see gc_refs) */
    uint32_t size;           /* bytes of this allocation (for al_free) */
    uint32_t flags;          /* OBJ_F_* */
    uint32_t site;           /* interned creation site: obj_site_of(o); two
                                objects share a site iff these are equal */
    int32_t gc_refs;         /* collector scratch (2^31 references to one
                                object would be 16 GB of pointers) */
    obj *prev, *next;        /* registry list (live or zombie) / worklists */
    obj_cb *callbacks;       /* weak callback registrations on this object */
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct obj) == 64, "obj header is one line");

/* o's edge_role for label, OBJ_ROLE_PLAIN when o's type has none. */
static inline obj_role obj_edge_role(const obj *o, const char *label)
{
    return o && label && o->type->edge_role ? o->type->edge_role(o, label) : OBJ_ROLE_PLAIN;
}

enum {
    OBJ_F_DEAD = 1u << 0,      /* strong reached 0; released or releasing */
    OBJ_F_QUEUED = 1u << 1,    /* on the death worklist or being processed:
                                  weak 0 does not free it yet */
    OBJ_F_GC_MARK = 1u << 2,   /* collector: off the live list, held by gc */
    OBJ_F_GC_REFS = 1u << 3,   /* collector: gc_refs initialised this run */
    OBJ_F_FINALIZING = 1u << 4,/* dead, its weak callbacks running, and
                                  obj_config.weak_clear_late is on */
    OBJ_F_GC_LATE = 1u << 5,   /* collector: a newer object holds it */
    OBJ_F_GC_FAR = 1u << 6,    /* collector: one of them much newer */
    OBJ_F_ATTRS = 1u << 7,     /* has user attributes (in the side table) */
    OBJ_F_OWNERLESS = 1u << 8, /* one of its strong references is owned by no
                                  holder on purpose: a leak the model models
                                  (1.13.1's _fix_weakref); hp_verify counts it */
    OBJ_F_USER1 = 1u << 9      /* first bit free for kinds */
};

/* Allocate a zeroed object of `size` bytes (>= sizeof(obj)) with strong 1,
 * weak 0, a fresh id, the current site, and put it in the live registry.
 * NULL (with ER_OOM set) when the allocator fails. */
obj *obj_new(const obj_type *type, size_t size);

/* The last reference (or a decref of a dead object, an ER_INTERNAL error):
 * obj_decref's out-of-line half; call obj_decref instead. */
void obj_decref_slow(obj *o);
/* Called (when set) with "use-after-free: decref of dead T #N" when a dead
 * object is decref'd, before ER_USE_AFTER_FREE is set: a worker process
 * records the finding and exits there, as the heap cannot be trusted after
 * it. NULL removes it. */
void obj_set_dead_decref_hook(void (*hook)(const char *what));
/* A dead object was used (`how`: "decref", "reached by the collector"):
 * the hook above, then ER_USE_AFTER_FREE. */
void obj_report_dead_use(const obj *o, const char *how);
/* on: obj_report_dead_use also hands the finding to memcheck (when running
 * under it) as an error with a backtrace - `fakegc run` turns it on; unit
 * tests that provoke a dead use on purpose leave it off. */
void obj_set_memcheck_findings(int on);

/* Inline: the counts are the hottest path of every module. */
static inline void obj_incref(obj *o)    /* o may be NULL */
{
    if (o)
        o->strong++;
}

static inline void obj_decref(obj *o)    /* o may be NULL; may kill o */
{
    if (!o)
        return;
    if (o->strong > 1)
        o->strong--;
    else
        obj_decref_slow(o);
}
void obj_weak_incref(obj *o);
void obj_weak_decref(obj *o);            /* may free a dead header */
static inline int obj_expired(const obj *o) { return o->strong == 0; }

/* Replace *slot (a strong reference field) with v (increfs v, decrefs the
 * old value). Inline, as the counts are: every release clears its fields. */
static inline void obj_set_ref(obj **slot, obj *v)
{
    obj_incref(v);
    obj *old = *slot;
    *slot = v;
    obj_decref(old);
}
/* *slot = NULL, then decref the old value (safe if the decref re-enters). */
static inline void obj_clear_ref(obj **slot)
{
    obj *old = *slot;
    *slot = NULL;
    obj_decref(old);
}

/* --- sites -------------------------------------------------------------- */
/* The current site: what objects made from now on record. Interning it
 * is left to the next obj_new, which fails with ER_OOM when the site table
 * cannot grow (the table is scratch memory, scr.h: no heap block). */
void obj_set_site(const char *file, uint32_t line);
obj_site obj_current_site(void);
obj_site obj_site_of(const obj *o);                  /* where o was made */

/* --- weak callbacks ----------------------------------------------------- */
/* Register cb on target (must be alive). cb->fn and cb->owner set by the
 * caller; cb must be zeroed or unregistered (a registered or deferred cb is
 * moved). Returns 0, or -1 with ER_DEAD_REF when target is dead. */
int obj_cb_register(obj *target, obj_cb *cb);
/* Unlink cb from its target, or from the deferred queue when its call is
 * pending (so an owner that dies before obj_safepoint() is never called
 * back). No-op when not registered. */
void obj_cb_unregister(obj_cb *cb);

/* --- user attributes ---------------------------------------------------- */
/* Set attribute `name` of o to v (strong; v NULL removes it). Returns 0 or
 * -1 with ER_OOM (o unchanged) or ER_DEAD_REF (o is dead). The name is
 * copied. Attributes keep insertion order; o dying drops them after the
 * type's release. */
int obj_attr_set(obj *o, const char *name, obj *v);
obj *obj_attr_get(const obj *o, const char *name);   /* borrowed, or NULL */
size_t obj_attr_count(const obj *o);

/* Visit every strong edge of o: the type's traverse, then attributes
 * (labelled "attr:NAME"). */
void obj_traverse(obj *o, obj_visit_fn visit, void *arg);
/* The edges the collector sees: the type's gc_traverse (else traverse),
 * then attributes. */
void obj_gc_traverse(obj *o, obj_visit_fn visit, void *arg);

/* Header bytes + owned bytes: what freeing o alone would return. */
uint64_t obj_self_bytes(const obj *o);

/* --- registry ----------------------------------------------------------- */
/* Live objects (strong > 0) in creation order; zombies (dead, weak > 0) in a
 * second list, in order of death. Iterate with obj_live_first /
 * obj_zombie_first and obj_iter_next (do not kill objects while
 * iterating). */
obj *obj_live_first(void);
obj *obj_live_last(void);        /* the newest; walk back with obj_iter_prev */
obj *obj_zombie_first(void);
static inline obj *obj_iter_next(const obj *o) { return o->next; }
static inline obj *obj_iter_prev(const obj *o) { return o->prev; }
/* Call fn(o, i, arg) for each of the n objects of a registry list from
 * first to last (o its i-th, 0-based), walking from both ends at once: a
 * list walk is a dependent load per object, and a heap whose list order
 * is not its address order (a leak's survivors) then has two misses in
 * flight. fn runs in no particular order and must not change the list.
 * 0, or -1 when the list is not n long (fn has then run for some). */
static inline int obj_walk_both(obj *first, obj *last, size_t n,
                                void (*fn)(obj *o, size_t i, void *arg), void *arg)
{
    size_t lo = 0, hi = n;
    obj *a = first, *b = last;
    while (hi - lo >= 2) {
        if (!a || !b || a == b)
            return -1;
        /* the links first (fn leaves them alone): the next loads of both
         * walks are then in flight while fn works, inlined or not */
        obj *an = a->next, *bp = b->prev;
        fn(a, lo++, arg);
        fn(b, --hi, arg);
        a = an;
        b = bp;
    }
    if (hi > lo) {                   /* odd: the walks meet on one object */
        if (!a || a != b)
            return -1;
        fn(a, lo, arg);
        return 0;
    }
    if (n == 0)
        return first || last ? -1 : 0;
    return a && b && a->prev == b && b->next == a ? 0 : -1;   /* they met */
}
/* The id the next object made will get (ids only grow until obj_leftover
 * renumbers an empty registry): objects made after this call have ids >= it. */
uint64_t obj_next_id(void);
uint64_t obj_live_count(void);   /* the list's length + collector-held */
uint64_t obj_live_count_kind(obj_kind k);
uint64_t obj_zombie_count(void);
/* Length of the live list alone (what obj_live_first reaches): O(1), where
 * walking the list to count it is a dependent load per object. */
uint64_t obj_live_listed(void);
/* Force every live object and zombie out, whatever its counts say (a
 * scenario's teardown after a bug leaked counts, callbacks or weak counts):
 * every live object is held and its callbacks withdrawn; each releases what
 * it owns while all are held (nothing dies half-way); each count is forced
 * to 1 and dropped; zombies' weak counts are forced to 1 and dropped.
 * Returns how many objects were forced. Collect first for the quiet cases. */
uint64_t obj_reclaim_all(void);
const char *obj_kind_name(obj_kind k);   /* "storage", "tensor", ... */

/* --- ordering knobs (stress mode explores these) ------------------------- */
typedef struct obj_config {
    int callbacks_reverse;   /* run weak callbacks newest registration first */
    int defer_callbacks;     /* queue callbacks; run them at obj_safepoint() */
    int weak_clear_late;     /* weak handles (wr_get) still read a dying
                                object while its callbacks run, and read as
                                cleared only after them (the order of Java's
                                and .NET's long weak references); default:
                                cleared before any callback (CPython) */
} obj_config;
void obj_configure(const obj_config *cfg);
obj_config obj_get_config(void);
/* Run deferred callbacks (and drain deaths they cause). The interpreter
 * calls it between statements. Returns the number of callbacks run; 0 when
 * called from inside a callback or a death. */
size_t obj_safepoint(void);
size_t obj_deferred_count(void);        /* callbacks waiting for it */
uint64_t obj_death_count(void);         /* deaths since process start */

/* Check registry invariants (counts by kind, list links, flags). Returns 0,
 * or -1 writing the first broken invariant to why. */
int obj_verify(char *why, size_t n);

/* Check that nothing is alive (test helper): returns the number of objects
 * still live or zombie. Only when that is 0 is the id counter reset to 1
 * (no header that could carry an old id is left). */
uint64_t obj_leftover(void);

#endif
