/* composite.h: what composite ops build on (Note [Composite ops], op.h).
 *
 * A composite (a PCT_COMPOSITE entry of the op table) reads shapes, strides and dtypes of its tensors but never their
 * data: everything it computes goes through the op calls below, which call ops by id through pct_composite_call (so
 * each records autograd, takes the profiler and autocast hooks, and dispatches to the backend of its tensors). Each
 * returns a new reference, or NULL with an error set.
 */
#ifndef PCT_COMPOSITE_H
#define PCT_COMPOSITE_H
#include "../op.h"
#include "../error.h"
#include "../out.h"
#include "../iter.h"
#include <string.h>

/* op(a) / op(a, b), every other parameter at its default; out= when out is not NULL */
pct_tensor *pct_comp_call1(int op, pct_tensor *a);
pct_tensor *pct_comp_call2(int op, pct_tensor *a, pct_tensor *b, pct_tensor *out);
/* op(a, list) for the shape ops that take one int list: view, reshape, expand, permute */
pct_tensor *pct_comp_shape(int op, pct_tensor *a, int n, const int64_t *list);
pct_tensor *pct_comp_unsqueeze(pct_tensor *a, int64_t dim);
pct_tensor *pct_comp_transpose(pct_tensor *a, int64_t dim0, int64_t dim1);
pct_tensor *pct_comp_diagonal(pct_tensor *a, int64_t offset, int64_t dim1, int64_t dim2);
/* a.clone(memory_format=torch.contiguous_format): what torch's contiguous() does with a non-contiguous tensor
 * (its grad_fn is CloneBackward0) */
pct_tensor *pct_comp_contiguous_clone(pct_tensor *a);
/* a.mT: the last two dims swapped */
pct_tensor *pct_comp_mT(pct_tensor *a);
/* a.squeeze_(dim), in place: a new reference to a */
pct_tensor *pct_comp_squeeze_(pct_tensor *a, int64_t dim);
/* a.sum(dims, keepdim, dtype=dtype) (n == 0: every dim; dtype -1: sum's default) */
pct_tensor *pct_comp_sum(pct_tensor *a, int n, const int64_t *dims, bool keepdim, int dtype);
/* a * b (into out= when not NULL) */
#define pct_comp_mul(a, b, out) pct_comp_call2(PCT_OP_mul, (a), (b), (out))
/* torch's mask of a dim list: dims wrapped, a repeat refused ("dim d appears multiple times"); -1 with an error */
/* op(a, dim, keepdim) for the reductions over an int[1]? dim: amax, amin */
pct_tensor *pct_comp_reduce_dim(int op, pct_tensor *a, int64_t dim, bool keepdim);
/* linalg_vector_norm(a, ord, dims (NULL: None), keepdim, dtype=dtype (-1: None), out=out (NULL: None)) */
pct_tensor *pct_comp_vector_norm(pct_tensor *a, const pct_scalar *ord, int n, const int64_t *dims, bool keepdim,
                                 int dtype, pct_tensor *out);
/* linalg_matrix_norm(a, str ord, dims, keepdim, dtype=dtype (-1: None), out=out (NULL: None)) */
pct_tensor *pct_comp_matrix_norm_str(pct_tensor *a, const char *ord, int n, const int64_t *dims, bool keepdim,
                                     int dtype, pct_tensor *out);
/* a.to(dtype) */
pct_tensor *pct_comp_to_dtype(pct_tensor *a, int dtype);
/* out.copy_(src) */
int pct_comp_copy_(pct_tensor *out, pct_tensor *src);

/* Sets c's out= argument (the op's `out` parameter) to out. */
void pct_comp_set_out(pct_call *c, pct_tensor *out);

#endif
