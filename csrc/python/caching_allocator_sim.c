/* caching_allocator_sim.c: _C._CachingAllocatorSim(capacity_bytes), the test-only handle on a caching allocator over
 * a simulated device (csrc/aten/caching_sim.h; Note [Caching allocator] in csrc/aten/caching_allocator.h):
 *   alloc(nbytes, stream=0) -> address (0 for 0 bytes)   free(address)   record_stream(address, stream)
 *   complete(stream)   empty_cache()   stats() -> torch.cuda.memory_stats's flat dict   reset_peak()
 *   reset_accumulated()   set_memory_fraction(f)   set_max_split_size(nbytes)   raw_calls() -> (allocs, frees)
 *   stress(threads, iterations) (threads without the GIL sharing the allocator)   close() (also on deallocation)
 * Errors are the allocator's (torch.OutOfMemoryError, RuntimeError...); AssertionError when a block's bytes changed
 * while it was live. */
#include "pyobjects.h"
#include "../aten/caching_sim.h"

typedef struct sim_object {
    PyObject_HEAD
    pct_caching_sim *sim; /* owned; NULL once closed */
} sim_object;

static pct_caching_sim *open_sim(sim_object *self)
{
    if (!self->sim) PyErr_SetString(PyExc_RuntimeError, "the caching allocator simulator is closed");
    return self->sim;
}

/* An address argument as a pointer: 0 and NULL on failure (check PyErr_Occurred). */
static void *address_arg(PyObject *o)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    return v == (unsigned long long)-1 && PyErr_Occurred() ? NULL : (void *)(uintptr_t)v;
}

static PyObject *sim_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"capacity_bytes", NULL};
    unsigned long long capacity;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "K:_CachingAllocatorSim", kwlist, &capacity)) return NULL;
    sim_object *self = (sim_object *)type->tp_alloc(type, 0);
    if (self && !(self->sim = pct_caching_sim_new((size_t)capacity))) Py_CLEAR(self);
    return (PyObject *)self;
}

static PyObject *sim_close(sim_object *self, PyObject *unused)
{
    (void)unused;
    pct_caching_sim *sim = self->sim;
    self->sim = NULL;
    if (sim && pct_caching_sim_close(sim) < 0) return NULL;
    Py_RETURN_NONE;
}

static void sim_dealloc(sim_object *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (self->sim && pct_caching_sim_close(self->sim) < 0) PyErr_WriteUnraisable((PyObject *)self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type); /* a heap type: each instance holds a reference to it */
}

static PyObject *sim_alloc(sim_object *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"nbytes", "stream", NULL};
    unsigned long long nbytes;
    long long stream = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "K|L:alloc", kwlist, &nbytes, &stream) || !open_sim(self))
        return NULL;
    void *ptr = pct_caching_sim_alloc(self->sim, (size_t)nbytes, stream);
    if (!ptr && nbytes) return NULL;
    return PyLong_FromUnsignedLongLong((uintptr_t)ptr);
}

static PyObject *sim_free(sim_object *self, PyObject *address)
{
    void *ptr = address_arg(address);
    if ((!ptr && PyErr_Occurred()) || !open_sim(self) || pct_caching_sim_free(self->sim, ptr) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_record_stream(sim_object *self, PyObject *args)
{
    PyObject *address;
    long long stream;
    if (!PyArg_ParseTuple(args, "OL:record_stream", &address, &stream)) return NULL;
    void *ptr = address_arg(address);
    if ((!ptr && PyErr_Occurred()) || !open_sim(self) ||
        pct_caching_record_stream(pct_caching_sim_allocator(self->sim), ptr, stream) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_complete(sim_object *self, PyObject *stream)
{
    long long s = PyLong_AsLongLong(stream);
    if ((s == -1 && PyErr_Occurred()) || !open_sim(self)) return NULL;
    pct_caching_sim_complete(self->sim, s);
    Py_RETURN_NONE;
}

static PyObject *sim_empty_cache(sim_object *self, PyObject *unused)
{
    (void)unused;
    if (!open_sim(self) || pct_caching_empty_cache(pct_caching_sim_allocator(self->sim)) < 0) return NULL;
    Py_RETURN_NONE;
}

static int add_stat(const char *key, int64_t value, void *dict)
{
    PyObject *v = PyLong_FromLongLong(value);
    int rc = v ? PyDict_SetItemString(dict, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

static PyObject *sim_stats(sim_object *self, PyObject *unused)
{
    (void)unused;
    if (!open_sim(self)) return NULL;
    pct_caching_stats stats;
    pct_caching_get_stats(pct_caching_sim_allocator(self->sim), &stats);
    PyObject *d = PyDict_New();
    if (d && pct_caching_stats_foreach(&stats, add_stat, d) != 0) Py_CLEAR(d);
    return d;
}

static PyObject *sim_reset_peak(sim_object *self, PyObject *unused)
{
    (void)unused;
    if (!open_sim(self)) return NULL;
    pct_caching_reset_peak(pct_caching_sim_allocator(self->sim));
    Py_RETURN_NONE;
}

static PyObject *sim_reset_accumulated(sim_object *self, PyObject *unused)
{
    (void)unused;
    if (!open_sim(self)) return NULL;
    pct_caching_reset_accumulated(pct_caching_sim_allocator(self->sim));
    Py_RETURN_NONE;
}

static PyObject *sim_set_memory_fraction(sim_object *self, PyObject *fraction)
{
    double f = PyFloat_AsDouble(fraction);
    if ((f == -1.0 && PyErr_Occurred()) || !open_sim(self) ||
        pct_caching_set_memory_fraction(pct_caching_sim_allocator(self->sim), f) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_set_max_split_size(sim_object *self, PyObject *nbytes)
{
    unsigned long long n = PyLong_AsUnsignedLongLong(nbytes);
    if ((n == (unsigned long long)-1 && PyErr_Occurred()) || !open_sim(self) ||
        pct_caching_set_max_split_size(pct_caching_sim_allocator(self->sim), (size_t)n) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_stress(sim_object *self, PyObject *args)
{
    int threads, iterations;
    /* the GIL stays with this thread, waiting for the workers: they never take it */
    if (!PyArg_ParseTuple(args, "ii:stress", &threads, &iterations) || !open_sim(self) ||
        pct_caching_sim_stress(self->sim, threads, iterations) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *sim_raw_calls(sim_object *self, PyObject *unused)
{
    (void)unused;
    if (!open_sim(self)) return NULL;
    int64_t allocs, frees;
    pct_caching_sim_raw_calls(self->sim, &allocs, &frees);
    return Py_BuildValue("(LL)", (long long)allocs, (long long)frees);
}

static PyMethodDef sim_methods[] = {
    {"alloc", (PyCFunction)(void (*)(void))sim_alloc, METH_VARARGS | METH_KEYWORDS,
     "alloc(nbytes, stream=0): the address of a new block (0 for 0 bytes), filled with its own byte pattern"},
    {"free", (PyCFunction)sim_free, METH_O, "free(address): checks the block's pattern, then frees it"},
    {"record_stream", (PyCFunction)sim_record_stream, METH_VARARGS, "record_stream(address, stream)"},
    {"complete", (PyCFunction)sim_complete, METH_O, "complete(stream): every event recorded on it so far completes"},
    {"empty_cache", (PyCFunction)sim_empty_cache, METH_NOARGS, NULL},
    {"stats", (PyCFunction)sim_stats, METH_NOARGS, "the statistics under torch.cuda.memory_stats's names"},
    {"reset_peak", (PyCFunction)sim_reset_peak, METH_NOARGS, NULL},
    {"reset_accumulated", (PyCFunction)sim_reset_accumulated, METH_NOARGS, NULL},
    {"set_memory_fraction", (PyCFunction)sim_set_memory_fraction, METH_O, NULL},
    {"set_max_split_size", (PyCFunction)sim_set_max_split_size, METH_O, NULL},
    {"stress", (PyCFunction)sim_stress, METH_VARARGS,
     "stress(threads, iterations): threads without the GIL allocating, recording streams and freeing at once"},
    {"raw_calls", (PyCFunction)sim_raw_calls, METH_NOARGS, "(raw allocations, raw frees) the device served"},
    {"close", (PyCFunction)sim_close, METH_NOARGS, "checks the live blocks and gives everything back"},
    {NULL, NULL, 0, NULL},
};

/* A heap type made from a spec: a test-only type needs no static storage. */
static PyType_Slot sim_slots[] = {
    {Py_tp_doc, "_CachingAllocatorSim(capacity_bytes): a caching allocator over a simulated device (tests only)"},
    {Py_tp_new, sim_new},
    {Py_tp_dealloc, sim_dealloc},
    {Py_tp_methods, sim_methods},
    {0, NULL},
};

static PyType_Spec sim_spec = {"pyctorch._C._CachingAllocatorSim", sizeof(sim_object), 0, Py_TPFLAGS_DEFAULT, sim_slots};

int pct_caching_allocator_sim_install(PyObject *module)
{
    PyObject *type = PyType_FromSpec(&sim_spec);
    if (!type) return -1;
    int rc = PyModule_AddObjectRef(module, "_CachingAllocatorSim", type);
    Py_DECREF(type);
    return rc;
}
