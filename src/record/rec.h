/* rec.h - driving the recorder: scripts/record.py runs a real PyTorch
 * program under the Python that has torch and writes what it did as a
 * scenario (the language of scenarios/README.md). This module starts it in
 * a child of the worker layer (src/worker: it dies with fakegc), waits for
 * it and says how it ended; judging the recording is the scenario layer's
 * (`fakegc run` on the file).
 *
 *   char scn[PATH_MAX];
 *   if (rec_temp(scn, sizeof scn, ".scn", "fakegc record") < 0) ...   // printed
 *   const char *opts[] = {"--fail-on", "lost"};
 *   rec_job j = {"/usr/bin/python3", "scripts/record.py", scn, opts, 2, argv + k, argc - k,
 *                timeout};
 *   rec_result r;
 *   rec_run(&j, "fakegc record", &r);
 *   int have = ...;               // a recording was written (not empty)
 *   int internal = rec_tell(&r, &j, "fakegc record", &have);   // how it ended, on stderr
 *
 * How it ended comes back as three facts that never share a number: the
 * recorder process's end (a wk_end: exited N, signal N, not started), the
 * recorder's state as it said it (ok, usage, no torch, internal, refused)
 * and the program's own end (it exited N, died of signal N, or did not
 * run). The recorder says the last two on a status file it is handed as a
 * descriptor (FAKEGC_RECORD_STATUS_FD; already unlinked, so nothing is left
 * behind): `program exit N|signal N|none` and `recorder WORD`. A program's
 * own exit(77) is therefore its status 77, never "torch is not importable".
 *
 * Signals: the recorder runs in its own process group. While rec_run waits,
 * SIGINT and SIGTERM sent to fakegc are forwarded to that group once
 * (SIGINT: the program's KeyboardInterrupt ends the recording; SIGTERM: the
 * recorder writes what it has and dies of it); a second one, or the group
 * still running REC_GRACE seconds later, gets SIGKILL. j->timeout ends the
 * program the same way (SIGTERM to the group). rec_result.interrupted says
 * which signal fakegc got (the caller exits 128 + it after judging).
 *
 * The program's stdout goes to stderr (fakegc's stdout carries the
 * report). Messages are "WHO: ..." on stderr.
 */
#ifndef FAKEGC_REC_H
#define FAKEGC_REC_H

#include <stddef.h>

#include "worker/wk.h"

typedef struct rec_job {
    const char *python;          /* the Python with torch, executed by path */
    const char *recorder;        /* record.py */
    const char *out;             /* the recording to write (record.py -o) */
    const char *const *opts;     /* record.py options with their values */
    size_t nopts;
    char *const *prog;           /* PROGRAM.py and its arguments */
    size_t nprog;
    unsigned timeout;            /* seconds (0: none): then SIGTERM to the group */
} rec_job;

/* What the recorder said of itself (the status file's `recorder WORD`). */
typedef enum rec_state {
    REC_OK,          /* it recorded the program (whatever the program did) */
    REC_USAGE,       /* it refused its arguments (it said why) */
    REC_NO_TORCH,    /* torch is not importable by the Python */
    REC_INTERNAL,    /* it failed itself (see the recording's header) */
    REC_REFUSED,     /* the program did what a recording cannot say (threads) */
    REC_SILENT,      /* it ended without saying (no status: see rec_result.child) */
    REC_NOT_RUN      /* nothing ran: no status file, or no child (rec_run said why) */
} rec_state;

/* Seconds between the SIGTERM (or SIGINT) a group is sent and its SIGKILL. */
enum { REC_GRACE = 10 };

typedef struct rec_result {
    wk_end child;        /* the recorder process's end (WK_LOST: not started) */
    rec_state state;     /* what the recorder said */
    int ran;             /* the program ran: program is its end */
    wk_end program;      /* WK_OK, WK_EXIT (code: its status), WK_SIGNAL (code) */
    int interrupted;     /* the signal fakegc got while waiting (0: none) */
    int timed_out;       /* j->timeout passed: the group was sent SIGTERM */
} rec_result;

/* Run the recorder on j and wait, filling r. 0, or -1 when nothing ran
 * (r->state REC_NOT_RUN: the status file or the child could not be made;
 * printed). */
int rec_run(const rec_job *j, const char *who, rec_result *r);

/* Say on stderr how the recording ended (nothing when the program ended 0
 * and the recorder was ok), in wk_describe's words for either process's
 * death. 1 when fakegc's side failed (the caller exits 3 after judging),
 * else 0; *have is cleared when there is nothing to judge (no torch,
 * nothing ran). */
int rec_tell(const rec_result *r, const rec_job *j, const char *who, int *have);

/* A fresh empty file TMPDIR/fakegc-record-XXXXXX`suffix` (TMPDIR unset or
 * empty: /tmp), its path in buf. 0, or -1 printed ("WHO: cannot make a
 * temporary file in DIR: strerror") with buf empty. */
int rec_temp(char *buf, size_t n, const char *suffix, const char *who);

#endif
