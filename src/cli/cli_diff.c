/* cli_diff.c - `fakegc diff BASE.json NEW.json`: what got worse between two
 * JSON reports (rp_read_json + rp_diff of src/report). */
#include "cli/cli.h"

#include <string.h>

#include "core/er.h"
#include "report/rp_diff.h"
#include "report/rp_html.h"
#include "scenario/sc_files.h"

typedef struct diff_args {
    cli_common c;
    int format;           /* rp_diff_format */
    int allow_missing;
} diff_args;

static const op_opt rows[] = {
    OP_ENUM("--format", "FMT", CLI_COMPARE_FORMATS, diff_args, format,
            "text (default), json (schema fakegc-diff/2) or\n"
            "markdown (to post on a pull request)"),
    OP_FLAG("--allow-missing", 0, diff_args, allow_missing,
            "a scenario missing from NEW is a note, not a\n"
            "regression (NEW ran a subset)"),
    OP_END};

/* The about, run's format word from rp_formats (cli_diff_help_make). */
static char diff_about[768];

void cli_diff_help_make(void)
{
    snprintf(diff_about, sizeof diff_about,
             "Compare two JSON reports (fakegc run --format %s), grouped by scenario:\n"
             "`+` what is new in NEW.json (new failures in line order, newly retained\n"
             "groups largest first, each with the retention path and retained size of\n"
             "its dominating object; growth per scenario and checkpoint), `-` what is\n"
             "gone (improvements), `~` notes (peak-byte changes, a changed allocator,\n"
             "compat or inject). The last line counts scenarios and items. A scenario\n"
             "of BASE missing from NEW is a regression. -k compares only the scenarios\n"
             "it matches, in both reports.",
             rp_formats[RP_JSON].name);
}

const op_cmd cli_diff_cmd = {
    "diff", "[OPTIONS] BASE.json NEW.json", diff_about,
    rows, CLI_O_OUTPUT | CLI_O_OUTPUT_STYLE | CLI_O_HTML | CLI_O_SELECT,
    "Exit status:\n  0 no regression; 1 a regression; 2 usage error or an\n"
    "  unreadable report; 3 internal error.\n\n"
    "Examples:\n"
    "  fakegc diff base.json new.json  what regressed\n"
    "  fakegc diff --format markdown base.json new.json  a pull-request comment\n"
    "  fakegc diff main.json fakegc.json  two record reports, paired by program",
    NULL, "compare two JSON reports", 0};

/* Read BASE and NEW. 0; or the exit code, printed: an empty or cut-off NEW
 * is a regression (the run it came from did not finish), one that cannot
 * be read or is not a report a usage error (2), as --help says. */
static int read_both(diff_args *a, char **files, rp_run *runs, int *nread)
{
    char err[512];
    switch (rp_diff_read(files[0], files[1], runs, nread, err, sizeof err)) {
    case RP_DIFF_READ:
        return 0;
    case RP_DIFF_UNFINISHED:
        fprintf(a->c.out, "regression: the new report is empty or incomplete: %s\n", err);
        return cli_outputs_commit(&a->c, "diff") < 0 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    case RP_DIFF_OOM:
        cli_error("diff", "%s", err);
        return CLI_EXIT_INTERNAL;
    default:
        cli_error("diff", "%s", err);
        return CLI_EXIT_USAGE;
    }
}

static int keep_match(const char *file, void *pattern)
{
    return sc_files_path_matches(pattern, file);
}

/* Compare the two reports read (only -k's scenarios): the exit status. */
static int compare(diff_args *a, char **files, rp_run *runs)
{
    rp_run view[2];
    int nview = 0;
    while (a->c.match && nview < 2 && rp_run_view(&runs[nview], keep_match,
                                                  (void *)a->c.match, &view[nview]) == 0)
        nview++;
    int r = a->c.match && nview < 2 ? -1 : 0;
    const rp_run *b = nview ? &view[0] : &runs[0], *c = nview ? &view[1] : &runs[1];
    int exit_code = r < 0 ? CLI_EXIT_INTERNAL : CLI_EXIT_OK;
    if (r == 0 && nview && !b->n && !c->n) {
        cli_error("diff", "-k %s: no scenario matches", a->c.match);
        exit_code = CLI_EXIT_USAGE;
        r = -1;
    }
    if (r == 0) {
        cli_canary_leak("diff");
        rp_diff_options ro = {.color = a->format == RP_DIFF_TEXT &&
                                       rp_color_wanted(a->c.color_when, a->c.out),
                              .verbose = a->c.verbose, .allow_missing = a->allow_missing,
                              .format = (rp_diff_format)a->format};
        r = rp_diff_write(b, c, a->c.out, &ro);
        exit_code = r < 0 ? CLI_EXIT_INTERNAL : r > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        if (r >= 0 && a->c.html_f &&
            rp_write_html_diff(a->c.html_f, b, c, files[0], files[1], &ro) < 0) {
            cli_error("diff", "--html: cannot write %s", a->c.html);
            exit_code = CLI_EXIT_USAGE;
        } else if (r >= 0 && cli_outputs_commit(&a->c, "diff") < 0) {
            exit_code = CLI_EXIT_USAGE;
        }
    }
    while (nview)
        rp_run_view_free(&view[--nview]);
    return exit_code;
}

int cli_diff(int argc, char **argv)
{
    diff_args a = {.format = RP_DIFF_TEXT};
    char **files;
    int nfiles;
    int r = cli_parse(&cli_diff_cmd, &a, argc, argv, &files, &nfiles);
    if (r != OP_PARSE_OK)
        return op_parse_exit(r);
    if (nfiles != 2) {
        cli_error("diff", "expected two reports (BASE.json NEW.json), got %d (fakegc diff --help)",
                  nfiles);
        return CLI_EXIT_USAGE;
    }
    if (cli_env_setup(&a.c, "diff") < 0)
        return CLI_EXIT_USAGE;
    if (cli_outputs_not_inputs(&a.c, "diff", files, 2) < 0) {
        cli_env_teardown(&a.c);
        return CLI_EXIT_USAGE;
    }
    rp_run runs[2];
    memset(runs, 0, sizeof runs);
    int nread = 0;
    int exit_code = read_both(&a, files, runs, &nread);
    if (nread == 2)
        exit_code = compare(&a, files, runs);
    for (int k = 0; k < nread; k++)
        rp_run_free_read(&runs[k]);
    er_clear();
    cli_env_teardown(&a.c);   /* nothing compared: an old file stays as it was */
    return exit_code;
}
