/* rp_out.h - report files written whole or not at all (fakegc-report(5),
 * "Reports: stable, typed, safe to consume").
 *
 * A report, graph or timeline named on the command line is written to a
 * temporary file in the target's own folder (so that rename() is atomic),
 * then flushed, fsync()ed and renamed over the target. Until the commit the
 * previous file at the target is untouched: a parse error, a usage error, a
 * crash or a SIGKILL leaves it as it was (at worst a hidden
 * `.NAME.fakegc-XXXXXX` next to it after a SIGKILL). A target that exists and
 * is not a regular file (a terminal, /dev/full, a pipe) is written in place.
 *
 *   rp_out o;
 *   char err[512];
 *   if (rp_out_open(&o, "r.json", err, sizeof err) < 0) ... // "r.json: Permission denied"
 *   rp_write(&run, RP_JSON, o.f, &opts);
 *   if (rp_out_commit(&o, err, sizeof err) < 0) ...         // "r.json: No space left on device"
 *   // or rp_out_abort(&o): the target stays as it was
 *
 * The structure owns its strings (plain malloc: an output outlives the
 * allocator a command installs). Not thread-safe; a process may hold several.
 */
#ifndef FAKEGC_RP_OUT_H
#define FAKEGC_RP_OUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct rp_out {
    char *path;     /* the target */
    char *tmp;      /* the temporary file, NULL when writing in place */
    FILE *f;        /* write here; NULL when closed */
} rp_out;

/* Create the temporary file (or open a non-regular target). 0, or -1 with
 * "PATH: strerror" in err. */
int rp_out_open(rp_out *o, const char *path, char *err, size_t n);
/* Flush, check, fsync, close and rename into place. 0, or -1 with
 * "PATH: strerror" in err (the temporary file removed, the target as it
 * was). Safe on a closed rp_out (returns 0). */
int rp_out_commit(rp_out *o, char *err, size_t n);
/* Close and remove the temporary file; the target stays as it was. Safe on
 * a closed or zeroed rp_out. */
void rp_out_abort(rp_out *o);

/* 1 when paths a and b name one file: the same string, the same device
 * and inode when both exist, else the same real path of their folders and
 * the same last name ("a/./b" and "a/b" even when b does not exist yet). */
int rp_out_same_target(const char *a, const char *b);

/* Make folder dir (like mkdir -p) and prove a file can be created in it,
 * before any work that would write there. 0, or -1 with "cannot create
 * PATH: strerror" or "cannot write in it: strerror" in err. */
int rp_out_dir(const char *dir, char *err, size_t n);

/* ---- a command's outputs, together ----
 *
 *   rp_outs s;
 *   const char *names[] = {"--output", "--dot"}, *paths[] = {"r.txt", "g.dot"};
 *   if (rp_outs_open(&s, names, paths, 2, err, sizeof err) < 0) ...
 *   // "--output and --dot both name r.txt", "--dot: cannot write g.dot: ..."
 *   fputs("...", rp_outs_file(&s, "--dot"));
 *   if (rp_outs_commit(&s, "fakegc run") < 0) ...   // each failure printed
 *
 * Every output is opened before any work, so an unwritable one, or two
 * naming one file (rp_out_same_target), is refused first; all of them are
 * put in place by one commit, or dropped by rp_outs_abort. The names and
 * paths are not copied. */
enum { RP_OUTS_MAX = 12 };

typedef struct rp_outs {
    size_t n;
    struct rp_outs_one {
        const char *name, *path;
        rp_out o;
    } v[RP_OUTS_MAX];
} rp_outs;

/* 0, or -1 with the reason in err (nothing left open). At most RP_OUTS_MAX. */
int rp_outs_open(rp_outs *s, const char *const *names, const char *const *paths, size_t n,
                 char *err, size_t errn);
/* rp_outs_open, then every input in_paths[0..nin) readable and not one of
 * the outputs: 0, or -1 with "IN_NAME: cannot read PATH: strerror" or the
 * others' messages in err (nothing left open). */
int rp_outs_setup(rp_outs *s, const char *const *names, const char *const *paths, size_t n,
                  const char *const *in_names, const char *const *in_paths, size_t nin,
                  char *err, size_t errn);
/* The open file of output name, or NULL. */
FILE *rp_outs_file(const rp_outs *s, const char *name);
/* 0, or -1 with "--junit f.scn is one of the inputs; refusing to overwrite
 * it" in err, when an output names one of inputs[0..n). */
int rp_outs_not_inputs(const rp_outs *s, const char *const *inputs, size_t n, char *err,
                       size_t errn);
/* Commit every output still open: 0, or -1 after printing "WHO: NAME:
 * cannot write PATH: strerror" on stderr for each that failed. */
int rp_outs_commit(rp_outs *s, const char *who);
/* Drop every output still open: the previous files stay as they were. */
void rp_outs_abort(rp_outs *s);

#endif
