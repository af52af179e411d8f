/* wt.c - weak-keyed tables.
 *
 * Separate chaining: a power-of-two array of bucket heads, entries chained
 * through `next`, the bucket picked by Fibonacci hashing of the key id (or
 * of the key address in WT_KEY_ADDRESS mode). Each entry is one allocation;
 * its two obj_cb registrations (remove on key / value death) are only
 * allocated when the table has one of those flags.
 *
 * Re-entrancy: dropping an entry's references can kill objects whose
 * callbacks use this very table (or free it). Every operation that drops
 * references runs as one drain session, after the table is consistent, so
 * those deaths happen when the operation no longer touches the table.
 */
#include "wt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "er.h"
#include "obj_int.h"
#include "scr.h"

typedef struct wt_entry {
    struct wt_entry *next;
    obj *key;              /* header; in address mode possibly freed memory */
    uint64_t key_id;
    obj *value;
    wt_table *table;
    /* present only when table->flags != 0 */
    obj_cb key_cb;
    obj_cb val_cb;
} wt_entry;

struct wt_table {
    wt_entry **buckets;
    size_t nbuckets;       /* 0 or a power of two >= MIN_BUCKETS */
    size_t cap;            /* buckets allocated (>= nbuckets; shrinks lag) */
    unsigned shift;        /* 64 - log2(nbuckets) */
    size_t count;
    wt_key_mode km;
    wt_val_mode vm;
    unsigned flags;
    uint32_t entry_size;
    const char *label;
};

enum { MIN_BUCKETS = 8 };

/* Entries come from two pools (with and without the callback pair): a miss
 * makes three, a lifecycle drops them; same counters, checker view and
 * fault points as al_malloc (alloc/al.h). */
static al_pool entry_pool[2] = {
    AL_POOL_INIT(offsetof(wt_entry, key_cb), AL_K_MEMO),
    AL_POOL_INIT(sizeof(wt_entry), AL_K_MEMO),
};

static al_pool *pool_of(const wt_table *t) { return &entry_pool[t->flags != 0]; }

static const char *label_of(const wt_table *t) { return t->label ? t->label : "table"; }

/* --- hashing ------------------------------------------------------------ */

static size_t slot_of(const wt_table *t, uint64_t h)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> t->shift);
}

static uint64_t key_hash(const wt_table *t, const obj *key)
{
    return t->km == WT_KEY_ADDRESS ? (uint64_t)(uintptr_t)key : key->id;
}

static uint64_t entry_hash(const wt_table *t, const wt_entry *e)
{
    return t->km == WT_KEY_ADDRESS ? (uint64_t)(uintptr_t)e->key : e->key_id;
}

static int matches(const wt_table *t, const wt_entry *e, const obj *key)
{
    return t->km == WT_KEY_ADDRESS ? e->key == key : e->key_id == key->id;
}

static wt_entry *find(const wt_table *t, const obj *key)
{
    if (!t->nbuckets || !key)
        return NULL;
    wt_entry *e = t->buckets[slot_of(t, key_hash(t, key))];
    while (e && !matches(t, e, key))
        e = e->next;
    return e;
}

static wt_entry *find_id(const wt_table *t, uint64_t id)
{
    if (!t->nbuckets)
        return NULL;
    if (t->km != WT_KEY_ADDRESS) {
        wt_entry *e = t->buckets[slot_of(t, id)];
        while (e && e->key_id != id)
            e = e->next;
        return e;
    }
    for (size_t b = 0; b < t->nbuckets; b++)
        for (wt_entry *e = t->buckets[b]; e; e = e->next)
            if (e->key_id == id)
                return e;
    return NULL;
}

static unsigned log2_of(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

/* Rehash into n buckets. -1 (nothing changed) when the array cannot be had. */
static int resize(wt_table *t, size_t n)
{
    wt_entry **nb = al_calloc(n, sizeof *nb, AL_K_MEMO, label_of(t));
    if (!nb)
        return -1;
    unsigned shift = 64 - log2_of(n);
    wt_table tmp = *t;
    tmp.shift = shift;
    for (size_t b = 0; b < t->nbuckets; b++) {
        wt_entry *e = t->buckets[b];
        while (e) {
            wt_entry *next = e->next;
            size_t s = slot_of(&tmp, entry_hash(t, e));
            e->next = nb[s];
            nb[s] = e;
            e = next;
        }
    }
    al_free(t->buckets, t->cap * sizeof *nb, AL_K_MEMO);
    t->buckets = nb;
    t->nbuckets = n;
    t->cap = n;
    t->shift = shift;
    return 0;
}

/* --- references held by entries -------------------------------------------- */

static void hold_key(const wt_table *t, obj *k)
{
    if (t->km == WT_KEY_WEAK)
        obj_weak_incref(k);
    else if (t->km == WT_KEY_STRONG)
        obj_incref(k);
}

static void drop_key(wt_key_mode km, obj *k)
{
    if (km == WT_KEY_WEAK)
        obj_weak_decref(k);
    else if (km == WT_KEY_STRONG)
        obj_decref(k);
}

static void hold_value(const wt_table *t, obj *v)
{
    if (t->vm == WT_VAL_WEAK)
        obj_weak_incref(v);
    else
        obj_incref(v);
}

static void drop_value(wt_val_mode vm, obj *v)
{
    if (vm == WT_VAL_WEAK)
        obj_weak_decref(v);
    else
        obj_decref(v);
}

/* Free an entry already unlinked from the table and drop its references.
 * Touches only the modes of t, read before any reference is dropped. */
static void entry_drop(wt_table *t, wt_entry *e)
{
    wt_key_mode km = t->km;
    wt_val_mode vm = t->vm;
    if (t->flags) {
        obj_cb_unregister(&e->key_cb);
        obj_cb_unregister(&e->val_cb);
    }
    obj *k = e->key, *v = e->value;
    al_pool_put(pool_of(t), e);
    drop_value(vm, v);
    drop_key(km, k);
}

/* Halve the bucket count in place: with Fibonacci hashing the slot of a key
 * in n/2 buckets is its slot in n buckets shifted right by one, so buckets
 * 2i and 2i+1 become bucket i by concatenating two chains. No entry is
 * rehashed and nothing is allocated, so a burst of removes costs no
 * allocator calls (a calloc per halving used to make glibc consolidate
 * every entry freed since the last one: 20x the 1k cost at 1M entries). */
static void halve_in_place(wt_table *t)
{
    size_t n = t->nbuckets / 2;
    wt_entry **b = t->buckets;
    for (size_t i = 0; i < n; i++) {
        wt_entry *a = b[2 * i], *c = b[2 * i + 1];
        if (a && c) {
            wt_entry *tail = a;
            while (tail->next)
                tail = tail->next;
            tail->next = c;
        }
        b[i] = a ? a : c;
    }
    t->nbuckets = n;
    t->shift++;
}

/* Shrink at load 1/8 (in place), and give the array's memory back once it
 * is 8 times what is used: one realloc per factor of 8, not per halving. */
static void maybe_shrink(wt_table *t)
{
    if (t->nbuckets <= MIN_BUCKETS || t->count >= t->nbuckets / 8)
        return;
    halve_in_place(t);
    if (t->nbuckets * 8 <= t->cap) {
        wt_entry **nb = al_realloc(t->buckets, t->cap * sizeof *nb,
                                   t->nbuckets * sizeof *nb, AL_K_MEMO, label_of(t));
        if (nb) {                       /* a failed shrink keeps the bigger array */
            t->buckets = nb;
            t->cap = t->nbuckets;
        }
    }
}

/* Unlink e, shrink if due, drop it; one drain session. */
static void entry_remove(wt_table *t, wt_entry *e)
{
    int prev = obj_int_drain_enter();
    wt_entry **link = &t->buckets[slot_of(t, entry_hash(t, e))];
    while (*link != e)
        link = &(*link)->next;
    *link = e->next;
    t->count--;
    maybe_shrink(t);
    entry_drop(t, e);
    obj_int_drain_exit(prev);
}

static wt_entry *entry_of_key_cb(obj_cb *cb)
{
    return (wt_entry *)(void *)((char *)cb - offsetof(wt_entry, key_cb));
}

static wt_entry *entry_of_val_cb(obj_cb *cb)
{
    return (wt_entry *)(void *)((char *)cb - offsetof(wt_entry, val_cb));
}

static void key_died(obj_cb *cb, obj *dying)
{
    (void)dying;
    wt_entry *e = entry_of_key_cb(cb);
    entry_remove(e->table, e);
}

static void value_died(obj_cb *cb, obj *dying)
{
    (void)dying;
    wt_entry *e = entry_of_val_cb(cb);
    entry_remove(e->table, e);
}

/* --- the table ------------------------------------------------------------- */

wt_table *wt_new(wt_key_mode km, wt_val_mode vm, unsigned flags, const char *label)
{
    wt_table *t = al_malloc(sizeof *t, AL_K_MEMO, label ? label : "wt_new");
    if (!t) {
        er_set(ER_OOM, "out of memory creating table %s", label ? label : "");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->km = km;
    t->vm = vm;
    t->flags = flags & (WT_REMOVE_ON_KEY_DEATH | WT_REMOVE_ON_VALUE_DEATH);
    t->entry_size = (uint32_t)(t->flags ? sizeof(wt_entry) : offsetof(wt_entry, key_cb));
    t->label = label;
    return t;
}

/* wt_clear drops the entries in key-id order. Ids follow allocation
 * order, so the objects the entries hold then die, and are freed, about in
 * the order they were made: glibc frees each next to the chunk it freed
 * last. In bucket (hash) order every free consolidated with cold
 * neighbours: glibc's unlink_chunk was 21% of a 1M-entry teardown. The
 * sort is an LSD radix sort of (id, entry) pairs in scratch memory (scr.h:
 * no allocation), 11 bits a pass; without scratch, bucket order. */
typedef struct id_entry {
    uint64_t id;
    wt_entry *e;
} id_entry;

enum { RADIX_BITS = 11, RADIX = 1 << RADIX_BITS, AHEAD = 8 };
static scr order_scr;

/* The entries as pairs, ids made relative to the lowest; *bits: the bits
 * the relative ids need. */
static size_t gather(const wt_table *t, id_entry *v, unsigned *bits)
{
    size_t n = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t b = 0; b < t->nbuckets; b++) {
        if (b + AHEAD < t->nbuckets && t->buckets[b + AHEAD])
            __builtin_prefetch(t->buckets[b + AHEAD]);
        for (wt_entry *e = t->buckets[b]; e; e = e->next) {
            v[n].id = e->key_id;
            v[n++].e = e;
            lo = e->key_id < lo ? e->key_id : lo;
            hi = e->key_id > hi ? e->key_id : hi;
        }
    }
    for (size_t i = 0; i < n; i++)
        v[i].id -= lo;
    *bits = 0;
    while (*bits < 64 && (hi - lo) >> *bits)
        (*bits)++;
    return n;
}

/* Sort v (n pairs) by id with tmp as the second buffer; returns the buffer
 * that holds the result. */
static id_entry *radix_sort(id_entry *v, id_entry *tmp, size_t n, unsigned bits)
{
    static size_t count[RADIX];
    for (unsigned shift = 0; shift < bits; shift += RADIX_BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(v[i].id >> shift) & (RADIX - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i].id >> shift) & (RADIX - 1)]++] = v[i];
        id_entry *x = v;
        v = tmp;
        tmp = x;
    }
    return v;
}

static void forget_buckets(wt_table *t)
{
    al_free(t->buckets, t->cap * sizeof *t->buckets, AL_K_MEMO);
    t->buckets = NULL;
    t->nbuckets = 0;
    t->cap = 0;
    t->count = 0;
}

/* Without scratch: bucket order, through the entries' own links. */
static void clear_unsorted(wt_table *t)
{
    wt_entry *all = NULL;
    for (size_t b = 0; b < t->nbuckets; b++) {
        wt_entry *e = t->buckets[b];
        while (e) {
            wt_entry *next = e->next;
            e->next = all;
            all = e;
            e = next;
        }
    }
    forget_buckets(t);
    while (all) {
        wt_entry *next = all->next;
        entry_drop(t, all);
        all = next;
    }
}

void wt_clear(wt_table *t)
{
    if (!t)
        return;
    int prev = obj_int_drain_enter();
    size_t n = t->count;
    id_entry *v = n > 1 ? scr_reserve(&order_scr, 2 * n * sizeof *v) : NULL;
    if (!v) {
        clear_unsorted(t);
    } else {
        unsigned bits;
        n = gather(t, v, &bits);
        forget_buckets(t);
        v = radix_sort(v, v + n, n, bits);
        for (size_t i = 0; i < n; i++) {
            if (i + AHEAD < n)
                __builtin_prefetch(v[i + AHEAD].e);
            entry_drop(t, v[i].e);
        }
    }
    obj_int_drain_exit(prev);
}

void wt_free(wt_table *t)
{
    if (!t)
        return;
    int prev = obj_int_drain_enter();
    wt_clear(t);
    al_free(t, sizeof *t, AL_K_MEMO);
    obj_int_drain_exit(prev);
}

/* Give an address-mode entry to a new object at the same address. */
static void take_over_key(wt_table *t, wt_entry *e, obj *key)
{
    if (t->flags)
        obj_cb_unregister(&e->key_cb);
    e->key = key;
    e->key_id = key->id;
    if (t->flags & WT_REMOVE_ON_KEY_DEATH)
        obj_cb_register(key, &e->key_cb);
}

static void replace_value(wt_table *t, wt_entry *e, obj *value)
{
    if (e->value == value)
        return;
    int prev = obj_int_drain_enter();
    hold_value(t, value);
    obj *old = e->value;
    e->value = value;
    if (t->flags & WT_REMOVE_ON_VALUE_DEATH)
        obj_cb_register(value, &e->val_cb);      /* moves the registration */
    drop_value(t->vm, old);
    obj_int_drain_exit(prev);
}

int wt_put(wt_table *t, obj *key, obj *value)
{
    if (!t || !key || !value)
        return er_set(ER_TYPE, "wt_put: NULL table, key or value");
    if (obj_expired(key) || obj_expired(value))
        return er_set(ER_DEAD_REF, "%s: put with a dead %s", label_of(t),
                      obj_expired(key) ? "key" : "value");
    wt_entry *e = find(t, key);
    if (e) {
        if (e->key_id != key->id)
            take_over_key(t, e, key);
        replace_value(t, e, value);
        return 0;
    }
    e = al_pool_get(pool_of(t), label_of(t));
    if (!e)
        return er_set(ER_OOM, "out of memory inserting into %s", label_of(t));
    if (t->count + 1 > t->nbuckets &&
        resize(t, t->nbuckets ? t->nbuckets * 2 : MIN_BUCKETS) != 0 && !t->nbuckets) {
        al_pool_put(pool_of(t), e);
        return er_set(ER_OOM, "out of memory inserting into %s", label_of(t));
    }
    /* every field of a plain entry is written below; only the callback
     * pair needs zeroing */
    if (t->flags) {
        memset(&e->key_cb, 0, sizeof e->key_cb);
        memset(&e->val_cb, 0, sizeof e->val_cb);
    }
    e->key = key;
    e->key_id = key->id;
    e->value = value;
    e->table = t;
    hold_key(t, key);
    hold_value(t, value);
    if (t->flags & WT_REMOVE_ON_KEY_DEATH) {
        e->key_cb.fn = key_died;
        obj_cb_register(key, &e->key_cb);
    }
    if (t->flags & WT_REMOVE_ON_VALUE_DEATH) {
        e->val_cb.fn = value_died;
        obj_cb_register(value, &e->val_cb);
    }
    size_t s = slot_of(t, key_hash(t, key));
    e->next = t->buckets[s];
    t->buckets[s] = e;
    t->count++;
    return 0;
}

static obj *value_of(const wt_table *t, const wt_entry *e)
{
    if (!e)
        return NULL;
    if (t->vm == WT_VAL_WEAK && obj_expired(e->value))
        return NULL;
    return e->value;
}

obj *wt_get(wt_table *t, const obj *key) { return value_of(t, find(t, key)); }

obj *wt_lookup(wt_table *t, const obj *key, uint64_t *stored_id)
{
    wt_entry *e = find(t, key);
    if (stored_id)
        *stored_id = e ? e->key_id : 0;
    return value_of(t, e);
}

obj *wt_get_id(wt_table *t, uint64_t key_id) { return value_of(t, find_id(t, key_id)); }

int wt_remove(wt_table *t, const obj *key)
{
    wt_entry *e = find(t, key);
    if (!e)
        return 0;
    entry_remove(t, e);
    return 1;
}

int wt_remove_id(wt_table *t, uint64_t key_id)
{
    wt_entry *e = find_id(t, key_id);
    if (!e)
        return 0;
    entry_remove(t, e);
    return 1;
}

size_t wt_count(const wt_table *t) { return t->count; }
size_t wt_buckets(const wt_table *t) { return t->nbuckets; }

size_t wt_stale(const wt_table *t)
{
    size_t stale = 0;
    if (t->km == WT_KEY_ADDRESS) {
        size_t fresh = 0;
        for (const obj *o = obj_live_first(); o; o = obj_iter_next(o)) {
            const wt_entry *e = find(t, o);
            if (e && e->key_id == o->id)
                fresh++;
        }
        return t->count - fresh;
    }
    for (size_t b = 0; b < t->nbuckets; b++)
        for (const wt_entry *e = t->buckets[b]; e; e = e->next)
            if (obj_expired(e->key))
                stale++;
    return stale;
}

uint64_t wt_bytes(const wt_table *t)
{
    return sizeof *t + t->cap * sizeof *t->buckets + t->count * (uint64_t)t->entry_size;
}

/* --- iteration and traversal ---------------------------------------------- */

void wt_iter_init(wt_iter *it, const wt_table *t)
{
    it->t = t;
    it->bucket = 0;
    it->entry = NULL;
}

int wt_iter_next(wt_iter *it, obj **key, uint64_t *key_id, obj **value)
{
    const wt_table *t = it->t;
    wt_entry *e = it->entry ? ((wt_entry *)it->entry)->next : NULL;
    while (!e) {
        if (it->bucket >= t->nbuckets)
            return 0;
        e = t->buckets[it->bucket++];
    }
    it->entry = e;
    if (key)
        *key = e->key;
    if (key_id)
        *key_id = e->key_id;
    if (value)
        *value = e->value;
    return 1;
}

/* Traversals visit the entries in key-id order too, the index being the
 * entry's rank in it. Ids follow allocation order, so a snapshot or a
 * collection walking a big memo reads the objects the entries hold about
 * in the order they lie in memory; in slot (hash) order each edge was a
 * cache miss (the report of a 1M-entry strong memo: its reachability
 * search 0.25 -> 0.08 s, its dominator search 0.88 -> 0.35 s). Small
 * tables sort on the stack by insertion, big ones by the radix sort in
 * scratch of their own; a traversal from inside a traversal's visit, or
 * without scratch, goes in slot order (indices are then slot ranks). */
enum { TRAV_SMALL = 32 };
static scr trav_scr;
static int trav_busy;

static void visit_entry(const wt_table *t, const wt_entry *e, int key, int val, long i,
                        obj_visit_fn visit, void *arg)
{
    if (key)
        visit(e->key, t->label, i, arg);
    if (val)
        visit(e->value, t->label, i, arg);
}

static id_entry *sort_small(id_entry *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        id_entry x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1].id > x.id; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return v;
}

static void traverse(const wt_table *t, int key, int val, obj_visit_fn visit, void *arg)
{
    if (!key && !val)
        return;
    size_t n = t->count;
    id_entry small[TRAV_SMALL];
    id_entry *v = n <= TRAV_SMALL ? small
                : trav_busy     ? NULL
                                : scr_reserve(&trav_scr, 2 * n * sizeof *v);
    if (v) {
        unsigned bits;
        int busy = trav_busy;
        trav_busy = 1;
        n = gather(t, v, &bits);
        v = n <= TRAV_SMALL ? sort_small(v, n) : radix_sort(v, v + n, n, bits);
        for (size_t i = 0; i < n; i++) {
            if (i + AHEAD < n)
                __builtin_prefetch(v[i + AHEAD].e);
            visit_entry(t, v[i].e, key, val, (long)i, visit, arg);
        }
        trav_busy = busy;
        return;
    }
    long i = 0;
    for (size_t b = 0; b < t->nbuckets; b++)
        for (const wt_entry *e = t->buckets[b]; e; e = e->next)
            visit_entry(t, e, key, val, i++, visit, arg);
}

void wt_traverse(const wt_table *t, obj_visit_fn visit, void *arg)
{
    traverse(t, t->km == WT_KEY_STRONG, t->vm == WT_VAL_STRONG, visit, arg);
}

void wt_traverse_weak(const wt_table *t, obj_visit_fn visit, void *arg)
{
    traverse(t, t->km == WT_KEY_WEAK, t->vm == WT_VAL_WEAK, visit, arg);
}

/* --- verification ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int fail(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int verify_entry(const wt_table *t, const wt_entry *e, char *why, size_t n)
{
    const char *l = label_of(t);
    unsigned long long id = (unsigned long long)e->key_id;
    if (e->table != t)
        return fail(why, n, "%s: entry #%llu points at another table", l, id);
    if (!e->key || !e->value)
        return fail(why, n, "%s: entry #%llu has a NULL key or value", l, id);
    if (t->km != WT_KEY_ADDRESS) {
        if (e->key->id != e->key_id)
            return fail(why, n, "%s: entry #%llu key header says #%llu", l, id,
                        (unsigned long long)e->key->id);
        if (t->km == WT_KEY_WEAK && e->key->weak == 0)
            return fail(why, n, "%s: weak key #%llu holds no weak count", l, id);
        if (t->km == WT_KEY_STRONG && e->key->strong == 0)
            return fail(why, n, "%s: strong key #%llu is dead", l, id);
    }
    if (t->vm == WT_VAL_WEAK && e->value->weak == 0)
        return fail(why, n, "%s: weak value of #%llu holds no weak count", l, id);
    if (t->vm == WT_VAL_STRONG && e->value->strong == 0)
        return fail(why, n, "%s: strong value of #%llu is dead", l, id);
    if (t->flags & WT_REMOVE_ON_KEY_DEATH) {
        /* a pending deferred callback (next set, no target) is fine */
        if (e->key_cb.target && e->key_cb.target != e->key)
            return fail(why, n, "%s: key callback of #%llu on the wrong object", l, id);
        if (t->km != WT_KEY_ADDRESS && !obj_expired(e->key) && e->key_cb.target != e->key)
            return fail(why, n, "%s: live key #%llu has no death callback", l, id);
    }
    if (t->flags & WT_REMOVE_ON_VALUE_DEATH) {
        if (e->val_cb.target && e->val_cb.target != e->value)
            return fail(why, n, "%s: value callback of #%llu on the wrong object", l, id);
        if (!obj_expired(e->value) && e->val_cb.target != e->value)
            return fail(why, n, "%s: live value of #%llu has no death callback", l, id);
    }
    return 0;
}

int wt_verify(const wt_table *t, char *why, size_t n)
{
    const char *l = label_of(t);
    if (t->nbuckets && (t->nbuckets & (t->nbuckets - 1)))
        return fail(why, n, "%s: %zu buckets is not a power of two", l, t->nbuckets);
    if (t->nbuckets && t->shift != 64 - log2_of(t->nbuckets))
        return fail(why, n, "%s: shift %u for %zu buckets", l, t->shift, t->nbuckets);
    if (!t->nbuckets && (t->count || t->buckets))
        return fail(why, n, "%s: %zu entries but no buckets", l, t->count);
    if (t->cap < t->nbuckets)
        return fail(why, n, "%s: %zu buckets in an array of %zu", l, t->nbuckets, t->cap);
    size_t count = 0;
    for (size_t b = 0; b < t->nbuckets; b++) {
        for (const wt_entry *e = t->buckets[b]; e; e = e->next) {
            if (++count > t->count)
                return fail(why, n, "%s: more entries than the count %zu", l, t->count);
            if (slot_of(t, entry_hash(t, e)) != b)
                return fail(why, n, "%s: entry #%llu in bucket %zu, hashes elsewhere", l,
                            (unsigned long long)e->key_id, b);
            for (const wt_entry *d = e->next; d; d = d->next)
                if (entry_hash(t, d) == entry_hash(t, e))
                    return fail(why, n, "%s: duplicate key #%llu", l,
                                (unsigned long long)e->key_id);
            if (verify_entry(t, e, why, n))
                return -1;
        }
    }
    if (count != t->count)
        return fail(why, n, "%s: %zu entries, count says %zu", l, count, t->count);
    return 0;
}
