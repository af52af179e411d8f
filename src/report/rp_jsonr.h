/* rp_jsonr.h - a JSON pull parser over a text buffer.
 *
 *     rp_jr j;
 *     rp_jr_init(&j, text, len, "base.json", 32, err, sizeof err);
 *     char key[32];
 *     int first = 1, k = -1, rc = rp_jr_obj_open(&j);
 *     while (rc == 0 && (k = rp_jr_obj_next(&j, &first, key, sizeof key)) == 1)
 *         rc = strcmp(key, "n") == 0 ? rp_jr_get_u64(&j, &n, "n") : rp_jr_skip(&j);
 *     if (rc == 0 && k == 0 && rp_jr_peek(&j) >= 0)
 *         rc = rp_jr_fail(&j, "trailing characters");
 *     rp_jr_free(&j);     // err holds "base.json:LINE:COL: what" when rc != 0
 *
 * The caller asks for the value it expects (an object's keys, an array's
 * items, a string, an integer) and skips what it does not know. The parser
 * is shared by the report reader (rp_read.c, `fakegc diff`) and the
 * benchmark baseline reader (bn_report.c).
 *
 * Contracts:
 * - Every call returns -1 on failure (or the documented value); the first
 *   failure is the one reported, later calls keep failing quietly. After a
 *   failure only rp_jr_free is useful.
 * - Any input may be hostile: the cursor never passes the end, nesting is
 *   counted on every object and array and refused beyond the depth limit
 *   (rp_jr_skip recurses once per level, so the limit bounds the C stack;
 *   it is clamped to RP_JR_MAX_DEPTH).
 * - The grammar is strict RFC 8259 (no trailing commas, no leading zeros);
 *   strings are decoded to UTF-8, "\u0000" is refused.
 * - A key given twice in one object is refused ("duplicate key \"K\""), in
 *   the objects the caller reads and in those it skips alike: readers that
 *   take the first and readers that take the last would disagree. Keys are
 *   compared by a 64-bit hash of their decoded text; each object's first
 *   RP_JR_KEYS_LINEAR keys at once, the rest when the object closes.
 * - The allocations are the decoded-string buffer and the key hashes of the
 *   open objects (AL_K_REPORT). When one fails the call returns -1 with
 *   ER_OOM set and "out of memory" as the message; rp_jr_free releases them
 *   in every case.
 */
#ifndef FAKEGC_RP_JSONR_H
#define FAKEGC_RP_JSONR_H

#include <stddef.h>
#include <stdint.h>

enum { RP_JR_MAX_DEPTH = 1024, RP_JR_KEYS_LINEAR = 256 };

/* The largest JSON report `fakegc diff` and `fakegc merge` read (a 5M-object
 * leak report is 1.4 GB); 1 GiB where size_t is 32 bits. */
#define RP_JR_MAX_REPORT (SIZE_MAX > 0xffffffffu ? (size_t)16 << 30 : (size_t)1 << 30)

typedef struct rp_jr {
    const char *s, *p, *end;   /* the text, the cursor, the end of the text */
    const char *name;          /* for messages */
    char *err;                 /* message buffer (may be NULL) */
    size_t errlen;
    int failed, depth, max_depth;
    /* The message when the depth limit is passed, followed by " LIMIT";
     * "nesting deeper than" unless the caller sets it after rp_jr_init. */
    const char *deep_msg;
    char *str;                 /* the last string decoded: NUL-terminated */
    size_t str_len, str_cap;   /*   str_len bytes, valid until the next one */
    /* The key hashes of the open objects, innermost last; each object's
     * start (kh_base) is kept in the slot before its keys. */
    uint64_t *kh;
    size_t kh_n, kh_cap, kh_base;
} rp_jr;

/* Over text[0..len) (not NUL-terminated necessarily). name (NULL: "<json>")
 * starts every message; err may be NULL. Does not allocate. */
void rp_jr_init(rp_jr *j, const char *text, size_t len, const char *name, int max_depth,
                char *err, size_t errlen);
/* Release the string buffer and the key hashes. */
void rp_jr_free(rp_jr *j);

/* Fail at the cursor: "NAME:LINE:COL: message" into err (LINE and COL from
 * 1, COL counts UTF-8 characters). Always -1; only the first failure writes. */
int rp_jr_fail(rp_jr *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* er_set(ER_OOM) and fail with "out of memory". -1. */
int rp_jr_oom(rp_jr *j);

/* Skip white space. */
void rp_jr_ws(rp_jr *j);
/* Skip white space; the next byte, or -1 at the end. */
int rp_jr_peek(rp_jr *j);

/* '{' (one level deeper). 0 or -1 ("expected an object"). */
int rp_jr_obj_open(rp_jr *j);
/* Start with *first = 1. 1 with the next key in key (NUL-terminated; ""
 * when it does not fit in cap) and the cursor on its value; 0 after the
 * closing '}'; -1. */
int rp_jr_obj_next(rp_jr *j, int *first, char *key, size_t cap);
/* '[' (one level deeper). 0 or -1 ("expected an array"). */
int rp_jr_arr_open(rp_jr *j);
/* Start with *first = 1. 1 when an item follows, 0 after the closing ']',
 * -1. */
int rp_jr_arr_next(rp_jr *j, int *first);

/* Skip one value of any kind (checked as strictly as the rest). 0 or -1. */
int rp_jr_skip(rp_jr *j);
/* 1 after a null, 0 (nothing consumed) before anything else, -1. */
int rp_jr_is_null(rp_jr *j);

/* A string into j->str / j->str_len. 0 or -1 ("expected a string"). */
int rp_jr_string(rp_jr *j);
/* Integers; what names the value in a range error ("WHAT: expected a
 * non-negative integer", "WHAT: out of range", "WHAT: expected an
 * integer"). 0 or -1. */
int rp_jr_get_u64(rp_jr *j, uint64_t *out, const char *what);
int rp_jr_get_u32(rp_jr *j, uint32_t *out, const char *what);
int rp_jr_get_i64(rp_jr *j, int64_t *out, const char *what);
/* Any number (may be inf when it overflows a double). 0 or -1. */
int rp_jr_get_double(rp_jr *j, double *out);
/* true (1) or false (0). 0 or -1. */
int rp_jr_get_bool(rp_jr *j, int *out);

/* Read a whole file into a buffer from the allocator (kind `kind`), for
 * parsing: *buf holds *len bytes in an allocation of *cap bytes (free it
 * with al_free(*buf, *cap, kind)). Files over `limit` bytes are refused.
 * 0, or -1 with "PATH: cannot read: ...", "PATH: larger than N MiB",
 * "PATH: out of memory" (ER_OOM set) or "PATH: read error" in err. */
int rp_jr_read_file(const char *path, size_t limit, int kind, char **buf, size_t *len,
                    size_t *cap, char *err, size_t errlen);

#endif
