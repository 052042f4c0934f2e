/* attention.c: fused scaled dot-product attention on the CPU (the kernels of
 * ops_attention.def):
 *   _flash_attention_cpu(query, key, value, attn_mask, is_causal, scale) -> (out, logsumexp)
 *   _flash_attention_cpu_backward(grad_out, query, key, value, output, logsumexp, attn_mask,
 *                                 is_causal, scale, grad_logsumexp, output_mask) -> (dq, dk, dv)
 * query (B..., Tq, E), key (B..., Tk, E), value (B..., Tk, Ev) with the same batch dims
 * (F.scaled_dot_product_attention broadcasts them first); attn_mask (B..., Tq, Tk), bool
 * (True = attend) or of the query's dtype (added to the scores), any strides.
 *
 * Note [Flash attention on the CPU]
 * out = softmax(scale Q K^T + mask) V is computed one block of query rows at a time
 * against one block of keys at a time, with an online softmax: each row keeps its
 * running max m and sum l; a new block of scores S raises the max to m', its
 * probabilities exp(S - m') are summed into l (after l *= exp(m - m')), and the output
 * rows, rescaled by the same factor, accumulate exp(S - m') V. The score tile (bq x bk)
 * is the only quadratic buffer, per thread: memory is O(block^2), never O(Tq Tk). The
 * two products per tile are GEMMs (OpenBLAS, single-threaded inside the OpenMP region);
 * the work items (batch, query block) run in parallel. With is_causal (top-left
 * aligned, like torch's math path: row i sees keys j <= i) the key blocks wholly above
 * the diagonal are never visited. logsumexp = m + log(l) per row is the second output.
 *
 * The backward recomputes P = exp(S - logsumexp) tile by tile (no running max needed)
 * and with D = rowsum(dO * O) - grad_logsumexp:
 *   dV_j += P^T dO_i,  dP = dO_i V_j^T,  dS = P (dP - D),  dQ_i += scale dS K_j,
 *   dK_j += scale dS^T Q_i.
 * dQ rows belong to their query block, dK/dV rows to their key block: with at least as
 * many batches as threads a thread owns whole batches (no races); otherwise the query
 * blocks of a batch are shared out and each thread sums dK/dV into a private O(Tk)
 * buffer, added up at the end (Note [Attention backward parallelism] in the code below).
 *
 * Rows that attend to nothing (every score -inf) give out = 0, logsumexp = 0 and zero
 * gradients, as torch's CPU kernels do.
 *
 * Note [Reduced-precision attention]
 * bfloat16 and float16 inputs run the float32 kernel, as torch's CPU flash attention
 * accumulates in float for them: query, key, value (and grad_out, output, a mask of the
 * query's dtype) are converted to float32 rows on entry, and the results are rounded to
 * the input dtype on exit; logsumexp (and its gradient) is float32, as in torch, and a
 * float32 mask is used as it is. The conversions cost O(T E) memory and time per call,
 * against the O(T^2 E) of the products: never a quadratic buffer, and under 1% of the time
 * at T = 512 (benchmarks/bench_attention.py, bfloat16 cases). */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "blas.h"
#include "attention_rows.h"
#include "gemm_f32.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef _OPENMP
#define PCT_OMP(x) _Pragma(#x)
#else
#define PCT_OMP(x)
#endif

enum { PCT_ATTN_MASK_NONE, PCT_ATTN_MASK_BOOL, PCT_ATTN_MASK_ADD };

/* Everything a typed kernel reads; pointers are element-typed by the kernel. Strides are
 * in elements; q/k/v/dout rows have unit stride along the last dim. */
typedef struct attn_args {
    int64_t nb, tq, tk, e, ev;        /* batches, query rows, keys, head dims */
    int64_t bq, bk;                   /* tile sizes */
    const char *q, *k, *v, *mask, *dout, *o, *glse;
    int64_t nkb, ldp;                 /* key blocks per batch; panel row stride (Note [Transposed key panels]) */
    bool mk;                          /* float32 products through the AVX-512 micro-kernel */
    const int64_t *qoff, *koff, *voff, *moff, *dooff; /* per-batch element offsets */
    int64_t q_rs, k_rs, v_rs, do_rs, m_rs, m_cs;
    int mask_kind;
    bool causal, need_q, need_k, need_v;
    double scale;
    char *out, *lse;                  /* forward outputs (contiguous); lse read by backward */
    char *dq, *dk, *dv;               /* backward outputs (contiguous, zeroed) */
    int nthreads;
    int failed;                       /* out of memory in a thread */
} attn_args;

/* ---- GEMM on raw row-major blocks (single-threaded inside the parallel regions) ---- */

/* C = alpha * op(X) @ op(Y) + beta * C (op: transposed when ta / tb), through pct_gemm (blas.h) */
static inline void gemm_any(int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void *x,
                            int64_t ldx, const void *y, int64_t ldy, double beta, void *c, int64_t ldc, int *failed)
{
    if (pct_gemm(dtype, m, n, k, alpha, x, ta ? 1 : ldx, ta ? ldx : 1, y, tb ? 1 : ldy, tb ? ldy : 1, beta, c, ldc,
                 1) < 0)
        *failed = 1;
}

static inline void gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *x,
                            int64_t ldx, const float *y, int64_t ldy, float beta, float *c, int64_t ldc, int *failed)
{
    gemm_any(PCT_FLOAT32, ta, tb, m, n, k, alpha, x, ldx, y, ldy, beta, c, ldc, failed);
}

static inline void gemm_f64(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *x,
                            int64_t ldx, const double *y, int64_t ldy, double beta, double *c, int64_t ldc,
                            int *failed)
{
    gemm_any(PCT_FLOAT64, ta, tb, m, n, k, alpha, x, ldx, y, ldy, beta, c, ldc, failed);
}

/* op(X) @ Y; float32 through the unpacked AVX-512 micro-kernels (gemm_f32.h) where the CPU has them */
static inline void mm_f32(const attn_args *a, bool ta, int64_t m, int64_t n, int64_t k, float alpha, const float *x,
                          int64_t ldx, const float *y, int64_t ldy, float beta, float *c, int64_t ldc, int *failed)
{
    if (a->mk) pct_sgemm_small(m, n, k, alpha, x, ta ? 1 : ldx, ta ? ldx : 1, y, ldy, beta, c, ldc);
    else gemm_f32(ta, false, m, n, k, alpha, x, ldx, y, ldy, beta, c, ldc, failed);
}

static inline void mm_f64(const attn_args *a, bool ta, int64_t m, int64_t n, int64_t k, double alpha,
                          const double *x, int64_t ldx, const double *y, int64_t ldy, double beta, double *c,
                          int64_t ldc, int *failed)
{
    (void)a;
    gemm_f64(ta, false, m, n, k, alpha, x, ldx, y, ldy, beta, c, ldc, failed);
}

/* ---- row loops: float32 vectorised (attention_rows.c), float64 plain ---- */

static const pct_attn_rows_f32 *rows32; /* set under the GIL before any kernel runs */

static double max_f64(const double *x, int64_t n)
{
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

static double exp_sum_f64(double *x, int64_t n, double m)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (x[i] = exp(x[i] - m));
    return s;
}

static void ds_f64(double *dp, const double *p, int64_t n, double d)
{
    for (int64_t i = 0; i < n; i++) dp[i] = p[i] * (dp[i] - d);
}

/* ---- the typed kernels ---- */

#define SC float
#define FN(name) name##_f32
#define GEMM gemm_f32
#define MM mm_f32
#define ROW_MAX rows32->max
#define ROW_EXP_SUM rows32->exp_sum
#define ROW_DS rows32->ds
#define EXP expf
#define LOG logf
#include "attention_impl.h"
#undef SC
#undef FN
#undef GEMM
#undef MM
#undef ROW_MAX
#undef ROW_EXP_SUM
#undef ROW_DS
#undef EXP
#undef LOG

#define SC double
#define FN(name) name##_f64
#define GEMM gemm_f64
#define MM mm_f64
#define ROW_MAX max_f64
#define ROW_EXP_SUM exp_sum_f64
#define ROW_DS ds_f64
#define EXP exp
#define LOG log
#include "attention_impl.h"
#undef SC
#undef FN
#undef GEMM
#undef MM
#undef ROW_MAX
#undef ROW_EXP_SUM
#undef ROW_DS
#undef EXP
#undef LOG

/* ---- argument checks and preparation (GIL held) ---- */

static bool same_shape(const pct_tensor *a, int ndim, const int64_t *sizes)
{
    return a->ndim == ndim && memcmp(a->sizes, sizes, sizeof(int64_t) * (size_t)ndim) == 0;
}

static bool lowp(int dtype)
{
    return dtype == PCT_BFLOAT16 || dtype == PCT_FLOAT16;
}

/* The dtype the kernels compute in and logsumexp has (Note [Reduced-precision attention]). */
static int compute_dtype(int dtype)
{
    return lowp(dtype) ? PCT_FLOAT32 : dtype;
}

/* q, k, v: ranks, batch dims, head dims and dtypes agree. */
static int check_qkv(const char *name, pct_tensor *q, pct_tensor *k, pct_tensor *v)
{
    char a[PCT_SHAPE_BUF], b[PCT_SHAPE_BUF], c[PCT_SHAPE_BUF];
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2 || q->ndim != k->ndim || q->ndim != v->ndim) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s: expected query, key and value of one rank >= 2, got query %s, key %s and value %s", name,
                     pct_shape_str(a, sizeof a, q->ndim, q->sizes), pct_shape_str(b, sizeof b, k->ndim, k->sizes),
                     pct_shape_str(c, sizeof c, v->ndim, v->sizes));
        return -1;
    }
    const int nd = q->ndim;
    if (memcmp(q->sizes, k->sizes, sizeof(int64_t) * (size_t)(nd - 2)) != 0 ||
        memcmp(q->sizes, v->sizes, sizeof(int64_t) * (size_t)(nd - 2)) != 0 || k->sizes[nd - 1] != q->sizes[nd - 1] ||
        v->sizes[nd - 2] != k->sizes[nd - 2]) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s: expected query (B..., Tq, E), key (B..., Tk, E) and value (B..., Tk, Ev) with the same batch "
                     "dims, got query %s, key %s and value %s",
                     name, pct_shape_str(a, sizeof a, q->ndim, q->sizes), pct_shape_str(b, sizeof b, k->ndim, k->sizes),
                     pct_shape_str(c, sizeof c, v->ndim, v->sizes));
        return -1;
    }
    if (q->dtype != k->dtype || q->dtype != v->dtype) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s: expected query, key and value to have the same dtype, but got query.dtype: %s key.dtype: %s "
                     "and value.dtype: %s instead.",
                     name, pct_dtype_cpp_type_name[q->dtype], pct_dtype_cpp_type_name[k->dtype],
                     pct_dtype_cpp_type_name[v->dtype]);
        return -1;
    }
    if (q->dtype != PCT_FLOAT32 && q->dtype != PCT_FLOAT64 && !lowp(q->dtype)) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s: not implemented for '%s' (float32 and float64, bfloat16 and float16 computed in float32)",
                     name, pct_dtype_cpp_name[q->dtype]);
        return -1;
    }
    for (int d = nd - 2; d < nd; d++)
        if (q->sizes[d] >= INT32_MAX || k->sizes[d] >= INT32_MAX || v->sizes[d] >= INT32_MAX) {
            pct_error(PCT_ERR_RUNTIME, "%s: sequence lengths and head dims must be below 2^31", name);
            return -1;
        }
    return 0;
}

/* The mask: shape (B..., Tq, Tk), bool or the query's dtype (or float32 for a reduced-precision query). */
static int check_mask(const char *name, pct_tensor *m, const pct_tensor *q, const pct_tensor *k)
{
    char a[PCT_SHAPE_BUF];
    const int nd = q->ndim;
    int64_t want[PCT_MAX_DIMS];
    memcpy(want, q->sizes, sizeof(int64_t) * (size_t)(nd - 1));
    want[nd - 1] = k->sizes[nd - 2];
    if (!same_shape(m, nd, want)) {
        char b[PCT_SHAPE_BUF];
        pct_error(PCT_ERR_RUNTIME, "%s: expected attn_mask of shape %s, got %s", name,
                     pct_shape_str(b, sizeof b, nd, want), pct_shape_str(a, sizeof a, m->ndim, m->sizes));
        return -1;
    }
    if (m->dtype != PCT_BOOL && m->dtype != q->dtype && m->dtype != compute_dtype(q->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected attn_mask of dtype bool, %s or %s, got %s", name,
                     pct_dtype_cpp_name[q->dtype], pct_dtype_cpp_name[compute_dtype(q->dtype)],
                     pct_dtype_cpp_name[m->dtype]);
        return -1;
    }
    return 0;
}

/* t itself (new reference) when its rows can be handed to BLAS as they are: unit stride
 * along the last dim and a row stride that fits an int and does not overlap rows;
 * otherwise a contiguous copy. *rs gets the row stride to use. */
static pct_tensor *blas_rows(pct_tensor *t, int64_t *rs)
{
    const int nd = t->ndim;
    const int64_t cols = t->sizes[nd - 1], rows = t->sizes[nd - 2];
    const int64_t cs = t->strides[nd - 1], r = t->strides[nd - 2];
    const int64_t minld = cols > 1 ? cols : 1;
    bool ok = (cs == 1 || cols <= 1) && (rows <= 1 || (r >= minld && r < INT32_MAX));
    for (int d = 0; d < nd - 2 && ok; d++) ok = t->strides[d] >= 0;
    if (ok) {
        *rs = rows <= 1 ? minld : r;
        PCT_INCREF(t);
        return t;
    }
    pct_tensor *c = pct_contiguous(t);
    if (c) *rs = minld;
    return c;
}

/* blas_rows of t in the compute dtype cd: a reduced-precision t is converted into new
 * contiguous rows. */
static pct_tensor *compute_rows(pct_tensor *t, int cd, int64_t *rs)
{
    if (t->dtype == cd) return blas_rows(t, rs);
    pct_tensor *c = pct_tensor_empty(t->ndim, t->sizes, cd, PCT_CPU, -1);
    if (!c) return NULL;
    if (pct_copy_(c, t) < 0) {
        PCT_DECREF(c);
        return NULL;
    }
    *rs = t->sizes[t->ndim - 1] > 1 ? t->sizes[t->ndim - 1] : 1;
    return c;
}

/* The mask as the kernels read it: bool, or added in the compute dtype cd (new reference). */
static pct_tensor *compute_mask(pct_tensor *m, int cd)
{
    if (m->dtype == PCT_BOOL) {
        PCT_INCREF(m);
        return m;
    }
    return pct_to_dtype(m, cd, false);
}

/* A result computed in float32 in the input dtype (steals *t; NULL with an exception). */
static pct_tensor *to_input_dtype(pct_tensor **t, int dtype)
{
    pct_tensor *r = pct_to_dtype(*t, dtype, false);
    PCT_DECREF(*t);
    *t = NULL;
    return r;
}

/* Element offsets of every batch of t (its first nd - 2 dims); malloc'd, NULL with
 * MemoryError. */
static int64_t *batch_offsets(const pct_tensor *t, int nbd, int64_t nb)
{
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(nb > 0 ? nb : 1));
    if (!off) {
        pct_error_nomem();
        return NULL;
    }
    for (int64_t b = 0; b < nb; b++) {
        int64_t rem = b, o = 0;
        for (int d = nbd - 1; d >= 0; d--) {
            o += (rem % t->sizes[d]) * t->strides[d];
            rem /= t->sizes[d];
        }
        off[b] = o;
    }
    return off;
}

/* The geometry shared by forward and backward: batch count, lengths, widths, causal flag, scale. */
static void bind_shapes(attn_args *a, const pct_tensor *q, const pct_tensor *k, const pct_tensor *v, bool causal,
                        pct_float_opt scale)
{
    const int nd = q->ndim;
    a->nb = 1;
    for (int d = 0; d < nd - 2; d++) a->nb *= q->sizes[d];
    a->tq = q->sizes[nd - 2];
    a->tk = k->sizes[nd - 2];
    a->e = q->sizes[nd - 1];
    a->ev = v->sizes[nd - 1];
    a->causal = causal;
    a->scale = scale.none ? 1.0 / sqrt((double)a->e) : scale.v;
}

/* Per-batch offsets and data pointers of q, k, v and the optional mask; off[0..3] receive the
 * offset arrays (owned by the caller, freed on its paths). 0, or -1 with an exception set. */
static int bind_inputs(attn_args *a, const pct_tensor *q, const pct_tensor *k, const pct_tensor *v,
                       const pct_tensor *mask, int64_t **off)
{
    const int nd = q->ndim;
    if (!(off[0] = batch_offsets(q, nd - 2, a->nb)) || !(off[1] = batch_offsets(k, nd - 2, a->nb)) ||
        !(off[2] = batch_offsets(v, nd - 2, a->nb)))
        return -1;
    a->qoff = off[0];
    a->koff = off[1];
    a->voff = off[2];
    a->q = pct_tensor_data(q);
    a->k = pct_tensor_data(k);
    a->v = pct_tensor_data(v);
    if (mask) {
        if (!(off[3] = batch_offsets(mask, nd - 2, a->nb))) return -1;
        a->moff = off[3];
        a->mask = pct_tensor_data(mask);
        a->mask_kind = mask->dtype == PCT_BOOL ? PCT_ATTN_MASK_BOOL : PCT_ATTN_MASK_ADD;
        a->m_rs = mask->strides[nd - 2];
        a->m_cs = mask->strides[nd - 1];
    }
    return 0;
}

static int pick_threads(int64_t flops)
{
#ifdef _OPENMP
    const int nt = omp_get_max_threads();
    return flops < (1 << 18) ? 1 : nt;
#else
    (void)flops;
    return 1;
#endif
}

/* Runs fn(a) with the GIL released and OpenBLAS single-threaded (Note [GEMM threading]
 * in blas.c: a one-thread OpenMP region is inactive, so OpenBLAS would thread itself). */
static void run_released(void (*fn)(attn_args *), attn_args *a)
{
    PCT_NOGIL_BEGIN
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    if (a->nthreads == 1 && saved > 1) omp_set_num_threads(1);
#endif
    fn(a);
#ifdef _OPENMP
    if (a->nthreads == 1 && saved > 1) omp_set_num_threads(saved);
#endif
    PCT_NOGIL_END
}

static void tile_sizes(attn_args *a, bool backward, int dtype)
{
    /* Score tiles of 64 KiB (forward) and 36 KiB (backward, two of them) stay in L2; wide
     * key blocks make long products for the micro-kernel, which works on 6-row blocks.
     * Measured on Zen 5 at T = 1024..2048: neighbours (36..120 x 128..512) within noise. */
    a->bq = backward ? 72 : 64;
    a->bk = backward ? 128 : 256;
    if (a->bq > a->tq) a->bq = a->tq > 0 ? a->tq : 1;
    if (a->bk > a->tk) a->bk = a->tk > 0 ? a->tk : 1;
    a->mk = dtype == PCT_FLOAT32 && pct_sgemm_small_available();
    a->nkb = (a->tk + a->bk - 1) / a->bk;
    a->ldp = a->bk + 16;
}


/* ---- _flash_attention_cpu ---- */

pct_object *pct_cpu_flash_attention(pct_call *c)
{
    PCT_ARGS(flash_attention_cpu);
    const char *name = c->op->sig.name;
    pct_tensor *q = NULL, *k = NULL, *v = NULL, *out = NULL, *lse = NULL, *mask = NULL;
    pct_tensor *mask0 = (arg.attn_mask == NULL) ? NULL : arg.attn_mask;
    attn_args a = {0};
    int64_t *off[4] = {NULL, NULL, NULL, NULL};
    pct_object *res = NULL;
    if (check_qkv(name, arg.query, arg.key, arg.value) < 0) return NULL;
    if (mask0 && check_mask(name, mask0, arg.query, arg.key) < 0) return NULL;
    const int dtype = arg.query->dtype, cd = compute_dtype(dtype);
    rows32 = pct_attn_rows_f32_get();
    pct_blas_init();
    PCT_TRY(q = compute_rows(arg.query, cd, &a.q_rs));
    PCT_TRY(k = compute_rows(arg.key, cd, &a.k_rs));
    PCT_TRY(v = compute_rows(arg.value, cd, &a.v_rs));
    if (mask0) PCT_TRY(mask = compute_mask(mask0, cd));
    const int nd = q->ndim;
    bind_shapes(&a, q, k, v, arg.is_causal, arg.scale);
    int64_t osz[PCT_MAX_DIMS];
    memcpy(osz, q->sizes, sizeof(int64_t) * (size_t)nd);
    osz[nd - 1] = a.ev;
    PCT_TRY(out = pct_tensor_empty(nd, osz, cd, PCT_CPU, -1));
    PCT_TRY(lse = pct_tensor_empty(nd - 1, q->sizes, cd, PCT_CPU, -1));
    if (a.nb > 0 && a.tq > 0) {
        PCT_TRY_INT(bind_inputs(&a, q, k, v, mask, off));
        a.out = pct_tensor_data(out);
        a.lse = pct_tensor_data(lse);
        tile_sizes(&a, false, cd);
        a.nthreads = pick_threads(a.nb * a.tq * (a.tk + 1) * (a.e + a.ev + 1));
        run_released(cd == PCT_FLOAT32 ? forward_f32 : forward_f64, &a);
        if (a.failed) {
            pct_error_nomem();
            goto fail;
        }
    }
    PCT_TRY(out = to_input_dtype(&out, dtype));
    res = pct_tuple_pack2(out, lse);
fail:
    for (int i = 0; i < 4; i++) free(off[i]);
    PCT_XDECREF(q);
    PCT_XDECREF(k);
    PCT_XDECREF(v);
    PCT_XDECREF(mask);
    PCT_XDECREF(out);
    PCT_XDECREF(lse);
    return res;
}

/* ---- _flash_attention_cpu_backward ---- */

pct_object *pct_cpu_flash_attention_backward(pct_call *c)
{
    PCT_ARGS(flash_attention_cpu_backward);
    const char *name = c->op->sig.name;
    char sa[PCT_SHAPE_BUF], sb[PCT_SHAPE_BUF];
    pct_tensor *q = NULL, *k = NULL, *v = NULL, *g = NULL, *o = NULL, *lse = NULL, *glse = NULL;
    pct_tensor *dq = NULL, *dk = NULL, *dv = NULL, *mask = NULL;
    pct_tensor *mask0 = (arg.attn_mask == NULL) ? NULL : arg.attn_mask, *glse_in = (arg.grad_logsumexp == NULL) ? NULL : arg.grad_logsumexp;
    attn_args a = {0};
    int64_t *off[5] = {NULL, NULL, NULL, NULL, NULL};
    pct_object *res = NULL;
    pct_tensor *q0 = arg.query, *k0 = arg.key, *v0 = arg.value;
    if (check_qkv(name, q0, k0, v0) < 0) return NULL;
    if (mask0 && check_mask(name, mask0, q0, k0) < 0) return NULL;
    const int nd = q0->ndim, dtype = q0->dtype, cd = compute_dtype(dtype);
    int64_t osz[PCT_MAX_DIMS];
    memcpy(osz, q0->sizes, sizeof(int64_t) * (size_t)nd);
    osz[nd - 1] = v0->sizes[nd - 1];
    pct_tensor *shaped[3] = {arg.grad_out, arg.output, arg.logsumexp};
    const char *what[3] = {"grad_out", "output", "logsumexp"};
    for (int i = 0; i < 3; i++) {
        const int want_nd = i == 2 ? nd - 1 : nd;
        if (!same_shape(shaped[i], want_nd, osz)) { /* logsumexp: the first nd - 1 dims of out's shape */
            pct_error(PCT_ERR_RUNTIME, "%s: expected %s of shape %s, got %s", name, what[i],
                         pct_shape_str(sa, sizeof sa, want_nd, i == 2 ? q0->sizes : osz),
                         pct_shape_str(sb, sizeof sb, shaped[i]->ndim, shaped[i]->sizes));
            return NULL;
        }
        const int want = i == 2 ? cd : dtype; /* logsumexp in the compute dtype */
        if (shaped[i]->dtype != want) {
            pct_error(PCT_ERR_RUNTIME, "%s: expected %s of dtype %s, got %s", name, what[i],
                         pct_dtype_cpp_name[want], pct_dtype_cpp_name[shaped[i]->dtype]);
            return NULL;
        }
    }
    if (glse_in && (!same_shape(glse_in, nd - 1, q0->sizes) || glse_in->dtype != cd)) {
        pct_error(PCT_ERR_RUNTIME, "%s: expected grad_logsumexp of shape %s and dtype %s, got %s %s", name,
                     pct_shape_str(sa, sizeof sa, nd - 1, q0->sizes), pct_dtype_cpp_name[cd],
                     pct_shape_str(sb, sizeof sb, glse_in->ndim, glse_in->sizes), pct_dtype_cpp_name[glse_in->dtype]);
        return NULL;
    }
    if (arg.output_mask.n != 3) {
        pct_error(PCT_ERR_RUNTIME, "%s: output_mask must have 3 entries, got %d", name, (int)arg.output_mask.n);
        return NULL;
    }
    rows32 = pct_attn_rows_f32_get();
    pct_blas_init();
    int64_t o_rs;
    PCT_TRY(q = compute_rows(q0, cd, &a.q_rs));
    PCT_TRY(k = compute_rows(k0, cd, &a.k_rs));
    PCT_TRY(v = compute_rows(v0, cd, &a.v_rs));
    PCT_TRY(g = compute_rows(arg.grad_out, cd, &a.do_rs));
    PCT_TRY(o = cd == dtype ? pct_contiguous(arg.output) : compute_rows(arg.output, cd, &o_rs));
    PCT_TRY(lse = pct_contiguous(arg.logsumexp));
    if (glse_in) PCT_TRY(glse = pct_contiguous(glse_in));
    if (mask0) PCT_TRY(mask = compute_mask(mask0, cd));
    PCT_TRY(dq = pct_tensor_zeros(nd, q0->sizes, cd));
    PCT_TRY(dk = pct_tensor_zeros(nd, k0->sizes, cd));
    PCT_TRY(dv = pct_tensor_zeros(nd, v0->sizes, cd));
    bind_shapes(&a, q0, k0, v0, arg.is_causal, arg.scale);
    a.need_q = arg.output_mask.v[0] != 0;
    a.need_k = arg.output_mask.v[1] != 0;
    a.need_v = arg.output_mask.v[2] != 0;
    if (a.nb > 0 && a.tq > 0 && a.tk > 0) {
        PCT_TRY_INT(bind_inputs(&a, q, k, v, mask, off));
        PCT_TRY(off[4] = batch_offsets(g, nd - 2, a.nb));
        a.dooff = off[4];
        a.dout = pct_tensor_data(g);
        a.o = pct_tensor_data(o);
        a.lse = pct_tensor_data(lse);
        a.glse = glse ? pct_tensor_data(glse) : NULL;
        a.dq = pct_tensor_data(dq);
        a.dk = pct_tensor_data(dk);
        a.dv = pct_tensor_data(dv);
        tile_sizes(&a, true, cd);
        a.nthreads = pick_threads(a.nb * a.tq * a.tk * (a.e + a.ev + 1));
        run_released(cd == PCT_FLOAT32 ? backward_f32 : backward_f64, &a);
        if (a.failed) {
            pct_error_nomem();
            goto fail;
        }
    }
    PCT_TRY(dq = to_input_dtype(&dq, dtype));
    PCT_TRY(dk = to_input_dtype(&dk, dtype));
    PCT_TRY(dv = to_input_dtype(&dv, dtype));
    res = pct_tuple_pack3(dq, dk, dv);
fail:
    for (int i = 0; i < 5; i++) free(off[i]);
    PCT_XDECREF(q);
    PCT_XDECREF(k);
    PCT_XDECREF(v);
    PCT_XDECREF(g);
    PCT_XDECREF(o);
    PCT_XDECREF(lse);
    PCT_XDECREF(glse);
    PCT_XDECREF(mask);
    PCT_XDECREF(dq);
    PCT_XDECREF(dk);
    PCT_XDECREF(dv);
    return res;
}
