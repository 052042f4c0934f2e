/* extension_api.h: the capsule of the extensions' C API (extension_api.c, Note [The extension C API]). */
#ifndef PCT_EXTENSION_API_H
#define PCT_EXTENSION_API_H
#include <Python.h>

/* Add _C._C_API, the capsule pct_ext_import() reads, to the module; -1 with an error. */
int pct_extension_api_install(PyObject *module);
#endif
