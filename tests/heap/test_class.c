/* Tests of hp_class (leak classes): lost (no root), accumulating (made
 * across the rounds of its loop, still in the second half), still reachable
 * (a warm-up that stopped), the --fail-on words. */
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "core/gc.h"
#include "heap/hp_class.h"
#include "heap/theap.h"


TestSuite(hpclass, .init = th_setup, .fini = th_teardown);

static const char *const names[HP_CAT_MAX] = {"mode", "node", "", "", "", "", "", ""};

static int subject(const hp_retained *r, void *arg)
{
    (void)arg;
    return r->kind == OBJ_FAKE_MODE ? 0 : -1;
}

/* Round of an object: its id minus the first id, plus 1; rounds: *arg. */
typedef struct rounds_arg {
    uint64_t first_id;
    uint32_t rounds;
} rounds_arg;

static uint32_t exec_of(obj_site site, uint64_t id, uint32_t *total, void *arg)
{
    const rounds_arg *ra = arg;
    (void)site;
    *total = ra->rounds;
    return (uint32_t)(id - ra->first_id + 1);
}

static hp_classes classify(hp_root *roots, size_t n, rounds_arg *ra)
{
    hp_graph *g = hp_snapshot(roots, n);
    cr_assert_not_null(g);
    hp_class_spec sp = {subject, exec_of, ra, names};
    hp_classes c;
    cr_assert_eq(hp_classify(g, &sp, &c), 0, "%s", er_message());
    hp_free(g);
    return c;
}

/* Four modes held by a list node (a root), made in rounds 1..4. */
static obj *four(obj **m, rounds_arg *ra)
{
    obj *list = th_new(&th_node, 0);
    obj_set_site("prog.py", 13);
    for (int i = 0; i < 4; i++) {
        m[i] = th_new(&th_mode, 0);
        th_set(list, i, m[i], "item", i);
        obj_decref(m[i]);
    }
    ra->first_id = m[0]->id;
    obj_set_site("t.scn", 1);
    return list;
}

Test(hpclass, growing_across_the_rounds_is_accumulating)
{
    obj *m[4];
    rounds_arg ra = {0, 4};
    obj *list = four(m, &ra);
    hp_root roots[] = {{"KEEP", list, 0}};
    hp_classes c = classify(roots, 1, &ra);
    cr_expect(eq(u64, c.count[HP_CL_ACCUMULATING][0], 4));
    cr_expect(eq(u64, c.count[HP_CL_REACHABLE][0], 0));
    cr_assert(eq(sz, c.ngroups, 1));
    cr_expect(eq(u32, c.groups[0].first_exec, 1));
    cr_expect(eq(u32, c.groups[0].last_exec, 4));
    cr_expect(eq(str, (char *)c.groups[0].site.file, "prog.py"));
    cr_expect(eq(u32, c.groups[0].site.line, 13));
    cr_expect(eq(str, c.groups[0].via, "KEEP -> Node.item[] -> fake_mode"));
    hp_classes_free(&c);
    obj_decref(list);
}

/* A group's root name is the variable its root names (hp_root.var_len),
 * not a cut of the path's text. */
Test(hpclass, the_root_name_is_the_roots_variable)
{
    static const struct { size_t var_len; const char *want; } cases[] = {
        {4, "KEEP"}, {0, "KEEP.items[2]"},   /* 0: the whole name */
    };
    obj *m[4];
    rounds_arg ra = {0, 4};
    obj *list = four(m, &ra);
    for (size_t i = 0; i < 2; i++) {
        hp_root roots[] = {{"KEEP.items[2]", list, cases[i].var_len}};
        hp_classes c = classify(roots, 1, &ra);
        cr_assert(eq(sz, c.ngroups, 1));
        cr_expect(eq(str, c.groups[0].root_name, (char *)cases[i].want), "var_len %zu",
                  cases[i].var_len);
        hp_classes_free(&c);
    }
    obj_decref(list);
}

Test(hpclass, a_warm_up_that_stopped_is_still_reachable)
{
    obj *m[4];
    rounds_arg ra = {0, 100};   /* made in rounds 1..4 of 100 */
    obj *list = four(m, &ra);
    hp_root roots[] = {{"CACHE", list, 0}};
    hp_classes c = classify(roots, 1, &ra);
    cr_expect(eq(u64, c.count[HP_CL_REACHABLE][0], 4));
    cr_expect(eq(u64, c.count[HP_CL_ACCUMULATING][0], 0));
    hp_classes_free(&c);
    obj_decref(list);
}

Test(hpclass, no_root_is_lost_and_non_subjects_are_not_counted)
{
    obj *m[4];
    rounds_arg ra = {0, 4};
    obj *list = four(m, &ra);
    hp_classes c = classify(NULL, 0, &ra);    /* nothing roots the list */
    cr_expect(eq(u64, c.count[HP_CL_LOST][0], 4));
    uint64_t all = 0;
    for (int k = 0; k < HP_CL_COUNT; k++)
        for (int j = 0; j < HP_CAT_MAX; j++)
            all += c.count[k][j];
    cr_expect(eq(u64, all, 4), "the list node is no subject");
    cr_expect(eq(int, c.groups[0].cls, HP_CL_LOST));
    hp_classes_free(&c);
    obj_decref(list);
}

Test(hpclass, fail_on_words)
{
    unsigned m = 0;
    cr_expect(eq(int, hp_class_mask("lost,accumulating", &m), 0));
    cr_expect(eq(u32, m, (1u << HP_CL_LOST) | (1u << HP_CL_ACCUMULATING)));
    cr_expect(eq(int, hp_class_mask("reachable,lingering", &m), 0));
    cr_expect(eq(u32, m, (1u << HP_CL_REACHABLE) | (1u << HP_CL_LINGERING)));
    cr_expect(eq(int, hp_class_mask("", &m), 0));
    cr_expect(eq(u32, m, 0));
    cr_expect(eq(int, hp_class_mask("lost,bogus", &m), -1));
    cr_expect(eq(str, (char *)hp_class_name(HP_CL_REACHABLE), "still reachable"));
}
