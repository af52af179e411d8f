/* st_setup.h - a stress campaign's options from plain values (what a
 * command line gave), checked before any work, and the environment its
 * lifecycles and reproducers run in.
 *
 *   st_stress_opts o;                  // st_config_default(&o.cfg), seed ...
 *   st_campaign c = {.inject = "early-free", .gc = -1, .sweep = -1,
 *                    .design = -1, .steps = 5000, .shrink = 1};
 *   char err[600];
 *   if (st_campaign_check(&o, &c, err, sizeof err) < 0) ...  // a usage error
 *   ... install the allocator and inject the bugs (c.inject) ...
 *   st_campaign_env(&o, &c);
 *   st_stress(&o, &r);
 */
#ifndef FAKEGC_ST_SETUP_H
#define FAKEGC_ST_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "stress/st.h"
#include "stress/st_report.h"

typedef struct st_campaign {
    const char *weights;      /* "N=W[,...]" (st_weights_parse), or NULL */
    const char *inject;       /* the injected bugs (CSV), or NULL */
    int gc;                   /* -1 (the scenario's own) or SC_GC_*; auto is refused */
    int sweep;                /* -1 (the design's policy) or fk_policy */
    int design;               /* -1 (the default design) or fk_design_id */
    uint64_t steps;           /* the budget (0 with seconds 0: 100000) */
    double seconds;           /* 0: no time limit */
    uint32_t shard_k, shard_n;   /* n 0: not sharded */
    int shrink;               /* minimize a failure */
    int defer;                /* weak callbacks at the next statement */
    int quiet;                /* no progress line */
} st_campaign;

/* Fill o's weights, budget, shard and shrink from c, and refuse what
 * cannot run: bad weights, --gc auto (the model cannot predict threshold
 * collections), a bug that does not apply to the default design when none
 * is given, an out_dir (o->out_dir, when not NULL) where no file can be
 * made. 0, or -1 with the message in err ("--inject: ...", "--out-dir
 * DIR: ..."). */
int st_campaign_check(st_stress_opts *o, const st_campaign *c, char *err, size_t n);

/* After the allocator is installed and the bugs injected: the model's
 * settings (design, sweep policy, gc stress, deferred callbacks) and the
 * lifecycles' environment (st_env_prepare, the strict end check). */
void st_campaign_env(st_stress_opts *o, const st_campaign *c);

/* --dump: the lifecycle of seed under cfg as it would run, on f. 0, or -1
 * (out of memory). */
int st_dump(const st_config *cfg, uint64_t seed, FILE *f);

/* e as st_env_default, then the command line's settings: the injected
 * bugs (NULL: none), gc, sweep and design (-1: the scenario's own). The
 * caller adds its own and calls st_env_prepare. */
void st_env_set(st_env *e, const char *inject, int gc, int sweep, int design);

/* ---- an oom campaign over many files (st_oom_all.c) ---- */

/* Parse files[0..n) (diagnostics on stderr, in colour when color) into
 * progs (room for n), *nprogs of them; each file that does not parse goes
 * to d (st_oom_doc_unparsed). The number that did not parse. */
size_t st_oom_parse_all(st_oom_doc *d, char *const *files, size_t n, int color,
                        sc_program **progs, size_t *nprogs);

/* Which shard a campaign is, and how to reproduce one of its findings. */
typedef struct st_oom_shard {
    uint32_t k, n;           /* n 0: not sharded */
    const char *repro;       /* the command line that runs one file in one process */
    const char *who;         /* "fakegc oom" */
} st_oom_shard;

/* Each program's loop (st_oom_forked with o, o->name set to its file),
 * its lines in d, then d's summary (d->findings, d->crashes). In a shard,
 * a program with findings is also said on stderr (text): "WHO: shard K/N:
 * FILE; in one process: REPRO FILE". */
void st_oom_all(st_oom_doc *d, st_oom_opts *o, sc_program *const *progs, size_t n,
                const st_oom_shard *shard);

#endif
