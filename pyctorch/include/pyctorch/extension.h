/* pyctorch/extension.h: the public C API for extensions of pyctorch (torch.utils.cpp_extension).
 *
 * Plain C11, usable from C++ (extern "C"). Installed with the package; torch.utils.cpp_extension.include_paths()
 * returns the folder to put on the include path (-I), and load()/load_inline()/CppExtension() add it for you.
 *
 * How it works. The header exposes none of pyctorch's internal structs: pyctorch._C exports a table of function
 * pointers in a PyCapsule named "pyctorch._C._C_API" (the pattern of NumPy's C API). pct_ext_import() imports
 * pyctorch._C, reads the capsule, checks its ABI version and keeps the table; every function below calls through it.
 * An extension links against nothing of pyctorch's.
 *
 *     PyMODINIT_FUNC PyInit_my_ext(void)
 *     {
 *         if (pct_ext_import() < 0) return NULL;   // before any other pct_ext_* call
 *         return PyModule_Create(&my_ext_module);
 *     }
 *
 * The table pointer is one per shared object (a weak, hidden symbol under GCC and Clang), so an extension made of
 * several C files imports once, in its module init. (A compiler without weak symbols keeps one per file: call
 * pct_ext_import() in each file then; it is cheap and may be called any number of times.)
 *
 * Versioning. PCT_EXT_ABI_VERSION changes only when an existing entry changes meaning or place (then an extension
 * must be rebuilt, and pct_ext_import() says so with an ImportError). New functions are only ever appended to the
 * table: the table records its size, so an extension built against an older header keeps working with a newer
 * pyctorch, and one built against a newer header refuses (ImportError) a pyctorch whose table is too short.
 *
 * Rules shared by every function:
 *   - Call with the GIL held (all functions create or read Python objects). A kernel may release the GIL around
 *     its loop once it has read the data pointers (Py_BEGIN_ALLOW_THREADS), as the example does.
 *   - References: a function returning PyObject * returns a NEW reference (the caller owns it and must Py_DECREF
 *     it), or NULL with a Python exception set. Arguments are BORROWED: no function steals a reference.
 *   - Errors: functions returning a pointer return NULL with an exception set; those returning an integer return
 *     -1 with an exception set (TypeError when the argument is not a pyctorch tensor). Check before using a result.
 *   - Pointers returned for a tensor (data, sizes, strides) are borrowed from it: valid while the tensor lives and
 *     is not resized (resize_, set_) by someone else.
 *
 * Tensors. A pyctorch tensor is a strided view over a storage: element i0..i(n-1) lives at
 *     data_ptr + sum_k i_k * strides[k]      (strides count ELEMENTS, as in torch, not bytes)
 * where data_ptr already includes the storage offset. pct_ext_data_ptr therefore works for any layout; a kernel
 * that wants flat indexing calls pct_ext_contiguous() first (a new reference: the tensor itself when it is already
 * contiguous, else a contiguous copy) or checks pct_ext_is_contiguous(). Data of a CUDA tensor is device memory.
 *
 * Autograd. These functions see values only: a tensor made here does not require grad and a kernel records no
 * graph. Wire a forward kernel and its backward kernel through torch.autograd.Function (or torch.library.custom_op
 * with register_autograd) on the Python side; examples/extension/ shows both halves.
 */
#ifndef PYCTORCH_EXTENSION_H
#define PYCTORCH_EXTENSION_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header was written for (see Versioning above). */
#define PCT_EXT_ABI_VERSION 1
/* The capsule's full name, as PyCapsule_Import takes it. */
#define PCT_EXT_CAPSULE_NAME "pyctorch._C._C_API"

/* dtypes. The values are stable (they are pyctorch's own dtype ids and never renumber) and name torch's dtypes. */
typedef enum pct_ext_dtype {
    PCT_EXT_BOOL = 0,          /* torch.bool: one byte, 0 or 1 */
    PCT_EXT_UINT8 = 1,         /* torch.uint8 */
    PCT_EXT_INT8 = 2,          /* torch.int8 */
    PCT_EXT_INT16 = 3,         /* torch.int16 */
    PCT_EXT_INT32 = 4,         /* torch.int32 */
    PCT_EXT_INT64 = 5,         /* torch.int64 */
    PCT_EXT_FLOAT16 = 6,       /* torch.float16: IEEE binary16 bits in a uint16_t */
    PCT_EXT_BFLOAT16 = 7,      /* torch.bfloat16: the upper 16 bits of a float, in a uint16_t */
    PCT_EXT_FLOAT32 = 8,       /* torch.float32: float */
    PCT_EXT_FLOAT64 = 9,       /* torch.float64: double */
    PCT_EXT_UINT16 = 10,       /* torch.uint16 */
    PCT_EXT_UINT32 = 11,       /* torch.uint32 */
    PCT_EXT_UINT64 = 12,       /* torch.uint64 */
    PCT_EXT_COMPLEX64 = 13,    /* torch.complex64: two floats (re, im) */
    PCT_EXT_COMPLEX128 = 14,   /* torch.complex128: two doubles (re, im) */
    PCT_EXT_COMPLEX32 = 15,    /* torch.complex32: two float16 */
    PCT_EXT_FLOAT8_E5M2 = 16,  /* the float8 formats: one byte each */
    PCT_EXT_FLOAT8_E4M3FN = 17,
    PCT_EXT_FLOAT8_E5M2FNUZ = 18,
    PCT_EXT_FLOAT8_E4M3FNUZ = 19,
    PCT_EXT_FLOAT8_E8M0FNU = 20,
    PCT_EXT_NUM_DTYPES = 21
} pct_ext_dtype;

/* Device types (stable values). A device index is -1 for the CPU; for CUDA, 0.., and -1 in pct_ext_empty means the
 * current device. */
typedef enum pct_ext_device_type {
    PCT_EXT_CPU = 0,
    PCT_EXT_CUDA = 1,
    PCT_EXT_META = 2  /* shapes only: no data; pct_ext_data_ptr refuses it */
} pct_ext_device_type;

/* The table pyctorch._C exports. Use the pct_ext_* functions below rather than these fields. */
typedef struct pct_ext_api {
    int abi_version;        /* PCT_EXT_ABI_VERSION of the pyctorch that made it */
    int table_size;         /* sizeof(pct_ext_api) in that pyctorch: entries beyond it do not exist */
    int (*is_tensor)(PyObject *o);
    void *(*data_ptr)(PyObject *t);
    void *(*mutable_data_ptr)(PyObject *t);
    int (*ndim)(PyObject *t);
    const int64_t *(*sizes)(PyObject *t);
    const int64_t *(*strides)(PyObject *t);
    int64_t (*numel)(PyObject *t);
    int64_t (*storage_offset)(PyObject *t);
    int (*is_contiguous)(PyObject *t);
    int (*dtype)(PyObject *t);
    int64_t (*element_size)(int dtype);
    int (*device_type)(PyObject *t);
    int (*device_index)(PyObject *t);
    int (*requires_grad)(PyObject *t);
    PyObject *(*contiguous)(PyObject *t);
    PyObject *(*empty)(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index);
    PyObject *(*empty_like)(PyObject *t);
    PyObject *(*zeros)(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index);
    const char *(*dtype_name)(int dtype);
    int (*current_cuda_stream)(int device_index, void **stream);
} pct_ext_api;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak, visibility("hidden"))) const pct_ext_api *pct_ext_api_table = NULL;
#else
static const pct_ext_api *pct_ext_api_table = NULL;
#endif

/* Import pyctorch._C and its table: 0, or -1 with ImportError (pyctorch missing, or an incompatible version). Call
 * it in the module init, before any other pct_ext_* function. Repeated calls return 0 at once. */
static inline int pct_ext_import(void)
{
    if (pct_ext_api_table) return 0;
    const pct_ext_api *api = (const pct_ext_api *)PyCapsule_Import(PCT_EXT_CAPSULE_NAME, 0);
    if (!api) return -1;
    if (api->abi_version != PCT_EXT_ABI_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "this extension was built for pyctorch's C API version %d, but the pyctorch installed has "
                     "version %d: rebuild the extension", PCT_EXT_ABI_VERSION, api->abi_version);
        return -1;
    }
    if (api->table_size < (int)sizeof(pct_ext_api)) {
        PyErr_SetString(PyExc_ImportError,
                        "this extension was built against a newer pyctorch than the one installed: upgrade pyctorch");
        return -1;
    }
    pct_ext_api_table = api;
    return 0;
}

/* 1 when o is a pyctorch tensor (torch.Tensor or a subclass such as nn.Parameter), else 0. Never fails. */
static inline int pct_ext_is_tensor(PyObject *o) { return pct_ext_api_table->is_tensor(o); }

/* The address of t's first element (storage offset applied), for reading; indexes with the strides. NULL with an
 * error for a non-tensor (TypeError) or a meta tensor (NotImplementedError). A tensor with no elements may have no
 * memory: check pct_ext_numel() first, or PyErr_Occurred() on NULL. */
static inline const void *pct_ext_const_data_ptr(PyObject *t) { return pct_ext_api_table->data_ptr(t); }
/* The same for writing: also refuses (RuntimeError) a tensor over read-only memory (from a non-writable NumPy
 * array). Writing a tensor's values in place does not bump its autograd version counter: do not write a tensor
 * autograd saved; write tensors your kernel allocated. */
static inline void *pct_ext_data_ptr(PyObject *t) { return pct_ext_api_table->mutable_data_ptr(t); }

/* The number of dimensions (0 for a scalar tensor), or -1 with TypeError. */
static inline int pct_ext_ndim(PyObject *t) { return pct_ext_api_table->ndim(t); }
/* sizes[0 .. ndim) and strides[0 .. ndim) (in elements; borrowed), or NULL with TypeError. */
static inline const int64_t *pct_ext_sizes(PyObject *t) { return pct_ext_api_table->sizes(t); }
static inline const int64_t *pct_ext_strides(PyObject *t) { return pct_ext_api_table->strides(t); }
/* The number of elements (the product of the sizes), or -1 with TypeError. */
static inline int64_t pct_ext_numel(PyObject *t) { return pct_ext_api_table->numel(t); }
/* Where t starts in its storage, in elements (torch's storage_offset(); already applied by the data pointers), or
 * -1 with TypeError. */
static inline int64_t pct_ext_storage_offset(PyObject *t) { return pct_ext_api_table->storage_offset(t); }
/* 1 when t is C-contiguous (row-major with no gaps: flat indexing from the data pointer is valid), 0 when not, -1
 * with TypeError. */
static inline int pct_ext_is_contiguous(PyObject *t) { return pct_ext_api_table->is_contiguous(t); }
/* t's dtype (a pct_ext_dtype), or -1 with TypeError. */
static inline int pct_ext_dtype_of(PyObject *t) { return pct_ext_api_table->dtype(t); }
/* Bytes per element of a dtype, or -1 with ValueError for an unknown one. */
static inline int64_t pct_ext_element_size(int dtype) { return pct_ext_api_table->element_size(dtype); }
/* torch's name of a dtype ("float32"), or "unknown"; never NULL, static storage. */
static inline const char *pct_ext_dtype_name(int dtype) { return pct_ext_api_table->dtype_name(dtype); }
/* t's device (a pct_ext_device_type) and index (-1 for the CPU), or -1 with TypeError. */
static inline int pct_ext_device_type_of(PyObject *t) { return pct_ext_api_table->device_type(t); }
static inline int pct_ext_device_index(PyObject *t) { return pct_ext_api_table->device_index(t); }
/* 1 when t requires grad, 0 when not, -1 with TypeError. */
static inline int pct_ext_requires_grad(PyObject *t) { return pct_ext_api_table->requires_grad(t); }

/* NEW reference: t itself when contiguous, else a contiguous copy (Tensor.contiguous(), recorded by autograd when
 * grad mode is on); NULL with an error. */
static inline PyObject *pct_ext_contiguous(PyObject *t) { return pct_ext_api_table->contiguous(t); }
/* NEW reference: a contiguous tensor of these sizes (ndim 0..64; sizes may be NULL when ndim is 0), dtype and device
 * with uninitialised values, from pyctorch's own allocator (so it is an ordinary tensor: its memory is freed when
 * the last reference goes); NULL with an error (RuntimeError for a negative size, ValueError for an unknown dtype
 * or device, the device's error when it is unavailable, MemoryError). */
static inline PyObject *pct_ext_empty(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index)
{
    return pct_ext_api_table->empty(ndim, sizes, dtype, device_type, device_index);
}
/* The same filled with zeros. */
static inline PyObject *pct_ext_zeros(int ndim, const int64_t *sizes, int dtype, int device_type, int device_index)
{
    return pct_ext_api_table->zeros(ndim, sizes, dtype, device_type, device_index);
}
/* NEW reference: a contiguous uninitialised tensor with t's sizes, dtype and device; NULL with an error. */
static inline PyObject *pct_ext_empty_like(PyObject *t) { return pct_ext_api_table->empty_like(t); }

/* The stream pyctorch's CUDA work on a device (-1: the current device) goes to now, as torch's
 * at::cuda::getCurrentCUDAStream(): the cudaStream_t in *stream (NULL is the device's default stream, a valid stream;
 * torch.cuda.stream(s) and torch.cuda.set_stream(s) change it). Launch a kernel there and pyctorch's later work on
 * the stream is ordered after it; no synchronisation is needed for the result to be used by pyctorch. 0, or -1 with
 * an error (RuntimeError where pyctorch has no usable CUDA device: CUDA not built, no driver or no GPU). Loads
 * pyctorch's CUDA backend on first use. */
static inline int pct_ext_current_cuda_stream(int device_index, void **stream)
{
    return pct_ext_api_table->current_cuda_stream(device_index, stream);
}

/* Errors, as torch's TORCH_CHECK family maps them to Python exceptions. */
typedef enum pct_ext_error_kind {
    PCT_EXT_RUNTIME_ERROR,        /* TORCH_CHECK */
    PCT_EXT_VALUE_ERROR,          /* TORCH_CHECK_VALUE */
    PCT_EXT_TYPE_ERROR,           /* TORCH_CHECK_TYPE */
    PCT_EXT_INDEX_ERROR,          /* TORCH_CHECK_INDEX */
    PCT_EXT_NOT_IMPLEMENTED_ERROR /* TORCH_CHECK_NOT_IMPLEMENTED */
} pct_ext_error_kind;

/* Set the Python exception of `kind` with a printf-formatted message (C's printf: %g, %lld, %zu... all work; the
 * message is cut at 1023 bytes) and return NULL, so `return pct_ext_error(...)` ends a function that returns a
 * PyObject *. Needs no table: usable before pct_ext_import(). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static inline PyObject *pct_ext_error(pct_ext_error_kind kind, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    PyObject *type = kind == PCT_EXT_VALUE_ERROR   ? PyExc_ValueError
                     : kind == PCT_EXT_TYPE_ERROR  ? PyExc_TypeError
                     : kind == PCT_EXT_INDEX_ERROR ? PyExc_IndexError
                     : kind == PCT_EXT_NOT_IMPLEMENTED_ERROR ? PyExc_NotImplementedError
                                                             : PyExc_RuntimeError;
    PyErr_SetString(type, message);
    return NULL;
}

/* In a function returning PyObject *: when cond is false, raise and return NULL. The message is a printf format
 * and its arguments: PCT_EXT_CHECK(n > 0, "expected a non-empty tensor, got %lld elements", (long long)n). A
 * function that must release references first uses pct_ext_error and its own cleanup instead. */
#define PCT_EXT_CHECK_KIND_(kind, cond, ...)                 \
    do {                                                     \
        if (!(cond)) return pct_ext_error((kind), __VA_ARGS__); \
    } while (0)
#define PCT_EXT_CHECK(cond, ...) PCT_EXT_CHECK_KIND_(PCT_EXT_RUNTIME_ERROR, cond, __VA_ARGS__)
#define PCT_EXT_CHECK_VALUE(cond, ...) PCT_EXT_CHECK_KIND_(PCT_EXT_VALUE_ERROR, cond, __VA_ARGS__)
#define PCT_EXT_CHECK_TYPE(cond, ...) PCT_EXT_CHECK_KIND_(PCT_EXT_TYPE_ERROR, cond, __VA_ARGS__)
#define PCT_EXT_CHECK_INDEX(cond, ...) PCT_EXT_CHECK_KIND_(PCT_EXT_INDEX_ERROR, cond, __VA_ARGS__)
#define PCT_EXT_CHECK_NOT_IMPLEMENTED(cond, ...) PCT_EXT_CHECK_KIND_(PCT_EXT_NOT_IMPLEMENTED_ERROR, cond, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif /* PYCTORCH_EXTENSION_H */
