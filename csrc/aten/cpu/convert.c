/* convert.c: dtype/device conversion, copies and fills. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../../python/pyobjects.h"
#include "fill.h"
#include "factory.h"

static int check_cpu_device(const pct_value *dev)
{
    if (!dev->none && dev->dev.type != PCT_CPU) {
        PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
        return -1;
    }
    return 0;
}

/* A copy of t in dtype laid out by the call's memory_format (preserve_format when there is none). */
static PyObject *copy_in_format(pct_call *c, pct_tensor *t, int dtype)
{
    int mf = pct_memory_format_kind(c);
    if (mf == PCT_MF_PRESERVE) return (PyObject *)pct_copy_preserving(t, dtype);
    int64_t strides[PCT_MAX_DIMS];
    if (pct_format_strides(mf, t->ndim, t->sizes, strides) < 0) return NULL;
    pct_tensor *r = pct_tensor_empty(t->ndim, t->sizes, dtype, PCT_CPU, -1);
    if (!r || pct_tensor_set_shape(r, t->ndim, t->sizes, strides) < 0 || pct_copy_(r, t) < 0) {
        Py_XDECREF(r);
        return NULL;
    }
    atomic_store(&r->version->value, 0);
    return (PyObject *)r;
}

/* to(): t itself when nothing changes (dtype, layout) and no copy is asked for. */
static PyObject *to_impl(pct_call *c, pct_tensor *t, int dtype, bool copy)
{
    int mf = pct_memory_format_kind(c);
    bool layout_ok = mf == PCT_MF_PRESERVE || (mf == PCT_MF_CONTIGUOUS && pct_tensor_is_contiguous(t));
    if (dtype == t->dtype && !copy && layout_ok) { Py_INCREF(t); return (PyObject *)t; }
    return copy_in_format(c, t, dtype);
}

PyObject *pct_cpu_to(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (check_cpu_device(pct_arg(c, "device")) < 0) return NULL;
    const pct_value *d = pct_arg(c, "dtype");
    return to_impl(c, t, d->none ? t->dtype : d->dtype, pct_arg(c, "copy")->b);
}

PyObject *pct_cpu_to_other(pct_call *c)
{
    return to_impl(c, c->v[0].t, c->v[1].t->dtype, c->v[3].b);
}

PyObject *pct_cpu_type_as(pct_call *c) { return to_impl(c, c->v[0].t, c->v[1].t->dtype, false); }

PyObject *pct_cpu_copy_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (pct_copy_(self, c->v[1].t) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

PyObject *pct_cpu_clone(pct_call *c) { return copy_in_format(c, c->v[0].t, c->v[0].t->dtype); }
PyObject *pct_cpu_contiguous(pct_call *c) { return (PyObject *)pct_contiguous(c->v[0].t); }

/* Fills t with a scalar value (converted to t's dtype). */
int pct_fill_scalar(pct_tensor *t, const pct_scalar *s)
{
    pct_tensor *v = pct_tensor_scalar(t->dtype, s->d, s->i, s->kind == PCT_SCALAR_FLOAT);
    if (!v) return -1;
    int r = pct_copy_(t, v);
    Py_DECREF(v);
    return r;
}

PyObject *pct_cpu_fill_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (pct_fill_scalar(self, &c->v[1].s) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

PyObject *pct_cpu_zero_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    pct_scalar zero = {PCT_SCALAR_INT, 0, 0};
    if (pct_fill_scalar(self, &zero) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}
