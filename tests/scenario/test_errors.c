/* Every .scn file in scenarios/errors/ is rejected by the parser with the message
 * its first line announces (`# expect-error: LINE:COL: MESSAGE`). The same
 * check through the fakegc binary is tests/scenario/check_errors.sh (ctest
 * label `scenario`); this one runs in-process, under Valgrind too. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "scenario/sc.h"

/* The source tree: this file is SRC/tests/scenario/test_errors.c. */
static void source_dir(char *buf, size_t n)
{
    snprintf(buf, n, "%s", __FILE__);
    char *p = strstr(buf, "tests/scenario/test_errors.c");
    cr_assert_not_null(p, "cannot locate the source tree from %s", __FILE__);
    *p = '\0';
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(errors, every_error_scenario_is_rejected_with_its_message)
{
    char dir[4096], path[4200];
    source_dir(dir, sizeof dir);
    strcat(dir, "scenarios/errors");
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".scn") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    cr_assert_geq(n, 12, "at least 12 error scenarios, found %zu", n);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        char first[512] = "";
        cr_assert_not_null(fgets(first, sizeof first, f));
        fclose(f);
        first[strcspn(first, "\n")] = '\0';
        const char *tag = "# expect-error: ";
        cr_assert(strncmp(first, tag, strlen(tag)) == 0, "%s: no expect-error line", names[i]);
        unsigned line = 0, col = 0;
        int used = 0;
        cr_assert_eq(sscanf(first + strlen(tag), "%u:%u: %n", &line, &col, &used), 2);
        char want[8192];
        snprintf(want, sizeof want, "%s:%u:%u: error: %s", path, line, col,
                 first + strlen(tag) + used);

        char diag[16384] = "";
        FILE *m = fmemopen(diag, sizeof diag - 1, "w");
        int nerr = 0;
        sc_program *p = sc_parse_file(path, m, 0, &nerr);
        fclose(m);
        cr_expect_null(p, "%s parsed but must be rejected", names[i]);
        if (p)
            sc_program_free(p);
        cr_expect_gt(nerr, 0);
        diag[strcspn(diag, "\n")] = '\0';
        cr_expect_str_eq(diag, want, "%s", names[i]);
        free(names[i]);
    }
    cr_expect_eq(al_live_bytes(), 0, "parsing left bytes behind");
}
