/* theap.h - test objects for the heap tests: nodes with four labelled strong
 * slots and four labelled weak slots, of any kind and type name.
 *
 *   obj *a = th_new(&th_node, 100);          // "Node", OBJ_GENERIC, 100 owned B
 *   th_set(a, 0, b, "child", 0);              // a.child[0] -> b (strong)
 *   th_weak(m, 1, s, "pending", 2);           // m.pending[2] ~> s (weak count)
 */
#ifndef FAKEGC_TESTS_HEAP_THEAP_H
#define FAKEGC_TESTS_HEAP_THEAP_H

#include <stdint.h>

#include "core/obj.h"

enum { TH_SLOTS = 4 };

typedef struct th_obj {
    obj hdr;
    obj *child[TH_SLOTS];
    const char *clabel[TH_SLOTS];
    long cindex[TH_SLOTS];
    obj *weak[TH_SLOTS];
    const char *wlabel[TH_SLOTS];
    long windex[TH_SLOTS];
    uint64_t owned;
} th_obj;

/* Node (generic), FakeTensorMode, FakeTensorConverter, MetaConverter,
 * storage (OBJ_STORAGE), finalize (OBJ_FINALIZER), weakref. */
extern const obj_type th_node, th_mode, th_fconv, th_mconv, th_storage, th_fin, th_wref;

obj *th_new(const obj_type *t, uint64_t owned);          /* asserts */
void th_set(obj *a, int slot, obj *b, const char *label, long index);
void th_weak(obj *a, int slot, obj *b, const char *label, long index);
/* "Type#id.label[index]" / "kind#id" of an object, in a static buffer
 * ring (valid for a few calls). */
const char *th_edge(const obj *o, const char *label, long index);
const char *th_node_name(const obj *o);

/* A heap test's setup and teardown: no error and no object at the start;
 * at the end, once collected, no object and the allocator where it began.
 *   TestSuite(heap, .init = th_setup, .fini = th_teardown); */
void th_setup(void);
void th_teardown(void);

#endif
