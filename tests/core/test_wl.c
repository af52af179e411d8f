/* test_wl.c - an enum's words (wl.h): lookups in an array and in a column
 * of rows, and the joined list cut as snprintf cuts. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/wl.h"

static const char *const words[3] = {"lost", "accumulating", "reachable"};
static const struct {
    int n;
    const char *word;
    double x;
} rows[3] = {{1, "fake", 0}, {2, "meta", 0}, {3, "mode", 0}};

Test(wl, finds_words_in_an_array_and_a_column)
{
    cr_assert_eq(wl_find(WL_WORDS(words), 3, "reachable"), 2, "reachable");
    cr_assert_eq(wl_find(WL_WORDS(words), 3, "lo"), -1, "a prefix is no word");
    cr_assert_eq(wl_find(WL_COLUMN(rows, word), 3, "meta"), 1, "meta in the column");
    cr_assert_eq(wl_find(WL_COLUMN(rows, word), 3, "x"), -1, "unknown word");
    cr_assert_eq(wl_find_n(WL_WORDS(words), 3, "lost,reachable", 4), 0, "first item of a list");
    cr_assert_eq(wl_find_n(WL_WORDS(words), 3, "lostx", 5), -1, "longer than the word");
    cr_assert_str_eq(wl_word(WL_COLUMN(rows, word), 3, 2), "mode");
    cr_assert_str_eq(wl_word(WL_WORDS(words), 3, 3), "?");
    cr_assert_str_eq(wl_word(WL_WORDS(words), 3, -1), "?");
}

Test(wl, joins_and_cuts_like_snprintf)
{
    char buf[64];
    cr_assert_eq(wl_join(WL_COLUMN(rows, word), 3, buf, sizeof buf), 16, "length");
    cr_assert_str_eq(buf, "fake, meta, mode");
    char small[8];
    cr_assert_eq(wl_join(WL_WORDS(words), 3, small, sizeof small), 29, "whole length");
    cr_assert_str_eq(small, "lost, a");
    cr_assert_eq(wl_join(WL_WORDS(words), 3, NULL, 0), 29, "length alone");
}
