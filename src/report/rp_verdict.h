/* rp_verdict.h - a recorded program's verdict as facts: numbers and enums,
 * made once by `verdict()` at the program's end (sc_verdict.c) and
 * formatted only by the writers (text, JSON, HTML, ...). Nothing here is
 * text to be parsed back: the fail mask is a mask, a group's class,
 * category and root kind are enums, its site a file and a line.
 *
 *   rp_verdict *v = rp_verdict_new();            // zeroed, AL_K_REPORT
 *   v->line = 42; v->fails_on = 1u << HP_CL_LOST;
 *   rp_vgroup g = {.cls = HP_CL_LOST, .cat = FK_CAT_FAKE, ...};
 *   rp_verdict_add_group(v, &g);                 // copied
 *   s->verdict = v;                              // rp_scenario_clear frees it
 *   rp_verdict_write_text(v, f);                 // the text writer's lines
 *
 * Adding a fact (a field):
 *   1. the field here, with its meaning and its zero value (a verdict or a
 *      group read from an older report keeps the zero);
 *   2. set it in sc_verdict.c (where the verdict is made);
 *   3. write it in rp_json.c (verdict() / verdict_groups()) and read it in
 *      rp_read.c (read_verdict() / vgroup_key()), then the schema
 *      (src/report/schema/fakegc-report-N.schema.json);
 *   4. format it where a writer shows it (rp_verdict.c for the text lines,
 *      rp_html.c for the page); other writers read the struct, never the
 *      text.
 * A new enum value (a root kind, a mechanism) is a row in rp_verdict.c's
 * word table and its phrase in rp_verdict.c; the leak classes are
 * hp_class.h's, the categories fk_cat.h's.
 */
#ifndef FAKEGC_RP_VERDICT_H
#define FAKEGC_RP_VERDICT_H

#include <stdint.h>
#include <stdio.h>

#include "fake/fk_cat.h"
#include "heap/hp_class.h"

/* What holds a group, as the verdict judges it (the first member's path
 * and reason). */
typedef enum rp_root_kind {
    RP_ROOT_PROGRAM,      /* one of the program's own roots; root_name says
                             which ("KEEP") */
    RP_ROOT_FINALIZERS,   /* PyTorch's finalizer registry (weakref.finalize) */
    RP_ROOT_UNREACHABLE,  /* no root reaches it: a cycle (or a chain from one)
                             the program cannot see, inside PyTorch */
    RP_ROOT_WEAK,         /* only weak holders are left */
    RP_ROOT_PYTORCH,      /* inside PyTorch, by `mech` */
    RP_ROOT_COUNT
} rp_root_kind;
/* "program" "finalizers" "unreachable" "weak" "pytorch" (JSON "root");
 * "?" out of range. 0 / -1 unknown for the reverse. */
const char *rp_root_kind_word(rp_root_kind k);
int rp_root_kind_from_word(const char *w, rp_root_kind *out);

/* How PyTorch holds what it holds inside (root kind RP_ROOT_PYTORCH). */
typedef enum rp_mechanism {
    RP_MECH_NONE,            /* not said */
    RP_MECH_REFCOUNT_LEAK,   /* a reference no holder accounts for (a
                                reference-count leak: 1.13.1's _fix_weakref
                                after a memo hit) */
    RP_MECH_PENDING_SWEEP,   /* a pending list or a stale memo key, until its
                                converter's next periodic sweep */
    RP_MECH_STALE_ENTRY,     /* a stale entry of a weak table that no live
                                converter sweeps (a design without a
                                periodic sweep, 2.x's constant map): it goes
                                with the table's owner or when the entry is
                                cleared */
    RP_MECH_VIEW_BASE,       /* a view's base, held from C++ (the view's
                                TensorImpl holds its base's), which Python's
                                gc does not see: the base and all it reaches
                                live while the view does, cycles through the
                                view included (ts_set_base_hidden) */
    RP_MECH_COUNT
} rp_mechanism;
/* "" (none) "refcount-leak" "pending-sweep" "stale-entry" "view-base" (JSON
 * "mechanism"). */
const char *rp_mechanism_word(rp_mechanism m);
int rp_mechanism_from_word(const char *w, rp_mechanism *out);

/* A program's named mark (`mark("LABEL")`, fakegc.mark): its label, cut
 * to RP_VMARK_LEN - 1 bytes. */
enum { RP_VMARK_LEN = 48 };

/* One group (hp_class_group): subjects of one class and category, made at
 * one program line, held in one way. */
typedef struct rp_vgroup {
    hp_class cls;
    fk_category cat;
    uint8_t suppressed;           /* a suppression rule counted it apart */
    uint64_t count, bytes, retained;   /* members, their own bytes, what they
                                          retain */
    uint32_t first_round, last_round, rounds;   /* of the loop around the
                                                   site (0: unknown) */
    char file[160];               /* the program's site: file ("" unknown) */
    uint32_t line;                /*   and line (0: none) */
    rp_root_kind root;
    rp_mechanism mech;            /* RP_MECH_NONE unless root is RP_ROOT_PYTORCH */
    char root_name[96];           /* RP_ROOT_PROGRAM: the root ("KEEP"); else "" */
    uint64_t converter;           /* lingering: the id of the converter whose
                                     sweep reclaims it (0: none live) */
    int64_t to_sweep;             /* ... in so many more conversions (0 or
                                     less: not known) */
    char path[256];               /* its first member's: "KEEP[0] -> tensor#11" */
    char mark_from[RP_VMARK_LEN]; /* the program's last mark() before its
                                     first member was made ("" none) */
    char mark_to[RP_VMARK_LEN];   /* ... before its last member was made */
} rp_vgroup;

/* A suppression rule's count of one category. */
typedef struct rp_vsupp {
    char rule[64];
    fk_category cat;
    uint64_t count;
} rp_vsupp;

/* The verdict of a scenario (at most one: a later verdict() replaces it). */
typedef struct rp_verdict {
    uint32_t line;                /* of the verdict() statement */
    char at_file[160];            /* a recording: the program's site when the */
    uint32_t at_line;             /*   verdict was made: its true end (its last
                                     statement, or where it raised or exited:
                                     verdict(ended_at=)), else its last at(), whose
                                     line follows the program's last event;
                                     "" and 0 for a hand-written scenario */
    char ended[48];               /* how the program ended: "exit 0", "exit 2",
                                     "uncaught ValueError", "os._exit(3)",
                                     "SIGTERM" (verdict(ended=), said with
                                     ended_at=); "" unknown */
    unsigned fails_on;            /* 1u << hp_class for each failing class */
    uint64_t count[HP_CL_COUNT];  /* subjects per class, suppressed ones not
                                     counted */
    uint64_t bytes[HP_CL_COUNT];  /* their own bytes */
    uint64_t suppressed;          /* subjects a rule counted apart */
    /* Groups: lost first, then accumulating, still reachable, lingering;
     * biggest first. Every group (writers that show a page cut it to
     * RP_VGROUPS); ngroups allocated (AL_K_REPORT, NULL when 0). */
    rp_vgroup *groups; size_t ngroups;
    rp_vsupp *supp; size_t nsupp; /* rule order, then category order */
} rp_verdict;

/* What a page shows of the groups at most. */
enum { RP_VGROUPS = 64 };

/* A zeroed verdict, NULL with ER_OOM. */
rp_verdict *rp_verdict_new(void);
void rp_verdict_free(rp_verdict *v);   /* NULL is fine */
/* Append a copy; 0, or -1 with ER_OOM (v unchanged). */
int rp_verdict_add_group(rp_verdict *v, const rp_vgroup *g);
int rp_verdict_add_supp(rp_verdict *v, const char *rule, fk_category cat, uint64_t count);
/* Does it fail: a class in fails_on with subjects. */
int rp_verdict_fails(const rp_verdict *v);

/* Words for the writers. */
/* "prog.py:11", "prog.py" (line 0), "?" (no file). */
void rp_vgroup_site(const rp_vgroup *g, char *buf, size_t n);
/* Who holds it, in a word or two: the program's root ("KEEP"), "inside
 * PyTorch" (lost), "a pending sweep" or "a stale entry" (lingering),
 * "PyTorch's finalizer registry". */
void rp_vgroup_holder(const rp_vgroup *g, char *buf, size_t n);

/* One leak: the verdict's groups (not counted apart) of one class, held
 * the same way (root kind, mechanism and root name) and made at one site,
 * which a user sees as one leak. Derived from the groups, never stored:
 *   for (size_t i = 0; i < v->ngroups; i++)
 *       if (rp_verdict_leak_of(v, i) == i) {      // i leads a leak
 *           rp_vleak l; rp_verdict_leak(v, i, &l);
 *           rp_vleak_summary(v, &l, buf, sizeof buf);
 *       }
 */
typedef struct rp_vleak {
    size_t lead;                       /* its first group (the biggest) */
    size_t ngroups;
    uint64_t count[FK_CAT_COUNT];      /* members per category */
    uint64_t total, bytes, retained;
    double per_round[FK_CAT_COUNT];    /* accumulating: growth per round of the
                                          loop around its site (0 else) */
} rp_vleak;

/* Are groups a and b of one leak (class, root, mechanism, root name, site). */
int rp_vgroup_same_leak(const rp_vgroup *a, const rp_vgroup *b);
/* The first group of group i's leak (i itself when it leads one); v->ngroups
 * for a group counted apart. */
size_t rp_verdict_leak_of(const rp_verdict *v, size_t i);
/* The sums of the leak that group lead leads. */
void rp_verdict_leak(const rp_verdict *v, size_t lead, rp_vleak *out);
/* Its one line, by class:
 *   "84 fake tensors and 12 modes in COMPILED, +7 per round at prog.py:17"
 *   "20 fake tensors and 10 modes lost inside PyTorch (a reference-count
 *    leak) at prog.py:11"
 *   "1 mode in mode, still reachable, at prog.py:17"
 *   "98 expired storages awaiting their converter's next sweep at prog.py:11"
 * (the growth is the first-named category's), then its first group's marks
 * when the program has any: "... at prog.py:17 since mark 'step 3'". */
void rp_vleak_summary(const rp_verdict *v, const rp_vleak *l, char *buf, size_t n);
/* When group i leads a leak: its line (rp_vleak_summary) into buf, and 1;
 * else 0 (buf untouched). */
int rp_verdict_leak_line(const rp_verdict *v, size_t i, char *buf, size_t n);
/* Where the verdict was made, in the program's words: "at the program's
 * end, prog.py:31, exit 0" for a recording that says how it ended (its
 * true end), "at the program's end, after prog.py:11" for one that does not
 * (its last event's site); its line, v->line, is a detail the writers add.
 * "at line 42" for a hand-written scenario. */
void rp_verdict_where(const rp_verdict *v, char *buf, size_t n);
/* When it was made, by the program's marks: "since mark 'step 3'" (all
 * after that mark, none after a later one), "between marks 'step 1' and
 * 'step 3'" (its first member after the first, its last after the
 * second), "before mark 'step 1' and after it" (first member before any
 * mark); "" when the program has no mark before any member. */
void rp_vgroup_marks(const rp_vgroup *g, char *buf, size_t n);

/* The verdict's summary line, for a CI's failure message (JUnit, TAP, the
 * pytest plugin): its failing counts, then the biggest failing group:
 *   "20 accumulating: 5 fake tensors made at prog.py:13, held by KEEP
 *   (and 3 more groups)"
 * ("no leak" when nothing fails). */
void rp_verdict_summary(const rp_verdict *v, char *buf, size_t n);

/* The text writer's lines (and JSON's "text"): the head, then each leak's
 * line followed by its groups:
 *   verdict at line 42 (the model's retention analysis after a full
 *   collection; fails on: lost accumulating): 1 lost, 0 accumulating, ...
 *     20 fake tensors lost inside PyTorch (...) at prog.py:13
 *       lost: 20 fake tensors made at prog.py:13, held inside PyTorch: ...
 *     suppressed: 3 modes by rule known-mode
 * Groups counted apart are not listed. 0, or -1 on a write error. */
int rp_verdict_write_text(const rp_verdict *v, FILE *f);
/* The same as one string (malloc'd; free()); NULL with ER_OOM. */
char *rp_verdict_text(const rp_verdict *v);

#endif
