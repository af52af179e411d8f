/* vm_maps.h - what the kernel says of this process' mappings, for tests
 * of memory advice: the mapping that holds an address, read from
 * /proc/self/smaps.
 *
 *   char flags[256];
 *   if (vm_flags_of(p, flags, sizeof flags) == 0 && strstr(flags, " hg"))
 *       ;   // p's mapping is advised MADV_HUGEPAGE
 */
#ifndef FAKEGC_TESTS_VM_MAPS_H
#define FAKEGC_TESTS_VM_MAPS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The VmFlags line (after "VmFlags:") of the mapping holding p into buf,
 * and the mapping's bounds into *lo_out and *hi_out when not NULL. 0, or -1
 * when no mapping holds p or smaps cannot be read. */
static inline int vm_map_of(const void *p, char *buf, size_t n, uintptr_t *lo_out,
                            uintptr_t *hi_out)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, found = -1;
    uintptr_t a = (uintptr_t)p;
    while (found != 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
            in = a >= lo && a < hi;
            if (in && lo_out)
                *lo_out = lo, *hi_out = hi;
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(buf, n, "%s", line + 8);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

static inline int vm_flags_of(const void *p, char *buf, size_t n)
{
    return vm_map_of(p, buf, n, NULL, NULL);
}

#endif
