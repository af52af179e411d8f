/* obj_side.c - what lives beside the object header (obj.h): creation sites
 * and user attributes. The header is one cache line; these are too rare,
 * or too repetitive, to be in it.
 *
 * Sites. A scenario makes its objects at as many sites as it has lines, so
 * each (file, line) is interned once and an object records its index. The
 * table only grows; obj_new interns the current site the first time it is
 * used.
 *
 * Attributes. Few objects have any: an object with OBJ_F_ATTRS has its
 * record in a map from object to record (linear probing, at most half
 * full, deletion by backward shift, so no tombstones), which it leaves
 * when its last attribute goes or it is released.
 *
 * Both tables are scratch memory (scr.h), not heap blocks: no allocator
 * counter, fault point or memory checker sees them, so the model's
 * allocations are the same as when these fields were in the header. They
 * grow by copying into a second mapping; a mapping that fails is ER_OOM
 * from the operation that needed the room (obj_new, obj_attr_set).
 */
#include <string.h>

#include "alloc/al.h"
#include "er.h"
#include "obj_int.h"
#include "scr.h"

/* --- sites ------------------------------------------------------------------ */

enum { SITE_NONE = OBJ_INT_SITE_NONE, SITE_CAP0 = 64 };

/* v[cap] then h[2 cap]: positions in v + 1 (0 empty), linear probing. */
static struct {
    scr mem;
    obj_site *v;
    uint32_t *h;
    uint32_t n, cap;
} sites;
static obj_site cur_site = {"<c>", 0};
uint32_t obj_int_cur_site = SITE_NONE;   /* cur_site's index once interned */

static size_t site_home(obj_site s, size_t mask)
{
    uint64_t x = ((uint64_t)(uintptr_t)s.file + s.line * 0x9E3779B97F4A7C15ULL) *
                 0xFF51AFD7ED558CCDULL;
    return (size_t)(x ^ (x >> 32)) & mask;
}

static void site_index(const obj_site *v, uint32_t *h, uint32_t n, size_t mask)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t j = site_home(v[i], mask);
        while (h[j])
            j = (j + 1) & mask;
        h[j] = i + 1;
    }
}

/* Twice the room (a fresh mapping is zero): 0, or -1. */
static int site_grow(void)
{
    if (sites.cap >= UINT32_MAX / 4)
        return -1;
    uint32_t cap = sites.cap ? sites.cap * 2 : SITE_CAP0;
    size_t vbytes = (size_t)cap * sizeof(obj_site);
    scr mem = {0};
    char *p = scr_reserve(&mem, vbytes + 2 * (size_t)cap * sizeof(uint32_t));
    if (!p)
        return -1;
    obj_site *v = (obj_site *)(void *)p;
    uint32_t *h = (uint32_t *)(void *)(p + vbytes);
    if (sites.n)
        memcpy(v, sites.v, sites.n * sizeof *v);
    site_index(v, h, sites.n, 2 * (size_t)cap - 1);
    scr_release(&sites.mem);
    sites.mem = mem;
    sites.v = v;
    sites.h = h;
    sites.cap = cap;
    return 0;
}

static int site_intern(void)
{
    if (sites.n == sites.cap && site_grow() != 0)
        return -1;
    size_t mask = 2 * (size_t)sites.cap - 1;
    for (size_t j = site_home(cur_site, mask);; j = (j + 1) & mask) {
        uint32_t e = sites.h[j];
        if (!e) {
            sites.v[sites.n] = cur_site;
            sites.h[j] = ++sites.n;
            obj_int_cur_site = sites.n - 1;
            return 0;
        }
        if (sites.v[e - 1].file == cur_site.file && sites.v[e - 1].line == cur_site.line) {
            obj_int_cur_site = e - 1;
            return 0;
        }
    }
}

uint32_t obj_int_site_intern(void)
{
    return site_intern() == 0 ? obj_int_cur_site : SITE_NONE;
}

void obj_set_site(const char *file, uint32_t line)
{
    if (file == cur_site.file && line == cur_site.line)
        return;
    cur_site.file = file;
    cur_site.line = line;
    obj_int_cur_site = SITE_NONE;
}

obj_site obj_current_site(void) { return cur_site; }

uint32_t obj_int_site_count(void) { return sites.n; }

obj_site obj_site_of(const obj *o)
{
    return o->site < sites.n ? sites.v[o->site] : (obj_site){"?", 0};
}

/* --- the attribute map ---------------------------------------------------- */

typedef struct attr_slot {
    char *label;       /* "attr:NAME"; the name is label + 5 */
    obj *value;        /* strong */
} attr_slot;

struct obj_attr {
    uint32_t count, cap;
    attr_slot slot[];
};

enum { ATTR_PREFIX_LEN = OBJ_ATTR_LABEL_LEN, AMAP_CAP0 = 256 };

typedef struct amap_slot {
    const obj *key;    /* NULL: empty */
    obj_attr *a;
} amap_slot;

static struct {
    scr mem;
    amap_slot *s;
    size_t cap, n;     /* cap a power of two, n <= cap / 2 */
} amap;

static size_t amap_home(const obj *o, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)o * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 29) & mask;
}

/* o's slot, or the empty one where it would go (cap > 0). */
static size_t amap_find(const obj *o)
{
    size_t mask = amap.cap - 1, j = amap_home(o, mask);
    while (amap.s[j].key && amap.s[j].key != o)
        j = (j + 1) & mask;
    return j;
}

static obj_attr *attrs_of(const obj *o)
{
    return o->flags & OBJ_F_ATTRS ? amap.s[amap_find(o)].a : NULL;
}

/* Room for one more object: 0, or -1 (the map unchanged). */
static int amap_reserve(void)
{
    if (2 * (amap.n + 1) <= amap.cap)
        return 0;
    size_t cap = amap.cap ? amap.cap * 2 : AMAP_CAP0, mask = cap - 1;
    scr mem = {0};
    amap_slot *s = scr_reserve(&mem, cap * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < amap.cap; i++) {
        if (!amap.s[i].key)
            continue;
        size_t j = amap_home(amap.s[i].key, mask);
        while (s[j].key)
            j = (j + 1) & mask;
        s[j] = amap.s[i];
    }
    scr_release(&amap.mem);
    amap.mem = mem;
    amap.s = s;
    amap.cap = cap;
    return 0;
}

/* o's record is now a (after amap_reserve when o had none). */
static void amap_set(obj *o, obj_attr *a)
{
    size_t j = amap_find(o);
    if (!amap.s[j].key) {
        amap.s[j].key = o;
        amap.n++;
        o->flags |= OBJ_F_ATTRS;
    }
    amap.s[j].a = a;
}

/* o leaves the map; the entries after it move back into the hole unless
 * their home is after it. */
static void amap_del(obj *o)
{
    size_t mask = amap.cap - 1, i = amap_find(o);
    o->flags &= ~(uint32_t)OBJ_F_ATTRS;
    amap.s[i].key = NULL;
    amap.n--;
    for (size_t j = (i + 1) & mask; amap.s[j].key; j = (j + 1) & mask) {
        size_t home = amap_home(amap.s[j].key, mask);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            amap.s[i] = amap.s[j];
            amap.s[j].key = NULL;
            i = j;
        }
    }
}

size_t obj_int_attr_objects(void) { return amap.n; }

/* --- attributes ----------------------------------------------------------- */

static size_t attr_bytes(uint32_t cap)
{
    return sizeof(obj_attr) + (size_t)cap * sizeof(attr_slot);
}

static void label_free(char *label)
{
    al_free(label, strlen(label) + 1, AL_K_ATTR);
}

/* Detach o's attributes, then drop them (a decref may re-enter). */
void obj_int_attrs_clear(obj *o)
{
    obj_attr *a = attrs_of(o);
    if (!a)
        return;
    amap_del(o);
    for (uint32_t i = 0; i < a->count; i++) {
        obj *v = a->slot[i].value;
        label_free(a->slot[i].label);
        obj_decref(v);
    }
    al_free(a, attr_bytes(a->cap), AL_K_ATTR);
}

static long attr_find(const obj_attr *a, const char *name)
{
    if (!a)
        return -1;
    for (uint32_t i = 0; i < a->count; i++)
        if (strcmp(a->slot[i].label + ATTR_PREFIX_LEN, name) == 0)
            return (long)i;
    return -1;
}

/* Existing attribute i of o (record a) set to v, or removed when v is NULL. */
static int attr_replace(obj *o, obj_attr *a, long i, obj *v)
{
    obj *old = a->slot[i].value;
    if (v) {
        obj_incref(v);
        a->slot[i].value = v;
    } else {
        label_free(a->slot[i].label);
        memmove(&a->slot[i], &a->slot[i + 1], (a->count - (size_t)i - 1) * sizeof(attr_slot));
        if (--a->count == 0) {
            amap_del(o);
            al_free(a, attr_bytes(a->cap), AL_K_ATTR);
        }
    }
    obj_decref(old);     /* last: it may run callbacks that touch o */
    return 0;
}

/* A new attribute: a copy of the name, room in the record, room in the
 * map, in that order undone. */
static int attr_add(obj *o, obj_attr *a, const char *name, obj *v)
{
    if (!a && amap_reserve() != 0)
        return er_set(ER_OOM, "out of memory setting attribute '%s'", name);
    size_t nlen = strlen(name);
    char *label = al_malloc(nlen + ATTR_PREFIX_LEN + 1, AL_K_ATTR, "obj_attr_set");
    if (!label)
        return er_set(ER_OOM, "out of memory setting attribute '%s'", name);
    memcpy(label, OBJ_ATTR_LABEL, ATTR_PREFIX_LEN);
    memcpy(label + ATTR_PREFIX_LEN, name, nlen + 1);
    if (!a || a->count == a->cap) {
        uint32_t ncap = a ? a->cap * 2 : 2;
        obj_attr *na = al_realloc(a, a ? attr_bytes(a->cap) : 0, attr_bytes(ncap),
                                  AL_K_ATTR, "obj_attr_set");
        if (!na) {
            label_free(label);
            return er_set(ER_OOM, "out of memory setting attribute '%s'", name);
        }
        if (!a)
            na->count = 0;
        na->cap = ncap;
        amap_set(o, na);
        a = na;
    }
    a->slot[a->count].label = label;
    a->slot[a->count].value = v;
    a->count++;
    obj_incref(v);
    return 0;
}

int obj_attr_set(obj *o, const char *name, obj *v)
{
    if (!o || !name)
        return er_set(ER_INTERNAL, "obj_attr_set: NULL object or name");
    if (obj_expired(o))
        return er_set(ER_DEAD_REF, "cannot set attribute '%s' of a dead %s",
                      name, o->type->name);
    obj_attr *a = attrs_of(o);
    long i = attr_find(a, name);
    if (i >= 0)
        return attr_replace(o, a, i, v);
    return v ? attr_add(o, a, name, v) : 0;
}

obj *obj_attr_get(const obj *o, const char *name)
{
    const obj_attr *a = attrs_of(o);
    long i = attr_find(a, name);
    return i >= 0 ? a->slot[i].value : NULL;
}

size_t obj_attr_count(const obj *o)
{
    const obj_attr *a = attrs_of(o);
    return a ? a->count : 0;
}

void obj_int_attrs_traverse(obj *o, obj_visit_fn visit, void *arg)
{
    const obj_attr *a = attrs_of(o);
    if (a)
        for (uint32_t i = 0; i < a->count; i++)
            visit(a->slot[i].value, a->slot[i].label, -1, arg);
}

uint64_t obj_int_attrs_bytes(const obj *o)
{
    const obj_attr *a = attrs_of(o);
    if (!a)
        return 0;
    uint64_t n = attr_bytes(a->cap);
    for (uint32_t i = 0; i < a->count; i++)
        n += strlen(a->slot[i].label) + 1;
    return n;
}
