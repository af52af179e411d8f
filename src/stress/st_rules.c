/* st_rules.c - the model's op rules: what PyTorch 1.13.1 makes of a view
 * op, an op that makes a new tensor, a sparse op and an in-place op, and
 * how an op on fakes runs on their meta tensors. The generator (st_gen.c)
 * only chooses what to generate; these rules say what the model predicts.
 *
 * Each op is a row of a table: what a sparse (COO, CSR) or quantized
 * input gives (data), the geometry of a strided result (a small function),
 * and the PyTorch 1.13.1 rule the row models (Debian's python3-torch:
 * torch/_refs/__init__.py, torch/_prims_common/__init__.py,
 * torch/_subclasses/fake_tensor.py, meta_utils.py; and the ATen kernels
 * whose messages the core repeats). The rules re-state PyTorch; they read
 * nothing of the core.
 */
#include "stress/st_model.h"

#include <string.h>

/* What a row says of an input the geometry function does not handle. */
enum {
    RO_OK,          /* the strided rule applies */
    RO_TYPE,        /* raises (TypeError): "not supported for sparse" / quantized */
    RO_SKIP,        /* not predicted: not generated */
    RO_SELF,        /* returns its input */
    RO_SELF_REAL,   /* returns its input unless complex (then not predicted) */
    RO_SDETACH,     /* a sparse detach: a new tensor sharing the parts */
    RO_DENSE,       /* a new contiguous strided tensor of the same sizes */
    RO_COO_COPY,    /* a new COO tensor like the input */
    RO_COO_TO,      /* to(dtype): its input for the same dtype, else a COO copy */
    RO_CSR_CLONE    /* a new CSR tensor like the input */
};

int m_can_rg(uint8_t dt) { return m_dtype_cat[dt] == DC_FLOAT || m_dtype_cat[dt] == DC_COMPLEX; }

/* torch/_prims_common canonicalize_dim (wrap_scalar: a 0-d tensor has one) */
static int wrap_dim(int64_t d, int nd, int *out)
{
    int n = nd ? nd : 1;
    if (d < -n || d >= n)
        return -1;
    *out = (int)(d < 0 ? d + n : d);
    return 0;
}

int64_t m_prod(const int64_t *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

/* known strides, and those of a contiguous tensor */
static int is_canonical(const mnode *t)
{
    int64_t st[M_MAXD];
    m_contig(t->ndim, t->sizes, st);
    return !(t->flags & NF_USTR) && memcmp(st, t->strides, (size_t)t->ndim * sizeof *st) == 0;
}

/* ---- view ops ---- */

typedef int view_geom(const model *m, const mnode *t, const st_action *a, mplan *p);

/* the sizes of view()/reshape(): same numel, none negative (-1 is not drawn) */
static int new_sizes(const mnode *t, const st_action *a, int64_t *ns)
{
    if ((t->flags & NF_USTR) || a->n < 1 || a->n > M_MAXD)
        return MERR_SKIP;
    for (int i = 0; i < a->n; i++) {
        if (a->v[i] < 0)
            return MERR_SKIP;
        ns[i] = a->v[i];
    }
    return m_prod(ns, a->n) != m_numel(t) ? MERR_SHAPE : MERR_NONE;
}

/* as a view, when the strides allow (ATen computeStride) */
static int as_view(const mnode *t, int n, const int64_t *ns, mplan *p)
{
    int64_t st[M_MAXD] = {0};
    if (!m_view_strides(t->ndim, t->sizes, t->strides, n, ns, st))
        return 0;
    p->nd = n;
    memcpy(p->sz, ns, sizeof p->sz);
    memcpy(p->st, st, sizeof p->st);
    return 1;
}

static int g_view(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int64_t ns[M_MAXD] = {0};
    int err = new_sizes(t, a, ns);
    (void)m;
    if (err)
        return err;
    return as_view(t, a->n, ns, p) ? MERR_NONE : MERR_SHAPE;
}

static int g_reshape(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int64_t ns[M_MAXD] = {0};
    int err = new_sizes(t, a, ns);
    (void)m;
    if (err || as_view(t, a->n, ns, p))
        return err;
    p->kind = P_NEW;     /* a copy (allow_copy) */
    p->nd = a->n;
    memcpy(p->sz, ns, sizeof ns);
    p->contig = 1;
    p->ustr = 0;
    p->quant = (t->flags & NF_QUANT) != 0;
    p->rg = (t->flags & NF_RG) && m_can_rg(t->dtype);
    return MERR_NONE;
}

static void swap_dims(const mnode *t, int d0, int d1, mplan *p)
{
    p->sz[d0] = t->sizes[d1], p->sz[d1] = t->sizes[d0];
    p->st[d0] = t->strides[d1], p->st[d1] = t->strides[d0];
}

static int g_t(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    (void)m, (void)a;
    if (t->ndim > 2)
        return MERR_SHAPE;
    if (t->ndim == 2)
        swap_dims(t, 0, 1, p);
    return MERR_NONE;
}

static int g_transpose(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int d0, d1;
    (void)m;
    if (a->n != 2 || wrap_dim(a->v[0], t->ndim, &d0) || wrap_dim(a->v[1], t->ndim, &d1))
        return MERR_SHAPE;
    if (t->ndim > 0)
        swap_dims(t, d0, d1, p);
    return MERR_NONE;
}

/* dim d keeps [start, stop) every step elements */
static void keep_range(const mnode *t, int d, int64_t start, int64_t stop, int64_t step,
                       mplan *p)
{
    int64_t len = stop - start;
    p->sz[d] = len == 0 ? 0 : (len - 1) / step + 1;
    p->off = t->offset + start * t->strides[d];
    p->st[d] = t->strides[d] * step;
}

/* start and stop clamped into [0, size] after wrapping once (Python's) */
static int g_slice(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int d;
    (void)m;
    if (t->ndim == 0 || a->n != 3 || wrap_dim(a->v[0], t->ndim, &d))
        return MERR_SHAPE;
    int64_t size = t->sizes[d], start = a->v[1], stop = a->v[2];
    int64_t step = (a->flags & F_STEP) ? a->v[3] : 1;
    if (step <= 0)
        return MERR_SHAPE;
    start += start < 0 ? size : 0;
    stop += stop < 0 ? size : 0;
    start = start < 0 ? 0 : start >= size ? size : start;
    stop = stop < start ? start : stop >= size ? size : stop;
    keep_range(t, d, start, stop, step, p);
    return MERR_NONE;
}

/* start wrapped unless it is the size; start + length within the size */
static int g_narrow(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int d;
    (void)m;
    if (t->ndim == 0 || a->n != 3 || wrap_dim(a->v[0], t->ndim, &d))
        return MERR_SHAPE;
    int64_t size = t->sizes[d], start = a->v[1], len = a->v[2];
    if (start != size) {
        int64_t n = size > 0 ? size : 1;
        if (start < -n || start >= n)
            return MERR_SHAPE;
        start += start < 0 ? n : 0;
    }
    if (len < 0 || start > size - len)
        return MERR_SHAPE;
    keep_range(t, d, start, start + len, 1, p);
    return MERR_NONE;
}

/* drop dim d (select); p->off is the caller's */
static void drop_dim(const mnode *t, int d, mplan *p)
{
    int k = 0;
    for (int j = 0; j < t->ndim; j++)
        if (j != d) {
            p->sz[k] = t->sizes[j];
            p->st[k++] = t->strides[j];
        }
    p->nd = k;
}

static int g_select(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int d;
    (void)m;
    if (t->ndim == 0 || a->n != 2 || wrap_dim(a->v[0], t->ndim, &d))
        return MERR_SHAPE;
    int64_t size = t->sizes[d], i = a->v[1];
    if (i < -size || i >= size)
        return MERR_SHAPE;
    i += i < 0 ? size : 0;
    drop_dim(t, d, p);
    p->off = t->offset + i * t->strides[d];
    return MERR_NONE;
}

static int g_unsqueeze(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int d, nd = t->ndim, k = 0;
    (void)m;
    if (a->n != 1 || wrap_dim(a->v[0], nd + 1, &d))
        return MERR_SHAPE;
    if (nd + 1 > M_MAXD)
        return MERR_SKIP;
    for (int j = 0; j <= nd; j++) {
        if (j == d) {
            p->sz[k] = 1;
            p->st[k++] = d >= nd ? 1 : t->sizes[d] * t->strides[d];
        }
        if (j < nd) {
            p->sz[k] = t->sizes[j];
            p->st[k++] = t->strides[j];
        }
    }
    p->nd = nd + 1;
    return MERR_NONE;
}

static int g_squeeze(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int k = 0;
    (void)m, (void)a;
    for (int j = 0; j < t->ndim; j++)
        if (t->sizes[j] != 1) {
            p->sz[k] = t->sizes[j];
            p->st[k++] = t->strides[j];
        }
    p->nd = k;
    return MERR_NONE;
}

static int g_expand(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    (void)m;
    if (a->n != t->ndim)
        return MERR_SKIP;
    for (int j = 0; j < t->ndim; j++) {
        if (a->v[j] == t->sizes[j])
            continue;
        if (a->v[j] < 0)
            return MERR_SKIP;
        if (t->sizes[j] != 1)
            return MERR_SHAPE;
        p->sz[j] = a->v[j];
        p->st[j] = 0;
    }
    return MERR_NONE;
}

/* diagonal() of dims 0 and 1 at offset 0: the diagonal last */
static int g_diagonal(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int k = 0;
    (void)m, (void)a;
    if (t->ndim < 2)
        return MERR_SHAPE;
    for (int j = 2; j < t->ndim; j++) {
        p->sz[k] = t->sizes[j];
        p->st[k++] = t->strides[j];
    }
    p->sz[k] = t->sizes[0] < t->sizes[1] ? t->sizes[0] : t->sizes[1];
    p->st[k++] = t->strides[0] + t->strides[1];
    p->nd = k;
    return MERR_NONE;
}

static int g_detach(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    (void)m, (void)t, (void)a;
    p->kind = P_DETACH;
    return MERR_NONE;
}

static int g_neg_view(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    (void)m, (void)t, (void)a;
    p->toggle = NF_NEG;
    return MERR_NONE;
}

static int g_conj(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    (void)m, (void)a;
    if (m_dtype_cat[t->dtype] != DC_COMPLEX)
        p->kind = P_SELF;
    else
        p->toggle = NF_CONJ;
    return MERR_NONE;
}

static int g_view_as_real(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int nd = t->ndim;
    (void)m, (void)a;
    if (m_dtype_cat[t->dtype] != DC_COMPLEX || (t->flags & NF_CONJ))
        return MERR_TYPE;
    if (nd + 1 > M_MAXD)
        return MERR_SKIP;
    for (int j = 0; j < nd; j++)
        p->st[j] = t->strides[j] * 2;
    p->sz[nd] = 2;
    p->st[nd] = 1;
    p->nd = nd + 1;
    p->off = t->offset * 2;
    p->dtype = t->dtype == D_C64 ? D_F32 : D_F64;
    return MERR_NONE;
}

static int g_as_strided(const model *m, const mnode *t, const st_action *a, mplan *p)
{
    int64_t sz[M_MAXD] = {0}, st[M_MAXD] = {0}, off = a->v[5];
    if (a->n != a->n2 || a->n < 1 || a->n > 3 || off < 0)
        return MERR_SKIP;
    for (int j = 0; j < a->n; j++) {
        sz[j] = a->v[j];
        st[j] = a->v2[j];
        if (sz[j] < 0 || st[j] < 0)
            return MERR_SKIP;
    }
    if (m_storage_bytes(a->n, sz, st, off, t->dtype) > m->n[t->storage].nbytes)
        return MERR_SHAPE;
    p->nd = a->n;
    memcpy(p->sz, sz, sizeof sz);
    memcpy(p->st, st, sizeof st);
    p->off = off;
    p->ustr = 0;
    return MERR_NONE;
}

typedef struct view_rule {
    view_geom *geom;          /* a strided input */
    uint8_t coo, csr, quant;  /* R_*: a sparse COO / CSR, a quantized input */
    const char *models;       /* the PyTorch 1.13.1 rule */
} view_rule;

static const view_rule view_rules[VW_COUNT] = {
    [VW_VIEW] = {g_view, RO_TYPE, RO_TYPE, RO_OK,
                 "_refs view -> _reshape_view_helper(allow_copy=False); ATen computeStride"},
    [VW_RESHAPE] = {g_reshape, RO_TYPE, RO_TYPE, RO_OK,
                    "_refs reshape -> _reshape_view_helper(allow_copy=True): a copy when "
                    "computeStride fails"},
    [VW_T] = {g_t, RO_TYPE, RO_TYPE, RO_OK, "_refs t: <= 2-D, transpose(0, 1)"},
    [VW_TRANSPOSE] = {g_transpose, RO_TYPE, RO_TYPE, RO_OK,
                      "_refs transpose: canonicalize_dim, swap sizes and strides"},
    [VW_SLICE] = {g_slice, RO_TYPE, RO_TYPE, RO_OK,
                  "_decomp slice.Tensor: clamp start/end, step > 0"},
    [VW_SELECT] = {g_select, RO_TYPE, RO_TYPE, RO_OK,
                   "aten select: index in [-size, size), dim dropped, offset moved"},
    [VW_NARROW] = {g_narrow, RO_TYPE, RO_TYPE, RO_OK,
                   "_refs narrow: start wrapped (start == size allowed), start + length <= "
                   "size"},
    [VW_UNSQUEEZE] = {g_unsqueeze, RO_TYPE, RO_TYPE, RO_OK,
                      "_refs unsqueeze: canonicalize_dim(ndim + 1); stride size*stride"},
    [VW_SQUEEZE] = {g_squeeze, RO_TYPE, RO_TYPE, RO_OK, "_refs squeeze: every size-1 dim"},
    [VW_EXPAND] = {g_expand, RO_TYPE, RO_TYPE, RO_OK,
                   "_refs expand: only size-1 dims grow, stride 0"},
    [VW_DIAGONAL] = {g_diagonal, RO_TYPE, RO_TYPE, RO_OK,
                     "_refs diagonal(offset=0, dim1=0, dim2=1): stride0 + stride1, last"},
    [VW_DETACH] = {g_detach, RO_SDETACH, RO_SDETACH, RO_OK,
                   "aten detach: shares the storage (parts, for sparse), not a view of it, "
                   "no grad"},
    [VW_NEG] = {g_neg_view, RO_TYPE, RO_TYPE, RO_OK, "aten _neg_view: the neg bit flips"},
    [VW_CONJ] = {g_conj, RO_SELF_REAL, RO_SKIP, RO_OK,
                 "_refs conj: self unless complex, else the conj bit flips"},
    [VW_REAL] = {g_view_as_real, RO_SKIP, RO_SKIP, RO_TYPE,
                 "aten view_as_real: complex, conj bit clear; strides *2, last dim 2"},
    [VW_AS_STRIDED] = {g_as_strided, RO_TYPE, RO_TYPE, RO_OK,
                       "_prims_common check_in_bounds_for_storage (as_strided)"},
};

/* The result of an input the row does not hand to its geometry. */
static int sparse_outcome(int r, const mnode *t, mplan *p)
{
    switch (r) {
    case RO_SDETACH: p->kind = P_SDETACH; return MERR_NONE;
    case RO_SELF: p->kind = P_SELF; return MERR_NONE;
    case RO_SELF_REAL:
        if (m_dtype_cat[t->dtype] == DC_COMPLEX)
            return MERR_SKIP;
        p->kind = P_SELF;
        return MERR_NONE;
    case RO_SKIP: return MERR_SKIP;
    default: return MERR_TYPE;
    }
}

/* p starts as "the input itself, as a view" */
static void plan_init(const mnode *t, int kind, mplan *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->dtype = t->dtype;
    p->dev = t->dev;
    p->ustr = (t->flags & NF_USTR) != 0;
    p->nd = t->ndim;
    memcpy(p->sz, t->sizes, sizeof p->sz);
    memcpy(p->st, t->strides, sizeof p->st);
    p->off = t->offset;
}

int m_view_plan(const model *m, int32_t ti, const st_action *a, mplan *p)
{
    const mnode *t = &m->n[ti];
    if (a->sub >= VW_COUNT)
        return MERR_SKIP;
    const view_rule *r = &view_rules[a->sub];
    plan_init(t, P_VIEW, p);
    if (t->layout != LY_STRIDED)
        return sparse_outcome(t->layout == LY_COO ? r->coo : r->csr, t, p);
    if ((t->flags & NF_QUANT) && r->quant != RO_OK)
        return sparse_outcome(r->quant, t, p);
    return r->geom(m, t, a, p);
}

const char *m_view_rule_source(int vw)
{
    return (unsigned)vw < VW_COUNT ? view_rules[vw].models : NULL;
}

/* ---- ops that make new tensors ---- */

/* b: the other operand's node (the same flavour as t's), or NULL */
typedef int new_geom(const mnode *t, const mnode *b, const st_action *a, mplan *p);

static int dense_of(const mnode *t)
{
    return !(t->flags & NF_USTR) && m_is_dense(t->ndim, t->sizes, t->strides);
}

/* strides kept when t is non-overlapping and dense, else contiguous */
static void keep_dense(const mnode *t, mplan *p)
{
    if (dense_of(t))
        memcpy(p->st, t->strides, sizeof p->st);
    else
        p->contig = 1;
    p->ustr = (t->flags & NF_USTR) != 0;
}

static int rg_of(const mnode *t) { return (t->flags & NF_RG) != 0; }

static int n_clone(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    (void)b, (void)a;
    keep_dense(t, p);
    p->quant = (t->flags & NF_QUANT) != 0;
    p->rg = rg_of(t) && m_can_rg(t->dtype);
    return MERR_NONE;
}

static int n_contig(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    (void)b, (void)a;
    if (t->flags & NF_USTR)
        return MERR_SKIP;
    if (m_is_contiguous(t->ndim, t->sizes, t->strides)) {
        p->kind = P_SELF;
        return MERR_NONE;
    }
    p->contig = 1;
    p->quant = (t->flags & NF_QUANT) != 0;
    p->rg = rg_of(t) && m_can_rg(t->dtype);
    return MERR_NONE;
}

/* to(dtype) / to(device) */
static int n_to(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    uint8_t dt = a->sub == NO_TO_DTYPE ? a->dtype : t->dtype;
    uint8_t dev = a->sub == NO_TO_DEVICE ? a->dev : t->dev;
    (void)b;
    if (dt == t->dtype && dev == t->dev) {
        p->kind = P_SELF;
        return MERR_NONE;
    }
    if (t->dev == DV_META && dev != DV_META)
        return MERR_TYPE;
    p->dtype = dt;
    p->dev = dev;
    keep_dense(t, p);
    p->rg = rg_of(t) && m_can_rg(dt);
    return MERR_NONE;
}

/* a strided, unquantized operand on t's device */
static int operand_ok(const mnode *t, const mnode *b)
{
    if (!b)
        return MERR_SKIP;
    if (b->layout != LY_STRIDED || (b->flags & NF_QUANT))
        return MERR_TYPE;
    return b->dev != t->dev ? MERR_SKIP : MERR_NONE;
}

/* TensorIterator's layout: contiguous for contiguous inputs, except with
 * no elements, where the strides are its own (not predicted) */
static int n_add(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    int err = operand_ok(t, b);
    (void)a;
    if (err)
        return err;
    if (b->dtype != t->dtype || b->ndim != t->ndim ||
        memcmp(b->sizes, t->sizes, (size_t)t->ndim * sizeof *t->sizes) != 0 ||
        t->dtype == D_BOOL)
        return MERR_SKIP;
    p->contig = is_canonical(t) && is_canonical(b) && m_numel(t) > 0;
    p->ustr = !p->contig;
    p->rg = rg_of(t) || rg_of(b);
    return MERR_NONE;
}

static int n_matmul(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    int err = operand_ok(t, b);
    (void)a;
    if (err)
        return err;
    if (t->ndim != 2 || b->ndim != 2)
        return MERR_SKIP;
    if (b->dtype != t->dtype)
        return MERR_TYPE;
    if (t->sizes[1] != b->sizes[0])
        return MERR_SHAPE;
    p->sz[0] = t->sizes[0];
    p->sz[1] = b->sizes[1];
    p->contig = 1;
    p->rg = rg_of(t) || rg_of(b);
    return MERR_NONE;
}

/* mul by a number */
static int n_mul(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    (void)b, (void)a;
    if (t->dtype == D_BOOL)
        return MERR_SKIP;
    p->contig = is_canonical(t) && m_numel(t) > 0;
    p->ustr = !p->contig;
    p->rg = rg_of(t);
    return MERR_NONE;
}

/* sum() / sum(dim): integral and bool inputs sum to i64 */
static int n_sum(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    (void)b;
    p->nd = 0;
    if (a->sub == NO_SUM_DIM) {
        int d, k = 0;
        if (wrap_dim(a->v[0], t->ndim, &d))
            return MERR_SHAPE;
        for (int j = 0; j < t->ndim; j++)
            if (j != d)
                p->sz[k++] = t->sizes[j];
        p->nd = k;
    }
    if (m_dtype_cat[t->dtype] == DC_INT || t->dtype == D_BOOL)
        p->dtype = D_I64;
    p->contig = 1;
    p->rg = rg_of(t);
    return MERR_NONE;
}

static int n_self(const mnode *t, const mnode *b, const st_action *a, mplan *p)
{
    (void)t, (void)b, (void)a;
    p->kind = P_SELF;
    return MERR_NONE;
}

typedef struct new_rule {
    new_geom *geom;           /* a strided input */
    uint8_t coo, csr, quant;  /* R_* */
    const char *models;
} new_rule;

static const new_rule new_rules[NO_COUNT] = {
    [NO_CLONE] = {n_clone, RO_COO_COPY, RO_CSR_CLONE, RO_OK,
                  "_refs clone (preserve_format): strides kept when non-overlapping and "
                  "dense, else contiguous"},
    [NO_CONTIG] = {n_contig, RO_SELF, RO_SELF, RO_OK,
                   "_refs contiguous: self when is_contiguous, else a contiguous copy"},
    [NO_TO_DTYPE] = {n_to, RO_COO_TO, RO_SKIP, RO_TYPE,
                     "_refs to -> _to_copy: self when nothing changes (copy=False)"},
    [NO_TO_DEVICE] = {n_to, RO_SKIP, RO_SKIP, RO_TYPE,
                      "fake_tensor.py aten._to_copy: meta data cannot leave meta"},
    [NO_ADD] = {n_add, RO_SKIP, RO_SKIP, RO_TYPE,
                "_prims_common compute_elementwise_output_strides; grad if either"},
    [NO_MUL] = {n_mul, RO_SKIP, RO_SKIP, RO_TYPE,
                "_prims_common compute_elementwise_output_strides (a number operand)"},
    [NO_SUM] = {n_sum, RO_SKIP, RO_SKIP, RO_TYPE,
                "_refs sum: reduction, integral -> int64 (elementwise_dtypes)"},
    [NO_SUM_DIM] = {n_sum, RO_SKIP, RO_SKIP, RO_TYPE,
                    "_refs sum(dim): canonicalize_dim, the dim dropped"},
    [NO_MATMUL] = {n_matmul, RO_SKIP, RO_SKIP, RO_TYPE,
                   "_decomp matmul (2-D: mm): same dtype, inner sizes equal"},
    [NO_TO_DENSE] = {n_self, RO_DENSE, RO_DENSE, RO_SKIP,
                     "aten to_dense: self for strided, a contiguous copy for sparse"},
};

/* the sparse outcomes of a new-tensor op */
static int new_sparse(int r, const mnode *t, const st_action *a, mplan *p)
{
    p->sd = t->sd;
    p->nnz = t->nnz;
    p->coal = (t->flags & NF_COAL) != 0;
    p->rg = rg_of(t);
    switch (r) {
    case RO_COO_TO:
        if (a->dtype == t->dtype) {
            p->kind = P_SELF;
            return MERR_NONE;
        }
        p->dtype = a->dtype;
        p->rg = rg_of(t) && m_can_rg(a->dtype);
        /* fall through */
    case RO_COO_COPY: p->kind = P_COO; return MERR_NONE;
    case RO_CSR_CLONE: p->kind = P_CSR_CLONE; return MERR_NONE;
    case RO_DENSE: p->contig = 1; return MERR_NONE;
    default: return sparse_outcome(r, t, p);
    }
}

int m_newop_plan(const model *m, int32_t ti, int32_t bi, const st_action *a, mplan *p)
{
    const mnode *t = &m->n[ti];
    if (a->sub >= NO_COUNT)
        return MERR_SKIP;
    const new_rule *r = &new_rules[a->sub];
    plan_init(t, P_NEW, p);
    p->ustr = 0;
    memset(p->st, 0, sizeof p->st);
    p->off = 0;
    if (t->layout != LY_STRIDED)
        return new_sparse(t->layout == LY_COO ? r->coo : r->csr, t, a, p);
    if ((t->flags & NF_QUANT) && r->quant != RO_OK)
        return sparse_outcome(r->quant, t, p);
    return r->geom(t, bi >= 0 ? &m->n[bi] : NULL, a, p);
}

const char *m_new_rule_source(int no)
{
    return (unsigned)no < NO_COUNT ? new_rules[no].models : NULL;
}

/* ---- sparse ops ---- */

typedef int sparse_geom(const mnode *t, mplan *p);

/* a coalesced COO has at most one value per index */
static int s_coalesce(const mnode *t, mplan *p)
{
    if (t->layout != LY_COO)
        return MERR_TYPE;
    if (t->flags & NF_COAL) {
        p->kind = P_SELF;
        return MERR_NONE;
    }
    int64_t most = m_prod(t->sizes, t->sd);
    p->kind = P_COO;
    p->sd = t->sd;
    p->nnz = t->nnz < most ? t->nnz : most;
    p->coal = 1;
    p->rg = rg_of(t);
    return MERR_NONE;
}

static int s_indices(const mnode *t, mplan *p)
{
    if (t->layout != LY_COO || !(t->flags & NF_COAL))
        return MERR_TYPE;
    p->kind = P_INDICES;
    return MERR_NONE;
}

static int s_values(const mnode *t, mplan *p)
{
    if (t->layout == LY_STRIDED || (t->layout == LY_COO && !(t->flags & NF_COAL)))
        return MERR_TYPE;
    p->kind = P_VALUES;
    p->rg = rg_of(t);
    return MERR_NONE;
}

/* every element an index: nnz = numel, coalesced */
static int s_to_sparse(const mnode *t, mplan *p)
{
    if (t->layout != LY_STRIDED || (t->flags & NF_QUANT))
        return MERR_TYPE;
    p->kind = P_COO;
    p->sd = t->ndim;
    p->nnz = m_prod(t->sizes, t->ndim);
    p->coal = 1;
    p->rg = rg_of(t);
    return MERR_NONE;
}

static const struct {
    sparse_geom *geom;
    const char *models;
} sparse_rules[] = {
    [SP_COALESCE] = {s_coalesce, "aten coalesce: self when coalesced; COO only"},
    [SP_INDICES] = {s_indices, "aten indices: a coalesced COO only (_indices otherwise)"},
    [SP_VALUES] = {s_values, "aten values: CSR, or a coalesced COO; a view of the input"},
    [SP_TO_SPARSE] = {s_to_sparse, "aten to_sparse: a strided, unquantized input"},
};

int m_sparse_plan(const model *m, int32_t ti, const st_action *a, mplan *p)
{
    const mnode *t = &m->n[ti];
    if (a->sub >= sizeof sparse_rules / sizeof sparse_rules[0])
        return MERR_SKIP;
    plan_init(t, 0, p);
    p->ustr = 0;
    memset(p->st, 0, sizeof p->st);
    p->off = 0;
    return sparse_rules[a->sub].geom(t, p);
}

/* ---- operands and in-place ops ---- */

/* fake_tensor.py FakeTensor.__torch_dispatch__: fakes of one mode only
 * ("Mixing modes NYI"); FakeTensorMode.__torch_dispatch__: no real tensor
 * beside a fake ("Invoking operators with non-Fake Tensor inputs"). *bi:
 * the node the op reads (a fake's meta tensor). */
int m_operands(const model *m, int32_t ti, int32_t b, int32_t *bi)
{
    const mnode *x = &m->n[ti], *y = &m->n[b];
    *bi = -1;
    if (x->fake && y->fake) {
        *bi = y->meta;
        return x->mode != y->mode ? MERR_TYPE : MERR_NONE;
    }
    if (x->fake != y->fake)
        return MERR_TYPE;
    *bi = b;
    return MERR_NONE;
}

/* add_(n) mul_(n) zero_() on slot node si. Autograd's check_inplace runs
 * on the tensor the user holds (a fake's own grad flags, not its meta
 * tensor's: a converted fake is a leaf even when its source is not): a
 * leaf requiring grad, or a view of one, may not be written. Then the
 * kernel, on the meta tensor of a fake: ATen's assert_no_internal_overlap
 * (no element written twice: a broadcast stride 0); quantized: not
 * implemented. */
static int grad_blocks(const model *m, const mnode *s)
{
    if (!(s->flags & NF_RG))
        return 0;
    if (s->base >= 0) {
        const mnode *b = &m->n[s->base];
        if ((b->flags & NF_LEAF) && (b->flags & NF_RG))
            return 1;
    }
    return (s->flags & NF_LEAF) != 0;
}

int m_inplace_rule(const model *m, int32_t si, const st_action *a)
{
    const mnode *s = &m->n[si];
    const mnode *t = s->fake ? &m->n[s->meta] : s;
    if (t->layout != LY_STRIDED)
        return MERR_SKIP;
    if (t->flags & NF_QUANT)
        return MERR_TYPE;
    if (a->sub != IP_ZERO && t->dtype == D_BOOL)
        return MERR_SKIP;
    if (grad_blocks(m, s))
        return MERR_TYPE;
    if (a->sub == IP_ZERO)
        return MERR_NONE;
    if (t->flags & NF_USTR)
        return MERR_SKIP;
    for (int i = 0; i < t->ndim; i++)
        if (t->strides[i] == 0 && t->sizes[i] > 1)
            return MERR_SHAPE;
    return MERR_NONE;
}

/* ---- results ---- */

/* Each plan kind's result from node ti (a new reference), or -1 on OOM. */
typedef int32_t maker(model *m, int32_t ti, const mplan *p);

static int32_t mk_self(model *m, int32_t ti, const mplan *p)
{
    (void)p;
    m_ref(m, ti);
    return ti;
}

static int32_t mk_view(model *m, int32_t ti, const mplan *p)
{
    int32_t r = m_view(m, ti, p->nd, p->sz, p->st, p->off);
    if (r < 0)
        return -1;
    mnode *x = &m->n[r];
    x->dtype = p->dtype;
    x->flags ^= (uint16_t)p->toggle;
    x->flags = (uint16_t)(p->ustr ? x->flags | NF_USTR : x->flags & ~NF_USTR);
    return r;
}

static int32_t mk_detach(model *m, int32_t ti, const mplan *p)
{
    const mnode *t = &m->n[ti];
    (void)p;
    return m_alias(m, ti, t->dtype,
                   (uint16_t)((t->flags & (NF_NEG | NF_CONJ | NF_QUANT | NF_USTR)) | NF_LEAF));
}

/* a sparse detach: a new tensor sharing the input's parts */
static int32_t mk_sdetach(model *m, int32_t ti, const mplan *p)
{
    (void)p;
    int32_t r = m_new(m, NK_TENSOR);
    if (r < 0)
        return -1;
    mnode *x = &m->n[r];
    const mnode *t = &m->n[ti];
    x->layout = t->layout;
    x->dtype = t->dtype;
    x->dev = t->dev;
    x->ndim = t->ndim;
    x->sd = t->sd;
    x->nnz = t->nnz;
    memcpy(x->sizes, t->sizes, sizeof x->sizes);
    x->flags = (uint16_t)((t->flags & NF_COAL) | NF_LEAF);
    x->ind = t->ind, x->val = t->val, x->crow = t->crow, x->col = t->col;
    m_ref(m, t->ind), m_ref(m, t->val), m_ref(m, t->crow), m_ref(m, t->col);
    return r;
}

/* grad flags of a new result */
static int32_t with_grad(model *m, int32_t r, const mplan *p)
{
    if (r < 0)
        return -1;
    mnode *x = &m->n[r];
    x->flags = (uint16_t)((x->flags & ~(NF_RG | NF_LEAF)) | (p->rg ? NF_RG : NF_LEAF));
    return r;
}

/* unknown strides are still dense: the bytes are those of contiguous */
static int32_t mk_new(model *m, int32_t ti, const mplan *p)
{
    (void)ti;
    int32_t r = m_strided(m, p->nd, p->sz, p->contig || p->ustr ? NULL : p->st, p->dtype,
                          p->dev);
    if (r < 0)
        return -1;
    if (p->quant)
        m->n[r].flags |= NF_QUANT;
    if (p->ustr)
        m->n[r].flags |= NF_USTR;
    return with_grad(m, r, p);
}

static int32_t mk_coo(model *m, int32_t ti, const mplan *p)
{
    (void)ti;
    return with_grad(m, m_coo(m, p->nd, p->sz, p->sd, p->nnz, p->dtype, p->dev, p->coal), p);
}

static int32_t mk_csr_clone(model *m, int32_t ti, const mplan *p)
{
    const mnode *t = &m->n[ti];
    (void)p;
    return m_csr(m, t->sizes[0], t->sizes[1], t->nnz, t->dtype, t->dev);
}

/* indices(): the COO's index tensor's storage, as i64, not a view */
static int32_t mk_indices(model *m, int32_t ti, const mplan *p)
{
    (void)p;
    return m_alias(m, m->n[ti].ind, D_I64, NF_LEAF);
}

/* values(): a view of the input over its values' storage */
static int32_t mk_values(model *m, int32_t ti, const mplan *p)
{
    int32_t val = m->n[ti].val;
    int32_t r = m_alias(m, val, m->n[val].dtype, (uint16_t)(p->rg ? NF_RG : NF_LEAF));
    if (r < 0)
        return -1;
    m->n[r].base = ti;
    m_ref(m, ti);
    return r;
}

static maker *const makers[] = {
    [P_SELF] = mk_self, [P_VIEW] = mk_view, [P_DETACH] = mk_detach, [P_NEW] = mk_new,
    [P_COO] = mk_coo, [P_CSR_CLONE] = mk_csr_clone, [P_SDETACH] = mk_sdetach,
    [P_INDICES] = mk_indices, [P_VALUES] = mk_values,
};

static int32_t materialize(model *m, int32_t ti, const mplan *p)
{
    if (p->kind <= 0 || (size_t)p->kind >= sizeof makers / sizeof makers[0])
        return -1;
    return makers[p->kind](m, ti, p);
}

/* Run a plan on a tensor slot's node: real tensors directly, fake ones on
 * their meta tensor, wrapping the result (an op that returns its input
 * returns the fake itself). view_op: PyTorch's view ops (detach aside):
 * when the meta result is a view, the fake result is a view whose base is
 * the fake (or the fake's own base). */
int32_t m_run_plan(model *m, int32_t ti, const mplan *p, int view_op)
{
    mnode *t = &m->n[ti];
    if (!t->fake)
        return materialize(m, ti, p);
    int32_t mt = t->meta;
    int32_t r = materialize(m, mt, p);
    if (r < 0)
        return -1;
    if (r == mt) {
        m_unref(m, r);
        m_ref(m, ti);
        return ti;
    }
    int meta_is_view = m->n[r].base >= 0;
    t = &m->n[ti];
    int32_t base = t->base >= 0 ? t->base : ti;
    /* PyTorch 1.13.1: under `with m1`, an op on fakes of m2 gives a fake of m1 */
    int32_t mode = m->nwith ? m->with[m->nwith - 1] : t->mode;
    int32_t f = m_fake_new(m, r, mode, t->fdev);
    if (f >= 0 && view_op && meta_is_view) {
        m->n[f].base = base;
        m_ref(m, base);
        /* fk_ops.c: a view of a fake view keeps it (views_keep_source) */
        if (m->n[ti].base >= 0 && m->vsrc) {
            m->n[f].vsrc = ti;
            m_ref(m, ti);
        }
    }
    if (f >= 0)
        m_op_output(m, f);   /* fake_tensor.py@946abe14:1869 */
    return f;
}


/* ---- constructors ---- */

/* a: the action (sizes sz[0..a->n), a->v2 the extra integers), dt its
 * dtype, where the device it is built on (meta inside `with`) */
typedef int ctor_check(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where);

static int c_dense(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where)
{
    (void)sz, (void)where;
    return (a->flags & F_RG) && !m_can_rg(dt) ? MERR_TYPE : MERR_NONE;
}

static int c_strided(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where)
{
    (void)sz, (void)dt, (void)where;
    if (a->n2 != a->n)
        return MERR_SKIP;
    for (int i = 0; i < a->n; i++)
        if (a->v2[i] < 0)
            return MERR_SKIP;
    return MERR_NONE;
}

/* indices in range need a non-empty sparse shape; coalesced: at most one
 * value per index (checked on real devices only, not on meta) */
static int c_coo(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where)
{
    int sd = (a->flags & F_SD) ? a->v2[1] : a->n;
    int64_t nnz = a->v2[0];
    (void)dt;
    if (sd < 0 || sd > a->n || nnz < 0)
        return MERR_SKIP;
    int64_t most = m_prod(sz, sd);
    if (where != DV_META && nnz > 0 && most == 0)
        return MERR_SHAPE;
    if (where != DV_META && (a->flags & F_COAL) && nnz > most)
        return MERR_SHAPE;
    return MERR_NONE;
}

static int c_csr(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where)
{
    (void)dt;
    if (a->n != 2 || a->v2[0] < 0)
        return MERR_SKIP;
    if (where == DV_META || where == DV_LAZY)
        return MERR_TYPE;
    return a->v2[0] > sz[0] * sz[1] ? MERR_SHAPE : MERR_NONE;
}

static int c_quant(const st_action *a, const int64_t *sz, uint8_t dt, uint8_t where)
{
    (void)sz, (void)dt;
    if ((a->flags & (F_DTYPE | F_DEVICE)) || a->n == 0)
        return MERR_SKIP;
    return where == DV_META ? MERR_UNSUP : MERR_NONE;
}

static const struct {
    ctor_check *check;
    const char *models;
} ctor_rules[] = {
    [C_EMPTY] = {c_dense, "requires_grad=True: only floating point and complex dtypes"},
    [C_ZEROS] = {c_dense, "requires_grad=True: only floating point and complex dtypes"},
    [C_ONES] = {c_dense, "requires_grad=True: only floating point and complex dtypes"},
    [C_RAND] = {c_dense, "requires_grad=True: only floating point and complex dtypes"},
    [C_STRIDED] = {c_strided, "empty_strided: one stride per size"},
    [C_COO] = {c_coo, "sparse_coo_tensor: indices within sizes; coalesce: nnz <= prod"},
    [C_CSR] = {c_csr, "sparse_csr_tensor: no meta or lazy kernel in 1.13.1; nnz <= rows*cols"},
    [C_QUANT] = {c_quant, "meta_utils.py: quantized tensors are not convertible to meta "
                          "(UnsupportedFakeTensorException)"},
};

int m_ctor_rule(const model *m, const st_action *a, const int64_t *sz, uint8_t dt,
                uint8_t where)
{
    (void)m;
    if (a->sub >= sizeof ctor_rules / sizeof ctor_rules[0])
        return MERR_SKIP;
    return ctor_rules[a->sub].check(a, sz, dt, where);
}

/* The tensor node constructor a makes on `where`, or -1 on OOM. */
static int32_t ctor_node(model *m, const st_action *a, const int64_t *sz, uint8_t dt,
                         uint8_t where)
{
    int32_t t;
    int64_t st[M_MAXD];
    switch (a->sub) {
    case C_STRIDED:
        for (int i = 0; i < a->n; i++)
            st[i] = a->v2[i];
        return m_strided(m, a->n, sz, st, dt, where);
    case C_COO:
        /* PyTorch 1.13: fewer than 2 entries is coalesced whatever was asked
         * (not on meta, where the flag is kept) */
        return m_coo(m, a->n, sz, (a->flags & F_SD) ? a->v2[1] : a->n, a->v2[0], dt, where,
                     (a->flags & F_COAL) || (a->v2[0] < 2 && where != DV_META));
    case C_CSR:
        return m_csr(m, sz[0], sz[1], a->v2[0], dt, where);
    case C_QUANT:
        t = m_strided(m, a->n, sz, NULL, D_I8, DV_CPU);
        if (t >= 0)
            m->n[t].flags |= NF_QUANT;
        return t;
    default:
        t = m_strided(m, a->n, sz, NULL, dt, where);
        if (t >= 0 && (a->flags & F_RG))
            m->n[t].flags |= NF_RG;
        return t;
    }
}

/* Inside `with`: built on meta, wrapped as a fake of the innermost mode
 * that says it is on dev (FakeTensorMode's constructor handling). */
int32_t m_ctor(model *m, const st_action *a, const int64_t *sz, uint8_t dt, uint8_t dev)
{
    int in_mode = m->nwith > 0;
    int32_t t = ctor_node(m, a, sz, dt, in_mode ? DV_META : dev);
    if (t < 0 || !in_mode)
        return t;
    int32_t f = m_fake_new(m, t, m->with[m->nwith - 1], dev);
    m_ctor_output(m, f);
    return f;
}
