/* row_norm_call.h: layer norm and RMS norm, forward and backward, as a device other than the CPU runs them (Note
 * [Device row norms] in cpu/norm.c).
 *
 * The input is contiguous and viewed as M rows of D elements. Forward: mean and rstd = 1 / sqrt(var + eps) per row
 * (RMS norm: no mean, rstd = 1 / sqrt(mean(x^2) + eps)), y = (x - mean) * rstd * weight + bias. Backward, with
 * xc = x - mean (x for RMS norm) and gw = grad * weight:
 *   grad_input  = rstd * (gw - sum(gw) / D - xc * rstd^2 * sum(gw * xc) / D)   (RMS norm: no sum(gw) / D term)
 *   grad_weight = sum over rows of grad * xc * rstd,  grad_bias = sum over rows of grad.
 * Weight, bias, mean, rstd and the parameter gradients are arrays of the compute dtype (float for float16 and
 * bfloat16 inputs, the input's otherwise).
 *
 * Ownership: a pct_row_norm_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_ROW_NORM_CALL_H
#define PCT_ROW_NORM_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_row_norm_call {
    int dtype;           /* the input's (and output's, grad's) */
    int device_index;
    bool rms, backward;
    int64_t M, D;
    double eps;
    const char *x, *weight, *bias;  /* weight / bias NULL when absent */
    char *mean, *rstd;   /* forward: written (mean NULL for RMS norm); backward: read */
    char *out;           /* forward: y; backward: grad_input, or NULL when not wanted */
    const char *grad;    /* backward: the gradient of y */
    char *grad_weight, *grad_bias; /* backward: D column sums each, or NULL when not wanted */
} pct_row_norm_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/norm.c); 0, or -1 with an error. */
int pct_row_norm_on_device(const pct_row_norm_call *call, int device_type);
#endif
#endif
