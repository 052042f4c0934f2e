/* index.h: advanced indexing as Tensor.__getitem__ / __setitem__ use it (csrc/python/indexing.c): after basic
 * indexing made a view, indices holds one entry per dim of that view (NULL for dims not indexed). The CPU backend
 * implements them (cpu/index_advanced.c); they are called past the dispatcher, so the binding refuses meta operands
 * before calling them, until indexing becomes a backend slot. Borrowed arguments; a new reference or NULL / -1 with
 * an error. */
#ifndef PCT_INDEX_H
#define PCT_INDEX_H
#include "tensor.h"

pct_object *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices);
int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate);

#endif
