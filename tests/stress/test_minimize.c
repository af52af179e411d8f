/* One scenario file minimized (st_minimize.h): a failing file shrinks
 * and is written with its two comment lines; a passing one and one that
 * does not parse are said and left alone. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake/fk.h"
#include "stress/st_minimize.h"
#include "stress/st_setup.h"

/* Fails under strong-memo (the memo keeps t alive), passes without. */
static const char *failing =
    "m = fake_mode()\n"
    "a = ones(3, 3)\n"
    "t = empty(4, 4, dtype=f64)\n"
    "f = m.fake(t)\n"
    "c = zeros(2)\n"
    "del t\n"
    "expect m.memo_meta == 0\n"
    "d = a.clone()\n";

static char path[64];

/* text written to a fresh file; its minimized result in *buf (free it). */
static int minimize(const char *text, const char *inject, char **buf, st_minimized *m)
{
    snprintf(path, sizeof path, "/tmp/fakegc-minimize-XXXXXX.scn");
    int fd = mkstemps(path, 4);
    cr_assert(ge(int, fd, 0));
    cr_assert(eq(sz, (size_t)write(fd, text, strlen(text)), strlen(text)));
    close(fd);
    char err[128];
    cr_assert(eq(int, fk_inject(inject, err, sizeof err), 0), "%s", err);
    st_env e;
    st_env_set(&e, inject, -1, -1, -1);
    st_env_prepare(&e);
    size_t len = 0;
    FILE *out = open_memstream(buf, &len);
    *m = (st_minimized){.who = "test", .quiet = 1};
    int outcome = st_minimize_file(&e, path, out, m);
    fclose(out);
    unlink(path);
    return outcome;
}

Test(minimize, a_failing_file_shrinks)
{
    char *buf = NULL;
    st_minimized m;
    cr_assert(eq(int, minimize(failing, "strong-memo", &buf, &m), ST_MIN_DONE));
    cr_assert(eq(sz, m.before, 8));
    cr_assert(le(sz, m.stats.after_statements, 5), "%s", buf);
    char head[256];
    snprintf(head, sizeof head, "# expect m.memo_meta == N\n# shrunk from %s by fakegc shrink\n",
             path);
    cr_assert(eq(int, strncmp(buf, head, strlen(head)), 0), "%s", buf);
    cr_assert(ne(ptr, strstr(buf, "expect m.memo_meta == 0"), NULL), "%s", buf);
    cr_assert(eq(ptr, strstr(buf, "zeros"), NULL), "%s", buf);
    free(buf);
}

Test(minimize, a_passing_file_and_a_bad_one)
{
    char *buf = NULL;
    st_minimized m;
    cr_assert(eq(int, minimize(failing, "", &buf, &m), ST_MIN_PASSES));
    cr_assert(eq(sz, strlen(buf), 0));
    free(buf);
    cr_assert(eq(int, minimize("x = = 1\n", "", &buf, &m), ST_MIN_BAD));
    cr_assert(eq(sz, strlen(buf), 0));
    free(buf);
}
