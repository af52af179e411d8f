/* fk_cat.c - the verdict categories' words: one row each. */
#include "fake/fk_cat.h"

#include "core/wl.h"

#include "core/obj.h"
#include "fake/fk_internal.h"
#include "tensor/ts.h"

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

int fk_category_of(const obj *o)
{
    switch (o->type->kind) {
    case OBJ_TENSOR: {
        const ts_tensor *t = (const ts_tensor *)o;
        return ts_is_fake(t) ? FK_CAT_FAKE : ts_is_meta(t) ? FK_CAT_META : -1;
    }
    case OBJ_FAKE_MODE: return FK_CAT_MODE;
    case OBJ_FAKE_CONVERTER:
    case OBJ_META_CONVERTER: return FK_CAT_CONVERTER;
    case OBJ_FINALIZER: return FK_CAT_FINALIZER;
    default: return -1;
    }
}

const obj *fk_fake_meta(const obj *o)
{
    if (o->type->kind != OBJ_TENSOR || !ts_is_fake((const ts_tensor *)o))
        return NULL;
    const ts_tensor *meta = ((const ts_tensor *)o)->meta;
    return meta ? &meta->hdr : NULL;
}

size_t fk_mode_parts(const obj *o, const obj **out)
{
    if (o->type->kind != OBJ_FAKE_MODE)
        return 0;
    const fk_mode *m = (const fk_mode *)o;
    size_t n = 0;
    if (m->converter) {
        out[n++] = &m->converter->hdr;
        if (m->converter->meta)
            out[n++] = &m->converter->meta->hdr;
    }
    return n;
}
