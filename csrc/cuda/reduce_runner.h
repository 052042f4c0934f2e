/* reduce_runner.h: the CUDA reduction runner's entry points (reduce_launch.cu), for the C glue (reduce_glue.c).
 * Valid C11 and CUDA C++. Note [CUDA reduction walk] in reduce.cuh says how a walk covers a plan. */
#ifndef PCT_CUDA_REDUCE_RUNNER_H
#define PCT_CUDA_REDUCE_RUNNER_H
#include <stddef.h>
#include <stdint.h>
#include "aten/reduce_plan.h"

/* How a launch covers the plan: threads per group (1, 32 or 256), chunks per output and positions per chunk, and
 * with several chunks a device buffer of nout * splits accumulators (borrowed). */
typedef struct pct_red_walk {
    int group;
    int64_t splits, chunk;
    char *work;
} pct_red_walk;

#ifdef __cplusplus
extern "C" {
#endif
/* The bytes of the accumulator of op (PCT_RED_OP_*) over dtype, or 0 where the runner has no functor for them. */
size_t pct_cuda_reduce_acc_size(int op, int dtype);
/* Queues the reduction on `stream` (a cudaStream_t; the caller made the plan's device current), or with on_host
 * runs it on the CPU over host addresses (the simulated device). 0, or a cudaError_t. */
int pct_cuda_reduce_launch(const pct_red_call *r, const pct_red_walk *w, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
