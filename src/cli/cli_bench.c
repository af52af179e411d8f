/* cli_bench.c - `fakegc bench [NAME...]`: run the benchmark suite
 * (src/bench), print a table or JSON, compare with a baseline. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bn.h"
#include "core/er.h"
#include "fake/fk.h"
#include "scenario/sc.h"

const char *const *cli_bench_names(size_t *n);

const char *const *cli_bench_names(size_t *n) { return bn_names(n); }

typedef struct bench_args {
    cli_common c;
    uint64_t repeats, min_ms, trace;   /* min_ms UINT64_MAX: the default */
    int quick, compare;
    double tolerance, peak_tolerance;
    const char *baseline;
} bench_args;

static const cli_opt rows[] = {
    CLI_UINT("--repeats", 0, "R", bench_args, repeats, 1, 1000,
             "repeats per benchmark (default 5); each one times\n"
             "at least --min-time of work"),
    CLI_UINT("--min-time", 0, "MS", bench_args, min_ms, 0, 3600000,
             "timed milliseconds per repeat (default 50; 2 with\n--quick)"),
    CLI_FLAG("--quick", 0, bench_args, quick, "smoke-test sizes: 1M -> 10k (names stay the same)"),
    CLI_IN("--baseline", "FILE.json", bench_args, baseline,
           "compare with an earlier `--format json` run: exit 1\n"
           "if one is slower by more than --tolerance (a slow\n"
           "one is run again, up to twice, and the fastest run\n"
           "counts) or its peak memory rose by more than\n"
           "--peak-tolerance"),
    CLI_FLAG("--compare", 0, bench_args, compare,
             "bench --compare OLD.json NEW.json: compare two saved\n"
             "runs (no benchmark is run): the same table and gate"),
    CLI_FN("--tolerance", 0, "PCT", NULL, bench_args, tolerance, vl_percent,
           "allowed slow-down in percent (default 25)"),
    CLI_FN("--peak-tolerance", 0, "PCT", NULL, bench_args, peak_tolerance, vl_percent,
           "allowed rise of a benchmark's peak memory in percent\n(default 10)"),
    CLI_UINT("--trace-memo", 0, "N", bench_args, trace, 1, 100000000,
             "instead of timing: N lifecycles of lifecycle/churn\n"
             "under --sweep, printing the storage-memo size after\n"
             "each one as CSV"),
    CLI_ENUM("--sweep", "POLICY", "eager|periodic", bench_args, c.sweep,
             "storage-memo policy of the modes benchmarks make:\n"
             "eager (default) or periodic (PyTorch 1.13)"),
    CLI_END};

const cli_cmd cli_bench_cmd = {
    "bench", "[NAME...] [OPTIONS] | --compare OLD.json NEW.json",
    "Run the benchmark suite: median ns per operation over repeats, operations\n"
    "per repeat, and the allocator's peak bytes during each benchmark. NAME is\n"
    "a benchmark (fakegc list benches), a group (`weaktable`) or a prefix\n"
    "ending in '*'; none runs them all. Measure a release build\n"
    "(cmake --preset release: -O3 -DNDEBUG; scripts/bench.sh does it).",
    rows, CLI_O_ALLOCATOR | CLI_O_OUTPUT | CLI_O_JSON,
    "exit status: 0 done; 1 slower than the baseline or more memory; 2 usage or\n"
    "an unreadable file; 3 a benchmark failed (the model returned an error or\n"
    "leaked blocks).",
    NULL, "the benchmark suite"};

/* Mark the benchmarks NAME selects; 0 or -1 (message printed). */
static int select_names(const char *name, int *sel)
{
    size_t n;
    const char *const *names = bn_names(&n);
    size_t len = strlen(name);
    int any = 0;
    int prefix = len > 0 && name[len - 1] == '*';
    if (prefix)
        len--;
    for (size_t i = 0; i < n; i++) {
        int hit;
        if (prefix)
            hit = strncmp(names[i], name, len) == 0;
        else
            hit = strcmp(names[i], name) == 0 ||
                  (strncmp(names[i], name, len) == 0 &&
                   (names[i][len] == '/' || (len && name[len - 1] == '/')));
        if (hit) {
            sel[i] = 1;
            any = 1;
        }
    }
    if (any)
        return 0;
    const char *best = NULL;
    size_t bd = 4;
    for (size_t i = 0; i < n; i++) {
        size_t d = sc_edit_distance(name, names[i], 3);
        if (d < bd) {
            bd = d;
            best = names[i];
        }
    }
    if (best)
        cli_error("bench", "unknown benchmark '%s'; did you mean '%s'?", name, best);
    else
        cli_error("bench", "unknown benchmark '%s' (fakegc list benches)", name);
    return -1;
}

enum { MAX_BENCH = 64 };

/* The notes and the verdict against --baseline: 1 a regression, 0 none,
 * -1 the baseline could not be read (printed). */
static int against_baseline(const bench_args *a, const bn_header *h, const bn_config *cfg,
                            const bn_result *res, size_t nres, double calib, double spread)
{
    bn_baseline b;
    char err[512];
    if (bn_baseline_read(a->baseline, &b, err, sizeof err) != 0) {
        cli_error("bench", "--baseline: %s", err);
        return -1;
    }
    FILE *f = a->c.format == RP_JSON ? stderr : a->c.out;
    fprintf(f, "\ncompared with %s:\n", a->baseline);
    bn_compare_notes(&b, h->allocator, h->sweep, cfg->quick, f);
    size_t reg = bn_compare_gate(res, nres, &b, a->tolerance, a->peak_tolerance, calib, spread,
                                 cfg, f);
    bn_baseline_free(&b);
    return reg ? 1 : 0;
}

/* bench --compare OLD.json NEW.json: the gate between two saved runs, as
 * diff's exit status (0 none, 1 a regression, 2 a file unreadable). */
static int compare_files(const bench_args *a, char **files)
{
    bn_baseline b[2];
    char err[512];
    bn_result res[MAX_BENCH];
    int nread = 0;
    while (nread < 2 && bn_baseline_read(files[nread], &b[nread], err, sizeof err) == 0)
        nread++;
    int status = CLI_EXIT_USAGE;
    if (nread < 2) {
        cli_error("bench", "--compare: %s", err);
    } else {
        fprintf(a->c.out, "fakegc bench --compare %s (baseline) %s (new):\n", files[0],
                files[1]);
        bn_compare_notes(&b[0], b[1].allocator, b[1].sweep, b[1].quick, a->c.out);
        size_t n = bn_baseline_results(&b[1], res, MAX_BENCH);
        size_t reg = bn_compare_gate(res, n, &b[0], a->tolerance, a->peak_tolerance,
                                     b[1].calibration_ns, 0, NULL, a->c.out);
        status = reg ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    while (nread)
        bn_baseline_free(&b[--nread]);
    return status;
}

/* Run the selected benchmarks, write the table or JSON, gate on the
 * baseline: the exit status. */
static int measure(bench_args *a, bn_config *cfg, const int *sel, size_t nb)
{
    bn_result res[MAX_BENCH];
    size_t nres = 0;
    int failed = 0, progress = isatty(fileno(stderr));
    for (size_t i = 0; i < nb; i++) {
        if (!sel[i])
            continue;
        if (progress)
            fprintf(stderr, "\r\033[K%s ...", bn_names(NULL)[i]);
        if (bn_run(i, cfg, &res[nres]) != 0) {
            cli_error("bench", "%s: %s", res[nres].name, res[nres].message);
            failed = 1;
        }
        nres++;
    }
    if (progress)
        fprintf(stderr, "\r\033[K");
    double spread = 0, calib = bn_calibrate(&spread);
    bn_header h = {FAKEGC_VERSION, a->c.alloc ? a->c.alloc->name : a->c.allocator,
                   fk_policy_name(cfg->sweep), cfg->quick, cfg->repeats, calib};
    int werr = a->c.format == RP_JSON ? bn_write_json(&h, res, nres, a->c.out)
                                      : bn_write_text(&h, res, nres, a->c.out);
    int status = failed ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    if (werr != 0) {
        cli_error("bench", "cannot write the results");
        status = CLI_EXIT_USAGE;
    }
    int reg = a->baseline ? against_baseline(a, &h, cfg, res, nres, calib, spread) : 0;
    if (reg < 0)
        return CLI_EXIT_USAGE;
    if (reg && status == CLI_EXIT_OK)
        status = CLI_EXIT_FAIL;
    return status;
}

/* --compare: its arguments checked, the outputs set up, the comparison. */
static int compare_two(bench_args *a, char **files, int nfiles)
{
    if (nfiles != 2 || a->baseline || a->c.format == RP_JSON) {
        cli_error("bench", "--compare takes two saved runs (OLD.json NEW.json), writes a "
                  "table, and runs nothing (no --baseline, no --format json)");
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&a->c, "bench") < 0)
        return CLI_EXIT_USAGE;
    int status = cli_outputs_not_inputs(&a->c, "bench", files, 2) < 0 ? CLI_EXIT_USAGE
                                                                       : compare_files(a, files);
    if (status != CLI_EXIT_USAGE && cli_outputs_commit(&a->c, "bench") < 0)
        status = CLI_EXIT_USAGE;
    cli_env_teardown(&a->c);
    return status;
}

int cli_bench(int argc, char **argv)
{
    bench_args a = {.repeats = 5, .min_ms = UINT64_MAX, .tolerance = 25, .peak_tolerance = 10};
    char **names;
    int nnames;
    int r = cli_parse(&cli_bench_cmd, &a, argc, argv, &names, &nnames);
    if (r != CLI_PARSE_OK)
        return cli_parse_exit(r);
    if (a.compare)
        return compare_two(&a, names, nnames);
    size_t nb = bn_count();
    int sel[MAX_BENCH] = {0};
    if (nb > MAX_BENCH) {
        cli_error("bench", "internal: %zu benchmarks, room for %d", nb, MAX_BENCH);
        return CLI_EXIT_INTERNAL;
    }
    for (int i = 0; i < nnames; i++)
        if (select_names(names[i], sel) < 0)
            return CLI_EXIT_USAGE;
    if (a.trace && nnames && !(sel[bn_find("lifecycle/churn")])) {
        cli_error("bench", "--trace-memo traces lifecycle/churn only");
        return CLI_EXIT_USAGE;
    }
    bn_config cfg;
    bn_config_default(&cfg);
    if (a.quick)
        bn_config_quick(&cfg);
    cfg.repeats = (uint32_t)a.repeats;
    if (a.min_ms != UINT64_MAX)
        cfg.min_ns = a.min_ms * 1000000ull;
    cfg.sweep = a.c.sweep == (int)FK_SWEEP_PERIODIC ? FK_SWEEP_PERIODIC : FK_SWEEP_EAGER;
    for (size_t i = 0; !nnames && i < nb; i++)
        sel[i] = 1;
    if (cli_env_setup(&a.c, "bench") < 0)
        return CLI_EXIT_USAGE;
    int status;
    if (a.trace) {
        status = bn_trace_memo(&cfg, a.trace, a.c.out) != 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
        if (status)
            cli_error("bench", "--trace-memo: %s", er_message());
    } else {
        status = measure(&a, &cfg, sel, nb);
    }
    if (status != CLI_EXIT_USAGE && cli_outputs_commit(&a.c, "bench") < 0)
        status = CLI_EXIT_USAGE;
    cli_env_teardown(&a.c);
    return status;
}
