/* torch_function_wrapper.c: _C._torch_function_wrap(fn), a callable that runs fn behind the __torch_function__
 * check (Note [Torch function check]). torch's functions written in Python test has_torch_function at their top;
 * pyctorch wraps its Python functions (the composites, nn.functional, the Tensor methods written in Python) with
 * this object instead of editing each: it costs the check and one vectorcall, no Python frame. The wrapper is what
 * the namespace holds, so a handler receives it as `func` and `func is torch.nn.functional.relu` holds. It binds
 * like a function (a method descriptor: `t.backward()` passes t first without a bound-method object), and forwards
 * attribute reads and writes (__name__, __doc__, __defaults__, ...) to fn; __wrapped__ is fn. */
#include "pyobjects.h"
#include "torch_function.h"
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;
} tf_wrapper;

static PyObject *wrapper_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (pct_tf_needed(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0)))
        return pct_tf_dispatch(self, args, (size_t)nargs, kwnames);
    return PyObject_Vectorcall(((tf_wrapper *)self)->fn, args, nargsf, kwnames);
}

static PyObject *wrapper_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *wrapper_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
    PyErr_Clear();
    return PyObject_GetAttr(((tf_wrapper *)self)->fn, name);
}

static int wrapper_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    return PyObject_SetAttr(((tf_wrapper *)self)->fn, name, value);
}

static PyObject *forward_attr(PyObject *self, void *name)
{
    return PyObject_GetAttrString(((tf_wrapper *)self)->fn, (const char *)name);
}

/* pickled by reference, as a function is: a Tensor method as getattr(Tensor, name), anything else as the name it is
 * found under in its module */
static PyObject *wrapper_reduce(PyObject *self, PyObject *u)
{
    (void)u;
    PyObject *name = PyObject_GetAttrString(((tf_wrapper *)self)->fn, "__name__");
    if (!name) return NULL;
    PyObject *r = NULL;
    if (PyUnicode_Check(name) && PyDict_GetItemWithError(pct_TensorType.tp_dict, name) == self) {
        PyObject *getattr = PyDict_GetItemString(PyEval_GetBuiltins(), "getattr"); /* borrowed */
        if (getattr) r = Py_BuildValue("O(OO)", getattr, (PyObject *)&pct_TensorType, name);
    } else if (!PyErr_Occurred()) {
        r = PyObject_GetAttrString(((tf_wrapper *)self)->fn, "__qualname__");
    }
    Py_DECREF(name);
    return r;
}

static PyObject *wrapper_repr(PyObject *self)
{
    return PyObject_Repr(((tf_wrapper *)self)->fn);
}

static int wrapper_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((tf_wrapper *)self)->fn);
    return 0;
}

static int wrapper_clear(PyObject *self)
{
    Py_CLEAR(((tf_wrapper *)self)->fn);
    return 0;
}

static void wrapper_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    wrapper_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyGetSetDef wrapper_getset[] = {
    {"__doc__", forward_attr, NULL, NULL, "__doc__"},
    {"__module__", forward_attr, NULL, NULL, "__module__"},
    {"__name__", forward_attr, NULL, NULL, "__name__"},
    {"__qualname__", forward_attr, NULL, NULL, "__qualname__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef wrapper_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(tf_wrapper, fn), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef wrapper_methods[] = {
    {"__reduce__", wrapper_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch._C._torch_function_wrapper",
    .tp_basicsize = sizeof(tf_wrapper),
    .tp_dealloc = wrapper_dealloc,
    .tp_vectorcall_offset = offsetof(tf_wrapper, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = wrapper_repr,
    .tp_getattro = wrapper_getattro,
    .tp_setattro = wrapper_setattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_traverse = wrapper_traverse,
    .tp_clear = wrapper_clear,
    .tp_descr_get = wrapper_get,
    .tp_getset = wrapper_getset,
    .tp_members = wrapper_members,
    .tp_methods = wrapper_methods,
};

PyObject *pct_tf_wrap(PyObject *fn)
{
    if (Py_TYPE(fn) == &WrapperType) return Py_NewRef(fn);
    if (!PyCallable_Check(fn)) { PyErr_SetString(PyExc_TypeError, "_torch_function_wrap expects a callable"); return NULL; }
    tf_wrapper *w = PyObject_GC_New(tf_wrapper, &WrapperType);
    if (!w) return NULL;
    w->vectorcall = wrapper_call;
    w->fn = Py_NewRef(fn);
    PyObject_GC_Track(w);
    return (PyObject *)w;
}

int pct_tf_wrapper_install(PyObject *module)
{
    if (PyType_Ready(&WrapperType) < 0) return -1;
    return PyModule_AddObjectRef(module, "_torch_function_wrapper", (PyObject *)&WrapperType);
}
