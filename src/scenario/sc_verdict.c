/* sc_verdict.c - the program's words: `hold(X, "PATH")` (the program holds
 * X at PATH until its end), `at("FILE", LINE)` (what follows was done at
 * the program's FILE:LINE: the creating site of what it makes),
 * `mark("LABEL")` (a named point of the program's progress: the verdict
 * says which marks each group was made after) and
 * `verdict(fail_on="lost,accumulating")` (the model's own retention
 * analysis at the program's end: leak classes, hp_class.h). */
#include "scenario/sc_vm.h"
#include "scenario/sc_eval.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "fake/fk.h"
#include "fake/fk_cat.h"
#include "heap/hp_class.h"
#include "report/rp_verdict.h"
#include "scenario/sc_supp.h"

/* at(FILE, LINE[, ROUND, ROUNDS[, STEP]]): inside a repeat, the round of
 * iteration i (0-based, innermost repeat) is ROUND + i * STEP. */

/* ---- program files: interned for the life of the process (an object's
 * site points at its file name, and reports outlive the run) ---- */

enum { MAX_FILES = 64, FILE_LEN = 200 };
static char files[MAX_FILES][FILE_LEN];
static size_t nfiles;

static const char *intern_file(const char *s, size_t n)
{
    if (n >= FILE_LEN)
        n = FILE_LEN - 1;
    for (size_t i = 0; i < nfiles; i++)
        if (strlen(files[i]) == n && memcmp(files[i], s, n) == 0)
            return files[i];
    if (nfiles == MAX_FILES)
        return NULL;
    memcpy(files[nfiles], s, n);
    files[nfiles][n] = '\0';
    return files[nfiles++];
}

static int str_arg(sc_vm *vm, const sc_expr *e, const char *fn, const char **s, size_t *n)
{
    sc_val v = {0};
    if (sc_eval(vm, e, &v) < 0)
        return -1;
    if (v.k != V_STR) {
        er_set(ER_TYPE, "%s() needs a string, got %s", fn, sc_val_type(&v));
        sc_val_drop(&v);
        return -1;
    }
    *s = v.s;
    *n = (size_t)v.i;
    return 0;
}

/* verdict()'s string keyword kw: 1 with *s and *n, 0 when not given, -1
 * an error (set). */
static int kw_str(sc_vm *vm, const sc_expr *e, const char *kw, const char **s, size_t *n)
{
    const sc_expr *k = sc_kwarg(e, kw);
    return !k ? 0 : str_arg(vm, k, "verdict", s, n) < 0 ? -1 : 1;
}

int sc_ev_hold(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)recv, (void)a;
    const char *s;
    size_t n;
    if (str_arg(vm, e->args[1], "hold", &s, &n) < 0)
        return -1;
    sc_val x = {0};
    if (sc_eval(vm, e->args[0], &x) < 0)
        return -1;
    if (x.k != V_OBJ) {
        er_set(ER_TYPE, "hold() needs an object, got %s", sc_val_type(&x));
        sc_val_drop(&x);
        return -1;
    }
    if (vm->nholds == vm->cap_holds) {
        size_t nc = vm->cap_holds ? vm->cap_holds * 2 : 16;
        hp_root *nh = al_realloc(vm->holds, vm->cap_holds * sizeof *nh, nc * sizeof *nh,
                                 AL_K_SCENARIO, "sc holds");
        if (!nh) {
            sc_val_drop(&x);
            return er_set(ER_OOM, "out of memory holding %s", "an object");
        }
        vm->holds = nh;
        vm->cap_holds = nc;
    }
    size_t need = vm->p->nvars + SC_MAX_NESTING + vm->nholds + 1;
    if (need > vm->roots_cap) {   /* sc_vm_roots lists the holds too */
        size_t nc = need * 2;
        hp_root *nr = al_malloc(nc * sizeof *nr, AL_K_SCENARIO, "sc roots");
        uint8_t *nu = al_malloc(nc, AL_K_SCENARIO, "sc roots in use");
        if (!nr || !nu) {   /* both or neither: they share roots_cap */
            if (nr)
                al_free(nr, nc * sizeof *nr, AL_K_SCENARIO);
            if (nu)
                al_free(nu, nc, AL_K_SCENARIO);
            sc_val_drop(&x);
            return er_set(ER_OOM, "out of memory holding %s", "an object");
        }
        memcpy(nr, vm->roots, vm->roots_cap * sizeof *nr);
        memcpy(nu, vm->root_use, vm->roots_cap);
        al_free(vm->roots, vm->roots_cap * sizeof *nr, AL_K_SCENARIO);
        al_free(vm->root_use, vm->roots_cap, AL_K_SCENARIO);
        vm->roots = nr;
        vm->root_use = nu;
        vm->roots_cap = nc;
    }
    char *name = al_malloc(n + 1, AL_K_SCENARIO, "sc hold path");
    if (!name) {
        sc_val_drop(&x);
        return er_set(ER_OOM, "out of memory holding %s", "an object");
    }
    memcpy(name, s, n);
    name[n] = '\0';
    vm->holds[vm->nholds].name = name;
    vm->holds[vm->nholds].o = x.o;   /* takes the reference */
    vm->holds[vm->nholds].var_len = strcspn(name, ".[ ");   /* "KEEP[3]": KEEP */
    vm->nholds++;
    out->k = V_NONE;
    return 0;
}

void sc_vm_release_holds(sc_vm *vm)
{
    for (size_t i = 0; i < vm->nholds; i++) {
        obj *o = vm->holds[i].o;
        al_free((char *)vm->holds[i].name, strlen(vm->holds[i].name) + 1, AL_K_SCENARIO);
        vm->holds[i].o = NULL;
        obj_decref(o);
    }
    vm->nholds = 0;
    al_free(vm->holds, vm->cap_holds * sizeof *vm->holds, AL_K_SCENARIO);
    vm->holds = NULL;
    vm->cap_holds = 0;
    al_free(vm->execs, vm->cap_execs * sizeof *vm->execs, AL_K_SCENARIO);
    vm->execs = NULL;
    vm->nexecs = vm->cap_execs = 0;
    al_free(vm->marks, vm->cap_marks * sizeof *vm->marks, AL_K_SCENARIO);
    vm->marks = NULL;
    vm->nmarks = vm->cap_marks = 0;
    vm->at_file = NULL;
    vm->at_seen = 0;
}

/* The statement about to run is at the program's site. */
void sc_vm_at_statement(sc_vm *vm)
{
    if (vm->at_file)
        obj_set_site(vm->at_file, vm->at_line);
}

/* One execution of the site (a round of whatever the program does there):
 * what it makes from now on has ids >= obj_next_id(). */
static void count_execution(sc_vm *vm, uint32_t round, uint32_t rounds)
{
    if (vm->nexecs == vm->cap_execs) {
        size_t nc = vm->cap_execs ? vm->cap_execs * 2 : 256;
        sc_exec *ne = al_realloc(vm->execs, vm->cap_execs * sizeof *ne, nc * sizeof *ne,
                                 AL_K_SCENARIO, "sc executions");
        if (!ne) {
            er_clear();   /* growth is then judged on fewer executions */
            return;
        }
        vm->execs = ne;
        vm->cap_execs = nc;
    }
    vm->execs[vm->nexecs++] = (sc_exec){vm->at_file, vm->at_line, round, rounds,
                                        obj_next_id()};
}

int sc_ev_at(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)recv, (void)a;
    const char *s;
    size_t n;
    int64_t line;
    int64_t round = 0, rounds = 0, step = 0;
    if (str_arg(vm, e->args[0], "at", &s, &n) < 0 ||
        sc_eval_int(vm, e->args[1], &line, "at()'s line") < 0)
        return -1;
    if (e->nargs == 3)
        return er_set(ER_TYPE, "at(FILE, LINE, ROUND, ROUNDS): ROUND needs ROUNDS");
    if (e->nargs >= 4 && (sc_eval_int(vm, e->args[2], &round, "at()'s round") < 0 ||
                          sc_eval_int(vm, e->args[3], &rounds, "at()'s rounds") < 0))
        return -1;
    if (e->nargs == 5) {   /* in a repeat: ROUND + STEP per iteration */
        if (sc_eval_int(vm, e->args[4], &step, "at()'s step") < 0)
            return -1;
        if (step < 0 || step > UINT32_MAX)
            return er_set(ER_TYPE, "at(): step %" PRId64 " out of range", step);
        round += step * vm->rep_iter;
    }
    if (line < 0 || line > UINT32_MAX)
        return er_set(ER_TYPE, "at(): line %" PRId64 " out of range", line);
    if (round < 0 || rounds < round || rounds > UINT32_MAX)
        return er_set(ER_TYPE, "at(): round %" PRId64 " of %" PRId64 " out of range", round,
                      rounds);
    const char *f = intern_file(s, n);
    if (!f)
        return er_set(ER_LIMIT, "at(): more than %d program files", MAX_FILES);
    vm->at_file = f;
    vm->at_line = (uint32_t)line;
    count_execution(vm, (uint32_t)round, (uint32_t)rounds);
    if (vm->o && vm->o->on_program_site)
        vm->o->on_program_site(vm->o->on_statement_arg, f, (uint32_t)line, (uint32_t)round,
                               ++vm->at_seen);
    out->k = V_NONE;
    return 0;
}

/* mark("LABEL"): what is made from now on was made after this mark. */
int sc_ev_mark(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a, sc_val *out)
{
    (void)recv, (void)a;
    const char *s;
    size_t n;
    if (str_arg(vm, e->args[0], "mark", &s, &n) < 0)
        return -1;
    if (vm->nmarks == vm->cap_marks) {
        size_t nc = vm->cap_marks ? vm->cap_marks * 2 : 16;
        sc_mark *nm = al_realloc(vm->marks, vm->cap_marks * sizeof *nm, nc * sizeof *nm,
                                 AL_K_SCENARIO, "sc marks");
        if (!nm)
            return er_set(ER_OOM, "out of memory keeping %s", "a mark");
        vm->marks = nm;
        vm->cap_marks = nc;
    }
    sc_mark *m = &vm->marks[vm->nmarks++];
    memset(m, 0, sizeof *m);
    memcpy(m->label, s, n < sizeof m->label ? n : sizeof m->label - 1);
    m->id = obj_next_id();
    out->k = V_NONE;
    return 0;
}

/* The label of the last mark before object id was made, or "". */
static const char *mark_before(const sc_vm *vm, uint64_t id)
{
    size_t lo = 0, hi = vm->nmarks;   /* ids ascend: the first mark past id */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vm->marks[mid].id <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? vm->marks[lo - 1].label : "";
}

/* ---- verdict() ---- */

/* The category of every live object a verdict judges (fk_category_of), by
 * id: a fake's own meta tensor left out (it is the fake's), and a mode's
 * converters (fk_mode_parts: the mode made them, no user did; they count
 * in its mode's retained size, not as objects of their own; a stand-alone
 * FakeTensorConverter() is one). */
typedef struct cat_id {
    uint64_t id;
    int cat;
} cat_id;

static int cat_id_cmp(const void *a, const void *b)
{
    const cat_id *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static size_t categories_count(void)
{
    size_t n = 0;
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o))
        n += fk_category_of(o) >= 0;
    return n;
}

/* The categories_count() entries into v, sorted by id. */
static void categories(cat_id *v, size_t n)
{
    size_t k = 0;
    for (obj *o = obj_live_first(); o && k < n; o = obj_iter_next(o)) {
        int c = fk_category_of(o);
        if (c >= 0)
            v[k++] = (cat_id){o->id, c};
    }
    qsort(v, k, sizeof *v, cat_id_cmp);
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o)) {
        const obj *part[FK_MODE_PARTS + 1];
        size_t np = fk_mode_parts(o, part);
        part[np++] = fk_fake_meta(o);
        for (size_t i = 0; i < np; i++) {
            cat_id key = {part[i] ? part[i]->id : 0, 0}, *at;
            if (part[i] && (at = bsearch(&key, v, k, sizeof *v, cat_id_cmp)) != NULL)
                at->cat = -1;
        }
    }
}

typedef struct exec_index {
    const sc_exec *v;   /* sorted by site, then id */
    size_t n;
    const cat_id *cats; /* categories() */
    size_t ncats;
} exec_index;

static int subject(const hp_retained *r, void *arg)
{
    const exec_index *x = arg;
    if (r->reason == HP_STALE_MEMO || r->reason == HP_PENDING_STORAGE)
        return r->kind == OBJ_STORAGE ? FK_CAT_STORAGE : FK_CAT_MEMO;
    cat_id key = {r->id, 0};
    const cat_id *at = bsearch(&key, x->cats, x->ncats, sizeof *x->cats, cat_id_cmp);
    return at ? at->cat : -1;
}

static int exec_cmp(const void *a, const void *b)
{
    const sc_exec *x = a, *y = b;
    if (x->file != y->file)
        return (uintptr_t)x->file < (uintptr_t)y->file ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static uint32_t exec_of(obj_site site, uint64_t id, uint32_t *total, void *arg)
{
    const exec_index *x = arg;
    size_t lo = 0, hi = x->n;
    while (lo < hi) {   /* first entry of the site */
        size_t mid = (lo + hi) / 2;
        const sc_exec *m = &x->v[mid];
        if ((uintptr_t)m->file < (uintptr_t)site.file ||
            (m->file == site.file && m->line < site.line))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo, k = lo, at = SIZE_MAX;
    while (k < x->n && x->v[k].file == site.file && x->v[k].line == site.line) {
        if (x->v[k].id <= id)
            at = k;   /* the last at() of the site before the object */
        k++;
    }
    if (at == SIZE_MAX) {
        *total = 0;
        return 0;
    }
    if (x->v[at].rounds) {   /* the recorder's rounds of the loop around it */
        *total = x->v[at].rounds;
        return x->v[at].round;
    }
    *total = (uint32_t)(k - first);   /* else: each at() is a round */
    return (uint32_t)(at - first + 1);
}

/* The converter that keeps a lingering group (its first member's weak
 * holder, hp_class_group.weak_holder): its id and how many more
 * conversions until its next periodic sweep reclaims it (sweep_every -
 * check_count); 0 when it is not a live converter that sweeps. */
static int64_t conversions_to_sweep(const hp_class_group *g, uint64_t *conv)
{
    *conv = 0;
    for (obj *o = obj_live_first(); g->weak_holder && o; o = obj_iter_next(o)) {
        fk_counters c;
        if (o->id != g->weak_holder)
            continue;
        if (fk_counters_get(o, &c) == 0 && c.sweep_every > 0) {
            *conv = o->id;
            return c.sweep_every - c.check_count;
        }
        er_clear();
        break;
    }
    return 0;
}

/* A lost group kept by a reference the collector cannot see (a view's base
 * held from C++): its first member (example_id) is reached from what such a
 * reference holds. */
static int held_by_view_base(const hp_class_group *g)
{
    uint64_t id = g->example_id;
    for (obj *o = obj_live_first(); o && id; o = obj_iter_next(o))
        if (o->id == id) {
            int held = gc_hidden_holds(o);
            if (held < 0)
                er_clear();      /* not known: said as unreachable */
            return held > 0;
        }
    return 0;
}

/* What holds the group: its root kind, mechanism and root name. */
static void group_root(rp_vgroup *v, const hp_class_group *g)
{
    if (g->cls == HP_CL_LINGERING) {   /* a design with no sweep leaves it */
        v->root = RP_ROOT_PYTORCH;
        v->mech = fk_design_sweeps(fk_design_now()) ? RP_MECH_PENDING_SWEEP
                                                     : RP_MECH_STALE_ENTRY;
        return;
    }
    switch (g->root) {
    case HP_RK_FINALIZERS: v->root = RP_ROOT_FINALIZERS; break;
    case HP_RK_UNREACHABLE: v->root = RP_ROOT_UNREACHABLE; break;
    case HP_RK_WEAK: v->root = RP_ROOT_WEAK; break;
    default:
        v->root = RP_ROOT_PROGRAM;
        snprintf(v->root_name, sizeof v->root_name, "%s", g->root_name);
        break;
    }
    if (g->cls == HP_CL_LOST && g->reason == HP_REFCOUNT_LEAK) {
        v->root = RP_ROOT_PYTORCH;
        v->mech = RP_MECH_REFCOUNT_LEAK;
    } else if (g->cls == HP_CL_LOST && held_by_view_base(g)) {
        v->root = RP_ROOT_PYTORCH;
        v->mech = RP_MECH_VIEW_BASE;
    } else if (g->cls == HP_CL_LOST && v->root != RP_ROOT_UNREACHABLE) {
        v->root = RP_ROOT_PYTORCH;
    }
    if (v->root != RP_ROOT_PROGRAM)
        v->root_name[0] = '\0';
}

/* The verdict's record of one group (rp_vgroup). */
static void make_group(rp_vgroup *v, const hp_class_group *g, int suppressed,
                       const sc_vm *vm)
{
    memset(v, 0, sizeof *v);
    v->cls = g->cls;
    v->cat = (fk_category)g->cat;
    v->suppressed = (uint8_t)suppressed;
    v->count = g->count;
    v->bytes = g->bytes;
    v->retained = g->retained;
    v->first_round = g->first_exec;
    v->last_round = g->last_exec;
    v->rounds = g->execs;
    snprintf(v->file, sizeof v->file, "%s", g->site.file ? g->site.file : "");
    v->line = g->site.file ? g->site.line : 0;
    snprintf(v->path, sizeof v->path, "%s", g->mode_path);
    snprintf(v->mark_from, sizeof v->mark_from, "%s", mark_before(vm, g->first_id));
    snprintf(v->mark_to, sizeof v->mark_to, "%s", mark_before(vm, g->last_id));
    group_root(v, g);
    if (g->cls == HP_CL_LINGERING)
        v->to_sweep = conversions_to_sweep(g, &v->converter);
}

/* ---- suppressions (sc_supp.h) ---- */

static long rule_for(const sc_supp *rules, const hp_class_group *g)
{
    char site[240];
    if (g->site.file && g->site.line)
        snprintf(site, sizeof site, "%s:%u", g->site.file, g->site.line);
    else
        snprintf(site, sizeof site, "%s", g->site.file ? g->site.file : "?");
    return sc_supp_match(rules, (int)g->cls, g->cat, site, g->example);
}

/* The verdict's record (rp_verdict.h) of classes c, replacing any earlier
 * one; the scenario fails when a class of mask has subjects. */
static int record_verdict(sc_vm *vm, const hp_classes *c, unsigned mask, const sc_supp *rules)
{
    size_t nrules = rules ? rules->n : 0;
    uint64_t(*hits)[HP_CAT_MAX] = NULL;
    if (nrules && !(hits = al_calloc(nrules, sizeof *hits, AL_K_SCENARIO, "suppression hits")))
        return er_set(ER_OOM, "out of memory counting suppressions");
    rp_verdict *v = rp_verdict_new();
    if (!v) {
        al_free(hits, nrules * sizeof *hits, AL_K_SCENARIO);
        return -1;
    }
    v->line = vm->cur ? vm->cur->line : 0;
    if (vm->at_file) {   /* a recording: the program's last site */
        snprintf(v->at_file, sizeof v->at_file, "%s", vm->at_file);
        v->at_line = vm->at_line;
    }
    v->fails_on = mask;
    for (int k = 0; k < HP_CL_COUNT; k++)
        for (int j = 0; j < HP_CAT_MAX; j++)
            v->count[k] += c->count[k][j];
    int rc = 0;
    for (size_t i = 0; i < c->ngroups && rc == 0; i++) {
        const hp_class_group *g = &c->groups[i];
        long r = rule_for(rules, g);
        if (r >= 0) {
            hits[r][g->cat] += g->count;
            v->count[g->cls] -= g->count;
            v->suppressed += g->count;
        } else {
            v->bytes[g->cls] += g->bytes;
        }
        rp_vgroup vg;
        make_group(&vg, g, r >= 0, vm);
        rc = rp_verdict_add_group(v, &vg);
    }
    for (size_t i = 0; i < nrules && rc == 0; i++)
        for (int k = 0; k < FK_CAT_COUNT && rc == 0; k++)
            if (hits[i][k])
                rc = rp_verdict_add_supp(v, rules->rules[i].name, (fk_category)k, hits[i][k]);
    al_free(hits, nrules * sizeof *hits, AL_K_SCENARIO);
    if (rc != 0) {
        rp_verdict_free(v);
        return -1;
    }
    rp_verdict_free(vm->out->verdict);
    vm->out->verdict = v;
    if (rp_verdict_fails(v) && vm->out->status == RP_PASS)
        vm->out->status = RP_FAIL;
    return 0;
}

/* verdict(stopped="prog.py:12", why="..."): the recorder stopped before the
 * program ended, so what it left is not known: NOT JUDGED (status error),
 * never a pass. 1 when it did, 0 when not, -1 an error (set). */
static int not_judged(sc_vm *vm, const sc_expr *e)
{
    const char *s, *w = "";
    size_t n, wn = 0;
    int has = kw_str(vm, e, "stopped", &s, &n);
    if (has <= 0 || kw_str(vm, e, "why", &w, &wn) < 0)
        return has < 0 ? -1 : 0;
    char site[200], why[400];
    snprintf(site, sizeof site, "%.*s", n > 190 ? 190 : (int)n, s);
    snprintf(why, sizeof why, "%.*s", wn > 390 ? 390 : (int)wn, w);
    if (rp_scenario_set_not_judged(vm->out, site, why) != 0)
        return -1;
    return 1;
}

/* verdict(ended_at="prog.py:31", ended="exit 0"): a recording's true end, the
 * program's last statement and how it ended, in place of its last event's
 * site; neither said, the verdict keeps that. 0, or -1 (set). */
static int program_end(sc_vm *vm, const sc_expr *e, rp_verdict *v)
{
    const char *s, *w;
    size_t n, wn;
    int has = kw_str(vm, e, "ended_at", &s, &n), how = kw_str(vm, e, "ended", &w, &wn);
    if (has < 0 || how < 0)
        return -1;
    if (how)
        snprintf(v->ended, sizeof v->ended, "%.*s", wn >= sizeof v->ended
                 ? (int)sizeof v->ended - 1 : (int)wn, w);
    if (!has)
        return 0;
    size_t colon = n;
    while (colon > 0 && s[colon - 1] != ':')
        colon--;
    char *stop = NULL;
    char num[16];
    snprintf(num, sizeof num, "%.*s", (int)(n - colon < 15 ? n - colon : 15), s + colon);
    unsigned long line = colon > 1 ? strtoul(num, &stop, 10) : 0;
    if (colon <= 1 || colon == n || !stop || *stop || line > UINT32_MAX ||
        colon - 1 >= sizeof v->at_file)
        return er_set(ER_TYPE, "verdict(): ended_at \"%.*s\": expected \"FILE:LINE\"",
                      n > 120 ? 120 : (int)n, s);
    snprintf(v->at_file, sizeof v->at_file, "%.*s", (int)(colon - 1), s);
    v->at_line = (uint32_t)line;
    return 0;
}

/* The rules that apply: --suppress, else verdict(suppress=), else config
 * suppress; a literal's were read by the parser, any other is read into
 * *read now. 0 (*rules NULL: none), or -1 (set). */
static int suppressions(sc_vm *vm, const sc_expr *e, const sc_supp **rules, sc_supp *read)
{
    const char *s;
    size_t n;
    *rules = vm->o ? vm->o->suppress : NULL;
    int has = *rules ? 0 : kw_str(vm, e, "suppress", &s, &n);
    if (has < 0)
        return -1;
    if (!has && !*rules && vm->p->cfg_suppress) {   /* the keyword wins over config */
        s = vm->p->cfg_suppress;
        n = strlen(s);
        has = 1;
    }
    if (!has)
        return 0;
    char path[4096], err[600];
    if (sc_supp_path(vm->p->file, s, n, path, sizeof path) < 0)
        return er_set(ER_TYPE, "suppressions: the path is too long");
    if ((*rules = sc_supp_files_find(vm->p->supps, path)))
        return 0;
    if (sc_supp_read(read, path, err, sizeof err) < 0)
        return er_set(ER_TYPE, "suppressions: %s", err);
    *rules = read;
    return 0;
}

/* What the verdict judged, beside the report: the page's dominator tree,
 * and with --dot / --objects its subjects (every member of its groups:
 * every fake, mode, converter, finalizer, meta tensor and memo entry left
 * at the end), so a recording's graph and object lines are not empty. */
static int emit_subjects(sc_vm *vm, hp_graph *g, exec_index *xi, uint32_t line)
{
    hp_retained *r = NULL;
    size_t n = 0, k = 0;
    if ((vm->o->dot || vm->o->objects) && hp_retained_all(g, &r, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (subject(&r[i], xi) >= 0) {   /* moved to the front, all n freed below */
            hp_retained t = r[k];
            r[k++] = r[i];
            r[i] = t;
        }
    /* grouped as a run's retained objects are, so that --dot draws the
     * groups (the aggregated graph) when their examples do not cover them */
    hp_group *gr = NULL;
    size_t ngr = 0;
    if (vm->o->dot && k && hp_group_records(r, k, &gr, &ngr) != 0) {
        hp_retained_free(r, n);
        return -1;
    }
    sc_vm_emit(vm, g, -1, r, k, gr, ngr, line);
    hp_groups_free(gr, ngr);
    hp_retained_free(r, n);
    return 0;
}

int sc_ev_verdict(sc_vm *vm, const sc_expr *e, const sc_val *recv, const ts_args *a,
                  sc_val *out)
{
    (void)recv, (void)a;
    unsigned mask = HP_CLASS_FAIL_DEFAULT;
    const char *s;
    size_t n;
    int has = not_judged(vm, e);
    if (has != 0) {
        out->k = V_NONE;
        return has < 0 ? -1 : 0;
    }
    has = kw_str(vm, e, "fail_on", &s, &n);
    if (has < 0)
        return -1;
    if (has) {
        char csv[128];
        snprintf(csv, sizeof csv, "%.*s", n > 120 ? 120 : (int)n, s);
        char words[96];
        hp_class_words(words, sizeof words);
        if (hp_class_mask(csv, &mask) < 0)
            return er_set(ER_TYPE, "verdict(): fail_on \"%s\": expected a comma list of %s", csv,
                          words);
    }
    const sc_supp *rules = NULL;
    sc_supp read = {0};
    if (suppressions(vm, e, &rules, &read) < 0)
        return -1;
    /* the program's end: a full collection (Python's gc.collect()), no sweep */
    obj_safepoint();
    gc_collect();
    obj_safepoint();
    sc_vm_drop_snapshot(vm);
    size_t nr = sc_vm_roots(vm);
    hp_graph *g = hp_snapshot(vm->roots, nr);
    if (!g)
        return -1;
    /* the executions by site and the categories by id, in one block
     * (sc_exec is 8-aligned: the cat_ids follow it) */
    size_t ncats = categories_count();
    size_t bytes = vm->nexecs * sizeof(sc_exec) + ncats * sizeof(cat_id);
    sc_exec *sorted = bytes ? al_malloc(bytes, AL_K_SCENARIO, "sc verdict execs") : NULL;
    if (bytes && !sorted) {
        hp_free(g);
        return er_set(ER_OOM, "out of memory judging %zu statements", vm->nexecs);
    }
    if (vm->nexecs) {
        memcpy(sorted, vm->execs, vm->nexecs * sizeof *sorted);
        qsort(sorted, vm->nexecs, sizeof *sorted, exec_cmp);
    }
    cat_id *cats = ncats ? (cat_id *)(void *)(sorted + vm->nexecs) : NULL;
    if (ncats)
        categories(cats, ncats);
    exec_index xi = {sorted, vm->nexecs, cats, ncats};
    hp_class_spec sp = {subject, exec_of, &xi, NULL};
    hp_classes c;
    int rc = hp_classify(g, &sp, &c);
    if (rc == 0) {
        rc = record_verdict(vm, &c, mask, rules);
        hp_classes_free(&c);
    }
    if (rc == 0)
        rc = program_end(vm, e, vm->out->verdict);
    if (rc == 0)
        rc = emit_subjects(vm, g, &xi, vm->cur ? vm->cur->line : 0);
    al_free(sorted, bytes, AL_K_SCENARIO);
    hp_free(g);
    sc_supp_free(&read);
    if (rc < 0)
        return -1;
    out->k = V_NONE;
    return 0;
}
