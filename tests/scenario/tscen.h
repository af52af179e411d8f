/* tscen.h - what the scenario tests share: a scenario run from its text,
 * its diagnostics kept for the message when it does not parse.
 *
 *   rp_scenario r;
 *   int rc = tsc_run("m = fake_mode()\n", NULL, &r);   // asserts it parsed
 *   ... rp_scenario_clear(&r);
 */
#ifndef FAKEGC_TESTS_SCENARIO_TSCEN_H
#define FAKEGC_TESTS_SCENARIO_TSCEN_H

#include "report/rp.h"
#include "scenario/sc.h"

/* sc_run_source of src named "t.scn" with options o (NULL: the defaults)
 * into *out (cleared first); asserts it parsed (rc != -2); the rc. */
int tsc_run(const char *src, const sc_options *o, rp_scenario *out);
/* The report of the one scenario s in format fmt (a run of fakegc 0 on
 * libc, program "prog.py"), in a malloc'd string; asserts it was written. */
char *tsc_written(rp_scenario *s, rp_format fmt);

#endif
