/* A program's named marks (`mark("LABEL")`, written by fakegc.mark): the
 * verdict says after which marks each group was made (the last mark before
 * its first member, and before its last), in its text, its summary line
 * and its JSON, which reads back; a program with no mark says nothing of
 * marks. */
#include <criterion/criterion.h>
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obj.h"
#include "report/rp.h"
#include "report/rp_verdict.h"
#include "scenario/sc.h"
#include "scenario/tscen.h"

/* Fakes kept in a loop at prog.py:9 (accumulating), one kept before the
 * loop at prog.py:4 (still reachable); marks as the caller places them. */
#define HEAD "config end_check = \"off\"\nm = fake_mode()\nkeep = empty(1)\n"
#define ONE "at(\"prog.py\", 4)\nt0 = empty(3)\nkeep.a = m.fake(t0)\nhold(keep.a, \"ONE\")\n"
#define LOOP(n, body) "repeat " #n "\n" body "at(\"prog.py\", 9)\nt = empty(2)\n" \
    "keep.x = m.fake(t)\nhold(keep.x, \"CACHE[0]\")\nend\n"
#define TAIL "del m, t, t0\nverdict()\n"

static void run(const char *src, rp_scenario *out)
{
    tsc_run(src, NULL, out);
    cr_assert(ne(ptr, out->verdict, NULL), "no verdict");
}

static void done(rp_scenario *r)
{
    rp_scenario_clear(r);
    cr_assert(eq(u64, obj_live_count(), 0));
}

/* The verdict's group of class c made at line. */
static const rp_vgroup *group(const rp_verdict *v, hp_class c, fk_category cat, uint32_t line)
{
    for (size_t i = 0; i < v->ngroups; i++)
        if (v->groups[i].cls == c && v->groups[i].cat == cat && v->groups[i].line == line)
            return &v->groups[i];
    cr_assert(eq(int, 0, 1), "no %s group at line %u", hp_class_name(c), line);
    return NULL;
}

Test(marks, a_group_made_after_one_mark_is_since_that_mark)
{
    rp_scenario r;
    run(HEAD "mark(\"warm-up\")\n" ONE "mark(\"step 3\")\n" LOOP(6, "") "mark(\"end\")\n" TAIL,
        &r);
    const rp_vgroup *acc = group(r.verdict, HP_CL_ACCUMULATING, FK_CAT_FAKE, 9);
    cr_assert(eq(str, (char *)acc->mark_from, "step 3"));
    cr_assert(eq(str, (char *)acc->mark_to, "step 3"));
    const rp_vgroup *one = group(r.verdict, HP_CL_REACHABLE, FK_CAT_FAKE, 4);
    cr_assert(eq(str, (char *)one->mark_from, "warm-up"));
    char *text = rp_verdict_text(r.verdict);
    cr_assert(ne(ptr, strstr(text, "accumulating: 6 fake tensors made at prog.py:9 since mark "
                                   "'step 3', still growing"), NULL), "%s", text);
    cr_assert(ne(ptr, strstr(text, "1 fake tensor made at prog.py:4 since mark 'warm-up', "
                                   "held by"), NULL), "%s", text);
    free(text);
    char sum[400];
    rp_verdict_summary(r.verdict, sum, sizeof sum);
    cr_assert(eq(str, sum, "6 accumulating: 6 fake tensors in CACHE, +1 per round at "
                           "prog.py:9 since mark 'step 3'"));
    done(&r);
}

Test(marks, a_group_made_across_marks_is_between_them)
{
    rp_scenario r;
    /* two loops at one site, a mark before each: the group spans both */
    run(HEAD ONE "mark(\"phase 1\")\n" LOOP(3, "") "mark(\"phase 2\")\n" LOOP(3, "") TAIL, &r);
    const rp_vgroup *acc = group(r.verdict, HP_CL_ACCUMULATING, FK_CAT_FAKE, 9);
    char buf[200];
    rp_vgroup_marks(acc, buf, sizeof buf);
    cr_assert(eq(str, buf, "between marks 'phase 1' and 'phase 2'"));
    done(&r);
    run(HEAD ONE LOOP(3, "") "mark(\"later\")\n" LOOP(3, "") TAIL, &r);
    acc = group(r.verdict, HP_CL_ACCUMULATING, FK_CAT_FAKE, 9);
    rp_vgroup_marks(acc, buf, sizeof buf);
    cr_assert(eq(str, buf, "before mark 'later' and after it"));
    done(&r);
}

Test(marks, no_mark_says_nothing_and_the_json_reads_back)
{
    rp_scenario r;
    run(HEAD ONE LOOP(6, "") TAIL, &r);
    char *text = rp_verdict_text(r.verdict);
    cr_assert(eq(ptr, strstr(text, "mark"), NULL), "%s", text);
    free(text);
    done(&r);
    run(HEAD ONE LOOP(6, "mark(\"it\")\n") TAIL, &r);
    char *buf = tsc_written(&r, RP_JSON);
    size_t len = strlen(buf);
    cr_assert(ne(ptr, strstr(buf, "\"mark_from\": \"it\", \"mark_to\": \"it\""), NULL), "%s", buf);
    rp_run back;
    char err[256] = "";
    cr_assert(eq(int, rp_read_json_text(buf, len, "t.json", &back, err, sizeof err), 0), "%s",
              err);
    const rp_vgroup *acc = group(back.scenarios[0].verdict, HP_CL_ACCUMULATING, FK_CAT_FAKE, 9);
    cr_assert(eq(str, (char *)acc->mark_to, "it"));
    rp_run_free_read(&back);
    free(buf);
    done(&r);
}
