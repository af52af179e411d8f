/* al_arena.c - a size-class pool allocator of our own.
 *
 * Requests up to ARENA_MAX_SMALL bytes are rounded up to one of NCLASS size
 * classes (16..128 by 16, then four classes per power of two up to 4096).
 * Each class carves blocks from its own 64 KiB slabs, aligned to their size
 * so that a block finds its slab by masking its address. Larger requests go
 * straight to glibc, advised huge pages as the libc allocator's are. Slabs are kept until the arena is destroyed.
 *
 * Reuse is by address, as jemalloc's slabs do, not last-freed-first: each
 * slab has a bitmap of its free blocks, and a class hands out the lowest
 * free block of its current slab; when that slab is full it moves on to a
 * slab where a block was freed since (a per-class list), then to a new one.
 * A LIFO free list hands blocks back in the reverse of the order they were
 * freed, and that order compounds: a collector that frees a million
 * objects in creation order, give or take a window, gets them back in a
 * permutation that is scrambled further after every round, and its next
 * pass over them misses the cache where glibc (which coalesces the freed
 * chunks and carves them again in order) does not. By address, the blocks
 * of a batch freed together come back in the order they lie in memory,
 * whatever order they died in. A block freed now is still the next one
 * handed out when it is the lowest free one of its current slab, which is
 * the case in steady churn.
 *
 * The slab header sits at a per-slab offset (its colour, a hash of the
 * slab's address), not at the slab's start: slabs are 64 KiB-aligned, so
 * headers at their starts would all share one cache set, and a batch that
 * frees into many slabs would evict one header with the next.
 *
 * Memory checkers: every small block is registered with Valgrind's
 * MALLOCLIKE/FREELIKE requests (memcheck then ignores the enclosing slab,
 * which is a glibc block, and treats our blocks as heap blocks: leaks are
 * reported with the allocating stack), and everything in a slab that is not
 * a live block or the header is unaddressable, so a use after free or a
 * write past the end of the requested size is an error. The allocator never
 * touches a free block. The same calls poison and unpoison under ASan. The
 * annotations are made only when a checker is present at creation.
 * At destroy, a slab that still holds live (leaked) blocks is not freed, so
 * the leak stays reportable and no freed memory ever holds a live block.
 */
#include "alloc/al_wrap.h"
#include "vg/vg.h"

#include <string.h>

enum {
    SLAB_SIZE = 64 * 1024,
    NCOLOUR = 16,               /* header offsets: 0, 64, ... 960 */
    NCLASS = 28,
    ARENA_MAX_SMALL = 4096,
    MAX_WORDS = SLAB_SIZE / 16 / 64     /* bitmap words of the smallest class */
};

typedef struct slab {
    uint32_t first;             /* offset of the first block in the slab (not
                                   a pointer: memcheck would count it as
                                   holding that block) */
    uint32_t size;              /* the class's block size */
    uint32_t inv;               /* ceil(2^32 / size): index = offset * inv >> 32 */
    uint16_t nwords;            /* bitmap words that hold blocks */
    uint16_t cursor;            /* no free block in the words below */
    uint16_t cls;
    uint8_t listed;             /* current, or on the class's list of slabs
                                   with free blocks */
    struct slab *next;          /* all slabs of the arena */
    struct slab *next_free;     /* the class's list of slabs with free blocks */
    uint32_t nblocks;
    uint64_t bits[MAX_WORDS];   /* 1: the block is free */
} slab;

typedef struct arena_ctx {
    int checked;                /* under Valgrind or ASan: annotate blocks */
    slab *cur[NCLASS];          /* slab blocks are taken from, per class */
    slab *with_free[NCLASS];    /* other slabs with free blocks, per class */
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

/* The header of the slab at raw (64 KiB-aligned): at its colour's offset. */
static slab *header_at(uintptr_t raw)
{
    uint32_t colour = (uint32_t)((raw >> 16) * 0x9E3779B1u) >> 28;     /* 0..15 */
    return (slab *)(raw + colour * 64u);
}

static slab *slab_of(const void *p)
{
    return header_at((uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1));
}

static uintptr_t raw_of(const slab *s)
{
    return (uintptr_t)s & ~(uintptr_t)(SLAB_SIZE - 1);
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

/* Fill s's header for class cls: every block free. */
static void slab_init(slab *s, unsigned cls)
{
    uintptr_t raw = raw_of(s);
    size_t sz = class_size(cls);
    uintptr_t first = ((uintptr_t)s + sizeof *s + 15) & ~(uintptr_t)15;
    uint32_t nb = (uint32_t)((raw + SLAB_SIZE - first) / sz);
    s->first = (uint32_t)(first - raw);
    s->size = (uint32_t)sz;
    s->inv = (uint32_t)(((uint64_t)1 << 32) / sz + 1);
    s->nblocks = nb;
    s->nwords = (uint16_t)((nb + 63) / 64);
    s->cursor = 0;
    s->cls = (uint16_t)cls;
    memset(s->bits, 0, sizeof s->bits);
    for (uint32_t w = 0; w < nb / 64; w++)
        s->bits[w] = ~(uint64_t)0;
    if (nb % 64)
        s->bits[nb / 64] = ((uint64_t)1 << (nb % 64)) - 1;
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
    slab *s = header_at((uintptr_t)raw);
    slab_init(s, cls);
    s->next = c->slabs;
    c->slabs = s;
    c->nslabs++;
    if (c->checked) {
        vg_noaccess(raw, (size_t)((char *)s - raw));
        vg_noaccess(raw + s->first, SLAB_SIZE - s->first);
    }
    return s;
}

/* Lowest free block of s, taken; NULL (cursor at the end) when s is full. */
static char *slab_take(slab *s)
{
    unsigned w = s->cursor;
    while (w < s->nwords && !s->bits[w])
        w++;
    s->cursor = (uint16_t)w;
    if (w == s->nwords)
        return NULL;
    uint64_t word = s->bits[w];
    s->bits[w] = word & (word - 1);
    size_t i = (size_t)w * 64 + (unsigned)__builtin_ctzll(word);
    return (char *)raw_of(s) + s->first + i * s->size;
}

/* The current slab of cls is full: the next slab freed into, or a new one.
 * A slab on with_free has a free block: it went on the list at a free, and
 * blocks are only taken from the current slab. */
__attribute__((noinline)) static char *take_slow(arena_ctx *c, unsigned cls)
{
    slab *s = c->cur[cls];
    if (s)
        s->listed = 0;
    if ((s = c->with_free[cls]) != NULL) {
        c->with_free[cls] = s->next_free;
    } else if ((s = slab_new(c, cls)) != NULL) {
        s->listed = 1;
    } else {
        c->cur[cls] = NULL;
        return NULL;
    }
    c->cur[cls] = s;
    return slab_take(s);
}

static void *arena_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    arena_ctx *c = ctx;
    (void)kind; (void)site;
    if (n > ARENA_MAX_SMALL)
        return al_sys_malloc_big(n);
    if (n == 0)
        n = 1;
    unsigned cls = class_of(n);
    slab *s = c->cur[cls];
    char *p = s ? slab_take(s) : NULL;
    if (!p && !(p = take_slow(c, cls)))
        return NULL;
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
    if (c->checked)
        vg_freelike(p, n ? n : 1);
    slab *s = slab_of(p);
    uint64_t off = (uint64_t)((uintptr_t)p - raw_of(s) - s->first);
    uint32_t i = (uint32_t)((off * s->inv) >> 32);
    unsigned w = i / 64;
    s->bits[w] |= (uint64_t)1 << (i % 64);
    if (w < s->cursor)
        s->cursor = (uint16_t)w;
    if (!s->listed) {
        s->listed = 1;
        s->next_free = c->with_free[s->cls];
        c->with_free[s->cls] = s;
    }
}

static void *arena_realloc(void *ctx, void *p, size_t old_n, size_t n,
                           al_kind kind, const char *site)
{
    if (!p)
        return arena_malloc(ctx, n, kind, site);
    if (old_n > ARENA_MAX_SMALL && n > ARENA_MAX_SMALL)
        return al_sys_realloc_big(p, n);
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
    uintptr_t raw = (uintptr_t)p & ~(uintptr_t)(SLAB_SIZE - 1);
    if (set_has(c, raw))
        return slab_of(p)->size;
    return al_sys_usable_size(p);
}

/* Blocks of s still live: its blocks less its free ones. */
static uint32_t slab_live(const slab *s)
{
    uint32_t nfree = 0;
    for (unsigned w = 0; w < s->nwords; w++)
        nfree += (uint32_t)__builtin_popcountll(s->bits[w]);
    return s->nblocks - nfree;
}

static void arena_destroy(al_allocator *self)
{
    arena_ctx *c = self->ctx;
    slab *s = c->slabs;
    while (s) {
        slab *next = s->next;
        if (slab_live(s) == 0) {
            char *raw = (char *)raw_of(s);
            if (c->checked)
                vg_undefined(raw, SLAB_SIZE);
            al_sys_free(raw);
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

static const al_allocator arena_methods = {
    .xmalloc = arena_malloc, .xfree = arena_free, .xrealloc = arena_realloc,
    .xsize = arena_size, .xdestroy = arena_destroy, .xfootprint = arena_footprint};

al_allocator *al_arena_new(void)
{
    arena_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    /* The annotations are client requests (a few instructions each even
     * outside Valgrind); decided once, like the jemalloc allocator does. */
    c->checked = vg_running() || VG_ASAN_ENABLED;
    return al_obj_new("arena", c, &arena_methods);
}
