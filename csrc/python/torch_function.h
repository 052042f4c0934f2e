/* torch_function.h: the __torch_function__ protocol's check and hand-off (torch_function.c).
 *
 * Note [Torch function check]
 * Every callable of the Python API (the op functions of bindings.c, the Tensor slots and properties, the Python
 * functions wrapped by _C._torch_function_wrap) first asks pct_tf_needed whether the call must go to the protocol:
 * when a TorchFunctionMode is on this thread's stack, or an argument (or an item of a list or tuple argument) has
 * a type other than the exact Tensor whose __torch_function__ is not torch._C._disabled_torch_function_impl. The
 * common call (exact tensors, numbers, None) costs a type compare per argument and one global load: any other
 * type is looked up in CPython's type attribute cache (_PyType_Lookup, itself cached per type and invalidated when
 * the type changes). pct_tf_dispatch then hands (func, args, kwargs) to pyctorch.overrides, which orders the
 * overloaded arguments and calls the modes and handlers as torch does. */
#ifndef PCT_TORCH_FUNCTION_H
#define PCT_TORCH_FUNCTION_H
#include <Python.h>
#include <stdbool.h>

extern PyTypeObject pct_TensorType;
/* how many TorchFunctionModes are pushed, all threads together: 0 lets the check skip the thread's own stack */
extern Py_ssize_t pct_tf_modes_pushed;

int pct_tf_needed_slow(PyObject *const *args, Py_ssize_t n);

/* Whether a call with these arguments (positional then keyword values) goes through __torch_function__. */
static inline int pct_tf_needed(PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTypeObject *tp = Py_TYPE(args[i]);
        if (tp != &pct_TensorType && tp != &PyLong_Type && tp != &PyFloat_Type && args[i] != Py_None)
            return pct_tf_needed_slow(args + i, n - i);
    }
    return pct_tf_modes_pushed ? pct_tf_needed_slow(NULL, 0) : 0;
}

/* func(*args, **kwargs) through the protocol (vectorcall layout); a new reference or NULL with an error. */
PyObject *pct_tf_dispatch(PyObject *func, PyObject *const *args, size_t nargs, PyObject *kwnames);
/* The same for a slot of the Tensor type named `dunder` (Tensor.__getitem__, Tensor.__rsub__, ...). */
PyObject *pct_tf_dispatch_slot(const char *dunder, PyObject *const *args, size_t nargs);

/* Rewrites a getset table so each getter checks self first (Tensor properties reach handlers as
 * Tensor.<name>.__get__, as in torch); call before PyType_Ready. */
void pct_tf_wrap_getsets(PyGetSetDef *defs);
/* _C's functions and types of the protocol: state, modes stack, _disabled_torch_function_impl, the wrapper. */
int pct_torch_function_install(PyObject *module);

#endif
