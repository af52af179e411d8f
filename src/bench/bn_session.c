/* bn_session.c - one `fakegc bench` session (bn.h, "a session"): which
 * benchmarks a name selects, running them into a table or JSON, and the
 * gate against a saved run. */
#include "bench/bn.h"

#include <string.h>
#include <unistd.h>

#include "scenario/sc.h"

int bn_select(const char *name, int *sel, char *err, size_t errn)
{
    size_t n;
    const char *const *names = bn_names(&n);
    size_t len = strlen(name);
    int any = 0;
    int prefix = len > 0 && name[len - 1] == '*';
    if (prefix)
        len--;
    for (size_t i = 0; i < n; i++) {
        int hit;
        if (prefix)
            hit = strncmp(names[i], name, len) == 0;
        else
            hit = strcmp(names[i], name) == 0 ||
                  (strncmp(names[i], name, len) == 0 &&
                   (names[i][len] == '/' || (len && name[len - 1] == '/')));
        if (hit) {
            sel[i] = 1;
            any = 1;
        }
    }
    if (any)
        return 0;
    const char *best = sc_closest(name, names, n, sizeof *names, 3);
    if (best)
        snprintf(err, errn, "unknown benchmark '%s'; did you mean '%s'?", name, best);
    else
        snprintf(err, errn, "unknown benchmark '%s' (fakegc list benches)", name);
    return -1;
}

/* The notes and the verdict against s->baseline: 1 a regression, 0 none,
 * -1 the baseline could not be read (printed). */
static int against_baseline(const bn_session *s, const bn_header *h, const bn_result *res,
                            size_t nres, double spread)
{
    bn_baseline b;
    char err[512];
    if (bn_baseline_read(s->baseline, &b, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --baseline: %s\n", s->who, err);
        return -1;
    }
    FILE *f = s->json ? stderr : s->out;
    fprintf(f, "\ncompared with %s:\n", s->baseline);
    bn_compare_notes(&b, h->allocator, h->sweep, s->cfg.quick, f);
    size_t reg = bn_compare_gate(res, nres, &b, s->tolerance, s->peak_tolerance,
                                 h->calibration_ns, spread, &s->cfg, f);
    bn_baseline_free(&b);
    return reg ? 1 : 0;
}

int bn_session_run(const bn_session *s)
{
    bn_result res[BN_MAX];
    size_t nres = 0, nb = bn_count();
    int failed = 0, progress = isatty(fileno(stderr));
    for (size_t i = 0; i < nb && i < BN_MAX; i++) {
        if (!s->sel[i])
            continue;
        if (progress)
            fprintf(stderr, "\r\033[K%s ...", bn_names(NULL)[i]);
        if (bn_run(i, &s->cfg, &res[nres]) != 0) {
            fprintf(stderr, "%s: %s: %s\n", s->who, res[nres].name, res[nres].message);
            failed = 1;
        }
        nres++;
    }
    if (progress)
        fprintf(stderr, "\r\033[K");
    double spread = 0, calib = bn_calibrate(&spread);
    bn_header h = {s->version, s->allocator, fk_policy_name(s->cfg.sweep), s->cfg.quick,
                   s->cfg.repeats, calib, "", "", ""};
    bn_machine(&h);
    int werr = s->json ? bn_write_json(&h, res, nres, s->out)
                       : bn_write_text(&h, res, nres, s->out);
    int status = failed ? BN_BROKEN : BN_DONE;
    if (werr != 0) {
        fprintf(stderr, "%s: cannot write the results\n", s->who);
        status = BN_UNREADABLE;
    }
    int reg = s->baseline ? against_baseline(s, &h, res, nres, spread) : 0;
    if (reg < 0)
        return BN_UNREADABLE;
    return reg && status == BN_DONE ? BN_REGRESSION : status;
}
