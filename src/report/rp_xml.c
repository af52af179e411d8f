/* rp_xml.c - JUnit XML and TAP version 13 reports. */
#include "report/rp_int.h"
#include "report/rp_jw.h"
#include "report/rp_find.h"

#include <string.h>

#include "core/er.h"
#include "esc/es.h"

/* One line saying why a scenario did not pass. */
static void summary(const rp_scenario *s, char *buf, size_t n)
{
    char b[32];
    size_t used = 0;
    buf[0] = '\0';
#define ADD(...)                                                                            \
    do {                                                                                    \
        if (used < n) {                                                                     \
            int k_ = snprintf(buf + used, n - used, __VA_ARGS__);                           \
            used += k_ > 0 ? (size_t)k_ : 0;                                                \
        }                                                                                   \
    } while (0)
    if (s->error)
        ADD("%s", s->error);
    if (s->verdict && rp_verdict_fails(s->verdict)) {
        char v[600];
        rp_verdict_summary(s->verdict, v, sizeof v);
        ADD("%s%s", used ? "; " : "", v);
    }
    size_t first = 0;   /* the verdict's own failures (line 0) are its summary */
    while (s->verdict && first < s->nfailures && s->failures[first].line == 0)
        first++;
    if (s->nfailures > first) {
        const rp_failure *f = &s->failures[first];
        char at[300];
        if (f->prog_file)   /* a recording's: the program's line, its own a detail */
            rp_failure_site(s, f, at, sizeof at);
        else
            snprintf(at, sizeof at, "line %u", f->line);
        ADD("%s%s: %s", used ? "; " : "", at, f->text ? f->text : "");
        if (f->prog_file && f->line)
            ADD(" (the recording's line %u)", f->line);
        if (f->actual)
            ADD(" (actual: %s)", f->actual);
        if (s->nfailures > first + 1)
            ADD(" and %zu more failed expectation%s", s->nfailures - first - 1,
                s->nfailures > first + 2 ? "s" : "");
    }
    if (s->nretained) {
        uint64_t total = 0;
        for (size_t i = 0; i < s->nretained; i++)
            total += s->retained[i].bytes;
        rp_bytes(total, b, sizeof b);
        ADD("%s%zu object%s retained (%s)", used ? "; " : "", s->nretained,
            s->nretained == 1 ? "" : "s", b);
    }
    if (s->leaked_bytes) {
        rp_bytes(s->leaked_bytes, b, sizeof b);
        ADD("%s%s leaked", used ? "; " : "", b);
    }
    if (!used)
        ADD("%s", s->status == RP_ERROR ? "error" : "failed");
#undef ADD
}

/* --- JUnit ------------------------------------------------------------------ */

/* "fakegc" and the file's folders: "fakegc.scenarios.memo". */
static void classname(const char *file, char *buf, size_t cap)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    size_t j = (size_t)snprintf(buf, cap, "fakegc");
    if (!slash || j + 1 >= cap)
        return;
    buf[j++] = '.';
    for (size_t i = 0; file + i < slash && j + 1 < cap; i++)
        buf[j++] = file[i] == '/' ? '.' : file[i];
    buf[j] = '\0';
}

static void junit_counts(FILE *f, const char *name, const rp_junit_counts *c)
{
    fputs(" name=\"", f);
    es_fputs(f, name, ES_XML);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\"", c->tests,
            c->failures, c->errors, c->skipped);
    if (c->timed)
        fprintf(f, " time=\"%.6f\"", c->seconds);
    fputs(">\n", f);
}

void rp_junit_begin(FILE *f, const char *name, const rp_junit_counts *c)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
    junit_counts(f, name, c);
    fputs("  <testsuite", f);
    junit_counts(f, name, c);
}

void rp_junit_case(FILE *f, const char *name, const char *classname, double seconds)
{
    fputs("    <testcase name=\"", f);
    es_fputs(f, name, ES_XML);
    fputs("\" classname=\"", f);
    es_fputs(f, classname, ES_XML);
    fputs("\"", f);
    if (seconds >= 0)
        fprintf(f, " time=\"%.6f\"", seconds);
}

void rp_junit_failure(FILE *f, const char *tag, const char *type, const char *message,
                      const char *body)
{
    fprintf(f, ">\n      <%s message=\"", tag);
    es_fputs(f, message, ES_XML);
    fprintf(f, "\" type=\"%s\">", type);
    if (body)
        es_fputs(f, body, ES_XML);
    fprintf(f, "</%s>\n    </testcase>\n", tag);
}

void rp_junit_end(FILE *f) { fputs("  </testsuite>\n</testsuites>\n", f); }

int rp_write_junit(const rp_run *run, FILE *f, const rp_options *o)
{
    sk s = {f, SK_XML, 0, 0};
    size_t fails = 0, errors = 0, skipped = 0;
    double ms = 0;
    for (size_t i = 0; i < run->n; i++) {
        fails += run->scenarios[i].status == RP_FAIL;
        errors += run->scenarios[i].status == RP_ERROR;
        skipped += run->scenarios[i].status == RP_SKIP;
        ms += run->scenarios[i].wall_ms;
    }
    rp_junit_counts c = {run->n, fails, errors, skipped, ms / 1000.0, 1};
    rp_junit_begin(f, "fakegc", &c);
    fputs("    <properties>\n", f);
    const char *props[][2] = {{"version", run->version},
                              {"allocator", run->allocator},
                              {"compat", run->compat}};
    for (size_t i = 0; i < 3; i++) {
        if (!props[i][1])
            continue;
        fprintf(f, "      <property name=\"%s\" value=\"", props[i][0]);
        sk_puts(&s, props[i][1]);
        fputs("\"/>\n", f);
    }
    if (run->ninject) {
        fputs("      <property name=\"inject\" value=\"", f);
        for (size_t i = 0; i < run->ninject; i++) {
            if (i)
                fputc(',', f);
            sk_puts(&s, run->inject[i]);
        }
        fputs("\"/>\n", f);
    }
    fputs("    </properties>\n", f);
    for (size_t i = 0; i < run->n; i++) {
        const rp_scenario *sc = &run->scenarios[i];
        const char *name = rp_scenario_name(run, sc);
        char cls[1024];
        classname(name, cls, sizeof cls);
        rp_junit_case(f, name, cls, sc->wall_ms / 1000.0);
        if (sc->status == RP_PASS && sc->whatif) {
            fputs(">\n      <system-out>", f);
            sk_puts(&s, sc->whatif);
            fputs("</system-out>\n    </testcase>\n", f);
            continue;
        }
        if (sc->status == RP_PASS) {
            fputs("/>\n", f);
            continue;
        }
        if (sc->status == RP_SKIP) {
            fputs(">\n      <skipped/>\n    </testcase>\n", f);
            continue;
        }
        const char *tag = sc->status == RP_ERROR ? "error" : "failure";
        char msg[1024];
        summary(sc, msg, sizeof msg);
        fprintf(f, ">\n      <%s message=\"", tag);
        sk_puts(&s, msg);
        fprintf(f, "\" type=\"%s\">", sc->stop_site ? "not-judged" : sc->status == RP_ERROR ? "error" : "expectation");
        rp_details(&s, sc, o, "");
        fprintf(f, "</%s>\n    </testcase>\n", tag);
    }
    rp_junit_end(f);
    return s.oom ? er_set(ER_OOM, "out of memory grouping retained objects") : 0;
}

/* --- TAP 13 -------------------------------------------------------------------- */

static void tap_desc(FILE *f, const char *str) { es_fputs(f, str, ES_TAP); }

static void yaml_record(FILE *f, const hp_retained *r, const char *ind)
{
    char site[512];
    rp_site(r->site, site, sizeof site);
    fprintf(f, "%s- id: %llu\n%s  kind: ", ind, (unsigned long long)r->id, ind);
    rp_json_string(f, obj_kind_name(r->kind));
    fprintf(f, "\n%s  created: ", ind);
    rp_json_string(f, site);
    fprintf(f, "\n%s  bytes: %llu\n%s  retained_bytes: %llu\n%s  reason: ", ind,
            (unsigned long long)r->bytes, ind, (unsigned long long)r->retained_bytes, ind);
    rp_json_string(f, hp_reason_name(r->reason));
    fprintf(f, "\n%s  path: [", ind);
    for (size_t i = 0; i < r->path_len; i++) {
        if (i)
            fputs(", ", f);
        rp_json_string(f, r->path[i]);
    }
    fputs("]\n", f);
}

enum { TAP_OBJECTS = 5 };

int rp_write_tap(const rp_run *run, FILE *f, const rp_options *o)
{
    int verbose = o && o->verbose, oom = 0;
    fprintf(f, "TAP version 13\n1..%zu\n", run->n);
    for (size_t i = 0; i < run->n; i++) {
        const rp_scenario *sc = &run->scenarios[i];
        int ok = sc->status == RP_PASS || sc->status == RP_SKIP;
        fprintf(f, "%s %zu - ", ok ? "ok" : "not ok", i + 1);
        tap_desc(f, rp_scenario_name(run, sc));
        if (sc->status == RP_SKIP)
            fputs(" # SKIP", f);
        fputc('\n', f);
        for (const char *w = sc->whatif; w && *w;) {   /* what-if: comment lines */
            const char *e = strchr(w, '\n');
            int n = e ? (int)(e - w) : (int)strlen(w);
            fprintf(f, "# %.*s\n", n, w);
            w += n + (e != NULL);
        }
        if (ok)
            continue;
        char msg[1024];
        summary(sc, msg, sizeof msg);
        fputs("  ---\n  message: ", f);
        rp_json_string(f, msg);
        fprintf(f, "\n  severity: %s\n", sc->status == RP_ERROR ? "error" : "fail");
        if (sc->error) {
            fputs("  error: ", f);
            rp_json_string(f, sc->error);
            fputc('\n', f);
        }
        if (sc->nfailures) {
            fputs("  failures:\n", f);
            for (size_t k = 0; k < sc->nfailures; k++) {
                const rp_failure *x = &sc->failures[k];
                if (x->prog_file) {   /* a recording's: the program's site first */
                    fputs("    - program_file: ", f);
                    rp_json_string(f, x->prog_file);
                    fprintf(f, "\n      program_line: %u\n      line: %u\n", x->prog_line,
                            x->line);
                } else {
                    fprintf(f, "    - line: %u\n", x->line);
                }
                if (x->kind != RP_FK_EXPECT)
                    fprintf(f, "      kind: %s\n", rp_fail_kind_word(x->kind));
                fputs("      text: ", f);
                rp_json_string(f, x->text);
                fputs("\n      actual: ", f);
                rp_json_string(f, x->actual);
                fputs("\n      message: ", f);
                rp_json_string(f, x->message);
                fputc('\n', f);
            }
        }
        if (sc->nretained) {
            const hp_group *gs = sc->groups;
            size_t ng = sc->ngroups;
            fprintf(f, "  retained_count: %zu\n", sc->nretained);
            if (ng)
                fputs("  groups:\n", f);
            for (size_t k = 0; k < ng; k++) {
                char site[512], line[2048];
                rp_site(gs[k].site, site, sizeof site);
                snprintf(line, sizeof line, "%llu x %s (%s), %llu B each, created %s, %s, via %s",
                         (unsigned long long)gs[k].count, obj_kind_name(gs[k].kind),
                         gs[k].type_name ? gs[k].type_name : "?",
                         (unsigned long long)gs[k].bytes_each, site,
                         hp_reason_name(gs[k].reason), gs[k].via);
                fputs("    - ", f);
                rp_json_string(f, line);
                fputc('\n', f);
            }
            size_t shown = verbose || sc->nretained < TAP_OBJECTS ? sc->nretained : TAP_OBJECTS;
            fputs("  retained:\n", f);
            for (size_t k = 0; k < shown; k++)
                yaml_record(f, &sc->retained[k], "    ");
        }
        if (sc->leaked_bytes)
            fprintf(f, "  leaked_bytes: %llu\n", (unsigned long long)sc->leaked_bytes);
        fputs("  ...\n", f);
    }
    if (run->stopped) {
        fputs("Bail out! ", f);
        tap_desc(f, run->stopped);
        fputc('\n', f);
    }
    return oom ? er_set(ER_OOM, "out of memory grouping retained objects") : 0;
}
