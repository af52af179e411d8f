/* rp_diff.h - the two reports `fakegc diff BASE.json NEW.json` compares,
 * read (rp_read_json), telling a NEW report its run did not finish from
 * one that cannot be read at all. The comparison itself is rp_diff_write
 * (rp.h).
 *
 *   rp_run runs[2]; int nread = 0; char err[512];
 *   int r = rp_diff_read(base, cur, runs, &nread, err, sizeof err);
 *   ... runs[0..nread) read: free each with rp_run_free_read ...
 */
#ifndef FAKEGC_RP_DIFF_H
#define FAKEGC_RP_DIFF_H

#include <stddef.h>

#include "report/rp.h"

enum {
    RP_DIFF_READ = 0,         /* both read */
    RP_DIFF_UNFINISHED = 1,   /* NEW is empty, or a JSON object cut off or missing
                                 what a report has (a regular file): its run did not
                                 finish, a regression; err says what was wrong */
    RP_DIFF_UNREADABLE = 2,   /* one cannot be read or is not a report (err) */
    RP_DIFF_OOM = 3           /* out of memory (err) */
};

/* Read base into runs[0] and cur into runs[1], *nread of them read (the
 * first failure stops). One of the above. */
int rp_diff_read(const char *base, const char *cur, rp_run runs[2], int *nread, char *err,
                 size_t n);

#endif
