/* A stress campaign's options from plain values (st_setup.h): what is
 * refused before any work, the budget and shard defaults, and the model's
 * settings that follow from the design, the sweep and --gc. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake/fk.h"
#include "stress/st_setup.h"

static st_stress_opts opts(void)
{
    st_stress_opts o;
    memset(&o, 0, sizeof o);
    st_config_default(&o.cfg);
    return o;
}

#define PLAIN {NULL, NULL, -1, -1, -1, 0, 0, 0, 0, 1, 0, 1}

Test(setup, defaults)
{
    st_stress_opts o = opts();
    st_campaign c = PLAIN;
    char err[600] = "";
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), 0), "%s", err);
    cr_assert(eq(u64, o.max_steps, 100000));
    cr_assert(eq(u32, o.shard_n, 1));
    cr_assert(eq(int, o.shrink, 1));
    c.seconds = 2;
    c.shard_k = 1;
    c.shard_n = 3;
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), 0), "%s", err);
    cr_assert(eq(u64, o.max_steps, 0));
    cr_assert(eq(dbl, o.max_seconds, 2));
    cr_assert(eq(u32, o.shard_k, 1));
    cr_assert(eq(u32, o.shard_n, 3));
}

Test(setup, refusals)
{
    st_stress_opts o = opts();
    st_campaign c = PLAIN;
    char err[600] = "";
    c.gc = SC_GC_AUTO;
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), -1));
    cr_assert(eq(str, err, "--gc auto: the model cannot predict threshold collections; use "
                           "manual or stress"));
    c.gc = -1;
    c.inject = "fake-holds-mode";   /* pytorch-2.0 and 2.3 only */
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), -1));
    cr_assert(eq(int, strncmp(err, "--inject: ", 10), 0), "%s", err);
    c.design = FK_D_2_0;
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), 0), "%s", err);
    c.weights = "nosuchaction=3";
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), -1));
    c.weights = NULL;
    o.out_dir = "/proc/no/such/folder";
    cr_assert(eq(int, st_campaign_check(&o, &c, err, sizeof err), -1));
    cr_assert(eq(int, strncmp(err, "--out-dir /proc/no/such/folder: ", 32), 0), "%s", err);
}

Test(setup, the_models_settings)
{
    st_stress_opts o = opts();
    st_campaign c = PLAIN;
    st_campaign_env(&o, &c);
    cr_assert(eq(int, o.cfg.design, FK_D_DEFAULT));
    cr_assert(eq(int, o.cfg.policy, (int)fk_design_get(FK_D_DEFAULT)->policy));
    cr_assert(eq(int, o.cfg.gc_stress, 0));
    cr_assert(eq(str, (char *)o.env.inject, ""));
    cr_assert(eq(int, o.env.sc.end_check, 1));
    cr_assert(eq(int, o.check_clean, 0));
    c.design = FK_D_1_13;
    c.gc = SC_GC_STRESS;
    c.defer = 1;
    c.inject = "strong-memo";
    st_campaign_env(&o, &c);
    cr_assert(eq(int, o.cfg.design, FK_D_1_13));
    cr_assert(eq(int, o.cfg.policy, (int)fk_design_get(FK_D_1_13)->policy));
    cr_assert(eq(int, o.cfg.gc_stress, 1));
    cr_assert(eq(int, o.cfg.defer_callbacks, 1));
    cr_assert(eq(int, o.env.sc.design, FK_D_1_13));
    cr_assert(eq(int, o.check_clean, 1));
    c.sweep = FK_SWEEP_EAGER;
    st_campaign_env(&o, &c);
    cr_assert(eq(int, o.cfg.policy, FK_SWEEP_EAGER));
}

/* An oom campaign over two files, one that does not parse. */
Test(setup, oom_over_files)
{
    char good[] = "/tmp/fakegc-oom-XXXXXX.scn", bad[] = "/tmp/fakegc-oom-XXXXXX.scn";
    FILE *f = fdopen(mkstemps(good, 4), "w");
    fputs("t = ones(2)\ndel t\n", f);
    fclose(f);
    f = fdopen(mkstemps(bad, 4), "w");
    fputs("t = = 1\n", f);
    fclose(f);
    char *files[] = {good, bad};
    sc_program *progs[2];
    size_t n = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    st_doc_head h = {"0.1.0", "test", "libc", NULL, NULL, "host", 1, 2, 2};
    st_oom_doc d = {.f = out, .modes = 3};
    st_oom_doc_begin(&d, &h);
    cr_assert(eq(sz, st_oom_parse_all(&d, files, 2, 0, progs, &n), 1));
    cr_assert(eq(sz, n, 1));
    st_oom_opts o;
    memset(&o, 0, sizeof o);
    sc_options_default(&o.sc);
    o.modes = 3;
    st_oom_shard shard = {1, 2, "fakegc oom", "test"};
    d.unparsed = 0;
    st_oom_all(&d, &o, progs, n, &shard);
    fclose(out);
    cr_assert(eq(sz, d.scenarios, 1));
    cr_assert(eq(u64, d.findings, 0));
    cr_assert(eq(u64, d.crashes, 0));
    cr_assert(gt(u64, d.points, 0));
    cr_assert(ne(ptr, strstr(text, good), NULL), "%s", text);
    free(text);
    sc_program_free(progs[0]);
    unlink(good);
    unlink(bad);
}

/* --dump prints the lifecycle st_generate makes for the seed, whole. */
Test(setup, dump_is_the_generated_lifecycle)
{
    st_config cfg;
    st_config_default(&cfg);
    cfg.steps = 50;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(eq(int, st_dump(&cfg, 5, f), 0));
    fclose(f);
    st_script s = {0};
    st_text t = {0};
    cr_assert(ge(int, st_generate(&cfg, 5, &s, &t, NULL, NULL), 0));
    cr_assert(eq(str, text, t.p));
    cr_assert(eq(int, strncmp(text, "# fakegc stress lifecycle, seed 5", 33), 0), "%s", text);
    st_script_free(&s);
    st_text_free(&t);
    free(text);
}
