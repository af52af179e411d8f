/* test_wt_order.c - traversals visit entries in key-id order, index = rank. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/obj.h"
#include "core/tcore.h"
#include "core/wt.h"

TestSuite(wt_order, .init = tc_begin);

typedef struct seen {
    uint64_t id[8192];
    long index[8192];
    size_t n;
} seen;

static void record(obj *child, const char *label, long index, void *arg)
{
    seen *s = arg;
    (void)label;
    if (s->n < 8192) {
        s->id[s->n] = child->id;
        s->index[s->n++] = index;
    }
}

/* Keys made in id order, put in a scrambled order, some removed: a
 * traversal must see the survivors by ascending id, ranks 0, 1, 2... */
static void check_order(size_t nkeys, wt_key_mode km, int weak_walk)
{
    obj **k = malloc(nkeys * sizeof *k), *v = tn_new();
    for (size_t i = 0; i < nkeys; i++)
        k[i] = tn_new();
    wt_table *m = wt_new(km, WT_VAL_STRONG, 0, "memo");
    for (size_t i = 0; i < nkeys; i++) {
        size_t j = (i * 7919) % nkeys;   /* 7919 is prime: a permutation */
        cr_assert_eq(wt_put(m, k[j], v), 0, "put of key %zu of %zu", j, nkeys);
    }
    for (size_t i = 0; i < nkeys; i += 5)
        cr_assert_eq(wt_remove(m, k[i]), 1, "remove of key %zu", i);
    seen *s = calloc(1, sizeof *s);
    if (weak_walk)
        wt_traverse_weak(m, record, s);
    else
        wt_traverse(m, record, s);
    size_t keys = 0;
    for (size_t i = 0; i < s->n; i++)
        keys += s->id[i] != v->id;
    cr_assert_eq(keys, wt_count(m), "keys visited %zu, entries %zu (%zu keys)", keys,
                 wt_count(m), nkeys);
    uint64_t last = 0;
    long rank = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->id[i] == v->id)
            continue;
        cr_assert_gt(s->id[i], last, "visit %zu: key #%llu after #%llu (%zu keys)", i,
                     (unsigned long long)s->id[i], (unsigned long long)last, nkeys);
        cr_assert_eq(s->index[i], rank, "visit %zu: index %ld, rank %ld (%zu keys)", i,
                     s->index[i], rank, nkeys);
        last = s->id[i];
        rank++;
    }
    free(s);
    wt_free(m);
    for (size_t i = 0; i < nkeys; i++)
        obj_decref(k[i]);
    obj_decref(v);
    free(k);
    tc_end();
}

Test(wt_order, small_table_strong_keys) { check_order(20, WT_KEY_STRONG, 0); }
Test(wt_order, big_table_strong_keys) { check_order(1500, WT_KEY_STRONG, 0); }
Test(wt_order, small_table_weak_keys) { check_order(30, WT_KEY_WEAK, 1); }
Test(wt_order, big_table_weak_keys) { check_order(1999, WT_KEY_WEAK, 1); }

/* The keys a traversal of m (strong keys, weak values: keys only) visits,
 * in order, checked against want[0..n) (ids ascending), ranks 0, 1, 2... */
static void expect_walk(wt_table *m, obj *const *want, size_t n, const char *when)
{
    seen *s = calloc(1, sizeof *s);
    wt_traverse(m, record, s);
    size_t keys = 0;
    for (size_t i = 0; i < s->n; i++) {
        cr_assert_lt(keys, n, "%s: more than %zu keys visited", when, n);
        cr_assert_eq(s->id[i], want[keys]->id, "%s: visit %zu is #%llu, want #%llu", when, i,
                     (unsigned long long)s->id[i], (unsigned long long)want[keys]->id);
        cr_assert_eq(s->index[i], (long)keys, "%s: visit %zu has index %ld, want %zu", when,
                     i, s->index[i], keys);
        keys++;
    }
    cr_assert_eq(keys, n, "%s: %zu keys visited, want %zu", when, keys, n);
    free(s);
}

/* A big table's sorted order is kept for the next traversal while the
 * table is unchanged: a put, a replace, a removal, a clear, another
 * table's traversal, or a new table in a freed one's place must each be
 * seen. */
Test(wt_order, kept_order_follows_every_change)
{
    enum { N = 300 };
    obj *k[N + 1], *v = tn_new(), *v2 = tn_new();
    for (size_t i = 0; i <= N; i++)
        k[i] = tn_new();
    wt_table *m = wt_new(WT_KEY_STRONG, WT_VAL_WEAK, 0, "memo");
    wt_table *o = wt_new(WT_KEY_STRONG, WT_VAL_WEAK, 0, "other");
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(wt_put(m, k[(i * 7919) % N], v), 0, "put %zu", i);
        cr_assert_eq(wt_put(o, k[i], v), 0, "put %zu into other", i);
    }
    expect_walk(m, k, N, "first walk");
    expect_walk(m, k, N, "second walk");
    cr_assert_eq(wt_remove(m, k[0]), 1, "remove k[0]");
    expect_walk(m, k + 1, N - 1, "after a removal");
    cr_assert_eq(wt_put(m, k[0], v), 0, "put k[0] back");
    expect_walk(m, k, N, "after a put");
    cr_assert_eq(wt_remove(o, k[N - 1]), 1, "remove from other");
    expect_walk(o, k, N - 1, "the other table");
    expect_walk(m, k, N, "back to the first");
    cr_assert_eq(wt_put(m, k[N], v2), 0, "a newer key");
    expect_walk(m, k, N + 1, "after a newer key");
    wt_clear(m);
    expect_walk(m, k, 0, "after a clear");
    wt_free(m);
    m = wt_new(WT_KEY_STRONG, WT_VAL_WEAK, 0, "memo");   /* often at m's address */
    for (size_t i = 0; i < N; i += 2)
        cr_assert_eq(wt_put(m, k[i + 1], v), 0, "put %zu into the new table", i);
    obj *odd[N / 2];
    for (size_t i = 0; i < N / 2; i++)
        odd[i] = k[2 * i + 1];
    expect_walk(m, odd, N / 2, "a new table");
    wt_free(m);
    wt_free(o);
    for (size_t i = 0; i <= N; i++)
        obj_decref(k[i]);
    obj_decref(v);
    obj_decref(v2);
    tc_end();
}
