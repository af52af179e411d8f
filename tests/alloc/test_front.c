/* Front functions: counters, specs, realloc/calloc contracts, al_fail_at. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "vg/vg.h"

/* Every base and wrapper, so each round trip runs through all of them. */
static const char *const specs[] = {
    "libc", "jemalloc", "arena", "tracking", "tracking/jemalloc", "tracking/arena",
    "guard", "guard/jemalloc", "guard/arena", "guard:q=0/arena", "fail:1000000/libc",
    "tracking/guard/fail:1000000/arena",
};
#define NSPECS (sizeof specs / sizeof specs[0])

static al_allocator *make(const char *spec)
{
    al_allocator *a = NULL;
    char err[256] = "";
    int rc = as_create(spec, &a, err, sizeof err);
    cr_assert_eq(rc, 0, "as_create(%s) failed: %s", spec, err);
    cr_assert_not_null(a, "as_create(%s) gave no allocator", spec);
    return a;
}

static void done(al_allocator *a)
{
    al_install(NULL);
    al_destroy(a);
}

Test(front, round_trip_counts_exact_per_kind)
{
    for (size_t s = 0; s < NSPECS; s++) {
        al_allocator *a = make(specs[s]);
        al_install(a);
        char *p = al_malloc(64, AL_K_STORAGE, "t_storage");
        char *q = al_malloc(100, AL_K_OBJECT, "t_object");
        char *r = al_malloc(5000, AL_K_STORAGE, "t_big");
        cr_assert(p && q && r, "[%s] allocation failed", specs[s]);
        memset(p, 1, 64);
        memset(q, 2, 100);
        memset(r, 3, 5000);
        al_stats st;
        al_stats_get(&st);
        cr_assert_eq(st.live_blocks, 3, "[%s] live_blocks %llu", specs[s],
                     (unsigned long long)st.live_blocks);
        cr_assert_eq(st.live_bytes, 5164, "[%s] live_bytes %llu", specs[s],
                     (unsigned long long)st.live_bytes);
        cr_assert_eq(st.kind_blocks[AL_K_STORAGE], 2, "[%s] storage blocks", specs[s]);
        cr_assert_eq(st.kind_bytes[AL_K_STORAGE], 5064, "[%s] storage bytes", specs[s]);
        cr_assert_eq(st.kind_bytes[AL_K_OBJECT], 100, "[%s] object bytes", specs[s]);
        cr_assert_eq(al_live_bytes_kind(AL_K_MEMO), 0, "[%s] memo bytes", specs[s]);

        q = al_realloc(q, 100, 300, AL_K_OBJECT, "t_grow");
        cr_assert_not_null(q, "[%s] realloc grow failed", specs[s]);
        for (int i = 0; i < 100; i++)
            cr_assert_eq(q[i], 2, "[%s] realloc lost byte %d", specs[s], i);
        memset(q + 100, 4, 200);
        cr_assert_eq(al_live_bytes_kind(AL_K_OBJECT), 300, "[%s] after grow", specs[s]);
        q = al_realloc(q, 300, 10, AL_K_OBJECT, "t_shrink");
        cr_assert_not_null(q, "[%s] realloc shrink failed", specs[s]);
        cr_assert_eq(q[9], 2, "[%s] shrink lost data", specs[s]);
        cr_assert_geq(al_usable_size(p), 64, "[%s] usable size of a 64-byte block",
                      specs[s]);

        al_free(p, 64, AL_K_STORAGE);
        al_free(q, 10, AL_K_OBJECT);
        al_free(r, 5000, AL_K_STORAGE);
        al_free(NULL, 0, AL_K_OTHER);
        al_stats_get(&st);
        cr_assert_eq(st.live_blocks, 0, "[%s] blocks left", specs[s]);
        cr_assert_eq(st.live_bytes, 0, "[%s] bytes left", specs[s]);
        cr_assert_eq(st.peak_bytes, 5364, "[%s] peak %llu", specs[s],
                     (unsigned long long)st.peak_bytes);
        cr_assert_eq(st.total_allocs, 3, "[%s] total_allocs", specs[s]);
        cr_assert_eq(st.total_frees, 3, "[%s] total_frees", specs[s]);
        cr_assert_eq(st.total_reallocs, 2, "[%s] total_reallocs", specs[s]);
        cr_assert_eq(st.failed_allocs, 0, "[%s] failed_allocs", specs[s]);
        done(a);
    }
}

Test(front, many_blocks_all_sizes)
{
    enum { N = 2000 };
    static char *ptrs[N];
    for (size_t s = 0; s < NSPECS; s++) {
        al_allocator *a = make(specs[s]);
        al_install(a);
        uint64_t bytes = 0;
        for (size_t i = 0; i < N; i++) {
            size_t n = (i * 37) % 6000;
            ptrs[i] = al_malloc(n, (al_kind)(i % AL_K_COUNT), "t_many");
            cr_assert_not_null(ptrs[i], "[%s] block %zu", specs[s], i);
            memset(ptrs[i], (int)(i & 0xff), n);
            bytes += n;
        }
        cr_assert_eq(al_live_bytes(), bytes, "[%s] live bytes", specs[s]);
        for (size_t i = 0; i < N; i += 2) {
            size_t n = (i * 37) % 6000;
            if (n)
                cr_assert_eq((unsigned char)ptrs[i][n - 1], i & 0xff,
                             "[%s] block %zu overwritten", specs[s], i);
            al_free(ptrs[i], n, (al_kind)(i % AL_K_COUNT));
        }
        for (size_t i = 1; i < N; i += 2)
            al_free(ptrs[i], (i * 37) % 6000, (al_kind)(i % AL_K_COUNT));
        cr_assert_eq(al_live_blocks(), 0, "[%s] blocks left", specs[s]);
        done(a);
    }
}

Test(front, zero_size_blocks_are_unique)
{
    for (size_t s = 0; s < NSPECS; s++) {
        al_allocator *a = make(specs[s]);
        al_install(a);
        void *p = al_malloc(0, AL_K_OTHER, "t_zero");
        void *q = al_malloc(0, AL_K_OTHER, "t_zero");
        cr_assert(p && q && p != q, "[%s] malloc(0) must give distinct blocks", specs[s]);
        cr_assert_eq(al_live_blocks(), 2, "[%s] zero blocks counted", specs[s]);
        cr_assert_eq(al_live_bytes(), 0, "[%s] zero blocks have no bytes", specs[s]);
        al_free(p, 0, AL_K_OTHER);
        al_free(q, 0, AL_K_OTHER);
        cr_assert_eq(al_live_blocks(), 0, "[%s]", specs[s]);
        done(a);
    }
}

Test(front, realloc_null_and_zero)
{
    al_allocator *a = make("libc");
    al_install(a);
    char *p = al_realloc(NULL, 0, 16, AL_K_ATTR, "t");
    cr_assert_not_null(p);
    cr_assert_eq(al_live_bytes_kind(AL_K_ATTR), 16, "realloc(NULL) is malloc");
    cr_assert_null(al_realloc(p, 16, 0, AL_K_ATTR, "t"), "realloc to 0 frees");
    cr_assert_eq(al_live_blocks(), 0, "realloc to 0 must free the block");
    done(a);
}

Test(front, calloc_zeroes_and_overflow_is_null)
{
    al_allocator *a = make("guard");     /* guard fills new blocks with 0xCD */
    al_install(a);
    unsigned char *p = al_calloc(10, 7, AL_K_MEMO, "t_calloc");
    cr_assert_not_null(p);
    for (int i = 0; i < 70; i++)
        cr_assert_eq(p[i], 0, "calloc byte %d not zero", i);
    cr_assert_eq(al_live_bytes_kind(AL_K_MEMO), 70);
    al_free(p, 70, AL_K_MEMO);
    void *q = al_calloc(SIZE_MAX / 2, 3, AL_K_MEMO, "t_overflow");
    cr_assert_null(q, "calloc with count*size overflow must return NULL");
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.failed_allocs, 1, "overflowing calloc counts as failed");
    cr_assert_eq(st.live_blocks, 0);
    done(a);
}

Test(front, strdup_counts_len_plus_one)
{
    al_allocator *a = make("tracking/arena");
    al_install(a);
    char *s = al_strdup("fake tensor", AL_K_SCENARIO, "t_strdup");
    cr_assert_str_eq(s, "fake tensor");
    cr_assert_eq(al_live_bytes_kind(AL_K_SCENARIO), 12);
    al_free(s, strlen(s) + 1, AL_K_SCENARIO);
    cr_assert_eq(al_live_bytes(), 0);
    done(a);
}

Test(front, install_zeroes_counters_and_current)
{
    al_install(NULL);
    cr_assert_not_null(al_current(), "a default allocator is always current");
    cr_assert_str_eq(al_current()->name, "libc");
    void *p = al_malloc(8, AL_K_OTHER, "t");
    cr_assert_eq(al_live_blocks(), 1);
    al_free(p, 8, AL_K_OTHER);
    al_allocator *a = make("arena");
    al_install(a);
    cr_assert_eq(al_current(), a);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.total_allocs, 0, "install must zero the counters");
    cr_assert_eq(al_alloc_count(), 0, "install must zero the attempt count");
    done(a);
    cr_assert_str_eq(al_current()->name, "libc");
    a = make("guard/arena");
    al_install(a);
    al_destroy(a);                       /* without al_install(NULL) first */
    cr_assert_str_eq(al_current()->name, "libc",
                     "destroying the installed allocator must uninstall it");
}

Test(front, spec_names_normalized)
{
    struct { const char *spec, *name; } cases[] = {
        { "libc", "libc" },
        { "guard", "guard/libc" },
        { "tracking/jemalloc", "tracking/jemalloc" },
        { "fail:3+/guard/arena", "fail:3+/guard/arena" },
        { "guard:q=0", "guard:q=0/libc" },
        { "tracking/fail:7", "tracking/fail:7/libc" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        al_allocator *a = make(cases[i].spec);
        cr_assert_str_eq(a->name, cases[i].name, "name of %s", cases[i].spec);
        al_destroy(a);
    }
}

Test(front, bad_specs_rejected_with_valid_names)
{
    const char *bad[] = { "tcmalloc", "tracking/foo", "", "guard//libc", "libc/guard",
                          "fail:0", "fail:x", "fail:", "guard:q=", "jemalloc/arena",
                          "tracking/" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        al_allocator *a = (al_allocator *)&a;
        char err[256] = "";
        cr_assert_eq(as_create(bad[i], &a, err, sizeof err), -1, "'%s' accepted", bad[i]);
        cr_assert_null(a, "'%s': *out must be NULL on failure", bad[i]);
        cr_assert_neq(err[0], '\0', "'%s': no message", bad[i]);
    }
    char err[256];
    al_allocator *a;
    as_create("tcmalloc", &a, err, sizeof err);
    cr_assert_not_null(strstr(err, "unknown allocator 'tcmalloc'"), "message: %s", err);
    for (const char *n = "libc jemalloc arena tracking guard fail:N"; *n;) {
        char word[16];
        size_t len = strcspn(n, " ");
        memcpy(word, n, len);
        word[len] = '\0';
        cr_assert_not_null(strstr(err, word), "message lacks %s: %s", word, err);
        n += len + (n[len] == ' ');
    }
    cr_assert_not_null(strstr(as_names(), "jemalloc"), "as_names: %s", as_names());
    /* a tiny buffer is still terminated */
    char tiny[8];
    as_create("nope", &a, tiny, sizeof tiny);
    cr_assert_eq(strlen(tiny), 7);
    char *list = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&list, &len);
    as_list(f);
    fclose(f);
    cr_assert(strncmp(list, "libc\n", 5) == 0, "as_list: %s", list);
    cr_assert_not_null(strstr(list, "\njemalloc\n"), "as_list: %s", list);
    cr_assert_null(strchr(list, ','), "as_list: %s", list);
    cr_assert_null(strstr(list, "\n "), "as_list: %s", list);
    free(list);
}

Test(front, fail_at_exact_then_recovers)
{
    al_allocator *a = make("libc");
    al_install(a);
    void *p0 = al_malloc(8, AL_K_OTHER, "t");    /* before: not counted by fail_at */
    al_fail_at(3, 0);
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = al_malloc(8, AL_K_OTHER, "t");
    cr_assert_not_null(p[0]);
    cr_assert_not_null(p[1]);
    cr_assert_null(p[2], "the 3rd allocation after al_fail_at(3) must fail");
    cr_assert_not_null(p[3], "non-persistent: the 4th succeeds");
    cr_assert_not_null(p[4]);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.failed_allocs, 1);
    cr_assert_eq(al_alloc_count(), 6);
    for (int i = 0; i < 5; i++)
        al_free(p[i], 8, AL_K_OTHER);
    al_free(p0, 8, AL_K_OTHER);
    cr_assert_eq(al_live_blocks(), 0);
    done(a);
}

Test(front, fail_at_persistent_and_realloc)
{
    al_allocator *a = make("arena");
    al_install(a);
    char *p = al_malloc(16, AL_K_OTHER, "t");
    memcpy(p, "abc", 4);
    al_fail_at(2, 1);
    char *q = al_realloc(p, 16, 8, AL_K_OTHER, "t");   /* shrink: not an attempt */
    cr_assert_not_null(q);
    void *r = al_malloc(8, AL_K_OTHER, "t");            /* attempt 1 */
    cr_assert_not_null(r);
    char *g = al_realloc(q, 8, 4096, AL_K_OTHER, "t");  /* attempt 2: fails */
    cr_assert_null(g, "growing realloc is an attempt and must fail");
    cr_assert_str_eq(q, "abc", "failed realloc must leave the block valid");
    cr_assert_null(al_malloc(1, AL_K_OTHER, "t"), "persistent: later attempts fail");
    cr_assert_null(al_calloc(1, 1, AL_K_OTHER, "t"));
    cr_assert_null(al_strdup("x", AL_K_OTHER, "t"));
    al_fail_at(0, 0);
    void *ok = al_malloc(1, AL_K_OTHER, "t");
    cr_assert_not_null(ok, "al_fail_at(0) disables injection");
    al_free(ok, 1, AL_K_OTHER);
    al_free(q, 8, AL_K_OTHER);
    al_free(r, 8, AL_K_OTHER);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.failed_allocs, 4);
    cr_assert_eq(st.live_blocks, 0);
    done(a);
}

Test(front, kind_names)
{
    cr_assert_str_eq(al_kind_name(AL_K_STORAGE), "storage");
    cr_assert_str_eq(al_kind_name(AL_K_OTHER), "other");
    cr_assert_str_eq(al_kind_name(AL_K_COUNT), "?");
}

/* A pool is invisible to every observable: counters and fault points are
 * those of al_malloc/al_free; it caches only in front of a base allocator
 * or the tracking wrapper, without a checker, and al_install gives its
 * blocks back. */
Test(front, pool_counts_like_malloc_and_flushes_on_install)
{
    static al_pool pool = AL_POOL_INIT(48, AL_K_MEMO);
    for (size_t s = 0; s < NSPECS; s++) {
        al_allocator *a = make(specs[s]);
        al_install(a);
        /* bases and tracking (it has xpool) cache; guard and fail do not */
        int caches = !vg_running() && !VG_ASAN_ENABLED &&
                     !strstr(specs[s], "guard") && !strstr(specs[s], "fail");
        void *b[3];
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 3; i++) {
                b[i] = al_pool_get(&pool, "t_pool");
                cr_assert_not_null(b[i], "[%s] pool get %d", specs[s], i);
                memset(b[i], 0x5a, 48);
            }
            cr_assert_eq(al_live_blocks(), 3, "[%s] live blocks" " (%llu, want %llu)", specs[s], (unsigned long long)(al_live_blocks()), (unsigned long long)(3));
            cr_assert_eq(al_live_bytes_kind(AL_K_MEMO), 3 * 48, "[%s] bytes" " (%llu, want %llu)", specs[s], (unsigned long long)(al_live_bytes_kind(AL_K_MEMO)), (unsigned long long)(3 * 48));
            for (int i = 0; i < 3; i++)
                al_pool_put(&pool, b[i]);
            cr_assert_eq(al_live_blocks(), 0, "[%s] live after put" " (%llu, want %llu)", specs[s], (unsigned long long)(al_live_blocks()), (unsigned long long)(0));
            cr_assert_eq(pool.n, caches ? 3u : 0u, "[%s] cached" " (%llu, want %llu)", specs[s], (unsigned long long)(pool.n), (unsigned long long)(caches ? 3u : 0u));
        }
        al_stats st;
        al_stats_get(&st);
        cr_assert_eq(st.total_allocs, 6, "[%s] allocs" " (%llu, want %llu)", specs[s], (unsigned long long)(st.total_allocs), (unsigned long long)(6));
        cr_assert_eq(st.total_frees, 6, "[%s] frees" " (%llu, want %llu)", specs[s], (unsigned long long)(st.total_frees), (unsigned long long)(6));
        /* a get is a fault point, cached block or not */
        al_fail_at(2, 0);
        void *x = al_pool_get(&pool, "t_pool");
        cr_assert_not_null(x, "[%s] first get after fail_at", specs[s]);
        cr_assert_null(al_pool_get(&pool, "t_pool"), "[%s] the 2nd get must fail", specs[s]);
        al_pool_put(&pool, x);
        al_stats_get(&st);
        cr_assert_eq(st.failed_allocs, 1, "[%s] failed" " (%llu, want %llu)", specs[s], (unsigned long long)(st.failed_allocs), (unsigned long long)(1));
        done(a);
        cr_assert_null(pool.head, "[%s] install gave the cached blocks back", specs[s]);
        cr_assert_eq(pool.n, 0, "[%s] nothing cached after install" " (%llu, want %llu)", specs[s], (unsigned long long)(pool.n), (unsigned long long)(0));
    }
}

/* All pools together cache AL_POOL_BYTES and no more: a put past the budget
 * goes to the allocator, and the counters stay those of al_free. */
Test(front, pools_cache_up_to_their_byte_budget)
{
    static al_pool big = AL_POOL_INIT(AL_POOL_BYTES / 3 + 1, AL_K_OTHER);
    static al_pool other = AL_POOL_INIT(AL_POOL_BYTES / 2, AL_K_OTHER);
    al_allocator *a = make("libc");
    al_install(a);
    int caches = !vg_running() && !VG_ASAN_ENABLED;
    void *b[3];
    for (int i = 0; i < 3; i++) {
        b[i] = al_pool_get(&big, "t_big");
        cr_assert_not_null(b[i], "big get %d", i);
    }
    void *x = al_pool_get(&other, "t_other");
    cr_assert_not_null(x, "other get");
    for (int i = 0; i < 3; i++)
        al_pool_put(&big, b[i]);
    cr_assert_eq(big.n, caches ? 2u : 0u, "cached (%llu, want %llu)",
                 (unsigned long long)big.n, (unsigned long long)(caches ? 2u : 0u));
    al_pool_put(&other, x);                  /* 2 (B/3 + 1) + B/2 > B */
    cr_assert_eq(other.n, 0, "the other pool is over the shared budget (%llu)",
                 (unsigned long long)other.n);
    cr_assert_eq(al_pool_cached_bytes(), caches ? 2 * big.size : 0,
                 "cached bytes (%zu, want %zu)", al_pool_cached_bytes(),
                 caches ? 2 * big.size : (size_t)0);
    al_stats st;
    al_stats_get(&st);
    cr_assert_eq(st.total_frees, 4, "frees (%llu, want %llu)",
                 (unsigned long long)st.total_frees, 4ull);
    cr_assert_eq(al_live_blocks(), 0, "live (%llu, want %llu)",
                 (unsigned long long)al_live_blocks(), 0ull);
    done(a);
    cr_assert_eq(big.n, 0, "flushed (%llu, want %llu)", (unsigned long long)big.n, 0ull);
    cr_assert_eq(al_pool_cached_bytes(), 0, "nothing cached after install (%zu)",
                 al_pool_cached_bytes());
}

Test(front, grow_doubles_at_the_end_and_keeps_the_array_on_failure)
{
    al_allocator *a = make("libc");
    al_install(a);
    uint32_t *v = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 9; n++) {
        cr_assert_eq(al_grow(&v, &cap, n, sizeof *v, 4, AL_K_OTHER, "t_grow"), 0);
        v[n] = (uint32_t)n * 7;
    }
    cr_assert_eq(cap, 16, "4, then 8, then 16 for the 9th element: cap %zu", cap);
    cr_assert_eq(al_grow(&v, &cap, 3, sizeof *v, 4, AL_K_OTHER, "t_grow"), 0);
    cr_assert_eq(cap, 16, "room already: no growth (cap %zu)", cap);
    uint32_t *before = v;
    al_fail_at(1, 0);
    cr_assert_eq(al_grow(&v, &cap, 16, sizeof *v, 4, AL_K_OTHER, "t_grow"), -1);
    cr_assert_eq(v, before, "a failed growth keeps the array");
    cr_assert_eq(cap, 16, "and its capacity (cap %zu)", cap);
    for (size_t n = 0; n < 9; n++)
        cr_assert_eq(v[n], (uint32_t)n * 7, "element %zu kept", n);
    al_free(v, cap * sizeof *v, AL_K_OTHER);
    cr_assert_eq(al_live_blocks(), 0);
    done(a);
}

Test(front, reserve_doubles_until_the_need_fits)
{
    al_allocator *a = make("libc");
    al_install(a);
    char *p = NULL;
    size_t cap = 0;
    cr_assert_eq(al_reserve(&p, &cap, 5, 1, 4, AL_K_OTHER, "t_reserve"), 0);
    cr_assert_eq(cap, 8, "first 4, doubled once for 5: cap %zu", cap);
    cr_assert_eq(al_reserve(&p, &cap, 8, 1, 4, AL_K_OTHER, "t_reserve"), 0);
    cr_assert_eq(cap, 8, "room already: no growth (cap %zu)", cap);
    cr_assert_eq(al_reserve(&p, &cap, 100, 1, 4, AL_K_OTHER, "t_reserve"), 0);
    cr_assert_eq(cap, 128, "8 doubled past 100 in one realloc: cap %zu", cap);
    p[99] = 'x';
    al_fail_at(1, 0);
    cr_assert_eq(al_reserve(&p, &cap, 129, 1, 4, AL_K_OTHER, "t_reserve"), -1);
    cr_assert(cap == 128 && p[99] == 'x', "a failed reserve keeps the array (cap %zu)", cap);
    cr_assert_eq(al_reserve(&p, &cap, SIZE_MAX, 8, 4, AL_K_OTHER, "t_reserve"), -1,
                 "a need past the address space fails");
    al_free(p, cap, AL_K_OTHER);
    cr_assert_eq(al_live_blocks(), 0);
    done(a);
}
