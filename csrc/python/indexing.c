/* indexing.c: translating Python subscripts into views and advanced-index calls. */
#include "indexing.h"
#include "../autograd/autograd.h"
#include "../autograd/profiler.h"
#include "../aten/error.h"
#include "../aten/iter.h"

typedef struct view_spec {
    int ndim;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    int64_t offset;
    /* advanced indices by result dim; owned references */
    PyObject *adv[PCT_MAX_DIMS];
    int nadv;
} view_spec;

/* A 0-d integer tensor (not bool/uint8) indexes like a Python int (a select), as in torch. */
static bool is_int_tensor_scalar(PyObject *o)
{
    if (!PCT_TENSOR_CHECK(o)) return false;
    pct_tensor *t = (pct_tensor *)o;
    return t->ndim == 0 && pct_dtype_is_integral(t->dtype, false) && t->dtype != PCT_UINT8 && t->device_type == PCT_CPU;
}

static bool is_advanced(PyObject *o)
{
    if (is_int_tensor_scalar(o)) return false;
    return PCT_TENSOR_CHECK(o) || PyList_Check(o) || PyBool_Check(o) ||
           (!PyLong_Check(o) && !PySlice_Check(o) && o != Py_None && o != Py_Ellipsis && !PyTuple_Check(o) &&
            !PyIndex_Check(o) && PySequence_Check(o));
}

/* Number of source dims an index item consumes. */
static int consumed_dims(PyObject *o)
{
    if (o == Py_None || o == Py_Ellipsis || PyBool_Check(o)) return 0;
    if (PCT_TENSOR_CHECK(o)) {
        pct_tensor *t = (pct_tensor *)o;
        return (t->dtype == PCT_BOOL || t->dtype == PCT_UINT8) ? (t->ndim ? t->ndim : 0) : 1;
    }
    return 1;
}

static void spec_release(view_spec *s)
{
    for (int i = 0; i < PCT_MAX_DIMS; i++) Py_CLEAR(s->adv[i]);
}

/* Converts an advanced index item into an index tensor (int64 or bool). */
static pct_tensor *as_index_tensor(PyObject *o)
{
    if (PCT_TENSOR_CHECK(o)) {
        pct_tensor *t = (pct_tensor *)o;
        if (pct_dtype_is_floating(t->dtype)) {
            PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
            return NULL;
        }
        Py_INCREF(t);
        return t;
    }
    if (PyBool_Check(o)) return pct_tensor_scalar(PCT_BOOL, 0, o == Py_True, false);
    PyObject *t = pct_tensor_from_data(o, -1, true);
    if (!t) return NULL;
    pct_tensor *x = (pct_tensor *)t;
    if (pct_dtype_is_floating(x->dtype) && x->numel == 0) {
        /* an empty list indexes as an empty int64 index, as in torch */
        pct_tensor *e = pct_tensor_empty(x->ndim, x->sizes, PCT_INT64, PCT_CPU, -1);
        Py_DECREF(t);
        return e;
    }
    if (pct_dtype_is_floating(x->dtype)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_IndexError, "tensors used as indices must be long, int, byte or bool tensors");
        return NULL;
    }
    return x;
}

static int build_spec_items(pct_tensor *t, PyObject *const *items, Py_ssize_t n, view_spec *s)
{
    int consumed = 0, ellipses = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        consumed += consumed_dims(items[i]);
        if (items[i] == Py_Ellipsis) ellipses++;
    }
    if (ellipses > 1) { PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')"); return -1; }
    if (consumed > t->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", t->ndim);
        return -1;
    }
    s->ndim = 0;
    s->offset = t->offset;
    s->nadv = 0;
    int src = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        bool adds_dim = o == Py_None || PyBool_Check(o) ||
                        (PCT_TENSOR_CHECK(o) && ((pct_tensor *)o)->ndim == 0 &&
                         (((pct_tensor *)o)->dtype == PCT_BOOL || ((pct_tensor *)o)->dtype == PCT_UINT8));
        if (adds_dim && s->ndim + (t->ndim - src) >= PCT_MAX_DIMS) {
            PyErr_Format(PyExc_IndexError, "too many dimensions: pyctorch supports at most %d", PCT_MAX_DIMS);
            return -1;
        }
        if (o == Py_None) {
            /* strided as torch's unsqueeze of the dim that follows, before later slicing */
            s->sizes[s->ndim] = 1;
            s->strides[s->ndim] = src < t->ndim ? t->sizes[src] * t->strides[src] : 1;
            s->ndim++;
        } else if (o == Py_Ellipsis) {
            int k = t->ndim - consumed;
            for (int j = 0; j < k; j++, src++, s->ndim++) { s->sizes[s->ndim] = t->sizes[src]; s->strides[s->ndim] = t->strides[src]; }
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) return -1;
            if (step <= 0) { PyErr_SetString(PyExc_ValueError, "step must be greater than zero"); return -1; }
            Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)t->sizes[src], &start, &stop, step);
            s->offset += (int64_t)start * t->strides[src];
            s->sizes[s->ndim] = len;
            s->strides[s->ndim] = t->strides[src] * step;
            s->ndim++;
            src++;
        } else if (is_int_tensor_scalar(o) || (!is_advanced(o) && PyIndex_Check(o))) {
            Py_ssize_t idx;
            if (is_int_tensor_scalar(o)) {
                idx = (Py_ssize_t)pct_load_as_int64(pct_tensor_data((pct_tensor *)o), ((pct_tensor *)o)->dtype);
            } else {
                idx = PyNumber_AsSsize_t(o, PyExc_IndexError);
                if (idx == -1 && PyErr_Occurred()) return -1;
            }
            int64_t size = t->sizes[src];
            if (idx < -size || idx >= size) {
                PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension %d with size %lld", idx, src, (long long)size);
                return -1;
            }
            if (idx < 0) idx += size;
            s->offset += (int64_t)idx * t->strides[src];
            src++;
        } else if (is_advanced(o)) {
            pct_tensor *it = as_index_tensor(o);
            if (!it) return -1;
            int k = consumed_dims((PyObject *)it);
            bool scalar_mask = PyBool_Check(o) || (it->ndim == 0 && (it->dtype == PCT_BOOL || it->dtype == PCT_UINT8));
            if (scalar_mask) {
                /* x[True] adds a dim of size 1 (0 for False) */
                s->sizes[s->ndim] = 1;
                s->strides[s->ndim] = 1;
            }
            s->adv[s->ndim] = (PyObject *)it;
            s->nadv++;
            if (scalar_mask) {
                s->ndim++;
            } else {
                for (int j = 0; j < (k ? k : 1) && src < t->ndim; j++, src++, s->ndim++) {
                    s->sizes[s->ndim] = t->sizes[src];
                    s->strides[s->ndim] = t->strides[src];
                }
            }
        } else {
            PyErr_Format(PyExc_IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                                           "are valid indices (got %s)", Py_TYPE(o)->tp_name);
            return -1;
        }
    }
    for (; src < t->ndim; src++, s->ndim++) { s->sizes[s->ndim] = t->sizes[src]; s->strides[s->ndim] = t->strides[src]; }
    return 0;
}

/* torch (and old NumPy) read a short non-tuple sequence as a tuple of indices when it holds a
 * tensor, a sequence, a slice, Ellipsis or None: x[[[0, 1], [1, 2]]] is x[[0, 1], [1, 2]]. */
static bool sequence_as_tuple(PyObject *key)
{
    if (PCT_TENSOR_CHECK(key) || PyUnicode_Check(key) || !PySequence_Check(key)) return false;
    Py_ssize_t n = PySequence_Size(key);
    if (n < 0) { PyErr_Clear(); return false; }
    if (n >= 32) return false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(key, i);
        if (!o) { PyErr_Clear(); return false; }
        bool yes = PCT_TENSOR_CHECK(o) || PySequence_Check(o) || PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
        Py_DECREF(o);
        if (yes) return true;
    }
    return false;
}

static int build_spec(pct_tensor *t, PyObject *key, view_spec *s)
{
    PyObject *tuple = NULL;
    if (!PyTuple_Check(key) && sequence_as_tuple(key)) {
        if (!(tuple = PySequence_Tuple(key))) return -1;
        key = tuple;
    }
    /* torch's messages for a lone integer or slice on a 0-d tensor (inside a tuple: "too many indices") */
    if (t->ndim == 0 && !tuple && !PyTuple_Check(key)) {
        if (PySlice_Check(key)) {
            PyErr_SetString(PyExc_IndexError, "slice() cannot be applied to a 0-dim tensor.");
            return -1;
        }
        if (!PyBool_Check(key) && !PCT_TENSOR_CHECK(key) && PyIndex_Check(key)) {
            PyObject *iv = PyNumber_Index(key);
            int overflow = 0;
            long long v = iv ? PyLong_AsLongLongAndOverflow(iv, &overflow) : -1;
            Py_XDECREF(iv);
            if (v == -1 && PyErr_Occurred()) return -1;
            if (!overflow) { /* torch: 0 asks for item(); any other int is out of bounds of a size-0 dim */
                if (v == 0)
                    PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                                      "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
                else
                    PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension 0 with size 0", v);
                return -1;
            }
        }
    }
    int rc;
    if (PyTuple_Check(key)) rc = build_spec_items(t, &PyTuple_GET_ITEM(key, 0), PyTuple_GET_SIZE(key), s);
    else rc = build_spec_items(t, &key, 1, s);
    Py_XDECREF(tuple);
    return rc;
}

static pct_tensor *make_view(pct_tensor *t, view_spec *s)
{
    return pct_tensor_view_of(t, s->ndim, s->sizes, s->strides, s->offset);
}

/* Autograd for subscripts: one node per getitem/setitem whose backward (in
 * pyctorch/autograd/_formulas.py) re-applies the same key to the gradient. */
static PyObject *formula_helper(const char *name)
{
    PyObject *mod = pct_formulas_module();
    return mod ? PyObject_GetAttrString(mod, name) : NULL;
}

static PyObject *record_getitem(pct_tensor *t, PyObject *key, PyObject *r)
{
    if (!r || !PCT_TENSOR_CHECK(r) || !pct_dtype_is_differentiable(((pct_tensor *)r)->dtype)) return r;
    PyObject *fn = formula_helper("getitem_backward");
    PyObject *shape = fn ? pct_size_new(t->ndim, t->sizes) : NULL;
    PyObject *saved = shape ? Py_BuildValue("(OO)", shape, key) : NULL;
    pct_tensor *out = (pct_tensor *)r;
    pct_node *n = saved ? pct_record_callable(out->base ? "SliceBackward0" : "IndexBackward0", fn, saved, 1, &t, 1, &out) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(shape);
    Py_XDECREF(saved);
    if (!n) { Py_DECREF(r); return NULL; }
    Py_DECREF(n);
    return r;
}

static PyObject *getitem_impl(PyObject *self, PyObject *key);
static PyObject *getitem_recorded(PyObject *self, PyObject *key);
static int setitem_recorded(PyObject *self, PyObject *key, PyObject *value);

/* Note [Forward AD] (csrc/autograd/forward_ad.c): subscripts are not table ops, so they call the hook themselves */
static PyObject *forward_ad_begin(int which, PyObject *self, PyObject *key, PyObject *value)
{
    PyObject *args = value ? PyTuple_Pack(3, self, key, value) : PyTuple_Pack(2, self, key);
    PyObject *state = args ? pct_forward_ad_begin(which, which == -2, args) : NULL;
    Py_XDECREF(args);
    return state;
}

PyObject *pct_tensor_getitem(PyObject *self, PyObject *key)
{
    if (!pct_forward_ad_on()) return getitem_recorded(self, key);
    PyObject *state = forward_ad_begin(-1, self, key, NULL);
    return state ? pct_forward_ad_finish(state, getitem_recorded(self, key)) : NULL;
}

int pct_tensor_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    if (!value || !pct_forward_ad_on()) return setitem_recorded(self, key, value);
    PyObject *state = forward_ad_begin(-2, self, key, value);
    if (!state) return -1;
    if (setitem_recorded(self, key, value) < 0) { Py_DECREF(state); return -1; }
    PyObject *r = pct_forward_ad_finish(state, Py_NewRef(Py_None));
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *getitem_recorded(PyObject *self, PyObject *key)
{
    pct_tensor *t = (pct_tensor *)self;
    if (!pct_any_requires_grad(1, &t)) return getitem_impl(self, key);
    pct_grad_enabled = 0;
    PyObject *r = getitem_impl(self, key);
    pct_grad_enabled = 1;
    return record_getitem(t, key, r);
}

static PyObject *getitem_impl(PyObject *self, PyObject *key)
{
    pct_tensor *t = (pct_tensor *)self;
    view_spec s = {0};
    /* fast path: a single int on a tensor with dims */
    if (PyLong_CheckExact(key) && t->ndim > 0) {
        Py_ssize_t idx = PyLong_AsSsize_t(key);
        if (idx == -1 && PyErr_Occurred()) return NULL;
        int64_t size = t->sizes[0];
        if (idx < -size || idx >= size) {
            PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension 0 with size %lld", idx, (long long)size);
            return NULL;
        }
        if (idx < 0) idx += size;
        return (PyObject *)pct_tensor_view_of(t, t->ndim - 1, t->sizes + 1, t->strides + 1, t->offset + idx * t->strides[0]);
    }
    if (build_spec(t, key, &s) < 0) { spec_release(&s); return NULL; }
    pct_tensor *v = make_view(t, &s);
    if (!v || s.nadv == 0) { spec_release(&s); return (PyObject *)v; }
    pct_tensor *idx[PCT_MAX_DIMS];
    for (int i = 0; i < s.ndim; i++) idx[i] = (pct_tensor *)s.adv[i];
    PyObject *r = pct_index_get(v, s.ndim, idx);
    Py_DECREF(v);
    spec_release(&s);
    return r;
}

static int assign(pct_tensor *t, PyObject *key, PyObject *value, bool accumulate);

static int setitem_recorded(PyObject *self, PyObject *key, PyObject *value)
{
    pct_tensor *t = (pct_tensor *)self;
    if (!value) { PyErr_SetString(PyExc_TypeError, "Tensor does not support item deletion"); return -1; }
    pct_tensor *ins[2] = {t, PCT_TENSOR_CHECK(value) ? (pct_tensor *)value : NULL};
    if (!pct_any_requires_grad(2, ins)) return assign(t, key, value, false);
    if (pct_check_inplace(t) < 0) return -1;
    pct_grad_enabled = 0;
    int rc = assign(t, key, value, false);
    pct_grad_enabled = 1;
    if (rc < 0) return -1;
    /* the write leaves t's history alone, so the node's edges still lead to the old one */
    PyObject *fn = formula_helper("setitem_backward");
    PyObject *shape = ins[1] ? pct_size_new(ins[1]->ndim, ins[1]->sizes) : Py_NewRef(Py_None);
    PyObject *saved = fn && shape ? Py_BuildValue("(OO)", key, shape) : NULL;
    pct_node *n = saved ? pct_record_callable("IndexPutBackward0", fn, saved, 2, ins, 1, &t) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(shape);
    Py_XDECREF(saved);
    if (!n) return -1;
    Py_DECREF(n);
    return t->base ? pct_rebase_view_history(t) : 0;
}

/* _C._index_accumulate(t, key, value): t[key] += value with repeated indices summed
 * (index_put with accumulate=True); the backward of getitem. */
PyObject *pct_py_index_accumulate(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *t, *key, *value;
    if (!PyArg_ParseTuple(args, "O!OO", &pct_TensorType, &t, &key, &value)) return NULL;
    /* reported to the op trace hook like indexing (a backward recorded ahead of time replays it: Note [AOT
     * backward] in pyctorch/_inductor/aot.py) */
    const int report = pct_trace_begin();
    PyObject *r = assign((pct_tensor *)t, key, value, true) < 0 ? NULL : Py_NewRef(Py_None);
    return report ? pct_trace_end("_index_accumulate", PyTuple_Pack(3, t, key, value), r) : r;
}

/* A tuple key holding True/False: torch indexes through index_put_, which wants the source in t's dtype. */
static int check_bool_key_dtype(const pct_tensor *t, PyObject *key, const pct_tensor *src)
{
    if (!PyTuple_Check(key) || src->dtype == t->dtype) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        if (!PyBool_Check(PyTuple_GET_ITEM(key, i))) continue;
        PyErr_Format(PyExc_RuntimeError, "Index put requires the source and destination dtypes match, got %s for the "
                     "destination and %s for the source.", pct_dtype_cpp_name[t->dtype], pct_dtype_cpp_name[src->dtype]);
        return -1;
    }
    return 0;
}

/* torch expands the value to the indexed view before copying, also when the view is empty. */
static int check_expands_to(const pct_tensor *src, const pct_tensor *dst)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (src->ndim > dst->ndim) {
        PyErr_Format(PyExc_RuntimeError, "expand(torch.%sTensor{%s}, size=%s): the number of sizes provided (%d) must be "
                     "greater or equal to the number of dimensions in the tensor (%d)", pct_dtype_cpp_name[src->dtype],
                     pct_shape_str(b1, sizeof b1, src->ndim, src->sizes), pct_shape_str(b2, sizeof b2, dst->ndim, dst->sizes),
                     dst->ndim, src->ndim);
        return -1;
    }
    for (int i = 0; i < src->ndim; i++) {
        int d = dst->ndim - src->ndim + i;
        if (src->sizes[i] == 1 || src->sizes[i] == dst->sizes[d]) continue;
        PyErr_Format(PyExc_RuntimeError, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                     "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)dst->sizes[d],
                     (long long)src->sizes[i], d, pct_shape_str(b1, sizeof b1, dst->ndim, dst->sizes),
                     pct_shape_str(b2, sizeof b2, src->ndim, src->sizes));
        return -1;
    }
    return 0;
}

static int assign(pct_tensor *t, PyObject *key, PyObject *value, bool accumulate)
{
    if (key == Py_False) return 0; /* x[False] = v selects nothing: torch does nothing, not even a version bump */
    if (pct_check_writable(t) < 0) return -1;
    pct_tensor *src = NULL;
    if (PCT_TENSOR_CHECK(value)) {
        src = (pct_tensor *)value;
        if (!accumulate && check_bool_key_dtype(t, key, src) < 0) return -1;
        Py_INCREF(src);
    } else {
        pct_scalar sc;
        if (pct_scalar_from_object(value, &sc) == 0) {
            if (pct_scalar_is_uint64(&sc)) { /* torch reads the value as a C long long */
                PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
                return -1;
            }
            /* torch converts a Python number to t's dtype with its range check (float16/bfloat16: through float) */
            if (!accumulate && !pct_dtype_is_reduced_float(t->dtype) && pct_scalar_check_fits(&sc, t->dtype) < 0) return -1;
            src = pct_scalar_tensor_of(t->dtype, &sc);
        } else {
            PyObject *made = pct_tensor_from_data(value, t->dtype, true);
            if (!made) return -1;
            src = (pct_tensor *)made;
        }
        if (!src) return -1;
    }
    view_spec s = {0};
    int rc = -1;
    if (build_spec(t, key, &s) < 0) goto done;
    pct_tensor *v = make_view(t, &s);
    if (!v) goto done;
    if (s.nadv == 0) {
        /* leading size-1 dims of the value are dropped, as torch does: x[0] = ones(1, n) */
        int lead = 0;
        while (src->ndim - lead > v->ndim && src->sizes[lead] == 1) lead++;
        pct_tensor *sv = lead ? pct_tensor_view_of(src, src->ndim - lead, src->sizes + lead, src->strides + lead, src->offset) : src;
        if (accumulate) {
            PyObject *r = sv ? pct_op_call2(PCT_OP_add, v, sv, true) : NULL;
            rc = r ? 0 : -1;
            Py_XDECREF(r);
        } else {
            /* torch's copy_ refuses written/source overlap here, Python scalars included */
            rc = sv && check_expands_to(sv, v) == 0 && pct_check_written_overlap(v, 1, &sv) == 0 ? pct_copy_(v, sv) : -1;
        }
        if (sv && sv != src) Py_DECREF(sv);
        if (rc == 0 && v->numel == 0) pct_tensor_bump_version(t);
    } else if (pct_dtype_is_barebones(v->dtype)) {
        /* torch writes through index_put_ (or masked_fill_ for one mask key and a 0-d value): neither takes
         * uint16/32/64 (Note [Barebones unsigned dtypes] in csrc/aten/dispatch.c) */
        bool mask = PCT_TENSOR_CHECK(key) && (((pct_tensor *)key)->dtype == PCT_BOOL || ((pct_tensor *)key)->dtype == PCT_UINT8);
        PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", mask && src->ndim == 0 ? "masked_fill" : "index_put",
                     pct_dtype_cpp_name[v->dtype]);
    } else {
        pct_tensor *idx[PCT_MAX_DIMS];
        for (int i = 0; i < s.ndim; i++) idx[i] = (pct_tensor *)s.adv[i];
        rc = pct_index_put_(v, s.ndim, idx, src, accumulate);
        if (rc == 0) pct_tensor_bump_version(t);
    }
    Py_DECREF(v);
done:
    spec_release(&s);
    Py_DECREF(src);
    return rc;
}
