/* tt.c - helpers of the tensor tests (see tt.h). */
#include "tensor/tt.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "alloc/al.h"
#include "core/obj.h"
#include "tensor/ts_internal.h"

static uint64_t base_bytes;

void tt_begin(void)
{
    ts_set_bugs(NULL);
    ts_set_max_bytes(0);
    er_clear();
    base_bytes = al_live_bytes();
}

void tt_end(void)
{
    cr_assert_eq(obj_live_count(), 0, "objects still live: %llu",
                 (unsigned long long)obj_live_count());
    cr_assert_eq(obj_zombie_count(), 0, "zombies: %llu",
                 (unsigned long long)obj_zombie_count());
    cr_assert_eq(al_live_bytes(), base_bytes, "allocator bytes %llu, baseline %llu",
                 (unsigned long long)al_live_bytes(), (unsigned long long)base_bytes);
    cr_assert_eq(ts_data_bytes(), 0, "tensor data bytes left: %llu",
                 (unsigned long long)ts_data_bytes());
}

ts_tensor *tt_empty_arr(ts_dtype dt, ts_device dev, const int64_t *v)
{
    ts_tensor *t = ts_empty((int)v[0], v + 1, dt, dev, TS_INIT_ZEROS, 0);
    cr_assert_not_null(t, "ts_empty failed: %s", er_message());
    return t;
}

static ts_args args_buf;

const ts_args *tt_args_arr(const int64_t *v)
{
    memset(&args_buf, 0, sizeof args_buf);
    args_buf.n = (int)v[0];
    for (int i = 0; i < args_buf.n; i++)
        args_buf.v[i] = v[i + 1];
    return &args_buf;
}

ts_tensor *tt_ok_at(ts_tensor *t, const char *file, int line)
{
    cr_assert_not_null(t, "%s:%d: expected a tensor, got error %s: %s", file, line,
                       er_kind_name(er_kind_get()) ? er_kind_name(er_kind_get()) : "none",
                       er_message());
    return t;
}

void tt_err_at(ts_tensor *t, er_kind kind, const char *sub, const char *file, int line)
{
    cr_assert_null(t, "%s:%d: expected an error, got a tensor", file, line);
    tt_rc_err_at(-1, kind, sub, file, line);
}

void tt_rc_err_at(int rc, er_kind kind, const char *sub, const char *file, int line)
{
    cr_assert_eq(rc, -1, "%s:%d: expected -1, got %d", file, line, rc);
    cr_assert_eq(er_kind_get(), kind, "%s:%d: error kind %s, expected %s (%s)", file, line,
                 er_kind_name(er_kind_get()) ? er_kind_name(er_kind_get()) : "none",
                 er_kind_name(kind), er_message());
    if (sub)
        cr_assert(strstr(er_message(), sub) != NULL,
                  "%s:%d: message \"%s\" lacks \"%s\"", file, line, er_message(), sub);
    er_clear();
}

const char *tt_sizes(const ts_tensor *t)
{
    static char buf[256];
    return ts_fmt_shape(buf, sizeof buf, t->ndim, t->sizes);
}

const char *tt_strides(const ts_tensor *t)
{
    static char buf[256];
    return ts_fmt_shape(buf, sizeof buf, t->ndim, t->strides);
}

void tt_geom_at(const ts_tensor *t, const char *sizes, const char *strides, int64_t off,
                const char *file, int line)
{
    cr_assert_str_eq(tt_sizes(t), sizes, "%s:%d: sizes %s, expected %s", file, line,
                     tt_sizes(t), sizes);
    if (strides)
        cr_assert_str_eq(tt_strides(t), strides, "%s:%d: strides %s, expected %s", file,
                         line, tt_strides(t), strides);
    cr_assert_eq(t->storage_offset, off, "%s:%d: offset %lld, expected %lld", file, line,
                 (long long)t->storage_offset, (long long)off);
}

void tt_drop(ts_tensor *t)
{
    if (t)
        obj_decref(&t->hdr);
}

static unsigned char *elem(const ts_tensor *t, int64_t i)
{
    unsigned char *p = ts_data_ptr(t);
    cr_assert_not_null(p, "tensor has no data");
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    return p + (size_t)off * ts_dtype_size(t->dtype);
}

double tt_at(const ts_tensor *t, int64_t i)
{
    double v[2];
    ts_load(t->dtype, elem(t, i), t->neg, t->conj, v);
    return v[0];
}

void tt_set(ts_tensor *t, int64_t i, double x)
{
    double v[2] = {x, 0};
    ts_store(t->dtype, elem(t, i), v);
}
