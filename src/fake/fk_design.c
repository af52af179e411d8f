/* fk_design.c - the memo designs as one table (designs.md). The fake layer
 * reads the current design's row; it has no `if (compat == ...)`.
 *
 * Sources (pytorch/pytorch unless said), cited as file@commit:line:
 *   fake_tensor.py@1.13.1  Debian python3-torch 1.13.1+dfsg-4
 *   fake_tensor.py@6ec61862 DeepLink-org/pytorch 6ec618622954458bf1afe3bb3ef79f94f99f0cd9 (2.0-2.1)
 *   meta_utils.py@003dca52  003dca52773ade8fdcb6e05f932b8f7212354201 (2.1-2.2)
 *   meta_utils.py@0f315d37  0f315d37a4534a9a3a796b845cb3ac4a0e647034 (2.3+)
 *   fake_tensor.py@946abe14 946abe145c61e0b6b807d209e0ac0896b4143a00 (2.3-2.4)
 *   weak.py@03e156b8        torch/utils/weak.py 03e156b8e50a6df611ff81db21cc79b3d2aecd5e (2.x)
 *   collect_metadata_analysis.py@95bc63ca torch/_functorch/_aot_autograd/
 *                           95bc63ca296368841b81c66104f4bed68f5c8338
 *   meta_utils.py, fake_impls.py, fake_tensor.py @v2.6.0, @v2.14.1
 *                           the files that ran (Debian python3-torch
 *                           2.6.0+dfsg trixie, 2.14.1 forky: the roots of
 *                           scripts/torch-root.sh; scripts/xref compares)
 *   python_variable.cpp@00131b6b torch/csrc/autograd/
 *                           00131b6bd4bedfa71eb27b407292be0ba45e5ee8
 */
#include <stdio.h>
#include <string.h>

#include "core/er.h"
#include "fake/fk_internal.h"

/* 1.13's tables (the default design's too). The storage memo is cleared by
 * the key's death under the eager policy and by the sweep under the periodic
 * one (a mode's policy picks); del_ten pops an expired storage's entry. */
#define T_113_TENSOR_MEMO {1, FK_KEY_TENSOR, 0, FK_CLR_FINALIZER}
#define T_1X_STORAGE_MEMO {1, FK_KEY_STORAGE, 0, FK_CLR_KEY | FK_CLR_SWEEP | FK_CLR_FINALIZER}
#define T_113_FAKE_MEMO {1, FK_KEY_TENSOR, 1, FK_CLR_FINALIZER | FK_CLR_VALUE}
#define T_113_TABLES                                                                       \
    {[FK_T_TENSOR_MEMO] = T_113_TENSOR_MEMO, [FK_T_STORAGE_MEMO] = T_1X_STORAGE_MEMO,        \
     [FK_T_FAKE_MEMO] = T_113_FAKE_MEMO}

/* 2.3's four weak tables, unchanged through 2.14 */
#define T_23_TABLES                                                                         \
    {                                                                                       \
        /* meta_utils.py@0f315d37:793-795: WeakValueDictionary[MetaTensorId, fake] */     \
        [FK_T_TENSOR_MEMO] = {1, FK_KEY_TENSOR_ID, 1, FK_CLR_VALUE},                        \
        /* :788-790: WeakValueDictionary[MetaStorageId, UntypedStorage] */                 \
        [FK_T_STORAGE_MEMO] = {1, FK_KEY_STORAGE_ID, 1, FK_CLR_VALUE},                      \
        /* :241-243 WeakIdKeyDictionary: each key's callback removes its                   \
         * entry (weak.py@03e156b8:91-99,149-150); ids from a counter,                    \
         * never reused (:214,248-258) */                                                  \
        [FK_T_LOOKUP_TENSOR] = {1, FK_KEY_TENSOR, 0, FK_CLR_KEY},                           \
        [FK_T_LOOKUP_STORAGE] = {1, FK_KEY_STORAGE, 0, FK_CLR_KEY},                         \
    }

/* base_held_from_cpp, every PyTorch row: python_variable.cpp@00131b6b
 * THPVariable_subclass_traverse returns at once, visiting nothing, when
 * isResurrectable(var) - the PyObject owns its tensor and the TensorImpl's
 * use_count() > 1 ("treat all of its references as a root"); a view's
 * ViewInfo holds its base's TensorImpl from C++, so a base is such a tensor
 * while a view of it lives, and the view -> base reference is no edge
 * Python's gc sees. The rule is older than 1.13 (the same test inline in
 * THPVariable_subclass_traverse before isResurrectable, pytorch#75933).
 * Checked on Debian's 1.13.1 (tests/record/probe_make_fx.py
 * base_cycle_kept, a ctest) and with the same function on 2.6.0 and
 * 2.14.1: a holder that a tensor's __dict__ and a view of it share
 * survives gc.collect(); with a clone instead of the view it dies.
 * The 2.x rows have it too: 2.6.0 and 2.14.1 keep such a cycle of fakes
 * (tests/record/probe_view_base.py@4d95fd9, run under each root by the
 * ctests torch2_trixie_probe_view_base and torch2_forky_probe_view_base:
 * x a fake, x.h = holder, holder.v = x.t(); the holder and x survive
 * gc.collect(), not with x.clone(); scenarios/designs/view_base_cpp_23.scn,
 * _214.scn), though 2.x's make_fx builds none (its set_proxy_slot keys the
 * proxy weakly by the fake, in the tracer's tensor_tracker). Stress's model
 * keeps a live view's base as a root in its collections (st_model.c
 * m_gc_gen; stress_clean_pytorch_*_view_base), and its generator makes no
 * cycle through a view's base (attr_may_leak, input_may_leak in st_gen.c).
 * fakegc's own design leaves it out (a cycle through a view is garbage). */
#define BASE_HELD_FROM_CPP 1

static const fk_design designs[FK_D_COUNT] = {
    [FK_D_DEFAULT] = {
        .name = "default",
        .what = "fakegc's design: 1.13's tables, eager storage policy, "
                "without 1.13.1's _fix_weakref leak",
        .brief = "1.13's tables, eager, no _fix_weakref leak",
        .policy = FK_SWEEP_EAGER,
        .fake_memo = 1,
        .fix_weakref_leak = 0,
        .tables = T_113_TABLES,
    },
    [FK_D_1_13] = {
        .name = "pytorch-1.13",
        .what = "PyTorch 1.13.1: two tensor memos, periodic sweep every 128, "
                "and its _fix_weakref leak (a fake memo hit makes the fake immortal)",
        .policy = FK_SWEEP_PERIODIC,
        /* fake_tensor.py@1.13.1: FakeTensorConverter.tensor_memo, a
         * WeakValueDictionary of its own next to the MetaConverter's */
        .fake_memo = 1,
        /* fake_tensor.py@1.13.1 _get_memo: `out._fix_weakref()` on a hit;
         * measured on Debian's 1.13.1: the fake and its mode survive every
         * `del` and gc.collect() (fixed by pytorch#90823) */
        .fix_weakref_leak = 1,
        /* meta_utils.py@1.13.1 (Debian, lines 206-236): a view is
         * `base.as_strided(...)` under enable_grad and nothing more, so
         * the meta of a non-leaf view of a leaf view that requires grad is
         * a leaf that does not (checked on 1.13.1: x = rand(8);
         * y = x.view(2, 4); y.requires_grad_(); MetaConverter()(y.view(2, 2, 2))
         * gives requires_grad False, is_leaf True) */
        .view_flags_from_base = 1,
        .base_held_from_cpp = BASE_HELD_FROM_CPP,
        .tables = T_113_TABLES,
    },
    [FK_D_2_0] = {
        .name = "pytorch-2.0",
        .what = "PyTorch 2.0-2.2: one tensor memo (the MetaConverter's) with weak "
                "fake values, one finalizer per entry, fakes of views are views, "
                "storage memo and periodic sweep kept",
        /* meta_utils.py@003dca52:130-134: sweep_every 128, check_count 0 */
        .policy = FK_SWEEP_PERIODIC,
        /* fake_tensor.py@6ec61862:181: FakeTensorConverter.tensor_memo is
         * its MetaConverter's; the fake is built inside the MetaConverter
         * by a callback, so the memo's values are fakes */
        .fake_memo = 0,
        /* meta_utils.py@003dca52:131: tensor_memo = WeakIdKeyDictionary of
         * weak values: an entry never keeps its fake alive */
        .memo_values_weak = 1,
        /* meta_utils.py@003dca52:355,438: a view converts its base first and
         * its fake is made off the base's fake, so it is a view of it */
        .fakes_are_views = 1,
        /* meta_utils.py@003dca52 MetaConverter.__call__: a rejected tensor
         * is `self.miss += 1; return NotImplemented` (1.13.1: `return t`),
         * as 2.6.0 and 2.14.1 ran it (2.3's row) */
        .meta_miss_none = 1,
        /* pytorch#90823 fixed it before 2.0: _get_memo still calls
         * _fix_weakref on a hit (fake_tensor.py@6ec61862:225), harmlessly */
        .fix_weakref_leak = 0,
        .base_held_from_cpp = BASE_HELD_FROM_CPP,
        .tables = {
            /* meta_utils.py@003dca52:131: WeakIdKeyDictionary with weak
             * values; del_ten (:169-198) pops it when the tensor dies */
            [FK_T_TENSOR_MEMO] = {1, FK_KEY_TENSOR, 1, FK_CLR_FINALIZER | FK_CLR_VALUE},
            /* :132,143-161,182-195: StorageWeakRef keys, pending, sweep */
            [FK_T_STORAGE_MEMO] = T_1X_STORAGE_MEMO,
        },
    },
    [FK_D_2_3] = {
        .name = "pytorch-2.3",
        .what = "PyTorch 2.3 and later: a MetaTensorDescriber gives never-reused ids to "
                "real tensors and storages, id -> fake and id -> meta storage tables with "
                "weak values; no finalizers, no pending list, no sweep",
        /* no sweep at all; the policy only names what modes report */
        .policy = FK_SWEEP_EAGER,
        /* fake_tensor.py@946abe14:227: the converter's tensor_memo is its
         * MetaConverter's; the callback mk_fake_tensor builds fakes (:314-330) */
        .fake_memo = 0,
        .memo_values_weak = 1,
        /* meta_utils.py@0f315d37:1587 (base first), :1205 (as_strided off
         * the base's fake) */
        .fakes_are_views = 1,
        .fix_weakref_leak = 0,
        /* fake_tensor.py@946abe14:1869,417-428: dispatched outputs go
         * through from_meta_and_device, which memoizes under a fresh id
         * (:276-278 set_tensor_memo -> describer.get_tensor_id) */
        .op_outputs_memoized = 1,
        /* meta_utils.py@v2.6.0:1689-1697: a non-view whose storage is not
         * memoized and whose geometry empty_strided gives (offset 0) keeps
         * that fresh storage, the tensor's extent; else (:1712,1744)
         * r.set_(meta_storage(s), ...): meta_storage (:787-807) is the real
         * storage's size when new, and set_ on meta grows, never shrinks.
         * Run on 2.6.0 and 2.14.1 by scripts/xref
         * (scenarios/v2/meta_storage_extent.scn:14,18: 16 and 32 bytes
         * where 1.13.1 says 8 and 24) */
        .meta_storage_size = FK_MS_GROWS,
        /* fake_tensor.py@v2.6.0:2443-2451 validate_and_convert_non_fake_tensors:
         * a FakeTensor whose fake_mode is not the dispatching mode raises
         * AssertionError("Mixing fake modes NYI"); 1.13.1 wraps the output
         * as the active mode's. Run on 2.6.0 and 2.14.1 by scripts/xref
         * (scenarios/v2/with_real_inputs.scn:26; fake_tensor.py@v2.14.1:3284):
         * scripts/xref/xref.py@8fe2bf2 --python trixie-python3 --python
         * forky-python3 on it and scenarios/memo/hits_misses.scn gives 0
         * mismatches per version, 2 with this rule and meta_miss_none off
         * (line 26 here, line 13 there). Stress emits no op that raises it
         * (st_gen.c foreign_in_with) */
        .foreign_fakes_raise = 1,
        /* meta_utils.py@v2.6.0:1819-1840 (@v2.14.1:2347-2370): a rejected
         * tensor (quantized, lazy, a view of a sparse base) is a miss
         * answered NotImplemented; run on 2.6.0 and 2.14.1 by scripts/xref
         * (scenarios/memo/hits_misses.scn:13: mode.meta(quantized(2)) has
         * no is_sparse; the xref run of foreign_fakes_raise). Stress's model
         * answers none there (st_model.c m_meta_convert, mmode.metanone) */
        .meta_miss_none = 1,
        /* meta_utils.py@v2.6.0:1318-1345 (@v2.14.1:1621-1660): a sparse
         * compressed tensor becomes _sparse_compressed_tensor_with_dims(0,
         * ...) on meta; checked by scripts/xref (04_unsupported.scn) on
         * 2.6.0 and 2.14.1: the CSR converts, a hit, its fake memoized */
        .csr_converts = 1,
        /* measured on 2.6.0 and 2.14.1 (not on 1.13.1, nor on real
         * tensors): after `with m: u = z.unsqueeze(0); y = u.expand(...)`,
         * or u = f.view(16); y = u.view(2, 8), u lives while y does, with no
         * Python referrer (autograd's view chain, torch/csrc/autograd/
         * variable.cpp ViewInfo::chain, keeps it for a tensor subclass that
         * replays views by function); scripts/xref 09_with_mode_ops.scn */
        .views_keep_source = 1,
        /* measured on 2.6.0 (not 2.14.1): a StorageWeakRef keeps the
         * storage's Python object, so the constant map's ref
         * (fake_tensor.py@v2.6.0 add_constant_storage_mapping) keeps its
         * describer.lookup_storage entry after the constant died
         * (tests/record/probe_const_storage.py@8b31d85; make_fx_aot's
         * PhiloxState seeds, torch.tensor(()) under the mode; run under
         * the trixie root by the ctest torch2_trixie_probe_const_storage:
         * ids left 1, 1, 0; scenarios/designs/const_storage_kept_23.scn).
         * Stress's model keeps the same map (st_model.c mmode.cmap) */
        .const_storage_kept = 1,
        .base_held_from_cpp = BASE_HELD_FROM_CPP,
        .tables = T_23_TABLES,
    },
    [FK_D_2_14] = {
        .name = "pytorch-2.14",
        .what = "PyTorch 2.14: 2.3's tables, plus the lifecycle added since: item() memos "
                "checked against the version counter and the mode's epoch and not stored "
                "in inference mode, a full collection after each compile, constant_scalar "
                "cleared with constant",
        .policy = FK_SWEEP_EAGER,
        .fake_memo = 0,
        .memo_values_weak = 1,
        .fakes_are_views = 1,
        .fix_weakref_leak = 0,
        .op_outputs_memoized = 1,
        /* meta_utils.py@v2.14.1:2115-2149: the fresh storage of the
         * empty_strided path is resized to the real storage's size too
         * (storage_needs_resize); else as 2.3's (:2201,2237). Run on 2.14.1
         * by scripts/xref (meta_storage_extent.scn:8: 16 bytes, 2.6.0: 8) */
        .meta_storage_size = FK_MS_REAL,
        .foreign_fakes_raise = 1,   /* as 2.3's */
        .meta_miss_none = 1,        /* as 2.3's (meta_utils.py@v2.14.1:2362-2370) */
        .csr_converts = 1,          /* as 2.3's (meta_utils.py@v2.14.1:1621-1660) */
        /* fake_impls.py@v2.14.1:272-303 constructors(): a meta result goes
         * through fake_tensor_converter.from_meta_and_device, which
         * memoizes it (fake_tensor.py@v2.14.1:681-702, set_tensor_memo);
         * fake_impls.py@v2.6.0:190 returned FakeTensor(fake_mode, r,
         * out_device), no entry. Checked by scripts/xref on 2.14.1
         * (09_with_mode_ops.scn: `with m` + zeros(2, 3)). A recording
         * writes an op's output that PyTorch did not memoize as
         * op_out(CTOR), which no design memoizes */
        .ctor_outputs_memoized = 1,
        .views_keep_source = 1,     /* as 2.3's (measured on 2.14.1) */
        .base_held_from_cpp = BASE_HELD_FROM_CPP,
        /* fake_tensor.py@946abe14 UnbackedMemoDescriptor.__get__ (a memo
         * is answered only while obj._version and obj.fake_mode.epoch are
         * those it was stored at; pytorch#125623, #124394) and __set__
         * (nothing stored while torch.is_inference_mode_enabled(),
         * pytorch#122147); the epoch bumped per retrace
         * (collect_metadata_analysis.py@95bc63ca, "prevent memoization from
         * applying"; pytorch#154647, #185499) */
        .unbacked_memo = 1,
        /* torch._dynamo.config.run_gc_after_compile: gc.collect(1) after a
         * compile (pytorch#142519), a full gc.collect() since #184969 */
        .post_compile_gc = FK_PCGC_FULL,
        /* pytorch#177496: FakeTensor keeps a 0-d CPU constant for
         * __bool__/item(); untyped_storage() clears constant (a nested
         * mode may write through the storage); the design clears the
         * scalar with it */
        .constant_scalar = 1,
        /* checked on PyTorch 2.14.1 (tests/designs/real_2_14.py): the memo
         * rules hold, but 2.14.1 memoizes in inference mode too, collects
         * gc.collect(1) after a compile and has no constant_scalar: as
         * shipped it is this row with young-gc-after-compile and
         * inference-memo injected, less the constant_scalar rows */
        /* unchanged since 2.3 (meta_utils.py@0f315d37:788-795,241-243); the
         * describer tables cleared after compile (pytorch#165367, #171209)
         * and ShapeEnv-cached symbolic keys (#127596, #152037) are 2.3's
         * finish() and dispatch-cache rows (fk_cache.c); the finalizers
         * that evict id-hashed cache keys (#149087) have no form here: the
         * language has no GraphModule argument */
        .tables = T_23_TABLES,
    },
};

static const fk_table_spec no_table;

const fk_table_spec *fk_design_table(const fk_design *d, fk_table_id t)
{
    return d && t >= 0 && t < FK_T_COUNT ? &d->tables[t] : &no_table;
}

int fk_design_has_finalizers(const fk_design *d)
{
    for (int t = 0; t < FK_T_COUNT; t++)
        if (d->tables[t].exists && (d->tables[t].clears & FK_CLR_FINALIZER))
            return 1;
    return 0;
}

int fk_design_sweeps(const fk_design *d)
{
    return (d->tables[FK_T_STORAGE_MEMO].clears & FK_CLR_SWEEP) != 0;
}

const fk_design *fk_design_get(fk_design_id id)
{
    return id >= 0 && id < FK_D_COUNT && designs[id].name ? &designs[id] : NULL;
}

int fk_design_from_name(const char *s, fk_design_id *out)
{
    for (int i = 0; i < FK_D_COUNT; i++)
        if (designs[i].name && strcmp(designs[i].name, s) == 0 && i != FK_D_DEFAULT) {
            *out = (fk_design_id)i;
            return 0;
        }
    return -1;
}

size_t fk_design_names(char *buf, size_t n)
{
    size_t w = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < FK_D_COUNT; i++) {
        if (!designs[i].name || i == FK_D_DEFAULT)
            continue;
        int k = snprintf(buf + w, n > w ? n - w : 0, "%s%s", w ? ", " : "",
                         designs[i].name);
        if (k > 0)
            w += (size_t)k;
    }
    return w;
}

static fk_design_id current = FK_D_DEFAULT;

void fk_design_set(fk_design_id id)
{
    current = fk_design_get(id) ? id : FK_D_DEFAULT;
    ts_set_base_hidden(designs[current].base_held_from_cpp);
}

fk_design_id fk_design_current(void) { return current; }

const fk_design *fk_design_now(void) { return &designs[current]; }

static const char *const table_names[FK_T_COUNT] = {
    "tensor_memo", "storage_memo", "fake memo", "lookup_tensor", "lookup_storage",
};

/* One table's rules: what it keys on allows the deaths that clear it. */
static int verify_table(const fk_design *d, fk_table_id t, char *why, size_t n)
{
    const fk_table_spec *s = &d->tables[t];
    const char *tn = table_names[t];
    int by_id = s->key == FK_KEY_TENSOR_ID || s->key == FK_KEY_STORAGE_ID;
    int lookup = t == FK_T_LOOKUP_TENSOR || t == FK_T_LOOKUP_STORAGE;
    const char *bad = NULL;
    if (s->key == FK_KEY_NONE || s->key > FK_KEY_STORAGE_ID)
        bad = "no key kind";
    else if (!s->clears)
        bad = "nothing ever clears an entry";
    else if (!!(s->clears & FK_CLR_VALUE) != s->value_weak)
        bad = "a value death clears it iff its values are weak";
    else if (by_id && (s->clears & (FK_CLR_KEY | FK_CLR_FINALIZER | FK_CLR_SWEEP)))
        bad = "keyed by ids, which never die, yet cleared by a key's death";
    else if ((s->clears & FK_CLR_SWEEP) && (t != FK_T_STORAGE_MEMO || s->key != FK_KEY_STORAGE))
        bad = "swept, but not the storage memo keyed by storages";
    else if (lookup && (s->key != (t == FK_T_LOOKUP_TENSOR ? FK_KEY_TENSOR : FK_KEY_STORAGE) ||
                        s->clears != FK_CLR_KEY || s->value_weak))
        bad = "a describer table maps its real objects to ids, cleared by their death";
    else if (s->key == FK_KEY_TENSOR_ID && !d->tables[FK_T_LOOKUP_TENSOR].exists)
        bad = "keyed by tensor ids without lookup_tensor";
    else if (s->key == FK_KEY_STORAGE_ID && !d->tables[FK_T_LOOKUP_STORAGE].exists)
        bad = "keyed by storage ids without lookup_storage";
    if (bad) {
        snprintf(why, n, "design %s: %s: %s", d->name, tn, bad);
        return -1;
    }
    return 0;
}

static int verify_tables(const fk_design *d, char *why, size_t n)
{
    if (!d->tables[FK_T_TENSOR_MEMO].exists || !d->tables[FK_T_STORAGE_MEMO].exists) {
        snprintf(why, n, "design %s: no tensor or storage memo", d->name);
        return -1;
    }
    for (int t = 0; t < FK_T_COUNT; t++)
        if (d->tables[t].exists && verify_table(d, (fk_table_id)t, why, n) != 0)
            return -1;
    const char *bad = NULL;
    if (d->fake_memo != d->tables[FK_T_FAKE_MEMO].exists)
        bad = "fake_memo disagrees with its tables";
    else if (d->memo_values_weak != d->tables[FK_T_TENSOR_MEMO].value_weak)
        bad = "memo_values_weak disagrees with its tensor memo";
    else if (d->policy == FK_SWEEP_PERIODIC && !fk_design_sweeps(d))
        bad = "a periodic policy without a sweep";
    else if (d->op_outputs_memoized && (d->fake_memo || !d->memo_values_weak))
        bad = "op outputs memoized outside one memo of weak fakes";
    else if (d->tables[FK_T_TENSOR_MEMO].key == FK_KEY_TENSOR_ID &&
             d->tables[FK_T_STORAGE_MEMO].key != FK_KEY_STORAGE_ID)
        bad = "tensor ids with a storage memo keyed by storages";
    if (bad) {
        snprintf(why, n, "design %s: %s", d->name, bad);
        return -1;
    }
    return 0;
}

int fk_design_verify(fk_design_id id, char *why, size_t n)
{
    const fk_design *d = fk_design_get(id);
    if (!d) {
        snprintf(why, n, "design %d: no such row", (int)id);
        return -1;
    }
    return fk_design_check(d, why, n);
}

int fk_design_check(const fk_design *d, char *why, size_t n)
{
    if (!d->what || !*d->what) {
        snprintf(why, n, "design %s: no description", d->name);
        return -1;
    }
    if (d->policy != FK_SWEEP_EAGER && d->policy != FK_SWEEP_PERIODIC) {
        snprintf(why, n, "design %s: policy %d", d->name, (int)d->policy);
        return -1;
    }
    /* one memo: its values are fakes, which it must not keep alive */
    if (!d->fake_memo && !d->memo_values_weak) {
        snprintf(why, n, "design %s: one memo with strong fake values", d->name);
        return -1;
    }
    /* a fake view holds its base's fake: only where fakes are memo values */
    if (d->fakes_are_views && d->fake_memo) {
        snprintf(why, n, "design %s: fake views with a memo of fakes apart", d->name);
        return -1;
    }
    /* an item() memo is made on a fake of a mode with a ShapeEnv: 2.3's
     * describer tables and no fake memo of the converter's own */
    if (d->unbacked_memo && (d->fake_memo || !d->tables[FK_T_LOOKUP_TENSOR].exists)) {
        snprintf(why, n, "design %s: unbacked memos without 2.3's tables", d->name);
        return -1;
    }
    if (d->post_compile_gc > FK_PCGC_FULL) {
        snprintf(why, n, "design %s: post_compile_gc %d", d->name, d->post_compile_gc);
        return -1;
    }
    /* _fix_weakref is called on a hit of the fake memo: no memo, no leak */
    if (d->fix_weakref_leak && !d->fake_memo) {
        snprintf(why, n, "design %s: the _fix_weakref leak without a fake memo", d->name);
        return -1;
    }
    return verify_tables(d, why, n);
}
