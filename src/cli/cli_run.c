/* cli_run.c - `fakegc run [PATH...]`: parse every scenario first (any
 * parse error: exit 2, nothing runs), then run them in sorted order, in this
 * process or in --jobs worker processes, and write one report. */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "instrument/in_guard.h"
#include "report/rp_timeline.h"
#include "scenario/sc.h"

#define RUN_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                  CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_JOBS |  \
                  CLI_O_REPEAT |                                                        \
                  CLI_O_VERIFY | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO)

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc run [OPTIONS] [PATH...]\n\n"
            "Run scenario files, or every *.scn under the given folders (default\n"
            "scenarios/), in sorted order. Every file is parsed before anything runs:\n"
            "a file that does not parse is reported as FILE:LINE:COL: error: ... and\n"
            "the run exits 2, with a complete report saying so (status error; JUnit:\n"
            "an <error> per file; TAP: Bail out!).\n"
            "Each scenario's PASS/FAIL line is printed as it finishes; Ctrl-C prints\n"
            "the summary of what finished and exits 130.\n"
            "When walking folders, a sub-folder named errors/ (scenarios/errors/) is\n"
            "skipped: its scripts are meant to be rejected by the parser. Name such a\n"
            "file (or the folder itself) to run it.\n\noptions:\n");
    cli_common_help(f, RUN_MASK);
    fprintf(f, "  --help, --version    this text; the version\n"
               "  --                   the rest are paths, even if they start with '-'\n\n"
               "exit status: 0 everything held; 1 an expectation failed, something was\n"
               "retained, or the guard allocator caught a bad access (a finding); 2 usage\n"
               "or parse error (nothing ran); 3 internal error; 130 interrupted.\n");
}

/* ---- running ---- */

static void fill_options(const cli_common *c, sc_options *o, FILE *dot)
{
    sc_options_default(o);
    o->gc = c->gc;
    o->sweep = c->sweep;
    if (c->compat) {
        o->default_sweep = FK_SWEEP_PERIODIC;
        o->sweep_every = 128;
    }
    o->max_bytes = c->max_bytes;
    o->max_statements = c->max_statements;
    o->max_objects = c->max_objects;
    o->verify = c->verify;
    o->repeat = c->repeat;
    o->dot = dot;
}

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

typedef struct worker {
    pid_t pid;
    size_t index;
    char json[64], dot[64];
} worker;

/* The worker's stderr goes to JSON.err, so that what a crashing worker
 * said (a guard finding, an assertion) ends up in its scenario's error. */
static void err_path(const worker *w, char *buf, size_t n)
{
    snprintf(buf, n, "%s.err", w->json);
}

/* Last line of the worker's stderr, or "" (msg has room for n bytes). */
static void worker_said(const worker *w, char *msg, size_t n)
{
    char path[80], buf[256];
    msg[0] = '\0';
    err_path(w, path, sizeof path);
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

/* A worker that the guard allocator stopped: a finding about the scenario
 * (exit 1 for the run), not a crash of fakegc. */
enum { CHILD_FINDING = 4 };
static const char FINDING_TAG[] = "fakegc: finding: ";

/* The guard's hook in a worker: "fakegc: finding: LINE\tWHAT" on stderr
 * (the worker's .err file), then exit CHILD_FINDING. Async-signal-safe. */
static void child_finding(const char *what)
{
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

/* The finding a worker recorded: its line and what the guard said. */
static int worker_finding(const worker *w, uint32_t *line, char *what, size_t n)
{
    char path[80], buf[700];
    int found = 0;
    err_path(w, path, sizeof path);
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

static void child_run(const cli_common *c, const sc_program *p, const worker *w)
{
    in_guard_set_finding_hook(child_finding);
    obj_set_dead_decref_hook(child_finding);
    /* A scenario that never ends (a hang caused by an injected
     * use-after-free, say) is ended by SIGALRM and reported as an error. */
    alarm(c->timeout);
    signal(SIGINT, SIG_DFL);
    char ep[80];
    err_path(w, ep, sizeof ep);
    if (!freopen(ep, "w", stderr))
        _exit(CLI_EXIT_INTERNAL);
    FILE *jf = fopen(w->json, "w");
    FILE *df = w->dot[0] ? fopen(w->dot, "w") : NULL;
    if (!jf)
        _exit(CLI_EXIT_INTERNAL);
    sc_options o;
    fill_options(c, &o, df);
    rp_scenario s;
    memset(&s, 0, sizeof s);
    sc_run(p, &o, &s);
    write_one(c, &s, jf);
    int bad = ferror(jf) != 0;
    bad |= fclose(jf) != 0;
    if (df)
        fclose(df);
    rp_scenario_clear(&s);
    _exit(bad ? CLI_EXIT_INTERNAL : CLI_EXIT_OK);
}

/* "[3/58] scenarios/memo/churn.scn" on stderr, rewritten in place: only on
 * a terminal and not with -q (cli.md). done == total clears the line. */
static void progress(const cli_common *c, size_t done, size_t total, const char *file)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    if (!tty || c->quiet)
        return;
    if (done >= total)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[K[%zu/%zu] %.200s", done + 1, total, file);
    fflush(stderr);
}

/* ---- streamed results and Ctrl-C ---- */

/* What has finished, kept ready for the SIGINT handler (which may only
 * write(2)): two buffers, the index of the complete one is published
 * last. */
static char g_sum[2][160];
static volatile sig_atomic_t g_sum_idx = -1;
static char g_tmp[4096];   /* --output's temporary, removed on SIGINT */
#define MAX_WORKERS 1024
static volatile pid_t g_workers[MAX_WORKERS];   /* running workers, ended on SIGINT */

static void on_sigint(int sig)
{
    (void)sig;
    for (int k = 0; k < MAX_WORKERS; k++)
        if (g_workers[k] > 0)
            kill(g_workers[k], SIGKILL);
    int i = g_sum_idx;
    static const char head[] = "\nfakegc run: interrupted\n";
    ssize_t rc = write(2, head, sizeof head - 1);
    if (i >= 0)
        rc = write(2, g_sum[i], strlen(g_sum[i]));
    if (g_tmp[0])
        unlink(g_tmp);
    (void)rc;
    _exit(130);
}

typedef struct streamer {
    const cli_common *c;
    FILE *f;               /* where the PASS/FAIL lines go, NULL: nowhere */
    rp_options ro;
    size_t done, total;
    uint32_t passed, failed, skipped;
} streamer;

/* Lines on stdout when the text report goes there (the report then leaves
 * them out), on stderr when it is a terminal and the report goes elsewhere. */
static void stream_init(streamer *st, const cli_common *c, size_t total)
{
    memset(st, 0, sizeof *st);
    st->c = c;
    st->total = total;
    int text_stdout = c->format == RP_TEXT && c->out == stdout;
    st->f = text_stdout ? stdout : isatty(2) ? stderr : NULL;
    st->ro.color = text_stdout ? c->color : cli_color_wanted(c->no_color, stderr);
    st->ro.quiet = c->quiet;
    snprintf(g_sum[0], sizeof g_sum[0], "0 of %zu finished\n", total);
    g_sum_idx = 0;
    if (c->outf.f && c->output)
        snprintf(g_tmp, sizeof g_tmp, "%s", c->outf.tmp);
    signal(SIGINT, on_sigint);
}

static void stream_done(streamer *st, const rp_scenario *s)
{
    st->done++;
    st->passed += s->status == RP_PASS;
    st->skipped += s->status == RP_SKIP;
    st->failed += s->status == RP_FAIL || s->status == RP_ERROR;
    if (st->f && !(st->c->quiet && (s->status == RP_PASS || s->status == RP_SKIP))) {
        if (isatty(2) && !st->c->quiet)
            fputs("\r\033[K", stderr);   /* the progress line gives way */
        rp_write_status_line(s, st->f, &st->ro);
        fflush(st->f);
    }
    int next = g_sum_idx == 0 ? 1 : 0;
    snprintf(g_sum[next], sizeof g_sum[next], "%zu of %zu finished: %u passed, %u failed%s\n",
             st->done, st->total, st->passed, st->failed,
             st->skipped ? ", some skipped" : "");
    g_sum_idx = next;
}

static int streamed_to_stdout(const cli_common *c)
{
    return c->format == RP_TEXT && c->out == stdout;
}

static void timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    if (arg)
        rp_timeline_add(arg, line, objects, bytes);
}

/* The chart's title and marks: status, failed lines, del/gc() lines. */
static void timeline_end(rp_timeline *t, const rp_scenario *s, const char *file)
{
    uint32_t lines[256];
    size_t n = 0;
    for (size_t k = 0; k < s->nfailures && n < 256; k++)
        if (s->failures[k].line)
            lines[n++] = s->failures[k].line;
    char *src = NULL;
    FILE *f = fopen(file, "r");
    if (f) {
        size_t cap = 1 << 20, len = 0;   /* the first MiB is plenty for marks */
        src = al_malloc(cap + 1, AL_K_REPORT, "timeline source");
        if (src) {
            len = fread(src, 1, cap, f);
            src[len] = '\0';
        }
        fclose(f);
        rp_timeline_end(t, (int)s->status, lines, n, src);
        al_free(src, src ? cap + 1 : 0, AL_K_REPORT);
        return;
    }
    rp_timeline_end(t, (int)s->status, lines, n, NULL);
}

static int write_timeline(const char *path, const rp_timeline *tl, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f || !tl) {
        cli_error("run", "--timeline: cannot write %s%s%s", path, f ? "" : ": ",
                  f ? " (out of memory)" : strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    int rc = rp_write_timeline_svg(f, tl, n);
    if (fclose(f) != 0 || rc != 0) {
        cli_error("run", "--timeline: error writing %s", path);
        return -1;
    }
    return 0;
}

static void collect_worker(const cli_common *c, worker *w, int status, sc_program *const *progs,
                           rp_scenario *res)
{
    rp_scenario *s = &res[w->index];
    const char *file = sc_program_file(progs[w->index]);
    char msg[512], said[300], fwhat[600];
    uint32_t fline = 0;
    worker_said(w, said, sizeof said);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(msg, sizeof msg, "worker timed out after %u s (--timeout)", c->timeout);
        set_error(s, file, msg);
    } else if (WIFSIGNALED(status)) {
        snprintf(msg, sizeof msg, "worker crashed: signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), said[0] ? ": " : "", said);
        set_error(s, file, msg);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
               worker_finding(w, &fline, fwhat, sizeof fwhat)) {
        /* CHILD_FINDING, or memcheck's --error-exitcode after it reported
         * the bad access itself */
        record_finding(s, file, fline, fwhat);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(msg, sizeof msg, "worker exited with status %d%s%s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, said[0] ? ": " : "", said);
        set_error(s, file, msg);
    } else {
        rp_run rr;
        memset(&rr, 0, sizeof rr);
        char err[256] = "";
        if (rp_read_json(w->json, &rr, err, sizeof err) != 0 || rr.n != 1) {
            snprintf(msg, sizeof msg, "cannot read the worker's report: %s",
                     err[0] ? err : "no scenario in it");
            if (rr.scenarios)
                rp_run_free_read(&rr);
            set_error(s, file, msg);
        } else {
            *s = rr.scenarios[0];
            memset(&rr.scenarios[0], 0, sizeof rr.scenarios[0]);
            rp_run_free_read(&rr);
        }
    }
    unlink(w->json);
    char ep[80];
    err_path(w, ep, sizeof ep);
    unlink(ep);
}

static int tmp_name(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(buf, n, "%s/fakegc-%s-XXXXXX", dir, what);
    int fd = mkstemp(buf);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
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

static int run_parallel(const cli_common *c, sc_program *const *progs, size_t n,
                        rp_scenario *res, FILE *dot, streamer *st)
{
    size_t nw = (size_t)c->jobs;
    worker *ws = al_malloc(nw * sizeof *ws, AL_K_SCENARIO, "cli workers");
    char (*dots)[64] = NULL;
    if (dot) {
        dots = al_malloc(n * sizeof *dots, AL_K_SCENARIO, "cli dots");
        if (dots)
            memset(dots, 0, n * sizeof *dots);
    }
    if (!ws || (dot && !dots)) {
        al_free(ws, nw * sizeof *ws, AL_K_SCENARIO);
        al_free(dots, n * sizeof *dots, AL_K_SCENARIO);
        cli_error("run", "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nw; i++)
        ws[i].pid = 0;
    size_t next = 0, active = 0, finished = 0;
    while (next < n || active > 0) {
        while (active < nw && next < n) {
            worker *w = NULL;
            for (size_t i = 0; i < nw; i++)
                if (ws[i].pid == 0) {
                    w = &ws[i];
                    break;
                }
            w->index = next;
            w->dot[0] = '\0';
            if (tmp_name(w->json, sizeof w->json, "json") < 0 ||
                (dots && tmp_name(w->dot, sizeof w->dot, "dot") < 0)) {
                set_error(&res[next], sc_program_file(progs[next]),
                          "cannot create a temporary file for the worker");
                next++;
                continue;
            }
            if (dots)
                memcpy(dots[next], w->dot, sizeof w->dot);
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                char msg[128];
                snprintf(msg, sizeof msg, "cannot start a worker: %s", strerror(errno));
                set_error(&res[next], sc_program_file(progs[next]), msg);
                unlink(w->json);
                next++;
                continue;
            }
            if (pid == 0)
                child_run(c, progs[next], w);
            w->pid = pid;
            if (w - ws < MAX_WORKERS)
                g_workers[w - ws] = pid;
            next++;
            active++;
        }
        if (active == 0)
            continue;
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (size_t i = 0; i < nw; i++)
            if (ws[i].pid == pid) {
                collect_worker(c, &ws[i], status, progs, res);
                stream_done(st, &res[ws[i].index]);
                if (i < MAX_WORKERS)
                    g_workers[i] = 0;
                ws[i].pid = 0;
                active--;
                finished++;
                progress(c, finished, n, finished < n ? sc_program_file(progs[ws[i].index])
                                                      : "");
                break;
            }
    }
    if (dots) {
        for (size_t i = 0; i < n; i++)
            if (dots[i][0]) {
                append_file(dot, dots[i]);
                unlink(dots[i]);
            }
        al_free(dots, n * sizeof *dots, AL_K_SCENARIO);
    }
    al_free(ws, nw * sizeof *ws, AL_K_SCENARIO);
    return 0;
}

/* The injected bugs as a list (for the report). */
typedef struct inject_list {
    const char *v[32];
    char buf[512];
    size_t n;
} inject_list;

static void inject_split(const cli_common *c, inject_list *l)
{
    l->n = 0;
    if (!c->inject || !*c->inject)
        return;
    snprintf(l->buf, sizeof l->buf, "%s", c->inject);
    char *save = NULL;
    for (char *tok = strtok_r(l->buf, ",", &save); tok && l->n < 32;
         tok = strtok_r(NULL, ",", &save))
        l->v[l->n++] = tok;
}

static void run_init(rp_run *run, const cli_common *c, const inject_list *inj,
                     rp_scenario *res, size_t n)
{
    memset(run, 0, sizeof *run);
    run->tool = "fakegc";
    run->version = FAKEGC_VERSION;
    run->allocator = c->allocator;
    run->compat = c->compat;
    run->inject = (const char **)inj->v;
    run->ninject = inj->n;
    run->scenarios = res;
    run->n = n;
    rp_run_count(run);
}

/* Parse every file; the diagnostics go to stderr. When some file does not
 * parse, the report still gets written, complete: that file with status
 * error and its diagnostics, the others skipped (not run). Returns the
 * number of files that did not parse, or -1 out of memory. */
static int parse_all(cli_common *c, const cli_files *files, sc_program **progs, size_t *nprogs,
                     const inject_list *inj)
{
    int bad = 0, dcolor = cli_color_wanted(c->no_color, stderr);
    char **diag = al_malloc((files->n ? files->n : 1) * sizeof *diag, AL_K_SCENARIO, "diags");
    if (!diag)
        return -1;
    for (size_t i = 0; i < files->n; i++) {
        int nerr = 0;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        sc_program *p = sc_parse_file(files->v[i], m ? m : stderr, m ? 0 : dcolor, &nerr);
        if (m)
            fclose(m);
        diag[i] = NULL;
        if (p) {
            progs[(*nprogs)++] = p;
        } else {
            bad++;
            if (dcolor && text) {   /* again, in colour, for the terminal */
                sc_program *q = sc_parse_file(files->v[i], stderr, 1, &nerr);
                sc_program_free(q);
            } else if (text) {
                fputs(text, stderr);
            }
            diag[i] = text;
            text = NULL;
        }
        free(text);
    }
    if (bad) {
        char stopped[128];
        snprintf(stopped, sizeof stopped, "%d file%s did not parse; nothing was run", bad,
                 bad == 1 ? "" : "s");
        fprintf(stderr, "fakegc run: %s\n", stopped);
        rp_scenario *res = al_malloc(files->n * sizeof *res, AL_K_REPORT, "cli results");
        if (res) {
            memset(res, 0, files->n * sizeof *res);
            for (size_t i = 0; i < files->n; i++) {
                rp_scenario_set_file(&res[i], files->v[i]);
                res[i].status = diag[i] ? RP_ERROR : RP_SKIP;
                if (diag[i]) {
                    size_t l = strlen(diag[i]);
                    while (l && diag[i][l - 1] == '\n')
                        diag[i][--l] = '\0';
                }
                rp_scenario_set_error(&res[i], diag[i] ? diag[i] : "not run: " "another file did not parse");
            }
            rp_run run;
            run_init(&run, c, inj, res, files->n);
            run.stopped = stopped;
            /* text on stdout would only repeat the diagnostics on stderr */
            cli_write_reports(c, "run", &run, !(c->format == RP_TEXT && !c->output));
            for (size_t i = 0; i < files->n; i++)
                rp_scenario_clear(&res[i]);
            al_free(res, files->n * sizeof *res, AL_K_REPORT);
        }
        er_clear();
    }
    for (size_t i = 0; i < files->n; i++)
        free(diag[i]);
    al_free(diag, (files->n ? files->n : 1) * sizeof *diag, AL_K_SCENARIO);
    return bad;
}

int cli_run(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    /* operands are gathered in place at the front of argv (argv[1..]) */
    char **paths = argv + 1;
    int npaths = 0, only_paths = 0;
    static char default_path[] = "scenarios";
    char *default_paths[] = {default_path};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_paths && a[0] == '-' && a[1]) {
            if (strcmp(a, "--") == 0) {
                only_paths = 1;
                continue;
            }
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                help(stdout);
                return CLI_EXIT_OK;
            }
            if (strcmp(a, "--version") == 0) {
                printf("fakegc %s\n", FAKEGC_VERSION);
                return CLI_EXIT_OK;
            }
            int r = cli_common_option(&c, RUN_MASK, "run", argc, argv, &i);
            if (r < 0) {
                return CLI_EXIT_USAGE;
            }
            if (r == 0) {
                cli_unknown_option("run", a, help);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        paths[npaths++] = argv[i];
    }
    if (npaths == 0) {
        paths = default_paths;
        npaths = 1;
    }

    if (cli_env_setup(&c, "run") < 0) {
        return CLI_EXIT_USAGE;
    }
    obj_set_memcheck_findings(1);
    int exit_code = CLI_EXIT_OK;
    cli_files files = {0};
    sc_program **progs = NULL;
    rp_scenario *res = NULL;
    size_t nprogs = 0;
    FILE *dot = NULL;
    inject_list inj;
    inject_split(&c, &inj);

    {
        int rc = cli_collect_scenarios("run", paths, npaths, &files);
        if (rc < 0) {
            exit_code = rc == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL;
            cli_output_abort(&c);
            goto out;
        }
    }

    progs = al_malloc((files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO, "cli programs");
    if (!progs) {
        cli_error("run", "out of memory");
        exit_code = CLI_EXIT_INTERNAL;
        goto out;
    }
    {
        int bad = parse_all(&c, &files, progs, &nprogs, &inj);
        if (bad != 0) {
            exit_code = bad < 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_USAGE;
            goto out;
        }
    }
    if (c.dot) {
        dot = fopen(c.dot, "w");
        if (!dot) {
            cli_error("run", "--dot: cannot write %s: %s", c.dot, strerror(errno));
            exit_code = CLI_EXIT_USAGE;
            cli_output_abort(&c);
            goto out;
        }
    }
    res = al_malloc((nprogs ? nprogs : 1) * sizeof *res, AL_K_REPORT, "cli results");
    if (!res) {
        cli_error("run", "out of memory");
        exit_code = CLI_EXIT_INTERNAL;
        goto out;
    }
    memset(res, 0, (nprogs ? nprogs : 1) * sizeof *res);
    if (c.timeline && c.jobs > 1) {
        fprintf(stderr, "fakegc run: --timeline samples this process; --jobs %d ignored\n",
                c.jobs);
        c.jobs = 1;
    }
    streamer st;
    stream_init(&st, &c, nprogs);
    /* workers isolate crashes, even for one file; with the guard allocator
     * always, so that what it catches is that scenario's finding */
    int guarded = (strstr(c.allocator, "guard") != NULL ||
                   (c.inject && strstr(c.inject, "early-free"))) && !c.timeline;
    if (c.jobs > 1 || guarded) {
        if (run_parallel(&c, progs, nprogs, res, dot, &st) < 0) {
            exit_code = CLI_EXIT_INTERNAL;
            goto out;
        }
    } else {
        sc_options o;
        fill_options(&c, &o, dot);
        rp_timeline *tl = NULL;
        if (c.timeline) {
            tl = al_malloc((nprogs ? nprogs : 1) * sizeof *tl, AL_K_REPORT, "cli timeline");
            if (tl)
                memset(tl, 0, (nprogs ? nprogs : 1) * sizeof *tl);
            o.on_statement = timeline_hook;
        }
        for (size_t i = 0; i < nprogs; i++) {
            progress(&c, i, nprogs, sc_program_file(progs[i]));
            if (tl && rp_timeline_begin(&tl[i], sc_program_file(progs[i])) == 0)
                o.on_statement_arg = &tl[i];
            else
                o.on_statement_arg = NULL;
            sc_run(progs[i], &o, &res[i]);
            if (tl && o.on_statement_arg)
                timeline_end(&tl[i], &res[i], sc_program_file(progs[i]));
            stream_done(&st, &res[i]);
        }
        progress(&c, nprogs, nprogs, "");
        if (c.timeline && write_timeline(c.timeline, tl, tl ? nprogs : 0) < 0 &&
            exit_code == CLI_EXIT_OK)
            exit_code = CLI_EXIT_USAGE;
        for (size_t i = 0; tl && i < nprogs; i++)
            rp_timeline_clear(&tl[i]);
        al_free(tl, tl ? (nprogs ? nprogs : 1) * sizeof *tl : 0, AL_K_REPORT);
    }
    signal(SIGINT, SIG_DFL);

    {
        rp_run run;
        run_init(&run, &c, &inj, res, nprogs);
        int rc;
        if (streamed_to_stdout(&c)) {   /* the PASS/FAIL lines are out already */
            rp_options ro = {c.color, c.verbose, c.quiet};
            rc = rp_write_text_tail(&run, stdout, &ro) != 0 || fflush(stdout) != 0 ? -1 : 0;
            if (rc)
                cli_error("run", "cannot write the report");
            if (cli_write_reports(&c, "run", &run, 0) != 0)
                rc = -1;
        } else {
            rc = cli_write_reports(&c, "run", &run, 1);
        }
        if (rc != 0)
            exit_code = CLI_EXIT_INTERNAL;
        int any_error = 0, any_fail = 0;
        for (size_t i = 0; i < nprogs; i++) {
            any_error |= res[i].status == RP_ERROR;
            any_fail |= res[i].status == RP_FAIL;
        }
        if (exit_code == CLI_EXIT_OK)
            exit_code = any_error ? CLI_EXIT_INTERNAL : any_fail ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }

out:
    if (dot)
        fclose(dot);
    if (res) {
        for (size_t i = 0; i < nprogs; i++)
            rp_scenario_clear(&res[i]);
        al_free(res, (nprogs ? nprogs : 1) * sizeof *res, AL_K_REPORT);
    }
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, (files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO);
    cli_files_free(&files);
    if (cli_env_teardown(&c) < 0 && exit_code == CLI_EXIT_OK)
        exit_code = CLI_EXIT_INTERNAL;
    g_tmp[0] = '\0';
    return exit_code;
}
