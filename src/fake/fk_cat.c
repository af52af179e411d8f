/* fk_cat.c - the verdict categories' words: one row each. */
#include "fake/fk_cat.h"

#include "core/wl.h"

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
    return wl_word(WL_COLUMN(cat_rows, word), FK_CAT_COUNT, (int)c);
}

int fk_category_from_word(const char *w, fk_category *out)
{
    int c = wl_find(WL_COLUMN(cat_rows, word), FK_CAT_COUNT, w);
    return c < 0 ? -1 : (*out = (fk_category)c, 0);
}

size_t fk_category_words(char *buf, size_t n)
{
    return wl_join(WL_COLUMN(cat_rows, word), FK_CAT_COUNT, buf, n);
}
