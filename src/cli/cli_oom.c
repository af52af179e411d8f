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
#include "report/rp_jw.h"
#include "worker/wk.h"

typedef struct oom_args {
    cli_common c;
    int transient_only, persistent_only, every;
    uint64_t max_fail;
    cli_shard shard;
} oom_args;

static const cli_opt rows[] = {
    CLI_FLAG("--transient-only", 0, oom_args, transient_only, "only transient failures"),
    CLI_FLAG("--persistent-only", 0, oom_args, persistent_only, "only persistent failures"),
    CLI_UINT("--max-points", 0, "N", oom_args, max_fail, 1, UINT64_MAX,
             "at most N failure points per mode and scenario\n(--max-fail N: the same)"),
    CLI_ALIAS("--max-fail", "--max-points"),
    CLI_FLAG("--every-point", 0, oom_args, every,
             "fail the 1st, 2nd, 3rd ... allocation until a run has\n"
             "no failure (the quadratic loop, for comparison)"),
    CLI_SHARD_ROW(oom_args, shard, "only the files i (of the sorted list) with i mod N == K"),
    CLI_END};

const cli_cmd cli_oom_cmd = {
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
    "exit status: 0 every run ended cleanly; 1 a leak, an unclean end, a finding\n"
    "or a crash; 2 usage or parse error; 3 internal error.",
    NULL, "fail each allocation in turn; every run must end cleanly"};

/* ---- the JSON report (schema fakegc-oom/2) ---- */

static void json_head(const cli_common *c, const cli_shard *shard, FILE *f)
{
    rp_jw *w = rp_jw_open(f);
    if (!w)
        return;
    rp_jw_key(w, "{\n  ", "schema"); rp_jw_str(w, RP_SCHEMA_OOM);
    rp_jw_key(w, ", ", "tool"); rp_jw_str(w, "fakegc");
    rp_jw_key(w, ", ", "command"); rp_jw_str(w, "oom");
    rp_jw_key(w, ", ", "version"); rp_jw_str(w, FAKEGC_VERSION);
    rp_jw_key(w, ", ", "commit"); rp_jw_str(w, cli_version_commit());
    rp_jw_key(w, ", ", "allocator"); rp_jw_str(w, c->allocator);
    rp_jw_key(w, ",\n  ", "inject"); rp_jw_raw(w, "[");
    char ib[512];
    snprintf(ib, sizeof ib, "%s", c->inject ? c->inject : "");
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(ib, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        rp_jw_raw(w, k++ ? ", " : "");
        rp_jw_str(w, tok);
    }
    rp_jw_raw(w, "]");
    rp_jw_key(w, ", ", "compat"); rp_jw_str(w, c->compat);
    if (shard->n) {   /* what `fakegc merge` checks: one shard of a campaign */
        rp_jw_key(w, ",\n  ", "shard"); rp_jw_raw(w, "["); rp_jw_u64(w, shard->k);
        rp_jw_raw(w, ", "); rp_jw_u64(w, shard->n); rp_jw_raw(w, "]");
        rp_jw_key(w, ", ", "host"); rp_jw_str(w, cli_hostname());
        rp_jw_key(w, ", ", "campaign_files"); rp_jw_u64(w, shard->total);
    }
    rp_jw_key(w, ",\n  ", "scenarios"); rp_jw_raw(w, "[");
    rp_jw_close(w);
}

static void json_mode(rp_jw *w, const char *sep, const char *name, int on, uint64_t points,
                      int capped)
{
    rp_jw_key(w, sep, name);
    if (!on) {
        rp_jw_raw(w, "null");
        return;
    }
    rp_jw_key(w, "{", "points"); rp_jw_u64(w, points);
    rp_jw_key(w, ", ", "capped"); rp_jw_bool(w, capped);
    rp_jw_raw(w, "}");
}

static void json_finding(rp_jw *w, const st_oom_result *r)
{
    char kind[64];   /* a bad access: kind, statement, and the point it came at */
    wk_finding_kind(r->finding_what, kind, sizeof kind);
    rp_jw_key(w, "{", "kind"); rp_jw_str(w, kind);
    rp_jw_key(w, ", ", "line"); rp_jw_u64(w, r->finding_line);
    rp_jw_key(w, ", ", "what"); rp_jw_str(w, r->finding_what);
    rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->crash_point);
    rp_jw_key(w, ", ", "mode");
    rp_jw_raw(w, !r->crash_point ? "null}" : r->crash_persistent ? "\"persistent\"}"
                                                                 : "\"transient\"}");
}

static void json_scenario(FILE *f, size_t i, const char *file, int rc, const st_oom_result *r,
                          int modes)
{
    rp_jw *w = rp_jw_open(f);
    if (!w)
        return;
    const char *status = rc < 0 ? "error" : r->finding ? "finding" : r->crashed ? "crash"
                       : r->nfindings ? "leak" : "ok";
    rp_jw_key(w, i ? ",\n    {" : "\n    {", "file"); rp_jw_str(w, file);
    rp_jw_key(w, ", ", "status"); rp_jw_str(w, status);
    if (rc < 0) {
        rp_jw_key(w, ", ", "error");
        rp_jw_str(w, "the run without failures ended in an internal error");
        rp_jw_raw(w, "}");
        rp_jw_close(w);
        return;
    }
    rp_jw_key(w, ", ", "baseline"); rp_jw_str(w, rp_status_name((rp_status)r->baseline_status));
    rp_jw_key(w, ", ", "allocations"); rp_jw_u64(w, r->allocations);
    rp_jw_key(w, ", ", "contexts"); rp_jw_u64(w, r->contexts);
    rp_jw_key(w, ", ", "duplicates_skipped"); rp_jw_u64(w, r->skipped);
    json_mode(w, ",\n     ", "transient", modes & 1, r->points[0], r->capped[0]);
    json_mode(w, ", ", "persistent", modes & 2, r->points[1], r->capped[1]);
    rp_jw_key(w, ",\n     ", "crash");
    if (r->crashed) {
        rp_jw_key(w, "{", "what"); rp_jw_str(w, r->crash);
        rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->crash_point);
        rp_jw_key(w, ", ", "mode"); rp_jw_str(w, r->crash_persistent ? "persistent" : "transient");
        rp_jw_raw(w, "}");
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_key(w, ", ", "finding");
    if (r->finding)
        json_finding(w, r);
    else
        rp_jw_raw(w, "null");
    rp_jw_key(w, ", ", "findings_total"); rp_jw_u64(w, r->crashed ? 0 : r->nfindings);
    rp_jw_key(w, ", ", "findings"); rp_jw_raw(w, "[");
    for (uint32_t k = 0; !r->crashed && k < r->nfindings && k < ST_OOM_MAX_FINDINGS; k++) {
        rp_jw_key(w, k ? ", {" : "{", "mode");
        rp_jw_str(w, r->f[k].persistent ? "persistent" : "transient");
        rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->f[k].point);
        rp_jw_key(w, ", ", "what"); rp_jw_str(w, r->f[k].what);
        rp_jw_raw(w, "}");
    }
    rp_jw_raw(w, "]}");
    rp_jw_close(w);
}

typedef struct oom_totals {
    uint64_t points, findings, crashes, contexts, skipped;
} oom_totals;

static void count(oom_totals *t, int rc, const st_oom_result *r)
{
    if (rc < 0 || r->finding) {
        t->findings++;
    } else if (r->crashed) {
        t->crashes++;
    } else {
        t->points += r->points[0] + r->points[1];
        t->findings += r->nfindings;
        t->contexts += r->contexts;
        t->skipped += r->skipped;
    }
}

/* One scenario's lines of the text report. */
static void text_scenario(const oom_args *a, FILE *out, const char *file, int rc,
                          const st_oom_result *r, int modes)
{
    if (rc < 0) {
        fprintf(out, "ERROR %s: the run without failures ended in an internal error\n", file);
        return;
    }
    if (r->finding) {   /* a bad access: a finding about the scenario, with its site */
        char kind[64];
        wk_finding_kind(r->finding_what, kind, sizeof kind);
        fprintf(out, "FINDING %s:%u: %s ", file, r->finding_line, kind);
        if (r->crash_point)
            fprintf(out, "with allocation #%" PRIu64 " failing (%s)", r->crash_point,
                    r->crash_persistent ? "persistent" : "transient");
        else
            fputs("in the run without failures", out);
        fprintf(out, "; the loop stopped there\n  %s\n", r->finding_what);
        return;
    }
    if (r->crashed) {
        fprintf(out, "CRASH %s: %s with allocation #%" PRIu64 " failing (%s)\n", file, r->crash,
                r->crash_point, r->crash_persistent ? "persistent" : "transient");
        return;
    }
    if (!a->c.quiet || r->nfindings) {
        fprintf(out, "%-4s %s: %" PRIu64 " allocations; ", r->nfindings ? "LEAK" : "ok", file,
                r->allocations);
        if (!a->every)
            fprintf(out, "%" PRIu64 " contexts covered, %" PRIu64
                    " attempts skipped as duplicates; ", r->contexts, r->skipped);
        if (modes & 1)
            fprintf(out, "transient %" PRIu64 "%s", r->points[0], r->capped[0] ? " (capped)" : "");
        if (modes & 2)
            fprintf(out, "%spersistent %" PRIu64 "%s", modes & 1 ? ", " : "", r->points[1],
                    r->capped[1] ? " (capped)" : "");
        fprintf(out, " failure points; %u finding%s%s\n", r->nfindings,
                r->nfindings == 1 ? "" : "s",
                r->baseline_status != RP_PASS
                    ? " (fails without injected failures: judged on leaks only)" : "");
    }
    for (uint32_t k = 0; k < r->nfindings && k < ST_OOM_MAX_FINDINGS; k++)
        fprintf(out, "  %s #%" PRIu64 ": %s\n", r->f[k].persistent ? "persistent" : "transient",
                r->f[k].point, r->f[k].what);
    if (r->nfindings > ST_OOM_MAX_FINDINGS)
        fprintf(out, "  ... %u more\n", r->nfindings - ST_OOM_MAX_FINDINGS);
}

static void summary(const oom_args *a, FILE *out, size_t nprogs, const oom_totals *t)
{
    if (a->c.format == RP_JSON) {
        fprintf(out, "\n  ],\n  \"status\": \"%s\", \"stopped\": null,\n  \"summary\": "
                "{\"scenarios\": %zu, \"failure_points\": %" PRIu64 ", \"contexts\": %" PRIu64
                ", \"duplicates_skipped\": %" PRIu64 ", \"findings\": %" PRIu64
                ", \"crashes\": %" PRIu64 "}\n}\n", t->findings || t->crashes ? "fail" : "pass",
                nprogs, t->points, t->contexts, t->skipped, t->findings, t->crashes);
        return;
    }
    if (a->shard.n)
        fprintf(out, "oom: shard %u/%u of %zu files on %s\n", a->shard.k, a->shard.n,
                a->shard.total, cli_hostname());
    fprintf(out, "oom: %zu scenario%s, %" PRIu64 " failure points tried", nprogs,
            nprogs == 1 ? "" : "s", t->points);
    if (!a->every)
        fprintf(out, ", %" PRIu64 " contexts covered, %" PRIu64 " duplicates skipped",
                t->contexts, t->skipped);
    fprintf(out, ", %" PRIu64 " finding%s, %" PRIu64 " crash%s\n", t->findings,
            t->findings == 1 ? "" : "s", t->crashes, t->crashes == 1 ? "" : "es");
}

/* Parse every file into progs; a file that does not parse stops the run
 * with a complete report saying so. 0, or the exit code (printed). */
static int parse_all(oom_args *a, const sc_files *fl, sc_program **progs, size_t *nprogs)
{
    int bad = 0, json = a->c.format == RP_JSON;
    FILE *out = a->c.out;
    for (size_t i = 0; i < fl->n; i++) {
        int nerr = 0;
        sc_program *p = sc_parse_file(fl->v[i], stderr, cli_color_wanted(&a->c, stderr), &nerr);
        if (p) {
            progs[(*nprogs)++] = p;
            continue;
        }
        if (json) {   /* the report says which files stopped the run */
            fprintf(out, "%s\n    {\"file\": ", bad ? "," : "");
            rp_json_string(out, fl->v[i]);
            fputs(", \"status\": \"error\", \"error\": \"does not parse\"}", out);
        }
        bad++;
    }
    if (!bad)
        return 0;
    char stopped[96];
    snprintf(stopped, sizeof stopped, "%d file%s did not parse; nothing was run", bad,
             bad == 1 ? "" : "s");
    fprintf(stderr, "fakegc oom: %s\n", stopped);
    if (json)
        fprintf(out, "\n  ],\n  \"status\": \"error\", \"stopped\": \"%s\",\n  \"summary\": "
                "{\"scenarios\": 0, \"failure_points\": 0, \"findings\": 0, \"crashes\": 0}\n}\n",
                stopped);
    else
        fprintf(out, "oom: stopped: %s\n", stopped);
    cli_outputs_commit(&a->c, "oom");   /* the report says why nothing ran */
    return CLI_EXIT_USAGE;
}

static void loop_options(const oom_args *a, st_oom_opts *o, int modes)
{
    memset(o, 0, sizeof *o);
    sc_options_default(&o->sc);
    o->sc.gc = a->c.gc;
    o->sc.sweep = a->c.sweep;
    o->sc.design = a->c.design;
    o->sc.max_bytes = a->c.max_bytes;
    o->sc.max_statements = a->c.max_statements;
    o->sc.max_objects = a->c.max_objects;
    o->modes = modes;
    o->max_fail = a->max_fail;
    o->every = a->every;
    o->progress = !a->c.quiet && isatty(2);
}

/* The loop over every program, its report and the exit code. */
static int loop_all(oom_args *a, sc_program **progs, size_t nprogs, const char *repro)
{
    int modes = a->transient_only ? 1 : a->persistent_only ? 2 : 3;
    int json = a->c.format == RP_JSON;
    st_oom_opts o;
    loop_options(a, &o, modes);
    oom_totals t = {0};
    for (size_t i = 0; i < nprogs; i++) {
        const char *file = sc_program_file(progs[i]);
        o.name = file;
        st_oom_result r;
        int rc = st_oom_forked(progs[i], &o, &r);
        count(&t, rc, &r);
        if (json)
            json_scenario(a->c.out, i, file, rc, &r, modes);
        else
            text_scenario(a, a->c.out, file, rc, &r, modes);
        if (!json && a->shard.n && rc >= 0 && !r.crashed && !r.finding && r.nfindings)
            fprintf(stderr, "fakegc oom: shard %u/%u: %s; in one process: %s %s\n", a->shard.k,
                    a->shard.n, file, repro, file);
    }
    summary(a, a->c.out, nprogs, &t);
    if (cli_outputs_commit(&a->c, "oom") < 0)
        return CLI_EXIT_USAGE;
    return t.findings || t.crashes ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cli_oom(int argc, char **argv)
{
    oom_args a = {.shard = CLI_SHARD_NONE};
    cli_common_init(&a.c);
    char **paths;
    int npaths;
    int r = cli_parse(&cli_oom_cmd, &a, argc, argv, &paths, &npaths);
    if (r != CLI_PARSE_OK)
        return cli_parse_exit(r);
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
    if (exit_code == CLI_EXIT_OK && a.c.format == RP_JSON)
        json_head(&a.c, &a.shard, a.c.out);
    if (exit_code == CLI_EXIT_OK)
        exit_code = parse_all(&a, &fl, progs, &nprogs);
    if (exit_code == CLI_EXIT_OK)
        exit_code = loop_all(&a, progs, nprogs, repro);
    for (size_t i = 0; i < nprogs; i++)
        sc_program_free(progs[i]);
    al_free(progs, progs ? (fl.n ? fl.n : 1) * sizeof *progs : 0, AL_K_SCENARIO);
    sc_files_free(&fl);
    cli_env_teardown(&a.c);
    return exit_code;
}
