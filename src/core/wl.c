/* wl.c - an enum's words (wl.h). */
#include "core/wl.h"

#include <stdio.h>
#include <string.h>

static const char *at(wl l, int i)
{
    return *(const char *const *)(const void *)((const char *)l.first + (size_t)i * l.stride);
}

const char *wl_word(wl l, int n, int i)
{
    return i >= 0 && i < n ? at(l, i) : "?";
}

int wl_find(wl l, int n, const char *w)
{
    return wl_find_n(l, n, w, strlen(w));
}

int wl_find_n(wl l, int n, const char *w, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(at(l, i)) == len && memcmp(at(l, i), w, len) == 0)
            return i;
    return -1;
}

size_t wl_join(wl l, int n, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int k = snprintf(buf + (len < cap ? len : cap), len < cap ? cap - len : 0, "%s%s",
                         i ? ", " : "", at(l, i));
        if (k > 0)
            len += (size_t)k;
    }
    return len;
}
