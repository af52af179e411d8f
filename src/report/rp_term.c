/* rp_term.c - colour and the progress line on a terminal (rp_term.h). */
#include "report/rp_term.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rp_color_wanted(int when, FILE *f)
{
    if (when == RP_COLOR_NEVER)
        return 0;
    const char *force = getenv("FORCE_COLOR");
    if (when == RP_COLOR_ALWAYS || (force && *force && strcmp(force, "0") != 0))
        return 1;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return 0;
    const char *term = getenv("TERM");   /* a terminal that cannot do colour */
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return f && isatty(fileno(f));
}

void rp_progress(int quiet, size_t done, size_t total, const char *file)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    if (!tty || quiet)
        return;
    if (done >= total)
        fprintf(stderr, "\r\033[K");
    else
        fprintf(stderr, "\r\033[K[%zu/%zu] %.200s", done + 1, total, file);
    fflush(stderr);
}
