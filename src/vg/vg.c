/* vg.c - the out-of-line Valgrind requests (see vg.h). */
#include "vg/vg.h"

#include <string.h>

int vg_running(void)
{
#if VG_ENABLED
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

void vg_report_bad_access(const char *what)
{
#if VG_ENABLED
    static char fence[8];   /* never addressable under memcheck */
    if (!RUNNING_ON_VALGRIND)
        return;
    VALGRIND_MAKE_MEM_NOACCESS(fence, sizeof fence);
    VALGRIND_PRINTF_BACKTRACE("fakegc: %s\n", what);
    (void)VALGRIND_CHECK_MEM_IS_ADDRESSABLE(fence, 1);
#endif
    (void)what;
}

void vg_leak_check_added(vg_leaks *out)
{
    memset(out, 0, sizeof *out);
#if VG_ENABLED
    if (!RUNNING_ON_VALGRIND)
        return;
    /* COUNT_LEAKS writes through unsigned long lvalues; start them at 0 so
     * the values are defined even under a tool that ignores the request. */
    unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
    unsigned long bleaked = 0, bdubious = 0, breachable = 0, bsuppressed = 0;
    VALGRIND_DO_ADDED_LEAK_CHECK;
    VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
    VALGRIND_COUNT_LEAK_BLOCKS(bleaked, bdubious, breachable, bsuppressed);
    (void)bdubious; (void)breachable; (void)bsuppressed;
    out->lost_bytes = leaked;
    out->lost_blocks = bleaked;
    out->possible_bytes = dubious;
    out->reachable_bytes = reachable;
    out->suppressed_bytes = suppressed;
#endif
}
