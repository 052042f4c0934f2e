/* creation.c: factory functions (empty, zeros, ones, full, arange, linspace,
 * logspace, eye and the *_like / new_* forms). Their dtype, device and
 * requires_grad keywords are read by name, so one helper serves every schema. */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../backend.h"
#include "fill.h"
#include "factory.h"
#include <math.h>


pct_tensor *pct_factory_requires_grad(pct_call *c, pct_tensor *t)
{
    if (t && pct_arg(c, "requires_grad")->b) {
        if (!pct_dtype_is_differentiable(t->dtype)) {
            PCT_DECREF(t);
            pct_error_str(PCT_ERR_RUNTIME, "Only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        t->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return t;
}

/* Note [Device-neutral factories]: empty, empty_strided, zeros, ones, full and the *_like / new_* forms only allocate
 * through the backend of their device and fill through it, so they also serve the CUDA slot (csrc/cuda registers
 * them); the others (arange, eye, the random factories) write host memory and stay the CPU's. */

/* The device a factory makes its result on: its device= argument, else like's (the *_like / new_* forms), else the
 * CPU. */
static void factory_device(const pct_call *c, const pct_tensor *like, int *type, int *index)
{
    const pct_value *d = pct_arg(c, "device");
    if (!d->none) {
        *type = d->dev.type;
        *index = d->dev.type == PCT_CPU ? -1 : d->dev.index;
    } else {
        *type = like ? like->device_type : PCT_CPU;
        *index = like ? like->device_index : -1;
    }
}

/* The dtype of a factory's result: out='s, else dtype=, else default_dtype; -1 with torch's error when they differ */
static int factory_dtype_of(pct_call *c, int default_dtype)
{
    const pct_value *dt = pct_arg(c, "dtype");
    if (!c->out) return dt->none ? default_dtype : dt->dtype;
    /* out= decides the dtype; an explicit dtype= must agree with it (torch's rule) */
    if (!dt->none && dt->dtype != c->out->dtype) {
        pct_error(PCT_ERR_RUNTIME, "dtype %s does not match dtype of out parameter (%s)",
                     pct_dtype_cpp_name[dt->dtype], pct_dtype_cpp_name[c->out->dtype]);
        return -1;
    }
    /* and an explicit device= must be out='s device type (torch's rule, checked even where that device is absent) */
    const pct_value *d = pct_arg(c, "device");
    if (!d->none && d->dev.type != c->out->device_type) {
        pct_error(PCT_ERR_RUNTIME, "device type %s does not match device type of out parameter (%s)",
                  pct_device_type_name(d->dev.type), pct_device_type_name(c->out->device_type));
        return -1;
    }
    return c->out->dtype;
}

int pct_factory_dtype(pct_call *c, int default_dtype)
{
    if (pct_check_cpu_device(pct_arg(c, "device")) < 0) return -1;
    return factory_dtype_of(c, default_dtype);
}

/* Makes (or resizes out=) a tensor of the given shape for a factory call, on its device (like: a new_* form's input,
 * or NULL). */
static pct_tensor *factory_new(pct_call *c, int ndim, const int64_t *sizes, int default_dtype, const pct_tensor *like)
{
    int dtype = factory_dtype_of(c, default_dtype), type, index;
    if (dtype < 0) return NULL;
    factory_device(c, like, &type, &index);
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)sizes[i],
                         pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, ndim, sizes));
            return NULL;
        }
    }
    pct_tensor *t;
    if (c->out) {
        t = c->out;
        if (pct_tensor_resize_(t, ndim, sizes) < 0) return NULL;
        PCT_INCREF(t);
    } else if (!(t = pct_tensor_empty(ndim, sizes, dtype, type, index))) {
        return NULL;
    }
    return pct_factory_requires_grad(c, t);
}

int pct_memory_format_kind(const pct_call *c)
{
    const pct_value *v = pct_arg(c, "memory_format");
    return v->none || !v->obj ? PCT_MF_PRESERVE : v->code;
}

int pct_format_strides(int mf, int ndim, const int64_t *sizes, int64_t *strides)
{
    if (mf == PCT_MF_CONTIGUOUS) {
        pct_contiguous_strides(ndim, sizes, strides);
        return 0;
    }
    if (mf == PCT_MF_CHANNELS_LAST) {
        if (ndim != 4) {
            pct_error_str(PCT_ERR_RUNTIME, "required rank 4 tensor to use channels_last format");
            return -1;
        }
        /* torch's get_channels_last_strides_2d multiplies the sizes as they are: a 0 size zeroes the strides
         * outside it ((2, 3, 0, 4) -> (0, 1, 12, 3)), which keeps an empty tensor channels_last-contiguous */
        strides[1] = 1;
        strides[3] = sizes[1];
        strides[2] = sizes[1] * sizes[3];
        strides[0] = strides[2] * sizes[2];
        return 0;
    }
    if (mf == PCT_MF_CHANNELS_LAST_3D) {
        if (ndim != 5) {
            pct_error_str(PCT_ERR_RUNTIME, "required rank 5 tensor to use channels_last_3d format");
            return -1;
        }
        /* N, C, D, H, W laid out as N, D, H, W, C; sizes multiplied as they are, as in the 2-d case */
        strides[1] = 1;
        strides[4] = sizes[1];
        strides[3] = strides[4] * sizes[4];
        strides[2] = strides[3] * sizes[3];
        strides[0] = strides[2] * sizes[2];
        return 0;
    }
    pct_error_str(PCT_ERR_RUNTIME, "unsupported memory format");
    return -1;
}

pct_tensor *pct_like_new(const pct_call *c, const pct_tensor *src)
{
    const pct_value *dt = pct_arg(c, "dtype");
    int dtype = dt->none ? src->dtype : dt->dtype, type, index;
    /* src may be meta (the meta backend's stand-in of it is on the CPU, which is where the result goes) */
    factory_device(c, src->device_type == PCT_META ? NULL : src, &type, &index);
    int mf = pct_memory_format_kind(c);
    if (mf == PCT_MF_PRESERVE) return pct_empty_preserving_on(src, dtype, type, index);
    int64_t strides[PCT_MAX_DIMS];
    if (pct_format_strides(mf, src->ndim, src->sizes, strides) < 0) return NULL;
    pct_tensor *t = pct_tensor_empty(src->ndim, src->sizes, dtype, type, index);
    if (t && pct_tensor_set_shape(t, src->ndim, src->sizes, strides) < 0) PCT_CLEAR(t);
    return t;
}

/* Fills a new factory result (value NULL: left uninitialised) and applies requires_grad. */
static pct_object *fill_new(pct_call *c, pct_tensor *t, const pct_scalar *value)
{
    if (!t) return NULL;
    if (value && pct_fill_check_value(value, t) < 0) { /* checked even when there is nothing to fill */
        PCT_DECREF(t);
        return NULL;
    }
    if (value && t->numel) {
        bool requires = pct_tensor_requires_grad(t);
        if (pct_fill_scalar(t, value) < 0) { PCT_DECREF(t); return NULL; }
        if (requires) t->flags |= PCT_FLAG_REQUIRES_GRAD;
        if (!c->out) atomic_store(&t->version->value, 0); /* a new tensor starts at version 0, as in torch */
    }
    return (pct_object *)t;
}

static pct_object *filled(pct_call *c, int ndim, const int64_t *sizes, int default_dtype, const pct_scalar *value,
                          const pct_tensor *like)
{
    return fill_new(c, factory_new(c, ndim, sizes, default_dtype, like), value);
}

/* The *_like forms: the requires_grad keyword is applied after the fill, as for the other factories. */
static pct_tensor *like_start(pct_call *c, const pct_tensor *src) { return pct_factory_requires_grad(c, pct_like_new(c, src)); }

static const pct_scalar zero = {PCT_SCALAR_INT, 0, 0, 0, 0}, one = {PCT_SCALAR_INT, 1, 1, 0, 0};

pct_object *pct_cpu_empty(pct_call *c)
{
    PCT_ARGS(empty);
    const pct_value *v = pct_arg(c, "memory_format");
    if (!v->none && c->out) {
        pct_error_str(PCT_ERR_RUNTIME, "'memory_format' argument is incompatible with 'out' tensor argument");
        return NULL;
    }
    pct_tensor *t = factory_new(c, arg.size.n, arg.size.v, pct_default_dtype, NULL);
    if (!t) return NULL;
    int mf = v->none ? PCT_MF_CONTIGUOUS : pct_memory_format_kind(c);
    if (mf == PCT_MF_CONTIGUOUS) return (pct_object *)t;
    int64_t strides[PCT_MAX_DIMS];
    if (mf == PCT_MF_PRESERVE) pct_error_str(PCT_ERR_RUNTIME, "unsupported memory format Preserve");
    else if (pct_format_strides(mf, t->ndim, t->sizes, strides) == 0 && pct_tensor_set_shape(t, t->ndim, t->sizes, strides) == 0)
        return (pct_object *)t;
    PCT_DECREF(t);
    return NULL;
}
/* empty_strided(size, stride): uninitialised memory just large enough for the strides given (torch's storage size
 * rule, Note [Checked bounds] for its overflow), not a view of anything. */
pct_object *pct_cpu_empty_strided(pct_call *c)
{
    PCT_ARGS(empty_strided);
    const pct_int_list *size = &arg.size, *stride = &arg.stride;
    char b1[PCT_SHAPE_BUF];
    if (size->n != stride->n) {
        pct_error(PCT_ERR_RUNTIME, "dimensionality of sizes (%d) must match dimensionality of strides (%d)", size->n,
                     stride->n);
        return NULL;
    }
    int dtype = factory_dtype_of(c, pct_default_dtype), type, index;
    if (dtype < 0) return NULL;
    factory_device(c, NULL, &type, &index);
    for (int i = 0; i < size->n; i++) {
        if (size->v[i] < 0) {
            pct_error(PCT_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                         (long long)size->v[i], pct_shape_str(b1, sizeof b1, size->n, size->v));
            return NULL;
        }
    }
    int64_t item = pct_dtype_itemsize[dtype];
    int64_t nbytes = pct_strided_nbytes(size->n, size->v, stride->v, 0, item); /* 0 when empty */
    bool empty = false;
    for (int i = 0; i < size->n; i++) empty |= size->v[i] == 0;
    for (int i = 0; nbytes >= 0 && !empty && i < stride->n; i++)
        if (stride->v[i] < 0) nbytes = -1; /* a negative stride of a non-empty tensor: refused as an overflow */
    if (nbytes < 0) {
        if (!pct_error_occurred())
            pct_error(PCT_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                         pct_shape_str(b1, sizeof b1, size->n, size->v),
                         pct_shape_str((char[PCT_SHAPE_BUF]){0}, PCT_SHAPE_BUF, stride->n, stride->v));
        return NULL;
    }
    const pct_backend *b = pct_backend_of(type);
    pct_storage *s = b ? b->storage_new((size_t)nbytes, index) : NULL;
    if (!s) return NULL;
    pct_tensor *t = pct_tensor_from_storage(s, size->n, size->v, stride->v, 0, dtype);
    pct_storage_decref(s);
    return (pct_object *)pct_factory_requires_grad(c, t);
}

pct_object *pct_cpu_zeros(pct_call *c)
{
    PCT_ARGS(zeros);
    return filled(c, arg.size.n, arg.size.v, pct_default_dtype, &zero, NULL);
}

pct_object *pct_cpu_ones(pct_call *c)
{
    PCT_ARGS(ones);
    return filled(c, arg.size.n, arg.size.v, pct_default_dtype, &one, NULL);
}

/* full() infers its dtype from the fill value: bool, int64 or the default float. */
static int fill_value_dtype(const pct_scalar *s)
{
    if (s->kind == PCT_SCALAR_COMPLEX) return pct_dtype_to_complex(pct_default_dtype);
    return s->kind == PCT_SCALAR_FLOAT ? pct_default_dtype : s->kind == PCT_SCALAR_INT ? PCT_INT64 : PCT_BOOL;
}
pct_object *pct_cpu_full(pct_call *c)
{
    PCT_ARGS(full);
    return filled(c, arg.size.n, arg.size.v, fill_value_dtype(&arg.fill_value), &arg.fill_value, NULL);
}

pct_object *pct_cpu_empty_like(pct_call *c)
{
    PCT_ARGS(empty_like);
    return fill_new(c, like_start(c, arg.input), NULL);
}

pct_object *pct_cpu_zeros_like(pct_call *c)
{
    PCT_ARGS(zeros_like);
    return fill_new(c, like_start(c, arg.input), &zero);
}

pct_object *pct_cpu_ones_like(pct_call *c)
{
    PCT_ARGS(ones_like);
    return fill_new(c, like_start(c, arg.input), &one);
}

pct_object *pct_cpu_full_like(pct_call *c)
{
    PCT_ARGS(full_like);
    return fill_new(c, like_start(c, arg.input), &arg.fill_value);
}

pct_object *pct_cpu_new_empty(pct_call *c)
{
    PCT_ARGS(new_empty);
    return filled(c, arg.size.n, arg.size.v, arg.input->dtype, NULL, arg.input);
}

pct_object *pct_cpu_new_zeros(pct_call *c)
{
    PCT_ARGS(new_zeros);
    return filled(c, arg.size.n, arg.size.v, arg.input->dtype, &zero, arg.input);
}

pct_object *pct_cpu_new_ones(pct_call *c)
{
    PCT_ARGS(new_ones);
    return filled(c, arg.size.n, arg.size.v, arg.input->dtype, &one, arg.input);
}

pct_object *pct_cpu_new_full(pct_call *c)
{
    PCT_ARGS(new_full);
    return filled(c, arg.size.n, arg.size.v, arg.input->dtype, &arg.fill_value, arg.input);
}

pct_object *pct_cpu_eye(pct_call *c)
{
    PCT_ARGS(eye);
    int64_t n = arg.n, m = arg.m.none ? n : arg.m.v;
    if (n < 0) { pct_error(PCT_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n); return NULL; }
    if (m < 0) { pct_error(PCT_ERR_RUNTIME, "m must be greater or equal to 0, got %lld", (long long)m); return NULL; }
    int64_t sizes[2] = {n, m};
    if (pct_check_cpu_device(pct_arg(c, "device")) < 0) return NULL; /* it writes host memory */
    pct_tensor *t = (pct_tensor *)filled(c, 2, sizes, pct_default_dtype, &zero, NULL);
    if (!t) return NULL;
    char *p = pct_tensor_data(t);
    int item = pct_dtype_itemsize[t->dtype];
    for (int64_t i = 0; i < (n < m ? n : m); i++) pct_store_int64(p + (i * t->strides[0] + i * t->strides[1]) * item, t->dtype, 1);
    return (pct_object *)t;
}
