/* tt.h - shared helpers of the tensor tests.
 *
 *   TestSuite(views, .init = tt_begin);
 *   ts_tensor *a = tt_empty(2, 4, 4);            // f32 cpu, asserts success
 *   ts_tensor *v = tt_ok(ts_apply(TS_OP_SLICE, a, tt_args(3, 0, 1, 3)));
 *   tt_geom(v, "[2, 4]", "[4, 1]", 4);           // sizes, strides, offset
 *   tt_drop(v); tt_drop(a);
 *   tt_end();                                    // nothing live, no bytes left
 */
#ifndef FAKEGC_TESTS_TENSOR_TT_H
#define FAKEGC_TESTS_TENSOR_TT_H

#include <stdint.h>

#include "core/er.h"
#include "tensor/ts.h"

/* Baseline: no bugs, no byte limit, error record clear. */
void tt_begin(void);
/* Assert: no live or zombie object, allocator bytes back to the baseline,
 * no tensor data bytes. */
void tt_end(void);

/* ts_empty (zeros) f32 cpu: tt_empty(NDIM, sizes...). Every integer goes
 * through an int64_t array, so plain literals are fine. */
#define tt_empty(...) tt_empty_arr(TS_F32, ts_cpu(), (const int64_t[]){__VA_ARGS__})
#define tt_empty_dt(dt, dev, ...) tt_empty_arr((dt), (dev), (const int64_t[]){__VA_ARGS__})
ts_tensor *tt_empty_arr(ts_dtype dt, ts_device dev, const int64_t *ndim_then_sizes);
/* Args: tt_args(N, ints...). Returns a pointer to a static buffer: use it
 * before the next tt_args call. tt_args_val returns a copy. */
#define tt_args(...) tt_args_arr((const int64_t[]){__VA_ARGS__})
#define tt_args_val(...) (*tt_args_arr((const int64_t[]){__VA_ARGS__}))
const ts_args *tt_args_arr(const int64_t *n_then_values);
/* Assert t != NULL (printing the error record) and return it. */
ts_tensor *tt_ok_at(ts_tensor *t, const char *file, int line);
#define tt_ok(t) tt_ok_at((t), __FILE__, __LINE__)
/* Assert t == NULL, the error kind, and that the message contains sub. */
void tt_err_at(ts_tensor *t, er_kind kind, const char *sub, const char *file, int line);
#define tt_err(t, kind, sub) tt_err_at((t), (kind), (sub), __FILE__, __LINE__)
void tt_rc_err_at(int rc, er_kind kind, const char *sub, const char *file, int line);
#define tt_rc_err(rc, kind, sub) tt_rc_err_at((rc), (kind), (sub), __FILE__, __LINE__)
/* Assert sizes/strides (formatted "[a, b]") and storage offset. */
void tt_geom_at(const ts_tensor *t, const char *sizes, const char *strides, int64_t off,
                const char *file, int line);
#define tt_geom(t, sz, st, off) tt_geom_at((t), (sz), (st), (off), __FILE__, __LINE__)
void tt_drop(ts_tensor *t);
/* "[a, b]" of t's sizes / strides into a static buffer. */
const char *tt_sizes(const ts_tensor *t);
const char *tt_strides(const ts_tensor *t);
/* Element i (row-major over t's sizes) as a double (real part). */
double tt_at(const ts_tensor *t, int64_t i);
void tt_set(ts_tensor *t, int64_t i, double v);

#endif
