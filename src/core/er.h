/* er.h - the one error record of the process.
 *
 * Errors are return codes (0 / negative, or NULL) plus this record, which
 * says what kind of error happened and why. The record is process-global
 * (fakegc is single-threaded; --jobs uses processes).
 *
 *   if (!ts_view(t, ...)) { if (er_kind() == ER_SHAPE) ... }
 *
 * Out of memory is sticky: once er_set(ER_OOM, ...) has been called, later
 * er_set calls keep ER_OOM (the first failure is the one that matters) until
 * er_clear(). The interpreter turns it into one `OutOfMemory` at the
 * statement that hit it.
 */
#ifndef FAKEGC_ER_H
#define FAKEGC_ER_H

#include <stddef.h>

typedef enum er_kind {
    ER_NONE = 0,
    ER_OOM,             /* OutOfMemory */
    ER_SHAPE,           /* ShapeError */
    ER_TYPE,            /* TypeError */
    ER_UNSUPPORTED,     /* UnsupportedFakeTensor */
    ER_DEAD_REF,        /* DeadReference */
    ER_LIMIT,           /* LimitExceeded */
    ER_INTERNAL,        /* a bug in fakegc itself */
    ER_USE_AFTER_FREE,  /* UseAfterFree: a decref of a dead object - a finding
                           about the scenario (an injected or modelled bug),
                           not a bug of fakegc */
    ER_KIND_COUNT
} er_kind;

/* Record an error; returns -1 so callers can `return er_set(...)`. */
int er_set(er_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
er_kind er_kind_get(void);
const char *er_message(void);          /* "" when none */
void er_clear(void);
/* Scenario-facing name: "OutOfMemory", "ShapeError", ... ; NULL for ER_NONE. */
const char *er_kind_name(er_kind kind);
/* Inverse of er_kind_name; ER_NONE when unknown. */
er_kind er_kind_from_name(const char *name);

/* What a X_verify(..., why, n) says when an invariant fails: the message
 * into why (when why and n), and -1 to return. Not the error record. */
int er_why(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
