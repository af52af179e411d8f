/* rec.h - driving the recorder: scripts/record.py runs a real PyTorch
 * program under the Python that has torch and writes what it did as a
 * scenario (the language of scenarios/README.md). This module starts it,
 * waits for it and says how it ended; judging the recording is the
 * scenario layer's (`fakegc run` on the file).
 *
 *   char scn[PATH_MAX];
 *   if (rec_temp(scn, sizeof scn, ".scn", "fakegc record") < 0) ...   // printed
 *   const char *opts[] = {"--fail-on", "lost"};
 *   rec_job j = {"/usr/bin/python3", "scripts/record.py", scn, opts, 2, argv + k, argc - k};
 *   int rs = rec_run(&j, "fakegc record");
 *   int have = ..., internal;     // a recording was written (not empty)
 *   rec_tell(rs, &j, "fakegc record", &have, &internal);   // how it ended, on stderr
 *
 * The program's stdout goes to stderr (fakegc's stdout carries the
 * report). Messages are "WHO: ..." on stderr.
 */
#ifndef FAKEGC_REC_H
#define FAKEGC_REC_H

#include <stddef.h>

typedef struct rec_job {
    const char *python;          /* the Python with torch, executed by path */
    const char *recorder;        /* record.py */
    const char *out;             /* the recording to write (record.py -o) */
    const char *const *opts;     /* record.py options with their values */
    size_t nopts;
    char *const *prog;           /* PROGRAM.py and its arguments */
    size_t nprog;
} rec_job;

/* How a recording ended (rec_run's result): the program's own exit status
 * (0, 1, ...: the program finished, or failed, and was recorded); or */
enum {
    REC_USAGE = 2,              /* record.py refused its arguments (it said why) */
    REC_FAILED = 3,             /* the recorder itself failed */
    REC_NO_TORCH = 77,          /* torch is not importable by python */
    REC_NO_PYTHON = 127,        /* python could not be executed */
    REC_SIGNAL = 128,           /* + N: the recorder died of signal N */
    REC_PROGRAM_3 = 1003,       /* the program itself exited with status 3 */
    REC_NO_STATUS = -2          /* nothing ran: no status file (rec_run said why) */
};

/* Run the recorder on j and wait: the outcome above; -1 when it could not
 * be started (fork failed, or out of memory); REC_NO_STATUS when its
 * status file could not be made (printed; nothing ran). The recorder writes `program N recorder
 * ok|internal|refused` to a temporary status file (FAKEGC_RECORD_STATUS),
 * so that the program's own 3 is told from the recorder's. */
int rec_run(const rec_job *j, const char *who);

/* Say on stderr how the recording ended (nothing for 0 or REC_NO_STATUS).
 * *internal: fakegc's side failed (the caller exits 3 after judging);
 * *have is cleared when there is nothing to judge (REC_NO_TORCH,
 * REC_NO_STATUS). */
void rec_tell(int rs, const rec_job *j, const char *who, int *have, int *internal);

/* A fresh empty file TMPDIR/fakegc-record-XXXXXX`suffix` (TMPDIR unset or
 * empty: /tmp), its path in buf. 0, or -1 printed ("WHO: cannot make a
 * temporary file in DIR: strerror") with buf empty. */
int rec_temp(char *buf, size_t n, const char *suffix, const char *who);

#endif
