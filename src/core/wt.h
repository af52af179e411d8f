/* wt.h - weak-keyed tables: the memo.
 *
 * A table maps object identity to an object value. A stale entry can never
 * answer for a new object: keys are compared by id (never reused), or by
 * address in a big table, where the entry's count on its key keeps the
 * address from being reused - unless the table was made with
 * WT_KEY_ADDRESS, whose entries hold no count and key by address as
 * CPython's id() does (the `id-reuse` bug).
 *
 * Key modes:
 *   WT_KEY_WEAK     the entry holds a weak count on its key: the key's
 *                   header stays readable after death, so a dead key is
 *                   detectable (wt_stale);
 *   WT_KEY_STRONG   the entry holds its key strongly (the `strong-memo` bug);
 *   WT_KEY_ADDRESS  the entry remembers only the key's address and id and
 *                   holds no count at all.
 * Value modes: WT_VAL_STRONG or WT_VAL_WEAK (a weak count; wt_get returns
 * NULL for a dead value).
 * Flags:
 *   WT_REMOVE_ON_KEY_DEATH    the entry leaves when its key dies (a callback
 *                             on the key, run in the key's death);
 *   WT_REMOVE_ON_VALUE_DEATH  the entry leaves when its (weak) value dies
 *                             (WeakValueDictionary).
 * Without those flags entries leave only by wt_remove (the caller's own
 * finalizer does it, as PyTorch's del_ten).
 *
 * Cost: O(1) average put/get/remove; one allocation per entry. Open
 * addressing: a power-of-two array of 16-byte slots holding the key's
 * identity word and the entry, so a miss reads slots only. The word is the
 * id until the table first grows past 65536 slots and the address from
 * then on (always the address in WT_KEY_ADDRESS mode): a hit in a big
 * table then reads the slot and the entry, not the key's header first.
 * Linear probing, deletion by backward shift (no tombstones). Load
 * policy, exactly: the first put makes 8 slots; a put that would take the
 * count past 3/4 of the slots doubles them; a removal that leaves the
 * count below 1/8 of the slots (and more than 8 slots) halves them in
 * place, in scratch memory (scr.h; no heap allocation; if
 * scratch cannot be had the table stays bigger). The array's memory is
 * given back (a shrinking realloc, which never fails on purpose) once it is
 * 8 times the slots in use. wt_bytes counts the table header, the array as
 * allocated (16 bytes a slot) and the entries (32 bytes each, plus 40
 * for each removal flag the table has: the death callback it needs).
 *
 *   wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "tensor_memo");
 *   wt_put(m, t, meta);           // 0, or -1 with ER_OOM
 *   obj *v = wt_get(m, t);        // borrowed
 *   wt_remove(m, t);              // 1 if removed
 */
#ifndef FAKEGC_WT_H
#define FAKEGC_WT_H

#include "obj.h"

typedef enum { WT_KEY_WEAK, WT_KEY_STRONG, WT_KEY_ADDRESS } wt_key_mode;
typedef enum { WT_VAL_STRONG, WT_VAL_WEAK } wt_val_mode;
enum { WT_REMOVE_ON_KEY_DEATH = 1u << 0, WT_REMOVE_ON_VALUE_DEATH = 1u << 1 };

typedef struct wt_table wt_table;

/* `label` names the table in traversals and reports ("tensor_memo"); it
 * must outlive the table. NULL on OOM. */
wt_table *wt_new(wt_key_mode km, wt_val_mode vm, unsigned flags,
                 const char *label);
/* Drop every entry, then the table (t may be NULL). Deaths this causes run
 * after the table is gone. */
void wt_free(wt_table *t);
void wt_clear(wt_table *t);             /* drops every entry, frees the slots */
size_t wt_buckets(const wt_table *t);   /* current slot count (0 if none) */

/* Insert or replace. key and value must be alive (else -1, ER_DEAD_REF;
 * NULL: ER_TYPE). Returns 0, or -1 (ER_OOM; the table is unchanged: count,
 * slots, the counts and registrations of key and value). A put that
 * inserts allocates the entry first, then the doubled slot array if the
 * load passes 3/4. A failed entry allocation fails the put. A failed
 * growth is ignored (the probes get longer) while the new count stays
 * within 7/8 of the slots; past that - and when the table has no slots
 * yet - it fails the put (the entry is given back). Each later insert
 * past 3/4 tries the growth again. A replace allocates nothing and cannot
 * fail for memory. In WT_KEY_ADDRESS mode a put on a stale entry (same
 * address, new object) takes the entry over for the new key. */
int wt_put(wt_table *t, obj *key, obj *value);
/* Borrowed value for key, or NULL (absent, or weak value dead). */
obj *wt_get(wt_table *t, const obj *key);
/* wt_get that also reports the id the entry was stored under (0 when
 * absent). In WT_KEY_ADDRESS mode a hit with *stored_id != key->id is a stale
 * entry answering for a new object at a reused address: what the id-reuse
 * check catches. */
obj *wt_lookup(wt_table *t, const obj *key, uint64_t *stored_id);
/* Lookup by id alone (for keys whose header is gone). O(1) average while
 * the table hashes ids; a scan once it hashes addresses (WT_KEY_ADDRESS
 * mode, or past 65536 slots). */
obj *wt_get_id(wt_table *t, uint64_t key_id);
/* Remove the entry (1), or 0 when absent. The references the entry held
 * are dropped after the table is consistent again, and deaths they cause
 * run when the call is about to return (so callbacks may use the table). */
int wt_remove(wt_table *t, const obj *key);
/* Remove the entry stored under key_id, found by the key's address or its
 * id, whichever the table hashes (a finalizer that remembered both, as
 * PyTorch's del_ten its key): O(1) in every mode. In WT_KEY_ADDRESS mode a
 * new object at a reused address keeps its own entry. key is compared,
 * never read. */
int wt_remove_stored(wt_table *t, const obj *key, uint64_t key_id);
int wt_remove_id(wt_table *t, uint64_t key_id);   /* wt_get_id's cost */
size_t wt_count(const wt_table *t);
/* Entries in every table of the process (memo entries, for a timeline). */
uint64_t wt_count_all(void);
/* Entries whose key is dead (WT_KEY_WEAK/STRONG: key->strong == 0). For
 * WT_KEY_ADDRESS tables, entries whose key id is no longer live (found by
 * looking up every live object: O(live objects), no allocation). */
size_t wt_stale(const wt_table *t);
uint64_t wt_bytes(const wt_table *t);   /* buckets + entries */

/* Iteration in unspecified order. Do not modify the table while iterating. */
typedef struct wt_iter { const wt_table *t; size_t slot; } wt_iter;
void wt_iter_init(wt_iter *it, const wt_table *t);
/* Next entry: 1 and the key header (may be dead; for WT_KEY_ADDRESS may be
 * freed memory - use *key_id) and value, or 0 at the end. */
int wt_iter_next(wt_iter *it, obj **key, uint64_t *key_id, obj **value);

/* Strong edges (strong keys and strong values), labelled "LABEL[i]" style
 * (label = the table's label, index = the entry's rank in key-id order,
 * LABEL[0] the oldest key; from inside another traversal's visit,
 * without scratch memory, or when the table's key ids span 2^32 or more,
 * the rank in slot order: deterministic for a given sequence of
 * operations either way). Sorting costs 16 B of scratch per entry above
 * 32 entries, kept mapped for the next traversal; the order of the last
 * table of more than 32 entries sorted is kept too, and its next
 * traversal or wt_clear sorts nothing while no put, removal or clear has
 * changed it. */
void wt_traverse(const wt_table *t, obj_visit_fn visit, void *arg);
/* Weak edges (weak keys/values), for reports. */
void wt_traverse_weak(const wt_table *t, obj_visit_fn visit, void *arg);

/* Invariants: size fields agree, count matches and is within 7/8 of the
 * slots, empty slots are {0, NULL}, each entry's tag is its id (address),
 * each entry is reachable from its home slot without crossing an empty slot
 * and with no other slot of the same tag on the way (no duplicates), weak
 * and strong counts and death callbacks held where the modes say. 0, or -1
 * with why. */
int wt_verify(const wt_table *t, char *why, size_t n);

#endif
