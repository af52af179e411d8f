/* Shrinking keeps the failure and drops the rest; the OOM loop. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "stress/st.h"
#include "stress/st_setup.h"

/* Fails under strong-memo (line 8: the memo keeps t alive), passes without. */
static const char *failing =
    "m = fake_mode()\n"
    "a = ones(3, 3)\n"
    "b = a.t()\n"
    "t = empty(4, 4, dtype=f64)\n"
    "f = m.fake(t)\n"
    "c = zeros(2)\n"
    "del t\n"
    "expect m.memo_meta == 0\n"
    "with m\n"
    "  g = empty(2, 5)\n"
    "end\n"
    "d = b.clone()\n"
    "expect bytes() == 80\n";

Test(shrink, keeps_the_failure_and_drops_the_rest)
{
    char err[128];
    cr_assert_eq(fk_inject("strong-memo", err, sizeof err), 0);
    st_env e;
    st_env_default(&e);
    e.inject = "strong-memo";
    st_env_prepare(&e);
    st_outcome o;
    st_run_text(&e, "in.scn", failing, &o);
    cr_assert_eq(o.status, ST_FAIL);
    cr_assert_str_eq(o.cls[0], "expect m.memo_meta == N", "class: %s", o.cls[0]);
    st_text out = {0};
    st_shrink_stats ss;
    cr_assert_eq(st_shrink_text(&e, failing, o.cls[0], 1, &out, &ss), 0);
    cr_assert_lt(ss.after_statements, st_count_statements(failing), "%zu statements:\n%s",
                 ss.after_statements, out.p);
    cr_assert_leq(ss.after_statements, 5, "got %zu statements:\n%s", ss.after_statements,
                  out.p);
    cr_assert(strstr(out.p, "expect m.memo_meta == 0"), "the check stays:\n%s", out.p);
    cr_assert_null(strstr(out.p, "with m"), "the block is gone:\n%s", out.p);
    cr_assert(strstr(out.p, "empty(1") || strstr(out.p, "empty(2") ||
              strstr(out.p, "empty()"), "sizes got smaller:\n%s", out.p);
    cr_assert_null(strstr(out.p, "dtype="), "keyword arguments dropped:\n%s", out.p);
    /* the reproducer still fails the same way, and passes without the bug */
    st_run_text(&e, "min.scn", out.p, &o);
    cr_assert(st_outcome_has(&o, "expect m.memo_meta == N"), "%s", o.first);
    fk_inject("", err, sizeof err);
    st_run_text(&e, "min.scn", out.p, &o);
    cr_assert_eq(o.status, ST_PASS, "%s", o.first);
    st_text_free(&out);
}

Test(shrink, a_crash_is_an_outcome_of_a_forked_run)
{
    st_env e;
    st_env_default(&e);
    st_env_prepare(&e);
    st_outcome o;
    st_run_forked(&e, "ok.scn", "t = empty(2)\nexpect bytes() == 8\n", 0, &o);
    cr_assert_eq(o.status, ST_PASS, "%s", o.first);
    st_run_forked(&e, "bad.scn", "t = empty(2)\nexpect bytes() == 9\n", 0, &o);
    cr_assert_eq(o.status, ST_FAIL);
    cr_assert_str_eq(o.cls[0], "expect bytes() == N");
    cr_assert_eq(o.first_line, 2);
}

/* A model that disagrees with the implementation: lifecycles drawn and
 * predicted under pytorch-2.3, run under pytorch-2.0. Seed 3 fails its
 * sampled check `expect mN.memo_meta == N` at line 81; rendered with every
 * check after every action, the same lifecycle fails first, and from then
 * on, with other classes (sweep_every: 2.3 has no sweep), so a shrinker
 * that keeps the class must render the checks of that class alone. It
 * shrinks to a few statements that fail the same way. */
Test(shrink, a_divergence_other_checks_hide_shrinks_to_its_core)
{
    const char *cls = "expect mN.memo_meta == N";
    st_config c;
    st_config_default(&c);
    c.design = FK_D_2_3;
    st_env e;
    st_env_set(&e, NULL, -1, -1, FK_D_2_0);
    e.sc.end_check = 1;
    st_env_prepare(&e);
    st_script s = {0};
    st_text t = {0};
    cr_assert_eq(st_generate(&c, 3, &s, &t, NULL, NULL), 0);
    st_outcome o;
    st_run_forked(&e, "lifecycle.scn", t.p, 0, &o);
    cr_assert_eq(o.status, ST_FAIL, "%s", o.first);
    cr_assert_str_eq(o.cls[0], cls, "%s", o.first);
    st_text out = {0};
    st_shrink_stats ss;
    cr_assert_eq(st_shrink_script(&c, &e, &s, t.p, cls, o.kind[0], 0, &out, &ss), 0);
    cr_assert_leq(ss.after_statements, 10, "%zu statements (from %zu) in %u runs:\n%s",
                  ss.after_statements, st_count_statements(t.p), ss.runs, out.p);
    st_run_forked(&e, "min.scn", out.p, 0, &o);
    cr_assert(st_outcome_has(&o, cls), "the reproducer fails with %s, not %s:\n%s", o.cls[0],
              cls, out.p);
    st_text_free(&out);
    st_text_free(&t);
    st_script_free(&s);
}

static sc_program *parse(const char *src)
{
    int nerr = 0;
    sc_program *p = sc_parse("oom.scn", src, strlen(src), stderr, 0, &nerr);
    cr_assert_not_null(p);
    return p;
}

/* The OOM loop's options: the scenario defaults, `modes` (bit 0 transient,
 * bit 1 persistent), everything else off. */
static st_oom_opts oom_opts(int modes)
{
    st_oom_opts o;
    memset(&o, 0, sizeof o);
    sc_options_default(&o.sc);
    o.modes = modes;
    return o;
}

Test(oom, a_tiny_scenario_fails_cleanly_at_every_point)
{
    sc_program *p = parse("m = fake_mode()\n"
                          "t = empty(2, 2)\n"
                          "f = m.fake(t)\n"
                          "v = t.view(4)\n"
                          "g = m.fake(v)\n"
                          "del t\n"
                          "expect m.memo_meta == 2\n");
    st_oom_opts o = oom_opts(3);
    o.every = 1;
    st_oom_result r;
    cr_assert_eq(st_oom_program(p, &o, &r), 0);
    cr_assert_eq(r.baseline_status, RP_PASS);
    cr_assert_gt(r.attempts, 10, "a fake conversion allocates (%llu)",
                 (unsigned long long)r.attempts);
    cr_assert_eq(r.points[0], r.attempts, "every allocation is a transient failure point");
    cr_assert_eq(r.points[1], r.attempts, "and a persistent one");
    cr_assert_eq(r.nfindings, 0, "first finding: %s", r.nfindings ? r.f[0].what : "");
    cr_assert_eq(obj_live_count() + obj_zombie_count(), 0);
    sc_program_free(p);
}

/* One point per allocation context; a loop's iterations past the
 * ST_OOM_FOLD-th add no context, so 1000 iterations cost what 10 do. */
Test(oom, one_point_per_allocation_context)
{
    const char *src[2] = {"m = fake_mode()\nrepeat 10\n  t = empty(2)\n  f = m.fake(t)\nend\n",
                          "m = fake_mode()\nrepeat 1000\n  t = empty(2)\n  f = m.fake(t)\nend\n"};
    uint64_t ctx[2];
    for (int i = 0; i < 2; i++) {
        sc_program *p = parse(src[i]);
        st_oom_opts o = oom_opts(3);
        st_oom_result r;
        cr_assert_eq(st_oom_program(p, &o, &r), 0);
        cr_assert_eq(r.points[0], r.contexts, "%llu points, %llu contexts",
                     (unsigned long long)r.points[0], (unsigned long long)r.contexts);
        cr_assert_eq(r.points[1], r.contexts);
        cr_assert_eq(r.contexts + r.skipped, r.attempts, "%llu + %llu != %llu",
                     (unsigned long long)r.contexts, (unsigned long long)r.skipped,
                     (unsigned long long)r.attempts);
        cr_assert_eq(r.nfindings, 0, "first finding: %s", r.nfindings ? r.f[0].what : "");
        ctx[i] = r.contexts;
        sc_program_free(p);
    }
    cr_assert_eq(ctx[0], ctx[1], "10 iterations: %llu contexts, 1000: %llu",
                 (unsigned long long)ctx[0], (unsigned long long)ctx[1]);
}

Test(oom, a_leak_is_a_finding_with_its_failure_point)
{
    char err[128];
    sc_program *p = parse("t = empty(2)\nv = t.view(2)\n");
    cr_assert_eq(fk_inject("view-base-leak", err, sizeof err), 0);
    st_oom_opts o = oom_opts(1);
    o.max_fail = 3;
    st_oom_result r;
    cr_assert_eq(st_oom_forked(p, &o, &r), 0);
    fk_inject("", err, sizeof err);
    cr_assert_eq(r.crashed, 0);
    cr_assert_gt(r.nfindings, 0, "the leaked base is found");
    cr_assert(strstr(r.f[0].what, "retained"), "%s", r.f[0].what);
    cr_assert(r.capped[0], "--max-fail stops the loop");
    sc_program_free(p);
}
