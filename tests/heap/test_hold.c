/* Tests of holder classes (hp_holders) and the bounded census (hp_census). */
#include <criterion/criterion.h>
#include <string.h>

#include "core/er.h"
#include "heap/hp.h"
#include "heap/theap.h"

/* Both values printed on failure (cr_assert_eq prints neither). */
#define EQ(a, b, ...) cr_expect_eq((a), (b), "%s = %llu, expected %llu " __VA_ARGS__, #a, \
                                   (unsigned long long)(a), (unsigned long long)(b))
#define AEQ(a, b) cr_assert_eq((a), (b), "%s = %llu, expected %llu (%s)", #a, \
                               (unsigned long long)(a), (unsigned long long)(b), er_message())

static void setup(void) { er_clear(); }

static void teardown(void)
{
    EQ(obj_leftover(), 0, "objects left after the test");
}

TestSuite(hold, .init = setup, .fini = teardown);

static hp_holder holder(hp_graph *g, const obj *o)
{
    hp_holder h = HP_HOLD_COUNT;
    AEQ(hp_holder_of(g, o, &h), 0);
    return h;
}

/* Each class once: a (in use) -> x; b -> y; b -> mc, mc.memo -> z -> w,
 * mc.memo -> y (b holds y plainly too), mc.pending -> p; a live finalizer
 * f -> q; a lost cycle u <-> v. */
Test(hold, each_class_and_the_culprits_first)
{
    obj *a = th_new(&th_node, 8), *b = th_new(&th_node, 8), *mc = th_new(&th_mconv, 8);
    obj *x = th_new(&th_node, 8), *y = th_new(&th_node, 8), *z = th_new(&th_node, 8);
    obj *w = th_new(&th_node, 8), *p = th_new(&th_storage, 8), *f = th_new(&th_fin, 8);
    obj *q = th_new(&th_node, 8), *u = th_new(&th_node, 8), *v = th_new(&th_node, 8);
    th_set(a, 0, x, "child", -1);
    th_set(b, 0, y, "child", -1);
    th_set(b, 1, mc, "conv", -1);
    th_set(mc, 0, z, "memo", 0);
    th_set(mc, 1, y, "memo", 1);
    th_set(mc, 2, p, "pending", 0);
    th_set(z, 0, w, "child", -1);
    th_set(f, 0, q, "child", -1);
    th_set(u, 0, v, "next", -1);
    th_set(v, 0, u, "next", -1);
    obj *drop[] = {x, y, mc, z, w, p, q, u, v};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        obj_decref(drop[i]);
    hp_root roots[] = {{"a", a, 0}, {"b", b, 0}};
    hp_graph *g = hp_snapshot(roots, 2);
    cr_assert_not_null(g);
    AEQ(hp_root_in_use(g, 0, 1), 0);
    EQ(holder(g, a), HP_HOLD_IN_USE);
    EQ(holder(g, x), HP_HOLD_IN_USE);
    EQ(holder(g, b), HP_HOLD_VARIABLE);
    EQ(holder(g, mc), HP_HOLD_VARIABLE);
    EQ(holder(g, y), HP_HOLD_VARIABLE, "held plainly by b as well as by the memo");
    EQ(holder(g, z), HP_HOLD_MEMO);
    EQ(holder(g, w), HP_HOLD_MEMO, "below a memo entry: the memo's");
    EQ(holder(g, p), HP_HOLD_PENDING);
    EQ(holder(g, f), HP_HOLD_FINALIZER);
    EQ(holder(g, q), HP_HOLD_FINALIZER);
    EQ(holder(g, u), HP_HOLD_LOST);
    EQ(holder(g, v), HP_HOLD_LOST);
    /* the in-use mark can be taken back */
    AEQ(hp_root_in_use(g, 0, 0), 0);
    EQ(holder(g, x), HP_HOLD_VARIABLE);
    EQ(hp_root_in_use(g, 2, 1), -1, "no root 2");

    hp_summary s;
    AEQ(hp_summarize(g, HP_SEL_ALL, 1, &s), 0);
    cr_assert_gt(s.ngroups, 1, "%zu groups", s.ngroups);
    for (size_t i = 1; i < s.ngroups; i++)
        cr_expect_leq(hp_holder_tier(s.groups[i - 1].holder), hp_holder_tier(s.groups[i].holder),
                      "group %zu: culprits first (%s before %s)", i,
                      hp_holder_name(s.groups[i - 1].holder), hp_holder_name(s.groups[i].holder));
    EQ(hp_holder_tier(s.groups[0].holder), 0);
    for (size_t i = 0; i < s.ngroups; i++)
        for (size_t k = 0; k < s.groups[i].nexamples; k++)
            EQ(s.examples[s.groups[i].example + k].holder, s.groups[i].holder);
    hp_summary_free(&s);
    hp_free(g);
    obj_decref(a);
    obj_decref(b);
    /* f keeps q; the lost cycle: drop them the way a collection would */
    obj_incref(u);   /* v's death drops u's last other reference */
    th_set(u, 0, NULL, "next", -1);
    obj_decref(u);
    obj_decref(f);
}

/* 100 storages at one site, 40 nodes at another, a holder of four big
 * ones (a small one is not named): one group kept, the rest counted as "(other)", every object in a total. */
Test(hold, census_is_bounded_and_counts_everything)
{
    obj_set_site("c.scn", 1);
    obj *st[100];
    for (int i = 0; i < 100; i++)
        st[i] = th_new(&th_storage, i < 4 ? 1u << 18 : 10);   /* 4 x 256 KiB */
    obj_set_site("c.scn", 2);
    obj *nd[40];
    for (int i = 0; i < 40; i++)
        nd[i] = th_new(&th_node, 1);
    for (int k = 0; k < 4; k++)
        th_set(nd[0], k, st[k], "memo", k);
    for (int k = 0; k < 4; k++)   /* too little to name */
        th_set(nd[1], k, st[4 + k], "memo", k);
    hp_summary s;
    AEQ(hp_census(1, &s), 0);
    EQ(s.total, 140);
    AEQ(s.ngroups, 2);
    uint64_t sum = 0;
    for (size_t i = 0; i < s.ngroups; i++) {
        sum += s.groups[i].count;
        EQ(s.groups[i].reason, HP_UNTRACED);
        cr_expect_str_eq(s.groups[i].via, "not traced");
    }
    EQ(sum, 140, "the groups account for every object");
    EQ(s.nexamples, 0);
    cr_assert_geq(s.ntop, 1, "%zu tops", s.ntop);
    EQ(s.top[0].id, nd[0]->id, "the node holding four leads");
    EQ(s.top[0].count, 4);
    EQ(s.top[0].main_count, 4);
    EQ(s.ntop, 1, "four small references are not worth a line");
    cr_expect_str_eq(s.top[0].main_via, "memo");
    hp_summary_free(&s);
    AEQ(hp_census(512, &s), 0);
    EQ(s.ngroups, 2, "room for both keys: no (other)");
    EQ(s.groups[0].total_bytes + s.groups[1].total_bytes, s.total_bytes);
    hp_summary_free(&s);
    for (int i = 0; i < 100; i++)
        obj_decref(st[i]);
    for (int i = 0; i < 40; i++)
        obj_decref(nd[i]);
    obj_set_site(NULL, 0);
}
