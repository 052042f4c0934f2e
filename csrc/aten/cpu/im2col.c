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
typedef struct { uint64_t lo, hi; } i2c_bytes16; /* a complex128 element, copied whole */
I2C_COPY_DEFINE(i2c_bytes16)

void pct_im2col(const pct_im2col_geom *g, int itemsize, const void *big, void *col, int64_t ld,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1)
{
    switch (itemsize) {
    case 1: im2col_uint8_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 2: im2col_uint16_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 4: im2col_uint32_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 8: im2col_uint64_t(g, big, col, ld, c0, c1, j0, j1); break;
    case 16: im2col_i2c_bytes16(g, big, col, ld, c0, c1, j0, j1); break;
    default: break;
    }
}

/* The strided add out[i * s] += in[i] (s > 1). For float32 on AVX-512 CPUs, one masked vector
 * covers 16 / s outputs: a load of that many of in's values is spread to every s-th lane by a
 * permute (an expanding load does the same but is microcoded, twice as slow on Zen 4/5) and
 * added into those lanes of out. Nothing outside the row's touched span is accessed. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
#include <immintrin.h>
__attribute__((target("avx512f"))) static void add_strided_f32_avx512(float *out, const float *in, int64_t n, int64_t s)
{
    /* every s-th lane of 16, for s = 2..8 */
    static const uint16_t lanes[9] = {0, 0xffff, 0x5555, 0x9249, 0x1111, 0x8421, 0x1041, 0x4081, 0x0101};
    const __mmask16 m = (__mmask16)lanes[s];
    const int64_t per = __builtin_popcount(lanes[s]);
    /* lane l takes in[l / s] */
    static const int32_t spread[9][16] = {
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
        {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7},
        {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5},
        {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
        {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3},
        {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2},
        {0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2},
        {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}};
    const __m512i idx = _mm512_loadu_si512(spread[s]);
    int64_t i = 0;
    /* while all 16 lanes lie between the row's first and last touched element (so in memory
     * only this thread writes), plain moves: the other lanes are stored back unchanged */
    const __mmask16 mper = (__mmask16)((1u << per) - 1u);
    for (; i + per < n; i += per) {
        const __m512 v = _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(mper, in + i));
        const __m512 o = _mm512_loadu_ps(out + i * s);
        _mm512_storeu_ps(out + i * s, _mm512_mask_add_ps(o, m, o, v));
    }
    for (; i < n; i += per) {
        const int64_t cnt = n - i < per ? n - i : per;
        const __mmask16 mi = (__mmask16)((1u << cnt) - 1u), mo = (__mmask16)(m & ((1u << ((cnt - 1) * s + 1)) - 1u));
        const __m512 v = _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(mi, in + i));
        _mm512_mask_storeu_ps(out + i * s, mo, _mm512_add_ps(_mm512_maskz_loadu_ps(mo, out + i * s), v));
    }
}

/* col2im of the common decoder / downsampling geometry: stride 2 and 3 taps along the rows
 * (dilation 1). Of a (channel, kd, kh, small row) the three taps' rows of col are added in one
 * pass over the big row: with w + pw even, big column w takes in0[(w + pw) / 2] and
 * in2[(w + pw) / 2 - 1], and w + 1 takes in1[(w + pw) / 2]; so 16 big columns are the
 * interleave of (in0 + in2) and in1 at 8 small columns, one masked add instead of six. Only the
 * small columns [a, b) of the block contribute; nothing outside the big row is touched. */
__attribute__((target("avx512f,bmi2"))) static void col2im_f32_s2k3(const pct_im2col_geom *g, const float *col,
                                                                   int64_t ld, float *big, int64_t c0, int64_t c1,
                                                                   int64_t j0, int64_t j1)
{
    const int64_t KD = g->kernel[0], KH = g->kernel[1], D = g->big[0], H = g->big[1], W = g->big[2];
    const int64_t OH = g->small[1], OW = g->small[2], pw = g->pad[2], kvol = KD * KH * 3, bvol = D * H * W;
    if (j1 <= j0 || OW <= 0) return;
    const int64_t rfirst = j0 / OW, rlast = (j1 - 1) / OW;
    const __m512i mix = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int64_t c = c0; c < c1; c++)
        for (int64_t kd = 0; kd < KD; kd++)
            for (int64_t kh = 0; kh < KH; kh++) {
                const float *in = col + (c * kvol + (kd * KH + kh) * 3) * ld - j0;
                for (int64_t r = rfirst; r <= rlast; r++) {
                    const int64_t od = r / OH, oh = r % OH;
                    const int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dil[0];
                    const int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dil[1];
                    if (id < 0 || id >= D || ih < 0 || ih >= H) continue;
                    const int64_t a = r == rfirst ? j0 - r * OW : 0, b = r == rlast ? j1 - r * OW : OW;
                    const float *i0 = in + r * OW, *i1 = i0 + ld, *i2 = i1 + ld;
                    float *out = big + c * bvol + (id * H + ih) * W;
                    /* windows of 16 big columns from w0 = 2o - pw, small columns o.. o + 7 */
                    for (int64_t o = a; o <= b; o += 8) {
                        const int64_t w0 = 2 * o - pw;
                        /* lanes i of each load: small column o + i (in2: o + i - 1) inside [a, b) */
                        const uint32_t hi = (uint32_t)(b - o >= 8 ? 0xff : (1u << (b - o)) - 1u);
                        const uint32_t m2 = (hi << 1 | (o > a ? 1u : 0u)) & (uint32_t)(b - o + 1 >= 8 ? 0xff : (1u << (b - o + 1)) - 1u);
                        const __m512 v0 = _mm512_maskz_loadu_ps((__mmask16)hi, i0 + o);
                        const __m512 v1 = _mm512_maskz_loadu_ps((__mmask16)hi, i1 + o);
                        const __m512 v2 = _mm512_maskz_loadu_ps((__mmask16)m2, i2 + o - 1);
                        const __m512 v = _mm512_permutex2var_ps(_mm512_add_ps(v0, v2), mix, v1);
                        /* lanes with a contribution, inside [0, W) */
                        uint32_t m = _pdep_u32(hi | m2, 0x5555u) | _pdep_u32(hi, 0xaaaau);
                        if (w0 < 0) m = -w0 >= 16 ? 0u : m & ~0u << -w0;
                        if (w0 + 16 > W) m &= (W - w0 <= 0) ? 0u : (1u << (W - w0)) - 1u;
                        const __mmask16 mk = (__mmask16)m;
                        if (mk) _mm512_mask_storeu_ps(out + w0, mk, _mm512_add_ps(_mm512_maskz_loadu_ps(mk, out + w0), v));
                    }
                }
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
#define I2C_STRIDED_c64 I2C_STRIDED_GENERIC
#define I2C_STRIDED_c128 I2C_STRIDED_GENERIC

/* The contiguous add of stride 1, in its own function so it gets vector clones. */
#define I2C_ADD_DEFINE(N, T)                                                                        \
    PCT_HOT static void add_row_##N(T *restrict d, const T *restrict s, int64_t n)                       \
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
I2C_ADD_DEFINE(c64, pct_cfloat) /* C11 complex: += adds both parts */
I2C_ADD_DEFINE(c128, pct_cdouble)

bool pct_col2im_supports(int dtype)
{
    return dtype == PCT_FLOAT32 || dtype == PCT_FLOAT64 || dtype == PCT_COMPLEX64 || dtype == PCT_COMPLEX128 ||
           pct_dtype_is_integral(dtype, false);
}

void pct_col2im(const pct_im2col_geom *g, int dtype, const void *col, int64_t ld, void *big,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1)
{
    switch (dtype) {
    case PCT_FLOAT32:
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PCT_NO_AVX512)
        if (g->stride[2] == 2 && g->kernel[2] == 3 && g->dil[2] == 1 && have_avx512()) {
            col2im_f32_s2k3(g, col, ld, big, c0, c1, j0, j1);
            break;
        }
#endif
        col2im_f32(g, col, ld, big, c0, c1, j0, j1);
        break;
    case PCT_FLOAT64: col2im_f64(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_UINT8: col2im_u8(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT8: col2im_i8(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT16: col2im_i16(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT32: col2im_i32(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_INT64: col2im_i64(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_COMPLEX64: col2im_c64(g, col, ld, big, c0, c1, j0, j1); break;
    case PCT_COMPLEX128: col2im_c128(g, col, ld, big, c0, c1, j0, j1); break;
    default: break;
    }
}
