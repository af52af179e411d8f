/* rp_json.c - the JSON report (cli.md "JSON report"), keys in a fixed
 * order. Objects and failures are written one per line so that a report of
 * a million retained objects stays greppable; output goes through a private
 * 64 KiB buffer (rp_jw.h). */
#include "report/rp_int.h"
#include "report/rp_find.h"
#include "report/rp_jw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "heap/hp_class.h"

typedef rp_jw jw;

static void site(jw *w, obj_site s)
{
    char buf[512];
    rp_site(s, buf, sizeof buf);
    rp_jw_str(w, buf);
}

static void record(jw *w, const hp_retained *r)
{
    rp_jw_key(w, "{", "id"); rp_jw_u64(w, r->id);
    rp_jw_key(w, ", ", "kind"); rp_jw_str(w, obj_kind_name(r->kind));
    rp_jw_key(w, ", ", "created"); site(w, r->site);
    rp_jw_key(w, ", ", "bytes"); rp_jw_u64(w, r->bytes);
    rp_jw_key(w, ", ", "retained_bytes"); rp_jw_u64(w, r->retained_bytes);
    rp_jw_key(w, ", ", "reason"); rp_jw_str(w, hp_reason_name(r->reason));
    rp_jw_key(w, ", ", "path");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < r->path_len; i++) {
        if (i)
            rp_jw_put(w, ", ", 2);
        rp_jw_str(w, r->path[i]);
    }
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ", ", "type"); rp_jw_str(w, r->type_name);
    rp_jw_key(w, ", ", "describe"); rp_jw_str(w, r->describe);
    rp_jw_key(w, ", ", "holder"); rp_jw_str(w, hp_holder_name(r->holder));
    rp_jw_put(w, "}", 1);
}

static void group(jw *w, const hp_group *g, const hp_retained *recs, size_t nrecs)
{
    rp_jw_key(w, "{", "count"); rp_jw_u64(w, g->count);
    rp_jw_key(w, ", ", "kind"); rp_jw_str(w, obj_kind_name(g->kind));
    rp_jw_key(w, ", ", "type"); rp_jw_str(w, g->type_name);
    rp_jw_key(w, ", ", "created"); site(w, g->site);
    rp_jw_key(w, ", ", "reason"); rp_jw_str(w, hp_reason_name(g->reason));
    rp_jw_key(w, ", ", "bytes_each"); rp_jw_u64(w, g->bytes_each);
    rp_jw_key(w, ", ", "total_bytes"); rp_jw_u64(w, g->total_bytes);
    rp_jw_key(w, ", ", "total_retained"); rp_jw_u64(w, g->total_retained);
    rp_jw_key(w, ", ", "via"); rp_jw_str(w, g->via);
    rp_jw_key(w, ", ", "examples");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < g->nexamples && g->example + i < nrecs; i++) {
        if (i)
            rp_jw_put(w, ", ", 2);
        rp_jw_u64(w, recs[g->example + i].id);
    }
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ", ", "holder"); rp_jw_str(w, hp_holder_name(g->holder));
    rp_jw_raw(w, "}");
}

/* Biggest retainers: [{"id", "type", "retained_bytes", "count",
 * "main_count", "main_kind", "main_via", "path"}] */
/* [a, b, c] */
static void triple(rp_jw *w, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t v[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        rp_jw_put(w, i ? ", " : "[", i ? 2 : 1);
        rp_jw_u64(w, v[i]);
    }
    rp_jw_put(w, "]", 1);
}

/* "dtree": the aggregated dominator tree the page draws (hp_dtree), or
 * null: {"line", "objects", "groups_seen", "unexpanded", "nodes": [{"parent"
 * (-1: top), "kind", "type" (null: a top-level node), "label", "example",
 * "id", "count", "shallow", "retained", "more": [groups, count, retained],
 * "expanded", "zombie"}]}. Parents come before their children. */
static void dtree(rp_jw *w, const rp_scenario *s)
{
    const hp_dtree *t = &s->dtree;
    rp_jw_key(w, ",\n      ", "dtree");
    if (!t->n) {
        rp_jw_put(w, "null", 4);
        return;
    }
    rp_jw_key(w, "{", "line"); rp_jw_u64(w, s->dtree_line);
    rp_jw_key(w, ", ", "objects"); rp_jw_u64(w, t->objects);
    rp_jw_key(w, ", ", "groups_seen"); rp_jw_u64(w, t->groups_seen);
    rp_jw_key(w, ", ", "unexpanded"); rp_jw_u64(w, t->unexpanded);
    rp_jw_key(w, ", ", "nodes");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < t->n; i++) {
        const hp_dnode *d = &t->nodes[i];
        rp_jw_key(w, i ? ",\n        {" : "\n        {", "parent");
        rp_jw_i64(w, d->parent == HP_DT_TOP ? -1 : (int64_t)d->parent);
        rp_jw_key(w, ", ", "kind"); rp_jw_str(w, obj_kind_name(d->kind));
        rp_jw_key(w, ", ", "type"); rp_jw_str(w, d->type_name);
        rp_jw_key(w, ", ", "label"); rp_jw_str(w, d->label);
        rp_jw_key(w, ", ", "example"); rp_jw_str(w, d->example);
        rp_jw_key(w, ", ", "id"); rp_jw_u64(w, d->first_id);
        rp_jw_key(w, ", ", "count"); rp_jw_u64(w, d->count);
        rp_jw_key(w, ", ", "shallow"); rp_jw_u64(w, d->shallow);
        rp_jw_key(w, ", ", "retained"); rp_jw_u64(w, d->retained);
        rp_jw_key(w, ", ", "more");
        triple(w, d->more_groups, d->more_count, d->more_retained);
        rp_jw_key(w, ", ", "expanded"); rp_jw_bool(w, d->expanded);
        rp_jw_key(w, ", ", "zombie"); rp_jw_bool(w, d->zombie);
        rp_jw_put(w, "}", 1);
    }
    rp_jw_put(w, "]}", 2);
}

static void class_counts(jw *w, const uint64_t *v, const char *sep)
{
    for (int c = 0; c < HP_CL_COUNT; c++) {
        rp_jw_key(w, c ? ", " : sep, hp_class_word((hp_class)c));
        rp_jw_u64(w, v[c]);
    }
}

static void verdict_group(jw *w, const rp_vgroup *g, int first)
{
    char buf[256];
    rp_jw_key(w, first ? "\n          {" : ",\n          {", "class");
    rp_jw_str(w, hp_class_name(g->cls));
    rp_jw_key(w, ", ", "kind"); rp_jw_str(w, fk_category_noun(g->cat, g->count));
    rp_jw_key(w, ", ", "count"); rp_jw_u64(w, g->count);
    rp_jw_key(w, ", ", "bytes"); rp_jw_u64(w, g->bytes);
    rp_jw_key(w, ", ", "retained_bytes"); rp_jw_u64(w, g->retained);
    rp_vgroup_site(g, buf, sizeof buf);
    rp_jw_key(w, ", ", "site"); rp_jw_str(w, buf);
    rp_vgroup_holder(g, buf, sizeof buf);
    rp_jw_key(w, ", ", "holder"); rp_jw_str(w, buf);
    rp_jw_key(w, ", ", "path"); rp_jw_str(w, g->path);
    rp_jw_key(w, ", ", "rounds");
    triple(w, g->first_round, g->last_round, g->rounds);
    rp_jw_key(w, ", ", "suppressed"); rp_jw_bool(w, g->suppressed);
    rp_jw_key(w, ", ", "category"); rp_jw_str(w, fk_category_word(g->cat));
    rp_jw_key(w, ", ", "root"); rp_jw_str(w, rp_root_kind_word(g->root));
    rp_jw_key(w, ", ", "mechanism");
    rp_jw_str(w, g->mech ? rp_mechanism_word(g->mech) : NULL);
    rp_jw_key(w, ", ", "converter"); rp_jw_u64(w, g->converter);
    rp_jw_key(w, ", ", "to_sweep"); rp_jw_i64(w, g->to_sweep);
    rp_jw_key(w, ", ", "mark_from"); rp_jw_str(w, g->mark_from[0] ? g->mark_from : NULL);
    rp_jw_key(w, ", ", "mark_to"); rp_jw_str(w, g->mark_to[0] ? g->mark_to : NULL);
    rp_jw_put(w, "}", 1);
}

/* "leaks": each leak's line and facts (rp_vleak: derived from the groups,
 * so not read back), its groups by index. */
static void verdict_leaks(jw *w, const rp_verdict *v)
{
    rp_jw_put(w, "[", 1);
    char buf[400];
    for (size_t i = 0, n = 0; i < v->ngroups; i++) {
        if (!rp_verdict_leak_line(v, i, buf, sizeof buf))
            continue;
        rp_vleak l;
        rp_verdict_leak(v, i, &l);
        rp_jw_key(w, n++ ? ",\n          {" : "\n          {", "summary"); rp_jw_str(w, buf);
        rp_jw_key(w, ", ", "class"); rp_jw_str(w, hp_class_name(v->groups[i].cls));
        rp_vgroup_site(&v->groups[i], buf, sizeof buf);
        rp_jw_key(w, ", ", "site"); rp_jw_str(w, buf);
        rp_vgroup_holder(&v->groups[i], buf, sizeof buf);
        rp_jw_key(w, ", ", "holder"); rp_jw_str(w, buf);
        rp_jw_key(w, ", ", "count"); rp_jw_u64(w, l.total);
        rp_jw_key(w, ", ", "groups");
        rp_jw_put(w, "[", 1);
        for (size_t k = i, m = 0; k < v->ngroups; k++)
            if (rp_verdict_leak_of(v, k) == i) {
                rp_jw_put(w, ", ", m++ ? 2 : 0);
                rp_jw_u64(w, k);
            }
        rp_jw_put(w, "]}", 2);
    }
    rp_jw_put(w, "]", 1);
}

/* "verdict": the counts per class, its text lines (rp_verdict_text), every
 * group (groups_total of them) and leak, then the facts behind the text:
 * the verdict's line and the program's site then, the classes it fails on,
 * bytes per class and the suppression rules' counts. */
static int verdict(jw *w, const rp_verdict *v)
{
    class_counts(w, v->count, "{");
    rp_jw_key(w, ", ", "suppressed"); rp_jw_u64(w, v->suppressed);
    char *text = rp_verdict_text(v);
    rp_jw_key(w, ", ", "text"); rp_jw_str(w, text ? text : "");
    int ok = text != NULL;
    free(text);
    char sum[600];   /* the one line a CI shows as the failure message */
    rp_verdict_summary(v, sum, sizeof sum);
    rp_jw_key(w, ", ", "summary"); rp_jw_str(w, sum);
    rp_jw_key(w, ",\n        ", "groups_total"); rp_jw_u64(w, v->ngroups);
    rp_jw_key(w, ", ", "groups");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < v->ngroups; i++)
        verdict_group(w, &v->groups[i], i == 0);
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ",\n        ", "leaks");
    verdict_leaks(w, v);
    rp_jw_key(w, ",\n        ", "line"); rp_jw_u64(w, v->line);
    rp_jw_key(w, ", ", "program_file"); rp_jw_str(w, v->at_file[0] ? v->at_file : NULL);
    rp_jw_key(w, ", ", "program_line"); rp_jw_u64(w, v->at_line);
    if (v->ended[0]) {
        rp_jw_key(w, ", ", "program_ended"); rp_jw_str(w, v->ended);
    }
    rp_jw_key(w, ", ", "fails_on");
    rp_jw_put(w, "[", 1);
    for (int c = 0, n = 0; c < HP_CL_COUNT; c++)
        if (v->fails_on & (1u << c)) {
            rp_jw_put(w, ", ", n++ ? 2 : 0);
            rp_jw_str(w, hp_class_word((hp_class)c));
        }
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ", ", "bytes");
    class_counts(w, v->bytes, "{");
    rp_jw_put(w, "}", 1);
    rp_jw_key(w, ", ", "suppressions");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < v->nsupp; i++) {
        rp_jw_key(w, i ? ", {" : "{", "rule"); rp_jw_str(w, v->supp[i].rule);
        rp_jw_key(w, ", ", "category"); rp_jw_str(w, fk_category_word(v->supp[i].cat));
        rp_jw_key(w, ", ", "count"); rp_jw_u64(w, v->supp[i].count);
        rp_jw_put(w, "}", 1);
    }
    rp_jw_put(w, "]}", 2);
    return ok ? 0 : -1;
}

/* Live objects per kind at the start, at each checkpoint and at the end
 * (the page's growth table), a row per kind with any: written after
 * "checkpoints" when the runner counted them, so that a report read back
 * (a --jobs worker's) has them too. */
static void kinds_live(jw *w, const rp_scenario *s)
{
    if (!s->kinds_known)
        return;
    rp_jw_key(w, ",\n      ", "kinds_live");
    rp_jw_put(w, "[", 1);
    int first = 1;
    for (int k = 0; k < OBJ_KIND_COUNT; k++) {
        int used = s->kinds_start[k] || s->kinds_end[k];
        for (size_t i = 0; i < s->ncheckpoints; i++)
            used |= s->checkpoints[i].kinds[k] != 0;
        if (!used)
            continue;
        rp_jw_key(w, first ? "{" : ", {", "kind"); rp_jw_str(w, obj_kind_name((obj_kind)k));
        first = 0;
        rp_jw_key(w, ", ", "begin"); rp_jw_u64(w, s->kinds_start[k]);
        rp_jw_key(w, ", ", "end"); rp_jw_u64(w, s->kinds_end[k]);
        rp_jw_key(w, ", ", "checkpoints");
        rp_jw_put(w, "[", 1);
        for (size_t i = 0; i < s->ncheckpoints; i++) {
            if (i)
                rp_jw_put(w, ", ", 2);
            rp_jw_u64(w, s->checkpoints[i].kinds[k]);
        }
        rp_jw_put(w, "]}", 2);
    }
    rp_jw_put(w, "]", 1);
}

static void biggest(jw *w, const hp_top *t, size_t n)
{
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < n; i++) {
        rp_jw_key(w, i ? ", {" : "{", "id"); rp_jw_u64(w, t[i].id);
        rp_jw_key(w, ", ", "kind"); rp_jw_str(w, obj_kind_name(t[i].kind));
        rp_jw_key(w, ", ", "type"); rp_jw_str(w, t[i].type_name);
        rp_jw_key(w, ", ", "retained_bytes"); rp_jw_u64(w, t[i].retained_bytes);
        rp_jw_key(w, ", ", "count"); rp_jw_u64(w, t[i].count);
        rp_jw_key(w, ", ", "main_count"); rp_jw_u64(w, t[i].main_count);
        rp_jw_key(w, ", ", "main_kind"); rp_jw_str(w, obj_kind_name(t[i].main_kind));
        rp_jw_key(w, ", ", "main_via"); rp_jw_str(w, t[i].main_via);
        rp_jw_key(w, ", ", "path"); rp_jw_str(w, t[i].path);
        rp_jw_put(w, "}", 1);
    }
    rp_jw_put(w, "]", 1);
}

/* cli.md: a failure's actual is a number when the value is one. */
static void actual(jw *w, const char *a)
{
    if (a && *a) {
        char *end;
        const char *p = a + (*a == '-');
        int digits = *p >= '0' && *p <= '9' && !(p[0] == '0' && p[1]);
        if (digits) {
            long long v = strtoll(a, &end, 10);
            if (*end == '\0') {
                rp_jw_i64(w, (int64_t)v);
                return;
            }
        }
    }
    rp_jw_str(w, a);
}

/* A failure's objects, bounded: one that reports the same objects as an
 * earlier failure of its scenario refers to it ("same_objects_as": its
 * line); past JSON_DETAILED failures with objects per scenario, only the
 * totals ("objects_omitted": true); at most JSON_GROUPS groups each
 * ("groups_total" counts them all), with their examples. Every total is
 * still stated; `--objects` streams every object. */
enum { JSON_DETAILED = 50, JSON_GROUPS = 20 };

static void failure(jw *w, const rp_scenario *sc, size_t idx, size_t *detailed)
{
    const rp_failure *x = &sc->failures[idx];
    long same = rp_failure_shares(sc, idx);
    int omit = same < 0 && (x->nobjects || x->ngroups) && *detailed >= JSON_DETAILED;
    int show = same < 0 && !omit;
    if (show && (x->nobjects || x->ngroups))
        (*detailed)++;
    rp_jw_key(w, "{", "line"); rp_jw_u64(w, x->line);
    rp_jw_key(w, ", ", "text"); rp_jw_str(w, x->text);
    rp_jw_key(w, ", ", "actual"); actual(w, x->actual);
    rp_jw_key(w, ", ", "message"); rp_jw_str(w, x->message);
    rp_jw_key(w, ", ", "col"); rp_jw_u64(w, x->col);
    if (x->kind != RP_FK_EXPECT) {
        rp_jw_key(w, ", ", "kind"); rp_jw_str(w, rp_fail_kind_word(x->kind));
    }
    if (x->prog_file) {
        rp_jw_key(w, ", ", "program_file"); rp_jw_str(w, x->prog_file);
        rp_jw_key(w, ", ", "program_line"); rp_jw_u64(w, x->prog_line);
    }
    if (x->query[0]) {
        rp_jw_key(w, ", ", "query"); rp_jw_str(w, x->query);
    }
    size_t ng = x->ngroups;
    const hp_group *gs = x->groups;
    size_t keep = !show ? 0 : ng < JSON_GROUPS ? ng : JSON_GROUPS;
    rp_jw_key(w, ", ", "objects");
    rp_jw_put(w, "[", 1);
    int first = 1;
    for (size_t g = 0; g < keep; g++)
        for (size_t i = 0; i < gs[g].nexamples && gs[g].example + i < x->nobjects; i++) {
            if (!first)
                rp_jw_put(w, ", ", 2);
            first = 0;
            record(w, &x->objects[gs[g].example + i]);
        }
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ", ", "objects_total"); rp_jw_u64(w, rp_failure_total(x));
    rp_jw_key(w, ", ", "groups");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < keep; i++) {
        if (i)
            rp_jw_put(w, ", ", 2);
        group(w, &gs[i], x->objects, x->nobjects);
    }
    rp_jw_put(w, "]", 1);
    if (show && ng > keep) {
        rp_jw_key(w, ", ", "groups_total"); rp_jw_u64(w, ng);
    }
    if (same >= 0) {
        rp_jw_key(w, ", ", "same_objects_as"); rp_jw_u64(w, sc->failures[same].line);
    }
    if (omit) {
        rp_jw_key(w, ", ", "objects_omitted"); rp_jw_raw(w, "true");
    }
    if (x->nkinds) {
        rp_jw_key(w, ", ", "kinds");
        rp_jw_put(w, "[", 1);
        for (size_t i = 0; i < x->nkinds; i++) {
            rp_jw_key(w, i ? ", {" : "{", "kind"); rp_jw_str(w, obj_kind_name(x->kinds[i].kind));
            rp_jw_key(w, ", ", "now"); rp_jw_u64(w, x->kinds[i].now);
            rp_jw_key(w, ", ", "delta"); rp_jw_i64(w, x->kinds[i].delta);
            rp_jw_put(w, "}", 1);
        }
        rp_jw_put(w, "]", 1);
    }
    rp_jw_key(w, ", ", "biggest");
    biggest(w, x->top, show ? x->ntop : 0);
    rp_jw_raw(w, "}");
}

static const char *const ITEM = ",\n        ", *FIRST = "\n        ";

static int scenario(jw *w, const rp_run *run, const rp_scenario *s)
{
    int rc = 0;
    /* a recording is named after its program (rp_run.program), the
     * recording itself beside it */
    rp_jw_key(w, "    {\n      ", "file"); rp_jw_str(w, rp_scenario_name(run, s));
    if (run->program && run->n == 1) {
        rp_jw_key(w, ",\n      ", "recording"); rp_jw_str(w, s->file);
    }
    rp_jw_key(w, ",\n      ", "status"); rp_jw_str(w, rp_status_name(s->status));
    rp_jw_key(w, ",\n      ", "expectations");
    rp_jw_key(w, "{", "passed"); rp_jw_u64(w, s->passed);
    rp_jw_key(w, ", ", "failed"); rp_jw_u64(w, s->failed);
    rp_jw_put(w, "}", 1);
    rp_jw_key(w, ",\n      ", "failures");
    rp_jw_put(w, "[", 1);
    size_t detailed = 0;
    for (size_t i = 0; i < s->nfailures; i++) {
        rp_jw_raw(w, i ? ITEM : FIRST);
        failure(w, s, i, &detailed);
    }
    rp_jw_raw(w, s->nfailures ? "\n      ]" : "]");
    rp_jw_key(w, ",\n      ", "retained");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < s->nretained; i++) {
        rp_jw_raw(w, i ? ITEM : FIRST);
        record(w, &s->retained[i]);
    }
    rp_jw_raw(w, s->nretained ? "\n      ]" : "]");
    rp_jw_key(w, ",\n      ", "stats");
    rp_jw_key(w, "{", "statements"); rp_jw_u64(w, s->statements);
    rp_jw_key(w, ", ", "allocations"); rp_jw_u64(w, s->allocations);
    rp_jw_key(w, ", ", "peak_bytes"); rp_jw_u64(w, s->peak_bytes);
    rp_jw_key(w, ", ", "wall_ms"); rp_jw_num(w, s->wall_ms);
    rp_jw_key(w, ", ", "leaked_bytes"); rp_jw_u64(w, s->leaked_bytes);
    rp_jw_key(w, ", ", "footprint_bytes"); rp_jw_u64(w, s->footprint_bytes);
    rp_jw_put(w, "}", 1);

    const hp_group *gs = s->groups;
    size_t ng = s->ngroups;
    rp_jw_key(w, ",\n      ", "groups");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < ng; i++) {
        rp_jw_raw(w, i ? ITEM : FIRST);
        group(w, &gs[i], s->retained, s->nretained);
    }
    rp_jw_raw(w, ng ? "\n      ]" : "]");
    rp_jw_key(w, ",\n      ", "retained_total");
    rp_jw_u64(w, s->retained_total ? s->retained_total : s->nretained);
    rp_jw_key(w, ",\n      ", "biggest");
    biggest(w, s->top, s->ntop);

    rp_jw_key(w, ",\n      ", "checkpoints");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < s->ncheckpoints; i++) {
        rp_jw_key(w, i ? ", {" : "{", "name"); rp_jw_str(w, s->checkpoints[i].name);
        rp_jw_key(w, ", ", "growth"); rp_jw_i64(w, s->checkpoints[i].growth);
        rp_jw_put(w, "}", 1);
    }
    rp_jw_put(w, "]", 1);
    kinds_live(w, s);
    rp_jw_key(w, ",\n      ", "verdict");
    if (s->verdict && verdict(w, s->verdict) != 0)
        rc = -1;
    else if (!s->verdict)
        rp_jw_put(w, "null", 4);
    rp_jw_key(w, ",\n      ", "whatif");
    if (s->whatif) {
        rp_jw_key(w, "{", "skipped_fidelity"); rp_jw_u64(w, s->skipped_fidelity);
        rp_jw_key(w, ", ", "memo_peak"); rp_jw_u64(w, s->memo_peak);
        rp_jw_key(w, ", ", "memo_final"); rp_jw_u64(w, s->memo_final);
        rp_jw_key(w, ", ", "pending_peak"); rp_jw_u64(w, s->pending_peak);
        rp_jw_key(w, ", ", "pending_final"); rp_jw_u64(w, s->pending_final);
        rp_jw_key(w, ", ", "text"); rp_jw_str(w, s->whatif);
        rp_jw_put(w, "}", 1);
    } else {
        rp_jw_put(w, "null", 4);
    }
    dtree(w, s);
    rp_jw_key(w, ",\n      ", "error"); rp_jw_str(w, s->error);
    rp_jw_key(w, ",\n      ", "not_judged");
    if (s->stop_site) {
        rp_jw_key(w, "{", "site"); rp_jw_str(w, s->stop_site);
        rp_jw_key(w, ", ", "why"); rp_jw_str(w, s->stop_why ? s->stop_why : "");
        rp_jw_put(w, "}", 1);
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_key(w, ",\n      ", "valgrind");
    if (s->valgrind_checked) {
        rp_jw_key(w, "{", "definite"); rp_jw_u64(w, s->valgrind_definite);
        rp_jw_key(w, ", ", "indirect"); rp_jw_u64(w, s->valgrind_indirect);
        rp_jw_put(w, "}", 1);
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_raw(w, "\n    }");
    return rc;
}

int rp_write_json(const rp_run *run, FILE *f)
{
    jw *w = rp_jw_open(f);
    if (!w)
        return er_set(ER_OOM, "out of memory writing the JSON report");
    int rc = 0;
    rp_jw_key(w, "{\n  ", "schema"); rp_jw_str(w, RP_SCHEMA_REPORT);
    rp_jw_key(w, ", ", "tool"); rp_jw_str(w, run->tool ? run->tool : "fakegc");
    rp_jw_key(w, ", ", "version"); rp_jw_str(w, run->version ? run->version : "");
    if (run->commit) {
        rp_jw_key(w, ", ", "commit"); rp_jw_str(w, run->commit);
        rp_jw_key(w, ", ", "build_type"); rp_jw_str(w, rp_jw_build_type());
    }
    rp_jw_key(w, ", ", "allocator"); rp_jw_str(w, run->allocator ? run->allocator : "libc");
    rp_jw_key(w, ",\n  ", "inject");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < run->ninject; i++) {
        if (i)
            rp_jw_put(w, ", ", 2);
        rp_jw_str(w, run->inject[i]);
    }
    rp_jw_put(w, "]", 1);
    rp_jw_key(w, ", ", "compat"); rp_jw_str(w, run->compat);
    if (run->shard_n) {
        rp_jw_key(w, ",\n  ", "shard");
        rp_jw_put(w, "[", 1); rp_jw_u64(w, run->shard_k); rp_jw_put(w, ", ", 2); rp_jw_u64(w, run->shard_n);
        rp_jw_put(w, "]", 1);
        rp_jw_key(w, ", ", "host"); rp_jw_str(w, run->host);
        rp_jw_key(w, ", ", "campaign_files"); rp_jw_u64(w, run->shard_total);
    }
    rp_jw_key(w, ",\n  ", "status"); rp_jw_str(w, rp_run_status(run));
    rp_jw_key(w, ", ", "stopped"); rp_jw_str(w, run->stopped);
    rp_jw_key(w, ",\n  ", "scenarios");
    rp_jw_put(w, "[", 1);
    for (size_t i = 0; i < run->n; i++) {
        rp_jw_raw(w, i ? ",\n" : "\n");
        if (scenario(w, run, &run->scenarios[i]) != 0)
            rc = -1;
    }
    rp_jw_raw(w, run->n ? "\n  ]" : "]");
    rp_jw_key(w, ",\n  ", "summary");
    rp_jw_key(w, "{", "passed"); rp_jw_u64(w, run->passed);
    rp_jw_key(w, ", ", "failed"); rp_jw_u64(w, run->failed);
    rp_jw_key(w, ", ", "skipped"); rp_jw_u64(w, run->skipped);
    rp_jw_key(w, ", ", "errors"); rp_jw_u64(w, run->errors);
    rp_jw_raw(w, "}");
    if (run->interrupted) {
        rp_jw_key(w, ",\n  ", "interrupted"); rp_jw_str(w, run->interrupted);
        rp_jw_key(w, ", ", "planned"); rp_jw_u64(w, run->planned);
    }
    rp_jw_raw(w, "\n}\n");
    rp_jw_close(w);
    if (rc)
        er_set(ER_OOM, "out of memory grouping retained objects");
    return rc;
}

int rp_write_object_line(FILE *f, const char *scenario, uint32_t line, const hp_retained *r)
{
    jw *w = rp_jw_open(f);
    if (!w) {
        er_set(ER_OOM, "out of memory writing an object line");
        return -1;
    }
    rp_jw_key(w, "{", "schema"); rp_jw_str(w, RP_SCHEMA_OBJECTS);
    rp_jw_key(w, ", ", "scenario"); rp_jw_str(w, scenario);
    rp_jw_key(w, ", ", "line"); rp_jw_u64(w, line);
    rp_jw_key(w, ", ", "object");
    record(w, r);
    rp_jw_raw(w, "}\n");
    rp_jw_close(w);
    if (ferror(f)) {
        er_set(ER_INTERNAL, "write error on the --objects output");
        return -1;
    }
    return 0;
}
