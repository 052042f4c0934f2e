/* conv_device.c: the convolution primitives of conv.h (fwd, data, wgrad) and the bias gradient on a device other than
 * the CPU.
 *
 * Note [Device convolution]
 * conv.c is device-neutral up to the primitives: argument checks, the plan, the contiguous copies in the compute dtype
 * and the results all live on the input's device. On the CPU the primitives run on conv_engine.c and its kin; on
 * another device they run here, as im2col + GEMM over the batch, one sample at a time as the CPU's engine does:
 *   fwd    cols = im2col(big[n]);        small[n, g] (+)= W[g] @ cols[g]            (G products in one batched GEMM)
 *   wgrad  cols = im2col(big[n]);        gW[g] (+)= small[n, g] @ cols[g]^T         (+= from the second sample on)
 *   data   cols[g] = W[g]^T @ small[n, g];  big[n] = col2im(cols)
 * The column lowering is the backend's conv_cols (conv_cols_call.h; CUDA: csrc/cuda/conv_cols.cu), the products are
 * the backend's gemm (Note [Device GEMM]) through pct_la_device_gemm. col2im gathers (each big element sums its own
 * column entries in a fixed order) and the weight gradient accumulates sample after sample on one stream, so every
 * result is the same on every run, without atomics. A 1x1 plan (p->direct) skips the columns: big is its own column
 * matrix. The biases are products with a vector of ones: fwd starts from bias x ones^T (then the GEMM adds, as the
 * CPU's engine fills the rows before adding), data adds it after col2im, and the bias gradient is
 * ones^T x (grad_output[n] x ones) over the samples. The device computes in float32 or float64 (conv.c widens
 * float16 and bfloat16 to float32 as the CPU does); other dtypes have no device GEMM and raise its error.
 */
#include "conv.h"
#include "blas_internal.h"
#include "../backend.h"
#include "../error.h"
#include "../iter.h"

int pct_conv_cols_on_device(const pct_conv_cols_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->conv_cols) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "convolution is not implemented on the '%s' device",
                  pct_device_type_name(device_type));
        return -1;
    }
    return b->conv_cols(call);
}

static const coef one = {1.0, 1, false, 0.0}, zero = {0.0, 0, true, 0.0};

/* t (a contiguous device tensor) = value; 0, or -1 with an error */
static int fill(pct_tensor *t, double value)
{
    const pct_backend *b = pct_backend_of(t->device_type);
    const pct_scalar s = {.kind = PCT_SCALAR_FLOAT, .d = value};
    return b ? b->fill(t, &s) : -1;
}

/* n ones of dtype on like's device; NULL with an error */
static pct_tensor *ones(const pct_tensor *like, int dtype, int64_t n)
{
    pct_tensor *t = pct_tensor_empty(1, &n, dtype, like->device_type, like->device_index);
    if (t && fill(t, 1.0) < 0) PCT_CLEAR(t);
    return t;
}

/* One operand of a batched product: `t`'s elements from `off` on, as `batch` matrices `bs` apart with strides rs, cs. */
typedef struct operand {
    pct_tensor *t;
    int64_t off, bs, rs, cs;
} operand;

/* C[i] = A[i] @ B[i] (+ C[i] when acc) for the batch i < batch; A is m x k, B k x n. 0, or -1 with an error. */
static int product(operand c, operand a, operand b, int64_t batch, int64_t m, int64_t n, int64_t k, bool acc)
{
    if (batch == 0 || m == 0 || n == 0) return 0;
    const int64_t shape[3] = {batch, m, n};
    pct_tensor *cv = NULL, *av = NULL, *bv = NULL;
    int rc = -1;
    if (k == 0) { /* nothing to add: C keeps its values, or becomes zero */
        if (acc) return 0;
        const int64_t st[3] = {c.bs, c.rs, c.cs};
        if (!(cv = pct_tensor_view_of(c.t, 3, shape, st, c.t->offset + c.off))) return -1;
        rc = fill(cv, 0.0);
        PCT_DECREF(cv);
        return rc;
    }
    const int64_t ash[2] = {m, k}, ast[2] = {a.rs, a.cs}, bsh[2] = {k, n}, bst[2] = {b.rs, b.cs};
    const int64_t csh[2] = {m, n}, cst[2] = {c.rs, c.cs};
    /* the views start at the operands' first matrices; the batch runs through the batch strides */
    if ((av = pct_tensor_view_of(a.t, 2, ash, ast, a.t->offset + a.off)) &&
        (bv = pct_tensor_view_of(b.t, 2, bsh, bst, b.t->offset + b.off)) &&
        (cv = pct_tensor_view_of(c.t, 2, csh, cst, c.t->offset + c.off))) {
        const int64_t abs_[1] = {batch > 1 ? a.bs : 0}, bbs[1] = {batch > 1 ? b.bs : 0}, cbs[1] = {c.bs};
        rc = pct_la_device_gemm(cv, cbs, c.rs, c.cs, av, abs_, a.rs, a.cs, bv, bbs, b.rs, b.cs, 1, &batch, m, n, k, one,
                                acc ? one : zero);
    }
    PCT_XDECREF(av);
    PCT_XDECREF(bv);
    PCT_XDECREF(cv);
    return rc;
}

/* the column lowering of sample n: big tensor `big` (channels G * cb) <-> cols */
static int lower(const pct_conv_plan *p, pct_tensor *big, int64_t n, pct_tensor *cols, bool to_cols)
{
    const int64_t stride = p->G * p->cb * p->bvol;
    pct_conv_cols_call g = {.dtype = p->dtype, .itemsize = pct_dtype_itemsize[p->dtype],
                            .device_index = big->device_index, .to_cols = to_cols, .channels = p->G * p->cb};
    for (int d = 0; d < 3; d++) {
        g.big[d] = p->geo.big[d];
        g.small[d] = p->geo.small[d];
        g.kernel[d] = p->geo.kernel[d];
        g.stride[d] = p->geo.stride[d];
        g.pad[d] = p->geo.pad[d];
        g.dil[d] = p->geo.dil[d];
    }
    char *b = (char *)pct_tensor_data(big) + n * stride * g.itemsize, *c = (char *)pct_tensor_data(cols);
    g.src = to_cols ? b : c;
    g.dst = to_cols ? c : b;
    return pct_conv_cols_on_device(&g, big->device_type);
}

/* dst[n] (+)= bias x ones^T over the batch: rows x len per sample */
static int bias_rows(pct_tensor *dst, pct_tensor *bias, pct_tensor *ones_row, int64_t N, int64_t rows, int64_t len,
                     bool acc)
{
    const operand c = {dst, 0, rows * len, len, 1}, a = {bias, 0, 0, 1, 1}, b = {ones_row, 0, 0, len, 1};
    return product(c, a, b, N, rows, len, 1, acc);
}

int pct_conv_device_run(const pct_conv_plan *p, const pct_conv_tensors *t)
{
    const int64_t N = p->N, G = p->G, cb = p->cb, cs = p->cs, K = p->K, sv = p->svol, bv = p->bvol;
    const int what = t->what;
    const pct_tensor *dev = t->big ? t->big : t->small_in;
    pct_tensor *cols = NULL, *row = NULL;
    int rc = -1;
    if ((what & PCT_CONV_WGRAD) && (N == 0 || sv == 0) && fill(t->gw, 0.0) < 0) return -1;
    if (N == 0) return 0;
    const bool need_cols = !p->direct && K > 0;
    if (need_cols) {
        const int64_t shape[2] = {G * K, sv};
        PCT_TRY(cols = pct_tensor_empty(2, shape, p->dtype, dev->device_type, dev->device_index));
    }
    if ((what & PCT_CONV_FWD) && t->bias_small) {
        PCT_TRY(row = ones(dev, p->dtype, sv));
        if (bias_rows(t->small_out, t->bias_small, row, N, G * cs, sv, false) < 0) goto fail;
    }
    for (int64_t n = 0; n < N; n++) {
        /* cols as G matrices K x sv: the lowered big[n], or big[n] itself for a 1x1 plan */
        const operand colm = need_cols ? (operand){cols, 0, K * sv, sv, 1}
                                       : (operand){t->big, n * G * cb * bv, cb * bv, bv, 1};
        if ((what & (PCT_CONV_FWD | PCT_CONV_WGRAD)) && need_cols && lower(p, t->big, n, cols, true) < 0) goto fail;
        if (what & PCT_CONV_FWD) {
            const operand c = {t->small_out, n * G * cs * sv, cs * sv, sv, 1}, a = {t->w, 0, cs * K, K, 1};
            if (product(c, a, colm, G, cs, sv, K, t->bias_small != NULL) < 0) goto fail;
        }
        if (what & PCT_CONV_WGRAD) {
            const operand c = {t->gw, 0, cs * K, K, 1}, a = {t->small_in, n * G * cs * sv, cs * sv, sv, 1};
            const operand b = {colm.t, colm.off, colm.bs, colm.cs, colm.rs}; /* cols^T: sv x K */
            if (product(c, a, b, G, cs, K, sv, n > 0) < 0) goto fail;
        }
        if (what & PCT_CONV_DATA) {
            const operand a = {t->w, 0, cs * K, 1, K}, b = {t->small_in, n * G * cs * sv, cs * sv, sv, 1}; /* W^T */
            const operand c = need_cols ? colm : (operand){t->big_out, n * G * cb * bv, cb * bv, bv, 1};
            if (product(c, a, b, G, K, sv, cs, false) < 0) goto fail;
            if (need_cols && lower(p, t->big_out, n, cols, false) < 0) goto fail;
        }
    }
    if ((what & PCT_CONV_DATA) && t->bias_big) {
        PCT_TRY(row = ones(dev, p->dtype, bv)); /* fwd and data never share a task: row was not made above */
        if (bias_rows(t->big_out, t->bias_big, row, N, G * cb, bv, true) < 0) goto fail;
    }
    rc = 0;
fail:
    PCT_XDECREF(cols);
    PCT_XDECREF(row);
    return rc;
}

int pct_conv_device_bias_grad(pct_tensor *go, int64_t N, int64_t C, int64_t vol, pct_tensor *gb)
{
    if (N == 0 || vol == 0) return C ? fill(gb, 0.0) : 0;
    pct_tensor *ov = NULL, *on = NULL, *per = NULL;
    int rc = -1;
    const int64_t shape[2] = {N, C};
    PCT_TRY(ov = ones(go, go->dtype, vol));
    PCT_TRY(on = ones(go, go->dtype, N));
    PCT_TRY(per = pct_tensor_empty(2, shape, go->dtype, go->device_type, go->device_index));
    /* per[n, c] = sum over the positions of go[n, c, :]; gb[c] = sum over the samples of per[n, c] */
    if (product((operand){per, 0, C, 1, 1}, (operand){go, 0, C * vol, vol, 1}, (operand){ov, 0, 0, 1, 1}, N, C, 1,
                vol, false) < 0 ||
        product((operand){gb, 0, 0, C, 1}, (operand){on, 0, 0, N, 1}, (operand){per, 0, 0, C, 1}, 1, 1, C, N,
                false) < 0)
        goto fail;
    rc = 0;
fail:
    PCT_XDECREF(ov);
    PCT_XDECREF(on);
    PCT_XDECREF(per);
    return rc;
}
