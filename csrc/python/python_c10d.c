/* python_c10d.c: the Python face of the stores (torch._C._distributed_c10d's Store, TCPStore,
 * HashStore, FileStore, PrefixStore) and the Dist* exceptions, installed as the module
 * pyctorch._C._distributed_c10d. Every blocking store call runs with the GIL released. */
#include <Python.h>
#include <datetime.h>
#include <string.h>

#include "aten/error.h"
#include "python/c10d.h"

PyObject *pct_DistError, *pct_DistStoreError, *pct_DistNetworkError, *pct_DistBackendError;

/* ---- helpers ----------------------------------------------------------------------------- */

int pct_c10d_raise(int status, const pct_store_err *err)
{
    PyObject *exc = status == PCT_STORE_TIMEOUT ? pct_DistStoreError
                    : status == PCT_STORE_NETWORK ? pct_DistNetworkError
                    : status == PCT_STORE_VALUE ? PyExc_ValueError : PyExc_RuntimeError;
    PyErr_SetString(exc, err->msg);
    return -1;
}

/* datetime's C API, imported on first use so `import pyctorch` does not load datetime. */
static int need_datetime(void)
{
    if (!PyDateTimeAPI) PyDateTime_IMPORT;
    return PyDateTimeAPI ? 0 : -1;
}

int pct_timedelta_ms(PyObject *o, int64_t *ms)
{
    if (need_datetime() < 0) return -1;
    if (!PyDelta_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a datetime.timedelta, got %s", Py_TYPE(o)->tp_name);
        return -1;
    }
    *ms = (int64_t)PyDateTime_DELTA_GET_DAYS(o) * 86400000 + (int64_t)PyDateTime_DELTA_GET_SECONDS(o) * 1000 +
          PyDateTime_DELTA_GET_MICROSECONDS(o) / 1000;
    return 0;
}

PyObject *pct_timedelta_from_ms(int64_t ms)
{
    if (need_datetime() < 0) return NULL;
    return PyDelta_FromDSU((int)(ms / 86400000), (int)((ms % 86400000) / 1000), (int)(ms % 1000) * 1000);
}

/* A key: a str (UTF-8), borrowed from the object. */
static const char *key_of(PyObject *o, Py_ssize_t *len)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "store keys must be str, got %s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(o, len);
}

/* A value: str (UTF-8), bytes or bytearray, borrowed from the object. */
static const char *value_of(PyObject *o, Py_ssize_t *len)
{
    if (PyUnicode_Check(o)) return PyUnicode_AsUTF8AndSize(o, len);
    if (PyBytes_Check(o)) { *len = PyBytes_GET_SIZE(o); return PyBytes_AS_STRING(o); }
    if (PyByteArray_Check(o)) { *len = PyByteArray_GET_SIZE(o); return PyByteArray_AS_STRING(o); }
    PyErr_Format(PyExc_TypeError, "store values must be str or bytes, got %s", Py_TYPE(o)->tp_name);
    return NULL;
}

/* The keys of a sequence as parallel arrays of borrowed UTF-8 pointers. Ownership: fast (the
 * sequence as a list or tuple, which keeps the key strings alive), keys and lens are owned and
 * released by key_list_clear. */
typedef struct key_list {
    PyObject *fast;
    const char **keys;
    size_t *lens;
    Py_ssize_t n;
} key_list;

static void key_list_clear(key_list *kl)
{
    PyMem_Free(kl->keys);
    PyMem_Free(kl->lens);
    Py_CLEAR(kl->fast);
    kl->keys = NULL;
    kl->lens = NULL;
}

static int key_list_init(key_list *kl, PyObject *seq)
{
    memset(kl, 0, sizeof *kl);
    PCT_TRY(kl->fast = PySequence_Fast(seq, "keys must be a list of str"));
    kl->n = PySequence_Fast_GET_SIZE(kl->fast);
    kl->keys = PyMem_Malloc((size_t)(kl->n ? kl->n : 1) * sizeof *kl->keys);
    kl->lens = PyMem_Malloc((size_t)(kl->n ? kl->n : 1) * sizeof *kl->lens);
    if (!kl->keys || !kl->lens) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < kl->n; i++) {
        Py_ssize_t l;
        PCT_TRY(kl->keys[i] = key_of(PySequence_Fast_GET_ITEM(kl->fast, i), &l));
        kl->lens[i] = (size_t)l;
    }
    return 0;
fail:
    key_list_clear(kl);
    return -1;
}

static pct_store *store_of(PyObject *self)
{
    pct_store *s = ((pct_store_object *)self)->store;
    if (!s) PyErr_SetString(PyExc_RuntimeError, "this Store has no C implementation (a Python subclass must override its methods)");
    return s;
}

pct_store *pct_store_from_object(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &pct_StoreType)) {
        PyErr_Format(PyExc_TypeError, "expected a torch.distributed.Store, got %s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    return store_of(o);
}

/* Runs one request without the GIL; -1 with the store's exception. */
static int run_request(pct_store *s, const pct_kv_req *req, pct_kv_rep *rep)
{
    pct_store_err err;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = s->vt->request(s, req, rep, &err);
    Py_END_ALLOW_THREADS
    return st == PCT_STORE_OK ? 0 : pct_c10d_raise(st, &err);
}

static PyObject *get_value(pct_store *s, const char *key, size_t klen)
{
    pct_kv_rep rep = {0};
    pct_store_err err;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pct_store_get(s, key, klen, &rep, &err);
    Py_END_ALLOW_THREADS
    if (st != PCT_STORE_OK) { pct_kv_rep_clear(&rep); pct_c10d_raise(st, &err); return NULL; }
    PyObject *out = PyBytes_FromStringAndSize(rep.data ? rep.data : "", (Py_ssize_t)rep.len);
    pct_kv_rep_clear(&rep);
    return out;
}

static PyObject *set_value(pct_store *s, PyObject *key, PyObject *value)
{
    Py_ssize_t kl, vl;
    const char *k = key_of(key, &kl), *v = k ? value_of(value, &vl) : NULL;
    if (!v) return NULL;
    pct_kv_req r = {.cmd = PCT_KV_SET, .key = k, .klen = (size_t)kl, .a = v, .alen = (size_t)vl};
    pct_kv_rep rep = {0};
    int rc = run_request(s, &r, &rep);
    pct_kv_rep_clear(&rep);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- Store methods ----------------------------------------------------------------------- */

static PyObject *Store_set(PyObject *self, PyObject *args)
{
    PyObject *key, *value;
    pct_store *s = store_of(self);
    if (!s || !PyArg_ParseTuple(args, "OO:set", &key, &value)) return NULL;
    return set_value(s, key, value);
}

static PyObject *Store_get(PyObject *self, PyObject *key)
{
    Py_ssize_t kl;
    pct_store *s = store_of(self);
    const char *k = s ? key_of(key, &kl) : NULL;
    return k ? get_value(s, k, (size_t)kl) : NULL;
}

/* A request on one key whose reply is a number (add, check, delete_key) or bytes (compare_set). */
static PyObject *keyed(PyObject *self, int cmd, PyObject *key, PyObject *a, PyObject *b, int64_t n)
{
    Py_ssize_t kl, al = 0, bl = 0;
    pct_store *s = store_of(self);
    const char *k = s ? key_of(key, &kl) : NULL, *av = NULL, *bv = NULL;
    if (!k || (a && !(av = value_of(a, &al))) || (b && !(bv = value_of(b, &bl)))) return NULL;
    pct_kv_req r = {.cmd = cmd, .key = k, .klen = (size_t)kl, .a = av, .alen = (size_t)al, .b = bv,
                    .blen = (size_t)bl, .n = n};
    pct_kv_rep rep = {0};
    if (run_request(s, &r, &rep) < 0) { pct_kv_rep_clear(&rep); return NULL; }
    PyObject *out = cmd == PCT_KV_CSET ? PyBytes_FromStringAndSize(rep.data ? rep.data : "", (Py_ssize_t)rep.len)
                    : cmd == PCT_KV_ADD ? PyLong_FromLongLong(rep.n)
                    : cmd == PCT_KV_APPEND ? Py_NewRef(Py_None) : PyBool_FromLong((long)rep.n);
    pct_kv_rep_clear(&rep);
    return out;
}

static PyObject *Store_add(PyObject *self, PyObject *args)
{
    PyObject *key;
    long long n;
    if (!PyArg_ParseTuple(args, "OL:add", &key, &n)) return NULL;
    return keyed(self, PCT_KV_ADD, key, NULL, NULL, n);
}

static PyObject *Store_compare_set(PyObject *self, PyObject *args)
{
    PyObject *key, *expected, *desired;
    if (!PyArg_ParseTuple(args, "OOO:compare_set", &key, &expected, &desired)) return NULL;
    return keyed(self, PCT_KV_CSET, key, expected, desired, 0);
}

static PyObject *Store_append(PyObject *self, PyObject *args)
{
    PyObject *key, *value;
    if (!PyArg_ParseTuple(args, "OO:append", &key, &value)) return NULL;
    return keyed(self, PCT_KV_APPEND, key, value, NULL, 0);
}

static PyObject *Store_delete_key(PyObject *self, PyObject *key)
{
    return keyed(self, PCT_KV_DEL, key, NULL, NULL, 0);
}

static PyObject *Store_check(PyObject *self, PyObject *keys_list)
{
    pct_store *s = store_of(self);
    key_list kl;
    if (!s || key_list_init(&kl, keys_list) < 0) return NULL;
    PyObject *out = NULL;
    bool all = true;
    for (Py_ssize_t i = 0; i < kl.n && all; i++) {
        pct_kv_req r = {.cmd = PCT_KV_CHECK, .key = kl.keys[i], .klen = kl.lens[i]};
        pct_kv_rep rep = {0};
        if (run_request(s, &r, &rep) < 0) goto done;
        all = rep.n != 0;
        pct_kv_rep_clear(&rep);
    }
    out = PyBool_FromLong(all);
done:
    key_list_clear(&kl);
    return out;
}

static PyObject *Store_num_keys(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pct_store *s = store_of(self);
    pct_kv_req r = {.cmd = PCT_KV_NUMKEYS};
    pct_kv_rep rep = {0};
    if (!s || run_request(s, &r, &rep) < 0) return NULL;
    int64_t n = rep.n;
    pct_kv_rep_clear(&rep);
    return PyLong_FromLongLong(n);
}

static PyObject *Store_wait(PyObject *self, PyObject *args)
{
    PyObject *keys_list, *timeout = NULL;
    pct_store *s = store_of(self);
    if (!s || !PyArg_ParseTuple(args, "O|O:wait", &keys_list, &timeout)) return NULL;
    int64_t ms = atomic_load(&s->timeout_ms);
    if (timeout && pct_timedelta_ms(timeout, &ms) < 0) return NULL;
    key_list kl;
    if (key_list_init(&kl, keys_list) < 0) return NULL;
    pct_store_err err;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pct_store_wait(s, kl.keys, kl.lens, (size_t)kl.n, ms, &err);
    Py_END_ALLOW_THREADS
    key_list_clear(&kl);
    if (st != PCT_STORE_OK) return pct_c10d_raise(st, &err), NULL;
    Py_RETURN_NONE;
}

static PyObject *Store_multi_get(PyObject *self, PyObject *keys_list)
{
    pct_store *s = store_of(self);
    key_list kl;
    if (!s || key_list_init(&kl, keys_list) < 0) return NULL;
    PyObject *out = PyList_New(kl.n);
    for (Py_ssize_t i = 0; out && i < kl.n; i++) {
        PyObject *v = get_value(s, kl.keys[i], kl.lens[i]);
        if (!v) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, v);
    }
    key_list_clear(&kl);
    return out;
}

static PyObject *Store_multi_set(PyObject *self, PyObject *args)
{
    PyObject *keys, *values;
    pct_store *s = store_of(self);
    if (!s || !PyArg_ParseTuple(args, "OO:multi_set", &keys, &values)) return NULL;
    PyObject *fk = PySequence_Fast(keys, "keys must be a list"), *fv = fk ? PySequence_Fast(values, "values must be a list") : NULL;
    PyObject *out = NULL;
    if (!fv) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fk);
    if (PySequence_Fast_GET_SIZE(fv) != n) {
        PyErr_SetString(PyExc_ValueError, "multi_set: keys and values must have the same length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = set_value(s, PySequence_Fast_GET_ITEM(fk, i), PySequence_Fast_GET_ITEM(fv, i));
        if (!r) goto done;
        Py_DECREF(r);
    }
    out = Py_NewRef(Py_None);
done:
    Py_XDECREF(fk);
    Py_XDECREF(fv);
    return out;
}

static PyObject *Store_set_timeout(PyObject *self, PyObject *timeout)
{
    pct_store *s = store_of(self);
    int64_t ms;
    if (!s || pct_timedelta_ms(timeout, &ms) < 0) return NULL;
    atomic_store(&s->timeout_ms, ms);
    Py_RETURN_NONE;
}

static PyObject *Store_get_timeout(PyObject *self, void *Py_UNUSED(closure))
{
    pct_store *s = store_of(self);
    return s ? pct_timedelta_from_ms(atomic_load(&s->timeout_ms)) : NULL;
}

static PyObject *Store_has_extended_api(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    Py_RETURN_TRUE;
}

static PyMethodDef Store_methods[] = {
    {"set", Store_set, METH_VARARGS, "set(key, value): stores value (str or bytes) under key."},
    {"get", Store_get, METH_O, "get(key) -> bytes: waits up to the store's timeout for key."},
    {"add", Store_add, METH_VARARGS, "add(key, amount) -> int: adds to an integer counter."},
    {"compare_set", Store_compare_set, METH_VARARGS, "compare_set(key, expected_value, desired_value) -> bytes"},
    {"append", Store_append, METH_VARARGS, "append(key, value): appends to the value of key."},
    {"delete_key", Store_delete_key, METH_O, "delete_key(key) -> bool"},
    {"check", Store_check, METH_O, "check(keys) -> bool: whether every key exists now."},
    {"num_keys", Store_num_keys, METH_NOARGS, "num_keys() -> int"},
    {"wait", Store_wait, METH_VARARGS, "wait(keys, timeout=None): waits until every key exists."},
    {"multi_get", Store_multi_get, METH_O, "multi_get(keys) -> list of bytes"},
    {"multi_set", Store_multi_set, METH_VARARGS, "multi_set(keys, values)"},
    {"set_timeout", Store_set_timeout, METH_O, "set_timeout(timedelta)"},
    {"has_extended_api", Store_has_extended_api, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Store_getset[] = {
    {"timeout", Store_get_timeout, NULL, "the default timeout of get and wait", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static int Store_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((pct_store_object *)self)->inner);
    return 0;
}

static int Store_clear(PyObject *self)
{
    Py_CLEAR(((pct_store_object *)self)->inner);
    return 0;
}

static void Store_dealloc(PyObject *self)
{
    pct_store_object *o = (pct_store_object *)self;
    PyObject_GC_UnTrack(self);
    if (o->store) {
        pct_store *s = o->store;
        o->store = NULL;
        Py_BEGIN_ALLOW_THREADS /* a master joins its server thread */
        pct_store_free(s);
        Py_END_ALLOW_THREADS
    }
    Store_clear(self); /* after freeing a PrefixStore, which borrowed the inner store */
    Py_TYPE(self)->tp_free(self);
}

/* Installs a freshly made C store into self (replacing none); -1 with the store's error. */
static int adopt(PyObject *self, pct_store *s, const pct_store_err *err, int status)
{
    pct_store_object *o = (pct_store_object *)self;
    if (!s) return pct_c10d_raise(status, err);
    if (o->store) {
        pct_store_free(s);
        PyErr_SetString(PyExc_RuntimeError, "Store.__init__ called twice");
        return -1;
    }
    o->store = s;
    return 0;
}

static int Store_init(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwds)
{
    static char *kw[] = {NULL};
    return PyArg_ParseTupleAndKeywords(args, kwds, ":Store", kw) ? 0 : -1;
}

/* ---- the concrete stores ----------------------------------------------------------------- */

static int HashStore_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":HashStore", kw)) return -1;
    pct_store_err err;
    pct_store *s = pct_hash_store_new(&err);
    return adopt(self, s, &err, PCT_STORE_ERROR);
}

static int FileStore_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"file_name", "world_size", NULL};
    const char *path;
    int world_size = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|i:FileStore", kw, &path, &world_size)) return -1;
    pct_store_err err;
    pct_store *s;
    Py_BEGIN_ALLOW_THREADS
    s = pct_file_store_new(path, world_size, 300000, &err);
    Py_END_ALLOW_THREADS
    if (adopt(self, s, &err, PCT_STORE_ERROR) < 0) return -1;
    PyObject *p = PyUnicode_FromString(path);
    if (!p) return -1;
    Py_XSETREF(((pct_store_object *)self)->inner, p); /* FileStore keeps its path here */
    return 0;
}

static PyObject *FileStore_path(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject *p = ((pct_store_object *)self)->inner;
    return p ? Py_NewRef(p) : Py_NewRef(Py_None);
}

static int PrefixStore_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"prefix", "store", NULL};
    const char *prefix;
    PyObject *inner;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sO:PrefixStore", kw, &prefix, &inner)) return -1;
    pct_store *is = pct_store_from_object(inner);
    if (!is) return -1;
    pct_store_err err;
    pct_store *s = pct_prefix_store_new(prefix, is, &err);
    if (adopt(self, s, &err, PCT_STORE_ERROR) < 0) return -1;
    Py_XSETREF(((pct_store_object *)self)->inner, Py_NewRef(inner));
    return 0;
}

static PyObject *PrefixStore_underlying(PyObject *self, void *Py_UNUSED(closure))
{
    PyObject *p = ((pct_store_object *)self)->inner;
    return p ? Py_NewRef(p) : Py_NewRef(Py_None);
}

static int TCPStore_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"host_name", "port", "world_size", "is_master", "timeout", "wait_for_workers",
                         "multi_tenant", "master_listen_fd", "use_libuv", NULL};
    const char *host;
    int port, is_master = 0, wait_for_workers = 1, multi_tenant = 0, use_libuv = 1;
    PyObject *world = Py_None, *timeout = NULL, *listen_fd = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "si|OpOppOp:TCPStore", kw, &host, &port, &world, &is_master,
                                     &timeout, &wait_for_workers, &multi_tenant, &listen_fd, &use_libuv))
        return -1;
    int world_size = -1;
    if (world != Py_None && (world_size = (int)PyLong_AsLong(world)) == -1 && PyErr_Occurred()) return -1;
    int64_t ms = 300000;
    if (timeout && pct_timedelta_ms(timeout, &ms) < 0) return -1;
    if (port < 0 || port > 65535) {
        PyErr_Format(PyExc_ValueError, "TCPStore: port %d is out of range", port);
        return -1;
    }
    if (listen_fd != Py_None) {
        PyErr_SetString(PyExc_NotImplementedError, "pyctorch's TCPStore does not take master_listen_fd yet");
        return -1;
    }
    pct_store_err err;
    pct_store *s;
    Py_BEGIN_ALLOW_THREADS
    s = pct_tcp_store_new(host, port, world_size, is_master, ms, wait_for_workers, &err);
    Py_END_ALLOW_THREADS
    int status = PCT_STORE_NETWORK;
    if (!s && strncmp(err.msg, "Timed out", 9) == 0) status = PCT_STORE_TIMEOUT;
    if (adopt(self, s, &err, status) < 0) return -1;
    PyObject *h = PyUnicode_FromString(host);
    if (!h) return -1;
    Py_XSETREF(((pct_store_object *)self)->inner, h); /* TCPStore keeps its host here */
    return 0;
}

static PyObject *TCPStore_port(PyObject *self, void *Py_UNUSED(closure))
{
    pct_store *s = store_of(self);
    return s ? PyLong_FromLong(pct_tcp_store_port(s)) : NULL;
}

static PyObject *TCPStore_false(PyObject *Py_UNUSED(self), void *Py_UNUSED(closure))
{
    Py_RETURN_FALSE;
}

static PyGetSetDef FileStore_getset[] = {
    {"path", FileStore_path, NULL, "the file's path", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyGetSetDef PrefixStore_getset[] = {
    {"underlying_store", PrefixStore_underlying, NULL, "the store this one prefixes", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyGetSetDef TCPStore_getset[] = {
    {"host", FileStore_path, NULL, "the master's host name", NULL},
    {"port", TCPStore_port, NULL, "the master's port", NULL},
    {"libuvBackend", TCPStore_false, NULL, "False: pyctorch's server is its own poll loop", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define STORE_TYPE(cname, pyname, base, init, getset, doc)                                                        \
    PyTypeObject cname = {                                                                                        \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torch._C._distributed_c10d." pyname,                           \
        .tp_basicsize = sizeof(pct_store_object),                                                                 \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,                              \
        .tp_doc = doc, .tp_base = base, .tp_init = init, .tp_getset = getset, .tp_new = PyType_GenericNew,      \
        .tp_dealloc = Store_dealloc, .tp_traverse = Store_traverse, .tp_clear = Store_clear,                     \
    }

STORE_TYPE(pct_StoreType, "Store", NULL, Store_init, Store_getset, "The base class of the key-value stores.");
STORE_TYPE(pct_HashStoreType, "HashStore", &pct_StoreType, HashStore_init, NULL, "HashStore(): an in-process store.");
STORE_TYPE(pct_FileStoreType, "FileStore", &pct_StoreType, FileStore_init, FileStore_getset,
           "FileStore(file_name, world_size=-1): a store in a file shared by processes.");
STORE_TYPE(pct_PrefixStoreType, "PrefixStore", &pct_StoreType, PrefixStore_init, PrefixStore_getset,
           "PrefixStore(prefix, store): every key becomes 'prefix/key' in store.");
STORE_TYPE(pct_TCPStoreType, "TCPStore", &pct_StoreType, TCPStore_init, TCPStore_getset,
           "TCPStore(host_name, port, world_size=None, is_master=False, timeout=timedelta(seconds=300), "
           "wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True)");

/* ---- the module -------------------------------------------------------------------------- */

static PyObject *c10d_has_gloo(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored))
{
#ifdef PCT_HAVE_GLOO
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef c10d_functions[] = {
    {"_has_gloo", c10d_has_gloo, METH_NOARGS, "whether pyctorch was built with Gloo"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef c10d_module_def = {PyModuleDef_HEAD_INIT, "pyctorch._C._distributed_c10d",
                                             "torch.distributed's C core: stores and process groups", -1,
                                             c10d_functions, NULL, NULL, NULL, NULL};

int pct_distributed_install(PyObject *module)
{
    pct_StoreType.tp_methods = Store_methods;
    PyTypeObject *types[] = {&pct_StoreType, &pct_HashStoreType, &pct_FileStoreType, &pct_PrefixStoreType,
                             &pct_TCPStoreType};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyType_Ready(types[i]) < 0) return -1;
    PyObject *m = PyModule_Create(&c10d_module_def);
    if (!m) return -1;
    if (!(pct_DistError = PyErr_NewException("torch.distributed.DistError", PyExc_RuntimeError, NULL)) ||
        !(pct_DistStoreError = PyErr_NewException("torch.distributed.DistStoreError", pct_DistError, NULL)) ||
        !(pct_DistNetworkError = PyErr_NewException("torch.distributed.DistNetworkError", pct_DistError, NULL)) ||
        !(pct_DistBackendError = PyErr_NewException("torch.distributed.DistBackendError", pct_DistError, NULL)))
        goto fail;
    if (PyModule_AddObjectRef(m, "DistError", pct_DistError) < 0 ||
        PyModule_AddObjectRef(m, "DistStoreError", pct_DistStoreError) < 0 ||
        PyModule_AddObjectRef(m, "DistNetworkError", pct_DistNetworkError) < 0 ||
        PyModule_AddObjectRef(m, "DistBackendError", pct_DistBackendError) < 0)
        goto fail;
    const char *names[] = {"Store", "HashStore", "FileStore", "PrefixStore", "TCPStore"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) goto fail;
    if (pct_process_group_install(m) < 0) goto fail;
    if (PyModule_AddObject(module, "_distributed_c10d", m) < 0) goto fail; /* steals m on success */
    return 0;
fail:
    Py_DECREF(m);
    return -1;
}
