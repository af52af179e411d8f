/* ts_storage.c - storage objects: data bytes from the allocator (none on
 * meta), freed when the storage dies; the live-byte counter and its limit. */
#include "tensor/ts_internal.h"

#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

static uint64_t live_data_bytes;
static uint64_t max_data_bytes;

uint64_t ts_data_bytes(void) { return live_data_bytes; }
void ts_set_max_bytes(uint64_t max) { max_data_bytes = max; }

int ts_is_storage(const obj *o) { return o && o->type == &ts_storage_type; }

/* Idempotent: data is NULL after the first call. */
static void storage_release(obj *self)
{
    ts_storage *s = (ts_storage *)self;
    if (s->data) {
        al_free(s->data, (size_t)s->nbytes, AL_K_STORAGE);
        s->data = NULL;
        live_data_bytes -= s->nbytes;
    }
}

static uint64_t storage_owned_bytes(const obj *self)
{
    const ts_storage *s = (const ts_storage *)self;
    return s->data ? s->nbytes : 0;
}

static void storage_describe(const obj *self, char *buf, size_t n)
{
    const ts_storage *s = (const ts_storage *)self;
    char dev[32];
    ts_device_format(s->device, dev, sizeof dev);
    snprintf(buf, n, "storage %llu bytes %s", (unsigned long long)s->nbytes, dev);
}

/* A storage per conversion (the meta one) and per real tensor: a
 * pool in front of the allocator (same counters, checker view and fault
 * points as al_malloc; alloc/al.h). */
static al_pool storage_pool = AL_POOL_INIT(sizeof(ts_storage), AL_K_OBJECT);

const obj_type ts_storage_type = {
    .name = "storage",
    .kind = OBJ_STORAGE,
    .traverse = NULL,
    .traverse_weak = NULL,
    .release = storage_release,
    .owned_bytes = storage_owned_bytes,
    .describe = storage_describe,
    .pool = &storage_pool,
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64*: deterministic, so runs are reproducible. */
uint64_t ts_rand_u64(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

ts_storage *ts_storage_new(uint64_t nbytes, ts_device dev, ts_init init)
{
    dev = ts_device_norm(dev);
    int has_data = dev.type != TS_DEV_META && nbytes > 0;
    if (nbytes > (uint64_t)INT64_MAX || nbytes > (uint64_t)SIZE_MAX) {
        er_set(ER_SHAPE, "storage of %llu bytes is too large", (unsigned long long)nbytes);
        return NULL;
    }
    if (has_data && max_data_bytes &&
        (live_data_bytes + nbytes < live_data_bytes || live_data_bytes + nbytes > max_data_bytes)) {
        er_set(ER_LIMIT, "a storage of %llu bytes would raise live tensor data to %llu bytes, "
               "past the limit of %llu", (unsigned long long)nbytes,
               (unsigned long long)(live_data_bytes + nbytes),
               (unsigned long long)max_data_bytes);
        return NULL;
    }
    ts_storage *s = (ts_storage *)obj_new(&ts_storage_type, sizeof(ts_storage));
    if (!s)
        return NULL;
    s->nbytes = nbytes;
    s->device = dev;
    if (has_data) {
        s->data = al_malloc((size_t)nbytes, AL_K_STORAGE, "ts_storage_new");
        if (!s->data) {
            er_set(ER_OOM, "out of memory allocating %llu bytes of tensor data",
                   (unsigned long long)nbytes);
            obj_decref(&s->hdr);
            return NULL;
        }
        live_data_bytes += nbytes;
        unsigned char *p = s->data;
        switch (init) {
        case TS_INIT_NONE:
            break;
        case TS_INIT_ZEROS:
            memset(p, 0, (size_t)nbytes);
            break;
        case TS_INIT_ONES:  /* raw bytes; ts_empty writes typed ones */
            memset(p, 1, (size_t)nbytes);
            break;
        case TS_INIT_RAND:
            for (uint64_t i = 0; i < nbytes; i++)
                p[i] = (unsigned char)(ts_rand_u64() >> 56);
            break;
        }
    }
    return s;
}

/* set_ past the storage's end: PyTorch resizes the StorageImpl in place
 * (the same storage object, so memo keys keep matching). New bytes are
 * zeroed; the old block is freed, so a stale data pointer is a
 * use-after-free the guard allocator sees. */
int ts_storage_grow(ts_storage *s, uint64_t nbytes)
{
    if (nbytes <= s->nbytes)
        return 0;
    if (nbytes > (uint64_t)INT64_MAX || nbytes > (uint64_t)SIZE_MAX)
        return er_set(ER_SHAPE, "storage of %llu bytes is too large",
                      (unsigned long long)nbytes);
    if (s->device.type == TS_DEV_META || obj_expired(&s->hdr)) {
        s->nbytes = nbytes;
        return 0;
    }
    uint64_t extra = nbytes - s->nbytes;
    if (max_data_bytes && (live_data_bytes + extra < live_data_bytes ||
                           live_data_bytes + extra > max_data_bytes))
        return er_set(ER_LIMIT, "growing a storage to %llu bytes would raise live tensor "
                      "data past the limit of %llu", (unsigned long long)nbytes,
                      (unsigned long long)max_data_bytes);
    unsigned char *p = al_malloc((size_t)nbytes, AL_K_STORAGE, "ts_storage_grow");
    if (!p)
        return er_set(ER_OOM, "out of memory growing a storage to %llu bytes",
                      (unsigned long long)nbytes);
    if (s->data && s->nbytes)
        memcpy(p, s->data, (size_t)s->nbytes);
    memset(p + s->nbytes, 0, (size_t)extra);
    if (s->data)
        al_free(s->data, (size_t)s->nbytes, AL_K_STORAGE);
    s->data = p;
    live_data_bytes += extra;
    s->nbytes = nbytes;
    return 0;
}

uint64_t ts_storage_extent(const ts_tensor *t)
{
    uint64_t n = 0;
    if (ts_shape_storage_bytes(t->ndim, t->sizes, t->strides, t->storage_offset,
                               ts_dtype_size(t->dtype), &n))
        er_clear();
    return n;
}
