/* test_wk.c - one child with a timeout, the finding hook, the namer of
 * endings, and the pool (its files, deaths, findings, and its workers dying
 * with a SIGKILLed parent). */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc/al.h"
#include "allocspec/as.h"
#include "core/obj.h"
#include "worker/wk.h"

typedef struct out {
    int value;
    char note[64];
} out;

/* ---- one child ---- */

static void job_ok(void *arg, void *shared)
{
    ((out *)shared)->value = *(int *)arg;
}

/* e's class (the worker's word for it) and its description, as wanted. */
static void says(const wk_end *e, const char *cls_want, const char *words_want)
{
    char cls[64], words[128];
    wk_class(e, cls, sizeof cls);
    wk_describe(e, words, sizeof words);
    cr_assert(eq(str, cls, (char *)cls_want));
    cr_assert(eq(str, words, (char *)words_want));
}

Test(wk, a_child_that_exits_hands_back_its_shared_bytes)
{
    int v = 42;
    wk_job j = {job_ok, &v, sizeof(out), 5, NULL};
    out o = {0, ""};
    wk_end e;
    cr_assert(eq(int, wk_run(&j, &o, &e), 0));
    cr_assert(eq(int, e.how, WK_OK));
    cr_assert(eq(int, o.value, 42));
    char cls[64];
    wk_class(&e, cls, sizeof cls);
    cr_assert(eq(str, cls, ""));
}

static void job_exit7(void *arg, void *shared)
{
    (void)arg, (void)shared;
    _exit(7);
}

Test(wk, a_child_that_exits_non_zero_is_a_crash_with_its_status)
{
    wk_job j = {job_exit7, NULL, 0, 5, NULL};
    wk_end e;
    cr_assert(eq(int, wk_run(&j, NULL, &e), 0));
    cr_assert(eq(int, e.how, WK_EXIT));
    cr_assert(eq(int, e.code, 7));
    says(&e, "crash: exit status 7", "exited with status 7");
}

static void job_raise(void *arg, void *shared)
{
    (void)shared;
    int sig = *(int *)arg;
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(0);
}

Test(wk, a_child_killed_by_each_signal_is_named_from_the_one_table)
{
    static const struct { int sig; const char *cls; } cases[] = {
        {SIGSEGV, "crash: SIGSEGV"}, {SIGABRT, "crash: SIGABRT"}, {SIGBUS, "crash: SIGBUS"},
        {SIGFPE, "crash: SIGFPE"},   {SIGILL, "crash: SIGILL"},   {SIGKILL, "crash: SIGKILL"},
        {SIGTERM, "crash: SIGTERM"}, {SIGALRM, "crash: SIGALRM"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int sig = cases[i].sig;
        /* no timeout: a SIGALRM is then a signal like any other */
        wk_job j = {job_raise, &sig, 0, 0, NULL};
        wk_end e;
        cr_assert(eq(int, wk_run(&j, NULL, &e), 0));
        cr_assert(eq(int, e.how, WK_SIGNAL), "signal %d", sig);
        cr_assert(eq(int, e.code, sig));
        char cls[64];
        wk_class(&e, cls, sizeof cls);
        cr_assert(eq(str, cls, (char *)cases[i].cls));
    }
    wk_end e = {WK_SIGNAL, 45, 0, 0, ""};
    says(&e, "crash: signal 45", "crashed: signal 45 (unnamed)");
    e.code = SIGSEGV;
    char words[128];
    wk_describe(&e, words, sizeof words);
    cr_assert(eq(str, words, "crashed: signal 11 (SIGSEGV)"));
}

static void job_hang(void *arg, void *shared)
{
    (void)arg, (void)shared;
    for (;;)
        pause();
}

Test(wk, a_child_past_its_timeout_is_a_timeout_not_a_signal)
{
    wk_job j = {job_hang, NULL, 0, 1, NULL};
    wk_end e;
    time_t t0 = time(NULL);
    cr_assert(eq(int, wk_run(&j, NULL, &e), 0));
    cr_assert(le(i64, (int64_t)(time(NULL) - t0), 3));
    cr_assert(eq(int, e.how, WK_TIMEOUT));
    cr_assert(eq(u32, e.timeout, 1));
    says(&e, "crash: timeout", "timed out after 1 s");
}

/* A double free under the guard allocator: a finding at line 17. */
static void double_free(void)
{
    al_allocator *g;
    char err[128];
    if (as_create("guard/libc", &g, err, sizeof err) != 0)
        _exit(99);
    al_install(g);
    obj_set_site("t.scn", 17);
    char *p = al_malloc(8, AL_K_ATTR, "t");
    al_free(p, 8, AL_K_ATTR);
    al_free(p, 8, AL_K_ATTR);
    _exit(98);   /* the hook did not end the child */
}

static void then_note(void *arg, uint32_t line, const char *what)
{
    out *o = arg;
    o->value = (int)line;
    size_t k = 0;
    for (; what[k] && k + 1 < sizeof o->note; k++)
        o->note[k] = what[k];
    o->note[k] = '\0';
}

static void job_finding(void *arg, void *shared)
{
    if (arg)
        wk_on_finding(then_note, shared);
    double_free();
}

Test(wk, a_child_stopped_by_a_finding_reports_line_and_what)
{
    wk_job j = {job_finding, NULL, sizeof(out), 5, NULL};
    wk_end e;
    out o = {0, ""};
    cr_assert(eq(int, wk_run(&j, &o, &e), 0));
    cr_assert(eq(int, e.how, WK_FINDING));
    cr_assert(eq(u32, e.line, 17));
    cr_assert(eq(int, strncmp(e.what, "double free", 11), 0), "%s", e.what);
    char kind[64], cls[128];
    wk_finding_kind(e.what, kind, sizeof kind);
    cr_assert(eq(str, kind, "double free"));
    wk_class(&e, cls, sizeof cls);
    cr_assert(eq(int, strncmp(cls, "finding: double free on ", 24), 0), "%s", cls);
    cr_assert(eq(int, o.value, 0));   /* no `then` asked for */
    /* with wk_on_finding: `then` runs first, with the same line */
    j.arg = &j;
    cr_assert(eq(int, wk_run(&j, &o, &e), 0));
    cr_assert(eq(int, e.how, WK_FINDING));
    cr_assert(eq(int, o.value, 17));
    cr_assert(eq(int, strncmp(o.note, "double free", 11), 0), "%s", o.note);
}

Test(wk, names_kinds_and_classes)
{
    cr_assert(eq(str, (char *)wk_sig_name(SIGSEGV), "SIGSEGV"));
    cr_assert(eq(ptr, (void *)wk_sig_name(0), NULL));
    char k[64], n[64];
    wk_finding_kind("use-after-free read on freed tensor block of 16 bytes", k, sizeof k);
    cr_assert(eq(str, k, "use-after-free read"));
    wk_finding_kind("use-after-free: decref of dead tensor #3", k, sizeof k);
    cr_assert(eq(str, k, "use-after-free"));
    wk_finding_kind("double free of block", k, sizeof k);
    cr_assert(eq(str, k, "double free"));
    wk_normalize("  strong count of storage#41   is 3 ", n, sizeof n);
    cr_assert(eq(str, n, "strong count of storage#N is N"));
}

/* ---- the pool ---- */

typedef struct pj {
    int ends[16];       /* how each job ended, -1: not yet */
    int calls[16];
    char text[16][64];  /* what its file 0 held */
    char what[16][240];
} pj;

/* job 3 crashes (SIGABRT), job 5 hangs (timeout), job 7 is a finding, job 9 says
 * something on stderr and fails; the others write "job N" to file 0 */
static int pool_run(void *arg, size_t idx, const int *files)
{
    (void)arg;
    if (idx == 3)
        raise(SIGABRT);   /* not SIGSEGV: ASan's handler turns that into an exit */
    if (idx == 5)
        for (;;)
            pause();
    if (idx == 7) {
        dprintf(files[0], "partial 7");
        double_free();
    }
    if (idx == 9) {
        fprintf(stderr, "first line\nthe last words of job 9\n");
        return -1;
    }
    dprintf(files[0], "job %zu", idx);
    dprintf(files[1], "side %zu", idx);
    return 0;
}

static void pool_done(void *arg, size_t idx, const wk_end *e, const int *files)
{
    pj *p = arg;
    p->ends[idx] = (int)e->how;
    p->calls[idx]++;
    snprintf(p->what[idx], sizeof p->what[idx], "%s", e->what);
    ssize_t r = read(files[0], p->text[idx], sizeof p->text[idx] - 1);
    p->text[idx][r > 0 ? r : 0] = '\0';
}

Test(wk_pool, each_job_ends_once_as_it_did_and_the_others_go_on, .timeout = 30)
{
    pj p;
    memset(&p, 0, sizeof p);
    wk_pool_ops ops = {2, 1, pool_run, pool_done, NULL, &p};
    char err[128];
    cr_assert(eq(int, wk_pool_run(&ops, 12, 3, err, sizeof err), 0), "%s", err);
    for (int i = 0; i < 12; i++) {
        cr_assert(eq(int, p.calls[i], 1), "job %d", i);
        int want = i == 3 ? WK_SIGNAL : i == 5 ? WK_TIMEOUT : i == 7 ? WK_FINDING
                 : i == 9 ? WK_EXIT : WK_OK;
        cr_assert(eq(int, p.ends[i], want), "job %d", i);
        if (want == WK_OK) {
            char s[32];
            snprintf(s, sizeof s, "job %d", i);
            cr_assert(eq(str, p.text[i], s));
        }
    }
    cr_assert(eq(str, p.text[7], "partial 7"));   /* kept, though the worker died */
    cr_assert(eq(int, strncmp(p.what[7], "double free", 11), 0), "%s", p.what[7]);
    cr_assert(eq(str, p.what[9], "the last words of job 9"));
}

static wk_spool spool;

static void spool_done(void *arg, size_t idx, const wk_end *e, const int *files)
{
    (void)arg, (void)e;
    cr_assert(eq(int, wk_spool_add(&spool, idx, files[1]), 0));
}

static int odd_only(void *arg, size_t idx)
{
    (void)arg;
    return idx % 2 == 1;
}

static int run_unordered(void *arg, size_t idx, const int *files)
{
    (void)arg;
    struct timespec ts = {0, (long)((12 - idx) * 2000000L)};   /* later jobs end first */
    nanosleep(&ts, NULL);
    dprintf(files[1], "[%zu]", idx);
    return 0;
}

Test(wk_pool, pieces_come_back_in_index_order, .timeout = 30)
{
    cr_assert(eq(int, wk_spool_init(&spool, 12), 0));
    wk_pool_ops ops = {2, 0, run_unordered, spool_done, NULL, NULL};
    char err[128];
    cr_assert(eq(int, wk_pool_run(&ops, 12, 4, err, sizeof err), 0), "%s", err);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert(eq(int, wk_spool_write(&spool, m, NULL, NULL), 0));
    fflush(m);
    cr_assert(eq(str, buf, "[0][1][2][3][4][5][6][7][8][9][10][11]"));
    rewind(m);
    cr_assert(eq(int, wk_spool_write(&spool, m, odd_only, NULL), 0));
    fclose(m);
    cr_assert(eq(str, buf, "[1][3][5][7][9][11]"));
    free(buf);
    wk_spool_free(&spool);
}

/* ---- the parent SIGKILLed ---- */

static int pid_pipe = -1;

static int run_and_hang(void *arg, size_t idx, const int *files)
{
    (void)arg, (void)idx;
    dprintf(files[0], "something to leave behind");
    pid_t me = getpid();
    if (write(pid_pipe, &me, sizeof me) != (ssize_t)sizeof me)
        _exit(1);
    for (;;)
        pause();
}

static void no_done(void *arg, size_t idx, const wk_end *e, const int *files)
{
    (void)arg, (void)idx, (void)e, (void)files;
}

static int dir_empty(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    if (d)
        closedir(d);
    return d && n == 0;
}

Test(wk_pool, workers_die_with_a_sigkilled_parent_and_leave_no_file, .timeout = 30)
{
    char tmp[] = "/tmp/wk-test-XXXXXX";
    cr_assert(ne(ptr, mkdtemp(tmp), NULL));
    setenv("TMPDIR", tmp, 1);
    /* orphans come to us, so that we can see how they ended */
    cr_assert(eq(int, prctl(PR_SET_CHILD_SUBREAPER, 1), 0));
    int fd[2];
    cr_assert(eq(int, pipe(fd), 0));
    pid_t parent = fork();
    cr_assert(ge(int, parent, 0));
    if (parent == 0) {
        close(fd[0]);
        pid_pipe = fd[1];
        wk_pool_ops ops = {3, 0, run_and_hang, no_done, NULL, NULL};
        char err[128];
        wk_pool_run(&ops, 2, 2, err, sizeof err);
        _exit(0);
    }
    close(fd[1]);
    pid_t kids[2];
    for (int i = 0; i < 2; i++)
        cr_assert(eq(sz, (size_t)read(fd[0], &kids[i], sizeof kids[i]), sizeof kids[i]));
    close(fd[0]);
    kill(parent, SIGKILL);
    int st;
    cr_assert(eq(int, waitpid(parent, &st, 0), parent));
    for (int i = 0; i < 2; i++) {
        /* reparented to us: each must end by itself, of SIGKILL */
        pid_t w = 0;
        for (int t = 0; t < 500 && w == 0; t++) {
            w = waitpid(kids[i], &st, WNOHANG);
            if (w == 0) {
                struct timespec ts = {0, 10000000L};
                nanosleep(&ts, NULL);
            }
        }
        if (w != kids[i])
            kill(kids[i], SIGKILL);
        cr_assert(eq(int, w, kids[i]), "worker %d outlived its parent", (int)kids[i]);
        int killed = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        cr_assert(eq(int, killed, SIGKILL));
    }
    cr_assert(dir_empty(tmp), "files left in %s", tmp);
    rmdir(tmp);
}
