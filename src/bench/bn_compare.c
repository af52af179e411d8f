/* bn_compare.c - `bench --compare OLD.json NEW.json`: two saved runs, each
 * benchmark judged by bn_gate_judge, as text, JSON or Markdown. */
#include "bench/bn.h"

#include <stdlib.h>
#include <string.h>

#include "report/rp.h"
#include "report/rp_jw.h"

typedef struct cmp {
    const char *old, *new;
    const bn_baseline *b;         /* [0] old, [1] new */
    bn_gate_row rows[BN_MAX];
    size_t nrows, slow, more;
    const char *missing[BN_MAX];  /* in one run and not the other */
    size_t nmissing;
    double tolerance, peak_tolerance;
    bn_result res[BN_MAX];        /* the new run's benchmarks */
} cmp;

static void judge(cmp *c)
{
    bn_result *res = c->res;
    size_t n = bn_baseline_results(&c->b[1], res, BN_MAX);
    for (size_t i = 0; i < n; i++) {
        const bn_base_entry *e = bn_comparable(&res[i], &c->b[0], NULL);
        if (!e) {
            if (res[i].status == BN_OK)
                c->missing[c->nmissing++] = res[i].name;
            continue;
        }
        bn_gate_row g = bn_gate_judge(&res[i], e, c->tolerance, c->peak_tolerance, 0);
        c->slow += (size_t)g.slow;
        c->more += (size_t)g.peak_up;
        c->rows[c->nrows++] = g;
    }
    for (size_t k = 0; k < c->b[0].n; k++)
        if (c->b[0].e[k].ns_per_op > 0 && !bn_base_find(&c->b[1], c->b[0].e[k].name) &&
            c->nmissing < BN_MAX)
            c->missing[c->nmissing++] = c->b[0].e[k].name;
}

static size_t regressions(const cmp *c)
{
    size_t r = 0;
    for (size_t i = 0; i < c->nrows; i++)
        r += (size_t)(c->rows[i].slow || c->rows[i].peak_up);
    return r;
}

static void machine(const bn_baseline *b, const char *file, const char *role, FILE *f)
{
    fprintf(f, "  %s %s: %s (%s), %s\n", role, file, b->host[0] ? b->host : "host unknown",
            b->cpu[0] ? b->cpu : "CPU unknown", b->date[0] ? b->date : "date unknown");
}

static void write_text(const cmp *c, FILE *f)
{
    fprintf(f, "fakegc bench --compare %s (baseline) %s (new):\n", c->old, c->new);
    machine(&c->b[0], c->old, "baseline", f);
    machine(&c->b[1], c->new, "new     ", f);
    bn_compare_notes(&c->b[0], c->b[1].allocator, c->b[1].sweep, c->b[1].quick, f);
    fprintf(f, "  time: CPU ns/op, mean +- sd of the repeats; SLOWER when more than +%.0f%% "
            "and significant (Welch's t-test, p < %.2f; medians untested when a run kept no "
            "repeats); peak: MORE MEMORY past +%.0f%% and %d bytes\n\n", c->tolerance,
            BN_ALPHA, c->peak_tolerance, BN_PEAK_SLACK);
    fprintf(f, "  %-28s %21s %21s %8s %7s %11s %11s %8s\n", "benchmark", "baseline ns/op",
            "ns/op", "change", "p", "peak", "baseline", "change");
    for (size_t i = 0; i < c->nrows; i++)
        bn_gate_line(&c->rows[i], f);
    for (size_t i = 0; i < c->nmissing; i++)
        fprintf(f, "  %-28s (in one run only)\n", c->missing[i]);
    size_t reg = regressions(c);
    if (reg)
        fputs("\n", f);
    for (size_t i = 0; i < c->nrows; i++)
        bn_gate_verdict(&c->rows[i], c->tolerance, c->peak_tolerance, f);
    fprintf(f, "compare: %zu regression%s (%zu slower, %zu using more memory) in %zu "
            "benchmarks\n", reg, reg == 1 ? "" : "s", c->slow, c->more, c->nrows);
}

static void summary_json(rp_jw *w, const char *k, const bn_summary *s, double compared)
{
    rp_jw_key(w, ", ", k);
    rp_jw_key(w, "{", "ns_per_op"); rp_jw_num(w, compared);
    rp_jw_key(w, ", ", "n"); rp_jw_u64(w, s->n);
    if (s->n) {
        rp_jw_key(w, ", ", "mean"); rp_jw_num(w, s->mean);
        rp_jw_key(w, ", ", "sd"); rp_jw_num(w, s->sd);
        rp_jw_key(w, ", ", "median"); rp_jw_num(w, s->median);
        rp_jw_key(w, ", ", "mad"); rp_jw_num(w, s->mad);
    }
    rp_jw_raw(w, "}");
}

static void row_json(rp_jw *w, const bn_gate_row *g, size_t i)
{
    rp_jw_key(w, i ? ",\n  {" : "\n  {", "name"); rp_jw_str(w, g->name);
    rp_jw_key(w, ", ", "time"); rp_jw_str(w, g->cpu ? "cpu" : "wall");
    summary_json(w, "baseline", &g->then, g->then_ns);
    summary_json(w, "new", &g->now, g->now_ns);
    rp_jw_key(w, ", ", "change_pct"); rp_jw_num(w, g->change);
    rp_jw_key(w, ", ", "test");
    if (g->test.p >= 0) {
        rp_jw_key(w, "{", "name"); rp_jw_str(w, "welch-t");
        rp_jw_key(w, ", ", "t"); rp_jw_num(w, g->test.t);
        rp_jw_key(w, ", ", "df"); rp_jw_num(w, g->test.df);
        rp_jw_key(w, ", ", "p"); rp_jw_num(w, g->test.p);
        rp_jw_raw(w, "}");
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_key(w, ", ", "significant"); rp_jw_bool(w, g->significant);
    rp_jw_key(w, ", ", "slower"); rp_jw_bool(w, g->slow);
    rp_jw_key(w, ", ", "peak_bytes"); rp_jw_u64(w, g->peak_now);
    rp_jw_key(w, ", ", "baseline_peak_bytes");
    if (g->peak_then)
        rp_jw_u64(w, g->peak_then);
    else
        rp_jw_raw(w, "null");
    rp_jw_key(w, ", ", "more_memory"); rp_jw_bool(w, g->peak_up);
    rp_jw_raw(w, "}");
}

static void run_json(rp_jw *w, const char *k, const bn_baseline *b, const char *file)
{
    rp_jw_key(w, ",\n ", k);
    rp_jw_key(w, "{", "file"); rp_jw_str(w, file);
    rp_jw_key(w, ", ", "host"); rp_jw_str(w, b->host[0] ? b->host : NULL);
    rp_jw_key(w, ", ", "cpu"); rp_jw_str(w, b->cpu[0] ? b->cpu : NULL);
    rp_jw_key(w, ", ", "date"); rp_jw_str(w, b->date[0] ? b->date : NULL);
    rp_jw_key(w, ", ", "allocator"); rp_jw_str(w, b->allocator);
    rp_jw_raw(w, "}");
}

static int write_json(const cmp *c, FILE *f)
{
    rp_jw *w = rp_jw_open(f);
    if (!w)
        return -1;
    rp_jw_key(w, "{", "schema"); rp_jw_str(w, RP_SCHEMA_BENCH_COMPARE);
    rp_jw_key(w, ", ", "tool"); rp_jw_str(w, "fakegc");
    rp_jw_build(w, ", ");
    run_json(w, "baseline", &c->b[0], c->old);
    run_json(w, "new", &c->b[1], c->new);
    rp_jw_key(w, ",\n ", "tolerance_pct"); rp_jw_num(w, c->tolerance);
    rp_jw_key(w, ", ", "peak_tolerance_pct"); rp_jw_num(w, c->peak_tolerance);
    rp_jw_key(w, ", ", "alpha"); rp_jw_num(w, BN_ALPHA);
    rp_jw_key(w, ",\n ", "benchmarks"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < c->nrows; i++)
        row_json(w, &c->rows[i], i);
    rp_jw_raw(w, "]");
    rp_jw_key(w, ",\n ", "in_one_run_only"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < c->nmissing; i++) {
        rp_jw_raw(w, i ? ", " : "");
        rp_jw_str(w, c->missing[i]);
    }
    rp_jw_raw(w, "]");
    rp_jw_key(w, ",\n ", "regressions"); rp_jw_u64(w, regressions(c));
    rp_jw_key(w, ", ", "slower"); rp_jw_u64(w, c->slow);
    rp_jw_key(w, ", ", "more_memory"); rp_jw_u64(w, c->more);
    rp_jw_raw(w, "}\n");
    return rp_jw_close(w);
}

/* A name or file in a table cell: '|' and newlines would break the row. */
static void md_cell(const char *s, FILE *f)
{
    for (; *s; s++)
        fputs(*s == '|' ? "\\|" : *s == '\n' || *s == '\r' ? " " : (char[2]){*s, 0}, f);
}

static void write_markdown(const cmp *c, FILE *f)
{
    size_t reg = regressions(c);
    fprintf(f, "### fakegc bench: %s\n\n", reg ? "regressions" : "no regression");
    fprintf(f, "%zu regression%s (%zu slower, %zu using more memory) in %zu benchmarks; "
            "slower means more than +%.0f%% and p < %.2f (Welch's t-test).\n\n", reg,
            reg == 1 ? "" : "s", c->slow, c->more, c->nrows, c->tolerance, BN_ALPHA);
    fputs("| benchmark | baseline ns/op | new ns/op | change | p | peak | verdict |\n"
          "|---|---:|---:|---:|---:|---:|---|\n", f);
    for (size_t i = 0; i < c->nrows; i++) {
        const bn_gate_row *g = &c->rows[i];
        char pn[32], p[16] = "-";
        bn_fmt_bytes(pn, sizeof pn, g->peak_now);
        if (g->test.p >= 0)
            snprintf(p, sizeof p, g->test.p < 0.001 ? "<0.001" : "%.3f", g->test.p);
        fputs("| `", f);
        md_cell(g->name, f);
        fprintf(f, "` | %.1f ± %.1f | %.1f ± %.1f | %+.1f%% | %s | %s (%+.1f%%) | %s |\n",
                g->then_ns, g->then.sd, g->now_ns, g->now.sd, g->change, p, pn, g->peak_change,
                g->slow && g->peak_up ? "**slower, more memory**" : g->slow ? "**slower**"
                : g->peak_up ? "**more memory**" : "ok");
    }
    fputs("\nbaseline: ", f);
    md_cell(c->old, f);
    fprintf(f, " (%s, %s); new: ", c->b[0].cpu[0] ? c->b[0].cpu : "CPU unknown",
            c->b[0].date[0] ? c->b[0].date : "date unknown");
    md_cell(c->new, f);
    fprintf(f, " (%s, %s)\n", c->b[1].cpu[0] ? c->b[1].cpu : "CPU unknown",
            c->b[1].date[0] ? c->b[1].date : "date unknown");
}

int bn_compare_files(const char *old, const char *new, double tolerance,
                     double peak_tolerance, bn_format fmt, FILE *out, const char *who)
{
    bn_baseline b[2];
    const char *files[2] = {old, new};
    char err[512];
    int nread = 0;
    while (nread < 2 && bn_baseline_read(files[nread], &b[nread], err, sizeof err) == 0)
        nread++;
    int status = BN_UNREADABLE;
    if (nread < 2) {
        fprintf(stderr, "%s: --compare: %s\n", who, err);
    } else {
        cmp *c = calloc(1, sizeof *c);
        if (!c) {
            fprintf(stderr, "%s: --compare: out of memory\n", who);
        } else {
            c->old = old, c->new = new, c->b = b;
            c->tolerance = tolerance, c->peak_tolerance = peak_tolerance;
            judge(c);
            int werr = 0;
            if (fmt == BN_FMT_JSON)
                werr = write_json(c, out);
            else if (fmt == BN_FMT_MARKDOWN)
                write_markdown(c, out);
            else
                write_text(c, out);
            status = werr ? BN_UNREADABLE : regressions(c) ? BN_REGRESSION : BN_DONE;
            free(c);
        }
    }
    while (nread)
        bn_baseline_free(&b[--nread]);
    return status;
}
