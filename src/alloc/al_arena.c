/* al_arena.c - a size-class pool allocator of our own.
 *
 * Requests up to ARENA_MAX_SMALL bytes are rounded up to one of NCLASS size
 * classes (16..128 by 16, then four classes per power of two up to 4096).
 * Each class carves blocks from its own 64 KiB slabs, aligned to their size
 * so that a block finds its slab by masking its address; freed blocks go on
 * a per-class LIFO free list (the link lives in the freed block), so a freed
 * block is the next one handed out for its class. Larger requests go
 * straight to glibc. Slabs are kept until the arena is destroyed.
 *
 * Memory checkers: every small block is registered with Valgrind's
 * MALLOCLIKE/FREELIKE requests (memcheck then ignores the enclosing slab,
 * which is a glibc block, and treats our blocks as heap blocks: leaks are
 * reported with the allocating stack), and everything in a slab that is not
 * a live block is unaddressable, so a use after free or a write past the end
 * of the requested size is an error. The allocator itself touches free
 * blocks only to read or write the free-list link, bracketed by defined /
 * noaccess requests. The same calls poison and unpoison under ASan. The
 * annotations are made only when a checker is present at creation.
 * At destroy, a slab that still holds live (leaked) blocks is not freed, so
 * the leak stays reportable and no freed memory ever holds a live block.
 */
#include "alloc/al_wrap.h"
#include "vg/vg.h"

#include <string.h>

enum {
    SLAB_SIZE = 64 * 1024,
    SLAB_HDR = 64,              /* header space at the start of a slab */
    NCLASS = 28,
    ARENA_MAX_SMALL = 4096
};

typedef struct slab {
    struct slab *next;          /* all slabs of the arena */
    char *bump, *end;           /* uncarved part */
    uint32_t cls;
    uint32_t live;              /* live blocks: computed at destroy only */
} slab;

typedef struct arena_ctx {
    int checked;                /* under Valgrind or ASan: annotate blocks */
    uint64_t nlive;             /* live small blocks (all slabs) */
    void *free_head[NCLASS];
    slab *cur[NCLASS];          /* slab being carved, per class */
    slab *slabs;
    uintptr_t *set;             /* sorted slab addresses (for xsize) */
    size_t nset, capset;
    uint64_t nslabs;            /* slabs taken from the system */
} arena_ctx;

/* Class index of a size in 1..ARENA_MAX_SMALL. */
static unsigned class_of(size_t n)
{
    if (n <= 128)
        return n ? (unsigned)((n + 15) / 16 - 1) : 0;
    unsigned b = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
    return 8u + (b - 7u) * 4u + (unsigned)((n - 1) >> (b - 2u)) - 4u;
}

static size_t class_size(unsigned c)
{
    if (c < 8)
        return (size_t)(c + 1) * 16;
    unsigned k = c - 8, b = 7 + k / 4;
    return (size_t)(4 + k % 4 + 1) << (b - 2);
}

size_t al_arena_class_size(size_t n)
{
    if (n > ARENA_MAX_SMALL)
        return 0;
    return class_size(class_of(n ? n : 1));
}

static slab *slab_of(const void *p)
{
    return (slab *)((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

static int set_add(arena_ctx *c, uintptr_t s)
{
    if (c->nset == c->capset) {
        size_t cap = c->capset ? c->capset * 2 : 16;
        uintptr_t *ns = al_sys_realloc(c->set, cap * sizeof *ns);
        if (!ns)
            return -1;
        c->set = ns;
        c->capset = cap;
    }
    size_t i = c->nset;
    while (i > 0 && c->set[i - 1] > s) {
        c->set[i] = c->set[i - 1];
        i--;
    }
    c->set[i] = s;
    c->nset++;
    return 0;
}

static int set_has(const arena_ctx *c, uintptr_t s)
{
    size_t lo = 0, hi = c->nset;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->set[mid] == s)
            return 1;
        if (c->set[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static slab *slab_new(arena_ctx *c, unsigned cls)
{
    char *raw = al_sys_memalign(SLAB_SIZE, SLAB_SIZE);
    if (!raw)
        return NULL;
    if (set_add(c, (uintptr_t)raw) != 0) {
        al_sys_free(raw);
        return NULL;
    }
    size_t sz = class_size(cls);
    slab *s = (slab *)raw;
    s->cls = cls;
    s->live = 0;
    s->bump = raw + SLAB_HDR;
    s->end = s->bump + ((SLAB_SIZE - SLAB_HDR) / sz) * sz;
    s->next = c->slabs;
    c->slabs = s;
    c->nslabs++;
    c->cur[cls] = s;
    if (c->checked)
        vg_noaccess(raw + SLAB_HDR, SLAB_SIZE - SLAB_HDR);
    return s;
}

static void *arena_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    arena_ctx *c = ctx;
    (void)kind; (void)site;
    if (n > ARENA_MAX_SMALL)
        return al_sys_malloc(n);
    if (n == 0)
        n = 1;
    unsigned cls = class_of(n);
    char *p = c->free_head[cls];
    if (p) {
        if (c->checked)
            vg_defined(p, sizeof(void *));
        memcpy(&c->free_head[cls], p, sizeof(void *));
        if (c->checked)
            vg_noaccess(p, sizeof(void *));
        /* The next pop reads the next block's link: a chain of dependent
         * loads when the list is scattered (blocks freed in hash order).
         * Start that load now, so it overlaps the caller's work. */
        __builtin_prefetch(c->free_head[cls], 1);
    } else {
        size_t sz = class_size(cls);
        slab *s = c->cur[cls];
        if (!s || (size_t)(s->end - s->bump) < sz) {
            s = slab_new(c, cls);
            if (!s)
                return NULL;
        }
        p = s->bump;
        s->bump += sz;
    }
    c->nlive++;
    if (c->checked)
        vg_malloclike(p, n);
    return p;
}

static void arena_free(void *ctx, void *p, size_t n, al_kind kind)
{
    arena_ctx *c = ctx;
    (void)kind;
    if (!p)
        return;
    if (n > ARENA_MAX_SMALL) {
        al_sys_free(p);
        return;
    }
    if (n == 0)
        n = 1;
    unsigned cls = class_of(n);
    c->nlive--;
    if (c->checked) {
        vg_freelike(p, n);
        vg_undefined(p, sizeof(void *));
    }
    memcpy(p, &c->free_head[cls], sizeof(void *));
    if (c->checked)
        vg_noaccess(p, sizeof(void *));
    c->free_head[cls] = p;
}

static void *arena_realloc(void *ctx, void *p, size_t old_n, size_t n,
                           al_kind kind, const char *site)
{
    if (!p)
        return arena_malloc(ctx, n, kind, site);
    if (old_n > ARENA_MAX_SMALL && n > ARENA_MAX_SMALL)
        return al_sys_realloc(p, n);
    void *q = arena_malloc(ctx, n, kind, site);
    if (!q)
        return NULL;
    memcpy(q, p, old_n < n ? old_n : n);
    arena_free(ctx, p, old_n, kind);
    return q;
}

static size_t arena_size(void *ctx, const void *p)
{
    arena_ctx *c = ctx;
    if (!p)
        return 0;
    slab *s = slab_of(p);
    if (set_has(c, (uintptr_t)s))
        return class_size(s->cls);
    return al_sys_usable_size(p);
}

/* Live blocks per slab: carved minus free. Counted here rather than on
 * every call: the slab headers all sit at 64 KiB-aligned addresses, so
 * they share one cache set, and a count updated on every malloc and free
 * made a batch that touches many slabs miss on its header each time
 * (convert/miss was slower on the arena than on glibc). The free lists
 * are walked only when some block is still live (a leak). */
static void count_live(arena_ctx *c)
{
    if (c->nlive == 0) {        /* the usual case: no walk of the free lists */
        for (slab *s = c->slabs; s; s = s->next)
            s->live = 0;
        return;
    }
    for (slab *s = c->slabs; s; s = s->next)
        s->live = (uint32_t)((size_t)(s->bump - ((char *)s + SLAB_HDR)) / class_size(s->cls));
    for (unsigned cls = 0; cls < NCLASS; cls++) {
        char *p = c->free_head[cls];
        while (p) {
            char *next;
            if (c->checked)
                vg_defined(p, sizeof(void *));
            memcpy(&next, p, sizeof next);
            if (c->checked)
                vg_noaccess(p, sizeof(void *));
            slab_of(p)->live--;
            p = next;
        }
    }
}

static void arena_destroy(al_allocator *self)
{
    arena_ctx *c = self->ctx;
    count_live(c);
    slab *s = c->slabs;
    while (s) {
        slab *next = s->next;
        if (s->live == 0) {
            if (c->checked)
                vg_undefined((char *)s + SLAB_HDR, SLAB_SIZE - SLAB_HDR);
            al_sys_free(s);
        }
        s = next;
    }
    al_sys_free(c->set);
    al_sys_free(c);
    al_obj_free(self);
}

static uint64_t arena_footprint(void *ctx)
{
    const arena_ctx *c = ctx;
    return c->nslabs * (uint64_t)SLAB_SIZE + c->capset * sizeof *c->set;
}

al_allocator *al_arena_new(void)
{
    arena_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    /* The annotations are client requests (a few instructions each even
     * outside Valgrind); decided once, like the jemalloc allocator does. */
    c->checked = vg_running() || VG_ASAN_ENABLED;
    al_allocator *a = al_obj_new("arena", c);
    if (!a) {
        al_sys_free(c);
        return NULL;
    }
    a->xmalloc = arena_malloc;
    a->xfree = arena_free;
    a->xrealloc = arena_realloc;
    a->xsize = arena_size;
    a->xdestroy = arena_destroy;
    a->xfootprint = arena_footprint;
    return a;
}
