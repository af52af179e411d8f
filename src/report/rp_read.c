/* rp_read.c - reading a JSON report back (for `fakegc diff`).
 *
 * A pull parser over the whole text: the schema readers below ask for the
 * value they expect (an object's keys, an array's items, a string, an
 * integer) and skip what they do not know. Nesting is counted on every
 * object and array, and anything deeper than MAX_DEPTH is refused, so no
 * input can exhaust the C stack. Strings that several records share (type
 * names, scenario files of sites) are interned in a pool owned by the run.
 */
#include "report/rp_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

enum { MAX_DEPTH = 64 };
#define MAX_FILE ((size_t)1 << 30)

/* --- the string pool ---------------------------------------------------------- */

typedef struct pchunk {
    struct pchunk *next;
    size_t size, used;
    char data[];
} pchunk;

typedef struct pool {
    pchunk *chunks;
    const char **tab;
    size_t tcap, tn;
} pool;

static size_t phash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)(h ^ (h >> 31));
}

static void pool_free(pool *p)
{
    if (!p)
        return;
    for (pchunk *c = p->chunks, *nx; c; c = nx) {
        nx = c->next;
        al_free(c, sizeof *c + c->size, AL_K_REPORT);
    }
    if (p->tab)
        al_free(p->tab, p->tcap * sizeof *p->tab, AL_K_REPORT);
    al_free(p, sizeof *p, AL_K_REPORT);
}

static const char *pool_intern(pool *p, const char *s)
{
    if (p->tab) {
        for (size_t i = phash(s) & (p->tcap - 1); p->tab[i]; i = (i + 1) & (p->tcap - 1))
            if (strcmp(p->tab[i], s) == 0)
                return p->tab[i];
    }
    if ((p->tn + 1) * 2 > p->tcap) {
        size_t ncap = p->tcap ? p->tcap * 2 : 64;
        const char **nt = al_malloc(ncap * sizeof *nt, AL_K_REPORT, "rp_pool");
        if (!nt)
            return NULL;
        memset(nt, 0, ncap * sizeof *nt);
        for (size_t i = 0; i < p->tcap; i++) {
            if (!p->tab[i])
                continue;
            size_t j = phash(p->tab[i]) & (ncap - 1);
            while (nt[j])
                j = (j + 1) & (ncap - 1);
            nt[j] = p->tab[i];
        }
        if (p->tab)
            al_free(p->tab, p->tcap * sizeof *p->tab, AL_K_REPORT);
        p->tab = nt;
        p->tcap = ncap;
    }
    size_t len = strlen(s) + 1;
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
    char *dst = c->data + c->used;
    memcpy(dst, s, len);
    c->used += len;
    size_t i = phash(s) & (p->tcap - 1);
    while (p->tab[i])
        i = (i + 1) & (p->tcap - 1);
    p->tab[i] = dst;
    p->tn++;
    return dst;
}

/* --- the parser ---------------------------------------------------------------- */

typedef struct jp {
    const char *s, *p, *end;
    const char *name;
    char *err;
    size_t errlen;
    int failed, depth;
    char *tmp; size_t tmp_cap, tmp_len;         /* the last string decoded */
    char *pbuf; size_t pbuf_cap;                /* path strings */
    size_t *poff; size_t poff_cap;
    const char **pptr; size_t pptr_cap;
    pool *pool;
} jp;

__attribute__((format(printf, 2, 3)))
static int jerr(jp *j, const char *fmt, ...)
{
    if (j->failed)
        return -1;
    j->failed = 1;
    size_t line = 1, col = 1;
    for (const char *q = j->s; q < j->p && q < j->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (j->err && j->errlen)
        snprintf(j->err, j->errlen, "%s:%zu:%zu: %s", j->name, line, col, msg);
    return -1;
}

static int oom(jp *j)
{
    er_set(ER_OOM, "out of memory reading a JSON report");
    return jerr(j, "out of memory");
}

static int grow(jp *j, void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *nb = al_realloc(*buf, *cap * elem, ncap * elem, AL_K_REPORT, "rp_read");
    if (!nb)
        return oom(j);
    *buf = nb;
    *cap = ncap;
    return 0;
}

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int peek(jp *j)
{
    ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int expect(jp *j, char c)
{
    if (peek(j) != (unsigned char)c)
        return j->p < j->end ? jerr(j, "expected '%c'", c) : jerr(j, "unexpected end of input");
    j->p++;
    return 0;
}

static int tmp_put(jp *j, const char *bytes, size_t n)
{
    if (grow(j, (void **)&j->tmp, &j->tmp_cap, j->tmp_len + n + 1, 1) != 0)
        return -1;
    memcpy(j->tmp + j->tmp_len, bytes, n);
    j->tmp_len += n;
    j->tmp[j->tmp_len] = '\0';
    return 0;
}

static int hex4(jp *j, uint32_t *out)
{
    if (j->end - j->p < 4)
        return jerr(j, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return jerr(j, "bad hex digit in \\u escape");
    }
    j->p += 4;
    *out = v;
    return 0;
}

/* Decode the string at p into j->tmp (NUL-terminated, j->tmp_len bytes). */
static int string(jp *j)
{
    if (peek(j) != '"')
        return j->p < j->end ? jerr(j, "expected a string") : jerr(j, "unexpected end of input");
    j->p++;
    j->tmp_len = 0;
    if (tmp_put(j, "", 0) != 0)
        return -1;
    for (;;) {
        const char *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
            j->p++;
        if (j->p > run && tmp_put(j, run, (size_t)(j->p - run)) != 0)
            return -1;
        if (j->p >= j->end)
            return jerr(j, "unterminated string");
        char c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c != '\\')
            return jerr(j, "control character in a string");
        j->p++;
        if (j->p >= j->end)
            return jerr(j, "unterminated string");
        char e = *j->p++;
        const char *simple = NULL;
        switch (e) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        case 'u': break;
        default:
            j->p--;
            return jerr(j, "bad escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
        }
        if (simple) {
            if (tmp_put(j, simple, 1) != 0)
                return -1;
            continue;
        }
        uint32_t cp;
        if (hex4(j, &cp) != 0)
            return -1;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
                return jerr(j, "lone surrogate in \\u escape");
            j->p += 2;
            if (hex4(j, &lo) != 0)
                return -1;
            if (lo < 0xDC00 || lo > 0xDFFF)
                return jerr(j, "bad surrogate pair in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return jerr(j, "lone surrogate in \\u escape");
        } else if (cp == 0) {
            return jerr(j, "\\u0000 is not supported");
        }
        char u[4];
        size_t n;
        if (cp < 0x80) {
            u[0] = (char)cp; n = 1;
        } else if (cp < 0x800) {
            u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2;
        } else if (cp < 0x10000) {
            u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
        } else {
            u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
        }
        if (tmp_put(j, u, n) != 0)
            return -1;
    }
}

typedef struct jnum {
    int is_int, neg, fits;   /* fits: magnitude fits in u */
    uint64_t u;
    double d;
} jnum;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int number(jp *j, jnum *out)
{
    ws(j);
    const char *start = j->p, *q = j->p;
    memset(out, 0, sizeof *out);
    out->is_int = 1;
    out->fits = 1;
    if (q < j->end && *q == '-') {
        out->neg = 1;
        q++;
    }
    if (q >= j->end || !is_digit(*q))
        return jerr(j, "expected a number");
    if (*q == '0' && q + 1 < j->end && is_digit(q[1]))
        return jerr(j, "leading zero in a number");
    while (q < j->end && is_digit(*q)) {
        unsigned d = (unsigned)(*q - '0');
        if (out->u > (UINT64_MAX - d) / 10)
            out->fits = 0;
        else
            out->u = out->u * 10 + d;
        q++;
    }
    if (q < j->end && *q == '.') {
        out->is_int = 0;
        q++;
        if (q >= j->end || !is_digit(*q))
            return jerr(j, "digits expected after '.'");
        while (q < j->end && is_digit(*q))
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        out->is_int = 0;
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= j->end || !is_digit(*q))
            return jerr(j, "digits expected in an exponent");
        while (q < j->end && is_digit(*q))
            q++;
    }
    char buf[80];
    size_t len = (size_t)(q - start);
    if (len >= sizeof buf)
        return jerr(j, "number too long");
    memcpy(buf, start, len);
    buf[len] = '\0';
    out->d = strtod(buf, NULL);
    j->p = q;
    return 0;
}

static int literal(jp *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return jerr(j, "unexpected character");
    j->p += n;
    return 0;
}

static int enter(jp *j)
{
    if (++j->depth > MAX_DEPTH)
        return jerr(j, "nesting deeper than %d", MAX_DEPTH);
    return 0;
}

static int skip(jp *j);

static int obj_open(jp *j)
{
    if (peek(j) != '{')
        return j->p < j->end ? jerr(j, "expected an object") : jerr(j, "unexpected end of input");
    if (enter(j) != 0)
        return -1;
    j->p++;
    return 0;
}

/* 1 with the next key in key (cut to cap; "" when cut), 0 at '}', -1. */
static int obj_next(jp *j, int *first, char *key, size_t cap)
{
    int c = peek(j);
    if (*first) {
        *first = 0;
        if (c == '}') {
            j->p++;
            j->depth--;
            return 0;
        }
    } else if (c == ',') {
        j->p++;
    } else if (c == '}') {
        j->p++;
        j->depth--;
        return 0;
    } else {
        return c < 0 ? jerr(j, "unexpected end of input") : jerr(j, "expected ',' or '}'");
    }
    if (string(j) != 0)
        return -1;
    if (j->tmp_len < cap)
        memcpy(key, j->tmp, j->tmp_len + 1);
    else
        key[0] = '\0';
    if (expect(j, ':') != 0)
        return -1;
    return 1;
}

static int arr_open(jp *j)
{
    if (peek(j) != '[')
        return j->p < j->end ? jerr(j, "expected an array") : jerr(j, "unexpected end of input");
    if (enter(j) != 0)
        return -1;
    j->p++;
    return 0;
}

/* 1 when an item follows, 0 at ']', -1. */
static int arr_next(jp *j, int *first)
{
    int c = peek(j);
    if (c == ']') {
        if (!*first && j->p[-1] == ',')
            return jerr(j, "trailing ',' in an array");
        j->p++;
        j->depth--;
        return 0;
    }
    if (*first) {
        *first = 0;
        return c < 0 ? jerr(j, "unexpected end of input") : 1;
    }
    if (c != ',')
        return c < 0 ? jerr(j, "unexpected end of input") : jerr(j, "expected ',' or ']'");
    j->p++;
    if (peek(j) == ']')
        return jerr(j, "trailing ',' in an array");
    return 1;
}

static int skip(jp *j)
{
    int c = peek(j);
    char key[8];
    int first = 1, r;
    switch (c) {
    case '{':
        if (obj_open(j) != 0)
            return -1;
        while ((r = obj_next(j, &first, key, sizeof key)) == 1)
            if (skip(j) != 0)
                return -1;
        return r;
    case '[':
        if (arr_open(j) != 0)
            return -1;
        while ((r = arr_next(j, &first)) == 1)
            if (skip(j) != 0)
                return -1;
        return r;
    case '"':
        return string(j);
    case 't':
        return literal(j, "true");
    case 'f':
        return literal(j, "false");
    case 'n':
        return literal(j, "null");
    case -1:
        return jerr(j, "unexpected end of input");
    default: {
        jnum n;
        return number(j, &n);
    }
    }
}

static int is_null(jp *j)
{
    if (peek(j) == 'n') {
        if (literal(j, "null") != 0)
            return -1;
        return 1;
    }
    return 0;
}

/* --- typed values -------------------------------------------------------------- */

static int get_u64(jp *j, uint64_t *out, const char *what)
{
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    if (!n.is_int || n.neg || !n.fits)
        return jerr(j, "%s: expected a non-negative integer", what);
    *out = n.u;
    return 0;
}

static int get_u32(jp *j, uint32_t *out, const char *what)
{
    uint64_t v;
    if (get_u64(j, &v, what) != 0)
        return -1;
    if (v > UINT32_MAX)
        return jerr(j, "%s: out of range", what);
    *out = (uint32_t)v;
    return 0;
}

static int get_i64(jp *j, int64_t *out, const char *what)
{
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    if (!n.is_int || !n.fits || n.u > (uint64_t)INT64_MAX + n.neg)
        return jerr(j, "%s: expected an integer", what);
    *out = n.neg ? (int64_t)(0 - n.u) : (int64_t)n.u;
    return 0;
}

static int get_double(jp *j, double *out)
{
    int r = is_null(j);
    if (r)
        return r < 0 ? -1 : (*out = 0, 0);
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    *out = n.d;
    return 0;
}

/* A string (owned copy) or null. */
static int get_str(jp *j, char **out)
{
    int r = is_null(j);
    if (r)
        return r < 0 ? -1 : 0;
    if (string(j) != 0)
        return -1;
    char *c;
    if (rp_dup(&c, j->tmp) != 0)
        return oom(j);
    rp_free_str(*out);
    *out = c;
    return 0;
}

static int get_pooled(jp *j, const char **out)
{
    int r = is_null(j);
    if (r)
        return r < 0 ? -1 : (*out = NULL, 0);
    if (string(j) != 0)
        return -1;
    const char *s = pool_intern(j->pool, j->tmp);
    if (!s)
        return oom(j);
    *out = s;
    return 0;
}

/* --- the schema ------------------------------------------------------------------- */

static int read_site(jp *j, obj_site *site)
{
    int r = is_null(j);
    if (r)
        return r < 0 ? -1 : 0;
    if (string(j) != 0)
        return -1;
    char *colon = strrchr(j->tmp, ':');
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
    site->file = pool_intern(j->pool, j->tmp);
    return site->file ? 0 : oom(j);
}

static int read_path(jp *j, hp_retained *r)
{
    if (arr_open(j) != 0)
        return -1;
    size_t n = 0, used = 0;
    int first = 1, k;
    while ((k = arr_next(j, &first)) == 1) {
        if (string(j) != 0)
            return -1;
        if (grow(j, (void **)&j->pbuf, &j->pbuf_cap, used + j->tmp_len + 1, 1) != 0 ||
            grow(j, (void **)&j->poff, &j->poff_cap, n + 1, sizeof *j->poff) != 0)
            return -1;
        memcpy(j->pbuf + used, j->tmp, j->tmp_len + 1);
        j->poff[n++] = used;
        used += j->tmp_len + 1;
    }
    if (k < 0)
        return -1;
    if (grow(j, (void **)&j->pptr, &j->pptr_cap, n + 1, sizeof *j->pptr) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        j->pptr[i] = j->pbuf + j->poff[i];
    if (hp_retained_set_path(r, j->pptr, n) != 0)
        return oom(j);
    return 0;
}

static int read_record(jp *j, hp_retained *r)
{
    char key[32];
    int first = 1, k, have_kind = 0;
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = 0;
        if (strcmp(key, "id") == 0) {
            rc = get_u64(j, &r->id, "id");
        } else if (strcmp(key, "kind") == 0) {
            if ((rc = string(j)) == 0) {
                int found = 0;
                for (int x = 0; x < OBJ_KIND_COUNT && !found; x++)
                    if (strcmp(obj_kind_name((obj_kind)x), j->tmp) == 0) {
                        r->kind = (obj_kind)x;
                        found = 1;
                    }
                if (!found)
                    rc = jerr(j, "unknown kind \"%.40s\"", j->tmp);
                have_kind = 1;
            }
        } else if (strcmp(key, "type") == 0) {
            rc = get_pooled(j, &r->type_name);
        } else if (strcmp(key, "created") == 0) {
            rc = read_site(j, &r->site);
        } else if (strcmp(key, "bytes") == 0) {
            rc = get_u64(j, &r->bytes, "bytes");
        } else if (strcmp(key, "retained_bytes") == 0) {
            rc = get_u64(j, &r->retained_bytes, "retained_bytes");
        } else if (strcmp(key, "reason") == 0) {
            if ((rc = string(j)) == 0) {
                int found = 0;
                for (int x = HP_REACHABLE; x <= HP_PENDING_STORAGE && !found; x++)
                    if (strcmp(hp_reason_name((hp_reason)x), j->tmp) == 0) {
                        r->reason = (hp_reason)x;
                        found = 1;
                    }
                if (!found)
                    rc = jerr(j, "unknown reason \"%.40s\"", j->tmp);
            }
        } else if (strcmp(key, "path") == 0) {
            rc = read_path(j, r);
        } else if (strcmp(key, "describe") == 0) {
            int nul = is_null(j);
            if (nul < 0)
                rc = -1;
            else if (!nul && (rc = string(j)) == 0)
                snprintf(r->describe, sizeof r->describe, "%s", j->tmp);
        } else {
            rc = skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!have_kind)
        return jerr(j, "a retained record without \"kind\"");
    return 0;
}

/* An array of records into an exactly sized AL_K_HEAP array. */
static int read_records(jp *j, hp_retained **out, size_t *nout)
{
    hp_retained *v = NULL;
    size_t n = 0, cap = 0;
    int first = 1, k, rc = -1;
    if (arr_open(j) != 0)
        return -1;
    while ((k = arr_next(j, &first)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            hp_retained *nv = al_realloc(v, cap * sizeof *v, ncap * sizeof *v, AL_K_HEAP,
                                         "rp_read");
            if (!nv) {
                oom(j);
                goto out;
            }
            v = nv;
            cap = ncap;
        }
        memset(&v[n], 0, sizeof v[n]);
        n++;
        if (read_record(j, &v[n - 1]) != 0)
            goto out;
    }
    if (k < 0)
        goto out;
    if (n) {
        *out = al_malloc(n * sizeof **out, AL_K_HEAP, "rp_read");
        if (!*out) {
            oom(j);
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

static int read_failure(jp *j, rp_failure *f)
{
    char key[32];
    int first = 1, k;
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, "line") == 0)
            rc = get_u32(j, &f->line, "line");
        else if (strcmp(key, "col") == 0)
            rc = get_u32(j, &f->col, "col");
        else if (strcmp(key, "text") == 0)
            rc = get_str(j, &f->text);
        else if (strcmp(key, "actual") == 0)
            rc = get_str(j, &f->actual);
        else if (strcmp(key, "message") == 0)
            rc = get_str(j, &f->message);
        else if (strcmp(key, "objects") == 0 && !f->objects)
            rc = read_records(j, &f->objects, &f->nobjects);
        else
            rc = skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

static void failure_free(rp_failure *f)
{
    rp_free_str(f->text);
    rp_free_str(f->actual);
    rp_free_str(f->message);
    hp_retained_free(f->objects, f->nobjects);
    memset(f, 0, sizeof *f);
}

static int read_failures(jp *j, rp_scenario *s)
{
    int first = 1, k;
    if (arr_open(j) != 0)
        return -1;
    while ((k = arr_next(j, &first)) == 1) {
        rp_failure f;
        memset(&f, 0, sizeof f);
        if (read_failure(j, &f) != 0) {
            failure_free(&f);
            return -1;
        }
        rp_failure *nf = al_realloc(s->failures, s->nfailures * sizeof *nf,
                                    (s->nfailures + 1) * sizeof *nf, AL_K_REPORT, "rp_read");
        if (!nf) {
            failure_free(&f);
            return oom(j);
        }
        nf[s->nfailures] = f;
        s->failures = nf;
        s->nfailures++;
    }
    return k < 0 ? -1 : 0;
}

static int read_checkpoints(jp *j, rp_scenario *s)
{
    int first = 1, k;
    if (arr_open(j) != 0)
        return -1;
    while ((k = arr_next(j, &first)) == 1) {
        char key[16], *name = NULL;
        int64_t growth = 0;
        int f2 = 1, k2;
        if (obj_open(j) != 0)
            return -1;
        while ((k2 = obj_next(j, &f2, key, sizeof key)) == 1) {
            int rc;
            if (strcmp(key, "name") == 0)
                rc = get_str(j, &name);
            else if (strcmp(key, "growth") == 0)
                rc = get_i64(j, &growth, "growth");
            else
                rc = skip(j);
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
            return oom(j);
    }
    return k < 0 ? -1 : 0;
}

static int read_pair(jp *j, const char *a, uint64_t *va, const char *b, uint64_t *vb)
{
    char key[32];
    int first = 1, k;
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, a) == 0)
            rc = get_u64(j, va, a);
        else if (strcmp(key, b) == 0)
            rc = get_u64(j, vb, b);
        else
            rc = skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

static int read_stats(jp *j, rp_scenario *s)
{
    char key[32];
    int first = 1, k;
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, "statements") == 0)
            rc = get_u64(j, &s->statements, key);
        else if (strcmp(key, "allocations") == 0)
            rc = get_u64(j, &s->allocations, key);
        else if (strcmp(key, "peak_bytes") == 0)
            rc = get_u64(j, &s->peak_bytes, key);
        else if (strcmp(key, "leaked_bytes") == 0)
            rc = get_u64(j, &s->leaked_bytes, key);
        else if (strcmp(key, "wall_ms") == 0)
            rc = get_double(j, &s->wall_ms);
        else
            rc = skip(j);
        if (rc != 0)
            return -1;
    }
    return k < 0 ? -1 : 0;
}

static int read_scenario(jp *j, rp_scenario *s)
{
    char key[32];
    int first = 1, k, have_status = 0;
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = 0;
        if (strcmp(key, "file") == 0) {
            rc = get_str(j, &s->file);
        } else if (strcmp(key, "status") == 0) {
            if ((rc = string(j)) == 0) {
                int found = 0;
                for (int x = RP_PASS; x <= RP_SKIP && !found; x++)
                    if (strcmp(rp_status_name((rp_status)x), j->tmp) == 0) {
                        s->status = (rp_status)x;
                        found = 1;
                    }
                if (!found)
                    rc = jerr(j, "unknown status \"%.40s\"", j->tmp);
                have_status = 1;
            }
        } else if (strcmp(key, "expectations") == 0) {
            uint64_t p = 0, f = 0;
            rc = read_pair(j, "passed", &p, "failed", &f);
            if (rc == 0 && (p > UINT32_MAX || f > UINT32_MAX))
                rc = jerr(j, "expectations: out of range");
            s->passed = (uint32_t)p;
            s->failed = (uint32_t)f;
        } else if (strcmp(key, "failures") == 0 && !s->failures) {
            rc = read_failures(j, s);
        } else if (strcmp(key, "retained") == 0 && !s->retained) {
            rc = read_records(j, &s->retained, &s->nretained);
        } else if (strcmp(key, "stats") == 0) {
            rc = read_stats(j, s);
        } else if (strcmp(key, "checkpoints") == 0 && !s->checkpoints) {
            rc = read_checkpoints(j, s);
        } else if (strcmp(key, "error") == 0) {
            rc = get_str(j, &s->error);
        } else if (strcmp(key, "valgrind") == 0) {
            int nul = is_null(j);
            if (nul < 0)
                rc = -1;
            else if (!nul) {
                s->valgrind_checked = 1;
                rc = read_pair(j, "definite", &s->valgrind_definite, "indirect",
                               &s->valgrind_indirect);
            }
        } else {
            rc = skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!s->file || !have_status)
        return jerr(j, "a scenario without \"file\" or \"status\"");
    if (hp_group_records(s->retained, s->nretained, &s->groups, &s->ngroups) != 0)
        return oom(j);
    return 0;
}

static int read_run(jp *j, rp_run *run)
{
    char key[32];
    int first = 1, k, have_summary = 0, have_scenarios = 0;
    if (peek(j) != '{')
        return jerr(j, "not a fakegc JSON report (expected an object)");
    if (obj_open(j) != 0)
        return -1;
    while ((k = obj_next(j, &first, key, sizeof key)) == 1) {
        int rc = 0;
        if (strcmp(key, "tool") == 0) {
            rc = get_pooled(j, &run->tool);
        } else if (strcmp(key, "version") == 0) {
            rc = get_pooled(j, &run->version);
        } else if (strcmp(key, "allocator") == 0) {
            rc = get_pooled(j, &run->allocator);
        } else if (strcmp(key, "compat") == 0) {
            rc = get_pooled(j, &run->compat);
        } else if (strcmp(key, "inject") == 0 && !run->inject) {
            int f2 = 1, k2;
            if ((rc = arr_open(j)) == 0) {
                while ((k2 = arr_next(j, &f2)) == 1) {
                    const char *s;
                    if (get_pooled(j, &s) != 0)
                        return -1;
                    const char **ni = al_realloc((void *)run->inject, run->ninject * sizeof *ni,
                                                 (run->ninject + 1) * sizeof *ni, AL_K_REPORT,
                                                 "rp_read");
                    if (!ni)
                        return oom(j);
                    ni[run->ninject++] = s ? s : "";
                    run->inject = ni;
                }
                rc = k2 < 0 ? -1 : 0;
            }
        } else if (strcmp(key, "scenarios") == 0 && !have_scenarios) {
            int f2 = 1, k2;
            have_scenarios = 1;
            if ((rc = arr_open(j)) == 0) {
                while ((k2 = arr_next(j, &f2)) == 1) {
                    rp_scenario s;
                    memset(&s, 0, sizeof s);
                    if (read_scenario(j, &s) != 0) {
                        rp_scenario_clear(&s);
                        return -1;
                    }
                    rp_scenario *ns = al_realloc(run->scenarios, run->n * sizeof *ns,
                                                 (run->n + 1) * sizeof *ns, AL_K_REPORT,
                                                 "rp_read");
                    if (!ns) {
                        rp_scenario_clear(&s);
                        return oom(j);
                    }
                    ns[run->n++] = s;
                    run->scenarios = ns;
                }
                rc = k2 < 0 ? -1 : 0;
            }
        } else if (strcmp(key, "summary") == 0) {
            char k3[32];
            int f3 = 1, r3;
            have_summary = 1;
            if ((rc = obj_open(j)) == 0) {
                while ((r3 = obj_next(j, &f3, k3, sizeof k3)) == 1) {
                    if (strcmp(k3, "passed") == 0)
                        rc = get_u32(j, &run->passed, k3);
                    else if (strcmp(k3, "failed") == 0)
                        rc = get_u32(j, &run->failed, k3);
                    else if (strcmp(k3, "skipped") == 0)
                        rc = get_u32(j, &run->skipped, k3);
                    else
                        rc = skip(j);
                    if (rc != 0)
                        return -1;
                }
                rc = r3 < 0 ? -1 : 0;
            }
        } else {
            rc = skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!have_scenarios)
        return jerr(j, "not a fakegc JSON report (no \"scenarios\")");
    if (!have_summary)
        rp_run_count(run);
    ws(j);
    if (j->p != j->end)
        return jerr(j, "trailing characters after the report");
    return 0;
}

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
    jp j;
    memset(&j, 0, sizeof j);
    j.s = j.p = text;
    j.end = text + len;
    j.name = name ? name : "<json>";
    j.err = err;
    j.errlen = errlen;
    pool *p = al_malloc(sizeof *p, AL_K_REPORT, "rp_pool");
    int rc = -1;
    if (!p) {
        oom(&j);
    } else {
        memset(p, 0, sizeof *p);
        out->owned = p;
        j.pool = p;
        rc = read_run(&j, out);
    }
    if (j.tmp)
        al_free(j.tmp, j.tmp_cap, AL_K_REPORT);
    if (j.pbuf)
        al_free(j.pbuf, j.pbuf_cap, AL_K_REPORT);
    if (j.poff)
        al_free(j.poff, j.poff_cap * sizeof *j.poff, AL_K_REPORT);
    if (j.pptr)
        al_free((void *)j.pptr, j.pptr_cap * sizeof *j.pptr, AL_K_REPORT);
    if (rc != 0)
        rp_run_free_read(out);
    return rc;
}

int rp_read_json(const char *path, rp_run *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > MAX_FILE + 1)
                ncap = MAX_FILE + 1;
            if (ncap == cap) {
                if (err && errlen)
                    snprintf(err, errlen, "%s: larger than 1 GiB", path);
                goto out;
            }
            char *nb = al_realloc(buf, cap, ncap, AL_K_REPORT, "rp_read_file");
            if (!nb) {
                er_set(ER_OOM, "out of memory reading %s", path);
                if (err && errlen)
                    snprintf(err, errlen, "%s: out of memory", path);
                goto out;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: read error", path);
        goto out;
    }
    rc = rp_read_json_text(buf, len, path, out, err, errlen);
out:
    if (buf)
        al_free(buf, cap, AL_K_REPORT);
    fclose(f);
    return rc;
}
