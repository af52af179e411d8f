/* ix.h - the interner's index: keys to dense ids, the entries kept by the
 * caller.
 *
 * The caller keeps its entries in an array of its own, entry i having id i
 * (ids are dense, in the order entries were added, so the array is the
 * table's order and nothing ever iterates the index). The index answers
 * "which id has this key" through the caller's equality: it holds, per
 * slot, the id + 1 and 32 bits of the key's hash, and calls eq only on a
 * slot whose hash bits match. The hash given is multiplied by the golden
 * ratio here (an id or a pointer is a good enough h); ix_hash_str and
 * ix_hash_mem are the FNV-1a of a text, ix_hash_mix folds one more field
 * into a hash.
 *
 *   ix index = IX_INIT(AL_K_HEAP, "hp_labels");
 *   uint32_t id = ix_find(&index, h, label_eq, g, s);
 *   if (id == IX_NONE) {                 // a new key: the entry first,
 *       ... g->labels[g->n] = copy ...   // then the index
 *       if (ix_add(&index, h, (uint32_t)g->n) != 0) ... out of memory
 *       id = (uint32_t)g->n++;
 *   }
 *   ix_free(&index);
 *
 * Contract: ix_add takes an id whose key is not in the index already (the
 * caller has just looked) and below IX_NONE; equal keys must hash equal.
 * Open addressing with linear probing over 8-byte slots; at most half the
 * slots are used (the first add makes 16; one that would pass half
 * doubles them). No removal: an interner's ids live as long as it does.
 * Memory comes from al_malloc with the kind and site given at init; an
 * add that cannot grow the index returns -1 and leaves it as it was (the
 * caller reports ER_OOM). A zeroed ix is IX_INIT(0, NULL): usable, with
 * kind 0 and no site. eq must not touch the index.
 */
#ifndef FAKEGC_IX_H
#define FAKEGC_IX_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/al.h"

#define IX_NONE UINT32_MAX

/* 1 when entry id of ctx has key, else 0. */
typedef int (*ix_eq_fn)(const void *ctx, uint32_t id, const void *key);

typedef struct ix {
    uint64_t *slot;    /* hash bits << 32 | (id + 1); 0 empty */
    size_t cap, n;     /* cap a power of two (or 0), n <= cap / 2 */
    al_kind kind;
    const char *site;
} ix;
#define IX_INIT(kind, site) { NULL, 0, 0, (kind), (site) }

/* The slot's hash bits for h (Fibonacci hashing: its top 32 bits). */
static inline uint32_t ix_tag(uint64_t h)
{
    return (uint32_t)((h * 0x9E3779B97F4A7C15ULL) >> 32);
}

/* The id whose entry equals key (its hash h), or IX_NONE. Inline, so that
 * a static eq is inlined into its caller's loop. */
static inline uint32_t ix_find(const ix *t, uint64_t h, ix_eq_fn eq, const void *ctx,
                               const void *key)
{
    if (!t->n)
        return IX_NONE;
    uint32_t tag = ix_tag(h);
    size_t mask = t->cap - 1;
    for (size_t j = tag & mask; t->slot[j]; j = (j + 1) & mask) {
        uint64_t s = t->slot[j];
        if ((uint32_t)(s >> 32) == tag && eq(ctx, (uint32_t)s - 1, key))
            return (uint32_t)s - 1;
    }
    return IX_NONE;
}
/* Index id under hash h: 0, or -1 out of memory (t unchanged). */
int ix_add(ix *t, uint64_t h, uint32_t id);
/* Room for n ids in all without another allocation: 0, or -1 (t unchanged). */
int ix_reserve(ix *t, size_t n);
/* The growth rule of ix and us (us.h): the table of 64-bit words at
 * *slot (*cap of them, 0 an empty one) made big enough for n words at most
 * half full: unchanged when it is, else the first of 16, 32, ... that is,
 * each word moved to the first free slot from home(word, mask) on. 0, or
 * -1 out of memory (the table as it was). */
int ix_grow_words(uint64_t **slot, size_t *cap, size_t n,
                  size_t (*home)(uint64_t w, size_t mask), al_kind kind, const char *site);
/* Releases the slots; t is empty again (same kind and site). */
void ix_free(ix *t);

/* 64-bit FNV-1a: its offset basis and prime, the one spelling of each
 * (every FNV-1a of the tree starts at IX_FNV_BASIS). */
#define IX_FNV_BASIS 14695981039346656037ULL
#define IX_FNV_PRIME 1099511628211ULL

/* FNV-1a of n more bytes after h (a hash in parts: start at IX_FNV_BASIS). */
static inline uint64_t ix_hash_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * IX_FNV_PRIME;
    return h;
}

/* FNV-1a of n bytes, of a NUL-terminated text (NULL hashes as ""). */
static inline uint64_t ix_hash_mem(const void *p, size_t n)
{
    return ix_hash_more(IX_FNV_BASIS, p, n);
}

static inline uint64_t ix_hash_str(const char *s)
{
    uint64_t h = IX_FNV_BASIS;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * IX_FNV_PRIME;
    return h;
}

/* FNV-1a of h and the 8 bytes of v, least significant first (a key of
 * several numbers, hashed in parts). */
static inline uint64_t ix_hash_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * IX_FNV_PRIME;
    return h;
}

/* h and x mixed into one hash (for keys of several fields). */
static inline uint64_t ix_hash_mix(uint64_t h, uint64_t x)
{
    h = (h ^ x * 0xC2B2AE3D27D4EB4FULL) * 0xFF51AFD7ED558CCDULL;
    return h ^ (h >> 29);
}

#endif
