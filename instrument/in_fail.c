/* in_fail.c - fail the Nth allocation (and, with '+', every later one). */
#include "instrument/in_fail.h"

#include "alloc/al_wrap.h"

#include <stdio.h>

typedef struct fail_ctx {
    al_allocator *inner;
    uint64_t n, attempts;
    int persistent;
    int all;        /* count fakegc's own kinds too, not only the model's */
} fail_ctx;

static int fails(fail_ctx *c, al_kind kind)
{
    if (!c->all && !al_kind_is_model(kind))
        return 0;   /* the parser's, the report's: not what a user injects into */
    c->attempts++;
    return c->attempts == c->n || (c->persistent && c->attempts > c->n);
}

static void *fail_malloc(void *ctx, size_t n, al_kind kind, const char *site)
{
    fail_ctx *c = ctx;
    if (fails(c, kind))
        return NULL;
    return c->inner->xmalloc(c->inner->ctx, n, kind, site);
}

static void fail_free(void *ctx, void *p, size_t n, al_kind kind)
{
    fail_ctx *c = ctx;
    c->inner->xfree(c->inner->ctx, p, n, kind);
}

static void *fail_realloc(void *ctx, void *p, size_t old_n, size_t n,
                          al_kind kind, const char *site)
{
    fail_ctx *c = ctx;
    if ((!p || n > old_n) && fails(c, kind))
        return NULL;
    return c->inner->xrealloc(c->inner->ctx, p, old_n, n, kind, site);
}

static size_t fail_size(void *ctx, const void *p)
{
    fail_ctx *c = ctx;
    return c->inner->xsize ? c->inner->xsize(c->inner->ctx, p) : 0;
}

static void fail_report(void *ctx, void *file)
{
    fail_ctx *c = ctx;
    fprintf(file, "fail: %llu attempts (%s), failing #%llu%s\n",
            (unsigned long long)c->attempts,
            c->all ? "every allocation" : "model allocations: storage, object, memo, attr",
            (unsigned long long)c->n, c->persistent ? " and later" : "");
}

static void fail_destroy(al_allocator *self)
{
    al_sys_free(self->ctx);
    al_obj_free(self);
}

static const al_allocator fail_methods = {
    .xmalloc = fail_malloc, .xfree = fail_free, .xrealloc = fail_realloc,
    .xsize = fail_size, .xreport = fail_report, .xdestroy = fail_destroy};

al_allocator *in_fail_new(al_allocator *inner, uint64_t n, int persistent, int all)
{
    fail_ctx *c = al_sys_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->inner = inner;
    c->n = n;
    c->persistent = persistent != 0;
    c->all = all != 0;
    char name[40];
    snprintf(name, sizeof name, "fail:%llu%s%s", (unsigned long long)n,
             persistent ? "+" : "", all ? ":all" : "");
    return al_wrap_new(name, inner, c, &fail_methods);
}

uint64_t in_fail_attempts(al_allocator *a)
{
    for (; a; a = a->inner)
        if (a->xmalloc == fail_malloc)
            return ((fail_ctx *)a->ctx)->attempts;
    return 0;
}
