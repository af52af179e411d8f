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
#include "stress/st.h"
#include "worker/wk.h"

#define OOM_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                  CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_LIMITS | CLI_O_OUTPUT_STYLE)

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
            "reported with its failure point. A bad access (caught by the guard\n"
            "allocator, or a decref of a dead object) is a finding at its statement and\n"
            "ends that scenario's loop.\n\noptions:\n"
            "  --transient-only     only transient failures\n"
            "  --persistent-only    only persistent failures\n"
            "  --max-points N       at most N failure points per mode and scenario\n"
            "                       (--max-fail N: the same)\n"
            "  --every-point        fail the 1st, 2nd, 3rd ... allocation until a run has\n"
            "                       no failure (the quadratic loop, for comparison)\n"
            "  --shard K/N          only the files i (of the sorted list) with i mod N == K\n");
    cli_common_help(f, OOM_MASK & ~(unsigned)CLI_O_FORMAT);
    fprintf(f, "  --format FMT         text (default) or json (schema fakegc-oom/2)\n"
               "  --help               this text\n\n"
               "exit status: 0 every run ended cleanly; 1 a leak, an unclean end, a finding\n"
               "or a crash;\n"
               "2 usage or parse error; 3 internal error.\n");
}

void cli_oom_help(FILE *f) { help(f); }

/* ---- the JSON report (schema fakegc-oom/2) ---- */

static void json_head(const cli_common *c, const cli_shard *shard, FILE *f)
{
    fprintf(f, "{\n  \"schema\": \"%s\", \"tool\": \"fakegc\", \"command\": \"oom\", "
            "\"version\": \"%s\", \"allocator\": ", RP_SCHEMA_OOM, FAKEGC_VERSION);
    rp_json_string(f, c->allocator);
    fputs(",\n  \"inject\": [", f);
    char ib[512];
    snprintf(ib, sizeof ib, "%s", c->inject ? c->inject : "");
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(ib, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fputs(k++ ? ", " : "", f);
        rp_json_string(f, tok);
    }
    fputs("], \"compat\": ", f);
    rp_json_string(f, c->compat);
    if (shard->n) {   /* what `fakegc merge` checks: one shard of a campaign */
        fprintf(f, ",\n  \"shard\": [%u, %u], \"host\": ", shard->k, shard->n);
        rp_json_string(f, cli_hostname());
        fprintf(f, ", \"campaign_files\": %zu", shard->total);
    }
    fputs(",\n  \"scenarios\": [", f);
}

static void json_scenario(FILE *f, size_t i, const char *file, int rc, const st_oom_result *r,
                          int modes)
{
    const char *status = rc < 0 ? "error" : r->finding ? "finding" : r->crashed ? "crash"
                       : r->nfindings ? "leak" : "ok";
    fprintf(f, "%s\n    {\"file\": ", i ? "," : "");
    rp_json_string(f, file);
    fprintf(f, ", \"status\": \"%s\"", status);
    if (rc < 0) {
        fputs(", \"error\": \"the run without failures ended in an internal error\"}", f);
        return;
    }
    fprintf(f, ", \"baseline\": \"%s\", \"allocations\": %" PRIu64,
            rp_status_name((rp_status)r->baseline_status), r->allocations);
    fprintf(f, ",\n     \"transient\": %s", modes & 1 ? "" : "null");
    if (modes & 1)
        fprintf(f, "{\"points\": %" PRIu64 ", \"capped\": %s}", r->points[0],
                r->capped[0] ? "true" : "false");
    fprintf(f, ", \"persistent\": %s", modes & 2 ? "" : "null");
    if (modes & 2)
        fprintf(f, "{\"points\": %" PRIu64 ", \"capped\": %s}", r->points[1],
                r->capped[1] ? "true" : "false");
    fputs(",\n     \"crash\": ", f);
    if (r->crashed) {
        fprintf(f, "{\"what\": ");
        rp_json_string(f, r->crash);
        fprintf(f, ", \"point\": %" PRIu64 ", \"mode\": \"%s\"}", r->crash_point,
                r->crash_persistent ? "persistent" : "transient");
    } else {
        fputs("null", f);
    }
    fputs(", \"finding\": ", f);
    if (r->finding) {   /* a bad access: kind, statement, and the point it came at */
        char kind[64];
        wk_finding_kind(r->finding_what, kind, sizeof kind);
        fputs("{\"kind\": ", f);
        rp_json_string(f, kind);
        fprintf(f, ", \"line\": %u, \"what\": ", r->finding_line);
        rp_json_string(f, r->finding_what);
        fprintf(f, ", \"point\": %" PRIu64 ", \"mode\": ", r->crash_point);
        fputs(!r->crash_point ? "null}" : r->crash_persistent ? "\"persistent\"}"
                                                              : "\"transient\"}", f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ", \"findings_total\": %u, \"findings\": [", r->crashed ? 0 : r->nfindings);
    for (uint32_t k = 0; !r->crashed && k < r->nfindings && k < ST_OOM_MAX_FINDINGS; k++) {
        fprintf(f, "%s{\"mode\": \"%s\", \"point\": %" PRIu64 ", \"what\": ", k ? ", " : "",
                r->f[k].persistent ? "persistent" : "transient", r->f[k].point);
        rp_json_string(f, r->f[k].what);
        fputc('}', f);
    }
    fputs("]}", f);
}

int cli_oom(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int modes = 3, every = 0;
    uint64_t max_fail = 0;
    char **paths = argv + 1;
    int npaths = 0, only_paths = 0;
    cli_shard shard = CLI_SHARD_NONE;
    char repro[1024];   /* before the operands are gathered over argv */
    cli_repro_command(repro, sizeof repro, "oom", argc, argv, NULL, 1, NULL);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int sr = !only_paths && a[0] == '-' ? cli_shard_option("oom", argc, argv, &i, &shard) : 0;
        if (sr < 0)
            return CLI_EXIT_USAGE;
        if (sr > 0)
            continue;
        if (only_paths || a[0] != '-' || !a[1]) {
            paths[npaths++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_paths = 1;
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
            cli_unknown_option("oom", a, help);
            return CLI_EXIT_USAGE;
        }
    }
    static char def[] = "scenarios";
    char *defs[] = {def};
    if (npaths == 0) {
        paths = defs;
        npaths = 1;
    }
    if (c.format != RP_TEXT && c.format != RP_JSON) {
        cli_error("oom", "--format: text or json");
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&c, "oom") < 0)
        return CLI_EXIT_USAGE;
    int exit_code = CLI_EXIT_OK;
    cli_files fl = {0};
    sc_program **progs = NULL;
    size_t nprogs = 0;
    int crc = cli_collect_scenarios("oom", paths, npaths, &fl);
    if (crc < 0) {
        exit_code = crc == -1 ? CLI_EXIT_USAGE : CLI_EXIT_INTERNAL;
        cli_output_abort(&c);   /* nothing to report: leave any old file */
    }
    if (exit_code == CLI_EXIT_OK && cli_outputs_not_inputs(&c, "oom", fl.v, fl.n) < 0)
        exit_code = CLI_EXIT_USAGE;
    cli_shard_files(&shard, &fl);
    if (exit_code == CLI_EXIT_OK) {
        progs = al_malloc((fl.n ? fl.n : 1) * sizeof *progs, AL_K_SCENARIO, "oom programs");
        if (!progs)
            exit_code = CLI_EXIT_INTERNAL;
    }
    int bad = 0, json = c.format == RP_JSON;
    if (json && exit_code == CLI_EXIT_OK)
        json_head(&c, &shard, c.out);
    for (size_t i = 0; exit_code == CLI_EXIT_OK && i < fl.n; i++) {
        int nerr = 0;
        sc_program *p = sc_parse_file(fl.v[i], stderr, cli_color_wanted(c.no_color, stderr),
                                      &nerr);
        if (p) {
            progs[nprogs++] = p;
        } else {
            if (json) {   /* the report says which files stopped the run */
                fprintf(c.out, "%s\n    {\"file\": ", bad ? "," : "");
                rp_json_string(c.out, fl.v[i]);
                fputs(", \"status\": \"error\", \"error\": \"does not parse\"}", c.out);
            }
            bad++;
        }
    }
    if (bad) {
        char stopped[96];
        snprintf(stopped, sizeof stopped, "%d file%s did not parse; nothing was run", bad,
                 bad == 1 ? "" : "s");
        fprintf(stderr, "fakegc oom: %s\n", stopped);
        if (json)
            fprintf(c.out, "\n  ],\n  \"status\": \"error\", \"stopped\": \"%s\",\n  "
                    "\"summary\": {\"scenarios\": 0, \"failure_points\": 0, \"findings\": 0, "
                    "\"crashes\": 0}\n}\n", stopped);
        else
            fprintf(c.out, "oom: stopped: %s\n", stopped);
        cli_outputs_commit(&c, "oom");   /* the report says why nothing ran */
        exit_code = CLI_EXIT_USAGE;
    }
    uint64_t total_points = 0, total_findings = 0, crashes = 0;
    st_oom_opts o;
    memset(&o, 0, sizeof o);
    sc_options_default(&o.sc);
    o.sc.gc = c.gc;
    o.sc.sweep = c.sweep;
    o.sc.design = c.design;
    o.sc.max_bytes = c.max_bytes;
    o.sc.max_statements = c.max_statements;
    o.sc.max_objects = c.max_objects;
    o.modes = modes;
    o.max_fail = max_fail;
    o.every = every;
    o.progress = !c.quiet && isatty(2);
    uint64_t total_contexts = 0, total_skipped = 0;
    FILE *out = json ? NULL : c.out;
    for (size_t i = 0; exit_code == CLI_EXIT_OK && i < nprogs; i++) {
        const char *file = sc_program_file(progs[i]);
        o.name = file;
        st_oom_result r;
        int rc = st_oom_forked(progs[i], &o, &r);
        if (json) {
            json_scenario(c.out, i, file, rc, &r, modes);
            if (rc < 0 || r.crashed || r.finding)
                r.crashed ? crashes++ : total_findings++;
            else {
                total_points += r.points[0] + r.points[1];
                total_findings += r.nfindings;
                total_contexts += r.contexts;
                total_skipped += r.skipped;
            }
            continue;
        }
        if (rc < 0) {
            fprintf(out, "ERROR %s: the run without failures ended in an internal error\n",
                    file);
            total_findings++;
            continue;
        }
        if (r.finding) {   /* a bad access: a finding about the scenario, with its site */
            char kind[64];
            wk_finding_kind(r.finding_what, kind, sizeof kind);
            total_findings++;
            fprintf(out, "FINDING %s:%u: %s ", file, r.finding_line, kind);
            if (r.crash_point)
                fprintf(out, "with allocation #%" PRIu64 " failing (%s)", r.crash_point,
                        r.crash_persistent ? "persistent" : "transient");
            else
                fputs("in the run without failures", out);
            fprintf(out, "; the loop stopped there\n  %s\n", r.finding_what);
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
        if (shard.n && r.nfindings)
            fprintf(stderr, "fakegc oom: shard %u/%u: %s; in one process: %s %s\n", shard.k,
                    shard.n, file, repro, file);
        for (uint32_t k = 0; k < r.nfindings && k < ST_OOM_MAX_FINDINGS; k++)
            fprintf(out, "  %s #%" PRIu64 ": %s\n", r.f[k].persistent ? "persistent" : "transient",
                    r.f[k].point, r.f[k].what);
        if (r.nfindings > ST_OOM_MAX_FINDINGS)
            fprintf(out, "  ... %u more\n", r.nfindings - ST_OOM_MAX_FINDINGS);
    }
    if (!json && exit_code == CLI_EXIT_OK && shard.n)
        fprintf(out, "oom: shard %u/%u of %zu files on %s\n", shard.k, shard.n, shard.total,
                cli_hostname());
    if (json && exit_code == CLI_EXIT_OK) {
        fprintf(c.out, "\n  ],\n  \"status\": \"%s\", \"stopped\": null,\n  \"summary\": {\"scenarios\": %zu, "
                "\"failure_points\": %" PRIu64 ", \"contexts\": %" PRIu64 ", \"duplicates_skipped\": %"
                PRIu64 ", \"findings\": %" PRIu64 ", \"crashes\": %" PRIu64 "}\n}\n",
                total_findings || crashes ? "fail" : "pass", nprogs, total_points,
                total_contexts, total_skipped, total_findings, crashes);
        if (total_findings || crashes)
            exit_code = CLI_EXIT_FAIL;
        if (cli_outputs_commit(&c, "oom") < 0)
            exit_code = CLI_EXIT_USAGE;
    } else if (exit_code == CLI_EXIT_OK) {
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
