/* al_libc.c - glibc's allocator, reached past jemalloc's malloc.
 *
 * jemalloc is linked into fakegc and exports malloc/free, so a plain malloc()
 * call binds to jemalloc. glibc still exports its own entry points as
 * __libc_malloc/__libc_free/__libc_realloc (GLIBC_2.2.5); calling those keeps
 * "libc" meaning glibc. Valgrind's memcheck redirects them like malloc, so
 * leaks of libc blocks are reported normally. ASan does not intercept them,
 * so in ASan builds plain malloc (ASan's) is used instead.
 */
#include "alloc/al_wrap.h"
#include "vg/vg.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#if VG_ASAN_ENABLED
#include <malloc.h>
#define SYS_MALLOC malloc
#define SYS_CALLOC calloc
#define SYS_REALLOC realloc
#define SYS_FREE free
#define SYS_MEMALIGN memalign
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t count, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
#define SYS_MALLOC __libc_malloc
#define SYS_CALLOC __libc_calloc
#define SYS_REALLOC __libc_realloc
#define SYS_FREE __libc_free
#define SYS_MEMALIGN __libc_memalign
#endif

void *al_sys_malloc(size_t n) { return SYS_MALLOC(n ? n : 1); }
void *al_sys_calloc(size_t count, size_t n) { return SYS_CALLOC(count, n); }
void *al_sys_realloc(void *p, size_t n) { return SYS_REALLOC(p, n ? n : 1); }
void al_sys_free(void *p) { SYS_FREE(p); }
void *al_sys_memalign(size_t align, size_t n) { return SYS_MEMALIGN(align, n); }

typedef size_t (*usable_fn)(void *);

/* glibc's malloc_usable_size, looked up in libc.so.6 itself: the global
 * symbol would be jemalloc's, which must never see a glibc pointer. */
static usable_fn usable_size_fn(void)
{
    static usable_fn fn;
    static int looked;
    if (!looked) {
        looked = 1;
#if VG_ASAN_ENABLED
        fn = malloc_usable_size;
#else
        void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            void *sym = dlsym(h, "malloc_usable_size");
            memcpy(&fn, &sym, sizeof fn);   /* object -> function pointer */
            dlclose(h);                     /* libc stays loaded */
        }
#endif
    }
    return fn;
}

size_t al_sys_usable_size(const void *p)
{
    usable_fn fn = usable_size_fn();
    return p && fn ? fn((void *)p) : 0;
}

char *al_sys_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = al_sys_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

al_allocator *al_obj_new(const char *name, void *ctx, const al_allocator *methods)
{
    al_allocator *a = al_sys_malloc(sizeof *a);
    char *nm = a ? al_sys_strdup(name) : NULL;
    if (!nm) {
        al_sys_free(a);
        al_sys_free(ctx);
        return NULL;
    }
    *a = *methods;
    a->name = nm;
    a->ctx = ctx;
    a->inner = NULL;
    return a;
}

void al_obj_free(al_allocator *a)
{
    if (!a)
        return;
    al_sys_free((void *)a->name);
    al_sys_free(a);
}

/* Blocks of LIBC_MMAPPED bytes or more are glibc's mmapped chunks (the
 * fixed threshold, libc_tune), fresh from the kernel, advised
 * MADV_HUGEPAGE before anyone touches them. They are the big tables (a
 * memo's slots, the heap analysis' arrays), read in random order: with
 * 4 KiB pages each such read was also a TLB miss whose page walk missed
 * the cache too (a dependent random read in 32 MB: 150 ns, 75 ns with huge
 * pages on this machine). Transparent huge pages are `madvise` here, as on
 * Debian by default. Not under a memory checker: its heap is its own.
 *
 * The advice covers the chunk's whole mapping, from its page (the header
 * is at its start) to p + usable size (its end), so the mapping stays one
 * VMA: advising only its whole 2 MiB pages split it in three, and glibc's
 * realloc of a split mapping fails in mremap (EFAULT) and falls back to
 * malloc, copy and free, so a doubling array (the snapshot's edges) was
 * copied and its pages faulted in fresh at every step. A block that is not
 * a whole mapping (grown in place in the brk heap) gets the old advice:
 * its whole huge pages only. */
enum { LIBC_MMAPPED = 4 << 20, HUGE_PAGE = 2 << 20, PAGE = 4096, CHUNK_HDR = 16 };

static void *advise_huge(void *p, size_t n)
{
#if !VG_ASAN_ENABLED && defined(MADV_HUGEPAGE)
    if (p && n >= LIBC_MMAPPED && !vg_running()) {
        uintptr_t b = (uintptr_t)p - CHUNK_HDR, e = (uintptr_t)p + al_sys_usable_size(p);
        if ((b | e) & (PAGE - 1)) {
            b = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
            e = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
        }
        if (e > b)
            (void)madvise((void *)b, e - b, MADV_HUGEPAGE);   /* advice only */
    }
#else
    (void)n;
#endif
    return p;
}

void *al_sys_malloc_big(size_t n)
{
    return advise_huge(SYS_MALLOC(n), n);
}

void *al_sys_realloc_big(void *p, size_t n)
{
    return advise_huge(SYS_REALLOC(p, n), n);
}

static void *libc_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    (void)ctx; (void)kind; (void)site;
    return al_sys_malloc_big(n);
}

static void libc_free(void *ctx, void *p, size_t n, al_kind kind)
{
    (void)ctx; (void)n; (void)kind;
    SYS_FREE(p);
}

static void *libc_realloc(void *ctx, void *p, size_t old_n, size_t n,
                          al_kind kind, const char *site)
{
    (void)ctx; (void)kind; (void)site;
    return n > old_n ? al_sys_realloc_big(p, n) : SYS_REALLOC(p, n);
}

static size_t libc_size(void *ctx, const void *p)
{
    (void)ctx;
    return al_sys_usable_size(p);
}

static void libc_destroy(al_allocator *self)
{
    al_obj_free(self);
}

/* glibc's heap as the system sees it: main arena + mmapped chunks (the
 * whole process's glibc heap: fakegc's bookkeeping is in it too). */
static uint64_t libc_footprint(void *ctx)
{
    (void)ctx;
    struct mallinfo2 mi = mallinfo2();
    return (uint64_t)mi.arena + (uint64_t)mi.hblkhd;
}

/* glibc moves its mmap threshold up to 32 MiB as mmapped blocks are freed,
 * after which the heap analysis' arrays of millions of entries (4-20 MB
 * each, made and dropped phase by phase) come from the brk heap, where
 * the holes they leave are not given back: peak RSS of a 5M-object report
 * was 19 B per object above what the analysis held. A fixed threshold of
 * 4 MiB keeps blocks that large mmapped, so each goes back to the system
 * when freed. Model blocks are far smaller; a tensor of 4 MiB or more is
 * mmapped every time (it would be the first time anyway).
 *
 * Fastbins are off (M_MXFAST 0): a free that coalesces into 64 KiB or
 * more runs malloc_consolidate over every fastbin chunk, and a teardown
 * of millions of small objects in allocation order does that again and
 * again (17% of a 1M-lifecycle teardown). tcache still serves the small
 * sizes. Same run, release: the strong-memo 1M model 2.37 -> 1.97 s,
 * weaktable/remove-1m 285 -> 214 ns, gc/cycles-1m 59 -> 53 ns,
 * convert/miss 187 -> 195 ns.
 *
 * The trim threshold is 128 MiB. glibc raises it with the mmap threshold
 * (to twice it); fixed as above it stayed at 128 KiB, so a collection
 * that freed 1M objects at the top of the heap gave the pages back in the
 * middle of its frees (brk), and the next million objects faulted them in
 * and zeroed them again: a stress loop paid the kernel twice a round.
 * Up to 128 MiB of free heap now stays with the process (peak RSS is not
 * changed by it). gc/cycles-1m 60 -> 48 ns. */
static void libc_tune(void)
{
#if !VG_ASAN_ENABLED
    static int done;
    if (!done) {
        done = 1;
        mallopt(M_MMAP_THRESHOLD, 4 << 20);
        mallopt(M_MXFAST, 0);
        mallopt(M_TRIM_THRESHOLD, 128 << 20);
    }
#endif
}

#define LIBC_METHODS                                                          \
    .xmalloc = libc_malloc, .xfree = libc_free, .xrealloc = libc_realloc,     \
    .xsize = libc_size, .xfootprint = libc_footprint
static const al_allocator libc_methods = {LIBC_METHODS, .xdestroy = libc_destroy};

al_allocator *al_libc_new(void)
{
    libc_tune();
    return al_obj_new("libc", NULL, &libc_methods);
}

al_allocator *al_libc_default(void)
{
    libc_tune();
    /* no xdestroy: static, al_destroy leaves it alone */
    static al_allocator def = {.name = "libc", LIBC_METHODS};
    return &def;
}
