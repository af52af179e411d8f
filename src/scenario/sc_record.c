/* sc_record.c - filling rp_scenario records with the report module's
 * ownership conventions: strings are al_malloc(strlen + 1, AL_K_REPORT),
 * arrays are exactly count * size bytes of AL_K_REPORT (hp records:
 * AL_K_HEAP, freed with hp_retained_free), so rp_scenario_clear can free
 * them. Every function tolerates out of memory: a field stays NULL. */
#include "scenario/sc_vm.h"

#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"

char *sc_rp_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = al_malloc(n, AL_K_REPORT, "sc report string");
    if (!d) {
        er_clear();   /* a missing report string is not the scenario's error */
        return NULL;
    }
    memcpy(d, s, n);
    return d;
}

void sc_rp_free_str(char *s)
{
    if (s)
        al_free(s, strlen(s) + 1, AL_K_REPORT);
}

int sc_rp_set_error(rp_scenario *out, const char *msg)
{
    sc_rp_free_str(out->error);
    out->error = sc_rp_strdup(msg);
    return out->error ? 0 : -1;
}

/* The query an expectation asks: the first operand of its comparison (or
 * arithmetic) that is a call, a method, an attribute or raises; NULL when
 * it compares plain values. */
static const sc_expr *query_expr(const sc_expr *e)
{
    if (!e)
        return NULL;
    if (e->kind == E_CALL || e->kind == E_METHOD || e->kind == E_ATTR || e->kind == E_RAISES)
        return e;
    if ((e->kind == E_CMP || e->kind == E_ARITH) && e->nargs == 2) {
        const sc_expr *q = query_expr(e->args[0]);
        return q ? q : query_expr(e->args[1]);
    }
    return NULL;
}

static void set_query(rp_failure *f, const sc_stmt *s)
{
    const sc_expr *q = s->kind == S_EXPECT ? query_expr(s->e) : NULL;
    if (!q)
        return;
    const char *name = q->word ? q->word->name : q->name;
    if (q->kind == E_RAISES)
        name = "raises";
    if (!name)
        return;
    f->query_of = q->kind == E_ATTR ? RP_Q_ATTR
                : q->kind != E_METHOD ? RP_Q_BUILTIN
                : q->word && q->word->mk == MK_QUERY ? RP_Q_TENSOR : RP_Q_METHOD;
    snprintf(f->query, sizeof f->query, "%s", name);
}

rp_failure *sc_add_failure(sc_vm *vm, const sc_stmt *s, int cause, const char *actual,
                           const char *message)
{
    rp_scenario *out = vm->out;
    size_t n = out->nfailures;
    rp_failure *nf = al_realloc(out->failures, n * sizeof *nf, (n + 1) * sizeof *nf,
                                AL_K_REPORT, "sc failures");
    if (!nf) {
        er_clear();
        return NULL;
    }
    out->failures = nf;
    out->nfailures = n + 1;
    if (vm->o->on_failure)
        vm->o->on_failure(vm->o->on_statement_arg, s->line);
    rp_failure *f = &nf[n];
    memset(f, 0, sizeof *f);
    f->line = s->line;
    f->col = s->col;
    f->cause = (uint8_t)cause;
    set_query(f, s);
    if (s->text_len) {
        char text[512];
        sc_stmt_text(vm, s, text, sizeof text);
        f->text = sc_rp_strdup(text);
    } else {
        f->text = sc_rp_strdup("");
    }
    f->actual = sc_rp_strdup(actual ? actual : "");
    if (vm->at_file && s->text_len) {   /* a recording's statement: the program's site */
        f->prog_file = sc_rp_strdup(vm->at_file);
        f->prog_line = vm->at_line;
    }
    if (vm->fidelity && s->kind == S_EXPECT) {
        char m[600];
        f->kind = RP_FK_FIDELITY;
        snprintf(m, sizeof m, "fidelity: PyTorch showed the expected value here; the model "
                              "is wrong%s%s", message && *message ? ": " : "",
                 message ? message : "");
        f->message = sc_rp_strdup(m);
    } else {
        f->message = sc_rp_strdup(message ? message : "");
    }
    return f;
}

/* ---- one snapshot per heap state ---- */

hp_graph *sc_vm_snapshot(sc_vm *vm)
{
    /* Reusable while nothing but this and earlier expectations ran: the
     * statement that asks is counted already, so one statement since. */
    gc_stats gs;
    gc_stats_get(&gs);
    if (vm->snap && vm->executed == vm->snap_at + 1 && obj_live_count() == vm->snap_live &&
        obj_zombie_count() == vm->snap_zombie && gs.collections == vm->snap_gc) {
        vm->snap_at = vm->executed;
        return vm->snap;
    }
    sc_vm_drop_snapshot(vm);
    size_t nr = sc_vm_roots(vm);
    vm->snap = hp_snapshot(vm->roots, nr);
    for (size_t i = 0; vm->snap && vm->root_use && i < nr; i++)
        if (vm->root_use[i] && hp_root_in_use(vm->snap, i, 1) != 0)
            er_clear();   /* unmarked: ranked as any variable */
    vm->snap_at = vm->executed;
    vm->snap_live = obj_live_count();
    vm->snap_zombie = obj_zombie_count();
    vm->snap_gc = gs.collections;
    return vm->snap;
}

void sc_vm_drop_snapshot(sc_vm *vm)
{
    hp_free(vm->snap);
    vm->snap = NULL;
}

size_t sc_examples(const sc_vm *vm)
{
    return vm->o->examples ? vm->o->examples : 3;
}

/* The fields a summary fills, in a scenario or a failure. */
typedef struct sum_dst {
    hp_group **groups; size_t *ngroups;
    hp_retained **examples; size_t *nexamples;
    hp_top **top; size_t *ntop;
    uint64_t *total;
} sum_dst;

/* Free what d holds, then move sm into it (sm is left empty). */
static void move_summary(hp_summary *sm, sum_dst d)
{
    hp_summary old = {0, 0, *d.groups, *d.ngroups, *d.examples, *d.nexamples, *d.top, *d.ntop};
    hp_summary_free(&old);
    *d.examples = sm->examples;
    *d.nexamples = sm->nexamples;
    *d.groups = sm->groups;
    *d.ngroups = sm->ngroups;
    *d.top = sm->top;
    *d.ntop = sm->ntop;
    *d.total = sm->total;
    memset(sm, 0, sizeof *sm);
}

void sc_summary_to_scenario(hp_summary *sm, rp_scenario *out)
{
    move_summary(sm, (sum_dst){&out->groups, &out->ngroups, &out->retained, &out->nretained,
                               &out->top, &out->ntop, &out->retained_total});
}

void sc_summary_to_failure(hp_summary *sm, rp_failure *f)
{
    move_summary(sm, (sum_dst){&f->groups, &f->ngroups, &f->objects, &f->nobjects, &f->top,
                               &f->ntop, &f->objects_total});
}
