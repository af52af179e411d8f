/* Tests of src/record: the recorder is started with the command line
 * record.py expects, and each way it can end (the program's own status,
 * whatever it is, the recorder's failure, no torch, no Python, a signal, a
 * timeout) comes back as three facts apart. A shell script stands in for
 * the Python. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>
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
 * writes its arguments to OUT, `status` to the status descriptor, then
 * runs tail. */
static void recorder(char *path, size_t n, const char *status, const char *tail)
{
    snprintf(path, n, "%s/record.sh", dir);
    FILE *f = fopen(path, "w");
    cr_assert(ne(ptr, f, NULL));
    fprintf(f, "out=$2\necho \"$@\" > \"$out\"\n");
    if (status)
        fprintf(f, "printf '%s' > /dev/fd/$FAKEGC_RECORD_STATUS_FD\n", status);
    fprintf(f, "%s\n", tail);
    fclose(f);
}

static int run(const char *status, const char *tail, char *out, size_t n, rec_result *r)
{
    char sh[256];
    recorder(sh, sizeof sh, status, tail);
    snprintf(out, n, "%s/rec.scn", dir);
    const char *opts[] = {"--fail-on", "lost", "--no-batch"};
    char *prog[] = {(char *)"prog.py", (char *)"--its-flag"};
    rec_job j = {"/bin/sh", sh, out, opts, 3, prog, 2, 0};
    return rec_run(&j, "test", r);
}

Test(record, command_line_and_the_programs_status)
{
    char out[256], line[512] = "";
    rec_result r;
    cr_assert(eq(int, run("program exit 1\nrecorder ok\n", "exit 1", out, sizeof out, &r), 0));
    cr_assert(eq(int, r.state, REC_OK));
    cr_assert(eq(int, r.ran, 1));
    cr_assert(eq(int, r.program.how, WK_EXIT));
    cr_assert(eq(int, r.program.code, 1));
    FILE *f = fopen(out, "r");
    cr_assert(ne(ptr, f, NULL));
    cr_assert(ne(ptr, fgets(line, sizeof line, f), NULL));
    fclose(f);
    char want[512];
    snprintf(want, sizeof want, "-o %s --fail-on lost --no-batch -- prog.py --its-flag\n", out);
    cr_assert(eq(str, line, want));
}

/* The program's status, the recorder's state and the process's end never
 * share a number: a program's own 2, 3, 77 and 127 are its statuses, with
 * the recorder ok, whatever the recorder process then exits with. */
Test(record, each_ending)
{
    char out[256];
    rec_result r;
    static const int own[] = {0, 2, 3, 77, 127};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        char st[64], tail[32];
        snprintf(st, sizeof st, "program exit %d\nrecorder ok\n", own[i]);
        snprintf(tail, sizeof tail, "exit %d", own[i]);
        cr_assert(eq(int, run(st, tail, out, sizeof out, &r), 0));
        cr_assert(eq(int, r.state, REC_OK), "program exit %d", own[i]);
        cr_assert(eq(int, r.ran, 1));
        cr_assert(eq(int, r.program.how, own[i] ? WK_EXIT : WK_OK));
        cr_assert(eq(int, r.program.code, own[i]));
        cr_assert(eq(int, r.child.how, own[i] ? WK_EXIT : WK_OK));
    }
    run("program signal 15\nrecorder ok\n", "kill -15 $$", out, sizeof out, &r);
    cr_assert(eq(int, r.program.how, WK_SIGNAL));
    cr_assert(eq(int, r.program.code, 15));
    cr_assert(eq(int, r.child.how, WK_SIGNAL));
    run("program exit 0\nrecorder internal\n", "exit 3", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_INTERNAL));
    run("program exit 0\nrecorder refused\n", "exit 3", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_REFUSED));
    run("program none\nrecorder no-torch\n", "exit 77", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_NO_TORCH));
    cr_assert(eq(int, r.ran, 0));
    run("program none\nrecorder usage\n", "exit 2", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_USAGE));
    /* no word: whatever the exit status, the recorder said nothing */
    run(NULL, "exit 77", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_SILENT));
    cr_assert(eq(int, r.child.how, WK_EXIT));
    cr_assert(eq(int, r.child.code, 77));
    run("program exit 4000\nrecorder ok\n", "exit 0", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_SILENT));
    run("program exit 1\nrecorder maybe\n", "exit 0", out, sizeof out, &r);
    cr_assert(eq(int, r.state, REC_SILENT));
    run(NULL, "kill -9 $$", out, sizeof out, &r);
    cr_assert(eq(int, r.child.how, WK_SIGNAL));
    cr_assert(eq(int, r.child.code, 9));
    /* no status file is left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep fakegc-)\"", dir);
    cr_assert(eq(int, system(cmd), 0));
}

Test(record, no_python)
{
    char out[256];
    snprintf(out, sizeof out, "%s/x.scn", dir);
    char *prog[] = {(char *)"prog.py"};
    rec_job j = {"/nonexistent/python3", "record.py", out, NULL, 0, prog, 1, 0};
    rec_result r;
    cr_assert(eq(int, rec_run(&j, "test", &r), 0));
    cr_assert(eq(int, r.child.how, WK_LOST));
    cr_assert(eq(int, r.state, REC_SILENT));
    cr_assert(ne(ptr, strstr(r.child.what, "/nonexistent/python3"), NULL), "%s", r.child.what);
    int have = 1;
    cr_assert(eq(int, rec_tell(&r, &j, "test", &have), 1));
    r.state = REC_NO_TORCH;
    cr_assert(eq(int, rec_tell(&r, &j, "test", &have), 1));
    cr_assert(eq(int, have, 0));
    have = 1;
    memset(&r, 0, sizeof r);
    r.state = REC_OK;
    r.ran = 1;
    r.program.how = WK_EXIT;
    r.program.code = 77;
    cr_assert(eq(int, rec_tell(&r, &j, "test", &have), 0));
    cr_assert(eq(int, have, 1));
}

/* pid runs (exists and is not a zombie waiting for a reaper) */
static int running(int pid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');
    return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* --timeout: the group gets SIGTERM, the stand-in says so and dies of it;
 * what it started in its group is gone too. */
Test(record, timeout_ends_the_group)
{
    char sh[256], out[256], pidf[300];
    snprintf(pidf, sizeof pidf, "%s/sleeper.pid", dir);
    char tail[512];
    snprintf(tail, sizeof tail,
             "sleep 300 & echo $! > %s\n"
             "trap 'printf \"program signal 15\\nrecorder ok\\n\" > /dev/fd/$FAKEGC_RECORD_STATUS_FD;"
             " kill $!; trap - TERM; kill -TERM $$' TERM\n"
             "while :; do wait; done", pidf);
    recorder(sh, sizeof sh, NULL, tail);
    snprintf(out, sizeof out, "%s/rec.scn", dir);
    char *prog[] = {(char *)"prog.py"};
    rec_job j = {"/bin/sh", sh, out, NULL, 0, prog, 1, 4};   /* sh under memcheck: slow */
    rec_result r;
    cr_assert(eq(int, rec_run(&j, "test", &r), 0));
    cr_assert(eq(int, r.timed_out, 1));
    cr_assert(eq(int, r.state, REC_OK));
    cr_assert(eq(int, r.program.how, WK_SIGNAL));
    cr_assert(eq(int, r.program.code, 15));
    FILE *f = fopen(pidf, "r");
    cr_assert(ne(ptr, f, NULL));
    int pid = 0;
    cr_assert(eq(int, fscanf(f, "%d", &pid), 1));
    fclose(f);
    usleep(100000);
    cr_assert(eq(int, running(pid), 0), "the group's sleep %d still runs", pid);
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
