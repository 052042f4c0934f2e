/* reduce_vec.c: the reductions' explicit-vector loops (Note [Explicit vectors]): NaN-aware
 * float max/min, sum of exp, and softmax rows, each instantiated at three native widths and
 * picked once by CPU feature (pct_red_vec_select). reduce.c and softmax.c call them through the
 * wrappers of reduce_internal.h.
 */
#include "reduce_internal.h"

/* Note [Explicit vectors]: GCC does not vectorize NaN-aware min/max or the inlined expf
 * above under ISO flags (no -ffast-math), so the hottest float loops are written with GCC
 * vector extensions. Each is instantiated at three native widths (16-byte baseline,
 * AVX2 32-byte, AVX-512 64-byte, each with its own target attribute) and red_vec() picks
 * one set by CPU feature at first use. Vectors never cross a function boundary, so no
 * ABI depends on the target. */
typedef float red_v4f __attribute__((vector_size(16)));
typedef int32_t red_v4i __attribute__((vector_size(16)));
typedef double red_v2d __attribute__((vector_size(16)));
typedef int64_t red_v2l __attribute__((vector_size(16)));
typedef float red_v8f __attribute__((vector_size(32)));
typedef int32_t red_v8i __attribute__((vector_size(32)));
typedef double red_v4d __attribute__((vector_size(32)));
typedef int64_t red_v4l __attribute__((vector_size(32)));
typedef float red_v16f __attribute__((vector_size(64)));
typedef int32_t red_v16i __attribute__((vector_size(64)));
typedef double red_v8d __attribute__((vector_size(64)));
typedef int64_t red_v8l __attribute__((vector_size(64)));
#define RED_VSEL(VI, VF, m, a, b) ((VF)(((VI)(a) & (m)) | ((VI)(b) & ~(m))))
/* out = expf(x) lane-wise, as pct_fast_expf: fast_exp.h's vector exp for x <= 88.38, inf
 * beyond 88.72 (in between, exp(88.38)) */
#define RED_VEXPF(VF, VI, out, xin)                                                            \
    do {                                                                                       \
        VF v_ = (xin), z0_ = {0};                                                              \
        VF vc_ = RED_VSEL(VI, VF, v_ > z0_ + 88.37626f, z0_ + 88.37626f, v_);                  \
        PCT_VEXPF_NEG(VF, VI, (out), vc_);                                                     \
        (out) = RED_VSEL(VI, VF, v_ > z0_ + 88.72283f, z0_ + INFINITY, (out));                 \
    } while (0)

/* NaN-propagating max / min of a contiguous run, starting from a (not NaN): a compare-
 * and-select that ignores NaN plus a lane mask of NaNs seen, so the epilogue has no
 * branches to mispredict. */
#define RED_VMINMAX(name, ATTR, T, VF, VI, L, CMP)                                             \
    ATTR static T name(T a, const T *restrict q, int64_t n)                                    \
    {                                                                                          \
        VF acc0 = (VF){0} + a, acc1 = acc0, acc2 = acc0, acc3 = acc0;                          \
        VI nan = {0};                                                                          \
        int64_t k = 0;                                                                         \
        /* four chains: a compare-and-select is ~4 cycles of latency, two loads a cycle */      \
        for (; k + 4 * L <= n; k += 4 * L) {                                                   \
            VF x0, x1, x2, x3;                                                                 \
            memcpy(&x0, q + k, sizeof x0);                                                     \
            memcpy(&x1, q + k + L, sizeof x1);                                                 \
            memcpy(&x2, q + k + 2 * L, sizeof x2);                                             \
            memcpy(&x3, q + k + 3 * L, sizeof x3);                                             \
            acc0 = RED_VSEL(VI, VF, x0 CMP acc0, x0, acc0);                                    \
            acc1 = RED_VSEL(VI, VF, x1 CMP acc1, x1, acc1);                                    \
            acc2 = RED_VSEL(VI, VF, x2 CMP acc2, x2, acc2);                                    \
            acc3 = RED_VSEL(VI, VF, x3 CMP acc3, x3, acc3);                                    \
            nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);                          \
        }                                                                                      \
        acc0 = RED_VSEL(VI, VF, acc2 CMP acc0, acc2, acc0);                                    \
        acc1 = RED_VSEL(VI, VF, acc3 CMP acc1, acc3, acc1);                                    \
        for (; k + 2 * L <= n; k += 2 * L) {                                                   \
            VF x0, x1;                                                                         \
            memcpy(&x0, q + k, sizeof x0);                                                     \
            memcpy(&x1, q + k + L, sizeof x1);                                                 \
            acc0 = RED_VSEL(VI, VF, x0 CMP acc0, x0, acc0);                                    \
            acc1 = RED_VSEL(VI, VF, x1 CMP acc1, x1, acc1);                                    \
            nan |= (x0 != x0) | (x1 != x1);                                                    \
        }                                                                                      \
        acc0 = RED_VSEL(VI, VF, acc1 CMP acc0, acc1, acc0);                                    \
        T t = a;                                                                               \
        int any = 0;                                                                           \
        for (int i = 0; i < L; i++) {                                                          \
            t = acc0[i] CMP t ? acc0[i] : t;                                                   \
            any |= nan[i] != 0;                                                                \
        }                                                                                      \
        for (; k < n; k++) {                                                                   \
            t = q[k] CMP t ? q[k] : t;                                                         \
            any |= q[k] != q[k];                                                               \
        }                                                                                      \
        return any ? (T)NAN : t;                                                               \
    }

/* sum of expf(x - m) over a contiguous float run (blocks summed in double) */
#define RED_VSUMEXP(name, ATTR, VF, VI, L)                                                     \
    ATTR static float name(const float *restrict q, int64_t n, float m)                        \
    {                                                                                          \
        double total = 0;                                                                      \
        for (int64_t b = 0; b < n; b += 4096) {                                                \
            int64_t e = b + 4096 < n ? b + 4096 : n, k = b;                                    \
            VF s0 = {0}, s1 = {0};                                                             \
            for (; k + 2 * L <= e; k += 2 * L) {                                               \
                VF x0, x1, e0, e1;                                                             \
                memcpy(&x0, q + k, sizeof x0);                                                 \
                memcpy(&x1, q + k + L, sizeof x1);                                             \
                RED_VEXPF(VF, VI, e0, x0 - m);                                                 \
                RED_VEXPF(VF, VI, e1, x1 - m);                                                 \
                s0 += e0;                                                                      \
                s1 += e1;                                                                      \
            }                                                                                  \
            s0 += s1;                                                                          \
            float part = 0;                                                                    \
            for (int i = 0; i < L; i++) part += s0[i];                                         \
            for (; k < e; k++) part += pct_fast_expf(q[k] - m);                                     \
            total += part;                                                                     \
        }                                                                                      \
        return (float)total;                                                                   \
    }

/* Horizontal max / sum of a vector by halving (a tree, not a serial chain: short rows pay
 * for these once per row). The max ignores NaN lanes, as the loops that feed it do. */
#define RED_VHMAX(name, ATTR, VF, VI, L)                                                       \
    ATTR static inline float name(VF v)                                                        \
    {                                                                                          \
        VI idx = {0};                                                                          \
        for (int i = 0; i < L; i++) idx[i] = i;                                                \
        for (int w = L / 2; w > 0; w /= 2) {                                                   \
            VF u = __builtin_shuffle(v, idx ^ w);                                              \
            v = RED_VSEL(VI, VF, u > v, u, v);                                                 \
        }                                                                                      \
        return v[0];                                                                           \
    }
#define RED_VHSUM(name, ATTR, VF, VI, L)                                                       \
    ATTR static inline float name(VF v)                                                        \
    {                                                                                          \
        VI idx = {0};                                                                          \
        for (int i = 0; i < L; i++) idx[i] = i;                                                \
        for (int w = L / 2; w > 0; w /= 2) v += __builtin_shuffle(v, idx ^ w);                 \
        return v[0];                                                                           \
    }

/* rows per chunk of the softmax rows (reduce_vec_impl.h) */
#define RED_SM_CHUNK 16

/* One set of the loops per instruction set: red_vec_<sfx> (reduce_vec_impl.h). */

#define RV_SFX base
#define RV_ATTR
#define RV_VF red_v4f
#define RV_VI red_v4i
#define RV_LF 4
#define RV_VD red_v2d
#define RV_VL red_v2l
#define RV_LD 2
#include "reduce_vec_impl.h"
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PCT_NO_TARGET_CLONES)
#define RED_VEC_X86 1
/* the levels of simd_levels.h: their FMA contraction (off under -std=c11) shortens exp's polynomial chain, ~20% of
   short-row softmax */
#define RV_SFX avx2
#define RV_ATTR PCT_SIMD_ATTR_AVX2
#define RV_VF red_v8f
#define RV_VI red_v8i
#define RV_LF 8
#define RV_VD red_v4d
#define RV_VL red_v4l
#define RV_LD 4
#include "reduce_vec_impl.h"
#if !defined(PCT_NO_AVX512)
#define RED_VEC_AVX512 1
#define RV_SFX avx512
#define RV_ATTR PCT_SIMD_ATTR_AVX512
#define RV_VF red_v16f
#define RV_VI red_v16i
#define RV_LF 16
#define RV_VD red_v8d
#define RV_VL red_v8l
#define RV_LD 8
#include "reduce_vec_impl.h"
#endif
#endif

const red_vec_impl *pct_red_vec_cached;

/* The vector kernels for this CPU, chosen once (a benign race stores the same pointer). */
const red_vec_impl *pct_red_vec_select(void)
{
    const red_vec_impl *v = __atomic_load_n(&pct_red_vec_cached, __ATOMIC_ACQUIRE);
    if (v) return v;
    v = &red_vec_base;
#ifdef RED_VEC_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v = &red_vec_avx2;
#ifdef RED_VEC_AVX512
    if (__builtin_cpu_supports("avx512f")) v = &red_vec_avx512;
#endif
#endif
    __atomic_store_n(&pct_red_vec_cached, v, __ATOMIC_RELEASE);
    return v;
}
