/* hp_mem.c - the heap analysis' arrays; big ones kept for the next phase.
 *
 * An analysis of millions of objects makes and drops arrays of n entries
 * phase by phase (a BFS queue, the dominator search's stacks and post
 * order, the reverse edges). Each is a block of several MiB, which the
 * libc allocator mmaps and gives back when freed (al_libc.c), so each
 * phase's arrays were pages the kernel faulted in and zeroed again: on
 * this project's VMs 0.6-3 ns a byte, the largest single cost of a report.
 *
 * A block of HP_MEM_BIG bytes or more is kept when freed (up to
 * HP_MEM_KEEP of them), and the next request it fits takes it: a block
 * at least the size asked and at most 1/8 bigger. A request that no kept
 * block fits first gives back every kept block, so what is kept never
 * stands beside a new block: a kept block is held between a free and the
 * next request, where it would have been given back, but memory grows
 * only at a new block, and there the memory held is what the plain
 * allocate-and-free order held, plus at most the 1/8 slack: the peak does
 * not move.
 * hp_release gives back what is kept (hp_mem_flush), so no block outlives
 * the snapshots. Under a memory checker (Valgrind, ASan) nothing is kept:
 * a read of a dropped array stays an error it reports.
 *
 * Contents of a block handed out again are the last user's (malloc's
 * contract: unspecified). Single-threaded, like the core.
 */
#include "heap/hp_int.h"

#include "alloc/al.h"
#include "core/er.h"
#include "vg/vg.h"

enum { HP_MEM_BIG = 4 << 20, HP_MEM_KEEP = 16 };

typedef struct kept {
    void *p;          /* NULL: a free row */
    size_t bytes;     /* what it was allocated with */
    int in_use;       /* handed out (its caller frees it with another size) */
} kept;

static kept rows[HP_MEM_KEEP];

static int keeping(void) { return !VG_ASAN_ENABLED && !vg_running(); }

/* The smallest kept, unused block that fits bytes, or NULL. */
static kept *fitting(size_t bytes)
{
    kept *best = NULL;
    for (int i = 0; i < HP_MEM_KEEP; i++) {
        kept *k = &rows[i];
        if (k->p && !k->in_use && k->bytes >= bytes && k->bytes - bytes <= bytes / 8 &&
            (!best || k->bytes < best->bytes))
            best = k;
    }
    return best;
}

static kept *row_of(const void *p)
{
    for (int i = 0; i < HP_MEM_KEEP; i++)
        if (rows[i].p == p)
            return &rows[i];
    return NULL;
}

void hp_mem_flush(void)
{
    for (int i = 0; i < HP_MEM_KEEP; i++)
        if (rows[i].p && !rows[i].in_use) {
            al_free(rows[i].p, rows[i].bytes, AL_K_HEAP);
            rows[i] = (kept){0};
        }
}

static void *big_alloc(size_t bytes)
{
    kept *k = fitting(bytes);
    if (k) {
        k->in_use = 1;
        return k->p;
    }
    hp_mem_flush();
    void *p = al_malloc(bytes, AL_K_HEAP, "hp");
    kept *r = p ? row_of(NULL) : NULL;
    if (r)
        *r = (kept){p, bytes, 1};
    return p;
}

void *hp_xalloc(size_t count, size_t size)
{
    if (count == 0)
        count = 1;
    if (size && count > SIZE_MAX / size) {
        er_set(ER_OOM, "heap analysis: %zu x %zu bytes overflows", count, size);
        return NULL;
    }
    size_t bytes = count * size;
    void *p = bytes >= HP_MEM_BIG && keeping() ? big_alloc(bytes)
                                               : al_malloc(bytes, AL_K_HEAP, "hp");
    if (!p)
        er_set(ER_OOM, "out of memory in heap analysis (%zu bytes)", bytes);
    return p;
}

void hp_xfree(void *p, size_t count, size_t size)
{
    if (!p)
        return;
    size_t bytes = (count ? count : 1) * size;
    kept *k = bytes >= HP_MEM_BIG ? row_of(p) : NULL;
    if (k)
        k->in_use = 0;
    else
        al_free(p, bytes, AL_K_HEAP);
}
