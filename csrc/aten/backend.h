/* backend.h: one struct per device type (Note [Backends]).
 *
 * Note [Backends]: a backend is what a device brings: its storages, copies within it and to and from the CPU, fills,
 * synchronisation, and the kernel slots of the op table (pct_op.kernels[device type]). The dispatcher picks the
 * backend from the tensor arguments, or for factories from the device= argument, and calls the op's kernel in that
 * backend's slot; an op without one there runs the backend's fallback, and without a fallback raises torch's
 * NotImplementedError naming op and backend. The CPU backend (cpu/cpu_backend.c) fills every slot; the meta backend
 * (meta/meta_backend.c) keeps shapes and dtypes only and fills its slots with a fallback that runs the CPU kernel on
 * data-free stand-ins (Note [Meta fallback]). The CUDA backend (csrc/cuda/) is a third instance, in its own library
 * loaded on first use (Note [Lazy CUDA] in cuda_api.h).
 *
 * Note [Streams]: a stream is a device's queue of work, run in order; a backend names its streams by ids, 0 being the
 * device's default stream. The CPU and meta backends run every op to completion on the calling thread, so each has
 * one stream, 0, always idle: making a stream gives 0, and waiting on it returns at once. A backend with real queues
 * (CUDA) makes streams of its own, and its kernels run on the current stream of their device.
 */
#ifndef PCT_BACKEND_H
#define PCT_BACKEND_H
#include "op.h"
#include "gemm.h"
#include "reduce_plan.h"
#include "softmax_call.h"
#include "row_norm_call.h"
#include "cross_entropy_call.h"
#include "embedding_call.h"
#include "batch_norm_call.h"
#include "conv_cols_call.h"
#include "pool_call.h"
#include "index_call.h"

typedef struct pct_backend {
    const char *name;          /* torch's device type: "cpu", "cuda", "meta" */
    const char *dispatch_name; /* as torch names the backend in "Could not run 'aten::x' ... from the 'CPU' backend" */
    /* a new storage of nbytes (uninitialised; meta: no memory); NULL with an error */
    pct_storage *(*storage_new)(size_t nbytes, int device_index);
    /* grow a resizable storage to nbytes keeping its bytes (pct_storage_resize); NULL where the memory is the host's
     * (memcpy does) */
    int (*storage_resize)(pct_storage *s, size_t nbytes);
    /* dst = src converted to dst's dtype (shapes already broadcast-checked); one of them on this device, the other
     * here or on the CPU; -1 with an error */
    int (*copy)(pct_tensor *dst, const pct_tensor *src);
    /* every element of t = value; -1 with an error */
    int (*fill)(pct_tensor *t, const pct_scalar *value);
    /* wait for the device's queued work on every stream (the CPU and meta have none) */
    int (*synchronize)(int device_index);
    /* streams (Note [Streams]): a new one's id (>= 0; priority as torch's, lower runs first) or -1 with an error; the
     * current one of a device; making another current (-1 with an error for an unknown id); waiting for one; and
     * whether one is idle (1), busy (0) or unknown (-1 with an error) */
    int64_t (*stream_new)(int device_index, int priority);
    int64_t (*current_stream)(int device_index);
    int (*set_current_stream)(int device_index, int64_t stream);
    int (*stream_synchronize)(int device_index, int64_t stream);
    int (*stream_query)(int device_index, int64_t stream);
    /* advanced indexing (index.h): self[indices], and self[indices] = values (+= with accumulate); a new reference /
     * 0, or NULL / -1 with an error */
    pct_object *(*index_get)(pct_tensor *self, int nindices, pct_tensor **indices);
    int (*index_put_)(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);
    /* C = alpha * A @ B + beta * C on this device's memory (Note [Device GEMM] in gemm.h); 0, or -1 with an error.
     * NULL where the backend has no GEMM of its own (the CPU's is blas.c's core). */
    int (*gemm)(const pct_gemm_call *g);
    /* a reduction's walk over this device's memory (Note [Device reductions] in cpu/reduce_plan.c); 0, or -1 with an
     * error. NULL where the backend has none (the CPU's is reduce_plan.c's driver). */
    int (*reduce)(const pct_red_call *r);
    /* softmax / log_softmax and their backward over contiguous rows (Note [Device softmax] in cpu/softmax.c); 0, or -1
     * with an error. NULL where the backend has none. */
    int (*softmax)(const pct_softmax_call *s);
    /* layer norm and RMS norm, forward and backward, over contiguous rows (Note [Device row norms] in cpu/norm.c); 0,
     * or -1 with an error. NULL where the backend has none. */
    int (*row_norm)(const pct_row_norm_call *n);
    /* cross entropy's rows, forward or backward (Note [Device cross entropy] in cpu/cross_entropy.c); 0, or -1 with an
     * error. NULL where the backend has none. */
    int (*cross_entropy)(const pct_ce_call *ce);
    /* embedding's lookup or dense backward (Note [Device embedding] in cpu/embedding.c); 0, or -1 with an error. NULL
     * where the backend has none. */
    int (*embedding)(const pct_embedding_call *e);
    /* batch norm, forward or backward (Note [Device batch norm] in cpu/batch_norm.c); 0, or -1 with an error. NULL
     * where the backend has none. */
    int (*batch_norm)(const pct_bn_call *bn);
    /* a convolution's im2col or col2im (Note [Device convolution] in cpu/conv_device.c); 0, or -1 with an error. NULL
     * where the backend has none (the CPU's are im2col.c's). */
    int (*conv_cols)(const pct_conv_cols_call *g);
    /* 2-d pooling, forward or backward (Note [Device pooling] in cpu/pool_device.c); 0, or -1 with an error. NULL where
     * the backend has none. */
    int (*pool)(const pct_pool_call *p);
    /* the index family's loops: gather / scatter / index_add ..., the checking of indices into offsets (Note [Device
     * indexing] in cpu/index_device.c); 0, or -1 with an error. NULL where the backend has none (the CPU's are
     * index_common.c's). */
    int (*index)(pct_index_call *call);
    /* an op's kernel where the backend's slot is empty, or NULL (then NotImplementedError) */
    pct_kernel_fn fallback;
} pct_backend;

/* Indexed by pct_device_type; NULL where the device was not built, or not loaded yet (CUDA: pct_backend_of loads it). */
extern const pct_backend *pct_backends[PCT_NUM_BACKENDS];
extern const pct_backend pct_cpu_backend, pct_meta_backend;

/* torch's name of a device type ("cpu", "cuda", "meta"), also for devices not built */
const char *pct_device_type_name(int device_type);

/* The one stream of a backend that runs work at once (the CPU, meta): Note [Streams]. */
int pct_single_stream_device_synchronize(int device_index);
int64_t pct_single_stream_new(int device_index, int priority);
int64_t pct_single_stream_current(int device_index);
int pct_single_stream_set(int device_index, int64_t stream);
int pct_single_stream_synchronize(int device_index, int64_t stream);
int pct_single_stream_query(int device_index, int64_t stream);

/* The backend of a device type; NULL with torch's error when it is not built. */
const pct_backend *pct_backend_of(int device_type);

#endif
