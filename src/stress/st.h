/* st.h - stress mode: random tensor lifecycles checked against an
 * independent model, the shrinker, and the runner they share.
 *
 *   st_config c; st_config_default(&c);
 *   st_script s = {0}; st_text txt = {0};
 *   st_generate(&c, seed, &s, &txt);          // actions + the .scn text
 *   st_env e; st_env_default(&e);             // how to run text (sc_options)
 *   st_outcome o; st_run_text(&e, "x.scn", txt.p, &o);
 *   if (o.status == ST_FAIL) {                // o.cls[0]: "expect mN.memo_meta == N"
 *       st_shrink_result r;
 *       st_shrink_script(&c, &e, &s, o.cls[0], &r);   // r.text: the reproducer
 *   }
 *   st_text_free(&txt); st_script_free(&s);
 *
 * A lifecycle is one scenario: the generator draws `steps` actions from a
 * seed (a splitmix64-seeded xoshiro256** of our own) and feeds each to the
 * MODEL, a deliberately simple re-statement of fakegc-semantics(7) with its own
 * structures (variables, the objects they refer to, strong edges, each
 * mode's memo entries and pending list, which objects are dead). The model
 * decides whether an action succeeds or raises, renders it as a statement
 * (`x = ...`, or `expect raises(E, ...)` when it must fail), and emits
 * `expect` lines with the values it predicts (memo counters, bytes(),
 * live("mode"), alive/dead of weak handles, unreachable()). It never reads
 * the core's state. Teardown and the strict end check come from sc_run.
 *
 * Every allocation is AL_K_SCENARIO (outside sc_model_bytes()).
 */
#ifndef FAKEGC_ST_H
#define FAKEGC_ST_H

#include <stddef.h>
#include <stdint.h>

#include "scenario/sc.h"

/* ---- weights ---- */

enum {
    ST_W_TENSOR, ST_W_META_TENSOR, ST_W_STRIDED, ST_W_SPARSE, ST_W_CSR, ST_W_QUANTIZED,
    ST_W_VIEW, ST_W_NEWOP, ST_W_INPLACE, ST_W_SPARSE_OP, ST_W_MODE, ST_W_META_CONVERTER,
    ST_W_FAKE, ST_W_FAKE_DEVICE, ST_W_META, ST_W_FAKE_OP, ST_W_REFAKE, ST_W_ATTR, ST_W_GRAD,
    ST_W_DEL, ST_W_WEAKREF, ST_W_GC, ST_W_SWEEP, ST_W_WITH, ST_W_ERROR,
    ST_W_SET, ST_W_DTYPE_VIEW, ST_W_STORAGE,   /* version 2 of the language */
    ST_W_FAKE_CONVERTER, ST_W_CONVERT,
    ST_W_TRACER,        /* version 3 */
    ST_W_CYCLE, ST_W_WEAK_MODE,
    ST_W_SHAPE_ENV, ST_W_CONSTANT, ST_W_DYNAMIC,   /* version 3, pytorch-2.3 only */
    ST_W_ITEM, ST_W_INFER,                         /* pytorch-2.14 only */
    ST_W_BASE_CYCLE,    /* 0 unless asked: a view's base in a cycle of its own */
    ST_W_EXPECT,        /* not an action: percent chance of a model check per step */
    ST_W_COUNT
};

typedef struct st_weights {
    uint32_t w[ST_W_COUNT];
} st_weights;

const char *st_weight_name(int i);
const char *st_weight_help(int i);
/* The language version action kind i needs (0: any) and the design its
 * help names it for (FK_D_DEFAULT: none); its help says them after
 * st_weight_help's text: "(version 3, pytorch-2.3 only)". */
unsigned st_weight_version(int i);
int st_weight_only(int i);   /* an fk_design_id */
uint32_t st_weight_default(int i);
void st_weights_default(st_weights *w);
/* "name=w,name=w": 0, or -1 with a message (valid names listed) in err. */
int st_weights_parse(st_weights *w, const char *csv, char *err, size_t n);

/* ---- configuration of the generator and its model ---- */

typedef struct st_config {
    st_weights weights;
    uint32_t steps;          /* actions per lifecycle (per seed) */
    int defer_callbacks;     /* obj_config.defer_callbacks is on */
    int gc_stress;           /* the run collects after every statement */
    int policy;              /* FK_SWEEP_* for modes made without sweep= */
    int design;              /* fk_design_id the lifecycles run under */
    int64_t sweep_every;     /* for modes made without sweep_every= */
    int expect_all;          /* render: every passive check after every action
                                (2: and every tensor query) */
    const char *expect_class;  /* render, with expect_all: only the checks whose
                                  text normalizes to this failure class
                                  (st_normalize; NULL: every check) */
} st_config;

void st_config_default(st_config *c);

/* ---- text and action lists ---- */

typedef struct st_text {
    char *p;                 /* NUL-terminated (NULL when empty) */
    size_t len, cap;
} st_text;
int st_text_add(st_text *t, const char *s, size_t n);
int st_text_printf(st_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_text_free(st_text *t);

/* One generated action; its meaning is in st_gen.c (the model re-checks it
 * in context, so a list with some actions removed still renders). */
typedef struct st_action {
    uint8_t op, sub;
    int8_t dst, a, b;
    uint8_t dtype, dev, flags;
    int8_t n, n2;
    int16_t v[6], v2[4];
} st_action;

typedef struct st_script {
    st_action *a;
    size_t n, cap;
} st_script;
void st_script_free(st_script *s);

/* Draw c->steps actions from seed, render them (with the sampled checks).
 * lines_out as for st_render. 0, or -1 on OOM. */
int st_generate(const st_config *c, uint64_t seed, st_script *out, st_text *text,
                uint32_t **lines_out, size_t *nlines);

/* Render actions[0..n) through a fresh model (actions no longer valid in
 * context are skipped). lines_out (may be NULL) gets, per text line, the
 * index of the action that produced it (UINT32_MAX for the header): an array of
 * *nlines entries (AL_K_SCENARIO; free with st_lines_free). *applied (may be
 * NULL): actions rendered. 0 or -1 (OOM). */
int st_render(const st_config *c, const st_action *a, size_t n, st_text *text,
              uint32_t **lines_out, size_t *nlines, size_t *applied);
void st_lines_free(uint32_t *lines, size_t nlines);

/* ---- running text ---- */

enum { ST_PASS = 0, ST_FAIL, ST_PARSE, ST_CRASH, ST_INTERNAL };
#define ST_MAX_CLASSES 8
#define ST_CLASS_LEN 112

/* What a failure class is, as a fact of the run that found it, set where
 * the class is made (its text is for people and for matching a class
 * again: nothing reads these facts back out of it). */
typedef enum st_class_kind {
    ST_CK_FAILURE = 0,   /* another failing statement, check or verdict ("error:
                            ...", "growth: ", "internal: ...", a verdict's) */
    ST_CK_FINDING,       /* a bad access the guard caught ("finding: ...") */
    ST_CK_EXPECT,        /* an expectation did not hold (its text; query says
                            what it asked) */
    ST_CK_EXPECT_TENSOR, /* the same about a tensor query (t.numel(), t.size(0)) */
    ST_CK_VERIFY,        /* --verify: an invariant broke ("verify: ...") */
    ST_CK_GUARD,         /* the guard allocator's check found damage ("guard: ...") */
    ST_CK_RETAINED,      /* the end check: objects retained ("retained: KIND") */
    ST_CK_LEAK,          /* the end check: bytes no object holds ("leak: ...") */
    ST_CK_CRASH          /* the run died or timed out ("crash: SIGSEGV") */
} st_class_kind;

typedef struct st_outcome {
    int status;
    int ncls;                              /* failure classes, first one first */
    char cls[ST_MAX_CLASSES][ST_CLASS_LEN];
    st_class_kind kind[ST_MAX_CLASSES];    /* cls[i]'s kind */
    char query[ST_MAX_CLASSES][RP_QUERY_LEN];   /* ST_CK_EXPECT*: what cls[i]
                                                   asked (rp_failure.query) */
    uint32_t first_line;                   /* line of the first failure (0: end) */
    char first[256];                       /* "LINE: TEXT  actual: ..." */
    uint64_t statements;
    uint64_t live_objects;                 /* before teardown, last statement */
} st_outcome;

typedef struct st_env {
    sc_options sc;           /* verify_every, gc, sweep, ... */
    const char *inject;      /* what cli_env_setup injected ("" none) */
    int check_guard;         /* the allocator chain has a guard layer */
} st_env;

void st_env_default(st_env *e);
/* Install the verify hook (live bytes vs objects, guard findings) and the
 * guard's RECORD action on the current allocator. */
void st_env_prepare(st_env *e);

/* Parse and run text in this process; fill o. Returns o->status. */
int st_run_text(const st_env *e, const char *name, const char *text, st_outcome *o);
/* The same in a forked child (a crash is ST_CRASH "crash: SIGSEGV"); with
 * no_inject the child runs without injected bugs. */
int st_run_forked(const st_env *e, const char *name, const char *text, int no_inject,
                  st_outcome *o);
/* The outcome of a run a finding ended (wk.h) at line: ST_FAIL, first
 * "LINE: finding: KIND  actual: WHAT", the class "finding: WHAT" normalized,
 * the statement in hand counted. Async-signal-safe (for wk_on_finding). */
void st_finding_outcome(uint32_t line, const char *what, st_outcome *o);

/* Does o have a failure of class cls? */
int st_outcome_has(const st_outcome *o, const char *cls);
/* Normalize a message into a class: wk_normalize. */
void st_normalize(const char *in, char *out, size_t n);

/* ---- shrinking ---- */

typedef struct st_shrink_stats {
    uint32_t runs;               /* candidate runs */
    size_t before_lines, after_lines;
    size_t after_statements;
} st_shrink_stats;

/* Minimize a failing scenario text keeping class cls: delta debugging over
 * statements and blocks, then argument simplification. With check_clean,
 * every accepted candidate must also pass without the injected bugs.
 * *out gets the result (at worst the input). 0 or -1 (OOM). */
int st_shrink_text(const st_env *e, const char *text, const char *cls, int check_clean,
                   st_text *out, st_shrink_stats *stats);

/* Minimize a generated lifecycle: actions first (the model re-renders the
 * expectations of every candidate: which, kind (cls's) says), then the
 * text. orig_text: the text as generated (shrunk as text when the
 * re-rendered actions do not show the failure). 0 or -1. */
int st_shrink_script(const st_config *c, const st_env *e, const st_script *s,
                     const char *orig_text, const char *cls, st_class_kind kind,
                     int check_clean, st_text *out, st_shrink_stats *stats);

/* Statements in a text (non-blank, non-comment lines, `end` excluded). */
size_t st_count_statements(const char *text);

/* ---- the stress loop ---- */

typedef struct st_stress_opts {
    st_config cfg;
    st_env env;
    uint64_t seed;               /* lifecycle i has seed `seed + i` */
    uint32_t shard_k, shard_n;   /* run lifecycles i = K, K+N, K+2N, ... (N 0 or 1:
                                    all), so N shards together run exactly
                                    the lifecycles of one process */
    uint64_t max_steps;          /* budget: ceil(max_steps / cfg.steps) lifecycles
                                    of the whole campaign (0: no limit) */
    double max_seconds;          /* 0: no limit */
    uint64_t check_every;        /* steps between verifies (0: never) */
    const char *out_dir;         /* where failing lifecycles are written */
    int shrink;                  /* minimize a failure */
    int check_clean;             /* shrink: candidates must pass without bugs */
    int progress;                /* a progress line on stderr */
} st_stress_opts;

typedef struct st_stress_result {
    uint64_t steps, statements, lifecycles, max_live;
    double seconds;
    int failed;                  /* a failure (or crash) was found */
    uint64_t fail_seed;
    uint64_t fail_index;         /* the failing lifecycle's index i (fail_seed - seed) */
    uint64_t fail_steps;         /* steps run until the failing check */
    char cls[ST_CLASS_LEN];
    st_class_kind cls_kind;      /* what cls is */
    char query[RP_QUERY_LEN];    /* ST_CK_EXPECT*: what it asked */
    char first[256];
    char file[512], min_file[512];
    size_t file_statements, min_statements;
    uint32_t shrink_runs;
    int write_error;             /* errno of a reproducer that could not be written */
    char unwritten[512];         /* its path (file and min_file are then "") */
    st_text min_text;            /* the reproducer (free with st_text_free) */
} st_stress_result;

/* The campaign's lifecycles for o->max_steps (UINT64_MAX: no step limit). */
uint64_t st_stress_lifecycles(const st_stress_opts *o);

/* Run lifecycles in a forked worker until a limit or a failure; on a
 * failure write OUT_DIR/stress-seed-S.scn and (shrink) .min.scn. 0, or -1
 * when the worker could not run (r->first says why). */
int st_stress(const st_stress_opts *o, st_stress_result *r);

/* ---- the OOM loop (SQLite's test_malloc method) ---- */

typedef struct st_oom_opts {
    sc_options sc;
    int modes;                   /* bit 0 transient, bit 1 persistent */
    uint64_t max_fail;           /* failure points per mode (0: until none fails) */
    int every;                   /* 1: every allocation index (the quadratic loop);
                                    0: one point per allocation context */
    int progress;                /* a progress line on stderr (a terminal) */
    const char *name;            /* for the progress line */
} st_oom_opts;

/* An allocation context: the C site and kind of an allocation and the
 * scenario statement (line) it happened in, with that statement's
 * executions past the ST_OOM_FOLD-th folded into one (a loop's 5000th
 * iteration fails the same way as its 4th). Statement 0: before the first
 * or after the last statement (setup, teardown, the end check). */
#define ST_OOM_FOLD 3

typedef struct st_oom_finding {
    int persistent;
    uint64_t point;              /* the failed allocation, 1-based */
    char what[240];
} st_oom_finding;

#define ST_OOM_MAX_FINDINGS 8

typedef struct st_oom_result {
    int baseline_status;         /* rp_status of the run without failures */
    uint64_t allocations;        /* of that run (successful) */
    uint64_t attempts;           /* allocation attempts of that run */
    uint64_t points[2];          /* runs that had an allocation failed, per mode */
    uint64_t contexts;           /* distinct allocation contexts of the baseline */
    uint64_t skipped;            /* baseline attempts not tried: a context seen before */
    int capped[2];               /* stopped at max_fail */
    uint32_t nfindings;          /* all findings; the first few in f */
    st_oom_finding f[ST_OOM_MAX_FINDINGS];
    int finding;                 /* a bad access (a guard finding, a decref of a dead
                                    object) ended the child's loop (forked runs): at
                                    crash_point/crash_persistent (point 0: in the
                                    run without failures) */
    uint32_t finding_line;       /* the statement in hand */
    char finding_what[200];      /* the guard's or the core's text */
    int crashed;                 /* the child died (forked runs) */
    int crash_persistent;
    uint64_t crash_point;
    char crash[64];
} st_oom_result;

/* Fail the first allocation of every allocation context of p's run (see
 * ST_OOM_FOLD; with o->every: the 1st, 2nd, ... allocation until a run has
 * no failure), transiently (that one only) and persistently (it and every
 * later one). Every
 * run must pass or stop at a statement with OutOfMemory, retain nothing at
 * the end check, and leave the allocator and the object registry as they
 * were. In this process. 0, or -1 when the baseline run failed hard. */
int st_oom_program(const sc_program *p, const st_oom_opts *o, st_oom_result *r);
/* The same in a forked child: a crash is reported with its failure point. */
int st_oom_forked(const sc_program *p, const st_oom_opts *o, st_oom_result *r);

/* ---- PRNG ---- */
typedef struct st_rng {
    uint64_t s[4];
} st_rng;
void st_rng_seed(st_rng *r, uint64_t seed);
uint64_t st_rng_next(st_rng *r);
uint32_t st_rng_below(st_rng *r, uint32_t n);   /* uniform in [0, n), n > 0 */

#endif
