/* The base allocators: jemalloc's stats, the arena's classes and reuse. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "vg/vg.h"
#include "vm_maps.h"

static al_allocator *make(const char *spec)
{
    al_allocator *a = NULL;
    char err[256] = "";
    cr_assert_eq(as_create(spec, &a, err, sizeof err), 0, "as_create(%s): %s", spec, err);
    return a;
}

Test(jemalloc, stats_allocated_moves)
{
    al_allocator *a = make("jemalloc");
    al_install(a);
    enum { BIG = 4 << 20 };     /* above jemalloc's tcache limit: a real extent */
    uint64_t before = al_jemalloc_allocated();
    cr_assert_gt(before, 0, "stats.allocated unavailable (jemalloc built without stats?)");
    char *p = al_malloc(BIG, AL_K_STORAGE, "t_big");
    cr_assert_not_null(p);
    memset(p, 7, BIG);
    uint64_t during = al_jemalloc_allocated();
    cr_assert_geq(during, before + BIG, "allocated %llu -> %llu after a 4 MiB block",
                  (unsigned long long)before, (unsigned long long)during);
    al_free(p, BIG, AL_K_STORAGE);
    uint64_t after = al_jemalloc_allocated();
    cr_assert_leq(after + BIG, during, "allocated %llu -> %llu after freeing it",
                  (unsigned long long)during, (unsigned long long)after);
    al_install(NULL);
    al_destroy(a);
}

Test(jemalloc, libc_blocks_do_not_move_jemalloc_stats)
{
    al_allocator *a = make("libc");
    al_install(a);
    uint64_t before = al_jemalloc_allocated();
    char *p = al_malloc(4 << 20, AL_K_STORAGE, "t_big");
    cr_assert_not_null(p);
    uint64_t during = al_jemalloc_allocated();
    cr_assert_lt(during, before + (1 << 20),
                 "a libc block must not come from jemalloc (%llu -> %llu)",
                 (unsigned long long)before, (unsigned long long)during);
    al_free(p, 4 << 20, AL_K_STORAGE);
    al_install(NULL);
    al_destroy(a);
}

Test(jemalloc, realloc_keeps_data_and_usable_size)
{
    al_allocator *a = make("jemalloc");
    al_install(a);
    unsigned char *p = al_malloc(40, AL_K_ATTR, "t");
    for (int i = 0; i < 40; i++)
        p[i] = (unsigned char)i;
    cr_assert_geq(al_usable_size(p), 40);
    p = al_realloc(p, 40, 100000, AL_K_ATTR, "t");
    cr_assert_not_null(p);
    for (int i = 0; i < 40; i++)
        cr_assert_eq(p[i], i, "byte %d lost in realloc", i);
    cr_assert_geq(al_usable_size(p), 100000);
    al_free(p, 100000, AL_K_ATTR);
    al_install(NULL);
    al_destroy(a);
}

Test(arena, class_sizes)
{
    struct { size_t n, cls; } cases[] = {
        { 0, 16 }, { 1, 16 }, { 16, 16 }, { 17, 32 }, { 64, 64 }, { 65, 80 },
        { 128, 128 }, { 129, 160 }, { 160, 160 }, { 161, 192 }, { 256, 256 },
        { 257, 320 }, { 1000, 1024 }, { 1025, 1280 }, { 4000, 4096 },
        { 4096, 4096 }, { 4097, 0 }, { 1 << 20, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(al_arena_class_size(cases[i].n), cases[i].cls,
                     "class of %zu: got %zu, want %zu", cases[i].n,
                     al_arena_class_size(cases[i].n), cases[i].cls);
    /* every class is >= the request and 16-aligned, for every small size */
    for (size_t n = 1; n <= 4096; n++) {
        size_t c = al_arena_class_size(n);
        cr_assert(c >= n && c % 16 == 0, "class %zu for %zu", c, n);
        cr_assert(c - n < c / 4 + 16, "class %zu wastes too much for %zu", c, n);
    }
}

Test(arena, reuses_freed_block_of_same_class)
{
    al_allocator *a = make("arena");
    al_install(a);
    void *p = al_malloc(64, AL_K_OBJECT, "t");
    void *keep = al_malloc(64, AL_K_OBJECT, "t");
    al_free(p, 64, AL_K_OBJECT);
    void *q = al_malloc(50, AL_K_OBJECT, "t");       /* class 64 too */
    cr_assert_eq(q, p, "a freed block must be reused by the next request of its class");
    void *r = al_malloc(100, AL_K_OBJECT, "t");      /* class 112 */
    cr_assert_neq(r, keep);
    al_free(r, 100, AL_K_OBJECT);
    void *s = al_malloc(200, AL_K_OBJECT, "t");      /* class 224: not r's */
    cr_assert_neq(s, r, "a block must not be reused by another class");
    cr_assert_eq(al_usable_size(q), 64);
    cr_assert_eq(al_usable_size(s), 224);
    al_free(q, 50, AL_K_OBJECT);
    al_free(s, 200, AL_K_OBJECT);
    al_free(keep, 64, AL_K_OBJECT);
    cr_assert_eq(al_live_blocks(), 0);
    al_install(NULL);
    al_destroy(a);
}

Test(arena, blocks_are_distinct_and_aligned_across_slabs)
{
    al_allocator *a = make("arena");
    al_install(a);
    enum { N = 3000 };           /* 3000 * 48 bytes: several 64 KiB slabs */
    static unsigned char *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = al_malloc(48, AL_K_MEMO, "t");
        cr_assert_not_null(p[i]);
        cr_assert_eq((uintptr_t)p[i] % 16, 0, "block %d not 16-aligned", i);
        memset(p[i], i & 0xff, 48);
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 48; j++)
            cr_assert_eq(p[i][j], i & 0xff, "block %d overlaps another", i);
    for (int i = 0; i < N; i++)
        al_free(p[i], 48, AL_K_MEMO);
    cr_assert_eq(al_live_blocks(), 0);
    al_install(NULL);
    al_destroy(a);
}

/* Blocks freed together come back in address order, whatever order they
 * were freed in: within a slab every next block is the one after the last
 * (a LIFO free list would give them back in the reverse of the scrambled
 * free order, and a pass over them would miss the cache). */
Test(arena, reuses_freed_blocks_in_address_order)
{
    al_allocator *a = make("arena");
    al_install(a);
    enum { N = 3000, SZ = 48 };  /* about 3 slabs of 1300 blocks */
    static char *p[N], *q[N];
    for (int i = 0; i < N; i++)
        cr_assert_not_null(p[i] = al_malloc(SZ, AL_K_MEMO, "t"));
    for (int i = 0; i < N; i++) {
        int k = (int)(((long)i * 7919) % N);       /* 7919 is prime: a permutation */
        al_free(p[k], SZ, AL_K_MEMO);
    }
    int next = 0;
    for (int i = 0; i < N; i++) {
        cr_assert_not_null(q[i] = al_malloc(SZ, AL_K_MEMO, "t"));
        next += i > 0 && q[i] == q[i - 1] + SZ;
    }
    /* A break only where the allocator moves to another slab. */
    cr_assert_geq(next, N - 8, "blocks in address order: %d of %d (want >= %d)",
                  next, N - 1, N - 8);
    for (int i = 0; i < N; i++)
        al_free(q[i], SZ, AL_K_MEMO);
    cr_assert_eq(al_live_blocks(), 0, "live blocks %llu, want 0",
                 (unsigned long long)al_live_blocks());
    al_install(NULL);
    al_destroy(a);
}

Test(arena, large_blocks_and_realloc_across_classes)
{
    al_allocator *a = make("arena");
    al_install(a);
    unsigned char *p = al_malloc(20, AL_K_STORAGE, "t");
    memset(p, 9, 20);
    p = al_realloc(p, 20, 3000, AL_K_STORAGE, "t");
    cr_assert_not_null(p);
    cr_assert_eq(p[19], 9);
    p = al_realloc(p, 3000, 70000, AL_K_STORAGE, "t");
    cr_assert_not_null(p);
    cr_assert_eq(p[0], 9);
    cr_assert_geq(al_usable_size(p), 70000);
    p = al_realloc(p, 70000, 100000, AL_K_STORAGE, "t");
    cr_assert_eq(p[19], 9);
    p = al_realloc(p, 100000, 30, AL_K_STORAGE, "t");
    cr_assert_eq(p[19], 9);
    cr_assert_eq(al_usable_size(p), 32);
    al_free(p, 30, AL_K_STORAGE);
    cr_assert_eq(al_live_bytes(), 0);
    al_install(NULL);
    al_destroy(a);
}

/* The libc allocator, installed; the test is skipped where huge-page
 * advice is not given (no transparent huge pages, a memory checker). */
static al_allocator *libc_with_huge_pages(void)
{
    if (VG_ASAN_ENABLED || vg_running() ||
        access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        cr_skip_test("no transparent huge pages here, or a memory checker's heap");
    al_allocator *a = make("libc");
    al_install(a);
    return a;
}

/* glibc mmaps a block of 4 MiB or more (al_libc's fixed threshold); libc
 * advises its mapping MADV_HUGEPAGE, which the kernel shows as
 * the mapping's "hg" flag whether or not it has huge pages to give. */
Test(bases, libc_advises_huge_pages_for_large_blocks)
{
    al_allocator *a = libc_with_huge_pages();
    size_t n = 8u << 20;
    char *big = al_malloc(n, AL_K_MEMO, "t_big");
    char *small = al_malloc(1u << 20, AL_K_MEMO, "t_small");
    cr_assert(big && small, "allocations");
    char flags[256] = "";
    char *inside = (char *)(((uintptr_t)big + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    cr_assert_eq(vm_flags_of(inside, flags, sizeof flags), 0, "no mapping holds %p", inside);
    cr_assert(strstr(flags, " hg") != NULL, "8 MiB block's VmFlags:%s", flags);
    cr_assert_eq(vm_flags_of(small, flags, sizeof flags), 0, "no mapping holds %p", small);
    cr_assert(strstr(flags, " hg") == NULL, "1 MiB block's VmFlags:%s", flags);
    al_free(small, 1u << 20, AL_K_MEMO);
    al_free(big, n, AL_K_MEMO);
    al_install(NULL);
    al_destroy(a);
}

/* The advice covers the block's whole mapping, which so stays one VMA: a
 * realloc that grows it is glibc's mremap, not malloc, copy and free (with
 * only its whole huge pages advised, the mapping was split in three and
 * mremap failed on it). */
static void assert_one_advised_mapping(const char *p, size_t n, const char *what)
{
    char flags[256] = "";
    uintptr_t lo = 0, hi = 0;
    cr_assert_eq(vm_map_of(p, flags, sizeof flags, &lo, &hi), 0, "no mapping holds %p", p);
    cr_assert(strstr(flags, " hg") != NULL, "%s: first byte's VmFlags:%s", what, flags);
    cr_assert_leq(lo, (uintptr_t)p, "%s: mapping starts at %#lx, block at %p", what,
                  (unsigned long)lo, p);
    cr_assert_geq(hi, (uintptr_t)p + n, "%s: mapping %#lx-%#lx ends before the block's end %#lx",
                  what, (unsigned long)lo, (unsigned long)hi, (unsigned long)((uintptr_t)p + n));
}

Test(bases, libc_big_block_stays_one_mapping_through_realloc)
{
    al_allocator *a = libc_with_huge_pages();
    size_t n = 8u << 20, m = 16u << 20;
    char *p = al_malloc(n, AL_K_MEMO, "t_big");
    cr_assert_not_null(p);
    memset(p, 5, n);
    assert_one_advised_mapping(p, n, "8 MiB block");
    p = al_realloc(p, n, m, AL_K_MEMO, "t_big");
    cr_assert_not_null(p);
    cr_assert_eq(p[n - 1], 5, "last old byte after realloc: %d, want 5", p[n - 1]);
    assert_one_advised_mapping(p, m, "16 MiB block after realloc");
    al_free(p, m, AL_K_MEMO);
    al_install(NULL);
    al_destroy(a);
}
