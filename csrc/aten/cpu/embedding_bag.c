/* embedding_bag.c: stub */
#include "spatial.h"
PyObject *pct_cpu_embedding_bag(pct_call *c) { (void)c; PyErr_SetString(PyExc_NotImplementedError, "pct_cpu_embedding_bag"); return NULL; }
