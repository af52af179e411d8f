/* rp_term.h - what the reports do on a terminal: whether to colour (the
 * conventions of no-color.org and force-color.org), and the progress line
 * that a run rewrites in place on stderr.
 *
 *   int color = rp_color_wanted(RP_COLOR_AUTO, stdout);
 *   rp_progress(quiet, 2, 58, "scenarios/memo/churn.scn");   // [3/58] ...
 *   rp_progress(quiet, 58, 58, "");                          // the line cleared
 */
#ifndef FAKEGC_RP_TERM_H
#define FAKEGC_RP_TERM_H

#include <stddef.h>
#include <stdio.h>

enum { RP_COLOR_AUTO, RP_COLOR_ALWAYS, RP_COLOR_NEVER };

/* Colour on f: when RP_COLOR_ALWAYS, or FORCE_COLOR set, not empty and
 * not "0" (unless RP_COLOR_NEVER); with RP_COLOR_AUTO, when f is a
 * terminal, NO_COLOR is unset or empty and TERM is not "dumb". 1 or 0. */
int rp_color_wanted(int when, FILE *f);

/* "[done+1/total] file" on stderr, rewritten in place: only when stderr is
 * a terminal and not quiet. done >= total clears the line. */
void rp_progress(int quiet, size_t done, size_t total, const char *file);

#endif
