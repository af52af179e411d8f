/* rp.h - run results and their reports: text, JSON, JUnit, TAP; reading a
 * JSON report back (for `fakegc diff`).
 *
 * The JSON field names are the contract in cli.md ("JSON report"); more
 * fields may be added, none renamed.
 *
 *   rp_run run = {...};  // filled by the runner
 *   rp_write(&run, RP_JSON, stdout, &opts);
 */
#ifndef FAKEGC_RP_H
#define FAKEGC_RP_H

#include <stdint.h>
#include <stdio.h>

#include "heap/hp.h"
#include "report/rp_verdict.h"

typedef enum rp_status { RP_PASS, RP_FAIL, RP_ERROR, RP_SKIP } rp_status;
const char *rp_status_name(rp_status s);   /* "pass" "fail" "error" "skip" */

/* What a failure is, as the writers head it: an expectation of a
 * hand-written scenario; a recording's expectation (fidelity: the model did
 * not show what PyTorch showed there, so the model is wrong); the objects
 * of a site growing with --repeat's rounds (a leak). */
typedef enum rp_fail_kind { RP_FK_EXPECT, RP_FK_FIDELITY, RP_FK_GROWTH, RP_FK_COUNT } rp_fail_kind;
/* "expect" "fidelity" "growth" (JSON "kind"); "?" out of range. 0, or -1
 * for an unknown word. */
const char *rp_fail_kind_word(rp_fail_kind k);
int rp_fail_kind_from_word(const char *w, rp_fail_kind *out);

/* What made it fail, a fact of where it was recorded (src/scenario sets
 * it; text, actual and message say it in words for people; kind is how the
 * writers head it). Read back from JSON, which does not carry it:
 * RP_FC_UNKNOWN. */
typedef enum rp_fail_cause {
    RP_FC_UNKNOWN = 0,
    RP_FC_EXPECT,      /* an expectation did not hold */
    RP_FC_RAISED,      /* a statement raised an error (raised says which) */
    RP_FC_VERIFY,      /* --verify: an invariant broke after the statement
                          (actual + detail: the invariant's own words) */
    RP_FC_END_CHECK,   /* the strict end check: objects or bytes left */
    RP_FC_GROWTH,      /* --repeat: retained objects grow with the rounds */
    RP_FC_SETUP        /* the scenario could not be set up */
} rp_fail_cause;

/* What the expectation of a failing statement asked about (its query). */
typedef enum rp_query_of {
    RP_Q_NONE = 0,     /* nothing: plain values, or not an expectation */
    RP_Q_BUILTIN,      /* a built-in function: live(), bytes(), dead(), raises */
    RP_Q_ATTR,         /* an attribute: a mode's or converter's memo_meta */
    RP_Q_TENSOR,       /* a tensor query: t.numel(), t.dim(), t.size(0) */
    RP_Q_METHOD        /* another method: h.item(), m.cache_size() */
} rp_query_of;
enum { RP_QUERY_LEN = 32 };

typedef struct rp_failure {
    uint32_t line, col;   /* the scenario's (a recording's line); 0 none */
    rp_fail_kind kind;
    char *prog_file;      /* a recording: the program's site of the failure */
    uint32_t prog_line;   /*   ("prog.py", 12); NULL and 0 otherwise */
    uint8_t cause;        /* rp_fail_cause */
    uint8_t query_of;     /* rp_query_of */
    uint8_t raised;       /* RP_FC_RAISED, RP_FC_SETUP: the er_kind (ER_OOM...) */
    uint16_t detail;      /* RP_FC_VERIFY: where in actual its own words start */
    char query[RP_QUERY_LEN];   /* the query's word ("memo_meta", "live",
                                   "numel"); "" for RP_Q_NONE. JSON carries it
                                   ("query") */
    char *text;        /* the statement as written: "expect m.memo_meta == 0" */
    char *actual;      /* "1", or the error raised: "ShapeError: ..." */
    char *message;     /* the expect's message, or what went wrong */
    /* objects behind a failing liveness/memo/census expectation, may be 0:
     * objects_total of them, in groups (hp_summarize), with up to K
     * examples per group in objects (groups[i].example indexes it) */
    hp_retained *objects;
    size_t nobjects;
    uint64_t objects_total;
    hp_group *groups; size_t ngroups;
    hp_top *top; size_t ntop;        /* HP_TOP entries allocated when top */
    /* a failing growth() or live(): live objects per kind now and their
     * change (since the checkpoint; live(): since the scenario's start),
     * every kind with either non-zero, so the rows add up to the whole
     * (objgraph's show_growth); an array of exactly nkinds (AL_K_REPORT) */
    struct rp_kind_count { obj_kind kind; uint64_t now; int64_t delta; } *kinds;
    size_t nkinds;
    /* Read back from JSON ("same_objects_as"): the line of an earlier
     * failure of the scenario that reports the same objects and holds their
     * groups (rp_failure_shares finds it); 0: none. */
    uint32_t same_as;
} rp_failure;

typedef struct rp_checkpoint {
    char *name;
    int64_t growth;    /* live objects at end (before teardown) minus at it */
    uint64_t kinds[OBJ_KIND_COUNT];   /* live objects of each kind at it (the
                                         runner's; 0 when read from JSON) */
} rp_checkpoint;

/* Ownership (rp_scenario_clear frees exactly this): every char * is
 * al_strdup(..., AL_K_REPORT) (freed with strlen + 1); failures and
 * checkpoints are arrays of exactly nfailures / ncheckpoints elements
 * (AL_K_REPORT, NULL when 0) - rp_scenario_add_* keep that true; retained
 * and each failure's objects are arrays of exactly n hp_retained
 * (AL_K_HEAP, as hp_retained_all makes them); groups come from
 * hp_summarize or hp_group_records. The record is made whole once, when
 * the scenario ends (rp_scenario_group groups what has records but no
 * groups); the writers format it and never group. */
typedef struct rp_scenario {
    char *file;
    rp_status status;
    uint32_t passed, failed;         /* expectations */
    rp_failure *failures; size_t nfailures;
    hp_retained *retained; size_t nretained;   /* at the strict end check */
    hp_group *groups; size_t ngroups;
    uint64_t retained_total;         /* objects retained (retained holds
                                        examples); 0: nretained */
    hp_top *top; size_t ntop;        /* biggest retainers, HP_TOP allocated */
    rp_checkpoint *checkpoints; size_t ncheckpoints;
    char *error;                     /* status error: what happened */
    uint64_t statements, allocations, peak_bytes, leaked_bytes;
    double wall_ms;
    int valgrind_checked;            /* ran under memcheck */
    uint64_t valgrind_definite, valgrind_indirect;   /* bytes */
    /* Growth of the allocator's own footprint (al_footprint: pages or
     * heap it holds) from the scenario's start to its last statement,
     * before teardown; peak_bytes counts the model's requested bytes
     * (sc_model_bytes), the same for every allocator. */
    uint64_t footprint_bytes;
    /* With sc_options.dom_tree: the aggregated dominator tree of the whole
     * heap when the scenario first reported objects (hp_dom_tree), at
     * dtree_line (0: the teardown check); zeroed otherwise. Not in JSON. */
    hp_dtree dtree;
    uint32_t dtree_line;
    /* Live objects per kind before the first statement and after the last
     * (before teardown) of the last round, when kinds_known (the runner's,
     * not JSON's): the page's growth table. */
    uint64_t kinds_start[OBJ_KIND_COUNT], kinds_end[OBJ_KIND_COUNT];
    int kinds_known;
    /* The verdict of a recorded program (the scenario's `verdict()`):
     * its facts (rp_verdict.h), owned (rp_scenario_clear frees it); NULL
     * when the scenario has no verdict. The failing classes are also
     * failures (line 0, text "verdict: lost"). */
    rp_verdict *verdict;
    /* A recording replayed under a design other than the one it was
     * recorded on (a what-if, designs.md): its expectations are not checked
     * but counted (skipped_fidelity), and whatif says so with that design's
     * final counters per mode, one line each (NULL otherwise). Every
     * recording's run samples after each statement the memo entries and
     * pending storages summed over the live converters (memo_known). */
    uint64_t skipped_fidelity;
    char *whatif;
    uint64_t memo_peak, memo_final, pending_peak, pending_final;
    int memo_known;
    /* A recording that the recorder refused or stopped before the program
     * ended (its verdict(stopped=, why=)): NOT JUDGED, never a pass. The
     * program's line where recording stopped ("prog.py:12") and why ("the
     * program made fake-tensor events on another thread"); both NULL for
     * everything else. Status is RP_ERROR (exit 3) and error says it in
     * words (rp_scenario_set_not_judged). In JSON as "not_judged". */
    char *stop_site, *stop_why;
} rp_scenario;

typedef struct rp_run {
    const char *tool, *version, *allocator, *compat;  /* compat may be NULL */
    const char *subject;   /* what the HTML page is on, in its title (NULL: the
                              scenario's file, or nothing for several) */
    const char **inject; size_t ninject;
    rp_scenario *scenarios; size_t n;
    uint32_t passed, failed, skipped;   /* failed counts fail and error */
    /* --shard K/N (shard_n 0: not sharded): JSON "shard": [K, N], "host",
     * "campaign_files" (the files of all N shards) */
    uint32_t shard_k, shard_n;
    size_t shard_total;
    const char *host;
    uint32_t errors;   /* of the failed, those with status error */
    /* Non-NULL: the run stopped before running anything (a scenario did not
     * parse); the report's status is "error", TAP ends with "Bail out!". */
    const char *stopped;
    void *owned;       /* rp_read_json's storage; NULL for a runner's run */
    const char *interrupted;  /* "SIGINT"/"SIGTERM": the run stopped early and
                                 holds only the scenarios that finished; NULL */
    size_t planned;           /* with interrupted: the scenarios it was to run */
    const char *commit;       /* the build's commit (JSON "commit"), or NULL */
    /* A recorded program (record): its path as given, which names the lone
     * scenario in JUnit, TAP, JSON ("file"; the recording in "recording"),
     * SARIF and GitHub annotations, so CI history follows it from run to
     * run; NULL for `run`. */
    const char *program;
} rp_run;

/* Schema ids of the JSON reports (cli.md "Reports: stable, typed"); the
 * JSON Schema files are src/report/schema/<name>.schema.json. */
#define RP_SCHEMA_REPORT "fakegc-report/3"
/* The run reports before the verdict carried its facts as fields: read
 * back (their verdicts without those facts), never written. */
#define RP_SCHEMA_REPORT_2 "fakegc-report/2"
#define RP_SCHEMA_BENCH "fakegc-bench/2"
#define RP_SCHEMA_STRESS "fakegc-stress/2"
#define RP_SCHEMA_OOM "fakegc-oom/2"
#define RP_SCHEMA_DIFF "fakegc-diff/2"
#define RP_SCHEMA_BENCH_COMPARE "fakegc-bench-compare/1"
#define RP_SCHEMA_OBJECTS "fakegc-objects/1"

/* `--objects FILE`: one JSON line per reported object, written as it is
 * found (schema fakegc-objects/1): {"schema", "scenario", "line" (the
 * failing statement; 0: the teardown check), "object": a record as the
 * report writes one}. 0, or -1 (ER_OOM, or a write error). */
int rp_write_object_line(FILE *f, const char *scenario, uint32_t line, const hp_retained *r);

/* "pass", "fail" (a scenario failed), "error" (one errored, or stopped),
 * or "interrupted" (a signal stopped a run where nothing failed). */
const char *rp_run_status(const rp_run *run);

/* RP_SARIF: SARIF 2.1.0, RP_GITHUB: GitHub workflow commands (rp_sarif.h).
 * The order is rp_formats' (below). */
typedef enum rp_format { RP_TEXT, RP_JSON, RP_JUNIT, RP_TAP, RP_SARIF, RP_GITHUB, RP_FORMATS } rp_format;
int rp_format_from_name(const char *s, rp_format *out);

typedef struct rp_options {
    int color;      /* ANSI colour in text */
    int verbose;    /* -v: every scenario and every retained object */
    int quiet;      /* -q: only failures and the summary */
    const char *subject;   /* what a lone scenario is called in the text (a
                              recorded program; NULL: its file) */
} rp_options;

/* Which --format choices offer a format: the plain ones (text, json), the
 * test runners' (junit, tap) and code scanning's (sarif, github); a
 * command takes the formats up to one of these. */
enum { RP_FSET_PLAIN, RP_FSET_TESTS, RP_FSET_SCAN };

/* The formats, one row each, in rp_format order (Lua's luaL_Reg): its
 * name (--format NAME), its option (--NAME FILE: written there too), its
 * writer, its set and its title (what a reader calls it: "JUnit XML"). Everything that names a format reads this table:
 * rp_write, rp_format_from_name, the command line's --format words and
 * --NAME FILE rows (cli_common.c, their names point into it), its help and
 * completion. The names are arrays, so a static row can point at them. */
typedef struct rp_format_row {
    char name[8];
    char option[12];
    int (*write)(const rp_run *run, FILE *f, const rp_options *o);
    int set;   /* RP_FSET_* */
    const char *title;
} rp_format_row;
extern const rp_format_row rp_formats[RP_FORMATS];
/* "text|json|..." of the formats up to set into buf (op_words' form). */
void rp_format_words(int set, char *buf, size_t n);

/* Write the report; 0, or -1 on a write error or OOM (er set).
 *
 * RP_TEXT, for people:
 *   PASS scenarios/a.scn                 (one line per scenario; -q: only
 *   FAIL scenarios/b.scn                  the ones that did not pass)
 *
 *   scenarios/b.scn:
 *     scenarios/b.scn:12: expect m.memo_meta == 0  actual: 1  message
 *     retained: 3 objects, 192 B (groups, then the first 5 objects with
 *     their paths; -v: all of them)
 *       2 x storage (storage), 64 B each, created b.scn:3, stale-memo,
 *         via m -> FakeTensorMode.converter -> ... -> storage
 *       storage#41 64 B, retains 64 B, created b.scn:3, stale-memo:
 *         m -> FakeTensorMode#2.converter -> ... -> storage#41
 *
 *   1 passed, 1 failed                   (", N skipped" when N > 0)
 * The last line is never coloured.
 * RP_JSON: the cli.md schema, keys in a fixed order, plus per scenario
 * "groups", "checkpoints", "error" (null or a string), "valgrind" (null or
 * {"definite": B, "indirect": B}), "stats"."leaked_bytes", and per retained
 * record "type" and "describe", per failure "col" and "objects".
 * RP_JUNIT: <testsuites><testsuite><testcase> with one <failure> (fail),
 * <error> (error) or <skipped/>. RP_TAP: TAP version 13 with YAML
 * diagnostics for every scenario that did not pass. */
int rp_write(const rp_run *run, rp_format fmt, FILE *f, const rp_options *o);

/* The text report in two parts, for a runner that streams each scenario's
 * line as it finishes: "PASS file" (coloured as o says), then the details
 * of what did not pass and the closing count line. */
void rp_write_status_line(const rp_scenario *sc, FILE *f, const rp_options *o);
int rp_write_text_tail(const rp_run *run, FILE *f, const rp_options *o);

void rp_scenario_clear(rp_scenario *s);   /* frees every owned field, zeroes s */
void rp_run_count(rp_run *run);           /* fills passed/failed/skipped */

/* Building a scenario's record (strings are copied; NULL strings stay NULL).
 * NULL / -1 with ER_OOM, nothing changed. */
int rp_scenario_set_file(rp_scenario *s, const char *file);
int rp_scenario_set_error(rp_scenario *s, const char *message);
/* The recording was not judged: stop_site and stop_why copied, status
 * RP_ERROR, error "NOT JUDGED: the recorder stopped at SITE (WHY)". */
int rp_scenario_set_not_judged(rp_scenario *s, const char *site, const char *why);
/* "NOT JUDGED: the recorder stopped at SITE (WHY)" of a scenario that has
 * stop_site, in buf (n >= 1); "" otherwise. */
void rp_not_judged_text(const rp_scenario *s, char *buf, size_t n);
rp_failure *rp_scenario_add_failure(rp_scenario *s, uint32_t line, uint32_t col,
                                    const char *text, const char *actual,
                                    const char *message);
int rp_scenario_add_checkpoint(rp_scenario *s, const char *name, int64_t growth);
/* Where a failure is, the program's words first: "prog.py:12" (its
 * prog_file), else the scenario's "file.scn:12" ("file.scn" for line 0). */
void rp_failure_site(const rp_scenario *s, const rp_failure *f, char *buf, size_t n);
/* Group the records of s and of its failures that have none
 * (hp_group_records), once, as the scenario ends or is read back: the
 * writers show groups only. 0, or -1 with ER_OOM. */
int rp_scenario_group(rp_scenario *s);

/* JSON in and out for `fakegc diff`: a reader of our own schema (a
 * recursive-descent parser, depth limit 64, any input may be hostile).
 * Reads tool/version/allocator/inject/compat, every scenario's file,
 * status, expectations, failures (line, col, text, actual, message,
 * objects), retained records (id, kind, type, created, bytes,
 * retained_bytes, reason, path, describe), stats, checkpoints, error,
 * valgrind, and the summary (counted from the scenarios when absent);
 * groups are rebuilt from the retained records. Unknown keys are skipped.
 * 0, or -1 with "PATH:LINE:COL: what" in err and *out zeroed (nothing
 * leaked; ER_OOM set when memory ran out). */
int rp_read_json(const char *path, rp_run *out, char *err, size_t errlen);
/* The same from a buffer; `name` prefixes messages. */
int rp_read_json_text(const char *text, size_t len, const char *name, rp_run *out,
                      char *err, size_t errlen);
void rp_run_free_read(rp_run *run);       /* frees what rp_read_json made */
/* The strings a read run's records point into (types, sites, paths' text
 * pool) are run->owned: a caller that moves scenarios out sets it NULL
 * before rp_run_free_read and frees it with this once they are gone. */
void rp_read_pool_free(void *owned);

/* Compare two runs (as read back from JSON) and print what changed to f:
 *   - a scenario that passed (or was absent) and now fails or errors, and
 *     every failing expectation (matched by its text, then line) that the
 *     base did not have;
 *   - newly retained objects: records matched by kind + created site + path
 *     shape (hp_path_shape), counts compared;
 *   - growth: a scenario's retained count, retained bytes and leaked bytes,
 *     and each checkpoint's growth, when larger than in base;
 *   - improvements and peak-byte changes over 10% as notes.
 * Returns 1 when there is a regression, 0 when none, -1 on OOM (ER_OOM). */
int rp_diff(const rp_run *base, const rp_run *cur, FILE *f, const rp_options *o);

/* The same with every option: text, JSON (schema fakegc-diff/2) or
 * Markdown (for a pull request). A scenario of base missing from cur is a
 * regression unless allow_missing (then a note). The text groups items by
 * scenario, `+` for what is new (regressions), `-` for what is gone,
 * `~` notes; new failures and newly retained groups show the retention
 * path and retained size of their dominating object. It ends with
 * "diff: N scenarios regressed (N items), N improved (N items)[, N missing
 * from the new run]". Notes say when allocator, compat or inject differ. */
typedef enum rp_diff_format { RP_DIFF_TEXT, RP_DIFF_JSON, RP_DIFF_MARKDOWN } rp_diff_format;
typedef struct rp_diff_options {
    int color, verbose, allow_missing;
    rp_diff_format format;
} rp_diff_options;
int rp_diff_write(const rp_run *base, const rp_run *cur, FILE *f, const rp_diff_options *o);

/* A view of `in` holding only the scenarios whose file keep(file, ctx)
 * accepts (`diff -k`), in order, with passed/failed/skipped/errors counted
 * again. Shallow: the scenarios still belong to in, which must outlive the
 * view. 0, or -1 (ER_OOM). rp_run_view_free frees the view's own array. */
int rp_run_view(const rp_run *in, int (*keep)(const char *file, void *ctx), void *ctx,
                rp_run *view);
void rp_run_view_free(rp_run *view);

#endif
