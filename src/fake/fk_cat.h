/* fk_cat.h - the categories of what a verdict judges (hp_class.h): the
 * model's own objects a program can leave behind, and their words. The
 * fake layer owns them: what counts as a fake tensor, a mode or an expired
 * storage is its modelling; the verdict (sc_verdict.c) sorts, the report
 * formats.
 *
 *   fk_category c = FK_CAT_FAKE;
 *   fk_category_noun(c, 2);   // "fake tensors"
 *   fk_category_word(c);      // "fake" (a suppression rule's kind=)
 *
 * Adding a category: a row in fk_cat.c's table and its enum value here
 * (before FK_CAT_COUNT, at most HP_CAT_MAX in all); the schema's category
 * list (src/report/schema) follows the table.
 */
#ifndef FAKEGC_FK_CAT_H
#define FAKEGC_FK_CAT_H

#include <stddef.h>
#include <stdint.h>

typedef enum fk_category {
    FK_CAT_FAKE,         /* a fake tensor */
    FK_CAT_META,         /* a meta tensor (not a fake's own) */
    FK_CAT_MODE,         /* a FakeTensorMode */
    FK_CAT_CONVERTER,    /* a FakeTensorConverter or MetaConverter */
    FK_CAT_FINALIZER,    /* a weakref.finalize entry */
    FK_CAT_STORAGE,      /* an expired storage awaiting the sweep */
    FK_CAT_MEMO,         /* a stale memo entry */
    FK_CAT_COUNT
} fk_category;

/* "fake tensor" (n == 1) or "fake tensors"; "?" out of range. */
const char *fk_category_noun(fk_category c, uint64_t n);
/* The one-word name: "fake" "meta" "mode" "converter" "finalizer"
 * "storage" "memo" (suppression rules' kind=, JSON "category"); "?" out
 * of range. */
const char *fk_category_word(fk_category c);
/* The word's category: 0, or -1 on an unknown word. */
int fk_category_from_word(const char *w, fk_category *out);
/* "fake, meta, ..." into buf (messages); returns its length. */
size_t fk_category_words(char *buf, size_t n);

/* The category of a live object a verdict judges, by its type and fields
 * (never by its description): a fake tensor, a real tensor on the meta
 * device, a mode, a converter, a finalizer entry; -1 for what is the
 * program's data (real tensors, live storages, ...). A fake's own meta
 * tensor is the fake's: fk_fake_meta names it, for the caller to leave
 * out. Expired storages and stale memo entries are dead objects, sorted
 * by their reason (hp.h), not here. */
struct obj;
int fk_category_of(const struct obj *o);
/* The meta tensor a fake tensor wraps, or NULL when o is no fake tensor. */
const struct obj *fk_fake_meta(const struct obj *o);
/* A mode's parts, which a verdict counts as the mode's (it made them): its
 * FakeTensorConverter and that one's MetaConverter, into out; how many
 * (at most FK_MODE_PARTS; 0 when o is no mode). */
enum { FK_MODE_PARTS = 2 };
size_t fk_mode_parts(const struct obj *o, const struct obj **out);

#endif
