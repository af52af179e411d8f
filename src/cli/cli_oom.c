/* cli_oom.c - `fakegc oom [PATH...]`: SQLite's out-of-memory loop over
 * every scenario (src/stress/st_oom.c), each scenario's loop in a forked
 * child so a crash is that scenario's finding. */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/er.h"
#include "fake/fk.h"
#include "stress/st.h"

#define OOM_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                  CLI_O_OUTPUT | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE)

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc oom [OPTIONS] [PATH...]\n\n"
            "For each scenario (files, or every *.scn under folders; default scenarios/,\n"
            "errors/ folders skipped): fail the first allocation of each allocation\n"
            "context (C site, kind, statement; a statement's executions past the 3rd\n"
            "folded into one), once transiently (that allocation only) and once\n"
            "persistently (it and every later one). Every run must pass or stop with a\n"
            "clean OutOfMemory at a statement, retain nothing, and leave no byte and no\n"
            "object behind; each scenario's loop runs in a child process, so a crash is\n"
            "reported with its failure point.\n\noptions:\n"
            "  --transient-only     only transient failures\n"
            "  --persistent-only    only persistent failures\n"
            "  --max-points N       at most N failure points per mode and scenario\n"
            "                       (--max-fail N: the same)\n"
            "  --every-point        fail the 1st, 2nd, 3rd ... allocation until a run has\n"
            "                       no failure (the quadratic loop, for comparison)\n");
    cli_common_help(f, OOM_MASK);
    fprintf(f, "  --help               this text\n\n"
               "exit status: 0 every run ended cleanly; 1 a leak, an unclean end or a crash;\n"
               "2 usage or parse error; 3 internal error.\n");
}

int cli_oom(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int modes = 3, every = 0;
    uint64_t max_fail = 0;
    char **paths = argv + 1;
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (a[0] != '-' || !a[1]) {
            paths[npaths++] = argv[i];
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help(stdout);
            return CLI_EXIT_OK;
        }
        int r = cli_common_option(&c, OOM_MASK, "oom", argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(a, "--transient-only") == 0) {
            modes = 1;
        } else if (strcmp(a, "--persistent-only") == 0) {
            modes = 2;
        } else if (strcmp(a, "--every-point") == 0) {
            every = 1;
        } else if ((r = cli_opt_value("oom", "--max-points", argc, argv, &i, &v)) != 0 ||
                   (r = cli_opt_value("oom", "--max-fail", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_u64(v, 0, &max_fail) < 0 || max_fail == 0) {
                cli_error("oom", "%s: expected a number >= 1, got '%s'", a, v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else {
            cli_error("oom", "unknown option '%s' (fakegc oom --help)", a);
            return CLI_EXIT_USAGE;
        }
    }
    static char def[] = "scenarios";
    char *defs[] = {def};
    if (npaths == 0) {
        paths = defs;
        npaths = 1;
    }
    if (cli_env_setup(&c, "oom") < 0)
        return CLI_EXIT_USAGE;
    int exit_code = CLI_EXIT_OK;
    cli_files fl = {0};
    sc_program **progs = NULL;
    size_t nprogs = 0;
    int crc = cli_collect_scenarios("oom", paths, npaths, &fl);
    if (crc < 0)
        exit_code = crc == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL;
    if (exit_code == CLI_EXIT_OK && cli_outputs_not_inputs(&c, "oom", fl.v, fl.n) < 0)
        exit_code = CLI_EXIT_USAGE;
    if (exit_code == CLI_EXIT_OK) {
        progs = al_malloc((fl.n ? fl.n : 1) * sizeof *progs, AL_K_SCENARIO, "oom programs");
        if (!progs)
            exit_code = CLI_EXIT_INTERNAL;
    }
    int bad = 0;
    for (size_t i = 0; exit_code == CLI_EXIT_OK && i < fl.n; i++) {
        int nerr = 0;
        sc_program *p = sc_parse_file(fl.v[i], stderr, cli_color_wanted(c.no_color, stderr),
                                      &nerr);
        if (p)
            progs[nprogs++] = p;
        else
            bad++;
    }
    if (bad) {
        fprintf(stderr, "fakegc oom: %d file%s did not parse; nothing was run\n", bad,
                bad == 1 ? "" : "s");
        exit_code = CLI_EXIT_USAGE;
    }
    uint64_t total_points = 0, total_findings = 0, crashes = 0;
    st_oom_opts o;
    memset(&o, 0, sizeof o);
    sc_options_default(&o.sc);
    o.sc.gc = c.gc;
    o.sc.sweep = c.sweep;
    if (c.compat)
        o.sc.default_sweep = FK_SWEEP_PERIODIC;
    o.sc.max_bytes = c.max_bytes;
    o.sc.max_statements = c.max_statements;
    o.sc.max_objects = c.max_objects;
    o.modes = modes;
    o.max_fail = max_fail;
    o.every = every;
    o.progress = !c.quiet && isatty(2);
    uint64_t total_contexts = 0, total_skipped = 0;
    FILE *out = c.out;
    for (size_t i = 0; exit_code == CLI_EXIT_OK && i < nprogs; i++) {
        const char *file = sc_program_file(progs[i]);
        o.name = file;
        st_oom_result r;
        int rc = st_oom_forked(progs[i], &o, &r);
        if (rc < 0) {
            fprintf(out, "ERROR %s: the run without failures ended in an internal error\n",
                    file);
            total_findings++;
            continue;
        }
        if (r.crashed) {
            crashes++;
            fprintf(out, "CRASH %s: %s with allocation #%" PRIu64 " failing (%s)\n", file,
                    r.crash, r.crash_point, r.crash_persistent ? "persistent" : "transient");
            continue;
        }
        total_points += r.points[0] + r.points[1];
        total_findings += r.nfindings;
        total_contexts += r.contexts;
        total_skipped += r.skipped;
        const char *verdict = r.nfindings ? "LEAK" : "ok";
        if (!c.quiet || r.nfindings) {
            fprintf(out, "%-4s %s: %" PRIu64 " allocations; ", verdict, file, r.allocations);
            if (!every)
                fprintf(out, "%" PRIu64 " contexts covered, %" PRIu64
                        " attempts skipped as duplicates; ", r.contexts, r.skipped);
            if (modes & 1)
                fprintf(out, "transient %" PRIu64 "%s", r.points[0],
                        r.capped[0] ? " (capped)" : "");
            if (modes & 2)
                fprintf(out, "%spersistent %" PRIu64 "%s", modes & 1 ? ", " : "", r.points[1],
                        r.capped[1] ? " (capped)" : "");
            fprintf(out, " failure points; %u finding%s%s\n", r.nfindings,
                    r.nfindings == 1 ? "" : "s",
                    r.baseline_status != RP_PASS
                        ? " (fails without injected failures: judged on leaks only)"
                        : "");
        }
        for (uint32_t k = 0; k < r.nfindings && k < ST_OOM_MAX_FINDINGS; k++)
            fprintf(out, "  %s #%" PRIu64 ": %s\n", r.f[k].persistent ? "persistent" : "transient",
                    r.f[k].point, r.f[k].what);
        if (r.nfindings > ST_OOM_MAX_FINDINGS)
            fprintf(out, "  ... %u more\n", r.nfindings - ST_OOM_MAX_FINDINGS);
    }
    if (exit_code == CLI_EXIT_OK) {
        fprintf(out, "oom: %zu scenario%s, %" PRIu64 " failure points tried", nprogs,
                nprogs == 1 ? "" : "s", total_points);
        if (!every)
            fprintf(out, ", %" PRIu64 " contexts covered, %" PRIu64 " duplicates skipped",
                    total_contexts, total_skipped);
        fprintf(out, ", %" PRIu64 " finding%s, %" PRIu64 " crash%s\n", total_findings,
                total_findings == 1 ? "" : "s", crashes, crashes == 1 ? "" : "es");
        if (total_findings || crashes)
            exit_code = CLI_EXIT_FAIL;
        if (cli_outputs_commit(&c, "oom") < 0)
            exit_code = CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, (fl.n ? fl.n : 1) * sizeof *progs, AL_K_SCENARIO);
    cli_files_free(&fl);
    cli_env_teardown(&c);
    return exit_code;
}
