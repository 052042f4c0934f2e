/* extension_api.c: the table of the public C API for extensions (pyctorch/include/pyctorch/extension.h), exported as
 * the capsule pyctorch._C._C_API.
 *
 * Note [The extension C API]: extensions built by torch.utils.cpp_extension are written against one installed
 * header, not against csrc/: the header declares a table of function pointers (pct_ext_api) and this file fills it
 * once and hands its address out in a PyCapsule, as NumPy does for its C API. So an extension sees no internal struct
 * (pct_tensor may change shape freely), links against nothing, and is checked at import (pct_ext_import): the table
 * carries PCT_EXT_ABI_VERSION, which changes only when an entry changes meaning or place, and its own size, so new
 * entries are appended and older extensions keep working. The header's dtype and device numbers are pyctorch's own
 * ids, pinned by the static asserts below: renumbering the core's enums breaks the build here, not extensions.
 * Everything an extension gets is an ordinary pyctorch tensor: allocation goes through pct_tensor_empty (the
 * device's allocator), contiguous() through the Tensor method (so autograd records it as usual).
 */
#include "extension_api.h"
#include "pyobjects.h"
#include "../../pyctorch/include/pyctorch/extension.h"
#include "../aten/cuda_api.h"
#include "../aten/backend.h"

#define PCT_EXT_SAME(E) _Static_assert((int)PCT_EXT_##E == (int)PCT_##E, "extension.h's " #E " must be pyctorch's id");
PCT_EXT_SAME(BOOL) PCT_EXT_SAME(UINT8) PCT_EXT_SAME(INT8) PCT_EXT_SAME(INT16) PCT_EXT_SAME(INT32)
PCT_EXT_SAME(INT64) PCT_EXT_SAME(FLOAT16) PCT_EXT_SAME(BFLOAT16) PCT_EXT_SAME(FLOAT32) PCT_EXT_SAME(FLOAT64)
PCT_EXT_SAME(UINT16) PCT_EXT_SAME(UINT32) PCT_EXT_SAME(UINT64) PCT_EXT_SAME(COMPLEX64) PCT_EXT_SAME(COMPLEX128)
PCT_EXT_SAME(COMPLEX32) PCT_EXT_SAME(FLOAT8_E5M2) PCT_EXT_SAME(FLOAT8_E4M3FN) PCT_EXT_SAME(FLOAT8_E5M2FNUZ)
PCT_EXT_SAME(FLOAT8_E4M3FNUZ) PCT_EXT_SAME(FLOAT8_E8M0FNU) PCT_EXT_SAME(CPU) PCT_EXT_SAME(CUDA) PCT_EXT_SAME(META)
#undef PCT_EXT_SAME
_Static_assert((int)PCT_EXT_NUM_DTYPES == (int)PCT_NUM_DTYPES, "extension.h must list every dtype");

/* t as a tensor, or NULL with TypeError naming what it is. */
static pct_tensor *as_tensor(PyObject *t)
{
    if (t && PCT_TENSOR_CHECK(t)) return (pct_tensor *)t;
    PyErr_Format(PyExc_TypeError, "expected a Tensor, but got %s", t ? Py_TYPE(t)->tp_name : "NULL");
    return NULL;
}

static int is_tensor(PyObject *o) { return o && PCT_TENSOR_CHECK(o); }

static void *data_ptr(PyObject *o)
{
    pct_tensor *t = as_tensor(o);
    if (!t || pct_check_has_data(t) < 0) return NULL;
    return pct_tensor_data(t);
}

static void *mutable_data_ptr(PyObject *o)
{
    pct_tensor *t = as_tensor(o);
    if (!t || pct_check_has_data(t) < 0 || pct_check_writable(t) < 0) return NULL;
    return pct_tensor_data(t);
}

/* The accessors of one field each: its value, or the failure value (-1, NULL) with TypeError for a non-tensor. */
#define TENSOR_GETTER(type, name, expr, failure)  \
    static type name(PyObject *o)                 \
    {                                             \
        pct_tensor *t = as_tensor(o);             \
        return t ? (type)(expr) : (failure);      \
    }
TENSOR_GETTER(int, ndim, t->ndim, -1)
TENSOR_GETTER(const int64_t *, sizes, t->sizes, NULL)
TENSOR_GETTER(const int64_t *, strides, t->strides, NULL)
TENSOR_GETTER(int64_t, numel, t->numel, -1)
TENSOR_GETTER(int64_t, storage_offset, t->offset, -1)
TENSOR_GETTER(int, is_contiguous, pct_tensor_is_contiguous(t), -1)
TENSOR_GETTER(int, dtype, t->dtype, -1)
TENSOR_GETTER(int, device_type, t->device_type, -1)
TENSOR_GETTER(int, device_index, t->device_index, -1)
TENSOR_GETTER(int, requires_grad, pct_tensor_requires_grad(t), -1)
#undef TENSOR_GETTER

static int64_t element_size(int d)
{
    if (d >= 0 && d < PCT_NUM_DTYPES) return pct_dtype_itemsize[d];
    PyErr_Format(PyExc_ValueError, "unknown dtype id %d (pct_ext_dtype has 0 to %d)", d, PCT_NUM_DTYPES - 1);
    return -1;
}

static const char *dtype_name(int d) { return d >= 0 && d < PCT_NUM_DTYPES ? pct_dtype_name[d] : "unknown"; }

static PyObject *contiguous(PyObject *o)
{
    if (!as_tensor(o)) return NULL;
    return PyObject_CallMethod(o, "contiguous", NULL);
}

/* 0 when a shape, dtype and device can be asked of the allocator; -1 with ValueError (RuntimeError for a negative
 * size comes from pct_tensor_empty, with torch's message). */
static int check_request(int n, const int64_t *shape, int d, int device, int index)
{
    if (n < 0 || n > PCT_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "pct_ext_empty: ndim must be in [0, %d], got %d", PCT_MAX_DIMS, n);
        return -1;
    }
    if (n > 0 && !shape) {
        PyErr_Format(PyExc_ValueError, "pct_ext_empty: sizes is NULL for ndim %d", n);
        return -1;
    }
    if (d < 0 || d >= PCT_NUM_DTYPES) {
        PyErr_Format(PyExc_ValueError, "pct_ext_empty: unknown dtype id %d", d);
        return -1;
    }
    if (device < 0 || device >= PCT_NUM_BACKENDS || index < -1 || index > INT8_MAX) {
        PyErr_Format(PyExc_ValueError, "pct_ext_empty: unknown device (type %d, index %d)", device, index);
        return -1;
    }
    return 0;
}

static PyObject *empty(int n, const int64_t *shape, int d, int device, int index)
{
    if (check_request(n, shape, d, device, index) < 0) return NULL;
    return (PyObject *)pct_tensor_empty(n, shape, d, device, device == PCT_CPU ? -1 : index);
}

static PyObject *zeros(int n, const int64_t *shape, int d, int device, int index)
{
    if (check_request(n, shape, d, device, index) < 0) return NULL;
    return (PyObject *)pct_tensor_zeros_on(n, shape, d, device, device == PCT_CPU ? -1 : index);
}

static PyObject *empty_like(PyObject *o)
{
    pct_tensor *t = as_tensor(o);
    return t ? (PyObject *)pct_tensor_empty_like(t, -1) : NULL;
}

/* Note [The extension C API]'s CUDA entry: the handle of the current stream of a device (pct_cuda() loads the
 * backend, or says why there is none) */
static int current_cuda_stream(int device_index, void **stream)
{
    const pct_cuda_api *api = pct_cuda();
    if (!api) return -1;
    if (api->device_count() <= 0) {
        const char *why = api->unavailable_reason();
        PyErr_Format(PyExc_RuntimeError, "pct_ext_current_cuda_stream: no CUDA device (%s)", why ? why : "none found");
        return -1;
    }
    const int64_t id = api->backend->current_stream(device_index);
    return id < 0 ? -1 : api->stream_handle(device_index, id, stream);
}

static const pct_ext_api extension_api = {
    .abi_version = PCT_EXT_ABI_VERSION,
    .table_size = (int)sizeof(pct_ext_api),
    .is_tensor = is_tensor,
    .data_ptr = data_ptr,
    .mutable_data_ptr = mutable_data_ptr,
    .ndim = ndim,
    .sizes = sizes,
    .strides = strides,
    .numel = numel,
    .storage_offset = storage_offset,
    .is_contiguous = is_contiguous,
    .dtype = dtype,
    .element_size = element_size,
    .device_type = device_type,
    .device_index = device_index,
    .requires_grad = requires_grad,
    .contiguous = contiguous,
    .empty = empty,
    .empty_like = empty_like,
    .zeros = zeros,
    .dtype_name = dtype_name,
    .current_cuda_stream = current_cuda_stream,
};

int pct_extension_api_install(PyObject *module)
{
    /* the table is static and constant: the capsule only points at it (no destructor) */
    PyObject *capsule = PyCapsule_New((void *)&extension_api, PCT_EXT_CAPSULE_NAME, NULL);
    if (!capsule) return -1;
    int r = PyModule_AddObjectRef(module, "_C_API", capsule);
    Py_DECREF(capsule);
    return r;
}
