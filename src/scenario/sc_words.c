/* sc_words.c - the vocabulary of the scenario language: one row per word
 * (in the manner of Lua's luaL_Reg rows), read by the parser (names,
 * kinds, arity of built-ins, keyword arguments), the interpreter's dispatch
 * (kind, query id) and `fakegc list words`. Each row also says whether
 * `fakegc stress` generates the word and whether scripts/xref translates
 * it, and why not when it does not: tests/scenario/check_vocab.py fails
 * when the generator, the translator or the fuzz dictionary lacks a word
 * without a reason here. The table is syntax only: the stress model keeps
 * its own semantics. */
#include "scenario/sc_int.h"

#include <stdio.h>
#include <string.h>

static const char *const kw_tensor_ctor[] = {"dtype", "device", "requires_grad", NULL};
static const char *const kw_empty[] = {"dtype", "device", "requires_grad", "memory_format",
                                       NULL};
static const char *const kw_coo[] = {"nnz", "sparse_dim", "dtype", "device", "coalesced", NULL};
static const char *const kw_csr[] = {"nnz", "dtype", "device", NULL};
static const char *const kw_mode[] = {"sweep", "sweep_every", NULL};
static const char *const kw_live[] = {"kind", NULL};
static const char *const kw_none[] = {NULL};
static const char *const kw_slice[] = {"step", NULL};
static const char *const kw_as_strided[] = {"offset", NULL};
static const char *const kw_to[] = {"device", "dtype", NULL};
static const char *const kw_sum[] = {"dim", NULL};
static const char *const kw_to_sparse[] = {"sparse_dim", NULL};
static const char *const kw_diagonal[] = {"offset", NULL};
static const char *const kw_fake[] = {"device", NULL};
static const char *const kw_mfmt[] = {"memory_format", NULL};

#define NO_XREF_CENSUS "fakegc's census has no PyTorch equivalent"
#define NO_XREF_WEAK "weak handles are not translated"
#define V2_STRESS "version 2: not generated yet (scenarios/v2 and xref cover it)"

/* name, kind, method kind, id, min, max, keywords, version, no_stress, no_xref */
#define B(n, id, lo, hi, kw, ns, nx) {n, SW_BUILTIN, 0, id, lo, hi, kw, 1, ns, nx}
#define B2(n, id, lo, hi, kw, ns, nx) {n, SW_BUILTIN, 0, id, lo, hi, kw, 2, ns, nx}
#define M(n, mk, lo, hi, kw, ns, nx) {n, SW_METHOD, mk, 0, lo, hi, kw, 1, ns, nx}
#define M2(n, mk, id, lo, hi, kw, ns, nx) {n, SW_METHOD, mk, id, lo, hi, kw, 2, ns, nx}
#define A(n, id, ns, nx) {n, SW_ATTR, 0, id, 0, 0, kw_none, 1, ns, nx}

static const sc_word vocab[] = {
    /* built-in functions, in sc_builtin order */
    B("empty", B_EMPTY, 0, -1, kw_empty, NULL, NULL),
    B("zeros", B_ZEROS, 0, -1, kw_tensor_ctor, NULL, NULL),
    B("ones", B_ONES, 0, -1, kw_tensor_ctor, NULL, NULL),
    B("rand", B_RAND, 0, -1, kw_tensor_ctor, NULL, NULL),
    B("empty_strided", B_EMPTY_STRIDED, 2, 2, kw_tensor_ctor, NULL, NULL),
    B("sparse_coo", B_SPARSE_COO, 0, -1, kw_coo, NULL, NULL),
    B("sparse_csr", B_SPARSE_CSR, 2, 2, kw_csr, NULL, NULL),
    B("quantized", B_QUANTIZED, 0, -1, kw_none, NULL, NULL),
    B("fake_mode", B_FAKE_MODE, 0, 0, kw_mode, NULL, NULL),
    B("meta_converter", B_META_CONVERTER, 0, 0, kw_mode, NULL, NULL),
    B("weakref", B_WEAKREF, 1, 1, kw_none, NULL, NO_XREF_WEAK),
    B("gc", B_GC, 0, 0, kw_none, NULL, NULL),
    B("live", B_LIVE, 0, 1, kw_live, NULL, NO_XREF_CENSUS),
    B("bytes", B_BYTES, 0, 0, kw_none, NULL, NO_XREF_CENSUS),
    B("heap_bytes", B_HEAP_BYTES, 0, 0, kw_none,
      "allocator totals depend on the allocator; bytes() is checked instead", NO_XREF_CENSUS),
    B("unreachable", B_UNREACHABLE, 0, 0, kw_none, NULL, NO_XREF_CENSUS),
    B("stale", B_STALE, 0, 0, kw_none, "the invariant checks see stale entries directly",
      NO_XREF_CENSUS),
    B("growth", B_GROWTH, 1, 1, kw_none, "lifecycles have no checkpoints", NO_XREF_CENSUS),
    B("alive", B_ALIVE, 1, 1, kw_none, NULL, NO_XREF_WEAK),
    B("dead", B_DEAD, 1, 1, kw_none, NULL, NO_XREF_WEAK),
    B("raises", B_RAISES, 2, 2, kw_none, NULL, NULL),
    B2("fake_converter", B_FAKE_CONVERTER, 0, 0, kw_mode, NULL, NULL),

    /* methods; arity of tensor ops is ts_op_arity's, checked when run */
    M("view", MK_OP, 0, -1, kw_none, NULL, NULL),
    M("reshape", MK_OP, 0, -1, kw_none, NULL, NULL),
    M("t", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("transpose", MK_OP, 2, 2, kw_none, NULL, NULL),
    M("slice", MK_OP, 3, 4, kw_slice, NULL, NULL),
    M("select", MK_OP, 2, 2, kw_none, NULL, NULL),
    M("narrow", MK_OP, 3, 3, kw_none, NULL, NULL),
    M("unsqueeze", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("squeeze", MK_OP, 0, 1, kw_none, NULL, NULL),
    M("expand", MK_OP, 0, -1, kw_none, NULL, NULL),
    M("as_strided", MK_OP, 2, 3, kw_as_strided, NULL, NULL),
    M("diagonal", MK_OP, 0, 3, kw_diagonal, NULL, NULL),
    M("detach", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("view_as_real", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("view_as_complex", MK_OP, 0, 0, kw_none,
      "the generator's view model has no real-to-complex rule yet (found by this table)",
      NULL),
    M("neg_view", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("conj", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("clone", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("contiguous", MK_OP, 0, 0, kw_mfmt, NULL, NULL),
    M("to", MK_OP, 0, 1, kw_to, NULL, NULL),
    M("add", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("mul", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("matmul", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("sum", MK_OP, 0, 1, kw_sum, NULL, NULL),
    M("add_", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("mul_", MK_OP, 1, 1, kw_none, NULL, NULL),
    M("zero_", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("coalesce", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("to_dense", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("to_sparse", MK_OP, 0, 1, kw_to_sparse, NULL, NULL),
    M("indices", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("values", MK_OP, 0, 0, kw_none, NULL, NULL),
    M("numel", MK_QUERY, 0, 0, kw_none, NULL, NULL),
    M("dim", MK_QUERY, 0, 0, kw_none, NULL, NULL),
    M("storage_offset", MK_QUERY, 0, 0, kw_none, NULL, NULL),
    M("nbytes", MK_QUERY, 0, 0, kw_none,
      "predicted as numel * itemsize, which numel() already checks (found by this table)",
      NULL),
    M("is_view", MK_QUERY, 0, 0, kw_none, NULL, NULL),
    M("is_sparse", MK_QUERY, 0, 0, kw_none, "follows from layout, checked by the invariants",
      NULL),
    M("is_coalesced", MK_QUERY, 0, 0, kw_none,
      "the model does not predict coalescing of uncoalesced inputs", NULL),
    M("requires_grad", MK_QUERY, 0, 0, kw_none,
      "grad flags are predicted through raises() of in-place ops only", NULL),
    M("size", MK_QUERY, 0, 1, kw_none, NULL, NULL),
    M("stride", MK_QUERY, 0, 1, kw_none,
      "strides are predicted internally (views) but not stated (found by this table)", NULL),
    M("fake", MK_FAKE, 1, 2, kw_fake, NULL, NULL),
    M("meta", MK_META, 1, 1, kw_none, NULL, NULL),
    M("sweep", MK_SWEEP, 0, 0, kw_none, NULL, NULL),
    M("get", MK_GET, 0, 0, kw_none, "weak handles are checked with alive()/dead()",
      NO_XREF_WEAK),
    /* version 2 */
    M2("neg", MK_OP, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("sub", MK_OP, 0, 1, 1, kw_none, V2_STRESS, NULL),
    M2("real", MK_OP, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("imag", MK_OP, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("requires_grad_", MK_OP, 0, 0, 1, kw_none, V2_STRESS, NULL),
    M2("set_", MK_OP, 0, 1, 4, kw_none, NULL, NULL),
    M2("is_leaf", MK_QUERY, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("is_fake", MK_QUERY, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("is_meta", MK_QUERY, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("is_neg", MK_QUERY, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("is_conj", MK_QUERY, 0, 0, 0, kw_none, V2_STRESS, NULL),
    M2("is_inference", MK_QUERY, 0, 0, 0, kw_none, "always false: nothing to predict", NULL),
    M2("is_contiguous", MK_QUERY, 0, 0, 0, kw_mfmt, V2_STRESS, NULL),
    M2("dtype", MK_VALUE, VQ_DTYPE, 0, 0, kw_none, V2_STRESS, NULL),
    M2("device", MK_VALUE, VQ_DEVICE, 0, 0, kw_none, V2_STRESS, NULL),
    M2("layout", MK_VALUE, VQ_LAYOUT, 0, 0, kw_none, V2_STRESS, NULL),
    M2("base", MK_VALUE, VQ_BASE, 0, 0, kw_none, V2_STRESS, NULL),
    M2("storage", MK_VALUE, VQ_STORAGE, 0, 0, kw_none, NULL, NULL),
    M2("fake_mode", MK_VALUE, VQ_FAKE_MODE, 0, 0, kw_none, V2_STRESS, NULL),

    /* attributes */
    A("grad", A_GRAD, NULL, NULL),
    A("memo_fake", A_MEMO_FAKE, NULL, NULL),
    A("memo_meta", A_MEMO_META, NULL, NULL),
    A("memo_storage", A_MEMO_STORAGE, NULL, NULL),
    A("pending", A_PENDING, NULL, NULL),
    A("hits", A_HITS, NULL, NULL),
    A("misses", A_MISSES, NULL, NULL),
    A("sweep_every", A_SWEEP_EVERY, NULL, NULL),
    A("check_count", A_CHECK_COUNT, NULL,
      "PyTorch's check_expired_count is not compared (xref's counters stop at sweep_every)"),
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
