/* Lexer and parser: every statement form, literals, diagnostics with their
 * positions, did-you-mean, hostile inputs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "scenario/sc.h"
#include "scenario/sc_int.h"

/* Parse src; return the program (or NULL) and the diagnostics in diag. */
static sc_program *parse(const char *src, char *diag, size_t n, int *nerr)
{
    memset(diag, 0, n);
    FILE *f = fmemopen(diag, n - 1, "w");
    cr_assert_not_null(f);
    sc_program *p = sc_parse("t.scn", src, strlen(src), f, 0, nerr);
    fclose(f);
    return p;
}

/* The first diagnostic line of a rejected source. */
static void first_error(const char *src, char *line, size_t n)
{
    char diag[8192];
    int nerr = 0;
    sc_program *p = parse(src, diag, sizeof diag, &nerr);
    cr_assert_null(p, "expected a parse error for:\n%s", src);
    cr_assert_gt(nerr, 0);
    const char *nl = strchr(diag, '\n');
    size_t len = nl ? (size_t)(nl - diag) : strlen(diag);
    if (len >= n)
        len = n - 1;
    memcpy(line, diag, len);
    line[len] = '\0';
}

#define EXPECT_ERROR(src, want)                                                \
    do {                                                                       \
        char got_[512];                                                        \
        first_error(src, got_, sizeof got_);                                   \
        cr_expect_str_eq(got_, want, "source:\n%s", src);                       \
    } while (0)

static sc_program *must_parse(const char *src)
{
    char diag[8192];
    int nerr = -1;
    sc_program *p = parse(src, diag, sizeof diag, &nerr);
    cr_assert_not_null(p, "did not parse:\n%s\n%s", src, diag);
    cr_assert_eq(nerr, 0);
    return p;
}

static void no_leak(void)
{
    cr_assert_eq(al_live_bytes_kind(AL_K_SCENARIO), 0, "parser left %llu bytes",
                 (unsigned long long)al_live_bytes_kind(AL_K_SCENARIO));
}

Test(parse, every_statement_form)
{
    sc_program *p = must_parse(
        "config gc = \"manual\"\n"
        "config sweep = \"periodic\"\n"
        "config end_check = \"off\"\n"
        "# comment line\n"
        "\n"
        "m = fake_mode(sweep=\"eager\", sweep_every=4)\n"
        "t = empty(2, 3, dtype=f16, device=\"cuda:1\", requires_grad=true)\n"
        "t.x = m\n"
        "t.grad = none\n"
        "gc()\n"
        "expect alive(t), \"msg\"\n"
        "expect t.numel() >= 6\n"
        "checkpoint \"c\"\n"
        "repeat 3\n"
        "  with m\n"
        "    f = zeros(2)\n"
        "  end\n"
        "end\n"
        "del t, f\n");
    cr_assert_eq(p->cfg_gc, SC_GC_MANUAL);
    cr_assert_eq(p->cfg_sweep, 1);
    cr_assert_eq(p->cfg_end_check, 0);
    cr_assert_eq(p->ntop, 10, "top-level statements: %u", p->ntop);
    static const int kinds[] = {S_ASSIGN, S_ASSIGN, S_STORE, S_STORE, S_EXPR,
                                S_EXPECT, S_EXPECT, S_CHECKPOINT, S_REPEAT, S_DEL};
    for (int i = 0; i < 10; i++)
        cr_expect_eq(p->top[i]->kind, kinds[i], "statement %d kind %d", i, p->top[i]->kind);
    const sc_stmt *rep = p->top[8];
    cr_assert_eq(rep->nbody, 1);
    cr_assert_eq(rep->body[0]->kind, S_WITH);
    cr_assert_eq(rep->body[0]->nbody, 1);
    cr_expect_eq(p->top[9]->nslots, 2);
    cr_expect_str_eq(p->top[5]->msg, "msg");
    cr_expect_eq(p->nvars, 3);
    cr_expect_eq(p->ncheckpoints, 1);
    cr_expect_eq(p->nstatements, 12);
    sc_program_free(p);
    no_leak();
}

Test(parse, integers_with_underscores_and_minus)
{
    sc_program *p = must_parse("a = 1_000_000\nb = -42\nc = -9223372036854775808\n"
                               "d = 9223372036854775807\ne = 007\n");
    cr_expect_eq(p->top[0]->e->ival, 1000000);
    cr_expect_eq(p->top[1]->e->ival, -42);
    cr_expect_eq(p->top[2]->e->ival, INT64_MIN);
    cr_expect_eq(p->top[3]->e->ival, INT64_MAX);
    cr_expect_eq(p->top[4]->e->ival, 7);
    sc_program_free(p);
    EXPECT_ERROR("x = 1__0\n", "t.scn:1:5: error: invalid integer literal '1__0'");
    EXPECT_ERROR("x = 1_\n", "t.scn:1:5: error: invalid integer literal '1_'");
    EXPECT_ERROR("x = 12ab\n", "t.scn:1:5: error: invalid integer literal '12ab'");
    EXPECT_ERROR("x = 9223372036854775808\n", "t.scn:1:5: error: integer literal out of range");
    EXPECT_ERROR("x = - 1\n", "t.scn:1:5: error: expected an expression but found '-'");
    no_leak();
}

/* Size expressions: * and // bind tighter than + and -, left to right;
 * `s0 -1` is a minus; symbols only inside `with`. */
Test(parse, size_expressions)
{
    sc_program *p = must_parse("m = fake_mode()\nwith m\n  a = 1 + 2*s0 - s1 // 2\n"
                               "  b = (s0 + 1) * 3\n  c = s0 -1\nend\n");
    const sc_stmt *w = p->top[1];
    const sc_expr *a = w->body[0]->e, *b = w->body[1]->e, *c = w->body[2]->e;
    cr_assert_eq(a->kind, E_ARITH);
    cr_expect_eq(a->sub, '-', "%c", a->sub);                 /* (1 + 2*s0) - (s1 // 2) */
    cr_expect_eq(a->args[0]->sub, '+', "%c", a->args[0]->sub);
    cr_expect_eq(a->args[0]->args[1]->sub, '*', "%c", a->args[0]->args[1]->sub);
    cr_expect_eq(a->args[0]->args[1]->args[1]->kind, E_SYM);
    cr_expect_eq(a->args[1]->sub, '/', "%c", a->args[1]->sub);
    cr_expect_eq(a->args[1]->args[0]->ival, 1);              /* s1 */
    cr_expect_eq(b->sub, '*', "%c", b->sub);
    cr_expect_eq(b->args[0]->sub, '+', "%c", b->args[0]->sub);
    cr_expect_eq(c->sub, '-', "%c", c->sub);
    cr_expect_eq(c->args[1]->kind, E_INT);
    cr_expect_eq(c->args[1]->ival, 1);
    sc_program_free(p);
    EXPECT_ERROR("x = s0 + 1\n", "t.scn:1:5: error: symbol s0 outside `with MODE`: a size "
                 "expression's symbols are the mode's ShapeEnv's");
    EXPECT_ERROR("x = 2 * none\n", "t.scn:1:9: error: '*' needs integers or symbols on "
                 "both sides");
    EXPECT_ERROR("x = (1 + )\n", "t.scn:1:10: error: expected an operand after the operator "
                 "but found ')'");
    no_leak();
}

Test(parse, strings_with_escapes)
{
    sc_program *p = must_parse("expect 1 == 1, \"a \\\"b\\\" \\\\ c\"\ncheckpoint \"\"\n"
                               "expect 1 == 1, \"h\xc3\xa9\"\n");
    cr_expect_str_eq(p->top[0]->msg, "a \"b\" \\ c");
    cr_expect_str_eq(p->checkpoint_names[0], "");
    cr_expect_str_eq(p->top[2]->msg, "h\xc3\xa9");
    sc_program_free(p);
    EXPECT_ERROR("checkpoint \"abc\n", "t.scn:1:12: error: unterminated string");
    EXPECT_ERROR("x = 1\ncheckpoint \"a\\n\"\n",
                 "t.scn:2:14: error: unknown escape '\\n' in string (only \\\" and \\\\)");
    /* columns count code points: the error after "é" is at column 9 */
    EXPECT_ERROR("x = \"\xc3\xa9\" $\n", "t.scn:1:9: error: unexpected character '$'");
    no_leak();
}

Test(parse, shapes_tuples_and_kwargs)
{
    sc_program *p = must_parse("a = empty((2, 3))\nb = a.as_strided((2, 2), (1, 2), 1)\n"
                               "c = a.view(6,)\nd = a.as_strided((4,), (1,), offset=0)\n"
                               "e = a.slice(0, 0, 2, step=1)\nf = a.to(device=\"cuda\", dtype=f64)\n"
                               "g = a.sum(dim=none)\n");
    const sc_expr *b = p->top[1]->e;
    cr_assert_eq(b->kind, E_METHOD);
    cr_expect_eq(b->nargs, 3);
    cr_expect_eq(b->args[0]->kind, E_TUPLE);
    cr_expect_eq(b->args[0]->nargs, 2);
    cr_expect_eq(p->top[3]->e->args[0]->kind, E_TUPLE);
    cr_expect_eq(p->top[3]->e->args[0]->nargs, 1);
    cr_expect_eq(p->top[3]->e->nkw, 1);
    sc_program_free(p);
    no_leak();
}

Test(parse, dtypes_resolve_unless_bound)
{
    sc_program *p = must_parse("a = f32\nf32 = 3\nb = f32\n");
    cr_expect_eq(p->top[0]->e->kind, E_DTYPE);
    cr_expect_eq(p->top[2]->e->kind, E_VAR);
    sc_program_free(p);
}

Test(parse, did_you_mean)
{
    EXPECT_ERROR("t = emtpy(2)\n", "t.scn:1:5: error: unknown function 'emtpy'; did you mean 'empty'?");
    EXPECT_ERROR("t = empty(2)\nv = t.veiw(2)\n",
                 "t.scn:2:7: error: unknown method 'veiw'; did you mean 'view'?");
    EXPECT_ERROR("t = empty(2)\nexpct alive(t)\n",
                 "t.scn:2:1: error: unknown statement 'expct'; did you mean 'expect'?");
    EXPECT_ERROR("tensor = empty(2)\nx = tensr\n",
                 "t.scn:2:5: error: unknown variable 'tensr'; did you mean 'tensor'?");
    EXPECT_ERROR("x = empty(2, dtype=f23)\n",
                 "t.scn:1:20: error: unknown variable 'f23'; did you mean 'f32'?");
    EXPECT_ERROR("x = empty(2, dtyp=f32)\n",
                 "t.scn:1:14: error: unknown keyword argument 'dtyp' for empty(); did you mean 'dtype'?");
    EXPECT_ERROR("config gcc = \"auto\"\n",
                 "t.scn:1:8: error: unknown config key 'gcc'; did you mean 'gc'?");
    EXPECT_ERROR("config gc = \"stres\"\n",
                 "t.scn:1:13: error: invalid value for config 'gc' \"stres\"; did you mean \"stress\"?");
    EXPECT_ERROR("expect raises(ShapeEror, 1)\n",
                 "t.scn:1:15: error: unknown error 'ShapeEror' in raises(); did you mean 'ShapeError'?");
    EXPECT_ERROR("expect live(\"tensors\") == 0\n",
                 "t.scn:1:13: error: invalid kind \"tensors\"; did you mean \"tensor\"?");
    EXPECT_ERROR("x = empty(2, device=\"cdua\")\n",
                 "t.scn:1:21: error: unknown device \"cdua\"; did you mean \"cuda\"?");
    EXPECT_ERROR("m = fake_mode()\nx = m.memo_meta()\n",
                 "t.scn:2:7: error: 'memo_meta' is an attribute, not a method: write X.memo_meta without ()");
    no_leak();
}

Test(parse, structure_errors)
{
    EXPECT_ERROR("x = 1\nconfig gc = \"auto\"\n",
                 "t.scn:2:1: error: 'config' must come before any other statement");
    EXPECT_ERROR("end\n", "t.scn:1:1: error: 'end' without an open 'repeat' or 'with' block");
    EXPECT_ERROR("x = 1\nrepeat 2\n  x = 2\n", "t.scn:2:1: error: 'repeat' block is never closed by 'end'");
    EXPECT_ERROR("repeat -1\nend\n", "t.scn:1:8: error: repeat count must be >= 0, got -1");
    EXPECT_ERROR("del x\n", "t.scn:1:5: error: unknown variable 'x'");
    EXPECT_ERROR("y = x\nx = 1\n",
                 "t.scn:1:5: error: variable 'x' is used before any line binds it (first bound at line 2)");
    EXPECT_ERROR("x = empty(2)\nx.numel() = 3\n",
                 "t.scn:2:11: error: cannot assign to the expression (only to a variable or X.attribute)");
    EXPECT_ERROR("m = fake_mode()\nm.hits = 3\n", "t.scn:2:3: error: 'hits' is a read-only counter");
    EXPECT_ERROR("x = (1, 2)\n",
                 "t.scn:1:5: error: a tuple is not a value (tuples are only shape arguments)");
    EXPECT_ERROR("expect 1 < 2 < 3\n", "t.scn:1:14: error: comparisons cannot be chained");
    EXPECT_ERROR("x = empty(2\n", "t.scn:1:12: error: expected ',' or ')' but found end of line");
    EXPECT_ERROR("config gc = \"auto\"\nconfig gc = \"manual\"\n",
                 "t.scn:2:8: error: config 'gc' is set twice");
    no_leak();
}

Test(parse, arity_of_builtins)
{
    EXPECT_ERROR("gc(1, 2)\n", "t.scn:1:1: error: gc() takes at most 1 argument, got 2");
    EXPECT_ERROR("m = fake_mode()\nf = m.fake(zeros())\nf.item(1)\n",
                 "t.scn:3:3: error: item() takes 0 arguments, got 1");
    EXPECT_ERROR("m = fake_mode()\ntr = tracer(m)\ntr.input()\n",
                 "t.scn:3:4: error: input() takes 1 argument, got 0");
    EXPECT_ERROR("gc(3)\n",
                 "t.scn:1:4: error: gc() takes a generation: 0, 1 or 2 (2 is a full collection)");
    EXPECT_ERROR("x = 1\ngc(x)\n",
                 "t.scn:2:4: error: gc() takes a generation: 0, 1 or 2 (2 is a full collection)");
    EXPECT_ERROR("x = weakref()\n", "t.scn:1:5: error: weakref() takes 1 argument, got 0");
    EXPECT_ERROR("x = empty_strided((2,))\n",
                 "t.scn:1:5: error: empty_strided() takes 2 arguments, got 1");
    EXPECT_ERROR("x = live(\"any\", \"tensor\")\n",
                 "t.scn:1:5: error: live() takes at most 1 argument, got 2");
    EXPECT_ERROR("x = fake_mode(1)\n", "t.scn:1:5: error: fake_mode() takes no arguments, got 1");
    EXPECT_ERROR("x = weakref(1, x=2)\n", "t.scn:1:16: error: weakref() takes no keyword arguments");
    EXPECT_ERROR("checkpoint \"a\"\nx = growth(\"b\")\n",
                 "t.scn:2:12: error: unknown checkpoint \"b\" (no earlier 'checkpoint' line names it)");
    no_leak();
}

Test(parse, several_errors_sorted_and_capped)
{
    char diag[65536];
    int nerr = 0;
    char src[4096] = "";
    for (int i = 0; i < 30; i++)
        strcat(src, "x = nope()\n");
    sc_program *p = parse(src, diag, sizeof diag, &nerr);
    cr_assert_null(p);
    cr_expect_eq(nerr, 30);
    cr_expect(strstr(diag, "t.scn:1:5: error:") == diag, "first error first:\n%.200s", diag);
    cr_expect(strstr(diag, "t.scn:20:5: error:") != NULL);
    cr_expect(strstr(diag, "t.scn:21:5: error:") == NULL, "capped at %d", SC_MAX_ERRORS);
    cr_expect(strstr(diag, "30 errors in all") != NULL);
    no_leak();
}

Test(parse, caret_under_the_column)
{
    char diag[4096];
    int nerr;
    sc_program *p = parse("x = 1\n\tt = emtpy(2)\n", diag, sizeof diag, &nerr);
    cr_assert_null(p);
    cr_expect_str_eq(diag, "t.scn:2:6: error: unknown function 'emtpy'; did you mean 'empty'?\n"
                           "\tt = emtpy(2)\n"
                           "\t    ^\n");
}

Test(parse, hostile_inputs)
{
    char diag[8192];
    int nerr;
    /* empty: a valid, empty scenario */
    sc_program *p = parse("", diag, sizeof diag, &nerr);
    cr_assert_not_null(p);
    cr_expect_eq(p->ntop, 0);
    sc_program_free(p);
    /* a 1 MB line */
    size_t big = 1u << 20;
    char *s = malloc(big + 8);
    memcpy(s, "x = ", 4);
    memset(s + 4, '1', big);
    strcpy(s + 4 + big, "\n");
    p = parse(s, diag, sizeof diag, &nerr);
    cr_assert_null(p);
    cr_expect(strstr(diag, "t.scn:1:1: error: line too long") == diag, "%.200s", diag);
    /* 10k nested blocks */
    char *d = malloc(200000);
    d[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < 10000; i++)
        len += (size_t)sprintf(d + len, "repeat 1\n");
    for (int i = 0; i < 10000; i++)
        len += (size_t)sprintf(d + len, "end\n");
    p = parse(d, diag, sizeof diag, &nerr);
    cr_assert_null(p);
    cr_expect_eq(nerr, 1, "one error, not 10k: %d", nerr);
    cr_expect(strstr(diag, "t.scn:257:1: error: blocks nested too deeply") == diag, "%.200s", diag);
    /* 10k nested parentheses on one line */
    len = (size_t)sprintf(d, "x = ");
    for (int i = 0; i < 10000; i++)
        d[len++] = '(';
    d[len++] = '1';
    for (int i = 0; i < 10000; i++)
        d[len++] = ')';
    d[len] = '\0';
    p = parse(d, diag, sizeof diag, &nerr);
    cr_assert_null(p);
    cr_expect(strstr(diag, "error: expression nested too deeply") != NULL, "%.200s", diag);
    /* binary garbage with NUL bytes and invalid UTF-8: one clear error */
    for (size_t i = 0; i < 5000; i++)
        d[i] = (char)((i * 2654435761u) >> 13);
    d[0] = (char)0xFF;
    p = sc_parse("bin.scn", d, 5000, NULL, 0, &nerr);
    cr_assert_null(p);
    cr_expect_eq(nerr, 1);
    free(s);
    free(d);
    no_leak();
}

Test(parse, edit_distance)
{
    cr_expect_eq(sc_edit_distance("empty", "empty", 3), 0);
    cr_expect_eq(sc_edit_distance("emtpy", "empty", 3), 1, "a transposition counts 1");
    cr_expect_eq(sc_edit_distance("veiw", "view", 3), 1);
    cr_expect_eq(sc_edit_distance("gcc", "gc", 3), 1);
    cr_expect_eq(sc_edit_distance("abc", "xyz", 2), 3, "capped at cap + 1");
    cr_expect_eq(sc_edit_distance("", "abc", 5), 3);
}

/* Every row of the vocabulary carries its evaluator (the interpreter has no
 * other dispatch), and every tensor op and constructor its argument
 * parser. */
Test(vocab, every_row_dispatches)
{
    size_t n;
    const sc_word *w = sc_vocab(&n);
    for (size_t i = 0; i < n; i++) {
        cr_assert(w[i].eval != NULL, "word '%s' has no evaluator", w[i].name);
        if (w[i].kind == SW_METHOD && w[i].mk == MK_OP)
            cr_assert(w[i].args != NULL, "tensor op '%s' has no argument parser", w[i].name);
        if (w[i].kind == SW_BUILTIN && w[i].id <= B_QUANTIZED)
            cr_assert(w[i].args != NULL, "constructor '%s' has no argument parser",
                      w[i].name);
    }
    for (int a = A_GRAD; a <= A_CHECK_COUNT; a++)
        cr_assert(sc_attr_word(a) != NULL && sc_attr_word(a)->id == a,
                  "attribute %d has no row", a);
}
