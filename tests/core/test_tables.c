/* test_tables.c - the interner's index (ix.h) and the u64 set (us.h):
 * growth, colliding hashes, the key 0, and a clean failure when the
 * allocator refuses. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/ix.h"
#include "core/us.h"

typedef struct words {
    char (*w)[16];
    size_t n;
} words;

static int word_eq(const void *ctx, uint32_t id, const void *key)
{
    const words *ws = ctx;
    cr_assert_lt(id, ws->n, "eq asked for id %u of %zu", id, ws->n);
    return strcmp(ws->w[id], key) == 0;
}

/* key's id, added as entry ws->n when new; h is the hash used */
static uint32_t intern(ix *t, words *ws, const char *key, uint64_t h)
{
    uint32_t id = ix_find(t, h, word_eq, ws, key);
    if (id != IX_NONE)
        return id;
    snprintf(ws->w[ws->n], sizeof ws->w[0], "%s", key);
    if (ix_add(t, h, (uint32_t)ws->n) != 0)
        return IX_NONE;
    return (uint32_t)ws->n++;
}

static void intern_many(uint64_t (*hash)(const char *), size_t count)
{
    uint64_t base = al_live_bytes();
    char (*buf)[16] = calloc(count, sizeof *buf);
    words ws = {buf, 0};
    ix t = IX_INIT(AL_K_OTHER, "test ix");
    char key[16];
    for (size_t i = 0; i < count; i++) {
        snprintf(key, sizeof key, "w%zu", i);
        cr_assert_eq(intern(&t, &ws, key, hash(key)), i, "new key %s", key);
    }
    cr_assert_eq(t.n, count, "indexed %zu, want %zu", t.n, count);
    cr_assert_geq(t.cap, 2 * count, "cap %zu for %zu ids: over half full", t.cap, count);
    for (size_t i = 0; i < count; i++) {   /* every key after all the growth */
        snprintf(key, sizeof key, "w%zu", i);
        uint32_t id = ix_find(&t, hash(key), word_eq, &ws, key);
        cr_assert_eq(id, i, "find %s: %u, want %zu", key, id, i);
        cr_assert_eq(intern(&t, &ws, key, hash(key)), i, "again %s", key);
    }
    cr_assert_eq(ws.n, count, "a known key was added again: %zu entries", ws.n);
    cr_assert_eq(ix_find(&t, hash("absent"), word_eq, &ws, "absent"), IX_NONE, "absent key");
    ix_free(&t);
    cr_assert_eq(al_live_bytes(), base, "bytes left: %llu, were %llu",
                 (unsigned long long)al_live_bytes(), (unsigned long long)base);
    free(buf);
}

static uint64_t good_hash(const char *s) { return ix_hash_str(s); }
static uint64_t one_hash(const char *s) { (void)s; return 42; }

Test(ix, grows_and_keeps_every_id)
{
    intern_many(good_hash, 5000);
}

/* Every key on one hash: found by eq alone, through the longest probe. */
Test(ix, colliding_hashes_are_told_apart_by_eq)
{
    intern_many(one_hash, 300);
}

Test(ix, empty_index_finds_nothing)
{
    ix t = IX_INIT(AL_K_OTHER, "test ix");
    words ws = {NULL, 0};
    cr_assert_eq(ix_find(&t, 1, word_eq, &ws, "x"), IX_NONE, "empty index found a key");
    ix_free(&t);
    cr_assert_eq(t.cap, 0, "freed cap %zu", t.cap);
}

/* A refused allocation: -1, the index as it was and still usable. */
Test(ix, out_of_memory_leaves_the_index_as_it_was)
{
    char buf[64][16];
    words ws = {buf, 0};
    ix t = IX_INIT(AL_K_OTHER, "test ix");
    char key[16];
    for (int i = 0; i < 8; i++) {   /* 8 of 16 slots: the next add must grow */
        snprintf(key, sizeof key, "k%d", i);
        cr_assert_eq(intern(&t, &ws, key, ix_hash_str(key)), (uint32_t)i, "key %s", key);
    }
    size_t cap = t.cap;
    uint64_t *slot = t.slot;
    al_fail_at(1, 0);
    cr_assert_eq(ix_add(&t, ix_hash_str("k8"), 8), -1, "add past half with no memory");
    al_fail_at(0, 0);
    cr_assert(t.cap == cap && t.slot == slot && t.n == 8, "changed: cap %zu (was %zu), n %zu",
              t.cap, cap, t.n);
    for (int i = 0; i < 8; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cr_assert_eq(ix_find(&t, ix_hash_str(key), word_eq, &ws, key), (uint32_t)i, "%s", key);
    }
    cr_assert_eq(ix_add(&t, ix_hash_str("k8"), 8), 0, "add once memory is back");
    ix_free(&t);
}

Test(ix, text_hashes)
{
    cr_assert_eq(ix_hash_str(NULL), ix_hash_str(""), "NULL hashes as \"\"");
    cr_assert_eq(ix_hash_str("abc"), ix_hash_mem("abcd", 3), "text and bytes");
    cr_assert_eq(ix_hash_str("a"), 0xaf63dc4c8601ec8cULL, "FNV-1a of \"a\": %llx",
                 (unsigned long long)ix_hash_str("a"));
    cr_assert_eq(ix_hash_str(""), 14695981039346656037ULL, "FNV-1a's offset basis: %llu",
                 (unsigned long long)ix_hash_str(""));
    cr_assert_eq(ix_hash_more(ix_hash_mem("ab", 2), "cd", 2), ix_hash_str("abcd"),
                 "in parts as whole: %llx %llx",
                 (unsigned long long)ix_hash_more(ix_hash_mem("ab", 2), "cd", 2),
                 (unsigned long long)ix_hash_str("abcd"));
    cr_assert_eq(ix_hash_u64(IX_FNV_BASIS, 0x61), ix_hash_mem("a\0\0\0\0\0\0\0", 8),
                 "a number's 8 bytes, least significant first: %llx %llx",
                 (unsigned long long)ix_hash_u64(IX_FNV_BASIS, 0x61),
                 (unsigned long long)ix_hash_mem("a\0\0\0\0\0\0\0", 8));
    cr_assert_neq(ix_hash_mix(1, 2), ix_hash_mix(2, 1), "mix is ordered");
}

Test(us, grows_and_holds_every_key)
{
    uint64_t base = al_live_bytes();
    us s = US_INIT(AL_K_OTHER, "test us");
    for (uint64_t k = 0; k < 20000; k += 2)
        cr_assert_eq(us_add(&s, k << 20), 1, "new key %llu", (unsigned long long)k);
    cr_assert_eq(s.n, 10000, "count %zu", s.n);
    for (uint64_t k = 0; k < 20000; k++) {
        int want = (k % 2) == 0;
        cr_assert_eq(us_has(&s, k << 20), want, "has %llu", (unsigned long long)k);
        if (want)
            cr_assert_eq(us_add(&s, k << 20), 0, "again %llu", (unsigned long long)k);
    }
    cr_assert_eq(s.n, 10000, "count after re-adds %zu", s.n);
    us_free(&s);
    cr_assert_eq(al_live_bytes(), base, "bytes left");
}

/* 0 marks an empty slot: the key 0 is a flag, UINT64_MAX a plain key. */
Test(us, zero_and_max_are_keys)
{
    us s = US_INIT(AL_K_OTHER, "test us");
    cr_assert_eq(us_has(&s, 0), 0, "empty set has 0");
    cr_assert_eq(us_add(&s, 0), 1, "add 0");
    cr_assert_eq(us_add(&s, 0), 0, "add 0 again");
    cr_assert_eq(us_has(&s, UINT64_MAX), 0, "max before add");
    cr_assert_eq(us_add(&s, UINT64_MAX), 1, "add max");
    cr_assert(us_has(&s, 0) && us_has(&s, UINT64_MAX) && !us_has(&s, 1), "members");
    cr_assert_eq(s.n, 2, "count %zu", s.n);
    us_free(&s);
}

/* Keys whose home slots all collide (multiples of the table size). */
Test(us, colliding_keys)
{
    us s = US_INIT(AL_K_OTHER, "test us");
    cr_assert_eq(us_reserve(&s, 512), 0, "reserve");
    for (uint64_t k = 1; k <= 256; k++)
        cr_assert_eq(us_add(&s, k << 40), 1, "add %llu", (unsigned long long)k);
    cr_assert_eq(s.cap, 1024, "no growth within the reserve: cap %zu", s.cap);
    for (uint64_t k = 1; k <= 256; k++)
        cr_assert(us_has(&s, k << 40) && !us_has(&s, (k << 40) + 1), "key %llu",
                  (unsigned long long)k);
    us_free(&s);
}

Test(us, out_of_memory_leaves_the_set_as_it_was)
{
    us s = US_INIT(AL_K_OTHER, "test us");
    al_fail_at(1, 0);
    cr_assert_eq(us_add(&s, 7), -1, "first add with no memory");
    al_fail_at(0, 0);
    cr_assert(s.n == 0 && s.cap == 0 && !us_has(&s, 7), "changed: n %zu cap %zu", s.n, s.cap);
    for (uint64_t k = 1; k <= 8; k++)
        cr_assert_eq(us_add(&s, k), 1, "add %llu", (unsigned long long)k);
    al_fail_at(1, 0);
    cr_assert_eq(us_add(&s, 9), -1, "growing add with no memory");
    cr_assert_eq(us_add(&s, 3), 0, "a member needs no memory");
    al_fail_at(0, 0);
    cr_assert(s.n == 8 && !us_has(&s, 9) && us_has(&s, 8), "changed: n %zu", s.n);
    us_free(&s);
}
