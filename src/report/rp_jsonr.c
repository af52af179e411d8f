/* rp_jsonr.c - the JSON pull parser (see rp_jsonr.h).
 *
 * A cursor over the whole text. Containers only count their depth; the
 * caller drives the walk, and rp_jr_skip walks the values nobody asked for
 * (recursively, bounded by the clamped depth limit). Decoded strings go to
 * one growing buffer that the next string overwrites. The line and column
 * of a failure are counted only when one happens.
 */
#include "report/rp_jsonr.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"

void rp_jr_init(rp_jr *j, const char *text, size_t len, const char *name, int max_depth,
                char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->s = j->p = text;
    j->end = text + len;
    j->name = name ? name : "<json>";
    j->err = err;
    j->errlen = errlen;
    j->max_depth = max_depth < 1 ? 1 : max_depth > RP_JR_MAX_DEPTH ? RP_JR_MAX_DEPTH : max_depth;
    j->deep_msg = "nesting deeper than";
}

void rp_jr_free(rp_jr *j)
{
    if (j->str)
        al_free(j->str, j->str_cap, AL_K_REPORT);
    j->str = NULL;
    j->str_len = j->str_cap = 0;
    if (j->kh)
        al_free(j->kh, j->kh_cap * sizeof *j->kh, AL_K_REPORT);
    j->kh = NULL;
    j->kh_n = j->kh_cap = j->kh_base = 0;
}

int rp_jr_fail(rp_jr *j, const char *fmt, ...)
{
    if (j->failed)
        return -1;
    j->failed = 1;
    size_t line = 1, col = 1;
    for (const char *q = j->s; q < j->p && q < j->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)*q & 0xC0) != 0x80) {
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

int rp_jr_oom(rp_jr *j)
{
    er_set(ER_OOM, "out of memory reading %s", j->name);
    return rp_jr_fail(j, "out of memory");
}

void rp_jr_ws(rp_jr *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

int rp_jr_peek(rp_jr *j)
{
    rp_jr_ws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

/* Fail with what at the cursor, or "unexpected end of input" there. */
static int want(rp_jr *j, const char *what)
{
    return j->p < j->end ? rp_jr_fail(j, "%s", what) : rp_jr_fail(j, "unexpected end of input");
}

/* --- strings -------------------------------------------------------------------------- */

static int put(rp_jr *j, const char *bytes, size_t n)
{
    if (al_reserve(&j->str, &j->str_cap, j->str_len + n + 1, 1, 64, AL_K_REPORT, "rp_jsonr") != 0)
        return rp_jr_oom(j);
    memcpy(j->str + j->str_len, bytes, n);
    j->str_len += n;
    j->str[j->str_len] = '\0';
    return 0;
}

static int hex4(rp_jr *j, uint32_t *out)
{
    if (j->end - j->p < 4)
        return rp_jr_fail(j, "truncated \\u escape");
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
            return rp_jr_fail(j, "bad hex digit in \\u escape");
    }
    j->p += 4;
    *out = v;
    return 0;
}

/* The code point of a \u escape (the "\u" consumed) as UTF-8. */
static int unicode(rp_jr *j)
{
    uint32_t cp;
    if (hex4(j, &cp) != 0)
        return -1;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t lo;
        if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
            return rp_jr_fail(j, "lone surrogate in \\u escape");
        j->p += 2;
        if (hex4(j, &lo) != 0)
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return rp_jr_fail(j, "bad surrogate pair in \\u escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return rp_jr_fail(j, "lone surrogate in \\u escape");
    } else if (cp == 0) {
        return rp_jr_fail(j, "\\u0000 is not supported");
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
    return put(j, u, n);
}

int rp_jr_string(rp_jr *j)
{
    if (rp_jr_peek(j) != '"')
        return want(j, "expected a string");
    j->p++;
    j->str_len = 0;
    if (put(j, "", 0) != 0)
        return -1;
    for (;;) {
        const char *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
            j->p++;
        if (j->p > run && put(j, run, (size_t)(j->p - run)) != 0)
            return -1;
        if (j->p >= j->end)
            return rp_jr_fail(j, "unterminated string");
        char c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c != '\\')
            return rp_jr_fail(j, "control character in a string");
        j->p++;
        if (j->p >= j->end)
            return rp_jr_fail(j, "unterminated string");
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
            return rp_jr_fail(j, "bad escape '\\%c'", e >= 0x20 && e < 0x7f ? e : '?');
        }
        if ((simple ? put(j, simple, 1) : unicode(j)) != 0)
            return -1;
    }
}

/* --- numbers and literals ------------------------------------------------------------- */

typedef struct jnum {
    int is_int, neg, fits;   /* fits: the magnitude fits in u */
    uint64_t u;
    double d;
} jnum;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int number(rp_jr *j, jnum *out)
{
    rp_jr_ws(j);
    const char *start = j->p, *q = j->p;
    memset(out, 0, sizeof *out);
    out->is_int = 1;
    out->fits = 1;
    if (q < j->end && *q == '-') {
        out->neg = 1;
        q++;
    }
    if (q >= j->end || !is_digit(*q))
        return rp_jr_fail(j, "expected a number");
    if (*q == '0' && q + 1 < j->end && is_digit(q[1]))
        return rp_jr_fail(j, "leading zero in a number");
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
            return rp_jr_fail(j, "digits expected after '.'");
        while (q < j->end && is_digit(*q))
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        out->is_int = 0;
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= j->end || !is_digit(*q))
            return rp_jr_fail(j, "digits expected in an exponent");
        while (q < j->end && is_digit(*q))
            q++;
    }
    char buf[80];
    size_t len = (size_t)(q - start);
    if (len >= sizeof buf)
        return rp_jr_fail(j, "number too long");
    memcpy(buf, start, len);
    buf[len] = '\0';
    out->d = strtod(buf, NULL);
    j->p = q;
    return 0;
}

static int literal(rp_jr *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return rp_jr_fail(j, "unexpected character, expected a value");
    j->p += n;
    return 0;
}

int rp_jr_get_u64(rp_jr *j, uint64_t *out, const char *what)
{
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    if (!n.is_int || n.neg || !n.fits)
        return rp_jr_fail(j, "%s: expected a non-negative integer", what);
    *out = n.u;
    return 0;
}

int rp_jr_get_u32(rp_jr *j, uint32_t *out, const char *what)
{
    uint64_t v = 0;   /* set on success; gcc -O3 cannot see it */
    if (rp_jr_get_u64(j, &v, what) != 0)
        return -1;
    if (v > UINT32_MAX)
        return rp_jr_fail(j, "%s: out of range", what);
    *out = (uint32_t)v;
    return 0;
}

int rp_jr_get_i64(rp_jr *j, int64_t *out, const char *what)
{
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    if (!n.is_int || !n.fits || n.u > (uint64_t)INT64_MAX + n.neg)
        return rp_jr_fail(j, "%s: expected an integer", what);
    *out = n.neg ? (int64_t)(0 - n.u) : (int64_t)n.u;
    return 0;
}

int rp_jr_get_double(rp_jr *j, double *out)
{
    jnum n;
    if (number(j, &n) != 0)
        return -1;
    *out = n.d;
    return 0;
}

int rp_jr_get_bool(rp_jr *j, int *out)
{
    int c = rp_jr_peek(j);
    if (c != 't' && c != 'f')
        return want(j, "expected true or false");
    if (literal(j, c == 't' ? "true" : "false") != 0)
        return -1;
    *out = c == 't';
    return 0;
}

int rp_jr_is_null(rp_jr *j)
{
    if (rp_jr_peek(j) != 'n')
        return 0;
    return literal(j, "null") != 0 ? -1 : 1;
}

/* --- containers ----------------------------------------------------------------------- */

/* Step into the container at the cursor. */
static int enter(rp_jr *j)
{
    if (++j->depth > j->max_depth)
        return rp_jr_fail(j, "%s %d", j->deep_msg, j->max_depth);
    j->p++;
    return 0;
}

/* ---- duplicate keys: the hashes of the open objects' keys ---- */

static int kh_push(rp_jr *j, uint64_t v)
{
    if (al_grow(&j->kh, &j->kh_cap, j->kh_n, sizeof *j->kh, 64, AL_K_REPORT, "rp_jr keys") < 0)
        return rp_jr_oom(j);
    j->kh[j->kh_n++] = v;
    return 0;
}

/* The key just decoded (j->str): refused when the object has it already. */
static int key_add(rp_jr *j)
{
    uint64_t h = ix_hash_mem(j->str, j->str_len);
    size_t n = j->kh_n - j->kh_base;
    for (size_t i = 0; n < RP_JR_KEYS_LINEAR && i < n; i++)
        if (j->kh[j->kh_base + i] == h)
            return rp_jr_fail(j, "duplicate key \"%.64s\"", j->str);
    return kh_push(j, h);
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The object closes: the keys past the linear check, sorted; then its
 * hashes go. */
static int keys_close(rp_jr *j)
{
    uint64_t *v = j->kh + j->kh_base;
    size_t n = j->kh_n - j->kh_base;
    if (n > RP_JR_KEYS_LINEAR) {
        qsort(v, n, sizeof *v, by_u64);
        for (size_t i = 1; i < n; i++)
            if (v[i] == v[i - 1])
                return rp_jr_fail(j, "duplicate key in the object that ends here");
    }
    j->kh_n = j->kh_base - 1;
    j->kh_base = (size_t)j->kh[j->kh_n];
    return 0;
}

int rp_jr_obj_open(rp_jr *j)
{
    if (rp_jr_peek(j) != '{')
        return want(j, "expected an object");
    if (enter(j) != 0 || kh_push(j, j->kh_base) != 0)
        return -1;
    j->kh_base = j->kh_n;
    return 0;
}

int rp_jr_obj_next(rp_jr *j, int *first, char *key, size_t cap)
{
    int c = rp_jr_peek(j);
    if (c == '}' || (!*first && c != ',')) {
        if (c != '}')
            return c < 0 ? rp_jr_fail(j, "unexpected end of input")
                         : rp_jr_fail(j, "expected ',' or '}'");
        if (keys_close(j) != 0)
            return -1;
        j->p++;
        j->depth--;
        *first = 0;
        return 0;
    }
    if (!*first)
        j->p++;   /* ',' */
    *first = 0;
    if (rp_jr_string(j) != 0 || key_add(j) != 0)
        return -1;
    if (j->str_len < cap)
        memcpy(key, j->str, j->str_len + 1);
    else if (cap)
        key[0] = '\0';
    if (rp_jr_peek(j) != ':')
        return want(j, "expected ':'");
    j->p++;
    return 1;
}

int rp_jr_arr_open(rp_jr *j)
{
    if (rp_jr_peek(j) != '[')
        return want(j, "expected an array");
    return enter(j);
}

int rp_jr_arr_next(rp_jr *j, int *first)
{
    int c = rp_jr_peek(j);
    if (c == ']') {
        if (!*first && j->p[-1] == ',')
            return rp_jr_fail(j, "trailing ',' in an array");
        j->p++;
        j->depth--;
        return 0;
    }
    if (*first) {
        *first = 0;
        return c < 0 ? rp_jr_fail(j, "unexpected end of input") : 1;
    }
    if (c != ',')
        return c < 0 ? rp_jr_fail(j, "unexpected end of input")
                     : rp_jr_fail(j, "expected ',' or ']'");
    j->p++;
    if (rp_jr_peek(j) == ']')
        return rp_jr_fail(j, "trailing ',' in an array");
    return 1;
}

int rp_jr_skip(rp_jr *j)
{
    int c = rp_jr_peek(j);
    char key[8];
    int first = 1, r;
    switch (c) {
    case '{':
        if (rp_jr_obj_open(j) != 0)
            return -1;
        while ((r = rp_jr_obj_next(j, &first, key, sizeof key)) == 1)
            if (rp_jr_skip(j) != 0)
                return -1;
        return r;
    case '[':
        if (rp_jr_arr_open(j) != 0)
            return -1;
        while ((r = rp_jr_arr_next(j, &first)) == 1)
            if (rp_jr_skip(j) != 0)
                return -1;
        return r;
    case '"':
        return rp_jr_string(j);
    case 't':
        return literal(j, "true");
    case 'f':
        return literal(j, "false");
    case 'n':
        return literal(j, "null");
    case -1:
        return rp_jr_fail(j, "unexpected end of input");
    default: {
        jnum n;
        return number(j, &n);
    }
    }
}

int rp_jr_read_file(const char *path, size_t limit, int kind, char **bufp, size_t *lenp,
                    size_t *capp, char *err, size_t errlen)
{
    *bufp = NULL;
    *lenp = *capp = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    const char *why = NULL;
    /* a regular file is read into one allocation of its size (+1 to see
     * the end): doubling a 1.4 GB report's buffer peaked at twice that */
    struct stat st;
    size_t first = 65536;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        first = (uint64_t)st.st_size >= limit ? limit + 1 : (size_t)st.st_size + 1;
        if ((uint64_t)st.st_size > limit)   /* refused unread */
            why = "too large";
    }
    for (; !why;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : first;
            if (ncap > limit + 1)
                ncap = limit + 1;
            if (ncap == cap) {
                why = "too large";
                break;
            }
            char *nb = al_realloc(buf, cap, ncap, (al_kind)kind, "rp_jr_read_file");
            if (!nb) {
                er_set(ER_OOM, "out of memory reading %s", path);
                why = "out of memory";
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (!why && ferror(f))
        why = "read error";
    fclose(f);
    if (why) {
        if (err && errlen) {
            if (strcmp(why, "too large") == 0)
                snprintf(err, errlen, "%s: larger than %zu MiB, the reader's limit", path,
                         limit >> 20);
            else
                snprintf(err, errlen, "%s: %s", path, why);
        }
        al_free(buf, cap, (al_kind)kind);
        return -1;
    }
    *bufp = buf;
    *lenp = len;
    *capp = cap;
    return 0;
}
