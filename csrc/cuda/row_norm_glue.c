/* row_norm_glue.c: the CUDA backend's row_norm (backend.h, Note [Device row norms] in aten/cpu/norm.c): lanes per row,
 * the chunks of the column sums and their work buffer, and the launch on the device's current stream, or on the
 * simulated device the same passes on the host over its memory's host views.
 *
 * Ownership: the work buffer is a caching-allocator storage owned here and released once the launches are queued.
 */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "row_norm_runner.h"
#include "aten/error.h"
#include "aten/storage.h"

#define RN_TARGET_THREADS ((int64_t)1 << 17)
#define RN_MIN_ROWS_PER_CHUNK 64

int pct_cuda_row_norm(const pct_row_norm_call *n)
{
    pct_rn_walk walk = {.group = n->D >= 4096 ? 256 : n->D >= 64 ? 32 : 1, .splits = 1, .chunk = n->M, .work = NULL};
    const bool columns = n->backward && (n->grad_weight || n->grad_bias) && n->D > 0;
    if (columns && n->D < RN_TARGET_THREADS && n->M > RN_MIN_ROWS_PER_CHUNK) {
        int64_t splits = (RN_TARGET_THREADS + n->D - 1) / n->D, most = n->M / RN_MIN_ROWS_PER_CHUNK;
        if (splits > most) splits = most;
        if (splits > 1) {
            walk.chunk = (n->M + splits - 1) / splits;
            walk.splits = (n->M + walk.chunk - 1) / walk.chunk;
        }
    }
    const size_t csize = n->dtype == PCT_FLOAT64 ? 8 : 4; /* the compute type's */
    const bool on_host = !pct_cuda_drv->has_kernels;
    int previous, rc = -1;
    if (pct_cuda_device_enter(n->device_index, &previous) < 0) return -1;
    pct_storage *work = NULL;
    if (walk.splits > 1) {
        if (!(work = pct_cuda_storage_new((size_t)(walk.splits * 2 * n->D) * csize, n->device_index))) goto done;
        walk.work = work->data;
    }
    pct_row_norm_call call = *n;
    if (on_host) { /* Note [Simulated CUDA device] */
        call.x = pct_cuda_sim_host_address(call.x);
        call.weight = pct_cuda_sim_host_address(call.weight);
        call.bias = pct_cuda_sim_host_address(call.bias);
        call.mean = pct_cuda_sim_host_address(call.mean);
        call.rstd = pct_cuda_sim_host_address(call.rstd);
        call.out = pct_cuda_sim_host_address(call.out);
        call.grad = pct_cuda_sim_host_address(call.grad);
        call.grad_weight = pct_cuda_sim_host_address(call.grad_weight);
        call.grad_bias = pct_cuda_sim_host_address(call.grad_bias);
        walk.work = pct_cuda_sim_host_address(walk.work);
    }
    const int err = pct_cuda_row_norm_launch(&call, &walk, on_host, pct_cuda_current_stream_handle(n->device_index));
    rc = err ? pct_cuda_raise(err, n->rms ? "rms_norm" : "layer_norm") : 0;
done:
    if (work) pct_storage_decref(work);
    pct_cuda_device_restore(previous);
    return rc;
}

void pct_cuda_register_row_norms(void)
{
    pct_ops[PCT_OP_native_layer_norm].kernels[PCT_CUDA] = pct_cpu_native_layer_norm;
    pct_ops[PCT_OP_native_layer_norm_backward].kernels[PCT_CUDA] = pct_cpu_native_layer_norm_backward;
    pct_ops[PCT_OP_fused_rms_norm].kernels[PCT_CUDA] = pct_cpu_fused_rms_norm;
    pct_ops[PCT_OP_fused_rms_norm_backward].kernels[PCT_CUDA] = pct_cpu_fused_rms_norm_backward;
}
