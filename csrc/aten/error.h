/* error.h: the one macro family for raising Python exceptions from library code.
 * A function sets an exception and jumps to its `fail:` label, which releases what it
 * holds and returns NULL (or -1). abort/exit/assert never appear in library code. */
#ifndef PCT_ERROR_H
#define PCT_ERROR_H
#include <Python.h>

#define PCT_FAIL(exc, ...) do { PyErr_Format((exc), __VA_ARGS__); goto fail; } while (0)
#define PCT_CHECK(cond, exc, ...) do { if (!(cond)) PCT_FAIL(exc, __VA_ARGS__); } while (0)
/* Jump to fail when a call that already set an exception returned NULL / negative. */
#define PCT_TRY(expr) do { if (!(expr)) goto fail; } while (0)
#define PCT_TRY_INT(expr) do { if ((expr) < 0) goto fail; } while (0)
/* torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError): raised by the linear
 * algebra kernels for singular or non-convergent inputs. Made by the module init (module.c). */
extern PyObject *pct_LinAlgError;

/* A broken internal invariant: ask for a report instead of crashing. */
#define PCT_INTERNAL_ASSERT(cond) \
    PCT_CHECK(cond, PyExc_RuntimeError, "pyctorch internal error: %s at %s:%d; please report a bug", #cond, __FILE__, __LINE__)

#endif
