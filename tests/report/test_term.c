/* Colour on a terminal (rp_term.h): --color's three settings against
 * FORCE_COLOR, NO_COLOR and TERM=dumb, and a file that is not a terminal. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>

#include "report/rp_term.h"

static void clean_env(void)
{
    unsetenv("FORCE_COLOR");
    unsetenv("NO_COLOR");
    setenv("TERM", "xterm", 1);
}

TestSuite(term, .init = clean_env);

Test(term, the_three_settings_on_a_file)
{
    FILE *f = tmpfile();
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_AUTO, f), 0));   /* not a terminal */
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_ALWAYS, f), 1));
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_NEVER, f), 0));
    fclose(f);
}

Test(term, the_environment)
{
    FILE *f = tmpfile();
    setenv("FORCE_COLOR", "1", 1);
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_AUTO, f), 1));
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_NEVER, f), 0));   /* --color=never wins */
    setenv("FORCE_COLOR", "0", 1);
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_AUTO, f), 0));
    setenv("FORCE_COLOR", "", 1);
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_AUTO, f), 0));
    setenv("NO_COLOR", "1", 1);
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_ALWAYS, f), 1));  /* --color=always wins */
    cr_assert(eq(int, rp_color_wanted(RP_COLOR_AUTO, NULL), 0));
    fclose(f);
}
