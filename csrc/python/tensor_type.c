/* tensor_type.c: the Tensor Python type: lifetime, GC, attributes, the number and
 * comparison protocols (forwarded to the op table), and Python-level conversions.
 * Indexing lives in indexing.c, printing in pyctorch/_tensor_str.py. */
#include "pyobjects.h"
#include "indexing.h"
#include "torch_function.h"
#include "../aten/error.h"
#include "../aten/iter.h"
#include <stdlib.h>

void pct_version_release(pct_version *v);

/* ---- lifetime ---- */

static int tensor_traverse(pct_tensor *t, visitproc visit, void *arg)
{
    Py_VISIT(t->grad);
    Py_VISIT(t->grad_fn);
    Py_VISIT(t->base);
    Py_VISIT(t->hooks);
    Py_VISIT(t->post_acc_hooks);
    Py_VISIT(t->dict);
    return 0;
}

static int tensor_clear(pct_tensor *t)
{
    Py_CLEAR(t->grad);
    Py_CLEAR(t->grad_fn);
    Py_CLEAR(t->base);
    Py_CLEAR(t->hooks);
    Py_CLEAR(t->post_acc_hooks);
    Py_CLEAR(t->grad_acc);
    Py_CLEAR(t->dict);
    return 0;
}

static void tensor_dealloc(pct_tensor *t)
{
    PyTypeObject *tp = Py_TYPE(t);
    PyObject_GC_UnTrack(t);
    /* tensor -> grad_fn -> saved tensor -> ... chains are freed iteratively */
    Py_TRASHCAN_BEGIN(t, tensor_dealloc)
    if (t->weakrefs) PyObject_ClearWeakRefs((PyObject *)t);
    tensor_clear(t);
    if (t->storage) pct_storage_decref(t->storage);
    if (t->version) pct_version_release(t->version);
    if (t->sizes && t->sizes != t->inline_dims) free(t->sizes);
    /* a Python subclass's type reference is released by CPython's subtype_dealloc */
    tp->tp_free((PyObject *)t);
    Py_TRASHCAN_END
}

/* An alias of src of Python type `type` (a Tensor subclass): same storage, shape and
 * version counter, no autograd history. Used by _make_subclass and detach(). */
PyObject *pct_tensor_alias(PyTypeObject *type, pct_tensor *src, bool share_version)
{
    pct_tensor *t = (pct_tensor *)type->tp_alloc(type, 0);
    if (t && pct_tensor_init_alias(t, src, share_version) < 0) Py_CLEAR(t);
    return (PyObject *)t;
}

/* torch.Tensor(*sizes) / torch.Tensor(data): the legacy float constructor. */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "new() received an invalid combination of arguments");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *made = NULL;
    if (n == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, 0))) {
        PyObject *a = PyTuple_GET_ITEM(args, 0);
        if (PCT_TENSOR_CHECK(a)) { Py_INCREF(a); made = a; }
        else made = pct_tensor_from_data(a, pct_default_dtype, true);
    } else {
        int64_t sizes[PCT_MAX_DIMS];
        if (n > PCT_MAX_DIMS) { PyErr_SetString(PyExc_TypeError, "too many dimensions"); return NULL; }
        for (Py_ssize_t i = 0; i < n; i++) {
            sizes[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(args, i));
            if (sizes[i] == -1 && PyErr_Occurred()) return NULL;
        }
        made = (PyObject *)pct_tensor_empty((int)n, sizes, pct_default_dtype, PCT_CPU, -1);
    }
    if (!made || type == &pct_TensorType) return made;
    PyObject *r = pct_tensor_alias(type, (pct_tensor *)made, true);
    Py_DECREF(made);
    return r;
}

/* ---- printing ---- */

static PyObject *tensor_repr(PyObject *self)
{
    if (pct_tf_needed(&self, 1)) return pct_tf_dispatch_slot("__repr__", &self, 1);
    PyObject *mod = PyImport_ImportModule("pyctorch._tensor_str");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "tensor_str_with_suffix", "O", self);
    Py_DECREF(mod);
    return r;
}

/* ---- number protocol: forwarded to the op table ---- */

/* name: the op; mode: 0 torch.<name>, 1 Tensor.<name>_, PCT_OPFUNC_METHOD Tensor.<name> (what a __torch_function__
 * handler is given for `a + b`, as in torch) */
static PyObject *call2(const char *name, PyObject *a, PyObject *b, int mode)
{
    PyObject *f = pct_opfunc_get(name, mode);
    if (!f && mode == PCT_OPFUNC_METHOD) f = pct_opfunc_get(name, 0);
    if (!f) { PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: no op %s", name); return NULL; }
    PyObject *args[2] = {a, b};
    return PyObject_Vectorcall(f, args, 2, NULL);
}

static bool is_operand(PyObject *o)
{
    if (PCT_TENSOR_CHECK(o) || PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o)) return true;
    pct_scalar s;
    return !PyUnicode_Check(o) && !PySequence_Check(o) && pct_scalar_from_object(o, &s) == 0;
}

/* Both operands are numbers or tensors, or one of them takes the call through __torch_function__ (a tensor-like
 * object that is no Tensor). */
static bool operands(PyObject *a, PyObject *b)
{
    PyObject *ab[2] = {a, b};
    return (is_operand(a) && is_operand(b)) || pct_tf_needed(ab, 2);
}

/* A reflected operator (number op tensor) goes to handlers as Tensor.__r<op>__(tensor, number), as in torch. */
#define PCT_TF_REFLECTED(rname, tensor, other)                                     \
    do {                                                                           \
        PyObject *tf_args_[2] = {tensor, other};                                   \
        if (pct_tf_needed(tf_args_, 2)) return pct_tf_dispatch_slot(rname, tf_args_, 2); \
    } while (0)

/* Binary dunder: tensor op x, or x op tensor through the reflected form. */
#define PCT_BINARY_DUNDER(fname, op, rop)                                          \
    static PyObject *fname(PyObject *a, PyObject *b)                               \
    {                                                                              \
        if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;                             \
        if (PCT_TENSOR_CHECK(a)) return call2(op, a, b, PCT_OPFUNC_METHOD);        \
        return call2(rop, b, a, PCT_OPFUNC_METHOD);                                \
    }
/* Reflected forms of non-commutative ops swap the operands back. */
static PyObject *swap_call(const char *name, PyObject *tensor, PyObject *scalar)
{
    pct_scalar s;
    if (pct_scalar_from_object(scalar, &s) < 0) Py_RETURN_NOTIMPLEMENTED;
    pct_tensor *w = pct_wrap_scalar(&s);
    if (!w) return NULL;
    PyObject *r = call2(name, (PyObject *)w, tensor, 0);
    Py_DECREF(w);
    return r;
}
#define PCT_BINARY_DUNDER_NC(fname, op, rname)                                     \
    static PyObject *fname(PyObject *a, PyObject *b)                               \
    {                                                                              \
        if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;                             \
        if (PCT_TENSOR_CHECK(a)) return call2(op, a, b, PCT_OPFUNC_METHOD);        \
        PCT_TF_REFLECTED(rname, b, a);                                             \
        return swap_call(op, b, a);                                                \
    }
#define PCT_INPLACE_DUNDER(fname, op)                                              \
    static PyObject *fname(PyObject *a, PyObject *b)                               \
    {                                                                              \
        if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;                             \
        return call2(op, a, b, 1);                                                 \
    }

PCT_BINARY_DUNDER(nb_add, "add", "add")
PCT_BINARY_DUNDER(nb_mul, "mul", "mul")
PCT_BINARY_DUNDER(nb_and, "bitwise_and", "bitwise_and")
PCT_BINARY_DUNDER(nb_or, "bitwise_or", "bitwise_or")
PCT_BINARY_DUNDER(nb_xor, "bitwise_xor", "bitwise_xor")
PCT_BINARY_DUNDER_NC(nb_sub, "sub", "__rsub__")
/* number / tensor is tensor.reciprocal() * number, as torch's Tensor.__rtruediv__ computes it (the rounding
 * differs from a division by up to 1 ulp, and the gradient flows through reciprocal and mul). */
static PyObject *nb_truediv(PyObject *a, PyObject *b)
{
    if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;
    if (PCT_TENSOR_CHECK(a)) return call2("div", a, b, PCT_OPFUNC_METHOD);
    PCT_TF_REFLECTED("__rtruediv__", b, a);
    PyObject *f = pct_opfunc_get("reciprocal", 0);
    if (!f) { PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: no op reciprocal"); return NULL; }
    PyObject *r = PyObject_Vectorcall(f, &b, 1, NULL);
    if (!r) return NULL;
    PyObject *res = call2("mul", r, a, 0);
    Py_DECREF(r);
    return res;
}
PCT_BINARY_DUNDER_NC(nb_floordiv, "floor_divide", "__rfloordiv__")
PCT_BINARY_DUNDER_NC(nb_mod, "remainder", "__rmod__")
PCT_BINARY_DUNDER_NC(nb_lshift, "bitwise_left_shift", "__rlshift__")
PCT_BINARY_DUNDER_NC(nb_rshift, "bitwise_right_shift", "__rrshift__")
PCT_INPLACE_DUNDER(nb_iadd, "add")
PCT_INPLACE_DUNDER(nb_isub, "sub")
PCT_INPLACE_DUNDER(nb_imul, "mul")
PCT_INPLACE_DUNDER(nb_itruediv, "div")
PCT_INPLACE_DUNDER(nb_ifloordiv, "floor_divide")
PCT_INPLACE_DUNDER(nb_imod, "remainder")
PCT_INPLACE_DUNDER(nb_iand, "bitwise_and")
PCT_INPLACE_DUNDER(nb_ior, "bitwise_or")
PCT_INPLACE_DUNDER(nb_ixor, "bitwise_xor")
PCT_INPLACE_DUNDER(nb_ilshift, "bitwise_left_shift")
PCT_INPLACE_DUNDER(nb_irshift, "bitwise_right_shift")

static PyObject *nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;
    if (PCT_TENSOR_CHECK(a)) return call2("pow", a, b, PCT_OPFUNC_METHOD);
    PCT_TF_REFLECTED("__rpow__", b, a);
    return swap_call("pow", b, a);
}
static PyObject *nb_ipower(PyObject *a, PyObject *b, PyObject *mod)
{
    (void)mod;
    if (!operands(a, b)) Py_RETURN_NOTIMPLEMENTED;
    return call2("pow", a, b, 1);
}
static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    PyObject *ab[2] = {a, b};
    if ((!PCT_TENSOR_CHECK(a) || !PCT_TENSOR_CHECK(b)) && !pct_tf_needed(ab, 2)) Py_RETURN_NOTIMPLEMENTED;
    if (!PCT_TENSOR_CHECK(a)) return pct_tf_dispatch_slot("__rmatmul__", (PyObject *[]){b, a}, 2);
    return call2("matmul", a, b, PCT_OPFUNC_METHOD);
}
static PyObject *call1(const char *name, PyObject *a)
{
    PyObject *f = pct_opfunc_get(name, PCT_OPFUNC_METHOD);
    if (!f) f = pct_opfunc_get(name, 0);
    if (!f) { PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: no op %s", name); return NULL; }
    return PyObject_Vectorcall(f, &a, 1, NULL);
}
static PyObject *nb_neg(PyObject *a) { return call1("neg", a); }
static PyObject *nb_abs(PyObject *a) { return call1("abs", a); }
static PyObject *nb_invert(PyObject *a)
{
    if (pct_tf_needed(&a, 1)) return pct_tf_dispatch_slot("__invert__", &a, 1);
    pct_tensor *t = (pct_tensor *)a;
    if (pct_dtype_is_floating(t->dtype)) {
        PyErr_SetString(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return NULL;
    }
    return call1("bitwise_not", a);
}
static PyObject *nb_pos(PyObject *a) { Py_INCREF(a); return a; }

/* Converting a one-element tensor to a Python number. */
static int single_value(pct_tensor *t, const char *what)
{
    if (t->numel != 1) {
        if (t->numel == 0)
            PyErr_Format(PyExc_RuntimeError, "%s of Tensor with no values is ambiguous", what);
        else
            PyErr_Format(PyExc_RuntimeError, "%s of Tensor with more than one value is ambiguous", what);
        return -1;
    }
    return 0;
}
/* torch reads a uint64 element for int(), __index__ and bool() as an int64: -1 with its error above INT64_MAX */
static int check_uint64_as_int64(const pct_tensor *t, const void *value)
{
    if (t->dtype != PCT_UINT64 || *(const uint64_t *)value <= (uint64_t)INT64_MAX) return 0;
    PyErr_SetString(PyExc_RuntimeError, "value cannot be converted to type int64_t without overflow");
    return -1;
}
/* Under torch.export's capture a tensor's value must not become a Python value (Note [Op trace hook]): the hook is
 * told and raises torch's data-dependent error. 0, or -1 with that error. */
static int traced_conversion(const char *name, PyObject *a)
{
    if (!pct_trace_begin()) return 0;
    PyObject *r = pct_trace_end(name, PyTuple_Pack(1, a), Py_NewRef(Py_None));
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}
static int nb_bool(PyObject *a)
{
    if (traced_conversion("__bool__", a) < 0) return -1;
    pct_tensor *t = (pct_tensor *)a;
    pct_element_buf buf;
    const void *v = single_value(t, "Boolean value") < 0 ? NULL : pct_element_ptr(t, &buf);
    if (!v || check_uint64_as_int64(t, v) < 0) return -1;
    if (pct_dtype_is_complex(t->dtype)) { /* true unless 0 + 0j, as torch's is_nonzero */
        double re, im;
        pct_load_as_complex(v, t->dtype, &re, &im);
        return re != 0 || im != 0;
    }
    return pct_load_as_double(v, t->dtype) != 0;
}
static PyObject *nb_float(PyObject *a)
{
    if (traced_conversion("__float__", a) < 0) return NULL;
    pct_tensor *t = (pct_tensor *)a;
    if (t->numel != 1) { PyErr_SetString(PyExc_TypeError, "only one element tensors can be converted to Python scalars"); return NULL; }
    pct_element_buf buf;
    const void *v = pct_element_ptr(t, &buf);
    return v ? PyFloat_FromDouble(pct_load_as_double(v, t->dtype)) : NULL;
}
static PyObject *nb_int(PyObject *a)
{
    if (traced_conversion("__int__", a) < 0) return NULL;
    pct_tensor *t = (pct_tensor *)a;
    if (t->numel != 1) { PyErr_SetString(PyExc_TypeError, "only one element tensors can be converted to Python scalars"); return NULL; }
    pct_element_buf buf;
    const void *v = pct_element_ptr(t, &buf);
    if (!v) return NULL;
    if (pct_dtype_is_floating(t->dtype)) return PyLong_FromDouble(pct_load_as_double(v, t->dtype));
    if (check_uint64_as_int64(t, v) < 0) return NULL;
    return PyLong_FromLongLong(pct_load_as_int64(v, t->dtype));
}
static PyObject *nb_index(PyObject *a)
{
    if (traced_conversion("__index__", a) < 0) return NULL;
    pct_tensor *t = (pct_tensor *)a;
    if (t->numel != 1 || pct_dtype_is_floating(t->dtype) || t->dtype == PCT_BOOL) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    pct_element_buf buf;
    const void *v = pct_element_ptr(t, &buf);
    if (!v || check_uint64_as_int64(t, v) < 0) return NULL;
    return PyLong_FromLongLong(pct_load_as_int64(v, t->dtype));
}

static PyNumberMethods tensor_as_number = {
    .nb_add = nb_add, .nb_subtract = nb_sub, .nb_multiply = nb_mul, .nb_remainder = nb_mod,
    .nb_power = nb_power, .nb_negative = nb_neg, .nb_positive = nb_pos, .nb_absolute = nb_abs,
    .nb_bool = nb_bool, .nb_invert = nb_invert, .nb_lshift = nb_lshift, .nb_rshift = nb_rshift,
    .nb_and = nb_and, .nb_xor = nb_xor, .nb_or = nb_or, .nb_int = nb_int, .nb_float = nb_float,
    .nb_inplace_add = nb_iadd, .nb_inplace_subtract = nb_isub, .nb_inplace_multiply = nb_imul,
    .nb_inplace_remainder = nb_imod, .nb_inplace_power = nb_ipower, .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift, .nb_inplace_and = nb_iand, .nb_inplace_xor = nb_ixor,
    .nb_inplace_or = nb_ior, .nb_floor_divide = nb_floordiv, .nb_true_divide = nb_truediv,
    .nb_inplace_floor_divide = nb_ifloordiv, .nb_inplace_true_divide = nb_itruediv,
    .nb_index = nb_index, .nb_matrix_multiply = nb_matmul,
};

static PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    static const char *const names[] = {"lt", "le", "eq", "ne", "gt", "ge"};
    if (!is_operand(a) || !is_operand(b)) {
        if (op == Py_EQ) Py_RETURN_FALSE;
        if (op == Py_NE) Py_RETURN_TRUE;
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (PCT_TENSOR_CHECK(a)) return call2(names[op], a, b, PCT_OPFUNC_METHOD);
    /* reflected: x < t  is  t > x */
    static const int swapped[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
    return call2(names[swapped[op]], b, a, PCT_OPFUNC_METHOD);
}

/* ---- sequence-like behaviour ---- */

static Py_ssize_t tensor_len(PyObject *self)
{
    pct_tensor *t = (pct_tensor *)self;
    /* torch.compile's capture must see len() of a tensor whose length depends on data (Note [Compile capture]) */
    if (traced_conversion("__len__", self) < 0) return -1;
    if (t->ndim == 0) { PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor"); return -1; }
    return (Py_ssize_t)t->sizes[0];
}

static PyObject *tensor_iter(PyObject *self)
{
    pct_tensor *t = (pct_tensor *)self;
    if (t->ndim == 0) { PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor"); return NULL; }
    PyObject *f = pct_opfunc_get("unbind", 0);
    if (!f) return NULL;
    PyObject *parts = PyObject_Vectorcall(f, &self, 1, NULL);
    if (!parts) return NULL;
    PyObject *it = PyObject_GetIter(parts);
    Py_DECREF(parts);
    return it;
}

/* indexing reports to torch.export's capture (Note [Op trace hook]), which records it as the table's view ops */
static PyObject *traced_getitem(PyObject *self, PyObject *key)
{
    PyObject *tf_args[2] = {self, key};
    if (pct_tf_needed(tf_args, 2)) return pct_tf_dispatch_slot("__getitem__", tf_args, 2);
    if (!pct_trace_begin()) return pct_tensor_getitem(self, key);
    PyObject *r = pct_tensor_getitem(self, key);
    return pct_trace_end("__getitem__", PyTuple_Pack(2, self, key), r);
}
static int traced_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    PyObject *tf_args[3] = {self, key, value};
    if (value && pct_tf_needed(tf_args, 3)) {
        PyObject *r = pct_tf_dispatch_slot("__setitem__", tf_args, 3);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    if (!value || !pct_trace_begin()) return pct_tensor_setitem(self, key, value);
    int rc = pct_tensor_setitem(self, key, value);
    PyObject *r = pct_trace_end("__setitem__", PyTuple_Pack(3, self, key, value), rc < 0 ? NULL : Py_NewRef(Py_None));
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

static PyMappingMethods tensor_as_mapping = {
    .mp_length = tensor_len,
    .mp_subscript = traced_getitem,
    .mp_ass_subscript = traced_setitem,
};

static PySequenceMethods tensor_as_sequence = {
    .sq_length = tensor_len,
};

/* ---- buffer protocol (CPU tensors; zero-copy to memoryview / numpy) ---- */

static const char *buffer_format(int dtype)
{
    switch (dtype) {
    case PCT_BOOL: return "?";
    case PCT_UINT8: return "B";
    case PCT_INT8: return "b";
    case PCT_INT16: return "h";
    case PCT_INT32: return "i";
    case PCT_INT64: return "q";
    case PCT_FLOAT16: return "e";
    case PCT_FLOAT32: return "f";
    case PCT_FLOAT64: return "d";
    case PCT_UINT16: return "H";
    case PCT_UINT32: return "I";
    case PCT_UINT64: return "Q";
    case PCT_COMPLEX64: return "Zf";
    case PCT_COMPLEX128: return "Zd";
    default: return NULL; /* bfloat16 has no struct format */
    }
}

/* The export holds a reference to the storage and counts itself on it, so the memory
 * stays put while the view lives (set_ may rebind the tensor, resize_ refuses to move it). */
typedef struct tensor_export {
    pct_storage *storage;
    Py_ssize_t shape_strides[];
} tensor_export;

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    pct_tensor *t = (pct_tensor *)self;
    const char *fmt = buffer_format(t->dtype);
    if (t->device_type != PCT_CPU || !fmt) {
        PyErr_Format(PyExc_BufferError, "tensors of dtype %s on this device do not export a buffer", pct_dtype_name[t->dtype]);
        return -1;
    }
    if (pct_tensor_requires_grad(t)) { /* np.asarray(t) reads the buffer first: refuse it as .numpy() does */
        PyErr_SetString(PyExc_RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                            "instead.");
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && t->storage->readonly) {
        PyErr_SetString(PyExc_BufferError, "tensor memory is read-only");
        return -1;
    }
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !pct_tensor_is_contiguous(t)) {
        PyErr_SetString(PyExc_BufferError, "tensor is not C-contiguous");
        return -1;
    }
    tensor_export *ex = PyMem_Malloc(sizeof(tensor_export) + sizeof(Py_ssize_t) * 2 * (size_t)(t->ndim ? t->ndim : 1));
    if (!ex) { PyErr_NoMemory(); return -1; }
    Py_ssize_t *shape_strides = ex->shape_strides;
    int64_t item = pct_tensor_itemsize(t);
    for (int i = 0; i < t->ndim; i++) {
        shape_strides[i] = (Py_ssize_t)t->sizes[i];
        shape_strides[t->ndim + i] = (Py_ssize_t)(t->strides[i] * item);
    }
    ex->storage = t->storage;
    pct_storage_incref(ex->storage);
    atomic_fetch_add(&ex->storage->exports, 1);
    view->buf = pct_tensor_data(t);
    view->obj = self;
    Py_INCREF(self);
    view->len = (Py_ssize_t)(t->numel * item);
    view->readonly = t->storage->readonly;
    view->itemsize = (Py_ssize_t)item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
    view->ndim = t->ndim;
    view->shape = shape_strides;
    view->strides = shape_strides + t->ndim;
    view->suboffsets = NULL;
    view->internal = ex;
    return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    tensor_export *ex = view->internal;
    atomic_fetch_sub(&ex->storage->exports, 1);
    pct_storage_decref(ex->storage);
    PyMem_Free(ex);
}

static PyBufferProcs tensor_as_buffer = {tensor_getbuffer, tensor_releasebuffer};

static Py_hash_t tensor_hash(PyObject *self) { return _Py_HashPointer(self); }

PyTypeObject pct_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch.Tensor",
    .tp_basicsize = sizeof(pct_tensor),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_as_number = &tensor_as_number,
    .tp_as_sequence = &tensor_as_sequence,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_hash = tensor_hash,
    .tp_str = tensor_repr,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A multi-dimensional array of one dtype on one device (pyctorch.Tensor mirrors torch.Tensor).",
    .tp_traverse = (traverseproc)tensor_traverse,
    .tp_clear = (inquiry)tensor_clear,
    .tp_richcompare = tensor_richcompare,
    .tp_weaklistoffset = offsetof(pct_tensor, weakrefs),
    .tp_iter = tensor_iter,
    .tp_methods = NULL,  /* set in module init: pct_tensor_methods */
    .tp_getset = NULL,   /* set in module init: pct_tensor_getset */
    .tp_dictoffset = offsetof(pct_tensor, dict),
    .tp_new = tensor_new,
};
