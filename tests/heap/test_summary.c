/* Tests of hp_summarize: totals, groups from interned shapes that
 * read exactly like the printed paths, examples, biggest retainers, the
 * refcount-leak reason and selections. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "heap/hp.h"
#include "heap/theap.h"

static void setup(void) { er_clear(); }

static void teardown(void)
{
    cr_expect_eq(obj_leftover(), 0, "objects left after the test: %llu",
                 (unsigned long long)obj_leftover());
}

TestSuite(summary, .init = setup, .fini = teardown);

/* r -> n0 -> n1 -> ... -> n(N-1), each "next": depths 0..12 have their own
 * shapes, every deeper node the one elided shape "r -> Node.next x6 -> ...
 * -> Node.next x5 -> generic". */
Test(summary, a_long_chain_in_fourteen_groups_with_real_totals)
{
    enum { N = 1000 };
    obj *head = th_new(&th_node, 10), *prev = head;
    for (int i = 1; i < N; i++) {
        obj *x = th_new(&th_node, 10);
        th_set(prev, 0, x, "next", -1);
        obj_decref(x);
        prev = x;
    }
    hp_root roots[] = {{"r", head, 0}};
    hp_graph *g = hp_snapshot(roots, 1);
    cr_assert_not_null(g);
    hp_summary s;
    cr_assert_eq(hp_summarize(g, HP_SEL_ALL, 2, &s), 0, "%s", er_message());
    cr_expect_eq(s.total, N, "total %llu, expected %d", (unsigned long long)s.total, N);
    cr_expect_eq(s.ngroups, 14, "%zu groups, expected 14", s.ngroups);
    uint64_t sum = 0;
    for (size_t i = 0; i < s.ngroups; i++) {
        const hp_group *gr = &s.groups[i];
        sum += gr->count;
        cr_assert_geq(gr->nexamples, 1, "group %zu has no example", i);
        cr_expect_leq(gr->nexamples, 2, "group %zu keeps %zu examples, K is 2", i,
                      gr->nexamples);
        const hp_retained *ex = &s.examples[gr->example];
        char shape[512];
        hp_path_shape(ex->path, ex->path_len, shape, sizeof shape);
        cr_expect_str_eq(gr->via, shape, "group %zu: interned shape vs its example's path", i);
    }
    cr_expect_eq(sum, N, "groups count %llu objects, expected %d", (unsigned long long)sum, N);
    /* the biggest group is the elided tail: everything deeper than 12 */
    cr_expect_eq(s.groups[0].count, N - 13, "biggest group %llu",
                 (unsigned long long)s.groups[0].count);
    cr_assert_eq(s.ntop, 1, "%zu biggest retainers, expected 1", s.ntop);
    cr_expect_eq(s.top[0].id, head->id, "the head retains the chain (got #%llu)",
                 (unsigned long long)s.top[0].id);
    cr_expect_eq(s.top[0].count, N, "it dominates %llu objects",
                 (unsigned long long)s.top[0].count);
    hp_summary_free(&s);
    hp_free(g);
    obj_decref(head);
}

static obj *chain_of(int n, obj **nodes)
{
    obj *head = th_new(&th_node, 10), *prev = head;
    nodes[0] = head;
    for (int i = 1; i < n; i++) {
        obj *x = th_new(&th_node, 10);
        th_set(prev, 0, x, "next", -1);
        obj_decref(x);
        prev = nodes[i] = x;
    }
    return head;
}

/* Two chains, a's twice b's: a summary of b's nodes names b's head as its
 * biggest retainer and not a's, which retains more but none of them; the
 * whole heap's names both, a's first. */
Test(summary, the_biggest_retainer_of_marked_objects_dominates_them)
{
    static obj *na[200], *nb[100];
    obj *a = chain_of(200, na), *b = chain_of(100, nb);
    hp_root roots[] = {{"a", a, 0}, {"b", b, 0}};
    hp_graph *g = hp_snapshot(roots, 2);
    cr_assert_not_null(g);
    hp_summary s;
    cr_assert_eq(hp_summarize(g, HP_SEL_ALL, 1, &s), 0, "%s", er_message());
    cr_assert(eq(sz, s.ntop, 2));
    cr_expect(eq(u64, s.top[0].id, a->id));
    cr_expect(eq(u64, s.top[1].id, b->id));
    hp_summary_free(&s);
    hp_select_clear(g);
    for (int i = 0; i < 100; i++)
        hp_select(g, nb[i]);
    cr_assert_eq(hp_summarize(g, HP_SEL_MARKED, 1, &s), 0, "%s", er_message());
    cr_expect(eq(u64, s.total, 100));
    cr_assert(eq(sz, s.ntop, 1));
    cr_expect(eq(u64, s.top[0].id, b->id));
    char want[64];
    snprintf(want, sizeof want, "b -> %s#%llu", b->type->name, (unsigned long long)b->id);
    cr_expect(eq(str, s.top[0].path, want));
    hp_summary_free(&s);
    hp_free(g);
    obj_decref(a);
    obj_decref(b);
}

/* An object with one reference more than anybody holds, outside any cycle:
 * a reference-count leak, with its counts; what it holds stays
 * "unreachable". */
Test(summary, a_forgotten_decref_is_a_refcount_leak)
{
    obj *a = th_new(&th_node, 0), *b = th_new(&th_node, 0);
    th_set(a, 0, b, "child", -1);
    obj_decref(b);   /* b: held by a only; a: held by nobody, strong 1 */
    hp_graph *g = hp_snapshot(NULL, 0);
    cr_assert_not_null(g);
    hp_summary s;
    cr_assert_eq(hp_summarize(g, HP_SEL_ALL, 3, &s), 0, "%s", er_message());
    cr_assert_eq(s.total, 2, "total %llu", (unsigned long long)s.total);
    const hp_retained *ra = NULL, *rb = NULL;
    for (size_t i = 0; i < s.nexamples; i++) {
        if (s.examples[i].id == a->id)
            ra = &s.examples[i];
        if (s.examples[i].id == b->id)
            rb = &s.examples[i];
    }
    cr_assert(ra && rb, "both objects are examples");
    cr_expect_str_eq(hp_reason_name(ra->reason), "refcount-leak");
    cr_expect_eq(ra->strong, 1, "strong %u", ra->strong);
    cr_expect_eq(ra->found, 0, "holders found %u", ra->found);
    cr_expect_str_eq(hp_reason_name(rb->reason), "unreachable",
                     "b is held by the leak: accounted for");
    hp_summary_free(&s);
    hp_free(g);
    th_set(a, 0, NULL, "child", -1);
    obj_decref(a);
}

/* A selection covers only the marked objects; unmarked ones do not count. */
Test(summary, a_selection_counts_only_what_is_marked)
{
    obj *r = th_new(&th_node, 0), *x = th_new(&th_storage, 64), *y = th_new(&th_storage, 64);
    obj *z = th_new(&th_node, 0);
    th_set(r, 0, x, "a", -1);
    th_set(r, 1, y, "a", -1);
    th_set(r, 2, z, "b", -1);
    obj_decref(x); obj_decref(y); obj_decref(z);
    hp_root roots[] = {{"r", r, 0}};
    hp_graph *g = hp_snapshot(roots, 1);
    cr_assert_not_null(g);
    hp_select_clear(g);
    hp_select(g, x);
    hp_select(g, y);
    hp_select(g, y);   /* twice: once */
    cr_expect_eq(hp_selected(g), 2, "%zu selected", hp_selected(g));
    hp_summary s;
    cr_assert_eq(hp_summarize(g, HP_SEL_MARKED, 1, &s), 0, "%s", er_message());
    cr_expect_eq(s.total, 2, "total %llu", (unsigned long long)s.total);
    cr_assert_eq(s.ngroups, 1, "%zu groups", s.ngroups);
    cr_expect_eq(s.groups[0].count, 2, "count %llu", (unsigned long long)s.groups[0].count);
    cr_expect_str_eq(s.groups[0].via, "r -> Node.a -> storage");
    cr_expect_eq(s.nexamples, 1, "K = 1: %zu examples", s.nexamples);
    hp_summary_free(&s);
    hp_free(g);
    obj_decref(r);
}
