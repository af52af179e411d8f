/* rp_collect.h - one run's records put together from parts: scenarios
 * that ran elsewhere (a worker process) hand back a one-scenario JSON
 * record and a timeline series, or end without one (a crash, a finding, a
 * timeout), and the run gets one record per scenario, in scenario order.
 *
 *   rp_collect c;
 *   if (rp_collect_init(&c, n, want_timelines) < 0) ...          // ER_OOM
 *   // in the worker:  rp_collect_write_one(fd, &record);
 *   // in the parent, as each scenario ends:
 *   rp_collect_read(&c, i, fd, file);              // the worker's record
 *   rp_collect_finding(&c, i, file, line, kind, what);   // or a finding
 *   rp_collect_error(&c, i, file, "worker crashed: ...");   // or a death
 *   rp_collect_load_timeline(&c, i, fd);           // its series, if any
 *   size_t ran = rp_collect_keep_finished(&c);     // after a stop
 *   ... write the report of c.res[0..ran), c.tl ...
 *   rp_collect_free(&c);
 *
 * A record read back points into the strings of its JSON reader
 * (rp_read_json's pool): the collection keeps those pools until
 * rp_collect_free, after the records. A scenario without a record keeps a
 * zeroed rp_scenario (file NULL): it did not finish. Memory: AL_K_REPORT.
 */
#ifndef FAKEGC_RP_COLLECT_H
#define FAKEGC_RP_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "report/rp.h"
#include "report/rp_timeline.h"

typedef struct rp_collect {
    rp_scenario *res;     /* n records, zeroed until a scenario ends */
    rp_timeline *tl;      /* n series, or NULL (no timelines wanted) */
    size_t n;
    void **pools;         /* the read-back records' string pools (n at most) */
    size_t npools;
    FILE *stream;             /* rp_collect_stream's */
    rp_options stream_ro;
    int stream_clear;
    const char *inject[32];   /* rp_collect_run's list, in inject_buf */
    char inject_buf[512];
} rp_collect;

/* 0, or -1 (ER_OOM, nothing held). */
int rp_collect_init(rp_collect *c, size_t n, int timelines);
/* Frees every record, series and pool; c is zeroed. */
void rp_collect_free(rp_collect *c);

/* The worker's side: s as a one-scenario JSON report, written to fd (its
 * offset onwards). 0, or -1 (a write error, or ER_OOM). */
int rp_collect_write_one(int fd, const rp_scenario *s);

/* Scenario i's record from fd (from offset 0: what rp_collect_write_one
 * wrote); when fd holds none, the record is an error saying so. file: the
 * scenario's name. 0, or -1 (the record is that error). */
int rp_collect_read(rp_collect *c, size_t i, int fd, const char *file);
/* Scenario i is an error: msg (its worker died, could not start...). */
void rp_collect_error(rp_collect *c, size_t i, const char *file, const char *msg);
/* Scenario i was stopped by a bad access at line: a failure "finding:
 * KIND" whose actual is what the guard said. */
void rp_collect_finding(rp_collect *c, size_t i, const char *file, uint32_t line,
                        const char *kind, const char *what);
/* Scenario i's series from fd (from offset 0, rp_timeline_save's form):
 * 0, or -1 when fd holds none (the series is then empty, not begun). */
int rp_collect_load_timeline(rp_collect *c, size_t i, int fd);

/* Nothing ran because some file did not parse: record i is an error with
 * diags[i] (its diagnostics) when that is set, else skipped ("not run:
 * another file did not parse"); files[i] names it. */
void rp_collect_not_run(rp_collect *c, char *const *files, char *const *diags);

/* run: the first n records (scenarios, counts) and inject (a comma list,
 * NULL: none) as a list; the rest of run zeroed. run points into c. */
void rp_collect_run(rp_collect *c, rp_run *run, size_t n, const char *inject);

/* Each record's status line ("PASS file") as it is complete, to f (NULL:
 * nowhere); o->quiet: only those that did not pass; clear: "\r\033[K" on
 * stderr before each (a progress line there gives way). */
void rp_collect_stream(rp_collect *c, FILE *f, const rp_options *o, int clear);
void rp_collect_said(rp_collect *c, size_t i);
/* On f, when run stopped early (run->interrupted set): what stopped it,
 * and how many of run->planned finished. */
void rp_collect_say_stopped(FILE *f, const char *cmd, const rp_run *run);

/* The scenarios that finished (a record with a file), moved to the front in
 * their order with their series; the rest emptied. Their count. */
size_t rp_collect_keep_finished(rp_collect *c);

#endif
