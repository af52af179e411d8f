/* wk.h - run work in a child process and say how it ended.
 *
 * One child, one job (stress, oom, shrink):
 *
 *   typedef struct { int status; char text[200]; } out;
 *   static void job(void *arg, void *shared) { ((out *)shared)->status = 1; }
 *   wk_job j = {job, arg, sizeof(out), 120, NULL};
 *   out o; wk_end e;
 *   if (wk_run(&j, &o, &e) < 0) ...        // no child: e.what says why
 *   if (e.how == WK_OK) ...                // o is what the child left in shared
 *   char cls[64]; wk_class(&e, cls, sizeof cls);   // "crash: SIGSEGV"
 *
 * N reused children, many jobs (`run --jobs`): wk_pool_run below.
 *
 * How a child ends (wk_end.how), judged in one place for every caller:
 *   WK_OK       it exited 0;
 *   WK_FINDING  a bad access ended it (see below): line and what are set;
 *   WK_TIMEOUT  it ran past its timeout (an alarm in the child; timeout set);
 *   WK_SIGNAL   a signal killed it (code is the signal);
 *   WK_EXIT     it exited non-zero (code is the status);
 *   WK_LOST     it could not be started (what says why, with errno's words).
 * For the deaths of a pool's job (not WK_OK, not WK_FINDING), what holds the
 * last line the child wrote on its stderr, or "".
 *
 * Findings: in every child, a bad access - a guard allocator finding,
 * including a fault on guard poison, or a decref of a dead object - ends the
 * child there, instead of it running on over a heap that can no longer be
 * trusted. The one hook records the statement in hand (obj_current_site())
 * and the finding's text where the parent reads them, calls the `then` of
 * wk_on_finding (if any), and exits WK_EXIT_FINDING. The parent sees
 * WK_FINDING whatever the exit status was (memcheck's --error-exitcode may
 * replace it). Everything on that path is async-signal-safe: the guard calls
 * the hook from its SIGSEGV handler; `then` must be too.
 *
 * Children die with their parent (PR_SET_PDEATHSIG, SIGKILL), and the files
 * the pool hands them are unlinked before any child sees them, so a SIGKILL of
 * the parent leaves neither processes nor files behind.
 *
 * Every allocation is AL_K_SCENARIO.
 */
#ifndef FAKEGC_WK_H
#define FAKEGC_WK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The exit status of a child stopped by a finding. */
enum { WK_EXIT_FINDING = 4 };

typedef enum wk_how { WK_OK, WK_FINDING, WK_TIMEOUT, WK_SIGNAL, WK_EXIT, WK_LOST } wk_how;

typedef struct wk_end {
    wk_how how;
    int code;             /* WK_SIGNAL: the signal; WK_EXIT: the status */
    unsigned timeout;     /* WK_TIMEOUT: the limit, seconds */
    uint32_t line;        /* WK_FINDING: the statement in hand (0: none) */
    char what[240];       /* WK_FINDING: the finding; WK_LOST: why; else stderr */
} wk_end;

/* ---- naming ---- */

/* "SIGSEGV", "SIGALRM", ... from one table; NULL for a signal not in it. */
const char *wk_sig_name(int sig);
/* The class of an ending, stable across runs (what shrinking keeps):
 * "crash: SIGSEGV", "crash: signal 42", "crash: timeout", "crash: exit
 * status 3", "finding: use-after-free read of dead tensor #N" (digit runs
 * as N), "crash: not started"; "" for WK_OK. */
void wk_class(const wk_end *e, char *buf, size_t n);
/* In words: "crashed: signal 11 (SIGSEGV)", "timed out after 5 s",
 * "exited with status 3", "finding at line 4: double free of ...",
 * "could not be started: ...", "exited normally". */
void wk_describe(const wk_end *e, char *buf, size_t n);
/* A finding's kind: its text up to the first ':', " on " or " of "
 * ("use-after-free read", "double free"). Async-signal-safe. */
void wk_finding_kind(const char *what, char *kind, size_t n);
/* Digit runs -> N, blanks collapsed to one space, trimmed. */
void wk_normalize(const char *in, char *out, size_t n);

/* ---- findings (in a child) ---- */

/* Run then(arg, line, what) before the child exits on a finding (NULL:
 * nothing). The hook itself is installed in every child wk starts. */
void wk_on_finding(void (*then)(void *arg, uint32_t line, const char *what), void *arg);

/* ---- one child ---- */

typedef struct wk_job {
    /* In the child; returning ends it with exit 0. shared: shared_size
     * zeroed bytes the parent sees (NULL when shared_size is 0). */
    void (*run)(void *arg, void *shared);
    void *arg;
    size_t shared_size;
    unsigned timeout;     /* seconds (0: none), then WK_TIMEOUT */
    /* In the parent, about every 20 ms while the child runs (NULL: the
     * parent just waits): shared as the child is filling it. */
    void (*tick)(void *arg, const void *shared);
} wk_job;

/* Fork, run j->run in the child, wait and fill e; out (shared_size bytes,
 * may be NULL) gets the shared bytes as the child left them, however it
 * ended. 0, or -1 when no child could start (e->how WK_LOST). */
int wk_run(const wk_job *j, void *out, wk_end *e);

/* ---- a pool of reused children ---- */

#define WK_MAX_FILES 4

typedef struct wk_pool_ops {
    size_t nfiles;        /* anonymous files per job, at most WK_MAX_FILES */
    unsigned timeout;     /* per job, seconds (0: none) */
    /* In a worker: run job idx, writing to files[0..nfiles) (fds, empty,
     * already unlinked). 0, or -1: the worker exits 3 (the job ends WK_EXIT). */
    int (*run)(void *arg, size_t idx, const int *files);
    /* In the parent, once per job, in the order they end: how it ended,
     * and its files rewound to offset 0 (what it wrote, also when it died).
     * The pool closes them afterwards. */
    void (*done)(void *arg, size_t idx, const wk_end *e, const int *files);
    /* In the parent (NULL: never): a signal number to stop handing out jobs
     * and send that signal to the jobs in hand; -1 to stop handing out jobs
     * and let those in hand finish; 0 to go on. */
    int (*stop)(void);
    void *arg;
} wk_pool_ops;

/* Jobs 0..njobs-1 in min(nworkers, njobs) children, each forked once and
 * given job after job; a child that dies (its job ends as it died) is
 * replaced. The files live in $TMPDIR (/tmp), unlinked at once. 0, or -1
 * when the pool cannot start at all (err says why; no job ran). A job whose
 * files cannot be made ends WK_LOST. */
int wk_pool_run(const wk_pool_ops *ops, size_t njobs, size_t nworkers, char *err, size_t errn);

/* An anonymous file in $TMPDIR (/tmp): already unlinked, so it goes away
 * with its last descriptor. The fd, or -1 (errno). */
int wk_tmpfile(void);

/* ---- pieces of output written in index order ----
 *
 *   wk_spool s; wk_spool_init(&s, n);
 *   wk_spool_add(&s, idx, fd);       // in any order: fd's bytes, copied now
 *   wk_spool_write(&s, out, keep, arg);   // pieces idx with keep(arg, idx), in order
 *   wk_spool_free(&s);
 * The copies are kept in one anonymous file. */
typedef struct wk_spool {
    int fd;
    uint64_t *off, *len;
    size_t n, end;
} wk_spool;
int wk_spool_init(wk_spool *s, size_t n);                  /* 0, -1 (errno) */
int wk_spool_add(wk_spool *s, size_t idx, int fd);         /* 0, -1 (errno) */
int wk_spool_write(const wk_spool *s, FILE *to, int (*keep)(void *arg, size_t idx),
                   void *arg);                             /* 0, -1 (errno) */
void wk_spool_free(wk_spool *s);

#endif
