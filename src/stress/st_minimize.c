/* st_minimize.c - one scenario file minimized (st_minimize.h). */
#include "stress/st_minimize.h"

#include <string.h>

#include "alloc/al.h"

/* The whole file as a string from the allocator (*cap bytes, free with
 * al_free), or NULL. */
static char *read_all(const char *path, size_t *cap_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = al_malloc(cap, AL_K_SCENARIO, "shrink source");
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = al_realloc(buf, cap, cap * 2, AL_K_SCENARIO, "shrink source");
            if (!nb) {
                al_free(buf, cap, AL_K_SCENARIO);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        len += r;
        if (r == 0)
            break;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    *cap_out = cap;
    return buf;
}

/* How src fails (o), and whether the smaller candidates must pass without
 * the injected bugs: the outcome so far. */
static int first_run(const st_env *e, const char *file, const char *src, st_minimized *m,
                     st_outcome *o, int *check_clean)
{
    st_run_forked(e, file, src, 0, o);
    if (o->status == ST_PASS) {
        fprintf(stderr, "%s: %s does not fail: nothing to shrink\n", m->who, file);
        return ST_MIN_PASSES;
    }
    if (o->status == ST_PARSE)
        return ST_MIN_BAD;
    *check_clean = e->inject && *e->inject;
    if (*check_clean) {
        st_outcome clean;
        st_run_forked(e, file, src, 1, &clean);
        if (clean.status != ST_PASS) {
            fprintf(stderr, "%s: %s fails without --inject %s too; shrinking without the "
                            "clean check\n", m->who, file, e->inject);
            *check_clean = 0;
        }
    }
    if (!m->quiet)
        fprintf(stderr, "%s: keeping \"%s\" (%s)\n", m->who, o->cls[0], o->first);
    return ST_MIN_DONE;
}

int st_minimize_file(const st_env *e, const char *file, FILE *out, st_minimized *m)
{
    sc_program *p = sc_parse_file(file, stderr, m->color, NULL);
    if (!p)
        return ST_MIN_BAD;
    sc_program_free(p);
    size_t cap = 0;
    char *src = read_all(file, &cap);
    if (!src) {
        fprintf(stderr, "%s: cannot read %s\n", m->who, file);
        return ST_MIN_BAD;
    }
    st_outcome o;
    int check_clean = 0;
    int outcome = first_run(e, file, src, m, &o, &check_clean);
    st_text res = {0};
    if (outcome == ST_MIN_DONE && st_shrink_text(e, src, o.cls[0], check_clean, &res,
                                                 &m->stats) < 0) {
        fprintf(stderr, "%s: out of memory while shrinking\n", m->who);
        outcome = ST_MIN_OOM;
    } else if (outcome == ST_MIN_DONE) {
        m->before = st_count_statements(src);
        fprintf(out, "# %s\n# shrunk from %s by fakegc shrink\n", o.cls[0], file);
        fputs(res.p ? res.p : "", out);
    }
    st_text_free(&res);
    al_free(src, cap, AL_K_SCENARIO);
    return outcome;
}
