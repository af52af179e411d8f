/* rp_timeline.c - per-statement census series and their SVG chart. */
#include "report/rp_timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "alloc/al.h"
#include "esc/es.h"

static const size_t ARR = RP_TIMELINE_MAX * sizeof(uint64_t);
static const size_t LARR = RP_TIMELINE_MAX * sizeof(uint32_t);

int rp_timeline_begin(rp_timeline *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->stride = 1;
    t->name = al_strdup(name, AL_K_REPORT, "rp timeline name");
    t->stmt = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->objects = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->bytes = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->memo = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->line = al_malloc(LARR, AL_K_REPORT, "rp timeline");
    t->marks = al_calloc(RP_TIMELINE_LINES, 1, AL_K_REPORT, "rp timeline");
    t->ev = al_calloc(RP_TL_EVENT_MAX, sizeof *t->ev, AL_K_REPORT, "rp timeline");
    if (!t->name || !t->stmt || !t->objects || !t->bytes || !t->memo || !t->line || !t->marks || !t->ev) {
        rp_timeline_clear(t);
        return -1;
    }
    return 0;
}

static const size_t BARR = RP_TIMELINE_MAX;

static void free_prog(rp_timeline *t)
{
    al_free(t->pev, t->pev ? ARR : 0, AL_K_REPORT);
    al_free(t->pline, t->pline ? LARR : 0, AL_K_REPORT);
    al_free(t->pround, t->pround ? LARR : 0, AL_K_REPORT);
    al_free(t->pfile, t->pfile ? BARR : 0, AL_K_REPORT);
    t->pev = NULL, t->pline = t->pround = NULL, t->pfile = NULL;
}

/* The per-point program arrays, zeroed (the points before the first at()). */
static int alloc_prog(rp_timeline *t)
{
    t->pev = al_calloc(RP_TIMELINE_MAX, sizeof *t->pev, AL_K_REPORT, "rp timeline program");
    t->pline = al_calloc(RP_TIMELINE_MAX, sizeof *t->pline, AL_K_REPORT, "rp timeline program");
    t->pround = al_calloc(RP_TIMELINE_MAX, sizeof *t->pround, AL_K_REPORT, "rp timeline program");
    t->pfile = al_calloc(RP_TIMELINE_MAX, 1, AL_K_REPORT, "rp timeline program");
    if (t->pev && t->pline && t->pround && t->pfile)
        return 0;
    free_prog(t);
    return -1;
}

int rp_timeline_site(rp_timeline *t, const char *file, uint32_t line, uint32_t round,
                     uint64_t event)
{
    if (!t->pev && alloc_prog(t) < 0)
        return -1;
    size_t k = 0;
    while (k < t->npfiles && strncmp(t->pfiles[k], file, RP_TL_PFILE_LEN - 1) != 0)
        k++;
    if (k == t->npfiles && k < RP_TL_PFILES)
        snprintf(t->pfiles[t->npfiles++], RP_TL_PFILE_LEN, "%s", file);
    t->cur_pfile = (uint8_t)(k < RP_TL_PFILES ? k : RP_TL_PFILES - 1);
    t->cur_pline = line, t->cur_pround = round, t->cur_pev = event;
    return 0;
}

void rp_timeline_psite(const rp_timeline *t, size_t i, char *buf, size_t n)
{
    if (!t->pev || i >= t->n || !t->pev[i])
        snprintf(buf, n, "%s", "");
    else
        snprintf(buf, n, "%s:%u", t->pfiles[t->pfile[i]], t->pline[i]);
}

void rp_timeline_add(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes)
{
    rp_timeline_add_memo(t, line, objects, bytes, 0);
}

void rp_timeline_add_memo(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes,
                          uint64_t memo)
{
    uint64_t i = t->seen++;
    if (t->ev && line < RP_TIMELINE_LINES && (t->marks[line] & RP_TL_EVENTS)) {
        if (t->nev < RP_TL_EVENT_MAX) {
            /* field by field: a struct assignment may copy indeterminate
             * padding, which rp_timeline_save then writes out */
            rp_tl_event *e = &t->ev[t->nev++];
            e->stmt = i + 1, e->objects = objects, e->bytes = bytes;
            e->memo = memo, e->line = line;
            if (t->pev && t->cur_pev)
                e->pline = t->cur_pline, e->pfile = t->cur_pfile;
        }
        t->ev_seen++;
    }
    if (!t->stmt || i % t->stride != 0)
        return;
    if (t->n == RP_TIMELINE_MAX) {
        /* keep the even points, sample half as often from now on */
        for (size_t k = 0; k < RP_TIMELINE_MAX / 2; k++) {
            t->stmt[k] = t->stmt[2 * k];
            t->objects[k] = t->objects[2 * k];
            t->bytes[k] = t->bytes[2 * k];
            t->memo[k] = t->memo[2 * k];
            t->line[k] = t->line[2 * k];
            if (t->pev) {
                t->pev[k] = t->pev[2 * k], t->pline[k] = t->pline[2 * k];
                t->pround[k] = t->pround[2 * k], t->pfile[k] = t->pfile[2 * k];
            }
        }
        t->n = RP_TIMELINE_MAX / 2;
        t->stride *= 2;
        if (i % t->stride != 0)
            return;
    }
    t->stmt[t->n] = i + 1;
    t->objects[t->n] = objects;
    t->bytes[t->n] = bytes;
    t->memo[t->n] = memo;
    t->line[t->n] = line;
    if (t->pev) {
        t->pev[t->n] = t->cur_pev, t->pline[t->n] = t->cur_pline;
        t->pround[t->n] = t->cur_pround, t->pfile[t->n] = t->cur_pfile;
    }
    t->n++;
    if (objects > t->max_objects)
        t->max_objects = objects;
    if (bytes > t->max_bytes)
        t->max_bytes = bytes;
    if (memo > t->max_memo)
        t->max_memo = memo;
}

void rp_timeline_end(rp_timeline *t, int status, const rp_tl_fail *fails, size_t nfail)
{
    t->status = status;
    t->nfailed = (uint32_t)nfail;
    for (size_t i = 0; t->marks && i < nfail; i++)
        if (fails[i].line < RP_TIMELINE_LINES)
            t->marks[fails[i].line] |= RP_TL_FAIL;
    t->nfail = 0;
    for (size_t i = 0; i < nfail && t->nfail < RP_TL_FAILS; i++) {
        rp_tl_fail *k = &t->fail[t->nfail++];
        memset(k, 0, sizeof *k);   /* whole: rp_timeline_save writes it out */
        k->line = fails[i].line, k->prog_line = fails[i].prog_line;
        memcpy(k->prog_file, fails[i].prog_file, sizeof k->prog_file - 1);
    }
}

void rp_timeline_failed(rp_timeline *t, uint32_t line)
{
    if (t->nfailed_at == RP_TL_FAILS)
        return;
    rp_tl_event *e = &t->failed_at[t->nfailed_at++];
    memset(e, 0, sizeof *e);   /* whole: rp_timeline_save writes it out */
    e->stmt = t->seen + 1, e->line = line;
    if (t->pev && t->cur_pev)
        e->pline = t->cur_pline, e->pfile = t->cur_pfile;
}

void rp_timeline_mark_site(const rp_timeline *t, uint32_t line, int fail, const rp_tl_event *e,
                           char *buf, size_t n)
{
    for (size_t i = 0; fail && i < t->nfail; i++)
        if (t->fail[i].line == line && t->fail[i].prog_line && t->fail[i].prog_file[0]) {
            snprintf(buf, n, "%s:%u", t->fail[i].prog_file, t->fail[i].prog_line);
            return;
        }
    if (e && e->pline && t->pev && e->pfile < t->npfiles)
        snprintf(buf, n, "%s:%u", t->pfiles[e->pfile], e->pline);
    else
        snprintf(buf, n, "%s", "");
}

void rp_timeline_clear(rp_timeline *t)
{
    if (t->name)
        al_free(t->name, strlen(t->name) + 1, AL_K_REPORT);
    al_free(t->stmt, t->stmt ? ARR : 0, AL_K_REPORT);
    al_free(t->objects, t->objects ? ARR : 0, AL_K_REPORT);
    al_free(t->bytes, t->bytes ? ARR : 0, AL_K_REPORT);
    al_free(t->memo, t->memo ? ARR : 0, AL_K_REPORT);
    al_free(t->line, t->line ? LARR : 0, AL_K_REPORT);
    al_free(t->marks, t->marks ? RP_TIMELINE_LINES : 0, AL_K_REPORT);
    al_free(t->ev, t->ev ? RP_TL_EVENT_MAX * sizeof *t->ev : 0, AL_K_REPORT);
    free_prog(t);
    memset(t, 0, sizeof *t);
}

void rp_timeline_set_label(rp_timeline *t, uint32_t line, const char *s, size_t n)
{
    if (!t->marks || line >= RP_TIMELINE_LINES)
        return;
    t->marks[line] |= RP_TL_MARK;
    if (t->nlabel == RP_TL_LABELS || rp_timeline_label_of(t, line))
        return;
    rp_tl_label *l = &t->label[t->nlabel++];
    memset(l, 0, sizeof *l);   /* whole: rp_timeline_save writes it out */
    l->line = line;
    if (n >= sizeof l->text)
        n = sizeof l->text - 1;
    memcpy(l->text, s, n);
}

const char *rp_timeline_label_of(const rp_timeline *t, uint32_t line)
{
    for (size_t i = 0; i < t->nlabel; i++)
        if (t->label[i].line == line)
            return t->label[i].text;
    return NULL;
}

/* ---- the worker's hand-off ---- */

static const char TL_MAGIC[8] = "fgtl\0\0\0\4";

typedef struct tl_head {
    char magic[8];
    uint64_t n, seen, stride, max_objects, max_bytes, max_memo, name_len, nev, ev_seen, nlabel;
    uint64_t npfiles, cur_pev;   /* the program's (npfiles 0 and no arrays: none) */
    uint64_t nfail, nfailed_at;  /* fail[], failed_at[] kept */
    int32_t status;
    uint32_t nfailed;
} tl_head;

static int put_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int rp_timeline_save(int fd, const rp_timeline *t)
{
    tl_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TL_MAGIC, sizeof h.magic);
    h.n = t->n, h.seen = t->seen, h.stride = t->stride;
    h.max_objects = t->max_objects, h.max_bytes = t->max_bytes;
    h.max_memo = t->max_memo;
    h.nev = t->nev, h.ev_seen = t->ev_seen, h.nlabel = t->nlabel;
    h.name_len = t->name ? strlen(t->name) : 0;
    h.status = t->status, h.nfailed = t->nfailed, h.nfail = t->nfail;
    h.nfailed_at = t->nfailed_at;
    h.npfiles = t->pev ? t->npfiles : 0, h.cur_pev = t->pev ? t->cur_pev : 0;
    size_t n = t->n;
    if (!t->stmt || !t->marks || !t->ev)
        return -1;
    int bad = put_all(fd, &h, sizeof h) < 0 ||
              put_all(fd, t->name ? t->name : "", h.name_len) < 0 ||
              put_all(fd, t->stmt, n * sizeof *t->stmt) < 0 ||
              put_all(fd, t->objects, n * sizeof *t->objects) < 0 ||
              put_all(fd, t->bytes, n * sizeof *t->bytes) < 0 ||
              put_all(fd, t->memo, n * sizeof *t->memo) < 0 ||
              put_all(fd, t->line, n * sizeof *t->line) < 0 ||
              put_all(fd, t->marks, RP_TIMELINE_LINES) < 0 ||
              put_all(fd, t->ev, t->nev * sizeof *t->ev) < 0 ||
              put_all(fd, t->label, t->nlabel * sizeof *t->label) < 0 ||
              put_all(fd, t->fail, t->nfail * sizeof *t->fail) < 0 ||
              put_all(fd, t->failed_at, t->nfailed_at * sizeof *t->failed_at) < 0;
    if (!bad && t->pev && t->npfiles)
        bad = put_all(fd, t->pfiles, sizeof t->pfiles) < 0 ||
              put_all(fd, t->pev, n * sizeof *t->pev) < 0 ||
              put_all(fd, t->pline, n * sizeof *t->pline) < 0 ||
              put_all(fd, t->pround, n * sizeof *t->pround) < 0 ||
              put_all(fd, t->pfile, n) < 0;
    return bad ? -1 : 0;
}

/* The program's arrays after the events (rp_timeline_save). */
static int load_prog(FILE *f, rp_timeline *t, size_t n, const tl_head *h)
{
    if (h->npfiles > RP_TL_PFILES || alloc_prog(t) < 0 ||
        fread(t->pfiles, sizeof t->pfiles, 1, f) != 1 ||
        fread(t->pev, sizeof *t->pev, n, f) != n ||
        fread(t->pline, sizeof *t->pline, n, f) != n ||
        fread(t->pround, sizeof *t->pround, n, f) != n || fread(t->pfile, 1, n, f) != n)
        return -1;
    for (size_t k = 0; k < RP_TL_PFILES; k++)
        t->pfiles[k][RP_TL_PFILE_LEN - 1] = '\0';
    for (size_t i = 0; i < n; i++)
        if (t->pfile[i] >= h->npfiles)
            return -1;
    t->npfiles = h->npfiles, t->cur_pev = h->cur_pev;
    return 0;
}

int rp_timeline_load(FILE *f, rp_timeline *t)
{
    tl_head h;
    char name[4096];
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, TL_MAGIC, sizeof h.magic) != 0 ||
        h.n > RP_TIMELINE_MAX || h.name_len >= sizeof name || h.nev > RP_TL_EVENT_MAX ||
        h.nlabel > RP_TL_LABELS || h.nfail > RP_TL_FAILS || h.nfailed_at > RP_TL_FAILS ||
        fread(name, 1, h.name_len, f) != h.name_len)
        return -1;
    name[h.name_len] = '\0';
    if (rp_timeline_begin(t, name) < 0)
        return -1;
    size_t n = h.n;
    if (fread(t->stmt, sizeof *t->stmt, n, f) != n ||
        fread(t->objects, sizeof *t->objects, n, f) != n ||
        fread(t->bytes, sizeof *t->bytes, n, f) != n ||
        fread(t->memo, sizeof *t->memo, n, f) != n ||
        fread(t->line, sizeof *t->line, n, f) != n ||
        fread(t->marks, 1, RP_TIMELINE_LINES, f) != RP_TIMELINE_LINES ||
        fread(t->ev, sizeof *t->ev, h.nev, f) != h.nev ||
        fread(t->label, sizeof *t->label, h.nlabel, f) != h.nlabel ||
        fread(t->fail, sizeof *t->fail, h.nfail, f) != h.nfail ||
        fread(t->failed_at, sizeof *t->failed_at, h.nfailed_at, f) != h.nfailed_at ||
        (h.npfiles && load_prog(f, t, n, &h) < 0)) {
        rp_timeline_clear(t);
        return -1;
    }
    t->n = n, t->seen = h.seen, t->stride = h.stride;
    t->max_objects = h.max_objects, t->max_bytes = h.max_bytes;
    t->max_memo = h.max_memo;
    t->nev = h.nev, t->ev_seen = h.ev_seen, t->nlabel = h.nlabel;
    for (size_t i = 0; i < t->nlabel; i++)
        t->label[i].text[RP_TL_LABEL_LEN - 1] = '\0';
    t->status = h.status, t->nfailed = h.nfailed, t->nfail = (uint32_t)h.nfail;
    t->nfailed_at = (uint32_t)h.nfailed_at;
    for (size_t i = 0; i < t->nfail; i++)
        t->fail[i].prog_file[RP_TL_PFILE_LEN - 1] = '\0';
    return 0;
}

static void xml_text(FILE *f, const char *s) { es_fputs(f, s, ES_XML); }

enum { W = 960, H = 230, PADL = 80, PADR = 86, PADT = 34, PADB = 50, COLS = W - PADL - PADR };
static const double PH = H - PADT - PADB;

/* A "nice" step for about `want` ticks up to max: 1, 2 or 5 x 10^k. */
static double nice_step(double max, int want)
{
    if (max <= 0)
        return 1;
    double raw = max / want, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void fmt_num(char *buf, size_t n, double v, int bytes)
{
    const char *unit = bytes ? " B" : "";
    if (v >= 1e6)
        snprintf(buf, n, "%.3gM%s", v / 1e6, bytes ? "B" : "");
    else if (v >= 1e4)
        snprintf(buf, n, "%.3gk%s", v / 1e3, bytes ? "B" : "");
    else
        snprintf(buf, n, "%.0f%s", v, unit);
}

/* A recording's chart is in the program's events, else in statements. */
static int in_events(const rp_timeline *t)
{
    return t->pev && t->cur_pev;
}

/* x of a statement count, or (in_events) of an event number. */
static double xpos(const rp_timeline *t, uint64_t v)
{
    uint64_t xmax = in_events(t) ? t->cur_pev : t->seen ? t->seen : 1;
    return PADL + COLS * (double)v / (double)xmax;
}

/* x of point i. */
static double xpt(const rp_timeline *t, size_t i)
{
    return xpos(t, in_events(t) ? t->pev[i] : t->stmt[i]);
}

static double ypos(double y0, uint64_t v, double top)
{
    return y0 + PADT + PH - (top > 0 ? PH * (double)v / top : 0);
}

/* The series as a line, or (more points than pixel columns) as each
 * column's min-max band plus its last value. */
static void series(FILE *f, const rp_timeline *t, const uint64_t *ys, double top, double y0,
                   const char *color)
{
    if (t->n <= (size_t)COLS) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
        for (size_t i = 0; i < t->n; i++)
            fprintf(f, "%.1f,%.1f ", xpt(t, i), ypos(y0, ys[i], top));
        fputs("\"/>\n", f);
        return;
    }
    uint64_t lo[COLS], hi[COLS], last[COLS];
    int used[COLS];
    memset(used, 0, sizeof used);
    for (size_t i = 0; i < t->n; i++) {
        int c = (int)(xpt(t, i) - PADL);
        c = c < 0 ? 0 : c >= COLS ? COLS - 1 : c;
        if (!used[c] || ys[i] < lo[c])
            lo[c] = ys[i];
        if (!used[c] || ys[i] > hi[c])
            hi[c] = ys[i];
        last[c] = ys[i];
        used[c] = 1;
    }
    fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.25\" stroke=\"none\" points=\"", color);
    for (int c = 0; c < COLS; c++)
        if (used[c])
            fprintf(f, "%d,%.1f ", PADL + c, ypos(y0, hi[c], top));
    for (int c = COLS - 1; c >= 0; c--)
        if (used[c])
            fprintf(f, "%d,%.1f ", PADL + c, ypos(y0, lo[c], top));
    fputs("\"/>\n", f);
    /* the band's upper edge: the peak around each pixel (the last value
     * would zigzag between the edges and paint a solid block) */
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"", color);
    for (int c = 0; c < COLS; c++)
        if (used[c])
            fprintf(f, "%d,%.1f ", PADL + c, ypos(y0, hi[c], top));
    fputs("\"/>\n", f);
    (void)last;
}

static void y_axis(FILE *f, double y0, double max, int right, const char *color,
                   const char *label, double *top)
{
    double step = nice_step(max, 4);
    *top = max > 0 ? ceil(max / step) * step : 1;
    int x = right ? W - PADR : PADL;
    for (double v = 0; v <= *top + step / 2; v += step) {
        char buf[32];
        fmt_num(buf, sizeof buf, v, right);
        double y = ypos(y0, (uint64_t)v, *top);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", x, y,
                right ? x + 4 : x - 4, y, color);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"%s\" text-anchor=\"%s\">%s</text>\n",
                right ? x + 6 : x - 6, y + 4, color, right ? "start" : "end", buf);
    }
    double ym = y0 + PADT + PH / 2;
    int lx = right ? W - 12 : 14;
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"%s\" text-anchor=\"middle\" "
               "transform=\"rotate(%d %d %.1f)\">%s</text>\n",
            lx, ym, color, right ? 90 : -90, lx, ym, label);
}

/* x ticks of a recording: the program's event numbers, and the program's
 * file:line (and round) of that event. */
static void x_axis_events(FILE *f, const rp_timeline *t, double y0)
{
    double step = nice_step((double)t->cur_pev, 8);
    if (step < 1)
        step = 1;
    double yb = y0 + PADT + PH;
    size_t i = 0;
    for (double v = 0; v <= (double)t->cur_pev + 0.5; v += step) {
        double x = xpos(t, (uint64_t)v);
        while (i < t->n && t->pev[i] < (uint64_t)v)
            i++;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", x,
                yb, x, yb + 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n", x,
                yb + 15, v);
        if (i < t->n && t->pev[i]) {
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\" "
                       "font-size=\"9\">L%u", x, yb + 26, t->pline[i]);
            if (t->pround[i])
                fprintf(f, " r%u", t->pround[i]);
            fputs("</text>\n", f);
        }
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">the program's "
               "events (a conversion, a mode, an op at one of its lines; Ln rN: its line and "
               "round; hover: where)</text>\n", PADL + COLS / 2, yb + 40);
}

/* Hover: one transparent strip per event (per pixel column at most), its
 * <title> the program's site, round, counts and the recording's line. */
static void event_titles(FILE *f, const rp_timeline *t, double y0)
{
    int last = -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = i;   /* the last point of this event */
        while (j + 1 < t->n && t->pev[j + 1] == t->pev[i])
            j++;
        double x0 = xpt(t, i), x1 = j + 1 < t->n ? xpt(t, j + 1) : PADL + COLS;
        if ((int)x0 == last || !t->pev[i]) {
            i = j;
            continue;
        }
        last = (int)x0;
        char site[96];
        rp_timeline_psite(t, j, site, sizeof site);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" "
                   "fill=\"transparent\"><title>event %" PRIu64 ": ", x0, y0 + PADT,
                x1 - x0 > 1 ? x1 - x0 : 1, PH, t->pev[j]);
        xml_text(f, site);
        if (t->pround[j])
            fprintf(f, ", round %u", t->pround[j]);
        fprintf(f, ": %" PRIu64 " live objects, %" PRIu64 " bytes (the recording's line %u)"
                   "</title></rect>\n", t->objects[j], t->bytes[j], t->line[j]);
        i = j;
    }
}

/* x ticks: statement numbers, and the source line executed there. */
static void x_axis(FILE *f, const rp_timeline *t, double y0)
{
    if (in_events(t)) {
        x_axis_events(f, t, y0);
        return;
    }
    double step = nice_step((double)(t->seen ? t->seen : 1), 8);
    if (step < 1)
        step = 1;
    double yb = y0 + PADT + PH;
    for (double v = 0; v <= (double)t->seen + 0.5; v += step) {
        double x = xpos(t, (uint64_t)v);
        uint32_t line = 0;
        for (size_t i = 0; i < t->n && t->stmt[i] <= (uint64_t)v; i++)
            line = t->line[i];
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", x,
                yb, x, yb + 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n", x,
                yb + 15, v);
        if (line)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\" "
                       "font-size=\"9\">L%u</text>\n", x, yb + 26, line);
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">statements "
               "executed (Ln: the source line of that statement)</text>\n",
            PADL + COLS / 2, yb + 40);
}

/* x of statement s: in a recording's program events, the event of the
 * last point at or before it (a mark makes no event of its own). */
static double x_of_stmt(const rp_timeline *t, uint64_t s)
{
    if (!in_events(t))
        return xpos(t, s);
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->stmt[mid] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? xpt(t, lo - 1) : PADL;
}

/* A failed expectation's red line and dot; a recording's with its program
 * site written by the dot and, on hover, the recording's line too. */
static void fail_mark(FILE *f, const rp_timeline *t, uint32_t line, const rp_tl_event *e,
                      double x, double yt, double yb)
{
    char site[96];
    rp_timeline_mark_site(t, line, 1, e, site, sizeof site);
    if (site[0]) {
        fputs("<g><title>failed expectation at ", f);
        xml_text(f, site);
        fprintf(f, " (the recording&apos;s line %u)</title>\n", line);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
               "stroke-width=\"1.5\" stroke-dasharray=\"3,2\"/>\n"
               "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#d62728\"/>\n",
            x, yt, x, yb, x, yt);
    if (!site[0])
        return;
    int left = x > PADL + COLS - 80;   /* near the right edge: to the left of it */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\" font-size=\"10\" stroke=\"white\" "
               "stroke-width=\"3\" paint-order=\"stroke\"%s>",
            left ? x - 5 : x + 5, yt + 22, left ? " text-anchor=\"end\"" : "");
    xml_text(f, site);
    fputs("</text></g>\n", f);
}

/* Marks at the statements of marked lines: failed expectations (red, full
 * height), del (grey tick at the bottom), gc() (green tick at the top). */
static void marks(FILE *f, const rp_timeline *t, double y0)
{
    if (!t->marks)
        return;
    double yt = y0 + PADT, yb = y0 + PADT + PH;
    int last_px[3] = {-1, -1, -1};
    /* a recording's failures where they ran (however sampled, whatever
     * the line), not at the points sampled on their lines */
    int ran = in_events(t) && t->nfailed_at;
    for (size_t i = 0; ran && i < t->nfailed_at; i++) {
        const rp_tl_event *e = &t->failed_at[i];
        double x = x_of_stmt(t, e->stmt);
        if ((int)x != last_px[0])
            fail_mark(f, t, e->line, e, x, yt, yb);
        last_px[0] = (int)x;
    }
    for (size_t i = 0; i < t->n; i++) {
        uint32_t l = t->line[i];
        uint8_t m = l < RP_TIMELINE_LINES ? t->marks[l] : 0;
        if (!m)
            continue;
        double x = xpt(t, i);
        int px = (int)x;
        if ((m & RP_TL_FAIL) && !ran && px != last_px[0]) {
            fail_mark(f, t, l, NULL, x, yt, yb);
            last_px[0] = px;
        }
        if ((m & RP_TL_DEL) && px != last_px[1]) {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                       "stroke-opacity=\"0.5\" stroke-width=\"1\"/>\n", x, yb, x, yb - 6);
            last_px[1] = px;
        }
        if ((m & RP_TL_GC) && px != last_px[2]) {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#2ca02c\" "
                       "stroke-width=\"2\"/>\n", x, yt, x, yt + 8);
            last_px[2] = px;
        }
    }
}

/* A program's mark("LABEL")s: a purple dashed line at each executed mark
 * (from the events: every one, whatever the sampling) with its label at
 * the top; labels closer than a label's width to the last are not
 * repeated. */
static void named_marks(FILE *f, const rp_timeline *t, double y0)
{
    double yt = y0 + PADT, yb = y0 + PADT + PH, last_label = -1e9;
    int last_px = -1;
    for (size_t i = 0; t->marks && i < t->nev; i++) {
        uint32_t l = t->ev[i].line;
        if (l >= RP_TIMELINE_LINES || !(t->marks[l] & RP_TL_MARK))
            continue;
        double x = x_of_stmt(t, t->ev[i].stmt);
        if ((int)x == last_px)
            continue;
        last_px = (int)x;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9467bd\" "
                   "stroke-width=\"1.5\" stroke-dasharray=\"6,3\"/>\n", x, yt, x, yb);
        const char *label = rp_timeline_label_of(t, l);
        if (!label || x - last_label < 60)
            continue;
        last_label = x;
        int left = x > PADL + COLS - 60;   /* near the right edge: to the left of it */
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#9467bd\" font-size=\"10\"%s>",
                left ? x - 3 : x + 3, yt + 10, left ? " text-anchor=\"end\"" : "");
        xml_text(f, label);
        fputs("</text>\n", f);
    }
}

int rp_write_timeline_svg(FILE *f, const rp_timeline *ts, size_t n)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", W, (n ? n : 1) * H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    for (size_t i = 0; i < n; i++) {
        const rp_timeline *t = &ts[i];
        double y0 = (double)(i * H);
        int failed = t->status == 1 || t->status == 2;   /* RP_FAIL, RP_ERROR */
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-weight=\"bold\"><tspan fill=\"%s\">%s"
                   "</tspan> ", PADL, y0 + 18, failed ? "#d62728" : "#2ca02c",
                t->status == 2 ? "ERROR" : failed ? "FAIL" : t->status == 3 ? "SKIP" : "PASS");
        xml_text(f, t->name ? t->name : "?");
        if (t->nfailed)
            fprintf(f, " - %u failed expectation%s (red)", t->nfailed, t->nfailed == 1 ? "" : "s");
        fprintf(f, "</text>\n");
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" fill=\"#666\" text-anchor=\"end\">%s"
                   "<tspan fill=\"#555\">| del</tspan>  <tspan fill=\"#2ca02c\">| gc()</tspan>"
                   "%s</text>\n", W - PADR, y0 + 18,
                t->n > (size_t)COLS ? "band: min-max per pixel, line: its peak   " : "",
                t->nlabel ? "  <tspan fill=\"#9467bd\">| mark</tspan>" : "");
        fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%.0f\" fill=\"none\" "
                   "stroke=\"#ccc\"/>\n", PADL, y0 + PADT, COLS, PH);
        double top_o, top_b;
        y_axis(f, y0, (double)t->max_objects, 0, "#1f77b4", "live objects", &top_o);
        y_axis(f, y0, (double)t->max_bytes, 1, "#ff7f0e", "live bytes", &top_b);
        x_axis(f, t, y0);
        series(f, t, t->bytes, top_b, y0, "#ff7f0e");
        series(f, t, t->objects, top_o, y0, "#1f77b4");
        marks(f, t, y0);
        if (in_events(t))
            event_titles(f, t, y0);
        named_marks(f, t, y0);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
