/* st_report.c - the oom and stress documents, text and JSON. */
#include "stress/st_report.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/rp.h"
#include "report/rp_jw.h"
#include "report/rp_sarif.h"
#include "worker/wk.h"

static void head(rp_jw *w, const char *schema, const char *cmd, const st_doc_head *h)
{
    rp_jw_key(w, "{\n  ", "schema"); rp_jw_str(w, schema);
    rp_jw_key(w, ", ", "tool"); rp_jw_str(w, "fakegc");
    rp_jw_key(w, ", ", "command"); rp_jw_str(w, cmd);
    rp_jw_key(w, ", ", "version"); rp_jw_str(w, h->version);
    rp_jw_key(w, ", ", "commit"); rp_jw_str(w, h->commit);
    rp_jw_key(w, ", ", "build_type"); rp_jw_str(w, rp_jw_build_type());
    rp_jw_key(w, ", ", "allocator"); rp_jw_str(w, h->allocator);
    rp_jw_key(w, ",\n  ", "inject"); rp_jw_raw(w, "[");
    char ib[512];
    snprintf(ib, sizeof ib, "%s", h->inject ? h->inject : "");
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(ib, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        rp_jw_raw(w, k++ ? ", " : "");
        rp_jw_str(w, tok);
    }
    rp_jw_raw(w, "]");
    rp_jw_key(w, ", ", "compat"); rp_jw_str(w, h->compat);
}

static const char *mode_name(int persistent)
{
    return persistent ? "persistent" : "transient";
}

/* ---- oom ---- */

void st_oom_doc_begin(st_oom_doc *d, const st_doc_head *h)
{
    d->head = h;
    rp_jw *w = d->json ? rp_jw_open(d->f) : NULL;
    if (!w)
        return;
    head(w, RP_SCHEMA_OOM, "oom", h);
    if (h->shard_n) {   /* what `fakegc merge` checks: one shard of a campaign */
        rp_jw_key(w, ",\n  ", "shard"); rp_jw_raw(w, "["); rp_jw_u64(w, h->shard_k);
        rp_jw_raw(w, ", "); rp_jw_u64(w, h->shard_n); rp_jw_raw(w, "]");
        rp_jw_key(w, ", ", "host"); rp_jw_str(w, h->host);
        rp_jw_key(w, ", ", "campaign_files"); rp_jw_u64(w, h->campaign_files);
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

static void json_crash_finding(rp_jw *w, const st_oom_result *r)
{
    rp_jw_key(w, ",\n     ", "crash");
    if (r->crashed) {
        rp_jw_key(w, "{", "what"); rp_jw_str(w, r->crash);
        rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->crash_point);
        rp_jw_key(w, ", ", "mode"); rp_jw_str(w, mode_name(r->crash_persistent));
        rp_jw_raw(w, "}");
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_key(w, ", ", "finding");
    if (!r->finding) {
        rp_jw_raw(w, "null");
        return;
    }
    char kind[64];   /* a bad access: kind, statement, and the point it came at */
    wk_finding_kind(r->finding_what, kind, sizeof kind);
    rp_jw_key(w, "{", "kind"); rp_jw_str(w, kind);
    rp_jw_key(w, ", ", "line"); rp_jw_u64(w, r->finding_line);
    rp_jw_key(w, ", ", "what"); rp_jw_str(w, r->finding_what);
    rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->crash_point);
    rp_jw_key(w, ", ", "mode");
    rp_jw_str(w, r->crash_point ? mode_name(r->crash_persistent) : NULL);
    rp_jw_raw(w, "}");
}

/* The entry's opening: "file" and "status". */
static rp_jw *json_entry(st_oom_doc *d, const char *file, const char *status)
{
    rp_jw *w = rp_jw_open(d->f);
    if (!w)
        return NULL;
    rp_jw_key(w, d->scenarios + d->unparsed ? ",\n    {" : "\n    {", "file");
    rp_jw_str(w, file);
    rp_jw_key(w, ", ", "status"); rp_jw_str(w, status);
    return w;
}

static void json_scenario(st_oom_doc *d, const char *file, int rc, const st_oom_result *r)
{
    const char *status = rc < 0 ? "error" : r->finding ? "finding" : r->crashed ? "crash"
                       : r->nfindings ? "leak" : "ok";
    rp_jw *w = json_entry(d, file, status);
    if (!w)
        return;
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
    json_mode(w, ",\n     ", "transient", d->modes & 1, r->points[0], r->capped[0]);
    json_mode(w, ", ", "persistent", d->modes & 2, r->points[1], r->capped[1]);
    json_crash_finding(w, r);
    rp_jw_key(w, ", ", "findings_total"); rp_jw_u64(w, r->crashed ? 0 : r->nfindings);
    rp_jw_key(w, ", ", "findings"); rp_jw_raw(w, "[");
    for (uint32_t k = 0; !r->crashed && k < r->nfindings && k < ST_OOM_MAX_FINDINGS; k++) {
        rp_jw_key(w, k ? ", {" : "{", "mode"); rp_jw_str(w, mode_name(r->f[k].persistent));
        rp_jw_key(w, ", ", "point"); rp_jw_u64(w, r->f[k].point);
        rp_jw_key(w, ", ", "what"); rp_jw_str(w, r->f[k].what);
        rp_jw_raw(w, "}");
    }
    rp_jw_raw(w, "]}");
    rp_jw_close(w);
}

/* A finding, a crash or an internal error ends a scenario's loop: one line. */
static int text_ended(FILE *out, const char *file, int rc, const st_oom_result *r)
{
    if (rc < 0) {
        fprintf(out, "ERROR %s: the run without failures ended in an internal error\n", file);
    } else if (r->finding) {   /* a bad access: a finding about the scenario, with its site */
        char kind[64];
        wk_finding_kind(r->finding_what, kind, sizeof kind);
        fprintf(out, "FINDING %s:%u: %s ", file, r->finding_line, kind);
        if (r->crash_point)
            fprintf(out, "with allocation #%" PRIu64 " failing (%s)", r->crash_point,
                    mode_name(r->crash_persistent));
        else
            fputs("in the run without failures", out);
        fprintf(out, "; the loop stopped there\n  %s\n", r->finding_what);
    } else if (r->crashed) {
        fprintf(out, "CRASH %s: %s with allocation #%" PRIu64 " failing (%s)\n", file, r->crash,
                r->crash_point, mode_name(r->crash_persistent));
    } else {
        return 0;
    }
    return 1;
}

static void text_scenario(const st_oom_doc *d, const char *file, int rc,
                          const st_oom_result *r)
{
    FILE *out = d->f;
    if (text_ended(out, file, rc, r))
        return;
    if (!d->quiet || r->nfindings) {
        fprintf(out, "%-4s %s: %" PRIu64 " allocations; ", r->nfindings ? "LEAK" : "ok", file,
                r->allocations);
        if (!d->every)
            fprintf(out, "%" PRIu64 " contexts covered, %" PRIu64
                    " attempts skipped as duplicates; ", r->contexts, r->skipped);
        if (d->modes & 1)
            fprintf(out, "transient %" PRIu64 "%s", r->points[0], r->capped[0] ? " (capped)" : "");
        if (d->modes & 2)
            fprintf(out, "%spersistent %" PRIu64 "%s", d->modes & 1 ? ", " : "", r->points[1],
                    r->capped[1] ? " (capped)" : "");
        fprintf(out, " failure points; %u finding%s%s\n", r->nfindings,
                r->nfindings == 1 ? "" : "s",
                r->baseline_status != RP_PASS
                    ? " (fails without injected failures: judged on leaks only)" : "");
    }
    for (uint32_t k = 0; k < r->nfindings && k < ST_OOM_MAX_FINDINGS; k++)
        fprintf(out, "  %s #%" PRIu64 ": %s\n", mode_name(r->f[k].persistent), r->f[k].point,
                r->f[k].what);
    if (r->nfindings > ST_OOM_MAX_FINDINGS)
        fprintf(out, "  ... %u more\n", r->nfindings - ST_OOM_MAX_FINDINGS);
}

void st_oom_doc_scenario(st_oom_doc *d, const char *file, int rc, const st_oom_result *r)
{
    if (rc < 0 || r->finding) {
        d->findings++;
    } else if (r->crashed) {
        d->crashes++;
    } else {
        d->points += r->points[0] + r->points[1];
        d->findings += r->nfindings;
        d->contexts += r->contexts;
        d->skipped += r->skipped;
    }
    if (d->json)
        json_scenario(d, file, rc, r);
    else
        text_scenario(d, file, rc, r);
    d->scenarios++;
}

void st_oom_doc_unparsed(st_oom_doc *d, const char *file)
{
    rp_jw *w = d->json ? json_entry(d, file, "error") : NULL;
    if (w) {   /* the report says which files stopped the run */
        rp_jw_key(w, ", ", "error"); rp_jw_str(w, "does not parse");
        rp_jw_raw(w, "}");
        rp_jw_close(w);
    }
    d->unparsed++;
}

static void text_summary(const st_oom_doc *d)
{
    const st_doc_head *h = d->head;
    if (h->shard_n)
        fprintf(d->f, "oom: shard %u/%u of %zu files on %s\n", h->shard_k, h->shard_n,
                h->campaign_files, h->host);
    fprintf(d->f, "oom: %zu scenario%s, %" PRIu64 " failure points tried", d->scenarios,
            d->scenarios == 1 ? "" : "s", d->points);
    if (!d->every)
        fprintf(d->f, ", %" PRIu64 " contexts covered, %" PRIu64 " duplicates skipped",
                d->contexts, d->skipped);
    fprintf(d->f, ", %" PRIu64 " finding%s, %" PRIu64 " crash%s\n", d->findings,
            d->findings == 1 ? "" : "s", d->crashes, d->crashes == 1 ? "" : "es");
}

void st_oom_doc_end(st_oom_doc *d, const char *stopped)
{
    if (!d->json) {
        if (stopped)
            fprintf(d->f, "oom: stopped: %s\n", stopped);
        else
            text_summary(d);
        return;
    }
    rp_jw *w = rp_jw_open(d->f);
    if (!w)
        return;
    rp_jw_raw(w, "\n  ],\n  \"status\": ");
    rp_jw_str(w, stopped ? "error" : d->findings || d->crashes ? "fail" : "pass");
    rp_jw_key(w, ", ", "stopped"); rp_jw_str(w, stopped);
    rp_jw_key(w, ",\n  ", "summary");
    rp_jw_key(w, "{", "scenarios"); rp_jw_u64(w, d->scenarios);
    rp_jw_key(w, ", ", "failure_points"); rp_jw_u64(w, d->points);
    if (!stopped) {
        rp_jw_key(w, ", ", "contexts"); rp_jw_u64(w, d->contexts);
        rp_jw_key(w, ", ", "duplicates_skipped"); rp_jw_u64(w, d->skipped);
    }
    rp_jw_key(w, ", ", "findings"); rp_jw_u64(w, d->findings);
    rp_jw_key(w, ", ", "crashes"); rp_jw_u64(w, d->crashes);
    rp_jw_raw(w, "}\n}\n");
    rp_jw_close(w);
}

/* ---- stress ---- */

static void json_failure(rp_jw *w, const st_stress_result *r, const char *repro)
{
    rp_jw_key(w, ",\n  ", "failure");
    rp_jw_key(w, "{", "seed"); rp_jw_u64(w, r->fail_seed);
    rp_jw_key(w, ", ", "lifecycle_index"); rp_jw_u64(w, r->fail_index);
    rp_jw_key(w, ", ", "steps_to_detection"); rp_jw_u64(w, r->fail_steps);
    rp_jw_key(w, ", ", "reproduce"); rp_jw_str(w, repro);
    rp_jw_key(w, ", ", "class"); rp_jw_str(w, r->cls);
    rp_jw_key(w, ", ", "first"); rp_jw_str(w, r->first);
    if (r->cls_kind == ST_CK_FINDING) {   /* a bad access: its site and kind */
        char kind[64];
        wk_finding_kind(r->cls + 9, kind, sizeof kind);
        rp_jw_key(w, ", ", "finding");
        rp_jw_key(w, "{", "kind"); rp_jw_str(w, kind);
        rp_jw_key(w, ", ", "line"); rp_jw_u64(w, strtoul(r->first, NULL, 10));
        rp_jw_raw(w, "}");
    }
    rp_jw_key(w, ", ", "file"); rp_jw_str(w, r->file);
    rp_jw_key(w, ", ", "statements"); rp_jw_u64(w, r->file_statements);
    rp_jw_key(w, ", ", "min_file"); rp_jw_str(w, r->min_file);
    rp_jw_key(w, ", ", "min_statements"); rp_jw_u64(w, r->min_statements);
    rp_jw_key(w, ", ", "shrink_runs"); rp_jw_u64(w, r->shrink_runs);
    rp_jw_key(w, ", ", "reproducer"); rp_jw_str(w, r->min_text.p ? r->min_text.p : "");
    rp_jw_raw(w, "}");
}

/* The campaign: seed, shard, budget, order, weights. */
static void json_campaign(rp_jw *w, const st_stress_doc *d)
{
    const st_stress_opts *o = d->o;
    rp_jw_key(w, ",\n  ", "seed"); rp_jw_u64(w, o->seed);
    rp_jw_key(w, ", ", "shard"); rp_jw_raw(w, "["); rp_jw_u64(w, o->shard_k);
    rp_jw_raw(w, ", "); rp_jw_u64(w, o->shard_n); rp_jw_raw(w, "]");
    rp_jw_key(w, ", ", "lifecycle"); rp_jw_u64(w, o->cfg.steps);
    rp_jw_key(w, ", ", "check_every"); rp_jw_u64(w, o->check_every);
    rp_jw_key(w, ",\n  ", "host"); rp_jw_str(w, d->head->host);
    /* the campaign this shard is part of: lifecycles first, first+stride, ... */
    uint64_t budget = st_stress_lifecycles(o);
    rp_jw_key(w, ", ", "budget");
    rp_jw_key(w, "{", "steps"); rp_jw_u64(w, o->max_steps);
    rp_jw_key(w, ", ", "seconds"); rp_jw_num(w, o->max_seconds);
    rp_jw_key(w, ", ", "lifecycles");
    if (budget == UINT64_MAX)
        rp_jw_raw(w, "null");
    else
        rp_jw_u64(w, budget);
    rp_jw_raw(w, "}");
    rp_jw_key(w, ", ", "lifecycle_first"); rp_jw_u64(w, o->shard_k);
    rp_jw_key(w, ", ", "lifecycle_stride"); rp_jw_u64(w, o->shard_n ? o->shard_n : 1);
    static const char *const order[] = {"callbacks_reverse", "defer_callbacks",
                                        "address_reuse", "weak_clear_late"};
    rp_jw_key(w, ",\n  ", "order");
    for (int i = 0; i < 4; i++) {
        rp_jw_key(w, i ? ", " : "{", order[i]);
        rp_jw_bool(w, d->order[i]);
    }
    rp_jw_raw(w, "}");
    rp_jw_key(w, ", ", "gc"); rp_jw_str(w, d->gc_stress ? "stress" : "manual");
    rp_jw_key(w, ",\n  ", "weights");
    for (int i = 0; i < ST_W_COUNT; i++) {
        rp_jw_key(w, i ? ", " : "{", st_weight_name(i));
        rp_jw_u64(w, o->cfg.weights.w[i]);
    }
    rp_jw_raw(w, "}");
}

static void json_stress(const st_stress_doc *d, int rc, const st_stress_result *r)
{
    rp_jw *w = rp_jw_open(d->f);
    if (!w)
        return;
    head(w, RP_SCHEMA_STRESS, "stress", d->head);
    rp_jw_key(w, ",\n  ", "status"); rp_jw_str(w, rc < 0 ? "error" : r->failed ? "fail" : "pass");
    json_campaign(w, d);
    rp_jw_key(w, ",\n  ", "steps"); rp_jw_u64(w, r->steps);
    rp_jw_key(w, ", ", "statements"); rp_jw_u64(w, r->statements);
    rp_jw_key(w, ", ", "lifecycles"); rp_jw_u64(w, r->lifecycles);
    rp_jw_key(w, ", ", "seconds"); rp_jw_fixed(w, r->seconds, 3);
    rp_jw_key(w, ", ", "steps_per_second");
    rp_jw_fixed(w, r->seconds > 0 ? (double)r->steps / r->seconds : 0, 0);
    rp_jw_key(w, ", ", "max_live_objects"); rp_jw_u64(w, r->max_live);
    rp_jw_key(w, ",\n  ", "failures"); rp_jw_i64(w, r->failed);
    if (r->failed)
        json_failure(w, r, d->repro);
    rp_jw_raw(w, "\n}\n");
    rp_jw_close(w);
}

/* How to replay the reproducer with `fakegc run`: the allocator too (a
 * guard finding needs the guard); no --verify for a finding, whose broken
 * heap --verify would report one statement earlier as an invariant. */
static void text_rerun(const st_stress_doc *d, const st_stress_result *r)
{
    const st_doc_head *h = d->head;
    int guarded = r->cls_kind == ST_CK_FINDING;
    int libc = strcmp(h->allocator, "libc") == 0;
    if (h->inject && *h->inject && (r->min_file[0] || r->file[0]))
        fprintf(d->f, "\nreproduce: fakegc run%s --inject %s%s%s%s%s %s\n",
                guarded ? "" : " --verify", h->inject, libc ? "" : " --allocator ",
                libc ? "" : h->allocator, h->compat ? " --compat " : "",
                h->compat ? h->compat : "", r->min_file[0] ? r->min_file : r->file);
}

static void text_stress(const st_stress_doc *d, const st_stress_result *r)
{
    FILE *out = d->f;
    if (r->failed) {
        fprintf(out, "FAIL stress seed %" PRIu64 " after %" PRIu64 " steps: %s\n", r->fail_seed,
                r->fail_steps, r->cls);
        fprintf(out, "  first failure: %s\n", r->first);
        if (r->file[0])
            fprintf(out, "  lifecycle: %s (%zu statements)\n", r->file, r->file_statements);
        if (r->min_file[0])
            fprintf(out, "  reproducer: %s (%zu statements, %u runs to shrink)\n\n",
                    r->min_file, r->min_statements, r->shrink_runs);
        if (r->min_text.p)
            fputs(r->min_text.p, out);
        fprintf(out, "\nlifecycle %" PRIu64 " alone, in one process: %s\n", r->fail_index,
                d->repro);
        if (r->write_error)
            fprintf(out, "  (could not write %s: %s)\n", r->unwritten, strerror(r->write_error));
        text_rerun(d, r);
    }
    double sps = r->seconds > 0 ? (double)r->steps / r->seconds : 0;
    if (!d->quiet || r->failed)
        fprintf(out, "stress: %" PRIu64 " steps (%" PRIu64 " statements, %" PRIu64
                " lifecycles) in %.2f s, %.0f steps/s, %d failure%s\n", r->steps,
                r->statements, r->lifecycles, r->seconds, sps, r->failed,
                r->failed == 1 ? "" : "s");
}

/* The failure of a campaign as a finding. */
static void stress_finding(const st_stress_doc *d, const st_stress_result *r, rp_finding *x)
{
    memset(x, 0, sizeof *x);
    if (r->cls_kind == ST_CK_EXPECT || r->cls_kind == ST_CK_EXPECT_TENSOR) {
        rp_expect_rule(r->query, x->rule, sizeof x->rule);
        x->rule_name = "FailedExpectation";
        x->rule_text = "An expectation the stress model predicted did not hold.";
    } else {
        /* "finding: heap invariant" -> fakegc/stress/finding-heap-invariant */
        size_t k = (size_t)snprintf(x->rule, sizeof x->rule, "fakegc/stress/");
        for (const char *c = r->cls; *c && k + 1 < sizeof x->rule; c++) {
            if (isalnum((unsigned char)*c))
                x->rule[k++] = (char)tolower((unsigned char)*c);
            else if (x->rule[k - 1] != '-' && x->rule[k - 1] != '/')
                x->rule[k++] = '-';
        }
        x->rule[k] = '\0';
        x->rule_name = "StressFailure";
        x->rule_text = "A heap or memo invariant, or the strict end check, failed under stress.";
    }
    x->level = RP_LV_ERROR;
    x->scenario = r->file[0] ? r->file : NULL;
    snprintf(x->title, sizeof x->title, "fakegc stress: %s", r->cls);
    snprintf(x->message, sizeof x->message,
             "stress seed %" PRIu64 " after %" PRIu64 " steps: %s; first failure: %s%s%s%s%s",
             r->fail_seed, r->fail_steps, r->cls, r->first,
             r->min_file[0] ? "; reproducer: " : "", r->min_file,
             d->repro && d->repro[0] ? "; reproduce: " : "", d->repro ? d->repro : "");
    snprintf(x->at.file, sizeof x->at.file, "%s", r->file);
    x->at.line = (uint32_t)strtoul(r->first, NULL, 10);   /* "45: expect ..." */
    if (r->min_file[0]) {
        rp_loc *l = &x->related[x->nrelated++];
        snprintf(l->file, sizeof l->file, "%s", r->min_file);
        snprintf(l->what, sizeof l->what, "the failure shrunk to %zu statements",
                 r->min_statements);
    }
}

static int scan_stress(const st_stress_doc *d, int rc, const st_stress_result *r, FILE *f,
                       int sarif)
{
    rp_finding x;
    int failed = rc == 0 && r->failed;
    if (failed)
        stress_finding(d, r, &x);
    if (!sarif) {
        if (failed)
            rp_gh_finding(f, &x);
        fprintf(f, "fakegc stress: %d error%s\n", failed, failed == 1 ? "" : "s");
        return ferror(f) ? -1 : 0;
    }
    rp_sarif s;
    if (rp_sarif_begin(&s, f, "stress", d->head->version) < 0)
        return -1;
    if (failed)
        rp_sarif_add(&s, &x);
    return rp_sarif_end(&s, rc == 0);
}

int st_stress_doc_write(const st_stress_doc *d, int rc, const st_stress_result *r)
{
    int w = 0;
    if (d->scan)
        w = scan_stress(d, rc, r, d->f, d->scan == 1);
    else if (d->json)
        json_stress(d, rc, r);
    else
        text_stress(d, r);
    if (d->sarif && scan_stress(d, rc, r, d->sarif, 1) < 0)
        w = -1;
    return w;
}
