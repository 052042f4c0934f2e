/* index.c: advanced indexing's entry points, on the backend of their operands (index.h). */
#include "index.h"

static bool any_meta(const pct_tensor *self, int n, pct_tensor *const *indices, const pct_tensor *values)
{
    bool meta = self->device_type == PCT_META || (values && values->device_type == PCT_META);
    for (int i = 0; i < n && !meta; i++) meta = indices[i] && indices[i]->device_type == PCT_META;
    return meta;
}

pct_object *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    return any_meta(self, nindices, indices, NULL) ? pct_meta_index_get(self, nindices, indices)
                                                   : pct_cpu_index_get(self, nindices, indices);
}

int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    return any_meta(self, nindices, indices, values) ? pct_meta_index_put_(self, nindices, indices, values, accumulate)
                                                     : pct_cpu_index_put_(self, nindices, indices, values, accumulate);
}
