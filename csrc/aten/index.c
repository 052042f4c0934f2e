/* index.c: advanced indexing's entry points (index.h): the backend of the operands, picked as the dispatcher picks an
 * op's (a device other than the CPU wins), runs its index slots (Note [Backends] in backend.h). */
#include "index.h"
#include "backend.h"
#include "error.h"

static int operands_device(const pct_tensor *self, int n, pct_tensor *const *indices, const pct_tensor *values)
{
    int device = self->device_type;
    for (int i = 0; i < n && device == PCT_CPU; i++)
        if (indices[i]) device = indices[i]->device_type;
    if (device == PCT_CPU && values) device = values->device_type;
    return device;
}

static const pct_backend *indexing_backend(int device, bool put)
{
    const pct_backend *b = pct_backend_of(device);
    if (b && !(put ? (void *)b->index_put_ : (void *)b->index_get))
        return pct_error(PCT_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the '%s' backend.",
                         put ? "index_put_" : "index.Tensor", b->dispatch_name);
    return b;
}

pct_object *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    const pct_backend *b = indexing_backend(operands_device(self, nindices, indices, NULL), false);
    return b ? b->index_get(self, nindices, indices) : NULL;
}

int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    const pct_backend *b = indexing_backend(operands_device(self, nindices, indices, values), true);
    return b ? b->index_put_(self, nindices, indices, values, accumulate) : -1;
}
