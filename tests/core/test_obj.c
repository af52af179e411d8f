/* test_obj.c - object header, counts, deaths, callbacks, attributes. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "core/obj.h"
#include "core/tcore.h"

TestSuite(obj, .init = tc_begin);

/* --- ids and counts ------------------------------------------------------ */

Test(obj, ids_start_at_one_and_are_never_reused)
{
    obj *a = tn_new();
    cr_assert_eq(a->id, 1, "first id is %llu", (unsigned long long)a->id);
    uint64_t last = a->id;
    obj_decref(a);
    for (int i = 0; i < 1000; i++) {
        obj *o = tn_new();
        cr_assert_gt(o->id, last, "id %llu after %llu", (unsigned long long)o->id,
                     (unsigned long long)last);
        last = o->id;
        obj_decref(o);
    }
    cr_assert_eq(last, 1001, "ids must count every object");
    tc_end();
}

Test(obj, new_object_has_one_strong_no_weak_and_site)
{
    obj_set_site("t.scn", 7);
    obj *a = tn_new();
    cr_assert_eq(a->strong, 1, "strong %u", a->strong);
    cr_assert_eq(a->weak, 0, "weak %u", a->weak);
    obj_site site = obj_site_of(a);
    cr_assert_str_eq(site.file, "t.scn", "site file %s", site.file);
    cr_assert_eq(site.line, 7, "site line %u, expected 7", site.line);
    cr_assert_eq(obj_live_count(), 1, "live");
    cr_assert_eq(obj_live_count_kind(OBJ_GENERIC), 1, "live generic");
    cr_assert_eq(obj_live_count_kind(OBJ_TENSOR), 0, "live tensor");
    cr_assert_str_eq(obj_kind_name(OBJ_GENERIC), "generic", "kind name");
    cr_assert_eq(obj_live_first(), a, "registry head");
    obj_decref(a);
    cr_assert_eq(obj_live_count(), 0, "dead after last decref");
    tc_end();
}

Test(obj, registry_keeps_creation_order)
{
    obj *o[5];
    for (int i = 0; i < 5; i++)
        o[i] = tn_new_tag(i);
    obj_decref(o[2]);
    int expect[] = {0, 1, 3, 4}, k = 0;
    for (obj *p = obj_live_first(); p; p = obj_iter_next(p))
        cr_assert_eq(tn_tag(p), expect[k++], "registry order at %d", k);
    cr_assert_eq(k, 4, "registry length");
    tc_verify();
    for (int i = 0; i < 5; i++)
        if (i != 2)
            obj_decref(o[i]);
    tc_end();
}

Test(obj, death_releases_children)
{
    obj *a = tn_new(), *b = tn_new();
    tn_set(a, 0, b);
    obj_decref(b);
    cr_assert_eq(b->strong, 1, "a holds b");
    obj_decref(a);
    cr_assert_eq(obj_live_count(), 0, "b died with a");
    tc_end();
}

Test(obj, weak_holder_keeps_header_not_children)
{
    obj *a = tn_new(), *b = tn_new();
    tn_set(a, 0, b);
    obj_weak_incref(a);
    obj_weak_incref(b);
    obj_decref(b);
    uint64_t bytes_alive = al_live_bytes();
    obj_decref(a);
    cr_assert(obj_expired(a), "a is expired");
    cr_assert(obj_expired(b), "a's death released b");
    cr_assert_eq(a->id, 1, "a's header still readable");
    cr_assert_null(tn_get(a, 0), "a's release cleared its slot");
    cr_assert_eq(obj_zombie_count(), 2, "two zombies");
    cr_assert_eq(obj_live_count(), 0, "nothing live");
    cr_assert_eq(al_live_bytes(), bytes_alive, "headers not freed yet");
    tc_verify();
    obj_weak_decref(a);
    cr_assert_eq(obj_zombie_count(), 1, "a freed at weak 0");
    cr_assert_lt(al_live_bytes(), bytes_alive, "bytes returned");
    obj_weak_decref(b);
    tc_end();
}

Test(obj, weak_count_alone_does_not_keep_alive)
{
    obj *a = tn_new();
    obj_weak_incref(a);
    obj_weak_decref(a);
    cr_assert_eq(obj_live_count(), 1, "weak 0 on a live object frees nothing");
    cr_assert(!obj_expired(a), "still alive");
    obj_decref(a);
    tc_end();
}

/* A finding about the program (a use after free), not a bug of fakegc. */
Test(obj, decref_of_dead_object_is_a_use_after_free)
{
    obj *a = tn_new();
    obj_weak_incref(a);
    obj_decref(a);
    er_clear();
    obj_decref(a);
    cr_assert_eq(er_kind_get(), ER_USE_AFTER_FREE, "second decref reported: kind %d, want %d",
                 (int)er_kind_get(), (int)ER_USE_AFTER_FREE);
    cr_assert_eq(obj_zombie_count(), 1, "header untouched");
    er_clear();
    obj_weak_decref(a);
    tc_end();
}

/* A callback that drops the last weak count on the dying object: the header
 * must survive until its release has run (valgrind checks the reads). */
static obj *weak_holder_target;
static void drop_weak(obj_cb *cb, obj *dying)
{
    (void)cb;
    cr_assert_eq(dying, weak_holder_target, "dying is the target");
    obj_weak_decref(dying);
}
static int release_saw_header;
static void hook_read_header(obj *self) { release_saw_header += self->id == 1; }

Test(obj, weak_zero_during_death_frees_after_release)
{
    obj *a = tn_new();
    weak_holder_target = a;
    obj_weak_incref(a);
    obj_cb cb = {.fn = drop_weak};
    cr_assert_eq(obj_cb_register(a, &cb), 0, "register");
    tn_release_hook = hook_read_header;
    obj_decref(a);
    tn_release_hook = NULL;
    cr_assert_eq(release_saw_header, 1, "release ran on an intact header");
    cr_assert_eq(obj_zombie_count(), 0, "freed once released");
    cr_assert_null(cb.target, "registration unlinked");
    tc_end();
}

/* --- callbacks ------------------------------------------------------------ */

typedef struct logged_cb {
    obj_cb cb;
    tc_log *log;
    int tag;
    obj *saw;
    int saw_child;      /* the dying node still held its child */
} logged_cb;

static void log_fn(obj_cb *cb, obj *dying)
{
    logged_cb *l = (logged_cb *)(void *)cb;
    tc_log_add(l->log, l->tag);
    l->saw = dying;
    if (dying) {
        cr_assert(obj_expired(dying), "target reads expired in its callbacks");
        cr_assert_null(cb->target, "registration unlinked before it runs");
        l->saw_child = tn_get(dying, 0) != NULL;
    }
}

static void register_three(obj *t, logged_cb *c, tc_log *log)
{
    for (int i = 0; i < 3; i++) {
        c[i] = (logged_cb){.cb = {.fn = log_fn}, .log = log, .tag = i + 1};
        cr_assert_eq(obj_cb_register(t, &c[i].cb), 0, "register %d", i);
    }
}

Test(obj, callbacks_run_in_registration_order_before_release)
{
    tc_log log = {0};
    logged_cb c[3];
    obj *t = tn_new(), *child = tn_new();
    tn_set(t, 0, child);
    obj_decref(child);
    register_three(t, c, &log);
    obj_decref(t);
    cr_assert_eq(log.n, 3, "three callbacks ran");
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(log.v[i], i + 1, "order at %d: %d", i, log.v[i]);
        cr_assert_eq(c[i].saw, t, "callback %d got the dying object", i);
        cr_assert(c[i].saw_child, "callback %d ran before release", i);
    }
    tc_end();
}

Test(obj, callbacks_reverse_knob)
{
    obj_configure(&(obj_config){.callbacks_reverse = 1});
    tc_log log = {0};
    logged_cb c[3];
    obj *t = tn_new();
    register_three(t, c, &log);
    obj_decref(t);
    cr_assert_eq(log.n, 3, "three callbacks ran");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(log.v[i], 3 - i, "reverse order at %d: %d", i, log.v[i]);
    obj_configure(&(obj_config){0});
    tc_end();
}

Test(obj, unregistered_callback_does_not_run)
{
    tc_log log = {0};
    logged_cb c[3];
    obj *t = tn_new();
    register_three(t, c, &log);
    obj_cb_unregister(&c[1].cb);
    obj_cb_unregister(&c[1].cb);     /* no-op the second time */
    obj_decref(t);
    cr_assert_eq(log.n, 2, "two ran");
    cr_assert_eq(log.v[0], 1, "first");
    cr_assert_eq(log.v[1], 3, "third");
    tc_end();
}

Test(obj, register_on_dead_object_fails)
{
    obj *t = tn_new();
    obj_weak_incref(t);
    obj_decref(t);
    obj_cb cb = {.fn = drop_weak};
    er_clear();
    cr_assert_eq(obj_cb_register(t, &cb), -1, "dead target refused");
    cr_assert_eq(er_kind_get(), ER_DEAD_REF, "ER_DEAD_REF");
    cr_assert_null(cb.target, "not registered");
    er_clear();
    obj_weak_decref(t);
    tc_end();
}

Test(obj, deferred_callbacks_run_at_safepoint_with_null)
{
    obj_configure(&(obj_config){.defer_callbacks = 1});
    tc_log log = {0};
    logged_cb c[3];
    obj *t = tn_new();
    register_three(t, c, &log);
    obj_decref(t);
    cr_assert_eq(log.n, 0, "nothing ran at death");
    cr_assert_eq(obj_deferred_count(), 3, "three pending");
    cr_assert_eq(obj_live_count() + obj_zombie_count(), 0, "target memory already gone");
    cr_assert_eq(obj_safepoint(), 3, "safepoint ran three");
    cr_assert_eq(log.n, 3, "all ran");
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(log.v[i], i + 1, "order at %d", i);
        cr_assert_null(c[i].saw, "dying is NULL when deferred");
    }
    cr_assert_eq(obj_safepoint(), 0, "nothing left");
    obj_configure(&(obj_config){0});
    tc_end();
}

Test(obj, deferred_reverse_order)
{
    obj_configure(&(obj_config){.defer_callbacks = 1, .callbacks_reverse = 1});
    tc_log log = {0};
    logged_cb c[3];
    obj *t = tn_new();
    register_three(t, c, &log);
    obj_decref(t);
    obj_safepoint();
    for (int i = 0; i < 3; i++)
        cr_assert_eq(log.v[i], 3 - i, "reverse deferred order at %d", i);
    obj_configure(&(obj_config){0});
    tc_end();
}

/* Holders: objects owning a registration on some target; releasing a holder
 * unregisters it (like a weak handle). */
typedef struct holder {
    obj hdr;
    obj_cb cb;
    obj **drop[2];     /* objects this holder's callback drops */
    tc_log *log;
    int tag;
} holder;

static void holder_release(obj *self) { obj_cb_unregister(&((holder *)self)->cb); }
static const obj_type holder_type = {.name = "holder", .kind = OBJ_GENERIC,
                                     .release = holder_release};

static void holder_fire(obj_cb *cb, obj *dying)
{
    (void)dying;
    holder *h = (holder *)(void *)((char *)cb - offsetof(holder, cb));
    tc_log_add(h->log, h->tag);
    for (int i = 0; i < 2; i++)
        if (h->drop[i])
            obj_clear_ref(h->drop[i]);
    /* h may be dead now, but its memory lives until this callback returns */
    cr_assert_eq(h->tag, h->log->v[h->log->n - 1], "holder still readable");
}

static obj *holder_new(obj *target, int tag, tc_log *log)
{
    holder *h = (holder *)obj_new(&holder_type, sizeof *h);
    cr_assert_not_null(h, "holder");
    h->tag = tag;
    h->log = log;
    h->cb.fn = holder_fire;
    h->cb.owner = &h->hdr;
    cr_assert_eq(obj_cb_register(target, &h->cb), 0, "register");
    return &h->hdr;
}

Test(obj, callback_drops_its_owner_and_another_holder)
{
    tc_log log = {0};
    obj *t = tn_new();
    obj *h1 = holder_new(t, 1, &log);
    obj *h2 = holder_new(t, 2, &log);
    obj *h3 = holder_new(t, 3, &log);
    ((holder *)h1)->drop[0] = &h2;      /* another weak holder of t */
    ((holder *)h1)->drop[1] = &h1;      /* its own owner */
    obj_decref(t);
    cr_assert_eq(log.n, 2, "h2's callback never ran");
    cr_assert_eq(log.v[0], 1, "h1 first");
    cr_assert_eq(log.v[1], 3, "then h3");
    cr_assert_null(h1, "h1 dropped");
    cr_assert_null(h2, "h2 dropped");
    cr_assert_eq(obj_live_count(), 1, "only h3 left");
    obj_decref(h3);
    tc_end();
}

Test(obj, deferred_callback_of_dead_owner_never_runs)
{
    obj_configure(&(obj_config){.defer_callbacks = 1});
    tc_log log = {0};
    obj *t = tn_new();
    obj *h1 = holder_new(t, 1, &log);
    obj *h2 = holder_new(t, 2, &log);
    obj_decref(t);
    cr_assert_eq(obj_deferred_count(), 2, "two pending");
    obj_decref(h1);                      /* owner dies before the safepoint */
    cr_assert_eq(obj_deferred_count(), 1, "its call was withdrawn");
    cr_assert_eq(obj_safepoint(), 1, "one ran");
    cr_assert_eq(log.n, 1, "one logged");
    cr_assert_eq(log.v[0], 2, "h2's");
    obj_decref(h2);
    obj_configure(&(obj_config){0});
    tc_end();
}

/* A callback that kills another object that has its own callbacks: those
 * run too, after the current death (worklist, not recursion). */
static obj *victim;
static void kill_victim(obj_cb *cb, obj *dying)
{
    (void)cb, (void)dying;
    obj_clear_ref(&victim);
}

Test(obj, callback_deaths_are_queued)
{
    tc_log log = {0};
    obj *t = tn_new();
    victim = tn_new();
    obj_cb k = {.fn = kill_victim};
    obj_cb_register(t, &k);
    logged_cb v = {.cb = {.fn = log_fn}, .log = &log, .tag = 9};
    obj_cb_register(victim, &v.cb);
    obj_decref(t);
    cr_assert_eq(log.n, 1, "victim's callback ran");
    cr_assert_eq(obj_live_count(), 0, "both dead");
    tc_end();
}

/* --- the worklist --------------------------------------------------------- */

static char *stack_lo, *stack_hi;
static uint64_t releases;
static void record_stack(obj *self)
{
    (void)self;
    char here;
    if (!stack_lo || &here < stack_lo)
        stack_lo = &here;
    if (!stack_hi || &here > stack_hi)
        stack_hi = &here;
    releases++;
}

Test(obj, million_long_chain_releases_in_constant_stack, .timeout = 60)
{
    enum { N = 1000000 };
    obj *head = tn_new(), *p = head;
    for (int i = 1; i < N; i++) {
        obj *n = tn_new();
        tn_set(p, 0, n);
        obj_decref(n);
        p = n;
    }
    cr_assert_eq(obj_live_count(), N, "chain built");
    tn_release_hook = record_stack;
    obj_decref(head);
    tn_release_hook = NULL;
    cr_assert_eq(releases, N, "every node released");
    cr_assert_eq(obj_live_count(), 0, "chain gone");
    cr_assert_lt((size_t)(stack_hi - stack_lo), 256,
                 "release depth grew the stack by %zu bytes",
                 (size_t)(stack_hi - stack_lo));
    tc_end();
}

/* --- attributes ------------------------------------------------------------- */

typedef struct edge_log {
    const char *label[8];
    obj *child[8];
    int n;
} edge_log;

static void log_edge(obj *child, const char *label, long index, void *arg)
{
    (void)index;
    edge_log *l = arg;
    l->label[l->n] = label;
    l->child[l->n++] = child;
}

Test(obj, attributes_set_get_replace_remove)
{
    obj *a = tn_new(), *b = tn_new(), *c = tn_new();
    cr_assert_eq(obj_attr_set(a, "x", b), 0, "set x");
    cr_assert_eq(obj_attr_set(a, "y", c), 0, "set y");
    cr_assert_eq(obj_attr_set(a, "z", a), 0, "self attribute");
    cr_assert_eq(obj_attr_count(a), 3, "three");
    cr_assert_eq(obj_attr_get(a, "x"), b, "get x");
    cr_assert_null(obj_attr_get(a, "w"), "absent");
    cr_assert_eq(b->strong, 2, "attribute is strong");

    edge_log l = {0};
    obj_traverse(a, log_edge, &l);
    cr_assert_eq(l.n, 3, "three edges");
    cr_assert_str_eq(l.label[0], "attr:x", "label 0");
    cr_assert_str_eq(l.label[1], "attr:y", "label 1");
    cr_assert_str_eq(l.label[2], "attr:z", "label 2");
    cr_assert_eq(l.child[1], c, "edge to c");

    cr_assert_eq(obj_attr_set(a, "x", c), 0, "replace x");
    cr_assert_eq(b->strong, 1, "old value dropped");
    cr_assert_eq(c->strong, 3, "new value held");
    cr_assert_eq(obj_attr_set(a, "z", NULL), 0, "remove z");
    cr_assert_eq(obj_attr_count(a), 2, "two");
    cr_assert_eq(obj_attr_set(a, "nope", NULL), 0, "removing absent is fine");
    cr_assert_gt(obj_self_bytes(a), sizeof(tnode), "attributes are counted");

    obj_decref(b);
    obj_decref(c);
    cr_assert_eq(obj_live_count(), 2, "a holds c");
    obj_decref(a);
    tc_end();
}

/* Past the map's first size, removals scattered through it (each a
 * backward shift), then the objects die with attributes still set. */
Test(obj, attributes_of_many_objects_stay_their_own)
{
    enum { N = 1000 };
    static obj *o[N];
    obj *v = tn_new();
    char why[160];
    for (int i = 0; i < N; i++) {
        o[i] = tn_new();
        cr_assert_eq(obj_attr_set(o[i], "v", i % 3 ? v : o[i]), 0, "set on %d", i);
    }
    for (int i = 0; i < N; i += 7)
        cr_assert_eq(obj_attr_set(o[i], "v", NULL), 0, "remove on %d", i);
    cr_assert_eq(obj_verify(why, sizeof why), 0, "verify: %s", why);
    for (int i = 0; i < N; i++) {
        obj *want = i % 7 == 0 ? NULL : i % 3 ? v : o[i];
        obj *got = obj_attr_get(o[i], "v");
        cr_assert_eq(got, want, "object %d: attribute %p, expected %p", i, (void *)got,
                     (void *)want);
        cr_assert_eq(obj_attr_count(o[i]), want ? 1u : 0u, "object %d: %zu attributes", i,
                     obj_attr_count(o[i]));
    }
    for (int i = 0; i < N; i++)
        obj_decref(o[i]);
    gc_collect();          /* the self-held ones are cycles */
    cr_assert_eq(obj_live_count(), 1, "only v is left: %llu live",
                 (unsigned long long)obj_live_count());
    cr_assert_eq(v->strong, 1, "v's strong count %u, expected 1", v->strong);
    cr_assert_eq(obj_verify(why, sizeof why), 0, "verify: %s", why);
    obj_decref(v);
    tc_end();
}

/* Sites are interned: the same (file, line) is one index, past the
 * table's first size each keeps its own. */
Test(obj, sites_are_interned_and_kept)
{
    enum { N = 300 };
    static obj *o[N];
    for (int i = 0; i < N; i++) {
        obj_set_site(i % 2 ? "a.scn" : "b.scn", (uint32_t)(i / 2));
        o[i] = tn_new();
    }
    obj_set_site("a.scn", 0);
    obj *again = tn_new();
    cr_assert_eq(again->site, o[1]->site, "a.scn:0 twice: sites %u and %u", again->site,
                 o[1]->site);
    cr_assert_neq(o[0]->site, o[1]->site, "b.scn:0 and a.scn:0 share site %u", o[0]->site);
    for (int i = 0; i < N; i++) {
        obj_site s = obj_site_of(o[i]);
        cr_assert_str_eq(s.file, i % 2 ? "a.scn" : "b.scn", "object %d: file %s", i, s.file);
        cr_assert_eq(s.line, (uint32_t)(i / 2), "object %d: line %u, expected %d", i, s.line,
                     i / 2);
        obj_decref(o[i]);
    }
    obj_decref(again);
    tc_end();
}

Test(obj, attribute_on_dead_object_is_refused)
{
    obj *a = tn_new(), *b = tn_new();
    obj_weak_incref(a);
    obj_decref(a);
    er_clear();
    cr_assert_eq(obj_attr_set(a, "x", b), -1, "refused");
    cr_assert_eq(er_kind_get(), ER_DEAD_REF, "ER_DEAD_REF");
    cr_assert_eq(b->strong, 1, "b not held");
    er_clear();
    obj_weak_decref(a);
    obj_decref(b);
    tc_end();
}

/* --- out of memory ------------------------------------------------------------- */

Test(obj, obj_new_oom_leaks_nothing)
{
    al_fail_at(1, 0);
    er_clear();
    obj *a = obj_new(&tnode_type, sizeof(tnode));
    cr_assert_null(a, "allocation failed");
    cr_assert_eq(er_kind_get(), ER_OOM, "ER_OOM");
    cr_assert_eq(obj_live_count(), 0, "nothing registered");
    er_clear();
    obj *b = tn_new();
    cr_assert_eq(b->id, 1, "a failed new consumes no id");
    obj_decref(b);
    tc_end();
}

Test(obj, attribute_oom_loop_leaves_object_unchanged)
{
    int failures = 0;
    for (uint64_t n = 1;; n++) {
        obj *a = tn_new(), *v = tn_new();
        al_fail_at(n, 0);
        uint64_t before = al_alloc_count();
        er_clear();
        int ok = 1;
        for (int i = 0; i < 4 && ok; i++) {
            char name[8] = {'a', (char)('0' + i), 0};
            size_t count = obj_attr_count(a);
            if (obj_attr_set(a, name, v) != 0) {
                ok = 0;
                failures++;
                cr_assert_eq(er_kind_get(), ER_OOM, "ER_OOM");
                cr_assert_eq(obj_attr_count(a), count, "attributes unchanged");
                cr_assert_eq(v->strong, 1 + count, "no reference taken");
            }
        }
        uint64_t used = al_alloc_count() - before;
        al_fail_at(0, 0);
        er_clear();
        obj_decref(v);
        obj_decref(a);
        tc_verify();
        if (ok) {
            cr_assert_lt(used, n, "a run without failure used fewer allocations");
            break;
        }
    }
    cr_assert_gt(failures, 2, "several failure points exercised (%d)", failures);
    tc_end();
}

/* --- verify ------------------------------------------------------------------ */

Test(obj, verify_catches_broken_registry)
{
    obj *a = tn_new(), *b = tn_new();
    char why[128] = "";
    cr_assert_eq(obj_verify(why, sizeof why), 0, "clean: %s", why);
    a->flags |= OBJ_F_DEAD;
    cr_assert_eq(obj_verify(why, sizeof why), -1, "dead flag on a live object");
    cr_assert(strstr(why, "flags") != NULL, "why names it: %s", why);
    a->flags &= ~(uint32_t)OBJ_F_DEAD;
    obj *save = b->prev;
    b->prev = NULL;
    cr_assert_eq(obj_verify(why, sizeof why), -1, "broken link");
    b->prev = save;
    uint32_t site = a->site;
    a->site = UINT32_MAX - 1;
    cr_assert_eq(obj_verify(why, sizeof why), -1, "a site never interned");
    cr_assert(strstr(why, "site") != NULL, "why names it: %s", why);
    a->site = site;
    a->flags |= OBJ_F_ATTRS;
    cr_assert_eq(obj_verify(why, sizeof why), -1, "flagged with attributes, not in the map");
    cr_assert(strstr(why, "attributes") != NULL, "why names it: %s", why);
    a->flags &= ~(uint32_t)OBJ_F_ATTRS;
    cr_assert_eq(obj_verify(why, sizeof why), 0, "clean again: %s", why);
    obj_decref(a);
    obj_decref(b);
    tc_end();
}

Test(obj, leftover_counts_zombies)
{
    obj *a = tn_new();
    obj_weak_incref(a);
    obj_decref(a);
    cr_assert_eq(obj_leftover(), 1, "a zombie is left over");
    obj_weak_decref(a);
    cr_assert_eq(obj_leftover(), 0, "nothing left");
    obj *b = tn_new();
    cr_assert_eq(b->id, 1, "counter reset when nothing was left");
    obj_decref(b);
    tc_end();
}

/* obj_walk_both visits every object of a list once, with its index, for
 * every length, and says -1 when the list is longer or shorter than n. */
static void seen_at(obj *o, size_t i, void *arg)
{
    obj **seen = arg;
    cr_assert_null(seen[i], "index %zu visited twice", i);
    seen[i] = o;
}

static void link_list(obj *v, size_t len)
{
    memset(v, 0, len * sizeof *v);
    for (size_t i = 0; i < len; i++) {
        v[i].prev = i ? &v[i - 1] : NULL;
        v[i].next = i + 1 < len ? &v[i + 1] : NULL;
    }
}

Test(obj, walk_both_visits_each_once_and_checks_the_length)
{
    enum { MAXLEN = 7 };
    obj v[MAXLEN];
    for (size_t len = 0; len < MAXLEN; len++) {
        link_list(v, len);
        obj *first = len ? &v[0] : NULL, *last = len ? &v[len - 1] : NULL;
        obj *seen[MAXLEN + 1] = {0};
        int rc = obj_walk_both(first, last, len, seen_at, seen);
        cr_assert_eq(rc, 0, "length %zu: rc %d, want 0", len, rc);
        for (size_t i = 0; i < len; i++)
            cr_assert_eq(seen[i], &v[i], "length %zu: index %zu is %p, want %p", len, i,
                         (void *)seen[i], (void *)&v[i]);
        for (size_t n = 0; n <= len + 1; n++) {
            if (n == len)
                continue;
            memset(seen, 0, sizeof seen);
            rc = obj_walk_both(first, last, n, seen_at, seen);
            cr_assert_eq(rc, -1, "length %zu walked as %zu: rc %d, want -1", len, n, rc);
        }
    }
}
