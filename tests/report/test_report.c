/* Tests of src/report: the text summary line, JSON (schema, escaping,
 * round trip through rp_read_json), JUnit and TAP content, the reader's
 * refusal of malformed input without leaks, and rp_diff. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/al.h"
#include "core/er.h"
#include "report/rp.h"
#include "report/rp_diff.h"
#include "report/rp_int.h"
#include "report/treport.h"

TestSuite(report, .init = tr_setup, .fini = tr_teardown);

/* --- building runs ------------------------------------------------------------ */

static const char *CLI_PATH[] = {"m", "FakeTensorMode#2.converter", "FakeTensorConverter#3.meta",
                                 "MetaConverter#4.storage_memo[0]", "storage#41"};

static void set_record(hp_retained *r, uint64_t id, obj_kind kind, const char *type,
                       uint32_t line, uint64_t bytes, hp_reason reason, const char *const *path,
                       size_t n)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    r->kind = kind;
    r->type_name = type;
    r->site.file = "t.scn";
    r->site.line = line;
    r->bytes = bytes;
    r->retained_bytes = bytes;
    r->reason = reason;
    snprintf(r->describe, sizeof r->describe, "%s", "f32[4, 4] cpu");
    cr_assert_eq(hp_retained_set_path(r, path, n), 0);
}

/* n storages retained via the memo, ids from first_id */
static void add_retained(rp_scenario *s, size_t n, uint64_t first_id)
{
    s->retained = al_malloc(n * sizeof *s->retained, AL_K_HEAP, "test");
    cr_assert_not_null(s->retained);
    for (size_t i = 0; i < n; i++) {
        char last[32], memo[64];
        snprintf(last, sizeof last, "storage#%llu", (unsigned long long)(first_id + i));
        snprintf(memo, sizeof memo, "MetaConverter#4.storage_memo[%zu]", i);
        const char *p[] = {CLI_PATH[0], CLI_PATH[1], CLI_PATH[2], memo, last};
        set_record(&s->retained[i], first_id + i, OBJ_STORAGE, "storage", 3, 64,
                   HP_STALE_MEMO, p, 5);
    }
    s->nretained = n;
}

static const char *ERROR_TEXT = "naïve \x01 tab\t quote\" <xml>&'\xff end";

/* pass a, fail b (a failure and one retained storage), error c, skip d */
static rp_run *make_run(void)
{
    rp_run *run = calloc(1, sizeof *run);
    static const char *inject[] = {"strong-memo"};
    run->tool = "fakegc";
    run->version = "0.1.0";
    run->allocator = "libc";
    run->compat = NULL;
    run->inject = inject;
    run->ninject = 1;
    run->n = 4;
    run->scenarios = calloc(4, sizeof *run->scenarios);
    const char *files[] = {"scenarios/a.scn", "scenarios/memo/b.scn", "scenarios/c.scn",
                           "scenarios/d.scn"};
    rp_status st[] = {RP_PASS, RP_FAIL, RP_ERROR, RP_SKIP};
    for (int i = 0; i < 4; i++) {
        rp_scenario *s = &run->scenarios[i];
        cr_assert_eq(rp_scenario_set_file(s, files[i]), 0);
        s->status = st[i];
        s->passed = 7;
        s->statements = 40;
        s->allocations = 210;
        s->peak_bytes = 9120;
        s->wall_ms = i == 0 ? 0.31 : 2.0;
    }
    rp_scenario *b = &run->scenarios[1];
    b->failed = 1;
    rp_failure *f = rp_scenario_add_failure(b, 12, 1, "expect m.memo_meta == 0", "1",
                                            "eager policy frees the storage entry at once");
    cr_assert_not_null(f);
    f->cause = RP_FC_EXPECT;
    f->query_of = RP_Q_ATTR;
    snprintf(f->query, sizeof f->query, "%s", "memo_meta");
    f->objects = al_malloc(sizeof *f->objects, AL_K_HEAP, "test");
    set_record(f->objects, 40, OBJ_TENSOR, "tensor", 2, 100, HP_REACHABLE, CLI_PATH, 3);
    f->nobjects = 1;
    add_retained(b, 1, 41);
    cr_assert_eq(rp_scenario_add_checkpoint(b, "loop", 0), 0);
    cr_assert_eq(rp_scenario_add_checkpoint(b, "after", -2), 0);
    b->leaked_bytes = 64;
    b->valgrind_checked = 1;
    b->valgrind_definite = 16;
    rp_scenario *c = &run->scenarios[2];
    cr_assert_eq(rp_scenario_set_error(c, ERROR_TEXT), 0);
    rp_run_count(run);
    return run;
}

static void free_run(rp_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        rp_scenario_clear(&run->scenarios[i]);
    free(run->scenarios);
    free(run);
}

/* The records made whole, as a runner's are when each scenario ends. */
static void whole(const rp_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        cr_assert_eq(rp_scenario_group(&run->scenarios[i]), 0, "%s", er_message());
}

static char *render(const rp_run *run, rp_format fmt, const rp_options *o)
{
    whole(run);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(rp_write(run, fmt, f, o), 0, "rp_write: %s", er_message());
    fclose(f);
    return text;
}

#define HAS(text, needle) \
    cr_expect(strstr((text), (needle)) != NULL, "missing [%s] in:\n%s", (needle), (text))

/* --- text ------------------------------------------------------------------ */

/* A message already quoted in the expectation's text is not said again
 * after the actual value; one the text does not hold still is. */
Test(report, quoted_message_not_repeated)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    cr_assert_not_null(rp_scenario_add_failure(b, 13, 1, "expect live() == 0, \"no tensor left\"",
                                               "2", "no tensor left"));
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "b.scn:13: expect live() == 0, \"no tensor left\"  actual: 2\n");
    HAS(t, "actual: 1  eager policy frees the storage entry at once\n");
    free(t);
    free_run(run);
}

/* A group's or an object's line that would pass 100 columns goes on
 * before "created", four columns in (text_lines_details_and_summary has
 * short ones, on one line). */
/* make_run with two storages retained by b (ids 500, 501) instead of one. */
static rp_scenario *two_retained(rp_run *run)
{
    rp_scenario *b = &run->scenarios[1];
    hp_retained_free(b->retained, b->nretained);
    b->retained = NULL;
    add_retained(b, 2, 500);
    return b;
}

Test(report, long_lines_continue_before_created)
{
    rp_run *run = make_run();
    rp_scenario *b = two_retained(run);
    static const char LONG[] = "scenarios/regressions/a_scenario_with_a_rather_long_name.scn";
    for (size_t i = 0; i < b->nretained; i++)
        b->retained[i].site.file = LONG;
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "    2 x storage (storage), 64 B each, 128 B in all, retaining 128 B,\n"
           "        created scenarios/regressions/a_scenario_with_a_rather_long_name.scn:3,"
           " stale-memo\n");
    HAS(t, "      storage#500 (f32[4, 4] cpu) 64 B, retains 64 B,\n"
           "          created scenarios/regressions/a_scenario_with_a_rather_long_name.scn:3,"
           " stale-memo:\n");
    for (const char *l = t; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        cr_expect_leq(len, 100, "a %zu-column line: %.*s", len, (int)len, l);
        l += len + (e != NULL);
    }
    free(t);
    free_run(run);
}

/* A type name longer than a group line's buffer is cut, not written past
 * it (ASan in the asan preset sees an overflow). */
Test(report, group_line_with_a_huge_type_name_is_cut)
{
    rp_run *run = make_run();
    rp_scenario *b = two_retained(run);
    static char huge[1000];
    memset(huge, 'T', sizeof huge - 1);
    for (size_t i = 0; i < b->nretained; i++)
        b->retained[i].type_name = huge;
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "    2 x storage (TTTTTTTT");
    cr_expect(strstr(t, "created t.scn:3, stale-memo\n") != NULL, "no site line in:\n%s", t);
    free(t);
    free_run(run);
}

/* A reference-count leak's counts go on a line of their own, four columns
 * in (beside the rest they would pass 100 columns). */
Test(report, refcount_counts_on_their_own_line)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    hp_retained *r = &b->retained[0];
    r->reason = HP_REFCOUNT_LEAK;
    r->strong = 2;
    r->found = 1;
    const char *p[] = {"unreachable", "storage#41"};
    cr_assert_eq(hp_retained_set_path(r, p, 2), 0);
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "    storage#41 (f32[4, 4] cpu) 64 B, retains 64 B, created t.scn:3, refcount-leak\n"
           "        (strong count 2, holders found 1: 1 reference unaccounted for):\n"
           "      unreachable -> storage#41\n");
    free(t);
    free_run(run);
}

Test(report, text_lines_details_and_summary)
{
    rp_run *run = make_run();
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "PASS scenarios/a.scn\nFAIL scenarios/memo/b.scn\nERROR scenarios/c.scn\n"
           "SKIP scenarios/d.scn\n");
    /* a failure's line over 100 columns puts the actual value and the
     * message on the next (quoted_message_not_repeated has one that fits) */
    HAS(t, "  scenarios/memo/b.scn:12: expect m.memo_meta == 0\n"
           "      actual: 1  eager policy frees the storage entry at once\n");
    /* a path over 100 columns goes on, between elements, four columns in */
    HAS(t, "      m -> FakeTensorMode#2.converter -> FakeTensorConverter#3.meta\n"
           "        -> MetaConverter#4.storage_memo[0] -> storage#41\n");
    /* a group of one is its object's line: nothing said twice */
    HAS(t, "storage#41 (f32[4, 4] cpu) 64 B, retains 64 B, created t.scn:3, stale-memo:\n");
    cr_expect_null(strstr(t, "1 x storage (storage)"), "%s", t);
    HAS(t, "leaked: 64 B still live in the allocator");
    HAS(t, "valgrind: 16 B definitely lost");
    /* a terminal gets no control byte and no invalid UTF-8 (U+FFFD) */
    HAS(t, "error: naïve ? tab\t quote\" <xml>&'\xEF\xBF\xBD end\n");
    cr_expect_null(strchr(t, '\033'), "no colour unless asked");
    size_t len = strlen(t);
    const char *want = "\n1 passed, 2 failed, 1 skipped\n";
    cr_assert_geq(len, strlen(want));
    cr_expect_str_eq(t + len - strlen(want), want, "the summary line ends the text");
    free(t);

    /* colour is on the status words, never on the summary line */
    o.color = 1;
    t = render(run, RP_TEXT, &o);
    HAS(t, "\033[32mPASS\033[0m scenarios/a.scn");
    len = strlen(t);
    cr_expect_str_eq(t + len - strlen(want), want);
    free(t);

    /* quiet: no PASS/SKIP lines */
    o.color = 0;
    o.quiet = 1;
    t = render(run, RP_TEXT, &o);
    cr_expect_null(strstr(t, "PASS scenarios/a.scn"));
    HAS(t, "FAIL scenarios/memo/b.scn");
    free(t);

    /* no skipped: no ", N skipped" */
    run->scenarios[3].status = RP_PASS;
    rp_run_count(run);
    o.quiet = 0;
    t = render(run, RP_TEXT, &o);
    want = "\n2 passed, 2 failed\n";
    len = strlen(t);
    cr_expect_str_eq(t + len - strlen(want), want);
    free(t);
    free_run(run);
}

Test(report, text_caps_objects_unless_verbose)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    hp_retained_free(b->retained, b->nretained);
    b->retained = NULL;
    b->nretained = 0;
    add_retained(b, 8, 100);
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "retained: 8 objects, 512 B");
    HAS(t, "8 x storage (storage), 64 B each");
    /* groups with a total and one example each; "... and N more" states
     * the group's real N */
    HAS(t, "storage#100");
    cr_expect_null(strstr(t, "storage#101"), "one example per group");
    HAS(t, "... and 7 more\n");
    free(t);
    o.verbose = 1;
    t = render(run, RP_TEXT, &o);
    HAS(t, "storage#100");
    HAS(t, "checkpoint \"after\": growth -2");
    free(t);
    free_run(run);
}

/* --- JSON --------------------------------------------------------------------- */

Test(report, json_schema_and_escaping)
{
    rp_run *run = make_run();
    char *t = render(run, RP_JSON, NULL);
    HAS(t, "\"schema\": \"fakegc-report/3\", \"tool\": \"fakegc\", \"version\": \"0.1.0\", "
           "\"allocator\": \"libc\"");
    HAS(t, "\"status\": \"error\", \"stopped\": null");
    HAS(t, "\"inject\": [\"strong-memo\"], \"compat\": null");
    HAS(t, "\"status\": \"fail\"");
    HAS(t, "\"expectations\": {\"passed\": 7, \"failed\": 1}");
    HAS(t, "{\"line\": 12, \"text\": \"expect m.memo_meta == 0\", \"actual\": 1, "
           "\"message\": \"eager policy frees the storage entry at once\"");
    HAS(t, "{\"id\": 41, \"kind\": \"storage\", \"created\": \"t.scn:3\", \"bytes\": 64, "
           "\"retained_bytes\": 64, \"reason\": \"stale-memo\", \"path\": [\"m\", "
           "\"FakeTensorMode#2.converter\", \"FakeTensorConverter#3.meta\", "
           "\"MetaConverter#4.storage_memo[0]\", \"storage#41\"]");
    HAS(t, "\"stats\": {\"statements\": 40, \"allocations\": 210, \"peak_bytes\": 9120, "
           "\"wall_ms\": 0.31, \"leaked_bytes\": 0, \"footprint_bytes\": 0}");
    HAS(t, "\"wall_ms\": 2, ");
    HAS(t, "\"checkpoints\": [{\"name\": \"loop\", \"growth\": 0}, {\"name\": \"after\", "
           "\"growth\": -2}]");
    HAS(t, "\"valgrind\": {\"definite\": 16, \"indirect\": 0}");
    HAS(t, "\"valgrind\": null");
    HAS(t, "\"error\": \"naïve \\u0001 tab\\t quote\\\" <xml>&'\xEF\xBF\xBD end\"");
    HAS(t, "\"groups\": [\n        {\"count\": 1, \"kind\": \"storage\"");
    HAS(t, "\"summary\": {\"passed\": 1, \"failed\": 2, \"skipped\": 1, \"errors\": 1}\n}\n");
    free(t);
    free_run(run);
}

Test(report, json_round_trips_through_the_reader)
{
    rp_run *run = make_run();
    char *t = render(run, RP_JSON, NULL);
    rp_run back;
    char err[256];
    cr_assert_eq(rp_read_json_text(t, strlen(t), "mem", &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n, 4);
    cr_expect_str_eq(back.tool, "fakegc");
    cr_expect_str_eq(back.allocator, "libc");
    cr_expect_null(back.compat);
    cr_assert_eq(back.ninject, 1);
    cr_expect_str_eq(back.inject[0], "strong-memo");
    cr_expect_eq(back.passed, 1);
    cr_expect_eq(back.failed, 2);
    cr_expect_eq(back.skipped, 1);
    const rp_scenario *b = &back.scenarios[1];
    cr_expect_str_eq(b->file, "scenarios/memo/b.scn");
    cr_expect_eq(b->status, RP_FAIL);
    cr_expect_eq(b->passed, 7);
    cr_expect_eq(b->failed, 1);
    cr_assert_eq(b->nfailures, 1);
    cr_expect_eq(b->failures[0].line, 12);
    cr_expect_eq(b->failures[0].col, 1);
    cr_expect_str_eq(b->failures[0].text, "expect m.memo_meta == 0");
    cr_expect_str_eq(b->failures[0].actual, "1");
    cr_expect_str_eq(b->failures[0].query, "memo_meta", "the query reads back");
    cr_assert_eq(b->failures[0].nobjects, 1);
    cr_expect_eq(b->failures[0].objects[0].id, 40);
    cr_assert_eq(b->nretained, 1);
    const hp_retained *r = &b->retained[0];
    cr_expect_eq(r->id, 41);
    cr_expect_eq(r->kind, OBJ_STORAGE);
    cr_expect_str_eq(r->type_name, "storage");
    cr_expect_str_eq(r->site.file, "t.scn");
    cr_expect_eq(r->site.line, 3);
    cr_expect_eq(r->bytes, 64);
    cr_expect_eq(r->reason, HP_STALE_MEMO);
    cr_assert_eq(r->path_len, 5);
    for (int i = 0; i < 5; i++)
        cr_expect_str_eq(r->path[i], CLI_PATH[i]);
    cr_expect_str_eq(r->describe, "f32[4, 4] cpu");
    cr_expect_eq(b->ngroups, 1);
    cr_expect_eq(b->statements, 40);
    cr_expect_eq(b->leaked_bytes, 64);
    cr_expect_eq(b->valgrind_checked, 1);
    cr_expect_eq(b->valgrind_definite, 16);
    cr_assert_eq(b->ncheckpoints, 2);
    cr_expect_str_eq(b->checkpoints[1].name, "after");
    cr_expect_eq(b->checkpoints[1].growth, -2);
    cr_expect(back.scenarios[0].wall_ms == 0.31, "wall_ms reads back exactly");
    /* the invalid byte was replaced on output; the rest is intact */
    cr_expect_str_eq(back.scenarios[2].error, "naïve \x01 tab\t quote\" <xml>&'\xEF\xBF\xBD end");
    cr_expect_eq(back.scenarios[3].status, RP_SKIP);
    /* and writing what was read gives the same bytes */
    char *t2 = render(&back, RP_JSON, NULL);
    cr_expect_str_eq(t2, t, "JSON -> read -> JSON is the identity");
    free(t2);
    rp_run_free_read(&back);
    free(t);
    free_run(run);
}

/* A failed expectation's SARIF rule is what it asked (the query recorded
 * with it), whatever its text says: the text is for people. */
Test(report, a_failed_expectation_s_rule_is_its_query)
{
    rp_run *run = make_run();
    rp_failure *f = &run->scenarios[1].failures[0];
    char *t = render(run, RP_SARIF, NULL);
    HAS(t, "\"ruleId\": \"fakegc/expect/memo_meta\"");
    free(t);
    rp_free_str(f->text);
    cr_assert_eq(rp_dup(&f->text, "expect h.item() == 5"), 0);
    snprintf(f->query, sizeof f->query, "%s", "item");
    t = render(run, RP_SARIF, NULL);
    HAS(t, "\"ruleId\": \"fakegc/expect/item\"");
    free(t);
    f->query[0] = '\0';   /* plain values, or no expectation */
    t = render(run, RP_SARIF, NULL);
    HAS(t, "\"ruleId\": \"fakegc/expect/value\"");
    free(t);
    free_run(run);
}

Test(report, read_from_a_file_and_a_missing_file)
{
    rp_run *run = make_run();
    char path[] = "/tmp/fakegc-rp-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    whole(run);
    cr_assert_eq(rp_write(run, RP_JSON, f, NULL), 0);
    fclose(f);
    rp_run back;
    char err[256] = "";
    cr_expect_eq(rp_read_json(path, &back, err, sizeof err), 0, "%s", err);
    cr_expect_eq(back.n, 4);
    rp_run_free_read(&back);
    unlink(path);
    cr_expect_eq(rp_read_json(path, &back, err, sizeof err), -1);
    HAS(err, "cannot read");
    cr_expect_eq(back.n, 0);
    free_run(run);
}

/* rp_diff_read with NEW holding text (NULL: as it is); what it read freed. */
static int diff_read(const char *base, const char *cur, const char *text, int *nread)
{
    if (text) {
        FILE *f = fopen(cur, "w");
        fputs(text, f);
        fclose(f);
    }
    rp_run runs[2];
    char err[256];
    *nread = 0;
    int r = rp_diff_read(base, cur, runs, nread, err, sizeof err);
    for (int k = 0; k < *nread; k++)
        rp_run_free_read(&runs[k]);
    return r;
}

/* diff's two reports: NEW empty or cut off is unfinished (a regression),
 * NEW missing or not JSON is unreadable, BASE is never "unfinished". */
Test(report, diff_reads_two_reports)
{
    rp_run *run = make_run();
    char base[] = "/tmp/fakegc-rp-XXXXXX", cur[] = "/tmp/fakegc-rp-XXXXXX";
    FILE *f = fdopen(mkstemp(base), "w");
    whole(run);
    cr_assert_eq(rp_write(run, RP_JSON, f, NULL), 0);
    fclose(f);
    close(mkstemp(cur));
    int nread;
    cr_expect_eq(diff_read(base, cur, NULL, &nread), RP_DIFF_UNFINISHED);
    cr_expect_eq(nread, 1);
    cr_expect_eq(diff_read(base, cur, "{\"tool\": \"fakegc\", \"scenar", &nread),
                 RP_DIFF_UNFINISHED);
    cr_expect_eq(diff_read(base, cur, "PASS memo/x.scn\n", &nread), RP_DIFF_UNREADABLE);
    cr_expect_eq(diff_read(cur, base, NULL, &nread), RP_DIFF_UNREADABLE);
    cr_expect_eq(nread, 0);
    cr_expect_eq(diff_read(base, base, NULL, &nread), RP_DIFF_READ);
    cr_expect_eq(nread, 2);
    unlink(cur);
    rp_run runs[2];
    char err[256];
    nread = 0;
    cr_expect_eq(rp_diff_read(base, cur, runs, &nread, err, sizeof err), RP_DIFF_UNREADABLE);
    HAS(err, "cannot read");
    rp_run_free_read(&runs[0]);
    unlink(base);
    free_run(run);
}

/* --- hostile input ----------------------------------------------------------------- */

static void expect_reject(const char *text, size_t len, const char *msg_part)
{
    rp_run back;
    char err[256] = "";
    uint64_t before = al_live_bytes();
    cr_expect_eq(rp_read_json_text(text, len, "bad.json", &back, err, sizeof err), -1,
                 "accepted: %.60s", text);
    cr_expect(strncmp(err, "bad.json:", 9) == 0, "message names the input: %s", err);
    if (msg_part)
        cr_expect(strstr(err, msg_part) != NULL, "want [%s] in [%s]", msg_part, err);
    cr_expect_eq(back.n, 0);
    cr_expect_null(back.scenarios);
    cr_expect_null(back.owned);
    cr_expect_eq(al_live_bytes(), before, "leak on a rejected input: %s", err);
}

#define REJECT(s, part) expect_reject((s), strlen(s), (part))

Test(report, reader_rejects_malformed_input)
{
    REJECT("", "expected an object");
    REJECT("   ", "expected an object");
    REJECT("[]", "not a fakegc JSON report");
    REJECT("{}", "no \"scenarios\"");
    REJECT("{\"scenarios\": [", "unexpected end");
    REJECT("{\"scenarios\": []", "unexpected end");
    REJECT("{\"scenarios\": []} x", "trailing characters");
    REJECT("{\"scenarios\": [],}", "expected a string");
    REJECT("{\"x\": [1,], \"scenarios\": []}", "trailing ','");
    REJECT("{\"scenarios\": [1]}", "expected an object");
    REJECT("{\"tool\": \"a\\qb\", \"scenarios\": []}", "bad escape");
    REJECT("{\"tool\": \"\\ud800\", \"scenarios\": []}", "lone surrogate");
    REJECT("{\"tool\": \"\\u12\", \"scenarios\": []}", "hex digit");
    REJECT("{\"tool\": \"\\u0000\", \"scenarios\": []}", "\\u0000");
    REJECT("{\"tool\": \"a\nb\", \"scenarios\": []}", "control character");
    REJECT("{\"tool\": \"abc", "unterminated string");
    REJECT("{\"x\": 01, \"scenarios\": []}", "leading zero");
    REJECT("{\"x\": 1.e5, \"scenarios\": []}", "digits expected");
    REJECT("{\"x\": tru, \"scenarios\": []}", "unexpected character");
    REJECT("{\"scenarios\": [{\"file\": \"a\"}]}", "without \"file\" or \"status\"");
    REJECT("{\"scenarios\": [{\"file\": \"a\", \"status\": \"weird\"}]}", "unknown status");
    REJECT("{\"scenarios\": [{\"file\": \"a\", \"status\": \"fail\", \"retained\": "
           "[{\"id\": -1, \"kind\": \"storage\"}]}]}",
           "non-negative integer");
    REJECT("{\"scenarios\": [{\"file\": \"a\", \"status\": \"fail\", \"retained\": "
           "[{\"id\": 1, \"kind\": \"storage\", \"path\": [\"m\", 3]}]}]}",
           "expected a string");
    REJECT("{\"scenarios\": [{\"file\": \"a\", \"status\": \"fail\", \"retained\": "
           "[{\"id\": 99999999999999999999, \"kind\": \"storage\"}]}]}",
           "non-negative integer");
}

Test(report, reader_refuses_deep_nesting)
{
    size_t n = 100000;
    char *deep = malloc(n + 64);
    strcpy(deep, "{\"scenarios\": [], \"x\": ");
    size_t at = strlen(deep);
    memset(deep + at, '[', n);
    deep[at + n] = '\0';
    expect_reject(deep, at + n, "nesting deeper than 64");
    /* the same depth, closed properly, is refused too */
    char *closed = malloc(2 * n + 64);
    strcpy(closed, deep);
    memset(closed + at + n, ']', n);
    strcpy(closed + at + 2 * n, "}");
    expect_reject(closed, strlen(closed), "nesting deeper than 64");
    free(closed);
    free(deep);
    /* but a moderately nested unknown value is skipped */
    const char *ok = "{\"x\": [[[[{\"y\": [1, 2.5e-3, true, false, null, \"s\"]}]]]], "
                     "\"scenarios\": []}";
    rp_run back;
    char err[128];
    cr_expect_eq(rp_read_json_text(ok, strlen(ok), "ok", &back, err, sizeof err), 0, "%s", err);
    rp_run_free_read(&back);
}

Test(report, reader_survives_every_truncation_and_byte_flips)
{
    rp_run *run = make_run();
    char *t = render(run, RP_JSON, NULL);
    size_t len = strlen(t);
    uint64_t before = al_live_bytes();
    for (size_t cut = 0; cut < len; cut++) {
        /* whitespace after the last '}' may go: everything else must fail */
        rp_run back;
        char err[128];
        int rc = rp_read_json_text(t, cut, "cut", &back, err, sizeof err);
        cr_assert(rc == -1 || cut >= len - 1, "a truncation at %zu was accepted", cut);
        if (rc == 0)
            rp_run_free_read(&back);
    }
    /* deterministic pseudo-random corruption: accept or reject, never crash */
    char *copy = malloc(len + 1);
    uint64_t x = 88172645463325252ULL;
    for (int round = 0; round < 2000; round++) {
        memcpy(copy, t, len + 1);
        for (int k = 0; k < 3; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            copy[x % len] = (char)(x >> 32);
        }
        rp_run back;
        char err[128];
        if (rp_read_json_text(copy, len, "flip", &back, err, sizeof err) == 0)
            rp_run_free_read(&back);
    }
    cr_expect_eq(al_live_bytes(), before, "no leak across the corruption rounds");
    free(copy);
    free(t);
    free_run(run);
}

Test(report, reader_and_writer_under_allocation_failure)
{
    rp_run *run = make_run();
    char *t = render(run, RP_JSON, NULL);
    size_t len = strlen(t);
    uint64_t before = al_live_bytes();
    int done = 0;
    for (uint64_t k = 1; k < 5000 && !done; k++) {
        er_clear();
        al_fail_at(k, 0);
        uint64_t start = al_alloc_count();
        rp_run back;
        char err[128];
        int rc = rp_read_json_text(t, len, "oom", &back, err, sizeof err);
        uint64_t used = al_alloc_count() - start;
        al_fail_at(0, 0);
        if (rc == 0) {
            rp_run_free_read(&back);
            done = used < k;
        } else {
            cr_assert_eq(er_kind_get(), ER_OOM, "failure %llu: %s", (unsigned long long)k, err);
            cr_assert_null(back.scenarios);
        }
        cr_assert_eq(al_live_bytes(), before, "leak after failing allocation %llu",
                     (unsigned long long)k);
    }
    cr_expect(done, "a clean run ended the loop");
    /* grouping the record as it ends: a failure there is -1, ER_OOM, and
     * no leak; the record is grouped by the next try */
    rp_scenario *sc = &run->scenarios[1];
    hp_groups_free(sc->groups, sc->ngroups);
    sc->groups = NULL;
    sc->ngroups = 0;
    cr_assert_gt(sc->nretained, 0);
    uint64_t held = al_live_bytes();
    er_clear();
    al_fail_at(1, 1);
    int rc = rp_scenario_group(sc);
    al_fail_at(0, 0);
    cr_expect_eq(rc, -1, "the failed grouping is reported");
    cr_expect_eq(er_kind_get(), ER_OOM);
    cr_expect_eq(al_live_bytes(), held);
    cr_expect_null(sc->groups);
    er_clear();
    cr_expect_eq(rp_scenario_group(sc), 0);
    cr_expect_gt(sc->ngroups, 0);
    free(t);
    free_run(run);
}

/* --- JUnit, TAP ------------------------------------------------------------------ */

Test(report, junit_has_the_failure_escaped)
{
    rp_run *run = make_run();
    char *t = render(run, RP_JUNIT, NULL);
    HAS(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fakegc\" tests=\"4\" "
           "failures=\"1\" errors=\"1\" skipped=\"1\"");
    HAS(t, "<testcase name=\"scenarios/a.scn\" classname=\"fakegc.scenarios\" "
           "time=\"0.000310\"/>");
    HAS(t, "<testcase name=\"scenarios/memo/b.scn\" classname=\"fakegc.scenarios.memo\"");
    HAS(t, "<failure message=\"line 12: expect m.memo_meta == 0 (actual: 1); 1 object retained "
           "(64 B); 64 B leaked\" type=\"expectation\">");
    HAS(t, "scenarios/memo/b.scn:12: expect m.memo_meta == 0\n    actual: 1");
    HAS(t, "MetaConverter#4.storage_memo[0]\n      -&gt; storage#41");
    HAS(t, "<error message=\"naïve \xEF\xBF\xBD tab\t quote&quot; &lt;xml&gt;&amp;&apos;");
    HAS(t, "<skipped/>");
    HAS(t, "<property name=\"inject\" value=\"strong-memo\"/>");
    cr_expect_null(strchr(t, '\x01'), "no control characters in XML");
    cr_expect_null(strstr(t, "\xff"), "no invalid UTF-8 in XML");
    free(t);
    free_run(run);
}

Test(report, tap_has_plan_and_diagnostics)
{
    rp_run *run = make_run();
    char *t = render(run, RP_TAP, NULL);
    cr_expect(strncmp(t, "TAP version 13\n1..4\n", 20) == 0, "%s", t);
    HAS(t, "\nok 1 - scenarios/a.scn\n");
    HAS(t, "\nnot ok 2 - scenarios/memo/b.scn\n  ---\n");
    HAS(t, "  failures:\n    - line: 12\n      text: \"expect m.memo_meta == 0\"\n"
           "      actual: \"1\"\n");
    HAS(t, "      path: [\"m\", \"FakeTensorMode#2.converter\"");
    HAS(t, "  severity: error\n");
    HAS(t, "\nok 4 - scenarios/d.scn # SKIP\n");
    HAS(t, "  ...\n");
    free(t);
    free_run(run);
}

Test(report, names)
{
    rp_format f;
    cr_expect_eq(rp_format_from_name("junit", &f), 0);
    cr_expect_eq(f, RP_JUNIT);
    cr_expect_eq(rp_format_from_name("tap", &f), 0);
    cr_expect_eq(f, RP_TAP);
    cr_expect_eq(rp_format_from_name("xml", &f), -1);
    cr_expect_str_eq(rp_status_name(RP_ERROR), "error");
    cr_expect_str_eq(rp_status_name(RP_SKIP), "skip");
}

/* --- diff ---------------------------------------------------------------------- */

static char *diff_text(const rp_run *a, const rp_run *b, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *rc = rp_diff(a, b, f, NULL);
    fclose(f);
    return text;
}

Test(report, diff_identical_runs_is_clean)
{
    rp_run *a = make_run(), *b = make_run();
    int rc;
    char *t = diff_text(a, b, &rc);
    cr_expect_eq(rc, 0, "%s", t);
    HAS(t, "diff: 0 scenarios regressed (0 items), 0 improved (0 items)\n");
    free(t);
    free_run(a);
    free_run(b);
}

Test(report, diff_finds_new_failure_new_retained_and_growth)
{
    rp_run *base = make_run(), *cur = make_run();
    /* a: pass -> fail with a new failing line */
    rp_scenario *a = &cur->scenarios[0];
    a->status = RP_FAIL;
    cr_assert_not_null(rp_scenario_add_failure(a, 5, 1, "expect live() == 0", "3", NULL));
    /* b: one more storage retained (other ids: matching ignores them),
     * and the loop checkpoint grew */
    rp_scenario *b = &cur->scenarios[1];
    hp_retained_free(b->retained, b->nretained);
    b->retained = NULL;
    add_retained(b, 2, 500);
    b->checkpoints[0].growth = 10;
    rp_run_count(cur);
    int rc;
    char *t = diff_text(base, cur, &rc);
    cr_expect_eq(rc, 1, "%s", t);
    HAS(t, "scenarios/a.scn: pass -> fail\n  + status pass -> fail\n");
    HAS(t, "  + new failure at line 5: expect live() == 0  actual: 3\n");
    HAS(t, "  + newly retained: 1 x storage created t.scn:3 via m -> FakeTensorMode.converter -> "
           "FakeTensorConverter.meta -> MetaConverter.storage_memo -> storage (base 1, now 2)");
    HAS(t, "      storage#");   /* the dominator's retention path follows */
    HAS(t, "  + retained: 1 -> 2 objects, 64 -> 128 bytes\n");
    HAS(t, "  + checkpoint \"loop\": growth 0 -> 10\n");
    HAS(t, "diff: 2 scenarios regressed (5 items), 0 improved (0 items)\n");
    free(t);

    /* the other way round: improvements only, exit 0 */
    t = diff_text(cur, base, &rc);
    cr_expect_eq(rc, 0, "%s", t);
    HAS(t, "  - fixed at line 5: expect live() == 0");
    HAS(t, "  - no longer retained: 1 x storage");
    HAS(t, "diff: 0 scenarios regressed (0 items), 2 improved (5 items)\n");
    free(t);
    free_run(base);
    free_run(cur);
}

Test(report, diff_through_json_files)
{
    rp_run *base = make_run(), *cur = make_run();
    cur->scenarios[2].status = RP_PASS;   /* error -> pass */
    rp_scenario *a = &cur->scenarios[0];
    cr_assert_not_null(rp_scenario_add_failure(a, 9, 1, "expect stale() == 0", "1", NULL));
    a->status = RP_FAIL;
    char *tb = render(base, RP_JSON, NULL), *tc = render(cur, RP_JSON, NULL);
    rp_run rb, rc2;
    char err[128];
    cr_assert_eq(rp_read_json_text(tb, strlen(tb), "base", &rb, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rp_read_json_text(tc, strlen(tc), "new", &rc2, err, sizeof err), 0, "%s", err);
    int rc;
    char *t = diff_text(&rb, &rc2, &rc);
    cr_expect_eq(rc, 1, "%s", t);
    HAS(t, "new failure at line 9: expect stale() == 0  actual: 1");
    HAS(t, "scenarios/c.scn: error -> pass\n  - status error -> pass\n");
    free(t);
    rp_run_free_read(&rb);
    rp_run_free_read(&rc2);
    free(tb);
    free(tc);
    free_run(base);
    free_run(cur);
}

/* The reader's arrays grow geometrically (one realloc per element
 * made reading a 5M-object report quadratic), and a large file is refused
 * with the limit named. 20,000 scenarios with 3 failures each must take a
 * few dozen reallocs, not 80,000. */
Test(report, reader_arrays_grow_geometrically)
{
    size_t n = 20000, cap = n * 200 + 256, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "{\"tool\": \"fakegc\", \"scenarios\": [");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "%s{\"file\": \"s%zu.scn\", \"status\": \"fail\", \"failures\": "
                                "[{\"line\": 1}, {\"line\": 2}, {\"line\": 3}]}",
                                i ? ", " : "", i);
    len += (size_t)snprintf(t + len, cap - len, "]}");
    al_stats a, b;
    al_stats_get(&a);
    rp_run back;
    char err[256] = "";
    cr_assert_eq(rp_read_json_text(t, len, "big", &back, err, sizeof err), 0, "%s", err);
    al_stats_get(&b);
    cr_expect_eq(back.n, n, "%zu scenarios read", back.n);
    cr_expect_eq(back.scenarios[n - 1].nfailures, 3, "%zu failures", back.scenarios[n - 1].nfailures);
    uint64_t reallocs = b.total_reallocs - a.total_reallocs;
    cr_expect_lt(reallocs, 200, "%llu reallocs for %zu scenarios", (unsigned long long)reallocs, n);
    rp_run_free_read(&back);
    free(t);
}

/* --- bounded details --------------------------------------------------------- */

/* A failure with one record of id `id` (a memo-held tensor). */
static void add_failure_with(rp_scenario *s, uint32_t line, uint64_t id)
{
    rp_failure *f = rp_scenario_add_failure(s, line, 1, "expect m.memo_meta == 0", "1", "");
    cr_assert_not_null(f);
    f->objects = al_malloc(sizeof *f->objects, AL_K_HEAP, "test");
    cr_assert_not_null(f->objects);
    set_record(f->objects, id, OBJ_TENSOR, "tensor", 2, 100, HP_REACHABLE, CLI_PATH, 3);
    f->objects->holder = HP_HOLD_MEMO;
    f->nobjects = 1;
    s->failed++;
}

static size_t count_lines(const char *t)
{
    size_t n = 0;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

/* Two failures behind the same object: the second refers to the first; a
 * different object is listed. The JSON says the same. */
Test(report, failures_with_the_same_objects_say_so_once)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    add_failure_with(b, 20, 40);   /* the same object as line 12's */
    add_failure_with(b, 21, 77);
    cr_expect_eq(rp_failure_shares(b, 1), 0, "line 20 shares line 12's objects: %ld",
                 rp_failure_shares(b, 1));
    cr_expect_eq(rp_failure_shares(b, 2), -1, "line 21 has its own: %ld",
                 rp_failure_shares(b, 2));
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "b.scn:20: expect m.memo_meta == 0  actual: 1\n"
           "      the same 1 object as line 12, above\n");
    HAS(t, "tensor#77 (f32[4, 4] cpu) 100 B, retains 100 B,");
    HAS(t, "reachable, held only by a memo:");
    free(t);
    t = render(run, RP_JSON, &o);
    HAS(t, "\"same_objects_as\": 12");
    free(t);
    free_run(run);
}

/* 200 failures with objects of their own: the text stays within the
 * scenario's budget and counts what it left out; -v lists all. */
Test(report, a_scenario_with_many_failures_stays_within_its_lines)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    for (uint32_t i = 0; i < 200; i++)
        add_failure_with(b, 100 + i, 1000 + i);
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    const char *from = strstr(t, "scenarios/memo/b.scn:\n");
    cr_assert_not_null(from);
    const char *to = strstr(from, "\n\n");
    cr_assert_not_null(to);
    size_t n = 0;
    for (const char *p = from; p < to; p++)
        n += *p == '\n';
    cr_expect_leq(n, (size_t)RP_SCENARIO_LINES, "%zu lines of details, budget %d", n,
                  RP_SCENARIO_LINES);
    HAS(t, "more failing expectations (");
    HAS(t, "with objects behind them, ");
    HAS(t, "retained: 1 object");   /* the teardown's section is kept */
    size_t quiet = count_lines(t);
    free(t);
    rp_options v = {0, 1, 0, NULL};
    t = render(run, RP_TEXT, &v);
    cr_expect_gt(count_lines(t), quiet + 400, "-v: %zu lines, default %zu", count_lines(t), quiet);
    HAS(t, "tensor#1199 (f32[4, 4] cpu)");
    free(t);
    free_run(run);
}

/* A failing growth() or live() shows its per-kind table with a total. */
Test(report, kind_table_adds_up)
{
    rp_run *run = make_run();
    rp_scenario *b = &run->scenarios[1];
    rp_failure *f = rp_scenario_add_failure(b, 30, 1, "expect growth(\"start\") == 0", "5", "");
    cr_assert_not_null(f);
    f->kinds = al_malloc(2 * sizeof *f->kinds, AL_K_REPORT, "test");
    cr_assert_not_null(f->kinds);
    f->kinds[0] = (struct rp_kind_count){OBJ_TENSOR, 4, 3};
    f->kinds[1] = (struct rp_kind_count){OBJ_FINALIZER, 2, 2};
    f->nkinds = 2;
    rp_options o = {0};
    char *t = render(run, RP_TEXT, &o);
    HAS(t, "      tensor                        4           +3\n"
           "      finalizer                     2           +2\n"
           "      all                           6           +5\n");
    free(t);
    t = render(run, RP_JSON, &o);
    HAS(t, "\"kinds\": [{\"kind\": \"tensor\", \"now\": 4, \"delta\": 3}, "
           "{\"kind\": \"finalizer\", \"now\": 2, \"delta\": 2}]");
    free(t);
    free_run(run);
}
