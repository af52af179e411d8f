/* us.c - a set of 64-bit keys (us.h). */
#include "core/us.h"

enum { US_CAP0 = 16 };

static size_t home(uint64_t k, size_t mask)
{
    k *= 0x9E3779B97F4A7C15ULL;
    return (size_t)(k ^ (k >> 29)) & mask;
}

/* k's slot, or the empty one where it would go (k != 0, cap > 0). */
static size_t slot_of(const uint64_t *key, size_t mask, uint64_t k)
{
    size_t j = home(k, mask);
    while (key[j] && key[j] != k)
        j = (j + 1) & mask;
    return j;
}

int us_reserve(us *s, size_t n)
{
    if (2 * n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : US_CAP0;
    while (2 * n > cap)
        cap *= 2;
    uint64_t *key = al_calloc(cap, sizeof *key, s->kind, s->site ? s->site : "us");
    if (!key)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->key[i])
            key[slot_of(key, cap - 1, s->key[i])] = s->key[i];
    al_free(s->key, s->cap * sizeof *s->key, s->kind);
    s->key = key;
    s->cap = cap;
    return 0;
}

int us_has(const us *s, uint64_t k)
{
    if (!k)
        return s->has_zero;
    return s->cap && s->key[slot_of(s->key, s->cap - 1, k)] == k;
}

int us_add(us *s, uint64_t k)
{
    if (us_has(s, k))
        return 0;
    if (!k) {
        s->has_zero = 1;
        s->n++;
        return 1;
    }
    if (us_reserve(s, s->n + 1) != 0)
        return -1;
    s->key[slot_of(s->key, s->cap - 1, k)] = k;
    s->n++;
    return 1;
}

void us_free(us *s)
{
    al_free(s->key, s->cap * sizeof *s->key, s->kind);
    s->key = NULL;
    s->cap = s->n = 0;
    s->has_zero = 0;
}
