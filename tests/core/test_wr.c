/* test_wr.c - weak handles and finalizers. */
#include <criterion/criterion.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/obj.h"
#include "core/tcore.h"
#include "core/wr.h"

TestSuite(wr, .init = tc_begin);

Test(wr, handle_reads_target_until_it_dies)
{
    obj *t = tn_new();
    obj *w = wr_new(t, NULL, NULL);
    cr_assert_not_null(w, "wr_new");
    cr_assert_eq(w->type->kind, OBJ_WEAKREF, "kind");
    cr_assert_eq(wr_get(w), t, "alive target");
    cr_assert(!wr_expired(w), "not expired");
    cr_assert_eq(t->weak, 1, "handle holds a weak count");
    cr_assert_eq(t->strong, 1, "and no strong one");
    uint64_t id = t->id;
    obj_decref(t);
    cr_assert_null(wr_get(w), "dead target reads NULL");
    cr_assert(wr_expired(w), "expired");
    cr_assert_eq(wr_target_raw(w), t, "header kept");
    cr_assert_eq(wr_target_raw(w)->id, id, "header readable");
    cr_assert_eq(obj_zombie_count(), 1, "target is a zombie");
    obj_decref(w);
    cr_assert_eq(obj_zombie_count(), 0, "handle's death freed the header");
    obj *n = tn_new();
    cr_assert_null(wr_get(n), "wr_get of a non-handle is NULL");
    cr_assert(wr_expired(n), "a non-handle reads expired");
    obj_decref(n);
    tc_end();
}

Test(wr, handle_death_drops_weak_count_of_live_target)
{
    obj *t = tn_new();
    obj *w = wr_new(t, NULL, NULL);
    obj_decref(w);
    cr_assert_eq(t->weak, 0, "weak count returned");
    obj_decref(t);
    cr_assert_eq(obj_zombie_count(), 0, "freed at once");
    tc_end();
}

Test(wr, new_on_dead_target_fails)
{
    obj *t = tn_new();
    obj *w = wr_new(t, NULL, NULL);
    obj_decref(t);
    er_clear();
    cr_assert_null(wr_new(t, NULL, NULL), "no handle to a dead object");
    cr_assert_eq(er_kind_get(), ER_DEAD_REF, "ER_DEAD_REF");
    cr_assert_null(wr_finalize(t, NULL, NULL, NULL), "no finalizer on a dead object");
    er_clear();
    obj_decref(w);
    tc_end();
}

/* --- callbacks ------------------------------------------------------------ */

typedef struct wr_ctx {
    tc_log *log;
    int tag;
    obj **self;          /* the handle's own variable */
    obj **other;         /* another handle to drop */
    obj **others_seen[2];/* handles that must already read expired */
} wr_ctx;

static void on_death(obj *handle, void *arg)
{
    wr_ctx *c = arg;
    tc_log_add(c->log, c->tag);
    cr_assert_null(wr_get(handle), "own handle reads expired in its callback");
    for (int i = 0; i < 2; i++)
        if (c->others_seen[i] && *c->others_seen[i])
            cr_assert_null(wr_get(*c->others_seen[i]), "every handle reads expired");
    if (c->other)
        obj_clear_ref(c->other);
    if (c->self)
        obj_clear_ref(c->self);
}

Test(wr, callback_runs_with_every_handle_expired)
{
    tc_log log = {0};
    obj *t = tn_new();
    obj *w1, *w2;
    wr_ctx c1 = {.log = &log, .tag = 1}, c2 = {.log = &log, .tag = 2};
    w1 = wr_new(t, on_death, &c1);
    w2 = wr_new(t, on_death, &c2);
    c1.others_seen[0] = &w2;
    c2.others_seen[0] = &w1;
    obj_decref(t);
    cr_assert_eq(log.n, 2, "both ran");
    cr_assert_eq(log.v[0], 1, "registration order");
    obj_decref(w1);
    obj_decref(w2);
    tc_end();
}

Test(wr, callback_does_not_run_when_handle_died_first)
{
    tc_log log = {0};
    obj *t = tn_new();
    wr_ctx c = {.log = &log, .tag = 1};
    obj *w = wr_new(t, on_death, &c);
    obj_decref(w);
    obj_decref(t);
    cr_assert_eq(log.n, 0, "no callback for a dead handle");
    tc_end();
}

Test(wr, callback_drops_itself_and_another_handle)
{
    tc_log log = {0};
    obj *t = tn_new();
    obj *w1, *w2, *w3;
    wr_ctx c1 = {.log = &log, .tag = 1, .self = &w1, .other = &w2};
    wr_ctx c2 = {.log = &log, .tag = 2};
    wr_ctx c3 = {.log = &log, .tag = 3, .self = &w3};
    w1 = wr_new(t, on_death, &c1);
    w2 = wr_new(t, on_death, &c2);
    w3 = wr_new(t, on_death, &c3);
    obj_decref(t);
    cr_assert_eq(log.n, 2, "w2's callback never ran (it was dropped)");
    cr_assert_eq(log.v[0], 1, "w1");
    cr_assert_eq(log.v[1], 3, "w3");
    cr_assert_null(w1, "w1 dropped itself");
    cr_assert_null(w2, "w1 dropped w2");
    cr_assert_null(w3, "w3 dropped itself");
    tc_end();
}

/* --- finalizers --------------------------------------------------------------- */

typedef struct fin_ctx {
    int calls;
    int payload_alive;
    int target_child_alive;
    obj *target_child;
} fin_ctx;

static void fin_fn(obj *finalizer, obj *payload, void *arg)
{
    fin_ctx *c = arg;
    c->calls++;
    cr_assert(wr_finalizer_alive(finalizer), "pending while fn runs");
    c->payload_alive = payload && !obj_expired(payload);
    c->target_child_alive = c->target_child && !obj_expired(c->target_child);
}

Test(wr, finalizer_runs_once_before_target_release_then_dies)
{
    fin_ctx c = {0};
    obj *t = tn_new(), *child = tn_new(), *payload = tn_new();
    tn_set(t, 0, child);
    c.target_child = child;
    obj *w = wr_new(child, NULL, NULL);      /* watch the child's death */
    obj_decref(child);
    obj *f = wr_finalize(t, fin_fn, payload, &c);
    cr_assert_not_null(f, "finalizer");
    cr_assert_eq(f->type->kind, OBJ_FINALIZER, "kind");
    cr_assert_eq(wr_finalizer_count(), 1, "registered");
    cr_assert_eq(payload->strong, 2, "payload held");
    obj_decref(payload);
    cr_assert_eq(obj_live_count(), 5, "t, child, payload, w, finalizer");
    obj_decref(t);
    cr_assert_eq(c.calls, 1, "fn ran once");
    cr_assert(c.payload_alive, "payload alive during fn");
    cr_assert(c.target_child_alive, "fn ran before the target released its child");
    cr_assert(wr_expired(w), "child died afterwards");
    cr_assert_eq(wr_finalizer_count(), 0, "registry empty");
    cr_assert_eq(obj_live_count(), 1, "finalizer and payload gone; w left");
    obj_decref(w);
    tc_end();
}

Test(wr, finalizer_detach_skips_fn)
{
    fin_ctx c = {0};
    obj *t = tn_new(), *payload = tn_new();
    obj *f = wr_finalize(t, fin_fn, payload, &c);
    obj_decref(payload);
    cr_assert_eq(wr_finalizer_detach(f), 1, "was pending");
    cr_assert_eq(wr_finalizer_count(), 0, "left the registry");
    cr_assert_eq(obj_live_count(), 1, "finalizer and payload gone");
    obj_decref(t);
    cr_assert_eq(c.calls, 0, "fn never ran");
    tc_end();
}

Test(wr, finalizer_kept_by_caller_reports_done)
{
    fin_ctx c = {0};
    obj *t = tn_new();
    obj *f = wr_finalize(t, fin_fn, NULL, &c);
    obj_incref(f);
    obj_decref(t);
    cr_assert_eq(c.calls, 1, "ran");
    cr_assert(!wr_finalizer_alive(f), "done");
    cr_assert_eq(wr_finalizer_detach(f), 0, "nothing to detach");
    obj_decref(f);
    tc_end();
}

Test(wr, handle_oom_leaks_nothing)
{
    obj *t = tn_new();
    al_fail_at(1, 0);
    er_clear();
    cr_assert_null(wr_new(t, NULL, NULL), "failed");
    cr_assert_eq(er_kind_get(), ER_OOM, "ER_OOM");
    cr_assert_eq(t->weak, 0, "no weak count taken");
    cr_assert_null(t->callbacks, "no registration");
    al_fail_at(1, 0);
    cr_assert_null(wr_finalize(t, fin_fn, t, NULL), "failed");
    cr_assert_eq(t->strong, 1, "payload not held");
    cr_assert_eq(wr_finalizer_count(), 0, "nothing registered");
    er_clear();
    obj_decref(t);
    tc_end();
}

/* weak_clear_late: a callback still reads the dying target through another
 * handle; afterwards every handle reads expired. */
static obj *seen_in_callback;
static obj *late_other;

static void on_death_peek(obj *handle, void *arg)
{
    (void)handle;
    (void)arg;
    seen_in_callback = wr_get(late_other);
}

Test(wr, weak_clear_late_keeps_target_readable_during_callbacks)
{
    obj_config saved = obj_get_config(), cfg = saved;
    for (int late = 0; late <= 1; late++) {
        cfg.weak_clear_late = late;
        obj_configure(&cfg);
        obj *t = tn_new();
        obj *w1 = wr_new(t, on_death_peek, NULL);
        late_other = wr_new(t, NULL, NULL);
        seen_in_callback = (obj *)&seen_in_callback;   /* "not run" */
        obj_decref(t);
        if (late)
            cr_assert_eq(seen_in_callback, t, "late: the callback still reads it");
        else
            cr_assert_null(seen_in_callback, "default: cleared before callbacks");
        cr_assert_null(wr_get(late_other), "cleared once the callbacks ran");
        cr_assert(wr_expired(w1));
        obj_decref(w1);
        obj_decref(late_other);
    }
    obj_configure(&saved);
    tc_end();
}
