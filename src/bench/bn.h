/* bn.h - the benchmark suite behind `fakegc bench`: named benchmarks, their
 * timing, the JSON/text results and the baseline comparison.
 *
 *   bn_config cfg; bn_config_default(&cfg);        // 5 repeats, >= 50 ms each
 *   bn_result r;
 *   int i = bn_find("convert/miss");
 *   if (bn_run((size_t)i, &cfg, &r) == 0)          // allocator installed first
 *       printf("%s %.1f ns/op\n", r.name, r.ns_per_op);
 *
 * Names are stable (scripts and scripts/bench-baseline.json key on them); the list
 * is bn_names(). Each benchmark times only its operation: the objects it
 * works on are made and dropped outside the timed region (see bn_describe).
 * A repeat runs batches until at least cfg.min_ns of timed work has been
 * done; the reported ns/op is the median over repeats of (timed ns / ops),
 * with the fastest and slowest repeat next to it. Timing is
 * clock_gettime(CLOCK_MONOTONIC). Figures mean something only for an
 * optimized build (the `release` preset, -O3 -DNDEBUG): bn_build_kind says
 * which kind this is.
 *
 * Memory: everything goes through the installed allocator. bn_run
 * re-installs the current allocator before a benchmark when no block is
 * live, so peak_bytes is the front's peak of live bytes during that
 * benchmark (setup included: keys, tables, tensors made untimed). After a
 * benchmark no block may be live; one that leaves blocks is an error.
 */
#ifndef FAKEGC_BN_H
#define FAKEGC_BN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fake/fk.h"

typedef struct bn_config {
    int quick;            /* smoke-test sizes: 1M -> 10k, 2 ms per repeat */
    fk_policy sweep;      /* storage-memo policy of the modes made */
    uint32_t repeats;     /* >= 1 (default 5) */
    uint64_t min_ns;      /* timed ns per repeat (default 50 ms; quick 2 ms) */
} bn_config;

void bn_config_default(bn_config *c);
/* bn_config_default, then quick sizes and timing. */
void bn_config_quick(bn_config *c);

enum { BN_OK = 0, BN_UNAVAILABLE = 1, BN_ERROR = 2 };
/* Repeats whose figures a result keeps one by one (the first BN_SAMPLES):
 * what a comparison's significance test reads. */
enum { BN_SAMPLES = 100 };

typedef struct bn_result {
    const char *name;     /* static */
    int status;           /* BN_OK, BN_UNAVAILABLE (e.g. stress not built),
                             BN_ERROR (message says why) */
    double ns_per_op;     /* median over repeats */
    double min_ns, max_ns;/* fastest and slowest repeat, ns/op */
    double cpu_ns_per_op; /* median of this thread's CPU time per op: close
                             to ns_per_op on an idle machine, lower when
                             other processes took the CPU */
    uint64_t ops;         /* operations per repeat (the median repeat's) */
    uint32_t repeats;
    uint64_t peak_bytes;  /* allocator front's peak during the benchmark */
    double target_ns;     /* the target for ns/op, 0 when none */
    char message[200];    /* BN_UNAVAILABLE / BN_ERROR: why */
    char note[200];       /* BN_OK: something seen while measuring, e.g. a
                             stress lifecycle that failed its checks */
    /* Each repeat's ns/op (wall) and CPU ns/op, in the order run: the
     * first nsamples of repeats (0 when unknown: an older saved run). */
    double samples[BN_SAMPLES], cpu_samples[BN_SAMPLES];
    uint32_t nsamples;
} bn_result;

/* The benchmark names, in suite order; *n gets the count. */
const char *const *bn_names(size_t *n);
size_t bn_count(void);
/* One line: what is timed and what is made untimed. */
const char *bn_describe(size_t i);
/* Index of the exact name, or -1. */
int bn_find(const char *name);

/* Run benchmark i. Returns 0 (out->status BN_OK or BN_UNAVAILABLE), or -1
 * (BN_ERROR: the model failed, or blocks were left live; message set). */
int bn_run(size_t i, const bn_config *cfg, bn_result *out);

/* The storage-memo trace: n lifecycles of lifecycle/churn under
 * cfg->sweep, writing after each one a CSV row
 *   lifecycle,memo_storage,pending,memo_meta,memo_fake
 * (header line first). 0, or -1 with the error record set. */
int bn_trace_memo(const bn_config *cfg, uint64_t n, FILE *f);

/* "release" when compiled with optimization and NDEBUG, "optimized" with
 * optimization only, else "debug". */
const char *bn_build_kind(void);

/* Median of v[0..n) (sorts v); 0 when n == 0. */
double bn_median(double *v, size_t n);

/* ---- results ---- */
typedef struct bn_header {
    const char *version, *allocator, *sweep;
    int quick;
    uint32_t repeats;
    double calibration_ns;   /* bn_calibrate of this run, <= 0 unknown */
    /* Where and when it ran (bn_machine fills them; "" unknown): the host
     * name, the CPU model (/proc/cpuinfo's "model name") and the UTC date
     * as ISO 8601 "2026-12-05T14:40:17Z". */
    char host[128], cpu[128], date[32];
} bn_header;
/* h's host, cpu and date from this machine, now. */
void bn_machine(bn_header *h);

/* JSON (stable, for scripts):
 *   {"tool":"fakegc","version":"0.4.0","allocator":"libc","sweep":"eager",
 *    "build":"release","quick":false,"repeats":5,
 *    "host":"ci-7","cpu":"AMD EPYC 7B13","date":"2026-12-05T14:40:17Z",
 *    "benchmarks":[{"name":"alloc/pair","ns_per_op":12.3,"ops":4000000,
 *      "repeats":5,"peak_bytes":64,"min_ns":12.1,"max_ns":12.9,
 *      "cpu_ns_per_op":12.2,"samples_ns":[12.1,12.3,...],
 *      "cpu_samples_ns":[12.0,12.2,...],"target_ns":null,"available":true}, ...]}
 * A benchmark that is not available has "available":false, null timings
 * and "message"; one measured with a remark has "note". 0, or -1 on a
 * write error. */
int bn_write_json(const bn_header *h, const bn_result *r, size_t n, FILE *f);
/* A table, then the targets and the reference ratios. */
int bn_write_text(const bn_header *h, const bn_result *r, size_t n, FILE *f);

/* ---- baseline ---- */
typedef struct bn_base_entry {
    char name[64];
    double ns_per_op;     /* < 0 when null (not available in the baseline) */
    double min_ns, max_ns;   /* the best and worst repeat, < 0 when absent */
    double cpu_ns;           /* cpu_ns_per_op, < 0 when absent */
    uint64_t peak_bytes;     /* 0 when absent */
    double samples[BN_SAMPLES], cpu_samples[BN_SAMPLES];   /* "samples_ns",
                                "cpu_samples_ns" (the first BN_SAMPLES) */
    uint32_t nsamples, ncpu_samples;   /* 0 when absent */
} bn_base_entry;

typedef struct bn_baseline {
    bn_base_entry *e;     /* AL_K_OTHER, exactly n entries (NULL when 0) */
    size_t n;
    char allocator[64], sweep[16];
    int quick;            /* -1 when absent */
    double calibration_ns;   /* < 0 when absent */
    char host[128], cpu[128], date[32];   /* "" when absent */
} bn_baseline;

/* Its benchmarks as results (name pointing into b, so b must outlive
 * them; BN_UNAVAILABLE where ns_per_op was null), for comparing two saved
 * files: at most max; the count. */
size_t bn_baseline_results(const bn_baseline *b, bn_result *out, size_t max);

/* Parse a bench JSON document (the bn_write_json schema; unknown keys are
 * skipped; depth limit 32; any input may be hostile). 0, or -1 with
 * "NAME:LINE:COL: what" in err and *out zeroed (nothing leaked; ER_OOM set
 * when memory ran out). */
int bn_baseline_parse(const char *text, size_t len, const char *name, bn_baseline *out,
                      char *err, size_t errlen);
int bn_baseline_read(const char *path, bn_baseline *out, char *err, size_t errlen);
void bn_baseline_free(bn_baseline *b);

/* The baseline's entry for benchmark name, or NULL. */
const bn_base_entry *bn_base_find(const bn_baseline *b, const char *name);
/* r's baseline entry when both can be compared; NULL for a result that did
 * not run, or (said on f, which may be NULL) one the baseline lacks. */
const bn_base_entry *bn_comparable(const bn_result *r, const bn_baseline *b, FILE *f);
/* "64 B", "1542.2 KiB", "34.6 MiB" */
void bn_fmt_bytes(char *buf, size_t n, uint64_t b);

/* Compare every available result with the baseline entry of the same name:
 * slower by more than tolerance_pct percent is a regression. Writes one
 * line per compared benchmark to f (may be NULL), "REGRESSION" on the slow
 * ones, and notes for names missing on either side. Returns the number of
 * regressions. */
size_t bn_compare(const bn_result *r, size_t n, const bn_baseline *b, double tolerance_pct,
                  FILE *f);

/* ns per iteration of a fixed integer loop: the median of 7 short repeats,
 * and their spread ((max - min) / median) in *spread. Scales with the
 * machine's speed and load, so a benchmark's time divided by it compares
 * across runs on a shared machine. */
double bn_calibrate(double *spread);

/* Notes on f when the two runs differ in a way that moves the figures:
 * the allocator, the sweep, --quick (quick < 0: unknown). */
void bn_compare_notes(const bn_baseline *then, const char *allocator, const char *sweep,
                      int quick, FILE *f);

/* ---- statistics of repeats (bn_stats.c) ---- */
typedef struct bn_summary {
    size_t n;
    double mean, sd;      /* sd: the sample standard deviation (n - 1) */
    double median, mad;   /* mad: median absolute deviation from the median */
} bn_summary;
/* Of v[0..n) (the first BN_SAMPLES); all zero when n == 0. */
bn_summary bn_summarize(const double *v, size_t n);
/* Welch's two-sample t-test of b's mean against a's (unequal variances):
 * t, Welch-Satterthwaite df, two-sided p. p < 0: not testable (a side
 * with fewer than 2 samples). Both sides without spread: p 0 when the
 * means differ, 1 when not. */
typedef struct bn_ttest { double t, df, p; } bn_ttest;
bn_ttest bn_welch(const bn_summary *a, const bn_summary *b);
/* The two-sided p of Student's t with df degrees of freedom (-1 when df
 * <= 0), and the regularized incomplete beta I_x(a, b) behind it. */
double bn_t_pvalue(double t, double df);
double bn_inc_beta(double a, double b, double x);

/* ---- the gate: one benchmark against its baseline entry ----
 *
 * Time: CPU ns/op when both sides have it (this thread's CPU time: what
 * other processes take is not counted), else wall. With each repeat's
 * figures on both sides (samples, >= 2 each), the means are compared and
 * Welch's t-test says whether the difference stands out of the noise
 * between repeats (as pyperf's compare_to does); without them, the medians,
 * untested. A benchmark is SLOWER when its change is larger than the
 * tolerance, significant (p < BN_ALPHA; an untested one counts as
 * significant), and more than one calibration-loop iteration per operation
 * (calibration_ns: a few-ns operation moved by cache placement is not
 * code). Memory: MORE MEMORY when peak_bytes rose by more than the peak
 * tolerance and by more than BN_PEAK_SLACK bytes (peaks are the allocator
 * front's live bytes, the same from run to run within a fraction of a
 * percent); a baseline without peaks gates time alone. */
#define BN_ALPHA 0.05
enum { BN_GATE_RERUNS = 2, BN_PEAK_SLACK = 4096 };
typedef struct bn_gate_row {
    const char *name;
    int cpu;                    /* CPU times compared (else wall) */
    bn_summary then, now;       /* of the samples compared (n 0: none) */
    double then_ns, now_ns;     /* means (tested) or medians (untested) */
    double change;              /* percent */
    bn_ttest test;              /* test.p < 0: untested */
    int significant, slow;
    uint64_t peak_now, peak_then;   /* peak_then 0: the baseline has none */
    double peak_change;
    int peak_up;
    int reruns;                 /* live gate: re-runs it took */
} bn_gate_row;
bn_gate_row bn_gate_judge(const bn_result *r, const bn_base_entry *e, double tolerance_pct,
                          double peak_tolerance_pct, double calibration_ns);

/* g as a table row, and its "REGRESSION NAME: ..." lines (none when it
 * passed). */
void bn_gate_line(const bn_gate_row *g, FILE *f);
void bn_gate_verdict(const bn_gate_row *g, double tolerance_pct, double peak_tolerance_pct,
                     FILE *f);

/* The gate over n results: each one judged (bn_gate_judge); with cfg a
 * benchmark found slow is run again (bn_run with cfg), up to
 * BN_GATE_RERUNS times, and the fastest of its runs is the one compared (a
 * regression is a slow-down every run shows: on a shared VM a whole run of
 * a few rows went 40-60% slower, its repeats within 2% of each other, while
 * the calibration loop did not move). NULL cfg compares r as it is. f gets
 * the method, one table row per benchmark (mean +- sd, or median, then and
 * now, the change, p, the peaks), then a line per regression naming the
 * benchmark and both values: "REGRESSION convert/miss: peak memory 34.6 MiB
 * (36322336 bytes), baseline 1542.2 KiB (1579232 bytes) (+2200%, 23.0x;
 * limit +10%)". Returns the number of regressions. */
size_t bn_compare_gate(const bn_result *r, size_t n, const bn_baseline *b,
                       double tolerance_pct, double peak_tolerance_pct, double calibration_ns,
                       double calib_spread, const bn_config *cfg, FILE *f);

/* ---- a session: `fakegc bench` (bn_session.c) ----
 *
 *   int sel[BN_MAX] = {0};
 *   if (bn_select("weaktable", sel, err, sizeof err) < 0) ...   // "unknown benchmark ..."
 *   bn_session s = {cfg, sel, 0, "0.4.0", "libc", NULL, 25, 10, stdout, "fakegc bench"};
 *   int outcome = bn_session_run(&s);                            // BN_DONE ...
 *
 * The outcomes are `fakegc bench`'s exit statuses. Messages go to stderr
 * as "WHO: ...". */
enum { BN_MAX = 64 };   /* room for this many benchmarks (bn_count() <= BN_MAX) */
enum {
    BN_DONE = 0,         /* ran (or compared) and nothing regressed */
    BN_REGRESSION = 1,   /* slower, or more peak memory, than the baseline */
    BN_UNREADABLE = 2,   /* a baseline could not be read, or the results not written */
    BN_BROKEN = 3        /* a benchmark failed (an error, or leaked blocks) */
};

/* Mark in sel[0..bn_count()) what name selects: a benchmark, a group
 * ("weaktable", "weaktable/"), or a prefix ending in '*'. 0, or -1 with
 * "unknown benchmark 'X'; did you mean 'Y'?" in err (nothing marked). */
int bn_select(const char *name, int *sel, char *err, size_t errn);

typedef struct bn_session {
    bn_config cfg;
    const int *sel;              /* sel[i]: run benchmark i */
    int json;                    /* bn_write_json, else bn_write_text */
    const char *version, *allocator;   /* for the header */
    const char *baseline;        /* a saved run's JSON to gate on, or NULL */
    double tolerance, peak_tolerance;  /* percent (bn_compare_gate) */
    FILE *out;                   /* the results; the comparison too, unless json */
    const char *who;             /* "fakegc bench" */
} bn_session;

/* Run the selected benchmarks (the name of each on a terminal's stderr
 * while it runs), write the results to s->out, and with a baseline the
 * notes and the gate (on stderr with json): an outcome. */
int bn_session_run(const bn_session *s);

/* Compare two saved runs (bench --compare OLD NEW), nothing run: each
 * benchmark of NEW against OLD's by bn_gate_judge (no calibration floor,
 * no re-runs), written to out as
 *   BN_FMT_TEXT: the runs' host/CPU/date, notes, a row per benchmark
 *     (mean +- sd of both, the change, p, SLOWER / MORE MEMORY) and the
 *     REGRESSION lines, closing "compare: N regressions ...";
 *   BN_FMT_JSON: schema fakegc-bench-compare/1 (src/report/schema);
 *   BN_FMT_MARKDOWN: a table for a pull request.
 * BN_DONE, BN_REGRESSION, or BN_UNREADABLE (printed). */
typedef enum bn_format { BN_FMT_TEXT, BN_FMT_JSON, BN_FMT_MARKDOWN } bn_format;
int bn_compare_files(const char *old, const char *new, double tolerance,
                     double peak_tolerance, bn_format fmt, FILE *out, const char *who);

#endif
