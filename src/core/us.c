/* us.c - a set of 64-bit keys (us.h). */
#include "core/us.h"

#include "core/ix.h"

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
    return ix_grow_words(&s->key, &s->cap, n, home, s->kind, s->site ? s->site : "us");
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
    *s = (us)US_INIT(s->kind, s->site);
}
