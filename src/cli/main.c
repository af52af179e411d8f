/* main.c - `fakegc COMMAND ...`: dispatch to the subcommands. A command is
 * added by writing src/cli/cli_NAME.c with `int cli_NAME(int argc, char
 * **argv)` and its cli_NAME_cmd (declared in cli.h), and a row here. */
#include "cli/cli.h"
#include "scenario/sc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


typedef struct command {
    int (*fn)(int argc, char **argv);
    const op_cmd *cmd;          /* its rows and help */
} command;

static const command commands[] = {
    {cli_run, &cli_run_cmd},     {cli_record, &cli_record_cmd}, {cli_stress, &cli_stress_cmd},
    {cli_shrink, &cli_shrink_cmd}, {cli_oom, &cli_oom_cmd},     {cli_diff, &cli_diff_cmd},
    {cli_merge, &cli_merge_cmd}, {cli_bench, &cli_bench_cmd},   {cli_list, &cli_list_cmd},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const op_cmd *const *cli_commands(size_t *n)
{
    static const op_cmd *all[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        all[i] = commands[i].cmd;
    *n = NCOMMANDS;
    return all;
}

const op_cmd *cli_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].cmd->name, name) == 0)
            return commands[i].cmd;
    return NULL;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: fakegc COMMAND [OPTIONS] [ARGS]\n\n"
               "fakegc %s - memory-leak analysis and GC stress for a C model of\n"
               "PyTorch 1.13 fake tensors.\n\ncommands:\n", FAKEGC_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].cmd->name, commands[i].cmd->summary);
    fprintf(f, "\noptions:\n"
               "  --help, --version    this text; the version\n"
               "  --libexec-dir        where the scripts are (bisect.sh, xref/xref.py)\n"
               "  --data-dir           where the shipped scenarios and report schemas are\n"
               "\n`fakegc COMMAND --help` for a command's options.\n\n"
               "Exit status:\n  0 everything held; 1 a failure or retained objects; 2 usage\n"
               "  or parse error (nothing ran); 3 internal error.\n\n"
               "Examples:\n"
               "  fakegc run scenarios                  every shipped scenario\n"
               "  fakegc record -- train.py             does my program leak fakes?\n"
               "  fakegc stress --seconds 60            random lifecycles against a model\n"
               "  fakegc help record                    a command's options\n");
    return ferror(f) ? -1 : 0;
}

/* `fakegc --help`, `--version`, `--libexec-dir`, `--data-dir` (each
 * abbreviated as getopt_long allows: --vers); -1 when cmd is none of them. */
static const char *const longs[] = {"--help", "--version", "--libexec-dir", "--data-dir"};

static int global_option(const char *cmd)
{
    size_t nlong = 0, hit = 0;
    for (size_t i = 0; cmd[0] == '-' && cmd[1] == '-' && cmd[2] && i < 4; i++)
        if (strncmp(longs[i], cmd, strlen(cmd)) == 0)
            hit = i, nlong++;
    if (nlong == 1)
        cmd = longs[hit];
    int w;
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        w = usage(stdout);
    } else if (strcmp(cmd, "--libexec-dir") == 0 || strcmp(cmd, "--data-dir") == 0) {
        char buf[PATH_MAX + 64];
        if (cmd[2] == 'l')
            cli_where(FAKEGC_REL_LIBEXEC, "scripts", buf, sizeof buf);
        else
            cli_where(FAKEGC_REL_DATA, "", buf, sizeof buf);
        w = printf("%s\n", buf) < 0;
    } else if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        w = cli_version(stdout);
    } else {
        return -1;
    }
    return w == 0 && cli_flush_stdout(NULL) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

static int unknown_command(const char *cmd)
{
    const char *names[NCOMMANDS + 1];
    size_t n = 0;
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[n++] = commands[i].cmd->name;
    names[n++] = "help";
    const char *best = cmd[0] == '-' ? sc_closest(cmd, longs, 4, sizeof longs[0], 2)
                                     : sc_closest(cmd, names, n, sizeof names[0], 2);
    const char *what = cmd[0] == '-' ? "option" : "command";
    if (best)
        cli_error(NULL, "unknown %s '%s'; did you mean '%s'?", what, cmd, best);
    else
        cli_error(NULL, "unknown %s '%s' (fakegc --help lists them)", what, cmd);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    for (size_t i = 0; strcmp(cmd, "help") == 0 && argc > 2 && i < NCOMMANDS; i++)
        if (strcmp(argv[2], commands[i].cmd->name) == 0) {
            char *args[] = {argv[2], (char *)"--help", NULL};
            return commands[i].fn(2, args);
        }
    if (strcmp(cmd, "help") == 0)
        cmd = "--help";
    int g = global_option(cmd);
    if (g >= 0)
        return g;
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].cmd->name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return unknown_command(cmd);
}
