/* in_guard.h - the guard wrapper: red zones, poisoning and a quarantine.
 *
 *   al_allocator *a;
 *   as_create("guard/libc", &a, err, sizeof err);      // or "guard:q=0"
 *   al_install(a);
 *   char *p = al_malloc(8, AL_K_ATTR, "attr_new");
 *   p[8] = 1;                      // one past the end
 *   al_free(p, 8, AL_K_ATTR);      // stderr:
 *   // fakegc: guard: buffer overflow on attr block of 8 bytes from attr_new
 *   // and exit status 3 (the default action)
 *
 * Each block is laid out as [header][front zone][n bytes][back zone]; the
 * zones hold a known pattern, a new block is filled with 0xCD and a freed
 * one with 0xDD. A freed block waits in a FIFO quarantine (default
 * IN_GUARD_DEFAULT_QUARANTINE blocks, at most IN_GUARD_QUARANTINE_BYTES
 * bytes) before it goes back to the inner allocator; when it leaves, its
 * poison is checked, so a write after free is found. Findings:
 *   buffer overflow / buffer underflow      zone damaged (at free, verify)
 *   use-after-free write                    poison damaged (at eviction)
 *   double free                             the block is in quarantine
 *   free of unknown pointer                 never allocated by this guard
 *   free with wrong size N / wrong kind K   the caller's size or kind differ
 * Each is reported as `fakegc: guard: <what> on <kind> block of N bytes from
 * <site>`, then the action runs (default: exit status 3). A double free or
 * unknown pointer is never passed to the inner allocator.
 *
 * The guard does not annotate its zones for Valgrind (the zones are its own
 * memory); its live-block set stores pointers disguised so memcheck still
 * reports leaked blocks as lost.
 */
#ifndef FAKEGC_IN_GUARD_H
#define FAKEGC_IN_GUARD_H

#include <stddef.h>

#include "alloc/al.h"

enum {
    IN_GUARD_DEFAULT_QUARANTINE = 1024,          /* blocks */
    IN_GUARD_ZONE = 16                           /* bytes per red zone */
};
#define IN_GUARD_QUARANTINE_BYTES ((size_t)64 << 20)

typedef enum in_guard_action {
    IN_GUARD_EXIT = 0,   /* print the finding, exit(3) (default) */
    IN_GUARD_ABORT,      /* print the finding, abort() (for a core / gdb) */
    IN_GUARD_WARN,       /* print the finding and go on */
    IN_GUARD_RECORD      /* count and remember it silently and go on */
} in_guard_action;

/* Wrap inner; quarantine in blocks (0: free at once). NULL when out of
 * memory (inner untouched). Named "guard/<inner>", or "guard:q=N/<inner>"
 * when quarantine is not the default. */
al_allocator *in_guard_new(al_allocator *inner, size_t quarantine);

/* A hook that takes over every finding of every guard (buffer overflow,
 * use-after-free, double free, ...; also a fault on a poisoned pointer):
 * called with the finding's text ("use-after-free read: ...") before the
 * action, possibly from a SIGSEGV handler, so it must use only
 * async-signal-safe calls; it normally does not return (a runner records
 * the finding and _exits), and when it returns the action runs. NULL
 * removes it. */
void in_guard_set_finding_hook(void (*hook)(const char *what));

/* The guard layer of a chain, or NULL. The functions below accept any chain
 * and return -1 when it has no guard layer. */
al_allocator *in_guard_of(al_allocator *a);

/* Change the quarantine size; a smaller one evicts (and checks) at once. */
int in_guard_set_quarantine(al_allocator *a, size_t blocks);
int in_guard_set_action(al_allocator *a, in_guard_action action);

/* Check every live block's zones and every quarantined block's poison now;
 * returns the number of findings (each one reported and acted on). */
int in_guard_verify(al_allocator *a);

/* Findings so far (any action), and the text of the last one ("" if none;
 * the text has no "fakegc: guard: " prefix). */
long in_guard_findings(al_allocator *a);
const char *in_guard_last_finding(al_allocator *a);

#endif
