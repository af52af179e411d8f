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

static const unsigned MASK = CLI_O_ALLOCATOR | CLI_O_SWEEP | CLI_O_FORMAT | CLI_O_OUTPUT;

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc bench [NAME...] [OPTIONS]\n\n"
            "Run the benchmark suite: median ns per operation over repeats, operations\n"
            "per repeat, and the allocator's peak bytes during each benchmark. NAME is\n"
            "a benchmark (fakegc list benches), a group (`weaktable`) or a prefix\n"
            "ending in '*'; none runs them all. Measure a release build\n"
            "(cmake --preset release: -O3 -DNDEBUG; scripts/bench.sh does it).\n\n"
            "options:\n"
            "  --repeats R          repeats per benchmark (default 5); each one times\n"
            "                       at least --min-time of work\n"
            "  --min-time MS        timed milliseconds per repeat (default 50; 2 with\n"
            "                       --quick)\n"
            "  --quick              smoke-test sizes: 1M -> 10k (names stay the same)\n"
            "  --baseline FILE.json compare ns/op with an earlier `--format json` run;\n"
            "                       exit 1 if one is slower by more than --tolerance\n"
            "                       (a slow one is run again, up to twice, and the\n"
            "                       fastest run counts)\n"
            "  --tolerance PCT      allowed slow-down in percent (default 25)\n"
            "  --trace-memo N       instead of timing: N lifecycles of lifecycle/churn\n"
            "                       under --sweep, printing the storage-memo size after\n"
            "                       each one as CSV\n"
            "  --sweep POLICY       storage-memo policy of the modes benchmarks make:\n"
            "                       eager (default) or periodic (PyTorch 1.13)\n"
            "  --format FMT         text (default) or json (stable, for scripts)\n"
            "  --help               this text\n");
    cli_common_help(f, CLI_O_ALLOCATOR | CLI_O_OUTPUT);
    fprintf(f, "\nexit status: 0 done; 1 slower than the baseline; 2 usage; 3 a benchmark\n"
               "failed (the model returned an error or leaked blocks).\n");
}

void cli_bench_help(FILE *f) { help(f); }

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

int cli_bench(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    bn_config cfg;
    bn_config_default(&cfg);
    int quick = 0, have_names = 0, have_min = 0;
    uint64_t repeats = 5, min_ms = 50, trace = 0;
    double tolerance = 25;
    const char *baseline = NULL;
    size_t nb = bn_count();
    int sel[MAX_BENCH] = {0};
    if (nb > MAX_BENCH) {
        cli_error("bench", "internal: %zu benchmarks, room for %d", nb, MAX_BENCH);
        return CLI_EXIT_INTERNAL;
    }

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help(stdout);
            return CLI_EXIT_OK;
        }
        int r = cli_common_option(&c, MASK, "bench", argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if (strcmp(a, "--quick") == 0) {
            quick = 1;
            continue;
        }
        if ((r = cli_opt_value("bench", "--repeats", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_u64(v, 0, &repeats) < 0 || repeats < 1 || repeats > 1000) {
                cli_error("bench", "--repeats: expected a number from 1 to 1000, got '%s'", v);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        if ((r = cli_opt_value("bench", "--min-time", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_u64(v, 0, &min_ms) < 0 || min_ms > 3600000) {
                cli_error("bench", "--min-time: expected milliseconds (0 to 3600000), got '%s'",
                          v);
                return CLI_EXIT_USAGE;
            }
            have_min = 1;
            continue;
        }
        if ((r = cli_opt_value("bench", "--baseline", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            baseline = v;
            continue;
        }
        if ((r = cli_opt_value("bench", "--tolerance", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            char *end;
            tolerance = strtod(v, &end);
            if (end == v || *end || !(tolerance >= 0) || tolerance > 1e6) {
                cli_error("bench", "--tolerance: expected a percentage >= 0, got '%s'", v);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        if ((r = cli_opt_value("bench", "--trace-memo", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_u64(v, 0, &trace) < 0 || trace < 1 || trace > 100000000) {
                cli_error("bench", "--trace-memo: expected a number of lifecycles, got '%s'", v);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        if (a[0] == '-' && a[1]) {
            cli_unknown_option("bench", a, help);
            return CLI_EXIT_USAGE;
        }
        if (select_names(a, sel) < 0)
            return CLI_EXIT_USAGE;
        have_names = 1;
    }
    if (c.format != RP_TEXT && c.format != RP_JSON) {
        cli_error("bench", "--format: bench writes text or json");
        return CLI_EXIT_USAGE;
    }
    if (trace && have_names && !(sel[bn_find("lifecycle/churn")])) {
        cli_error("bench", "--trace-memo traces lifecycle/churn only");
        return CLI_EXIT_USAGE;
    }
    if (baseline) {
        FILE *bf = fopen(baseline, "rb");
        if (!bf) {
            cli_error("bench", "--baseline: cannot read %s", baseline);
            return CLI_EXIT_USAGE;
        }
        fclose(bf);
    }
    if (quick)
        bn_config_quick(&cfg);
    cfg.repeats = (uint32_t)repeats;
    if (have_min)
        cfg.min_ns = min_ms * 1000000ull;
    cfg.sweep = c.sweep == (int)FK_SWEEP_PERIODIC ? FK_SWEEP_PERIODIC : FK_SWEEP_EAGER;
    if (!have_names)
        for (size_t i = 0; i < nb; i++)
            sel[i] = 1;

    if (cli_env_setup(&c, "bench") < 0)
        return CLI_EXIT_USAGE;
    if (baseline) {
        char *in[1] = {(char *)baseline};
        if (cli_outputs_not_inputs(&c, "bench", in, 1) < 0) {
            cli_env_teardown(&c);
            return CLI_EXIT_USAGE;
        }
    }

    if (trace) {
        int rc = bn_trace_memo(&cfg, trace, c.out);
        if (rc != 0)
            cli_error("bench", "--trace-memo: %s", er_message());
        else if (cli_outputs_commit(&c, "bench") < 0)
            rc = CLI_EXIT_USAGE;
        cli_env_teardown(&c);
        return rc == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : rc ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    }

    bn_result res[MAX_BENCH];
    size_t nres = 0;
    int failed = 0;
    int progress = isatty(fileno(stderr));
    for (size_t i = 0; i < nb; i++) {
        if (!sel[i])
            continue;
        if (progress)
            fprintf(stderr, "\r\033[K%s ...", bn_names(NULL)[i]);
        if (bn_run(i, &cfg, &res[nres]) != 0) {
            cli_error("bench", "%s: %s", res[nres].name, res[nres].message);
            failed = 1;
        }
        nres++;
    }
    if (progress)
        fprintf(stderr, "\r\033[K");

    double calib_spread = 0;
    double calib = bn_calibrate(&calib_spread);
    bn_header h = {FAKEGC_VERSION, c.alloc ? c.alloc->name : c.allocator,
                   fk_policy_name(cfg.sweep), cfg.quick, cfg.repeats, calib};
    int werr = c.format == RP_JSON ? bn_write_json(&h, res, nres, c.out)
                                   : bn_write_text(&h, res, nres, c.out);
    int status = failed ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    if (werr != 0) {
        cli_error("bench", "cannot write the results");
        status = CLI_EXIT_INTERNAL;
    }

    if (baseline) {
        bn_baseline b;
        char err[512];
        if (bn_baseline_read(baseline, &b, err, sizeof err) != 0) {
            cli_error("bench", "--baseline: %s", err);
            cli_env_teardown(&c);
            return CLI_EXIT_USAGE;
        }
        FILE *f = c.format == RP_JSON ? stderr : c.out;
        fprintf(f, "\ncompared with %s:\n", baseline);
        if (b.allocator[0] && strcmp(b.allocator, h.allocator) != 0)
            fprintf(f, "  note: the baseline used allocator %s, this run %s\n", b.allocator,
                    h.allocator);
        if (b.sweep[0] && strcmp(b.sweep, h.sweep) != 0)
            fprintf(f, "  note: the baseline used sweep %s, this run %s\n", b.sweep, h.sweep);
        if (b.quick >= 0 && b.quick != cfg.quick)
            fprintf(f, "  note: the baseline was %s--quick, this run %s\n",
                    b.quick ? "" : "not ", cfg.quick ? "is" : "is not");
        size_t reg = bn_compare_gate(res, nres, &b, tolerance, calib, calib_spread, &cfg, f);
        if (reg && status == CLI_EXIT_OK)
            status = CLI_EXIT_FAIL;
        bn_baseline_free(&b);
    }
    if (cli_outputs_commit(&c, "bench") < 0)
        status = CLI_EXIT_USAGE;
    cli_env_teardown(&c);
    return status;
}
