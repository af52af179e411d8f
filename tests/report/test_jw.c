/* test_jw.c - the one JSON writer: strings are escaped and their UTF-8
 * checked once; invalid sequences become U+FFFD, never pass through. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "report/rp_jw.h"

/* What rp_jw_str writes for s. */
static char *jw_of(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_not_null(m);
    rp_jw *w = rp_jw_open(m);
    cr_assert_not_null(w);
    rp_jw_str(w, s);
    cr_assert_eq(rp_jw_close(w), 0, "close");
    fclose(m);
    return buf;
}

static void expect(const char *in, const char *want)
{
    char *got = jw_of(in);
    cr_expect_str_eq(got, want, "in %s: got [%s], want [%s]", "rp_jw_str", got, want);
    free(got);
    /* the FILE form is the same escaper */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    rp_json_string(m, in);
    fclose(m);
    cr_expect_str_eq(buf, want, "rp_json_string: got [%s], want [%s]", buf, want);
    free(buf);
}

#define R "\xef\xbf\xbd"   /* U+FFFD */

Test(jw, valid_text_passes_and_specials_are_escaped)
{
    expect("plain", "\"plain\"");
    expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    expect("a\"b\\c\n\t\x01", "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    expect(NULL, "null");
}

Test(jw, invalid_utf8_becomes_the_replacement_character)
{
    expect("\xff", "\"" R "\"");                        /* never a UTF-8 byte */
    expect("a\x80z", "\"a" R "z\"");                    /* stray continuation */
    expect("\xe2\x82", "\"" R R "\"");                  /* truncated at the end */
    expect("\xe2\x82x", "\"" R R "x\"");                /* truncated in the middle */
    expect("\xc0\xaf", "\"" R R "\"");                  /* overlong '/' */
    expect("\xe0\x80\xaf", "\"" R R R "\"");            /* overlong, 3 bytes */
    expect("\xed\xa0\x80", "\"" R R R "\"");            /* a UTF-16 surrogate */
    expect("\xf4\x90\x80\x80", "\"" R R R R "\"");      /* past U+10FFFF */
    expect("\xf8\x88\x80\x80\x80", "\"" R R R R R "\""); /* 5-byte form */
}

Test(jw, numbers_and_keys)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    rp_jw *w = rp_jw_open(m);
    rp_jw_key(w, "{", "u"); rp_jw_u64(w, 18446744073709551615ull);
    rp_jw_key(w, ", ", "i"); rp_jw_i64(w, -5);
    rp_jw_key(w, ", ", "d"); rp_jw_num(w, 0.1);
    rp_jw_key(w, ", ", "nan"); rp_jw_num(w, 0.0 / 0.0);
    rp_jw_key(w, ", ", "f"); rp_jw_fixed(w, 2.0 / 3.0, 3);
    rp_jw_key(w, ", ", "b"); rp_jw_bool(w, 1);
    rp_jw_raw(w, "}");
    cr_assert_eq(rp_jw_close(w), 0);
    fclose(m);
    cr_expect_str_eq(buf, "{\"u\": 18446744073709551615, \"i\": -5, \"d\": 0.1, \"nan\": null, "
                          "\"f\": 0.667, \"b\": true}");
    free(buf);
}

Test(jw, a_write_error_is_reported_at_close)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        cr_skip_test("no /dev/full");
    rp_jw *w = rp_jw_open(f);
    rp_jw_str(w, "x");
    cr_expect_eq(rp_jw_close(w), -1, "a full device is an error");
    fclose(f);
}
