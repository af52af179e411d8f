/* sc_interp.c - statements and expressions of a parsed scenario.
 *
 * Values own what they hold: an evaluated object is a new strong reference
 * that the caller drops (sc_val_drop). Every error path drops what it took, so
 * a failing statement leaves nothing half-built behind. Nothing here
 * allocates per statement except what the called operations make (the
 * failure records of a failing statement aside).
 */
#include "scenario/sc_vm.h"
#include "scenario/sc_eval.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/wr.h"
#include "tensor/ts.h"


void sc_val_drop(sc_val *v)
{
    if (v->k == V_OBJ && v->o)
        obj_decref(v->o);
    v->k = V_NONE;
    v->o = NULL;
}

void sc_set_int(sc_val *v, int64_t i)
{
    v->k = V_INT;
    v->i = i;
    v->o = NULL;
    v->sym = 0;
}

void sc_set_bool(sc_val *v, int b)
{
    v->k = V_BOOL;
    v->i = b != 0;
    v->o = NULL;
}

/* Takes ownership of a new reference (NULL: error already set). */
int sc_set_obj(sc_val *v, obj *o)
{
    if (!o)
        return -1;
    v->k = V_OBJ;
    v->o = o;
    return 0;
}

const char *sc_val_type(const sc_val *v)
{
    switch (v->k) {
    case V_NONE: return "none";
    case V_INT: return "int";
    case V_BOOL: return "bool";
    case V_STR: return "string";
    case V_DTYPE: return "dtype";
    case V_TUPLE: return "tuple";
    case V_MFMT: return "memory format";
    case V_OBJ: {
        if (ts_is_tensor(v->o)) {
            const ts_tensor *t = ts_of(v->o);
            if (ts_is_fake(t))
                return "fake tensor";
            if (t->layout != TS_STRIDED)
                return "sparse tensor";
            return ts_is_meta(t) ? "meta tensor" : "tensor";
        }
        return v->o->type->name ? v->o->type->name : obj_kind_name(v->o->type->kind);
    }
    default: return "unbound";
    }
}

void sc_format_val(const sc_val *v, char *buf, size_t n)
{
    switch (v->k) {
    case V_NONE: snprintf(buf, n, "none"); break;
    case V_INT: snprintf(buf, n, "%" PRId64, v->i); break;
    case V_BOOL: snprintf(buf, n, "%s", v->i ? "true" : "false"); break;
    case V_STR: snprintf(buf, n, "\"%.*s\"", v->i > 100 ? 100 : (int)v->i, v->s); break;
    case V_DTYPE: snprintf(buf, n, "%s", ts_dtype_name((ts_dtype)v->i)); break;
    case V_MFMT: snprintf(buf, n, "%s", ts_memfmt_name((ts_memfmt)v->i)); break;
    case V_TUPLE: {
        size_t w = 0;
        buf[0] = '\0';
        for (int64_t k = 0; k < v->i && w + 1 < n; k++) {
            int c = snprintf(buf + w, n - w, "%s%" PRId64, k ? ", " : "(", v->tup[k]);
            if (c < 0)
                break;
            w += (size_t)c;
        }
        if (w + 1 < n)
            snprintf(buf + w, n - w, "%s)", v->i == 0 ? "(" : v->i == 1 ? "," : "");
        break;
    }
    case V_OBJ: {
        char d[64] = "";
        if (v->o->type->describe && !obj_expired(v->o))
            v->o->type->describe(v->o, d, sizeof d);
        snprintf(buf, n, "%s#%" PRIu64 "%s%s", v->o->type->name, v->o->id, d[0] ? " " : "", d);
        break;
    }
    default: snprintf(buf, n, "<unbound>"); break;
    }
}

int sc_as_int(const sc_val *v, int64_t *out)
{
    if (v->k == V_INT || v->k == V_BOOL) {
        *out = v->i;
        return 0;
    }
    return -1;
}

ts_tensor *sc_as_tensor(const sc_val *v)
{
    return v->k == V_OBJ && ts_is_tensor(v->o) ? ts_of(v->o) : NULL;
}

const sc_expr *sc_kwarg(const sc_expr *e, const char *name)
{
    for (int i = 0; i < e->nkw; i++)
        if (strcmp(e->kwnames[i], name) == 0)
            return e->kwvals[i];
    return NULL;
}

/* Evaluate to an integer (bools count as 1/0). */
int sc_eval_int(sc_vm *vm, const sc_expr *e, int64_t *out, const char *what)
{
    uint64_t sym;
    return sc_eval_size(vm, e, out, &sym, what);
}

/* A size: its hint into *out, its expression's hash into *sym (0: none). */
int sc_eval_size(sc_vm *vm, const sc_expr *e, int64_t *out, uint64_t *sym, const char *what)
{
    sc_val v = {0};
    if (sc_eval(vm, e, &v) < 0)
        return -1;
    if (sc_as_int(&v, out) < 0) {
        er_set(ER_TYPE, "%s must be an integer, got %s", what, sc_val_type(&v));
        sc_val_drop(&v);
        return -1;
    }
    *sym = v.k == V_INT ? v.sym : 0;
    return 0;
}

/* A tuple or a single size into v[0..*n), their expressions' hashes into
 * sym[0..*n). */
int sc_eval_size_list(sc_vm *vm, const sc_expr *e, int64_t *v, uint64_t *sym, int *n,
                      const char *what)
{
    if (e->kind == E_TUPLE) {
        if (e->nargs > TS_MAX_DIM)
            return er_set(ER_TYPE, "%s: at most %d dimensions, got %d", what, TS_MAX_DIM,
                          e->nargs);
        for (int i = 0; i < e->nargs; i++)
            if (sc_eval_size(vm, e->args[i], &v[i], &sym[i], what) < 0)
                return -1;
        *n = e->nargs;
        return 0;
    }
    if (sc_eval_size(vm, e, &v[0], &sym[0], what) < 0)
        return -1;
    *n = 1;
    return 0;
}

/* A tuple or a single integer into v[0..*n). */
int sc_eval_int_list(sc_vm *vm, const sc_expr *e, int64_t *v, int *n, const char *what)
{
    uint64_t sym[TS_MAX_DIM];
    return sc_eval_size_list(vm, e, v, sym, n, what);
}

/* Positional sizes: `f(2, 3)` or `f((2, 3))`. */
/* ---- postfix chains ---- */

static int is_link(const sc_expr *e)
{
    return e->kind == E_METHOD || e->kind == E_ATTR;
}

/* x.a.b().c, evaluated without recursing once per link: the parser bounds
 * a chain at SC_MAX_NESTING links, so the links fit one stack array; the
 * innermost receiver is evaluated first, then each link in source order
 * consumes the previous value. */
static int eval_chain(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    const sc_expr *link[SC_MAX_NESTING];
    int n = 0;
    const sc_expr *base = e;
    for (; is_link(base); base = base->recv) {
        if (n >= SC_MAX_NESTING)
            return er_set(ER_INTERNAL, "chain longer than %d links got past the parser (%d)",
                          SC_MAX_NESTING, n);
        link[n++] = base;
    }
    sc_val cur = {0};
    if (sc_eval(vm, base, &cur) < 0)
        return -1;
    while (n-- > 0) {
        sc_val next = {.k = V_NONE};
        int rc = link[n]->kind == E_METHOD ? sc_call_method(vm, link[n], &cur, &next)
                                           : sc_read_attr(vm, link[n], &cur, &next);
        if (rc < 0)
            return -1;      /* the link dropped cur */
        cur = next;
    }
    *out = cur;
    return 0;
}

/* ---- comparisons ---- */

/* Version 2: == and != compare values of one kind (integers and booleans
 * are one kind; tuples element by element; objects by identity); values
 * of two kinds are unequal, never an error. < <= > >= stay integers. */
static int values_equal(const sc_val *a, const sc_val *b)
{
    int64_t x, y;
    if (sc_as_int(a, &x) == 0 && sc_as_int(b, &y) == 0)
        return x == y;
    if (a->k != b->k)
        return 0;
    switch (a->k) {
    case V_NONE: return 1;
    case V_OBJ: return a->o == b->o;
    case V_STR: return a->i == b->i && memcmp(a->s, b->s, (size_t)a->i) == 0;
    case V_DTYPE: case V_MFMT: return a->i == b->i;
    case V_TUPLE:
        if (a->i != b->i)
            return 0;
        for (int64_t k = 0; k < a->i; k++)
            if (a->tup[k] != b->tup[k])
                return 0;
        return 1;
    default: return 0;
    }
}

static int compare(const sc_val *a, const sc_val *b, int op, int *res)
{
    int64_t x, y;
    if (op == C_EQ || op == C_NE) {
        int eq = values_equal(a, b);
        *res = op == C_EQ ? eq : !eq;
        return 0;
    }
    if (sc_as_int(a, &x) < 0 || sc_as_int(b, &y) < 0)
        return er_set(ER_TYPE, "cannot order %s and %s (only integers and booleans)",
                      sc_val_type(a), sc_val_type(b));
    switch (op) {
    case C_LT: *res = x < y; break;
    case C_LE: *res = x <= y; break;
    case C_GT: *res = x > y; break;
    default: *res = x >= y; break;
    }
    return 0;
}

/* ---- raises ---- */

/* Evaluates raises(ERROR, EXPR). *held is 1 when it holds; why explains a
 * miss. An OutOfMemory or internal error that was not the one expected is
 * not swallowed: it returns -1 with the error set. */
static int eval_raises(sc_vm *vm, const sc_expr *e, int *held, char *why, size_t n)
{
    sc_val v = {0};
    int saved_in = vm->in_raises, saved_noted = vm->leak_noted;
    vm->in_raises = 1;
    vm->leak_noted = 0;
    vm->leak_objects = vm->leak_bytes = 0;
    int rc = sc_eval(vm, e->args[0], &v);
    vm->in_raises = saved_in;
    int noted = vm->leak_noted;
    vm->leak_noted = saved_noted;
    er_kind want = (er_kind)e->ival;
    if (rc == 0) {
        char buf[128];
        sc_format_val(&v, buf, sizeof buf);
        sc_val_drop(&v);
        *held = 0;
        snprintf(why, n, "no error (the expression gave %s)", buf);
        return 0;
    }
    er_kind got = er_kind_get();
    if (got != want && (got == ER_OOM || got == ER_INTERNAL))
        return -1;
    if (got != want) {
        snprintf(why, n, "%s: %s", er_kind_name(got) ? er_kind_name(got) : "error",
                 er_message());
        er_clear();
        *held = 0;
        return 0;
    }
    er_clear();
    obj_safepoint();
    if (noted && (vm->leak_objects || vm->leak_bytes)) {
        snprintf(why, n, "%s raised, but the failed call leaked %" PRIu64 " object%s and %"
                 PRIu64 " bytes", er_kind_name(want), vm->leak_objects,
                 vm->leak_objects == 1 ? "" : "s", vm->leak_bytes);
        *held = 0;
        return 0;
    }
    *held = 1;
    return 0;
}

/* raises(ERROR, EXPR) outside expect: true when it holds */
int sc_ev_raises(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    char why[256];
    int held = 0;
    (void)recv, (void)a;
    if (eval_raises(vm, e, &held, why, sizeof why) < 0)
        return -1;
    sc_set_bool(out, held);
    return 0;
}

/* ---- expressions ---- */

/* (2, 3) as a value: integers only (a shape), to compare with t.size(). */
static int eval_tuple(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    int64_t v[TS_MAX_DIM];
    int n = 0;
    if (sc_eval_int_list(vm, e, v, &n, "a tuple element") < 0)
        return -1;
    out->k = V_TUPLE;
    out->o = NULL;
    out->i = n;
    memcpy(out->tup, v, (size_t)n * sizeof v[0]);
    return 0;
}

/* sN: the hint of the symbol of the innermost `with` mode's ShapeEnv. */
static int eval_symbol(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    obj *se = vm->nwith ? fk_mode_shape_env(vm->with_stack[vm->nwith - 1]) : NULL;
    if (!se)
        return er_set(ER_TYPE, "s%lld: a symbol needs a `with` mode that has a shape_env",
                      (long long)e->ival);
    int64_t hint = 0;
    if (fk_shape_hint(se, e->ival, &hint) < 0)
        return -1;
    sc_set_int(out, hint);
    out->sym = fk_sym_of_symbol(se, e->ival);
    return 0;
}

/* a + b, a - b, a * b, a // b (floor, as sympy's FloorDiv): on the hints,
 * and on the expressions when either side has a symbol. */
static int eval_arith(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    sc_val a = {0}, b = {0};
    int64_t x, y, r;
    if (sc_eval(vm, e->args[0], &a) < 0)
        return -1;
    if (sc_eval(vm, e->args[1], &b) < 0) {
        sc_val_drop(&a);
        return -1;
    }
    const sc_val *bad = a.k != V_INT ? &a : b.k != V_INT ? &b : NULL;
    int rc = 0;
    if (bad)
        rc = er_set(ER_TYPE, "a size expression needs integers or symbols, got %s",
                    sc_val_type(bad));
    x = a.i, y = b.i;
    if (!rc && e->sub == '/' && y == 0)
        rc = er_set(ER_SHAPE, "division by zero in a size expression");
    int over = 0;
    if (!rc) {
        switch (e->sub) {
        case '+': over = __builtin_add_overflow(x, y, &r); break;
        case '-': over = __builtin_sub_overflow(x, y, &r); break;
        case '*': over = __builtin_mul_overflow(x, y, &r); break;
        default:
            over = x == INT64_MIN && y == -1;
            r = over ? 0 : x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
            break;
        }
        if (over)
            rc = er_set(ER_SHAPE, "a size expression overflows 64 bits");
    }
    if (!rc) {
        sc_set_int(out, r);
        out->sym = fk_sym_combine(e->sub, x, a.sym, y, b.sym);
    }
    sc_val_drop(&a);
    sc_val_drop(&b);
    return rc;
}

int sc_eval(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    out->k = V_NONE;
    out->o = NULL;
    out->sym = 0;
    switch ((sc_ekind)e->kind) {
    case E_INT: sc_set_int(out, e->ival); return 0;
    case E_BOOL: sc_set_bool(out, (int)e->ival); return 0;
    case E_NONE: return 0;
    case E_STR:
        out->k = V_STR;
        out->s = e->name;
        out->i = (int64_t)e->slen;
        return 0;
    case E_DTYPE:
        out->k = V_DTYPE;
        out->i = e->sub;
        return 0;
    case E_VAR: {
        const sc_val *v = &vm->vars[e->slot];
        if (v->k == V_UNBOUND)
            return er_set(ER_TYPE, "variable '%s' is not bound (deleted by 'del'?)", e->name);
        *out = *v;
        if (out->k == V_OBJ)
            obj_incref(out->o);
        return 0;
    }
    case E_TUPLE:
        return eval_tuple(vm, e, out);
    case E_MFMT:
        out->k = V_MFMT;
        out->i = e->sub;
        return 0;
    case E_CALL: return sc_call_builtin(vm, e, out);
    case E_METHOD: case E_ATTR: return eval_chain(vm, e, out);
    case E_CMP: {
        sc_val a = {0}, b = {0};
        if (sc_eval(vm, e->args[0], &a) < 0)
            return -1;
        if (sc_eval(vm, e->args[1], &b) < 0) {
            sc_val_drop(&a);
            return -1;
        }
        int res = 0;
        int rc = compare(&a, &b, e->id, &res);
        sc_val_drop(&a);
        sc_val_drop(&b);
        if (rc < 0)
            return -1;
        sc_set_bool(out, res);
        return 0;
    }
    case E_RAISES:
        return sc_call_word(vm, e->word ? e->word : sc_builtin_row(B_RAISES), e, NULL, out);
    case E_ARITH: return eval_arith(vm, e, out);
    case E_SYM: return eval_symbol(vm, e, out);
    }
    return er_set(ER_INTERNAL, "bad expression kind %d", e->kind);
}

/* ---- expectations ---- */

static int literal(const sc_expr *e)
{
    return e->kind == E_INT || e->kind == E_BOOL || e->kind == E_NONE || e->kind == E_STR ||
           e->kind == E_DTYPE || e->kind == E_MFMT || e->kind == E_TUPLE;
}

static int counter_attr(const sc_expr *e)
{
    return e->kind == E_ATTR && (e->id == A_MEMO_FAKE || e->id == A_MEMO_META ||
                                 e->id == A_MEMO_STORAGE || e->id == A_PENDING);
}

/* Collect the objects behind a memo counter: the entries reached from the
 * converter(s) of `o` through edges whose label starts with `label`. */
typedef struct collect {
    hp_graph *g;             /* entries are selected there */
    obj_role role;           /* edges of this role (obj_type.edge_role) */
    const obj *from;         /* the converter being traversed */
    obj *convs[4];
    size_t nconv;
} collect;

static void collect_conv(obj *child, const char *label, long index, void *arg)
{
    collect *c = arg;
    (void)label;
    (void)index;
    if (!child || c->nconv >= 4)
        return;
    obj_kind k = child->type->kind;
    if (k == OBJ_FAKE_CONVERTER || k == OBJ_META_CONVERTER) {
        for (size_t i = 0; i < c->nconv; i++)
            if (c->convs[i] == child)
                return;
        c->convs[c->nconv++] = child;
    }
}

static void collect_entry(obj *child, const char *label, long index, void *arg)
{
    collect *c = arg;
    (void)index;
    if (!child || obj_edge_role(c->from, label) != c->role)
        return;
    hp_select(c->g, child);
}

static void memo_objects(obj *o, int attr, collect *c)
{
    c->nconv = 0;
    if (o->type->kind == OBJ_FAKE_CONVERTER || o->type->kind == OBJ_META_CONVERTER)
        c->convs[c->nconv++] = o;
    /* mode -> FakeTensorConverter -> MetaConverter; a MetaConverter holds
     * no converter, only its memos (millions of edges in a leak) */
    for (size_t i = 0; i < 3 && c->nconv < 4; i++) {
        obj *from = i == 0 ? o : (i - 1 < c->nconv ? c->convs[i - 1] : NULL);
        if (from && !obj_expired(from) && from->type->kind != OBJ_META_CONVERTER)
            obj_traverse(from, collect_conv, c);
    }
    obj_kind want = attr == A_MEMO_FAKE ? OBJ_FAKE_CONVERTER : OBJ_META_CONVERTER;
    c->role = attr == A_MEMO_STORAGE ? OBJ_ROLE_STORAGE_MEMO
            : attr == A_PENDING      ? OBJ_ROLE_PENDING
                                     : OBJ_ROLE_TENSOR_MEMO;
    for (size_t i = 0; i < c->nconv; i++) {
        obj *cv = c->convs[i];
        if (cv->type->kind != want || obj_expired(cv))
            continue;
        c->from = cv;
        /* strong entries from the snapshot's edges; weak ones to live
         * objects are not in it */
        hp_select_role(c->g, cv, c->role);
        if (cv->type->traverse_weak)
            cv->type->traverse_weak(cv, collect_entry, c);
    }
}

/* The reached checkpoint a growth("NAME") side names, or NULL. */
static const sc_census *growth_since(const sc_vm *vm, const sc_expr *e)
{
    if (e->kind != E_CALL || e->id != B_GROWTH || e->nargs != 1 || e->args[0]->kind != E_STR)
        return NULL;
    for (uint32_t c = 0; c < vm->p->ncheckpoints; c++)
        if (vm->cps[c].reached && strlen(vm->p->checkpoint_names[c]) == e->args[0]->slen &&
            memcmp(vm->p->checkpoint_names[c], e->args[0]->name, e->args[0]->slen) == 0)
            return &vm->cps[c];
    return NULL;
}

/* Attach the objects behind a failing expectation to f (best effort): the
 * liveness subjects, and for a comparison the memo entries / census
 * objects of its sides, as totals, groups and a few examples each. */
static void attach_objects(sc_vm *vm, rp_failure *f, obj *const *objs, size_t n,
                           const sc_expr *cmp, const sc_val *held)
{
    if (!f || (n == 0 && !cmp))
        return;
    hp_graph *g = sc_vm_snapshot(vm);
    if (!g) {
        er_clear();
        return;
    }
    hp_select_clear(g);
    for (size_t i = 0; i < n; i++)
        hp_select(g, objs[i]);
    for (int i = 0; cmp && i < 2; i++) {
        sc_census_objects(cmp->args[i], g);
        const sc_census *since = growth_since(vm, cmp->args[i]);
        if (since)   /* growth("NAME"): every object made since, of every kind */
            hp_select_since(g, since->next_id);
        if (held[i].k != V_OBJ)
            continue;
        collect col;
        col.g = g;
        memo_objects(held[i].o, cmp->args[i]->id, &col);
    }
    hp_summary sm;
    if (hp_selected(g) == 0)
        return;
    if (hp_summarize(g, HP_SEL_MARKED, sc_examples(vm), &sm) == 0) {
        sc_summary_to_failure(&sm, f);
        sc_vm_emit(vm, g, HP_SEL_MARKED, f->objects, f->nobjects, f->groups, f->ngroups,
                   f->line);
    }
    er_clear();
}

static void stmt_text_impl(const sc_vm *vm, const sc_stmt *s, char *buf, size_t n)
{
    size_t len = s->text_len;
    if (len >= n)
        len = n - 1;
    memcpy(buf, vm->p->src + s->text_off, len);
    buf[len] = '\0';
}

/* What an expectation found; held: values kept to find the objects behind
 * a failure (the receivers of memo counters, the subject of alive()). */
typedef struct expect_out {
    int ok;
    char actual[512];
    obj *subjects[1];
    size_t nsub;
    const sc_expr *cmp_failed;   /* a failed comparison's objects */
    sc_val held[2];
} expect_out;

/* expect alive(X) / dead(X) */
static int expect_alive(sc_vm *vm, const sc_expr *c, expect_out *x)
{
    int alive;
    if (sc_eval(vm, c->args[0], &x->held[0]) < 0)
        return -1;
    obj *subj = sc_liveness_subject(&x->held[0], &alive);
    x->ok = c->id == B_ALIVE ? alive : !alive;
    if (x->ok)
        return 0;
    if (subj)
        snprintf(x->actual, sizeof x->actual, "%s#%" PRIu64 " is %s", subj->type->name,
                 subj->id, alive ? "alive" : "dead");
    else
        snprintf(x->actual, sizeof x->actual, "%s", alive ? "alive" : "dead");
    if (subj && (!obj_expired(subj) || subj->weak > 0))
        x->subjects[x->nsub++] = subj;
    return 0;
}

/* One side of a comparison into v; a memo counter keeps its receiver in
 * held and reads the counter from it. */
static int cmp_side(sc_vm *vm, const sc_expr *side, sc_val *held, sc_val *v)
{
    int64_t n;
    if (!counter_attr(side))
        return sc_eval(vm, side, v);
    if (sc_eval(vm, side->recv, held) < 0 || sc_read_counter(held, side, &n) < 0)
        return -1;
    sc_set_int(v, n);
    return 0;
}

/* A failed comparison's actual: the side that is not a literal, or both. */
static void cmp_actual(const sc_expr *c, const sc_val *v, char *buf, size_t n)
{
    char a[200], b[200];
    sc_format_val(&v[0], a, sizeof a);
    sc_format_val(&v[1], b, sizeof b);
    if (literal(c->args[0]) && !literal(c->args[1]))
        snprintf(buf, n, "%s", b);
    else if (!literal(c->args[0]) && !literal(c->args[1]))
        snprintf(buf, n, "%s vs %s", a, b);
    else
        snprintf(buf, n, "%s", a);
}

static int expect_cmp(sc_vm *vm, const sc_expr *c, expect_out *x)
{
    sc_val v[2] = {{0}, {0}};
    int res = 0, rc = -1;
    if (cmp_side(vm, c->args[0], &x->held[0], &v[0]) == 0 &&
        cmp_side(vm, c->args[1], &x->held[1], &v[1]) == 0 &&
        compare(&v[0], &v[1], c->id, &res) == 0) {
        rc = 0;
        x->ok = res;
        if (!x->ok) {
            cmp_actual(c, v, x->actual, sizeof x->actual);
            x->cmp_failed = c;
        }
    }
    sc_val_drop(&v[0]);
    sc_val_drop(&v[1]);
    return rc;
}

/* expect COND: an integer or a bool */
static int expect_cond(sc_vm *vm, const sc_expr *c, expect_out *x)
{
    sc_val v = {0};
    int64_t n;
    if (sc_eval(vm, c, &v) < 0)
        return -1;
    int rc = sc_as_int(&v, &n);
    if (rc < 0)
        er_set(ER_TYPE, "expect needs a condition, got %s", sc_val_type(&v));
    x->ok = rc == 0 && n != 0;
    if (rc == 0 && !x->ok)
        sc_format_val(&v, x->actual, sizeof x->actual);
    sc_val_drop(&v);
    return rc;
}

/* The per-kind table of a failing comparison with growth("NAME") or
 * live(...) on a side: counts now against the checkpoint's, or against
 * the round's start. */
static void attach_kinds(sc_vm *vm, rp_failure *f, const sc_expr *cmp)
{
    const uint64_t *base = NULL;
    for (int i = 0; i < 2 && !base; i++) {
        const sc_expr *e = cmp->args[i];
        const sc_census *since = growth_since(vm, e);
        if (e->kind == E_CALL && e->id == B_LIVE)
            base = vm->kinds0;
        if (since)
            base = since->kinds;
    }
    if (!base || !f)
        return;
    struct rp_kind_count rows[OBJ_KIND_COUNT];
    size_t n = 0;
    for (int k = 0; k < OBJ_KIND_COUNT; k++) {
        uint64_t now = obj_live_count_kind((obj_kind)k);
        if (now == 0 && base[k] == 0)
            continue;
        rows[n].kind = (obj_kind)k;
        rows[n].now = now;
        rows[n++].delta = (int64_t)now - (int64_t)base[k];
    }
    f->kinds = n ? al_malloc(n * sizeof *f->kinds, AL_K_REPORT, "sc kinds") : NULL;
    if (!f->kinds) {
        er_clear();
        return;
    }
    memcpy(f->kinds, rows, n * sizeof *rows);
    f->nkinds = n;
}

static void expect_record(sc_vm *vm, const sc_stmt *s, expect_out *x)
{
    if (vm->count_expectations || !x->ok) {
        if (x->ok)
            vm->out->passed++;
        else
            vm->out->failed++;
    }
    if (x->ok)
        return;
    if (vm->out->status == RP_PASS)
        vm->out->status = RP_FAIL;
    rp_failure *f = sc_add_failure(vm, s, RP_FC_EXPECT, x->actual, s->msg);
    attach_objects(vm, f, x->subjects, x->nsub, x->cmp_failed, x->held);
    if (x->cmp_failed)
        attach_kinds(vm, f, x->cmp_failed);
}

/* Evaluate an expectation. Returns 0 (pass or fail recorded) or -1 when
 * evaluating raised an error (the statement fails). */
static int exec_expect(sc_vm *vm, const sc_stmt *s)
{
    const sc_expr *c = s->e;
    expect_out x;
    int rc;
    x.ok = 0;
    x.actual[0] = '\0';
    x.nsub = 0;
    x.cmp_failed = NULL;
    x.held[0].k = x.held[1].k = V_NONE;
    x.held[0].o = x.held[1].o = NULL;
    if (c->kind == E_RAISES)
        rc = eval_raises(vm, c, &x.ok, x.actual, sizeof x.actual);
    else if (c->kind == E_CALL && (c->id == B_ALIVE || c->id == B_DEAD))
        rc = expect_alive(vm, c, &x);
    else if (c->kind == E_CMP)
        rc = expect_cmp(vm, c, &x);
    else
        rc = expect_cond(vm, c, &x);
    if (rc == 0)
        expect_record(vm, s, &x);
    sc_val_drop(&x.held[0]);
    sc_val_drop(&x.held[1]);
    return rc < 0 ? -1 : 0;
}

/* ---- statements ---- */

void sc_unbind(sc_vm *vm, uint32_t slot)
{
    sc_val v = vm->vars[slot];
    vm->vars[slot].k = V_UNBOUND;
    vm->vars[slot].o = NULL;
    vm->stamp[slot] = 0;
    if (v.k == V_OBJ)
        obj_decref(v.o);
}

static int exec_block(sc_vm *vm, sc_stmt *const *b, uint32_t n);

/* Before a statement: limits, site. */
static int pre(sc_vm *vm, const sc_stmt *s)
{
    vm->cur = s;
    if (vm->o->stop && *vm->o->stop)
        return er_set(ER_LIMIT, "interrupted before this statement");
    if (vm->o->max_statements && vm->executed >= vm->o->max_statements)
        return er_set(ER_LIMIT, "more than %" PRIu64 " statements executed (--max-statements)",
                      vm->o->max_statements);
    vm->executed++;
    if (s->kind != S_EXPECT)
        sc_vm_drop_snapshot(vm);   /* the heap is about to change */
    obj_set_site(vm->p->file, s->line);
    if (vm->at_file && s->kind != S_EXPECT)
        sc_vm_at_statement(vm);
    return 0;
}

static rp_failure *fail_stmt(sc_vm *vm, const sc_stmt *s, rp_fail_cause cause,
                             const char *actual, const char *msg, int error_status)
{
    vm->stopped = 1;
    vm->out->status = error_status ? RP_ERROR : (vm->out->status == RP_ERROR ? RP_ERROR
                                                                            : RP_FAIL);
    rp_failure *f = sc_add_failure(vm, s, cause, actual, msg);
    if (error_status && !vm->out->error)
        sc_rp_set_error(vm->out, actual);
    return f;
}

/* Turn the current error into the statement's failure. */
static void fail_error(sc_vm *vm, const sc_stmt *s)
{
    er_kind k = er_kind_get();
    char actual[600];
    snprintf(actual, sizeof actual, "%s: %s",
             er_kind_name(k) ? er_kind_name(k) : "InternalError",
             k == ER_NONE ? "an operation failed without saying why" : er_message());
    er_clear();
    /* a limit on the model's size: what is alive is the finding */
    vm->limit_hit = k == ER_LIMIT && !(vm->o->stop && *vm->o->stop);
    rp_failure *f = fail_stmt(vm, s, RP_FC_RAISED, actual,
                              "the statement raised an error; the scenario stopped here",
                              k == ER_INTERNAL || k == ER_NONE);
    if (f)
        f->raised = (uint8_t)k;
}

/* After a statement: deferred callbacks, gc policy, checks. */
static int post(sc_vm *vm, const sc_stmt *s)
{
    /* a decref of a dead object left the heap inconsistent: no collection
     * over it (it could loop); the statement fails with the finding */
    if (er_kind_get() == ER_USE_AFTER_FREE)
        return -1;
    obj_safepoint();
    if (vm->gc_mode == SC_GC_AUTO)
        gc_maybe_collect();
    else if (vm->gc_mode == SC_GC_STRESS)
        gc_collect();
    if (vm->gc_mode != SC_GC_MANUAL)
        obj_safepoint();   /* deferred callbacks of what the collector freed */
    if (er_kind_get() != ER_NONE)
        return -1;
    if (vm->o->max_objects && obj_live_count() > vm->o->max_objects)
        return er_set(ER_LIMIT, "more than %" PRIu64 " live objects (--max-objects)",
                      vm->o->max_objects);
    /* the model's bytes: not a kept snapshot's, nor the records a failing
     * expectation's analysis keeps for the report (with those counted, a
     * failing scenario's peak depended on what ran before it in the
     * process: the first one's analysis grows tables that later ones
     * reuse) */
    uint64_t b = sc_model_bytes();
    if (b > vm->peak)
        vm->peak = b;
    if (vm->track)
        sc_whatif_sample(vm);
    if (vm->o->verify ||
        (vm->o->verify_every && vm->executed % vm->o->verify_every == 0)) {
        char why[256] = "";
        size_t n = sc_vm_roots(vm);
        int bad = hp_verify(vm->roots, n, why, sizeof why) < 0;
        if (!bad && er_kind_get() == ER_NONE)
            bad = fk_verify(NULL, why, sizeof why) < 0;
        if (!bad && er_kind_get() == ER_NONE && vm->o->verify_hook)
            bad = vm->o->verify_hook(vm->o->verify_hook_arg, why, sizeof why) < 0;
        if (er_kind_get() == ER_OOM)
            return -1;
        if (bad) {
            er_clear();
            char actual[300];
            int at = snprintf(actual, sizeof actual, "heap invariant violated: ");
            snprintf(actual + at, sizeof actual - (size_t)at, "%s", why);
            rp_failure *f = fail_stmt(vm, s, RP_FC_VERIFY, actual,
                                      "--verify found a broken invariant after this statement",
                                      0);
            if (f)
                f->detail = (uint16_t)at;
            return -2;
        }
    }
    if (vm->o->on_statement)
        vm->o->on_statement(vm->o->on_statement_arg, s->line, obj_live_count(),
                            sc_model_bytes());
    return 0;
}

/* Each statement kind: 0 (post() follows), 1 (done, post() included),
 * -1 (the error is set: the statement fails) or -2 (the failure is
 * recorded already). */
typedef int stmt_fn(sc_vm *vm, const sc_stmt *s);

static int st_assign(sc_vm *vm, const sc_stmt *s)
{
    sc_val v = {0};
    if (sc_eval(vm, s->e, &v) < 0)
        return -1;
    sc_val old = vm->vars[s->slot];
    vm->vars[s->slot] = v;
    vm->stamp[s->slot] = ++vm->stamp_next;
    if (old.k == V_OBJ)
        obj_decref(old.o);
    return 0;
}

/* X.attr = V: t.grad is the tensor's; any other name a user attribute */
static int store_attr(const sc_stmt *s, const sc_val *t, const sc_val *v)
{
    if (t->k != V_OBJ)
        return er_set(ER_TYPE, "cannot set attribute '%s' on %s", s->attr, sc_val_type(t));
    if (v->k != V_OBJ && v->k != V_NONE)
        return er_set(ER_TYPE, "an attribute holds an object or none, not %s",
                      sc_val_type(v));
    obj *o = v->k == V_OBJ ? v->o : NULL;
    if (s->attr_id != A_GRAD || !ts_is_tensor(t->o))
        return obj_attr_set(t->o, s->attr, o) < 0 ? -1 : 0;
    if (ts_set_grad(ts_of(t->o), o ? sc_as_tensor(v) : NULL) < 0)
        return -1;
    if (o && !sc_as_tensor(v))
        return er_set(ER_TYPE, "grad must be a tensor or none");
    return 0;
}

static int st_store(sc_vm *vm, const sc_stmt *s)
{
    sc_val t = {0}, v = {0};
    if (sc_eval(vm, s->target, &t) < 0)
        return -1;
    int rc = sc_eval(vm, s->e, &v);
    if (rc == 0)
        rc = store_attr(s, &t, &v);
    sc_val_drop(&v);
    sc_val_drop(&t);
    return rc < 0 ? -1 : 0;
}

static int st_del(sc_vm *vm, const sc_stmt *s)
{
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (vm->vars[s->slots[i]].k == V_UNBOUND)
            return er_set(ER_TYPE, "del: variable '%s' is not bound (deleted already?)",
                          vm->p->var_names[s->slots[i]]);
        sc_unbind(vm, s->slots[i]);
    }
    return 0;
}

static int st_expr(sc_vm *vm, const sc_stmt *s)
{
    sc_val v = {0};
    if (sc_eval(vm, s->e, &v) < 0)
        return -1;
    sc_val_drop(&v);
    return 0;
}

static int st_expect(sc_vm *vm, const sc_stmt *s)
{
    if (vm->whatif) {   /* 1.13.1 fidelity, not this design's: counted, not checked */
        if (vm->count_expectations)
            vm->out->skipped_fidelity++;
        return 0;
    }
    /* a recording states one run of its program in a fresh process: later
     * rounds of --repeat start with what the earlier ones left (PyTorch's
     * own leaks included), so only the growth check judges them */
    if (vm->track && !vm->count_expectations)
        return 0;
    return exec_expect(vm, s);
}

static int st_checkpoint(sc_vm *vm, const sc_stmt *s)
{
    sc_census *c = &vm->cps[s->slot];
    c->reached = 1;
    c->total = obj_live_count();
    c->next_id = obj_next_id();
    for (int k = 0; k < OBJ_KIND_COUNT; k++)
        c->kinds[k] = obj_live_count_kind((obj_kind)k);
    return 0;
}

static int st_repeat(sc_vm *vm, const sc_stmt *s)
{
    int64_t n;
    if (sc_eval_int(vm, s->e, &n, "repeat count") < 0)
        return -1;
    if (n < 0)
        return er_set(ER_TYPE, "repeat count must be >= 0, got %" PRId64, n);
    int pr = post(vm, s);
    if (pr < 0)
        return pr;
    int64_t outer = vm->rep_iter;
    for (int64_t i = 0; i < n; i++) {
        vm->rep_iter = i;   /* at()'s STEP counts from the innermost repeat */
        if (exec_block(vm, s->body, s->nbody) < 0) {
            vm->rep_iter = outer;
            return -2;
        }
    }
    vm->rep_iter = outer;
    return 1;
}

static int st_with(sc_vm *vm, const sc_stmt *s)
{
    sc_val m = {0};
    if (sc_eval(vm, s->e, &m) < 0)
        return -1;
    if (m.k != V_OBJ || !fk_is_mode(m.o)) {
        er_set(ER_TYPE, "with needs a fake mode, got %s", sc_val_type(&m));
        sc_val_drop(&m);
        return -1;
    }
    vm->with_stack[vm->nwith++] = m.o;   /* the reference moves to the stack */
    int pr = post(vm, s);
    if (pr < 0)
        return pr;
    if (exec_block(vm, s->body, s->nbody) < 0)
        return -2;   /* teardown drops the stack */
    obj *top = vm->with_stack[--vm->nwith];
    vm->with_stack[vm->nwith] = NULL;
    obj_decref(top);
    /* the with statement ends here, at its `end`: the gc policy and the
     * checks follow it as any other statement's end (its mode may have just
     * become garbage: with --gc stress it is collected before the next
     * statement, as between two statements of CPython) */
    pr = post(vm, s);
    return pr < 0 ? pr : 1;
}

static stmt_fn *const stmt_fns[] = {
    [S_ASSIGN] = st_assign, [S_STORE] = st_store, [S_DEL] = st_del, [S_EXPR] = st_expr,
    [S_EXPECT] = st_expect, [S_CHECKPOINT] = st_checkpoint, [S_REPEAT] = st_repeat,
    [S_WITH] = st_with,
};

static int exec_stmt(sc_vm *vm, const sc_stmt *s)
{
    int rc = pre(vm, s);
    if (rc == 0)
        rc = stmt_fns[s->kind](vm, s);
    if (rc == 0)
        rc = post(vm, s);
    if (rc == -1)
        fail_error(vm, s);
    return rc < 0 ? -1 : 0;
}

static int exec_block(sc_vm *vm, sc_stmt *const *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (exec_stmt(vm, b[i]) < 0)
            return -1;
    return 0;
}

int sc_exec_program(sc_vm *vm)
{
    return exec_block(vm, vm->p->top, vm->p->ntop);
}

size_t sc_vm_roots(sc_vm *vm)
{
    size_t n = 0;
    for (uint32_t i = 0; i < vm->p->nvars; i++)
        if (vm->vars[i].k == V_OBJ) {
            vm->roots[n].name = vm->p->var_names[i];
            vm->roots[n].o = vm->vars[i].o;
            vm->roots[n].var_len = 0;
            if (vm->root_use)
                vm->root_use[n] = (uint8_t)sc_var_in_use(vm, i);
            n++;
        }
    for (int i = 0; i < vm->nwith; i++) {
        vm->roots[n].name = "with";
        vm->roots[n].o = vm->with_stack[i];
        vm->roots[n].var_len = 0;
        if (vm->root_use)
            vm->root_use[n] = 1;
        n++;
    }
    for (size_t i = 0; i < vm->nholds; i++) {   /* room made by hold() */
        if (vm->root_use)
            vm->root_use[n] = 1;
        vm->roots[n++] = vm->holds[i];
    }
    obj *fc = fk_cache_anchor();   /* the process's dispatch cache, when its
                                      entries hold objects */
    if (fc && n < vm->roots_cap) {
        vm->roots[n].name = "fake_cache";
        vm->roots[n].o = fc;
        vm->roots[n].var_len = 0;
        if (vm->root_use)
            vm->root_use[n] = 1;
        n++;
    }
    return n;
}

void sc_stmt_text(const sc_vm *vm, const sc_stmt *s, char *buf, size_t n)
{
    stmt_text_impl(vm, s, buf, n);
}
