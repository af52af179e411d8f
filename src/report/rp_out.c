/* rp_out.c - temporary file in the target's folder, renamed into place. */
#include "report/rp_out.h"

#include <errno.h>
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

int rp_out_same_file(const char *path, const char *other)
{
    struct stat a, b;
    if (stat(path, &a) != 0 || stat(other, &b) != 0)
        return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}
