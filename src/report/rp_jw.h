/* rp_jw.h - the one JSON writer: every JSON document fakegc writes (the
 * report, --objects lines, bench, diff, merge, oom, stress) goes through it.
 *
 *   rp_jw *w = rp_jw_open(f);                 // NULL: out of memory (ER_OOM)
 *   rp_jw_key(w, "{", "name"); rp_jw_str(w, name);
 *   rp_jw_key(w, ", ", "count"); rp_jw_u64(w, n);
 *   rp_jw_raw(w, "}\n");
 *   if (rp_jw_close(w) < 0) ...               // f had a write error
 *
 * Strings are checked once, here: " \ and control characters are escaped,
 * and invalid UTF-8 (a stray continuation byte, a truncated or overlong
 * sequence, a surrogate, a code point past U+10FFFF) becomes U+FFFD; it is
 * never passed through. NULL is written as null. Numbers: integers as
 * integers, doubles in the shortest form that reads back the same, NaN and
 * infinities as null. Output goes through a 64 KiB buffer (AL_K_REPORT).
 */
#ifndef FAKEGC_RP_JW_H
#define FAKEGC_RP_JW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rp_jw rp_jw;

rp_jw *rp_jw_open(FILE *f);
/* Flush and free; 0, or -1 when f has an error (errno as the write left it). */
int rp_jw_close(rp_jw *w);

void rp_jw_put(rp_jw *w, const char *s, size_t n);    /* as is: punctuation */
void rp_jw_raw(rp_jw *w, const char *s);              /* as is, NUL-terminated */
void rp_jw_str(rp_jw *w, const char *s);              /* a string literal or null */
void rp_jw_key(rp_jw *w, const char *sep, const char *k);   /* sep then "k": */
void rp_jw_u64(rp_jw *w, uint64_t v);
void rp_jw_i64(rp_jw *w, int64_t v);
void rp_jw_num(rp_jw *w, double v);
void rp_jw_fixed(rp_jw *w, double v, int decimals);   /* "%.*f", null if not finite */
void rp_jw_bool(rp_jw *w, int v);

/* The build every document names: its version, commit and build type,
 * set once by the command line (rp_jw_build_set; until then "unknown").
 * rp_jw_build writes them as three members, sep first:
 *   "version": "0.4.0", "commit": "abc1234567", "build_type": "Debug" */
void rp_jw_build_set(const char *version, const char *commit, const char *build_type);
void rp_jw_build(rp_jw *w, const char *sep);
const char *rp_jw_build_type(void);   /* "Debug", "Release"... or "unknown" */

/* One string literal (or null) straight to f: the same escaper. */
void rp_json_string(FILE *f, const char *s);

#endif
