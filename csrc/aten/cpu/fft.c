/* fft.c: the FFT primitives of the operator table (ops_fft.def), as torch's:
 *   _fft_c2c(self, dim, normalization, forward)        complex -> complex over the dims listed
 *   _fft_r2c(self, dim, normalization, onesided)       real -> complex; the last dim listed keeps n/2+1 entries when
 *                                                       onesided (the others follow by Hermitian symmetry)
 *   _fft_c2r(self, dim, normalization, last_dim_size)  the inverse of a onesided r2c; the last dim listed becomes
 *                                                       last_dim_size long
 * normalization is torch's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the product of the signal's sizes over
 * dims (the real side's for r2c and c2r). torch.fft's public functions (pyctorch/fft/) are composites over these.
 * The work is pocketfft's (fft_pocketfft.h), which takes strides, so inputs are never copied to be contiguous. A
 * build without pocketfft keeps the kernels, which then raise RuntimeError naming the missing library. */
#include <math.h>
#include <string.h>

#include "../error.h"
#include "../iter.h"
#include "../op.h"
#include "fft_pocketfft.h"

#ifdef PCT_HAVE_POCKETFFT
/* The axes of dim (wrapped, distinct) into axes; -1 with torch's error. */
static int fft_axes(const pct_tensor *t, const pct_int_list *dim, int64_t *axes)
{
    bool mask[PCT_MAX_DIMS + 1];
    if (pct_dims_mask(dim->v, dim->n, t->ndim, mask) < 0) return -1;
    for (int i = 0; i < dim->n; i++) axes[i] = pct_wrap_dim(dim->v[i], t->ndim);
    return 0;
}

/* The factor that normalization mode `mode` scales by, for a signal of n points. */
static double norm_factor(int64_t mode, double n)
{
    if (mode == 1) return 1.0 / sqrt(n);
    if (mode == 2) return 1.0 / n;
    return 1.0;
}

/* Runs pocketfft from `in` (its own strides) into `out` (contiguous); signal sizes come from `shape`. */
static int fft_exec(int kind, pct_tensor *in, pct_tensor *out, const int64_t *shape, int naxes, const int64_t *axes,
                    bool forward, double fct)
{
    int64_t si[PCT_MAX_DIMS + 1], so[PCT_MAX_DIMS + 1];
    for (int d = 0; d < in->ndim; d++) {
        si[d] = in->strides[d] * pct_tensor_itemsize(in);
        so[d] = out->strides[d] * pct_tensor_itemsize(out);
    }
    char err[160] = "";
    int rc;
    bool is_double = in->dtype == PCT_FLOAT64 || in->dtype == PCT_COMPLEX128;
    PCT_NOGIL_BEGIN
    rc = pct_pocketfft_exec(kind, is_double, in->ndim, shape, si, so, naxes, axes, forward, pct_tensor_data(in),
                            pct_tensor_data(out), fct, err, sizeof err);
    PCT_NOGIL_END
    if (rc < 0) pct_error(PCT_ERR_RUNTIME, "%s", err);
    return rc;
}

static bool is_complex_fft_dtype(int d) { return d == PCT_COMPLEX64 || d == PCT_COMPLEX128; }

/* out = the c2c transform of in (complex, shapes equal); an empty dim list copies. */
static pct_tensor *c2c_into(pct_tensor *in, int naxes, const int64_t *axes, int64_t mode, bool forward)
{
    pct_tensor *out = pct_tensor_empty(in->ndim, in->sizes, in->dtype, in->device_type, in->device_index);
    if (!out) return NULL;
    if (out->numel == 0) return out;
    if (naxes == 0) {
        if (pct_copy_(out, in) < 0) goto fail;
        return out;
    }
    double n = 1;
    for (int i = 0; i < naxes; i++) n *= (double)in->sizes[axes[i]];
    PCT_TRY_INT(fft_exec(PCT_FFT_C2C, in, out, in->sizes, naxes, axes, forward, norm_factor(mode, n)));
    return out;
fail:
    PCT_DECREF(out);
    return NULL;
}
#endif

#ifndef PCT_HAVE_POCKETFFT
static pct_object *no_pocketfft(const char *op)
{
    pct_error(PCT_ERR_RUNTIME, "%s: pyctorch was built without pocketfft, the FFT library torch.fft runs on (run `make "
              "pocketfft` to fetch its header into build/third_party/pocketfft, then rebuild)", op);
    return NULL;
}
#endif

pct_object *pct_cpu_fft_c2c(pct_call *c)
{
#ifdef PCT_HAVE_POCKETFFT
    PCT_ARGS(fft_c2c);
    int64_t axes[PCT_MAX_DIMS + 1];
    if (!is_complex_fft_dtype(arg.input->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "_fft_c2c: expected a complex input tensor, but got %s",
                  pct_dtype_cpp_name[arg.input->dtype]);
        return NULL;
    }
    if (fft_axes(arg.input, &arg.dim, axes) < 0) return NULL;
    return (pct_object *)c2c_into(arg.input, arg.dim.n, axes, arg.normalization, arg.forward);
#else
    (void)c;
    return no_pocketfft("_fft_c2c");
#endif
}

pct_object *pct_cpu_fft_r2c(pct_call *c)
{
#ifdef PCT_HAVE_POCKETFFT
    PCT_ARGS(fft_r2c);
    pct_tensor *x = arg.input, *out = NULL, *cx = NULL;
    int64_t axes[PCT_MAX_DIMS + 1], shape[PCT_MAX_DIMS + 1];
    if (x->dtype != PCT_FLOAT32 && x->dtype != PCT_FLOAT64) {
        pct_error(PCT_ERR_RUNTIME, "_fft_r2c: expected a float or double input tensor, but got %s",
                  pct_dtype_cpp_name[x->dtype]);
        return NULL;
    }
    if (fft_axes(x, &arg.dim, axes) < 0) return NULL;
    const int cdtype = pct_dtype_to_complex(x->dtype);
    if (!arg.onesided || arg.dim.n == 0) {
        /* the full spectrum: the c2c transform of the input made complex (twice the work of the onesided half, which
         * only torch's internal callers ask for) */
        PCT_TRY(cx = pct_to_dtype(x, cdtype, false));
        out = c2c_into(cx, arg.dim.n, axes, arg.normalization, true);
        PCT_DECREF(cx);
        return (pct_object *)out;
    }
    memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    const int64_t last = axes[arg.dim.n - 1];
    shape[last] = x->sizes[last] / 2 + 1;
    PCT_TRY(out = pct_tensor_empty(x->ndim, shape, cdtype, x->device_type, x->device_index));
    if (x->numel == 0) return (pct_object *)out;
    double n = 1;
    for (int i = 0; i < arg.dim.n; i++) n *= (double)x->sizes[axes[i]];
    PCT_TRY_INT(fft_exec(PCT_FFT_R2C, x, out, x->sizes, arg.dim.n, axes, true, norm_factor(arg.normalization, n)));
    return (pct_object *)out;
fail:
    if (out) PCT_DECREF(out);
    return NULL;
#else
    (void)c;
    return no_pocketfft("_fft_r2c");
#endif
}

pct_object *pct_cpu_fft_c2r(pct_call *c)
{
#ifdef PCT_HAVE_POCKETFFT
    PCT_ARGS(fft_c2r);
    pct_tensor *x = arg.input, *out = NULL;
    int64_t axes[PCT_MAX_DIMS + 1], shape[PCT_MAX_DIMS + 1];
    if (!is_complex_fft_dtype(x->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "_fft_c2r: expected a complex input tensor, but got %s",
                  pct_dtype_cpp_name[x->dtype]);
        return NULL;
    }
    if (fft_axes(x, &arg.dim, axes) < 0) return NULL;
    if (arg.dim.n == 0) {
        pct_error(PCT_ERR_RUNTIME, "_fft_c2r: expected at least one dimension to transform");
        return NULL;
    }
    const int64_t last = axes[arg.dim.n - 1], m = arg.last_dim_size;
    if (m < 1 || x->sizes[last] < m / 2 + 1) {
        pct_error(PCT_ERR_RUNTIME, "_fft_c2r: last_dim_size %lld needs %lld input points along dim %lld, but it has "
                  "%lld", (long long)m, (long long)(m / 2 + 1), (long long)last, (long long)x->sizes[last]);
        return NULL;
    }
    memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    shape[last] = m;
    PCT_TRY(out = pct_tensor_empty(x->ndim, shape, pct_dtype_to_real(x->dtype), x->device_type, x->device_index));
    if (out->numel == 0) return (pct_object *)out;
    double n = 1;
    for (int i = 0; i < arg.dim.n; i++) n *= (double)shape[axes[i]];
    PCT_TRY_INT(fft_exec(PCT_FFT_C2R, x, out, shape, arg.dim.n, axes, false, norm_factor(arg.normalization, n)));
    return (pct_object *)out;
fail:
    if (out) PCT_DECREF(out);
    return NULL;
#else
    (void)c;
    return no_pocketfft("_fft_c2r");
#endif
}
