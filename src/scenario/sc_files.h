/* sc_files.h - the scenario files named on a command line: each path is a
 * file, or a folder walked for *.scn (sub-folders named `errors` or
 * `leaks` below the top are skipped: scripts the parser must reject, and
 * recordings whose verdict fails by design). A file reached twice (a
 * symlink, a folder linked into itself) is taken once, by device and
 * inode, and a folder loop ends with a warning. Sorted, so runs are in a
 * stable order.
 *
 *   sc_files f = {0};
 *   if (sc_files_collect("fakegc run", paths, npaths, &f) < 0) ... // printed
 *   sc_files_match(&f, "weak");          // -k
 *   sc_files_shard(&f, k, n);            // --shard K/N
 *   ... f.v[0 .. f.n) ...
 *   sc_files_free(&f);
 *
 * Messages go to stderr as "WHO: cannot open PATH: strerror". Every
 * allocation is AL_K_SCENARIO.
 */
#ifndef FAKEGC_SC_FILES_H
#define FAKEGC_SC_FILES_H

#include <stddef.h>
#include <stdint.h>

typedef struct sc_files {
    char **v;
    size_t n, cap;
} sc_files;

/* 0, -1 for a path that cannot be read (printed: a usage error), -2 when
 * out of memory (printed). */
int sc_files_collect(const char *who, char *const *paths, int npaths, sc_files *out);
/* Keep the files whose path contains pattern or matches it as a glob
 * (fnmatch, on the whole path or on what follows one of its slashes: memo/X*
 * matches scenarios/memo/X.scn); the count kept. */
size_t sc_files_match(sc_files *f, const char *pattern);
/* The test sc_files_match keeps a path by (-k PATTERN): 1 or 0. */
int sc_files_path_matches(const char *pattern, const char *path);
/* Keep the files f->v[i] with i mod n == k, in order (n 0: all). */
void sc_files_shard(sc_files *f, uint32_t k, uint32_t n);
void sc_files_free(sc_files *f);
/* The folder a command runs with no path: ./scenarios when it is a folder,
 * else data_dir's scenarios/ (the installed ones), in buf. */
void sc_files_default(const char *data_dir, char *buf, size_t n);

#endif
