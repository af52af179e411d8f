/* hp_bench.c - time the heap analysis and the reports on a million-object
 * heap (not a unit test: no timed assertions anywhere). Build by hand
 * against a build folder's libraries:
 *
 *   B=build-heap; cc -O2 -std=c11 -D_GNU_SOURCE -Isrc tests/heap/bench/hp_bench.c \
 *     $B/libfg_report.a $B/libfg_heap.a $B/libfg_core.a $B/libfg_alloc.a \
 *     $(pkg-config --libs jemalloc) -lm -o /tmp/hp_bench && /tmp/hp_bench 1000000
 *
 * Shapes: a rooted chain, a rooted fan (one object holding N), a leaked
 * chain (a reference-count leak at its head) and a leaked ring (one cycle).
 * For each: snapshot, every retained record with its path, grouping, and
 * the text and JSON reports written to /dev/null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "heap/hp.h"
#include "report/rp.h"

typedef struct bnode {
    obj hdr;
    obj *next;
} bnode;

static void bn_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    bnode *b = (bnode *)self;
    if (b->next)
        visit(b->next, "next", -1, arg);
}

static void bn_release(obj *self) { obj_clear_ref(&((bnode *)self)->next); }

static const obj_type bnode_type = {.name = "Node", .kind = OBJ_GENERIC,
                                    .traverse = bn_traverse, .release = bn_release};

typedef struct bfan {
    obj hdr;
    obj **kids;
    size_t n;
} bfan;

static void fan_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    bfan *f = (bfan *)self;
    for (size_t i = 0; i < f->n; i++)
        visit(f->kids[i], "items", (long)i, arg);
}

static void fan_release(obj *self)
{
    bfan *f = (bfan *)self;
    for (size_t i = 0; i < f->n; i++)
        obj_decref(f->kids[i]);
    if (f->kids)
        al_free(f->kids, f->n * sizeof *f->kids, AL_K_OTHER);
    f->kids = NULL;
    f->n = 0;
}

static uint64_t fan_owned(const obj *self) { return ((const bfan *)self)->n * sizeof(obj *); }

static const obj_type fan_type = {.name = "List", .kind = OBJ_GENERIC, .traverse = fan_traverse,
                                  .release = fan_release, .owned_bytes = fan_owned};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static obj *chain(size_t n)
{
    obj *head = obj_new(&bnode_type, sizeof(bnode)), *cur = head;
    for (size_t i = 1; i < n; i++) {
        obj *nx = obj_new(&bnode_type, sizeof(bnode));
        ((bnode *)cur)->next = nx;   /* takes nx's reference */
        cur = nx;
    }
    return head;
}

static void measure(const char *what, hp_root *roots, size_t nroots)
{
    double c0 = cpu(), t0 = now();
    hp_graph *g = hp_snapshot(roots, nroots);
    double t1 = now();
    hp_retained *r;
    size_t n;
    if (!g || hp_retained_all(g, &r, &n) != 0) {
        fprintf(stderr, "%s: %s\n", what, er_message());
        exit(1);
    }
    double t2 = now();
    hp_group *gr;
    size_t ng;
    if (hp_group_records(r, n, &gr, &ng) != 0)
        exit(1);
    double t3 = now();
    rp_scenario s;
    memset(&s, 0, sizeof s);
    rp_scenario_set_file(&s, "bench.scn");
    s.status = RP_FAIL;
    s.retained = r;
    s.nretained = n;
    s.groups = gr;
    s.ngroups = ng;
    rp_run run = {.tool = "fakegc", .version = "0.1.0", .allocator = "libc", .scenarios = &s,
                  .n = 1, .failed = 1};
    FILE *null = fopen("/dev/null", "w");
    rp_write(&run, RP_TEXT, null, NULL);
    double t4 = now();
    rp_write(&run, RP_JSON, null, NULL);
    double t5 = now(), c5 = cpu();
    fclose(null);
    printf("%-12s %8zu objects, %3llu unreachable k: snapshot %.3f s, records+paths %.3f s, "
           "groups %.3f s (%zu), text %.3f s, json %.3f s; total %.3f s wall, %.3f s cpu\n",
           what, n, (unsigned long long)(hp_unreachable_count(g) / 1000), t1 - t0, t2 - t1,
           t3 - t2, ng, t4 - t3, t5 - t4, t5 - t0, c5 - c0);
    rp_scenario_clear(&s);
    hp_free(g);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    obj_set_site("bench.scn", 1);

    obj *head = chain(n);
    hp_root roots[] = {{"head", head, 0}};
    measure("chain", roots, 1);
    obj_decref(head);

    bfan *fan = (bfan *)obj_new(&fan_type, sizeof(bfan));
    fan->kids = al_malloc(n * sizeof *fan->kids, AL_K_OTHER, "bench");
    for (size_t i = 0; i < n; i++)
        fan->kids[i] = obj_new(&bnode_type, sizeof(bnode));
    fan->n = n;
    roots[0].name = "list";
    roots[0].o = &fan->hdr;
    measure("fan", roots, 1);
    obj_decref(&fan->hdr);

    head = chain(n);   /* leaked: nothing roots it */
    measure("leaked chain", NULL, 0);
    obj_decref(head);

    head = chain(n);
    obj *tail = head;
    while (((bnode *)tail)->next)
        tail = ((bnode *)tail)->next;
    obj_incref(head);
    ((bnode *)tail)->next = head;   /* a ring */
    obj_decref(head);
    measure("leaked ring", NULL, 0);
    double t0 = now();
    uint64_t freed = gc_collect();
    printf("gc_collect freed %llu in %.3f s; left %llu, live bytes %llu\n",
           (unsigned long long)freed, now() - t0, (unsigned long long)obj_leftover(),
           (unsigned long long)al_live_bytes());
    return 0;
}
