/* rp_find.c - a run's findings for SARIF and GitHub annotations. */
#include "report/rp_find.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake/fk_cat.h"
#include "heap/hp_class.h"
#include "report/rp_verdict.h"
#include "report/rp_int.h"

const char *rp_level_name(rp_level l)
{
    static const char *const names[] = {"error", "warning", "note"};
    return names[l];
}

void rp_loc_parse(const char *site, rp_loc *out)
{
    memset(out, 0, sizeof *out);
    if (!site || !site[0] || strcmp(site, "?") == 0)
        return;
    const char *colon = strrchr(site, ':');
    size_t n = strlen(site);
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        n = (size_t)(colon - site);
        out->line = (uint32_t)strtoul(colon + 1, NULL, 10);
    }
    snprintf(out->file, sizeof out->file, "%.*s", (int)n, site);
}

const char *rp_scenario_name(const rp_run *run, const rp_scenario *s)
{
    return run->program && run->n == 1 ? run->program : s->file ? s->file : "?";
}

/* ---- the rules ---- */

/* A class's SARIF rule and the level of a group that does not fail, from
 * its row of HP_CLASSES. */
typedef struct cls_rule { const char *id, *name, *text; rp_level quiet; } cls_rule;
#define RULE_(e, w, n, f, warns, d, css, id, name, text) \
    [HP_CL_##e] = {"fakegc/" id, name, text, (warns) ? RP_LV_WARNING : RP_LV_NOTE},
static const cls_rule cls_rules[HP_CL_COUNT] = {HP_CLASSES(RULE_, )};
#undef RULE_

void rp_expect_rule(const char *query, char *buf, size_t n)
{
    snprintf(buf, n, "fakegc/expect/%s", query && query[0] ? query : "value");
}

/* ---- the findings ---- */

static void scenario_error(const rp_run *run, const rp_scenario *s, rp_find_fn emit, void *ctx)
{
    rp_finding f;
    memset(&f, 0, sizeof f);
    snprintf(f.rule, sizeof f.rule, "fakegc/error");
    f.rule_name = "ScenarioError";
    f.rule_text = "The scenario could not run to its end: a parse error, an error raised, "
                  "or a limit reached.";
    f.level = RP_LV_ERROR;
    f.scenario = rp_scenario_name(run, s);
    snprintf(f.title, sizeof f.title, "fakegc: error");
    snprintf(f.message, sizeof f.message, "%s", s->error ? s->error : "error");
    rp_loc_parse(s->error, &f.at);   /* "FILE:LINE:COL: error: ..." names its place */
    if (!f.at.file[0] || strchr(f.at.file, ' '))
        snprintf(f.at.file, sizeof f.at.file, "%s", f.scenario), f.at.line = 0;
    emit(ctx, &f);
}

/* A recorded program's site file, from where CI stands: the recorder
 * writes it as the program's path was given when that is relative
 * ("sub/prog.py"), else relative to the program's folder ("prog.py"), which
 * is joined here: "/abs/sub/prog.py" + "prog.py" -> "/abs/sub/prog.py". */
static void program_file(const rp_run *run, const char *file, char *buf, size_t n)
{
    const char *slash = run->program ? strrchr(run->program, '/') : NULL;
    size_t dir = slash ? (size_t)(slash - run->program) + 1 : 0;
    if (!slash || file[0] == '/' || strncmp(file, run->program, dir) == 0)
        snprintf(buf, n, "%s", file);
    else
        snprintf(buf, n, "%.*s%s", (int)dir, run->program, file);
}

/* The first group of a failure's objects, in words. */
static void failure_objects(const rp_failure *x, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!x->ngroups || !x->groups)
        return;
    const hp_group *g = &x->groups[0];
    char site[200];
    rp_site(g->site, site, sizeof site);
    snprintf(buf, n, "; %" PRIu64 " object%s behind it, the first made at %s (%s)",
             rp_failure_total(x), rp_failure_total(x) == 1 ? "" : "s", site,
             rp_holder_phrase(g->holder));
}

static void failure(const rp_run *run, const rp_scenario *s, const rp_failure *x,
                    rp_find_fn emit, void *ctx)
{
    rp_finding f;
    memset(&f, 0, sizeof f);
    char objs[400];
    rp_expect_rule(x->query, f.rule, sizeof f.rule);
    f.rule_name = "FailedExpectation";
    f.rule_text = "An expectation of the scenario did not hold.";
    f.level = RP_LV_ERROR;
    f.scenario = rp_scenario_name(run, s);
    snprintf(f.title, sizeof f.title, "fakegc: %s", x->text ? x->text : "expectation");
    failure_objects(x, objs, sizeof objs);
    snprintf(f.message, sizeof f.message, "%s: actual %s%s%s%s", x->text ? x->text : "?",
             x->actual ? x->actual : "?", x->message && x->message[0] ? " (" : "",
             x->message && x->message[0] ? x->message : "",
             x->message && x->message[0] ? ")" : "");
    size_t len = strlen(f.message);
    snprintf(f.message + len, sizeof f.message - len, "%s", objs);
    if (x->prog_file && x->line) {   /* the recording's line: a detail */
        len = strlen(f.message);
        snprintf(f.message + len, sizeof f.message - len, " (the recording's line %u)", x->line);
    }
    if (x->prog_file) {   /* a recording's: the program's line */
        program_file(run, x->prog_file, f.at.file, sizeof f.at.file);
        f.at.line = x->prog_line;
    } else {   /* a recording's temporary .scn is gone: the program, without a line */
        snprintf(f.at.file, sizeof f.at.file, "%s", run->program && run->n == 1 ? run->program
                                                                             : s->file);
        f.at.line = run->program && run->n == 1 ? 0 : x->line;
    }
    emit(ctx, &f);
}

/* error: it fails the verdict; else its class's level (HP_CLASSES' warns):
 * warning where the program holds it and it still grows (accumulating,
 * under a fail mask without it); note for the rest (held and not growing,
 * lingering): SARIF keeps it, GitHub annotations do not. */
static rp_level group_level(const rp_verdict *v, const rp_vgroup *g)
{
    if (v->fails_on & (1u << g->cls))
        return RP_LV_ERROR;
    return cls_rules[g->cls < HP_CL_COUNT ? g->cls : HP_CL_LOST].quiet;
}

static void group(const rp_run *run, const rp_scenario *s, size_t i, rp_find_fn emit, void *ctx)
{
    const rp_verdict *v = s->verdict;
    const rp_vgroup *g = &v->groups[i];
    rp_finding f;
    memset(&f, 0, sizeof f);
    const cls_rule *r = &cls_rules[g->cls < HP_CL_COUNT ? g->cls : HP_CL_LOST];
    snprintf(f.rule, sizeof f.rule, "%s", r->id);
    f.rule_name = r->name;
    f.rule_text = r->text;
    f.level = group_level(v, g);
    f.suppressed = g->suppressed;
    f.scenario = rp_scenario_name(run, s);
    const char *cls = hp_class_name(g->cls), *noun = fk_category_noun(g->cat, g->count);
    snprintf(f.title, sizeof f.title, "fakegc %s: %" PRIu64 " %s", cls, g->count, noun);
    char rounds[96] = "", bytes[32], ret[32], site[200], holder[128];
    if (g->rounds)
        snprintf(rounds, sizeof rounds, ", made in rounds %u..%u of %u of the loop around it",
                 g->first_round, g->last_round, g->rounds);
    rp_bytes(g->bytes, bytes, sizeof bytes);
    rp_bytes(g->retained, ret, sizeof ret);
    rp_vgroup_site(g, site, sizeof site);
    rp_vgroup_holder(g, holder, sizeof holder);
    char leak[400] = "";   /* its leak's line first (none for a group counted apart) */
    if (rp_verdict_leak_line(v, rp_verdict_leak_of(v, i), leak, sizeof leak - 2))
        strcat(leak, ". ");
    snprintf(f.message, sizeof f.message,
             "%s%s: %" PRIu64 " %s made at %s (%s, retaining %s)%s; held by %s: %s", leak, cls,
             g->count, noun, g->file[0] ? site : "an unknown line", bytes, ret, rounds, holder,
             g->path[0] ? g->path : "(no path)");
    if (g->file[0])
        program_file(run, g->file, f.at.file, sizeof f.at.file);
    else
        snprintf(f.at.file, sizeof f.at.file, "%s", f.scenario);
    f.at.line = g->file[0] ? g->line : 0;
    /* the other sites of the same leak: its class, held the same way */
    for (size_t k = 0; k < v->ngroups && f.nrelated < RP_FIND_RELATED; k++) {
        const rp_vgroup *o = &v->groups[k];
        char oh[128];
        rp_vgroup_holder(o, oh, sizeof oh);
        if (k == i || o->cls != g->cls || strcmp(oh, holder) != 0 || !o->file[0] ||
            (strcmp(o->file, g->file) == 0 && o->line == g->line))
            continue;
        rp_loc *l = &f.related[f.nrelated++];
        program_file(run, o->file, l->file, sizeof l->file);
        l->line = o->line;
        snprintf(l->what, sizeof l->what, "also %s: %" PRIu64 " %s made here, held by %s",
                 cls, o->count, fk_category_noun(o->cat, o->count), oh);
    }
    emit(ctx, &f);
}

void rp_find_each(const rp_run *run, rp_find_fn emit, void *ctx)
{
    for (size_t k = 0; k < run->n; k++) {
        const rp_scenario *s = &run->scenarios[k];
        if (s->status == RP_ERROR)
            scenario_error(run, s, emit, ctx);
        for (size_t i = 0; i < s->nfailures; i++)
            if (s->failures[i].line > 0 || s->failures[i].prog_file || !s->verdict)
                /* line 0 and no site: the verdict's own */
                failure(run, s, &s->failures[i], emit, ctx);
        for (size_t i = 0; s->verdict && i < s->verdict->ngroups; i++)
            group(run, s, i, emit, ctx);
    }
}
