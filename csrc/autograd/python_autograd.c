/* python_autograd.c: the _C entry points of the autograd layer: running backward,
 * anomaly mode, tensor hooks and retain_grad, and attaching a Python Function's
 * context node to its inputs and outputs. */
#include "autograd.h"
#include "profiler.h"
#include "python_values.h"
#include <stdlib.h>

pct_python_values_table pct_python_values; /* Note [Python values for autograd]: the binding fills it at import */

PyObject *pct_register_hook_in(PyObject **slot, PyObject *fn);
PyObject *pct_node_register_tensor_hook(pct_node *n, uint32_t output_nr, PyObject *fn);

static PyObject *as_fast_seq(PyObject *o, const char *what)
{
    if (o == Py_None) return NULL;
    return PySequence_Fast(o, what);
}

/* _run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unused, accumulate) */
static PyObject *py_run_backward(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *tensors, *grads, *inputs;
    int keep, create, allow_unused, accumulate;
    if (!PyArg_ParseTuple(args, "OOppOpp", &tensors, &grads, &keep, &create, &inputs, &allow_unused, &accumulate)) return NULL;
    PyObject *ts = PySequence_Fast(tensors, "tensors must be a sequence");
    if (!ts) return NULL;
    PyObject *gs = grads == Py_None ? NULL : as_fast_seq(grads, "grad_tensors must be a sequence");
    PyObject *is = inputs == Py_None ? NULL : as_fast_seq(inputs, "inputs must be a sequence");
    PyObject *r = NULL;
    if ((grads != Py_None && !gs) || (inputs != Py_None && !is)) goto done;
    if (gs && PySequence_Fast_GET_SIZE(gs) != PySequence_Fast_GET_SIZE(ts)) {
        PyErr_Format(PyExc_RuntimeError, "Mismatch in number of gradients: got %zd gradients for %zd outputs",
                     PySequence_Fast_GET_SIZE(gs), PySequence_Fast_GET_SIZE(ts));
        goto done;
    }
    r = pct_run_backward(ts, gs, keep, create, is, accumulate, allow_unused);
done:
    Py_DECREF(ts);
    Py_XDECREF(gs);
    Py_XDECREF(is);
    return r;
}

static PyObject *py_set_anomaly(PyObject *m, PyObject *arg)
{
    (void)m;
    int v = PyObject_IsTrue(arg);
    if (v < 0) return NULL;
    pct_anomaly_enabled = v;
    Py_RETURN_NONE;
}
static PyObject *py_is_anomaly(PyObject *m, PyObject *u) { (void)m; (void)u; return PyBool_FromLong(pct_anomaly_enabled); }

static pct_tensor *tensor_arg(PyObject *o)
{
    if (!pct_is_tensor_object(o)) { PyErr_SetString(PyExc_TypeError, "expected a Tensor"); return NULL; }
    return (pct_tensor *)o;
}

/* The (tensor, hook) arguments of the hook registrations; the tensor must require grad. */
static pct_tensor *hook_target(PyObject *args, PyObject **fn)
{
    PyObject *o;
    if (!PyArg_ParseTuple(args, "OO", &o, fn)) return NULL;
    pct_tensor *t = tensor_arg(o);
    if (t && !pct_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    return t;
}

/* _register_tensor_hook(tensor, fn): leaves keep hooks themselves, other tensors on grad_fn */
static PyObject *py_register_tensor_hook(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *fn;
    pct_tensor *t = hook_target(args, &fn);
    if (!t) return NULL;
    if (t->grad_fn) return pct_node_register_tensor_hook((pct_node *)t->grad_fn, t->output_nr, fn);
    return pct_register_hook_in(&t->hooks, fn);
}

static PyObject *py_register_post_acc_hook(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *fn;
    pct_tensor *t = hook_target(args, &fn);
    if (!t) return NULL;
    if (t->grad_fn) {
        PyErr_SetString(PyExc_RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors");
        return NULL;
    }
    return pct_register_hook_in(&t->post_acc_hooks, fn);
}

static PyObject *py_retain_grad(PyObject *m, PyObject *o)
{
    (void)m;
    pct_tensor *t = tensor_arg(o);
    if (!t) return NULL;
    if (!pct_tensor_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    if (!t->grad_fn || (t->flags & PCT_FLAG_RETAINS_GRAD)) Py_RETURN_NONE; /* leaves keep .grad anyway */
    pct_node *n = (pct_node *)t->grad_fn;
    if (!n->retained && !(n->retained = PyDict_New())) return NULL;
    PyObject *key = PyLong_FromUnsignedLong(t->output_nr), *w = key ? PyWeakref_NewRef(o, NULL) : NULL;
    int rc = w ? PyDict_SetItem(n->retained, key, w) : -1;
    Py_XDECREF(key);
    Py_XDECREF(w);
    if (rc < 0) return NULL;
    t->flags |= PCT_FLAG_RETAINS_GRAD;
    Py_RETURN_NONE;
}

/* _function_attach(ctx, inputs, outputs, non_differentiable[, dirty]): ctx (a Node subclass
 * instance) becomes grad_fn of the differentiable outputs; its edges lead to inputs. Outputs
 * that are views (and were not modified in place by the Function) may not be written in
 * place later (PCT_FLAG_FUNCTION_VIEW). */
static PyObject *py_function_attach(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ctx, *inputs, *outputs, *nondiff, *dirty = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!O!|O!", &pct_NodeType, &ctx, &PyTuple_Type, &inputs, &PyTuple_Type, &outputs,
                          &PyTuple_Type, &nondiff, &PyTuple_Type, &dirty))
        return NULL;
    pct_node *n = (pct_node *)ctx;
    Py_ssize_t ni = PyTuple_GET_SIZE(inputs), no = PyTuple_GET_SIZE(outputs);
    if (n->nedges || n->noutputs) { PyErr_SetString(PyExc_RuntimeError, "this Function context is already attached"); return NULL; }
    n->edges = ni ? calloc((size_t)ni, sizeof(pct_edge)) : NULL;
    n->outputs = no ? calloc((size_t)no, sizeof(pct_meta)) : NULL;
    if ((ni && !n->edges) || (no && !n->outputs)) return PyErr_NoMemory();
    n->nedges = (int)ni;
    n->noutputs = (int)no;
    for (Py_ssize_t i = 0; i < ni; i++) {
        n->edges[i].meta.dtype = -1;
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (pct_is_tensor_object(x) && pct_node_set_edge(n, (int)i, (pct_tensor *)x) < 0) return NULL;
    }
    for (Py_ssize_t i = 0; i < no; i++) {
        n->outputs[i].dtype = -1;
        PyObject *y = PyTuple_GET_ITEM(outputs, i);
        if (!pct_is_tensor_object(y)) continue;
        bool c = false; /* by identity: == on tensors is elementwise */
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(nondiff); k++) c = c || PyTuple_GET_ITEM(nondiff, k) == y;
        if (!c && pct_dtype_is_differentiable(((pct_tensor *)y)->dtype)) pct_node_set_output(n, (int)i, (pct_tensor *)y);
    }
    if (pct_node_finish_meta(n) < 0) return NULL;
    for (Py_ssize_t i = 0; i < no; i++) {
        if (n->outputs[i].dtype < 0) continue;
        pct_tensor *y = (pct_tensor *)PyTuple_GET_ITEM(outputs, i);
        pct_set_history(y, n, (uint32_t)i);
        bool is_dirty = false;
        for (Py_ssize_t k = 0; dirty && k < PyTuple_GET_SIZE(dirty); k++) is_dirty = is_dirty || PyTuple_GET_ITEM(dirty, k) == (PyObject *)y;
        if (y->base && !is_dirty) y->flags |= PCT_FLAG_FUNCTION_VIEW;
    }
    Py_RETURN_NONE;
}

/* _record_callable(name, fn, saved, inputs, outputs): a node whose backward is
 * fn(grads, results, needs, *saved); used by Python-level composite backward helpers. */
static PyObject *py_record_callable(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name;
    PyObject *fn, *saved, *inputs, *outputs;
    if (!PyArg_ParseTuple(args, "sOO!O!O!", &name, &fn, &PyTuple_Type, &saved, &PyTuple_Type, &inputs, &PyTuple_Type, &outputs))
        return NULL;
    Py_ssize_t ni = PyTuple_GET_SIZE(inputs), no = PyTuple_GET_SIZE(outputs);
    pct_tensor **ts = calloc((size_t)(ni + no + 1), sizeof(pct_tensor *));
    if (!ts) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < ni + no; i++) {
        PyObject *o = i < ni ? PyTuple_GET_ITEM(inputs, i) : PyTuple_GET_ITEM(outputs, i - ni);
        ts[i] = pct_is_tensor_object(o) ? (pct_tensor *)o : NULL;
    }
    pct_node *n = pct_record_callable(name, fn, saved, (int)ni, ts, (int)no, ts + ni);
    free(ts);
    return (PyObject *)n;
}

static PyObject *py_rebase_view(PyObject *m, PyObject *o)
{
    (void)m;
    pct_tensor *t = tensor_arg(o);
    if (!t) return NULL;
    if (t->base && t->grad_fn && pct_rebase_view_history(t) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_check_inplace(PyObject *m, PyObject *o)
{
    (void)m;
    pct_tensor *t = tensor_arg(o);
    if (!t) return NULL;
    if (pct_grad_enabled && pct_check_inplace(t) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_node_saved_released(PyObject *m, PyObject *o)
{
    (void)m;
    if (!PCT_NODE_CHECK(o)) { PyErr_SetString(PyExc_TypeError, "expected a graph node"); return NULL; }
    return PyBool_FromLong(((pct_node *)o)->released);
}

/* _raise_modified(tensor, saved_version, node_or_None, output_nr): the version-check error of a Python
 * Function's saved tensors, worded as the C nodes' */
static PyObject *py_raise_modified(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *t, *node;
    long long version;
    unsigned int nr;
    if (!PyArg_ParseTuple(args, "OLOI", &t, &version, &node, &nr)) return NULL;
    if (!pct_is_tensor_object(t)) { PyErr_SetString(PyExc_TypeError, "expected a Tensor"); return NULL; }
    return pct_modified_error(t, (int64_t)version, node, nr);
}

static PyObject *py_node_release(PyObject *m, PyObject *o)
{
    (void)m;
    if (!PCT_NODE_CHECK(o)) { PyErr_SetString(PyExc_TypeError, "expected a graph node"); return NULL; }
    ((pct_node *)o)->released = 1;
    Py_RETURN_NONE;
}

/* _cpu_memory_stats(reset_peak=False) -> (bytes live, peak bytes) of CPU storages */
static PyObject *py_cpu_memory_stats(PyObject *m, PyObject *args)
{
    (void)m;
    int reset = 0;
    if (!PyArg_ParseTuple(args, "|p", &reset)) return NULL;
    if (reset) pct_cpu_memory_reset_peak();
    long long live, peak;
    pct_cpu_memory_stats(&live, &peak);
    return Py_BuildValue("(LL)", live, peak);
}

/* _cpu_cache_info() -> dict of the CPU allocator's block cache (cpu_allocator.c) */
static PyObject *py_cpu_cache_info(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    pct_cpu_cache_stats st;
    pct_cpu_cache_info(&st);
    return Py_BuildValue("{s:n,s:n,s:n,s:K,s:K}", "cached_bytes", (Py_ssize_t)st.cached_bytes,
                         "cached_blocks", (Py_ssize_t)st.cached_blocks, "limit_bytes", (Py_ssize_t)st.limit_bytes,
                         "hits", st.hits, "misses", st.misses);
}

/* _cpu_empty_cache(limit_bytes=None): give cached blocks back to the system; with a limit, set it too */
static PyObject *py_cpu_empty_cache(PyObject *m, PyObject *args)
{
    (void)m;
    Py_ssize_t limit = -1;
    if (!PyArg_ParseTuple(args, "|n", &limit)) return NULL;
    if (limit >= 0) pct_cpu_cache_set_limit((size_t)limit);
    else pct_cpu_cache_empty();
    Py_RETURN_NONE;
}

static PyMethodDef autograd_methods[] = {
    {"_cpu_cache_info", py_cpu_cache_info, METH_NOARGS, NULL},
    {"_cpu_empty_cache", py_cpu_empty_cache, METH_VARARGS, NULL},
    {"_cpu_memory_stats", py_cpu_memory_stats, METH_VARARGS, NULL},
    {"_run_backward", py_run_backward, METH_VARARGS, NULL},
    {"_set_anomaly_enabled", py_set_anomaly, METH_O, NULL},
    {"is_anomaly_enabled", py_is_anomaly, METH_NOARGS, NULL},
    {"_register_tensor_hook", py_register_tensor_hook, METH_VARARGS, NULL},
    {"_register_post_accumulate_grad_hook", py_register_post_acc_hook, METH_VARARGS, NULL},
    {"_retain_grad", py_retain_grad, METH_O, NULL},
    {"_function_attach", py_function_attach, METH_VARARGS, NULL},
    {"_record_callable", py_record_callable, METH_VARARGS, NULL},
    {"_rebase_view", py_rebase_view, METH_O, NULL},
    {"_check_inplace", py_check_inplace, METH_O, NULL},
    {"_node_released", py_node_saved_released, METH_O, NULL},
    {"_node_mark_released", py_node_release, METH_O, NULL},
    {"_raise_modified", py_raise_modified, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int pct_autograd_install(PyObject *module)
{
    if (PyType_Ready(&pct_NodeType) < 0 || PyModule_AddObjectRef(module, "_Node", (PyObject *)&pct_NodeType) < 0) return -1;
    if (PyModule_AddFunctions(module, autograd_methods) < 0) return -1;
    pct_composite_caller_install();
    if (pct_forward_ad_install(module) < 0) return -1;
    return pct_saved_hooks_install(module);
}
