/* as.h - allocator specs: the layer above alloc (src/alloc) and its
 * wrappers (instrument/), which know nothing of each other's names.
 *
 *   al_allocator *a;
 *   char err[200];
 *   if (as_create("tracking/guard:q=0/arena", &a, err, sizeof err) != 0)
 *       usage(err);                       // names the valid layers
 *   al_install(a); ... al_install(NULL); al_destroy(a);
 */
#ifndef FAKEGC_AS_H
#define FAKEGC_AS_H

#include <stddef.h>
#include <stdio.h>

#include "alloc/al.h"

/* Build an allocator from a spec: a base name (`libc`, `jemalloc`, `arena`)
 * optionally preceded by wrappers separated by '/', outermost first:
 * `tracking`, `guard`, `guard:q=N` (a guard whose quarantine holds N freed
 * blocks; 0 frees at once, so addresses are reused), `fail:N` (fail the Nth
 * allocation counted from creation, 1-based), `fail:N+` (the Nth and every
 * later one). A spec that is only wrappers wraps `libc`: `guard` ==
 * `guard/libc`. The result's name is the normalized spec ("guard/libc").
 * Returns 0, or -1 with a message naming the valid names in err (*out is then
 * NULL and nothing is leaked). Wrapper APIs: instrument/in_tracking.h,
 * in_guard.h, in_fail.h. */
int as_create(const char *spec, al_allocator **out, char *err, size_t errlen);
/* Comma-separated list of the names as_create accepts (for --help, list). */
const char *as_names(void);
/* The same names on f, one a line (`fakegc list allocators`). */
void as_list(FILE *f);

#endif
