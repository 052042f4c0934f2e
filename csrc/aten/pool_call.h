/* pool_call.h: 2-d pooling, forward and backward, as a device other than the CPU runs it (Note [Device pooling] in
 * cpu/pool_device.c). 1-d pools are 2-d pools of height 1 (Note [Planes and grids] in cpu/pool.h).
 *
 * Forward, a thread per output (plane, oh, ow) scanning its window row by row with the CPU's rules:
 *  - max: the window of torch's pct_pool_span (padding skipped, dilation dh x dw); the first maximum wins and a NaN
 *    wins over everything after it, the index is h * iw + w of the winner (the window's first position when none);
 *  - avg: the window clipped to the input, its sum divided by divisor_override, or the window's size counting the
 *    padding (count_pad) or not;
 *  - adaptive avg / max: torch's adaptive windows [start, end); avg divides the sum by the rows, then the columns.
 * Backward, a thread per input element gathering, in increasing (oh, ow) order, from the outputs whose window holds it
 * (max: whose saved index names it; avg: grad / its divisor; adaptive avg: grad / rows / columns), so every element
 * receives its sum in the CPU's order of additions, without atomics.
 *
 * Ownership: a pct_pool_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_POOL_CALL_H
#define PCT_POOL_CALL_H
#include <stdbool.h>
#include <stdint.h>

enum { PCT_POOL_CALL_MAX, PCT_POOL_CALL_AVG, PCT_POOL_CALL_ADAPTIVE_AVG, PCT_POOL_CALL_ADAPTIVE_MAX };

typedef struct pct_pool_call {
    int kind;                /* PCT_POOL_CALL_* */
    bool backward;
    int dtype;               /* float32 or float64 */
    int device_index;
    int64_t planes, ih, iw, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw; /* max / avg windows */
    bool count_pad, has_divisor;
    int64_t divisor;
    const char *src;         /* forward: the input (planes, ih, iw); backward: grad_output (planes, oh, ow) */
    const int64_t *indices;  /* max backward: the saved indices (planes, oh, ow) */
    char *dst;               /* forward: the output; backward: grad_input (written whole) */
    int64_t *dst_indices;    /* max forward: the indices, or NULL */
} pct_pool_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/pool_device.c); 0, or -1 with an error. */
int pct_pool_on_device(const pct_pool_call *call, int device_type);
#endif
#endif
