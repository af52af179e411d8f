/* rp_merge.h - merging the shard reports of one campaign (`fakegc merge`,
 * README "Campaigns").
 *
 *   rp_merge_result m;
 *   int rc = rp_merge_files(paths, n, RP_JSON, stdout, &opts, &m, err, sizeof err);
 *   // rc 0: written, m.failed says whether the merged result has a failure;
 *   // rc -1: the inputs are not one campaign (err says which, exit 2);
 *   // rc -2: out of memory or a write error (err, exit 3).
 * (It starts with er_clear(): out of memory anywhere in it is rc -2.)
 *
 * The inputs are JSON reports of one kind - run ("fakegc-report"), stress
 * ("fakegc-stress") or oom ("fakegc-oom"), told by "schema", else by
 * "command", else run - each with "shard": [K, N] (none: the only shard
 * 0 of 1). Every K of 0..N-1 must be there exactly once.
 *
 * Top-level fields are merged by one table (rp_merge.c RULES): the shard's
 * identity ("shard", "host", ...) goes into a "shards" list, "scenarios"
 * are concatenated and sorted by "file", "summary" is summed, stress
 * counters are summed (seconds and max_live_objects: the maximum, steps/s:
 * merged steps over the slowest shard's seconds), stress failures are
 * de-duplicated by their shrunk reproducer (comment lines ignored, digit
 * runs read as N: variable numbering and sizes aside). Every
 * other field is an option of the campaign and must be the same in every
 * shard: fields the table does not know are carried through when equal,
 * and refused (naming the field and the two files) when not, so the merge
 * never sums or drops something it does not understand. The merged report
 * carries "schema" (added per kind when the inputs had none), "merged": N
 * and "shards": [{"shard", "file", "host", ...}].
 *
 * The failure of a merged stress campaign ("failure") is the one with the
 * lowest lifecycle index: the one a single process with the same seed and
 * budget stops at. "distinct_failures" lists every reproducer once with the
 * shards and seeds that found it.
 *
 * Formats: RP_JSON (the merged report), RP_TEXT and RP_JUNIT (run: the
 * report writers of rp.h over the merged report read back; stress and oom:
 * their own summary), RP_TAP (run only).
 */
#ifndef FAKEGC_RP_MERGE_H
#define FAKEGC_RP_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "report/rp.h"

typedef struct rp_merge_result {
    const char *kind;       /* "run", "stress" or "oom" (static) */
    int failed;             /* the merged result has a failure */
    size_t shards;
} rp_merge_result;

int rp_merge_files(const char *const *paths, size_t n, rp_format fmt, FILE *out,
                   const rp_options *o, rp_merge_result *m, char *err, size_t errlen);

#endif
