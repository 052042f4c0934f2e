/* index.h: advanced indexing as Tensor.__getitem__ / __setitem__ use it (csrc/python/indexing.c): after basic
 * indexing made a view, indices holds one entry per dim of that view (NULL for dims not indexed). The entry points
 * pick the backend from the operands (index.c) and run its index slots: the CPU's kernels (cpu/index_advanced.c), or
 * the meta backend's, which runs them on stand-ins (Note [Meta fallback]). Borrowed arguments; a new reference or
 * NULL / -1 with an error. */
#ifndef PCT_INDEX_H
#define PCT_INDEX_H
#include "tensor.h"

pct_object *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);

/* The backends' implementations, in their index slots. */
pct_object *pct_cpu_index_get(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_cpu_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);
pct_object *pct_meta_index_get(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_meta_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);

#endif
