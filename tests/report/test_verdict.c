/* Tests of the typed verdict (report/rp_verdict.h): its word tables, its
 * text lines made from the facts alone, and its round trip through the JSON
 * report (what a --jobs worker hands back): every fact read back equal,
 * and the same text. */
#include <criterion/criterion.h>
/* criterion/new/assert.h packs its results in bit-fields */
#pragma GCC diagnostic ignored "-Wconversion"
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp.h"
#include "report/treport.h"

TestSuite(verdict, .init = tr_setup, .fini = tr_teardown);

static rp_vgroup group(hp_class cls, fk_category cat, rp_root_kind root, rp_mechanism mech,
                       const char *root_name, const char *path, uint64_t count)
{
    rp_vgroup g = {.cls = cls, .cat = cat, .root = root, .mech = mech, .line = 11,
                   .count = count, .bytes = 64 * count, .retained = 100 * count};
    snprintf(g.root_name, sizeof g.root_name, "%s", root_name);
    snprintf(g.path, sizeof g.path, "%s", path);
    snprintf(g.file, sizeof g.file, "prog.py");
    return g;
}

/* One verdict with a group of every root kind and mechanism. */
static rp_verdict *sample(void)
{
    rp_verdict *v = rp_verdict_new();
    cr_assert(ne(ptr, v, NULL));
    v->line = 42;
    v->fails_on = (1u << HP_CL_LOST) | (1u << HP_CL_LINGERING);
    rp_vgroup gs[] = {
        group(HP_CL_LOST, FK_CAT_FAKE, RP_ROOT_PYTORCH, RP_MECH_REFCOUNT_LEAK, "",
              "unreachable -> tensor#7", 20),
        group(HP_CL_LOST, FK_CAT_MODE, RP_ROOT_UNREACHABLE, RP_MECH_NONE, "",
              "unreachable -> FakeTensorMode#1.converter -> fake_mode#1", 1),
        group(HP_CL_ACCUMULATING, FK_CAT_META, RP_ROOT_FINALIZERS, RP_MECH_NONE, "",
              "finalizers -> Finalizer#9 -> tensor#12", 6),
        group(HP_CL_REACHABLE, FK_CAT_CONVERTER, RP_ROOT_PROGRAM, RP_MECH_NONE, "KEEP",
              "KEEP[0] -> fake_converter#2", 1),
        group(HP_CL_LINGERING, FK_CAT_STORAGE, RP_ROOT_PYTORCH, RP_MECH_PENDING_SWEEP, "",
              "mode -> MetaConverter#3.pending[0] -> storage#6", 3),
        group(HP_CL_REACHABLE, FK_CAT_FINALIZER, RP_ROOT_WEAK, RP_MECH_NONE, "",
              "weak -> finalizer#4", 2),
    };
    gs[2].first_round = 2, gs[2].last_round = 9, gs[2].rounds = 10;
    gs[4].converter = 3, gs[4].to_sweep = 108;
    gs[5].suppressed = 1;
    for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) {
        cr_assert(eq(int, rp_verdict_add_group(v, &gs[i]), 0));
        if (!gs[i].suppressed) {
            v->count[gs[i].cls] += gs[i].count;
            v->bytes[gs[i].cls] += gs[i].bytes;
        }
    }
    v->suppressed = 2;
    cr_assert(eq(int, rp_verdict_add_supp(v, "known-finalizers", FK_CAT_FINALIZER, 2), 0));
    return v;
}

Test(verdict, every_word_reads_back_and_an_unknown_one_does_not)
{
    for (int c = 0; c < HP_CL_COUNT; c++) {
        hp_class back = HP_CL_COUNT;
        cr_assert(eq(int, hp_class_from_word(hp_class_word((hp_class)c), &back), 0));
        cr_assert(eq(int, back, c), "class %s", hp_class_word((hp_class)c));
    }
    for (int c = 0; c < FK_CAT_COUNT; c++) {
        fk_category back = FK_CAT_COUNT;
        cr_assert(eq(int, fk_category_from_word(fk_category_word((fk_category)c), &back), 0));
        cr_assert(eq(int, back, c), "category %s", fk_category_word((fk_category)c));
        cr_assert(ne(str, (char *)fk_category_noun((fk_category)c, 1), "?"));
    }
    for (int k = 0; k < RP_ROOT_COUNT; k++) {
        rp_root_kind back = RP_ROOT_COUNT;
        cr_assert(eq(int, rp_root_kind_from_word(rp_root_kind_word((rp_root_kind)k), &back), 0));
        cr_assert(eq(int, back, k), "root %s", rp_root_kind_word((rp_root_kind)k));
    }
    for (int m = 0; m < RP_MECH_COUNT; m++) {
        rp_mechanism back = RP_MECH_COUNT;
        cr_assert(eq(int, rp_mechanism_from_word(rp_mechanism_word((rp_mechanism)m), &back), 0));
        cr_assert(eq(int, back, m), "mechanism %s", rp_mechanism_word((rp_mechanism)m));
    }
    hp_class c;
    fk_category cat;
    rp_root_kind k;
    cr_assert(eq(int, hp_class_from_word("still reachable", &c), -1));
    cr_assert(eq(int, fk_category_from_word("fake tensor", &cat), -1));
    cr_assert(eq(int, rp_root_kind_from_word("finalizer", &k), -1));
    char words[128];
    fk_category_words(words, sizeof words);
    cr_assert(eq(str, words, "fake, meta, mode, converter, finalizer, storage, memo"));
    hp_class_words(words, sizeof words);
    cr_assert(eq(str, words, "lost, accumulating, reachable, lingering"));
}

Test(verdict, slow_growth_is_one_per_so_many_rounds)
{
    rp_verdict *v = rp_verdict_new();
    cr_assert(ne(ptr, v, NULL));
    rp_vgroup g = group(HP_CL_ACCUMULATING, FK_CAT_FAKE, RP_ROOT_PROGRAM, RP_MECH_NONE, "KEPT",
                        "KEPT[0] -> tensor#7", 100);
    g.first_round = 1000, g.last_round = 100000, g.rounds = 100000;
    cr_assert(eq(int, rp_verdict_add_group(v, &g), 0));
    v->count[HP_CL_ACCUMULATING] = 100;
    char *t = rp_verdict_text(v);
    cr_assert(ne(ptr, t, NULL));
    const char *want = "accumulating: 100 fake tensors made at prog.py:11, still growing at "
                       "the end: +1 per 990 rounds, made in rounds 1000..100000 of 100000";
    cr_assert(ne(ptr, strstr(t, want), NULL), "missing [%s] in:\n%s", want, t);
    free(t);
    rp_verdict_free(v);
}

Test(verdict, the_text_is_made_from_the_facts)
{
    rp_verdict *v = sample();
    char *t = rp_verdict_text(v);
    cr_assert(ne(ptr, t, NULL));
    const char *want[] = {
        "verdict at line 42 (the model's retention analysis after a full collection; fails "
        "on: lost lingering): 21 lost, 6 accumulating, 1 still reachable, 3 lingering\n",
        "  lost: 20 fake tensors made at prog.py:11, held inside PyTorch: a reference no "
        "holder accounts for",
        "  lost: 1 mode made at prog.py:11, held inside PyTorch, through what no root of the "
        "program reaches: FakeTensorMode#1.converter -> fake_mode#1\n",
        "  accumulating: 6 meta tensors made at prog.py:11, still growing at the end: +0.75 "
        "per round, made in rounds 2..9 of 10 of the loop around it; held by PyTorch's "
        "finalizer registry (weakref.finalize): finalizers -> Finalizer#9 -> tensor#12\n",
        "  still reachable: 1 converter made at prog.py:11, held by the program at KEEP[0] -> "
        "fake_converter#2\n",
        "  lingering: 3 expired storages made at prog.py:11, reclaimed at its converter's next "
        "sweep, in 108 conversions",
        "  suppressed: 2 finalizers by rule known-finalizers\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(ne(ptr, strstr(t, want[i]), NULL), "missing [%s] in:\n%s", want[i], t);
    cr_assert(eq(ptr, strstr(t, "weak -> finalizer#4"), NULL), "a suppressed group is listed:\n%s",
              t);
    cr_assert(eq(int, rp_verdict_fails(v), 1));
    v->fails_on = 1u << HP_CL_REACHABLE;
    v->count[HP_CL_REACHABLE] = 0;
    cr_assert(eq(int, rp_verdict_fails(v), 0), "no subject in the one failing class");
    char h[64];
    rp_vgroup_holder(&v->groups[3], h, sizeof h);
    cr_assert(eq(str, h, "KEEP"));
    rp_vgroup_holder(&v->groups[2], h, sizeof h);
    cr_assert(eq(str, h, "PyTorch's finalizer registry"));
    rp_vgroup_holder(&v->groups[4], h, sizeof h);
    cr_assert(eq(str, h, "a pending sweep"));
    free(t);
    rp_verdict_free(v);
}

static void same_group(const rp_vgroup *a, const rp_vgroup *b, size_t i)
{
    cr_assert(eq(int, a->cls, b->cls), "group %zu: class", i);
    cr_assert(eq(int, a->cat, b->cat), "group %zu: category", i);
    cr_assert(eq(int, a->root, b->root), "group %zu: root", i);
    cr_assert(eq(int, a->mech, b->mech), "group %zu: mechanism", i);
    cr_assert(eq(str, (char *)a->root_name, (char *)b->root_name), "group %zu: root name", i);
    cr_assert(eq(str, (char *)a->file, (char *)b->file), "group %zu: file", i);
    cr_assert(eq(u32, a->line, b->line), "group %zu: line", i);
    cr_assert(eq(str, (char *)a->path, (char *)b->path), "group %zu: path", i);
    cr_assert(eq(u64, a->count, b->count), "group %zu: count", i);
    cr_assert(eq(u64, a->bytes, b->bytes), "group %zu: bytes", i);
    cr_assert(eq(u64, a->retained, b->retained), "group %zu: retained", i);
    cr_assert(eq(u64, a->converter, b->converter), "group %zu: converter", i);
    cr_assert(eq(i64, a->to_sweep, b->to_sweep), "group %zu: to_sweep", i);
    cr_assert(eq(u32, a->first_round, b->first_round), "group %zu: rounds", i);
    cr_assert(eq(u32, a->last_round, b->last_round), "group %zu: rounds", i);
    cr_assert(eq(u32, a->rounds, b->rounds), "group %zu: rounds", i);
    cr_assert(eq(int, a->suppressed, b->suppressed), "group %zu: suppressed", i);
}

Test(verdict, the_json_report_carries_every_fact_back)
{
    rp_scenario sc;
    memset(&sc, 0, sizeof sc);
    cr_assert(eq(int, rp_scenario_set_file(&sc, "prog.scn"), 0));
    sc.status = RP_FAIL;
    sc.verdict = sample();
    snprintf(sc.verdict->at_file, sizeof sc.verdict->at_file, "prog.py");
    sc.verdict->at_line = 17;
    rp_run run = {.tool = "fakegc", .version = "0.1.0", .allocator = "libc",
                  .scenarios = &sc, .n = 1};
    rp_run_count(&run);
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    cr_assert(eq(int, rp_write(&run, RP_JSON, f, NULL), 0));
    fclose(f);
    cr_assert(ne(ptr, strstr(json, "\"fails_on\": [\"lost\", \"lingering\"]"), NULL), "%s", json);
    cr_assert(ne(ptr, strstr(json, "\"root\": \"pytorch\", \"mechanism\": \"refcount-leak\""),
                 NULL), "%s", json);
    rp_run back;
    char err[256] = "";
    cr_assert(eq(int, rp_read_json_text(json, len, "v.json", &back, err, sizeof err), 0), "%s",
              err);
    cr_assert(eq(sz, back.n, 1));
    const rp_verdict *a = sc.verdict, *b = back.scenarios[0].verdict;
    cr_assert(ne(ptr, (void *)b, NULL));
    cr_assert(eq(u32, a->line, b->line));
    cr_assert(eq(str, (char *)a->at_file, (char *)b->at_file), "the program's site");
    cr_assert(eq(u32, a->at_line, b->at_line), "the program's line");
    cr_assert(eq(u32, a->fails_on, b->fails_on));
    for (int c = 0; c < HP_CL_COUNT; c++) {
        cr_assert(eq(u64, a->count[c], b->count[c]), "count of %s", hp_class_word((hp_class)c));
        cr_assert(eq(u64, a->bytes[c], b->bytes[c]), "bytes of %s", hp_class_word((hp_class)c));
    }
    cr_assert(eq(u64, a->suppressed, b->suppressed));
    cr_assert(eq(sz, a->ngroups, b->ngroups));
    for (size_t i = 0; i < a->ngroups; i++)
        same_group(&a->groups[i], &b->groups[i], i);
    cr_assert(eq(sz, a->nsupp, b->nsupp));
    cr_assert(eq(str, (char *)b->supp[0].rule, "known-finalizers"));
    cr_assert(eq(int, b->supp[0].cat, FK_CAT_FINALIZER));
    cr_assert(eq(u64, b->supp[0].count, 2));
    char *ta = rp_verdict_text(a), *tb = rp_verdict_text(b);
    cr_assert(eq(str, ta, tb), "the text read back differs");
    free(ta);
    free(tb);
    rp_run_free_read(&back);
    free(json);
    rp_scenario_clear(&sc);
}

/* A recording's leak: the groups of one class, holder and site, however
 * many path shapes (a graph's nodes) and categories they are. */
static rp_verdict *compiled(void)
{
    rp_verdict *v = rp_verdict_new();
    cr_assert(ne(ptr, v, NULL));
    v->line = 1329;
    snprintf(v->at_file, sizeof v->at_file, "prog.py");
    v->at_line = 20;
    v->fails_on = (1u << HP_CL_LOST) | (1u << HP_CL_ACCUMULATING);
    rp_vgroup gs[] = {
        group(HP_CL_ACCUMULATING, FK_CAT_FAKE, RP_ROOT_PROGRAM, RP_MECH_NONE, "COMPILED",
              "COMPILED[0].graph node tanh -> tensor#3", 48),
        group(HP_CL_ACCUMULATING, FK_CAT_FAKE, RP_ROOT_PROGRAM, RP_MECH_NONE, "COMPILED",
              "COMPILED[0].graph node mm -> tensor#4", 36),
        group(HP_CL_ACCUMULATING, FK_CAT_MODE, RP_ROOT_PROGRAM, RP_MECH_NONE, "COMPILED",
              "COMPILED[0].graph node mm -> tensor#4.mode -> fake_mode#1", 12),
        group(HP_CL_ACCUMULATING, FK_CAT_FAKE, RP_ROOT_PROGRAM, RP_MECH_NONE, "KEEP",
              "KEEP[0] -> tensor#9", 5),
        group(HP_CL_REACHABLE, FK_CAT_FAKE, RP_ROOT_PROGRAM, RP_MECH_NONE, "COMPILED",
              "COMPILED[0].graph node x -> tensor#2", 1),
        group(HP_CL_LOST, FK_CAT_FAKE, RP_ROOT_PYTORCH, RP_MECH_REFCOUNT_LEAK, "",
              "unreachable -> tensor#7", 20),
        group(HP_CL_LOST, FK_CAT_MODE, RP_ROOT_PYTORCH, RP_MECH_REFCOUNT_LEAK, "",
              "unreachable -> fake_mode#8", 10),
    };
    uint32_t rounds[][2] = {{1, 12}, {1, 12}, {1, 12}, {1, 5}};
    for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) {
        if (i < 4)
            gs[i].first_round = rounds[i][0], gs[i].last_round = rounds[i][1],
            gs[i].rounds = rounds[i][1];
        if (i <= 4)   /* one site, held by COMPILED or by KEEP */
            gs[i].line = 17;
        cr_assert(eq(int, rp_verdict_add_group(v, &gs[i]), 0));
        v->count[gs[i].cls] += gs[i].count;
    }
    return v;
}

Test(verdict, one_line_per_leak_before_its_groups)
{
    rp_verdict *v = compiled();
    size_t want_lead[] = {0, 0, 0, 3, 4, 5, 5};
    for (size_t i = 0; i < v->ngroups; i++)
        cr_assert(eq(sz, rp_verdict_leak_of(v, i), want_lead[i]), "group %zu's leak", i);
    rp_vleak l;
    char buf[400];
    rp_verdict_leak(v, 0, &l);
    cr_assert(eq(sz, l.ngroups, 3));
    cr_assert(eq(u64, l.total, 96));
    rp_vleak_summary(v, &l, buf, sizeof buf);
    cr_assert(eq(str, buf, "84 fake tensors and 12 modes in COMPILED, +7 per round at prog.py:17"));
    rp_verdict_leak(v, 5, &l);
    rp_vleak_summary(v, &l, buf, sizeof buf);
    cr_assert(eq(str, buf, "20 fake tensors and 10 modes lost inside PyTorch (a reference-count "
                           "leak) at prog.py:11"));
    rp_verdict_leak(v, 4, &l);
    rp_vleak_summary(v, &l, buf, sizeof buf);
    cr_assert(eq(str, buf, "1 fake tensor in COMPILED, still reachable, at prog.py:17"));
    char *t = rp_verdict_text(v);
    cr_assert(ne(ptr, t, NULL));
    const char *want =
        "verdict at the program's end, after prog.py:20 (the model's retention analysis after "
        "a full collection; fails on: lost accumulating; the recording's line 1329): 30 lost, "
        "101 accumulating, 1 still reachable, 0 lingering\n"
        "  84 fake tensors and 12 modes in COMPILED, +7 per round at prog.py:17\n"
        "    accumulating: 48 fake tensors made at prog.py:17, ";
    cr_assert(eq(int, strncmp(t, want, strlen(want)), 0), "want [%s] in:\n%s", want, t);
    const char *order[] = {"node tanh", "node mm -> tensor#4\n", "fake_mode#1\n",
                           "  5 fake tensors in KEEP, +1 per round at prog.py:17\n",
                           "KEEP[0] -> tensor#9", "  1 fake tensor in COMPILED", "node x",
                           "  20 fake tensors and 10 modes lost inside PyTorch",
                           "    lost: 20 fake tensors", "    lost: 10 modes"};
    const char *at = t;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        const char *p = strstr(at, order[i]);
        cr_assert(ne(ptr, (void *)p, NULL), "[%s] after the previous in:\n%s", order[i], t);
        at = p;
    }
    rp_verdict_summary(v, buf, sizeof buf);
    cr_assert(eq(str, buf, "30 lost, 101 accumulating: 84 fake tensors and 12 modes in COMPILED, "
                           "+7 per round at prog.py:17 (and 2 more leaks)"));
    char where[64];
    snprintf(v->ended, sizeof v->ended, "uncaught ValueError");   /* its true end */
    v->at_line = 31;
    rp_verdict_where(v, where, sizeof where);
    cr_assert(eq(str, where, "at the program's end, prog.py:31, uncaught ValueError"));
    v->at_file[0] = '\0';   /* a hand-written scenario: its own line */
    rp_verdict_where(v, where, sizeof where);
    cr_assert(eq(str, where, "at line 1329"));
    free(t);
    rp_verdict_free(v);
}

/* A lingering group in a design with no sweep (mechanism stale-entry) is not
 * said to wait for one, in its line, its leak's line and its holder. */
Test(verdict, a_stale_entry_is_not_said_to_await_a_sweep)
{
    rp_verdict *v = rp_verdict_new();
    cr_assert(ne(ptr, v, NULL));
    rp_vgroup g = group(HP_CL_LINGERING, FK_CAT_MEMO, RP_ROOT_PYTORCH, RP_MECH_STALE_ENTRY, "",
                        "m -> FakeTensorMode#1.converter.constant_ref[0] -> tensor#12", 1);
    cr_assert(eq(int, rp_verdict_add_group(v, &g), 0));
    v->count[HP_CL_LINGERING] = 1;
    char *t = rp_verdict_text(v);
    cr_assert(ne(ptr, t, NULL));
    const char *want[] = {
        "  1 stale memo entry left in a weak table that no sweep clears, at prog.py:11\n",
        "    lingering: 1 stale memo entry made at prog.py:11, left in its weak table, which "
        "this design never sweeps (it goes with the table's owner, or when the entry is "
        "cleared): m -> FakeTensorMode#1.converter.constant_ref[0] -> tensor#12\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(ne(ptr, strstr(t, want[i]), NULL), "missing [%s] in:\n%s", want[i], t);
    cr_assert(eq(ptr, strstr(t, "sweep ("), NULL), "a sweep awaited in:\n%s", t);
    char h[64];
    rp_vgroup_holder(&v->groups[0], h, sizeof h);
    cr_assert(eq(str, h, "a stale entry"));
    cr_assert(eq(str, (char *)rp_mechanism_word(RP_MECH_STALE_ENTRY), "stale-entry"));
    free(t);
    rp_verdict_free(v);
}
