/* cli_pool.c - reused --jobs workers (see cli_pool.h). */
#include "cli/cli_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/er.h"
#include "core/obj.h"
#include "instrument/in_guard.h"

enum { PATH_N = 4096 };

typedef struct worker {
    pid_t pid;               /* 0: no process */
    int cmd, res;            /* pipe to the worker (indices), from it (answers) */
    size_t index;            /* the scenario in hand */
    int busy;
} worker;

typedef struct pool {
    const cli_common *c;
    void (*done)(void *arg, const rp_scenario *s);
    void *done_arg;
    sc_program *const *progs;
    size_t n;
    rp_scenario *res;
    rp_timeline *tl;         /* --timeline: one series per scenario, or NULL */
    int want_dot;
    char dir[PATH_N];        /* private temporary folder */
    worker *ws;
    size_t nw;
    struct pollfd *pf;       /* nw each, for await() */
    size_t *map;
} pool;

/* ---- findings: a bad access caught in a worker ----
 *
 * A worker that the guard allocator (or a decref of a dead object) stopped
 * has found something about the scenario (exit 1 for the run), not a crash
 * of fakegc: the hook writes "fakegc: finding: LINE\tWHAT" to the worker's
 * stderr file and exits CHILD_FINDING; the parent turns that line into the
 * scenario's failure. */
enum { CHILD_FINDING = 4 };
static const char FINDING_TAG[] = "fakegc: finding: ";

static void save_timeline(int finding);

/* The guard's hook in a worker: "fakegc: finding: LINE\tWHAT" on stderr
 * (the worker's .err file), the --timeline series so far, then exit
 * CHILD_FINDING. Async-signal-safe. */
static void child_finding(const char *what)
{
    save_timeline(1);
    char buf[600];
    size_t n = 0;
    for (const char *t = FINDING_TAG; *t; t++)
        buf[n++] = *t;
    char digits[16];
    size_t nd = 0;
    uint32_t line = obj_current_site().line;
    do {
        digits[nd++] = (char)('0' + line % 10);
        line /= 10;
    } while (line && nd < sizeof digits);
    while (nd)
        buf[n++] = digits[--nd];
    buf[n++] = '\t';
    for (; *what && *what != '\n' && n < sizeof buf - 2; what++)
        buf[n++] = *what;
    buf[n++] = '\n';
    ssize_t rc = write(2, buf, n);
    (void)rc;
    _exit(CHILD_FINDING);
}

/* ---- the worker side ---- */

/* Its own files, for the death handler (async-signal-safe unlink only). */
static char w_json[PATH_N], w_err[PATH_N], w_dot[PATH_N], w_obj[PATH_N], w_tl[PATH_N],
    w_dir[PATH_N];
static rp_timeline *w_timeline;   /* the series of the scenario in hand, or NULL */

/* The scenario's --timeline series to w_tl, for the parent; after a
 * finding, with a last point at the statement in hand (the values of the
 * one before: the statement did not finish). write(2) only. */
static void save_timeline(int finding)
{
    rp_timeline *t = w_timeline;
    if (!t || !w_tl[0])
        return;
    w_timeline = NULL;
    if (finding)
        rp_timeline_add(t, obj_current_site().line, t->n ? t->objects[t->n - 1] : 0,
                        t->n ? t->bytes[t->n - 1] : 0);
    int fd = open(w_tl, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    (void)rp_timeline_save(fd, t);
    close(fd);
}

static void on_parent_death(int sig)
{
    (void)sig;
    unlink(w_json);
    unlink(w_err);
    if (w_dot[0])
        unlink(w_dot);
    if (w_obj[0])
        unlink(w_obj);
    if (w_tl[0])
        unlink(w_tl);
    rmdir(w_dir);    /* succeeds for the last one out */
    _exit(CLI_EXIT_INTERNAL);
}

static void file_of(const pool *p, char *buf, const char *what, size_t k)
{
    snprintf(buf, PATH_N, "%s/%s-%zu", p->dir, what, k);
}

static void write_one(const cli_common *c, rp_scenario *s, FILE *f)
{
    rp_run one;
    memset(&one, 0, sizeof one);
    one.tool = "fakegc";
    one.version = FAKEGC_VERSION;
    one.allocator = c->allocator;
    one.compat = c->compat;
    one.scenarios = s;
    one.n = 1;
    rp_run_count(&one);
    rp_options ro = {0, 0, 0};
    rp_write(&one, RP_JSON, f, &ro);
}

/* One scenario: stderr to the worker's .err file (so that what a crash said
 * becomes the scenario's error), the record to its .json file. */
static int worker_one(const pool *p, size_t k, size_t idx)
{
    if (!freopen(w_err, "w", stderr))
        return -1;
    FILE *jf = fopen(w_json, "w");
    FILE *df = NULL, *of = NULL;
    w_dot[0] = w_obj[0] = '\0';
    if (p->want_dot) {
        file_of(p, w_dot, "dot", idx);
        df = fopen(w_dot, "w");
    }
    if (p->c->objects_f) {
        file_of(p, w_obj, "objects", idx);
        of = fopen(w_obj, "w");
    }
    if (!jf || (p->want_dot && !df) || (p->c->objects_f && !of)) {
        if (jf)
            fclose(jf);
        if (df)
            fclose(df);
        if (of)
            fclose(of);
        return -1;
    }
    (void)k;
    sc_options o;
    cli_run_options(p->c, &o, df);
    o.dot_cluster = (uint32_t)idx;
    o.objects = of;
    rp_scenario s;
    memset(&s, 0, sizeof s);
    rp_timeline t;
    memset(&t, 0, sizeof t);
    const char *file = sc_program_file(p->progs[idx]);
    if (p->tl && rp_timeline_begin(&t, file) == 0) {
        o.on_statement = cli_timeline_hook;
        o.on_statement_arg = &t;
        file_of(p, w_tl, "tl", idx);
        w_timeline = &t;
    }
    /* a scenario that never ends (a hang caused by an injected
     * use-after-free, say) is ended by SIGALRM and reported as an error */
    alarm(p->c->timeout);
    sc_run(p->progs[idx], &o, &s);
    alarm(0);
    if (cli_interrupted())   /* stopped in hand: no record; the parent drops it */
        _exit(CLI_EXIT_INTERNAL);
    cli_canary_leak("worker");
    write_one(p->c, &s, jf);
    int bad = ferror(jf) != 0;
    bad |= fclose(jf) != 0;
    if (df)
        bad |= fclose(df) != 0;
    if (of)
        bad |= fclose(of) != 0;
    w_dot[0] = w_obj[0] = '\0';   /* the parent's now */
    if (t.stmt) {
        cli_timeline_end(&t, &s, file);
        int fd = open(w_tl, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        bad |= fd < 0 || rp_timeline_save(fd, &t) != 0;
        if (fd >= 0)
            bad |= close(fd) != 0;
        w_timeline = NULL;
        w_tl[0] = '\0';   /* the parent's now */
        rp_timeline_clear(&t);
    }
    rp_scenario_clear(&s);
    return bad ? -1 : 0;
}

static void worker_main(const pool *p, size_t k, pid_t parent)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_parent_death;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    in_guard_set_finding_hook(child_finding);
    obj_set_dead_decref_hook(child_finding);
    file_of(p, w_json, "json", k);
    file_of(p, w_err, "err", k);
    snprintf(w_dir, sizeof w_dir, "%s", p->dir);
    prctl(PR_SET_PDEATHSIG, SIGUSR1);
    if (getppid() != parent)   /* the parent died before the prctl */
        on_parent_death(SIGUSR1);
    /* the other workers' pipe ends: keeping them open would hide their EOF */
    for (size_t i = 0; i < p->nw; i++)
        if (i != k && p->ws[i].pid) {
            close(p->ws[i].cmd);
            close(p->ws[i].res);
        }
    int cmd = p->ws[k].cmd, res = p->ws[k].res;
    uint64_t idx;
    while (read(cmd, &idx, sizeof idx) == (ssize_t)sizeof idx) {
        if (idx >= p->n || worker_one(p, k, (size_t)idx) < 0)
            _exit(CLI_EXIT_INTERNAL);
        if (write(res, &idx, sizeof idx) != (ssize_t)sizeof idx)
            _exit(CLI_EXIT_INTERNAL);
    }
    unlink(w_json);
    unlink(w_err);
    _exit(CLI_EXIT_OK);
}

/* ---- the parent side ---- */

static void set_error(rp_scenario *s, const char *file, const char *msg)
{
    size_t n = strlen(msg) + 1;
    s->status = RP_ERROR;
    if (!s->file)
        s->file = al_strdup(file, AL_K_REPORT, "cli error file");
    s->error = al_malloc(n, AL_K_REPORT, "cli error");
    if (s->error)
        memcpy(s->error, msg, n);
    er_clear();
}

static int spawn(pool *p, size_t k)
{
    worker *w = &p->ws[k];
    int to[2], from[2];
    if (pipe(to) < 0)
        return -1;
    if (pipe(from) < 0) {
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(to[1]);
        close(from[0]);
        w->cmd = to[0];
        w->res = from[1];
        w->pid = getpid();   /* so that worker_main keeps its own */
        worker_main(p, k, parent);
    }
    close(to[0]);
    close(from[1]);
    w->pid = pid;
    w->cmd = to[1];
    w->res = from[0];
    w->busy = 0;
    return 0;
}

/* The finding a worker recorded: its line and what the guard said. */
static int worker_finding(const char *path, uint32_t *line, char *what, size_t n)
{
    char buf[700];
    int found = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (!found && fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, FINDING_TAG, sizeof FINDING_TAG - 1) != 0)
            continue;
        char *p = buf + sizeof FINDING_TAG - 1, *end;
        *line = (uint32_t)strtoul(p, &end, 10);
        if (*end == '\t')
            end++;
        size_t l = strlen(end);
        while (l && (end[l - 1] == '\n' || end[l - 1] == '\r'))
            end[--l] = '\0';
        snprintf(what, n, "%s", end);
        found = 1;
    }
    fclose(f);
    return found;
}

/* "use-after-free read", "double free", "buffer overflow": the kind is
 * what comes before " on ", " of " or ':'. */
static void finding_kind(const char *what, char *kind, size_t n)
{
    size_t l = strcspn(what, ":");
    const char *on = strstr(what, " on "), *of = strstr(what, " of ");
    if (on && (size_t)(on - what) < l)
        l = (size_t)(on - what);
    if (of && (size_t)(of - what) < l)
        l = (size_t)(of - what);
    snprintf(kind, n, "%.*s", (int)l, what);
}

static void record_finding(rp_scenario *s, const char *file, uint32_t line, const char *what)
{
    char kind[96], text[160];
    finding_kind(what, kind, sizeof kind);
    snprintf(text, sizeof text, "finding: %s", kind);
    rp_scenario_clear(s);
    rp_scenario_set_file(s, file);
    s->status = RP_FAIL;
    s->failed = 1;
    rp_scenario_add_failure(s, line, 0, text, what,
                            "a bad access caught at this statement (by the guard allocator, "
                            "or a decref of a dead object); the scenario stopped here");
    er_clear();
}

/* Last line of worker k's stderr, or "" (msg has room for n bytes). */
static void worker_said(const pool *p, size_t k, char *msg, size_t n)
{
    char path[PATH_N], buf[256];
    msg[0] = '\0';
    file_of(p, path, "err", k);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(buf, sizeof buf, f))
        if (buf[0] != '\n')
            snprintf(msg, n, "%.255s", buf);
    fclose(f);
    size_t len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
        msg[--len] = '\0';
}

static void **kept_pools;   /* see cli_pool_release */
static size_t nkept, kept_cap;

static int keep_pool(void *owned)
{
    if (nkept == kept_cap) {
        size_t nc = kept_cap ? kept_cap * 2 : 16;
        void **np = al_realloc(kept_pools, kept_cap * sizeof *np, nc * sizeof *np, AL_K_REPORT,
                               "cli pools");
        if (!np)
            return -1;
        kept_pools = np;
        kept_cap = nc;
    }
    kept_pools[nkept++] = owned;
    return 0;
}

void cli_pool_release(void)
{
    for (size_t i = 0; i < nkept; i++)
        rp_read_pool_free(kept_pools[i]);
    if (kept_pools)
        al_free(kept_pools, kept_cap * sizeof *kept_pools, AL_K_REPORT);
    kept_pools = NULL;
    nkept = kept_cap = 0;
}

/* Worker k answered: its record is in its .json file. */
static void collect_ok(pool *p, size_t k)
{
    worker *w = &p->ws[k];
    rp_scenario *s = &p->res[w->index];
    const char *file = sc_program_file(p->progs[w->index]);
    char path[PATH_N], msg[700];
    file_of(p, path, "json", k);
    rp_run rr;
    memset(&rr, 0, sizeof rr);
    char err[256] = "";
    if (rp_read_json(path, &rr, err, sizeof err) != 0 || rr.n != 1) {
        snprintf(msg, sizeof msg, "cannot read the worker's report: %s",
                 err[0] ? err : "no scenario in it");
        if (rr.scenarios)
            rp_run_free_read(&rr);
        set_error(s, file, msg);
    } else {
        *s = rr.scenarios[0];
        memset(&rr.scenarios[0], 0, sizeof rr.scenarios[0]);
        if (keep_pool(rr.owned) == 0) {
            rr.owned = NULL;   /* s's records point into it */
            rp_run_free_read(&rr);
        } else {
            rp_run_free_read(&rr);
            er_clear();
            rp_scenario_clear(s);
            set_error(s, file, "out of memory keeping the worker's report");
        }
    }
    if (p->tl) {   /* the worker's series, beside its record */
        rp_timeline *t = &p->tl[w->index];
        file_of(p, path, "tl", w->index);
        FILE *tf = fopen(path, "r");
        if (!tf || rp_timeline_load(tf, t) < 0) {
            rp_timeline_clear(t);
            if (rp_timeline_begin(t, file) == 0)   /* no points: the title still says */
                cli_timeline_end(t, s, file);
        }
        if (tf)
            fclose(tf);
        unlink(path);
    }
    w->busy = 0;
}

/* A scenario whose worker died: a series without points, its status and
 * failed lines marked (a finding's line is red). */
static void timeline_of_dead(pool *p, size_t index)
{
    char path[PATH_N];
    const char *file = sc_program_file(p->progs[index]);
    file_of(p, path, "tl", index);
    if (!p->tl) {
        unlink(path);
        return;
    }
    rp_timeline *t = &p->tl[index];
    rp_timeline_clear(t);
    FILE *tf = fopen(path, "r");   /* what the worker saved before it stopped */
    int got = tf && rp_timeline_load(tf, t) == 0;
    if (tf)
        fclose(tf);
    unlink(path);
    if (got || rp_timeline_begin(t, file) == 0)
        cli_timeline_end(t, &p->res[index], file);
}

/* Worker k is gone (EOF on its pipe): reap it; the scenario in hand, if
 * any, is an error saying how it ended. */
static void collect_death(pool *p, size_t k)
{
    worker *w = &p->ws[k];
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(w->cmd);
    close(w->res);
    w->pid = 0;
    if (!w->busy)
        return;
    w->busy = 0;
    if (cli_interrupted()) {   /* stopped in hand by the interruption: no record */
        rp_scenario_clear(&p->res[w->index]);
        return;
    }
    const cli_common *c = p->c;
    rp_scenario *s = &p->res[w->index];
    const char *file = sc_program_file(p->progs[w->index]);
    char msg[700], said[300], path[PATH_N], fwhat[600];
    uint32_t fline = 0;
    file_of(p, path, "err", k);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
        worker_finding(path, &fline, fwhat, sizeof fwhat)) {
        /* CHILD_FINDING, or memcheck's --error-exitcode after it reported
         * the bad access itself */
        record_finding(s, file, fline, fwhat);
        timeline_of_dead(p, w->index);
        return;
    }
    worker_said(p, k, said, sizeof said);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(msg, sizeof msg, "worker timed out after %u s (--timeout)", c->timeout);
    else if (WIFSIGNALED(status))
        snprintf(msg, sizeof msg, "worker crashed: signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), said[0] ? ": " : "", said);
    else
        snprintf(msg, sizeof msg, "worker exited with status %d%s%s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, said[0] ? ": " : "", said);
    set_error(s, file, msg);
    timeline_of_dead(p, w->index);
}

static void append_file(FILE *to, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, to);
    fclose(f);
}

/* Hand out the next scenario to every idle worker (starting one where
 * needed); a worker that cannot be started makes the scenario an error. */
static void dispatch(pool *p, size_t *next)
{
    for (size_t k = 0; k < p->nw && *next < p->n && !cli_interrupted() && !cli_stopping();
         k++) {
        worker *w = &p->ws[k];
        if (w->pid && w->busy)
            continue;
        if (!w->pid && spawn(p, k) < 0) {
            char msg[128];
            snprintf(msg, sizeof msg, "cannot start a worker: %s", strerror(errno));
            set_error(&p->res[*next], sc_program_file(p->progs[*next]), msg);
            (*next)++;
            continue;
        }
        uint64_t idx = *next;
        w->index = *next;
        w->busy = 1;
        (*next)++;
        if (write(w->cmd, &idx, sizeof idx) != (ssize_t)sizeof idx) {
            /* it died: the EOF on its answer pipe reports it */
        }
    }
}

static size_t busy_count(const pool *p)
{
    size_t b = 0;
    for (size_t k = 0; k < p->nw; k++)
        b += p->ws[k].pid && p->ws[k].busy;
    return b;
}

/* Wait for answers; each is a finished scenario or a dead worker. */
static int await(pool *p, size_t *finished)
{
    struct pollfd *pf = p->pf;
    size_t *map = p->map, m = 0;
    for (size_t k = 0; k < p->nw; k++)
        if (p->ws[k].pid && p->ws[k].busy) {
            pf[m].fd = p->ws[k].res;
            pf[m].events = POLLIN;
            map[m++] = k;
        }
    if (m == 0)
        return 0;
    if (poll(pf, m, -1) < 0)
        return errno == EINTR ? 0 : -1;
    for (size_t j = 0; j < m; j++) {
        if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        size_t k = map[j];
        uint64_t idx;
        ssize_t r = read(p->ws[k].res, &idx, sizeof idx);
        size_t index = p->ws[k].index;
        if (r == (ssize_t)sizeof idx && idx == index)
            collect_ok(p, k);
        else if (r < 0 && errno == EINTR)
            continue;
        else
            collect_death(p, k);
        if (p->done)
            p->done(p->done_arg, &p->res[index]);
        (*finished)++;
        cli_progress(p->c, *finished, p->n,
                 *finished < p->n ? sc_program_file(p->progs[index]) : "");
    }
    return 0;
}

static void shutdown_pool(pool *p)
{
    for (size_t k = 0; k < p->nw; k++)
        if (p->ws[k].pid) {
            close(p->ws[k].cmd);   /* EOF: the worker exits */
            p->ws[k].cmd = -1;
        }
    for (size_t k = 0; k < p->nw; k++)
        if (p->ws[k].pid) {
            while (waitpid(p->ws[k].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            close(p->ws[k].res);
            p->ws[k].pid = 0;
        }
}

static void remove_dir(const pool *p)
{
    char path[PATH_N];
    for (size_t k = 0; k < p->nw; k++) {
        file_of(p, path, "json", k);
        unlink(path);
        file_of(p, path, "err", k);
        unlink(path);
    }
    rmdir(p->dir);
}

static void free_pool(pool *p)
{
    al_free(p->ws, p->ws ? p->nw * sizeof *p->ws : 0, AL_K_SCENARIO);
    al_free(p->pf, p->pf ? p->nw * sizeof *p->pf : 0, AL_K_SCENARIO);
    al_free(p->map, p->map ? p->nw * sizeof *p->map : 0, AL_K_SCENARIO);
}

int cli_pool_run(const cli_common *c, sc_program *const *progs, size_t n, rp_scenario *res,
                 FILE *dot, rp_timeline *tl, void (*done)(void *arg, const rp_scenario *s),
                 void *done_arg)
{
    pool p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.tl = tl;
    p.done = done;
    p.done_arg = done_arg;
    p.progs = progs;
    p.n = n;
    p.res = res;
    p.want_dot = dot != NULL;
    size_t jobs = c->jobs > 1 ? (size_t)c->jobs : 1;
    p.nw = jobs < n ? jobs : n;
    if (p.nw == 0)
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(p.dir, sizeof p.dir, "%s/fakegc-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(p.dir)) {
        cli_error("run", "--jobs: cannot create a temporary folder %s: %s (set TMPDIR to a "
                  "writable folder)", p.dir, strerror(errno));
        return -2;   /* the environment, not a bug of ours */
    }
    p.ws = al_calloc(p.nw, sizeof *p.ws, AL_K_SCENARIO, "cli workers");
    p.pf = al_calloc(p.nw, sizeof *p.pf, AL_K_SCENARIO, "cli worker polls");
    p.map = al_calloc(p.nw, sizeof *p.map, AL_K_SCENARIO, "cli worker map");
    if (!p.ws || !p.pf || !p.map) {
        free_pool(&p);
        rmdir(p.dir);
        cli_error("run", "out of memory");
        return -1;
    }
    /* a write to a dead worker's pipe is an error, not the end of us */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    size_t next = 0, finished = 0;
    int rc = 0;
    int told = 0;
    for (;;) {
        dispatch(&p, &next);
        if (busy_count(&p) == 0)
            break;
        if (cli_interrupted() && !told) {   /* the scenarios in hand stop too */
            for (size_t k = 0; k < p.nw; k++)
                if (p.ws[k].pid && p.ws[k].busy)
                    kill(p.ws[k].pid, cli_interrupted());
            told = 1;
        }
        if (await(&p, &finished) < 0) {
            cli_error("run", "--jobs: waiting for the workers: %s", strerror(errno));
            rc = -1;
            break;
        }
    }
    shutdown_pool(&p);
    sigaction(SIGPIPE, &old, NULL);
    /* the workers' side files, in scenario order */
    const struct { const char *what; FILE *to; } side[] = {{"dot", dot},
                                                             {"objects", c->objects_f}};
    for (size_t s = 0; s < sizeof side / sizeof side[0]; s++) {
        char path[PATH_N];
        for (size_t i = 0; side[s].to && i < n; i++) {
            file_of(&p, path, side[s].what, i);
            if (res[i].file)
                append_file(side[s].to, path);
            unlink(path);
        }
    }
    if (tl) {   /* series of scenarios stopped in hand */
        char path[PATH_N];
        for (size_t i = 0; i < n; i++) {
            file_of(&p, path, "tl", i);
            unlink(path);
        }
    }
    remove_dir(&p);
    free_pool(&p);
    return rc;
}
