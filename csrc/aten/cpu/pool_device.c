/* pool_device.c: 2-d pooling (max, avg, adaptive avg and max; the 1-d ops as 2-d ones of height 1) on a device other
 * than the CPU.
 *
 * Note [Device pooling]
 * The pooling entries (pool.c, pool_adaptive.c, pool_backward.c) are device-neutral up to the loops: argument checks
 * with torch's texts, the geometry (pct_pool2d), the contiguous input in the compute dtype, and the results, all on the
 * input's device. On another device the loops are the backend's pool (pool_call.h; CUDA: csrc/cuda/pool.cu): forward a
 * thread per output, backward a gather per input element in the CPU's order of additions, so the gradients are
 * deterministic without atomics and need no zeroing pass. The device runs float32 and float64 (float16 and bfloat16
 * compute in float32, as on the CPU); the integer dtypes the CPU pools (max pools, int64 avg pools) go to the
 * backend's fallback, which runs the CPU loops on a copy.
 */
#include "pool.h"
#include "../backend.h"

int pct_pool_on_device(const pct_pool_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->pool) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "pooling is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->pool(call);
}

bool pct_pool_device_runs(int compute_dtype) { return compute_dtype == PCT_FLOAT32 || compute_dtype == PCT_FLOAT64; }

pct_object *pct_pool_device_fallback(pct_call *c, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return NULL;
    if (!b->fallback) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "pooling is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return NULL;
    }
    return b->fallback(c);
}

static pct_pool_call call_of(const pct_pool2d *g, int kind, bool backward, const pct_tensor *like)
{
    return (pct_pool_call){.kind = kind, .backward = backward, .dtype = like->dtype, .device_index = like->device_index,
                           .planes = g->planes, .ih = g->ih, .iw = g->iw, .oh = g->oh, .ow = g->ow,
                           .kh = g->kh, .kw = g->kw, .sh = g->sh, .sw = g->sw, .ph = g->ph, .pw = g->pw,
                           .dh = g->dh, .dw = g->dw, .count_pad = g->count_pad, .has_divisor = g->has_divisor,
                           .divisor = g->divisor};
}

int pct_pool_device_forward(const pct_pool2d *g, int kind, pct_tensor *xc, pct_tensor *out, pct_tensor *ind)
{
    pct_pool_call call = call_of(g, kind, false, out);
    call.src = pct_tensor_data(xc);
    call.dst = pct_tensor_data(out);
    call.dst_indices = ind ? (int64_t *)pct_tensor_data(ind) : NULL;
    return pct_pool_on_device(&call, out->device_type);
}

int pct_pool_device_backward(const pct_pool2d *g, int kind, pct_tensor *gc, pct_tensor *ind, pct_tensor *gi)
{
    pct_pool_call call = call_of(g, kind, true, gi);
    call.src = pct_tensor_data(gc);
    call.indices = ind ? (const int64_t *)pct_tensor_data(ind) : NULL;
    call.dst = pct_tensor_data(gi);
    return pct_pool_on_device(&call, gi->device_type);
}
