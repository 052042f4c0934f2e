/* storage_object.c: torch.UntypedStorage as seen from Python (tensor.untyped_storage()):
 * enough to compare data pointers and sizes of shared storages. Holds one storage
 * reference. */
#include "pyobjects.h"

typedef struct pct_storage_object {
    PyObject_HEAD
    pct_storage *storage; /* owned reference */
} pct_storage_object;

static void storage_dealloc(pct_storage_object *s)
{
    pct_storage_decref(s->storage);
    Py_TYPE(s)->tp_free((PyObject *)s);
}
static PyObject *storage_data_ptr(pct_storage_object *s, PyObject *u) { (void)u; return PyLong_FromVoidPtr(s->storage->data); }
static PyObject *storage_nbytes(pct_storage_object *s, PyObject *u) { (void)u; return PyLong_FromSize_t(s->storage->nbytes); }
static PyObject *storage_element_size(pct_storage_object *s, PyObject *u) { (void)s; (void)u; return PyLong_FromLong(1); }
static Py_ssize_t storage_len(pct_storage_object *s) { return (Py_ssize_t)s->storage->nbytes; }
static PyObject *storage_device(pct_storage_object *s, void *c) { (void)c; return pct_device_new(s->storage->device_type, s->storage->device_index); }
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

static PyMethodDef storage_methods[] = {
    {"data_ptr", (PyCFunction)storage_data_ptr, METH_NOARGS, NULL},
    {"nbytes", (PyCFunction)storage_nbytes, METH_NOARGS, NULL},
    {"size", (PyCFunction)storage_nbytes, METH_NOARGS, NULL},
    {"element_size", (PyCFunction)storage_element_size, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef storage_getset[] = {{"device", (getter)storage_device, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};
static PySequenceMethods storage_as_sequence = {.sq_length = (lenfunc)storage_len};

PyTypeObject pct_StorageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch.UntypedStorage",
    .tp_basicsize = sizeof(pct_storage_object),
    .tp_dealloc = (destructor)storage_dealloc,
    .tp_repr = (reprfunc)storage_repr,
    .tp_as_sequence = &storage_as_sequence,
    .tp_hash = (hashfunc)storage_hash,
    .tp_richcompare = storage_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = storage_methods,
    .tp_getset = storage_getset,
};

PyObject *pct_tensor_untyped_storage(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (!pct_StorageType.tp_flags || !(pct_StorageType.tp_flags & Py_TPFLAGS_READY)) {
        if (PyType_Ready(&pct_StorageType) < 0) return NULL;
    }
    pct_storage_object *s = PyObject_New(pct_storage_object, &pct_StorageType);
    if (!s) return NULL;
    pct_storage *st = ((pct_tensor *)self)->storage;
    pct_storage_incref(st);
    s->storage = st;
    return (PyObject *)s;
}
