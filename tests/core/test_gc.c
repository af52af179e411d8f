/* test_gc.c - the cycle collector. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/er.h"
#include "core/gc.h"
#include "core/obj.h"
#include "core/tcore.h"
#include "core/wr.h"
#include "core/wt.h"

TestSuite(gc, .init = tc_begin);

/* a.x = b; b.y = a; drop both. */
static void attr_pair(obj **pa, obj **pb)
{
    obj *a = tn_new(), *b = tn_new();
    cr_assert_eq(obj_attr_set(a, "x", b), 0, "a.x = b");
    cr_assert_eq(obj_attr_set(b, "y", a), 0, "b.y = a");
    *pa = a;
    *pb = b;
}

Test(gc, attribute_cycle_is_freed_only_by_collect)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj_decref(a);
    obj_decref(b);
    cr_assert_eq(obj_live_count(), 2, "refcounting cannot free a cycle");
    cr_assert_eq(gc_collect(), 2, "collect frees exactly the cycle");
    cr_assert_eq(obj_live_count(), 0, "nothing left");
    cr_assert_eq(gc_collect(), 0, "nothing more to do");
    gc_stats s;
    gc_stats_get(&s);
    cr_assert_eq(s.collections, 2, "two collections");
    cr_assert_eq(s.total_collected, 2, "total");
    tc_end();
}

Test(gc, reachable_cycle_survives)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj_decref(b);              /* a is still held by the test */
    cr_assert_eq(gc_collect(), 0, "a cycle reachable from outside stays");
    cr_assert_eq(obj_live_count(), 2, "both alive");
    cr_assert_eq(obj_attr_get(a, "x"), b, "untouched");
    tc_verify();
    obj_decref(a);
    cr_assert_eq(gc_collect(), 2, "now garbage");
    tc_end();
}

static void exact_count_over_mixed_garbage(void)
{
    /* 100 two-cycles, a 3-cycle, a self loop, a 10-chain hanging off a
     * cycle, plus live objects the garbage points at. */
    obj *keep = tn_new();
    for (int i = 0; i < 100; i++) {
        obj *a = tn_new(), *b = tn_new();
        tn_set(a, 0, b);
        tn_set(b, 0, a);
        tn_set(a, 1, keep);
        obj_decref(a);
        obj_decref(b);
    }
    obj *c[3];
    for (int i = 0; i < 3; i++)
        c[i] = tn_new();
    for (int i = 0; i < 3; i++)
        tn_set(c[i], 0, c[(i + 1) % 3]);
    for (int i = 0; i < 3; i++)
        obj_decref(c[i]);
    obj *self = tn_new();
    obj_attr_set(self, "me", self);
    obj_decref(self);
    obj *h = tn_new(), *h2 = tn_new(), *p = h;
    tn_set(h, 0, h2);
    tn_set(h2, 0, h);
    obj_decref(h2);
    for (int i = 0; i < 10; i++) {
        obj *n = tn_new();
        tn_set(p, 1, n);
        obj_decref(n);
        p = n;
    }
    obj_decref(h);
    obj *live_pair_a, *live_pair_b;
    attr_pair(&live_pair_a, &live_pair_b);
    obj_decref(live_pair_b);

    cr_assert_eq(keep->strong, 101, "keep held by garbage");
    uint64_t n = gc_collect();
    cr_assert_eq(n, 200 + 3 + 1 + 2 + 10, "exact garbage count, got %llu",
                 (unsigned long long)n);
    cr_assert_eq(keep->strong, 1, "garbage dropped its references to keep");
    cr_assert_eq(obj_live_count(), 3, "keep and the live pair");
    gc_stats s;
    gc_stats_get(&s);
    cr_assert_eq(s.garbage, n, "every death was garbage");
    cr_assert_eq(s.examined, 3 + n, "examined every live object");
    tc_verify();
    obj_decref(keep);
    obj_decref(live_pair_a);
    cr_assert_eq(gc_collect(), 2, "the pair");
    tc_end();
}

Test(gc, exact_count_over_mixed_garbage)
{
    exact_count_over_mixed_garbage();
}

Test(gc, exact_count_over_mixed_garbage_fused)
{
    gc_set_debug(0);    /* the fused passes */
    exact_count_over_mixed_garbage();
}

static void forward_references_keep_creation_order(void)
{
    /* Older objects pointing at newer ones: the reverse scan moves the newer
     * ones out and rescues them; the registry must come back in order. */
    obj *root = tn_new(), *p = root;
    for (int i = 0; i < 50; i++) {
        obj *n = tn_new_tag(i);
        tn_set(p, 0, n);
        obj_attr_set(n, "back", p);
        obj_decref(n);
        p = n;
    }
    cr_assert_eq(gc_collect(), 0, "all reachable from root");
    cr_assert_eq(obj_live_count(), 51, "all alive");
    tc_verify();      /* checks creation order */
    obj_decref(root);
    cr_assert_eq(gc_collect(), 51, "the whole doubly linked chain");
    tc_end();
}

Test(gc, forward_references_keep_creation_order)
{
    forward_references_keep_creation_order();
}

Test(gc, forward_references_keep_creation_order_fused)
{
    gc_set_debug(0);    /* the fused passes */
    forward_references_keep_creation_order();
}

Test(gc, table_values_are_edges)
{
    /* An owner object whose strong table refers back to it. */
    obj *a = tn_new(), *b = tn_new();
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, 0, "memo");
    wt_put(m, b, a);            /* entry value a, held by the table */
    tn_set(a, 0, b);
    obj_decref(b);
    /* the table lives outside any object: its hold on a is external */
    obj_decref(a);
    cr_assert_eq(gc_collect(), 0, "a table outside the heap is a root");
    wt_free(m);
    cr_assert_eq(obj_live_count(), 0, "freed with the table");
    tc_end();
}

/* --- weak references and finalizers on garbage --------------------------- */

static int outside_calls, inside_calls;
static void outside_cb(obj *h, void *arg)
{
    (void)arg;
    outside_calls++;
    cr_assert_null(wr_get(h), "expired in the callback");
}
static void inside_cb(obj *h, void *arg)
{
    (void)h, (void)arg;
    inside_calls++;
}

static void weakref_callback_runs_only_outside_the_garbage(void)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj *outside = wr_new(a, outside_cb, NULL);
    obj *inside = wr_new(b, inside_cb, NULL);
    obj_attr_set(a, "w", inside);      /* the handle is part of the garbage */
    obj_decref(inside);
    obj *plain = wr_new(b, NULL, NULL);
    obj_decref(a);
    obj_decref(b);
    cr_assert_eq(gc_collect(), 3, "a, b and the inner handle");
    cr_assert_eq(outside_calls, 1, "the surviving handle's callback ran");
    cr_assert_eq(inside_calls, 0, "the garbage handle's callback did not");
    cr_assert(wr_expired(outside), "outside handle expired");
    cr_assert(wr_expired(plain), "plain handle expired");
    cr_assert_eq(obj_zombie_count(), 2, "headers kept by the two handles");
    obj_decref(outside);
    obj_decref(plain);
    tc_end();
}

Test(gc, weakref_callback_runs_only_outside_the_garbage)
{
    weakref_callback_runs_only_outside_the_garbage();
}

Test(gc, weakref_callback_runs_only_outside_the_garbage_fused)
{
    gc_set_debug(0);    /* the fused passes */
    weakref_callback_runs_only_outside_the_garbage();
}

/* A storage is a C++ object: CPython runs the weakref callbacks
 * (handle_weakrefs) before it clears the garbage (delete_garbage), so a
 * garbage tensor's storage reads alive in them and dies after them. */
static const obj_type cxx_storage_type = {.name = "storage", .kind = OBJ_STORAGE};
static obj *storage_handle;
static int storage_alive_in_cb;
static void storage_probe_cb(obj *h, void *arg)
{
    (void)arg;
    cr_assert_null(wr_get(h), "the garbage node reads expired");
    storage_alive_in_cb += !wr_expired(storage_handle);
}

static void garbage_storage_outlives_the_callbacks(void)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj *st = obj_new(&cxx_storage_type, sizeof(obj));
    cr_assert_not_null(st);
    cr_assert_eq(obj_attr_set(a, "storage", st), 0);
    obj_decref(st);
    storage_handle = wr_new(st, NULL, NULL);
    storage_alive_in_cb = 0;
    obj *probe = wr_new(a, storage_probe_cb, NULL);
    obj_decref(a);
    obj_decref(b);
    uint64_t n = gc_collect();
    cr_assert_eq(n, 3, "a, b and the storage: %llu", (unsigned long long)n);
    cr_assert_eq(storage_alive_in_cb, 1, "the storage read alive in the callback: %d",
                 storage_alive_in_cb);
    cr_assert(wr_expired(storage_handle), "and died after it");
    obj_decref(probe);
    obj_decref(storage_handle);
    tc_end();
}

Test(gc, garbage_storage_outlives_the_callbacks)
{
    garbage_storage_outlives_the_callbacks();
}

Test(gc, garbage_storage_outlives_the_callbacks_fused)
{
    gc_set_debug(0);    /* the fused passes */
    garbage_storage_outlives_the_callbacks();
}

static int fin_calls;
static obj *fin_payload_seen;
static void fin_fn(obj *f, obj *payload, void *arg)
{
    (void)f, (void)arg;
    fin_calls++;
    fin_payload_seen = payload;
    cr_assert(!obj_expired(payload), "payload alive in fn");
}

static void finalizer_on_garbage_runs(void)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj *payload = tn_new();
    obj *f = wr_finalize(b, fin_fn, payload, NULL);
    cr_assert_not_null(f, "finalizer");
    obj_decref(payload);
    obj_decref(a);
    obj_decref(b);
    uint64_t n = gc_collect();
    cr_assert_eq(fin_calls, 1, "finalizer ran once");
    cr_assert_eq(fin_payload_seen, payload, "with its payload");
    cr_assert_eq(n, 4, "a, b, then the finalizer and its payload");
    cr_assert_eq(wr_finalizer_count(), 0, "registry empty");
    tc_end();
}

Test(gc, finalizer_on_garbage_runs)
{
    finalizer_on_garbage_runs();
}

Test(gc, finalizer_on_garbage_runs_fused)
{
    gc_set_debug(0);    /* the fused passes */
    finalizer_on_garbage_runs();
}

static void weak_table_entries_of_garbage_keys_are_removed(void)
{
    wt_table *m = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *a, *b;
    attr_pair(&a, &b);
    obj *v = tn_new();
    wt_put(m, a, v);
    obj_decref(v);
    obj_decref(a);
    obj_decref(b);
    cr_assert_eq(gc_collect(), 3, "a, b, and the value the entry held");
    cr_assert_eq(wt_count(m), 0, "entry removed");
    wt_free(m);
    tc_end();
}

Test(gc, weak_table_entries_of_garbage_keys_are_removed)
{
    weak_table_entries_of_garbage_keys_are_removed();
}

Test(gc, weak_table_entries_of_garbage_keys_are_removed_fused)
{
    gc_set_debug(0);    /* the fused passes */
    weak_table_entries_of_garbage_keys_are_removed();
}

/* --- robustness ------------------------------------------------------------- */

/* A type whose traverse reports its slot twice: more edges than references. */
static void twice_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    tnode *n = (tnode *)self;
    if (n->slot[0]) {
        visit(n->slot[0], "slot", 0, arg);
        visit(n->slot[0], "slot", 0, arg);
    }
}
static void twice_release(obj *self) { obj_clear_ref(&((tnode *)self)->slot[0]); }
static const obj_type twice_type = {.name = "twice", .kind = OBJ_GENERIC,
                                    .traverse = twice_traverse,
                                    .release = twice_release};

Test(gc, debug_validation_abandons_on_overcounting_traverse)
{
    /* a (held by the test) and b (held by a only) point at each other; a
     * reports b twice, so b's gc_refs goes negative. */
    obj *a = obj_new(&twice_type, sizeof(tnode));
    obj *b = tn_new();
    tn_set(a, 0, b);
    tn_set(b, 0, a);
    obj_decref(b);
    er_clear();
    cr_assert_eq(gc_collect(), 0, "abandoned");
    cr_assert_eq(er_kind_get(), ER_INTERNAL, "reported: %s", er_message());
    gc_stats s;
    gc_stats_get(&s);
    cr_assert_eq(s.debug_failures, 1, "counted");
    cr_assert_eq(obj_live_count(), 2, "nothing released");
    cr_assert_eq(tn_get(b, 0), a, "b still holds a");
    tc_verify();
    er_clear();
    tn_set(b, 0, NULL);
    obj_decref(a);
    tc_end();
}

Test(gc, without_debug_an_externally_held_object_is_not_freed)
{
    gc_set_debug(0);
    /* b (held by the test and by a) and a (held by b) point at each other;
     * a reports b twice. */
    obj *a = obj_new(&twice_type, sizeof(tnode));
    obj *b = tn_new();
    tn_set(a, 0, b);
    tn_set(b, 0, a);
    obj_decref(a);
    /* b looks unreachable (its one outside reference is cancelled by the
     * double edge); after clear it still has the test's reference, so it
     * goes back alive and only a dies. */
    cr_assert_eq(gc_collect(), 1, "only a died");
    gc_stats s;
    gc_stats_get(&s);
    cr_assert_eq(s.resurrected, 1, "b survived the clear");
    cr_assert_eq(b->strong, 1, "the test's reference");
    cr_assert_null(tn_get(b, 0), "its references were released");
    tc_verify();
    obj_decref(b);
    gc_set_debug(1);
    tc_end();
}

/* A broken registry (the tail's back link lost) used to leave the fused
 * path's array half written, and the scan then read whatever the array
 * held from the last collection. */
Test(gc, broken_live_list_abandons_the_fused_collection)
{
    gc_set_debug(0);    /* the fused passes walk the list from both ends */
    obj *a, *b;
    attr_pair(&a, &b);
    obj_decref(a);
    obj_decref(b);
    obj *c = tn_new();
    obj *save = c->prev;
    c->prev = NULL;     /* c is the tail: the walk back stops at once */
    er_clear();
    cr_assert_eq(gc_collect(), 0, "abandoned");
    cr_assert_eq(er_kind_get(), ER_INTERNAL, "kind %d: %s", (int)er_kind_get(), er_message());
    cr_assert(strstr(er_message(), "live list") != NULL, "says what broke: %s", er_message());
    gc_stats s;
    gc_stats_get(&s);
    cr_assert_eq(s.debug_failures, 1, "counted: %llu", (unsigned long long)s.debug_failures);
    cr_assert_eq(obj_live_count(), 3, "nothing released: %llu",
                 (unsigned long long)obj_live_count());
    c->prev = save;
    er_clear();
    tc_verify();
    cr_assert_eq(gc_collect(), 2, "the next collection is whole");
    obj_decref(c);
    gc_set_debug(1);
    tc_end();
}

static uint64_t nested_result = 99;
static void collect_in_callback(obj_cb *cb, obj *dying)
{
    (void)cb, (void)dying;
    nested_result = gc_collect();
}

Test(gc, collect_inside_a_death_does_nothing)
{
    obj *a, *b;
    attr_pair(&a, &b);
    obj_decref(a);
    obj_decref(b);
    obj *t = tn_new();
    obj_cb cb = {.fn = collect_in_callback};
    obj_cb_register(t, &cb);
    obj_decref(t);
    cr_assert_eq(nested_result, 0, "no collection inside a death");
    cr_assert_eq(obj_live_count(), 2, "the cycle is still there");
    cr_assert_eq(gc_collect(), 2, "collected outside");
    tc_end();
}

Test(gc, auto_mode_collects_past_threshold)
{
    gc_set_auto(1, 50);
    uint64_t freed = 0;
    for (int i = 0; i < 100; i++) {
        obj *a, *b;
        attr_pair(&a, &b);
        obj_decref(a);
        obj_decref(b);
        freed += gc_maybe_collect();
    }
    cr_assert_gt(freed, 0, "collected automatically");
    cr_assert_lt(obj_live_count(), 2 * 51 + 2, "garbage bounded by the threshold (%llu)",
                 (unsigned long long)obj_live_count());
    gc_set_auto(0, 700);
    cr_assert_eq(gc_maybe_collect(), 0, "off");
    gc_collect();
    tc_end();
}

Test(gc, large_cycle_heap)
{
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        obj *a = tn_new(), *b = tn_new();
        tn_set(a, 0, b);
        tn_set(b, 0, a);
        obj_decref(a);
        obj_decref(b);
    }
    cr_assert_eq(gc_collect(), 2 * N, "every pair");
    tc_end();
}

/* An object owning a table (a converter and its memo): the table's strong
 * values are its edges. */
typedef struct memo_owner {
    obj hdr;
    wt_table *memo;
} memo_owner;

static void owner_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    memo_owner *m = (memo_owner *)self;
    if (m->memo)
        wt_traverse(m->memo, visit, arg);
}

static void owner_release(obj *self)
{
    memo_owner *m = (memo_owner *)self;
    wt_table *t = m->memo;
    m->memo = NULL;
    wt_free(t);
}

static const obj_type owner_type = {.name = "memo_owner", .kind = OBJ_META_CONVERTER,
                                    .traverse = owner_traverse,
                                    .release = owner_release};

static void cycle_through_an_owned_table(void)
{
    /* owner -memo-> value -attr-> owner, and a key that is garbage too with
     * a remove-on-key-death registration owned by nobody. */
    memo_owner *m = (memo_owner *)obj_new(&owner_type, sizeof *m);
    cr_assert_not_null(m, "owner");
    m->memo = wt_new(WT_KEY_WEAK, WT_VAL_STRONG, WT_REMOVE_ON_KEY_DEATH, "memo");
    obj *key = tn_new(), *value = tn_new();
    obj_attr_set(value, "owner", &m->hdr);
    obj_attr_set(&m->hdr, "key", key);
    cr_assert_eq(wt_put(m->memo, key, value), 0, "put");
    obj_decref(key);
    obj_decref(value);
    obj *w = wr_new(key, NULL, NULL);
    obj_decref(&m->hdr);
    cr_assert_eq(obj_live_count(), 4, "the cycle keeps owner, key, value; w");
    cr_assert_eq(obj_live_count_kind(OBJ_META_CONVERTER), 1, "kind count");
    cr_assert_eq(gc_collect(), 3, "owner, key and value");
    cr_assert(wr_expired(w), "key dead");
    cr_assert_eq(obj_live_count_kind(OBJ_META_CONVERTER), 0, "kind count back");
    obj_decref(w);
    tc_end();
}

Test(gc, cycle_through_an_owned_table)
{
    cycle_through_an_owned_table();
}

Test(gc, cycle_through_an_owned_table_fused)
{
    gc_set_debug(0);    /* the fused passes */
    cycle_through_an_owned_table();
}

/* An early free inside the garbage: a's release drops its reference to c
 * twice (what --inject early-free does to a tensor's storage). c is garbage
 * too, held by the collector, so the second decref takes it to 0 while it
 * is still linked on the unreachable list: queueing it there corrupted
 * both lists (the drain then looped or faulted). The decref is refused and
 * reported as a use after free, and the collection ends on a sound heap. */
static void over_release(obj *self)
{
    if (tn_tag(self) == 1)
        obj_decref(tn_get(self, 1));    /* one more than a holds */
}

/* Collect with over_release hooked: the finding must name victim (by its
 * id, read before the collection) and want objects must die. */
static void collect_expecting_over_release(uint64_t victim, uint64_t want)
{
    tn_release_hook = over_release;
    er_clear();
    uint64_t died = gc_collect();
    tn_release_hook = NULL;
    cr_assert_eq(er_kind_get(), ER_USE_AFTER_FREE, "kind %d, want UseAfterFree %d",
                 (int)er_kind_get(), (int)ER_USE_AFTER_FREE);
    char name[32];
    snprintf(name, sizeof name, "tnode #%llu", (unsigned long long)victim);
    cr_assert(strstr(er_message(), name) != NULL, "names %s: %s", name, er_message());
    er_clear();
    cr_assert_eq(died, want, "died %llu, want %llu", (unsigned long long)died,
                 (unsigned long long)want);
}

static void early_free_in_garbage(void)
{
    obj *a = tn_new_tag(1), *b = tn_new_tag(2), *c = tn_new_tag(3);
    tn_set(a, 0, b);
    tn_set(b, 0, a);
    tn_set(a, 1, c);
    uint64_t id = c->id;
    obj_decref(c);
    obj_decref(b);
    obj_decref(a);
    collect_expecting_over_release(id, 3);      /* a, b and c die once each */
    tc_end();
}

Test(gc, early_free_of_garbage_is_a_finding)
{
    early_free_in_garbage();
}

Test(gc, early_free_of_garbage_is_a_finding_fused)
{
    gc_set_debug(0);    /* the array passes */
    early_free_in_garbage();
}

/* --- deaths folded into the release (the array passes) ------------------- */

/* The collector lets an object die in its release pass once every garbage
 * object holding it has been released. c is held by the older a and by the
 * newer b; a releases c twice, so when c's own release comes its count is
 * 1 (the collector's hold) while b still holds it. c must not die then:
 * b's release is the one that takes it to 0, and that is the finding. */
/* x and y in a cycle, each holding c. */
static void cycle_holding(obj *x, obj *y, obj *c)
{
    tn_set(x, 0, y);
    tn_set(y, 0, x);
    tn_set(x, 1, c);
    tn_set(y, 1, c);
}

static void over_release_before_a_near_holder(void)
{
    obj *a = tn_new_tag(1), *c = tn_new_tag(3), *b = tn_new_tag(2);
    cycle_holding(a, b, c);
    uint64_t id = c->id;
    obj_decref(c);
    obj_decref(b);
    obj_decref(a);
    collect_expecting_over_release(id, 3);
    tc_end();
}

Test(gc, over_release_before_a_near_holder_is_a_finding)
{
    over_release_before_a_near_holder();
}

Test(gc, over_release_before_a_near_holder_is_a_finding_fused)
{
    gc_set_debug(0);    /* the array passes */
    over_release_before_a_near_holder();
}

/* As above with the second holder z far newer than c (DROP_NEAR ids), and a
 * garbage pair released between a and z: when the pair is released the
 * release has gone far past c's id, and c's count is 1, but z holds it. */
static void over_release_before_a_far_holder(void)
{
    obj *c = tn_new_tag(3), *a = tn_new_tag(1);
    enum { FILL = 80 };
    obj *fill[FILL];
    for (int i = 0; i < FILL; i++)
        fill[i] = tn_new();
    obj *m1 = tn_new(), *m2 = tn_new(), *z = tn_new_tag(4);
    tn_set(m1, 0, m2);
    tn_set(m2, 0, m1);
    cycle_holding(a, z, c);
    uint64_t id = c->id;
    obj_decref(c);
    obj_decref(a);
    obj_decref(m1);
    obj_decref(m2);
    obj_decref(z);
    collect_expecting_over_release(id, 5);
    for (int i = 0; i < FILL; i++)
        obj_decref(fill[i]);
    tc_end();
}

Test(gc, over_release_before_a_far_holder_is_a_finding)
{
    over_release_before_a_far_holder();
}

Test(gc, over_release_before_a_far_holder_is_a_finding_fused)
{
    gc_set_debug(0);    /* the array passes */
    over_release_before_a_far_holder();
}

/* Garbage with weak callbacks dies in creation order whatever holds it: g1
 * has a newer holder (g4), g2..g4 only older ones. Weak references and
 * finalizers (a callback without a weak count) run 1, 2, 3, 4. */
static tc_log death_log;
static void log_cb(obj *h, void *arg)
{
    (void)h;
    tc_log_add(&death_log, (int)(intptr_t)arg);
}

static void log_fin(obj *f, obj *payload, void *arg)
{
    (void)f, (void)payload;
    tc_log_add(&death_log, (int)(intptr_t)arg);
}

static void garbage_callbacks_in_creation_order(int finalizers)
{
    death_log.n = 0;
    obj *g[4], *w[4] = {0};
    for (int i = 0; i < 4; i++)
        g[i] = tn_new_tag(i + 1);
    for (int i = 0; i < 4; i++) {
        tn_set(g[i], 0, g[(i + 1) % 4]);
        void *arg = (void *)(intptr_t)(i + 1);
        if (finalizers)
            cr_assert_not_null(wr_finalize(g[i], log_fin, NULL, arg), "finalizer %d", i);
        else
            w[i] = wr_new(g[i], log_cb, arg);
    }
    for (int i = 0; i < 4; i++)
        obj_decref(g[i]);
    uint64_t died = gc_collect();
    uint64_t want = finalizers ? 8 : 4;    /* a finalizer dies after it ran */
    cr_assert_eq(died, want, "died %llu, want %llu", (unsigned long long)died,
                 (unsigned long long)want);
    cr_assert_eq(death_log.n, 4, "%d callbacks ran, want 4", death_log.n);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(death_log.v[i], i + 1, "callback %d was g%d's, want g%d's", i,
                     death_log.v[i], i + 1);
    for (int i = 0; i < 4; i++)
        if (w[i])
            obj_decref(w[i]);
    tc_end();
}

Test(gc, garbage_callbacks_run_in_creation_order)
{
    garbage_callbacks_in_creation_order(0);
    garbage_callbacks_in_creation_order(1);
}

Test(gc, garbage_callbacks_run_in_creation_order_fused)
{
    gc_set_debug(0);    /* the array passes */
    garbage_callbacks_in_creation_order(0);
    garbage_callbacks_in_creation_order(1);
}

/* Generations: a cycle that survived a full collection is in generation 2;
 * gc_collect_gen(1) leaves it (and what it holds), gc_collect frees it. A
 * young cycle dies in gc_collect_gen(0); a young object that only old
 * garbage holds survives a young collection, as in CPython. */
static void old_garbage_survives_young_collections(void)
{
    obj *a, *b;
    attr_pair(&a, &b);
    cr_assert_eq(gc_generation(a), 0, "made in generation 0");
    cr_assert_eq(gc_collect(), 0, "held: nothing to free");
    cr_assert_eq(gc_generation(a), 2, "a full collection's survivor: %d", gc_generation(a));
    obj *young = tn_new();
    cr_assert_eq(gc_generation(young), 0, "made after: generation %d", gc_generation(young));
    tn_set(b, 0, young);          /* old b holds a young node */
    obj_decref(young);
    obj *c, *d;
    attr_pair(&c, &d);            /* a young cycle */
    obj_decref(c);
    obj_decref(d);
    obj_decref(a);
    obj_decref(b);
    cr_assert_eq(gc_collect_gen(0), 2, "the young cycle dies, the old one and its young node stay");
    cr_assert_eq(obj_live_count(), 3, "a, b, young: %llu", (unsigned long long)obj_live_count());
    cr_assert_eq(gc_generation(young), 1, "survived a gen-0 collection: %d",
                 gc_generation(young));
    cr_assert_eq(gc_collect_gen(1), 0, "gc.collect(1) cannot reach generation 2");
    cr_assert_eq(gc_generation(young), 2, "survived a gen-1 collection: %d",
                 gc_generation(young));
    cr_assert_eq(gc_collect_gen(2), 3, "a full collection frees all three");
    tc_end();
}

Test(gc, old_garbage_survives_young_collections)
{
    gc_generations_reset();
    old_garbage_survives_young_collections();
}

Test(gc, old_garbage_survives_young_collections_fused)
{
    gc_generations_reset();
    gc_set_debug(0);
    old_garbage_survives_young_collections();
}
