/* cli_shard.h - `--shard K/N` for run, oom and stress, and the
 * single-process command that reproduces a shard's failure.
 *
 * The split rule (README "Campaigns"): item i of the
 * campaign's sorted list (a scenario file for run and oom, a lifecycle for
 * stress) belongs to shard i mod N. The rule depends only on the list, so
 * N shards on N machines together do exactly what one process does.
 *
 *   cli_shard s = CLI_SHARD_NONE;   // a CLI_SHARD_ROW stores into it
 *   ...
 *   cli_scenarios(&c, "run", paths, npaths, &s, &files);   // this shard's files
 */
#ifndef FAKEGC_CLI_SHARD_H
#define FAKEGC_CLI_SHARD_H

#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"

typedef struct cli_shard {
    uint32_t k, n;        /* n == 0: not sharded */
    size_t total;         /* items of the whole campaign (after cli_scenarios) */
} cli_shard;

#define CLI_SHARD_NONE {0, 0, 0}

/* "K/N" with 0 <= K < N <= 1000000. 0, or -1. */
int cli_parse_shard(const char *v, uint32_t *k, uint32_t *n);

/* The --shard row's parser (CLI_K_FN) into a cli_shard. */
int cli_shard_parse(void *at, const char *v, char *err, size_t n);
#define CLI_SHARD_ROW(T, f, h) CLI_FN("--shard", 0, "K/N", NULL, T, f, cli_shard_parse, h)

/* This machine's name (gethostname; "?" when it has none). */
const char *cli_hostname(void);

/* The command line that reproduces one item in a single process:
 * "fakegc CMD ARGS... EXTRA" where ARGS are argv[1..argc) (as cli_parse
 * left them) without --shard, --format, --output and without the options
 * in drop (each "--name", its value dropped with it; NULL-terminated, may
 * be NULL), and without the operands when drop_operands. Which options
 * take a value comes from cmd's rows. Written into buf (truncated to n). */
void cli_repro_command(char *buf, size_t n, const cli_cmd *cmd, int argc, char **argv,
                       const char *const *drop, int drop_operands, const char *extra);

#endif
