/* conv.c: torch.convolution and its fused backward (ops_conv.def).
 *
 *   convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
 *   convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
 *                        transposed, output_padding, groups, output_mask) -> (gI, gW, gB)
 *
 * Both check their arguments as torch does (same error texts), build a plan (conv.h) and run
 * the primitives fwd / data / wgrad on contiguous copies in the compute dtype, choosing per
 * primitive: the depthwise loops (conv_depthwise.c), Winograd's F(2x2, 3x3) (conv_winograd.c)
 * and the direct float32 kernels (conv_direct.c) on AVX-512 CPUs, or the im2col + GEMM engine
 * (conv_engine.c). The batched 1-d, 2-d and
 * 3-d cases are one code path (Note [Convolution geometry], im2col.h); the unbatched forms
 * and padding='same' live in Python (pyctorch/nn/functional.py). Everything up to the primitives is
 * device-neutral: on another device they run on conv_device.c (Note [Device convolution]).
 */
#include "../shapes_only.h"
#include "../op.h"
#include "conv.h"
#include "gemm_lowp.h"
#include "../error.h"
#include "../checked.h"
#include "../iter.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* argument checks (torch's order and texts)                                             */
/* ------------------------------------------------------------------------------------ */

static int expand_param(const char *name, const pct_int_list *v, int nsp, int64_t *out)
{
    if (v->n == 1 || v->n == nsp) {
        for (int i = 0; i < nsp; i++) out[i] = v->v[v->n == 1 ? 0 : i];
        return 0;
    }
    char buf[PCT_SHAPE_BUF];
    pct_error(PCT_ERR_RUNTIME,
                 "expected %s to be a single integer value or a list of %d values to match the convolution "
                 "dimensions, but got %s=%s", name, nsp, name, pct_shape_str(buf, sizeof buf, v->n, v->v));
    return -1;
}

/* "(5 x 5)" */
static const char *sizes_x(char *buf, size_t n, int cnt, const int64_t *v)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < cnt && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? " x %lld" : "%lld", (long long)v[i]);
    return buf;
}

static int check_output_padding(int nsp, const int64_t *opad, const int64_t *stride, const int64_t *dil)
{
    bool ok = true;
    for (int i = 0; i < nsp; i++) ok &= opad[i] < stride[i] || opad[i] < dil[i];
    if (ok) return 0;
    /* torch reports through its 2-d (1-d problems) or 3-d shape check */
    static const char *const names[3] = {"depth", "height", "width"};
    int nd = nsp < 2 ? 2 : nsp;
    int64_t o[3], s[3], d[3];
    for (int i = 0; i < nd; i++) {
        int src = i - (nd - nsp);
        o[i] = src < 0 ? 0 : opad[src];
        s[i] = src < 0 ? 1 : stride[src];
        d[i] = src < 0 ? 1 : dil[src];
    }
    char buf[512];
    size_t at = (size_t)snprintf(buf, sizeof buf, "output padding must be smaller than either stride or dilation, but got");
    const int64_t *vals[3] = {o, s, d};
    static const char *const kinds[3] = {"output_padding", "stride", "dilation"};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < nd && at < sizeof buf; i++)
            at += (size_t)snprintf(buf + at, sizeof buf - at, " %s_%s: %lld", kinds[k], names[i + 3 - nd],
                                   (long long)vals[k][i]);
    pct_error_str(PCT_ERR_RUNTIME, buf);
    return -1;
}

/* Checks a convolution's arguments and fills the plan and the output shape
 * (out_sizes: input.ndim entries). 0, or -1 with torch's exception. */
static int conv_prepare(pct_tensor *input, pct_tensor *weight, pct_tensor *bias, const pct_int_list *stride_v,
                        const pct_int_list *pad_v, const pct_int_list *dil_v, bool transposed, const pct_int_list *opad_v,
                        int64_t groups, pct_conv_plan *p, int64_t *out_sizes)
{
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    int64_t stride[PCT_MAX_DIMS], pad[PCT_MAX_DIMS], dil[PCT_MAX_DIMS], opad[PCT_MAX_DIMS];
    if (weight->ndim < 3) {
        pct_error_str(PCT_ERR_RUNTIME, "weight should have at least three dimensions");
        return -1;
    }
    const int nsp = weight->ndim - 2;
    if (expand_param("stride", stride_v, nsp, stride) < 0 || expand_param("padding", pad_v, nsp, pad) < 0 ||
        expand_param("dilation", dil_v, nsp, dil) < 0 || expand_param("output_padding", opad_v, nsp, opad) < 0)
        return -1;
    if (groups <= 0) {
        pct_error_str(PCT_ERR_RUNTIME, "non-positive groups is not supported");
        return -1;
    }
    for (int i = 0; i < nsp; i++) {
        const char *msg = pad[i] < 0 ? "negative padding is not supported"
                        : (transposed && opad[i] < 0) ? "negative output_padding is not supported"
                        : stride[i] <= 0 ? "non-positive stride is not supported"
                        : dil[i] <= 0 ? "non-positive dilation is not supported" : NULL;
        if (msg) {
            pct_error_str(PCT_ERR_RUNTIME, msg);
            return -1;
        }
    }
    if (input->ndim != weight->ndim) {
        pct_error(PCT_ERR_RUNTIME,
                     "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of size "
                     "%s instead", weight->ndim, weight->ndim, pct_shape_str(a, sizeof a, weight->ndim, weight->sizes),
                     input->ndim, pct_shape_str(b, sizeof b, input->ndim, input->sizes));
        return -1;
    }
    if (nsp > 3) {
        pct_error(PCT_ERR_RUNTIME, "convolution: only 1, 2 and 3 spatial dimensions are supported, but got "
                     "weight of size %s", pct_shape_str(a, sizeof a, weight->ndim, weight->sizes));
        return -1;
    }
    const int64_t w0 = weight->sizes[0];
    if (w0 < groups) {
        pct_error(PCT_ERR_RUNTIME, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but "
                     "got weight of size %s instead", (long long)groups, (long long)groups,
                     pct_shape_str(a, sizeof a, weight->ndim, weight->sizes));
        return -1;
    }
    if (w0 % groups != 0) {
        pct_error(PCT_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, "
                     "but got weight of size [%s] instead", (long long)groups, (long long)groups,
                     pct_shape_str(a, sizeof a, weight->ndim, weight->sizes));
        return -1;
    }
    const int64_t bias_len = transposed ? weight->sizes[1] * groups : w0;
    if (!transposed && input->sizes[1] != weight->sizes[1] * groups) {
        pct_error(PCT_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
                     "but got %lld channels instead", (long long)groups,
                     pct_shape_str(a, sizeof a, weight->ndim, weight->sizes),
                     pct_shape_str(b, sizeof b, input->ndim, input->sizes), (long long)(weight->sizes[1] * groups),
                     (long long)input->sizes[1]);
        return -1;
    }
    if (transposed && input->sizes[1] != w0) {
        pct_error(PCT_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld "
                     "channels, but got %lld channels instead", pct_shape_str(a, sizeof a, weight->ndim, weight->sizes),
                     pct_shape_str(b, sizeof b, input->ndim, input->sizes), (long long)w0, (long long)input->sizes[1]);
        return -1;
    }
    if (bias && (bias->ndim != 1 || bias->sizes[0] != bias_len)) {
        pct_error(PCT_ERR_RUNTIME, "Given %sweight of size %s, expected bias to be 1-dimensional with %lld "
                     "elements, but got bias of size %s instead", transposed ? "transposed=1, " : "",
                     pct_shape_str(a, sizeof a, weight->ndim, weight->sizes), (long long)bias_len,
                     pct_shape_str(b, sizeof b, bias->ndim, bias->sizes));
        return -1;
    }
    int64_t insp[3], outsp[3] = {0}, ksp[3];
    for (int i = 0; i < nsp; i++) {
        insp[i] = input->sizes[2 + i];
        ksp[i] = weight->sizes[2 + i];
        if (pad[i] > INT64_MAX / 2) { /* torch's limit: twice the padding must fit */
            pct_error(PCT_ERR_RUNTIME, "Given padding=%lld at dimension %d , expected padding to be at most %lld",
                         (long long)pad[i], i, (long long)(INT64_MAX / 2));
            return -1;
        }
    }
    /* Note [Checked bounds]: the output size arithmetic of huge strides, dilations or paddings must not wrap into a
     * small "valid" size; where it would, the geometry is refused */
    bool wraps = false;
    if (!transposed) {
        int64_t padded[3], dk[3];
        bool ok = true;
        for (int i = 0; i < nsp; i++) {
            wraps |= pct_add_overflows(insp[i], 2 * pad[i], &padded[i]);
            wraps |= pct_mul_overflows(dil[i], ksp[i] - 1, &dk[i]) || pct_add_overflows(dk[i], 1, &dk[i]);
            ok &= padded[i] >= dk[i];
            outsp[i] = (padded[i] - dk[i]) / stride[i] + 1;
        }
        if (wraps) goto overflow;
        if (!ok) {
            pct_error(PCT_ERR_RUNTIME, "Calculated padded input size per channel: (%s). Kernel size: (%s). "
                         "Kernel size can't be greater than actual input size", sizes_x(a, sizeof a, nsp, padded),
                         sizes_x(b, sizeof b, nsp, dk));
            return -1;
        }
    } else {
        if (check_output_padding(nsp, opad, stride, dil) < 0) return -1;
        bool ok = true;
        for (int i = 0; i < nsp; i++) {
            int64_t span, dk;
            wraps |= pct_mul_overflows(insp[i] - 1, stride[i], &span) || pct_sub_overflows(span, 2 * pad[i], &span) ||
                     pct_mul_overflows(dil[i], ksp[i] - 1, &dk) || pct_add_overflows(span, dk, &span) ||
                     pct_add_overflows(span, opad[i], &span) || pct_add_overflows(span, 1, &outsp[i]);
            ok &= outsp[i] >= 1;
        }
        if (wraps) goto overflow;
        if (!ok) {
            pct_error(PCT_ERR_RUNTIME, "Given input size per channel: (%s). Calculated output size per channel: "
                         "(%s). Output size is too small", sizes_x(a, sizeof a, nsp, insp),
                         sizes_x(b, sizeof b, nsp, outsp));
            return -1;
        }
    }
    if (input->dtype != weight->dtype) {
        pct_error(PCT_ERR_RUNTIME, "Input type (torch.%sTensor) and weight type (torch.%sTensor) should be the "
                     "same or input should be a MKLDNN tensor and weight is a dense tensor",
                     pct_dtype_cpp_name[input->dtype], pct_dtype_cpp_name[weight->dtype]);
        return -1;
    }
    if (bias && bias->dtype != input->dtype) {
        pct_error(PCT_ERR_RUNTIME, "Input type (%s) and bias type (%s) should be the same",
                     pct_dtype_cpp_type_name[input->dtype], pct_dtype_cpp_type_name[bias->dtype]);
        return -1;
    }
    if (input->dtype == PCT_BOOL) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'",
                     transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu");
        return -1;
    }

    memset(p, 0, sizeof *p);
    p->N = input->sizes[0];
    p->G = groups;
    p->cs = w0 / groups;
    p->cb = weight->sizes[1];
    pct_im2col_geom *g = &p->geo;
    g->channels = p->cb;
    for (int i = 0; i < 3; i++) {
        int src = i - (3 - nsp);
        bool on = src >= 0;
        g->big[i] = on ? (transposed ? outsp[src] : insp[src]) : 1;
        g->small[i] = on ? (transposed ? insp[src] : outsp[src]) : 1;
        g->kernel[i] = on ? ksp[src] : 1;
        /* a stride over a single output position and a dilation of a single tap do not matter: 1 keeps the kernels'
           index arithmetic far from overflow (Note [Checked bounds]) */
        g->stride[i] = on && g->small[i] > 1 ? stride[src] : 1;
        g->pad[i] = on ? pad[src] : 0;
        g->dil[i] = on && g->kernel[i] > 1 ? dil[src] : 1;
    }
    p->bvol = pct_geom_bvol(g);
    p->svol = pct_geom_svol(g);
    p->kvol = pct_geom_kvol(g);
    p->K = p->cb * p->kvol;
    p->direct = true;
    for (int i = 0; i < 3; i++)
        p->direct &= g->kernel[i] == 1 && g->stride[i] == 1 && g->pad[i] == 0 && g->big[i] == g->small[i];
    /* bfloat16 stays bfloat16 where its GEMM runs and the products fill its 6 x 64 tiles (not depthwise or
       tiny-channel shapes): Note [bfloat16 convolution] */
    const bool bf16_native = input->device_type == PCT_CPU && input->dtype == PCT_BFLOAT16 && p->cs >= 8 && p->K >= 8 && pct_gemm_bf16_available();
    p->dtype = bf16_native ? PCT_BFLOAT16 : pct_dtype_is_reduced_float(input->dtype) ? PCT_FLOAT32 : input->dtype;
    p->acc_dtype = bf16_native ? PCT_FLOAT32 : p->dtype;
    p->fast32 = p->dtype == PCT_FLOAT32 && pct_conv_sgemm_available();
    p->depthwise = p->cb == 1 && p->G > 1 && p->kvol <= PCT_DW_MAX_KVOL &&
                   (p->dtype == PCT_FLOAT32 || p->dtype == PCT_FLOAT64);
    out_sizes[0] = p->N;
    out_sizes[1] = transposed ? p->cb * groups : w0;
    for (int i = 0; i < nsp; i++) out_sizes[2 + i] = outsp[i];
    return 0;
overflow:
    pct_error(PCT_ERR_RUNTIME, "convolution: the output size overflows for input size per channel (%s) with these "
                 "stride, padding and dilation values", sizes_x(a, sizeof a, nsp, insp));
    return -1;
}

/* Runs a task (gw_out: the weight gradient, written whole, when t->what has PCT_CONV_WGRAD):
 * on float32 AVX-512 CPUs Winograd's F(2x2, 3x3) takes the fwd of 3x3 stride-1 problems (Note
 * [Winograd convolution]), the direct kernels fwd and wgrad (any stride) and the data of
 * stride-1 problems; the im2col + GEMM engine takes the rest (and the depthwise case goes to
 * its own loops inside it). 0, or -1 when out of memory. */
static int conv_run(const pct_conv_task *t, char *gw_out)
{
    const pct_conv_plan *p = t->p;
    if (p->N > 0 && !p->depthwise && p->fast32) {
        pct_conv_task rest = *t;
        if ((rest.what & PCT_CONV_FWD) && pct_conv_winograd_usable(p)) {
            pct_conv_task fw = rest;
            fw.what = PCT_CONV_FWD;
            const int rc = pct_conv_winograd_fwd(&fw, pct_conv_threads());
            if (rc < 0) return -1;
            if (rc == 0) rest.what &= ~PCT_CONV_FWD;
            if (!rest.what) return 0;
        }
        if (rest.what & PCT_CONV_DATA) {
            const int rc = pct_conv_winograd_data(t, pct_conv_threads());
            if (rc < 0) return -1;
            if (rc == 0) rest.what &= ~PCT_CONV_DATA;
        }
        if (rest.what & PCT_CONV_DATA) {
            const int rc = pct_conv_direct_data(t);
            if (rc < 0) return -1;
            if (rc > 0) rest.what &= ~PCT_CONV_DATA;
        }
        if (pct_conv_direct_usable(p) && (rest.what & (PCT_CONV_FWD | PCT_CONV_WGRAD))) {
            pct_conv_task fw = rest;
            fw.what &= PCT_CONV_FWD | PCT_CONV_WGRAD;
            /* at 64 positions (8x8) the engine's batch product runs the forward 20% faster, the direct
               weight gradient stays ahead */
            if (p->svol <= 64) fw.what &= ~PCT_CONV_FWD;
            if (fw.what && pct_conv_direct_task(&fw, (float *)gw_out) < 0) return -1;
            rest.what &= ~fw.what;
        }
        return rest.what ? pct_conv_engine_run(&rest, gw_out) : 0;
    }
    return pct_conv_engine_run(t, gw_out);
}

/* grad_bias[c] = sum of go[n, c, :] (a bfloat16 go sums into float32: the plan's acc_dtype) */
#define CONV_BIAS_GRAD(N, T, ACC)                                                                   \
    static void bias_grad_##N(const T *go, int64_t nb, int64_t C, int64_t vol, T *gb)               \
    {                                                                                               \
        PCT_OMP(omp parallel for schedule(static) if (nb * C * vol > 32768))                        \
        for (int64_t c = 0; c < C; c++) {                                                           \
            ACC acc[8] = {0};                                                                       \
            for (int64_t n = 0; n < nb; n++) {                                                      \
                const T *x = go + (n * C + c) * vol;                                                \
                int64_t i = 0;                                                                      \
                for (; i + 8 <= vol; i += 8)                                                        \
                    for (int j = 0; j < 8; j++) acc[j] += (ACC)x[i + j];                            \
                for (; i < vol; i++) acc[0] += (ACC)x[i];                                           \
            }                                                                                       \
            ACC s = 0;                                                                              \
            for (int j = 0; j < 8; j++) s += acc[j];                                                \
            gb[c] = (T)s;                                                                           \
        }                                                                                           \
    }
/* float32: 16 float partial sums per sample (vectorised), samples added in double */
PCT_HOT static double sum_f32(const float *x, int64_t n)
{
    float acc[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) acc[j] += x[i + j];
    double s = 0;
    for (; i < n; i++) s += x[i];
    for (int j = 0; j < 16; j++) s += acc[j];
    return s;
}

static void bias_grad_f32(const float *go, int64_t nb, int64_t C, int64_t vol, float *gb)
{
    PCT_OMP(omp parallel for schedule(static) if (nb * C * vol > 32768))
    for (int64_t c = 0; c < C; c++) {
        double s = 0;
        for (int64_t n = 0; n < nb; n++) s += sum_f32(go + (n * C + c) * vol, vol);
        gb[c] = (float)s;
    }
}
/* bfloat16 (a plan that keeps it): float32 sums, as float32's, of the widened elements */
static void bias_grad_bf16(const uint16_t *go, int64_t nb, int64_t C, int64_t vol, float *gb)
{
    PCT_OMP(omp parallel for schedule(static) if (nb * C * vol > 32768))
    for (int64_t c = 0; c < C; c++) {
        float row[256];
        double s = 0;
        for (int64_t n = 0; n < nb; n++)
            for (int64_t i0 = 0; i0 < vol; i0 += 256) {
                const int64_t len = vol - i0 < 256 ? vol - i0 : 256;
                pct_lowp_to_f32(row, go + (n * C + c) * vol + i0, 1, len, len, 1, PCT_BFLOAT16, 1);
                s += sum_f32(row, len);
            }
        gb[c] = (float)s;
    }
}
CONV_BIAS_GRAD(f64, double, double)
CONV_BIAS_GRAD(u8, uint8_t, uint64_t)
CONV_BIAS_GRAD(i8, int8_t, uint64_t)
CONV_BIAS_GRAD(i16, int16_t, uint64_t)
CONV_BIAS_GRAD(i32, int32_t, uint64_t)
CONV_BIAS_GRAD(i64, int64_t, uint64_t)

static void bias_grad(int dt, const char *go, int64_t n, int64_t C, int64_t vol, char *gb)
{
    switch (dt) {
    case PCT_FLOAT32: bias_grad_f32((const float *)go, n, C, vol, (float *)gb); break;
    case PCT_BFLOAT16: bias_grad_bf16((const uint16_t *)go, n, C, vol, (float *)gb); break;
    case PCT_FLOAT64: bias_grad_f64((const double *)go, n, C, vol, (double *)gb); break;
    case PCT_UINT8: bias_grad_u8((const uint8_t *)go, n, C, vol, (uint8_t *)gb); break;
    case PCT_INT8: bias_grad_i8((const int8_t *)go, n, C, vol, (int8_t *)gb); break;
    case PCT_INT16: bias_grad_i16((const int16_t *)go, n, C, vol, (int16_t *)gb); break;
    case PCT_INT32: bias_grad_i32((const int32_t *)go, n, C, vol, (int32_t *)gb); break;
    case PCT_INT64: bias_grad_i64((const int64_t *)go, n, C, vol, (int64_t *)gb); break;
    default: break;
    }
}

/* ------------------------------------------------------------------------------------ */
/* the ops                                                                               */
/* ------------------------------------------------------------------------------------ */

/* A contiguous copy of t in dtype (a new reference; t itself when it already fits). */
static pct_tensor *as_compute(pct_tensor *t, int dtype)
{
    if (t->dtype == dtype) return pct_contiguous(t);
    pct_tensor *c = pct_to_dtype(t, dtype, false), *r;
    if (!c) return NULL;
    r = pct_contiguous(c);
    PCT_DECREF(c);
    return r;
}

/* r converted back to dtype (steals r). */
static pct_tensor *to_result(pct_tensor *r, int dtype)
{
    if (!r || r->dtype == dtype) return r;
    pct_tensor *c = pct_to_dtype(r, dtype, false);
    PCT_DECREF(r);
    return c;
}

/* Note [Device convolution] (conv_device.c): on another device only the floating dtypes have a GEMM */
static int device_dtype_check(const pct_tensor *input, bool transposed)
{
    if (input->device_type == PCT_CPU || pct_dtype_is_floating(input->dtype)) return 0;
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
              transposed ? "slow_conv_transpose2d_out_cuda" : "slow_conv2d_cuda", pct_dtype_cpp_name[input->dtype]);
    return -1;
}

static const char *data_or_null(pct_tensor *t) { return t ? pct_tensor_data(t) : NULL; }

static int run_task(const pct_conv_task *t, char *gw)
{
    if (pct_shapes_only) return 0; /* Note [Shapes-only runs] */
    int rc;
    PCT_NOGIL_BEGIN
    rc = conv_run(t, gw);
    PCT_NOGIL_END
    if (rc < 0) pct_error_nomem();
    return rc;
}

pct_object *pct_cpu_convolution(pct_call *c)
{
    PCT_ARGS(convolution);
    pct_tensor *input = arg.input, *weight = arg.weight, *bias = (arg.bias == NULL) ? NULL : arg.bias;
    const bool transposed = arg.transposed;
    pct_conv_plan p;
    int64_t osz[5];
    if (conv_prepare(input, weight, bias, &arg.stride, &arg.padding, &arg.dilation, transposed, &arg.output_padding, arg.groups, &p, osz) < 0)
        return NULL;
    if (device_dtype_check(input, transposed) < 0) return NULL;
    pct_tensor *x = NULL, *w = NULL, *b = NULL, *out = NULL;
    PCT_TRY(x = as_compute(input, p.dtype));
    PCT_TRY(w = as_compute(weight, p.dtype));
    if (bias) PCT_TRY(b = as_compute(bias, p.dtype));
    PCT_TRY(out = pct_tensor_empty(input->ndim, osz, p.dtype, input->device_type, input->device_index));
    if (input->device_type != PCT_CPU) { /* Note [Device convolution] */
        const pct_conv_tensors dt = transposed ? (pct_conv_tensors){.what = PCT_CONV_DATA, .small_in = x, .w = w,
                                                                    .bias_big = b, .big_out = out}
                                               : (pct_conv_tensors){.what = PCT_CONV_FWD, .big = x, .w = w,
                                                                    .bias_small = b, .small_out = out};
        if (out->numel && pct_conv_device_run(&p, &dt) < 0) goto fail;
        goto done;
    }
    pct_conv_task t = {&p, 0, NULL, NULL, pct_tensor_data(w), NULL, NULL, NULL, NULL};
    if (!transposed) {
        t.what = PCT_CONV_FWD;
        t.big = pct_tensor_data(x);
        t.bias_small = data_or_null(b);
        t.small_out = pct_tensor_data(out);
    } else {
        t.what = PCT_CONV_DATA;
        t.small_in = pct_tensor_data(x);
        t.bias_big = data_or_null(b);
        t.big_out = pct_tensor_data(out);
    }
    if (out->numel && run_task(&t, NULL) < 0) goto fail;
done:
    PCT_DECREF(x);
    PCT_DECREF(w);
    PCT_XDECREF(b);
    return (pct_object *)to_result(out, input->dtype);
fail:
    PCT_XDECREF(x);
    PCT_XDECREF(w);
    PCT_XDECREF(b);
    PCT_XDECREF(out);
    return NULL;
}

pct_object *pct_cpu_convolution_backward(pct_call *c)
{
    PCT_ARGS(convolution_backward);
    pct_tensor *go = arg.grad_output, *input = arg.input, *weight = arg.weight;
    const bool transposed = arg.transposed;
    const pct_int_list *mask = &arg.output_mask;
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF];
    pct_conv_plan p;
    int64_t osz[5];
    if (mask->n != 3) {
        pct_error(PCT_ERR_RUNTIME, "convolution_backward: output_mask must have 3 entries, got %d", mask->n);
        return NULL;
    }
    if (conv_prepare(input, weight, NULL, &arg.stride, &arg.padding, &arg.dilation, transposed, &arg.output_padding, arg.groups, &p, osz) < 0)
        return NULL;
    if (go->ndim != input->ndim || memcmp(go->sizes, osz, sizeof(int64_t) * (size_t)input->ndim) != 0) {
        pct_error(PCT_ERR_RUNTIME, "convolution_backward: expected grad_output of size %s, but got %s",
                     pct_shape_str(a, sizeof a, input->ndim, osz), pct_shape_str(b, sizeof b, go->ndim, go->sizes));
        return NULL;
    }
    if (go->dtype != input->dtype) {
        pct_error(PCT_ERR_RUNTIME, "convolution_backward: expected grad_output of dtype %s (the input's), but got %s",
                     pct_dtype_name[input->dtype], pct_dtype_name[go->dtype]);
        return NULL;
    }
    const bool need_i = mask->v[0] != 0, need_w = mask->v[1] != 0, need_b = mask->v[2] != 0;
    if (device_dtype_check(input, transposed) < 0) return NULL;
    const int dev = input->device_type, di = input->device_index;
    pct_tensor *gc = NULL, *x = NULL, *w = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    PCT_TRY(gc = as_compute(go, p.dtype));
    if (need_w) PCT_TRY(x = as_compute(input, p.dtype));
    if (need_i) PCT_TRY(w = as_compute(weight, p.dtype));
    if (need_i) PCT_TRY(gi = pct_tensor_empty(input->ndim, input->sizes, p.dtype, dev, di));
    if (need_w) PCT_TRY(gw = pct_tensor_empty(weight->ndim, weight->sizes, p.acc_dtype, dev, di));
    if (need_b) {
        PCT_TRY(gb = pct_tensor_empty(1, &osz[1], p.acc_dtype, dev, di));
        int64_t vol = 1;
        for (int i = 2; i < go->ndim; i++) vol *= go->sizes[i];
        if (dev != PCT_CPU) {
            if (pct_conv_device_bias_grad(gc, osz[0], osz[1], vol, gb) < 0) goto fail;
        } else {
            PCT_NOGIL_BEGIN
            bias_grad(p.dtype, pct_tensor_data(gc), osz[0], osz[1], vol, pct_tensor_data(gb));
            PCT_NOGIL_END
        }
    }
    if ((need_i || need_w) && dev != PCT_CPU) { /* Note [Device convolution] */
        const pct_conv_tensors dt = transposed
            ? (pct_conv_tensors){.what = (need_i ? PCT_CONV_FWD : 0) | (need_w ? PCT_CONV_WGRAD : 0), .big = gc,
                                 .small_in = x, .w = w, .small_out = gi, .gw = gw}
            : (pct_conv_tensors){.what = (need_i ? PCT_CONV_DATA : 0) | (need_w ? PCT_CONV_WGRAD : 0), .big = x,
                                 .small_in = gc, .w = w, .big_out = gi, .gw = gw};
        if (pct_conv_device_run(&p, &dt) < 0) goto fail;
    } else if (need_i || need_w) {
        pct_conv_task t = {&p, 0, NULL, NULL, data_or_null(w), NULL, NULL, NULL, NULL};
        if (!transposed) {  /* big = input, small = grad_output */
            t.what = (need_i ? PCT_CONV_DATA : 0) | (need_w ? PCT_CONV_WGRAD : 0);
            t.big = data_or_null(x);
            t.small_in = pct_tensor_data(gc);
            t.big_out = (char *)data_or_null(gi);
        } else {            /* big = grad_output, small = input */
            t.what = (need_i ? PCT_CONV_FWD : 0) | (need_w ? PCT_CONV_WGRAD : 0);
            t.big = pct_tensor_data(gc);
            t.small_in = data_or_null(x);
            t.small_out = (char *)data_or_null(gi);
        }
        if (run_task(&t, (char *)data_or_null(gw)) < 0) goto fail;
    }
    PCT_CLEAR(gc);
    PCT_CLEAR(x);
    PCT_CLEAR(w);
    gi = to_result(gi, input->dtype);
    gw = to_result(gw, input->dtype);
    gb = to_result(gb, input->dtype);
    if ((need_i && !gi) || (need_w && !gw) || (need_b && !gb)) goto fail;
    /* the three gradients, None for one not asked for; the tuple takes the references */
    pct_object *grads[3] = {gi ? (pct_object *)gi : pct_none(), gw ? (pct_object *)gw : pct_none(),
                            gb ? (pct_object *)gb : pct_none()};
    return pct_tuple_steal(3, grads);
fail:
    PCT_XDECREF(gc);
    PCT_XDECREF(x);
    PCT_XDECREF(w);
    PCT_XDECREF(gi);
    PCT_XDECREF(gw);
    PCT_XDECREF(gb);
    return NULL;
}
