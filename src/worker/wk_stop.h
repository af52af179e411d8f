/* wk_stop.h - asking a run of many jobs to stop: by a signal, or after N
 * failures.
 *
 * SIGINT and SIGTERM ask the process to stop after the job in hand: the
 * first one sets a flag (wk_interrupted), the second one kills as usual.
 * The caller checks the flag between jobs, reports what finished marked
 * interrupted, and exits wk_interrupt_exit() (130 for SIGINT, 143 for
 * SIGTERM). Children forked after the install inherit it.
 *
 * --max-failures N: wk_stop_after(N) (0: never), then each failed job's
 * wk_note_failure(); wk_stopping() is set at the Nth, and the caller stops
 * handing out jobs (those in hand finish).
 */
#ifndef FAKEGC_WK_STOP_H
#define FAKEGC_WK_STOP_H

#include <signal.h>
#include <stdint.h>

void wk_interrupt_install(void);
int wk_interrupted(void);            /* the signal number, or 0 */
/* The flag itself, for sc_options.stop: a job in hand stops at its next
 * statement (its record is then dropped, not reported). */
const volatile sig_atomic_t *wk_interrupt_flag(void);
const char *wk_interrupt_name(void); /* "SIGINT", "SIGTERM" or NULL */
int wk_interrupt_exit(void);         /* 128 + the signal number */

void wk_stop_after(uint64_t n);
void wk_note_failure(void);
int wk_stopping(void);

#endif
