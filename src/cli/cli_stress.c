/* cli_stress.c - `fakegc stress`: random tensor lifecycles checked against
 * the independent model of src/stress; a failure is written, shrunk and
 * printed, and the command exits 1. */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_shard.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "stress/st_report.h"
#include "stress/st_setup.h"

typedef struct stress_args {
    cli_common c;
    st_stress_opts o;
    uint64_t steps;
    double seconds;
    vl_order order;
    vl_shard shard;
    const char *weights, *html;
    int no_shrink, dump;
    int scan_format;   /* --format: an index of scan_formats */
} stress_args;

/* stress's own report formats (its writers are src/stress's), named by
 * their rows of rp_formats: --format's words are these in order, its value
 * the index here. */
static const rp_format scan_formats[] = {RP_TEXT, RP_JSON, RP_SARIF, RP_GITHUB};
enum { N_SCAN = sizeof scan_formats / sizeof scan_formats[0] };

static int scan_words(void *at, const char *v, char *buf, size_t n)
{
    (void)at, (void)v;
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_SCAN && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? "|" : "",
                              rp_formats[scan_formats[i]].name);
    return 0;
}

/* The help of --format and --sarif FILE and the tail's examples, made from
 * rp_formats' names and titles and the design table before any command
 * parses (cli_stress_help_make). */
static char format_help[320], sarif_help[64], stress_tail[512];

void cli_stress_help_make(void)
{
    const rp_format_row *f = rp_formats;
    snprintf(format_help, sizeof format_help,
             "%s (default), %s (schema fakegc-stress/2),\n"
             "%s (%s: the failure at the lifecycle's\n"
             "line, the reproducer related) or %s (a GitHub\n"
             "workflow command ::error file=F,line=L::...)",
             f[RP_TEXT].name, f[RP_JSON].name, f[RP_SARIF].name, f[RP_SARIF].title,
             f[RP_GITHUB].name);
    snprintf(sarif_help, sizeof sarif_help, "also write %s to FILE", f[RP_SARIF].title);
    snprintf(stress_tail, sizeof stress_tail,
             "Exit status:\n  0 nothing found; 1 a failure (reproducer written);\n"
             "  2 usage error; 3 internal error.\n\n"
             "Examples:\n"
             "  fakegc stress --seconds 60  a minute of random lifecycles\n"
             "  fakegc stress --inject strong-memo --steps 10000  find a planted bug\n"
             "  fakegc stress --compat %s %s stress.%s  a failure as SARIF",
             fk_design_get(FK_D_1_13)->name, f[RP_SARIF].option, f[RP_SARIF].name);
}

static const op_opt rows[] = {
    OP_UINT("--seed", 0, "S", stress_args, o.seed, 0, UINT64_MAX,
            "lifecycle i has seed S+i (default 1)"),
    OP_UINT("--steps", 0, "N", stress_args, steps, 1, UINT64_MAX,
            "a budget of ceil(N / L) lifecycles of L steps\n"
            "(default 100000 unless --seconds)"),
    OP_FN("--seconds", 0, "T", NULL, stress_args, seconds, vl_seconds,
          "stop after T seconds"),
    CLI_SHARD_ROW(stress_args, shard,
                  "only lifecycles i with i mod N == K (K from 0 to N-1):\n"
                  "N shards together run what one process runs"),
    OP_UINT("--lifecycle", 0, "L", stress_args, o.cfg.steps, 1, 1000000,
            "steps per lifecycle (default 1000)"),
    OP_UINT("--check-every", 0, "K", stress_args, o.check_every, 0, UINT64_MAX,
            "verify heap/memo/allocator invariants every K steps\n(default 1000, 0: never)"),
    OP_FN("--order", 0, "KNOB[,KNOB]", CLI_ORDER_WORDS, stress_args, order, vl_order_parse,
          CLI_ORDER_HELP),
    OP_STR("--weights", "N=W[,...]", stress_args, weights,
           "action weights (see below; expect is a percentage)"),
    OP_DIR("--out-dir", "DIR", stress_args, o.out_dir,
           "where failures are written (default build/stress)"),
    OP_FLAG("--no-shrink", 0, stress_args, no_shrink,
            "write the failing lifecycle without minimizing it"),
    OP_FLAG("--dump", 0, stress_args, dump, "print the lifecycle of --seed and exit"),
    OP_STR("--html", "FILE", stress_args, html,
           "on a failure, the page of the reproducer's run\n(fakegc run --html), path printed"),
    {"--format", 0, OP_K_ENUM, OP_SZ(stress_args, scan_format), 0, 0, "FMT", NULL, 0, 0,
     offsetof(stress_args, scan_format), scan_words, format_help},
    {rp_formats[RP_SARIF].option, 0, OP_K_OUT, 0, 0, 0, "FILE", NULL, 0, 0,
     offsetof(stress_args, c.also[RP_SARIF]), NULL, sarif_help},
    OP_END};

/* Each weight's line: its help, then the version it needs and the design
 * it is for, by name: "(version 3, pytorch-2.3 only)". */
static void weights_help(FILE *f)
{
    fprintf(f, "\nweights (defaults):\n");
    for (int i = 0; i < ST_W_COUNT; i++) {
        unsigned v = st_weight_version(i);
        const fk_design *only = st_weight_only(i) ? fk_design_get(st_weight_only(i)) : NULL;
        char ver[16] = "", note[64] = "";
        if (v)
            snprintf(ver, sizeof ver, "version %u", v);
        if (v || only)
            snprintf(note, sizeof note, " (%s%s%s%s)", ver, v && only ? ", " : "",
                     only ? only->name : "", only ? " only" : "");
        fprintf(f, "  %-15s %4u  %s%s\n", st_weight_name(i), st_weight_default(i),
                st_weight_help(i), note);
    }
}

const op_cmd cli_stress_cmd = {
    "stress", "[OPTIONS]",
    "Random tensor lifecycles from a seed, checked against an independent model\n"
    "of the fake-tensor semantics (expectations it predicts, heap and memo\n"
    "invariants every --check-every steps, the strict end check of every\n"
    "lifecycle). A failing lifecycle is written to OUT_DIR/stress-seed-S.scn,\n"
    "minimized to stress-seed-S.min.scn and printed; the exit status is then 1.",
    rows,
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_FORMAT |
        CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE,
    stress_tail, weights_help, "random tensor lifecycles checked against a model", 0};

/* --html: the reproducer's run (the "reproduce:" line) writes the page,
 * whole or not at all. The exit code: a's, or 2 when it was not written. */
static int write_page(const stress_args *a, const st_stress_result *r, int exit_code)
{
    const char *file = r->min_file[0] ? r->min_file : r->file;
    if (!r->failed || !file[0]) {
        fprintf(stderr, "fakegc stress: nothing failed: no page written (--html)\n");
        return exit_code;
    }
    cli_common h;   /* `run -q --output /dev/null [--verify] --html FILE` */
    cli_common_init(&h);
    h.cmd = &cli_run_cmd;
    h.quiet = 1;
    h.output = "/dev/null";
    h.html = a->html;
    h.sc.verify = r->cls_kind != ST_CK_FINDING;
    h.inject = a->o.env.inject && *a->o.env.inject ? a->o.env.inject : NULL;
    h.allocator = a->c.allocator;
    h.compat = a->c.compat;
    h.sc.design = a->c.sc.design;
    char *paths[] = {(char *)file};
    int rc = cli_run_files(&h, NULL, paths, 1, NULL);
    if (rc == CLI_EXIT_USAGE || rc == CLI_EXIT_INTERNAL)
        return CLI_EXIT_USAGE;   /* cli_run said why */
    fprintf(stderr, "fakegc stress: the reproducer's page: %s\n", a->html);
    return exit_code;
}

/* --out-dir's default: the user's cache ($XDG_CACHE_HOME when absolute,
 * else $HOME/.cache), /tmp without either; not the working folder, where a
 * run from anywhere scattered build/stress folders. */
static const char *default_out_dir(char *buf, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(buf, n, "%s/fakegc/stress", xdg);
    else if (home && home[0] == '/')
        snprintf(buf, n, "%s/.cache/fakegc/stress", home);
    else
        snprintf(buf, n, "/tmp/fakegc-stress-%ld", (long)getuid());
    return buf;
}

/* The command line's plain values for st_setup.h. */
static st_campaign campaign(const stress_args *a)
{
    const cli_common *c = &a->c;
    return (st_campaign){a->weights, c->inject, c->sc.gc, c->sc.sweep, c->sc.design, a->steps,
                         a->seconds, a->shard.k, a->shard.n, !a->no_shrink, a->order.defer,
                         c->quiet};
}

/* --dump: the lifecycle of --seed as it would run, and nothing else. */
static int dump(stress_args *a)
{
    if (st_dump(&a->o.cfg, a->o.seed, a->c.out) < 0)
        return CLI_EXIT_INTERNAL;
    return cli_outputs_commit(&a->c, "stress") < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

int cli_stress(int argc, char **argv)
{
    stress_args a = {.shard = VL_SHARD_NONE};
    st_config_default(&a.o.cfg);
    a.o.seed = 1;
    a.o.check_every = 1000;
    char **ops;
    int nops;
    int r = cli_parse(&cli_stress_cmd, &a, argc, argv, &ops, &nops);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    if (nops) {
        cli_error("stress", "unexpected operand '%s' (fakegc stress --help)", ops[0]);
        return CLI_EXIT_USAGE;
    }
    st_campaign camp = campaign(&a);
    char err[600], outdir[PATH_MAX];
    if (a.dump)
        a.o.out_dir = NULL;   /* nothing is written there */
    else if (!a.o.out_dir)
        a.o.out_dir = default_out_dir(outdir, sizeof outdir);
    if (st_campaign_check(&a.o, &camp, err, sizeof err) < 0) {
        cli_error("stress", "%s", err);
        return CLI_EXIT_USAGE;
    }
    char spec[256];
    obj_config saved;
    cli_order_apply(&a.order, &a.c, spec, sizeof spec, &saved);
    if (cli_env_setup(&a.c, "stress") < 0) {
        obj_configure(&saved);
        return CLI_EXIT_USAGE;
    }
    st_campaign_env(&a.o, &camp);
    int exit_code;
    st_stress_result res = {0};
    if (a.dump) {
        exit_code = dump(&a);
    } else {
        int rc = st_stress(&a.o, &res);
        exit_code = rc < 0 ? CLI_EXIT_INTERNAL : res.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (rc < 0)
            cli_error("stress", "%s", res.first);
        if (rc == 0 && res.write_error) {   /* a write error: exit 2, with path and errno */
            cli_error("stress", "cannot write %s: %s", res.unwritten, strerror(res.write_error));
            exit_code = CLI_EXIT_USAGE;
        }
        char repro[1024] = "", extra[96];
        if (res.failed) {
            static const char *const drop[] = {"--seed", "--steps", "--seconds", NULL};
            snprintf(extra, sizeof extra, "--seed %" PRIu64 " --steps %u", res.fail_seed,
                     a.o.cfg.steps);
            cli_repro_command(repro, sizeof repro, &cli_stress_cmd, argc, argv, drop, 0, extra);
        }
        st_doc_head h = {FAKEGC_VERSION, cli_version_commit(), a.c.allocator, a.c.inject,
                         a.c.compat, cli_hostname(), 0, 0, 0};
        rp_format sf = scan_formats[a.scan_format];
        st_stress_doc d = {a.c.out, sf == RP_JSON, a.c.quiet,
                           sf == RP_SARIF ? 1 : sf == RP_GITHUB ? 2 : 0,
                           cli_output_file(&a.c, rp_formats[RP_SARIF].option), &h, &a.o,
                           {a.order.reverse, a.order.defer, a.order.reuse, a.order.late},
                           a.c.sc.gc == SC_GC_STRESS, repro};
        if (st_stress_doc_write(&d, rc, &res) < 0) {
            cli_error("stress", "cannot write the report: %s", strerror(errno ? errno : EIO));
            exit_code = CLI_EXIT_USAGE;
        }
        if (cli_outputs_commit(&a.c, "stress") < 0)
            exit_code = CLI_EXIT_USAGE;
        st_text_free(&res.min_text);
    }
    obj_configure(&saved);
    cli_env_teardown(&a.c);
    if (a.html && !a.dump && exit_code != CLI_EXIT_USAGE && exit_code != CLI_EXIT_INTERNAL)
        exit_code = write_page(&a, &res, exit_code);
    return exit_code;
}
