/* in_guard.c - red zones, poison, quarantine.
 *
 * A block from the inner allocator is laid out as
 *   [ghdr 32][front zone 16][user n][back zone 16 + padding to 16]
 * so the user pointer keeps 16-byte alignment. The header is only trusted
 * for blocks in the live set or the quarantine: a pointer the guard did not
 * hand out is never dereferenced. The live set is an open-addressing hash set
 * of disguised user pointers (see in_tracking.c for why); the quarantine is a
 * ring of plain pointers, because quarantined blocks are still the guard's
 * and must look reachable to a leak checker.
 */
#include "instrument/in_guard.h"

#include "alloc/al_wrap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DISGUISE ((uintptr_t)0x5A5A5A5A5A5A5A5Aull)
#define MAGIC_LIVE 0x6c697665676172ddull
#define MAGIC_FREED 0x66726565676172ddull

enum {
    HDR = 32,
    ZONE = IN_GUARD_ZONE,
    FRONT_BYTE = 0xFA,
    BACK_BYTE = 0xFB,
    NEW_BYTE = 0xCD,
    FREED_BYTE = 0xDD
};

typedef struct ghdr {
    uint64_t magic;
    uint64_t n;
    const char *site;
    uint32_t kind;
    uint32_t pad;
} ghdr;

_Static_assert(sizeof(ghdr) == HDR, "guard header must be 32 bytes");

typedef struct guard_ctx {
    al_allocator *inner;
    uintptr_t *set;              /* disguised live user pointers; 0 empty */
    size_t cap, used;
    unsigned char **ring;        /* quarantine FIFO of user pointers */
    size_t ring_cap, head, count;
    size_t qmax;                 /* blocks */
    size_t qbytes;               /* user bytes in quarantine */
    in_guard_action action;
    long findings;
    char last[256];
} guard_ctx;

static size_t back_len(size_t n)
{
    return ZONE + (16 - n % 16) % 16;
}

static size_t total_len(size_t n)
{
    return HDR + ZONE + n + back_len(n);
}

static ghdr *hdr_of(unsigned char *u)
{
    return (ghdr *)(u - ZONE - HDR);
}

static size_t hash_ptr(uintptr_t x)
{
    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

/* ---- live set ---------------------------------------------------------- */

static size_t set_slot(const guard_ctx *c, uintptr_t key)
{
    size_t j = hash_ptr(key) & (c->cap - 1);
    while (c->set[j] && c->set[j] != key)
        j = (j + 1) & (c->cap - 1);
    return j;
}

static int set_has(const guard_ctx *c, const void *p)
{
    return c->cap && c->set[set_slot(c, (uintptr_t)p ^ DISGUISE)] != 0;
}

static int set_reserve(guard_ctx *c)
{
    if ((c->used + 1) * 2 <= c->cap)
        return 0;
    size_t ncap = c->cap ? c->cap * 2 : 256;
    uintptr_t *ns = al_sys_calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->set[i])
            continue;
        size_t j = hash_ptr(c->set[i]) & (ncap - 1);
        while (ns[j])
            j = (j + 1) & (ncap - 1);
        ns[j] = c->set[i];
    }
    al_sys_free(c->set);
    c->set = ns;
    c->cap = ncap;
    return 0;
}

static void set_add(guard_ctx *c, const void *p)
{
    uintptr_t key = (uintptr_t)p ^ DISGUISE;
    c->set[set_slot(c, key)] = key;
    c->used++;
}

static void set_remove(guard_ctx *c, const void *p)
{
    size_t mask = c->cap - 1;
    size_t i = set_slot(c, (uintptr_t)p ^ DISGUISE), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!c->set[j])
            break;
        size_t home = hash_ptr(c->set[j]) & mask;
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            c->set[i] = c->set[j];
            i = j;
        }
    }
    c->set[i] = 0;
    c->used--;
}

/* ---- findings ---------------------------------------------------------- */

static void (*finding_hook)(const char *what);

void in_guard_set_finding_hook(void (*hook)(const char *what)) { finding_hook = hook; }

static void act(guard_ctx *c)
{
    c->findings++;
    if (c->action == IN_GUARD_RECORD)
        return;
    if (finding_hook)
        finding_hook(c->last);
    fprintf(stderr, "fakegc: guard: %s\n", c->last);
    fflush(stderr);
    if (c->action == IN_GUARD_EXIT)
        exit(3);
    if (c->action == IN_GUARD_ABORT)
        abort();
}

/* A finding about a block whose header is trusted. */
static void finding(guard_ctx *c, const char *what, const ghdr *h)
{
    snprintf(c->last, sizeof c->last, "%s on %s block of %llu bytes from %s", what,
             al_kind_name((al_kind)h->kind), (unsigned long long)h->n,
             h->site ? h->site : "?");
    act(c);
}

static void finding_unknown(guard_ctx *c, const void *p, size_t n, al_kind kind,
                            const char *op)
{
    snprintf(c->last, sizeof c->last,
             "%s of unknown pointer %p (given as %s block of %zu bytes)", op, p,
             al_kind_name(kind), n);
    act(c);
}

/* Index of the first byte of p[0..n) that is not v, or n. */
static size_t first_not(const unsigned char *p, size_t n, unsigned char v)
{
    size_t i = 0;
    uint64_t word;
    memset(&word, v, sizeof word);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w != word)
            break;
    }
    for (; i < n; i++)
        if (p[i] != v)
            return i;
    return n;
}

/* Check both zones of a block; 0 if intact. A damaged zone is reported
 * once: it is repaired after the report. */
static int check_zones(guard_ctx *c, unsigned char *u, const ghdr *h, const char *when)
{
    int bad = 0;
    char what[64];
    if (first_not(u - ZONE, ZONE, FRONT_BYTE) != ZONE) {
        snprintf(what, sizeof what, "buffer underflow%s", when);
        finding(c, what, h);
        memset(u - ZONE, FRONT_BYTE, ZONE);
        bad = 1;
    }
    size_t n = (size_t)h->n;
    if (first_not(u + n, back_len(n), BACK_BYTE) != back_len(n)) {
        snprintf(what, sizeof what, "buffer overflow%s", when);
        finding(c, what, h);
        memset(u + n, BACK_BYTE, back_len(n));
        bad = 1;
    }
    return bad;
}

/* ---- quarantine -------------------------------------------------------- */

static void release(guard_ctx *c, unsigned char *u)
{
    ghdr *h = hdr_of(u);
    size_t n = (size_t)h->n;
    al_kind kind = (al_kind)h->kind;
    c->inner->xfree(c->inner->ctx, h, total_len(n), kind);
}

/* Take the oldest block out of quarantine, check it, give it back. */
static void evict_one(guard_ctx *c)
{
    unsigned char *u = c->ring[c->head];
    c->head = (c->head + 1) % c->ring_cap;
    c->count--;
    ghdr *h = hdr_of(u);
    c->qbytes -= (size_t)h->n;
    if (first_not(u, (size_t)h->n, FREED_BYTE) != (size_t)h->n)
        finding(c, "use-after-free write", h);
    else
        check_zones(c, u, h, " after free");
    release(c, u);
}

static void evict_to(guard_ctx *c, size_t max_blocks)
{
    while (c->count > max_blocks ||
           (c->count > 0 && c->qbytes > IN_GUARD_QUARANTINE_BYTES))
        evict_one(c);
}

/* Add a freed (just poisoned and checked) block. With quarantine 0, or no
 * memory for the ring, it goes back to the inner allocator at once. */
static void quarantine(guard_ctx *c, unsigned char *u)
{
    if (c->count == c->ring_cap && c->ring_cap < c->qmax) {
        size_t ncap = c->ring_cap ? c->ring_cap * 2 : 64;
        if (ncap > c->qmax)
            ncap = c->qmax;
        unsigned char **nr = al_sys_malloc(ncap * sizeof *nr);
        if (nr) {
            for (size_t i = 0; i < c->count; i++)
                nr[i] = c->ring[(c->head + i) % c->ring_cap];
            al_sys_free(c->ring);
            c->ring = nr;
            c->ring_cap = ncap;
            c->head = 0;
        }
    }
    if (c->qmax == 0 || c->ring_cap == 0) {
        release(c, u);
        return;
    }
    if (c->count == c->ring_cap)
        evict_one(c);
    c->ring[(c->head + c->count) % c->ring_cap] = u;
    c->count++;
    c->qbytes += (size_t)hdr_of(u)->n;
    evict_to(c, c->qmax);
}

static int in_quarantine(const guard_ctx *c, const void *p)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->ring[(c->head + i) % c->ring_cap] == p)
            return 1;
    return 0;
}

/* ---- the table --------------------------------------------------------- */

static void *guard_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    guard_ctx *c = ctx;
    if (set_reserve(c) != 0)
        return NULL;
    unsigned char *base = c->inner->xmalloc(c->inner->ctx, total_len(n), kind, site);
    if (!base)
        return NULL;
    ghdr *h = (ghdr *)base;
    *h = (ghdr){ .magic = MAGIC_LIVE, .n = n, .site = site, .kind = (uint32_t)kind };
    unsigned char *u = base + HDR + ZONE;
    memset(u - ZONE, FRONT_BYTE, ZONE);
    memset(u, NEW_BYTE, n);
    memset(u + n, BACK_BYTE, back_len(n));
    set_add(c, u);
    return u;
}

/* Check a block being freed or reallocated; 0 if it may be used, -1 if it
 * must not be touched (double free, unknown pointer). */
static int check_free(guard_ctx *c, unsigned char *u, size_t n, al_kind kind,
                      const char *op)
{
    if (!set_has(c, u)) {
        if (in_quarantine(c, u)) {
            finding(c, strcmp(op, "free") == 0 ? "double free" : "realloc of freed block",
                    hdr_of(u));
        } else {
            finding_unknown(c, u, n, kind, op);
        }
        return -1;
    }
    ghdr *h = hdr_of(u);
    if (h->magic != MAGIC_LIVE) {
        /* the header sits before the front zone: an underflow long enough
         * to reach it; size and site are not to be trusted */
        snprintf(c->last, sizeof c->last,
                 "buffer underflow (header overwritten) on %s block given as %zu bytes",
                 al_kind_name(kind), n);
        act(c);
        return -1;
    }
    check_zones(c, u, h, "");
    char what[64];
    if (h->n != n) {
        snprintf(what, sizeof what, "%s with wrong size %zu", op, n);
        finding(c, what, h);
    }
    if (h->kind != (uint32_t)kind) {
        snprintf(what, sizeof what, "%s with wrong kind %s", op, al_kind_name(kind));
        finding(c, what, h);
    }
    return 0;
}

static void guard_free(void *ctx, void *p, size_t n, al_kind kind)
{
    guard_ctx *c = ctx;
    unsigned char *u = p;
    if (!u || check_free(c, u, n, kind, "free") != 0)
        return;
    set_remove(c, u);
    ghdr *h = hdr_of(u);
    memset(u, FREED_BYTE, (size_t)h->n);
    h->magic = MAGIC_FREED;
    quarantine(c, u);
}

static void *guard_realloc(void *ctx, void *p, size_t old_n, size_t n,
                           al_kind kind, const char *site)
{
    guard_ctx *c = ctx;
    unsigned char *u = p;
    if (!u)
        return guard_malloc(ctx, n, kind, site);
    if (check_free(c, u, old_n, kind, "realloc") != 0)
        return NULL;
    size_t have = (size_t)hdr_of(u)->n;
    unsigned char *q = guard_malloc(ctx, n, kind, site);
    if (!q)
        return NULL;
    memcpy(q, u, have < n ? have : n);
    set_remove(c, u);
    ghdr *h = hdr_of(u);
    memset(u, FREED_BYTE, have);
    h->magic = MAGIC_FREED;
    quarantine(c, u);
    return q;
}

static size_t guard_size(void *ctx, const void *p)
{
    guard_ctx *c = ctx;
    if (!p || !set_has(c, p))
        return 0;
    return (size_t)hdr_of((unsigned char *)p)->n;
}

static void guard_report(void *ctx, void *file)
{
    guard_ctx *c = ctx;
    fprintf(file, "guard: %zu live blocks, %zu in quarantine (max %zu), %ld findings%s%s\n",
            c->used, c->count, c->qmax, c->findings, c->findings ? "; last: " : "",
            c->findings ? c->last : "");
}

static void guard_destroy(al_allocator *self)
{
    guard_ctx *c = self->ctx;
    evict_to(c, 0);
    al_sys_free(c->ring);
    al_sys_free(c->set);
    al_sys_free(c);
    al_obj_free(self);
}

/* A read of a pointer out of a freed (or never written) block yields the
 * poison pattern, and following it faults at an address made of poison
 * bytes plus a field offset. The guard turns that fault into a finding
 * instead of a bare crash. Async-signal-safe: write(2) and _exit only. */
static int poison_address(uintptr_t a, unsigned char byte)
{
    uintptr_t pat = 0;
    for (size_t i = 0; i < sizeof pat; i++)
        pat = (pat << 8) | byte;
    return (a & ~(uintptr_t)0xFFFFF) == (pat & ~(uintptr_t)0xFFFFF);
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    const char *what = poison_address(a, FREED_BYTE)
        ? "fakegc: guard: use-after-free read: followed a pointer loaded from a "
          "freed block (fault at a 0xdd... address)\n"
        : poison_address(a, NEW_BYTE)
        ? "fakegc: guard: uninitialised read: followed a pointer never written "
          "(fault at a 0xcd... address)\n"
        /* x86-64 reports a non-canonical address (0xdddd... is one) as a
         * general protection fault without the address: SI_KERNEL. */
        : si->si_code == SI_KERNEL
        ? "fakegc: guard: use-after-free read: followed a poisoned pointer "
          "(non-canonical address, the 0xdd/0xcd patterns of freed or "
          "unwritten guard blocks)\n"
        : NULL;
    if (what && finding_hook)
        finding_hook(what + strlen("fakegc: guard: "));
    if (what) {
        ssize_t w = write(2, what, strlen(what));
        (void)w;
        _exit(3);
    }
    signal(sig, SIG_DFL);     /* not ours: crash as before */
    raise(sig);
}

static void install_fault_handler(void)
{
    static int installed;
    static char altstack[1 << 16];
    if (installed)
        return;
    installed = 1;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

static const al_allocator guard_methods = {
    .xmalloc = guard_malloc, .xfree = guard_free, .xrealloc = guard_realloc,
    .xsize = guard_size, .xreport = guard_report, .xdestroy = guard_destroy};

al_allocator *in_guard_new(al_allocator *inner, size_t quarantine_blocks)
{
    install_fault_handler();
    guard_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->inner = inner;
    c->qmax = quarantine_blocks;
    c->action = IN_GUARD_EXIT;
    char name[48];
    if (quarantine_blocks == IN_GUARD_DEFAULT_QUARANTINE)
        snprintf(name, sizeof name, "guard");
    else
        snprintf(name, sizeof name, "guard:q=%zu", quarantine_blocks);
    return al_wrap_new(name, inner, c, &guard_methods);
}

al_allocator *in_guard_of(al_allocator *a)
{
    for (; a; a = a->inner)
        if (a->xmalloc == guard_malloc)
            return a;
    return NULL;
}

int in_guard_set_quarantine(al_allocator *a, size_t blocks)
{
    a = in_guard_of(a);
    if (!a)
        return -1;
    guard_ctx *c = a->ctx;
    c->qmax = blocks;
    evict_to(c, blocks);
    return 0;
}

int in_guard_set_action(al_allocator *a, in_guard_action action)
{
    a = in_guard_of(a);
    if (!a)
        return -1;
    ((guard_ctx *)a->ctx)->action = action;
    return 0;
}

int in_guard_verify(al_allocator *a)
{
    a = in_guard_of(a);
    if (!a)
        return -1;
    guard_ctx *c = a->ctx;
    long before = c->findings;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->set[i])
            continue;
        unsigned char *u = (unsigned char *)(c->set[i] ^ DISGUISE);
        ghdr *h = hdr_of(u);
        if (h->magic != MAGIC_LIVE) {
            snprintf(c->last, sizeof c->last,
                     "buffer underflow (header overwritten) on a live block at %p",
                     (void *)u);
            act(c);
            continue;
        }
        check_zones(c, u, h, "");
    }
    for (size_t i = 0; i < c->count; i++) {
        unsigned char *u = c->ring[(c->head + i) % c->ring_cap];
        ghdr *h = hdr_of(u);
        if (first_not(u, (size_t)h->n, FREED_BYTE) != (size_t)h->n) {
            finding(c, "use-after-free write", h);
            memset(u, FREED_BYTE, (size_t)h->n);   /* report it once */
        } else {
            check_zones(c, u, h, " after free");
        }
    }
    return (int)(c->findings - before);
}

long in_guard_findings(al_allocator *a)
{
    a = in_guard_of(a);
    return a ? ((guard_ctx *)a->ctx)->findings : -1;
}

const char *in_guard_last_finding(al_allocator *a)
{
    a = in_guard_of(a);
    return a ? ((guard_ctx *)a->ctx)->last : "";
}
