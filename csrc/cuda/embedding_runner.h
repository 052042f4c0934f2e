/* embedding_runner.h: the CUDA embedding runner's entry point (embedding.cu), for the C glue (embedding_glue.c). Valid
 * C11 and CUDA C++. */
#ifndef PCT_CUDA_EMBEDDING_RUNNER_H
#define PCT_CUDA_EMBEDDING_RUNNER_H
#include "aten/embedding_call.h"

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call on `stream`, or with on_host runs it on the CPU over host addresses (the simulated device). 0, or a
 * cudaError_t. */
int pct_cuda_embedding_launch(const pct_embedding_call *call, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
