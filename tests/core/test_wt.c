/* test_wt.c - weak-keyed tables. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "core/tcore.h"
#include "core/wt.h"

TestSuite(wt, .init = tc_begin);

static void verify(const wt_table *t, const char *phase)
{
    char why[256] = "";
    cr_assert_eq(wt_verify(t, why, sizeof why), 0, "wt_verify after %s: %s", phase, why);
}

Test(wt, put_get_replace_remove)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    cr_assert_not_null(m, "wt_new");
    obj *k = tn_new(), *v1 = tn_new(), *v2 = tn_new();
    cr_assert_null(wt_get(m, k), "empty");
    cr_assert_eq(wt_put(m, k, v1), 0, "put");
    cr_assert_eq(wt_get(m, k), v1, "get");
    cr_assert_eq(wt_get_id(m, k->id), v1, "get by id");
    cr_assert_eq(k->weak, 1, "weak key count");
    cr_assert_eq(k->strong, 1, "key not held strongly");
    cr_assert_eq(v1->strong, 2, "value held");
    cr_assert_eq(wt_put(m, k, v2), 0, "replace");
    cr_assert_eq(wt_count(m), 1, "still one entry");
    cr_assert_eq(wt_get(m, k), v2, "new value");
    cr_assert_eq(v1->strong, 1, "old value dropped");
    cr_assert_eq(k->weak, 1, "replace keeps one weak count");
    verify(m, "replace");
    cr_assert_eq(wt_remove(m, k), 1, "removed");
    cr_assert_eq(wt_remove(m, k), 0, "absent");
    cr_assert_eq(k->weak, 0, "weak count returned");
    cr_assert_eq(v2->strong, 1, "value dropped");
    cr_assert_eq(wt_count(m), 0, "empty");
    obj_decref(k);
    obj_decref(v1);
    obj_decref(v2);
    wt_free(m);
    tc_end();
}

Test(wt, null_and_dead_arguments_refused)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    obj *k = tn_new(), *v = tn_new();
    er_clear();
    cr_assert_eq(wt_put(m, k, NULL), -1, "NULL value");
    cr_assert_eq(er_kind_get(), ER_TYPE, "ER_TYPE");
    er_clear();
    obj_weak_incref(v);
    obj_decref(v);
    cr_assert_eq(wt_put(m, k, v), -1, "dead value");
    cr_assert_eq(er_kind_get(), ER_DEAD_REF, "ER_DEAD_REF");
    cr_assert_eq(wt_count(m), 0, "nothing inserted");
    er_clear();
    obj_weak_decref(v);
    obj_decref(k);
    wt_free(m);
    tc_end();
}

static void shuffle(obj **a, size_t n, unsigned seed)
{
    srand(seed);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1);
        obj *x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}

Test(wt, grows_and_shrinks_under_deletes)
{
    enum { N = 20000 };
    obj **keys = malloc(N * sizeof *keys);
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    for (size_t i = 0; i < N; i++) {
        keys[i] = tn_new_tag((int)i);
        cr_assert_eq(wt_put(m, keys[i], keys[i]), 0, "put %zu", i);
    }
    verify(m, "growth");
    cr_assert_eq(wt_count(m), N, "count");
    cr_assert_geq(wt_buckets(m) / 4 * 3, N, "load <= 3/4 after growth (%zu slots)",
                  wt_buckets(m));
    cr_assert_leq(wt_buckets(m) / 4 * 3, 2 * N, "grew no more than needed (%zu slots)",
                  wt_buckets(m));
    size_t grown = wt_buckets(m);
    uint64_t big = wt_bytes(m);
    shuffle(keys, N, 1);
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(wt_get(m, keys[i]), keys[i], "lookup %zu", i);

    /* delete all but 100, in random order, verifying along the way */
    for (size_t i = 0; i < N - 100; i++) {
        cr_assert_eq(wt_remove(m, keys[i]), 1, "remove %zu", i);
        if (i % 4000 == 0)
            verify(m, "deletes");
    }
    verify(m, "deletes");
    cr_assert_eq(wt_count(m), 100, "100 left");
    cr_assert_leq(wt_buckets(m), 8 * 100, "shrank (%zu slots)", wt_buckets(m));
    cr_assert_geq(wt_buckets(m), 100 * 4 / 3, "not below the growth load (%zu slots)",
                  wt_buckets(m));
    cr_assert_lt(wt_bytes(m), big / 10, "memory returned");
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(wt_get(m, keys[i]), i < N - 100 ? NULL : keys[i], "lookup after %zu", i);

    /* grow again on the shrunk table */
    for (size_t i = 0; i < N - 100; i++)
        cr_assert_eq(wt_put(m, keys[i], keys[i]), 0, "put again");
    verify(m, "regrowth");
    cr_assert_eq(wt_count(m), N, "full again");
    cr_assert_eq(wt_buckets(m), grown, "regrew to %zu slots, %zu before", wt_buckets(m),
                 grown);
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(wt_get(m, keys[i]), keys[i], "lookup after regrowth %zu", i);

    wt_iter it;
    wt_iter_init(&it, m);
    obj *k, *v;
    uint64_t id;
    size_t seen = 0;
    while (wt_iter_next(&it, &k, &id, &v)) {
        cr_assert_eq(k, v, "entry maps a key to itself");
        cr_assert_eq(k->id, id, "iterated id");
        seen++;
    }
    cr_assert_eq(seen, N, "iteration saw every entry");

    wt_free(m);
    for (size_t i = 0; i < N; i++)
        obj_decref(keys[i]);
    free(keys);
    tc_end();
}

typedef struct id_order { uint64_t last; long next; int bad; } id_order;

/* Keys visited in id order, their index their rank. */
static void visit_in_id_order(obj *child, const char *label, long index, void *arg)
{
    (void)label;
    id_order *o = arg;
    if (index != o->next++ || child->id <= o->last)
        o->bad++;
    o->last = child->id;
}

/* Past 65536 slots a table hashes addresses, not ids (wt.h): the growth
 * that crosses retags every slot, the put that caused it goes in by
 * address, and every way in (key, stored id, id alone, a key's death)
 * still finds its entry. */
Test(wt, big_table_switches_to_address_tags)
{
    enum { N = 60000 };        /* 131072 slots: the switch at 65536 -> 131072 */
    obj **keys = malloc(N * sizeof *keys);
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *v = tn_new();
    obj *tmp[200];              /* freed first: the first keys reuse their */
    for (size_t i = 0; i < 200; i++)        /* memory, so address order */
        tmp[i] = tn_new();                  /* is not id order */
    for (size_t i = 0; i < 200; i++)
        obj_decref(tmp[i]);
    for (size_t i = 0; i < N; i++) {
        keys[i] = tn_new_tag((int)i);
        cr_assert_eq(wt_put(m, keys[i], v), 0, "put %zu", i);
        if (i == 49152 || i == 49153)           /* 3/4 of 65536: the growth */
            verify(m, "the growth that retags");
    }
    verify(m, "grown");
    cr_assert_eq(wt_buckets(m), 131072, "slots: %zu", wt_buckets(m));
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(wt_get(m, keys[i]), v, "lookup %zu", i);
    cr_assert_eq(wt_get_id(m, keys[7]->id), v, "by id alone (a scan)");
    cr_assert_eq(wt_remove_stored(m, keys[5], keys[6]->id), 0, "another id: kept");
    cr_assert_eq(wt_remove_stored(m, keys[5], keys[5]->id), 1, "its own id: removed");
    cr_assert_null(wt_get(m, keys[5]), "gone");
    cr_assert_eq(wt_remove_id(m, keys[9]->id), 1, "removed by id alone");
    /* keys[5]'s new entry is the block keys[9]'s had: address order is
     * then not id order, and a traversal must still go by id */
    cr_assert_eq(wt_put(m, keys[5], v), 0, "put again");
    id_order o = {0, 0, 0};
    wt_traverse_weak(m, visit_in_id_order, &o);
    cr_assert_eq(o.bad, 0, "%d keys out of id order", o.bad);
    cr_assert_eq(o.next, N - 1, "visited %ld of %d", o.next, N - 1);
    /* the keys die: each death finds its entry by the slot's address tag */
    for (size_t i = 0; i < N; i++)
        obj_decref(keys[i]);
    cr_assert_eq(wt_count(m), 0, "every entry left with its key: %zu left", wt_count(m));
    verify(m, "emptied");
    cr_assert_leq(wt_buckets(m), 64, "shrank: %zu slots", wt_buckets(m));
    tc_verify();
    wt_free(m);
    obj_decref(v);
    free(keys);
    tc_end();
}

Test(wt, dead_weak_key_stays_stale_until_removed)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    obj *k = tn_new(), *v = tn_new();
    uint64_t kid = k->id;
    wt_put(m, k, v);
    obj_decref(v);
    obj_decref(k);
    cr_assert_eq(wt_count(m), 1, "entry stays without the flag");
    cr_assert_eq(wt_stale(m), 1, "and is stale");
    cr_assert_eq(obj_zombie_count(), 1, "the table keeps the key header");
    cr_assert_eq(wt_get(m, k), v, "a dead key's header still finds its entry");
    verify(m, "key death");
    cr_assert_eq(wt_remove_id(m, kid), 1, "removed by id");
    cr_assert_eq(obj_zombie_count(), 0, "header freed");
    cr_assert_eq(obj_live_count(), 0, "value freed");
    wt_free(m);
    tc_end();
}

Test(wt, remove_on_key_death)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *k1 = tn_new(), *k2 = tn_new(), *v = tn_new();
    wt_put(m, k1, v);
    wt_put(m, k2, v);
    obj_decref(v);
    verify(m, "puts");
    obj_decref(k1);
    cr_assert_eq(wt_count(m), 1, "k1's entry left with k1");
    cr_assert_eq(obj_zombie_count(), 0, "k1's header freed");
    cr_assert_eq(v->strong, 1, "value reference dropped");
    verify(m, "k1 death");
    obj_decref(k2);
    cr_assert_eq(wt_count(m), 0, "empty");
    cr_assert_eq(obj_live_count(), 0, "value died with the last entry");
    wt_free(m);
    tc_end();
}

Test(wt, remove_on_key_death_deferred_until_safepoint)
{
    obj_configure(&(obj_config){.defer_callbacks = 1});
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *k = tn_new(), *v = tn_new();
    wt_put(m, k, v);
    obj_decref(v);
    obj_decref(k);
    cr_assert_eq(wt_count(m), 1, "entry waits for the safepoint");
    cr_assert_eq(wt_stale(m), 1, "stale meanwhile");
    verify(m, "pending");
    cr_assert_eq(obj_safepoint(), 1, "one callback");
    cr_assert_eq(wt_count(m), 0, "removed");
    obj_configure(&(obj_config){0});
    wt_free(m);
    tc_end();
}

Test(wt, free_withdraws_pending_deferred_callbacks)
{
    obj_configure(&(obj_config){.defer_callbacks = 1});
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *k = tn_new(), *v = tn_new();
    wt_put(m, k, v);
    obj_decref(v);
    obj_decref(k);
    cr_assert_eq(obj_deferred_count(), 1, "pending");
    wt_free(m);
    cr_assert_eq(obj_deferred_count(), 0, "withdrawn with the entry");
    cr_assert_eq(obj_safepoint(), 0, "nothing runs");
    obj_configure(&(obj_config){0});
    tc_end();
}

Test(wt, remove_on_value_death)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_WEAK, WT_REMOVE_ON_VALUE_DEATH, "fake_memo");
    obj *k = tn_new(), *v = tn_new(), *v2 = tn_new();
    wt_put(m, k, v);
    cr_assert_eq(v->weak, 1, "weak value count");
    cr_assert_eq(v->strong, 1, "value not held");
    verify(m, "put");
    wt_put(m, k, v2);                       /* the registration moves to v2 */
    cr_assert_null(v->callbacks, "v no longer watched");
    obj_decref(v);
    cr_assert_eq(wt_count(m), 1, "v's death is not the entry's");
    obj_decref(v2);
    cr_assert_eq(wt_count(m), 0, "entry left with its value");
    cr_assert_eq(k->weak, 0, "key count dropped");
    cr_assert_eq(obj_zombie_count(), 0, "no header kept");
    verify(m, "value death");
    obj_decref(k);
    wt_free(m);
    tc_end();
}

/* An entry carries one death callback per removal flag (32 bytes, plus 40
 * per callback); with both flags the value's is the second, and either
 * death removes the entry. */
Test(wt, both_removal_flags)
{
    unsigned fl[4] = {0, WT_REMOVE_ON_KEY_DEATH, WT_REMOVE_ON_VALUE_DEATH,
                      WT_REMOVE_ON_KEY_DEATH | WT_REMOVE_ON_VALUE_DEATH};
    uint64_t each[4] = {32, 72, 72, 112};
    for (int i = 0; i < 4; i++) {
        wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_WEAK, fl[i], "memo");
        obj *k = tn_new(), *v = tn_new();
        uint64_t before = wt_bytes(m);
        cr_assert_eq(wt_put(m, k, v), 0, "flags %u: put", fl[i]);
        uint64_t got = wt_bytes(m) - before - wt_buckets(m) * 16;
        cr_expect_eq(got, each[i], "flags %u: entry of %llu bytes, want %llu", fl[i],
                     (unsigned long long)got, (unsigned long long)each[i]);
        obj_decref(k);
        obj_decref(v);
        wt_free(m);
    }
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_WEAK, fl[3], "memo");
    obj *k1 = tn_new(), *v1 = tn_new(), *k2 = tn_new(), *v2 = tn_new();
    cr_assert_eq(wt_put(m, k1, v1), 0);
    cr_assert_eq(wt_put(m, k2, v2), 0);
    verify(m, "puts");
    obj_decref(v1);                         /* the second callback */
    cr_assert_eq(wt_count(m), 1, "v1's death removed its entry: %zu left", wt_count(m));
    cr_assert_null(wt_get(m, k1), "k1 is gone");
    cr_assert_null(k1->callbacks, "k1 no longer watched");
    verify(m, "value death");
    obj_decref(k2);                         /* the first callback */
    cr_assert_eq(wt_count(m), 0, "k2's death removed its entry: %zu left", wt_count(m));
    cr_assert_null(v2->callbacks, "v2 no longer watched");
    verify(m, "key death");
    obj_decref(k1);
    obj_decref(v2);
    cr_assert_eq(obj_live_count(), 0, "%zu objects left", (size_t)obj_live_count());
    wt_free(m);
    tc_end();
}

Test(wt, weak_value_reads_null_after_death)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_WEAK, 0, "memo");
    obj *k = tn_new(), *v = tn_new();
    wt_put(m, k, v);
    obj_decref(v);
    cr_assert_null(wt_get(m, k), "dead value reads NULL");
    cr_assert_eq(wt_count(m), 1, "entry still there");
    verify(m, "value death");
    wt_free(m);
    cr_assert_eq(obj_zombie_count(), 0, "value header freed with the table");
    obj_decref(k);
    tc_end();
}

static int count_edges(obj *child, const char *label, long index, void *arg)
{
    (void)child, (void)index;
    cr_assert_str_eq(label, "strong_memo", "edges carry the table label");
    return ++*(int *)arg;
}
static void count_edge_visit(obj *child, const char *label, long index, void *arg)
{
    count_edges(child, label, index, arg);
}

Test(wt, strong_keys_keep_keys_alive)
{
    wt_table *m = wt_new(WT_KEY_STRONG, WT_VAL_STRONG, 0, "strong_memo");
    obj *k = tn_new(), *v = tn_new();
    wt_put(m, k, v);
    obj_decref(k);
    obj_decref(v);
    cr_assert(!obj_expired(k), "the table keeps the key alive");
    cr_assert_eq(wt_stale(m), 0, "nothing stale");
    int edges = 0;
    wt_traverse(m, count_edge_visit, &edges);
    cr_assert_eq(edges, 2, "key and value are strong edges");
    edges = 0;
    wt_traverse_weak(m, count_edge_visit, &edges);
    cr_assert_eq(edges, 0, "no weak edges");
    verify(m, "strong");
    wt_free(m);
    cr_assert_eq(obj_live_count(), 0, "key and value died with the table");
    tc_end();
}

/* An allocator that hands a freed block straight back for the next request
 * of the same size: address reuse that does not depend on libc, Valgrind or
 * ASan quarantines. */
typedef struct reuse_ctx {
    void *block[16];
    size_t size[16];
    int n;
} reuse_ctx;

static void *reuse_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    (void)kind, (void)site;
    reuse_ctx *c = ctx;
    for (int i = c->n - 1; i >= 0; i--)
        if (c->size[i] == n) {
            void *p = c->block[i];
            c->block[i] = c->block[--c->n];
            c->size[i] = c->size[c->n];
            return p;
        }
    return malloc(n);
}

static void reuse_free(void *ctx, void *p, size_t n, al_kind kind)
{
    (void)kind;
    reuse_ctx *c = ctx;
    if (c->n < 16) {
        c->block[c->n] = p;
        c->size[c->n++] = n;
    } else {
        free(p);
    }
}

static void *reuse_realloc(void *ctx, void *p, size_t old_n, size_t n, al_kind kind,
                           const char *site)
{
    void *q = reuse_malloc(ctx, n, kind, site);
    if (q && p) {
        memcpy(q, p, old_n < n ? old_n : n);
        reuse_free(ctx, p, old_n, kind);
    }
    return q;
}

static reuse_ctx rctx;
static al_allocator reuse = {
    .name = "reuse", .ctx = &rctx,
    .xmalloc = reuse_malloc, .xfree = reuse_free, .xrealloc = reuse_realloc,
};

static void reuse_done(void)
{
    al_install(NULL);
    while (rctx.n)
        free(rctx.block[--rctx.n]);
}

Test(wt, address_keys_hit_a_stale_entry_after_reuse)
{
    al_install(&reuse);
    tc_begin();
    wt_table *m = wt_new(WT_KEY_ADDRESS, WT_VAL_STRONG, 0, "tensor_memo");
    obj *k1 = tn_new(), *v = tn_new();
    uint64_t id1 = k1->id;
    wt_put(m, k1, v);
    obj_decref(v);
    cr_assert_eq(k1->weak, 0, "address keys hold no count");
    obj_decref(k1);
    cr_assert_eq(obj_zombie_count(), 0, "key freed");
    cr_assert_eq(wt_stale(m), 1, "entry's id no longer live");
    obj *k2 = tn_new();
    cr_assert_eq(k2, k1, "the allocator reused the address");
    cr_assert_neq(k2->id, id1, "but the id is new");
    uint64_t stored = 0;
    cr_assert_eq(wt_lookup(m, k2, &stored), v, "a new object hits the stale entry");
    cr_assert_eq(stored, id1, "stored under the dead key's id: the wrong hit is detectable");
    cr_assert_eq(wt_stale(m), 1, "still stale");
    verify(m, "reuse");
    wt_put(m, k2, v);
    cr_assert_eq(wt_lookup(m, k2, &stored), v, "taken over");
    cr_assert_eq(stored, k2->id, "now stored under the new id");
    cr_assert_eq(wt_stale(m), 0, "fresh again");
    cr_assert_eq(wt_get_id(m, k2->id), v, "get by id scans in address mode");
    obj_decref(k2);
    wt_free(m);
    tc_end();
    reuse_done();
}

/* Take-over after removals have shifted the stale entry in its cluster. */
Test(wt, address_take_over_after_removals)
{
    al_install(&reuse);
    tc_begin();
    enum { K = 12 };
    wt_table *m = wt_new(WT_KEY_ADDRESS, WT_VAL_STRONG, 0, "tensor_memo");
    obj *k[K], *v = tn_new();
    for (int i = 0; i < K; i++) {
        k[i] = tn_new();
        cr_assert_eq(wt_put(m, k[i], v), 0, "put %d", i);
    }
    for (int i = 1; i < K; i += 2)
        cr_assert_eq(wt_remove(m, k[i]), 1, "remove %d", i);
    verify(m, "removals");
    uint64_t old_id = k[K - 2]->id;
    obj_decref(k[K - 2]);
    obj *n = tn_new();
    cr_assert_eq(n, k[K - 2], "the allocator reused the address");
    uint64_t stored = 0;
    cr_assert_eq(wt_lookup(m, n, &stored), v, "the stale entry answers");
    cr_assert_eq(stored, old_id, "under the dead key's id");
    cr_assert_eq(wt_put(m, n, v), 0, "take over");
    cr_assert_eq(wt_count(m), K / 2, "no new entry");
    cr_assert_eq(wt_lookup(m, n, &stored), v, "found");
    cr_assert_eq(stored, n->id, "under the new id");
    cr_assert_eq(wt_get_id(m, old_id), NULL, "the old id is gone");
    verify(m, "take-over");
    for (int i = 0; i < K - 2; i += 2)
        cr_assert_eq(wt_remove(m, k[i]), 1, "remove %d after the take-over", i);
    cr_assert_eq(wt_remove(m, n), 1, "remove the taken-over entry");
    cr_assert_eq(wt_count(m), 0, "empty");
    verify(m, "emptied");
    for (int i = 0; i < K; i++)
        if (i != K - 2)
            obj_decref(k[i]);
    obj_decref(n);
    obj_decref(v);
    wt_free(m);
    tc_end();
    reuse_done();
}

Test(wt, identity_keys_never_hit_after_reuse)
{
    al_install(&reuse);
    tc_begin();
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "tensor_memo");
    obj *k1 = tn_new(), *v = tn_new();
    wt_put(m, k1, v);
    obj_decref(k1);
    obj *k2 = tn_new();
    cr_assert_eq(k2, k1, "address reused");
    cr_assert_null(wt_get(m, k2), "identity keys: no hit");
    obj_decref(k2);
    obj_decref(v);
    wt_free(m);
    tc_end();
    reuse_done();
}

Test(wt, put_oom_leaves_table_unchanged)
{
    int failures = 0;
    for (uint64_t n = 1;; n++) {
        wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG,
                             WT_REMOVE_ON_KEY_DEATH | WT_REMOVE_ON_VALUE_DEATH, "memo");
        cr_assert_not_null(m, "wt_new");
        obj *k[20];
        for (int i = 0; i < 20; i++)
            k[i] = tn_new();
        al_fail_at(n, 0);
        uint64_t before = al_alloc_count();
        int failed = 0;
        for (int i = 0; i < 20; i++) {
            size_t count = wt_count(m);
            uint64_t weak = k[i]->weak, strong = k[i]->strong;
            er_clear();
            if (wt_put(m, k[i], k[i]) != 0) {
                failed = 1;
                failures++;
                cr_assert_eq(er_kind_get(), ER_OOM, "ER_OOM");
                cr_assert_eq(wt_count(m), count, "count unchanged");
                cr_assert_null(wt_get(m, k[i]), "not inserted");
                cr_assert_eq(k[i]->weak, weak, "no weak count taken");
                cr_assert_eq(k[i]->strong, strong, "no strong count taken");
                cr_assert_null(k[i]->callbacks, "no registration");
            }
            verify(m, "put under oom");
        }
        uint64_t used = al_alloc_count() - before;
        al_fail_at(0, 0);
        er_clear();
        wt_free(m);
        for (int i = 0; i < 20; i++)
            obj_decref(k[i]);
        tc_verify();
        if (used < n) {     /* the injected failure was never reached */
            cr_assert(!failed, "no failure without injection");
            break;
        }
    }
    /* 20 entry allocations and the first slot array fail the put; the
     * two growths are absorbed (longer probes; 7/8 is never reached) */
    cr_assert_eq(failures, 21, "failing puts: %d", failures);
    tc_end();
}

/* An allocator that fails memo blocks of 128 bytes or more (slot arrays;
 * entries are smaller) from the fail_from-th one on: a growth that keeps
 * failing while puts go on. */
typedef struct bigfail_ctx {
    unsigned seen, fail_from;
} bigfail_ctx;

static void *bigfail_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    (void)site;
    bigfail_ctx *c = ctx;
    if (kind == AL_K_MEMO && n >= 128 && ++c->seen >= c->fail_from)
        return NULL;
    return malloc(n);
}

static void bigfail_free(void *ctx, void *p, size_t n, al_kind kind)
{
    (void)ctx, (void)n, (void)kind;
    free(p);
}

static void *bigfail_realloc(void *ctx, void *p, size_t old_n, size_t n, al_kind kind,
                             const char *site)
{
    (void)old_n, (void)kind, (void)site, (void)ctx;
    return realloc(p, n);    /* shrinks only, here */
}

static bigfail_ctx bctx;
static al_allocator bigfail = {
    .name = "bigfail", .ctx = &bctx,
    .xmalloc = bigfail_malloc, .xfree = bigfail_free, .xrealloc = bigfail_realloc,
};

/* The fault loop over the growth that starts failing: a failed growth is
 * absorbed up to 7/8 of the slots, then puts fail cleanly (8 slots: 7
 * entries; 16: 14), each retrying the growth. */
Test(wt, growth_failure_fails_puts_at_the_maximum_load)
{
    static const int expect[] = {20, 13, 6, 0};   /* failing puts per loop */
    for (unsigned from = 1; from <= 4; from++) {
        bctx = (bigfail_ctx){0, from};
        al_install(&bigfail);
        tc_begin();
        wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
        obj *k[20];
        for (int i = 0; i < 20; i++)
            k[i] = tn_new();
        int failures = 0, in[20] = {0};
        for (int i = 0; i < 20; i++) {
            size_t count = wt_count(m), slots = wt_buckets(m);
            uint64_t weak = k[i]->weak;
            er_clear();
            if (wt_put(m, k[i], k[i]) != 0) {
                failures++;
                cr_assert_eq(er_kind_get(), ER_OOM, "ER_OOM");
                cr_assert_eq(wt_count(m), count, "count unchanged");
                cr_assert_eq(wt_buckets(m), slots, "slots unchanged");
                cr_assert_null(wt_get(m, k[i]), "not inserted");
                cr_assert_eq(k[i]->weak, weak, "no weak count taken");
                cr_assert_null(k[i]->callbacks, "no registration");
            } else {
                in[i] = 1;
            }
            verify(m, "put with failing growth");
            for (int j = 0; j < i; j++)
                cr_assert_eq(wt_get(m, k[j]), in[j] ? k[j] : NULL, "key %d after put %d",
                             j, i);
        }
        cr_assert_eq(failures, expect[from - 1], "growth failing from array %u: %d "
                     "failing puts, expected %d", from, failures, expect[from - 1]);
        if (failures && in[0]) {         /* a replace allocates nothing */
            cr_assert_eq(wt_put(m, k[0], k[1]), 0, "replace at the maximum load");
            cr_assert_eq(wt_get(m, k[0]), k[1], "replaced");
        }
        er_clear();
        wt_free(m);
        for (int i = 0; i < 20; i++)
            obj_decref(k[i]);
        tc_end();
        al_install(NULL);
    }
}

/* The slot a key's id hashes to in a table of 2^bits slots (wt.c's
 * Fibonacci hashing): lets a test build a probe cluster on purpose. */
static size_t home_in(uint64_t id, unsigned bits)
{
    return (size_t)((id * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* Keys (ids) whose homes in 16 slots are 13 13 14 13 15 0 13: one cluster
 * from slot 13 that wraps round the array end to slot 3. */
enum { NCLUSTER = 7 };
static const size_t cluster_homes[NCLUSTER] = {13, 13, 14, 13, 15, 0, 13};

static void cluster_keys(obj **k)
{
    obj *spare[512];
    int nspare = 0;
    for (int i = 0; i < NCLUSTER; i++) {
        for (;;) {
            obj *o = tn_new();
            if (home_in(o->id, 4) == cluster_homes[i]) {
                k[i] = o;
                break;
            }
            cr_assert_lt(nspare, 512, "ids hash to every slot");
            spare[nspare++] = o;
        }
    }
    while (nspare)
        obj_decref(spare[--nspare]);
}

/* Removing any member of a wrapping cluster keeps every other key
 * reachable: the backward shift moves only what may move. */
Test(wt, removal_inside_a_wrapping_cluster)
{
    for (int victim = 0; victim < NCLUSTER; victim++) {
        obj *k[NCLUSTER];
        cluster_keys(k);
        wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
        for (int i = 0; i < NCLUSTER; i++)
            cr_assert_eq(wt_put(m, k[i], k[i]), 0, "put %d", i);
        cr_assert_eq(wt_buckets(m), 16, "7 entries take 16 slots (%zu)", wt_buckets(m));
        verify(m, "cluster");
        cr_assert_eq(wt_remove(m, k[victim]), 1, "remove key %d", victim);
        verify(m, "removal in the cluster");
        for (int i = 0; i < NCLUSTER; i++)
            cr_assert_eq(wt_get(m, k[i]), i == victim ? NULL : k[i],
                         "key %d (home %zu) after removing key %d", i, cluster_homes[i],
                         victim);
        /* and removing the rest one by one, from the cluster's other end */
        for (int i = NCLUSTER - 1; i >= 0; i--) {
            if (i == victim)
                continue;
            cr_assert_eq(wt_remove(m, k[i]), 1, "remove %d after %d", i, victim);
            verify(m, "draining the cluster");
            for (int j = 0; j < i; j++)
                cr_assert_eq(wt_get(m, k[j]), j == victim ? NULL : k[j],
                             "key %d after removing %d and %d", j, victim, i);
        }
        cr_assert_eq(wt_count(m), 0, "empty");
        wt_free(m);
        for (int i = 0; i < NCLUSTER; i++)
            obj_decref(k[i]);
    }
    tc_end();
}

/* Death callbacks find their slot by probing from the entry's hash. */
Test(wt, key_death_inside_a_cluster)
{
    obj *k[NCLUSTER];
    cluster_keys(k);
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    for (int i = 0; i < NCLUSTER; i++)
        wt_put(m, k[i], k[0] == k[i] ? k[1] : k[0]);
    obj_decref(k[2]);
    obj_decref(k[4]);
    cr_assert_eq(wt_count(m), NCLUSTER - 2, "two entries left with their keys");
    verify(m, "deaths in the cluster");
    for (int i = 0; i < NCLUSTER; i++)
        if (i != 2 && i != 4)
            cr_assert_not_null(wt_get(m, k[i]), "key %d still found", i);
    wt_free(m);
    for (int i = 0; i < NCLUSTER; i++)
        if (i != 2 && i != 4)
            obj_decref(k[i]);
    tc_end();
}

/* A value whose death removes other entries of the same table and frees
 * nothing it should not: re-entrancy during wt_clear and wt_remove. */
static wt_table *reentrant;
static obj *other_key;
static void remove_other(obj_cb *cb, obj *dying)
{
    (void)cb, (void)dying;
    wt_remove(reentrant, other_key);
}

Test(wt, callbacks_may_use_the_table_during_removal)
{
    reentrant = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    obj *k1 = tn_new(), *k2 = tn_new(), *v1 = tn_new(), *v2 = tn_new();
    other_key = k2;
    obj_cb cb = {.fn = remove_other};
    obj_cb_register(v1, &cb);
    wt_put(reentrant, k1, v1);
    wt_put(reentrant, k2, v2);
    obj_decref(v1);
    obj_decref(v2);
    cr_assert_eq(wt_remove(reentrant, k1), 1, "remove k1");
    cr_assert_eq(wt_count(reentrant), 0, "v1's death removed k2's entry");
    verify(reentrant, "re-entrant remove");
    cr_assert_eq(obj_live_count(), 2, "keys left");
    obj_decref(k1);
    obj_decref(k2);
    wt_free(reentrant);
    tc_end();
}
