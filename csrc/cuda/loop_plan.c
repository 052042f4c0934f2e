/* loop_plan.c: a built pct_iter as the CUDA runner's plan (loop_plan.h), and the C side of a launch over one: the
 * plan's device made current around it (cuda_device.c's guard), its current stream, CUDA errors raised as torch's. */
#include <cuda_runtime_api.h>
#include <string.h>
#include "../aten/iter.h"
#include "../aten/error.h"
#include "../aten/backend.h" /* pct_device_type_name */
#include "loop_plan.h"
#include "cuda_internal.h" /* the device guard and torch's CUDA errors */

_Static_assert(PCT_CUDA_LOOP_MAX_DIMS == PCT_MAX_DIMS, "the CUDA plan holds as many dims as pct_iter");
_Static_assert(PCT_CUDA_LOOP_MAX_OPERANDS == PCT_ITER_MAX_OPERANDS, "the CUDA plan holds as many operands as pct_iter");

int pct_cuda_loop_raise(int err) { return pct_cuda_raise(err, "a kernel"); }

int pct_cuda_loop_from_iter(pct_cuda_loop *plan, const pct_iter *it)
{
    plan->ntensors = it->ntensors;
    plan->ndim = it->ndim;
    plan->numel = it->numel;
    plan->device_index = -1;
    plan->host_scalars = 0;
    memcpy(plan->shape, it->shape, sizeof(int64_t) * (size_t)it->ndim);
    for (int d = 0; d < it->ndim; d++)
        for (int k = 0; k < it->ntensors; k++) plan->strides[d][k] = it->strides[d][k];
    for (int k = 0; k < it->ntensors; k++) {
        const pct_tensor *t = it->ops[k];
        plan->dtypes[k] = t->dtype;
        plan->scalar[k] = 0;
        plan->data[k] = it->data[k];
        if (t->device_type == PCT_CUDA && (plan->device_index < 0 || plan->device_index == t->device_index)) {
            plan->device_index = t->device_index;
        } else if (t->device_type == PCT_CUDA) {
            pct_error(PCT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, "
                      "cuda:%d and cuda:%d!", plan->device_index, t->device_index);
            return -1;
        } else if (k > 0 && t->device_type == PCT_CPU && t->ndim == 0) {
            /* a 0-d input broadcasts: its strides are all 0, and the kernels take its value instead of a pointer */
            memcpy(&plan->scalar[k], it->data[k], (size_t)pct_tensor_itemsize(t));
            plan->data[k] = NULL;
            plan->host_scalars |= 1u << k;
        } else {
            pct_error(PCT_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, "
                      "cuda:%d and %s!", plan->device_index < 0 ? 0 : plan->device_index,
                      pct_device_type_name(t->device_type));
            return -1;
        }
    }
    if (plan->device_index < 0) { /* only host scalars: the dispatcher never sends such a call to CUDA */
        pct_error_str(PCT_ERR_RUNTIME, "pyctorch internal error: a CUDA loop without CUDA operands; please report a bug");
        return -1;
    }
    return 0;
}

int pct_cuda_loop_run(const pct_iter *it, pct_cuda_loop_launch_fn launch, void *arg)
{
    if (it->numel == 0) return 0;
    pct_cuda_loop plan;
    int previous = 0;
    if (pct_cuda_loop_from_iter(&plan, it) < 0 || pct_cuda_device_enter(plan.device_index, &previous) < 0) return -1;
    const int err = launch(&plan, pct_cuda_current_stream_handle(plan.device_index), arg);
    pct_cuda_device_restore(previous);
    return err ? pct_cuda_raise(err, "a kernel launch") : 0;
}

