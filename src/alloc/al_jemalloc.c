/* al_jemalloc.c - jemalloc, linked into the binary (Debian's libjemalloc
 * cannot be dlopen'ed), so it also provides the process's malloc.
 *
 * Unchecked (no Valgrind, no ASan), blocks come from jemalloc's malloc and
 * go back through sdallocx with the exact size (the table's contract gives
 * it): both are jemalloc's fast paths through the thread's tcache.
 *
 * Checked, blocks come from a private jemalloc arena with a private
 * (explicit) tcache, created once per process: plain malloc() in the same
 * process (Criterion, stdio) never shares our regions, so the Valgrind
 * annotations below cannot collide with unannotated blocks (and under
 * Valgrind or ASan plain malloc is not jemalloc's at all).
 *
 * Under a memory checker the blocks are annotated:
 *  - Valgrind: each block is registered with MALLOCLIKE/FREELIKE so a leaked
 *    block is reported with its allocation stack. jemalloc's own metadata
 *    (extent base addresses, tcache stacks that keep popped pointers) points
 *    at region starts, which would make a leaked block look "still
 *    reachable"; so under Valgrind the block handed out starts OFF bytes
 *    into the region, where no jemalloc pointer points, and the bytes around
 *    it are marked unaddressable. realloc then moves (malloc+copy+free).
 *  - ASan: the same calls poison freed blocks and the region tails.
 */
#include "alloc/al_wrap.h"
#include "vg/vg.h"

#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

enum { VG_OFF = 16 };   /* keeps 16-byte alignment */

typedef struct je_ctx {
    int flags;          /* MALLOCX_ARENA | MALLOCX_TCACHE */
    int checked;        /* annotate blocks (Valgrind or ASan) */
    size_t off;         /* VG_OFF under Valgrind, else 0 */
} je_ctx;

static int je_state;          /* 0 untried, 1 ready, -1 failed */
static unsigned je_arena, je_tcache;

/* Dirty pages are never given back (dirty_decay_ms -1, every arena and
 * the default for new ones), as glibc keeps up to 128 MiB of free heap
 * (al_libc.c). With jemalloc's 10 s decay, a collection that freed a
 * million objects purged their pages while the benchmark's next round
 * faulted them in again (page faults and unmap_page_range were 15% of
 * gc/cycles-1m): 27-30 -> 20 ns, gc/cycles-10m 26-32 -> 20. Peak RSS,
 * which the reports measure, does not change. Advice only: a failing
 * mallctl leaves jemalloc's default. */
static void je_keep_dirty_pages(void)
{
    ssize_t never = -1;
    unsigned n = 0;
    size_t sz = sizeof n;
    (void)mallctl("arenas.dirty_decay_ms", NULL, NULL, &never, sizeof never);
    if (mallctl("arenas.narenas", &n, &sz, NULL, 0) != 0)
        return;
    for (unsigned i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", i);
        (void)mallctl(name, NULL, NULL, &never, sizeof never);  /* EFAULT: unused */
    }
}

static int je_init(void)
{
    if (je_state == 0) {
        size_t sz = sizeof je_arena;
        je_state = -1;
        je_keep_dirty_pages();
        if (mallctl("arenas.create", &je_arena, &sz, NULL, 0) == 0) {
            sz = sizeof je_tcache;
            if (mallctl("tcache.create", &je_tcache, &sz, NULL, 0) == 0)
                je_state = 1;
        }
    }
    return je_state > 0 ? 0 : -1;
}

/* jemalloc's resident bytes (all its arenas: the pages it has touched). */
static uint64_t je_footprint(void *ctx)
{
    (void)ctx;
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    size_t resident = 0, rsz = sizeof resident;
    if (mallctl("epoch", &epoch, &sz, &epoch, sz) != 0 ||
        mallctl("stats.resident", &resident, &rsz, NULL, 0) != 0)
        return 0;
    return resident;
}

uint64_t al_jemalloc_allocated(void)
{
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    size_t allocated = 0, asz = sizeof allocated;
    /* stats are snapshots refreshed by writing the epoch */
    if (mallctl("epoch", &epoch, &sz, &epoch, sz) != 0)
        return 0;
    if (mallctl("stats.allocated", &allocated, &asz, NULL, 0) != 0)
        return 0;
    return allocated;
}

static void *je_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    je_ctx *c = ctx;
    (void)kind; (void)site;
    if (n == 0)
        n = 1;
    if (!c->checked)
        return malloc(n);   /* jemalloc's own: it exports malloc in this binary */
    char *base = mallocx(n + c->off, c->flags);
    if (!base)
        return base;
    char *p = base + c->off;
    size_t usable = sallocx(base, c->flags);
    vg_noaccess(base, c->off);
    vg_malloclike(p, n);
    vg_noaccess(p + n, usable - c->off - n);
    return p;
}

static void je_free(void *ctx, void *p, size_t n, al_kind kind)
{
    je_ctx *c = ctx;
    (void)kind;
    if (!p)
        return;
    if (n == 0)
        n = 1;
    if (!c->checked) {
        sdallocx(p, n, 0);  /* sized free: jemalloc's fast path */
        return;
    }
    sdallocx((char *)p - c->off, n + c->off, c->flags);
    vg_freelike(p, n);
}

static void *je_realloc(void *ctx, void *p, size_t old_n, size_t n,
                        al_kind kind, const char *site)
{
    je_ctx *c = ctx;
    if (!p)
        return je_malloc(ctx, n, kind, site);
    if (n == 0)
        n = 1;
    if (!c->checked)
        return rallocx(p, n, c->flags);
    void *q = je_malloc(ctx, n, kind, site);
    if (!q)
        return NULL;
    memcpy(q, p, old_n < n ? old_n : n);
    je_free(ctx, p, old_n, kind);
    return q;
}

static size_t je_size(void *ctx, const void *p)
{
    je_ctx *c = ctx;
    if (!p)
        return 0;
    return sallocx((const char *)p - c->off, c->flags) - c->off;
}

static void je_destroy(al_allocator *self)
{
    al_sys_free(self->ctx);
    al_obj_free(self);
}

static const al_allocator je_methods = {
    .xmalloc = je_malloc, .xfree = je_free, .xrealloc = je_realloc, .xsize = je_size,
    .xdestroy = je_destroy, .xfootprint = je_footprint};

al_allocator *al_jemalloc_new(void)
{
    if (je_init() != 0)
        return NULL;
    je_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->off = vg_running() ? VG_OFF : 0;
    c->checked = vg_running() || VG_ASAN_ENABLED;
    /* The private arena and tcache only matter when blocks are annotated
     * (see the top of the file). Unchecked, flags 0 takes jemalloc's fast
     * path through the thread's own tcache: 21 -> ~13 ns per 64 B pair. */
    c->flags = c->checked ? MALLOCX_ARENA(je_arena) | MALLOCX_TCACHE(je_tcache) : 0;
    return al_obj_new("jemalloc", c, &je_methods);
}
