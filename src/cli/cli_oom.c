/* cli_oom.c - `fakegc oom [PATH...]`: SQLite's out-of-memory loop over
 * every scenario (src/stress/st_oom.c), each scenario's loop in a forked
 * child so a crash is that scenario's finding. */
#include "cli/cli.h"
#include "cli/cli_shard.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/er.h"
#include "fake/fk.h"
#include "stress/st_setup.h"

typedef struct oom_args {
    cli_common c;
    int transient_only, persistent_only, every;
    uint64_t max_fail;
    vl_shard shard;
} oom_args;

static const op_opt rows[] = {
    OP_FLAG("--transient-only", 0, oom_args, transient_only, "only transient failures"),
    OP_FLAG("--persistent-only", 0, oom_args, persistent_only, "only persistent failures"),
    OP_UINT("--max-points", 0, "N", oom_args, max_fail, 1, UINT64_MAX,
            "at most N failure points per mode and scenario\n(--max-fail N: the same)"),
    OP_ALIAS("--max-fail", "--max-points"),
    OP_FLAG("--every-point", 0, oom_args, every,
            "fail the 1st, 2nd, 3rd ... allocation until a run has\n"
            "no failure (the quadratic loop, for comparison)"),
    CLI_SHARD_ROW(oom_args, shard, "only the files i (of the sorted list) with i mod N == K"),
    OP_END};

/* The tail, its example's format word from rp_formats (cli_oom_help_make). */
static char oom_tail[512];

void cli_oom_help_make(void)
{
    const rp_format_row *j = &rp_formats[RP_JSON];
    snprintf(oom_tail, sizeof oom_tail,
             "Exit status:\n  0 every run ended cleanly; 1 a leak, an unclean end, a finding\n"
             "  or a crash; 2 usage or parse error; 3 internal error.\n\n"
             "Examples:\n"
             "  fakegc oom scenarios/memo  every allocation of each scenario fails in turn\n"
             "  fakegc oom --format %s --output oom.%s scenarios  for scripts",
             j->name, j->name);
}

const op_cmd cli_oom_cmd = {
    "oom", "[OPTIONS] [PATH...]",
    "For each scenario (files, or every *.scn under folders; default scenarios/,\n"
    "errors/ folders skipped): fail the first allocation of each allocation\n"
    "context (C site, kind, statement; a statement's executions past the 3rd\n"
    "folded into one), once transiently (that allocation only) and once\n"
    "persistently (it and every later one). Every run must pass or stop with a\n"
    "clean OutOfMemory at a statement, retain nothing, and leave no byte and no\n"
    "object behind; each scenario's loop runs in a child process, so a crash is\n"
    "reported with its failure point. A bad access (caught by the guard\n"
    "allocator, or a decref of a dead object) is a finding at its statement and\n"
    "ends that scenario's loop.",
    rows,
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_JSON |
        CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE | CLI_O_SELECT,
    oom_tail, NULL, "fail each allocation in turn; every run must end cleanly", 0};

/* The document's head: who wrote it, the environment, the shard. */
static void doc_head(const oom_args *a, st_doc_head *h)
{
    *h = (st_doc_head){FAKEGC_VERSION, cli_version_commit(), a->c.allocator, a->c.inject,
                       a->c.compat, cli_hostname(), a->shard.k, a->shard.n, a->shard.total};
}

/* Parse every file into progs; a file that does not parse stops the run
 * with a complete report saying so. 0, or the exit code (printed). */
static int parse_all(oom_args *a, st_oom_doc *d, const sc_files *fl, sc_program **progs,
                     size_t *nprogs)
{
    int color = rp_color_wanted(a->c.color_when, stderr);
    if (st_oom_parse_all(d, fl->v, fl->n, color, progs, nprogs) == 0)
        return 0;
    char stopped[96];
    snprintf(stopped, sizeof stopped, "%zu file%s did not parse; nothing was run", d->unparsed,
             d->unparsed == 1 ? "" : "s");
    cli_error("oom", "%s", stopped);
    st_oom_doc_end(d, stopped);
    cli_outputs_commit(&a->c, "oom");   /* the report says why nothing ran */
    return CLI_EXIT_USAGE;
}

static void loop_options(const oom_args *a, st_oom_opts *o, int modes)
{
    memset(o, 0, sizeof *o);
    o->sc = a->c.sc;
    o->modes = modes;
    o->max_fail = a->max_fail;
    o->every = a->every;
    o->progress = !a->c.quiet && isatty(2);
}

/* The loop over every program, its report and the exit code. */
static int loop_all(oom_args *a, st_oom_doc *d, sc_program **progs, size_t nprogs,
                    const char *repro)
{
    st_oom_opts o;
    loop_options(a, &o, d->modes);
    st_oom_shard shard = {a->shard.k, a->shard.n, repro, "fakegc oom"};
    st_oom_all(d, &o, progs, nprogs, &shard);
    if (cli_outputs_commit(&a->c, "oom") < 0)
        return CLI_EXIT_USAGE;
    return d->findings || d->crashes ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cli_oom(int argc, char **argv)
{
    oom_args a = {.shard = VL_SHARD_NONE};
    char **paths;
    int npaths, r = cli_parse(&cli_oom_cmd, &a, argc, argv, &paths, &npaths);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    char repro[1024];
    cli_repro_command(repro, sizeof repro, &cli_oom_cmd, argc, argv, NULL, 1, NULL);
    if (cli_env_setup(&a.c, "oom") < 0)
        return CLI_EXIT_USAGE;
    sc_files fl = {0};
    sc_program **progs = NULL;
    size_t nprogs = 0;
    int exit_code = cli_scenarios(&a.c, "oom", paths, npaths, &a.shard, &fl);
    if (exit_code == CLI_EXIT_OK &&
        !(progs = al_malloc((fl.n ? fl.n : 1) * sizeof *progs, AL_K_SCENARIO, "oom programs")))
        exit_code = CLI_EXIT_INTERNAL;
    st_doc_head h;
    doc_head(&a, &h);
    st_oom_doc d = {a.c.out, a.c.format == RP_JSON, a.c.quiet, a.every,
                    a.transient_only ? 1 : a.persistent_only ? 2 : 3, NULL, 0, 0, 0, 0, 0, 0, 0};
    if (exit_code == CLI_EXIT_OK)
        st_oom_doc_begin(&d, &h);
    if (exit_code == CLI_EXIT_OK)
        exit_code = parse_all(&a, &d, &fl, progs, &nprogs);
    if (exit_code == CLI_EXIT_OK)
        exit_code = loop_all(&a, &d, progs, nprogs, repro);
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, progs ? (fl.n ? fl.n : 1) * sizeof *progs : 0, AL_K_SCENARIO);
    sc_files_free(&fl);
    cli_env_teardown(&a.c);
    return exit_code;
}
