/* rp_int.h - the report module's private helpers: an escaping output sink,
 * site and size formatting, and the scenario details shared by the text
 * and JUnit writers. */
#ifndef FAKEGC_RP_INT_H
#define FAKEGC_RP_INT_H

#include <stdio.h>

#include "report/rp.h"

typedef enum sk_mode {
    SK_RAW,    /* as is */
    SK_XML,    /* XML text or attribute: & < > " ' escaped, characters XML
                  1.0 forbids and invalid UTF-8 become U+FFFD */
    SK_JSON    /* inside a JSON string: " \ and controls escaped, invalid
                  UTF-8 becomes U+FFFD */
} sk_mode;

typedef struct sk {
    FILE *f;
    sk_mode mode;
    int color;     /* ANSI colour allowed (SK_RAW only) */
    int oom;       /* something could not be computed for lack of memory */
} sk;

void sk_puts(sk *s, const char *str);                /* str may be NULL */
void sk_fmt(sk *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sk_color(sk *s, const char *ansi);              /* no-op unless colour */
/* Escape str for mode (SK_XML or SK_JSON) through put. */
typedef void (*rp_put_fn)(void *ctx, const char *s, size_t n);
void rp_escape(rp_put_fn put, void *ctx, const char *str, sk_mode mode);

/* "file:line", "file" (line 0), "?" (no file). */
void rp_site(obj_site site, char *buf, size_t n);
/* "64 B", "1.5 KiB", "3.2 MiB", "1.0 GiB". */
void rp_bytes(uint64_t b, char *buf, size_t n);
/* "held only by a memo", "lost", "held by a variable still in use"... */
const char *rp_holder_phrase(hp_holder h);
/* A failing scenario's details stay within about RP_SCENARIO_LINES lines
 * unless verbose: the retained section first gets fewer groups, then the
 * failures past the budget get one line of totals each, then one line
 * counts the rest. */
enum { RP_SCENARIO_LINES = 60 };
/* Free what f owns (its strings, objects, groups, biggest retainers and
 * kinds) and zero it. */
void rp_failure_clear(rp_failure *f);
/* The objects behind f (objects_total, or its records when 0). */
uint64_t rp_failure_total(const rp_failure *f);
/* Do a and b report the same objects (same total, bytes and example ids)? */
int rp_failure_same_objects(const rp_failure *a, const rp_failure *b);
/* The index of the earliest failure of sc among the 64 before failure i
 * with the same objects as it, or -1. */
long rp_failure_shares(const rp_scenario *sc, size_t i);
/* The heading of the failures of kind k that follow, or NULL (a plain
 * expectation has none): "fidelity: ... (the model is wrong):",
 * "growth: ... (a leak, ...):". */
const char *rp_fail_kind_heading(rp_fail_kind k);
/* The failures, error, retained groups and objects of a scenario, one item
 * per line, each line starting with indent (within RP_SCENARIO_LINES). */
void rp_details(sk *s, const rp_scenario *sc, const rp_options *o, const char *indent);

/* The one JUnit writer's pieces (rp_xml.c), for run reports and for merged
 * stress and oom reports (rp_merge.c):
 *   <?xml ...?><testsuites name=N COUNTS><testsuite name=N COUNTS>
 *     <testcase name=.. classname=.. time=..> ... </testcase>
 *   </testsuite></testsuites>
 * COUNTS: tests, failures, errors, skipped, and time (seconds) when timed. */
typedef struct rp_junit_counts {
    size_t tests, failures, errors, skipped;
    double seconds;
    int timed;
} rp_junit_counts;
void rp_junit_begin(FILE *f, const char *name, const rp_junit_counts *c);
/* "    <testcase name=.. classname=.. [time=..]" left open: the caller ends
 * it with "/>\n", or ">\n" then rp_junit_failure or its own elements and
 * "    </testcase>\n". seconds < 0: no time. */
void rp_junit_case(FILE *f, const char *name, const char *classname, double seconds);
/* ">\n      <TAG message=.. type=..>BODY</TAG>\n    </testcase>\n" (tag
 * "failure" or "error"); body escaped, may be NULL. */
void rp_junit_failure(FILE *f, const char *tag, const char *type, const char *message,
                      const char *body);
void rp_junit_end(FILE *f);

int rp_write_json(const rp_run *run, FILE *f);
int rp_write_junit(const rp_run *run, FILE *f, const rp_options *o);
int rp_write_tap(const rp_run *run, FILE *f, const rp_options *o);

/* al_strdup with AL_K_REPORT and ER_OOM; NULL stays NULL (returns 0). */
int rp_dup(char **dst, const char *src);
void rp_free_str(char *s);

#endif
