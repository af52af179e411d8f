/* vg/vg.h: the requests behave outside Valgrind and, when
 * this binary runs under memcheck (the `valgrind` label), report no new
 * loss for code that frees what it allocates. (That a real leak IS counted
 * is proved by the canary canary/leak_tracked, see tests/CMakeLists.txt.) */
#include <criterion/criterion.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "vg/vg.h"

Test(valgrind, added_leak_check_sees_no_loss_in_clean_code)
{
    al_allocator *a;
    char err[128];
    cr_assert_eq(as_create("tracking/arena", &a, err, sizeof err), 0, "%s", err);
    al_install(a);
    vg_leaks before, after;
    vg_leak_check_added(&before);
    void *p = al_malloc(100, AL_K_OTHER, "t");
    void *q = al_malloc(10000, AL_K_OTHER, "t");
    al_free(p, 100, AL_K_OTHER);
    al_free(q, 10000, AL_K_OTHER);
    vg_leak_check_added(&after);
    cr_assert_eq(after.lost_bytes, before.lost_bytes, "no new loss expected: %llu -> %llu",
                 (unsigned long long)before.lost_bytes, (unsigned long long)after.lost_bytes);
    if (!vg_running()) {
        cr_assert_eq(after.lost_bytes, 0, "outside Valgrind the counts are zero");
        cr_assert_eq(after.reachable_bytes, 0);
    }
    al_install(NULL);
    al_destroy(a);
}
