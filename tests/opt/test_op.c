/* Tests of src/opt on a toy program: long names whole, by a unique prefix
 * (rewritten in argv) and with "=V", short options, operands after the
 * options, and the messages of a misspelt or ambiguous option. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opt/op.h"

typedef struct toy {
    uint32_t times;
    int dry, fmt;
    const char *file;
} toy;

static const op_opt toy_rows[] = {
    OP_UINT("--times", 't', "N", toy, times, 1, 100, "do it N times"),
    OP_FLAG("--dry-run", 'n', toy, dry, "only say what would be done"),
    OP_ENUM("--format", "FMT", "text|json", toy, fmt, "the report's format"),
    OP_STR("--filter", "WORD", toy, file, "only what matches WORD"),
    OP_END};
static const op_opt toy_common[] = {
    {"--help", 'h', OP_K_HELP, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL, "this text"}, OP_END};
static const op_cmd toy_cmd = {"frob", "[OPTIONS] FILE", "Frob a file.", toy_rows, 0, NULL,
                               NULL, "frob a file", 0};
static const op_prog toy_prog = {"tool", toy_common, NULL};

/* op_parse on words (copied: it permutes them), its stderr in err. */
static int parse_by(const op_cmd *cmd, toy *t, char **words, int n, char ***ops, int *nops,
                    char *err, size_t len)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int r = op_parse(&toy_prog, cmd, t, n, words, ops, nops);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t k = fread(err, 1, len - 1, tmp);
    err[k] = '\0';
    fclose(tmp);
    return r;
}

static int parse(toy *t, char **words, int n, char ***ops, int *nops, char *err, size_t len)
{
    return parse_by(&toy_cmd, t, words, n, ops, nops, err, len);
}

Test(opt, prefix_equals_short_and_operands)
{
    toy t = {.times = 1};
    char *w[] = {"frob", "a.txt", "--tim=7", "-n", "--format", "json", "b.txt", NULL};
    char **ops, err[256];
    int nops;
    cr_assert(eq(int, parse(&t, w, 7, &ops, &nops, err, sizeof err), OP_PARSE_OK));
    cr_assert(eq(str, err, ""));
    cr_assert(eq(u32, t.times, 7));
    cr_assert(eq(int, t.dry, 1));
    cr_assert(eq(int, t.fmt, 1));
    cr_assert(eq(str, w[1], "--times=7"));   /* the prefix rewritten whole */
    cr_assert(eq(int, nops, 2));
    cr_assert(eq(str, ops[0], "a.txt"));
    cr_assert(eq(str, ops[1], "b.txt"));
}

/* A command whose options end at its first operand (record's program):
 * what follows is the operand's own, options and "--" included. */
Test(opt, operands_end_at_the_first_operand)
{
    op_cmd cmd = toy_cmd;
    cmd.operands_end = 1;
    toy t = {.times = 1};
    char *w[] = {"frob", "-n", "prog.py", "--times", "3", "--", "-x", NULL};
    char **ops, err[256];
    int nops;
    cr_assert(eq(int, parse_by(&cmd, &t, w, 7, &ops, &nops, err, sizeof err), OP_PARSE_OK));
    cr_assert(eq(str, err, ""));
    cr_assert(eq(int, t.dry, 1));
    cr_assert(eq(u32, t.times, 1));   /* the program's --times, not ours */
    cr_assert(eq(int, nops, 5));
    cr_assert(eq(str, ops[0], "prog.py"));
    cr_assert(eq(str, ops[1], "--times"));
    cr_assert(eq(str, ops[3], "--"));
    cr_assert(eq(str, ops[4], "-x"));
    toy u = {.times = 1};   /* "--" before the program: the same */
    char *w2[] = {"frob", "--", "prog.py", "-n", NULL};
    cr_assert(eq(int, parse_by(&cmd, &u, w2, 4, &ops, &nops, err, sizeof err), OP_PARSE_OK));
    cr_assert(eq(int, u.dry, 0));
    cr_assert(eq(int, nops, 2));
    cr_assert(eq(str, ops[0], "prog.py"));
    cr_assert(eq(str, ops[1], "-n"));
}

Test(opt, did_you_mean_and_ambiguous)
{
    toy t = {0};
    char **ops, err[256];
    int nops;
    char *w1[] = {"frob", "--formt", "x", NULL};
    cr_assert(eq(int, parse(&t, w1, 3, &ops, &nops, err, sizeof err), OP_PARSE_ERROR));
    cr_assert(eq(str, err, "tool frob: unknown option '--formt'; did you mean '--format'? "
                           "(tool frob --help)\n"));
    char *w2[] = {"frob", "--f", "x", NULL};
    cr_assert(eq(int, parse(&t, w2, 3, &ops, &nops, err, sizeof err), OP_PARSE_ERROR));
    cr_assert(eq(str, err, "tool frob: ambiguous option '--f' could be --format, --filter "
                           "(tool frob --help)\n"));
    char *w3[] = {"frob", "--format=xml", NULL};
    cr_assert(eq(int, parse(&t, w3, 2, &ops, &nops, err, sizeof err), OP_PARSE_ERROR));
    cr_assert(eq(str, err, "tool frob: --format: unknown value 'xml' (expected text, json)\n"));
    char *w4[] = {"frob", "-t", NULL};
    cr_assert(eq(int, parse(&t, w4, 2, &ops, &nops, err, sizeof err), OP_PARSE_ERROR));
    cr_assert(eq(str, err, "tool frob: option --times needs a value\n"));
}

Test(opt, rows_help_and_takes_next)
{
    const op_opt *rows[OP_MAX_ROWS];
    cr_assert(eq(sz, op_rows(&toy_prog, &toy_cmd, rows), 5));
    cr_assert(eq(str, (char *)rows[4]->name, "--help"));
    cr_assert(eq(int, op_takes_next(&toy_prog, &toy_cmd, "-t"), 1));
    cr_assert(eq(int, op_takes_next(&toy_prog, &toy_cmd, "-t3"), 0));
    cr_assert(eq(int, op_takes_next(&toy_prog, &toy_cmd, "--dry-run"), 0));
    cr_assert(op_find(&toy_prog, &toy_cmd, "--help") == &toy_common[0]);
    char buf[1024] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    cr_assert(eq(int, op_help(&toy_prog, &toy_cmd, f), 0));
    fclose(f);
    cr_assert(strstr(buf, "usage: tool frob [OPTIONS] FILE\n\nFrob a file.\n\noptions:\n"
                          "  -t, --times N        do it N times\n") == buf,
              "help: %s", buf);
}

/* An ENUM row whose words live in a table elsewhere: its fn writes them. */
static int table_words(void *at, const char *v, char *buf, size_t n)
{
    cr_assert(at == NULL && v == NULL);
    snprintf(buf, n, "plain|fancy");
    return 0;
}

Test(opt, enum_words_from_a_table)
{
    static const op_opt rows[] = {
        {"--style", 0, OP_K_ENUM, sizeof(int), 0, 0, "S", NULL, 0, 0, offsetof(toy, fmt),
         table_words, "a style"},
        OP_END};
    op_cmd cmd = toy_cmd;
    cmd.opts = rows;
    toy t = {0};
    char **ops, err[256];
    int nops;
    char *w[] = {"frob", "--style", "fancy", NULL};
    cr_assert(eq(int, parse_by(&cmd, &t, w, 3, &ops, &nops, err, sizeof err), OP_PARSE_OK));
    cr_assert(eq(int, t.fmt, 1));
    char *w2[] = {"frob", "--style=loud", NULL};
    cr_assert(eq(int, parse_by(&cmd, &t, w2, 2, &ops, &nops, err, sizeof err), OP_PARSE_ERROR));
    cr_assert(eq(str, err, "tool frob: --style: unknown value 'loud' (expected plain, fancy)\n"));
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    op_list_options(&toy_prog, &cmd, f);
    fclose(f);
    cr_assert(ne(ptr, strstr(buf, "frob\t--style\t-\tchoice\tS\tplain|fancy\ta style\n"), NULL),
              "%s", buf);
}
