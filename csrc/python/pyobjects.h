/* pyobjects.h: the Python-facing types made in C (dtype, device, Size, op functions)
 * and conversions between them and the C core. */
#ifndef PCT_PYOBJECTS_H
#define PCT_PYOBJECTS_H
#include <Python.h>
#include "../aten/op.h"
#include "../autograd/python_values.h" /* pct_value_set_tensorlist; the table below fills */

/* The Tensor type (tensor_type.c): its objects are pct_tensor structs (csrc/aten/tensor.h). */
extern PyTypeObject pct_TensorType;
#define PCT_TENSOR_CHECK(o) PyObject_TypeCheck((o), &pct_TensorType)
/* torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError), made by the module init (module.c); the core
 * raises it as PCT_ERR_LINALG. */
extern PyObject *pct_LinAlgError;
/* torch.OutOfMemoryError (torch._C.OutOfMemoryError, also torch.cuda.OutOfMemoryError, a RuntimeError), made by the
 * module init; the core raises it as PCT_ERR_OUT_OF_MEMORY (the caching allocator, csrc/aten/caching_allocator.h). */
extern PyObject *pct_OutOfMemoryError;
/* Note [Shrunk storages]
 * storage.resize_() may shrink a storage under live tensors (FSDP frees a parameter's memory with resize_(0)). A
 * tensor whose elements are no longer all inside its storage must raise when an op reads it, as torch raises for
 * one whose data is not allocated, never read freed memory: every tensor an op-table call receives (as a Tensor,
 * a Scalar or a number; argparse.c) and every host read of values (pct_check_has_data: item, tolist, numpy,
 * Python number conversions) is checked here. Meta tensors have no memory to check. 0, or -1 with RuntimeError. */
static inline int pct_check_storage_holds(const pct_tensor *t)
{
    if (t->numel == 0 || !t->storage || t->device_type == PCT_META) return 0;
    const int64_t need = pct_tensor_storage_extent(t);
    if (need <= (int64_t)t->storage->nbytes) return 0;
    if (t->storage->nbytes == 0)
        PyErr_SetString(PyExc_RuntimeError, "The tensor has a non-zero number of elements, but its data is not allocated "
                                            "yet. (Its storage was resized to 0 bytes.)");
    else
        PyErr_Format(PyExc_RuntimeError, "The tensor's storage holds %zu bytes, fewer than the %lld bytes its elements "
                     "need (was the storage resized?)", t->storage->nbytes, (long long)need);
    return -1;
}

/* -1 with torch's NotImplementedError for a meta tensor, whose values do not exist (Note [Meta storages]), or the
 * RuntimeError of a shrunk storage; else 0. */
static inline int pct_check_has_data(const pct_tensor *t)
{
    if (t->device_type != PCT_META) return pct_check_storage_holds(t);
    PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
    return -1;
}
/* t's values where the host can read them: t itself (a new reference) on the CPU, a contiguous CPU copy of a tensor
 * on a device with memory of its own (CUDA); NULL with torch's error for a meta tensor (host_values.c). */
pct_tensor *pct_host_values(pct_tensor *t);
/* The first element of t where the host can read it: in t's memory on the CPU, else copied into buf; NULL with an
 * error (a meta tensor's, a failed copy). */
typedef struct pct_element_buf { _Alignas(16) unsigned char bytes[16]; } pct_element_buf;
const void *pct_element_ptr(pct_tensor *t, pct_element_buf *buf);
/* Fill the core's runtime table (Note [The runtime table]); the module init's first step. */
void pct_runtime_install(void);
/* Fill autograd's table of these types (Note [Python values for autograd]); right after pct_runtime_install. */
void pct_python_values_install(void);


/* _C._set_op_trace_hook (bindings.c, Note [Op trace hook]) */
PyObject *pct_py_set_op_trace_hook(PyObject *unused, PyObject *hook);
/* The Tensor type's slots that are no op of the table report too: pct_trace_begin() says whether this call is
 * reported (and then opens it); pct_trace_end reports name with args (a new tuple, stolen) and the result r (stolen,
 * NULL when the slot failed) to the hook under op index -1, and returns r, or NULL when r was NULL or the hook raised. */
int pct_trace_begin(void);
PyObject *pct_trace_end(const char *name, PyObject *args, PyObject *r);

/* pyctorch.dtype: one immortal instance per dtype. */
typedef struct pct_dtype_object { PyObject_HEAD int dtype; } pct_dtype_object;
extern PyTypeObject pct_DtypeType;
extern PyObject *pct_dtype_objects[PCT_NUM_DTYPES];
/* dtype object, str name, or Python type (float/int/bool) to a dtype; -1 with TypeError. */
int pct_dtype_from_object(PyObject *o);

/* pyctorch.device */
typedef struct pct_device_object { PyObject_HEAD int8_t type; int8_t index; } pct_device_object;
extern PyTypeObject pct_DeviceType;
int pct_device_from_object(PyObject *o, int8_t *type, int8_t *index);
PyObject *pct_device_new(int type, int index);

/* pyctorch.Size (a tuple subclass) */
extern PyTypeObject pct_SizeType;
PyObject *pct_size_new(int n, const int64_t *v);

/* _C's device functions: synchronize and streams (device_binding.c). */
int pct_device_binding_install(PyObject *module);
/* _C._cuda_* (cuda_binding.c) */
int pct_cuda_binding_install(PyObject *module);

/* _C._CachingAllocatorSim, the caching allocator over a simulated device, for its tests (caching_allocator_sim.c). */
int pct_caching_allocator_sim_install(PyObject *module);

/* pyctorch.Generator, the default generator and the seeding functions (generator.c). */
int pct_generator_install(PyObject *module);

/* An op's plain result tuple as its torch.return_types.<op_name> (<op_name>_out with out=), the fields of `returns`
 * (ops_returns.def); steals tuple, and returns anything but a tuple of that size as it is. NULL with an error. */
PyObject *pct_py_name_result(PyObject *tuple, const char *op_name, const pct_op_returns *returns, bool out);

/* Op function objects: torch.add, Tensor.add, Tensor.add_ */
extern PyTypeObject pct_OpFuncType;
int pct_bindings_install(PyObject *module);
/* The op-function object for a Python name and mode, for C callers (number protocol): inplace 0 gives torch.<name>
 * (Tensor.<name> when there is no function), 1 Tensor.<name>_, PCT_OPFUNC_METHOD Tensor.<name>. Borrowed. */
#define PCT_OPFUNC_METHOD 2
PyObject *pct_opfunc_get(const char *py_name, int inplace);

/* Python scalar -> pct_scalar; 0 on success, -1 (no exception) if not a scalar. */
int pct_scalar_from_object(PyObject *o, pct_scalar *s);
/* A Python scalar as a 0-d wrapped-number tensor (new reference) or NULL. */
pct_tensor *pct_wrap_scalar(const pct_scalar *s);
PyObject *pct_scalar_to_python(const void *p, int dtype);

/* Argument parsing against a signature; fills c->v. Returns 0, or -1 with *err a
 * new reference to a message string (no exception set). With err NULL no message is made
 * (an overloaded function reports every overload instead): -1 then only means no match.
 * PCT_PARSE_FAILED: an argument raised its own exception (set), whatever the overloads. */
#define PCT_PARSE_FAILED (-2)
int pct_parse_args(const pct_signature *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, pct_call *c, PyObject **err);
int pct_signature_parse(const char *schema, pct_signature *sig);
/* Parses every schema in pct_ops (the binding reads arguments against them); -1 with exception. */
int pct_ops_init(void);
/* An overload of canon's op (Note [Overload signatures]); -1 with exception. */
int pct_overload_parse(const char *schema, const pct_signature *canon, pct_signature *sig);
void pct_call_release(pct_call *c);
/* _C._call_op(op_index, values): bindings.c */
PyObject *pct_py_call_op(PyObject *m, PyObject *args);

/* pyctorch.UntypedStorage (storage_object.c): wrap a storage (new reference to a new
 * object; the storage is increfed), or the storage inside such an object (borrowed; NULL
 * when o is not one). Tensor.set_ and torch.frombuffer live in tensor_storage.c. */
extern PyTypeObject pct_StorageType;
PyObject *pct_storage_wrap(pct_storage *st);
pct_storage *pct_storage_from_object(PyObject *o);
int pct_storage_install(PyObject *module);
PyObject *pct_tensor_set_(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pct_tensor_resize_method(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pct_tensor_resize_as_method(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pct_py_frombuffer(PyObject *m, PyObject *args, PyObject *kw);


/* Tensor methods implemented directly in the binding (not ops): tensor_type.c */
extern PyMethodDef pct_tensor_methods[];
extern PyGetSetDef pct_tensor_getset[];

/* torch.tensor & friends (tensor_new.c) */
PyObject *pct_py_tensor(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pct_py_as_tensor(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pct_tensor_from_data(PyObject *data, int dtype, bool copy_always);
/* numpy interop (numpy_interop.c) */
PyObject *pct_py_from_numpy(PyObject *self, PyObject *arr);
PyObject *pct_tensor_numpy(PyObject *self, PyObject *args, PyObject *kwargs);
/* A new Tensor of `type` sharing src's storage and geometry (a detached alias; tensor_type.c). */
PyObject *pct_tensor_alias(PyTypeObject *type, pct_tensor *src, bool share_version);
int pct_numpy_is_array(PyObject *o);
/* The dtype of a NumPy scalar (np.int16(3) -> int16), or -1 for anything else (Python numbers
 * included) and for NumPy types pyctorch has no dtype for. Never raises. */
int pct_numpy_scalar_dtype(PyObject *o);
PyObject *pct_from_numpy_impl(PyObject *arr, bool copy);
PyObject *pct_tensor_tolist(PyObject *self, PyObject *unused);
PyObject *pct_tensor_item(PyObject *self, PyObject *unused);
#endif
