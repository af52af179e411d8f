/* Tests of src/record: the recorder is started with the command line
 * record.py expects, and each way it can end (the program's own status,
 * its own 3, the recorder's failure, no torch, no Python, a signal) comes
 * back as its REC_* outcome. A shell script stands in for the Python. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/rec.h"

static char dir[] = "/tmp/fakegc-rec-test-XXXXXX";

static void setup(void)
{
    cr_assert(ne(ptr, mkdtemp(dir), NULL));
    setenv("TMPDIR", dir, 1);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect(eq(int, system(cmd), 0));
}

TestSuite(record, .init = setup, .fini = teardown);

/* A stand-in recorder: run by /bin/sh as "sh record.sh -o OUT ...", it
 * writes its arguments to OUT, `body` to the status file, then runs tail. */
static void recorder(char *path, size_t n, const char *status, const char *tail)
{
    snprintf(path, n, "%s/record.sh", dir);
    FILE *f = fopen(path, "w");
    cr_assert(ne(ptr, f, NULL));
    fprintf(f, "out=$2\necho \"$@\" > \"$out\"\n");
    if (status)
        fprintf(f, "echo '%s' > \"$FAKEGC_RECORD_STATUS\"\n", status);
    fprintf(f, "%s\n", tail);
    fclose(f);
}

static int run(const char *status, const char *tail, char *out, size_t n)
{
    char sh[256];
    recorder(sh, sizeof sh, status, tail);
    snprintf(out, n, "%s/rec.scn", dir);
    const char *opts[] = {"--fail-on", "lost", "--no-batch"};
    char *prog[] = {(char *)"prog.py", (char *)"--its-flag"};
    rec_job j = {"/bin/sh", sh, out, opts, 3, prog, 2};
    return rec_run(&j, "test");
}

Test(record, command_line_and_the_programs_status)
{
    char out[256], line[512] = "";
    cr_assert(eq(int, run("program 1 recorder ok", "exit 1", out, sizeof out), 1));
    FILE *f = fopen(out, "r");
    cr_assert(ne(ptr, f, NULL));
    cr_assert(ne(ptr, fgets(line, sizeof line, f), NULL));
    fclose(f);
    char want[512];
    snprintf(want, sizeof want, "-o %s --fail-on lost --no-batch -- prog.py --its-flag\n", out);
    cr_assert(eq(str, line, want));
}

Test(record, each_ending)
{
    char out[256];
    cr_assert(eq(int, run("program 0 recorder ok", "exit 0", out, sizeof out), 0));
    cr_assert(eq(int, run("program 3 recorder ok", "exit 3", out, sizeof out), REC_PROGRAM_3));
    cr_assert(eq(int, run("program 0 recorder internal", "exit 3", out, sizeof out),
                 REC_FAILED));
    cr_assert(eq(int, run(NULL, "exit 77", out, sizeof out), REC_NO_TORCH));
    cr_assert(eq(int, run(NULL, "exit 2", out, sizeof out), REC_USAGE));
    cr_assert(eq(int, run(NULL, "kill -9 $$", out, sizeof out), REC_SIGNAL + 9));
    /* the status files are gone */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep fakegc-record-)\"", dir);
    cr_assert(eq(int, system(cmd), 0));
}

Test(record, no_python)
{
    char out[256];
    snprintf(out, sizeof out, "%s/x.scn", dir);
    char *prog[] = {(char *)"prog.py"};
    rec_job j = {"/nonexistent/python3", "record.py", out, NULL, 0, prog, 1};
    int rs = rec_run(&j, "test");
    cr_assert(eq(int, rs, REC_NO_PYTHON));
    int have = 1, internal = 0;
    rec_tell(rs, &j, "test", &have, &internal);
    cr_assert(eq(int, internal, 1));
    rec_tell(REC_NO_TORCH, &j, "test", &have, &internal);
    cr_assert(eq(int, have, 0));
    have = 1;
    rec_tell(REC_SIGNAL + 9, &j, "test", &have, &internal);
    cr_assert(eq(int, internal, 0));
    cr_assert(eq(int, have, 1));
}

Test(record, temp_files)
{
    char a[256], b[256];
    cr_assert(eq(int, rec_temp(a, sizeof a, ".scn", "test"), 0));
    cr_assert(eq(int, rec_temp(b, sizeof b, ".scn", "test"), 0));
    cr_assert(ne(str, a, b));
    cr_assert(eq(int, strncmp(a, dir, strlen(dir)), 0));
    cr_assert(eq(str, a + strlen(a) - 4, ".scn"));
    struct stat st;
    cr_assert(eq(int, stat(a, &st), 0));
    cr_assert(eq(i64, (int64_t)st.st_size, 0));
    setenv("TMPDIR", "/nonexistent-dir", 1);
    cr_assert(eq(int, rec_temp(a, sizeof a, "", "test"), -1));
    setenv("TMPDIR", dir, 1);
    cr_assert(eq(str, a, ""));
}
