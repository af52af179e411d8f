/* hp_class.c - leak classes (hp_class.h): one record per object of the
 * snapshot (hp_retained_all), a class per subject, groups by class,
 * category, site and holder shape; accumulation from the executions that
 * made a group's members. */
#include "heap/hp_class.h"
#include "heap/hp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/us.h"
#include "core/wl.h"

#define NAME_(e, w, n, ...) [HP_CL_##e] = n,
#define WORD_(e, w, ...) [HP_CL_##e] = w,
#define ABOUT_(e, w, n, f, warns, d, ...) [HP_CL_##e] = d,
static const char *const class_names[HP_CL_COUNT] = {HP_CLASSES(NAME_, )};
static const char *const class_words[HP_CL_COUNT] = {HP_CLASSES(WORD_, )};
static const char *const class_about[HP_CL_COUNT] = {HP_CLASSES(ABOUT_, )};
#undef NAME_
#undef WORD_
#undef ABOUT_

const char *hp_class_about(hp_class c)
{
    return wl_word(WL_WORDS(class_about), HP_CL_COUNT, (int)c);
}

const char *hp_class_name(hp_class c)
{
    return wl_word(WL_WORDS(class_names), HP_CL_COUNT, (int)c);
}

const char *hp_class_word(hp_class c)
{
    return wl_word(WL_WORDS(class_words), HP_CL_COUNT, (int)c);
}

int hp_class_from_word(const char *w, hp_class *out)
{
    int c = wl_find(WL_WORDS(class_words), HP_CL_COUNT, w);
    return c < 0 ? -1 : (*out = (hp_class)c, 0);
}

size_t hp_class_words(char *buf, size_t n)
{
    return wl_join(WL_WORDS(class_words), HP_CL_COUNT, buf, n);
}

int hp_class_mask(const char *csv, unsigned *mask)
{
    unsigned m = 0;
    const char *p = csv;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int c = n ? wl_find_n(WL_WORDS(class_words), HP_CL_COUNT, p, n) : HP_CL_COUNT;
        if (c < 0)
            return -1;
        if (c < HP_CL_COUNT)
            m |= 1u << c;
        p += n + (e != NULL);
    }
    *mask = m;
    return 0;
}

/* The path joined with HP_PATH_SEP; shape: "#id" and "[index]" dropped. */
/* ex (r's path joined, maybe cut) with each hop r->fold_hops marks (out of
 * a converter, or an attribute its type spells its own way) folded into the
 * edge before it: " -> MetaConverter#3.pending[0]" -> ".pending[0]", where
 * ex reaches that hop's label. */
static void fold_hops(const hp_retained *r, const char *ex, char *buf, size_t cap)
{
    size_t n = strlen(ex), from = 0, at = 0, o = 0;
    for (size_t i = 0; i < r->path_len && i < 32; i++) {
        const char *s = r->path[i] ? r->path[i] : "";
        const char *dot = i && (r->fold_hops >> i & 1u) ? strchr(s, '.') : NULL;
        at += i ? HP_PATH_SEP_LEN : 0;   /* the separator before path[i] */
        if (dot && at + (size_t)(dot - s) < n) {
            size_t keep = at - HP_PATH_SEP_LEN - from;
            if (keep > cap - 1 - o)
                keep = cap - 1 - o;
            memcpy(buf + o, ex + from, keep);
            o += keep;
            from = at + (size_t)(dot - s);
        }
        at += strlen(s);
    }
    size_t keep = n - from < cap - 1 - o ? n - from : cap - 1 - o;
    memcpy(buf + o, ex + from, keep);
    buf[o + keep] = '\0';
}

static void join_path(const hp_retained *r, char *buf, size_t cap, int shape)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->path_len && len + 1 < cap; i++) {
        const char *s = r->path[i] ? r->path[i] : "";
        if (i) {
            for (const char *a = HP_PATH_SEP; *a && len + 1 < cap; a++)
                buf[len++] = *a;
        }
        for (; *s && len + 1 < cap; s++) {
            if (shape && *s == '#' && s[1] >= '0' && s[1] <= '9') {
                while (s[1] >= '0' && s[1] <= '9')
                    s++;
                continue;
            }
            if (shape && *s == '[' && strchr(s, ']')) {   /* "[17]", "['w']" -> "[]" */
                buf[len++] = '[';
                s = strchr(s, ']') - 1;
                continue;
            }
            buf[len++] = *s;
        }
    }
    buf[len] = '\0';
}

static hp_class class_of(const hp_retained *r)
{
    switch (r->reason) {
    case HP_UNREACHABLE:
    case HP_REFCOUNT_LEAK:
        return HP_CL_LOST;
    case HP_STALE_MEMO:
    case HP_PENDING_STORAGE:
        return HP_CL_LINGERING;
    default:
        return HP_CL_REACHABLE;
    }
}

typedef struct acc {
    hp_class_group *g;
    size_t n, cap;
} acc;

static hp_class_group *group_for(acc *a, hp_class cls, int cat, const hp_retained *r,
                                 const char *via)
{
    for (size_t i = 0; i < a->n; i++) {
        hp_class_group *g = &a->g[i];
        if (g->cls == cls && g->cat == cat && g->site.file == r->site.file &&
            g->site.line == r->site.line && strcmp(g->via, via) == 0)
            return g;
    }
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        hp_class_group *ng = al_realloc(a->g, a->cap * sizeof *ng, nc * sizeof *ng, AL_K_HEAP,
                                        "hp class groups");
        if (!ng)
            return NULL;
        a->g = ng;
        a->cap = nc;
    }
    hp_class_group *g = &a->g[a->n++];
    memset(g, 0, sizeof *g);
    g->cls = cls;
    g->cat = cat;
    g->site = r->site;
    g->reason = r->reason;
    snprintf(g->via, sizeof g->via, "%s", via);
    join_path(r, g->example, sizeof g->example, 0);
    g->example_id = r->id;
    fold_hops(r, g->example, g->mode_path, sizeof g->mode_path);
    g->root = r->root;
    g->weak_holder = r->weak_holder;
    if (r->root == HP_RK_PROGRAM && r->path_len)
        snprintf(g->root_name, sizeof g->root_name, "%.*s",
                 r->root_len ? (int)r->root_len : (int)sizeof g->root_name, r->path[0]);
    return g;
}

static void note_exec(hp_class_group *g, const hp_class_spec *sp, const hp_retained *r)
{
    uint32_t total = 0;
    uint32_t e = sp->exec_of ? sp->exec_of(r->site, r->id, &total, sp->arg) : 0;
    if (!e || !total)
        return;
    g->execs = total;
    if (!g->first_exec || e < g->first_exec)
        g->first_exec = e;
    if (e > g->last_exec)
        g->last_exec = e;
}

static int accumulating(const hp_class_group *g)
{
    return g->cls == HP_CL_REACHABLE && !g->memo && g->count >= 2 && g->execs >= 2 &&
           g->first_exec < g->last_exec && 2 * (uint64_t)g->first_exec <= g->execs &&
           2 * (uint64_t)g->last_exec > g->execs;
}

static int group_cmp(const void *a, const void *b)
{
    const hp_class_group *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->site.line < y->site.line ? -1 : x->site.line > y->site.line;
}

/* The ids of the values of live memo entries (a strong edge of role
 * OBJ_ROLE_TENSOR_MEMO) into memo: 0, or -1 out of memory. */
static int memo_values(const hp_graph *g, us *memo)
{
    size_t k = 0;
    for (int fill = 0; fill < 2; fill++) {   /* count, then one allocation */
        if (fill && k && us_reserve(memo, k) != 0)
            return -1;
        for (size_t e = 0; e < g->strong.n; e++) {
            const hp_edge *x = &g->strong.e[e];
            if (obj_edge_role(g->objs[x->src], g->labels[x->label]) != OBJ_ROLE_TENSOR_MEMO)
                continue;
            if (fill)
                us_add(memo, g->objs[x->dst]->id);   /* reserved: cannot fail */
            else
                k++;
        }
    }
    return 0;
}

int hp_classify(hp_graph *g, const hp_class_spec *sp, hp_classes *out)
{
    memset(out, 0, sizeof *out);
    us memo = US_INIT(AL_K_HEAP, "hp memo values");
    if (memo_values(g, &memo) != 0) {
        us_free(&memo);
        return er_set(ER_OOM, "out of memory classifying");
    }
    hp_retained *r = NULL;
    size_t n = 0;
    if (hp_retained_all(g, &r, &n) < 0) {
        us_free(&memo);
        return -1;
    }
    acc a = {0};
    char via[256];
    for (size_t i = 0; i < n; i++) {
        int cat = sp->subject(&r[i], sp->arg);
        if (cat < 0 || cat >= HP_CAT_MAX)
            continue;
        hp_class cls = class_of(&r[i]);
        join_path(&r[i], via, sizeof via, 1);
        int in_memo = us_has(&memo, r[i].id);
        if (in_memo && strlen(via) + 24 < sizeof via)
            strcat(via, " (memo value)");
        hp_class_group *gr = group_for(&a, cls, cat, &r[i], via);
        if (!gr) {
            us_free(&memo);
            al_free(a.g, a.cap * sizeof *a.g, AL_K_HEAP);
            hp_retained_free(r, n);
            return er_set(ER_OOM, "out of memory classifying %zu objects", n);
        }
        if (!gr->count || r[i].id < gr->first_id)
            gr->first_id = r[i].id;
        if (r[i].id > gr->last_id)
            gr->last_id = r[i].id;
        gr->count++;
        gr->bytes += r[i].bytes;
        gr->retained += r[i].retained_bytes;
        gr->memo = in_memo;
        note_exec(gr, sp, &r[i]);
    }
    hp_retained_free(r, n);
    us_free(&memo);
    for (size_t i = 0; i < a.n; i++) {
        if (accumulating(&a.g[i]))
            a.g[i].cls = HP_CL_ACCUMULATING;
        out->count[a.g[i].cls][a.g[i].cat] += a.g[i].count;
    }
    if (a.n)
        qsort(a.g, a.n, sizeof *a.g, group_cmp);
    out->groups = a.g;
    out->ngroups = a.n;
    /* the capacity is not kept: give back what is unused */
    if (a.cap > a.n) {
        hp_class_group *ng = a.n ? al_realloc(a.g, a.cap * sizeof *ng, a.n * sizeof *ng,
                                              AL_K_HEAP, "hp class groups")
                                 : NULL;
        if (a.n && !ng) {
            out->groups = NULL;
            out->ngroups = 0;
            al_free(a.g, a.cap * sizeof *a.g, AL_K_HEAP);
            memset(out, 0, sizeof *out);
            return er_set(ER_OOM, "out of memory classifying");
        }
        if (!a.n)
            al_free(a.g, a.cap * sizeof *a.g, AL_K_HEAP);
        out->groups = ng;
    }
    return 0;
}

void hp_classes_free(hp_classes *c)
{
    if (c->groups)
        al_free(c->groups, c->ngroups * sizeof *c->groups, AL_K_HEAP);
    memset(c, 0, sizeof *c);
}
