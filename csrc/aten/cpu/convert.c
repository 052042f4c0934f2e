/* convert.c: dtype/device conversion, copies and fills. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../backend.h"
#include "fill.h"
#include "factory.h"
#include <math.h>
#include <stdatomic.h>

/* Note [Device-neutral copies]: to(), copy_(), clone() and contiguous() only allocate and call pct_copy_, which moves
 * the data through the backends (Note [Backends]); so these kernels serve the CUDA slot too, and to(device) between
 * the CPU and a GPU is one of them. */

/* torch's copy_ warns, once per process, when complex values go into a real dtype (to(), type_as(), copy_());
 * -1 when the warning filters made that warning an error */
static int warn_complex_to_real(int src_dtype, int dst_dtype)
{
    static atomic_bool warned;
    if (!pct_dtype_is_complex(src_dtype) || pct_dtype_is_complex(dst_dtype) || atomic_exchange(&warned, true)) return 0;
    return pct_warn(PCT_WARN_USER, "Casting complex values to real discards the imaginary part");
}

/* A copy of t in dtype on a device (device_index -1: that device's current one) laid out by the call's memory_format
 * (preserve_format when there is none). */
static pct_object *copy_in_format_on(pct_call *c, pct_tensor *t, int dtype, int device_type, int device_index)
{
    int mf = pct_memory_format_kind(c);
    pct_tensor *r;
    if (warn_complex_to_real(t->dtype, dtype) < 0) return NULL;
    if (mf == PCT_MF_PRESERVE) {
        r = pct_empty_preserving_on(t, dtype, device_type, device_index);
    } else {
        int64_t strides[PCT_MAX_DIMS];
        if (pct_format_strides(mf, t->ndim, t->sizes, strides) < 0) return NULL;
        r = pct_tensor_empty(t->ndim, t->sizes, dtype, device_type, device_index);
        if (r && pct_tensor_set_shape(r, t->ndim, t->sizes, strides) < 0) PCT_CLEAR(r);
    }
    if (!r || pct_copy_(r, t) < 0) {
        PCT_XDECREF(r);
        return NULL;
    }
    atomic_store(&r->version->value, 0);
    return (pct_object *)r;
}

static pct_object *copy_in_format(pct_call *c, pct_tensor *t, int dtype)
{
    return copy_in_format_on(c, t, dtype, t->device_type, t->device_index);
}

/* to(): t itself when nothing changes (device, dtype, layout) and no copy is asked for. */
static pct_object *to_impl_on(pct_call *c, pct_tensor *t, int dtype, bool copy, int device_type, int device_index)
{
    int mf = pct_memory_format_kind(c);
    /* torch's to() aliases when memory_format is preserve or the one the tensor suggests (channels_last for a 4-d
     * tensor laid out so, channels_last_3d for a 5-d one, contiguous for any other layout, a transposed one included) */
    int suggested = pct_tensor_is_contiguous(t) ? PCT_MF_CONTIGUOUS
                  : pct_tensor_is_channels_last(t) ? PCT_MF_CHANNELS_LAST
                  : pct_tensor_is_channels_last_3d(t) ? PCT_MF_CHANNELS_LAST_3D : PCT_MF_CONTIGUOUS;
    bool layout_ok = mf == PCT_MF_PRESERVE || mf == suggested;
    bool same_device = device_type == t->device_type && (device_index < 0 || device_index == t->device_index);
    if (dtype == t->dtype && !copy && layout_ok && same_device) { PCT_INCREF(t); return (pct_object *)t; }
    return copy_in_format_on(c, t, dtype, device_type, device_index);
}

static pct_object *to_impl(pct_call *c, pct_tensor *t, int dtype, bool copy)
{
    return to_impl_on(c, t, dtype, copy, t->device_type, t->device_index);
}

pct_object *pct_cpu_to_dtype(pct_call *c)
{
    PCT_ARGS(to_dtype);
    return to_impl(c, arg.input, arg.dtype, arg.copy);
}

pct_object *pct_cpu_to_device(pct_call *c)
{
    PCT_ARGS(to_device);
    pct_device_arg dev = arg.device;
    if (!dev.none && dev.type == PCT_CUDA && dev.index != PCT_DEVICE_NEGATIVE_INDEX && !pct_backend_of(PCT_CUDA))
        return NULL; /* not built: torch's "not compiled with CUDA" */
    if (!dev.none && dev.type != PCT_CUDA && pct_check_cpu_device_arg(dev) < 0) return NULL;
    if (!dev.none && dev.index == PCT_DEVICE_NEGATIVE_INDEX) return pct_check_cpu_device_arg(dev), NULL;
    const int dtype = arg.dtype == PCT_NO_DTYPE ? arg.input->dtype : arg.dtype;
    if (dev.none) return to_impl(c, arg.input, dtype, arg.copy);
    return to_impl_on(c, arg.input, dtype, arg.copy, dev.type, dev.type == PCT_CPU ? -1 : dev.index);
}

pct_object *pct_cpu_to_other(pct_call *c)
{
    PCT_ARGS(to_other);
    /* a Python number is taken as a 0-d tensor of its own type, as torch's to(other) does: t.to(1.5) is float64 */
    const pct_tensor *o = arg.tensor;
    int dtype = o->dtype;
    /* torch makes the number a tensor through an int64: a Python int in [2^63, 2^64) overflows there */
    if (o->flags & PCT_FLAG_UINT64_NUMBER) {
        pct_error_str(PCT_ERR_VALUE, "Overflow when unpacking long long");
        return NULL;
    }
    if ((o->flags & PCT_FLAG_WRAPPED_NUMBER) && pct_dtype_is_floating(dtype)) dtype = PCT_FLOAT64;
    if (o->flags & PCT_FLAG_WRAPPED_NUMBER) return to_impl(c, arg.input, dtype, arg.copy);
    return to_impl_on(c, arg.input, dtype, arg.copy, o->device_type, o->device_index); /* other's device too */
}

pct_object *pct_cpu_type_as(pct_call *c)
{
    PCT_ARGS(type_as);
    /* torch's type_as is type(other.type()): the type names the device too (torch.cuda.FloatTensor) */
    return to_impl_on(c, arg.input, arg.other->dtype, false, arg.other->device_type, arg.other->device_index);
}

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
        pct_error(PCT_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                     pct_shape_str(b1, sizeof b1, self->ndim, self->sizes), pct_shape_str(b2, sizeof b2, nb, shape));
        return -1;
    }
    return 0;
}

pct_object *pct_cpu_copy_(pct_call *c)
{
    PCT_ARGS(copy_);
    pct_tensor *self = arg.input;
    if (self != arg.other && copy_checks(self, arg.other) < 0) return NULL;
    if (warn_complex_to_real(arg.other->dtype, self->dtype) < 0 || pct_copy_(self, arg.other) < 0) return NULL;
    PCT_INCREF(self);
    return (pct_object *)self;
}

pct_object *pct_cpu_clone(pct_call *c)
{
    PCT_ARGS(clone);
    return copy_in_format(c, arg.input, arg.input->dtype);
}

pct_object *pct_cpu_contiguous(pct_call *c)
{
    PCT_ARGS(contiguous);
    pct_tensor *t = arg.input;
    const pct_value *v = pct_arg(c, "memory_format");
    int mf = v->none ? PCT_MF_CONTIGUOUS : pct_memory_format_kind(c);
    if (mf == PCT_MF_CONTIGUOUS) return (pct_object *)pct_contiguous(t);
    if (mf == PCT_MF_PRESERVE) { /* accepted only where there is nothing to do */
        if (pct_tensor_is_contiguous(t)) { PCT_INCREF(t); return (pct_object *)t; }
        pct_error_str(PCT_ERR_RUNTIME, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    if ((mf == PCT_MF_CHANNELS_LAST && pct_tensor_is_channels_last(t))
        || (mf == PCT_MF_CHANNELS_LAST_3D && pct_tensor_is_channels_last_3d(t))) { PCT_INCREF(t); return (pct_object *)t; }
    return copy_in_format(c, t, t->dtype); /* channels_last of another layout, or torch's error */
}

/* Fills t with a scalar value (converted to t's dtype). */
int pct_fill_scalar(pct_tensor *t, const pct_scalar *s)
{
    if (t->device_type != PCT_CPU) { /* Note [Device-neutral copies]: the device fills */
        const pct_backend *b = pct_backend_of(t->device_type);
        return b ? b->fill(t, s) : -1;
    }
    pct_tensor *v = pct_scalar_tensor_of(t->dtype, s);
    if (!v) return -1;
    int r = pct_copy_(t, v);
    PCT_DECREF(v);
    return r;
}

/* torch range-checks a Scalar fill value, float16 and bfloat16 too, except in its one-element fast path, which
 * converts those through float (out of range: inf) */
int pct_fill_check_value(const pct_scalar *s, const pct_tensor *t)
{
    return pct_dtype_is_reduced_float(t->dtype) && t->numel == 1 ? 0 : pct_scalar_check_fits(s, t->dtype);
}

int pct_fill_value_(pct_tensor *self, const pct_scalar *value)
{
    if (!value->from_tensor && pct_fill_check_value(value, self) < 0) return -1; /* fill_(Tensor): none */
    return pct_fill_scalar(self, value);
}

pct_object *pct_cpu_fill_(pct_call *c)
{
    PCT_ARGS(fill_);
    if (pct_fill_value_(arg.input, &arg.value) < 0) return NULL;
    PCT_INCREF(arg.input);
    return (pct_object *)arg.input;
}

/* torch.fill(input, value): fill_ into a new tensor shaped as input (r, stolen; NULL where the new tensor or its
 * fill, rc, failed), through the in-place op's fill of the same value type, its checks included */
static pct_object *filled_new(pct_tensor *r, int rc)
{
    if (r && rc < 0) PCT_CLEAR(r);
    return (pct_object *)r;
}

pct_object *pct_cpu_fill(pct_call *c)
{
    PCT_ARGS(fill);
    pct_tensor *r = pct_tensor_empty_like(arg.input, -1);
    return filled_new(r, r ? pct_fill_value_(r, &arg.value) : -1);
}

pct_object *pct_cpu_fill_tensor(pct_call *c)
{
    PCT_ARGS(fill_tensor);
    pct_tensor *r = pct_tensor_empty_like(arg.input, -1);
    return filled_new(r, r ? pct_fill_tensor_value_(r, arg.value) : -1);
}

pct_object *pct_cpu_zero_(pct_call *c)
{
    PCT_ARGS(zero_);
    pct_tensor *self = arg.input;
    pct_scalar zero = {PCT_SCALAR_INT, 0, 0, 0, 0};
    if (pct_fill_scalar(self, &zero) < 0) return NULL;
    PCT_INCREF(self);
    return (pct_object *)self;
}
