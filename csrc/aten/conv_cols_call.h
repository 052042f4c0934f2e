/* conv_cols_call.h: the column lowering of a convolution (im2col and its adjoint col2im) as a device other than the
 * CPU runs it, for the device-neutral convolution driver (Note [Device convolution] in cpu/conv_device.c).
 *
 * The geometry is Note [Convolution geometry] (cpu/im2col.h): a contiguous big tensor of `channels` channels over
 * big[0] * big[1] * big[2] positions, and a column matrix of channels * kvol rows (row c * kvol + k for the kernel
 * offset k = (kd * KH + kh) * KW + kw) by svol columns (one per small position), contiguous.
 *  - to_cols (im2col): cols[c * kvol + k][j] = big[c][the big position small position j reads at offset k], or zero
 *    where the window leaves the big tensor. A copy of `itemsize`-byte elements: any dtype.
 *  - !to_cols (col2im): big[c][p] = the sum over the kernel offsets k, in increasing order, of the column entries
 *    whose window puts offset k on p. Each big element gathers its own sum (no atomics, the same bits on every run);
 *    dtype float32 or float64.
 *
 * Ownership: a pct_conv_cols_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_CONV_COLS_CALL_H
#define PCT_CONV_COLS_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_conv_cols_call {
    int dtype;               /* the elements' (col2im: float32 or float64) */
    int itemsize;            /* bytes per element (im2col: 1, 2, 4 or 8) */
    int device_index;
    bool to_cols;            /* im2col; else col2im */
    int64_t channels;
    int64_t big[3], small[3], kernel[3], stride[3], pad[3], dil[3];
    const char *src;         /* im2col: the big tensor; col2im: the columns */
    char *dst;               /* im2col: the columns; col2im: the big tensor (written whole) */
} pct_conv_cols_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/conv_device.c); 0, or -1 with an error. */
int pct_conv_cols_on_device(const pct_conv_cols_call *call, int device_type);
#endif
#endif
