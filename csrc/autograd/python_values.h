/* python_values.h: the Python objects of core values (a Tensor, a dtype, a device, a Size) as autograd sees them.
 *
 * Note [Python values for autograd]: the binding (csrc/python/) owns the Python types of core values and sits above
 * autograd, so autograd may neither include its headers nor name what it defines. The few things autograd needs of
 * those types (testing that an object is a Tensor, making a history-free alias of one, the torch.dtype object of a
 * dtype and back, a torch.device, a torch.Size) come through pct_python_values, a table the binding fills at import
 * (pct_python_values_install in runtime_binding.c) before any op can run, as it fills the core's runtime table
 * (Note [The runtime table] in csrc/aten/runtime.h). The binding's own files use their types directly. */
#ifndef PCT_PYTHON_VALUES_H
#define PCT_PYTHON_VALUES_H
#include <Python.h> /* first, as Python requires */
#include "../aten/op.h"

typedef struct pct_python_values_table {
    PyTypeObject *tensor_type;                  /* torch.Tensor */
    PyObject *const *dtype_objects;             /* the torch.dtype object of each dtype (PCT_NUM_DTYPES, immortal) */
    int (*dtype_of)(PyObject *o);               /* a torch.dtype object's dtype; -1 (nothing raised) for others */
    PyObject *(*device_new)(int type, int index);         /* a torch.device (new reference) or NULL */
    PyObject *(*size_new)(int n, const int64_t *sizes);   /* a torch.Size (new reference) or NULL */
    /* a new tensor of `type` sharing src's storage and geometry, without history (new reference) or NULL */
    PyObject *(*tensor_alias)(PyTypeObject *type, pct_tensor *src, bool share_version);
    /* Note [The engine's ops in a trace]: trace_begin() says whether an op call is reported to the op trace hook
     * (and opens it); trace_end(name, args, r) reports it as the slot `name` with args (a new tuple, stolen) and
     * the result r (stolen, returned; NULL when the hook raised). */
    int (*trace_begin)(void);
    PyObject *(*trace_end)(const char *name, PyObject *args, PyObject *r);
} pct_python_values_table;

/* Defined in python_autograd.c, filled by the binding at import; read-only afterwards. */
extern pct_python_values_table pct_python_values;

static inline bool pct_is_tensor_object(PyObject *o) { return PyObject_TypeCheck(o, pct_python_values.tensor_type); }

/* A torch.Tensor sharing t's storage, geometry and version counter, with no history (new reference) or NULL. */
static inline pct_tensor *pct_tensor_history_free_alias(pct_tensor *t)
{
    return (pct_tensor *)pct_python_values.tensor_alias(pct_python_values.tensor_type, t, true);
}

/* A TENSORLIST argument: the tuple or list (borrowed) and its items as the kernels read them. */
static inline void pct_value_set_tensorlist(pct_value *v, PyObject *seq)
{
    v->obj = seq;
    v->items = (pct_tensor *const *)PySequence_Fast_ITEMS(seq);
    v->n = (int32_t)PySequence_Fast_GET_SIZE(seq);
}
#endif
