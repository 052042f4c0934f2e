/* softmax_runner.h: the CUDA softmax runner's entry point (softmax.cu), for the C glue (softmax_glue.c).
 * Valid C11 and CUDA C++. */
#ifndef PCT_CUDA_SOFTMAX_RUNNER_H
#define PCT_CUDA_SOFTMAX_RUNNER_H
#include "aten/softmax_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call (a floating dtype) on `stream` with `group` lanes per row (1, 32 or 256), or with on_host runs it on
 * the CPU over host addresses (the simulated device). 0, or a cudaError_t. */
int pct_cuda_softmax_launch(const pct_softmax_call *call, int group, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
