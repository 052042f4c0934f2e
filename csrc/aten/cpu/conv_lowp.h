/* conv_lowp.h: the bfloat16 forward convolution of CPUs with AVX512-BF16 (conv_lowp.c). */
#ifndef PCT_CONV_LOWP_H
#define PCT_CONV_LOWP_H
#include "../tensor.h"
#include "conv.h"

/* The output of a non-transposed bfloat16 convolution planned by conv.c (p: its plan, osz: the
 * output sizes), through im2col in bfloat16 and the bfloat16 GEMM: a new reference; NULL with an
 * exception on failure; NULL without one when this path does not apply (the CPU lacks
 * AVX512-BF16, or depthwise shapes), and the caller takes the float32 engine. */
PyObject *pct_conv_bf16_forward(const pct_conv_plan *p, pct_tensor *input, pct_tensor *weight, pct_tensor *bias,
                                const int64_t *osz);

#endif
