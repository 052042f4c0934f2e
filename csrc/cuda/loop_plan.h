/* loop_plan.h: the loop machine's plan as the CUDA runner sees it, and the runner's entry points.
 *
 * A pct_cuda_loop is the device-side view of a built pct_iter (csrc/aten/iter.h): the same merged shape and byte
 * strides, the operands' data pointers and dtypes, plus the values of 0-d CPU inputs, which a CUDA kernel takes by
 * value (a Python number in `x * 2`, a CPU 0-d tensor). loop_plan.c (C, with the core's headers) makes one from a
 * pct_iter; the .cu files (CUDA C++, csrc/cuda/loops.cuh) launch kernels over one. This header is valid C11 and CUDA
 * C++ and includes no core header that needs C11 atomics.
 */
#ifndef PCT_CUDA_LOOP_PLAN_H
#define PCT_CUDA_LOOP_PLAN_H
#include <stdint.h>

/* The limits of pct_iter (PCT_MAX_DIMS, PCT_ITER_MAX_OPERANDS; loop_plan.c checks they agree). */
#define PCT_CUDA_LOOP_MAX_DIMS 64
#define PCT_CUDA_LOOP_MAX_OPERANDS 6

/* A plan. It owns nothing: the data pointers are borrowed from the pct_iter's tensors, which must outlive every
 * launch made from it (kernels are queued on a stream, so "outlive" means until the caching allocator may reuse the
 * memory: the iterator's tensors are released after the launch is queued, as torch's are). */
typedef struct pct_cuda_loop {
    int ntensors;                /* operands: 0 is the output, 1.. the inputs */
    int ndim;                    /* dims after merging; dim ndim - 1 is the innermost (fastest in memory) */
    int64_t numel;
    int device_index;            /* the CUDA device every device operand lives on */
    int64_t shape[PCT_CUDA_LOOP_MAX_DIMS];
    /* byte strides, dim-major as pct_iter's: strides[d][k] is operand k's stride in dim d (0 where it broadcasts) */
    int64_t strides[PCT_CUDA_LOOP_MAX_DIMS][PCT_CUDA_LOOP_MAX_OPERANDS];
    char *data[PCT_CUDA_LOOP_MAX_OPERANDS];   /* device pointers; NULL for a host scalar */
    int dtypes[PCT_CUDA_LOOP_MAX_OPERANDS];   /* each operand's pct_dtype */
    unsigned host_scalars;                    /* bit k: input k is a 0-d CPU tensor, passed by value in scalar[k] */
    uint64_t scalar[PCT_CUDA_LOOP_MAX_OPERANDS]; /* that element's bytes, copied to the start of the slot */
} pct_cuda_loop;

typedef struct pct_pw_ctx pct_pw_ctx; /* csrc/aten/cpu/pointwise_math.h */
struct pct_iter;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kernels (CUDA C++): each returns 0, or the cudaError_t of a failed launch or call. The plan's operands hold
 * the dtypes the kernel is asked for; `stream` is a cudaStream_t, launched on as is (the caller made the plan's
 * device current). ---- */

/* Op op_index of the op table's PCT_UNARY / PCT_BINARY entries over plan, computing in `dtype` (the inputs' dtype;
 * the output's is the op's: bool for comparisons). ctx as the CPU loops take it (alpha, the opmath scalar); a
 * data-dependent error (an integer division by zero) is written to ctx->error, as the CPU loops do. The loop must
 * exist (pct_cuda_pointwise_has_loop). csrc/cuda/pointwise.cu. */
int pct_cuda_pointwise_launch(int op_index, int dtype, const pct_cuda_loop *plan, pct_pw_ctx *ctx, void *stream);
/* 1 when op op_index has a CUDA loop for compute dtype `dtype`, else 0 (also for ops outside the pointwise table). */
int pct_cuda_pointwise_has_loop(int op_index, int dtype);
/* 1 when op op_index has a CUDA loop for some dtype (its CUDA kernel slot is filled), else 0. */
int pct_cuda_pointwise_has_loops(int op_index);

/* Operand 0 (dtype dst_dtype) = operand 1 (dtype src_dtype) converted as torch's copy_ converts (csrc/cuda/copy.cu).
 * Both on the plan's device (or operand 1 a host scalar); broadcasting is in the plan's strides. */
int pct_cuda_copy_launch(const pct_cuda_loop *plan, int dst_dtype, int src_dtype, void *stream);
/* Every element of operand 0 (the plan's only operand, of `dtype`) = the value: value_d for floating dtypes, value_i
 * for the integral ones and bool, converted as pct_store_double / pct_store_int64 convert. csrc/cuda/copy.cu. */
int pct_cuda_fill_launch(const pct_cuda_loop *plan, int dtype, double value_d, int64_t value_i, void *stream);

/* ---- the C side, with the core's headers (loop_plan.c) ---- */

/* The plan of a built iterator: 0, or -1 with torch's device error where an operand is neither on one CUDA device
 * nor a 0-d CPU input. */
int pct_cuda_loop_from_iter(pct_cuda_loop *plan, const struct pct_iter *it);
/* A kernel launch over a plan on a stream (a cudaStream_t), with the caller's arguments: 0 or a cudaError_t value. */
typedef int (*pct_cuda_loop_launch_fn)(const pct_cuda_loop *plan, void *stream, void *arg);
/* Runs launch over the plan of a built iterator (nothing for an empty one) with the plan's device current, on its
 * current stream: 0, or -1 with an error (a device error, or a failed launch as pct_cuda_loop_raise says it). */
int pct_cuda_loop_run(const struct pct_iter *it, pct_cuda_loop_launch_fn launch, void *arg);
/* -1 with RuntimeError "CUDA error: <cudaGetErrorString(err)>", for a caller that got err != 0. */
int pct_cuda_loop_raise(int err);

/* The current stream of a device as a cudaStream_t, from the CUDA backend's streams (Note [Streams] in
 * csrc/aten/backend.h); the backend provides it. */
void *pct_cuda_current_stream_handle(int device_index);

/* ---- for the CUDA backend (pointwise_glue.c, copy_glue.c) ---- */
struct pct_tensor;
struct pct_scalar;
/* Fills the CUDA slot of every op of the table's pointwise entries that has CUDA loops (pct_ops[].kernels[PCT_CUDA]);
 * the others keep theirs (the backend's fallback serves an empty one). Once, at the backend's registration. */
void pct_cuda_register_pointwise(void);
/* dst = src converted to dst's dtype (broadcast to dst's shape), both on one CUDA device (src may be a 0-d CPU
 * tensor), on the current stream: the backend's copy within the device. 0, or -1 with an error. */
int pct_cuda_copy_on_device(struct pct_tensor *dst, const struct pct_tensor *src);
/* Every element of t (on a CUDA device) = value converted to t's dtype as the CPU's fill converts it (no range check:
 * fill_'s own), on the current stream: the backend's fill. 0, or -1 with an error. */
int pct_cuda_fill_on_device(struct pct_tensor *t, const struct pct_scalar *value);

#ifdef __cplusplus
}
#endif

#endif
