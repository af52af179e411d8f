/* sc_lex.c - the arena and the lexer of .scn files.
 *
 * The lexer works a token at a time on a copy of the source. It rejects what
 * a text file of this language cannot hold (NUL bytes, invalid UTF-8, bytes
 * outside strings and comments that start no token, lines past
 * SC_MAX_LINE) with a message and the position, then skips to the end of the
 * line so the parser can go on with the next one.
 */
#include "scenario/sc_int.h"

#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

/* ---- arena ---- */

struct sc_chunk {
    sc_chunk *next;
    size_t size;             /* bytes of this allocation */
};

#define CHUNK_MIN 8192u

void *sc_arena_alloc(sc_arena *a, size_t n)
{
    n = (n + 7u) & ~(size_t)7u;
    if (n == 0)
        n = 8;
    if (!a->head || a->cap - a->used < n) {
        size_t hdr = (sizeof(sc_chunk) + 7u) & ~(size_t)7u;
        size_t body = n > CHUNK_MIN ? n : CHUNK_MIN;
        if (body > SIZE_MAX - hdr) {
            a->failed = 1;
            er_set(ER_OOM, "scenario arena: request too large");
            return NULL;
        }
        sc_chunk *c = al_malloc(hdr + body, AL_K_SCENARIO, "sc_arena_alloc");
        if (!c) {
            a->failed = 1;
            er_set(ER_OOM, "out of memory while parsing");
            return NULL;
        }
        c->next = a->head;
        c->size = hdr + body;
        a->total += c->size;
        a->head = c;
        a->used = hdr;
        a->cap = hdr + body;
    }
    char *p = (char *)a->head + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *sc_arena_strndup(sc_arena *a, const char *s, size_t n)
{
    char *d = sc_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void sc_arena_free(sc_arena *a)
{
    sc_chunk *c = a->head;
    while (c) {
        sc_chunk *next = c->next;
        al_free(c, c->size, AL_K_SCENARIO);
        c = next;
    }
    a->head = NULL;
    a->used = a->cap = a->total = 0;
}

/* ---- lexer ---- */

const char *const sc_keyword_names[K_COUNT] = {
    [K_DEL] = "del", [K_EXPECT] = "expect", [K_REPEAT] = "repeat",
    [K_WITH] = "with", [K_END] = "end", [K_CONFIG] = "config",
    [K_CHECKPOINT] = "checkpoint", [K_TRUE] = "true", [K_FALSE] = "false",
    [K_NONE] = "none",
};

void sc_lex_init(sc_lexer *lx, const char *src, size_t len, sc_arena *a)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->end = src + len;
    lx->p = src;
    lx->line_start = src;
    lx->line = 1;
    lx->col = 1;
    lx->arena = a;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
size_t sc_utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; min = 0x10000; }
    else return 0;
    if ((size_t)(end - p) < n)
        return 0;
    unsigned cp = c & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static void advance(sc_lexer *lx, size_t nbytes)
{
    lx->p += nbytes;
    lx->col++;
}

/* Skip to the end of the current line (not past the newline). */
static void skip_line(sc_lexer *lx)
{
    while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
}

static sc_token error_tok(sc_lexer *lx, uint32_t line, uint32_t col,
                          const char *msg)
{
    sc_token t;
    memset(&t, 0, sizeof t);
    t.kind = T_ERROR;
    t.line = line;
    t.col = col;
    t.start = lx->p;
    snprintf(lx->msg, sizeof lx->msg, "%s", msg);
    lx->err_line = line;
    lx->err_col = col;
    skip_line(lx);
    return t;
}

/* Validate the line that starts at lx->p (called at each line start):
 * length, NUL bytes, UTF-8. Returns NULL or an error message, with *bad_col
 * the offending column. */
static const char *check_line(const sc_lexer *lx, uint32_t *bad_col)
{
    const unsigned char *p = (const unsigned char *)lx->p;
    const unsigned char *end = (const unsigned char *)lx->end;
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    const unsigned char *stop = nl ? nl : end;
    if ((size_t)(stop - p) > SC_MAX_LINE) {
        *bad_col = 1;
        return "line too long (more than 65536 bytes)";
    }
    uint32_t col = 1;
    while (p < stop) {
        if (*p == 0) {
            *bad_col = col;
            return "NUL byte in source (not a text file?)";
        }
        if (*p == '\r' && !(nl && p + 1 == stop)) {
            *bad_col = col;
            return "carriage return not followed by a newline (classic Mac line endings?): "
                   "use LF or CRLF line endings";
        }
        size_t n = sc_utf8_len(p, stop);
        if (n == 0) {
            *bad_col = col;
            return "invalid UTF-8 (not a text file?)";
        }
        p += n;
        col++;
    }
    return NULL;
}

static int is_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_name_char(int c) { return is_name_start(c) || is_digit(c); }

static sc_token lex_int(sc_lexer *lx, sc_token t)
{
    const char *p = lx->p;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    uint64_t v = 0;
    int overflow = 0, bad = 0;
    const char *q = p;
    while (q < lx->end && (is_digit(*q) || *q == '_')) {
        if (*q == '_') {
            /* `_` only between digits */
            if (q == p || q + 1 >= lx->end || !is_digit(q[1]))
                bad = 1;
        } else {
            unsigned d = (unsigned)(*q - '0');
            if (v > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                v = v * 10 + d;
        }
        q++;
    }
    if (q < lx->end && is_name_char(*q)) {
        while (q < lx->end && is_name_char(*q))
            q++;
        bad = 1;
    }
    size_t len = (size_t)(q - lx->p);
    if (bad) {
        char msg[120];
        snprintf(msg, sizeof msg, "invalid integer literal '%.*s'",
                 len > 40 ? 40 : (int)len, lx->p);
        return error_tok(lx, t.line, t.col, msg);
    }
    if (overflow || (!neg && v > (uint64_t)INT64_MAX) ||
        (neg && v > (uint64_t)INT64_MAX + 1u))
        return error_tok(lx, t.line, t.col, "integer literal out of range");
    t.kind = T_INT;
    t.ival = neg ? (v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v)
                 : (int64_t)v;
    t.len = len;
    lx->col += (uint32_t)len;
    lx->p = q;
    return t;
}

static sc_token lex_string(sc_lexer *lx, sc_token t)
{
    const char *p = lx->p + 1;
    size_t n = 0;
    /* First pass: find the end and the unescaped length. */
    while (p < lx->end && *p != '"' && *p != '\n') {
        if (*p == '\\') {
            if (p + 1 >= lx->end || p[1] == '\n')
                break;
            if (p[1] != '"' && p[1] != '\\') {
                uint32_t col = t.col + 1;
                for (const char *c = lx->p + 1; c < p; c++)
                    if (((unsigned char)*c & 0xC0) != 0x80)
                        col++;
                char msg[80];
                unsigned char e = (unsigned char)p[1];
                if (e >= 0x20 && e < 0x7F)
                    snprintf(msg, sizeof msg,
                             "unknown escape '\\%c' in string (only \\\" and \\\\)", e);
                else
                    snprintf(msg, sizeof msg,
                             "unknown escape in string (only \\\" and \\\\)");
                return error_tok(lx, t.line, col, msg);
            }
            p += 2;
        } else {
            p++;
        }
        n++;
    }
    if (p >= lx->end || *p != '"')
        return error_tok(lx, t.line, t.col, "unterminated string");
    char *s = sc_arena_alloc(lx->arena, n + 1);
    if (!s)
        return error_tok(lx, t.line, t.col, "out of memory");
    size_t k = 0;
    uint32_t cols = 1;
    for (const char *c = lx->p + 1; c < p; c++) {
        if (((unsigned char)*c & 0xC0) != 0x80)
            cols++;
        if (*c == '\\')
            c++, cols++;
        s[k++] = *c;
    }
    s[k] = '\0';
    t.kind = T_STRING;
    t.sval = s;
    t.slen = k;
    t.len = (size_t)(p + 1 - lx->p);
    lx->p = p + 1;
    lx->col += cols + 1;
    return t;
}

sc_token sc_lex_next(sc_lexer *lx)
{
    sc_token t;
    for (;;) {
        memset(&t, 0, sizeof t);
        if (lx->p == lx->line_start && lx->p < lx->end) {
            uint32_t bad;
            const char *why = check_line(lx, &bad);
            if (why) {
                t.line = lx->line;
                t.start = lx->p;
                return error_tok(lx, lx->line, bad, why);
            }
        }
        /* whitespace and comments */
        while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' ||
                                   *lx->p == '\r' || *lx->p == '\f' ||
                                   *lx->p == '\v'))
            advance(lx, 1);
        if (lx->p < lx->end && *lx->p == '#')
            skip_line(lx);
        t.line = lx->line;
        t.col = lx->col;
        t.start = lx->p;
        if (lx->p >= lx->end) {
            /* a last line without '\n' still ends with a NEWLINE token */
            if (lx->line_start < lx->end) {
                lx->line_start = lx->end;
                t.kind = T_NEWLINE;
                return t;
            }
            t.kind = T_EOF;
            return t;
        }
        break;
    }
    char c = *lx->p;
    if (c == '\n') {
        t.kind = T_NEWLINE;
        t.len = 1;
        lx->p++;
        lx->line++;
        lx->col = 1;
        lx->line_start = lx->p;
        return t;
    }
    if (is_name_start(c)) {
        const char *q = lx->p;
        while (q < lx->end && is_name_char(*q))
            q++;
        t.len = (size_t)(q - lx->p);
        t.kind = T_NAME;
        for (int k = 0; k < K_COUNT; k++)
            if (strlen(sc_keyword_names[k]) == t.len &&
                memcmp(sc_keyword_names[k], lx->p, t.len) == 0) {
                t.kind = T_KEYWORD;
                t.kw = k;
                break;
            }
        lx->col += (uint32_t)t.len;
        lx->p = q;
        return t;
    }
    if (is_digit(c) || (c == '-' && lx->p + 1 < lx->end && is_digit(lx->p[1])))
        return lex_int(lx, t);
    if (c == '"')
        return lex_string(lx, t);
    t.len = 1;
    switch (c) {
    case '(': t.kind = T_LPAREN; break;
    case ')': t.kind = T_RPAREN; break;
    case ',': t.kind = T_COMMA; break;
    case '.': t.kind = T_DOT; break;
    case '+': t.kind = T_PLUS; break;
    case '-': t.kind = T_MINUS; break;     /* not before a digit: that is an integer */
    case '*': t.kind = T_STAR; break;
    case '/':
        if (lx->p + 1 < lx->end && lx->p[1] == '/') { t.kind = T_FLOORDIV; t.len = 2; break; }
        return error_tok(lx, t.line, t.col, "unexpected character '/' (sizes divide with '//')");
    case '=':
        if (lx->p + 1 < lx->end && lx->p[1] == '=') { t.kind = T_EQ; t.len = 2; }
        else t.kind = T_ASSIGN;
        break;
    case '!':
        if (lx->p + 1 < lx->end && lx->p[1] == '=') { t.kind = T_NE; t.len = 2; break; }
        return error_tok(lx, t.line, t.col, "unexpected character '!' (did you mean '!='?)");
    case '<':
        if (lx->p + 1 < lx->end && lx->p[1] == '=') { t.kind = T_LE; t.len = 2; }
        else t.kind = T_LT;
        break;
    case '>':
        if (lx->p + 1 < lx->end && lx->p[1] == '=') { t.kind = T_GE; t.len = 2; }
        else t.kind = T_GT;
        break;
    default: {
        char msg[80];
        unsigned char u = (unsigned char)c;
        if (u >= 0x21 && u < 0x7F)
            snprintf(msg, sizeof msg, "unexpected character '%c'", c);
        else if (u < 0x80)
            snprintf(msg, sizeof msg, "unexpected character 0x%02x", u);
        else
            snprintf(msg, sizeof msg, "unexpected non-ASCII character");
        return error_tok(lx, t.line, t.col, msg);
    }
    }
    lx->p += t.len;
    lx->col += (uint32_t)t.len;
    return t;
}

void sc_tok_describe(const sc_token *t, char *buf, size_t n)
{
    switch (t->kind) {
    case T_EOF: snprintf(buf, n, "end of file"); break;
    case T_NEWLINE: snprintf(buf, n, "end of line"); break;
    case T_STRING: snprintf(buf, n, "a string"); break;
    case T_INT: snprintf(buf, n, "'%.*s'", t->len > 30 ? 30 : (int)t->len, t->start); break;
    default:
        snprintf(buf, n, "'%.*s'", t->len > 40 ? 40 : (int)t->len, t->start);
        break;
    }
}
