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
#include "worker/wk.h"

#define STRESS_MASK (CLI_O_ALLOCATOR | CLI_O_INJECT | CLI_O_COMPAT | CLI_O_GC | CLI_O_SWEEP | \
                     CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE)

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc stress [OPTIONS]\n\n"
            "Random tensor lifecycles from a seed, checked against an independent model\n"
            "of the fake-tensor semantics (expectations it predicts, heap and memo\n"
            "invariants every --check-every steps, the strict end check of every\n"
            "lifecycle). A failing lifecycle is written to OUT_DIR/stress-seed-S.scn,\n"
            "minimized to stress-seed-S.min.scn and printed; the exit status is then 1.\n\n"
            "options:\n"
            "  --seed S             lifecycle i has seed S+i (default 1)\n"
            "  --steps N            a budget of ceil(N / L) lifecycles of L steps\n"
            "                       (default 100000 unless --seconds)\n"
            "  --seconds T          stop after T seconds\n"
            "  --shard K/N          only lifecycles i with i mod N == K (K from 0 to N-1):\n"
            "                       N shards together run what one process runs\n"
            "  --lifecycle L        steps per lifecycle (default 1000)\n"
            "  --check-every K      verify heap/memo/allocator invariants every K steps\n"
            "                       (default 1000, 0: never)\n"
            "  --order KNOB[,KNOB]  reverse (weak callbacks newest first), defer\n"
            "                       (callbacks at the next safe point), reuse (addresses\n"
            "                       reused at once: guard allocator, quarantine 0),\n"
            "                       weakrefs-late (weak handles cleared after the\n"
            "                       callbacks; weakrefs-first is the default), all\n"
            "  --weights N=W[,...]  action weights (see below; expect is a percentage)\n"
            "  --out-dir DIR        where failures are written (default build/stress)\n"
            "  --no-shrink          write the failing lifecycle without minimizing it\n"
            "  --dump               print the lifecycle of --seed and exit\n");
    cli_common_help(f, STRESS_MASK & ~(unsigned)CLI_O_FORMAT);
    fprintf(f, "  --format FMT         text (default) or json (schema fakegc-stress/2)\n"
               "  --help               this text\n\nweights (defaults):\n");
    for (int i = 0; i < ST_W_COUNT; i++)
        fprintf(f, "  %-15s %4u  %s\n", st_weight_name(i), st_weight_default(i),
                st_weight_help(i));
    fprintf(f, "\nexit status: 0 nothing found; 1 a failure (reproducer written);\n"
               "2 usage error; 3 internal error.\n");
}

void cli_stress_help(FILE *f) { help(f); }

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

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

int cli_stress(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    st_stress_opts o;
    memset(&o, 0, sizeof o);
    st_config_default(&o.cfg);
    o.seed = 1;
    o.shard_n = 1;
    o.check_every = 1000;
    o.shrink = 1;
    uint64_t steps = 0;
    double seconds = 0;
    int reverse = 0, defer = 0, reuse = 0, late = 0;
    const char *weights = NULL;
    int dump = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int r;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help(stdout);
            return CLI_EXIT_OK;
        }
        r = cli_common_option(&c, STRESS_MASK, "stress", argc, argv, &i);
        if (r < 0)
            return CLI_EXIT_USAGE;
        if (r > 0)
            continue;
        if ((r = cli_opt_value("stress", "--seed", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_u64(v, 0, &o.seed) < 0) {
                cli_error("stress", "--seed: expected a number, got '%s'", v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else if ((r = cli_opt_value("stress", "--steps", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_u64(v, 0, &steps) < 0 || steps == 0) {
                /* 0 silently ran the default 100k steps */
                cli_error("stress", "--steps: expected a number >= 1, got '%s'", v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else if ((r = cli_opt_value("stress", "--seconds", argc, argv, &i, &v)) != 0) {
            char *end = NULL;
            seconds = r > 0 ? strtod(v, &end) : -1;
            if (r < 0 || !end || *end || seconds <= 0) {
                cli_error("stress", "--seconds: expected a positive number, got '%s'",
                          v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else if ((r = cli_opt_value("stress", "--shard", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_shard(v, &o.shard_k, &o.shard_n) < 0) {
                cli_error("stress", "--shard: expected K/N with 0 <= K < N, got '%s'",
                          v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else if ((r = cli_opt_value("stress", "--lifecycle", argc, argv, &i, &v)) != 0) {
            uint64_t x;
            if (r < 0 || cli_parse_u64(v, 0, &x) < 0 || x < 1 || x > 1000000) {
                cli_error("stress", "--lifecycle: expected 1 to 1000000, got '%s'", v ? v : "");
                return CLI_EXIT_USAGE;
            }
            o.cfg.steps = (uint32_t)x;
        } else if ((r = cli_opt_value("stress", "--check-every", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_u64(v, 0, &o.check_every) < 0) {
                cli_error("stress", "--check-every: expected a number, got '%s'", v ? v : "");
                return CLI_EXIT_USAGE;
            }
        } else if ((r = cli_opt_value("stress", "--order", argc, argv, &i, &v)) != 0) {
            if (r < 0 || cli_parse_order("stress", v, &reverse, &defer, &reuse, &late) < 0)
                return CLI_EXIT_USAGE;
        } else if ((r = cli_opt_value("stress", "--weights", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            weights = v;
        } else if ((r = cli_opt_value("stress", "--out-dir", argc, argv, &i, &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            o.out_dir = v;
        } else if (strcmp(a, "--no-shrink") == 0) {
            o.shrink = 0;
        } else if (strcmp(a, "--dump") == 0) {
            dump = 1;
        } else {
            cli_unknown_option("stress", a, help);
            return CLI_EXIT_USAGE;
        }
    }
    if (weights) {
        char err[512];
        if (st_weights_parse(&o.cfg.weights, weights, err, sizeof err) < 0) {
            cli_error("stress", "%s", err);
            return CLI_EXIT_USAGE;
        }
    }
    if (c.gc == 1) {
        cli_error("stress", "--gc auto: the model cannot predict threshold collections; "
                  "use manual or stress");
        return CLI_EXIT_USAGE;
    }
    if (c.design >= 0 && !st_design_predicted(c.design)) {
        cli_error("stress", "--compat %s: the stress model does not predict this design "
                  "yet (it predicts the default design and pytorch-1.13)", c.compat);
        return CLI_EXIT_USAGE;
    }
    if (c.format != RP_TEXT && c.format != RP_JSON) {
        cli_error("stress", "--format: text or json");
        return CLI_EXIT_USAGE;
    }
    if (!dump && o.out_dir && out_dir_unwritable(o.out_dir) < 0)
        return CLI_EXIT_USAGE;
    if (!steps && seconds <= 0)
        steps = 100000;
    o.max_steps = steps;
    o.max_seconds = seconds;
    static char spec[256];
    if (reuse && !strstr(c.allocator, "guard")) {
        snprintf(spec, sizeof spec, "guard:q=0/%s", c.allocator);
        c.allocator = spec;
    }
    if (cli_env_setup(&c, "stress") < 0)
        return CLI_EXIT_USAGE;
    obj_config saved = obj_get_config();
    obj_config oc = saved;
    oc.callbacks_reverse = reverse;
    oc.defer_callbacks = defer;
    oc.weak_clear_late = late;
    obj_configure(&oc);

    o.cfg.defer_callbacks = defer;
    o.cfg.gc_stress = c.gc == 2;
    fk_design_id design = c.design >= 0 ? (fk_design_id)c.design : FK_D_DEFAULT;
    o.cfg.design = (int)design;
    o.cfg.policy = c.sweep >= 0 ? c.sweep : (int)fk_design_get(design)->policy;
    o.cfg.sweep_every = 128;
    st_env_default(&o.env);
    o.env.inject = c.inject ? c.inject : "";
    o.env.sc.gc = c.gc;
    o.env.sc.sweep = c.sweep;
    o.env.sc.design = c.design;
    o.env.sc.end_check = 1;
    st_env_prepare(&o.env);
    o.check_clean = c.inject && *c.inject;
    o.progress = !c.quiet && isatty(2);

    if (dump) {
        /* the lifecycle of --seed as it would run, and nothing else */
        st_script s = {0};
        st_text t = {0};
        int bad = st_generate(&o.cfg, o.seed, &s, &t, NULL, NULL) < 0;
        if (!bad) {
            fputs(t.p ? t.p : "", c.out);
            bad = cli_outputs_commit(&c, "stress") < 0 ? CLI_EXIT_USAGE : 0;
        }
        st_script_free(&s);
        st_text_free(&t);
        obj_configure(&saved);
        cli_env_teardown(&c);
        return bad == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : bad ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    }
    st_stress_result r;
    int rc = st_stress(&o, &r);
    int exit_code = CLI_EXIT_OK;
    if (rc < 0) {
        cli_error("stress", "%s", r.first);
        exit_code = CLI_EXIT_INTERNAL;
    } else if (r.failed) {
        exit_code = CLI_EXIT_FAIL;
    }
    if (rc == 0 && r.write_error) {   /* a write error: exit 2, with path and errno */
        cli_error("stress", "cannot write %s: %s", r.unwritten, strerror(r.write_error));
        exit_code = CLI_EXIT_USAGE;
    }
    double sps = r.seconds > 0 ? (double)r.steps / r.seconds : 0;
    FILE *out = c.out;
    /* the failing lifecycle alone, in one process: seed S+i, one lifecycle */
    char repro[1024] = "", extra[96];
    if (r.failed) {
        static const char *const drop[] = {"--seed", "--steps", "--seconds", NULL};
        snprintf(extra, sizeof extra, "--seed %" PRIu64 " --steps %u", r.fail_seed,
                 o.cfg.steps);
        cli_repro_command(repro, sizeof repro, "stress", argc, argv, drop, 0, extra);
    }
    uint64_t budget = st_stress_lifecycles(&o);
    if (c.format == RP_JSON) {
        fprintf(out, "{\"schema\": \"%s\", \"tool\": \"fakegc\", \"command\": \"stress\", "
                "\"version\": \"%s\",\n", RP_SCHEMA_STRESS, FAKEGC_VERSION);
        fprintf(out, " \"allocator\": ");
        json_str(out, c.allocator);
        fprintf(out, ", \"inject\": [");
        {
            char ib[512];
            snprintf(ib, sizeof ib, "%s", c.inject ? c.inject : "");
            int k = 0;
            char *save = NULL;
            for (char *tok = strtok_r(ib, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                fputs(k++ ? ", " : "", out);
                json_str(out, tok);
            }
        }
        fprintf(out, "], \"compat\": %s%s%s,\n", c.compat ? "\"" : "",
                c.compat ? c.compat : "null", c.compat ? "\"" : "");
        fprintf(out, " \"status\": \"%s\",\n", rc < 0 ? "error" : r.failed ? "fail" : "pass");
        fprintf(out, " \"seed\": %" PRIu64 ", \"shard\": [%u, %u], \"lifecycle\": %u, "
                "\"check_every\": %" PRIu64 ",\n", o.seed, o.shard_k, o.shard_n, o.cfg.steps,
                o.check_every);
        /* the campaign this shard is part of: lifecycles first, first+stride, ... */
        fprintf(out, " \"host\": ");
        json_str(out, cli_hostname());
        fprintf(out, ", \"budget\": {\"steps\": %" PRIu64 ", \"seconds\": %g, "
                "\"lifecycles\": ", o.max_steps, o.max_seconds);
        if (budget == UINT64_MAX)
            fprintf(out, "null");
        else
            fprintf(out, "%" PRIu64, budget);
        fprintf(out, "}, \"lifecycle_first\": %u, \"lifecycle_stride\": %u,\n", o.shard_k,
                o.shard_n ? o.shard_n : 1);
        fprintf(out, " \"order\": {\"callbacks_reverse\": %s, \"defer_callbacks\": %s, "
                "\"address_reuse\": %s, \"weak_clear_late\": %s}, \"gc\": \"%s\",\n",
                reverse ? "true" : "false", defer ? "true" : "false",
                reuse ? "true" : "false", late ? "true" : "false",
                c.gc == 2 ? "stress" : "manual");
        fprintf(out, " \"weights\": {");
        for (int i = 0; i < ST_W_COUNT; i++)
            fprintf(out, "%s\"%s\": %u", i ? ", " : "", st_weight_name(i), o.cfg.weights.w[i]);
        fprintf(out, "},\n \"steps\": %" PRIu64 ", \"statements\": %" PRIu64
                ", \"lifecycles\": %" PRIu64 ", \"seconds\": %.3f, \"steps_per_second\": %.0f, "
                "\"max_live_objects\": %" PRIu64 ",\n", r.steps, r.statements, r.lifecycles,
                r.seconds, sps, r.max_live);
        fprintf(out, " \"failures\": %d", r.failed);
        if (r.failed) {
            fprintf(out, ",\n \"failure\": {\"seed\": %" PRIu64 ", \"lifecycle_index\": %"
                    PRIu64 ", \"steps_to_detection\": %" PRIu64 ", \"reproduce\": ",
                    r.fail_seed, r.fail_index, r.fail_steps);
            json_str(out, repro);
            fprintf(out, ", \"class\": ");
            json_str(out, r.cls);
            fprintf(out, ", \"first\": ");
            json_str(out, r.first);
            if (strncmp(r.cls, "finding: ", 9) == 0) {   /* a bad access: its site and kind */
                char kind[64];
                wk_finding_kind(r.cls + 9, kind, sizeof kind);
                fprintf(out, ", \"finding\": {\"kind\": ");
                json_str(out, kind);
                fprintf(out, ", \"line\": %lu}", strtoul(r.first, NULL, 10));
            }
            fprintf(out, ", \"file\": ");
            json_str(out, r.file);
            fprintf(out, ", \"statements\": %zu, \"min_file\": ", r.file_statements);
            json_str(out, r.min_file);
            fprintf(out, ", \"min_statements\": %zu, \"shrink_runs\": %u, \"reproducer\": ",
                    r.min_statements, r.shrink_runs);
            json_str(out, r.min_text.p ? r.min_text.p : "");
            fprintf(out, "}");
        }
        fprintf(out, "\n}\n");
    } else {
        if (r.failed) {
            fprintf(out, "FAIL stress seed %" PRIu64 " after %" PRIu64 " steps: %s\n",
                    r.fail_seed, r.fail_steps, r.cls);
            fprintf(out, "  first failure: %s\n", r.first);
            if (r.file[0])
                fprintf(out, "  lifecycle: %s (%zu statements)\n", r.file, r.file_statements);
            if (r.min_file[0])
                fprintf(out, "  reproducer: %s (%zu statements, %u runs to shrink)\n\n",
                        r.min_file, r.min_statements, r.shrink_runs);
            if (r.min_text.p)
                fputs(r.min_text.p, out);
            fprintf(out, "\nlifecycle %" PRIu64 " alone, in one process: %s\n", r.fail_index,
                    repro);
            if (r.write_error)
                fprintf(out, "  (could not write %s: %s)\n", r.unwritten,
                        strerror(r.write_error));
            /* the allocator too: a guard finding needs the guard; no
             * --verify for a finding, whose broken heap --verify would
             * report one statement earlier as an invariant instead */
            int guarded = strncmp(r.cls, "finding: ", 9) == 0;
            if (o.env.inject && *o.env.inject && (r.min_file[0] || r.file[0]))
                fprintf(out, "\nreproduce: fakegc run%s --inject %s%s%s%s%s %s\n",
                        guarded ? "" : " --verify", o.env.inject,
                        strcmp(c.allocator, "libc") ? " --allocator " : "",
                        strcmp(c.allocator, "libc") ? c.allocator : "",
                        c.compat ? " --compat " : "", c.compat ? c.compat : "",
                        r.min_file[0] ? r.min_file : r.file);
        }
        if (!c.quiet || r.failed)
            fprintf(out, "stress: %" PRIu64 " steps (%" PRIu64 " statements, %" PRIu64
                    " lifecycles) in %.2f s, %.0f steps/s, %d failure%s\n", r.steps,
                    r.statements, r.lifecycles, r.seconds, sps, r.failed,
                    r.failed == 1 ? "" : "s");
    }
    if (cli_outputs_commit(&c, "stress") < 0)
        exit_code = CLI_EXIT_USAGE;
    st_text_free(&r.min_text);
    obj_configure(&saved);
    cli_env_teardown(&c);
    return exit_code;
}
