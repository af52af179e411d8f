/* Tests of src/bench: the suite's names, that every benchmark runs and
 * cleans up (also when allocations fail), the storage-memo trace under both
 * policies, the JSON writer, the baseline reader on good and hostile input,
 * and the comparison. No timed assertions: a timing is only checked to be
 * positive. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "bench/bn.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/obj.h"

static al_allocator *alloc;

static void setup(void)
{
    char err[256];
    cr_assert_eq(as_create("libc", &alloc, err, sizeof err), 0, "as_create: %s", err);
    al_install(alloc);
    er_clear();
}

static void teardown(void)
{
    cr_expect_eq(obj_leftover(), 0, "objects left after the test");
    cr_expect_eq(al_live_blocks(), 0, "allocator blocks left: %llu",
                 (unsigned long long)al_live_blocks());
    al_install(NULL);
    al_destroy(alloc);
}

TestSuite(bench, .init = setup, .fini = teardown);

static const char *const expected[] = {
    "alloc/pair",          "refcount/incdec",      "weaktable/insert-1k",  "weaktable/lookup-1k",
    "weaktable/remove-1k", "weaktable/insert-1m",  "weaktable/lookup-1m",  "weaktable/remove-1m",
    "weaktable/lookup-1m-in-order", "weaktable/remove-1m-in-order",
    "weaktable/insert-10m", "weaktable/lookup-10m", "weaktable/remove-10m",
    "convert/miss",        "convert/miss-1k",      "convert/miss-1m",      "convert/hit",
    "lifecycle/churn",     "lifecycle/churn-1k",   "lifecycle/churn-1m",   "view/fanout-64",
    "sparse/convert",      "gc/cycles-1m",         "gc/cycles-1k",         "gc/cycles-10m",
    "interp/statements",   "stress/steps",         "report/leak-1m",
    "report/run-10k",      "report/run-100k",      "report/run-1m",        "report/run-10m",
};
#define NEXPECTED (sizeof expected / sizeof expected[0])

Test(bench, names_are_the_documented_ones)
{
    size_t n = 0;
    const char *const *names = bn_names(&n);
    cr_assert_eq(n, NEXPECTED, "%zu benchmarks, expected %zu", n, NEXPECTED);
    cr_assert_eq(bn_count(), n, "bn_count disagrees with bn_names");
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(names[i], expected[i], "benchmark %zu", i);
        cr_expect_eq(bn_find(expected[i]), (int)i, "bn_find(%s)", expected[i]);
        cr_expect_gt(strlen(bn_describe(i)), 10, "%s has no description", names[i]);
    }
    cr_expect_eq(bn_find("convert"), -1, "a group name is not a benchmark");
    cr_expect_eq(bn_find("nope/nothing"), -1, "unknown name");
}

Test(bench, median)
{
    double a[] = {5, 1, 3};
    cr_expect_eq(bn_median(a, 3), 3, "odd count");
    double b[] = {4, 1, 3, 2};
    cr_expect_eq(bn_median(b, 4), 2.5, "even count: mean of the middle two");
    cr_expect_eq(bn_median(NULL, 0), 0, "empty");
}

/* One batch of each benchmark at --quick sizes: runs, counts operations,
 * reports a positive time and peak, and leaves nothing live. */
Test(bench, every_benchmark_runs_once_and_cleans_up)
{
    bn_config cfg;
    bn_config_quick(&cfg);
    cfg.repeats = 1;
    cfg.min_ns = 0;
    for (fk_policy p = FK_SWEEP_EAGER; p <= FK_SWEEP_PERIODIC; p++) {
        cfg.sweep = p;
        for (size_t i = 0; i < bn_count(); i++) {
            bn_result r;
            int rc = bn_run(i, &cfg, &r);
            cr_assert_eq(rc, 0, "%s (%s): %s", expected[i], fk_policy_name(p), r.message);
            cr_assert_str_eq(r.name, expected[i], "result name");
            cr_expect_eq(al_live_blocks(), 0, "%s left blocks", r.name);
            if (r.status == BN_UNAVAILABLE) {
                cr_expect_str_eq(r.name, "stress/steps", "only stress may be unavailable");
                cr_expect(strstr(r.message, "not available") != NULL, "message: %s", r.message);
                continue;
            }
            cr_expect_eq(r.status, BN_OK, "%s status", r.name);
            cr_expect_gt(r.ops, 0, "%s counted no operation", r.name);
            cr_expect_gt(r.ns_per_op, 0, "%s ns/op", r.name);
            cr_expect(r.min_ns <= r.ns_per_op && r.ns_per_op <= r.max_ns, "%s min/median/max",
                      r.name);
            cr_expect_eq(r.repeats, 1, "%s repeats", r.name);
            cr_expect_gt(r.peak_bytes, 0, "%s peak bytes", r.name);
        }
    }
}

Test(bench, sizes_follow_quick)
{
    bn_config cfg;
    bn_config_quick(&cfg);
    cfg.repeats = 1;
    cfg.min_ns = 0;
    bn_result r;
    cr_assert_eq(bn_run((size_t)bn_find("gc/cycles-1m"), &cfg, &r), 0, "%s", r.message);
    cr_expect_eq(r.ops, 10000, "--quick collects 10k objects per batch, got %llu",
                 (unsigned long long)r.ops);
    cr_assert_eq(bn_run((size_t)bn_find("weaktable/insert-1k"), &cfg, &r), 0, "%s", r.message);
    cr_expect_eq(r.ops, 1000, "1k keys per batch, got %llu", (unsigned long long)r.ops);
    cr_assert_eq(bn_run((size_t)bn_find("view/fanout-64"), &cfg, &r), 0, "%s", r.message);
    cr_expect_eq(r.ops, 64, "64 views per batch, got %llu", (unsigned long long)r.ops);
}

Test(bench, repeats_and_min_time)
{
    bn_config cfg;
    bn_config_quick(&cfg);
    cfg.repeats = 3;
    cfg.min_ns = 1000000;   /* 1 ms: several batches of 100k pairs? at least one */
    bn_result r;
    cr_assert_eq(bn_run((size_t)bn_find("convert/hit"), &cfg, &r), 0, "%s", r.message);
    cr_expect_eq(r.repeats, 3, "repeats");
    cr_expect_eq(r.ops % 100000, 0, "whole batches of 100k hits: %llu",
                 (unsigned long long)r.ops);
    cr_expect(r.min_ns <= r.ns_per_op && r.ns_per_op <= r.max_ns, "min <= median <= max");
}

/* Every allocation of a benchmark failing in turn (sampled): the run ends
 * in an error or passes, and never leaks. */
Test(bench, allocation_failures_leak_nothing)
{
    const char *which[] = {"convert/miss", "lifecycle/churn", "view/fanout-64",
                           "sparse/convert", "weaktable/remove-1k", "gc/cycles-1m",
                           "report/leak-1m", "interp/statements"};
    bn_config cfg;
    bn_config_quick(&cfg);
    cfg.repeats = 1;
    cfg.min_ns = 0;
    al_install(NULL);
    al_destroy(alloc);
    alloc = NULL;
    for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
        size_t i = (size_t)bn_find(which[w]);
        /* allocations of a clean run */
        char err[256];
        cr_assert_eq(as_create("libc", &alloc, err, sizeof err), 0, "%s", err);
        al_install(alloc);
        bn_result r;
        cr_assert_eq(bn_run(i, &cfg, &r), 0, "%s: %s", which[w], r.message);
        uint64_t total = al_alloc_count();
        al_install(NULL);
        al_destroy(alloc);
        alloc = NULL;
        cr_assert_gt(total, 0, "%s allocates nothing?", which[w]);
        uint64_t step = total / 40 + 1;
        for (uint64_t k = 1; k <= total + 1; k += (k < 20 ? 1 : step)) {
            char spec[64];
            snprintf(spec, sizeof spec, "fail:%llu:all/libc", (unsigned long long)k);
            cr_assert_eq(as_create(spec, &alloc, err, sizeof err), 0, "%s", err);
            al_install(alloc);
            int rc = bn_run(i, &cfg, &r);
            cr_expect(rc == 0 || r.status == BN_ERROR, "%s fail:%llu", which[w],
                      (unsigned long long)k);
            if (rc != 0)
                cr_expect(strstr(r.message, "left live") == NULL,
                          "%s fail:%llu leaked: %s", which[w], (unsigned long long)k, r.message);
            cr_expect_eq(al_live_blocks(), 0, "%s fail:%llu: %llu blocks live", which[w],
                         (unsigned long long)k, (unsigned long long)al_live_blocks());
            gc_collect();
            cr_expect_eq(obj_leftover(), 0, "%s fail:%llu: objects left", which[w],
                         (unsigned long long)k);
            al_install(NULL);
            al_destroy(alloc);
            alloc = NULL;
            er_clear();
        }
    }
    char err[256];
    cr_assert_eq(as_create("libc", &alloc, err, sizeof err), 0, "%s", err);
    al_install(alloc);
}

/* Read a trace into memo_storage values (rows 1..n). */
static void read_trace(fk_policy p, uint64_t n, long *storage)
{
    bn_config cfg;
    bn_config_default(&cfg);
    cfg.sweep = p;
    FILE *f = tmpfile();
    cr_assert_not_null(f, "tmpfile");
    cr_assert_eq(bn_trace_memo(&cfg, n, f), 0, "trace: %s", er_message());
    rewind(f);
    char line[256];
    cr_assert_not_null(fgets(line, sizeof line, f), "header");
    cr_expect_str_eq(line, "lifecycle,memo_storage,pending,memo_meta,memo_fake\n", "header");
    for (uint64_t i = 1; i <= n; i++) {
        cr_assert_not_null(fgets(line, sizeof line, f), "row %llu", (unsigned long long)i);
        unsigned long long idx;
        long st, pend, meta, fk;
        cr_assert_eq(sscanf(line, "%llu,%ld,%ld,%ld,%ld", &idx, &st, &pend, &meta, &fk), 5,
                     "row: %s", line);
        cr_expect_eq(idx, i, "row number");
        cr_expect_eq(meta, 0, "meta memo after a full lifecycle (row %llu)", idx);
        cr_expect_eq(fk, 0, "fake memo after a full lifecycle (row %llu)", idx);
        storage[i - 1] = st;
    }
    cr_expect_null(fgets(line, sizeof line, f), "no extra rows");
    fclose(f);
}

Test(bench, memo_trace_eager_stays_empty_periodic_saws)
{
    enum { N = 300 };
    long eager[N], periodic[N];
    read_trace(FK_SWEEP_EAGER, N, eager);
    for (int i = 0; i < N; i++)
        cr_expect_eq(eager[i], 0, "eager: storage memo after lifecycle %d is %ld", i + 1,
                     eager[i]);
    read_trace(FK_SWEEP_PERIODIC, N, periodic);
    long max = 0;
    int drops = 0;
    for (int i = 0; i < N; i++) {
        if (periodic[i] > max)
            max = periodic[i];
        if (i && periodic[i] < periodic[i - 1])
            drops++;
    }
    cr_expect_eq(periodic[0], 1, "periodic: the first dead storage stays pending");
    cr_expect(max >= 127 && max <= 128, "periodic saws up to the sweep frequency, max %ld", max);
    cr_expect_eq(drops, 2, "two sweeps in %d lifecycles at frequency 128, saw %d", N, drops);
}

/* a baseline entry without samples */
#define BE(n, ns, mn, mx, cpu, peak) \
    ((bn_base_entry){.name = n, .ns_per_op = ns, .min_ns = mn, .max_ns = mx, .cpu_ns = cpu, \
                     .peak_bytes = peak})

static bn_result mk(const char *name, double ns)
{
    bn_result r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.status = BN_OK;
    r.ns_per_op = r.min_ns = r.max_ns = r.cpu_ns_per_op = ns;
    r.ops = 1000;
    r.repeats = 5;
    r.peak_bytes = 64;
    return r;
}

Test(bench, json_round_trip)
{
    bn_result r[3] = {mk("alloc/pair", 12.5), mk("convert/miss", 250), mk("stress/steps", 0)};
    r[1].target_ns = 300;
    snprintf(r[0].note, sizeof r[0].note, "a remark \xff\xc0\xaf");
    r[2].status = BN_UNAVAILABLE;
    snprintf(r[2].message, sizeof r[2].message, "not available: \"quoted\"\\");
    bn_header h = {"0.1.0", "tracking/libc", "periodic", 1, 5, 0, "", "", ""};
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    cr_assert_eq(bn_write_json(&h, r, 3, f), 0, "write");
    long len = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len, "read back");
    buf[len] = '\0';
    fclose(f);
    cr_expect(strstr(buf, "\"tool\": \"fakegc\"") != NULL, "tool: %s", buf);
    cr_expect(strstr(buf, "\"ns_per_op\": 12.500") != NULL, "ns_per_op: %s", buf);
    cr_expect(strstr(buf, "\"target_ns\": 300.000") != NULL, "target: %s", buf);
    cr_expect(strstr(buf, "\"available\": false") != NULL, "unavailable: %s", buf);
    /* invalid UTF-8 in a note is replaced, never passed through */
    cr_expect(strstr(buf, "\"note\": \"a remark \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"") != NULL,
              "note: %s", buf);
    cr_expect(strstr(buf, "\\\"quoted\\\"\\\\") != NULL, "message escaped: %s", buf);
    bn_baseline b;
    char err[256];
    int rc = bn_baseline_parse(buf, (size_t)len, "mem", &b, err, sizeof err);
    free(buf);
    cr_assert_eq(rc, 0, "parse: %s", err);
    cr_expect_str_eq(b.allocator, "tracking/libc", "allocator");
    cr_expect_str_eq(b.sweep, "periodic", "sweep");
    cr_expect_eq(b.quick, 1, "quick");
    cr_assert_eq(b.n, 3, "entries");
    cr_expect_str_eq(b.e[0].name, "alloc/pair", "name 0");
    cr_expect(fabs(b.e[0].ns_per_op - 12.5) < 1e-9, "ns 0: %g", b.e[0].ns_per_op);
    cr_expect(fabs(b.e[1].ns_per_op - 250) < 1e-9, "ns 1");
    cr_expect_lt(b.e[2].ns_per_op, 0, "null ns_per_op reads as < 0");
    bn_baseline_free(&b);
}

static void parse_fails(const char *text, const char *want)
{
    bn_baseline b;
    char err[256] = "";
    int rc = bn_baseline_parse(text, strlen(text), "t.json", &b, err, sizeof err);
    cr_expect_eq(rc, -1, "should fail: %s", text);
    cr_expect(strstr(err, want) != NULL, "error for %s: got '%s', want '%s'", text, err, want);
    cr_expect(strncmp(err, "t.json:", 7) == 0, "error names the file: %s", err);
    cr_expect_eq(b.n, 0, "nothing kept");
    cr_expect_null(b.e, "nothing kept");
}

Test(bench, baseline_rejects_bad_input)
{
    parse_fails("", "unexpected end");
    parse_fails("[1,2]", "object at the top");
    parse_fails("{\"benchmarks\":{}}", "must be an array");
    parse_fails("{\"benchmarks\":[1]}", "must hold objects");
    parse_fails("{\"benchmarks\":[{\"ns_per_op\":3}]}", "without a \"name\"");
    parse_fails("{\"benchmarks\":[{\"name\":\"a\"}]}", "no \"ns_per_op\"");
    parse_fails("{\"benchmarks\":[{\"name\":\"a\",\"ns_per_op\":0}]}", "must be > 0");
    parse_fails("{\"benchmarks\":[{\"name\":\"a\",\"ns_per_op\":\"x\"}]}", "number or null");
    parse_fails("{\"benchmarks\":[{\"name\":\"a\",\"ns_per_op\":1}]} x", "trailing");
    parse_fails("{\"benchmarks\":[{\"name\":\"a", "unterminated string");
    parse_fails("{\"a\":tru}", "expected a value");
    parse_fails("{\"tool\":\"fakegc\"}", "not a fakegc bench document");
    parse_fails("{\n  \"benchmarks\": [\n    {\"name\": 5, \"ns_per_op\": 1}]}", "t.json:3:");
    char deep[200];
    memset(deep, 0, sizeof deep);
    strcpy(deep, "{\"x\":");
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    parse_fails(deep, "nested deeper");
}

Test(bench, baseline_accepts_unknown_keys_and_escapes)
{
    const char *t = "{\"tool\":\"fakegc\",\"extra\":{\"x\":[1,2,{\"y\":null}]},"
                    "\"benchmarks\":[{\"name\":\"a\\/b\\u0041\",\"ns_per_op\":1.5e2,"
                    "\"more\":[true,false]}]}";
    bn_baseline b;
    char err[256];
    cr_assert_eq(bn_baseline_parse(t, strlen(t), "t", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.n, 1, "one entry");
    cr_expect_str_eq(b.e[0].name, "a/bA", "escapes decoded");
    cr_expect_eq(b.e[0].ns_per_op, 150, "exponent");
    cr_expect_eq(b.quick, -1, "quick absent");
    bn_baseline_free(&b);
}

Test(bench, baseline_file_errors)
{
    bn_baseline b;
    char err[256];
    cr_expect_eq(bn_baseline_read("/nonexistent/baseline.json", &b, err, sizeof err), -1,
                 "missing file");
    cr_expect(strstr(err, "cannot read") != NULL, "message: %s", err);
}

Test(bench, compare_flags_only_slowdowns_past_tolerance)
{
    bn_base_entry e[3] = {BE("a", 100, -1, -1, -1, 0), BE("b", 100, -1, -1, -1, 0), BE("c", -1, -1, -1, -1, 0)};
    bn_baseline b;
    memset(&b, 0, sizeof b);
    b.e = e;
    b.n = 3;
    bn_result r[4] = {mk("a", 124), mk("b", 126), mk("c", 1000), mk("d", 5)};
    FILE *f = tmpfile();
    cr_expect_eq(bn_compare(r, 4, &b, 25, f), 1, "only b is more than 25%% slower");
    rewind(f);
    char buf[2048];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    fclose(f);
    cr_expect(strstr(buf, "REGRESSION") != NULL, "the slow one is named: %s", buf);
    cr_expect(strstr(buf, "not in the baseline") != NULL, "missing names noted: %s", buf);
    r[1] = mk("b", 10);
    cr_expect_eq(bn_compare(r, 4, &b, 25, NULL), 0, "faster is never a regression");
    r[0] = mk("a", 1000);
    cr_expect_eq(bn_compare(r, 4, &b, 1000, NULL), 0, "within a 1000%% tolerance");
    r[0].status = BN_UNAVAILABLE;
    r[0].ns_per_op = 1e9;
    cr_expect_eq(bn_compare(r, 4, &b, 25, NULL), 0, "unavailable results are not compared");
}

/* n samples around ns: ns * (1 + k * (i - mid) / 100), i.e. spread +-k% */
static void fill(double *v, uint32_t n, double ns, double k)
{
    for (uint32_t i = 0; i < n; i++)
        v[i] = ns * (1 + k * ((double)i - (double)(n - 1) / 2) / 100);
}

/* The shared-runner gate: CPU time per op; with repeats on both sides a
 * slow-down past the tolerance fails only when Welch's t-test finds it
 * significant; without repeats the medians are compared on the tolerance
 * alone (no widening by the spread: a +30% run with noisy repeats used to
 * pass). */
Test(bench, gate_uses_cpu_time_and_significance)
{
    bn_base_entry e[2] = {BE("a", 100, 100, 110, 100, 0), BE("b", 100, 100, 110, 100, 0)};
    bn_baseline b;
    memset(&b, 0, sizeof b);
    b.e = e;
    b.n = 2;
    bn_result r[2] = {mk("a", 190), mk("b", 150)};
    /* a: 1.9x the wall time, but the same CPU time (another process ran) */
    r[0].cpu_ns_per_op = 101, r[0].min_ns = 180, r[0].max_ns = 200;
    r[1].cpu_ns_per_op = 150, r[1].min_ns = 150, r[1].max_ns = 155;
    cr_expect_eq(bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.1, NULL, NULL), 1,
                 "only b (1.5x the CPU time) is a regression");
    /* noisy repeats no longer widen the limit: +50% with a 60% spread fails */
    r[1].max_ns = 240;
    cr_expect_eq(bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.1, NULL, NULL), 1);
    /* with repeats: +30% over quiet repeats (+-2%) is significant */
    for (int k = 0; k < 2; k++) {
        e[k].nsamples = e[k].ncpu_samples = 5;
        fill(e[k].samples, 5, 100, 2);
        fill(e[k].cpu_samples, 5, 100, 2);
        r[k].nsamples = 5;
        fill(r[k].samples, 5, 130, 2);
        fill(r[k].cpu_samples, 5, 130, 2);
        r[k].cpu_ns_per_op = 130;
    }
    bn_gate_row g = bn_gate_judge(&r[1], &e[1], 25, 10, 1.0);
    cr_expect(g.cpu && g.test.p >= 0 && g.test.p < 0.001 && g.slow,
              "+30%% on quiet data: cpu %d, p %g, slow %d", g.cpu, g.test.p, g.slow);
    cr_expect(fabs(g.change - 30) < 1e-9, "change %g, want 30", g.change);
    cr_expect_eq(bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.1, NULL, NULL), 2);
    /* the same +30% in repeats spread +-80%: not significant, passes */
    fill(r[1].cpu_samples, 5, 130, 80);
    fill(e[1].cpu_samples, 5, 100, 80);
    g = bn_gate_judge(&r[1], &e[1], 25, 10, 1.0);
    cr_expect(g.test.p > BN_ALPHA && !g.slow, "+30%% in noise: p %g, slow %d", g.test.p, g.slow);
    /* significant but within the tolerance: passes */
    fill(r[1].cpu_samples, 5, 110, 1);
    fill(e[1].cpu_samples, 5, 100, 1);
    g = bn_gate_judge(&r[1], &e[1], 25, 10, 1.0);
    cr_expect(g.significant && !g.slow, "+10%%: significant %d, slow %d", g.significant, g.slow);
    /* the same data against itself: p 1, no change */
    memcpy(r[1].cpu_samples, e[1].cpu_samples, sizeof e[1].cpu_samples);
    g = bn_gate_judge(&r[1], &e[1], 25, 10, 1.0);
    cr_expect(g.test.p == 1 && g.change == 0 && !g.slow, "itself: p %g change %g", g.test.p,
              g.change);
    /* a few-ns operation 28% slower by less than one calibration iteration
     * (cache placement between two runs) is not a regression; 2 ns is */
    bn_base_entry t[1] = {BE("t", 2.8, 2.8, 2.9, 2.8, 0)};
    b.e = t;
    b.n = 1;
    bn_result q[1] = {mk("t", 3.6)};
    q[0].cpu_ns_per_op = 3.6, q[0].min_ns = 3.5, q[0].max_ns = 3.7;
    size_t reg = bn_compare_gate(q, 1, &b, 25, 10, 1.45, 0.02, NULL, NULL);
    cr_expect_eq(reg, 0, "0.8 ns under a 1.45 ns iteration: %zu regressions", reg);
    q[0].cpu_ns_per_op = 4.8;
    reg = bn_compare_gate(q, 1, &b, 25, 10, 1.45, 0.02, NULL, NULL);
    cr_expect_eq(reg, 1, "2 ns over a 1.45 ns iteration: %zu regressions", reg);
}

/* The statistics against figures computed by hand and from t tables. */
Test(bench, summaries_and_welch_t_test)
{
    double v[] = {1, 2, 3, 4, 100};
    bn_summary s = bn_summarize(v, 5);
    cr_expect(s.n == 5 && s.mean == 22 && s.median == 3 && s.mad == 1,
              "n %zu mean %g median %g mad %g", s.n, s.mean, s.median, s.mad);
    cr_expect(fabs(s.sd - 43.6176571) < 1e-6, "sd %.9g", s.sd);
    /* two-sided critical values: t(4) 2.776, t(10) 2.228, t(30) 2.042 at 0.05;
     * t(1) 63.657 at 0.01 */
    double t[][3] = {{2.776445, 4, 0.05}, {2.228139, 10, 0.05}, {2.042272, 30, 0.05},
                     {63.656741, 1, 0.01}, {0, 7, 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        double p = bn_t_pvalue(t[i][0], t[i][1]);
        cr_expect(fabs(p - t[i][2]) < 1e-5, "t %g df %g: p %.7f, want %g", t[i][0], t[i][1], p,
                  t[i][2]);
    }
    cr_expect_eq(bn_t_pvalue(1, 0), -1, "no degrees of freedom");
    /* Welch: a = 1..5 (mean 3, var 2.5), b = 3..7 shifted by 2: t = 2 / 1 = 2,
     * df = 8, p = 0.0805 */
    double a[] = {1, 2, 3, 4, 5}, bb[] = {3, 4, 5, 6, 7};
    bn_summary sa = bn_summarize(a, 5), sb = bn_summarize(bb, 5);
    bn_ttest w = bn_welch(&sa, &sb);
    cr_expect(fabs(w.t - 2) < 1e-12 && fabs(w.df - 8) < 1e-9, "t %g df %g", w.t, w.df);
    cr_expect(fabs(w.p - 0.0805162) < 1e-6, "p %.7f, want 0.0805162", w.p);
    bn_summary one = bn_summarize(a, 1);
    cr_expect(bn_welch(&one, &sb).p < 0, "one sample: untestable");
    double c[] = {5, 5, 5};
    bn_summary sc = bn_summarize(c, 3), sd2 = bn_summarize(c, 3);
    cr_expect(bn_welch(&sc, &sd2).p == 1, "exact and equal");
    c[0] = c[1] = c[2] = 6;
    sd2 = bn_summarize(c, 3);
    cr_expect(bn_welch(&sc, &sd2).p == 0, "exact and different");
}

/* t parses into *b with n benchmarks. */
static void parses(const char *t, bn_baseline *b, size_t n)
{
    char err[256];
    cr_assert_eq(bn_baseline_parse(t, strlen(t), "t", b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b->n, n, "%zu benchmarks, want %zu", b->n, n);
}

/* Peak memory is gated too: a 23x rise fails, naming the benchmark and
 * both values, a rise within --peak-tolerance or under BN_PEAK_SLACK bytes
 * passes, and a baseline without peaks gates time alone. The peak comes
 * back from a saved JSON document. */
Test(bench, gate_on_peak_memory)
{
    bn_baseline b;
    parses("{\"benchmarks\":[{\"name\":\"convert/miss\",\"ns_per_op\":100,"
           "\"cpu_ns_per_op\":100,\"peak_bytes\":1579232},"
           "{\"name\":\"alloc/pair\",\"ns_per_op\":100,\"peak_bytes\":64}]}", &b, 2);
    cr_expect_eq(b.e[0].peak_bytes, 1579232, "peak_bytes read back: %llu, want 1579232",
                 (unsigned long long)b.e[0].peak_bytes);
    bn_result r[2] = {mk("convert/miss", 100), mk("alloc/pair", 100)};
    r[0].cpu_ns_per_op = 100, r[0].peak_bytes = 1579232 * 23;
    r[1].peak_bytes = 64 * 40;   /* 40x, but 2.5 KiB: under the slack */
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    size_t reg = bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.01, NULL, f);
    fclose(f);
    cr_expect_eq(reg, 1, "%zu regressions, want 1: %s", reg, buf);
    cr_expect(strstr(buf, "REGRESSION convert/miss: peak memory 34.6 MiB (36322336 bytes), "
                          "baseline 1542.2 KiB (1579232 bytes)") != NULL, "%s", buf);
    cr_expect(strstr(buf, "REGRESSION alloc/pair") == NULL, "%s", buf);
    r[0].peak_bytes = 1579232 + 1579232 / 20;   /* +5% */
    reg = bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.01, NULL, NULL);
    cr_expect_eq(reg, 0, "+5%% within a 10%% peak tolerance: %zu regressions", reg);
    reg = bn_compare_gate(r, 2, &b, 25, 4, 1.0, 0.01, NULL, NULL);
    cr_expect_eq(reg, 1, "+5%% over a 4%% peak tolerance: %zu regressions", reg);
    b.e[0].peak_bytes = 0;   /* an older baseline: no peaks */
    r[0].peak_bytes = 1579232 * 23;
    reg = bn_compare_gate(r, 2, &b, 25, 10, 1.0, 0.01, NULL, NULL);
    cr_expect_eq(reg, 0, "no peak in the baseline, no peak verdict: %zu regressions", reg);
    bn_baseline_free(&b);
}

/* With a config, a slow verdict is re-run: a slow-down the real benchmark
 * does not show again passes (the machine's), one it shows every time is
 * confirmed (the code's). The baseline is held while the re-runs measure. */
Test(bench, gate_reruns_a_slow_benchmark_before_calling_it_a_regression)
{
    bn_config cfg;
    bn_config_default(&cfg);
    bn_config_quick(&cfg);
    cfg.repeats = 1;
    bn_baseline b;
    memset(&b, 0, sizeof b);
    b.n = 1;
    b.e = al_malloc(sizeof *b.e, AL_K_OTHER, "test");
    cr_assert_not_null(b.e);
    /* alloc/pair takes 10-30 ns (1 us under Valgrind); this run claims
     * 1 ms, the baseline 100 us */
    b.e[0] = BE("alloc/pair", 1e5, 1e5, 1e5, 1e5, 0);
    bn_result r[1] = {mk("alloc/pair", 1e6)};
    r[0].cpu_ns_per_op = 1e6, r[0].min_ns = 1e6, r[0].max_ns = 1e6;
    size_t reg = bn_compare_gate(r, 1, &b, 25, 10, 1.0, 0.01, NULL, NULL);
    cr_expect_eq(reg, 1, "without re-runs 10x is a regression: %zu", reg);
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    reg = bn_compare_gate(r, 1, &b, 25, 10, 1.0, 0.01, &cfg, f);
    fclose(f);
    cr_expect_eq(reg, 0, "the re-run is fast, so no regression: %zu\n%s", reg, buf);
    cr_expect(strstr(buf, "passed on 1 re-run") != NULL, "the re-run is said: %s", buf);
    /* a baseline no real run can match: every re-run confirms it */
    b.e[0] = BE("alloc/pair", 0.01, 0.01, 0.01, 0.01, 0);
    f = fmemopen(buf, sizeof buf - 1, "w");
    cr_assert_not_null(f);
    reg = bn_compare_gate(r, 1, &b, 25, 10, 0.001, 0.01, &cfg, f);
    fclose(f);
    cr_expect_eq(reg, 1, "slow on every run: %zu\n%s", reg, buf);
    cr_expect(strstr(buf, "confirmed on 2 re-runs") != NULL, "both re-runs said: %s", buf);
    al_free(b.e, sizeof *b.e, AL_K_OTHER);
    cr_expect_eq(al_live_blocks(), 0, "live blocks %llu, want 0",
                 (unsigned long long)al_live_blocks());
}

/* A stress lifecycle that fails its checks (here because a bug is injected
 * behind the model's back) is a note on the measurement, not an error. */
Test(bench, stress_failures_become_a_note)
{
    size_t i = (size_t)bn_find("stress/steps");
    bn_config cfg;
    bn_config_quick(&cfg);
    cfg.repeats = 1;
    cfg.min_ns = 0;
    char err[256];
    cr_assert_eq(fk_inject("strong-memo", err, sizeof err), 0, "%s", err);
    bn_result r;
    int rc = bn_run(i, &cfg, &r);
    fk_inject("", err, sizeof err);
    cr_assert_eq(rc, 0, "%s", r.message);
    if (r.status == BN_UNAVAILABLE)
        cr_skip_test("src/stress is not built");
    cr_expect_eq(r.status, BN_OK, "still measured");
    cr_expect_gt(r.ops, 0, "steps counted");
    cr_expect(strstr(r.note, "failed their checks") != NULL, "note: '%s'", r.note);
    cr_expect(strstr(r.note, "fakegc stress --seed") != NULL, "says how to reproduce: '%s'",
              r.note);
    cr_expect_eq(al_live_blocks(), 0, "nothing left live");
}
