/* Tests of hp_mem.c: a big analysis array is kept when freed and handed to
 * the next request it fits; a request nothing fits gives the kept ones
 * back first; hp_mem_flush gives back the rest. Under a memory checker
 * nothing is kept. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "alloc/al.h"
#include "heap/hp_int.h"
#include "vg/vg.h"

static uint64_t heap_live(void) { return al_live_bytes_kind(AL_K_HEAP); }

static const size_t MIB = 1u << 20;

Test(hp_mem, big_block_kept_and_fitted_again)
{
    uint64_t base = heap_live();
    uint64_t *a = hp_xalloc(MIB, 8);                 /* 8 MiB */
    cr_assert_not_null(a);
    a[MIB - 1] = 42;
    hp_xfree(a, MIB, 8);
    int checked = VG_ASAN_ENABLED || vg_running();
    if (checked) {
        cr_assert_eq(heap_live(), base, "a checked run keeps nothing: %llu bytes, want %llu",
                     (unsigned long long)heap_live(), (unsigned long long)base);
        return;
    }
    cr_assert_eq(heap_live(), base + 8 * MIB, "kept: %llu bytes, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)(base + 8 * MIB));
    /* 1/16 smaller fits: the same block, its size unchanged in the counters */
    uint64_t *b = hp_xalloc(MIB - MIB / 16, 8);
    cr_assert_eq((void *)b, (void *)a, "refit: %p, want the kept %p", (void *)b, (void *)a);
    cr_assert_eq(b[MIB - 1], 42, "kept contents: %llu, want 42", (unsigned long long)b[MIB - 1]);
    hp_xfree(b, MIB - MIB / 16, 8);
    cr_assert_eq(heap_live(), base + 8 * MIB, "kept again: %llu bytes, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)(base + 8 * MIB));
    hp_mem_flush();
    cr_assert_eq(heap_live(), base, "after the flush: %llu bytes, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)base);
}

Test(hp_mem, a_request_nothing_fits_gives_the_kept_back_first)
{
    if (VG_ASAN_ENABLED || vg_running())
        cr_skip_test("nothing is kept under a memory checker");
    uint64_t base = heap_live();
    void *a = hp_xalloc(MIB, 8);
    void *s = hp_xalloc(MIB, 5);                     /* 5 MiB: too small for a */
    cr_assert(a && s, "allocations");
    hp_xfree(a, MIB, 8);
    hp_xfree(s, MIB, 5);
    cr_assert_eq(heap_live(), base + 13 * MIB, "both kept: %llu, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)(base + 13 * MIB));
    /* 6 MiB: more than 1/8 below the 8 MiB one, above the 5 MiB one */
    void *c = hp_xalloc(MIB, 6);
    cr_assert_not_null(c);
    cr_assert_eq(heap_live(), base + 6 * MIB, "only the new block: %llu, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)(base + 6 * MIB));
    hp_xfree(c, MIB, 6);
    hp_mem_flush();
    cr_assert_eq(heap_live(), base, "after the flush: %llu, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)base);
}

Test(hp_mem, small_blocks_are_never_kept)
{
    uint64_t base = heap_live();
    void *a = hp_xalloc(1000, 8);
    cr_assert_not_null(a);
    hp_xfree(a, 1000, 8);
    cr_assert_eq(heap_live(), base, "a small block is freed at once: %llu, want %llu",
                 (unsigned long long)heap_live(), (unsigned long long)base);
}
