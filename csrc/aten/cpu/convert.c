/* convert.c: dtype/device conversion, copies and fills. */
#include "../op.h"  /* first: it includes Python.h, which must precede system headers */
#include "../error.h"
#include "../iter.h"
#include "../../python/pyobjects.h"
#include "fill.h"
#include "factory.h"
#include <math.h>

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
    /* torch's to() aliases when memory_format is preserve or the one the tensor suggests (channels_last for a 4-d
     * tensor laid out so, contiguous for any other layout, a transposed one included) */
    int suggested = !pct_tensor_is_contiguous(t) && pct_tensor_is_channels_last(t) ? PCT_MF_CHANNELS_LAST : PCT_MF_CONTIGUOUS;
    bool layout_ok = mf == PCT_MF_PRESERVE || mf == suggested;
    if (dtype == t->dtype && !copy && layout_ok) { Py_INCREF(t); return (PyObject *)t; }
    return copy_in_format(c, t, dtype);
}

PyObject *pct_cpu_to(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    if (pct_check_cpu_device(pct_arg(c, "device")) < 0) return NULL;
    const pct_value *d = pct_arg(c, "dtype");
    return to_impl(c, t, d->none ? t->dtype : d->dtype, pct_arg(c, "copy")->b);
}

PyObject *pct_cpu_to_other(pct_call *c)
{
    /* a Python number is taken as a 0-d tensor of its own type, as torch's to(other) does: t.to(1.5) is float64 */
    const pct_tensor *o = c->v[1].t;
    int dtype = o->dtype;
    /* torch makes the number a tensor through an int64: a Python int in [2^63, 2^64) overflows there */
    if (o->flags & PCT_FLAG_UINT64_NUMBER) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        return NULL;
    }
    if ((o->flags & PCT_FLAG_WRAPPED_NUMBER) && pct_dtype_is_floating(dtype)) dtype = PCT_FLOAT64;
    return to_impl(c, c->v[0].t, dtype, c->v[3].b);
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
PyObject *pct_cpu_contiguous(pct_call *c)
{
    pct_tensor *t = c->v[0].t;
    const pct_value *v = pct_arg(c, "memory_format");
    int mf = v->none ? PCT_MF_CONTIGUOUS : pct_memory_format_kind(c);
    if (mf == PCT_MF_CONTIGUOUS) return (PyObject *)pct_contiguous(t);
    if (mf == PCT_MF_PRESERVE) { /* accepted only where there is nothing to do */
        if (pct_tensor_is_contiguous(t)) { Py_INCREF(t); return (PyObject *)t; }
        PyErr_SetString(PyExc_RuntimeError, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    if (mf == PCT_MF_CHANNELS_LAST && pct_tensor_is_channels_last(t)) { Py_INCREF(t); return (PyObject *)t; }
    return copy_in_format(c, t, t->dtype); /* channels_last of another layout, or torch's error */
}

int pct_scalar_check_fits(const pct_scalar *s, int dtype)
{
    static const char *const cpp[PCT_NUM_DTYPES] = {
        [PCT_UINT8] = "uint8_t", [PCT_INT8] = "int8_t", [PCT_INT16] = "int16_t", [PCT_INT32] = "int",
        [PCT_INT64] = "int64_t", [PCT_FLOAT16] = "c10::Half", [PCT_BFLOAT16] = "c10::BFloat16", [PCT_FLOAT32] = "float",
        [PCT_UINT16] = "uint16_t", [PCT_UINT32] = "uint32_t", [PCT_UINT64] = "uint64_t"};
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
    case PCT_UINT16: hi = 65535.0; break;
    case PCT_UINT32: hi = 4294967295.0; break;
    case PCT_UINT64: hi = 18446744073709551615.0; break;
    default: return 0; /* bool and double take any value */
    }
    if (s->kind == PCT_SCALAR_BOOL) return 0;
    bool bad;
    if (pct_dtype_is_floating(dtype)) {
        /* an int fits where its value is in range (only float16's is narrower than int64's; rounding is fine);
         * a double may be inf or nan, not beyond the finite range */
        if (s->kind == PCT_SCALAR_INT) bad = s->d < -hi || s->d > hi; /* d: the value, also of ints in [2^63, 2^64) */
        else bad = isfinite(s->d) && (s->d < -hi || s->d > hi);
    } else if (s->kind == PCT_SCALAR_INT) {
        int64_t v = s->i;
        if (v < 0 && s->d > 0) bad = dtype != PCT_UINT64; /* a Python int in [2^63, 2^64): i holds it wrapped, d its value */
        else if (dtype == PCT_INT64 || dtype == PCT_UINT64) bad = false;
        else if (dtype == PCT_UINT8 || pct_dtype_is_barebones(dtype))
            bad = (double)v > hi || (double)v < -hi; /* negative ints wrap (two's complement), as in torch */
        else bad = (double)v < lo || (double)v > hi;
    } else {
        bad = !(s->d >= lo && s->d <= hi); /* nan and inf too */
        if (dtype == PCT_INT64 && s->d >= 9223372036854775808.0) bad = true;
    }
    if (!bad) return 0;
    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cpp[dtype]);
    return -1;
}

int pct_scalar_check_opmath(const pct_scalar *s, int dtype)
{
    if (dtype == PCT_FLOAT64) return 0;
    return pct_scalar_check_fits(s, pct_dtype_is_floating(dtype) ? PCT_FLOAT32 : dtype);
}

void pct_tensor_item_scalar(const pct_tensor *t, pct_scalar *s)
{
    const char *p = pct_tensor_data(t);
    s->from_tensor = !(t->flags & PCT_FLAG_WRAPPED_NUMBER);
    if (pct_dtype_is_floating(t->dtype)) {
        s->kind = PCT_SCALAR_FLOAT;
        s->d = pct_load_as_double(p, t->dtype);
        s->i = 0;
    } else {
        s->kind = t->dtype == PCT_BOOL ? PCT_SCALAR_BOOL : PCT_SCALAR_INT;
        s->i = pct_load_as_int64(p, t->dtype);
        /* a uint64 beyond int64 (a tensor's or a wrapped number's) is a uint64 Scalar (Note [uint64 scalars]) */
        s->d = (t->flags & PCT_FLAG_UINT64_NUMBER) || t->dtype == PCT_UINT64 ? (double)(uint64_t)s->i : (double)s->i;
    }
}

pct_tensor *pct_scalar_tensor_of(int dtype, const pct_scalar *s)
{
    /* an int in [2^63, 2^64) (i wrapped, d its value) becomes its value in a float dtype */
    bool by_value = s->kind == PCT_SCALAR_FLOAT || (pct_scalar_is_uint64(s) && pct_dtype_is_floating(dtype));
    return pct_tensor_scalar(dtype, s->d, s->i, by_value);
}

/* Fills t with a scalar value (converted to t's dtype). */
int pct_fill_scalar(pct_tensor *t, const pct_scalar *s)
{
    pct_tensor *v = pct_scalar_tensor_of(t->dtype, s);
    if (!v) return -1;
    int r = pct_copy_(t, v);
    Py_DECREF(v);
    return r;
}

/* torch range-checks a Scalar fill value, float16 and bfloat16 too, except in its one-element fast path, which
 * converts those through float (out of range: inf) */
int pct_fill_check_value(const pct_scalar *s, const pct_tensor *t)
{
    return pct_dtype_is_reduced_float(t->dtype) && t->numel == 1 ? 0 : pct_scalar_check_fits(s, t->dtype);
}

PyObject *pct_cpu_fill_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    if (!c->v[1].s.from_tensor && pct_fill_check_value(&c->v[1].s, self) < 0) return NULL; /* fill_(Tensor): none */
    if (pct_fill_scalar(self, &c->v[1].s) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

/* torch.fill(input, value): fill_ into a new tensor shaped as input, through the in-place kernel of the same
 * value type (its checks included) */
static PyObject *fill_new(pct_call *c, pct_kernel_fn fill_in_place)
{
    pct_tensor *r = pct_tensor_empty_like(c->v[0].t, -1);
    if (!r) return NULL;
    pct_call in_place = *c;
    in_place.v[0].t = r;
    PyObject *done = fill_in_place(&in_place);
    Py_XDECREF(done);
    if (!done) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

PyObject *pct_cpu_fill(pct_call *c) { return fill_new(c, pct_cpu_fill_); }
PyObject *pct_cpu_fill_tensor(pct_call *c) { return fill_new(c, pct_cpu_fill_tensor_); }

PyObject *pct_cpu_zero_(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    pct_scalar zero = {PCT_SCALAR_INT, 0, 0, 0};
    if (pct_fill_scalar(self, &zero) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}
