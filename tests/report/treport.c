/* treport.c - the report tests' setup and teardown (treport.h). */
#include "report/treport.h"

#include <criterion/criterion.h>
#include <stdint.h>

#include "alloc/al.h"
#include "core/er.h"

static uint64_t base_bytes;

void tr_setup(void)
{
    er_clear();
    base_bytes = al_live_bytes();
}

unsigned long long tr_base_bytes(void)
{
    return base_bytes;
}

void tr_teardown(void)
{
    al_fail_at(0, 0);
    cr_expect_eq(al_live_bytes(), base_bytes, "allocator bytes left: %lld",
                 (long long)(al_live_bytes() - base_bytes));
}
