/* batch_norm_call.h: batch norm, forward and backward, as a device other than the CPU runs it (Note [Device batch
 * norm] in cpu/batch_norm.c, whose header gives the formulas).
 *
 * The input is contiguous (N, C, L). The per-channel vectors are float64 arrays of C values on the device (the entry
 * converts the parameters and statistics to float64 and back), so one kernel serves every parameter dtype.
 *
 * Ownership: a pct_bn_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_BATCH_NORM_CALL_H
#define PCT_BATCH_NORM_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_bn_call {
    int dtype;               /* the input's (and grad's, output's) */
    int device_index;
    bool backward, training;
    bool f32;                /* statistics rounded to float (float32 and 16-bit inputs), as the CPU's */
    int64_t N, C, L;
    double eps, momentum;
    const char *x, *grad;    /* grad: backward only */
    char *out;               /* forward: y; backward: grad_input, or NULL when not wanted */
    const double *weight, *bias;   /* or NULL */
    double *running_mean, *running_var; /* forward training: updated in place (or NULL); eval: read */
    /* forward: written in training, read (from the running statistics) in eval; backward: mean and, in training,
     * invstd (save_invstd) or, in eval, the running variance (invert_var) */
    double *mean, *invstd;
    bool invert_var;
    double *grad_weight, *grad_bias; /* backward: C values each, or NULL */
    double *k;               /* backward scratch: 3 * C values (the per-channel coefficients of grad_input) */
} pct_bn_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/batch_norm.c); 0, or -1 with an error. */
int pct_batch_norm_on_device(const pct_bn_call *call, int device_type);
#endif
#endif
