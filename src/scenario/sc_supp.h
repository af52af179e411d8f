/* sc_supp.h - suppression rules files: one rule a line,
 *
 *   NAME: class=C kind=K site=GLOB holder=GLOB      # any subset of the keys
 *
 * class one of lost accumulating reachable lingering (hp's words), kind a
 * category word of fk_cat.h (fake meta mode ...), site a glob on FILE:LINE,
 * holder a glob on the holder path; `#` starts a comment (a whole line, or
 * the rest of one). A group matching every key a rule gives is counted
 * apart, under the first such rule.
 *
 * A file is read whole before anything runs (`run` and `record` check it
 * with the scenario, or --suppress before the program starts), within
 * limits: SC_SUPP_MAX_BYTES, SC_SUPP_MAX_LINE bytes a line; any number of
 * rules, any length of value. What is not a rules file is said as
 * "FILE: is a folder", "FILE: cannot open it: ..." or "FILE:LINE: error:
 * WHY" (a NUL byte, a line too long, a file too large, a key unknown, a
 * value bad), never read as no rules.
 *
 *   sc_supp s;
 *   char err[600];
 *   if (sc_supp_read(&s, "rules.supp", err, sizeof err) < 0) ...  // err: "rules.supp:3: error: ..."
 *   long i = sc_supp_match(&s, cls, cat, "prog.py:12", "CACHE[0]");   // rule index, -1 none
 *   sc_supp_free(&s);
 *
 * Every allocation is AL_K_SCENARIO.
 */
#ifndef FAKEGC_SC_SUPP_H
#define FAKEGC_SC_SUPP_H

#include <stddef.h>

enum { SC_SUPP_MAX_BYTES = 1 << 20, SC_SUPP_MAX_LINE = 4096 };

typedef struct sc_supp_rule {
    char *name, *site, *holder;   /* site, holder: NULL for any */
    int cls, cat;                 /* -1: any */
} sc_supp_rule;

typedef struct sc_supp {
    sc_supp_rule *rules;
    size_t n, cap;
    char *text;                   /* the file, its lines cut in place */
    size_t text_size;
} sc_supp;

/* Read the rules at path into s (zeroed first). 0, or -1 with err set and
 * s empty; ENOMEM: "out of memory reading FILE". */
int sc_supp_read(sc_supp *s, const char *path, char *err, size_t errn);
/* The index of the first rule matching a group, or -1. */
long sc_supp_match(const sc_supp *s, int cls, int cat, const char *site, const char *holder);
void sc_supp_free(sc_supp *s);

/* Rules files by path (a scenario's, read once by its parser). */
typedef struct sc_supp_file {
    char *path;
    sc_supp rules;
    struct sc_supp_file *next;
} sc_supp_file;
/* path's rules in *list, read and added when not there yet: NULL with err
 * set when the file is not a rules file (or out of memory). */
const sc_supp *sc_supp_files_add(sc_supp_file **list, const char *path, char *err, size_t n);
/* path's rules in list, or NULL. */
const sc_supp *sc_supp_files_find(const sc_supp_file *list, const char *path);
void sc_supp_files_free(sc_supp_file *list);

/* The rules file `name` (n bytes) of the scenario `file`: beside it when
 * relative. Its path in buf; -1 when it does not fit. */
int sc_supp_path(const char *file, const char *name, size_t n, char *buf, size_t bn);

#endif
