/* bindings.c: Python callables generated from the op table.
 *
 * Ops sharing a Python name form one overload group. For each group one function
 * object is made per mode: torch.<name> (function), Tensor.<name> (method) and
 * Tensor.<name>_ (in-place). The object is a vectorcall callable flagged as a method
 * descriptor, so `t.add(u)` calls it with t first and no bound-method allocation. */
#include "pyobjects.h"
#include "../autograd/autograd.h"
#include "../autograd/profiler.h"
#include "torch_function.h"
#include <stdlib.h>
#include <string.h>

enum { MODE_FUNC, MODE_METHOD, MODE_INPLACE };
#define PCT_MAX_OVERLOADS 12

/* torch's overloads of table entries (Note [Overload signatures]), parsed at install */
static const struct { int op; const char *schema; } overload_table[] = {
#define PCT_OVERLOAD(id, schema) {PCT_OP_##id, schema},
#include "../aten/ops_overloads.def"
#undef PCT_OVERLOAD
};
#define NUM_OVERLOADS (sizeof overload_table / sizeof overload_table[0])
static pct_signature overload_sigs[NUM_OVERLOADS];

typedef struct pct_opfunc {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int mode;
    int nops;
    int ops[PCT_MAX_OVERLOADS];  /* overloads, in table order */
    const pct_signature *sigs[PCT_MAX_OVERLOADS]; /* what each parses against: the op's own signature, or one of
                                                      its torch overloads (Note [Overload signatures]) */
    PyObject *name;
    PyObject *doc;
} pct_opfunc;

/* an argument's type as torch's messages name it: "Tensor" for tensors (their subclasses keep their names) */
static const char *arg_type_name(PyObject *o)
{
    return Py_TYPE(o) == &pct_TensorType ? "Tensor" : Py_TYPE(o)->tp_name;
}

/* A call that matched no signature because it names more dims than a tensor can have (a size list of over
 * PCT_MAX_DIMS ints, or as many ints given one by one): 1 with RuntimeError set. torch has no such limit; a
 * clear error is better than a TypeError saying a list is not a tuple of ints. */
static int too_many_dims(PyObject *const *args, size_t nargs, PyObject *kwnames)
{
    size_t nall = nargs + (size_t)(kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    Py_ssize_t n = 0;
    for (size_t i = 0; i < nargs; i++) n += PyLong_Check(args[i]);
    if (n <= PCT_MAX_DIMS) n = 0;
    for (size_t i = 0; !n && i < nall; i++) {
        PyObject *o = args[i];
        if ((PyList_Check(o) || PyTuple_Check(o)) && PySequence_Fast_GET_SIZE(o) > PCT_MAX_DIMS &&
            PyLong_Check(PySequence_Fast_ITEMS(o)[0]))
            n = PySequence_Fast_GET_SIZE(o);
    }
    if (!n) return 0;
    PyErr_Format(PyExc_RuntimeError, "pyctorch supports at most %d dimensions, got %zd", PCT_MAX_DIMS, n);
    return 1;
}

static PyObject *invalid_combination(pct_opfunc *f, PyObject *const *args, size_t nargs, PyObject *kwnames, PyObject *first_err)
{
    if (too_many_dims(args, nargs, kwnames)) return NULL;
    if (f->nops == 1 && first_err) {
        PyErr_SetObject(PyExc_TypeError, first_err);
        return NULL;
    }
    /* torch lists every overload when none matches */
    PyObject *got = PyUnicode_FromString("");
    for (size_t i = 0; got && i < nargs; i++) {
        PyObject *n = PyUnicode_FromFormat("%U%s%s", got, i ? ", " : "", arg_type_name(args[i]));
        Py_SETREF(got, n);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; got && k < nkw; k++) {
        PyObject *n = PyUnicode_FromFormat("%U%s%U=%s", got, (nargs || k) ? ", " : "", PyTuple_GET_ITEM(kwnames, k),
                                           arg_type_name(args[nargs + k]));
        Py_SETREF(got, n);
    }
    if (!got) return NULL;
    PyObject *msg = PyUnicode_FromFormat("%U() received an invalid combination of arguments - got (%U), but expected one of:",
                                         f->name, got);
    Py_DECREF(got);
    for (int i = 0; msg && i < f->nops; i++) {
        PyObject *n = PyUnicode_FromFormat("%U\n * %s", msg, f->sigs[i]->text);
        Py_SETREF(msg, n);
    }
    if (msg) { PyErr_SetObject(PyExc_TypeError, msg); Py_DECREF(msg); }
    return NULL;
}

/* Whether the call gave out= (not None): a named result is then torch.return_types.<name>_out. */
static bool out_given(const pct_call *c)
{
    const int i = c->op->sig.out_index;
    if (i < 0 || c->v[i].none) return false;
    const pct_param *p = &c->op->sig.params[i];
    return p->type != PCT_ARG_OBJECT || (c->v[i].obj && c->v[i].obj != Py_None);
}

/* Note [Op trace hook]
 * torch.export records a model's op calls as it runs (pyctorch/export/_trace.py). While a hook is set, every op
 * call made from Python through these functions (torch.<op>, Tensor.<op>, the operators that route here) is
 * reported to it after it ran: hook(op_index, python_name, signature_text, mode, args, kwargs, result), with self
 * first in args for methods. Calls made while one is being reported (the ops a Python composite or the hook itself
 * calls underneath) are not: the trace holds the outermost op-table calls only. Without a hook an op pays one load
 * and a predictable branch. The hook and the depth are only touched with the GIL held. */
static PyObject *trace_hook;
static int trace_depth;

static PyObject *report_call(pct_opfunc *f, int k, int op_index, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames, PyObject *r)
{
    if (!r) return NULL;
    const Py_ssize_t first = self ? 1 : 0;
    PyObject *pos = PyTuple_New(nargs + first), *kw = PyDict_New(), *res = NULL;
    if (!pos || !kw) goto done;
    if (self) PyTuple_SET_ITEM(pos, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(pos, i + first, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) goto done;
    res = PyObject_CallFunction(trace_hook, "iOsiOOO", op_index, f->name, f->sigs[k]->text, f->mode, pos, kw, r);
done:
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    if (!res) Py_CLEAR(r);
    Py_XDECREF(res);
    return r;
}

int pct_trace_begin(void)
{
    if (trace_hook == NULL || trace_depth != 0) return 0;
    trace_depth++;
    return 1;
}

PyObject *pct_trace_end(const char *name, PyObject *args, PyObject *r)
{
    PyObject *res = NULL;
    if (!args) Py_CLEAR(r); /* the args tuple could not be made: its exception stands */
    if (r && args && trace_hook)
        res = PyObject_CallFunction(trace_hook, "isyiOOO", -1, name, "", 0, args, Py_None, r);
    trace_depth--;
    Py_XDECREF(args);
    if (!res) Py_CLEAR(r);
    Py_XDECREF(res);
    return r;
}

/* _C._set_op_trace_hook(callable or None): the previous hook (None if there was none) */
PyObject *pct_py_set_op_trace_hook(PyObject *unused, PyObject *hook)
{
    (void)unused;
    if (hook != Py_None && !PyCallable_Check(hook)) {
        PyErr_SetString(PyExc_TypeError, "_set_op_trace_hook expects a callable or None");
        return NULL;
    }
    PyObject *old = trace_hook ? trace_hook : Py_NewRef(Py_None);
    trace_hook = hook == Py_None ? NULL : Py_NewRef(hook);
    return old;
}

static PyObject *opfunc_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    pct_opfunc *f = (pct_opfunc *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    /* Note [Torch function check]: self (for methods), the positional and the keyword arguments */
    if (pct_tf_needed(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0)))
        return pct_tf_dispatch(callable, args, (size_t)nargs, kwnames);
    PyObject *self = NULL;
    if (f->mode != MODE_FUNC) {
        if (nargs < 1 || !PCT_TENSOR_CHECK(args[0])) {
            PyErr_Format(PyExc_TypeError, "descriptor '%U' requires a 'Tensor' object", f->name);
            return NULL;
        }
        self = args[0];
        args++;
        nargs--;
    }
    pct_call c;
    PyObject *first_err = NULL;
    for (int k = 0; k < f->nops; k++) {
        const pct_op *op = &pct_ops[f->ops[k]];
        c.op = op;
        c.op_index = f->ops[k];
        c.out = NULL;
        c.nowned = 0;
        c.inplace = f->mode == MODE_INPLACE;
        PyObject *err = NULL;
        /* one overload: its message is the error; several: the message lists them all, so a failed try makes none
         * (formatting one would cost more than the parse) */
        int prc = pct_parse_args(f->sigs[k], self, args, nargs, kwnames, &c, f->nops == 1 ? &err : NULL);
        if (prc < 0) {
            pct_call_release(&c);
            if (prc == PCT_PARSE_FAILED) { /* an argument raised its own error (a malformed device string) */
                Py_XDECREF(first_err);
                return NULL;
            }
            if (f->nops > 1) continue;
            if (!err) return NULL;
            first_err = err;
            continue;
        }
        Py_XDECREF(first_err);
        if (c.inplace) {
            if (c.out) {
                pct_call_release(&c);
                PyErr_Format(PyExc_TypeError, "%U_() got an unexpected keyword argument 'out'", f->name);
                return NULL;
            }
            c.out = (pct_tensor *)self;
        }
        const bool report = trace_hook != NULL && trace_depth == 0; /* Note [Op trace hook] */
        trace_depth += report;
        PyObject *r = pct_op_call(&c);
        const pct_op_returns *named = r ? pct_op_returns_of(c.op_index) : NULL;
        if (named) r = pct_py_name_result(r, op->sig.name, named, out_given(&c));
        pct_call_release(&c);
        if (report) {
            r = report_call(f, k, c.op_index, self, args, nargs, kwnames, r);
            trace_depth--;
        }
        return r;
    }
    PyObject *r = invalid_combination(f, args - (self ? 1 : 0), (size_t)(nargs + (self ? 1 : 0)), kwnames, first_err);
    Py_XDECREF(first_err);
    return r;
}

static PyObject *opfunc_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) { Py_INCREF(self); return self; }
    return PyMethod_New(self, obj);
}

static PyObject *opfunc_repr(pct_opfunc *f)
{
    return PyUnicode_FromFormat("<built-in %s %U>", f->mode == MODE_FUNC ? "function" : "method", f->name);
}

static void opfunc_dealloc(pct_opfunc *f)
{
    Py_XDECREF(f->name);
    Py_XDECREF(f->doc);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyObject *opfunc_get_doc(pct_opfunc *f, void *unused)
{
    (void)unused;
    Py_INCREF(f->doc);
    return f->doc;
}
static PyObject *opfunc_get_name(pct_opfunc *f, void *unused)
{
    (void)unused;
    Py_INCREF(f->name);
    return f->name;
}

static PyGetSetDef opfunc_getset[] = {
    {"__doc__", (getter)opfunc_get_doc, NULL, NULL, NULL},
    {"__name__", (getter)opfunc_get_name, NULL, NULL, NULL},
    {"__qualname__", (getter)opfunc_get_name, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pct_OpFuncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyctorch._C.builtin_function",
    .tp_basicsize = sizeof(pct_opfunc),
    .tp_dealloc = (destructor)opfunc_dealloc,
    .tp_vectorcall_offset = offsetof(pct_opfunc, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = (reprfunc)opfunc_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_descr_get = opfunc_descr_get,
    .tp_getset = opfunc_getset,
};

static pct_opfunc *opfunc_new(const char *name, int mode)
{
    pct_opfunc *f = PyObject_New(pct_opfunc, &pct_OpFuncType);
    if (!f) return NULL;
    f->vectorcall = opfunc_vectorcall;
    f->mode = mode;
    f->nops = 0;
    f->name = PyUnicode_FromString(name);
    f->doc = NULL;
    if (!f->name) { Py_DECREF(f); return NULL; }
    return f;
}

/* Registry of made functions, for C callers (the number protocol). */
static PyObject *registry_func, *registry_inplace, *registry_method;

PyObject *pct_opfunc_get(const char *py_name, int inplace)
{
    PyObject *d = inplace == PCT_OPFUNC_METHOD ? registry_method : inplace ? registry_inplace : registry_func;
    return d ? PyDict_GetItemString(d, py_name) : NULL; /* borrowed */
}

static int set_doc(pct_opfunc *f, const char *prefix)
{
    PyObject *doc = PyUnicode_FromString("");
    for (int i = 0; doc && i < f->nops; i++) {
        PyObject *n = PyUnicode_FromFormat("%U%s%s%U%s", doc, i ? "\n" : "", prefix, f->name, f->sigs[i]->text);
        Py_SETREF(doc, n);
    }
    f->doc = doc;
    return doc ? 0 : -1;
}

static void add_sig(pct_opfunc *f, int op, const pct_signature *sig)
{
    if (f->nops >= PCT_MAX_OVERLOADS) return;
    f->ops[f->nops] = op;
    f->sigs[f->nops++] = sig;
}

int pct_bindings_install(PyObject *module)
{
    for (size_t k = 0; k < NUM_OVERLOADS; k++)
        if (pct_overload_parse(overload_table[k].schema, &pct_ops[overload_table[k].op].sig, &overload_sigs[k]) < 0)
            return -1;
    registry_func = PyDict_New();
    registry_inplace = PyDict_New();
    registry_method = PyDict_New();
    if (!registry_func || !registry_inplace || !registry_method) return -1;
    PyObject *tdict = pct_TensorType.tp_dict;
    bool done[PCT_NUM_OPS] = {0};
    for (int i = 0; i < PCT_NUM_OPS; i++) {
        if (done[i]) continue;
        const char *name = pct_ops[i].sig.name;
        pct_opfunc *modes[3] = {NULL, NULL, NULL};
        int rc = -1;
        for (int m = 0; m < 3; m++) {
            char nm[64];
            snprintf(nm, sizeof nm, m == MODE_INPLACE ? "%s_" : "%s", name);
            if (!(modes[m] = opfunc_new(nm, m))) goto fail;
        }
        for (int j = i; j < PCT_NUM_OPS; j++) {
            if (strcmp(pct_ops[j].sig.name, name) != 0) continue;
            done[j] = true;
            unsigned v = pct_ops[j].variants;
            for (int m = 0; m < 3; m++) {
                if (!(v & (m == MODE_FUNC ? PCT_V_FUNC : m == MODE_METHOD ? PCT_V_METHOD : PCT_V_INPLACE))) continue;
                bool has_overloads = false;
                for (size_t k = 0; k < NUM_OVERLOADS; k++) {
                    if (overload_table[k].op != j) continue;
                    has_overloads = true;
                    add_sig(modes[m], j, &overload_sigs[k]);
                }
                if (!has_overloads) add_sig(modes[m], j, &pct_ops[j].sig);
            }
        }
        for (int m = 0; m < 3; m++) if (set_doc(modes[m], m == MODE_FUNC ? "pyctorch." : "Tensor.") < 0) goto fail;
        if (modes[0]->nops && (PyModule_AddObjectRef(module, name, (PyObject *)modes[0]) < 0 ||
                               PyDict_SetItemString(registry_func, name, (PyObject *)modes[0]) < 0))
            goto fail;
        if (modes[1]->nops) {
            if (PyDict_SetItemString(tdict, name, (PyObject *)modes[1]) < 0 ||
                PyDict_SetItemString(registry_method, name, (PyObject *)modes[1]) < 0)
                goto fail;
            if (!modes[0]->nops && PyDict_SetItemString(registry_func, name, (PyObject *)modes[1]) < 0) goto fail;
        }
        if (modes[2]->nops) {
            if (PyDict_SetItem(tdict, modes[2]->name, (PyObject *)modes[2]) < 0 ||
                PyDict_SetItemString(registry_inplace, name, (PyObject *)modes[2]) < 0)
                goto fail;
        }
        rc = 0;
    fail:
        for (int m = 0; m < 3; m++) Py_XDECREF(modes[m]);
        if (rc < 0) return -1;
    }
    PyType_Modified(&pct_TensorType);
    return 0;
}

/* _C._call_op(op_index, args): op `op_index` called with one value per parameter of its own schema (not its
 * overloads), in schema order; None leaves a parameter at its default and the out= parameter is never passed.
 * Forward AD's auto_linear formulas call an op this way with the tangents in place of the primals
 * (pyctorch/autograd/_forward_ad.py). Returns what the op returns (named tuples as plain ones). */
PyObject *pct_py_call_op(PyObject *m, PyObject *a)
{
    (void)m;
    int index;
    PyObject *values;
    if (!PyArg_ParseTuple(a, "iO!", &index, &PyTuple_Type, &values)) return NULL;
    if (index < 0 || index >= PCT_NUM_OPS) { PyErr_SetString(PyExc_IndexError, "op index out of range"); return NULL; }
    const pct_op *op = &pct_ops[index];
    const pct_signature *sig = &op->sig;
    if (PyTuple_GET_SIZE(values) != sig->nparams) {
        PyErr_Format(PyExc_TypeError, "_call_op: %s takes %d values", sig->name, sig->nparams);
        return NULL;
    }
    PyObject *args[PCT_MAX_PARAMS];
    PyObject *kwnames = PyTuple_New(0);
    if (!kwnames) return NULL;
    Py_ssize_t npos = 0, nkw = 0;
    for (int i = 0; i < sig->nparams; i++) { /* positional ones first, up to the first left out */
        PyObject *v = PyTuple_GET_ITEM(values, i);
        if (i == sig->out_index || i >= sig->npositional || v == Py_None || npos != i) continue;
        args[npos++] = v;
    }
    for (int i = npos; i < sig->nparams; i++) {
        PyObject *v = PyTuple_GET_ITEM(values, i);
        if (i == sig->out_index || v == Py_None) continue;
        PyObject *more = PyTuple_New(nkw + 1);
        if (!more) { Py_DECREF(kwnames); return NULL; }
        for (Py_ssize_t k = 0; k < nkw; k++) PyTuple_SET_ITEM(more, k, Py_NewRef(PyTuple_GET_ITEM(kwnames, k)));
        PyTuple_SET_ITEM(more, nkw, Py_NewRef(sig->params[i].pyname));
        Py_SETREF(kwnames, more);
        args[npos + nkw++] = v;
    }
    pct_call c;
    c.op = op;
    c.op_index = index;
    c.out = NULL;
    c.nowned = 0;
    c.inplace = false;
    PyObject *err = NULL;
    int prc = pct_parse_args(sig, NULL, args, npos, nkw ? kwnames : NULL, &c, &err);
    Py_DECREF(kwnames);
    if (prc < 0) {
        pct_call_release(&c);
        if (err) { PyErr_SetObject(PyExc_TypeError, err); Py_DECREF(err); }
        return NULL;
    }
    PyObject *r = pct_op_call(&c);
    pct_call_release(&c);
    return r;
}
