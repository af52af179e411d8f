/* "Did you mean": the closest word within a distance (sc_closest); the
 * folder of scenarios a command runs with no path (sc_files_default). */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <sys/stat.h>
#include <unistd.h>

#include "scenario/sc.h"
#include "scenario/sc_files.h"

static const char *const words[] = {"--format", "--output", NULL, "--formats", "-v"};

Test(closest, within_the_distance_first_of_the_closest)
{
    size_t n = sizeof words / sizeof *words;
    cr_assert(eq(str, (char *)sc_closest("--formt", words, n, sizeof *words, 2), "--format"));
    cr_assert(eq(str, (char *)sc_closest("--formatss", words, n, sizeof *words, 2),
                 "--formats"));
    cr_assert(eq(str, (char *)sc_closest("--otuput", words, n, sizeof *words, 2),
                 "--output"));   /* a transposition counts 1 */
    cr_assert(eq(ptr, (void *)sc_closest("--fmt", words, n, sizeof *words, 2), NULL));
    cr_assert(eq(str, (char *)sc_closest("--fmt", words, n, sizeof *words, 3), "--format"));
    cr_assert(eq(ptr, (void *)sc_closest("x", words, 0, sizeof *words, 2), NULL));
}

struct row {
    const char *name;
    int other;
};

Test(closest, rows_by_stride)
{
    static const struct row rows[] = {{"alloc/pair", 1}, {"weaktable/insert", 2}};
    cr_assert(eq(str, (char *)sc_closest("alloc/pairs", rows, 2, sizeof *rows, 3),
                 "alloc/pair"));
}

/* The folder a command runs with no path (sc_files_default). */
Test(closest, default_scenarios_folder)
{
    char dir[] = "/tmp/fakegc-def-XXXXXX", buf[256];
    cr_assert(ne(ptr, mkdtemp(dir), NULL));
    cr_assert(eq(int, chdir(dir), 0));
    sc_files_default("/usr/share/fakegc", buf, sizeof buf);
    cr_assert(eq(str, buf, "/usr/share/fakegc/scenarios"));
    sc_files_default("/usr/share/fakegc/", buf, sizeof buf);
    cr_assert(eq(str, buf, "/usr/share/fakegc/scenarios"));
    cr_assert(eq(int, mkdir("scenarios", 0700), 0));
    sc_files_default("/usr/share/fakegc", buf, sizeof buf);
    cr_assert(eq(str, buf, "scenarios"));
    rmdir("scenarios");
    chdir("/");
    rmdir(dir);
}
