/* er.c - the process-wide error record. */
#include "er.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static er_kind cur_kind = ER_NONE;
static char cur_msg[512];

static const char *const names[ER_KIND_COUNT] = {
    [ER_NONE] = NULL,
    [ER_OOM] = "OutOfMemory",
    [ER_SHAPE] = "ShapeError",
    [ER_TYPE] = "TypeError",
    [ER_UNSUPPORTED] = "UnsupportedFakeTensor",
    [ER_DEAD_REF] = "DeadReference",
    [ER_LIMIT] = "LimitExceeded",
    [ER_INTERNAL] = "InternalError",
    [ER_USE_AFTER_FREE] = "UseAfterFree",
};

int er_set(er_kind kind, const char *fmt, ...)
{
    /* Out of memory is sticky: the first failure is the one to report. */
    if (cur_kind == ER_OOM)
        return -1;
    cur_kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cur_msg, sizeof cur_msg, fmt, ap);
    va_end(ap);
    return -1;
}

er_kind er_kind_get(void) { return cur_kind; }
const char *er_message(void) { return cur_kind == ER_NONE ? "" : cur_msg; }

void er_clear(void)
{
    cur_kind = ER_NONE;
    cur_msg[0] = '\0';
}

const char *er_kind_name(er_kind kind)
{
    return (unsigned)kind < ER_KIND_COUNT ? names[kind] : NULL;
}

er_kind er_kind_from_name(const char *name)
{
    for (int k = 1; k < ER_KIND_COUNT; k++)
        if (strcmp(names[k], name) == 0)
            return (er_kind)k;
    return ER_NONE;
}

int er_why(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return -1;
}
