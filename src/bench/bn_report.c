/* bn_report.c - bench results as JSON and text, reading a baseline back,
 * and the baseline comparison. */
#include "bench/bn.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

/* Reference figures quoted in the text report, as the issue ("Benchmarks
 * and the PyTorch 1.13 cross-reference") gives them: PyTorch 1.13
 * from_real_tensor on a 4x4 tensor as measured by the team (semantics.md),
 * and CPython's gc.collect() per object on 1M objects in 2-cycles. Live
 * figures: scripts/xref/bench.py (PyTorch) and scripts/bench-cpython-gc.py
 * (CPython, run by scripts/bench.sh). */
#define REF_PYTORCH_CONVERT_NS 154000.0
#define REF_CPYTHON_GC_NS 257.0

/* ---- writing ------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else
        fprintf(f, "%.3f", v);
}

int bn_write_json(const bn_header *h, const bn_result *r, size_t n, FILE *f)
{
    fputs("{\"tool\":\"fakegc\",\"version\":", f);
    json_str(f, h->version);
    fputs(",\"allocator\":", f);
    json_str(f, h->allocator);
    fputs(",\"sweep\":", f);
    json_str(f, h->sweep);
    fprintf(f, ",\"build\":\"%s\",\"quick\":%s,\"repeats\":%u,\"benchmarks\":[",
            bn_build_kind(), h->quick ? "true" : "false", h->repeats);
    for (size_t i = 0; i < n; i++) {
        const bn_result *b = &r[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        fputs("\"name\":", f);
        json_str(f, b->name);
        if (b->status == BN_OK) {
            fputs(",\"ns_per_op\":", f);
            json_num(f, b->ns_per_op);
            fprintf(f, ",\"ops\":%llu,\"repeats\":%u,\"peak_bytes\":%llu,\"min_ns\":",
                    (unsigned long long)b->ops, b->repeats, (unsigned long long)b->peak_bytes);
            json_num(f, b->min_ns);
            fputs(",\"max_ns\":", f);
            json_num(f, b->max_ns);
            fputs(",\"cpu_ns_per_op\":", f);
            json_num(f, b->cpu_ns_per_op);
        } else {
            fputs(",\"ns_per_op\":null,\"ops\":0,\"repeats\":0,\"peak_bytes\":0,"
                  "\"min_ns\":null,\"max_ns\":null,\"cpu_ns_per_op\":null",
                  f);
        }
        fputs(",\"target_ns\":", f);
        if (b->target_ns > 0)
            json_num(f, b->target_ns);
        else
            fputs("null", f);
        fprintf(f, ",\"available\":%s", b->status == BN_OK ? "true" : "false");
        if (b->status != BN_OK) {
            fputs(",\"message\":", f);
            json_str(f, b->message);
        } else if (b->note[0]) {
            fputs(",\"note\":", f);
            json_str(f, b->note);
        }
        fputc('}', f);
    }
    fputs("\n]}\n", f);
    return ferror(f) ? -1 : 0;
}

/* "12.3", "1.23 k", "4.56 M" for a count; ns as "12.3 ns", "4.56 us". */
static void fmt_ns(char *buf, size_t n, double ns)
{
    if (ns < 1000)
        snprintf(buf, n, "%.1f", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.0f", ns);
    else
        snprintf(buf, n, "%.3g", ns);
}

static void fmt_bytes(char *buf, size_t n, uint64_t b)
{
    if (b < 10240)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else if (b < 10ull << 20)
        snprintf(buf, n, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024));
}

static const bn_result *by_name(const bn_result *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].name && strcmp(r[i].name, name) == 0 && r[i].status == BN_OK)
            return &r[i];
    return NULL;
}

int bn_write_text(const bn_header *h, const bn_result *r, size_t n, FILE *f)
{
    fprintf(f, "fakegc %s bench: allocator %s, sweep %s, %u repeats%s, %s build\n",
            h->version, h->allocator, h->sweep, h->repeats, h->quick ? ", --quick sizes" : "",
            bn_build_kind());
    if (strcmp(bn_build_kind(), "release") != 0)
        fprintf(f, "warning: not a release build; use the `release` preset (-O2 -DNDEBUG)\n");
    fprintf(f, "\n%-22s %9s %9s %9s %9s %11s %11s %7s\n", "benchmark", "ns/op", "min", "max",
            "cpu ns", "ops/repeat", "peak", "target");
    size_t unavailable = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        const bn_result *b = &r[i];
        if (b->status != BN_OK) {
            fprintf(f, "%-22s %s\n", b->name, b->message);
            if (b->status == BN_UNAVAILABLE)
                unavailable++;
            else
                errors++;
            continue;
        }
        char med[32], lo[32], hi[32], cpu[32], peak[32], tgt[32] = "";
        fmt_ns(med, sizeof med, b->ns_per_op);
        fmt_ns(cpu, sizeof cpu, b->cpu_ns_per_op);
        fmt_ns(lo, sizeof lo, b->min_ns);
        fmt_ns(hi, sizeof hi, b->max_ns);
        fmt_bytes(peak, sizeof peak, b->peak_bytes);
        if (b->target_ns > 0)
            snprintf(tgt, sizeof tgt, "<=%.0f", b->target_ns);
        fprintf(f, "%-22s %9s %9s %9s %9s %11llu %11s %7s\n", b->name, med, lo, hi, cpu,
                (unsigned long long)b->ops, peak, tgt);
    }

    for (size_t i = 0; i < n; i++)
        if (r[i].status == BN_OK && r[i].note[0])
            fprintf(f, "note: %s: %s\n", r[i].name, r[i].note);

    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const bn_result *b = &r[i];
        if (b->status != BN_OK || b->target_ns <= 0)
            continue;
        if (!any++)
            fprintf(f, "\ntargets (ns/op):\n");
        fprintf(f, "  %-20s %9.1f  target <= %.0f  %s\n", b->name, b->ns_per_op, b->target_ns,
                b->ns_per_op <= b->target_ns ? "met" : "MISSED");
    }
    const bn_result *miss = by_name(r, n, "convert/miss");
    const bn_result *gc = by_name(r, n, "gc/cycles-1m");
    const bn_result *l1k = by_name(r, n, "weaktable/lookup-1k");
    const bn_result *l1m = by_name(r, n, "weaktable/lookup-1m");
    if (miss || gc || (l1k && l1m))
        fprintf(f, "\nratios:\n");
    if (miss)
        fprintf(f, "  convert/miss vs PyTorch 1.13 from_real_tensor (%.0f ns, team's figure): "
                   "%.0fx faster (target >= 300x)\n",
                REF_PYTORCH_CONVERT_NS, REF_PYTORCH_CONVERT_NS / miss->ns_per_op);
    if (gc)
        fprintf(f, "  gc/cycles-1m vs CPython gc.collect() (%.0f ns/object, the issue's figure; "
                   "scripts/bench.sh measures it live): %.1fx faster (target >= 5x)\n",
                REF_CPYTHON_GC_NS, REF_CPYTHON_GC_NS / gc->ns_per_op);
    if (l1k && l1m)
        fprintf(f, "  weaktable/lookup-1m vs lookup-1k: %.2fx (random order; cache misses at "
                   "1M)\n",
                l1m->ns_per_op / l1k->ns_per_op);
    fprintf(f, "\n%zu benchmarks", n - unavailable - errors);
    if (unavailable)
        fprintf(f, ", %zu not available", unavailable);
    if (errors)
        fprintf(f, ", %zu failed", errors);
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

/* ---- the baseline reader ---------------------------------------------------
 * A small recursive-descent JSON reader that keeps only what the comparison
 * needs: top-level allocator/sweep/quick, and benchmarks[].name/ns_per_op. */

enum { MAX_DEPTH = 32 };

typedef struct jp {
    const char *s, *end, *name;
    char *err;
    size_t errlen;
    int failed;
    bn_baseline *out;
    size_t cap;
} jp;

static int jp_fail(jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int jp_fail(jp *p, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static void ws(jp *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

/* A string into buf (truncated to cap - 1 bytes; \u escapes become '?'
 * outside ASCII). */
static int jstring(jp *p, char *buf, size_t cap)
{
    size_t k = 0;
    if (p->s >= p->end || *p->s != '"')
        return jp_fail(p, "expected a string");
    p->s++;
    while (p->s < p->end && *p->s != '"') {
        unsigned char ch = (unsigned char)*p->s++;
        if (ch < 0x20)
            return jp_fail(p, "control character in a string");
        if (ch == '\\') {
            if (p->s >= p->end)
                break;
            char e = *p->s++;
            switch (e) {
            case '"': case '\\': case '/': ch = (unsigned char)e; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (p->s >= p->end)
                        return jp_fail(p, "unterminated \\u escape");
                    char h = *p->s++;
                    unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                               : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                               : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
                    if (d > 15)
                        return jp_fail(p, "bad \\u escape");
                    v = v * 16 + d;
                }
                ch = v < 0x80 && v >= 0x20 ? (unsigned char)v : (unsigned char)'?';
                break;
            }
            default:
                return jp_fail(p, "bad escape \\%c", e);
            }
        }
        if (buf && k + 1 < cap)
            buf[k++] = (char)ch;
    }
    if (p->s >= p->end)
        return jp_fail(p, "unterminated string");
    p->s++;
    if (buf && cap)
        buf[k] = '\0';
    return 0;
}

static int jnumber(jp *p, double *out)
{
    const char *b = p->s;
    if (p->s < p->end && *p->s == '-')
        p->s++;
    if (p->s >= p->end || *p->s < '0' || *p->s > '9')
        return jp_fail(p, "expected a value");
    while (p->s < p->end && ((*p->s >= '0' && *p->s <= '9') || *p->s == '.' || *p->s == 'e' ||
                             *p->s == 'E' || *p->s == '+' || *p->s == '-'))
        p->s++;
    char tmp[64];
    size_t len = (size_t)(p->s - b);
    if (len >= sizeof tmp)
        return jp_fail(p, "number too long");
    memcpy(tmp, b, len);
    tmp[len] = '\0';
    char *e;
    errno = 0;
    double v = strtod(tmp, &e);
    if (*e || errno == ERANGE)
        return jp_fail(p, "bad number '%s'", tmp);
    *out = v;
    return 0;
}

static int jword(jp *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n) != 0)
        return jp_fail(p, "expected a value");
    p->s += n;
    return 0;
}

typedef enum { R_TOP, R_BENCHES, R_BENCH, R_OTHER } role;

/* A scalar value handed back to the caller of jvalue. */
typedef struct scalar {
    int kind;          /* 0 other, 1 string, 2 number, 3 null, 4 true, 5 false */
    double num;
    char str[64];
} scalar;

/* Parse one value; what it means depends on its role (the top object,
 * the benchmarks array, one benchmark, anything else). */
static int jvalue(jp *p, int depth, role r, scalar *sc);

static int add_entry(jp *p, const char *name, double ns)
{
    bn_baseline *b = p->out;
    if (b->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 32;
        bn_base_entry *ne = al_realloc(b->e, p->cap * sizeof *ne, nc * sizeof *ne, AL_K_OTHER,
                                       "bn_baseline");
        if (!ne) {
            er_set(ER_OOM, "out of memory reading a baseline");
            return jp_fail(p, "out of memory");
        }
        b->e = ne;
        p->cap = nc;
    }
    bn_base_entry *e = &b->e[b->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ns_per_op = ns;
    return 0;
}

static int jobject(jp *p, int depth, role r)
{
    char name[64] = "";
    double ns = -1;
    int have_name = 0, have_ns = 0;
    p->s++;   /* '{' */
    ws(p);
    if (p->s < p->end && *p->s == '}') {
        p->s++;
        goto done;
    }
    for (;;) {
        char key[64];
        ws(p);
        if (jstring(p, key, sizeof key) != 0)
            return -1;
        ws(p);
        if (p->s >= p->end || *p->s != ':')
            return jp_fail(p, "expected ':'");
        p->s++;
        ws(p);
        role sub = R_OTHER;
        if (r == R_TOP && strcmp(key, "benchmarks") == 0)
            sub = R_BENCHES;
        scalar sc;
        if (jvalue(p, depth + 1, sub, &sc) != 0)
            return -1;
        if (r == R_TOP) {
            if (strcmp(key, "allocator") == 0 && sc.kind == 1)
                snprintf(p->out->allocator, sizeof p->out->allocator, "%s", sc.str);
            else if (strcmp(key, "sweep") == 0 && sc.kind == 1)
                snprintf(p->out->sweep, sizeof p->out->sweep, "%.15s", sc.str);
            else if (strcmp(key, "quick") == 0 && (sc.kind == 4 || sc.kind == 5))
                p->out->quick = sc.kind == 4;
            else if (strcmp(key, "benchmarks") == 0 && sub == R_BENCHES && sc.kind != 0)
                return jp_fail(p, "\"benchmarks\" must be an array");
        } else if (r == R_BENCH) {
            if (strcmp(key, "name") == 0) {
                if (sc.kind != 1)
                    return jp_fail(p, "a benchmark's \"name\" must be a string");
                snprintf(name, sizeof name, "%s", sc.str);
                have_name = 1;
            } else if (strcmp(key, "ns_per_op") == 0) {
                if (sc.kind == 2 && sc.num > 0)
                    ns = sc.num;
                else if (sc.kind == 2)
                    return jp_fail(p, "benchmark '%s' has ns_per_op %g (must be > 0)",
                                   name[0] ? name : "?", sc.num);
                else if (sc.kind != 3)
                    return jp_fail(p, "a benchmark's \"ns_per_op\" must be a number or null");
                have_ns = 1;
            }
        }
        ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == '}') {
            p->s++;
            break;
        }
        return jp_fail(p, "expected ',' or '}'");
    }
done:
    if (r == R_BENCH) {
        if (!have_name)
            return jp_fail(p, "a benchmark without a \"name\"");
        if (!have_ns)
            return jp_fail(p, "benchmark '%s' has no \"ns_per_op\"", name);
        return add_entry(p, name, ns);
    }
    return 0;
}

static int jarray(jp *p, int depth, role r)
{
    p->s++;   /* '[' */
    ws(p);
    if (p->s < p->end && *p->s == ']') {
        p->s++;
        return 0;
    }
    for (;;) {
        ws(p);
        scalar sc;
        if (r == R_BENCHES && (p->s >= p->end || *p->s != '{'))
            return jp_fail(p, "\"benchmarks\" must hold objects");
        if (jvalue(p, depth + 1, r == R_BENCHES ? R_BENCH : R_OTHER, &sc) != 0)
            return -1;
        ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == ']') {
            p->s++;
            return 0;
        }
        return jp_fail(p, "expected ',' or ']'");
    }
}

static int jvalue(jp *p, int depth, role r, scalar *sc)
{
    sc->kind = 0;
    if (depth > MAX_DEPTH)
        return jp_fail(p, "nested deeper than %d", MAX_DEPTH);
    ws(p);
    if (p->s >= p->end)
        return jp_fail(p, "unexpected end of input");
    char ch = *p->s;
    if (ch == '{') {
        if (r == R_BENCHES)
            return jp_fail(p, "\"benchmarks\" must be an array");
        return jobject(p, depth, r);
    }
    if (ch == '[') {
        if (r == R_TOP)
            return jp_fail(p, "expected an object at the top");
        return jarray(p, depth, r);
    }
    if (r == R_TOP)
        return jp_fail(p, "expected an object at the top");
    if (ch == '"') {
        sc->kind = 1;
        return jstring(p, sc->str, sizeof sc->str);
    }
    if (ch == 't') {
        sc->kind = 4;
        return jword(p, "true");
    }
    if (ch == 'f') {
        sc->kind = 5;
        return jword(p, "false");
    }
    if (ch == 'n') {
        sc->kind = 3;
        return jword(p, "null");
    }
    sc->kind = 2;
    return jnumber(p, &sc->num);
}

static void where(const char *text, const char *at, unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = text; q < at; q++) {
        if (*q == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)*q & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

int bn_baseline_parse(const char *text, size_t len, const char *name, bn_baseline *out,
                      char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->quick = -1;
    char msg[200] = "";
    jp p = {text, text + len, name, msg, sizeof msg, 0, out, 0};
    scalar sc;
    int rc = jvalue(&p, 0, R_TOP, &sc);
    if (rc == 0) {
        ws(&p);
        if (p.s != p.end)
            rc = jp_fail(&p, "trailing characters after the document");
    }
    if (rc == 0 && out->allocator[0] == '\0' && out->n == 0)
        rc = jp_fail(&p, "not a fakegc bench document (no \"benchmarks\")");
    if (rc != 0) {
        unsigned line, col;
        where(text, p.s, &line, &col);
        if (err && errlen)
            snprintf(err, errlen, "%s:%u:%u: %s", name ? name : "baseline", line, col, msg);
        bn_baseline_free(out);
        out->quick = 0;
        return -1;
    }
    if (out->n < p.cap) {
        /* exact size, so bn_baseline_free knows it */
        bn_base_entry *e = al_realloc(out->e, p.cap * sizeof *e, out->n * sizeof *e,
                                      AL_K_OTHER, "bn_baseline");
        if (out->n == 0) {
            out->e = NULL;
        } else if (e) {
            out->e = e;
        } else {
            /* shrinking never fails; keep the old block if it did */
            er_set(ER_INTERNAL, "shrinking realloc failed");
            bn_baseline_free(out);
            if (err && errlen)
                snprintf(err, errlen, "%s: internal error", name ? name : "baseline");
            return -1;
        }
    }
    return 0;
}

int bn_baseline_read(const char *path, bn_baseline *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            if (nc > (64u << 20)) {
                snprintf(err, errlen, "%s: larger than 64 MiB", path);
                goto fail;
            }
            char *nb = al_realloc(buf, cap, nc, AL_K_OTHER, "bn_baseline_read");
            if (!nb) {
                er_set(ER_OOM, "out of memory reading %s", path);
                snprintf(err, errlen, "%s: out of memory", path);
                goto fail;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    int rc = bn_baseline_parse(buf, n, path, out, err, errlen);
    al_free(buf, cap, AL_K_OTHER);
    return rc;
fail:
    fclose(f);
    al_free(buf, cap, AL_K_OTHER);
    return -1;
}

void bn_baseline_free(bn_baseline *b)
{
    if (b->e)
        al_free(b->e, b->n * sizeof *b->e, AL_K_OTHER);
    b->e = NULL;
    b->n = 0;
}

size_t bn_compare(const bn_result *r, size_t n, const bn_baseline *b, double tolerance_pct,
                  FILE *f)
{
    size_t regressions = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].status != BN_OK)
            continue;
        const bn_base_entry *e = NULL;
        for (size_t k = 0; k < b->n; k++)
            if (strcmp(b->e[k].name, r[i].name) == 0) {
                e = &b->e[k];
                break;
            }
        if (!e || e->ns_per_op <= 0) {
            if (f)
                fprintf(f, "  %-22s %10.1f ns/op  (not in the baseline)\n", r[i].name,
                        r[i].ns_per_op);
            continue;
        }
        double change = (r[i].ns_per_op / e->ns_per_op - 1) * 100;
        int slow = change > tolerance_pct;
        regressions += (size_t)slow;
        if (f)
            fprintf(f, "  %-22s %10.1f ns/op  baseline %10.1f  %+7.1f%%%s\n", r[i].name,
                    r[i].ns_per_op, e->ns_per_op, change,
                    slow ? "  REGRESSION" : "");
    }
    if (f)
        fprintf(f, "baseline: %zu regression%s (tolerance %.0f%%)\n", regressions,
                regressions == 1 ? "" : "s", tolerance_pct);
    return regressions;
}
