/* cli_stress.c - `fakegc stress`: random tensor lifecycles checked against
 * the independent model of src/stress; a failure is written, shrunk and
 * printed, and the command exits 1. */
#include "cli/cli.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_shard.h"
#include "core/obj.h"
#include "fake/fk.h"
#include "stress/st.h"
#include "report/rp_jw.h"
#include "worker/wk.h"

typedef struct stress_args {
    cli_common c;
    st_stress_opts o;
    uint64_t steps;
    double seconds;
    cli_order order;
    cli_shard shard;
    const char *weights, *html;
    int no_shrink, dump;
} stress_args;

static const cli_opt rows[] = {
    CLI_UINT("--seed", 0, "S", stress_args, o.seed, 0, UINT64_MAX,
             "lifecycle i has seed S+i (default 1)"),
    CLI_UINT("--steps", 0, "N", stress_args, steps, 1, UINT64_MAX,
             "a budget of ceil(N / L) lifecycles of L steps\n"
             "(default 100000 unless --seconds)"),
    CLI_FN("--seconds", 0, "T", NULL, stress_args, seconds, cli_parse_seconds,
           "stop after T seconds"),
    CLI_SHARD_ROW(stress_args, shard,
                  "only lifecycles i with i mod N == K (K from 0 to N-1):\n"
                  "N shards together run what one process runs"),
    CLI_UINT("--lifecycle", 0, "L", stress_args, o.cfg.steps, 1, 1000000,
             "steps per lifecycle (default 1000)"),
    CLI_UINT("--check-every", 0, "K", stress_args, o.check_every, 0, UINT64_MAX,
             "verify heap/memo/allocator invariants every K steps\n(default 1000, 0: never)"),
    CLI_FN("--order", 0, "KNOB[,KNOB]", CLI_ORDER_WORDS, stress_args, order, cli_parse_order,
           CLI_ORDER_HELP),
    CLI_STR("--weights", "N=W[,...]", stress_args, weights,
            "action weights (see below; expect is a percentage)"),
    CLI_DIR("--out-dir", "DIR", stress_args, o.out_dir,
            "where failures are written (default build/stress)"),
    CLI_FLAG("--no-shrink", 0, stress_args, no_shrink,
             "write the failing lifecycle without minimizing it"),
    CLI_FLAG("--dump", 0, stress_args, dump, "print the lifecycle of --seed and exit"),
    CLI_STR("--html", "FILE", stress_args, html,
            "on a failure, the page of the reproducer's run\n(fakegc run --html), path printed"),
    CLI_ENUM("--format", "FMT", "text|json", stress_args, c.format,
             "text (default) or json (schema fakegc-stress/2)"),
    CLI_END};

static void weights_help(FILE *f)
{
    fprintf(f, "\nweights (defaults):\n");
    for (int i = 0; i < ST_W_COUNT; i++)
        fprintf(f, "  %-15s %4u  %s\n", st_weight_name(i), st_weight_default(i),
                st_weight_help(i));
}

const cli_cmd cli_stress_cmd = {
    "stress", "[OPTIONS]",
    "Random tensor lifecycles from a seed, checked against an independent model\n"
    "of the fake-tensor semantics (expectations it predicts, heap and memo\n"
    "invariants every --check-every steps, the strict end check of every\n"
    "lifecycle). A failing lifecycle is written to OUT_DIR/stress-seed-S.scn,\n"
    "minimized to stress-seed-S.min.scn and printed; the exit status is then 1.",
    rows,
    CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | CLI_O_FORMAT |
        CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE,
    "exit status: 0 nothing found; 1 a failure (reproducer written);\n"
    "2 usage error; 3 internal error.",
    weights_help, "random tensor lifecycles checked against a model"};

/* The reproducers go to DIR: make it (like mkdir -p) and prove a file can
 * be created in it before any work (stress printed reproducer paths it had
 * never written). -1 with the reason printed. */
static int out_dir_unwritable(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *q = buf + 1;; q++) {
        if (*q == '/' || *q == '\0') {
            char c = *q;
            *q = '\0';
            if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
                cli_error("stress", "--out-dir %s: cannot create %s: %s", dir, buf,
                          strerror(errno));
                return -1;
            }
            *q = c;
            if (!c)
                break;
        }
    }
    snprintf(buf, sizeof buf, "%s/.fakegc-probe-%ld", dir, (long)getpid());
    int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        cli_error("stress", "--out-dir %s: cannot write in it: %s", dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(buf);
    return 0;
}

static void json_failure(FILE *out, const st_stress_result *r, const char *repro)
{
    fprintf(out, ",\n \"failure\": {\"seed\": %" PRIu64 ", \"lifecycle_index\": %" PRIu64
            ", \"steps_to_detection\": %" PRIu64 ", \"reproduce\": ", r->fail_seed,
            r->fail_index, r->fail_steps);
    rp_json_string(out, repro);
    fprintf(out, ", \"class\": ");
    rp_json_string(out, r->cls);
    fprintf(out, ", \"first\": ");
    rp_json_string(out, r->first);
    if (strncmp(r->cls, "finding: ", 9) == 0) {   /* a bad access: its site and kind */
        char kind[64];
        wk_finding_kind(r->cls + 9, kind, sizeof kind);
        fprintf(out, ", \"finding\": {\"kind\": ");
        rp_json_string(out, kind);
        fprintf(out, ", \"line\": %lu}", strtoul(r->first, NULL, 10));
    }
    fprintf(out, ", \"file\": ");
    rp_json_string(out, r->file);
    fprintf(out, ", \"statements\": %zu, \"min_file\": ", r->file_statements);
    rp_json_string(out, r->min_file);
    fprintf(out, ", \"min_statements\": %zu, \"shrink_runs\": %u, \"reproducer\": ",
            r->min_statements, r->shrink_runs);
    rp_json_string(out, r->min_text.p ? r->min_text.p : "");
    fprintf(out, "}");
}

/* The JSON report (schema fakegc-stress/2). */
static void write_json(const stress_args *a, int rc, const st_stress_result *r,
                       const char *repro)
{
    FILE *out = a->c.out;
    const st_stress_opts *o = &a->o;
    const cli_common *c = &a->c;
    fprintf(out, "{\"schema\": \"%s\", \"tool\": \"fakegc\", \"command\": \"stress\", "
            "\"version\": \"%s\", \"commit\": \"%s\",\n", RP_SCHEMA_STRESS, FAKEGC_VERSION,
            cli_version_commit());
    fprintf(out, " \"allocator\": ");
    rp_json_string(out, c->allocator);
    fprintf(out, ", \"inject\": [");
    char ib[512];
    snprintf(ib, sizeof ib, "%s", c->inject ? c->inject : "");
    int k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(ib, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fputs(k++ ? ", " : "", out);
        rp_json_string(out, tok);
    }
    fprintf(out, "], \"compat\": %s%s%s,\n", c->compat ? "\"" : "",
            c->compat ? c->compat : "null", c->compat ? "\"" : "");
    fprintf(out, " \"status\": \"%s\",\n", rc < 0 ? "error" : r->failed ? "fail" : "pass");
    fprintf(out, " \"seed\": %" PRIu64 ", \"shard\": [%u, %u], \"lifecycle\": %u, "
            "\"check_every\": %" PRIu64 ",\n", o->seed, o->shard_k, o->shard_n, o->cfg.steps,
            o->check_every);
    /* the campaign this shard is part of: lifecycles first, first+stride, ... */
    uint64_t budget = st_stress_lifecycles(o);
    fprintf(out, " \"host\": ");
    rp_json_string(out, cli_hostname());
    fprintf(out, ", \"budget\": {\"steps\": %" PRIu64 ", \"seconds\": %g, \"lifecycles\": ",
            o->max_steps, o->max_seconds);
    if (budget == UINT64_MAX)
        fprintf(out, "null");
    else
        fprintf(out, "%" PRIu64, budget);
    fprintf(out, "}, \"lifecycle_first\": %u, \"lifecycle_stride\": %u,\n", o->shard_k,
            o->shard_n ? o->shard_n : 1);
    fprintf(out, " \"order\": {\"callbacks_reverse\": %s, \"defer_callbacks\": %s, "
            "\"address_reuse\": %s, \"weak_clear_late\": %s}, \"gc\": \"%s\",\n",
            a->order.reverse ? "true" : "false", a->order.defer ? "true" : "false",
            a->order.reuse ? "true" : "false", a->order.late ? "true" : "false",
            c->gc == 2 ? "stress" : "manual");
    fprintf(out, " \"weights\": {");
    for (int i = 0; i < ST_W_COUNT; i++)
        fprintf(out, "%s\"%s\": %u", i ? ", " : "", st_weight_name(i), o->cfg.weights.w[i]);
    double sps = r->seconds > 0 ? (double)r->steps / r->seconds : 0;
    fprintf(out, "},\n \"steps\": %" PRIu64 ", \"statements\": %" PRIu64
            ", \"lifecycles\": %" PRIu64 ", \"seconds\": %.3f, \"steps_per_second\": %.0f, "
            "\"max_live_objects\": %" PRIu64 ",\n", r->steps, r->statements, r->lifecycles,
            r->seconds, sps, r->max_live);
    fprintf(out, " \"failures\": %d", r->failed);
    if (r->failed)
        json_failure(out, r, repro);
    fprintf(out, "\n}\n");
}

/* The text report: the failure with its reproducer, and the totals. */
static void write_text(const stress_args *a, const st_stress_result *r, const char *repro)
{
    FILE *out = a->c.out;
    const cli_common *c = &a->c;
    if (r->failed) {
        fprintf(out, "FAIL stress seed %" PRIu64 " after %" PRIu64 " steps: %s\n", r->fail_seed,
                r->fail_steps, r->cls);
        fprintf(out, "  first failure: %s\n", r->first);
        if (r->file[0])
            fprintf(out, "  lifecycle: %s (%zu statements)\n", r->file, r->file_statements);
        if (r->min_file[0])
            fprintf(out, "  reproducer: %s (%zu statements, %u runs to shrink)\n\n",
                    r->min_file, r->min_statements, r->shrink_runs);
        if (r->min_text.p)
            fputs(r->min_text.p, out);
        fprintf(out, "\nlifecycle %" PRIu64 " alone, in one process: %s\n", r->fail_index,
                repro);
        if (r->write_error)
            fprintf(out, "  (could not write %s: %s)\n", r->unwritten, strerror(r->write_error));
        /* the allocator too: a guard finding needs the guard; no --verify
         * for a finding, whose broken heap --verify would report one
         * statement earlier as an invariant instead */
        int guarded = strncmp(r->cls, "finding: ", 9) == 0;
        const char *inj = a->o.env.inject;
        if (inj && *inj && (r->min_file[0] || r->file[0]))
            fprintf(out, "\nreproduce: fakegc run%s --inject %s%s%s%s%s %s\n",
                    guarded ? "" : " --verify", inj,
                    strcmp(c->allocator, "libc") ? " --allocator " : "",
                    strcmp(c->allocator, "libc") ? c->allocator : "",
                    c->compat ? " --compat " : "", c->compat ? c->compat : "",
                    r->min_file[0] ? r->min_file : r->file);
    }
    double sps = r->seconds > 0 ? (double)r->steps / r->seconds : 0;
    if (!c->quiet || r->failed)
        fprintf(out, "stress: %" PRIu64 " steps (%" PRIu64 " statements, %" PRIu64
                " lifecycles) in %.2f s, %.0f steps/s, %d failure%s\n", r->steps,
                r->statements, r->lifecycles, r->seconds, sps, r->failed,
                r->failed == 1 ? "" : "s");
}

/* --html: the reproducer's run (the "reproduce:" line) writes the page,
 * whole or not at all. The exit code: a's, or 2 when it was not written. */
static int write_page(const stress_args *a, const st_stress_result *r, int exit_code)
{
    const char *file = r->min_file[0] ? r->min_file : r->file;
    if (!r->failed || !file[0]) {
        fprintf(stderr, "fakegc stress: nothing failed: no page written (--html)\n");
        return exit_code;
    }
    char *v[16];
    int n = 0;
    const char *inj = a->o.env.inject;
    const cli_common *c = &a->c;
    v[n++] = (char *)"run";
    v[n++] = (char *)"-q";
    v[n++] = (char *)"--output=/dev/null";
    if (strncmp(r->cls, "finding: ", 9) != 0)
        v[n++] = (char *)"--verify";
    const char *kv[][2] = {{"--inject", inj && *inj ? inj : NULL},
                           {"--allocator", strcmp(c->allocator, "libc") ? c->allocator : NULL},
                           {"--compat", c->compat}, {"--html", a->html}};
    for (size_t k = 0; k < sizeof kv / sizeof *kv; k++)
        if (kv[k][1]) {
            v[n++] = (char *)kv[k][0];
            v[n++] = (char *)kv[k][1];
        }
    v[n++] = (char *)"--";
    v[n++] = (char *)file;
    v[n] = NULL;
    int rc = cli_run(n, v);
    if (rc == CLI_EXIT_USAGE || rc == CLI_EXIT_INTERNAL)
        return CLI_EXIT_USAGE;   /* cli_run said why */
    fprintf(stderr, "fakegc stress: the reproducer's page: %s\n", a->html);
    return exit_code;
}

/* The campaign's options into a->o once the command line is parsed. 0,
 * or -1 (printed). */
static int campaign(stress_args *a)
{
    st_stress_opts *o = &a->o;
    if (a->weights) {
        char err[512];
        if (st_weights_parse(&o->cfg.weights, a->weights, err, sizeof err) < 0) {
            cli_error("stress", "%s", err);
            return -1;
        }
    }
    if (a->c.gc == 1) {
        cli_error("stress", "--gc auto: the model cannot predict threshold collections; "
                  "use manual or stress");
        return -1;
    }
    if (a->c.design >= 0 && !st_design_predicted(a->c.design)) {
        cli_error("stress", "--compat %s: the stress model does not predict this design "
                  "yet (it predicts the default design and pytorch-1.13)", a->c.compat);
        return -1;
    }
    if (!a->dump && o->out_dir && out_dir_unwritable(o->out_dir) < 0)
        return -1;
    o->shard_k = a->shard.k;
    o->shard_n = a->shard.n ? a->shard.n : 1;
    o->shrink = !a->no_shrink;
    o->max_steps = !a->steps && a->seconds <= 0 ? 100000 : a->steps;
    o->max_seconds = a->seconds;
    return 0;
}

/* After cli_env_setup: the model's and the scenarios' settings. */
static void environment(stress_args *a)
{
    st_stress_opts *o = &a->o;
    const cli_common *c = &a->c;
    o->cfg.defer_callbacks = a->order.defer;
    o->cfg.gc_stress = c->gc == 2;
    fk_design_id design = c->design >= 0 ? (fk_design_id)c->design : FK_D_DEFAULT;
    o->cfg.design = (int)design;
    o->cfg.policy = c->sweep >= 0 ? c->sweep : (int)fk_design_get(design)->policy;
    o->cfg.sweep_every = 128;
    st_env_default(&o->env);
    o->env.inject = c->inject ? c->inject : "";
    o->env.sc.gc = c->gc;
    o->env.sc.sweep = c->sweep;
    o->env.sc.design = c->design;
    o->env.sc.end_check = 1;
    st_env_prepare(&o->env);
    o->check_clean = c->inject && *c->inject;
    o->progress = !c->quiet && isatty(2);
}

/* --dump: the lifecycle of --seed as it would run, and nothing else. */
static int dump(stress_args *a)
{
    st_script s = {0};
    st_text t = {0};
    int rc = st_generate(&a->o.cfg, a->o.seed, &s, &t, NULL, NULL) < 0 ? CLI_EXIT_INTERNAL : 0;
    if (!rc) {
        fputs(t.p ? t.p : "", a->c.out);
        rc = cli_outputs_commit(&a->c, "stress") < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    st_script_free(&s);
    st_text_free(&t);
    return rc;
}

int cli_stress(int argc, char **argv)
{
    stress_args a = {.shard = CLI_SHARD_NONE};
    cli_common_init(&a.c);
    st_config_default(&a.o.cfg);
    a.o.seed = 1;
    a.o.check_every = 1000;
    char **ops;
    int nops;
    int r = cli_parse(&cli_stress_cmd, &a, argc, argv, &ops, &nops);
    if (r != CLI_PARSE_OK)
        return cli_parse_exit(r);
    if (nops) {
        cli_error("stress", "unexpected operand '%s' (fakegc stress --help)", ops[0]);
        return CLI_EXIT_USAGE;
    }
    if (campaign(&a) < 0)
        return CLI_EXIT_USAGE;
    char spec[256];
    obj_config saved;
    cli_order_apply(&a.order, &a.c, spec, sizeof spec, &saved);
    if (cli_env_setup(&a.c, "stress") < 0) {
        obj_configure(&saved);
        return CLI_EXIT_USAGE;
    }
    environment(&a);
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
        if (a.c.format == RP_JSON)
            write_json(&a, rc, &res, repro);
        else
            write_text(&a, &res, repro);
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
