/* tscen.c - a scenario run from its text (tscen.h). */
#include "scenario/tscen.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

int tsc_run(const char *src, const sc_options *o, rp_scenario *out)
{
    char diag[4096] = "";
    FILE *f = fmemopen(diag, sizeof diag - 1, "w");
    memset(out, 0, sizeof *out);
    int rc = sc_run_source("t.scn", src, o, out, f);
    fclose(f);
    cr_assert_neq(rc, -2, "did not parse:\n%s", diag);
    return rc;
}
