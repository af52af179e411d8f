/* us.h - a set of 64-bit keys (object ids, inode numbers, hashes).
 *
 *   us live = US_INIT(AL_K_HEAP, "fk live ids");
 *   if (us_add(&live, o->id) < 0) ... out of memory
 *   if (us_has(&live, id)) ...
 *   us_free(&live);
 *
 * Contract: every uint64_t is a key, 0 and UINT64_MAX included; us_add is
 * 1 for a key new to the set, 0 for one already in, -1 when the set cannot
 * grow (it is then as it was: the caller reports ER_OOM). No removal, no
 * order (a caller that lists its keys keeps them in an array of its own).
 * Open addressing with linear probing over the keys themselves (the key 0
 * marks an empty slot and is kept as a flag); at most half the slots are
 * used (the first add makes 16; one that would pass half doubles them).
 * Memory comes from al_malloc with the kind and site given at init. A
 * zeroed us is US_INIT(0, NULL).
 */
#ifndef FAKEGC_US_H
#define FAKEGC_US_H

#include <stddef.h>
#include <stdint.h>

#include "alloc/al.h"

typedef struct us {
    uint64_t *key;     /* 0: empty */
    size_t cap, n;     /* n counts the key 0 too */
    int has_zero;
    al_kind kind;
    const char *site;
} us;
#define US_INIT(kind, site) { NULL, 0, 0, 0, (kind), (site) }

int us_add(us *s, uint64_t k);
int us_has(const us *s, uint64_t k);
/* Room for n keys in all without another allocation: 0, or -1. */
int us_reserve(us *s, size_t n);
void us_free(us *s);

#endif
