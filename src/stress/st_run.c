/* st_run.c - running scenario text for stress and shrink: the extra
 * invariants of --check-every, classifying failures, and runs in a forked
 * child so a crash is an outcome instead of the end of the process. */
#include "stress/st.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "instrument/in_guard.h"
#include "worker/wk.h"

void st_env_default(st_env *e)
{
    memset(e, 0, sizeof *e);
    sc_options_default(&e->sc);
    e->inject = "";
}

static long guard_seen;      /* findings already reported */
static int hook_guard;       /* the run's --verify failure is the guard's */

/* Everything the model allocated is an object's header or something an
 * object owns; anything else live is a leak nobody can name. */
static int live_bytes_invariant(char *why, size_t n)
{
    uint64_t sum = 0;
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o))
        sum += obj_self_bytes(o);
    for (obj *o = obj_zombie_first(); o; o = obj_iter_next(o))
        sum += obj_self_bytes(o);
    /* what the model holds: everything but the interpreter's, the heap
     * analysis' and the reports' kinds (and ours, which are AL_K_SCENARIO) */
    uint64_t all = al_live_bytes();
    uint64_t own = al_live_bytes_kind(AL_K_SCENARIO) + al_live_bytes_kind(AL_K_HEAP) +
                   al_live_bytes_kind(AL_K_REPORT);
    /* and the dispatch cache's table, which no object owns */
    fk_cache_stats cs;
    fk_cache_stats_get(&cs);
    own += cs.bytes;
    uint64_t live = all > own ? all - own : 0;
    if (live != sum) {
        snprintf(why, n, "allocator live bytes (%llu) differ from the bytes of live objects "
                 "(%llu)", (unsigned long long)live, (unsigned long long)sum);
        return -1;
    }
    return 0;
}

static int guard_findings(const st_env *e, char *why, size_t n)
{
    if (!e->check_guard)
        return 0;
    al_allocator *a = al_current();
    in_guard_verify(a);
    long f = in_guard_findings(a);
    if (f > guard_seen) {
        guard_seen = f;
        snprintf(why, n, "guard: %s", in_guard_last_finding(a));
        return -1;
    }
    return 0;
}

static int verify_hook(void *arg, char *why, size_t n)
{
    const st_env *e = arg;
    if (guard_findings(e, why, n) < 0) {
        hook_guard = 1;
        return -1;
    }
    return live_bytes_invariant(why, n);
}

void st_env_prepare(st_env *e)
{
    al_allocator *a = al_current();
    e->check_guard = in_guard_of(a) != NULL;
    if (e->check_guard) {
        in_guard_set_action(a, IN_GUARD_RECORD);
        guard_seen = in_guard_findings(a);
    }
    e->sc.verify_hook = verify_hook;
    e->sc.verify_hook_arg = e;
}

typedef struct live_note {
    uint64_t live;
    uint64_t statements;     /* finished so far (for a finding's outcome) */
} live_note;

static live_note *cur_note;  /* of the run in hand, or NULL */

static void on_statement(void *arg, uint32_t line, uint64_t live, uint64_t bytes)
{
    (void)line, (void)bytes;
    ((live_note *)arg)->live = live;
    ((live_note *)arg)->statements++;
}

/* ---- findings: a bad access ends the child as a finding (wk.h) ---- */

/* d[k..n) += s, NUL-terminated; returns the new length. */
static size_t put(char *d, size_t k, size_t n, const char *s)
{
    for (; *s && k + 1 < n; s++)
        if (*s != '\n')    /* the guard's fault texts end with one */
            d[k++] = *s;
    if (k < n)
        d[k] = '\0';
    return k;
}

void st_finding_outcome(uint32_t line, const char *what, st_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->status = ST_FAIL;
    o->first_line = line;
    char digits[12], kind[64];
    size_t nd = sizeof digits - 1;
    digits[nd] = '\0';
    do {
        digits[--nd] = (char)('0' + line % 10);
        line /= 10;
    } while (line && nd > 0);
    wk_finding_kind(what, kind, sizeof kind);
    size_t k = put(o->first, 0, sizeof o->first, digits + nd);
    k = put(o->first, k, sizeof o->first, ": finding: ");
    k = put(o->first, k, sizeof o->first, kind);
    k = put(o->first, k, sizeof o->first, "  actual: ");
    put(o->first, k, sizeof o->first, what);
    k = put(o->cls[0], 0, ST_CLASS_LEN, "finding: ");
    wk_normalize(what, o->cls[0] + k, ST_CLASS_LEN - k);
    o->kind[0] = ST_CK_FINDING;
    o->ncls = 1;
    if (cur_note)   /* the statement in hand counts: it ran up to the finding */
        o->statements = cur_note->statements + 1;
}

/* ---- classes ---- */

void st_normalize(const char *in, char *out, size_t n) { wk_normalize(in, out, n); }

/* Class prefix + what (normalized) of kind, unless o has it already;
 * its index, or -1. */
static int add_class(st_outcome *o, st_class_kind kind, const char *prefix, const char *what)
{
    char norm[ST_CLASS_LEN];
    st_normalize(what ? what : "", norm, sizeof norm);
    char c[ST_CLASS_LEN];
    snprintf(c, sizeof c, "%s%s", prefix, norm);
    for (int i = 0; i < o->ncls; i++)
        if (strcmp(o->cls[i], c) == 0)
            return -1;
    if (o->ncls == ST_MAX_CLASSES)
        return -1;
    snprintf(o->cls[o->ncls], ST_CLASS_LEN, "%s", c);
    o->kind[o->ncls] = kind;
    return o->ncls++;
}

int st_outcome_has(const st_outcome *o, const char *cls)
{
    for (int i = 0; i < o->ncls; i++)
        if (strcmp(o->cls[i], cls) == 0)
            return 1;
    return 0;
}

/* A failure's class from what made it fail (rp_failure.cause): its words
 * name it. */
static void classify_failure(const rp_failure *f, st_outcome *o)
{
    const char *actual = f->actual ? f->actual : "";
    switch (f->cause) {
    case RP_FC_VERIFY: {
        const char *why = strlen(actual) >= f->detail ? actual + f->detail : "";
        if (hook_guard)   /* its words say "guard: ..." (guard_findings) */
            add_class(o, ST_CK_GUARD, "", why);
        else
            add_class(o, ST_CK_VERIFY, "verify: ", why);
        return;
    }
    case RP_FC_RAISED:
        add_class(o, ST_CK_FAILURE, "error: ", actual);
        return;
    case RP_FC_END_CHECK:
        add_class(o, ST_CK_LEAK, "leak: ", "bytes with no object");
        return;
    case RP_FC_GROWTH:
        add_class(o, ST_CK_FAILURE, "growth: ", "");
        return;
    case RP_FC_EXPECT: {
        st_class_kind k = f->query_of == RP_Q_TENSOR ? ST_CK_EXPECT_TENSOR : ST_CK_EXPECT;
        int i = add_class(o, k, "", f->text ? f->text : "?");
        if (i >= 0)
            snprintf(o->query[i], sizeof o->query[i], "%s", f->query);
        return;
    }
    default:
        add_class(o, ST_CK_FAILURE, "", f->text ? f->text : "?");
    }
}

/* A recorded program's failing verdict: one class per failing group's
 * class, holder and category ("accumulating, held by KEEP: fake tensors"),
 * lines apart (a shrunk recording keeps the failure, not its line). */
static void classify_verdict(const rp_verdict *v, st_outcome *o)
{
    for (size_t i = 0; i < v->ngroups; i++) {
        const rp_vgroup *g = &v->groups[i];
        if (g->suppressed || !(v->fails_on & (1u << g->cls)))
            continue;
        char holder[128], c[ST_CLASS_LEN];
        rp_vgroup_holder(g, holder, sizeof holder);
        snprintf(c, sizeof c, "%s, held by %s: %s", hp_class_name(g->cls), holder,
                 fk_category_noun(g->cat, 2));
        add_class(o, ST_CK_FAILURE, "", c);
    }
    if (!o->first[0]) {
        char sum[sizeof o->first - 32];
        rp_verdict_summary(v, sum, sizeof sum);
        snprintf(o->first, sizeof o->first, "%u: verdict: %s", v->line, sum);
        o->first_line = v->line;
    }
}

static void classify(const rp_scenario *r, st_outcome *o)
{
    o->statements = r->statements;
    if (r->status == RP_PASS) {
        o->status = ST_PASS;
        return;
    }
    o->status = r->status == RP_ERROR ? ST_INTERNAL : ST_FAIL;
    for (size_t i = 0; i < r->nfailures; i++) {
        const rp_failure *f = &r->failures[i];
        if (i == 0) {
            o->first_line = f->line;
            snprintf(o->first, sizeof o->first, "%u: %s  actual: %s%s%s", f->line,
                     f->text ? f->text : "", f->actual ? f->actual : "",
                     f->message ? "  " : "", f->message ? f->message : "");
        }
        classify_failure(f, o);
    }
    if (r->nretained > 0) {
        /* the kind of the object that retains the most */
        add_class(o, ST_CK_RETAINED, "retained: ", obj_kind_name(r->retained[0].kind));
        if (r->nfailures == 0)
            snprintf(o->first, sizeof o->first, "end check: %zu objects retained, first %s#%llu "
                     "created at line %u", r->nretained, obj_kind_name(r->retained[0].kind),
                     (unsigned long long)r->retained[0].id, r->retained[0].site.line);
    }
    if (r->verdict && rp_verdict_fails(r->verdict))
        classify_verdict(r->verdict, o);
    if (r->status == RP_ERROR && r->error)
        add_class(o, ST_CK_FAILURE, "internal: ", r->error);
    if (o->ncls == 0)
        add_class(o, ST_CK_FAILURE, "fail: ", "unclassified");
}


int st_run_text(const st_env *e, const char *name, const char *text, st_outcome *o)
{
    memset(o, 0, sizeof *o);
    int nerr = 0;
    sc_program *p = sc_parse(name, text, strlen(text), NULL, 0, &nerr);
    if (!p) {
        er_clear();
        o->status = ST_PARSE;
        add_class(o, ST_CK_FAILURE, "parse: ", "does not parse");
        return o->status;
    }
    sc_options so = e->sc;
    if (so.verify_hook == verify_hook)
        so.verify_hook_arg = (void *)e;
    live_note note = {0};
    if (!so.on_statement) {
        so.on_statement = on_statement;
        so.on_statement_arg = &note;
    }
    rp_scenario r;
    memset(&r, 0, sizeof r);
    hook_guard = 0;
    cur_note = &note;
    sc_run(p, &so, &r);
    cur_note = NULL;
    classify(&r, o);
    o->live_objects = note.live;
    char why[200];
    if (guard_findings(e, why, sizeof why) < 0) {
        if (o->status == ST_PASS)
            o->status = ST_FAIL;
        add_class(o, ST_CK_GUARD, "", why);
        if (!o->first[0])
            snprintf(o->first, sizeof o->first, "%s", why);
    }
    rp_scenario_clear(&r);
    sc_program_free(p);
    fk_reset();
    er_clear();
    return o->status;
}

/* st_run_forked's child: the outcome in the shared bytes, a finding's too. */
typedef struct forked {
    const st_env *e;
    const char *name, *text;
    int no_inject;
} forked;

static void on_finding(void *arg, uint32_t line, const char *what)
{
    st_finding_outcome(line, what, arg);
}

static void forked_run(void *arg, void *shared)
{
    const forked *f = arg;
    wk_on_finding(on_finding, shared);
    if (f->no_inject) {
        char err[64];
        fk_inject("", err, sizeof err);
    }
    st_outcome co;
    st_run_text(f->e, f->name, f->text, &co);
    memcpy(shared, &co, sizeof co);
}

int st_run_forked(const st_env *e, const char *name, const char *text, int no_inject,
                  st_outcome *o)
{
    forked f = {e, name, text, no_inject};
    wk_job j = {forked_run, &f, sizeof *o, 120, NULL};
    wk_end end;
    memset(o, 0, sizeof *o);
    wk_run(&j, o, &end);
    if (end.how == WK_OK || end.how == WK_FINDING)
        return o->status;
    memset(o, 0, sizeof *o);
    o->status = ST_CRASH;
    char c[ST_CLASS_LEN], words[300];
    wk_class(&end, c, sizeof c);
    o->kind[o->ncls] = end.how == WK_FINDING ? ST_CK_FINDING : ST_CK_CRASH;
    snprintf(o->cls[o->ncls++], ST_CLASS_LEN, "%s", c);
    wk_describe(&end, words, sizeof words);
    snprintf(o->first, sizeof o->first, "the run %s", words);
    return o->status;
}

/* Counted in the source as written (a line that is not blank, a comment
 * or the `end` of a block): scenario text, not a failure's words. */
size_t st_count_statements(const char *text)
{
    size_t n = 0;
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t'))
            q++;
        size_t rest = (size_t)(p + len - q);
        if (rest > 0 && *q != '#' && !(rest >= 3 && strncmp(q, "end", 3) == 0 &&
                                       (rest == 3 || q[3] == ' ' || q[3] == '#')))
            n++;
        p = e ? e + 1 : NULL;
    }
    return n;
}
