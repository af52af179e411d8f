/* al.c - the front functions, their always-on counters, fault injection and
 * the spec parser.
 *
 * The front is the only place that counts: wrappers and base allocators see
 * the calls the front lets through. Single-threaded like the rest of fakegc
 * (--jobs uses processes), so the counters are plain globals.
 */
#include "alloc/al_impl.h"
#include "instrument/in_fail.h"
#include "instrument/in_guard.h"
#include "instrument/in_tracking.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static al_allocator *cur;       /* NULL: al_libc_default() */
static al_stats st;
static uint64_t attempts;       /* allocation attempts since install */
static uint64_t fail_n;         /* 0: no injection */
static uint64_t fail_base;      /* attempts when al_fail_at was called */
static int fail_persistent;
static al_trace_fn trace_fn;    /* al_trace: one call per counted attempt */
static void *trace_arg;

static const char *const kind_names[AL_K_COUNT] = {
    "storage", "object", "memo", "attr", "scenario", "heap", "report", "other",
};

int al_kind_is_model(al_kind k)
{
    return k == AL_K_STORAGE || k == AL_K_OBJECT || k == AL_K_MEMO || k == AL_K_ATTR;
}

const char *al_kind_name(al_kind k)
{
    return (unsigned)k < AL_K_COUNT ? kind_names[k] : "?";
}

static al_allocator *current(void)
{
    return cur ? cur : al_libc_default();
}

void al_install(al_allocator *a)
{
    cur = a;
    memset(&st, 0, sizeof st);
    attempts = 0;
    fail_n = 0;
    fail_base = 0;
    fail_persistent = 0;
}

al_allocator *al_current(void)
{
    return current();
}

void al_fail_at(uint64_t n, int persistent)
{
    fail_n = n;
    fail_base = attempts;
    fail_persistent = persistent != 0;
}

uint64_t al_alloc_count(void)
{
    return attempts;
}

void al_trace(al_trace_fn fn, void *arg)
{
    trace_fn = fn;
    trace_arg = arg;
}

/* Count one allocation attempt; 1 if fault injection says it must fail. */
static int attempt_fails(al_kind kind, const char *site)
{
    attempts++;
    if (trace_fn)
        trace_fn(trace_arg, kind, site);
    if (!fail_n)
        return 0;
    uint64_t i = attempts - fail_base;
    return i == fail_n || (fail_persistent && i > fail_n);
}

static al_kind clamp_kind(al_kind kind)
{
    return (unsigned)kind < AL_K_COUNT ? kind : AL_K_OTHER;
}

static void count_alloc(size_t n, al_kind kind)
{
    st.live_blocks++;
    st.live_bytes += n;
    if (st.live_bytes > st.peak_bytes)
        st.peak_bytes = st.live_bytes;
    st.total_allocs++;
    st.kind_blocks[kind]++;
    st.kind_bytes[kind] += n;
}

static void count_free(size_t n, al_kind kind)
{
    st.live_blocks--;
    st.live_bytes -= n;
    st.total_frees++;
    st.kind_blocks[kind]--;
    st.kind_bytes[kind] -= n;
}

void *al_malloc(size_t n, al_kind kind, const char *site)
{
    kind = clamp_kind(kind);
    if (attempt_fails(kind, site)) {
        st.failed_allocs++;
        return NULL;
    }
    al_allocator *a = current();
    void *p = a->xmalloc(a->ctx, n ? n : 1, kind, site);
    if (!p) {
        st.failed_allocs++;
        return NULL;
    }
    count_alloc(n, kind);
    return p;
}

void *al_calloc(size_t count, size_t n, al_kind kind, const char *site)
{
    size_t total;
    if (__builtin_mul_overflow(count, n, &total)) {
        (void)attempt_fails(clamp_kind(kind), site);
        st.failed_allocs++;
        return NULL;
    }
    void *p = al_malloc(total, kind, site);
    if (p)
        memset(p, 0, total);
    return p;
}

void al_free(void *p, size_t n, al_kind kind)
{
    if (!p)
        return;
    kind = clamp_kind(kind);
    al_allocator *a = current();
    a->xfree(a->ctx, p, n ? n : 1, kind);
    count_free(n, kind);
}

void *al_realloc(void *p, size_t old_n, size_t n, al_kind kind, const char *site)
{
    if (!p)
        return al_malloc(n, kind, site);
    if (n == 0) {
        al_free(p, old_n, kind);
        return NULL;
    }
    kind = clamp_kind(kind);
    if (n > old_n && attempt_fails(kind, site)) {
        st.failed_allocs++;
        return NULL;
    }
    al_allocator *a = current();
    void *q = a->xrealloc(a->ctx, p, old_n ? old_n : 1, n, kind, site);
    if (!q) {
        st.failed_allocs++;
        return NULL;
    }
    st.total_reallocs++;
    st.live_bytes = st.live_bytes - old_n + n;
    st.kind_bytes[kind] = st.kind_bytes[kind] - old_n + n;
    if (st.live_bytes > st.peak_bytes)
        st.peak_bytes = st.live_bytes;
    return q;
}

char *al_strdup(const char *s, al_kind kind, const char *site)
{
    size_t n = strlen(s) + 1;
    char *d = al_malloc(n, kind, site);
    if (d)
        memcpy(d, s, n);
    return d;
}

void al_stats_get(al_stats *out)
{
    *out = st;
}

uint64_t al_live_bytes(void)
{
    return st.live_bytes;
}

uint64_t al_live_blocks(void)
{
    return st.live_blocks;
}

uint64_t al_live_bytes_kind(al_kind k)
{
    return (unsigned)k < AL_K_COUNT ? st.kind_bytes[k] : 0;
}

size_t al_usable_size(const void *p)
{
    al_allocator *a = current();
    return p && a->xsize ? a->xsize(a->ctx, p) : 0;
}

/* ---- building allocators from a spec ---------------------------------- */

static const char names[] =
    "libc, jemalloc, arena, tracking, guard, guard:q=N, fail:N, fail:N+, fail:N:all "
    "(fail counts model allocations; :all every one)";

const char *al_names(void)
{
    return names;
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

int al_create(const char *spec, al_allocator **out, char *err, size_t errlen)
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

void al_destroy(al_allocator *a)
{
    if (a && a == cur)
        al_install(NULL);       /* never leave the front pointing at freed memory */
    while (a) {
        al_allocator *inner = a->inner;
        if (a->xdestroy)
            a->xdestroy(a);
        a = inner;
    }
}

al_allocator *al_wrap_new(const char *wrapper, al_allocator *inner, void *ctx)
{
    size_t n = strlen(wrapper) + 1 + strlen(inner->name) + 1;
    char *name = al_sys_malloc(n);
    if (!name)
        return NULL;
    snprintf(name, n, "%s/%s", wrapper, inner->name);
    al_allocator *a = al_obj_new(name, ctx);
    al_sys_free(name);
    if (a)
        a->inner = inner;
    return a;
}
