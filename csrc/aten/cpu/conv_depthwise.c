/* conv_depthwise.c: direct loops for depthwise convolutions (one big channel per group,
 * conv.h). An im2col + GEMM would run one tiny product (cs x kvol by kvol x positions) per
 * channel; here each kernel tap is one pass of a vectorised axpy (or dot) along the rows of
 * a plane that stays in L1/L2 (whole planes are the unit of the AVX-512 / AVX2 clones, so the
 * short row loops inline into them). Threads split the planes (n, channel); the weight gradient
 * splits the output channels and walks the batch inside, so nothing is shared.
 *
 * Note [Depthwise rows]
 * Tap by tap, the loops above read and write the whole output plane kvol times. Where the
 * dims allow (2-d or 1-d, stride 1 along the rows) the forward instead pads the input plane
 * once and builds each output row a vector at a time, all kvol taps added in registers (one
 * store per vector); the input gradient of a stride-1 problem is the same computation on the
 * padded grad_output with the flipped taps. */
#include "conv.h"
#include "../dtype.h"
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#define PCT_OMP(x) _Pragma(#x)
#else
#define PCT_OMP(x)
#endif

static int dw_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int dw_tid(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static bool use_threads(double work)
{
#ifdef _OPENMP
    return work >= 32768.0 && !omp_in_parallel() && omp_get_max_threads() > 1;
#else
    (void)work;
    return false;
#endif
}

/* For every kernel tap (kd, kh, kw) and small row (od, oh) whose big row exists, the body sees
 * k (the tap), srow / brow (row offsets inside the small / big plane), the valid columns
 * [lo, hi) and off (small column ow reads big column ow * sw + off). */
#define DW_WALK(...)                                                                               \
    const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];                          \
    const int64_t D = g->big[0], H = g->big[1], W = g->big[2];                                      \
    const int64_t OD = g->small[0], OH = g->small[1], OW = g->small[2];                             \
    const int64_t sw = g->stride[2];                                                                \
    for (int64_t kd = 0; kd < KD; kd++)                                                             \
        for (int64_t kh = 0; kh < KH; kh++)                                                         \
            for (int64_t kw = 0; kw < KW; kw++) {                                                   \
                const int64_t k = (kd * KH + kh) * KW + kw, off = kw * g->dil[2] - g->pad[2];        \
                int64_t lo, hi;                                                                     \
                pct_conv_valid_range(W, OW, sw, off, &lo, &hi);                                     \
                if (lo >= hi) continue;                                                             \
                for (int64_t od = 0; od < OD; od++) {                                               \
                    const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];              \
                    if (id < 0 || id >= D) continue;                                                \
                    for (int64_t oh = 0; oh < OH; oh++) {                                           \
                        const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];          \
                        if (ih < 0 || ih >= H) continue;                                            \
                        const int64_t srow = (od * OH + oh) * OW, brow = (id * H + ih) * W;         \
                        __VA_ARGS__                                                                        \
                    }                                                                               \
                }                                                                                   \
            }

#define DW_DEFINE(NM, T, IT)                                                                             \
    static inline void axpy_##NM(T *restrict y, const T *restrict x, T a, int64_t n)           \
    {                                                                                               \
        for (int64_t i = 0; i < n; i++) y[i] += a * x[i];                                           \
    }                                                                                               \
    /* small plane += conv(big plane, taps wk) */                                                   \
    PCT_HOT static void fwd_plane_##NM(const pct_im2col_geom *g, const T *big, const T *wk, T *small)             \
    {                                                                                               \
        DW_WALK({                                                                                   \
            const T wv = wk[k];                                                                     \
            if (sw == 1) axpy_##NM(small + srow + lo, big + brow + lo + off, wv, hi - lo);           \
            else for (int64_t ow = lo; ow < hi; ow++) small[srow + ow] += wv * big[brow + ow * sw + off]; \
        })                                                                                          \
    }                                                                                               \
    /* big plane += conv^T(small plane, taps wk) */                                                 \
    PCT_HOT static void data_plane_##NM(const pct_im2col_geom *g, const T *small, const T *wk, T *big)            \
    {                                                                                               \
        DW_WALK({                                                                                   \
            const T wv = wk[k];                                                                     \
            if (sw == 1) axpy_##NM(big + brow + lo + off, small + srow + lo, wv, hi - lo);           \
            else for (int64_t ow = lo; ow < hi; ow++) big[brow + ow * sw + off] += wv * small[srow + ow]; \
        })                                                                                          \
    }                                                                                               \
    /* acc[k] += sum over positions of small * big shifted by tap k: one vector of lanes per tap  \
     * summed over the whole plane (GCC vector types: zmm in the AVX-512 clone), reduced once at   \
     * its end */                                                                                   \
    typedef T vec_##NM __attribute__((vector_size(64)));                                          \
    typedef IT ivec_##NM __attribute__((vector_size(64)));                                        \
    PCT_HOT static void wgrad_plane_##NM(const pct_im2col_geom *g, const T *big, const T *small, double *acc)      \
    {                                                                                               \
        enum { L = 64 / sizeof(T) };                                                                \
        vec_##NM lane[PCT_DW_MAX_KVOL];                                                             \
        ivec_##NM idx;                                                                              \
        for (int j = 0; j < L; j++) idx[j] = j;                                                     \
        const int64_t kv = g->kernel[0] * g->kernel[1] * g->kernel[2];                              \
        T rest[PCT_DW_MAX_KVOL];                                                                    \
        for (int64_t k = 0; k < kv; k++) {                                                          \
            lane[k] = (vec_##NM){0};                                                                \
            rest[k] = 0;                                                                            \
        }                                                                                           \
        DW_WALK({                                                                                   \
            const T *x = small + srow;                                                              \
            const T *y = big + brow + off;                                                          \
            if (sw == 1 && hi - lo >= L) {                                                          \
                vec_##NM a = lane[k], xv, yv;                                                       \
                int64_t i = lo;                                                                     \
                for (; i + L <= hi; i += L) {                                                       \
                    memcpy(&xv, x + i, sizeof xv);                                                  \
                    memcpy(&yv, y + i, sizeof yv);                                                  \
                    a += xv * yv;                                                                   \
                }                                                                                   \
                if (i < hi) { /* the tail: the row's last L, without the lanes already summed */    \
                    const ivec_##NM keep = idx >= (IT)(L - (hi - i));                                \
                    memcpy(&xv, x + hi - L, sizeof xv);                                             \
                    memcpy(&yv, y + hi - L, sizeof yv);                                             \
                    a += (vec_##NM)((ivec_##NM)(xv * yv) & keep);                                   \
                }                                                                                   \
                lane[k] = a;                                                                        \
            } else {                                                                                \
                for (int64_t ow = lo; ow < hi; ow++) rest[k] += x[ow] * y[ow * sw];                 \
            }                                                                                       \
        })                                                                                          \
        for (int64_t k = 0; k < kv; k++) {                                                          \
            double t = (double)rest[k];                                                             \
            for (int j = 0; j < L; j++) t += (double)lane[k][j];                                    \
            acc[k] += t;                                                                            \
        }                                                                                           \
    }                                                                                               \
    /* The row-blocked form of a 2-d plane with stride 1 along the rows (Note [Depthwise rows]):  \
     * out[oh][ow] (+)= b0 + sum_kh,kw wk[kh][kw] * xp[(oh * sh + kh * dh) * Wp + ow + kw * dw],    \
     * xp a zero-padded plane followed by 4 vectors of readable slack; tmp: a row of vectors. */             \
    PCT_HOT static void rows_##NM(const T *xp, int64_t Wp, const T *wk, int64_t KH, int64_t KW,        \
                                       int64_t dh, int64_t dw, int64_t sh, T b0, bool accumulate,   \
                                       T *out, int64_t OH, int64_t OW, T *tmp)                      \
    {                                                                                               \
        enum { L = 64 / sizeof(T) };                                                                \
        const int64_t nv = (OW + L - 1) / L;                                                        \
        for (int64_t oh = 0; oh < OH; oh++) {                                                       \
            T *orow = out + oh * OW;                                                                \
            const T *base = xp + oh * sh * Wp;                                                      \
            if (accumulate) memcpy(tmp, orow, sizeof(T) * (size_t)OW);                             \
            /* four vectors at a time: independent sums hide the FMA latency */                     \
            for (int64_t j0 = 0; j0 < nv; j0 += 4) {                                                \
                const int64_t nj = nv - j0 < 4 ? nv - j0 : 4;                                       \
                vec_##NM acc[4], xv;                                                                \
                for (int64_t j = 0; j < 4; j++) {                                                   \
                    acc[j] = (vec_##NM){0} + b0;                                                    \
                    if (accumulate && j < nj) {                                                     \
                        memcpy(&xv, tmp + (j0 + j) * L, sizeof xv);                                 \
                        acc[j] += xv;                                                               \
                    }                                                                               \
                }                                                                                   \
                for (int64_t kh = 0; kh < KH; kh++) {                                               \
                    const T *r = base + kh * dh * Wp + j0 * L;                                      \
                    for (int64_t kw = 0; kw < KW; kw++) {                                           \
                        const T wv = wk[kh * KW + kw];                                              \
                        for (int64_t j = 0; j < 4; j++) {                                           \
                            memcpy(&xv, r + kw * dw + j * L, sizeof xv);                            \
                            acc[j] += wv * xv;                                                      \
                        }                                                                           \
                    }                                                                               \
                }                                                                                   \
                for (int64_t j = 0; j < nj; j++) memcpy(tmp + (j0 + j) * L, &acc[j], sizeof acc[j]); \
            }                                                                                       \
            memcpy(orow, tmp, sizeof(T) * (size_t)OW);                                              \
        }                                                                                           \
    }                                                                                               \
    /* xp [Hp][Wp] = plane [H][W] placed at (ph, pw), zeros around it and `slack` zeros after */    \
    static void pad_plane_##NM(const T *plane, int64_t H, int64_t W, int64_t ph, int64_t pw,        \
                               int64_t Hp, int64_t Wp, int64_t slack, T *xp)                        \
    {                                                                                               \
        memset(xp, 0, sizeof(T) * (size_t)(Hp * Wp + slack));                                      \
        for (int64_t h = 0; h < H; h++) {                                                           \
            const int64_t dh = h + ph;                                                              \
            if (dh < 0 || dh >= Hp) continue;                                                       \
            const int64_t w0 = pw < 0 ? -pw : 0, w1 = W < Wp - pw ? W : Wp - pw;                  \
            if (w1 > w0) memcpy(xp + dh * Wp + w0 + pw, plane + h * W + w0, sizeof(T) * (size_t)(w1 - w0)); \
        }                                                                                           \
    }                                                                                               \
    static void fwd_one_##NM(const pct_conv_plan *p, const T *big, const T *w, const T *bias, T *small, int64_t i) \
    {                                                                                               \
        const int64_t C = p->G * p->cs, n = i / C, o = i % C, g = o / p->cs;                        \
        T *out = small + i * p->svol;                                                               \
        const T b0 = bias ? bias[o] : (T)0;                                                         \
        for (int64_t j = 0; j < p->svol; j++) out[j] = b0;                                          \
        fwd_plane_##NM(&p->geo, big + (n * p->G + g) * p->bvol, w + o * p->kvol, out);               \
    }                                                                                               \
    static void data_one_##NM(const pct_conv_plan *p, const T *small, const T *w, const T *bias, T *big, int64_t i) \
    {                                                                                               \
        const int64_t n = i / p->G, g = i % p->G;                                                   \
        T *out = big + i * p->bvol;                                                                 \
        const T b0 = bias ? bias[g] : (T)0;                                                         \
        for (int64_t j = 0; j < p->bvol; j++) out[j] = b0;                                          \
        for (int64_t m = 0; m < p->cs; m++) {                                                       \
            const int64_t o = g * p->cs + m;                                                        \
            data_plane_##NM(&p->geo, small + (n * p->G * p->cs + o) * p->svol, w + o * p->kvol, out); \
        }                                                                                           \
    }                                                                                               \
    /* gw[o, :] = sum over the batch (kvol <= PCT_DW_MAX_KVOL: accumulated in double) */          \
    static void wgrad_one_##NM(const pct_conv_plan *p, const T *big, const T *small, T *gw, int64_t o) \
    {                                                                                               \
        double acc[PCT_DW_MAX_KVOL] = {0};                                                          \
        const int64_t g = o / p->cs, C = p->G * p->cs;                                              \
        for (int64_t n = 0; n < p->N; n++)                                                          \
            wgrad_plane_##NM(&p->geo, big + (n * p->G + g) * p->bvol, small + (n * C + o) * p->svol, acc); \
        for (int64_t k = 0; k < p->kvol; k++) gw[o * p->kvol + k] = (T)acc[k];                      \
    }                                                                                               \
    /* fwd / data of one plane through rows_ when dims allow (a 2-d or 1-d problem, stride 1   \
     * along the rows; data also needs stride 1 and no output padding): buf holds the padded     \
     * plane and a row; returns false when the old loops must run. */                           \
    static bool fwd_rows_##NM(const pct_conv_plan *p, const T *big, const T *w, const T *bias, T *small, \
                              int64_t i, T *buf, int64_t bufsz)                                     \
    {                                                                                               \
        const pct_im2col_geom *g = &p->geo;                                                         \
        const int64_t C = p->G * p->cs, n = i / C, o = i % C, gr = o / p->cs;                       \
        const int64_t Hp = g->big[1] + 2 * g->pad[1], Wp = g->big[2] + 2 * g->pad[2];               \
        const int64_t L = 64 / (int64_t)sizeof(T), rowsz = (g->small[2] + L - 1) / L * L;          \
        if (Hp * Wp + 4 * L + rowsz > bufsz) return false;                                          \
        T *xp = buf, *tmp = buf + Hp * Wp + 4 * L;                                                  \
        pad_plane_##NM(big + (n * p->G + gr) * p->bvol, g->big[1], g->big[2], g->pad[1], g->pad[2], Hp, Wp, 4 * L, xp); \
        rows_##NM(xp, Wp, w + o * p->kvol, g->kernel[1], g->kernel[2], g->dil[1], g->dil[2], g->stride[1], \
                  bias ? bias[o] : (T)0, false, small + i * p->svol, g->small[1], g->small[2], tmp); \
        return true;                                                                                \
    }                                                                                               \
    static bool data_rows_##NM(const pct_conv_plan *p, const T *small, const T *w, const T *bias, T *big, \
                               int64_t i, T *buf, int64_t bufsz)                                    \
    {                                                                                               \
        const pct_im2col_geom *g = &p->geo;                                                         \
        const int64_t n = i / p->G, gr = i % p->G, KH = g->kernel[1], KW = g->kernel[2];            \
        const int64_t ph = g->dil[1] * (KH - 1) - g->pad[1], pw = g->dil[2] * (KW - 1) - g->pad[2];  \
        const int64_t Hp = g->small[1] + 2 * ph, Wp = g->small[2] + 2 * pw;                         \
        const int64_t L = 64 / (int64_t)sizeof(T), rowsz = (g->big[2] + L - 1) / L * L;            \
        if (Hp * Wp + 4 * L + rowsz + PCT_DW_MAX_KVOL > bufsz) return false;                       \
        T *xp = buf, *tmp = buf + Hp * Wp + 4 * L, *wf = tmp + rowsz;                               \
        T *out = big + i * p->bvol;                                                                 \
        for (int64_t m = 0; m < p->cs; m++) {                                                       \
            const int64_t o = gr * p->cs + m;                                                       \
            for (int64_t k = 0; k < p->kvol; k++) wf[k] = w[o * p->kvol + p->kvol - 1 - k];         \
            pad_plane_##NM(small + (n * p->G * p->cs + o) * p->svol, g->small[1], g->small[2], ph, pw, Hp, Wp, \
                           4 * L, xp);                                                              \
            rows_##NM(xp, Wp, wf, KH, KW, g->dil[1], g->dil[2], 1, m == 0 && bias ? bias[gr] : (T)0, m > 0, \
                      out, g->big[1], g->big[2], tmp);                                              \
        }                                                                                           \
        return true;                                                                                \
    }                                                                                               \
    /* floats of per-thread buffer the row forms need (0: they do not apply) */                    \
    static int64_t rows_buf_##NM(const pct_conv_plan *p, bool data)                                 \
    {                                                                                               \
        const pct_im2col_geom *g = &p->geo;                                                         \
        const int64_t L = 64 / (int64_t)sizeof(T);                                                  \
        if (g->big[0] != 1 || g->kernel[0] != 1 || g->small[0] != 1 || g->stride[2] != 1) return 0; \
        if (!data) {                                                                                \
            const int64_t Hp = g->big[1] + 2 * g->pad[1], Wp = g->big[2] + 2 * g->pad[2];           \
            return Hp * Wp + 4 * L + (g->small[2] + L - 1) / L * L;                                 \
        }                                                                                           \
        if (g->stride[1] != 1) return 0;                                                            \
        int64_t Pp[3];                                                                              \
        for (int d = 1; d < 3; d++) {                                                               \
            const int64_t span = g->dil[d] * (g->kernel[d] - 1), pad = span - g->pad[d];            \
            if (pad < 0 || g->small[d] + 2 * pad - span != g->big[d]) return 0;                     \
            Pp[d] = g->small[d] + 2 * pad;                                                          \
        }                                                                                           \
        return Pp[1] * Pp[2] + 4 * L + (g->big[2] + L - 1) / L * L + PCT_DW_MAX_KVOL;               \
    }                                                                                               \
    /* fwd (data false: planes (n, output channel) of small) or data (planes (n, group) of big), \
     * each plane through the row form when it applies, else the tap loops */                    \
    static void dw_planes_##NM(const pct_conv_plan *p, bool data, const T *src, const T *w, const T *bias, T *dst) \
    {                                                                                               \
        const int64_t cnt = data ? p->N * p->G : p->N * p->G * p->cs, bsz = rows_buf_##NM(p, data); \
        const bool par = use_threads((double)p->N * (double)p->G * (double)p->cs * (double)p->svol * (double)p->kvol); \
        const int nt = par ? dw_threads() : 1;                                                      \
        T *buf = bsz ? pct_conv_scratch_get(sizeof(T) * (size_t)(bsz * nt)) : NULL;                 \
        PCT_OMP(omp parallel for schedule(static) if (par))                                         \
        for (int64_t i = 0; i < cnt; i++) {                                                         \
            T *b = buf ? buf + dw_tid() * bsz : NULL;                                               \
            if (data) {                                                                             \
                if (!b || !data_rows_##NM(p, src, w, bias, dst, i, b, bsz)) data_one_##NM(p, src, w, bias, dst, i); \
            } else {                                                                                \
                if (!b || !fwd_rows_##NM(p, src, w, bias, dst, i, b, bsz)) fwd_one_##NM(p, src, w, bias, dst, i); \
            }                                                                                       \
        }                                                                                           \
        pct_conv_scratch_put(buf, sizeof(T) * (size_t)(bsz * nt));                                  \
    }                                                                                               \
    static void dw_wgrad_##NM(const pct_conv_plan *p, const T *big, const T *small, T *gw)           \
    {                                                                                               \
        const int64_t cnt = p->G * p->cs;                                                           \
        PCT_OMP(omp parallel for schedule(static) if (use_threads((double)p->N * (double)cnt * (double)p->svol * (double)p->kvol))) \
        for (int64_t o = 0; o < cnt; o++) wgrad_one_##NM(p, big, small, gw, o);                      \
    }
DW_DEFINE(f32, float, int32_t)
DW_DEFINE(f64, double, int64_t)

void pct_dw_fwd(const pct_conv_plan *p, const void *big, const void *w, const void *bias, void *small)
{
    if (p->dtype == PCT_FLOAT32) dw_planes_f32(p, false, big, w, bias, small);
    else dw_planes_f64(p, false, big, w, bias, small);
}

void pct_dw_data(const pct_conv_plan *p, const void *small, const void *w, const void *bias, void *big)
{
    if (p->dtype == PCT_FLOAT32) dw_planes_f32(p, true, small, w, bias, big);
    else dw_planes_f64(p, true, small, w, bias, big);
}

void pct_dw_wgrad(const pct_conv_plan *p, const void *big, const void *small, void *gw)
{
    if (p->dtype == PCT_FLOAT32) dw_wgrad_f32(p, big, small, gw);
    else dw_wgrad_f64(p, big, small, gw);
}
