/* cli_run.c - `fakegc run [PATH...]`: parse every scenario first (any
 * parse error: exit 2, nothing runs), then run them in sorted order, in this
 * process or in --jobs worker processes, and write one report. */
#include "cli/cli.h"
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

void cli_run_options(const cli_common *c, sc_options *o, FILE *dot)
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
 * record always names its file), moved to the front in their order; the
 * count. The rest are empty. */
static size_t keep_finished(rp_scenario *res, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].file) {
            if (k != i) {
                res[k] = res[i];
                memset(&res[i], 0, sizeof res[i]);
            }
            k++;
        }
    return k;
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
        if (cli_outputs_not_inputs(&c, "run", files.v, files.n) < 0) {
            exit_code = CLI_EXIT_USAGE;
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
    dot = c.dot_f;
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
    cli_interrupt_install();
    size_t ran = nprogs;   /* scenarios with a complete record */
    if (c.jobs > 1) {   /* workers isolate crashes, even for one file */
        if (cli_pool_run(&c, progs, nprogs, res, dot) < 0) {
            exit_code = CLI_EXIT_INTERNAL;
            goto out;
        }
        if (cli_interrupted())
            ran = keep_finished(res, nprogs);
    } else {
        sc_options o;
        cli_run_options(&c, &o, dot);
        rp_timeline *tl = NULL;
        if (c.timeline) {
            tl = al_malloc((nprogs ? nprogs : 1) * sizeof *tl, AL_K_REPORT, "cli timeline");
            if (tl)
                memset(tl, 0, (nprogs ? nprogs : 1) * sizeof *tl);
            o.on_statement = timeline_hook;
        }
        for (size_t i = 0; i < nprogs; i++) {
            if (cli_interrupted()) {
                ran = i;
                break;
            }
            progress(&c, i, nprogs, sc_program_file(progs[i]));
            if (tl && rp_timeline_begin(&tl[i], sc_program_file(progs[i])) == 0)
                o.on_statement_arg = &tl[i];
            else
                o.on_statement_arg = NULL;
            sc_run(progs[i], &o, &res[i]);
        }
        progress(&c, nprogs, nprogs, "");
        if (c.timeline && write_timeline(c.timeline, c.timeline_f, tl, tl ? ran : 0) < 0 &&
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
        run.n = ran;
        run.interrupted = cli_interrupt_name();
        run.planned = nprogs;
        rp_run_count(&run);
        rp_options ro = {c.color, c.verbose, c.quiet};
        errno = 0;
        if (rp_write(&run, c.format, c.out, &ro) != 0 || fflush(c.out) != 0) {
            cli_error("run", "cannot write the report to %s: %s",
                      c.output ? c.output : "standard output", strerror(errno ? errno : EIO));
            exit_code = CLI_EXIT_USAGE;
        } else if (cli_outputs_commit(&c, "run") < 0) {
            exit_code = CLI_EXIT_USAGE;
        }
        int any_error = 0, any_fail = 0;
        for (size_t i = 0; i < nprogs; i++) {
            any_error |= res[i].status == RP_ERROR;
            any_fail |= res[i].status == RP_FAIL;
        }
        if (exit_code == CLI_EXIT_OK)
            exit_code = any_error ? CLI_EXIT_INTERNAL : any_fail ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (run.interrupted) {
            fprintf(stderr, "fakegc run: interrupted by %s: the report holds the %zu of %zu "
                    "scenarios that finished\n", run.interrupted, ran, nprogs);
            if (exit_code != CLI_EXIT_USAGE)
                exit_code = cli_interrupt_exit();
        }
    }

out:
    if (res) {
        for (size_t i = 0; i < nprogs; i++)
            rp_scenario_clear(&res[i]);
        al_free(res, (nprogs ? nprogs : 1) * sizeof *res, AL_K_REPORT);
    }
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, (files.n ? files.n : 1) * sizeof *progs, AL_K_SCENARIO);
    cli_files_free(&files);
    cli_env_teardown(&c);
    return exit_code;
}
