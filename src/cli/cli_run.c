/* cli_run.c - `fakegc run [PATH...]`: parse every scenario first (any
 * parse error: exit 2, nothing runs), then run them in sorted order, in this
 * process or in --jobs worker processes, and write one report. */
#include "cli/cli.h"
#include "cli/cli_shard.h"
#include "cli/cli_pool.h"

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
#include "core/wt.h"
#include "fake/fk.h"
#include "instrument/in_guard.h"
#include "report/rp_html.h"
#include "report/rp_timeline.h"
#include "scenario/sc.h"

#define RUN_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                  CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_DOT | CLI_O_TIMELINE | CLI_O_JOBS |  \
                  CLI_O_REPEAT |                                                        \
                  CLI_O_VERIFY | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_ALSO | CLI_O_HTML)

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
    fprintf(f, "  --order KNOB[,KNOB]  the orderings `fakegc stress --order` explores:\n"
               "                       reverse (weak callbacks newest first), defer\n"
               "                       (callbacks at the next statement), reuse (addresses\n"
               "                       reused at once: guard:q=0), weakrefs-late,\n"
               "                       weakrefs-first, all, none\n");
    fprintf(f, "  --shard K/N          only the files i (of the sorted list) with i mod N\n"
               "                       == K; the report says which shard it is, and\n"
               "                       `fakegc merge` joins the N reports\n");
    fprintf(f, "  --help, --version    this text; the version\n"
               "  --                   the rest are paths, even if they start with '-'\n\n"
               "exit status: 0 everything held; 1 an expectation failed, something was\n"
               "retained, or the guard allocator caught a bad access (a finding); 2 usage\n"
               "or parse error (nothing ran); 3 internal error; 130 interrupted.\n");
}

void cli_run_help(FILE *f) { help(f); }

/* ---- running ---- */

void cli_run_options(const cli_common *c, sc_options *o, FILE *dot)
{
    sc_options_default(o);
    o->gc = c->gc;
    o->sweep = c->sweep;
    o->design = c->design;      /* its row gives the default policy */
    o->max_bytes = c->max_bytes;
    o->max_statements = c->max_statements;
    o->max_objects = c->max_objects;
    o->examples = c->examples;
    o->verify = c->verify;
    o->repeat = c->repeat;
    o->dot = dot;
    o->objects = c->objects_f;
    o->stop = cli_interrupt_flag();
}

/* ---- streamed results and Ctrl-C ---- */

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
}

static void stream_done_cb(void *arg, const rp_scenario *s)
{
    stream_done(arg, s);
}

static int streamed_to_stdout(const cli_common *c)
{
    return c->format == RP_TEXT && c->out == stdout;
}

void cli_timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes)
{
    if (arg)
        rp_timeline_add_memo(arg, line, objects, bytes, wt_count_all());
}

enum { SOURCE_CAP = 1 << 20 };   /* the first MiB is plenty for marks */

/* The scenario's text (SOURCE_CAP + 1 bytes, AL_K_REPORT), or NULL. */
static char *read_source(const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return NULL;
    char *src = al_malloc(SOURCE_CAP + 1, AL_K_REPORT, "timeline source");
    if (src)
        src[fread(src, 1, SOURCE_CAP, f)] = '\0';
    fclose(f);
    return src;
}

/* Before the run: the marks, so that their statements are kept as events. */
static void timeline_source(rp_timeline *t, const char *file)
{
    char *src = read_source(file);
    rp_timeline_source(t, src);
    al_free(src, src ? SOURCE_CAP + 1 : 0, AL_K_REPORT);
}

/* The chart's title and marks: status, failed lines, del/gc() lines. */
void cli_timeline_end(rp_timeline *t, const rp_scenario *s, const char *file)
{
    uint32_t lines[256];
    size_t n = 0;
    for (size_t k = 0; k < s->nfailures && n < 256; k++)
        if (s->failures[k].line)
            lines[n++] = s->failures[k].line;
    char *src = read_source(file);
    rp_timeline_end(t, (int)s->status, lines, n, src);
    al_free(src, src ? SOURCE_CAP + 1 : 0, AL_K_REPORT);
}

static void timeline_free(rp_timeline *tl, size_t n)
{
    for (size_t i = 0; tl && i < n; i++)
        rp_timeline_clear(&tl[i]);
    al_free(tl, tl ? (n ? n : 1) * sizeof *tl : 0, AL_K_REPORT);
}

static int write_timeline(const char *path, FILE *f, const rp_timeline *tl, size_t n)
{
    if (!tl) {
        cli_error("run", "--timeline: cannot write %s: out of memory", path);
        return -1;
    }
    if (rp_write_timeline_svg(f, tl, n) != 0 || ferror(f)) {
        cli_error("run", "--timeline: cannot write %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

/* After an interruption under --jobs: the records that finished (a worker's
 * record always names its file), moved to the front in their order, with
 * their timelines (tl may be NULL); the count. The rest are empty. */
static size_t keep_finished(rp_scenario *res, rp_timeline *tl, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].file) {
            if (k != i) {
                res[k] = res[i];
                memset(&res[i], 0, sizeof res[i]);
                if (tl) {
                    rp_timeline_clear(&tl[k]);
                    tl[k] = tl[i];
                    memset(&tl[i], 0, sizeof tl[i]);
                }
            }
            k++;
        }
    return k;
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
            if (cli_write_reports(c, "run", &run, !(c->format == RP_TEXT && !c->output)) == 0)
                cli_outputs_commit(c, "run");   /* the report says why nothing ran */
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
    cli_shard shard = CLI_SHARD_NONE;
    int reverse = 0, defer = 0, reuse = 0, late = 0;
    char repro[1024];   /* before the operands are gathered over argv */
    cli_repro_command(repro, sizeof repro, "run", argc, argv, NULL, 1, NULL);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_paths && a[0] == '-' && a[1]) {
            int sr = cli_shard_option("run", argc, argv, &i, &shard);
            if (sr < 0)
                return CLI_EXIT_USAGE;
            if (sr > 0)
                continue;
            if (strcmp(a, "--") == 0) {
                only_paths = 1;
                continue;
            }
            const char *v = NULL;
            int orr = cli_opt_value("run", "--order", argc, argv, &i, &v);
            if (orr < 0 || (orr > 0 &&
                            cli_parse_order("run", v, &reverse, &defer, &reuse, &late) < 0))
                return CLI_EXIT_USAGE;
            if (orr > 0)
                continue;
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

    char spec[160];
    if (reuse && !strstr(c.allocator, "guard")) {   /* as stress --order reuse */
        snprintf(spec, sizeof spec, "guard:q=0/%s", c.allocator);
        c.allocator = spec;
    }
    if (cli_env_setup(&c, "run") < 0) {
        return CLI_EXIT_USAGE;
    }
    obj_config saved_order = obj_get_config(), order = saved_order;
    order.callbacks_reverse = reverse;
    order.defer_callbacks = defer;
    order.weak_clear_late = late;
    obj_configure(&order);   /* workers fork after this and inherit it */
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
        if (cli_outputs_not_inputs(&c, "run", files.v, files.n) < 0) {
            exit_code = CLI_EXIT_USAGE;
            goto out;
        }
        cli_shard_files(&shard, &files);
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
    dot = c.dot_f;
    res = al_malloc((nprogs ? nprogs : 1) * sizeof *res, AL_K_REPORT, "cli results");
    if (!res) {
        cli_error("run", "out of memory");
        exit_code = CLI_EXIT_INTERNAL;
        goto out;
    }
    memset(res, 0, (nprogs ? nprogs : 1) * sizeof *res);
    /* one series per scenario, sampled where it runs (a worker hands its
     * scenario's series back with the record) */
    rp_timeline *tl = NULL;
    if (c.timeline || c.html) {
        tl = al_malloc((nprogs ? nprogs : 1) * sizeof *tl, AL_K_REPORT, "cli timeline");
        if (tl)
            memset(tl, 0, (nprogs ? nprogs : 1) * sizeof *tl);
    }
    cli_interrupt_install();
    size_t ran = nprogs;   /* scenarios with a complete record */
    streamer st;
    stream_init(&st, &c, nprogs);
    /* workers isolate crashes, even for one file; with the guard allocator
     * always, so that what it catches is that scenario's finding */
    int guarded = strstr(c.allocator, "guard") != NULL ||
                  (c.inject && strstr(c.inject, "early-free"));
    if (c.jobs > 1 || guarded) {
        if (cli_pool_run(&c, progs, nprogs, res, dot, tl, stream_done_cb, &st) < 0) {
            exit_code = CLI_EXIT_INTERNAL;
            timeline_free(tl, nprogs);
            goto out;
        }
        if (cli_interrupted())
            ran = keep_finished(res, tl, nprogs);
    } else {
        sc_options o;
        cli_run_options(&c, &o, dot);
        o.dom_tree = c.html != NULL;
        if (tl)
            o.on_statement = cli_timeline_hook;
        for (size_t i = 0; i < nprogs; i++) {
            if (cli_interrupted()) {
                ran = i;
                break;
            }
            cli_progress(&c, i, nprogs, sc_program_file(progs[i]));
            if (tl && rp_timeline_begin(&tl[i], sc_program_file(progs[i])) == 0) {
                timeline_source(&tl[i], sc_program_file(progs[i]));
                o.on_statement_arg = &tl[i];
            }
            else
                o.on_statement_arg = NULL;
            o.dot_cluster = (uint32_t)i;
            sc_run(progs[i], &o, &res[i]);
            if (cli_interrupted()) {   /* stopped in hand: not a finished record */
                rp_scenario_clear(&res[i]);
                ran = i;
                break;
            }
            if (tl && o.on_statement_arg)
                cli_timeline_end(&tl[i], &res[i], sc_program_file(progs[i]));
            stream_done(&st, &res[i]);
        }
        cli_progress(&c, nprogs, nprogs, "");
    }
    if (c.timeline && write_timeline(c.timeline, c.timeline_f, tl, tl ? ran : 0) < 0 &&
        exit_code == CLI_EXIT_OK)
        exit_code = CLI_EXIT_USAGE;

    {
        rp_run run;
        run_init(&run, &c, &inj, res, ran);
        run.interrupted = cli_interrupt_name();
        run.planned = nprogs;
        run.shard_k = shard.k;
        run.shard_n = shard.n;
        run.shard_total = shard.total;
        run.host = shard.n ? cli_hostname() : NULL;
        int rc;
        if (streamed_to_stdout(&c)) {   /* the PASS/FAIL lines are out already */
            rp_options ro = {c.color, c.verbose, c.quiet};
            rc = rp_write_text_tail(&run, stdout, &ro) != 0 || fflush(stdout) != 0 ? -1 : 0;
            if (rc)
                cli_error("run", "cannot write the report to standard output: %s",
                          strerror(errno ? errno : EIO));
            if (cli_write_reports(&c, "run", &run, 0) != 0)
                rc = -1;
        } else {
            errno = 0;
            rc = cli_write_reports(&c, "run", &run, 1);
        }
        if (rc == 0 && c.html_f && rp_write_html(c.html_f, &run, tl, tl ? ran : 0) != 0) {
            cli_error("run", "--html: cannot write %s: %s", c.html,
                      er_kind_get() == ER_OOM ? "out of memory" : strerror(errno ? errno : EIO));
            rc = -1;
        }
        timeline_free(tl, nprogs);
        tl = NULL;
        if (rc == 0 && cli_outputs_commit(&c, "run") < 0)
            rc = -1;
        if (rc != 0)
            exit_code = CLI_EXIT_USAGE;   /* a write error: path and errno printed */
        int any_error = 0, any_fail = 0;
        for (size_t i = 0; i < nprogs; i++) {
            any_error |= res[i].status == RP_ERROR;
            any_fail |= res[i].status == RP_FAIL;
        }
        if (exit_code == CLI_EXIT_OK)
            exit_code = any_error ? CLI_EXIT_INTERNAL : any_fail ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (run.interrupted) {
            fprintf(stderr, "fakegc run: interrupted by %s: the report holds the scenarios "
                    "that finished\n%zu of %zu finished: %u passed, %u failed\n",
                    run.interrupted, ran, nprogs, run.passed, run.failed);
            if (exit_code != CLI_EXIT_USAGE)
                exit_code = cli_interrupt_exit();
        }
        for (size_t i = 0; shard.n && i < ran; i++)
            if (res[i].status != RP_PASS)
                fprintf(stderr, "fakegc run: shard %u/%u: %s %s; in one process: %s %s\n",
                        shard.k, shard.n, rp_status_name(res[i].status), res[i].file, repro,
                        res[i].file);
    }

out:
    if (res) {
        for (size_t i = 0; i < nprogs; i++)
            rp_scenario_clear(&res[i]);
        al_free(res, (nprogs ? nprogs : 1) * sizeof *res, AL_K_REPORT);
    }
    cli_pool_release();   /* after the records that point into them */
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, (files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO);
    cli_files_free(&files);
    obj_configure(&saved_order);
    cli_env_teardown(&c);
    return exit_code;
}
