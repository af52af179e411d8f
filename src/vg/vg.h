/* vg.h - memory-checker annotations: Valgrind client requests and,
 * in AddressSanitizer builds, ASan poisoning. Every function is a no-op when
 * the checker is absent, so callers never need an #ifdef.
 *
 *   if (vg_running()) {
 *       vg_leaks before, after;
 *       vg_leak_check_added(&before);      // baseline
 *       run_scenario(s);
 *       vg_leak_check_added(&after);       // prints only the new leaks
 *       if (after.lost_bytes > before.lost_bytes) report_leak(s, ...);
 *   }
 *
 * Allocators use the block annotations so that memcheck treats their blocks
 * like malloc's (leaks reported with the allocating stack, accesses to freed
 * blocks are errors):
 *
 *   p = carve(slab, n);  vg_malloclike(p, n);   // now addressable, undefined
 *   vg_freelike(p);                             // now unaddressable
 *
 * Without <valgrind/memcheck.h> at build time (FAKEGC_HAVE_VALGRIND unset)
 * vg_running() is 0 and every request does nothing.
 */
#ifndef FAKEGC_VG_H
#define FAKEGC_VG_H

#include <stddef.h>
#include <stdint.h>

#if defined(FAKEGC_HAVE_VALGRIND) && FAKEGC_HAVE_VALGRIND
#include <valgrind/memcheck.h>
#define VG_ENABLED 1
#else
#define VG_ENABLED 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define VG_ASAN_ENABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VG_ASAN_ENABLED 1
#endif
#endif
#ifndef VG_ASAN_ENABLED
#define VG_ASAN_ENABLED 0
#endif
#if VG_ASAN_ENABLED
#include <sanitizer/asan_interface.h>
#endif

/* 1 when the process runs under Valgrind (any tool), else 0. */
int vg_running(void);

/* Leak counts of memcheck's last leak check. lost = definitely + indirectly
 * lost (memcheck's COUNT_LEAKS request reports them together). */
typedef struct vg_leaks {
    uint64_t lost_bytes, lost_blocks;          /* definite + indirect */
    uint64_t possible_bytes, reachable_bytes, suppressed_bytes;
} vg_leaks;

/* Run memcheck's "added" leak check (it prints only leaks that appeared since
 * the previous check) and fill *out with the totals it found. Comparing two
 * calls' lost_bytes attributes leaks to the code run between them. Outside
 * memcheck: *out is all zero. */
void vg_leak_check_added(vg_leaks *out);

/* Under memcheck: make memcheck itself report a bad access found by fakegc
 * (a decref of a dead object touches only the header fakegc keeps, so
 * memcheck would never see it): "fakegc: WHAT" with a backtrace, and an
 * "Unaddressable byte(s) found during client check request" error that
 * counts toward --error-exitcode. Elsewhere nothing. */
void vg_report_bad_access(const char *what);

/* Block annotations for custom allocators (see valgrind.h for the contract):
 * malloclike registers [p, p+n) as a heap block (addressable, undefined),
 * freelike unregisters it (unaddressable). In ASan builds the same calls
 * unpoison / poison the range so a use after free is reported there too. */
static inline void vg_malloclike(void *p, size_t n)
{
#if VG_ENABLED
    VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0);
#endif
#if VG_ASAN_ENABLED
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
    (void)p; (void)n;
}

/* n is the size the block was registered with (ASan needs it). */
static inline void vg_freelike(void *p, size_t n)
{
#if VG_ENABLED
    VALGRIND_FREELIKE_BLOCK(p, 0);
#endif
#if VG_ASAN_ENABLED
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
    (void)p; (void)n;
}

/* Make [p, p+n) unaddressable (a red zone, a free block). */
static inline void vg_noaccess(const void *p, size_t n)
{
#if VG_ENABLED
    VALGRIND_MAKE_MEM_NOACCESS(p, n);
#endif
#if VG_ASAN_ENABLED
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
    (void)p; (void)n;
}

/* Make [p, p+n) addressable with undefined contents (allocator-internal
 * writes into a free block, e.g. a free-list link). */
static inline void vg_undefined(const void *p, size_t n)
{
#if VG_ENABLED
    VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
#if VG_ASAN_ENABLED
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
    (void)p; (void)n;
}

/* Make [p, p+n) addressable and defined (allocator-internal reads). */
static inline void vg_defined(const void *p, size_t n)
{
#if VG_ENABLED
    VALGRIND_MAKE_MEM_DEFINED(p, n);
#endif
#if VG_ASAN_ENABLED
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
    (void)p; (void)n;
}

#endif
