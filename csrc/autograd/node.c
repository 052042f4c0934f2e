/* node.c: the graph node type (pyctorch._C._Node), its edges, metadata and saved
 * values, the leaf's grad accumulator, and the Python-visible API of grad_fn objects
 * (name(), next_functions, metadata, register_hook, register_prehook). */
#include "autograd.h"
#include "profiler.h"
#include "python_values.h"
#include <stdlib.h>
#include <string.h>

static uint64_t sequence_counter;
uint64_t pct_next_sequence_nr(void) { return sequence_counter++; }

pct_node *pct_node_new(PyTypeObject *type, int kind, int nedges, int noutputs)
{
    pct_node *n = (pct_node *)type->tp_alloc(type, 0);
    if (!n) return NULL;
    n->kind = (uint8_t)kind;
    n->seq = kind == PCT_NODE_ACCUMULATE ? UINT64_MAX : pct_next_sequence_nr();
    n->edges = nedges ? calloc((size_t)nedges, sizeof(pct_edge)) : NULL;
    n->outputs = noutputs ? calloc((size_t)noutputs, sizeof(pct_meta)) : NULL;
    if ((nedges && !n->edges) || (noutputs && !n->outputs)) {
        Py_DECREF(n);
        PyErr_NoMemory();
        return NULL;
    }
    n->nedges = nedges;
    n->noutputs = noutputs;
    for (int i = 0; i < nedges; i++) n->edges[i].meta.dtype = -1;
    for (int i = 0; i < noutputs; i++) n->outputs[i].dtype = -1;
    return n;
}

/* Each meta owns a copy of the sizes: an in-place shape op (t_(), squeeze_()) may change
 * or reallocate the tensor's own array after the edge is taken. */
static int meta_from(pct_meta *m, const pct_tensor *t)
{
    free(m->sizes);
    m->sizes = NULL;
    m->dtype = (int8_t)t->dtype;
    m->device_type = t->device_type;
    m->device_index = t->device_index;
    m->ndim = t->ndim;
    if (t->ndim) {
        if (!(m->sizes = malloc(sizeof(int64_t) * (size_t)t->ndim))) { m->dtype = -1; PyErr_NoMemory(); return -1; }
        memcpy(m->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    }
    return 0;
}

int pct_meta_copy(pct_meta *dst, const pct_meta *src)
{
    *dst = *src;
    dst->sizes = NULL;
    if (src->dtype >= 0 && src->ndim) {
        if (!(dst->sizes = malloc(sizeof(int64_t) * (size_t)src->ndim))) { dst->dtype = -1; PyErr_NoMemory(); return -1; }
        memcpy(dst->sizes, src->sizes, sizeof(int64_t) * (size_t)src->ndim);
    }
    return 0;
}

int pct_node_set_edge(pct_node *n, int i, pct_tensor *input)
{
    if (!input) return 0;
    if (pct_tensor_requires_grad(input)) {
        n->edges[i].node = pct_gradient_edge(input, &n->edges[i].input_nr);
        if (!n->edges[i].node) return -1;
    }
    return meta_from(&n->edges[i].meta, input);
}

int pct_node_set_output(pct_node *n, int i, pct_tensor *output) { return meta_from(&n->outputs[i], output); }

int pct_node_finish_meta(pct_node *n)
{
    (void)n; /* sizes are copied when each meta is set */
    return 0;
}

void pct_set_history(pct_tensor *t, pct_node *n, uint32_t output_nr)
{
    Py_INCREF(n);
    Py_XSETREF(t->grad_fn, (PyObject *)n);
    t->output_nr = output_nr;
    t->flags |= PCT_FLAG_REQUIRES_GRAD;
    if (t->base) t->view_version = atomic_load(&t->version->value);
}

/* ---- the grad accumulator of a leaf ---- */

PyObject *pct_gradient_edge(pct_tensor *t, uint32_t *input_nr)
{
    if (pct_refresh_view_history(t) < 0) return NULL;
    if (t->grad_fn) {
        *input_nr = t->output_nr;
        Py_INCREF(t->grad_fn);
        return t->grad_fn;
    }
    *input_nr = 0;
    if (t->grad_acc) {
        PyObject *n = PyWeakref_GetObject(t->grad_acc);
        if (n && n != Py_None) { Py_INCREF(n); return n; }
        Py_CLEAR(t->grad_acc);
    }
    pct_node *n = pct_node_new(&pct_NodeType, PCT_NODE_ACCUMULATE, 0, 1);
    if (!n) return NULL;
    n->name = PyUnicode_InternFromString("torch::autograd::AccumulateGrad");
    Py_INCREF(t);
    n->variable = (PyObject *)t;
    pct_node_set_output(n, 0, t);
    if (!n->name || pct_node_finish_meta(n) < 0 || !(t->grad_acc = PyWeakref_NewRef((PyObject *)n, NULL))) {
        Py_DECREF(n);
        return NULL;
    }
    return (PyObject *)n;
}

/* ---- saved values ---- */

void pct_node_release_saved(pct_node *n)
{
    for (int i = 0; i < n->nsaved; i++) {
        Py_CLEAR(n->saved[i].obj);
        Py_CLEAR(n->saved[i].history); /* unpack stays: a released slot still "has its hooks set" */
    }
    if (n->has_saved || n->kind == PCT_NODE_FUNCTION) n->released = 1;
}

/* A node's name as torch's version-check message gives it: the "Backward" of a generated node's name
 * dropped, with its overload number when not 0 ("ExpBackward0" -> "Exp", "PowBackward1" -> "Pow1"), a
 * custom Function's "SqBackward" -> "Sq"; other names (torch::autograd::CopySlices) as they are. */
static PyObject *message_node_name(PyObject *node)
{
    PyObject *name = PyObject_CallMethod(node, "name", NULL);
    if (!name || !PyUnicode_Check(name)) return name;
    Py_ssize_t len;
    const char *str = PyUnicode_AsUTF8AndSize(name, &len);
    const char *at = str ? strstr(str, "Backward") : NULL;
    if (!at) return name;
    const char *rest = at + strlen("Backward");
    for (const char *c = rest; *c; c++)
        if (*c < '0' || *c > '9') return name;
    PyObject *head = PyUnicode_FromStringAndSize(str, at - str);
    PyObject *shorter = !head || *rest == '\0' || strcmp(rest, "0") == 0 ? head : PyUnicode_FromFormat("%U%s", head, rest);
    if (shorter != head) Py_XDECREF(head);
    Py_DECREF(name);
    return shorter;
}

PyObject *pct_modified_error(PyObject *tensor, int64_t saved_version, PyObject *node, uint32_t output_nr)
{
    pct_tensor *t = (pct_tensor *)tensor;
    char buf[PCT_SHAPE_BUF];
    PyObject *which;
    if (node && node != Py_None) {
        PyObject *name = message_node_name(node);
        if (!name) return NULL;
        which = PyUnicode_FromFormat(", which is output %u of %U,", (unsigned)output_nr, name);
        Py_DECREF(name);
    } else {
        which = PyUnicode_FromString("");
    }
    if (!which) return NULL;
    PyErr_Format(PyExc_RuntimeError,
                 "one of the variables needed for gradient computation has been modified by an inplace operation: "
                 "[torch.%sTensor %s]%U is at version %ld; expected version %lld instead. Hint: enable anomaly "
                 "detection to find the operation that failed to compute its gradient, with "
                 "torch.autograd.set_detect_anomaly(True, check_nan=False).",
                 pct_dtype_cpp_name[t->dtype], pct_shape_str(buf, sizeof buf, t->ndim, t->sizes), which,
                 (long)atomic_load(&t->version->value), (long long)saved_version);
    Py_DECREF(which);
    return NULL;
}

/* torch names the node that made the modified tensor: for a saved output this node, for a saved input
 * the tensor's grad_fn now (the in-place op's), none for a leaf */
static PyObject *modified_error(pct_node *n, pct_saved *s, pct_tensor *t)
{
    if (s->is_output) return pct_modified_error((PyObject *)t, s->version, (PyObject *)n, s->output_nr);
    PyObject *fn = PyObject_GetAttrString((PyObject *)t, "grad_fn");
    if (!fn) return NULL;
    pct_modified_error((PyObject *)t, s->version, fn, t->output_nr);
    Py_DECREF(fn);
    return NULL;
}

PyObject *pct_saved_unpack(pct_node *n, int i)
{
    pct_saved *s = &n->saved[i];
    if (!s->obj) {
        if (n->released) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Trying to backward through the graph a second time (or directly access saved tensors after "
                            "they have already been freed). Saved intermediate values of the graph are freed when you call "
                            ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                            "graph a second time or if you need to access saved tensors after calling backward.");
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (!s->is_tensor) return Py_NewRef(s->obj);
    pct_tensor *t;
    PyObject *unpacked = NULL;
    if (s->unpack) { /* Note [Saved tensor hooks]: the hook gives the tensor back; no version check */
        if (!(unpacked = pct_saved_call_unpack(s))) return NULL;
        t = (pct_tensor *)unpacked;
    } else {
        t = (pct_tensor *)s->obj;
        if (atomic_load(&t->version->value) != s->version) return modified_error(n, s, t);
    }
    if (s->is_output && pct_grad_enabled) {
        /* double backward needs the output with its history: a fresh alias pointing at n */
        pct_tensor *a = pct_tensor_history_free_alias(t);
        if (a) pct_set_history(a, n, s->output_nr);
        /* Note [Forward AD]: forward over reverse reads the saved output's tangent */
        if (a && pct_forward_ad_on() && pct_forward_ad_copy((PyObject *)t, (PyObject *)a) < 0) Py_CLEAR(a);
        Py_XDECREF(unpacked);
        return (PyObject *)a;
    }
    return unpacked ? unpacked : Py_NewRef(s->obj);
}

/* ---- the Python type ---- */

static int node_traverse(pct_node *n, visitproc visit, void *arg)
{
    for (int i = 0; i < n->nedges; i++) Py_VISIT(n->edges[i].node);
    for (int i = 0; i < n->nsaved; i++) {
        Py_VISIT(n->saved[i].obj);
        Py_VISIT(n->saved[i].unpack);
        Py_VISIT(n->saved[i].history);
    }
    Py_VISIT(n->fn);
    Py_VISIT(n->variable);
    Py_VISIT(n->pre_hooks);
    Py_VISIT(n->post_hooks);
    Py_VISIT(n->tensor_pre_hooks);
    Py_VISIT(n->retained);
    Py_VISIT(n->metadata);
    Py_VISIT(n->dict);
    return 0;
}

static int node_clear(pct_node *n)
{
    for (int i = 0; i < n->nedges; i++) Py_CLEAR(n->edges[i].node);
    for (int i = 0; i < n->nsaved; i++) {
        Py_CLEAR(n->saved[i].obj);
        Py_CLEAR(n->saved[i].unpack);
        Py_CLEAR(n->saved[i].history);
    }
    Py_CLEAR(n->fn);
    Py_CLEAR(n->variable);
    Py_CLEAR(n->pre_hooks);
    Py_CLEAR(n->post_hooks);
    Py_CLEAR(n->tensor_pre_hooks);
    Py_CLEAR(n->retained);
    Py_CLEAR(n->metadata);
    Py_CLEAR(n->dict);
    Py_CLEAR(n->trace);
    return 0;
}

static void node_dealloc(pct_node *n)
{
    PyTypeObject *tp = Py_TYPE(n);
    PyObject_GC_UnTrack(n);
    /* a long chain of nodes is freed iteratively: the trashcan defers deep deallocations */
    Py_TRASHCAN_BEGIN(n, node_dealloc)
    if (n->weakrefs) PyObject_ClearWeakRefs((PyObject *)n);
    node_clear(n);
    Py_CLEAR(n->name);
    for (int i = 0; i < n->nedges; i++) free(n->edges[i].meta.sizes);
    for (int i = 0; i < n->noutputs; i++) free(n->outputs[i].sizes);
    free(n->edges);
    free(n->saved);
    free(n->outputs);
    /* a Python subclass's type reference is released by CPython's subtype_dealloc */
    tp->tp_free((PyObject *)n);
    Py_TRASHCAN_END
}

static PyObject *node_name(pct_node *n, PyObject *unused)
{
    (void)unused;
    if (n->name) return Py_NewRef(n->name);
    /* a Function context: its class name (MyFnBackward) */
    return PyUnicode_FromString(_PyType_Name(Py_TYPE(n)));
}

static PyObject *node_repr(pct_node *n)
{
    PyObject *name = node_name(n, NULL);
    if (!name) return NULL;
    /* torch's repr drops the C++ namespace of built-in nodes */
    const char *text = PyUnicode_AsUTF8(name), *colon = text ? strrchr(text, ':') : NULL;
    PyObject *r = text ? PyUnicode_FromFormat("<%s object at %p>", colon ? colon + 1 : text, (void *)n) : NULL;
    Py_DECREF(name);
    return r;
}

static PyObject *node_next_functions(pct_node *n, void *unused)
{
    (void)unused;
    PyObject *t = PyTuple_New(n->nedges);
    for (int i = 0; t && i < n->nedges; i++) {
        PyObject *item = Py_BuildValue("(OI)", n->edges[i].node ? n->edges[i].node : Py_None, n->edges[i].input_nr);
        if (!item) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

static PyObject *node_metadata(pct_node *n, void *unused)
{
    (void)unused;
    if (!n->metadata && !(n->metadata = PyDict_New())) return NULL;
    return Py_NewRef(n->metadata);
}

static PyObject *node_variable(pct_node *n, void *unused)
{
    (void)unused;
    if (!n->variable) { PyErr_SetString(PyExc_AttributeError, "only AccumulateGrad nodes have a variable"); return NULL; }
    return Py_NewRef(n->variable);
}

/* Adds fn to the dict *slot (made on demand) under a new RemovableHandle's id. */
PyObject *pct_register_hook_in(PyObject **slot, PyObject *fn)
{
    if (!PyCallable_Check(fn)) { PyErr_SetString(PyExc_TypeError, "hook must be callable"); return NULL; }
    if (!*slot && !(*slot = PyDict_New())) return NULL;
    PyObject *mod = PyImport_ImportModule("pyctorch.utils.hooks");
    if (!mod) return NULL;
    PyObject *handle = PyObject_CallMethod(mod, "RemovableHandle", "O", *slot);
    Py_DECREF(mod);
    if (!handle) return NULL;
    PyObject *id = PyObject_GetAttrString(handle, "id");
    if (!id || PyDict_SetItem(*slot, id, fn) < 0) { Py_XDECREF(id); Py_DECREF(handle); return NULL; }
    Py_DECREF(id);
    return handle;
}

static PyObject *node_register_hook(pct_node *n, PyObject *fn) { return pct_register_hook_in(&n->post_hooks, fn); }
static PyObject *node_register_prehook(pct_node *n, PyObject *fn) { return pct_register_hook_in(&n->pre_hooks, fn); }

/* Hooks registered on a non-leaf tensor live on its grad_fn, keyed by output number. */
PyObject *pct_node_register_tensor_hook(pct_node *n, uint32_t output_nr, PyObject *fn)
{
    if (!n->tensor_pre_hooks && !(n->tensor_pre_hooks = PyDict_New())) return NULL;
    PyObject *key = PyLong_FromUnsignedLong(output_nr);
    if (!key) return NULL;
    PyObject *d = PyDict_GetItemWithError(n->tensor_pre_hooks, key);
    if (!d) {
        if (PyErr_Occurred() || !(d = PyDict_New()) || PyDict_SetItem(n->tensor_pre_hooks, key, d) < 0) {
            Py_XDECREF(d);
            Py_DECREF(key);
            return NULL;
        }
        Py_DECREF(d);
    }
    Py_DECREF(key);
    PyObject *slot = d;
    return pct_register_hook_in(&slot, fn);
}

static PyObject *node_apply_py(pct_node *n, PyObject *grads)
{
    if (!PyTuple_Check(grads)) { PyErr_SetString(PyExc_TypeError, "_apply expects a tuple of gradients"); return NULL; }
    return pct_node_apply(n, grads);
}

static PyObject *node_call(pct_node *n, PyObject *args, PyObject *kwargs)
{
    (void)kwargs;
    return pct_node_apply(n, args);
}

/* ---- grad_fn._saved_<name> and grad_fn._raw_saved_<name> ----
 * Named as torch names them: a formula node's saved parameters by their schema names (the first parameter,
 * "input" in our schemas, is torch's "self"), a parameter of which only the shape is kept as
 * <name>_sym_sizes, its saved outputs as "result" (or result0, result1, ... for several). */

/* The ops whose two outputs torch names (values, indices). */
static bool values_indices_op(const char *op)
{
    static const char *const names[] = {"max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian",
                                        "cummax", "cummin", NULL};
    for (const char *const *p = names; *p; p++) if (strcmp(op, *p) == 0) return true;
    return false;
}

/* torch's name of saved slot i (without the _saved_ prefix) into buf: false when the slot holds nothing (a value
 * the formulas do not read). *sizes_only: only the shape of that parameter is kept (named <name>_sym_sizes). */
static bool saved_slot_name(pct_node *n, int i, char *buf, size_t size, int *sizes_only)
{
    *sizes_only = 0;
    if (n->op_index <= 0 || !n->saved || i >= n->nsaved || !(n->saved[i].obj || n->released)) return false;
    int op = n->op_index - 1;
    const pct_signature *sig = &pct_ops[op].sig;
    if (i < n->nparams) {
        if (i >= sig->nparams) return false;
        const char *pname = i == 0 && strcmp(sig->params[i].name, "input") == 0 ? "self" : sig->params[i].name;
        *sizes_only = (pct_op_meta_mask(op) >> i) & 1u;
        snprintf(buf, size, "%s%s", pname, *sizes_only ? "_sym_sizes" : "");
        return true;
    }
    int nres = n->nsaved - n->nparams, k = i - n->nparams;
    if (nres == 2 && values_indices_op(sig->name)) snprintf(buf, size, "%s", k ? "indices" : "values");
    else if (nres == 1) snprintf(buf, size, "result");
    else snprintf(buf, size, "result%d", k);
    return true;
}

/* The saved slot `name` (without its prefix) refers to, or -1. */
static int saved_slot_named(pct_node *n, const char *name, int *sizes_only)
{
    char buf[80];
    for (int i = 0; i < n->nsaved; i++)
        if (saved_slot_name(n, i, buf, sizeof buf, sizes_only) && strcmp(buf, name) == 0) return i;
    return -1;
}

static PyObject *saved_sizes(pct_node *n, int i)
{
    if (!n->saved[i].obj) return pct_saved_unpack(n, i); /* released: torch's error */
    const pct_tensor *t = (const pct_tensor *)n->saved[i].obj;
    PyObject *r = PyTuple_New(t->ndim);
    for (int d = 0; r && d < t->ndim; d++) {
        PyObject *x = PyLong_FromLongLong(t->sizes[d]);
        if (!x) { Py_CLEAR(r); break; }
        PyTuple_SET_ITEM(r, d, x);
    }
    return r;
}

static PyObject *node_getattro(pct_node *n, PyObject *attr)
{
    PyObject *r = PyObject_GenericGetAttr((PyObject *)n, attr);
    if (r || n->op_index <= 0 || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
    const char *s = PyUnicode_AsUTF8(attr);
    if (!s) return NULL;
    bool raw = strncmp(s, "_raw_saved_", 11) == 0;
    int sizes_only = 0;
    int i = raw || strncmp(s, "_saved_", 7) == 0 ? saved_slot_named(n, s + (raw ? 11 : 7), &sizes_only) : -1;
    if (i < 0 || (raw && (sizes_only || !n->saved[i].is_tensor))) {
        PyErr_Format(PyExc_AttributeError, "'%U' object has no attribute '%U'", n->name, attr);
        return NULL;
    }
    PyErr_Clear();
    if (sizes_only) return saved_sizes(n, i);
    if (!raw) return pct_saved_unpack(n, i);
    PyObject *mod = PyImport_ImportModule("pyctorch.autograd.graph");
    r = mod ? PyObject_CallMethod(mod, "SavedTensor", "Oi", (PyObject *)n, i) : NULL;
    Py_XDECREF(mod);
    return r;
}

/* dir(grad_fn): the generic attributes and the _saved_ / _raw_saved_ names, as torch lists them. */
static PyObject *node_dir(pct_node *n, PyObject *unused)
{
    (void)unused;
    PyObject *r = PyObject_CallMethod((PyObject *)&PyBaseObject_Type, "__dir__", "O", (PyObject *)n);
    char buf[80];
    int sizes_only;
    for (int i = 0; r && i < n->nsaved; i++) {
        if (!saved_slot_name(n, i, buf, sizeof buf, &sizes_only)) continue;
        PyObject *a = PyUnicode_FromFormat("_saved_%s", buf);
        if (!a || PyList_Append(r, a) < 0) Py_CLEAR(r);
        Py_XDECREF(a);
        if (r && !sizes_only && n->saved[i].is_tensor) {
            PyObject *b = PyUnicode_FromFormat("_raw_saved_%s", buf);
            if (!b || PyList_Append(r, b) < 0) Py_CLEAR(r);
            Py_XDECREF(b);
        }
    }
    return r;
}

/* _slot_value(i): the value of saved slot i (what the backward reads). */
static PyObject *node_saved_slot(pct_node *n, PyObject *arg)
{
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= n->nsaved) { PyErr_SetString(PyExc_IndexError, "saved slot out of range"); return NULL; }
    return pct_saved_unpack(n, (int)i);
}

/* _slot_register_hooks(i, pack, unpack): SavedTensor.register_hooks on slot i (packs it now). */
static PyObject *node_saved_register_hooks(pct_node *n, PyObject *args)
{
    int i;
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "iOO", &i, &pack, &unpack)) return NULL;
    if (i < 0 || i >= n->nsaved) { PyErr_SetString(PyExc_IndexError, "saved slot out of range"); return NULL; }
    pct_saved *s = &n->saved[i];
    if (!PyCallable_Check(pack) || !PyCallable_Check(unpack)) {
        PyErr_SetString(PyExc_TypeError, "register_hooks: pack_hook and unpack_hook must be callable");
        return NULL;
    }
    if (s->unpack) {
        PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor whose hooks have already been "
                        "set. Hint: only one pair of hooks is allowed at a time.");
        return NULL;
    }
    if (!s->obj) return pct_saved_unpack(n, i); /* released: torch's error */
    if (!s->is_tensor) { PyErr_SetString(PyExc_TypeError, "register_hooks: the saved value is not a tensor"); return NULL; }
    if (pct_saved_pack_with(s, pack, unpack) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef node_methods[] = {
    {"__dir__", (PyCFunction)node_dir, METH_NOARGS, NULL},
    {"_slot_value", (PyCFunction)node_saved_slot, METH_O, "the value of a saved slot"},
    {"_slot_register_hooks", (PyCFunction)node_saved_register_hooks, METH_VARARGS, "pack/unpack hooks on a saved slot"},
    {"name", (PyCFunction)node_name, METH_NOARGS, "the node's name, e.g. MulBackward0"},
    {"register_hook", (PyCFunction)node_register_hook, METH_O, "hook(grad_inputs, grad_outputs) after the node runs"},
    {"register_prehook", (PyCFunction)node_register_prehook, METH_O, "hook(grad_outputs) before the node runs"},
    {"_apply", (PyCFunction)node_apply_py, METH_O, "runs the node's backward on a tuple of gradients"},
    {NULL, NULL, 0, NULL},
};

static PyObject *node_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)args; (void)kwargs;
    pct_node *n = pct_node_new(type, PCT_NODE_FUNCTION, 0, 0);
    /* a Function context is named after its class (MyFnBackward) */
    if (n && !(n->name = PyUnicode_FromString(_PyType_Name(type)))) Py_CLEAR(n);
    return (PyObject *)n;
}

static PyObject *node_get_seq(pct_node *n, void *u) { (void)u; return PyLong_FromUnsignedLongLong(n->seq); }

static PyGetSetDef node_getset[] = {
    {"next_functions", (getter)node_next_functions, NULL, NULL, NULL},
    {"metadata", (getter)node_metadata, NULL, NULL, NULL},
    {"variable", (getter)node_variable, NULL, NULL, NULL},
    {"_sequence_nr", (getter)node_get_seq, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pct_NodeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch._C._Node",
    .tp_basicsize = sizeof(pct_node),
    .tp_dealloc = (destructor)node_dealloc,
    .tp_repr = (reprfunc)node_repr,
    .tp_getattro = (getattrofunc)node_getattro,
    .tp_call = (ternaryfunc)node_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_methods = node_methods,
    .tp_getset = node_getset,
    .tp_dictoffset = offsetof(pct_node, dict),
    .tp_new = node_tp_new,
    .tp_weaklistoffset = offsetof(pct_node, weakrefs),
};
