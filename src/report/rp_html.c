/* rp_html.c - the run's page and the diff's page (rp_html.h). */
#include "report/rp_html.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "heap/hp_class.h"
#include "report/rp_int.h"

/* ---- output helpers ------------------------------------------------------ */

static void h_txt(FILE *f, const char *s)
{
    sk k = {f, SK_XML, 0, 0};
    sk_puts(&k, s);
}

static void h_bytes(FILE *f, uint64_t b)
{
    char buf[32];
    rp_bytes(b, buf, sizeof buf);
    fputs(buf, f);
}

static void h_kept(FILE *f, uint64_t kept, uint64_t of, const char *what)
{
    fprintf(f, "<p class=\"kept\">kept %" PRIu64 " of %" PRIu64 " %s</p>\n", kept, of, what);
}

static const char CSS[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 2em 3em;color:#222;max-width:1200px}"
    "h1{font-size:22px;margin:.6em 0 .2em}h2{border-bottom:2px solid #ccc;margin-top:1.6em}"
    "h3{font-size:15px;margin:1.2em 0 .3em}code,.path,pre{font-family:ui-monospace,monospace}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere}"
    ".v{padding:0 .4em;border-radius:3px;color:#fff}.pass{background:#2a7d2a}"
    ".fail{background:#c0392b}.error{background:#8e44ad}.skip{background:#888}"
    "nav a{margin-right:1em}table{border-collapse:collapse;margin:.3em 0}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "td.n,th.n{text-align:right}.kept{color:#666;font-size:12px;margin:.2em 0}"
    ".path{font-size:12px;color:#333}.ar{color:#888;margin:0 .3em}"
    ".weak{border-bottom:1px dashed #c00;color:#c00}.sim{color:#666}"
    "ul.tree{list-style:none;padding-left:1.2em;margin:0}ul.tree li{margin:1px 0}"
    "summary{cursor:pointer}.tn{font-family:ui-monospace,monospace;font-size:12px}"
    ".more{color:#666;font-size:12px}.tl{margin:1em 0}.tl svg{border:1px solid #ddd;"
    "background:#fcfcfc;cursor:crosshair;width:100%;max-width:960px}"
    ".readout{font-family:ui-monospace,monospace;font-size:12px;min-height:1.4em}"
    ".lg span{margin-right:1.2em;font-size:12px}.new{color:#c0392b}.gone{color:#2a7d2a}"
    ".verdict{border-left:4px solid #c0392b;padding:.1em .8em;background:#fdf6f5}"
    "li.vc.fails b{color:#c0392b}li.vc small{color:#666}"
    "ul.vleaks{font-family:ui-monospace,monospace;font-size:13px}li.vleak.fails{color:#c0392b}";

static const char JS[] =
    "(function(){\n"
    "function nums(s){return s?s.split(',').map(Number):[];}\n"
    "function hb(b){var u=['B','KiB','MiB','GiB','TiB'],i=0;"
    "while(b>=1024&&i<4){b/=1024;i++;}return (i?b.toFixed(1):b)+' '+u[i];}\n"
    "function sg(v){return (v>=0?'+':'')+v;}\n"
    "document.querySelectorAll('.tl').forEach(function(p){\n"
    " var d={s:nums(p.dataset.s),o:nums(p.dataset.o),b:nums(p.dataset.b),"
    "m:nums(p.dataset.m),l:nums(p.dataset.l)};\n"
    " var svg=p.querySelector('svg'),sel=p.querySelector('.sel'),"
    "out=p.querySelector('.readout');\n"
    " var n=d.s.length,X0=+svg.dataset.x0,W=+svg.dataset.w,down=null;\n"
    " function xOf(i){return X0+(n>1?i*W/(n-1):W/2);}\n"
    " function iOf(x){var i=Math.round((x-X0)*(n-1)/W);return Math.max(0,Math.min(n-1,i));}\n"
    " var P=p.dataset.p?p.dataset.p.split('|'):null,u=P?'event':'statement';\n"
    " if(P)d.s=nums(p.dataset.e);\n"
    " function at(i){return P?P[i]:'line '+d.l[i];}\n"
    " function one(i){return u+' '+d.s[i]+' ('+at(i)+'): '+d.o[i]+"
    "' objects, '+hb(d.b[i])+', '+d.m[i]+' memo entries';}\n"
    " function show(a,b){if(a>b){var t=a;a=b;b=t;}var x=xOf(a);\n"
    "  sel.setAttribute('x',a==b?x-1:x);sel.setAttribute('width',Math.max(2,xOf(b)-x));\n"
    "  sel.style.display='';p.dataset.selA=a;p.dataset.selB=b;\n"
    "  out.textContent=a==b?one(a):u+'s '+d.s[a]+'..'+d.s[b]+' ('+at(a)+'..'"
    "+(P?P[b]:d.l[b])+'): objects '+d.o[a]+' -> '+d.o[b]+' ('+sg(d.o[b]-d.o[a])+'), bytes '"
    "+hb(d.b[a])+' -> '+hb(d.b[b])+', memo entries '+d.m[a]+' -> '+d.m[b];}\n"
    " function px(e){var r=svg.getBoundingClientRect();"
    "return (e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;}\n"
    " p.querySelector('.peak').addEventListener('click',function(){var k=0;"
    "for(var i=1;i<n;i++)if(d.o[i]>d.o[k])k=i;show(k,k);p.scrollIntoView({block:'center'});});\n"
    " svg.addEventListener('mousedown',function(e){if(!n)return;down=iOf(px(e));show(down,down);"
    "e.preventDefault();});\n"
    " svg.addEventListener('mousemove',function(e){if(down!==null)show(down,iOf(px(e)));});\n"
    " window.addEventListener('mouseup',function(){down=null;});\n"
    "});\n"
    "})();\n";

static void h_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width\">\n<title>", f);
    h_txt(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head><body>\n", CSS);
}

static void h_tail(FILE *f)
{
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", JS);
}

static const char *status_class(const char *s)
{
    return strcmp(s, "pass") == 0 ? "pass" : strcmp(s, "skip") == 0 ? "skip"
           : strcmp(s, "error") == 0 ? "error" : "fail";
}

static void h_status(FILE *f, const char *s)
{
    char up[16];
    size_t i = 0;
    for (; s[i] && i < sizeof up - 1; i++)
        up[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    up[i] = '\0';
    fprintf(f, "<span class=\"v %s\">%s</span>", status_class(s), up);
}

/* ---- the scenarios shown, not passing first ------------------------------ */

static size_t pick_scenarios(const rp_run *run, size_t *idx, size_t cap)
{
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < run->n && k < cap; i++)
            if ((run->scenarios[i].status == RP_PASS || run->scenarios[i].status == RP_SKIP) ==
                (pass == 1))
                idx[k++] = i;
    return k;
}

/* A reported heap state: a failure's objects, or the teardown's. */
typedef struct h_state {
    uint32_t line;              /* 0: the teardown */
    const char *text;
    const hp_group *g; size_t ng;
    const hp_retained *ex; size_t nex;
    uint64_t total;
    const hp_top *top; size_t ntop;
    const rp_failure *fl;       /* the failure's (NULL: the teardown's) */
} h_state;

/* A failure's line on the page: a recording's in the program's words, its
 * own a detail ("prog.py:13 (the recording's line 22)"), else "line 22". */
static void h_failure_at(FILE *f, const rp_scenario *s, const rp_failure *fl, uint32_t line)
{
    if (!fl || !fl->prog_file) {
        fprintf(f, "line %u", line);
        return;
    }
    char at[300];
    rp_failure_site(s, fl, at, sizeof at);
    h_txt(f, at);
    if (fl->line)
        fprintf(f, " <small>(the recording&apos;s line %u)</small>", fl->line);
}

/* The failure of s at line (the first), or NULL. */
static const rp_failure *h_failure_of(const rp_scenario *s, uint32_t line)
{
    for (size_t i = 0; line && i < s->nfailures; i++)
        if (s->failures[i].line == line)
            return &s->failures[i];
    return NULL;
}

/* The failure holding failure i's groups: itself, or (read back from JSON,
 * where a failure with the same objects as an earlier one refers to it)
 * that earlier one. */
static const rp_failure *h_held(const rp_scenario *s, size_t i)
{
    long j = s->failures[i].same_as ? rp_failure_shares(s, i) : -1;
    return j >= 0 ? &s->failures[j] : &s->failures[i];
}

static size_t states_of(const rp_scenario *s, h_state *st, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nfailures && k < cap; i++) {
        const rp_failure *f = &s->failures[i], *g = h_held(s, i);
        if (g->ngroups)
            st[k++] = (h_state){f->line, f->text, g->groups, g->ngroups, g->objects,
                                g->nobjects, f->objects_total, g->top, g->ntop, f};
    }
    if (s->ngroups && k < cap)
        st[k++] = (h_state){0, "retained at teardown", s->groups, s->ngroups, s->retained,
                            s->nretained, s->retained_total ? s->retained_total : s->nretained,
                            s->top, s->ntop, NULL};
    return k;
}

static size_t states_count(const rp_scenario *s)
{
    size_t k = s->ngroups != 0;
    for (size_t i = 0; i < s->nfailures; i++)
        k += h_held(s, i)->ngroups != 0;
    return k;
}

static void state_sums(const h_state *st, uint64_t *bytes, uint64_t *ret)
{
    *bytes = *ret = 0;
    for (size_t i = 0; i < st->ng; i++) {
        *bytes += st->g[i].total_bytes;
        *ret += st->g[i].total_retained;
    }
}

/* A scenario's name on the page: the run's subject when it is the only
 * one (a recorded program's page names the program, not its .scn). */
static const char *h_name(const rp_run *run, const rp_scenario *s)
{
    return run->subject && run->n == 1 ? run->subject : s->file;
}

/* ---- summary ------------------------------------------------------------- */

static void h_failure_line(FILE *f, const rp_scenario *s, size_t i)
{
    const rp_failure *fl = &s->failures[i], *g = h_held(s, i);
    const char *head = i == 0 || s->failures[i - 1].kind != fl->kind
                           ? rp_fail_kind_heading(fl->kind) : NULL;
    if (head) {
        fputs("<li class=\"fkind\"><b>", f);
        h_txt(f, head);
        fputs("</b></li>\n", f);
    }
    if (fl->prog_file) {   /* a recording's: the program's line, its own a detail */
        char at[300];
        rp_failure_site(s, fl, at, sizeof at);
        fputs("<li><code>", f);
        h_txt(f, at);
        fputs("</code> ", f);
    } else {
        fprintf(f, "<li><code>%u</code> ", fl->line);
    }
    h_txt(f, fl->text);
    if (fl->prog_file && fl->line)
        fprintf(f, " <small>(the recording&apos;s line %u)</small>", fl->line);
    fputs(" &mdash; actual <code>", f);
    h_txt(f, fl->actual);
    fputs("</code>", f);
    if (g->ngroups) {
        h_state st = {0, 0, g->groups, g->ngroups, 0, 0, 0, 0, 0, NULL};
        uint64_t b, r;
        state_sums(&st, &b, &r);
        fprintf(f, " &mdash; %" PRIu64 " objects, ", fl->objects_total);
        h_bytes(f, b);
        fputs(", retaining ", f);
        h_bytes(f, r);
    } else if (fl->message && fl->message[0]) {
        fputs(" &mdash; ", f);
        h_txt(f, fl->message);
    }
    fputs("</li>\n", f);
}

/* One line per holder class (hp_holder: culprits first) of the
 * scenario's first reported state. */
static void h_classes(FILE *f, const rp_scenario *s)
{
    h_state st;
    if (states_of(s, &st, 1) == 0)
        return;
    uint64_t cnt[HP_HOLD_COUNT] = {0}, b[HP_HOLD_COUNT] = {0}, r[HP_HOLD_COUNT] = {0};
    for (size_t i = 0; i < st.ng; i++) {
        unsigned k = st.g[i].holder < HP_HOLD_COUNT ? st.g[i].holder : HP_HOLD_UNTRACED;
        cnt[k] += st.g[i].count;
        b[k] += st.g[i].total_bytes;
        r[k] += st.g[i].total_retained;
    }
    fputs("<p>Leak classes", f);
    if (st.line) {
        fputs(" (objects behind ", f);
        h_failure_at(f, s, st.fl, st.line);
        fputs(")", f);
    }
    fputs(":</p><ul>\n", f);
    static const char *const tier[] = {"culprit", "held by a variable", "in use"};
    for (unsigned k = 0; k < HP_HOLD_COUNT; k++) {
        if (!cnt[k])
            continue;
        int t = hp_holder_tier((hp_holder)k);
        fprintf(f, "<li class=\"cls\"><b>held by %s</b> <small>(%s)</small>: %" PRIu64
                " objects, ", hp_holder_name((hp_holder)k), tier[t >= 0 && t < 3 ? t : 1], cnt[k]);
        h_bytes(f, b[k]);
        fputs(", retaining ", f);
        h_bytes(f, r[k]);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

/* ---- a recorded program's verdict (rp_vgroup) ---------------------------- */

/* Distinct words of one field over a class's groups (of those the page
 * shows), at most 3: "KEEP, mode". */
static void h_distinct(FILE *f, const rp_verdict *v, int c,
                       void (*word)(const rp_vgroup *, char *, size_t))
{
    char seen[3][240], w[240];
    size_t n = 0, more = 0;
    for (size_t i = 0; i < v->ngroups && i < RP_VGROUPS; i++) {
        const rp_vgroup *g = &v->groups[i];
        if (g->cls != (hp_class)c || g->suppressed)
            continue;
        word(g, w, sizeof w);
        if (!w[0])
            continue;
        size_t k = 0;
        while (k < n && strcmp(seen[k], w) != 0)
            k++;
        if (k < n)
            continue;
        if (n == 3) {
            more++;
            continue;
        }
        snprintf(seen[n++], sizeof seen[0], "%s", w);
        fputs(n > 1 ? ", <code>" : "<code>", f);
        h_txt(f, w);
        fputs("</code>", f);
    }
    if (more)
        fprintf(f, " and %zu more", more);
}

/* The groups the page shows (the first RP_VGROUPS). */
static size_t h_vshown(const rp_verdict *v)
{
    return v->ngroups < RP_VGROUPS ? v->ngroups : RP_VGROUPS;
}

/* Each leak class's class on the page (HP_CLASSES' css column). */
#define CSS_(e, w, n, f, warns, d, css, ...) [HP_CL_##e] = css,
static const char *const cls_css[HP_CL_COUNT] = {HP_CLASSES(CSS_, )};
#undef CSS_

/* One line per leak (rp_vleak_summary), of the groups the page shows. */
static void h_vleaks(FILE *f, const rp_verdict *v)
{
    int open = 0;
    char line[400];
    for (size_t i = 0; i < h_vshown(v); i++) {
        if (!rp_verdict_leak_line(v, i, line, sizeof line))
            continue;
        if (!open++)
            fputs("<ul class=\"vleaks\">\n", f);
        int c = v->groups[i].cls < HP_CL_COUNT ? (int)v->groups[i].cls : 0;
        fprintf(f, "<li class=\"vleak %s%s\">", cls_css[c],
                (v->fails_on >> c) & 1 ? " fails" : "");
        h_txt(f, line);
        fputs("</li>\n", f);
    }
    if (open)
        fputs("</ul>\n", f);
}

/* Where the verdict was made, the program's words first. */
static void h_vwhere(FILE *f, const rp_verdict *v)
{
    char where[240];
    rp_verdict_where(v, where, sizeof where);
    h_txt(f, where);
    if (v->at_file[0])
        fprintf(f, " <small>(the recording's line %" PRIu32 ")</small>", v->line);
}

/* One line per leak class: count, bytes, holders and the program's lines. */
static void h_verdict(FILE *f, const rp_verdict *v)
{
    fputs("<div class=\"verdict\"><p><b>Verdict</b>", f);
    if (v->ngroups && v->groups[0].file[0]) {   /* the program: "prog.py" */
        fputs(" on <code>", f);
        h_txt(f, v->groups[0].file);
        fputs("</code>", f);
    }
    fputs(" (left behind ", f);
    h_vwhere(f, v);
    fputs(", after a full collection):", f);
    int any = 0;
    for (int c = 0; c < HP_CL_COUNT; c++)
        fprintf(f, "%s %" PRIu64 " %s", c ? "," : "", v->count[c], hp_class_name((hp_class)c));
    if (v->suppressed)
        fprintf(f, " (%" PRIu64 " suppressed)", v->suppressed);
    fputs("</p>\n<ul class=\"vclasses\">\n", f);
    for (int c = 0; c < HP_CL_COUNT; c++) {
        uint64_t cnt = 0, b = 0;
        for (size_t i = 0; i < h_vshown(v); i++)
            if (v->groups[i].cls == (hp_class)c && !v->groups[i].suppressed) {
                cnt += v->groups[i].count;
                b += v->groups[i].bytes;
            }
        if (!cnt)
            continue;
        any = 1;
        int fails = (v->fails_on >> c) & 1;
        fprintf(f, "<li class=\"vc %s%s\"><b>%s</b> <small>(%s)</small>: %" PRIu64
                " objects, ", cls_css[c], fails ? " fails" : "", hp_class_name((hp_class)c),
                fails ? "fails" : "reported", cnt);
        h_bytes(f, b);
        fputs("; held by ", f);
        h_distinct(f, v, c, rp_vgroup_holder);
        fputs("; made at ", f);
        h_distinct(f, v, c, rp_vgroup_site);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
    h_vleaks(f, v);
    if (!any && !v->ngroups)
        fputs("<p>Nothing was left behind.</p>\n", f);
    if (h_vshown(v) < v->ngroups)
        h_kept(f, h_vshown(v), v->ngroups, "verdict groups");
    fputs("</div>\n", f);
}

/* The verdict's groups in the Groups section: one row each, the culprits
 * (lost, accumulating) first. */
static void h_vgroups(FILE *f, const rp_verdict *v)
{
    fputs("<h4>the verdict: what the program left behind, by leak class</h4>\n"
          "<table class=\"groups vgroups\"><tr><th>class</th><th class=\"n\">count x kind</th>"
          "<th>made at (program line)</th><th>held by</th><th class=\"n\">in all</th>"
          "<th class=\"n\">retained</th><th>rounds</th></tr>\n", f);
    char buf[240];
    for (size_t i = 0; i < h_vshown(v); i++) {
        const rp_vgroup *g = &v->groups[i];
        fprintf(f, "<tr class=\"grp vgrp\"><td>%s%s</td><td class=\"n\">%" PRIu64 " x ",
                hp_class_name(g->cls), g->suppressed ? " (suppressed)" : "", g->count);
        h_txt(f, fk_category_noun(g->cat, g->count));
        fputs("</td><td class=\"site\">", f);
        rp_vgroup_site(g, buf, sizeof buf);
        h_txt(f, buf);
        rp_vgroup_marks(g, buf, sizeof buf);
        if (buf[0]) {
            fputs("<br><small class=\"vmark\">", f);
            h_txt(f, buf);
            fputs("</small>", f);
        }
        fputs("</td><td><b>", f);
        rp_vgroup_holder(g, buf, sizeof buf);
        h_txt(f, buf);
        fputs("</b></td><td class=\"n\">", f);
        h_bytes(f, g->bytes);
        fputs("</td><td class=\"n\">", f);
        h_bytes(f, g->retained);
        fputs("</td><td>", f);
        if (g->rounds)
            fprintf(f, "%u..%u of %u", g->first_round, g->last_round, g->rounds);
        fputs("</td></tr>\n<tr><td></td><td colspan=\"6\"><div class=\"path\">", f);
        h_txt(f, g->path);
        fputs("</div>", f);
        if (g->count > 1)
            fprintf(f, "<span class=\"sim\">+%" PRIu64 " similar</span>", g->count - 1);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    h_kept(f, h_vshown(v), v->ngroups, "verdict groups");
}

static uint64_t retained_of(const rp_scenario *s)
{
    return !s ? 0 : s->retained_total ? s->retained_total : s->nretained;
}

static void h_summary(FILE *f, const rp_run *run, const size_t *idx, size_t nidx)
{
    fputs("<section id=\"summary\"><h2>Summary</h2>\n<p id=\"verdict\">", f);
    size_t unjudged = 0;
    uint64_t left = 0;   /* what passing scenarios still report */
    for (size_t i = 0; i < run->n; i++) {
        unjudged += run->scenarios[i].stop_site != NULL;
        const rp_verdict *v = run->scenarios[i].verdict;
        left += retained_of(&run->scenarios[i]) + (v ? v->ngroups : 0);
    }
    /* a run whose only errors are recordings not judged says that */
    h_status(f, unjudged && unjudged == run->failed ? "not judged" : rp_run_status(run));
    fprintf(f, " %u passed, %u failed", run->passed, run->failed);
    if (run->skipped)
        fprintf(f, ", %u skipped", run->skipped);
    fprintf(f, " (%zu scenario%s)</p>\n", run->n, run->n == 1 ? "" : "s");
    if (run->stopped) {
        fputs("<p>Stopped before running: ", f);
        h_txt(f, run->stopped);
        fputs("</p>\n", f);
    }
    size_t shown = 0;
    for (size_t k = 0; k < nidx; k++) {
        const rp_scenario *s = &run->scenarios[idx[k]];
        if (s->status == RP_PASS || s->status == RP_SKIP)
            continue;
        shown++;
        fputs("<h3>", f);
        h_status(f, s->stop_site ? "not judged" : rp_status_name(s->status));
        fputs(" ", f);
        h_txt(f, h_name(run, s));
        fputs("</h3>\n", f);
        if (s->error) {
            fputs("<p>", f);
            h_txt(f, s->error);
            fputs("</p>\n", f);
        }
        if (s->verdict)
            h_verdict(f, s->verdict);
        size_t nf = s->nfailures < RP_HTML_FAILURES ? s->nfailures : RP_HTML_FAILURES;
        fputs("<ul class=\"fails\">\n", f);
        for (size_t i = 0; i < nf; i++)
            h_failure_line(f, s, i);
        fputs("</ul>\n", f);
        if (nf < s->nfailures)
            h_kept(f, nf, s->nfailures, "failing expectations");
        h_classes(f, s);
    }
    if (shown < (size_t)run->failed)
        h_kept(f, shown, run->failed, "scenarios that did not pass");
    if (!run->failed && !left)
        fputs("<p>Every scenario passed; nothing was retained.</p>\n", f);
    else if (!run->failed)
        fputs("<p>Every scenario passed; what is still retained is reported below (no class "
              "that fails).</p>\n", f);
    fputs("</section>\n", f);
}

/* ---- groups -------------------------------------------------------------- */

/* The holder a group's path shape ends in: "MetaConverter.tensor_memo". */
static void via_holder(const char *via, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!via)
        return;
    hp_path_it it = hp_path_walk(via), before = it;
    while (hp_path_next(&it) && !it.last)
        before = it;
    if (it.index > 0)   /* the element before the kind */
        snprintf(buf, n, "%.*s", (int)before.len, before.elem);
}

static int weak_reason(hp_reason r)
{
    return r == HP_STALE_MEMO || r == HP_PENDING_STORAGE;
}

/* The example's path: strong edges, then (a zombie) the weak edge dashed. */
static void h_path(FILE *f, const hp_retained *r)
{
    fputs("<div class=\"path\">", f);
    for (size_t i = 0; i < r->path_len; i++) {
        if (i) {
            int weak = i + 1 == r->path_len && weak_reason(r->reason);
            fputs(weak ? "<span class=\"ar weak\" title=\"weak edge: it does not retain\">"
                         "- - &gt;</span>"
                       : "<span class=\"ar\">&rarr;</span>", f);
        }
        fputs("<span class=\"el\">", f);
        h_txt(f, r->path[i]);
        fputs("</span>", f);
    }
    fputs("</div>", f);
}

static void h_group_row(FILE *f, const hp_group *g, const hp_retained *ex, size_t nex)
{
    char site[160], holder[160];
    rp_site(g->site, site, sizeof site);
    via_holder(g->via, holder, sizeof holder);
    fprintf(f, "<tr class=\"grp\"><td class=\"n\">%" PRIu64 " x %s</td><td>", g->count,
            obj_kind_name(g->kind));
    h_txt(f, g->type_name);
    fputs("</td><td>", f);
    h_txt(f, site);
    fputs("</td><td>", f);
    fprintf(f, "<b>%s</b> ", hp_holder_name(g->holder));
    h_txt(f, holder);
    fprintf(f, " <small>(%s)</small></td><td class=\"n\">", hp_reason_name(g->reason));
    h_bytes(f, g->bytes_each);
    fputs("</td><td class=\"n\">", f);
    h_bytes(f, g->total_bytes);
    fputs("</td><td class=\"n\">", f);
    h_bytes(f, g->total_retained);
    fputs("</td></tr>\n<tr><td></td><td colspan=\"6\">", f);
    if (g->example < nex)
        h_path(f, &ex[g->example]);
    else
        h_txt(f, g->via);
    if (g->count > 1)
        fprintf(f, "<span class=\"sim\">+%" PRIu64 " similar</span>", g->count - 1);
    fputs("</td></tr>\n", f);
}

static void h_state_groups(FILE *f, const rp_scenario *s, const h_state *st)
{
    fputs("<h4>", f);
    if (st->line) {
        h_failure_at(f, s, st->fl, st->line);
        fputs(": ", f);
    }
    h_txt(f, st->text);
    fprintf(f, " &mdash; %" PRIu64 " objects</h4>\n", st->total);
    for (size_t i = 0; i < st->ntop && i < 1; i++) {
        fprintf(f, "<p>Biggest retainer: <code>%s#%" PRIu64 "</code> (", obj_kind_name(st->top[i].kind),
                st->top[i].id);
        h_txt(f, st->top[i].type_name);
        fputs(") retains ", f);
        h_bytes(f, st->top[i].retained_bytes);
        fprintf(f, ", %" PRIu64 " objects: <span class=\"path\">", st->top[i].count);
        h_txt(f, st->top[i].path);
        fputs("</span></p>\n", f);
    }
    size_t n = st->ng < HP_SHOW_GROUPS ? st->ng : HP_SHOW_GROUPS;
    fputs("<table class=\"groups\"><tr><th class=\"n\">count x kind</th><th>type</th>"
          "<th>created</th><th>holder</th><th class=\"n\">each</th><th class=\"n\">in all</th>"
          "<th class=\"n\">retained</th></tr>\n", f);
    for (size_t i = 0; i < n; i++)
        h_group_row(f, &st->g[i], st->ex, st->nex);
    fputs("</table>\n", f);
    h_kept(f, n, st->ng, "groups");
    uint64_t ex = 0;
    for (size_t i = 0; i < n; i++)
        ex += st->g[i].count;
    fprintf(f, "<p class=\"kept\">examples: kept %zu of %" PRIu64 " (one path per group)</p>\n",
            n, ex);
}

static void h_groups(FILE *f, const rp_run *run, const size_t *idx, size_t nidx)
{
    fputs("<section id=\"groups\"><h2>Groups</h2>\n", f);
    int any = 0;
    for (size_t k = 0; k < nidx; k++) {
        const rp_scenario *s = &run->scenarios[idx[k]];
        h_state st[RP_HTML_STATES];
        size_t n = states_of(s, st, RP_HTML_STATES);
        size_t nvg = s->verdict ? s->verdict->ngroups : 0;
        if (!n && !nvg)
            continue;
        any = 1;
        fputs("<h3>", f);
        h_txt(f, h_name(run, s));
        fputs("</h3>\n", f);
        if (nvg)
            h_vgroups(f, s->verdict);
        for (size_t i = 0; i < n; i++)
            h_state_groups(f, s, &st[i]);
        size_t all = states_count(s);
        if (n < all)
            h_kept(f, n, all, "reported heap states");
    }
    if (!any)
        fputs("<p>No objects were reported.</p>\n", f);
    fputs("</section>\n", f);
}

/* ---- dominator tree ------------------------------------------------------ */

static void h_dnode_label(FILE *f, const hp_dnode *d)
{
    fputs("<span class=\"tn\">", f);
    if (!d->type_name) {
        fputs("<b>", f);
        h_txt(f, d->label);
        fprintf(f, "</b>: %" PRIu64 " objects", d->count);
    } else {
        fprintf(f, "%" PRIu64 " x %s (", d->count, obj_kind_name(d->kind));
        h_txt(f, d->type_name);
        fputs(")", f);
        if (d->label[0]) {
            fputs(d->zombie ? " weakly via " : " via ", f);
            h_txt(f, d->label);
        }
        fputs(", shallow ", f);
        h_bytes(f, d->shallow);
    }
    fputs(", retained <b>", f);
    h_bytes(f, d->retained);
    fputs("</b>", f);
    if (d->example[0]) {
        fputs(" <span class=\"more\">e.g. ", f);
        h_txt(f, d->example);
        fputs("</span>", f);
    }
    fputs("</span>", f);
}

/* Open: the top level, and down from it the child that keeps most of its
 * parent (at least half of its retained bytes), the way to the culprit. */
static int opened(const hp_dtree *t, uint32_t x, int depth)
{
    const hp_dnode *d = &t->nodes[x];
    if (depth == 0)
        return 1;
    if (depth > 8)
        return 0;
    const hp_dnode *p = &t->nodes[d->parent];
    for (size_t i = 0; i < t->n; i++)
        if (t->nodes[i].parent == d->parent && t->nodes[i].retained > d->retained)
            return 0;
    return d->retained >= p->retained / 2;
}

static void h_dnode(FILE *f, const hp_dtree *t, uint32_t x, int depth)
{
    const hp_dnode *d = &t->nodes[x];
    int kids = d->nkids || d->more_groups;
    fprintf(f, "<li class=\"dn\" data-depth=\"%d\">", depth);
    if (!kids) {
        h_dnode_label(f, d);
        if (!d->expanded && d->retained > d->shallow && d->type_name)
            fputs(" <span class=\"more\">(not expanded: past the node cap)</span>", f);
        fputs("</li>\n", f);
        return;
    }
    fprintf(f, "<details%s><summary>", opened(t, x, depth) ? " open" : "");
    h_dnode_label(f, d);
    fputs("</summary><ul class=\"tree\">\n", f);
    for (size_t i = 0; i < t->n; i++)
        if (t->nodes[i].parent == x)
            h_dnode(f, t, (uint32_t)i, depth + 1);
    if (d->more_groups) {
        fprintf(f, "<li class=\"more\">+%" PRIu64 " more groups: %" PRIu64 " objects, retained ",
                d->more_groups, d->more_count);
        h_bytes(f, d->more_retained);
        fputs("</li>\n", f);
    }
    fputs("</ul></details></li>\n", f);
}

static void h_tree(FILE *f, const rp_run *run, const size_t *idx, size_t nidx)
{
    fputs("<section id=\"tree\"><h2>Dominator tree</h2>\n", f);
    int any = 0;
    for (size_t k = 0; k < nidx; k++) {
        const rp_scenario *s = &run->scenarios[idx[k]];
        const hp_dtree *t = &s->dtree;
        if (!t->n)
            continue;
        any = 1;
        fputs("<h3>", f);
        h_txt(f, h_name(run, s));
        if (s->verdict && s->verdict->at_file[0] && s->dtree_line == s->verdict->line) {
            fputs(", the whole heap ", f);
            h_vwhere(f, s->verdict);
        } else if (s->dtree_line) {
            fputs(", the whole heap at ", f);
            h_failure_at(f, s, h_failure_of(s, s->dtree_line), s->dtree_line);
        }
        else
            fputs(", the whole heap at the teardown check", f);
        fprintf(f, "</h3>\n<p class=\"kept\">%" PRIu64 " objects; ranked by retained bytes; "
                "siblings of one type held through one edge label are one node</p>\n",
                t->objects);
        fputs("<ul class=\"tree\" id=\"tree-", f);
        fprintf(f, "%zu\">\n", idx[k]);
        for (size_t i = 0; i < t->n; i++)
            if (t->nodes[i].parent == HP_DT_TOP)
                h_dnode(f, t, (uint32_t)i, 0);
        fputs("</ul>\n", f);
        h_kept(f, t->n, t->groups_seen, "tree nodes (groups looked at)");
    }
    if (!any)
        fprintf(f, "<p>No heap state was reported (a report read back keeps its trees when it "
                "was written with --html or --format %s).</p>\n", rp_formats[RP_JSON].name);
    fputs("</section>\n", f);
}

/* ---- growth -------------------------------------------------------------- */

enum { H_CPS = 4 };

static void h_signed(FILE *f, int64_t v)
{
    fprintf(f, "<td class=\"n%s\">%s%" PRId64 "</td>", v > 0 ? " new" : "", v > 0 ? "+" : "", v);
}

static int grew(const rp_scenario *s)
{
    for (int k = 0; k < OBJ_KIND_COUNT; k++)
        if (s->kinds_end[k] != s->kinds_start[k])
            return 1;
    for (size_t i = 0; i < s->ncheckpoints; i++)
        if (s->checkpoints[i].growth)
            return 1;
    return 0;
}

static void h_growth_table(FILE *f, const rp_scenario *s)
{
    size_t nc = s->ncheckpoints < H_CPS ? s->ncheckpoints : H_CPS;
    fputs("<table class=\"growth\"><tr><th>kind</th><th class=\"n\">begin</th>", f);
    for (size_t i = 0; i < nc; i++) {
        fputs("<th class=\"n\">at &ldquo;", f);
        h_txt(f, s->checkpoints[i].name);
        fputs("&rdquo;</th>", f);
    }
    fputs("<th class=\"n\">end</th><th class=\"n\">end &minus; begin</th>", f);
    for (size_t i = 0; i < nc; i++) {
        fputs("<th class=\"n\">end &minus; &ldquo;", f);
        h_txt(f, s->checkpoints[i].name);
        fputs("&rdquo;</th>", f);
    }
    fputs("</tr>\n", f);
    for (int k = 0; k < OBJ_KIND_COUNT; k++) {
        uint64_t a = s->kinds_start[k], e = s->kinds_end[k];
        int used = a || e;
        for (size_t i = 0; i < nc; i++)
            used |= s->checkpoints[i].kinds[k] != 0;
        if (!used)
            continue;
        fprintf(f, "<tr><td>%s</td><td class=\"n\">%" PRIu64 "</td>", obj_kind_name((obj_kind)k), a);
        for (size_t i = 0; i < nc; i++)
            fprintf(f, "<td class=\"n\">%" PRIu64 "</td>", s->checkpoints[i].kinds[k]);
        fprintf(f, "<td class=\"n\">%" PRIu64 "</td>", e);
        h_signed(f, (int64_t)(e - a));
        for (size_t i = 0; i < nc; i++)
            h_signed(f, (int64_t)(e - s->checkpoints[i].kinds[k]));
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    if (nc < s->ncheckpoints)
        h_kept(f, nc, s->ncheckpoints, "checkpoints");
}

static void h_growth(FILE *f, const rp_run *run, const size_t *idx, size_t nidx)
{
    fputs("<section id=\"growth\"><h2>Growth</h2>\n<p class=\"kept\">live objects per kind "
          "before the first statement, at each checkpoint, and after the last statement "
          "(before teardown): begin, at each checkpoint, end</p>\n", f);
    size_t shown = 0, flat = 0;
    for (size_t k = 0; k < nidx; k++) {
        const rp_scenario *s = &run->scenarios[idx[k]];
        if (!s->kinds_known) {
            for (size_t i = 0; i < s->ncheckpoints; i++) {
                fputs("<p>", f);
                h_txt(f, h_name(run, s));
                fputs(": growth since ", f);
                h_txt(f, s->checkpoints[i].name);
                fprintf(f, ": %+" PRId64 " objects</p>\n", s->checkpoints[i].growth);
            }
            continue;
        }
        if (!grew(s)) {
            flat++;
            continue;
        }
        shown++;
        fputs("<h3>", f);
        h_txt(f, h_name(run, s));
        fputs("</h3>\n", f);
        h_growth_table(f, s);
    }
    if (flat)
        fprintf(f, "<p>%zu scenario%s ended with the objects they started with.</p>\n", flat,
                flat == 1 ? "" : "s");
    (void)shown;
    fputs("</section>\n", f);
}

/* ---- timeline ------------------------------------------------------------ */

enum { TX0 = 60, TW = 860, TTOP = 24, TH = 176, TVW = 960, TVH = 240 };

/* Indices kept: each of k buckets keeps its point with the most objects
 * (the peak survives). Returns the count; bucket_of[i] for every point. */
static size_t downsample(const rp_timeline *t, size_t *keep, uint32_t *bucket_of)
{
    size_t n = t->n, k = n < RP_HTML_POINTS ? n : RP_HTML_POINTS;
    for (size_t j = 0; j < k; j++) {
        size_t lo = j * n / k, hi = (j + 1) * n / k, best = lo;
        for (size_t i = lo; i < hi; i++) {
            bucket_of[i] = (uint32_t)j;
            if (t->objects[i] > t->objects[best])
                best = i;
        }
        keep[j] = best;
    }
    return k;
}

/* A recording's chart: in the program's events (rp_timeline.pev). */
static int h_events(const rp_timeline *t)
{
    return t->pev && t->cur_pev;
}

/* A recording's: the points grouped by the program's event (RP_HTML_POINTS
 * groups of events at most, the points before its first event one group),
 * each keeping its peak, so that the chart's x-axis is in events. */
static size_t downsample_events(const rp_timeline *t, size_t *keep, uint32_t *bucket_of)
{
    uint64_t ne = t->cur_pev + 1;
    size_t k = 0, span = ne < RP_HTML_POINTS ? 1 : (size_t)((ne + RP_HTML_POINTS - 1) /
                                                          RP_HTML_POINTS);
    uint64_t cur = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t b = t->pev[i] / span;
        if (b != cur || !k) {
            cur = b;
            keep[k++] = i;
        } else if (t->objects[i] >= t->objects[keep[k - 1]]) {
            keep[k - 1] = i;   /* the group's peak (its last on a tie) */
        }
        bucket_of[i] = (uint32_t)(k - 1);
    }
    return k;
}

static void h_series_attr(FILE *f, const char *name, const uint64_t *v, const size_t *keep,
                          size_t k)
{
    fprintf(f, " data-%s=\"", name);
    for (size_t j = 0; j < k; j++)
        fprintf(f, "%s%" PRIu64, j ? "," : "", v[keep[j]]);
    fputs("\"", f);
}

static double tx(size_t j, size_t k)
{
    return TX0 + (k > 1 ? (double)j * TW / (double)(k - 1) : TW / 2.0);
}

static void h_poly(FILE *f, const uint64_t *v, uint64_t max, const size_t *keep, size_t k,
                   const char *color, const char *cls)
{
    fprintf(f, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
            cls, color);
    for (size_t j = 0; j < k; j++) {
        double y = TTOP + TH - (max ? (double)v[keep[j]] * TH / (double)max : 0);
        fprintf(f, "%.1f,%.1f ", tx(j, k), y);
    }
    fputs("\"/>\n", f);
}

/* Live objects' range within each bucket, shaded: a loop that makes and
 * drops objects every statement reads as a band, not a comb. */
static void h_band(FILE *f, const rp_timeline *t, const size_t *keep, const uint32_t *bucket_of,
                   size_t k)
{
    if (!t->max_objects || k < 2)
        return;
    fputs("<polygon class=\"band\" fill=\"rgba(31,119,180,.15)\" stroke=\"none\" points=\"", f);
    for (size_t j = 0; j < k; j++)
        fprintf(f, "%.1f,%.1f ", tx(j, k),
                TTOP + TH - (double)t->objects[keep[j]] * TH / (double)t->max_objects);
    size_t i = t->n;
    for (size_t j = k; j-- > 0;) {
        uint64_t lo = UINT64_MAX;
        for (; i > 0 && bucket_of[i - 1] == j; i--)
            if (t->objects[i - 1] < lo)
                lo = t->objects[i - 1];
        if (lo == UINT64_MAX)
            lo = t->objects[keep[j]];
        fprintf(f, "%.1f,%.1f ", tx(j, k), TTOP + TH - (double)lo * TH / (double)t->max_objects);
    }
    fputs("\"/>\n", f);
}

static const struct { uint8_t bit; const char *name, *color; } MARKS[] = {
    {RP_TL_FAIL, "failed expect", "#d62728"},
    {RP_TL_CHECKPOINT, "checkpoint", "#9467bd"},
    {RP_TL_GC, "gc()", "#17a589"},
    {RP_TL_SWEEP, "sweep", "#8c564b"},
    {RP_TL_MARK, "mark", "#e377c2"},
};

/* A mark's line, its hover naming where: a recording's program site
 * (site, "prog.py:13": a failed expectation's own, else the program's event
 * the mark follows), the recording's line only as a detail; else the
 * scenario's line. A program's mark("LABEL") has its label written at the
 * top, a recording's failed expectation its program site. */
static void h_mark_line(FILE *f, const rp_timeline *t, double x, size_t m, uint32_t ln,
                        const char *site)
{
    int fail = MARKS[m].bit == RP_TL_FAIL;
    const char *label = MARKS[m].bit == RP_TL_MARK ? rp_timeline_label_of(t, ln) : NULL;
    fprintf(f, "<line class=\"mk\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"4,2\"><title>", x, x, TTOP, TTOP + TH,
            MARKS[m].color);
    if (!site[0])
        fprintf(f, "line %u: ", ln);
    if (site[0] && fail) {
        h_txt(f, site);
        fputs(": ", f);
    }
    fputs(MARKS[m].name, f);
    if (label) {
        fputs(" ", f);
        h_txt(f, label);
    }
    if (site[0] && !fail) {
        fputs(" after ", f);
        h_txt(f, site);
    }
    if (site[0])
        fprintf(f, " (the recording&apos;s line %u)", ln);
    fputs("</title></line>\n", f);
    if (site[0] && fail) {   /* to the left of a mark near the right edge */
        int left = x > TX0 + TW - 150;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"%s\" stroke=\"white\" "
                "stroke-width=\"3\" paint-order=\"stroke\"%s>", left ? x - 3 : x + 3, TTOP + 22,
                MARKS[m].color,
                left ? " text-anchor=\"end\"" : "");
        h_txt(f, site);
        fputs("</text>\n", f);
    }
    if (label) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"%s\">", x + 3, TTOP + 10,
                MARKS[m].color);
        h_txt(f, label);
        fputs("</text>\n", f);
    }
}

/* The kept point nearest to statement s (kept statements ascend). */
static size_t nearest(const rp_timeline *t, const size_t *keep, size_t k, uint64_t s)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->stmt[keep[mid]] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == k)
        return k - 1;
    if (lo > 0 && s - t->stmt[keep[lo - 1]] < t->stmt[keep[lo]] - s)
        return lo - 1;
    return lo;
}

/* Markers from the events (every marked statement, whatever the sample):
 * one per kind of mark and point. */
static int h_fails_ran(const rp_timeline *t)
{
    return h_events(t) && t->nfailed_at;
}

/* The events mark m is drawn at: a recording's failures where they ran
 * (rp_timeline_failed, whatever the line), else the events kept on the
 * lines marked m. */
static const rp_tl_event *h_mark_events(const rp_timeline *t, size_t m, size_t *n, int *any)
{
    *any = MARKS[m].bit == RP_TL_FAIL && h_fails_ran(t);
    *n = *any ? t->nfailed_at : t->nev;
    return *any ? t->failed_at : t->ev;
}

static void h_event_marks(FILE *f, const rp_timeline *t, const size_t *keep, size_t k)
{
    size_t drawn = 0, seen = 0;
    for (size_t m = 0; m < sizeof MARKS / sizeof *MARKS; m++) {
        size_t last = SIZE_MAX, n;
        int any;
        const rp_tl_event *ev = h_mark_events(t, m, &n, &any);
        for (size_t i = 0; i < n; i++) {
            uint32_t ln = ev[i].line;
            if (!any && (ln >= RP_TIMELINE_LINES || !(t->marks[ln] & MARKS[m].bit)))
                continue;
            size_t j = nearest(t, keep, k, ev[i].stmt);
            if (j == last)
                continue;
            last = j;
            seen++;
            if (drawn < RP_HTML_MARKS) {
                char site[96];
                rp_timeline_mark_site(t, ln, MARKS[m].bit == RP_TL_FAIL, &ev[i], site,
                                      sizeof site);
                drawn++;
                h_mark_line(f, t, tx(j, k), m, ln, site);
            }
        }
    }
    if (drawn < seen || t->nev < t->ev_seen)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#666\">markers: kept %zu of "
                "%zu (events kept %zu of %" PRIu64 ")</text>\n", TX0 + TW - 330, TTOP - 8, drawn,
                seen, t->nev, t->ev_seen);
}

static void h_marks(FILE *f, const rp_timeline *t, const size_t *keep, const uint32_t *bucket_of,
                    size_t k)
{
    if (t->nev || h_fails_ran(t)) {
        h_event_marks(f, t, keep, k);
        return;
    }
    size_t drawn = 0, seen = 0;
    for (size_t m = 0; m < sizeof MARKS / sizeof *MARKS; m++) {
        uint32_t last = UINT32_MAX;
        for (size_t i = 0; i < t->n; i++) {
            uint32_t ln = t->line[i];
            if (ln >= RP_TIMELINE_LINES || !(t->marks[ln] & MARKS[m].bit) || bucket_of[i] == last)
                continue;
            last = bucket_of[i];
            seen++;
            if (drawn == RP_HTML_MARKS)
                continue;
            drawn++;
            char site[96];
            rp_timeline_mark_site(t, ln, MARKS[m].bit == RP_TL_FAIL, NULL, site, sizeof site);
            if (!site[0])
                rp_timeline_psite(t, i, site, sizeof site);
            h_mark_line(f, t, tx(bucket_of[i], k), m, ln, site);
        }
    }
    if (drawn < seen)
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#666\">markers: kept %zu of "
                "%zu</text>\n", TX0 + TW - 160, TTOP - 8, drawn, seen);
}

static void h_axis(FILE *f, const rp_timeline *t, const size_t *keep, size_t k)
{
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", TX0,
            TX0 + TW, TTOP + TH, TTOP + TH);
    const uint64_t *x = h_events(t) ? t->pev : t->stmt;
    int ev = h_events(t);   /* a second row of ticks: the program's sites */
    for (int q = 0; q <= 4 && k; q++) {
        size_t j = (size_t)q * (k - 1) / 4;
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%" PRIu64
                "</text>\n", tx(j, k), TTOP + TH + (ev ? 14 : 16), x[keep[j]]);
        char site[96];
        rp_timeline_psite(t, keep[j], site, sizeof site);
        if (site[0]) {
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"#666\" "
                    "text-anchor=\"middle\">", tx(j, k), TTOP + TH + 25);
            h_txt(f, site);
            fputs("</text>\n", f);
        }
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
            TX0 + TW / 2, TTOP + TH + (ev ? 37 : 34), ev ? "the program&apos;s events (a "
            "conversion, a mode, an op at one of its lines; hover: where)"
            : "statements executed");
}

/* A recording's hover: a strip per kept event, its <title> the program's
 * site and round, and the recording's line. */
static void h_event_titles(FILE *f, const rp_timeline *t, const size_t *keep, size_t k)
{
    for (size_t j = 0; h_events(t) && j < k; j++) {
        size_t i = keep[j];
        if (!t->pev[i] || (j + 1 < k && t->pev[keep[j + 1]] == t->pev[i]))
            continue;
        double x0 = j ? (tx(j - 1, k) + tx(j, k)) / 2 : TX0;
        double x1 = j + 1 < k ? (tx(j, k) + tx(j + 1, k)) / 2 : TX0 + TW;
        char site[96];
        rp_timeline_psite(t, i, site, sizeof site);
        fprintf(f, "<rect class=\"ev\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                "fill=\"transparent\"><title>event %" PRIu64 ": ", x0, TTOP,
                x1 - x0 > 1 ? x1 - x0 : 1, TH, t->pev[i]);
        h_txt(f, site);
        if (t->pround[i])
            fprintf(f, ", round %u", t->pround[i]);
        fprintf(f, " (the recording&apos;s line %u)</title></rect>\n", t->line[i]);
    }
}

static void h_panel(FILE *f, const rp_timeline *t, const char *name, size_t *keep,
                    uint32_t *bucket_of)
{
    size_t k = h_events(t) ? downsample_events(t, keep, bucket_of)
                           : downsample(t, keep, bucket_of);
    fputs("<div class=\"tl\"", f);
    h_series_attr(f, "s", t->stmt, keep, k);
    h_series_attr(f, "o", t->objects, keep, k);
    h_series_attr(f, "b", t->bytes, keep, k);
    h_series_attr(f, "m", t->memo, keep, k);
    fputs(" data-l=\"", f);
    for (size_t j = 0; j < k; j++)
        fprintf(f, "%s%u", j ? "," : "", t->line[keep[j]]);
    fputs("\"", f);
    if (h_events(t)) {   /* a recording: its events, and the program's sites */
        h_series_attr(f, "e", t->pev, keep, k);
        fputs(" data-p=\"", f);
        for (size_t j = 0; j < k; j++) {
            char site[96];
            rp_timeline_psite(t, keep[j], site, sizeof site);
            fputs(j ? "|" : "", f);
            h_txt(f, site[0] ? site : "before its first event");
        }
        fputs("\"", f);
    }
    fputs(">\n<h3>", f);
    h_txt(f, name);
    fprintf(f, "</h3>\n<div class=\"lg\"><span style=\"color:#1f77b4\">&#9632; live objects "
            "(max %" PRIu64 ")</span><span style=\"color:#ff7f0e\">&#9632; live bytes (max ",
            t->max_objects);
    h_bytes(f, t->max_bytes);
    fprintf(f, ")</span><span style=\"color:#2ca02c\">&#9632; memo entries (max %" PRIu64
            ")</span><span>each line scaled to its own max</span>"
            "<button class=\"peak\" type=\"button\">jump to peak</button><br>", t->max_memo);
    for (size_t m = 0; m < sizeof MARKS / sizeof *MARKS; m++)
        fprintf(f, "<span style=\"color:%s\">&#9474; %s</span>", MARKS[m].color, MARKS[m].name);
    fputs("</div>\n", f);
    fprintf(f, "<svg viewBox=\"0 0 %d %d\" data-x0=\"%d\" data-w=\"%d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n", TVW, TVH, TX0, TW);
    h_axis(f, t, keep, k);
    h_marks(f, t, keep, bucket_of, k);
    h_poly(f, t->bytes, t->max_bytes, keep, k, "#ff7f0e", "sb");
    h_poly(f, t->memo, t->max_memo, keep, k, "#2ca02c", "sm");
    h_band(f, t, keep, bucket_of, k);
    h_poly(f, t->objects, t->max_objects, keep, k, "#1f77b4", "so");
    h_event_titles(f, t, keep, k);
    fprintf(f, "<rect class=\"sel\" y=\"%d\" height=\"%d\" x=\"0\" width=\"0\" "
            "fill=\"rgba(31,119,180,.18)\" stroke=\"#1f77b4\" style=\"display:none\"/>\n"
            "</svg>\n<div class=\"readout\">drag across the chart to select a range</div>\n",
            TTOP, TH);
    fprintf(f, "<p class=\"kept\">points: kept %zu of %zu sampled (", k, t->n);
    if (h_events(t))
        fprintf(f, "the program&apos;s %" PRIu64 " events, the recording&apos;s ", t->cur_pev);
    fprintf(f, "%" PRIu64 " statements; the sample keeps one statement in %" PRIu64
            ")</p>\n</div>\n", t->seen, t->stride);
}

static int h_timeline(FILE *f, const rp_run *run, const size_t *idx, size_t nidx,
                      const rp_timeline *tl, size_t ntl)
{
    fputs("<section id=\"timeline\"><h2>Timeline</h2>\n", f);
    size_t *keep = malloc(RP_HTML_POINTS * sizeof *keep);
    uint32_t *bucket_of = malloc(RP_TIMELINE_MAX * sizeof *bucket_of);
    if (!keep || !bucket_of) {
        free(keep);
        free(bucket_of);
        return er_set(ER_OOM, "out of memory writing the page");
    }
    size_t shown = 0, have = 0;
    for (size_t k = 0; k < nidx; k++) {
        size_t i = idx[k];
        if (!tl || i >= ntl || !tl[i].stmt || !tl[i].n || !tl[i].name ||
            !run->scenarios[i].file || strcmp(tl[i].name, run->scenarios[i].file) != 0)
            continue;
        have++;
        if (shown < RP_HTML_PANELS) {
            h_panel(f, &tl[i], h_name(run, &run->scenarios[i]), keep, bucket_of);
            shown++;
        }
    }
    if (!have)
        fputs("<p>No timeline was recorded.</p>\n", f);
    else if (shown < have)
        h_kept(f, shown, have, "timelines");
    fputs("</section>\n", f);
    free(keep);
    free(bucket_of);
    return 0;
}

/* ---- the run's page ------------------------------------------------------ */

static void h_header(FILE *f, const rp_run *run, const char *title)
{
    fputs("<header><h1>", f);
    h_txt(f, title);
    fputs("</h1>\n<p>", f);
    h_txt(f, run->tool ? run->tool : "fakegc");
    fputs(" ", f);
    h_txt(f, run->version);
    fputs(" &middot; allocator ", f);
    h_txt(f, run->allocator);
    for (size_t i = 0; i < run->ninject; i++) {
        fputs(i ? ", " : " &middot; inject ", f);
        h_txt(f, run->inject[i]);
    }
    if (run->compat) {
        fputs(" &middot; compat ", f);
        h_txt(f, run->compat);
    }
    fputs("</p>\n<nav><a href=\"#summary\">Summary</a><a href=\"#groups\">Groups</a>"
          "<a href=\"#tree\">Dominator tree</a><a href=\"#growth\">Growth</a>"
          "<a href=\"#timeline\">Timeline</a></nav></header>\n", f);
}

int rp_write_html(FILE *f, const rp_run *run, const rp_timeline *tl, size_t ntl)
{
    size_t idx[RP_HTML_SCENARIOS];
    size_t nidx = pick_scenarios(run, idx, RP_HTML_SCENARIOS);
    char title[300];
    const char *st = rp_run_status(run);
    snprintf(title, sizeof title, "fakegc: %s%s%s",
             strcmp(st, "pass") == 0 ? "PASS" : strcmp(st, "fail") == 0 ? "FAIL" : "ERROR",
             run->subject || run->n == 1 ? " " : "",
             run->subject ? run->subject : run->n == 1 ? run->scenarios[0].file : "");
    h_head(f, title);
    h_header(f, run, title);
    h_summary(f, run, idx, nidx);
    if (nidx < run->n)
        h_kept(f, nidx, run->n, "scenarios in the sections below (those that did not pass first)");
    h_groups(f, run, idx, nidx);
    h_tree(f, run, idx, nidx);
    h_growth(f, run, idx, nidx);
    if (h_timeline(f, run, idx, nidx, tl, ntl) != 0)
        return -1;
    h_tail(f);
    return ferror(f) ? -1 : 0;
}

/* ---- the diff's page ----------------------------------------------------- */

static const rp_scenario *find_scenario(const rp_run *r, const char *file)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->scenarios[i].file && file && strcmp(r->scenarios[i].file, file) == 0)
            return &r->scenarios[i];
    return NULL;
}

static int has_failure(const rp_scenario *s, const char *text)
{
    for (size_t i = 0; s && i < s->nfailures; i++)
        if (s->failures[i].text && text && strcmp(s->failures[i].text, text) == 0)
            return 1;
    return 0;
}

static void h_cell_status(FILE *f, const rp_scenario *s)
{
    fputs("<td>", f);
    if (s)
        h_status(f, rp_status_name(s->status));
    else
        fputs("absent", f);
    fputs("</td>", f);
}

static void h_pair_u64(FILE *f, uint64_t a, uint64_t b, int bytes)
{
    fprintf(f, "<td class=\"n%s\">", b > a ? " new" : b < a ? " gone" : "");
    if (bytes) {
        h_bytes(f, a);
        fputs(" &rarr; ", f);
        h_bytes(f, b);
    } else {
        fprintf(f, "%" PRIu64 " &rarr; %" PRIu64, a, b);
    }
    fputs("</td>", f);
}

static void h_diff_row(FILE *f, const rp_scenario *b, const rp_scenario *c, const char *file)
{
    fputs("<tr><td>", f);
    h_txt(f, file);
    fputs("</td>", f);
    h_cell_status(f, b);
    h_cell_status(f, c);
    h_pair_u64(f, b ? b->nfailures : 0, c ? c->nfailures : 0, 0);
    h_pair_u64(f, retained_of(b), retained_of(c), 0);
    h_pair_u64(f, b ? b->leaked_bytes : 0, c ? c->leaked_bytes : 0, 1);
    h_pair_u64(f, b ? b->peak_bytes : 0, c ? c->peak_bytes : 0, 1);
    fputs("</tr>\n", f);
    for (size_t i = 0; c && i < c->nfailures; i++) {
        if (has_failure(b, c->failures[i].text))
            continue;
        fputs("<tr class=\"newfail\"><td colspan=\"7\"><span class=\"new\">+ new failure</span> ",
              f);
        h_failure_at(f, c, &c->failures[i], c->failures[i].line);
        fputs(": <code>", f);
        h_txt(f, c->failures[i].text);
        fputs("</code> actual <code>", f);
        h_txt(f, c->failures[i].actual);
        fputs("</code></td></tr>\n", f);
    }
}

static void h_diff_table(FILE *f, const rp_run *base, const rp_run *cur)
{
    fputs("<table class=\"diff\"><tr><th>scenario</th><th>base</th><th>new</th>"
          "<th class=\"n\">failing expectations</th><th class=\"n\">retained objects</th>"
          "<th class=\"n\">leaked bytes</th><th class=\"n\">peak bytes</th></tr>\n", f);
    size_t rows = 0, all = 0;
    for (size_t i = 0; i < cur->n; i++, all++) {
        const rp_scenario *c = &cur->scenarios[i];
        if (rows < RP_HTML_DIFF_ROWS) {
            h_diff_row(f, find_scenario(base, c->file), c, c->file);
            rows++;
        }
    }
    for (size_t i = 0; i < base->n; i++) {
        const rp_scenario *b = &base->scenarios[i];
        if (find_scenario(cur, b->file))
            continue;
        all++;
        if (rows < RP_HTML_DIFF_ROWS) {
            h_diff_row(f, b, NULL, b->file);
            rows++;
        }
    }
    fputs("</table>\n", f);
    if (rows < all)
        h_kept(f, rows, all, "scenarios");
}

/* The text diff's last line (its verdict). */
static void h_diff_verdict(FILE *f, const char *txt, size_t len)
{
    const char *end = txt + len;
    while (end > txt && end[-1] == '\n')
        end--;
    const char *last = end;
    while (last > txt && last[-1] != '\n')
        last--;
    fputs("<p id=\"verdict-line\"><code>", f);
    char *v = strndup(last, (size_t)(end - last));
    h_txt(f, v ? v : "");
    free(v);
    fputs("</code></p>\n", f);
}

/* The text diff, at most RP_HTML_DIFF_TEXT bytes. */
static void h_diff_text(FILE *f, const char *txt, size_t len)
{
    fputs("<h2 id=\"text\">The text diff</h2>\n<pre>", f);
    size_t keep = len < RP_HTML_DIFF_TEXT ? len : RP_HTML_DIFF_TEXT;
    char *t = strndup(txt, keep);
    h_txt(f, t ? t : "");
    free(t);
    fputs("</pre>\n", f);
    if (keep < len)
        h_kept(f, keep, len, "bytes of the text diff");
}

int rp_write_html_diff(FILE *f, const rp_run *base, const rp_run *cur, const char *base_name,
                       const char *cur_name, const rp_diff_options *o)
{
    char *txt = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&txt, &len);
    if (!m)
        return er_set(ER_OOM, "out of memory writing the page");
    rp_diff_options to = *o;
    to.color = 0;
    to.format = RP_DIFF_TEXT;
    int reg = rp_diff_write(base, cur, m, &to);
    if (fclose(m) != 0 || reg < 0) {
        free(txt);
        return er_set(ER_OOM, "out of memory writing the page");
    }
    char title[600];
    snprintf(title, sizeof title, "fakegc diff: %s", reg ? "regression" : "no regression");
    h_head(f, title);
    fputs("<header><h1>", f);
    h_txt(f, title);
    fputs("</h1>\n<p>base <code>", f);
    h_txt(f, base_name);
    fputs("</code> &rarr; new <code>", f);
    h_txt(f, cur_name);
    fputs("</code></p>\n<nav><a href=\"#summary\">Summary</a><a href=\"#scenarios\">Scenarios"
          "</a><a href=\"#tree\">Dominator tree</a><a href=\"#text\">Text diff</a></nav></header>\n"
          "<section id=\"summary\"><h2>Summary</h2>\n<p id=\"verdict\">", f);
    fputs(reg ? "<span class=\"v fail\">REGRESSION</span> the new run regressed"
              : "<span class=\"v pass\">OK</span> no regression", f);
    fprintf(f, " &mdash; base: %u passed, %u failed; new: %u passed, %u failed</p>\n",
            base->passed, base->failed, cur->passed, cur->failed);
    fputs("</section>\n<section id=\"scenarios\"><h2>Scenarios</h2>\n", f);
    h_diff_table(f, base, cur);
    h_diff_verdict(f, txt, len);
    fputs("</section>\n", f);
    size_t idx[RP_HTML_SCENARIOS];   /* the new run's trees, those not passing first */
    h_tree(f, cur, idx, pick_scenarios(cur, idx, RP_HTML_SCENARIOS));
    fputs("<section id=\"textdiff\">\n", f);
    h_diff_text(f, txt, len);
    fputs("</section>\n", f);
    free(txt);
    h_tail(f);
    return ferror(f) ? -1 : reg;
}
