/* record.c: autograd recording above the dispatcher.
 *
 * The binding calls pct_autograd_dispatch instead of pct_dispatch. When grad mode is
 * on and an input requires grad, it saves what the op's backward formula reads (the
 * formulas are declared next to the op: PCT_GRAD lines of ops*.def), runs the kernel
 * with grad mode off, and makes one node whose edges lead to the inputs' histories.
 * Formulas are compiled on first use by pyctorch.autograd._formulas into one Python
 * function per op: fn(grads, results, needs, *params) -> a gradient per edge. */
#include "autograd.h"
#include "profiler.h"
#include "python_values.h"
#include <ctype.h>
#include <string.h>

_Thread_local int pct_grad_enabled = 1;

/* ---- the formula table ---- */

static const char *const *const formulas[PCT_NUM_OPS] = {
#define PCT_GRAD(id, ...) [PCT_OP_##id] = (const char *const[]){__VA_ARGS__, NULL},
#include "../aten/ops.def"
};

/* the ops whose complex outputs are not recorded yet: Note [Complex outputs in autograd] (ops_complex.def) */
static const bool complex_grad_todo[PCT_NUM_OPS] = {
    false, /* the list may be empty */
#define PCT_COMPLEX_GRAD_TODO(id) [PCT_OP_##id] = true,
#include "../aten/ops_complex.def"
};

/* the ops torch refuses to differentiate through a complex output (its autograd raises after the forward):
 * PCT_COMPLEX_GRAD_REFUSED lines of ops_complex.def, with the name torch's error gives */
static const char *const complex_grad_refused[PCT_NUM_OPS] = {
#define PCT_COMPLEX_GRAD_REFUSED(id, name) [PCT_OP_##id] = name,
#include "../aten/ops_complex.def"
};

/* Whether a tensor argument of the call is complex: its node then runs the formulas' complex variant (Note
 * [Complex formula variants] in pyctorch/autograd/_formulas.py) */
static bool call_has_complex_input(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (pct_dtype_is_complex(v->t->dtype)) return true;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST) {
            Py_ssize_t k = PySequence_Fast_GET_SIZE(v->obj);
            for (Py_ssize_t j = 0; j < k; j++) {
                PyObject *o = PySequence_Fast_ITEMS(v->obj)[j];
                if (pct_is_tensor_object(o) && pct_dtype_is_complex(((pct_tensor *)o)->dtype)) return true;
            }
        }
    }
    return false;
}

enum { INFO_UNKNOWN, INFO_FORMULA, INFO_MISSING, INFO_NONDIFF };

typedef struct grad_info {
    int8_t state;
    uint32_t results_mask; /* bit i: output i is saved (the formula reads it) */
    uint32_t result_users; /* bit j: the formula of parameter j reads an output (none a tensor: no output saved) */
    uint32_t save_mask;  /* bit i: parameter i is saved */
    uint32_t meta_mask;  /* bit i: only parameter i's shape and dtype are read */
    uint32_t diff_mask;  /* bit i: parameter i has a formula (its gradient flows) */
    uint32_t users[PCT_MAX_PARAMS]; /* users[i] bit j: the formula of parameter j reads parameter i */
    PyObject *fn;        /* owned for the life of the module */
    PyObject *fn_complex; /* the formulas' complex variant (Note [Complex formula variants] in _formulas.py) */
    PyObject *name;      /* e.g. "MulBackward0" */
} grad_info;

static grad_info infos[PCT_NUM_OPS];
static PyObject *formulas_mod;

PyObject *pct_formulas_module(void)
{
    if (!formulas_mod) formulas_mod = PyImport_ImportModule("pyctorch.autograd._formulas");
    return formulas_mod;
}

/* torch's node names: CamelCase of the op name, "Backward", the overload number. */
static PyObject *node_name_for(int op_index)
{
    const char *name = pct_ops[op_index].sig.name;
    int overload = 0;
    for (int i = 0; i < op_index; i++) overload += strcmp(pct_ops[i].sig.name, name) == 0;
    char buf[96];
    size_t n = 0;
    bool up = true;
    for (const char *p = name; *p && n < 60; p++) {
        if (*p == '_') { up = true; continue; }
        buf[n++] = up ? (char)toupper((unsigned char)*p) : *p;
        up = false;
    }
    snprintf(buf + n, sizeof buf - n, "Backward%d", overload);
    return PyUnicode_InternFromString(buf);
}

static char param_code(const pct_param *p)
{
    return p->type == PCT_ARG_TENSOR ? 'T' : p->type == PCT_ARG_TENSORLIST ? 'L' : 'O';
}

static grad_info *info_for(int op_index)
{
    grad_info *g = &infos[op_index];
    if (g->state != INFO_UNKNOWN) return g;
    if (!(g->name = node_name_for(op_index))) return NULL;
    const char *const *f = formulas[op_index];
    if (!f) { g->state = INFO_MISSING; return g; }
    const pct_signature *sig = &pct_ops[op_index].sig;
    PyObject *mod = pct_formulas_module();
    if (!mod) return NULL;
    PyObject *names = PyTuple_New(sig->nparams), *codes = PyUnicode_FromStringAndSize(NULL, 0), *fs = PyList_New(0);
    if (!names || !codes || !fs) goto fail;
    char code[PCT_MAX_PARAMS + 1] = {0};
    for (int i = 0; i < sig->nparams; i++) {
        PyTuple_SET_ITEM(names, i, Py_NewRef(sig->params[i].pyname));
        code[i] = i == sig->out_index ? 'X' : param_code(&sig->params[i]);
    }
    Py_SETREF(codes, PyUnicode_FromString(code));
    for (; *f; f++) {
        PyObject *s = PyUnicode_FromString(*f);
        if (!s || PyList_Append(fs, s) < 0) { Py_XDECREF(s); goto fail; }
        Py_DECREF(s);
    }
    PyObject *r = PyObject_CallMethod(mod, "compile_op", "OOOO", g->name, names, codes, fs);
    if (!r) goto fail;
    if (r == Py_None) {
        g->state = INFO_NONDIFF;
    } else {
        PyObject *saved, *meta, *users;
        unsigned int results_read, result_users;
        if (!PyArg_ParseTuple(r, "OOIOOOI", &g->fn, &saved, &results_read, &meta, &users, &g->fn_complex, &result_users)) {
            Py_DECREF(r);
            goto fail;
        }
        g->result_users = result_users;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved) && i < PyTuple_GET_SIZE(users); i++) {
            long at = PyLong_AsLong(PyTuple_GET_ITEM(saved, i));
            unsigned long bits = PyLong_AsUnsignedLongMask(PyTuple_GET_ITEM(users, i));
            if (at >= 0 && at < PCT_MAX_PARAMS) g->users[at] = (uint32_t)bits;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(meta); i++)
            g->meta_mask |= 1u << PyLong_AsLong(PyTuple_GET_ITEM(meta, i));
        /* the targets before ": ", one name or a grouped list "query, key, value" */
        for (const char *const *f = formulas[op_index]; *f; f++) {
            const char *end = strstr(*f, ": ");
            for (const char *t = *f; end && t < end;) {
                while (t < end && (*t == ' ' || *t == ',')) t++;
                const char *e = t;
                while (e < end && *e != ',' && *e != ' ') e++;
                for (int i = 0; i < sig->nparams; i++)
                    if (strlen(sig->params[i].name) == (size_t)(e - t) && strncmp(t, sig->params[i].name, (size_t)(e - t)) == 0)
                        g->diff_mask |= 1u << i;
                t = e;
            }
        }
        Py_INCREF(g->fn);
        Py_INCREF(g->fn_complex);
        g->results_mask = results_read;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(saved); i++)
            g->save_mask |= 1u << PyLong_AsLong(PyTuple_GET_ITEM(saved, i));
        g->state = INFO_FORMULA;
    }
    Py_DECREF(r);
    Py_DECREF(names); Py_DECREF(codes); Py_DECREF(fs);
    return g;
fail:
    Py_XDECREF(names); Py_XDECREF(codes); Py_XDECREF(fs);
    return NULL;
}

const char *const *pct_op_grad_formulas(int op_index) { return formulas[op_index]; }

uint32_t pct_op_meta_mask(int op_index)
{
    grad_info *g = op_index >= 0 && op_index < PCT_NUM_OPS ? &infos[op_index] : NULL;
    return g && g->state == INFO_FORMULA ? g->meta_mask : 0;
}

/* A parsed argument as the Python value a formula reads. */
PyObject *pct_value_as_python(const pct_param *p, const pct_value *v)
{
    if (v->none) Py_RETURN_NONE;
    switch (p->type) {
    case PCT_ARG_TENSOR: return Py_NewRef((PyObject *)v->t);
    case PCT_ARG_INT: return PyLong_FromLongLong(v->i);
    case PCT_ARG_FLOAT: return PyFloat_FromDouble(v->d);
    case PCT_ARG_BOOL: return PyBool_FromLong(v->b);
    case PCT_ARG_DTYPE: return Py_NewRef(pct_python_values.dtype_objects[v->dtype]);
    case PCT_ARG_DEVICE: return pct_python_values.device_new(v->dev.type, v->dev.index);
    case PCT_ARG_SCALAR:
        if (v->s.kind == PCT_SCALAR_BOOL) return PyBool_FromLong(v->s.i != 0);
        if (v->s.kind == PCT_SCALAR_INT) return PyLong_FromLongLong(v->s.i);
        if (v->s.kind == PCT_SCALAR_COMPLEX) return PyComplex_FromDoubles(v->s.d, v->s.im);
        return PyFloat_FromDouble(v->s.d);
    case PCT_ARG_INTLIST: {
        PyObject *t = PyTuple_New(v->n);
        for (int i = 0; t && i < v->n; i++) {
            PyObject *x = PyLong_FromLongLong(v->list[i]);
            if (!x) { Py_CLEAR(t); break; }
            PyTuple_SET_ITEM(t, i, x);
        }
        return t;
    }
    case PCT_ARG_FLOATLIST: {
        PyObject *t = PyTuple_New(v->n);
        for (int i = 0; t && i < v->n; i++) {
            PyObject *x = PyFloat_FromDouble(v->flist[i]);
            if (!x) { Py_CLEAR(t); break; }
            PyTuple_SET_ITEM(t, i, x);
        }
        return t;
    }
    case PCT_ARG_TENSORLIST: return PySequence_Tuple(v->obj);
    case PCT_ARG_STR: case PCT_ARG_OBJECT: case PCT_ARG_GENERATOR:
        return Py_NewRef(v->obj ? v->obj : Py_None); /* string defaults are not materialised */
    default: Py_RETURN_NONE;
    }
}

/* A tensor of t's shape and dtype over one shared zeroed element (zero strides): what a
 * formula that reads only t.shape / t.dtype gets, so t itself is not kept alive. */
static PyObject *meta_standin(pct_tensor *t)
{
    /* one zeroed storage per device, on t's device so that the formula's results land there (zeros_like(other)) */
    static pct_storage *zeros[PCT_NUM_BACKENDS][PCT_MAX_DEVICE_INDEX + 1];
    const int index = t->device_index < 0 ? 0 : t->device_index > PCT_MAX_DEVICE_INDEX ? PCT_MAX_DEVICE_INDEX : t->device_index;
    pct_storage **slot = &zeros[t->device_type][index];
    if (!*slot) {
        const int64_t n = 64;
        pct_tensor *z = pct_tensor_zeros_on(1, &n, PCT_UINT8, t->device_type, t->device_index);
        if (!z) return NULL;
        pct_storage_incref(*slot = z->storage); /* held for the life of the process */
        Py_DECREF(z);
    }
    int64_t strides[PCT_MAX_DIMS] = {0};
    pct_tensor *s = pct_tensor_from_storage(*slot, t->ndim, t->sizes, strides, 0, t->dtype);
    if (s && (t->flags & PCT_FLAG_WRAPPED_NUMBER)) s->flags |= PCT_FLAG_WRAPPED_NUMBER;
    return (PyObject *)s;
}

static PyObject *meta_of_value(const pct_param *p, const pct_value *v)
{
    if (v->none) Py_RETURN_NONE;
    if (p->type == PCT_ARG_TENSOR) return meta_standin(v->t);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(v->obj);
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *m = meta_standin((pct_tensor *)PySequence_Fast_ITEMS(v->obj)[i]);
        if (!m) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, m);
    }
    return t;
}

bool pct_any_requires_grad(int n, pct_tensor *const *ts)
{
    if (!pct_grad_enabled) return false;
    for (int i = 0; i < n; i++) if (ts[i] && pct_tensor_requires_grad(ts[i])) return true;
    return false;
}

static bool is_leaf_requiring_grad(const pct_tensor *t) { return !t->grad_fn && pct_tensor_requires_grad(t); }

int pct_check_inplace(pct_tensor *t)
{
    if ((t->flags & PCT_FLAG_FUNCTION_VIEW) && t->grad_fn) {
        /* torch names the Function's forward class: the node's name without "Backward" */
        PyObject *node_name = PyObject_CallMethod(t->grad_fn, "name", NULL);
        const char *text = node_name ? PyUnicode_AsUTF8(node_name) : NULL;
        size_t len = text ? strlen(text) : 0;
        PyObject *name = text ? PyUnicode_FromStringAndSize(text, (Py_ssize_t)(len > 8 && strcmp(text + len - 8, "Backward") == 0 ? len - 8 : len)) : NULL;
        Py_XDECREF(node_name);
        if (!name) return -1;
        PyErr_Format(PyExc_RuntimeError,
                     "Output %u of %U is a view and is being modified inplace. This view was created inside a custom "
                     "Function (or because an input was returned as-is) and the autograd logic to handle view+inplace "
                     "would override the custom backward associated with the custom Function, leading to incorrect "
                     "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom "
                     "Function.", t->output_nr, name);
        Py_DECREF(name);
        return -1;
    }
    if (is_leaf_requiring_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    if (t->base && is_leaf_requiring_grad((pct_tensor *)t->base)) {
        PyErr_SetString(PyExc_RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    return 0;
}

/* Counts the differentiable input slots: one per Tensor parameter, one per list item. */
static int count_edges(const pct_call *c)
{
    const pct_signature *sig = &c->op->sig;
    int n = 0;
    for (int i = 0; i < sig->nparams; i++) {
        if (i == sig->out_index) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) n++;
        else if (sig->params[i].type == PCT_ARG_TENSORLIST) n += c->v[i].none ? 0 : (int)PySequence_Fast_GET_SIZE(c->v[i].obj);
    }
    return n;
}

/* Any tensor argument in `mask` (a parameter bit set) requires grad. */
static bool call_requires_grad(const pct_call *c, uint32_t mask)
{
    const pct_signature *sig = &c->op->sig;
    for (int i = 0; i < sig->nparams; i++) {
        const pct_value *v = &c->v[i];
        if (v->none || i == sig->out_index || !(mask & (1u << i))) continue;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (pct_tensor_requires_grad(v->t)) return true;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST) {
            Py_ssize_t n = PySequence_Fast_GET_SIZE(v->obj);
            PyObject **items = PySequence_Fast_ITEMS(v->obj);
            for (Py_ssize_t k = 0; k < n; k++) if (pct_tensor_requires_grad((pct_tensor *)items[k])) return true;
        }
    }
    return false;
}

static PyObject *dispatch_without_grad(pct_call *c)
{
    int was = pct_grad_enabled;
    pct_grad_enabled = 0;
    PyObject *r = pct_dispatch(c);
    pct_grad_enabled = was;
    return r;
}

/* The output tensors of a kernel result (a tensor, or a tuple/list of them, e.g. split):
 * a malloc'd array of 2 * *n slots (the second half is scratch for the caller); NULL with
 * an exception on memory failure. */
static pct_tensor **collect_outputs(PyObject *r, int *n)
{
    Py_ssize_t count = pct_is_tensor_object(r) ? 1 : (PyTuple_Check(r) || PyList_Check(r)) ? PySequence_Fast_GET_SIZE(r) : 0;
    pct_tensor **outs = malloc(sizeof(pct_tensor *) * 2 * (size_t)(count ? count : 1));
    if (!outs) { PyErr_NoMemory(); return NULL; }
    if (pct_is_tensor_object(r)) outs[0] = (pct_tensor *)r;
    else
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *o = PySequence_Fast_ITEMS(r)[i];
            outs[i] = pct_is_tensor_object(o) ? (pct_tensor *)o : NULL;
        }
    *n = (int)count;
    return outs;
}

static PyObject *clone_with_history(pct_tensor *t) { return pct_op_call1(PCT_OP_clone, t); }

static void saved_set(pct_saved *s, PyObject *obj, bool is_output, uint32_t nr)
{
    s->obj = obj; /* steals */
    s->is_tensor = obj && pct_is_tensor_object(obj);
    s->is_output = is_output;
    s->output_nr = nr;
    if (s->is_tensor) s->version = atomic_load(&((pct_tensor *)obj)->version->value);
}

PyObject *pct_autograd_dispatch(pct_call *c)
{
    if (!pct_grad_enabled || !call_requires_grad(c, UINT32_MAX)) return pct_dispatch(c);
    const pct_signature *sig = &c->op->sig;
    /* method-only mutators (copy_, fill_, zero_) write their first argument like in-place variants */
    size_t name_len = strlen(sig->name);
    pct_tensor *target = c->inplace ? c->out
                       : (name_len > 1 && sig->name[name_len - 1] == '_' && !c->v[0].none &&
                          sig->params[0].type == PCT_ARG_TENSOR) ? c->v[0].t : NULL;
    if (c->out && !c->inplace) {
        /* torch's check is in the autograd kernels of differentiable ops: a non-differentiable one takes out= */
        grad_info *nd = info_for(c->op_index);
        if (!nd) return NULL;
        if (nd->state == INFO_NONDIFF) return dispatch_without_grad(c);
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): functions with out=... arguments don't support automatic differentiation, but one of the "
                     "arguments requires grad.", sig->name);
        return NULL;
    }
    /* Note [Composite ops]: an implicit composite records no node; the ops it calls, with grad mode on, do */
    if (c->op->kind == PCT_KIND_COMPOSITE && !formulas[c->op_index]) return pct_dispatch(c);
    if (target && pct_check_inplace(target) < 0) return NULL;
    if (target && pct_dtype_is_complex(target->dtype) && complex_grad_todo[c->op_index]) {
        /* unrecorded, it would leave the tensor its old history: a wrong gradient (Note [Complex outputs in
         * autograd]) */
        PyErr_Format(PyExc_NotImplementedError, "%s: the derivative of this op for complex tensors is not "
                     "implemented yet: it cannot be recorded in place on a complex tensor in a graph that requires "
                     "grad", sig->name);
        return NULL;
    }
    grad_info *g = info_for(c->op_index);
    if (!g) return NULL;
    if (g->state == INFO_NONDIFF) return dispatch_without_grad(c);
    /* a tensor read only for its shape (view_as, type_as...) carries no gradient */
    uint32_t diff = g->state == INFO_FORMULA ? g->diff_mask : UINT32_MAX;
    if (target) diff |= 1u; /* the written tensor's history continues through the node */
    if (!call_requires_grad(c, diff)) return dispatch_without_grad(c);

    int nedges = count_edges(c);
    pct_node *n = pct_node_new(&pct_NodeType, PCT_NODE_FORMULA, nedges, 0);
    if (!n) return NULL;
    n->name = Py_NewRef(g->name);
    n->fn = g->fn ? Py_NewRef(g->fn) : NULL;
    n->op_index = (int16_t)(c->op_index + 1);
    PyObject *params[PCT_MAX_PARAMS] = {0};
    PyObject *r = NULL;
    pct_tensor **outs = NULL, **all_outs; /* every output; all_outs keeps the integer ones too */
    int nouts = 0;
    /* the parameters whose gradient will be computed: a tensor read only by the formulas of
     * the others is not saved (nor kept alive, nor version-checked) */
    uint32_t needed = 0;
    for (int i = 0; i < sig->nparams; i++)
        if (i != sig->out_index && ((diff >> i) & 1u) && call_requires_grad(c, 1u << i)) needed |= 1u << i;
    if (target) needed |= 1u;
    /* edges and saved inputs are taken before the kernel runs: an in-place op changes both */
    for (int i = 0, e = 0; i < sig->nparams; i++) {
        if (i == sig->out_index) continue;
        const pct_value *v = &c->v[i];
        bool flows = (diff >> i) & 1u;
        if (sig->params[i].type == PCT_ARG_TENSOR) {
            if (pct_node_set_edge(n, e++, v->none || !flows ? NULL : v->t) < 0) goto fail;
        } else if (sig->params[i].type == PCT_ARG_TENSORLIST && !v->none) {
            Py_ssize_t k = PySequence_Fast_GET_SIZE(v->obj);
            for (Py_ssize_t j = 0; j < k; j++)
                if (pct_node_set_edge(n, e++, flows ? (pct_tensor *)PySequence_Fast_ITEMS(v->obj)[j] : NULL) < 0) goto fail;
        }
        if (!(g->save_mask & (1u << i))) continue;
        bool tensor_like = sig->params[i].type == PCT_ARG_TENSOR || sig->params[i].type == PCT_ARG_TENSORLIST;
        if (tensor_like && g->users[i] && !(g->users[i] & needed)) continue;
        if (g->meta_mask & (1u << i)) params[i] = meta_of_value(&sig->params[i], v);
        else if (target && i == 0) params[i] = clone_with_history(target); /* the value before the op */
        else params[i] = pct_value_as_python(&sig->params[i], v);
        if (!params[i]) goto fail;
    }
    if (!(r = dispatch_without_grad(c))) goto fail;
    if (!(outs = collect_outputs(r, &nouts))) goto fail;
    for (int i = 0; i < nouts && complex_grad_refused[c->op_index] && !target; i++) { /* in place: torch records */
        if (outs[i] && pct_dtype_is_complex(outs[i]->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "%s does not support automatic differentiation for outputs with complex "
                         "dtype.", complex_grad_refused[c->op_index]);
            goto fail;
        }
    }
    all_outs = outs + nouts;
    memcpy(all_outs, outs, sizeof(pct_tensor *) * (size_t)nouts);
    bool any_float = false, any_complex = call_has_complex_input(c);
    for (int i = 0; i < nouts; i++) {
        if (!outs[i]) continue;
        if (!target) {
            /* an op that hands back an input unchanged (contiguous(), to() a no-op) records nothing */
            for (int j = 0; j < sig->nparams; j++)
                if (sig->params[j].type == PCT_ARG_TENSOR && !c->v[j].none && (pct_tensor *)c->v[j].t == outs[i])
                    goto unrecorded;
        }
        if (pct_dtype_is_floating(outs[i]->dtype)) any_float = true;
        else if (pct_dtype_is_complex(outs[i]->dtype) && !complex_grad_todo[c->op_index]) any_float = any_complex = true;
        else outs[i] = NULL; /* integer and bool outputs are not differentiable (complex ones: see above) */
    }
    if (!any_float) goto unrecorded;
    if (any_complex && g->fn_complex && g->fn_complex != n->fn) Py_SETREF(n->fn, Py_NewRef(g->fn_complex));
    n->outputs = calloc((size_t)nouts, sizeof(pct_meta));
    n->saved = calloc((size_t)(sig->nparams + (g->results_mask ? nouts : 0)), sizeof(pct_saved));
    if (!n->outputs || !n->saved) { PyErr_NoMemory(); goto fail; }
    n->noutputs = nouts;
    for (int i = 0; i < nouts; i++) {
        n->outputs[i].dtype = -1;
        if (outs[i]) pct_node_set_output(n, i, outs[i]);
    }
    if (pct_node_finish_meta(n) < 0) goto fail;
    n->nparams = sig->nparams;
    n->nsaved = sig->nparams;
    for (int i = 0; i < sig->nparams; i++) {
        saved_set(&n->saved[i], params[i], false, (uint32_t)i);
        params[i] = NULL;
    }
    if (g->results_mask) {
        /* torch saves an output per overload: pow(x, 2.5) (PowBackward0) does not, pow(x, e) of a tensor e does,
           whether or not e needs a gradient. So an output is saved when a parameter whose formula reads it is a
           tensor here (not a number the parser wrapped) */
        uint32_t real_tensors = 0;
        for (int j = 0; j < sig->nparams && j < 32; j++) {
            const pct_value *v = &c->v[j];
            if (j == sig->out_index || v->none) continue;
            if ((sig->params[j].type == PCT_ARG_TENSOR && !(v->t->flags & PCT_FLAG_WRAPPED_NUMBER)) ||
                sig->params[j].type == PCT_ARG_TENSORLIST)
                real_tensors |= 1u << j;
        }
        for (int i = 0; i < nouts; i++) {
            /* the outputs the formula reads are saved (max(dim)'s backward reads its indices; batch norm's its mean
               and invstd, not its output); floats get re-attached; the others are None slots */
            const bool read = i < 32 && (g->results_mask & (1u << i)) && (!g->result_users || (g->result_users & real_tensors));
            PyObject *a = read && all_outs[i] ? (PyObject *)pct_tensor_history_free_alias(all_outs[i]) : Py_NewRef(Py_None);
            if (!a) goto fail;
            saved_set(&n->saved[n->nsaved++], a, outs[i] != NULL, (uint32_t)i);
        }
    }
    if (pct_saved_hooks_on) /* Note [Saved tensor hooks]: inputs in parameter order, then outputs */
        for (int i = 0; i < n->nsaved; i++)
            if (!(i < n->nparams && (g->meta_mask & (1u << i))) && pct_saved_pack(&n->saved[i]) < 0) goto fail;
    /* only nodes that hold values refuse a second backward (torch: AddBackward can rerun) */
    for (int i = 0; i < n->nsaved; i++) n->has_saved |= n->saved[i].obj != NULL;
    if (pct_anomaly_enabled) {
        PyObject *mod = pct_formulas_module();
        n->trace = mod ? PyObject_CallMethod(mod, "creation_trace", NULL) : NULL;
        if (!n->trace) goto fail;
    }
    for (int i = 0; i < nouts; i++) if (outs[i]) pct_set_history(outs[i], n, (uint32_t)i);
    free(outs);
    Py_DECREF(n);
    if (target && target->base && pct_rebase_view_history(target) < 0) { Py_DECREF(r); return NULL; }
    return r;
unrecorded: /* nothing differentiable came out: the result is returned without history */
    free(outs);
    Py_DECREF(n);
    for (int k = 0; k < PCT_MAX_PARAMS; k++) Py_XDECREF(params[k]);
    return r;
fail:
    free(outs);
    Py_XDECREF(r);
    Py_DECREF(n);
    for (int k = 0; k < PCT_MAX_PARAMS; k++) Py_XDECREF(params[k]);
    return NULL;
}

/* ---- nodes with a Python backward (indexing, view rebasing, Functions' helpers) ---- */

pct_node *pct_record_callable(const char *name, PyObject *fn, PyObject *saved_tuple, int ninputs,
                              pct_tensor *const *inputs, int noutputs, pct_tensor *const *outputs)
{
    pct_node *n = pct_node_new(&pct_NodeType, PCT_NODE_FORMULA, ninputs, noutputs);
    if (!n) return NULL;
    Py_ssize_t ns = saved_tuple ? PyTuple_GET_SIZE(saved_tuple) : 0;
    if (!(n->name = PyUnicode_InternFromString(name))) goto fail;
    n->fn = Py_NewRef(fn);
    for (int i = 0; i < ninputs; i++) if (pct_node_set_edge(n, i, inputs[i]) < 0) goto fail;
    for (int i = 0; i < noutputs; i++) if (outputs[i]) pct_node_set_output(n, i, outputs[i]);
    if (pct_node_finish_meta(n) < 0) goto fail;
    if (ns) {
        if (!(n->saved = calloc((size_t)ns, sizeof(pct_saved)))) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t i = 0; i < ns; i++) saved_set(&n->saved[i], Py_NewRef(PyTuple_GET_ITEM(saved_tuple, i)), false, (uint32_t)i);
        n->nsaved = n->nparams = (int)ns;
        n->has_saved = 1;
    }
    for (int i = 0; i < noutputs; i++) if (outputs[i]) pct_set_history(outputs[i], n, (uint32_t)i);
    return n;
fail:
    Py_DECREF(n);
    return NULL;
}

static PyObject *geometry(const pct_tensor *t)
{
    PyObject *sz = pct_python_values.size_new(t->ndim, t->sizes), *st = pct_python_values.size_new(t->ndim, t->strides);
    PyObject *r = sz && st ? Py_BuildValue("(OOL)", sz, st, (long long)t->offset) : NULL;
    Py_XDECREF(sz);
    Py_XDECREF(st);
    return r;
}

/* View t becomes as_strided(base) in the graph: one AsStridedBackward0 node. */
static int view_of_base_history(pct_tensor *t, PyObject *fn, PyObject *bgeo, PyObject *vgeo)
{
    PyObject *saved = Py_BuildValue("(OO)", bgeo, vgeo);
    pct_tensor *in[1] = {(pct_tensor *)t->base}, *out[1] = {t};
    pct_node *view = saved ? pct_record_callable("AsStridedBackward0", fn, saved, 1, in, 1, out) : NULL;
    Py_XDECREF(saved);
    if (!view) return -1;
    Py_DECREF(view);
    return 0;
}

int pct_refresh_view_history(pct_tensor *t)
{
    if (!t->grad_fn || !t->base || t->view_version == atomic_load(&t->version->value)) return 0;
    pct_tensor *base = (pct_tensor *)t->base;
    if (!pct_tensor_requires_grad(base)) return 0;
    PyObject *mod = pct_formulas_module();
    PyObject *vb = mod ? PyObject_GetAttrString(mod, "as_strided_view_backward") : NULL;
    PyObject *bgeo = vb ? geometry(base) : NULL, *vgeo = bgeo ? geometry(t) : NULL;
    int rc = vgeo ? view_of_base_history(t, vb, bgeo, vgeo) : -1;
    Py_XDECREF(vb); Py_XDECREF(bgeo); Py_XDECREF(vgeo);
    return rc;
}

/* An in-place op gave view t the history t->grad_fn. torch's CopySlices: the root base
 * gets a node that routes the slice of its gradient through that history, and the view
 * becomes an as_strided view of the rebased root. */
int pct_rebase_view_history(pct_tensor *t)
{
    pct_tensor *base = (pct_tensor *)t->base;
    PyObject *mod = pct_formulas_module();
    if (!mod) return -1;
    PyObject *cs = PyObject_GetAttrString(mod, "copy_slices_backward");
    PyObject *vb = PyObject_GetAttrString(mod, "as_strided_view_backward");
    PyObject *bgeo = geometry(base), *vgeo = geometry(t);
    PyObject *saved = NULL;
    int rc = -1;
    if (!cs || !vb || !bgeo || !vgeo) goto done;
    pct_node *fn = (pct_node *)t->grad_fn;
    /* CopySlices: edge 0 is the base's previous history, the rest are fn's other inputs */
    {
        if (!(saved = Py_BuildValue("(OOO)", bgeo, vgeo, fn))) goto done;
        int ne = fn->nedges > 0 ? fn->nedges : 1;
        pct_node *copy = pct_node_new(&pct_NodeType, PCT_NODE_FORMULA, ne, 1);
        if (!copy) goto done;
        if (!(copy->name = PyUnicode_InternFromString("torch::autograd::CopySlices")) || pct_node_set_edge(copy, 0, base) < 0) {
            Py_DECREF(copy);
            goto done;
        }
        for (int i = 1; i < fn->nedges; i++) {
            copy->edges[i].node = Py_XNewRef(fn->edges[i].node);
            copy->edges[i].input_nr = fn->edges[i].input_nr;
            if (pct_meta_copy(&copy->edges[i].meta, &fn->edges[i].meta) < 0) { Py_DECREF(copy); goto done; }
        }
        pct_node_set_output(copy, 0, base);
        copy->fn = Py_NewRef(cs);
        copy->saved = calloc(3, sizeof(pct_saved));
        if (!copy->saved || pct_node_finish_meta(copy) < 0) { if (!copy->saved) PyErr_NoMemory(); Py_DECREF(copy); goto done; }
        for (int i = 0; i < 3; i++) saved_set(&copy->saved[i], Py_NewRef(PyTuple_GET_ITEM(saved, i)), false, 0);
        copy->nsaved = copy->nparams = 3;
        pct_set_history(base, copy, 0);
        Py_DECREF(copy);
    }
    if (view_of_base_history(t, vb, bgeo, vgeo) < 0) goto done;
    rc = 0;
done:
    Py_XDECREF(cs); Py_XDECREF(vb); Py_XDECREF(bgeo); Py_XDECREF(vgeo); Py_XDECREF(saved);
    return rc;
}

/* Note [Composite ops]: composites (csrc/aten/composite/) call ops through the dispatcher's pointer; it leads here,
 * so their calls take the hooks and record autograd like the binding's */
static PyObject *composite_call(pct_call *c) { return pct_op_call(c); }

void pct_composite_caller_install(void) { pct_composite_caller = composite_call; }

PyObject *pct_op_call1(int op_index, pct_tensor *a)
{
    pct_call c;
    pct_call_init(&c, op_index);
    c.v[0].none = 0;
    c.v[0].t = a;
    return pct_op_call(&c);
}

PyObject *pct_op_call2(int op_index, pct_tensor *a, pct_tensor *b, bool inplace)
{
    pct_call c;
    pct_call_init(&c, op_index);
    c.v[0].none = c.v[1].none = 0;
    c.v[0].t = a;
    c.v[1].t = b;
    if (inplace) {
        c.inplace = true;
        c.out = a;
    }
    return pct_op_call(&c);
}

PyObject *pct_op_cast(pct_tensor *t, int dtype)
{
    pct_call c;
    pct_call_init(&c, PCT_OP_to_dtype);
    c.v[0].none = c.v[1].none = 0;
    c.v[0].t = t;
    c.v[1].dtype = dtype;
    return pct_op_call(&c);
}
