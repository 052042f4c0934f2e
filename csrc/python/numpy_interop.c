/* numpy_interop.c: zero-copy exchange with NumPy (from_numpy, .numpy()) and with any
 * DLPack producer or consumer (__dlpack__, from_dlpack). NumPy is imported lazily, on
 * first use, so `import pyctorch` does not pay for it. */
#define PY_ARRAY_UNIQUE_SYMBOL pct_numpy_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "pyobjects.h"
#include "../aten/cuda_api.h"
#include "../aten/error.h"
#include "../aten/iter.h"
#include <numpy/arrayobject.h>
#include <stdlib.h>

static int numpy_ready = 0;

static int ensure_numpy(void)
{
    if (numpy_ready) return 0;
    if (_import_array() < 0) return -1;
    numpy_ready = 1;
    return 0;
}

int pct_numpy_is_array(PyObject *o)
{
    /* without numpy imported by someone, o cannot be an ndarray */
    if (!numpy_ready) {
        PyObject *mods = PyImport_GetModuleDict();
        if (!PyDict_GetItemString(mods, "numpy")) return 0;
        if (ensure_numpy() < 0) { PyErr_Clear(); return 0; }
    }
    return PyArray_Check(o);
}

static int dtype_from_numpy(int typenum)
{
    switch (typenum) {
    case NPY_BOOL: return PCT_BOOL;
    case NPY_UINT8: return PCT_UINT8;
    case NPY_INT8: return PCT_INT8;
    case NPY_INT16: return PCT_INT16;
    case NPY_INT32: return PCT_INT32;
    case NPY_LONG: case NPY_LONGLONG: return PCT_INT64;
    case NPY_UINT16: return PCT_UINT16;
    case NPY_UINT32: return PCT_UINT32;
    case NPY_ULONG: case NPY_ULONGLONG: return PCT_UINT64;
    case NPY_FLOAT16: return PCT_FLOAT16;
    case NPY_FLOAT32: return PCT_FLOAT32;
    case NPY_FLOAT64: return PCT_FLOAT64;
    case NPY_COMPLEX64: return PCT_COMPLEX64;
    case NPY_COMPLEX128: return PCT_COMPLEX128;
    default: return -1;
    }
}

int pct_numpy_scalar_dtype(PyObject *o)
{
    if (PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o)) return -1;
    if (!numpy_ready && !pct_numpy_is_array(o)) return -1; /* numpy not loaded: not a numpy scalar */
    if (!PyArray_IsScalar(o, Generic)) return -1;
    PyArray_Descr *d = PyArray_DescrFromScalar(o);
    if (!d) { PyErr_Clear(); return -1; }
    const int r = dtype_from_numpy(d->type_num);
    Py_DECREF(d);
    return r;
}

static int numpy_from_dtype(int dtype)
{
    static const int map[PCT_NUM_DTYPES] = {
        [PCT_BOOL] = NPY_BOOL, [PCT_UINT8] = NPY_UINT8, [PCT_INT8] = NPY_INT8, [PCT_INT16] = NPY_INT16,
        [PCT_INT32] = NPY_INT32, [PCT_INT64] = NPY_INT64, [PCT_FLOAT16] = NPY_FLOAT16, [PCT_BFLOAT16] = -1,
        [PCT_FLOAT32] = NPY_FLOAT32, [PCT_FLOAT64] = NPY_FLOAT64, [PCT_UINT16] = NPY_UINT16, [PCT_UINT32] = NPY_UINT32,
        [PCT_UINT64] = NPY_UINT64, [PCT_COMPLEX64] = NPY_COMPLEX64, [PCT_COMPLEX128] = NPY_COMPLEX128,
        [PCT_COMPLEX32] = -1, [PCT_FLOAT8_E5M2] = -1, [PCT_FLOAT8_E4M3FN] = -1, [PCT_FLOAT8_E5M2FNUZ] = -1,
        [PCT_FLOAT8_E4M3FNUZ] = -1, [PCT_FLOAT8_E8M0FNU] = -1};
    return map[dtype];
}

PyObject *pct_from_numpy_impl(PyObject *obj, bool copy)
{
    if (ensure_numpy() < 0) return NULL;
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)obj;
    int dtype = dtype_from_numpy(PyArray_TYPE(arr));
    if (dtype < 0 || !PyArray_ISNOTSWAPPED(arr)) {
        PyErr_Format(PyExc_TypeError,
                     "can't convert np.ndarray of type %R. The only supported types are: float64, float32, float16, "
                     "int64, int32, int16, int8, uint8, and bool.", (PyObject *)PyArray_DESCR(arr));
        return NULL;
    }
    int nd = PyArray_NDIM(arr);
    if (nd > PCT_MAX_DIMS) { PyErr_SetString(PyExc_ValueError, "too many dimensions"); return NULL; }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int64_t item = pct_dtype_itemsize[dtype];
    for (int i = 0; i < nd; i++) {
        sizes[i] = PyArray_DIM(arr, i);
        npy_intp s = PyArray_STRIDE(arr, i);
        if (s < 0) {
            PyErr_SetString(PyExc_ValueError, "At least one stride in the given numpy array is negative, and tensors with "
                                              "negative strides are not currently supported. (You can probably work around "
                                              "this by making a copy of your array  with array.copy().) ");
            return NULL;
        }
        if (s % item) {
            PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. Copy the "
                                              "numpy array to reallocate the memory.");
            return NULL;
        }
        strides[i] = s / item;
    }
    /* the storage spans the array's elements as its strides lay them out (numpy's nbytes counts the elements
       only: a strided view reaches further), as torch sizes it */
    size_t nbytes = 0;
    if (PyArray_SIZE(arr) > 0) {
        int64_t last = 0;
        for (int i = 0; i < nd; i++) last += (sizes[i] - 1) * strides[i];
        nbytes = (size_t)((last + 1) * item);
    }
    const bool readonly = !PyArray_ISWRITEABLE(arr);
    static bool warned_readonly = false; /* torch warns once per process */
    if (readonly && !copy && !warned_readonly) {
        warned_readonly = true;
        if (PyErr_WarnEx(PyExc_UserWarning, "The given NumPy array is not writable, and PyTorch does not support "
                         "non-writable tensors. This means writing to this tensor will result in undefined behavior. You "
                         "may want to copy the array to protect its data or make it writable before converting it to a "
                         "tensor. This type of warning will be suppressed for the rest of this program.", 1) < 0)
            return NULL;
    }
    pct_storage *st = pct_storage_new_external(PyArray_DATA(arr), nbytes, obj, PCT_CPU, -1);
    if (!st) return NULL;
    st->readonly = readonly; /* Note [Read-only storages] */
    pct_tensor *t = pct_tensor_from_storage(st, nd, sizes, strides, 0, dtype);
    pct_storage_decref(st);
    if (!t || !copy) return (PyObject *)t;
    pct_tensor *c = pct_to_dtype(t, dtype, true);
    Py_DECREF(t);
    return (PyObject *)c;
}

PyObject *pct_py_from_numpy(PyObject *self, PyObject *arr)
{
    (void)self;
    return pct_from_numpy_impl(arr, false);
}

PyObject *pct_tensor_numpy(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"force", NULL};
    int force = 0;
    if (args && !PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", kwlist, &force)) return NULL;
    if (ensure_numpy() < 0) return NULL;
    pct_tensor *t = (pct_tensor *)self;
    if (t->device_type == PCT_META) {
        PyErr_SetString(PyExc_TypeError, "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
                                         "tensor to host memory first.");
        return NULL;
    }
    if (pct_tensor_requires_grad(t) && !force) {
        PyErr_SetString(PyExc_RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return NULL;
    }
    if (t->device_type != PCT_CPU && force) { /* numpy(force=True): the values copied to the host first, as torch */
        pct_tensor *h = pct_host_values(t);
        if (!h) return NULL;
        h->flags &= ~PCT_FLAG_REQUIRES_GRAD;
        PyObject *arr = pct_tensor_numpy((PyObject *)h, NULL, NULL);
        Py_DECREF(h);
        return arr;
    }
    if (t->device_type != PCT_CPU) {
        PyErr_Format(PyExc_TypeError, "can't convert cuda:%d device type tensor to numpy. Use Tensor.cpu() to copy the "
                     "tensor to host memory first.", (int)t->device_index);
        return NULL;
    }
    if (pct_check_storage_holds(t) < 0) return NULL; /* Note [Shrunk storages]: the array would reach past it */
    int typenum = numpy_from_dtype(t->dtype);
    if (typenum < 0) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", pct_dtype_cpp_name[t->dtype]);
        return NULL;
    }
    npy_intp dims[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int64_t item = pct_tensor_itemsize(t);
    for (int i = 0; i < t->ndim; i++) { dims[i] = (npy_intp)t->sizes[i]; strides[i] = (npy_intp)(t->strides[i] * item); }
    PyObject *arr = PyArray_New(&PyArray_Type, t->ndim, dims, typenum, strides, pct_tensor_data(t), (int)item,
                                (t->storage->readonly ? 0 : NPY_ARRAY_WRITEABLE) | NPY_ARRAY_ALIGNED, NULL);
    if (!arr) return NULL;
    /* the array's base is a buffer export of the tensor: while the array lives the storage
       counts it, so share_memory_ and resize refuse to move the memory under it */
    /* (numpy(force=True) of a tensor that requires grad: through a detached alias, the buffer being refused) */
    PyObject *src = pct_tensor_requires_grad(t) ? pct_tensor_alias(&pct_TensorType, t, true) : Py_NewRef(self);
    PyObject *guard = src ? PyMemoryView_FromObject(src) : NULL;
    Py_XDECREF(src);
    if (!guard) { Py_DECREF(arr); return NULL; }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, guard) < 0) { Py_DECREF(arr); return NULL; }
    return arr;
}

/* ---- DLPack (our own declarations of the stable v0.x ABI structs) ---- */

typedef struct { int32_t device_type; int32_t device_id; } pct_DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } pct_DLDataType;
typedef struct {
    void *data;
    pct_DLDevice device;
    int32_t ndim;
    pct_DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} pct_DLTensor;
typedef struct pct_DLManagedTensor {
    pct_DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct pct_DLManagedTensor *self);
} pct_DLManagedTensor;

enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_COMPLEX = 5, DL_BOOL = 6, DL_FLOAT8_E4M3FN = 10,
       DL_FLOAT8_E4M3FNUZ = 11, DL_FLOAT8_E5M2 = 12, DL_FLOAT8_E5M2FNUZ = 13, DL_FLOAT8_E8M0FNU = 14 };
enum { DL_CPU = 1, DL_CUDA = 2 };

/* What we export: the managed struct followed by shape and strides. Owns a tensor reference (manager_ctx) and
 * one reference to the storage the data pointer lies in, whose `exports` count it holds until the consumer
 * calls the deleter: while it is held the memory cannot move (resize_ and share_memory_ refuse), as for a
 * NumPy array made by .numpy(). The storage is kept apart from the tensor because set_() may re-point the
 * tensor at another storage while the capsule lives. */
typedef struct {
    pct_DLManagedTensor m;
    pct_storage *storage;
    int64_t dims[2 * PCT_MAX_DIMS];
} export_block;

static void export_deleter(pct_DLManagedTensor *m)
{
    export_block *b = (export_block *)m;
    PyGILState_STATE g = PyGILState_Ensure();
    if (b->storage) {
        atomic_fetch_sub(&b->storage->exports, 1);
        pct_storage_decref(b->storage);
    }
    Py_XDECREF((PyObject *)m->manager_ctx);
    PyGILState_Release(g);
    free(m);
}

static void capsule_destructor(PyObject *cap)
{
    /* only an unconsumed capsule still owns its tensor */
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    pct_DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
}

static void dl_dtype(int dtype, pct_DLDataType *d)
{
    d->lanes = 1;
    d->bits = (uint8_t)(pct_dtype_itemsize[dtype] * 8);
    if (dtype == PCT_BOOL) d->code = DL_BOOL;
    else if (dtype == PCT_UINT8 || pct_dtype_is_barebones(dtype)) d->code = DL_UINT;
    else if (dtype == PCT_BFLOAT16) d->code = DL_BFLOAT;
    else if (pct_dtype_is_complex(dtype)) d->code = DL_COMPLEX;
    else if (dtype == PCT_FLOAT8_E4M3FN) d->code = DL_FLOAT8_E4M3FN;
    else if (dtype == PCT_FLOAT8_E4M3FNUZ) d->code = DL_FLOAT8_E4M3FNUZ;
    else if (dtype == PCT_FLOAT8_E5M2) d->code = DL_FLOAT8_E5M2;
    else if (dtype == PCT_FLOAT8_E5M2FNUZ) d->code = DL_FLOAT8_E5M2FNUZ;
    else if (dtype == PCT_FLOAT8_E8M0FNU) d->code = DL_FLOAT8_E8M0FNU;
    else if (pct_dtype_is_floating(dtype)) d->code = DL_FLOAT;
    else d->code = DL_INT;
}

PyObject *pct_dlpack_export(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream, &maxv, &dev, &copy)) return NULL;
    pct_tensor *t = (pct_tensor *)self;
    if (pct_check_has_data(t) < 0) return NULL;
    if (pct_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "Can't export tensors that require gradient, use tensor.detach()");
        return NULL;
    }
    export_block *b = calloc(1, sizeof *b);
    if (!b) return PyErr_NoMemory();
    pct_DLTensor *dl = &b->m.dl_tensor;
    dl->data = t->storage->data;
    dl->byte_offset = (uint64_t)(t->offset * pct_tensor_itemsize(t));
    dl->device.device_type = t->device_type == PCT_CUDA ? DL_CUDA : DL_CPU;
    dl->device.device_id = t->device_index < 0 ? 0 : t->device_index;
    dl->ndim = t->ndim;
    dl_dtype(t->dtype, &dl->dtype);
    dl->shape = b->dims;
    dl->strides = b->dims + PCT_MAX_DIMS;
    for (int i = 0; i < t->ndim; i++) { dl->shape[i] = t->sizes[i]; dl->strides[i] = t->strides[i]; }
    Py_INCREF(self);
    b->m.manager_ctx = self;
    b->m.deleter = export_deleter;
    pct_storage_incref(t->storage);
    atomic_fetch_add(&t->storage->exports, 1);
    b->storage = t->storage;
    PyObject *cap = PyCapsule_New(&b->m, "dltensor", capsule_destructor);
    if (!cap) { export_deleter(&b->m); return NULL; }
    return cap;
}

PyObject *pct_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    pct_tensor *t = (pct_tensor *)self;
    return Py_BuildValue("(ii)", t->device_type == PCT_CUDA ? DL_CUDA : DL_CPU, t->device_index < 0 ? 0 : t->device_index);
}

/* The owner of imported memory: calls the producer's deleter when the storage dies. */
static void imported_destructor(PyObject *cap)
{
    pct_DLManagedTensor *m = PyCapsule_GetPointer(cap, "pyctorch.dlpack_owner");
    if (m && m->deleter) m->deleter(m);
}

static int dtype_from_dl(pct_DLDataType d)
{
    if (d.lanes != 1) return -1;
    switch (d.code) {
    case DL_BOOL: return d.bits == 8 ? PCT_BOOL : -1;
    case DL_UINT: return d.bits == 8 ? PCT_UINT8 : d.bits == 16 ? PCT_UINT16 : d.bits == 32 ? PCT_UINT32 : d.bits == 64 ? PCT_UINT64 : -1;
    case DL_INT: return d.bits == 8 ? PCT_INT8 : d.bits == 16 ? PCT_INT16 : d.bits == 32 ? PCT_INT32 : d.bits == 64 ? PCT_INT64 : -1;
    case DL_FLOAT: return d.bits == 16 ? PCT_FLOAT16 : d.bits == 32 ? PCT_FLOAT32 : d.bits == 64 ? PCT_FLOAT64 : -1;
    case DL_BFLOAT: return d.bits == 16 ? PCT_BFLOAT16 : -1;
    case DL_COMPLEX: return d.bits == 32 ? PCT_COMPLEX32 : d.bits == 64 ? PCT_COMPLEX64 : d.bits == 128 ? PCT_COMPLEX128 : -1;
    case DL_FLOAT8_E4M3FN: return d.bits == 8 ? PCT_FLOAT8_E4M3FN : -1;
    case DL_FLOAT8_E4M3FNUZ: return d.bits == 8 ? PCT_FLOAT8_E4M3FNUZ : -1;
    case DL_FLOAT8_E5M2: return d.bits == 8 ? PCT_FLOAT8_E5M2 : -1;
    case DL_FLOAT8_E5M2FNUZ: return d.bits == 8 ? PCT_FLOAT8_E5M2FNUZ : -1;
    case DL_FLOAT8_E8M0FNU: return d.bits == 8 ? PCT_FLOAT8_E8M0FNU : -1;
    default: return -1;
    }
}

PyObject *pct_py_from_dlpack(PyObject *self, PyObject *obj)
{
    (void)self;
    PyObject *cap;
    if (PyCapsule_CheckExact(obj)) { Py_INCREF(obj); cap = obj; }
    else if (!(cap = PyObject_CallMethod(obj, "__dlpack__", NULL))) return NULL;
    pct_DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) { Py_DECREF(cap); return NULL; }
    pct_DLTensor *dl = &m->dl_tensor;
    int dtype = dtype_from_dl(dl->dtype);
    /* CPU memory, or a CUDA device's where the backend is built (zero copy with torch's and CuPy's CUDA arrays) */
    const bool cuda = dl->device.device_type == DL_CUDA && pct_cuda_built();
    if (dtype < 0 || (dl->device.device_type != DL_CPU && !cuda) || dl->ndim > PCT_MAX_DIMS || dl->ndim < 0) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_BufferError, "from_dlpack: unsupported dtype or device (pyctorch reads CPU and CUDA tensors "
                                           "of its dtypes)");
        return NULL;
    }
    if (cuda && (!pct_cuda() || dl->device.device_id < 0 || dl->device.device_id >= pct_cuda()->device_count())) {
        Py_DECREF(cap);
        if (!PyErr_Occurred()) PyErr_Format(PyExc_BufferError, "from_dlpack: no CUDA device %d", dl->device.device_id);
        return NULL;
    }
    if (PyCapsule_SetName(cap, "used_dltensor") < 0) { Py_DECREF(cap); return NULL; }
    Py_DECREF(cap);
    PyObject *owner = PyCapsule_New(m, "pyctorch.dlpack_owner", imported_destructor);
    if (!owner) { if (m->deleter) m->deleter(m); return NULL; }
    int64_t strides[PCT_MAX_DIMS], extent = 1;
    int64_t item = pct_dtype_itemsize[dtype];
    for (int i = 0; i < dl->ndim; i++) {
        strides[i] = dl->strides ? dl->strides[i] : 0;
        extent += (dl->shape[i] - 1) * strides[i];
    }
    if (!dl->strides) pct_contiguous_strides(dl->ndim, dl->shape, strides);
    char *base = (char *)dl->data + dl->byte_offset;
    pct_storage *st = pct_storage_new_external(base, (size_t)(extent * item), owner, cuda ? PCT_CUDA : PCT_CPU,
                                               cuda ? dl->device.device_id : -1);
    Py_DECREF(owner);
    if (!st) return NULL;
    pct_tensor *t = pct_tensor_from_storage(st, dl->ndim, dl->shape, strides, 0, dtype);
    pct_storage_decref(st);
    return (PyObject *)t;
}
