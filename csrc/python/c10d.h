/* c10d.h: what the binding files of torch.distributed share (python_c10d.c: stores and exceptions;
 * process_group.c: the Gloo process group and Work). */
#ifndef PCT_C10D_H
#define PCT_C10D_H
#include <Python.h>
#include "distributed/store.h"

/* A Store's Python object. Ownership: store is owned (freed by dealloc, with the GIL released,
 * as a master joins its server thread); inner is an owned reference to what the C store relies
 * on or reports: the wrapped store object of a PrefixStore (whose C store borrows the inner C
 * store), the path of a FileStore, the host of a TCPStore. */
typedef struct pct_store_object {
    PyObject_HEAD
    pct_store *store;
    PyObject *inner;
} pct_store_object;

extern PyTypeObject pct_StoreType, pct_HashStoreType, pct_FileStoreType, pct_PrefixStoreType, pct_TCPStoreType;
/* torch.distributed's exceptions (made by pct_distributed_install, kept for the process). */
extern PyObject *pct_DistError, *pct_DistStoreError, *pct_DistNetworkError, *pct_DistBackendError;

/* Raises the exception for a store status (TIMEOUT: DistStoreError, NETWORK: DistNetworkError,
 * VALUE: ValueError, else RuntimeError) with err's text; returns -1. */
int pct_c10d_raise(int status, const pct_store_err *err);
/* The C store of a Store object (borrowed), or NULL with TypeError. */
pct_store *pct_store_from_object(PyObject *o);
int pct_timedelta_ms(PyObject *o, int64_t *ms);
PyObject *pct_timedelta_from_ms(int64_t ms);

/* Adds pyctorch._C._distributed_c10d to the module (python_c10d.c). */
int pct_distributed_install(PyObject *module);
/* Adds ProcessGroupGloo and Work to the c10d module (process_group.c); without Gloo, nothing. */
int pct_process_group_install(PyObject *c10d_module);

#endif
