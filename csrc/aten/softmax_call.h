/* softmax_call.h: softmax and log_softmax (forward and backward) as a device other than the CPU runs them (Note
 * [Device softmax] in cpu/softmax.c).
 *
 * The operands are contiguous and viewed as (outer, len, inner): each of the outer * inner rows has len elements
 * inner apart. Forward: out = softmax(x) or log_softmax(x) along the rows. Backward, with y the forward's output and g
 * its gradient: out = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax.
 *
 * Ownership: a pct_softmax_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_SOFTMAX_CALL_H
#define PCT_SOFTMAX_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_softmax_call {
    int dtype;          /* every operand's, a floating dtype */
    int device_index;
    bool log;           /* log_softmax */
    bool backward;
    int64_t outer, len, inner;
    const char *x;      /* forward: the input; backward: the forward's output y */
    const char *grad;   /* backward: the gradient of the output; NULL forward */
    char *out;
} pct_softmax_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/softmax.c); 0, or -1 with an error. */
int pct_softmax_on_device(const pct_softmax_call *call, int device_type);
#endif

#endif
