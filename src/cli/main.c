/* main.c - `fakegc COMMAND ...`: dispatch to the subcommands.
 *
 * The table refers to every command weakly: a command whose file is not
 * built yet is listed as "not built" and exits 2 instead of breaking the
 * link. A command is added by writing src/cli/cli_NAME.c with
 * `int cli_NAME(int argc, char **argv)` (declared in cli.h) and a row here. */
#include "cli/cli.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#pragma weak cli_run
#pragma weak cli_list
#pragma weak cli_stress
#pragma weak cli_shrink
#pragma weak cli_oom
#pragma weak cli_diff
#pragma weak cli_bench
#pragma weak cli_merge
#pragma weak cli_run_help
#pragma weak cli_list_help
#pragma weak cli_stress_help
#pragma weak cli_shrink_help
#pragma weak cli_oom_help
#pragma weak cli_diff_help
#pragma weak cli_bench_help
#pragma weak cli_merge_help

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    void (*help)(FILE *f);       /* its --help text: the options it documents */
    const char *summary;
} command;

static const command commands[] = {
    {"run", cli_run, cli_run_help, "run scenario files (or every *.scn under folders)"},
    {"stress", cli_stress, cli_stress_help, "random tensor lifecycles checked against a model"},
    {"shrink", cli_shrink, cli_shrink_help, "minimize a failing scenario"},
    {"oom", cli_oom, cli_oom_help, "fail each allocation in turn; every run must end cleanly"},
    {"diff", cli_diff, cli_diff_help, "compare two JSON reports"},
    {"merge", cli_merge, cli_merge_help, "merge the shard reports of one campaign"},
    {"bench", cli_bench, cli_bench_help, "the benchmark suite"},
    {"list", cli_list, cli_list_help, "list bugs, allocators or benches"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Where the installed scripts (bisect.sh, xref/, ...) and data (scenarios,
 * report schemas) are: beside the binary's prefix (PREFIX/bin/fakegc ->
 * PREFIX/libexec/fakegc), else the source tree this binary was built from. */
static void where(const char *rel, const char *src_sub, char *buf, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    struct stat st;
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            slash = strrchr(exe, '/');
            if (slash && strcmp(slash, "/bin") == 0) {
                *slash = '\0';
                snprintf(buf, n, "%s/%s", exe, rel);
                if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
                    return;
            }
        }
    }
    snprintf(buf, n, "%s/%s", FAKEGC_SOURCE_DIR, src_sub);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: fakegc COMMAND [OPTIONS] [ARGS]\n\n"
               "fakegc %s - memory-leak analysis and GC stress for a C model of\n"
               "PyTorch 1.13 fake tensors.\n\ncommands:\n", FAKEGC_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s%s\n", commands[i].name, commands[i].summary,
                commands[i].fn ? "" : " (not built)");
    fprintf(f, "\noptions:\n"
               "  --help, --version    this text; the version\n"
               "  --libexec-dir        where the scripts are (bisect.sh, xref/xref.py)\n"
               "  --data-dir           where the shipped scenarios and report schemas are\n"
               "\n`fakegc COMMAND --help` for a command's options.\n"
               "exit status: 0 everything held; 1 a failure or retained objects; 2 usage\n"
               "or parse error (nothing ran); 3 internal error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    /* a global long option abbreviated as getopt_long allows (--vers) */
    static const char *const longs[] = {"--help", "--version", "--libexec-dir", "--data-dir"};
    size_t nlong = 0, hit = 0;
    for (size_t i = 0; cmd[0] == '-' && cmd[1] == '-' && cmd[2] && i < 4; i++)
        if (strncmp(longs[i], cmd, strlen(cmd)) == 0)
            hit = i, nlong++;
    if (nlong == 1)
        cmd = longs[hit];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0 && commands[i].fn) {
                    char *args[] = {argv[2], (char *)"--help", NULL};
                    return commands[i].fn(2, args);
                }
        }
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--libexec-dir") == 0 || strcmp(cmd, "--data-dir") == 0) {
        char buf[PATH_MAX + 64];
        if (cmd[2] == 'l')
            where(FAKEGC_REL_LIBEXEC, "scripts", buf, sizeof buf);
        else
            where(FAKEGC_REL_DATA, "", buf, sizeof buf);
        printf("%s\n", buf);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("fakegc %s\n", FAKEGC_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        if (!commands[i].fn) {
            cli_error(NULL, "command '%s' is not built in this version", cmd);
            return CLI_EXIT_USAGE;
        }
        /* getopt_long's abbreviations, the same for every command */
        if (commands[i].help &&
            cli_expand_abbreviations(cmd, argc - 1, argv + 1, commands[i].help) < 0)
            return CLI_EXIT_USAGE;
        return commands[i].fn(argc - 1, argv + 1);
    }
    static const char *const global[] = {"--help", "--version", "--libexec-dir", "--data-dir",
                                         "help"};
    const char *best = cmd[0] == '-' ? cli_suggest(cmd, global, 4, sizeof global[0])
                                     : cli_suggest(cmd, commands, NCOMMANDS, sizeof commands[0]);
    if (!best && cmd[0] != '-')
        best = cli_suggest(cmd, global + 4, 1, sizeof global[0]);
    const char *what = cmd[0] == '-' ? "option" : "command";
    if (best)
        cli_error(NULL, "unknown %s '%s'; did you mean '%s'?", what, cmd, best);
    else
        cli_error(NULL, "unknown %s '%s' (fakegc --help lists them)", what, cmd);
    return CLI_EXIT_USAGE;
}
