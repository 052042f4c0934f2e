/* conv_engine.c: the im2col + GEMM engine of the convolutions (conv.h): every task the direct
 * float32 kernels (conv_direct.c) and the depthwise loops (conv_depthwise.c) do not take, in
 * any dtype but bool (float16/bfloat16 arrive as float32).
 *
 * Note [Convolution threading]
 * Samples are the unit of parallelism: with T threads and N >= T samples, the first
 * floor(N / T) * T samples run one per thread, each thread with its own column buffer,
 * single-threaded GEMMs (OpenBLAS stays serial inside an OpenMP region) and, for the weight
 * gradient, its own accumulator, summed in thread order at the end (no races, and the same
 * result for the same thread count). The remaining samples (all of them when N < T) run one
 * after another with the parallelism inside: im2col / col2im split over channels, the GEMMs
 * threaded by the GEMM itself. A float32 fwd alone (and the data of a 1x1 plan) is instead
 * one product over the whole batch (Note [Convolution GEMM], conv_gemm.c).
 *
 * Note [Column blocking]
 * The column matrix of one sample (K = channels * kernel volume rows, one column per output
 * position) can be far bigger than the caches (64 channels, 3x3, 56x56: 7 MB in float32). It
 * is built in blocks of output positions sized to about COL_BLOCK_BYTES, and each block is
 * consumed by its GEMM (or, for the input gradient, produced by its GEMM and scattered by
 * col2im) while it is still in cache; this also bounds the memory a huge image needs. A 1x1
 * convolution with stride 1 and no padding skips the column matrix: the input is already it.
 *
 * Note [bfloat16 convolution]
 * On CPUs with AVX512-BF16 a bfloat16 plan (conv.c picks it where the products fill the GEMM's
 * tiles) keeps its operands in bfloat16: im2col copies 2-byte elements and the products run on
 * the bfloat16 GEMM (Note [bfloat16 GEMM], gemm_lowp.c), with float32 accumulation as torch's
 * oneDNN path has it. What is a sum over several products stays float32 until the end: the
 * weight gradient (per-thread float32 accumulators over the samples and column blocks, rounded
 * by the caller), and the input gradient's columns, which col2im adds into a float32 copy of
 * the sample before one rounding to bfloat16. A product complete in one call (fwd, and the data
 * of a 1x1 plan) writes bfloat16 directly, rounded once from its float32 sum.
 */
#include "blas.h"
#include "conv.h"
#include "gemm_lowp.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define COL_BLOCK_BYTES ((int64_t)1 << 21)

/* Note [Convolution scratch cache]
 * Each call needs megabytes of scratch (column blocks, packed operands, padded inputs). A fresh
 * malloc of that size is an mmap, and first touching its pages costs page faults (5% of a
 * 1x1 convolution). A few freed blocks are kept for the next calls (at most SCRATCH_KEEP bytes
 * each), under a mutex since GIL-free calls may run concurrently. */
#define SCRATCH_SLOTS 4
#define SCRATCH_KEEP ((size_t)16 << 20)
static struct { void *p; size_t n; } scratch_slots[SCRATCH_SLOTS];
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;

void *pct_conv_scratch_get(size_t bytes)
{
    void *r = NULL;
    pthread_mutex_lock(&scratch_lock);
    int best = -1;
    for (int i = 0; i < SCRATCH_SLOTS; i++)
        if (scratch_slots[i].p && scratch_slots[i].n >= bytes && (best < 0 || scratch_slots[i].n < scratch_slots[best].n))
            best = i;
    if (best >= 0) {
        r = scratch_slots[best].p;
        scratch_slots[best].p = NULL;
        scratch_slots[best].n = 0;
    }
    pthread_mutex_unlock(&scratch_lock);
    return r ? r : malloc(bytes ? bytes : 1);
}

void pct_conv_scratch_put(void *p, size_t bytes)
{
    if (!p) return;
    if (bytes > SCRATCH_KEEP) {
        free(p);
        return;
    }
    pthread_mutex_lock(&scratch_lock);
    int slot = -1;
    for (int i = 0; i < SCRATCH_SLOTS && slot < 0; i++)
        if (!scratch_slots[i].p) slot = i;
    if (slot < 0) /* all taken: replace the smallest if this one is bigger */
        for (int i = 0; i < SCRATCH_SLOTS; i++)
            if (scratch_slots[i].n < bytes && (slot < 0 || scratch_slots[i].n < scratch_slots[slot].n)) slot = i;
    void *drop = p;
    if (slot >= 0) {
        drop = scratch_slots[slot].p;
        scratch_slots[slot].p = p;
        scratch_slots[slot].n = bytes;
    }
    pthread_mutex_unlock(&scratch_lock);
    free(drop);
}

int pct_conv_threads(void)
{
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

/* rows x len elements at dst, row r set to vals[r] (all zero when vals is NULL) */
static void fill_rows(char *dst, int64_t rows, int64_t len, const char *vals, int isz)
{
    if (!vals) {
        memset(dst, 0, (size_t)(rows * len * isz));
        return;
    }
    for (int64_t r = 0; r < rows; r++) {
        char *d = dst + r * len * isz;
        const char *v = vals + r * isz;
        switch (isz) {
        case 1: memset(d, *v, (size_t)len); break;
        case 2: { uint16_t x; memcpy(&x, v, 2); for (int64_t i = 0; i < len; i++) ((uint16_t *)d)[i] = x; break; }
        case 4: { uint32_t x; memcpy(&x, v, 4); for (int64_t i = 0; i < len; i++) ((uint32_t *)d)[i] = x; break; }
        default: { uint64_t x; memcpy(&x, v, 8); for (int64_t i = 0; i < len; i++) ((uint64_t *)d)[i] = x; break; }
        }
    }
}

/* Output positions per column block (Note [Column blocking]). */
static int64_t col_block(const pct_conv_plan *p)
{
    if (p->direct || p->K == 0) return p->svol > 0 ? p->svol : 1;
    int64_t b = COL_BLOCK_BYTES / (p->K * pct_dtype_itemsize[p->acc_dtype]);
    if (b < 128) b = 128;
    return b >= p->svol ? (p->svol > 0 ? p->svol : 1) : b;
}

/* What one run of the engine shares between its threads. */
typedef struct conv_ctx {
    int nt;                      /* threads of the run */
    int64_t blk;                 /* column block */
    char *col;                   /* per-thread column buffers, colsz elements of acc_dtype each */
    int64_t colsz;
    char *bigacc;                /* per-thread float32 data results of a bfloat16 plan, bigsz elements each */
    int64_t bigsz;               /* (Note [bfloat16 convolution]); 0 otherwise */
    const char *wt;              /* bfloat16 data: the weight transposed per group, [G][K][cs], or NULL */
} conv_ctx;

static void im2col_blk(const pct_conv_plan *p, const char *big, char *col, int64_t j0, int64_t j1, bool inner)
{
    const int isz = pct_dtype_itemsize[p->dtype];
    if (inner && p->cb > 1 && (double)p->K * (double)(j1 - j0) >= 65536.0) {
        PCT_OMP(omp parallel for schedule(static))
        for (int64_t c = 0; c < p->cb; c++) pct_im2col(&p->geo, isz, big, col, j1 - j0, c, c + 1, j0, j1);
    } else {
        pct_im2col(&p->geo, isz, big, col, j1 - j0, 0, p->cb, j0, j1);
    }
}

/* col holds acc_dtype elements (the data columns of Note [bfloat16 convolution]) */
static void col2im_blk(const pct_conv_plan *p, const char *col, char *big, int64_t j0, int64_t j1, bool inner)
{
    if (inner && p->cb > 1 && (double)p->K * (double)(j1 - j0) >= 65536.0) {
        PCT_OMP(omp parallel for schedule(static))
        for (int64_t c = 0; c < p->cb; c++) pct_col2im(&p->geo, p->acc_dtype, col, j1 - j0, big, c, c + 1, j0, j1);
    } else {
        pct_col2im(&p->geo, p->acc_dtype, col, j1 - j0, big, 0, p->cb, j0, j1);
    }
}

/* C[m, n] = A @ B (+ C when acc) on strided operands of the plan's dtype, C in that dtype or, when
 * c_acc, in its acc_dtype (pct_gemm: float32 on the packed kernel of gemm_f32.c where the CPU has
 * AVX-512; bfloat16 on gemm_lowp.c's; serial inside the batch-parallel region, threaded by itself
 * outside it). Nonzero when out of memory. */
static int conv_gemm(const pct_conv_plan *p, int64_t m, int64_t n, int64_t k, const char *a, int64_t ars,
                     int64_t acs, const char *b, int64_t brs, int64_t bcs, bool acc, char *c, int64_t ldc, bool c_acc)
{
    if (p->dtype == PCT_BFLOAT16) { /* the plan exists only where the bfloat16 GEMM runs: only -1 is a failure */
        const uint16_t *a16 = (const uint16_t *)a, *b16 = (const uint16_t *)b;
        const float beta = acc ? 1.0f : 0.0f;
        const int nt = pct_conv_threads();
        return (c_acc ? pct_gemm_bf16_f32out(m, n, k, 1.0f, beta, !acc, a16, ars, acs, b16, brs, bcs, (float *)c, ldc, 1, nt)
                      : pct_gemm_bf16_native(m, n, k, 1.0f, beta, !acc, a16, ars, acs, b16, brs, bcs, (uint16_t *)c, ldc,
                                             1, nt)) < 0;
    }
    return pct_gemm(p->dtype, m, n, k, 1.0, a, ars, acs, b, brs, bcs, acc ? 1.0 : 0.0, c, ldc, 1) != 0;
}

/* big (bfloat16, rows x len) = acc (float32) + bias[row] (bfloat16, or none), rounded once; acc is scratch */
static void round_big(const pct_conv_plan *p, char *big, float *acc, const char *bias)
{
    const int64_t rows = p->G * p->cb, len = p->bvol;
    if (bias)
        for (int64_t r = 0; r < rows; r++) {
            const float b = pct_bf16_to_float(((const uint16_t *)bias)[r]);
            for (int64_t i = 0; i < len; i++) acc[r * len + i] += b;
        }
    pct_f32_to_lowp((uint16_t *)big, acc, rows, len, len, 1, PCT_BFLOAT16, 1);
}

/* Runs t's primitives on sample n as thread tid (its column buffer; gw: its weight gradient
 * accumulator). inner: called outside a parallel region, may use threads. Nonzero when out
 * of memory. */
static int sample_run(const pct_conv_task *t, const conv_ctx *cx, int64_t n, int tid, char *gw, bool inner)
{
    const pct_conv_plan *p = t->p;
    const int dt = p->dtype, isz = pct_dtype_itemsize[dt], asz = pct_dtype_itemsize[p->acc_dtype];
    const int64_t G = p->G, cb = p->cb, cs = p->cs, K = p->K, sv = p->svol, bv = p->bvol, blk = cx->blk;
    char *col = cx->colsz ? cx->col + tid * cx->colsz * asz : NULL;
    const int what = t->what;
    /* where col2im adds up the data columns: this sample of big_out, or a float32 copy (Note [bfloat16 convolution]) */
    char *const data_sum = cx->bigsz ? cx->bigacc + tid * cx->bigsz * asz : t->big_out + n * G * cb * bv * isz;
    int err = 0;
    if ((what & PCT_CONV_FWD) && t->bias_small) fill_rows(t->small_out + n * G * cs * sv * isz, G * cs, sv, t->bias_small, isz);
    if ((what & PCT_CONV_DATA) && (!p->direct || t->bias_big))
        fill_rows(data_sum, G * cb, bv, cx->bigsz ? NULL : t->bias_big, cx->bigsz ? asz : isz);
    const bool acc_fwd = t->bias_small != NULL, acc_data = t->bias_big != NULL;
    for (int64_t g = 0; g < G; g++) {
        const int64_t bo = (n * G + g) * cb * bv * isz, so = (n * G + g) * cs * sv * isz, wo = g * cs * K * isz;
        const int64_t gwo = g * cs * K * asz, sumo = g * cb * bv * (cx->bigsz ? asz : isz);
        for (int64_t j0 = 0; j0 < sv; j0 += blk) {
            const int64_t j1 = j0 + blk < sv ? j0 + blk : sv, nj = j1 - j0;
            if (what & (PCT_CONV_FWD | PCT_CONV_WGRAD)) {
                const char *colb = col; /* B of fwd: col[K, nj] (row stride nj), or big itself */
                int64_t ld = nj;
                if (p->direct) {
                    colb = t->big + bo + j0 * isz;
                    ld = bv;
                } else {
                    im2col_blk(p, t->big + bo, col, j0, j1, inner);
                }
                if (what & PCT_CONV_FWD)  /* small[cs, nj] = W[cs, K] @ col[K, nj] */
                    err |= conv_gemm(p, cs, nj, K, t->w + wo, K, 1, colb, ld, 1, acc_fwd,
                                     t->small_out + so + j0 * isz, sv, false);
                if (what & PCT_CONV_WGRAD)  /* gW[cs, K] += small[cs, nj] @ col[K, nj]^T */
                    err |= conv_gemm(p, cs, K, nj, t->small_in + so + j0 * isz, sv, 1, colb, 1, ld, true,
                                     gw + gwo, K, true);
            }
            if (what & PCT_CONV_DATA) {   /* col[K, nj] = W[cs, K]^T @ small[cs, nj], scattered into big */
                const char *sm = t->small_in + so + j0 * isz, *wa = cx->wt ? cx->wt + wo : t->w + wo;
                const int64_t wrs = cx->wt ? cs : 1, wcs = cx->wt ? 1 : K;
                if (p->direct) {
                    err |= conv_gemm(p, K, nj, cs, wa, wrs, wcs, sm, sv, 1, acc_data,
                                     t->big_out + bo + j0 * isz, bv, false);
                } else {
                    err |= conv_gemm(p, K, nj, cs, wa, wrs, wcs, sm, sv, 1, false, col, nj, true);
                    col2im_blk(p, col, data_sum + sumo, j0, j1, inner);
                }
            }
        }
    }
    if (cx->bigsz && (what & PCT_CONV_DATA)) round_big(p, t->big_out + n * G * cb * bv * isz, (float *)data_sum, t->bias_big);
    return err;
}

#define CONV_SUM_INTO(T)                                                                            \
    static void sum_into_##T(T *dst, const T *srcs, int64_t count, int nsrc)                        \
    {                                                                                               \
        PCT_OMP(omp parallel for schedule(static) if (count * nsrc > 32768))                        \
        for (int64_t i = 0; i < count; i++) {                                                       \
            T acc = dst[i];                                                                         \
            for (int s = 0; s < nsrc; s++) acc += srcs[s * count + i];                              \
            dst[i] = acc;                                                                           \
        }                                                                                           \
    }
CONV_SUM_INTO(float)
CONV_SUM_INTO(double)
CONV_SUM_INTO(uint8_t)
CONV_SUM_INTO(int8_t)
CONV_SUM_INTO(int16_t)
CONV_SUM_INTO(int32_t)
CONV_SUM_INTO(int64_t)

void pct_conv_sum_into(int dt, char *dst, const char *srcs, int64_t count, int nsrc)
{
    switch (dt) {
    case PCT_FLOAT32: sum_into_float((float *)dst, (const float *)srcs, count, nsrc); break;
    case PCT_FLOAT64: sum_into_double((double *)dst, (const double *)srcs, count, nsrc); break;
    case PCT_UINT8: sum_into_uint8_t((uint8_t *)dst, (const uint8_t *)srcs, count, nsrc); break;
    case PCT_INT8: sum_into_int8_t((int8_t *)dst, (const int8_t *)srcs, count, nsrc); break;
    case PCT_INT16: sum_into_int16_t((int16_t *)dst, (const int16_t *)srcs, count, nsrc); break;
    case PCT_INT32: sum_into_int32_t((int32_t *)dst, (const int32_t *)srcs, count, nsrc); break;
    case PCT_INT64: sum_into_int64_t((int64_t *)dst, (const int64_t *)srcs, count, nsrc); break;
    default: break;
    }
}

/* The im2col + GEMM engine over the batch (Note [Convolution threading]). */
int pct_conv_engine_run(const pct_conv_task *t, char *gw_out)
{
    const pct_conv_plan *p = t->p;
    const int asz = pct_dtype_itemsize[p->acc_dtype];
    const int64_t gwsz = (t->what & PCT_CONV_WGRAD) ? p->G * p->cs * p->K : 0;
    if (gwsz) memset(gw_out, 0, (size_t)(gwsz * asz));
    if (p->N == 0) return 0;
    if (p->depthwise) {
        if (t->what & PCT_CONV_WGRAD) pct_dw_wgrad(p, t->big, t->small_in, gw_out);
        if (t->what & PCT_CONV_FWD) pct_dw_fwd(p, t->big, t->w, t->bias_small, t->small_out);
        if (t->what & PCT_CONV_DATA) pct_dw_data(p, t->small_in, t->w, t->bias_big, t->big_out);
        return 0;
    }
    /* float32 fwd alone, and the data of a 1x1 plan: one product over the batch */
    if (p->fast32 && p->K > 0 && p->cs > 0 && p->svol > 0 &&
        (t->what == PCT_CONV_FWD || (t->what == PCT_CONV_DATA && p->direct))) {
        const int rc = pct_conv_gemm_batch(t, pct_conv_threads());
        if (rc <= 0) return rc;
    }
    if (pct_conv_batch_columns_usable(p)) return pct_conv_batch_columns_run(t, gw_out);
    conv_ctx cx;
    cx.nt = pct_conv_threads();
    cx.blk = col_block(p);
    cx.colsz = p->direct ? 0 : p->K * cx.blk;
    cx.bigsz = p->acc_dtype != p->dtype && !p->direct && (t->what & PCT_CONV_DATA) ? p->G * p->cb * p->bvol : 0;
    /* the bfloat16 GEMM packs a row-major A fast and a column-major one element by element: the data products'
       A = W^T is transposed once here rather than gathered again for every sample and column block */
    const int64_t wtsz = p->dtype == PCT_BFLOAT16 && (t->what & PCT_CONV_DATA) ? p->G * p->cs * p->K : 0;
    const double per_sample = (double)p->G * (double)p->cs * (double)p->K * (double)p->svol;
    const int64_t nb = cx.nt > 1 && p->N >= cx.nt && per_sample * (double)p->N >= PCT_CONV_PARALLEL_MIN
                       ? p->N / cx.nt * cx.nt : 0;
    const int nbuf = nb ? cx.nt : 1;
    /* one block: column buffers, float32 data results, the extra weight-gradient accumulators */
    const size_t col_bytes = (size_t)(nbuf * cx.colsz * asz), sum_bytes = (size_t)(nbuf * cx.bigsz * asz);
    const size_t gw_bytes = (size_t)((nbuf - 1) * gwsz * asz), wt_bytes = (size_t)wtsz * 2;
    const size_t bytes = col_bytes + sum_bytes + gw_bytes + wt_bytes;
    char *scratch = bytes ? pct_conv_scratch_get(bytes) : NULL;
    if (bytes && !scratch) return -1;
    cx.col = cx.colsz ? scratch : NULL;
    cx.bigacc = cx.bigsz ? scratch + col_bytes : NULL;
    char *gw_extra = gw_bytes ? scratch + col_bytes + sum_bytes : NULL;
    cx.wt = NULL;
    if (wtsz) {
        uint16_t *wt = (uint16_t *)(scratch + col_bytes + sum_bytes + gw_bytes);
        const uint16_t *w = (const uint16_t *)t->w;
        for (int64_t g = 0; g < p->G; g++)
            for (int64_t o = 0; o < p->cs; o++)
                for (int64_t k = 0; k < p->K; k++) wt[(g * p->K + k) * p->cs + o] = w[(g * p->cs + o) * p->K + k];
        cx.wt = (const char *)wt;
    }
    if (gw_extra) memset(gw_extra, 0, gw_bytes);
    int err = 0;
    if (nb) {
        PCT_OMP(omp parallel num_threads(cx.nt) reduction(| : err))
        {
#ifdef _OPENMP
            const int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            const int tid = 0, cnt = 1;
#endif
            char *gw = tid == 0 ? gw_out : gw_extra ? gw_extra + (tid - 1) * gwsz * asz : NULL;
            for (int64_t n = tid; n < nb; n += cnt) err |= sample_run(t, &cx, n, tid, gw, false);
        }
    }
    const bool inner = cx.nt > 1 && per_sample >= PCT_CONV_PARALLEL_MIN;
    for (int64_t n = nb; n < p->N; n++) err |= sample_run(t, &cx, n, 0, gw_out, inner);
    if (gw_extra) pct_conv_sum_into(p->acc_dtype, gw_out, gw_extra, gwsz, nbuf - 1);
    pct_conv_scratch_put(scratch, bytes);
    return err ? -1 : 0;
}
