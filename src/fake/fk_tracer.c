/* fk_tracer.c - a compile, reduced (Dynamo's OutputGraph and TracingContext;
 * designs.md "Additions, version 3"): it holds its mode; each graph input
 * is a graph argument holding its fake strongly and its real example weakly
 * (TensorWeakRef, pytorch#100515; the tracer-holds-real bug holds it
 * strongly), and, when the mode has a ShapeEnv, the fake is tracked there.
 * tr.finish() drops the graph arguments (pytorch#92353); where the design
 * says (fk_v3_rules.finish_clears, 2.3) it also clears the mode's tables
 * (pytorch#171209), the ShapeEnv's tracked fakes (pytorch#193015) and the
 * mode's non-cpu constants (pytorch#184445). */
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "fake/fk_internal.h"

typedef struct graph_arg {
    ts_tensor *fake;            /* strong */
    obj *example;               /* the real tensor: a weak count (TensorWeakRef),
                                   a strong one under tracer-holds-real */
    int strong;
} graph_arg;

typedef struct fk_tracer {
    obj hdr;
    obj *mode;                  /* strong */
    graph_arg *args;
    size_t nargs, cap_args;
} fk_tracer;

static void tr_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_tracer *tr = (fk_tracer *)self;
    if (tr->mode)
        visit(tr->mode, "mode", -1, arg);
    for (size_t i = 0; i < tr->nargs; i++) {
        visit(&tr->args[i].fake->hdr, "graph_arg", (long)i, arg);
        if (tr->args[i].strong)
            visit(tr->args[i].example, "example", (long)i, arg);
    }
}

static void tr_traverse_weak(obj *self, obj_visit_fn visit, void *arg)
{
    fk_tracer *tr = (fk_tracer *)self;
    for (size_t i = 0; i < tr->nargs; i++)
        if (!tr->args[i].strong)
            visit(tr->args[i].example, "example", (long)i, arg);
}

static void drop_args(fk_tracer *tr)
{
    graph_arg *v = tr->args;
    size_t n = tr->nargs, cap = tr->cap_args;
    tr->args = NULL;
    tr->nargs = tr->cap_args = 0;
    for (size_t i = 0; i < n; i++) {
        obj_decref(&v[i].fake->hdr);
        if (v[i].strong)
            obj_decref(v[i].example);
        else
            obj_weak_decref(v[i].example);
    }
    al_free(v, cap * sizeof *v, AL_K_OBJECT);
}

static void tr_release(obj *self)
{
    fk_tracer *tr = (fk_tracer *)self;
    drop_args(tr);
    obj_clear_ref(&tr->mode);
}

static uint64_t tr_owned(const obj *self)
{
    return ((const fk_tracer *)self)->cap_args * sizeof(graph_arg);
}

static void tr_describe(const obj *self, char *buf, size_t n)
{
    snprintf(buf, n, "tracer graph_args=%zu", ((const fk_tracer *)self)->nargs);
}

static const obj_type tracer_type = {
    .name = "tracer", .kind = OBJ_GENERIC, .traverse = tr_traverse,
    .traverse_weak = tr_traverse_weak,
    .release = tr_release, .owned_bytes = tr_owned, .describe = tr_describe,
};

obj *fk_tracer_new(obj *mode)
{
    if (!fk_is_mode(mode)) {
        er_set(ER_TYPE, "tracer() needs a fake mode");
        return NULL;
    }
    fk_tracer *tr = (fk_tracer *)obj_new(&tracer_type, sizeof *tr);
    if (!tr)
        return NULL;
    obj_set_ref(&tr->mode, mode);
    /* a compile retraces: memos of unbacked symbols made before do not
     * apply (collect_metadata_analysis.py@95bc63ca: fake_mode.epoch += 1) */
    if (fk_design_now()->unbacked_memo)
        ((fk_mode *)mode)->epoch++;
    return &tr->hdr;
}

int fk_is_tracer(const obj *o) { return o && o->type == &tracer_type; }

static int push_arg(fk_tracer *tr, ts_tensor *f, obj *example, int strong)
{
    if (al_grow(&tr->args, &tr->cap_args, tr->nargs, sizeof *tr->args, 4, AL_K_OBJECT,
                "fk graph arguments") < 0)
        return er_set(ER_OOM, "out of memory growing the graph arguments");
    obj_incref(&f->hdr);
    if (strong)
        obj_incref(example);
    else
        obj_weak_incref(example);
    tr->args[tr->nargs++] = (graph_arg){f, example, strong};
    return 0;
}

/* codegen-closure-cycle (pytorch#155778, fixed by #155791): PyCodegen's
 * recursive collect_temp_source closure is a cycle (closure, function,
 * cell) that holds the codegen, and through its frame the compile's real
 * inputs: garbage that keeps t alive until a collection reaches it. */
typedef struct fk_codegen_cell {
    obj hdr;
    obj *self, *frame_local;   /* strong: itself (the cycle), the real input */
} fk_codegen_cell;

static void cg_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_codegen_cell *c = (fk_codegen_cell *)self;
    if (c->self)
        visit(c->self, "cell", -1, arg);
    if (c->frame_local)
        visit(c->frame_local, "f_locals", -1, arg);
}

static void cg_release(obj *self)
{
    fk_codegen_cell *c = (fk_codegen_cell *)self;
    obj_clear_ref(&c->self);
    obj_clear_ref(&c->frame_local);
}

static const obj_type codegen_type = {
    .name = "collect_temp_source", .kind = OBJ_GENERIC, .traverse = cg_traverse,
    .release = cg_release,
};

static int leave_codegen_cycle(ts_tensor *t)
{
    fk_codegen_cell *c = (fk_codegen_cell *)obj_new(&codegen_type, sizeof *c);
    if (!c)
        return -1;
    obj_set_ref(&c->frame_local, &t->hdr);
    obj_set_ref(&c->self, &c->hdr);
    obj_decref(&c->hdr);           /* garbage now: only the cycle holds it */
    return 0;
}

ts_tensor *fk_tracer_input(obj *o, ts_tensor *t)
{
    fk_tracer *tr = (fk_tracer *)o;
    if (!tr->mode) {
        er_set(ER_TYPE, "input(): the tracer has no mode");
        return NULL;
    }
    ts_tensor *f = fk_fake(tr->mode, t, NULL);
    if (!f)
        return NULL;
    obj *se = fk_mode_shape_env(tr->mode);
    if (push_arg(tr, f, &t->hdr, fk_bug_state.tracer_holds_real) < 0 ||
        (se && fk_shape_track(se, f) < 0) ||
        (fk_bug_state.codegen_closure_cycle && leave_codegen_cycle(t) < 0)) {
        obj_decref(&f->hdr);
        return NULL;
    }
    return f;
}

/* Dynamo's collection after a compile (convert_frame, run_gc_after_compile:
 * gc.collect(1) since pytorch#142519, a full gc.collect() since #184969;
 * young-gc-after-compile brings the former back where the design has the
 * latter). */
static int post_compile_gc(void)
{
    int how = fk_design_now()->post_compile_gc;
    if (how == FK_PCGC_FULL && fk_bug_state.young_gc_after_compile)
        how = FK_PCGC_YOUNG;
    er_clear();
    if (how == FK_PCGC_FULL)
        fk_collect();
    else if (how == FK_PCGC_YOUNG)
        fk_collect_young(1);
    return er_kind_get() == ER_OOM ? -1 : 0;
}

int fk_tracer_finish(obj *o)
{
    fk_tracer *tr = (fk_tracer *)o;
    drop_args(tr);
    if (!tr->mode || !fk_v3_rules_now()->finish_clears)
        return post_compile_gc();
    fk_mode *m = (fk_mode *)tr->mode;
    if (!fk_bug_state.no_clear_after_compile)
        fk_mode_clear_tables(m);
    if (m->shape_env && !fk_bug_state.shape_env_tracks_real)
        fk_shape_untrack(m->shape_env);
    if (fk_clear_non_cpu_constants(tr->mode) < 0)
        return -1;
    return post_compile_gc();
}
