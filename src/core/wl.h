/* wl.h - an enum's words: the lookups every table of words needs.
 *
 * The words of an enum live in one table beside the enum, in its owner's
 * module (heap's leak classes, fake's categories, the report's root
 * kinds); wl reads such a table, given as its first word and the distance
 * between two words: an array of words, or one column of a table of rows.
 *
 *   static const char *const words[N] = {[A] = "a", [B] = "b"};
 *   int i = wl_find(WL_WORDS(words), N, "b");          // B, or -1
 *   static const struct { const char *word, *noun; } rows[N] = {...};
 *   wl_join(WL_COLUMN(rows, word), N, buf, sizeof buf); // "a, b"
 *
 * Every word of the table must be set (no NULL holes).
 */
#ifndef FAKEGC_WL_H
#define FAKEGC_WL_H

#include <stddef.h>

typedef struct wl {
    const char *const *first;   /* the word of value 0 */
    size_t stride;              /* bytes from one word to the next */
} wl;
#define WL_WORDS(a) ((wl){(a), sizeof *(a)})
#define WL_COLUMN(rows, field) ((wl){&(rows)[0].field, sizeof *(rows)})

/* Word i of the n, or "?" when i is out of range. */
const char *wl_word(wl l, int n, int i);
/* The value whose word is w, or -1. */
int wl_find(wl l, int n, const char *w);
/* The value whose word is the n bytes at w, or -1. */
int wl_find_n(wl l, int n, const char *w, size_t len);
/* The n words joined with ", " into buf, snprintf's way: the length of the
 * whole list (buf holds what fits, NUL-terminated when cap > 0). */
size_t wl_join(wl l, int n, char *buf, size_t cap);

#endif
