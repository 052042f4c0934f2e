/* process_group.c: ProcessGroupGloo (collectives over Gloo's TCP transport through the C++ shim)
 * and Work, the handle of a point-to-point operation or of a finished collective.
 *
 * Every collective: check the tensors (CPU, a dtype Gloo's torch backend takes), stage them
 * contiguous (Note [Gloo staging]), release the GIL for the shim call, copy results back into
 * the caller's tensors. Collectives run synchronously on the calling thread; the Python layer
 * wraps async_op=True results in a completed Work. Sends and receives are posted at once and
 * completed by Work.wait, so isend/irecv pairs in any order cannot deadlock. */
#include <Python.h>
#include <unistd.h>

#include "aten/error.h"
#include "aten/iter.h"
#include "aten/tensor.h"
#include "python/c10d.h"
#include "python/pyobjects.h"

#ifdef PCT_HAVE_GLOO
#include "distributed/gloo_shim.h"

/* Note [Gloo staging]: Gloo reads and writes flat memory. A contiguous tensor is used in place;
 * any other is copied into a contiguous temporary first and the result copied back afterwards,
 * as torch's Gloo backend does for its flattened buffers. */

/* torch's c10d RedOpType values. */
enum { OP_SUM, OP_AVG, OP_PRODUCT, OP_MIN, OP_MAX, OP_BAND, OP_BOR, OP_BXOR, OP_PREMUL_SUM, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"};

/* ---- reduction functions, one per (op, dtype), from the dtype list ----------------------- */

#define ARITH_FN(NAME, E, T, EXPR)                                                                   \
    static void NAME##_##E(void *out, const void *pa, const void *pb, size_t n)                      \
    {                                                                                                \
        T *o = out;                                                                                  \
        const T *x = pa, *y = pb;                                                                    \
        for (size_t i = 0; i < n; i++) {                                                             \
            __typeof__(PCT_TO_COMPUTE_##E(x[0])) a = PCT_TO_COMPUTE_##E(x[i]), b = PCT_TO_COMPUTE_##E(y[i]); \
            o[i] = PCT_FROM_COMPUTE_##E(EXPR);                                                       \
        }                                                                                            \
    }
#define DEF_ARITH(E, N, T, C, S)                   \
    ARITH_FN(sum, E, T, a + b)                     \
    ARITH_FN(prod, E, T, a * b)                    \
    ARITH_FN(min, E, T, (b < a ? b : a))           \
    ARITH_FN(max, E, T, (b > a ? b : a))
PCT_FORALL_DTYPES(DEF_ARITH)
#define DEF_BITS(E, N, T, C, S)                    \
    ARITH_FN(band, E, T, a & b)                    \
    ARITH_FN(bor, E, T, a | b)                     \
    ARITH_FN(bxor, E, T, a ^ b)
PCT_FORALL_INT_DTYPES(DEF_BITS)
DEF_BITS(BOOL, Bool, uint8_t, bool, "bool")

static pct_gloo_reduce_fn reduce_fns[NUM_OPS][PCT_NUM_DTYPES] = {
#define ROW(OPNAME, E, N, T, C, S) [PCT_##E] = OPNAME##_##E,
#define ROW_SUM(E, N, T, C, S) ROW(sum, E, N, T, C, S)
#define ROW_PROD(E, N, T, C, S) ROW(prod, E, N, T, C, S)
#define ROW_MIN(E, N, T, C, S) ROW(min, E, N, T, C, S)
#define ROW_MAX(E, N, T, C, S) ROW(max, E, N, T, C, S)
#define ROW_BAND(E, N, T, C, S) ROW(band, E, N, T, C, S)
#define ROW_BOR(E, N, T, C, S) ROW(bor, E, N, T, C, S)
#define ROW_BXOR(E, N, T, C, S) ROW(bxor, E, N, T, C, S)
    [OP_SUM] = {PCT_FORALL_DTYPES(ROW_SUM)},
    [OP_AVG] = {PCT_FORALL_DTYPES(ROW_SUM)}, /* summed, then divided by the group size */
    [OP_PRODUCT] = {PCT_FORALL_DTYPES(ROW_PROD)},
    [OP_MIN] = {PCT_FORALL_DTYPES(ROW_MIN)},
    [OP_MAX] = {PCT_FORALL_DTYPES(ROW_MAX)},
    [OP_BAND] = {PCT_FORALL_INT_DTYPES(ROW_BAND) ROW_BAND(BOOL, Bool, uint8_t, bool, "bool")},
    [OP_BOR] = {PCT_FORALL_INT_DTYPES(ROW_BOR) ROW_BOR(BOOL, Bool, uint8_t, bool, "bool")},
    [OP_BXOR] = {PCT_FORALL_INT_DTYPES(ROW_BXOR) ROW_BXOR(BOOL, Bool, uint8_t, bool, "bool")},
};

/* Divides n elements by d in place (AVG); integers divide with truncation. */
static void divide_by(void *p, size_t n, int dtype, int d)
{
    switch (dtype) {
#define DIV_CASE(E, N, T, C, S)                                                                     \
    case PCT_##E: {                                                                                 \
        T *x = p;                                                                                   \
        for (size_t i = 0; i < n; i++) x[i] = PCT_FROM_COMPUTE_##E(PCT_TO_COMPUTE_##E(x[i]) / d);   \
        break;                                                                                      \
    }
        PCT_FORALL_DTYPES(DIV_CASE)
#undef DIV_CASE
    }
}

/* ---- the process group object ------------------------------------------------------------ */

/* Ownership: gloo owned (the connected mesh, freed by dealloc); store an owned reference to
 * the Store object the mesh was built through (kept so its C store outlives any use). */
typedef struct pg_object {
    PyObject_HEAD
    pct_gloo *gloo;
    PyObject *store;
    int rank, size;
    int64_t timeout_ms;
    uint32_t tag; /* numbers collectives; every rank issues them in the same order */
    pid_t pid;    /* the process that connected (Note [Stores after fork]: a child leaves gloo alone) */
} pg_object;

/* Ownership: p2p owned (the posted send/recv, freed by dealloc before the tensors: Gloo's pairs
 * hold only weak references to it, so freeing one never waited for is safe); pg, user, staged
 * and result owned references or NULL: the group keeping Gloo alive, the caller's tensor (a
 * receive's, to report as the result), the contiguous memory Gloo reads or writes (the caller's
 * tensor itself: torch's Gloo takes contiguous tensors only for sends and receives), the list
 * result() returns. */
typedef struct work_object {
    PyObject_HEAD
    pct_gloo_p2p *p2p;
    PyObject *pg;
    pct_tensor *user, *staged;
    PyObject *result;
    int peer;
    bool completed;
} work_object;

static PyTypeObject pg_type, work_type;

static int gloo_fail(const char *err)
{
    PyErr_SetString(pct_DistBackendError, err);
    return -1;
}

/* Store callbacks for the shim: ctx is a pct_store, kept alive by the group's store reference. */
static int cb_set(void *ctx, const char *key, const void *val, size_t n, char *err, size_t errlen)
{
    pct_store_err e;
    int st = pct_store_set(ctx, key, strlen(key), val, n, &e);
    if (st != PCT_STORE_OK) snprintf(err, errlen, "%s", e.msg);
    return st == PCT_STORE_OK ? 0 : -1;
}

static int cb_get(void *ctx, const char *key, void **val, size_t *n, char *err, size_t errlen)
{
    pct_store_err e;
    pct_kv_rep rep = {0};
    int st = pct_store_get(ctx, key, strlen(key), &rep, &e);
    if (st != PCT_STORE_OK) { snprintf(err, errlen, "%s", e.msg); pct_kv_rep_clear(&rep); return -1; }
    *val = rep.data; /* ownership passes to the shim, which frees it */
    *n = rep.len;
    return 0;
}

static int cb_wait(void *ctx, const char *const *keys, size_t nkeys, int64_t timeout_ms, char *err, size_t errlen)
{
    pct_store_err e;
    size_t *lens = malloc((nkeys ? nkeys : 1) * sizeof *lens);
    if (!lens) { snprintf(err, errlen, "out of memory"); return -1; }
    for (size_t i = 0; i < nkeys; i++) lens[i] = strlen(keys[i]);
    int st = pct_store_wait(ctx, keys, lens, nkeys, timeout_ms, &e);
    free(lens);
    if (st != PCT_STORE_OK) snprintf(err, errlen, "%s", e.msg);
    return st == PCT_STORE_OK ? 0 : -1;
}

static int pg_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"store", "rank", "size", "timeout", "hostname", "iface", NULL};
    pg_object *pg = (pg_object *)self;
    PyObject *store, *timeout = NULL;
    int rank, size;
    const char *host = "127.0.0.1", *iface = "";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oii|Oss:ProcessGroupGloo", kw, &store, &rank, &size, &timeout, &host,
                                     &iface))
        return -1;
    pct_store *s = pct_store_from_object(store);
    if (!s) return -1;
    if (pg->gloo) { PyErr_SetString(PyExc_RuntimeError, "ProcessGroupGloo.__init__ called twice"); return -1; }
    if (size < 1 || rank < 0 || rank >= size) {
        PyErr_Format(PyExc_ValueError, "ProcessGroupGloo: invalid rank %d for world size %d", rank, size);
        return -1;
    }
    int64_t ms = 1800000;
    if (timeout && timeout != Py_None && pct_timedelta_ms(timeout, &ms) < 0) return -1;
    pct_gloo_store_cb cb = {s, cb_set, cb_get, cb_wait};
    char err[512] = {0};
    pct_gloo *g;
    Py_BEGIN_ALLOW_THREADS
    g = pct_gloo_connect(&cb, host, iface, rank, size, ms, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (!g) return gloo_fail(err);
    pg->gloo = g;
    pg->pid = getpid();
    pg->rank = rank;
    pg->size = size;
    pg->timeout_ms = ms;
    Py_XSETREF(pg->store, Py_NewRef(store));
    return 0;
}

static void pg_dealloc(PyObject *self)
{
    pg_object *pg = (pg_object *)self;
    if (pg->gloo && pg->pid != getpid()) {
        pg->gloo = NULL; /* a forked child's copy: Gloo's threads live in the parent only; left as is */
    } else if (pg->gloo) {
        pct_gloo *g = pg->gloo;
        pg->gloo = NULL;
        Py_BEGIN_ALLOW_THREADS /* closing the pairs joins Gloo's loop work */
        pct_gloo_free(g);
        Py_END_ALLOW_THREADS
    }
    Py_CLEAR(pg->store);
    Py_TYPE(self)->tp_free(self);
}

static pct_gloo *live(pg_object *pg)
{
    if (!pg->gloo) {
        PyErr_SetString(PyExc_RuntimeError, "ProcessGroupGloo: the group is not connected");
        return NULL;
    }
    if (pg->pid != getpid()) {
        PyErr_SetString(PyExc_RuntimeError, "ProcessGroupGloo: a forked child cannot use its parent's process group");
        return NULL;
    }
    return pg->gloo;
}

/* A tensor argument Gloo can carry; NULL with torch's error. Borrowed. */
static pct_tensor *gloo_tensor(PyObject *o)
{
    if (!PCT_TENSOR_CHECK(o)) {
        PyErr_Format(PyExc_TypeError, "expected a Tensor, got %s", Py_TYPE(o)->tp_name);
        return NULL;
    }
    pct_tensor *t = (pct_tensor *)o;
    if (t->device_type != PCT_CPU) {
        PyErr_SetString(PyExc_RuntimeError, "No backend type associated with device type cuda");
        return NULL;
    }
    if (t->dtype == PCT_INT16) { PyErr_SetString(PyExc_RuntimeError, "Invalid scalar type"); return NULL; }
    return t;
}

static inline size_t nbytes_of(const pct_tensor *t) { return (size_t)t->numel * (size_t)pct_tensor_itemsize(t); }

/* Copies staged into user when they differ; -1 with exception. */
static int unstage(pct_tensor *user, pct_tensor *staged)
{
    if (user == staged) return 0;
    if (pct_copy_(user, staged) < 0) return -1;
    return 0;
}

/* A view of `flat` (contiguous) with like's shape at element offset `off`; new reference. */
static pct_tensor *chunk_view(pct_tensor *flat, const pct_tensor *like, int64_t off)
{
    return pct_tensor_from_storage(flat->storage, like->ndim, like->sizes, NULL, flat->offset + off, flat->dtype);
}

static pct_gloo_reduce_fn reduce_fn_for(int op, int dtype)
{
    if (op < 0 || op >= NUM_OPS || op == OP_PREMUL_SUM) {
        PyErr_Format(PyExc_RuntimeError, "Cannot use ReduceOp.%s with Gloo", op >= 0 && op < NUM_OPS ? op_names[op] : "UNUSED");
        return NULL;
    }
    if (op == OP_AVG && !pct_dtype_is_floating(dtype)) {
        /* torch's Gloo averages in float and cannot store the result back */
        PyErr_Format(PyExc_RuntimeError, "result type Float can't be cast to the desired output type %s",
                     pct_dtype_cpp_name[dtype]);
        return NULL;
    }
    pct_gloo_reduce_fn fn = reduce_fns[op][dtype];
    if (!fn) PyErr_Format(PyExc_RuntimeError, "Cannot use ReduceOp.%s with non-integral dtype", op_names[op]);
    return fn;
}

#define PG_TIMEOUT(pg) ((pg)->timeout_ms)
#define RUN_GLOO(call)                                                                            \
    do {                                                                                          \
        int rc_;                                                                                  \
        Py_BEGIN_ALLOW_THREADS rc_ = (call);                                                      \
        Py_END_ALLOW_THREADS if (rc_ < 0) { gloo_fail(err); goto fail; }                          \
    } while (0)

/* allreduce(tensor, op) and reduce(tensor, root, op): one body; to_all: every rank gets the result */
static PyObject *reduce_into(pg_object *pg, PyObject *to, bool to_all, int root, int op)
{
    char err[512] = {0};
    pct_tensor *staged = NULL;
    if (!live(pg)) return NULL;
    pct_tensor *t = gloo_tensor(to);
    pct_gloo_reduce_fn fn = t ? reduce_fn_for(op, t->dtype) : NULL;
    if (!fn) return NULL;
    PCT_CHECK(to_all || (root >= 0 && root < pg->size), PCT_ERR_RUNTIME, "ProcessGroupGloo::reduce: invalid root rank: %d",
              root);
    PCT_TRY(staged = pct_contiguous(t));
    void *p = pct_tensor_data(staged);
    size_t n = (size_t)staged->numel, es = (size_t)pct_tensor_itemsize(staged);
    uint32_t tag = pg->tag++;
    if (to_all) RUN_GLOO(pct_gloo_allreduce(pg->gloo, p, n, es, fn, tag, PG_TIMEOUT(pg), err, sizeof err));
    else RUN_GLOO(pct_gloo_reduce(pg->gloo, p, n, es, fn, root, tag, PG_TIMEOUT(pg), err, sizeof err));
    if (op == OP_AVG && (to_all || pg->rank == root)) divide_by(p, n, staged->dtype, pg->size);
    PCT_TRY_INT(unstage(t, staged));
    pct_tensor_bump_version(t);
    Py_DECREF(staged);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    return NULL;
}

static PyObject *pg_allreduce(PyObject *self, PyObject *args)
{
    PyObject *to;
    int op;
    if (!PyArg_ParseTuple(args, "Oi:allreduce", &to, &op)) return NULL;
    return reduce_into((pg_object *)self, to, true, 0, op);
}

static PyObject *pg_reduce(PyObject *self, PyObject *args)
{
    PyObject *to;
    int root, op;
    if (!PyArg_ParseTuple(args, "Oii:reduce", &to, &root, &op)) return NULL;
    return reduce_into((pg_object *)self, to, false, root, op);
}

/* broadcast(tensor, root) */
static PyObject *pg_broadcast(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *to;
    int root;
    char err[512] = {0};
    pct_tensor *staged = NULL;
    if (!PyArg_ParseTuple(args, "Oi:broadcast", &to, &root) || !live(pg)) return NULL;
    pct_tensor *t = gloo_tensor(to);
    if (!t) return NULL;
    PCT_CHECK(root >= 0 && root < pg->size, PCT_ERR_RUNTIME, "ProcessGroupGloo::broadcast: invalid root rank: %d", root);
    PCT_TRY(staged = pct_contiguous(t));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_broadcast(pg->gloo, pct_tensor_data(staged), nbytes_of(staged), root, tag, PG_TIMEOUT(pg), err,
                                sizeof err));
    if (pg->rank != root) {
        PCT_TRY_INT(unstage(t, staged));
        pct_tensor_bump_version(t);
    }
    Py_DECREF(staged);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    return NULL;
}

/* "(2, 3)": a shape as torch's Gloo messages print it. */
static const char *paren_shape(char *buf, size_t n, int ndim, const int64_t *sizes)
{
    size_t used = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)sizes[i]);
    if (used < n) snprintf(buf + used, n - used, ")");
    return buf;
}

static int size_error(const char *what, Py_ssize_t i, int nd1, const int64_t *s1, int nd2, const int64_t *s2)
{
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    PyErr_Format(PyExc_RuntimeError, "ProcessGroupGloo::%s: invalid tensor size at index %zd (expected %s, got %s)", what, i,
                 paren_shape(a, sizeof a, nd1, s1), paren_shape(b, sizeof b, nd2, s2));
    return -1;
}

/* Checks that every tensor of `list` (a list, length pg->size) matches `like` in dtype and
 * element count; fills out[] with borrowed tensors. */
static int check_list(pg_object *pg, PyObject *list, const pct_tensor *like, pct_tensor **out, const char *what)
{
    PCT_CHECK(PyList_Check(list) || PyTuple_Check(list), PCT_ERR_TYPE, "%s: expected a list of tensors", what);
    Py_ssize_t n = PySequence_Size(list);
    PCT_CHECK(n == pg->size, PCT_ERR_RUNTIME, "ProcessGroupGloo::%s: requires %d tensors in the list, got %zd", what,
              pg->size, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyList_Check(list) ? PyList_GET_ITEM(list, i) : PyTuple_GET_ITEM(list, i);
        PCT_TRY(out[i] = gloo_tensor(o));
        PCT_CHECK(out[i]->dtype == like->dtype, PCT_ERR_RUNTIME, "ProcessGroupGloo::%s: invalid tensor type at index %zd "
                  "(expected %s, got %s)", what, i, pct_dtype_cpp_name[like->dtype], pct_dtype_cpp_name[out[i]->dtype]);
        if (out[i]->numel != like->numel)
            return size_error(what, i, like->ndim, like->sizes, out[i]->ndim, out[i]->sizes);
    }
    return 0;
fail:
    return -1;
}

/* Copies chunk i of flat (each like's numel) into dst[i], for the n tensors. */
static int scatter_chunks(pct_tensor *flat, pct_tensor **dst, int n, int64_t per)
{
    for (int i = 0; i < n; i++) {
        pct_tensor *v = chunk_view(flat, dst[i], (int64_t)i * per);
        if (!v) return -1;
        int rc = pct_copy_(dst[i], v);
        Py_DECREF(v);
        if (rc < 0) return -1;
        pct_tensor_bump_version(dst[i]);
    }
    return 0;
}

/* A new contiguous 1-d tensor of n elements. */
static pct_tensor *flat_of(int64_t n, int dtype)
{
    return pct_tensor_empty(1, &n, dtype, PCT_CPU, -1);
}

/* allgather(outputs, input) */
static PyObject *pg_allgather(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *outs, *ino;
    char err[512] = {0};
    pct_tensor *staged = NULL, *flat = NULL, **dst = NULL;
    if (!PyArg_ParseTuple(args, "OO:allgather", &outs, &ino) || !live(pg)) return NULL;
    pct_tensor *in = gloo_tensor(ino);
    if (!in) return NULL;
    PCT_TRY(dst = PyMem_Calloc((size_t)pg->size, sizeof *dst));
    PCT_TRY_INT(check_list(pg, outs, in, dst, "allgather"));
    PCT_TRY(staged = pct_contiguous(in));
    PCT_TRY(flat = flat_of(in->numel * pg->size, in->dtype));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_allgather(pg->gloo, pct_tensor_data(staged), pct_tensor_data(flat), nbytes_of(staged), tag,
                                PG_TIMEOUT(pg), err, sizeof err));
    PCT_TRY_INT(scatter_chunks(flat, dst, pg->size, in->numel));
    Py_DECREF(staged);
    Py_DECREF(flat);
    PyMem_Free(dst);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    Py_XDECREF(flat);
    PyMem_Free(dst);
    return NULL;
}

/* The contiguous buffer Gloo should write an output of n elements into: out itself when it is
 * contiguous with n elements, else a new flat tensor. New reference. */
static pct_tensor *output_buffer(pct_tensor *out, int64_t n)
{
    if (pct_tensor_is_contiguous(out) && out->numel == n) { Py_INCREF(out); return out; }
    return flat_of(n, out->dtype);
}

/* Copies a flat result into out (a no-op when it is out itself). */
static int output_done(pct_tensor *out, pct_tensor *buf)
{
    if (buf != out) {
        pct_tensor *v = chunk_view(buf, out, 0);
        if (!v) return -1;
        int rc = pct_copy_(out, v);
        Py_DECREF(v);
        if (rc < 0) return -1;
    }
    pct_tensor_bump_version(out);
    return 0;
}

/* allgather_into(output, input): output holds size * input.numel elements */
static PyObject *pg_allgather_into(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *oo, *io;
    char err[512] = {0};
    pct_tensor *staged = NULL, *buf = NULL;
    if (!PyArg_ParseTuple(args, "OO:allgather_into", &oo, &io) || !live(pg)) return NULL;
    pct_tensor *out = gloo_tensor(oo), *in = out ? gloo_tensor(io) : NULL;
    if (!in) return NULL;
    PCT_CHECK(out->dtype == in->dtype, PCT_ERR_TYPE, "output tensor must have the same type as input tensor");
    {
        /* as torch's Gloo: the output is size chunks along dim 0, each shaped as the input */
        int64_t chunk[PCT_MAX_DIMS];
        int cnd = out->ndim ? out->ndim : 1;
        for (int d = 0; d < out->ndim; d++) chunk[d] = out->sizes[d];
        if (!out->ndim) chunk[0] = 1;
        chunk[0] = (chunk[0] + pg->size - 1) / pg->size;
        bool same = cnd == in->ndim && chunk[0] * pg->size == (out->ndim ? out->sizes[0] : 1);
        for (int d = 0; same && d < cnd; d++) same = chunk[d] == in->sizes[d];
        if (!same) { size_error("allgather", 0, in->ndim, in->sizes, cnd, chunk); goto fail; }
    }
    PCT_TRY(staged = pct_contiguous(in));
    PCT_TRY(buf = output_buffer(out, out->numel));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_allgather(pg->gloo, pct_tensor_data(staged), pct_tensor_data(buf), nbytes_of(staged), tag,
                                PG_TIMEOUT(pg), err, sizeof err));
    PCT_TRY_INT(output_done(out, buf));
    Py_DECREF(staged);
    Py_DECREF(buf);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    Py_XDECREF(buf);
    return NULL;
}

/* gather(outputs or None, input, root) */
static PyObject *pg_gather(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *outs, *ino;
    int root;
    char err[512] = {0};
    pct_tensor *staged = NULL, *flat = NULL, **dst = NULL;
    if (!PyArg_ParseTuple(args, "OOi:gather", &outs, &ino, &root) || !live(pg)) return NULL;
    pct_tensor *in = gloo_tensor(ino);
    if (!in) return NULL;
    PCT_CHECK(root >= 0 && root < pg->size, PCT_ERR_RUNTIME, "ProcessGroupGloo::gather: invalid root rank: %d", root);
    PCT_TRY(dst = PyMem_Calloc((size_t)pg->size, sizeof *dst));
    if (pg->rank == root) {
        PCT_TRY_INT(check_list(pg, outs, in, dst, "gather"));
        PCT_TRY(flat = flat_of(in->numel * pg->size, in->dtype));
    }
    PCT_TRY(staged = pct_contiguous(in));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_gather(pg->gloo, pct_tensor_data(staged), flat ? pct_tensor_data(flat) : NULL, nbytes_of(staged),
                             root, tag, PG_TIMEOUT(pg), err, sizeof err));
    if (flat) PCT_TRY_INT(scatter_chunks(flat, dst, pg->size, in->numel));
    Py_DECREF(staged);
    Py_XDECREF(flat);
    PyMem_Free(dst);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    Py_XDECREF(flat);
    PyMem_Free(dst);
    return NULL;
}

/* scatter(output, inputs or None, root) */
static PyObject *pg_scatter(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *oo, *ins;
    int root;
    char err[512] = {0};
    pct_tensor *buf = NULL, **src = NULL, **staged = NULL;
    void **ptrs = NULL;
    if (!PyArg_ParseTuple(args, "OOi:scatter", &oo, &ins, &root) || !live(pg)) return NULL;
    pct_tensor *out = gloo_tensor(oo);
    if (!out) return NULL;
    PCT_CHECK(root >= 0 && root < pg->size, PCT_ERR_RUNTIME, "ProcessGroupGloo::scatter: invalid root rank: %d", root);
    PCT_TRY(src = PyMem_Calloc((size_t)pg->size, sizeof *src));
    PCT_TRY(staged = PyMem_Calloc((size_t)pg->size, sizeof *staged));
    PCT_TRY(ptrs = PyMem_Calloc((size_t)pg->size, sizeof *ptrs));
    if (pg->rank == root) {
        PCT_TRY_INT(check_list(pg, ins, out, src, "scatter"));
        for (int i = 0; i < pg->size; i++) {
            PCT_TRY(staged[i] = pct_contiguous(src[i]));
            ptrs[i] = pct_tensor_data(staged[i]);
        }
    }
    PCT_TRY(buf = output_buffer(out, out->numel));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_scatter(pg->gloo, ptrs, pct_tensor_data(buf), nbytes_of(out), root, tag, PG_TIMEOUT(pg), err,
                              sizeof err));
    PCT_TRY_INT(output_done(out, buf));
    Py_DECREF(buf);
    for (int i = 0; i < pg->size; i++) Py_XDECREF(staged[i]);
    PyMem_Free(src);
    PyMem_Free(staged);
    PyMem_Free(ptrs);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(buf);
    if (staged) for (int i = 0; i < pg->size; i++) Py_XDECREF(staged[i]);
    PyMem_Free(src);
    PyMem_Free(staged);
    PyMem_Free(ptrs);
    return NULL;
}

/* Reduces `flat` (size * out.numel elements, a private buffer) over the group and copies this
 * rank's chunk into out: reduce_scatter as Gloo's torch backend runs it, an allreduce. */
static int reduce_scatter_flat(pg_object *pg, pct_tensor *out, pct_tensor *flat, int op)
{
    char err[512] = {0};
    pct_gloo_reduce_fn fn = reduce_fn_for(op, out->dtype);
    if (!fn) return -1;
    void *p = pct_tensor_data(flat);
    size_t n = (size_t)flat->numel;
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_allreduce(pg->gloo, p, n, (size_t)pct_tensor_itemsize(flat), fn, tag, PG_TIMEOUT(pg), err, sizeof err));
    if (op == OP_AVG) divide_by(p, n, flat->dtype, pg->size);
    pct_tensor *v = chunk_view(flat, out, (int64_t)pg->rank * out->numel);
    if (!v) return -1;
    int rc = pct_copy_(out, v);
    Py_DECREF(v);
    if (rc == 0) pct_tensor_bump_version(out);
    return rc;
fail:
    return -1;
}

/* reduce_scatter(output, inputs, op) */
static PyObject *pg_reduce_scatter(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *oo, *ins;
    int op;
    pct_tensor *flat = NULL, **src = NULL;
    if (!PyArg_ParseTuple(args, "OOi:reduce_scatter", &oo, &ins, &op) || !live(pg)) return NULL;
    pct_tensor *out = gloo_tensor(oo);
    if (!out) return NULL;
    PCT_TRY(src = PyMem_Calloc((size_t)pg->size, sizeof *src));
    PCT_TRY_INT(check_list(pg, ins, out, src, "reduce_scatter"));
    PCT_TRY(flat = flat_of(out->numel * pg->size, out->dtype));
    for (int i = 0; i < pg->size; i++) {
        pct_tensor *v = chunk_view(flat, src[i], (int64_t)i * out->numel);
        if (!v) goto fail;
        int rc = pct_copy_(v, src[i]);
        Py_DECREF(v);
        if (rc < 0) goto fail;
    }
    PCT_TRY_INT(reduce_scatter_flat(pg, out, flat, op));
    Py_DECREF(flat);
    PyMem_Free(src);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(flat);
    PyMem_Free(src);
    return NULL;
}

/* reduce_scatter_tensor(output, input, op): input holds size * output.numel elements */
static PyObject *pg_reduce_scatter_tensor(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *oo, *io;
    int op;
    pct_tensor *flat = NULL;
    if (!PyArg_ParseTuple(args, "OOi:reduce_scatter_tensor", &oo, &io, &op) || !live(pg)) return NULL;
    pct_tensor *out = gloo_tensor(oo), *in = out ? gloo_tensor(io) : NULL;
    if (!in) return NULL;
    PCT_CHECK(out->dtype == in->dtype, PCT_ERR_TYPE, "input tensor must be the same type as the output tensor.");
    PCT_CHECK(in->numel == out->numel * pg->size, PCT_ERR_VALUE,
              "input tensor must be the same size as output size times world size");
    PCT_TRY(flat = pct_to_dtype(in, in->dtype, true)); /* a private copy: the input stays as it was */
    PCT_TRY_INT(reduce_scatter_flat(pg, out, flat, op));
    Py_DECREF(flat);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(flat);
    return NULL;
}

/* Byte counts per rank for all_to_all_single: splits (a sequence of dim-0 sizes, empty = even). */
static int split_bytes(pg_object *pg, PyObject *splits, const pct_tensor *t, int64_t *bytes, const char *what)
{
    int64_t dim0 = t->ndim ? t->sizes[0] : 1;
    int64_t row = dim0 ? t->numel / dim0 : 0, item = pct_tensor_itemsize(t);
    Py_ssize_t n = splits == Py_None ? 0 : PySequence_Size(splits);
    if (n < 0) return -1;
    if (n == 0) {
        PCT_CHECK(dim0 % pg->size == 0, PCT_ERR_RUNTIME, "Tensor's dim 0 does not divide equally across group size");
        for (int i = 0; i < pg->size; i++) bytes[i] = dim0 / pg->size * row * item;
        return 0;
    }
    PCT_CHECK(n == pg->size, PCT_ERR_RUNTIME, "Number of %s splits must equal the group size", what);
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(splits, i);
        if (!o) return -1;
        long long v = PyLong_AsLongLong(o);
        Py_DECREF(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        PCT_CHECK(v >= 0, PCT_ERR_RUNTIME, "Split sizes must be non-negative");
        bytes[i] = v * row * item;
        total += v;
    }
    PCT_CHECK(total == dim0, PCT_ERR_RUNTIME, "Split sizes doesn't match total dim 0 size");
    return 0;
fail:
    return -1;
}

/* alltoall_base(output, input, output_split_sizes, input_split_sizes) */
static PyObject *pg_alltoall_base(PyObject *self, PyObject *args)
{
    pg_object *pg = (pg_object *)self;
    PyObject *oo, *io, *osplit, *isplit;
    char err[512] = {0};
    pct_tensor *staged = NULL, *buf = NULL;
    int64_t *ib = NULL, *ob = NULL;
    if (!PyArg_ParseTuple(args, "OOOO:alltoall_base", &oo, &io, &osplit, &isplit) || !live(pg)) return NULL;
    pct_tensor *out = gloo_tensor(oo), *in = out ? gloo_tensor(io) : NULL;
    if (!in) return NULL;
    PCT_CHECK(out->dtype == in->dtype, PCT_ERR_RUNTIME, "Tensors must have the same dtype");
    PCT_TRY(ib = PyMem_Calloc((size_t)pg->size, sizeof *ib));
    PCT_TRY(ob = PyMem_Calloc((size_t)pg->size, sizeof *ob));
    PCT_TRY_INT(split_bytes(pg, isplit, in, ib, "input"));
    PCT_TRY_INT(split_bytes(pg, osplit, out, ob, "output"));
    PCT_TRY(staged = pct_contiguous(in));
    PCT_TRY(buf = output_buffer(out, out->numel));
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_alltoallv(pg->gloo, pct_tensor_data(staged), ib, pct_tensor_data(buf), ob, tag, PG_TIMEOUT(pg), err,
                                sizeof err));
    PCT_TRY_INT(output_done(out, buf));
    Py_DECREF(staged);
    Py_DECREF(buf);
    PyMem_Free(ib);
    PyMem_Free(ob);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(staged);
    Py_XDECREF(buf);
    PyMem_Free(ib);
    PyMem_Free(ob);
    return NULL;
}

static PyObject *pg_barrier(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pg_object *pg = (pg_object *)self;
    char err[512] = {0};
    if (!live(pg)) return NULL;
    uint32_t tag = pg->tag++;
    RUN_GLOO(pct_gloo_barrier(pg->gloo, tag, PG_TIMEOUT(pg), err, sizeof err));
    Py_RETURN_NONE;
fail:
    return NULL;
}

/* send(tensor, dst, tag) / recv(tensor, src, tag) -> Work (src -1: any source) */
static PyObject *p2p(PyObject *self, PyObject *args, bool is_send)
{
    pg_object *pg = (pg_object *)self;
    PyObject *to;
    int peer;
    long long tag = 0;
    char err[512] = {0};
    pct_tensor *staged = NULL;
    work_object *w = NULL;
    if (!PyArg_ParseTuple(args, "Oi|L", &to, &peer, &tag) || !live(pg)) return NULL;
    pct_tensor *t = gloo_tensor(to);
    if (!t) return NULL;
    PCT_CHECK(peer >= (is_send ? 0 : -1) && peer < pg->size, PCT_ERR_VALUE, "Invalid %s rank %d", is_send ? "destination" : "source", peer);
    PCT_CHECK(pct_tensor_is_contiguous(t), PCT_ERR_RUNTIME, "input tensor has to be contiguous"); /* as torch's Gloo */
    PCT_TRY(staged = (pct_tensor *)Py_NewRef((PyObject *)t));
    PCT_TRY(w = PyObject_New(work_object, &work_type));
    w->p2p = NULL;
    w->pg = Py_NewRef(self);
    w->user = (pct_tensor *)Py_NewRef((PyObject *)t);
    w->staged = staged;
    staged = NULL;
    w->result = NULL;
    w->peer = peer;
    w->completed = false;
    void *p = pct_tensor_data(w->staged);
    size_t nb = nbytes_of(w->staged);
    Py_BEGIN_ALLOW_THREADS
    w->p2p = is_send ? pct_gloo_send(pg->gloo, p, nb, peer, (uint64_t)tag, err, sizeof err)
                     : pct_gloo_recv(pg->gloo, p, nb, peer, (uint64_t)tag, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (!w->p2p) { gloo_fail(err); goto fail; }
    if (is_send) Py_CLEAR(w->user); /* nothing to copy back */
    return (PyObject *)w;
fail:
    Py_XDECREF(staged);
    Py_XDECREF(w);
    return NULL;
}

static PyObject *pg_send(PyObject *self, PyObject *args) { return p2p(self, args, true); }
static PyObject *pg_recv(PyObject *self, PyObject *args) { return p2p(self, args, false); }

static PyObject *pg_rank(PyObject *self, PyObject *Py_UNUSED(ignored)) { return PyLong_FromLong(((pg_object *)self)->rank); }
static PyObject *pg_size(PyObject *self, PyObject *Py_UNUSED(ignored)) { return PyLong_FromLong(((pg_object *)self)->size); }

static PyObject *pg_get_timeout(PyObject *self, void *Py_UNUSED(closure))
{
    return pct_timedelta_from_ms(((pg_object *)self)->timeout_ms);
}

static PyMethodDef pg_methods[] = {
    {"allreduce", pg_allreduce, METH_VARARGS, "allreduce(tensor, op)"},
    {"reduce", pg_reduce, METH_VARARGS, "reduce(tensor, root, op)"},
    {"broadcast", pg_broadcast, METH_VARARGS, "broadcast(tensor, root)"},
    {"allgather", pg_allgather, METH_VARARGS, "allgather(output_list, input)"},
    {"allgather_into", pg_allgather_into, METH_VARARGS, "allgather_into(output, input)"},
    {"gather", pg_gather, METH_VARARGS, "gather(output_list or None, input, root)"},
    {"scatter", pg_scatter, METH_VARARGS, "scatter(output, input_list or None, root)"},
    {"reduce_scatter", pg_reduce_scatter, METH_VARARGS, "reduce_scatter(output, input_list, op)"},
    {"reduce_scatter_tensor", pg_reduce_scatter_tensor, METH_VARARGS, "reduce_scatter_tensor(output, input, op)"},
    {"alltoall_base", pg_alltoall_base, METH_VARARGS, "alltoall_base(output, input, output_splits, input_splits)"},
    {"barrier", pg_barrier, METH_NOARGS, "barrier()"},
    {"send", pg_send, METH_VARARGS, "send(tensor, dst, tag=0) -> Work"},
    {"recv", pg_recv, METH_VARARGS, "recv(tensor, src, tag=0) -> Work (src -1: any)"},
    {"rank", pg_rank, METH_NOARGS, NULL},
    {"size", pg_size, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pg_getset[] = {
    {"timeout", pg_get_timeout, NULL, "the timeout of every collective", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject pg_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torch._C._distributed_c10d.ProcessGroupGloo",
    .tp_basicsize = sizeof(pg_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "ProcessGroupGloo(store, rank, size, timeout=timedelta(minutes=30), hostname='127.0.0.1', iface='')",
    .tp_new = PyType_GenericNew,
    .tp_init = pg_init,
    .tp_dealloc = pg_dealloc,
    .tp_methods = pg_methods,
    .tp_getset = pg_getset,
};

/* ---- Work -------------------------------------------------------------------------------- */

/* Work(result=None): a finished collective's handle (the Python layer makes these). */
static int work_init(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"result", NULL};
    work_object *w = (work_object *)self;
    PyObject *result = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Work", kw, &result)) return -1;
    Py_XSETREF(w->result, Py_NewRef(result));
    w->completed = true;
    w->peer = -1;
    return 0;
}

static void work_dealloc(PyObject *self)
{
    work_object *w = (work_object *)self;
    if (w->p2p) {
        pct_gloo_p2p *p = w->p2p;
        w->p2p = NULL;
        Py_BEGIN_ALLOW_THREADS
        pct_gloo_p2p_free(p);
        Py_END_ALLOW_THREADS
    }
    Py_CLEAR(w->user);
    Py_CLEAR(w->staged);
    Py_CLEAR(w->result);
    Py_CLEAR(w->pg);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *work_wait(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"timeout", NULL};
    work_object *w = (work_object *)self;
    PyObject *timeout = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:wait", kw, &timeout)) return NULL;
    if (w->completed || !w->p2p) { w->completed = true; Py_RETURN_TRUE; }
    int64_t ms = ((pg_object *)w->pg)->timeout_ms;
    if (timeout != Py_None && pct_timedelta_ms(timeout, &ms) < 0) return NULL;
    char err[512] = {0};
    int peer = -1, rc;
    pct_gloo_p2p *p = w->p2p;
    Py_BEGIN_ALLOW_THREADS
    rc = pct_gloo_p2p_wait(p, ms, &peer, err, sizeof err);
    Py_END_ALLOW_THREADS
    if (rc < 0) return gloo_fail(err), NULL;
    w->completed = true;
    if (peer >= 0) w->peer = peer;
    if (w->user) {
        if (output_done(w->user, w->staged) < 0) return NULL;
        PyObject *r = PyList_New(1);
        if (!r) return NULL;
        PyList_SET_ITEM(r, 0, Py_NewRef((PyObject *)w->user));
        Py_XSETREF(w->result, r);
    }
    Py_RETURN_TRUE;
}

static PyObject *work_is_completed(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(((work_object *)self)->completed);
}

static PyObject *work_result(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    work_object *w = (work_object *)self;
    if (!w->result || w->result == Py_None) return PyList_New(0);
    return Py_NewRef(w->result);
}

static PyObject *work_source_rank(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    work_object *w = (work_object *)self;
    if (!w->completed || w->peer < 0) {
        PyErr_SetString(PyExc_RuntimeError, "sourceRank() may only be called on a completed recv work");
        return NULL;
    }
    return PyLong_FromLong(w->peer);
}

static PyMethodDef work_methods[] = {
    {"wait", (PyCFunction)(void (*)(void))work_wait, METH_VARARGS | METH_KEYWORDS, "wait(timeout=None) -> True"},
    {"is_completed", work_is_completed, METH_NOARGS, NULL},
    {"is_success", work_is_completed, METH_NOARGS, NULL},
    {"result", work_result, METH_NOARGS, "the output tensors"},
    {"_source_rank", work_source_rank, METH_NOARGS, "the rank a completed recv came from"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject work_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torch.distributed.distributed_c10d.Work",
    .tp_basicsize = sizeof(work_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The handle of a distributed operation: wait(), is_completed(), result().",
    .tp_new = PyType_GenericNew,
    .tp_init = work_init,
    .tp_dealloc = work_dealloc,
    .tp_methods = work_methods,
};

int pct_process_group_install(PyObject *m)
{
    if (PyType_Ready(&pg_type) < 0 || PyType_Ready(&work_type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "ProcessGroupGloo", (PyObject *)&pg_type) < 0 ||
        PyModule_AddObjectRef(m, "Work", (PyObject *)&work_type) < 0)
        return -1;
    return 0;
}

#else /* no Gloo: the module has stores only */

int pct_process_group_install(PyObject *m)
{
    (void)m;
    return 0;
}

#endif
