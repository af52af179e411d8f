/* es.c - the escapers (es.h). */
#include "esc/es.h"

#include <stdint.h>

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

int es_utf8_len(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int n;
    uint32_t v, min;
    if ((c & 0xE0) == 0xC0) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* What an ASCII byte c becomes in fmt: NULL as is, else the text (in buf
 * when made). */
static const char *ascii(unsigned c, es_format fmt, char buf[8])
{
    int ctl = c < 0x20 || c == 0x7F;
    switch (fmt) {
    case ES_XML:
        switch (c) {
        case '&': return "&amp;";
        case '<': return "&lt;";
        case '>': return "&gt;";
        case '"': return "&quot;";
        case '\'': return "&apos;";
        case '\t': case '\n': case '\r': return NULL;
        default: return ctl ? REPLACEMENT : NULL;
        }
    case ES_JSON:
        switch (c) {
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case '\b': return "\\b";
        case '\f': return "\\f";
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        default:
            if (!ctl)
                return NULL;
            snprintf(buf, 8, "\\u%04x", c);
            return buf;
        }
    case ES_DOT:
        switch (c) {
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case '\n': return "\\n";
        case '\t': return " ";
        case '\r': return "";
        default: return ctl ? REPLACEMENT : NULL;
        }
    case ES_TEXT:
        return c == '\n' || c == '\t' || !ctl ? NULL : "?";
    case ES_GH_DATA:
    case ES_GH_PROP:
        switch (c) {
        case '%': return "%25";
        case '\r': return "%0D";
        case '\n': return "%0A";
        case '\t': return " ";
        case ':': return fmt == ES_GH_PROP ? "%3A" : NULL;
        case ',': return fmt == ES_GH_PROP ? "%2C" : NULL;
        default: return ctl ? REPLACEMENT : NULL;
        }
    case ES_TAP:
        switch (c) {
        case '#': return "\\#";
        case '\\': return "\\\\";
        case '\n': case '\r': case '\t': return " ";
        default: return ctl ? REPLACEMENT : NULL;
        }
    }
    return NULL;
}

/* What a non-ASCII code point becomes: NULL as is. */
static const char *wide(unsigned cp, es_format fmt, char buf[8])
{
    if (cp >= 0x80 && cp <= 0x9F) {   /* C1 controls: 0x9B is a CSI */
        if (fmt == ES_TEXT)
            return "?";
        if (fmt != ES_JSON)
            return REPLACEMENT;
        snprintf(buf, 8, "\\u%04x", cp);
        return buf;
    }
    if (fmt == ES_XML && (cp == 0xFFFE || cp == 0xFFFF))
        return REPLACEMENT;
    return NULL;
}

void es_escape(es_put put, void *ctx, const char *str, es_format fmt)
{
    if (!str)
        return;
    const unsigned char *p = (const unsigned char *)str, *run = p;
    char buf[8];
    while (*p) {
        unsigned cp;
        int n = es_utf8_len(p, &cp);
        const char *to = !n ? REPLACEMENT : cp < 0x80 ? ascii(cp, fmt, buf) : wide(cp, fmt, buf);
        if (!to) {
            p += n;
            continue;
        }
        put(ctx, (const char *)run, (size_t)(p - run));
        size_t len = 0;
        while (to[len])
            len++;
        put(ctx, to, len);
        p += n ? n : 1;
        run = p;
    }
    put(ctx, (const char *)run, (size_t)(p - run));
}

static void file_put(void *f, const char *s, size_t n)
{
    if (n)
        fwrite(s, 1, n, f);
}

void es_fputs(FILE *f, const char *str, es_format fmt)
{
    es_escape(file_put, f, str, fmt);
}
