/* tensor_new.c: torch.tensor / as_tensor from Python data (nested sequences,
 * scalars, tensors, NumPy arrays), and the way back: item() and tolist(). */
#include "pyobjects.h"
#include "../aten/error.h"
#include "../aten/iter.h"

enum { KIND_NONE = -1 };

/* Shape and dtype of nested data. dtype accumulates with torch's inference: bool < int64 < default float. */
static int infer(PyObject *o, int depth, int64_t *shape, int *ndim, int *dtype)
{
    if (PCT_TENSOR_CHECK(o)) {
        pct_tensor *t = (pct_tensor *)o;
        if (depth + t->ndim > PCT_MAX_DIMS) {
            PyErr_Format(PyExc_RuntimeError, "pyctorch supports at most %d dimensions, got %d", PCT_MAX_DIMS, depth + t->ndim);
            return -1;
        }
        for (int i = 0; i < t->ndim; i++) shape[depth + i] = t->sizes[i];
        *ndim = depth + t->ndim;
        *dtype = pct_promote_types_or_raise(*dtype == KIND_NONE ? PCT_DTYPE_UNDEFINED : *dtype, t->dtype);
        return *dtype < 0 ? -1 : 0;
    }
    /* a scalar's own dtype (a NumPy scalar keeps its dtype: np.float64 before float, of which it
     * is a subclass), promoted with the others' as torch does */
    int scalar_dtype = pct_numpy_scalar_dtype(o);
    if (scalar_dtype < 0)
        scalar_dtype = PyBool_Check(o) ? PCT_BOOL : PyLong_Check(o) ? PCT_INT64 : PyFloat_Check(o) ? pct_default_dtype
                     : PyComplex_Check(o) ? pct_dtype_to_complex(pct_default_dtype) : -1;
    if (scalar_dtype >= 0) {
        *ndim = depth;
        *dtype = *dtype == KIND_NONE ? scalar_dtype : pct_promote_types_or_raise(*dtype, scalar_dtype);
        return *dtype < 0 ? -1 : 0;
    }
    if (PyUnicode_Check(o) || PyBytes_Check(o) || !PySequence_Check(o)) {
        pct_scalar s;
        if (pct_scalar_from_object(o, &s) == 0) {
            *ndim = depth;
            int d = s.kind == PCT_SCALAR_FLOAT ? pct_default_dtype : s.kind == PCT_SCALAR_INT ? PCT_INT64 : PCT_BOOL;
            *dtype = *dtype == KIND_NONE ? d : pct_promote_types_or_raise(*dtype, d);
            return *dtype < 0 ? -1 : 0;
        }
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (depth >= PCT_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "pyctorch supports at most %d dimensions, got more", PCT_MAX_DIMS);
        return -1;
    }
    Py_ssize_t n = PySequence_Length(o);
    if (n < 0) return -1;
    shape[depth] = n;
    if (n == 0) {
        *ndim = depth + 1;
        return 0;
    }
    int sub_ndim = -1;
    int64_t sub_shape[PCT_MAX_DIMS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(o, i);
        if (!item) return -1;
        int nd;
        int r = infer(item, depth + 1, sub_shape, &nd, dtype);
        Py_DECREF(item);
        if (r < 0) return -1;
        if (i == 0) {
            sub_ndim = nd;
            memcpy(shape + depth + 1, sub_shape + depth + 1, sizeof(int64_t) * (size_t)(nd - depth - 1));
        } else if (nd != sub_ndim || memcmp(shape + depth + 1, sub_shape + depth + 1, sizeof(int64_t) * (size_t)(nd - depth - 1)) != 0) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %lld)",
                         (long long)(depth + 1 < sub_ndim ? shape[depth + 1] : 0), depth + 1,
                         (long long)(depth + 1 < nd ? sub_shape[depth + 1] : 0));
            return -1;
        }
    }
    *ndim = sub_ndim;
    return 0;
}

/* torch range-checks a Python number stored into an integral tensor (a float one takes it rounded, inf beyond). */
static int check_int_value(const pct_scalar *s, int dtype)
{
    if (!pct_dtype_is_integral(dtype, false) || pct_scalar_check_fits(s, dtype) == 0) return 0;
    PyErr_Clear();
    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", pct_dtype_name[dtype]);
    return -1;
}

/* A tensor inside a list given an integral dtype: torch takes its elements as Python ints (__index__), so a
 * floating one is a TypeError and each value is range-checked. */
static int check_tensor_values(pct_tensor *src, int dtype)
{
    if (!pct_dtype_is_integral(dtype, false) || src->dtype == dtype) return 0;
    if (pct_dtype_is_floating(src->dtype)) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return -1;
    }
    pct_tensor *h = pct_host_values(src);
    pct_tensor *v = h ? pct_to_dtype(h, PCT_INT64, false) : NULL;
    Py_XDECREF(h);
    pct_tensor *cont = v ? pct_contiguous(v) : NULL;
    Py_XDECREF(v);
    if (!cont) return -1;
    const int64_t *x = (const int64_t *)pct_tensor_data(cont);
    int rc = 0;
    for (int64_t k = 0; k < cont->numel && rc == 0; k++) {
        pct_scalar s = {PCT_SCALAR_INT, x[k], (double)x[k], 0, 0};
        rc = check_int_value(&s, dtype);
    }
    Py_DECREF(cont);
    return rc;
}

/* Writes the values of o into *p (dtype), advancing *p. */
static int fill(PyObject *o, char **p, int dtype, int item)
{
    if (dtype == PCT_UINT64 && (PyFloat_Check(o) || (PyLong_Check(o) && !PyBool_Check(o)))) {
        /* torch reads uint64 data as C unsigned long long: Python's own errors for floats, negative or huge ints */
        if (PyFloat_Check(o)) { PyErr_SetString(PyExc_TypeError, "an integer is required"); return -1; }
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        memcpy(*p, &u, sizeof u);
        *p += item;
        return 0;
    }
    if (PyComplex_Check(o) || (pct_dtype_is_complex(dtype) && pct_dtype_is_complex(pct_numpy_scalar_dtype(o)))) {
        /* torch reads a complex number into a real tensor as C++ would: an error, except into bool */
        Py_complex z = PyComplex_AsCComplex(o);
        if (z.real == -1.0 && PyErr_Occurred()) return -1;
        if (pct_dtype_is_integral(dtype, false)) { PyErr_SetString(PyExc_TypeError, "'complex' object cannot be interpreted as an integer"); return -1; }
        if (pct_dtype_is_floating(dtype)) { PyErr_SetString(PyExc_TypeError, "must be real number, not complex"); return -1; }
        if (dtype == PCT_BOOL) z.real = z.real != 0 || z.imag != 0;
        pct_store_complex(*p, dtype, z.real, z.imag);
        *p += item;
        return 0;
    }
    if (PyFloat_Check(o)) {
        pct_scalar s = {PCT_SCALAR_FLOAT, 0, PyFloat_AS_DOUBLE(o), 0, 0};
        if (check_int_value(&s, dtype) < 0) return -1;
        pct_store_double(*p, dtype, s.d);
        *p += item;
        return 0;
    }
    if (PyLong_Check(o)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow && pct_dtype_is_floating(dtype)) { /* a float tensor takes a huge int as its float value */
            double d = PyLong_AsDouble(o);
            if (d == -1.0 && PyErr_Occurred()) return -1;
            pct_store_double(*p, dtype, d);
            *p += item;
            return 0;
        }
        if (overflow) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return -1; }
        pct_scalar s = {PyBool_Check(o) ? PCT_SCALAR_BOOL : PCT_SCALAR_INT, v, (double)v, 0, 0};
        if (check_int_value(&s, dtype) < 0) return -1;
        if (pct_dtype_is_floating(dtype) || pct_dtype_is_complex(dtype)) pct_store_double(*p, dtype, (double)v);
        else pct_store_int64(*p, dtype, v);
        *p += item;
        return 0;
    }
    if (!PySequence_Check(o) || PyUnicode_Check(o)) {
        pct_scalar s;
        if (pct_scalar_from_object(o, &s) < 0) { PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name); return -1; }
        if (check_int_value(&s, dtype) < 0) return -1;
        if (s.kind == PCT_SCALAR_COMPLEX || pct_dtype_is_complex(dtype)) pct_store_complex(*p, dtype, s.d, s.im);
        else if (s.kind == PCT_SCALAR_FLOAT || pct_dtype_is_floating(dtype)) pct_store_double(*p, dtype, s.d);
        else pct_store_int64(*p, dtype, s.i);
        *p += item;
        return 0;
    }
    Py_ssize_t n = PySequence_Length(o);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_GetItem(o, i);
        if (!x) return -1;
        int r;
        if (PCT_TENSOR_CHECK(x)) {
            /* a tensor inside a list: convert and copy its values */
            pct_tensor *src = pct_host_values((pct_tensor *)x);
            pct_tensor *conv = !src || check_tensor_values(src, dtype) < 0 ? NULL : pct_to_dtype(src, dtype, false);
            Py_XDECREF(src);
            pct_tensor *cont = conv ? pct_contiguous(conv) : NULL;
            Py_XDECREF(conv);
            if (cont) {
                memcpy(*p, pct_tensor_data(cont), (size_t)(cont->numel * item));
                *p += cont->numel * item;
                Py_DECREF(cont);
                r = 0;
            } else {
                r = -1;
            }
        } else {
            r = fill(x, p, dtype, item);
        }
        Py_DECREF(x);
        if (r < 0) return -1;
    }
    return 0;
}

PyObject *pct_tensor_from_data(PyObject *data, int dtype, bool copy_always)
{
    (void)copy_always;
    if (PCT_TENSOR_CHECK(data)) {
        pct_tensor *t = (pct_tensor *)data;
        return (PyObject *)pct_to_dtype(t, dtype < 0 ? t->dtype : dtype, true);
    }
    if (pct_numpy_is_array(data)) {
        PyObject *t = pct_from_numpy_impl(data, true);
        if (!t || dtype < 0 || ((pct_tensor *)t)->dtype == dtype) return t;
        PyObject *r = (PyObject *)pct_to_dtype((pct_tensor *)t, dtype, false);
        Py_DECREF(t);
        return r;
    }
    int64_t shape[PCT_MAX_DIMS];
    int ndim = 0, inferred = KIND_NONE;
    if (infer(data, 0, shape, &ndim, &inferred) < 0) return NULL;
    if (inferred == KIND_NONE) inferred = pct_default_dtype; /* empty lists */
    int target = dtype < 0 ? inferred : dtype;
    pct_tensor *t = pct_tensor_empty(ndim, shape, target, PCT_CPU, -1);
    if (!t) return NULL;
    char *p = t->storage->data;
    if (fill(data, &p, target, pct_dtype_itemsize[target]) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

/* Applies dtype/device/requires_grad keywords shared by tensor() and as_tensor(). */
static PyObject *finish_new(PyObject *t, PyObject *device, int requires_grad)
{
    if (!t) return NULL;
    int8_t type = pct_default_device.type, index = pct_default_device.index;
    if (device && device != Py_None && pct_device_from_object(device, &type, &index) < 0) { Py_DECREF(t); return NULL; }
    if (type != PCT_CPU) { /* made on the CPU, then moved (to(device)); a meta tensor is its meta twin */
        PyObject *where = pct_device_new(type, index);
        PyObject *m = where ? PyObject_CallMethod(t, "to", "O", where) : NULL;
        Py_XDECREF(where);
        Py_DECREF(t);
        if (!m) return NULL;
        t = m;
    }
    if (requires_grad) {
        pct_tensor *x = (pct_tensor *)t;
        if (!pct_dtype_is_differentiable(x->dtype)) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        x->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return t;
}

PyObject *pct_py_tensor(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "dtype", "device", "requires_grad", "pin_memory", NULL};
    PyObject *data, *dtype_obj = Py_None, *device = Py_None;
    int requires_grad = 0, pin = 0;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOpp:tensor", kwlist, &data, &dtype_obj, &device, &requires_grad, &pin))
        return NULL;
    int dtype = -1;
    if (dtype_obj != Py_None && (dtype = pct_dtype_from_object(dtype_obj)) < 0) return NULL;
    if (PCT_TENSOR_CHECK(data)) {
        /* torch warns here and copies; a detached copy */
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                         "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).", 1) < 0)
            return NULL;
    }
    return finish_new(pct_tensor_from_data(data, dtype, true), device, requires_grad);
}

PyObject *pct_py_as_tensor(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "dtype", "device", NULL};
    PyObject *data, *dtype_obj = Py_None, *device = Py_None;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:as_tensor", kwlist, &data, &dtype_obj, &device)) return NULL;
    int dtype = -1;
    if (dtype_obj != Py_None && (dtype = pct_dtype_from_object(dtype_obj)) < 0) return NULL;
    if (PCT_TENSOR_CHECK(data)) {
        pct_tensor *t = (pct_tensor *)data;
        return finish_new((PyObject *)pct_to_dtype(t, dtype < 0 ? t->dtype : dtype, false), device, 0);
    }
    if (pct_numpy_is_array(data)) {
        PyObject *t = pct_from_numpy_impl(data, false); /* shares memory, as torch does */
        if (!t || dtype < 0 || ((pct_tensor *)t)->dtype == dtype) return finish_new(t, device, 0);
        PyObject *r = (PyObject *)pct_to_dtype((pct_tensor *)t, dtype, false);
        Py_DECREF(t);
        return finish_new(r, device, 0);
    }
    return finish_new(pct_tensor_from_data(data, dtype, false), device, 0);
}

/* ---- back to Python ---- */

PyObject *pct_scalar_to_python(const void *p, int dtype)
{
    if (dtype == PCT_BOOL) return PyBool_FromLong(*(const uint8_t *)p != 0); /* any nonzero byte is True */
    if (pct_dtype_is_floating(dtype)) return PyFloat_FromDouble(pct_load_as_double(p, dtype));
    if (pct_dtype_is_complex(dtype)) {
        double re, im;
        pct_load_as_complex(p, dtype, &re, &im);
        return PyComplex_FromDoubles(re, im);
    }
    if (dtype == PCT_UINT64) return PyLong_FromUnsignedLongLong(*(const uint64_t *)p);
    return PyLong_FromLongLong(pct_load_as_int64(p, dtype));
}

PyObject *pct_tensor_item(PyObject *self, PyObject *unused)
{
    (void)unused;
    pct_tensor *t = (pct_tensor *)self;
    if (t->numel != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar", (long long)t->numel);
        return NULL;
    }
    pct_element_buf buf;
    const void *v = pct_element_ptr(t, &buf);
    return v ? pct_scalar_to_python(v, t->dtype) : NULL;
}

static PyObject *tolist_rec(const pct_tensor *t, int dim, const char *p)
{
    if (dim == t->ndim) return pct_scalar_to_python(p, t->dtype);
    int64_t n = t->sizes[dim], step = t->strides[dim] * pct_dtype_itemsize[t->dtype];
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        PyObject *x = tolist_rec(t, dim + 1, p + i * step);
        if (!x) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, (Py_ssize_t)i, x);
    }
    return list;
}

PyObject *pct_tensor_tolist(PyObject *self, PyObject *unused)
{
    (void)unused;
    pct_tensor *t = pct_host_values((pct_tensor *)self);
    if (!t) return NULL;
    PyObject *r = tolist_rec(t, 0, pct_tensor_data(t));
    Py_DECREF(t);
    return r;
}
