/* bn_stats.c - what a comparison of two runs computes from their repeats:
 * mean, standard deviation, median, MAD, and Welch's t-test (two-sided),
 * its p-value from the regularized incomplete beta function. */
#include "bench/bn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bn_summary bn_summarize(const double *v, size_t n)
{
    bn_summary s = {0};
    if (n > BN_SAMPLES)
        n = BN_SAMPLES;
    s.n = n;
    if (n == 0)
        return s;
    double sorted[BN_SAMPLES], dev[BN_SAMPLES], sum = 0;
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, cmp_d);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s.mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - s.mean) * (v[i] - s.mean);
    s.sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    s.median = median_sorted(sorted, n);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(sorted[i] - s.median);
    qsort(dev, n, sizeof *dev, cmp_d);
    s.mad = median_sorted(dev, n);
    return s;
}

/* The continued fraction of I_x(a, b) (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

double bn_inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    double bt = exp(lbt);
    if (x < (a + 1) / (a + b + 2))
        return bt * beta_cf(a, b, x) / a;
    return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

double bn_t_pvalue(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return -1;
    if (isinf(t))
        return 0;
    return bn_inc_beta(df / 2, 0.5, df / (df + t * t));
}

bn_ttest bn_welch(const bn_summary *a, const bn_summary *b)
{
    bn_ttest r = {.p = -1};
    if (a->n < 2 || b->n < 2)
        return r;   /* no spread to test against */
    double va = a->sd * a->sd / (double)a->n, vb = b->sd * b->sd / (double)b->n;
    double se2 = va + vb;
    if (se2 <= 0) {   /* both runs exact: a difference is certain, none is none */
        r.p = a->mean == b->mean ? 1 : 0;
        r.t = a->mean == b->mean ? 0 : b->mean > a->mean ? INFINITY : -INFINITY;
        r.df = (double)(a->n + b->n - 2);
        return r;
    }
    r.t = (b->mean - a->mean) / sqrt(se2);
    double den = (va > 0 ? va * va / (double)(a->n - 1) : 0) +
                 (vb > 0 ? vb * vb / (double)(b->n - 1) : 0);
    r.df = se2 * se2 / den;
    r.p = bn_t_pvalue(r.t, r.df);
    return r;
}
