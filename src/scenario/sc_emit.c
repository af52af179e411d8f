/* sc_emit.c - what a reported heap state writes beside the report: its
 * --dot cluster (the examples and the chains that hold them) and its
 * --objects lines (every object behind it, one record at a time). */
#include "scenario/sc_vm.h"

#include <stdio.h>

#include "core/er.h"

typedef struct line_arg {
    FILE *f;
    const char *file;
    uint32_t line;
} line_arg;

static int one_line(const hp_retained *r, void *arg)
{
    const line_arg *a = arg;
    return rp_write_object_line(a->f, a->file, a->line, r);
}

static void emit_objects(sc_vm *vm, hp_graph *g, int which, const hp_retained *r, size_t n,
                         uint32_t line)
{
    line_arg a = {vm->o->objects, sc_program_file(vm->p), line};
    if (which >= 0) {
        hp_each(g, (hp_which)which, one_line, &a);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (one_line(&r[i], &a) != 0)
            return;
}

/* Examples stand for all of a group's objects: the graph of the objects
 * themselves; more objects than examples: the aggregated graph. */
static int examples_cover(const hp_group *gr, size_t ngr)
{
    for (size_t i = 0; i < ngr; i++)
        if (gr[i].count > gr[i].nexamples)
            return 0;
    return 1;
}

static void emit_dot(sc_vm *vm, hp_graph *g, const hp_retained *r, size_t n,
                     const hp_group *gr, size_t ngr, uint32_t line)
{
    char title[600];
    if (line && vm->cur) {
        char text[400];
        sc_stmt_text(vm, vm->cur, text, sizeof text);
        snprintf(title, sizeof title, "%s:%u: %s", sc_program_file(vm->p), line, text);
    } else {
        snprintf(title, sizeof title, "%s: retained at teardown", sc_program_file(vm->p));
    }
    int rc = gr && !examples_cover(gr, ngr)
                 ? hp_write_dot_groups(gr, ngr, r, n, vm->o->dot, vm->o->dot_cluster, title)
                 : hp_write_dot(g, r, n, vm->o->dot, vm->o->dot_cluster, title);
    if (rc == 0)
        vm->dot_written = 1;
}

/* The first reported heap state's dominator tree, for the page. */
static void take_dom_tree(sc_vm *vm, hp_graph *g, uint32_t line)
{
    rp_scenario *out = vm->out;
    if (out->dtree.n || hp_dom_tree(g, HP_SHOW_NODES, HP_SHOW_KIDS, &out->dtree) != 0)
        return;
    out->dtree_line = line;
}

void sc_vm_emit(sc_vm *vm, hp_graph *g, int which, const hp_retained *r, size_t n,
                const hp_group *gr, size_t ngr, uint32_t line)
{
    if (vm->o->dot && !vm->dot_written && n)
        emit_dot(vm, g, r, n, gr, ngr, line);
    if (vm->o->dom_tree)
        take_dom_tree(vm, g, line);
    if (vm->o->objects)
        emit_objects(vm, g, which, r, n, line);
    er_clear();
}
