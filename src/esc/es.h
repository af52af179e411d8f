/* es.h - one escaper per output format, for every writer of that format
 * (the report's text, JSON, JUnit, TAP, HTML and SVG writers, heap's DOT).
 * Below every layer that writes (libc only).
 *
 *   es_fputs(f, name, ES_XML);                     // inside an element or attribute
 *   es_escape(put, ctx, name, ES_JSON);            // through a sink
 *
 * In every format, invalid UTF-8 (a stray byte, an overlong form, a
 * surrogate) becomes U+FFFD, and so does every control character the format
 * cannot carry; nothing a terminal would act on (ESC, BEL, CSI) is ever
 * written raw:
 *   ES_XML   XML 1.0 text or attribute (JUnit, SVG, the HTML page): & < > "
 *            ' as entities; tab, newline and CR as is; other C0 controls,
 *            DEL, C1 controls, U+FFFE and U+FFFF as U+FFFD.
 *   ES_JSON  inside a JSON string: " and \ escaped, \b \f \n \r \t, other
 *            controls (C0, DEL, C1) as \u00XX.
 *   ES_DOT   inside a DOT double-quoted string: " and \ escaped, newline as
 *            DOT's \n, tab as a space, CR dropped; other controls U+FFFD.
 *   ES_TAP   a TAP test line's description: # and \ escaped, newline, CR
 *            and tab as a space; other controls U+FFFD.
 *   ES_TEXT  text for a terminal (the text report): newline and tab as is,
 *            other controls (C0, DEL, C1) as '?'.
 *   ES_GH_DATA  a GitHub workflow command's message (after the second
 *            "::"): % CR LF as %25 %0D %0A, as the runner decodes them; tab
 *            as a space; other controls U+FFFD.
 *   ES_GH_PROP  a workflow command's property value (file=, title=): the
 *            same, and : , as %3A %2C.
 */
#ifndef FAKEGC_ES_H
#define FAKEGC_ES_H

#include <stddef.h>
#include <stdio.h>

typedef enum es_format {
    ES_XML, ES_JSON, ES_DOT, ES_TAP, ES_TEXT, ES_GH_DATA, ES_GH_PROP
} es_format;

typedef void (*es_put)(void *ctx, const char *s, size_t n);

/* str (NUL-terminated; NULL: nothing) escaped for fmt, through put: runs
 * that need nothing go out in one put. */
void es_escape(es_put put, void *ctx, const char *str, es_format fmt);
/* The same to a stream. */
void es_fputs(FILE *f, const char *str, es_format fmt);
/* Length of the valid UTF-8 sequence at p (1..4; p[0] < 0x80 is 1), 0 when
 * invalid; *cp gets the code point. */
int es_utf8_len(const unsigned char *p, unsigned *cp);

#endif
