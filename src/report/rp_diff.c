/* rp_diff.c - compare two runs: new failures, newly retained objects,
 * growth. Matching is by value, never by object id (ids differ between
 * runs): failures by their text, retained records by kind + creating site
 * + path shape. */
#include "report/rp_int.h"

#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

enum { MAX_LINES = 20 };

typedef struct dctx {
    FILE *f;
    int color;
    size_t regressions, improvements;
    const rp_scenario *b, *c;   /* current pair (b may be NULL) */
    int header;
} dctx;

static const char *fname(const rp_scenario *s) { return s && s->file ? s->file : "?"; }

static void header(dctx *d)
{
    if (d->header)
        return;
    d->header = 1;
    fputs(fname(d->c), d->f);
    if (!d->b)
        fprintf(d->f, ": new scenario (%s)\n", rp_status_name(d->c->status));
    else if (d->b->status != d->c->status)
        fprintf(d->f, ": %s -> %s\n", rp_status_name(d->b->status),
                rp_status_name(d->c->status));
    else
        fputs(":\n", d->f);
}

/* kind: '-' regression, '+' improvement, '~' note. The text follows. */
static void item(dctx *d, char kind)
{
    header(d);
    if (kind == '-')
        d->regressions++;
    else if (kind == '+')
        d->improvements++;
    const char *col = kind == '-' ? "\033[31m" : kind == '+' ? "\033[32m" : "";
    if (d->color && *col)
        fputs(col, d->f);
    fprintf(d->f, "  %c ", kind);
    if (d->color && *col)
        fputs("\033[0m", d->f);
}

/* --- keyed multisets ------------------------------------------------------------ */

typedef struct keys {
    char *buf; size_t len, cap;
    size_t *off; size_t n, offcap;
    const void **what; size_t whatcap;   /* the item each key came from */
    const char **sorted;                 /* n pointers into buf, sorted */
} keys;

static void keys_free(keys *k)
{
    if (k->buf)
        al_free(k->buf, k->cap, AL_K_REPORT);
    if (k->off)
        al_free(k->off, k->offcap * sizeof *k->off, AL_K_REPORT);
    if (k->what)
        al_free((void *)k->what, k->whatcap * sizeof *k->what, AL_K_REPORT);
    if (k->sorted)
        al_free((void *)k->sorted, (k->n ? k->n : 1) * sizeof *k->sorted, AL_K_REPORT);
    memset(k, 0, sizeof *k);
}

static int reserve(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = al_realloc(*p, *cap * elem, ncap * elem, AL_K_REPORT, "rp_diff");
    if (!np)
        return er_set(ER_OOM, "out of memory comparing reports");
    *p = np;
    *cap = ncap;
    return 0;
}

/* Append a key of at most need bytes (NUL included) for item `what`: the
 * caller writes it into the returned room and adds its length + 1 to
 * k->len. NULL on OOM. */
static char *key_room(keys *k, size_t need, const void *what)
{
    if (reserve((void **)&k->buf, &k->cap, k->len + need, 1) != 0 ||
        reserve((void **)&k->off, &k->offcap, k->n + 1, sizeof *k->off) != 0 ||
        reserve((void **)&k->what, &k->whatcap, k->n + 1, sizeof *k->what) != 0)
        return NULL;
    k->off[k->n] = k->len;
    k->what[k->n] = what;
    k->n++;
    return k->buf + k->len;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int keys_sort(keys *k)
{
    k->sorted = al_malloc((k->n ? k->n : 1) * sizeof *k->sorted, AL_K_REPORT, "rp_diff");
    if (!k->sorted)
        return er_set(ER_OOM, "out of memory comparing reports");
    for (size_t i = 0; i < k->n; i++)
        k->sorted[i] = k->buf + k->off[i];
    qsort((void *)k->sorted, k->n, sizeof *k->sorted, cmp_str);
    return 0;
}

/* --- failures ------------------------------------------------------------------- */

static int failure_keys(const rp_scenario *s, keys *k)
{
    for (size_t i = 0; s && i < s->nfailures; i++) {
        const rp_failure *x = &s->failures[i];
        char lbuf[16] = "";
        if (!x->text || !x->text[0])
            snprintf(lbuf, sizeof lbuf, "line %u", x->line);
        const char *t = x->text && x->text[0] ? x->text : lbuf;
        size_t need = strlen(t) + 1;
        char *room = key_room(k, need, x);
        if (!room)
            return -1;
        memcpy(room, t, need);
        k->len += need;
    }
    return keys_sort(k);
}

/* Locate which failure (by index) a sorted key came from. */
static const rp_failure *failure_of(const keys *k, const char *key)
{
    size_t off = (size_t)(key - k->buf);
    size_t lo = 0, hi = k->n;   /* off[] is increasing: binary search */
    while (lo + 1 < hi) {
        size_t mid = (lo + hi) / 2;
        if (k->off[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return k->what[lo];
}

static void report_failures(dctx *d, const keys *kb, const keys *kc)
{
    size_t i = 0, j = 0, lines = 0, more = 0;
    while (i < kb->n || j < kc->n) {
        const char *t;
        int c = i >= kb->n ? 1 : j >= kc->n ? -1 : strcmp(kb->sorted[i], kc->sorted[j]);
        t = c <= 0 ? kb->sorted[i] : kc->sorted[j];
        size_t nb = 0, nc = 0, first_c = j;
        while (i < kb->n && strcmp(kb->sorted[i], t) == 0) {
            i++;
            nb++;
        }
        while (j < kc->n && strcmp(kc->sorted[j], t) == 0) {
            j++;
            nc++;
        }
        if (nc == nb)
            continue;
        if (lines >= MAX_LINES) {
            if (nc > nb)
                d->regressions++;
            else
                d->improvements++;
            more++;
            continue;
        }
        lines++;
        if (nc > nb) {
            const rp_failure *x = failure_of(kc, kc->sorted[first_c]);
            item(d, '-');
            fprintf(d->f, "new failure: %s:%u: %s", fname(d->c), x->line, x->text ? x->text : "");
            if (x->actual)
                fprintf(d->f, "  actual: %s", x->actual);
            if (nc - nb > 1 || nb)
                fprintf(d->f, "  (%zu times, base %zu)", nc, nb);
            fputc('\n', d->f);
        } else {
            const rp_failure *x = failure_of(kb, kb->sorted[i - 1]);
            item(d, '+');
            fprintf(d->f, "fixed: %s:%u: %s", fname(d->b), x->line, x->text ? x->text : "");
            if (nc)
                fprintf(d->f, "  (%zu times, base %zu)", nc, nb);
            fputc('\n', d->f);
        }
    }
    if (more)
        fprintf(d->f, "  ... and %zu more failure changes\n", more);
}

/* --- retained ------------------------------------------------------------------- */

static int retained_keys(const rp_scenario *s, keys *k)
{
    for (size_t i = 0; s && i < s->nretained; i++) {
        const hp_retained *r = &s->retained[i];
        char site[512];
        rp_site(r->site, site, sizeof site);
        size_t shape = hp_path_shape(r->path, r->path_len, NULL, 0);
        const char *kind = obj_kind_name(r->kind);
        size_t need = strlen(kind) + strlen(site) + shape + 16;
        char *room = key_room(k, need, r);
        if (!room)
            return -1;
        int w = snprintf(room, need, "%s created %s via ", kind, site);
        hp_path_shape(r->path, r->path_len, room + w, need - (size_t)w);
        k->len += strlen(room) + 1;
    }
    return keys_sort(k);
}

static void report_retained(dctx *d, const keys *kb, const keys *kc)
{
    size_t i = 0, j = 0, lines = 0, more = 0;
    while (i < kb->n || j < kc->n) {
        int c = i >= kb->n ? 1 : j >= kc->n ? -1 : strcmp(kb->sorted[i], kc->sorted[j]);
        const char *t = c <= 0 ? kb->sorted[i] : kc->sorted[j];
        size_t nb = 0, nc = 0;
        while (i < kb->n && strcmp(kb->sorted[i], t) == 0) {
            i++;
            nb++;
        }
        while (j < kc->n && strcmp(kc->sorted[j], t) == 0) {
            j++;
            nc++;
        }
        if (nc == nb)
            continue;
        if (lines >= MAX_LINES) {
            if (nc > nb)
                d->regressions++;
            else
                d->improvements++;
            more++;
            continue;
        }
        lines++;
        if (nc > nb) {
            item(d, '-');
            fprintf(d->f, "newly retained: %zu x %s (base %zu, now %zu)\n", nc - nb, t, nb, nc);
        } else {
            item(d, '+');
            fprintf(d->f, "no longer retained: %zu x %s (base %zu, now %zu)\n", nb - nc, t, nb,
                    nc);
        }
    }
    if (more)
        fprintf(d->f, "  ... and %zu more retention changes\n", more);
}

/* --- totals ---------------------------------------------------------------------- */

static uint64_t retained_bytes(const rp_scenario *s)
{
    uint64_t t = 0;
    for (size_t i = 0; s && i < s->nretained; i++)
        t += s->retained[i].bytes;
    return t;
}

static void report_growth(dctx *d)
{
    const rp_scenario *b = d->b, *c = d->c;
    size_t bn = b ? b->nretained : 0;
    uint64_t bb = retained_bytes(b), cb = retained_bytes(c);
    if (c->nretained > bn || cb > bb) {
        item(d, '-');
        fprintf(d->f, "retained: %zu -> %zu objects, %llu -> %llu bytes\n", bn, c->nretained,
                (unsigned long long)bb, (unsigned long long)cb);
    } else if (c->nretained < bn) {
        item(d, '+');
        fprintf(d->f, "retained: %zu -> %zu objects, %llu -> %llu bytes\n", bn, c->nretained,
                (unsigned long long)bb, (unsigned long long)cb);
    }
    uint64_t bl = b ? b->leaked_bytes : 0;
    if (c->leaked_bytes > bl) {
        item(d, '-');
        fprintf(d->f, "leaked bytes: %llu -> %llu\n", (unsigned long long)bl,
                (unsigned long long)c->leaked_bytes);
    }
    for (size_t i = 0; i < c->ncheckpoints; i++) {
        const rp_checkpoint *cp = &c->checkpoints[i], *bp = NULL;
        for (size_t k = 0; b && k < b->ncheckpoints && !bp; k++)
            if (b->checkpoints[k].name && cp->name &&
                strcmp(b->checkpoints[k].name, cp->name) == 0)
                bp = &b->checkpoints[k];
        if (bp && cp->growth > bp->growth) {
            item(d, '-');
            fprintf(d->f, "checkpoint \"%s\": growth %lld -> %lld\n", cp->name,
                    (long long)bp->growth, (long long)cp->growth);
        } else if (bp && cp->growth < bp->growth) {
            item(d, '+');
            fprintf(d->f, "checkpoint \"%s\": growth %lld -> %lld\n", cp->name,
                    (long long)bp->growth, (long long)cp->growth);
        } else if (!bp && b && cp->growth != 0) {
            item(d, '~');
            fprintf(d->f, "checkpoint \"%s\" (new): growth %lld\n", cp->name ? cp->name : "?",
                    (long long)cp->growth);
        }
    }
    if (b && b->peak_bytes && c->peak_bytes) {
        double r = (double)c->peak_bytes / (double)b->peak_bytes;
        if (r > 1.1 || r < 0.9) {
            item(d, '~');
            fprintf(d->f, "peak bytes: %llu -> %llu (%+.0f%%)\n",
                    (unsigned long long)b->peak_bytes, (unsigned long long)c->peak_bytes,
                    (r - 1.0) * 100.0);
        }
    }
}

/* --- scenarios -------------------------------------------------------------------- */

static int cmp_scn(const void *a, const void *b)
{
    const rp_scenario *x = *(const rp_scenario *const *)a, *y = *(const rp_scenario *const *)b;
    return strcmp(fname(x), fname(y));
}

static int bad(rp_status s) { return s == RP_FAIL || s == RP_ERROR; }

static int diff_pair(dctx *d)
{
    const rp_scenario *b = d->b, *c = d->c;
    d->header = 0;
    if (!b) {
        if (bad(c->status)) {
            item(d, '-');
            fprintf(d->f, "a new scenario that does not pass\n");
        }
    } else if (b->status != c->status) {
        if (bad(c->status) && (!bad(b->status) || c->status == RP_ERROR)) {
            item(d, '-');
            fprintf(d->f, "status %s -> %s\n", rp_status_name(b->status),
                    rp_status_name(c->status));
        } else if (!bad(c->status) && bad(b->status)) {
            item(d, '+');
            fprintf(d->f, "status %s -> %s\n", rp_status_name(b->status),
                    rp_status_name(c->status));
        } else {
            item(d, '~');
            fprintf(d->f, "status %s -> %s\n", rp_status_name(b->status),
                    rp_status_name(c->status));
        }
    }
    if (c->error && (!b || !b->error || strcmp(b->error, c->error) != 0)) {
        item(d, '~');
        fprintf(d->f, "error: %s\n", c->error);
    }
    keys fb, fc, rb, rc;
    memset(&fb, 0, sizeof fb);
    memset(&fc, 0, sizeof fc);
    memset(&rb, 0, sizeof rb);
    memset(&rc, 0, sizeof rc);
    int ok = failure_keys(b, &fb) == 0 && failure_keys(c, &fc) == 0 &&
             retained_keys(b, &rb) == 0 && retained_keys(c, &rc) == 0;
    if (ok) {
        report_failures(d, &fb, &fc);
        report_retained(d, &rb, &rc);
        report_growth(d);
    }
    keys_free(&fb);
    keys_free(&fc);
    keys_free(&rb);
    keys_free(&rc);
    return ok ? 0 : -1;
}

int rp_diff(const rp_run *base, const rp_run *cur, FILE *f, const rp_options *o)
{
    dctx d;
    memset(&d, 0, sizeof d);
    d.f = f;
    d.color = o && o->color;
    size_t nb = base->n;
    const rp_scenario **idx = al_malloc((nb ? nb : 1) * sizeof *idx, AL_K_REPORT, "rp_diff");
    uint8_t *seen = al_malloc(nb ? nb : 1, AL_K_REPORT, "rp_diff");
    int rc = -1;
    if (!idx || !seen) {
        er_set(ER_OOM, "out of memory comparing reports");
        goto out;
    }
    memset(seen, 0, nb ? nb : 1);
    for (size_t i = 0; i < nb; i++)
        idx[i] = &base->scenarios[i];
    qsort((void *)idx, nb, sizeof *idx, cmp_scn);
    fprintf(f, "fakegc diff: %zu scenarios in base, %zu now\n", base->n, cur->n);
    for (size_t i = 0; i < cur->n; i++) {
        d.c = &cur->scenarios[i];
        const rp_scenario *key = d.c;
        const rp_scenario **hit = bsearch(&key, (void *)idx, nb, sizeof *idx, cmp_scn);
        d.b = hit ? *hit : NULL;
        if (hit)
            seen[hit - idx] = 1;
        if (diff_pair(&d) != 0)
            goto out;
    }
    for (size_t i = 0; i < nb; i++) {
        if (seen[i])
            continue;
        d.b = NULL;
        d.c = idx[i];
        d.header = 1;
        fprintf(f, "%s: gone (was %s)\n", fname(idx[i]), rp_status_name(idx[i]->status));
        d.regressions++;   /* a partial run is not a clean one */
    }
    if (cur->n == 0) {
        fprintf(f, "regression: the new report ran no scenarios\n");
        d.regressions++;
    }
    if (cur->interrupted) {
        fprintf(f, "regression: the new report is partial: interrupted by %s after %zu of %zu "
                "scenarios\n", cur->interrupted, cur->n, cur->planned);
        d.regressions++;
    }
    fprintf(f, "diff: %zu regression%s, %zu improvement%s\n", d.regressions,
            d.regressions == 1 ? "" : "s", d.improvements, d.improvements == 1 ? "" : "s");
    rc = d.regressions > 0;
out:
    if (idx)
        al_free((void *)idx, (nb ? nb : 1) * sizeof *idx, AL_K_REPORT);
    if (seen)
        al_free(seen, nb ? nb : 1, AL_K_REPORT);
    return rc;
}
