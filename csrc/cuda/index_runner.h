/* index_runner.h: the CUDA index runner's entry point (index.cu), for the C glue (index_glue.c). Valid C11 and CUDA
 * C++. */
#ifndef PCT_CUDA_INDEX_RUNNER_H
#define PCT_CUDA_INDEX_RUNNER_H
#include "aten/index_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call on `stream`, or with on_host runs it on the CPU over host addresses (the simulated device). An OFFSETS
 * call lowers *first_bad (device memory, or host memory with on_host) to the position of its first bad value. 0, or a
 * cudaError_t. */
int pct_cuda_index_launch(const pct_index_call *call, int on_host, void *stream, unsigned long long *first_bad);
#ifdef __cplusplus
}
#endif
#endif
