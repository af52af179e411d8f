/* st_minimize.h - `fakegc shrink`'s work on one scenario file: parse it,
 * see it fail (in a child process), check that it passes without the
 * injected bugs, minimize it keeping its failure's class (st_shrink_text)
 * and write the result.
 *
 *   st_env e;  st_env_set(&e, inject, gc, sweep, design);  st_env_prepare(&e);
 *   st_minimized m;
 *   int outcome = st_minimize_file(&e, "x.scn", out, &m);   // ST_MIN_*
 *   ... m.before statements -> m.stats.after_statements ...
 *
 * Messages go to stderr as "WHO: ..." (m.who); the parser's diagnostics
 * too (m.color: in colour). The result, on out, starts with two comment
 * lines: the class kept, and the file it was shrunk from.
 */
#ifndef FAKEGC_ST_MINIMIZE_H
#define FAKEGC_ST_MINIMIZE_H

#include <stdio.h>

#include "stress/st.h"

/* The outcomes, `fakegc shrink`'s exit statuses. */
enum {
    ST_MIN_DONE = 0,       /* minimized and written to out */
    ST_MIN_PASSES = 1,     /* the file does not fail: nothing to shrink (said) */
    ST_MIN_BAD = 2,        /* it does not parse, or cannot be read (said) */
    ST_MIN_OOM = 3         /* out of memory while shrinking (said) */
};

typedef struct st_minimized {
    const char *who;         /* in: "fakegc shrink" */
    int color, quiet;        /* in: diagnostics in colour; no "keeping" line */
    size_t before;           /* out: the input's statements */
    st_shrink_stats stats;   /* out: the runs and what is left */
} st_minimized;

/* With e->inject set, the smaller candidates must also pass without the
 * bugs, unless the file itself fails without them (said, and shrunk
 * without that check). */
int st_minimize_file(const st_env *e, const char *file, FILE *out, st_minimized *m);

#endif
