/* cli_merge.c - `fakegc merge FILE.json...`: join the shard reports of one
 * run, oom or stress campaign (src/report/rp_merge.h) into one report. */
#include "cli/cli.h"

#include <errno.h>
#include <string.h>

#include "report/rp_merge.h"

typedef struct merge_args {
    cli_common c;
} merge_args;

/* The about and tail, their format words from rp_formats
 * (cli_merge_help_make). */
static char merge_about[512], merge_tail[512];

void cli_merge_help_make(void)
{
    const rp_format_row *f = rp_formats;
    snprintf(merge_about, sizeof merge_about,
             "Merge the JSON shard reports of one campaign (`fakegc run|oom|stress ...\n"
             "--shard K/N --format %s`, one per K of 0..N-1) into one report:\n"
             "scenarios concatenated in sorted order, counts summed, stress failures\n"
             "de-duplicated by their shrunk reproducer, and every shard's seeds and\n"
             "machine listed. A missing or duplicated shard, reports of different kinds,\n"
             "or reports whose options differ are refused, naming which.",
             f[RP_JSON].name);
    snprintf(merge_tail, sizeof merge_tail,
             "Exit status:\n  0 the merged campaign found nothing; 1 it has a failure;\n"
             "  2 usage error, the inputs are not one campaign, or a write error;\n"
             "  3 internal error.\n\n"
             "Examples:\n"
             "  fakegc merge shard-*.json --output all.json  one campaign's shards\n"
             "  fakegc merge --format %s shard-*.json  as JUnit",
             f[RP_JUNIT].name);
}

const op_cmd cli_merge_cmd = {
    "merge", "[OPTIONS] FILE.json...", merge_about,
    NULL, CLI_O_FORMAT | CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE, merge_tail,
    NULL, "merge the shard reports of one campaign", 0};

int cli_merge(int argc, char **argv)
{
    merge_args a;
    char **paths;
    int n;
    int r = cli_parse(&cli_merge_cmd, &a, argc, argv, &paths, &n);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    if (n == 0) {
        cli_error("merge", "no reports to merge (fakegc merge --help)");
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&a.c, "merge") < 0)
        return CLI_EXIT_USAGE;
    if (cli_outputs_not_inputs(&a.c, "merge", paths, (size_t)n) < 0) {
        cli_env_teardown(&a.c);
        return CLI_EXIT_USAGE;
    }
    char err[1024];
    rp_merge_result m;
    rp_options ro = {a.c.color, a.c.verbose, a.c.quiet, NULL};
    errno = 0;
    int rc = rp_merge_files((const char **)paths, (size_t)n, a.c.format, a.c.out, &ro, &m, err,
                            sizeof err);
    if (rc == -2 && ferror(a.c.out)) {   /* a write error, not a bug: exit 2 */
        snprintf(err, sizeof err, "cannot write the report to %s: %s",
                 a.c.output ? a.c.output : "standard output", strerror(errno ? errno : EIO));
        rc = -1;
    }
    int commit = rc == 0 ? cli_outputs_commit(&a.c, "merge") : 0;
    cli_env_teardown(&a.c);
    if (rc < 0)
        cli_error("merge", "%s", err);
    if (rc == -1 || commit < 0)
        return CLI_EXIT_USAGE;
    if (rc < 0)
        return CLI_EXIT_INTERNAL;
    return m.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
