/* wk_pool.c - reused children for many jobs, their anonymous files, and
 * pieces of output put back in order (see wk.h).
 *
 * The parent talks to worker k over a socketpair: it sends a job's index
 * with the job's files attached (SCM_RIGHTS), the worker answers with the
 * index when the job is done. End of file on the socket is the worker's
 * death. The files are made (and unlinked) by the parent, so it holds what
 * the job wrote even when the worker dies in the middle, and nothing has a
 * name in the file system that a SIGKILL could leave behind. */
#include "worker/wk.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc/al.h"
#include "worker/wk_int.h"

/* ---- anonymous files ---- */

int wk_tmpfile(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
#ifdef O_TMPFILE
    int fd = open(tmp, O_TMPFILE | O_RDWR, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
#endif
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/fakegc-XXXXXX", tmp) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int f = mkstemp(path);
    if (f >= 0)
        unlink(path);
    return f;
}

/* ---- the pool ---- */

typedef struct slot {
    pid_t pid;                   /* 0: no worker */
    int sock;                    /* the parent's end */
    int err;                     /* the worker's stderr (an anonymous file) */
    int files[WK_MAX_FILES];     /* the job in hand's, or -1 */
    size_t job;
    int busy;
} slot;

typedef struct pool {
    const wk_pool_ops *ops;
    size_t njobs, nw;
    slot *s;
    wk_found *found;             /* nw records, shared with the workers */
    size_t found_size;
    struct pollfd *pf;
    size_t *map;
} pool;

static void close_files(int *files)
{
    for (size_t i = 0; i < WK_MAX_FILES; i++) {
        if (files[i] >= 0)
            close(files[i]);
        files[i] = -1;
    }
}

/* A message: the index, with room for up to WK_MAX_FILES fds. The room is
 * CMSG_SPACE(sizeof(int) * WK_MAX_FILES) or more (the header, the fds, and
 * their padding to a size_t), aligned as a cmsghdr: a cmsghdr itself ends
 * in a flexible array, which may not sit in the middle of a struct. */
#define INDEX_ROOM (sizeof(struct cmsghdr) + sizeof(int) * WK_MAX_FILES + sizeof(size_t))
typedef struct index_msg {
    struct iovec iov;
    struct {
        _Alignas(struct cmsghdr) char buf[INDEX_ROOM];
    } u;
    struct msghdr m;
} index_msg;

/* The message of *idx with controllen bytes of room for fds (0: none). */
static struct msghdr *msg_init(index_msg *x, uint64_t *idx, size_t controllen)
{
    memset(x, 0, sizeof *x);
    x->iov.iov_base = idx;
    x->iov.iov_len = sizeof *idx;
    x->m.msg_iov = &x->iov;
    x->m.msg_iovlen = 1;
    if (controllen) {
        x->m.msg_control = x->u.buf;
        x->m.msg_controllen = controllen;
    }
    return &x->m;
}

static int send_index(int sock, uint64_t idx, const int *fds, size_t nfds)
{
    index_msg x;
    struct msghdr *m = msg_init(&x, &idx, nfds ? CMSG_SPACE(sizeof(int) * nfds) : 0);
    if (nfds) {
        struct cmsghdr *c = CMSG_FIRSTHDR(m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    ssize_t r;
    while ((r = sendmsg(sock, m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return r == (ssize_t)sizeof idx ? 0 : -1;
}

/* 1 with *idx (and fds, -1 where none came), 0 at end of file, -1 error. */
static int recv_index(int sock, uint64_t *idx, int *fds, size_t nfds)
{
    index_msg x;
    struct msghdr *m = msg_init(&x, idx, sizeof x.u.buf);
    for (size_t i = 0; i < nfds; i++)
        fds[i] = -1;
    ssize_t r;
    while ((r = recvmsg(sock, m, 0)) < 0 && errno == EINTR)
        ;
    if (r == 0)
        return 0;
    if (r != (ssize_t)sizeof *idx)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            int tmp[WK_MAX_FILES];
            memcpy(tmp, CMSG_DATA(c), (got < WK_MAX_FILES ? got : WK_MAX_FILES) * sizeof(int));
            for (size_t i = 0; i < got && i < WK_MAX_FILES; i++) {
                if (i < nfds)
                    fds[i] = tmp[i];
                else
                    close(tmp[i]);
            }
        }
    return 1;
}

static void worker_main(pool *p, size_t k, pid_t parent)
{
    const wk_pool_ops *ops = p->ops;
    wk_child_setup(&p->found[k], parent, 0);
    for (size_t i = 0; i < p->nw; i++)   /* the others' ends would hide their EOF */
        if (i != k && p->s[i].pid) {
            close(p->s[i].sock);
            close(p->s[i].err);
            close_files(p->s[i].files);
        }
    int sock = p->s[k].sock;
    if (dup2(p->s[k].err, 2) < 0)
        _exit(WK_EXIT_LOST);
    close(p->s[k].err);
    uint64_t idx;
    int files[WK_MAX_FILES];
    for (size_t i = 0; i < WK_MAX_FILES; i++)
        files[i] = -1;           /* recv_index sets only ops->nfiles */
    while (recv_index(sock, &idx, files, ops->nfiles) == 1) {
        /* stderr holds this job's words only */
        if (ftruncate(2, 0) < 0 || lseek(2, 0, SEEK_SET) < 0)
            _exit(WK_EXIT_LOST);
        wk_on_finding(NULL, NULL);
        alarm(ops->timeout);
        int rc = idx < p->njobs ? ops->run(ops->arg, (size_t)idx, files) : -1;
        alarm(0);
        close_files(files);
        if (rc < 0 || send_index(sock, idx, NULL, 0) < 0)
            _exit(WK_EXIT_LOST);
    }
    _exit(0);
}

static int spawn(pool *p, size_t k)
{
    slot *w = &p->s[k];
    int sv[2];
    w->err = wk_tmpfile();
    if (w->err < 0)
        return -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
        int e = errno;
        close(w->err);
        errno = e;
        return -1;
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        close(w->err);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        w->sock = sv[1];
        w->pid = getpid();   /* so that worker_main keeps its own */
        worker_main(p, k, parent);
    }
    close(sv[1]);
    w->pid = pid;
    w->sock = sv[0];
    w->busy = 0;
    return 0;
}

/* The last non-empty line of worker k's stderr (its tail), or "". */
static void said(const slot *w, char *msg, size_t n)
{
    char buf[4096];
    msg[0] = '\0';
    struct stat st;
    if (fstat(w->err, &st) < 0 || st.st_size <= 0)
        return;
    off_t from = st.st_size > (off_t)sizeof buf - 1 ? st.st_size - (off_t)sizeof buf + 1 : 0;
    ssize_t r = pread(w->err, buf, sizeof buf - 1, from);
    if (r <= 0)
        return;
    buf[r] = '\0';
    while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == '\r'))
        buf[--r] = '\0';
    char *line = strrchr(buf, '\n');
    snprintf(msg, n, "%s", line ? line + 1 : buf);
}

static void finish(pool *p, size_t k, const wk_end *e)
{
    slot *w = &p->s[k];
    for (size_t i = 0; i < p->ops->nfiles; i++)
        if (w->files[i] >= 0)
            lseek(w->files[i], 0, SEEK_SET);
    w->busy = 0;
    p->ops->done(p->ops->arg, w->job, e, w->files);
    close_files(w->files);
}

/* Worker k is gone (EOF on its socket): reap it; its job ends as it did. */
static void death(pool *p, size_t k)
{
    slot *w = &p->s[k];
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    close(w->sock);
    w->pid = 0;
    wk_end e;
    wk_judge(status, &p->found[k], p->ops->timeout, &e);
    if (e.how == WK_OK) {   /* it exited 0 without answering */
        e.how = WK_EXIT;
        e.code = 0;
    }
    if (e.how != WK_FINDING)
        said(w, e.what, sizeof e.what);
    close(w->err);
    if (w->busy)
        finish(p, k, &e);
}

/* Hand a job to every idle worker (starting one where needed). */
static void dispatch(pool *p, size_t *next, int stop)
{
    const wk_pool_ops *ops = p->ops;
    for (size_t k = 0; k < p->nw && *next < p->njobs && !stop; k++) {
        slot *w = &p->s[k];
        if (w->pid && w->busy)
            continue;
        wk_end e;
        size_t job = (*next)++;
        w->job = job;
        int i = 0;
        for (; (size_t)i < ops->nfiles; i++)
            if ((w->files[i] = wk_tmpfile()) < 0)
                break;
        if ((size_t)i < ops->nfiles) {
            wk_lost(&e, "cannot make a temporary file", errno);
        } else if (!w->pid && spawn(p, k) < 0) {
            wk_lost(&e, "cannot start a worker", errno);
        } else {
            memset(&p->found[k], 0, sizeof p->found[k]);
            w->busy = 1;
            /* a worker that died in between: the EOF on its socket says so */
            (void)send_index(w->sock, job, w->files, ops->nfiles);
            continue;
        }
        w->busy = 1;
        finish(p, k, &e);
        k--;   /* the same worker, the next job */
    }
}

static int await(pool *p)
{
    size_t m = 0;
    for (size_t k = 0; k < p->nw; k++)
        if (p->s[k].pid && p->s[k].busy) {
            p->pf[m].fd = p->s[k].sock;
            p->pf[m].events = POLLIN;
            p->map[m++] = k;
        }
    if (m == 0)
        return 0;
    if (poll(p->pf, m, -1) < 0)
        return errno == EINTR ? 0 : -1;
    for (size_t j = 0; j < m; j++) {
        if (!(p->pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        size_t k = p->map[j];
        uint64_t idx;
        int none[1];
        int r = recv_index(p->s[k].sock, &idx, none, 0);
        if (r == 1 && idx == p->s[k].job) {
            wk_end e;
            memset(&e, 0, sizeof e);
            e.how = WK_OK;
            finish(p, k, &e);
        } else {
            death(p, k);
        }
    }
    return 0;
}

static size_t busy(const pool *p)
{
    size_t b = 0;
    for (size_t k = 0; k < p->nw; k++)
        b += p->s[k].pid && p->s[k].busy;
    return b;
}

static void shutdown_pool(pool *p)
{
    for (size_t k = 0; k < p->nw; k++)
        if (p->s[k].pid)
            shutdown(p->s[k].sock, SHUT_WR);   /* EOF: the worker exits */
    for (size_t k = 0; k < p->nw; k++)
        if (p->s[k].pid) {
            while (waitpid(p->s[k].pid, NULL, 0) < 0 && errno == EINTR)
                ;
            close(p->s[k].sock);
            close(p->s[k].err);
            p->s[k].pid = 0;
        }
}

static void free_pool(pool *p)
{
    al_free(p->s, p->s ? p->nw * sizeof *p->s : 0, AL_K_SCENARIO);
    al_free(p->pf, p->pf ? p->nw * sizeof *p->pf : 0, AL_K_SCENARIO);
    al_free(p->map, p->map ? p->nw * sizeof *p->map : 0, AL_K_SCENARIO);
    if (p->found)
        munmap(p->found, p->found_size);
}

int wk_pool_run(const wk_pool_ops *ops, size_t njobs, size_t nworkers, char *err, size_t errn)
{
    pool p;
    memset(&p, 0, sizeof p);
    p.ops = ops;
    p.njobs = njobs;
    p.nw = nworkers ? (nworkers < njobs ? nworkers : njobs) : 1;
    if (njobs == 0)
        return 0;
    if (ops->nfiles > WK_MAX_FILES) {
        snprintf(err, errn, "at most %d files per job", WK_MAX_FILES);
        return -1;
    }
    int probe = wk_tmpfile();   /* an unusable TMPDIR stops us before any job */
    if (probe < 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(err, errn, "cannot make a temporary file in %s: %s",
                 tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    close(probe);
    p.found_size = p.nw * sizeof *p.found;
    p.found = mmap(NULL, p.found_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p.found == MAP_FAILED) {
        p.found = NULL;
        snprintf(err, errn, "mmap: %s", strerror(errno));
        return -1;
    }
    p.s = al_calloc(p.nw, sizeof *p.s, AL_K_SCENARIO, "wk slots");
    p.pf = al_calloc(p.nw, sizeof *p.pf, AL_K_SCENARIO, "wk polls");
    p.map = al_calloc(p.nw, sizeof *p.map, AL_K_SCENARIO, "wk map");
    if (!p.s || !p.pf || !p.map) {
        free_pool(&p);
        snprintf(err, errn, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < p.nw; k++)
        for (size_t i = 0; i < WK_MAX_FILES; i++)
            p.s[k].files[i] = -1;
    size_t next = 0;
    int rc = 0, told = 0;
    for (;;) {
        int stop = ops->stop ? ops->stop() : 0;
        dispatch(&p, &next, stop);
        if (busy(&p) == 0)
            break;
        if (stop > 0 && !told) {   /* the jobs in hand stop too */
            for (size_t k = 0; k < p.nw; k++)
                if (p.s[k].pid && p.s[k].busy)
                    kill(p.s[k].pid, stop);
            told = 1;
        }
        if (await(&p) < 0) {
            snprintf(err, errn, "waiting for the workers: %s", strerror(errno));
            rc = -1;
            break;
        }
    }
    shutdown_pool(&p);
    for (size_t k = 0; k < p.nw; k++)
        close_files(p.s[k].files);
    free_pool(&p);
    return rc;
}

/* ---- pieces in index order ---- */

int wk_spool_init(wk_spool *s, size_t n)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->n = n;
    s->off = al_calloc(n ? n : 1, sizeof *s->off, AL_K_SCENARIO, "wk spool");
    s->len = al_calloc(n ? n : 1, sizeof *s->len, AL_K_SCENARIO, "wk spool");
    if (!s->off || !s->len) {
        wk_spool_free(s);
        errno = ENOMEM;
        return -1;
    }
    s->fd = wk_tmpfile();
    if (s->fd < 0) {
        int e = errno;
        wk_spool_free(s);
        errno = e;
        return -1;
    }
    return 0;
}

static int write_all(int fd, const char *b, size_t n, off_t at)
{
    while (n > 0) {
        ssize_t w = at >= 0 ? pwrite(fd, b, n, at) : write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
        if (at >= 0)
            at += w;
    }
    return 0;
}

int wk_spool_add(wk_spool *s, size_t idx, int fd)
{
    char buf[1 << 16];
    uint64_t start = s->end, len = 0;
    off_t at = 0;
    for (;;) {
        ssize_t r = pread(fd, buf, sizeof buf, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        if (write_all(s->fd, buf, (size_t)r, (off_t)(start + len)) < 0)
            return -1;
        at += r;
        len += (uint64_t)r;
    }
    if (idx < s->n) {
        s->off[idx] = start;
        s->len[idx] = len;
    }
    s->end = start + len;
    return 0;
}

int wk_spool_write(const wk_spool *s, FILE *to, int (*keep)(void *arg, size_t idx), void *arg)
{
    char buf[1 << 16];
    for (size_t i = 0; i < s->n; i++) {
        if (keep && !keep(arg, i))
            continue;
        uint64_t left = s->len[i], at = s->off[i];
        while (left > 0) {
            size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
            ssize_t r = pread(s->fd, buf, want, (off_t)at);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            if (fwrite(buf, 1, (size_t)r, to) != (size_t)r)
                return -1;
            left -= (uint64_t)r;
            at += (uint64_t)r;
        }
    }
    return ferror(to) ? -1 : 0;
}

void wk_spool_free(wk_spool *s)
{
    if (s->fd >= 0)
        close(s->fd);
    al_free(s->off, s->off ? (s->n ? s->n : 1) * sizeof *s->off : 0, AL_K_SCENARIO);
    al_free(s->len, s->len ? (s->n ? s->n : 1) * sizeof *s->len : 0, AL_K_SCENARIO);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
