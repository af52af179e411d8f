/* in_fail.h - the fault-injecting wrapper `fail:N` / `fail:N+`.
 *
 *   as_create("fail:3/arena", &a, err, sizeof err);
 *   // the 3rd model allocation made through a returns NULL, the others
 *   // succeed; "fail:3+" fails the 3rd and every later one.
 *
 * Only the model's allocations are counted and failed (al_kind_is_model:
 * the core, tensor and fake layers' storage, object, memo, attr), which is
 * what a user injects faults into; the parser's, interpreter's, heap
 * analysis' and report's allocations pass through (otherwise fail:50 would give
 * "out of memory" from the parser, fail:200 "47 files did not parse").
 * ":all" counts every allocation, for testing fakegc itself:
 * "fail:3:all", "fail:3+:all".
 *
 * Attempts are counted from creation like the front's al_fail_at counts
 * them: every xmalloc, and every xrealloc that grows a block. A failed
 * attempt does not reach the inner allocator. (The oom loop uses al_fail_at
 * on the front instead and needs no wrapper.)
 */
#ifndef FAKEGC_IN_FAIL_H
#define FAKEGC_IN_FAIL_H

#include <stdint.h>

#include "alloc/al.h"

/* n >= 1. NULL when out of memory (inner untouched). */
al_allocator *in_fail_new(al_allocator *inner, uint64_t n, int persistent, int all);

/* Attempts counted so far by the fail layer of a chain; 0 if none. */
uint64_t in_fail_attempts(al_allocator *a);

#endif
