/* torch_function.c: the C half of the __torch_function__ protocol (Note [Torch function check]).
 *
 * State, per thread as in torch: whether the protocol is on (or off for subclasses only, or off for all, the
 * DisableTorchFunctionSubclass / DisableTorchFunction guards) and the stack of TorchFunctionModes. The Python half
 * (pyctorch/overrides.py) orders the overloaded arguments and calls the handlers; it registers itself here with
 * _C._set_torch_function_dispatcher. Also here: torch._C._disabled_torch_function_impl, Tensor.as_subclass's core,
 * and the wrapper that gives a function written in Python the same check as the op functions. */
#include "pyobjects.h"
#include "torch_function.h"
#include <string.h>

enum { TF_ENABLED, TF_SUBCLASS_DISABLED, TF_ALL_DISABLED };

Py_ssize_t pct_tf_modes_pushed;
static _Thread_local int tf_state;
static _Thread_local int tf_skip_once; /* redispatch_function: the next protocol check says no */
static _Thread_local PyObject *tf_stack; /* list of modes, or NULL: made on the thread's first push */
static PyObject *tf_name;                /* "__torch_function__", interned */
static PyObject *disabled_impl;          /* torch._C._disabled_torch_function_impl */
static PyObject *dispatcher;             /* pyctorch.overrides._dispatch_from_c(func, args, kwargs) */

static int type_overloaded(PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    if (tp == &pct_TensorType || tp == &PyLong_Type || tp == &PyFloat_Type || tp == &PyBool_Type || o == Py_None ||
        tp == &PyUnicode_Type || tp == &PyTuple_Type || tp == &PyList_Type || tp == &pct_SizeType)
        return 0;
    PyObject *attr = _PyType_Lookup(tp, tf_name); /* borrowed; CPython caches it per type version */
    return attr != NULL && attr != disabled_impl && attr != Py_None;
}

int pct_tf_needed_slow(PyObject *const *args, Py_ssize_t n)
{
    if (tf_skip_once) {
        tf_skip_once = 0;
        return 0;
    }
    if (tf_state == TF_ALL_DISABLED) return 0;
    if (tf_stack && PyList_GET_SIZE(tf_stack)) return 1;
    if (tf_state == TF_SUBCLASS_DISABLED) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = args[i];
        if (type_overloaded(o)) return 1;
        if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) { /* tensor lists: cat([a, b]), a[(i, j)] */
            PyObject **items = PySequence_Fast_ITEMS(o);
            for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(o); k++)
                if (type_overloaded(items[k])) return 1;
        }
    }
    return 0;
}

PyObject *pct_tf_dispatch(PyObject *func, PyObject *const *args, size_t nargs, PyObject *kwnames)
{
    if (!dispatcher) {
        PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: __torch_function__ dispatcher not installed");
        return NULL;
    }
    PyObject *tuple = PyTuple_New((Py_ssize_t)nargs), *kwargs = PyDict_New(), *r = NULL;
    if (!tuple || !kwargs) goto done;
    for (size_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) goto done;
    r = PyObject_CallFunctionObjArgs(dispatcher, func, tuple, kwargs, NULL);
done:
    Py_XDECREF(tuple);
    Py_XDECREF(kwargs);
    return r;
}

PyObject *pct_tf_dispatch_slot(const char *dunder, PyObject *const *args, size_t nargs)
{
    PyObject *func = PyDict_GetItemString(pct_TensorType.tp_dict, dunder); /* borrowed */
    if (!func) {
        PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: Tensor has no %s", dunder);
        return NULL;
    }
    return pct_tf_dispatch(func, args, nargs, NULL);
}

/* ---- properties: Tensor.<name>.__get__ ---- */

#define MAX_GETSETS 64
static PyGetSetDef tf_getsets[MAX_GETSETS]; /* the original entries; the getter's closure points at one */

static PyObject *tf_getter(PyObject *self, void *closure)
{
    const PyGetSetDef *d = closure;
    if (!pct_tf_needed(&self, 1)) return d->get(self, NULL);
    PyObject *descr = PyDict_GetItemString(pct_TensorType.tp_dict, d->name);
    PyObject *get = descr ? PyObject_GetAttrString(descr, "__get__") : NULL;
    if (!get) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: no property %s", d->name);
        return NULL;
    }
    PyObject *r = pct_tf_dispatch(get, &self, 1, NULL);
    Py_DECREF(get);
    return r;
}

void pct_tf_wrap_getsets(PyGetSetDef *defs)
{
    for (int i = 0; defs[i].name && i < MAX_GETSETS; i++) {
        if (!defs[i].get || defs[i].closure || strcmp(defs[i].name, "__dict__") == 0) continue;
        tf_getsets[i] = defs[i];
        defs[i].get = tf_getter;
        defs[i].closure = &tf_getsets[i];
    }
}

/* ---- state ---- */

static PyObject *py_disabled_impl(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n < 3 || n > 4) {
        PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl(func, types, args, kwargs=None)");
        return NULL;
    }
    PyObject *kwargs = n == 4 && args[3] != Py_None ? args[3] : NULL;
    if (kwargs && !PyDict_Check(kwargs)) { PyErr_SetString(PyExc_TypeError, "kwargs must be a dict"); return NULL; }
    PyObject *pos = PySequence_Tuple(args[2]);
    if (!pos) return NULL;
    const int saved = tf_state;
    if (tf_state == TF_ENABLED) tf_state = TF_SUBCLASS_DISABLED;
    PyObject *r = PyObject_Call(args[0], pos, kwargs);
    tf_state = saved;
    Py_DECREF(pos);
    return r;
}

/* _C._skip_one_hop_torch_function(func, types, args, kwargs=None): func called with its first protocol check
 * skipped (torch.overrides.redispatch_function); the ops it calls in turn are checked. The flag is cleared after
 * the call in case that check took the fast path (plain arguments, no mode) and never read it. */
static PyObject *py_skip_one_hop(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n < 3 || n > 4) {
        PyErr_SetString(PyExc_TypeError, "_skip_one_hop_torch_function(func, types, args, kwargs=None)");
        return NULL;
    }
    PyObject *kwargs = n == 4 && args[3] != Py_None ? args[3] : NULL;
    if (kwargs && !PyDict_Check(kwargs)) { PyErr_SetString(PyExc_TypeError, "kwargs must be a dict"); return NULL; }
    PyObject *pos = PySequence_Tuple(args[2]);
    if (!pos) return NULL;
    tf_skip_once = 1;
    PyObject *r = PyObject_Call(args[0], pos, kwargs);
    tf_skip_once = 0;
    Py_DECREF(pos);
    return r;
}

/* _C._set_torch_function_state(state): the previous state (0 on, 1 off for subclasses, 2 off) */
static PyObject *py_set_state(PyObject *m, PyObject *arg)
{
    (void)m;
    long s = PyLong_AsLong(arg);
    if (s == -1 && PyErr_Occurred()) return NULL;
    if (s < TF_ENABLED || s > TF_ALL_DISABLED) { PyErr_SetString(PyExc_ValueError, "bad torch function state"); return NULL; }
    const int old = tf_state;
    tf_state = (int)s;
    return PyLong_FromLong(old);
}

static PyObject *py_get_state(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(tf_state);
}

static PyObject *py_is_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(tf_state == TF_ENABLED);
}

static PyObject *py_is_mode_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(tf_state != TF_ALL_DISABLED && tf_stack && PyList_GET_SIZE(tf_stack));
}

static PyObject *py_push_mode(PyObject *m, PyObject *mode)
{
    (void)m;
    if (!tf_stack && !(tf_stack = PyList_New(0))) return NULL;
    if (PyList_Append(tf_stack, mode) < 0) return NULL;
    pct_tf_modes_pushed++;
    Py_RETURN_NONE;
}

static PyObject *py_pop_mode(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    Py_ssize_t n = tf_stack ? PyList_GET_SIZE(tf_stack) : 0;
    if (!n) { PyErr_SetString(PyExc_RuntimeError, "Trying to pop from an empty mode stack"); return NULL; }
    PyObject *mode = Py_NewRef(PyList_GET_ITEM(tf_stack, n - 1));
    if (PyList_SetSlice(tf_stack, n - 1, n, NULL) < 0) { Py_DECREF(mode); return NULL; }
    pct_tf_modes_pushed--;
    return mode;
}

static PyObject *py_len_stack(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromSsize_t(tf_stack ? PyList_GET_SIZE(tf_stack) : 0);
}

static PyObject *py_stack_at(PyObject *m, PyObject *arg)
{
    (void)m;
    Py_ssize_t i = PyLong_AsSsize_t(arg), n = tf_stack ? PyList_GET_SIZE(tf_stack) : 0;
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) i += n;
    if (i < 0 || i >= n) { PyErr_SetString(PyExc_IndexError, "torch function mode stack index out of range"); return NULL; }
    return Py_NewRef(PyList_GET_ITEM(tf_stack, i));
}

static PyObject *py_set_dispatcher(PyObject *m, PyObject *fn)
{
    (void)m;
    Py_XSETREF(dispatcher, Py_NewRef(fn));
    Py_RETURN_NONE;
}

/* torch._C._has_torch_function(sequence) / _has_torch_function_unary(obj) / _has_torch_function_variadic(*objs) */
static PyObject *py_has_tf(PyObject *m, PyObject *seq)
{
    (void)m;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence");
    if (!fast) return NULL;
    int r = pct_tf_needed(PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast));
    Py_DECREF(fast);
    return PyBool_FromLong(r);
}

static PyObject *py_has_tf_unary(PyObject *m, PyObject *o)
{
    (void)m;
    return PyBool_FromLong(pct_tf_needed(&o, 1));
}

static PyObject *py_has_tf_variadic(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    return PyBool_FromLong(pct_tf_needed(args, n));
}

/* _C._as_subclass(tensor, cls): an alias of tensor of type cls that stays in tensor's autograd graph (a view_as
 * recorded by autograd, whose history the new object takes) */
static PyObject *py_as_subclass(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !PCT_TENSOR_CHECK(args[0])) { PyErr_SetString(PyExc_TypeError, "_as_subclass(tensor, cls)"); return NULL; }
    PyObject *cls = args[1];
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &pct_TensorType)) {
        PyErr_Format(PyExc_TypeError, "as_subclass(): argument 'cls' must be a subclass of Tensor, not %s",
                     Py_TYPE(cls)->tp_name);
        return NULL;
    }
    PyObject *view_as = pct_opfunc_get("view_as", 0);
    if (!view_as) { PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: no op view_as"); return NULL; }
    const int saved = tf_state;
    tf_state = TF_ALL_DISABLED;
    PyObject *pair[2] = {args[0], args[0]};
    PyObject *v = PyObject_Vectorcall(view_as, pair, 2, NULL);
    tf_state = saved;
    if (!v || cls == (PyObject *)&pct_TensorType) return v;
    pct_tensor *src = (pct_tensor *)v, *t = (pct_tensor *)pct_tensor_alias((PyTypeObject *)cls, src, true);
    if (t) {
        t->flags |= src->flags & PCT_FLAG_REQUIRES_GRAD;
        t->output_nr = src->output_nr;
        t->view_version = src->view_version;
        t->grad_fn = src->grad_fn ? (pct_object *)Py_NewRef((PyObject *)src->grad_fn) : NULL;
        t->base = src->base ? (pct_object *)Py_NewRef((PyObject *)src->base) : NULL;
    }
    Py_DECREF(v);
    return (PyObject *)t;
}

PyObject *pct_tf_wrap(PyObject *fn); /* torch_function_wrapper.c */
static PyObject *py_wrap(PyObject *m, PyObject *fn)
{
    (void)m;
    return pct_tf_wrap(fn);
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
static PyMethodDef tf_methods[] = {
    {"_disabled_torch_function_impl", FASTCALL(py_disabled_impl), "what a Tensor subclass sets as __torch_function__ to opt out"},
    {"_skip_one_hop_torch_function", FASTCALL(py_skip_one_hop), "func with its first __torch_function__ check skipped"},
    {"_set_torch_function_state", py_set_state, METH_O, "set 0 (on), 1 (off for subclasses), 2 (off); the previous state"},
    {"_get_torch_function_state", py_get_state, METH_NOARGS, NULL},
    {"_is_torch_function_enabled", py_is_enabled, METH_NOARGS, NULL},
    {"_is_torch_function_mode_enabled", py_is_mode_enabled, METH_NOARGS, NULL},
    {"_push_on_torch_function_stack", py_push_mode, METH_O, NULL},
    {"_pop_torch_function_stack", py_pop_mode, METH_NOARGS, NULL},
    {"_len_torch_function_stack", py_len_stack, METH_NOARGS, NULL},
    {"_get_function_stack_at", py_stack_at, METH_O, NULL},
    {"_set_torch_function_dispatcher", py_set_dispatcher, METH_O, NULL},
    {"_has_torch_function", py_has_tf, METH_O, NULL},
    {"_has_torch_function_unary", py_has_tf_unary, METH_O, NULL},
    {"_has_torch_function_variadic", FASTCALL(py_has_tf_variadic), NULL},
    {"_as_subclass", FASTCALL(py_as_subclass), NULL},
    {"_torch_function_wrap", py_wrap, METH_O, "fn behind the __torch_function__ check (Note [Torch function check])"},
    {NULL, NULL, 0, NULL},
};

int pct_tf_wrapper_install(PyObject *module); /* torch_function_wrapper.c */

int pct_torch_function_install(PyObject *module)
{
    if (!(tf_name = PyUnicode_InternFromString("__torch_function__"))) return -1;
    if (PyModule_AddFunctions(module, tf_methods) < 0) return -1;
    disabled_impl = PyObject_GetAttrString(module, "_disabled_torch_function_impl"); /* kept for the process */
    if (!disabled_impl) return -1;
    return pct_tf_wrapper_install(module);
}
