/* fuzz_parse - the lexer and parser on arbitrary bytes: no crash, no
 * unbounded recursion, no leak (every parser byte is AL_K_SCENARIO and must
 * be freed whether the text parses or not). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc/al.h"
#include "scenario/sc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int nerr = 0;
    sc_program *p = sc_parse("fuzz.scn", (const char *)data, size, NULL, 0, &nerr);
    if (p && nerr != 0)
        abort();                      /* a program is only built without errors */
    if (!p && nerr == 0)
        abort();                      /* a rejection always counts an error */
    sc_program_free(p);
    if (al_live_bytes() != 0) {
        fprintf(stderr, "fuzz_parse: %llu bytes leaked\n",
                (unsigned long long)al_live_bytes());
        abort();
    }
    return 0;
}
