/* Tests of src/value: each parser on good words, on the edges of its range
 * and on bad words (the value untouched, err saying what was expected). */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>
#include <unistd.h>

#include "value/vl.h"

Test(value, u64_plain_and_sizes)
{
    uint64_t v = 7;
    cr_assert(eq(int, vl_u64("0", 0, &v), 0));
    cr_assert(eq(u64, v, 0));
    cr_assert(eq(int, vl_u64("18446744073709551615", 0, &v), 0));
    cr_assert(eq(u64, v, UINT64_MAX));
    cr_assert(eq(int, vl_u64("64M", 1, &v), 0));
    cr_assert(eq(u64, v, 64ull << 20));
    cr_assert(eq(int, vl_u64("2KiB", 1, &v), 0));
    cr_assert(eq(u64, v, 2048));
    cr_assert(eq(int, vl_u64("3gb", 1, &v), -1));   /* "b" is not "B" */
    cr_assert(eq(int, vl_u64("1G", 1, &v), 0));
    cr_assert(eq(u64, v, 1ull << 30));
    cr_assert(eq(int, vl_u64("1t", 1, &v), 0));
    cr_assert(eq(u64, v, 1ull << 40));
}

Test(value, u64_refuses)
{
    uint64_t v = 7;
    const char *bad[] = {"", "-1", "+1", "1x", "64M", "18446744073709551616", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert(eq(int, vl_u64(bad[i], 0, &v), -1), "%s", bad[i]);
    cr_assert(eq(int, vl_u64("16777216T", 1, &v), -1));   /* 2^64: overflow */
    cr_assert(eq(int, vl_u64("1Q", 1, &v), -1));
    cr_assert(eq(int, vl_u64(NULL, 1, &v), -1));
    cr_assert(eq(u64, v, 7));
}

typedef int (*parser)(void *at, const char *v, char *err, size_t n);

/* The real-valued parsers: each word, what it returns, what it stores (or
 * leaves: -1 stays) and what err says. */
Test(value, seconds_and_percent)
{
    static const struct {
        parser fn;
        const char *v;
        int rc;
        double want;
        const char *err;
    } cases[] = {
        {vl_seconds, "0.5", 0, 0.5, ""},
        {vl_seconds, "0", -1, -1, "expected a positive number"},
        {vl_seconds, "1e10", -1, -1, "expected a positive number"},
        {vl_seconds, "nan", -1, -1, "expected a positive number"},
        {vl_seconds, "3s", -1, -1, "expected a positive number"},
        {vl_percent, "0", 0, 0, ""},
        {vl_percent, "-1", -1, -1, "expected a percentage >= 0"},
        {vl_percent, "", -1, -1, "expected a percentage >= 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double d = -1;
        char err[64] = "";
        cr_assert(eq(int, cases[i].fn(&d, cases[i].v, err, sizeof err), cases[i].rc), "%s",
                  cases[i].v);
        cr_assert(eq(dbl, d, cases[i].want), "%s", cases[i].v);
        cr_assert(eq(str, err, (char *)cases[i].err), "%s", cases[i].v);
    }
}

Test(value, jobs)
{
    int j = -1;
    char err[64] = "";
    cr_assert(eq(int, vl_jobs(&j, "1024", err, sizeof err), 0));
    cr_assert(eq(int, j, 1024));
    cr_assert(eq(int, vl_jobs(&j, "1025", err, sizeof err), -1));
    cr_assert(eq(str, err, "expected a number from 0 to 1024"));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cr_assert(eq(int, vl_jobs(&j, "0", err, sizeof err), 0));
    cr_assert(eq(int, j, cpus > 0 ? (int)cpus : 1));
}

Test(value, order_knobs_left_to_right)
{
    vl_order o = {0};
    char err[128] = "";
    cr_assert(eq(int, vl_order_parse(&o, "reverse,defer", err, sizeof err), 0));
    cr_assert(eq(int, o.reverse, 1));
    cr_assert(eq(int, o.defer, 1));
    cr_assert(eq(int, o.reuse, 0));
    cr_assert(eq(int, o.late, 0));
    cr_assert(eq(int, vl_order_parse(&o, "all,weakrefs-first", err, sizeof err), 0));
    cr_assert(eq(int, o.reuse, 1));
    cr_assert(eq(int, o.late, 0));
    cr_assert(eq(int, vl_order_parse(&o, "weakrefs-late,none", err, sizeof err), 0));
    cr_assert(eq(int, o.late, 1));
    vl_order before = o;
    cr_assert(eq(int, vl_order_parse(&o, "defer,sideways", err, sizeof err), -1));
    cr_assert(eq(str, err, "unknown knob 'sideways' (reverse, defer, reuse, weakrefs-first, "
                           "weakrefs-late, all)"));
    cr_assert(eq(int, memcmp(&o, &before, sizeof o), 0));
}

Test(value, shard)
{
    vl_shard s = VL_SHARD_NONE;
    char err[64] = "";
    cr_assert(eq(int, vl_shard_parse(&s, "2/8", err, sizeof err), 0));
    cr_assert(eq(u32, s.k, 2));
    cr_assert(eq(u32, s.n, 8));
    cr_assert(eq(int, vl_shard_parse(&s, "999999/1000000", err, sizeof err), 0));
    cr_assert(eq(u32, s.k, 999999));
    const char *bad[] = {"8/8", "0/0", "1/1000001", "/4", "1/", "14", "-1/4", "1/4x",
                         "123456789012345678901234567890123/4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert(eq(int, vl_shard_parse(&s, bad[i], err, sizeof err), -1), "%s", bad[i]);
        cr_assert(eq(str, err, "expected K/N with 0 <= K < N <= 1000000"));
    }
    cr_assert(eq(u32, s.n, 1000000));
}

Test(value, words_and_what_is_expected)
{
    cr_assert(eq(int, vl_word("text|json|junit", "text"), 0));
    cr_assert(eq(int, vl_word("text|json|junit", "junit"), 2));
    cr_assert(eq(int, vl_word("text|json|junit", "jso"), -1));
    cr_assert(eq(int, vl_word("text|json|junit", "json|junit"), -1));
    cr_assert(eq(int, vl_word(NULL, "x"), -1));
    char err[128];
    vl_words_expected("manual|auto|stress", err, sizeof err);
    cr_assert(eq(str, err, "unknown value (expected manual, auto, stress)"));
    vl_number_expected(0, 1, 1000, err, sizeof err);
    cr_assert(eq(str, err, "expected a number from 1 to 1000"));
    vl_number_expected(0, 1, UINT64_MAX, err, sizeof err);
    cr_assert(eq(str, err, "expected a number >= 1"));
    vl_number_expected(0, 0, UINT64_MAX, err, sizeof err);
    cr_assert(eq(str, err, "expected a number"));
    vl_number_expected(1, 0, UINT64_MAX, err, sizeof err);
    cr_assert(eq(str, err, "expected a size like 1048576, 64M or 1G"));
}

Test(value, put_uint_by_size)
{
    struct {
        uint8_t a;
        uint16_t b;
        uint32_t c;
        uint64_t d;
        uint8_t guard;
    } v = {0, 0, 0, 0, 7};
    vl_put_uint(&v.a, 1, 0x1ff);
    vl_put_uint(&v.b, 2, 0x1ffff);
    vl_put_uint(&v.c, 4, 0x1ffffffffull);
    vl_put_uint(&v.d, 8, UINT64_MAX);
    cr_assert(eq(u8, v.a, 0xff));
    cr_assert(eq(u16, v.b, 0xffff));
    cr_assert(eq(u32, v.c, 0xffffffffu));
    cr_assert(eq(u64, v.d, UINT64_MAX));
    cr_assert(eq(u8, v.guard, 7));
}

Test(value, options_and_words_for_a_command_line)
{
    static const char *const list[] = {"--shard", "--format", NULL};
    cr_assert(eq(int, vl_option_in("--shard", list), 1));
    cr_assert(eq(int, vl_option_in("--format=json", list), 1));
    cr_assert(eq(int, vl_option_in("--shards", list), 0));
    cr_assert(eq(int, vl_option_in("--form", list), 0));
    cr_assert(eq(int, vl_option_in("--shard", NULL), 0));
    char buf[40] = "fakegc run";
    size_t len = strlen(buf);
    vl_append_word(buf, sizeof buf, &len, "-k");
    vl_append_word(buf, sizeof buf, &len, "memo/*");
    vl_append_word(buf, sizeof buf, &len, "");
    cr_assert(eq(str, buf, "fakegc run -k 'memo/*' ''"));
    cr_assert(eq(sz, len, strlen(buf)));
    vl_append_word(buf, sizeof buf, &len, "scenarios/memo/weak_keys.scn");
    cr_assert(eq(sz, len, sizeof buf - 1));   /* truncated, and stays so */
    cr_assert(eq(sz, strlen(buf), sizeof buf - 1));
    vl_append_word(buf, sizeof buf, &len, "x");
    cr_assert(eq(sz, len, sizeof buf - 1));
}
