/* forward_ad.c: forward-mode AD's hook on op calls (torch.autograd.forward_ad, torch.func.jvp).
 *
 * Note [Forward AD]
 * Tangents do not live in the Tensor struct. pyctorch/autograd/_forward_ad.py keeps one table per dual level from
 * a tensor's id to (weak reference, tangent); the weak reference's callback drops the entry when the primal dies
 * and exiting a level drops the level's table, so no slot has to be owned, traversed or cleared and tensors
 * outside forward AD pay nothing. While a level exists the bit PCT_HOOK_FORWARD_AD of pct_dispatch_hooks is set
 * and every op call (the binding's, a composite's, indexing's) goes through pct_forward_ad_dispatch: before the
 * kernel runs, the op's index, how it writes (mode) and its arguments go to the Python hook, which answers None
 * when no argument has a tangent, or else a callable that, given the result, computes the result's tangents with
 * the op's JVP formula (the PCT_FWGRAD lines beside PCT_GRAD in ops*.def) and records them. (Before the kernel,
 * so that an in-place op's formula can still read the value it overwrites.) A thread-local switch suspends the
 * hook while the formulas run, so their own ops are not differentiated again at the same level; with nested
 * levels (torch.func.jvp inside jvp) Python keeps the outer levels live, so tangents get tangents.
 */
#include "autograd.h"
#include "profiler.h"
#include "python_values.h"
#include <string.h>

_Thread_local int pct_forward_ad_suspended;
static PyObject *hook; /* owned: the Python hook, or NULL while no dual level exists */
static PyObject *copier; /* owned: _forward_ad.copy_tangents while a level exists */

/* Each op's JVP formulas (NULL-terminated), NULL where the op has no PCT_FWGRAD line. */
static const char *const *const fw_formulas[PCT_NUM_OPS] = {
#define PCT_FWGRAD(id, ...) [PCT_OP_##id] = (const char *const[]){__VA_ARGS__, NULL},
#include "../aten/ops.def"
};

PyObject *pct_strings_tuple(const char *const *f)
{
    if (!f) Py_RETURN_NONE;
    Py_ssize_t n = 0;
    while (f[n]) n++;
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *s = PyUnicode_FromString(f[i]);
        if (!s) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

/* 0: a plain call; 1: the first argument is written (in-place variant, or a method mutator like copy_);
 * 2: an out= call. */
static int call_mode(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    size_t len = strlen(sig->name);
    if (c->inplace) return 1;
    if (c->out) return 2;
    return len > 1 && sig->name[len - 1] == '_' && !c->v[0].none && sig->params[0].type == PCT_ARG_TENSOR;
}

PyObject *pct_forward_ad_begin(int op_index, int mode, PyObject *args)
{
    if (!hook) Py_RETURN_NONE;
    return PyObject_CallFunction(hook, "iiO", op_index, mode, args);
}

PyObject *pct_forward_ad_finish(PyObject *state, PyObject *r)
{
    if (!state || state == Py_None || !r) { Py_XDECREF(state); return r; }
    PyObject *x = PyObject_CallOneArg(state, r);
    Py_DECREF(state);
    if (!x) { Py_DECREF(r); return NULL; }
    Py_DECREF(x);
    return r;
}

PyObject *pct_forward_ad_dispatch(pct_call *c)
{
    if (pct_forward_ad_suspended || !hook) return pct_autograd_dispatch(c);
    const pct_signature *sig = &c->op->sig;
    PyObject *args = PyTuple_New(sig->nparams);
    if (!args) return NULL;
    for (int i = 0; i < sig->nparams; i++) {
        PyObject *v = i == sig->out_index ? Py_NewRef(c->out ? (PyObject *)c->out : Py_None)
                                          : pct_value_as_python(&sig->params[i], &c->v[i]);
        if (!v) { Py_DECREF(args); return NULL; }
        PyTuple_SET_ITEM(args, i, v);
    }
    PyObject *state = pct_forward_ad_begin(c->op_index, call_mode(c), args);
    Py_DECREF(args);
    if (!state) return NULL;
    return pct_forward_ad_finish(state, pct_autograd_dispatch(c));
}

int pct_forward_ad_copy(PyObject *src, PyObject *dst)
{
    if (!copier || pct_forward_ad_suspended) return 0;
    PyObject *r = PyObject_CallFunctionObjArgs(copier, src, dst, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* _C._set_forward_ad_hook(hook, copy_tangents) or (None, None): installed when the first dual level is entered,
 * removed with the last. */
static PyObject *py_set_hook(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *fn, *copy;
    if (!PyArg_ParseTuple(args, "OO", &fn, &copy)) return NULL;
    Py_XSETREF(hook, fn == Py_None ? NULL : Py_NewRef(fn));
    Py_XSETREF(copier, copy == Py_None ? NULL : Py_NewRef(copy));
    if (hook) pct_dispatch_hooks |= PCT_HOOK_FORWARD_AD;
    else pct_dispatch_hooks &= ~PCT_HOOK_FORWARD_AD;
    Py_RETURN_NONE;
}

/* _C._forward_ad_suspend(flag) -> the previous flag of this thread */
static PyObject *py_suspend(PyObject *m, PyObject *flag)
{
    (void)m;
    int was = pct_forward_ad_suspended, on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    pct_forward_ad_suspended = on;
    return PyBool_FromLong(was);
}

/* _C._forward_ad_op(op_index) -> (name, parameter names, codes, JVP formulas or None, backward formulas or None,
 * implicit composite): what _forward_ad.py compiles an op's tangent function from. codes: T tensor, L tensor list,
 * X the out= parameter, O anything else. */
static PyObject *py_op_info(PyObject *m, PyObject *arg)
{
    (void)m;
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= PCT_NUM_OPS) { PyErr_SetString(PyExc_IndexError, "op index out of range"); return NULL; }
    const pct_op *op = &pct_ops[i];
    const pct_signature *sig = &op->sig;
    char code[PCT_MAX_PARAMS + 1] = {0};
    PyObject *names = PyTuple_New(sig->nparams);
    if (!names) return NULL;
    for (int k = 0; k < sig->nparams; k++) {
        PyTuple_SET_ITEM(names, k, Py_NewRef(sig->params[k].pyname));
        code[k] = k == sig->out_index ? 'X' : sig->params[k].type == PCT_ARG_TENSOR ? 'T'
                : sig->params[k].type == PCT_ARG_TENSORLIST ? 'L' : 'O';
    }
    const char *const *bw = pct_op_grad_formulas((int)i);
    return Py_BuildValue("(sNsNNO)", sig->name, names, code, pct_strings_tuple(fw_formulas[i]), pct_strings_tuple(bw),
                         op->kind == PCT_KIND_COMPOSITE && !bw ? Py_True : Py_False);
}

/* _C._forward_ad_saved_outputs(node) -> [(output_nr, alias)]: the aliases of its outputs a node saved (unpacked
 * ones only), which get the outputs' tangents once the hook has computed them. */
static PyObject *py_saved_outputs(PyObject *m, PyObject *node)
{
    (void)m;
    PyObject *list = PyList_New(0);
    if (!list || !PCT_NODE_CHECK(node)) return list;
    pct_node *n = (pct_node *)node;
    for (int i = 0; i < n->nsaved; i++) {
        pct_saved *s = &n->saved[i];
        if (!s->is_output || !s->obj || s->unpack || !s->is_tensor) continue;
        PyObject *item = Py_BuildValue("(IO)", s->output_nr, s->obj);
        if (!item || PyList_Append(list, item) < 0) { Py_XDECREF(item); Py_DECREF(list); return NULL; }
        Py_DECREF(item);
    }
    return list;
}

static PyMethodDef methods[] = {
    {"_set_forward_ad_hook", py_set_hook, METH_VARARGS, NULL},
    {"_forward_ad_saved_outputs", py_saved_outputs, METH_O, NULL},
    {"_forward_ad_suspend", py_suspend, METH_O, NULL},
    {"_forward_ad_op", py_op_info, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

int pct_forward_ad_install(PyObject *module) { return PyModule_AddFunctions(module, methods); }
