/* sc_interp.c - statements and expressions of a parsed scenario.
 *
 * Values own what they hold: an evaluated object is a new strong reference
 * that the caller drops (val_drop). Every error path drops what it took, so
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

static int eval(sc_vm *vm, const sc_expr *e, sc_val *out);

static void val_drop(sc_val *v)
{
    if (v->k == V_OBJ && v->o)
        obj_decref(v->o);
    v->k = V_NONE;
    v->o = NULL;
}

static void set_int(sc_val *v, int64_t i)
{
    v->k = V_INT;
    v->i = i;
    v->o = NULL;
}

static void set_bool(sc_val *v, int b)
{
    v->k = V_BOOL;
    v->i = b != 0;
    v->o = NULL;
}

/* Takes ownership of a new reference (NULL: error already set). */
static int set_obj(sc_val *v, obj *o)
{
    if (!o)
        return -1;
    v->k = V_OBJ;
    v->o = o;
    return 0;
}

static const char *val_type(const sc_val *v)
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

static int as_int(const sc_val *v, int64_t *out)
{
    if (v->k == V_INT || v->k == V_BOOL) {
        *out = v->i;
        return 0;
    }
    return -1;
}

static ts_tensor *as_tensor(const sc_val *v)
{
    return v->k == V_OBJ && ts_is_tensor(v->o) ? ts_of(v->o) : NULL;
}

static const sc_expr *kwarg(const sc_expr *e, const char *name)
{
    for (int i = 0; i < e->nkw; i++)
        if (strcmp(e->kwnames[i], name) == 0)
            return e->kwvals[i];
    return NULL;
}

/* Evaluate to an integer (bools count as 1/0). */
static int eval_int(sc_vm *vm, const sc_expr *e, int64_t *out, const char *what)
{
    sc_val v = {0};
    if (eval(vm, e, &v) < 0)
        return -1;
    if (as_int(&v, out) < 0) {
        er_set(ER_TYPE, "%s must be an integer, got %s", what, val_type(&v));
        val_drop(&v);
        return -1;
    }
    return 0;
}

/* A tuple or a single integer into v[0..*n). */
static int eval_int_list(sc_vm *vm, const sc_expr *e, int64_t *v, int *n,
                         const char *what)
{
    if (e->kind == E_TUPLE) {
        if (e->nargs > TS_MAX_DIM)
            return er_set(ER_TYPE, "%s: at most %d dimensions, got %d", what, TS_MAX_DIM,
                          e->nargs);
        for (int i = 0; i < e->nargs; i++)
            if (eval_int(vm, e->args[i], &v[i], what) < 0)
                return -1;
        *n = e->nargs;
        return 0;
    }
    if (eval_int(vm, e, &v[0], what) < 0)
        return -1;
    *n = 1;
    return 0;
}

/* Positional sizes: `f(2, 3)` or `f((2, 3))`. */
static int eval_dims(sc_vm *vm, const sc_expr *e, int first, int64_t *v, int *n,
                     const char *what)
{
    int np = e->nargs - first;
    if (np == 1 && e->args[first]->kind == E_TUPLE)
        return eval_int_list(vm, e->args[first], v, n, what);
    if (np > TS_MAX_DIM)
        return er_set(ER_TYPE, "%s: at most %d dimensions, got %d", what, TS_MAX_DIM, np);
    for (int i = 0; i < np; i++)
        if (eval_int(vm, e->args[first + i], &v[i], what) < 0)
            return -1;
    *n = np;
    return 0;
}

static int eval_dtype_kw(sc_vm *vm, const sc_expr *e, ts_dtype *dt)
{
    const sc_expr *k = kwarg(e, "dtype");
    if (!k)
        return 0;
    sc_val v = {0};
    if (eval(vm, k, &v) < 0)
        return -1;
    if (v.k != V_DTYPE) {
        er_set(ER_TYPE, "dtype= must be a dtype (f32, i64, ...), got %s", val_type(&v));
        val_drop(&v);
        return -1;
    }
    *dt = (ts_dtype)v.i;
    return 0;
}

static int device_of(const sc_val *v, ts_device *dev, const char *what)
{
    if (v->k != V_STR)
        return er_set(ER_TYPE, "%s must be a device string (\"cpu\", \"cuda:0\", ...), got %s",
                      what, val_type(v));
    char buf[32];
    if (v->i >= (int64_t)sizeof buf)
        return er_set(ER_TYPE, "unknown device \"%.*s...\"", 20, v->s);
    memcpy(buf, v->s, (size_t)v->i);
    buf[v->i] = '\0';
    return ts_device_parse(buf, dev);
}

static int eval_device_kw(sc_vm *vm, const sc_expr *e, ts_device *dev, int *given)
{
    const sc_expr *k = kwarg(e, "device");
    if (given)
        *given = 0;
    if (!k)
        return 0;
    sc_val v = {0};
    if (eval(vm, k, &v) < 0)
        return -1;
    int rc = device_of(&v, dev, "device=");
    val_drop(&v);
    if (rc == 0 && given)
        *given = 1;
    return rc;
}

static int eval_int_kw(sc_vm *vm, const sc_expr *e, const char *name, int64_t *out)
{
    const sc_expr *k = kwarg(e, name);
    if (!k)
        return 0;
    char what[40];
    snprintf(what, sizeof what, "%s=", name);
    return eval_int(vm, k, out, what);
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

/* ---- built-in functions ---- */

static obj *current_mode(sc_vm *vm)
{
    return vm->nwith ? vm->with_stack[vm->nwith - 1] : NULL;
}

/* Wrap a tensor built on meta as a fake of the innermost mode. */
static obj *wrap_in_mode(obj *mode, ts_tensor *meta, ts_device dev)
{
    if (!meta)
        return NULL;
    ts_tensor *f = fk_wrap_new(mode, meta, dev);
    obj_decref(&meta->hdr);
    return f ? &f->hdr : NULL;
}

/* memory_format= (default contiguous_format). */
static int eval_mfmt_kw(sc_vm *vm, const sc_expr *e, int *given, ts_memfmt *f)
{
    const sc_expr *k = kwarg(e, "memory_format");
    *given = 0;
    *f = TS_CONTIGUOUS_FORMAT;
    if (!k)
        return 0;
    sc_val v = {0};
    if (eval(vm, k, &v) < 0)
        return -1;
    if (v.k != V_MFMT) {
        er_set(ER_TYPE, "memory_format= must be contiguous_format or channels_last, got %s",
               val_type(&v));
        val_drop(&v);
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
    (void)held;
    return eval_dims(vm, e, 0, a->v, &a->n, sc_builtin_name(e->id));
}

/* empty_strided(sizes, strides) into v[0..n) and v2[0..n2). */
int sc_ar_strided(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (eval_int_list(vm, e->args[0], a->v, &a->n, "empty_strided() sizes") < 0 ||
        eval_int_list(vm, e->args[1], a->v2, &a->n2, "empty_strided() strides") < 0)
        return -1;
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "empty_strided(): %d sizes but %d strides", a->n, a->n2);
    return 0;
}

/* sparse_csr(rows, cols) into v[0], v[1]. */
int sc_ar_csr(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (eval_int(vm, e->args[0], &a->v[0], "sparse_csr() rows") < 0 ||
        eval_int(vm, e->args[1], &a->v[1], "sparse_csr() cols") < 0)
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

static int ctor_done(sc_vm *vm, ts_tensor *t, const ctor_kw *k, sc_val *out)
{
    obj *mode = current_mode(vm);
    if (!t)
        return -1;
    return set_obj(out, mode ? wrap_in_mode(mode, t, k->dev) : &t->hdr);
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
    return ctor_done(vm, t, &k, out);
}

int sc_ev_empty_strided(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                        sc_val *out)
{
    ctor_kw k;
    (void)recv;
    if (eval_ctor_kw(vm, e, &k) < 0)
        return -1;
    return ctor_done(vm, ts_empty_strided(a->n, a->v, a->v2, k.dt, k.where, k.rg != 0), &k,
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
    return ctor_done(vm, ts_sparse_coo(a->n, a->v, nnz, (int)sd, k.dt, k.where, co != 0), &k,
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
    return ctor_done(vm, ts_sparse_csr(a->v[0], a->v[1], nnz, k.dt, k.where), &k, out);
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
    return ctor_done(vm, ts_quantized(a->n, a->v), &k, out);
}

/* sweep= and sweep_every= of fake_mode(), meta_converter(), fake_converter(). */
static int eval_policy_kw(sc_vm *vm, const sc_expr *e, fk_policy *pol, int64_t *every)
{
    *pol = vm->sweep;
    *every = vm->sweep_every;
    const sc_expr *k = kwarg(e, "sweep");
    if (k) {
        sc_val v = {0};
        if (eval(vm, k, &v) < 0)
            return -1;
        char buf[16] = "";
        if (v.k == V_STR && v.i < (int64_t)sizeof buf) {
            memcpy(buf, v.s, (size_t)v.i);
            buf[v.i] = '\0';
        }
        if (v.k != V_STR || fk_policy_from_name(buf, pol) != 0) {
            er_set(ER_TYPE, "sweep= must be \"eager\" or \"periodic\", got %s", val_type(&v));
            val_drop(&v);
            return -1;
        }
    }
    if (eval_int_kw(vm, e, "sweep_every", every) < 0)
        return -1;
    if (*every < 1)
        return er_set(ER_TYPE, "sweep_every= must be >= 1, got %" PRId64, *every);
    return 0;
}

int sc_ev_fake_mode(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                    sc_val *out)
{
    fk_policy pol;
    int64_t every;
    (void)recv, (void)a;
    return eval_policy_kw(vm, e, &pol, &every) < 0 ? -1 : set_obj(out, fk_mode_new(pol, every));
}

int sc_ev_meta_converter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    fk_policy pol;
    int64_t every;
    (void)recv, (void)a;
    return eval_policy_kw(vm, e, &pol, &every) < 0
               ? -1 : set_obj(out, fk_meta_converter_new(pol, every));
}

int sc_ev_fake_converter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                         sc_val *out)
{
    fk_policy pol;
    int64_t every;
    (void)recv, (void)a;
    return eval_policy_kw(vm, e, &pol, &every) < 0
               ? -1 : set_obj(out, fk_fake_converter_new(pol, every));
}


/* The kinds live() knows, as a predicate over objects. */
typedef enum live_kind {
    LK_ANY, LK_TENSOR, LK_STORAGE, LK_MODE, LK_CONVERTER, LK_FINALIZER,
    LK_WEAKREF, LK_FAKE, LK_META, LK_SPARSE, LK_DATA, LK_UNKNOWN
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
        return er_set(ER_TYPE, "growth() needs a checkpoint name string, got %s", val_type(v));
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
static obj *liveness_subject(const sc_val *v, int *alive)
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
    if (eval(vm, e->args[0], &x) < 0)
        return -1;
    if (x.k != V_OBJ) {
        er_set(ER_TYPE, "weakref() needs an object, got %s", val_type(&x));
        val_drop(&x);
        return -1;
    }
    obj *w = wr_new(x.o, NULL, NULL);
    val_drop(&x);
    return set_obj(out, w);
}

int sc_ev_gc(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    uint64_t before = obj_live_count();
    obj_safepoint();
    gc_collect();
    fk_sweep_all();
    obj_safepoint();
    uint64_t after = obj_live_count();
    set_int(out, before > after ? (int64_t)(before - after) : 0);
    return 0;
}

int sc_ev_live(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    const char *k = "any";
    size_t len = 3;
    sc_val v = {0};
    const sc_expr *arg = e->nargs ? e->args[0] : kwarg(e, "kind");
    (void)recv, (void)a;
    if (arg) {
        if (eval(vm, arg, &v) < 0)
            return -1;
        if (v.k != V_STR) {
            er_set(ER_TYPE, "live() needs a kind string, got %s", val_type(&v));
            val_drop(&v);
            return -1;
        }
        k = v.s;
        len = (size_t)v.i;
    }
    uint64_t n = count_live(k, len);
    if (n == UINT64_MAX)
        return er_set(ER_TYPE, "live(): unknown kind \"%.*s\"", len > 40 ? 40 : (int)len, k);
    set_int(out, (int64_t)n);
    return 0;
}

int sc_ev_bytes(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    set_int(out, (int64_t)ts_data_bytes());
    return 0;
}

int sc_ev_heap_bytes(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                     sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    set_int(out, (int64_t)sc_model_bytes());
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
    set_int(out, (int64_t)hp_unreachable_count(g));
    hp_free(g);
    return 0;
}

int sc_ev_stale(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)e, (void)recv, (void)a;
    set_int(out, (int64_t)fk_stale_all());
    return 0;
}

int sc_ev_growth(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                 sc_val *out)
{
    sc_val v = {0};
    (void)recv, (void)a;
    if (eval(vm, e->args[0], &v) < 0)
        return -1;
    int i = checkpoint_index(vm, &v);
    val_drop(&v);
    if (i < 0)
        return -1;
    set_int(out, (int64_t)obj_live_count() - (int64_t)vm->cps[i].total);
    return 0;
}

static int eval_alive(sc_vm *vm, const sc_expr *e, int *alive)
{
    sc_val v = {0};
    if (eval(vm, e->args[0], &v) < 0)
        return -1;
    liveness_subject(&v, alive);
    val_drop(&v);
    return 0;
}

int sc_ev_alive(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    int alive;
    (void)recv, (void)a;
    if (eval_alive(vm, e, &alive) < 0)
        return -1;
    set_bool(out, alive);
    return 0;
}

int sc_ev_dead(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    int alive;
    (void)recv, (void)a;
    if (eval_alive(vm, e, &alive) < 0)
        return -1;
    set_bool(out, !alive);
    return 0;
}

/* The one dispatch of a word: its row's argument parser, then its
 * evaluator (recv: the evaluated receiver of a method, borrowed; NULL for a
 * function). A call that fails inside raises() is probed for what it
 * leaked (the arguments' own failures are probed by their own calls). */
static int call_word(sc_vm *vm, const sc_word *w, const sc_expr *e, const sc_val *recv,
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
    val_drop(&held);
    return rc < 0 ? -1 : 0;
}

static int call_builtin(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    const sc_word *w = sc_builtin_row(e->id);
    if (!w)
        return er_set(ER_INTERNAL, "unknown built-in %d", e->id);
    return call_word(vm, w, e, NULL, out);
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
    return set_obj(out, o);
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
    if (eval(vm, e->args[0], &m) < 0)
        return -1;
    if (eval(vm, e->args[1], &x) < 0)
        goto done;
    if (m.k != V_OBJ || !fk_is_mode(m.o) || !as_tensor(&x)) {
        er_set(ER_TYPE, "fake(m, t) needs a fake mode and a tensor, got %s and %s",
               val_type(&m), val_type(&x));
        goto done;
    }
    ts_tensor *res = fk_convert(conv, m.o, as_tensor(&x));
    if (!res)
        goto done;
    rc = set_obj(out, &res->hdr);
done:
    val_drop(&x);
    val_drop(&m);
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
        if (eval(vm, x, held) < 0)
            return -1;
        a->has_dtype = 1;
        a->dtype = (ts_dtype)held->i;
        return 0;
    }
    return sc_ar_dims(vm, e, a, held);
}

/* slice(dim, start, stop[, step]) with step= as the fourth integer */
int sc_ar_slice(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (eval_dims(vm, e, 0, a->v, &a->n, e->name) < 0)
        return -1;
    if (kwarg(e, "step")) {
        if (a->n != 3)
            return er_set(ER_TYPE, "slice(): step= needs dim, start and stop first");
        if (eval_int_kw(vm, e, "step", &a->v[3]) < 0)
            return -1;
        a->n = 4;
    }
    return op_arity(e, a);
}

/* diagonal([offset[, dim1, dim2]]) with offset= as the first integer */
int sc_ar_diagonal(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (eval_dims(vm, e, 0, a->v, &a->n, e->name) < 0)
        return -1;
    if (kwarg(e, "offset")) {
        if (a->n != 0)
            return er_set(ER_TYPE, "diagonal(): offset given twice");
        if (eval_int_kw(vm, e, "offset", &a->v[0]) < 0)
            return -1;
        a->n = 1;
    }
    return op_arity(e, a);
}

/* as_strided(sizes, strides[, offset]) */
int sc_ar_as_strided(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    if (e->nargs < 2 || e->nargs > 3)
        return er_set(ER_TYPE, "as_strided() takes (sizes, strides[, offset]), got %d "
                      "arguments", e->nargs);
    if (eval_int_list(vm, e->args[0], a->v, &a->n, "as_strided() sizes") < 0 ||
        eval_int_list(vm, e->args[1], a->v2, &a->n2, "as_strided() strides") < 0)
        return -1;
    if (e->nargs == 3 && eval_int(vm, e->args[2], &a->offset, "as_strided() offset") < 0)
        return -1;
    if (e->nargs == 3 && kwarg(e, "offset"))
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
    if (eval(vm, e->args[0], held) < 0)
        return -1;
    if (as_tensor(held)) {
        a->other = as_tensor(held);
    } else if ((held->k == V_INT || held->k == V_BOOL) && numbers_ok) {
        a->has_scalar = 1;
        a->scalar = (double)held->i;
        a->scalar_bool = held->k == V_BOOL;
    } else {
        return er_set(ER_TYPE, "%s() needs a tensor%s, got %s", e->name,
                      numbers_ok ? " or a number" : "", val_type(held));
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
        if (eval(vm, e->args[i], &v) < 0)
            return -1;
        if (v.k == V_DTYPE && !a->has_dtype) {
            a->has_dtype = 1;
            a->dtype = (ts_dtype)v.i;
        } else if (v.k == V_STR && !a->has_device) {
            if (device_of(&v, &a->device, "to()") < 0)
                return -1;
            a->has_device = 1;
        } else {
            er_set(ER_TYPE, "to() takes a device string and/or a dtype, got %s", val_type(&v));
            val_drop(&v);
            return -1;
        }
    }
    if (kwarg(e, "dtype")) {
        if (a->has_dtype)
            return er_set(ER_TYPE, "to(): dtype given twice");
        if (eval_dtype_kw(vm, e, &a->dtype) < 0)
            return -1;
        a->has_dtype = 1;
    }
    if (kwarg(e, "device")) {
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
    const sc_expr *d = e->nargs ? e->args[0] : kwarg(e, "dim");
    if (e->nargs > 1 || (e->nargs && kwarg(e, "dim")))
        return er_set(ER_TYPE, "sum() takes at most one dim");
    if (!d)
        return 0;
    if (eval(vm, d, held) < 0)
        return -1;
    if (held->k == V_NONE)
        return 0;
    if (as_int(held, &a->dim) < 0)
        return er_set(ER_TYPE, "sum(dim=) must be an integer or none, got %s", val_type(held));
    a->has_dim = 1;
    return 0;
}

/* to_sparse([sparse_dim]) with sparse_dim= instead */
int sc_ar_to_sparse(sc_vm *vm, const sc_expr *e, ts_args *a, sc_val *held)
{
    (void)held;
    const sc_expr *d = e->nargs ? e->args[0] : kwarg(e, "sparse_dim");
    if (e->nargs > 1 || (e->nargs && kwarg(e, "sparse_dim")))
        return er_set(ER_TYPE, "to_sparse() takes at most one sparse_dim");
    if (!d)
        return 0;
    if (eval_int(vm, d, &a->sparse_dim, "to_sparse() sparse_dim") < 0)
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
    if (eval(vm, e->args[0], held) < 0)
        return -1;
    if (as_tensor(held) && e->nargs == 1) {
        a->other = as_tensor(held);
        return 0;
    }
    if (!as_storage(held))
        return er_set(ER_TYPE, "set_() needs a %s, got %s",
                      e->nargs == 1 ? "tensor or a storage" : "storage", val_type(held));
    a->storage = as_storage(held);
    if (e->nargs == 1)
        return 0;
    a->set_geom = 1;
    if (eval_int(vm, e->args[1], &a->offset, "set_() offset") < 0 ||
        eval_int_list(vm, e->args[2], a->v, &a->n, "set_() sizes") < 0 ||
        eval_int_list(vm, e->args[3], a->v2, &a->n2, "set_() strides") < 0)
        return -1;
    if (a->n != a->n2)
        return er_set(ER_SHAPE, "set_(): %d sizes but %d strides", a->n, a->n2);
    return 0;
}

/* Every tensor op: through the fake layer (the innermost mode's rules
 * when inside `with`, where only fakes may enter unless the row says). */
int sc_ev_op(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    ts_tensor *t = as_tensor(recv);
    obj *mode = current_mode(vm);
    if (mode && !(sc_method_row(e->id)->flags & SWF_REAL_OK) &&
        (!ts_is_fake(t) || (a->other && !ts_is_fake(a->other))))
        return er_set(ER_TYPE, "%s(): Invoking operators with non-Fake Tensor inputs in "
                      "FakeTensorMode is not yet supported", e->name);
    ts_tensor *res = fk_apply_in((ts_op)e->sub, t, a, mode);
    return res ? set_obj(out, &res->hdr) : -1;
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
    ts_tensor *t = as_tensor(recv);
    (void)a;
    if (storage_recv(e, recv) < 0)
        return -1;
    if (ts_query_takes_arg(q) && e->nargs == 0)
        return shape_tuple(t, q, out);     /* t.size(), t.stride() */
    if (ts_query_takes_arg(q)) {
        if (need_args(e, 1, "1 argument (a dim)") < 0 ||
            eval_int(vm, e->args[0], &arg, "the dim") < 0)
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
        set_bool(out, v != 0);
    else
        set_int(out, v);
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
    set_int(out, (int64_t)as_storage(recv)->nbytes);
    return 0;
}

/* The tensor receiver of a value word of no arguments, or NULL (er set). */
static ts_tensor *value_recv(const sc_expr *e, const sc_val *recv)
{
    if (storage_recv(e, recv) < 0 || need_args(e, 0, "no arguments") < 0)
        return NULL;
    return as_tensor(recv);
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
    set_static_str(out, device_text(st ? st->device : as_tensor(recv)->device));
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
    return set_obj_ref(out, &s->storage->hdr);
}

int sc_ev_fake_mode_of(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                       sc_val *out)
{
    ts_tensor *t = value_recv(e, recv);
    (void)vm, (void)a;
    if (!t)
        return -1;
    if (!ts_is_fake(t) || !t->mode)
        return er_set(ER_TYPE, "'Tensor' object has no attribute 'fake_mode' (not a fake "
                      "tensor)");
    return set_obj_ref(out, t->mode);
}

/* The one tensor argument of m.fake(t) / m.meta(t), or NULL (er set). */
static ts_tensor *conv_arg(sc_vm *vm, const sc_expr *e, sc_val *x)
{
    if (need_args(e, 1, "1 argument (a tensor)") < 0 || eval(vm, e->args[0], x) < 0)
        return NULL;
    if (!as_tensor(x))
        er_set(ER_TYPE, "%s() needs a tensor, got %s", e->name, val_type(x));
    return as_tensor(x);
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
        return er_set(ER_TYPE, "%s has no method '%s'", val_type(recv), e->name);
    ts_tensor *src = conv_arg(vm, e, &x);
    if (src && eval_device_kw(vm, e, &dev, &given) == 0) {
        ts_tensor *res = fk_fake(recv->o, src, given ? &dev : NULL);
        rc = res ? set_obj(out, &res->hdr) : -1;
    }
    val_drop(&x);
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
        return er_set(ER_TYPE, "%s has no method '%s'", val_type(recv), e->name);
    if (current_mode(vm))
        return er_set(ER_TYPE, "meta() inside 'with': PyTorch 1.13.1's MetaConverter builds "
                      "its meta tensor through the active mode and asserts");
    ts_tensor *src = conv_arg(vm, e, &x);
    if (src) {
        ts_tensor *res = is_mode ? fk_mode_meta(recv->o, src) : fk_meta_convert(recv->o, src);
        rc = res ? set_obj(out, &res->hdr) : -1;
    }
    val_drop(&x);
    return rc;
}

int sc_ev_sweep(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                sc_val *out)
{
    const sc_val *r = recv;
    (void)vm, (void)a;
    if (r->k != V_OBJ || !(fk_is_mode(r->o) || fk_is_meta_converter(r->o) ||
                           fk_is_fake_converter(r->o)))
        return er_set(ER_TYPE, "%s has no method 'sweep'", val_type(r));
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    set_int(out, (int64_t)fk_sweep(r->o));
    return 0;
}

int sc_ev_get(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)vm, (void)a;
    if (recv->k != V_OBJ || recv->o->type->kind != OBJ_WEAKREF)
        return er_set(ER_TYPE, "%s has no method 'get'", val_type(recv));
    if (need_args(e, 0, "no arguments") < 0)
        return -1;
    obj *target = wr_get(recv->o);
    if (!target)
        return er_set(ER_DEAD_REF, "weak reference to %s#%" PRIu64 " is dead",
                      wr_target_raw(recv->o) ? wr_target_raw(recv->o)->type->name : "object",
                      wr_target_id(recv->o));
    obj_incref(target);
    return set_obj(out, target);
}

/* Apply method e to the receiver *recv (already evaluated; consumed).
 * Tensor ops, queries and values need a tensor (queries and values a
 * storage too); the rest check their receiver themselves. */
static int call_method(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out)
{
    const sc_word *w = sc_method_row(e->id);
    int tensor_word = w->mk == MK_OP || w->mk == MK_QUERY || w->mk == MK_VALUE;
    int rc;
    if (tensor_word && !as_tensor(recv) && !(w->mk != MK_OP && as_storage(recv)))
        rc = er_set(ER_TYPE, "%s has no method '%s'", val_type(recv), e->name);
    else
        rc = call_word(vm, w, e, recv, out);
    val_drop(recv);
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
};

/* Counter attribute e of a mode or converter r (a stand-alone
 * MetaConverter has no memo_fake). */
static int read_counter(const sc_val *r, const sc_expr *e, int64_t *v)
{
    fk_counters c;
    if (r->k != V_OBJ || fk_counters_get(r->o, &c) < 0) {
        er_clear();
        return er_set(ER_TYPE, "%s has no attribute '%s'", val_type(r), e->name);
    }
    memcpy(v, (const char *)&c + counter_at[e->id], sizeof *v);
    if (e->id == A_MEMO_FAKE && *v < 0)
        return er_set(ER_TYPE, "%s has no attribute 'memo_fake'", val_type(r));
    return 0;
}

int sc_ev_counter(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    int64_t v;
    (void)vm, (void)a;
    if (read_counter(recv, e, &v) < 0)
        return -1;
    set_int(out, v);
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
    return set_obj(out, v);
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
static int read_attr(sc_vm *vm, const sc_expr *e, sc_val *recv, sc_val *out)
{
    int rc;
    if (recv->k != V_OBJ)
        rc = er_set(ER_TYPE, "%s has no attribute '%s'", val_type(recv), e->name);
    else if (e->id == A_USER)
        rc = user_attr(e, recv, out);
    else
        rc = call_word(vm, sc_attr_word(e->id), e, recv, out);
    val_drop(recv);
    return rc < 0 ? -1 : 0;
}

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
    if (eval(vm, base, &cur) < 0)
        return -1;
    while (n-- > 0) {
        sc_val next = {.k = V_NONE};
        int rc = link[n]->kind == E_METHOD ? call_method(vm, link[n], &cur, &next)
                                           : read_attr(vm, link[n], &cur, &next);
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
    if (as_int(a, &x) == 0 && as_int(b, &y) == 0)
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
    if (as_int(a, &x) < 0 || as_int(b, &y) < 0)
        return er_set(ER_TYPE, "cannot order %s and %s (only integers and booleans)",
                      val_type(a), val_type(b));
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
    int rc = eval(vm, e->args[0], &v);
    vm->in_raises = saved_in;
    int noted = vm->leak_noted;
    vm->leak_noted = saved_noted;
    er_kind want = (er_kind)e->ival;
    if (rc == 0) {
        char buf[128];
        sc_format_val(&v, buf, sizeof buf);
        val_drop(&v);
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
    set_bool(out, held);
    return 0;
}

/* ---- expressions ---- */

/* (2, 3) as a value: integers only (a shape), to compare with t.size(). */
static int eval_tuple(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    int64_t v[TS_MAX_DIM];
    int n = 0;
    if (eval_int_list(vm, e, v, &n, "a tuple element") < 0)
        return -1;
    out->k = V_TUPLE;
    out->o = NULL;
    out->i = n;
    memcpy(out->tup, v, (size_t)n * sizeof v[0]);
    return 0;
}

static int eval(sc_vm *vm, const sc_expr *e, sc_val *out)
{
    out->k = V_NONE;
    out->o = NULL;
    switch ((sc_ekind)e->kind) {
    case E_INT: set_int(out, e->ival); return 0;
    case E_BOOL: set_bool(out, (int)e->ival); return 0;
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
    case E_CALL: return call_builtin(vm, e, out);
    case E_METHOD: case E_ATTR: return eval_chain(vm, e, out);
    case E_CMP: {
        sc_val a = {0}, b = {0};
        if (eval(vm, e->args[0], &a) < 0)
            return -1;
        if (eval(vm, e->args[1], &b) < 0) {
            val_drop(&a);
            return -1;
        }
        int res = 0;
        int rc = compare(&a, &b, e->id, &res);
        val_drop(&a);
        val_drop(&b);
        if (rc < 0)
            return -1;
        set_bool(out, res);
        return 0;
    }
    case E_RAISES: return call_word(vm, sc_builtin_row(B_RAISES), e, NULL, out);
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
    /* mode -> FakeTensorConverter -> MetaConverter */
    for (size_t i = 0; i < 3 && c->nconv < 4; i++) {
        obj *from = i == 0 ? o : (i - 1 < c->nconv ? c->convs[i - 1] : NULL);
        if (from && !obj_expired(from))
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
        obj_traverse(cv, collect_entry, c);
        if (cv->type->traverse_weak)
            cv->type->traverse_weak(cv, collect_entry, c);
    }
}

/* The objects behind a census call that an expectation compared:
 * live("KIND") -> live objects of that kind, bytes() -> storages with real
 * bytes, all of them selected in g. */
static void census_objects(const sc_expr *e, hp_graph *g)
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
        census_objects(cmp->args[i], g);
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
        /* --dot: the first failure's objects, unless teardown retains */
        if (vm->o->dot && !vm->dot_written && f->nobjects &&
            hp_write_dot(g, f->objects, f->nobjects, vm->o->dot) == 0)
            vm->dot_written = 1;
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

/* Evaluate an expectation. Returns 0 (pass or fail recorded) or -1 when
 * evaluating raised an error (the statement fails). */
static int exec_expect(sc_vm *vm, const sc_stmt *s)
{
    const sc_expr *c = s->e;
    char actual[512] = "";
    int ok = 0;
    obj *subjects[1];
    size_t nsub = 0;
    const sc_expr *cmp_failed = NULL;   /* a failed comparison's objects */
    sc_val held[2] = {{0}, {0}};   /* kept to find the objects behind a failure */
    int rc = -1;

    if (c->kind == E_RAISES) {
        if (eval_raises(vm, c, &ok, actual, sizeof actual) < 0)
            return -1;
    } else if (c->kind == E_CALL && (c->id == B_ALIVE || c->id == B_DEAD)) {
        if (eval(vm, c->args[0], &held[0]) < 0)
            return -1;
        int alive;
        obj *subj = liveness_subject(&held[0], &alive);
        ok = c->id == B_ALIVE ? alive : !alive;
        if (!ok) {
            if (subj)
                snprintf(actual, sizeof actual, "%s#%" PRIu64 " is %s", subj->type->name,
                         subj->id, alive ? "alive" : "dead");
            else
                snprintf(actual, sizeof actual, "%s", alive ? "alive" : "dead");
            if (subj && (!obj_expired(subj) || subj->weak > 0))
                subjects[nsub++] = subj;
        }
    } else if (c->kind == E_CMP) {
        sc_val v[2] = {{0}, {0}};
        for (int i = 0; i < 2; i++) {
            const sc_expr *side = c->args[i];
            int r;
            if (counter_attr(side)) {
                /* keep the receiver, read the counter from it */
                if (eval(vm, side->recv, &held[i]) < 0) {
                    val_drop(&v[0]);
                    goto out;
                }
                int64_t x;
                if (read_counter(&held[i], side, &x) < 0) {
                    val_drop(&v[0]);
                    goto out;
                }
                set_int(&v[i], x);
                r = 0;
            } else {
                r = eval(vm, side, &v[i]);
            }
            if (r < 0) {
                val_drop(&v[0]);
                goto out;
            }
        }
        int res = 0;
        if (compare(&v[0], &v[1], c->id, &res) < 0) {
            val_drop(&v[0]);
            val_drop(&v[1]);
            goto out;
        }
        ok = res;
        if (!ok) {
            char a[200], b[200];
            sc_format_val(&v[0], a, sizeof a);
            sc_format_val(&v[1], b, sizeof b);
            if (literal(c->args[0]) && !literal(c->args[1]))
                snprintf(actual, sizeof actual, "%s", b);
            else if (!literal(c->args[0]) && !literal(c->args[1]))
                snprintf(actual, sizeof actual, "%s vs %s", a, b);
            else
                snprintf(actual, sizeof actual, "%s", a);
            cmp_failed = c;
        }
        val_drop(&v[0]);
        val_drop(&v[1]);
    } else {
        sc_val v = {0};
        if (eval(vm, c, &v) < 0)
            return -1;
        int64_t x;
        if (as_int(&v, &x) < 0) {
            er_set(ER_TYPE, "expect needs a condition, got %s", val_type(&v));
            val_drop(&v);
            return -1;
        }
        ok = x != 0;
        if (!ok)
            sc_format_val(&v, actual, sizeof actual);
        val_drop(&v);
    }
    if (vm->count_expectations || !ok) {
        if (ok)
            vm->out->passed++;
        else
            vm->out->failed++;
    }
    if (!ok) {
        if (vm->out->status == RP_PASS)
            vm->out->status = RP_FAIL;
        rp_failure *f = sc_add_failure(vm, s, actual, s->msg);
        attach_objects(vm, f, subjects, nsub, cmp_failed, held);
    }
    rc = 0;
out:
    val_drop(&held[0]);
    val_drop(&held[1]);
    return rc;
}

/* ---- statements ---- */

static void unbind(sc_vm *vm, uint32_t slot)
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
    return 0;
}

static void fail_stmt(sc_vm *vm, const sc_stmt *s, const char *actual, const char *msg,
                      int error_status)
{
    vm->stopped = 1;
    vm->out->status = error_status ? RP_ERROR : (vm->out->status == RP_ERROR ? RP_ERROR
                                                                            : RP_FAIL);
    sc_add_failure(vm, s, actual, msg);
    if (error_status && !vm->out->error)
        sc_rp_set_error(vm->out, actual);
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
    fail_stmt(vm, s, actual, "the statement raised an error; the scenario stopped here",
              k == ER_INTERNAL || k == ER_NONE);
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
        return er_set(ER_LIMIT, "more than %" PRIu64 " live objects", vm->o->max_objects);
    /* the interpreter allocates nothing per statement, so the total is the
     * model's bytes plus a constant: cheaper than sc_model_bytes() */
    uint64_t b = al_live_bytes();
    if (vm->snap)   /* a kept snapshot is not the model's */
        b -= al_live_bytes_kind(AL_K_HEAP);
    if (b > vm->peak)
        vm->peak = b;
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
            snprintf(actual, sizeof actual, "heap invariant violated: %s", why);
            fail_stmt(vm, s, actual, "--verify found a broken invariant after this statement",
                      0);
            return -2;
        }
    }
    if (vm->o->on_statement)
        vm->o->on_statement(vm->o->on_statement_arg, s->line, obj_live_count(),
                            sc_model_bytes());
    return 0;
}

static int exec_stmt(sc_vm *vm, const sc_stmt *s)
{
    if (pre(vm, s) < 0)
        goto error;
    switch ((sc_skind)s->kind) {
    case S_ASSIGN: {
        sc_val v = {0};
        if (eval(vm, s->e, &v) < 0)
            goto error;
        sc_val old = vm->vars[s->slot];
        vm->vars[s->slot] = v;
        vm->stamp[s->slot] = ++vm->stamp_next;
        if (old.k == V_OBJ)
            obj_decref(old.o);
        break;
    }
    case S_STORE: {
        sc_val t = {0}, v = {0};
        if (eval(vm, s->target, &t) < 0)
            goto error;
        if (eval(vm, s->e, &v) < 0) {
            val_drop(&t);
            goto error;
        }
        int rc = 0;
        if (t.k != V_OBJ)
            rc = er_set(ER_TYPE, "cannot set attribute '%s' on %s", s->attr, val_type(&t));
        else if (v.k != V_OBJ && v.k != V_NONE)
            rc = er_set(ER_TYPE, "an attribute holds an object or none, not %s",
                        val_type(&v));
        else if (s->attr_id == A_GRAD && ts_is_tensor(t.o))
            rc = ts_set_grad(ts_of(t.o), v.k == V_OBJ ? as_tensor(&v) : NULL) < 0 ? -1 : 0;
        else
            rc = obj_attr_set(t.o, s->attr, v.k == V_OBJ ? v.o : NULL) < 0 ? -1 : 0;
        if (rc == 0 && s->attr_id == A_GRAD && ts_is_tensor(t.o) && v.k == V_OBJ &&
            !as_tensor(&v))
            rc = er_set(ER_TYPE, "grad must be a tensor or none");
        val_drop(&v);
        val_drop(&t);
        if (rc < 0)
            goto error;
        break;
    }
    case S_DEL:
        for (uint32_t i = 0; i < s->nslots; i++) {
            if (vm->vars[s->slots[i]].k == V_UNBOUND) {
                er_set(ER_TYPE, "del: variable '%s' is not bound (deleted already?)",
                       vm->p->var_names[s->slots[i]]);
                goto error;
            }
            unbind(vm, s->slots[i]);
        }
        break;
    case S_EXPR: {
        sc_val v = {0};
        if (eval(vm, s->e, &v) < 0)
            goto error;
        val_drop(&v);
        break;
    }
    case S_EXPECT:
        if (exec_expect(vm, s) < 0)
            goto error;
        break;
    case S_CHECKPOINT: {
        sc_census *c = &vm->cps[s->slot];
        c->reached = 1;
        c->total = obj_live_count();
        for (int k = 0; k < OBJ_KIND_COUNT; k++)
            c->kinds[k] = obj_live_count_kind((obj_kind)k);
        break;
    }
    case S_REPEAT: {
        int64_t n;
        if (eval_int(vm, s->e, &n, "repeat count") < 0)
            goto error;
        if (n < 0) {
            er_set(ER_TYPE, "repeat count must be >= 0, got %" PRId64, n);
            goto error;
        }
        int pr = post(vm, s);
        if (pr == -2)
            return -1;
        if (pr < 0)
            goto error;
        for (int64_t i = 0; i < n; i++)
            if (exec_block(vm, s->body, s->nbody) < 0)
                return -1;
        return 0;
    }
    case S_WITH: {
        sc_val m = {0};
        if (eval(vm, s->e, &m) < 0)
            goto error;
        if (m.k != V_OBJ || !fk_is_mode(m.o)) {
            er_set(ER_TYPE, "with needs a fake mode, got %s", val_type(&m));
            val_drop(&m);
            goto error;
        }
        vm->with_stack[vm->nwith++] = m.o;   /* the reference moves to the stack */
        int pr = post(vm, s);
        if (pr == -2)
            return -1;
        if (pr < 0)
            goto error;
        if (exec_block(vm, s->body, s->nbody) < 0)
            return -1;   /* teardown drops the stack */
        obj *top = vm->with_stack[--vm->nwith];
        vm->with_stack[vm->nwith] = NULL;
        obj_decref(top);
        obj_safepoint();
        return 0;
    }
    }
    {
        int pr = post(vm, s);
        if (pr == -2)
            return -1;
        if (pr < 0)
            goto error;
    }
    return 0;
error:
    fail_error(vm, s);
    return -1;
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
            n++;
        }
    for (int i = 0; i < vm->nwith; i++) {
        vm->roots[n].name = "with";
        vm->roots[n].o = vm->with_stack[i];
        n++;
    }
    return n;
}

void sc_stmt_text(const sc_vm *vm, const sc_stmt *s, char *buf, size_t n)
{
    stmt_text_impl(vm, s, buf, n);
}
