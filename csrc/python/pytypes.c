/* pytypes.c: pyctorch.dtype, pyctorch.device and pyctorch.Size. */
#include "pyobjects.h"
#include "../aten/backend.h"
#include <stdlib.h>
#include <string.h>

/* ---- dtype ---- */

PyObject *pct_dtype_objects[PCT_NUM_DTYPES];

static PyObject *dtype_repr(pct_dtype_object *d) { return PyUnicode_FromFormat("torch.%s", pct_dtype_name[d->dtype]); }
static PyObject *dtype_is_floating(pct_dtype_object *d, void *c) { (void)c; return PyBool_FromLong(pct_dtype_is_floating(d->dtype)); }
static PyObject *dtype_is_complex(pct_dtype_object *d, void *c) { (void)c; return PyBool_FromLong(pct_dtype_is_complex(d->dtype)); }
/* dtype.to_real() / to_complex(): torch's, which refuse the dtypes that have no counterpart */
static PyObject *dtype_to_real(pct_dtype_object *d, PyObject *u)
{
    (void)u;
    return Py_NewRef(pct_dtype_objects[pct_dtype_to_real(d->dtype)]);
}
static PyObject *dtype_to_complex(pct_dtype_object *d, PyObject *u)
{
    (void)u;
    if (!pct_dtype_is_complex(d->dtype) && !(pct_dtype_is_floating(d->dtype) && !pct_dtype_is_float8(d->dtype)))
        return PyErr_Format(PyExc_RuntimeError, "Unknown Complex ScalarType for %s", pct_dtype_cpp_name[d->dtype]);
    return Py_NewRef(pct_dtype_objects[pct_dtype_to_complex(d->dtype)]);
}
static PyObject *dtype_is_signed(pct_dtype_object *d, void *c) { (void)c; return PyBool_FromLong(pct_dtype_is_signed(d->dtype)); }
static PyObject *dtype_itemsize(pct_dtype_object *d, void *c) { (void)c; return PyLong_FromLong(pct_dtype_itemsize[d->dtype]); }
static PyObject *dtype_reduce(pct_dtype_object *d, PyObject *u)
{
    (void)u;
    return PyUnicode_FromString(pct_dtype_name[d->dtype]); /* pickled as the module attribute */
}
static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", (getter)dtype_is_floating, NULL, NULL, NULL},
    {"is_complex", (getter)dtype_is_complex, NULL, NULL, NULL},
    {"is_signed", (getter)dtype_is_signed, NULL, NULL, NULL},
    {"itemsize", (getter)dtype_itemsize, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyMethodDef dtype_methods[] = {{"__reduce__", (PyCFunction)dtype_reduce, METH_NOARGS, NULL},
                                      {"to_real", (PyCFunction)dtype_to_real, METH_NOARGS, NULL},
                                      {"to_complex", (PyCFunction)dtype_to_complex, METH_NOARGS, NULL},
                                      {NULL, NULL, 0, NULL}};

PyTypeObject pct_DtypeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch.dtype",
    .tp_basicsize = sizeof(pct_dtype_object),
    .tp_repr = (reprfunc)dtype_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

int pct_dtype_from_object(PyObject *o)
{
    if (Py_TYPE(o) == &pct_DtypeType) return ((pct_dtype_object *)o)->dtype;
    if (o == (PyObject *)&PyFloat_Type) return PCT_FLOAT64;
    if (o == (PyObject *)&PyLong_Type) return PCT_INT64;
    if (o == (PyObject *)&PyBool_Type) return PCT_BOOL;
    PyErr_Format(PyExc_TypeError, "dtype must be torch.dtype, not %s", Py_TYPE(o)->tp_name);
    return -1;
}

/* ---- device ---- */

static const char *device_type_name(int t) { return pct_device_type_name(t); }

PyObject *pct_device_new(int type, int index)
{
    pct_device_object *d = PyObject_New(pct_device_object, &pct_DeviceType);
    if (!d) return NULL;
    d->type = (int8_t)type;
    d->index = (int8_t)index;
    return (PyObject *)d;
}

static int parse_device_string(const char *s, int8_t *type, int8_t *index)
{
    const char *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (n == 3 && strncmp(s, "cpu", 3) == 0) *type = PCT_CPU;
    else if (n == 4 && strncmp(s, "cuda", 4) == 0) *type = PCT_CUDA;
    else if (n == 4 && strncmp(s, "meta", 4) == 0) *type = PCT_META;
    else {
        PyErr_Format(PyExc_RuntimeError, "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
                     "maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: %s",
                     s);
        return -1;
    }
    *index = -1;
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || v < 0 || v > 127) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
            return -1;
        }
        *index = (int8_t)v;
    }
    return 0;
}

int pct_device_from_object(PyObject *o, int8_t *type, int8_t *index)
{
    if (Py_TYPE(o) == &pct_DeviceType) {
        *type = ((pct_device_object *)o)->type;
        *index = ((pct_device_object *)o)->index;
        return 0;
    }
    if (PyUnicode_Check(o)) return parse_device_string(PyUnicode_AsUTF8(o), type, index);
    if (PyLong_Check(o) && !PyBool_Check(o)) { /* an ordinal; True/False are not devices */
        long v = PyLong_AsLong(o);
        if (v < 0) { PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative"); return -1; }
        *type = PCT_CUDA;
        *index = (int8_t)v;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "expected a torch.device, not %s", Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *device_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"type", "index", NULL};
    PyObject *what;
    PyObject *index = Py_None;
    (void)tp;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:device", kwlist, &what, &index)) return NULL;
    int8_t t, i;
    if (pct_device_from_object(what, &t, &i) < 0) return NULL;
    if (index != Py_None) {
        if (i >= 0) { PyErr_SetString(PyExc_RuntimeError, "type (string) must not include an index because index was passed explicitly"); return NULL; }
        long v = PyLong_AsLong(index);
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (v < 0) { PyErr_Format(PyExc_RuntimeError, "Device index must not be negative"); return NULL; }
        i = (int8_t)v;
    }
    return pct_device_new(t, i);
}

static PyObject *device_repr(pct_device_object *d)
{
    if (d->index >= 0) return PyUnicode_FromFormat("device(type='%s', index=%d)", device_type_name(d->type), d->index);
    return PyUnicode_FromFormat("device(type='%s')", device_type_name(d->type));
}
static PyObject *device_str(pct_device_object *d)
{
    if (d->index >= 0) return PyUnicode_FromFormat("%s:%d", device_type_name(d->type), d->index);
    return PyUnicode_FromString(device_type_name(d->type));
}
static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(b) != &pct_DeviceType || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    pct_device_object *x = (pct_device_object *)a, *y = (pct_device_object *)b;
    int eq = x->type == y->type && x->index == y->index;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
static Py_hash_t device_hash(pct_device_object *d) { return (Py_hash_t)(d->type * 256 + d->index + 1) + 1; }
static PyObject *device_type(pct_device_object *d, void *c) { (void)c; return PyUnicode_FromString(device_type_name(d->type)); }
static PyObject *device_index(pct_device_object *d, void *c)
{
    (void)c;
    if (d->index < 0) Py_RETURN_NONE;
    return PyLong_FromLong(d->index);
}
static PyObject *device_reduce(pct_device_object *d, PyObject *u)
{
    (void)u;
    if (d->index >= 0) return Py_BuildValue("(O(si))", (PyObject *)&pct_DeviceType, device_type_name(d->type), d->index);
    return Py_BuildValue("(O(s))", (PyObject *)&pct_DeviceType, device_type_name(d->type));
}
static PyGetSetDef device_getset[] = {
    {"type", (getter)device_type, NULL, NULL, NULL},
    {"index", (getter)device_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
/* `with torch.device(...):` makes the device the default of the factories inside, as torch's DeviceContext does;
 * the bookkeeping (a stack of the defaults entered over) is Python's: pyctorch._dropin */
static PyObject *call_dropin(const char *name, PyObject *arg)
{
    PyObject *mod = PyImport_ImportModule("pyctorch._dropin");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, name, arg ? "O" : NULL, arg);
    Py_DECREF(mod);
    return r;
}
static PyObject *device_enter(pct_device_object *d, PyObject *u)
{
    (void)u;
    PyObject *r = call_dropin("_device_context_enter", (PyObject *)d);
    if (!r) return NULL;
    Py_DECREF(r);
    return Py_NewRef((PyObject *)d);
}
static PyObject *device_exit(pct_device_object *d, PyObject *args)
{
    (void)d;
    (void)args;
    PyObject *r = call_dropin("_device_context_exit", NULL);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}
static PyMethodDef device_methods[] = {
    {"__reduce__", (PyCFunction)device_reduce, METH_NOARGS, NULL},
    {"__enter__", (PyCFunction)device_enter, METH_NOARGS, "make this device the factories' default inside the block"},
    {"__exit__", (PyCFunction)device_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pct_DeviceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch.device",
    .tp_basicsize = sizeof(pct_device_object),
    .tp_repr = (reprfunc)device_repr,
    .tp_str = (reprfunc)device_str,
    .tp_hash = (hashfunc)device_hash,
    .tp_richcompare = device_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_getset = device_getset,
    .tp_methods = device_methods,
    .tp_new = device_new,
};

/* ---- Size ---- */

PyObject *pct_size_new(int n, const int64_t *v)
{
    PyObject *t = pct_SizeType.tp_alloc(&pct_SizeType, n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

static PyObject *size_repr(PyObject *self)
{
    PyObject *list = PySequence_List(self);
    if (!list) return NULL;
    PyObject *r = PyUnicode_FromFormat("torch.Size(%R)", list);
    Py_DECREF(list);
    return r;
}
static PyObject *size_numel(PyObject *self, PyObject *u)
{
    (void)u;
    long long n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
    return PyLong_FromLongLong(n);
}
static PyObject *size_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    PyObject *tuple = PyTuple_Type.tp_new(&PyTuple_Type, args, kw);
    if (!tuple) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    PyObject *s = tp->tp_alloc(tp, n);
    for (Py_ssize_t i = 0; s && i < n; i++) {
        PyObject *x = PyNumber_Index(PyTuple_GET_ITEM(tuple, i));
        if (!x) { Py_CLEAR(s); break; }
        PyTuple_SET_ITEM(s, i, x);
    }
    Py_DECREF(tuple);
    return s;
}
/* Slicing or adding Sizes gives a Size back, as in torch. */
static PyObject *size_getitem(PyObject *self, PyObject *key)
{
    PyObject *r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
    if (!r || !PySlice_Check(key)) return r;
    PyObject *s = PyObject_CallOneArg((PyObject *)&pct_SizeType, r);
    Py_DECREF(r);
    return s;
}
static PyObject *size_add(PyObject *a, PyObject *b)
{
    PyObject *r = PyTuple_Type.tp_as_sequence->sq_concat(a, b);
    if (!r) return NULL;
    PyObject *s = PyObject_CallOneArg((PyObject *)&pct_SizeType, r);
    Py_DECREF(r);
    return s;
}
static PyObject *size_reduce(PyObject *self, PyObject *u)
{
    (void)u;
    PyObject *t = PySequence_Tuple(self);
    if (!t) return NULL;
    PyObject *r = Py_BuildValue("(O(N))", (PyObject *)&pct_SizeType, t);
    return r;
}
static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, NULL},
    {"__reduce__", size_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static PyMappingMethods size_as_mapping = {.mp_subscript = size_getitem};
static PySequenceMethods size_as_sequence = {.sq_concat = size_add};

PyTypeObject pct_SizeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch.Size",
    .tp_repr = size_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_methods = size_methods,
    .tp_as_mapping = &size_as_mapping,
    .tp_as_sequence = &size_as_sequence,
    .tp_new = size_new,
};
