/* cli_merge.c - `fakegc merge FILE.json...`: join the shard reports of one
 * run, oom or stress campaign (src/report/rp_merge.h) into one report. */
#include "cli/cli.h"

#include <string.h>
#include <sys/stat.h>

#include "report/rp_merge.h"

#define MERGE_MASK (CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE)

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc merge [OPTIONS] FILE.json...\n\n"
            "Merge the JSON shard reports of one campaign (`fakegc run|oom|stress ...\n"
            "--shard K/N --format json`, one per K of 0..N-1) into one report:\n"
            "scenarios concatenated in sorted order, counts summed, stress failures\n"
            "de-duplicated by their shrunk reproducer, and every shard's seeds and\n"
            "machine listed. A missing or duplicated shard, reports of different kinds,\n"
            "or reports whose options differ are refused, naming which.\n\noptions:\n");
    cli_common_help(f, MERGE_MASK);
    fprintf(f, "  --help               this text\n\n"
               "exit status: 0 the merged campaign found nothing; 1 it has a failure;\n"
               "2 usage error, or the inputs are not one campaign; 3 internal error.\n");
}

void cli_merge_help(FILE *f) { help(f); }

int cli_merge(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char **paths = (const char **)argv + 1;
    size_t n = 0;
    int only_paths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_paths && a[0] == '-' && a[1]) {
            if (strcmp(a, "--") == 0) {
                only_paths = 1;
                continue;
            }
            if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                help(stdout);
                return CLI_EXIT_OK;
            }
            int r = cli_common_option(&c, MERGE_MASK, "merge", argc, argv, &i);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r == 0) {
                cli_error("merge", "unknown option '%s' (fakegc merge --help)", a);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        paths[n++] = a;
    }
    if (n == 0) {
        cli_error("merge", "no reports to merge (fakegc merge --help)");
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&c, "merge") < 0)
        return CLI_EXIT_USAGE;
    if (cli_outputs_not_inputs(&c, "merge", (char *const *)paths, n) < 0) {
        cli_env_teardown(&c);
        return CLI_EXIT_USAGE;
    }
    char err[1024];
    rp_merge_result m;
    rp_options ro = {c.color, c.verbose, c.quiet};
    int rc = rp_merge_files(paths, n, c.format, c.out, &ro, &m, err, sizeof err);
    if (rc == 0 && cli_outputs_commit(&c, "merge") < 0) {
        cli_env_teardown(&c);
        return CLI_EXIT_USAGE;
    }
    cli_env_teardown(&c);
    if (rc == -1) {
        cli_error("merge", "%s", err);
        return CLI_EXIT_USAGE;
    }
    if (rc < 0) {
        cli_error("merge", "%s", err);
        return CLI_EXIT_INTERNAL;
    }
    return m.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
