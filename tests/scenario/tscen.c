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

char *tsc_written(rp_scenario *s, rp_format fmt)
{
    rp_run run = {0};
    run.tool = "fakegc";
    run.version = "0";
    run.allocator = "libc";
    run.scenarios = s;
    run.n = 1;
    rp_run_count(&run);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rp_options ro = {0, 0, 0, "prog.py"};
    cr_assert_eq(rp_write(&run, fmt, f, &ro), 0, "rp_write");
    fclose(f);
    return buf;
}
