/* fk_graph.c - an fx GraphModule, reduced: the stand-in a recording makes
 * for what make_fx returns, with its Graph, its Nodes and the
 * PythonKeyTracer that built them, as one object. It holds nothing of its
 * own: a node's meta["val"] is a user attribute named as the node
 * (`g.mm = x7`), and each traced fake holds the graph back through its
 * proxy slot (`f.proxy = g`: the fake's __dict__[proxy_slot] -> Proxy ->
 * Node -> Graph -> GraphModule, proxy_tensor.py set_proxy_slot in 1.13.1).
 * Graph and fakes are then one cycle, which the collector frees once the
 * program drops the graph - unless a fake in it is the base of a view in
 * it, held from C++ (ts_set_base_hidden), as PyTorch 1.13.1 keeps it. */
#include <stdio.h>

#include "core/er.h"
#include "fake/fk_internal.h"

static void gm_describe(const obj *self, char *buf, size_t n)
{
    snprintf(buf, n, "GraphModule (graph, nodes, tracer) nodes=%zu", obj_attr_count(self));
}

static const obj_type graph_module_type = {
    .name = "GraphModule", .kind = OBJ_GENERIC, .describe = gm_describe,
    .attr_spelling = "graph node ",
};

obj *fk_graph_module_new(void) { return obj_new(&graph_module_type, sizeof(obj)); }

int fk_is_graph_module(const obj *o) { return o && o->type == &graph_module_type; }
