/* Canaries for the `valgrind` label: tests that are WRONG on purpose, so
 * that scripts/valgrind-test.sh can be shown to fail on them (ctest runs
 * each one through tests/canary/expect-finding.sh, which passes only when
 * the script exits 1 AND names the canary's function in the loss record or
 * error). canary/clean must pass the script. Built only for that; never part
 * of the `unit` label (the leaks do not fail a plain Criterion run, which is
 * the point). */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "vg/vg.h"

static al_allocator *use(const char *spec)
{
    al_allocator *a = NULL;
    char err[256];
    cr_assert_eq(as_create(spec, &a, err, sizeof err), 0, "%s", err);
    al_install(a);
    return a;
}

/* Destroy the allocator so only the canary's block is left over: the
 * allocator's own bookkeeping must not be what gets reported. */
static void drop(al_allocator *a)
{
    al_install(NULL);
    al_destroy(a);
}

/* noinline so the function shows up in the allocation stack; the pointer is
 * written through a volatile and cleared so no register or stack slot keeps
 * it (memcheck would call the block reachable). */
static void *volatile sink;

__attribute__((noinline)) static void canary_leak_libc_block(void)
{
    sink = al_malloc(100, AL_K_OTHER, "canary");
    memset(sink, 1, 100);
    sink = NULL;
}

__attribute__((noinline)) static void canary_leak_jemalloc_block(void)
{
    sink = al_malloc(64, AL_K_STORAGE, "canary");
    memset(sink, 2, 64);
    sink = NULL;
}

__attribute__((noinline)) static void canary_leak_arena_block(void)
{
    sink = al_malloc(48, AL_K_OBJECT, "canary");
    memset(sink, 3, 48);
    sink = NULL;
}

__attribute__((noinline)) static void canary_leak_tracked_block(void)
{
    sink = al_malloc(72, AL_K_MEMO, "canary");
    memset(sink, 6, 72);
    sink = NULL;
}

__attribute__((noinline)) static int canary_read_freed_arena_block(void)
{
    char *p = al_malloc(32, AL_K_OBJECT, "canary");
    memset(p, 4, 32);
    al_free(p, 32, AL_K_OBJECT);
    return ((volatile char *)p)[8];        /* use after free */
}

__attribute__((noinline)) static int canary_read_freed_jemalloc_block(void)
{
    char *p = al_malloc(32, AL_K_OBJECT, "canary");
    memset(p, 5, 32);
    al_free(p, 32, AL_K_OBJECT);
    return ((volatile char *)p)[8];        /* use after free */
}

Test(canary, clean)
{
    static const char *const specs[] = { "libc", "jemalloc", "arena", "tracking/arena",
                                         "guard/jemalloc" };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        al_allocator *a = use(specs[i]);
        void *p = al_malloc(64, AL_K_OTHER, "canary");
        void *q = al_malloc(10000, AL_K_OTHER, "canary");
        cr_assert(p && q);
        memset(p, 0, 64);
        memset(q, 0, 10000);
        al_free(p, 64, AL_K_OTHER);
        al_free(q, 10000, AL_K_OTHER);
        drop(a);
    }
}

Test(canary, leak_libc)
{
    al_allocator *a = use("libc");
    canary_leak_libc_block();
    drop(a);
}

Test(canary, leak_jemalloc)
{
    al_allocator *a = use("jemalloc");
    for (int i = 0; i < 3; i++) {          /* warm the tcache: reuse, too */
        void *p = al_malloc(64, AL_K_STORAGE, "canary");
        al_free(p, 64, AL_K_STORAGE);
    }
    canary_leak_jemalloc_block();
    drop(a);
}

Test(canary, leak_arena)
{
    al_allocator *a = use("arena");
    void *keep = al_malloc(48, AL_K_OBJECT, "canary");  /* a live neighbour */
    canary_leak_arena_block();
    al_free(keep, 48, AL_K_OBJECT);
    drop(a);
}

/* The tracking wrapper stays alive and reachable (a global, and the front's
 * current allocator) with the block in its table: the block must still be
 * definitely lost, not "still reachable" through the table. The in-process
 * leak check must count exactly this block. */
static al_allocator *kept;

Test(canary, leak_tracked)
{
    kept = use("tracking/libc");
    vg_leaks before, after;
    vg_leak_check_added(&before);
    canary_leak_tracked_block();
    vg_leak_check_added(&after);
    if (vg_running()) {
        cr_assert_eq(after.lost_bytes - before.lost_bytes, 72,
                     "the added leak check must count the 72-byte block, got %llu",
                     (unsigned long long)(after.lost_bytes - before.lost_bytes));
        cr_assert_eq(after.lost_blocks - before.lost_blocks, 1);
    }
}

Test(canary, use_after_free_arena)
{
    al_allocator *a = use("arena");
    (void)canary_read_freed_arena_block();
    drop(a);
}

Test(canary, use_after_free_jemalloc)
{
    al_allocator *a = use("jemalloc");
    (void)canary_read_freed_jemalloc_block();
    drop(a);
}
