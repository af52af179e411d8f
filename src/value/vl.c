/* vl.c - the values of command-line words (vl.h). */
#include "value/vl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vl_u64(const char *s, int sizes, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (sizes && *end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ull << 10; break;
        case 'm': case 'M': mul = 1ull << 20; break;
        case 'g': case 'G': mul = 1ull << 30; break;
        case 't': case 'T': mul = 1ull << 40; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
    }
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

void vl_put_uint(void *p, unsigned size, uint64_t v)
{
    switch (size) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: *(uint16_t *)p = (uint16_t)v; break;
    case 4: *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
    }
}

void vl_number_expected(int sizes, uint64_t lo, uint64_t hi, char *err, size_t n)
{
    if (sizes)
        snprintf(err, n, "expected a size like 1048576, 64M or 1G");
    else if (hi == UINT64_MAX && lo)
        snprintf(err, n, "expected a number >= %llu", (unsigned long long)lo);
    else if (hi == UINT64_MAX)
        snprintf(err, n, "expected a number");
    else
        snprintf(err, n, "expected a number from %llu to %llu", (unsigned long long)lo,
                 (unsigned long long)hi);
}

int vl_word(const char *words, const char *v)
{
    size_t len = strlen(v);
    int i = 0;
    for (const char *p = words; p && *p; i++) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == len && strncmp(p, v, l) == 0)
            return i;
        p += l + (bar != NULL);
    }
    return -1;
}

void vl_words_expected(const char *words, char *err, size_t n)
{
    size_t l = (size_t)snprintf(err, n, "unknown value (expected ");
    for (const char *p = words; *p && l + 3 < n; p++)   /* "a, b", not "a|b" */
        l += (size_t)snprintf(err + l, n - l, *p == '|' ? ", " : "%c", *p);
    snprintf(err + (l < n ? l : n - 1), n - (l < n ? l : n - 1), ")");
}

int vl_option_in(const char *a, const char *const *list)
{
    for (; list && *list; list++) {
        size_t n = strlen(*list);
        if (strncmp(a, *list, n) == 0 && (a[n] == '\0' || a[n] == '='))
            return 1;
    }
    return 0;
}

void vl_append_word(char *buf, size_t n, size_t *len, const char *word)
{
    int plain = *word != '\0';
    for (const char *p = word; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+%@",
                    *p))
            plain = 0;
    int w = snprintf(buf + *len, n - *len, plain ? " %s" : " '%s'", word);
    if (w > 0)
        *len = (size_t)w < n - *len ? *len + (size_t)w : n - 1;
}

/* A double in [lo, hi] (lo itself allowed when open_lo is 0). */
static int real_in(void *at, const char *v, double lo, int open_lo, double hi)
{
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || *end || !(open_lo ? d > lo : d >= lo) || d > hi)
        return -1;
    *(double *)at = d;
    return 0;
}

int vl_seconds(void *at, const char *v, char *err, size_t n)
{
    if (real_in(at, v, 0, 1, 1e9) == 0)
        return 0;
    snprintf(err, n, "expected a positive number");
    return -1;
}

int vl_percent(void *at, const char *v, char *err, size_t n)
{
    if (real_in(at, v, 0, 0, 1e6) == 0)
        return 0;
    snprintf(err, n, "expected a percentage >= 0");
    return -1;
}

int vl_jobs(void *at, const char *v, char *err, size_t n)
{
    uint64_t k;
    if (vl_u64(v, 0, &k) < 0 || k > 1024) {
        snprintf(err, n, "expected a number from 0 to 1024");
        return -1;
    }
    if (k == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        k = cpus > 0 ? (uint64_t)cpus : 1;
    }
    *(int *)at = (int)k;
    return 0;
}

int vl_order_parse(void *at, const char *v, char *err, size_t n)
{
    vl_order o = *(vl_order *)at;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "reverse") == 0)
            o.reverse = 1;
        else if (strcmp(tok, "defer") == 0)
            o.defer = 1;
        else if (strcmp(tok, "reuse") == 0)
            o.reuse = 1;
        else if (strcmp(tok, "weakrefs-late") == 0)
            o.late = 1;
        else if (strcmp(tok, "weakrefs-first") == 0)
            o.late = 0;
        else if (strcmp(tok, "all") == 0)
            o.reverse = o.defer = o.reuse = o.late = 1;
        else if (strcmp(tok, "none") != 0) {
            snprintf(err, n, "unknown knob '%s' (reverse, defer, reuse, weakrefs-first, "
                     "weakrefs-late, all)", tok);
            return -1;
        }
    }
    *(vl_order *)at = o;
    return 0;
}

int vl_shard_parse(void *at, const char *v, char *err, size_t n)
{
    const char *slash = v ? strchr(v, '/') : NULL;
    char k[32];
    size_t len = slash ? (size_t)(slash - v) : 0;
    uint64_t x, y;
    if (len > 0 && len < sizeof k) {
        memcpy(k, v, len);
        k[len] = '\0';
    }
    if (len == 0 || len >= sizeof k || vl_u64(k, 0, &x) < 0 || vl_u64(slash + 1, 0, &y) < 0 ||
        y == 0 || y > 1000000 || x >= y) {
        snprintf(err, n, "expected K/N with 0 <= K < N <= 1000000");
        return -1;
    }
    vl_shard *s = at;
    s->k = (uint32_t)x;
    s->n = (uint32_t)y;
    return 0;
}
