/* Tests of src/report/rp_jsonr: the shared JSON pull parser (walking
 * objects and arrays, typed values, skipping, messages with line:col, the
 * depth limit on hostile nesting, allocation failure). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp_jsonr.h"
#include "report/treport.h"

TestSuite(jsonr, .init = tr_setup, .fini = tr_teardown);

Test(jsonr, walks_an_object_with_typed_values)
{
    const char *t = "{\"u\": 18446744073709551615, \"i\": -9223372036854775808,\n"
                    " \"w\": 7, \"d\": 2.5e-3, \"b\": false, \"n\": null,\n"
                    " \"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"skip\": {\"x\": [1, [true], \"y\"]},\n"
                    " \"arr\": [1, 2, 3]}  ";
    rp_jr j;
    char err[128] = "";
    rp_jr_init(&j, t, strlen(t), "w.json", 8, err, sizeof err);
    uint64_t u = 0;
    int64_t i = 0;
    uint32_t w = 0;
    double d = 0;
    int b = -1, nul = -1, first = 1, k, rc = rp_jr_obj_open(&j);
    uint64_t sum = 0;
    char key[16], s[16] = "";
    cr_assert_eq(rc, 0, "open: %s", err);
    while ((k = rp_jr_obj_next(&j, &first, key, sizeof key)) == 1) {
        if (strcmp(key, "u") == 0) {
            rc = rp_jr_get_u64(&j, &u, "u");
        } else if (strcmp(key, "i") == 0) {
            rc = rp_jr_get_i64(&j, &i, "i");
        } else if (strcmp(key, "w") == 0) {
            rc = rp_jr_get_u32(&j, &w, "w");
        } else if (strcmp(key, "d") == 0) {
            rc = rp_jr_get_double(&j, &d);
        } else if (strcmp(key, "b") == 0) {
            rc = rp_jr_get_bool(&j, &b);
        } else if (strcmp(key, "n") == 0) {
            nul = rp_jr_is_null(&j);
            rc = nul < 0 ? -1 : 0;
        } else if (strcmp(key, "s") == 0) {
            rc = rp_jr_string(&j);
            if (rc == 0)
                snprintf(s, sizeof s, "%s", j.str);
        } else if (strcmp(key, "arr") == 0) {
            int f2 = 1, k2;
            rc = rp_jr_arr_open(&j);
            while (rc == 0 && (k2 = rp_jr_arr_next(&j, &f2)) == 1) {
                uint64_t v;
                rc = rp_jr_get_u64(&j, &v, "item");
                sum += v;
            }
            if (rc == 0 && k2 < 0)
                rc = -1;
        } else {
            rc = rp_jr_skip(&j);
        }
        cr_assert_eq(rc, 0, "key %s: %s", key, err);
    }
    cr_assert_eq(k, 0, "closing brace: %s", err);
    cr_expect_eq(rp_jr_peek(&j), -1, "only white space left");
    cr_expect_eq(j.depth, 0, "depth back to 0");
    cr_expect_eq(u, UINT64_MAX, "u64 max");
    cr_expect_eq(i, INT64_MIN, "i64 min");
    cr_expect_eq(w, 7, "u32");
    cr_expect(d > 0.0024 && d < 0.0026, "double %g", d);
    cr_expect_eq(b, 0, "false");
    cr_expect_eq(nul, 1, "null seen");
    cr_expect_str_eq(s, "a\xc3\xa9\xf0\x9f\x98\x80\n", "escapes decoded to UTF-8");
    cr_expect_eq(sum, 6, "array items");
    cr_expect_str_eq(err, "", "no message on success");
    rp_jr_free(&j);
}

static void fails_with(const char *t, int depth, const char *want)
{
    rp_jr j;
    char err[160] = "";
    rp_jr_init(&j, t, strlen(t), "e.json", depth, err, sizeof err);
    int rc = rp_jr_skip(&j);
    if (rc == 0 && rp_jr_peek(&j) >= 0)
        rc = rp_jr_fail(&j, "trailing characters");
    cr_expect_eq(rc, -1, "accepted: %s", t);
    cr_expect(strstr(err, want) != NULL, "want [%s] in [%s]", want, err);
    rp_jr_free(&j);
}

Test(jsonr, rejects_bad_input_with_the_position)
{
    static const struct { const char *text, *message; } bad[] = {
        {"", "e.json:1:1: unexpected end of input"},
        {"[1,\n  2,]", "e.json:2:5: trailing ','"},
        {"{\"a\" 1}", "e.json:1:6: expected ':'"},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}'"},
        {"[1 2]", "expected ',' or ']'"},
        {"[tru]", "unexpected character, expected a value"},
        {"[01]", "leading zero"},
        {"[\"\\ud800\"]", "lone surrogate"},
        {"[\"\\x\"]", "bad escape"},
        {"[\"abc", "unterminated string"},
        {"1 2", "e.json:1:3: trailing characters"},
        {"[\"\xc3\xa9\xc3\xa9\" x]", "e.json:1:7:"},   /* columns count characters */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        fails_with(bad[i].text, 8, bad[i].message);
}

Test(jsonr, typed_getters_check_the_range)
{
    const char *cases[][2] = {
        {"-1", "v: expected a non-negative integer"},
        {"1.5", "v: expected a non-negative integer"},
        {"4294967296", "v: out of range"},
        {"9223372036854775808", "v: expected an integer"},
        {"\"x\"", "expected a number"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rp_jr j;
        char err[128] = "";
        rp_jr_init(&j, cases[c][0], strlen(cases[c][0]), "g", 4, err, sizeof err);
        uint32_t u32;
        int64_t i64;
        int rc = c == 3 ? rp_jr_get_i64(&j, &i64, "v") : rp_jr_get_u32(&j, &u32, "v");
        cr_expect_eq(rc, -1, "accepted %s", cases[c][0]);
        cr_expect(strstr(err, cases[c][1]) != NULL, "want [%s] in [%s]", cases[c][1], err);
        /* the first failure is the one reported */
        rp_jr_fail(&j, "later");
        cr_expect(strstr(err, "later") == NULL, "a second failure overwrote: %s", err);
        rp_jr_free(&j);
    }
    rp_jr j;
    int b = -1;
    rp_jr_init(&j, "1", 1, "g", 4, NULL, 0);
    cr_expect_eq(rp_jr_get_bool(&j, &b), -1, "1 is not a bool (and no err buffer is fine)");
    cr_expect_eq(b, -1, "untouched");
    rp_jr_free(&j);
}

Test(jsonr, long_keys_read_as_empty)
{
    const char *t = "{\"a_rather_long_key\": 1, \"ok\": 2}";
    rp_jr j;
    char err[128] = "", key[8];
    rp_jr_init(&j, t, strlen(t), "k", 4, err, sizeof err);
    int first = 1;
    cr_assert_eq(rp_jr_obj_open(&j), 0, "%s", err);
    cr_assert_eq(rp_jr_obj_next(&j, &first, key, sizeof key), 1, "%s", err);
    cr_expect_str_eq(key, "", "a key that does not fit is \"\"");
    cr_assert_eq(rp_jr_skip(&j), 0, "%s", err);
    cr_assert_eq(rp_jr_obj_next(&j, &first, key, sizeof key), 1, "%s", err);
    cr_expect_str_eq(key, "ok", "second key");
    cr_assert_eq(rp_jr_skip(&j), 0, "%s", err);
    cr_expect_eq(rp_jr_obj_next(&j, &first, key, sizeof key), 0, "end");
    rp_jr_free(&j);
}

Test(jsonr, deep_nesting_fails_cleanly)
{
    size_t n = 100000;
    char *deep = malloc(2 * n + 1);
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    rp_jr j;
    char err[128] = "";
    rp_jr_init(&j, deep, 2 * n, "d", 10, err, sizeof err);
    cr_expect_eq(rp_jr_skip(&j), -1, "100k levels accepted");
    cr_expect(strstr(err, "d:1:11: nesting deeper than 10") != NULL, "message: %s", err);
    rp_jr_free(&j);
    /* exactly at the limit is fine */
    rp_jr_init(&j, deep + n - 10, 20, "d", 10, err, sizeof err);
    cr_expect_eq(rp_jr_skip(&j), 0, "10 levels: %s", err);
    rp_jr_free(&j);
    /* the limit is clamped, the message can be worded by the caller */
    rp_jr_init(&j, deep, 2 * n, "d", 1 << 30, err, sizeof err);
    j.deep_msg = "nested deeper than";
    cr_expect_eq(rp_jr_skip(&j), -1, "clamped limit");
    char want[64];
    snprintf(want, sizeof want, "nested deeper than %d", RP_JR_MAX_DEPTH);
    cr_expect(strstr(err, want) != NULL, "want [%s] in [%s]", want, err);
    rp_jr_free(&j);
    free(deep);
}

Test(jsonr, string_allocation_failure)
{
    const char *t = "[\"a string that needs the buffer\"]";
    int done = 0;
    for (uint64_t k = 1; k < 20 && !done; k++) {
        er_clear();
        rp_jr j;
        char err[128] = "";
        rp_jr_init(&j, t, strlen(t), "m", 4, err, sizeof err);
        uint64_t start = al_alloc_count();
        al_fail_at(k, 0);
        int rc = rp_jr_skip(&j);
        uint64_t used = al_alloc_count() - start;
        al_fail_at(0, 0);
        if (rc == 0) {
            done = used < k;
        } else {
            cr_expect_eq(er_kind_get(), ER_OOM, "failure %llu: %s", (unsigned long long)k, err);
            cr_expect(strstr(err, "out of memory") != NULL, "message: %s", err);
        }
        rp_jr_free(&j);
        cr_assert_eq(al_live_bytes(), tr_base_bytes(), "leak after failing allocation %llu",
                     (unsigned long long)k);
    }
    cr_expect(done, "a clean run ended the loop");
}

/* A key given twice in one object: refused wherever it is (readers that
 * keep the first and readers that keep the last would disagree); the same
 * key in sibling or nested objects is fine. */
Test(jsonr, duplicate_keys_are_refused)
{
    fails_with("{\"s\": [1], \"s\": []}", 8, "e.json:1:15: duplicate key \"s\"");
    fails_with("[{\"a\": {\"x\": 1, \"y\": 2, \"x\": 3}}]", 8, "duplicate key \"x\"");
    /* escapes decode first: "\u0061" is "a" */
    fails_with("{\"a\": 1, \"\\u0061\": 2}", 8, "duplicate key \"a\"");
    const char *ok = "[{\"a\": 1, \"b\": {\"a\": 2}}, {\"a\": 3, \"b\": {\"a\": 4, \"b\": 5}}]";
    rp_jr j;
    char err[128] = "";
    rp_jr_init(&j, ok, strlen(ok), "ok.json", 8, err, sizeof err);
    cr_assert_eq(rp_jr_skip(&j), 0, "%s", err);
    rp_jr_free(&j);
    /* past the linear check: 600 keys, the last one a repeat of the 3rd */
    char *big = malloc(600 * 16 + 16);
    cr_assert_not_null(big);
    size_t n = (size_t)sprintf(big, "{");
    for (int i = 0; i < 600; i++)
        n += (size_t)sprintf(big + n, "%s\"k%d\": %d", i ? ", " : "", i == 599 ? 2 : i, i);
    strcpy(big + n, "}");
    fails_with(big, 8, "duplicate key in the object that ends here");
    n = (size_t)sprintf(big, "{");
    for (int i = 0; i < 600; i++)
        n += (size_t)sprintf(big + n, "%s\"k%d\": %d", i ? ", " : "", i, i);
    strcpy(big + n, "}");
    rp_jr_init(&j, big, strlen(big), "big.json", 8, err, sizeof err);
    cr_assert_eq(rp_jr_skip(&j), 0, "600 distinct keys: %s", err);
    rp_jr_free(&j);
    free(big);
}
