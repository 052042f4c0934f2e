/* indexing.h: Tensor.__getitem__ / __setitem__.
 * Basic indexing (ints, slices, None, Ellipsis) makes a view. Advanced indexing
 * (integer/bool tensors, lists, bools) is applied after it by the index kernels:
 * pct_index_get(view, indices) and pct_index_put_(view, indices, values, accumulate),
 * where indices has one entry per dim of view (NULL for dims not indexed). */
#ifndef PCT_INDEXING_H
#define PCT_INDEXING_H
#include "pyobjects.h"
#include "../aten/index.h"

PyObject *pct_tensor_getitem(PyObject *self, PyObject *key);
int pct_tensor_setitem(PyObject *self, PyObject *key, PyObject *value);
/* _C._index_accumulate(t, key, value): t[key] += value with repeated indices summed (getitem's backward). */
PyObject *pct_py_index_accumulate(PyObject *m, PyObject *args);

#endif
