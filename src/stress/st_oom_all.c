/* st_oom_all.c - an oom campaign over many files (st_setup.h). */
#include "stress/st_setup.h"

size_t st_oom_parse_all(st_oom_doc *d, char *const *files, size_t n, int color,
                        sc_program **progs, size_t *nprogs)
{
    for (size_t i = 0; i < n; i++) {
        sc_program *p = sc_parse_file(files[i], stderr, color, NULL);
        if (p)
            progs[(*nprogs)++] = p;
        else
            st_oom_doc_unparsed(d, files[i]);
    }
    return d->unparsed;
}

void st_oom_all(st_oom_doc *d, st_oom_opts *o, sc_program *const *progs, size_t n,
                const st_oom_shard *shard)
{
    for (size_t i = 0; i < n; i++) {
        const char *file = sc_program_file(progs[i]);
        o->name = file;
        st_oom_result r;
        int rc = st_oom_forked(progs[i], o, &r);
        st_oom_doc_scenario(d, file, rc, &r);
        if (!d->json && shard->n && rc >= 0 && !r.crashed && !r.finding && r.nfindings)
            fprintf(stderr, "%s: shard %u/%u: %s; in one process: %s %s\n", shard->who,
                    shard->k, shard->n, file, shard->repro, file);
    }
    st_oom_doc_end(d, NULL);
}
