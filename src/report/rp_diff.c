/* rp_diff.c - compare two runs for a reviewer: per scenario (sorted by
 * file), the changes as items - `+` what is new in the new run, `-` what is
 * gone, `~` notes - status first, new failures in line order, newly
 * retained groups largest retained first, each with the retention path of
 * its dominating object; written as text, JSON (fakegc-diff/2) or Markdown.
 * Matching is by value, never by object id (ids differ between runs):
 * failures by their text, retained records by kind + creating site + path
 * shape. */
#include "report/rp_diff.h"
#include "report/rp_int.h"
#include "report/rp_jw.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc/al.h"
#include "core/er.h"

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
    if (al_reserve(p, cap, need, elem, 64, AL_K_REPORT, "rp_diff") != 0)
        return er_set(ER_OOM, "out of memory comparing reports");
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

/* --- items --------------------------------------------------------------------- */

/* One change in one scenario. sign: '+' new in the new run (a regression
 * when `regression`), '-' gone from it (an improvement), '~' a note. */
typedef struct ditem {
    char sign;
    int regression, improvement;
    const char *kind;            /* "new-failure", "newly-retained", ... */
    uint32_t line;               /* the failure's or creating line, 0 none */
    uint64_t order;              /* within the block: smaller first */
    unsigned sub;                /* then this: a leak's line (0) before its
                                    groups (1) */
    uint64_t count, bytes, retained_bytes;
    const hp_retained *rec;      /* the retention path shown: the dominator */
    char text[768];
} ditem;

typedef struct dblock {
    const rp_scenario *b, *c;    /* c NULL: missing from the new run */
    ditem *v;
    size_t n, cap;
    size_t regressions, improvements;
} dblock;

typedef struct dctx {
    const rp_diff_options *o;
    dblock *blk;                 /* the block being filled */
    int oom;
} dctx;

static const char *fname(const rp_scenario *s) { return s && s->file ? s->file : "?"; }

static ditem *add(dctx *d, char sign, const char *kind, int regression, uint64_t order,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static ditem *add(dctx *d, char sign, const char *kind, int regression, uint64_t order,
                  const char *fmt, ...)
{
    dblock *b = d->blk;
    if (reserve((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v) != 0) {
        d->oom = 1;
        return NULL;
    }
    ditem *it = &b->v[b->n++];
    memset(it, 0, sizeof *it);
    it->sign = sign;
    it->kind = kind;
    it->regression = regression;
    it->improvement = sign == '-';
    it->order = order;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->text, sizeof it->text, fmt, ap);
    va_end(ap);
    b->regressions += regression;
    b->improvements += it->improvement;
    return it;
}

/* Items in a block: status first, then new failures in line order, then
 * retention by retained size (the dominating group first), then the rest. */
enum { ORD_STATUS = 0, ORD_FAILURE = 1ull << 40, ORD_RETAINED = 2ull << 40,
       ORD_GROWTH = 3ull << 40, ORD_NOTE = 4ull << 40 };

static int cmp_item(const void *a, const void *b)
{
    const ditem *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->sub < y->sub ? -1 : x->sub > y->sub;
}

/* The item a sorted key came from. */
static const void *what_of(const keys *k, const char *key)
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

/* Is a the better object to name than b: the more unexpected holder
 * (hp_holder_tier: a memo, a finalizer, a pending list, lost), then the
 * larger retained size? */
static int culprit_before(const hp_retained *a, const hp_retained *b)
{
    int ta = hp_holder_tier(a->holder), tb = hp_holder_tier(b->holder);
    if (ta != tb)
        return ta < tb;
    return a->retained_bytes > b->retained_bytes;
}

/* The object a failure names: the culprit first, not the biggest a
 * variable holds on purpose. */
static const hp_retained *dominator(const hp_retained *v, size_t n)
{
    const hp_retained *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (!best || culprit_before(&v[i], best))
            best = &v[i];
    return best;
}

/* Where a failure is: "line 22", or a recording's in the program's words,
 * "prog.py:13 (the recording's line 22)". */
static void failure_at(const rp_failure *x, char *buf, size_t n)
{
    if (!x->prog_file)
        snprintf(buf, n, "line %u", x->line);
    else if (x->line)
        snprintf(buf, n, "%s:%u (the recording's line %u)", x->prog_file, x->prog_line, x->line);
    else
        snprintf(buf, n, "%s:%u", x->prog_file, x->prog_line);
}

static void diff_failures(dctx *d, const keys *kb, const keys *kc)
{
    size_t i = 0, j = 0;
    while (i < kb->n || j < kc->n) {
        int c = i >= kb->n ? 1 : j >= kc->n ? -1 : strcmp(kb->sorted[i], kc->sorted[j]);
        const char *t = c <= 0 ? kb->sorted[i] : kc->sorted[j];
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
        if (nc > nb) {
            const rp_failure *x = what_of(kc, kc->sorted[first_c]);
            char times[48] = "";
            if (nc - nb > 1 || nb)
                snprintf(times, sizeof times, "  (%zu times, base %zu)", nc, nb);
            char at[300];
            failure_at(x, at, sizeof at);
            ditem *it = add(d, '+', "new-failure", 1, ORD_FAILURE + x->line,
                            "new failure at %s: %s%s%s%s", at, x->text ? x->text : "",
                            x->actual ? "  actual: " : "", x->actual ? x->actual : "", times);
            if (it) {
                it->line = x->line;
                it->count = nc - nb;
                it->rec = dominator(x->objects, x->nobjects);
                if (it->rec) {
                    it->bytes = it->rec->bytes;
                    it->retained_bytes = it->rec->retained_bytes;
                }
            }
        } else {
            const rp_failure *x = what_of(kb, kb->sorted[i - 1]);
            char at[300];
            failure_at(x, at, sizeof at);
            ditem *it = add(d, '-', "fixed", 0, ORD_FAILURE + x->line, "fixed at %s: %s", at,
                            x->text ? x->text : "");
            if (it) {
                it->line = x->line;
                it->count = nb - nc;
            }
        }
    }
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

static void diff_retained(dctx *d, const keys *kb, const keys *kc)
{
    size_t i = 0, j = 0;
    while (i < kb->n || j < kc->n) {
        int c = i >= kb->n ? 1 : j >= kc->n ? -1 : strcmp(kb->sorted[i], kc->sorted[j]);
        const char *t = c <= 0 ? kb->sorted[i] : kc->sorted[j];
        size_t nb = 0, nc = 0;
        const hp_retained *dom = NULL;
        uint64_t bytes = 0;
        while (i < kb->n && strcmp(kb->sorted[i], t) == 0) {
            i++;
            nb++;
        }
        while (j < kc->n && strcmp(kc->sorted[j], t) == 0) {
            const hp_retained *r = what_of(kc, kc->sorted[j]);
            bytes += r->bytes;
            if (!dom || culprit_before(r, dom))
                dom = r;
            j++;
            nc++;
        }
        if (nc == nb)
            continue;
        if (nc > nb) {
            /* larger retained first: UINT32 range is plenty for the order */
            uint64_t rb = dom ? dom->retained_bytes : 0;
            uint64_t ord = ORD_RETAINED + ((1ull << 40) - 1 - (rb < (1ull << 40) ? rb : (1ull << 40) - 1));
            char b1[32], b2[32];
            rp_bytes(bytes, b1, sizeof b1);
            rp_bytes(rb, b2, sizeof b2);
            ditem *it = add(d, '+', "newly-retained", 1, ord,
                            "newly retained: %zu x %s (base %zu, now %zu), %s, the largest "
                            "retains %s", nc - nb, t, nb, nc, b1, b2);
            if (it) {
                it->count = nc - nb;
                it->bytes = bytes;
                it->retained_bytes = rb;
                it->rec = dom;
                it->line = dom ? dom->site.line : 0;
            }
        } else {
            ditem *it = add(d, '-', "no-longer-retained", 0, ORD_RETAINED + (1ull << 39),
                            "no longer retained: %zu x %s (base %zu, now %zu)", nb - nc, t, nb,
                            nc);
            if (it)
                it->count = nb - nc;
        }
    }
}

/* --- totals ---------------------------------------------------------------------- */

static uint64_t retained_bytes(const rp_scenario *s)
{
    uint64_t t = 0;
    for (size_t i = 0; s && i < s->nretained; i++)
        t += s->retained[i].bytes;
    return t;
}

static void diff_growth(dctx *d, const rp_scenario *b, const rp_scenario *c)
{
    size_t bn = b ? b->nretained : 0;
    uint64_t bb = retained_bytes(b), cb = retained_bytes(c);
    if (c->nretained > bn || cb > bb)
        add(d, '+', "retained", 1, ORD_GROWTH, "retained: %zu -> %zu objects, %llu -> %llu bytes",
            bn, c->nretained, (unsigned long long)bb, (unsigned long long)cb);
    else if (c->nretained < bn)
        add(d, '-', "retained", 0, ORD_GROWTH, "retained: %zu -> %zu objects, %llu -> %llu bytes",
            bn, c->nretained, (unsigned long long)bb, (unsigned long long)cb);
    uint64_t bl = b ? b->leaked_bytes : 0;
    if (c->leaked_bytes > bl)
        add(d, '+', "leaked", 1, ORD_GROWTH + 1, "leaked bytes: %llu -> %llu",
            (unsigned long long)bl, (unsigned long long)c->leaked_bytes);
    for (size_t i = 0; i < c->ncheckpoints; i++) {
        const rp_checkpoint *cp = &c->checkpoints[i], *bp = NULL;
        for (size_t k = 0; b && k < b->ncheckpoints && !bp; k++)
            if (b->checkpoints[k].name && cp->name &&
                strcmp(b->checkpoints[k].name, cp->name) == 0)
                bp = &b->checkpoints[k];
        if (bp && cp->growth != bp->growth)
            add(d, cp->growth > bp->growth ? '+' : '-', "checkpoint", cp->growth > bp->growth,
                ORD_GROWTH + 2 + i, "checkpoint \"%s\": growth %lld -> %lld", cp->name,
                (long long)bp->growth, (long long)cp->growth);
        else if (!bp && b && cp->growth != 0)
            add(d, '~', "checkpoint", 0, ORD_GROWTH + 2 + i,
                "checkpoint \"%s\" (new): growth %lld", cp->name ? cp->name : "?",
                (long long)cp->growth);
    }
    if (b && b->peak_bytes && c->peak_bytes) {
        double r = (double)c->peak_bytes / (double)b->peak_bytes;
        if (r > 1.1 || r < 0.9)
            add(d, '~', "peak-bytes", 0, ORD_NOTE, "peak bytes: %llu -> %llu (%+.0f%%)",
                (unsigned long long)b->peak_bytes, (unsigned long long)c->peak_bytes,
                (r - 1.0) * 100.0);
    }
}

/* --- a recorded program's verdict: its rows old -> new ------------------------------ */

/* The group of v matching g: class, category, program site and holder. */
static const rp_vgroup *vgroup_match(const rp_verdict *v, const rp_vgroup *g)
{
    char h[128], gh[128];
    rp_vgroup_holder(g, gh, sizeof gh);
    for (size_t i = 0; v && i < v->ngroups; i++) {
        const rp_vgroup *o = &v->groups[i];
        rp_vgroup_holder(o, h, sizeof h);
        if (o->cls == g->cls && o->cat == g->cat && o->line == g->line &&
            strcmp(o->file, g->file) == 0 && strcmp(h, gh) == 0 && o->suppressed == g->suppressed)
            return o;
    }
    return NULL;
}

/* "accumulating: 5 fake tensors made at prog.py:13, held by KEEP" */
static void vgroup_words(const rp_vgroup *g, uint64_t count, char *buf, size_t n)
{
    char site[200], h[128];
    rp_vgroup_site(g, site, sizeof site);
    rp_vgroup_holder(g, h, sizeof h);
    snprintf(buf, n, "%s: %llu %s made at %s, held by %s", hp_class_name(g->cls),
             (unsigned long long)count, fk_category_noun(g->cat, count), site, h);
}

/* The lead of v's leak that group g's is (rp_vgroup_same_leak), or
 * v->ngroups (none; v NULL: 0). */
static size_t leak_match(const rp_verdict *v, const rp_vgroup *g)
{
    for (size_t i = 0; v && i < v->ngroups; i++)
        if (rp_verdict_leak_of(v, i) == i && rp_vgroup_same_leak(&v->groups[i], g))
            return i;
    return v ? v->ngroups : 0;
}

/* A leak's line says what its groups' items count already: not counted
 * again among the regressions and improvements. */
static void uncounted(dctx *d, ditem *it)
{
    if (!it)
        return;
    d->blk->regressions -= it->regression;
    d->blk->improvements -= it->improvement;
    it->regression = it->improvement = 0;
}

/* Each leak by its one line (rp_vleak_summary), placed before its groups:
 * new, gone, or changed ("... (was: OLD)"); `+` when it grew, `-` when it
 * shrank or is gone, `~` else. */
static void diff_leaks(dctx *d, const rp_verdict *vb, const rp_verdict *vc)
{
    char now[400], was[400];
    for (size_t i = 0; vc && i < vc->ngroups; i++) {
        if (!rp_verdict_leak_line(vc, i, now, sizeof now))
            continue;
        size_t k = leak_match(vb, &vc->groups[i]);
        rp_vleak lc, lb = {0};
        rp_verdict_leak(vc, i, &lc);
        ditem *it;
        if (vb && k < vb->ngroups) {
            rp_verdict_leak_line(vb, k, was, sizeof was);
            if (strcmp(now, was) == 0)
                continue;
            rp_verdict_leak(vb, k, &lb);
            char sign = lc.total > lb.total ? '+' : lc.total < lb.total ? '-' : '~';
            it = add(d, sign, "leak", 0, ORD_FAILURE + 8 + i, "leak: %s (was: %s)", now, was);
        } else {
            it = add(d, '+', "leak", 0, ORD_FAILURE + 8 + i, "new leak: %s", now);
        }
        uncounted(d, it);
        if (it)
            it->count = lc.total, it->bytes = lc.bytes, it->line = vc->groups[i].line;
    }
    for (size_t k = 0; vb && k < vb->ngroups; k++) {
        if (!rp_verdict_leak_line(vb, k, was, sizeof was) ||
            (vc && leak_match(vc, &vb->groups[k]) < vc->ngroups))
            continue;
        ditem *it = add(d, '-', "leak", 0, ORD_FAILURE + 8 + vb->ngroups + k,
                        "leak gone: %s", was);
        uncounted(d, it);
        if (it)
            it->line = vb->groups[k].line;
    }
}

static void diff_verdict(dctx *d, const rp_scenario *b, const rp_scenario *c)
{
    const rp_verdict *vb = b ? b->verdict : NULL, *vc = c->verdict;
    if (!vb && !vc)
        return;
    char w[400];
    for (int k = 0; k < HP_CL_COUNT; k++) {   /* the class totals */
        uint64_t was = vb ? vb->count[k] : 0, now = vc ? vc->count[k] : 0;
        int fails = vc && (vc->fails_on & (1u << k));
        if (was != now)
            add(d, now > was ? '+' : '-', "verdict", now > was && fails, ORD_FAILURE + (uint64_t)k,
                "verdict: %s %llu -> %llu", hp_class_name((hp_class)k),
                (unsigned long long)was, (unsigned long long)now);
    }
    for (size_t i = 0; vc && i < vc->ngroups; i++) {   /* what now accumulates, where, by whom */
        const rp_vgroup *g = &vc->groups[i], *o = vgroup_match(vb, g);
        uint64_t was = o ? o->count : 0;
        if (g->suppressed || was == g->count)
            continue;
        int fails = (vc->fails_on & (1u << g->cls)) != 0;
        vgroup_words(g, g->count, w, sizeof w);
        ditem *it = add(d, g->count > was ? '+' : '-', "verdict-group", g->count > was && fails,
                        ORD_FAILURE + 8 + i, "%s (was %llu): %s", w, (unsigned long long)was,
                        g->path);
        if (it)
            it->count = g->count, it->bytes = g->bytes, it->line = g->line, it->sub = 1;
    }
    for (size_t i = 0; vb && i < vb->ngroups; i++) {   /* gone */
        const rp_vgroup *g = &vb->groups[i];
        if (g->suppressed || vgroup_match(vc, g))
            continue;
        vgroup_words(g, g->count, w, sizeof w);
        ditem *it = add(d, '-', "verdict-group", 0, ORD_FAILURE + 8 + vb->ngroups + i,
                        "%s (now none)", w);
        if (it)
            it->sub = 1;
    }
    diff_leaks(d, vb, vc);
}

/* --- scenarios -------------------------------------------------------------------- */

static int cmp_scn(const void *a, const void *b)
{
    const rp_scenario *x = *(const rp_scenario *const *)a, *y = *(const rp_scenario *const *)b;
    return strcmp(fname(x), fname(y));
}

static int bad(rp_status s) { return s == RP_FAIL || s == RP_ERROR; }

static int diff_pair(dctx *d, const rp_scenario *b, const rp_scenario *c)
{
    if (!b) {
        if (bad(c->status))
            add(d, '+', "status", 1, ORD_STATUS, "a new scenario that does not pass (%s)",
                rp_status_name(c->status));
        else
            add(d, '~', "status", 0, ORD_STATUS, "a new scenario (%s)", rp_status_name(c->status));
    } else if (b->status != c->status) {
        int reg = bad(c->status) && (!bad(b->status) || c->status == RP_ERROR);
        int imp = !bad(c->status) && bad(b->status);
        add(d, reg ? '+' : imp ? '-' : '~', "status", reg, ORD_STATUS, "status %s -> %s",
            rp_status_name(b->status), rp_status_name(c->status));
    }
    if (c->error && (!b || !b->error || strcmp(b->error, c->error) != 0))
        add(d, '~', "error", 0, ORD_STATUS + 1, "error: %s", c->error);
    keys fb, fc, rb, rc;
    memset(&fb, 0, sizeof fb);
    memset(&fc, 0, sizeof fc);
    memset(&rb, 0, sizeof rb);
    memset(&rc, 0, sizeof rc);
    int ok = failure_keys(b, &fb) == 0 && failure_keys(c, &fc) == 0 &&
             retained_keys(b, &rb) == 0 && retained_keys(c, &rc) == 0;
    if (ok) {
        diff_verdict(d, b, c);
        diff_failures(d, &fb, &fc);
        diff_retained(d, &rb, &rc);
        diff_growth(d, b, c);
    }
    keys_free(&fb);
    keys_free(&fc);
    keys_free(&rb);
    keys_free(&rc);
    return ok && !d->oom ? 0 : -1;
}

/* --- writers ---------------------------------------------------------------------- */

typedef struct dsum {
    size_t reg_scn, imp_scn, regressions, improvements, missing;
    char notes[6][256];
    size_t nnotes;
} dsum;

static void inject_str(const rp_run *r, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->ninject && used < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? "," : "", r->inject[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    if (!r->ninject)
        snprintf(buf, n, "none");
}

static void run_notes(const rp_run *b, const rp_run *c, dsum *s)
{
    const char *ba = b->allocator ? b->allocator : "libc", *ca = c->allocator ? c->allocator : "libc";
    if (strcmp(ba, ca) != 0)
        snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "allocator changed: %s -> %s", ba, ca);
    const char *bc = b->compat ? b->compat : "none", *cc = c->compat ? c->compat : "none";
    if (strcmp(bc, cc) != 0)
        snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "compat changed: %s -> %s", bc, cc);
    char bi[200], ci[200];
    inject_str(b, bi, sizeof bi);
    inject_str(c, ci, sizeof ci);
    if (strcmp(bi, ci) != 0)
        snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "inject changed: %s -> %s", bi, ci);
    /* a run that ran nothing, or stopped early, is not a clean one */
    if (c->n == 0) {
        snprintf(s->notes[s->nnotes++], sizeof s->notes[0],
                 "regression: the new report ran no scenarios");
        s->regressions++;
    }
    if (c->interrupted) {
        snprintf(s->notes[s->nnotes++], sizeof s->notes[0],
                 "regression: the new report is partial: interrupted by %s after %zu of %zu "
                 "scenarios", c->interrupted, c->n, c->planned);
        s->regressions++;
    }
}

static void colored(FILE *f, int color, char sign)
{
    const char *col = sign == '+' ? "\033[31m" : sign == '-' ? "\033[32m" : "";
    if (color && *col)
        fprintf(f, "%s%c\033[0m", col, sign);
    else
        fputc(sign, f);
}

static void path_text(FILE *f, const hp_retained *r, const char *sep)
{
    for (size_t i = 0; i < r->path_len; i++)
        fprintf(f, "%s%s", i ? sep : "", r->path[i]);
}

static const char *status_of(const rp_scenario *s) { return s ? rp_status_name(s->status) : "absent"; }

/* The holder of a named object as the run report says it. */
static const char *holder_words(const hp_retained *r)
{
    return r->reason == HP_REACHABLE ? rp_holder_phrase(r->holder) : hp_reason_name(r->reason);
}

static void write_text(FILE *f, const rp_run *base, const rp_run *cur, const dblock *bl,
                       size_t nb, const dsum *s, const rp_diff_options *o)
{
    int color = o && o->color;
    fprintf(f, "fakegc diff: %zu scenarios in base, %zu now\n", base->n, cur->n);
    for (size_t i = 0; i < s->nnotes; i++)
        fprintf(f, "note: %s\n", s->notes[i]);
    size_t limit = o && o->verbose ? (size_t)-1 : 40, notes_only = 0;
    for (size_t k = 0; k < nb; k++) {
        const dblock *b = &bl[k];
        if (!b->n)
            continue;
        if (!b->regressions && !b->improvements && !(o && o->verbose)) {
            notes_only++;
            continue;
        }
        fprintf(f, "\n%s: %s -> %s\n", fname(b->c ? b->c : b->b), status_of(b->b), status_of(b->c));
        for (size_t i = 0; i < b->n && i < limit; i++) {
            const ditem *it = &b->v[i];
            fputs("  ", f);
            colored(f, color, it->sign);
            fprintf(f, " %s\n", it->text);
            if (it->rec && it->rec->path_len) {
                char rb[32];
                rp_bytes(it->rec->retained_bytes, rb, sizeof rb);
                fprintf(f, "      %s#%llu retains %s, %s: ", obj_kind_name(it->rec->kind),
                        (unsigned long long)it->rec->id, rb, holder_words(it->rec));
                path_text(f, it->rec, " -> ");
                fputc('\n', f);
            }
        }
        if (b->n > limit)
            fprintf(f, "  ... and %zu more (-v lists them)\n", b->n - limit);
    }
    if (notes_only)
        fprintf(f, "\n%zu more scenario%s with notes only (peak bytes, a new passing "
                "scenario; -v lists them)\n", notes_only, notes_only == 1 ? "" : "s");
    fprintf(f, "\ndiff: %zu scenario%s regressed (%zu item%s), %zu improved (%zu item%s)",
            s->reg_scn, s->reg_scn == 1 ? "" : "s", s->regressions,
            s->regressions == 1 ? "" : "s", s->imp_scn, s->improvements,
            s->improvements == 1 ? "" : "s");
    if (s->missing)
        fprintf(f, ", %zu missing from the new run%s", s->missing,
                o && o->allow_missing ? " (allowed)" : "");
    fputc('\n', f);
}

static void md_cell(FILE *f, const char *t)
{
    for (; t && *t; t++) {
        if (*t == '|' || *t == '`' || *t == '*' || *t == '_' || *t == '<' || *t == '\\')
            fputc('\\', f);
        fputc(*t == '\n' ? ' ' : *t, f);
    }
}

enum { MD_BUDGET = 56000, MD_ITEMS = 30 };

/* One scenario's section: at most MD_ITEMS items, the rest counted. */
static void md_block(FILE *f, const dblock *b)
{
    fprintf(f, "\n### %s `", b->regressions ? ":x:" : ":white_check_mark:");
    fputs(fname(b->c ? b->c : b->b), f);
    fprintf(f, "` %s → %s\n\n```diff\n", status_of(b->b), status_of(b->c));
    for (size_t i = 0; i < b->n && i < MD_ITEMS; i++) {
        const ditem *it = &b->v[i];
        fprintf(f, "%c %s\n", it->sign == '~' ? '!' : it->sign, it->text);
        if (it->rec && it->rec->path_len) {
            char rb[32];
            rp_bytes(it->rec->retained_bytes, rb, sizeof rb);
            fprintf(f, "%c     %s#%llu retains %s, %s, via ", it->sign == '~' ? '!' : it->sign,
                    obj_kind_name(it->rec->kind), (unsigned long long)it->rec->id, rb,
                    holder_words(it->rec));
            path_text(f, it->rec, " -> ");
            fputc('\n', f);
        }
    }
    if (b->n > MD_ITEMS)
        fprintf(f, "! ... and %zu more items (fakegc diff as text lists them)\n",
                b->n - MD_ITEMS);
    fputs("```\n", f);
}

static void write_markdown(FILE *f, const rp_run *base, const rp_run *cur, const dblock *bl,
                           size_t nb, const dsum *s)
{
    fprintf(f, "## fakegc diff: %zu scenario%s regressed, %zu improved\n\n", s->reg_scn,
            s->reg_scn == 1 ? "" : "s", s->imp_scn);
    fprintf(f, "| | base | new |\n|---|---|---|\n| scenarios | %zu | %zu |\n", base->n, cur->n);
    fprintf(f, "| passed | %u | %u |\n| failed | %u | %u |\n\n", base->passed, cur->passed,
            base->failed, cur->failed);
    fprintf(f, "%zu regression%s, %zu improvement%s, %zu missing from the new run.\n",
            s->regressions, s->regressions == 1 ? "" : "s", s->improvements,
            s->improvements == 1 ? "" : "s", s->missing);
    for (size_t i = 0; i < s->nnotes; i++) {
        fputs("\n> ", f);
        md_cell(f, s->notes[i]);
        fputc('\n', f);
    }
    /* regressions first; within MD_BUDGET characters, what is left out is
     * counted (a pull-request comment takes 65,536) */
    size_t used = 0, left = 0, left_reg = 0, left_items = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nb; k++) {
            const dblock *b = &bl[k];
            if (!b->n || (pass == 0) != (b->regressions > 0))
                continue;
            char *text = NULL;
            size_t len = 0;
            FILE *m = used < MD_BUDGET ? open_memstream(&text, &len) : NULL;
            if (m) {
                md_block(m, b);
                if (fclose(m) != 0) {
                    free(text);
                    text = NULL;
                }
            }
            if (text && used + len <= MD_BUDGET) {
                fwrite(text, 1, len, f);
                used += len;
            } else {
                left++;
                left_reg += b->regressions > 0;
                left_items += b->n;
            }
            free(text);
        }
    if (left)
        fprintf(f, "\n**%zu more scenario%s left out** (%zu of them regressed, %zu items) to "
                "keep this under %d characters: `fakegc diff` as text or `--format json` "
                "lists every one.\n", left, left == 1 ? "" : "s", left_reg, left_items,
                MD_BUDGET + 2000);
}

/* Members k[i]: v[i] for i < n, each after ", ". */
static void json_u64s(rp_jw *w, const char *const *k, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rp_jw_key(w, ", ", k[i]);
        rp_jw_u64(w, v[i]);
    }
}

static void json_side(rp_jw *w, const char *sep, const char *name, const rp_run *r)
{
    rp_jw_key(w, sep, name);
    rp_jw_key(w, "{", "scenarios"); rp_jw_u64(w, r->n);
    json_u64s(w, (const char *const[]){"passed", "failed"},
              (const uint64_t[]){r->passed, r->failed}, 2);
    rp_jw_key(w, ", ", "allocator"); rp_jw_str(w, r->allocator);
    rp_jw_key(w, ", ", "compat"); rp_jw_str(w, r->compat);
    rp_jw_key(w, ", ", "inject"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < r->ninject; i++) {
        rp_jw_raw(w, i ? ", " : "");
        rp_jw_str(w, r->inject[i]);
    }
    rp_jw_raw(w, "]}");
}

static void json_item(rp_jw *w, const ditem *it, int first)
{
    char sign[2] = {it->sign, '\0'};
    rp_jw_key(w, first ? "\n      {" : ",\n      {", "sign"); rp_jw_str(w, sign);
    rp_jw_key(w, ", ", "kind"); rp_jw_str(w, it->kind);
    rp_jw_key(w, ", ", "regression"); rp_jw_bool(w, it->regression);
    json_u64s(w, (const char *const[]){"line", "count", "bytes", "retained_bytes"},
              (const uint64_t[]){it->line, it->count, it->bytes, it->retained_bytes}, 4);
    rp_jw_key(w, ", ", "text"); rp_jw_str(w, it->text);
    rp_jw_key(w, ", ", "object");
    if (it->rec) {
        char id[48];
        snprintf(id, sizeof id, "%s#%llu", obj_kind_name(it->rec->kind),
                 (unsigned long long)it->rec->id);
        rp_jw_str(w, id);
    } else {
        rp_jw_raw(w, "null");
    }
    rp_jw_key(w, ", ", "holder"); rp_jw_str(w, it->rec ? hp_holder_name(it->rec->holder) : NULL);
    rp_jw_key(w, ", ", "path"); rp_jw_raw(w, "[");
    for (size_t p = 0; it->rec && p < it->rec->path_len; p++) {
        rp_jw_raw(w, p ? ", " : "");
        rp_jw_str(w, it->rec->path[p]);
    }
    rp_jw_raw(w, "]}");
}

/* 0, or -1 (out of memory, or f had a write error). */
static int write_json(FILE *f, const rp_run *base, const rp_run *cur, const dblock *bl,
                      size_t nb, const dsum *s, const rp_diff_options *o)
{
    rp_jw *w = rp_jw_open(f);
    if (!w)
        return -1;
    rp_jw_key(w, "{\n  ", "schema"); rp_jw_str(w, RP_SCHEMA_DIFF);
    rp_jw_key(w, ", ", "tool"); rp_jw_str(w, "fakegc");
    rp_jw_key(w, ", ", "command"); rp_jw_str(w, "diff");
    rp_jw_build(w, ",\n  ");
    json_side(w, ",\n  ", "base", base);
    json_side(w, ",\n  ", "new", cur);
    rp_jw_key(w, ",\n  ", "notes"); rp_jw_raw(w, "[");
    for (size_t i = 0; i < s->nnotes; i++) {
        rp_jw_raw(w, i ? ", " : "");
        rp_jw_str(w, s->notes[i]);
    }
    rp_jw_key(w, "],\n  ", "scenarios"); rp_jw_raw(w, "[");
    int first = 1;
    for (size_t k = 0; k < nb; k++) {
        const dblock *b = &bl[k];
        if (!b->n)
            continue;
        rp_jw_key(w, first ? "\n    {" : ",\n    {", "file");
        first = 0;
        rp_jw_str(w, fname(b->c ? b->c : b->b));
        rp_jw_key(w, ", ", "base_status"); rp_jw_str(w, status_of(b->b));
        rp_jw_key(w, ", ", "status"); rp_jw_str(w, status_of(b->c));
        rp_jw_key(w, ", ", "regressions"); rp_jw_u64(w, b->regressions);
        rp_jw_key(w, ", ", "improvements"); rp_jw_u64(w, b->improvements);
        rp_jw_key(w, ", ", "items"); rp_jw_raw(w, "[");
        for (size_t i = 0; i < b->n; i++)
            json_item(w, &b->v[i], i == 0);
        rp_jw_raw(w, "\n    ]}");
    }
    rp_jw_key(w, first ? "],\n  " : "\n  ],\n  ", "status");
    rp_jw_str(w, s->regressions ? "fail" : "pass");
    rp_jw_key(w, ",\n  ", "summary");
    rp_jw_key(w, "{", "regressed_scenarios"); rp_jw_u64(w, s->reg_scn);
    json_u64s(w, (const char *const[]){"improved_scenarios", "regressions", "improvements",
                                       "missing"},
              (const uint64_t[]){s->imp_scn, s->regressions, s->improvements, s->missing}, 4);
    rp_jw_key(w, ", ", "missing_allowed"); rp_jw_bool(w, o && o->allow_missing);
    rp_jw_raw(w, "}\n}\n");
    return rp_jw_close(w);
}

int rp_diff_write(const rp_run *base, const rp_run *cur, FILE *f, const rp_diff_options *o)
{
    dctx d;
    memset(&d, 0, sizeof d);
    d.o = o;
    size_t nb = base->n, nblk = cur->n + base->n;
    const rp_scenario **idx = al_malloc((nb ? nb : 1) * sizeof *idx, AL_K_REPORT, "rp_diff");
    uint8_t *seen = al_malloc(nb ? nb : 1, AL_K_REPORT, "rp_diff");
    dblock *bl = al_malloc((nblk ? nblk : 1) * sizeof *bl, AL_K_REPORT, "rp_diff");
    size_t n = 0;
    int rc = -1;
    dsum s;
    memset(&s, 0, sizeof s);
    if (!idx || !seen || !bl) {
        er_set(ER_OOM, "out of memory comparing reports");
        goto out;
    }
    memset(seen, 0, nb ? nb : 1);
    memset(bl, 0, (nblk ? nblk : 1) * sizeof *bl);
    for (size_t i = 0; i < nb; i++)
        idx[i] = &base->scenarios[i];
    qsort((void *)idx, nb, sizeof *idx, cmp_scn);
    for (size_t i = 0; i < cur->n; i++) {
        const rp_scenario *key = &cur->scenarios[i];
        const rp_scenario **hit = bsearch(&key, (void *)idx, nb, sizeof *idx, cmp_scn);
        if (hit)
            seen[hit - idx] = 1;
        d.blk = &bl[n++];
        d.blk->b = hit ? *hit : NULL;
        d.blk->c = key;
        if (diff_pair(&d, d.blk->b, key) != 0)
            goto out;
    }
    for (size_t i = 0; i < nb; i++) {
        if (seen[i])
            continue;
        d.blk = &bl[n++];
        d.blk->b = idx[i];
        s.missing++;
        int allowed = o && o->allow_missing;
        add(&d, allowed ? '~' : '+', "missing", !allowed, ORD_STATUS,
            "missing from the new run (was %s)%s", rp_status_name(idx[i]->status),
            allowed ? "" : "; --allow-missing accepts that");
        if (d.oom)
            goto out;
    }
    for (size_t k = 0; k < n; k++) {
        if (bl[k].n)   /* qsort(NULL, 0) is undefined */
            qsort(bl[k].v, bl[k].n, sizeof *bl[k].v, cmp_item);
        s.regressions += bl[k].regressions;
        s.improvements += bl[k].improvements;
        s.reg_scn += bl[k].regressions > 0;
        s.imp_scn += bl[k].regressions == 0 && bl[k].improvements > 0;
    }
    run_notes(base, cur, &s);
    switch (o ? o->format : RP_DIFF_TEXT) {
    case RP_DIFF_JSON:
        if (write_json(f, base, cur, bl, n, &s, o) != 0 && er_kind_get() == ER_OOM)
            goto out;
        break;
    case RP_DIFF_MARKDOWN: write_markdown(f, base, cur, bl, n, &s); break;
    default: write_text(f, base, cur, bl, n, &s, o); break;
    }
    rc = s.regressions > 0;
out:
    for (size_t k = 0; bl && k < n; k++)
        if (bl[k].v)
            al_free(bl[k].v, bl[k].cap * sizeof *bl[k].v, AL_K_REPORT);
    if (bl)
        al_free(bl, (nblk ? nblk : 1) * sizeof *bl, AL_K_REPORT);
    if (idx)
        al_free((void *)idx, (nb ? nb : 1) * sizeof *idx, AL_K_REPORT);
    if (seen)
        al_free(seen, nb ? nb : 1, AL_K_REPORT);
    return rc;
}

int rp_diff(const rp_run *base, const rp_run *cur, FILE *f, const rp_options *o)
{
    rp_diff_options d;
    memset(&d, 0, sizeof d);
    d.color = o && o->color;
    d.verbose = o && o->verbose;
    return rp_diff_write(base, cur, f, &d);
}

int rp_run_view(const rp_run *in, int (*keep)(const char *file, void *ctx), void *ctx,
                rp_run *view)
{
    *view = *in;
    view->owned = NULL;
    view->n = view->passed = view->failed = view->skipped = view->errors = 0;
    view->scenarios = in->n ? al_malloc(in->n * sizeof *view->scenarios, AL_K_REPORT,
                                        "rp_run_view")
                            : NULL;
    if (in->n && !view->scenarios) {
        er_set(ER_OOM, "out of memory selecting scenarios");
        return -1;
    }
    for (size_t i = 0; i < in->n; i++) {
        const rp_scenario *sc = &in->scenarios[i];
        if (!keep(fname(sc), ctx))
            continue;
        view->scenarios[view->n++] = *sc;
        view->passed += sc->status == RP_PASS;
        view->failed += bad(sc->status);
        view->errors += sc->status == RP_ERROR;
        view->skipped += sc->status == RP_SKIP;
    }
    if (view->n < in->n) {   /* exactly n, so that rp_run_view_free knows the size */
        rp_scenario *v = view->n ? al_realloc(view->scenarios, in->n * sizeof *v,
                                              view->n * sizeof *v, AL_K_REPORT, "rp_run_view")
                                 : NULL;
        if (view->n && !v) {
            al_free(view->scenarios, in->n * sizeof *v, AL_K_REPORT);
            view->scenarios = NULL;
            view->n = 0;
            er_set(ER_OOM, "out of memory selecting scenarios");
            return -1;
        }
        if (!view->n)
            al_free(view->scenarios, in->n * sizeof *v, AL_K_REPORT);
        view->scenarios = v;
    }
    return 0;
}

void rp_run_view_free(rp_run *view)
{
    if (view->scenarios)
        al_free(view->scenarios, view->n * sizeof *view->scenarios, AL_K_REPORT);
    view->scenarios = NULL;
    view->n = 0;
}

/* ---- reading the two reports (rp_diff.h) ---- */

/* Is path a report that its run did not finish: a regular file we can
 * read that is empty or starts as a JSON object (cut off, or missing what a
 * report has)? Not so for one we cannot read or that is not JSON at all. */
static int unfinished_report(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f)
        return 0;
    int ch = ' ';
    while (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r')
        ch = fgetc(f);
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    fclose(f);
    return regular && (ch == EOF || ch == '{');
}

int rp_diff_read(const char *base, const char *cur, rp_run runs[2], int *nread, char *err,
                 size_t n)
{
    const char *files[2] = {base, cur};
    for (int k = 0; k < 2; k++) {
        err[0] = '\0';
        if (rp_read_json(files[k], &runs[k], err, n) == 0) {
            ++*nread;
            continue;
        }
        if (er_kind_get() == ER_OOM) {
            if (!err[0])
                snprintf(err, n, "out of memory");
            return RP_DIFF_OOM;
        }
        if (k == 1 && unfinished_report(files[k])) {
            if (!err[0])
                snprintf(err, n, "unreadable");
            return RP_DIFF_UNFINISHED;
        }
        if (!err[0])
            snprintf(err, n, "cannot read the report");
        return RP_DIFF_UNREADABLE;
    }
    return RP_DIFF_READ;
}
