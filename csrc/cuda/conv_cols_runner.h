/* conv_cols_runner.h: the CUDA column lowering's entry point (conv_cols.cu), for the C glue (conv_cols_glue.c). Valid
 * C11 and CUDA C++. */
#ifndef PCT_CUDA_CONV_COLS_RUNNER_H
#define PCT_CUDA_CONV_COLS_RUNNER_H
#include "aten/conv_cols_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call on `stream`, or with on_host runs it on the CPU over host addresses (the simulated device). 0, or a
 * cudaError_t. */
int pct_cuda_conv_cols_launch(const pct_conv_cols_call *call, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
