/* sc_files.c - collecting scenario files: a folder walk with a seen set of
 * (device, inode) pairs, then a sort. */
#include "scenario/sc_files.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc/al.h"
#include "core/ix.h"

static int files_push(sc_files *s, const char *str)
{
    if (al_grow(&s->v, &s->cap, s->n, sizeof *s->v, 32, AL_K_SCENARIO, "scenario files") < 0)
        return -2;
    char *d = al_strdup(str, AL_K_SCENARIO, "scenario file");
    if (!d)
        return -2;
    s->v[s->n++] = d;
    return 0;
}

void sc_files_free(sc_files *s)
{
    for (size_t i = 0; i < s->n; i++)
        al_free(s->v[i], strlen(s->v[i]) + 1, AL_K_SCENARIO);
    al_free(s->v, s->cap * sizeof *s->v, AL_K_SCENARIO);
    memset(s, 0, sizeof *s);
}

/* Does the glob match path, or the part of it after one of its slashes? */
static int glob_tail(const char *pattern, const char *path)
{
    for (const char *p = path; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
        if (fnmatch(pattern, p, 0) == 0)
            return 1;
    return 0;
}

int sc_files_path_matches(const char *pattern, const char *path)
{
    return strstr(path, pattern) || glob_tail(pattern, path);
}

/* Keep v[i] where keep(i) holds, freeing the others; the count kept. */
static size_t files_keep(sc_files *f, const char *pattern, uint32_t k, uint32_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < f->n; i++) {
        int keep = pattern ? sc_files_path_matches(pattern, f->v[i]) : i % n == k;
        if (keep)
            f->v[kept++] = f->v[i];
        else
            al_free(f->v[i], strlen(f->v[i]) + 1, AL_K_SCENARIO);
    }
    return f->n = kept;
}

size_t sc_files_match(sc_files *f, const char *pattern)
{
    return files_keep(f, pattern, 0, 1);
}

void sc_files_shard(sc_files *f, uint32_t k, uint32_t n)
{
    if (n)
        files_keep(f, NULL, k, n);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The (device, inode) pairs seen by one collection, in the order seen. */
typedef struct walk {
    const char *who;
    sc_files *out;
    struct walk_key { dev_t dev; ino_t ino; } *k;
    size_t n, cap;
    ix index;
} walk;

static int seen_eq(const void *ctx, uint32_t id, const void *key)
{
    const struct walk_key *a = &((const walk *)ctx)->k[id], *b = key;
    return a->dev == b->dev && a->ino == b->ino;
}

/* 1 if (dev, ino) was seen before, 0 if it is new (now recorded), -2 OOM. */
static int seen_add(walk *w, dev_t dev, ino_t ino)
{
    struct walk_key key = {dev, ino};
    uint64_t h = ix_hash_mix((uint64_t)dev, (uint64_t)ino);
    if (ix_find(&w->index, h, seen_eq, w, &key) != IX_NONE)
        return 1;
    if (al_grow(&w->k, &w->cap, w->n, sizeof *w->k, 64, AL_K_SCENARIO, "scenario walk seen") < 0 ||
        ix_add(&w->index, h, (uint32_t)w->n) != 0)
        return -2;
    w->k[w->n++] = key;
    return 0;
}

static int take(walk *w, const char *path, int depth, int named);

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder dir, hidden ones left out, sorted (so that of two
 * paths to one file the first in order is kept). */
static int dir_names(walk *w, const char *dir, sc_files *names)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot read folder %s: %s\n", w->who, dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            rc = files_push(names, e->d_name);
    closedir(d);
    if (names->n)
        qsort(names->v, names->n, sizeof *names->v, str_cmp);
    return rc;
}

static int walk_dir(walk *w, const char *dir, int depth)
{
    if (depth > 64)
        return 0;
    sc_files names = {0};
    int rc = dir_names(w, dir, &names);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        size_t n = strlen(dir) + strlen(names.v[i]) + 2;
        char *path = al_malloc(n, AL_K_SCENARIO, "scenario walk");
        if (!path) {
            rc = -2;
            break;
        }
        snprintf(path, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", names.v[i]);
        rc = take(w, path, depth + 1, 0);
        al_free(path, n, AL_K_SCENARIO);
    }
    sc_files_free(&names);
    return rc;
}

/* One path: a folder is walked (unless named `errors` or `leaks` below the
 * top, or already visited: a loop, warned about), a *.scn file (any file
 * when named on the command line) is taken once. */
static int take(walk *w, const char *path, int depth, int named)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (!named)
            return 0;   /* a dangling link inside a folder */
        fprintf(stderr, "%s: cannot open %s: %s\n", w->who, path, strerror(errno));
        return -1;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int dir = S_ISDIR(st.st_mode);
    if (!named && (dir ? strcmp(base, "errors") == 0 || strcmp(base, "leaks") == 0
                       : !(S_ISREG(st.st_mode) && ends_with(base, ".scn"))))
        return 0;
    int again = seen_add(w, st.st_dev, st.st_ino);
    if (again == 1 && dir)
        fprintf(stderr, "%s: warning: %s is a folder already visited (a symlink loop?); "
                        "skipped\n", w->who, path);
    if (again)
        return again < 0 ? -2 : 0;
    return dir ? walk_dir(w, path, depth) : files_push(w->out, path);
}

int sc_files_collect(const char *who, char *const *paths, int npaths, sc_files *out)
{
    walk w = {who, out, NULL, 0, 0, IX_INIT(AL_K_SCENARIO, "scenario walk seen")};
    int rc = 0;
    for (int i = 0; i < npaths && rc == 0; i++)
        rc = take(&w, paths[i], 0, 1);
    al_free(w.k, w.cap * sizeof *w.k, AL_K_SCENARIO);
    ix_free(&w.index);
    if (rc == -2)
        fprintf(stderr, "%s: out of memory\n", who);
    if (rc < 0)
        return rc;
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, str_cmp);
    return 0;
}

void sc_files_default(const char *data_dir, char *buf, size_t n)
{
    struct stat st;
    size_t len = strlen(data_dir);
    if (stat("scenarios", &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(buf, n, "scenarios");
    else
        snprintf(buf, n, "%s%sscenarios", data_dir, len && data_dir[len - 1] == '/' ? "" : "/");
}
