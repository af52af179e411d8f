/* rp_html.h - the report a person looks at: one self-contained HTML page
 * (`fakegc run --html FILE`, `fakegc diff BASE NEW --html FILE`).
 *
 * The page holds everything it shows: inline CSS, inline SVG, a few lines of
 * inline script, no link, image or font to fetch (its Content-Security-Policy
 * forbids any fetch). Built from the same records as the JSON report, in
 * this order:
 *   Summary    verdict; per scenario that did not pass, one line per failing
 *              expectation and per leak class (retention reason): count,
 *              bytes, retained bytes;
 *   Groups     per reported heap state: count x kind, type, creating site,
 *              holder, one representative strong path ("+k similar"); the
 *              weak edge that keeps a zombie dashed, after the path;
 *   Dominator tree  (rp_scenario.dtree) ranked by retained bytes, top
 *              levels open, the rest expandable (<details>);
 *   Growth     live objects per kind at the start, at each checkpoint and
 *              at the end (before teardown);
 *   Timeline   live objects, bytes and memo entries per statement, markers
 *              for checkpoint, failed expect, gc() and X.sweep(), "jump to
 *              peak" and a range selection by dragging.
 * Every cut says "kept X of Y": RP_HTML_* below, and HP_SHOW_* (hp.h) for
 * groups and tree nodes. A 5M-object leak's page is tens of KB.
 */
#ifndef FAKEGC_RP_HTML_H
#define FAKEGC_RP_HTML_H

#include <stdio.h>

#include "report/rp.h"
#include "report/rp_timeline.h"

enum {
    RP_HTML_SCENARIOS = 30,   /* scenarios shown in detail (not passing first) */
    RP_HTML_FAILURES = 20,    /* summary lines per scenario */
    RP_HTML_STATES = 5,       /* reported heap states per scenario in Groups */
    RP_HTML_POINTS = 400,     /* timeline points per scenario (each the
                                 peak of its bucket, the band its range) */
    RP_HTML_PANELS = 10,      /* timeline panels */
    RP_HTML_MARKS = 60        /* markers per panel */
};

/* The run's page. tl: n timelines by scenario index (rp_timeline_begin's,
 * name matching the scenario's file), or NULL. 0, or -1 on a write error
 * or out of memory. */
int rp_write_html(FILE *f, const rp_run *run, const rp_timeline *tl, size_t ntl);

/* The comparison's page: scenario by scenario status, failing expectations
 * and retained objects base -> new, then the text diff (rp_diff_write),
 * at most RP_HTML_DIFF_ROWS rows and RP_HTML_DIFF_TEXT bytes of text. */
enum { RP_HTML_DIFF_ROWS = 200, RP_HTML_DIFF_TEXT = 256 * 1024 };
/* o: the diff's options (its format and colour are ignored). 1 regression,
 * 0 none, -1 write error or out of memory. */
int rp_write_html_diff(FILE *f, const rp_run *base, const rp_run *cur, const char *base_name,
                       const char *cur_name, const rp_diff_options *o);

#endif
