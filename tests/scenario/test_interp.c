/* The interpreter and runner, on small scripts given as text: expectations,
 * raises, runtime errors, limits, growth, teardown and the strict end
 * check, rounds, out of memory. After every run the process must be back to
 * zero objects and zero model bytes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "scenario/sc.h"
#include "scenario/tscen.h"

static void clean(void)
{
    cr_assert_eq(obj_live_count(), 0, "%llu objects alive after the run",
                 (unsigned long long)obj_live_count());
    cr_assert_eq(obj_zombie_count(), 0, "%llu zombies after the run",
                 (unsigned long long)obj_zombie_count());
    uint64_t model = al_live_bytes() - al_live_bytes_kind(AL_K_REPORT) -
                     al_live_bytes_kind(AL_K_HEAP);
    cr_assert_eq(model, 0, "%llu bytes live after the run (scenario %llu)",
                 (unsigned long long)model,
                 (unsigned long long)al_live_bytes_kind(AL_K_SCENARIO));
}

/* Run src with options o (NULL: defaults); out must be cleared by caller. */
static int run(const char *src, const sc_options *o, rp_scenario *out)
{
    return tsc_run(src, o, out);
}

static void done(rp_scenario *r)
{
    rp_scenario_clear(r);
    clean();
}

static void show(const rp_scenario *r)
{
    for (size_t i = 0; i < r->nfailures; i++)
        cr_log_info("failure line %u: %s -> %s (%s)", r->failures[i].line,
                    r->failures[i].text ? r->failures[i].text : "",
                    r->failures[i].actual ? r->failures[i].actual : "",
                    r->failures[i].message ? r->failures[i].message : "");
}

#define ASSERT_PASS(r)                                                           \
    do {                                                                         \
        show(&(r));                                                              \
        cr_assert_eq((r).status, RP_PASS, "status %d, %zu failures, first: %s",  \
                     (r).status, (r).nfailures,                                  \
                     (r).nfailures && (r).failures[0].actual ? (r).failures[0].actual : "-"); \
    } while (0)

Test(interp, spec_example_passes)
{
    rp_scenario r;
    run("# A real tensor's death must empty the memo entries made for it.\n"
        "m = fake_mode()\n"
        "t = empty(4, 4)\n"
        "f = m.fake(t)\n"
        "expect m.memo_meta == 1\n"
        "expect m.memo_storage == 1\n"
        "del t\n"
        "expect m.memo_meta == 0\n"
        "expect m.memo_storage == 0, \"eager policy frees the storage entry at once\"\n"
        "expect alive(f)                 # the fake tensor lives on without its source\n",
        NULL, &r);
    ASSERT_PASS(r);
    cr_expect_eq(r.passed, 5);
    cr_expect_eq(r.failed, 0);
    cr_expect_eq(r.statements, 9);
    cr_expect_gt(r.allocations, 0);
    cr_expect_str_eq(r.file, "t.scn");
    done(&r);
}

Test(interp, empty_scenario_passes)
{
    rp_scenario r;
    run("", NULL, &r);
    ASSERT_PASS(r);
    cr_expect_eq(r.statements, 0);
    done(&r);
}

Test(interp, failing_expectation_reports_actual_and_continues)
{
    rp_scenario r;
    run("t = empty(2, 3)\n"
        "expect t.numel() == 7, \"six elements\"\n"
        "expect t.dim() == 2\n"
        "expect t.is_view() == false\n",
        NULL, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_expect_eq(r.passed, 2);
    cr_expect_eq(r.failed, 1);
    cr_assert_eq(r.nfailures, 1);
    cr_expect_eq(r.failures[0].line, 2);
    cr_expect_str_eq(r.failures[0].text, "expect t.numel() == 7, \"six elements\"");
    cr_expect_str_eq(r.failures[0].actual, "6");
    cr_expect_str_eq(r.failures[0].message, "six elements");
    done(&r);
}

Test(interp, raises_holds_and_misses)
{
    rp_scenario r;
    run("a = empty(2, 3)\n"
        "expect raises(ShapeError, a.view(7))\n"
        "expect raises(TypeError, a.view(7))\n"
        "expect raises(ShapeError, a.view(6))\n"
        "w = weakref(empty(2))\n"
        "expect dead(w)\n"
        "expect raises(DeadReference, w.get())\n",
        NULL, &r);
    show(&r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_expect_eq(r.passed, 3);
    cr_assert_eq(r.nfailures, 2);
    cr_expect_eq(r.failures[0].line, 3);
    cr_expect(strncmp(r.failures[0].actual, "ShapeError: ", 12) == 0, "%s",
              r.failures[0].actual);
    cr_expect_eq(r.failures[1].line, 4);
    cr_expect(strncmp(r.failures[1].actual, "no error", 8) == 0, "%s", r.failures[1].actual);
    done(&r);
}

Test(interp, runtime_error_stops_the_scenario)
{
    rp_scenario r;
    run("a = empty(2, 3)\n"
        "v = a.view(5)\n"
        "expect 1 == 2\n",
        NULL, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_eq(r.nfailures, 1, "the expect after the error must not run");
    cr_expect_eq(r.failures[0].line, 2);
    cr_expect(strncmp(r.failures[0].actual, "ShapeError: ", 12) == 0, "%s",
              r.failures[0].actual);
    cr_expect_eq(r.statements, 2);
    done(&r);
}

Test(interp, unbound_after_del_is_an_error)
{
    rp_scenario r;
    run("x = 1\n"
        "del x\n"
        "y = x\n",
        NULL, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_eq(r.nfailures, 1);
    cr_expect(strstr(r.failures[0].actual, "TypeError: variable 'x' is not bound") != NULL, "%s",
              r.failures[0].actual);
    done(&r);
}

Test(interp, values_and_comparisons)
{
    rp_scenario r;
    run("a = empty(4, 4, dtype=f64)\n"
        "expect a.nbytes() == 128\n"
        "expect a.t().is_view() == true\n"
        "expect a.t().is_view()\n"
        "expect a.detach().is_view() == false\n"
        "expect a.size(0) == 4\n"
        "expect a.stride(1) == 1\n"
        "expect a.grad == none\n"
        "expect a.x == none\n"
        "b = a\n"
        "expect a == b\n"
        "expect f32 != f64\n"
        "expect \"x\" == \"x\"\n"
        "expect -3 < 2\n"
        "expect bytes() == 128\n"
        "expect heap_bytes() > 128\n"
        "expect live(\"tensor\") == 1\n"
        "expect live(\"storage\") == 1\n"
        "expect live() == 2\n",
        NULL, &r);
    ASSERT_PASS(r);
    cr_expect_eq(r.passed, 17);
    done(&r);
}

Test(interp, grad_and_attributes)
{
    rp_scenario r;
    run("a = empty(2, 2, requires_grad=true)\n"
        "g = zeros(2, 2)\n"
        "a.grad = g\n"
        "expect a.grad == g\n"
        "del g\n"
        "expect a.grad.numel() == 4\n"
        "a.grad = none\n"
        "expect a.grad == none\n"
        "a.other = a.t()\n"
        "expect a.other.is_view()\n"
        "a.other = none\n"
        "expect live(\"tensor\") == 1\n",
        NULL, &r);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, cycles_are_unreachable_until_gc)
{
    rp_scenario r;
    run("a = empty(1)\n"
        "b = empty(1)\n"
        "a.x = b\n"
        "b.y = a\n"
        "expect unreachable() == 0\n"
        "del a, b\n"
        "expect unreachable() == 4\n"
        "expect live(\"tensor\") == 2\n"
        "expect gc() == 4\n"
        "expect live() == 0\n",
        NULL, &r);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, with_mode_makes_fakes)
{
    rp_scenario r;
    run("m = fake_mode()\n"
        "with m\n"
        "  x = empty(2, 3, device=\"cuda\")\n"
        "  y = x.t()\n"
        "end\n"
        "expect live(\"fake\") == 2\n"
        "expect bytes() == 0\n"
        "z = empty(2)\n"
        "expect live(\"fake\") == 2\n"
        "expect bytes() == 8\n",
        NULL, &r);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, checkpoints_and_growth)
{
    rp_scenario r;
    run("checkpoint \"start\"\n"
        "t = empty(2)\n"
        "expect growth(\"start\") == 2\n"
        "repeat 3\n"
        "  checkpoint \"loop\"\n"
        "  u = empty(1)\n"
        "end\n"
        "expect growth(\"loop\") == 0\n",
        NULL, &r);
    ASSERT_PASS(r);
    cr_assert_eq(r.ncheckpoints, 2);
    cr_expect_str_eq(r.checkpoints[0].name, "start");
    cr_expect_eq(r.checkpoints[0].growth, 4);
    cr_expect_eq(r.checkpoints[1].growth, 0);
    done(&r);
}

Test(interp, teardown_deletes_newest_first_and_leaves_nothing)
{
    rp_scenario r;
    run("config sweep = \"periodic\"\n"
        "m = fake_mode()\n"
        "repeat 50\n"
        "  t = empty(4, 4)\n"
        "  f = m.fake(t)\n"
        "  v = t.slice(0, 0, 2)\n"
        "  fv = m.fake(v)\n"
        "end\n"
        "a = empty(1)\n"
        "b = empty(1)\n"
        "a.x = b\n"
        "b.y = a\n",
        NULL, &r);
    ASSERT_PASS(r);
    cr_expect_eq(r.nretained, 0);
    done(&r);
}

Test(interp, strict_end_check_lists_retained_and_reclaims)
{
    char err[256];
    cr_assert_eq(fk_inject("view-base-leak", err, sizeof err), 0, "%s", err);
    rp_scenario r;
    run("a = empty(4, 4)\n"
        "v = a.t()\n",
        NULL, &r);
    fk_inject("", err, sizeof err);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_gt(r.nretained, 0, "the leaked base must be listed");
    int found = 0;
    for (size_t i = 0; i < r.nretained; i++)
        if (r.retained[i].kind == OBJ_TENSOR && r.retained[i].site.line == 1)
            found = 1;
    cr_expect(found, "the tensor made at line 1 is retained");
    cr_expect_gt(r.ngroups, 0);
    done(&r);   /* and the reclaim left nothing */
}

Test(interp, end_check_off_does_not_fail)
{
    char err[256];
    cr_assert_eq(fk_inject("view-base-leak", err, sizeof err), 0, "%s", err);
    rp_scenario r;
    run("config end_check = \"off\"\n"
        "a = empty(4, 4)\n"
        "v = a.t()\n",
        NULL, &r);
    fk_inject("", err, sizeof err);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, repeat_rounds_flag_only_growth)
{
    sc_options o;
    sc_options_default(&o);
    o.repeat = 4;
    rp_scenario r;
    run("m = fake_mode()\n"
        "t = empty(2)\n"
        "f = m.fake(t)\n",
        &o, &r);
    ASSERT_PASS(r);
    cr_expect_eq(r.statements, 12, "3 statements x 4 rounds");
    done(&r);

    char err[256];
    cr_assert_eq(fk_inject("view-base-leak", err, sizeof err), 0, "%s", err);
    run("a = empty(4, 4)\n"
        "v = a.t()\n",
        &o, &r);
    fk_inject("", err, sizeof err);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_geq(r.nfailures, 1);
    cr_expect_eq(r.failures[0].line, 1, "the growing objects were made at line 1");
    cr_expect(strstr(r.failures[0].actual, "retained after 4 rounds") != NULL, "%s",
              r.failures[0].actual);
    /* the growing objects as groups with bounded examples: 4 bases and
     * their storages, 3 examples a group */
    cr_expect_eq(r.retained_total, 8, "retained_total %llu, want 8",
                 (unsigned long long)r.retained_total);
    cr_expect_eq(r.ngroups, 2, "%zu groups, want 2", r.ngroups);
    cr_expect_eq(r.nretained, 6, "%zu examples, want 6", r.nretained);
    done(&r);
}

Test(interp, statement_limit)
{
    sc_options o;
    sc_options_default(&o);
    o.max_statements = 10;
    rp_scenario r;
    run("repeat 100\n"
        "  x = 1\n"
        "end\n",
        &o, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_eq(r.nfailures, 1);
    cr_expect(strncmp(r.failures[0].actual, "LimitExceeded: ", 15) == 0, "%s",
              r.failures[0].actual);
    cr_expect_eq(r.statements, 10);
    done(&r);
}

Test(interp, byte_limit)
{
    sc_options o;
    sc_options_default(&o);
    o.max_bytes = 4096;
    rp_scenario r;
    run("a = empty(64)\n"
        "expect raises(LimitExceeded, empty(1_000_000))\n"
        "b = empty(2048)\n",
        &o, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_expect_eq(r.passed, 1);
    cr_assert_eq(r.nfailures, 1);
    cr_expect_eq(r.failures[0].line, 3);
    cr_expect(strncmp(r.failures[0].actual, "LimitExceeded: ", 15) == 0, "%s",
              r.failures[0].actual);
    done(&r);
}

Test(interp, object_limit)
{
    sc_options o;
    sc_options_default(&o);
    o.max_objects = 100;
    rp_scenario r;
    run("m = fake_mode()\n"
        "repeat 1000\n"
        "  a = empty(1)\n"
        "  a.prev = m\n"
        "  m = a\n"
        "end\n",
        &o, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_expect(strncmp(r.failures[0].actual, "LimitExceeded: ", 15) == 0, "%s",
              r.failures[0].actual);
    done(&r);
}

Test(interp, gc_stress_and_auto)
{
    sc_options o;
    sc_options_default(&o);
    rp_scenario r;
    const char *src = "repeat 20\n"
                      "  a = empty(1)\n"
                      "  b = empty(1)\n"
                      "  a.x = b\n"
                      "  b.y = a\n"
                      "end\n"
                      "expect unreachable() <= 4\n";
    o.gc = SC_GC_STRESS;
    run(src, &o, &r);
    ASSERT_PASS(r);
    done(&r);
    o.gc = SC_GC_AUTO;
    run("config gc = \"manual\"\n"
        "repeat 2000\n"
        "  a = empty(1)\n"
        "  b = empty(1)\n"
        "  a.x = b\n"
        "  b.y = a\n"
        "end\n"
        "expect unreachable() < 4000\n",
        &o, &r);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, verify_runs_clean)
{
    sc_options o;
    sc_options_default(&o);
    o.verify = 1;
    rp_scenario r;
    run("m = fake_mode()\n"
        "t = empty(4, 4)\n"
        "f = m.fake(t)\n"
        "v = t.t()\n"
        "fv = m.fake(v)\n"
        "del t\n",
        &o, &r);
    ASSERT_PASS(r);
    done(&r);
}

Test(interp, liveness_failure_attaches_the_object)
{
    rp_scenario r;
    run("t = empty(2)\n"
        "w = weakref(t)\n"
        "u = t\n"
        "del t\n"
        "expect dead(w)\n",
        NULL, &r);
    cr_assert_eq(r.status, RP_FAIL);
    cr_assert_eq(r.nfailures, 1);
    cr_assert_eq(r.failures[0].nobjects, 1);
    const hp_retained *o = &r.failures[0].objects[0];
    cr_expect_eq(o->kind, OBJ_TENSOR);
    cr_assert_geq(o->path_len, 1);
    cr_expect_str_eq(o->path[0], "u", "held by variable u");
    done(&r);
}

Test(interp, out_of_memory_is_clean_at_every_allocation)
{
    const char *src = "m = fake_mode()\n"
                      "t = empty(4, 4)\n"
                      "f = m.fake(t)\n"
                      "v = t.slice(0, 0, 2)\n"
                      "fv = m.fake(v)\n"
                      "w = weakref(f)\n"
                      "t.x = v\n"
                      "expect raises(ShapeError, t.view(3))\n"
                      "del t\n"
                      "expect gc() >= 0\n";
    int nerr;
    sc_program *p = sc_parse("oom.scn", src, strlen(src), NULL, 0, &nerr);
    cr_assert_not_null(p);
    sc_options o;
    sc_options_default(&o);
    o.valgrind = 0;   /* hundreds of runs: no heap scan per run */
    int complete = 0, ooms = 0;
    for (uint64_t n = 1; n < 5000 && !complete; n++) {
        rp_scenario r;
        memset(&r, 0, sizeof r);
        al_stats s0, s1;
        al_stats_get(&s0);
        al_fail_at(n, 0);
        sc_run(p, &o, &r);
        al_fail_at(0, 0);
        al_stats_get(&s1);
        if (s1.failed_allocs == s0.failed_allocs) {
            complete = 1;   /* the n-th allocation is past the run */
            cr_expect_eq(r.status, RP_PASS);
        } else if (r.status != RP_PASS) {
            ooms++;
            cr_assert_eq(r.status, RP_FAIL, "allocation %llu: status %d",
                         (unsigned long long)n, r.status);
            cr_assert(r.nfailures == 0 || r.failures[0].actual == NULL ||
                          strncmp(r.failures[0].actual, "OutOfMemory", 11) == 0,
                      "allocation %llu: %s", (unsigned long long)n, r.failures[0].actual);
        }
        rp_scenario_clear(&r);
        cr_assert_eq(obj_live_count() + obj_zombie_count(), 0,
                     "allocation %llu failed: objects left", (unsigned long long)n);
    }
    cr_expect(ooms > 10, "out of memory was seen at many places (%d)", ooms);
    int passed = complete;
    cr_expect(passed, "a run without failure must come");
    sc_program_free(p);
    clean();
}

/* A postfix chain is evaluated link by link without recursing per
 * link, and counts against the nesting limit at parse time. The longest
 * chain the parser accepts runs (and its value is the last link's); one link
 * more is a parse error at the offending '.', not a crash. */
static char *chain_src(int links, const char *link, const char *tail)
{
    size_t n = strlen(link);
    char *s = malloc(64 + (size_t)links * n + strlen(tail));
    size_t len = (size_t)sprintf(s, "t = empty(2, 3)\nx = t");
    for (int i = 0; i < links; i++, len += n)
        memcpy(s + len, link, n);
    strcpy(s + len, tail);
    return s;
}

Test(interp, longest_postfix_chain_runs_iteratively)
{
    /* 254 transposes (even: back to 2 x 3) and .dim() as link 255 */
    char *s = chain_src(SC_MAX_NESTING - 2, ".t()", ".dim()\nexpect x == 2\n");
    rp_scenario r;
    run(s, NULL, &r);
    ASSERT_PASS(r);
    done(&r);
    free(s);
}

Test(interp, postfix_chain_past_the_limit_is_a_parse_error)
{
    char *s = chain_src(12000, ".t()", "\n");
    char diag[4096] = "";
    FILE *f = fmemopen(diag, sizeof diag - 1, "w");
    rp_scenario r;
    memset(&r, 0, sizeof r);
    int rc = sc_run_source("t.scn", s, NULL, &r, f);
    fclose(f);
    cr_assert_eq(rc, -2, "rc %d, diag %s", rc, diag);
    cr_expect(strstr(diag, "t.scn:2:1026: error: method/attribute chain nested too deeply") == diag,
              "%.200s", diag);
    rp_scenario_clear(&r);
    clean();
    free(s);
}

/* A failing scenario's peak_bytes is the model's: the same run first in
 * the process and after another failing scenario. The failure's analysis
 * and its report records are not counted (the first run's analysis grows
 * tables that later ones reuse, and counted, its peak was higher). */
Test(interp, failing_peak_is_the_same_whatever_ran_before)
{
    static const char src[] = "m = fake_mode()\n"
                              "t = empty(4, 4)\n"
                              "w = weakref(t)\n"
                              "f = m.fake(t)\n"
                              "del t\n"
                              "expect dead(w), \"the memo must not keep it\"\n"
                              "expect m.memo_meta == 0\n"
                              "expect m.memo_storage == 0\n";
    char err[256];
    cr_assert_eq(fk_inject("strong-memo", err, sizeof err), 0, "%s", err);
    static const char other[] = "m = fake_mode()\n"
                                "a = empty(2, 3)\n"
                                "b = m.fake(a)\n"
                                "del a\n"
                                "expect m.memo_meta == 0\n";
    rp_scenario r[3];
    for (int i = 0; i < 3; i++) {
        run(i == 1 ? other : src, NULL, &r[i]);
        cr_assert_eq(r[i].status, RP_FAIL, "run %d: status %d", i, r[i].status);
    }
    fk_inject("", err, sizeof err);
    cr_assert_eq(r[2].peak_bytes, r[0].peak_bytes,
                 "after another failing scenario %llu B, run first %llu B",
                 (unsigned long long)r[2].peak_bytes, (unsigned long long)r[0].peak_bytes);
    for (int i = 0; i < 3; i++)
        done(&r[i]);
}
