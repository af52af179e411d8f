/* rp_timeline.h - live objects and live bytes after each statement, and
 * their SVG chart (`fakegc run --timeline FILE.svg`).
 *
 *   rp_timeline t = {0};
 *   rp_timeline_begin(&t, "scenarios/memo/churn.scn");
 *   rp_timeline_add(&t, line, objects, bytes);     // from sc_options.on_statement
 *   rp_write_timeline_svg(f, &t, 1);
 *   rp_timeline_clear(&t);
 *
 * A series keeps at most RP_TIMELINE_MAX points: when full it drops every
 * other point and from then on keeps one statement in 2, 4, ... so a
 * million-statement scenario still charts in bounded memory. Memory comes
 * from the allocator with kind AL_K_REPORT.
 */
#ifndef FAKEGC_RP_TIMELINE_H
#define FAKEGC_RP_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#define RP_TIMELINE_MAX 4096

/* What a source line does, for the marks on the chart. */
/* del, gc(), failed expect, checkpoint, X.sweep() */
/* mark("LABEL") (a program's named mark, fakegc.mark) */
enum { RP_TL_DEL = 1, RP_TL_GC = 2, RP_TL_FAIL = 4, RP_TL_CHECKPOINT = 8, RP_TL_SWEEP = 16,
       RP_TL_EXPECT = 32, RP_TL_MARK = 64 };
/* RP_TL_EVENT_MAX events are kept: statements on a line marked gc(),
 * checkpoint, X.sweep() or expect, recorded whatever the sampling stride.
 * The runner sets marks[] (what each line does: the parsed program knows)
 * between rp_timeline_begin and the first rp_timeline_add. */
#define RP_TL_EVENT_MAX 256
#define RP_TL_EVENTS (RP_TL_GC | RP_TL_CHECKPOINT | RP_TL_SWEEP | RP_TL_EXPECT | RP_TL_MARK)
/* pline, pfile: a recording's program site at the event (its last at():
 * pline 0 none; pfile an index of rp_timeline.pfiles). */
typedef struct rp_tl_event {
    uint64_t stmt, objects, bytes, memo;
    uint32_t line, pline;
    uint8_t pfile;
} rp_tl_event;
#define RP_TIMELINE_LINES 4096   /* source lines that can carry a mark */
/* The label of a line's mark("LABEL"): RP_TL_LABELS of them, each cut to
 * RP_TL_LABEL_LEN - 1 bytes. */
enum { RP_TL_LABELS = 64, RP_TL_LABEL_LEN = 48 };
typedef struct rp_tl_label {
    uint32_t line;
    char text[RP_TL_LABEL_LEN];
} rp_tl_label;

/* A recording's program files on a chart (rp_timeline_site): at most
 * RP_TL_PFILES, each name cut to RP_TL_PFILE_LEN - 1 bytes. */
enum { RP_TL_PFILES = 8, RP_TL_PFILE_LEN = 64 };

/* A failed expectation (rp_timeline_end): the scenario's line (a
 * recording's line), and a recording's program site of it (rp_failure's
 * prog_file, prog_line; prog_line 0 and "" none, the file cut to
 * RP_TL_PFILE_LEN - 1 bytes). The first RP_TL_FAILS are kept. */
enum { RP_TL_FAILS = 32 };
typedef struct rp_tl_fail {
    uint32_t line, prog_line;
    char prog_file[RP_TL_PFILE_LEN];
} rp_tl_fail;

typedef struct rp_timeline {
    char *name;
    size_t n;                  /* points kept */
    uint64_t seen;             /* statements seen */
    uint64_t stride;           /* keep one statement in `stride` */
    uint64_t *stmt, *objects, *bytes;   /* RP_TIMELINE_MAX each, or NULL */
    uint64_t *memo;            /* memo entries (wt_count_all), the same */
    uint32_t *line;            /* source line of each point */
    uint64_t max_objects, max_bytes, max_memo;
    uint8_t *marks;            /* RP_TIMELINE_LINES: RP_TL_* of each line */
    rp_tl_event *ev;           /* RP_TL_EVENT_MAX, or NULL */
    rp_tl_label label[RP_TL_LABELS];   /* the marked lines' labels (RP_TL_MARK) */
    size_t nlabel;
    size_t nev;                /* events kept */
    uint64_t ev_seen;          /* events seen */
    /* A recording's program (rp_timeline_site; pev NULL until its first
     * at()): per point, the program's event number (its at() calls so
     * far), file (an index of pfiles), line and the round of the loop
     * around it; the chart's x-axis is then its events, not statements. */
    uint64_t *pev;
    uint32_t *pline, *pround;
    uint8_t *pfile;
    char pfiles[RP_TL_PFILES][RP_TL_PFILE_LEN];
    size_t npfiles;
    uint64_t cur_pev;          /* the program's events so far (0: none) */
    uint32_t cur_pline, cur_pround;
    uint8_t cur_pfile;
    int status;                /* rp_status of the scenario (title) */
    uint32_t nfailed;          /* failed expectations */
    rp_tl_fail fail[RP_TL_FAILS];   /* the first of them (rp_timeline_end) */
    uint32_t nfail;            /* kept in fail[] */
    rp_tl_event failed_at[RP_TL_FAILS];   /* the first failures as they ran */
    uint32_t nfailed_at;       /*   (rp_timeline_failed; counts 0) */
} rp_timeline;

int rp_timeline_begin(rp_timeline *t, const char *name);   /* 0 or -1 (OOM) */
void rp_timeline_add(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes);
/* The same with the memo entries live after the statement (memo 0 above). */
void rp_timeline_add_memo(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes,
                          uint64_t memo);
/* The program's site from now on (a recording's at(FILE, LINE, ROUND, ...):
 * its event number `event`); 0, or -1 (out of memory: the series stays in
 * statements). */
int rp_timeline_site(rp_timeline *t, const char *file, uint32_t line, uint32_t round,
                     uint64_t event);
/* A point's program site "prog.py:13" ("" when not a recording). */
void rp_timeline_psite(const rp_timeline *t, size_t i, char *buf, size_t n);
/* After the run: the scenario's status and its failed expectations (their
 * lines marked RP_TL_FAIL, the first RP_TL_FAILS kept with their program
 * sites). */
void rp_timeline_end(rp_timeline *t, int status, const rp_tl_fail *fails, size_t nfail);
/* A statement at `line` failed while it runs (before its rp_timeline_add):
 * the first RP_TL_FAILS are kept with their statement and the program's
 * site then, whatever the sampling and the line, so that a recording's
 * chart marks each in the program's events. */
void rp_timeline_failed(rp_timeline *t, uint32_t line);
/* Where a mark at the scenario's line `line` is in a recording's program,
 * "prog.py:13": a failed expectation's own program site (RP_TL_FAIL on the
 * line, kept by rp_timeline_end), else the program's site at event e (NULL:
 * none); "" when neither is known (not a recording). */
void rp_timeline_mark_site(const rp_timeline *t, uint32_t line, int fail, const rp_tl_event *e,
                           char *buf, size_t n);
void rp_timeline_clear(rp_timeline *t);
/* Line `line` is a mark("LABEL") (set with the marks, before the run): its
 * label (n bytes, cut), and RP_TL_MARK on the line. Past RP_TL_LABELS the
 * line is still marked, unlabelled. label_of: the line's label, or NULL. */
void rp_timeline_set_label(rp_timeline *t, uint32_t line, const char *s, size_t n);
const char *rp_timeline_label_of(const rp_timeline *t, uint32_t line);
/* The whole series in a private binary form, for a --jobs worker to hand
 * its scenario's timeline to the parent (same build, same machine). save:
 * to a file descriptor with write(2) only, so a worker can save what it
 * has from a finding hook (async-signal-safe); 0 or -1 (write error).
 * load: into an empty t (rp_timeline_begin's memory); 0, or -1 (short or
 * foreign file, or out of memory: t cleared). */
int rp_timeline_save(int fd, const rp_timeline *t);
int rp_timeline_load(FILE *f, rp_timeline *t);
/* One panel per series, stacked: x axis in statements executed, ticks
 * labelled with the statement number and its source line (a recording's:
 * in the program's events, ticks labelled with the event number, its
 * program file:line and round, each event's site, round and counts on
 * hover in a <title>); live objects on
 * the left axis (blue), live bytes on the right axis (orange), each with
 * its own labelled scale; failed expectations red, `del` grey and `gc()`
 * green marks, a program's mark("LABEL") a purple line with its label (a
 * recording's failed expectation labelled with its program site, its
 * recording's line in the <title>); PASS/FAIL in each panel's title. Where several statements
 * share a pixel, the chart draws their min-max band and the last value.
 * 0, or -1 when writing failed. */
int rp_write_timeline_svg(FILE *f, const rp_timeline *ts, size_t n);

#endif
