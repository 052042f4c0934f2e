/* creation.c: factory functions (empty, zeros, ones, full, arange, linspace,
 * logspace, eye and the *_like / new_* forms). Their dtype, device and
 * requires_grad keywords are read by name, so one helper serves every schema. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../../python/pyobjects.h"
#include "fill.h"
#include "factory.h"
#include <math.h>


/* Applies the call's requires_grad=True to a new tensor (stolen; NULL passes through). */
static pct_tensor *with_requires_grad(pct_call *c, pct_tensor *t)
{
    if (t && pct_arg(c, "requires_grad")->b) {
        if (!pct_dtype_is_floating(t->dtype)) {
            Py_DECREF(t);
            PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        t->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return t;
}

/* Makes (or resizes out=) a tensor of the given shape for a factory call. */
static pct_tensor *factory_new(pct_call *c, int ndim, const int64_t *sizes, int default_dtype)
{
    const pct_value *dev = pct_arg(c, "device"), *dt = pct_arg(c, "dtype");
    if (!dev->none && dev->dev.type != PCT_CPU) {
        PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
        return NULL;
    }
    int dtype = dt->none ? default_dtype : dt->dtype;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %s", (long long)sizes[i],
                         pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, ndim, sizes));
            return NULL;
        }
    }
    pct_tensor *t;
    if (c->out) {
        t = c->out;
        /* out= decides the dtype; an explicit dtype= must agree with it (torch's rule) */
        if (!dt->none && dt->dtype != t->dtype) {
            PyErr_Format(PyExc_RuntimeError, "dtype %s does not match dtype of out parameter (%s)",
                         pct_dtype_cpp_name[dt->dtype], pct_dtype_cpp_name[t->dtype]);
            return NULL;
        }
        if (pct_tensor_resize_(t, ndim, sizes) < 0) return NULL;
        Py_INCREF(t);
    } else if (!(t = pct_tensor_empty(ndim, sizes, dtype, PCT_CPU, -1))) {
        return NULL;
    }
    return with_requires_grad(c, t);
}

int pct_memory_format_kind(const pct_call *c)
{
    const pct_value *v = pct_arg(c, "memory_format");
    if (v->none || !v->obj || v->obj == Py_None) return PCT_MF_PRESERVE;
    PyObject *name = PyObject_GetAttrString(v->obj, "_name"); /* pyctorch's memory_format singletons */
    if (!name) { PyErr_Clear(); return PCT_MF_UNKNOWN; }
    int kind = PCT_MF_UNKNOWN;
    if (PyUnicode_Check(name)) {
        if (PyUnicode_CompareWithASCIIString(name, "preserve_format") == 0) kind = PCT_MF_PRESERVE;
        else if (PyUnicode_CompareWithASCIIString(name, "contiguous_format") == 0) kind = PCT_MF_CONTIGUOUS;
        else if (PyUnicode_CompareWithASCIIString(name, "channels_last") == 0) kind = PCT_MF_CHANNELS_LAST;
    }
    Py_DECREF(name);
    return kind;
}

int pct_format_strides(int mf, int ndim, const int64_t *sizes, int64_t *strides)
{
    if (mf == PCT_MF_CONTIGUOUS) {
        pct_contiguous_strides(ndim, sizes, strides);
        return 0;
    }
    if (mf == PCT_MF_CHANNELS_LAST) {
        if (ndim != 4) {
            PyErr_SetString(PyExc_RuntimeError, "required rank 4 tensor to use channels_last format");
            return -1;
        }
        int64_t c = sizes[1] > 1 ? sizes[1] : 1, w = sizes[3] > 1 ? sizes[3] : 1, h = sizes[2] > 1 ? sizes[2] : 1;
        strides[1] = 1;
        strides[3] = c;
        strides[2] = c * w;
        strides[0] = c * w * h;
        return 0;
    }
    PyErr_SetString(PyExc_RuntimeError, "unsupported memory format");
    return -1;
}

pct_tensor *pct_like_new(const pct_call *c, const pct_tensor *src)
{
    const pct_value *dev = pct_arg(c, "device"), *dt = pct_arg(c, "dtype");
    if (!dev->none && dev->dev.type != PCT_CPU) {
        PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
        return NULL;
    }
    int dtype = dt->none ? src->dtype : dt->dtype;
    int mf = pct_memory_format_kind(c);
    if (mf == PCT_MF_PRESERVE) return pct_empty_preserving(src, dtype);
    int64_t strides[PCT_MAX_DIMS];
    if (pct_format_strides(mf, src->ndim, src->sizes, strides) < 0) return NULL;
    pct_tensor *t = pct_tensor_empty(src->ndim, src->sizes, dtype, PCT_CPU, -1);
    if (t && pct_tensor_set_shape(t, src->ndim, src->sizes, strides) < 0) Py_CLEAR(t);
    return t;
}

/* Fills a new factory result (value NULL: left uninitialised) and applies requires_grad. */
static PyObject *fill_new(pct_call *c, pct_tensor *t, const pct_scalar *value)
{
    if (!t) return NULL;
    if (value && pct_fill_check_value(value, t->dtype) < 0) { /* checked even when there is nothing to fill */
        Py_DECREF(t);
        return NULL;
    }
    if (value && t->numel) {
        bool requires = pct_tensor_requires_grad(t);
        if (pct_fill_scalar(t, value) < 0) { Py_DECREF(t); return NULL; }
        if (requires) t->flags |= PCT_FLAG_REQUIRES_GRAD;
        if (!c->out) atomic_store(&t->version->value, 0); /* a new tensor starts at version 0, as in torch */
    }
    return (PyObject *)t;
}

static PyObject *filled(pct_call *c, int ndim, const int64_t *sizes, int default_dtype, const pct_scalar *value)
{
    return fill_new(c, factory_new(c, ndim, sizes, default_dtype), value);
}

/* The *_like forms: the requires_grad keyword is applied after the fill, as for the other factories. */
static pct_tensor *like_start(pct_call *c, const pct_tensor *src) { return with_requires_grad(c, pct_like_new(c, src)); }

static const pct_scalar zero = {PCT_SCALAR_INT, 0, 0, 0}, one = {PCT_SCALAR_INT, 1, 1, 0};

PyObject *pct_cpu_empty(pct_call *c) { return filled(c, c->v[0].n, c->v[0].list, pct_default_dtype, NULL); }
PyObject *pct_cpu_zeros(pct_call *c) { return filled(c, c->v[0].n, c->v[0].list, pct_default_dtype, &zero); }
PyObject *pct_cpu_ones(pct_call *c) { return filled(c, c->v[0].n, c->v[0].list, pct_default_dtype, &one); }

/* full() infers its dtype from the fill value: bool, int64 or the default float. */
static int fill_value_dtype(const pct_scalar *s)
{
    return s->kind == PCT_SCALAR_FLOAT ? pct_default_dtype : s->kind == PCT_SCALAR_INT ? PCT_INT64 : PCT_BOOL;
}
PyObject *pct_cpu_full(pct_call *c)
{
    return filled(c, c->v[0].n, c->v[0].list, fill_value_dtype(&c->v[1].s), &c->v[1].s);
}

PyObject *pct_cpu_empty_like(pct_call *c) { return fill_new(c, like_start(c, c->v[0].t), NULL); }
PyObject *pct_cpu_zeros_like(pct_call *c) { return fill_new(c, like_start(c, c->v[0].t), &zero); }
PyObject *pct_cpu_ones_like(pct_call *c) { return fill_new(c, like_start(c, c->v[0].t), &one); }
PyObject *pct_cpu_full_like(pct_call *c) { return fill_new(c, like_start(c, c->v[0].t), &c->v[1].s); }
PyObject *pct_cpu_new_empty(pct_call *c) { return filled(c, c->v[1].n, c->v[1].list, c->v[0].t->dtype, NULL); }
PyObject *pct_cpu_new_zeros(pct_call *c) { return filled(c, c->v[1].n, c->v[1].list, c->v[0].t->dtype, &zero); }
PyObject *pct_cpu_new_ones(pct_call *c) { return filled(c, c->v[1].n, c->v[1].list, c->v[0].t->dtype, &one); }
PyObject *pct_cpu_new_full(pct_call *c) { return filled(c, c->v[1].n, c->v[1].list, c->v[0].t->dtype, &c->v[2].s); }

/* Writes value(i) for i in [0, n) into a contiguous tensor of any dtype. */
#define PCT_WRITE_SEQ(t, n, expr_d)                                                   \
    do {                                                                              \
        char *p_ = pct_tensor_data(t);                                                \
        int item_ = pct_dtype_itemsize[(t)->dtype];                                   \
        for (int64_t i = 0; i < (n); i++) pct_store_double(p_ + i * item_, (t)->dtype, (expr_d)); \
    } while (0)

PyObject *pct_cpu_arange(pct_call *c)
{
    bool has_start = c->op_index == PCT_OP_arange;
    pct_scalar start = {PCT_SCALAR_INT, 0, 0, 0}, end, step = {PCT_SCALAR_INT, 1, 1, 0};
    if (has_start) { start = c->v[0].s; end = c->v[1].s; step = c->v[2].s; }
    else end = c->v[0].s;
    bool any_float = start.kind == PCT_SCALAR_FLOAT || end.kind == PCT_SCALAR_FLOAT || step.kind == PCT_SCALAR_FLOAT;
    if (step.d == 0) { PyErr_SetString(PyExc_RuntimeError, "step must be nonzero"); return NULL; }
    if (!isfinite(start.d) || !isfinite(end.d)) {
        PyErr_Format(PyExc_RuntimeError, "unsupported range: %g -> %g", start.d, end.d);
        return NULL;
    }
    if ((step.d > 0 && start.d > end.d) || (step.d < 0 && start.d < end.d)) {
        PyErr_SetString(PyExc_RuntimeError, "upper bound and larger bound inconsistent with step sign");
        return NULL;
    }
    const pct_value *dt = pct_arg(c, "dtype");
    int dtype = dt->none ? (any_float ? pct_default_dtype : PCT_INT64) : dt->dtype;
    double n_d;
    if (!any_float && !pct_dtype_is_floating(dtype)) n_d = (double)((end.i - start.i) / step.i + ((end.i - start.i) % step.i != 0));
    else n_d = ceil((end.d - start.d) / step.d);
    if (n_d < 0) n_d = 0;
    int64_t n = (int64_t)n_d;
    pct_tensor *t = factory_new(c, 1, &n, dtype);
    if (!t) return NULL;
    dtype = t->dtype; /* an out= tensor's dtype wins */
    if (!any_float && !pct_dtype_is_floating(dtype)) {
        char *p = pct_tensor_data(t);
        for (int64_t i = 0; i < n; i++) pct_store_int64(p + i * pct_dtype_itemsize[dtype], dtype, start.i + i * step.i);
    } else {
        PCT_WRITE_SEQ(t, n, start.d + (double)i * step.d);
    }
    return (PyObject *)t;
}

/* torch fills linspace from both ends toward the middle so both endpoints are exact. */
static void linspace_fill(pct_tensor *t, double start, double end, int64_t steps, bool log_base, double base)
{
    if (steps == 0) return;
    bool single = t->dtype == PCT_FLOAT32 || pct_dtype_is_reduced_float(t->dtype);
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
    float stepf = (float)step, startf = (float)start, endf = (float)end;
    int64_t half = steps == 1 ? 1 : steps / 2;
    char *p = pct_tensor_data(t);
    int item = pct_dtype_itemsize[t->dtype];
    /* linspace as torch's kernel computes it for float32/64 (bit-identical): the step in the output's
     * precision, each value one fused multiply-add from the nearer end; logspace, float16 and bfloat16
     * without the fusion (torch's reduced-precision kernels round differently: up to 1 ulp apart) */
    bool fused = !log_base && (t->dtype == PCT_FLOAT32 || t->dtype == PCT_FLOAT64);
    if (fused && single && steps > 1) stepf = (endf - startf) / (float)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
        double v;
        if (fused && single) {
            v = i < half ? fmaf(stepf, (float)i, startf) : fmaf(-stepf, (float)(steps - i - 1), endf);
        } else if (fused) {
            v = i < half ? fma(step, (double)i, start) : fma(-step, (double)(steps - i - 1), end);
        } else {
            if (single) v = i < half ? startf + stepf * (float)i : endf - stepf * (float)(steps - i - 1);
            else v = i < half ? start + step * (double)i : end - step * (double)(steps - i - 1);
            if (log_base) v = single ? (double)powf((float)base, (float)v) : pow(base, v);
        }
        pct_store_double(p + i * item, t->dtype, v);
    }
}

PyObject *pct_cpu_linspace(pct_call *c)
{
    int64_t steps = c->v[2].i;
    if (steps < 0) { PyErr_SetString(PyExc_RuntimeError, "number of steps must be non-negative"); return NULL; }
    pct_tensor *t = factory_new(c, 1, &steps, pct_default_dtype);
    if (t) linspace_fill(t, c->v[0].s.d, c->v[1].s.d, steps, false, 0);
    return (PyObject *)t;
}

PyObject *pct_cpu_logspace(pct_call *c)
{
    int64_t steps = c->v[2].i;
    if (steps < 0) { PyErr_SetString(PyExc_RuntimeError, "number of steps must be non-negative"); return NULL; }
    pct_tensor *t = factory_new(c, 1, &steps, pct_default_dtype);
    if (t) linspace_fill(t, c->v[0].s.d, c->v[1].s.d, steps, true, c->v[3].d);
    return (PyObject *)t;
}

PyObject *pct_cpu_eye(pct_call *c)
{
    int64_t n = c->v[0].i, m = c->v[1].none ? n : c->v[1].i;
    if (n < 0) { PyErr_Format(PyExc_RuntimeError, "n must be greater or equal to 0, got %lld", (long long)n); return NULL; }
    if (m < 0) { PyErr_Format(PyExc_RuntimeError, "m must be greater or equal to 0, got %lld", (long long)m); return NULL; }
    int64_t sizes[2] = {n, m};
    pct_tensor *t = (pct_tensor *)filled(c, 2, sizes, pct_default_dtype, &zero);
    if (!t) return NULL;
    char *p = pct_tensor_data(t);
    int item = pct_dtype_itemsize[t->dtype];
    for (int64_t i = 0; i < (n < m ? n : m); i++) pct_store_int64(p + (i * t->strides[0] + i * t->strides[1]) * item, t->dtype, 1);
    return (PyObject *)t;
}
