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

typedef struct rp_timeline {
    char *name;
    size_t n;                  /* points kept */
    uint64_t seen;             /* statements seen */
    uint64_t stride;           /* keep one statement in `stride` */
    uint64_t *stmt, *objects, *bytes;   /* RP_TIMELINE_MAX each, or NULL */
    uint64_t max_objects, max_bytes;
} rp_timeline;

int rp_timeline_begin(rp_timeline *t, const char *name);   /* 0 or -1 (OOM) */
void rp_timeline_add(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes);
void rp_timeline_clear(rp_timeline *t);
/* One panel per series, stacked. 0, or -1 when writing failed. */
int rp_write_timeline_svg(FILE *f, const rp_timeline *ts, size_t n);

#endif
