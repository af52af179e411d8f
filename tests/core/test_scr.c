/* test_scr.c - scratch memory: reuse, growth, and the huge-page advice. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/scr.h"
#include "vg/vg.h"
#include "vm_maps.h"

Test(scr, reserve_reuses_until_it_must_grow)
{
    scr s = {0};
    char *a = scr_reserve(&s, 100);
    cr_assert_not_null(a);
    cr_assert_eq(s.bytes, 32768, "first area: %zu bytes, want 32768", s.bytes);
    char *again = scr_reserve(&s, 32768);
    cr_assert_eq(again, a, "a reserve that fits moved the area: %p, was %p", (void *)again,
                 (void *)a);
    char *b = scr_reserve(&s, 32769);
    cr_assert_not_null(b);
    cr_assert_eq(s.bytes, 65536, "grown area: %zu bytes, want 65536", s.bytes);
    b[65535] = 1;                        /* the whole area is there */
    scr_release(&s);
    cr_assert(s.p == NULL && s.bytes == 0, "released: %p, %zu bytes", s.p, s.bytes);
}

/* An area of SCR_HUGE bytes or more is advised MADV_HUGEPAGE, which the
 * kernel shows as its mapping's "hg" flag (whether or not it has huge
 * pages to give); a smaller one is not. */
Test(scr, big_areas_are_advised_huge_pages)
{
    if (VG_ASAN_ENABLED || vg_running() ||
        access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0)
        cr_skip_test("no transparent huge pages here, or a memory checker's mappings");
    scr small = {0}, big = {0};
    char *p = scr_reserve(&small, SCR_HUGE / 2);
    char *q = scr_reserve(&big, SCR_HUGE);
    cr_assert(p && q, "reserves: %p %p", (void *)p, (void *)q);
    char flags[256] = "";
    cr_assert_eq(vm_flags_of(q, flags, sizeof flags), 0, "no mapping holds %p", (void *)q);
    cr_assert(strstr(flags, " hg") != NULL, "4 MiB area's VmFlags:%s", flags);
    cr_assert_eq(vm_flags_of(p, flags, sizeof flags), 0, "no mapping holds %p", (void *)p);
    cr_assert(strstr(flags, " hg") == NULL, "2 MiB area's VmFlags:%s", flags);
    scr_release(&small);
    scr_release(&big);
}
