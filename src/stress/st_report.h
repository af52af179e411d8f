/* st_report.h - the documents of `fakegc oom` and `fakegc stress`: the
 * text report and the JSON one (schemas fakegc-oom/2 and fakegc-stress/2,
 * through rp_jw, fakegc-report(5)).
 *
 *   st_doc_head h = {version, commit, "libc", "strong-memo", NULL, host};
 *   st_oom_doc d = {.f = out, .json = 1, .modes = 3};
 *   st_oom_doc_begin(&d, &h);
 *   for each scenario: st_oom_doc_scenario(&d, file, rc, &r);
 *   st_oom_doc_end(&d, NULL);          // the summary; d.findings, d.crashes
 */
#ifndef FAKEGC_ST_REPORT_H
#define FAKEGC_ST_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "stress/st.h"

/* What a JSON document says first: who wrote it and the environment. */
typedef struct st_doc_head {
    const char *version, *commit;   /* of the binary */
    const char *allocator;
    const char *inject;             /* CSV, "" or NULL: an array in JSON */
    const char *compat;             /* a design name or NULL */
    const char *host;
    uint32_t shard_k, shard_n;      /* shard_n 0: not sharded */
    size_t campaign_files;          /* oom: files of the whole campaign */
} st_doc_head;

/* ---- oom ---- */

typedef struct st_oom_doc {
    FILE *f;
    int json, quiet, every, modes;  /* modes: st_oom_opts.modes */
    const st_doc_head *head;
    size_t scenarios, unparsed;     /* written so far */
    uint64_t points, findings, crashes, contexts, skipped;
} st_oom_doc;

void st_oom_doc_begin(st_oom_doc *d, const st_doc_head *h);
/* One scenario's lines (rc: st_oom_forked's), counted in the totals. */
void st_oom_doc_scenario(st_oom_doc *d, const char *file, int rc, const st_oom_result *r);
/* A file that did not parse (JSON: its entry; text: nothing). */
void st_oom_doc_unparsed(st_oom_doc *d, const char *file);
/* The summary, or with stopped ("2 files did not parse; nothing was run")
 * the report of a campaign that did not run. */
void st_oom_doc_end(st_oom_doc *d, const char *stopped);

/* ---- stress ---- */

typedef struct st_stress_doc {
    FILE *f;
    int json, quiet;
    int scan;                       /* f gets SARIF (1) or GitHub commands (2) instead */
    FILE *sarif;                    /* --sarif FILE too, or NULL */
    const st_doc_head *head;
    const st_stress_opts *o;
    int order[4];                   /* reverse, defer, reuse, late (cli --order) */
    int gc_stress;
    const char *repro;              /* the failing lifecycle alone, in one process */
} st_stress_doc;

/* The whole document of a campaign (rc: st_stress's), and the SARIF of
 * d->sarif: one result for a failure (rule fakegc/expect/KIND for a failed
 * expectation, else fakegc/stress/CLASS), at the lifecycle's failing line,
 * the reproducer as a related location, the reproduce command in the
 * message. 0, or -1 on a write error. */
int st_stress_doc_write(const st_stress_doc *d, int rc, const st_stress_result *r);

#endif
