/* rp_find.h - a run's findings for the code-scanning formats (SARIF and
 * GitHub workflow commands): one per failing verdict group, reported group
 * and failed expectation or scenario error, each with its rule, level,
 * program location, message and the other sites of the same leak.
 *
 *   rp_find_each(run, emit, ctx);   // emit(ctx, &finding) for each one
 *
 * Rules: a leak class (HP_CLASSES' rule columns: "fakegc/lost",
 * "fakegc/accumulating", ...), an expectation's kind
 * ("fakegc/expect/memo_meta", "fakegc/expect/live"...: the function called
 * or the attribute compared) and "fakegc/error" (a scenario that errored).
 * Levels: error for what fails the run (a class the verdict fails on, a
 * failed expectation, an error); warning for a group the verdict does not
 * fail on of a class that warns (HP_CLASSES: accumulating, which the program
 * holds and still grows, under --fail-on lost); note for the other groups
 * it does not fail on (still reachable and not growing, lingering
 * storages): GitHub annotations leave notes out. A suppressed group is a
 * finding with suppressed set (its rule name in suppress). */
#ifndef FAKEGC_RP_FIND_H
#define FAKEGC_RP_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "report/rp.h"

typedef enum rp_level { RP_LV_ERROR, RP_LV_WARNING, RP_LV_NOTE } rp_level;
const char *rp_level_name(rp_level l);   /* "error" "warning" "note" */

typedef struct rp_loc {
    char file[256];      /* "" : none */
    uint32_t line;       /* 0: the whole file */
    char what[200];      /* a related location's message */
} rp_loc;

enum { RP_FIND_RELATED = 8 };
typedef struct rp_finding {
    char rule[64];               /* "fakegc/accumulating" */
    const char *rule_name;       /* "Accumulating" */
    const char *rule_text;       /* one sentence: what the rule finds */
    rp_level level;
    char title[160];             /* "accumulating: 5 fake tensors" */
    char message[1024];          /* the whole finding, holder path included */
    rp_loc at;
    rp_loc related[RP_FIND_RELATED];
    size_t nrelated;
    int suppressed;              /* a --suppress rule counted it apart */
    const char *scenario;        /* the scenario or program it is in */
} rp_finding;

typedef void (*rp_find_fn)(void *ctx, const rp_finding *f);
/* Every finding of run, in order (scenarios, then in each its error, its
 * failed expectations, its verdict groups). */
void rp_find_each(const rp_run *run, rp_find_fn emit, void *ctx);

/* The rule of a failed expectation from what it asked (rp_failure.query):
 * "memo_meta" -> "fakegc/expect/memo_meta", "live" -> "fakegc/expect/live";
 * NULL or "" (plain values, or a statement that is no expectation) ->
 * "fakegc/expect/value". */
void rp_expect_rule(const char *query, char *buf, size_t n);

/* "prog.py:12" -> file "prog.py", line 12; no ":N" at the end: line 0. */
void rp_loc_parse(const char *site, rp_loc *out);

/* What a scenario is called in reports for CI: the program's path as given
 * when run->program is set and the run has one scenario (a recording),
 * else its file. */
const char *rp_scenario_name(const rp_run *run, const rp_scenario *s);

#endif
