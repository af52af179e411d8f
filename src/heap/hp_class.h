/* hp_class.h - leak classes of what a program left behind, after Valgrind's
 * "definitely lost / still reachable": each subject alive (or lingering) in
 * a snapshot taken at the program's end, after a full collection, with the
 * program's own roots, is in exactly one class:
 *
 *   HP_CL_LOST          alive, and no root reaches it (hp_reason unreachable
 *                       or refcount-leak): held inside the model's PyTorch
 *                       (a reference no holder accounts for, or a cycle).
 *   HP_CL_ACCUMULATING  reachable, and the subjects of its group (same
 *                       category, creating site and holder shape) were made
 *                       across the rounds of the loop around that site,
 *                       still in its second half: at least 2 distinct
 *                       rounds, the first in the first half, the last in
 *                       the second half of the rounds (a cache that fills in
 *                       its first rounds and then only hits is not
 *                       accumulating). Values of live memo entries never
 *                       are: they are bounded by their keys.
 *   HP_CL_REACHABLE     reachable, not accumulating ("still reachable").
 *   HP_CL_LINGERING     a dead storage kept by a pending list or a stale
 *                       memo key: an expired storage awaiting the sweep.
 *
 * What is a subject, and its category (fake tensor, mode, ...), is the
 * caller's: subject(r) returns a category index below HP_CAT_MAX, or -1 for
 * what is not judged (real tensors, live storages: the program's data).
 * Which round made an object is the caller's too: exec_of(site, id) gives
 * the round (1-based) of the loop around `site` that made object `id`, and
 * that loop's rounds in *total (0: unknown, never accumulating).
 *
 *   hp_class_spec sp = {subject, exec_of, arg, names};
 *   hp_classes c;
 *   if (hp_classify(g, &sp, &c) == 0) { ... c.groups[i] ...; hp_classes_free(&c); }
 */
#ifndef FAKEGC_HP_CLASS_H
#define FAKEGC_HP_CLASS_H

#include <stdint.h>

#include "heap/hp.h"

/* The classes, once: X(ENUM, word, name, fails, warns, about, css, rule,
 * rule_name, rule_text) for each, SEP between them (a string literal, or
 * nothing): the enum, the words and names below, the default fail mask, the
 * option words of the command line (cli) and every writer's per-class text
 * are all made of this table. fails: verdict() fails on it by default;
 * warns: a group of it that does not fail is a warning (it grows), not a
 * note (SARIF's level, GitHub's annotation); about: the class in one line
 * (record's help); css: its class on the HTML page; rule, rule_name,
 * rule_text: its SARIF rule ("fakegc/" rule, the rule's name and full
 * description). The expanders take the columns they need and `...`. */
#define HP_CLASSES(X, SEP)                                                              \
    X(LOST, "lost", "lost", 1, 0,                                                       \
      "no root of the program reaches it",                                              \
      "lost", "lost", "Lost",                                                           \
      "Fake tensors or their memo state that no root of the program reaches, "          \
      "kept alive inside PyTorch (a memo, a finalizer registry, a cycle).") SEP         \
    X(ACCUMULATING, "accumulating", "accumulating", 1, 1,                               \
      "held by the program, growing with the rounds of the loop that made it",          \
      "acc", "accumulating", "Accumulating",                                            \
      "Objects the program holds that grow with the rounds of the loop that made "      \
      "them.") SEP                                                                      \
    X(REACHABLE, "reachable", "still reachable", 0, 0,                                  \
      "held by the program's variables, not growing",                                   \
      "reach", "still-reachable", "StillReachable",                                     \
      "Objects the program's variables still hold at its end, not growing.") SEP        \
    X(LINGERING, "lingering", "lingering", 0, 0,                                        \
      "an expired storage awaiting the periodic sweep",                                 \
      "ling", "lingering", "Lingering",                                                 \
      "Expired storages that wait for the converter's periodic sweep.")
#define HP_CL_ENUM_(e, ...) HP_CL_##e,
#define HP_CL_WORD_(e, w, ...) w
#define HP_CL_FAILS_(e, w, n, f, ...) | ((unsigned)(f) << HP_CL_##e)
typedef enum hp_class { HP_CLASSES(HP_CL_ENUM_, ) HP_CL_COUNT } hp_class;
/* "lost|accumulating|reachable|lingering" and "lost,accumulating,..." as
 * string literals (option words, help). */
#define HP_CLASS_WORDS_BAR HP_CLASSES(HP_CL_WORD_, "|")
#define HP_CLASS_WORDS_CSV HP_CLASSES(HP_CL_WORD_, ",")
/* What verdict() fails on unless told (1 << class for each). */
#define HP_CLASS_FAIL_DEFAULT (0u HP_CLASSES(HP_CL_FAILS_, ))
const char *hp_class_name(hp_class c);   /* "lost", "accumulating", "still reachable",
                                            "lingering" */
/* The class in one line ("no root of the program reaches it"), for help. */
const char *hp_class_about(hp_class c);
/* The one-word names: "lost" "accumulating" "reachable" "lingering" (the
 * words of --fail-on, suppression rules' class=, JSON keys); "?" out of
 * range. 0 / -1 on an unknown word for the reverse. */
const char *hp_class_word(hp_class c);
int hp_class_from_word(const char *w, hp_class *out);
/* "lost, accumulating, reachable, lingering" into buf (messages); returns
 * its length. */
size_t hp_class_words(char *buf, size_t n);
/* 0 and the bit mask (1 << class) of a comma list of words, -1 on an
 * unknown word. */
int hp_class_mask(const char *csv, unsigned *mask);

enum { HP_CAT_MAX = 8 };

typedef struct hp_class_spec {
    int (*subject)(const hp_retained *r, void *arg);
    uint32_t (*exec_of)(obj_site site, uint64_t id, uint32_t *total, void *arg);
    void *arg;
    const char *const *cat_names;   /* HP_CAT_MAX nouns, singular */
} hp_class_spec;

/* One group: subjects of one class, category, creating site and holder
 * shape (the path with ids and indexes stripped). */
typedef struct hp_class_group {
    hp_class cls;
    int cat;
    obj_site site;
    hp_reason reason;            /* the first member's */
    uint64_t count;
    uint64_t bytes;              /* its members' own bytes (obj_self_bytes) */
    uint64_t retained;           /* what its members retain (their dominator
                                    subtrees: members share one path shape,
                                    so none dominates another; the groups
                                    of a class may nest, so those are not
                                    added) */
    uint32_t first_exec, last_exec, execs;  /* made in executions first..last
                                               of the site's execs (0: unknown) */
    uint64_t first_id, last_id;  /* its members' lowest and highest object ids
                                    (ids grow as objects are made) */
    int memo;                    /* its members are values of live memo entries:
                                    bounded by their keys, never accumulating */
    char via[256];               /* holder shape: "KEEP[] -> tensor", ids and
                                    index contents dropped */
    char example[256];           /* first member's path, ids kept, joined
                                    (HP_PATH_SEP): the text writers' words,
                                    never read back */
    uint64_t example_id;         /* that first member's object id */
    char mode_path[256];         /* example as its mode's: the hops folded
                                    into the one before them (hp_retained.
                                    fold_hops: out of its converters, or a
                                    type's own attr_spelling) dropped,
                                    their labels kept ("FakeTensor
                                    Mode#1.converter.meta_converter.
                                    pending[0]"): a converter is its mode's
                                    part */
    hp_root_kind root;           /* what the first member's path starts from */
    uint64_t weak_holder;        /* the first member's (hp_retained.weak_holder) */
    char root_name[96];          /* HP_RK_PROGRAM: that root's variable
                                    (hp_retained.root_len: "KEEP"); else "" */
} hp_class_group;

typedef struct hp_classes {
    uint64_t count[HP_CL_COUNT][HP_CAT_MAX];
    hp_class_group *groups;      /* AL_K_HEAP; lost first, then accumulating,
                                    reachable, lingering; biggest count first */
    size_t ngroups;
} hp_classes;

/* 0, or -1 with ER_OOM (*out zeroed). */
int hp_classify(hp_graph *g, const hp_class_spec *spec, hp_classes *out);
void hp_classes_free(hp_classes *c);

#endif
