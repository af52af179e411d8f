/* sc_run.c - running a parsed scenario: rounds, teardown, the strict end
 * check, growth across rounds, and the final reclaim that brings the
 * process back to zero objects. */
#include "scenario/sc_vm.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "vg/vg.h"
#include "tensor/ts.h"

void sc_options_default(sc_options *o)
{
    memset(o, 0, sizeof *o);
    o->gc = -1;
    o->sweep = -1;
    o->default_sweep = -1;
    o->design = -1;
    o->sweep_every = 128;
    o->end_check = -1;
    o->max_statements = SC_DEFAULT_MAX_STATEMENTS;
    o->max_objects = SC_DEFAULT_MAX_OBJECTS;
    o->max_bytes = SC_DEFAULT_MAX_BYTES;
    o->repeat = 1;
    o->valgrind = 1;
}

uint64_t sc_model_bytes(void)
{
    uint64_t all = al_live_bytes();
    uint64_t own = al_live_bytes_kind(AL_K_SCENARIO) + al_live_bytes_kind(AL_K_HEAP) +
                   al_live_bytes_kind(AL_K_REPORT);
    return all > own ? all - own : 0;
}

/* ---- reclaim ---- */

/* Everything left is garbage now (no scenario variable holds anything). A
 * correct model leaves nothing; what a bug leaves (a leaked count, a
 * finalizer that never fires, a weak count never dropped) is forced out:
 *  1. hold every live object, withdraw every weak callback on it;
 *  2. release what each owns (drops its strong edges, tables, attributes)
 *     while all are held, so nothing dies half-way;
 *  3. force each one's count to 1 and drop it: it dies owning nothing;
 *  4. free the zombies whose weak counts were leaked.
 * Steps 1-4 are core's obj_reclaim_all(); the collection first is the
 * scenario's (gc sits above obj). */
uint64_t sc_reclaim_all(int collected)
{
    obj_safepoint();
    if (obj_live_count() == 0 && obj_zombie_count() == 0)
        return 0;
    if (!collected) {
        gc_collect();
        obj_safepoint();
    }
    uint64_t forced = obj_reclaim_all();
    er_clear();
    return forced;
}

/* ---- teardown ---- */

typedef struct order {
    uint64_t stamp;
    uint32_t slot;
} order;

static int order_cmp(const void *a, const void *b)
{
    const order *x = a, *y = b;
    return x->stamp < y->stamp ? 1 : x->stamp > y->stamp ? -1 : 0;
}

/* Delete every variable, newest binding first, drop the `with` stack, then
 * gc(). Only frees. */
static void teardown(sc_vm *vm, order *ord)
{
    er_clear();
    obj_safepoint();
    size_t n = 0;
    for (uint32_t i = 0; i < vm->p->nvars; i++)
        if (vm->vars[i].k != V_UNBOUND) {
            ord[n].stamp = vm->stamp[i];
            ord[n].slot = i;
            n++;
        }
    qsort(ord, n, sizeof *ord, order_cmp);
    for (size_t i = 0; i < n; i++)
        sc_unbind(vm, ord[i].slot);
    while (vm->nwith > 0) {
        obj *m = vm->with_stack[--vm->nwith];
        vm->with_stack[vm->nwith] = NULL;
        obj_decref(m);
    }
    sc_vm_release_holds(vm);   /* the program's own holds go last */
    obj_safepoint();
    gc_collect();
    fk_sweep_all();
    obj_safepoint();
    er_clear();
}

/* ---- report helpers ---- */

static rp_failure *add_plain_failure(sc_vm *vm, rp_fail_cause cause, uint32_t line,
                                     const char *text, const char *actual, const char *msg)
{
    sc_stmt fake;
    memset(&fake, 0, sizeof fake);
    fake.line = line;
    fake.col = line ? 1 : 0;
    rp_failure *f = sc_add_failure(vm, &fake, cause, actual, msg);
    if (f && text) {
        sc_rp_free_str(f->text);
        f->text = sc_rp_strdup(text);
    }
    return f;
}

static void mark_fail(rp_scenario *out)
{
    if (out->status == RP_PASS)
        out->status = RP_FAIL;
}

/* Strict end check: anything alive, any model byte live. */
static void end_check(sc_vm *vm, uint64_t base)
{
    sc_vm_drop_snapshot(vm);
    uint64_t live = obj_live_count() + obj_zombie_count();
    uint64_t now = sc_model_bytes();
    uint64_t bytes = now > base ? now - base : 0;
    rp_scenario *out = vm->out;
    if (live == 0 && bytes == 0)
        return;
    mark_fail(out);
    out->leaked_bytes = bytes;
    hp_graph *g = live ? hp_snapshot(NULL, 0) : NULL;
    if (live && !g) {
        er_clear();
        char a[160];
        snprintf(a, sizeof a, "%" PRIu64 " objects and %" PRIu64 " bytes retained", live, bytes);
        add_plain_failure(vm, RP_FC_END_CHECK, 0, "end_check", a,
                          "retained after teardown (no details: out of memory analysing them)");
        return;
    }
    if (g) {
        hp_summary sm;
        if (hp_summarize(g, HP_SEL_ALL, sc_examples(vm), &sm) == 0) {
            sc_summary_to_scenario(&sm, out);
            sc_vm_emit(vm, g, HP_SEL_ALL, out->retained, out->nretained, out->groups,
                       out->ngroups, 0);
        }
        er_clear();
        hp_free(g);
    }
    if (live == 0) {
        char a[160];
        snprintf(a, sizeof a, "%" PRIu64 " bytes still allocated", bytes);
        add_plain_failure(vm, RP_FC_END_CHECK, 0, "end_check", a,
                          "allocator bytes live after teardown that no object holds");
    }
}

/* ---- a limit stopped the program ---- */

/* Objects traced whole (snapshot, paths, dominators) when a limit stops
 * the program; past it a census (hp_census) keeps the analysis' own
 * memory to a table of CENSUS_GROUPS groups. */
enum { SC_TRACE_BUDGET = 2000000, CENSUS_GROUPS = 256 };

/* The stopping statement's failure gets what was alive when the limit
 * was hit: its groups and biggest retainers, traced when the heap is
 * small enough, else counted. */
static void limit_report(sc_vm *vm)
{
    rp_scenario *out = vm->out;
    if (!out->nfailures)
        return;
    rp_failure *f = &out->failures[out->nfailures - 1];
    uint64_t n = obj_live_count() + obj_zombie_count();
    hp_summary sm;
    char msg[400];
    if (n <= SC_TRACE_BUDGET) {
        hp_graph *g = sc_vm_snapshot(vm);
        if (g && hp_summarize(g, HP_SEL_ALL, sc_examples(vm), &sm) == 0) {
            sc_summary_to_failure(&sm, f);
            sc_vm_emit(vm, g, HP_SEL_ALL, f->objects, f->nobjects, f->groups, f->ngroups,
                       f->line);
            snprintf(msg, sizeof msg, "stopped by a limit; what was alive then:");
            goto done;
        }
        er_clear();
        sc_vm_drop_snapshot(vm);
    }
    if (hp_census(CENSUS_GROUPS, &sm) != 0) {
        er_clear();
        return;
    }
    sc_summary_to_failure(&sm, f);
    snprintf(msg, sizeof msg, "stopped by a limit; what was alive, counted (%" PRIu64
             " objects: not traced past %u):", n, (unsigned)SC_TRACE_BUDGET);
done:
    sc_rp_free_str(f->message);
    f->message = sc_rp_strdup(msg);
    er_clear();
}

/* ---- growth across rounds ---- */

/* A kind at a creation site: the site's interned index (obj.site: two
 * objects share a site iff these are equal), and its line for messages. */
typedef struct census_key {
    obj_kind kind;
    uint32_t site, line;
    const char *file;   /* of the site: a recording's are the program's */
    uint64_t count;
} census_key;

typedef struct census {
    census_key *k;
    size_t n, cap;
} census;

#define CENSUS_MAX 4096

static void census_add(census *c, const obj *o)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->k[i].kind == o->type->kind && c->k[i].site == o->site) {
            c->k[i].count++;
            return;
        }
    if (c->n == c->cap) {
        if (c->cap >= CENSUS_MAX)
            return;
        size_t nc = c->cap ? c->cap * 2 : 32;
        census_key *nk = al_realloc(c->k, c->cap * sizeof *nk, nc * sizeof *nk, AL_K_SCENARIO,
                                    "sc census");
        if (!nk) {
            er_clear();
            return;
        }
        c->k = nk;
        c->cap = nc;
    }
    c->k[c->n].kind = o->type->kind;
    c->k[c->n].site = o->site;
    obj_site at = obj_site_of(o);
    c->k[c->n].line = at.line;
    c->k[c->n].file = at.file;
    c->k[c->n].count = 1;
    c->n++;
}

static void census_take(census *c)
{
    c->n = 0;
    for (const obj *o = obj_live_first(); o; o = obj_iter_next(o))
        census_add(c, o);
    for (const obj *o = obj_zombie_first(); o; o = obj_iter_next(o))
        census_add(c, o);
}

static void census_free(census *c)
{
    al_free(c->k, c->cap * sizeof *c->k, AL_K_SCENARIO);
    memset(c, 0, sizeof *c);
}

static uint64_t census_get(const census *c, const census_key *k)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->k[i].kind == k->kind && c->k[i].site == k->site)
            return c->k[i].count;
    return 0;
}

static int key_grows(const census *first, const census *last, const obj *o)
{
    census_key k = {o->type->kind, o->site, 0, NULL, 0};
    return census_get(last, &k) > census_get(first, &k);
}

static void growth_check(sc_vm *vm, const census *first, const census *last, uint32_t rounds)
{
    int any = 0;
    for (size_t i = 0; i < last->n; i++) {
        const census_key *k = &last->k[i];
        uint64_t c1 = census_get(first, k);
        if (k->count <= c1)
            continue;
        any = 1;
        mark_fail(vm->out);
        char a[400], text[64], at[220];
        /* a recording's objects were made at the program's lines */
        int prog = k->file && vm->p->file && strcmp(k->file, vm->p->file) != 0;
        if (prog)
            snprintf(at, sizeof at, "%.200s:%u", k->file, k->line);
        else
            snprintf(at, sizeof at, "line %u", k->line);
        double per = (double)(k->count - c1) / (double)(rounds - 1);
        snprintf(a, sizeof a,
                 "%" PRIu64 " %s object%s created at %s retained after %u rounds, %"
                 PRIu64 " after 1 (%.1f more per round)",
                 k->count, obj_kind_name(k->kind), k->count == 1 ? "" : "s", at, rounds,
                 c1, per);
        snprintf(text, sizeof text, "--repeat %u", rounds);
        rp_failure *f = add_plain_failure(vm, RP_FC_GROWTH, prog ? 0 : k->line, text,
                                          a, "retained objects grow with the number of rounds");
        if (f) {
            f->kind = RP_FK_GROWTH;
            if (prog && (f->prog_file = sc_rp_strdup(k->file)))
                f->prog_line = k->line;
        }
    }
    if (!any)
        return;
    /* The growing objects (all of the last round's retained ones of the
     * growing keys) as the scenario's retained groups, with examples: the
     * same bounded summary as the end check, whatever their number. */
    hp_graph *g = hp_snapshot(NULL, 0);
    if (!g) {
        er_clear();
        return;
    }
    hp_select_clear(g);
    obj *lists[2] = {obj_live_first(), obj_zombie_first()};
    for (int l = 0; l < 2; l++)
        for (obj *o = lists[l]; o; o = obj_iter_next(o))
            if (key_grows(first, last, o))
                hp_select(g, o);
    hp_summary sm;
    if (hp_selected(g) && hp_summarize(g, HP_SEL_MARKED, sc_examples(vm), &sm) == 0) {
        sc_summary_to_scenario(&sm, vm->out);
        sc_vm_emit(vm, g, HP_SEL_MARKED, vm->out->retained, vm->out->nretained,
                   vm->out->groups, vm->out->ngroups, 0);
    }
    er_clear();
    hp_free(g);
}

/* ---- the run ---- */

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void record_checkpoints(sc_vm *vm)
{
    const sc_program *p = vm->p;
    rp_scenario *out = vm->out;
    size_t n = 0;
    for (uint32_t i = 0; i < p->ncheckpoints; i++)
        if (vm->cps[i].reached)
            n++;
    if (n == 0)
        return;
    rp_checkpoint *c = al_malloc(n * sizeof *c, AL_K_REPORT, "sc checkpoints");
    if (!c) {
        er_clear();
        return;
    }
    size_t k = 0;
    for (uint32_t i = 0; i < p->ncheckpoints; i++) {
        if (!vm->cps[i].reached)
            continue;
        c[k].name = sc_rp_strdup(p->checkpoint_names[i]);
        c[k].growth = (int64_t)obj_live_count() - (int64_t)vm->cps[i].total;
        memcpy(c[k].kinds, vm->cps[i].kinds, sizeof c[k].kinds);
        k++;
    }
    out->checkpoints = c;
    out->ncheckpoints = n;
}

static int run_program(const sc_program *p, const sc_options *opt, rp_scenario *out);

/* A recorded program says verdict() at its end (top level): its
 * expectations are then fidelity checks (sc_add_failure says so). */
static int has_verdict(const sc_program *p)
{
    for (uint32_t i = 0; i < p->ntop; i++) {
        const sc_stmt *s = p->top[i];
        if (s->kind == S_EXPR && s->e && s->e->kind == E_CALL && s->e->id == B_VERDICT)
            return 1;
    }
    return 0;
}

/* Objects made after the run must not carry a site that points into the
 * program (the caller may free it): the caller's site comes back. */
int sc_run(const sc_program *p, const sc_options *opt, rp_scenario *out)
{
    if (p->parked)
        return sc_run_parked(p, opt, out);
    obj_site saved = obj_current_site();
    /* Ids numbered from the scenario's start (tensor#7 alone is tensor#7 in
     * the suite too) whenever nothing is left of earlier runs. */
    (void)obj_leftover();
    int rc = run_program(p, opt, out);
    obj_set_site(saved.file, saved.line);
    return rc;
}

/* ---- one run of a program, in phases (as src/core/gc.c follows CPython's):
 * settings resolved, open, one round after another, end checks, close
 * (stats). ---- */

typedef struct run_state {
    struct timespec t0;
    al_stats st0;
    int vg;                     /* under memcheck: its leak counts around it */
    vg_leaks vg0;
    uint64_t base, base_total;  /* model bytes before; once the arrays exist */
    uint64_t fp0;               /* the allocator's footprint at the start */
    size_t nv, nc;              /* variables, checkpoints (at least 1 each) */
    order *ord;
    census first, last;         /* after the first and the last round */
    uint32_t rounds, done;
} run_state;

/* Settings, by one rule: the option, else the file's config, else the
 * design's (or fakegc's) default. Sets the design current. */
static fk_design_id resolve_settings(sc_vm *vm, const sc_program *p, const sc_options *opt)
{
    vm->gc_mode = opt->gc >= 0 ? opt->gc : p->cfg_gc >= 0 ? p->cfg_gc : SC_GC_MANUAL;
    /* --compat wins over config compat (designs.md "Additions, version 3");
     * a recording without either replays on the design of its torch */
    int recorded = sc_recorded_design(p);
    fk_design_id design = opt->design >= 0 ? (fk_design_id)opt->design
                        : p->cfg_compat >= 0 ? (fk_design_id)p->cfg_compat
                        : recorded >= 0 ? (fk_design_id)recorded : FK_D_DEFAULT;
    fk_design_set(design);
    vm->sweep = (fk_policy)(opt->sweep >= 0 ? opt->sweep
                                            : p->cfg_sweep >= 0 ? p->cfg_sweep
                                            : opt->default_sweep >= 0 ? opt->default_sweep
                                            : (int)fk_design_now()->policy);
    vm->sweep_every = opt->sweep_every > 0 ? opt->sweep_every : 128;
    vm->end_check = opt->end_check >= 0 ? opt->end_check
                  : p->cfg_end_check >= 0 ? p->cfg_end_check : 1;
    return design;
}

/* The file's config compat names a design the injected bug does not apply
 * to (with --compat that is a usage error, found before running): the
 * scenario is skipped, saying so. 1 skipped (*rc its result), 0 not. */
static int inject_skips(rp_scenario *out, fk_design_id design, int *rc)
{
    char ierr[256];
    if (fk_inject_check(fk_inject_active(), design, ierr, sizeof ierr) == 0)
        return 0;
    char msg[300];
    snprintf(msg, sizeof msg, "not run: --inject: %s", ierr);
    fk_design_set(FK_D_DEFAULT);
    out->status = RP_SKIP;
    *rc = rp_scenario_set_error(out, msg) == 0 ? 0 : -1;
    return 1;
}

/* The interpreter's arrays and the process state of a fresh run. 0, or -1:
 * out of memory, said as a failure of the scenario. */
static int open_run(sc_vm *vm, run_state *rs, fk_design_id design)
{
    const sc_program *p = vm->p;
    size_t nroots = rs->nv + SC_MAX_NESTING + 1;   /* + the dispatch cache */
    fk_cache_clear();          /* the process-wide dispatch cache, per scenario */
    fk_unbacked_reset();       /* inference mode off */
    gc_generations_reset();    /* every object young */
    vm->vars = al_malloc(rs->nv * sizeof *vm->vars, AL_K_SCENARIO, "sc vars");
    vm->stamp = al_malloc(rs->nv * sizeof *vm->stamp, AL_K_SCENARIO, "sc stamps");
    vm->roots = al_malloc(nroots * sizeof *vm->roots, AL_K_SCENARIO, "sc roots");
    vm->roots_cap = nroots;
    vm->fidelity = has_verdict(p);
    vm->track = sc_is_recording(p);
    vm->whatif = sc_whatif_of(p, (int)design);
    vm->cps = al_malloc(rs->nc * sizeof *vm->cps, AL_K_SCENARIO, "sc checkpoints");
    rs->ord = al_malloc(rs->nv * sizeof *rs->ord, AL_K_SCENARIO, "sc teardown order");
    vm->last_use = al_malloc(rs->nv * sizeof *vm->last_use, AL_K_SCENARIO, "sc variable reads");
    vm->root_use = al_malloc(nroots, AL_K_SCENARIO, "sc roots in use");
    if (vm->last_use)
        sc_var_uses(p, vm->last_use);
    if (!vm->vars || !vm->stamp || !vm->roots || !vm->cps || !rs->ord || !vm->last_use ||
        !vm->root_use) {
        char a[300];
        snprintf(a, sizeof a, "OutOfMemory: %s", er_message());
        er_clear();
        vm->out->status = RP_FAIL;
        rp_failure *f = add_plain_failure(vm, RP_FC_SETUP, 0, "(setting up the scenario)", a,
                                          "out of memory before the first statement");
        if (f)
            f->raised = ER_OOM;
        return -1;
    }
    rs->base_total = sc_model_bytes();
    vm->peak = rs->base_total;
    rs->fp0 = al_footprint();
    gc_set_auto(vm->gc_mode == SC_GC_AUTO, 700);
    ts_set_max_bytes(vm->o->max_bytes);
    return 0;
}

/* What the last round (or one that stopped) leaves in the record: the
 * footprint's growth, the what-if counters, checkpoints, live kinds. */
static void last_round_facts(sc_vm *vm, run_state *rs)
{
    rp_scenario *out = vm->out;
    uint64_t fp1 = al_footprint();
    out->footprint_bytes = fp1 > rs->fp0 ? fp1 - rs->fp0 : 0;
    if (sc_whatif_finish(vm) != 0) {
        out->status = RP_ERROR;
        rp_scenario_set_error(out, "OutOfMemory: writing the what-if counters");
        er_clear();
    }
    record_checkpoints(vm);
    for (int k = 0; k < OBJ_KIND_COUNT; k++)
        out->kinds_end[k] = obj_live_count_kind((obj_kind)k);
    out->kinds_known = 1;
}

/* Round r of the program: fresh variables, the statements, teardown. 0 to
 * go on, 1 when the run stopped. */
static int one_round(sc_vm *vm, run_state *rs, uint32_t r)
{
    rp_scenario *out = vm->out;
    for (size_t i = 0; i < rs->nv; i++) {
        vm->vars[i].k = V_UNBOUND;
        vm->vars[i].o = NULL;
        vm->stamp[i] = 0;
    }
    memset(vm->cps, 0, rs->nc * sizeof *vm->cps);
    vm->nwith = 0;
    fk_cache_clear();      /* each run of the program starts with it empty */
    fk_unbacked_reset();   /* ... and out of inference mode */
    vm->count_expectations = r == 0;
    for (int k = 0; k < OBJ_KIND_COUNT; k++) {
        out->kinds_start[k] = obj_live_count_kind((obj_kind)k);
        vm->kinds0[k] = out->kinds_start[k];
    }
    sc_exec_program(vm);
    rs->done = r + 1;
    if (vm->limit_hit)
        limit_report(vm);
    if (r + 1 == rs->rounds || vm->stopped)
        last_round_facts(vm, rs);
    sc_vm_drop_snapshot(vm);
    teardown(vm, rs->ord);
    if (rs->rounds > 1 && !vm->stopped) {
        if (r == 0)
            census_take(&rs->first);
        else if (r + 1 == rs->rounds)
            census_take(&rs->last);
    }
    return vm->stopped ? 1 : 0;
}

/* After the rounds: the strict end check of one round, or the growth
 * between the first and the last of several. */
static void end_checks(sc_vm *vm, run_state *rs)
{
    fk_cache_trim();           /* entries that hold nothing are no one's memory */
    if (rs->rounds == 1 || (vm->stopped && rs->done == 1)) {
        if (vm->end_check)
            end_check(vm, rs->base);
    } else if (!vm->stopped) {
        growth_check(vm, &rs->first, &rs->last, rs->rounds);
    }
}

/* Everything reclaimed and the process state put back; bytes no object
 * explains are a leak of the end check. */
static void close_run(sc_vm *vm, run_state *rs)
{
    rp_scenario *out = vm->out;
    sc_vm_drop_snapshot(vm);
    fk_cache_clear();          /* what its entries hold, before reclaiming */
    sc_reclaim_all(rs->done > 0);
    fk_design_set(FK_D_DEFAULT);
    gc_set_auto(0, 700);
    ts_set_max_bytes(0);
    census_free(&rs->first);
    census_free(&rs->last);
    uint64_t now = sc_model_bytes();
    uint64_t left = now > rs->base ? now - rs->base : 0;
    if (left > out->leaked_bytes)
        out->leaked_bytes = left;
    if (left && vm->end_check && out->nretained == 0 && out->status == RP_PASS) {
        mark_fail(out);
        char a[120];
        snprintf(a, sizeof a, "%" PRIu64 " bytes still allocated after every object was freed",
                 left);
        add_plain_failure(vm, RP_FC_END_CHECK, 0, "end_check", a,
                          "allocator bytes leaked by no object");
    }
    al_free(vm->vars, rs->nv * sizeof *vm->vars, AL_K_SCENARIO);
    al_free(vm->stamp, rs->nv * sizeof *vm->stamp, AL_K_SCENARIO);
    sc_vm_release_holds(vm);
    al_free(vm->roots, vm->roots_cap * sizeof *vm->roots, AL_K_SCENARIO);
    al_free(vm->cps, rs->nc * sizeof *vm->cps, AL_K_SCENARIO);
    al_free(rs->ord, rs->nv * sizeof *rs->ord, AL_K_SCENARIO);
    al_free(vm->last_use, rs->nv * sizeof *vm->last_use, AL_K_SCENARIO);
    al_free(vm->root_use, vm->roots_cap, AL_K_SCENARIO);
}

/* The run's figures: statements, allocations, peak, time, memcheck's. */
static void run_stats(sc_vm *vm, run_state *rs)
{
    rp_scenario *out = vm->out;
    al_stats st1;
    al_stats_get(&st1);
    out->statements = vm->executed;
    out->allocations = st1.total_allocs - rs->st0.total_allocs;
    out->peak_bytes = vm->peak > rs->base_total ? vm->peak - rs->base_total : 0;
    out->wall_ms = ms_since(&rs->t0);
    if (rs->vg) {
        vg_leaks vg1 = {0};
        vg_leak_check_added(&vg1);
        out->valgrind_checked = 1;
        /* memcheck counts definite and indirect together (COUNT_LEAKS) */
        out->valgrind_definite =
            vg1.lost_bytes > rs->vg0.lost_bytes ? vg1.lost_bytes - rs->vg0.lost_bytes : 0;
        out->valgrind_indirect = 0;
        if (out->valgrind_definite && out->status == RP_PASS)
            out->status = RP_FAIL;
    }
}

static int run_program(const sc_program *p, const sc_options *opt, rp_scenario *out)
{
    run_state rs;
    memset(&rs, 0, sizeof rs);
    clock_gettime(CLOCK_MONOTONIC, &rs.t0);
    sc_options defaults;
    if (!opt) {
        sc_options_default(&defaults);
        opt = &defaults;
    }
    er_clear();
    out->status = RP_PASS;
    if (!out->file)
        out->file = sc_rp_strdup(p->file);
    al_stats_get(&rs.st0);
    rs.vg = opt->valgrind && vg_running();
    if (rs.vg)
        vg_leak_check_added(&rs.vg0);
    rs.base = sc_model_bytes();
    sc_vm vm;
    memset(&vm, 0, sizeof vm);
    vm.p = p;
    vm.o = opt;
    vm.out = out;
    fk_design_id design = resolve_settings(&vm, p, opt);
    int rc;
    if (inject_skips(out, design, &rc))
        return rc;
    rs.nv = p->nvars ? p->nvars : 1;
    rs.nc = p->ncheckpoints ? p->ncheckpoints : 1;
    rs.rounds = opt->repeat > 1 ? opt->repeat : 1;
    if (open_run(&vm, &rs, design) == 0) {
        for (uint32_t r = 0; r < rs.rounds; r++)
            if (one_round(&vm, &rs, r) != 0)
                break;
        end_checks(&vm, &rs);
    }
    close_run(&vm, &rs);
    run_stats(&vm, &rs);
    er_clear();
    return out->status == RP_ERROR ? -1 : 0;
}

int sc_run_source(const char *file, const char *src, const sc_options *o, rp_scenario *out,
                  FILE *diag)
{
    int nerr = 0;
    sc_program *p = sc_parse(file, src, strlen(src), diag, 0, &nerr);
    if (!p)
        return -2;
    int rc = sc_run(p, o, out);
    sc_program_free(p);
    return rc;
}
