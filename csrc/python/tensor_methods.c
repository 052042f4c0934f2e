/* tensor_methods.c: Tensor attributes and the methods that are not operators
 * (metadata queries, Python conversions, dtype shorthands). */
#include "pyobjects.h"
#include "../autograd/autograd.h"
#include "../aten/error.h"
#include "../aten/iter.h"

PyObject *pct_tensor_alias(PyTypeObject *type, pct_tensor *src, bool share_version);
PyObject *pct_dlpack_export(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pct_dlpack_device(PyObject *self, PyObject *unused);
PyObject *pct_tensor_untyped_storage(PyObject *self, PyObject *unused);

#define T(o) ((pct_tensor *)(o))

static PyObject *get_shape(PyObject *self, void *c) { (void)c; return pct_size_new(T(self)->ndim, T(self)->sizes); }
static PyObject *get_dtype(PyObject *self, void *c) { (void)c; PyObject *d = pct_dtype_objects[T(self)->dtype]; Py_INCREF(d); return d; }
static PyObject *get_device(PyObject *self, void *c) { (void)c; return pct_device_new(T(self)->device_type, T(self)->device_index); }
static PyObject *get_ndim(PyObject *self, void *c) { (void)c; return PyLong_FromLong(T(self)->ndim); }
static PyObject *get_itemsize(PyObject *self, void *c) { (void)c; return PyLong_FromLong(pct_dtype_itemsize[T(self)->dtype]); }
static PyObject *get_nbytes(PyObject *self, void *c) { (void)c; return PyLong_FromLongLong(T(self)->numel * pct_dtype_itemsize[T(self)->dtype]); }
static PyObject *get_is_cuda(PyObject *self, void *c) { (void)c; return PyBool_FromLong(T(self)->device_type == PCT_CUDA); }
static PyObject *get_is_meta(PyObject *self, void *c) { (void)c; return PyBool_FromLong(T(self)->device_type == PCT_META); }
static PyObject *get_is_cpu(PyObject *self, void *c) { (void)c; return PyBool_FromLong(T(self)->device_type == PCT_CPU); }
static PyObject *get_version(PyObject *self, void *c) { (void)c; return PyLong_FromLong(atomic_load(&T(self)->version->value)); }
static PyObject *get_requires_grad(PyObject *self, void *c) { (void)c; return PyBool_FromLong(pct_tensor_requires_grad(T(self))); }
static PyObject *get_is_leaf(PyObject *self, void *c) { (void)c; return PyBool_FromLong(T(self)->grad_fn == NULL); }
static PyObject *get_grad_fn(PyObject *self, void *c)
{
    (void)c;
    if (pct_refresh_view_history(T(self)) < 0) return NULL;
    PyObject *g = T(self)->grad_fn ? T(self)->grad_fn : Py_None;
    Py_INCREF(g);
    return g;
}
static PyObject *get_base(PyObject *self, void *c)
{
    (void)c;
    PyObject *b = T(self)->base ? T(self)->base : Py_None;
    Py_INCREF(b);
    return b;
}
static PyObject *get_grad(PyObject *self, void *c)
{
    (void)c;
    PyObject *g = T(self)->grad ? T(self)->grad : Py_None;
    Py_INCREF(g);
    return g;
}
static int set_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (v && v != Py_None) {
        if (!PCT_TENSOR_CHECK(v)) { PyErr_SetString(PyExc_TypeError, "assigned grad expected to be a Tensor or None"); return -1; }
        pct_tensor *g = T(v), *t = T(self);
        if (g->dtype != t->dtype) { PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different type"); return -1; }
        if (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different size");
            return -1;
        }
    }
    PyObject *old = T(self)->grad;
    T(self)->grad = (v && v != Py_None) ? Py_NewRef(v) : NULL;
    Py_XDECREF(old);
    return 0;
}
static int set_requires_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PyBool_Check(v)) { PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool"); return -1; }
    pct_tensor *t = T(self);
    if (t->grad_fn && v == Py_False) {
        PyErr_SetString(PyExc_RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use "
                                            "a computed variable in a subgraph that doesn't require differentiation use "
                                            "var_no_grad = var.detach().");
        return -1;
    }
    if (v == Py_True && !pct_dtype_is_differentiable(t->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point and complex dtype can require gradients");
        return -1;
    }
    if (v == Py_True) t->flags |= PCT_FLAG_REQUIRES_GRAD;
    else t->flags &= (uint8_t)~PCT_FLAG_REQUIRES_GRAD;
    return 0;
}
static PyObject *get_data(PyObject *self, void *c)
{
    (void)c;
    /* .data: same storage, a fresh version counter, no history (torch's semantics) */
    return pct_tensor_alias(&pct_TensorType, T(self), false);
}
static int set_data(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (!v || !PCT_TENSOR_CHECK(v)) { PyErr_SetString(PyExc_TypeError, "data must be a Tensor"); return -1; }
    pct_tensor *t = T(self), *s = T(v);
    pct_storage_incref(s->storage);
    pct_storage_decref(t->storage);
    t->storage = s->storage;
    t->dtype = s->dtype;
    t->offset = s->offset;
    t->device_type = s->device_type;
    t->device_index = s->device_index;
    return pct_tensor_set_shape(t, s->ndim, s->sizes, s->strides);
}
static PyObject *get_T(PyObject *self, void *c)
{
    (void)c;
    pct_tensor *t = T(self);
    int64_t dims[PCT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) dims[i] = t->ndim - 1 - i;
    PyObject *perm = pct_size_new(t->ndim, dims);
    if (!perm) return NULL;
    PyObject *r = PyObject_CallMethod(self, "permute", "O", perm);
    Py_DECREF(perm);
    return r;
}
static PyObject *get_mT(PyObject *self, void *c)
{
    (void)c;
    if (T(self)->ndim < 2) { PyErr_SetString(PyExc_RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."); return NULL; }
    return PyObject_CallMethod(self, "transpose", "ii", -2, -1);
}
static PyObject *get_layout(PyObject *self, void *c)
{
    (void)self; (void)c;
    PyObject *m = PyImport_ImportModule("pyctorch");
    if (!m) return NULL;
    PyObject *r = PyObject_GetAttrString(m, "strided");
    Py_DECREF(m);
    return r;
}
static PyObject *get_retains_grad(PyObject *self, void *c) { (void)c; return PyBool_FromLong((T(self)->flags & PCT_FLAG_RETAINS_GRAD) != 0); }
static PyObject *get_false(PyObject *self, void *c) { (void)self; (void)c; Py_RETURN_FALSE; }
static PyObject *get_is_inference(PyObject *self, void *c) { (void)c; return PyBool_FromLong((T(self)->flags & PCT_FLAG_INFERENCE) != 0); }
/* which output of its grad_fn the tensor is (0 for a leaf) */
static PyObject *get_output_nr(PyObject *self, void *c) { (void)c; return PyLong_FromUnsignedLong(T(self)->grad_fn ? T(self)->output_nr : 0); }

PyGetSetDef pct_tensor_getset[] = {
    {"shape", get_shape, NULL, "the size of the tensor, as a torch.Size", NULL},
    {"dtype", get_dtype, NULL, NULL, NULL},
    {"device", get_device, NULL, NULL, NULL},
    {"ndim", get_ndim, NULL, NULL, NULL},
    {"itemsize", get_itemsize, NULL, NULL, NULL},
    {"nbytes", get_nbytes, NULL, NULL, NULL},
    {"is_cuda", get_is_cuda, NULL, NULL, NULL},
    {"is_cpu", get_is_cpu, NULL, NULL, NULL},
    {"is_sparse", get_false, NULL, NULL, NULL},
    {"is_quantized", get_false, NULL, NULL, NULL},
    {"is_meta", get_is_meta, NULL, NULL, NULL},
    {"is_mps", get_false, NULL, NULL, NULL},
    {"is_nested", get_false, NULL, NULL, NULL},
    {"_version", get_version, NULL, NULL, NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, NULL, NULL},
    {"is_leaf", get_is_leaf, NULL, NULL, NULL},
    {"grad_fn", get_grad_fn, NULL, NULL, NULL},
    {"grad", get_grad, set_grad, NULL, NULL},
    {"_base", get_base, NULL, NULL, NULL},
    {"data", get_data, set_data, NULL, NULL},
    {"T", get_T, NULL, NULL, NULL},
    {"mT", get_mT, NULL, NULL, NULL},
    {"layout", get_layout, NULL, NULL, NULL},
    {"retains_grad", get_retains_grad, NULL, NULL, NULL},
    {"is_inference_flag", get_is_inference, NULL, NULL, NULL},
    {"output_nr", get_output_nr, NULL, NULL, NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- metadata methods ---- */

static PyObject *m_size(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:size", kwlist, &dim)) return NULL;
    pct_tensor *t = T(self);
    if (dim == Py_None) return pct_size_new(t->ndim, t->sizes);
    long d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred()) return NULL;
    int w = pct_wrap_dim(d, t->ndim);
    if (w < 0) return NULL;
    return PyLong_FromLongLong(t->ndim ? t->sizes[w] : 1);
}
static PyObject *m_stride(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:stride", kwlist, &dim)) return NULL;
    pct_tensor *t = T(self);
    if (dim == Py_None) {
        PyObject *r = PyTuple_New(t->ndim);
        for (int i = 0; r && i < t->ndim; i++) PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(t->strides[i]));
        return r;
    }
    long d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred()) return NULL;
    int w = pct_wrap_dim(d, t->ndim);
    if (w < 0) return NULL;
    return PyLong_FromLongLong(t->ndim ? t->strides[w] : 1);
}
static PyObject *m_dim(PyObject *self, PyObject *u) { (void)u; return PyLong_FromLong(T(self)->ndim); }
static PyObject *m_numel(PyObject *self, PyObject *u) { (void)u; return PyLong_FromLongLong(T(self)->numel); }
static PyObject *m_storage_offset(PyObject *self, PyObject *u) { (void)u; return PyLong_FromLongLong(T(self)->offset); }
static PyObject *m_element_size(PyObject *self, PyObject *u) { (void)u; return PyLong_FromLong(pct_dtype_itemsize[T(self)->dtype]); }
static PyObject *m_data_ptr(PyObject *self, PyObject *u)
{
    (void)u;
    if (T(self)->device_type == PCT_META) return PyLong_FromLong(0); /* no memory: torch's 0 */
    return PyLong_FromVoidPtr(pct_tensor_data(T(self)));
}
static PyObject *m_is_floating_point(PyObject *self, PyObject *u) { (void)u; return PyBool_FromLong(pct_dtype_is_floating(T(self)->dtype)); }
static PyObject *m_is_complex(PyObject *self, PyObject *u) { (void)u; return PyBool_FromLong(pct_dtype_is_complex(T(self)->dtype)); }
static PyObject *m_is_signed(PyObject *self, PyObject *u) { (void)u; return PyBool_FromLong(pct_dtype_is_signed(T(self)->dtype)); }
static PyObject *m_get_device(PyObject *self, PyObject *u) { (void)u; return PyLong_FromLong(T(self)->device_type == PCT_CPU ? -1 : T(self)->device_index); }
/* is_contiguous(*, memory_format=torch.contiguous_format): channels_last asks for the NHWC order, channels_last_3d
 * for NDHWC. */
static PyObject *m_is_contiguous(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"memory_format", NULL};
    PyObject *mf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:is_contiguous", kwlist, &mf)) return NULL;
    if (mf && strcmp(_PyType_Name(Py_TYPE(mf)), "memory_format") != 0) {
        PyErr_Format(PyExc_TypeError, "is_contiguous(): argument 'memory_format' must be torch.memory_format, not %s",
                     Py_TYPE(mf)->tp_name);
        return NULL;
    }
    PyObject *name = mf ? PyObject_GetAttrString(mf, "_name") : NULL;
    if (mf && !name) return NULL;
    bool cl = name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "channels_last") == 0;
    bool cl3 = name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "channels_last_3d") == 0;
    Py_XDECREF(name);
    return PyBool_FromLong(cl ? pct_tensor_is_channels_last(T(self))
                           : cl3 ? pct_tensor_is_channels_last_3d(T(self)) : pct_tensor_is_contiguous(T(self)));
}
static PyObject *m_requires_grad_(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"requires_grad", NULL};
    PyObject *flag = Py_True;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O!:requires_grad_", kwlist, &PyBool_Type, &flag)) return NULL;
    if (flag == Py_True && !pct_dtype_is_differentiable(((pct_tensor *)self)->dtype)) { /* torch's method words it so */
        PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point dtype can require gradients");
        return NULL;
    }
    if (set_requires_grad(self, flag, NULL) < 0) return NULL;
    Py_INCREF(self);
    return self;
}
static PyObject *m_make_subclass(PyObject *cls, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"cls", "data", "require_grad", NULL};
    PyObject *type, *data;
    int require_grad = 0;
    (void)cls;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|p:_make_subclass", kwlist, &type, &pct_TensorType, &data, &require_grad)) return NULL;
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &pct_TensorType)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a Tensor subclass");
        return NULL;
    }
    PyObject *r = pct_tensor_alias((PyTypeObject *)type, T(data), true);
    if (r && require_grad && set_requires_grad(r, Py_True, NULL) < 0) Py_CLEAR(r);
    return r;
}

/* dtype shorthands: x.float(), x.long(), ... */
static PyObject *to_dtype(PyObject *self, int dtype)
{
    if (T(self)->dtype == dtype) { Py_INCREF(self); return self; }
    /* through the op table's to(), so the conversion is recorded by autograd */
    PyObject *to = pct_opfunc_get("to", 0);
    if (!to) return (PyObject *)pct_to_dtype(T(self), dtype, false);
    PyObject *args[2] = {self, pct_dtype_objects[dtype]};
    return PyObject_Vectorcall(to, args, 2, NULL);
}
#define PCT_DTYPE_METHOD(name, dtype) \
    static PyObject *m_##name(PyObject *self, PyObject *args, PyObject *kw) { (void)args; (void)kw; return to_dtype(self, dtype); }
PCT_DTYPE_METHOD(float, PCT_FLOAT32)
PCT_DTYPE_METHOD(double, PCT_FLOAT64)
PCT_DTYPE_METHOD(half, PCT_FLOAT16)
PCT_DTYPE_METHOD(bfloat16, PCT_BFLOAT16)
PCT_DTYPE_METHOD(long, PCT_INT64)
PCT_DTYPE_METHOD(int, PCT_INT32)
PCT_DTYPE_METHOD(short, PCT_INT16)
PCT_DTYPE_METHOD(char, PCT_INT8)
PCT_DTYPE_METHOD(byte, PCT_UINT8)
PCT_DTYPE_METHOD(bool, PCT_BOOL)

static PyObject *m_type(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "non_blocking", NULL};
    PyObject *d = Py_None;
    int nb = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:type", kwlist, &d, &nb)) return NULL;
    /* torch's legacy type names: "torch." + the C++ name + "Tensor" (torch.FloatTensor, torch.ComplexFloatTensor) */
    char name[64];
    if (d == Py_None) {
        snprintf(name, sizeof name, "torch.%sTensor", pct_dtype_cpp_name[T(self)->dtype]);
        return PyUnicode_FromString(name);
    }
    int dtype = -1;
    if (PyUnicode_Check(d)) {
        for (int i = 0; i < PCT_NUM_DTYPES; i++) {
            snprintf(name, sizeof name, "torch.%sTensor", pct_dtype_cpp_name[i]);
            if (PyUnicode_CompareWithASCIIString(d, name) == 0) dtype = i;
        }
        if (dtype < 0) { PyErr_Format(PyExc_ValueError, "invalid type: '%U'", d); return NULL; }
    } else if ((dtype = pct_dtype_from_object(d)) < 0) {
        return NULL;
    }
    return to_dtype(self, dtype);
}

/* self.to(device, non_blocking=..., memory_format=...): cpu() and cuda() */
static PyObject *to_device_call(PyObject *self, PyObject *device, PyObject *non_blocking, PyObject *memory_format)
{
    PyObject *to = PyObject_GetAttrString(self, "to");
    PyObject *args = to ? PyTuple_Pack(1, device) : NULL;
    PyObject *kw = args ? PyDict_New() : NULL;
    PyObject *r = NULL;
    if (kw && (!non_blocking || PyDict_SetItemString(kw, "non_blocking", non_blocking) == 0) &&
        (!memory_format || PyDict_SetItemString(kw, "memory_format", memory_format) == 0))
        r = PyObject_Call(to, args, kw);
    Py_XDECREF(to);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    return r;
}

static PyObject *m_cpu(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"memory_format", NULL};
    PyObject *mf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:cpu", kwlist, &mf)) return NULL;
    if (T(self)->device_type == PCT_META) return pct_error_str(PCT_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    if (T(self)->device_type == PCT_CPU && !mf) {
        Py_INCREF(self);
        return self;
    }
    PyObject *cpu = PyUnicode_FromString("cpu");
    PyObject *r = cpu ? to_device_call(self, cpu, NULL, mf) : NULL;
    Py_XDECREF(cpu);
    return r;
}
/* cuda(device=None, non_blocking=False, memory_format=torch.preserve_format): an ordinal or None means a CUDA device */
static PyObject *m_cuda(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device", "non_blocking", "memory_format", NULL};
    PyObject *device = Py_None, *non_blocking = NULL, *mf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$O:cuda", kwlist, &device, &non_blocking, &mf)) return NULL;
    PyObject *target = device == Py_None ? PyUnicode_FromString("cuda")
                       : PyLong_Check(device) ? PyUnicode_FromFormat("cuda:%S", device)
                                              : (Py_INCREF(device), device);
    if (!target) return NULL;
    int8_t type = PCT_CUDA, index;
    PyObject *r = NULL;
    if (pct_device_from_object(target, &type, &index) == 0) {
        if (type != PCT_CUDA)
            PyErr_Format(PyExc_RuntimeError, "Invalid device, must be cuda device");
        else
            r = to_device_call(self, target, non_blocking, mf);
    }
    Py_DECREF(target);
    return r;
}
static PyObject *m_array(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy)) return NULL;
    if (T(self)->device_type == PCT_META) return pct_tensor_numpy(self, NULL, NULL);
    /* np.asarray / np.array of a tensor that requires grad is refused as .numpy() refuses it (torch's rule) */
    PyObject *arr = pct_tensor_numpy(self, NULL, NULL);
    if (!arr || dtype == Py_None) return arr;
    PyObject *r = PyObject_CallMethod(arr, "astype", "O", dtype);
    Py_DECREF(arr);
    return r;
}
static PyObject *m_reduce_ex(PyObject *self, PyObject *args)
{
    /* pickling (DataLoader workers, copy.deepcopy): rebuild from a numpy copy */
    (void)args;
    PyObject *m = PyImport_ImportModule("pyctorch._utils");
    if (!m) return NULL;
    PyObject *r = PyObject_CallMethod(m, "reduce_tensor", "O", self);
    Py_DECREF(m);
    return r;
}

PyMethodDef pct_tensor_methods[] = {
    {"size", (PyCFunction)(void (*)(void))m_size, METH_VARARGS | METH_KEYWORDS, "size(dim=None)"},
    {"stride", (PyCFunction)(void (*)(void))m_stride, METH_VARARGS | METH_KEYWORDS, "stride(dim=None)"},
    {"dim", m_dim, METH_NOARGS, NULL},
    {"ndimension", m_dim, METH_NOARGS, NULL},
    {"numel", m_numel, METH_NOARGS, NULL},
    {"nelement", m_numel, METH_NOARGS, NULL},
    {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"is_floating_point", m_is_floating_point, METH_NOARGS, NULL},
    {"is_complex", m_is_complex, METH_NOARGS, NULL},
    {"is_signed", m_is_signed, METH_NOARGS, NULL},
    {"get_device", m_get_device, METH_NOARGS, NULL},
    {"is_contiguous", (PyCFunction)(void (*)(void))m_is_contiguous, METH_VARARGS | METH_KEYWORDS, NULL},
    {"requires_grad_", (PyCFunction)(void (*)(void))m_requires_grad_, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_make_subclass", (PyCFunction)(void (*)(void))m_make_subclass, METH_VARARGS | METH_KEYWORDS | METH_STATIC, NULL},
    {"float", (PyCFunction)(void (*)(void))m_float, METH_VARARGS | METH_KEYWORDS, NULL},
    {"double", (PyCFunction)(void (*)(void))m_double, METH_VARARGS | METH_KEYWORDS, NULL},
    {"half", (PyCFunction)(void (*)(void))m_half, METH_VARARGS | METH_KEYWORDS, NULL},
    {"bfloat16", (PyCFunction)(void (*)(void))m_bfloat16, METH_VARARGS | METH_KEYWORDS, NULL},
    {"long", (PyCFunction)(void (*)(void))m_long, METH_VARARGS | METH_KEYWORDS, NULL},
    {"int", (PyCFunction)(void (*)(void))m_int, METH_VARARGS | METH_KEYWORDS, NULL},
    {"short", (PyCFunction)(void (*)(void))m_short, METH_VARARGS | METH_KEYWORDS, NULL},
    {"char", (PyCFunction)(void (*)(void))m_char, METH_VARARGS | METH_KEYWORDS, NULL},
    {"byte", (PyCFunction)(void (*)(void))m_byte, METH_VARARGS | METH_KEYWORDS, NULL},
    {"bool", (PyCFunction)(void (*)(void))m_bool, METH_VARARGS | METH_KEYWORDS, NULL},
    {"type", (PyCFunction)(void (*)(void))m_type, METH_VARARGS | METH_KEYWORDS, NULL},
    {"cpu", (PyCFunction)(void (*)(void))m_cpu, METH_VARARGS | METH_KEYWORDS, NULL},
    {"cuda", (PyCFunction)(void (*)(void))m_cuda, METH_VARARGS | METH_KEYWORDS, NULL},
    {"item", pct_tensor_item, METH_NOARGS, NULL},
    {"untyped_storage", pct_tensor_untyped_storage, METH_NOARGS, "the storage this tensor views"},
    {"set_", (PyCFunction)(void (*)(void))pct_tensor_set_, METH_VARARGS | METH_KEYWORDS, "set_(source=None, storage_offset=0, size=None, stride=None): view another storage or tensor"},
    {"resize_", (PyCFunction)(void (*)(void))pct_tensor_resize_method, METH_VARARGS | METH_KEYWORDS,
     "resize_(*sizes, memory_format=None): new contiguous shape over the same storage, grown if needed"},
    {"resize_as_", (PyCFunction)(void (*)(void))pct_tensor_resize_as_method, METH_VARARGS | METH_KEYWORDS,
     "resize_as_(the_template, memory_format=None): resize_ to the template's shape"},
    {"tolist", pct_tensor_tolist, METH_NOARGS, NULL},
    {"numpy", (PyCFunction)(void (*)(void))pct_tensor_numpy, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__array__", (PyCFunction)(void (*)(void))m_array, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack__", (PyCFunction)(void (*)(void))pct_dlpack_export, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack_device__", pct_dlpack_device, METH_NOARGS, NULL},
    {"__reduce_ex__", m_reduce_ex, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
