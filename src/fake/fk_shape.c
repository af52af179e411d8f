/* fk_shape.c - ShapeEnv, reduced to what holds memory (designs.md
 * "pytorch-2.3" table): its tracked fakes (tracked_fakes, strong: a compile
 * appends each graph input's fake, tr.input) and its own op cache, whose
 * keys are stripped of ShapeEnv references (_fake_tensor_utils.py@
 * a29b95dc:124-140,235-244), so that it holds nothing but a count here.
 * Symbols are not modelled: a dynamic fake holds its ShapeEnv (its
 * "shape_env" edge, fk_mode3.c), as a SymInt's node does. */
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "fake/fk_internal.h"

typedef struct fk_shape_env {
    obj hdr;
    ts_tensor **tracked;        /* strong */
    size_t ntracked, cap_tracked;
    uint64_t *keys;             /* its op cache */
    size_t nkeys, cap_keys;
    int64_t unbacked;           /* unbacked symbols made (u0, u1, ...) */
} fk_shape_env;

static void se_traverse(obj *self, obj_visit_fn visit, void *arg)
{
    fk_shape_env *se = (fk_shape_env *)self;
    for (size_t i = 0; i < se->ntracked; i++)
        visit(&se->tracked[i]->hdr, "tracked", (long)i, arg);
}

static void untrack_all(fk_shape_env *se)
{
    ts_tensor **v = se->tracked;
    size_t n = se->ntracked, cap = se->cap_tracked;
    se->tracked = NULL;
    se->ntracked = se->cap_tracked = 0;
    for (size_t i = 0; i < n; i++)
        obj_decref(&v[i]->hdr);
    al_free(v, cap * sizeof *v, AL_K_OBJECT);
}

static void se_release(obj *self)
{
    fk_shape_env *se = (fk_shape_env *)self;
    untrack_all(se);
    al_free(se->keys, se->cap_keys * sizeof *se->keys, AL_K_MEMO);
    se->keys = NULL;
    se->nkeys = se->cap_keys = 0;
}

static uint64_t se_owned(const obj *self)
{
    const fk_shape_env *se = (const fk_shape_env *)self;
    return se->cap_tracked * sizeof *se->tracked + se->cap_keys * sizeof *se->keys;
}

static void se_describe(const obj *self, char *buf, size_t n)
{
    const fk_shape_env *se = (const fk_shape_env *)self;
    snprintf(buf, n, "ShapeEnv tracked=%zu cache=%zu", se->ntracked, se->nkeys);
}

static const obj_type se_type = {
    .name = "ShapeEnv", .kind = OBJ_GENERIC, .traverse = se_traverse,
    .release = se_release, .owned_bytes = se_owned, .describe = se_describe,
};

obj *fk_shape_env_new(void)
{
    return obj_new(&se_type, sizeof(fk_shape_env));
}

int fk_is_shape_env(const obj *o) { return o && o->type == &se_type; }

int64_t fk_shape_env_cache_size(const obj *o)
{
    return (int64_t)((const fk_shape_env *)o)->nkeys;
}

int64_t fk_shape_env_tracked(const obj *o)
{
    return (int64_t)((const fk_shape_env *)o)->ntracked;
}

int64_t fk_shape_env_unbacked(const obj *o)
{
    return fk_is_shape_env(o) ? ((const fk_shape_env *)o)->unbacked : 0;
}

int64_t fk_shape_new_unbacked(obj *o)
{
    return ((fk_shape_env *)o)->unbacked++;
}

int fk_shape_track(obj *o, ts_tensor *f)
{
    fk_shape_env *se = (fk_shape_env *)o;
    if (al_grow(&se->tracked, &se->cap_tracked, se->ntracked, sizeof *se->tracked, 4,
                AL_K_OBJECT, "fk tracked fakes") < 0)
        return er_set(ER_OOM, "out of memory growing tracked_fakes");
    obj_incref(&f->hdr);
    se->tracked[se->ntracked++] = f;
    return 0;
}

void fk_shape_untrack(obj *o)
{
    untrack_all((fk_shape_env *)o);
}

int fk_shape_cache(obj *o, uint64_t key)
{
    fk_shape_env *se = (fk_shape_env *)o;
    for (size_t i = 0; i < se->nkeys; i++)
        if (se->keys[i] == key)
            return 0;
    if (al_grow(&se->keys, &se->cap_keys, se->nkeys, sizeof *se->keys, 8, AL_K_MEMO,
                "fk ShapeEnv op cache") < 0)
        return er_set(ER_OOM, "out of memory growing a ShapeEnv's op cache");
    se->keys[se->nkeys++] = key;
    return 0;
}
