/* st_gen.c - actions: drawing them from a seed, and rendering them through
 * the model into scenario text with the checks the model predicts.
 *
 * An action is an intent with concrete arguments ("t3 = t1.slice(0, 1, 3)",
 * "f2 = m0.fake(t3)"). Rendering re-checks it against the model's state:
 * an action whose variables are unbound or of the wrong kind, or whose
 * outcome the model cannot predict, is skipped; one the model predicts to
 * fail is written as `expect raises(ERROR, EXPR)`; the others as
 * assignments or expression statements. So any subsequence of a generated
 * action list renders to a valid scenario whose expectations hold on a
 * correct core - which is what the shrinker relies on.
 */
#include "stress/st_model.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "fake/fk.h"

/* ---- text ---- */

int st_text_add(st_text *t, const char *s, size_t n)
{
    if (al_reserve(&t->p, &t->cap, t->len + n + 1, 1, 4096, AL_K_SCENARIO, "st text") != 0)
        return -1;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
    return 0;
}

int st_text_printf(st_text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    return st_text_add(t, buf, (size_t)n);
}

void st_text_free(st_text *t)
{
    al_free(t->p, t->cap, AL_K_SCENARIO);
    memset(t, 0, sizeof *t);
}

void st_script_free(st_script *s)
{
    al_free(s->a, s->cap * sizeof *s->a, AL_K_SCENARIO);
    memset(s, 0, sizeof *s);
}

static int script_push(st_script *s, const st_action *a)
{
    if (al_grow(&s->a, &s->cap, s->n, sizeof *s->a, 256, AL_K_SCENARIO, "st actions") < 0)
        return -1;
    s->a[s->n++] = *a;
    return 0;
}

/* The line map grows by 1024 entries, so its capacity is a function of its
 * length. */
static size_t lines_cap(size_t n) { return n ? ((n + 1023) / 1024) * 1024 : 1024; }

void st_lines_free(uint32_t *lines, size_t nlines)
{
    if (lines)
        al_free(lines, lines_cap(nlines) * sizeof *lines, AL_K_SCENARIO);
}

/* ---- PRNG: splitmix64 seeds xoshiro256** ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void st_rng_seed(st_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t st_rng_next(st_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

uint32_t st_rng_below(st_rng *r, uint32_t n)
{
    return (uint32_t)(((st_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* ---- weights ---- */

/* Each action kind: its name, default weight and help; the language
 * version it needs (0: any) and the design its help names it for
 * (FK_D_DEFAULT: none; weight_of gates it by the model's features), which
 * help says after the text (cli: "(version 3, pytorch-2.3 only)"). */
static const struct {
    const char *name;
    uint32_t def;
    const char *help;
    unsigned char version;
    fk_design_id only;
} weight_table[ST_W_COUNT] = {
    [ST_W_TENSOR] = {"tensor", 12, "empty/zeros/ones/rand, dtypes, cpu/cuda/lazy, requires_grad"},
    [ST_W_META_TENSOR] = {"meta_tensor", 3, "a constructor on device meta"},
    [ST_W_STRIDED] = {"strided", 1, "empty_strided with row/column-major or padded strides"},
    [ST_W_SPARSE] = {"sparse", 3, "sparse_coo (nnz, sparse_dim, coalesced)"},
    [ST_W_CSR] = {"csr", 1, "sparse_csr"},
    [ST_W_QUANTIZED] = {"quantized", 1, "quantized tensors (unsupported by meta)"},
    [ST_W_VIEW] = {"view", 12, "the view ops, view ... as_strided, valid or not"},
    [ST_W_NEWOP] = {"newop", 5, "clone contiguous to add mul sum matmul to_dense"},
    [ST_W_INPLACE] = {"inplace", 2, "add_ mul_ zero_"},
    [ST_W_SPARSE_OP] = {"sparse_op", 3, "coalesce indices values to_sparse"},
    [ST_W_MODE] = {"mode", 4, "fake_mode(), eager or periodic, small sweep_every"},
    [ST_W_META_CONVERTER] = {"meta_converter", 1, "a stand-alone MetaConverter"},
    [ST_W_FAKE] = {"fake", 12, "m.fake(t), kept or dropped at once"},
    [ST_W_FAKE_DEVICE] = {"fake_device", 2, "m.fake(meta_t, device=...)"},
    [ST_W_META] = {"meta", 4, "m.meta(t) / c.meta(t)"},
    [ST_W_FAKE_OP] = {"fake_op", 5, "views, new tensors and in-place ops on fake tensors"},
    [ST_W_REFAKE] = {"refake", 2, "expect m.fake(t) == f (a memo hit is the same object)"},
    [ST_W_ATTR] = {"attr", 5, "user attributes (cycles), none clears"},
    [ST_W_GRAD] = {"grad", 2, "t.grad = g / none"},
    [ST_W_DEL] = {"del", 8, "del one or two variables"},
    [ST_W_WEAKREF] = {"weakref", 3, "w = weakref(x)"},
    [ST_W_GC] = {"gc", 1, "gc()"},
    [ST_W_SWEEP] = {"sweep", 2, "expect m.sweep() == N"},
    [ST_W_WITH] = {"with", 2, "with m: constructors make fake tensors"},
    [ST_W_ERROR] = {"error", 3, "operations that must raise ShapeError, TypeError or "
                                "UnsupportedFakeTensor"},
    [ST_W_SET] = {"set", 1, "t.set_(u): t re-pointed at u's storage", 2},
    [ST_W_DTYPE_VIEW] = {"dtype_view", 1, "u = t.view(dtype), same element size: shares the "
                                          "storage, not a view", 2},
    [ST_W_STORAGE] = {"storage", 1, "u = t.storage(): a storage held by a variable", 2},
    [ST_W_FAKE_CONVERTER] = {"fake_converter", 1, "c = fake_converter(): a stand-alone "
                                                 "FakeTensorConverter", 2},
    [ST_W_CONVERT] = {"convert", 2, "f = c.fake(m, t): memoized in c, f holds m", 2},
    [ST_W_TRACER] = {"tracer", 2, "c = tracer(m), f = c.input(t) (a graph argument: the fake "
                                  "held, t not), c.finish()", 3},
    [ST_W_CYCLE] = {"cycle", 2, "h = t.unsqueeze(0); h.x = h; del h; gc(): a collected "
                                "cycle that referenced a survivor (pytorch#145253)"},
    [ST_W_WEAK_MODE] = {"weak_mode", 1, "fake_mode(mode_ref=\"weak\"): its fakes hold it "
                                        "weakly, unusable once it died", 3},
    [ST_W_SHAPE_ENV] = {"shape_env", 2, "c = shape_env(), fake_mode(shape_env=c, "
                                        "propagate_real=true)", 3, FK_D_2_3},
    [ST_W_CONSTANT] = {"constant", 2, "m.fake(t, constant=true): the fakes built hold t; no op "
                                      "runs on them", 3, FK_D_2_3},
    [ST_W_DYNAMIC] = {"dynamic", 2, "m.fake(t, dynamic=true): the fakes built, and ops on them, "
                                    "hold the ShapeEnv", 3, FK_D_2_3},
    [ST_W_ITEM] = {"item", 3, "expect f.item() == N: the fake's unbacked symbol, "
                              "memoized", 0, FK_D_2_14},
    [ST_W_INFER] = {"inference", 1, "inference_mode(true|false): item() memoizes nothing while "
                                    "on", 0, FK_D_2_14},
    [ST_W_BASE_CYCLE] = {"base_cycle", 0, "cycle's lifecycle with its base t in a cycle of "
                                          "its own (t.x = t) and dropped too: a view's base held "
                                          "from C++ survives the gc() (base_held_from_cpp)"},
    [ST_W_EXPECT] = {"expect", 70, "percent chance of a model check after a step"},
};

const char *st_weight_name(int i) { return weight_table[i].name; }
const char *st_weight_help(int i) { return weight_table[i].help; }
unsigned st_weight_version(int i) { return weight_table[i].version; }
int st_weight_only(int i) { return (int)weight_table[i].only; }
uint32_t st_weight_default(int i) { return weight_table[i].def; }

void st_weights_default(st_weights *w)
{
    for (int i = 0; i < ST_W_COUNT; i++)
        w->w[i] = weight_table[i].def;
}

int st_weights_parse(st_weights *w, const char *csv, char *err, size_t n)
{
    const char *p = csv;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        int found = -1;
        if (eq) {
            for (int i = 0; i < ST_W_COUNT; i++)
                if (strlen(weight_table[i].name) == (size_t)(eq - p) &&
                    memcmp(weight_table[i].name, p, (size_t)(eq - p)) == 0)
                    found = i;
        }
        unsigned long v = 0;
        int ok = found >= 0;
        if (ok) {
            const char *q = eq + 1;
            ok = q < p + len;
            for (; ok && q < p + len; q++) {
                if (*q < '0' || *q > '9' || v > 1000000) {
                    ok = 0;
                    break;
                }
                v = v * 10 + (unsigned long)(*q - '0');
            }
        }
        if (!ok || (found == ST_W_EXPECT && v > 100)) {
            int w0 = snprintf(err, n, "--weights: bad item '%.*s' (NAME=N; names:",
                              (int)(len > 40 ? 40 : len), p);
            for (int i = 0; i < ST_W_COUNT && w0 > 0 && (size_t)w0 < n; i++)
                w0 += snprintf(err + w0, n - (size_t)w0, " %s", weight_table[i].name);
            if (w0 > 0 && (size_t)w0 < n)
                snprintf(err + w0, n - (size_t)w0, "; expect is a percentage)");
            return -1;
        }
        w->w[found] = (uint32_t)v;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

void st_config_default(st_config *c)
{
    memset(c, 0, sizeof *c);
    st_weights_default(&c->weights);
    c->steps = 1000;
    c->policy = FK_SWEEP_EAGER;
    c->sweep_every = 128;
}

/* ---- actions ---- */

static const char *const ctor_name[] = {"empty", "zeros", "ones", "rand", "empty_strided",
                                        "sparse_coo", "sparse_csr", "quantized"};
static const char *const view_name[VW_COUNT] = {
    "view", "reshape", "t", "transpose", "slice", "select", "narrow", "unsqueeze",
    "squeeze", "expand", "diagonal", "detach", "neg_view", "conj", "view_as_real",
    "as_strided"};

typedef struct gen {
    model m;
    const st_config *c;
    st_text *text;
    uint32_t *lines;
    size_t nlines, lines_cap;
    uint32_t cur;             /* action index being rendered */
    int in_with;              /* a `with` block is open */
    st_rng *rng;              /* generation only */
    int checking;             /* check_all is emitting (c->expect_class filters) */
    int failed;
} gen;

/* Record that the next text line renders action `action` (UINT32_MAX: no
 * action), so the shrinker can map lines back to actions. */
static void note_line(gen *g, uint32_t action)
{
    if (g->nlines == g->lines_cap) {
        size_t nc = g->lines_cap + 1024;
        uint32_t *np = al_realloc(g->lines, g->lines_cap * sizeof *np, nc * sizeof *np,
                                  AL_K_SCENARIO, "st lines");
        if (!np) {
            g->failed = 1;
            return;
        }
        g->lines = np;
        g->lines_cap = nc;
    }
    g->lines[g->nlines++] = action;
}

static void emit(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(gen *g, const char *fmt, ...)
{
    char buf[600];
    int k = 0;
    if (g->in_with && strncmp(fmt, "end", 3) != 0)   /* the source it writes: `end` unindented */
        buf[k++] = ' ', buf[k++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + k, sizeof buf - (size_t)k - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)k + ((size_t)n < sizeof buf - (size_t)k - 1 ? (size_t)n
                                                                     : sizeof buf - (size_t)k - 2);
    if (g->checking && g->c->expect_class) {
        char cls[ST_CLASS_LEN];
        buf[len] = '\0';
        st_normalize(buf, cls, sizeof cls);
        if (strcmp(cls, g->c->expect_class) != 0)
            return;   /* a check of another class: not rendered */
    }
    buf[len++] = '\n';
    if (st_text_add(g->text, buf, len) < 0) {
        g->failed = 1;
        return;
    }
    if (g->lines)
        note_line(g, g->cur);
}

static const char *vname(int slot, char *buf)
{
    char k = slot < V_F ? 't' : slot < V_M ? 'f' : slot < V_C ? 'm' : slot < V_W ? 'c' : 'w';
    int base = slot < V_F ? V_T : slot < V_M ? V_F : slot < V_C ? V_M : slot < V_W ? V_C : V_W;
    snprintf(buf, 8, "%c%d", k, slot - base);
    return buf;
}

static int is_t(int s) { return s >= V_T && s < V_T + NV_T; }
static int is_f(int s) { return s >= V_F && s < V_F + NV_F; }
static int is_m(int s) { return s >= V_M && s < V_M + NV_M; }
static int is_c(int s) { return s >= V_C && s < V_C + NV_C; }
static int is_w(int s) { return s >= V_W && s < V_W + NV_W; }

static int32_t vnode(gen *g, int s)
{
    if (s < 0 || s >= NVARS)
        return -1;
    return g->m.var[s];
}

/* A live tensor node bound at slot s (t-slots real, f-slots fake). */
static int32_t vtensor(gen *g, int s)
{
    int32_t i = vnode(g, s);
    if (i < 0 || g->m.n[i].kind != NK_TENSOR || !g->m.n[i].alive)
        return -1;
    if (is_t(s) && g->m.n[i].fake)
        return -1;
    if (is_f(s) && !g->m.n[i].fake)
        return -1;
    if (is_f(s) && g->m.n[i].mode >= 0 && !g->m.n[g->m.n[i].mode].alive)
        return -1;     /* a mode_ref="weak" mode died: its ops raise */
    return i;
}

/* Bind the statement's result to a variable slot, or drop it (slot < 0:
 * an expression statement). */
static void bind(gen *g, int slot, int32_t node)
{
    if (slot < 0) {
        m_unref(&g->m, node);
        return;
    }
    int32_t old = g->m.var[slot];
    g->m.var[slot] = node;      /* takes the statement's reference */
    m_unref(&g->m, old);
}

static const char *err_name(int e)
{
    return e == MERR_SHAPE ? "ShapeError" : e == MERR_TYPE ? "TypeError"
                                                            : "UnsupportedFakeTensor";
}

/* Write the action's statement: an assignment, an expression statement, or
 * `expect raises(...)` for a predicted error. */
static void emit_stmt(gen *g, int err, int dst, const char *expr)
{
    char n[8];
    if (err)
        emit(g, "expect raises(%s, %s)", err_name(err), expr);
    else if (dst >= 0)
        emit(g, "%s = %s", vname(dst, n), expr);
    else
        emit(g, "%s", expr);
}

static void fmt_dims(char *buf, size_t n, int nd, const int16_t *v, int tuple)
{
    size_t k = 0;
    buf[0] = '\0';
    if (tuple)
        k += (size_t)snprintf(buf + k, n - k, "(");
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? ", " : "", v[i]);
    if (tuple && k < n)
        snprintf(buf + k, n - k, nd == 1 ? ",)" : ")");
}

/* The node an op runs on: a fake's meta tensor, else itself. */
static int32_t op_node(gen *g, int32_t ti)
{
    return g->m.n[ti].fake ? g->m.n[ti].meta : ti;
}

/* ---- rendering each action ---- */

static void expr_view(gen *g, const st_action *a, char *buf, size_t n)
{
    char nm[8], d[96] = "", d2[64] = "";
    vname(a->a, nm);
    switch (a->sub) {
    case VW_VIEW: case VW_RESHAPE: case VW_EXPAND: case VW_TRANSPOSE: case VW_SELECT:
    case VW_UNSQUEEZE: case VW_NARROW:
        fmt_dims(d, sizeof d, a->n, a->v, 0);
        snprintf(buf, n, "%s.%s(%s)", nm, view_name[a->sub], d);
        break;
    case VW_SLICE:
        fmt_dims(d, sizeof d, 3, a->v, 0);
        if (a->flags & F_STEP)
            snprintf(buf, n, "%s.slice(%s, %d)", nm, d, a->v[3]);
        else
            snprintf(buf, n, "%s.slice(%s)", nm, d);
        break;
    case VW_AS_STRIDED:
        fmt_dims(d, sizeof d, a->n, a->v, 1);
        fmt_dims(d2, sizeof d2, a->n2, a->v2, 1);
        snprintf(buf, n, "%s.as_strided(%s, %s, %d)", nm, d, d2, a->v[5]);
        break;
    default:
        snprintf(buf, n, "%s.%s()", nm, view_name[a->sub]);
        break;
    }
    (void)g;
}

static void expr_newop(const st_action *a, char *buf, size_t n)
{
    char nm[8], nb[8];
    vname(a->a, nm);
    switch (a->sub) {
    case NO_CLONE: snprintf(buf, n, "%s.clone()", nm); break;
    case NO_CONTIG: snprintf(buf, n, "%s.contiguous()", nm); break;
    case NO_TO_DTYPE: snprintf(buf, n, "%s.to(dtype=%s)", nm, m_dtype_name[a->dtype]); break;
    case NO_TO_DEVICE: snprintf(buf, n, "%s.to(\"%s\")", nm, m_dev_name[a->dev]); break;
    case NO_ADD: snprintf(buf, n, "%s.add(%s)", nm, vname(a->b, nb)); break;
    case NO_MUL: snprintf(buf, n, "%s.mul(%d)", nm, a->v[0]); break;
    case NO_SUM: snprintf(buf, n, "%s.sum()", nm); break;
    case NO_SUM_DIM: snprintf(buf, n, "%s.sum(%d)", nm, a->v[0]); break;
    case NO_MATMUL: snprintf(buf, n, "%s.matmul(%s)", nm, vname(a->b, nb)); break;
    default: snprintf(buf, n, "%s.to_dense()", nm); break;
    }
}

/* The constructor call as written. */
static void expr_ctor(const st_action *a, uint8_t dt, uint8_t dev, char *expr, size_t n)
{
    char dims[96], d2[64], kw[160] = "";
    size_t k = 0;
    int nd = a->n;
    if (a->flags & F_DTYPE)
        k += (size_t)snprintf(kw + k, sizeof kw - k, ", dtype=%s", m_dtype_name[dt]);
    if (a->flags & F_DEVICE)
        k += (size_t)snprintf(kw + k, sizeof kw - k, ", device=\"%s\"", m_dev_name[dev]);
    fmt_dims(dims, sizeof dims, nd, a->v, a->sub == C_STRIDED);
    switch (a->sub) {
    case C_STRIDED:
        fmt_dims(d2, sizeof d2, nd, a->v2, 1);
        snprintf(expr, n, "empty_strided(%s, %s%s)", dims, d2, kw);
        return;
    case C_COO:
        k += (size_t)snprintf(kw + k, sizeof kw - k, ", nnz=%d", a->v2[0]);
        if (a->flags & F_SD)
            k += (size_t)snprintf(kw + k, sizeof kw - k, ", sparse_dim=%d", a->v2[1]);
        if (a->flags & F_COAL)
            snprintf(kw + k, sizeof kw - k, ", coalesced=true");
        break;
    case C_CSR:
        snprintf(expr, n, "sparse_csr(%d, %d, nnz=%d%s)", a->v[0], a->v[1], a->v2[0], kw);
        return;
    case C_QUANT:
        snprintf(expr, n, "quantized(%s)", dims);
        return;
    default:
        if (a->flags & F_RG)
            snprintf(kw + k, sizeof kw - k, ", requires_grad=true");
        break;
    }
    snprintf(expr, n, "%s(%s%s)", ctor_name[a->sub], dims, nd || !kw[0] ? kw : kw + 2);
}

static int act_ctor(gen *g, const st_action *a)
{
    model *m = &g->m;
    int in_mode = m->nwith > 0;
    if (in_mode ? !is_f(a->dst) : !is_t(a->dst))
        return 0;
    uint8_t dt = (a->flags & F_DTYPE) ? a->dtype : D_F32;
    uint8_t dev = (a->flags & F_DEVICE) ? a->dev : DV_CPU;
    int64_t sz[M_MAXD];
    if (a->n < 0 || a->n > M_MAXD || a->sub > C_QUANT)
        return 0;
    for (int i = 0; i < a->n; i++) {
        if (a->v[i] < 0)
            return 0;
        sz[i] = a->v[i];
    }
    int err = m_ctor_rule(m, a, sz, dt, in_mode ? DV_META : dev);
    if (err == MERR_SKIP)
        return 0;
    char expr[300];
    expr_ctor(a, dt, dev, expr, sizeof expr);
    emit_stmt(g, err, a->dst, expr);
    if (err)
        return 1;
    int32_t t = m_ctor(m, a, sz, dt, dev);
    if (t < 0)
        return -1;
    bind(g, a->dst, t);
    return 1;
}

static int dst_family_ok(int src, int dst)
{
    return dst < 0 || (is_t(src) && is_t(dst)) || (is_f(src) && is_f(dst));
}

/* an op with a symbolic input (a dynamic fake's ShapeEnv) gives a new
 * output that holds that ShapeEnv (its SymInts do) */
static void op_symbolic(gen *g, int32_t ti, int32_t bf, int32_t r)
{
    int32_t se = g->m.n[ti].fake ? m_dc_symbolic(&g->m, ti, bf) : -1;
    if (se >= 0 && r != ti && g->m.n[r].fake)
        m_set_edge(&g->m, &g->m.n[r].se, se);
}

/* An op under `with` on a fake of another mode, where the design raises
 * for it (foreign_fakes_raise): not generated (a TypeError in 2.x). */
static int foreign_in_with(const gen *g, int32_t ti)
{
    const model *m = &g->m;
    const fk_design *d = fk_design_get((fk_design_id)m->c->design);
    return m->nwith && d && d->foreign_fakes_raise && m->n[ti].fake &&
           m->n[ti].mode != m->with[m->nwith - 1];
}

static int act_view(gen *g, const st_action *a)
{
    int32_t ti = vtensor(g, a->a);
    if (ti < 0 || !dst_family_ok(a->a, a->dst) || a->dst < 0 || foreign_in_with(g, ti))
        return 0;
    mplan p;
    int err = m_view_plan(&g->m, op_node(g, ti), a, &p);
    if (err == MERR_SKIP)
        return 0;
    if (!m_dc_predictable(&g->m, ti, -1))
        return 0;
    char expr[300];
    expr_view(g, a, expr, sizeof expr);
    emit_stmt(g, err, a->dst, expr);
    if (err)
        return 1;
    m_dc_dispatch(&g->m, ti, -1, strchr(expr, '.'));
    int32_t r = m_run_plan(&g->m, ti, &p, a->sub != VW_DETACH);
    if (r < 0)
        return -1;
    op_symbolic(g, ti, -1, r);
    bind(g, a->dst, r);
    return 1;
}

static int act_newop(gen *g, const st_action *a)
{
    int32_t ti = vtensor(g, a->a);
    if (ti < 0 || a->dst < 0 || !dst_family_ok(a->a, a->dst) || foreign_in_with(g, ti))
        return 0;
    int32_t bi = -1;
    int err = MERR_NONE;
    if (a->sub == NO_ADD || a->sub == NO_MATMUL) {
        int32_t b = vnode(g, a->b);
        if (b < 0 || g->m.n[b].kind != NK_TENSOR || !g->m.n[b].alive)
            return 0;
        err = m_operands(&g->m, ti, b, &bi);
    }
    if (g->m.n[ti].fake && a->sub == NO_TO_DEVICE)
        return 0;
    mplan p;
    if (!err)
        err = m_newop_plan(&g->m, op_node(g, ti), bi, a, &p);
    int32_t bf = bi >= 0 ? vtensor(g, a->b) : -1;   /* the operand as passed */
    if (err == MERR_SKIP || !m_dc_predictable(&g->m, ti, bf))
        return 0;
    char expr[200];
    expr_newop(a, expr, sizeof expr);
    emit_stmt(g, err, a->dst, expr);
    if (err)
        return 1;
    m_dc_dispatch(&g->m, ti, bf,
                  bf >= 0 ? (a->sub == NO_ADD ? ".add" : ".matmul") : strchr(expr, '.'));
    int32_t r = m_run_plan(&g->m, ti, &p, 0);
    if (r < 0)
        return -1;
    op_symbolic(g, ti, bf, r);
    bind(g, a->dst, r);
    return 1;
}

static int act_inplace(gen *g, const st_action *a)
{
    int32_t ti = vtensor(g, a->a);
    if (ti < 0 || foreign_in_with(g, ti))
        return 0;
    int err = m_inplace_rule(&g->m, ti, a);
    if (err == MERR_SKIP || !m_dc_predictable(&g->m, ti, -1))
        return 0;
    char nm[8], expr[64];
    vname(a->a, nm);
    if (a->sub == IP_ZERO)
        snprintf(expr, sizeof expr, "%s.zero_()", nm);
    else
        snprintf(expr, sizeof expr, "%s.%s(%d)", nm, a->sub == IP_ADD ? "add_" : "mul_",
                 a->v[0]);
    emit_stmt(g, err, -1, expr);
    if (!err)
        m_dc_dispatch(&g->m, ti, -1, strchr(expr, '.'));
    if (!err && g->m.n[ti].fake)
        m_bump_version(&g->m, ti);
    return 1;
}

static int act_sparse(gen *g, const st_action *a)
{
    int32_t ti = vtensor(g, a->a);
    if (ti < 0 || a->dst < 0 || !dst_family_ok(a->a, a->dst))
        return 0;
    mplan p;
    int err = m_sparse_plan(&g->m, op_node(g, ti), a, &p);
    if (err == MERR_SKIP || !m_dc_predictable(&g->m, ti, -1))
        return 0;
    static const char *const names[] = {"coalesce", "indices", "values", "to_sparse"};
    char nm[8], expr[64];
    snprintf(expr, sizeof expr, "%s.%s()", vname(a->a, nm), names[a->sub]);
    emit_stmt(g, err, a->dst, expr);
    if (err)
        return 1;
    /* no dispatch cache: each has a sparse input or (to_sparse) output */
    m_dc_dispatch(&g->m, ti, -1, NULL);
    int32_t r = m_run_plan(&g->m, ti, &p, a->sub == SP_INDICES || a->sub == SP_VALUES);
    if (r < 0)
        return -1;
    op_symbolic(g, ti, -1, r);
    bind(g, a->dst, r);
    return 1;
}

static int act_mode(gen *g, const st_action *a)
{
    int mc = a->op == A_MCONV, fc = a->op == A_FCONV;
    if (mc || fc ? !is_c(a->dst) : !is_m(a->dst))
        return 0;
    int policy = a->sub == 1 ? FK_SWEEP_EAGER : a->sub == 2 ? FK_SWEEP_PERIODIC : g->c->policy;
    int64_t every = (a->flags & F_EVERY) ? a->v[0] : g->c->sweep_every;
    if (every < 1)
        return 0;
    char kw[80] = "";
    size_t k = 0;
    if (a->sub)
        k += (size_t)snprintf(kw, sizeof kw, "sweep=\"%s\"", a->sub == 1 ? "eager" : "periodic");
    if (a->flags & F_EVERY)
        k += (size_t)snprintf(kw + k, sizeof kw - k, "%ssweep_every=%d", k ? ", " : "",
                              a->v[0]);
    if ((a->flags & F_WREF) && !mc && !fc)
        k += (size_t)snprintf(kw + k, sizeof kw - k, "%smode_ref=\"weak\"", k ? ", " : "");
    int32_t se = -1;
    if ((a->flags & F_SE) && !mc && !fc) {
        se = vnode(g, a->b);
        if (se < 0 || g->m.n[se].kind != NK_SHAPE_ENV || !g->m.dcache)
            return 0;
        char sn[8];
        k += (size_t)snprintf(kw + k, sizeof kw - k, "%sshape_env=%s", k ? ", " : "",
                              vname(a->b, sn));
    }
    if ((a->flags & F_PROP) && !mc && !fc) {
        if (!g->m.dcache)
            return 0;
        snprintf(kw + k, sizeof kw - k, "%spropagate_real=true", k ? ", " : "");
    }
    char expr[160];
    snprintf(expr, sizeof expr, "%s(%s)",
             mc ? "meta_converter" : fc ? "fake_converter" : "fake_mode", kw);
    emit_stmt(g, 0, a->dst, expr);
    int32_t r = fc ? m_converter_new(&g->m, policy, every)
                   : m_mode_new(&g->m, mc, policy, every);
    if (r < 0)
        return -1;
    if ((a->flags & F_WREF) && !mc && !fc)
        g->m.n[r].flags |= NF_WMODE;
    if (se >= 0)
        m_set_edge(&g->m, &g->m.n[r].se, se);
    g->m.m[g->m.n[r].mi].propreal = (a->flags & F_PROP) && !mc && !fc;
    bind(g, a->dst, r);
    return 1;
}

/* A view whose geometry reaches past what its base's meta storage will
 * hold: the base's extent when the base is converted now, else the
 * memoized meta storage's current size (a meta storage has the extent of
 * the last non-view tensor converted over it). PyTorch 1.13.1 raises
 * setStorage out of bounds in the as_strided of the conversion, after
 * converting the base; the generator converts no such view (and none whose
 * strides it does not predict). */
static int view_overreaches(const gen *g, const mmode *md, int32_t t)
{
    const mnode *x = &g->m.n[t];
    if (x->base < 0 || x->layout != LY_STRIDED)
        return 0;
    const mnode *b = &g->m.n[x->base];
    if (b->layout != LY_STRIDED)
        return 0;
    if ((x->flags | b->flags) & NF_USTR)
        return 1;
    uint64_t need = m_storage_bytes(x->ndim, x->sizes, x->strides, x->offset, x->dtype);
    int32_t hit = m_lookup(&md->meta, x->base);
    if (md->one && !(g->m.n[md->node].flags & NF_MC)) {   /* the base's fake's meta */
        int32_t fh = m_lookup(&md->fake, x->base);
        hit = fh >= 0 ? g->m.n[fh].meta : -1;
    }
    uint64_t have = hit >= 0 && g->m.n[hit].storage >= 0
                  ? g->m.n[g->m.n[hit].storage].nbytes
                  : m_storage_bytes(b->ndim, b->sizes, b->strides, b->offset, b->dtype);
    return need > have;
}

/* 2.x converts base and grad before setting the entry: a grad that reaches
 * an unconverted tensor on the way (t.grad = t.view(...)) recurses without
 * end (fakegc: LimitExceeded). 1 when t's base/grad edges reach a tensor
 * still being converted, or go deeper than the generator follows. */
static int one_recurses(const gen *g, const mmode *md, int32_t t, int32_t *stack, int depth)
{
    /* 2.3 describes t (ids of its storage, grad and base, recursively)
     * before it looks up its memo entry: the cycle recurses even then
     * (meta_utils.py@0f315d37:457,472) */
    if (t < 0 || (!md->ids && m_lookup(&md->fake, t) >= 0))
        return 0;
    if (depth >= 16)
        return 1;
    for (int i = 0; i < depth; i++)
        if (stack[i] == t)
            return 1;
    stack[depth] = t;
    const mnode *x = &g->m.n[t];
    if (x->base >= 0 && x->layout == LY_STRIDED &&
        one_recurses(g, md, x->base, stack, depth + 1))
        return 1;
    return one_recurses(g, md, g->m.n[t].grad, stack, depth + 1);
}

/* Under a mode's one memo (2.x): t's conversion answers a plain meta
 * tensor, not a fake - t's entry is mode.meta(t)'s, or its view's base's
 * is (st_model.c one_fake). As a grad that raises TypeError ("assigned
 * grad has data of a different type"). */
static int conv_plain(const gen *g, const mmode *md, int32_t t)
{
    if (!md->one || (g->m.n[md->node].flags & NF_MC))
        return 0;
    for (int depth = 0; t >= 0 && depth < 16; depth++) {
        int32_t hit = m_lookup(&md->fake, t);
        if (hit >= 0)
            return !g->m.n[hit].fake;
        const mnode *x = &g->m.n[t];
        if (x->base < 0 || x->layout != LY_STRIDED)
            return 0;
        t = x->base;
    }
    return 1;
}

/* Conversions the generator does not make: a view of a tensor set_
 * re-pointed (see NF_SET), a view that overreaches, or one with such a
 * grad; under one memo (2.x), one that recurses without end or whose grad
 * converts to a plain meta tensor. */
static int conv_blocked(const gen *g, const mmode *md, int32_t t)
{
    int32_t stack[16];
    if (md->one && one_recurses(g, md, t, stack, 0))
        return 1;
    for (int depth = 0; t >= 0 && depth < 8; depth++) {
        const mnode *x = &g->m.n[t];
        if (depth > 0 && conv_plain(g, md, t))
            return 1;
        if ((x->flags & NF_SET) && (x->base >= 0 || depth > 0))
            return 1;
        if (x->base >= 0 && (g->m.n[x->base].flags & NF_SET))
            return 1;
        if (view_overreaches(g, md, t))
            return 1;
        t = x->grad;
    }
    return 0;
}

/* Under a design with 1.13.1's _fix_weakref leak a fake memo hit (on t or,
 * recursively, on its grad) makes that fake immortal: every later lifecycle
 * would fail the end check by design. The generator makes no such hit there
 * (the leak itself is checked by scenarios and by --inject fix-weakref under
 * the default design, where stress finds it). */
static int fake_hit_leaks(const gen *g, const mmode *md, int32_t t)
{
    if (!fk_design_get((fk_design_id)g->m.c->design)->fix_weakref_leak)
        return 0;
    for (int depth = 0; t >= 0 && depth < 8; depth++) {
        if (m_lookup(&md->fake, t) >= 0)
            return 1;
        t = g->m.n[t].grad;
    }
    return 0;
}

/* f = m.fake(t, constant=true) / m.fake(t, dynamic=true), version 3 (2.3):
 * only conversions that succeed; a constant one only of a tensor that may
 * be one (strided, real, not meta, numel <= 1) and not in a propagate_real
 * mode; a dynamic one in a mode with a ShapeEnv. */
static int act_fake_v3(gen *g, const st_action *a, mmode *md, int32_t ti)
{
    int cst = (a->flags & F_CONST) != 0;
    int32_t se = g->m.n[md->node].se;
    const mnode *x = &g->m.n[ti];
    if (!g->m.dcache || (a->flags & F_DEVICE) || !is_t(a->b) ||
        (cst ? x->layout != LY_STRIDED || x->dev == DV_META || m_numel(x) > 1 || md->propreal
             : se < 0) ||
        m_fake_check(&g->m, md, ti, 0) != MERR_NONE)
        return 0;
    char mn[8], tn[8], expr[120];
    snprintf(expr, sizeof expr, "%s.fake(%s, %s=true)", vname(a->a, mn), vname(a->b, tn),
             cst ? "constant" : "dynamic");
    emit_stmt(g, 0, a->dst, expr);
    int32_t f = m_fake_v3(&g->m, md, ti, cst ? ti : -1, cst ? -1 : se);
    if (f < 0)
        return -1;
    bind(g, a->dst, f);
    return 1;
}

/* tensors a propagate_real conversion of t would clone (each real
 * non-view strided one on t's base and grad chains) that the model's
 * clone rule does not predict */
static int prop_blocked(const gen *g, const mmode *md, int32_t t, int depth)
{
    if (t < 0 || !md->propreal)
        return 0;
    if (depth > 8)
        return 1;
    const mnode *x = &g->m.n[t];
    if (x->base < 0 && x->layout == LY_STRIDED && !x->fake && x->dev != DV_META) {
        st_action c = {.op = A_NEWOP, .sub = NO_CLONE, .dst = -1, .a = -1, .b = -1};
        mplan p;
        if (m_newop_plan(&g->m, t, -1, &c, &p) != MERR_NONE)
            return 1;
    }
    return (x->base >= 0 && x->layout == LY_STRIDED && prop_blocked(g, md, x->base, depth + 1)) ||
           prop_blocked(g, md, x->grad, depth + 1);
}

static int act_fake(gen *g, const st_action *a)
{
    mmode *md = m_mode_of_var(&g->m, a->a);
    if (!md || !is_m(a->a) || (a->dst >= 0 && !is_f(a->dst)))
        return 0;
    if (a->flags & (F_CONST | F_DYN)) {
        int32_t t3 = vtensor(g, a->b);
        if (t3 < 0 || conv_blocked(g, md, t3) || prop_blocked(g, md, t3, 0))
            return 0;
        return act_fake_v3(g, a, md, t3);
    }
    int32_t ti = vtensor(g, a->b);
    if (ti < 0 || conv_blocked(g, md, ti) || fake_hit_leaks(g, md, ti) ||
        prop_blocked(g, md, ti, 0))
        return 0;
    int dev = (a->flags & F_DEVICE) != 0;
    int err = m_fake_check(&g->m, md, ti, dev);
    if (err == MERR_SKIP)
        return 0;
    char mn[8], tn[8], expr[120];
    if (dev)
        snprintf(expr, sizeof expr, "%s.fake(%s, device=\"%s\")", vname(a->a, mn),
                 vname(a->b, tn), m_dev_name[a->dev]);
    else
        snprintf(expr, sizeof expr, "%s.fake(%s)", vname(a->a, mn), vname(a->b, tn));
    emit_stmt(g, err, a->dst, expr);
    if (err) {
        /* what PyTorch did before raising: a miss of the meta converter */
        if (err == MERR_UNSUP && !(g->m.n[ti].flags & NF_QUANT))
            md->misses++;
        return 1;
    }
    uint8_t fdev = a->dev == DV_CUDA ? DV_CUDA : a->dev;
    int32_t f = m_fake(&g->m, md, ti, dev, fdev);
    if (f < 0)
        return -1;
    bind(g, a->dst, f);
    return 1;
}

/* f = c.fake(m, t): a stand-alone FakeTensorConverter called with mode m */
static int act_cfake(gen *g, const st_action *a)
{
    mmode *md = m_mode_of_var(&g->m, a->a);
    mmode *owner = m_mode_of_var(&g->m, a->n);
    if (!md || !owner || !is_c(a->a) || !is_m(a->n) || !(g->m.n[md->node].flags & NF_FC) ||
        (a->dst >= 0 && !is_f(a->dst)))
        return 0;
    int32_t ti = vtensor(g, a->b);
    if (ti < 0 || !is_t(a->b) || conv_blocked(g, md, ti) || fake_hit_leaks(g, md, ti) ||
        prop_blocked(g, owner, ti, 0))
        return 0;
    int err = m_fake_check(&g->m, md, ti, 0);
    if (err == MERR_SKIP)
        return 0;
    char cn[8], mn[8], tn[8], expr[120];
    snprintf(expr, sizeof expr, "%s.fake(%s, %s)", vname(a->a, cn), vname(a->n, mn),
             vname(a->b, tn));
    emit_stmt(g, err, a->dst, expr);
    if (err) {
        if (err == MERR_UNSUP && !(g->m.n[ti].flags & NF_QUANT))
            md->misses++;
        return 1;
    }
    int32_t f = m_convert(&g->m, md, ti, owner->node);
    if (f < 0)
        return -1;
    bind(g, a->dst, f);
    return 1;
}

static int act_meta(gen *g, const st_action *a)
{
    mmode *md = m_mode_of_var(&g->m, a->a);
    if (!md || (a->dst >= 0 && !is_t(a->dst)) || (g->m.n[md->node].flags & NF_FC))
        return 0;   /* a FakeTensorConverter has no meta() */
    int32_t ti = vtensor(g, a->b);
    if (ti < 0 || !is_t(a->b) || conv_blocked(g, md, ti) || prop_blocked(g, md, ti, 0))
        return 0;
    char mn[8], tn[8], expr[80];
    snprintf(expr, sizeof expr, "%s.meta(%s)", vname(a->a, mn), vname(a->b, tn));
    emit_stmt(g, 0, a->dst, expr);
    int32_t r = m_meta_convert(&g->m, md, ti);
    if (r == M_META_NONE)
        r = -1;                 /* none: the slot holds nothing the model tracks */
    else if (r < 0)
        return -1;
    bind(g, a->dst, r);
    return 1;
}

static int act_refake(gen *g, const st_action *a)
{
    mmode *md = m_mode_of_var(&g->m, a->a);
    if (!md || !is_m(a->a))
        return 0;
    int32_t ti = vtensor(g, a->b), fi = vtensor(g, a->dst);
    if (ti < 0 || fi < 0 || !is_t(a->b) || !is_f(a->dst) || m_lookup(&md->fake, ti) != fi ||
        fake_hit_leaks(g, md, ti) || (md->ids && conv_blocked(g, md, ti)))
        return 0;
    char mn[8], tn[8], fn[8];
    emit(g, "expect %s.fake(%s) == %s", vname(a->a, mn), vname(a->b, tn), vname(a->dst, fn));
    return 1;
}

/* Objects an attribute may be set on: tensors the script made (not memo
 * values: a finalizer dropping one would then free script objects mid-
 * statement), fake tensors, modes. */
static int attr_holder(gen *g, int slot)
{
    int32_t i = vnode(g, slot);
    if (i < 0 || !g->m.n[i].alive)
        return -1;
    const mnode *x = &g->m.n[i];
    if (is_t(slot))
        return x->kind == NK_TENSOR && !(x->flags & NF_MEMO) ? i : -1;
    if (is_f(slot))
        return x->kind == NK_TENSOR ? i : -1;
    if (is_m(slot))
        return x->kind == NK_MODE ? i : -1;
    return -1;
}

/* Under a design whose views hold their base from C++ (base_held_from_cpp)
 * an attribute or a grad whose value reaches a view may close a cycle
 * through the view's base that no collection frees, as in PyTorch (the base
 * and all it reaches are roots while the view lives): every later lifecycle
 * would fail the end check by design. The generator sets no such attribute
 * or grad there (the rule is checked by scenarios/designs/view_base_cpp.scn
 * and tests/record/check_make_fx.py). */
static int attr_may_leak(gen *g, int32_t v)
{
    return v >= 0 && fk_design_get((fk_design_id)g->m.c->design)->base_held_from_cpp &&
           m_reaches_view(&g->m, v);
}

static int act_attr(gen *g, const st_action *a)
{
    int32_t h = attr_holder(g, a->a);
    if (h < 0 || a->sub > 1)
        return 0;
    int32_t v = -1;
    if (a->b >= 0) {
        v = vnode(g, a->b);
        if (v < 0 || !g->m.n[v].alive || attr_may_leak(g, v))
            return 0;
    }
    char hn[8], vn[8];
    emit(g, "%s.%s = %s", vname(a->a, hn), a->sub ? "y" : "x", v >= 0 ? vname(a->b, vn) : "none");
    m_set_edge(&g->m, &g->m.n[h].attr[a->sub], v);
    return 1;
}

/* Can fake conversion handle g as a grad (chain included)? Grad chains
 * must also be acyclic: from_real_tensor recurses into grads before it
 * memoizes. */
static int grad_ok(gen *g, int32_t t, int32_t gr)
{
    for (int depth = 0; gr >= 0; depth++) {
        const mnode *x = &g->m.n[gr];
        /* not on meta either: a meta grad may already have a fake made with
         * another device (fake(t, device=...)), which then does not fit */
        if (gr == t || depth > 6 || x->fake || x->layout != LY_STRIDED ||
            (x->flags & (NF_QUANT | NF_NEG | NF_CONJ | NF_MEMO | NF_SET)) || x->dev == DV_LAZY ||
            x->dev == DV_META ||
            (x->base >= 0 && g->m.n[x->base].layout != LY_STRIDED))
            return 0;
        gr = x->grad;
    }
    return 1;
}

static int act_grad(gen *g, const st_action *a)
{
    int32_t t = vtensor(g, a->a);
    if (t < 0 || !is_t(a->a))
        return 0;
    const mnode *x = &g->m.n[t];
    if (x->layout != LY_STRIDED || (x->flags & (NF_MEMO | NF_SET)))
        return 0;   /* NF_SET: a memo hit keeps the pre-set_ sizes, a grad would not fit */
    int32_t v = -1;
    if (a->b >= 0) {
        v = vtensor(g, a->b);
        if (v < 0 || !is_t(a->b))
            return 0;
        const mnode *y = &g->m.n[v];
        x = &g->m.n[t];
        uint8_t tdt = x->dev == DV_CUDA1 ? DV_CUDA : x->dev, gdt = y->dev == DV_CUDA1 ? DV_CUDA
                                                                                       : y->dev;
        if (y->dtype != x->dtype || tdt != gdt || y->dev != x->dev || y->ndim != x->ndim ||
            memcmp(y->sizes, x->sizes, (size_t)x->ndim * sizeof *x->sizes) != 0 ||
            !grad_ok(g, t, v) || attr_may_leak(g, v))
            return 0;
    }
    char tn[8], vn[8];
    emit(g, "%s.grad = %s", vname(a->a, tn), v >= 0 ? vname(a->b, vn) : "none");
    m_set_edge(&g->m, &g->m.n[t].grad, v);
    return 1;
}

/* ---- version 2: set_, view(dtype), storages in variables ---- */

/* Is any live node's base, grad or meta tensor x? (set_ would change what a
 * view of x, a tensor with grad x, or a fake wrapping x assumes.) */
static int referenced_as_base_or_grad(const gen *g, int32_t x)
{
    for (uint32_t i = 0; i < g->m.nn; i++) {
        const mnode *y = &g->m.n[i];
        if (y->alive && y->kind == NK_TENSOR && (y->base == x || y->grad == x || y->meta == x))
            return 1;
    }
    return 0;
}

/* A real strided tensor set_ can use without changing grad state or the
 * meaning of views (modelled: storage edge and geometry only). */
static int set_ok(const gen *g, int32_t i)
{
    const mnode *x = &g->m.n[i];
    return x->layout == LY_STRIDED && !x->fake && x->base < 0 && x->grad < 0 &&
           !(x->flags & (NF_QUANT | NF_NEG | NF_CONJ | NF_RG | NF_MEMO));
}

static int act_set(gen *g, const st_action *a)
{
    int32_t t = vtensor(g, a->a), u = vtensor(g, a->b);
    if (t < 0 || u < 0 || t == u || g->in_with || !is_t(a->a) || !is_t(a->b))
        return 0;
    const mnode *x = &g->m.n[t], *y = &g->m.n[u];
    if (!set_ok(g, t) || !set_ok(g, u) || x->dtype != y->dtype || x->dev != y->dev ||
        referenced_as_base_or_grad(g, t))
        return 0;
    char tn[8], un[8];
    emit(g, "%s.set_(%s)", vname(a->a, tn), vname(a->b, un));
    m_set_(&g->m, t, u);
    g->m.n[t].flags |= NF_SET;
    return 1;
}

/* dtypes of one element size that view(dtype) reinterprets in place */
static int same_size_partner(uint8_t d)
{
    switch (d) {
    case D_F32: return D_I32;
    case D_I32: return D_F32;
    case D_F64: return D_I64;
    case D_I64: return D_F64;
    case D_F16: return D_BF16;
    case D_BF16: return D_F16;
    case D_I8: return D_U8;
    case D_U8: return D_I8;
    default: return -1;
    }
}

static int act_dtview(gen *g, const st_action *a)
{
    int32_t t = vtensor(g, a->a);
    if (t < 0 || a->dst < 0 || !is_t(a->a) || !is_t(a->dst) || g->in_with)
        return 0;
    const mnode *x = &g->m.n[t];
    int dt = same_size_partner(x->dtype);
    if (dt < 0 || x->layout != LY_STRIDED || (x->flags & (NF_QUANT | NF_NEG | NF_CONJ)))
        return 0;
    char tn[8], dn[8];
    emit(g, "%s = %s.view(%s)", vname(a->dst, dn), vname(a->a, tn), m_dtype_name[dt]);
    int32_t r = m_view_dtype(&g->m, t, (uint8_t)dt);
    if (r < 0)
        return -1;
    bind(g, a->dst, r);
    return 1;
}

/* pytorch-2.14: f.storage() (untyped_storage(), which a nested mode may
 * write through) clears the fake's constant, constant_scalar with it
 * (pytorch#177496); the storage is the meta tensor's, dropped at once */
static int fake_storage(gen *g, const st_action *a, int32_t f)
{
    const mnode *x = &g->m.n[f];
    if (!g->m.cscalar || x->layout != LY_STRIDED || x->meta < 0 ||
        g->m.n[x->meta].storage < 0)
        return 0;
    char fn[8];
    emit(g, "%s.storage()", vname(a->a, fn));
    m_clear_constant(&g->m, f);
    return 1;
}

static int act_storage(gen *g, const st_action *a)
{
    int32_t t = vtensor(g, a->a);
    if (t >= 0 && is_f(a->a))
        return fake_storage(g, a, t);
    if (t < 0 || a->dst < 0 || !is_t(a->a) || !is_t(a->dst))
        return 0;
    const mnode *x = &g->m.n[t];
    if (x->layout != LY_STRIDED || x->storage < 0)
        return 0;
    char tn[8], dn[8];
    emit(g, "%s = %s.storage()", vname(a->dst, dn), vname(a->a, tn));
    int32_t st = x->storage;
    m_ref(&g->m, st);
    bind(g, a->dst, st);
    return 1;
}

static int act_del(gen *g, const st_action *a)
{
    int32_t x = vnode(g, a->a);
    if (x < 0)
        return 0;
    int two = a->b >= 0 && a->b != a->a && vnode(g, a->b) >= 0;
    char n1[8], n2[8];
    if (two)
        emit(g, "del %s, %s", vname(a->a, n1), vname(a->b, n2));
    else
        emit(g, "del %s", vname(a->a, n1));
    bind(g, a->a, -1);
    if (two)
        bind(g, a->b, -1);
    return 1;
}

static int act_weak(gen *g, const st_action *a)
{
    int32_t x = vnode(g, a->a);
    if (x < 0 || !is_w(a->dst) || !g->m.n[x].alive)
        return 0;
    char wn[8], xn[8];
    emit(g, "%s = weakref(%s)", vname(a->dst, wn), vname(a->a, xn));
    int32_t w = m_new(&g->m, NK_WEAK);
    if (w < 0)
        return -1;
    g->m.n[w].target = x;
    bind(g, a->dst, w);
    return 1;
}

static int act_sweep(gen *g, const st_action *a)
{
    mmode *md = m_mode_of_var(&g->m, a->a);
    if (!md)
        return 0;
    uint64_t freed = m_sweep(&g->m, md);
    char mn[8];
    emit(g, "expect %s.sweep() == %" PRIu64, vname(a->a, mn), freed);
    return 1;
}

static int act_with(gen *g, const st_action *a)
{
    if (a->op == A_END) {
        if (!g->in_with)
            return 0;
        g->in_with = 0;
        emit(g, "end");
        int32_t mode = g->m.with[--g->m.nwith];
        m_unref(&g->m, mode);
        return 1;
    }
    mmode *md = m_mode_of_var(&g->m, a->a);
    if (g->in_with || !md || !is_m(a->a))
        return 0;
    char mn[8];
    emit(g, "with %s", vname(a->a, mn));
    g->in_with = 1;
    int32_t mode = md->node;
    m_ref(&g->m, mode);
    g->m.with[g->m.nwith++] = mode;
    return 1;
}

/* version 3, a compile (designs.md "Additions, version 3"): c = tracer(m)
 * holds m; f = c.input(t) is m.fake(t) plus a graph argument holding the
 * fake (t only weakly: pytorch#100515), at most two per tracer here (its
 * attr[] edges); c.finish() drops them. Not modelled: 2.3's clears. */
/* Does the fake that converting t makes reach a view? t or a tensor on
 * its grad chain is a view (2.x: its fake is a view), or a memo hit on the
 * way reaches one. */
static int conv_reaches_view(gen *g, const mmode *md, int32_t t)
{
    for (int depth = 0; t >= 0; depth++) {
        int32_t hit = m_lookup(&md->fake, t);
        if (hit >= 0)
            return m_reaches_view(&g->m, hit);
        if (depth > 8 || g->m.n[t].base >= 0)
            return 1;
        t = g->m.n[t].grad;
    }
    return 0;
}

/* Under a design whose views hold their base from C++, an input whose fake
 * reaches a view closes a cycle no collection frees when the view's base
 * reaches the graph argument's holder: the tracer, when some object holds
 * it (an attribute), or the mode's ShapeEnv, which tracks the fake and
 * which the mode holds (every fake holds its mode). As attr_may_leak. */
static int input_may_leak(gen *g, const mmode *md, int32_t tr, int32_t t)
{
    if (!fk_design_get((fk_design_id)g->m.c->design)->base_held_from_cpp ||
        !conv_reaches_view(g, md, t))
        return 0;
    return g->m.n[md->node].se >= 0 || m_held(&g->m, tr);
}

static int tracer_input(gen *g, const st_action *a, int32_t tr)
{
    mnode *x = &g->m.n[tr];
    int k = x->attr[0] < 0 ? 0 : x->attr[1] < 0 ? 1 : -1;
    if (k < 0 || x->mode < 0 || (a->dst >= 0 && !is_f(a->dst)))
        return 0;
    mmode *md = &g->m.m[g->m.n[x->mode].mi];
    int32_t ti = vtensor(g, a->b);
    if (ti < 0 || !md->alive || conv_blocked(g, md, ti) || fake_hit_leaks(g, md, ti) ||
        prop_blocked(g, md, ti, 0) || input_may_leak(g, md, tr, ti) ||
        m_fake_check(&g->m, md, ti, 0) != MERR_NONE)
        return 0;
    char cn[8], tn[8], expr[64];
    snprintf(expr, sizeof expr, "%s.input(%s)", vname(a->a, cn), vname(a->b, tn));
    emit_stmt(g, 0, a->dst, expr);
    int32_t f = m_fake(&g->m, md, ti, 0, g->m.n[ti].dev);
    if (f < 0)
        return -1;
    m_set_edge(&g->m, &g->m.n[tr].attr[k], f);
    if (g->m.n[md->node].se >= 0)          /* version 3: se.tracked */
        m_track(&g->m, g->m.n[md->node].se, f);
    bind(g, a->dst, f);
    return 1;
}

static int act_tracer(gen *g, const st_action *a)
{
    char cn[8], mn[8];
    if (a->sub == 0) {                      /* c = tracer(m) */
        mmode *md = m_mode_of_var(&g->m, a->b);
        if (!md || !is_m(a->b) || !is_c(a->dst))
            return 0;
        char expr[32];
        snprintf(expr, sizeof expr, "tracer(%s)", vname(a->b, mn));
        emit_stmt(g, 0, a->dst, expr);
        int32_t tr = m_new(&g->m, NK_TRACER);
        if (tr < 0)
            return -1;
        m_set_edge(&g->m, &g->m.n[tr].mode, md->node);
        if (g->m.umemo)
            md->epoch++;                    /* a retrace (pytorch-2.14) */
        bind(g, a->dst, tr);
        return 1;
    }
    int32_t tr = vnode(g, a->a);
    if (tr < 0 || !is_c(a->a) || g->m.n[tr].kind != NK_TRACER)
        return 0;
    if (a->sub == 1)
        return tracer_input(g, a, tr);
    emit(g, "%s.finish()", vname(a->a, cn));
    m_set_edge(&g->m, &g->m.n[tr].attr[0], -1);
    m_set_edge(&g->m, &g->m.n[tr].attr[1], -1);
    if (g->m.n[tr].mode < 0 || !g->m.finish_clears)
        return 1;
    m_finish_clears(&g->m, &g->m.m[g->m.n[g->m.n[tr].mode].mi]);
    if (g->m.pcgc)
        m_gc(&g->m, 0);      /* Dynamo's gc.collect() after a compile (pytorch#184969) */
    /* what the clears freed, checked at once (a reproducer then needs no
     * statement after finish()) */
    m_end_statement(&g->m);
    emit(g, "expect bytes() == %" PRIu64, g->m.bytes);
    return 1;
}

/* pytorch-2.14: expect f.item() == N (fake_tensor.py@946abe14
 * UnbackedMemoDescriptor, local_scalar_dense): ShapeError unless one
 * element, then TypeError without a ShapeEnv */
static int act_item(gen *g, const st_action *a)
{
    int32_t f = vtensor(g, a->a);
    if (f < 0 || !g->m.umemo || !is_f(a->a))
        return 0;
    int32_t mode = g->m.n[f].mode;
    if (mode < 0 || !g->m.n[mode].alive || g->m.n[mode].kind != NK_MODE)
        return 0;
    int32_t se = g->m.n[mode].se;
    char fn[8], expr[24];
    snprintf(expr, sizeof expr, "%s.item()", vname(a->a, fn));
    if (m_numel(&g->m.n[f]) != 1)           /* at::native::item, before dispatch */
        emit(g, "expect raises(ShapeError, %s)", expr);
    else if (se < 0)
        emit(g, "expect raises(TypeError, %s)", expr);
    else
        emit(g, "expect %s == %d", expr, (int)m_item(&g->m, f, se));
    return 1;
}

static int act_infer(gen *g, const st_action *a)
{
    if (!g->m.umemo)
        return 0;
    emit(g, "inference_mode(%s)", a->sub ? "true" : "false");
    g->m.infer = a->sub != 0;
    return 1;
}

/* version 3 (2.3): c = shape_env() */
static int act_shape_env(gen *g, const st_action *a)
{
    if (!is_c(a->dst) || !g->m.dcache)
        return 0;
    emit_stmt(g, 0, a->dst, "shape_env()");
    int32_t se = m_new(&g->m, NK_SHAPE_ENV);
    if (se < 0)
        return -1;
    bind(g, a->dst, se);
    return 1;
}

/* pytorch#145253's shape: h = k.unsqueeze(0) (a view: h holds k as its
 * base); h.x = h (a self-cycle); del h; gc(): the collected cycle
 * referenced k, which survives. k's memo entries must stay.
 * sub 1 (base_cycle): k.x = k and del k too, k a base, not a view - where
 * views hold their base from C++ (base_held_from_cpp) k is a root while h
 * lives, so the gc() frees h and keeps k (and what it holds) for the next
 * collection; elsewhere it frees both. apply() checks bytes() and
 * unreachable() at once. */
static int act_cycle(gen *g, const st_action *a)
{
    int32_t k = vtensor(g, a->b);
    if (k < 0 || !is_t(a->a) || !is_t(a->b) || a->a == a->b)
        return 0;
    if (a->sub && (attr_holder(g, a->b) != k || g->m.n[k].base >= 0 || attr_may_leak(g, k)))
        return 0;
    st_action v = {.op = A_VIEW, .sub = VW_UNSQUEEZE, .a = a->b, .dst = a->a, .n = 1};
    mplan p;
    if (m_view_plan(&g->m, k, &v, &p) != MERR_NONE || act_view(g, &v) <= 0)
        return 0;
    m_end_statement(&g->m);
    int32_t h = vnode(g, a->a);
    char hn[8];
    vname(a->a, hn);
    emit(g, "%s.x = %s", hn, hn);
    m_set_edge(&g->m, &g->m.n[h].attr[0], h);
    m_end_statement(&g->m);
    char kn[8];
    vname(a->b, kn);
    if (a->sub) {
        emit(g, "%s.x = %s", kn, kn);
        m_set_edge(&g->m, &g->m.n[k].attr[0], k);
        m_end_statement(&g->m);
    }
    emit(g, "del %s", hn);
    bind(g, a->a, -1);
    m_end_statement(&g->m);
    if (a->sub) {
        emit(g, "del %s", kn);
        bind(g, a->b, -1);
        m_end_statement(&g->m);
    }
    return 1;                /* apply() ends it with gc() */
}

static void check_unreachable(gen *g);

static int apply(gen *g, const st_action *a)
{
    int r;
    switch (a->op) {
    case A_CTOR: r = act_ctor(g, a); break;
    case A_VIEW: r = act_view(g, a); break;
    case A_NEWOP: r = act_newop(g, a); break;
    case A_INPLACE: r = act_inplace(g, a); break;
    case A_SPARSE: r = act_sparse(g, a); break;
    case A_MODE: case A_MCONV: case A_FCONV: r = act_mode(g, a); break;
    case A_CFAKE: r = act_cfake(g, a); break;
    case A_FAKE: r = act_fake(g, a); break;
    case A_META: r = act_meta(g, a); break;
    case A_REFAKE: r = act_refake(g, a); break;
    case A_ATTR: r = act_attr(g, a); break;
    case A_GRAD: r = act_grad(g, a); break;
    case A_DEL: r = act_del(g, a); break;
    case A_WEAK: r = act_weak(g, a); break;
    case A_CYCLE: case A_GC:
        if (a->op == A_CYCLE && act_cycle(g, a) <= 0)
            return 0;
        if (a->op == A_GC && a->sub < 2 && g->m.umemo) {
            emit(g, "gc(%d)", a->sub);        /* generations 0..sub, no sweep */
            m_gc_gen(&g->m, a->sub, 0);
            return 1;
        }
        emit(g, "gc()");                    /* a cycle ends with it */
        m_gc(&g->m, 1);
        if (a->op == A_CYCLE && a->sub) {   /* what the base's view kept, at once */
            m_end_statement(&g->m);
            emit(g, "expect bytes() == %" PRIu64, g->m.bytes);
            check_unreachable(g);
        }
        return 1;
    case A_SWEEP: r = act_sweep(g, a); break;
    case A_WITH: case A_END: r = act_with(g, a); break;
    case A_SET: r = act_set(g, a); break;
    case A_DTVIEW: r = act_dtview(g, a); break;
    case A_STORAGE: r = act_storage(g, a); break;
    case A_TRACER: r = act_tracer(g, a); break;
    case A_SHAPE_ENV: r = act_shape_env(g, a); break;
    case A_ITEM: r = act_item(g, a); break;
    case A_INFER: r = act_infer(g, a); break;
    default: r = 0; break;
    }
    if (r < 0 || g->m.oom)
        g->failed = 1;
    if (r > 0)
        m_end_statement(&g->m);
    return r > 0;
}

/* ---- the checks the model predicts ---- */

static const char *const counter_name[] = {"memo_fake", "memo_meta", "memo_storage", "pending",
                                           "hits", "misses", "sweep_every", "check_count"};

static int64_t counter(const model *m, const mmode *md, int k)
{
    switch (k) {
    case 0: return md->fake.n;
    /* one memo (2.x): a mode's or converter's fakes are the MetaConverter's
     * entries; a stand-alone MetaConverter's are meta tensors */
    case 1: return md->one && !(m->n[md->node].flags & NF_MC) ? md->fake.n : md->meta.n;
    case 2: return md->stor.n;
    case 3: return md->pending.n;
    case 4: return md->hits;
    case 5: return md->misses;
    case 6: return md->freq;
    default: return md->count;
    }
}

static void check_counter(gen *g, int slot, int k)
{
    mmode *md = m_mode_of_var(&g->m, slot);
    if (!md || (k == 0 && is_c(slot)))
        return;
    char mn[8];
    emit(g, "expect %s.%s == %" PRId64, vname(slot, mn), counter_name[k], counter(&g->m, md, k));
}

static void check_weak(gen *g, int slot)
{
    int32_t w = vnode(g, slot);
    if (w < 0 || g->m.n[w].kind != NK_WEAK)
        return;
    char wn[8];
    emit(g, "expect %s(%s)", g->m.n[g->m.n[w].target].alive ? "alive" : "dead", vname(slot, wn));
}

static void check_unreachable(gen *g)
{
    int ok = 0;
    int64_t n = m_unreachable(&g->m, &ok);
    if (ok)
        emit(g, "expect unreachable() == %" PRId64, n);
}

static void check_query(gen *g, int slot, int which)
{
    int32_t t = vtensor(g, slot);
    if (t < 0)
        return;
    const mnode *x = &g->m.n[t];
    char tn[8];
    vname(slot, tn);
    switch (which) {
    case 0:
        emit(g, "expect %s.numel() == %" PRId64, tn, m_numel(x));
        break;
    case 1:
        emit(g, "expect %s.dim() == %d", tn, x->ndim);
        break;
    case 2:
        /* a fake made by conversion is not a view; a view of a fake is */
        emit(g, "expect %s.is_view() == %s", tn, x->base >= 0 ? "true" : "false");
        break;
    default:
        if (x->layout == LY_STRIDED && !(x->flags & NF_USTR))
            emit(g, "expect %s.storage_offset() == %" PRId64, tn, x->offset);
        else if (x->ndim > 0)
            emit(g, "expect %s.size(0) == %" PRId64, tn, x->sizes[0]);
        break;
    }
}

static void check_all(gen *g)
{
    g->checking = 1;
    for (int s = V_M; s < V_W; s++)
        for (int k = 0; k < 8; k++)
            check_counter(g, s, k);
    emit(g, "expect bytes() == %" PRIu64, g->m.bytes);
    emit(g, "expect live(\"mode\") == %u", g->m.live_modes);
    for (int s = V_W; s < V_W + NV_W; s++)
        check_weak(g, s);
    check_unreachable(g);
    if (g->c->expect_all > 1)
        for (int s = V_T; s < V_F + NV_F; s++)
            for (int k = 0; k < 4; k++)
                check_query(g, s, k);
    g->checking = 0;
}

static void check_random(gen *g)
{
    st_rng *r = g->rng;
    uint32_t k = st_rng_below(r, 100);
    if (k < 40) {
        int slot = V_M + (int)st_rng_below(r, NV_M + NV_C);
        check_counter(g, slot, (int)st_rng_below(r, 4));
        if (st_rng_below(r, 4) == 0)
            check_counter(g, slot, 4 + (int)st_rng_below(r, 4));
    } else if (k < 55) {
        emit(g, "expect bytes() == %" PRIu64, g->m.bytes);
    } else if (k < 62) {
        emit(g, "expect live(\"mode\") == %u", g->m.live_modes);
    } else if (k < 77) {
        check_weak(g, V_W + (int)st_rng_below(r, NV_W));
    } else if (k < 85) {
        check_unreachable(g);
    } else {
        check_query(g, (int)st_rng_below(r, NV_T + NV_F), (int)st_rng_below(r, 4));
    }
}

/* ---- drawing actions ---- */

static int pick(st_rng *r, int base, int n) { return base + (int)st_rng_below(r, (uint32_t)n); }

/* A bound slot in [base, base+n) whose node satisfies ok (NULL: any live). */
static int pick_from(gen *g, int base, int n, int start, int (*ok)(gen *, int))
{
    for (int i = 0; i < n; i++) {
        int s = base + (start + i) % n;
        int32_t x = vnode(g, s);
        if (x >= 0 && g->m.n[x].alive && (!ok || ok(g, s)))
            return s;
    }
    return -1;
}

static int pick_bound(gen *g, int base, int n, int (*ok)(gen *, int))
{
    return pick_from(g, base, n, (int)st_rng_below(g->rng, (uint32_t)n), ok);
}

/* As pick_bound (one draw), a slot that `pref` accepts first. */
static int pick_pref(gen *g, int base, int n, int (*pref)(gen *, int), int (*ok)(gen *, int))
{
    int start = (int)st_rng_below(g->rng, (uint32_t)n);
    int s = pick_from(g, base, n, start, pref);
    return s >= 0 ? s : pick_from(g, base, n, start, ok);
}

static int ok_tensor(gen *g, int s) { return vtensor(g, s) >= 0; }
static int ok_strided(gen *g, int s)
{
    int32_t t = vtensor(g, s);
    return t >= 0 && g->m.n[t].layout == LY_STRIDED;
}
static int ok_sparse(gen *g, int s)
{
    int32_t t = vtensor(g, s);
    return t >= 0 && g->m.n[t].layout != LY_STRIDED;
}
static int ok_meta(gen *g, int s)
{
    int32_t t = vtensor(g, s);
    return t >= 0 && !g->m.n[t].fake && g->m.n[t].dev == DV_META;
}
static int ok_mode(gen *g, int s) { return m_mode_of_var(&g->m, s) != NULL; }
static int ok_fconv(gen *g, int s)
{
    const mmode *md = m_mode_of_var(&g->m, s);
    return md && (g->m.n[md->node].flags & NF_FC);
}
static int ok_holder(gen *g, int s) { return attr_holder(g, s) >= 0; }

static uint8_t rand_dtype(st_rng *r)
{
    static const uint8_t dts[] = {D_F64, D_F16, D_BF16, D_C64, D_C128, D_I64, D_I32, D_I8,
                                  D_U8,  D_BOOL};
    return dts[st_rng_below(r, sizeof dts)];
}

static void rand_sizes(st_rng *r, st_action *a, int maxd)
{
    uint32_t k = st_rng_below(r, 100);
    int nd = k < 8 ? 0 : k < 40 ? 1 : k < 80 ? 2 : 3;
    if (nd > maxd)
        nd = maxd;
    a->n = (int8_t)nd;
    for (int i = 0; i < nd; i++)
        a->v[i] = (int16_t)(st_rng_below(r, 100) < 3 ? 0 : 1 + st_rng_below(r, 4));
}

static void draw_ctor(gen *g, st_action *a, int kind)
{
    st_rng *r = g->rng;
    a->op = A_CTOR;
    a->dst = (int8_t)(g->in_with ? pick(r, V_F, NV_F) : pick(r, V_T, NV_T));
    switch (kind) {
    case ST_W_STRIDED: {
        a->sub = C_STRIDED;
        int64_t x = 1 + st_rng_below(r, 3), y = 1 + st_rng_below(r, 3);
        a->n = a->n2 = 2;
        a->v[0] = (int16_t)x, a->v[1] = (int16_t)y;
        uint32_t s = st_rng_below(r, 3);
        a->v2[0] = (int16_t)(s == 0 ? y : s == 1 ? 1 : y + 1);
        a->v2[1] = (int16_t)(s == 1 ? x : 1);
        break;
    }
    case ST_W_SPARSE:
        a->sub = C_COO;
        rand_sizes(r, a, 3);
        if (a->n == 0)
            a->n = 1, a->v[0] = 2;
        a->v2[0] = (int16_t)st_rng_below(r, 5);
        if (st_rng_below(r, 3) == 0) {
            a->flags |= F_SD;
            a->v2[1] = (int16_t)(1 + st_rng_below(r, (uint32_t)a->n));
        }
        if (st_rng_below(r, 3) == 0)
            a->flags |= F_COAL;
        if (st_rng_below(r, 4) == 0) {
            a->flags |= F_DTYPE;
            a->dtype = rand_dtype(r);
        }
        break;
    case ST_W_CSR:
        a->sub = C_CSR;
        a->n = 2;
        a->v[0] = (int16_t)(1 + st_rng_below(r, 3));
        a->v[1] = (int16_t)(1 + st_rng_below(r, 3));
        a->v2[0] = (int16_t)st_rng_below(r, (uint32_t)(a->v[0] * a->v[1] + 1));
        break;
    case ST_W_QUANTIZED:
        a->sub = C_QUANT;
        rand_sizes(r, a, 2);
        break;
    default:
        a->sub = (uint8_t)st_rng_below(r, 4);
        rand_sizes(r, a, 3);
        if (st_rng_below(r, 10) < 4) {
            a->flags |= F_DTYPE;
            a->dtype = rand_dtype(r);
        }
        if (kind == ST_W_META_TENSOR) {
            a->flags |= F_DEVICE;
            a->dev = DV_META;
        } else if (st_rng_below(r, 10) < 2) {
            static const uint8_t devs[] = {DV_CUDA, DV_CUDA1, DV_LAZY, DV_CPU};
            a->flags |= F_DEVICE;
            a->dev = devs[st_rng_below(r, 4)];
        }
        if (st_rng_below(r, 100) < 15 &&
            (!(a->flags & F_DTYPE) || m_can_rg(a->dtype) || st_rng_below(r, 4) == 0))
            a->flags |= F_RG;
        break;
    }
}

/* Arguments for a view op on t (valid ones, or invalid with want_err). */
static void draw_view_args(gen *g, st_action *a, const mnode *t, int want_err)
{
    st_rng *r = g->rng;
    int nd = t->ndim;
    int64_t numel = m_numel(t);
    switch (a->sub) {
    case VW_VIEW: case VW_RESHAPE:
        if (want_err) {
            a->n = 1;
            a->v[0] = (int16_t)(numel + 1);
        } else if (numel > 1 && numel % 2 == 0 && st_rng_below(r, 2)) {
            a->n = 2;
            a->v[0] = 2;
            a->v[1] = (int16_t)(numel / 2);
        } else {
            a->n = 1;
            a->v[0] = (int16_t)numel;
        }
        break;
    case VW_TRANSPOSE:
        a->n = 2;
        a->v[0] = 0;
        a->v[1] = (int16_t)(want_err ? (nd ? nd : 1) : nd ? nd - 1 : 0);
        break;
    case VW_SLICE: case VW_NARROW: {
        a->n = 3;
        int d = nd ? (int)st_rng_below(r, (uint32_t)nd) : 0;
        int64_t size = nd ? t->sizes[d] : 0;
        int64_t s0 = (int64_t)st_rng_below(r, (uint32_t)size + 1);
        int64_t rest = size - s0;
        int64_t len = (int64_t)st_rng_below(r, (uint32_t)rest + 1);
        a->v[0] = (int16_t)d;
        a->v[1] = (int16_t)s0;
        a->v[2] = (int16_t)(a->sub == VW_NARROW ? len + (want_err ? rest + 1 : 0) : s0 + len);
        if (a->sub == VW_SLICE && st_rng_below(r, 3) == 0) {
            a->flags |= F_STEP;
            a->v[3] = (int16_t)(want_err ? 0 : 2);
        }
        break;
    }
    case VW_SELECT: {
        a->n = 2;
        int d = nd ? (int)st_rng_below(r, (uint32_t)nd) : 0;
        int64_t size = nd ? t->sizes[d] : 1;
        a->v[0] = (int16_t)d;
        a->v[1] = (int16_t)(want_err || size == 0 ? size : (int64_t)st_rng_below(r, (uint32_t)size));
        break;
    }
    case VW_UNSQUEEZE:
        a->n = 1;
        a->v[0] = (int16_t)(want_err ? nd + 2 : (int)st_rng_below(r, (uint32_t)nd + 1));
        break;
    case VW_EXPAND:
        a->n = (int8_t)nd;
        for (int i = 0; i < nd; i++)
            a->v[i] = (int16_t)(t->sizes[i] == 1 ? 1 + st_rng_below(r, 3)
                                : want_err ? t->sizes[i] + 1 : t->sizes[i]);
        break;
    case VW_AS_STRIDED: {
        int64_t elems = t->storage >= 0
                            ? (int64_t)(g->m.n[t->storage].nbytes / m_dtype_size[t->dtype])
                            : 1;
        a->n = a->n2 = 1;
        a->v[0] = (int16_t)(elems > 0 ? 1 + st_rng_below(r, (uint32_t)elems) : 0);
        a->v2[0] = 1;
        a->v[5] = (int16_t)(want_err ? elems : 0);
        break;
    }
    default:
        break;
    }
}

static int draw_view(gen *g, st_action *a, int fake, int want_err)
{
    st_rng *r = g->rng;
    int src = fake ? pick_bound(g, V_F, NV_F, ok_tensor) : pick_bound(g, V_T, NV_T, ok_tensor);
    if (src < 0)
        return 0;
    const mnode *t = &g->m.n[op_node(g, vtensor(g, src))];
    a->op = A_VIEW;
    a->a = (int8_t)src;
    a->dst = (int8_t)(fake ? pick(r, V_F, NV_F) : pick(r, V_T, NV_T));
    a->sub = (uint8_t)st_rng_below(r, VW_COUNT);
    if (want_err) {
        static const uint8_t bad[] = {VW_VIEW, VW_TRANSPOSE, VW_SELECT, VW_NARROW, VW_REAL,
                                      VW_T, VW_DIAGONAL, VW_UNSQUEEZE, VW_EXPAND,
                                      VW_AS_STRIDED};
        a->sub = bad[st_rng_below(r, sizeof bad)];
    }
    draw_view_args(g, a, t, want_err);
    return 1;
}

static int same_shape_slot(gen *g, int src, int family_base, int n)
{
    const mnode *t = &g->m.n[vtensor(g, src)];
    int start = (int)st_rng_below(g->rng, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        int s = family_base + (start + i) % n;
        int32_t b = vtensor(g, s);
        if (b < 0)
            continue;
        const mnode *x = &g->m.n[b];
        if (x->dtype == t->dtype && x->ndim == t->ndim && x->dev == t->dev &&
            memcmp(x->sizes, t->sizes, (size_t)t->ndim * sizeof *t->sizes) == 0)
            return s;
    }
    return src;
}

static int draw_newop(gen *g, st_action *a, int fake, int want_err)
{
    st_rng *r = g->rng;
    int src = fake ? pick_bound(g, V_F, NV_F, ok_tensor) : pick_bound(g, V_T, NV_T, ok_tensor);
    if (src < 0)
        return 0;
    a->op = A_NEWOP;
    a->a = (int8_t)src;
    a->dst = (int8_t)(fake ? pick(r, V_F, NV_F) : pick(r, V_T, NV_T));
    a->sub = (uint8_t)st_rng_below(r, NO_COUNT);
    if (want_err) {
        static const uint8_t bad[] = {NO_ADD, NO_MATMUL, NO_SUM_DIM, NO_TO_DEVICE};
        a->sub = bad[st_rng_below(r, sizeof bad)];
    }
    int base = fake ? V_F : V_T, n = fake ? NV_F : NV_T;
    switch (a->sub) {
    case NO_TO_DTYPE:
        a->dtype = st_rng_below(r, 2) ? D_F32 : rand_dtype(r);
        break;
    case NO_TO_DEVICE: {
        static const uint8_t devs[] = {DV_CPU, DV_CUDA, DV_META, DV_CUDA1};
        a->dev = devs[st_rng_below(r, 4)];
        break;
    }
    case NO_ADD:
        a->b = (int8_t)(want_err ? (fake ? pick_bound(g, V_T, NV_T, ok_tensor)
                                         : pick_bound(g, V_F, NV_F, ok_tensor))
                                 : same_shape_slot(g, src, base, n));
        if (a->b < 0)
            a->b = (int8_t)src;
        break;
    case NO_MATMUL:
        a->b = (int8_t)pick_bound(g, base, n, ok_tensor);
        if (a->b < 0)
            a->b = (int8_t)src;
        break;
    case NO_MUL:
        a->v[0] = (int16_t)(1 + st_rng_below(r, 3));
        break;
    case NO_SUM_DIM:
        a->v[0] = (int16_t)(want_err ? 5 : (int)st_rng_below(r, 3));
        break;
    default:
        break;
    }
    return 1;
}

static int draw_inplace(gen *g, st_action *a, int fake)
{
    st_rng *r = g->rng;
    int src = fake ? pick_bound(g, V_F, NV_F, ok_strided) : pick_bound(g, V_T, NV_T, ok_strided);
    if (src < 0)
        return 0;
    a->op = A_INPLACE;
    a->a = (int8_t)src;
    a->sub = (uint8_t)st_rng_below(r, 3);
    a->v[0] = (int16_t)(1 + st_rng_below(r, 2));
    return 1;
}

static int draw_sparse_op(gen *g, st_action *a, int want_err)
{
    st_rng *r = g->rng;
    int src = want_err || st_rng_below(r, 4) == 0 ? pick_bound(g, V_T, NV_T, ok_tensor)
                                                  : pick_bound(g, V_T, NV_T, ok_sparse);
    if (src < 0)
        src = pick_bound(g, V_T, NV_T, ok_tensor);
    if (src < 0)
        return 0;
    a->op = A_SPARSE;
    a->a = (int8_t)src;
    a->dst = (int8_t)pick(r, V_T, NV_T);
    a->sub = (uint8_t)st_rng_below(r, 4);
    return 1;
}

static int draw_fake(gen *g, st_action *a, int device, int want_err)
{
    st_rng *r = g->rng;
    int ms = pick_bound(g, V_M, NV_M, ok_mode);
    if (ms < 0)
        return 0;
    int src;
    if (device)
        src = want_err ? pick_bound(g, V_T, NV_T + NV_F, ok_tensor)
                       : pick_bound(g, V_T, NV_T, ok_meta);
    else if (want_err && st_rng_below(r, 3) == 0)
        src = pick_bound(g, V_F, NV_F, ok_tensor);
    else
        src = pick_bound(g, V_T, NV_T, ok_tensor);
    if (src < 0)
        return 0;
    a->op = A_FAKE;
    a->a = (int8_t)ms;
    a->b = (int8_t)src;
    a->dst = (int8_t)(st_rng_below(r, 10) == 0 ? -1 : pick(r, V_F, NV_F));
    if (device) {
        static const uint8_t devs[] = {DV_CUDA, DV_CUDA1, DV_CPU};
        a->flags |= F_DEVICE;
        a->dev = devs[st_rng_below(r, 3)];
    }
    return 1;
}

static int ok_shape_env(gen *g, int s)
{
    int32_t x = vnode(g, s);
    return x >= 0 && g->m.n[x].kind == NK_SHAPE_ENV;
}

static int ok_const_src(gen *g, int s)
{
    int32_t t = vtensor(g, s);
    return t >= 0 && g->m.n[t].layout == LY_STRIDED && m_numel(&g->m.n[t]) <= 1;
}

/* one on a device clear_non_cpu_constants() clears (pytorch#184445) */
static int ok_const_gpu(gen *g, int s)
{
    return ok_const_src(g, s) && g->m.n[vtensor(g, s)].dev != DV_CPU;
}

/* a fake whose item() answers a symbol (2.14) */
static int ok_item(gen *g, int s)
{
    int32_t f = vtensor(g, s);
    if (f < 0 || m_numel(&g->m.n[f]) != 1)
        return 0;
    int32_t mode = g->m.n[f].mode;
    return mode >= 0 && g->m.n[mode].alive && g->m.n[mode].kind == NK_MODE &&
           g->m.n[mode].se >= 0;
}

/* ... whose memo a retrace made stale (pytorch#154647: answered anew) */
static int ok_item_stale(gen *g, int s)
{
    return ok_item(g, s) && m_item_stale(&g->m, vtensor(g, s));
}

/* a 0-d CPU tensor: the constant_scalar of its constant fakes (2.14) */
static int ok_const_scalar(gen *g, int s)
{
    return ok_const_src(g, s) && g->m.n[vtensor(g, s)].ndim == 0 &&
           g->m.n[vtensor(g, s)].dev == DV_CPU;
}

static int ok_mode_se(gen *g, int s)
{
    return ok_mode(g, s) && g->m.n[vnode(g, s)].se >= 0;
}

/* version 3 (2.3): a ShapeEnv, a mode on one or with propagate_real, a
 * constant or a dynamic conversion */
static int draw_v3(gen *g, st_action *a, int kind)
{
    st_rng *r = g->rng;
    if (kind == ST_W_SHAPE_ENV) {
        if (st_rng_below(r, 3) == 0) {
            a->op = A_SHAPE_ENV;
            a->dst = (int8_t)pick(r, V_C, NV_C);
            return 1;
        }
        a->op = A_MODE;
        a->dst = (int8_t)pick(r, V_M, NV_M);
        a->b = (int8_t)pick_bound(g, V_C, NV_C, ok_shape_env);
        a->flags = (uint8_t)((a->b >= 0 ? F_SE : 0) | (st_rng_below(r, 2) ? F_PROP : 0));
        return a->flags != 0;
    }
    if (!draw_fake(g, a, 0, 0))
        return 0;
    int src = kind != ST_W_CONSTANT ? a->b
            : g->m.cscalar && st_rng_below(r, 2) ? pick_bound(g, V_T, NV_T, ok_const_scalar)
            : pick_bound(g, V_T, NV_T, ok_const_gpu);
    if (kind == ST_W_CONSTANT && src < 0)
        src = pick_bound(g, V_T, NV_T, ok_const_src);
    if (src < 0)
        return 0;
    a->b = (int8_t)src;
    if (kind == ST_W_DYNAMIC && (a->a = (int8_t)pick_bound(g, V_M, NV_M, ok_mode_se)) < 0)
        return 0;
    a->flags |= kind == ST_W_CONSTANT ? F_CONST : F_DYN;
    return 1;
}

static int draw_error(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    switch (st_rng_below(r, 8)) {
    case 0: case 1: return draw_view(g, a, 0, 1);
    case 2: return draw_newop(g, a, 0, 1);
    case 3: return draw_newop(g, a, 1, 1);
    case 4: return draw_fake(g, a, 0, 1);
    case 5: return draw_fake(g, a, 1, 1);
    case 6: return draw_sparse_op(g, a, 1);
    default: {
        /* requires_grad on a non-floating dtype; coalesced with too many nnz */
        draw_ctor(g, a, st_rng_below(r, 2) ? ST_W_TENSOR : ST_W_SPARSE);
        if (a->sub == C_COO) {
            a->flags |= F_COAL;
            a->v2[0] = (int16_t)(m_prod((int64_t[]){a->v[0], a->v[1], a->v[2]}, a->n) + 1);
        } else {
            a->flags |= F_DTYPE | F_RG;
            a->dtype = D_I64;
        }
        return 1;
    }
    }
}

static int is_memo_key(const gen *g, int32_t t)
{
    for (uint32_t mi = 0; mi < g->m.nm; mi++)
        if (g->m.m[mi].alive && m_lookup(&g->m.m[mi].fake, t) >= 0)
            return 1;
    return 0;
}

/* The tensor the cycle references: a memo key of a live mode, not a view,
 * if one is bound; the holder's slot, another. */
static int draw_cycle(gen *g, st_action *a)
{
    int k = -1, best = 0;
    uint32_t off = st_rng_below(g->rng, NV_T);
    for (int j = 0; j < NV_T; j++) {
        int s = V_T + (int)((off + (uint32_t)j) % NV_T);
        int32_t t = vtensor(g, s);
        int score = t < 0 ? 0 : 1 + 2 * is_memo_key(g, t) + (g->m.n[t].base < 0);
        if (score > best)
            k = s, best = score;
    }
    if (k < 0)
        return 0;
    a->op = A_CYCLE;
    a->b = (int8_t)k;
    a->a = (int8_t)(V_T + (k - V_T + 1 + (int)st_rng_below(g->rng, NV_T - 1)) % NV_T);
    return 1;
}

/* ---- one action kind each (draw picks by kind) ---- */

/* A mode or a converter (weak, or swept every few conversions). */
static int draw_mode(gen *g, st_action *a, int kind)
{
    st_rng *r = g->rng;
    int mc = kind == ST_W_META_CONVERTER, fc = kind == ST_W_FAKE_CONVERTER;
    a->op = mc ? A_MCONV : fc ? A_FCONV : A_MODE;
    a->flags = kind == ST_W_WEAK_MODE ? F_WREF : 0;
    a->dst = (int8_t)(mc || fc ? pick(r, V_C, NV_C) : pick(r, V_M, NV_M));
    uint32_t p = st_rng_below(r, 10);
    a->sub = (uint8_t)(p < 4 ? 0 : p < 6 ? 1 : 2);
    if (st_rng_below(r, 2)) {
        static const int16_t every[] = {1, 2, 3, 4, 8, 16};
        a->flags |= F_EVERY;
        a->v[0] = every[st_rng_below(r, 6)];
    }
    return 1;
}

static int draw_meta(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int ms = pick_bound(g, V_M, NV_M + NV_C, ok_mode);
    int src = pick_bound(g, V_T, NV_T, ok_tensor);
    if (ms < 0 || src < 0)
        return 0;
    a->op = A_META;
    a->a = (int8_t)ms;
    a->b = (int8_t)src;
    a->dst = (int8_t)(st_rng_below(r, 4) == 0 ? -1 : pick(r, V_T, NV_T));
    return 1;
}

static int draw_fake_op(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    uint32_t k = st_rng_below(r, 10);
    if (k < 5)
        return draw_view(g, a, 1, 0);
    if (k < 9)
        return draw_newop(g, a, 1, 0);
    return draw_inplace(g, a, 1);
}

static int draw_refake(gen *g, st_action *a)
{
    for (int ms = V_M; ms < V_M + NV_M; ms++) {
        mmode *md = m_mode_of_var(&g->m, ms);
        if (!md)
            continue;
        for (int ts = V_T; ts < V_T + NV_T; ts++) {
            int32_t t = vtensor(g, ts);
            int32_t f = t >= 0 ? m_lookup(&md->fake, t) : -1;
            for (int fs = V_F; f >= 0 && fs < V_F + NV_F; fs++)
                if (g->m.var[fs] == f) {
                    a->op = A_REFAKE;
                    a->a = (int8_t)ms;
                    a->b = (int8_t)ts;
                    a->dst = (int8_t)fs;
                    return 1;
                }
        }
    }
    return 0;
}

static int draw_attr(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int h = pick_bound(g, V_T, NV_T + NV_F + NV_M, ok_holder);
    if (h < 0)
        return 0;
    a->op = A_ATTR;
    a->a = (int8_t)h;
    a->sub = (uint8_t)st_rng_below(r, 2);
    a->b = (int8_t)(st_rng_below(r, 5) == 0 ? -1 : pick_bound(g, 0, NVARS, NULL));
    return 1;
}

static int draw_grad(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int t = pick_bound(g, V_T, NV_T, ok_strided);
    if (t < 0)
        return 0;
    a->op = A_GRAD;
    a->a = (int8_t)t;
    a->b = (int8_t)(st_rng_below(r, 4) == 0 ? -1 : same_shape_slot(g, t, V_T, NV_T));
    if (a->b == t)
        a->b = -1;
    return 1;
}

static int draw_del(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int x = pick_bound(g, 0, NVARS, NULL);
    if (x < 0)
        return 0;
    a->op = A_DEL;
    a->a = (int8_t)x;
    a->b = (int8_t)(st_rng_below(r, 4) == 0 ? pick_bound(g, 0, NVARS, NULL) : -1);
    return 1;
}

/* pytorch-2.14: a mode one of whose fakes holds an item() memo (a
 * retrace of it makes the memo stale) */
static int ok_mode_items(gen *g, int s)
{
    mmode *md = m_mode_of_var(&g->m, s);
    for (uint32_t i = 0; md && g->m.umemo && i < g->m.nn; i++) {
        const mnode *x = &g->m.n[i];
        if (x->alive && x->fake && x->mode == md->node && x->um >= 0)
            return 1;
    }
    return 0;
}

static int draw_tracer(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    a->op = A_TRACER;
    a->sub = (uint8_t)st_rng_below(r, 3);
    a->a = (int8_t)pick(r, V_C, NV_C);
    a->dst = a->sub == 0 ? a->a : (int8_t)(st_rng_below(r, 4) == 0 ? -1 : pick(r, V_F, NV_F));
    a->b = (int8_t)(a->sub == 0 ? pick_pref(g, V_M, NV_M, ok_mode_items, ok_mode)
                                : pick_bound(g, V_T, NV_T, ok_tensor));
    return a->b >= 0 || a->sub == 2;
}

static int draw_weakref(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int x = pick_bound(g, 0, V_W, NULL);
    if (x < 0)
        return 0;
    a->op = A_WEAK;
    a->a = (int8_t)x;
    a->dst = (int8_t)pick(r, V_W, NV_W);
    return 1;
}

static int draw_item(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    /* mostly a fake that answers (one element, a mode with a ShapeEnv),
     * one whose memo a retrace made stale first */
    int f = st_rng_below(r, 4) ? pick_pref(g, V_F, NV_F, ok_item_stale, ok_item) : -1;
    if (f < 0)
        f = pick_bound(g, V_F, NV_F, ok_tensor);
    if (f < 0)
        return 0;
    a->op = A_ITEM;
    a->a = (int8_t)f;
    return 1;
}

static int draw_sweep(gen *g, st_action *a)
{
    int ms = pick_bound(g, V_M, NV_M + NV_C, ok_mode);
    if (ms < 0)
        return 0;
    a->op = A_SWEEP;
    a->a = (int8_t)ms;
    return 1;
}

static int draw_with(gen *g, st_action *a)
{
    int ms = pick_bound(g, V_M, NV_M, ok_mode);
    if (ms < 0 || g->in_with)
        return 0;
    a->op = A_WITH;
    a->a = (int8_t)ms;
    return 1;
}

static int draw_convert(gen *g, st_action *a)
{
    st_rng *r = g->rng;
    int c = pick_bound(g, V_C, NV_C, ok_fconv), m = pick_bound(g, V_M, NV_M, ok_mode);
    int t = pick_bound(g, V_T, NV_T, ok_tensor);
    if (c < 0 || m < 0 || t < 0)
        return 0;
    a->op = A_CFAKE;
    a->a = (int8_t)c;
    a->b = (int8_t)t;
    a->n = (int8_t)m;
    a->dst = (int8_t)(st_rng_below(r, 4) == 0 ? -1 : pick(r, V_F, NV_F));
    return 1;
}

static int draw_set(gen *g, st_action *a)
{
    int t = pick_bound(g, V_T, NV_T, ok_strided), u = -1;
    if (t < 0 || !set_ok(g, vtensor(g, t)))
        return 0;
    const mnode *x = &g->m.n[vtensor(g, t)];
    for (int k = 0; k < NV_T && u < 0; k++) {
        int s2 = V_T + (t - V_T + 1 + k) % NV_T;
        int32_t y = vtensor(g, s2);
        if (s2 != t && y >= 0 && set_ok(g, y) && g->m.n[y].dtype == x->dtype &&
            g->m.n[y].dev == x->dev)
            u = s2;
    }
    if (u < 0)
        return 0;
    a->op = A_SET;
    a->a = (int8_t)t;
    a->b = (int8_t)u;
    return 1;
}

static int draw_storage(gen *g, st_action *a, int kind)
{
    st_rng *r = g->rng;
    if (kind == ST_W_STORAGE && g->m.cscalar && st_rng_below(r, 2)) {
        /* pytorch-2.14: f.storage() on a fake clears its constant */
        int f = pick_bound(g, V_F, NV_F, ok_tensor);
        if (f < 0)
            return 0;
        a->op = A_STORAGE;
        a->a = (int8_t)f;
        return 1;
    }
    int t = pick_bound(g, V_T, NV_T, ok_strided);
    if (t < 0 || (kind == ST_W_DTYPE_VIEW &&
                  same_size_partner(g->m.n[vtensor(g, t)].dtype) < 0))
        return 0;
    a->op = kind == ST_W_DTYPE_VIEW ? A_DTVIEW : A_STORAGE;
    a->a = (int8_t)t;
    a->dst = (int8_t)pick(r, V_T, NV_T);
    return 1;
}

static int draw(gen *g, st_action *a, int kind)
{
    st_rng *r = g->rng;
    memset(a, 0, sizeof *a);
    a->dst = a->a = a->b = -1;
    switch (kind) {
    case ST_W_TENSOR: case ST_W_META_TENSOR: case ST_W_STRIDED: case ST_W_SPARSE:
    case ST_W_CSR: case ST_W_QUANTIZED:
        draw_ctor(g, a, kind);
        return 1;
    case ST_W_VIEW: return draw_view(g, a, 0, 0);
    case ST_W_NEWOP: return draw_newop(g, a, 0, 0);
    case ST_W_INPLACE: return draw_inplace(g, a, 0);
    case ST_W_SPARSE_OP: return draw_sparse_op(g, a, 0);
    case ST_W_MODE: case ST_W_META_CONVERTER: case ST_W_FAKE_CONVERTER: case ST_W_WEAK_MODE:
        return draw_mode(g, a, kind);
    case ST_W_FAKE: return draw_fake(g, a, 0, 0);
    case ST_W_FAKE_DEVICE: return draw_fake(g, a, 1, 0);
    case ST_W_META: return draw_meta(g, a);
    case ST_W_FAKE_OP: return draw_fake_op(g, a);
    case ST_W_REFAKE: return draw_refake(g, a);
    case ST_W_ATTR: return draw_attr(g, a);
    case ST_W_CYCLE: return draw_cycle(g, a);
    case ST_W_BASE_CYCLE:
        a->sub = 1;
        return draw_cycle(g, a);
    case ST_W_GRAD: return draw_grad(g, a);
    case ST_W_DEL: return draw_del(g, a);
    case ST_W_TRACER: return draw_tracer(g, a);
    case ST_W_WEAKREF: return draw_weakref(g, a);
    case ST_W_GC:
        a->op = A_GC;
        /* pytorch-2.14: gc(0), gc(1) or gc() (2) */
        a->sub = (uint8_t)(g->m.umemo ? st_rng_below(r, 3) : 2);
        return 1;
    case ST_W_ITEM: return draw_item(g, a);
    case ST_W_INFER:
        a->op = A_INFER;
        a->sub = (uint8_t)!g->m.infer;
        return 1;
    case ST_W_SWEEP: return draw_sweep(g, a);
    case ST_W_WITH: return draw_with(g, a);
    case ST_W_ERROR: return draw_error(g, a);
    case ST_W_SHAPE_ENV: case ST_W_CONSTANT: case ST_W_DYNAMIC: return draw_v3(g, a, kind);
    case ST_W_CONVERT: return draw_convert(g, a);
    case ST_W_SET: return draw_set(g, a);
    case ST_W_DTYPE_VIEW: case ST_W_STORAGE: return draw_storage(g, a, kind);
    default: return 0;
    }
}

/* An action kind's weight in this lifecycle: the pytorch-2.3-only kinds
 * weigh nothing under the other designs, the pytorch-2.14-only ones
 * nothing but there (the lifecycles of the others stay as they were). */
static uint32_t weight_of(const gen *g, int i)
{
    int v3 = i == ST_W_SHAPE_ENV || i == ST_W_CONSTANT || i == ST_W_DYNAMIC;
    if (v3 && !g->m.dcache)
        return 0;
    if ((i == ST_W_ITEM || i == ST_W_INFER) && !g->m.umemo)
        return 0;
    /* under 2.3 a compile's finish() clears much: more of them */
    return g->c->weights.w[i] * (i == ST_W_TRACER && g->m.dcache ? 2u : 1u);
}

static int pick_kind(gen *g, uint64_t total)
{
    uint64_t x = (st_rng_next(g->rng) >> 11) % total;
    for (int i = 0; i < ST_W_EXPECT; i++) {
        if (x < weight_of(g, i))
            return i;
        x -= weight_of(g, i);
    }
    return ST_W_TENSOR;
}

static void gen_header(gen *g, const char *what)
{
    st_text_printf(g->text, "# %s\n", what);
    if (g->lines)
        note_line(g, UINT32_MAX);   /* the header line belongs to no action */
}

int st_generate(const st_config *c, uint64_t seed, st_script *out, st_text *text,
                uint32_t **lines_out, size_t *nlines)
{
    gen g;
    memset(&g, 0, sizeof g);
    st_rng rng;
    st_rng_seed(&rng, seed);
    g.c = c;
    g.text = text;
    g.rng = &rng;
    if (lines_out) {
        g.lines_cap = 1024;
        g.lines = al_malloc(g.lines_cap * sizeof *g.lines, AL_K_SCENARIO, "st lines");
        if (!g.lines)
            return -1;
    }
    if (m_init(&g.m, c) < 0) {
        al_free(g.lines, g.lines_cap * sizeof *g.lines, AL_K_SCENARIO);
        return -1;
    }
    char what[160];
    snprintf(what, sizeof what, "fakegc stress lifecycle, seed %" PRIu64 ", %u steps", seed,
             c->steps);
    gen_header(&g, what);
    uint64_t total = 0;
    for (int i = 0; i < ST_W_EXPECT; i++)
        total += weight_of(&g, i);
    if (total == 0)
        total = 1;
    int with_left = 0;
    for (uint32_t step = 0; step < c->steps && !g.failed; step++) {
        st_action a;
        int ok = 0;
        g.cur = (uint32_t)out->n;
        if (with_left == 1) {
            memset(&a, 0, sizeof a);
            a.op = A_END;
            a.dst = a.a = a.b = -1;
            ok = apply(&g, &a);
            with_left = 0;
        } else {
            for (int tries = 0; tries < 16 && !ok; tries++) {
                int kind = pick_kind(&g, total);
                if (with_left > 1 && kind != ST_W_TENSOR && kind != ST_W_SPARSE &&
                    kind != ST_W_FAKE_OP && kind != ST_W_QUANTIZED && kind != ST_W_DEL &&
                    kind != ST_W_ATTR)
                    continue;
                if (kind == ST_W_WITH && with_left)
                    continue;
                if (!draw(&g, &a, kind))
                    continue;
                ok = apply(&g, &a);
                if (ok && a.op == A_WITH)
                    with_left = 2 + (int)st_rng_below(&rng, 3);
            }
            if (with_left > 1 && ok && a.op != A_WITH)
                with_left--;
        }
        if (ok && script_push(out, &a) < 0)
            g.failed = 1;
        if (ok && st_rng_below(&rng, 100) < c->weights.w[ST_W_EXPECT])
            check_random(&g);
        if (g.m.nn > 200000)
            break;   /* keep one lifecycle's model small */
    }
    if (g.in_with) {
        st_action a;
        memset(&a, 0, sizeof a);
        a.op = A_END;
        a.dst = a.a = a.b = -1;
        g.cur = (uint32_t)out->n;
        if (apply(&g, &a) && script_push(out, &a) < 0)
            g.failed = 1;
    }
    int failed = g.failed;
    m_free(&g.m);
    if (lines_out) {
        if (failed) {
            al_free(g.lines, g.lines_cap * sizeof *g.lines, AL_K_SCENARIO);
            g.lines = NULL;
            g.nlines = 0;
        }
        *lines_out = g.lines;
        *nlines = g.nlines;
    }
    return failed ? -1 : 0;
}

int st_render(const st_config *c, const st_action *acts, size_t n, st_text *text,
              uint32_t **lines_out, size_t *nlines, size_t *applied)
{
    gen g;
    memset(&g, 0, sizeof g);
    g.c = c;
    g.text = text;
    if (lines_out) {
        g.lines_cap = 1024;
        g.lines = al_malloc(g.lines_cap * sizeof *g.lines, AL_K_SCENARIO, "st lines");
        if (!g.lines)
            return -1;
    }
    if (m_init(&g.m, c) < 0) {
        al_free(g.lines, g.lines_cap * sizeof *g.lines, AL_K_SCENARIO);
        return -1;
    }
    gen_header(&g, "fakegc stress reproducer");
    size_t done = 0;
    for (size_t i = 0; i < n && !g.failed; i++) {
        g.cur = (uint32_t)i;
        if (apply(&g, &acts[i])) {
            done++;
            if (c->expect_all)
                check_all(&g);
        }
    }
    if (g.in_with) {
        st_action a;
        memset(&a, 0, sizeof a);
        a.op = A_END;
        a.dst = a.a = a.b = -1;
        g.cur = (uint32_t)n;
        apply(&g, &a);
    }
    if (applied)
        *applied = done;
    int failed = g.failed;
    m_free(&g.m);
    if (lines_out) {
        if (failed) {
            al_free(g.lines, g.lines_cap * sizeof *g.lines, AL_K_SCENARIO);
            g.lines = NULL;
            g.nlines = 0;
        }
        *lines_out = g.lines;
        *nlines = g.nlines;
    }
    return failed ? -1 : 0;
}
