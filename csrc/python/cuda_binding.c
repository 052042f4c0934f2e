/* cuda_binding.c: the CUDA backend's device services (csrc/aten/cuda_api.h) as _C functions, for pyctorch.cuda.
 * Nothing here loads the backend except a function that needs it (Note [Lazy CUDA]); _cuda_built and _cuda_loaded
 * answer without loading. Devices are ordinals, -1 the current device; streams are the backend's ids. */
#include "pyobjects.h"
#include "../aten/cuda_api.h"
#include "../aten/caching_allocator.h"
#include "../aten/iter.h"

static const char event_capsule[] = "pyctorch.cuda.event";

static PyObject *py_cuda_built(PyObject *m, PyObject *u) { (void)m; (void)u; return PyBool_FromLong(pct_cuda_built()); }
static PyObject *py_cuda_loaded(PyObject *m, PyObject *u) { (void)m; (void)u; return PyBool_FromLong(pct_cuda_loaded()); }

/* The devices usable: 0 in a build without CUDA, or without a driver or GPU (torch's device_count raises nothing). */
static PyObject *py_cuda_device_count(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_built()) return PyLong_FromLong(0);
    const pct_cuda_api *api = pct_cuda();
    return api ? PyLong_FromLong(api->device_count()) : NULL;
}

/* Why no device is usable (torch's warning text), or None. */
static PyObject *py_cuda_unavailable_reason(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_built()) return PyUnicode_FromString("Torch not compiled with CUDA enabled");
    const pct_cuda_api *api = pct_cuda();
    if (!api) return NULL;
    const char *why = api->unavailable_reason();
    if (why) return PyUnicode_FromString(why);
    Py_RETURN_NONE;
}

static PyObject *py_cuda_is_initialized(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_loaded()) Py_RETURN_FALSE;
    return PyBool_FromLong(pct_cuda()->is_initialized());
}

static PyObject *py_cuda_current_device(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    const pct_cuda_api *api = pct_cuda();
    int d = api ? api->current_device() : -1;
    return d < 0 ? NULL : PyLong_FromLong(d);
}

static PyObject *py_cuda_set_device(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    const pct_cuda_api *api = pct_cuda();
    if (!api || api->set_device(d) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_device_properties(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    const pct_cuda_api *api = pct_cuda();
    pct_cuda_device_properties p;
    if (!api || api->device_properties(d, &p) < 0) return NULL;
    return Py_BuildValue("{s:s,s:i,s:i,s:K,s:i,s:i,s:i,s:i,s:i,s:K,s:s,s:i,s:i,s:i}", "name", p.name, "major", p.major,
                         "minor", p.minor, "total_memory", (unsigned long long)p.total_memory, "multi_processor_count",
                         p.multi_processor_count, "is_integrated", p.is_integrated, "is_multi_gpu_board",
                         p.is_multi_gpu_board, "max_threads_per_multi_processor", p.max_threads_per_multi_processor,
                         "warp_size", p.warp_size, "L2_cache_size", (unsigned long long)p.l2_cache_size, "uuid", p.uuid,
                         "pci_bus_id", p.pci_bus_id, "pci_device_id", p.pci_device_id, "pci_domain_id",
                         p.pci_domain_id);
}

static PyObject *py_cuda_mem_get_info(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    const pct_cuda_api *api = pct_cuda();
    size_t free_bytes, total;
    if (!api || api->mem_get_info(d, &free_bytes, &total) < 0) return NULL;
    return Py_BuildValue("(KK)", (unsigned long long)free_bytes, (unsigned long long)total);
}

/* ---- events: a capsule owning the handle ---- */

static void event_release(PyObject *capsule)
{
    void *e = PyCapsule_GetPointer(capsule, event_capsule);
    if (e && pct_cuda_loaded()) pct_cuda()->event_destroy(e);
}

static void *event_of(PyObject *o) { return PyCapsule_GetPointer(o, event_capsule); }

static PyObject *py_cuda_event_new(PyObject *m, PyObject *args)
{
    (void)m;
    int device, timing, blocking;
    if (!PyArg_ParseTuple(args, "ipp:_cuda_event_new", &device, &timing, &blocking)) return NULL;
    const pct_cuda_api *api = pct_cuda();
    void *e = api ? api->event_new(device, timing, blocking) : NULL;
    if (!e) return NULL;
    PyObject *c = PyCapsule_New(e, event_capsule, event_release);
    if (!c) api->event_destroy(e);
    return c;
}

static PyObject *py_cuda_event_record(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ev;
    int device;
    long long stream;
    if (!PyArg_ParseTuple(args, "OiL:_cuda_event_record", &ev, &device, &stream)) return NULL;
    void *e = event_of(ev);
    if (!e || pct_cuda()->event_record(e, device, stream) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_query(PyObject *m, PyObject *ev)
{
    (void)m;
    void *e = event_of(ev);
    int rc = e ? pct_cuda()->event_query(e) : -1;
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

static PyObject *py_cuda_event_synchronize(PyObject *m, PyObject *ev)
{
    (void)m;
    void *e = event_of(ev);
    if (!e || pct_cuda()->event_synchronize(e) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_event_elapsed(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:_cuda_event_elapsed", &a, &b)) return NULL;
    void *ea = event_of(a), *eb = ea ? event_of(b) : NULL;
    float ms;
    if (!eb || pct_cuda()->event_elapsed_ms(ea, eb, &ms) < 0) return NULL;
    return PyFloat_FromDouble(ms);
}

static PyObject *py_cuda_stream_wait_event(PyObject *m, PyObject *args)
{
    (void)m;
    int device;
    long long stream;
    PyObject *ev;
    if (!PyArg_ParseTuple(args, "iLO:_cuda_stream_wait_event", &device, &stream, &ev)) return NULL;
    void *e = event_of(ev);
    if (!e || pct_cuda()->stream_wait_event(device, stream, e) < 0) return NULL;
    Py_RETURN_NONE;
}

/* the runtime's cudaStream_t of (device, stream id), as an int (torch.cuda.Stream.cuda_stream); 0 is the default */
static PyObject *py_cuda_stream_handle(PyObject *m, PyObject *args)
{
    (void)m;
    int device;
    long long stream;
    void *handle = NULL;
    if (!PyArg_ParseTuple(args, "iL:_cuda_stream_handle", &device, &stream)) return NULL;
    const pct_cuda_api *api = pct_cuda();
    if (!api || api->stream_handle(device, stream, &handle) < 0) return NULL;
    return PyLong_FromVoidPtr(handle);
}

/* ---- the caching allocator ---- */

static int add_stat(const char *key, int64_t value, void *ctx)
{
    PyObject *v = PyLong_FromLongLong(value);
    int rc = v ? PyDict_SetItemString((PyObject *)ctx, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

static PyObject *py_cuda_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    const pct_cuda_api *api = pct_cuda();
    pct_caching_stats st;
    if (!api || api->memory_stats(d, &st) < 0) return NULL;
    PyObject *dict = PyDict_New();
    if (dict && pct_caching_stats_foreach(&st, add_stat, dict) != 0) Py_CLEAR(dict);
    return dict;
}

static PyObject *py_cuda_empty_cache(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_loaded()) Py_RETURN_NONE; /* nothing was ever cached */
    if (pct_cuda()->empty_cache() < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_reset_peak_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    const pct_cuda_api *api = pct_cuda();
    if (!api || api->reset_peak_memory_stats(d) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_set_memory_fraction(PyObject *m, PyObject *args)
{
    (void)m;
    double fraction;
    int d;
    if (!PyArg_ParseTuple(args, "di:_cuda_set_memory_fraction", &fraction, &d)) return NULL;
    const pct_cuda_api *api = pct_cuda();
    if (!api || api->set_memory_fraction(d, fraction) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_cuda_record_stream(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *t;
    long long stream;
    if (!PyArg_ParseTuple(args, "O!L:_cuda_record_stream", &pct_TensorType, &t, &stream)) return NULL;
    const pct_tensor *x = (const pct_tensor *)t;
    if (x->device_type != PCT_CUDA) {
        PyErr_SetString(PyExc_RuntimeError, "record_stream: expected a CUDA tensor");
        return NULL;
    }
    if (pct_cuda()->record_stream(x->storage->data, x->device_index, stream) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- pinned memory ---- */

/* A CPU tensor of t's values in page-locked memory (t's geometry: pin_memory keeps the strides of a dense tensor). */
static PyObject *py_cuda_pin_memory(PyObject *m, PyObject *arg)
{
    (void)m;
    if (!PCT_TENSOR_CHECK(arg)) return PyErr_Format(PyExc_TypeError, "_cuda_pin_memory: expected a tensor");
    pct_tensor *t = (pct_tensor *)arg;
    if (t->device_type != PCT_CPU) {
        PyErr_Format(PyExc_RuntimeError, "cannot pin '%s' memory, only dense CPU tensors can be pinned",
                     t->device_type == PCT_CUDA ? "torch.cuda.FloatTensor" : "meta");
        return NULL;
    }
    const pct_cuda_api *api = pct_cuda();
    pct_storage *s = api ? api->pinned_storage_new((size_t)t->numel * (size_t)pct_dtype_itemsize[t->dtype]) : NULL;
    if (!s) return NULL;
    pct_tensor *r = pct_tensor_from_storage(s, t->ndim, t->sizes, NULL, 0, t->dtype);
    pct_storage_decref(s);
    if (r && pct_copy_(r, t) < 0) Py_CLEAR(r);
    if (r) atomic_store(&r->version->value, 0);
    return (PyObject *)r;
}

static PyObject *py_cuda_is_pinned(PyObject *m, PyObject *arg)
{
    (void)m;
    if (!PCT_TENSOR_CHECK(arg)) return PyErr_Format(PyExc_TypeError, "_cuda_is_pinned: expected a tensor");
    const pct_tensor *t = (const pct_tensor *)arg;
    if (t->device_type != PCT_CPU || !pct_cuda_built()) Py_RETURN_FALSE;
    const pct_cuda_api *api = pct_cuda();
    int rc = api ? api->is_pinned(t->storage->data) : -1;
    return rc < 0 ? NULL : PyBool_FromLong(rc);
}

/* The names of the table's ops with a CUDA kernel of their own (the others run the CPU fallback, Note [CUDA
 * fallback]); loads the backend. */
static PyObject *py_cuda_kernel_ops(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_built()) return PyList_New(0);
    if (!pct_cuda()) return NULL;
    PyObject *names = PyList_New(0);
    for (int i = 0; names && i < PCT_NUM_OPS; i++) {
        if (!pct_ops[i].kernels[PCT_CUDA]) continue;
        PyObject *name = PyUnicode_FromString(pct_ops[i].sig.name);
        if (!name || PyList_Append(names, name) < 0) Py_CLEAR(names);
        Py_XDECREF(name);
    }
    return names;
}

/* How many calls the CUDA backend's CPU fallback ran so far (0 where the backend is not built); loads the backend. */
static PyObject *py_cuda_fallback_runs(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (!pct_cuda_built()) return PyLong_FromLong(0);
    const pct_cuda_api *api = pct_cuda();
    return api ? PyLong_FromLongLong((long long)api->fallback_runs()) : NULL;
}

static PyMethodDef cuda_methods[] = {
    {"_cuda_built", py_cuda_built, METH_NOARGS, "Whether the CUDA backend was built (nothing is loaded)."},
    {"_cuda_kernel_ops", py_cuda_kernel_ops, METH_NOARGS, "The ops with a CUDA kernel of their own (not the fallback)."},
    {"_cuda_fallback_runs", py_cuda_fallback_runs, METH_NOARGS, "The calls the CUDA backend's CPU fallback ran so far."},
    {"_cuda_loaded", py_cuda_loaded, METH_NOARGS, "Whether the CUDA backend's library is loaded."},
    {"_cuda_device_count", py_cuda_device_count, METH_NOARGS, "The CUDA devices usable."},
    {"_cuda_unavailable_reason", py_cuda_unavailable_reason, METH_NOARGS, "Why no CUDA device is usable, or None."},
    {"_cuda_is_initialized", py_cuda_is_initialized, METH_NOARGS, "Whether a CUDA device was used."},
    {"_cuda_current_device", py_cuda_current_device, METH_NOARGS, "The current CUDA device."},
    {"_cuda_set_device", py_cuda_set_device, METH_O, "Makes a CUDA device current."},
    {"_cuda_device_properties", py_cuda_device_properties, METH_O, "A device's properties as a dict."},
    {"_cuda_mem_get_info", py_cuda_mem_get_info, METH_O, "(free, total) bytes of a device."},
    {"_cuda_event_new", py_cuda_event_new, METH_VARARGS, "A new event (device, enable_timing, blocking)."},
    {"_cuda_event_record", py_cuda_event_record, METH_VARARGS, "Records an event on (device, stream)."},
    {"_cuda_event_query", py_cuda_event_query, METH_O, "True when the event's work is done."},
    {"_cuda_event_synchronize", py_cuda_event_synchronize, METH_O, "Waits for an event."},
    {"_cuda_event_elapsed", py_cuda_event_elapsed, METH_VARARGS, "Milliseconds between two recorded events."},
    {"_cuda_stream_wait_event", py_cuda_stream_wait_event, METH_VARARGS, "Makes (device, stream) wait for an event."},
    {"_cuda_stream_handle", py_cuda_stream_handle, METH_VARARGS, "The cudaStream_t of (device, stream) as an int."},
    {"_cuda_memory_stats", py_cuda_memory_stats, METH_O, "The caching allocator's statistics of a device."},
    {"_cuda_empty_cache", py_cuda_empty_cache, METH_NOARGS, "Gives the cached device memory back."},
    {"_cuda_reset_peak_memory_stats", py_cuda_reset_peak_memory_stats, METH_O, "Peaks restart from now."},
    {"_cuda_set_memory_fraction", py_cuda_set_memory_fraction, METH_VARARGS, "Caps a device's reserved memory."},
    {"_cuda_record_stream", py_cuda_record_stream, METH_VARARGS, "Marks a tensor's memory as used on a stream."},
    {"_cuda_pin_memory", py_cuda_pin_memory, METH_O, "A copy of a CPU tensor in page-locked memory."},
    {"_cuda_is_pinned", py_cuda_is_pinned, METH_O, "Whether a CPU tensor's memory is page-locked."},
    {NULL, NULL, 0, NULL},
};

int pct_cuda_binding_install(PyObject *module) { return PyModule_AddFunctions(module, cuda_methods); }
