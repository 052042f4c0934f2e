/* im2col.c: the column lowering of convolutions and unfold/fold (see im2col.h and
 * Note [Convolution geometry]). Rows of the column matrix are walked one kernel offset at
 * a time, so the innermost loop runs along one row of big positions: a memcpy (or a
 * contiguous add) for stride 1, a strided gather (scatter-add) otherwise, with the zero
 * borders of the padding computed once per kernel offset instead of tested per element. */
#include "im2col.h"
#include "../dtype.h"
#include <string.h>

static inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The walk shared by both directions: for each channel, kernel offset and small row
 * (od, oh) meeting [j0, j1), BODY sees
 *   crow   the column-matrix row of (channel, kernel offset)
 *   dst    column index in crow of small position (od, oh, a)
 *   a, b   the part [a, b) of this small row inside [j0, j1)
 *   l, h   its sub-range whose window column lies inside the big tensor
 *   brow   index of big row (id, ih) inside the channel, or -1 when the row is padding
 *   off    big column of small column ow: ow * sw + off */
#define I2C_WALK(BODY)                                                                              \
    const int64_t KD = g->kernel[0], KH = g->kernel[1], KW = g->kernel[2];                          \
    const int64_t D = g->big[0], H = g->big[1], W = g->big[2];                                      \
    const int64_t OH = g->small[1], OW = g->small[2];                                               \
    const int64_t bvol = D * H * W, kvol = KD * KH * KW;                                            \
    if (j1 <= j0 || OW <= 0) return;                                                                \
    const int64_t rfirst = j0 / OW, rlast = (j1 - 1) / OW;                                          \
    for (int64_t c = c0; c < c1; c++) {                                                             \
        for (int64_t kd = 0; kd < KD; kd++)                                                         \
            for (int64_t kh = 0; kh < KH; kh++)                                                     \
                for (int64_t kw = 0; kw < KW; kw++) {                                               \
                    const int64_t k = (kd * KH + kh) * KW + kw;                                     \
                    const int64_t crow = c * kvol + k;                                              \
                    const int64_t off = kw * g->dil[2] - g->pad[2];                                 \
                    int64_t vlo, vhi;                                                               \
                    pct_conv_valid_range(W, OW, g->stride[2], off, &vlo, &vhi);                              \
                    for (int64_t r = rfirst; r <= rlast; r++) {                                     \
                        const int64_t od = r / OH, oh = r % OH;                                     \
                        const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];          \
                        const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];          \
                        const int64_t brow = (id < 0 || id >= D || ih < 0 || ih >= H) ? -1 : (id * H + ih); \
                        const int64_t a = (r == rfirst ? j0 - r * OW : 0);                          \
                        const int64_t b = (r == rlast ? j1 - r * OW : OW);                          \
                        const int64_t l = clamp64(vlo, a, b), h = clamp64(vhi, l, b);               \
                        const int64_t dst = r * OW - j0;                                            \
                        (void)bvol;                                                                 \
                        BODY                                                                        \
                    }                                                                               \
                }                                                                                   \
    }

#define I2C_COPY_DEFINE(T)                                                                          \
    static void im2col_##T(const pct_im2col_geom *g, const T *big, T *col, int64_t ld, int64_t c0,  \
                           int64_t c1, int64_t j0, int64_t j1)                                      \
    {                                                                                               \
        const int64_t sw = g->stride[2];                                                            \
        I2C_WALK({                                                                                  \
            T *out = col + crow * ld + dst;                                                         \
            if (brow < 0) {                                                                         \
                memset(out + a, 0, sizeof(T) * (size_t)(b - a));                                    \
            } else {                                                                                \
                const T *src = big + c * bvol + brow * W;                                           \
                if (l > a) memset(out + a, 0, sizeof(T) * (size_t)(l - a));                         \
                if (sw == 1) {                                                                      \
                    if (h > l) memcpy(out + l, src + l + off, sizeof(T) * (size_t)(h - l));         \
                } else {                                                                            \
                    for (int64_t ow = l; ow < h; ow++) out[ow] = src[ow * sw + off];                \
                }                                                                                   \
                if (b > h) memset(out + h, 0, sizeof(T) * (size_t)(b - h));                         \
            }                                                                                       \
        })                                                                                          \
    }
I2C_COPY_DEFINE(uint8_t)
I2C_COPY_DEFINE(uint16_t)
I2C_COPY_DEFINE(uint32_t)
I2C_COPY_DEFINE(uint64_t)

void pct_im2col(const pct_im2col_geom *g, int itemsize, const void *big, void *col, int64_t ld,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1)
{
    switch (itemsize) {
    case 1: im2col_uint8_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 2: im2col_uint16_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 4: im2col_uint32_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 8: im2col_uint64_t(g, big, col, ld, c0, c1, j0, j1); break;
    default: break;
    }
}

/* The strided add out[i * s] += in[i] (s > 1). For float32 on AVX-512 CPUs, one masked vector
 * covers 16 / s outputs: in's values are spread to every s-th lane with an expanding load, and
 * only those lanes are loaded, added and stored, so nothing outside the touched elements is
 * accessed. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#include <immintrin.h>
__attribute__((target("avx512f"))) static void add_strided_f32_avx512(float *out, const float *in, int64_t n, int64_t s)
{
    /* every s-th lane of 16, for s = 2..8 */
    static const uint16_t lanes[9] = {0, 0xffff, 0x5555, 0x9249, 0x1111, 0x8421, 0x1041, 0x4081, 0x0101};
    const uint32_t pat = lanes[s];
    const int64_t per = __builtin_popcount(pat);
    int64_t i = 0;
    for (; i + per <= n; i += per) {
        const __mmask16 m = (__mmask16)pat;
        const __m512 v = _mm512_maskz_expandloadu_ps(m, in + i);
        _mm512_mask_storeu_ps(out + i * s, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, out + i * s), v));
    }
    if (i < n) {
        uint32_t tail = 0;
        for (int64_t lane = 0, cnt = 0; lane < 16 && cnt < n - i; lane += s, cnt++) tail |= 1u << lane;
        const __mmask16 m = (__mmask16)tail;
        const __m512 v = _mm512_maskz_expandloadu_ps(m, in + i);
        _mm512_mask_storeu_ps(out + i * s, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, out + i * s), v));
    }
}

static bool have_avx512(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no (a benign race stores the same value) */
    int st = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (!st) {
        __builtin_cpu_init();
        st = __builtin_cpu_supports("avx512f") ? 1 : 2;
        __atomic_store_n(&state, st, __ATOMIC_RELAXED);
    }
    return st == 1;
}
#endif

static void add_strided_f32(float *out, const float *in, int64_t n, int64_t s)
{
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
    if (s <= 8 && have_avx512()) {
        add_strided_f32_avx512(out, in, n, s);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i * s] += in[i];
}

#define I2C_STRIDED_f32(out, in, n, s) add_strided_f32(out, in, n, s)
#define I2C_STRIDED_GENERIC(out, in, n, s) for (int64_t i_ = 0; i_ < (n); i_++) (out)[i_ * (s)] += (in)[i_]
#define I2C_STRIDED_f64 I2C_STRIDED_GENERIC
#define I2C_STRIDED_u8 I2C_STRIDED_GENERIC
#define I2C_STRIDED_i8 I2C_STRIDED_GENERIC
#define I2C_STRIDED_i16 I2C_STRIDED_GENERIC
#define I2C_STRIDED_i32 I2C_STRIDED_GENERIC
#define I2C_STRIDED_i64 I2C_STRIDED_GENERIC

/* The contiguous add of stride 1, in its own function so it gets vector clones. */
#define I2C_ADD_DEFINE(N, T)                                                                        \
    PCT_CONV_HOT static void add_row_##N(T *restrict d, const T *restrict s, int64_t n)                  \
    {                                                                                               \
        for (int64_t i = 0; i < n; i++) d[i] += s[i];                                               \
    }                                                                                               \
    static void col2im_##N(const pct_im2col_geom *g, const T *col, int64_t ld, T *big, int64_t c0,  \
                           int64_t c1, int64_t j0, int64_t j1)                                      \
    {                                                                                               \
        const int64_t sw = g->stride[2];                                                            \
        I2C_WALK({                                                                                  \
            if (brow >= 0 && h > l) {                                                               \
                const T *in = col + crow * ld + dst;                                                \
                T *out = big + c * bvol + brow * W;                                                 \
                if (sw == 1) add_row_##N(out + l + off, in + l, h - l);                             \
                else I2C_STRIDED_##N(out + l * sw + off, in + l, h - l, sw);                        \
            }                                                                                       \
        })                                                                                          \
    }
I2C_ADD_DEFINE(f32, float)
I2C_ADD_DEFINE(f64, double)
I2C_ADD_DEFINE(u8, uint8_t)
I2C_ADD_DEFINE(i8, int8_t)
I2C_ADD_DEFINE(i16, int16_t)
I2C_ADD_DEFINE(i32, int32_t)
I2C_ADD_DEFINE(i64, int64_t)

bool pct_col2im_supports(int dtype)
{
    return dtype == PCT_FLOAT32 || dtype == PCT_FLOAT64 || pct_dtype_is_integral(dtype, false);
}

void pct_col2im(const pct_im2col_geom *g, int dtype, const void *col, int64_t ld, void *big,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1)
{
    switch (dtype) {
    case PCT_FLOAT32: col2im_f32(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_FLOAT64: col2im_f64(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_UINT8: col2im_u8(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT8: col2im_i8(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT16: col2im_i16(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT32: col2im_i32(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT64: col2im_i64(g, col, ld, big, c0, c1, j0, j1); break;
    default: break;
    }
}
