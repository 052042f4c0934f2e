/* reduce_glue.c: the CUDA backend's reduce (backend.h, Note [Device reductions] in aten/cpu/reduce_plan.c): the walk
 * chosen for a plan (Note [CUDA reduction walk] in reduce.cuh), the work buffer of a split walk, and the launch on the
 * device's current stream, or on the simulated device the same walk run on the host over its memory's host views.
 *
 * Ownership: the work buffer is a storage of the caching allocator owned here and released once the launches are
 * queued (its memory is reused only by later work on the same stream, as torch's is).
 */
#include "cuda_internal.h"
#include "cuda_blas.h"
#include "reduce_runner.h"
#include "aten/error.h"
#include "aten/storage.h"

/* Threads a walk aims for: enough to fill the largest GPUs (132 SMs x 1024 resident threads) about once. */
#define RED_TARGET_THREADS ((int64_t)1 << 17)
/* the fewest positions a lane of a split walk folds */
#define RED_MIN_PER_LANE 64

static pct_red_walk walk_for(const pct_red_call *r)
{
    pct_red_walk w = {.group = 1, .splits = 1, .chunk = r->nred, .work = NULL};
    /* the innermost kept dim more contiguous than the innermost reduced one: a thread per output (G = 1), so that
     * neighbouring threads read neighbouring elements; else a group of lanes per output */
    const bool column = r->nk > 0 && (r->nr == 0 || r->kin[r->nk - 1] < r->rin[r->nr - 1]);
    if (!column) w.group = r->nred >= 4096 ? 256 : r->nred >= 64 ? 32 : 1;
    const int64_t threads = r->nout * w.group;
    if (threads < RED_TARGET_THREADS && r->nred > (int64_t)w.group * RED_MIN_PER_LANE) {
        int64_t splits = (RED_TARGET_THREADS + threads - 1) / threads;
        const int64_t most = r->nred / ((int64_t)w.group * RED_MIN_PER_LANE);
        if (splits > most) splits = most;
        if (splits > 1) {
            w.chunk = (r->nred + splits - 1) / splits;
            w.splits = (r->nred + w.chunk - 1) / w.chunk;
        }
    }
    return w;
}

static const char *op_name(int op)
{
    static const char *const names[PCT_RED_NUM_OPS] = {
        [PCT_RED_OP_sum] = "sum", [PCT_RED_OP_nansum] = "nansum", [PCT_RED_OP_mean] = "mean",
        [PCT_RED_OP_nanmean] = "nanmean", [PCT_RED_OP_prod] = "prod", [PCT_RED_OP_amax] = "amax",
        [PCT_RED_OP_amin] = "amin", [PCT_RED_OP_argmax] = "argmax", [PCT_RED_OP_argmin] = "argmin",
        [PCT_RED_OP_maxdim] = "max", [PCT_RED_OP_mindim] = "min", [PCT_RED_OP_aminmax] = "aminmax",
        [PCT_RED_OP_all] = "all", [PCT_RED_OP_any] = "any", [PCT_RED_OP_cnz] = "count_nonzero",
        [PCT_RED_OP_var] = "var", [PCT_RED_OP_lse] = "logsumexp", [PCT_RED_OP_norm2] = "norm",
        [PCT_RED_OP_norm1] = "norm", [PCT_RED_OP_norm0] = "norm", [PCT_RED_OP_normp] = "norm",
        [PCT_RED_OP_norminf] = "norm", [PCT_RED_OP_normninf] = "norm",
    };
    return op >= 0 && op < PCT_RED_NUM_OPS && names[op] ? names[op] : "reduce";
}

int pct_cuda_reduce(const pct_red_call *r)
{
    const size_t acc_size = pct_cuda_reduce_acc_size(r->op, r->dtype);
    if (!acc_size) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cuda\" not implemented for '%s'", op_name(r->op),
                  pct_dtype_cpp_name[r->dtype]);
        return -1;
    }
    pct_red_walk w = walk_for(r);
    const bool on_host = !pct_cuda_drv->has_kernels;
    int previous, rc = -1;
    if (pct_cuda_device_enter(r->device_index, &previous) < 0) return -1;
    pct_storage *work = NULL;
    if (w.splits > 1) {
        if (!(work = pct_cuda_storage_new((size_t)(r->nout * w.splits) * acc_size, r->device_index))) goto done;
        w.work = work->data;
    }
    pct_red_call call = *r;
    if (on_host) { /* Note [Simulated CUDA device]: the walk runs here, over the host views */
        call.in = pct_cuda_sim_host_address((void *)call.in);
        call.out[0] = pct_cuda_sim_host_address(call.out[0]);
        call.out[1] = pct_cuda_sim_host_address(call.out[1]);
        w.work = pct_cuda_sim_host_address(w.work);
    }
    const int err = pct_cuda_reduce_launch(&call, &w, on_host, pct_cuda_current_stream_handle(r->device_index));
    rc = err ? pct_cuda_raise(err, op_name(r->op)) : 0;
done:
    if (work) pct_storage_decref(work);
    pct_cuda_device_restore(previous);
    return rc;
}

/* The reductions' entry points of cpu/reduce.c are device-neutral (Note [Device reductions]): the CUDA slots take
 * them, over pct_cuda_reduce. */
void pct_cuda_register_reductions(void)
{
    static const struct { int op; pct_kernel_fn kernel; } entries[] = {
        {PCT_OP_sum, pct_cpu_sum}, {PCT_OP_nansum, pct_cpu_nansum}, {PCT_OP_mean, pct_cpu_mean},
        {PCT_OP_nanmean, pct_cpu_nanmean}, {PCT_OP_prod, pct_cpu_prod}, {PCT_OP_amax, pct_cpu_amax},
        {PCT_OP_amin, pct_cpu_amin}, {PCT_OP_max, pct_cpu_max_all}, {PCT_OP_max_dim, pct_cpu_max_dim},
        {PCT_OP_min, pct_cpu_min_all}, {PCT_OP_min_dim, pct_cpu_min_dim}, {PCT_OP_argmax, pct_cpu_argmax},
        {PCT_OP_argmin, pct_cpu_argmin}, {PCT_OP_aminmax, pct_cpu_aminmax}, {PCT_OP_all, pct_cpu_all},
        {PCT_OP_any, pct_cpu_any}, {PCT_OP_count_nonzero, pct_cpu_count_nonzero},
        {PCT_OP_var_unbiased, pct_cpu_var_unbiased}, {PCT_OP_var, pct_cpu_var},
        {PCT_OP_std_unbiased, pct_cpu_std_unbiased}, {PCT_OP_std, pct_cpu_std},
        {PCT_OP_var_mean_unbiased, pct_cpu_var_mean_unbiased}, {PCT_OP_var_mean, pct_cpu_var_mean},
        {PCT_OP_std_mean_unbiased, pct_cpu_std_mean_unbiased}, {PCT_OP_std_mean, pct_cpu_std_mean},
        {PCT_OP_logsumexp, pct_cpu_logsumexp}, {PCT_OP_norm, pct_cpu_norm},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        pct_ops[entries[i].op].kernels[PCT_CUDA] = entries[i].kernel;
}
