/* Generation and running: seeds are reproducible, clean lifecycles pass on
 * the core under every ordering knob, weights parse, classes normalize. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "stress/st.h"

static void gen(const st_config *c, uint64_t seed, st_text *t, st_script *s)
{
    memset(t, 0, sizeof *t);
    memset(s, 0, sizeof *s);
    cr_assert_eq(st_generate(c, seed, s, t, NULL, NULL), 0, "generate seed %llu",
                 (unsigned long long)seed);
}

Test(gen, a_seed_is_reproducible_and_seeds_differ)
{
    st_config c;
    st_config_default(&c);
    c.steps = 300;
    st_text a, b, d;
    st_script sa, sb, sd;
    gen(&c, 42, &a, &sa);
    gen(&c, 42, &b, &sb);
    gen(&c, 43, &d, &sd);
    cr_assert_str_eq(a.p, b.p, "the same seed gives the same lifecycle");
    cr_assert_eq(sa.n, sb.n);
    cr_assert_eq(memcmp(sa.a, sb.a, sa.n * sizeof *sa.a), 0);
    cr_assert_str_neq(a.p, d.p, "another seed gives another lifecycle");
    cr_assert_eq(sa.n, 300, "every step is one action (%zu)", sa.n);
    /* a generated lifecycle checks things: expectations and raises */
    cr_assert(strstr(a.p, "expect "), "no expectation in:\n%s", a.p);
    st_text_free(&a), st_text_free(&b), st_text_free(&d);
    st_script_free(&sa), st_script_free(&sb), st_script_free(&sd);
}

Test(gen, rendering_the_actions_again_gives_a_valid_scenario)
{
    st_config c;
    st_config_default(&c);
    c.steps = 200;
    st_text t, r = {0};
    st_script s;
    gen(&c, 7, &t, &s);
    c.expect_all = 1;
    size_t applied = 0;
    cr_assert_eq(st_render(&c, s.a, s.n, &r, NULL, NULL, &applied), 0);
    cr_assert_eq(applied, s.n, "all %zu actions apply again (%zu)", s.n, applied);
    st_env e;
    st_env_default(&e);
    st_env_prepare(&e);
    st_outcome o;
    st_run_text(&e, "render.scn", r.p, &o);
    cr_assert_eq(o.status, ST_PASS, "%s", o.first);
    /* every other action dropped: still valid (actions re-checked in context) */
    size_t k = 0;
    for (size_t i = 0; i < s.n; i += 2)
        s.a[k++] = s.a[i];
    r.len = 0;
    cr_assert_eq(st_render(&c, s.a, k, &r, NULL, NULL, &applied), 0);
    st_run_text(&e, "half.scn", r.p, &o);
    cr_assert_eq(o.status, ST_PASS, "half the actions: %s", o.first);
    st_text_free(&t), st_text_free(&r);
    st_script_free(&s);
}

static void clean_seeds(st_config *c, st_env *e, uint64_t from, uint64_t to)
{
    for (uint64_t seed = from; seed < to; seed++) {
        st_text t;
        st_script s;
        gen(c, seed, &t, &s);
        st_outcome o;
        st_run_text(e, "clean.scn", t.p, &o);
        cr_assert_eq(o.status, ST_PASS, "seed %llu: %s (%s)", (unsigned long long)seed,
                     o.first, o.ncls ? o.cls[0] : "");
        st_text_free(&t);
        st_script_free(&s);
    }
    cr_assert_eq(obj_live_count() + obj_zombie_count(), 0);
}

Test(gen, clean_lifecycles_pass_eager_and_periodic)
{
    st_config c;
    st_config_default(&c);
    c.steps = 400;
    st_env e;
    st_env_default(&e);
    e.sc.verify_every = 50;
    st_env_prepare(&e);
    clean_seeds(&c, &e, 1, 4);
    c.policy = FK_SWEEP_PERIODIC;
    e.sc.default_sweep = FK_SWEEP_PERIODIC;
    clean_seeds(&c, &e, 4, 7);
}

Test(gen, clean_lifecycles_pass_with_deferred_reversed_callbacks_and_gc_stress)
{
    obj_config saved = obj_get_config(), oc = saved;
    oc.callbacks_reverse = 1;
    oc.defer_callbacks = 1;
    obj_configure(&oc);
    st_config c;
    st_config_default(&c);
    c.steps = 300;
    c.defer_callbacks = 1;
    c.gc_stress = 1;
    c.policy = FK_SWEEP_PERIODIC;
    st_env e;
    st_env_default(&e);
    e.sc.gc = SC_GC_STRESS;
    e.sc.default_sweep = FK_SWEEP_PERIODIC;
    e.sc.verify_every = 25;
    st_env_prepare(&e);
    clean_seeds(&c, &e, 11, 14);
    obj_configure(&saved);
}

Test(gen, an_injected_bug_is_caught)
{
    char err[128];
    st_config c;
    st_config_default(&c);
    c.steps = 1000;
    st_env e;
    st_env_default(&e);
    st_env_prepare(&e);
    cr_assert_eq(fk_inject("strong-memo", err, sizeof err), 0);
    int found = 0;
    for (uint64_t seed = 1; seed < 6 && !found; seed++) {
        st_text t;
        st_script s;
        gen(&c, seed, &t, &s);
        st_outcome o;
        st_run_text(&e, "bug.scn", t.p, &o);
        found = o.status == ST_FAIL;
        st_text_free(&t);
        st_script_free(&s);
    }
    fk_inject("", err, sizeof err);
    cr_assert(found, "strong-memo went unnoticed for 5 lifecycles");
}

Test(gen, weights_parse)
{
    st_weights w;
    st_weights_default(&w);
    char err[512];
    cr_assert_eq(st_weights_parse(&w, "fake=40,del=0,expect=100", err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(w.w[ST_W_FAKE], 40);
    cr_assert_eq(w.w[ST_W_DEL], 0);
    cr_assert_eq(w.w[ST_W_EXPECT], 100);
    cr_assert_eq(st_weights_parse(&w, "fakes=1", err, sizeof err), -1);
    cr_assert(strstr(err, "refake"), "the message lists the names: %s", err);
    cr_assert_eq(st_weights_parse(&w, "expect=101", err, sizeof err), -1,
                 "expect is a percentage");
    cr_assert_eq(st_weights_parse(&w, "view=x", err, sizeof err), -1);
}

Test(gen, classes_and_statement_counts)
{
    char out[64];
    st_normalize("expect m12.memo_meta == 3", out, sizeof out);
    cr_assert_str_eq(out, "expect mN.memo_meta == N");
    st_normalize("  strong count of storage#41   is 3 ", out, sizeof out);
    cr_assert_str_eq(out, "strong count of storage#N is N");
    cr_assert_eq(st_count_statements("# c\nt = empty(2)\n\nwith m\n  f = empty(1)\nend\n"), 3);
}
