/* wt.c - weak-keyed tables.
 *
 * Open addressing: a power-of-two array of 16-byte slots {tag, entry}, the
 * tag being the key's identity word, so that a probe compares keys without
 * touching the entry: a miss or a mismatch reads slots only (one cache
 * line, usually). The word is the key's id while the table is small, and
 * its address once the table has grown past ADDR_TAG_SLOTS (and always in
 * WT_KEY_ADDRESS mode):
 *   - ids come about in arithmetic progression, which Fibonacci hashing
 *     spreads better than random (a probe in the convert/miss benchmark
 *     went 0.20 slots past its home with ids, 1.56 with addresses);
 *   - but an id must be read from the key's header first. In a table of a
 *     million entries that header is a cache miss of its own before the
 *     slot's (weaktable/lookup-1m 70 -> 46 ns with addresses), and keys at
 *     reused addresses find their slots still cached (convert/miss-1m with
 *     a 1M-entry memo 518 -> 340 ns).
 * An address names one key for as long as its entry lives, because the
 * entry holds the key (its weak or strong count keeps the header); in
 * WT_KEY_ADDRESS mode a reused address is the point.
 * Linear probing from the home slot, picked by Fibonacci hashing of the tag
 * (the high bits of tag * 2^64/phi); deletion by backward shift, so there
 * are no tombstones and a probe ends at the first empty slot. Each entry is
 * one pool allocation at a stable address (its obj_cb registrations and
 * e->table are what a key's or value's death finds it by); it carries a
 * death callback only for each removal flag the table has.
 *
 * Re-entrancy: dropping an entry's references can kill objects whose
 * callbacks use this very table (or free it). Every operation that drops
 * references runs as one drain scope, after the table is consistent, so
 * those deaths happen when the operation no longer touches the table.
 */
#include "wt.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "er.h"
#include "obj_int.h"
#include "scr.h"

typedef struct wt_entry {
    obj *key;              /* header; in address mode possibly freed memory */
    uint64_t key_id;
    obj *value;
    wt_table *table;
    /* one death callback per removal flag of the table, the key's first
     * (key_cb, val_cb) */
    obj_cb cb[];
} wt_entry;

/* An empty slot is {0, NULL}. Ids start at 1 and addresses are not NULL,
 * so no key has the tag 0. */
typedef struct wt_slot {
    uint64_t tag;
    wt_entry *e;
} wt_slot;

struct wt_table {
    wt_slot *slots;
    size_t nslots;         /* 0 or a power of two >= MIN_SLOTS */
    size_t cap;            /* slots allocated (>= nslots; shrinks lag) */
    size_t mask;           /* nslots - 1 (0 without slots) */
    unsigned shift;        /* 64 - log2(nslots) */
    size_t count;
    wt_key_mode km;
    wt_val_mode vm;
    unsigned flags;
    int addr_tags;         /* tags are addresses (else ids); never reverts */
    unsigned ncb;          /* death callbacks per entry: one per removal flag */
    uint64_t stamp;        /* changed by every put, removal and clear */
    const char *label;
};

/* The load policy (wt.h states it): grow past GROW_NUM/GROW_DEN, fail a
 * put whose growth failed past MAX_LOAD_NUM/8, halve below 1/SHRINK_DIV. */
enum { MIN_SLOTS = 8, GROW_NUM = 3, GROW_DEN = 4, MAX_LOAD_NUM = 7, SHRINK_DIV = 8,
       ADDR_TAG_SLOTS = 1 << 16 };

static size_t grow_at(size_t nslots) { return nslots / GROW_DEN * GROW_NUM; }
static size_t max_load(size_t nslots) { return nslots / 8 * MAX_LOAD_NUM; }

/* Entries come from three pools (no, one and two death callbacks): a miss
 * makes three, a lifecycle drops them; same counters, checker view and
 * fault points as al_malloc (alloc/al.h). */
#define ENTRY_BYTES(ncb) (sizeof(wt_entry) + (ncb) * sizeof(obj_cb))
static al_pool entry_pool[3] = {
    AL_POOL_INIT(ENTRY_BYTES(0), AL_K_MEMO),
    AL_POOL_INIT(ENTRY_BYTES(1), AL_K_MEMO),
    AL_POOL_INIT(ENTRY_BYTES(2), AL_K_MEMO),
};

static al_pool *pool_of(const wt_table *t) { return &entry_pool[t->ncb]; }

/* The callbacks, for a table with the matching flag: the key's first. */
static unsigned val_cb_at(const wt_table *t) { return (t->flags & WT_REMOVE_ON_KEY_DEATH) != 0; }

static obj_cb *key_cb(wt_entry *e) { return &e->cb[0]; }

static obj_cb *val_cb(const wt_table *t, wt_entry *e) { return &e->cb[val_cb_at(t)]; }

static const char *label_of(const wt_table *t) { return t->label ? t->label : "table"; }

/* A table's stamp is a fresh number from one counter at its creation and
 * at every put, removal and clear, so that (table, stamp) names one state
 * of one table, even when a new table takes a freed one's address. */
static uint64_t stamps;
static uint64_t wt_entries_all;   /* entries of every table (wt_count_all) */

static void touch(wt_table *t) { t->stamp = ++stamps; }

/* --- hashing and probing ---------------------------------------------------- */

static size_t home_of(const wt_table *t, uint64_t tag)
{
    return (size_t)((tag * 0x9E3779B97F4A7C15ull) >> t->shift);
}

static uint64_t key_tag(const wt_table *t, const obj *key)
{
    return t->addr_tags ? (uint64_t)(uintptr_t)key : key->id;
}

static uint64_t entry_tag(const wt_table *t, const wt_entry *e)
{
    return t->addr_tags ? (uint64_t)(uintptr_t)e->key : e->key_id;
}

/* The slot holding tag, or the empty slot where the probe for it ends
 * (there is always one: the load stays below MAX_LOAD). t has slots. */
static size_t probe(const wt_table *t, uint64_t tag)
{
    size_t i = home_of(t, tag);
    for (;;) {
        const wt_slot *s = &t->slots[i];
        if (s->tag == tag || !s->e)
            return i;
        i = (i + 1) & t->mask;
    }
}

/* The slot of key's entry, or -1 (as size_t) when absent. */
static size_t find(const wt_table *t, const obj *key)
{
    if (!t->nslots || !key)
        return (size_t)-1;
    size_t i = probe(t, key_tag(t, key));
    return t->slots[i].e ? i : (size_t)-1;
}

static size_t find_id(const wt_table *t, uint64_t id)
{
    if (!t->nslots)
        return (size_t)-1;
    if (!t->addr_tags) {
        size_t i = probe(t, id);
        return t->slots[i].e ? i : (size_t)-1;
    }
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i].e && t->slots[i].e->key_id == id)
            return i;
    return (size_t)-1;
}

static wt_entry *entry_at(const wt_table *t, size_t i)
{
    return i == (size_t)-1 ? NULL : t->slots[i].e;
}

/* The slot of an entry known to be in the table (found from the entry,
 * as a death callback does). */
static size_t slot_of_entry(const wt_table *t, const wt_entry *e)
{
    size_t i = home_of(t, entry_tag(t, e));
    while (t->slots[i].e != e)
        i = (i + 1) & t->mask;
    return i;
}

static unsigned log2_of(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

static void set_size(wt_table *t, size_t n)
{
    t->nslots = n;
    t->mask = n ? n - 1 : 0;
    t->shift = n ? 64 - log2_of(n) : 0;
}

/* Put a slot's contents at the end of its probe (the tag is absent). */
static void place(wt_table *t, wt_slot s)
{
    size_t i = home_of(t, s.tag);
    while (t->slots[i].e)
        i = (i + 1) & t->mask;
    t->slots[i] = s;
}

/* Grow into a new array of n slots. The home slot keeps the hash's high
 * bits, so old slots read in order land in about ascending new slots: the
 * rehash streams through both arrays and never reads an entry, except once,
 * when the table passes ADDR_TAG_SLOTS and each slot is retagged with its
 * key's address. -1 (nothing changed) when the array cannot be had. */
static int grow(wt_table *t, size_t n)
{
    wt_slot *ns = al_calloc(n, sizeof *ns, AL_K_MEMO, label_of(t));
    if (!ns)
        return -1;
    wt_slot *old = t->slots;
    size_t oldn = t->nslots, oldcap = t->cap;
    int retag = !t->addr_tags && n > ADDR_TAG_SLOTS;
    t->slots = ns;
    t->cap = n;
    t->addr_tags |= retag;
    set_size(t, n);
    for (size_t i = 0; retag && i < oldn; i++)
        if (old[i].e)
            old[i].tag = entry_tag(t, old[i].e);
    for (size_t i = 0; i < oldn; i++)
        if (old[i].e)
            place(t, old[i]);
    al_free(old, oldcap * sizeof *old, AL_K_MEMO);
    return 0;
}

/* Empty slot i by backward shift: each later slot of the cluster whose
 * home is not in (i, j] moves back into the hole, so every entry stays
 * reachable from its home without crossing an empty slot. */
static void delete_at(wt_table *t, size_t i)
{
    size_t mask = t->mask;
    for (size_t j = (i + 1) & mask; t->slots[j].e; j = (j + 1) & mask) {
        size_t home = home_of(t, t->slots[j].tag);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i] = (wt_slot){0, NULL};
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
    for (unsigned i = 0, n = t->ncb; i < n; i++)
        obj_cb_unregister(&e->cb[i]);
    obj *k = e->key, *v = e->value;
    al_pool_put(pool_of(t), e);
    drop_value(vm, v);
    drop_key(km, k);
}

/* Halve the slot count in place: the live slots go to scratch (scr.h: no
 * heap allocation), the array is cleared and they are placed again in its
 * first half. A burst of removes so costs no allocator calls (a calloc per
 * halving used to make glibc consolidate every entry freed since the last
 * one). Without scratch the table stays bigger. */
static scr shrink_scr;

static void halve_in_place(wt_table *t)
{
    wt_slot *v = scr_reserve(&shrink_scr, (t->count + 1) * sizeof *v);
    if (!v)
        return;
    size_t n = 0, old = t->nslots;
    for (size_t i = 0; i < old; i++) {     /* branch-free: the slots are sparse */
        v[n] = t->slots[i];
        n += t->slots[i].e != NULL;
    }
    set_size(t, old / 2);
    memset(t->slots, 0, t->nslots * sizeof *t->slots);   /* the rest is spare */
    for (size_t i = 0; i < n; i++)
        place(t, v[i]);
}

/* Halve below load 1/SHRINK_DIV (in place), and give the array's memory
 * back once it is 8 times what is used: one realloc per factor of 8, not
 * per halving. */
static void maybe_shrink(wt_table *t)
{
    if (t->nslots <= MIN_SLOTS || t->count >= t->nslots / SHRINK_DIV)
        return;
    halve_in_place(t);
    if (t->nslots * 8 <= t->cap) {
        wt_slot *ns = al_realloc(t->slots, t->cap * sizeof *ns,
                                 t->nslots * sizeof *ns, AL_K_MEMO, label_of(t));
        if (ns) {                       /* a failed shrink keeps the bigger array */
            t->slots = ns;
            t->cap = t->nslots;
        }
    }
}

/* Empty slot i, shrink if due, drop its entry; one drain scope. */
static void remove_at(wt_table *t, size_t i)
{
    int prev = obj_int_drain_enter();
    wt_entry *e = t->slots[i].e;
    touch(t);
    delete_at(t, i);
    t->count--;
    wt_entries_all--;
    maybe_shrink(t);
    entry_drop(t, e);
    obj_int_drain_exit(prev);
}

static void entry_remove(wt_table *t, wt_entry *e) { remove_at(t, slot_of_entry(t, e)); }

/* The entry of its callback number i. */
static wt_entry *entry_of_cb(obj_cb *cb, unsigned i)
{
    return (wt_entry *)(void *)((char *)(cb - i) - offsetof(wt_entry, cb));
}

/* A key's or value's death: the callback is the entry's first (the key's,
 * or the value's in a table without WT_REMOVE_ON_KEY_DEATH), or its
 * second (the value's after the key's). */
static void first_cb_died(obj_cb *cb, obj *dying)
{
    (void)dying;
    wt_entry *e = entry_of_cb(cb, 0);
    entry_remove(e->table, e);
}

static void second_cb_died(obj_cb *cb, obj *dying)
{
    (void)dying;
    wt_entry *e = entry_of_cb(cb, 1);
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
    t->addr_tags = km == WT_KEY_ADDRESS;
    t->flags = flags & (WT_REMOVE_ON_KEY_DEATH | WT_REMOVE_ON_VALUE_DEATH);
    t->ncb = ((t->flags & WT_REMOVE_ON_KEY_DEATH) != 0) +
             ((t->flags & WT_REMOVE_ON_VALUE_DEATH) != 0);
    t->label = label;
    touch(t);
    return t;
}

/* wt_clear drops the entries in key-id order. Ids follow allocation
 * order, so the objects the entries hold then die, and are freed, about in
 * the order they were made: glibc frees each next to the chunk it freed
 * last. In slot (hash) order every free consolidated with cold
 * neighbours: glibc's unlink_chunk was 21% of a 1M-entry teardown. The
 * sort is an LSD radix sort, 11 bits a pass, of 8-byte keys in scratch
 * memory (scr.h: no allocation): the id relative to the table's lowest in
 * the high half, the slot in the low half (16 B of scratch per entry for
 * both buffers). Without scratch, or when a table's ids span 2^32 or more,
 * slot order. */
typedef uint64_t id_slot;
#define ID_SLOT_E(t, k) ((t)->slots[(uint32_t)(k)].e)

enum { RADIX_BITS = 11, RADIX = 1 << RADIX_BITS, AHEAD = 8 };
static scr order_scr;

/* The order of the last big table sorted for a traversal stays in
 * trav_scr (below) while that table keeps its stamp: a report traverses a
 * memo for its snapshot, then for its weak edges once per failing
 * expectation, and the teardown clears it in the same order; each gather
 * reads every entry (a cache miss each in a 1M-entry memo). */
static struct {
    const wt_table *t;
    uint64_t stamp;
    const id_slot *v;
    size_t n;
} sorted;

/* The entries as keys; v has room for 2 x count (the second half holds
 * the slots until the lowest id is known); *bits: the bits the relative
 * ids need. 0 when the ids do not fit the high half (the caller takes slot
 * order). */
static size_t gather(const wt_table *t, id_slot *v, unsigned *bits)
{
    size_t n = 0, cnt = t->count;
    uint64_t lo = UINT64_MAX, hi = 0;
    int addr = t->addr_tags;                /* else the tag is the id */
    if (t->nslots > UINT32_MAX)
        return 0;
    for (size_t b = 0; b < t->nslots; b++) {
        wt_entry *e = t->slots[b].e;
        if (!e)
            continue;
        if (addr && b + AHEAD < t->nslots && t->slots[b + AHEAD].e)
            __builtin_prefetch(t->slots[b + AHEAD].e);
        uint64_t id = addr ? e->key_id : t->slots[b].tag;
        v[cnt + n] = b;
        v[n++] = id;
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
    }
    if (n && hi - lo > UINT32_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        v[i] = (v[i] - lo) << 32 | v[cnt + i];
    *bits = 0;
    while (*bits < 32 && (hi - lo) >> *bits)
        (*bits)++;
    return n;
}

/* Sort v (n keys) by their high half with tmp as the second buffer;
 * returns the buffer that holds the result. */
static id_slot *radix_sort(id_slot *v, id_slot *tmp, size_t n, unsigned bits)
{
    static size_t count[RADIX];
    for (unsigned shift = 32; shift < 32 + bits; shift += RADIX_BITS) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(v[i] >> shift) & (RADIX - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & (RADIX - 1)]++] = v[i];
        id_slot *x = v;
        v = tmp;
        tmp = x;
    }
    return v;
}

static void forget_slots(wt_table *t)
{
    al_free(t->slots, t->cap * sizeof *t->slots, AL_K_MEMO);
    t->slots = NULL;
    t->cap = 0;
    wt_entries_all -= t->count;
    t->count = 0;
    set_size(t, 0);
}

/* The table is emptied first, its slot array kept until the drops are
 * done; the deaths the drops cause wait for the caller's drain scope.
 * order: sorted keys, or NULL for slot order. */
static void clear_in(wt_table *t, const id_slot *order, size_t n)
{
    wt_slot *s = t->slots;
    size_t ns = t->nslots, cap = t->cap;
    t->slots = NULL;
    forget_slots(t);
    for (size_t i = 0; order && i < n; i++) {
        /* two stages: the slot, then (once it is in) its entry */
        if (i + 2 * AHEAD < n)
            __builtin_prefetch(&s[(uint32_t)order[i + 2 * AHEAD]]);
        if (i + AHEAD < n)
            __builtin_prefetch(s[(uint32_t)order[i + AHEAD]].e);
        entry_drop(t, s[(uint32_t)order[i]].e);
    }
    for (size_t i = 0; !order && i < ns; i++)
        if (s[i].e)
            entry_drop(t, s[i].e);
    al_free(s, cap * sizeof *s, AL_K_MEMO);
}

void wt_clear(wt_table *t)
{
    if (!t)
        return;
    int prev = obj_int_drain_enter();
    size_t n = t->count;
    const id_slot *order = NULL;
    if (sorted.t == t && sorted.stamp == t->stamp) {
        /* nothing traverses while the drops wait for the drain */
        order = sorted.v;
        n = sorted.n;
    } else {
        id_slot *v = n > 1 ? scr_reserve(&order_scr, 2 * n * sizeof *v) : NULL;
        unsigned bits;
        if (v && (n = gather(t, v, &bits)) != 0)
            order = radix_sort(v, v + n, n, bits);
    }
    touch(t);
    clear_in(t, order, order ? n : 0);
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
    if (t->flags & WT_REMOVE_ON_KEY_DEATH)
        obj_cb_unregister(key_cb(e));
    e->key = key;
    e->key_id = key->id;
    if (t->flags & WT_REMOVE_ON_KEY_DEATH)
        obj_cb_register(key, key_cb(e));
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
        obj_cb_register(value, val_cb(t, e));    /* moves the registration */
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
    touch(t);
    uint64_t tag = key_tag(t, key);
    size_t i = t->nslots ? probe(t, tag) : 0;
    wt_entry *e = t->nslots ? t->slots[i].e : NULL;
    if (e) {
        if (e->key_id != key->id)
            take_over_key(t, e, key);
        replace_value(t, e, value);
        return 0;
    }
    e = al_pool_get(pool_of(t), label_of(t));
    if (!e)
        return er_set(ER_OOM, "out of memory inserting into %s", label_of(t));
    if (t->count + 1 > grow_at(t->nslots)) {
        if (grow(t, t->nslots ? t->nslots * 2 : MIN_SLOTS) == 0) {
            tag = key_tag(t, key);          /* the growth may retag by address */
            i = probe(t, tag);
        } else if (t->count + 1 > max_load(t->nslots)) {    /* also: no slots */
            al_pool_put(pool_of(t), e);
            return er_set(ER_OOM, "out of memory inserting into %s", label_of(t));
        }
    }
    /* every field of a plain entry is written below; only the callbacks
     * need zeroing */
    if (t->ncb)
        memset(e->cb, 0, t->ncb * sizeof *e->cb);
    e->key = key;
    e->key_id = key->id;
    e->value = value;
    e->table = t;
    hold_key(t, key);
    hold_value(t, value);
    if (t->flags & WT_REMOVE_ON_KEY_DEATH) {
        key_cb(e)->fn = first_cb_died;
        obj_cb_register(key, key_cb(e));
    }
    if (t->flags & WT_REMOVE_ON_VALUE_DEATH) {
        val_cb(t, e)->fn = val_cb_at(t) ? second_cb_died : first_cb_died;
        obj_cb_register(value, val_cb(t, e));
    }
    t->slots[i] = (wt_slot){tag, e};
    t->count++;
    wt_entries_all++;
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

obj *wt_get(wt_table *t, const obj *key) { return value_of(t, entry_at(t, find(t, key))); }

obj *wt_lookup(wt_table *t, const obj *key, uint64_t *stored_id)
{
    wt_entry *e = entry_at(t, find(t, key));
    if (stored_id)
        *stored_id = e ? e->key_id : 0;
    return value_of(t, e);
}

obj *wt_get_id(wt_table *t, uint64_t key_id)
{
    return value_of(t, entry_at(t, find_id(t, key_id)));
}

/* The key's header is written when the entry's count on it is dropped, at
 * the end; by address its miss starts beside the slot's, not after the
 * entry's (a prefetch of memory a WT_KEY_ADDRESS key no longer has is
 * harmless). */
int wt_remove(wt_table *t, const obj *key)
{
    __builtin_prefetch(key, 1);
    size_t i = find(t, key);
    if (i == (size_t)-1)
        return 0;
    remove_at(t, i);
    return 1;
}

int wt_remove_stored(wt_table *t, const obj *key, uint64_t key_id)
{
    __builtin_prefetch(key, 1);
    size_t i = t->addr_tags ? find(t, key) : find_id(t, key_id);
    if (i == (size_t)-1 || t->slots[i].e->key_id != key_id)
        return 0;
    remove_at(t, i);
    return 1;
}

int wt_remove_id(wt_table *t, uint64_t key_id)
{
    size_t i = find_id(t, key_id);
    if (i == (size_t)-1)
        return 0;
    remove_at(t, i);
    return 1;
}

size_t wt_count(const wt_table *t) { return t->count; }
uint64_t wt_count_all(void) { return wt_entries_all; }
size_t wt_buckets(const wt_table *t) { return t->nslots; }

size_t wt_stale(const wt_table *t)
{
    size_t stale = 0;
    if (t->km == WT_KEY_ADDRESS) {
        size_t fresh = 0;
        for (const obj *o = obj_live_first(); o; o = obj_iter_next(o)) {
            const wt_entry *e = entry_at(t, find(t, o));
            if (e && e->key_id == o->id)
                fresh++;
        }
        return t->count - fresh;
    }
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i].e && obj_expired(t->slots[i].e->key))
            stale++;
    return stale;
}

uint64_t wt_bytes(const wt_table *t)
{
    return sizeof *t + t->cap * sizeof *t->slots + t->count * (uint64_t)ENTRY_BYTES(t->ncb);
}

/* --- iteration and traversal ---------------------------------------------- */

void wt_iter_init(wt_iter *it, const wt_table *t)
{
    it->t = t;
    it->slot = 0;
}

int wt_iter_next(wt_iter *it, obj **key, uint64_t *key_id, obj **value)
{
    const wt_table *t = it->t;
    wt_entry *e = NULL;
    while (!e) {
        if (it->slot >= t->nslots)
            return 0;
        e = t->slots[it->slot++].e;
    }
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

static id_slot *sort_small(id_slot *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        id_slot x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] >> 32 > x >> 32; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return v;
}

static void visit_sorted(const wt_table *t, const id_slot *v, size_t n, int key, int val,
                         obj_visit_fn visit, void *arg)
{
    int busy = trav_busy;
    trav_busy = 1;
    for (size_t i = 0; i < n; i++) {
        if (i + 2 * AHEAD < n)
            __builtin_prefetch(&t->slots[(uint32_t)v[i + 2 * AHEAD]]);
        if (i + AHEAD < n)
            __builtin_prefetch(ID_SLOT_E(t, v[i + AHEAD]));
        visit_entry(t, ID_SLOT_E(t, v[i]), key, val, (long)i, visit, arg);
    }
    trav_busy = busy;
}

/* The big table's entries sorted in trav_scr (n of them), or NULL (then
 * slot order): from the last sort when t is unchanged since. */
static const id_slot *sorted_big(const wt_table *t, size_t *n)
{
    if (sorted.t == t && sorted.stamp == t->stamp) {
        *n = sorted.n;
        return sorted.v;
    }
    sorted.t = NULL;                       /* the reserve may move trav_scr */
    id_slot *v = scr_reserve(&trav_scr, 2 * t->count * sizeof *v);
    unsigned bits;
    if (!v || (*n = gather(t, v, &bits)) == 0)
        return NULL;
    sorted.t = t;
    sorted.stamp = t->stamp;
    sorted.v = radix_sort(v, v + *n, *n, bits);
    sorted.n = *n;
    return sorted.v;
}

static void traverse(const wt_table *t, int key, int val, obj_visit_fn visit, void *arg)
{
    if ((!key && !val) || t->count == 0)
        return;
    size_t n = t->count;
    id_slot small[2 * TRAV_SMALL];
    const id_slot *v = NULL;
    unsigned bits;
    if (n <= TRAV_SMALL && (n = gather(t, small, &bits)) != 0)
        v = sort_small(small, n);
    else if (n > TRAV_SMALL && !trav_busy)
        v = sorted_big(t, &n);
    if (v) {
        visit_sorted(t, v, n, key, val, visit, arg);
        return;
    }
    long i = 0;
    for (size_t b = 0; b < t->nslots; b++)
        if (t->slots[b].e)
            visit_entry(t, t->slots[b].e, key, val, i++, visit, arg);
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


static int verify_entry(const wt_table *t, const wt_entry *e, char *why, size_t n)
{
    const char *l = label_of(t);
    unsigned long long id = (unsigned long long)e->key_id;
    if (e->table != t)
        return er_why(why, n, "%s: entry #%llu points at another table", l, id);
    if (!e->key || !e->value)
        return er_why(why, n, "%s: entry #%llu has a NULL key or value", l, id);
    if (t->km != WT_KEY_ADDRESS) {
        if (e->key->id != e->key_id)
            return er_why(why, n, "%s: entry #%llu key header says #%llu", l, id,
                        (unsigned long long)e->key->id);
        if (t->km == WT_KEY_WEAK && e->key->weak == 0)
            return er_why(why, n, "%s: weak key #%llu holds no weak count", l, id);
        if (t->km == WT_KEY_STRONG && e->key->strong == 0)
            return er_why(why, n, "%s: strong key #%llu is dead", l, id);
    }
    if (t->vm == WT_VAL_WEAK && e->value->weak == 0)
        return er_why(why, n, "%s: weak value of #%llu holds no weak count", l, id);
    if (t->vm == WT_VAL_STRONG && e->value->strong == 0)
        return er_why(why, n, "%s: strong value of #%llu is dead", l, id);
    if (t->flags & WT_REMOVE_ON_KEY_DEATH) {
        /* a pending deferred callback (next set, no target) is fine */
        const obj_cb *kc = &e->cb[0];
        if (kc->target && kc->target != e->key)
            return er_why(why, n, "%s: key callback of #%llu on the wrong object", l, id);
        if (t->km != WT_KEY_ADDRESS && !obj_expired(e->key) && kc->target != e->key)
            return er_why(why, n, "%s: live key #%llu has no death callback", l, id);
    }
    if (t->flags & WT_REMOVE_ON_VALUE_DEATH) {
        const obj_cb *vc = &e->cb[val_cb_at(t)];
        if (vc->target && vc->target != e->value)
            return er_why(why, n, "%s: value callback of #%llu on the wrong object", l, id);
        if (!obj_expired(e->value) && vc->target != e->value)
            return er_why(why, n, "%s: live value of #%llu has no death callback", l, id);
    }
    return 0;
}

/* Slot j (not empty): its tag is its entry's, and the probe from its home
 * reaches it across full slots holding other tags. */
static int verify_slot(const wt_table *t, size_t j, char *why, size_t n)
{
    const char *l = label_of(t);
    const wt_slot *s = &t->slots[j];
    unsigned long long id = (unsigned long long)s->e->key_id;
    if (s->tag != entry_tag(t, s->e))
        return er_why(why, n, "%s: slot %zu tag %#llx, entry #%llu says %#llx", l, j,
                    (unsigned long long)s->tag, id, (unsigned long long)entry_tag(t, s->e));
    for (size_t i = home_of(t, s->tag); i != j; i = (i + 1) & t->mask) {
        if (!t->slots[i].e)
            return er_why(why, n, "%s: entry #%llu in slot %zu, past the empty slot %zu "
                        "from its home %zu", l, id, j, i, home_of(t, s->tag));
        if (t->slots[i].tag == s->tag)
            return er_why(why, n, "%s: duplicate key #%llu in slots %zu and %zu", l, id, i, j);
    }
    return verify_entry(t, s->e, why, n);
}

int wt_verify(const wt_table *t, char *why, size_t n)
{
    const char *l = label_of(t);
    if (t->nslots && (t->nslots & (t->nslots - 1)))
        return er_why(why, n, "%s: %zu slots is not a power of two", l, t->nslots);
    if (t->nslots && (t->nslots < MIN_SLOTS || t->shift != 64 - log2_of(t->nslots) ||
                      t->mask != t->nslots - 1))
        return er_why(why, n, "%s: shift %u mask %#zx for %zu slots", l, t->shift, t->mask,
                    t->nslots);
    if (!t->nslots && (t->count || t->slots))
        return er_why(why, n, "%s: %zu entries but no slots", l, t->count);
    if (t->cap < t->nslots)
        return er_why(why, n, "%s: %zu slots in an array of %zu", l, t->nslots, t->cap);
    if (t->nslots && t->count > max_load(t->nslots))
        return er_why(why, n, "%s: %zu entries in %zu slots, over the maximum load", l,
                    t->count, t->nslots);
    if (!t->addr_tags && (t->km == WT_KEY_ADDRESS || t->nslots > ADDR_TAG_SLOTS))
        return er_why(why, n, "%s: tagged by id in %zu slots (mode %d)", l, t->nslots,
                    (int)t->km);
    size_t count = 0;
    for (size_t j = 0; j < t->nslots; j++) {
        if (!t->slots[j].e) {
            if (t->slots[j].tag)
                return er_why(why, n, "%s: empty slot %zu has the tag %#llx", l, j,
                            (unsigned long long)t->slots[j].tag);
            continue;
        }
        if (++count > t->count)
            return er_why(why, n, "%s: more entries than the count %zu", l, t->count);
        if (verify_slot(t, j, why, n))
            return -1;
    }
    if (count != t->count)
        return er_why(why, n, "%s: %zu entries, count says %zu", l, count, t->count);
    return 0;
}
