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
    if (tr)
        obj_set_ref(&tr->mode, mode);
    return tr ? &tr->hdr : NULL;
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
        (se && fk_shape_track(se, f) < 0)) {
        obj_decref(&f->hdr);
        return NULL;
    }
    return f;
}

int fk_tracer_finish(obj *o)
{
    fk_tracer *tr = (fk_tracer *)o;
    drop_args(tr);
    if (!tr->mode || !fk_v3_rules_now()->finish_clears)
        return 0;
    fk_mode *m = (fk_mode *)tr->mode;
    if (!fk_bug_state.no_clear_after_compile)
        fk_mode_clear_tables(m);
    if (m->shape_env && !fk_bug_state.shape_env_tracks_real)
        fk_shape_untrack(m->shape_env);
    return fk_clear_non_cpu_constants(tr->mode) < 0 ? -1 : 0;
}
