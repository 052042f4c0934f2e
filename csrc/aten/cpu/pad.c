/* pad.c: constant, reflect, replicate and circular padding (constant_pad_nd, pad = torch's
 * F.pad) and their backward (_pad_backward), on the index maps of spatial.c: each padded dim
 * gets a map from output position to the input position it copies (-1: the constant).
 *
 * The pad list is torch's: last dim first, (left, right) per dim, so the pair k pads dim
 * ndim - 1 - k. Negative amounts crop (every mode; reflect / replicate need an output of at
 * least one element, circular may not wrap more than once). */
#include "spatial.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR };
static const char *const pad_mode_names[] = {"constant", "reflect", "replicate", "circular"};
/* torch's kernel names, for its "not implemented for 'Bool'" text */
static const char *const pad_kernel_names[4][3] = {
    {"constant_pad_nd", "constant_pad_nd", "constant_pad_nd"},
    {"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"},
    {"replication_pad1d", "replication_pad2d", "replication_pad3d"},
    {"_pad_circular", "_pad_circular", "_pad_circular"},
};

/* The mode named by a str argument (NULL / None: constant); -1 with torch's error. */
static int pad_mode(const char *v)
{
    if (!v) return PAD_CONSTANT;
    for (int m = 0; m < 4; m++)
        if (strcmp(v, pad_mode_names[m]) == 0) return m;
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "Unrecognised padding mode %s", v);
    return -1;
}

/* Fills map[0 .. out): output o reads input i = o - left, brought into [0, n) by the mode
 * (the callers' checks keep every mode's result in range). Circular crops first (negative
 * amounts) and wraps inside what is left, as torch does. */
static void pad_map(int64_t *map, int64_t out, int64_t n, int64_t left, int64_t right, int mode)
{
    int64_t c0 = 0, m = 0;
    if (mode == PAD_CIRCULAR) { /* the checks kept these in range */
        c0 = left < 0 ? -left : 0;
        m = n + (left < 0 ? left : 0) + (right < 0 ? right : 0);
    }
    for (int64_t o = 0; o < out; o++) {
        int64_t i = o - left;
        if (n == 0 || (mode == PAD_CIRCULAR && m <= 0)) { map[o] = -1; continue; }
        switch (mode) {
        case PAD_CONSTANT: map[o] = (i >= 0 && i < n) ? i : -1; break;
        case PAD_REFLECT: map[o] = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; break;
        case PAD_REPLICATE: map[o] = i < 0 ? 0 : i >= n ? n - 1 : i; break;
        default: {
            int64_t j = o - (left > 0 ? left : 0);
            map[o] = c0 + ((j % m) + m) % m;
        }
        }
    }
}

/* Output sizes of the nsp padded (trailing) dims of `sizes`; -1 with RuntimeError on overflow. */
static int pad_out_sizes(int ndim, const int64_t *sizes, const int64_t *pad, int nsp, int64_t *isz, int64_t *osz)
{
    for (int d = 0; d < nsp; d++) {
        int k = nsp - 1 - d;
        isz[d] = sizes[ndim - nsp + d];
        if (__builtin_add_overflow(isz[d], pad[2 * k], &osz[d]) ||
            __builtin_add_overflow(osz[d], pad[2 * k + 1], &osz[d])) {
            pct_error(PCT_ERR_RUNTIME, "padding (%lld, %lld) of dimension %d overflows", (long long)pad[2 * k],
                         (long long)pad[2 * k + 1], ndim - nsp + d);
            return -1;
        }
    }
    return 0;
}

/* The padded tensor (validated by the caller). `fill` is the constant in x's dtype. */
static pct_object *pad_apply(pct_tensor *x, const int64_t *pad, int nsp, int mode, const void *fill)
{
    int64_t isz[PCT_MAX_DIMS], osz[PCT_MAX_DIMS];
    pct_tensor *xc = NULL, *out = NULL;
    pct_index_maps m = {0};
    if (pad_out_sizes(x->ndim, x->sizes, pad, nsp, isz, osz) < 0) return NULL;
    PCT_TRY(out = pct_spatial_new(x, nsp, osz, x->dtype));
    if (nsp == 0) { /* nothing padded: a copy, as torch returns */
        PCT_TRY_INT(pct_copy_(out, x));
        return (pct_object *)out;
    }
    if (out->numel == 0) return (pct_object *)out;
    PCT_TRY(xc = pct_contiguous(x));
    PCT_TRY_INT(pct_index_maps_alloc(&m, nsp, isz, osz));
    for (int d = 0; d < nsp; d++) pad_map(m.map[d], osz[d], isz[d], pad[2 * (nsp - 1 - d)], pad[2 * (nsp - 1 - d) + 1], mode);
    int64_t planes = pct_spatial_planes(x, x->ndim - nsp);
    int r;
    PCT_NOGIL_BEGIN
    r = pct_index_gather(&m, planes, pct_tensor_data(xc), pct_tensor_data(out), (int)pct_tensor_itemsize(x), fill);
    PCT_NOGIL_END
    if (r < 0) { pct_error_nomem(); goto fail; }
    pct_index_maps_free(&m);
    PCT_DECREF(xc);
    return (pct_object *)out;
fail:
    pct_index_maps_free(&m);
    PCT_XDECREF(xc);
    PCT_XDECREF(out);
    return NULL;
}

/* The constant's bytes in `dtype` (torch converts the Scalar to the tensor's dtype). */
static int pad_fill_bytes(int dtype, const pct_scalar *v, unsigned char bytes[16])
{
    memset(bytes, 0, 16);
    if (pct_scalar_check_fits(v, dtype) < 0) return -1; /* torch fills with c10's checked conversion */
    pct_tensor *s = pct_scalar_tensor_of(dtype, v); /* a uint64 Scalar by value into a float dtype */
    if (!s) return -1;
    memcpy(bytes, pct_tensor_data(s), (size_t)pct_tensor_itemsize(s));
    PCT_DECREF(s);
    return 0;
}

/* Checks shared by constant_pad_nd and pad: an even pad list covering at most every dim. */
static int pad_check_length(const pct_tensor *x, int npad, bool f_pad)
{
    if (npad % 2) {
        if (f_pad) pct_error_str(PCT_ERR_RUNTIME, "Padding length must be divisible by 2");
        else pct_error(PCT_ERR_RUNTIME, "Length of pad must be even but instead it equals %d", npad);
        return -1;
    }
    if (npad / 2 > x->ndim) {
        if (f_pad)
            pct_error(PCT_ERR_RUNTIME, "Padding length should be less than or equal to two times the input "
                         "dimension but got padding length %d and input of dimension %d", npad, x->ndim);
        else
            pct_error(PCT_ERR_RUNTIME, "Length of pad should be no more than twice the number of dimensions of "
                         "the input. Pad length is %dwhile the input has %ddimensions.", npad, x->ndim);
        return -1;
    }
    return 0;
}

/* Constant padding crops (narrow) before it pads: what is left must not be negative. */
static int pad_check_crop(int ndim, const int64_t *sizes, const int64_t *pad, int nsp)
{
    for (int k = 0; k < nsp; k++) {
        int64_t n = sizes[ndim - 1 - k], l = pad[2 * k], r = pad[2 * k + 1], cut;
        if (__builtin_add_overflow(n, l < 0 ? l : 0, &cut) || __builtin_add_overflow(cut, r < 0 ? r : 0, &cut) || cut < 0) {
            pct_error_str(PCT_ERR_RUNTIME, "narrow(): length must be non-negative.");
            return -1;
        }
    }
    return 0;
}

static pct_object *constant_pad(pct_tensor *x, const int64_t *pad, int npad, const pct_scalar *value)
{
    int nsp = npad / 2;
    if (pad_check_crop(x->ndim, x->sizes, pad, nsp) < 0) return NULL;
    unsigned char fill[16]; /* one element, complex128 the widest */
    if (pad_fill_bytes(x->dtype, value, fill) < 0) return NULL;
    return pad_apply(x, pad, nsp, PAD_CONSTANT, fill);
}

pct_object *pct_cpu_constant_pad_nd(pct_call *c)
{
    PCT_ARGS(constant_pad_nd);
    pct_tensor *x = arg.input;
    if (pad_check_length(x, arg.pad.n, false) < 0) return NULL;
    return constant_pad(x, arg.pad.v, arg.pad.n, &arg.value);
}

/* Rules of the non-constant modes for an input of `ndim` dims `sizes` (torch's checks of
 * reflection_padNd / replication_padNd / _pad_circular); -1 with torch's error. */
static int pad_check_mode(int ndim, const int64_t *sizes, const int64_t *pad, int nsp, int mode)
{
    char buf[PCT_SHAPE_BUF];
    int64_t isz[PCT_MAX_DIMS], osz[PCT_MAX_DIMS];
    if (mode == PAD_CIRCULAR) {
        for (int k = 0; k < nsp; k++) {
            int64_t n = sizes[ndim - 1 - k];
            if (pad[2 * k] > n || pad[2 * k + 1] > n) {
                pct_error_str(PCT_ERR_RUNTIME, "Padding value causes wrapping around more than once.");
                return -1;
            }
        }
        if (pad_out_sizes(ndim, sizes, pad, nsp, isz, osz) < 0) return -1;
        for (int d = 0; d < nsp; d++) {
            int k = nsp - 1 - d;
            int64_t l = pad[2 * k], r = pad[2 * k + 1], kept = isz[d] + (l < 0 ? l : 0) + (r < 0 ? r : 0);
            if (osz[d] < 0) {
                pct_error_str(PCT_ERR_RUNTIME, "Negative padding value is resulting in an empty dimension");
                return -1;
            }
            if (osz[d] > 0 && (l > kept || r > kept)) { /* torch copies the wrap from the cropped input */
                pct_error_str(PCT_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the "
                                "written-to tensor refer to a single memory location. Please clone() the tensor before "
                                "performing the operation.");
                return -1;
            }
        }
        return 0;
    }
    bool ok = true;
    for (int d = ndim == nsp + 2 ? 1 : 0; d < ndim; d++) ok &= sizes[d] != 0;
    if (!ok) {
        pct_error(PCT_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                     "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2, pct_shape_str(buf, sizeof buf, ndim, sizes));
        return -1;
    }
    if (mode == PAD_REFLECT)
        for (int k = 0; k < nsp; k++) { /* the last dim first, as torch checks */
            int64_t n = sizes[ndim - 1 - k], l = pad[2 * k], r = pad[2 * k + 1];
            if (l >= n || r >= n) {
                pct_error(PCT_ERR_RUNTIME, "Argument #%d: Padding size should be less than the corresponding input "
                             "dimension, but got: padding (%lld, %lld) at dimension %d of input %s", 4 + 2 * k,
                             (long long)l, (long long)r, ndim - 1 - k, pct_shape_str(buf, sizeof buf, ndim, sizes));
                return -1;
            }
        }
    if (pad_out_sizes(ndim, sizes, pad, nsp, isz, osz) < 0) return -1;
    bool any = false;
    for (int d = 0; d < nsp; d++) any |= osz[d] >= 1;
    if (!any || (nsp == 1 && osz[0] < 1)) {
        if (nsp == 1)
            pct_error(PCT_ERR_RUNTIME, "input (W: %lld) is too small. Calculated output W: %lld",
                         (long long)isz[0], (long long)osz[0]);
        else if (nsp == 2) /* torch's two texts differ by a space */
            pct_error(PCT_ERR_RUNTIME, mode == PAD_REFLECT
                             ? "input (H: %lld, W: %lld) is too small. Calculated output H: %lld W: %lld"
                             : "input (H: %lld, W: %lld ) is too small. Calculated output H: %lld W: %lld",
                         (long long)isz[0], (long long)isz[1], (long long)osz[0], (long long)osz[1]);
        else
            pct_error(PCT_ERR_RUNTIME, "input (D: %lld H: %lld, W: %lld) is too small. Calculated output D: %lld "
                         "H: %lld W: %lld", (long long)isz[0], (long long)isz[1], (long long)isz[2], (long long)osz[0],
                         (long long)osz[1], (long long)osz[2]);
        return -1;
    }
    return 0;
}

/* pad(input, pad, mode="constant", value=None): torch's F.pad (at::pad). */
pct_object *pct_cpu_pad(pct_call *c)
{
    PCT_ARGS(pad);
    pct_tensor *x = arg.input;
    const int64_t *pad = arg.pad.v;
    int npad = arg.pad.n, mode = pad_mode(arg.mode);
    const pct_float_opt value = arg.value;
    if (mode < 0 || pad_check_length(x, npad, true) < 0) return NULL;
    if (mode == PAD_CONSTANT) {
        pct_scalar s = {PCT_SCALAR_FLOAT, 0, value.none ? 0.0 : value.v, 0, 0};
        return constant_pad(x, pad, npad, &s);
    }
    if (!value.none && value.v != 0) {
        pct_error(PCT_ERR_RUNTIME, "Padding mode \"%s\" doesn't take in value argument", pad_mode_names[mode]);
        return NULL;
    }
    int nsp = npad / 2;
    if (nsp < 1 || nsp > 3 || (x->ndim != nsp + 1 && x->ndim != nsp + 2)) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "Padding size %d is not supported for %dD input tensor.\n"
                     "Supported combinations for non-constant padding:\n"
                     "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                     "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                     "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)", npad, x->ndim);
        return NULL;
    }
    if (pad_check_mode(x->ndim, x->sizes, pad, nsp, mode) < 0) return NULL;
    if (mode != PAD_CIRCULAR && x->dtype == PCT_BOOL) return pct_spatial_no_dtype(pad_kernel_names[mode][nsp - 1], x->dtype);
    const unsigned char zero[16] = {0}; /* one element, complex128 the widest */
    return pad_apply(x, pad, nsp, mode, zero);
}

/* _pad_backward(grad_output, input_size, pad, mode): the gradient of pad() (constant_pad_nd
 * too) with respect to its input: every output's gradient added to the element it copied. */
pct_object *pct_cpu_pad_backward(pct_call *c)
{
    PCT_ARGS(pad_backward);
    pct_tensor *g = arg.grad_output, *gc = NULL, *gi = NULL;
    const int64_t *sizes = arg.input_size.v, *pad = arg.pad.v;
    int ndim = arg.input_size.n, npad = arg.pad.n, mode = pad_mode(arg.mode), nsp = npad / 2;
    int64_t isz[PCT_MAX_DIMS], osz[PCT_MAX_DIMS], want[PCT_MAX_DIMS];
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    pct_index_maps m = {0};
    if (mode < 0) return NULL;
    PCT_CHECK(npad % 2 == 0 && nsp <= ndim, PCT_ERR_RUNTIME,
              "_pad_backward: a pad list of length %d does not fit an input of %d dimensions", npad, ndim);
    for (int d = 0; d < ndim; d++)
        PCT_CHECK(sizes[d] >= 0, PCT_ERR_RUNTIME, "_pad_backward: negative input size %s", pct_shape_str(a, sizeof a, ndim, sizes));
    if ((mode == PAD_CONSTANT ? pad_check_crop(ndim, sizes, pad, nsp) : pad_check_mode(ndim, sizes, pad, nsp, mode)) < 0)
        return NULL;
    if (pad_out_sizes(ndim, sizes, pad, nsp, isz, osz) < 0) return NULL;
    memcpy(want, sizes, sizeof(int64_t) * (size_t)ndim);
    for (int d = 0; d < nsp; d++) want[ndim - nsp + d] = osz[d];
    PCT_CHECK(g->ndim == ndim && memcmp(g->sizes, want, sizeof(int64_t) * (size_t)ndim) == 0, PCT_ERR_RUNTIME,
              "_pad_backward: expected grad_output of shape %s, but got %s", pct_shape_str(a, sizeof a, ndim, want),
              pct_spatial_shape(b, g));
    if (!pct_dtype_is_floating(g->dtype)) return pct_spatial_no_dtype("_pad_backward", g->dtype);
    PCT_TRY(gi = pct_tensor_zeros(ndim, sizes, pct_spatial_compute_dtype(g->dtype)));
    if (gi->numel == 0 || g->numel == 0 || nsp == 0) {
        if (nsp == 0) PCT_TRY_INT(pct_copy_(gi, g));
        return pct_spatial_finish(gi, g->dtype);
    }
    PCT_TRY(gc = pct_spatial_input(g));
    PCT_TRY_INT(pct_index_maps_alloc(&m, nsp, isz, osz));
    for (int d = 0; d < nsp; d++) pad_map(m.map[d], osz[d], isz[d], pad[2 * (nsp - 1 - d)], pad[2 * (nsp - 1 - d) + 1], mode);
    int64_t planes = 1;
    for (int d = 0; d < ndim - nsp; d++) planes *= sizes[d];
    int r;
    PCT_NOGIL_BEGIN
    r = pct_index_scatter_add(&m, planes, pct_tensor_data(gc), pct_tensor_data(gi), gi->dtype);
    PCT_NOGIL_END
    if (r < 0) { pct_error_nomem(); goto fail; }
    pct_index_maps_free(&m);
    PCT_DECREF(gc);
    return pct_spatial_finish(gi, g->dtype);
fail:
    pct_index_maps_free(&m);
    PCT_XDECREF(gc);
    PCT_XDECREF(gi);
    return NULL;
}
