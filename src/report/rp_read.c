/* rp_read.c - reading a JSON report back (for `fakegc diff`).
 *
 * The schema readers below drive the pull parser of rp_jsonr.h: they ask
 * for the value they expect (an object's keys, an array's items, a string,
 * an integer) and skip what they do not know. Nesting deeper than
 * MAX_DEPTH is refused there, so no input can exhaust the C stack. Strings
 * that several records share (type names, scenario files of sites) are
 * interned in a pool owned by the run.
 */
#include "report/rp_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"
#include "heap/hp_class.h"
#include "report/rp_jsonr.h"

enum { MAX_DEPTH = 64 };
/* What rp_read_json accepts: far above any report `run` writes (a
 * 5M-object leak report is 1.4 GB and was refused at the old 1 GiB); a
 * larger file is refused with "PATH: larger than 16384 MiB, the reader's
 * limit" (exit 2 from diff) instead of exhausting memory. */
#define MAX_FILE RP_JR_MAX_REPORT   /* the same for diff and merge */

/* --- the string pool ---------------------------------------------------------- */

typedef struct pchunk {
    struct pchunk *next;
    size_t size, used;
    char data[];
} pchunk;

typedef struct pool {
    pchunk *chunks;
    const char **v; size_t n, cap;   /* the strings, by id */
    ix index;
} pool;

static void pool_free(pool *p)
{
    if (!p)
        return;
    for (pchunk *c = p->chunks, *nx; c; c = nx) {
        nx = c->next;
        al_free(c, sizeof *c + c->size, AL_K_REPORT);
    }
    al_free(p->v, p->cap * sizeof *p->v, AL_K_REPORT);
    ix_free(&p->index);
    al_free(p, sizeof *p, AL_K_REPORT);
}

static int pooled_eq(const void *ctx, uint32_t id, const void *key)
{
    const pool *p = ctx;
    return strcmp(p->v[id], key) == 0;
}

/* Room for len bytes in the newest chunk: its first free byte, or NULL. */
static char *pool_room(pool *p, size_t len)
{
    pchunk *c = p->chunks;
    if (!c || c->size - c->used < len) {
        size_t size = len > 4096 ? len : 4096;
        c = al_malloc(sizeof *c + size, AL_K_REPORT, "rp_pool");
        if (!c)
            return NULL;
        c->size = size;
        c->used = 0;
        c->next = p->chunks;
        p->chunks = c;
    }
    return c->data + c->used;
}

static const char *pool_intern(pool *p, const char *s)
{
    uint64_t h = ix_hash_str(s);
    uint32_t id = ix_find(&p->index, h, pooled_eq, p, s);
    if (id != IX_NONE)
        return p->v[id];
    size_t len = strlen(s) + 1;
    char *dst;
    if (al_grow(&p->v, &p->cap, p->n, sizeof *p->v, 64, AL_K_REPORT, "rp_pool") != 0 ||
        ix_reserve(&p->index, p->n + 1) != 0 || !(dst = pool_room(p, len)))
        return NULL;
    memcpy(dst, s, len);
    p->chunks->used += len;
    p->v[p->n] = dst;
    ix_add(&p->index, h, (uint32_t)p->n);   /* reserved: cannot fail */
    return p->v[p->n++];
}

/* --- the reader's state and typed values ---------------------------------------- */

typedef struct rd {
    rp_jr j;
    char *pbuf; size_t pbuf_cap;                /* path strings */
    size_t *poff; size_t poff_cap;
    const char **pptr; size_t pptr_cap;
    pool *pool;
} rd;

static int grow(rp_jr *j, void **buf, size_t *cap, size_t need, size_t elem);

/* An array being read: grows geometrically (it grew by one element per
 * push, quadratic copying on a 5M-object report), then handed over at its
 * exact size, which is what the free functions expect. */
typedef struct vec {
    void *v;
    size_t n, cap, elem;
} vec;

static int vec_push(rp_jr *j, vec *x, const void *item)
{
    if (grow(j, &x->v, &x->cap, x->n + 1, x->elem) != 0)
        return -1;
    memcpy((char *)x->v + x->n * x->elem, item, x->elem);
    x->n++;
    return 0;
}

static void vec_free(vec *x)
{
    al_free(x->v, x->cap * x->elem, AL_K_REPORT);
    memset(x, 0, sizeof *x);
}

/* *out = an exact-size copy (NULL when empty), *n its length; x emptied.
 * -1 when out of memory (the elements stay in x for the caller to free). */
static int vec_take(rp_jr *j, vec *x, void **out, size_t *n)
{
    void *e = NULL;
    if (x->n) {
        e = al_malloc(x->n * x->elem, AL_K_REPORT, "rp_read");
        if (!e)
            return rp_jr_oom(j);
        memcpy(e, x->v, x->n * x->elem);
    }
    *out = e;
    *n = x->n;
    vec_free(x);
    return 0;
}

static int grow(rp_jr *j, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (al_reserve(buf, cap, need, elem, 64, AL_K_REPORT, "rp_read") != 0)
        return rp_jr_oom(j);
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A number, or null read as 0. */
static int get_double(rp_jr *j, double *out)
{
    int r = rp_jr_is_null(j);
    if (r)
        return r < 0 ? -1 : (*out = 0, 0);
    return rp_jr_get_double(j, out);
}

/* A string (owned copy) or null. */
static int get_str(rp_jr *j, char **out)
{
    int r = rp_jr_is_null(j);
    if (r)
        return r < 0 ? -1 : 0;
    if (rp_jr_string(j) != 0)
        return -1;
    char *c;
    if (rp_dup(&c, j->str) != 0)
        return rp_jr_oom(j);
    rp_free_str(*out);
    *out = c;
    return 0;
}

static int get_pooled(rd *d, const char **out)
{
    rp_jr *j = &d->j;
    int r = rp_jr_is_null(j);
    if (r)
        return r < 0 ? -1 : (*out = NULL, 0);
    if (rp_jr_string(j) != 0)
        return -1;
    const char *s = pool_intern(d->pool, j->str);
    if (!s)
        return rp_jr_oom(j);
    *out = s;
    return 0;
}

/* A string into a fixed field (cut to fit). */
static int get_fixed(rp_jr *j, char *buf, size_t n)
{
    int nul = rp_jr_is_null(j);
    buf[0] = '\0';
    if (nul)
        return nul < 0 ? -1 : 0;
    if (rp_jr_string(j) != 0)
        return -1;
    snprintf(buf, n, "%s", j->str);
    return 0;
}

/* --- the schema ------------------------------------------------------------------- */

static int read_site(rd *d, obj_site *site)
{
    rp_jr *j = &d->j;
    int r = rp_jr_is_null(j);
    if (r)
        return r < 0 ? -1 : 0;
    if (rp_jr_string(j) != 0)
        return -1;
    char *colon = strrchr(j->str, ':');
    site->line = 0;
    if (colon && colon[1]) {
        char *q = colon + 1;
        uint64_t v = 0;
        while (is_digit(*q) && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(*q++ - '0');
        if (!*q && v <= UINT32_MAX) {
            *colon = '\0';
            site->line = (uint32_t)v;
        }
    }
    site->file = pool_intern(d->pool, j->str);
    return site->file ? 0 : rp_jr_oom(j);
}

static int read_path(rd *d, hp_retained *r)
{
    rp_jr *j = &d->j;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    size_t n = 0, used = 0;
    int first = 1, k;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        if (rp_jr_string(j) != 0)
            return -1;
        if (grow(j, (void **)&d->pbuf, &d->pbuf_cap, used + j->str_len + 1, 1) != 0 ||
            grow(j, (void **)&d->poff, &d->poff_cap, n + 1, sizeof *d->poff) != 0)
            return -1;
        memcpy(d->pbuf + used, j->str, j->str_len + 1);
        d->poff[n++] = used;
        used += j->str_len + 1;
    }
    if (k < 0)
        return -1;
    if (grow(j, (void **)&d->pptr, &d->pptr_cap, n + 1, sizeof *d->pptr) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        d->pptr[i] = d->pbuf + d->poff[i];
    if (hp_retained_set_path(r, d->pptr, n) != 0)
        return rp_jr_oom(j);
    return 0;
}

/* A kind's name into *out: 0, or -1 (an unknown kind). */
static int get_kind(rp_jr *j, obj_kind *out)
{
    if (rp_jr_string(j) != 0)
        return -1;
    for (int x = 0; x < OBJ_KIND_COUNT; x++)
        if (strcmp(obj_kind_name((obj_kind)x), j->str) == 0) {
            *out = (obj_kind)x;
            return 0;
        }
    return rp_jr_fail(j, "unknown kind \"%.40s\"", j->str);
}

/* The keys a record and a group share (holder, kind, type, created,
 * reason): 0, -1, or 1 when key is none of them. */
static int shared_key(rd *d, const char *key, hp_retained *r)
{
    rp_jr *j = &d->j;
    int rc;
    if (strcmp(key, "holder") == 0) {
        if ((rc = rp_jr_string(j)) == 0 && hp_holder_parse(j->str, &r->holder) != 0)
            rc = rp_jr_fail(j, "unknown holder \"%.40s\"", j->str);
        return rc;
    }
    if (strcmp(key, "kind") == 0)
        return get_kind(j, &r->kind);
    if (strcmp(key, "type") == 0)
        return get_pooled(d, &r->type_name);
    if (strcmp(key, "created") == 0)
        return read_site(d, &r->site);
    if (strcmp(key, "reason") != 0)
        return 1;
    if ((rc = rp_jr_string(j)) != 0)
        return rc;
    for (int x = HP_REACHABLE; x <= HP_UNTRACED; x++)
        if (strcmp(hp_reason_name((hp_reason)x), j->str) == 0) {
            r->reason = (hp_reason)x;
            return 0;
        }
    return rp_jr_fail(j, "unknown reason \"%.40s\"", j->str);
}

static int read_record(rd *d, hp_retained *r)
{
    rp_jr *j = &d->j;
    char key[32];
    int first = 1, k, have_kind = 0;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    r->holder = HP_HOLD_VARIABLE;   /* a report from before holder classes */
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = shared_key(d, key, r);
        have_kind |= strcmp(key, "kind") == 0;
        if (rc != 1) {
        } else if (strcmp(key, "id") == 0) {
            rc = rp_jr_get_u64(j, &r->id, "id");
        } else if (strcmp(key, "bytes") == 0) {
            rc = rp_jr_get_u64(j, &r->bytes, "bytes");
        } else if (strcmp(key, "retained_bytes") == 0) {
            rc = rp_jr_get_u64(j, &r->retained_bytes, "retained_bytes");
        } else if (strcmp(key, "path") == 0) {
            rc = read_path(d, r);
        } else if (strcmp(key, "describe") == 0) {
            int nul = rp_jr_is_null(j);
            if (nul < 0)
                rc = -1;
            else if (!nul && (rc = rp_jr_string(j)) == 0)
                snprintf(r->describe, sizeof r->describe, "%s", j->str);
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!have_kind)
        return rp_jr_fail(j, "a retained record without \"kind\"");
    return 0;
}

/* A group's "examples" (ids): where the first is in the records, and how
 * many of them follow it there. */
static int group_examples(rp_jr *j, hp_group *g, const hp_retained *r, size_t n)
{
    int first = 1, k;
    size_t i = 0;
    g->example = n;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        uint64_t id;
        if (rp_jr_get_u64(j, &id, "examples") != 0)
            return -1;
        if (i++ == 0)
            for (size_t x = 0; x < n && g->example == n; x++)
                if (r[x].id == id)
                    g->example = x;
        if (g->example < n && g->example + g->nexamples < n &&
            r[g->example + g->nexamples].id == id)
            g->nexamples++;
    }
    return k < 0 ? -1 : 0;
}

static int read_group(rd *d, hp_group *g, const hp_retained *recs, size_t nrecs)
{
    rp_jr *j = &d->j;
    char key[32];
    int first = 1, k;
    hp_retained r;
    memset(&r, 0, sizeof r);
    r.holder = HP_HOLD_VARIABLE;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = shared_key(d, key, &r);
        if (rc != 1) {
        } else if (strcmp(key, "count") == 0) {
            rc = rp_jr_get_u64(j, &g->count, "count");
        } else if (strcmp(key, "bytes_each") == 0) {
            rc = rp_jr_get_u64(j, &g->bytes_each, "bytes_each");
        } else if (strcmp(key, "total_bytes") == 0) {
            rc = rp_jr_get_u64(j, &g->total_bytes, "total_bytes");
        } else if (strcmp(key, "total_retained") == 0) {
            rc = rp_jr_get_u64(j, &g->total_retained, "total_retained");
        } else if (strcmp(key, "via") == 0 && !g->via) {
            if ((rc = rp_jr_string(j)) == 0 && !(g->via = al_strdup(j->str, AL_K_HEAP, "rp_read via")))
                rc = rp_jr_oom(j);
        } else if (strcmp(key, "examples") == 0) {
            rc = group_examples(j, g, recs, nrecs);
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    g->kind = r.kind;
    g->type_name = r.type_name;
    g->site = r.site;
    g->reason = r.reason;
    g->holder = r.holder;
    return k < 0 ? -1 : 0;
}

static void group_vias_free(hp_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (g[i].via)
            al_free(g[i].via, strlen(g[i].via) + 1, AL_K_HEAP);
}

/* "groups" (read after the records their examples name) into an exactly
 * sized AL_K_HEAP array (hp_groups_free): the counts the writer had, not
 * the examples'. */
static int read_groups(rd *d, const hp_retained *recs, size_t nrecs, hp_group **out,
                       size_t *nout)
{
    rp_jr *j = &d->j;
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    vec x = {NULL, 0, 0, sizeof(hp_group)};
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        hp_group g;
        memset(&g, 0, sizeof g);
        if (read_group(d, &g, recs, nrecs) != 0 || vec_push(j, &x, &g) != 0) {
            group_vias_free(&g, 1);
            k = -1;
            break;
        }
    }
    hp_group *v = k == 0 && x.n ? al_malloc(x.n * sizeof *v, AL_K_HEAP, "rp_read groups") : NULL;
    if (k == 0 && (v || !x.n)) {
        if (x.n)
            memcpy(v, x.v, x.n * sizeof *v);
        *out = v;
        *nout = x.n;
        vec_free(&x);
        return 0;
    }
    group_vias_free(x.v, x.n);
    vec_free(&x);
    return k == 0 ? rp_jr_oom(j) : -1;
}

/* An array of records into an exactly sized AL_K_HEAP array. */
static int read_records(rd *d, hp_retained **out, size_t *nout)
{
    rp_jr *j = &d->j;
    hp_retained *v = NULL;
    size_t n = 0, cap = 0;
    int first = 1, k, rc = -1;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            hp_retained *nv = al_realloc(v, cap * sizeof *v, ncap * sizeof *v, AL_K_HEAP,
                                         "rp_read");
            if (!nv) {
                rp_jr_oom(j);
                goto out;
            }
            v = nv;
            cap = ncap;
        }
        memset(&v[n], 0, sizeof v[n]);
        n++;
        if (read_record(d, &v[n - 1]) != 0)
            goto out;
    }
    if (k < 0)
        goto out;
    if (n) {
        *out = al_malloc(n * sizeof **out, AL_K_HEAP, "rp_read");
        if (!*out) {
            rp_jr_oom(j);
            goto out;
        }
        memcpy(*out, v, n * sizeof *v);
        *nout = n;
        n = 0;   /* the paths moved */
    }
    rc = 0;
out:
    for (size_t i = 0; i < n; i++)
        hp_retained_clear(&v[i]);
    if (v)
        al_free(v, cap * sizeof *v, AL_K_HEAP);
    return rc;
}

/* A failure's actual: a string, or a number (version 2) read back as its
 * decimal text so that the diff compares like with like. */
static int get_actual(rp_jr *j, char **out)
{
    int c = rp_jr_peek(j);
    if (c != '-' && (c < '0' || c > '9'))
        return get_str(j, out);
    double v;
    if (rp_jr_get_double(j, &v) != 0)
        return -1;
    char buf[40];
    if (v == (double)(long long)v)
        snprintf(buf, sizeof buf, "%lld", (long long)v);
    else
        snprintf(buf, sizeof buf, "%.17g", v);
    char *copy;
    if (rp_dup(&copy, buf) != 0)
        return rp_jr_oom(j);
    rp_free_str(*out);
    *out = copy;
    return 0;
}

/* One of "biggest" (rp_json.c's biggest): an hp_top. */
static int top_key(rd *d, const char *key, hp_top *t)
{
    rp_jr *j = &d->j;
    if (strcmp(key, "id") == 0)
        return rp_jr_get_u64(j, &t->id, "id");
    if (strcmp(key, "kind") == 0)
        return get_kind(j, &t->kind);
    if (strcmp(key, "type") == 0)
        return get_pooled(d, &t->type_name);
    if (strcmp(key, "retained_bytes") == 0)
        return rp_jr_get_u64(j, &t->retained_bytes, "retained_bytes");
    if (strcmp(key, "count") == 0)
        return rp_jr_get_u64(j, &t->count, "count");
    if (strcmp(key, "main_count") == 0)
        return rp_jr_get_u64(j, &t->main_count, "main_count");
    if (strcmp(key, "main_kind") == 0)
        return get_kind(j, &t->main_kind);
    if (strcmp(key, "main_via") == 0)
        return get_fixed(j, t->main_via, sizeof t->main_via);
    if (strcmp(key, "path") == 0)
        return get_fixed(j, t->path, sizeof t->path);
    return rp_jr_skip(j);
}

/* "biggest": up to HP_TOP biggest retainers (more are skipped) into *top
 * (hp_tops_alloc, as a summary's; NULL when the array is empty). */
static int read_biggest(rd *d, hp_top **top, size_t *ntop)
{
    rp_jr *j = &d->j;
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        if (*ntop == HP_TOP) {
            if (rp_jr_skip(j) != 0)
                return -1;
            continue;
        }
        if (!*top && !(*top = hp_tops_alloc()))
            return rp_jr_oom(j);
        hp_top *t = &(*top)[*ntop];
        char key[32];
        int f2 = 1, k2;
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while ((k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1)
            if (top_key(d, key, t) != 0)
                return -1;
        if (k2 < 0)
            return -1;
        (*ntop)++;
    }
    return k < 0 ? -1 : 0;
}

/* A failing growth()'s or live()'s "kinds": [{kind, now, delta}, ...]. */
static int read_kinds(rp_jr *j, rp_failure *f)
{
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    vec x = {NULL, 0, 0, sizeof *f->kinds};
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        struct rp_kind_count c = {OBJ_GENERIC, 0, 0};
        char key[16];
        int f2 = 1, k2 = 0, rc = rp_jr_obj_open(j);
        while (rc == 0 && (k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1)
            rc = strcmp(key, "kind") == 0    ? get_kind(j, &c.kind)
               : strcmp(key, "now") == 0     ? rp_jr_get_u64(j, &c.now, "now")
               : strcmp(key, "delta") == 0   ? rp_jr_get_i64(j, &c.delta, "delta")
                                             : rp_jr_skip(j);
        if (rc != 0 || k2 < 0 || vec_push(j, &x, &c) != 0) {
            vec_free(&x);
            return -1;
        }
    }
    void *v = NULL;
    size_t n = 0;
    if (k < 0 || vec_take(j, &x, &v, &n) != 0) {
        vec_free(&x);
        return -1;
    }
    if (f->kinds)   /* a repeated key: the last wins */
        al_free(f->kinds, f->nkinds * sizeof *f->kinds, AL_K_REPORT);
    f->kinds = v;
    f->nkinds = n;
    return 0;
}

/* One row of "kinds_live" (rp_json.c's kinds_live): its "kind" first, then
 * the live objects of that kind at the start ("begin"), at each checkpoint
 * read before it ("checkpoints"; values past them are ignored) and at the
 * end. */
static int kinds_row(rp_jr *j, rp_scenario *s)
{
    char key[16];
    int first = 1, k, kd = -1;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        obj_kind x;
        if (strcmp(key, "kind") == 0) {
            if (get_kind(j, &x) != 0)
                return -1;
            kd = (int)x;
            continue;
        }
        if (kd < 0)
            return rp_jr_fail(j, "kinds_live: \"%s\" before \"kind\"", key);
        int rc;
        if (strcmp(key, "begin") == 0)
            rc = rp_jr_get_u64(j, &s->kinds_start[kd], "begin");
        else if (strcmp(key, "end") == 0)
            rc = rp_jr_get_u64(j, &s->kinds_end[kd], "end");
        else if (strcmp(key, "checkpoints") == 0) {
            int f2 = 1, k2;
            size_t i = 0;
            if ((rc = rp_jr_arr_open(j)) != 0)
                return -1;
            while (rc == 0 && (k2 = rp_jr_arr_next(j, &f2)) == 1) {
                uint64_t v = 0;
                rc = i < s->ncheckpoints ? rp_jr_get_u64(j, &v, "checkpoints") : rp_jr_skip(j);
                if (rc == 0 && i < s->ncheckpoints)
                    s->checkpoints[i++].kinds[kd] = v;
            }
            rc = rc != 0 || k2 < 0 ? -1 : 0;
        } else
            rc = rp_jr_skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

static int read_kinds_live(rp_jr *j, rp_scenario *s)
{
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1)
        if (kinds_row(j, s) != 0)
            return -1;
    if (k < 0)
        return -1;
    s->kinds_known = 1;
    return 0;
}

/* A failure's "kind": "expect", "fidelity", "growth". */
static int get_fail_kind(rp_jr *j, rp_fail_kind *out)
{
    if (rp_jr_string(j) != 0)
        return -1;
    return rp_fail_kind_from_word(j->str, out) == 0
               ? 0 : rp_jr_fail(j, "failure kind: unknown word \"%s\"", j->str);
}

/* "query": the word an expectation asked about (rp_failure.query). */
static int get_query(rp_jr *j, rp_failure *f)
{
    if (rp_jr_string(j) != 0)
        return -1;
    if (j->str_len >= sizeof f->query)
        return rp_jr_fail(j, "query: longer than %zu bytes", sizeof f->query - 1);
    memcpy(f->query, j->str, j->str_len + 1);
    return 0;
}

static int read_failure(rd *d, rp_failure *f)
{
    rp_jr *j = &d->j;
    char key[32];
    int first = 1, k;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, "line") == 0)
            rc = rp_jr_get_u32(j, &f->line, "line");
        else if (strcmp(key, "col") == 0)
            rc = rp_jr_get_u32(j, &f->col, "col");
        else if (strcmp(key, "text") == 0)
            rc = get_str(j, &f->text);
        else if (strcmp(key, "actual") == 0)
            rc = get_actual(j, &f->actual);
        else if (strcmp(key, "message") == 0)
            rc = get_str(j, &f->message);
        else if (strcmp(key, "query") == 0)
            rc = get_query(j, f);
        else if (strcmp(key, "objects") == 0 && !f->objects)
            rc = read_records(d, &f->objects, &f->nobjects);
        else if (strcmp(key, "objects_total") == 0)
            rc = rp_jr_get_u64(j, &f->objects_total, "objects_total");
        else if (strcmp(key, "groups") == 0 && !f->groups)
            rc = read_groups(d, f->objects, f->nobjects, &f->groups, &f->ngroups);
        else if (strcmp(key, "biggest") == 0 && !f->top)
            rc = read_biggest(d, &f->top, &f->ntop);
        else if (strcmp(key, "kinds") == 0)
            rc = read_kinds(j, f);
        else if (strcmp(key, "same_objects_as") == 0)
            rc = rp_jr_get_u32(j, &f->same_as, "same_objects_as");
        else if (strcmp(key, "kind") == 0)
            rc = get_fail_kind(j, &f->kind);
        else if (strcmp(key, "program_file") == 0)
            rc = get_str(j, &f->prog_file);
        else if (strcmp(key, "program_line") == 0)
            rc = rp_jr_get_u32(j, &f->prog_line, "program_line");
        else
            rc = rp_jr_skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

static int read_failures(rd *d, rp_scenario *s)
{
    rp_jr *j = &d->j;
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    vec x = {NULL, 0, 0, sizeof(rp_failure)};
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        rp_failure f;
        memset(&f, 0, sizeof f);
        if (read_failure(d, &f) != 0 || vec_push(j, &x, &f) != 0) {
            rp_failure_clear(&f);
            k = -1;
            break;
        }
    }
    if (k == 0) {
        for (size_t i = 0; i < s->nfailures; i++)   /* a repeated key: the last wins */
            rp_failure_clear(&s->failures[i]);
        al_free(s->failures, s->nfailures * sizeof *s->failures, AL_K_REPORT);
        s->failures = NULL;
        s->nfailures = 0;
        void *v = NULL;   /* set on success; gcc -O3 cannot see it */
        if (vec_take(j, &x, &v, &s->nfailures) == 0) {
            s->failures = v;
            return 0;
        }
    }
    for (size_t i = 0; i < x.n; i++)
        rp_failure_clear(&((rp_failure *)x.v)[i]);
    vec_free(&x);
    return -1;
}

static int read_checkpoints(rp_jr *j, rp_scenario *s)
{
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        char key[16], *name = NULL;
        int64_t growth = 0;
        int f2 = 1, k2;
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while ((k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1) {
            int rc;
            if (strcmp(key, "name") == 0)
                rc = get_str(j, &name);
            else if (strcmp(key, "growth") == 0)
                rc = rp_jr_get_i64(j, &growth, "growth");
            else
                rc = rp_jr_skip(j);
            if (rc != 0) {
                rp_free_str(name);
                return -1;
            }
        }
        if (k2 < 0) {
            rp_free_str(name);
            return -1;
        }
        int rc = rp_scenario_add_checkpoint(s, name ? name : "", growth);
        rp_free_str(name);
        if (rc != 0)
            return rp_jr_oom(j);
    }
    return k < 0 ? -1 : 0;
}

/* One field of a flat object of numbers: a non-negative integer into u, or
 * (u NULL) a number or null into d. */
typedef struct field {
    const char *key;
    uint64_t *u;
    double *d;
} field;

/* An object whose keys in f[0..n) are read as numbers; others are skipped. */
static int read_fields(rp_jr *j, const field *f, size_t n)
{
    char key[32];
    int first = 1, k;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        size_t i = 0;
        while (i < n && strcmp(key, f[i].key) != 0)
            i++;
        int rc = i == n ? rp_jr_skip(j)
               : f[i].u ? rp_jr_get_u64(j, f[i].u, f[i].key)
                        : get_double(j, f[i].d);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

/* [a, b, c] (rp_json.c's triple); what follows the third is skipped. */
static int get_triple(rp_jr *j, uint64_t v[3], const char *what)
{
    int first = 1, k;
    size_t i = 0;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1)
        if ((i < 3 ? rp_jr_get_u64(j, &v[i++], what) : rp_jr_skip(j)) != 0)
            return -1;
    return k < 0 ? -1 : 0;
}

/* One node of "dtree"."nodes" (rp_json.c's dtree); its parent must come
 * before it. */
static int dnode_key(rd *d, const char *key, hp_dnode *n, size_t at)
{
    rp_jr *j = &d->j;
    if (strcmp(key, "parent") == 0) {
        int64_t p = 0;
        if (rp_jr_get_i64(j, &p, "parent") != 0)
            return -1;
        if (p < -1 || (p >= 0 && (uint64_t)p >= at))
            return rp_jr_fail(j, "dtree: node %zu's parent %lld does not come before it", at,
                              (long long)p);
        n->parent = p < 0 ? HP_DT_TOP : (uint32_t)p;
        return 0;
    }
    if (strcmp(key, "kind") == 0)
        return get_kind(j, &n->kind);
    if (strcmp(key, "type") == 0)
        return get_pooled(d, &n->type_name);
    if (strcmp(key, "label") == 0)
        return get_fixed(j, n->label, sizeof n->label);
    if (strcmp(key, "example") == 0)
        return get_fixed(j, n->example, sizeof n->example);
    struct { const char *k; uint64_t *u; } num[] = {
        {"id", &n->first_id}, {"count", &n->count}, {"shallow", &n->shallow},
        {"retained", &n->retained}};
    for (size_t i = 0; i < sizeof num / sizeof *num; i++)
        if (strcmp(key, num[i].k) == 0)
            return rp_jr_get_u64(j, num[i].u, num[i].k);
    if (strcmp(key, "more") == 0) {
        uint64_t v[3] = {0, 0, 0};
        int rc = get_triple(j, v, "more");
        n->more_groups = v[0];
        n->more_count = v[1];
        n->more_retained = v[2];
        return rc;
    }
    int b = 0;
    if (strcmp(key, "expanded") == 0 || strcmp(key, "zombie") == 0) {
        int rc = rp_jr_get_bool(j, &b);
        *(key[0] == 'e' ? &n->expanded : &n->zombie) = (uint8_t)(b != 0);
        return rc;
    }
    return rp_jr_skip(j);
}

static int read_dnodes(rd *d, hp_dtree *t)
{
    rp_jr *j = &d->j;
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 64;
            hp_dnode *nn = al_realloc(t->nodes, t->cap * sizeof *nn, nc * sizeof *nn, AL_K_HEAP,
                                      "rp dtree nodes");
            if (!nn)
                return rp_jr_oom(j);
            t->nodes = nn;
            t->cap = nc;
        }
        hp_dnode *n = &t->nodes[t->n];
        memset(n, 0, sizeof *n);
        n->parent = HP_DT_TOP;
        char key[32];
        int f2 = 1, k2;
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while ((k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1)
            if (dnode_key(d, key, n, t->n) != 0)
                return -1;
        if (k2 < 0)
            return -1;
        if (n->parent != HP_DT_TOP)
            t->nodes[n->parent].nkids++;
        t->n++;
    }
    return k < 0 ? -1 : 0;
}

/* "dtree": null, or {"line", "objects", "groups_seen", "unexpanded",
 * "nodes"} (rp_json.c) into s->dtree. */
static int read_dtree(rd *d, rp_scenario *s)
{
    rp_jr *j = &d->j;
    int nul = rp_jr_is_null(j);
    if (nul)
        return nul < 0 ? -1 : 0;
    char key[32];
    int first = 1, k;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, "line") == 0)
            rc = rp_jr_get_u32(j, &s->dtree_line, "line");
        else if (strcmp(key, "objects") == 0)
            rc = rp_jr_get_u64(j, &s->dtree.objects, "objects");
        else if (strcmp(key, "groups_seen") == 0)
            rc = rp_jr_get_u64(j, &s->dtree.groups_seen, "groups_seen");
        else if (strcmp(key, "unexpanded") == 0)
            rc = rp_jr_get_u64(j, &s->dtree.unexpanded, "unexpanded");
        else if (strcmp(key, "nodes") == 0 && !s->dtree.n)
            rc = read_dnodes(d, &s->dtree);
        else
            rc = rp_jr_skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

/* [first, last, of] into a verdict group's rounds. */
static int get_rounds(rp_jr *j, rp_vgroup *g)
{
    uint64_t v[3] = {0, 0, 0};
    if (get_triple(j, v, "rounds") != 0)
        return -1;
    if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[2] > UINT32_MAX)
        return rp_jr_fail(j, "rounds: out of range");
    g->first_round = (uint32_t)v[0];
    g->last_round = (uint32_t)v[1];
    g->rounds = (uint32_t)v[2];
    return 0;
}

/* A word of one of the verdict's tables: *out, or -1 and a message. */
static int get_word(rp_jr *j, int (*from)(const char *, int *), int *out, const char *what)
{
    if (rp_jr_string(j) != 0)
        return -1;
    return from(j->str, out) == 0 ? 0 : rp_jr_fail(j, "%s: unknown word \"%s\"", what, j->str);
}

static int class_from(const char *w, int *out)
{
    hp_class c = HP_CL_LOST;
    int rc = hp_class_from_word(w, &c);
    if (rc != 0)   /* "class" is written as the class's name */
        for (int k = 0; k < HP_CL_COUNT && rc; k++)
            if (strcmp(w, hp_class_name((hp_class)k)) == 0)
                c = (hp_class)k, rc = 0;
    *out = (int)c;
    return rc;
}

static int cat_from(const char *w, int *out)
{
    fk_category c = FK_CAT_FAKE;
    int rc = fk_category_from_word(w, &c);
    *out = (int)c;
    return rc;
}

static int root_from(const char *w, int *out)
{
    rp_root_kind k = RP_ROOT_PROGRAM;
    int rc = rp_root_kind_from_word(w, &k);
    *out = (int)k;
    return rc;
}

static int mech_from(const char *w, int *out)
{
    rp_mechanism m = RP_MECH_NONE;
    int rc = rp_mechanism_from_word(w, &m);
    *out = (int)m;
    return rc;
}

/* "site": "prog.py:11" into file and line ("?": none). */
static int get_vsite(rp_jr *j, rp_vgroup *g)
{
    char buf[sizeof g->file + 16];
    if (get_fixed(j, buf, sizeof buf) != 0)
        return -1;
    char *colon = strrchr(buf, ':'), *end = NULL;
    unsigned long line = colon && colon[1] ? strtoul(colon + 1, &end, 10) : 0;
    if (end && !*end && line <= UINT32_MAX) {
        *colon = '\0';
        g->line = (uint32_t)line;
    }
    snprintf(g->file, sizeof g->file, "%s", strcmp(buf, "?") == 0 ? "" : buf);
    return 0;
}

static int vgroup_enum(rp_jr *j, const char *key, rp_vgroup *g)
{
    static const struct {
        const char *k;
        int (*from)(const char *, int *);
        size_t off;
    } words[] = {{"class", class_from, offsetof(rp_vgroup, cls)},
                 {"category", cat_from, offsetof(rp_vgroup, cat)},
                 {"root", root_from, offsetof(rp_vgroup, root)},
                 {"mechanism", mech_from, offsetof(rp_vgroup, mech)}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        if (strcmp(key, words[i].k) != 0)
            continue;
        int v = 0, nul = rp_jr_is_null(j);
        if (nul)
            return nul < 0 ? -1 : 0;
        if (get_word(j, words[i].from, &v, key) != 0)
            return -1;
        /* every field of the table is an enum (int-sized) */
        memcpy((char *)g + words[i].off, &v, sizeof v);
        return 0;
    }
    return -2;
}

static int vgroup_key(rp_jr *j, const char *key, rp_vgroup *g)
{
    int rc = vgroup_enum(j, key, g);
    if (rc != -2)
        return rc;
    if (strcmp(key, "site") == 0)
        return get_vsite(j, g);
    if (strcmp(key, "holder") == 0)   /* the program's root, when it is one */
        return get_fixed(j, g->root_name, sizeof g->root_name);
    if (strcmp(key, "path") == 0)
        return get_fixed(j, g->path, sizeof g->path);
    if (strcmp(key, "mark_from") == 0 || strcmp(key, "mark_to") == 0)
        return get_fixed(j, key[5] == 'f' ? g->mark_from : g->mark_to, RP_VMARK_LEN);
    struct { const char *k; uint64_t *u; } num[] = {
        {"count", &g->count}, {"bytes", &g->bytes}, {"retained_bytes", &g->retained},
        {"converter", &g->converter}};
    for (size_t i = 0; i < sizeof num / sizeof *num; i++)
        if (strcmp(key, num[i].k) == 0)
            return rp_jr_get_u64(j, num[i].u, num[i].k);
    if (strcmp(key, "to_sweep") == 0)
        return rp_jr_get_i64(j, &g->to_sweep, "to_sweep");
    if (strcmp(key, "rounds") == 0)
        return get_rounds(j, g);
    if (strcmp(key, "suppressed") == 0) {
        int b = 0;
        rc = rp_jr_get_bool(j, &b);
        g->suppressed = (uint8_t)(b != 0);
        return rc;
    }
    return rp_jr_skip(j);
}

/* "groups": [{"class", "kind", "count", ...}] (rp_vgroup) */
static int read_vgroups(rp_jr *j, rp_verdict *v)
{
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        rp_vgroup g;
        memset(&g, 0, sizeof g);
        char key[32];
        int f2 = 1, k2;
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while ((k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1)
            if (vgroup_key(j, key, &g) != 0)
                return -1;
        if (k2 < 0)
            return -1;
        if (g.root != RP_ROOT_PROGRAM)   /* "holder" named it in words */
            g.root_name[0] = '\0';
        if (rp_verdict_add_group(v, &g) != 0)
            return rp_jr_oom(j);
    }
    return k < 0 ? -1 : 0;
}

/* "fails_on": ["lost", ...] */
static int read_fails_on(rp_jr *j, rp_verdict *v)
{
    int first = 1, k, c;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        if (get_word(j, class_from, &c, "fails_on") != 0)
            return -1;
        v->fails_on |= 1u << c;
    }
    return k < 0 ? -1 : 0;
}

/* {"lost": N, "accumulating": N, "reachable": N, "lingering": N} */
static int read_class_counts(rp_jr *j, uint64_t *out)
{
    char key[32];
    int first = 1, k, c;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1)
        if ((class_from(key, &c) == 0 ? rp_jr_get_u64(j, &out[c], key) : rp_jr_skip(j)) != 0)
            return -1;
    return k < 0 ? -1 : 0;
}

/* "suppressions": [{"rule", "category", "count"}] */
static int read_supps(rp_jr *j, rp_verdict *v)
{
    int first = 1, k;
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        char key[32], rule[64] = "";
        int f2 = 1, k2, cat = 0, rc = 0;
        uint64_t count = 0;
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while (rc == 0 && (k2 = rp_jr_obj_next(j, &f2, key, sizeof key)) == 1)
            rc = strcmp(key, "rule") == 0       ? get_fixed(j, rule, sizeof rule)
                 : strcmp(key, "category") == 0 ? get_word(j, cat_from, &cat, key)
                 : strcmp(key, "count") == 0    ? rp_jr_get_u64(j, &count, key)
                                                : rp_jr_skip(j);
        if (rc != 0 || k2 < 0)
            return -1;
        if (rp_verdict_add_supp(v, rule, (fk_category)cat, count) != 0)
            return rp_jr_oom(j);
    }
    return k < 0 ? -1 : 0;
}

/* "verdict": null, or {"lost": N, ..., "suppressed": N, "text": "...",
 * "groups_total": N, "groups": [...], "line", "fails_on", "bytes",
 * "suppressions"}: the facts (rp_verdict); "text" is theirs, formatted,
 * and is not read. */
static int verdict_key(rp_jr *j, const char *key, rp_verdict *v)
{
    int c;
    if (class_from(key, &c) == 0)
        return rp_jr_get_u64(j, &v->count[c], key);
    if (strcmp(key, "suppressed") == 0)
        return rp_jr_get_u64(j, &v->suppressed, key);
    if (strcmp(key, "groups") == 0 && !v->groups)
        return read_vgroups(j, v);
    if (strcmp(key, "line") == 0)
        return rp_jr_get_u32(j, &v->line, key);
    if (strcmp(key, "program_file") == 0)
        return get_fixed(j, v->at_file, sizeof v->at_file);
    if (strcmp(key, "program_line") == 0)
        return rp_jr_get_u32(j, &v->at_line, key);
    if (strcmp(key, "program_ended") == 0)
        return get_fixed(j, v->ended, sizeof v->ended);
    if (strcmp(key, "fails_on") == 0)
        return read_fails_on(j, v);
    if (strcmp(key, "bytes") == 0)
        return read_class_counts(j, v->bytes);
    if (strcmp(key, "suppressions") == 0 && !v->supp)
        return read_supps(j, v);
    return rp_jr_skip(j);
}

static int read_verdict(rp_jr *j, rp_scenario *s)
{
    char key[32];
    int first = 1, k, nul = rp_jr_is_null(j);
    if (nul)
        return nul < 0 ? -1 : 0;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    rp_verdict_free(s->verdict);
    if (!(s->verdict = rp_verdict_new()))
        return rp_jr_oom(j);
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1)
        if (verdict_key(j, key, s->verdict) != 0)
            return -1;
    return k < 0 ? -1 : 0;
}

/* "not_judged": null, or {"site": "prog.py:12", "why": "..."} */
static int read_not_judged(rp_jr *j, rp_scenario *s)
{
    char key[32];
    int first = 1, k, nul = rp_jr_is_null(j);
    if (nul)
        return nul < 0 ? -1 : 0;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = strcmp(key, "site") == 0 && !s->stop_site  ? get_str(j, &s->stop_site)
                 : strcmp(key, "why") == 0 && !s->stop_why ? get_str(j, &s->stop_why)
                                                           : rp_jr_skip(j);
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!s->stop_site && rp_dup(&s->stop_site, "?") != 0)
        return rp_jr_oom(j);
    return 0;
}

static int read_scenario(rd *d, rp_scenario *s)
{
    rp_jr *j = &d->j;
    char key[32];
    int first = 1, k, have_status = 0;
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = 0;
        if (strcmp(key, "file") == 0) {
            rc = get_str(j, &s->file);
        } else if (strcmp(key, "status") == 0) {
            if ((rc = rp_jr_string(j)) == 0) {
                int found = 0;
                for (int x = RP_PASS; x <= RP_SKIP && !found; x++)
                    if (strcmp(rp_status_name((rp_status)x), j->str) == 0) {
                        s->status = (rp_status)x;
                        found = 1;
                    }
                if (!found)
                    rc = rp_jr_fail(j, "unknown status \"%.40s\"", j->str);
                have_status = 1;
            }
        } else if (strcmp(key, "expectations") == 0) {
            uint64_t p = 0, f = 0;
            const field pf[] = {{"passed", &p, NULL}, {"failed", &f, NULL}};
            rc = read_fields(j, pf, 2);
            if (rc == 0 && (p > UINT32_MAX || f > UINT32_MAX))
                rc = rp_jr_fail(j, "expectations: out of range");
            s->passed = (uint32_t)p;
            s->failed = (uint32_t)f;
        } else if (strcmp(key, "failures") == 0 && !s->failures) {
            rc = read_failures(d, s);
        } else if (strcmp(key, "groups") == 0 && !s->groups && s->retained) {
            rc = read_groups(d, s->retained, s->nretained, &s->groups, &s->ngroups);
        } else if (strcmp(key, "retained_total") == 0) {
            rc = rp_jr_get_u64(j, &s->retained_total, "retained_total");
        } else if (strcmp(key, "retained") == 0 && !s->retained) {
            rc = read_records(d, &s->retained, &s->nretained);
        } else if (strcmp(key, "stats") == 0) {
            const field sf[] = {{"statements", &s->statements, NULL},
                                {"allocations", &s->allocations, NULL},
                                {"peak_bytes", &s->peak_bytes, NULL},
                                {"footprint_bytes", &s->footprint_bytes, NULL},
                                {"leaked_bytes", &s->leaked_bytes, NULL},
                                {"wall_ms", NULL, &s->wall_ms}};
            rc = read_fields(j, sf, sizeof sf / sizeof sf[0]);
        } else if (strcmp(key, "checkpoints") == 0 && !s->checkpoints) {
            rc = read_checkpoints(j, s);
        } else if (strcmp(key, "kinds_live") == 0) {
            rc = read_kinds_live(j, s);
        } else if (strcmp(key, "biggest") == 0 && !s->top) {
            rc = read_biggest(d, &s->top, &s->ntop);
        } else if (strcmp(key, "error") == 0) {
            rc = get_str(j, &s->error);
        } else if (strcmp(key, "verdict") == 0 && !s->verdict) {
            rc = read_verdict(j, s);
        } else if (strcmp(key, "not_judged") == 0 && !s->stop_site) {
            rc = read_not_judged(j, s);
        } else if (strcmp(key, "dtree") == 0 && !s->dtree.nodes) {
            rc = read_dtree(d, s);
        } else if (strcmp(key, "valgrind") == 0) {
            int nul = rp_jr_is_null(j);
            if (nul < 0)
                rc = -1;
            else if (!nul) {
                s->valgrind_checked = 1;
                const field vf[] = {{"definite", &s->valgrind_definite, NULL},
                                    {"indirect", &s->valgrind_indirect, NULL}};
                rc = read_fields(j, vf, 2);
            }
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!s->file || !have_status)
        return rp_jr_fail(j, "a scenario without \"file\" or \"status\"");
    if (rp_scenario_group(s) != 0)   /* what the writer did not keep */
        return rp_jr_oom(j);
    return 0;
}

/* "inject": ["strong-memo", ...] (pooled strings) */
static int read_inject(rd *d, rp_run *run)
{
    rp_jr *j = &d->j;
    int f2 = 1, k2, rc;
    vec x = {NULL, 0, 0, sizeof(const char *)};
    if ((rc = rp_jr_arr_open(j)) == 0) {
        while ((k2 = rp_jr_arr_next(j, &f2)) == 1) {
            const char *s;
            if (get_pooled(d, &s) != 0) {
                k2 = -1;
                break;
            }
            if (!s)
                s = "";
            if (vec_push(j, &x, &s) != 0) {
                k2 = -1;
                break;
            }
        }
        void *v = NULL;
        rc = k2 < 0 || vec_take(j, &x, &v, &run->ninject) != 0 ? -1 : 0;
        run->inject = v;
    }
    vec_free(&x);
    return rc;
}

/* "scenarios": [...], every one read whole or none kept */
static int read_scenarios(rd *d, rp_run *run)
{
    rp_jr *j = &d->j;
    int f2 = 1, k2, rc;
    vec x = {NULL, 0, 0, sizeof(rp_scenario)};
    if ((rc = rp_jr_arr_open(j)) == 0) {
        while ((k2 = rp_jr_arr_next(j, &f2)) == 1) {
            rp_scenario s;
            memset(&s, 0, sizeof s);
            if (read_scenario(d, &s) != 0 || vec_push(j, &x, &s) != 0) {
                rp_scenario_clear(&s);
                k2 = -1;
                break;
            }
        }
        void *v = NULL;
        rc = k2 < 0 || vec_take(j, &x, &v, &run->n) != 0 ? -1 : 0;
        run->scenarios = v;
    }
    for (size_t i = 0; i < x.n; i++)
        rp_scenario_clear(&((rp_scenario *)x.v)[i]);
    vec_free(&x);
    return rc;
}

/* "summary": {"passed", "failed", "skipped", "errors"} */
static int read_summary(rp_jr *j, rp_run *run)
{
    char k3[32];
    int f3 = 1, r3, rc;
    if ((rc = rp_jr_obj_open(j)) != 0)
        return rc;
    const struct { const char *k; uint32_t *v; } counts[] = {
        {"passed", &run->passed}, {"failed", &run->failed}, {"skipped", &run->skipped},
        {"errors", &run->errors}};
    while ((r3 = rp_jr_obj_next(j, &f3, k3, sizeof k3)) == 1) {
        size_t i = 0;
        while (i < sizeof counts / sizeof *counts && strcmp(k3, counts[i].k) != 0)
            i++;
        rc = i < sizeof counts / sizeof *counts ? rp_jr_get_u32(j, counts[i].v, k3)
                                                : rp_jr_skip(j);
        if (rc != 0)
            return -1;
    }
    return r3 < 0 ? -1 : 0;
}

static int read_run(rd *d, rp_run *run)
{
    rp_jr *j = &d->j;
    char key[32];
    int first = 1, k, have_summary = 0, have_scenarios = 0;
    if (rp_jr_peek(j) != '{')
        return rp_jr_fail(j, "not a fakegc JSON report (expected an object)");
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = 0;
        if (strcmp(key, "schema") == 0) {   /* a run report of this version, or none */
            if ((rc = rp_jr_string(j)) == 0 && strcmp(j->str, RP_SCHEMA_REPORT) != 0 &&
                strcmp(j->str, RP_SCHEMA_REPORT_2) != 0)
                return rp_jr_fail(j, "unknown schema \"%.64s\" (this fakegc reads %s run reports)",
                                  j->str, RP_SCHEMA_REPORT);
        } else if (strcmp(key, "tool") == 0) {
            rc = get_pooled(d, &run->tool);
        } else if (strcmp(key, "version") == 0) {
            rc = get_pooled(d, &run->version);
        } else if (strcmp(key, "allocator") == 0) {
            rc = get_pooled(d, &run->allocator);
        } else if (strcmp(key, "compat") == 0) {
            rc = get_pooled(d, &run->compat);
        } else if (strcmp(key, "stopped") == 0) {
            rc = get_pooled(d, &run->stopped);
        } else if (strcmp(key, "inject") == 0 && !run->inject) {
            rc = read_inject(d, run);
        } else if (strcmp(key, "scenarios") == 0 && !have_scenarios) {
            have_scenarios = 1;
            rc = read_scenarios(d, run);
        } else if (strcmp(key, "interrupted") == 0) {
            rc = get_pooled(d, &run->interrupted);
        } else if (strcmp(key, "planned") == 0) {
            uint64_t v = 0;
            rc = rp_jr_get_u64(j, &v, key);
            run->planned = (size_t)v;
        } else if (strcmp(key, "summary") == 0) {
            have_summary = 1;
            rc = read_summary(j, run);
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!have_scenarios)
        return rp_jr_fail(j, "not a fakegc JSON report (no \"scenarios\")");
    if (!have_summary)
        rp_run_count(run);
    if (rp_jr_peek(j) >= 0)
        return rp_jr_fail(j, "trailing characters after the report");
    return 0;
}

void rp_read_pool_free(void *owned) { pool_free(owned); }

void rp_run_free_read(rp_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->n; i++)
        rp_scenario_clear(&run->scenarios[i]);
    if (run->scenarios)
        al_free(run->scenarios, run->n * sizeof *run->scenarios, AL_K_REPORT);
    if (run->inject)
        al_free((void *)run->inject, run->ninject * sizeof *run->inject, AL_K_REPORT);
    pool_free(run->owned);
    memset(run, 0, sizeof *run);
}

int rp_read_json_text(const char *text, size_t len, const char *name, rp_run *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    rd d;
    memset(&d, 0, sizeof d);
    rp_jr_init(&d.j, text, len, name, MAX_DEPTH, err, errlen);
    pool *p = al_malloc(sizeof *p, AL_K_REPORT, "rp_pool");
    int rc = -1;
    if (!p) {
        rp_jr_oom(&d.j);
    } else {
        memset(p, 0, sizeof *p);
        p->index = (ix)IX_INIT(AL_K_REPORT, "rp_pool");
        out->owned = p;
        d.pool = p;
        rc = read_run(&d, out);
    }
    rp_jr_free(&d.j);
    if (d.pbuf)
        al_free(d.pbuf, d.pbuf_cap, AL_K_REPORT);
    if (d.poff)
        al_free(d.poff, d.poff_cap * sizeof *d.poff, AL_K_REPORT);
    if (d.pptr)
        al_free((void *)d.pptr, d.pptr_cap * sizeof *d.pptr, AL_K_REPORT);
    if (rc != 0)
        rp_run_free_read(out);
    return rc;
}

int rp_read_json(const char *path, rp_run *out, char *err, size_t errlen)
{
    char *buf;
    size_t len, cap;
    if (rp_jr_read_file(path, MAX_FILE, AL_K_REPORT, &buf, &len, &cap, err, errlen) != 0)
        return -1;
    int rc = rp_read_json_text(buf, len, path, out, err, errlen);
    al_free(buf, cap, AL_K_REPORT);
    return rc;
}
