/* A recording that the recorder refused or stopped before the program
 * ended (`verdict(stopped="prog.py:12", why="...")`) is NOT JUDGED: status
 * error (exit 3), never a pass, whatever the model would have said of what
 * was recorded; the text, JSON, JUnit and TAP reports say so at their head,
 * and the JSON carries it back (run --jobs, diff). */
#include <criterion/criterion.h>
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/obj.h"
#include "report/rp.h"
#include "scenario/sc.h"
#include "scenario/tscen.h"

#define CLEAN "config end_check = \"off\"\nm = fake_mode()\nt = empty(4)\nf = m.fake(t)\n"
#define STOPPED "verdict(stopped=\"prog.py:12\", why=\"threads\")\n"

static void run(const char *src, rp_scenario *out)
{
    tsc_run(src, NULL, out);
}

static void done(rp_scenario *r)
{
    rp_scenario_clear(r);
    cr_assert(eq(u64, obj_live_count(), 0));
}

Test(not_judged, a_clean_recording_that_stopped_is_not_a_pass)
{
    rp_scenario r;
    run(CLEAN "verdict()\n", &r);
    cr_assert(eq(int, r.status, RP_PASS), "the same program, judged");
    cr_assert(ne(ptr, r.verdict, NULL));
    done(&r);
    run(CLEAN STOPPED, &r);
    cr_assert(eq(int, r.status, RP_ERROR));
    cr_assert(eq(str, r.stop_site, "prog.py:12"));
    cr_assert(eq(str, r.stop_why, "threads"));
    cr_assert(eq(str, r.error, "NOT JUDGED: the recorder stopped at prog.py:12 (threads)"));
    cr_assert(eq(ptr, r.verdict, NULL), "not judged, so no verdict");
    done(&r);
}

Test(not_judged, a_failing_recording_that_stopped_is_not_judged_either)
{
    rp_scenario r;
    run(CLEAN "verdict(fail_on=\"reachable\")\n", &r);
    cr_assert(eq(int, r.status, RP_FAIL), "f is still reachable");
    done(&r);
    run(CLEAN "verdict(fail_on=\"reachable\", stopped=\"prog.py:12\", why=\"threads\")\n", &r);
    cr_assert(eq(int, r.status, RP_ERROR));
    cr_assert(eq(ptr, r.verdict, NULL), "nothing is classified");
    done(&r);
}

Test(not_judged, every_format_says_it_at_its_head)
{
    rp_scenario r;
    run(CLEAN STOPPED, &r);
    char *t = tsc_written(&r, RP_TEXT);
    cr_assert(eq(int, strncmp(t, "NOT JUDGED prog.py\n", 19), 0), "%s", t);
    cr_assert(ne(ptr, strstr(t, "\n  NOT JUDGED: the recorder stopped at prog.py:12 (threads)\n"),
                 NULL), "%s", t);
    cr_assert(ne(ptr, strstr(t, "0 passed, 1 failed (1 not judged"), NULL), "%s", t);
    cr_assert(eq(ptr, strstr(t, "PASS"), NULL), "%s", t);
    free(t);
    t = tsc_written(&r, RP_TAP);
    cr_assert(ne(ptr, strstr(t, "not ok 1 - "), NULL), "%s", t);
    cr_assert(ne(ptr, strstr(t, "message: \"NOT JUDGED: the recorder stopped at prog.py:12"),
                 NULL), "%s", t);
    free(t);
    t = tsc_written(&r, RP_JUNIT);
    cr_assert(ne(ptr, strstr(t, "<error message=\"NOT JUDGED: the recorder stopped at "
                                "prog.py:12 (threads)\" type=\"not-judged\">"), NULL), "%s", t);
    free(t);
    t = tsc_written(&r, RP_JSON);
    cr_assert(ne(ptr, strstr(t, "\"not_judged\": {\"site\": \"prog.py:12\", \"why\": "
                                "\"threads\"}"), NULL), "%s", t);
    rp_run back;
    char err[256] = "";
    cr_assert(eq(int, rp_read_json_text(t, strlen(t), "t.json", &back, err, sizeof err), 0),
              "%s", err);
    cr_assert(eq(sz, back.n, 1));
    cr_assert(eq(int, back.scenarios[0].status, RP_ERROR));
    cr_assert(eq(str, back.scenarios[0].stop_site, "prog.py:12"));
    cr_assert(eq(str, back.scenarios[0].stop_why, "threads"));
    rp_run_free_read(&back);
    free(t);
    done(&r);
}
