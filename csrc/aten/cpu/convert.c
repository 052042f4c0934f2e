/* convert.c: dtype/device conversion, copies and fills. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../../python/pyobjects.h"
#include "fill.h"

static int check_cpu_device(const pct_value *dev)
{
    if (!dev->none && dev->dev.type != PCT_CPU) {
        PyErr_SetString(PyExc_AssertionError, "Torch not compiled with CUDA enabled");
        return -1;
    }
    return 0;
}

static PyObject *to_impl(pct_tensor *t, int dtype, bool copy)
{
    if (dtype == t->dtype && !copy) { Py_INCREF(t); return (PyObject *)t; }
    return (PyObject *)pct_to_dtype(t, dtype, true);
}

PyObject *pct_cpu_to(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (check_cpu_device(pct_arg(c, "device")) < 0) return NULL;
    const pct_value *d = pct_arg(c, "dtype");
    return to_impl(t, d->none ? t->dtype : d->dtype, pct_arg(c, "copy")->b);
}

PyObject *pct_cpu_to_other(pct_call *c)
{
    return to_impl(c->v[0].t, c->v[1].t->dtype, c->v[3].b);
}

PyObject *pct_cpu_type_as(pct_call *c) { return to_impl(c->v[0].t, c->v[1].t->dtype, false); }

PyObject *pct_cpu_copy_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (pct_copy_(self, c->v[1].t) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

PyObject *pct_cpu_clone(pct_call *c) { return (PyObject *)pct_to_dtype(c->v[0].t, c->v[0].t->dtype, true); }
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
