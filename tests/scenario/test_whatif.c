/* What-if replay (sc_whatif.c): a recording run under another memo design
 * skips its expectations (counted), its verdict alone decides, and the
 * report carries that design's final counters; under the recorded design
 * (pytorch-1.13), or for a scenario that is no recording, nothing is
 * skipped. After every run the process is back to zero objects. */
#include <criterion/criterion.h>
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obj.h"
#include "fake/fk.h"
#include "scenario/sc.h"
#include "scenario/tscen.h"

#define HEADER "# recorded by scripts/record.py from prog.py (torch 1.13.0a0)\n"
/* a memo hit: 1.13.1 keeps the fake (its _fix_weakref leak), 2.x does not;
 * the recorded counters are 1.13.1's (one fake memo entry apart from the
 * MetaConverter's), so 2.0 (one memo) reads another memo_fake */
#define BODY                                                                        \
    "config sweep = \"periodic\"\n"                                                 \
    "config end_check = \"off\"\n"                                                  \
    "m = fake_mode()\n"                                                             \
    "t = empty(4)\n"                                                                \
    "f = m.fake(t)\n"                                                               \
    "f2 = m.fake(t)\n"                                                              \
    "expect m.memo_fake == 1\n"                                                     \
    "expect m.hits == 1\n"                                                          \
    "del f, f2, t, m\n"                                                             \
    "verdict()\n"                                                                   \
    "expect live(\"fake\") == 1\n"

static int run_as(const char *src, const char *design, rp_scenario *out)
{
    sc_options o;
    sc_options_default(&o);
    fk_design_id d;
    cr_assert(eq(int, fk_design_from_name(design, &d), 0));
    o.design = (int)d;
    return tsc_run(src, &o, out);
}

static void done(rp_scenario *r)
{
    rp_scenario_clear(r);
    cr_assert(eq(u64, obj_live_count(), 0));
}

Test(whatif, recorded_design_checks_everything)
{
    rp_scenario r;
    run_as(HEADER BODY, "pytorch-1.13", &r);
    cr_assert(eq(u64, r.skipped_fidelity, 0));
    cr_assert(eq(ptr, r.whatif, NULL));
    cr_assert(eq(u32, r.passed, 3));
    cr_assert(ne(ptr, r.verdict, NULL));
    cr_assert(eq(u64, r.verdict->count[HP_CL_LOST], 2),
              "1.13.1's leak is lost (a fake and its mode, the mode's converters its part)");
    cr_assert(eq(int, r.status, RP_FAIL));
    cr_assert(eq(int, r.memo_known, 1));
    cr_assert(eq(u64, r.memo_peak, 3), "fake, meta and storage entries");
    done(&r);
}

Test(whatif, another_design_skips_and_the_verdict_decides)
{
    rp_scenario r;
    run_as(HEADER BODY, "pytorch-2.0", &r);
    cr_assert(eq(u64, r.skipped_fidelity, 3));
    cr_assert(eq(u32, r.passed + r.failed, 0));
    cr_assert(eq(sz, r.nfailures, 0));
    cr_assert(ne(ptr, r.verdict, NULL));
    cr_assert(eq(u64, r.verdict->count[HP_CL_LOST], 0));
    cr_assert(eq(int, r.status, RP_PASS));
    cr_assert(ne(ptr, r.whatif, NULL));
    cr_assert(ne(ptr, strstr(r.whatif, "what-if under pytorch-2.0: "), NULL), "%s", r.whatif);
    cr_assert(ne(ptr, strstr(r.whatif, "skipped: 3 expectations (1.13.1 fidelity"), NULL),
              "%s", r.whatif);
    cr_assert(eq(u64, r.memo_peak, 2), "one memo: meta and storage entries");
    cr_assert(eq(u64, r.memo_final, 0));
    done(&r);
}

Test(whatif, no_recording_is_checked_under_any_design)
{
    rp_scenario r;
    run_as(BODY, "pytorch-2.0", &r);
    cr_assert(eq(u64, r.skipped_fidelity, 0));
    cr_assert(eq(ptr, r.whatif, NULL));
    cr_assert(eq(u32, r.passed + r.failed, 3));
    cr_assert(eq(int, r.memo_known, 0));
    done(&r);
}

Test(whatif, final_counters_per_live_mode)
{
    rp_scenario r;
    run_as(HEADER "m = fake_mode()\nt = empty(4)\nf = m.fake(t)\nverdict()\n", "pytorch-2.0",
           &r);
    cr_assert(ne(ptr, strstr(r.whatif, "final counters of m (mode#"), NULL), "%s", r.whatif);
    cr_assert(ne(ptr, strstr(r.whatif, "memo_meta 1, memo_storage 1"), NULL), "%s", r.whatif);
    done(&r);
}

Test(whatif, designs_list_is_checked)
{
    cr_assert(eq(int, sc_designs_table(NULL, NULL, "all", NULL, NULL, stderr), 0));
    cr_assert(eq(int, sc_designs_table(NULL, NULL, "pytorch-2.0,pytorch-1.13", NULL, NULL,
                                       stderr), 0));
    FILE *null = fopen("/dev/null", "w");
    cr_assert(eq(int, sc_designs_table(NULL, NULL, "pytorch-2.0,nope", NULL, NULL, null), 2));
    cr_assert(eq(int, sc_designs_table(NULL, NULL, "", NULL, NULL, null), 2));
    fclose(null);
}

/* A recording says so in its config recording line; one made before the
 * recorder wrote it is still known by its first comment line. */
#define CONFIG_HEADER "config recording = \"prog.py\"   # recorded by scripts/record.py\n"

Test(whatif, config_recording_is_a_recording)
{
    rp_scenario r;
    run_as(CONFIG_HEADER BODY, "pytorch-2.0", &r);
    cr_assert(eq(u64, r.skipped_fidelity, 3));
    cr_assert(ne(ptr, r.whatif, NULL));
    done(&r);
    run_as(CONFIG_HEADER BODY, "pytorch-1.13", &r);
    cr_assert(eq(u64, r.skipped_fidelity, 0), "its own design: 1.13's, named by no compat");
    cr_assert(eq(u32, r.passed, 3));
    done(&r);
}

static int design_of(const char *src)
{
    sc_program *p = sc_parse("t.scn", src, strlen(src), NULL, 0, NULL);
    cr_assert(ne(ptr, p, NULL), "did not parse: %s", src);
    int d = sc_recorded_design(p);
    sc_program_free(p);
    return d;
}

Test(whatif, recorded_design_from_the_config_then_the_old_comment)
{
    cr_assert(eq(int, design_of(CONFIG_HEADER "m = fake_mode()\n"), FK_D_1_13));
    cr_assert(eq(int, design_of(CONFIG_HEADER "config compat = \"pytorch-2.14\"\n"),
                 FK_D_2_14));
    cr_assert(eq(int, design_of(HEADER "m = fake_mode()\n"), FK_D_1_13));
    cr_assert(eq(int,
                 design_of("# recorded by scripts/record.py from p.py (torch 2.1.0)\n"
                           "m = fake_mode()\n"),
                 FK_D_2_3));
    /* a comment that says "recorded by" further down, or a config compat
     * alone, is no recording */
    cr_assert(eq(int, design_of("config compat = \"pytorch-2.3\"\n" HEADER), -1));
    cr_assert(eq(int, design_of("m = fake_mode()\n"), -1));
}

/* The verdict's categories come from the objects (fk_category_of): a fake
 * tensor, a meta tensor of the program's own, the mode and its two
 * converters; the fake's own meta tensor is the fake's, not counted. */
static uint64_t in_category(const rp_verdict *v, fk_category cat)
{
    uint64_t n = 0;
    for (size_t i = 0; i < v->ngroups; i++)
        n += v->groups[i].cat == cat ? v->groups[i].count : 0;
    return n;
}

Test(whatif, verdict_categories_by_the_objects)
{
    rp_scenario r;
    run_as("config end_check = \"off\"\n"
           "m = fake_mode()\n"
           "t = empty(4)\n"
           "f = m.fake(t)\n"
           "e = empty(2, device=\"meta\")\n"
           "verdict(fail_on=\"lost\")\n",
           "pytorch-2.3", &r);
    cr_assert(ne(ptr, r.verdict, NULL));
    cr_assert(eq(u64, in_category(r.verdict, FK_CAT_FAKE), 1));
    cr_assert(eq(u64, in_category(r.verdict, FK_CAT_META), 1), "e only, not f's own meta");
    cr_assert(eq(u64, in_category(r.verdict, FK_CAT_MODE), 1));
    cr_assert(eq(u64, r.verdict->count[HP_CL_REACHABLE],
                 in_category(r.verdict, FK_CAT_FAKE) + in_category(r.verdict, FK_CAT_META) +
                     in_category(r.verdict, FK_CAT_MODE) +
                     in_category(r.verdict, FK_CAT_CONVERTER)));
    done(&r);
}

/* The lingering group of a storage converted by m under periodic sweeps
 * (r holds it; done(r) after). */
static const rp_vgroup *lingering_group(rp_scenario *r)
{
    run_as("config sweep = \"periodic\"\n"
           "config end_check = \"off\"\n"
           "m = fake_mode()\n"
           "t = empty(4)\n"
           "f = m.fake(t)\n"
           "del f, t\n"
           "verdict()\n",
           "pytorch-1.13", r);
    cr_assert(ne(ptr, r->verdict, NULL));
    const rp_vgroup *ling = NULL;
    for (size_t i = 0; i < r->verdict->ngroups; i++)
        if (r->verdict->groups[i].cls == HP_CL_LINGERING)
            ling = &r->verdict->groups[i];
    cr_assert(ling != NULL, "no lingering group");
    return ling;
}

/* A lingering group names the converter whose sweep reclaims it by its id
 * (the storage's weak holder), and how many conversions until then. Its
 * path is its mode's: the hops out of the mode's converters fold into the
 * edge before them, the other hops stay. */
Test(whatif, lingering_names_its_converter)
{
    rp_scenario r;
    const rp_vgroup *ling = lingering_group(&r);
    /* the mode makes its FakeTensorConverter, then that one's MetaConverter,
     * whose pending list keeps the storage */
    const char *at = strstr(ling->path, "FakeTensorMode#");
    cr_assert(at != NULL, "%s", ling->path);
    unsigned long long mode = strtoull(at + strlen("FakeTensorMode#"), NULL, 10);
    cr_assert(eq(u64, ling->converter, mode + 2), "path %s", ling->path);
    cr_assert(gt(i64, ling->to_sweep, 0));
    char want[160];
    snprintf(want, sizeof want, "m -> FakeTensorMode#%llu.converter.meta_converter.pending[0] -> "
             "storage#", mode);
    cr_assert(eq(int, strncmp(ling->path, want, strlen(want)), 0), "path '%s', want '%s...'",
              ling->path, want);
    done(&r);
}
