/* cli_shard.h - `--shard K/N` for run, oom and stress (the split rule and
 * its value: vl_shard, value/vl.h), and the single-process command that
 * reproduces a shard's failure.
 *
 *   vl_shard s = VL_SHARD_NONE;   // a CLI_SHARD_ROW stores into it
 *   ...
 *   cli_scenarios(&c, "run", paths, npaths, &s, &files);   // this shard's files
 */
#ifndef FAKEGC_CLI_SHARD_H
#define FAKEGC_CLI_SHARD_H

#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"

/* The --shard row (vl_shard_parse) into a vl_shard. */
#define CLI_SHARD_ROW(T, f, h) OP_FN("--shard", 0, "K/N", NULL, T, f, vl_shard_parse, h)

/* This machine's name (gethostname; "?" when it has none). */
const char *cli_hostname(void);

/* The command line that reproduces one item in a single process:
 * "fakegc CMD ARGS... EXTRA" where ARGS are argv[1..argc) (as cli_parse
 * left them) without --shard, --format, --output and without the options
 * in drop (each "--name", its value dropped with it; NULL-terminated, may
 * be NULL), and without the operands when drop_operands. Which options
 * take a value comes from cmd's rows. Written into buf (truncated to n). */
void cli_repro_command(char *buf, size_t n, const op_cmd *cmd, int argc, char **argv,
                       const char *const *drop, int drop_operands, const char *extra);

#endif
