/* sc_vm.h - the interpreter's state, shared by sc_interp.c (statements and
 * expressions) and sc_run.c (rounds, teardown, end check). Not public. */
#ifndef FAKEGC_SC_VM_H
#define FAKEGC_SC_VM_H

#include "scenario/sc_int.h"

#include "core/obj.h"
#include "fake/fk.h"
#include "heap/hp.h"
#include "report/rp_verdict.h"

enum { V_UNBOUND = 100 };    /* a variable slot never bound or deleted */

typedef struct sc_val {
    uint8_t k;               /* sc_vkind or V_UNBOUND */
    int64_t i;               /* V_INT, V_BOOL, V_DTYPE; V_STR length */
    obj *o;                  /* V_OBJ (a strong reference when owned) */
    const char *s;           /* V_STR (arena or static text) */
    int64_t tup[TS_MAX_DIM]; /* V_TUPLE: i elements */
    uint64_t sym;            /* V_INT: a size expression's hash (fk_sym_*), i its
                                hint; 0 for a plain integer */
} sc_val;

/* One execution of a program site (an `at` call): the first object id made
 * after it. */
typedef struct sc_exec {
    const char *file;
    uint32_t line;
    uint32_t round, rounds;  /* at(FILE, LINE, ROUND, ROUNDS); 0 0: counted */
    uint64_t id;
} sc_exec;

/* A program's named mark (`mark("LABEL")`): what is made after it has ids
 * >= id. */
typedef struct sc_mark {
    char label[RP_VMARK_LEN];
    uint64_t id;
} sc_mark;

typedef struct sc_census {
    int reached;
    uint64_t total;
    uint64_t next_id;        /* obj_next_id() there: objects made since have ids >= it */
    uint64_t kinds[OBJ_KIND_COUNT];
} sc_census;

struct sc_vm {
    const sc_program *p;
    const sc_options *o;
    rp_scenario *out;
    sc_val *vars;
    uint64_t *stamp;         /* bind order of each slot (0: unbound) */
    uint64_t stamp_next;
    obj *with_stack[SC_MAX_NESTING];
    int nwith;
    uint64_t sym_sig;        /* the constructor being called: its sizes'
                                signature when symbolic (sc_ar_sizes), else 0 */
    hp_root *roots;          /* nvars + SC_MAX_NESTING entries, scratch */
    sc_census *cps;          /* one per checkpoint name */
    uint64_t executed;       /* statements executed (all rounds) */
    int gc_mode;             /* SC_GC_* */
    fk_policy sweep;
    int64_t sweep_every;
    int end_check;
    int count_expectations;  /* only in the first round */
    /* raises(): what the innermost failing call leaked */
    int in_raises;
    int leak_noted;
    uint64_t leak_objects, leak_bytes;
    const sc_stmt *cur;      /* statement being executed */
    int stopped;             /* a statement failed: stop the round */
    int limit_hit;           /* ... with LimitExceeded (not an interrupt) */
    uint64_t peak;           /* highest sc_model_bytes() after a statement */
    /* One heap snapshot for everything asked of one heap state: kept while
     * only expectations run (snap_at: vm->executed when last used). */
    hp_graph *snap;
    uint64_t snap_at, snap_live, snap_zombie, snap_gc;
    int dot_written;         /* a failure's graph went to --dot */
    /* sc_var_uses: per slot, 1 + the offset of its last read (loops: the
     * loop's end); root_use: per root of sc_vm_roots, still in use */
    uint32_t *last_use;
    uint8_t *root_use;
    uint64_t kinds0[OBJ_KIND_COUNT];   /* live objects per kind at the round's start */
    size_t roots_cap;        /* entries of roots */
    /* the program's words (sc_verdict.c) */
    hp_root *holds;          /* hold(X, PATH): strong references, name = PATH */
    size_t nholds, cap_holds;
    const char *at_file;     /* at(FILE, LINE): the site of what follows */
    uint32_t at_line;
    uint64_t at_seen;        /* at() calls so far: the program's events */
    sc_exec *execs;          /* at() calls, in order */
    size_t nexecs, cap_execs;
    sc_mark *marks;          /* mark() calls, in order (ids ascending) */
    size_t nmarks, cap_marks;
    int64_t rep_iter;        /* iteration of the innermost repeat (0-based) */
    int fidelity;            /* the program has a verdict(): its expectations
                                are fidelity checks */
    int whatif;              /* a recording under another design: its
                                expectations are skipped (sc_whatif.c) */
    int track;               /* a recording: memo counters sampled per statement */
};

/* The snapshot of the current heap state with the current roots (reused
 * when nothing but expectations ran since), or NULL (er set). Owned by vm. */
hp_graph *sc_vm_snapshot(sc_vm *vm);
void sc_vm_drop_snapshot(sc_vm *vm);
/* Move a summary into a scenario's retained fields / a failure's. */
void sc_summary_to_scenario(hp_summary *sm, rp_scenario *out);
void sc_summary_to_failure(hp_summary *sm, rp_failure *f);
size_t sc_examples(const sc_vm *vm);
/* --dot and --objects for one reported state of g (sc_emit.c): the DOT
 * cluster of the records r (once per scenario: the first state reported),
 * the objects stream of every object `which` covers (hp_which), or of r
 * when which is -1. line: the failing statement's, 0 for the teardown. */
void sc_vm_emit(sc_vm *vm, hp_graph *g, int which, const hp_retained *r, size_t n,
                const hp_group *gr, size_t ngr, uint32_t line);

/* Bytes live through the allocator that belong to the model (not the
 * interpreter, heap analysis or report records). */
uint64_t sc_model_bytes(void);

/* Execute the program's top level once. Returns 0, or -1 when a statement
 * failed (recorded in out; vm->stopped set). */
int sc_exec_program(sc_vm *vm);

/* Roots for heap analysis: the bound variables, the `with` stack and the
 * program's holds (hold() makes room for them). Returns the count; fills
 * vm->roots and vm->root_use (a variable read at or after the current
 * statement, every `with` entry and every hold are in use). */
size_t sc_vm_roots(sc_vm *vm);

/* Values and expressions (sc_interp.c), for the words' evaluators. An
 * evaluated object is a new strong reference the caller drops. */
/* The program's words (sc_verdict.c): the site of the statement about to
 * run under at(); the holds dropped and the executions forgotten
 * (teardown). */
void sc_vm_at_statement(sc_vm *vm);
void sc_vm_release_holds(sc_vm *vm);

/* What-if replay (sc_whatif.c, designs.md "Replaying a 1.13.1 recording
 * under 2.x"). sc_is_recording: p says it is a recording in its config
 * recording line (the recorder writes it), or, a recording made before
 * the recorder wrote that line, its first line is the recorder's comment.
 * sc_recorded_design (sc.h): the design a recording was made on; `run`
 * follows it without --compat or config compat.
 * sc_whatif_of: 1 when p is a recording and design (an fk_design_id, not
 * the default) is another row than the one it was recorded on. After each
 * statement of a recording, sc_whatif_sample adds the memo entries and
 * pending storages of the live converters to the peaks (vm->out->memo_*);
 * at the program's end, sc_whatif_finish writes vm->out->whatif (a what-if only):
 * the skipped count and this design's final counters per mode. */
int sc_is_recording(const sc_program *p);
int sc_whatif_of(const sc_program *p, int design);
void sc_whatif_sample(sc_vm *vm);
int sc_whatif_finish(sc_vm *vm);

int sc_eval(sc_vm *vm, const sc_expr *e, sc_val *out);
void sc_val_drop(sc_val *v);
void sc_set_int(sc_val *v, int64_t i);
void sc_set_bool(sc_val *v, int b);
int sc_set_obj(sc_val *v, obj *o);          /* takes the reference; NULL: -1 */
const char *sc_val_type(const sc_val *v);   /* "fake tensor", "int", ... */
int sc_as_int(const sc_val *v, int64_t *out);
ts_tensor *sc_as_tensor(const sc_val *v);
const sc_expr *sc_kwarg(const sc_expr *e, const char *name);
/* An integer (bools count), or a tuple / single integer into v[0..*n). */
int sc_eval_int(sc_vm *vm, const sc_expr *e, int64_t *out, const char *what);
/* Variable slot unbound (`del`, the end of a run): its value's reference goes. */
void sc_unbind(sc_vm *vm, uint32_t slot);
int sc_eval_int_list(sc_vm *vm, const sc_expr *e, int64_t *v, int *n, const char *what);
/* Sizes that may be symbolic (2*s0): the hints, and each one's expression
 * hash (0: a plain number) in *sym (fk.h's fk_sym_*). */
int sc_eval_size(sc_vm *vm, const sc_expr *e, int64_t *out, uint64_t *sym, const char *what);
int sc_eval_size_list(sc_vm *vm, const sc_expr *e, int64_t *v, uint64_t *sym, int *n,
                      const char *what);

/* The words (sc_call.c): the one dispatch through a vocabulary row (recv
 * borrowed, NULL for a function), and the calls the expressions make
 * (sc_call_method and sc_read_attr consume *recv). */
int sc_call_word(sc_vm *vm, const sc_word *w, const sc_expr *e, const sc_val *recv,
                 sc_val *out);
int sc_call_builtin(sc_vm *vm, const sc_expr *e, sc_val *out);
int sc_call_method(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out);
int sc_read_attr(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out);
/* For expectations: a counter attribute of a mode or converter; what
 * alive(X) looks at; the objects behind live(...)/bytes(), selected in g. */
int sc_read_counter(const sc_val *r, const sc_expr *e, int64_t *v);
obj *sc_liveness_subject(const sc_val *v, int *alive);
void sc_census_objects(const sc_expr *e, hp_graph *g);

/* Variable reads (sc_use.c): last[slot] = 1 + the offset of the slot's
 * last read (0: never read), nvars entries. */
void sc_var_uses(const sc_program *p, uint32_t *last);
int sc_var_in_use(const sc_vm *vm, uint32_t slot);

/* Recording into the report (sc_record.c). All tolerate OOM (a field stays
 * NULL). */
char *sc_rp_strdup(const char *s);
void sc_rp_free_str(char *s);
/* A failure of statement s, of cause (rp_fail_cause); an expectation's
 * query (rp_failure.query) is read from its expression. */
rp_failure *sc_add_failure(sc_vm *vm, const sc_stmt *s, int cause, const char *actual,
                           const char *message);
void sc_format_val(const sc_val *v, char *buf, size_t n);
int sc_rp_set_error(rp_scenario *out, const char *msg);
/* The statement as written (no comment), truncated to n - 1 bytes. */
void sc_stmt_text(const sc_vm *vm, const sc_stmt *s, char *buf, size_t n);

#endif
