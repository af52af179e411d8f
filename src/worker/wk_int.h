/* wk_int.h - the worker module's private helpers, shared by wk.c (one
 * child) and wk_pool.c (the pool). */
#ifndef FAKEGC_WK_INT_H
#define FAKEGC_WK_INT_H

#include <sys/types.h>

#include "worker/wk.h"

/* Where a child's finding hook leaves what it found (shared memory). */
typedef struct wk_found {
    volatile int found;
    volatile uint32_t line;
    char what[240];
} wk_found;

/* Exit status of a child that found its parent gone before it started. */
enum { WK_EXIT_LOST = 3 };

/* In a new child: the finding hook (writing to found), death with the
 * parent, SIGALRM at its default and alarm(timeout). */
void wk_child_setup(wk_found *found, pid_t parent, unsigned timeout);
/* How a child ended, from its wait status and its found record. */
void wk_judge(int status, const wk_found *found, unsigned timeout, wk_end *e);
/* e = WK_LOST with "what: strerror(err)". */
void wk_lost(wk_end *e, const char *what, int err);

#endif
