/* saved_hooks.c: hooks on the tensors saved for backward (torch.autograd.graph.saved_tensors_hooks).
 *
 * Note [Saved tensor hooks]
 * A thread-local stack of (pack, unpack) pairs: while it is not empty, every tensor an op saves for its backward
 * is replaced by pack(tensor) (grad mode off), and the innermost unpack is kept with it; when the backward (or
 * grad_fn._saved_<name>) reads the value, unpack(packed) gives the tensor back (in the caller's grad mode; it must
 * return a tensor). A packed value is not version-checked, as in torch: the hooks own what they return.
 * disable_saved_tensors_hooks(message) makes registering hooks raise that message, and saving a tensor while
 * hooks are set. The recording path tests one thread-local int (pct_saved_hooks_on: the stack is not empty), so
 * ops pay one branch when no hooks exist.
 *
 * Ownership: the stack (a list of (pack, unpack) tuples) and the disabled message are owned thread-local
 * references (kept until the thread's interpreter state goes: an empty list per thread that used hooks); a packed
 * slot owns its packed object (obj), its unpack callable (unpack) and, for an input that required grad, the node
 * its gradient flows into (history), so the unpacked tensor can take the input's place in a double backward.
 */
#include "autograd.h"
#include "python_values.h"

_Thread_local int pct_saved_hooks_on;
static _Thread_local PyObject *hooks_stack;   /* list of (pack, unpack), or NULL */
static _Thread_local PyObject *disabled_msg;  /* str, or NULL */

static void refresh_flag(void)
{
    pct_saved_hooks_on = hooks_stack && PyList_GET_SIZE(hooks_stack) > 0;
}

/* Calls fn(arg) with grad mode off; new reference or NULL. */
static PyObject *call_without_grad(PyObject *fn, PyObject *arg)
{
    int was = pct_grad_enabled;
    pct_grad_enabled = 0;
    PyObject *r = PyObject_CallOneArg(fn, arg);
    pct_grad_enabled = was;
    return r;
}

int pct_saved_pack_with(pct_saved *s, PyObject *pack, PyObject *unpack)
{
    pct_tensor *t = (pct_tensor *)s->obj;
    if (!s->is_output && pct_tensor_requires_grad(t) && !s->history) {
        /* the unpacked tensor takes the input's place in the graph (a double backward flows through it) */
        if (!(s->history = pct_gradient_edge(t, &s->history_nr))) return -1;
    }
    PyObject *packed = call_without_grad(pack, s->obj);
    if (!packed) return -1;
    Py_SETREF(s->obj, packed);
    Py_XSETREF(s->unpack, Py_NewRef(unpack));
    return 0;
}

int pct_saved_pack(pct_saved *s)
{
    if (!s->obj || !s->is_tensor || !hooks_stack || PyList_GET_SIZE(hooks_stack) == 0) return 0;
    if (disabled_msg) { /* hooks are set but disabled here */
        PyErr_SetObject(PyExc_RuntimeError, disabled_msg);
        return -1;
    }
    PyObject *top = PyList_GET_ITEM(hooks_stack, PyList_GET_SIZE(hooks_stack) - 1);
    return pct_saved_pack_with(s, PyTuple_GET_ITEM(top, 0), PyTuple_GET_ITEM(top, 1));
}

PyObject *pct_saved_call_unpack(pct_saved *s)
{
    PyObject *r = PyObject_CallOneArg(s->unpack, s->obj); /* in the caller's grad mode, as torch */
    if (r && !pct_is_tensor_object(r)) {
        PyErr_Format(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                     "type %s", Py_TYPE(r)->tp_name);
        Py_CLEAR(r);
    }
    if (!r || !s->history || !pct_grad_enabled) return r;
    /* an alias of what unpack returned, with the saved input's place in the graph */
    pct_tensor *a = pct_tensor_history_free_alias((pct_tensor *)r);
    Py_DECREF(r);
    if (!a) return NULL;
    pct_node *h = (pct_node *)s->history;
    if (h->kind != PCT_NODE_ACCUMULATE) {
        pct_set_history(a, h, s->history_nr);
    } else if (!(a->grad_acc = PyWeakref_NewRef(s->history, NULL))) {
        Py_DECREF(a);
        return NULL;
    } else {
        a->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return (PyObject *)a;
}

/* ---- the _C functions behind torch.autograd.graph ---- */

static PyObject *py_push_hooks(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "OO", &pack, &unpack)) return NULL;
    if (disabled_msg) {
        PyErr_SetObject(PyExc_RuntimeError, disabled_msg);
        return NULL;
    }
    if (!hooks_stack && !(hooks_stack = PyList_New(0))) return NULL;
    PyObject *pair = PyTuple_Pack(2, pack, unpack);
    if (!pair) return NULL;
    int rc = PyList_Append(hooks_stack, pair);
    Py_DECREF(pair);
    if (rc < 0) return NULL;
    refresh_flag();
    Py_RETURN_NONE;
}

static PyObject *py_pop_hooks(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    Py_ssize_t n = hooks_stack ? PyList_GET_SIZE(hooks_stack) : 0;
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "internal error: no saved tensor hooks to pop; please report");
        return NULL;
    }
    if (PyList_SetSlice(hooks_stack, n - 1, n, NULL) < 0) return NULL;
    refresh_flag();
    Py_RETURN_NONE;
}

/* The innermost (pack, unpack) pair, or None. */
static PyObject *py_current_hooks(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    Py_ssize_t n = hooks_stack ? PyList_GET_SIZE(hooks_stack) : 0;
    if (n == 0) Py_RETURN_NONE;
    return Py_NewRef(PyList_GET_ITEM(hooks_stack, n - 1));
}

/* _saved_tensors_hooks_set_disabled(message or None): the previous message (or None). */
static PyObject *py_set_disabled(PyObject *m, PyObject *msg)
{
    (void)m;
    if (msg != Py_None && !PyUnicode_Check(msg)) {
        PyErr_SetString(PyExc_TypeError, "error_message must be a str");
        return NULL;
    }
    PyObject *prev = disabled_msg ? disabled_msg : Py_NewRef(Py_None);
    disabled_msg = msg == Py_None ? NULL : Py_NewRef(msg);
    refresh_flag();
    return prev;
}

/* _saved_tensors_pack(tensor): (packed, unpack) under the current hooks, or None without hooks (the Python
 * autograd.Function's save_for_backward). */
static PyObject *py_pack(PyObject *m, PyObject *t)
{
    (void)m;
    if (!pct_saved_hooks_on) Py_RETURN_NONE;
    pct_saved s = {.obj = Py_NewRef(t), .is_tensor = 1, .is_output = 1}; /* no graph place: Function ctx */
    if (pct_saved_pack(&s) < 0) {
        Py_XDECREF(s.obj);
        return NULL;
    }
    if (!s.unpack) {
        Py_DECREF(s.obj);
        Py_RETURN_NONE;
    }
    PyObject *r = PyTuple_Pack(2, s.obj, s.unpack);
    Py_DECREF(s.obj);
    Py_DECREF(s.unpack);
    return r;
}

/* _saved_tensors_unpack(packed, unpack): the tensor the unpack hook gives back. */
static PyObject *py_unpack(PyObject *m, PyObject *args)
{
    (void)m;
    pct_saved s = {0};
    if (!PyArg_ParseTuple(args, "OO", &s.obj, &s.unpack)) return NULL;
    return pct_saved_call_unpack(&s);
}

static PyMethodDef saved_hooks_methods[] = {
    {"_push_saved_tensors_default_hooks", py_push_hooks, METH_VARARGS, NULL},
    {"_pop_saved_tensors_default_hooks", py_pop_hooks, METH_NOARGS, NULL},
    {"_current_saved_tensors_hooks", py_current_hooks, METH_NOARGS, NULL},
    {"_saved_tensors_hooks_set_disabled", py_set_disabled, METH_O, NULL},
    {"_saved_tensors_pack", py_pack, METH_O, NULL},
    {"_saved_tensors_unpack", py_unpack, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

int pct_saved_hooks_install(PyObject *module) { return PyModule_AddFunctions(module, saved_hooks_methods); }
