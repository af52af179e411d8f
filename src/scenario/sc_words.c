/* sc_words.c - the vocabulary of the scenario language: one row per word
 * (in the manner of Lua's luaL_Reg rows), read by the parser (names,
 * kinds, arity of built-ins, keyword arguments), the interpreter's dispatch
 * (each row's argument parser and evaluator, sc_eval.h: the interpreter
 * calls a word through nothing else) and `fakegc list words`. Each row also
 * says whether `fakegc stress` generates the word and whether scripts/xref
 * translates it, and why not when it does not: tests/scenario/check_vocab.py
 * fails when the generator, the translator or the fuzz dictionary lacks a
 * word without a reason here. The table is syntax and dispatch only: the
 * stress model keeps its own semantics and does not read it. */
#include "scenario/sc_eval.h"

#include <stdio.h>
#include <string.h>

static const char *const kw_tensor_ctor[] = {"dtype", "device", "requires_grad", NULL};
static const char *const kw_empty[] = {"dtype", "device", "requires_grad", "memory_format",
                                       NULL};
static const char *const kw_coo[] = {"nnz", "sparse_dim", "dtype", "device", "coalesced", NULL};
static const char *const kw_csr[] = {"nnz", "dtype", "device", NULL};
static const char *const kw_mode[] = {"sweep", "sweep_every", NULL};
static const char *const kw_fake_mode[] = {"sweep", "sweep_every", "shape_env", "propagate_real",
                                           "mode_ref", NULL};
static const char *const kw_live[] = {"kind", NULL};
static const char *const kw_gc[] = {"sweep", NULL};
static const char *const kw_none[] = {NULL};
static const char *const kw_slice[] = {"step", NULL};
static const char *const kw_as_strided[] = {"offset", NULL};
static const char *const kw_to[] = {"device", "dtype", NULL};
static const char *const kw_sum[] = {"dim", NULL};
static const char *const kw_to_sparse[] = {"sparse_dim", NULL};
static const char *const kw_diagonal[] = {"offset", NULL};
static const char *const kw_fake[] = {"device", "constant", "dynamic", NULL};
static const char *const kw_mfmt[] = {"memory_format", NULL};
static const char *const kw_verdict[] = {"fail_on", "suppress", "stopped", "why", "ended_at", "ended",
                                         NULL};

#define NO_XREF_CENSUS "fakegc's census has no PyTorch equivalent"
#define NO_XREF_WEAK "weak handles are not translated"
#define NO_PROGRAM "a recorded program's words (fakegc record): no PyTorch call to generate or translate"
#define V2_STRESS "version 2: not generated yet (scenarios/v2 and xref cover it)"

/* Each row: name, kind, method kind, id, positional arguments min..max
 * (-1: any), keywords, version, why `fakegc stress` does not generate it
 * (NULL: it does), why scripts/xref does not translate it (NULL: it does),
 * argument parser, evaluator, flags. */
#define ROW(n, k, mk, id, lo, hi, kw, v, ns, nx, ar, ev, fl) \
    {n, k, mk, id, lo, hi, kw, v, ns, nx, ar, ev, fl}
#define B(n, id, lo, hi, kw, ar, ev, ns, nx) \
    ROW(n, SW_BUILTIN, 0, id, lo, hi, kw, 1, ns, nx, ar, ev, 0)
/* a constructor (SWF_CTOR): generated and translated */
#define BC(n, id, lo, hi, kw, ar, ev) \
    ROW(n, SW_BUILTIN, 0, id, lo, hi, kw, 1, NULL, NULL, ar, ev, SWF_CTOR)
#define B2(n, id, lo, hi, kw, ar, ev, ns, nx) \
    ROW(n, SW_BUILTIN, 0, id, lo, hi, kw, 2, ns, nx, ar, ev, 0)
/* tensor ops: arity is ts_op_arity's, checked by the argument parser */
#define OP(n, lo, hi, kw, ar, ns, nx) \
    ROW(n, SW_METHOD, MK_OP, 0, lo, hi, kw, 1, ns, nx, ar, sc_ev_op, 0)
#define OP2(n, lo, hi, kw, ar, ns, nx, fl) \
    ROW(n, SW_METHOD, MK_OP, 0, lo, hi, kw, 2, ns, nx, ar, sc_ev_op, fl)
#define M(n, mk, lo, hi, kw, ev, ns, nx) ROW(n, SW_METHOD, mk, 0, lo, hi, kw, 1, ns, nx, NULL, ev, 0)
#define M2(n, mk, lo, hi, kw, ev, ns, nx) \
    ROW(n, SW_METHOD, mk, 0, lo, hi, kw, 2, ns, nx, NULL, ev, 0)
#define Q(n, lo, hi, kw, ns, nx) M(n, MK_QUERY, lo, hi, kw, sc_ev_query, ns, nx)
#define Q2(n, kw, ns, nx) M2(n, MK_QUERY, 0, 0, kw, sc_ev_query, ns, nx)
#define A(n, id, ev, ns, nx) ROW(n, SW_ATTR, 0, id, 0, 0, kw_none, 1, ns, nx, NULL, ev, 0)
#define A3(n, id, ev, ns, nx) ROW(n, SW_ATTR, 0, id, 0, 0, kw_none, 3, ns, nx, NULL, ev, 0)
#define V3_STRESS "version 3: not generated yet (scenarios/designs covers it)"
#define V3_XREF_23 "version 3: PyTorch 2.x machinery (ShapeEnv, compile, dispatch cache): " \
    "not in 1.13.1"
#define V3_XREF_CONST "version 3: constants are not translated yet"
#define V3_XREF_214 "version 3: PyTorch 2.14's unbacked memos and inference mode: not in " \
    "1.13.1"
#define B3(n, id, lo, hi, ev, ns, nx) \
    ROW(n, SW_BUILTIN, 0, id, lo, hi, kw_none, 3, ns, nx, NULL, ev, 0)
#define M3(n, hi, ev, ns, nx) ROW(n, SW_METHOD, MK_OBJ, 0, hi, hi, kw_none, 3, ns, nx, NULL, ev, 0)
#define V3_XREF "version 3: not translated yet (under 1.13 it reads memo_meta and memo_storage)"

static const sc_word vocab[] = {
    /* built-in functions, in sc_builtin order */
    BC("empty", B_EMPTY, 0, -1, kw_empty, sc_ar_sizes, sc_ev_dense),
    BC("zeros", B_ZEROS, 0, -1, kw_tensor_ctor, sc_ar_sizes, sc_ev_dense),
    BC("ones", B_ONES, 0, -1, kw_tensor_ctor, sc_ar_sizes, sc_ev_dense),
    BC("rand", B_RAND, 0, -1, kw_tensor_ctor, sc_ar_sizes, sc_ev_dense),
    BC("empty_strided", B_EMPTY_STRIDED, 2, 2, kw_tensor_ctor, sc_ar_strided,
       sc_ev_empty_strided),
    BC("sparse_coo", B_SPARSE_COO, 0, -1, kw_coo, sc_ar_sizes, sc_ev_sparse_coo),
    BC("sparse_csr", B_SPARSE_CSR, 2, 2, kw_csr, sc_ar_csr, sc_ev_sparse_csr),
    B("quantized", B_QUANTIZED, 0, -1, kw_none, sc_ar_sizes, sc_ev_quantized, NULL, NULL),
    B("fake_mode", B_FAKE_MODE, 0, 0, kw_fake_mode, NULL, sc_ev_fake_mode, NULL, NULL),
    B("meta_converter", B_META_CONVERTER, 0, 0, kw_mode, NULL, sc_ev_meta_converter, NULL,
      NULL),
    B("weakref", B_WEAKREF, 1, 1, kw_none, NULL, sc_ev_weakref, NULL, NO_XREF_WEAK),
    B("gc", B_GC, 0, 1, kw_gc, NULL, sc_ev_gc, NULL, NULL),
    B("live", B_LIVE, 0, 1, kw_live, NULL, sc_ev_live, NULL, NO_XREF_CENSUS),
    B("bytes", B_BYTES, 0, 0, kw_none, NULL, sc_ev_bytes, NULL, NO_XREF_CENSUS),
    B("heap_bytes", B_HEAP_BYTES, 0, 0, kw_none, NULL, sc_ev_heap_bytes,
      "allocator totals depend on the allocator; bytes() is checked instead", NO_XREF_CENSUS),
    B("unreachable", B_UNREACHABLE, 0, 0, kw_none, NULL, sc_ev_unreachable, NULL,
      NO_XREF_CENSUS),
    B("stale", B_STALE, 0, 0, kw_none, NULL, sc_ev_stale,
      "the invariant checks see stale entries directly", NO_XREF_CENSUS),
    B("growth", B_GROWTH, 1, 1, kw_none, NULL, sc_ev_growth, "lifecycles have no checkpoints",
      NO_XREF_CENSUS),
    B("alive", B_ALIVE, 1, 1, kw_none, NULL, sc_ev_alive, NULL, NO_XREF_WEAK),
    B("dead", B_DEAD, 1, 1, kw_none, NULL, sc_ev_dead, NULL, NO_XREF_WEAK),
    B("raises", B_RAISES, 2, 2, kw_none, NULL, sc_ev_raises, NULL, NULL),
    B2("fake_converter", B_FAKE_CONVERTER, 0, 0, kw_mode, NULL, sc_ev_fake_converter, NULL,
       NULL),
    ROW("weakrefs", SW_BUILTIN, 0, B_WEAKREFS, 1, 1, kw_none, 3, V3_STRESS, NO_XREF_WEAK, NULL,
        sc_ev_weakrefs, 0),
    B("hold", B_HOLD, 2, 2, kw_none, NULL, sc_ev_hold, NO_PROGRAM, NO_PROGRAM),
    B("at", B_AT, 2, 5, kw_none, NULL, sc_ev_at, NO_PROGRAM, NO_PROGRAM),
    B("verdict", B_VERDICT, 0, 0, kw_verdict, NULL, sc_ev_verdict, NO_PROGRAM, NO_PROGRAM),
    B("mark", B_MARK, 1, 1, kw_none, NULL, sc_ev_mark, NO_PROGRAM, NO_PROGRAM),
    B3("shape_env", B_SHAPE_ENV, 0, 0, sc_ev_shape_env, NULL, V3_XREF_23),   /* under 2.3 */
    B3("fake_cache", B_FAKE_CACHE, 0, 0, sc_ev_fake_cache, V3_STRESS, V3_XREF_23),
    B3("tracer", B_TRACER, 1, 1, sc_ev_tracer, NULL, V3_XREF_23),
    B3("inference_mode", B_INFERENCE_MODE, 1, 1, sc_ev_inference_mode, NULL, V3_XREF_214),
    B3("graph_module", B_GRAPH_MODULE, 0, 0, sc_ev_graph_module, V3_STRESS, NO_PROGRAM),
    B3("op_out", B_OP_OUT, 1, 1, sc_ev_op_out,
       "a recording's stand-in for an op's output: the generator writes the ops themselves",
       "a recording's stand-in: PyTorch makes an op's output by running the op"),

    /* methods: tensor ops */
    OP("view", 0, -1, kw_none, sc_ar_view, NULL, NULL),
    OP("reshape", 0, -1, kw_none, sc_ar_dims, NULL, NULL),
    OP("t", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("transpose", 2, 2, kw_none, sc_ar_dims, NULL, NULL),
    OP("slice", 3, 4, kw_slice, sc_ar_slice, NULL, NULL),
    OP("select", 2, 2, kw_none, sc_ar_dims, NULL, NULL),
    OP("narrow", 3, 3, kw_none, sc_ar_dims, NULL, NULL),
    OP("unsqueeze", 1, 1, kw_none, sc_ar_dims, NULL, NULL),
    OP("squeeze", 0, 1, kw_none, sc_ar_dims, NULL, NULL),
    OP("expand", 0, -1, kw_none, sc_ar_dims, NULL, NULL),
    OP("as_strided", 2, 3, kw_as_strided, sc_ar_as_strided, NULL, NULL),
    OP("diagonal", 0, 3, kw_diagonal, sc_ar_diagonal, NULL, NULL),
    OP("detach", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("view_as_real", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("view_as_complex", 0, 0, kw_none, sc_ar_dims,
       "the generator's view model has no real-to-complex rule yet (found by this table)",
       NULL),
    OP("neg_view", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("conj", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("clone", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("contiguous", 0, 0, kw_mfmt, sc_ar_contiguous, NULL, NULL),
    OP("to", 0, 1, kw_to, sc_ar_to, NULL, NULL),
    OP("add", 1, 1, kw_none, sc_ar_operand, NULL, NULL),
    OP("mul", 1, 1, kw_none, sc_ar_operand, NULL, NULL),
    OP("matmul", 1, 1, kw_none, sc_ar_tensor, NULL, NULL),
    OP("sum", 0, 1, kw_sum, sc_ar_sum, NULL, NULL),
    OP("add_", 1, 1, kw_none, sc_ar_operand, NULL, NULL),
    OP("mul_", 1, 1, kw_none, sc_ar_operand, NULL, NULL),
    OP("zero_", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("coalesce", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("to_dense", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("to_sparse", 0, 1, kw_to_sparse, sc_ar_to_sparse, NULL, NULL),
    OP("indices", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    OP("values", 0, 0, kw_none, sc_ar_dims, NULL, NULL),
    /* methods: queries and the rest */
    Q("numel", 0, 0, kw_none, NULL, NULL),
    Q("dim", 0, 0, kw_none, NULL, NULL),
    Q("storage_offset", 0, 0, kw_none, NULL, NULL),
    M("nbytes", MK_QUERY, 0, 0, kw_none, sc_ev_nbytes,
      "predicted as numel * itemsize, which numel() already checks (found by this table)",
      NULL),
    Q("is_view", 0, 0, kw_none, NULL, NULL),
    Q("is_sparse", 0, 0, kw_none, "follows from layout, checked by the invariants", NULL),
    Q("is_coalesced", 0, 0, kw_none,
      "the model does not predict coalescing of uncoalesced inputs", NULL),
    Q("requires_grad", 0, 0, kw_none,
      "grad flags are predicted through raises() of in-place ops only", NULL),
    Q("size", 0, 1, kw_none, NULL, NULL),
    Q("stride", 0, 1, kw_none,
      "strides are predicted internally (views) but not stated (found by this table)", NULL),
    M("fake", MK_FAKE, 1, 2, kw_fake, sc_ev_fake, NULL, NULL),
    M("meta", MK_META, 1, 1, kw_none, sc_ev_meta, NULL, NULL),
    M("sweep", MK_SWEEP, 0, 0, kw_none, sc_ev_sweep, NULL, NULL),
    M("get", MK_GET, 0, 0, kw_none, sc_ev_get, "weak handles are checked with alive()/dead()",
      NO_XREF_WEAK),
    /* version 2 */
    OP2("neg", 0, 0, kw_none, sc_ar_dims, V2_STRESS, NULL, 0),
    OP2("sub", 1, 1, kw_none, sc_ar_operand, V2_STRESS, NULL, 0),
    OP2("real", 0, 0, kw_none, sc_ar_dims, V2_STRESS, NULL, 0),
    OP2("imag", 0, 0, kw_none, sc_ar_dims, V2_STRESS, NULL, 0),
    /* not dispatched through the mode in PyTorch: real tensors may enter */
    OP2("requires_grad_", 0, 1, kw_none, sc_ar_dims, V2_STRESS, NULL, SWF_REAL_OK),
    OP2("set_", 1, 4, kw_none, sc_ar_set, NULL, NULL, 0),
    Q2("is_leaf", kw_none, V2_STRESS, NULL),
    Q2("is_fake", kw_none, V2_STRESS, NULL),
    Q2("is_meta", kw_none, V2_STRESS, NULL),
    Q2("is_neg", kw_none, V2_STRESS, NULL),
    Q2("is_conj", kw_none, V2_STRESS, NULL),
    Q2("is_inference", kw_none, "always false: nothing to predict", NULL),
    Q2("is_contiguous", kw_mfmt, V2_STRESS, NULL),
    M2("dtype", MK_VALUE, 0, 0, kw_none, sc_ev_dtype, V2_STRESS, NULL),
    M2("device", MK_VALUE, 0, 0, kw_none, sc_ev_device, V2_STRESS, NULL),
    M2("layout", MK_VALUE, 0, 0, kw_none, sc_ev_layout, V2_STRESS, NULL),
    M2("base", MK_VALUE, 0, 0, kw_none, sc_ev_base, V2_STRESS, NULL),
    M2("storage", MK_VALUE, 0, 0, kw_none, sc_ev_storage, NULL, NULL),
    M2("fake_mode", MK_VALUE, 0, 0, kw_none, sc_ev_fake_mode_of, V2_STRESS, NULL),
    /* version 3 */
    M3("constant", 0, sc_ev_constant, V3_STRESS, V3_XREF_CONST),
    M3("clear_non_cpu_constants", 0, sc_ev_clear_constants, V3_STRESS, V3_XREF_23),
    M3("clear_weakrefs", 0, sc_ev_clear_weakrefs, V3_STRESS, V3_XREF_23),
    M3("input", 1, sc_ev_input, NULL, V3_XREF_23),
    M3("finish", 0, sc_ev_finish, NULL, V3_XREF_23),
    M3("clear", 0, sc_ev_clear, V3_STRESS, V3_XREF_23),
    M3("item", 0, sc_ev_item, NULL, V3_XREF_214),

    /* attributes (A_USER, any other name, is not a row) */
    A("grad", A_GRAD, sc_ev_grad, NULL, NULL),
    A("memo_fake", A_MEMO_FAKE, sc_ev_counter, NULL, NULL),
    A("memo_meta", A_MEMO_META, sc_ev_counter, NULL, NULL),
    A("memo_storage", A_MEMO_STORAGE, sc_ev_counter, NULL, NULL),
    A("pending", A_PENDING, sc_ev_counter, NULL, NULL),
    A("hits", A_HITS, sc_ev_counter, NULL, NULL),
    A("misses", A_MISSES, sc_ev_counter, NULL, NULL),
    A("sweep_every", A_SWEEP_EVERY, sc_ev_counter, NULL, NULL),
    A("check_count", A_CHECK_COUNT, sc_ev_counter, NULL,
      "PyTorch's check_expired_count is not compared (xref's counters stop at sweep_every)"),
    A3("memo_tensor_ids", A_MEMO_TENSOR_IDS, sc_ev_counter, V3_STRESS, V3_XREF),
    A3("memo_storage_ids", A_MEMO_STORAGE_IDS, sc_ev_counter, V3_STRESS, V3_XREF),
    A3("memo_constants", A_MEMO_CONSTANTS, sc_ev_counter, V3_STRESS, V3_XREF_CONST),
    A3("cache_size", A_CACHE_SIZE, sc_ev_v3_attr, V3_STRESS, V3_XREF_23),
    A3("tracked", A_TRACKED, sc_ev_v3_attr, V3_STRESS, V3_XREF_23),
    A3("size", A_SIZE, sc_ev_v3_attr, V3_STRESS, V3_XREF_23),
    A3("bypasses", A_BYPASSES, sc_ev_v3_attr, V3_STRESS, V3_XREF_23),
    A3("unbacked", A_UNBACKED, sc_ev_v3_attr,
       "predicted through item()'s answers, which number the symbols", V3_XREF_214),
    A3("epoch", A_EPOCH, sc_ev_v3_attr,
       "predicted through item()'s answers after tracer(m)", V3_XREF_214),
    A3("symbols", A_SYMBOLS, sc_ev_v3_attr, V3_STRESS, V3_XREF_23),
};

#define NVOCAB (sizeof vocab / sizeof vocab[0])

/* Section starts, found once (the rows are grouped by kind). */
static size_t section(sc_wkind k)
{
    size_t i = 0;
    while (i < NVOCAB && vocab[i].kind != k)
        i++;
    return i;
}

static size_t count(sc_wkind k)
{
    size_t n = 0;
    for (size_t i = 0; i < NVOCAB; i++)
        n += vocab[i].kind == k;
    return n;
}

const sc_word *sc_vocab(size_t *n)
{
    *n = NVOCAB;
    return vocab;
}

const sc_word *sc_builtin_row(int b)
{
    return (unsigned)b < B_COUNT ? &vocab[b] : NULL;
}

size_t sc_nmethods(void) { return count(SW_METHOD); }
const sc_word *sc_method_row(int m) { return &vocab[section(SW_METHOD) + (size_t)m]; }
size_t sc_nattrs(void) { return count(SW_ATTR); }
const sc_word *sc_attr_row(int a) { return &vocab[section(SW_ATTR) + (size_t)a]; }

const sc_word *sc_attr_word(int id)
{
    for (size_t i = section(SW_ATTR); i < NVOCAB; i++)
        if (vocab[i].id == id)
            return &vocab[i];
    return NULL;
}

const char *sc_wkind_name(int k)
{
    return k == SW_BUILTIN ? "function" : k == SW_METHOD ? "method" : "attribute";
}

void sc_list_words(FILE *f)
{
    for (size_t i = 0; i < NVOCAB; i++) {
        const sc_word *w = &vocab[i];
        fprintf(f, "%s\t%s\t%d\t%s%s\t%s%s\t", w->name, sc_wkind_name(w->kind),
                w->version, w->no_stress ? "no: " : "yes", w->no_stress ? w->no_stress : "",
                w->no_xref ? "no: " : "yes", w->no_xref ? w->no_xref : "");
        for (int k = 0; w->kw[k]; k++)
            fprintf(f, "%s%s", k ? "," : "", w->kw[k]);
        fprintf(f, "%s\n", w->kw[0] ? "" : "-");
    }
}
