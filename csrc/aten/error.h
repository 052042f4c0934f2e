/* error.h: the one macro family for raising errors from library code.
 * A function sets an error (pct_error, runtime.h: a kind and a printf message, which the binding raises as the
 * Python exception of that kind) and jumps to its `fail:` label, which releases what it holds and returns NULL (or
 * -1). abort/exit/assert never appear in library code. */
#ifndef PCT_ERROR_H
#define PCT_ERROR_H
#include "runtime.h"

#define PCT_FAIL(kind, ...) do { pct_error((kind), __VA_ARGS__); goto fail; } while (0)
#define PCT_CHECK(cond, kind, ...) do { if (!(cond)) PCT_FAIL(kind, __VA_ARGS__); } while (0)
/* Jump to fail when a call that already set an error returned NULL / negative. */
#define PCT_TRY(expr) do { if (!(expr)) goto fail; } while (0)
#define PCT_TRY_INT(expr) do { if ((expr) < 0) goto fail; } while (0)

/* A broken internal invariant: ask for a report instead of crashing. */
#define PCT_INTERNAL_ASSERT(cond) \
    PCT_CHECK(cond, PCT_ERR_RUNTIME, "pyctorch internal error: %s at %s:%d; please report a bug", #cond, __FILE__, __LINE__)

#endif
