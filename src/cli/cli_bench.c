/* cli_bench.c - `fakegc bench [NAME...]`: run the benchmark suite
 * (src/bench), print a table or JSON, compare with a baseline. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bn.h"
#include "core/er.h"
#include "fake/fk.h"

typedef struct bench_args {
    cli_common c;
    uint64_t repeats, min_ms, trace;   /* min_ms UINT64_MAX: the default */
    int quick, compare;
    int format;   /* bn_format */
    double tolerance, peak_tolerance;
    const char *baseline;
} bench_args;

static const op_opt rows[] = {
    OP_UINT("--repeats", 0, "R", bench_args, repeats, 1, 1000,
            "repeats per benchmark (default 5); each one times\n"
            "at least --min-time of work"),
    OP_UINT("--min-time", 0, "MS", bench_args, min_ms, 0, 3600000,
            "timed milliseconds per repeat (default 50; 2 with\n--quick)"),
    OP_ENUM("--format", "FMT", CLI_COMPARE_FORMATS, bench_args, format,
            "text (default), json (stable, for scripts: the run's\n"
            "schema fakegc-bench/2, --compare's fakegc-bench-\n"
            "compare/1), or markdown (--compare only: a table\n"
            "to post on a pull request)"),
    OP_FLAG("--quick", 0, bench_args, quick, "smoke-test sizes: 1M -> 10k (names stay the same)"),
    OP_IN("--baseline", "FILE.json", bench_args, baseline,
          "compare with an earlier `--format json` run: exit 1\n"
          "if one is slower by more than --tolerance (a slow\n"
          "one is run again, up to twice, and the fastest run\n"
          "counts) or its peak memory rose by more than\n"
          "--peak-tolerance"),
    OP_FLAG("--compare", 0, bench_args, compare,
            "bench --compare OLD.json NEW.json: compare two saved\n"
            "runs (no benchmark is run): mean +- sd of each\n"
            "benchmark's repeats in both, the change, and Welch's\n"
            "t-test; a benchmark regresses when it is slower by\n"
            "more than --tolerance and significantly (p < 0.05),\n"
            "or its peak memory rose past --peak-tolerance"),
    OP_FN("--tolerance", 0, "PCT", NULL, bench_args, tolerance, vl_percent,
          "allowed slow-down in percent (default 25)"),
    OP_FN("--peak-tolerance", 0, "PCT", NULL, bench_args, peak_tolerance, vl_percent,
          "allowed rise of a benchmark's peak memory in percent\n(default 10)"),
    OP_UINT("--trace-memo", 0, "N", bench_args, trace, 1, 100000000,
            "instead of timing: N lifecycles of lifecycle/churn\n"
            "under --sweep, printing the storage-memo size after\n"
            "each one as CSV"),
    OP_ENUM("--sweep", "POLICY", "eager|periodic", bench_args, c.sc.sweep,
            "storage-memo policy of the modes benchmarks make:\n"
            "eager (default) or periodic (PyTorch 1.13)"),
    OP_END};

const op_cmd cli_bench_cmd = {
    "bench", "[NAME...] [OPTIONS] | --compare OLD.json NEW.json",
    "Run the benchmark suite: median ns per operation over repeats, operations\n"
    "per repeat, and the allocator's peak bytes during each benchmark. NAME is\n"
    "a benchmark (fakegc list benches), a group (`weaktable`) or a prefix\n"
    "ending in '*'; none runs them all. Measure a release build\n"
    "(cmake --preset release: -O3 -DNDEBUG; scripts/bench.sh does it).",
    rows, CLI_O_ALLOCATOR | CLI_O_OUTPUT,
    "Exit status:\n  0 done; 1 slower than the baseline or more memory; 2 usage or\n"
    "  an unreadable file; 3 a benchmark failed (the model returned an error or\n"
    "  leaked blocks).\n\n"
    "Examples:\n"
    "  fakegc bench --quick  every benchmark, small sizes\n"
    "  fakegc bench --format json --output base.json  save a run\n"
    "  fakegc bench --baseline base.json  exit 1 on a regression\n"
    "  fakegc bench --compare base.json new.json --format markdown  for a pull request",
    NULL, "the benchmark suite", 0};

/* --compare: its arguments checked, the outputs set up, the comparison. */
static int compare_two(bench_args *a, char **files, int nfiles)
{
    if (nfiles != 2 || a->baseline) {
        cli_error("bench", "--compare takes two saved runs (OLD.json NEW.json) and runs "
                  "nothing (no --baseline)");
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&a->c, "bench") < 0)
        return CLI_EXIT_USAGE;
    int status = cli_outputs_not_inputs(&a->c, "bench", files, 2) < 0
                     ? CLI_EXIT_USAGE
                     : bn_compare_files(files[0], files[1], a->tolerance, a->peak_tolerance,
                                        (bn_format)a->format, a->c.out, "fakegc bench");
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
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    if (a.compare)
        return compare_two(&a, names, nnames);
    if (a.format == BN_FMT_MARKDOWN) {
        cli_error("bench", "--format markdown is --compare's (a run writes text or json)");
        return CLI_EXIT_USAGE;
    }
    size_t nb = bn_count();
    int sel[BN_MAX] = {0};
    if (nb > BN_MAX) {
        cli_error("bench", "internal: %zu benchmarks, room for %d", nb, BN_MAX);
        return CLI_EXIT_INTERNAL;
    }
    char err[256];
    for (int i = 0; i < nnames; i++)
        if (bn_select(names[i], sel, err, sizeof err) < 0) {
            cli_error("bench", "%s", err);
            return CLI_EXIT_USAGE;
        }
    if (a.trace && nnames && !(sel[bn_find("lifecycle/churn")])) {
        cli_error("bench", "--trace-memo traces lifecycle/churn only");
        return CLI_EXIT_USAGE;
    }
    bn_session ses = {.sel = sel, .json = a.format == BN_FMT_JSON, .version = FAKEGC_VERSION,
                      .baseline = a.baseline, .tolerance = a.tolerance,
                      .peak_tolerance = a.peak_tolerance, .who = "fakegc bench"};
    bn_config *cfg = &ses.cfg;
    bn_config_default(cfg);
    if (a.quick)
        bn_config_quick(cfg);
    cfg->repeats = (uint32_t)a.repeats;
    if (a.min_ms != UINT64_MAX)
        cfg->min_ns = a.min_ms * 1000000ull;
    cfg->sweep = a.c.sc.sweep == (int)FK_SWEEP_PERIODIC ? FK_SWEEP_PERIODIC : FK_SWEEP_EAGER;
    for (size_t i = 0; !nnames && i < nb; i++)
        sel[i] = 1;
    if (cli_env_setup(&a.c, "bench") < 0)
        return CLI_EXIT_USAGE;
    int status;
    if (a.trace) {
        status = bn_trace_memo(cfg, a.trace, a.c.out) != 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
        if (status)
            cli_error("bench", "--trace-memo: %s", er_message());
    } else {
        ses.out = a.c.out;
        ses.allocator = a.c.alloc ? a.c.alloc->name : a.c.allocator;
        status = bn_session_run(&ses);   /* its outcomes are bench's exit statuses */
    }
    if (status != CLI_EXIT_USAGE && cli_outputs_commit(&a.c, "bench") < 0)
        status = CLI_EXIT_USAGE;
    cli_env_teardown(&a.c);
    return status;
}
