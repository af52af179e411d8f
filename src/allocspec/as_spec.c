/* as_spec.c - allocator specs: split "tracking/guard:q=0/arena" into its
 * layers, build the base (alloc's public wrapping interface) and wrap it
 * outermost-last with instrument's wrappers. The one place that knows both
 * layers' names; neither layer knows this one.
 */
#include "allocspec/as.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al_wrap.h"
#include "instrument/in_fail.h"
#include "instrument/in_guard.h"
#include "instrument/in_tracking.h"

static const char names[] =
    "libc, jemalloc, arena, tracking, guard, guard:q=N, fail:N, fail:N+, fail:N:all "
    "(fail counts model allocations; :all every one)";

const char *as_names(void)
{
    return names;
}

void as_list(FILE *f)
{
    for (const char *p = names; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        while (len && *p == ' ') {
            p++;
            len--;
        }
        if (len)
            fprintf(f, "%.*s\n", (int)len, p);
        p += len;
        if (*p == ',')
            p++;
    }
}

static int fail_msg(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_msg(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Parse a decimal count of at most 19 digits into *out; 0 on success. */
static int parse_count(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

static int is_tok(const char *t, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(t, word, len) == 0;
}

static int is_base(const char *t, size_t len)
{
    return is_tok(t, len, "libc") || is_tok(t, len, "jemalloc") ||
           is_tok(t, len, "arena");
}

static al_allocator *make_base(const char *t, size_t len)
{
    if (is_tok(t, len, "jemalloc"))
        return al_jemalloc_new();
    if (is_tok(t, len, "arena"))
        return al_arena_new();
    return al_libc_new();
}

/* Wrap inner with the wrapper named by token t; on failure inner is left
 * alone and NULL returned with a message in err. */
static al_allocator *make_wrapper(const char *t, size_t len, al_allocator *inner,
                                  char *err, size_t errlen)
{
    al_allocator *w = NULL;
    uint64_t n = 0;
    if (is_tok(t, len, "tracking")) {
        w = in_tracking_new(inner);
    } else if (is_tok(t, len, "guard")) {
        w = in_guard_new(inner, IN_GUARD_DEFAULT_QUARANTINE);
    } else if (len > 8 && memcmp(t, "guard:q=", 8) == 0) {
        if (parse_count(t + 8, len - 8, &n) != 0) {
            fail_msg(err, errlen, "bad quarantine size in '%.*s' (want guard:q=N)",
                     (int)len, t);
            return NULL;
        }
        w = in_guard_new(inner, (size_t)n);
    } else if (len > 5 && memcmp(t, "fail:", 5) == 0) {
        size_t l = len;
        int all = l > 9 && memcmp(t + l - 4, ":all", 4) == 0;
        if (all)
            l -= 4;
        int persistent = t[l - 1] == '+';
        size_t digits = l - 5 - (size_t)persistent;
        if (parse_count(t + 5, digits, &n) != 0 || n == 0) {
            fail_msg(err, errlen, "bad count in '%.*s' (want fail:N, fail:N+, fail:N:all or "
                     "fail:N+:all, N >= 1)", (int)len, t);
            return NULL;
        }
        w = in_fail_new(inner, n, persistent, all);
    } else {
        fail_msg(err, errlen, "unknown allocator '%.*s' (valid: %s)", (int)len, t, names);
        return NULL;
    }
    if (!w)
        fail_msg(err, errlen, "out of memory creating allocator '%.*s'", (int)len, t);
    return w;
}

int as_create(const char *spec, al_allocator **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!spec || !*spec)
        return fail_msg(err, errlen, "empty allocator name (valid: %s)", names);

    /* Split into tokens (outermost first), validating as we go. */
    enum { MAXTOK = 16 };
    const char *tok[MAXTOK];
    size_t tlen[MAXTOK];
    size_t ntok = 0;
    for (const char *s = spec;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        if (len == 0)
            return fail_msg(err, errlen, "empty name in allocator '%s' (valid: %s)",
                            spec, names);
        if (ntok == MAXTOK)
            return fail_msg(err, errlen, "allocator '%s' has too many layers", spec);
        tok[ntok] = s;
        tlen[ntok] = len;
        ntok++;
        if (!slash)
            break;
        s = slash + 1;
    }
    for (size_t i = 0; i + 1 < ntok; i++)
        if (is_base(tok[i], tlen[i]))
            return fail_msg(err, errlen,
                            "base allocator '%.*s' must come last in '%s' (valid: %s)",
                            (int)tlen[i], tok[i], spec, names);

    size_t nwrap = ntok;
    const char *base = "libc";
    size_t blen = 4;
    if (is_base(tok[ntok - 1], tlen[ntok - 1])) {
        nwrap = ntok - 1;
        base = tok[ntok - 1];
        blen = tlen[ntok - 1];
    }
    al_allocator *a = make_base(base, blen);
    if (!a)
        return fail_msg(err, errlen, "cannot create allocator '%.*s'", (int)blen, base);
    for (size_t i = nwrap; i-- > 0;) {
        al_allocator *w = make_wrapper(tok[i], tlen[i], a, err, errlen);
        if (!w) {
            al_destroy(a);
            return -1;
        }
        a = w;
    }
    *out = a;
    return 0;
}

