/* rp.c - run records (building, freeing, counting), the escaping sink, and
 * the text report. */
#include "report/rp_int.h"
#include "report/rp_sarif.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "esc/es.h"

const char *rp_status_name(rp_status s)
{
    switch (s) {
    case RP_PASS: return "pass";
    case RP_FAIL: return "fail";
    case RP_ERROR: return "error";
    case RP_SKIP: return "skip";
    }
    return "?";
}

int rp_format_from_name(const char *s, rp_format *out)
{
    for (int i = 0; i < RP_FORMATS; i++)
        if (s && strcmp(s, rp_formats[i].name) == 0) {
            *out = (rp_format)i;
            return 0;
        }
    return -1;
}

void rp_format_words(int set, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < RP_FORMATS && k < n; i++)
        if (rp_formats[i].set <= set)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "|" : "", rp_formats[i].name);
}

/* --- records ---------------------------------------------------------------- */

int rp_dup(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = al_strdup(src, AL_K_REPORT, "rp_dup");
    if (!*dst)
        return er_set(ER_OOM, "out of memory recording a report");
    return 0;
}

void rp_free_str(char *s)
{
    if (s)
        al_free(s, strlen(s) + 1, AL_K_REPORT);
}

static const char *const fail_kind_words[RP_FK_COUNT] = {"expect", "fidelity", "growth"};

const char *rp_fail_kind_word(rp_fail_kind k)
{
    return (unsigned)k < RP_FK_COUNT ? fail_kind_words[k] : "?";
}

int rp_fail_kind_from_word(const char *w, rp_fail_kind *out)
{
    for (int k = 0; k < RP_FK_COUNT; k++)
        if (strcmp(w, fail_kind_words[k]) == 0) {
            *out = (rp_fail_kind)k;
            return 0;
        }
    return -1;
}

void rp_failure_site(const rp_scenario *s, const rp_failure *f, char *buf, size_t n)
{
    const char *file = f->prog_file ? f->prog_file : s->file ? s->file : "?";
    uint32_t line = f->prog_file ? f->prog_line : f->line;
    if (line)
        snprintf(buf, n, "%s:%" PRIu32, file, line);
    else
        snprintf(buf, n, "%s", file);
}

void rp_failure_clear(rp_failure *f)
{
    rp_free_str(f->prog_file);
    rp_free_str(f->text);
    rp_free_str(f->actual);
    rp_free_str(f->message);
    hp_summary sm = {0, 0, f->groups, f->ngroups, f->objects, f->nobjects, f->top, f->ntop};
    hp_summary_free(&sm);
    if (f->kinds)
        al_free(f->kinds, f->nkinds * sizeof *f->kinds, AL_K_REPORT);
    memset(f, 0, sizeof *f);
}

void rp_scenario_clear(rp_scenario *s)
{
    if (!s)
        return;
    rp_free_str(s->file);
    for (size_t i = 0; i < s->nfailures; i++)
        rp_failure_clear(&s->failures[i]);
    if (s->failures)
        al_free(s->failures, s->nfailures * sizeof *s->failures, AL_K_REPORT);
    hp_summary sm = {0, 0, s->groups, s->ngroups, s->retained, s->nretained, s->top, s->ntop};
    hp_summary_free(&sm);
    for (size_t i = 0; i < s->ncheckpoints; i++)
        rp_free_str(s->checkpoints[i].name);
    if (s->checkpoints)
        al_free(s->checkpoints, s->ncheckpoints * sizeof *s->checkpoints, AL_K_REPORT);
    rp_free_str(s->error);
    rp_verdict_free(s->verdict);
    rp_free_str(s->whatif);
    rp_free_str(s->stop_site);
    rp_free_str(s->stop_why);
    hp_dtree_free(&s->dtree);
    memset(s, 0, sizeof *s);
}

void rp_run_count(rp_run *run)
{
    run->passed = run->failed = run->skipped = run->errors = 0;
    for (size_t i = 0; i < run->n; i++) {
        switch (run->scenarios[i].status) {
        case RP_PASS: run->passed++; break;
        case RP_SKIP: run->skipped++; break;
        case RP_ERROR: run->errors++; run->failed++; break;
        default: run->failed++; break;
        }
    }
}

const char *rp_run_status(const rp_run *run)
{
    if (run->stopped || run->errors)
        return "error";
    if (run->failed)
        return "fail";
    return run->interrupted && strncmp(run->interrupted, "SIG", 3) == 0 ? "interrupted" : "pass";
}

int rp_scenario_set_file(rp_scenario *s, const char *file)
{
    char *c;
    if (rp_dup(&c, file) != 0)
        return -1;
    rp_free_str(s->file);
    s->file = c;
    return 0;
}

int rp_scenario_set_error(rp_scenario *s, const char *message)
{
    char *c;
    if (rp_dup(&c, message) != 0)
        return -1;
    rp_free_str(s->error);
    s->error = c;
    return 0;
}

void rp_not_judged_text(const rp_scenario *s, char *buf, size_t n)
{
    buf[0] = '\0';
    if (s->stop_site)
        snprintf(buf, n, "NOT JUDGED: the recorder stopped at %s (%s)", s->stop_site,
                 s->stop_why && *s->stop_why ? s->stop_why : "no reason given");
}

int rp_scenario_set_not_judged(rp_scenario *s, const char *site, const char *why)
{
    char *cs, *cw;
    if (rp_dup(&cs, site && *site ? site : "?") != 0)
        return -1;
    if (rp_dup(&cw, why) != 0) {
        rp_free_str(cs);
        return -1;
    }
    rp_free_str(s->stop_site);
    rp_free_str(s->stop_why);
    s->stop_site = cs;
    s->stop_why = cw;
    s->status = RP_ERROR;
    char text[600];
    rp_not_judged_text(s, text, sizeof text);
    return rp_scenario_set_error(s, text);
}

int rp_scenario_group(rp_scenario *s)
{
    for (size_t i = 0; i < s->nfailures; i++) {
        rp_failure *f = &s->failures[i];
        if (!f->groups && f->nobjects &&
            hp_group_records(f->objects, f->nobjects, &f->groups, &f->ngroups) != 0)
            return -1;
    }
    if (!s->groups && s->nretained &&
        hp_group_records(s->retained, s->nretained, &s->groups, &s->ngroups) != 0)
        return -1;
    return 0;
}

rp_failure *rp_scenario_add_failure(rp_scenario *s, uint32_t line, uint32_t col,
                                    const char *text, const char *actual, const char *message)
{
    rp_failure f;
    memset(&f, 0, sizeof f);
    f.line = line;
    f.col = col;
    if (rp_dup(&f.text, text) != 0 || rp_dup(&f.actual, actual) != 0 ||
        rp_dup(&f.message, message) != 0) {
        rp_failure_clear(&f);
        return NULL;
    }
    size_t n = s->nfailures;
    rp_failure *nf = al_realloc(s->failures, n * sizeof *nf, (n + 1) * sizeof *nf, AL_K_REPORT,
                                "rp_add_failure");
    if (!nf) {
        rp_failure_clear(&f);
        er_set(ER_OOM, "out of memory recording a failure");
        return NULL;
    }
    nf[n] = f;
    s->failures = nf;
    s->nfailures = n + 1;
    return &nf[n];
}

int rp_scenario_add_checkpoint(rp_scenario *s, const char *name, int64_t growth)
{
    char *c;
    if (rp_dup(&c, name) != 0)
        return -1;
    size_t n = s->ncheckpoints;
    rp_checkpoint *nc = al_realloc(s->checkpoints, n * sizeof *nc, (n + 1) * sizeof *nc,
                                   AL_K_REPORT, "rp_add_checkpoint");
    if (!nc) {
        rp_free_str(c);
        return er_set(ER_OOM, "out of memory recording a checkpoint");
    }
    nc[n].name = c;
    nc[n].growth = growth;
    memset(nc[n].kinds, 0, sizeof nc[n].kinds);
    s->checkpoints = nc;
    s->ncheckpoints = n + 1;
    return 0;
}

/* --- the sink ---------------------------------------------------------------- */

/* The one escaper of each format (esc/es.h): SK_XML is ES_XML, SK_JSON
 * ES_JSON. */
void rp_escape(rp_put_fn put, void *f, const char *str, sk_mode mode)
{
    es_escape(put, f, str, mode == SK_XML ? ES_XML : ES_JSON);
}

static void file_put(void *f, const char *s, size_t n) { fwrite(s, 1, n, f); }

static void escape(FILE *f, const char *str, sk_mode mode) { rp_escape(file_put, f, str, mode); }

void sk_puts(sk *s, const char *str)
{
    if (!str)
        return;
    if (s->mode != SK_RAW) {
        escape(s->f, str, s->mode);
        return;
    }
    /* text for a terminal: control characters (an ESC in an error
     * message) are shown as '?', never sent */
    es_fputs(s->f, str, ES_TEXT);
}

void sk_fmt(sk *s, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sk_puts(s, buf);
}

void sk_color(sk *s, const char *ansi)
{
    if (s->color && s->mode == SK_RAW)
        fputs(ansi, s->f);
}

/* --- formatting helpers ------------------------------------------------------ */

void rp_site(obj_site site, char *buf, size_t n)
{
    if (!site.file)
        snprintf(buf, n, "?");
    else if (site.line)
        snprintf(buf, n, "%s:%u", site.file, site.line);
    else
        snprintf(buf, n, "%s", site.file);
}

void rp_bytes(uint64_t b, char *buf, size_t n)
{
    hp_human_bytes(b, buf, n);
}

/* Text lines stay within TEXT_WIDTH columns where they can: a chain of
 * "a -> b -> c" (a path, a group's shape) longer than that goes on
 * continuation lines, each starting "-> " four columns in, broken only
 * between elements. A terminal of 120 columns wrapped such paths in the
 * middle of a name (seen in tmux). */
enum { TEXT_WIDTH = 100 };

/* One element, broken onto a new line first if it would pass the width;
 * *col is the current column. */
static void chain_elem(sk *s, const char *elem, size_t len, int first, const char *indent,
                       size_t *col)
{
    if (!first && *col + 4 + len > TEXT_WIDTH) {
        sk_puts(s, "\n");
        sk_puts(s, indent);
        sk_puts(s, "    -> ");
        *col = strlen(indent) + 7;
    } else if (!first) {
        sk_puts(s, " -> ");
        *col += 4;
    }
    sk_fmt(s, "%.*s", (int)len, elem);
    *col += len;
}

/* The path's elements from column col (the line's indent is `indent`). */
static void path_wrapped(sk *s, char *const *path, size_t n, const char *indent, size_t col)
{
    for (size_t i = 0; i < n; i++)
        chain_elem(s, path[i], strlen(path[i]), i == 0, indent, &col);
}

/* The same for a chain already joined (hp_path_walk). */
static void chain_wrapped(sk *s, const char *chain, const char *indent, size_t col)
{
    hp_path_it it = hp_path_walk(chain);
    while (hp_path_next(&it))
        chain_elem(s, it.elem, it.len, it.index == 0, indent, &col);
}

enum { TEXT_GROUPS = 10, FAILURE_GROUPS = 5, TEXT_EXAMPLES = 1 };

/* Where snprintf into a buffer of size bytes stopped: its result, or the
 * terminating NUL's index when it truncated (or failed). */
static size_t fit(int n, size_t size)
{
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* indent, head, then tail: on the same line, or when the two pass
 * TEXT_WIDTH (with `extra` columns after tail) on the next one, four
 * columns in. */
static void head_tail(sk *s, const char *indent, const char *head, const char *tail,
                      size_t extra)
{
    sk_puts(s, indent);
    sk_puts(s, head);
    if (strlen(indent) + strlen(head) + 1 + strlen(tail) + extra > TEXT_WIDTH) {
        sk_puts(s, "\n");
        sk_puts(s, indent);
        sk_puts(s, "    ");
    } else {
        sk_puts(s, " ");
    }
    sk_puts(s, tail);
}

/* What a report says of a holder class, after the reason "reachable" (the
 * other reasons say it already: a dead header kept by a memo key or a
 * pending list, a lost object). */
const char *rp_holder_phrase(hp_holder h)
{
    switch (h) {
    case HP_HOLD_MEMO: return "held only by a memo";
    case HP_HOLD_FINALIZER: return "held only by the finalizer registry";
    case HP_HOLD_PENDING: return "held only by a pending list";
    case HP_HOLD_LOST: return "lost";
    case HP_HOLD_VARIABLE: return "held by a variable";
    case HP_HOLD_IN_USE: return "held by a variable still in use";
    case HP_HOLD_UNTRACED: return "holder not traced";
    default: return "held by ?";
    }
}

static void object_line(sk *s, const hp_retained *r, const char *indent)
{
    char site[300], b1[32], b2[32], head[400], tail[400], counts[160] = "";
    rp_site(r->site, site, sizeof site);
    rp_bytes(r->bytes, b1, sizeof b1);
    rp_bytes(r->retained_bytes, b2, sizeof b2);
    snprintf(head, sizeof head, "%s#%llu%s%s%s %s, retains %s,", obj_kind_name(r->kind),
             (unsigned long long)r->id, r->describe[0] ? " (" : "", r->describe,
             r->describe[0] ? ")" : "", b1, b2);
    snprintf(tail, sizeof tail, "created %s, %s%s%s", site, hp_reason_name(r->reason),
             r->reason == HP_REACHABLE ? ", " : "",
             r->reason == HP_REACHABLE ? rp_holder_phrase(r->holder) : "");
    if (r->reason == HP_REFCOUNT_LEAK && r->strong > r->found) {
        uint32_t lost = r->strong - r->found;
        snprintf(counts, sizeof counts,
                 "(strong count %u, holders found %u: %u reference%s unaccounted for)",
                 r->strong, r->found, lost, lost == 1 ? "" : "s");
    }
    head_tail(s, indent, head, tail, 1);       /* 1: the colon */
    if (counts[0]) {
        /* on a line of their own: 64 columns, they never fit beside the rest
         * within TEXT_WIDTH */
        sk_puts(s, "\n");
        sk_puts(s, indent);
        sk_puts(s, "    ");
        sk_puts(s, counts);
    }
    sk_puts(s, ":\n");
    sk_puts(s, indent);
    sk_puts(s, "  ");
    path_wrapped(s, r->path, r->path_len, indent, strlen(indent) + 2);
    sk_puts(s, "\n");
}

/* What retains the most (hp_top), then groups with their examples. */
typedef struct rp_objs {
    uint64_t total;
    const hp_group *groups; size_t ngroups;
    const hp_retained *recs; size_t nrecs;
    const hp_top *top; size_t ntop;
} rp_objs;

/* Was t printed, with the same figures, by the previous object list? */
static int printed_before(const hp_top *t, const hp_top *prev, size_t nprev)
{
    for (size_t i = 0; i < nprev; i++)
        if (prev[i].id == t->id && prev[i].retained_bytes == t->retained_bytes &&
            prev[i].count == t->count)
            return 1;
    return 0;
}

/* The biggest retainers; one printed by the previous list (`prev`: two
 * failing memo expectations share their converter) gets one line. */
static void top_lines(sk *s, const rp_objs *x, const char *indent, const hp_top *prev,
                      size_t nprev)
{
    for (size_t i = 0; i < x->ntop; i++) {
        const hp_top *t = &x->top[i];
        char b[32], head[300], tail[300] = "";
        rp_bytes(t->retained_bytes, b, sizeof b);
        size_t n = fit(snprintf(head, sizeof head, "biggest: %s#%llu retains %s",
                                t->type_name ? t->type_name : "?", (unsigned long long)t->id,
                                b), sizeof head);
        if (printed_before(t, prev, nprev)) {
            sk_puts(s, indent);
            sk_puts(s, head);
            sk_puts(s, ", as above\n");
            continue;
        }
        snprintf(head + n, sizeof head - n, ": %llu objects%s",
                 (unsigned long long)t->count, t->main_count ? "," : "");
        if (t->main_count)
            snprintf(tail, sizeof tail, "%llu of them through %s (%s)",
                     (unsigned long long)t->main_count, t->main_via, obj_kind_name(t->main_kind));
        if (tail[0]) {
            head_tail(s, indent, head, tail, 0);
        } else {
            sk_puts(s, indent);
            sk_puts(s, head);
        }
        sk_puts(s, "\n");
        sk_puts(s, indent);
        sk_puts(s, "  ");
        chain_wrapped(s, t->path, indent, strlen(indent) + 2);
        sk_puts(s, "\n");
    }
}

static void group_lines(sk *s, const rp_objs *x, const rp_options *o, const char *indent,
                        size_t maxg)
{
    int verbose = o && o->verbose;
    size_t ng = x->ngroups;
    size_t gshown = verbose || ng <= maxg ? ng : maxg;
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s  ", indent);
    for (size_t i = 0; i < gshown; i++) {
        const hp_group *g = &x->groups[i];
        if (g->count == 1 && g->nexamples && g->example < x->nrecs) {
            object_line(s, &x->recs[g->example], indent);   /* says all the group would */
            continue;
        }
        char site[300], each[32], tot[32], ret[32], head[400], tail[400];
        rp_site(g->site, site, sizeof site);
        rp_bytes(g->bytes_each, each, sizeof each);
        rp_bytes(g->total_bytes, tot, sizeof tot);
        rp_bytes(g->total_retained, ret, sizeof ret);
        size_t n = fit(snprintf(head, sizeof head, "%llu x %s (%s), %s each,",
                                (unsigned long long)g->count, obj_kind_name(g->kind),
                                g->type_name ? g->type_name : "?", each), sizeof head);
        int untraced = g->reason == HP_UNTRACED;
        if (g->count > 1)
            snprintf(head + n, sizeof head - n, untraced ? " %s in all," : " %s in all, retaining %s,",
                     tot, ret);
        if (untraced)
            snprintf(tail, sizeof tail, "created %s, not traced", site);
        else
            snprintf(tail, sizeof tail, "created %s, %s%s%s", site, hp_reason_name(g->reason),
                     g->reason == HP_REACHABLE ? ", " : "",
                     g->reason == HP_REACHABLE ? rp_holder_phrase(g->holder) : "");
        head_tail(s, indent, head, tail, 0);
        if (untraced) {
            sk_puts(s, "\n");
            continue;
        }
        /* the shape on a line of its own: as long as a path, it made the
         * group line wrap in a 120-column terminal */
        sk_fmt(s, "\n%svia ", ind2);
        chain_wrapped(s, g->via ? g->via : "?", ind2, strlen(ind2) + 4);
        sk_puts(s, "\n");
        size_t nex = g->nexamples;
        if (g->example + nex > x->nrecs)
            nex = g->example < x->nrecs ? x->nrecs - g->example : 0;
        size_t shown = verbose || nex < TEXT_EXAMPLES ? nex : TEXT_EXAMPLES;
        for (size_t k = 0; k < shown; k++)
            object_line(s, &x->recs[g->example + k], ind2);
        if (shown < g->count) {
            sk_puts(s, ind2);
            sk_fmt(s, "... and %llu more\n", (unsigned long long)(g->count - shown));
        }
    }
    if (gshown < ng) {
        sk_puts(s, indent);
        sk_fmt(s, "... and %zu more groups (-v lists them)\n", ng - gshown);
    }
}

/* Does text hold msg between double quotes (`expect c, "msg"`)? Then the
 * failure line says it already. */
static int quoted_in(const char *text, const char *msg)
{
    size_t n = strlen(msg);
    for (const char *p = text ? strstr(text, msg) : NULL; p; p = strstr(p + 1, msg))
        if (p > text && p[-1] == '"' && p[n] == '"')
            return 1;
    return 0;
}

/* "FILE:LINE: TEXT  actual: VALUE  MESSAGE" (the message only when TEXT
 * does not quote it), FILE:LINE the program's when a recording's failure
 * has it (the recording's line then a detail after TEXT). Longer than
 * TEXT_WIDTH, the actual value and the message go on a line of their own,
 * indented ind2. */
static void failure_header(sk *s, const rp_scenario *sc, const rp_failure *f, const char *indent,
                           const char *ind2)
{
    const char *text = f->text ? f->text : "";
    const char *msg = f->message && f->message[0] && !quoted_in(text, f->message)
                          ? f->message : NULL;
    char where[300], detail[48] = "";
    if (f->prog_file)
        rp_failure_site(sc, f, where, sizeof where);
    else
        snprintf(where, sizeof where, "%s:%u", sc->file ? sc->file : "?", f->line);
    if (f->prog_file && f->line)
        snprintf(detail, sizeof detail, " (the recording's line %u)", f->line);
    size_t width = strlen(indent) + strlen(where) + 2 + strlen(text) + strlen(detail) +
                   (f->actual ? 10 + strlen(f->actual) : 0) + (msg ? 2 + strlen(msg) : 0);
    const char *sep = width > TEXT_WIDTH ? NULL : "  ";
    sk_puts(s, indent);
    sk_color(s, "\033[1m");
    sk_puts(s, where);
    sk_puts(s, ":");
    sk_color(s, "\033[0m");
    sk_puts(s, " ");
    sk_puts(s, text);
    sk_puts(s, detail);
    if (f->actual || msg) {
        if (!sep) {
            sk_puts(s, "\n");
            sk_puts(s, ind2);
        } else {
            sk_puts(s, sep);
        }
    }
    if (f->actual) {
        sk_color(s, "\033[31m");
        sk_puts(s, "actual:");
        sk_color(s, "\033[0m");
        sk_puts(s, " ");
        sk_puts(s, f->actual);
    }
    if (msg) {
        /* a long message on a line of its own rather than past the width */
        if (f->actual && !sep && strlen(ind2) + 10 + strlen(f->actual) + 2 + strlen(msg) > TEXT_WIDTH) {
            sk_puts(s, "\n");
            sk_puts(s, ind2);
        } else if (f->actual) {
            sk_puts(s, "  ");
        }
        sk_puts(s, msg);
    }
    sk_puts(s, "\n");
}

/* --- bounded details ------------------------------------------------------- */

static int id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The ids of f's example records, sorted, into ids (n of them); -1 OOM. */
static int example_ids(const rp_failure *f, uint64_t **ids)
{
    *ids = al_malloc((f->nobjects ? f->nobjects : 1) * sizeof **ids, AL_K_REPORT, "rp ids");
    if (!*ids)
        return -1;
    for (size_t i = 0; i < f->nobjects; i++)
        (*ids)[i] = f->objects[i].id;
    qsort(*ids, f->nobjects, sizeof **ids, id_cmp);
    return 0;
}

uint64_t rp_failure_total(const rp_failure *f)
{
    return f->objects_total ? f->objects_total : f->nobjects;
}

int rp_failure_same_objects(const rp_failure *a, const rp_failure *b)
{
    if (!a->nobjects || a->nobjects != b->nobjects || rp_failure_total(a) != rp_failure_total(b))
        return 0;
    uint64_t bytes_a = 0, bytes_b = 0;
    for (size_t i = 0; i < a->ngroups; i++)
        bytes_a += a->groups[i].total_bytes;
    for (size_t i = 0; i < b->ngroups; i++)
        bytes_b += b->groups[i].total_bytes;
    if (bytes_a != bytes_b)
        return 0;
    uint64_t *x = NULL, *y = NULL;
    int same = 0;
    if (example_ids(a, &x) == 0 && example_ids(b, &y) == 0)
        same = memcmp(x, y, a->nobjects * sizeof *x) == 0;
    else
        er_clear();   /* not known: said twice rather than wrongly once */
    if (x)
        al_free(x, a->nobjects * sizeof *x, AL_K_REPORT);
    if (y)
        al_free(y, b->nobjects * sizeof *y, AL_K_REPORT);
    return same;
}

long rp_failure_shares(const rp_scenario *sc, size_t i)
{
    enum { LOOK_BACK = 64 };   /* a bound on the pairs compared */
    const rp_failure *f = &sc->failures[i];
    for (size_t j = i; f->same_as && j-- > 0;)   /* read back: the latest on that line */
        if (sc->failures[j].line == f->same_as && sc->failures[j].ngroups)
            return (long)j;
    if (!f->nobjects)
        return -1;
    for (size_t j = i > LOOK_BACK ? i - LOOK_BACK : 0; j < i; j++)
        if (rp_failure_same_objects(&sc->failures[j], f))
            return (long)j;
    return -1;
}

/* A failing growth()/live()'s live objects per kind, with a total. */
static void kind_table(sk *s, const rp_failure *f, const char *ind2)
{
    if (!f->nkinds)
        return;
    uint64_t now = 0;
    int64_t delta = 0;
    sk_puts(s, ind2);
    sk_fmt(s, "%-18s %12s %12s\n", "kind", "live now", "change");
    for (size_t i = 0; i < f->nkinds; i++) {
        sk_puts(s, ind2);
        sk_fmt(s, "%-18s %12llu %+12lld\n", obj_kind_name(f->kinds[i].kind),
               (unsigned long long)f->kinds[i].now, (long long)f->kinds[i].delta);
        now += f->kinds[i].now;
        delta += f->kinds[i].delta;
    }
    sk_puts(s, ind2);
    sk_fmt(s, "%-18s %12llu %+12lld\n", "all", (unsigned long long)now, (long long)delta);
}

/* One failure's objects (after its header). */
static void failure_objects(sk *s, const rp_failure *f, const rp_options *o, const char *ind2,
                            const hp_top *prev_top, size_t nprev_top)
{
    size_t ng = f->ngroups;
    rp_objs x = {rp_failure_total(f), f->groups, ng, f->objects, f->nobjects, f->top, f->ntop};
    uint64_t bytes = 0;
    for (size_t k = 0; k < x.ngroups; k++)
        bytes += x.groups[k].total_bytes;
    char b[32];
    rp_bytes(bytes, b, sizeof b);
    sk_puts(s, ind2);
    sk_fmt(s, "%llu object%s behind it, %s\n", (unsigned long long)x.total,
           x.total == 1 ? "" : "s", b);
    top_lines(s, &x, ind2, prev_top, nprev_top);
    group_lines(s, &x, o, ind2, FAILURE_GROUPS);
}

/* Lines in a memory stream's text. */
static size_t lines_in(const char *t, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += t[i] == '\n';
    return n;
}

/* A memory sink like s; its text is *buf (free()) once closed. */
typedef struct msink {
    sk s;
    char *buf;
    size_t len;
} msink;

static int msink_open(msink *m, const sk *like)
{
    m->buf = NULL;
    m->len = 0;
    m->s = *like;
    m->s.oom = 0;
    m->s.f = open_memstream(&m->buf, &m->len);
    return m->s.f ? 0 : -1;
}

/* Close; the text stays in m->buf (NULL when the stream failed). */
static void msink_close(msink *m, sk *into)
{
    if (fclose(m->s.f) != 0) {
        free(m->buf);
        m->buf = NULL;
        m->len = 0;
    }
    into->oom |= m->s.oom;
}

static void retained_section(sk *s, const rp_scenario *sc, const rp_options *o,
                             const char *indent, size_t maxg, const hp_top *prev_top,
                             size_t nprev_top)
{
    if (sc->nretained) {
        const hp_group *gs = sc->groups;
        size_t ng = sc->ngroups;
        rp_objs x = {sc->retained_total ? sc->retained_total : sc->nretained, gs, ng,
                     sc->retained, sc->nretained, sc->top, sc->ntop};
        uint64_t total = 0;
        for (size_t i = 0; i < ng; i++)
            total += gs[i].total_bytes;
        char b[32];
        rp_bytes(total, b, sizeof b);
        sk_puts(s, indent);
        sk_color(s, "\033[31m");
        sk_fmt(s, "retained: %llu object%s, %s", (unsigned long long)x.total,
               x.total == 1 ? "" : "s", b);
        sk_color(s, "\033[0m");
        sk_puts(s, "\n");
        char ind[64];
        snprintf(ind, sizeof ind, "%s  ", indent);
        top_lines(s, &x, ind, prev_top, nprev_top);
        group_lines(s, &x, o, ind, maxg);
    }
    if (sc->leaked_bytes) {
        char b[32];
        rp_bytes(sc->leaked_bytes, b, sizeof b);
        sk_puts(s, indent);
        sk_fmt(s, "leaked: %s still live in the allocator\n", b);
    }
    if (sc->valgrind_checked && (sc->valgrind_definite || sc->valgrind_indirect)) {
        sk_puts(s, indent);
        sk_fmt(s, "valgrind: %llu B definitely lost, %llu B indirectly lost\n",
               (unsigned long long)sc->valgrind_definite,
               (unsigned long long)sc->valgrind_indirect);
    }
    if (o && o->verbose)
        for (size_t i = 0; i < sc->ncheckpoints; i++) {
            sk_puts(s, indent);
            sk_puts(s, "checkpoint \"");
            sk_puts(s, sc->checkpoints[i].name);
            sk_fmt(s, "\": growth %+lld\n", (long long)sc->checkpoints[i].growth);
        }
}

/* The retained section, as text, within about `lines` lines (fewer groups
 * when the default ten pass it). NULL when memory ran out. */
static char *retained_text(sk *s, const rp_scenario *sc, const rp_options *o,
                           const char *indent, size_t lines, size_t *len)
{
    size_t tries[] = {TEXT_GROUPS, 4, 1};
    int verbose = o && o->verbose;
    for (size_t t = 0; t < (verbose ? 1 : 3); t++) {
        msink m;
        if (msink_open(&m, s) != 0)
            return NULL;
        retained_section(&m.s, sc, o, indent, tries[t], NULL, 0);
        msink_close(&m, s);
        if (!m.buf)
            return NULL;
        if (verbose || t == 2 || lines_in(m.buf, m.len) <= lines) {
            *len = m.len;
            return m.buf;
        }
        free(m.buf);
    }
    return NULL;
}

/* What follows the failures shown when the budget ran out. */
static void rest_line(sk *s, const rp_scenario *sc, size_t from, const char *indent)
{
    size_t with = 0;
    uint64_t objs = 0;
    for (size_t i = from; i < sc->nfailures; i++)
        if (sc->failures[i].nobjects || sc->failures[i].ngroups) {
            with++;
            objs += rp_failure_total(&sc->failures[i]);
        }
    sk_puts(s, indent);
    sk_fmt(s, "... and %zu more failing expectation%s (", sc->nfailures - from,
           sc->nfailures - from == 1 ? "" : "s");
    if (with)
        sk_fmt(s, "%zu with objects behind them, %llu objects counted per expectation; ", with,
               (unsigned long long)objs);
    sk_puts(s, "-v lists them)\n");
}

/* The verdict's text lines, indented, at most VERDICT_LINES (the JSON has
 * them all), then the fidelity line when expectations failed. Returns the
 * lines written. */
static size_t verdict_lines(sk *s, const rp_scenario *sc, const char *indent)
{
    enum { VERDICT_LINES = 40 };
    size_t vlines = 0;
    char *vtext = rp_verdict_text(sc->verdict);
    if (!vtext) {
        s->oom = 1;
        return 0;
    }
    const char *v = vtext;
    while (*v) {
        const char *e = strchr(v, '\n');
        size_t n = e ? (size_t)(e - v) : strlen(v);
        if (vlines == VERDICT_LINES) {
            size_t rest = 0;
            for (const char *q = v; *q; q++)
                rest += *q == '\n';
            sk_puts(s, indent);
            sk_fmt(s, "... %zu more verdict lines (--format %s has them all)\n", rest,
                   rp_formats[RP_JSON].name);
            vlines++;
            break;
        }
        char line[512];
        snprintf(line, sizeof line, "%.*s", n > 500 ? 500 : (int)n, v);
        sk_puts(s, indent);
        sk_puts(s, line);
        sk_puts(s, "\n");
        vlines++;
        v += n + (e != NULL);
    }
    free(vtext);
    return vlines;
}

const char *rp_fail_kind_heading(rp_fail_kind k)
{
    /* a recording's expectations say the model is wrong; the objects
     * growing with --repeat's rounds are a leak */
    static const char *const heading[RP_FK_COUNT] = {
        [RP_FK_FIDELITY] = "fidelity: the model did not show what PyTorch showed at these lines "
                           "(the model is wrong):",
        [RP_FK_GROWTH] = "growth: what these lines made grows with the rounds of --repeat "
                         "(a leak, not the model's fault):",
    };
    return (unsigned)k < RP_FK_COUNT ? heading[k] : NULL;
}

static void kind_heading(sk *s, rp_fail_kind k, const char *indent)
{
    const char *h = rp_fail_kind_heading(k);
    if (!h)
        return;
    sk_puts(s, indent);
    sk_puts(s, h);
    sk_puts(s, "\n");
}

/* The head of the details: the error (a recording not judged says so
 * itself), the what-if lines and the verdict's. *used: the error's lines;
 * returns the what-if's and verdict's. */
static size_t details_head(sk *s, const rp_scenario *sc, const char *indent, size_t *used)
{
    *used = 0;
    if (sc->error) {
        sk_puts(s, indent);
        sk_color(s, "\033[1;31m");
        sk_puts(s, sc->stop_site ? "" : "error: ");
        sk_color(s, "\033[0m");
        sk_puts(s, sc->error);
        sk_puts(s, "\n");
        (*used)++;
    }
    if (sc->whatif) {   /* a few lines: said before the verdict it explains */
        sk_puts(s, indent);
        for (const char *w = sc->whatif; *w; w++) {
            sk_fmt(s, "%c", *w);
            if (*w == '\n' && w[1])
                sk_puts(s, indent);
        }
    }
    return sc->verdict ? verdict_lines(s, sc, indent) : 0;
}

void rp_details(sk *s, const rp_scenario *sc, const rp_options *o, const char *indent)
{
    int verbose = o && o->verbose;
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s    ", indent);
    const hp_top *prev_top = NULL;      /* the last list's biggest retainers */
    size_t nprev_top = 0;
    size_t used = 0;
    size_t vlines = details_head(s, sc, indent, &used);
    size_t rlen = 0;
    char *rtext = retained_text(s, sc, o, indent, RP_SCENARIO_LINES / 2, &rlen);
    if (!rtext && (sc->nretained || sc->leaked_bytes))
        s->oom = 1;
    size_t budget = RP_SCENARIO_LINES - 1 - (rtext ? lines_in(rtext, rlen) : 0);
    budget = budget > vlines + 8 ? budget - vlines : 8;
    for (size_t i = 0; i < sc->nfailures; i++) {
        const rp_failure *f = &sc->failures[i];
        long same = rp_failure_shares(sc, i);
        msink m;
        if (msink_open(&m, s) != 0) {
            s->oom = 1;
            break;
        }
        if (i == 0 || sc->failures[i - 1].kind != f->kind)
            kind_heading(&m.s, f->kind, indent);
        failure_header(&m.s, sc, f, indent, ind2);
        kind_table(&m.s, f, ind2);
        size_t head = m.s.f ? (size_t)ftell(m.s.f) : 0;
        if (same >= 0) {
            char at[300] = "line ";
            const rp_failure *sf = &sc->failures[same];
            if (sf->prog_file)
                rp_failure_site(sc, sf, at, sizeof at);
            else
                snprintf(at + 5, sizeof at - 5, "%u", sf->line);
            sk_puts(&m.s, ind2);
            sk_fmt(&m.s, "the same %llu object%s as %s, above\n",
                   (unsigned long long)rp_failure_total(f), rp_failure_total(f) == 1 ? "" : "s",
                   at);
        } else if (f->nobjects || f->ngroups) {
            failure_objects(&m.s, f, o, ind2, prev_top, nprev_top);
        }
        msink_close(&m, s);
        if (!m.buf) {
            s->oom = 1;
            break;
        }
        size_t n = lines_in(m.buf, m.len);
        if (!verbose && used + n > budget) {
            /* the header and one line of totals, or nothing more */
            size_t hn = lines_in(m.buf, head);
            if (!(f->nobjects || f->ngroups) || same >= 0 || used + hn + 2 > budget) {
                free(m.buf);
                rest_line(s, sc, i, indent);
                break;
            }
            fwrite(m.buf, 1, head, s->f);
            uint64_t bytes = 0;
            for (size_t k = 0; k < f->ngroups; k++)
                bytes += f->groups[k].total_bytes;
            char b[32];
            rp_bytes(bytes, b, sizeof b);
            sk_puts(s, ind2);
            sk_fmt(s, "%llu object%s behind it, %s (-v lists them)\n",
                   (unsigned long long)rp_failure_total(f), rp_failure_total(f) == 1 ? "" : "s",
                   b);
            used += hn + 1;
            free(m.buf);
            continue;
        }
        fwrite(m.buf, 1, m.len, s->f);
        used += n;
        free(m.buf);
        if (same < 0 && (f->nobjects || f->ngroups)) {
            prev_top = f->top;
            nprev_top = f->ntop;
        }
    }
    if (rtext) {
        fwrite(rtext, 1, rlen, s->f);
        free(rtext);
    }
}

/* --- text -------------------------------------------------------------------- */

static void status_word(sk *s, const rp_scenario *sc)
{
    static const char *const words[] = {"PASS", "FAIL", "ERROR", "SKIP"};
    static const char *const colors[] = {"\033[32m", "\033[31m", "\033[1;31m", "\033[33m"};
    unsigned i = (unsigned)sc->status < 4 ? (unsigned)sc->status : 1;
    sk_color(s, colors[i]);
    sk_puts(s, sc->stop_site ? "NOT JUDGED" : words[i]);
    sk_color(s, "\033[0m");
}

static size_t not_judged(const rp_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->n; i++)
        n += run->scenarios[i].stop_site != NULL;
    return n;
}

static const char *text_name(const rp_scenario *sc, const rp_options *o)
{
    return o && o->subject ? o->subject : sc->file ? sc->file : "?";
}

void rp_write_status_line(const rp_scenario *sc, FILE *f, const rp_options *o)
{
    sk s = {f, SK_RAW, o && o->color, 0};
    status_word(&s, sc);
    sk_puts(&s, " ");
    sk_puts(&s, text_name(sc, o));
    sk_puts(&s, "\n");
}

int rp_write_text_tail(const rp_run *run, FILE *f, const rp_options *o)
{
    sk s = {f, SK_RAW, o && o->color, 0};
    for (size_t i = 0; i < run->n; i++) {
        const rp_scenario *sc = &run->scenarios[i];
        if (sc->status != RP_FAIL && sc->status != RP_ERROR && !sc->verdict && !sc->whatif)
            continue;
        sk_puts(&s, "\n");
        sk_puts(&s, text_name(sc, o));
        sk_puts(&s, ":\n");
        rp_details(&s, sc, o, "  ");
    }
    if (run->n)
        fputc('\n', f);
    if (run->stopped)
        fprintf(f, "stopped: %s\n", run->stopped);
    fprintf(f, "%u passed, %u failed", run->passed, run->failed);
    size_t nj = not_judged(run);
    if (nj)
        fprintf(f, " (%zu not judged: the recorder stopped)", nj);
    if (run->skipped)
        fprintf(f, ", %u skipped", run->skipped);
    fputc('\n', f);
    return s.oom ? er_set(ER_OOM, "out of memory grouping retained objects") : 0;
}

static int write_text(const rp_run *run, FILE *f, const rp_options *o)
{
    int quiet = o && o->quiet;
    for (size_t i = 0; i < run->n; i++) {
        const rp_scenario *sc = &run->scenarios[i];
        if (quiet && (sc->status == RP_PASS || sc->status == RP_SKIP))
            continue;
        rp_write_status_line(sc, f, o);
    }
    return rp_write_text_tail(run, f, o);
}

/* The writers of the rows whose own functions take other arguments. */
static int write_json(const rp_run *run, FILE *f, const rp_options *o)
{
    (void)o;
    return rp_write_json(run, f);
}

static int write_sarif(const rp_run *run, FILE *f, const rp_options *o)
{
    (void)o;
    return rp_write_sarif(run, f, run->program ? "record" : "run");
}

static int write_github(const rp_run *run, FILE *f, const rp_options *o)
{
    (void)o;
    return rp_write_github(run, f);
}

const rp_format_row rp_formats[RP_FORMATS] = {
    [RP_TEXT] = {"text", "--text", write_text, RP_FSET_PLAIN, "text"},
    [RP_JSON] = {"json", "--json", write_json, RP_FSET_PLAIN, "JSON"},
    [RP_JUNIT] = {"junit", "--junit", rp_write_junit, RP_FSET_TESTS, "JUnit XML"},
    [RP_TAP] = {"tap", "--tap", rp_write_tap, RP_FSET_TESTS, "TAP"},
    [RP_SARIF] = {"sarif", "--sarif", write_sarif, RP_FSET_SCAN, "SARIF 2.1.0"},
    [RP_GITHUB] = {"github", "--github", write_github, RP_FSET_SCAN, "GitHub workflow commands"},
};

int rp_write(const rp_run *run, rp_format fmt, FILE *f, const rp_options *o)
{
    if ((unsigned)fmt >= RP_FORMATS)
        return er_set(ER_INTERNAL, "unknown report format %d", (int)fmt);
    int rc = rp_formats[fmt].write(run, f, o);
    if (fflush(f) != 0 || ferror(f)) {
        er_set(ER_INTERNAL, "write error on the report");
        return -1;
    }
    return rc;
}
