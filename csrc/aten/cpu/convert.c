/* convert.c: dtype/device conversion, copies and fills. */
#include "../op.h"  /* first: it includes Python.h, which must precede system headers */
#include "../error.h"
#include "../iter.h"
#include "../../python/pyobjects.h"
#include "fill.h"
#include "factory.h"
#include <math.h>

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

/* torch's copy_ checks what its TensorIterator checks even when nothing is copied: the written tensor's overlap
 * with itself and src, then src broadcasting to it (self taking part in the broadcast, as an output does). */
static int copy_checks(pct_tensor *self, pct_tensor *src)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF];
    if (pct_check_written_overlap(self, 1, &src) < 0) return -1;
    int nb;
    int64_t shape[PCT_MAX_DIMS];
    if (pct_broadcast_shapes(self->ndim, self->sizes, src->ndim, src->sizes, &nb, shape) < 0) return -1;
    if (nb != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nb) != 0) {
        PyErr_Format(PyExc_RuntimeError, "output with shape %s doesn't match the broadcast shape %s",
                     pct_shape_str(b1, sizeof b1, self->ndim, self->sizes), pct_shape_str(b2, sizeof b2, nb, shape));
        return -1;
    }
    return 0;
}

PyObject *pct_cpu_copy_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (self != c->v[1].t && copy_checks(self, c->v[1].t) < 0) return NULL;
    if (pct_copy_(self, c->v[1].t) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

PyObject *pct_cpu_clone(pct_call *c) { return copy_in_format(c, c->v[0].t, c->v[0].t->dtype); }
PyObject *pct_cpu_contiguous(pct_call *c) { return (PyObject *)pct_contiguous(c->v[0].t); }

int pct_scalar_check_fits(const pct_scalar *s, int dtype)
{
    static const char *const cpp[PCT_NUM_DTYPES] = {
        [PCT_UINT8] = "uint8_t", [PCT_INT8] = "int8_t", [PCT_INT16] = "int16_t", [PCT_INT32] = "int",
        [PCT_INT64] = "int64_t", [PCT_FLOAT16] = "c10::Half", [PCT_BFLOAT16] = "c10::BFloat16", [PCT_FLOAT32] = "float"};
    double lo = 0, hi = 0;
    switch (dtype) {
    case PCT_UINT8: hi = 255; break;
    case PCT_INT8: lo = -128; hi = 127; break;
    case PCT_INT16: lo = -32768; hi = 32767; break;
    case PCT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case PCT_INT64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    case PCT_FLOAT16: hi = 65504.0; break;
    case PCT_BFLOAT16: hi = 3.3895313892515355e+38; break;
    case PCT_FLOAT32: hi = 3.4028234663852886e+38; break;
    default: return 0; /* bool and double take any value */
    }
    if (s->kind == PCT_SCALAR_BOOL) return 0;
    bool bad;
    if (pct_dtype_is_floating(dtype)) {
        /* an int always fits (rounding is fine); a double may be inf or nan, not beyond the finite range */
        bad = s->kind == PCT_SCALAR_FLOAT && isfinite(s->d) && (s->d < -hi || s->d > hi);
    } else if (s->kind == PCT_SCALAR_INT) {
        int64_t v = s->i;
        if (dtype == PCT_INT64) bad = false;
        else if (dtype == PCT_UINT8) bad = v > 255 || v < -255; /* negative ints wrap (two's complement), as in torch */
        else bad = (double)v < lo || (double)v > hi;
    } else {
        bad = !(s->d >= lo && s->d <= hi); /* nan and inf too */
        if (dtype == PCT_INT64 && s->d >= 9223372036854775808.0) bad = true;
    }
    if (!bad) return 0;
    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cpp[dtype]);
    return -1;
}

/* Fills t with a scalar value (converted to t's dtype). */
int pct_fill_scalar(pct_tensor *t, const pct_scalar *s)
{
    pct_tensor *v = pct_tensor_scalar(t->dtype, s->d, s->i, s->kind == PCT_SCALAR_FLOAT);
    if (!v) return -1;
    int r = pct_copy_(t, v);
    Py_DECREF(v);
    return r;
}

/* torch range-checks a Scalar fill value; float16/bfloat16 fill through float (out of range: inf) */
int pct_fill_check_value(const pct_scalar *s, int dtype)
{
    return dtype == PCT_FLOAT16 || dtype == PCT_BFLOAT16 ? 0 : pct_scalar_check_fits(s, dtype);
}

PyObject *pct_cpu_fill_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (!c->v[1].s.from_tensor && pct_fill_check_value(&c->v[1].s, self->dtype) < 0) return NULL; /* fill_(Tensor): none */
    if (pct_fill_scalar(self, &c->v[1].s) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

PyObject *pct_cpu_zero_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    pct_scalar zero = {PCT_SCALAR_INT, 0, 0, 0};
    if (pct_fill_scalar(self, &zero) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}
