/* cpu_backend.c: the CPU's backend struct (Note [Backends] in backend.h). Its kernel slots are the op table's cpu
 * column (dispatch.c). */
#include "../backend.h"
#include "../iter.h"
#include "../index.h"
#include "fill.h"

static pct_storage *cpu_storage_new(size_t nbytes, int device_index)
{
    (void)device_index;
    return pct_storage_new_cpu(nbytes);
}

static int cpu_copy(pct_tensor *dst, const pct_tensor *src) { return pct_copy_(dst, (pct_tensor *)src); }

const pct_backend pct_cpu_backend = {
    .name = "cpu",
    .dispatch_name = "CPU",
    .storage_new = cpu_storage_new,
    .copy = cpu_copy,
    .fill = pct_fill_scalar,
    .synchronize = pct_single_stream_device_synchronize,
    .stream_new = pct_single_stream_new,
    .current_stream = pct_single_stream_current,
    .set_current_stream = pct_single_stream_set,
    .stream_synchronize = pct_single_stream_synchronize,
    .stream_query = pct_single_stream_query,
    .index_get = pct_cpu_index_get,
    .index_put_ = pct_cpu_index_put_,
    .fallback = NULL,
};
