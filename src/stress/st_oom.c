/* st_oom.c - the out-of-memory loop: SQLite's method (test_malloc.c) of
 * failing the 1st, 2nd, 3rd ... allocation until a run sees no failure,
 * once with a transient failure and once with a persistent one, checking
 * after each run that nothing leaked. */
#include "stress/st.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"

static int starts(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

static void add_finding(st_oom_result *r, int persistent, uint64_t k, const char *what)
{
    if (r->nfindings < ST_OOM_MAX_FINDINGS) {
        st_oom_finding *f = &r->f[r->nfindings];
        f->persistent = persistent;
        f->point = k;
        snprintf(f->what, sizeof f->what, "%s", what);
    }
    r->nfindings++;
}

/* How a run ended, judged against a clean OutOfMemory. Writes why (empty
 * when the run was clean). */
static void judge(const rp_scenario *s, int baseline_passed, char *why, size_t n)
{
    why[0] = '\0';
    if (s->nretained > 0) {
        const hp_retained *x = &s->retained[0];
        char path[120] = "";
        if (x->path && x->path_len)
            hp_path_shape(x->path, x->path_len, path, sizeof path);
        snprintf(why, n, "%zu object%s retained at the end check, the first %s#%" PRIu64
                 " created at %s:%u%s%s", s->nretained, s->nretained == 1 ? "" : "s",
                 obj_kind_name(x->kind), x->id, x->site.file ? x->site.file : "?",
                 x->site.line, path[0] ? " via " : "", path);
        return;
    }
    if (s->leaked_bytes) {
        snprintf(why, n, "%" PRIu64 " bytes leaked (end check)", s->leaked_bytes);
        return;
    }
    if (s->status == RP_ERROR) {
        snprintf(why, n, "internal error: %s", s->error ? s->error : "?");
        return;
    }
    if (s->status == RP_FAIL && baseline_passed) {
        for (size_t i = 0; i < s->nfailures; i++) {
            const rp_failure *f = &s->failures[i];
            if (starts(f->actual, "OutOfMemory"))
                continue;
            snprintf(why, n, "line %u: %s  actual: %s (not a clean OutOfMemory)", f->line,
                     f->text ? f->text : "", f->actual ? f->actual : "");
            return;
        }
    }
}

/* Live allocator bytes per kind, to name what a run left behind. */
static void kinds_now(uint64_t *k)
{
    for (int i = 0; i < AL_K_COUNT; i++)
        k[i] = al_live_bytes_kind((al_kind)i);
}

static void leftover(const uint64_t *before, char *why, size_t n)
{
    uint64_t now[AL_K_COUNT];
    kinds_now(now);
    size_t w = 0;
    for (int i = 0; i < AL_K_COUNT && w < n; i++)
        if (now[i] != before[i])
            w += (size_t)snprintf(why + w, n - w, "%s%" PRId64 " B %s", w ? ", " : "",
                                  (int64_t)(now[i] - before[i]), al_kind_name((al_kind)i));
    uint64_t objs = obj_live_count() + obj_zombie_count();
    if (objs && w < n)
        snprintf(why + w, n - w, "%s%" PRIu64 " objects", w ? ", " : "", objs);
}

typedef struct progress_page {
    volatile int persistent;
    volatile uint64_t point;
} progress_page;

static progress_page *page;   /* set in the forked child */

int st_oom_program(const sc_program *p, const st_oom_opts *o, st_oom_result *r)
{
    memset(r, 0, sizeof *r);
    rp_scenario s;
    memset(&s, 0, sizeof s);
    uint64_t a0 = al_alloc_count();
    sc_run(p, &o->sc, &s);
    r->attempts = al_alloc_count() - a0;
    r->baseline_status = s.status;
    r->allocations = s.allocations;
    rp_scenario_clear(&s);
    fk_reset();
    er_clear();
    if (r->baseline_status == RP_ERROR)
        return -1;
    int passed = r->baseline_status == RP_PASS;
    uint64_t before[AL_K_COUNT];
    kinds_now(before);
    for (int mode = 0; mode < 2; mode++) {
        if (!(o->modes & (1 << mode)))
            continue;
        for (uint64_t k = 1;; k++) {
            if (o->max_fail && k > o->max_fail) {
                r->capped[mode] = 1;
                break;
            }
            if (page) {
                page->persistent = mode;
                page->point = k;
            }
            uint64_t c0 = al_alloc_count();
            al_fail_at(k, mode);
            memset(&s, 0, sizeof s);
            sc_run(p, &o->sc, &s);
            al_fail_at(0, 0);
            uint64_t used = al_alloc_count() - c0;
            char why[240];
            judge(&s, passed, why, sizeof why);
            rp_scenario_clear(&s);
            fk_reset();
            er_clear();
            if (!why[0]) {
                char left[200] = "";
                leftover(before, left, sizeof left);
                if (left[0])
                    snprintf(why, sizeof why, "live after the run: %s", left);
            }
            if (why[0]) {
                add_finding(r, mode, k, why);
                /* what leaked stays leaked: measure the next run from here */
                kinds_now(before);
            }
            if (used < k)
                break;       /* the k-th allocation never came: nothing failed */
            r->points[mode]++;
        }
    }
    return 0;
}

int st_oom_forked(const sc_program *p, const st_oom_opts *o, st_oom_result *r)
{
    memset(r, 0, sizeof *r);
    progress_page *pg = mmap(NULL, sizeof *pg, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (pg == MAP_FAILED)
        return st_oom_program(p, o, r);
    int fd[2];
    if (pipe(fd) < 0) {
        munmap(pg, sizeof *pg);
        return st_oom_program(p, o, r);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        page = pg;
        st_oom_result cr;
        int rc = st_oom_program(p, o, &cr);
        const char *b = (const char *)&cr;
        size_t left = sizeof cr;
        while (left > 0) {
            ssize_t w = write(fd[1], b, left);
            if (w <= 0)
                break;
            b += w;
            left -= (size_t)w;
        }
        _exit(rc < 0 ? 4 : 0);
    }
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        munmap(pg, sizeof *pg);
        return st_oom_program(p, o, r);
    }
    size_t got = 0;
    char *b = (char *)r;
    while (got < sizeof *r) {
        ssize_t n = read(fd[0], b + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    if (got != sizeof *r || !WIFEXITED(status) || (WEXITSTATUS(status) != 0 &&
                                                   WEXITSTATUS(status) != 4)) {
        memset(r, 0, sizeof *r);
        r->crashed = 1;
        r->crash_persistent = pg->persistent;
        r->crash_point = pg->point;
        if (WIFSIGNALED(status))
            snprintf(r->crash, sizeof r->crash, "%s", strsignal(WTERMSIG(status)));
        else
            snprintf(r->crash, sizeof r->crash, "exit status %d",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (WEXITSTATUS(status) == 4) {
        rc = -1;
    }
    munmap(pg, sizeof *pg);
    return rc;
}
