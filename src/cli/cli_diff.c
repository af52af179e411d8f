/* cli_diff.c - `fakegc diff BASE.json NEW.json`: what got worse between two
 * JSON reports (rp_read_json + rp_diff of src/report). */
#include "cli/cli.h"
#include <sys/stat.h>

#include <string.h>

#include "core/er.h"
#include "report/rp_html.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: fakegc diff [OPTIONS] BASE.json NEW.json\n\n"
            "Compare two JSON reports (fakegc run --format json), grouped by scenario:\n"
            "`+` what is new in NEW.json (new failures in line order, newly retained\n"
            "groups largest first, each with the retention path and retained size of\n"
            "its dominating object; growth per scenario and checkpoint), `-` what is\n"
            "gone (improvements), `~` notes (peak-byte changes, a changed allocator,\n"
            "compat or inject). The last line counts scenarios and items. A scenario\n"
            "of BASE missing from NEW is a regression.\n\noptions:\n"
            "  --format FMT         text (default), json (schema fakegc-diff/2) or\n"
            "                       markdown (to post on a pull request)\n"
            "  --allow-missing      a scenario missing from NEW is a note, not a\n"
            "                       regression (NEW ran a subset)\n");
    cli_common_help(f, CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE | CLI_O_HTML);
    fprintf(f, "  --help               this text\n\n"
               "exit status: 0 no regression; 1 a regression; 2 usage error or an\n"
               "unreadable report; 3 internal error.\n");
}

void cli_diff_help(FILE *f) { help(f); }

int cli_diff(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *files[2] = {NULL, NULL};
    int nfiles = 0, allow_missing = 0, only_files = 0;
    rp_diff_format fmt = RP_DIFF_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            help(stdout);
            return CLI_EXIT_OK;
        }
        if (!only_files && strcmp(a, "--") == 0) {
            only_files = 1;
            continue;
        }
        if (!only_files && strcmp(a, "--allow-missing") == 0) {
            allow_missing = 1;
            continue;
        }
        const char *v = NULL;
        int fr = only_files ? 0 : cli_opt_value("diff", "--format", argc, argv, &i, &v);
        if (fr < 0)
            return CLI_EXIT_USAGE;
        if (fr > 0) {
            static const char *const names[] = {"text", "json", "markdown", NULL};
            int k = 0;
            while (names[k] && strcmp(names[k], v) != 0)
                k++;
            if (!names[k]) {
                cli_error("diff", "--format: unknown value '%s' (expected text, json, markdown)",
                          v);
                return CLI_EXIT_USAGE;
            }
            fmt = (rp_diff_format)k;
            continue;
        }
        if (!only_files && a[0] == '-' && a[1]) {
            int r = cli_common_option(&c, CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE | CLI_O_HTML, "diff", argc, argv,
                                      &i);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r == 0) {
                cli_unknown_option("diff", a, help);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        if (nfiles == 2) {
            cli_error("diff", "expected two reports, got a third: '%s'", a);
            return CLI_EXIT_USAGE;
        }
        files[nfiles++] = a;
    }
    if (nfiles != 2) {
        help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&c, "diff") < 0)
        return CLI_EXIT_USAGE;
    if (cli_outputs_not_inputs(&c, "diff", (char *const *)files, 2) < 0) {
        cli_env_teardown(&c);
        return CLI_EXIT_USAGE;
    }
    rp_run runs[2];
    memset(runs, 0, sizeof runs);
    int exit_code = CLI_EXIT_OK, nread = 0;
    for (int k = 0; k < 2; k++) {
        char err[512] = "";
        if (rp_read_json(files[k], &runs[k], err, sizeof err) != 0) {
            struct stat st;
            if (k == 1 && er_kind_get() != ER_OOM && stat(files[k], &st) == 0 &&
                S_ISREG(st.st_mode)) {
                /* an empty or cut-off new report: the run it came from did
                 * not finish, which is a regression, not a usage error */
                fprintf(c.out, "regression: the new report is empty or incomplete: %s\n",
                        err[0] ? err : "unreadable");
                exit_code = cli_outputs_commit(&c, "diff") < 0 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
            } else {
                cli_error("diff", "%s", err[0] ? err : "cannot read the report");
                exit_code = er_kind_get() == ER_OOM ? CLI_EXIT_INTERNAL : CLI_EXIT_USAGE;
            }
            break;
        }
        nread++;
    }
    if (nread == 2) {
        cli_canary_leak("diff");
        rp_diff_options ro;
        memset(&ro, 0, sizeof ro);
        ro.color = fmt == RP_DIFF_TEXT && cli_color_wanted(c.no_color, c.out);
        ro.verbose = c.verbose;
        ro.allow_missing = allow_missing;
        ro.format = fmt;
        int r = rp_diff_write(&runs[0], &runs[1], c.out, &ro);
        exit_code = r < 0 ? CLI_EXIT_INTERNAL : r > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (r >= 0 && c.html_f &&
            rp_write_html_diff(c.html_f, &runs[0], &runs[1], files[0], files[1], &ro) < 0) {
            cli_error("diff", "--html: cannot write %s", c.html);
            exit_code = CLI_EXIT_USAGE;
        } else if (cli_outputs_commit(&c, "diff") < 0)
            exit_code = CLI_EXIT_USAGE;
    }
    for (int k = 0; k < nread; k++)
        rp_run_free_read(&runs[k]);
    er_clear();
    cli_env_teardown(&c);   /* nothing compared: an old file stays as it was */
    return exit_code;
}
