/* Tests of a bench session (bn_session.c): what a name selects, with a
 * suggestion for a near miss, and the comparison of two saved runs. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>
#include <unistd.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "bench/bn.h"
#include "core/er.h"

static al_allocator *alloc;

static void setup(void)
{
    char err[256];
    cr_assert(eq(int, as_create("libc", &alloc, err, sizeof err), 0), "%s", err);
    al_install(alloc);
    er_clear();
}

static void teardown(void)
{
    cr_expect(eq(u64, al_live_blocks(), 0));
    al_install(NULL);
    al_destroy(alloc);
}

TestSuite(session, .init = setup, .fini = teardown);

/* How many benchmarks name selects, each checked against want(name). */
static size_t selected(const char *name, int (*want)(const char *))
{
    int sel[BN_MAX] = {0};
    char err[128] = "";
    size_t n, k = 0;
    const char *const *names = bn_names(&n);
    cr_assert(eq(int, bn_select(name, sel, err, sizeof err), 0), "%s: %s", name, err);
    for (size_t i = 0; i < n; i++) {
        cr_assert(eq(int, sel[i], want(names[i])), "%s selects %s", name, names[i]);
        k += (size_t)sel[i];
    }
    return k;
}

static int is_weaktable(const char *s) { return strncmp(s, "weaktable/", 10) == 0; }
static int starts_conv(const char *s) { return strncmp(s, "conv", 4) == 0; }
static int is_pair(const char *s) { return strcmp(s, "alloc/pair") == 0; }

Test(session, what_a_name_selects)
{
    cr_assert(gt(sz, selected("weaktable", is_weaktable), 1));
    cr_assert(gt(sz, selected("weaktable/", is_weaktable), 1));
    cr_assert(gt(sz, selected("conv*", starts_conv), 1));
    cr_assert(eq(sz, selected("alloc/pair", is_pair), 1));
}

Test(session, a_near_miss_is_suggested)
{
    int sel[BN_MAX] = {0};
    char err[128] = "";
    cr_assert(eq(int, bn_select("alloc/pairs", sel, err, sizeof err), -1));
    cr_assert(eq(str, err, "unknown benchmark 'alloc/pairs'; did you mean 'alloc/pair'?"));
    cr_assert(eq(int, bn_select("weak", sel, err, sizeof err), -1));
    cr_assert(eq(str, err, "unknown benchmark 'weak' (fakegc list benches)"));
    for (size_t i = 0; i < BN_MAX; i++)
        cr_assert(eq(int, sel[i], 0));
}

/* A saved run of alloc/pair at ns ns/op and peak bytes, in path. */
static void saved(const char *path, double ns, uint64_t peak)
{
    bn_result r;
    memset(&r, 0, sizeof r);
    r.name = "alloc/pair";
    r.ns_per_op = r.min_ns = r.max_ns = r.cpu_ns_per_op = ns;
    r.ops = 1000;
    r.repeats = 5;
    r.peak_bytes = peak;
    bn_header h = {"0.1.0", "libc", "eager", 0, 5, 1.0, "", "", ""};
    FILE *f = fopen(path, "w");
    cr_assert(ne(ptr, f, NULL));
    cr_assert(eq(int, bn_write_json(&h, &r, 1, f), 0));
    fclose(f);
}

Test(session, compare_two_saved_runs)
{
    char a[] = "/tmp/fakegc-bn-a-XXXXXX", b[] = "/tmp/fakegc-bn-b-XXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    FILE *out = fopen("/dev/null", "w");
    saved(a, 100, 1 << 20);
    saved(b, 101, 1 << 20);
    cr_expect(eq(int, bn_compare_files(a, b, 25, 10, BN_FMT_TEXT, out, "test"), BN_DONE));
    saved(b, 100, 23 << 20);   /* peak memory 23x */
    cr_expect(eq(int, bn_compare_files(a, b, 25, 10, BN_FMT_TEXT, out, "test"), BN_REGRESSION));
    cr_expect(eq(int, bn_compare_files(a, "/nonexistent.json", 25, 10, BN_FMT_TEXT, out, "test"),
                 BN_UNREADABLE));
    fclose(out);
    unlink(a);
    unlink(b);
}
