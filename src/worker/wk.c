/* wk.c - naming endings, the finding hook, and one child with a timeout
 * (see wk.h). */
#include "worker/wk.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/obj.h"
#include "instrument/in_guard.h"
#include "worker/wk_int.h"

/* ---- naming ---- */

static const struct { int sig; const char *name; } sigs[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
};

const char *wk_sig_name(int sig)
{
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigs[i].sig == sig)
            return sigs[i].name;
    return NULL;
}

void wk_normalize(const char *in, char *out, size_t n)
{
    size_t k = 0;
    int space = 0;
    if (n == 0)
        return;
    for (const char *p = in; *p && k + 1 < n; p++) {
        if (*p >= '0' && *p <= '9') {
            while (p[1] >= '0' && p[1] <= '9')
                p++;
            out[k++] = 'N';
            space = 0;
        } else if (*p == ' ' || *p == '\t' || *p == '\n') {
            if (!space && k > 0)
                out[k++] = ' ';
            space = 1;
        } else {
            out[k++] = *p;
            space = 0;
        }
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
}

void wk_class(const wk_end *e, char *buf, size_t n)
{
    const char *sig = e->how == WK_SIGNAL ? wk_sig_name(e->code) : NULL;
    switch (e->how) {
    case WK_OK: snprintf(buf, n, "%s", ""); return;
    case WK_FINDING: {
        char norm[240];
        wk_normalize(e->what, norm, sizeof norm);
        snprintf(buf, n, "finding: %s", norm);
        return;
    }
    case WK_TIMEOUT: snprintf(buf, n, "crash: timeout"); return;
    case WK_SIGNAL:
        if (sig)
            snprintf(buf, n, "crash: %s", sig);
        else
            snprintf(buf, n, "crash: signal %d", e->code);
        return;
    case WK_EXIT: snprintf(buf, n, "crash: exit status %d", e->code); return;
    case WK_LOST: snprintf(buf, n, "crash: not started"); return;
    }
    snprintf(buf, n, "crash: ?");
}

void wk_describe(const wk_end *e, char *buf, size_t n)
{
    const char *sig = e->how == WK_SIGNAL ? wk_sig_name(e->code) : NULL;
    switch (e->how) {
    case WK_OK: snprintf(buf, n, "exited normally"); return;
    case WK_FINDING: snprintf(buf, n, "finding at line %u: %s", e->line, e->what); return;
    case WK_TIMEOUT: snprintf(buf, n, "timed out after %u s", e->timeout); return;
    case WK_SIGNAL:
        snprintf(buf, n, "crashed: signal %d (%s)", e->code, sig ? sig : "unnamed");
        return;
    case WK_EXIT: snprintf(buf, n, "exited with status %d", e->code); return;
    case WK_LOST: snprintf(buf, n, "could not be started: %s", e->what); return;
    }
    snprintf(buf, n, "?");
}

void wk_finding_kind(const char *what, char *kind, size_t n)
{
    size_t l = 0;
    while (what[l] && what[l] != ':' && what[l] != '\n' &&
           !(what[l] == ' ' && what[l + 1] == 'o' && (what[l + 2] == 'n' || what[l + 2] == 'f') &&
             what[l + 3] == ' '))
        l++;
    size_t k = 0;
    for (; k < l && k + 1 < n; k++)
        kind[k] = what[k];
    if (n)
        kind[k] = '\0';
}

/* ---- the finding hook ---- */

static wk_found *child_found;   /* in a child: where the parent reads it */
static void (*then_fn)(void *arg, uint32_t line, const char *what);
static void *then_arg;

void wk_on_finding(void (*then)(void *arg, uint32_t line, const char *what), void *arg)
{
    then_fn = then;
    then_arg = arg;
}

static void on_finding(const char *what)
{
    wk_found *f = child_found;
    uint32_t line = obj_current_site().line;
    if (f) {
        size_t k = 0;
        for (; what[k] && what[k] != '\n' && k + 1 < sizeof f->what; k++)
            f->what[k] = what[k];
        f->what[k] = '\0';
        f->line = line;
        f->found = 1;
    }
    if (then_fn)
        then_fn(then_arg, line, what);
    _exit(WK_EXIT_FINDING);
}

void wk_child_setup(wk_found *found, pid_t parent, unsigned timeout)
{
    child_found = found;
    then_fn = NULL;
    then_arg = NULL;
    in_guard_set_finding_hook(on_finding);
    obj_set_dead_decref_hook(on_finding);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)   /* the parent died before the prctl */
        _exit(WK_EXIT_LOST);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    alarm(timeout);
}

void wk_judge(int status, const wk_found *found, unsigned timeout, wk_end *e)
{
    memset(e, 0, sizeof *e);
    if (found && found->found && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        e->how = WK_FINDING;
        e->line = found->line;
        memcpy(e->what, (const char *)found->what, sizeof e->what);
        e->what[sizeof e->what - 1] = '\0';
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM && timeout) {
        e->how = WK_TIMEOUT;
        e->timeout = timeout;
    } else if (WIFSIGNALED(status)) {
        e->how = WK_SIGNAL;
        e->code = WTERMSIG(status);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        e->how = WK_EXIT;
        e->code = WEXITSTATUS(status);
    } else {
        e->how = WK_OK;
    }
}

void wk_lost(wk_end *e, const char *what, int err)
{
    memset(e, 0, sizeof *e);
    e->how = WK_LOST;
    snprintf(e->what, sizeof e->what, "%s: %s", what, strerror(err));
}

/* ---- one child ---- */

static size_t round_page(size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t p = pg > 0 ? (size_t)pg : 4096;
    return (n + p - 1) / p * p;
}

int wk_run(const wk_job *j, void *out, wk_end *e)
{
    size_t head = (sizeof(wk_found) + 63) / 64 * 64;
    size_t size = round_page(head + j->shared_size);
    char *area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
        wk_lost(e, "mmap", errno);
        return -1;
    }
    wk_found *found = (wk_found *)area;
    void *shared = j->shared_size ? area + head : NULL;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        wk_lost(e, "fork", errno);
        munmap(area, size);
        return -1;
    }
    if (pid == 0) {
        wk_child_setup(found, parent, j->timeout);
        j->run(j->arg, shared);
        _exit(0);
    }
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, j->tick ? WNOHANG : 0);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {   /* cannot happen for our own child */
            status = 0;
            break;
        }
        if (w == 0 && j->tick) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            j->tick(j->arg, shared);
        }
    }
    wk_judge(status, found, j->timeout, e);
    if (out && shared)
        memcpy(out, shared, j->shared_size);
    munmap(area, size);
    return 0;
}
