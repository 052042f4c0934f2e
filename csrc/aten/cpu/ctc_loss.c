/* ctc_loss.c: stub */
#include "spatial.h"
PyObject *pct_cpu_ctc_loss(pct_call *c) { (void)c; PyErr_SetString(PyExc_NotImplementedError, "pct_cpu_ctc_loss"); return NULL; }
PyObject *pct_cpu_ctc_loss_backward(pct_call *c) { (void)c; PyErr_SetString(PyExc_NotImplementedError, "pct_cpu_ctc_loss_backward"); return NULL; }
