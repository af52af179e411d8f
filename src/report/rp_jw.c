/* rp_jw.c - the JSON writer (see rp_jw.h). */
#include "report/rp_jw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp_int.h"

struct rp_jw {
    FILE *f;
    size_t n;
    char buf[1 << 16];
};

rp_jw *rp_jw_open(FILE *f)
{
    rp_jw *w = al_malloc(sizeof *w, AL_K_REPORT, "rp_jw");
    if (!w) {
        er_set(ER_OOM, "out of memory writing JSON");
        return NULL;
    }
    w->f = f;
    w->n = 0;
    return w;
}

static void flush(rp_jw *w)
{
    if (w->n)
        fwrite(w->buf, 1, w->n, w->f);
    w->n = 0;
}

int rp_jw_close(rp_jw *w)
{
    if (!w)
        return -1;
    flush(w);
    int bad = fflush(w->f) != 0;
    bad |= ferror(w->f) != 0;
    al_free(w, sizeof *w, AL_K_REPORT);
    return bad ? -1 : 0;
}

static void put(void *ctx, const char *s, size_t n)
{
    rp_jw *w = ctx;
    if (n > sizeof w->buf - w->n) {
        flush(w);
        if (n > sizeof w->buf) {
            fwrite(s, 1, n, w->f);
            return;
        }
    }
    memcpy(w->buf + w->n, s, n);
    w->n += n;
}

void rp_jw_put(rp_jw *w, const char *s, size_t n) { put(w, s, n); }

void rp_jw_raw(rp_jw *w, const char *s) { put(w, s, strlen(s)); }

void rp_jw_u64(rp_jw *w, uint64_t v)
{
    char tmp[24];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(w, tmp + n, sizeof tmp - n);
}

void rp_jw_i64(rp_jw *w, int64_t v)
{
    if (v < 0) {
        put(w, "-", 1);
        rp_jw_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        rp_jw_u64(w, (uint64_t)v);
    }
}

void rp_jw_num(rp_jw *w, double v)
{
    if (!isfinite(v)) {
        rp_jw_raw(w, "null");
        return;
    }
    char buf[40];
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    rp_jw_raw(w, buf);
}

void rp_jw_fixed(rp_jw *w, double v, int decimals)
{
    char buf[64];
    if (!isfinite(v) || fabs(v) >= 1e30) {
        rp_jw_raw(w, "null");
        return;
    }
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    rp_jw_raw(w, buf);
}

void rp_jw_bool(rp_jw *w, int v) { rp_jw_raw(w, v ? "true" : "false"); }

void rp_jw_str(rp_jw *w, const char *s)
{
    if (!s) {
        rp_jw_raw(w, "null");
        return;
    }
    put(w, "\"", 1);
    rp_escape(put, w, s, SK_JSON);
    put(w, "\"", 1);
}

void rp_jw_key(rp_jw *w, const char *sep, const char *k)
{
    rp_jw_raw(w, sep);
    put(w, "\"", 1);
    rp_jw_raw(w, k);
    put(w, "\": ", 3);
}

static void file_put(void *f, const char *s, size_t n) { fwrite(s, 1, n, f); }

void rp_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    rp_escape(file_put, f, s, SK_JSON);
    fputc('"', f);
}

static const char *build_id[3] = {"unknown", "unknown", "unknown"};

void rp_jw_build_set(const char *version, const char *commit, const char *build_type)
{
    build_id[0] = version;
    build_id[1] = commit;
    build_id[2] = build_type;
}

void rp_jw_build(rp_jw *w, const char *sep)
{
    rp_jw_key(w, sep, "version"); rp_jw_str(w, build_id[0]);
    rp_jw_key(w, ", ", "commit"); rp_jw_str(w, build_id[1]);
    rp_jw_key(w, ", ", "build_type"); rp_jw_str(w, build_id[2]);
}

const char *rp_jw_build_type(void) { return build_id[2]; }
