/* rp_timeline.c - per-statement census series and their SVG chart. */
#include "report/rp_timeline.h"

#include <string.h>

#include "alloc/al.h"

static const size_t ARR = RP_TIMELINE_MAX * sizeof(uint64_t);

int rp_timeline_begin(rp_timeline *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->stride = 1;
    t->name = al_strdup(name, AL_K_REPORT, "rp timeline name");
    t->stmt = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->objects = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    t->bytes = al_malloc(ARR, AL_K_REPORT, "rp timeline");
    if (!t->name || !t->stmt || !t->objects || !t->bytes) {
        rp_timeline_clear(t);
        return -1;
    }
    return 0;
}

void rp_timeline_add(rp_timeline *t, uint32_t line, uint64_t objects, uint64_t bytes)
{
    (void)line;
    uint64_t i = t->seen++;
    if (!t->stmt || i % t->stride != 0)
        return;
    if (t->n == RP_TIMELINE_MAX) {
        /* keep the even points, sample half as often from now on */
        for (size_t k = 0; k < RP_TIMELINE_MAX / 2; k++) {
            t->stmt[k] = t->stmt[2 * k];
            t->objects[k] = t->objects[2 * k];
            t->bytes[k] = t->bytes[2 * k];
        }
        t->n = RP_TIMELINE_MAX / 2;
        t->stride *= 2;
        if (i % t->stride != 0)
            return;
    }
    t->stmt[t->n] = i + 1;
    t->objects[t->n] = objects;
    t->bytes[t->n] = bytes;
    t->n++;
    if (objects > t->max_objects)
        t->max_objects = objects;
    if (bytes > t->max_bytes)
        t->max_bytes = bytes;
}

void rp_timeline_clear(rp_timeline *t)
{
    if (t->name)
        al_free(t->name, strlen(t->name) + 1, AL_K_REPORT);
    al_free(t->stmt, t->stmt ? ARR : 0, AL_K_REPORT);
    al_free(t->objects, t->objects ? ARR : 0, AL_K_REPORT);
    al_free(t->bytes, t->bytes ? ARR : 0, AL_K_REPORT);
    memset(t, 0, sizeof *t);
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

enum { W = 900, H = 170, PADL = 70, PADR = 70, PADT = 28, PADB = 22 };

static void polyline(FILE *f, const rp_timeline *t, const uint64_t *ys, uint64_t ymax,
                     double y0, const char *color)
{
    uint64_t xmax = t->seen ? t->seen : 1;
    double pw = W - PADL - PADR, ph = H - PADT - PADB;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    for (size_t i = 0; i < t->n; i++) {
        double x = PADL + pw * (double)t->stmt[i] / (double)xmax;
        double y = y0 + PADT + ph - (ymax ? ph * (double)ys[i] / (double)ymax : 0);
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    fputs("\"/>\n", f);
}

int rp_write_timeline_svg(FILE *f, const rp_timeline *ts, size_t n)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n", W, (n ? n : 1) * H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    for (size_t i = 0; i < n; i++) {
        const rp_timeline *t = &ts[i];
        double y0 = (double)(i * H);
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-weight=\"bold\">", PADL, y0 + 16);
        xml_text(f, t->name ? t->name : "?");
        fprintf(f, "</text>\n");
        fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" "
                   "stroke=\"#ccc\"/>\n", PADL, y0 + PADT, W - PADL - PADR, H - PADT - PADB);
        fprintf(f, "<text x=\"4\" y=\"%.0f\" fill=\"#1f77b4\">%llu obj</text>\n",
                y0 + PADT + 10, (unsigned long long)t->max_objects);
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" fill=\"#ff7f0e\">%llu B</text>\n", W - PADR + 4,
                y0 + PADT + 10, (unsigned long long)t->max_bytes);
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" fill=\"#666\">statements executed: %llu"
                   " (live objects, blue; live bytes, orange)</text>\n",
                PADL, y0 + H - 6, (unsigned long long)t->seen);
        polyline(f, t, t->objects, t->max_objects, y0, "#1f77b4");
        polyline(f, t, t->bytes, t->max_bytes, y0, "#ff7f0e");
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
