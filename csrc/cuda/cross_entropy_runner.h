/* cross_entropy_runner.h: the CUDA cross-entropy runner's entry point (cross_entropy.cu), for the C glue
 * (cross_entropy_glue.c). Valid C11 and CUDA C++. */
#ifndef PCT_CUDA_CROSS_ENTROPY_RUNNER_H
#define PCT_CUDA_CROSS_ENTROPY_RUNNER_H
#include "aten/cross_entropy_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call (a floating dtype) on `stream` with `group` lanes per row (1, 32 or 256), or with on_host runs it on the
 * CPU over host addresses (the simulated device). 0, or a cudaError_t. */
int pct_cuda_cross_entropy_launch(const pct_ce_call *call, int group, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
