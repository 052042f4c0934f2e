/* fold.c: the sliding-block ops behind torch.nn.functional.unfold / fold (torch's im2col and
 * col2im, here _im2col / _col2im in ops_conv.def), on the lowering of im2col.c: a 2-d
 * problem of `channels` planes whose column matrix is the op's output (unfold) or input
 * (fold). Threads split the (sample, channel) planes. */
#include "../op.h"
#include "im2col.h"
#include "../error.h"
#include "../iter.h"
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#define PCT_OMP(x) _Pragma(#x)
#else
#define PCT_OMP(x)
#endif

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static int check_len(const char *name, const pct_int_list *v)
{
    if (v->n == 2) return 0;
    pct_error(PCT_ERR_RUNTIME, "It is expected %s equals to 2, but got size %d", name, v->n);
    return -1;
}

static int check_positive(const pct_int_list *v, const char *what, const char *prefix, bool allow_zero)
{
    if (allow_zero ? (v->v[0] >= 0 && v->v[1] >= 0) : (v->v[0] > 0 && v->v[1] > 0)) return 0;
    pct_error(PCT_ERR_RUNTIME, "%s, but got %s_height: %lld %s_width: %lld", what, prefix, (long long)v->v[0],
                 prefix, (long long)v->v[1]);
    return -1;
}

#define CHECK_KERNEL(v) check_positive(v, "kernel size should be greater than zero", "kernel", false)
#define CHECK_STRIDE(v) check_positive(v, "stride should be greater than zero", "stride", false)
#define CHECK_DILATION(v) check_positive(v, "dilation should be greater than zero", "dilation", false)
#define CHECK_PADDING(v) check_positive(v, "padding should be non-negative", "pad", true)

/* torch reads input.size(1) first: a tensor of fewer than 3 dims fails there */
static void check_rank_index(const pct_tensor *t)
{
    if (t->ndim == 0) pct_error_str(PCT_ERR_INDEX, "Dimension specified as 1 but tensor has no dimensions");
    else pct_error(PCT_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                      -t->ndim, t->ndim - 1, t->ndim);
}

static void fill_geom(pct_im2col_geom *g, int64_t channels, int64_t bh, int64_t bw, int64_t sh, int64_t sw,
                      const pct_int_list *k, const pct_int_list *d, const pct_int_list *pad, const pct_int_list *st)
{
    memset(g, 0, sizeof *g);
    g->channels = channels;
    g->big[0] = g->small[0] = g->kernel[0] = g->stride[0] = g->dil[0] = 1;
    g->big[1] = bh; g->big[2] = bw;
    g->small[1] = sh; g->small[2] = sw;
    for (int i = 0; i < 2; i++) {
        g->kernel[1 + i] = k->v[i];
        g->dil[1 + i] = d->v[i];
        g->pad[1 + i] = pad->v[i];
        g->stride[1 + i] = st->v[i];
    }
}

static const char *pair(char *buf, size_t n, const pct_int_list *v)
{
    snprintf(buf, n, "(%lld, %lld)", (long long)v->v[0], (long long)v->v[1]);
    return buf;
}

/* _im2col(input, kernel_size, dilation, padding, stride): [N, C, H, W] -> [N, C*kh*kw, L] */
pct_object *pct_cpu_im2col(pct_call *c)
{
    PCT_ARGS(im2col);
    pct_tensor *input = arg.input, *x = NULL, *out = NULL;
    const pct_int_list *k = &arg.kernel_size, *d = &arg.dilation, *pad = &arg.padding, *st = &arg.stride;
    char b1[64], b2[64], b3[64], b4[PCT_SHAPE_BUF];
    if (check_len("kernel_size", k) < 0 || check_len("dilation", d) < 0 || check_len("padding", pad) < 0 ||
        check_len("stride", st) < 0)
        return NULL;
    if (CHECK_KERNEL(k) < 0 || CHECK_DILATION(d) < 0 || CHECK_PADDING(pad) < 0 || CHECK_STRIDE(st) < 0) return NULL;
    if (input->ndim < 3) {
        check_rank_index(input);
        return NULL;
    }
    const bool batched = input->ndim == 4;
    bool ok = input->ndim == 3 || input->ndim == 4;
    for (int i = batched ? 1 : 0; ok && i < input->ndim; i++) ok = input->sizes[i] != 0;
    if (!ok) {
        pct_error(PCT_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                     "non-zero dimensions for input, but got: %s", pct_shape_str(b4, sizeof b4, input->ndim, input->sizes));
        return NULL;
    }
    const int64_t N = batched ? input->sizes[0] : 1, C = input->sizes[input->ndim - 3];
    const int64_t H = input->sizes[input->ndim - 2], W = input->sizes[input->ndim - 1];
    const int64_t oh = floor_div(H + 2 * pad->v[0] - (d->v[0] * (k->v[0] - 1) + 1), st->v[0]) + 1;
    const int64_t ow = floor_div(W + 2 * pad->v[1] - (d->v[1] * (k->v[1] - 1) + 1), st->v[1]) + 1;
    if (oh < 1 || ow < 1) {
        pct_error(PCT_ERR_RUNTIME, "Given input with spatial size (%lld, %lld), kernel_size=%s, dilation=%s, "
                     "padding=%s, calculated shape of the array of sliding blocks as (%lld, %lld), but its components "
                     "must be at least one.", (long long)H, (long long)W, pair(b1, sizeof b1, k),
                     pair(b2, sizeof b2, d), pair(b3, sizeof b3, pad), (long long)oh, (long long)ow);
        return NULL;
    }
    if (!pct_dtype_is_floating(input->dtype) && !pct_dtype_is_complex(input->dtype) && input->dtype != PCT_BOOL) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"im2col_out_cpu\" not implemented for '%s'",
                     pct_dtype_cpp_name[input->dtype]);
        return NULL;
    }
    pct_im2col_geom g;
    fill_geom(&g, C, H, W, oh, ow, k, d, pad, st);
    const int64_t rows = C * pct_geom_kvol(&g), L = oh * ow;
    int64_t osz[3] = {N, rows, L};
    PCT_TRY(x = pct_contiguous(input));
    PCT_TRY(out = pct_tensor_empty(batched ? 3 : 2, batched ? osz : osz + 1, input->dtype, PCT_CPU, -1));
    const int isz = pct_dtype_itemsize[input->dtype];
    const char *src = pct_tensor_data(x);
    char *dst = pct_tensor_data(out);
    const int64_t planes = N * C;
    PCT_NOGIL_BEGIN
    if (out->numel >= 32768) {
        PCT_OMP(omp parallel for schedule(static))
        for (int64_t i = 0; i < planes; i++) {
            const int64_t n = i / C, ch = i % C;
            pct_im2col(&g, isz, src + n * C * H * W * isz, dst + n * rows * L * isz, L, ch, ch + 1, 0, L);
        }
    } else {
        for (int64_t n = 0; n < N; n++)
            pct_im2col(&g, isz, src + n * C * H * W * isz, dst + n * rows * L * isz, L, 0, C, 0, L);
    }
    PCT_NOGIL_END
    PCT_DECREF(x);
    return (pct_object *)out;
fail:
    PCT_XDECREF(x);
    PCT_XDECREF(out);
    return NULL;
}

/* _col2im(input, output_size, kernel_size, dilation, padding, stride): [N, C*kh*kw, L] -> [N, C, oH, oW] */
pct_object *pct_cpu_col2im(pct_call *c)
{
    PCT_ARGS(col2im);
    pct_tensor *input = arg.input, *x = NULL, *out = NULL;
    const pct_int_list *os = &arg.output_size, *k = &arg.kernel_size, *d = &arg.dilation, *pad = &arg.padding, *st = &arg.stride;
    char b0[64], b1[64], b2[64], b3[64], b4[64], bs[PCT_SHAPE_BUF];
    if (check_len("output_size", os) < 0 || check_len("kernel_size", k) < 0 || check_len("dilation", d) < 0 ||
        check_len("padding", pad) < 0 || check_len("stride", st) < 0)
        return NULL;
    if (CHECK_KERNEL(k) < 0 || CHECK_STRIDE(st) < 0 || CHECK_DILATION(d) < 0 || CHECK_PADDING(pad) < 0) return NULL;
    const bool batched = input->ndim == 3;
    bool ok = input->ndim == 2 || input->ndim == 3;
    for (int i = batched ? 1 : 0; ok && i < input->ndim; i++) ok = input->sizes[i] != 0;
    if (!ok) {
        pct_error(PCT_ERR_RUNTIME, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size "
                     "and non-zero dimensions for input, but got: %s",
                     pct_shape_str(bs, sizeof bs, input->ndim, input->sizes));
        return NULL;
    }
    const int64_t N = batched ? input->sizes[0] : 1, planes_in = input->sizes[input->ndim - 2];
    const int64_t L = input->sizes[input->ndim - 1], kvol = k->v[0] * k->v[1];
    if (planes_in % kvol != 0) {
        pct_error(PCT_ERR_RUNTIME, "Expected size of input's dimension 1 to be divisible by the product of "
                     "kernel_size, but got input.size(1)=%lld and kernel_size=%s.", (long long)planes_in,
                     pair(b1, sizeof b1, k));
        return NULL;
    }
    const int64_t H = os->v[0], W = os->v[1];
    const int64_t bh = floor_div(H + 2 * pad->v[0] - d->v[0] * (k->v[0] - 1) - 1, st->v[0]) + 1;
    const int64_t bw = floor_div(W + 2 * pad->v[1] - d->v[1] * (k->v[1] - 1) - 1, st->v[1]) + 1;
    if (L != bh * bw) {
        pct_error(PCT_ERR_RUNTIME, "Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s, "
                     "expected size of input's dimension 2 to match the calculated number of sliding blocks %lld * %lld "
                     "= %lld, but got input.size(2)=%lld.", pair(b0, sizeof b0, os), pair(b1, sizeof b1, k),
                     pair(b2, sizeof b2, d), pair(b3, sizeof b3, pad), pair(b4, sizeof b4, st), (long long)bh,
                     (long long)bw, (long long)(bh * bw), (long long)L);
        return NULL;
    }
    if (bh < 1 || bw < 1 || H < 1 || W < 1) {
        pct_error(PCT_ERR_RUNTIME, "Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s, "
                     "calculated shape of the array of sliding blocks as (%lld, %lld), which must be positive.",
                     pair(b0, sizeof b0, os), pair(b1, sizeof b1, k), pair(b2, sizeof b2, d), pair(b3, sizeof b3, pad),
                     pair(b4, sizeof b4, st), (long long)bh, (long long)bw);
        return NULL;
    }
    if (!pct_dtype_is_floating(input->dtype) && !pct_dtype_is_complex(input->dtype) && input->dtype != PCT_BOOL) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"col2im_out_cpu\" not implemented for '%s'",
                     pct_dtype_cpp_name[input->dtype]);
        return NULL;
    }
    /* float16/bfloat16 sum in float; bool too (a sum of 0/1 is nonzero exactly when torch's |= is true) */
    const int cd = pct_dtype_is_reduced_float(input->dtype) || input->dtype == PCT_BOOL ? PCT_FLOAT32 : input->dtype;
    const int64_t C = planes_in / kvol;
    pct_im2col_geom g;
    fill_geom(&g, C, H, W, bh, bw, k, d, pad, st);
    int64_t osz[4] = {N, C, H, W};
    if (cd == input->dtype) {
        PCT_TRY(x = pct_contiguous(input));
    } else {
        pct_tensor *t = pct_to_dtype(input, cd, false);
        PCT_TRY(t);
        x = pct_contiguous(t);
        PCT_DECREF(t);
        PCT_TRY(x);
    }
    PCT_TRY(out = pct_tensor_zeros(batched ? 4 : 3, batched ? osz : osz + 1, cd));
    const int isz = pct_dtype_itemsize[cd];
    const char *src = pct_tensor_data(x);
    char *dst = pct_tensor_data(out);
    const int64_t planes = N * C;
    PCT_NOGIL_BEGIN
    if (x->numel >= 32768) {
        PCT_OMP(omp parallel for schedule(static))
        for (int64_t i = 0; i < planes; i++) {
            const int64_t n = i / C, ch = i % C;
            pct_col2im(&g, cd, src + n * planes_in * L * isz, L, dst + n * C * H * W * isz, ch, ch + 1, 0, L);
        }
    } else {
        for (int64_t n = 0; n < N; n++)
            pct_col2im(&g, cd, src + n * planes_in * L * isz, L, dst + n * C * H * W * isz, 0, C, 0, L);
    }
    PCT_NOGIL_END
    PCT_DECREF(x);
    if (cd != input->dtype) {
        pct_tensor *r = pct_to_dtype(out, input->dtype, false);
        PCT_DECREF(out);
        return (pct_object *)r;
    }
    return (pct_object *)out;
fail:
    PCT_XDECREF(x);
    PCT_XDECREF(out);
    return NULL;
}
