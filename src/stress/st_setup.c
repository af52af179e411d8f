/* st_setup.c - a stress campaign's options from plain values (st_setup.h). */
#include "stress/st_setup.h"

#include <stdio.h>
#include <unistd.h>

#include "fake/fk.h"
#include "report/rp_out.h"

int st_campaign_check(st_stress_opts *o, const st_campaign *c, char *err, size_t n)
{
    if (c->weights && st_weights_parse(&o->cfg.weights, c->weights, err, n) < 0)
        return -1;
    if (c->gc == SC_GC_AUTO) {
        snprintf(err, n, "--gc auto: the model cannot predict threshold collections; use "
                         "manual or stress");
        return -1;
    }
    char why[512];
    /* without --compat the lifecycles run the default design: a bug that
     * does not apply to it is a usage error too */
    if (c->design < 0 && fk_inject_check(c->inject, FK_D_DEFAULT, why, sizeof why) != 0) {
        snprintf(err, n, "--inject: %s", why);
        return -1;
    }
    if (o->out_dir && rp_out_dir(o->out_dir, why, sizeof why) < 0) {
        snprintf(err, n, "--out-dir %s: %s", o->out_dir, why);
        return -1;
    }
    o->shard_k = c->shard_k;
    o->shard_n = c->shard_n ? c->shard_n : 1;
    o->shrink = c->shrink;
    o->max_steps = !c->steps && c->seconds <= 0 ? 100000 : c->steps;
    o->max_seconds = c->seconds;
    return 0;
}

void st_env_set(st_env *e, const char *inject, int gc, int sweep, int design)
{
    st_env_default(e);
    e->inject = inject ? inject : "";
    e->sc.gc = gc;
    e->sc.sweep = sweep;
    e->sc.design = design;
}

void st_campaign_env(st_stress_opts *o, const st_campaign *c)
{
    o->cfg.defer_callbacks = c->defer;
    o->cfg.gc_stress = c->gc == SC_GC_STRESS;
    fk_design_id design = c->design >= 0 ? (fk_design_id)c->design : FK_D_DEFAULT;
    o->cfg.design = (int)design;
    o->cfg.policy = c->sweep >= 0 ? c->sweep : (int)fk_design_get(design)->policy;
    o->cfg.sweep_every = 128;
    st_env_set(&o->env, c->inject, c->gc, c->sweep, c->design);
    o->env.sc.end_check = 1;
    st_env_prepare(&o->env);
    o->check_clean = c->inject && *c->inject;
    o->progress = !c->quiet && isatty(2);
}

int st_dump(const st_config *cfg, uint64_t seed, FILE *f)
{
    st_script s = {0};
    st_text t = {0};
    int rc = st_generate(cfg, seed, &s, &t, NULL, NULL);
    if (rc >= 0)
        fputs(t.p ? t.p : "", f);
    st_script_free(&s);
    st_text_free(&t);
    return rc < 0 ? -1 : 0;
}
