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
