/* st_shrink.c - minimizing a failing scenario while it keeps "the same
 * failure" (a failure of the same class: st_run.c).
 *
 * Text: delta debugging (Zeller's ddmin) over top-level statements and
 * blocks, then inside each block (and unwrapping it), then argument
 * simplification of each statement (drop a keyword argument, integers to 2
 * then 1). Expect lines keep their numbers: they are what is checked.
 *
 * Generated lifecycles: ddmin over the actions first; every candidate is
 * re-rendered through the model, so its expectations are recomputed for
 * the actions that remain (a text-level cut would leave stale numbers);
 * then the actions' arguments are simplified the same way; then the text
 * pass above. With check_clean every accepted candidate must also pass
 * with the injected bugs off, so the reproducer shows the bug, not a
 * mismatch of its own making.
 */
#include "stress/st.h"
#include "stress/st_model.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"

/* ---- candidates ---- */

typedef struct shr {
    const st_env *e;
    const char *cls;
    int check_clean;
    st_shrink_stats *stats;
    /* text mode */
    char **lines;
    size_t *lens;
    size_t n;
    uint8_t *keep;
    int32_t *match;          /* block opener -> its end line, else -1 */
    st_text buf;
    int oom;
} shr;

static int accept(shr *s, const char *text)
{
    st_outcome o;
    s->stats->runs++;
    st_run_forked(s->e, "shrink.scn", text, 0, &o);
    if (!st_outcome_has(&o, s->cls))
        return 0;
    if (s->check_clean) {
        s->stats->runs++;
        st_run_forked(s->e, "shrink.scn", text, 1, &o);
        if (o.status != ST_PASS)
            return 0;
    }
    return 1;
}

static const char *build(shr *s)
{
    s->buf.len = 0;
    if (s->buf.p)
        s->buf.p[0] = '\0';
    for (size_t i = 0; i < s->n; i++)
        if (s->keep[i]) {
            if (st_text_add(&s->buf, s->lines[i], s->lens[i]) < 0 ||
                st_text_add(&s->buf, "\n", 1) < 0) {
                s->oom = 1;
                return "";
            }
        }
    return s->buf.p ? s->buf.p : "";
}

static int test(shr *s)
{
    const char *t = build(s);
    return !s->oom && accept(s, t);
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* Does the statement line start with word w? The shrinker edits scenario
 * source, so it reads statement text as the language spells it: a text
 * editor's match, not a fact of a failure read back out of its words (those
 * are typed: st_class_kind). */
static int first_word(const char *line, size_t len, const char *w)
{
    const char *p = skip_ws(line, line + len);
    size_t n = strlen(w);
    return (size_t)(line + len - p) >= n && strncmp(p, w, n) == 0 &&
           ((size_t)(line + len - p) == n || p[n] == ' ' || p[n] == '\t' || p[n] == '#');
}

static int split_lines(shr *s, const char *text)
{
    size_t cap = 64;
    s->lines = al_malloc(cap * sizeof *s->lines, AL_K_SCENARIO, "st shrink lines");
    s->lens = al_malloc(cap * sizeof *s->lens, AL_K_SCENARIO, "st shrink lens");
    if (!s->lines || !s->lens)
        return -1;
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *q = skip_ws(p, p + len);
        if (q < p + len && *q != '#') {
            if (s->n == cap) {
                size_t nc = cap * 2;
                char **nl = al_realloc(s->lines, cap * sizeof *nl, nc * sizeof *nl,
                                       AL_K_SCENARIO, "st shrink lines");
                if (!nl)
                    return -1;
                s->lines = nl;
                size_t *nn = al_realloc(s->lens, cap * sizeof *nn, nc * sizeof *nn,
                                        AL_K_SCENARIO, "st shrink lens");
                if (!nn)
                    return -1;
                s->lens = nn;
                cap = nc;
            }
            char *c = al_malloc(len + 1, AL_K_SCENARIO, "st shrink line");
            if (!c)
                return -1;
            memcpy(c, p, len);
            c[len] = '\0';
            s->lines[s->n] = c;
            s->lens[s->n] = len;
            s->n++;
        }
        p = e ? e + 1 : NULL;
    }
    /* shrink the arrays to exactly n so the free sizes are known */
    size_t n = s->n ? s->n : 1;
    char **nl = al_realloc(s->lines, cap * sizeof *nl, n * sizeof *nl, AL_K_SCENARIO,
                           "st shrink lines");
    size_t *nn = nl ? al_realloc(s->lens, cap * sizeof *nn, n * sizeof *nn, AL_K_SCENARIO,
                                 "st shrink lens")
                    : NULL;
    if (nl)
        s->lines = nl;
    if (nn)
        s->lens = nn;
    if (!nl || !nn)
        return -1;
    s->keep = al_malloc(n, AL_K_SCENARIO, "st shrink keep");
    s->match = al_malloc(n * sizeof *s->match, AL_K_SCENARIO, "st shrink match");
    if (!s->keep || !s->match)
        return -1;
    memset(s->keep, 1, n);
    /* block structure */
    int32_t stack[SC_MAX_NESTING];
    int depth = 0;
    for (size_t i = 0; i < s->n; i++) {
        s->match[i] = -1;
        if (first_word(s->lines[i], s->lens[i], "with") ||
            first_word(s->lines[i], s->lens[i], "repeat")) {
            if (depth < SC_MAX_NESTING)
                stack[depth++] = (int32_t)i;
        } else if (first_word(s->lines[i], s->lens[i], "end") && depth > 0) {
            s->match[stack[--depth]] = (int32_t)i;
        }
    }
    return 0;
}

static void free_lines(shr *s)
{
    size_t n = s->n ? s->n : 1;
    for (size_t i = 0; i < s->n; i++)
        al_free(s->lines[i], s->lens[i] + 1, AL_K_SCENARIO);
    al_free(s->lines, n * sizeof *s->lines, AL_K_SCENARIO);
    al_free(s->lens, n * sizeof *s->lens, AL_K_SCENARIO);
    al_free(s->keep, n, AL_K_SCENARIO);
    al_free(s->match, n * sizeof *s->match, AL_K_SCENARIO);
    st_text_free(&s->buf);
}

/* ---- ddmin over units (line ranges) ---- */

typedef struct unit { int32_t lo, hi; } unit;   /* lines [lo, hi] */

static void set_units(shr *s, const unit *u, size_t from, size_t to, uint8_t v)
{
    for (size_t k = from; k < to; k++)
        for (int32_t i = u[k].lo; i <= u[k].hi; i++)
            s->keep[i] = v;
}

/* Units at one nesting level of [lo, hi]: single statements and whole
 * blocks, among kept lines. Returns the count (u has room for hi-lo+1). */
static size_t level_units(shr *s, int32_t lo, int32_t hi, unit *u)
{
    size_t n = 0;
    for (int32_t i = lo; i <= hi; i++) {
        if (!s->keep[i])
            continue;
        int32_t e = s->match[i] >= 0 ? s->match[i] : i;
        if (first_word(s->lines[i], s->lens[i], "end")) {
            continue;   /* an unmatched end: never removed alone */
        }
        u[n].lo = i;
        u[n].hi = e;
        n++;
        i = e;
    }
    return n;
}

/* Remove as many of u[0..n) as possible (ddmin complements). */
static void ddmin(shr *s, unit *u, size_t n)
{
    size_t gran = 2;
    while (n >= 1 && !s->oom) {
        if (gran > n)
            gran = n;
        size_t chunk = (n + gran - 1) / gran;
        int removed = 0;
        for (size_t start = 0; start < n; start += chunk) {
            size_t end = start + chunk < n ? start + chunk : n;
            set_units(s, u, start, end, 0);
            if (test(s)) {
                memmove(u + start, u + end, (n - end) * sizeof *u);
                n -= end - start;
                removed = 1;
                break;
            }
            set_units(s, u, start, end, 1);
        }
        if (removed) {
            if (gran > 2)
                gran--;
            continue;
        }
        if (gran >= n)
            break;
        gran *= 2;
    }
}

static void shrink_level(shr *s, int32_t lo, int32_t hi, int depth)
{
    if (lo > hi || depth > 8)
        return;
    size_t cap = (size_t)(hi - lo + 1);
    unit *u = al_malloc(cap * sizeof *u, AL_K_SCENARIO, "st shrink units");
    if (!u) {
        s->oom = 1;
        return;
    }
    size_t n = level_units(s, lo, hi, u);
    ddmin(s, u, n);
    n = level_units(s, lo, hi, u);
    for (size_t k = 0; k < n && !s->oom; k++) {
        if (u[k].lo == u[k].hi)
            continue;
        /* a block: try its body without the block, then shrink inside */
        s->keep[u[k].lo] = s->keep[u[k].hi] = 0;
        if (!test(s)) {
            s->keep[u[k].lo] = s->keep[u[k].hi] = 1;
            shrink_level(s, u[k].lo + 1, u[k].hi - 1, depth + 1);
        } else {
            shrink_level(s, u[k].lo + 1, u[k].hi - 1, depth + 1);
        }
    }
    al_free(u, cap * sizeof *u, AL_K_SCENARIO);
}

/* ---- argument simplification ---- */

static int replace_line(shr *s, size_t i, const char *t, size_t len)
{
    char *c = al_malloc(len + 1, AL_K_SCENARIO, "st shrink line");
    if (!c) {
        s->oom = 1;
        return -1;
    }
    memcpy(c, t, len);
    c[len] = '\0';
    al_free(s->lines[i], s->lens[i] + 1, AL_K_SCENARIO);
    s->lines[i] = c;
    s->lens[i] = len;
    return 0;
}

/* Try line i as `cand`; keep it if the failure stays. */
static int try_line(shr *s, size_t i, const char *cand, size_t len)
{
    char *old = s->lines[i];
    size_t olen = s->lens[i];
    s->lines[i] = (char *)cand;
    s->lens[i] = len;
    int ok = test(s);
    s->lines[i] = old;
    s->lens[i] = olen;
    if (ok)
        replace_line(s, i, cand, len);
    return ok;
}

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* End of a value starting at p: the next ',' or ')' at depth 0 outside a
 * string. */
static const char *value_end(const char *p)
{
    int depth = 0, str = 0;
    for (; *p; p++) {
        if (str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                str = 0;
            continue;
        }
        if (*p == '"')
            str = 1;
        else if (*p == '(')
            depth++;
        else if (*p == ')' || *p == ',') {
            if (depth == 0)
                return p;
            if (*p == ')')
                depth--;
        }
    }
    return p;
}

/* Where l's comment starts ('#' outside a string), or l + len: a
 * comment is provenance (`# prog.py:13`), never simplified. */
static const char *code_end(const char *l, size_t len)
{
    int str = 0;
    for (const char *p = l; p < l + len; p++) {
        if (str && *p == '\\' && p + 1 < l + len)
            p++;
        else if (*p == '"')
            str = !str;
        else if (!str && *p == '#')
            return p;
    }
    return l + len;
}

/* Simpler arguments for statement i: keyword arguments dropped, integers
 * to 2 then 1; its comment and an at(FILE, LINE, ...) statement (where the
 * program's lines are) stay as they were. */
static void simplify_line(shr *s, size_t i)
{
    char cand[1024];
    const char *w = skip_ws(s->lines[i], s->lines[i] + s->lens[i]);
    int changed = strncmp(w, "at(", 3) != 0;   /* the source's own words */
    for (int rounds = 0; changed && rounds < 16 && !s->oom; rounds++) {
        changed = 0;
        const char *l = s->lines[i];
        size_t len = s->lens[i];
        const char *end = code_end(l, len);
        if (len >= sizeof cand)
            return;
        /* drop one `, name=value` (a success frees l: stop at once) */
        for (const char *p = l; !changed && p < end; p++) {
            if (p[0] != ',' )
                continue;
            const char *q = p + 1;
            while (*q == ' ')
                q++;
            const char *name = q;
            while (is_ident(*q))
                q++;
            if (q == name || *q != '=' || q[1] == '=')
                continue;
            const char *ve = value_end(q + 1);
            if (ve > end)
                continue;
            size_t a = (size_t)(p - l), b = (size_t)(ve - l);
            memcpy(cand, l, a);
            memcpy(cand + a, l + b, len - b);
            changed = try_line(s, i, cand, len - (b - a));
            if (changed)
                break;
        }
        if (changed)
            continue;
        /* integers to 2, then to 1 (outside strings) */
        int str = 0;
        for (const char *p = l; !changed && p < end; p++) {
            if (*p == '"') {
                str = !str;
                continue;
            }
            if (str || *p < '0' || *p > '9' || (p > l && is_ident(p[-1])))
                continue;
            const char *q = p;
            long v = 0;
            while (*q >= '0' && *q <= '9' && v < 1000000)
                v = v * 10 + (*q++ - '0');
            if (is_ident(*q))
                continue;
            for (long to = 2; to >= 1 && !changed; to--) {
                if (v <= to)
                    continue;
                size_t a = (size_t)(p - l), b = (size_t)(q - l);
                int k = snprintf(cand, sizeof cand, "%.*s%ld%s", (int)a, l, to, l + b);
                if (k > 0 && (size_t)k < sizeof cand)
                    changed = try_line(s, i, cand, (size_t)k);
            }
            if (changed)
                break;
            p = q - 1;
        }
    }
}

/* Does kept line j bind variable name[0..len) (`NAME = ...`)? */
static int binds(const shr *s, size_t j, const char *name, size_t len)
{
    const char *l = skip_ws(s->lines[j], s->lines[j] + s->lens[j]);
    const char *end = s->lines[j] + s->lens[j];
    if ((size_t)(end - l) <= len || memcmp(l, name, len) != 0 || is_ident(l[len]))
        return 0;
    l = skip_ws(l + len, end);
    return l + 1 < end && l[0] == '=' && l[1] != '=';
}

/* Each variable statement i reads (a letter and digits: t3, m0) named as
 * another of its kind bound before it was: the one it named may then have
 * no use left, and the next ddmin drops what made it. */
static void substitute_names(shr *s, size_t i)
{
    char cand[1024];
    const char *l = s->lines[i];
    size_t len = s->lens[i];
    const char *end = code_end(l, len);
    if (len >= sizeof cand)
        return;
    const char *eq = NULL;   /* the target of an assignment is not read */
    for (const char *p = l; p + 1 < end && !eq; p++)
        if (*p == '"' || *p == '(')
            break;
        else if (p[0] == '=' && p[1] != '=' && (p == l || p[-1] != '=') && p[-1] != '!' &&
                 p[-1] != '<' && p[-1] != '>')
            eq = p;
    int str = 0;
    for (const char *p = eq ? eq : l; p < end && !s->oom; p++) {
        if (*p == '"')
            str = !str;
        if (str || (p > l && is_ident(p[-1])) || !strchr("tfmcw", *p) || p[1] < '0' ||
            p[1] > '9')
            continue;
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (is_ident(*q) || *q == '(')
            continue;
        size_t a = (size_t)(p - l), nl = (size_t)(q - p), at = i;
        while (at > 0 && !(s->keep[at - 1] && binds(s, at - 1, p, nl)))
            at--;
        /* older variables only: a newer one could not make the old one's
         * making removable */
        for (size_t j = 0; at > 0 && j < at - 1; j++) {
            if (!s->keep[j] || s->lines[j][0] != *p || binds(s, j, p, nl))
                continue;
            const char *v = s->lines[j];
            size_t vl = 1;
            while (v[vl] >= '0' && v[vl] <= '9')
                vl++;
            if (!binds(s, j, v, vl))
                continue;
            int k = snprintf(cand, sizeof cand, "%.*s%.*s%s", (int)a, l, (int)vl, v, q);
            if (k > 0 && (size_t)k < sizeof cand && try_line(s, i, cand, (size_t)k))
                return;   /* l is freed: one substitution per call */
        }
        p = q - 1;
    }
}

/* `del A` followed by `del B` (the next kept line) as one `del A, B`: one
 * statement fewer when the deaths need no statement boundary between them. */
static void join_dels(shr *s, size_t i)
{
    char cand[1024];
    size_t j = i + 1;
    while (j < s->n && !s->keep[j])
        j++;
    if (j >= s->n || !first_word(s->lines[i], s->lens[i], "del") ||
        !first_word(s->lines[j], s->lens[j], "del"))
        return;
    const char *a = s->lines[i], *ae = code_end(a, s->lens[i]);
    const char *b = s->lines[j], *be = code_end(b, s->lens[j]);
    while (ae > a && ae[-1] == ' ')
        ae--;
    b = skip_ws(b, be) + 3;   /* past "del" */
    int k = snprintf(cand, sizeof cand, "%.*s,%.*s", (int)(ae - a), a, (int)(be - b), b);
    if (k <= 0 || (size_t)k >= sizeof cand)
        return;
    s->keep[i] = 0;
    if (!try_line(s, j, cand, (size_t)k))
        s->keep[i] = 1;
}

/* An expectation that only looks (no raises(), conversion, sweep or
 * collection in it): the statement's source text, matched as an editor. */
static int passive_expect(const char *l, size_t len)
{
    if (!first_word(l, len, "expect"))
        return 0;
    return !strstr(l, "raises(") && !strstr(l, ".fake(") && !strstr(l, ".sweep(") &&
           !strstr(l, ".meta(") && !strstr(l, "gc(");
}

/* full: statements and arguments too; otherwise only passive expect lines
 * are removed (without a clean run to compare, anything else could make an
 * expectation stale and fail for a reason of its own). */
static int shrink_lines(shr *s, int full)
{
    if (!test(s))
        return 0;   /* does not fail (any more): leave it */
    if (full) {
        shrink_level(s, 0, (int32_t)s->n - 1, 0);
        for (size_t i = 0; i < s->n && !s->oom; i++)
            if (s->keep[i] && !first_word(s->lines[i], s->lens[i], "expect") &&
                !first_word(s->lines[i], s->lens[i], "end") &&
                !first_word(s->lines[i], s->lens[i], "del"))
                simplify_line(s, i);
        for (size_t i = 0; i < s->n && !s->oom; i++)
            if (s->keep[i] && !first_word(s->lines[i], s->lens[i], "del"))
                substitute_names(s, i);
        for (size_t i = 0; i < s->n && !s->oom; i++)
            if (s->keep[i])
                join_dels(s, i);
        /* a removal may pay off after simplification */
        shrink_level(s, 0, (int32_t)s->n - 1, 0);
    } else {
        for (size_t i = 0; i < s->n && !s->oom; i++) {
            if (!s->keep[i] || !passive_expect(s->lines[i], s->lens[i]))
                continue;
            s->keep[i] = 0;
            if (!test(s))
                s->keep[i] = 1;
        }
    }
    return 1;
}

static int finish(shr *s, st_text *out)
{
    const char *t = build(s);
    if (s->oom)
        return -1;
    out->len = 0;
    if (st_text_add(out, t, strlen(t)) < 0)
        return -1;
    s->stats->after_lines = 0;
    for (size_t i = 0; i < s->n; i++)
        s->stats->after_lines += s->keep[i];
    s->stats->after_statements = st_count_statements(out->p);
    return 0;
}

int st_shrink_text(const st_env *e, const char *text, const char *cls, int check_clean,
                   st_text *out, st_shrink_stats *stats)
{
    shr s;
    memset(&s, 0, sizeof s);
    s.e = e;
    s.cls = cls;
    s.check_clean = check_clean;
    s.stats = stats;
    memset(stats, 0, sizeof *stats);
    int rc = -1;
    if (split_lines(&s, text) == 0) {
        stats->before_lines = s.n;
        shrink_lines(&s, 1);
        rc = finish(&s, out);
    }
    free_lines(&s);
    return rc;
}

/* ---- actions ---- */

typedef struct ashr {
    const st_config *c;
    shr *s;                  /* for accept() and stats */
    st_action *a;            /* working copy */
    size_t n;
    uint8_t *keep;
    st_action *tmp;
    st_text text;
} ashr;

static const char *render_kept(ashr *x, uint32_t **lines, size_t *nlines)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->keep[i])
            x->tmp[k++] = x->a[i];
    x->text.len = 0;
    if (x->text.p)
        x->text.p[0] = '\0';
    if (st_render(x->c, x->tmp, k, &x->text, lines, nlines, NULL) < 0) {
        x->s->oom = 1;
        return NULL;
    }
    return x->text.p ? x->text.p : "";
}

static int atest(ashr *x)
{
    const char *t = render_kept(x, NULL, NULL);
    return t && accept(x->s, t);
}

static void addmin(ashr *x)
{
    /* units: kept action indices */
    size_t *u = al_malloc((x->n ? x->n : 1) * sizeof *u, AL_K_SCENARIO, "st shrink acts");
    if (!u) {
        x->s->oom = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->keep[i])
            u[n++] = i;
    size_t gran = 2;
    while (n >= 1 && !x->s->oom) {
        if (gran > n)
            gran = n;
        size_t chunk = (n + gran - 1) / gran;
        int removed = 0;
        for (size_t start = 0; start < n; start += chunk) {
            size_t end = start + chunk < n ? start + chunk : n;
            for (size_t k = start; k < end; k++)
                x->keep[u[k]] = 0;
            if (atest(x)) {
                memmove(u + start, u + end, (n - end) * sizeof *u);
                n -= end - start;
                removed = 1;
                break;
            }
            for (size_t k = start; k < end; k++)
                x->keep[u[k]] = 1;
        }
        if (removed) {
            if (gran > 2)
                gran--;
            continue;
        }
        if (gran >= n)
            break;
        gran *= 2;
    }
    al_free(u, (x->n ? x->n : 1) * sizeof *u, AL_K_SCENARIO);
}

/* Simpler variants of one action: flags dropped one at a time, integer
 * arguments lowered. */
static void simplify_actions(ashr *x)
{
    for (size_t i = 0; i < x->n && !x->s->oom; i++) {
        if (!x->keep[i])
            continue;
        st_action *a = &x->a[i];
        for (int bit = 0; bit < 7; bit++) {
            uint8_t f = (uint8_t)(1u << bit);
            if (!(a->flags & f))
                continue;
            st_action save = *a;
            a->flags &= (uint8_t)~f;
            if (!atest(x))
                *a = save;
        }
        if (a->sub && (a->op == A_MODE || a->op == A_MCONV)) {   /* default policy */
            st_action save = *a;
            a->sub = 0;
            if (!atest(x))
                *a = save;
        }
        for (int k = 0; k < 6; k++) {
            for (int16_t to = 2; to >= 1; to--) {
                if (a->v[k] <= to)
                    continue;
                st_action save = *a;
                a->v[k] = to;
                if (!atest(x))
                    *a = save;
            }
        }
    }
}

/* The variable class of slot v (t, f, m, c, w: st_model.h). */
static int slot_class(int v)
{
    return v < V_F ? 0 : v < V_M ? 1 : v < V_C ? 2 : v < V_W ? 3 : 4;
}

/* The last kept action before action i that binds slot v, or -1. */
static long bound_at(const ashr *x, size_t i, int v)
{
    for (size_t j = i; j-- > 0;)
        if (x->keep[j] && x->a[j].dst == v)
            return (long)j;
    return -1;
}

/* Operands of action a that name a variable (c.fake(m, t) names its mode
 * in n). */
static int operands(st_action *a, int8_t **op)
{
    int k = 0;
    op[k++] = &a->a;
    op[k++] = &a->b;
    if (a->op == A_CFAKE)
        op[k++] = &a->n;
    return k;
}

/* Every use of slot old's value bound by action at (the kept actions after
 * it, up to its next binding) names v instead. */
static void rename_value(ashr *x, size_t at, int old, int v)
{
    for (size_t j = at + 1; j < x->n; j++) {
        if (!x->keep[j])
            continue;
        int8_t *op[3];
        for (int k = operands(&x->a[j], op); k-- > 0;)
            if (*op[k] == old)
                *op[k] = (int8_t)v;
        if (x->a[j].dst == old)
            break;
    }
}

/* Try the value operand *op of action i names as each older variable of its
 * kind, renamed in all its uses (a later use of the old name alone would no
 * longer be valid): its making may then have no use left, and the next ddmin
 * drops it. save has room for x->n actions. */
static void substitute_operand(ashr *x, size_t i, const int8_t *op, st_action *save)
{
    int old = *op;
    if (old < 0 || old >= NVARS)
        return;
    /* weakref(X) takes any object: a weak ref to another may show it alone */
    int any = x->a[i].op == A_WEAK && op == &x->a[i].a;
    long at = bound_at(x, i, old);
    if (at < 0)
        return;
    memcpy(save, x->a, x->n * sizeof *save);
    for (long j = 0; j < at && !x->s->oom; j++) {
        int v = x->a[j].dst;
        if (!x->keep[j] || v < 0 || v == old || bound_at(x, i, v) != j ||
            (any ? v >= V_W : slot_class(v) != slot_class(old)))
            continue;
        if (any)
            x->a[i].a = (int8_t)v;   /* this use alone: the others need its kind */
        else
            rename_value(x, (size_t)at, old, v);
        if (atest(x))
            return;
        memcpy(x->a, save, x->n * sizeof *save);
    }
}

/* Passes that make actions removable: an assignment whose point was to drop
 * the value its variable held becomes `del VAR`; a value used becomes an
 * older one of its kind. */
static void rewrite_actions(ashr *x)
{
    st_action *save = al_malloc((x->n ? x->n : 1) * sizeof *save, AL_K_SCENARIO,
                                "st shrink rewrite");
    if (!save) {
        x->s->oom = 1;
        return;
    }
    for (size_t i = 0; i < x->n && !x->s->oom; i++) {
        if (!x->keep[i])
            continue;
        st_action *a = &x->a[i];
        if (a->dst >= 0 && a->op != A_DEL && bound_at(x, i, a->dst) >= 0) {
            st_action keep = *a;
            *a = (st_action){.op = A_DEL, .a = keep.dst, .b = -1};
            if (atest(x))
                continue;
            *a = keep;
        }
        int8_t *op[3];
        for (int k = 0, n = operands(a, op); k < n; k++)
            substitute_operand(x, i, op[k], save);
    }
    al_free(save, (x->n ? x->n : 1) * sizeof *save, AL_K_SCENARIO);
}

/* How the actions are rendered for a failure of kind: every check after
 * every action, except for failures the end check or a crash shows by
 * itself; the tensor queries too for a failed tensor query. */
static void render_config(const st_config *c, st_class_kind kind, st_config *cc)
{
    *cc = *c;
    cc->expect_class = NULL;
    cc->expect_all = !(kind == ST_CK_RETAINED || kind == ST_CK_LEAK || kind == ST_CK_CRASH ||
                       kind == ST_CK_FINDING);
    if (kind == ST_CK_EXPECT_TENSOR)
        cc->expect_all = 2;
}

/* Does the rendering of every action show cls? With every check after
 * every action first; then, when that fails with other classes only, with
 * the checks of cls alone (another check that the same divergence breaks
 * first, as live("mode") before unreachable() when a mode is collected one
 * statement late, or an earlier divergence of another kind, would end every
 * candidate with a failure of another class). x->c is left at the first
 * that does; *lines (per text line, its action) and o are that
 * rendering's. 1, 0 (none does) or -1 (OOM). */
static int reproduce(ashr *x, st_config *cc, const char *cls, uint32_t **lines,
                     size_t *nlines, st_outcome *o)
{
    int tries = cc->expect_all ? 2 : 1;
    for (int k = 0; k < tries; k++) {
        cc->expect_class = k ? cls : NULL;
        const char *t = render_kept(x, lines, nlines);
        if (!t)
            return -1;
        x->s->stats->runs++;
        st_run_forked(x->s->e, "shrink.scn", t, 0, o);
        if (st_outcome_has(o, cls))
            return 1;
        if (k + 1 < tries)
            st_lines_free(*lines, *nlines);
    }
    return 0;
}

int st_shrink_script(const st_config *c, const st_env *e, const st_script *sc,
                     const char *orig_text, const char *cls, st_class_kind kind,
                     int check_clean, st_text *out, st_shrink_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    shr s;
    memset(&s, 0, sizeof s);
    st_env env = *e;
    /* a broken invariant is pinned to its statement when checked after each */
    if (kind == ST_CK_VERIFY || kind == ST_CK_GUARD)
        env.sc.verify = 1;
    s.e = &env;
    s.cls = cls;
    s.check_clean = check_clean;
    s.stats = stats;
    st_config cc;
    render_config(c, kind, &cc);
    ashr x;
    memset(&x, 0, sizeof x);
    x.c = &cc;
    x.s = &s;
    x.n = sc->n;
    size_t cap = sc->n ? sc->n : 1;
    x.a = al_malloc(cap * sizeof *x.a, AL_K_SCENARIO, "st shrink actions");
    x.tmp = al_malloc(cap * sizeof *x.tmp, AL_K_SCENARIO, "st shrink actions");
    x.keep = al_malloc(cap, AL_K_SCENARIO, "st shrink keep");
    int rc = -1;
    const char *t;
    if (!x.a || !x.tmp || !x.keep)
        goto out;
    memcpy(x.a, sc->a, sc->n * sizeof *x.a);
    memset(x.keep, 1, cap);
    uint32_t *lines = NULL;
    size_t nlines = 0;
    st_outcome o;
    int reproduced = reproduce(&x, &cc, cls, &lines, &nlines, &o);
    if (reproduced < 0)
        goto out;
    stats->before_lines = nlines;
    if (reproduced && o.cls[0][0] && strcmp(o.cls[0], cls) == 0 && o.first_line > 0 &&
        o.first_line <= nlines && lines[o.first_line - 1] != UINT32_MAX) {
        /* cut everything after the action whose line failed first */
        size_t last = lines[o.first_line - 1];
        for (size_t i = last + 1; i < x.n; i++)
            x.keep[i] = 0;
        if (!atest(&x))
            memset(x.keep, 1, cap);
    }
    st_lines_free(lines, nlines);
    if (reproduced) {
        addmin(&x);
        simplify_actions(&x);
        rewrite_actions(&x);
        addmin(&x);
        t = render_kept(&x, NULL, NULL);
        if (!t)
            goto out;
    } else {
        /* the re-rendered lifecycle does not show it: shrink the text as run */
        uint32_t runs = stats->runs;
        if (check_clean) {
            rc = st_shrink_text(&env, orig_text, cls, check_clean, out, stats);
        } else if (split_lines(&s, orig_text) == 0) {
            stats->before_lines = s.n;
            shrink_lines(&s, 0);
            rc = finish(&s, out);
        }
        stats->runs += runs;
        goto out;
    }
    /* the text pass over the rendered reproducer */
    if (split_lines(&s, t) < 0)
        goto out;
    shrink_lines(&s, check_clean);
    rc = finish(&s, out);
out:
    free_lines(&s);
    al_free(x.a, cap * sizeof *x.a, AL_K_SCENARIO);
    al_free(x.tmp, cap * sizeof *x.tmp, AL_K_SCENARIO);
    al_free(x.keep, cap, AL_K_SCENARIO);
    st_text_free(&x.text);
    if (s.oom)
        rc = -1;
    return rc;
}
