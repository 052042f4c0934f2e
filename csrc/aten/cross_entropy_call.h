/* cross_entropy_call.h: cross entropy with class-index targets (forward and backward) as a device other than the CPU
 * runs it (Note [Device cross entropy] in cpu/cross_entropy.c; the formulas are that file's).
 *
 * Ownership: a pct_ce_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_CROSS_ENTROPY_CALL_H
#define PCT_CROSS_ENTROPY_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_ce_call {
    int dtype;              /* the logits' (a floating dtype) */
    int device_index;
    bool backward;
    int64_t n, c, ignore;   /* rows, classes, ignore_index */
    double eps, wsum;       /* label smoothing; the summed class weights (C without weights) */
    const char *x;          /* (n, c) logits, contiguous */
    const int64_t *target;  /* n targets, checked in range (or ignore) */
    const double *weight;   /* c class weights, or NULL */
    /* forward: lse (n values of the compute type: float for float16/bfloat16/float32, double for double) and the
     * rows' losses (n doubles) are written; backward: lse is read as n doubles */
    char *lse;
    double *rows;
    const double *grad;     /* backward: the row i's gradient is grad[i * grad_stride] * scale */
    int64_t grad_stride;
    double scale;
    char *grad_input;       /* backward: (n, c) of dtype */
} pct_ce_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/cross_entropy.c); 0, or -1 with an error. */
int pct_cross_entropy_on_device(const pct_ce_call *call, int device_type);
#endif
#endif
