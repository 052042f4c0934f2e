/* batch_norm_runner.h: the CUDA batch-norm runner's entry point (batch_norm.cu), for the C glue (batch_norm_glue.c).
 * Valid C11 and CUDA C++. */
#ifndef PCT_CUDA_BATCH_NORM_RUNNER_H
#define PCT_CUDA_BATCH_NORM_RUNNER_H
#include "aten/batch_norm_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call (a floating dtype) on `stream` with `group` lanes per channel (1, 32 or 256), or with on_host runs it on
 * the CPU over host addresses (the simulated device). 0, or a cudaError_t. */
int pct_cuda_batch_norm_launch(const pct_bn_call *call, int group, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
