/* softmax_backward.c: fused backward kernels of softmax and log_softmax (torch's
 * _softmax_backward_data / _log_softmax_backward_data), one pass per lane instead of
 * the four ops of the composite formula:
 *   softmax:      gi = y * (g - sum(g * y))
 *   log_softmax:  gi = g - exp(y) * sum(g)
 * Sums run over `dim`; a lane is one (outer, inner) position of contiguous copies. The result
 * has grad_output's dtype (input_dtype only selects torch's half_to_float case). */
#include "simd_levels.h"
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "attention_rows.h"
#include "../backend.h"
#include <math.h>
#include <string.h>

typedef void (*lanes_fn)(const void *g, const void *y, void *out, int64_t outer, int64_t len, int64_t inner, bool lg);

/* Contiguous rows (inner == 1, the usual last-dim case) get their own loops: the row sum in
 * SMB_NACC independent double accumulators (vectorized without -ffast-math; double because
 * g - exp(y) * sum(g) cancels, so the sum's rounding shows in the result),
 * then one vectorized pass. float32 log_softmax takes exp from the attention row loops
 * (explicit vectors; the inlined libm call would not vectorize). */
#define SMB_NACC 32
#define SMB_IS_F32_FLOAT16 0
#define SMB_IS_F32_BFLOAT16 0
#define SMB_IS_F32_FLOAT32 1
#define SMB_IS_F32_FLOAT64 0

#define PCT_FOREACH_TEMPLATE "softmax_backward_impl.h"
#include "dtype_foreach.h"

static const lanes_fn lanes_table[PCT_NUM_DTYPES] = {
#define SMB_ENTRY(E, N, T, C, S) [PCT_##E] = lanes_##N,
    PCT_FORALL_FLOAT_DTYPES(SMB_ENTRY)
};

/* The gradient of softmax or (lg) log_softmax with output y along dim_arg; `name` names the op in messages. */
static pct_object *softmax_backward(const char *name, bool lg, pct_tensor *grad, pct_tensor *y, int64_t dim_arg,
                                    int input_dtype)
{
    pct_tensor *gc = NULL, *yc = NULL, *out = NULL;
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    if (grad->ndim != y->ndim || memcmp(grad->sizes, y->sizes, sizeof(int64_t) * (size_t)y->ndim) != 0) {
        pct_error(PCT_ERR_RUNTIME, "%s: grad_output of shape %s and output of shape %s differ", name,
                     pct_shape_str(a, sizeof a, grad->ndim, grad->sizes), pct_shape_str(b, sizeof b, y->ndim, y->sizes));
        return NULL;
    }
    /* The result has grad_output's dtype whatever input_dtype says, as torch's CPU kernels; float32
     * grads with a float16 input_dtype are their half_to_float case, which the CPU refuses. */
    if (grad->dtype == PCT_FLOAT32 && input_dtype == PCT_FLOAT16) {
        pct_error_str(PCT_ERR_RUNTIME, "expected scalar type Float but found Half");
        return NULL;
    }
    if (grad->dtype != y->dtype && lanes_table[grad->dtype]) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", pct_dtype_cpp_name[grad->dtype],
                     pct_dtype_cpp_name[y->dtype]);
        return NULL;
    }
    if (grad->dtype != y->dtype || !lanes_table[y->dtype]) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected grad_output and output of one floating dtype, got %s and %s",
                     name, pct_dtype_cpp_name[grad->dtype], pct_dtype_cpp_name[y->dtype]);
        return NULL;
    }
    int dim = pct_wrap_dim(dim_arg, y->ndim ? y->ndim : 1);
    if (dim < 0) return NULL;
    int64_t outer = 1, len = y->ndim ? y->sizes[dim] : 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= y->sizes[d];
    for (int d = dim + 1; d < y->ndim; d++) inner *= y->sizes[d];
    PCT_TRY(gc = pct_contiguous(grad));
    PCT_TRY(yc = pct_contiguous(y));
    PCT_TRY(out = pct_tensor_empty(y->ndim, y->sizes, y->dtype, y->device_type, y->device_index));
    if (y->device_type != PCT_CPU) { /* Note [Device softmax] in softmax.c */
        const pct_softmax_call call = {.dtype = y->dtype, .device_index = y->device_index, .log = lg, .backward = true,
                                       .outer = outer, .len = len, .inner = inner, .x = pct_tensor_data(yc),
                                       .grad = pct_tensor_data(gc), .out = pct_tensor_data(out)};
        if (out->numel && pct_softmax_on_device(&call, y->device_type) < 0) goto fail;
    } else if (out->numel) {
        PCT_NOGIL_BEGIN
        lanes_table[y->dtype](pct_tensor_data(gc), pct_tensor_data(yc), pct_tensor_data(out), outer, len, inner, lg);
        PCT_NOGIL_END
    }
    PCT_DECREF(gc);
    PCT_DECREF(yc);
    return (pct_object *)out;
fail:
    PCT_XDECREF(gc);
    PCT_XDECREF(yc);
    PCT_XDECREF(out);
    return NULL;
}

pct_object *pct_cpu_softmax_backward_data(pct_call *c)
{
    PCT_ARGS(softmax_backward_data);
    return softmax_backward(c->op->sig.name, false, arg.grad_output, arg.output, arg.dim, arg.input_dtype);
}

pct_object *pct_cpu_log_softmax_backward_data(pct_call *c)
{
    PCT_ARGS(log_softmax_backward_data);
    return softmax_backward(c->op->sig.name, true, arg.grad_output, arg.output, arg.dim, arg.input_dtype);
}
