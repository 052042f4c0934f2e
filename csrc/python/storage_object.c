/* storage_object.c: torch.UntypedStorage as seen from Python: tensor.untyped_storage(),
 * or UntypedStorage(nbytes) for a fresh block. Holds one storage reference.
 *
 * A CPU storage exports its bytes through the buffer protocol (writable, 1-D, format
 * "B"), so bytes(memoryview(s)) reads it and f.readinto(memoryview(s)) fills it without a
 * copy; serialization writes and reads tensor data this way. Two storage objects compare
 * equal when they wrap the same block; `_cdata` is that block's address (torch's name),
 * a stable key while the storage is alive. */
#include "pyobjects.h"
#include "../aten/iter.h"

typedef struct pct_storage_object {
    PyObject_HEAD
    pct_storage *storage; /* owned reference */
} pct_storage_object;

/* The class storages made here get: pyctorch.UntypedStorage, the Python subclass (pyctorch/storage.py) that adds
 * torch's Python-level storage methods, once _set_storage_class named it; the C type until then. Owned reference. */
static PyTypeObject *storage_class = &pct_StorageType;

PyObject *pct_storage_wrap(pct_storage *st)
{
    pct_storage_object *s = (pct_storage_object *)storage_class->tp_alloc(storage_class, 0);
    if (!s) return NULL;
    pct_storage_incref(st);
    s->storage = st;
    return (PyObject *)s;
}

pct_storage *pct_storage_from_object(PyObject *o)
{
    return PyObject_TypeCheck(o, &pct_StorageType) ? ((pct_storage_object *)o)->storage : NULL;
}

/* UntypedStorage(size=0, *, device=None): size uninitialised bytes (as torch). */
static PyObject *storage_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size", "device", NULL};
    long long n = 0;
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|L$O:UntypedStorage", kwlist, &n, &dev)) return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "Trying to create storage with negative size %lld", n);
        return NULL;
    }
    int8_t dt = PCT_CPU, di = -1;
    if (dev != Py_None && pct_device_from_object(dev, &dt, &di) < 0) return NULL;
    if (dt != PCT_CPU) {
        PyErr_SetString(PyExc_RuntimeError, "Cannot allocate on a CUDA device: pyctorch was built without CUDA support");
        return NULL;
    }
    pct_storage *st = pct_storage_new_cpu((size_t)n);
    if (!st) return NULL;
    pct_storage_object *s = (pct_storage_object *)type->tp_alloc(type, 0);
    if (!s) { pct_storage_decref(st); return NULL; }
    s->storage = st;
    return (PyObject *)s;
}

static void storage_dealloc(pct_storage_object *s)
{
    pct_storage_decref(s->storage);
    Py_TYPE(s)->tp_free((PyObject *)s);
}
static PyObject *storage_data_ptr(pct_storage_object *s, PyObject *u) { (void)u; return PyLong_FromVoidPtr(s->storage->data); }
static PyObject *storage_nbytes(pct_storage_object *s, PyObject *u) { (void)u; return PyLong_FromSize_t(s->storage->nbytes); }

/* the object and the bytes it holds, as torch counts them (sys.getsizeof of a storage: torchinfo's size report) */
static PyObject *storage_sizeof(pct_storage_object *s, PyObject *u)
{
    (void)u;
    return PyLong_FromSize_t((size_t)Py_TYPE(s)->tp_basicsize + s->storage->nbytes);
}
static PyObject *storage_element_size(pct_storage_object *s, PyObject *u) { (void)s; (void)u; return PyLong_FromLong(1); }
/* A copy of the storage's bytes on another device (through the backends' copies); the storage itself where it is
 * already there. */
static PyObject *storage_to(pct_storage_object *s, int type, int index)
{
    pct_storage *st = s->storage;
    if (st->device_type == type && (index < 0 || index == st->device_index)) {
        Py_INCREF(s);
        return (PyObject *)s;
    }
    int64_t n = (int64_t)st->nbytes;
    pct_tensor *src = pct_tensor_from_storage(st, 1, &n, NULL, 0, PCT_UINT8);
    pct_tensor *dst = src ? pct_tensor_empty(1, &n, PCT_UINT8, type, index) : NULL;
    PyObject *r = dst && pct_copy_(dst, src) == 0 ? pct_storage_wrap(dst->storage) : NULL;
    Py_XDECREF(src);
    Py_XDECREF(dst);
    return r;
}
static PyObject *storage_cpu(pct_storage_object *s, PyObject *u) { (void)u; return storage_to(s, PCT_CPU, -1); }
/* cuda(device=None): the bytes on a CUDA device (the current one by default) */
static PyObject *storage_cuda(pct_storage_object *s, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device", "non_blocking", NULL};
    PyObject *device = Py_None;
    int non_blocking = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:cuda", kwlist, &device, &non_blocking)) return NULL;
    int8_t type = PCT_CUDA, index = -1;
    if (PyLong_Check(device)) index = (int8_t)PyLong_AsLong(device);
    else if (device != Py_None && pct_device_from_object(device, &type, &index) < 0) return NULL;
    if (type != PCT_CUDA) return PyErr_Format(PyExc_RuntimeError, "Invalid device, must be cuda device");
    return storage_to(s, PCT_CUDA, index);
}
static Py_ssize_t storage_len(pct_storage_object *s) { return (Py_ssize_t)s->storage->nbytes; }
static PyObject *storage_device(pct_storage_object *s, void *c) { (void)c; return pct_device_new(s->storage->device_type, s->storage->device_index); }
static PyObject *storage_is_cuda(pct_storage_object *s, void *c) { (void)c; return PyBool_FromLong(s->storage->device_type == PCT_CUDA); }
static PyObject *storage_cdata(pct_storage_object *s, void *c) { (void)c; return PyLong_FromVoidPtr(s->storage); }
static PyObject *storage_repr(pct_storage_object *s)
{
    return PyUnicode_FromFormat("<pyctorch.UntypedStorage of %zu bytes at %p>", s->storage->nbytes, s->storage->data);
}
static PyObject *storage_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(a) != Py_TYPE(b) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    int eq = ((pct_storage_object *)a)->storage == ((pct_storage_object *)b)->storage;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
static Py_hash_t storage_hash(pct_storage_object *s) { return _Py_HashPointer(s->storage); }

static int storage_getbuffer(pct_storage_object *s, Py_buffer *view, int flags)
{
    static char empty[1];
    pct_storage *st = s->storage;
    if (st->device_type == PCT_META) {
        PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
        view->obj = NULL;
        return -1;
    }
    if (st->device_type != PCT_CPU) {
        PyErr_SetString(PyExc_BufferError, "the memory of a CUDA storage is on the device: copy it to the CPU first");
        view->obj = NULL;
        return -1;
    }
    if (st->device_type != PCT_CPU) {
        PyErr_SetString(PyExc_BufferError, "only CPU storages export a buffer");
        return -1;
    }
    void *buf = st->nbytes ? st->data : (void *)empty;
    if (PyBuffer_FillInfo(view, (PyObject *)s, buf, (Py_ssize_t)st->nbytes, st->readonly, flags) < 0) return -1;
    atomic_fetch_add(&st->exports, 1);
    return 0;
}
static void storage_releasebuffer(pct_storage_object *s, Py_buffer *view)
{
    (void)view;
    atomic_fetch_sub(&s->storage->exports, 1);
}

/* ---- shared memory (Note [Shared storages] in csrc/aten/storage_shared.c) ---- */
static PyObject *storage_share_memory_(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (pct_storage_share(s->storage) < 0) return NULL;
    Py_INCREF(s);
    return (PyObject *)s;
}
static PyObject *storage_is_shared(pct_storage_object *s, PyObject *u) { (void)u; return PyBool_FromLong(pct_storage_is_shared(s->storage)); }
static PyObject *storage_resizable(pct_storage_object *s, PyObject *u)
{
    (void)u;
    return PyBool_FromLong(s->storage->resizable && s->storage->allocator != NULL);
}
/* (fd, nbytes): the descriptor stays owned by the storage; the caller duplicates it to send it */
static PyObject *storage_share_fd_cpu_(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (pct_storage_share(s->storage) < 0) return NULL;
    int fd = pct_storage_shared_fd(s->storage);
    if (fd < 0) return NULL;
    return Py_BuildValue("(in)", fd, (Py_ssize_t)s->storage->nbytes);
}
static PyObject *storage_wrap_new(PyTypeObject *type, pct_storage *st);
/* Note [Storages shared by name] in csrc/aten/storage_shared.c */
/* (manager_handle, name, nbytes) as torch: the manager handle is empty (no manager process) */
static PyObject *storage_share_filename_cpu_(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (pct_storage_share(s->storage) < 0) return NULL;
    if (!s->storage->shm_name) {
        PyErr_SetString(PyExc_RuntimeError, "_share_filename_cpu_: this storage was moved to shared memory under the "
                        "file_descriptor strategy and has no name");
        return NULL;
    }
    return Py_BuildValue("(y y n)", "", s->storage->shm_name, (Py_ssize_t)s->storage->nbytes);
}
static PyObject *storage_new_shared_filename_cpu(PyTypeObject *type, PyObject *args)
{
    const char *manager, *name; /* "y": bytes without embedded nulls */
    long long n;
    if (!PyArg_ParseTuple(args, "yyL:_new_shared_filename_cpu", &manager, &name, &n)) return NULL;
    (void)manager;
    if (n < 0) return PyErr_Format(PyExc_RuntimeError, "_new_shared_filename_cpu: negative size %lld", n);
    return storage_wrap_new(type, pct_storage_from_name(name, (size_t)n));
}
static PyObject *storage_shared_incref(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (s->storage->shm_name && pct_storage_name_uses(s->storage, 1) < 0) return NULL;
    Py_RETURN_NONE;
}
static PyObject *storage_shared_decref(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (s->storage->shm_name && pct_storage_name_uses(s->storage, -1) < 0) return NULL;
    Py_RETURN_NONE;
}
/* UntypedStorage._set_share_by_name(flag): share_memory_ then makes named files (file_system) */
static PyObject *storage_set_share_by_name(PyTypeObject *type, PyObject *flag)
{
    (void)type;
    int f = PyObject_IsTrue(flag);
    if (f < 0) return NULL;
    pct_shm_by_name = f;
    Py_RETURN_NONE;
}
static PyObject *storage_shared_name(pct_storage_object *s, PyObject *u)
{
    (void)u;
    if (!s->storage->shm_name) Py_RETURN_NONE;
    return PyUnicode_FromString(s->storage->shm_name);
}
/* UntypedStorage.resize_(nbytes): the storage made exactly nbytes (contents kept up to the smaller size) */
static PyObject *storage_resize_(pct_storage_object *s, PyObject *arg)
{
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 0) return PyErr_Format(PyExc_RuntimeError, "Trying to resize storage to a negative size %lld", n);
    if (pct_storage_resize_exact(s->storage, (size_t)n) < 0) return NULL;
    Py_INCREF(s);
    return (PyObject *)s;
}
/* _C._set_storage_class(cls): the subclass storages are made as (same layout: no instance dict or slots) */
static PyObject *storage_set_class(PyObject *unused, PyObject *cls)
{
    (void)unused;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &pct_StorageType) ||
        ((PyTypeObject *)cls)->tp_basicsize != pct_StorageType.tp_basicsize) {
        PyErr_SetString(PyExc_TypeError, "_set_storage_class expects a subclass of the storage type with "
                                         "__slots__ = ()");
        return NULL;
    }
    Py_INCREF(cls);
    PyTypeObject *old = storage_class;
    storage_class = (PyTypeObject *)cls;
    if (old != &pct_StorageType) Py_DECREF(old);
    Py_RETURN_NONE;
}
static PyMethodDef storage_module_methods[] = {
    {"_set_storage_class", storage_set_class, METH_O, "_set_storage_class(cls): the class of the storages made"},
    {NULL, NULL, 0, NULL},
};
static PyObject *storage_wrap_new(PyTypeObject *type, pct_storage *st)
{
    if (!st) return NULL;
    pct_storage_object *o = (pct_storage_object *)type->tp_alloc(type, 0);
    if (!o) { pct_storage_decref(st); return NULL; }
    o->storage = st;
    return (PyObject *)o;
}
/* UntypedStorage._new_shared_fd_cpu(fd, size): map size bytes of a shared memory file (fd is dup'ed) */
static PyObject *storage_new_shared_fd_cpu(PyTypeObject *type, PyObject *args)
{
    int fd;
    long long n;
    if (!PyArg_ParseTuple(args, "iL:_new_shared_fd_cpu", &fd, &n)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_RuntimeError, "_new_shared_fd_cpu: negative size %lld", n);
    return storage_wrap_new(type, pct_storage_from_fd(fd, (size_t)n));
}
/* UntypedStorage._new_shared(size, *, device=None): size zeroed bytes in shared memory */
static PyObject *storage_new_shared(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"size", "device", NULL};
    long long n;
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "L|$O:_new_shared", kwlist, &n, &dev)) return NULL;
    if (n < 0) return PyErr_Format(PyExc_RuntimeError, "Trying to create storage with negative size %lld", n);
    int8_t dt = PCT_CPU, di = -1;
    if (dev != Py_None && pct_device_from_object(dev, &dt, &di) < 0) return NULL;
    if (dt != PCT_CPU) {
        PyErr_SetString(PyExc_RuntimeError, "_new_shared: only CPU shared memory is supported in this build");
        return NULL;
    }
    return storage_wrap_new(type, pct_storage_new_shared((size_t)n));
}

static PyMethodDef storage_methods[] = {
    {"share_memory_", (PyCFunction)storage_share_memory_, METH_NOARGS, "move the bytes to shared memory (in place); returns self"},
    {"is_shared", (PyCFunction)storage_is_shared, METH_NOARGS, NULL},
    {"resizable", (PyCFunction)storage_resizable, METH_NOARGS, NULL},
    {"_share_fd_cpu_", (PyCFunction)storage_share_fd_cpu_, METH_NOARGS, "share, then (fd, nbytes); the storage keeps owning fd"},
    {"_new_shared_fd_cpu", (PyCFunction)storage_new_shared_fd_cpu, METH_VARARGS | METH_CLASS, "_new_shared_fd_cpu(fd, size)"},
    {"_share_filename_cpu_", (PyCFunction)storage_share_filename_cpu_, METH_NOARGS, "share, then (manager, name, nbytes)"},
    {"_new_shared_filename_cpu", (PyCFunction)storage_new_shared_filename_cpu, METH_VARARGS | METH_CLASS,
     "_new_shared_filename_cpu(manager, name, size): map a storage shared by name"},
    {"_shared_incref", (PyCFunction)storage_shared_incref, METH_NOARGS, "one more use of the storage's shared name"},
    {"_shared_decref", (PyCFunction)storage_shared_decref, METH_NOARGS, "one use fewer (the name goes at 0)"},
    {"_set_share_by_name", (PyCFunction)storage_set_share_by_name, METH_O | METH_CLASS, NULL},
    {"_shared_name", (PyCFunction)storage_shared_name, METH_NOARGS, "the /dev/shm name, or None"},
    {"_new_shared", (PyCFunction)(void (*)(void))storage_new_shared, METH_VARARGS | METH_KEYWORDS | METH_CLASS, "_new_shared(size)"},
    {"data_ptr", (PyCFunction)storage_data_ptr, METH_NOARGS, NULL},
    {"resize_", (PyCFunction)storage_resize_, METH_O, "resize_(nbytes): exactly nbytes, contents kept; returns self"},
    {"nbytes", (PyCFunction)storage_nbytes, METH_NOARGS, NULL},
    {"__sizeof__", (PyCFunction)storage_sizeof, METH_NOARGS, NULL},
    {"size", (PyCFunction)storage_nbytes, METH_NOARGS, NULL},
    {"element_size", (PyCFunction)storage_element_size, METH_NOARGS, NULL},
    {"cpu", (PyCFunction)storage_cpu, METH_NOARGS, "the bytes on the CPU (this storage where they are)"},
    {"cuda", (PyCFunction)(void (*)(void))storage_cuda, METH_VARARGS | METH_KEYWORDS, "the bytes on a CUDA device"},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef storage_getset[] = {
    {"device", (getter)storage_device, NULL, NULL, NULL},
    {"is_cuda", (getter)storage_is_cuda, NULL, NULL, NULL},
    {"_cdata", (getter)storage_cdata, NULL, "address of the underlying storage: equal for every view of it", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PySequenceMethods storage_as_sequence = {.sq_length = (lenfunc)storage_len};
static PyBufferProcs storage_as_buffer = {(getbufferproc)storage_getbuffer, (releasebufferproc)storage_releasebuffer};

PyTypeObject pct_StorageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch._C.StorageBase",
    .tp_basicsize = sizeof(pct_storage_object),
    .tp_dealloc = (destructor)storage_dealloc,
    .tp_repr = (reprfunc)storage_repr,
    .tp_as_sequence = &storage_as_sequence,
    .tp_as_buffer = &storage_as_buffer,
    .tp_hash = (hashfunc)storage_hash,
    .tp_richcompare = storage_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, /* pyctorch.UntypedStorage subclasses it */
    .tp_doc = "UntypedStorage(size=0, *, device=None): a block of bytes that tensors view",
    .tp_methods = storage_methods,
    .tp_getset = storage_getset,
    .tp_new = storage_new,
};

PyObject *pct_tensor_untyped_storage(PyObject *self, PyObject *unused)
{
    (void)unused;
    return pct_storage_wrap(((pct_tensor *)self)->storage);
}

int pct_storage_install(PyObject *module)
{
    if (PyType_Ready(&pct_StorageType) < 0) return -1;
    if (PyModule_AddFunctions(module, storage_module_methods) < 0) return -1;
    if (PyModule_AddObjectRef(module, "StorageBase", (PyObject *)&pct_StorageType) < 0) return -1;
    return PyModule_AddObjectRef(module, "UntypedStorage", (PyObject *)&pct_StorageType);
}
