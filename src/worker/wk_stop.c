/* wk_stop.c - the interruption flag and the failure count. */
#include "worker/wk_stop.h"

#include <string.h>

static volatile sig_atomic_t interrupted_by;

static void on_interrupt(int sig)
{
    interrupted_by = sig;
}

void wk_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;   /* a second signal kills */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

const volatile sig_atomic_t *wk_interrupt_flag(void)
{
    return &interrupted_by;
}

int wk_interrupted(void)
{
    return (int)interrupted_by;
}

const char *wk_interrupt_name(void)
{
    return interrupted_by == SIGINT ? "SIGINT" : interrupted_by == SIGTERM ? "SIGTERM" : NULL;
}

int wk_interrupt_exit(void)
{
    return 128 + (int)interrupted_by;
}

static uint64_t stop_after, failures;
static volatile sig_atomic_t stopping;

void wk_stop_after(uint64_t n)
{
    stop_after = n;
    failures = 0;
    stopping = 0;
}

void wk_note_failure(void)
{
    if (stop_after && ++failures >= stop_after)
        stopping = 1;
}

int wk_stopping(void)
{
    return (int)stopping;
}
