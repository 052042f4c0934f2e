/* cuda_internal.h: what the files of the CUDA backend share (devices, streams, memory, copies, the fallback).
 * C only: the .cu files see loop_plan.h instead. */
#ifndef PCT_CUDA_INTERNAL_H
#define PCT_CUDA_INTERNAL_H
#include "cuda_driver.h"
#include "aten/op.h"
#include "aten/gemm.h"
#include "aten/reduce_plan.h"
#include "aten/softmax_call.h"
#include "aten/row_norm_call.h"
#include "aten/cross_entropy_call.h"
#include "aten/embedding_call.h"
#include "aten/batch_norm_call.h"
#include "aten/conv_cols_call.h"
#include "aten/pool_call.h"
#include "aten/index_call.h"

#define PCT_CUDA_MAX_DEVICES (PCT_MAX_DEVICE_INDEX + 1)

/* ---- devices (cuda_device.c) ---- */
/* Picks the driver (real or simulated) and counts the devices; once, at load. */
void pct_cuda_devices_init(void);
int pct_cuda_device_count(void);
const char *pct_cuda_unavailable_reason(void);
int pct_cuda_is_initialized(void);
/* The device an index names (-1: the current one), checked: the index, or -1 with torch's error (no driver, no GPU,
 * an invalid ordinal). */
int pct_cuda_resolve_device(int index);
int pct_cuda_current_device(void);
int pct_cuda_set_device(int device);
/* Makes `device` current for the calling thread until pct_cuda_device_restore(previous); -1 with an error. */
int pct_cuda_device_enter(int device, int *previous);
void pct_cuda_device_restore(int previous);
int pct_cuda_get_device_properties(int device, pct_cuda_device_properties *out);
int pct_cuda_mem_get_info(int device, size_t *free_bytes, size_t *total_bytes);

/* ---- streams and events (cuda_streams.c): Note [Streams] in backend.h ---- */
int64_t pct_cuda_stream_new(int device, int priority);
int64_t pct_cuda_current_stream(int device);
int pct_cuda_set_current_stream(int device, int64_t stream);
int pct_cuda_stream_synchronize(int device, int64_t stream);
int pct_cuda_stream_query(int device, int64_t stream);
int pct_cuda_synchronize(int device);
/* The driver handle of a stream id (NULL for the default stream 0); *ok false with an error for an unknown id. */
void *pct_cuda_stream_handle(int device, int64_t stream, bool *ok);
/* The handle of the current stream of a device, for kernels (a cudaStream_t). */
void *pct_cuda_current_stream_handle(int device_index);
void *pct_cuda_event_new(int device, int enable_timing, int blocking);
int pct_cuda_event_record(void *event, int device, int64_t stream);
int pct_cuda_event_query(void *event);
int pct_cuda_event_synchronize(void *event);
int pct_cuda_stream_wait_event(int device, int64_t stream, void *event);
int pct_cuda_event_elapsed_ms(void *start, void *end, float *ms);
void pct_cuda_event_destroy(void *event);

/* ---- memory (cuda_memory.c) ---- */
/* A new storage of nbytes on a device (-1: current), from the device's caching allocator; NULL with an error. */
pct_storage *pct_cuda_storage_new(size_t nbytes, int device_index);
int pct_cuda_storage_resize(pct_storage *s, size_t nbytes);
extern const pct_allocator pct_cuda_allocator;
pct_storage *pct_cuda_pinned_storage_new(size_t nbytes);
int pct_cuda_is_pinned(const void *ptr);
int pct_cuda_memory_stats(int device, struct pct_caching_stats *out);
int pct_cuda_empty_cache(void);
int pct_cuda_reset_peak_memory_stats(int device);
int pct_cuda_set_memory_fraction(int device, double fraction);
int pct_cuda_record_stream(void *data, int device, int64_t stream);

/* ---- copies and fills (cuda_copy.c) ---- */
int pct_cuda_copy(pct_tensor *dst, const pct_tensor *src);
int pct_cuda_fill(pct_tensor *t, const pct_scalar *value);
/* Bytes between host and a device storage on the current stream, waiting for it when the host side is read next
 * (device to host): 0, or -1 with an error. */
int pct_cuda_memcpy(void *dst, const void *src, size_t nbytes, int kind, int device);

/* ---- products (cuda_gemm.c, Note [Device GEMM] in aten/gemm.h) ---- */
int pct_cuda_gemm(const pct_gemm_call *g);

/* ---- reductions (reduce_glue.c, Note [Device reductions] in aten/cpu/reduce_plan.c) ---- */
int pct_cuda_reduce(const pct_red_call *r);
void pct_cuda_register_reductions(void);

/* ---- softmax (softmax_glue.c, Note [Device softmax] in aten/cpu/softmax.c) ---- */
int pct_cuda_softmax(const pct_softmax_call *s);
void pct_cuda_register_softmax(void);

/* ---- layer and RMS norm (row_norm_glue.c, Note [Device row norms] in aten/cpu/norm.c) ---- */
int pct_cuda_row_norm(const pct_row_norm_call *n);
void pct_cuda_register_row_norms(void);

/* ---- cross entropy (cross_entropy_glue.c, Note [Device cross entropy] in aten/cpu/cross_entropy.c) ---- */
int pct_cuda_cross_entropy(const pct_ce_call *ce);
void pct_cuda_register_cross_entropy(void);

/* ---- embedding (embedding_glue.c, Note [Device embedding] in aten/cpu/embedding.c) ---- */
int pct_cuda_embedding(const pct_embedding_call *e);
void pct_cuda_register_embedding(void);

/* ---- batch norm (batch_norm_glue.c, Note [Device batch norm] in aten/cpu/batch_norm.c) ---- */
int pct_cuda_batch_norm(const pct_bn_call *bn);
void pct_cuda_register_batch_norm(void);

/* ---- convolution columns (conv_cols_glue.c, Note [Device convolution] in aten/cpu/conv_device.c) ---- */
int pct_cuda_conv_cols(const pct_conv_cols_call *g);
void pct_cuda_register_conv(void);

/* ---- pooling (pool_glue.c, Note [Device pooling] in aten/cpu/pool_device.c) ---- */
int pct_cuda_pool(const pct_pool_call *p);
void pct_cuda_register_pool(void);

/* ---- the index family (index_glue.c, Note [Device indexing] in aten/cpu/index_device.c) ---- */
int pct_cuda_index(pct_index_call *call);
void pct_cuda_register_index(void);
/* advanced indexing's slots: on the device with integer indices, else through the fallback */
pct_object *pct_cuda_index_get_native(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_cuda_index_put_native(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);

/* ---- the CPU fallback (cuda_fallback.c): Note [CUDA fallback] ---- */
pct_object *pct_cuda_fallback(pct_call *c);
/* a call's first argument (a tensor for the ops that ask), for glue shared by several ops */
const pct_tensor *pct_cuda_call_self(const pct_call *c);
/* the calls the fallback ran (ops and advanced indexing) */
int64_t pct_cuda_fallback_runs(void);
pct_object *pct_cuda_index_get(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_cuda_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);

#endif
