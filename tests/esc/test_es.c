/* Tests of src/esc: each format's escaper on the same hostile text, byte
 * for byte: ESC, BEL, DEL, a C1 CSI, quotes, <>&, # and \, a newline, a
 * stray byte, an overlong '/' and a surrogate (one U+FFFD a bad byte). */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc/es.h"

static const char HOSTILE[] = "a\x1b]0;t\x07\x7f\xc2\x9b\"'<b>&#\\\n\t\r\xff\xc0\xaf\xed\xa0\x80\xc3\xa9z";

static char *escaped(es_format fmt)
{
    static char buf[512];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    cr_assert(ne(ptr, f, NULL));
    es_fputs(f, HOSTILE, fmt);
    fclose(f);
    return buf;
}

#define R "\xEF\xBF\xBD" /* U+FFFD */

Test(esc, xml)
{
    cr_assert(eq(str, escaped(ES_XML),
                 "a" R "]0;t" R R R "&quot;&apos;&lt;b&gt;&amp;#\\\n\t\r" R R R R R R "\xc3\xa9z"));
}

Test(esc, json)
{
    cr_assert(eq(str, escaped(ES_JSON),
                 "a\\u001b]0;t\\u0007\\u007f\\u009b\\\"'<b>&#\\\\\\n\\t\\r" R R R R R R
                 "\xc3\xa9z"));
}

Test(esc, dot)
{
    cr_assert(eq(str, escaped(ES_DOT),
                 "a" R "]0;t" R R R "\\\"'<b>&#\\\\\\n " R R R R R R "\xc3\xa9z"));
}

Test(esc, tap)
{
    cr_assert(eq(str, escaped(ES_TAP),
                 "a" R "]0;t" R R R "\"'<b>&\\#\\\\   " R R R R R R "\xc3\xa9z"));
}

Test(esc, github_data)
{
    cr_assert(eq(str, escaped(ES_GH_DATA),
                 "a" R "]0;t" R R R "\"'<b>&#\\%0A %0D" R R R R R R "\xc3\xa9z"));
}

Test(esc, github_property)
{
    static char buf[64];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    cr_assert(ne(ptr, f, NULL));
    es_fputs(f, "p%:,q\x1b", ES_GH_PROP);
    fputc('|', f);
    es_fputs(f, "p%:,q", ES_GH_DATA);
    fclose(f);
    cr_assert(eq(str, buf, "p%25%3A%2Cq" R "|p%25:,q"));
}

Test(esc, text)
{
    cr_assert(eq(str, escaped(ES_TEXT), "a?]0;t???\"'<b>&#\\\n\t?" R R R R R R "\xc3\xa9z"));
}

Test(esc, utf8_lengths)
{
    unsigned cp = 0;
    cr_assert(eq(int, es_utf8_len((const unsigned char *)"\xc3\xa9", &cp), 2));
    cr_assert(eq(u32, cp, 0xE9));
    cr_assert(eq(int, es_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", &cp), 4));
    cr_assert(eq(u32, cp, 0x1F600));
    cr_assert(eq(int, es_utf8_len((const unsigned char *)"\xc0\xaf", &cp), 0));      /* overlong */
    cr_assert(eq(int, es_utf8_len((const unsigned char *)"\xed\xa0\x80", &cp), 0));  /* surrogate */
    cr_assert(eq(int, es_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", &cp), 0)); /* > U+10FFFF */
}
