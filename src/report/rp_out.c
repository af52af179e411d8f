/* rp_out.c - report files written whole or not at all (cli.md "Reports:
 * stable, typed, safe to consume"): a temporary file in the same folder,
 * renamed into place once everything was written. */
#include "report/rp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rp_out_open(rp_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!path || strcmp(path, "-") == 0) {
        o->path = NULL;
        o->f = stdout;
        return 0;
    }
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof o->tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int rp_out_commit(rp_out *o)
{
    if (!o->f)
        return 0;
    if (!o->path) {
        int bad = fflush(o->f) != 0 || ferror(o->f);
        o->f = NULL;
        return bad ? -1 : 0;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(o->tmp);
        errno = e;
        return -1;
    }
    return 0;
}

void rp_out_abort(rp_out *o)
{
    if (!o->f)
        return;
    if (o->path) {
        fclose(o->f);
        unlink(o->tmp);
    }
    o->f = NULL;
}
