/* profiler.c: the event recorder behind torch.profiler (pyctorch/profiler) and the
 * hooked path of an op call (Note [Dispatch hooks] in profiler.h).
 *
 * While recording, every op call, backward node and record_function region appends one
 * event to a C array: name id, start/end (CLOCK_MONOTONIC ns), thread id, parent event
 * (the event open on the same thread when it started), and optionally the input shapes
 * and dtypes (into an int64 pool), the net CPU bytes allocated inside it, and the Python
 * stack. Nothing is made in Python per op event unless with_stack is on; the events
 * become Python tuples when recording stops. Everything here runs with the GIL held
 * (the binding and the engine call in and out with it), so the buffers need no lock.
 */
#include "profiler.h"
#include "python_values.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

int pct_dispatch_hooks;

enum { EV_OP, EV_USER, EV_BACKWARD_EVAL, EV_BACKWARD_NODE };
/* shape pool codes, one per recorded parameter */
enum { SH_OTHER, SH_NONE, SH_SCALAR, SH_SCALARLIST, SH_TENSORLIST, SH_TENSOR };

typedef struct prof_event {
    int64_t start, end;   /* ns; end < 0 while open */
    int64_t mem;          /* live CPU bytes at start while open, then the net change */
    int64_t tid;
    int32_t name;         /* >= 0: 2 * op index + in-place; < 0: -1 - index into names */
    int32_t parent;       /* enclosing event on the same thread, or -1 */
    int32_t shapes;       /* offset into the pool, or -1 */
    int32_t kind;
    PyObject *stack;      /* with_stack: a list of "file(line): function", owned */
} prof_event;

static struct {
    int on;
    int record_shapes, profile_memory, with_stack;
    uint32_t gen;         /* recording session: stale handles and thread stacks are ignored */
    prof_event *ev;
    int32_t n, cap;
    int64_t *pool;
    int64_t npool, cappool;
    int64_t dropped;      /* events lost to a failed allocation */
    int64_t t_start;
    PyObject *names;      /* list of str: the names of non-op events */
    PyObject *name_ids;   /* str -> index into names */
    PyObject *eval_ids;   /* node name -> index of "autograd::engine::evaluate_function: " + name */
} P;

static _Thread_local int32_t tls_cur = -1;
static _Thread_local uint32_t tls_gen;
static _Thread_local int64_t tls_tid;

static PyObject *op_names[2 * PCT_NUM_OPS];

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t live_bytes(void)
{
    long long live, peak;
    pct_cpu_memory_stats(&live, &peak);
    return live;
}

/* ---- shapes ---- */

static int pool_reserve(int64_t extra)
{
    if (P.npool + extra <= P.cappool) return 0;
    int64_t cap = P.cappool ? P.cappool : 4096;
    while (cap < P.npool + extra) cap *= 2;
    int64_t *p = realloc(P.pool, (size_t)cap * sizeof(int64_t));
    if (!p) return -1;
    P.pool = p;
    P.cappool = cap;
    return 0;
}

/* [count, then per parameter: code (SH_TENSOR: dtype, ndim, sizes...)]; the out= parameter
 * is left out, as torch's schemas have none. Tensor lists read [] as in torch. */
static int32_t record_shapes(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    int64_t need = 1;
    for (int i = 0; i < sig->nparams; i++)
        need += 1 + (sig->params[i].type == PCT_ARG_TENSOR && !c->v[i].none ? 2 + c->v[i].t->ndim : 0);
    if (pool_reserve(need) < 0) return -1;
    int64_t at = P.npool, *p = P.pool + at, k = 1, count = 0;
    for (int i = 0; i < sig->nparams; i++) {
        if (i == sig->out_index) continue;
        count++;
        const pct_value *v = &c->v[i];
        int type = sig->params[i].type;
        if (v->none) { p[k++] = SH_NONE; continue; }
        if (type == PCT_ARG_TENSOR) {
            const pct_tensor *t = v->t;
            if (t->flags & PCT_FLAG_WRAPPED_NUMBER) { p[k++] = SH_SCALAR; continue; }
            p[k++] = SH_TENSOR;
            p[k++] = t->dtype;
            p[k++] = t->ndim;
            for (int d = 0; d < t->ndim; d++) p[k++] = t->sizes[d];
        } else if (type == PCT_ARG_SCALAR || type == PCT_ARG_INT || type == PCT_ARG_FLOAT || type == PCT_ARG_BOOL) {
            p[k++] = SH_SCALAR;
        } else if (type == PCT_ARG_INTLIST || type == PCT_ARG_FLOATLIST) {
            p[k++] = SH_SCALARLIST;
        } else if (type == PCT_ARG_TENSORLIST) {
            p[k++] = SH_TENSORLIST;
        } else {
            p[k++] = SH_OTHER;
        }
    }
    p[0] = count;
    P.npool += k;
    return (int32_t)at;
}

/* ---- Python stack (with_stack) ---- */

static bool internal_frame(PyObject *filename)
{
    const char *f = PyUnicode_AsUTF8(filename);
    if (!f) { PyErr_Clear(); return false; }
    size_t n = strlen(f);
    static const char *const tails[] = {"autograd/profiler.py", "profiler/profiler.py", "autograd/profiler_util.py"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t m = strlen(tails[i]);
        if (n >= m && strcmp(f + n - m, tails[i]) == 0) return true;
    }
    return false;
}

static PyObject *capture_stack(void)
{
    PyObject *list = PyList_New(0);
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (list && f) {
        PyCodeObject *code = PyFrame_GetCode(f);
        if (!internal_frame(code->co_filename)) {
            PyObject *s = PyUnicode_FromFormat("%U(%d): %U", code->co_filename, PyFrame_GetLineNumber(f), code->co_name);
            if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
            Py_XDECREF(s);
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    if (!list) PyErr_Clear(); /* a stack is optional: recording goes on without it */
    return list;
}

/* ---- events ---- */

static int32_t ev_open(int32_t name, int kind, const pct_call *c)
{
    /* the stack first: making its strings may run the GC and finalizers, which may run ops
     * (nested events, a reallocated array), so no pointer into the array is held across it */
    PyObject *stack = P.with_stack ? capture_stack() : NULL;
    if (P.n == P.cap) {
        int32_t cap = P.cap ? P.cap * 2 : 4096;
        prof_event *e = realloc(P.ev, (size_t)cap * sizeof *e);
        if (!e) { P.dropped++; Py_XDECREF(stack); return -1; }
        P.ev = e;
        P.cap = cap;
    }
    if (tls_gen != P.gen) { tls_gen = P.gen; tls_cur = -1; }
    if (!tls_tid) tls_tid = (int64_t)PyThread_get_thread_native_id();
    int32_t i = P.n++;
    prof_event *e = &P.ev[i];
    e->name = name;
    e->kind = kind;
    e->parent = tls_cur;
    e->tid = tls_tid;
    e->end = -1;
    e->shapes = c && P.record_shapes ? record_shapes(c) : -1;
    e->stack = stack;
    e->mem = P.profile_memory ? live_bytes() : 0;
    tls_cur = i;
    e->start = now_ns(); /* last: the bookkeeping above is outside the measured range */
    return i;
}

static void ev_close(int32_t i, uint32_t gen)
{
    int64_t t = now_ns();
    if (i < 0 || !P.on || gen != P.gen || i >= P.n) return;
    prof_event *e = &P.ev[i];
    if (e->end >= 0) return;
    e->end = t;
    if (P.profile_memory) e->mem = live_bytes() - e->mem;
    if (tls_gen == gen) tls_cur = e->parent;
}

/* The id of a non-op event name registered under `key`, or INT32_MIN. */
static int32_t lookup_name(PyObject *dict, PyObject *key)
{
    PyObject *v = PyDict_GetItemWithError(dict, key);
    if (v) return (int32_t)PyLong_AsLong(v);
    PyErr_Clear();
    return INT32_MIN;
}

/* Registers `name` under `key` once; its id, or INT32_MIN when out of memory. */
static int32_t intern_name(PyObject *dict, PyObject *key, PyObject *name)
{
    int32_t id = lookup_name(dict, key);
    if (id != INT32_MIN) return id;
    Py_ssize_t k = PyList_GET_SIZE(P.names);
    PyObject *idx = PyLong_FromSsize_t(-1 - k);
    if (!idx || PyList_Append(P.names, name) < 0 || PyDict_SetItem(dict, key, idx) < 0) {
        Py_XDECREF(idx);
        PyErr_Clear();
        return INT32_MIN;
    }
    Py_DECREF(idx);
    return (int32_t)(-1 - k);
}

PyObject *pct_hooked_dispatch(pct_call *c)
{
    int32_t ev = -1;
    uint32_t gen = P.gen;
    if (P.on) ev = ev_open(2 * c->op_index + (c->inplace ? 1 : 0), EV_OP, c);
    PyObject *held[PCT_MAX_PARAMS];
    int nheld = 0;
    PyObject *r;
    if ((pct_dispatch_hooks & PCT_HOOK_AUTOCAST) && pct_autocast_apply(c, held, &nheld) < 0) r = NULL;
    else if (pct_dispatch_hooks & PCT_HOOK_FORWARD_AD) r = pct_forward_ad_dispatch(c);
    else r = pct_autograd_dispatch(c);
    for (int i = 0; i < nheld; i++) Py_DECREF(held[i]);
    if (ev >= 0) ev_close(ev, gen);
    return r;
}

PyObject *pct_profiled_node_apply(pct_node *n, PyObject *grads)
{
    if (!P.on || !n->name) return pct_node_apply(n, grads);
    uint32_t gen = P.gen;
    int32_t eval = lookup_name(P.eval_ids, n->name);
    if (eval == INT32_MIN) {
        PyObject *full = PyUnicode_FromFormat("autograd::engine::evaluate_function: %U", n->name);
        if (full) eval = intern_name(P.eval_ids, n->name, full);
        else PyErr_Clear();
        Py_XDECREF(full);
    }
    int32_t node = intern_name(P.name_ids, n->name, n->name);
    int32_t e1 = eval != INT32_MIN ? ev_open(eval, EV_BACKWARD_EVAL, NULL) : -1;
    int32_t e2 = node != INT32_MIN ? ev_open(node, EV_BACKWARD_NODE, NULL) : -1;
    PyObject *r = pct_node_apply(n, grads);
    ev_close(e2, gen);
    ev_close(e1, gen);
    return r;
}

/* ---- collection ---- */

static PyObject *op_name(int32_t name)
{
    PyObject **slot = &op_names[name];
    if (!*slot) {
        const pct_op *op = &pct_ops[name / 2];
        *slot = PyUnicode_FromFormat("aten::%s%s", op->sig.name, (name & 1) ? "_" : "");
    }
    return *slot;
}

/* (input_shapes, input_types) of one event, from the pool */
static int shapes_of(const prof_event *e, PyObject **shapes, PyObject **types)
{
    const int64_t *p = P.pool + e->shapes;
    int64_t n = p[0], k = 1;
    *shapes = PyList_New(n);
    *types = PyList_New(n);
    if (!*shapes || !*types) return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t code = p[k++];
        PyObject *dims, *type;
        if (code == SH_TENSOR) {
            int64_t dtype = p[k++], nd = p[k++];
            dims = PyList_New(nd);
            for (int64_t d = 0; dims && d < nd; d++) {
                PyObject *s = PyLong_FromLongLong(p[k + d]);
                if (!s) { Py_CLEAR(dims); break; }
                PyList_SET_ITEM(dims, d, s);
            }
            k += nd;
            type = PyUnicode_FromString(dtype >= 0 && dtype < PCT_NUM_DTYPES ? pct_dtype_cpp_type_name[dtype] : "");
        } else {
            dims = PyList_New(0);
            type = PyUnicode_FromString(code == SH_SCALAR ? "Scalar" : code == SH_SCALARLIST ? "ScalarList"
                                        : code == SH_TENSORLIST ? "TensorList" : "");
        }
        if (!dims || !type) { Py_XDECREF(dims); Py_XDECREF(type); return -1; }
        PyList_SET_ITEM(*shapes, i, dims);
        PyList_SET_ITEM(*types, i, type);
    }
    return 0;
}

static void clear_events(void)
{
    for (int32_t i = 0; i < P.n; i++) Py_CLEAR(P.ev[i].stack);
    free(P.ev);
    free(P.pool);
    P.ev = NULL;
    P.pool = NULL;
    P.n = P.cap = 0;
    P.npool = P.cappool = 0;
    Py_CLEAR(P.names);
    Py_CLEAR(P.name_ids);
    Py_CLEAR(P.eval_ids);
}

static PyObject *collect(int64_t t_stop, int64_t live_stop)
{
    PyObject *list = PyList_New(P.n);
    for (int32_t i = 0; list && i < P.n; i++) {
        prof_event *e = &P.ev[i];
        if (e->end < 0) { /* still open at stop (an unfinished record_function) */
            e->end = t_stop;
            if (P.profile_memory) e->mem = live_stop - e->mem;
        }
        PyObject *name = e->name >= 0 ? op_name(e->name) : PyList_GET_ITEM(P.names, -1 - e->name);
        PyObject *shapes = Py_None, *types = Py_None;
        if (e->shapes >= 0 && shapes_of(e, &shapes, &types) < 0) {
            Py_XDECREF(shapes);
            Py_XDECREF(types);
            Py_CLEAR(list);
            break;
        }
        if (shapes == Py_None) { Py_INCREF(Py_None); Py_INCREF(Py_None); }
        PyObject *tup = name ? Py_BuildValue("(OiLLLiLNNO)", name, e->kind, (long long)e->start, (long long)e->end,
                                             (long long)e->tid, e->parent, (long long)e->mem, shapes, types,
                                             e->stack ? e->stack : Py_None)
                             : NULL;
        if (!tup) {
            if (!name) { Py_DECREF(shapes); Py_DECREF(types); }
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, tup);
    }
    return list;
}

/* ---- Python entry points ---- */

static PyObject *py_profiler_start(PyObject *m, PyObject *args)
{
    (void)m;
    int shapes, memory, stack;
    if (!PyArg_ParseTuple(args, "ppp", &shapes, &memory, &stack)) return NULL;
    if (P.on) {
        PyErr_SetString(PyExc_RuntimeError, "Profiler is already enabled on this thread");
        return NULL;
    }
    clear_events();
    P.names = PyList_New(0);
    P.name_ids = PyDict_New();
    P.eval_ids = PyDict_New();
    if (!P.names || !P.name_ids || !P.eval_ids) { clear_events(); return NULL; }
    P.record_shapes = shapes;
    P.profile_memory = memory;
    P.with_stack = stack;
    P.dropped = 0;
    P.gen++;
    P.t_start = now_ns();
    P.on = 1;
    pct_dispatch_hooks |= PCT_HOOK_PROFILER;
    Py_RETURN_NONE;
}

/* -> (events, start_ns, stop_ns, dropped); each event (name, kind, start_ns, end_ns, tid,
 * parent index, cpu memory delta, input shapes, input types, stack) */
static PyObject *py_profiler_stop(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    if (!P.on) {
        PyErr_SetString(PyExc_RuntimeError, "Can't disable Kineto profiler when it's not running");
        return NULL;
    }
    int64_t t_stop = now_ns(), live = P.profile_memory ? live_bytes() : 0;
    P.on = 0;
    pct_dispatch_hooks &= ~PCT_HOOK_PROFILER;
    PyObject *events = collect(t_stop, live);
    PyObject *r = events ? Py_BuildValue("(NLLL)", events, (long long)P.t_start, (long long)t_stop, (long long)P.dropped)
                         : NULL;
    clear_events();
    return r;
}

static PyObject *py_profiler_enabled(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyBool_FromLong(P.on);
}

/* _record_function_enter(name) -> a handle for _record_function_exit, or -1 when not recording */
static PyObject *py_record_function_enter(PyObject *m, PyObject *name)
{
    (void)m;
    if (!P.on) return PyLong_FromLong(-1);
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "record_function(): name must be str, not %s", Py_TYPE(name)->tp_name);
        return NULL;
    }
    int32_t id = intern_name(P.name_ids, name, name);
    int32_t i = id != INT32_MIN ? ev_open(id, EV_USER, NULL) : -1;
    if (i < 0) return PyLong_FromLong(-1);
    return PyLong_FromLongLong(((long long)P.gen << 32) | (long long)i);
}

static PyObject *py_record_function_exit(PyObject *m, PyObject *handle)
{
    (void)m;
    long long h = PyLong_AsLongLong(handle);
    if (h == -1 && PyErr_Occurred()) return NULL;
    if (h >= 0) ev_close((int32_t)(h & 0xffffffffLL), (uint32_t)(h >> 32));
    Py_RETURN_NONE;
}

static PyObject *py_profiler_now(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyLong_FromLongLong(now_ns());
}

static PyMethodDef profiler_methods[] = {
    {"_profiler_start", py_profiler_start, METH_VARARGS, NULL},
    {"_profiler_stop", py_profiler_stop, METH_NOARGS, NULL},
    {"_profiler_enabled", py_profiler_enabled, METH_NOARGS, NULL},
    {"_profiler_now_ns", py_profiler_now, METH_NOARGS, NULL},
    {"_record_function_enter", py_record_function_enter, METH_O, NULL},
    {"_record_function_exit", py_record_function_exit, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int pct_profiler_install(PyObject *module)
{
    if (PyModule_AddFunctions(module, profiler_methods) < 0) return -1;
    return pct_autocast_install(module);
}
