/* scr.c - scratch memory outside the heap (scr.h). */
#include "scr.h"

#include <sys/mman.h>

static size_t page_round(size_t bytes)
{
    return (bytes + 4095) & ~(size_t)4095;
}

void *scr_reserve(scr *s, size_t bytes)
{
    if (bytes <= s->bytes)
        return s->p;
    size_t cap = s->bytes ? s->bytes : 32768;
    while (cap < bytes)
        cap *= 2;
    void *p = mmap(NULL, page_round(cap), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (cap >= SCR_HUGE)
        (void)madvise(p, page_round(cap), MADV_HUGEPAGE);   /* advice only */
#endif
    if (s->p)
        munmap(s->p, s->bytes);
    s->p = p;
    s->bytes = page_round(cap);
    return p;
}

void scr_release(scr *s)
{
    if (s->p)
        munmap(s->p, s->bytes);
    s->p = NULL;
    s->bytes = 0;
}
