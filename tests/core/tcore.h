/* tcore.h - shared helpers of the core tests: a small test object type with
 * child slots, and the end-of-test checks.
 *
 *   tc_begin();                       // records the allocator baseline
 *   obj *a = tn_new(), *b = tn_new();
 *   tn_set(a, 0, b);                  // a holds b strongly in slot 0
 *   obj_decref(b); obj_decref(a);
 *   tc_end();                         // nothing live, no bytes left
 */
#ifndef FAKEGC_TESTS_CORE_TCORE_H
#define FAKEGC_TESTS_CORE_TCORE_H

#include <stdint.h>

#include "core/obj.h"

enum { TN_SLOTS = 4 };

/* OBJ_GENERIC test node: strong references in slot[0..3]. */
typedef struct tnode {
    obj hdr;
    obj *slot[TN_SLOTS];
    int tag;
} tnode;

extern const obj_type tnode_type;

/* Called from tnode's release with the node (after its callbacks ran, or
 * from the collector's clear). NULL: nothing. */
extern void (*tn_release_hook)(obj *self);

obj *tn_new(void);                      /* asserts success */
obj *tn_new_tag(int tag);
void tn_set(obj *n, int i, obj *v);     /* strong; v may be NULL */
obj *tn_get(const obj *n, int i);
int tn_tag(const obj *n);

/* Baseline the allocator counters, switch on gc debug validation. */
void tc_begin(void);
/* Assert: no live or zombie object, no deferred callback, al_live_bytes
 * back to the baseline, obj_verify passes. */
void tc_end(void);
/* Assert obj_verify passes. */
void tc_verify(void);

/* An order log for callback tests. */
typedef struct tc_log {
    int v[64];
    int n;
} tc_log;
void tc_log_add(tc_log *l, int x);

#endif
