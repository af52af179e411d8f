/* sc_eval.h - the words' argument parsers and evaluators (sc_call.c),
 * named by the vocabulary's rows (sc_words.c) in the manner of Lua's
 * luaL_Reg. Internal to src/scenario.
 *
 * The interpreter calls a word through its row only (call_word): first
 * the row's argument parser, when it has one, evaluates the call's
 * arguments into a zeroed ts_args (held: a value the arguments refer to,
 * such as add()'s operand, dropped after the call); then the evaluator
 * gives the result (recv: the evaluated receiver of a method or attribute,
 * borrowed; NULL for a built-in function). Both return 0, or -1 with the
 * error set. */
#ifndef FAKEGC_SC_EVAL_H
#define FAKEGC_SC_EVAL_H

#include "scenario/sc_int.h"

/* built-in functions */
sc_args_fn sc_ar_sizes, sc_ar_strided, sc_ar_csr;
sc_eval_fn sc_ev_dense, sc_ev_empty_strided, sc_ev_sparse_coo, sc_ev_sparse_csr,
    sc_ev_quantized, sc_ev_fake_mode, sc_ev_meta_converter, sc_ev_fake_converter,
    sc_ev_weakref, sc_ev_gc, sc_ev_live, sc_ev_bytes, sc_ev_heap_bytes, sc_ev_unreachable,
    sc_ev_stale, sc_ev_growth, sc_ev_alive, sc_ev_dead, sc_ev_raises,
    sc_ev_weakrefs, sc_ev_hold, sc_ev_at, sc_ev_verdict, sc_ev_mark,
    sc_ev_shape_env, sc_ev_fake_cache, sc_ev_tracer,   /* version 3 */
    sc_ev_graph_module, sc_ev_op_out;

/* tensor ops: one evaluator, an argument parser per calling convention */
sc_args_fn sc_ar_dims, sc_ar_view, sc_ar_slice, sc_ar_diagonal, sc_ar_as_strided,
    sc_ar_operand, sc_ar_tensor, sc_ar_to, sc_ar_sum, sc_ar_to_sparse, sc_ar_contiguous,
    sc_ar_set;
sc_eval_fn sc_ev_op;

/* queries, values and the other methods */
sc_eval_fn sc_ev_query, sc_ev_nbytes, sc_ev_dtype, sc_ev_device, sc_ev_layout, sc_ev_base,
    sc_ev_storage, sc_ev_fake_mode_of, sc_ev_fake, sc_ev_meta, sc_ev_sweep, sc_ev_get,
    sc_ev_constant, sc_ev_clear_constants, sc_ev_clear_weakrefs, sc_ev_input, sc_ev_finish,
    sc_ev_clear, sc_ev_item, sc_ev_inference_mode;

/* attributes */
sc_eval_fn sc_ev_grad, sc_ev_counter, sc_ev_v3_attr;

#endif
