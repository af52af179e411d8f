/* bn_gate.c - one benchmark against its baseline entry (bn_gate_judge),
 * and the gate over a run: re-runs of a slow one, the table, the
 * REGRESSION lines. */
#include "bench/bn.h"

#include <math.h>
#include <string.h>

/* The samples of the time compared: CPU when both sides have them. */
static void pick(const bn_result *r, const bn_base_entry *e, bn_gate_row *g)
{
    g->cpu = r->cpu_ns_per_op > 0 && e->cpu_ns > 0;
    const double *rs = g->cpu ? r->cpu_samples : r->samples;
    const double *es = g->cpu ? e->cpu_samples : e->samples;
    uint32_t en = g->cpu ? e->ncpu_samples : e->nsamples;
    g->now = bn_summarize(rs, r->nsamples);
    g->then = bn_summarize(es, en);
}

bn_gate_row bn_gate_judge(const bn_result *r, const bn_base_entry *e, double tolerance_pct,
                          double peak_tolerance_pct, double calibration_ns)
{
    bn_gate_row g;
    memset(&g, 0, sizeof g);
    g.name = r->name;
    pick(r, e, &g);
    g.test = bn_welch(&g.then, &g.now);
    if (g.test.p >= 0) {
        g.then_ns = g.then.mean;
        g.now_ns = g.now.mean;
        g.significant = g.test.p < BN_ALPHA;
    } else {   /* no repeats to test with: the medians, on the tolerance alone */
        g.then_ns = g.cpu ? e->cpu_ns : e->ns_per_op;
        g.now_ns = g.cpu ? r->cpu_ns_per_op : r->ns_per_op;
        g.significant = 1;
    }
    g.change = g.then_ns > 0 ? (g.now_ns / g.then_ns - 1) * 100 : 0;
    g.slow = g.change > tolerance_pct && g.significant && g.now_ns - g.then_ns > calibration_ns;
    g.peak_now = r->peak_bytes;
    g.peak_then = e->peak_bytes;
    g.peak_change = g.peak_then ? ((double)g.peak_now / (double)g.peak_then - 1) * 100 : 0;
    g.peak_up = g.peak_then && g.peak_change > peak_tolerance_pct &&
                g.peak_now > g.peak_then + BN_PEAK_SLACK;
    return g;
}

/* A slow verdict confirmed by running the benchmark again, up to
 * BN_GATE_RERUNS times, keeping the fastest run's time (peaks are the
 * first run's). */
static bn_gate_row confirm(const bn_result *r, const bn_base_entry *e, double tolerance_pct,
                           double peak_tolerance_pct, double calibration_ns,
                           const bn_config *cfg)
{
    bn_gate_row g = bn_gate_judge(r, e, tolerance_pct, peak_tolerance_pct, calibration_ns);
    int k = cfg ? bn_find(r->name) : -1;
    while (g.slow && k >= 0 && g.reruns < BN_GATE_RERUNS) {
        bn_result again;
        if (bn_run((size_t)k, cfg, &again) != 0 || again.status != BN_OK)
            break;
        int reruns = g.reruns + 1;
        bn_gate_row h = bn_gate_judge(&again, e, tolerance_pct, peak_tolerance_pct,
                                      calibration_ns);
        if (h.now_ns < g.now_ns) {
            h.peak_now = g.peak_now, h.peak_change = g.peak_change, h.peak_up = g.peak_up;
            g = h;
        }
        g.reruns = reruns;
    }
    return g;
}

static void head(const bn_baseline *b, double tolerance_pct, double peak_tolerance_pct,
                 double calibration_ns, double calib_spread, const bn_config *cfg, FILE *f)
{
    if (calibration_ns > 0) {
        fprintf(f, "  machine noise: calibration loop %.3f ns/iteration", calibration_ns);
        if (calib_spread > 0)
            fprintf(f, ", spread %.0f%% over 7 repeats", calib_spread * 100);
        if (b->calibration_ns > 0)
            fprintf(f, " (baseline's run: %.3f)", b->calibration_ns);
        fputs("\n", f);
    }
    fprintf(f, "  time: CPU ns/op, mean +- sd of the repeats; SLOWER when more than +%.0f%% "
            "(--tolerance) and significant (Welch's t-test, p < %.2f; medians untested when "
            "a run kept no repeats)%s\n", tolerance_pct, BN_ALPHA,
            calibration_ns > 0 ? " and more than one calibration iteration" : "");
    fprintf(f, "  peak: the allocator's peak live bytes; limit: +%.0f%% (--peak-tolerance) "
            "and more than %d bytes\n", peak_tolerance_pct, BN_PEAK_SLACK);
    if (cfg)
        fprintf(f, "  re-runs: a slow one is run again, up to %d times, and its fastest "
                "run counts\n", BN_GATE_RERUNS);
    fprintf(f, "\n  %-28s %21s %21s %8s %7s %11s %11s %8s\n", "benchmark", "baseline ns/op",
            "ns/op", "change", "p", "peak", "baseline", "change");
}

/* "12.3 +- 0.4" (tested) or "12.3" (a median) */
static void fmt_time(char *buf, size_t n, double v, const bn_summary *s, int tested)
{
    if (tested)
        snprintf(buf, n, "%.1f +- %.1f", v, s->sd);
    else
        snprintf(buf, n, "%.1f", v);
}

void bn_gate_line(const bn_gate_row *g, FILE *f)
{
    char pn[32], pt[32] = "-", pc[16] = "-", then[48], now[48], p[16] = "-";
    int tested = g->test.p >= 0;
    bn_fmt_bytes(pn, sizeof pn, g->peak_now);
    if (g->peak_then) {
        bn_fmt_bytes(pt, sizeof pt, g->peak_then);
        snprintf(pc, sizeof pc, "%+.1f%%", g->peak_change);
    }
    fmt_time(then, sizeof then, g->then_ns, &g->then, tested);
    fmt_time(now, sizeof now, g->now_ns, &g->now, tested);
    if (tested)
        snprintf(p, sizeof p, g->test.p < 0.001 ? "<0.001" : "%.3f", g->test.p);
    fprintf(f, "  %-28s %17s %-3s %17s %-3s %+7.1f%% %7s %11s %11s %8s%s%s", g->name, then,
            g->cpu ? "cpu" : "", now, g->cpu ? "cpu" : "", g->change, p, pn, pt, pc,
            g->slow ? "  SLOWER" : "", g->peak_up ? "  MORE MEMORY" : "");
    if (g->reruns)
        fprintf(f, "  (%s on %d re-run%s)", g->slow ? "confirmed" : "passed", g->reruns,
                g->reruns == 1 ? "" : "s");
    fputs("\n", f);
}

void bn_gate_verdict(const bn_gate_row *g, double tolerance_pct, double peak_tolerance_pct,
                     FILE *f)
{
    if (g->slow) {
        fprintf(f, "REGRESSION %s: %.1f %s ns/op, baseline %.1f (%+.0f%%, limit +%.0f%%", g->name,
                g->now_ns, g->cpu ? "cpu" : "wall", g->then_ns, g->change, tolerance_pct);
        if (g->test.p >= 0)
            fprintf(f, "; p = %.3g", g->test.p);
        fputs(")\n", f);
    }
    if (g->peak_up) {
        char pn[32], pt[32];
        bn_fmt_bytes(pn, sizeof pn, g->peak_now);
        bn_fmt_bytes(pt, sizeof pt, g->peak_then);
        fprintf(f, "REGRESSION %s: peak memory %s (%llu bytes), baseline %s (%llu bytes) "
                "(%+.0f%%, %.1fx; limit +%.0f%%)\n", g->name, pn,
                (unsigned long long)g->peak_now, pt, (unsigned long long)g->peak_then,
                g->peak_change, (double)g->peak_now / (double)g->peak_then,
                peak_tolerance_pct);
    }
}

size_t bn_compare_gate(const bn_result *r, size_t n, const bn_baseline *b,
                       double tolerance_pct, double peak_tolerance_pct, double calibration_ns,
                       double calib_spread, const bn_config *cfg, FILE *f)
{
    size_t regressions = 0, slow = 0, more = 0, nrows = 0;
    enum { MAX_ROWS = 128 };
    bn_gate_row rows[MAX_ROWS];
    if (f)
        head(b, tolerance_pct, peak_tolerance_pct, calibration_ns, calib_spread, cfg, f);
    for (size_t i = 0; i < n; i++) {
        const bn_base_entry *e = bn_comparable(&r[i], b, f);
        if (!e)
            continue;
        bn_gate_row g = confirm(&r[i], e, tolerance_pct, peak_tolerance_pct, calibration_ns,
                                cfg);
        regressions += (size_t)(g.slow || g.peak_up);
        slow += (size_t)g.slow;
        more += (size_t)g.peak_up;
        if (f)
            bn_gate_line(&g, f);
        if ((g.slow || g.peak_up) && nrows < MAX_ROWS)
            rows[nrows++] = g;
    }
    if (!f)
        return regressions;
    if (nrows)
        fputs("\n", f);
    for (size_t k = 0; k < nrows; k++)
        bn_gate_verdict(&rows[k], tolerance_pct, peak_tolerance_pct, f);
    fprintf(f, "baseline: %zu regression%s (%zu slower, %zu using more memory; tolerance "
            "%.0f%%, peak tolerance %.0f%%, significance p < %.2f)\n", regressions,
            regressions == 1 ? "" : "s", slow, more, tolerance_pct, peak_tolerance_pct,
            BN_ALPHA);
    return regressions;
}
