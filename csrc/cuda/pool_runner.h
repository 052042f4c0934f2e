/* pool_runner.h: the CUDA pooling runner's entry point (pool.cu), for the C glue (pool_glue.c). Valid C11 and CUDA
 * C++. */
#ifndef PCT_CUDA_POOL_RUNNER_H
#define PCT_CUDA_POOL_RUNNER_H
#include "aten/pool_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call on `stream`, or with on_host runs it on the CPU over host addresses (the simulated device). 0, or a
 * cudaError_t. */
int pct_cuda_pool_launch(const pct_pool_call *call, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
