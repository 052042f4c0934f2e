/* engine.c: the backward pass, on the calling thread.
 *
 * A graph task discovers the nodes reachable from the roots (iteratively), counts
 * each node's dependencies, then runs ready nodes from a heap ordered by sequence
 * number (later nodes first; AccumulateGrad, numbered last, runs as soon as ready).
 * Each node has an input buffer per output that sums the gradients arriving on
 * several edges. Returned gradients are validated against the input's metadata:
 * a broadcast shape is reduced with sum_to, a different dtype is cast. The first
 * error stops the pass and is re-raised. */
#include "autograd.h"
#include "profiler.h"
#include "python_values.h"
#include "../aten/iter.h"
#include <stdlib.h>
#include <string.h>

int pct_anomaly_enabled;

typedef struct task_node {
    pct_node *node;      /* owned: hooks and released saved values may drop the graph's own references */
    int deps;
    int needed;
    PyObject **buf;      /* noutputs gradients (owned) or NULL entries */
} task_node;

typedef struct capture {
    pct_node *node;
    uint32_t nr;
    PyObject *grad;      /* owned */
} capture;

typedef struct graph_task {
    task_node *nodes;
    int n, cap;
    int *table;          /* open addressing: node pointer -> index in nodes, -1 empty */
    int table_cap;
    int *heap;
    int heap_n;
    capture *caps;
    int ncaps;
    int keep_graph, create_graph, accumulate;
} graph_task;

static size_t hash_ptr(const void *p) { return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull; }

static int task_find(graph_task *g, const pct_node *node)
{
    size_t mask = (size_t)g->table_cap - 1;
    for (size_t h = hash_ptr(node) & mask;; h = (h + 1) & mask) {
        int i = g->table[h];
        if (i < 0 || g->nodes[i].node == node) return i;
    }
}

static int task_grow_table(graph_task *g)
{
    int cap = g->table_cap ? g->table_cap * 2 : 64;
    int *t = malloc(sizeof(int) * (size_t)cap);
    if (!t) return -1;
    memset(t, -1, sizeof(int) * (size_t)cap);
    size_t mask = (size_t)cap - 1;
    for (int i = 0; i < g->n; i++) {
        size_t h = hash_ptr(g->nodes[i].node) & mask;
        while (t[h] >= 0) h = (h + 1) & mask;
        t[h] = i;
    }
    free(g->table);
    g->table = t;
    g->table_cap = cap;
    return 0;
}

/* Index of node in the task, adding it (deps 0) when new; -1 on memory error. */
static int task_add(graph_task *g, pct_node *node, bool *added)
{
    *added = false;
    if (g->table_cap) {
        int i = task_find(g, node);
        if (i >= 0) return i;
    }
    if ((g->n + 1) * 2 > g->table_cap && task_grow_table(g) < 0) return -1;
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 32;
        task_node *nn = realloc(g->nodes, sizeof(task_node) * (size_t)cap);
        if (!nn) return -1;
        g->nodes = nn;
        g->cap = cap;
    }
    task_node *t = &g->nodes[g->n];
    Py_INCREF(node);
    t->node = node;
    t->deps = 0;
    t->needed = 1;
    t->buf = node->noutputs ? calloc((size_t)node->noutputs, sizeof(PyObject *)) : NULL;
    if (node->noutputs && !t->buf) { Py_DECREF(node); return -1; }
    size_t mask = (size_t)g->table_cap - 1, h = hash_ptr(node) & mask;
    while (g->table[h] >= 0) h = (h + 1) & mask;
    g->table[h] = g->n;
    *added = true;
    return g->n++;
}

static void task_free(graph_task *g)
{
    for (int i = 0; i < g->n; i++) {
        for (int k = 0; g->nodes[i].buf && k < g->nodes[i].node->noutputs; k++) Py_XDECREF(g->nodes[i].buf[k]);
        free(g->nodes[i].buf);
        Py_DECREF(g->nodes[i].node);
    }
    for (int i = 0; i < g->ncaps; i++) Py_XDECREF(g->caps[i].grad);
    free(g->nodes);
    free(g->table);
    free(g->heap);
    free(g->caps);
}

static bool is_target(const graph_task *g, const pct_node *n)
{
    for (int i = 0; i < g->ncaps; i++) if (g->caps[i].node == n) return true;
    return false;
}

/* ---- the ready heap (max sequence number first) ---- */

static bool heap_before(graph_task *g, int a, int b) { return g->nodes[a].node->seq > g->nodes[b].node->seq; }

static void heap_push(graph_task *g, int i)
{
    int k = g->heap_n++;
    g->heap[k] = i;
    while (k > 0 && heap_before(g, g->heap[k], g->heap[(k - 1) / 2])) {
        int p = (k - 1) / 2, tmp = g->heap[p];
        g->heap[p] = g->heap[k];
        g->heap[k] = tmp;
        k = p;
    }
}

static int heap_pop(graph_task *g)
{
    int top = g->heap[0];
    g->heap[0] = g->heap[--g->heap_n];
    for (int k = 0;;) {
        int l = 2 * k + 1, r = l + 1, m = k;
        if (l < g->heap_n && heap_before(g, g->heap[l], g->heap[m])) m = l;
        if (r < g->heap_n && heap_before(g, g->heap[r], g->heap[m])) m = r;
        if (m == k) break;
        int tmp = g->heap[m];
        g->heap[m] = g->heap[k];
        g->heap[k] = tmp;
        k = m;
    }
    return top;
}

/* ---- op calls from C ---- */

/* op(a) or op(a, b) by id, through autograd recording (so create_graph gives the engine's arithmetic a history). */
static PyObject *call_op(int op_index, PyObject *a, PyObject *b)
{
    if (!pct_is_tensor_object(a) || (b && !pct_is_tensor_object(b))) {
        PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: the engine's %s got a %s; please report a bug",
                     pct_ops[op_index].sig.name, Py_TYPE(pct_is_tensor_object(a) ? b : a)->tp_name);
        return NULL;
    }
    return b ? pct_op_call2(op_index, (pct_tensor *)a, (pct_tensor *)b, false) : pct_op_call1(op_index, (pct_tensor *)a);
}

static PyObject *call_helper(const char *name, PyObject *args_tuple)
{
    PyObject *mod = pct_formulas_module();
    if (!mod) return NULL;
    PyObject *f = PyObject_GetAttrString(mod, name);
    if (!f) return NULL;
    PyObject *r = PyObject_CallObject(f, args_tuple);
    Py_DECREF(f);
    return r;
}

/* Note [The engine's ops in a trace]
 * The formulas are Python, so their op calls reach the op trace hook (Note [Op trace hook]) like any other; the
 * few ops the engine makes itself from C (summing the gradients that meet in a buffer, casting a gradient to its
 * input's dtype, the zeros of an output nobody differentiated) are reported as slots named _engine_add,
 * _engine_cast and _engine_zeros. torch.compile's ahead-of-time backward (pyctorch/_inductor/aot.py) traces
 * autograd.grad this way, so that its backward graph holds every op the engine ran, in the engine's order. */
/* r, reported as `name` with args (stolen; NULL when r is NULL) when report is set. */
static PyObject *reported(int report, const char *name, PyObject *args, PyObject *r)
{
    return report ? pct_python_values.trace_end(name, args, r) : r;
}

/* Adds g (stolen) into *slot. */
static int buffer_add(PyObject **slot, PyObject *g)
{
    if (!*slot) { *slot = g; return 0; }
    const int report = pct_python_values.trace_begin();
    PyObject *sum = call_op(PCT_OP_add, *slot, g);
    sum = reported(report, "_engine_add", report && sum ? PyTuple_Pack(2, *slot, g) : NULL, sum);
    Py_DECREF(g);
    if (!sum) return -1;
    Py_SETREF(*slot, sum);
    return 0;
}

static bool same_shape(const pct_tensor *t, const pct_meta *m)
{
    return t->ndim == m->ndim && (m->ndim == 0 || memcmp(t->sizes, m->sizes, sizeof(int64_t) * (size_t)m->ndim) == 0);
}

static PyObject *meta_size(const pct_meta *m) { return pct_python_values.size_new(m->ndim, m->sizes); }

/* Checks a returned gradient against its input (new reference to the fixed gradient). */
static PyObject *validate(pct_node *n, int index, PyObject *grad, const pct_meta *m)
{
    if (!pct_is_tensor_object(grad)) {
        PyErr_Format(PyExc_TypeError, "Function %U returned a gradient at index %d that is not a Tensor (got %s)", n->name,
                     index, Py_TYPE(grad)->tp_name);
        return NULL;
    }
    pct_tensor *t = (pct_tensor *)grad;
    Py_INCREF(grad);
    if (m->dtype < 0) return grad;
    if (!same_shape(t, m)) {
        PyObject *shape = meta_size(m), *args = shape ? PyTuple_Pack(2, grad, shape) : NULL;
        PyObject *r = args ? call_helper("sum_to_checked", args) : NULL;
        Py_XDECREF(args);
        Py_XDECREF(shape);
        Py_DECREF(grad);
        if (!r) return NULL;
        if (r == Py_None) {
            char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
            Py_DECREF(r);
            PyErr_Format(PyExc_RuntimeError, "Function %U returned an invalid gradient at index %d - got %s but expected shape "
                         "compatible with %s", n->name, index, pct_shape_str(a, sizeof a, t->ndim, t->sizes),
                         pct_shape_str(b, sizeof b, m->ndim, m->sizes));
            return NULL;
        }
        grad = r;
        t = (pct_tensor *)grad;
    }
    if (t->dtype != m->dtype) {
        const int report = pct_python_values.trace_begin();
        PyObject *r = pct_op_cast(t, m->dtype);
        r = reported(report, "_engine_cast",
                     report && r ? PyTuple_Pack(2, grad, pct_python_values.dtype_objects[m->dtype]) : NULL, r);
        Py_DECREF(grad);
        grad = r;
    }
    return grad;
}

/* A gradient of zeros for an output nobody differentiated (formulas expect tensors). */
static PyObject *zeros_for(const pct_meta *m)
{
    const int report = pct_python_values.trace_begin();
    PyObject *z = (PyObject *)pct_tensor_zeros_on(m->ndim, m->sizes, m->dtype, m->device_type, m->device_index);
    PyObject *args = NULL;
    if (report && z) {
        PyObject *size = meta_size(m), *device = pct_python_values.device_new(m->device_type, m->device_index);
        args = size && device ? PyTuple_Pack(3, size, pct_python_values.dtype_objects[m->dtype], device) : NULL;
        Py_XDECREF(size);
        Py_XDECREF(device);
    }
    return reported(report, "_engine_zeros", args, z);
}

/* ---- running one node ---- */

/* Note [Gradient layout contract]: as torch's AccumulateGrad, a leaf's new .grad takes the leaf's strides when the
 * leaf is non-overlapping and dense, and is contiguous otherwise, whatever layout the backward formula produced
 * (the matmul backward gives nn.Linear's weight a transposed gradient). Code that flattens gradients
 * (p.grad.view(-1), LBFGS, parameter vectors) relies on it. Strides of size-1 dims do not matter. */
static bool grad_obeys_layout(const pct_tensor *g, const pct_tensor *var)
{
    if (!pct_tensor_non_overlapping_and_dense(var)) return pct_tensor_is_contiguous(g);
    for (int i = 0; i < g->ndim; i++)
        if (g->sizes[i] != 1 && g->strides[i] != var->strides[i]) return false;
    return true;
}

/* A copy of g laid out by the contract (new reference); with grad mode on, the copy is recorded (copy_). */
static PyObject *clone_obeying_layout(PyObject *g, const pct_tensor *var)
{
    pct_tensor *gt = (pct_tensor *)g;
    pct_tensor *r = pct_tensor_empty(gt->ndim, gt->sizes, gt->dtype, gt->device_type, gt->device_index);
    if (!r) return NULL;
    if (pct_tensor_non_overlapping_and_dense(var) && pct_tensor_set_shape(r, var->ndim, var->sizes, var->strides) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    if (!pct_grad_enabled || !pct_tensor_requires_grad(gt)) {
        if (pct_copy_(r, gt) < 0) { Py_DECREF(r); return NULL; }
        return (PyObject *)r;
    }
    PyObject *done = pct_op_call2(PCT_OP_copy_, r, gt, false);
    Py_DECREF(r);
    return done;
}

static PyObject *accumulate_grad(pct_node *n, PyObject *grads)
{
    pct_tensor *var = (pct_tensor *)n->variable;
    PyObject *g = PyTuple_GET_ITEM(grads, 0);
    if (g == Py_None) return PyTuple_New(0);
    Py_INCREF(g);
    if (var->hooks) {
        PyObject *hooks = PyDict_Values(var->hooks);
        for (Py_ssize_t i = 0; hooks && i < PyList_GET_SIZE(hooks); i++) {
            PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(hooks, i), g);
            if (!r) { Py_CLEAR(hooks); break; }
            if (r != Py_None) Py_SETREF(g, r);
            else Py_DECREF(r);
        }
        if (!hooks) { Py_DECREF(g); return NULL; }
        Py_DECREF(hooks);
    }
    if (!var->grad) {
        pct_tensor *gt = (pct_tensor *)g;
        const bool layout_ok = grad_obeys_layout(gt, var); /* Note [Gradient layout contract] */
        /* a gradient only this call references can be stolen; anything else is copied */
        if (layout_ok && (pct_grad_enabled || (Py_REFCNT(g) <= 2 && !gt->grad_fn && !gt->base))) {
            var->grad = g;
        } else {
            PyObject *c = layout_ok ? call_op(PCT_OP_clone, g, NULL) : clone_obeying_layout(g, var);
            Py_DECREF(g);
            if (!c) return NULL;
            if (!pct_grad_enabled && ((pct_tensor *)c)->grad_fn) { /* never store history in .grad outside create_graph */
                Py_CLEAR(((pct_tensor *)c)->grad_fn);
                ((pct_tensor *)c)->flags &= (uint8_t)~PCT_FLAG_REQUIRES_GRAD;
            }
            var->grad = c;
        }
    } else if (pct_grad_enabled) {
        PyObject *sum = call_op(PCT_OP_add, var->grad, g);
        Py_DECREF(g);
        if (!sum) return NULL;
        Py_SETREF(var->grad, sum);
    } else {
        PyObject *r = pct_is_tensor_object(var->grad) && pct_is_tensor_object(g)
                          ? pct_op_call2(PCT_OP_add, (pct_tensor *)var->grad, (pct_tensor *)g, true)
                          : call_op(PCT_OP_add, var->grad, g);
        Py_DECREF(g);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    if (var->post_acc_hooks) {
        PyObject *hooks = PyDict_Values(var->post_acc_hooks);
        for (Py_ssize_t i = 0; hooks && i < PyList_GET_SIZE(hooks); i++) {
            PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(hooks, i), (PyObject *)var);
            if (!r) { Py_CLEAR(hooks); break; }
            Py_DECREF(r);
        }
        if (!hooks) return NULL;
        Py_DECREF(hooks);
    }
    return PyTuple_New(0);
}

PyObject *pct_node_apply(pct_node *n, PyObject *grads)
{
    if (n->kind == PCT_NODE_ACCUMULATE) return accumulate_grad(n, grads);
    if (n->kind == PCT_NODE_FUNCTION) {
        PyObject *name = PyUnicode_InternFromString("_apply_backward");
        PyObject *r = name ? PyObject_CallMethodOneArg((PyObject *)n, name, grads) : NULL;
        Py_XDECREF(name);
        return r;
    }
    if (!n->fn) {
        PyErr_Format(PyExc_NotImplementedError, "the derivative for '%U' is not implemented.", n->name);
        return NULL;
    }
    if (n->released && n->has_saved) return pct_saved_unpack(n, 0); /* raises "backward through the graph a second time" */
    Py_ssize_t ng = PyTuple_GET_SIZE(grads);
    PyObject *g2 = PyTuple_New(ng), *results = NULL, *needs = NULL, *args = NULL, *r = NULL;
    if (!g2) return NULL;
    for (Py_ssize_t i = 0; i < ng; i++) {
        PyObject *g = PyTuple_GET_ITEM(grads, i);
        if (g == Py_None && i < n->noutputs && n->outputs[i].dtype >= 0 && !(g = zeros_for(&n->outputs[i]))) goto done;
        else if (g == PyTuple_GET_ITEM(grads, i)) Py_INCREF(g);
        PyTuple_SET_ITEM(g2, i, g);
    }
    int nres = n->nsaved - n->nparams;
    if (!(results = PyTuple_New(nres)) || !(needs = PyTuple_New(n->nedges)) || !(args = PyTuple_New(3 + n->nparams))) goto done;
    for (int i = 0; i < nres; i++) {
        PyObject *v = pct_saved_unpack(n, n->nparams + i);
        if (!v) goto done;
        PyTuple_SET_ITEM(results, i, v);
    }
    for (int i = 0; i < n->nedges; i++) PyTuple_SET_ITEM(needs, i, PyBool_FromLong(n->edges[i].node != NULL));
    PyTuple_SET_ITEM(args, 0, Py_NewRef(g2));
    PyTuple_SET_ITEM(args, 1, Py_NewRef(results));
    PyTuple_SET_ITEM(args, 2, Py_NewRef(needs));
    for (int i = 0; i < n->nparams; i++) {
        PyObject *v = pct_saved_unpack(n, i);
        if (!v) goto done;
        PyTuple_SET_ITEM(args, 3 + i, v);
    }
    r = PyObject_Call(n->fn, args, NULL);
done:
    Py_XDECREF(g2); Py_XDECREF(results); Py_XDECREF(needs); Py_XDECREF(args);
    return r;
}

/* Runs a dict of hooks on one gradient: each may replace it. Steals and returns grad. */
static PyObject *run_tensor_hooks(PyObject *dict, PyObject *grad)
{
    PyObject *hooks = PyDict_Values(dict);
    if (!hooks) { Py_DECREF(grad); return NULL; }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(hooks); i++) {
        PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(hooks, i), grad);
        if (!r) { Py_DECREF(grad); grad = NULL; break; }
        if (r != Py_None) Py_SETREF(grad, r);
        else Py_DECREF(r);
    }
    Py_DECREF(hooks);
    return grad;
}

/* Hooks on the tensors this node produced, then retain_grad(), then node pre-hooks. */
static int run_pre_hooks(pct_node *n, PyObject **grads_io)
{
    PyObject *grads = *grads_io;
    if (n->tensor_pre_hooks || n->retained) {
        for (int k = 0; k < n->noutputs; k++) {
            PyObject *g = PyTuple_GET_ITEM(grads, k);
            if (g == Py_None) continue;
            PyObject *key = PyLong_FromLong(k);
            if (!key) return -1;
            PyObject *d = n->tensor_pre_hooks ? PyDict_GetItem(n->tensor_pre_hooks, key) : NULL;
            PyObject *w = n->retained ? PyDict_GetItem(n->retained, key) : NULL;
            Py_DECREF(key);
            if (d) {
                Py_INCREF(g);
                if (!(g = run_tensor_hooks(d, g))) return -1;
                PyObject *old = PyTuple_GET_ITEM(grads, k);
                PyTuple_SET_ITEM(grads, k, g);
                Py_DECREF(old);
            }
            PyObject *t = w ? PyWeakref_GetObject(w) : NULL;
            if (t && t != Py_None) {
                pct_tensor *tt = (pct_tensor *)t;
                PyObject *v = tt->grad ? call_op(PCT_OP_add, tt->grad, g) : call_op(PCT_OP_clone, g, NULL);
                if (!v) return -1;
                if (!pct_grad_enabled && ((pct_tensor *)v)->grad_fn) Py_CLEAR(((pct_tensor *)v)->grad_fn);
                Py_XSETREF(tt->grad, v);
            }
        }
    }
    if (n->pre_hooks) {
        PyObject *hooks = PyDict_Values(n->pre_hooks);
        if (!hooks) return -1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(hooks); i++) {
            PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(hooks, i), grads);
            if (!r) { Py_DECREF(hooks); return -1; }
            if (r != Py_None) {
                PyObject *t = PySequence_Tuple(r);
                Py_DECREF(r);
                if (!t) { Py_DECREF(hooks); return -1; }
                Py_SETREF(grads, t);
            } else {
                Py_DECREF(r);
            }
        }
        Py_DECREF(hooks);
    }
    *grads_io = grads;
    return 0;
}

static int run_post_hooks(pct_node *n, PyObject **outs_io, PyObject *grads)
{
    if (!n->post_hooks) return 0;
    PyObject *hooks = PyDict_Values(n->post_hooks);
    if (!hooks) return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(hooks); i++) {
        PyObject *r = PyObject_CallFunctionObjArgs(PyList_GET_ITEM(hooks, i), *outs_io, grads, NULL);
        if (!r) { Py_DECREF(hooks); return -1; }
        if (r != Py_None) {
            PyObject *t = PySequence_Tuple(r);
            Py_DECREF(r);
            if (!t) { Py_DECREF(hooks); return -1; }
            Py_SETREF(*outs_io, t);
        } else {
            Py_DECREF(r);
        }
    }
    Py_DECREF(hooks);
    return 0;
}

static int check_nan(pct_node *n, PyObject *outs)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {
        PyObject *g = PyTuple_GET_ITEM(outs, i);
        if (!pct_is_tensor_object(g)) continue;
        PyObject *nan = call_op(PCT_OP_isnan, g, NULL), *any = nan ? call_op(PCT_OP_any, nan, NULL) : NULL;
        Py_XDECREF(nan);
        if (!any) return -1;
        int bad = PyObject_IsTrue(any);
        Py_DECREF(any);
        if (bad < 0) return -1;
        if (bad) {
            PyErr_Format(PyExc_RuntimeError, "Function '%U' returned nan values in its %zdth output.", n->name, i);
            return -1;
        }
    }
    return 0;
}

static void add_anomaly_note(pct_node *n)
{
    if (!n->trace) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* the warning is issued with the error put aside */
    PyObject *mod = pct_formulas_module();
    PyObject *r = mod ? PyObject_CallMethod(mod, "anomaly_note", "OO", n->name, n->trace) : NULL;
    if (!r) PyErr_Clear();
    Py_XDECREF(r);
    PyErr_Restore(type, value, tb);
}

static int run_node(graph_task *g, int ti)
{
    task_node *t = &g->nodes[ti];
    pct_node *n = t->node;
    PyObject *grads = PyTuple_New(n->noutputs), *outs = NULL;
    if (!grads) return -1;
    for (int k = 0; k < n->noutputs; k++) {
        PyObject *v = t->buf[k] ? t->buf[k] : Py_NewRef(Py_None);
        t->buf[k] = NULL;
        PyTuple_SET_ITEM(grads, k, v);
    }
    if (run_pre_hooks(n, &grads) < 0) goto fail;
    for (int i = 0; i < g->ncaps; i++) {
        if (g->caps[i].node != n) continue;
        PyObject *v = PyTuple_GET_ITEM(grads, g->caps[i].nr);
        if (v == Py_None) continue;
        Py_INCREF(v);
        /* grad() of a leaf: its AccumulateGrad does not run, but the leaf's hooks still see (and may replace) the
           gradient, as torch runs them before capturing it */
        const pct_tensor *leaf = n->kind == PCT_NODE_ACCUMULATE && !g->accumulate ? (const pct_tensor *)n->variable : NULL;
        if (leaf && leaf->hooks && !(v = run_tensor_hooks(leaf->hooks, v))) goto fail;
        Py_XSETREF(g->caps[i].grad, v);
    }
    if (!t->needed) { Py_DECREF(grads); return 0; }
    PyObject *r = pct_dispatch_hooks & PCT_HOOK_PROFILER ? pct_profiled_node_apply(n, grads) : pct_node_apply(n, grads);
    if (!r) goto fail;
    outs = PySequence_Tuple(r);
    Py_DECREF(r);
    if (!outs) goto fail;
    if (n->kind != PCT_NODE_ACCUMULATE && PyTuple_GET_SIZE(outs) != n->nedges) {
        PyErr_Format(PyExc_RuntimeError, "function %U returned an incorrect number of gradients (expected %d, got %zd)",
                     n->name, n->nedges, PyTuple_GET_SIZE(outs));
        goto fail;
    }
    if (run_post_hooks(n, &outs, grads) < 0) goto fail;
    if (pct_anomaly_enabled && check_nan(n, outs) < 0) goto fail;
    if (!g->keep_graph) pct_node_release_saved(n);
    for (int e = 0; e < n->nedges && e < PyTuple_GET_SIZE(outs); e++) {
        pct_edge *edge = &n->edges[e];
        if (!edge->node) continue;
        int ci = task_find(g, (pct_node *)edge->node);
        if (ci < 0) continue;
        task_node *child = &g->nodes[ci];
        PyObject *grad = PyTuple_GET_ITEM(outs, e);
        if (grad != Py_None && (child->needed || is_target(g, child->node))) {
            PyObject *v = validate(n, e, grad, &edge->meta);
            if (!v || buffer_add(&child->buf[edge->input_nr], v) < 0) goto fail;
        }
        if (--child->deps == 0) heap_push(g, ci);
    }
    Py_DECREF(grads);
    Py_DECREF(outs);
    return 0;
fail:
    if (pct_anomaly_enabled) add_anomaly_note(n);
    Py_XDECREF(grads);
    Py_XDECREF(outs);
    return -1;
}

/* ---- the graph task ---- */

static int discover(graph_task *g, pct_node **roots, int nroots)
{
    int *stack = malloc(sizeof(int) * 64), sp = 0, scap = 64;
    if (!stack) return -1;
    for (int i = 0; i < nroots; i++) {
        bool added;
        int ti = task_add(g, roots[i], &added);
        if (ti < 0) goto oom;
        if (added) stack[sp++] = ti;
        if (sp == scap) { int *s = realloc(stack, sizeof(int) * (size_t)(scap *= 2)); if (!s) goto oom; stack = s; }
    }
    while (sp) {
        pct_node *n = g->nodes[stack[--sp]].node;
        for (int e = 0; e < n->nedges; e++) {
            pct_node *c = (pct_node *)n->edges[e].node;
            if (!c) continue;
            bool added;
            int ci = task_add(g, c, &added);
            if (ci < 0) goto oom;
            g->nodes[ci].deps++;
            if (added) {
                if (sp == scap) { int *s = realloc(stack, sizeof(int) * (size_t)(scap *= 2)); if (!s) goto oom; stack = s; }
                stack[sp++] = ci;
            }
        }
    }
    free(stack);
    return 0;
oom:
    free(stack);
    PyErr_NoMemory();
    return -1;
}

static graph_task *sort_ctx;
static int cmp_index_by_seq(const void *a, const void *b)
{
    uint64_t x = sort_ctx->nodes[*(const int *)a].node->seq, y = sort_ctx->nodes[*(const int *)b].node->seq;
    return x < y ? -1 : x > y;
}

/* With inputs given, only nodes on a path to an input run. A node's next nodes were
 * made before it (smaller sequence numbers), so one pass in creation order settles it. */
static int mark_needed(graph_task *g)
{
    int *order = malloc(sizeof(int) * (size_t)(g->n ? g->n : 1));
    if (!order) { PyErr_NoMemory(); return -1; }
    for (int i = 0; i < g->n; i++) order[i] = i;
    sort_ctx = g;
    qsort(order, (size_t)g->n, sizeof(int), cmp_index_by_seq);
    for (int k = 0; k < g->n; k++) {
        task_node *t = &g->nodes[order[k]];
        /* an AccumulateGrad runs only for backward(inputs=...) of its leaf; grad() captures instead */
        int needed = g->accumulate && t->node->kind == PCT_NODE_ACCUMULATE && is_target(g, t->node);
        for (int e = 0; e < t->node->nedges && !needed; e++) {
            pct_node *c = (pct_node *)t->node->edges[e].node;
            int ci = c ? task_find(g, c) : -1;
            needed = ci >= 0 && (is_target(g, c) || (g->nodes[ci].needed && c->kind != PCT_NODE_ACCUMULATE));
        }
        t->needed = needed;
    }
    free(order);
    return 0;
}

static PyObject *root_grad(pct_tensor *root, PyObject *given, int i)
{
    if (given && given != Py_None) {
        if (!pct_is_tensor_object(given)) {
            PyErr_Format(PyExc_TypeError, "grad_outputs[%d] must be a Tensor or None", i);
            return NULL;
        }
        pct_tensor *g = (pct_tensor *)given;
        if (g->ndim != root->ndim || memcmp(g->sizes, root->sizes, sizeof(int64_t) * (size_t)g->ndim) != 0) {
            PyObject *a = pct_python_values.size_new(g->ndim, g->sizes), *b = pct_python_values.size_new(root->ndim, root->sizes);
            if (a && b)
                PyErr_Format(PyExc_RuntimeError, "Mismatch in shape: grad_output[%d] has a shape of %R and output[%d] has a "
                             "shape of %R.", i, a, i, b);
            Py_XDECREF(a);
            Py_XDECREF(b);
            return NULL;
        }
        return Py_NewRef(given);
    }
    if (root->numel != 1) {
        PyErr_SetString(PyExc_RuntimeError, "grad can be implicitly created only for scalar outputs");
        return NULL;
    }
    if (!pct_dtype_is_floating(root->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "grad can be implicitly created only for real scalar outputs but got %R",
                     pct_python_values.dtype_objects[root->dtype]);
        return NULL;
    }
    return pct_op_call1(PCT_OP_ones_like, root);
}

PyObject *pct_run_backward(PyObject *roots, PyObject *grad_roots, int keep_graph, int create_graph, PyObject *inputs,
                           int accumulate, int allow_unused)
{
    graph_task g = {0};
    g.keep_graph = keep_graph;
    g.create_graph = create_graph;
    g.accumulate = accumulate;
    Py_ssize_t nroots = PySequence_Fast_GET_SIZE(roots);
    Py_ssize_t ninputs = inputs ? PySequence_Fast_GET_SIZE(inputs) : 0;
    pct_node **root_nodes = calloc((size_t)nroots + 1, sizeof(pct_node *));
    PyObject **root_grads = calloc((size_t)nroots + 1, sizeof(PyObject *));
    uint32_t *root_nrs = calloc((size_t)nroots + 1, sizeof(uint32_t));
    PyObject *result = NULL;
    int was_enabled = pct_grad_enabled;
    if (!root_nodes || !root_grads || !root_nrs) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < nroots; i++) {
        PyObject *o = PySequence_Fast_ITEMS(roots)[i];
        if (!pct_is_tensor_object(o)) { PyErr_SetString(PyExc_TypeError, "backward expects Tensors as outputs"); goto done; }
        pct_tensor *t = (pct_tensor *)o;
        if (!pct_tensor_requires_grad(t)) {
            PyErr_Format(PyExc_RuntimeError, "element %zd of tensors does not require grad and does not have a grad_fn", i);
            goto done;
        }
        PyObject *given = grad_roots ? PySequence_Fast_ITEMS(grad_roots)[i] : NULL;
        if (!(root_grads[i] = root_grad(t, given, (int)i))) goto done;
        if (!(root_nodes[i] = (pct_node *)pct_gradient_edge(t, &root_nrs[i]))) goto done;
    }
    if (discover(&g, root_nodes, (int)nroots) < 0) goto done;
    if (ninputs) {
        if (!(g.caps = calloc((size_t)ninputs, sizeof(capture)))) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t i = 0; i < ninputs; i++) {
            PyObject *o = PySequence_Fast_ITEMS(inputs)[i];
            if (!pct_is_tensor_object(o)) { PyErr_SetString(PyExc_TypeError, "inputs must be Tensors"); goto done; }
            pct_tensor *t = (pct_tensor *)o;
            if (!pct_tensor_requires_grad(t)) {
                PyErr_Format(PyExc_RuntimeError, "One of the differentiated Tensors does not require grad");
                goto done;
            }
            PyObject *node = pct_gradient_edge(t, &g.caps[i].nr);
            if (!node) goto done;
            g.caps[i].node = (pct_node *)node;
            g.ncaps = (int)i + 1;
            Py_DECREF(node); /* kept alive by the tensor (grad_fn) or the graph (accumulator) */
        }
        if (mark_needed(&g) < 0) goto done;
    }
    if (!(g.heap = malloc(sizeof(int) * (size_t)(g.n ? g.n : 1)))) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < nroots; i++) {
        int ti = task_find(&g, root_nodes[i]);
        PyObject *rg = root_grads[i];
        root_grads[i] = NULL;
        if (buffer_add(&g.nodes[ti].buf[root_nrs[i]], rg) < 0) goto done;
    }
    for (Py_ssize_t i = 0; i < nroots; i++) {
        int ti = task_find(&g, root_nodes[i]);
        if (g.nodes[ti].deps == 0) { g.nodes[ti].deps = -1; heap_push(&g, ti); } /* -1: pushed once */
    }
    pct_grad_enabled = create_graph;
    while (g.heap_n) {
        int ti = heap_pop(&g);
        if (run_node(&g, ti) < 0) goto done;
    }
    pct_grad_enabled = was_enabled;
    if (accumulate) {
        /* backward(inputs=[non-leaf]): the captured gradient goes to its .grad */
        for (int i = 0; i < g.ncaps; i++) {
            if (g.caps[i].node->kind == PCT_NODE_ACCUMULATE || !g.caps[i].grad) continue;
            pct_tensor *t = (pct_tensor *)PySequence_Fast_ITEMS(inputs)[i];
            if (t->flags & PCT_FLAG_RETAINS_GRAD) continue; /* retain_grad already stored it */
            PyObject *v = t->grad ? call_op(PCT_OP_add, t->grad, g.caps[i].grad) : Py_NewRef(g.caps[i].grad);
            if (!v) goto done;
            Py_XSETREF(t->grad, v);
        }
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = PyTuple_New(ninputs);
    for (Py_ssize_t i = 0; result && i < ninputs; i++) {
        PyObject *v = g.caps[i].grad;
        if (!v) {
            if (!allow_unused) {
                PyErr_Format(PyExc_RuntimeError, "The differentiated Tensor at index %zd appears to not have been used in "
                                                 "the graph. Set allow_unused=True if this is the desired behavior.", i);
                Py_CLEAR(result);
                break;
            }
            v = Py_None;
        }
        PyTuple_SET_ITEM(result, i, Py_NewRef(v));
    }
done:
    pct_grad_enabled = was_enabled;
    for (Py_ssize_t i = 0; root_nodes && i < nroots; i++) Py_XDECREF(root_nodes[i]);
    for (Py_ssize_t i = 0; root_grads && i < nroots; i++) Py_XDECREF(root_grads[i]);
    free(root_nodes);
    free(root_grads);
    free(root_nrs);
    task_free(&g);
    return result;
}
