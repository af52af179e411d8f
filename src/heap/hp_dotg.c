/* hp_dotg.c - the retention graph at scale: one node per group of alike
 * objects, reached through the holder types of its path shape. */
#include "heap/hp_int.h"

#include <string.h>

#include "core/er.h"

enum { DG_ELEMS = 4 * HP_PATH_EDGES, DG_NODES = HP_SHOW_GROUPS * (DG_ELEMS + 1) };

/* A node of the drawn chain: the path shape's prefix up to it. */
typedef struct dg_node {
    const char *via;     /* the group's shape it was first seen in */
    size_t len;          /* prefix length in via */
} dg_node;

typedef struct dg {
    dg_node n[DG_NODES];
    size_t nn;
} dg;

static void dg_str(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len && s[i]; i++) {
        if (s[i] == '"' || s[i] == '\\')
            fputc('\\', f);
        if (s[i] == '\n') {
            fputs("\\n", f);
            continue;
        }
        fputc(s[i], f);
    }
    fputc('"', f);
}

/* The node of via's prefix of len bytes: found, or added (then *fresh). */
static size_t dg_find(dg *d, const char *via, size_t len, int *fresh)
{
    *fresh = 0;
    for (size_t i = 0; i < d->nn; i++)
        if (d->n[i].len == len && strncmp(d->n[i].via, via, len) == 0)
            return i;
    if (d->nn == DG_NODES)
        return DG_NODES;
    d->n[d->nn] = (dg_node){via, len};
    *fresh = 1;
    return d->nn++;
}

/* One element of a shape ("FakeTensorMode.converter", "m", "..."): its
 * type part (before the first '.') and label part. */
static void split_elem(const char *e, size_t len, char *type, size_t tn, char *label, size_t ln)
{
    const char *dot = memchr(e, '.', len);
    if (!dot || (len == 3 && strncmp(e, "...", 3) == 0)) {
        snprintf(type, tn, "%.*s", (int)len, e);
        label[0] = '\0';
        return;
    }
    snprintf(type, tn, "%.*s", (int)(dot - e), e);
    snprintf(label, ln, "%.*s", (int)(len - (size_t)(dot - e) - 1), dot + 1);
}

static void group_node(FILE *f, uint32_t cl, size_t gi, const hp_group *g,
                       const hp_retained *ex, size_t nex)
{
    char each[32], all[32], ret[32], site[96], label[512];
    hp_human_bytes(g->bytes_each, each, sizeof each);
    hp_human_bytes(g->total_bytes, all, sizeof all);
    hp_human_bytes(g->total_retained, ret, sizeof ret);
    if (g->site.file)
        snprintf(site, sizeof site, "%s:%u", g->site.file, g->site.line);
    else
        snprintf(site, sizeof site, "?");
    const char *desc = g->example < nex ? ex[g->example].describe : "";
    static const char *const fill[] = {"lightblue", "salmon", "lightgrey", "khaki", "salmon",
                                       "white"};
    snprintf(label, sizeof label, "%llu x %s%s%s\n(%s)\n%s each, %s in all, retains %s\n"
             "created %s, %s, held by %s", (unsigned long long)g->count, obj_kind_name(g->kind),
             desc[0] ? " " : "", desc, g->type_name ? g->type_name : "?", each, all, ret, site,
             hp_reason_name(g->reason), hp_holder_name(g->holder));
    fprintf(f, "    s%u_g%zu [penwidth=2, fillcolor=%s, label=", cl, gi,
            fill[g->reason <= HP_UNTRACED ? g->reason : HP_UNTRACED]);
    dg_str(f, label, sizeof label);
    fputs("];\n", f);
}

/* The chain of via's elements before its last (the kind), then the group. */
static void group_chain(FILE *f, dg *d, uint32_t cl, size_t gi, const hp_group *g)
{
    const char *via = g->via ? g->via : "?";
    size_t prev = DG_NODES;
    char prev_label[96] = "";
    hp_path_it it = hp_path_walk(via);
    /* the last element is the kind: the group node */
    while (hp_path_next(&it) && !it.last) {
        size_t start = (size_t)(it.elem - via), end = start + it.len;
        int fresh;
        size_t x = dg_find(d, via, end, &fresh);
        char type[96], label[96];
        split_elem(it.elem, it.len, type, sizeof type, label, sizeof label);
        if (x < DG_NODES && fresh) {
            fprintf(f, "    s%u_n%zu [label=", cl, x);
            dg_str(f, type, sizeof type);
            fputs(start == 0 ? ", shape=ellipse, fillcolor=palegreen];\n" : "];\n", f);
            if (prev < DG_NODES) {
                fprintf(f, "    s%u_n%zu -> s%u_n%zu [label=", cl, prev, cl, x);
                dg_str(f, prev_label, sizeof prev_label);
                fputs("];\n", f);
            }
        }
        prev = x;
        snprintf(prev_label, sizeof prev_label, "%s", label);
    }
    if (prev < DG_NODES) {
        int weak = g->reason == HP_STALE_MEMO || g->reason == HP_PENDING_STORAGE;
        fprintf(f, "    s%u_n%zu -> s%u_g%zu [label=", cl, prev, cl, gi);
        dg_str(f, prev_label, sizeof prev_label);
        fputs(weak ? ", style=dashed];\n" : "];\n", f);
    }
}

int hp_write_dot_groups(const hp_group *gr, size_t ngr, const hp_retained *ex, size_t nex,
                        FILE *f, uint32_t cl, const char *title)
{
    static dg d;   /* DOT is written from one thread */
    d.nn = 0;
    size_t keep = ngr < HP_SHOW_GROUPS ? ngr : HP_SHOW_GROUPS;
    uint64_t total = 0;
    for (size_t i = 0; i < ngr; i++)
        total += gr[i].count;
    char t[800];
    snprintf(t, sizeof t, "%s\n%llu objects in %zu groups: kept %zu of %zu groups", title ? title : "",
             (unsigned long long)total, ngr, keep, ngr);
    fprintf(f, "  subgraph cluster_%u {\n    label=", cl);
    dg_str(f, t, sizeof t);
    fputs(";\n", f);
    for (size_t i = 0; i < keep; i++) {
        group_node(f, cl, i, &gr[i], ex, nex);
        group_chain(f, &d, cl, i, &gr[i]);
    }
    fputs("  }\n", f);
    if (ferror(f))
        return er_set(ER_INTERNAL, "write error on the DOT output");
    return 0;
}
