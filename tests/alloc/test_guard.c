/* The guard wrapper: zones, poison, quarantine, findings and their actions.
 * The default action exits with status 3; those tests say .exit_code = 3
 * (Criterion runs each test in its own process). The rest use
 * IN_GUARD_RECORD and check the text of the finding. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "instrument/in_guard.h"
#include "instrument/in_tracking.h"

static al_allocator *make(const char *spec)
{
    al_allocator *a = NULL;
    char err[256] = "";
    cr_assert_eq(as_create(spec, &a, err, sizeof err), 0, "as_create(%s): %s", spec, err);
    return a;
}

static al_allocator *recording(const char *spec)
{
    al_allocator *a = make(spec);
    cr_assert_eq(in_guard_set_action(a, IN_GUARD_RECORD), 0);
    al_install(a);
    return a;
}

static void done(al_allocator *a)
{
    al_install(NULL);
    al_destroy(a);
}

Test(guard, overflow_exits_3, .exit_code = 3, .init = cr_redirect_stderr)
{
    al_allocator *a = make("guard");
    al_install(a);
    char *p = al_malloc(8, AL_K_ATTR, "attr_new");
    p[8] = 1;                          /* one past the end */
    al_free(p, 8, AL_K_ATTR);
    cr_assert_fail("the guard did not stop at the overflow");
}

Test(guard, use_after_free_write_exits_3, .exit_code = 3, .init = cr_redirect_stderr)
{
    al_allocator *a = make("guard:q=1/arena");
    al_install(a);
    char *p = al_malloc(32, AL_K_STORAGE, "storage_new");
    al_free(p, 32, AL_K_STORAGE);
    p[5] = 'x';                        /* write after free, into quarantine */
    char *q = al_malloc(32, AL_K_STORAGE, "storage_new");
    al_free(q, 32, AL_K_STORAGE);      /* evicts p: poison checked */
    cr_assert_fail("the guard did not find the write after free");
}

Test(guard, double_free_exits_3, .exit_code = 3, .init = cr_redirect_stderr)
{
    al_allocator *a = make("guard/jemalloc");
    al_install(a);
    char *p = al_malloc(16, AL_K_OBJECT, "obj_new");
    al_free(p, 16, AL_K_OBJECT);
    al_free(p, 16, AL_K_OBJECT);
    cr_assert_fail("the guard did not find the double free");
}

Test(guard, finding_texts)
{
    al_allocator *a = recording("guard");
    char *p = al_malloc(8, AL_K_ATTR, "attr_new");
    p[8] = 1;
    al_free(p, 8, AL_K_ATTR);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "buffer overflow on attr block of 8 bytes from attr_new");

    p = al_malloc(20, AL_K_MEMO, "memo_put");
    p[-1] = 1;
    al_free(p, 20, AL_K_MEMO);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "buffer underflow on memo block of 20 bytes from memo_put");

    p = al_malloc(20, AL_K_MEMO, "memo_put");
    p[23] = 1;                         /* in the padding after the block */
    al_free(p, 20, AL_K_MEMO);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "buffer overflow on memo block of 20 bytes from memo_put");

    p = al_malloc(10, AL_K_OBJECT, "obj_new");
    al_free(p, 10, AL_K_OBJECT);
    al_free(p, 10, AL_K_OBJECT);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "double free on object block of 10 bytes from obj_new");

    p = al_malloc(10, AL_K_OBJECT, "obj_new");
    al_free(p, 12, AL_K_OBJECT);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "free with wrong size 12 on object block of 10 bytes from obj_new");

    p = al_malloc(10, AL_K_OBJECT, "obj_new");
    al_free(p, 10, AL_K_STORAGE);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "free with wrong kind storage on object block of 10 bytes from obj_new");

    p = al_malloc(10, AL_K_OBJECT, "obj_new");
    al_free(p, 10, AL_K_OBJECT);
    cr_assert_null(al_realloc(p, 10, 20, AL_K_OBJECT, "obj_grow"));
    cr_assert_str_eq(in_guard_last_finding(a),
                     "realloc of freed block on object block of 10 bytes from obj_new");

    static char foreign[64];
    al_free(foreign + 48, 16, AL_K_OTHER);
    cr_assert_not_null(strstr(in_guard_last_finding(a), "free of unknown pointer"),
                       "got: %s", in_guard_last_finding(a));
    cr_assert_eq(in_guard_findings(a), 8);
    done(a);
}

Test(guard, use_after_free_found_at_eviction_and_verify)
{
    al_allocator *a = recording("guard");
    in_guard_set_quarantine(a, 2);
    char *p = al_malloc(40, AL_K_STORAGE, "storage_new");
    al_free(p, 40, AL_K_STORAGE);
    p[39] = 0;
    cr_assert_eq(in_guard_verify(a), 1, "verify checks quarantined poison");
    cr_assert_str_eq(in_guard_last_finding(a),
                     "use-after-free write on storage block of 40 bytes from storage_new");
    cr_assert_eq(in_guard_verify(a), 0, "a finding is reported once");

    char *r = al_malloc(24, AL_K_MEMO, "memo_put");
    al_free(r, 24, AL_K_MEMO);
    r[0] = 1;
    for (int i = 0; i < 2; i++)          /* push r out of the quarantine */
        al_free(al_malloc(8, AL_K_OTHER, "t"), 8, AL_K_OTHER);
    cr_assert_eq(in_guard_findings(a), 2, "eviction checks the poison");
    cr_assert_str_eq(in_guard_last_finding(a),
                     "use-after-free write on memo block of 24 bytes from memo_put");
    done(a);
}

Test(guard, verify_checks_live_blocks)
{
    al_allocator *a = recording("guard/arena");
    char *p = al_malloc(3, AL_K_OTHER, "t_live");
    char *q = al_malloc(3, AL_K_OTHER, "t_live");
    cr_assert_eq(in_guard_verify(a), 0);
    q[3] = 0;
    cr_assert_eq(in_guard_verify(a), 1);
    cr_assert_str_eq(in_guard_last_finding(a),
                     "buffer overflow on other block of 3 bytes from t_live");
    q[3] = (char)0xFB;                   /* repair so the free is clean */
    al_free(p, 3, AL_K_OTHER);
    al_free(q, 3, AL_K_OTHER);
    cr_assert_eq(in_guard_findings(a), 1);
    done(a);
}

Test(guard, warn_prints_the_finding_line, .init = cr_redirect_stderr)
{
    al_allocator *a = make("guard");
    in_guard_set_action(a, IN_GUARD_WARN);
    al_install(a);
    char *p = al_malloc(5, AL_K_STORAGE, "ts_storage_new");
    p[5] = 0;
    al_free(p, 5, AL_K_STORAGE);
    fflush(stderr);
    cr_assert_stderr_eq_str(
        "fakegc: guard: buffer overflow on storage block of 5 bytes from ts_storage_new\n");
    done(a);
}

Test(guard, quarantine_delays_reuse_and_q0_reuses)
{
    al_allocator *a = make("guard/arena");
    al_install(a);
    void *p = al_malloc(64, AL_K_OBJECT, "t");
    al_free(p, 64, AL_K_OBJECT);
    void *q = al_malloc(64, AL_K_OBJECT, "t");
    cr_assert_neq(q, p, "a quarantined address must not come back at once");
    al_free(q, 64, AL_K_OBJECT);
    done(a);

    a = make("guard:q=0/arena");
    al_install(a);
    p = al_malloc(64, AL_K_OBJECT, "t");
    al_free(p, 64, AL_K_OBJECT);
    q = al_malloc(64, AL_K_OBJECT, "t");
    cr_assert_eq(q, p, "with q=0 the arena hands the same address back");
    al_free(q, 64, AL_K_OBJECT);
    done(a);
}

Test(guard, quarantine_is_bounded)
{
    /* tracking under the guard sees the guard's inner blocks */
    al_allocator *a = make("guard/tracking/libc");
    cr_assert_eq(in_guard_set_quarantine(a, 4), 0);
    al_install(a);
    void *p[10];
    for (int i = 0; i < 10; i++)
        p[i] = al_malloc(100, AL_K_HEAP, "t");
    for (int i = 0; i < 10; i++)
        al_free(p[i], 100, AL_K_HEAP);
    in_tracking_stats st;
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 4, "4 blocks wait in quarantine, got %llu",
                 (unsigned long long)st.live_blocks);
    cr_assert_eq(al_live_blocks(), 0, "the program sees nothing live");
    in_guard_set_quarantine(a, 1);
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 1, "shrinking the quarantine evicts at once");
    done(a);
}

Test(guard, fills_and_realloc)
{
    al_allocator *a = recording("guard");
    unsigned char *p = al_malloc(12, AL_K_ATTR, "t");
    for (int i = 0; i < 12; i++)
        cr_assert_eq(p[i], 0xCD, "new blocks are filled with 0xCD");
    cr_assert_eq((uintptr_t)p % 16, 0, "user pointer stays 16-aligned");
    cr_assert_eq(al_usable_size(p), 12, "the guard knows the exact size");
    memcpy(p, "hello world", 12);
    p = al_realloc(p, 12, 40, AL_K_ATTR, "t");
    cr_assert_str_eq((char *)p, "hello world");
    cr_assert_eq(p[39], 0xCD);
    al_free(p, 40, AL_K_ATTR);
    cr_assert_eq(in_guard_findings(a), 0);
    done(a);
}
