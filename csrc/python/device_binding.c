/* device_binding.c: the device-level services of the backends (Note [Backends], Note [Streams] in
 * csrc/aten/backend.h) as _C functions, for torch.cpu / torch.cuda / torch.accelerator:
 *   _device_synchronize(device)          wait for the device's queued work
 *   _stream_new(device, priority=0)      a new stream's id
 *   _current_stream(device)              the device's current stream id
 *   _set_current_stream(device, stream)
 *   _stream_synchronize(device, stream)
 *   _stream_query(device, stream)        True when the stream is idle
 * A device is a torch.device, a string or an ordinal; the backend's errors become Python's. */
#include "pyobjects.h"
#include "../aten/backend.h"

/* The backend of a device argument and its index (none given: the CUDA backend's current device, -1, and the single
 * device 0 of the others). */
static const pct_backend *backend_arg(PyObject *device, int *index)
{
    int8_t type, idx;
    if (pct_device_from_object(device, &type, &idx) < 0) return NULL;
    *index = idx < 0 && type != PCT_CUDA ? 0 : idx;
    return pct_backend_of(type);
}

static PyObject *py_device_synchronize(PyObject *self, PyObject *device)
{
    (void)self;
    int index;
    const pct_backend *b = backend_arg(device, &index);
    if (!b || b->synchronize(index) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_stream_new(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *device;
    int priority = 0, index;
    if (!PyArg_ParseTuple(args, "O|i:_stream_new", &device, &priority)) return NULL;
    const pct_backend *b = backend_arg(device, &index);
    int64_t id = b ? b->stream_new(index, priority) : -1;
    return id < 0 ? NULL : PyLong_FromLongLong(id);
}

static PyObject *py_current_stream(PyObject *self, PyObject *device)
{
    (void)self;
    int index;
    const pct_backend *b = backend_arg(device, &index);
    int64_t id = b ? b->current_stream(index) : -1;
    return id < 0 ? NULL : PyLong_FromLongLong(id);
}

enum stream_op { STREAM_SET, STREAM_SYNCHRONIZE, STREAM_QUERY };

/* _set_current_stream, _stream_synchronize and _stream_query: (device, stream id) -> the slot's status, or -1 with the
 * error set */
static int stream_call(PyObject *args, const char *format, enum stream_op op)
{
    PyObject *device;
    long long stream;
    int index;
    if (!PyArg_ParseTuple(args, format, &device, &stream)) return -1;
    const pct_backend *b = backend_arg(device, &index);
    if (!b) return -1;
    switch (op) {
    case STREAM_SET: return b->set_current_stream(index, stream);
    case STREAM_SYNCHRONIZE: return b->stream_synchronize(index, stream);
    default: return b->stream_query(index, stream);
    }
}

static PyObject *py_set_current_stream(PyObject *self, PyObject *args)
{
    (void)self;
    if (stream_call(args, "OL:_set_current_stream", STREAM_SET) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_stream_synchronize(PyObject *self, PyObject *args)
{
    (void)self;
    if (stream_call(args, "OL:_stream_synchronize", STREAM_SYNCHRONIZE) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_stream_query(PyObject *self, PyObject *args)
{
    (void)self;
    int rc = stream_call(args, "OL:_stream_query", STREAM_QUERY);
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

/* torch.set_default_device's store: None (the CPU) or a device factories default to (dispatch.c) */
static PyObject *py_set_default_device(PyObject *self, PyObject *device)
{
    (void)self;
    if (device == Py_None) {
        pct_default_device = (pct_device_arg){.none = true, .type = PCT_CPU, .index = -1};
        Py_RETURN_NONE;
    }
    int8_t type, index;
    if (pct_device_from_object(device, &type, &index) < 0) return NULL;
    pct_default_device = (pct_device_arg){.none = type == PCT_CPU && index < 0, .type = type, .index = index};
    Py_RETURN_NONE;
}

/* torch.set_float32_matmul_precision and backends.cuda.matmul's reduced-precision flags, for the device GEMMs
 * (aten/gemm.h): _set_matmul_settings(precision 0 highest / 1 high / 2 medium, fp16_reduced, bf16_reduced) */
static PyObject *py_set_matmul_settings(PyObject *self, PyObject *args)
{
    (void)self;
    int precision, fp16, bf16;
    if (!PyArg_ParseTuple(args, "ipp:_set_matmul_settings", &precision, &fp16, &bf16)) return NULL;
    if (precision < PCT_MATMUL_HIGHEST || precision > PCT_MATMUL_MEDIUM) {
        PyErr_Format(PyExc_ValueError, "_set_matmul_settings: precision %d is not 0, 1 or 2", precision);
        return NULL;
    }
    pct_matmul = (pct_matmul_settings){.float32_precision = precision, .fp16_reduced_reduction = fp16,
                                       .bf16_reduced_reduction = bf16};
    Py_RETURN_NONE;
}

static PyMethodDef device_methods[] = {
    {"_set_default_device", py_set_default_device, METH_O, "The device factories default to (None: the CPU)."},
    {"_set_matmul_settings", py_set_matmul_settings, METH_VARARGS,
     "The device GEMMs' float32 precision (0 highest, 1 high, 2 medium) and reduced-precision reductions."},
    {"_device_synchronize", py_device_synchronize, METH_O, "Waits for the device's queued work."},
    {"_stream_new", py_stream_new, METH_VARARGS, "A new stream of the device: its id."},
    {"_current_stream", py_current_stream, METH_O, "The device's current stream id."},
    {"_set_current_stream", py_set_current_stream, METH_VARARGS, "Makes a stream the device's current one."},
    {"_stream_synchronize", py_stream_synchronize, METH_VARARGS, "Waits for a stream's queued work."},
    {"_stream_query", py_stream_query, METH_VARARGS, "True when the stream has no queued work."},
    {NULL, NULL, 0, NULL},
};

int pct_device_binding_install(PyObject *module) { return PyModule_AddFunctions(module, device_methods); }
