/* shapes_only.h: runs of CPU kernels whose values nobody reads.
 *
 * Note [Shapes-only runs]: the meta backend runs CPU kernels on data-free stand-ins for their shapes, dtypes and
 * errors (Note [Meta fallback]). The products and pointwise loops of such a run write values that are thrown away,
 * on stand-ins of zeros (or ones), so they cannot change a shape, a dtype or an error; while pct_shapes_only is set on
 * the calling thread, the GEMM runner (cpu/blas.c), the convolution runner (cpu/conv.c) and the loop runners
 * (cpu/iter_runner.c), the reductions' runner (cpu/reduce_plan.c) and softmax return at once and leave their outputs
 * unwritten, and the CPU storages made meanwhile are zero pages (storage.c), which take memory only where written:
 * a meta matmul of any size costs what its checks cost, and a kernel that reads a skipped output reads zeros, every
 * time. Everything else in a kernel runs as usual. The flag is per thread: other threads keep computing. */
#ifndef PCT_SHAPES_ONLY_H
#define PCT_SHAPES_ONLY_H
#include <stdbool.h>

extern _Thread_local bool pct_shapes_only;

#endif
