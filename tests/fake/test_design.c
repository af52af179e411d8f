/* Tests of the design table (src/fake/fk_design.c, designs.md): every row
 * verifies, the names round-trip, each bug applies only to its designs, and
 * a mode takes the design current when it is made. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/wr.h"
#include "fake/fk.h"

static void d_setup(void)
{
    fk_inject("", NULL, 0);
    fk_design_set(FK_D_DEFAULT);
    er_clear();
}

static void d_teardown(void)
{
    fk_design_set(FK_D_DEFAULT);
    fk_reset();
    gc_collect();
    fk_inject("", NULL, 0);
}

/* both values in the message */
#define EQ(a, b) do { long a_ = (long)(a), b_ = (long)(b); \
    cr_assert_eq(a_, b_, "%s == %ld, want %ld", #a, a_, b_); } while (0)

TestSuite(design, .init = d_setup, .fini = d_teardown);

Test(design, every_row_verifies)
{
    char why[200];
    for (int d = 0; d < FK_D_COUNT; d++)
        cr_assert_eq(fk_design_verify((fk_design_id)d, why, sizeof why), 0, "%s", why);
    EQ(fk_design_verify(FK_D_COUNT, why, sizeof why), -1);
}

Test(design, names_round_trip)
{
    for (int d = 1; d < FK_D_COUNT; d++) {
        fk_design_id got;
        EQ(fk_design_from_name(fk_design_get((fk_design_id)d)->name, &got), 0);
        EQ((int)got, d);
    }
    fk_design_id got;
    EQ(fk_design_from_name("default", &got), -1);
    EQ(fk_design_from_name("pytorch-1.12", &got), -1);
    char names[128];
    fk_design_names(names, sizeof names);
    cr_assert_str_eq(names, "pytorch-1.13, pytorch-2.0, pytorch-2.3, pytorch-2.14");
}

Test(design, pytorch_113_is_periodic_with_the_fix_weakref_leak)
{
    const fk_design *d = fk_design_get(FK_D_1_13);
    EQ((int)d->policy, (int)FK_SWEEP_PERIODIC);
    EQ(d->fix_weakref_leak, 1);
    const fk_design *def = fk_design_get(FK_D_DEFAULT);
    EQ((int)def->policy, (int)FK_SWEEP_EAGER);
    EQ(def->fix_weakref_leak, 0);
}

Test(design, pytorch_20_has_one_memo_of_weak_fakes)
{
    const fk_design *d = fk_design_get(FK_D_2_0);
    EQ(d->fake_memo, 0);
    EQ(d->memo_values_weak, 1);
    EQ(d->fakes_are_views, 1);
    EQ(d->fix_weakref_leak, 0);
    EQ(d->policy, FK_SWEEP_PERIODIC);
    char err[256];
    EQ(fk_inject_check("fix-weakref", FK_D_2_0, err, sizeof err), -1);
    cr_assert(strcmp(err, "bug 'fix-weakref' does not apply to pytorch-2.0 (it applies to: "
                          "the default design pytorch-1.13)") == 0, "%s", err);
    EQ(fk_inject_check("no-sweep,strong-memo", FK_D_2_0, err, sizeof err), 0);
}

Test(design, designs_named)
{
    char buf[64];
    size_t n = fk_designs_named((1u << FK_D_DEFAULT) | (1u << FK_D_2_3), ", ", "default", buf,
                                sizeof buf);
    cr_assert(strcmp(buf, "default, pytorch-2.3") == 0, "%s", buf);
    EQ(n, strlen(buf));
    fk_designs_named(1u << FK_D_1_13, ", ", "default", buf, sizeof buf);
    cr_assert(strcmp(buf, "pytorch-1.13") == 0, "%s", buf);
    fk_designs_named(0, ", ", "default", buf, sizeof buf);
    EQ(buf[0], '\0');
    /* truncated at a whole name */
    fk_designs_named((1u << FK_D_2_0) | (1u << FK_D_2_3), " ", "x", buf, 16);
    cr_assert(strcmp(buf, "pytorch-2.0") == 0, "%s", buf);
}

/* Under pytorch-2.0 a mode's fake is its memo's value: the entry leaves when
 * the fake dies, the finalizer stays until the real tensor dies. */
Test(design, pytorch_20_entry_leaves_with_the_fake)
{
    fk_design_set(FK_D_2_0);
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    fk_design_set(FK_D_DEFAULT);
    int64_t s[1] = {4};
    ts_tensor *t = ts_empty(1, s, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
    ts_tensor *f = fk_fake(m, t, NULL);
    cr_assert_not_null(f, "%s", er_message());
    fk_counters c;
    fk_counters_get(m, &c);
    EQ(c.memo_fake, 1);
    EQ(c.memo_meta, 1);
    EQ(c.memo_tensor_ids, 1);
    obj_decref(&f->hdr);
    fk_counters_get(m, &c);
    EQ(c.memo_fake, 0);
    EQ(c.pending, 0);
    obj_decref(&t->hdr);
    fk_counters_get(m, &c);
    EQ(c.pending, 1);
    EQ(fk_sweep(m), 1);
    obj_decref(m);
}

Test(design, bugs_apply_to_their_designs)
{
    char err[256];
    EQ(fk_inject_check("fix-weakref", FK_D_1_13, err, sizeof err), 0);
    EQ(fk_inject_check("strong-memo,fix-weakref", FK_D_DEFAULT, err, sizeof err), 0);
    EQ(fk_inject_check("", FK_D_1_13, err, sizeof err), 0);
    EQ(fk_inject_check(NULL, FK_D_1_13, err, sizeof err), 0);
    size_t n;
    const fk_bug_info *b = fk_bug_list(&n);
    for (size_t i = 0; i < n; i++)
        cr_assert_neq(b[i].designs, 0u, "%s applies to no design", b[i].name);
}

/* A fake memo hit in a mode made under pytorch-1.13 leaves an immortal fake
 * (and its mode); the same sequence under the default design frees all. */
static int hit_then_drop(fk_design_id d)
{
    fk_design_set(d);
    obj *m = fk_mode_new(fk_design_get(d)->policy, 128);
    cr_assert_not_null(m);
    fk_design_set(FK_D_DEFAULT);       /* the mode keeps its own design */
    int64_t s[1] = {4};
    ts_tensor *t = ts_empty(1, s, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
    ts_tensor *f = fk_fake(m, t, NULL);
    ts_tensor *g = fk_fake(m, t, NULL);
    cr_assert_eq(f, g, "memo hit %p, first %p", (void *)g, (void *)f);
    obj *wm = wr_new(m, NULL, NULL);
    obj_decref(&f->hdr);
    obj_decref(&g->hdr);
    obj_decref(m);
    obj_decref(&t->hdr);
    gc_collect();
    int alive = wr_get(wm) != NULL;
    obj_decref(wm);
    return alive;
}

Test(design, mode_keeps_the_design_it_was_made_under)
{
    EQ(hit_then_drop(FK_D_DEFAULT), 0);
    EQ(hit_then_drop(FK_D_1_13), 1);
    /* the immortal fake is 1.13.1's, reclaimed only at process end: this
     * test leaves it, so it does not check for leftovers */
}

/* pytorch-2.3 as data: the describer's two lookup tables keyed by real
 * objects, the memos keyed by their ids with weak values; no finalizer,
 * no sweep; the bugs of finalizers and sweeps do not apply. */
Test(design, pytorch_23_has_the_describer_tables)
{
    const fk_design *d = fk_design_get(FK_D_2_3);
    cr_assert_not_null(d);
    const fk_table_spec *lt = fk_design_table(d, FK_T_LOOKUP_TENSOR);
    const fk_table_spec *tm = fk_design_table(d, FK_T_TENSOR_MEMO);
    const fk_table_spec *sm = fk_design_table(d, FK_T_STORAGE_MEMO);
    EQ(lt->exists, 1);
    EQ(lt->key, FK_KEY_TENSOR);
    EQ(lt->clears, FK_CLR_KEY);
    EQ(fk_design_table(d, FK_T_LOOKUP_STORAGE)->key, FK_KEY_STORAGE);
    EQ(tm->key, FK_KEY_TENSOR_ID);
    EQ(tm->value_weak, 1);
    EQ(tm->clears, FK_CLR_VALUE);
    EQ(sm->key, FK_KEY_STORAGE_ID);
    EQ(sm->clears, FK_CLR_VALUE);
    EQ(fk_design_table(d, FK_T_FAKE_MEMO)->exists, 0);
    EQ(fk_design_has_finalizers(d), 0);
    EQ(fk_design_sweeps(d), 0);
    EQ(fk_design_has_finalizers(fk_design_get(FK_D_2_0)), 1);
    EQ(fk_design_sweeps(fk_design_get(FK_D_1_13)), 1);
    EQ(fk_design_table(fk_design_get(FK_D_1_13), FK_T_LOOKUP_TENSOR)->exists, 0);
    char err[256];
    EQ(fk_inject_check("no-sweep", FK_D_2_3, err, sizeof err), -1);
    EQ(fk_inject_check("finalizer-holds-converter", FK_D_2_3, err, sizeof err), -1);
    EQ(fk_inject_check("strong-memo,id-reuse,strong-storage-memo", FK_D_2_3, err, sizeof err), 0);
}

/* fk_design_check refuses rows whose tables contradict each other. */
static int check_broken(void (*breakit)(fk_design *))
{
    fk_design d = *fk_design_get(FK_D_2_3);
    char why[200];
    cr_assert_eq(fk_design_check(&d, why, sizeof why), 0, "%s", why);
    breakit(&d);
    return fk_design_check(&d, why, sizeof why);
}

static void no_lookup(fk_design *d) { d->tables[FK_T_LOOKUP_TENSOR].exists = 0; }
static void strong_cleared(fk_design *d) { d->tables[FK_T_STORAGE_MEMO].value_weak = 0; }
static void id_key_death(fk_design *d) { d->tables[FK_T_TENSOR_MEMO].clears |= FK_CLR_KEY; }
static void periodic(fk_design *d) { d->policy = FK_SWEEP_PERIODIC; }
static void id_sweep(fk_design *d) { d->tables[FK_T_STORAGE_MEMO].clears |= FK_CLR_SWEEP; }
static void lookup_weak(fk_design *d) { d->tables[FK_T_LOOKUP_STORAGE].value_weak = 1; }
static void fake_memo(fk_design *d) { d->fake_memo = 1; }
static void mixed_keys(fk_design *d)
{
    d->tables[FK_T_STORAGE_MEMO] = (fk_table_spec){1, FK_KEY_STORAGE, 0, FK_CLR_KEY};
}

Test(design, check_refuses_contradicting_tables)
{
    EQ(check_broken(no_lookup), -1);
    EQ(check_broken(strong_cleared), -1);
    EQ(check_broken(id_key_death), -1);
    EQ(check_broken(periodic), -1);
    EQ(check_broken(id_sweep), -1);
    EQ(check_broken(lookup_weak), -1);
    EQ(check_broken(fake_memo), -1);
    EQ(check_broken(mixed_keys), -1);
}

static ts_tensor *vec(int64_t n)
{
    int64_t s[1] = {n};
    return ts_empty(1, s, TS_F32, ts_cpu(), TS_INIT_NONE, 0);
}

/* Each death clears its own half: the real tensor its lookup entry, the
 * fake its id -> fake entry, the last fake over a meta storage its
 * storage_memo entry; the converter's death drops the rest. */
/* m's 2.3 tables: lookup_tensor, lookup_storage, tensor_memo, storage_memo */
static void counts(obj *m, long tids, long sids, long fakes, long stor)
{
    fk_counters c;
    cr_assert_eq(fk_counters_get(m, &c), 0);
    EQ(c.memo_tensor_ids, tids);
    EQ(c.memo_storage_ids, sids);
    EQ(c.memo_fake, fakes);
    EQ(c.memo_storage, stor);
    EQ(c.sweep_every, 0);
    EQ(c.pending, 0);
}

Test(design, pytorch_23_each_death_clears_its_own_half)
{
    fk_design_set(FK_D_2_3);
    obj *m = fk_mode_new(FK_SWEEP_PERIODIC, 128);
    fk_design_set(FK_D_DEFAULT);
    ts_tensor *t = vec(4), *keep = vec(2);
    ts_tensor *f = fk_fake(m, t, NULL);
    cr_assert_not_null(f, "%s", er_message());
    ts_tensor *f2 = fk_fake(m, keep, NULL);
    counts(m, 2, 2, 2, 2);
    obj_decref(&t->hdr);
    counts(m, 1, 1, 2, 2);
    obj_decref(&f->hdr);
    counts(m, 1, 1, 1, 1);
    EQ(fk_sweep(m), 0);
    char why[200];
    cr_assert_eq(fk_verify(m, why, sizeof why), 0, "%s", why);
    /* keep's tensor and storage ids are alive, held by lookup entries */
    EQ(obj_live_count_kind(OBJ_GENERIC), 2);
    obj_decref(m);       /* f2 holds the mode */
    EQ(obj_live_count_kind(OBJ_GENERIC), 2);
    obj_decref(&f2->hdr);
    /* the converter died: its four tables and the ids they held went,
     * while keep (a key of one of them) lives on */
    EQ(obj_live_count_kind(OBJ_GENERIC), 0);
    EQ(keep->hdr.weak, 0);
    obj_decref(&keep->hdr);
}

/* 2.x converts base and grad before setting the entry: a grad that is a
 * view of its own tensor recurses without end (PyTorch: RecursionError).
 * fakegc stops with LimitExceeded, in 2.0 and in 2.3 (whose describer
 * recurses first), and the mode converts on. */
static void grad_cycle(fk_design_id d)
{
    fk_design_set(d);
    obj *m = fk_mode_new(fk_design_get(d)->policy, 128);
    fk_design_set(FK_D_DEFAULT);
    ts_tensor *t = vec(4);
    ts_args a;
    memset(&a, 0, sizeof a);
    a.n = 1;
    a.v[0] = 4;
    ts_tensor *v = ts_apply(TS_OP_VIEW, t, &a);
    cr_assert_not_null(v, "%s", er_message());
    EQ(ts_set_grad(t, v), 0);
    er_clear();
    cr_assert_null(fk_fake(m, t, NULL));
    EQ(er_kind_get(), ER_LIMIT);
    er_clear();
    ts_tensor *u = vec(2);
    ts_tensor *fu = fk_fake(m, u, NULL);
    cr_assert_not_null(fu, "%s", er_message());
    obj_decref(&fu->hdr);
    obj_decref(&u->hdr);
    ts_set_grad(t, NULL);
    obj_decref(&v->hdr);
    obj_decref(&t->hdr);
    obj_decref(m);
}

Test(design, grad_reaching_its_tensor_is_a_limit_not_a_crash)
{
    grad_cycle(FK_D_2_0);
    grad_cycle(FK_D_2_3);
}
