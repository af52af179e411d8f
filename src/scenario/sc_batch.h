/* sc_batch.h - many parsed programs run into one collection of records
 * (report/rp_collect.h): in this process, one after the other, or in
 * reused worker processes (worker/wk.h, wk_pool_run), the way `fakegc run`
 * runs them with and without --jobs.
 *
 *   sc_batch b = {.jobs = 2, .timeout = 60, .done = done, .stop = stop};
 *   sc_options_default(&b.opt);           // the run's options; dot, objects
 *   rp_collect col; rp_collect_init(&col, n, want_timelines);
 *   ssize_t ran = sc_batch_run(&b, progs, n, &col, err, sizeof err);
 *   // col.res[0..ran): the records that finished, in program order
 *
 * In this process (jobs 0), program i runs with opt (dot_cluster i), its
 * --timeline series sampled into col.tl[i] when col.tl is set. In workers
 * (jobs >= 1), each program's record, series, and its pieces of opt.dot and
 * opt.objects are written by the worker to anonymous files (unlinked: a
 * SIGKILL leaves nothing behind) and merged by the parent: the records
 * into col (rp_collect_read), the pieces into opt.dot and opt.objects in
 * program order, for the programs that finished. A worker that dies makes
 * its program an error saying how (crash, timeout, exit), or a failure
 * "finding: KIND" when a bad access stopped it; a new worker takes its
 * place.
 *
 * done(arg, i) runs in the parent as program i's record is complete (in the
 * order they end). stop() (NULL: never) is asked between programs: 0 goes
 * on, -1 stops handing out programs (those in hand finish), a signal number
 * stops, and programs in hand are stopped by it; their records are dropped.
 * opt.stop should point at the flag the signal sets.
 */
#ifndef FAKEGC_SC_BATCH_H
#define FAKEGC_SC_BATCH_H

#include <sys/types.h>

#include "report/rp_collect.h"
#include "scenario/sc.h"

/* Parse-check every file (sc_check_file, keeping SC_KEEP_BUDGET of parsed
 * program, parking the rest): progs[i] for file i, NULL when it does not
 * parse; its diagnostics printed to diag (in ANSI colour when color) and
 * kept as plain text in diags[i] (malloc, for the caller to free; NULL for
 * a file that parsed). The number of files that did not parse. */
size_t sc_check_files(char *const *files, size_t n, sc_program **progs, char **diags,
                      FILE *diag, int color);

typedef struct sc_batch {
    sc_options opt;          /* every program's; on_statement is the batch's */
    size_t jobs;             /* 0: in this process; else this many workers */
    unsigned timeout;        /* seconds per program in a worker (0: none) */
    void (*done)(void *arg, size_t i);
    int (*stop)(void);
    /* In a worker, after each program (NULL: nothing); valgrind canaries. */
    void (*in_worker)(void *arg);
    void *arg;
    int own_oom;             /* out: a record could not be made (no room) */
} sc_batch;

/* The number of records that finished (col.res[0..ran), moved to the front
 * when a stop left gaps), or -1 when the workers could not start (err says
 * why; -2: no temporary file in $TMPDIR, an environment error). */
ssize_t sc_batch_run(sc_batch *b, sc_program *const *progs, size_t n, rp_collect *col,
                     char *err, size_t errn);

#endif
