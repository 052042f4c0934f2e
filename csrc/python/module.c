/* module.c: pyctorch._C: creates the types, the dtype objects and the op bindings. */
#include "python/c10d.h"
#include "pyobjects.h"
#include "../aten/cuda_api.h"
#include "extension_api.h"
#include "indexing.h"
#include "torch_function.h"
#include "../autograd/autograd.h"
#include "../autograd/profiler.h"
#include "../aten/iter.h"
#include "../aten/error.h"
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif

PyObject *pct_py_from_dlpack(PyObject *self, PyObject *obj);
#ifdef PCT_HAVE_OPENBLAS
void openblas_set_num_threads(int n); /* from OpenBLAS; it shares libgomp's pool in the openmp build */
#endif

static PyObject *py_get_default_dtype(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    PyObject *d = pct_dtype_objects[pct_default_dtype];
    Py_INCREF(d);
    return d;
}

static PyObject *py_set_default_dtype(PyObject *m, PyObject *d)
{
    (void)m;
    int dt = pct_dtype_from_object(d);
    if (dt < 0) return NULL;
    if (dt != PCT_FLOAT32 && dt != PCT_FLOAT64 && dt != PCT_FLOAT16 && dt != PCT_BFLOAT16) {
        PyErr_SetString(PyExc_TypeError, "only floating-point types are supported as the default type");
        return NULL;
    }
    pct_default_dtype = dt;
    Py_RETURN_NONE;
}

static PyObject *py_promote_types(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "O!O!:promote_types", &pct_DtypeType, &a, &pct_DtypeType, &b)) return NULL;
    int r = pct_promote_types_or_raise(((pct_dtype_object *)a)->dtype, ((pct_dtype_object *)b)->dtype);
    if (r < 0) return NULL;
    PyObject *d = pct_dtype_objects[r];
    Py_INCREF(d);
    return d;
}

static PyObject *py_can_cast(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "O!O!:can_cast", &pct_DtypeType, &a, &pct_DtypeType, &b)) return NULL;
    return PyBool_FromLong(pct_can_cast(((pct_dtype_object *)a)->dtype, ((pct_dtype_object *)b)->dtype));
}

/* torch.result_type(tensor1, tensor2): tensors or Python numbers */
static PyObject *py_result_type(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:result_type", &a, &b)) return NULL;
    pct_result_type_state st = PCT_RESULT_TYPE_STATE_INIT;
    PyObject *ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (PCT_TENSOR_CHECK(ops[i])) {
            pct_tensor *t = (pct_tensor *)ops[i];
            pct_result_type_update(&st, t->dtype, t->ndim == 0 ? 1 : 0);
        } else {
            pct_scalar s;
            if (pct_scalar_from_object(ops[i], &s) < 0) {
                PyErr_Format(PyExc_TypeError, "result_type(): argument must be Tensor or Number, not %s", Py_TYPE(ops[i])->tp_name);
                return NULL;
            }
            pct_result_type_update(&st, pct_scalar_is_uint64(&s) ? PCT_UINT64_SCALAR : pct_scalar_dtype(&s), 2);
        }
    }
    int r = pct_result_type_done(&st);
    if (r < 0) return NULL;
    PyObject *d = pct_dtype_objects[r];
    Py_INCREF(d);
    return d;
}

/* A forked child inherits libgomp's state but not its pool threads: its next parallel region would wait
 * forever for them (real torch hangs there). The child runs on one thread, which is what torch's
 * DataLoader workers ask for anyway, and set_num_threads there warns instead of raising the count. */
static int forked_child;
static void single_thread_after_fork(void)
{
    forked_child = 1;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
#ifdef PCT_HAVE_OPENBLAS
    openblas_set_num_threads(1);
#endif
}

static PyObject *py_set_num_threads(PyObject *m, PyObject *arg)
{
    (void)m;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n <= 0) { PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer"); return NULL; }
    if (forked_child && n > 1) {
        if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "set_num_threads(%ld) ignored: this process was forked, and the "
                             "OpenMP thread pool does not survive a fork; it stays at 1 thread", n) < 0)
            return NULL;
        Py_RETURN_NONE;
    }
#ifdef _OPENMP
    omp_set_num_threads((int)n);
#endif
#ifdef PCT_HAVE_OPENBLAS
    openblas_set_num_threads((int)n);
#endif
    Py_RETURN_NONE;
}

static PyObject *py_get_num_threads(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
#ifdef _OPENMP
    return PyLong_FromLong(omp_get_max_threads());
#else
    return PyLong_FromLong(1);
#endif
}

static PyObject *py_is_grad_enabled(PyObject *m, PyObject *u) { (void)m; (void)u; return PyBool_FromLong(pct_grad_enabled); }
static PyObject *py_set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    int v = PyObject_IsTrue(arg);
    if (v < 0) return NULL;
    pct_grad_enabled = v;
    Py_RETURN_NONE;
}

static PyObject *py_build_info(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return Py_BuildValue("{s:O,s:O,s:O}",
#ifdef _OPENMP
                         "openmp", Py_True,
#else
                         "openmp", Py_False,
#endif
#ifdef PCT_HAVE_OPENBLAS
                         "openblas", Py_True,
#else
                         "openblas", Py_False,
#endif
                         "cuda", pct_cuda_built() ? Py_True : Py_False);
}

/* Each op's PCT_GRAD formulas (NULL-terminated), NULL where the op has no PCT_GRAD line: the same X-macro
 * expansion record.c compiles, here only to show the formulas to Python (tests read them from _op_table). */
static const char *const *const op_grad_formulas[PCT_NUM_OPS] = {
#define PCT_GRAD(id, ...) [PCT_OP_##id] = (const char *const[]){__VA_ARGS__, NULL},
#include "../aten/ops.def"
};

/* formulas: a tuple of the op's backward formula strings (("non_differentiable",) for a declared
 * non-differentiable op), or None where the op has no PCT_GRAD line. */
static PyObject *op_formulas_tuple(int op_index)
{
    return pct_strings_tuple(op_grad_formulas[op_index]);
}

/* The field names of an op's named result tuple (ops_returns.def), empty for the others. */
static PyObject *op_returns_tuple(int op_index)
{
    const pct_op_returns *r = pct_op_returns_of(op_index);
    PyObject *t = PyTuple_New(r ? r->n : 0);
    for (int i = 0; t && r && i < r->n; i++) {
        PyObject *s = PyUnicode_FromString(r->fields[i]);
        if (!s) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

/* _C._op_table(): the operator table as data, one dict per entry (tests and docs read it). */
static PyObject *pct_py_op_table(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    static const char *const kinds[] = {"custom", "unary", "binary", "composite"};
    static const char *const promos[] = {"default", "int_to_float", "compare", "bool_out"};
    PyObject *list = PyList_New(PCT_NUM_OPS);
    for (int i = 0; list && i < PCT_NUM_OPS; i++) {
        const pct_op *op = &pct_ops[i];
        char variants[4] = {0};
        int n = 0;
        if (op->variants & PCT_V_FUNC) variants[n++] = 'F';
        if (op->variants & PCT_V_METHOD) variants[n++] = 'M';
        if (op->variants & PCT_V_INPLACE) variants[n++] = 'I';
        PyObject *formulas = op_formulas_tuple(i), *returns = op_returns_tuple(i);
        PyObject *d = formulas && returns
                          ? Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s,s:N,s:N}", "id", op->id, "name", op->sig.name,
                                          "schema", op->schema, "variants", variants, "kind", kinds[op->kind],
                                          "promotion", promos[op->promotion], "formulas", formulas, "returns", returns)
                          : NULL;
        if (!formulas || !returns) { Py_XDECREF(formulas); Py_XDECREF(returns); } /* else Py_BuildValue took both */
        if (!d) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

/* The Python composites of the table (PCT_COMPOSITE_PY, ops_composite_py.def), in table order. */
static const struct { const char *id, *schema, *impl; unsigned variants; } py_composites[] = {
#define PCT_COMPOSITE_PY(id, schema, variants, impl) {#id, schema, impl, variants},
#include "../aten/ops.def"
};

/* _C._py_composite_table(): the PCT_COMPOSITE_PY entries as data (pyctorch/_composites.py binds them), one dict per
 * entry with _op_table()'s keys (kind "composite_py") and "impl", the "module:function" that computes it. */
static PyObject *pct_py_composite_table(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    const Py_ssize_t n = (Py_ssize_t)(sizeof py_composites / sizeof py_composites[0]);
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        char variants[4] = {0};
        int k = 0;
        if (py_composites[i].variants & PCT_V_FUNC) variants[k++] = 'F';
        if (py_composites[i].variants & PCT_V_METHOD) variants[k++] = 'M';
        if (py_composites[i].variants & PCT_V_INPLACE) variants[k++] = 'I';
        const char *schema = py_composites[i].schema, *paren = strchr(schema, '(');
        PyObject *name = PyUnicode_FromStringAndSize(schema, paren ? paren - schema : 0);
        PyObject *d = name ? Py_BuildValue("{s:s,s:N,s:s,s:s,s:s,s:s,s:s}", "id", py_composites[i].id, "name", name,
                                           "schema", schema, "variants", variants, "kind", "composite_py",
                                           "promotion", "default", "impl", py_composites[i].impl) : NULL;
        if (!d) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

/* _C._add_tensor_methods(dict): attach Tensor methods written in Python (pyctorch/_tensor.py assembles them). */
static PyObject *py_add_tensor_methods(PyObject *self, PyObject *methods)
{
    (void)self;
    if (!PyDict_Check(methods)) { PyErr_SetString(PyExc_TypeError, "expected a dict"); return NULL; }
    if (PyDict_Update(pct_TensorType.tp_dict, methods) < 0) return NULL;
    PyType_Modified(&pct_TensorType);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"tensor", (PyCFunction)(void (*)(void))pct_py_tensor, METH_VARARGS | METH_KEYWORDS, "tensor(data, *, dtype=None, device=None, requires_grad=False)"},
    {"as_tensor", (PyCFunction)(void (*)(void))pct_py_as_tensor, METH_VARARGS | METH_KEYWORDS, "as_tensor(data, dtype=None, device=None)"},
    {"from_numpy", pct_py_from_numpy, METH_O, "from_numpy(ndarray): a tensor sharing the array's memory"},
    {"from_dlpack", pct_py_from_dlpack, METH_O, "from_dlpack(obj): a tensor sharing a DLPack producer's memory"},
    {"frombuffer", (PyCFunction)(void (*)(void))pct_py_frombuffer, METH_VARARGS | METH_KEYWORDS, "frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False): a 1-D tensor sharing a buffer's memory"},
    {"get_default_dtype", py_get_default_dtype, METH_NOARGS, NULL},
    {"set_default_dtype", py_set_default_dtype, METH_O, NULL},
    {"promote_types", py_promote_types, METH_VARARGS, NULL},
    {"can_cast", py_can_cast, METH_VARARGS, NULL},
    {"result_type", py_result_type, METH_VARARGS, NULL},
    {"set_num_threads", py_set_num_threads, METH_O, NULL},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, NULL},
    {"is_grad_enabled", py_is_grad_enabled, METH_NOARGS, NULL},
    {"_set_grad_enabled", py_set_grad_enabled, METH_O, NULL},
    {"_build_info", py_build_info, METH_NOARGS, NULL},
    {"_add_tensor_methods", py_add_tensor_methods, METH_O, NULL},
    {"_index_accumulate", pct_py_index_accumulate, METH_VARARGS, NULL},
    {"_set_op_trace_hook", pct_py_set_op_trace_hook, METH_O, "_set_op_trace_hook(hook or None): report each op call made from Python to hook (torch.export's capture); returns the previous hook"},
    {"_call_op", pct_py_call_op, METH_VARARGS, "an op by its table index with one value per parameter (forward AD)"},
    {"_op_table", pct_py_op_table, METH_NOARGS, "the operator table: one dict per entry (id, name, schema, variants, kind, promotion, formulas)"},
    {"_py_composite_table", pct_py_composite_table, METH_NOARGS, "the Python composites of the operator table: one dict per entry (as _op_table's, with impl)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "pyctorch._C", "pyctorch's C core", -1, module_methods,
                                        NULL, NULL, NULL, NULL};

/* Names of the dtype objects, with torch's aliases. */
static const struct { const char *name; int dtype; } dtype_names[] = {
    {"bool", PCT_BOOL}, {"uint8", PCT_UINT8}, {"int8", PCT_INT8}, {"int16", PCT_INT16}, {"short", PCT_INT16},
    {"int32", PCT_INT32}, {"int", PCT_INT32}, {"int64", PCT_INT64}, {"long", PCT_INT64},
    {"float16", PCT_FLOAT16}, {"half", PCT_FLOAT16}, {"bfloat16", PCT_BFLOAT16},
    {"float32", PCT_FLOAT32}, {"float", PCT_FLOAT32}, {"float64", PCT_FLOAT64}, {"double", PCT_FLOAT64},
    {"uint16", PCT_UINT16}, {"uint32", PCT_UINT32}, {"uint64", PCT_UINT64},
    {"complex32", PCT_COMPLEX32}, {"chalf", PCT_COMPLEX32}, {"complex64", PCT_COMPLEX64}, {"cfloat", PCT_COMPLEX64},
    {"complex128", PCT_COMPLEX128}, {"cdouble", PCT_COMPLEX128}, {"float8_e5m2", PCT_FLOAT8_E5M2},
    {"float8_e4m3fn", PCT_FLOAT8_E4M3FN}, {"float8_e5m2fnuz", PCT_FLOAT8_E5M2FNUZ},
    {"float8_e4m3fnuz", PCT_FLOAT8_E4M3FNUZ}, {"float8_e8m0fnu", PCT_FLOAT8_E8M0FNU},
};

PyObject *pct_LinAlgError; /* owned by the module init for the life of the process */
PyObject *pct_OutOfMemoryError; /* the same */

PyMODINIT_FUNC PyInit__C(void)
{
    pct_runtime_install();
    pct_python_values_install();
    pct_TensorType.tp_methods = pct_tensor_methods;
    pct_tf_wrap_getsets(pct_tensor_getset); /* Note [Torch function check] */
    pct_TensorType.tp_getset = pct_tensor_getset;
    pct_SizeType.tp_base = &PyTuple_Type;
    if (PyType_Ready(&pct_TensorType) < 0 || PyType_Ready(&pct_DtypeType) < 0 || PyType_Ready(&pct_DeviceType) < 0 ||
        PyType_Ready(&pct_SizeType) < 0 || PyType_Ready(&pct_OpFuncType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    for (int d = 0; d < PCT_NUM_DTYPES; d++) {
        pct_dtype_object *o = PyObject_New(pct_dtype_object, &pct_DtypeType);
        if (!o) goto fail;
        o->dtype = d;
        pct_dtype_objects[d] = (PyObject *)o; /* kept for the life of the process */
    }
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (PyModule_AddObjectRef(m, dtype_names[i].name, pct_dtype_objects[dtype_names[i].dtype]) < 0) goto fail;
    if (PyModule_AddObjectRef(m, "Tensor", (PyObject *)&pct_TensorType) < 0 ||
        PyModule_AddObjectRef(m, "dtype", (PyObject *)&pct_DtypeType) < 0 ||
        PyModule_AddObjectRef(m, "device", (PyObject *)&pct_DeviceType) < 0 ||
        PyModule_AddObjectRef(m, "Size", (PyObject *)&pct_SizeType) < 0)
        goto fail;
    if (!(pct_LinAlgError = PyErr_NewException("torch._C._LinAlgError", PyExc_RuntimeError, NULL)) ||
        PyModule_AddObjectRef(m, "_LinAlgError", pct_LinAlgError) < 0)
        goto fail;
    if (!(pct_OutOfMemoryError = PyErr_NewException("torch.OutOfMemoryError", PyExc_RuntimeError, NULL)) ||
        PyModule_AddObjectRef(m, "OutOfMemoryError", pct_OutOfMemoryError) < 0)
        goto fail;
    PyObject *prio = PyLong_FromLong(1000);
    if (!prio || PyDict_SetItemString(pct_TensorType.tp_dict, "__array_priority__", prio) < 0) { Py_XDECREF(prio); goto fail; }
    Py_DECREF(prio);
    if (pthread_atfork(NULL, NULL, single_thread_after_fork) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "pyctorch: pthread_atfork failed");
        goto fail;
    }
    if (pct_ops_init() < 0 || pct_bindings_install(m) < 0 || pct_autograd_install(m) < 0 ||
        pct_torch_function_install(m) < 0)
        goto fail;
    if (pct_generator_install(m) < 0 || pct_storage_install(m) < 0 || pct_device_binding_install(m) < 0 ||
        pct_cuda_binding_install(m) < 0 || pct_caching_allocator_sim_install(m) < 0)
        goto fail;
    if (pct_profiler_install(m) < 0) goto fail; /* profiler and autocast (csrc/autograd/profiler.h) */
    if (pct_distributed_install(m) < 0) goto fail; /* _distributed_c10d: stores, Gloo (csrc/python/c10d.h) */
    if (pct_extension_api_install(m) < 0) goto fail; /* _C._C_API (Note [The extension C API]) */
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
