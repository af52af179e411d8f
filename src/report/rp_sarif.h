/* rp_sarif.h - SARIF 2.1.0 (OASIS Static Analysis Results Interchange
 * Format) and GitHub workflow commands, from findings (rp_find.h).
 *
 *   rp_sarif s;
 *   rp_sarif_begin(&s, f, "run", "0.4.0");   // the document's head
 *   rp_sarif_add(&s, &finding);          // a result (its rule added once)
 *   rp_sarif_end(&s, executed_ok);       // the rules, the invocation; 0 or -1
 *
 * One run per document; results first, then tool.driver with every rule a
 * result named (ruleIndex points into it). Locations: artifactLocation.uri
 * is the path as a URI reference (relative paths stay relative, for a
 * code-scanning UI to resolve against the repository root; absolute ones
 * become file:// URIs; bytes outside RFC 3986's unreserved set and '/' are
 * percent-encoded), region.startLine when the line is known. A suppressed
 * finding carries suppressions: [{"kind": "external"}].
 *
 * GitHub (rp_gh_*): "::error file=F,line=L,title=T::MESSAGE" lines; data
 * escapes % CR LF as %25 %0D %0A, property values also : and , as %3A %2C
 * (the workflow-command rules). */
#ifndef FAKEGC_RP_SARIF_H
#define FAKEGC_RP_SARIF_H

#include <stdio.h>

#include "report/rp_find.h"
#include "report/rp_jw.h"

enum { RP_SARIF_RULES = 64 };
typedef struct rp_sarif {
    rp_jw *w;
    const char *command;          /* "run", "record", "stress" */
    const char *version;          /* fakegc's */
    struct { char id[64]; const char *name, *text; rp_level level; } rules[RP_SARIF_RULES];
    size_t nrules, nresults;
} rp_sarif;

/* 0, or -1 (ER_OOM) with nothing written. */
int rp_sarif_begin(rp_sarif *s, FILE *f, const char *command, const char *version);
void rp_sarif_add(rp_sarif *s, const rp_finding *x);
/* 0, or -1 on a write error. */
int rp_sarif_end(rp_sarif *s, int executed_ok);

/* The whole SARIF document of a run. */
int rp_write_sarif(const rp_run *run, FILE *f, const char *command);

/* One workflow command for a finding (nothing for a note or a suppressed
 * one); the escapers behind it. */
void rp_gh_finding(FILE *f, const rp_finding *x);
void rp_gh_data(FILE *f, const char *s);
void rp_gh_prop(FILE *f, const char *s);
/* The annotations of a run, then "fakegc: N errors, N warnings". */
int rp_write_github(const rp_run *run, FILE *f);

#endif
