/* rp_sarif.c - SARIF 2.1.0 and GitHub workflow commands from findings. */
#include "report/rp_sarif.h"

#include <string.h>

#include "core/er.h"
#include "esc/es.h"

#define SARIF_SCHEMA \
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

int rp_sarif_begin(rp_sarif *s, FILE *f, const char *command, const char *version)
{
    memset(s, 0, sizeof *s);
    s->command = command;
    s->version = version;
    s->w = rp_jw_open(f);
    if (!s->w)
        return -1;
    rp_jw_key(s->w, "{", "$schema"); rp_jw_str(s->w, SARIF_SCHEMA);
    rp_jw_key(s->w, ",\n ", "version"); rp_jw_str(s->w, "2.1.0");
    rp_jw_key(s->w, ",\n ", "runs"); rp_jw_raw(s->w, "[{");
    rp_jw_key(s->w, "\n  ", "results"); rp_jw_raw(s->w, "[");
    return 0;
}

/* The index of x's rule, added when new; -1 when the table is full. */
static int rule_index(rp_sarif *s, const rp_finding *x)
{
    for (size_t i = 0; i < s->nrules; i++)
        if (strcmp(s->rules[i].id, x->rule) == 0)
            return (int)i;
    if (s->nrules == RP_SARIF_RULES)
        return -1;
    snprintf(s->rules[s->nrules].id, sizeof s->rules[0].id, "%s", x->rule);
    s->rules[s->nrules].name = x->rule_name;
    s->rules[s->nrules].text = x->rule_text;
    s->rules[s->nrules].level = x->level;
    return (int)s->nrules++;
}

/* A path as a URI reference: unreserved bytes and '/' as they are, the
 * rest %XX; an absolute path as file:///... */
static void uri(rp_jw *w, const char *path)
{
    char buf[1024];
    size_t k = 0;
    if (path[0] == '/')
        k = (size_t)snprintf(buf, sizeof buf, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p && k + 4 < sizeof buf; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            buf[k++] = (char)*p;
        else
            k += (size_t)snprintf(buf + k, sizeof buf - k, "%%%02X", *p);
    }
    buf[k] = '\0';
    rp_jw_str(w, buf);
}

static void location(rp_jw *w, const rp_loc *l, int id)
{
    rp_jw_raw(w, "{");
    if (id >= 0) {
        rp_jw_key(w, "", "id"); rp_jw_u64(w, (uint64_t)id);
        rp_jw_raw(w, ",");
    }
    rp_jw_key(w, "", "physicalLocation");
    rp_jw_key(w, "{", "artifactLocation");
    rp_jw_key(w, "{", "uri"); uri(w, l->file);
    rp_jw_raw(w, "}");
    if (l->line) {
        rp_jw_key(w, ",", "region");
        rp_jw_key(w, "{", "startLine"); rp_jw_u64(w, l->line);
        rp_jw_raw(w, "}");
    }
    rp_jw_raw(w, "}");
    if (id >= 0 && l->what[0]) {
        rp_jw_key(w, ",", "message");
        rp_jw_key(w, "{", "text"); rp_jw_str(w, l->what);
        rp_jw_raw(w, "}");
    }
    rp_jw_raw(w, "}");
}

void rp_sarif_add(rp_sarif *s, const rp_finding *x)
{
    rp_jw *w = s->w;
    int ri = rule_index(s, x);
    rp_jw_key(w, s->nresults++ ? ",\n   {" : "\n   {", "ruleId"); rp_jw_str(w, x->rule);
    if (ri >= 0) {
        rp_jw_key(w, ",", "ruleIndex"); rp_jw_u64(w, (uint64_t)ri);
    }
    rp_jw_key(w, ",", "level"); rp_jw_str(w, rp_level_name(x->level));
    rp_jw_key(w, ",", "message");
    rp_jw_key(w, "{", "text"); rp_jw_str(w, x->message);
    rp_jw_raw(w, "}");
    if (x->at.file[0]) {
        rp_jw_key(w, ",", "locations"); rp_jw_raw(w, "[");
        location(w, &x->at, -1);
        rp_jw_raw(w, "]");
    }
    if (x->nrelated) {
        rp_jw_key(w, ",", "relatedLocations"); rp_jw_raw(w, "[");
        for (size_t i = 0; i < x->nrelated; i++) {
            rp_jw_raw(w, i ? "," : "");
            location(w, &x->related[i], (int)i + 1);
        }
        rp_jw_raw(w, "]");
    }
    if (x->suppressed) {
        rp_jw_key(w, ",", "suppressions"); rp_jw_raw(w, "[");
        rp_jw_key(w, "{", "kind"); rp_jw_str(w, "external");
        rp_jw_key(w, ",", "justification"); rp_jw_str(w, "a --suppress rule");
        rp_jw_raw(w, "}]");
    }
    if (x->scenario) {
        rp_jw_key(w, ",", "properties");
        rp_jw_key(w, "{", "scenario"); rp_jw_str(w, x->scenario);
        rp_jw_raw(w, "}");
    }
    rp_jw_raw(w, "}");
}

static void rules(rp_sarif *s)
{
    rp_jw *w = s->w;
    rp_jw_key(w, ",\n   ", "rules"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < s->nrules; i++) {
        rp_jw_key(w, i ? ",\n    {" : "\n    {", "id"); rp_jw_str(w, s->rules[i].id);
        rp_jw_key(w, ",", "name"); rp_jw_str(w, s->rules[i].name);
        rp_jw_key(w, ",", "shortDescription");
        rp_jw_key(w, "{", "text"); rp_jw_str(w, s->rules[i].text);
        rp_jw_raw(w, "}");
        rp_jw_key(w, ",", "defaultConfiguration");
        rp_jw_key(w, "{", "level"); rp_jw_str(w, rp_level_name(s->rules[i].level));
        rp_jw_raw(w, "}}");
    }
    rp_jw_raw(w, "]");
}

int rp_sarif_end(rp_sarif *s, int executed_ok)
{
    rp_jw *w = s->w;
    rp_jw_raw(w, "]");
    rp_jw_key(w, ",\n  ", "tool");
    rp_jw_key(w, "{", "driver");
    rp_jw_key(w, "{", "name"); rp_jw_str(w, "fakegc");
    rp_jw_key(w, ",", "semanticVersion"); rp_jw_str(w, s->version ? s->version : "unknown");
    rp_jw_key(w, ",", "fullName"); rp_jw_str(w, "fakegc: fake-tensor memo leak analysis");
    rules(s);
    rp_jw_raw(w, "}}");
    rp_jw_key(w, ",\n  ", "invocations");
    rp_jw_key(w, "[{", "executionSuccessful"); rp_jw_bool(w, executed_ok);
    rp_jw_key(w, ",", "properties");
    rp_jw_key(w, "{", "command"); rp_jw_str(w, s->command);
    rp_jw_raw(w, "}}]");
    rp_jw_key(w, ",\n  ", "columnKind"); rp_jw_str(w, "unicodeCodePoints");
    rp_jw_raw(w, "\n}]}\n");
    int rc = rp_jw_close(w);
    s->w = NULL;
    return rc;
}

static void add_cb(void *ctx, const rp_finding *x)
{
    rp_sarif_add(ctx, x);
}

int rp_write_sarif(const rp_run *run, FILE *f, const char *command)
{
    rp_sarif s;
    if (rp_sarif_begin(&s, f, command, run->version) < 0)
        return -1;
    rp_find_each(run, add_cb, &s);
    /* an error stops the run short; a failure is a result, not a failed run */
    return rp_sarif_end(&s, run->errors == 0 && !run->stopped);
}

/* ---- GitHub workflow commands ---- */

void rp_gh_data(FILE *f, const char *s) { es_fputs(f, s, ES_GH_DATA); }
void rp_gh_prop(FILE *f, const char *s) { es_fputs(f, s, ES_GH_PROP); }

void rp_gh_finding(FILE *f, const rp_finding *x)
{
    if (x->level == RP_LV_NOTE || x->suppressed)
        return;
    fprintf(f, "::%s ", x->level == RP_LV_ERROR ? "error" : "warning");
    if (x->at.file[0]) {
        fputs("file=", f);
        rp_gh_prop(f, x->at.file);
        if (x->at.line)
            fprintf(f, ",line=%u", x->at.line);
        fputc(',', f);
    }
    fputs("title=", f);
    rp_gh_prop(f, x->title);
    fputs("::", f);
    rp_gh_data(f, x->message);
    fputc('\n', f);
}

typedef struct gh_count { FILE *f; size_t errors, warnings; } gh_count;

static void gh_cb(void *ctx, const rp_finding *x)
{
    gh_count *c = ctx;
    rp_gh_finding(c->f, x);
    if (!x->suppressed)
        c->errors += x->level == RP_LV_ERROR, c->warnings += x->level == RP_LV_WARNING;
}

int rp_write_github(const rp_run *run, FILE *f)
{
    gh_count c = {f, 0, 0};
    rp_find_each(run, gh_cb, &c);
    fprintf(f, "fakegc: %zu error%s, %zu warning%s (%u passed, %u failed)\n", c.errors,
            c.errors == 1 ? "" : "s", c.warnings, c.warnings == 1 ? "" : "s", run->passed,
            run->failed);
    return ferror(f) ? er_set(ER_INTERNAL, "write error on the report") : 0;
}
