/* Tests of src/report/rp_merge: one campaign's shard reports into one
 * (counts summed, scenarios sorted, stress failures grouped, unknown fields
 * carried or refused), the exit-2 cases naming which, and the fault loop:
 * every allocation of a merge fails cleanly with nothing leaked. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp_merge.h"

static uint64_t base_bytes;
static char dir[] = "/tmp/fakegc-merge-XXXXXX";

static void setup(void)
{
    er_clear();
    base_bytes = al_live_bytes();
    cr_assert(mkdtemp(dir) != NULL);
}

static void teardown(void)
{
    al_fail_at(0, 0);
    cr_expect_eq(al_live_bytes(), base_bytes, "allocator bytes left: %lld",
                 (long long)(al_live_bytes() - base_bytes));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(merge, .init = setup, .fini = teardown);

static const char *put(const char *name, const char *text)
{
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    return p;
}

#define STRESS(k, steps, extra)                                                             \
    "{\"tool\": \"fakegc\", \"command\": \"stress\", \"inject\": \"\", \"seed\": 1, "     \
    "\"shard\": [" #k ", 2], \"lifecycle\": 10, \"host\": \"h" #k "\", "                 \
    "\"lifecycle_first\": " #k ", \"lifecycle_stride\": 2, \"steps\": " #steps ", "       \
    "\"statements\": 5, \"lifecycles\": 3, \"seconds\": 0.5, \"steps_per_second\": 1, "   \
    "\"max_live_objects\": " #k extra "}"

/* merge into a memory buffer; rc of rp_merge_files */
static int merge(const char **paths, size_t n, rp_format fmt, char **out, rp_merge_result *m,
                 char *err, size_t errlen)
{
    size_t len = 0;
    FILE *f = open_memstream(out, &len);
    rp_options o = {0};
    int rc = rp_merge_files(paths, n, fmt, f, &o, m, err, errlen);
    fclose(f);
    return rc;
}

Test(merge, sums_stress_counts_and_lists_the_shards)
{
    const char *p[] = {put("b.json", STRESS(1, 20, ", \"failures\": 0")),
                       put("a.json", STRESS(0, 30, ", \"failures\": 0"))};
    char *out = NULL, err[256];
    rp_merge_result m;
    cr_assert_eq(merge(p, 2, RP_JSON, &out, &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.failed, 0);
    cr_expect(strstr(out, "\"schema\": \"fakegc-stress/2\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"steps\": 50") != NULL, "%s", out);
    cr_expect(strstr(out, "\"lifecycles\": 6") != NULL, "%s", out);
    cr_expect(strstr(out, "\"max_live_objects\": 1") != NULL, "%s", out);
    cr_expect(strstr(out, "\"seconds\": 0.500, \"cpu_seconds\": 1.000") != NULL, "%s", out);
    cr_expect(strstr(out, "\"steps_per_second\": 100") != NULL, "%s", out);
    cr_expect(strstr(out, "\"merged\": 2") != NULL, "%s", out);
    char *s0 = strstr(out, "{\"shard\": 0"), *s1 = strstr(out, "{\"shard\": 1");
    cr_expect(s0 && s1 && s0 < s1, "shards in order: %s", out);
    cr_expect(strstr(out, "\"seeds\": {\"first\": 2, \"stride\": 2, \"last\": 6}") != NULL,
              "%s", out);
    free(out);
}

#define FAILURE(seed, idx, cls, rep)                                                        \
    ", \"failures\": 1, \"failure\": {\"seed\": " #seed ", \"lifecycle_index\": " #idx     \
    ", \"class\": \"" cls "\", \"min_statements\": 2, \"reproducer\": \"" rep "\"}"

Test(merge, groups_failures_and_keeps_the_earliest)
{
    const char *p[] = {
        put("a.json", STRESS(0, 30, FAILURE(3, 2, "expect bytes() == N", "# s3\\nt1 = empty(1)\\n"))),
        put("b.json", STRESS(1, 20, FAILURE(2, 1, "expect bytes() == N", "# s2\\nt4 = empty(2)\\n")))};
    char *out = NULL, err[256];
    rp_merge_result m;
    cr_assert_eq(merge(p, 2, RP_JSON, &out, &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.failed, 1);
    cr_expect(strstr(out, "\"failures\": 1,\n  \"failure\": {\"seed\": 2,") != NULL, "%s", out);
    cr_expect(strstr(out, "\"shards\": [1, 0], \"seeds\": [2, 3], \"reproducers\": 1") != NULL,
              "same text up to numbers and comments: %s", out);
    free(out);
    const char *q[] = {
        p[0], put("c.json", STRESS(1, 20, FAILURE(2, 1, "expect dead(w)", "t = zeros(1)\\n")))};
    cr_assert_eq(merge(q, 2, RP_TEXT, &out, &m, err, sizeof err), 0, "%s", err);
    cr_expect(strstr(out, "FAIL stress seed 2 (lifecycle 1, shard 1): expect dead(w)") != NULL,
              "%s", out);
    cr_expect(strstr(out, "FAIL stress seed 3 (lifecycle 2, shard 0): expect bytes() == N") != NULL,
              "%s", out);
    cr_expect(strstr(out, "2 failures\n") != NULL, "%s", out);
    free(out);
}

static void refused(const char **p, size_t n, const char *want)
{
    char *out = NULL, err[512] = "";
    rp_merge_result m;
    cr_expect_eq(merge(p, n, RP_JSON, &out, &m, err, sizeof err), -1, "want '%s'", want);
    cr_expect(strstr(err, want) != NULL, "want '%s' in '%s'", want, err);
    free(out);
}

Test(merge, refuses_what_is_not_one_campaign)
{
    const char *a = put("a.json", STRESS(0, 30, ", \"failures\": 0"));
    const char *b = put("b.json", STRESS(1, 20, ", \"failures\": 0"));
    const char *run = put("r.json", "{\"tool\": \"fakegc\", \"shard\": [1, 2], \"scenarios\": [], "
                                    "\"summary\": {\"passed\": 0}}");
    const char *other = put("o.json", "{\"tool\": \"fakegc\", \"command\": \"stress\", \"inject\": "
                                      "\"no-sweep\", \"shard\": [1, 2], \"seed\": 1}");
    const char *p1[] = {a};
    refused(p1, 1, "shard 1 of 2 missing");
    const char *p2[] = {a, b, b};
    refused(p2, 3, "shard 1 of 2 given twice");
    const char *p3[] = {a, run};
    refused(p3, 2, "r.json is a run report but");
    const char *p4[] = {a, other};
    refused(p4, 2, "differ in \"inject\"");
    const char *bad = put("x.json", "{\"shard\": [2, 2]}");
    const char *p5[] = {bad};
    refused(p5, 1, "\"shard\" is not [K, N]");
    const char *junk = put("j.json", "{\"shard\": [0, 1],}");
    const char *p6[] = {junk};
    refused(p6, 1, "not a fakegc JSON report");
}

Test(merge, sorts_scenarios_and_carries_unknown_fields)
{
    const char *a = put("a.json", "{\"tool\": \"fakegc\", \"new\": {\"x\": [1]}, \"shard\": [0, 2], "
                                  "\"scenarios\": [{\"file\": \"s/b.scn\", \"status\": \"pass\"}, "
                                  "{\"file\": \"s/d.scn\", \"status\": \"fail\"}], "
                                  "\"summary\": {\"passed\": 1, \"failed\": 1}}");
    const char *b = put("b.json", "{\"tool\": \"fakegc\", \"new\": {\"x\": [1]}, \"shard\": [1, 2], "
                                  "\"scenarios\": [{\"file\": \"s/a.scn\", \"status\": \"pass\"}, "
                                  "{\"file\": \"s/c.scn\", \"status\": \"pass\"}], "
                                  "\"summary\": {\"passed\": 2, \"failed\": 0}}");
    const char *p[] = {a, b};
    char *out = NULL, err[256];
    rp_merge_result m;
    cr_assert_eq(merge(p, 2, RP_JSON, &out, &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.failed, 1);
    cr_expect(strstr(out, "\"new\": {\"x\": [1]}") != NULL, "%s", out);
    /* recomputed from the scenarios, every count */
    cr_expect(strstr(out, "\"summary\": {\"passed\": 3, \"failed\": 1, \"skipped\": 0, "
                          "\"errors\": 0}") != NULL, "%s", out);
    const char *fa = strstr(out, "s/a.scn"), *fb = strstr(out, "s/b.scn"),
               *fc = strstr(out, "s/c.scn"), *fd = strstr(out, "s/d.scn");
    cr_expect(fa && fb && fc && fd && fa < fb && fb < fc && fc < fd, "sorted: %s", out);
    free(out);
    const char *c = put("c.json", "{\"tool\": \"fakegc\", \"new\": {\"x\": [2]}, \"shard\": [1, 2], "
                                  "\"scenarios\": [], \"summary\": {\"passed\": 2, \"failed\": 0}}");
    const char *q[] = {a, c};
    refused(q, 2, "differ in \"new\"");
}

Test(merge, every_allocation_failure_is_clean)
{
    const char *p[] = {
        put("a.json", STRESS(0, 30, FAILURE(3, 2, "expect bytes() == N", "t1 = empty(1)\\n"))),
        put("b.json", STRESS(1, 20, FAILURE(2, 1, "expect bytes() == N", "t4 = empty(2)\\n")))};
    int done = 0;
    for (uint64_t k = 1; k < 2000 && !done; k++) {
        er_clear();
        char *out = NULL, err[256] = "";
        rp_merge_result m;
        uint64_t start = al_alloc_count();
        al_fail_at(k, 0);
        int rc = merge(p, 2, RP_TEXT, &out, &m, err, sizeof err);
        uint64_t used = al_alloc_count() - start;
        al_fail_at(0, 0);
        if (rc == 0)
            done = used < k;
        else
            cr_expect_eq(rc, -2, "failure %llu: rc %d (%s)", (unsigned long long)k, rc, err);
        free(out);
        cr_assert_eq(al_live_bytes(), base_bytes, "leak after failing allocation %llu",
                     (unsigned long long)k);
    }
    cr_expect(done, "a clean run ended the loop");
}
