/* sc.h - the scenario language (.scn): parse, check, run.
 *
 *   int nerr = 0;
 *   sc_program *p = sc_parse_file("scenarios/memo/weak_keys.scn", stderr, 0, &nerr);
 *   if (!p) exit(2);                        // diagnostics already printed
 *   sc_options o; sc_options_default(&o);
 *   rp_scenario r = {0};
 *   sc_run(p, &o, &r);                      // r.status: RP_PASS / RP_FAIL / RP_ERROR
 *   rp_scenario_clear(&r); sc_program_free(p);
 *
 * Parsing checks everything that can be known before running (syntax,
 * unknown functions/methods/keywords with "did you mean", variables used
 * before any line binds them, arity of built-ins, keyword argument names,
 * misplaced `config`/`end`, unterminated strings/blocks, limits on line
 * length and nesting). Errors are printed as
 *     FILE:LINE:COL: error: MESSAGE
 *     <the source line>
 *     <spaces>^
 * and the program is not built (NULL). Columns count UTF-8 code points,
 * from 1.
 *
 * Running: the allocator must already be installed (al_install). A run
 * deletes every variable (newest binding first), runs gc(), does the strict
 * end check, then reclaims everything the scenario left (reported objects
 * included), so the process is back to zero objects afterwards and the next
 * scenario starts clean. Object ids keep counting.
 *
 * All memory comes from the allocator: the program with kind AL_K_SCENARIO,
 * report records through src/report's conventions.
 */
#ifndef FAKEGC_SC_H
#define FAKEGC_SC_H

#include <stdint.h>
#include <stdio.h>

#include "report/rp.h"

/* Hard limits of the language (parse errors past them). */
#define SC_MAX_LINE 65536        /* bytes per line, newline excluded */
/* bytes per scenario file: a 100 MB scenario took 15 s and 2 GB to parse,
 * and 2 GiB files were accepted (issue 15); recorded programs of thousands
 * of statements are well under 1 MiB */
#define SC_MAX_FILE ((size_t)64 << 20)
#define SC_MAX_NESTING 256       /* open blocks, and nested ( / calls in a line */
#define SC_MAX_ARGS 64           /* arguments in one call */
#define SC_MAX_ERRORS 20         /* diagnostics printed before giving up */

/* Default run limits (LimitExceeded past them). */
#define SC_DEFAULT_MAX_STATEMENTS 100000000ull
#define SC_DEFAULT_MAX_OBJECTS 10000000ull
#define SC_DEFAULT_MAX_BYTES (1ull << 30)

typedef struct sc_program sc_program;

/* Parse source text (need not be NUL-terminated; it is copied). `file` is
 * the name used in diagnostics and object sites (copied, interned for the
 * program's life). Diagnostics go to diag (NULL: none). color: ANSI colour
 * in diagnostics. *nerrors (may be NULL) gets the number of errors found.
 * Returns NULL on any error (also on OOM: ER_OOM set, message printed). */
sc_program *sc_parse(const char *file, const char *src, size_t len, FILE *diag,
                     int color, int *nerrors);
/* Read and parse a file. A file that cannot be read is one error
 * ("FILE: error: cannot read: ..."). */
sc_program *sc_parse_file(const char *path, FILE *diag, int color, int *nerrors);
void sc_program_free(sc_program *p);

const char *sc_program_file(const sc_program *p);
size_t sc_program_statements(const sc_program *p);   /* statements in the text */

/* -1 in an override field means "the scenario's config". */
enum { SC_GC_MANUAL = 0, SC_GC_AUTO = 1, SC_GC_STRESS = 2 };

typedef struct sc_options {
    int gc;                  /* -1 or SC_GC_* */
    int sweep;               /* -1 or fk_policy (FK_SWEEP_EAGER/PERIODIC) */
    int default_sweep;       /* policy when neither `sweep` nor the scenario's
                                config says (--compat pytorch-1.13: periodic);
                                -1: eager */
    int64_t sweep_every;     /* default sweep_every of modes/converters (128) */
    int end_check;           /* -1, 0 off, 1 strict */
    uint64_t max_statements; /* statements executed; 0: no limit */
    uint64_t max_objects;    /* live objects; 0: no limit */
    uint64_t max_bytes;      /* real tensor data bytes (ts_set_max_bytes); 0: none */
    int verify;              /* hp_verify + fk_verify after every statement */
    /* With verify == 0: the same check after every verify_every-th statement
     * executed (0: never). Used by `fakegc stress --check-every`. */
    uint64_t verify_every;
    /* Extra invariant run with every verify (may be NULL): 0 holds, -1
     * broken with why written (it then fails the statement as verify does). */
    int (*verify_hook)(void *arg, char *why, size_t n);
    void *verify_hook_arg;
    uint32_t repeat;         /* rounds in one process (>= 1); see sc_run */
    int valgrind;            /* 1 (default): under memcheck, run an added leak
                                check around the scenario and attribute new
                                leaks to it (valgrind_* fields); costs a heap
                                scan per scenario */
    FILE *dot;               /* hp_write_dot of the retained graph of a
                                failing scenario, or NULL */
    /* Called after every statement (timeline), may be NULL. */
    void (*on_statement)(void *arg, uint32_t line, uint64_t live_objects,
                         uint64_t live_bytes);
    void *on_statement_arg;
} sc_options;

void sc_options_default(sc_options *o);

/* Run p, filling *out (zero it first; free with rp_scenario_clear). Returns
 * 0 when the scenario ran to a verdict (pass or fail, in out->status), -1
 * when fakegc itself failed (out->status RP_ERROR, out->error says why).
 *
 * repeat > 1: the scenario runs that many rounds (each with its teardown,
 * without the strict check); retained objects are counted after each round
 * by kind and creating line, and only what grows with the number of rounds
 * fails the scenario (one failure per growing (kind, line), with the
 * objects of the last round attached). The end check then applies to the
 * last round only for growth; everything is reclaimed at the end. */
int sc_run(const sc_program *p, const sc_options *o, rp_scenario *out);

/* Parse and run text in one call (tests, fuzzing). Returns what sc_run
 * returns, or -2 when the text does not parse (out untouched). */
int sc_run_source(const char *file, const char *src, const sc_options *o,
                  rp_scenario *out, FILE *diag);

/* Edit distance (Levenshtein, with adjacent transpositions counting 1) of
 * two strings, capped: returns cap + 1 when larger. For "did you mean". */
size_t sc_edit_distance(const char *a, const char *b, size_t cap);

/* Force every live object and zombie the scenario left to be freed (the
 * end-of-run reclaim; also after a failed or OOM run). Returns how many
 * objects it had to force. */
uint64_t sc_reclaim_all(void);

#endif
