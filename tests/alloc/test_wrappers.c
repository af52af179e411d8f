/* The wrappers: tracking, fail:N. (guard: test_guard.c) */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "instrument/in_fail.h"
#include "instrument/in_tracking.h"
#include "vg/vg.h"

static al_allocator *make(const char *spec)
{
    al_allocator *a = NULL;
    char err[256] = "";
    cr_assert_eq(as_create(spec, &a, err, sizeof err), 0, "as_create(%s): %s", spec, err);
    return a;
}

static void done(al_allocator *a)
{
    al_install(NULL);
    al_destroy(a);
}

Test(tracking, per_site_per_kind_and_peak)
{
    al_allocator *a = make("tracking/arena");
    al_install(a);
    void *s1 = al_malloc(100, AL_K_STORAGE, "storage_new");
    void *s2 = al_malloc(200, AL_K_STORAGE, "storage_new");
    void *o1 = al_malloc(32, AL_K_OBJECT, "obj_new");
    in_tracking_stats st;
    cr_assert_eq(in_tracking_get(a, &st), 0);
    cr_assert_eq(st.live_blocks, 3);
    cr_assert_eq(st.live_bytes, 332);
    cr_assert_eq(st.kind_blocks[AL_K_STORAGE], 2);
    cr_assert_eq(st.kind_bytes[AL_K_STORAGE], 300);
    cr_assert_eq(st.kind_bytes[AL_K_OBJECT], 32);

    in_tracking_site sc;
    /* a different pointer to equal text still matches */
    char name[] = "storage_new";
    cr_assert_eq(in_tracking_site_get(a, name, &sc), 0);
    cr_assert_eq(sc.allocs, 2);
    cr_assert_eq(sc.live_blocks, 2);
    cr_assert_eq(sc.live_bytes, 300);

    al_free(s1, 100, AL_K_STORAGE);
    void *o2 = al_malloc(16, AL_K_OBJECT, "obj_new");
    in_tracking_site_get(a, "storage_new", &sc);
    cr_assert_eq(sc.allocs, 2, "allocs counts every allocation ever made");
    cr_assert_eq(sc.live_blocks, 1);
    cr_assert_eq(sc.live_bytes, 200);
    in_tracking_site_get(a, "obj_new", &sc);
    cr_assert_eq(sc.live_blocks, 2);
    cr_assert_eq(sc.live_bytes, 48);
    in_tracking_site_get(a, "never", &sc);
    cr_assert_eq(sc.allocs, 0);

    in_tracking_get(a, &st);
    cr_assert_eq(st.peak_bytes, 332, "peak is the high-water mark");
    cr_assert_eq(st.live_bytes, 248);
    cr_assert_eq(st.total_allocs, 4);
    cr_assert_eq(st.total_frees, 1);

    in_tracking_block blk[8];
    size_t n = in_tracking_live(a, blk, 8);
    cr_assert_eq(n, 3);
    cr_assert_eq(blk[0].p, s2, "oldest first");
    cr_assert_str_eq(blk[0].site, "storage_new");
    cr_assert_eq(blk[0].n, 200);
    cr_assert_eq(blk[1].p, o1);
    cr_assert_eq(blk[2].p, o2);
    cr_assert_eq(blk[2].kind, AL_K_OBJECT);
    cr_assert_eq(in_tracking_live(a, blk, 1), 3);
    cr_assert_eq(blk[0].p, s2, "a short buffer still gets the oldest");

    al_free(s2, 200, AL_K_STORAGE);
    al_free(o1, 32, AL_K_OBJECT);
    al_free(o2, 16, AL_K_OBJECT);
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 0);
    cr_assert_eq(st.live_bytes, 0);
    done(a);
}

Test(tracking, realloc_moves_the_entry)
{
    al_allocator *a = make("tracking/jemalloc");
    al_install(a);
    char *p = al_malloc(10, AL_K_ATTR, "attr_new");
    p = al_realloc(p, 10, 5000, AL_K_ATTR, "attr_grow");
    cr_assert_not_null(p);
    in_tracking_stats st;
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 1);
    cr_assert_eq(st.live_bytes, 5000);
    cr_assert_eq(st.total_allocs, 1, "a realloc is not a new allocation");
    in_tracking_site sc;
    in_tracking_site_get(a, "attr_grow", &sc);
    cr_assert_eq(sc.live_bytes, 5000, "the block now belongs to the resizing site");
    in_tracking_site_get(a, "attr_new", &sc);
    cr_assert_eq(sc.live_blocks, 0);
    al_free(p, 5000, AL_K_ATTR);
    done(a);
}

Test(tracking, table_grows_with_many_blocks)
{
    al_allocator *a = make("tracking");
    al_install(a);
    enum { N = 5000 };
    static void *p[N];
    for (int i = 0; i < N; i++)
        p[i] = al_malloc((size_t)i % 97 + 1, AL_K_HEAP, "t_many");
    for (int i = 0; i < N; i += 3)
        al_free(p[i], (size_t)i % 97 + 1, AL_K_HEAP);
    in_tracking_stats st;
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, N - (N + 2) / 3);
    for (int i = 0; i < N; i++)
        if (i % 3)
            al_free(p[i], (size_t)i % 97 + 1, AL_K_HEAP);
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 0);
    cr_assert_eq(st.live_bytes, 0);
    cr_assert_eq(st.unknown_frees, 0, "every free found its block after deletions");
    done(a);
}

Test(tracking, report_lists_live_blocks_by_site)
{
    al_allocator *a = make("tracking");
    al_install(a);
    void *x = al_malloc(64, AL_K_MEMO, "memo_insert");
    void *y = al_malloc(64, AL_K_MEMO, "memo_insert");
    void *z = al_malloc(8, AL_K_REPORT, "rp_text");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    a->xreport(a->ctx, f);
    fclose(f);
    cr_assert_not_null(strstr(buf, "3 live blocks, 136 bytes"), "report:\n%s", buf);
    char *line = strstr(buf, "memo_insert");
    cr_assert_not_null(line, "report:\n%s", buf);
    cr_assert(sscanf(line, "memo_insert %*u %zu", &len) == 1 && len == 128,
              "memo_insert line: %s", line);
    cr_assert_lt(line, strstr(buf, "rp_text"), "sites sorted by bytes");
    free(buf);
    al_free(x, 64, AL_K_MEMO);
    al_free(y, 64, AL_K_MEMO);
    al_free(z, 8, AL_K_REPORT);
    done(a);
}

/* The live blocks tracking counts for a site, against what is expected. */
static void expect_site_live(al_allocator *a, const char *site, uint64_t want)
{
    in_tracking_site st;
    in_tracking_site_get(a, site, &st);
    cr_assert_eq(st.live_blocks, want, "%s live blocks (%llu, want %llu)", site,
                 (unsigned long long)st.live_blocks, (unsigned long long)want);
}

/* Two sites 512 bytes apart share a slot of the wrapper's recent-site
 * cache: each allocation must still be counted under its own site. */
Test(tracking, sites_sharing_a_cache_slot_stay_apart)
{
    static char names[1024];
    char *s1 = names, *s2 = names + 512;
    strcpy(s1, "site_one");
    strcpy(s2, "site_two");
    al_allocator *a = make("tracking");
    al_install(a);
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = al_malloc(16, AL_K_OTHER, i % 2 ? s2 : s1);
    expect_site_live(a, "site_one", 3);
    expect_site_live(a, "site_two", 2);
    for (int i = 0; i < 5; i++)
        al_free(p[i], 16, AL_K_OTHER);
    done(a);
}

/* Pools stay on under tracking: a put is a free to it, a get an allocation
 * from the get's site, and a second put of the same block is a double free,
 * cached or not (without pools, under a checker, the same figures hold). */
Test(tracking, pool_blocks_are_freed_and_allocated_again, .init = cr_redirect_stderr)
{
    static al_pool pool = AL_POOL_INIT(48, AL_K_MEMO);
    al_allocator *a = make("tracking");
    al_install(a);
    int caches = !vg_running() && !VG_ASAN_ENABLED;
    void *b[3];
    for (int i = 0; i < 3; i++)
        b[i] = al_pool_get(&pool, "t_first");
    for (int i = 0; i < 3; i++)
        al_pool_put(&pool, b[i]);
    in_tracking_stats st;
    in_tracking_get(a, &st);
    cr_assert_eq(st.live_blocks, 0, "live after puts (%llu, want %llu)",
                 (unsigned long long)st.live_blocks, 0ull);
    cr_assert_eq(st.total_frees, 3, "frees (%llu, want %llu)",
                 (unsigned long long)st.total_frees, 3ull);
    cr_assert_eq(pool.n, caches ? 3u : 0u, "cached (%llu, want %llu)",
                 (unsigned long long)pool.n, (unsigned long long)(caches ? 3u : 0u));
    cr_assert_eq(in_tracking_live(a, NULL, 0), 0, "cached blocks are not live");
    void *x = al_pool_get(&pool, "t_again");
    expect_site_live(a, "t_again", 1);
    expect_site_live(a, "t_first", 0);
    in_tracking_block blk;
    cr_assert_eq(in_tracking_live(a, &blk, 1), 1, "one live block");
    cr_assert_eq(blk.seq, 4, "the get is allocation #4 (%llu)", (unsigned long long)blk.seq);
    cr_assert_eq(blk.p, x, "the live block is the one got");
    al_pool_put(&pool, x);
    al_pool_put(&pool, x);                 /* double free of a cached block */
    al_free(b[0] == x ? b[1] : b[0], 48, AL_K_MEMO);   /* and of another */
    in_tracking_get(a, &st);
    cr_assert_eq(st.unknown_frees, 2, "double frees (%llu, want %llu)",
                 (unsigned long long)st.unknown_frees, 2ull);
    cr_assert_eq(pool.n, caches ? 3u : 0u, "cached after the double frees (%llu, want %llu)",
                 (unsigned long long)pool.n, (unsigned long long)(caches ? 3u : 0u));
    al_pool_flush_all();
    cr_assert_eq(pool.n, 0, "flushed (%llu)", (unsigned long long)pool.n);
    void *y = al_malloc(48, AL_K_MEMO, "t_after");  /* may reuse a flushed address */
    al_free(y, 48, AL_K_MEMO);
    in_tracking_get(a, &st);
    cr_assert_eq(st.unknown_frees, 2, "no unknown free after the flush (%llu, want %llu)",
                 (unsigned long long)st.unknown_frees, 2ull);
    cr_assert_eq(st.live_blocks, 0, "live at the end (%llu, want %llu)",
                 (unsigned long long)st.live_blocks, 0ull);
    done(a);
}

Test(tracking, unknown_free_is_counted_not_passed_on, .init = cr_redirect_stderr)
{
    al_allocator *a = make("tracking");
    al_install(a);
    char *p = al_malloc(24, AL_K_OTHER, "t");
    static char not_ours[24];
    al_free(not_ours, 24, AL_K_OTHER);       /* would crash glibc if passed on */
    al_free(p, 24, AL_K_OTHER);
    al_free(p, 24, AL_K_OTHER);              /* double free */
    char *q = al_malloc(40, AL_K_OTHER, "t");
    al_free(q, 30, AL_K_OTHER);              /* wrong size: freed with 40 */
    in_tracking_stats st;
    in_tracking_get(a, &st);
    cr_assert_eq(st.size_mismatches, 1);
    cr_assert_eq(st.unknown_frees, 2);
    cr_assert_eq(st.live_blocks, 0);
    fflush(stderr);
    cr_assert_stderr_neq_str("", "the unknown frees must be reported");
    done(a);
}

Test(tracking, found_in_chain_only)
{
    al_allocator *a = make("fail:9/tracking/libc");
    cr_assert_not_null(in_tracking_of(a), "tracking found below another wrapper");
    al_destroy(a);
    a = make("guard");
    in_tracking_stats st;
    cr_assert_null(in_tracking_of(a));
    cr_assert_eq(in_tracking_get(a, &st), -1);
    al_destroy(a);
}

Test(fail, fails_exactly_the_nth)
{
    al_allocator *a = make("fail:3:all/arena");
    al_install(a);
    void *p[6];
    for (int i = 0; i < 6; i++)
        p[i] = al_malloc(32, AL_K_OTHER, "t");
    for (int i = 0; i < 6; i++)
        if (i == 2)
            cr_assert_null(p[i], "allocation #3 must fail");
        else
            cr_assert_not_null(p[i], "allocation #%d must succeed", i + 1);
    cr_assert_eq(in_fail_attempts(a), 6);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.failed_allocs, 1);
    cr_assert_eq(st.live_blocks, 5);
    for (int i = 0; i < 6; i++)
        al_free(p[i], 32, AL_K_OTHER);
    done(a);
}

Test(fail, plus_fails_nth_and_every_later)
{
    al_allocator *a = make("fail:2+:all/jemalloc");
    al_install(a);
    void *p1 = al_malloc(8, AL_K_OTHER, "t");
    cr_assert_not_null(p1);
    for (int i = 0; i < 5; i++)
        cr_assert_null(al_malloc(8, AL_K_OTHER, "t"), "attempt %d after #2", i + 2);
    cr_assert_null(al_realloc(p1, 8, 16, AL_K_OTHER, "t"), "a growing realloc fails too");
    void *s = al_realloc(p1, 8, 4, AL_K_OTHER, "t");
    cr_assert_not_null(s, "a shrinking realloc is not an attempt");
    al_free(s, 4, AL_K_OTHER);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.failed_allocs, 6);
    cr_assert_eq(st.live_blocks, 0);
    done(a);
}

Test(fail, counts_from_creation_not_install)
{
    al_allocator *a = make("fail:2:all");
    al_install(a);
    void *p = al_malloc(8, AL_K_OTHER, "t");
    al_free(p, 8, AL_K_OTHER);
    al_install(NULL);
    al_install(a);                /* zeroes the front, not the wrapper */
    cr_assert_null(al_malloc(8, AL_K_OTHER, "t"), "#2 of the wrapper's life");
    done(a);
}

/* fail:N counts and fails the model's allocations only; the
 * parser's and the report's pass through, and :all counts them too. */
Test(fail, counts_model_kinds_unless_all)
{
    al_allocator *a = make("fail:2/libc");
    al_install(a);
    void *own[3], *m[3];
    for (int i = 0; i < 3; i++)
        own[i] = al_malloc(8, i == 0 ? AL_K_SCENARIO : i == 1 ? AL_K_REPORT : AL_K_HEAP, "own");
    for (int i = 0; i < 3; i++)
        cr_assert_not_null(own[i], "fakegc's own allocation #%d failed", i + 1);
    m[0] = al_malloc(8, AL_K_OBJECT, "model");
    m[1] = al_malloc(8, AL_K_STORAGE, "model");
    m[2] = al_malloc(8, AL_K_MEMO, "model");
    cr_assert_not_null(m[0]);
    cr_assert_null(m[1], "the 2nd model allocation must fail");
    cr_assert_not_null(m[2]);
    cr_assert_eq(in_fail_attempts(a), 3, "%llu attempts counted",
                 (unsigned long long)in_fail_attempts(a));
    al_free(own[0], 8, AL_K_SCENARIO);
    al_free(own[1], 8, AL_K_REPORT);
    al_free(own[2], 8, AL_K_HEAP);
    al_free(m[0], 8, AL_K_OBJECT);
    al_free(m[2], 8, AL_K_MEMO);
    done(a);
    a = make("fail:2:all/libc");
    al_install(a);
    void *p = al_malloc(8, AL_K_SCENARIO, "own");
    cr_assert_not_null(p);
    cr_assert_null(al_malloc(8, AL_K_REPORT, "own"), ":all fails fakegc's own #2");
    al_free(p, 8, AL_K_SCENARIO);
    done(a);
}
