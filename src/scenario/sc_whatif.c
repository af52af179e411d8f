/* sc_whatif.c - a recording replayed under a memo design (designs.md
 * "Replaying a 1.13.1 recording under 2.x").
 *
 * A recording (its `config recording = "PROGRAM"` line; one made before the
 * recorder wrote it: its first line `# recorded by scripts/record.py from
 * ...`) states what PyTorch 1.13.1 showed. Under any other design of the table
 * (fk_design.c) it is a what-if: its expectations are 1.13.1 fidelity and
 * are not checked (counted in skipped_fidelity), the design's retention
 * verdict alone decides, and the report adds that design's final counters
 * per mode. Every recording's run also samples, after each statement, the
 * memo entries and pending storages summed over the live converters (peak
 * and final), which `fakegc record --designs` tabulates per design. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/er.h"
#include "fake/fk_cat.h"
#include "heap/hp_class.h"
#include "scenario/sc_vm.h"

#define RECORDED_MARK "# recorded by scripts/record.py from "
#define TORCH_MARK " (torch "
enum { MODE_LINES = 8 };               /* final counters: modes listed */

/* An old recording (no config recording line): the PyTorch line its
 * first comment's torch version belongs to, the prefix of the version and
 * the design that models it (another line is taken as 1.13's). */
static const struct {
    const char *prefix;
    fk_design_id design;
} recorded_on[] = {{"1.", FK_D_1_13}, {"2.", FK_D_2_3}};

/* A recording made before the recorder wrote config recording. */
static int old_recording(const sc_program *p)
{
    size_t n = strlen(RECORDED_MARK);
    return !p->cfg_recording && p->src && p->len >= n &&
           memcmp(p->src, RECORDED_MARK, n) == 0;
}

int sc_is_recording(const sc_program *p)
{
    return p->cfg_recording || old_recording(p);
}

/* The torch version in the recording's first line, as a pointer into the
 * source and a length (0 when the line has none). */
static size_t torch_version(const sc_program *p, const char **at)
{
    const char *eol = memchr(p->src, '\n', p->len);
    size_t line = eol ? (size_t)(eol - p->src) : p->len, m = strlen(TORCH_MARK);
    for (size_t i = 0; i + m <= line; i++)
        if (memcmp(p->src + i, TORCH_MARK, m) == 0) {
            size_t k = i + m;
            while (k < line && p->src[k] != ')')
                k++;
            *at = p->src + i + m;
            return k - (i + m);
        }
    return 0;
}

int sc_recorded_design(const sc_program *p)
{
    if (!sc_is_recording(p))
        return -1;
    if (p->cfg_compat >= 0)
        return p->cfg_compat;
    if (!old_recording(p))
        return FK_D_1_13;   /* the recorder names every other design */
    const char *v = NULL;
    size_t n = torch_version(p, &v);
    fk_design_id own = FK_D_1_13;
    for (size_t i = 0; i < sizeof recorded_on / sizeof recorded_on[0]; i++) {
        size_t k = strlen(recorded_on[i].prefix);
        if (n >= k && memcmp(v, recorded_on[i].prefix, k) == 0)
            own = recorded_on[i].design;
    }
    return (int)own;
}

int sc_whatif_of(const sc_program *p, int design)
{
    int own = sc_recorded_design(p);
    if (own < 0 || design == FK_D_DEFAULT)
        return 0;
    return design != own;
}

/* Memo entries of one converter object: the MetaConverter's tables, and
 * the FakeTensorConverter's memo where the design keeps one apart (in one
 * memo designs memo_fake reads the MetaConverter's entries again). */
static void add_counts(obj *o, uint64_t *memo, uint64_t *pending)
{
    fk_counters c;
    if (fk_is_meta_converter(o)) {
        if (fk_counters_get(o, &c) == 0) {
            *memo += (uint64_t)(c.memo_meta + c.memo_storage);
            *pending += (uint64_t)c.pending;
        }
    } else if (fk_is_fake_converter(o) && fk_design_now()->fake_memo) {
        if (fk_counters_get(o, &c) == 0 && c.memo_fake > 0)
            *memo += (uint64_t)c.memo_fake;
    }
    er_clear();
}

void sc_whatif_sample(sc_vm *vm)
{
    uint64_t memo = 0, pending = 0;
    /* after every statement of a recording: the live list in creation
     * order up to its last converter (what the program kept grows behind
     * them; a walk of the whole list was 94% of a 1M-conversion replay),
     * the kind read in place */
    uint64_t want = obj_live_count_kind(OBJ_META_CONVERTER) +
                    obj_live_count_kind(OBJ_FAKE_CONVERTER);
    uint64_t seen = 0;
    for (obj *o = obj_live_first(); o && seen < want; o = obj_iter_next(o))
        if (o->type->kind == OBJ_META_CONVERTER || o->type->kind == OBJ_FAKE_CONVERTER) {
            seen++;
            add_counts(o, &memo, &pending);
        }
    rp_scenario *out = vm->out;
    if (memo > out->memo_peak)
        out->memo_peak = memo;
    if (pending > out->pending_peak)
        out->pending_peak = pending;
    out->memo_final = memo;
    out->pending_final = pending;
    out->memo_known = 1;
}

typedef struct wbuf {
    char *s;
    size_t len, cap;
    int oom;
} wbuf;

static void wput(wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wput(wbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || b->oom)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The variable a mode is bound to, or NULL. */
static const char *var_of(const sc_vm *vm, const obj *o)
{
    for (uint32_t i = 0; i < vm->p->nvars; i++)
        if (vm->vars[i].k == V_OBJ && vm->vars[i].o == o)
            return vm->p->var_names[i];
    return NULL;
}

static void mode_line(wbuf *b, const sc_vm *vm, obj *m)
{
    fk_counters c;
    if (fk_counters_get(m, &c) != 0) {
        er_clear();
        return;
    }
    const char *v = var_of(vm, m);
    wput(b, "  final counters of %s%smode#%" PRIu64 "%s:", v ? v : "", v ? " (" : "", m->id,
         v ? ")" : "");
    if (c.memo_fake >= 0 && fk_design_now()->fake_memo)
        wput(b, " memo_fake %" PRId64 ",", c.memo_fake);
    wput(b, " memo_meta %" PRId64 ", memo_storage %" PRId64 ", pending %" PRId64
            ", hits %" PRId64 ", misses %" PRId64 "\n",
         c.memo_meta, c.memo_storage, c.pending, c.hits, c.misses);
}

int sc_whatif_finish(sc_vm *vm)
{
    if (!vm->whatif)
        return 0;
    wbuf b = {0};
    size_t nmodes = 0;
    const char *v = "1.13.1";
    size_t vn = torch_version(vm->p, &v);
    if (vn == 0 || vn > 64 || v[0] == '1')    /* Debian's 1.13.1 says 1.13.0a0 */
        vn = strlen(v = "1.13.1");
    wput(&b, "what-if under %s: a recording of PyTorch %.*s replayed in another design; "
             "skipped: %" PRIu64 " expectations (%.*s fidelity, not checked); this design's "
             "verdict alone decides\n",
         fk_design_now()->name, (int)vn, v, vm->out->skipped_fidelity, (int)vn, v);
    for (obj *o = obj_live_first(); o; o = obj_iter_next(o))
        if (fk_is_mode(o) && nmodes++ < MODE_LINES)
            mode_line(&b, vm, o);
    if (nmodes > MODE_LINES)
        wput(&b, "  ... and %zu more modes\n", nmodes - MODE_LINES);
    if (!nmodes)
        wput(&b, "  final counters: no mode is alive at the end\n");
    if (vm->out->memo_known)
        wput(&b, "  memo entries: peak %" PRIu64 ", final %" PRIu64 "; pending storages: peak %"
                 PRIu64 ", final %" PRIu64 " (summed over live converters)\n",
             vm->out->memo_peak, vm->out->memo_final, vm->out->pending_peak,
             vm->out->pending_final);
    char *copy = b.oom ? NULL : sc_rp_strdup(b.s ? b.s : "");
    free(b.s);
    if (!copy)
        return er_set(ER_OOM, "out of memory writing the what-if counters");
    sc_rp_free_str(vm->out->whatif);
    vm->out->whatif = copy;
    return 0;
}

/* ---- `fakegc record --designs`: one row per design ---- */

/* "all" or a comma list of design names into ids[]; -1 on an unknown name
 * (said on diag). */
static int design_list(const char *csv, fk_design_id *ids, size_t *n, FILE *diag)
{
    *n = 0;
    if (strcmp(csv, "all") == 0) {
        for (int i = 0; i < FK_D_COUNT; i++)
            if (i != FK_D_DEFAULT && fk_design_get((fk_design_id)i))
                ids[(*n)++] = (fk_design_id)i;
        return 0;
    }
    const char *s = csv;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char name[64];
        snprintf(name, sizeof name, "%.*s", len < 63 ? (int)len : 63, s);
        if (fk_design_from_name(name, &ids[*n]) != 0 || *n == FK_D_COUNT) {
            char all[256];
            fk_design_names(all, sizeof all);
            fprintf(diag, "fakegc record: --designs: no design '%s' (all, or a comma list of: "
                          "%s)\n", name, all);
            return -1;
        }
        (*n)++;
        s += len + (e != NULL);
    }
    return *n ? 0 : -1;
}

/* Has a group of v before i (not suppressed) the class and category of i? */
static int said_before(const rp_verdict *v, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!v->groups[j].suppressed && v->groups[j].cls == v->groups[i].cls &&
            v->groups[j].cat == v->groups[i].cat)
            return 1;
    return 0;
}

/* What is left at the end, by class: "20 lost fake tensors, 6 lingering
 * stale memo entries" (the verdict's groups, summed per class and
 * category, in the order of their first group). */
static void left_text(const rp_scenario *sc, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    const rp_verdict *v = sc->verdict;
    for (size_t i = 0; v && i < v->ngroups; i++) {
        const rp_vgroup *g = &v->groups[i];
        if (g->suppressed || said_before(v, i))
            continue;
        uint64_t count = 0;
        for (size_t j = i; j < v->ngroups; j++)
            if (v->groups[j].cls == g->cls && v->groups[j].cat == g->cat &&
                !v->groups[j].suppressed)
                count += v->groups[j].count;
        int k = snprintf(buf + w, n > w ? n - w : 0, "%s%" PRIu64 " %s %s", w ? ", " : "",
                         count, hp_class_name(g->cls), fk_category_noun(g->cat, count));
        if (k > 0)
            w += (size_t)k;
    }
    if (!w)
        snprintf(buf, n, "nothing");
}

static void verdict_word(const rp_scenario *sc, char *buf, size_t n)
{
    if (sc->status == RP_ERROR) {
        snprintf(buf, n, "%s", sc->stop_site ? "NOT JUDGED" : "ERROR");
        return;
    }
    if (sc->status == RP_PASS) {
        snprintf(buf, n, "PASS");
        return;
    }
    const rp_verdict *v = sc->verdict;
    size_t w = (size_t)snprintf(buf, n, "FAIL (");
    for (int c = 0; c < HP_CL_COUNT && v; c++)
        if ((v->fails_on & (1u << c)) && v->count[c] && w < n)
            w += (size_t)snprintf(buf + w, n - w, "%s%s", buf[w - 1] == '(' ? "" : ", ",
                                  hp_class_name((hp_class)c));
    if (sc->nfailures && w < n)
        w += (size_t)snprintf(buf + w, n - w, "%sfidelity", buf[w - 1] == '(' ? "" : ", ");
    if (w < n)
        snprintf(buf + w, n - w, ")");
}

int sc_designs_table(const char *path, const char *label, const char *csv,
                     const sc_options *base, FILE *f, FILE *diag)
{
    fk_design_id ids[FK_D_COUNT];
    size_t n;
    if (design_list(csv, ids, &n, diag) != 0)
        return 2;
    if (!path)
        return 0;
    sc_program *p = sc_parse_file(path, diag, 0, NULL);
    if (!p)
        return 2;
    int failed = 0, broke = 0;
    fprintf(f, "%s: the recording replayed under each memo design (memo entries and pending "
               "storages summed over the live converters)\n", label ? label : path);
    fprintf(f, "%-14s %9s %10s %12s %13s  %-26s %s\n", "design", "peak memo", "final memo",
            "peak pending", "final pending", "verdict", "left at the end");
    for (size_t i = 0; i < n; i++) {
        sc_options o = *base;
        o.design = (int)ids[i];
        rp_scenario sc;
        memset(&sc, 0, sizeof sc);
        if (sc_run(p, &o, &sc) != 0)
            broke = 1;
        char left[512], word[96];
        left_text(&sc, left, sizeof left);
        if (sc.stop_site)   /* nothing is known of what it left */
            snprintf(left, sizeof left, "the recorder stopped at %s (%s)", sc.stop_site,
                     sc.stop_why ? sc.stop_why : "");
        verdict_word(&sc, word, sizeof word);
        fprintf(f, "%-14s %9" PRIu64 " %10" PRIu64 " %12" PRIu64 " %13" PRIu64 "  %-26s %s\n",
                fk_design_get(ids[i])->name, sc.memo_peak, sc.memo_final, sc.pending_peak,
                sc.pending_final, word, left);
        failed |= sc.status != RP_PASS;
        rp_scenario_clear(&sc);
    }
    sc_program_free(p);
    return broke ? -1 : failed;
}
