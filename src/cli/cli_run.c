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
#include "fake/fk.h"
#include "report/rp_timeline.h"
#include "scenario/sc.h"

#define RUN_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                  CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_JOBS |  \
                  CLI_O_REPEAT |                                                        \
                  CLI_O_VERIFY | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE)

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc run [OPTIONS] [PATH...]\n\n"
            "Run scenario files, or every *.scn under the given folders (default\n"
            "scenarios/), in sorted order. Every file is parsed before anything runs:\n"
            "a file that does not parse is reported as FILE:LINE:COL: error: ... and\n"
            "the run exits 2.\n"
            "When walking folders, a sub-folder named errors/ (scenarios/errors/) is\n"
            "skipped: its scripts are meant to be rejected by the parser. Name such a\n"
            "file (or the folder itself) to run it.\n\noptions:\n");
    cli_common_help(f, RUN_MASK);
    fprintf(f, "  --help, --version    this text; the version\n\n"
               "exit status: 0 everything held; 1 an expectation failed or something was\n"
               "retained; 2 usage or parse error (nothing ran); 3 internal error.\n");
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
    o->examples = c->examples;
    o->verify = c->verify;
    o->repeat = c->repeat;
    o->dot = dot;
}

/* The string pools of workers' reports read back: the scenarios moved out
 * of them point into them (types, sites) until the report is written. */
static void **kept_pools;
static size_t nkept, kept_cap;

static int keep_pool(void *p)
{
    if (nkept == kept_cap) {
        size_t nc = kept_cap ? kept_cap * 2 : 16;
        void **np = al_realloc(kept_pools, kept_cap * sizeof *np, nc * sizeof *np,
                               AL_K_REPORT, "cli pools");
        if (!np)
            return -1;
        kept_pools = np;
        kept_cap = nc;
    }
    kept_pools[nkept++] = p;
    return 0;
}

static void free_kept_pools(void)
{
    for (size_t i = 0; i < nkept; i++)
        rp_read_pool_free(kept_pools[i]);
    if (kept_pools)
        al_free(kept_pools, kept_cap * sizeof *kept_pools, AL_K_REPORT);
    kept_pools = NULL;
    nkept = kept_cap = 0;
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

static void child_run(const cli_common *c, const sc_program *p, const worker *w)
{
    /* A scenario that never ends (a hang caused by an injected
     * use-after-free, say) is ended by SIGALRM and reported as an error. */
    alarm(c->timeout);
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

static void timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    if (arg)
        rp_timeline_add(arg, line, objects, bytes);
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
    char msg[512], said[300];
    worker_said(w, said, sizeof said);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(msg, sizeof msg, "worker timed out after %u s (--timeout)", c->timeout);
        set_error(s, file, msg);
    } else if (WIFSIGNALED(status)) {
        snprintf(msg, sizeof msg, "worker crashed: signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), said[0] ? ": " : "", said);
        set_error(s, file, msg);
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
                        rp_scenario *res, FILE *dot)
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
                cli_error("run", "unknown option '%s' (fakegc run --help)", a);
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
    int exit_code = CLI_EXIT_OK;
    cli_files files = {0};
    sc_program **progs = NULL;
    rp_scenario *res = NULL;
    size_t nprogs = 0;
    FILE *dot = NULL;

    {
        int rc = cli_collect_scenarios("run", paths, npaths, &files);
        if (rc < 0) {
            exit_code = rc == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL;
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
        int bad = 0, dcolor = cli_color_wanted(c.no_color, stderr);
        for (size_t i = 0; i < files.n; i++) {
            int nerr = 0;
            sc_program *p = sc_parse_file(files.v[i], stderr, dcolor, &nerr);
            if (!p) {
                bad++;
                continue;
            }
            progs[nprogs++] = p;
        }
        if (bad) {
            fprintf(stderr, "fakegc run: %d file%s did not parse; nothing was run\n", bad,
                    bad == 1 ? "" : "s");
            exit_code = CLI_EXIT_USAGE;
            goto out;
        }
    }
    if (c.dot) {
        dot = fopen(c.dot, "w");
        if (!dot) {
            cli_error("run", "--dot: cannot write %s: %s", c.dot, strerror(errno));
            exit_code = CLI_EXIT_USAGE;
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
    if (c.jobs > 1) {   /* workers isolate crashes, even for one file */
        if (run_parallel(&c, progs, nprogs, res, dot) < 0) {
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
        }
        progress(&c, nprogs, nprogs, "");
        if (c.timeline && write_timeline(c.timeline, tl, tl ? nprogs : 0) < 0 &&
            exit_code == CLI_EXIT_OK)
            exit_code = CLI_EXIT_USAGE;
        for (size_t i = 0; tl && i < nprogs; i++)
            rp_timeline_clear(&tl[i]);
        al_free(tl, tl ? (nprogs ? nprogs : 1) * sizeof *tl : 0, AL_K_REPORT);
    }

    {
        const char *inject[32];
        char injbuf[512];
        size_t ninj = 0;
        if (c.inject && *c.inject) {
            snprintf(injbuf, sizeof injbuf, "%s", c.inject);
            for (char *tok = strtok(injbuf, ","); tok && ninj < 32; tok = strtok(NULL, ","))
                inject[ninj++] = tok;
        }
        rp_run run;
        memset(&run, 0, sizeof run);
        run.tool = "fakegc";
        run.version = FAKEGC_VERSION;
        run.allocator = c.allocator;
        run.compat = c.compat;
        run.inject = inject;
        run.ninject = ninj;
        run.scenarios = res;
        run.n = nprogs;
        rp_run_count(&run);
        rp_options ro = {c.color, c.verbose, c.quiet};
        if (rp_write(&run, c.format, c.out, &ro) != 0 || fflush(c.out) != 0) {
            cli_error("run", "cannot write the report");
            exit_code = CLI_EXIT_INTERNAL;
        }
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
    free_kept_pools();
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, (files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO);
    cli_files_free(&files);
    cli_env_teardown(&c);
    return exit_code;
}
