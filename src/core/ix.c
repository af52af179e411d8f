/* ix.c - the interner's index (ix.h). */
#include "core/ix.h"

static void put(uint64_t *slot, size_t mask, uint32_t tag, uint32_t id)
{
    size_t j = tag & mask;
    while (slot[j])
        j = (j + 1) & mask;
    slot[j] = (uint64_t)tag << 32 | ((uint64_t)id + 1);
}

int ix_grow_words(uint64_t **slot, size_t *cap, size_t n,
                  size_t (*home)(uint64_t w, size_t mask), al_kind kind, const char *site)
{
    if (2 * n <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (2 * n > ncap)
        ncap *= 2;
    uint64_t *ns = al_calloc(ncap, sizeof *ns, kind, site ? site : "ix");
    if (!ns)
        return -1;
    for (size_t i = 0; i < *cap; i++) {
        uint64_t w = (*slot)[i];
        if (!w)
            continue;
        size_t j = home(w, ncap - 1);
        while (ns[j])
            j = (j + 1) & (ncap - 1);
        ns[j] = w;
    }
    al_free(*slot, *cap * sizeof **slot, kind);
    *slot = ns;
    *cap = ncap;
    return 0;
}

static size_t slot_home(uint64_t w, size_t mask)
{
    return (size_t)(w >> 32) & mask;
}

int ix_reserve(ix *t, size_t n)
{
    return ix_grow_words(&t->slot, &t->cap, n, slot_home, t->kind, t->site);
}

int ix_add(ix *t, uint64_t h, uint32_t id)
{
    if (ix_reserve(t, t->n + 1) != 0)
        return -1;
    put(t->slot, t->cap - 1, ix_tag(h), id);
    t->n++;
    return 0;
}

void ix_free(ix *t)
{
    al_free(t->slot, t->cap * sizeof *t->slot, t->kind);
    *t = (ix)IX_INIT(t->kind, t->site);
}
