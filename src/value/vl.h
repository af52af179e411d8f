/* vl.h - the values of command-line words: numbers with size suffixes,
 * seconds, percentages, worker counts, `K/N` shards and ordering knobs.
 * Plain C over strings, no state, no allocation: the command layer's
 * option rows (src/opt/op.h) call these, and so can a test.
 *
 *   uint64_t b;
 *   if (vl_u64("64M", 1, &b) < 0) ...         // b = 67108864
 *   vl_shard s = VL_SHARD_NONE;
 *   char err[128];
 *   if (vl_shard_parse(&s, "2/8", err, sizeof err) < 0) ...   // s.k 2, s.n 8
 *
 * The parsers with the signature (void *at, const char *v, char *err,
 * size_t n) store the value at `at` and return 0, or return -1 with what
 * was expected in err ("expected a positive number") and leave `at` as it
 * was; a caller adds the option's name and the word given.
 */
#ifndef FAKEGC_VL_H
#define FAKEGC_VL_H

#include <stddef.h>
#include <stdint.h>

/* An unsigned decimal number, no sign; with `sizes`, an optional suffix
 * K, M, G or T (powers of 1024, either case, then an optional B or iB).
 * 0, or -1 on anything else or an overflow of 64 bits. */
int vl_u64(const char *s, int sizes, uint64_t *out);

/* v (1, 2, 4 or 8 bytes: size) stored at p, truncated to its size. */
void vl_put_uint(void *p, unsigned size, uint64_t v);
/* What a number in [lo, hi] (sizes: with K/M/G/T suffixes) is to look
 * like, in err: "expected a number from 1 to 1024", "expected a number >=
 * 1", "expected a size like 1048576, 64M or 1G" (hi UINT64_MAX: no upper
 * bound said). */
void vl_number_expected(int sizes, uint64_t lo, uint64_t hi, char *err, size_t n);

/* The index of v among words "a|b|c" (whole words), or -1. */
int vl_word(const char *words, const char *v);
/* "unknown value (expected a, b, c)" for words "a|b|c", in err. */
void vl_words_expected(const char *words, char *err, size_t n);

/* Does the argv word a name one of the options in list ("--name", NULL
 * ended; may be NULL): a == "--name" or starts "--name="? 1 or 0. */
int vl_option_in(const char *a, const char *const *list);
/* Append " word" to buf (n bytes, *len used; truncated at n - 1), in
 * single quotes when the shell would split or expand it (or it is
 * empty): for a command line to copy and paste. */
void vl_append_word(char *buf, size_t n, size_t *len, const char *word);

/* A double: > 0 and <= 1e9 (seconds, into a double). */
int vl_seconds(void *at, const char *v, char *err, size_t n);
/* A double: >= 0 and <= 1e6 (a percentage, into a double). */
int vl_percent(void *at, const char *v, char *err, size_t n);
/* A worker count from 0 to 1024 into an int; 0 means one per online CPU. */
int vl_jobs(void *at, const char *v, char *err, size_t n);

/* --order KNOB[,KNOB]: reverse, defer, reuse, weakrefs-late,
 * weakrefs-first (clears late), all (every flag set), none (no change);
 * the knobs apply left to right onto the vl_order at `at`. */
typedef struct vl_order {
    int reverse, defer, reuse, late;
} vl_order;
int vl_order_parse(void *at, const char *v, char *err, size_t n);

/* --shard K/N: item i of a campaign's sorted list belongs to shard i mod N
 * (README "Campaigns"), so N shards together do what one process does. */
typedef struct vl_shard {
    uint32_t k, n;        /* n == 0: not sharded */
    size_t total;         /* items of the whole campaign, once known */
} vl_shard;
#define VL_SHARD_NONE {0, 0, 0}
/* "K/N" with 0 <= K < N <= 1000000 into the vl_shard at `at` (k and n). */
int vl_shard_parse(void *at, const char *v, char *err, size_t n);

#endif
