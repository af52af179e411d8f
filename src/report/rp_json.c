/* rp_json.c - the JSON report (cli.md "JSON report"), keys in a fixed
 * order. Objects and failures are written one per line so that a report of
 * a million retained objects stays greppable; output goes through a private
 * 64 KiB buffer (stdio call overhead dominated otherwise). */
#include "report/rp_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

typedef struct jw {
    FILE *f;
    size_t n;
    char buf[1 << 16];
} jw;

static void flush(jw *w)
{
    if (w->n)
        fwrite(w->buf, 1, w->n, w->f);
    w->n = 0;
}

static void put(void *ctx, const char *s, size_t n)
{
    jw *w = ctx;
    if (n > sizeof w->buf - w->n) {
        flush(w);
        if (n > sizeof w->buf) {
            fwrite(s, 1, n, w->f);
            return;
        }
    }
    memcpy(w->buf + w->n, s, n);
    w->n += n;
}

static void puts_(jw *w, const char *s) { put(w, s, strlen(s)); }

static void num_u(jw *w, uint64_t v)
{
    char tmp[24];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(w, tmp + n, sizeof tmp - n);
}

static void num_i(jw *w, int64_t v)
{
    if (v < 0) {
        put(w, "-", 1);
        num_u(w, (uint64_t)0 - (uint64_t)v);
    } else {
        num_u(w, (uint64_t)v);
    }
}

/* Integral values as integers, others in the shortest form that reads back
 * the same; NaN and infinities as null. */
static void num_d(jw *w, double v)
{
    if (!isfinite(v)) {
        puts_(w, "null");
        return;
    }
    char buf[40];
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    puts_(w, buf);
}

static void str(jw *w, const char *s)
{
    if (!s) {
        puts_(w, "null");
        return;
    }
    put(w, "\"", 1);
    rp_escape(put, w, s, SK_JSON);
    put(w, "\"", 1);
}

/* `sep` then "key": */
static void key(jw *w, const char *sep, const char *k)
{
    puts_(w, sep);
    put(w, "\"", 1);
    puts_(w, k);
    put(w, "\": ", 3);
}

static void site(jw *w, obj_site s)
{
    char buf[512];
    rp_site(s, buf, sizeof buf);
    str(w, buf);
}

static void record(jw *w, const hp_retained *r)
{
    key(w, "{", "id"); num_u(w, r->id);
    key(w, ", ", "kind"); str(w, obj_kind_name(r->kind));
    key(w, ", ", "created"); site(w, r->site);
    key(w, ", ", "bytes"); num_u(w, r->bytes);
    key(w, ", ", "retained_bytes"); num_u(w, r->retained_bytes);
    key(w, ", ", "reason"); str(w, hp_reason_name(r->reason));
    key(w, ", ", "path");
    put(w, "[", 1);
    for (size_t i = 0; i < r->path_len; i++) {
        if (i)
            put(w, ", ", 2);
        str(w, r->path[i]);
    }
    put(w, "]", 1);
    key(w, ", ", "type"); str(w, r->type_name);
    key(w, ", ", "describe"); str(w, r->describe);
    key(w, ", ", "holder"); str(w, hp_holder_name(r->holder));
    put(w, "}", 1);
}

static void group(jw *w, const hp_group *g, const hp_retained *recs, size_t nrecs)
{
    key(w, "{", "count"); num_u(w, g->count);
    key(w, ", ", "kind"); str(w, obj_kind_name(g->kind));
    key(w, ", ", "type"); str(w, g->type_name);
    key(w, ", ", "created"); site(w, g->site);
    key(w, ", ", "reason"); str(w, hp_reason_name(g->reason));
    key(w, ", ", "bytes_each"); num_u(w, g->bytes_each);
    key(w, ", ", "total_bytes"); num_u(w, g->total_bytes);
    key(w, ", ", "total_retained"); num_u(w, g->total_retained);
    key(w, ", ", "via"); str(w, g->via);
    key(w, ", ", "examples");
    put(w, "[", 1);
    for (size_t i = 0; i < g->nexamples && g->example + i < nrecs; i++) {
        if (i)
            put(w, ", ", 2);
        num_u(w, recs[g->example + i].id);
    }
    put(w, "]", 1);
    key(w, ", ", "holder"); str(w, hp_holder_name(g->holder));
    puts_(w, "}");
}

/* Biggest retainers: [{"id", "type", "retained_bytes", "count",
 * "main_count", "main_kind", "main_via", "path"}] */
static void biggest(jw *w, const hp_top *t, size_t n)
{
    put(w, "[", 1);
    for (size_t i = 0; i < n; i++) {
        key(w, i ? ", {" : "{", "id"); num_u(w, t[i].id);
        key(w, ", ", "kind"); str(w, obj_kind_name(t[i].kind));
        key(w, ", ", "type"); str(w, t[i].type_name);
        key(w, ", ", "retained_bytes"); num_u(w, t[i].retained_bytes);
        key(w, ", ", "count"); num_u(w, t[i].count);
        key(w, ", ", "main_count"); num_u(w, t[i].main_count);
        key(w, ", ", "main_kind"); str(w, obj_kind_name(t[i].main_kind));
        key(w, ", ", "main_via"); str(w, t[i].main_via);
        key(w, ", ", "path"); str(w, t[i].path);
        put(w, "}", 1);
    }
    put(w, "]", 1);
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
                num_i(w, (int64_t)v);
                return;
            }
        }
    }
    str(w, a);
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
    key(w, "{", "line"); num_u(w, x->line);
    key(w, ", ", "text"); str(w, x->text);
    key(w, ", ", "actual"); actual(w, x->actual);
    key(w, ", ", "message"); str(w, x->message);
    key(w, ", ", "col"); num_u(w, x->col);
    hp_group *own = NULL;
    size_t ng = x->ngroups;
    const hp_group *gs = x->groups;
    if (!gs && x->nobjects && show) {
        if (hp_group_records(x->objects, x->nobjects, &own, &ng) != 0)
            ng = 0;
        gs = own;
    }
    size_t keep = !show ? 0 : ng < JSON_GROUPS ? ng : JSON_GROUPS;
    key(w, ", ", "objects");
    put(w, "[", 1);
    int first = 1;
    for (size_t g = 0; g < keep; g++)
        for (size_t i = 0; i < gs[g].nexamples && gs[g].example + i < x->nobjects; i++) {
            if (!first)
                put(w, ", ", 2);
            first = 0;
            record(w, &x->objects[gs[g].example + i]);
        }
    put(w, "]", 1);
    key(w, ", ", "objects_total"); num_u(w, rp_failure_total(x));
    key(w, ", ", "groups");
    put(w, "[", 1);
    for (size_t i = 0; i < keep; i++) {
        if (i)
            put(w, ", ", 2);
        group(w, &gs[i], x->objects, x->nobjects);
    }
    put(w, "]", 1);
    hp_groups_free(own, own ? ng : 0);
    if (show && ng > keep) {
        key(w, ", ", "groups_total"); num_u(w, ng);
    }
    if (same >= 0) {
        key(w, ", ", "same_objects_as"); num_u(w, sc->failures[same].line);
    }
    if (omit) {
        key(w, ", ", "objects_omitted"); puts_(w, "true");
    }
    if (x->nkinds) {
        key(w, ", ", "kinds");
        put(w, "[", 1);
        for (size_t i = 0; i < x->nkinds; i++) {
            key(w, i ? ", {" : "{", "kind"); str(w, obj_kind_name(x->kinds[i].kind));
            key(w, ", ", "now"); num_u(w, x->kinds[i].now);
            key(w, ", ", "delta"); num_i(w, x->kinds[i].delta);
            put(w, "}", 1);
        }
        put(w, "]", 1);
    }
    key(w, ", ", "biggest");
    biggest(w, x->top, show ? x->ntop : 0);
    puts_(w, "}");
}

static const char *const ITEM = ",\n        ", *FIRST = "\n        ";

static int scenario(jw *w, const rp_scenario *s)
{
    int rc = 0;
    key(w, "    {\n      ", "file"); str(w, s->file ? s->file : "");
    key(w, ",\n      ", "status"); str(w, rp_status_name(s->status));
    key(w, ",\n      ", "expectations");
    key(w, "{", "passed"); num_u(w, s->passed);
    key(w, ", ", "failed"); num_u(w, s->failed);
    put(w, "}", 1);
    key(w, ",\n      ", "failures");
    put(w, "[", 1);
    size_t detailed = 0;
    for (size_t i = 0; i < s->nfailures; i++) {
        puts_(w, i ? ITEM : FIRST);
        failure(w, s, i, &detailed);
    }
    puts_(w, s->nfailures ? "\n      ]" : "]");
    key(w, ",\n      ", "retained");
    put(w, "[", 1);
    for (size_t i = 0; i < s->nretained; i++) {
        puts_(w, i ? ITEM : FIRST);
        record(w, &s->retained[i]);
    }
    puts_(w, s->nretained ? "\n      ]" : "]");
    key(w, ",\n      ", "stats");
    key(w, "{", "statements"); num_u(w, s->statements);
    key(w, ", ", "allocations"); num_u(w, s->allocations);
    key(w, ", ", "peak_bytes"); num_u(w, s->peak_bytes);
    key(w, ", ", "wall_ms"); num_d(w, s->wall_ms);
    key(w, ", ", "leaked_bytes"); num_u(w, s->leaked_bytes);
    key(w, ", ", "footprint_bytes"); num_u(w, s->footprint_bytes);
    put(w, "}", 1);

    hp_group *gs = s->groups, *own = NULL;
    size_t ng = s->ngroups;
    if (!gs && s->nretained) {
        if (hp_group_records(s->retained, s->nretained, &own, &ng) != 0) {
            rc = -1;
            ng = 0;
        }
        gs = own;
    }
    key(w, ",\n      ", "groups");
    put(w, "[", 1);
    for (size_t i = 0; i < ng; i++) {
        puts_(w, i ? ITEM : FIRST);
        group(w, &gs[i], s->retained, s->nretained);
    }
    puts_(w, ng ? "\n      ]" : "]");
    hp_groups_free(own, own ? ng : 0);
    key(w, ",\n      ", "retained_total");
    num_u(w, s->retained_total ? s->retained_total : s->nretained);
    key(w, ",\n      ", "biggest");
    biggest(w, s->top, s->ntop);

    key(w, ",\n      ", "checkpoints");
    put(w, "[", 1);
    for (size_t i = 0; i < s->ncheckpoints; i++) {
        key(w, i ? ", {" : "{", "name"); str(w, s->checkpoints[i].name);
        key(w, ", ", "growth"); num_i(w, s->checkpoints[i].growth);
        put(w, "}", 1);
    }
    put(w, "]", 1);
    key(w, ",\n      ", "error"); str(w, s->error);
    key(w, ",\n      ", "valgrind");
    if (s->valgrind_checked) {
        key(w, "{", "definite"); num_u(w, s->valgrind_definite);
        key(w, ", ", "indirect"); num_u(w, s->valgrind_indirect);
        put(w, "}", 1);
    } else {
        puts_(w, "null");
    }
    puts_(w, "\n    }");
    return rc;
}

int rp_write_json(const rp_run *run, FILE *f)
{
    jw *w = al_malloc(sizeof *w, AL_K_REPORT, "rp_write_json");   /* 64 KiB */
    if (!w)
        return er_set(ER_OOM, "out of memory writing the JSON report");
    w->f = f;
    w->n = 0;
    int rc = 0;
    key(w, "{\n  ", "schema"); str(w, RP_SCHEMA_REPORT);
    key(w, ", ", "tool"); str(w, run->tool ? run->tool : "fakegc");
    key(w, ", ", "version"); str(w, run->version ? run->version : "");
    if (run->commit) {
        key(w, ", ", "commit"); str(w, run->commit);
    }
    key(w, ", ", "allocator"); str(w, run->allocator ? run->allocator : "libc");
    key(w, ",\n  ", "inject");
    put(w, "[", 1);
    for (size_t i = 0; i < run->ninject; i++) {
        if (i)
            put(w, ", ", 2);
        str(w, run->inject[i]);
    }
    put(w, "]", 1);
    key(w, ", ", "compat"); str(w, run->compat);
    if (run->shard_n) {
        key(w, ",\n  ", "shard");
        put(w, "[", 1); num_u(w, run->shard_k); put(w, ", ", 2); num_u(w, run->shard_n);
        put(w, "]", 1);
        key(w, ", ", "host"); str(w, run->host);
        key(w, ", ", "campaign_files"); num_u(w, run->shard_total);
    }
    key(w, ",\n  ", "status"); str(w, rp_run_status(run));
    key(w, ", ", "stopped"); str(w, run->stopped);
    key(w, ",\n  ", "scenarios");
    put(w, "[", 1);
    for (size_t i = 0; i < run->n; i++) {
        puts_(w, i ? ",\n" : "\n");
        if (scenario(w, &run->scenarios[i]) != 0)
            rc = -1;
    }
    puts_(w, run->n ? "\n  ]" : "]");
    key(w, ",\n  ", "summary");
    key(w, "{", "passed"); num_u(w, run->passed);
    key(w, ", ", "failed"); num_u(w, run->failed);
    key(w, ", ", "skipped"); num_u(w, run->skipped);
    key(w, ", ", "errors"); num_u(w, run->errors);
    puts_(w, "}");
    if (run->interrupted) {
        key(w, ",\n  ", "interrupted"); str(w, run->interrupted);
        key(w, ", ", "planned"); num_u(w, run->planned);
    }
    puts_(w, "\n}\n");
    flush(w);
    al_free(w, sizeof *w, AL_K_REPORT);
    if (rc)
        er_set(ER_OOM, "out of memory grouping retained objects");
    return rc;
}

int rp_write_object_line(FILE *f, const char *scenario, uint32_t line, const hp_retained *r)
{
    jw *w = al_malloc(sizeof *w, AL_K_REPORT, "rp_object_line");
    if (!w) {
        er_set(ER_OOM, "out of memory writing an object line");
        return -1;
    }
    w->f = f;
    w->n = 0;
    key(w, "{", "schema"); str(w, RP_SCHEMA_OBJECTS);
    key(w, ", ", "scenario"); str(w, scenario);
    key(w, ", ", "line"); num_u(w, line);
    key(w, ", ", "object");
    record(w, r);
    puts_(w, "}\n");
    flush(w);
    al_free(w, sizeof *w, AL_K_REPORT);
    if (ferror(f)) {
        er_set(ER_INTERNAL, "write error on the --objects output");
        return -1;
    }
    return 0;
}
