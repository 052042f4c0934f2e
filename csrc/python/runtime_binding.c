/* runtime_binding.c: the binding's side of the runtime table (Note [The runtime table] in csrc/aten/runtime.h):
 * Python exceptions and warnings, the interpreter lock, references and the few objects the core asks for; and of
 * autograd's table of the binding's types (Note [Python values for autograd] in csrc/autograd/python_values.h). */
#include "pyobjects.h"
#include "../aten/generator_state.h"
#include <stddef.h>
#include <string.h>

/* Note [Objects of the binding]: the core's handle is CPython's own struct, and its tensor header has PyObject's
 * layout, so the binding passes tensors and objects across with no conversion. */
_Static_assert(sizeof(pct_object_head) == sizeof(PyObject), "pct_object_head must have PyObject's size");
_Static_assert(offsetof(pct_object_head, type) == offsetof(PyObject, ob_type), "pct_object_head.type must be ob_type");
_Static_assert(offsetof(pct_tensor, head) == 0, "a tensor starts with its object header");

static PyObject *error_type(pct_error_kind kind)
{
    switch (kind) {
    case PCT_ERR_TYPE: return PyExc_TypeError;
    case PCT_ERR_VALUE: return PyExc_ValueError;
    case PCT_ERR_INDEX: return PyExc_IndexError;
    case PCT_ERR_NOT_IMPLEMENTED: return PyExc_NotImplementedError;
    case PCT_ERR_BUFFER: return PyExc_BufferError;
    case PCT_ERR_ATTRIBUTE: return PyExc_AttributeError;
    case PCT_ERR_ASSERTION: return PyExc_AssertionError;
    case PCT_ERR_MEMORY: return PyExc_MemoryError;
    case PCT_ERR_LINALG: return pct_LinAlgError ? pct_LinAlgError : PyExc_RuntimeError;
    case PCT_ERR_OUT_OF_MEMORY: return pct_OutOfMemoryError ? pct_OutOfMemoryError : PyExc_RuntimeError;
    default: return PyExc_RuntimeError;
    }
}

static void set_error(pct_error_kind kind, const char *message) { PyErr_SetString(error_type(kind), message); }
static void set_nomem(void) { PyErr_NoMemory(); }
static bool error_occurred(void) { return PyErr_Occurred() != NULL; }
static void error_clear(void) { PyErr_Clear(); }

static int warn(pct_warning_kind kind, const char *message)
{
    PyObject *category = kind == PCT_WARN_RUNTIME ? PyExc_RuntimeWarning
                         : kind == PCT_WARN_DEPRECATION ? PyExc_DeprecationWarning : PyExc_UserWarning;
    return PyErr_WarnEx(category, message, 1);
}

static void *release_lock(void) { return PyEval_SaveThread(); }
static void restore_lock(void *state) { PyEval_RestoreThread((PyThreadState *)state); }
static void incref(PyObject *o) { Py_INCREF(o); }
static void decref(PyObject *o) { Py_DECREF(o); }
static pct_tensor *tensor_alloc(void) { return (pct_tensor *)pct_TensorType.tp_alloc(&pct_TensorType, 0); }
static bool is_tensor(const PyObject *o) { return PCT_TENSOR_CHECK((PyObject *)o); }
static PyObject *none(void) { Py_RETURN_NONE; }
static bool is_none(const PyObject *o) { return o == Py_None; }
static const char *type_name(const PyObject *o) { return o == Py_None ? "NoneType" : Py_TYPE(o)->tp_name; }

static void release_all(int64_t n, PyObject *const *items)
{
    for (int64_t i = 0; i < n; i++) Py_XDECREF(items[i]);
}

static PyObject *tuple_steal(int64_t n, PyObject *const *items)
{
    for (int64_t i = 0; i < n; i++)
        if (!items[i]) { release_all(n, items); return NULL; }
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    if (!t) { release_all(n, items); return NULL; }
    for (int64_t i = 0; i < n; i++) PyTuple_SET_ITEM(t, (Py_ssize_t)i, items[i]);
    return t;
}

static PyObject *list_steal(int64_t n, PyObject *const *items)
{
    for (int64_t i = 0; i < n; i++)
        if (!items[i]) { release_all(n, items); return NULL; }
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l) { release_all(n, items); return NULL; }
    for (int64_t i = 0; i < n; i++) PyList_SET_ITEM(l, (Py_ssize_t)i, items[i]);
    return l;
}

static bool sequence_items(PyObject *o, PyObject *const **items, int64_t *n)
{
    if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
    *items = PySequence_Fast_ITEMS(o);
    *n = PySequence_Fast_GET_SIZE(o);
    return true;
}

static int index_value(PyObject *o, int64_t *value, int *overflow)
{
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int over = 0;
    long long v = overflow ? PyLong_AsLongLongAndOverflow(i, &over) : PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) return -2;
    if (overflow) {
        *overflow = over;
        if (over) v = over > 0 ? INT64_MAX : INT64_MIN;
    }
    *value = v;
    return 0;
}

static char *str(PyObject *o)
{
    PyObject *r = PyObject_Str(o);
    if (!r) return NULL;
    const char *s = PyUnicode_AsUTF8(r);
    char *copy = s ? strdup(s) : NULL;
    if (s && !copy) PyErr_NoMemory();
    Py_DECREF(r);
    return copy;
}

static bool is_int(const PyObject *o) { return PyLong_Check(o); }

int pct_generator_check(PyObject *obj, const char *opname);
int pct_generator_run(PyObject *obj, int64_t work, int (*fn)(pct_cpu_generator *, void *), void *ctx);

void pct_runtime_install(void)
{
    pct_runtime = (pct_runtime_table){
        .set_error = set_error,
        .set_nomem = set_nomem,
        .error_occurred = error_occurred,
        .error_clear = error_clear,
        .warn = warn,
        .release_lock = release_lock,
        .restore_lock = restore_lock,
        .incref = incref,
        .decref = decref,
        .tensor_alloc = tensor_alloc,
        .is_tensor = is_tensor,
        .none = none,
        .is_none = is_none,
        .tuple_steal = tuple_steal,
        .list_steal = list_steal,
        .type_name = type_name,
        .generator_check = pct_generator_check,
        .generator_run = pct_generator_run,
        .sequence_items = sequence_items,
        .index_value = index_value,
        .is_int = is_int,
        .str = str,
    };
}

static int dtype_of(PyObject *o)
{
    return PyObject_TypeCheck(o, &pct_DtypeType) ? ((pct_dtype_object *)o)->dtype : -1;
}

void pct_python_values_install(void)
{
    pct_python_values = (pct_python_values_table){
        .tensor_type = &pct_TensorType,
        .dtype_objects = pct_dtype_objects,
        .dtype_of = dtype_of,
        .device_new = pct_device_new,
        .size_new = pct_size_new,
        .tensor_alias = pct_tensor_alias,
        .trace_begin = pct_trace_begin,
        .trace_end = pct_trace_end,
    };
}
