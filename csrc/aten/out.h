/* out.h: the rules every out= argument follows (Note [out= arguments] in out.c).
 *
 * Kernels that write out= call pct_out_resize (never pct_tensor_resize_ directly) once they know
 * the result's shape: the resize rules, torch's deprecation warning and the memory checks of the
 * op's out= (policy table in out.c) live in one place. */
#ifndef PCT_OUT_H
#define PCT_OUT_H
#include "op.h"

/* pct_dispatch runs the kernel of an out= call between these two: while it runs, pct_out_resize applies the
 * memory rules of c's op (internal overlap, overlap with c's tensor inputs) to c's out= tensors. */
int pct_out_enter(const pct_call *c, const pct_call **prev); /* -1 with exception: nothing to leave */
void pct_out_leave(const pct_call *prev);
/* Calls fn(ctx, t) on each tensor input of c (Tensor parameters and the items of Tensor[] parameters, out=
 * excluded), in parameter order, up to the first that returns -1 (then -1). For kernels shared by ops of different
 * parameter lists that check every input against out= (index_common.c). */
int pct_out_each_input(const pct_call *c, int (*fn)(void *ctx, pct_tensor *t), void *ctx);
/* at::native::resize_output: nothing when out already has `shape` (its strides are kept); else a
 * contiguous resize, after torch's UserWarning when out had elements. Then, for an out= tensor of the
 * call being dispatched, its memory rules. -1 with exception. */
int pct_out_resize(pct_tensor *out, int ndim, const int64_t *shape);
/* The same without the warning (Tensor.resize_, as torch's factories and random ops resize out=). */
int pct_out_resize_quiet(pct_tensor *out, int ndim, const int64_t *shape);
/* torch's structured-kernel rule for ops whose out= must have the result dtype exactly:
 * "Expected out tensor to have dtype <T>, but got <U> instead". 0 when out is NULL or matches. */
int pct_out_check_dtype(const pct_tensor *out, int dtype);
/* TensorIterator's rule for ops that cast into out=: -1 with "result type <T> can't be cast to the desired output
 * type <U>" unless torch's can_cast(result_dtype, out's dtype). 0 when out is NULL. */
int pct_out_check_cast(int result_dtype, const pct_tensor *out);
/* out=(values, indices) of sort, topk, max.dim...: outs[0..1] (NULLs when not given), or -1 with torch's TypeError
 * for anything but a pair of tensors. `name` names the function in the message. */
int pct_out_parse_pair(pct_object *out, const char *name, pct_tensor **outs);
/* The same for n outputs, e.g. out=(U, S, Vh) of linalg.svd. */
int pct_out_parse_tuple(pct_object *out, const char *name, int n, pct_tensor **outs);

#endif
