/* A failure class's kind is a fact of the run that found it: the stress
 * report's "finding" object and its rerun line follow the kind, not the
 * class's text. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake/fk.h"
#include "stress/st.h"
#include "stress/st_report.h"

Test(class_kind, a_finding_outcome_is_a_finding)
{
    st_outcome o;
    st_finding_outcome(7, "use-after-free read of dead tensor #12", &o);
    cr_assert_eq(o.ncls, 1);
    cr_assert_eq(o.kind[0], ST_CK_FINDING, "kind %d, want %d (%s)", o.kind[0], ST_CK_FINDING,
                 o.cls[0]);
}

/* The kind, and an expectation's query, of the first class of text's run
 * (--verify with verify). */
static void kind_of_v(const char *text, int verify, const char *cls, st_class_kind want,
                      const char *query)
{
    st_env e;
    st_env_default(&e);
    e.sc.end_check = 1;
    e.sc.verify = verify;
    st_outcome o;
    st_run_text(&e, "in.scn", text, &o);
    cr_assert_eq(o.status, ST_FAIL, "%s: %s", text, o.first);
    cr_assert_str_eq(o.cls[0], cls, "%s: class '%s'", text, o.cls[0]);
    cr_assert_eq(o.kind[0], want, "%s: kind %d, want %d (%s)", text, o.kind[0], want, o.cls[0]);
    cr_assert_str_eq(o.query[0], query, "%s: query '%s', want '%s'", text, o.query[0], query);
}

static void kind_of(const char *text, const char *cls, st_class_kind want, const char *query)
{
    kind_of_v(text, 0, cls, want, query);
}

Test(class_kind, a_failing_expectation_is_no_finding)
{
    kind_of("x = ones(2)\nexpect bytes() == 1\n", "expect bytes() == N", ST_CK_EXPECT, "bytes");
    kind_of("m = fake_mode()\nexpect m.memo_meta == 1\n", "expect m.memo_meta == N",
            ST_CK_EXPECT, "memo_meta");
    kind_of("x = ones(2)\nexpect 1 == bytes()\n", "expect N == bytes()", ST_CK_EXPECT,
            "bytes");
}

Test(class_kind, a_tensor_query_is_one_of_its_own)
{
    kind_of("t = ones(2)\nexpect t.numel() == 3\n", "expect t.numel() == N",
            ST_CK_EXPECT_TENSOR, "numel");
    kind_of("t = ones(2)\nexpect t.size(0) == 3\n", "expect t.size(N) == N",
            ST_CK_EXPECT_TENSOR, "size");
}

/* What the words of a class also say, the kind says without them: an
 * expectation whose text reads like another class is still an expectation. */
Test(class_kind, the_kind_is_not_read_from_the_words)
{
    kind_of("x = ones(2)\nexpect x.dim() == 3, \"leak: retained: \"\n",
            "expect x.dim() == N, \"leak: retained: \"", ST_CK_EXPECT_TENSOR, "dim");
    kind_of("t = ones(2)\nu = t.sum(5)\n", "error: ShapeError: Dimension out of range "
            "(expected to be in range of [-N, N], but got N)", ST_CK_FAILURE, "");
    char err[96];
    cr_assert_eq(fk_inject("view-base-leak", err, sizeof err), 0, "%s", err);
    kind_of("t = ones(4)\nv = t.view(2, 2)\ndel v\ndel t\n", "retained: tensor",
            ST_CK_RETAINED, "");
    /* the invariant's own words, past the failure's framing */
    kind_of_v("t = ones(4)\nv = t.view(2, 2)\n", 1, "verify: strong count of tensor#N (tensor) "
              "is N, but N references were found: N strong edges, N roots, N finaliz",
              ST_CK_VERIFY, "");
    fk_inject("", err, sizeof err);
}

/* The document (JSON, or text) of a failed campaign whose class is cls of
 * kind k, its lifecycle in f.scn. */
static char *stress_doc(const char *cls, st_class_kind k, int json)
{
    st_doc_head h = {"0", "0", "guard", "strong-memo", NULL, "host", 0, 0, 0};
    st_stress_opts o;
    memset(&o, 0, sizeof o);
    st_stress_result r;
    memset(&r, 0, sizeof r);
    r.failed = 1;
    snprintf(r.cls, sizeof r.cls, "%s", cls);
    r.cls_kind = k;
    snprintf(r.first, sizeof r.first, "%s", "5: finding: use-after-free read  actual: x");
    snprintf(r.file, sizeof r.file, "%s", "f.scn");
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert(f);
    st_stress_doc d;
    memset(&d, 0, sizeof d);
    d.f = f;
    d.json = json;
    d.head = &h;
    d.o = &o;
    d.repro = "";
    st_stress_doc_write(&d, 1, &r);
    fclose(f);
    return buf;
}

Test(class_kind, the_report_follows_the_kind)
{
    char *a = stress_doc("finding: use-after-free read of dead tensor #N", ST_CK_FINDING, 1);
    cr_assert(strstr(a, "\"finding\": {\"kind\": \"use-after-free read\", \"line\": 5}"),
              "a finding's failure has its finding object:\n%s", a);
    free(a);
    char *b = stress_doc("finding: use-after-free read of dead tensor #N", ST_CK_FAILURE, 1);
    cr_assert(!strstr(b, "\"finding\":"), "a class that only reads as a finding has none:\n%s", b);
    free(b);
}

Test(class_kind, a_finding_reruns_without_verify)
{
    char *a = stress_doc("finding: use-after-free read of dead tensor #N", ST_CK_FINDING, 0);
    cr_assert(strstr(a, "reproduce: fakegc run --inject strong-memo --allocator guard f.scn"),
              "a finding reruns without --verify:\n%s", a);
    free(a);
    char *b = stress_doc("finding: use-after-free read of dead tensor #N", ST_CK_FAILURE, 0);
    cr_assert(strstr(b, "reproduce: fakegc run --verify --inject strong-memo"),
              "a failure reruns with --verify:\n%s", b);
    free(b);
}
