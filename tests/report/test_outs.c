/* A command's outputs set up together with its inputs (rp_outs_setup):
 * an output naming an input, or an input that cannot be read, is refused
 * with nothing left open and the targets untouched. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/rp_out.h"

static char dir[] = "/tmp/fakegc-outs-XXXXXX";
static char in[128], out[128];

static void setup(void)
{
    cr_assert(ne(ptr, mkdtemp(dir), NULL));
    snprintf(in, sizeof in, "%s/base.json", dir);
    snprintf(out, sizeof out, "%s/r.txt", dir);
    FILE *f = fopen(in, "w");
    fputs("{}", f);
    fclose(f);
}

static void teardown(void)
{
    unlink(in);
    unlink(out);
    rmdir(dir);
}

TestSuite(outs, .init = setup, .fini = teardown);

Test(outs, inputs_and_outputs)
{
    rp_outs s;
    char err[600] = "";
    const char *names[] = {"--output"}, *in_names[] = {"--baseline"};
    const char *paths[] = {out}, *ins[] = {in};
    cr_assert(eq(int, rp_outs_setup(&s, names, paths, 1, in_names, ins, 1, err, sizeof err), 0),
              "%s", err);
    cr_assert(ne(ptr, rp_outs_file(&s, "--output"), NULL));
    rp_outs_abort(&s);
    struct stat st;
    cr_assert(eq(int, stat(out, &st), -1));   /* dropped: never created */
    paths[0] = in;
    cr_assert(eq(int, rp_outs_setup(&s, names, paths, 1, in_names, ins, 1, err, sizeof err),
                 -1));
    char want[600];
    snprintf(want, sizeof want, "--output %s is one of the inputs; refusing to overwrite it", in);
    cr_assert(eq(str, err, want));
    cr_assert(eq(ptr, rp_outs_file(&s, "--output"), NULL));
    paths[0] = out;
    ins[0] = "/nonexistent/base.json";
    cr_assert(eq(int, rp_outs_setup(&s, names, paths, 1, in_names, ins, 1, err, sizeof err),
                 -1));
    cr_assert(eq(str, err, "--baseline: cannot read /nonexistent/base.json: No such file or "
                           "directory"));
    cr_assert(eq(ptr, rp_outs_file(&s, "--output"), NULL));
    cr_assert(eq(int, stat(out, &st), -1));
}
