/* cuda_backend.c: the CUDA backend's struct, the table the core sees (cuda_api.h), and the library's entry point.
 *
 * At load (Note [Lazy CUDA]) the entry point picks the driver (Note [Simulated CUDA device]), counts the devices,
 * fills pct_backends[PCT_CUDA] and the op table's CUDA slots: the device-neutral kernels (Note [Device-neutral
 * copies]) and, where the driver runs kernels, the native ones of the .cu files; every other op runs the fallback
 * (Note [CUDA fallback]).
 */
#include "cuda_internal.h"
#include "aten/error.h"
#include "loop_plan.h"
#include "cuda_blas.h"

pct_object *pct_cpu_to_device(pct_call *c);
pct_object *pct_cpu_copy_(pct_call *c);
pct_object *pct_cpu_clone(pct_call *c);
pct_object *pct_cpu_contiguous(pct_call *c);
pct_object *pct_cpu_to_dtype(pct_call *c);
pct_object *pct_cpu_to_other(pct_call *c);
pct_object *pct_cpu_type_as(pct_call *c);
pct_object *pct_cpu_empty(pct_call *c);
pct_object *pct_cpu_empty_strided(pct_call *c);
pct_object *pct_cpu_zeros(pct_call *c);
pct_object *pct_cpu_ones(pct_call *c);
pct_object *pct_cpu_full(pct_call *c);
pct_object *pct_cpu_empty_like(pct_call *c);
pct_object *pct_cpu_zeros_like(pct_call *c);
pct_object *pct_cpu_ones_like(pct_call *c);
pct_object *pct_cpu_full_like(pct_call *c);
pct_object *pct_cpu_new_empty(pct_call *c);
pct_object *pct_cpu_new_zeros(pct_call *c);
pct_object *pct_cpu_new_ones(pct_call *c);
pct_object *pct_cpu_new_full(pct_call *c);

static const pct_backend cuda_backend = {
    .name = "cuda",
    .dispatch_name = "CUDA",
    .storage_new = pct_cuda_storage_new,
    .storage_resize = pct_cuda_storage_resize,
    .copy = pct_cuda_copy,
    .fill = pct_cuda_fill,
    .synchronize = pct_cuda_synchronize,
    .stream_new = pct_cuda_stream_new,
    .current_stream = pct_cuda_current_stream,
    .set_current_stream = pct_cuda_set_current_stream,
    .stream_synchronize = pct_cuda_stream_synchronize,
    .stream_query = pct_cuda_stream_query,
    .index_get = pct_cuda_index_get_native,
    .index_put_ = pct_cuda_index_put_native,
    .gemm = pct_cuda_gemm,
    .reduce = pct_cuda_reduce,
    .softmax = pct_cuda_softmax,
    .row_norm = pct_cuda_row_norm,
    .cross_entropy = pct_cuda_cross_entropy,
    .embedding = pct_cuda_embedding,
    .batch_norm = pct_cuda_batch_norm,
    .conv_cols = pct_cuda_conv_cols,
    .pool = pct_cuda_pool,
    .index = pct_cuda_index,
    .fallback = pct_cuda_fallback,
};

static int stream_handle(int device, int64_t stream, void **handle)
{
    bool ok;
    const int d = pct_cuda_resolve_device(device);
    if (d < 0) return -1;
    *handle = pct_cuda_stream_handle(d, stream, &ok);
    return ok ? 0 : -1;
}

static const pct_cuda_api cuda_api = {
    .backend = &cuda_backend,
    .device_count = pct_cuda_device_count,
    .unavailable_reason = pct_cuda_unavailable_reason,
    .is_initialized = pct_cuda_is_initialized,
    .current_device = pct_cuda_current_device,
    .set_device = pct_cuda_set_device,
    .device_properties = pct_cuda_get_device_properties,
    .mem_get_info = pct_cuda_mem_get_info,
    .event_new = pct_cuda_event_new,
    .event_record = pct_cuda_event_record,
    .event_query = pct_cuda_event_query,
    .event_synchronize = pct_cuda_event_synchronize,
    .stream_wait_event = pct_cuda_stream_wait_event,
    .event_elapsed_ms = pct_cuda_event_elapsed_ms,
    .event_destroy = pct_cuda_event_destroy,
    .memory_stats = pct_cuda_memory_stats,
    .empty_cache = pct_cuda_empty_cache,
    .reset_peak_memory_stats = pct_cuda_reset_peak_memory_stats,
    .set_memory_fraction = pct_cuda_set_memory_fraction,
    .record_stream = pct_cuda_record_stream,
    .pinned_storage_new = pct_cuda_pinned_storage_new,
    .is_pinned = pct_cuda_is_pinned,
    .fallback_runs = pct_cuda_fallback_runs,
    .stream_handle = stream_handle,
};

/* The kernels that only allocate through a backend and copy or fill through it (Note [Device-neutral copies], Note
 * [Device-neutral factories]). */
static void register_device_neutral(void)
{
    static const struct { int op; pct_kernel_fn kernel; } neutral[] = {
        {PCT_OP_to_device, pct_cpu_to_device}, {PCT_OP_copy_, pct_cpu_copy_}, {PCT_OP_clone, pct_cpu_clone},
        {PCT_OP_contiguous, pct_cpu_contiguous}, {PCT_OP_to_dtype, pct_cpu_to_dtype},
        {PCT_OP_to_other, pct_cpu_to_other}, {PCT_OP_type_as, pct_cpu_type_as},
        {PCT_OP_empty, pct_cpu_empty}, {PCT_OP_empty_strided, pct_cpu_empty_strided}, {PCT_OP_zeros, pct_cpu_zeros},
        {PCT_OP_ones, pct_cpu_ones}, {PCT_OP_full, pct_cpu_full}, {PCT_OP_empty_like, pct_cpu_empty_like},
        {PCT_OP_zeros_like, pct_cpu_zeros_like}, {PCT_OP_ones_like, pct_cpu_ones_like},
        {PCT_OP_full_like, pct_cpu_full_like}, {PCT_OP_new_empty, pct_cpu_new_empty},
        {PCT_OP_new_zeros, pct_cpu_new_zeros}, {PCT_OP_new_ones, pct_cpu_new_ones}, {PCT_OP_new_full, pct_cpu_new_full},
    };
    for (size_t i = 0; i < sizeof neutral / sizeof neutral[0]; i++) pct_ops[neutral[i].op].kernels[PCT_CUDA] = neutral[i].kernel;
    /* every overload whose CPU kernel is a view (Note [Device-neutral views]) */
    for (int op = 0; op < PCT_NUM_OPS; op++)
        if (!pct_ops[op].kernels[PCT_CUDA] && pct_is_view_kernel(pct_ops[op].kernels[PCT_CPU]))
            pct_ops[op].kernels[PCT_CUDA] = pct_ops[op].kernels[PCT_CPU];
}

/* The product ops are device-neutral kernels over the backend's gemm (Note [Device GEMM]); where cuBLAS cannot be
 * loaded they stay on the fallback. */
static void register_products(void)
{
    const char *why = NULL;
    if (!pct_cuda_blas_load(&why)) return;
    pct_ops[PCT_OP_mm].kernels[PCT_CUDA] = pct_cpu_mm;
    pct_ops[PCT_OP_bmm].kernels[PCT_CUDA] = pct_cpu_bmm;
    pct_ops[PCT_OP_addmm].kernels[PCT_CUDA] = pct_cpu_addmm;
    pct_ops[PCT_OP_baddbmm].kernels[PCT_CUDA] = pct_cpu_baddbmm;
}

const pct_cuda_api *pct_cuda_backend_init(void)
{
    pct_cuda_devices_init();
    register_device_neutral();
    register_products();
    pct_cuda_register_reductions(); /* on the simulated device too: its walk runs on the host */
    pct_cuda_register_softmax();
    pct_cuda_register_row_norms();
    pct_cuda_register_cross_entropy();
    pct_cuda_register_embedding();
    pct_cuda_register_batch_norm();
    pct_cuda_register_conv();
    pct_cuda_register_pool();
    pct_cuda_register_index();
    if (pct_cuda_drv->has_kernels) pct_cuda_register_pointwise(); /* the simulated device runs none */
    pct_backends[PCT_CUDA] = &cuda_backend;
    return &cuda_api;
}
