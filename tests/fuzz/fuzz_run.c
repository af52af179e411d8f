/* fuzz_run - parse and run arbitrary scenarios with small limits. After
 * every input the process must be back to zero objects and zero live bytes
 * (teardown, the end check and the reclaim free everything, whatever the
 * scenario did or however it failed), and no run may report an internal
 * error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "scenario/sc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int nerr = 0;
    sc_program *p = sc_parse("fuzz.scn", (const char *)data, size, NULL, 0, &nerr);
    if (!p)
        return 0;
    sc_options o;
    sc_options_default(&o);
    o.max_statements = 20000;
    o.max_objects = 20000;
    o.max_bytes = 1u << 20;
    rp_scenario r;
    memset(&r, 0, sizeof r);
    sc_run(p, &o, &r);
    if (r.status == RP_ERROR) {
        fprintf(stderr, "fuzz_run: internal error: %s\n", r.error ? r.error : "?");
        for (size_t i = 0; i < r.nfailures; i++)
            fprintf(stderr, "  line %u: %s\n", r.failures[i].line,
                    r.failures[i].actual ? r.failures[i].actual : "");
        abort();
    }
    rp_scenario_clear(&r);
    sc_program_free(p);
    if (obj_live_count() || obj_zombie_count() || al_live_bytes()) {
        fprintf(stderr, "fuzz_run: left %llu objects, %llu zombies, %llu bytes\n",
                (unsigned long long)obj_live_count(), (unsigned long long)obj_zombie_count(),
                (unsigned long long)al_live_bytes());
        abort();
    }
    return 0;
}
