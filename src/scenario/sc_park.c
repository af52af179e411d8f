/* sc_park.c - parked programs: checked once, re-parsed when they run
 * (sc.h, sc_check_file). */
#include "scenario/sc_int.h"
#include "scenario/sc_supp.h"

#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/ix.h"

static uint64_t text_hash(const char *s, size_t n)
{
    return ix_hash_mem(s, n);
}

sc_program *sc_check_file(const char *path, FILE *diag, int color, int *nerrors,
                          size_t *budget)
{
    sc_program *p = sc_parse_file(path, diag, color, nerrors);
    if (!p)
        return NULL;
    size_t bytes = p->arena.total + sizeof *p;
    if (bytes <= *budget) {
        *budget -= bytes;
        return p;
    }
    size_t n = strlen(p->file) + 1;
    char *file = al_malloc(n, AL_K_SCENARIO, "sc_check_file");
    if (!file)   /* keep it whole: correct, only not bounded */
        return p;
    memcpy(file, p->file, n);
    p->text_len = p->len;
    p->text_hash = text_hash(p->src, p->len);
    sc_arena_free(&p->arena);
    sc_supp_files_free(p->supps);   /* read again with the text */
    p->supps = NULL;
    p->file = file;
    p->src = NULL;
    p->len = 0;
    p->top = NULL;
    p->ntop = 0;
    p->var_names = p->checkpoint_names = NULL;
    p->parked = 1;
    return p;
}

int sc_program_parked(const sc_program *p) { return p->parked; }

sc_program *sc_unpark(const sc_program *p)
{
    sc_program *q = sc_parse_file(p->file, NULL, 0, NULL);
    if (q && (q->len != p->text_len || text_hash(q->src, q->len) != p->text_hash)) {
        sc_program_free(q);
        return NULL;
    }
    return q;
}

int sc_program_changed(const sc_program *p)
{
    if (!p->parked)
        return 0;
    FILE *f = fopen(p->file, "rb");
    if (!f)
        return 1;
    uint64_t h = IX_FNV_BASIS;
    size_t n = 0, got, skip = 0;
    char buf[1 << 16];
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (n == 0 && got >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
            skip = 3;   /* as sc_parse: a byte order mark is not text */
        h = ix_hash_more(h, buf + skip, got - skip);
        n += got - skip;
        skip = 0;
    }
    fclose(f);
    return n != p->text_len || h != p->text_hash;
}

static int parked_error(const sc_program *p, rp_scenario *out, const char *why)
{
    char msg[600];
    snprintf(msg, sizeof msg, "%s: %s", p->file, why);
    out->status = RP_ERROR;
    if (!out->file)
        rp_scenario_set_file(out, p->file);
    rp_scenario_set_error(out, msg);
    return -1;
}

int sc_run_parked(const sc_program *p, const sc_options *o, rp_scenario *out)
{
    char *diag = NULL;
    size_t dlen = 0;
    FILE *m = open_memstream(&diag, &dlen);
    int nerr = 0;
    sc_program *q = sc_parse_file(p->file, m, 0, &nerr);
    if (m)
        fclose(m);
    int rc;
    if (!q) {
        char why[480];
        size_t l = diag ? strcspn(diag, "\n") : 0;
        snprintf(why, sizeof why, "does not parse any more (it did when the run began): %.*s",
                 (int)(l < 400 ? l : 400), diag ? diag : "");
        rc = parked_error(p, out, er_kind_get() == ER_OOM ? "out of memory parsing it again"
                                                          : why);
    } else if (q->len != p->text_len || text_hash(q->src, q->len) != p->text_hash) {
        rc = parked_error(p, out, "changed since the run began (every file is parsed first)");
    } else {
        rc = sc_run(q, o, out);
    }
    free(diag);
    sc_program_free(q);
    return rc;
}
