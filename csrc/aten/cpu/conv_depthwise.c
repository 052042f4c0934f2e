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

#define DW_NM f32
#define DW_T float
#define DW_IT int32_t
#include "conv_depthwise_impl.h"
#define DW_NM f64
#define DW_T double
#define DW_IT int64_t
#include "conv_depthwise_impl.h"

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
