/* rp_out.c - temporary file in the target's folder, renamed into place. */
#include "report/rp_out.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(char *err, size_t n, const char *path, int e)
{
    if (err && n)
        snprintf(err, n, "%s: %s", path, strerror(e));
}

static void release(rp_out *o)
{
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    o->f = NULL;
}

/* "DIR/.NAME.fakegc-XXXXXX" for target "DIR/NAME" (or "NAME"). */
static char *tmp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    size_t n = dirlen + 1 + strlen(base) + sizeof ".fakegc-XXXXXX";
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%.*s.%s.fakegc-XXXXXX", (int)dirlen, path, base);
    return t;
}

int rp_out_open(rp_out *o, const char *path, char *err, size_t n)
{
    memset(o, 0, sizeof *o);
    o->path = strdup(path);
    if (!o->path) {
        say(err, n, path, ENOMEM);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            say(err, n, path, EISDIR);
            release(o);
            return -1;
        }
        o->f = fopen(path, "w");
        if (!o->f) {
            say(err, n, path, errno);
            release(o);
            return -1;
        }
        return 0;
    }
    o->tmp = tmp_template(path);
    int fd = o->tmp ? mkstemp(o->tmp) : (errno = ENOMEM, -1);
    if (fd < 0) {
        say(err, n, path, errno);
        release(o);
        return -1;
    }
    /* mkstemp makes 0600; a report is as readable as any file the user
     * makes (umask applies), or keeps the mode of the file it replaces */
    mode_t um = umask(0);
    umask(um);
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~um);
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        say(err, n, path, e);
        release(o);
        return -1;
    }
    return 0;
}

int rp_out_commit(rp_out *o, char *err, size_t n)
{
    if (!o->f) {
        release(o);
        return 0;
    }
    int e = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    if (!e && o->tmp && fsync(fileno(o->f)) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->tmp && rename(o->tmp, o->path) != 0)
        e = errno;
    if (e) {
        if (o->tmp)
            unlink(o->tmp);
        say(err, n, o->path, e);
        release(o);
        return -1;
    }
    release(o);
    return 0;
}

void rp_out_abort(rp_out *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
}

/* The real path of path's folder and its last name. 0, or -1 (no such
 * folder). */
static int real_target(const char *path, char *buf, size_t n)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
    if (!realpath(dir, real))
        return -1;
    snprintf(buf, n, "%s/%s", real, base);
    return 0;
}

int rp_out_same_target(const char *a, const char *b)
{
    struct stat sa, sb;
    char ra[2 * PATH_MAX], rb[2 * PATH_MAX];
    if (strcmp(a, b) == 0)
        return 1;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
        sa.st_ino == sb.st_ino)
        return 1;
    return real_target(a, ra, sizeof ra) == 0 && real_target(b, rb, sizeof rb) == 0 &&
           strcmp(ra, rb) == 0;
}

int rp_out_dir(const char *dir, char *err, size_t n)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *q = buf + 1;; q++) {
        if (*q != '/' && *q != '\0')
            continue;
        char c = *q;
        *q = '\0';
        if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
            snprintf(err, n, "cannot create %s: %s", buf, strerror(errno));
            return -1;
        }
        *q = c;
        if (!c)
            break;
    }
    snprintf(buf, sizeof buf, "%s/.fakegc-probe-%ld", dir, (long)getpid());
    int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        snprintf(err, n, "cannot write in it: %s", strerror(errno));
        return -1;
    }
    close(fd);
    unlink(buf);
    return 0;
}

/* ---- a command's outputs ---- */

int rp_outs_open(rp_outs *s, const char *const *names, const char *const *paths, size_t n,
                 char *err, size_t errn)
{
    char why[600];
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n && i < RP_OUTS_MAX; i++) {
        for (size_t j = 0; j < i; j++)
            if (rp_out_same_target(paths[j], paths[i])) {
                snprintf(err, errn, "%s and %s both name %s", names[j], names[i], paths[i]);
                rp_outs_abort(s);
                return -1;
            }
        if (rp_out_open(&s->v[i].o, paths[i], why, sizeof why) < 0) {
            snprintf(err, errn, "%s: cannot write %s", names[i], why);
            rp_outs_abort(s);
            return -1;
        }
        s->v[i].name = names[i];
        s->v[i].path = paths[i];
        s->n++;
    }
    return 0;
}

int rp_outs_setup(rp_outs *s, const char *const *names, const char *const *paths, size_t n,
                  const char *const *in_names, const char *const *in_paths, size_t nin,
                  char *err, size_t errn)
{
    if (rp_outs_open(s, names, paths, n, err, errn) < 0)
        return -1;
    for (size_t i = 0; i < nin; i++) {
        FILE *f = fopen(in_paths[i], "rb");
        if (!f) {
            snprintf(err, errn, "%s: cannot read %s: %s", in_names[i], in_paths[i],
                     strerror(errno));
            rp_outs_abort(s);
            return -1;
        }
        fclose(f);
    }
    if (rp_outs_not_inputs(s, in_paths, nin, err, errn) < 0) {
        rp_outs_abort(s);
        return -1;
    }
    return 0;
}

FILE *rp_outs_file(const rp_outs *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return s->v[i].o.f;
    return NULL;
}

int rp_outs_not_inputs(const rp_outs *s, const char *const *inputs, size_t n, char *err,
                       size_t errn)
{
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = 0; j < n; j++)
            if (rp_out_same_target(s->v[i].path, inputs[j])) {
                snprintf(err, errn, "%s %s is one of the inputs; refusing to overwrite it",
                         s->v[i].name, s->v[i].path);
                return -1;
            }
    return 0;
}

int rp_outs_commit(rp_outs *s, const char *who)
{
    char err[600];
    int rc = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].o.f && rp_out_commit(&s->v[i].o, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s: cannot write %s\n", who, s->v[i].name, err);
            rc = -1;
        }
    return rc;
}

void rp_outs_abort(rp_outs *s)
{
    for (size_t i = 0; i < s->n; i++)
        rp_out_abort(&s->v[i].o);
}
