/* generator.c: pyctorch.Generator (a Python object wrapping a pct_cpu_generator), the
 * process-wide default generator, and the module functions manual_seed, seed,
 * initial_seed, get_rng_state and set_rng_state.
 *
 * Note [Generator locking]: a generator is plain data that must be used by one thread
 * at a time (torch holds the generator's mutex for a whole kernel). Every generator
 * carries a PyThread lock. Kernels reach a generator only through
 * pct_generator_run(), which takes the lock around the whole fill; above
 * PCT_GENERATOR_NOGIL_WORK elements it also releases the GIL for the fill, so two
 * threads sampling from different generators run in parallel while two threads
 * sampling from the same generator are serialised, exactly as in torch. Whoever holds
 * a generator's lock never needs the GIL, so waiting for the lock with the GIL held
 * cannot deadlock; we still release the GIL while waiting so other threads progress.
 *
 * Note [Default generator seed]: as in torch, the default generator is seeded from
 * /dev/urandom at import (torch.initial_seed() differs between processes), while a
 * fresh Generator() starts from c10's default seed 67280421310721.
 */
#include "pyobjects.h"
#include "../aten/error.h"
#include "../aten/generator_state.h"
#include <pythread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Above this many elements a fill runs with the GIL released. */
#define PCT_GENERATOR_NOGIL_WORK 16384

typedef struct pct_generator_object {
    PyObject_HEAD
    pct_cpu_generator gen;
    PyThread_type_lock lock;
    PyObject *weakrefs;
} pct_generator_object;

static PyTypeObject pct_GeneratorType;
static PyObject *default_generator; /* owned for the life of the process */

#define GENERATOR_CHECK(o) PyObject_TypeCheck((o), &pct_GeneratorType)

/* ---- locking ---- */

static void gen_lock(pct_generator_object *g)
{
    if (PyThread_acquire_lock(g->lock, NOWAIT_LOCK)) return;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(g->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

static void gen_unlock(pct_generator_object *g) { PyThread_release_lock(g->lock); }

/* ---- the C interface used by the kernels (csrc/aten/cpu/random.c) ---- */

/* 0 when `obj` is NULL, None or a Generator; -1 with TypeError otherwise. */
int pct_generator_check(PyObject *obj, const char *opname)
{
    if (!obj || obj == Py_None || GENERATOR_CHECK(obj)) return 0;
    PyErr_Format(PyExc_TypeError, "%s(): argument 'generator' must be torch.Generator, not %s", opname,
                 Py_TYPE(obj)->tp_name);
    return -1;
}

/* Runs fn(generator, ctx) holding the generator's lock (the default generator when obj
 * is NULL or None), with the GIL released when work is large. Returns fn's result
 * (fn must not touch Python), or -2 with TypeError when obj is not a Generator. */
int pct_generator_run(PyObject *obj, int64_t work, int (*fn)(pct_cpu_generator *, void *), void *ctx)
{
    if (pct_generator_check(obj, "random") < 0) return -2;
    pct_generator_object *g = (pct_generator_object *)(obj && obj != Py_None ? obj : default_generator);
    if (!g) {
        PyErr_SetString(PyExc_RuntimeError, "pyctorch internal error: default generator missing; please report a bug");
        return -2;
    }
    int rc;
    Py_INCREF(g);
    if (work >= PCT_GENERATOR_NOGIL_WORK) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(g->lock, WAIT_LOCK);
        rc = fn(&g->gen, ctx);
        PyThread_release_lock(g->lock);
        Py_END_ALLOW_THREADS
    } else {
        gen_lock(g);
        rc = fn(&g->gen, ctx);
        gen_unlock(g);
    }
    Py_DECREF(g);
    return rc;
}

/* The default generator (borrowed). */
PyObject *pct_default_generator(void) { return default_generator; }

/* ---- seeds ---- */

/* 64 non-deterministic bits, as c10's getNonDeterministicRandom (which reads /dev/urandom). */
static uint64_t nondeterministic_seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        size_t got = fread(&s, sizeof s, 1, f);
        fclose(f);
        if (got == 1) return s;
    }
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    s = ((uint64_t)ts.tv_sec * UINT64_C(1000000007)) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&s;
    s ^= s >> 29;
    s *= UINT64_C(0xbf58476d1ce4e5b9);
    return s ^ (s >> 32);
}

/* torch's unpack_uint64: a Python int in [-2^63, 2^64) taken modulo 2^64. */
static int unpack_seed(PyObject *o, uint64_t *out)
{
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    if (v == -1 && PyErr_Occurred()) { Py_DECREF(i); return -1; }
    if (!overflow) {
        *out = (uint64_t)v;
        Py_DECREF(i);
        return 0;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(i);
        Py_DECREF(i);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
            return -1;
        }
        *out = (uint64_t)u;
        return 0;
    }
    Py_DECREF(i);
    PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
    return -1;
}

/* THPUtils_checkLong: an int (not a bool), or an integer-like such as a numpy integer. */
static int is_long_like(PyObject *o)
{
    if (PyBool_Check(o) || PCT_TENSOR_CHECK(o) || PyFloat_Check(o)) return 0;
    if (PyLong_Check(o)) return 1;
    PyTypeObject *tp = Py_TYPE(o);
    return tp->tp_as_number && tp->tp_as_number->nb_index && strncmp(tp->tp_name, "numpy.", 6) == 0 &&
           strstr(tp->tp_name, "bool") == NULL;
}

static PyObject *generator_alloc(PyTypeObject *type, uint64_t seed)
{
    pct_generator_object *g = (pct_generator_object *)type->tp_alloc(type, 0);
    if (!g) return NULL;
    g->lock = PyThread_allocate_lock();
    if (!g->lock) {
        Py_DECREF(g);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock for the generator");
        return NULL;
    }
    pct_generator_init(&g->gen, seed);
    return (PyObject *)g;
}

/* ---- pyctorch.Generator ---- */

static PyObject *generator_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *device = Py_None;
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "Generator() takes from 0 to 1 positional arguments but %zd were given", nargs);
        return NULL;
    }
    if (nargs == 1) device = PyTuple_GET_ITEM(args, 0);
    if (kwargs) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kwargs, &pos, &key, &value)) {
            if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "device") == 0 && nargs == 0) {
                device = value;
                continue;
            }
            if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "device") == 0)
                PyErr_SetString(PyExc_TypeError, "Generator() got multiple values for argument 'device'");
            else
                PyErr_Format(PyExc_TypeError, "Generator() got an unexpected keyword argument '%S'", key);
            return NULL;
        }
    }
    if (device != Py_None) {
        if (PyLong_Check(device)) {
            PyErr_SetString(PyExc_RuntimeError, "Cannot access accelerator device when none is available.");
            return NULL;
        }
        int8_t dt, di;
        if (pct_device_from_object(device, &dt, &di) < 0) return NULL;
        if (dt != PCT_CPU) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Cannot get CUDA generator without ATen_cuda library. pyctorch was built without CUDA "
                            "support, so only CPU generators are available.");
            return NULL;
        }
    }
    return generator_alloc(type, PCT_DEFAULT_SEED);
}

static void generator_dealloc(pct_generator_object *g)
{
    if (g->weakrefs) PyObject_ClearWeakRefs((PyObject *)g);
    if (g->lock) PyThread_free_lock(g->lock);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

static PyObject *gen_manual_seed(pct_generator_object *g, PyObject *seed)
{
    if (!is_long_like(seed)) {
        PyErr_Format(PyExc_RuntimeError, "manual_seed expected a long, but got %s",
                     PCT_TENSOR_CHECK(seed) ? "Tensor" : Py_TYPE(seed)->tp_name);
        return NULL;
    }
    uint64_t s;
    if (unpack_seed(seed, &s) < 0) return NULL;
    gen_lock(g);
    pct_generator_init(&g->gen, s);
    gen_unlock(g);
    Py_INCREF(g);
    return (PyObject *)g;
}

static PyObject *gen_seed(pct_generator_object *g, PyObject *unused)
{
    (void)unused;
    uint64_t s = nondeterministic_seed();
    gen_lock(g);
    pct_generator_init(&g->gen, s);
    gen_unlock(g);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *gen_initial_seed(pct_generator_object *g, PyObject *unused)
{
    (void)unused;
    gen_lock(g);
    uint64_t s = pct_generator_seed_value(&g->gen);
    gen_unlock(g);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *gen_get_state(pct_generator_object *g, PyObject *unused)
{
    (void)unused;
    int64_t n = PCT_GENERATOR_STATE_SIZE;
    pct_tensor *t = pct_tensor_empty(1, &n, PCT_UINT8, PCT_CPU, -1);
    if (!t) return NULL;
    gen_lock(g);
    pct_generator_get_state(&g->gen, (uint8_t *)pct_tensor_data(t));
    gen_unlock(g);
    return (PyObject *)t;
}

static int set_state_from(pct_generator_object *g, PyObject *o)
{
    if (!PCT_TENSOR_CHECK(o)) {
        PyErr_Format(PyExc_TypeError, "expected a torch.ByteTensor, but got %s", Py_TYPE(o)->tp_name);
        return -1;
    }
    pct_tensor *t = (pct_tensor *)o;
    if (t->dtype != PCT_UINT8 || t->device_type != PCT_CPU) {
        PyErr_SetString(PyExc_TypeError, "RNG state must be a torch.ByteTensor");
        return -1;
    }
    if (!pct_tensor_is_contiguous(t)) {
        PyErr_SetString(PyExc_RuntimeError, "RNG state must be contiguous");
        return -1;
    }
    if (t->numel != PCT_GENERATOR_STATE_SIZE) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected a CPUGeneratorImplState of size %d but found the input RNG state size to be %lld",
                     (int)PCT_GENERATOR_STATE_SIZE, (long long)t->numel);
        return -1;
    }
    if (pct_check_has_data(t) < 0) return -1;
    gen_lock(g);
    int rc = pct_generator_set_state(&g->gen, (const uint8_t *)pct_tensor_data(t), (size_t)t->numel);
    gen_unlock(g);
    if (rc < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Invalid mt19937 state");
        return -1;
    }
    return 0;
}

static PyObject *gen_set_state(pct_generator_object *g, PyObject *state)
{
    if (set_state_from(g, state) < 0) return NULL;
    Py_INCREF(g);
    return (PyObject *)g;
}

static PyObject *gen_clone_state(pct_generator_object *g, PyObject *unused)
{
    (void)unused;
    pct_generator_object *r = (pct_generator_object *)generator_alloc(Py_TYPE(g), PCT_DEFAULT_SEED);
    if (!r) return NULL;
    gen_lock(g);
    r->gen = g->gen;
    gen_unlock(g);
    return (PyObject *)r;
}

static PyObject *gen_graphsafe_get_state(pct_generator_object *g, PyObject *unused)
{
    (void)g; (void)unused;
    PyErr_SetString(PyExc_NotImplementedError, "graphsafe_get_state is not supported in this Generator");
    return NULL;
}

static PyObject *gen_graphsafe_set_state(pct_generator_object *g, PyObject *unused)
{
    (void)g; (void)unused;
    PyErr_SetString(PyExc_NotImplementedError, "graphsafe_set_state is not supported in this Generator");
    return NULL;
}

static PyObject *gen_offset_error(pct_generator_object *g, PyObject *const *args, Py_ssize_t nargs)
{
    (void)g; (void)args; (void)nargs;
    PyErr_SetString(PyExc_RuntimeError, "CPU Generator does not use offset");
    return NULL;
}

static PyObject *gen_get_device(pct_generator_object *g, void *unused)
{
    (void)g; (void)unused;
    return pct_device_new(PCT_CPU, -1);
}

/* pickling: (Generator, (device,), (initial_seed, offset, state)), as torch. */
static PyObject *gen_reduce(pct_generator_object *g, PyObject *unused)
{
    (void)unused;
    PyObject *dev = NULL, *seed = NULL, *state = NULL, *r = NULL;
    if (!(dev = pct_device_new(PCT_CPU, -1)) || !(seed = gen_initial_seed(g, NULL)) || !(state = gen_get_state(g, NULL)))
        goto done;
    r = Py_BuildValue("(O(O)(OOO))", (PyObject *)Py_TYPE(g), dev, seed, Py_None, state);
done:
    Py_XDECREF(dev);
    Py_XDECREF(seed);
    Py_XDECREF(state);
    return r;
}

static PyObject *gen_setstate(pct_generator_object *g, PyObject *st)
{
    if (!PyTuple_Check(st) || PyTuple_GET_SIZE(st) != 3) {
        PyErr_SetString(PyExc_TypeError, "Generator.__setstate__ expects a tuple (initial_seed, offset, state)");
        return NULL;
    }
    PyObject *r = gen_manual_seed(g, PyTuple_GET_ITEM(st, 0));
    if (!r) return NULL;
    Py_DECREF(r);
    if (PyTuple_GET_ITEM(st, 1) != Py_None) return gen_offset_error(g, NULL, 0);
    if (set_state_from(g, PyTuple_GET_ITEM(st, 2)) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef generator_methods[] = {
    {"manual_seed", (PyCFunction)gen_manual_seed, METH_O, "manual_seed(seed) -> Generator: sets the seed"},
    {"seed", (PyCFunction)gen_seed, METH_NOARGS, "seed() -> int: seeds from a non-deterministic source"},
    {"initial_seed", (PyCFunction)gen_initial_seed, METH_NOARGS, "initial_seed() -> int"},
    {"get_state", (PyCFunction)gen_get_state, METH_NOARGS, "get_state() -> torch.ByteTensor (torch's layout)"},
    {"set_state", (PyCFunction)gen_set_state, METH_O, "set_state(new_state) -> Generator"},
    {"clone_state", (PyCFunction)gen_clone_state, METH_NOARGS, "clone_state() -> Generator with a copy of the state"},
    {"graphsafe_get_state", (PyCFunction)gen_graphsafe_get_state, METH_NOARGS, NULL},
    {"graphsafe_set_state", (PyCFunction)gen_graphsafe_set_state, METH_O, NULL},
    {"get_offset", (PyCFunction)(void (*)(void))gen_offset_error, METH_FASTCALL, NULL},
    {"set_offset", (PyCFunction)(void (*)(void))gen_offset_error, METH_FASTCALL, NULL},
    {"__reduce__", (PyCFunction)gen_reduce, METH_NOARGS, NULL},
    {"__setstate__", (PyCFunction)gen_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef generator_getset[] = {
    {"device", (getter)gen_get_device, NULL, "the generator's device", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject pct_GeneratorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch._C.Generator",
    .tp_doc = "Generator(device='cpu'): a random number generator (mt19937, torch's state layout)",
    .tp_basicsize = sizeof(pct_generator_object),
    .tp_dealloc = (destructor)generator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_weaklistoffset = offsetof(pct_generator_object, weakrefs),
    .tp_methods = generator_methods,
    .tp_getset = generator_getset,
    .tp_new = generator_new,
};

/* ---- module functions (torch.random) ---- */

static PyObject *py_manual_seed(PyObject *m, PyObject *seed)
{
    (void)m;
    PyObject *i = PyNumber_Long(seed); /* torch does seed = int(seed) */
    if (!i) return NULL;
    PyObject *r = gen_manual_seed((pct_generator_object *)default_generator, i);
    Py_DECREF(i);
    return r;
}

static PyObject *py_seed(PyObject *m, PyObject *unused)
{
    (void)m;
    return gen_seed((pct_generator_object *)default_generator, unused);
}

static PyObject *py_initial_seed(PyObject *m, PyObject *unused)
{
    (void)m;
    return gen_initial_seed((pct_generator_object *)default_generator, unused);
}

static PyObject *py_get_rng_state(PyObject *m, PyObject *unused)
{
    (void)m;
    return gen_get_state((pct_generator_object *)default_generator, unused);
}

static PyObject *py_set_rng_state(PyObject *m, PyObject *state)
{
    (void)m;
    if (set_state_from((pct_generator_object *)default_generator, state) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef random_functions[] = {
    {"manual_seed", py_manual_seed, METH_O, "manual_seed(seed) -> Generator: seeds the default generator"},
    {"seed", py_seed, METH_NOARGS, "seed() -> int: seeds the default generator non-deterministically"},
    {"initial_seed", py_initial_seed, METH_NOARGS, "initial_seed() -> int: the default generator's seed"},
    {"get_rng_state", py_get_rng_state, METH_NOARGS, "get_rng_state() -> torch.ByteTensor"},
    {"set_rng_state", py_set_rng_state, METH_O, "set_rng_state(new_state)"},
    {NULL, NULL, 0, NULL},
};

/* After fork() in the child: a thread of the parent may have held the default
 * generator's lock at the time of the fork; that thread does not exist in the child,
 * so give the child a fresh lock (the old one is leaked, as it may be held). */
static PyObject *after_fork_child(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    pct_generator_object *g = (pct_generator_object *)default_generator;
    if (g && g->lock) {
        if (PyThread_acquire_lock(g->lock, NOWAIT_LOCK)) {
            PyThread_release_lock(g->lock);
        } else {
            PyThread_type_lock fresh = PyThread_allocate_lock();
            if (fresh) g->lock = fresh;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef after_fork_def = {"_generator_after_fork", after_fork_child, METH_NOARGS, NULL};

static int register_after_fork(void)
{
    PyObject *os = PyImport_ImportModule("os"), *reg = NULL, *fn = NULL, *args = NULL, *kw = NULL, *r = NULL;
    if (!os) return -1;
    reg = PyObject_GetAttrString(os, "register_at_fork");
    if (!reg) { /* not on this platform */
        PyErr_Clear();
        Py_DECREF(os);
        return 0;
    }
    int rc = -1;
    if ((fn = PyCFunction_New(&after_fork_def, NULL)) && (args = PyTuple_New(0)) &&
        (kw = Py_BuildValue("{s:O}", "after_in_child", fn)) && (r = PyObject_Call(reg, args, kw)))
        rc = 0;
    Py_XDECREF(r);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(fn);
    Py_DECREF(reg);
    Py_DECREF(os);
    return rc;
}

int pct_generator_install(PyObject *module)
{
    if (PyType_Ready(&pct_GeneratorType) < 0) return -1;
    if (!default_generator) {
        if (!(default_generator = generator_alloc(&pct_GeneratorType, nondeterministic_seed()))) return -1;
        if (register_after_fork() < 0) return -1;
    }
    if (PyModule_AddObjectRef(module, "Generator", (PyObject *)&pct_GeneratorType) < 0 ||
        PyModule_AddObjectRef(module, "default_generator", default_generator) < 0)
        return -1;
    return PyModule_AddFunctions(module, random_functions);
}
