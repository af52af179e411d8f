/* al_wrap.h - alloc's public wrapping interface: what a base allocator or
 * a wrapper (instrument/: tracking, guard, fail) is written against. The
 * rest of fakegc allocates through al.h only; allocspec/as.h builds stacks
 * of allocators from spec strings.
 *
 *   static const al_allocator trk_methods = {.xmalloc = trk_malloc, ...,
 *                                            .xdestroy = trk_destroy};
 *   return al_wrap_new("tracking", inner, ctx, &trk_methods);  // "tracking/<inner>"
 *
 *   al_allocator *a = al_sys_calloc(1, sizeof *a);    // bookkeeping memory
 *   a->name = al_sys_strdup("libc");
 *
 * The al_sys_* functions reach glibc's allocator directly (__libc_malloc and
 * friends) because jemalloc, linked into the same binary, exports malloc:
 * plain malloc() would be jemalloc's. In ASan builds they are plain malloc,
 * which ASan owns (ASan does not intercept __libc_malloc, so its leak checker
 * would not see those blocks). Under Valgrind memcheck replaces both.
 * Bookkeeping (allocator objects, hash tables, names) uses them; they are
 * not counted by the front counters.
 */
#ifndef FAKEGC_AL_WRAP_H
#define FAKEGC_AL_WRAP_H

#include "alloc/al.h"

void *al_sys_malloc(size_t n);
void *al_sys_calloc(size_t count, size_t n);
void *al_sys_realloc(void *p, size_t n);
void al_sys_free(void *p);
void *al_sys_memalign(size_t align, size_t n);   /* free with al_sys_free */
size_t al_sys_usable_size(const void *p);        /* 0 when unknown */
char *al_sys_strdup(const char *s);              /* free with al_sys_free */
/* A base allocator's big blocks (the libc allocator's, the arena's above
 * its classes): al_sys_malloc / al_sys_realloc, and a block of 4 MiB or
 * more, which glibc mmaps fresh, has its whole mapping advised
 * MADV_HUGEPAGE before anyone touches it (not under a memory checker; the
 * mapping stays one, so a growing realloc is an mremap). Such blocks are
 * the big tables, read in random order. */
void *al_sys_malloc_big(size_t n);
void *al_sys_realloc_big(void *p, size_t n);

/* A new allocator object: the methods of `methods` (an al_allocator used
 * as a template: its x* fields, the others ignored), name copied, ctx set,
 * inner NULL. xdestroy of such an object should call al_obj_free. NULL when
 * out of memory, and ctx (bookkeeping memory, or NULL) is then freed with
 * al_sys_free: a constructor can return al_obj_new(...) as it is. */
al_allocator *al_obj_new(const char *name, void *ctx, const al_allocator *methods);
void al_obj_free(al_allocator *a);   /* frees name and a, not ctx */

/* A wrapper's allocator object: as al_obj_new, named "<wrapper>/<inner's
 * name>", with inner set. */
al_allocator *al_wrap_new(const char *wrapper, al_allocator *inner, void *ctx,
                          const al_allocator *methods);

/* Base allocators; NULL when out of memory (al_jemalloc_new also when the
 * private jemalloc arena cannot be created). */
al_allocator *al_libc_new(void);
al_allocator *al_jemalloc_new(void);
al_allocator *al_arena_new(void);

/* The libc allocator that is current when none is installed; static, never
 * destroyed. */
al_allocator *al_libc_default(void);

#endif
