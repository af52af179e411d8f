/* rec.c - driving the recorder (rec.h). */
#include "record/rec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int rec_temp(char *buf, size_t n, const char *suffix, const char *who)
{
    const char *d = getenv("TMPDIR");
    snprintf(buf, n, "%s/fakegc-record-XXXXXX%s", d && *d ? d : "/tmp", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0) {
        fprintf(stderr, "%s: cannot make a temporary file in %s: %s\n", who,
                d && *d ? d : "/tmp", strerror(errno));
        buf[0] = '\0';
        return -1;
    }
    close(fd);
    return 0;
}

/* ---- the child: its own group, then the recorder ---- */

typedef struct spawn {
    const char *python;
    char **cmd;
    int status_fd;
} spawn;

typedef struct shared {    /* what the child leaves where the parent reads it */
    volatile pid_t group;  /* its pid, once it leads its own group */
    volatile int exec_errno;
} shared;

static void child(void *arg, void *sh)
{
    const spawn *s = arg;   /* the first member of a waiter */
    shared *d = sh;
    signal(SIGINT, SIG_DFL);   /* the recorder's Python installs its own */
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    d->group = getpid();
    dup2(2, 1);   /* the program's output must not mix with the report */
    fcntl(s->status_fd, F_SETFD, 0);
    char fd[16];
    snprintf(fd, sizeof fd, "%d", s->status_fd);
    setenv("FAKEGC_RECORD_STATUS_FD", fd, 1);
    execv(s->python, s->cmd);
    d->exec_errno = errno;
    _exit(127);
}

/* ---- the parent: forwarding signals, the timeout ---- */

static volatile sig_atomic_t got_sig, got_count;

static void on_signal(int sig)
{
    got_sig = sig;
    got_count++;
}

typedef struct waiter {   /* the child's and tick's argument */
    spawn s;
    const rec_job *j;
    struct timespec t0;
    double sent_at;        /* when the group was sent `sent` (seconds) */
    int sent, killed, timed_out;
} waiter;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void tick(void *arg, const void *sh)
{
    waiter *w = arg;
    pid_t group = ((const shared *)sh)->group;
    if (!group || w->killed)
        return;
    double now = since(&w->t0);
    if (w->sent && (got_count >= 2 || now - w->sent_at >= REC_GRACE)) {
        kill(-group, SIGKILL);
        w->killed = 1;
    } else if (!w->sent && (got_sig || (w->j->timeout && now >= w->j->timeout))) {
        w->sent = got_sig ? (int)got_sig : SIGTERM;
        w->timed_out = !got_sig;
        w->sent_at = now;
        kill(-group, w->sent);
    }
}

/* SIGINT and SIGTERM to on_signal while the recorder runs (not where the
 * caller ignores them: a background job's SIGINT stays ignored). */
static void catch_signals(struct sigaction old[2], int install)
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        if (!install) {
            sigaction(sigs[i], &old[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- the status file: `program exit N|signal N|none` `recorder WORD` ---- */

static const char *const state_words[] = {"ok", "usage", "no-torch", "internal", "refused",
                                          NULL};

static void read_status(int fd, rec_result *r)
{
    char buf[256], how[16], word[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    int code = 0, k = 0;
    r->state = REC_SILENT;
    if (sscanf(buf, "program %15s %d recorder %31s", how, &code, word) == 3 &&
        (strcmp(how, "exit") == 0 || strcmp(how, "signal") == 0) && code >= 0 && code < 256) {
        r->ran = 1;
        r->program.how = strcmp(how, "signal") == 0 ? WK_SIGNAL : code ? WK_EXIT : WK_OK;
        r->program.code = code;
    } else if (sscanf(buf, "program none recorder %31s", word) != 1) {
        return;
    }
    for (; state_words[k] && strcmp(state_words[k], word) != 0; k++)
        ;
    if (state_words[k])
        r->state = (rec_state)k;
}

static char **command(const rec_job *j)
{
    size_t n = 0;
    char **cmd = calloc(6 + j->nopts + j->nprog, sizeof *cmd);
    if (!cmd)
        return NULL;
    cmd[n++] = (char *)j->python;
    cmd[n++] = (char *)j->recorder;
    cmd[n++] = (char *)"-o";
    cmd[n++] = (char *)j->out;
    for (size_t k = 0; k < j->nopts; k++)
        cmd[n++] = (char *)j->opts[k];
    cmd[n++] = (char *)"--";
    for (size_t k = 0; k < j->nprog; k++)
        cmd[n++] = j->prog[k];
    cmd[n] = NULL;
    return cmd;
}

int rec_run(const rec_job *j, const char *who, rec_result *r)
{
    memset(r, 0, sizeof *r);
    r->state = REC_NOT_RUN;
    waiter w = {.s = {j->python, command(j), wk_tmpfile()}, .j = j};
    if (!w.s.cmd || w.s.status_fd < 0) {
        fprintf(stderr, "%s: cannot start the recorder: %s\n", who,
                w.s.cmd ? strerror(errno) : "out of memory");
        free(w.s.cmd);
        if (w.s.status_fd >= 0)
            close(w.s.status_fd);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &w.t0);
    got_sig = got_count = 0;
    struct sigaction old[2];
    catch_signals(old, 1);
    shared d;
    wk_job job = {child, &w, sizeof d, 0, tick};
    int rc = wk_run(&job, &d, &r->child);
    if (w.sent && d.group)
        kill(-d.group, SIGKILL);   /* what the program started and left behind */
    catch_signals(old, 0);
    r->interrupted = (int)got_sig;
    r->timed_out = w.timed_out;
    if (rc == 0 && d.exec_errno) {
        r->child.how = WK_LOST;
        snprintf(r->child.what, sizeof r->child.what, "%s: %s", j->python,
                 strerror(d.exec_errno));
    }
    if (rc == 0)
        read_status(w.s.status_fd, r);
    else
        fprintf(stderr, "%s: cannot start the recorder: %s\n", who, r->child.what);
    close(w.s.status_fd);
    free(w.s.cmd);
    return rc;
}

/* ---- saying how it ended ---- */

static const char JUDGING[] = "judging what was recorded up to there";

int rec_tell(const rec_result *r, const rec_job *j, const char *who, int *have)
{
    const char *prog = j->nprog ? j->prog[0] : "the program";
    char how[300];
    if (r->timed_out)
        fprintf(stderr, "%s: %s ran past --timeout %u s: sent it SIGTERM\n", who, prog,
                j->timeout);
    else if (r->interrupted)
        fprintf(stderr, "%s: got %s: sent it to %s\n", who, wk_sig_name(r->interrupted),
                prog);
    if (r->ran && r->program.how != WK_OK) {
        wk_describe(&r->program, how, sizeof how);
        fprintf(stderr, "%s: %s %s; %s\n", who, prog, how, JUDGING);
    }
    wk_describe(&r->child, how, sizeof how);
    switch (r->state) {
    case REC_OK:
    case REC_USAGE:   /* the recorder said why */
        return r->state == REC_USAGE;
    case REC_NOT_RUN:
        *have = 0;
        return 1;
    case REC_NO_TORCH:
        fprintf(stderr, "%s: torch is not importable by %s (use --python with the Python "
                        "that has PyTorch 1.13.1 to 2.14, or a root of scripts/torch-root.sh)\n",
                who, j->python);
        *have = 0;
        return 1;
    case REC_INTERNAL:
    case REC_REFUSED:
        /* the recording ends in verdict(stopped=): reported, never judged */
        fprintf(stderr, "%s: the recorder %s (see the recording's header); what was "
                        "recorded up to there is reported, not judged\n", who,
                r->state == REC_INTERNAL ? "failed" : "refused the program");
        return 1;
    case REC_SILENT:
        if (r->child.how == WK_LOST)
            fprintf(stderr, "%s: could not run the recorder: %s\n", who, how);
        else
            fprintf(stderr, "%s: the recorder %s without saying how %s ended; %s\n", who,
                    how, prog, JUDGING);
        return 1;
    }
    return 1;
}
