/* bn_report.c - bench results as JSON and text, reading a baseline back,
 * and the baseline comparison. */
#include "bench/bn.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp.h"
#include "report/rp_jsonr.h"
#include "report/rp_jw.h"

/* Reference figures quoted in the text report, as the targets were set:
 * PyTorch 1.13 from_real_tensor on a 4x4 tensor as measured by the team
 * (fakegc-semantics(7)), and CPython's gc.collect() per object on 1M
 * objects in 2-cycles. Live
 * figures: scripts/xref/bench.py (PyTorch) and scripts/bench-cpython-gc.py
 * (CPython, run by scripts/bench.sh). */
#define REF_PYTORCH_CONVERT_NS 154000.0
#define REF_CPYTHON_GC_NS 257.0

/* ---- writing ------------------------------------------------------------- */

/* ns figures with three decimals, null when not measured (v <= 0 where
 * positive says "given") */
static void ns(rp_jw *w, const char *k, double v, int null_unless_positive)
{
    rp_jw_key(w, ",", k);
    if (null_unless_positive && !(v > 0))
        rp_jw_raw(w, "null");
    else
        rp_jw_fixed(w, v, 3);
}

/* each repeat's figure, in the order run */
static void samples_json(rp_jw *w, const char *k, const double *v, uint32_t n)
{
    rp_jw_key(w, ",", k);
    rp_jw_raw(w, "[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            rp_jw_raw(w, ",");
        rp_jw_fixed(w, v[i], 3);
    }
    rp_jw_raw(w, "]");
}

static void bench_json(rp_jw *w, const bn_result *b, size_t i)
{
    rp_jw_key(w, i ? ",\n  {" : "\n  {", "name"); rp_jw_str(w, b->name);
    if (b->status == BN_OK) {
        ns(w, "ns_per_op", b->ns_per_op, 0);
        rp_jw_key(w, ",", "ops"); rp_jw_u64(w, b->ops);
        rp_jw_key(w, ",", "repeats"); rp_jw_u64(w, b->repeats);
        rp_jw_key(w, ",", "peak_bytes"); rp_jw_u64(w, b->peak_bytes);
        ns(w, "min_ns", b->min_ns, 0);
        ns(w, "max_ns", b->max_ns, 0);
        ns(w, "cpu_ns_per_op", b->cpu_ns_per_op, 0);
        samples_json(w, "samples_ns", b->samples, b->nsamples);
        samples_json(w, "cpu_samples_ns", b->cpu_samples, b->nsamples);
    } else {
        rp_jw_raw(w, ",\"ns_per_op\":null,\"ops\":0,\"repeats\":0,\"peak_bytes\":0,"
                     "\"min_ns\":null,\"max_ns\":null,\"cpu_ns_per_op\":null");
    }
    ns(w, "target_ns", b->target_ns, 1);
    rp_jw_key(w, ",", "available"); rp_jw_bool(w, b->status == BN_OK);
    if (b->status != BN_OK) {
        rp_jw_key(w, ",", "message"); rp_jw_str(w, b->message);
    } else if (b->note[0]) {
        rp_jw_key(w, ",", "note"); rp_jw_str(w, b->note);
    }
    rp_jw_raw(w, "}");
}

int bn_write_json(const bn_header *h, const bn_result *r, size_t n, FILE *f)
{
    rp_jw *w = rp_jw_open(f);
    if (!w)
        return -1;
    rp_jw_key(w, "{", "schema"); rp_jw_str(w, RP_SCHEMA_BENCH);
    rp_jw_key(w, ",", "tool"); rp_jw_str(w, "fakegc");
    rp_jw_build(w, ",");   /* version, commit, build_type */
    rp_jw_key(w, ",", "allocator"); rp_jw_str(w, h->allocator);
    rp_jw_key(w, ",", "sweep"); rp_jw_str(w, h->sweep);
    rp_jw_key(w, ",", "build"); rp_jw_str(w, bn_build_kind());
    rp_jw_key(w, ",", "quick"); rp_jw_bool(w, h->quick);
    rp_jw_key(w, ",", "repeats"); rp_jw_u64(w, h->repeats);
    ns(w, "calibration_ns", h->calibration_ns, 1);
    rp_jw_key(w, ",", "host"); rp_jw_str(w, h->host);
    rp_jw_key(w, ",", "cpu"); rp_jw_str(w, h->cpu);
    rp_jw_key(w, ",", "date"); rp_jw_str(w, h->date);
    rp_jw_key(w, ",", "benchmarks"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < n; i++)
        bench_json(w, &r[i], i);
    rp_jw_raw(w, "\n]}\n");
    return rp_jw_close(w);
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

void bn_fmt_bytes(char *buf, size_t n, uint64_t b)
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

void bn_machine(bn_header *h)
{
    if (gethostname(h->host, sizeof h->host) != 0)
        h->host[0] = '\0';
    h->host[sizeof h->host - 1] = '\0';
    h->cpu[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon += 1 + strspn(colon + 1, " \t");
        snprintf(h->cpu, sizeof h->cpu, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    if (f)
        fclose(f);
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(h->date, sizeof h->date, "%Y-%m-%dT%H:%M:%SZ", &tm))
        h->date[0] = '\0';
}

int bn_write_text(const bn_header *h, const bn_result *r, size_t n, FILE *f)
{
    fprintf(f, "fakegc %s bench: allocator %s, sweep %s, %u repeats%s, %s build\n",
            h->version, h->allocator, h->sweep, h->repeats, h->quick ? ", --quick sizes" : "",
            bn_build_kind());
    if (h->host[0] || h->cpu[0])
        fprintf(f, "on %s (%s), %s\n", h->host[0] ? h->host : "?", h->cpu[0] ? h->cpu : "?",
                h->date);
    if (strcmp(bn_build_kind(), "release") != 0)
        fprintf(f, "warning: not a release build; use the `release` preset (-O3 -DNDEBUG)\n");
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
        bn_fmt_bytes(peak, sizeof peak, b->peak_bytes);
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
        fprintf(f, "  gc/cycles-1m vs CPython gc.collect() (%.0f ns/object, the reference figure; "
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
 * Keeps only what the comparison needs: top-level allocator/sweep/quick, and
 * benchmarks[].name/ns_per_op, read with the pull parser of
 * report/rp_jsonr.h (unknown keys are skipped there). */

enum { MAX_DEPTH = 32 };

typedef struct rd {
    rp_jr j;
    bn_baseline *out;
    size_t cap;
} rd;

static int add_entry(rd *d, const bn_base_entry *in)
{
    bn_baseline *b = d->out;
    if (b->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 32;
        bn_base_entry *ne = al_realloc(b->e, d->cap * sizeof *ne, nc * sizeof *ne, AL_K_OTHER,
                                       "bn_baseline");
        if (!ne)
            return rp_jr_oom(&d->j);
        b->e = ne;
        d->cap = nc;
    }
    b->e[b->n++] = *in;
    return 0;
}

/* Skip a value of the wrong kind, then fail with msg after it. */
static int wrong_kind(rp_jr *j, const char *msg)
{
    return rp_jr_skip(j) != 0 ? -1 : rp_jr_fail(j, "%s", msg);
}

/* ns_per_op: a number > 0, or null (kept as < 0 in *ns). */
static int read_ns(rp_jr *j, const char *name, double *ns)
{
    int c = rp_jr_peek(j);
    if (c == 'n')
        return rp_jr_is_null(j) < 0 ? -1 : 0;
    if (c != '-' && (c < '0' || c > '9'))
        return wrong_kind(j, "a benchmark's \"ns_per_op\" must be a number or null");
    double v;
    if (rp_jr_get_double(j, &v) != 0)
        return -1;
    if (!isfinite(v))
        return rp_jr_fail(j, "bad number (out of range)");
    if (v <= 0)
        return rp_jr_fail(j, "benchmark '%s' has ns_per_op %g (must be > 0)",
                          name[0] ? name : "?", v);
    *ns = v;
    return 0;
}

/* An array of ns figures (> 0): the first BN_SAMPLES kept, the rest read. */
static int read_samples(rp_jr *j, const char *name, double *v, uint32_t *n)
{
    int first = 1, k;
    if (rp_jr_peek(j) != '[')
        return wrong_kind(j, "a benchmark's samples must be an array of numbers");
    if (rp_jr_arr_open(j) != 0)
        return -1;
    *n = 0;
    while ((k = rp_jr_arr_next(j, &first)) == 1) {
        double x = -1;
        if (rp_jr_peek(j) == 'n')
            return wrong_kind(j, "a sample must be a number");
        if (read_ns(j, name, &x) != 0)
            return -1;
        if (*n < BN_SAMPLES)
            v[(*n)++] = x;
    }
    return k < 0 ? -1 : 0;
}

static int read_bench(rd *d)
{
    rp_jr *j = &d->j;
    char key[64];
    bn_base_entry e = {.name = "", .ns_per_op = -1, .min_ns = -1, .max_ns = -1, .cpu_ns = -1};
    char *name = e.name;
    int have_name = 0, have_ns = 0, first = 1, k;
    if (rp_jr_peek(j) != '{')
        return rp_jr_fail(j, "\"benchmarks\" must hold objects");
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        if (strcmp(key, "name") == 0) {
            if (rp_jr_peek(j) != '"') {
                rc = wrong_kind(j, "a benchmark's \"name\" must be a string");
            } else if ((rc = rp_jr_string(j)) == 0) {
                snprintf(name, sizeof e.name, "%s", j->str);
                have_name = 1;
            }
        } else if (strcmp(key, "ns_per_op") == 0) {
            rc = read_ns(j, name, &e.ns_per_op);
            have_ns = 1;
        } else if (strcmp(key, "min_ns") == 0 || strcmp(key, "max_ns") == 0 ||
                   strcmp(key, "cpu_ns_per_op") == 0) {
            rc = read_ns(j, name, key[0] == 'c' ? &e.cpu_ns : key[1] == 'i' ? &e.min_ns
                                                                            : &e.max_ns);
        } else if (strcmp(key, "peak_bytes") == 0) {
            rc = rp_jr_get_u64(j, &e.peak_bytes, "a benchmark's \"peak_bytes\"");
        } else if (strcmp(key, "samples_ns") == 0) {
            rc = read_samples(j, name, e.samples, &e.nsamples);
        } else if (strcmp(key, "cpu_samples_ns") == 0) {
            rc = read_samples(j, name, e.cpu_samples, &e.ncpu_samples);
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (!have_name)
        return rp_jr_fail(j, "a benchmark without a \"name\"");
    if (!have_ns)
        return rp_jr_fail(j, "benchmark '%s' has no \"ns_per_op\"", name);
    return add_entry(d, &e);
}

static int read_benches(rd *d)
{
    rp_jr *j = &d->j;
    int c = rp_jr_peek(j), first = 1, k;
    if (c == '{')
        return rp_jr_fail(j, "\"benchmarks\" must be an array");
    if (c != '[')
        return wrong_kind(j, "\"benchmarks\" must be an array");
    if (rp_jr_arr_open(j) != 0)
        return -1;
    while ((k = rp_jr_arr_next(j, &first)) == 1)
        if (read_bench(d) != 0)
            return -1;
    return k < 0 ? -1 : 0;
}

/* A string value into buf (cut to cap - 1 bytes); other kinds are skipped. */
static int read_label(rp_jr *j, char *buf, size_t cap)
{
    if (rp_jr_peek(j) != '"')
        return rp_jr_skip(j);
    if (rp_jr_string(j) != 0)
        return -1;
    snprintf(buf, cap, "%s", j->str);
    return 0;
}

static int read_top(rd *d)
{
    rp_jr *j = &d->j;
    bn_baseline *out = d->out;
    char key[64];
    int c = rp_jr_peek(j), first = 1, k;
    if (c < 0)
        return rp_jr_fail(j, "unexpected end of input");
    if (c != '{')
        return rp_jr_fail(j, "expected an object at the top");
    if (rp_jr_obj_open(j) != 0)
        return -1;
    while ((k = rp_jr_obj_next(j, &first, key, sizeof key)) == 1) {
        int rc;
        c = rp_jr_peek(j);
        if (strcmp(key, "allocator") == 0) {
            rc = read_label(j, out->allocator, sizeof out->allocator);
        } else if (strcmp(key, "sweep") == 0) {
            rc = read_label(j, out->sweep, sizeof out->sweep);
        } else if (strcmp(key, "host") == 0) {
            rc = read_label(j, out->host, sizeof out->host);
        } else if (strcmp(key, "cpu") == 0) {
            rc = read_label(j, out->cpu, sizeof out->cpu);
        } else if (strcmp(key, "date") == 0) {
            rc = read_label(j, out->date, sizeof out->date);
        } else if (strcmp(key, "quick") == 0 && (c == 't' || c == 'f')) {
            rc = rp_jr_get_bool(j, &out->quick);
        } else if (strcmp(key, "benchmarks") == 0) {
            rc = read_benches(d);
        } else if (strcmp(key, "calibration_ns") == 0 && rp_jr_peek(j) != 'n') {
            rc = read_ns(j, "calibration", &out->calibration_ns);
        } else {
            rc = rp_jr_skip(j);
        }
        if (rc != 0)
            return -1;
    }
    if (k < 0)
        return -1;
    if (rp_jr_peek(j) >= 0)
        return rp_jr_fail(j, "trailing characters after the document");
    if (out->allocator[0] == '\0' && out->n == 0)
        return rp_jr_fail(j, "not a fakegc bench document (no \"benchmarks\")");
    return 0;
}

int bn_baseline_parse(const char *text, size_t len, const char *name, bn_baseline *out,
                      char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->quick = -1;
    out->calibration_ns = -1;
    rd d = {.out = out};
    rp_jr_init(&d.j, text, len, name ? name : "baseline", MAX_DEPTH, err, errlen);
    d.j.deep_msg = "nested deeper than";
    int rc = read_top(&d);
    rp_jr_free(&d.j);
    if (rc != 0) {
        /* d.cap entries were allocated, not out->n */
        if (out->e)
            al_free(out->e, d.cap * sizeof *out->e, AL_K_OTHER);
        out->e = NULL;
        out->n = 0;
        out->quick = 0;
        return -1;
    }
    if (out->n < d.cap) {
        /* exact size, so bn_baseline_free knows it */
        bn_base_entry *e = al_realloc(out->e, d.cap * sizeof *e, out->n * sizeof *e,
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
    char *buf;
    size_t len, cap;
    if (rp_jr_read_file(path, (size_t)64 << 20, AL_K_OTHER, &buf, &len, &cap, err,
                        errlen) != 0)
        return -1;
    int rc = bn_baseline_parse(buf, len, path, out, err, errlen);
    al_free(buf, cap, AL_K_OTHER);
    return rc;
}

void bn_baseline_free(bn_baseline *b)
{
    if (b->e)
        al_free(b->e, b->n * sizeof *b->e, AL_K_OTHER);
    b->e = NULL;
    b->n = 0;
}

size_t bn_baseline_results(const bn_baseline *b, bn_result *out, size_t max)
{
    size_t n = 0;
    for (; n < b->n && n < max; n++) {
        const bn_base_entry *e = &b->e[n];
        bn_result *r = &out[n];
        memset(r, 0, sizeof *r);
        r->name = e->name;
        r->status = e->ns_per_op > 0 ? BN_OK : BN_UNAVAILABLE;
        r->ns_per_op = e->ns_per_op;
        r->min_ns = e->min_ns;
        r->max_ns = e->max_ns;
        r->cpu_ns_per_op = e->cpu_ns;
        r->peak_bytes = e->peak_bytes;
        /* wall and CPU samples go together in a result: both or none */
        r->nsamples = e->nsamples == e->ncpu_samples ? e->nsamples : 0;
        memcpy(r->samples, e->samples, r->nsamples * sizeof *r->samples);
        memcpy(r->cpu_samples, e->cpu_samples, r->nsamples * sizeof *r->cpu_samples);
        if (r->status != BN_OK)
            snprintf(r->message, sizeof r->message, "not available in that run");
    }
    return n;
}

void bn_compare_notes(const bn_baseline *then, const char *allocator, const char *sweep,
                      int quick, FILE *f)
{
    if (then->allocator[0] && strcmp(then->allocator, allocator) != 0)
        fprintf(f, "  note: the baseline used allocator %s, this run %s\n", then->allocator,
                allocator);
    if (then->sweep[0] && strcmp(then->sweep, sweep) != 0)
        fprintf(f, "  note: the baseline used sweep %s, this run %s\n", then->sweep, sweep);
    if (then->quick >= 0 && quick >= 0 && then->quick != quick)
        fprintf(f, "  note: the baseline was %s--quick, this run %s\n",
                then->quick ? "" : "not ", quick ? "is" : "is not");
}

const bn_base_entry *bn_base_find(const bn_baseline *b, const char *name)
{
    for (size_t k = 0; k < b->n; k++)
        if (strcmp(b->e[k].name, name) == 0)
            return &b->e[k];
    return NULL;
}

/* r's baseline entry when both can be compared; NULL for a result that
 * did not run, or (said on f) one the baseline lacks. */
const bn_base_entry *bn_comparable(const bn_result *r, const bn_baseline *b, FILE *f)
{
    if (r->status != BN_OK)
        return NULL;
    const bn_base_entry *e = bn_base_find(b, r->name);
    if ((!e || e->ns_per_op <= 0) && f)
        fprintf(f, "  %-28s %7.1f     (not in the baseline)\n", r->name, r->ns_per_op);
    return e && e->ns_per_op > 0 ? e : NULL;
}

size_t bn_compare(const bn_result *r, size_t n, const bn_baseline *b, double tolerance_pct,
                  FILE *f)
{
    size_t regressions = 0;
    for (size_t i = 0; i < n; i++) {
        const bn_base_entry *e = bn_comparable(&r[i], b, f);
        if (!e)
            continue;
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

/* ---- the gate for a shared machine ---- */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bn_calibrate(double *spread)
{
    enum { REPS = 7, ITERS = 2000000 };
    double t[REPS];
    volatile uint64_t sink = 0;
    for (int r = 0; r < REPS; r++) {
        uint64_t x = 0x9E3779B97F4A7C15ull + (uint64_t)r;
        double t0 = now_ns();
        for (int i = 0; i < ITERS; i++) {   /* xorshift: no memory, no calls */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sink += x;
        t[r] = (now_ns() - t0) / ITERS;
    }
    (void)sink;
    qsort(t, REPS, sizeof t[0], cmp_d);
    if (spread)
        *spread = t[REPS / 2] > 0 ? (t[REPS - 1] - t[0]) / t[REPS / 2] : 0;
    return t[REPS / 2];
}

