/* rp_collect.c - one run's records put together from parts (see
 * rp_collect.h). */
#include "report/rp_collect.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/al.h"
#include "core/er.h"

/* A stdio stream over a copy of fd (the caller's fd stays open), or NULL. */
static FILE *dup_stream(int fd, const char *mode)
{
    int d = dup(fd);
    FILE *f = d < 0 ? NULL : fdopen(d, mode);
    if (!f && d >= 0)
        close(d);
    return f;
}

int rp_collect_init(rp_collect *c, size_t n, int timelines)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->res = al_calloc(n ? n : 1, sizeof *c->res, AL_K_REPORT, "rp collect");
    c->pools = al_calloc(n ? n : 1, sizeof *c->pools, AL_K_REPORT, "rp collect pools");
    if (timelines)
        c->tl = al_calloc(n ? n : 1, sizeof *c->tl, AL_K_REPORT, "rp collect timelines");
    if (!c->res || !c->pools || (timelines && !c->tl)) {
        rp_collect_free(c);
        return -1;
    }
    return 0;
}

void rp_collect_free(rp_collect *c)
{
    size_t cap = c->n ? c->n : 1;
    for (size_t i = 0; i < c->n; i++) {
        if (c->res)
            rp_scenario_clear(&c->res[i]);
        if (c->tl)
            rp_timeline_clear(&c->tl[i]);
    }
    al_free(c->res, c->res ? cap * sizeof *c->res : 0, AL_K_REPORT);
    al_free(c->tl, c->tl ? cap * sizeof *c->tl : 0, AL_K_REPORT);
    for (size_t i = 0; i < c->npools; i++)   /* after the records pointing into them */
        rp_read_pool_free(c->pools[i]);
    al_free(c->pools, c->pools ? cap * sizeof *c->pools : 0, AL_K_REPORT);
    memset(c, 0, sizeof *c);
}

int rp_collect_write_one(int fd, const rp_scenario *s)
{
    rp_run one;
    memset(&one, 0, sizeof one);
    one.tool = "fakegc";
    one.scenarios = (rp_scenario *)s;
    one.n = 1;
    rp_run_count(&one);
    FILE *f = dup_stream(fd, "w");
    if (!f)
        return -1;
    rp_options ro = {0};
    int bad = rp_write(&one, RP_JSON, f, &ro) != 0;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

void rp_collect_error(rp_collect *c, size_t i, const char *file, const char *msg)
{
    rp_scenario *s = &c->res[i];
    rp_scenario_clear(s);
    s->status = RP_ERROR;
    rp_scenario_set_file(s, file);
    rp_scenario_set_error(s, msg);
    er_clear();
}

void rp_collect_finding(rp_collect *c, size_t i, const char *file, uint32_t line,
                        const char *kind, const char *what)
{
    rp_scenario *s = &c->res[i];
    char text[160];
    snprintf(text, sizeof text, "finding: %s", kind);
    rp_scenario_clear(s);
    rp_scenario_set_file(s, file);
    s->status = RP_FAIL;
    s->failed = 1;
    rp_scenario_add_failure(s, line, 0, text, what,
                            "a bad access caught at this statement (by the guard allocator, "
                            "or a decref of a dead object); the scenario stopped here");
    er_clear();
}

/* fd's whole content, NUL-terminated (AL_K_REPORT, *len + 1 bytes), or NULL
 * with why in err. */
static char *slurp(int fd, size_t *len, char *err, size_t n)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, n, "%s", strerror(errno));
        return NULL;
    }
    if (st.st_size <= 0) {
        snprintf(err, n, "no scenario in it");
        return NULL;
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = al_malloc(size + 1, AL_K_REPORT, "rp collect record");
    if (!buf) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    while (got < size) {
        ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

int rp_collect_read(rp_collect *c, size_t i, int fd, const char *file)
{
    rp_scenario *s = &c->res[i];
    char err[256] = "", msg[320];
    size_t len = 0;
    rp_run rr;
    memset(&rr, 0, sizeof rr);
    char *text = slurp(fd, &len, err, sizeof err);
    int ok = text && rp_read_json_text(text, len, file, &rr, err, sizeof err) == 0;
    al_free(text, text ? len + 1 : 0, AL_K_REPORT);
    if (ok && rr.n == 1 && c->npools < c->n) {   /* one read per scenario at most */
        c->pools[c->npools++] = rr.owned;
        rp_scenario_clear(s);
        *s = rr.scenarios[0];
        memset(&rr.scenarios[0], 0, sizeof rr.scenarios[0]);
        rr.owned = NULL;   /* s points into it: kept until rp_collect_free */
        rp_run_free_read(&rr);
        return 0;
    }
    if (ok)
        snprintf(err, sizeof err, "%s", rr.n == 1 ? "read twice" : "no scenario in it");
    if (ok || rr.scenarios)
        rp_run_free_read(&rr);
    snprintf(msg, sizeof msg, "cannot read the worker's report: %s", err);
    rp_collect_error(c, i, file, msg);
    return -1;
}

int rp_collect_load_timeline(rp_collect *c, size_t i, int fd)
{
    rp_timeline *t = &c->tl[i];
    rp_timeline_clear(t);
    FILE *f = dup_stream(fd, "r");
    if (!f)
        return -1;
    int rc = rp_timeline_load(f, t);
    fclose(f);
    return rc;
}

size_t rp_collect_keep_finished(rp_collect *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->res[i].file) {
            rp_scenario_clear(&c->res[i]);
            if (c->tl)
                rp_timeline_clear(&c->tl[i]);
            continue;
        }
        if (k != i) {
            c->res[k] = c->res[i];
            memset(&c->res[i], 0, sizeof c->res[i]);
            if (c->tl) {
                rp_timeline_clear(&c->tl[k]);
                c->tl[k] = c->tl[i];
                memset(&c->tl[i], 0, sizeof c->tl[i]);
            }
        }
        k++;
    }
    return k;
}

void rp_collect_not_run(rp_collect *c, char *const *files, char *const *diags)
{
    for (size_t i = 0; i < c->n; i++) {
        const char *d = diags[i];
        size_t l = d ? strlen(d) : 0;
        while (l && d[l - 1] == '\n')
            l--;
        char *msg = al_malloc(l + 1, AL_K_REPORT, "rp collect diagnostics");
        if (msg) {
            memcpy(msg, d ? d : "", l);
            msg[l] = '\0';
        }
        rp_collect_error(c, i, files[i], d ? (msg ? msg : "out of memory")
                                           : "not run: another file did not parse");
        c->res[i].status = d ? RP_ERROR : RP_SKIP;
        al_free(msg, msg ? l + 1 : 0, AL_K_REPORT);
    }
}

void rp_collect_run(rp_collect *c, rp_run *run, size_t n, const char *inject)
{
    memset(run, 0, sizeof *run);
    size_t k = 0;
    snprintf(c->inject_buf, sizeof c->inject_buf, "%s", inject ? inject : "");
    char *save = NULL;
    for (char *tok = strtok_r(c->inject_buf, ",", &save); tok && k < 32;
         tok = strtok_r(NULL, ",", &save))
        c->inject[k++] = tok;
    run->inject = c->inject;
    run->ninject = k;
    run->scenarios = c->res;
    run->n = n;
    rp_run_count(run);
}

void rp_collect_stream(rp_collect *c, FILE *f, const rp_options *o, int clear)
{
    c->stream = f;
    c->stream_ro = *o;
    c->stream_clear = clear;
}

void rp_collect_said(rp_collect *c, size_t i)
{
    const rp_scenario *s = &c->res[i];
    if (!c->stream || (c->stream_ro.quiet && (s->status == RP_PASS || s->status == RP_SKIP)))
        return;
    if (c->stream_clear)
        fputs("\r\033[K", stderr);
    rp_write_status_line(s, c->stream, &c->stream_ro);
    fflush(c->stream);
}

void rp_collect_say_stopped(FILE *f, const char *cmd, const rp_run *run)
{
    if (!run->interrupted)
        return;
    if (strcmp(run->interrupted, "max-failures") != 0)
        fprintf(f, "%s: interrupted by %s: the report holds the scenarios that finished\n"
                "%zu of %zu finished: %u passed, %u failed\n", cmd, run->interrupted, run->n,
                run->planned, run->passed, run->failed);
    else
        fprintf(f, "%s: stopped after %u failed scenario%s (--max-failures): %zu of %zu ran\n",
                cmd, run->failed, run->failed == 1 ? "" : "s", run->n, run->planned);
}
