/* rp_verdict.c - the verdict's records (rp_verdict.h): building them, and
 * their words and text lines. */
#include "report/rp_verdict.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/wl.h"

static const char *const root_words[RP_ROOT_COUNT] = {
    [RP_ROOT_PROGRAM] = "program", [RP_ROOT_FINALIZERS] = "finalizers",
    [RP_ROOT_UNREACHABLE] = "unreachable", [RP_ROOT_WEAK] = "weak",
    [RP_ROOT_PYTORCH] = "pytorch"};
static const char *const mech_words[RP_MECH_COUNT] = {
    [RP_MECH_NONE] = "", [RP_MECH_REFCOUNT_LEAK] = "refcount-leak",
    [RP_MECH_PENDING_SWEEP] = "pending-sweep", [RP_MECH_STALE_ENTRY] = "stale-entry",
    [RP_MECH_VIEW_BASE] = "view-base"};

const char *rp_root_kind_word(rp_root_kind k)
{
    return wl_word(WL_WORDS(root_words), RP_ROOT_COUNT, (int)k);
}

int rp_root_kind_from_word(const char *w, rp_root_kind *out)
{
    int i = wl_find(WL_WORDS(root_words), RP_ROOT_COUNT, w);
    return i < 0 ? -1 : (*out = (rp_root_kind)i, 0);
}

const char *rp_mechanism_word(rp_mechanism m)
{
    return wl_word(WL_WORDS(mech_words), RP_MECH_COUNT, (int)m);
}

int rp_mechanism_from_word(const char *w, rp_mechanism *out)
{
    int i = wl_find(WL_WORDS(mech_words), RP_MECH_COUNT, w);
    return i < 0 ? -1 : (*out = (rp_mechanism)i, 0);
}

/* ---- building ---- */

rp_verdict *rp_verdict_new(void)
{
    rp_verdict *v = al_malloc(sizeof *v, AL_K_REPORT, "rp verdict");
    if (!v) {
        er_set(ER_OOM, "out of memory recording a verdict");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    return v;
}

void rp_verdict_free(rp_verdict *v)
{
    if (!v)
        return;
    if (v->groups)
        al_free(v->groups, v->ngroups * sizeof *v->groups, AL_K_REPORT);
    if (v->supp)
        al_free(v->supp, v->nsupp * sizeof *v->supp, AL_K_REPORT);
    al_free(v, sizeof *v, AL_K_REPORT);
}

/* Grow an exactly-sized array by one element (AL_K_REPORT). */
static void *grow_one(void *a, size_t n, size_t size)
{
    void *na = al_realloc(a, n * size, (n + 1) * size, AL_K_REPORT, "rp verdict rows");
    if (!na)
        er_set(ER_OOM, "out of memory recording a verdict");
    return na;
}

int rp_verdict_add_group(rp_verdict *v, const rp_vgroup *g)
{
    rp_vgroup *ng = grow_one(v->groups, v->ngroups, sizeof *ng);
    if (!ng)
        return -1;
    ng[v->ngroups] = *g;
    v->groups = ng;
    v->ngroups++;
    return 0;
}

int rp_verdict_add_supp(rp_verdict *v, const char *rule, fk_category cat, uint64_t count)
{
    rp_vsupp *ns = grow_one(v->supp, v->nsupp, sizeof *ns);
    if (!ns)
        return -1;
    rp_vsupp *s = &ns[v->nsupp];
    memset(s, 0, sizeof *s);
    snprintf(s->rule, sizeof s->rule, "%s", rule);
    s->cat = cat;
    s->count = count;
    v->supp = ns;
    v->nsupp++;
    return 0;
}

int rp_verdict_fails(const rp_verdict *v)
{
    for (int c = 0; c < HP_CL_COUNT; c++)
        if ((v->fails_on & (1u << c)) && v->count[c])
            return 1;
    return 0;
}

/* ---- words ---- */

void rp_vgroup_site(const rp_vgroup *g, char *buf, size_t n)
{
    if (g->file[0] && g->line)
        snprintf(buf, n, "%s:%" PRIu32, g->file, g->line);
    else
        snprintf(buf, n, "%s", g->file[0] ? g->file : "?");
}

void rp_vgroup_holder(const rp_vgroup *g, char *buf, size_t n)
{
    if (g->cls == HP_CL_LOST && g->root == RP_ROOT_PYTORCH && g->mech == RP_MECH_VIEW_BASE)
        snprintf(buf, n, "inside PyTorch (a view's base, held from C++)");
    else if (g->cls == HP_CL_LOST)
        snprintf(buf, n, "inside PyTorch");
    else if (g->cls == HP_CL_LINGERING)
        snprintf(buf, n, g->mech == RP_MECH_STALE_ENTRY ? "a stale entry" : "a pending sweep");
    else if (g->root == RP_ROOT_FINALIZERS)
        snprintf(buf, n, "PyTorch's finalizer registry");
    else
        snprintf(buf, n, "%s", g->root_name);
}

void rp_vgroup_marks(const rp_vgroup *g, char *buf, size_t n)
{
    if (!g->mark_to[0]) {
        if (n)
            buf[0] = '\0';
    } else if (!g->mark_from[0])
        snprintf(buf, n, "before mark '%s' and after it", g->mark_to);
    else if (strcmp(g->mark_from, g->mark_to) == 0)
        snprintf(buf, n, "since mark '%s'", g->mark_from);
    else
        snprintf(buf, n, "between marks '%s' and '%s'", g->mark_from, g->mark_to);
}

/* " since mark 'step 3'" (with its space), or "". */
static void marks_phrase(const rp_vgroup *g, char *buf, size_t n)
{
    char m[2 * RP_VMARK_LEN + 40];
    rp_vgroup_marks(g, m, sizeof m);
    snprintf(buf, n, "%s%s", m[0] ? " " : "", m);
}

/* ---- leaks ---- */

int rp_vgroup_same_leak(const rp_vgroup *a, const rp_vgroup *b)
{
    return a->cls == b->cls && a->root == b->root && a->mech == b->mech &&
           a->line == b->line && strcmp(a->root_name, b->root_name) == 0 &&
           strcmp(a->file, b->file) == 0;
}

size_t rp_verdict_leak_of(const rp_verdict *v, size_t i)
{
    if (i >= v->ngroups || v->groups[i].suppressed)
        return v->ngroups;
    for (size_t k = 0; k < i; k++)
        if (!v->groups[k].suppressed && rp_vgroup_same_leak(&v->groups[k], &v->groups[i]))
            return k;
    return i;
}

void rp_verdict_leak(const rp_verdict *v, size_t lead, rp_vleak *out)
{
    memset(out, 0, sizeof *out);
    out->lead = lead;
    for (size_t i = lead; i < v->ngroups; i++) {
        const rp_vgroup *g = &v->groups[i];
        if (g->suppressed || !rp_vgroup_same_leak(g, &v->groups[lead]))
            continue;
        int c = (unsigned)g->cat < FK_CAT_COUNT ? (int)g->cat : FK_CAT_FAKE;
        out->ngroups++;
        out->count[c] += g->count;
        out->total += g->count;
        out->bytes += g->bytes;
        out->retained += g->retained;
        if (g->cls == HP_CL_ACCUMULATING && g->last_round >= g->first_round && g->first_round)
            out->per_round[c] += (double)g->count / (double)(g->last_round - g->first_round + 1);
    }
}

/* "84 fake tensors and 12 modes": its categories in the table's order. */
static size_t leak_counts(const rp_vleak *l, char *buf, size_t n, int *first)
{
    size_t used = 0, left = 0;
    *first = -1;
    buf[0] = '\0';
    for (int c = 0; c < FK_CAT_COUNT; c++)
        left += l->count[c] != 0;
    for (int c = 0; c < FK_CAT_COUNT && used < n; c++) {
        if (!l->count[c])
            continue;
        const char *sep = *first < 0 ? "" : left == 1 ? " and " : ", ";
        if (*first < 0)
            *first = c;
        left--;
        used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64 " %s", sep, l->count[c],
                                 fk_category_noun((fk_category)c, l->count[c]));
    }
    return used < n ? used : n - 1;
}

void rp_vleak_summary(const rp_verdict *v, const rp_vleak *l, char *buf, size_t n)
{
    const rp_vgroup *g = &v->groups[l->lead];
    char counts[240], site[200], holder[128];
    int first;
    leak_counts(l, counts, sizeof counts, &first);
    rp_vgroup_site(g, site, sizeof site);
    rp_vgroup_holder(g, holder, sizeof holder);
    switch (g->cls) {
    case HP_CL_LOST:
        snprintf(buf, n, "%s lost inside PyTorch%s at %s", counts,
                 g->mech == RP_MECH_REFCOUNT_LEAK ? " (a reference-count leak)"
                 : g->root == RP_ROOT_UNREACHABLE ? " (no root of the program reaches them)"
                                                   : "", site);
        break;
    case HP_CL_ACCUMULATING: {
        double r = first >= 0 ? l->per_round[first] : 0;
        char rate[48];
        if (r == (double)(uint64_t)r)
            snprintf(rate, sizeof rate, "+%" PRIu64, (uint64_t)r);
        else
            snprintf(rate, sizeof rate, "+%.2f", r);
        snprintf(buf, n, "%s in %s, %s per round at %s", counts, holder, rate, site);
        break;
    }
    case HP_CL_REACHABLE:
        snprintf(buf, n, "%s in %s, %s, at %s", counts, holder, hp_class_name(g->cls), site);
        break;
    default:
        snprintf(buf, n, g->mech == RP_MECH_STALE_ENTRY
                              ? "%s left in a weak table that no sweep clears, at %s"
                              : "%s awaiting their converter's next sweep at %s",
                 counts, site);
        break;
    }
    size_t used = strlen(buf);
    if (used + 1 < n)
        marks_phrase(g, buf + used, n - used);
}

int rp_verdict_leak_line(const rp_verdict *v, size_t i, char *buf, size_t n)
{
    if (i >= v->ngroups || rp_verdict_leak_of(v, i) != i)
        return 0;
    rp_vleak l;
    rp_verdict_leak(v, i, &l);
    rp_vleak_summary(v, &l, buf, n);
    return 1;
}

void rp_verdict_where(const rp_verdict *v, char *buf, size_t n)
{
    if (v->at_file[0] && v->ended[0])
        snprintf(buf, n, "at the program's end, %s:%" PRIu32 ", %s", v->at_file, v->at_line,
                 v->ended);
    else if (v->at_file[0])
        snprintf(buf, n, "at the program's end, after %s:%" PRIu32, v->at_file, v->at_line);
    else
        snprintf(buf, n, "at line %" PRIu32, v->line);
}

void rp_verdict_summary(const rp_verdict *v, char *buf, size_t n)
{
    size_t used = 0, failing = 0, lead = v->ngroups;
    int lead_fake = 0;
    buf[0] = '\0';
    for (int c = 0; c < HP_CL_COUNT; c++)
        if ((v->fails_on & (1u << c)) && v->count[c] && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%" PRIu64 " %s", used ? ", " : "",
                                     v->count[c], hp_class_name((hp_class)c));
    if (!used) {
        snprintf(buf, n, "no leak");
        return;
    }
    /* the leak to name: the first failing one with fake tensors, else the first */
    for (size_t i = 0; i < v->ngroups; i++) {
        const rp_vgroup *g = &v->groups[i];
        if (rp_verdict_leak_of(v, i) != i || !(v->fails_on & (1u << g->cls)))
            continue;
        failing++;
        rp_vleak l;
        rp_verdict_leak(v, i, &l);
        if (lead == v->ngroups || (!lead_fake && l.count[FK_CAT_FAKE])) {
            lead = i;
            lead_fake = l.count[FK_CAT_FAKE] != 0;
        }
    }
    if (lead == v->ngroups || used >= n)
        return;
    rp_vleak l;
    char line[400];
    rp_verdict_leak(v, lead, &l);
    rp_vleak_summary(v, &l, line, sizeof line);
    used += (size_t)snprintf(buf + used, n - used, ": %s", line);
    if (failing > 1 && used < n)
        snprintf(buf + used, n - used, " (and %zu more leak%s)", failing - 1,
                 failing > 2 ? "s" : "");
}

/* ---- the text lines ---- */

/* The path past its root element ("unreachable -> a -> b": "a -> b"). */
static const char *past_root(const char *path)
{
    hp_path_it it = hp_path_walk(path);
    hp_path_next(&it);
    return hp_path_next(&it) ? it.elem : path;
}

static void lost_line(FILE *f, const rp_vgroup *g)
{
    if (g->root == RP_ROOT_PYTORCH && g->mech == RP_MECH_REFCOUNT_LEAK)
        fputs(", held inside PyTorch: a reference no holder accounts for (a reference-count "
              "leak, as 1.13.1's _fix_weakref after a memo hit)", f);
    else if (g->root == RP_ROOT_PYTORCH && g->mech == RP_MECH_VIEW_BASE)
        fprintf(f, ", held inside PyTorch by a view's base, held from C++ (not visible to "
                   "gc): %s", past_root(g->path));
    else if (g->root == RP_ROOT_UNREACHABLE)
        fprintf(f, ", held inside PyTorch, through what no root of the program reaches: %s",
                past_root(g->path));
    else
        fprintf(f, ", held inside PyTorch: %s", g->path);
}

/* The growth of an accumulating group: per round, or one per so many
 * rounds when it grows slower than one per 10 (+0.00 per round said nothing
 * of one fake kept every 1000 rounds). */
static void growth_line(FILE *f, const rp_vgroup *g)
{
    double span = (double)g->last_round - (double)g->first_round + 1.0;
    double rate = (double)g->count / span;
    if (rate >= 0.1 || g->count == 0)
        fprintf(f, ", still growing at the end: +%.2f per round", rate);
    else
        fprintf(f, ", still growing at the end: +1 per %.0f rounds", span / (double)g->count);
}

static void group_line(FILE *f, const rp_vgroup *g)
{
    char site[240], marks[2 * RP_VMARK_LEN + 48];
    rp_vgroup_site(g, site, sizeof site);
    marks_phrase(g, marks, sizeof marks);
    fprintf(f, "    %s: %" PRIu64 " %s made at %s%s", hp_class_name(g->cls), g->count,
            fk_category_noun(g->cat, g->count), site, marks);
    int fin = g->root == RP_ROOT_FINALIZERS;
    switch (g->cls) {
    case HP_CL_LOST:
        lost_line(f, g);
        break;
    case HP_CL_ACCUMULATING:
        growth_line(f, g);
        fprintf(f, ", made in rounds %u..%u of %u of the loop around it; held by %s%s",
                g->first_round, g->last_round, g->rounds,
                fin ? "PyTorch's finalizer registry (weakref.finalize): " : "the program at ",
                g->path);
        break;
    case HP_CL_REACHABLE:
        if (fin)
            fprintf(f, ", held by PyTorch's finalizer registry (weakref.finalize): %s",
                    g->path);
        else
            fprintf(f, ", held by the program at %s", g->path);
        break;
    default:
        if (g->mech == RP_MECH_STALE_ENTRY)
            fprintf(f, ", left in its weak table, which this design never sweeps (it goes "
                       "with the table's owner, or when the entry is cleared): %s", g->path);
        else if (g->to_sweep > 0)
            fprintf(f, ", reclaimed at its converter's next sweep, in %" PRId64
                       " conversion%s (the periodic policy sweeps every sweep_every "
                       "conversions): %s",
                    g->to_sweep, g->to_sweep == 1 ? "" : "s", g->path);
        else
            fprintf(f, ", awaiting its converter's next sweep (the periodic policy sweeps "
                       "every sweep_every conversions): %s", g->path);
        break;
    }
    fputc('\n', f);
}

int rp_verdict_write_text(const rp_verdict *v, FILE *f)
{
    char where[240];
    rp_verdict_where(v, where, sizeof where);
    fprintf(f, "verdict %s (the model's retention analysis after a full collection; fails on:",
            where);
    for (int k = 0; k < HP_CL_COUNT; k++)
        if (v->fails_on & (1u << k))
            fprintf(f, " %s", hp_class_name((hp_class)k));
    if (v->at_file[0])
        fprintf(f, "; the recording's line %" PRIu32, v->line);
    fprintf(f, "):");
    for (int k = 0; k < HP_CL_COUNT; k++)
        fprintf(f, "%s %" PRIu64 " %s", k ? "," : "", v->count[k], hp_class_name((hp_class)k));
    fprintf(f, "\n");
    char line[400];
    for (size_t i = 0; i < v->ngroups; i++) {
        if (!rp_verdict_leak_line(v, i, line, sizeof line))
            continue;
        fprintf(f, "  %s\n", line);
        for (size_t k = i; k < v->ngroups; k++)
            if (!v->groups[k].suppressed && rp_vgroup_same_leak(&v->groups[k], &v->groups[i]))
                group_line(f, &v->groups[k]);
    }
    for (size_t i = 0; i < v->nsupp; i++)
        fprintf(f, "  suppressed: %" PRIu64 " %s by rule %s\n", v->supp[i].count,
                fk_category_noun(v->supp[i].cat, v->supp[i].count), v->supp[i].rule);
    return ferror(f) ? -1 : 0;
}

char *rp_verdict_text(const rp_verdict *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        er_set(ER_OOM, "out of memory writing the verdict");
        return NULL;
    }
    int rc = rp_verdict_write_text(v, f);
    if (fclose(f) != 0 || rc != 0) {
        free(buf);
        er_set(ER_OOM, "out of memory writing the verdict");
        return NULL;
    }
    return buf;
}
