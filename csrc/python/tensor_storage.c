/* tensor_storage.c: tensors over memory given by the caller: Tensor.set_ (rebind a tensor
 * to a storage with an offset, sizes and strides) and torch.frombuffer (a 1-D tensor over
 * any Python buffer, sharing its memory). Serialization rebuilds every saved view with
 * set_, so every size, stride and offset is checked against the storage here, with
 * overflow-safe arithmetic: they come from files. */
#include "pyobjects.h"
#include "../autograd/autograd.h"
#include "../aten/error.h"
#include "../aten/op.h"
#include "../aten/cpu/factory.h"

#define T(o) ((pct_tensor *)(o))

/* A sequence of ints into out[]; returns its length or -1 with an exception. */
static int int_list_of(PyObject *o, const char *fn, const char *what, int64_t *out)
{
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a tuple of ints, not %s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PCT_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_RuntimeError, "pyctorch supports at most %d dimensions, got %zd", PCT_MAX_DIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        long long v = -1;
        PyObject *idx = PyNumber_Index(item);
        if (idx) { v = PyLong_AsLongLong(idx); Py_DECREF(idx); }
        if (!idx || (v == -1 && PyErr_Occurred())) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be a tuple of ints, but found element of type %s at pos %zd",
                         fn, what, Py_TYPE(item)->tp_name, i);
            return -1;
        }
        out[i] = v;
    }
    Py_DECREF(seq);
    return (int)n;
}

static int int_list(PyObject *o, const char *what, int64_t *out) { return int_list_of(o, "set_", what, out); }

/* The memory_format keyword of resize_ / resize_as_: a PCT_MF_* code (contiguous for None), or -1 with torch's error. */
static int resize_format(PyObject *mf)
{
    if (!mf || mf == Py_None) return PCT_MF_CONTIGUOUS;
    PyObject *name = PyObject_GetAttrString(mf, "_name");
    int code = -1;
    if (name && PyUnicode_Check(name)) {
        if (PyUnicode_CompareWithASCIIString(name, "contiguous_format") == 0) code = PCT_MF_CONTIGUOUS;
        else if (PyUnicode_CompareWithASCIIString(name, "channels_last") == 0) code = PCT_MF_CHANNELS_LAST;
        else if (PyUnicode_CompareWithASCIIString(name, "channels_last_3d") == 0) code = PCT_MF_CHANNELS_LAST_3D;
        else if (PyUnicode_CompareWithASCIIString(name, "preserve_format") == 0) code = PCT_MF_PRESERVE;
    }
    Py_XDECREF(name);
    PyErr_Clear();
    if (code == PCT_MF_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "Unsupported memory formatPreserve"); /* torch's text, space and all */
        return -1;
    }
    if (code < 0) PyErr_Format(PyExc_TypeError, "resize_(): argument 'memory_format' must be torch.memory_format, not %s",
                               Py_TYPE(mf)->tp_name);
    return code;
}

/* Shared by resize_ and resize_as_: torch's checks, then pct_tensor_resize_ (contiguous strides over the same
 * storage, grown with its contents kept when too small), the strides of memory format mf over the same elements
 * (torch's empty_tensor_restride), and a version bump. */
static PyObject *resize_to(pct_tensor *t, int ndim, const int64_t *sizes, int mf)
{
    if (pct_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "cannot resize variables that require grad");
        return NULL;
    }
    int64_t strides[PCT_MAX_DIMS];
    if (ndim <= PCT_MAX_DIMS && mf != PCT_MF_CONTIGUOUS && pct_format_strides(mf, ndim, sizes, strides) < 0) return NULL;
    if (pct_tensor_resize_(t, ndim, sizes) < 0) return NULL;
    if (mf != PCT_MF_CONTIGUOUS && pct_tensor_set_shape(t, ndim, sizes, strides) < 0) return NULL;
    pct_tensor_bump_version(t);
    Py_INCREF(t);
    return (PyObject *)t;
}

PyObject *pct_tensor_resize_method(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"memory_format", NULL};
    PyObject *mf = NULL, *empty = PyTuple_New(0);
    if (!empty) return NULL;
    int ok = PyArg_ParseTupleAndKeywords(empty, kw, "|$O:resize_", kwlist, &mf);
    Py_DECREF(empty);
    int format = ok ? resize_format(mf) : -1;
    if (format < 0) return NULL;
    int64_t sizes[PCT_MAX_DIMS];
    /* resize_(2, 3) or resize_((2, 3)) / resize_(torch.Size) */
    PyObject *list = PyTuple_GET_SIZE(args) == 1 && PySequence_Check(PyTuple_GET_ITEM(args, 0))
                     && !PCT_TENSOR_CHECK(PyTuple_GET_ITEM(args, 0)) ? PyTuple_GET_ITEM(args, 0) : args;
    int ndim = int_list_of(list, "resize_", "size", sizes);
    if (ndim < 0) return NULL;
    return resize_to(T(self), ndim, sizes, format);
}

PyObject *pct_tensor_resize_as_method(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"the_template", "memory_format", NULL};
    PyObject *other = NULL, *mf = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:resize_as_", kwlist, &other, &mf)) return NULL;
    if (!PCT_TENSOR_CHECK(other)) {
        PyErr_Format(PyExc_TypeError, "resize_as_(): argument 'the_template' (position 1) must be Tensor, not %s",
                     Py_TYPE(other)->tp_name);
        return NULL;
    }
    int format = resize_format(mf);
    if (format < 0) return NULL;
    return resize_to(T(self), T(other)->ndim, T(other)->sizes, format);
}

/* Bytes a view needs: (offset + sum((size-1)*stride) + 1) * itemsize, 0 when empty;
 * -1 with RuntimeError on negative values or overflow. */
static int64_t view_extent(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, int64_t item)
{
    char b1[PCT_SHAPE_BUF];
    if (offset < 0) PCT_FAIL(PCT_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        PCT_CHECK(sizes[i] >= 0, PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                  (long long)sizes[i], pct_shape_str(b1, sizeof b1, ndim, sizes));
        PCT_CHECK(strides[i] >= 0, PCT_ERR_RUNTIME, "set_: negative strides are not supported, got %s",
                  pct_shape_str(b1, sizeof b1, ndim, strides));
        if (sizes[i] == 0) empty = true;
    }
    if (empty) return 0;
    return pct_strided_nbytes(ndim, sizes, strides, offset, item);
fail:
    return -1;
}

/* Tensor.set_(), set_(source: Tensor), set_(source: UntypedStorage, storage_offset=0, size=None, stride=None) */
PyObject *pct_tensor_set_(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"source", "storage_offset", "size", "stride", NULL};
    PyObject *source = NULL, *offset_o = NULL, *size_o = NULL, *stride_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOO:set_", kwlist, &source, &offset_o, &size_o, &stride_o)) return NULL;
    pct_tensor *t = T(self);
    pct_storage *st = NULL; /* owned reference while we work */
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS], offset = 0, item = pct_tensor_itemsize(t);
    int ndim = 1;
    if (pct_tensor_requires_grad(t) && pct_grad_enabled) {
        PCT_CHECK(t->grad_fn != NULL, PCT_ERR_RUNTIME, "a leaf Variable that requires grad is being used in an in-place operation.");
        PCT_FAIL(PCT_ERR_RUNTIME, "set_: pyctorch does not record set_ on a tensor that requires grad; use it under no_grad() or on a detached tensor");
    }
    /* set_() empties the tensor; an explicit None matches none of torch's overloads */
    PCT_CHECK(source != Py_None, PCT_ERR_TYPE,
              "set_() received an invalid combination of arguments - got (NoneType), but expected one of:\n * ()\n"
              " * (torch.Storage source)\n * (torch.Storage source, int storage_offset, tuple of ints size, tuple of "
              "ints stride = None)\n * (Tensor source)\n * (Tensor source, int storage_offset, tuple of ints size, "
              "tuple of ints stride = None)\n");
    if (!source) {
        PCT_CHECK(!offset_o && !size_o && !stride_o, PCT_ERR_TYPE, "set_(): storage_offset, size and stride need a source storage");
        PCT_TRY(st = pct_storage_new_cpu(0));
        sizes[0] = 0;
        strides[0] = 1;
    } else if (PCT_TENSOR_CHECK(source)) {
        pct_tensor *src = T(source);
        PCT_CHECK(!offset_o && !size_o && !stride_o, PCT_ERR_TYPE, "set_(): set_(source: Tensor) takes no other argument");
        PCT_CHECK(src->dtype == t->dtype, PCT_ERR_RUNTIME, "Could not set tensor of type %s to a tensor of type %s",
                  pct_dtype_name[t->dtype], pct_dtype_name[src->dtype]);
        st = src->storage;
        pct_storage_incref(st);
        ndim = src->ndim;
        offset = src->offset;
        if (ndim) {
            memcpy(sizes, src->sizes, sizeof(int64_t) * (size_t)ndim);
            memcpy(strides, src->strides, sizeof(int64_t) * (size_t)ndim);
        }
    } else if (pct_storage_from_object(source)) {
        st = pct_storage_from_object(source);
        pct_storage_incref(st);
        if (offset_o) {
            PyObject *idx = PyNumber_Index(offset_o);
            if (idx) { offset = PyLong_AsLongLong(idx); Py_DECREF(idx); }
            if (!idx || (offset == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                PCT_FAIL(PCT_ERR_TYPE, "set_(): argument 'storage_offset' must be int, not %s", Py_TYPE(offset_o)->tp_name);
            }
        }
        if (size_o && size_o != Py_None) {
            PCT_TRY_INT(ndim = int_list(size_o, "size", sizes));
            if (stride_o && stride_o != Py_None) {
                int n;
                PCT_TRY_INT(n = int_list(stride_o, "stride", strides));
                /* torch: an empty stride list means contiguous */
                if (n == 0 && ndim > 0) pct_contiguous_strides(ndim, sizes, strides);
                else PCT_CHECK(n == ndim, PCT_ERR_RUNTIME, "mismatch in length of strides and shape");
            } else {
                pct_contiguous_strides(ndim, sizes, strides);
            }
        } else {
            PCT_CHECK(!offset_o && (!stride_o || stride_o == Py_None), PCT_ERR_TYPE,
                      "set_(): storage_offset and stride need a size");
            sizes[0] = (int64_t)(st->nbytes / (size_t)item);
            strides[0] = 1;
        }
    } else {
        PCT_FAIL(PCT_ERR_TYPE, "set_(): argument 'source' must be Tensor or UntypedStorage, not %s", Py_TYPE(source)->tp_name);
    }
    PCT_CHECK(st->device_type == t->device_type, PCT_ERR_RUNTIME, "Expected a storage on the tensor's device");
    int64_t need = view_extent(ndim, sizes, strides, offset, item);
    PCT_TRY_INT(need);
    if ((uint64_t)need > (uint64_t)st->nbytes) {
        char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
        PCT_FAIL(PCT_ERR_RUNTIME, "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld requiring a storage "
                 "size of %lld are out of bounds for storage of size %zu", pct_shape_str(b1, sizeof b1, ndim, sizes),
                 pct_shape_str(b2, sizeof b2, ndim, strides), (long long)offset, (long long)item, (long long)need, st->nbytes);
    }
    /* set_shape fails (memory) before changing anything; after it nothing can fail */
    PCT_TRY_INT(pct_tensor_set_shape(t, ndim, sizes, strides));
    pct_storage *old = t->storage;
    t->storage = st; /* takes our reference */
    pct_storage_decref(old);
    t->offset = offset;
    t->device_type = st->device_type;
    t->device_index = st->device_index;
    Py_CLEAR(t->base); /* no longer a view of its old base */
    pct_tensor_bump_version(t);
    Py_INCREF(self);
    return self;
fail:
    pct_storage_decref(st);
    return NULL;
}

/* ---- torch.frombuffer ---- */

static void release_buffer_capsule(PyObject *cap)
{
    Py_buffer *view = PyCapsule_GetPointer(cap, "pyctorch.buffer");
    if (!view) { PyErr_Clear(); return; }
    PyBuffer_Release(view);
    PyMem_Free(view);
}

/* frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) */
PyObject *pct_py_frombuffer(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"buffer", "dtype", "count", "offset", "requires_grad", NULL};
    static int warned_readonly = 0;
    PyObject *buffer, *dtype_o = NULL, *owner = NULL;
    long long count = -1, offset = 0;
    int requires_grad = 0;
    Py_buffer *view = NULL;
    pct_storage *st = NULL;
    (void)m;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$OLLp:frombuffer", kwlist, &buffer, &dtype_o, &count, &offset, &requires_grad))
        return NULL;
    PCT_CHECK(dtype_o, PCT_ERR_TYPE, "frombuffer() missing required keyword argument 'dtype'");
    int dtype = pct_dtype_from_object(dtype_o);
    PCT_TRY_INT(dtype);
    PCT_CHECK(PyObject_CheckBuffer(buffer), PCT_ERR_VALUE, "object does not implement Python buffer protocol.");
    view = PyMem_Calloc(1, sizeof *view);
    if (!view) { PyErr_NoMemory(); goto fail; }
    int readonly = 0;
    if (PyObject_GetBuffer(buffer, view, PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        readonly = 1;
        if (PyObject_GetBuffer(buffer, view, PyBUF_SIMPLE) < 0) {
            PyErr_Clear();
            PyMem_Free(view);
            view = NULL;
            PCT_FAIL(PCT_ERR_RUNTIME, "could not retrieve buffer from object");
        }
    }
    /* from here the capsule owns the export and releases it when the storage dies */
    owner = PyCapsule_New(view, "pyctorch.buffer", release_buffer_capsule);
    if (!owner) { PyBuffer_Release(view); PyMem_Free(view); view = NULL; goto fail; }
    Py_ssize_t len = view->len;
    long long item = pct_dtype_itemsize[dtype];
    PCT_CHECK(len > 0 && count != 0, PCT_ERR_VALUE, "both buffer length (%zd) and count (%lld) must not be 0", len, count);
    PCT_CHECK(offset >= 0 && offset < len, PCT_ERR_VALUE,
              "offset (%lld bytes) must be non-negative and no greater than buffer length (%zd bytes) minus 1", offset, len);
    if (count < 0) {
        PCT_CHECK((len - offset) % item == 0, PCT_ERR_VALUE,
                  "buffer length (%lld bytes) after offset (%lld bytes) must be a multiple of element size (%lld)",
                  (long long)(len - offset), offset, item);
        count = (len - offset) / item;
    } else {
        PCT_CHECK(count <= (len - offset) / item, PCT_ERR_VALUE,
                  "requested buffer length (%lld * %lld bytes) after offset (%lld bytes) must not be greater than actual buffer "
                  "length (%zd bytes)", count, item, offset, len);
    }
    if (readonly && !warned_readonly) {
        warned_readonly = 1;
        if (PyErr_WarnEx(PyExc_UserWarning,
                         "The given buffer is not writable, and PyTorch does not support non-writable tensors. This means you "
                         "can write to the underlying (supposedly non-writable) buffer using the tensor. You may want to copy "
                         "the buffer to protect its data or make it writable before converting it to a tensor. This type of "
                         "warning will be suppressed for the rest of this program.", 1) < 0)
            goto fail;
    }
    PCT_TRY(st = pct_storage_new_external((char *)view->buf + offset, (size_t)(count * item), owner, PCT_CPU, -1));
    Py_CLEAR(owner);
    int64_t n = count;
    pct_tensor *t = pct_tensor_from_storage(st, 1, &n, NULL, 0, dtype);
    pct_storage_decref(st);
    if (t && requires_grad) {
        if (!pct_dtype_is_differentiable(dtype)) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        t->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return (PyObject *)t;
fail:
    Py_XDECREF(owner);
    return NULL;
}
