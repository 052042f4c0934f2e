/* row_norm_runner.h: the CUDA row-norm runner's entry point (row_norm.cu), for the C glue (row_norm_glue.c). Valid C11
 * and CUDA C++. */
#ifndef PCT_CUDA_ROW_NORM_RUNNER_H
#define PCT_CUDA_ROW_NORM_RUNNER_H
#include <stdint.h>
#include "aten/row_norm_call.h"

/* lanes per row (1, 32 or 256); for the backward's column sums, chunks of rows and positions per chunk, with several
 * chunks a device buffer of splits * 2 * D values of the compute type (borrowed) */
typedef struct pct_rn_walk {
    int group;
    int64_t splits, chunk;
    char *work;
} pct_rn_walk;

#ifdef __cplusplus
extern "C" {
#endif
/* Queues call (a floating dtype) on `stream`, or with on_host runs it on the CPU over host addresses (the simulated
 * device). 0, or a cudaError_t. */
int pct_cuda_row_norm_launch(const pct_row_norm_call *call, const pct_rn_walk *walk, int on_host, void *stream);
#ifdef __cplusplus
}
#endif
#endif
