/* cli_pool.h - `run --jobs N`: scenarios in N reused worker processes.
 *
 * Each worker is forked once and runs scenario after scenario: the parent
 * sends it an index on a pipe, the worker runs that program (which it has
 * since the fork), writes the one-scenario JSON record to its own file in a
 * private temporary folder and answers with the index. A worker that dies
 * (a crash, its --timeout alarm) makes the scenario in hand an `error` with
 * what it said on stderr, and a new worker takes its place; the others go
 * on. Workers die with the parent (PR_SET_PDEATHSIG) and remove their own
 * files when they do; the parent removes the folder.
 *
 *   if (cli_pool_run(&c, progs, n, res, dot, tl, done, arg) < 0) ...   // printed; exit 3
 *   // res[i] is scenario i's record; with cli_interrupted() some are empty
 *
 * done (may be NULL) is called with each record as it is complete, in the
 * order they finish (for streamed PASS/FAIL lines). A worker stopped by the
 * guard allocator or a decref of a dead object makes its scenario a
 * failure with the finding's kind and statement line (a finding, exit 1),
 * not an error.
 *
 * With tl (an array of n, or NULL) each worker samples its scenario's
 * --timeline series and hands it back beside the record (rp_timeline_save
 * to a file of the folder); a scenario whose worker died gets a series
 * without points, with its status and failed lines marked.
 *
 * The parent stops handing out scenarios when cli_interrupted() or
 * cli_stopping() is set and waits for those in hand. Returns 0, -2
 * (printed) when its temporary folder cannot be made (TMPDIR: an
 * environment error, exit 2), or -1 (printed) when it cannot start at all
 * otherwise.
 */
#ifndef FAKEGC_CLI_POOL_H
#define FAKEGC_CLI_POOL_H

#include <stdio.h>

#include "cli/cli.h"
#include "report/rp_timeline.h"
#include "scenario/sc.h"

int cli_pool_run(const cli_common *c, sc_program *const *progs, size_t n, rp_scenario *res,
                 FILE *dot, rp_timeline *tl, void (*done)(void *arg, const rp_scenario *s),
                 void *done_arg);

/* The string pools of the workers' reports read back: the records moved
 * into res[] point into them (types, sites), so they live until this call,
 * after the report is written and res[] cleared. Safe to call always. */
void cli_pool_release(void);

/* The sc_options of the command line (cli_run.c); dot: the graph's file. */
void cli_run_options(const cli_common *c, sc_options *o, FILE *dot);
/* --timeline (cli_run.c): the sc_options.on_statement hook that samples
 * into the rp_timeline it is given, and the marks and title of a finished
 * scenario (its status, failed lines, and the del/gc() lines of file). */
void cli_timeline_hook(void *arg, uint32_t line, uint64_t objects, uint64_t bytes);
void cli_timeline_end(rp_timeline *t, const rp_scenario *s, const char *file);

#endif
