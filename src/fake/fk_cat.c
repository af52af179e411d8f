/* fk_cat.c - the verdict categories' words: one row each. */
#include "fake/fk_cat.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *word, *one, *many;
} cat_rows[FK_CAT_COUNT] = {
    [FK_CAT_FAKE] = {"fake", "fake tensor", "fake tensors"},
    [FK_CAT_META] = {"meta", "meta tensor", "meta tensors"},
    [FK_CAT_MODE] = {"mode", "mode", "modes"},
    [FK_CAT_CONVERTER] = {"converter", "converter", "converters"},
    [FK_CAT_FINALIZER] = {"finalizer", "finalizer", "finalizers"},
    [FK_CAT_STORAGE] = {"storage", "expired storage", "expired storages"},
    [FK_CAT_MEMO] = {"memo", "stale memo entry", "stale memo entries"},
};

const char *fk_category_noun(fk_category c, uint64_t n)
{
    if ((unsigned)c >= FK_CAT_COUNT)
        return "?";
    return n == 1 ? cat_rows[c].one : cat_rows[c].many;
}

const char *fk_category_word(fk_category c)
{
    return (unsigned)c < FK_CAT_COUNT ? cat_rows[c].word : "?";
}

int fk_category_from_word(const char *w, fk_category *out)
{
    for (int c = 0; c < FK_CAT_COUNT; c++)
        if (strcmp(cat_rows[c].word, w) == 0) {
            *out = (fk_category)c;
            return 0;
        }
    return -1;
}

size_t fk_category_words(char *buf, size_t n)
{
    size_t len = 0;
    for (int c = 0; c < FK_CAT_COUNT; c++) {
        int k = snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s",
                         c ? ", " : "", cat_rows[c].word);
        if (k > 0)
            len += (size_t)k;
    }
    return len;
}
