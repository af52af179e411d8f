/* rp_merge.c - merging the shard reports of one campaign (rp_merge.h).
 *
 * Each report is read as its top-level fields, each kept as the raw text
 * of its value (a span into the file's buffer), so that fields this module
 * does not know are carried through byte for byte. Values are looked into
 * with the pull parser of rp_jsonr.h when a rule needs them. */
#include "report/rp_merge.h"
#include "report/rp_jw.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp_int.h"
#include "report/rp_jsonr.h"

enum { DEPTH = 64, KEY = 64 };

typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct field {
    char key[KEY];
    span v;
} field;

enum { K_RUN = 1, K_STRESS = 2, K_OOM = 4, K_ALL = 7 };

/* The members of an object span: v[0..n) in an allocation of cap. */
typedef struct fields {
    field *v;
    size_t n, cap;
} fields;

typedef struct doc {
    const char *name;
    char *buf;
    size_t len, cap;
    fields f;               /* its top-level fields */
    int kind;
    uint32_t k, n;
} doc;

/* How a top-level field is merged; fields not listed are R_EQUAL. */
enum { R_EQUAL, R_SHARD, R_CONCAT, R_SUM, R_MAX, R_RATE, R_FAILURES, R_DROP, R_SUMMARY,
       R_STATUS };

static const struct rule {
    const char *key;
    int kinds, rule;
} RULES[] = {
    {"shard", K_ALL, R_SHARD},
    {"host", K_ALL, R_SHARD},
    {"lifecycle_first", K_STRESS, R_SHARD},
    {"scenarios", K_RUN | K_OOM, R_CONCAT},
    {"summary", K_RUN | K_OOM, R_SUMMARY},  /* recomputed from the scenarios */
    {"summary", K_STRESS, R_SUM},
    {"status", K_ALL, R_STATUS},            /* recomputed */
    {"steps", K_STRESS, R_SUM},
    {"statements", K_STRESS, R_SUM},
    {"lifecycles", K_STRESS, R_SUM},
    {"seconds", K_STRESS, R_MAX},
    {"max_live_objects", K_STRESS, R_MAX},
    {"steps_per_second", K_STRESS, R_RATE},
    {"failures", K_STRESS, R_FAILURES},
    {"failure", K_STRESS, R_DROP},          /* written with "failures" */
    {"lifecycle_stride", K_STRESS, R_DROP}, /* checked against N */
    {"merged", K_ALL, R_DROP},
    {"shards", K_ALL, R_DROP},
};

static const struct kind_row {
    int kind;
    const char *name, *schema, *command;
} KINDS[] = {
    {K_RUN, "run", RP_SCHEMA_REPORT, "run"},
    {K_STRESS, "stress", "fakegc-stress/2", "stress"},
    {K_OOM, "oom", "fakegc-oom/2", "oom"},
};

static int rule_of(const char *key, int kind)
{
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
        if ((RULES[i].kinds & kind) && strcmp(RULES[i].key, key) == 0)
            return RULES[i].rule;
    return R_EQUAL;
}

static const struct kind_row *kind_row(int kind)
{
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (KINDS[i].kind == kind)
            return &KINDS[i];
    return &KINDS[0];
}

/* ---- the merge's state and its failures ---- */

typedef struct mg {
    doc *d;
    size_t n;
    char *err;
    size_t errlen;
    int usage, oom;          /* a failure: not one campaign / no memory */
    FILE *o;                 /* the merged JSON */
} mg;

static int fail(mg *m, int usage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(mg *m, int usage, const char *fmt, ...)
{
    if (!m->usage && !m->oom && m->err && m->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->err, m->errlen, fmt, ap);
        va_end(ap);
    }
    if (usage && er_kind_get() == ER_OOM) {   /* a helper ran out of memory */
        usage = 0;
        if (m->err && m->errlen && !m->oom)
            snprintf(m->err, m->errlen, "out of memory");
    }
    if (usage)
        m->usage = 1;
    else
        m->oom = 1;
    return -1;
}

/* ---- spans ---- */

static void span_jr(rp_jr *j, span s, char *err, size_t errlen)
{
    rp_jr_init(j, s.p, s.n, "<value>", DEPTH, err, errlen);
}

static int span_is(span s, char c)
{
    return s.n && s.p[0] == c;
}

static int span_is_number(span s)
{
    return s.n && (s.p[0] == '-' || (s.p[0] >= '0' && s.p[0] <= '9'));
}

/* Equal as JSON text, white space outside strings ignored. */
static int canon_eq(span a, span b)
{
    size_t i = 0, k = 0;
    int in_a = 0, in_b = 0;
    for (;;) {
        while (i < a.n && !in_a && strchr(" \t\r\n", a.p[i]))
            i++;
        while (k < b.n && !in_b && strchr(" \t\r\n", b.p[k]))
            k++;
        if (i == a.n || k == b.n)
            return i == a.n && k == b.n;
        if (a.p[i] != b.p[k])
            return 0;
        if (a.p[i] == '"' && (i == 0 || a.p[i - 1] != '\\'))
            in_a = !in_a;
        if (b.p[k] == '"' && (k == 0 || b.p[k - 1] != '\\'))
            in_b = !in_b;
        i++;
        k++;
    }
}

static void fields_free(fields *f)
{
    al_free(f->v, f->cap * sizeof *f->v, AL_K_REPORT);
    memset(f, 0, sizeof *f);
}

/* 0, -1 (not an object; the first failure in err), -2 (OOM). */
static int span_fields(span s, const char *name, fields *f, char *err, size_t errlen)
{
    rp_jr j;
    rp_jr_init(&j, s.p, s.n, name, DEPTH, err, errlen);
    int first = 1, r = rp_jr_obj_open(&j);
    char key[KEY];
    while (r == 0 && (r = rp_jr_obj_next(&j, &first, key, sizeof key)) == 1) {
        rp_jr_ws(&j);
        const char *start = j.p;
        if (rp_jr_skip(&j) != 0) {
            r = -1;
            break;
        }
        r = 0;
        if (f->n == f->cap) {
            size_t nc = f->cap ? f->cap * 2 : 16;
            field *nv = al_realloc(f->v, f->cap * sizeof *nv, nc * sizeof *nv, AL_K_REPORT,
                                   "rp_merge");
            if (!nv) {
                r = -2;
                break;
            }
            f->v = nv;
            f->cap = nc;
        }
        snprintf(f->v[f->n].key, KEY, "%s", key);
        f->v[f->n++].v = (span){start, (size_t)(j.p - start)};
    }
    if (r == 0 && rp_jr_peek(&j) >= 0)
        r = rp_jr_fail(&j, "trailing characters");
    rp_jr_free(&j);
    if (r < 0)
        fields_free(f);
    return r < 0 ? r : 0;
}

static const span *fields_get(const fields *f, const char *key)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].key, key) == 0)
            return &f->v[i].v;
    return NULL;
}

/* The member `key` of an object span. 0 or -1 (absent). */
static int span_member(span ob, const char *key, span *out)
{
    fields f = {0};
    if (!span_is(ob, '{') || span_fields(ob, "<value>", &f, NULL, 0) != 0)
        return -1;
    const span *v = fields_get(&f, key);
    if (v)
        *out = *v;
    fields_free(&f);
    return v ? 0 : -1;
}

static int span_str(span s, char *buf, size_t n)
{
    rp_jr j;
    span_jr(&j, s, NULL, 0);
    int rc = rp_jr_string(&j);
    if (rc == 0)
        snprintf(buf, n, "%s", j.str);
    rp_jr_free(&j);
    return rc;
}

static int span_u64(span s, uint64_t *v)
{
    rp_jr j;
    span_jr(&j, s, NULL, 0);
    int rc = rp_jr_get_u64(&j, v, "value");
    rp_jr_free(&j);
    return rc;
}

static int span_double(span s, double *v)
{
    rp_jr j;
    span_jr(&j, s, NULL, 0);
    int rc = rp_jr_get_double(&j, v);
    rp_jr_free(&j);
    return rc;
}

static uint64_t member_u64(span ob, const char *key)
{
    span v;
    uint64_t x = 0;
    if (span_member(ob, key, &v) == 0)
        span_u64(v, &x);
    return x;
}

/* Items of an array span: v[0..n) in an allocation of cap (items_free). */
typedef struct items {
    span *v;
    size_t n, cap;
} items;

static void items_free(items *it)
{
    al_free(it->v, it->cap * sizeof *it->v, AL_K_REPORT);
    memset(it, 0, sizeof *it);
}

static int items_push(items *it, span s)
{
    if (al_grow(&it->v, &it->cap, it->n, sizeof *it->v, 64, AL_K_REPORT, "rp_merge") < 0)
        return -2;
    it->v[it->n++] = s;
    return 0;
}

/* Append the items of array span s to it. 0, -1 (not an array), -2 (OOM). */
static int span_items(span s, items *it)
{
    rp_jr j;
    span_jr(&j, s, NULL, 0);
    int first = 1, r = rp_jr_arr_open(&j);
    while (r == 0 && (r = rp_jr_arr_next(&j, &first)) == 1) {
        rp_jr_ws(&j);
        const char *start = j.p;
        r = rp_jr_skip(&j) != 0 ? -1 : items_push(it, (span){start, (size_t)(j.p - start)});
    }
    rp_jr_free(&j);
    return r < 0 ? r : 0;
}

/* ---- reading the shard reports ---- */

static const span *get(const doc *d, const char *key)
{
    return fields_get(&d->f, key);
}

/* The kind, told by "schema" (which must be one this merge knows), else by
 * "command", else run. 0 or -1. */
static int doc_kind(mg *m, doc *d)
{
    char v[64] = "";
    const span *s = get(d, "schema");
    const span *c = get(d, "command");
    d->kind = K_RUN;
    if (s) {
        if (span_str(*s, v, sizeof v) != 0)
            return fail(m, 1, "%s: \"schema\" is not a string", d->name);
        for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
            if (strcmp(v, KINDS[i].schema) == 0) {
                d->kind = KINDS[i].kind;
                return 0;
            }
        return fail(m, 1, "%s: unknown schema \"%s\" (merge reads %s, %s and %s)", d->name, v,
                    KINDS[0].schema, KINDS[1].schema, KINDS[2].schema);
    }
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (c && span_str(*c, v, sizeof v) == 0 && strcmp(v, KINDS[i].command) == 0)
            d->kind = KINDS[i].kind;
    return 0;
}

/* "shard": [K, N]; none: 0 of 1. */
static int doc_shard(mg *m, doc *d)
{
    const span *s = get(d, "shard");
    d->k = 0;
    d->n = 1;
    if (!s)
        return 0;
    char e[256] = "";
    rp_jr j;
    rp_jr_init(&j, s->p, s->n, d->name, DEPTH, e, sizeof e);
    int first = 1, rc = rp_jr_arr_open(&j);
    rc = rc ? rc : rp_jr_arr_next(&j, &first) == 1 ? rp_jr_get_u32(&j, &d->k, "shard") : -1;
    rc = rc ? rc : rp_jr_arr_next(&j, &first) == 1 ? rp_jr_get_u32(&j, &d->n, "shard") : -1;
    rc = rc ? rc : rp_jr_arr_next(&j, &first) == 0 ? 0 : -1;
    rp_jr_free(&j);
    if (rc || d->n == 0 || d->k >= d->n)
        return fail(m, 1, "%s: \"shard\" is not [K, N] with 0 <= K < N", d->name);
    return 0;
}

static int doc_read(mg *m, doc *d, const char *path)
{
    char e[512];
    d->name = path;
    if (rp_jr_read_file(path, RP_JR_MAX_REPORT, AL_K_REPORT, &d->buf, &d->len, &d->cap, e, sizeof e) != 0)
        return fail(m, er_kind_get() != ER_OOM, "%s", e);
    int rc = span_fields((span){d->buf, d->len}, path, &d->f, e, sizeof e);
    if (rc == -2)
        return fail(m, 0, "%s: out of memory", path);
    if (rc < 0)
        return fail(m, 1, "%s (not a fakegc JSON report)", e);
    if (doc_kind(m, d) != 0)
        return -1;
    return doc_shard(m, d);
}

static void doc_free(doc *d)
{
    fields_free(&d->f);
    if (d->buf)
        al_free(d->buf, d->cap, AL_K_REPORT);
    memset(d, 0, sizeof *d);
}

/* ---- one campaign? ---- */

static int by_shard(const void *a, const void *b)
{
    const doc *x = a, *y = b;
    return x->k < y->k ? -1 : x->k > y->k;
}

static void clip(span s, char *buf, size_t n)
{
    size_t k = s.n < n - 4 ? s.n : n - 4;
    memcpy(buf, s.p, k);
    strcpy(buf + k, s.n > k ? "..." : "");
}

static int check_campaign(mg *m)
{
    doc *d = m->d;
    for (size_t i = 1; i < m->n; i++)
        if (d[i].kind != d[0].kind)
            return fail(m, 1, "%s is a %s report but %s is a %s report", d[i].name,
                        kind_row(d[i].kind)->name, d[0].name, kind_row(d[0].kind)->name);
    for (size_t i = 1; i < m->n; i++)
        if (d[i].n != d[0].n)
            return fail(m, 1, "%s is shard %u of %u but %s is shard %u of %u", d[i].name,
                        d[i].k, d[i].n, d[0].name, d[0].k, d[0].n);
    qsort(d, m->n, sizeof *d, by_shard);
    for (size_t i = 1; i < m->n; i++)
        if (d[i].k == d[i - 1].k)
            return fail(m, 1, "shard %u of %u given twice: %s and %s", d[i].k, d[i].n,
                        d[i - 1].name, d[i].name);
    if (m->n != d[0].n) {
        char miss[256] = "";
        size_t len = 0, nmiss = 0;
        for (uint32_t k = 0, i = 0; k < d[0].n; k++) {
            if (i < m->n && d[i].k == k) {
                i++;
                continue;
            }
            if (nmiss++ < 16 && len < sizeof miss)
                len += (size_t)snprintf(miss + len, sizeof miss - len, "%s%u", len ? ", " : "", k);
        }
        return fail(m, 1, "shard%s %s%s of %u missing", nmiss > 1 ? "s" : "", miss,
                    nmiss > 16 ? ", ..." : "", d[0].n);
    }
    return 0;
}

/* Every R_EQUAL field (an option of the campaign) is the same everywhere. */
static int check_options(mg *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const doc *a = &m->d[i], *b = &m->d[i ? 0 : (m->n > 1 ? 1 : 0)];
        for (size_t f = 0; f < a->f.n; f++) {
            const char *key = a->f.v[f].key;
            if (rule_of(key, a->kind) != R_EQUAL)
                continue;
            const span *v = get(b, key);
            char x[80], y[80];
            clip(a->f.v[f].v, x, sizeof x);
            if (!v)
                return fail(m, 1, "%s has \"%s\": %s but %s has no \"%s\" (not one campaign)",
                            a->name, key, x, b->name, key);
            clip(*v, y, sizeof y);
            if (!canon_eq(a->f.v[f].v, *v))
                return fail(m, 1, "%s and %s differ in \"%s\": %s vs %s (not one campaign)",
                            b->name, a->name, key, y, x);
        }
    }
    if (m->d[0].kind == K_STRESS)
        for (size_t i = 0; i < m->n; i++) {
            const span *s = get(&m->d[i], "lifecycle_stride");
            uint64_t st = 1;
            if (s)
                span_u64(*s, &st);
            if (st != m->d[i].n)
                return fail(m, 1, "%s: lifecycle_stride %" PRIu64 " is not the shard count %u",
                            m->d[i].name, st, m->d[i].n);
        }
    return 0;
}

/* ---- merging values ---- */

/* Numbers: the sum (an integer when every value is one). */
static void write_sum_numbers(rp_jw *o, const span *v, size_t n)
{
    int ints = 1;
    uint64_t u = 0;
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        double y = 0;
        if (ints && memchr(v[i].p, '.', v[i].n) == NULL && span_u64(v[i], &x) == 0)
            u += x;
        else
            ints = 0;
        span_double(v[i], &y);
        d += y;
    }
    if (ints)
        rp_jw_u64(o, u);
    else
        rp_jw_num(o, d);
}

/* Sum numbers, recursively in objects; other values must be equal. */
static int write_sum(mg *m, rp_jw *o, const char *path, const span *v, size_t n)
{
    int nums = 1, objs = 1;
    for (size_t i = 0; i < n; i++) {
        nums &= span_is_number(v[i]);
        objs &= span_is(v[i], '{');
    }
    if (nums) {
        write_sum_numbers(o, v, n);
        return 0;
    }
    if (!objs) {
        for (size_t i = 1; i < n; i++)
            if (!canon_eq(v[0], v[i]))
                return fail(m, 1, "%s and %s differ in \"%s\" (not one campaign)",
                            m->d[0].name, m->d[i].name, path);
        rp_jw_put(o, v[0].p, v[0].n);
        return 0;
    }
    fields *f = al_malloc(n * sizeof *f, AL_K_REPORT, "rp_merge");
    span *sub = al_malloc(n * sizeof *sub, AL_K_REPORT, "rp_merge");
    int rc = f && sub ? 0 : fail(m, 0, "out of memory");
    if (f)
        memset(f, 0, n * sizeof *f);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (span_fields(v[i], "<value>", &f[i], NULL, 0) != 0)
            rc = fail(m, 0, "out of memory");
    for (size_t i = 1; rc == 0 && i < n; i++)
        if (f[i].n != f[0].n)
            rc = fail(m, 1, "%s and %s differ in the fields of \"%s\" (not one campaign)",
                      m->d[0].name, m->d[i].name, path);
    rp_jw_raw(o, "{");
    for (size_t k = 0; rc == 0 && k < f[0].n; k++) {
        char p2[256];
        snprintf(p2, sizeof p2, "%s.%s", path, f[0].v[k].key);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const span *s = fields_get(&f[i], f[0].v[k].key);
            if (!s)
                rc = fail(m, 1, "%s has no \"%s\" (not one campaign)", m->d[i].name, p2);
            else
                sub[i] = *s;
        }
        rp_jw_raw(o, k ? ", " : "");
        rp_jw_str(o, f[0].v[k].key);
        rp_jw_raw(o, ": ");
        if (rc == 0)
            rc = write_sum(m, o, p2, sub, n);
    }
    rp_jw_raw(o, "}");
    for (size_t i = 0; f && i < n; i++)
        fields_free(&f[i]);
    al_free(f, f ? n * sizeof *f : 0, AL_K_REPORT);
    al_free(sub, sub ? n * sizeof *sub : 0, AL_K_REPORT);
    return rc;
}

/* ---- scenarios: concatenated, sorted by file ---- */

typedef struct keyed {
    span item, file;   /* the record and the raw text of its "file" */
    size_t order;
} keyed;

static int by_file(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    size_t n = x->file.n < y->file.n ? x->file.n : y->file.n;
    int c = memcmp(x->file.p, y->file.p, n);
    if (c == 0)
        c = x->file.n < y->file.n ? -1 : x->file.n > y->file.n;
    return c ? c : x->order < y->order ? -1 : 1;
}

static int write_concat(mg *m, rp_jw *o, const char *key, size_t *count)
{
    items it = {0};
    for (size_t i = 0; i < m->n; i++) {
        const span *s = get(&m->d[i], key);
        int rc = s ? span_items(*s, &it) : 0;
        if (rc < 0) {
            items_free(&it);
            return fail(m, rc == -1, "%s: \"%s\" is not an array", m->d[i].name, key);
        }
    }
    keyed *k = al_malloc((it.n ? it.n : 1) * sizeof *k, AL_K_REPORT, "rp_merge");
    if (!k) {
        items_free(&it);
        return fail(m, 0, "out of memory");
    }
    for (size_t i = 0; i < it.n; i++) {
        k[i].item = it.v[i];
        k[i].order = i;
        if (span_member(it.v[i], "file", &k[i].file) != 0)
            k[i].file = (span){"", 0};
    }
    qsort(k, it.n, sizeof *k, by_file);
    int rc = 0;
    for (size_t i = 1; i < it.n && rc == 0; i++)
        if (k[i].file.n && k[i].file.n == k[i - 1].file.n &&
            memcmp(k[i].file.p, k[i - 1].file.p, k[i].file.n) == 0) {
            char f[200];
            clip(k[i].file, f, sizeof f);
            rc = fail(m, 1, "%s is in more than one shard (not one campaign's split)", f);
        }
    rp_jw_raw(o, "[");
    for (size_t i = 0; i < it.n; i++) {
        rp_jw_raw(o, i ? ",\n    " : "\n    ");
        rp_jw_put(o, k[i].item.p, k[i].item.n);
    }
    rp_jw_raw(o, it.n ? "\n  ]" : "]");
    *count = it.n;
    al_free(k, (it.n ? it.n : 1) * sizeof *k, AL_K_REPORT);
    items_free(&it);
    return rc;
}

/* ---- stress failures: de-duplicated by the shrunk reproducer ---- */

typedef struct sfail {
    span raw;              /* the shard's "failure" */
    size_t shard;          /* index into m->d */
    uint64_t index, seed;
    char cls[128];         /* the failure class (what the shrinker keeps) */
    uint64_t statements;   /* of the shrunk reproducer */
    char *key;             /* the reproducer, normalized (AL_K_REPORT) */
    size_t key_cap;
    int dup_of;            /* -1: the first of its class, else that one's index */
    int new_text;          /* its reproducer differs from the earlier ones of its class */
} sfail;

/* The reproducer's statements (comment and blank lines dropped, digit runs
 * read as N, so that variable numbering and sizes do not tell two
 * reproducers apart), or the class when it was not shrunk. */
static int failure_key(span raw, sfail *f)
{
    span rep;
    rp_jr j;
    char *cls = f->cls;
    span c;
    if (span_member(raw, "class", &c) == 0)
        span_str(c, f->cls, sizeof f->cls);
    f->statements = member_u64(raw, "min_statements");
    const char *text = "";
    if (span_member(raw, "reproducer", &rep) != 0)
        rep = (span){"\"\"", 2};
    span_jr(&j, rep, NULL, 0);
    if (rp_jr_string(&j) == 0)
        text = j.str;
    size_t len = strlen(text) + strlen(cls) + 2;   /* digit runs only shrink */
    f->key = al_malloc(len, AL_K_REPORT, "rp_merge");
    f->key_cap = len;
    if (!f->key) {
        rp_jr_free(&j);
        return -1;
    }
    size_t n = 0;
    for (const char *l = text; *l;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l);
        const char *q = l;
        while (q < l + ll && (*q == ' ' || *q == '\t'))
            q++;
        if (q < l + ll && *q != '#') {
            /* digit runs as N: variable numbers, sizes and counts aside */
            for (size_t i = 0; i < ll; i++) {
                int d = l[i] >= '0' && l[i] <= '9';
                if (!d)
                    f->key[n++] = l[i];
                else if (i == 0 || l[i - 1] < '0' || l[i - 1] > '9')
                    f->key[n++] = 'N';
            }
            f->key[n++] = '\n';
        }
        l += ll + (e != NULL);
    }
    if (n == 0)
        n = (size_t)snprintf(f->key, len, "%s\n", cls);
    f->key[n] = '\0';
    rp_jr_free(&j);
    return 0;
}

/* f: an array of cap records (cap >= 1), zeroed past those filled. */
static void sfails_free(sfail *f, size_t cap)
{
    for (size_t i = 0; f && i < cap; i++)
        if (f[i].key)
            al_free(f[i].key, f[i].key_cap, AL_K_REPORT);
    al_free(f, f ? cap * sizeof *f : 0, AL_K_REPORT);
}

static int by_index(const void *a, const void *b)
{
    const sfail *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Collect the failures, earliest lifecycle first; *distinct counted. */
static int stress_failures(mg *m, sfail **out, size_t *nout, size_t *distinct)
{
    sfail *f = al_malloc((m->n ? m->n : 1) * sizeof *f, AL_K_REPORT, "rp_merge");
    if (!f)
        return fail(m, 0, "out of memory");
    memset(f, 0, (m->n ? m->n : 1) * sizeof *f);
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const span *c = get(&m->d[i], "failures"), *r = get(&m->d[i], "failure");
        uint64_t nf = 0;
        if (c)
            span_u64(*c, &nf);
        if (!nf || !r)
            continue;
        f[n].raw = *r;
        f[n].shard = i;
        f[n].index = member_u64(*r, "lifecycle_index");
        f[n].seed = member_u64(*r, "seed");
        if (failure_key(*r, &f[n]) != 0) {
            sfails_free(f, m->n ? m->n : 1);
            return fail(m, 0, "out of memory");
        }
        n++;
    }
    qsort(f, n, sizeof *f, by_index);
    *distinct = 0;
    for (size_t i = 0; i < n; i++) {
        f[i].dup_of = -1;
        f[i].new_text = 1;
        for (size_t k = 0; k < i; k++) {
            if (strcmp(f[k].cls, f[i].cls) != 0)
                continue;
            if (f[i].dup_of < 0)
                f[i].dup_of = f[k].dup_of < 0 ? (int)k : f[k].dup_of;
            if (strcmp(f[k].key, f[i].key) == 0)
                f[i].new_text = 0;
        }
        *distinct += f[i].dup_of < 0;
    }
    *out = f;
    *nout = n;
    return 0;
}

static int in_group(const sfail *f, size_t k, size_t lead)
{
    return k == lead || f[k].dup_of == (int)lead;
}

/* The group's reproducer shown: the shortest, the earliest of those. */
static size_t group_best(const sfail *f, size_t n, size_t lead)
{
    size_t best = lead;
    for (size_t k = lead + 1; k < n; k++)
        if (in_group(f, k, lead) && f[k].statements && f[k].statements < f[best].statements)
            best = k;
    return best;
}

static void write_failures(mg *m, rp_jw *o, const sfail *f, size_t n, size_t distinct)
{
    rp_jw_u64(o, distinct);
    if (!n)
        return;
    rp_jw_key(o, ",\n  ", "failure");
    rp_jw_put(o, f[0].raw.p, f[0].raw.n);
    rp_jw_key(o, ",\n  ", "distinct_failures");
    rp_jw_raw(o, "[");
    for (size_t i = 0, w = 0; i < n; i++) {
        if (f[i].dup_of >= 0)
            continue;
        size_t texts = 0, best = group_best(f, n, i);
        rp_jw_key(o, w++ ? ",\n    {" : "\n    {", "class");
        rp_jw_str(o, f[i].cls);
        rp_jw_key(o, ", ", "shards");
        rp_jw_raw(o, "[");
        for (size_t k = i, c = 0; k < n; k++)
            if (in_group(f, k, i)) {
                rp_jw_raw(o, c++ ? ", " : "");
                rp_jw_u64(o, m->d[f[k].shard].k);
                texts += f[k].new_text;
            }
        rp_jw_key(o, "], ", "seeds");
        rp_jw_raw(o, "[");
        for (size_t k = i, c = 0; k < n; k++)
            if (in_group(f, k, i)) {
                rp_jw_raw(o, c++ ? ", " : "");
                rp_jw_u64(o, f[k].seed);
            }
        rp_jw_key(o, "], ", "reproducers");
        rp_jw_u64(o, texts);
        rp_jw_key(o, ", ", "failure");
        rp_jw_put(o, f[best].raw.p, f[best].raw.n);
        rp_jw_raw(o, "}");
    }
    rp_jw_raw(o, "\n  ]");
}

/* ---- the merged report ---- */

typedef struct totals {
    uint64_t steps, statements, lifecycles, max_live;
    double seconds, cpu_seconds;      /* the slowest shard; all shards */
    sfail *f;
    size_t nf, distinct;
    size_t scenarios;
    uint64_t sum[6];                  /* run, oom: the summary, recomputed */
    const char *status;               /* recomputed */
} totals;

static double doc_double(const doc *d, const char *key)
{
    const span *s = get(d, key);
    double v = 0;
    if (s)
        span_double(*s, &v);
    return v;
}

static uint64_t doc_u64(const doc *d, const char *key)
{
    const span *s = get(d, key);
    uint64_t v = 0;
    if (s)
        span_u64(*s, &v);
    return v;
}

static void stress_totals(const mg *m, totals *t)
{
    for (size_t i = 0; i < m->n; i++) {
        const doc *d = &m->d[i];
        t->steps += doc_u64(d, "steps");
        t->statements += doc_u64(d, "statements");
        t->lifecycles += doc_u64(d, "lifecycles");
        uint64_t live = doc_u64(d, "max_live_objects");
        double s = doc_double(d, "seconds");
        t->max_live = live > t->max_live ? live : t->max_live;
        t->seconds = s > t->seconds ? s : t->seconds;
        t->cpu_seconds += s;
    }
}

static void write_shard(rp_jw *o, const doc *d)
{
    const span *h = get(d, "host");
    rp_jw_key(o, "{", "shard"); rp_jw_u64(o, d->k);
    rp_jw_key(o, ", ", "file"); rp_jw_str(o, d->name);
    rp_jw_key(o, ", ", "host");
    if (h)
        rp_jw_put(o, h->p, h->n);
    else
        rp_jw_raw(o, "null");
    if (d->kind != K_STRESS) {
        const span *s = get(d, "scenarios");
        items it = {0};
        if (s)
            span_items(*s, &it);
        rp_jw_key(o, ", ", "scenarios"); rp_jw_u64(o, it.n);
        rp_jw_raw(o, "}");
        items_free(&it);
        return;
    }
    uint64_t seed = doc_u64(d, "seed"), first = doc_u64(d, "lifecycle_first");
    uint64_t ran = doc_u64(d, "lifecycles") + (doc_u64(d, "failures") > 0);
    double s = doc_double(d, "seconds");
    uint64_t steps = doc_u64(d, "steps");
    rp_jw_key(o, ", ", "seeds");
    rp_jw_key(o, "{", "first"); rp_jw_u64(o, seed + first);
    rp_jw_key(o, ", ", "stride"); rp_jw_u64(o, d->n);
    rp_jw_key(o, ", ", "last");
    if (ran)
        rp_jw_u64(o, seed + first + (ran - 1) * d->n);
    else
        rp_jw_raw(o, "null");
    rp_jw_key(o, "}, ", "lifecycles"); rp_jw_u64(o, doc_u64(d, "lifecycles"));
    rp_jw_key(o, ", ", "steps"); rp_jw_u64(o, steps);
    rp_jw_key(o, ", ", "seconds"); rp_jw_fixed(o, s, 3);
    rp_jw_key(o, ", ", "steps_per_second"); rp_jw_fixed(o, s > 0 ? (double)steps / s : 0.0, 0);
    rp_jw_key(o, ", ", "failures"); rp_jw_u64(o, doc_u64(d, "failures"));
    rp_jw_raw(o, "}");
}

static void write_summary(rp_jw *o, int kind, const uint64_t *sum);

static int write_field(mg *m, rp_jw *o, const char *key, int rule, totals *t)
{
    span *v;
    switch (rule) {
    case R_CONCAT:
        return write_concat(m, o, key, &t->scenarios);
    case R_SUM:
        v = al_malloc(m->n * sizeof *v, AL_K_REPORT, "rp_merge");
        if (!v)
            return fail(m, 0, "out of memory");
        for (size_t i = 0; i < m->n; i++) {
            const span *s = get(&m->d[i], key);
            if (!s) {
                al_free(v, m->n * sizeof *v, AL_K_REPORT);
                return fail(m, 1, "%s has no \"%s\" but %s has (not one campaign)",
                            m->d[i].name, key, m->d[0].name);
            }
            v[i] = *s;
        }
        int rc = write_sum(m, o, key, v, m->n);
        al_free(v, m->n * sizeof *v, AL_K_REPORT);
        return rc;
    case R_MAX:
        if (strcmp(key, "seconds") == 0) {
            rp_jw_fixed(o, t->seconds, 3);
            rp_jw_key(o, ", ", "cpu_seconds");
            rp_jw_fixed(o, t->cpu_seconds, 3);
        } else {
            rp_jw_u64(o, t->max_live);
        }
        return 0;
    case R_RATE:
        rp_jw_fixed(o, t->seconds > 0 ? (double)t->steps / t->seconds : 0.0, 0);
        return 0;
    case R_FAILURES:
        write_failures(m, o, t->f, t->nf, t->distinct);
        return 0;
    case R_SUMMARY:
        write_summary(o, m->d[0].kind, t->sum);
        return 0;
    case R_STATUS:
        rp_jw_str(o, t->status);
        return 0;
    default:
        return 0;
    }
}

/* The merged document into o (a memory stream); 0, or -1 (printed in m). */
static int write_json(mg *m, FILE *out, totals *t)
{
    const doc *d0 = &m->d[0];
    rp_jw *o = rp_jw_open(out);
    if (!o)
        return fail(m, 0, "out of memory");
    const char *sep = "{\n  ";
    if (!get(d0, "schema")) {
        rp_jw_key(o, sep, "schema");
        rp_jw_str(o, kind_row(d0->kind)->schema);
        sep = ",\n  ";
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < d0->f.n; i++) {
        const field *f = &d0->f.v[i];
        int rule = rule_of(f->key, d0->kind);
        if (rule == R_SHARD || rule == R_DROP)
            continue;
        rp_jw_raw(o, sep);
        sep = ",\n  ";
        rp_jw_str(o, f->key);
        rp_jw_raw(o, ": ");
        if (rule == R_EQUAL)
            rp_jw_put(o, f->v.p, f->v.n);
        else
            rc = write_field(m, o, f->key, rule, t);
    }
    rp_jw_key(o, sep, "merged"); rp_jw_u64(o, m->n);
    rp_jw_key(o, ",\n  ", "merged_by");
    rp_jw_build(o, "{");
    rp_jw_key(o, "},\n  ", "shards");
    rp_jw_raw(o, "[");
    for (size_t i = 0; i < m->n; i++) {
        rp_jw_raw(o, i ? ",\n    " : "\n    ");
        write_shard(o, &m->d[i]);
    }
    rp_jw_raw(o, "\n  ]\n}\n");
    if (rp_jw_close(o) != 0 && rc == 0)
        rc = fail(m, 0, "out of memory");
    return rc;
}

/* ---- text and JUnit for stress and oom ---- */

static void member_str(span ob, const char *key, char *buf, size_t n)
{
    span v;
    buf[0] = '\0';
    if (span_member(ob, key, &v) == 0)
        span_str(v, buf, n);
}

static void shard_line(const doc *d, char *buf, size_t n)
{
    char host[128] = "?";
    const span *h = get(d, "host");
    if (h)
        span_str(*h, host, sizeof host);
    uint64_t seed = doc_u64(d, "seed"), first = doc_u64(d, "lifecycle_first");
    uint64_t lc = doc_u64(d, "lifecycles"), steps = doc_u64(d, "steps");
    uint64_t ran = lc + (doc_u64(d, "failures") > 0);
    double s = doc_double(d, "seconds");
    snprintf(buf, n, "shard %u/%u on %s: seeds %" PRIu64 ", %" PRIu64 ", ... %" PRIu64
             ": %" PRIu64 " lifecycles, %" PRIu64 " steps in %.2f s, %.0f steps/s%s",
             d->k, d->n, host, seed + first, seed + first + d->n,
             seed + first + (ran ? ran - 1 : 0) * d->n, lc, steps, s,
             s > 0 ? (double)steps / s : 0.0, doc_u64(d, "failures") ? ", 1 failure" : "");
}

static void write_stress_text(const mg *m, FILE *o, const totals *t)
{
    char line[512], a[512], c[1024];
    for (size_t i = 0; i < t->nf; i++) {
        const sfail *f = &t->f[i];
        if (f->dup_of >= 0)
            continue;
        size_t texts = 0, nseeds = 0, best = group_best(t->f, t->nf, i);
        for (size_t k = i; k < t->nf; k++)
            if (in_group(t->f, k, i)) {
                texts += t->f[k].new_text;
                nseeds++;
            }
        fprintf(o, "FAIL stress seed %" PRIu64 " (lifecycle %" PRIu64 ", shard %u): %s\n",
                f->seed, f->index, m->d[f->shard].k, f->cls);
        if (nseeds > 1) {
            fprintf(o, "  also seeds");
            for (size_t k = i + 1; k < t->nf; k++)
                if (in_group(t->f, k, i))
                    fprintf(o, " %" PRIu64, t->f[k].seed);
            fprintf(o, " (%zu distinct reproducer%s; the shortest below)\n", texts,
                    texts == 1 ? "" : "s");
        }
        const sfail *b = &t->f[best];
        member_str(b->raw, "first", a, sizeof a);
        fprintf(o, "  first failure: %s\n", a);
        member_str(b->raw, "min_file", a, sizeof a);
        if (a[0])
            fprintf(o, "  reproducer: %s (%" PRIu64 " statements, seed %" PRIu64 ")\n", a,
                    b->statements, b->seed);
        member_str(b->raw, "reproduce", c, sizeof c);
        if (c[0])
            fprintf(o, "  in one process: %s\n", c);
    }
    for (size_t i = 0; i < m->n; i++) {
        shard_line(&m->d[i], line, sizeof line);
        fprintf(o, "  %s\n", line);
    }
    fprintf(o, "stress: %zu shards: %" PRIu64 " steps (%" PRIu64 " statements, %" PRIu64
            " lifecycles), %.0f steps/s over the slowest shard's %.2f s (%.2f s in all), "
            "%zu failure%s\n", m->n, t->steps, t->statements, t->lifecycles,
            t->seconds > 0 ? (double)t->steps / t->seconds : 0.0, t->seconds, t->cpu_seconds,
            t->distinct, t->distinct == 1 ? "" : "s");
}

static void write_stress_junit(const mg *m, FILE *o, const totals *t)
{
    size_t failed = 0;
    for (size_t i = 0; i < m->n; i++)
        failed += doc_u64(&m->d[i], "failures") > 0;
    rp_junit_counts jc = {m->n, failed, 0, 0, t->seconds, 1};
    rp_junit_begin(o, "fakegc stress", &jc);
    char line[512], a[256], b[512], c[1024], body[1600];
    for (size_t i = 0; i < m->n; i++) {
        const doc *d = &m->d[i];
        shard_line(d, line, sizeof line);
        rp_junit_case(o, line, "fakegc.stress", doc_double(d, "seconds"));
        const span *r = get(d, "failure");
        if (!doc_u64(d, "failures") || !r) {
            fputs("/>\n", o);
            continue;
        }
        member_str(*r, "class", a, sizeof a);
        member_str(*r, "first", b, sizeof b);
        member_str(*r, "reproduce", c, sizeof c);
        snprintf(body, sizeof body, "%s\nin one process: %s", b, c);
        rp_junit_failure(o, "failure", "stress", a, body);
    }
    rp_junit_end(o);
}

/* oom (and any report with "scenarios"): each scenario's file and status. */
static int scenario_failed(span item)
{
    char st[32];
    member_str(item, "status", st, sizeof st);
    return st[0] && strcmp(st, "pass") != 0 && strcmp(st, "ok") != 0 &&
           strcmp(st, "skip") != 0;
}

static int summary_failed(const span *s)
{
    static const char *const BAD[] = {"failed", "errors", "findings", "crashes", "leaks"};
    for (size_t i = 0; s && i < sizeof BAD / sizeof BAD[0]; i++)
        if (member_u64(*s, BAD[i]))
            return 1;
    return 0;
}

static void write_oom(const mg *m, FILE *o, int junit, const char *json, size_t len)
{
    fields top = {0};
    items it = {0};
    span_fields((span){json, len}, "<merged>", &top, NULL, 0);
    const span *s = fields_get(&top, "scenarios");
    if (s)
        span_items(*s, &it);
    size_t bad = 0;
    for (size_t i = 0; i < it.n; i++)
        bad += scenario_failed(it.v[i]);
    rp_junit_counts jc = {it.n, bad, 0, 0, 0, 0};
    if (junit)
        rp_junit_begin(o, "fakegc oom", &jc);
    for (size_t i = 0; i < it.n; i++) {
        char file[512], st[32];
        member_str(it.v[i], "file", file, sizeof file);
        member_str(it.v[i], "status", st, sizeof st);
        if (!junit) {
            fprintf(o, "%-4s %s\n", st[0] ? st : "?", file);
            continue;
        }
        rp_junit_case(o, file, "fakegc.oom", -1);
        if (!scenario_failed(it.v[i])) {
            fputs("/>\n", o);
            continue;
        }
        rp_junit_failure(o, "failure", "oom", st, file);
    }
    if (junit) {
        rp_junit_end(o);
    } else {
        const span *sum = fields_get(&top, "summary");
        fprintf(o, "oom: %zu shards, %zu scenarios, %zu not clean; summary ", m->n, it.n, bad);
        if (sum)
            fwrite(sum->p, 1, sum->n, o);
        fputc('\n', o);
    }
    items_free(&it);
    fields_free(&top);
}

/* ---- run and oom: the summary and the status, from the scenarios ---- */

/* The summary's fields, in the order written. */
static const char *const RUN_SUM[] = {"passed", "failed", "skipped", "errors"};
static const char *const OOM_SUM[] = {"scenarios", "failure_points", "contexts",
                                      "duplicates_skipped", "findings", "crashes"};

static const char *const *sum_keys(int kind, size_t *n)
{
    *n = kind == K_RUN ? 4 : 6;
    return kind == K_RUN ? RUN_SUM : OOM_SUM;
}

static void write_summary(rp_jw *o, int kind, const uint64_t *sum)
{
    size_t n;
    const char *const *keys = sum_keys(kind, &n);
    for (size_t i = 0; i < n; i++) {
        rp_jw_key(o, i ? ", " : "{", keys[i]);
        rp_jw_u64(o, sum[i]);
    }
    rp_jw_raw(o, "}");
}

static uint64_t mode_points(span item, const char *mode)
{
    span v;
    return span_member(item, mode, &v) == 0 && span_is(v, '{') ? member_u64(v, "points") : 0;
}

/* One scenario record into the counts c (as sum_keys). 0, or -1 for a
 * status its kind of report does not have. */
static int count_scenario(mg *m, const doc *d, int kind, span item, uint64_t *c)
{
    static const char *const RUN_ST[] = {"pass", "fail", "skip", "error"};
    char st[32], file[160];
    member_str(item, "status", st, sizeof st);
    if (kind == K_RUN) {
        for (size_t i = 0; i < 4; i++)
            if (strcmp(st, RUN_ST[i]) == 0) {
                c[i]++;
                return 0;
            }
    } else if (strcmp(st, "ok") == 0 || strcmp(st, "leak") == 0) {   /* as cli_oom.c counts */
        c[0]++;
        c[1] += mode_points(item, "transient") + mode_points(item, "persistent");
        c[2] += member_u64(item, "contexts");
        c[3] += member_u64(item, "duplicates_skipped");
        c[4] += member_u64(item, "findings_total");
        return 0;
    } else if (strcmp(st, "finding") == 0 || strcmp(st, "error") == 0 ||
               strcmp(st, "crash") == 0) {
        c[0]++;
        c[st[0] == 'c' ? 5 : 4]++;
        return 0;
    }
    member_str(item, "file", file, sizeof file);
    return fail(m, 1, "%s: scenario \"%s\" has status \"%s\", which a %s report does not have",
                d->name, file, st, kind_row(kind)->name);
}

/* Each shard's summary is what its scenarios say, and each shard holds the
 * scenarios the split gives it (campaign_files: F files, shard K of N has
 * those i < F with i mod N == K); t->sum and t->status are the campaign's. */
static int recompute(mg *m, totals *t)
{
    int kind = m->d[0].kind;
    size_t nk;
    const char *const *keys = sum_keys(kind, &nk);
    const span *cf = get(&m->d[0], "campaign_files");
    uint64_t files = 0;
    if (cf && span_u64(*cf, &files) != 0)
        return fail(m, 1, "%s: \"campaign_files\" is not a count", m->d[0].name);
    for (size_t i = 0; i < m->n; i++) {
        const doc *d = &m->d[i];
        const span *s = get(d, "scenarios"), *sum = get(d, "summary");
        items it = {0};
        uint64_t c[6] = {0};
        int r = s ? span_items(*s, &it) : -1;
        if (r < 0) {
            items_free(&it);
            return fail(m, r == -1, "%s: no \"scenarios\" array", d->name);
        }
        for (size_t k = 0; r == 0 && k < it.n; k++)
            r = count_scenario(m, d, kind, it.v[k], c);
        size_t got = it.n;
        items_free(&it);
        if (r != 0)
            return -1;
        for (size_t k = 0; k < nk; k++) {
            span v;
            uint64_t x = c[k];   /* a count the shard does not give is only recomputed */
            if (sum && span_member(*sum, keys[k], &v) == 0 && span_u64(v, &x) != 0)
                return fail(m, 1, "%s: its summary's \"%s\" is not a count", d->name, keys[k]);
            if (x != c[k])
                return fail(m, 1, "%s: its summary says \"%s\": %" PRIu64 " but its scenarios "
                            "give %" PRIu64 " (the report was changed or cut)", d->name, keys[k],
                            x, c[k]);
            t->sum[k] += c[k];
        }
        uint64_t want = cf ? files / d->n + (d->k < files % d->n) : got;
        if (got != want)
            return fail(m, 1, "%s (shard %u of %u) holds %zu scenario%s, but a campaign of %"
                        PRIu64 " files gives shard %u %" PRIu64 ": %" PRIu64 " %s",
                        d->name, d->k, d->n, got, got == 1 ? "" : "s", files, d->k, want,
                        got < want ? want - got : (uint64_t)got - want,
                        got < want ? "missing" : "extra");
    }
    const span *stop = get(&m->d[0], "stopped");
    int stopped = stop && !(stop->n == 4 && memcmp(stop->p, "null", 4) == 0);
    if (kind == K_RUN)
        t->status = stopped || t->sum[3] ? "error" : t->sum[1] ? "fail" : "pass";
    else
        t->status = stopped ? "error" : t->sum[4] || t->sum[5] ? "fail" : "pass";
    return 0;
}

/* stress: a shard that ended in an error makes the campaign's status
 * "error"; else any failure "fail". */
static const char *stress_status(const mg *m, const totals *t)
{
    char st[16];
    for (size_t i = 0; i < m->n; i++) {
        const span *s = get(&m->d[i], "status");
        if (s && span_str(*s, st, sizeof st) == 0 && strcmp(st, "error") == 0)
            return "error";
    }
    return t->distinct ? "fail" : "pass";
}

/* ---- the entry point ---- */

/* Run reports: the writers of rp.h over the merged report read back. */
static int write_run(mg *m, FILE *out, rp_format fmt, const rp_options *o, const char *json,
                     size_t len, int *failed)
{
    rp_run run;
    char e[512];
    if (rp_read_json_text(json, len, "<merged>", &run, e, sizeof e) != 0)
        return fail(m, er_kind_get() != ER_OOM, "the merged report does not read back: %s", e);
    for (size_t i = 0; i < run.n; i++)
        *failed |= run.scenarios[i].status == RP_FAIL || run.scenarios[i].status == RP_ERROR;
    int rc = rp_write(&run, fmt, out, o);
    rp_run_free_read(&run);
    if (rc == 0 && fmt == RP_TEXT)
        fprintf(out, "merge: %zu shards of a run campaign\n", m->n);
    return rc != 0 ? fail(m, 0, "cannot write the merged report") : 0;
}

static int merge(mg *m, rp_format fmt, FILE *out, const rp_options *o, rp_merge_result *res)
{
    int rc = check_campaign(m);
    if (rc == 0)
        rc = check_options(m);
    totals t;
    memset(&t, 0, sizeof t);
    int kind = m->d[0].kind;
    if (rc == 0 && kind == K_STRESS) {
        stress_totals(m, &t);
        rc = stress_failures(m, &t.f, &t.nf, &t.distinct);
        t.status = stress_status(m, &t);
    } else if (rc == 0) {
        rc = recompute(m, &t);
    }
    char *json = NULL;
    size_t len = 0;
    FILE *mem = rc == 0 ? open_memstream(&json, &len) : NULL;
    if (rc == 0 && !mem)
        rc = fail(m, 0, "out of memory");
    if (rc == 0)
        rc = write_json(m, mem, &t);
    if (mem && fclose(mem) != 0 && rc == 0)
        rc = fail(m, 0, "out of memory");
    res->kind = kind_row(kind)->name;
    res->shards = m->n;
    if (rc == 0 && kind == K_STRESS)
        res->failed = t.distinct > 0;
    if (rc == 0 && kind != K_STRESS) {   /* a scenario that failed, or a count */
        fields top = {0};
        items it = {0};
        span_fields((span){json, len}, "<merged>", &top, NULL, 0);
        const span *s = fields_get(&top, "scenarios");
        if (s)
            span_items(*s, &it);
        for (size_t i = 0; i < it.n; i++)
            res->failed |= scenario_failed(it.v[i]);
        res->failed |= summary_failed(fields_get(&top, "summary"));
        items_free(&it);
        fields_free(&top);
    }
    /* the helpers that look into values cannot say "out of memory" */
    if (rc == 0 && er_kind_get() == ER_OOM)
        rc = fail(m, 0, "out of memory");
    if (rc == 0 && fmt == RP_JSON) {
        if (fwrite(json, 1, len, out) != len || fflush(out) != 0)
            rc = fail(m, 0, "cannot write the merged report");
    } else if (rc == 0 && kind == K_RUN) {
        rc = write_run(m, out, fmt, o, json, len, &res->failed);
    } else if (rc == 0 && fmt == RP_TAP) {
        rc = fail(m, 1, "--format %s is for run reports; %s reports merge to %s, %s or %s",
                  rp_formats[RP_TAP].name, kind_row(kind)->name, rp_formats[RP_TEXT].name,
                  rp_formats[RP_JSON].name, rp_formats[RP_JUNIT].name);
    } else if (rc == 0 && kind == K_STRESS) {
        if (fmt == RP_JUNIT)
            write_stress_junit(m, out, &t);
        else
            write_stress_text(m, out, &t);
    } else if (rc == 0) {
        write_oom(m, out, fmt == RP_JUNIT, json, len);
    }
    if (rc == 0 && er_kind_get() == ER_OOM)
        rc = fail(m, 0, "out of memory writing the merged report");
    free(json);
    sfails_free(t.f, m->n ? m->n : 1);
    return rc;
}

int rp_merge_files(const char *const *paths, size_t n, rp_format fmt, FILE *out,
                   const rp_options *o, rp_merge_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    er_clear();
    mg m;
    memset(&m, 0, sizeof m);
    m.err = err;
    m.errlen = errlen;
    if (err && errlen)
        err[0] = '\0';
    if (n == 0) {
        fail(&m, 1, "no reports to merge");
        return -1;
    }
    m.d = al_malloc(n * sizeof *m.d, AL_K_REPORT, "rp_merge");
    if (!m.d) {
        fail(&m, 0, "out of memory");
        return -2;
    }
    memset(m.d, 0, n * sizeof *m.d);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++, m.n++)
        rc = doc_read(&m, &m.d[i], paths[i]);
    if (rc == 0)
        rc = merge(&m, fmt, out, o, res);
    for (size_t i = 0; i < n; i++)
        doc_free(&m.d[i]);
    al_free(m.d, n * sizeof *m.d, AL_K_REPORT);
    return rc == 0 ? 0 : m.usage ? -1 : -2;
}
