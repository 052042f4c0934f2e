/* runtime.h: what the core needs from the layer that embeds it, without Python.
 *
 * Note [The runtime table]: the core (csrc/aten: tensors, storages, the dispatcher, the kernels) is plain C11 and
 * includes no Python header, so a CUDA file can be written against it and a debugger sees C only. The few services it
 * needs from its host (raising an error, warning, releasing the interpreter lock, counting references to the objects
 * the binding owns, making the plain result tuples of multi-output ops) go through pct_runtime, a table of function
 * pointers that the binding (csrc/python/runtime_binding.c) fills once at import, before any op can run. The calls
 * point one way only: the binding calls the core, and the core reaches the binding through this table, never by name,
 * so the layers of the README's architecture section form no loop.
 *
 * Note [Objects of the binding]: pct_object is an opaque handle for a value the binding owns: a tensor (whose first
 * member is a pct_object_head), a result tuple, None, a str or list argument. The core never looks inside one; it
 * passes handles along, counts references through the table (PCT_INCREF/PCT_DECREF) and asks the table to make or
 * test them. The tag is CPython's own (struct _object), so in the binding a pct_object * is a PyObject * with no cast;
 * runtime_binding.c asserts that pct_object_head has PyObject's layout.
 *
 * Errors: a function that fails calls pct_error (or the PCT_FAIL family of error.h) and returns NULL or -1; the
 * binding turns the kind into the Python exception of the same name. Formats are printf's (checked by the compiler).
 */
#ifndef PCT_RUNTIME_H
#define PCT_RUNTIME_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _object pct_object;

/* The layout of the header every binding object starts with (a reference count, then its type). */
typedef struct pct_object_head {
    intptr_t refcount;
    void *type;
} pct_object_head;

typedef enum pct_error_kind {
    PCT_ERR_RUNTIME,          /* RuntimeError */
    PCT_ERR_TYPE,             /* TypeError */
    PCT_ERR_VALUE,            /* ValueError */
    PCT_ERR_INDEX,            /* IndexError */
    PCT_ERR_NOT_IMPLEMENTED,  /* NotImplementedError */
    PCT_ERR_BUFFER,           /* BufferError */
    PCT_ERR_ATTRIBUTE,        /* AttributeError */
    PCT_ERR_ASSERTION,        /* AssertionError */
    PCT_ERR_MEMORY,           /* MemoryError (with a message; pct_error_nomem for the bare one) */
    PCT_ERR_LINALG,           /* torch.linalg.LinAlgError, a RuntimeError */
    PCT_ERR_OUT_OF_MEMORY,    /* torch.OutOfMemoryError (torch.cuda.OutOfMemoryError), a RuntimeError: device memory */
    PCT_NUM_ERROR_KINDS
} pct_error_kind;

typedef enum pct_warning_kind {
    PCT_WARN_USER,            /* UserWarning */
    PCT_WARN_RUNTIME,         /* RuntimeWarning */
    PCT_WARN_DEPRECATION,     /* DeprecationWarning */
    PCT_NUM_WARNING_KINDS
} pct_warning_kind;

struct pct_tensor;
struct pct_cpu_generator;

typedef struct pct_runtime_table {
    /* errors: set (replacing any pending one), test, clear */
    void (*set_error)(pct_error_kind kind, const char *message);
    void (*set_nomem)(void);
    bool (*error_occurred)(void);
    void (*error_clear)(void);
    /* a warning from the op now running; -1 when the warning filters turned it into an error (then set) */
    int (*warn)(pct_warning_kind kind, const char *message);
    /* the interpreter lock: release returns a state that restore takes back */
    void *(*release_lock)(void);
    void (*restore_lock)(void *state);
    /* references to binding objects */
    void (*incref)(pct_object *o);
    void (*decref)(pct_object *o);
    /* a zero-filled tensor object of the base Tensor type (storage and version unset); NULL with error */
    struct pct_tensor *(*tensor_alloc)(void);
    bool (*is_tensor)(const pct_object *o);
    /* None (a new reference) and the test for it */
    pct_object *(*none)(void);
    bool (*is_none)(const pct_object *o);
    /* a tuple of n items (n >= 0); steals every item, and on failure (or when an item is NULL) releases them all */
    pct_object *(*tuple_steal)(int64_t n, pct_object *const *items);
    /* a list the same way */
    pct_object *(*list_steal)(int64_t n, pct_object *const *items);
    /* the type name of a binding object, for error messages ("NoneType", "int", "Tensor") */
    const char *(*type_name)(const pct_object *o);
    /* a random op's generator argument (NULL or None: the default generator): 0 when it is one, else -1 with
     * TypeError naming opname; and fn run on its state under its lock, the lock released around large work
     * (python/generator.c, Note [Generator locking]): fn's result, or -2 with an error */
    int (*generator_check)(pct_object *gen, const char *opname);
    int (*generator_run)(pct_object *gen, int64_t work, int (*fn)(struct pct_cpu_generator *, void *), void *ctx);
    /* a tuple or list argument's items (borrowed, valid while o lives): true, or false for anything else */
    bool (*sequence_items)(pct_object *o, pct_object *const **items, int64_t *n);
    /* an int (anything with __index__) as int64: 0; -1 with TypeError for something else. Out of range: with
     * overflow NULL -2 with OverflowError, else 0 with *overflow = +1 or -1 and *value saturated */
    int (*index_value)(pct_object *o, int64_t *value, int *overflow);
    bool (*is_int)(const pct_object *o);
    /* str(o) as a malloc'd UTF-8 string the caller frees; NULL with the error set */
    char *(*str)(pct_object *o);
} pct_runtime_table;

/* Filled by the binding at import (runtime_binding.c); read-only afterwards. */
extern pct_runtime_table pct_runtime;

#if defined(__GNUC__)
#define PCT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PCT_PRINTF(f, a)
#endif

/* Raise: kind with a printf-formatted message. Returns NULL so `return pct_error(...)` fits pointer functions. */
void *pct_error(pct_error_kind kind, const char *fmt, ...) PCT_PRINTF(2, 3);
/* The same with a message taken as is (no formatting). */
void *pct_error_str(pct_error_kind kind, const char *message);
/* MemoryError without a message, as when an allocation fails. */
static inline void *pct_error_nomem(void) { pct_runtime.set_nomem(); return NULL; }
static inline bool pct_error_occurred(void) { return pct_runtime.error_occurred(); }
static inline void pct_error_clear(void) { pct_runtime.error_clear(); }
/* Warn with a printf-formatted message; -1 when that raised (the caller fails), else 0. */
int pct_warn(pct_warning_kind kind, const char *fmt, ...) PCT_PRINTF(2, 3);

/* Release the interpreter lock around work that touches no binding object (a large kernel, LAPACK, a sort). */
#define PCT_NOGIL_BEGIN { void *pct_nogil_state_ = pct_runtime.release_lock();
#define PCT_NOGIL_END pct_runtime.restore_lock(pct_nogil_state_); }
static inline void *pct_gil_release(void) { return pct_runtime.release_lock(); }
static inline void pct_gil_restore(void *state) { pct_runtime.restore_lock(state); }

/* References to binding objects (tensors included: a pct_tensor * may be passed). */
#define PCT_INCREF(o) pct_runtime.incref((pct_object *)(o))
#define PCT_DECREF(o) pct_runtime.decref((pct_object *)(o))
#define PCT_XINCREF(o) do { pct_object *pct_x_ = (pct_object *)(o); if (pct_x_) pct_runtime.incref(pct_x_); } while (0)
#define PCT_XDECREF(o) do { pct_object *pct_x_ = (pct_object *)(o); if (pct_x_) pct_runtime.decref(pct_x_); } while (0)
/* Drop the reference in a variable and set it to NULL first (a destructor may look at the variable). */
#define PCT_CLEAR(var) do { pct_object *pct_c_ = (pct_object *)(var); if (pct_c_) { (var) = NULL; pct_runtime.decref(pct_c_); } } while (0)
/* Replace the reference in a variable with v (stolen), releasing the old one after the store. */
#define PCT_SETREF(var, v) do { pct_object *pct_s_ = (pct_object *)(var); (var) = (v); PCT_XDECREF(pct_s_); } while (0)
static inline pct_object *pct_newref(void *o) { pct_runtime.incref((pct_object *)o); return (pct_object *)o; }
#define PCT_NEWREF(o) pct_newref(o)

static inline pct_object *pct_none(void) { return pct_runtime.none(); }
static inline bool pct_is_none(const pct_object *o) { return pct_runtime.is_none(o); }
static inline bool pct_is_tensor(const pct_object *o) { return pct_runtime.is_tensor(o); }
static inline const char *pct_type_name(const pct_object *o) { return pct_runtime.type_name(o); }
static inline bool pct_sequence_items(pct_object *o, pct_object *const **items, int64_t *n)
{
    return pct_runtime.sequence_items(o, items, n);
}
/* Result tuples: steal the items (see the table above). */
static inline pct_object *pct_tuple_steal(int64_t n, pct_object *const *items) { return pct_runtime.tuple_steal(n, items); }
/* A plain tuple of two or three new references taken here (the items stay the caller's). */
pct_object *pct_tuple_pack2(void *a, void *b);
pct_object *pct_tuple_pack3(void *a, void *b, void *c);
static inline pct_object *pct_list_steal(int64_t n, pct_object *const *items) { return pct_runtime.list_steal(n, items); }
/* A multi-output op's result: a plain tuple of its n tensors, stolen as by pct_tuple_steal. The binding makes it the
 * op's torch.return_types.<name> where ops_returns.def names one (Note [Result tuples] in dispatch.c). */
#define PCT_MAX_RESULTS 4
pct_object *pct_result_tuple(int n, struct pct_tensor *const *items);

#endif
