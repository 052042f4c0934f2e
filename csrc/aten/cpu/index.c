/* index.c: advanced indexing kernels (being written; see indexing.h). */
#include "../../python/indexing.h"

PyObject *pct_index_get(pct_tensor *self, int nindices, pct_tensor **indices)
{
    (void)self; (void)nindices; (void)indices;
    PyErr_SetString(PyExc_NotImplementedError, "advanced indexing is not implemented yet");
    return NULL;
}

int pct_index_put_(pct_tensor *self, int nindices, pct_tensor **indices, pct_tensor *values, bool accumulate)
{
    (void)self; (void)nindices; (void)indices; (void)values; (void)accumulate;
    PyErr_SetString(PyExc_NotImplementedError, "advanced indexing is not implemented yet");
    return -1;
}
