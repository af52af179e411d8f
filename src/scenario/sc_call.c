/* sc_call.c - the words of the language: the argument parsers and
 * evaluators the vocabulary's rows name (sc_eval.h), and the one dispatch
 * through a row (sc_call_word). Built-in functions, tensor ops, queries,
 * values, the other methods and the attributes; sc_interp.c evaluates the
 * expressions around them and runs the statements. */
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

static int eval_sym_dims(sc_vm *vm, const sc_expr *e, int first, int64_t *v, uint64_t *sym,
                         int *n, const char *what)
{
    int np = e->nargs - first;
    if (np == 1 && e->args[first]->kind == E_TUPLE)
        return sc_eval_size_list(vm, e->args[first], v, sym, n, what);
    if (np > TS_MAX_DIM)
        return er_set(ER_TYPE, "%s: at most %d dimensions, got %d", what, TS_MAX_DIM, np);
    for (int i = 0; i < np; i++)
        if (sc_eval_size(vm, e->args[first + i], &v[i], &sym[i], what) < 0)
            return -1;
    *n = np;
    return 0;
}

static int eval_dims(sc_vm *vm, const sc_expr *e, int first, int64_t *v, int *n,
                     const char *what)
{
    uint64_t sym[TS_MAX_DIM];
    return eval_sym_dims(vm, e, first, v, sym, n, what);
}

static int eval_dtype_kw(sc_vm *vm, const sc_expr *e, ts_dtype *dt)
{
    const sc_expr *k = sc_kwarg(e, "dtype");
    if (!k)
        return 0;
    sc_val v = {0};
    if (sc_eval(vm, k, &v) < 0)
        return -1;
    if (v.k != V_DTYPE) {
        er_set(ER_TYPE, "dtype= must be a dtype (f32, i64, ...), got %s", sc_val_type(&v));
        sc_val_drop(&v);
        return -1;
    }
    *dt = (ts_dtype)v.i;
    return 0;
}

static int device_of(const sc_val *v, ts_device *dev, const char *what)
{
    if (v->k != V_STR)
        return er_set(ER_TYPE, "%s must be a device string (\"cpu\", \"cuda:0\", ...), got %s",
                      what, sc_val_type(v));
    char buf[32];
    if (v->i >= (int64_t)sizeof buf)
        return er_set(ER_TYPE, "unknown device \"%.*s...\"", 20, v->s);
    memcpy(buf, v->s, (size_t)v->i);
    buf[v->i] = '\0';
    return ts_device_parse(buf, dev);
}

static int eval_device_kw(sc_vm *vm, const sc_expr *e, ts_device *dev, int *given)
{
    const sc_expr *k = sc_kwarg(e, "device");
    if (given)
        *given = 0;
    if (!k)
        return 0;
    sc_val v = {0};
    if (sc_eval(vm, k, &v) < 0)
        return -1;
    int rc = device_of(&v, dev, "device=");
    sc_val_drop(&v);
    if (rc == 0 && given)
        *given = 1;
    return rc;
}

static int eval_int_kw(sc_vm *vm, const sc_expr *e, const char *name, int64_t *out)
{
    const sc_expr *k = sc_kwarg(e, name);
    if (!k)
        return 0;
    char what[40];
    snprintf(what, sizeof what, "%s=", name);
    return sc_eval_int(vm, k, out, what);
}

/* ---- raises() bookkeeping: what a failing call leaked ---- */

typedef struct leak_probe {
    uint64_t objects, bytes;
} leak_probe;

static void probe_start(sc_vm *vm, leak_probe *lp)
{
    if (!vm->in_raises)
        return;
    lp->objects = obj_live_count() + obj_zombie_count();
    lp->bytes = sc_model_bytes();
}

static void probe_fail(sc_vm *vm, const leak_probe *lp)
{
    if (!vm->in_raises || vm->leak_noted)
        return;
    obj_safepoint();
    uint64_t o = obj_live_count() + obj_zombie_count();
    uint64_t b = sc_model_bytes();
    vm->leak_objects = o > lp->objects ? o - lp->objects : 0;
    vm->leak_bytes = b > lp->bytes ? b - lp->bytes : 0;
    vm->leak_noted = 1;
}

/* ---- the innermost mode, memory formats ---- */

static obj *current_mode(sc_vm *vm)
{
    return vm->nwith ? vm->with_stack[vm->nwith - 1] : NULL;
}

/* Wrap a tensor built on meta as a fake of the innermost mode (op_out: an
 * op's output written by its geometry, which no design memoizes). */
static obj *wrap_in_mode(obj *mode, ts_tensor *meta, ts_device dev, int op_out)
{
    if (!meta)
        return NULL;
    ts_tensor *f = fk_wrap_new(mode, meta, dev, op_out);
    obj_decref(&meta->hdr);
    return f ? &f->hdr : NULL;
}

/* memory_format= (default contiguous_format). */
static int eval_mfmt_kw(sc_vm *vm, const sc_expr *e, int *given, ts_memfmt *f)
{
    const sc_expr *k = sc_kwarg(e, "memory_format");
    *given = 0;
    *f = TS_CONTIGUOUS_FORMAT;
    if (!k)
        return 0;
    sc_val v = {0};
    if (sc_eval(vm, k, &v) < 0)
        return -1;
    if (v.k != V_MFMT) {
        er_set(ER_TYPE, "memory_format= must be contiguous_format or channels_last, got %s",
               sc_val_type(&v));
        sc_val_drop(&v);
        return -1;
    }
    *given = 1;
    *f = (ts_memfmt)v.i;
    return 0;
}

/* ---- built-in functions: the evaluators the vocabulary rows name ---- */

/* The constructors' positional sizes: `f(2, 3)` or `f((2, 3))`. */
int sc_ar_sizes(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    uint64_t sym[TS_MAX_DIM];
    (void)held;
    if (eval_sym_dims(vm, e, 0, a->v, sym, &a->n, sc_builtin_name(e->id)) < 0)
        return -1;
    vm->sym_sig = fk_sym_sizes_sig(a->n, a->v, sym);
    return 0;
}

/* empty_strided(sizes, strides) into v[0..n) and v2[0..n2). */
int sc_ar_strided(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    uint64_t sym[TS_MAX_DIM];
    (void)held;
    if (sc_eval_size_list(vm, e->args[0], a->v, sym, &a->n, "empty_strided() sizes") < 0 ||
        sc_eval_int_list(vm, e->args[1], a->v2, &a->n2, "empty_strided() strides") < 0)
        return -1;
    vm->sym_sig = fk_sym_sizes_sig(a->n, a->v, sym);
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "empty_strided(): %d sizes but %d strides", a->n, a->n2);
    return 0;
}

/* sparse_csr(rows, cols) into v[0], v[1]. */
int sc_ar_csr(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (sc_eval_int(vm, e->args[0], &a->v[0], "sparse_csr() rows") < 0 ||
        sc_eval_int(vm, e->args[1], &a->v[1], "sparse_csr() cols") < 0)
        return -1;
    a->n = 2;
    return 0;
}

/* A constructor's dtype=, device= and requires_grad=; `where` is the device
 * it builds on: meta inside `with` (the result is wrapped as a fake). */
typedef struct ctor_kw {
    ts_dtype dt;
    ts_device dev, where;
    int64_t rg;
} ctor_kw;

static int eval_ctor_kw(sc_vm *vm, const sc_expr *e, ctor_kw *k)
{
    k->dt = TS_F32;
    k->dev = ts_cpu();
    k->rg = 0;
    if (eval_dtype_kw(vm, e, &k->dt) < 0 || eval_device_kw(vm, e, &k->dev, NULL) < 0 ||
        eval_int_kw(vm, e, "requires_grad", &k->rg) < 0)
        return -1;
    k->where = current_mode(vm) ? ts_meta() : k->dev;
    return 0;
}

/* A constructor's tensor (e its call): a fake of the innermost mode inside
 * `with`, holding its ShapeEnv and its sizes' signature when they are
 * symbolic (a symbol needs such a mode: eval_symbol). */
static int ctor_done(sc_vm *vm, const sc_expr *e, ts_tensor *t, const ctor_kw *k, sc_val *out)
{
    obj *mode = current_mode(vm);
    uint64_t sig = vm->sym_sig;
    vm->sym_sig = 0;
    if (!t)
        return -1;
    if (sc_set_obj(out, mode ? wrap_in_mode(mode, t, k->dev, e->op_out) : &t->hdr) < 0)
        return -1;
    if (sig && mode && fk_fake_set_sym((ts_tensor *)out->o, fk_mode_shape_env(mode), sig) < 0) {
        sc_val_drop(out);
        out->k = V_NONE;
        return -1;
    }
    return 0;
}

/* What empty/zeros/ones/rand fill with (nothing inside `with`: meta). */
static const ts_init dense_init[] = {
    [B_EMPTY] = TS_INIT_NONE, [B_ZEROS] = TS_INIT_ZEROS, [B_ONES] = TS_INIT_ONES,
    [B_RAND] = TS_INIT_RAND,
};

int sc_ev_dense(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    ctor_kw k;
    int given = 0;
    ts_memfmt f;
    int64_t st[TS_MAX_DIM];
    ts_tensor *t;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0 || eval_mfmt_kw(vm, e, &given, &f) < 0)
        return -1;
    if (given && f == TS_CHANNELS_LAST) {   /* empty() only (the parser says) */
        if (ts_memfmt_strides(f, a->n, a->v, st) < 0)
            return -1;
        t = ts_empty_strided(a->n, a->v, st, k.dt, k.where, k.rg != 0);
    } else {
        ts_init init = current_mode(vm) ? TS_INIT_NONE : dense_init[e->id];
        t = ts_empty(a->n, a->v, k.dt, k.where, init, k.rg != 0);
    }
    return ctor_done(vm, e, t, &k, out);
}

int sc_ev_empty_strided(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                        sc_val *out)
{
    ctor_kw k;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0)
        return -1;
    return ctor_done(vm, e, ts_empty_strided(a->n, a->v, a->v2, k.dt, k.where, k.rg != 0), &k,
                     out);
}

int sc_ev_sparse_coo(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                     sc_val *out)
{
    ctor_kw k;
    int64_t nnz = 1, sd = a->n, co = 0;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0 || eval_int_kw(vm, e, "nnz", &nnz) < 0 ||
        eval_int_kw(vm, e, "sparse_dim", &sd) < 0 || eval_int_kw(vm, e, "coalesced", &co) < 0)
        return -1;
    if (sd < 0 || sd > a->n)
        return er_set(ER_SHAPE, "sparse_coo(): sparse_dim %" PRId64 " out of range for %d dims",
                      sd, a->n);
    return ctor_done(vm, e, ts_sparse_coo(a->n, a->v, nnz, (int)sd, k.dt, k.where, co != 0), &k,
                     out);
}

int sc_ev_sparse_csr(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                     sc_val *out)
{
    ctor_kw k;
    int64_t nnz = 1;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0 || eval_int_kw(vm, e, "nnz", &nnz) < 0)
        return -1;
    return ctor_done(vm, e, ts_sparse_csr(a->v[0], a->v[1], nnz, k.dt, k.where), &k, out);
}

int sc_ev_quantized(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                    sc_val *out)
{
    ctor_kw k;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0)
        return -1;
    if (current_mode(vm))
        return er_set(ER_UNSUPPORTED, "quantized nyi in meta tensors");
    return ctor_done(vm, e, ts_quantized(a->n, a->v), &k, out);
}

/* op_out(CTOR): the constructor's fake, which the parser marked as an op's
 * output (sc_expr.op_out) and placed inside `with`. */
int sc_ev_op_out(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    (void)recv, (void)a;
    return sc_eval(vm, e->args[0], out);
}

/* sweep= and sweep_every= of fake_mode(), meta_converter(), fake_converter(). */
static int eval_policy_kw(sc_vm *vm, const sc_expr *e, fk_policy *pol, int64_t *every)
{
    *pol = vm->sweep;
    *every = vm->sweep_every;
    const sc_expr *k = sc_kwarg(e, "sweep");
    if (k) {
        sc_val v = {0};
        if (sc_eval(vm, k, &v) < 0)
            return -1;
        char buf[16] = "";
        if (v.k == V_STR && v.i < (int64_t)sizeof buf) {
            memcpy(buf, v.s, (size_t)v.i);
            buf[v.i] = '\0';
        }
        if (v.k != V_STR || fk_policy_from_name(buf, pol) != 0) {
            er_set(ER_TYPE, "sweep= must be \"eager\" or \"periodic\", got %s", sc_val_type(&v));
            sc_val_drop(&v);
            return -1;
        }
    }
    if (eval_int_kw(vm, e, "sweep_every", every) < 0)
        return -1;
    if (*every < 1)
        return er_set(ER_TYPE, "sweep_every= must be >= 1, got %" PRId64, *every);
    return 0;
}

/* mode_ref= of fake_mode(): "strong" (default) or "weak". */
static int eval_mode_ref_kw(sc_vm *vm, const sc_expr *e, int *weak)
{
    const sc_expr *k = sc_kwarg(e, "mode_ref");
    *weak = 0;
    if (!k)
        return 0;
    sc_val v = {0};
    if (sc_eval(vm, k, &v) < 0)
        return -1;
    int ok = v.k == V_STR && ((v.i == 4 && memcmp(v.s, "weak", 4) == 0) ||
                              (v.i == 6 && memcmp(v.s, "strong", 6) == 0));
    *weak = ok && v.i == 4;
    if (!ok)
        er_set(ER_TYPE, "mode_ref= must be \"strong\" or \"weak\", got %s", sc_val_type(&v));
    sc_val_drop(&v);
    return ok ? 0 : -1;
}

/* fake_mode(sweep=, sweep_every=, shape_env=, propagate_real=, mode_ref=) */
int sc_ev_fake_mode(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                    sc_val *out)
{
    fk_policy pol;
    int64_t every, real = 0;
    fk_mode_opts mo = {0};
    sc_val se = {0};
    (void)recv, (void)a;
    if (eval_policy_kw(vm, e, &pol, &every) < 0 || eval_int_kw(vm, e, "propagate_real", &real) < 0 ||
        eval_mode_ref_kw(vm, e, &mo.mode_ref_weak) < 0)
        return -1;
    const sc_expr *k = sc_kwarg(e, "shape_env");
    if (k && sc_eval(vm, k, &se) < 0)
        return -1;
    if (k && se.k != V_NONE && !(se.k == V_OBJ && fk_is_shape_env(se.o))) {
        er_set(ER_TYPE, "shape_env= must be a shape_env() or none, got %s", sc_val_type(&se));
        sc_val_drop(&se);
        return -1;
    }
    mo.shape_env = se.k == V_OBJ ? se.o : NULL;
    mo.propagate_real = real != 0;
    obj *m = fk_mode_new_v3(pol, every, &mo);
    sc_val_drop(&se);
    return sc_set_obj(out, m);
}

int sc_ev_meta_converter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    fk_policy pol;
    int64_t every;
    (void)recv, (void)a;
    return eval_policy_kw(vm, e, &pol, &every) < 0
               ? -1 : sc_set_obj(out, fk_meta_converter_new(pol, every));
}

int sc_ev_fake_converter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    fk_policy pol;
    int64_t every;
    (void)recv, (void)a;
    return eval_policy_kw(vm, e, &pol, &every) < 0
               ? -1 : sc_set_obj(out, fk_fake_converter_new(pol, every));
}


/* The kinds live() knows, as a predicate over objects. */
typedef enum live_kind {
    LK_ANY, LK_TENSOR, LK_STORAGE, LK_MODE, LK_CONVERTER, LK_FINALIZER,
    LK_WEAKREF, LK_FAKE, LK_META, LK_SPARSE, LK_SHAPE_ENV, LK_TRACER, LK_DATA, LK_UNKNOWN
} live_kind;

static live_kind live_kind_of(const char *kind, size_t len)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(kind, s, len) == 0)
    if (IS("any")) return LK_ANY;
    if (IS("tensor")) return LK_TENSOR;
    if (IS("storage")) return LK_STORAGE;
    if (IS("mode")) return LK_MODE;
    if (IS("converter")) return LK_CONVERTER;
    if (IS("finalizer")) return LK_FINALIZER;
    if (IS("weakref")) return LK_WEAKREF;
    if (IS("fake")) return LK_FAKE;
    if (IS("meta")) return LK_META;
    if (IS("sparse")) return LK_SPARSE;
    if (IS("shape_env")) return LK_SHAPE_ENV;
    if (IS("tracer")) return LK_TRACER;
#undef IS
    return LK_UNKNOWN;
}

/* Does live object o count for kind k? LK_DATA: a storage with real bytes
 * (what bytes() counts). */
static int live_match(const obj *o, live_kind k)
{
    obj_kind ok = o->type->kind;
    switch (k) {
    case LK_ANY: return 1;
    case LK_TENSOR: return ok == OBJ_TENSOR;
    case LK_STORAGE: return ok == OBJ_STORAGE;
    case LK_MODE: return ok == OBJ_FAKE_MODE;
    case LK_CONVERTER: return ok == OBJ_FAKE_CONVERTER || ok == OBJ_META_CONVERTER;
    case LK_FINALIZER: return ok == OBJ_FINALIZER;
    case LK_WEAKREF: return ok == OBJ_WEAKREF;
    case LK_SHAPE_ENV: return fk_is_shape_env(o);
    case LK_TRACER: return fk_is_tracer(o);
    case LK_DATA:
        return ok == OBJ_STORAGE && ((const ts_storage *)o)->device.type != TS_DEV_META;
    default: break;
    }
    if (ok != OBJ_TENSOR)
        return 0;
    const ts_tensor *t = (const ts_tensor *)o;
    return (k == LK_FAKE && ts_is_fake(t)) || (k == LK_META && ts_is_meta(t)) ||
           (k == LK_SPARSE && t->layout != TS_STRIDED);
}

static uint64_t count_live(const char *kind, size_t len)
{
    live_kind k = live_kind_of(kind, len);
    switch (k) {
    case LK_UNKNOWN: return UINT64_MAX;
    case LK_ANY: return obj_live_count();
    case LK_TENSOR: return obj_live_count_kind(OBJ_TENSOR);
    case LK_STORAGE: return obj_live_count_kind(OBJ_STORAGE);
    case LK_MODE: return obj_live_count_kind(OBJ_FAKE_MODE);
    case LK_CONVERTER:
        return obj_live_count_kind(OBJ_FAKE_CONVERTER) + obj_live_count_kind(OBJ_META_CONVERTER);
    case LK_FINALIZER: return obj_live_count_kind(OBJ_FINALIZER);
    case LK_WEAKREF: return obj_live_count_kind(OBJ_WEAKREF);
    default: break;
    }
    uint64_t n = 0;
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o))
        n += (uint64_t)live_match(o, k);
    return n;
}

static int checkpoint_index(sc_vm *vm, const sc_val *v)
{
    if (v->k != V_STR)
        return er_set(ER_TYPE, "growth() needs a checkpoint name string, got %s", sc_val_type(v));
    for (uint32_t i = 0; i < vm->p->ncheckpoints; i++) {
        const char *n = vm->p->checkpoint_names[i];
        if (strlen(n) == (size_t)v->i && memcmp(n, v->s, (size_t)v->i) == 0) {
            if (!vm->cps[i].reached)
                return er_set(ER_TYPE, "checkpoint \"%s\" has not been reached yet", n);
            return (int)i;
        }
    }
    return er_set(ER_TYPE, "unknown checkpoint \"%.*s\"", v->i > 60 ? 60 : (int)v->i, v->s);
}

/* alive(X): a weak handle's target, or an object held (alive). */
obj *sc_liveness_subject(const sc_val *v, int *alive)
{
    if (v->k != V_OBJ) {
        *alive = 0;
        return NULL;
    }
    if (v->o->type->kind == OBJ_WEAKREF) {
        obj *t = wr_target_raw(v->o);
        *alive = wr_get(v->o) != NULL;
        return t;
    }
    *alive = !obj_expired(v->o);
    return v->o;
}

int sc_ev_weakref(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    sc_val x = {0};
    (void)recv, (void)a;
    if (sc_eval(vm, e->args[0], &x) < 0)
        return -1;
    if (x.k != V_OBJ) {
        er_set(ER_TYPE, "weakref() needs an object, got %s", sc_val_type(&x));
        sc_val_drop(&x);
        return -1;
    }
    obj *w = wr_new(x.o, NULL, NULL);
    sc_val_drop(&x);
    return sc_set_obj(out, w);
}

int sc_ev_gc(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)recv, (void)a;
    uint64_t before = obj_live_count();
    obj_safepoint();
    /* gc(N): generations 0..N (the parser checked N: a literal 0..2);
     * sweep=false: CPython's collector alone, no converter's sweep */
    int gen = e->nargs ? (int)e->args[0]->ival : 2;
    int sweep = 1;
    const sc_expr *kw = sc_kwarg(e, "sweep");
    if (kw) {
        sc_val v = {0};
        if (sc_eval(vm, kw, &v) < 0)
            return -1;
        int ok = v.k == V_BOOL;
        sweep = ok && v.i;
        sc_val_drop(&v);
        if (!ok)
            return er_set(ER_TYPE, "gc(sweep=) takes true or false");
    }
    if (gen < 2) {
        er_clear();
        fk_collect_young(gen);
        if (er_kind_get() == ER_OOM)
            return -1;
    } else {
        fk_collect();
    }
    if (sweep)
        fk_sweep_all();
    obj_safepoint();
    uint64_t after = obj_live_count();
    sc_set_int(out, before > after ? (int64_t)(before - after) : 0);
    return 0;
}

int sc_ev_live(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    const char *k = "any";
    size_t len = 3;
    sc_val v = {0};
    const sc_expr *arg = e->nargs ? e->args[0] : sc_kwarg(e, "kind");
    (void)recv, (void)a;
    if (arg) {
        if (sc_eval(vm, arg, &v) < 0)
            return -1;
        if (v.k != V_STR) {
            er_set(ER_TYPE, "live() needs a kind string, got %s", sc_val_type(&v));
            sc_val_drop(&v);
            return -1;
        }
        k = v.s;
        len = (size_t)v.i;
    }
    uint64_t n = count_live(k, len);
    if (n == UINT64_MAX)
        return er_set(ER_TYPE, "live(): unknown kind \"%.*s\"", len > 40 ? 40 : (int)len, k);
    sc_set_int(out, (int64_t)n);
    return 0;
}

int sc_ev_bytes(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    sc_set_int(out, (int64_t)ts_data_bytes());
    return 0;
}

int sc_ev_heap_bytes(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                     sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    sc_set_int(out, (int64_t)sc_model_bytes());
    return 0;
}

int sc_ev_unreachable(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                      sc_val *out)
{
    (void)e, (void)recv, (void)a;
    size_t n = sc_vm_roots(vm);
    hp_graph *g = hp_snapshot(vm->roots, n);
    if (!g)
        return -1;
    sc_set_int(out, (int64_t)hp_unreachable_count(g));
    hp_free(g);
    return 0;
}

int sc_ev_stale(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    sc_set_int(out, (int64_t)fk_stale_all());
    return 0;
}

int sc_ev_growth(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    sc_val v = {0};
    (void)recv, (void)a;
    if (sc_eval(vm, e->args[0], &v) < 0)
        return -1;
    int i = checkpoint_index(vm, &v);
    sc_val_drop(&v);
    if (i < 0)
        return -1;
    sc_set_int(out, (int64_t)obj_live_count() - (int64_t)vm->cps[i].total);
    return 0;
}

static int eval_alive(sc_vm *vm, const sc_expr *e, int *alive)
{
    sc_val v = {0};
    if (sc_eval(vm, e->args[0], &v) < 0)
        return -1;
    sc_liveness_subject(&v, alive);
    sc_val_drop(&v);
    return 0;
}

int sc_ev_alive(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    int alive;
    (void)recv, (void)a;
    if (eval_alive(vm, e, &alive) < 0)
        return -1;
    sc_set_bool(out, alive);
    return 0;
}

/* weakrefs(X) (version 3): the weak references to X that exist now, from
 * any holder: weak counts (memo keys and weak values, StorageWeakRefs in
 * memo keys, pending lists and finalizers, weak handles) plus the
 * finalizers registered on it (weakref.finalize holds its tensor weakly
 * through its callback alone). 1.13.1, a converted live tensor: 4. */
int sc_ev_weakrefs(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                   sc_val *out)
{
    sc_val v = {0};
    (void)recv, (void)a;
    if (sc_eval(vm, e->args[0], &v) < 0)
        return -1;
    if (v.k != V_OBJ || !v.o) {
        er_set(ER_TYPE, "weakrefs() needs an object, got %s", sc_val_type(&v));
        sc_val_drop(&v);
        return -1;
    }
    const obj *o = v.o;
    int64_t n = (int64_t)o->weak;
    const obj_cb *first = o->callbacks, *cb = first;
    while (cb) {
        if (cb->owner && cb->owner->type->kind == OBJ_FINALIZER)
            n++;
        cb = cb->next;
        if (cb == first)
            break;
    }
    sc_val_drop(&v);
    sc_set_int(out, n);
    return 0;
}

int sc_ev_dead(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    int alive;
    (void)recv, (void)a;
    if (eval_alive(vm, e, &alive) < 0)
        return -1;
    sc_set_bool(out, !alive);
    return 0;
}

/* The one dispatch of a word: its row's argument parser, then its
 * evaluator (recv: the evaluated receiver of a method, borrowed; NULL for a
 * function). A call that fails inside raises() is probed for what it
 * leaked (the arguments' own failures are probed by their own calls). */
int sc_call_word(sc_vm *vm, const sc_word *w, const sc_expr *e, const sc_val *recv,
                     sc_val *out)
{
    static const ts_args no_args;   /* rows without an argument parser */
    ts_args a;
    sc_val held;                    /* only k and o matter to val_drop */
    leak_probe lp = {0};
    held.k = V_NONE;
    held.o = NULL;
    if (!w->eval)
        return er_set(ER_INTERNAL, "word '%s' has no evaluator", w->name);
    int rc = 0;
    vm->sym_sig = 0;              /* set by a constructor's sizes, read by it */
    if (w->args) {
        memset(&a, 0, sizeof a);
        rc = w->args(vm, e, &a, &held);
    }
    if (rc == 0) {
        probe_start(vm, &lp);
        rc = w->eval(vm, e, recv, w->args ? &a : &no_args, out);
        if (rc < 0)
            probe_fail(vm, &lp);
    }
    sc_val_drop(&held);
    vm->sym_sig = 0;
    return rc < 0 ? -1 : 0;
}

int sc_call_builtin(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    const sc_word *w = e->word ? e->word : sc_builtin_row(e->id);
    if (!w)
        return er_set(ER_INTERNAL, "unknown built-in %d", e->id);
    return sc_call_word(vm, w, e, NULL, out);
}

static int need_args(const sc_expr *e, int n, const char *what)
{
    if (e->nargs != n)
        return er_set(ER_TYPE, "%s() takes %s, got %d argument%s", e->name, what, e->nargs,
                      e->nargs == 1 ? "" : "s");
    return 0;
}

/* t.size(), t.stride(): the tuple. */
static int shape_tuple(const ts_tensor *t, ts_query q, sc_val *out)
{
    if (q == TS_Q_STRIDE && t->layout == TS_SPARSE_CSR)
        return er_set(ER_TYPE, "Sparse CSR tensors do not have strides");
    out->k = V_TUPLE;
    out->o = NULL;
    out->i = t->ndim;
    for (int d = 0; d < t->ndim; d++)
        out->tup[d] = q == TS_Q_SIZE ? t->sizes[d]
                    : t->layout == TS_STRIDED ? t->strides[d] : d == 0 ? 1 : 0;
    return 0;
}

static void set_static_str(sc_val *v, const char *s)
{
    v->k = V_STR;
    v->o = NULL;
    v->s = s;
    v->i = (int64_t)strlen(s);
}

/* A device's name as text that outlives the value: "cpu", "meta", "lazy",
 * "cuda:N" (interned for N < 64; larger indexes answer "cuda:?"). */
static const char *device_text(ts_device d)
{
    static char cuda[64][12];
    switch (d.type) {
    case TS_DEV_CPU: return "cpu";
    case TS_DEV_META: return "meta";
    case TS_DEV_LAZY: return "lazy";
    default: break;
    }
    if (d.index < 0)
        return "cuda";
    if (d.index >= 64)
        return "cuda:?";
    if (!cuda[d.index][0])
        snprintf(cuda[d.index], sizeof cuda[d.index], "cuda:%d", d.index);
    return cuda[d.index];
}

static int set_obj_ref(sc_val *out, obj *o)
{
    if (!o) {
        out->k = V_NONE;
        out->o = NULL;
        return 0;
    }
    obj_incref(o);
    return sc_set_obj(out, o);
}

/* c.fake(m, t): a stand-alone FakeTensorConverter called with a mode. */
static int converter_fake(sc_vm *vm, const sc_expr *e, obj *conv, sc_val *out)
{
    sc_val m = {0}, x = {0};
    int rc = -1;
    if (need_args(e, 2, "2 arguments (a fake mode and a tensor)") < 0)
        return -1;
    if (e->nkw)
        return er_set(ER_TYPE, "a converter's fake(m, t) takes no keyword arguments");
    if (sc_eval(vm, e->args[0], &m) < 0)
        return -1;
    if (sc_eval(vm, e->args[1], &x) < 0)
        goto done;
    if (m.k != V_OBJ || !fk_is_mode(m.o) || !sc_as_tensor(&x)) {
        er_set(ER_TYPE, "fake(m, t) needs a fake mode and a tensor, got %s and %s",
               sc_val_type(&m), sc_val_type(&x));
        goto done;
    }
    ts_tensor *res = fk_convert(conv, m.o, sc_as_tensor(&x));
    if (!res)
        goto done;
    rc = sc_set_obj(out, &res->hdr);
done:
    sc_val_drop(&x);
    sc_val_drop(&m);
    return rc;
}


/* ---- methods: argument parsers and evaluators the rows name ---- */

static ts_storage *as_storage(const sc_val *v)
{
    return v->k == V_OBJ && ts_is_storage(v->o) ? (ts_storage *)v->o : NULL;
}

/* Integer arguments within ts_op_arity's bounds (a single tuple is
 * expanded: view((2, 3))), after n integers already in a. */
static int op_arity(const sc_expr *e, const ts_args *a)
{
    int mn = 0, mx = 0;
    ts_op_arity((ts_op)e->sub, &mn, &mx);
    if (mx < 0)
        mx = TS_MAX_DIM;
    if (a->n >= mn && a->n <= mx)
        return 0;
    if (mn == mx)
        return er_set(ER_TYPE, "%s() takes %d integer argument%s, got %d", e->name, mn,
                      mn == 1 ? "" : "s", a->n);
    return er_set(ER_TYPE, "%s() takes %d to %d integer arguments, got %d", e->name, mn, mx,
                  a->n);
}

int sc_ar_dims(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (eval_dims(vm, e, 0, a->v, &a->n, e->name) < 0)
        return -1;
    return op_arity(e, a);
}

/* view(dtype) | view(sizes) */
int sc_ar_view(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    const sc_expr *x = e->nargs == 1 ? e->args[0] : NULL;
    if (x && (x->kind == E_DTYPE || (x->kind == E_VAR && vm->vars[x->slot].k == V_DTYPE))) {
        if (sc_eval(vm, x, held) < 0)
            return -1;
        a->has_dtype = 1;
        a->dtype = (ts_dtype)held->i;
        return 0;
    }
    return sc_ar_dims(vm, e, a, held);
}

/* The integers of a view op, the keyword `kw` (when given) being integer
 * number `at`: it needs exactly `at` positional integers before it, else
 * the error `unless`. */
static int dims_with_kw(sc_vm *vm, const sc_expr *e, ts_args *a, const char *kw, int at,
                        const char *unless)
{
    if (eval_dims(vm, e, 0, a->v, &a->n, e->name) < 0)
        return -1;
    if (sc_kwarg(e, kw)) {
        if (a->n != at)
            return er_set(ER_TYPE, "%s", unless);
        if (eval_int_kw(vm, e, kw, &a->v[at]) < 0)
            return -1;
        a->n = at + 1;
    }
    return op_arity(e, a);
}

/* slice(dim, start, stop[, step]) with step= as the fourth integer */
int sc_ar_slice(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    return dims_with_kw(vm, e, a, "step", 3, "slice(): step= needs dim, start and stop first");
}

/* diagonal([offset[, dim1, dim2]]) with offset= as the first integer */
int sc_ar_diagonal(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    return dims_with_kw(vm, e, a, "offset", 0, "diagonal(): offset given twice");
}

/* as_strided(sizes, strides[, offset]) */
int sc_ar_as_strided(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (e->nargs < 2 || e->nargs > 3)
        return er_set(ER_TYPE, "as_strided() takes (sizes, strides[, offset]), got %d "
                      "arguments", e->nargs);
    if (sc_eval_int_list(vm, e->args[0], a->v, &a->n, "as_strided() sizes") < 0 ||
        sc_eval_int_list(vm, e->args[1], a->v2, &a->n2, "as_strided() strides") < 0)
        return -1;
    if (e->nargs == 3 && sc_eval_int(vm, e->args[2], &a->offset, "as_strided() offset") < 0)
        return -1;
    if (e->nargs == 3 && sc_kwarg(e, "offset"))
        return er_set(ER_TYPE, "as_strided(): offset given twice");
    if (eval_int_kw(vm, e, "offset", &a->offset) < 0)
        return -1;
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "as_strided(): %d sizes but %d strides", a->n, a->n2);
    return 0;
}

/* One operand (held), a tensor or, when numbers_ok, an integer or a bool. */
static int operand(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held, int numbers_ok)
{
    if (e->nargs != 1)
        return er_set(ER_TYPE, "%s() takes 1 argument, got %d", e->name, e->nargs);
    if (sc_eval(vm, e->args[0], held) < 0)
        return -1;
    if (sc_as_tensor(held)) {
        a->other = sc_as_tensor(held);
    } else if ((held->k == V_INT || held->k == V_BOOL) && numbers_ok) {
        a->has_scalar = 1;
        a->scalar = (double)held->i;
        a->scalar_bool = held->k == V_BOOL;
    } else {
        return er_set(ER_TYPE, "%s() needs a tensor%s, got %s", e->name,
                      numbers_ok ? " or a number" : "", sc_val_type(held));
    }
    return 0;
}

/* add(x) mul(x) sub(x) add_(x) mul_(x): a tensor or a number */
int sc_ar_operand(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    return operand(vm, e, a, held, 1);
}

/* matmul(x): a tensor */
int sc_ar_tensor(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    return operand(vm, e, a, held, 0);
}

/* to(device and/or dtype, positional or keyword, each once) */
int sc_ar_to(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    for (int i = 0; i < e->nargs; i++) {
        sc_val v = {0};
        if (sc_eval(vm, e->args[i], &v) < 0)
            return -1;
        if (v.k == V_DTYPE && !a->has_dtype) {
            a->has_dtype = 1;
            a->dtype = (ts_dtype)v.i;
        } else if (v.k == V_STR && !a->has_device) {
            if (device_of(&v, &a->device, "to()") < 0)
                return -1;
            a->has_device = 1;
        } else {
            er_set(ER_TYPE, "to() takes a device string and/or a dtype, got %s", sc_val_type(&v));
            sc_val_drop(&v);
            return -1;
        }
    }
    if (sc_kwarg(e, "dtype")) {
        if (a->has_dtype)
            return er_set(ER_TYPE, "to(): dtype given twice");
        if (eval_dtype_kw(vm, e, &a->dtype) < 0)
            return -1;
        a->has_dtype = 1;
    }
    if (sc_kwarg(e, "device")) {
        if (a->has_device)
            return er_set(ER_TYPE, "to(): device given twice");
        if (eval_device_kw(vm, e, &a->device, &a->has_device) < 0)
            return -1;
    }
    return 0;
}

/* sum([dim]) with dim= instead; dim none is sum() */
int sc_ar_sum(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    const sc_expr *d = e->nargs ? e->args[0] : sc_kwarg(e, "dim");
    if (e->nargs > 1 || (e->nargs && sc_kwarg(e, "dim")))
        return er_set(ER_TYPE, "sum() takes at most one dim");
    if (!d)
        return 0;
    if (sc_eval(vm, d, held) < 0)
        return -1;
    if (held->k == V_NONE)
        return 0;
    if (sc_as_int(held, &a->dim) < 0)
        return er_set(ER_TYPE, "sum(dim=) must be an integer or none, got %s", sc_val_type(held));
    a->has_dim = 1;
    return 0;
}

/* to_sparse([sparse_dim]) with sparse_dim= instead */
int sc_ar_to_sparse(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    const sc_expr *d = e->nargs ? e->args[0] : sc_kwarg(e, "sparse_dim");
    if (e->nargs > 1 || (e->nargs && sc_kwarg(e, "sparse_dim")))
        return er_set(ER_TYPE, "to_sparse() takes at most one sparse_dim");
    if (!d)
        return 0;
    if (sc_eval_int(vm, d, &a->sparse_dim, "to_sparse() sparse_dim") < 0)
        return -1;
    a->has_sparse_dim = 1;
    return 0;
}

/* contiguous(memory_format=) */
int sc_ar_contiguous(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (e->nargs)
        return er_set(ER_TYPE, "contiguous() takes no positional arguments");
    return eval_mfmt_kw(vm, e, &a->has_mfmt, &a->mfmt);
}

/* set_(tensor) | set_(storage) | set_(storage, offset, sizes, strides) */
int sc_ar_set(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    if (e->nargs != 1 && e->nargs != 4)
        return er_set(ER_TYPE, "set_() takes (tensor), (storage) or (storage, offset, sizes, "
                      "strides), got %d arguments", e->nargs);
    if (sc_eval(vm, e->args[0], held) < 0)
        return -1;
    if (sc_as_tensor(held) && e->nargs == 1) {
        a->other = sc_as_tensor(held);
        return 0;
    }
    if (!as_storage(held))
        return er_set(ER_TYPE, "set_() needs a %s, got %s",
                      e->nargs == 1 ? "tensor or a storage" : "storage", sc_val_type(held));
    a->storage = as_storage(held);
    if (e->nargs == 1)
        return 0;
    a->set_geom = 1;
    if (sc_eval_int(vm, e->args[1], &a->offset, "set_() offset") < 0 ||
        sc_eval_int_list(vm, e->args[2], a->v, &a->n, "set_() sizes") < 0 ||
        sc_eval_int_list(vm, e->args[3], a->v2, &a->n2, "set_() strides") < 0)
        return -1;
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "set_(): %d sizes but %d strides", a->n, a->n2);
    return 0;
}

/* Every tensor op: through the fake layer (the innermost mode's rules
 * when inside `with`, where only fakes may enter unless the row says). */
int sc_ev_op(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    ts_tensor *t = sc_as_tensor(recv);
    obj *mode = current_mode(vm);
    if (mode && !(e->word && (e->word->flags & SWF_REAL_OK)) &&
        (!ts_is_fake(t) || (a->other && !ts_is_fake(a->other))))
        return er_set(ER_TYPE, "%s(): Invoking operators with non-Fake Tensor inputs in "
                      "FakeTensorMode is not yet supported", e->name);
    ts_tensor *res = fk_apply_in((ts_op)e->sub, t, a, mode);
    return res ? sc_set_obj(out, &res->hdr) : -1;
}

/* Query and value words on a storage receiver: only nbytes() and device(). */
static int storage_recv(const sc_expr *e, const sc_val *recv)
{
    if (!as_storage(recv))
        return 0;
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    return er_set(ER_TYPE, "storage has no method '%s' (only nbytes() and device())", e->name);
}

/* t.numel() t.size([d]) t.is_view() ...: ts_query_run's answer. */
int sc_ev_query(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    ts_query q = (ts_query)e->sub;
    int64_t arg = 0, v = 0;
    ts_tensor *t = sc_as_tensor(recv);
    (void)a;
    if (storage_recv(e, recv) < 0)
        return -1;
    if (ts_query_takes_arg(q) && e->nargs == 0)
        return shape_tuple(t, q, out);     /* t.size(), t.stride() */
    if (ts_query_takes_arg(q)) {
        if (need_args(e, 1, "1 argument (a dim)") < 0 ||
            sc_eval_int(vm, e->args[0], &arg, "the dim") < 0)
            return -1;
    } else if (need_args(e, 0, "no arguments") < 0) {
        return -1;
    }
    if (q == TS_Q_IS_CONTIGUOUS) {
        int given;
        ts_memfmt f;
        if (eval_mfmt_kw(vm, e, &given, &f) < 0)
            return -1;
        arg = f;
    }
    if (ts_query_run(t, q, arg, &v) < 0)
        return -1;
    if (ts_query_is_bool(q))
        sc_set_bool(out, v != 0);
    else
        sc_set_int(out, v);
    return 0;
}

/* t.nbytes(), and a storage's s.nbytes() */
int sc_ev_nbytes(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    if (!as_storage(recv))
        return sc_ev_query(vm, e, recv, a, out);
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    sc_set_int(out, (int64_t)as_storage(recv)->nbytes);
    return 0;
}

/* The tensor receiver of a value word of no arguments, or NULL (er set). */
static ts_tensor *value_recv(const sc_expr *e, const sc_val *recv)
{
    if (storage_recv(e, recv) < 0 || need_args(e, 0, "no arguments") < 0)
        return NULL;
    return sc_as_tensor(recv);
}

int sc_ev_dtype(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    out->k = V_DTYPE;
    out->i = t->dtype;
    return 0;
}

/* t.device(), and a storage's s.device() */
int sc_ev_device(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    (void)vm, (void)a;
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    ts_storage *st = as_storage(recv);
    set_static_str(out, device_text(st ? st->device : sc_as_tensor(recv)->device));
    return 0;
}

int sc_ev_layout(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    set_static_str(out, ts_layout_name(t->layout));
    return 0;
}

int sc_ev_base(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    return set_obj_ref(out, t->base ? &t->base->hdr : NULL);
}

/* t.storage(): a fake's is its meta tensor's (FakeTensor shares it) */
int sc_ev_storage(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    const ts_tensor *s = ts_is_fake(t) ? t->meta : t;
    if (!s || s->layout != TS_STRIDED || !s->storage)
        return er_set(ER_TYPE, "Cannot access storage of %s",
                      t->layout == TS_STRIDED ? "this tensor" : "SparseTensorImpl");
    if (fk_storage_accessed(t) < 0)
        return -1;
    return set_obj_ref(out, &s->storage->hdr);
}

int sc_ev_fake_mode_of(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                       sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    obj *m = fk_fake_mode_of(t);
    return m ? set_obj_ref(out, m) : -1;
}

/* The one tensor argument of m.fake(t) / m.meta(t), or NULL (er set). */
static ts_tensor *conv_arg(sc_vm *vm, const sc_expr *e, sc_val *x)
{
    if (need_args(e, 1, "1 argument (a tensor)") < 0 || sc_eval(vm, e->args[0], x) < 0)
        return NULL;
    if (!sc_as_tensor(x))
        er_set(ER_TYPE, "%s() needs a tensor, got %s", e->name, sc_val_type(x));
    return sc_as_tensor(x);
}

/* m.fake(t[, device=]) of a mode; c.fake(m, t) of a stand-alone converter */
int sc_ev_fake(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    sc_val x = {0};
    ts_device dev;
    int given = 0, rc = -1;
    (void)a;
    if (recv->k == V_OBJ && fk_is_fake_converter(recv->o))
        return converter_fake(vm, e, recv->o, out);
    if (recv->k != V_OBJ || !fk_is_mode(recv->o))
        return er_set(ER_TYPE, "%s has no method '%s'", sc_val_type(recv), e->name);
    ts_tensor *src = conv_arg(vm, e, &x);
    int64_t constant = 0, dynamic = 0;
    if (src && eval_device_kw(vm, e, &dev, &given) == 0 &&
        eval_int_kw(vm, e, "constant", &constant) == 0 &&
        eval_int_kw(vm, e, "dynamic", &dynamic) == 0) {
        fk_fake_opts fo = {given ? &dev : NULL, constant != 0, dynamic != 0};
        ts_tensor *res = fk_fake_v3(recv->o, src, &fo);
        rc = res ? sc_set_obj(out, &res->hdr) : -1;
    }
    sc_val_drop(&x);
    return rc;
}

/* m.meta(t) of a mode or a MetaConverter (not inside `with`) */
int sc_ev_meta(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    sc_val x = {0};
    int rc = -1;
    (void)a;
    int is_mode = recv->k == V_OBJ && fk_is_mode(recv->o);
    if (!is_mode && !(recv->k == V_OBJ && fk_is_meta_converter(recv->o)))
        return er_set(ER_TYPE, "%s has no method '%s'", sc_val_type(recv), e->name);
    if (current_mode(vm))
        return er_set(ER_TYPE, "meta() inside 'with': PyTorch 1.13.1's MetaConverter builds "
                      "its meta tensor through the active mode and asserts");
    ts_tensor *src = conv_arg(vm, e, &x);
    if (src) {
        int none = 0;
        ts_tensor *res = is_mode ? fk_mode_meta(recv->o, src, &none)
                                 : fk_meta_convert(recv->o, src);
        if (none)
            out->k = V_NONE;       /* the design's NotImplemented */
        rc = none ? 0 : res ? sc_set_obj(out, &res->hdr) : -1;
    }
    sc_val_drop(&x);
    return rc;
}

int sc_ev_sweep(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    const sc_val *r = recv;
    (void)vm, (void)a;
    if (r->k != V_OBJ || !(fk_is_mode(r->o) || fk_is_meta_converter(r->o) ||
                           fk_is_fake_converter(r->o)))
        return er_set(ER_TYPE, "%s has no method 'sweep'", sc_val_type(r));
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    sc_set_int(out, (int64_t)fk_sweep(r->o));
    return 0;
}

int sc_ev_get(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)a;
    if (recv->k != V_OBJ || recv->o->type->kind != OBJ_WEAKREF)
        return er_set(ER_TYPE, "%s has no method 'get'", sc_val_type(recv));
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    obj *target = wr_get(recv->o);
    if (!target)
        return er_set(ER_DEAD_REF, "weak reference to %s#%" PRIu64 " is dead",
                      wr_target_raw(recv->o) ? wr_target_raw(recv->o)->type->name : "object",
                      wr_target_id(recv->o));
    obj_incref(target);
    return sc_set_obj(out, target);
}

/* Apply method e to the receiver *recv (already evaluated; consumed).
 * Tensor ops, queries and values need a tensor (queries and values a
 * storage too); the rest check their receiver themselves. */
int sc_call_method(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out)
{
    const sc_word *w = e->word ? e->word : sc_method_row(e->id);
    int tensor_word = w->mk == MK_OP || w->mk == MK_QUERY || w->mk == MK_VALUE;
    int rc;
    if (tensor_word && !sc_as_tensor(recv) && !(w->mk != MK_OP && as_storage(recv)))
        rc = er_set(ER_TYPE, "%s has no method '%s'", sc_val_type(recv), e->name);
    else
        rc = sc_call_word(vm, w, e, recv, out);
    sc_val_drop(recv);
    return rc < 0 ? -1 : 0;
}

/* ---- attributes ---- */

/* Where each counter attribute is in fk_counters. */
static const size_t counter_at[] = {
    [A_MEMO_FAKE] = offsetof(fk_counters, memo_fake),
    [A_MEMO_META] = offsetof(fk_counters, memo_meta),
    [A_MEMO_STORAGE] = offsetof(fk_counters, memo_storage),
    [A_PENDING] = offsetof(fk_counters, pending),
    [A_HITS] = offsetof(fk_counters, hits),
    [A_MISSES] = offsetof(fk_counters, misses),
    [A_SWEEP_EVERY] = offsetof(fk_counters, sweep_every),
    [A_CHECK_COUNT] = offsetof(fk_counters, check_count),
    [A_MEMO_TENSOR_IDS] = offsetof(fk_counters, memo_tensor_ids),
    [A_MEMO_STORAGE_IDS] = offsetof(fk_counters, memo_storage_ids),
    [A_MEMO_CONSTANTS] = offsetof(fk_counters, memo_constants),
};

/* Counter attribute e of a mode or converter r (a stand-alone
 * MetaConverter has no memo_fake). */
int sc_read_counter(const sc_val *r, const sc_expr *e, int64_t *v)
{
    fk_counters c;
    if (r->k != V_OBJ || fk_counters_get(r->o, &c) < 0) {
        er_clear();
        return er_set(ER_TYPE, "%s has no attribute '%s'", sc_val_type(r), e->name);
    }
    memcpy(v, (const char *)&c + counter_at[e->id], sizeof *v);
    if (e->id == A_MEMO_FAKE && *v < 0)
        return er_set(ER_TYPE, "%s has no attribute 'memo_fake'", sc_val_type(r));
    return 0;
}

int sc_ev_counter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    int64_t v = 0;   /* set on success; gcc -O3 cannot see it */
    if (recv->k == V_OBJ && fk_is_cache_handle(recv->o) && (e->id == A_HITS || e->id == A_MISSES))
        return sc_ev_v3_attr(vm, e, recv, a, out);
    (void)vm, (void)a;
    if (sc_read_counter(recv, e, &v) < 0)
        return -1;
    sc_set_int(out, v);
    return 0;
}

/* A user attribute; one never set (or cleared) reads as none. */
static int user_attr(const sc_expr *e, const sc_val *recv, sc_val *out)
{
    obj *v = obj_attr_get(recv->o, e->name);
    if (!v) {
        out->k = V_NONE;
        return 0;
    }
    obj_incref(v);
    return sc_set_obj(out, v);
}

/* t.grad; on an object that is not a tensor, grad is a user attribute */
int sc_ev_grad(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)a;
    if (!ts_is_tensor(recv->o))
        return user_attr(e, recv, out);
    return set_obj_ref(out, ts_of(recv->o)->grad ? &ts_of(recv->o)->grad->hdr : NULL);
}

/* Read attribute e of the receiver *recv (already evaluated; consumed). */
int sc_read_attr(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out)
{
    int rc;
    if (recv->k != V_OBJ)
        rc = er_set(ER_TYPE, "%s has no attribute '%s'", sc_val_type(recv), e->name);
    else if (e->id == A_USER)
        rc = user_attr(e, recv, out);
    else
        rc = sc_call_word(vm, e->word ? e->word : sc_attr_word(e->id), e, recv, out);
    sc_val_drop(recv);
    return rc < 0 ? -1 : 0;
}

/* The objects behind a census call that an expectation compared:
 * live("KIND") -> live objects of that kind, bytes() -> storages with real
 * bytes, all of them selected in g. */
void sc_census_objects(const sc_expr *e, hp_graph *g)
{
    if (e->kind != E_CALL)
        return;
    live_kind k;
    if (e->id == B_BYTES) {
        k = LK_DATA;
    } else if (e->id == B_LIVE) {
        if (e->nargs == 0)
            k = LK_ANY;
        else if (e->args[0]->kind == E_STR)
            k = live_kind_of(e->args[0]->name, e->args[0]->slen);
        else
            return;
    } else {
        return;
    }
    for (obj *o = obj_live_first(); o && k != LK_UNKNOWN; o = obj_iter_next(o))
        if (live_match(o, k))
            hp_select(g, o);
}


/* ---- version 3: ShapeEnv, tracer, dispatch cache, constants ---- */

int sc_ev_shape_env(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                    sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    return sc_set_obj(out, fk_shape_env_new());
}

int sc_ev_fake_cache(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                     sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    return sc_set_obj(out, fk_cache_handle());
}

int sc_ev_tracer(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    sc_val m = {0};
    (void)recv, (void)a;
    if (sc_eval(vm, e->args[0], &m) < 0)
        return -1;
    obj *tr = m.k == V_OBJ ? fk_tracer_new(m.o)
                           : (er_set(ER_TYPE, "tracer() needs a fake mode, got %s",
                                     sc_val_type(&m)), NULL);
    sc_val_drop(&m);
    return sc_set_obj(out, tr);
}

int sc_ev_graph_module(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                       sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    return sc_set_obj(out, fk_graph_module_new());
}

/* The receiver of a version-3 method: an object `is` accepts, else ER_TYPE. */
static obj *v3_recv(const sc_expr *e, const sc_val *recv, int (*is)(const obj *))
{
    if (recv->k == V_OBJ && is(recv->o))
        return recv->o;
    er_set(ER_TYPE, "%s has no method '%s'", sc_val_type(recv), e->name);
    return NULL;
}

static int is_tensor_obj(const obj *o) { return ts_is_tensor(o); }

/* f.constant(): the real tensor a fake holds as its constant, or none */
int sc_ev_constant(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                   sc_val *out)
{
    ts_tensor *c = NULL;
    (void)vm, (void)a;
    obj *f = v3_recv(e, recv, is_tensor_obj);
    if (!f || fk_constant_of(ts_of(f), &c) < 0)
        return -1;
    return set_obj_ref(out, c ? &c->hdr : NULL);
}

/* A mode's method that answers a count (fn: -1 on error). */
static int mode_count(const sc_expr *e, const sc_val *recv, sc_val *out, int64_t (*fn)(obj *))
{
    obj *m = v3_recv(e, recv, fk_is_mode);
    int64_t n = m ? fn(m) : -1;
    if (n < 0)
        return -1;
    sc_set_int(out, n);
    return 0;
}

int sc_ev_clear_constants(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                          sc_val *out)
{
    (void)vm, (void)a;
    return mode_count(e, recv, out, fk_clear_non_cpu_constants);
}

int sc_ev_clear_weakrefs(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    (void)vm, (void)a;
    return mode_count(e, recv, out, fk_mode_clear_weakrefs);
}

/* tr.input(t): the fake of a graph input */
int sc_ev_input(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    sc_val x = {0};
    int rc = -1;
    (void)a;
    obj *tr = v3_recv(e, recv, fk_is_tracer);
    ts_tensor *t = tr ? conv_arg(vm, e, &x) : NULL;
    if (t) {
        ts_tensor *f = fk_tracer_input(tr, t);
        rc = f ? sc_set_obj(out, &f->hdr) : -1;
    }
    sc_val_drop(&x);
    return rc;
}

int sc_ev_finish(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    (void)vm, (void)a;
    obj *tr = v3_recv(e, recv, fk_is_tracer);
    if (!tr || fk_tracer_finish(tr) < 0)
        return -1;
    out->k = V_NONE;
    return 0;
}

/* fake_cache().clear(): FakeTensorMode.cache_clear() */
int sc_ev_clear(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    (void)vm, (void)a;
    if (!v3_recv(e, recv, fk_is_cache_handle))
        return -1;
    fk_cache_clear();
    out->k = V_NONE;
    return 0;
}

/* f.item(): the number of the unbacked symbol a fake's item() stands for */
int sc_ev_item(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
               sc_val *out)
{
    int64_t sym = 0;
    (void)vm, (void)a;
    obj *f = v3_recv(e, recv, is_tensor_obj);
    if (!f || fk_item(ts_of(f), &sym) < 0)
        return -1;
    sc_set_int(out, sym);
    return 0;
}

/* inference_mode(true|false): torch.inference_mode() on or off */
int sc_ev_inference_mode(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    sc_val x = {0};
    (void)recv, (void)a;
    if (sc_eval(vm, e->args[0], &x) < 0)
        return -1;
    if (x.k != V_BOOL) {
        er_set(ER_TYPE, "inference_mode() takes true or false, got %s", sc_val_type(&x));
        sc_val_drop(&x);
        return -1;
    }
    fk_set_inference_mode(x.i != 0);
    out->k = V_NONE;
    return 0;
}

/* se.cache_size, se.tracked, se.unbacked, se.symbols, m.epoch, and the cache's size,
 * hits, misses, bypasses; on other objects these names are user attributes */
int sc_ev_v3_attr(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    (void)vm, (void)a;
    if (fk_is_shape_env(recv->o) && e->id == A_UNBACKED) {
        sc_set_int(out, fk_shape_env_unbacked(recv->o));
        return 0;
    }
    if (fk_is_mode(recv->o) && e->id == A_EPOCH) {
        sc_set_int(out, fk_mode_epoch(recv->o));
        return 0;
    }
    if (e->id == A_UNBACKED || e->id == A_EPOCH)
        return user_attr(e, recv, out);
    if (fk_is_shape_env(recv->o) &&
        (e->id == A_CACHE_SIZE || e->id == A_TRACKED || e->id == A_SYMBOLS)) {
        sc_set_int(out, e->id == A_TRACKED ? fk_shape_env_tracked(recv->o)
                      : e->id == A_SYMBOLS ? fk_shape_env_symbols(recv->o)
                                           : fk_shape_env_cache_size(recv->o));
        return 0;
    }
    if (!fk_is_cache_handle(recv->o) || e->id == A_CACHE_SIZE || e->id == A_TRACKED ||
        e->id == A_SYMBOLS)
        return user_attr(e, recv, out);
    fk_cache_stats st;
    fk_cache_stats_get(&st);
    sc_set_int(out, e->id == A_SIZE ? st.size : e->id == A_HITS ? st.hits
                  : e->id == A_MISSES ? st.misses : st.bypasses);
    return 0;
}
