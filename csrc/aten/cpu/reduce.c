/* reduce.c: reductions (sum, mean, prod, amax, max, argmax, all, var, norm, logsumexp, ...)
 * and softmax / log_softmax.
 *
 * Note [Reduction plan]
 * Every reduction goes through one plan and one driver (red_plan_build, red_run):
 *  - the kept dims and the reduced dims of the input are split into two lists (size,
 *    byte stride in the input, byte stride in each output), size-1 dims dropped and
 *    neighbours that are contiguous merged. Kept dims are ordered by input stride so
 *    the innermost has the smallest; reduced dims too, except for ops that report an
 *    index (argmax, max.dim), which keep the logical order so linear positions are
 *    torch's indices.
 *  - a kernel (red_kernel) is five functions generated per op and dtype from a small
 *    element-level functor (INIT, ACC, COMBINE, RUN, FINISH macros): init and combine
 *    accumulators, `run` folds one strided 1-D run of the input into one accumulator,
 *    `vrun` folds rows of `nb` neighbouring input elements into the `nb` accumulators of
 *    neighbouring outputs, and `finish` writes results.
 *  - horizontal mode: for each output element, the reduced space is walked as 1-D runs
 *    along the innermost reduced dim (`run`). Vertical mode (the innermost kept dim is
 *    more contiguous than the innermost reduced dim, e.g. x.sum(0) of a row-major
 *    matrix) or very short reductions: blocks of RED_NB neighbouring outputs are reduced
 *    together, row by row (`vrun`), so loads stay contiguous and vectorize. Consecutive
 *    horizontal outputs are walked with an odometer (red_do_units).
 *  - accuracy: runs are summed pairwise (blocks of RED_PW_BLOCK elements with RED_NACC
 *    independent accumulators, which also lets the compiler vectorize without
 *    -ffast-math); successive runs / positions are folded through a three-level
 *    cascade (RED_FOLD), close to torch's cascade sum.
 *  - threads: above PCT_PARALLEL_GRAIN elements the GIL is released and OpenMP splits
 *    the output units across threads; when there are fewer units than threads, each
 *    unit's reduced range is split instead and the partial accumulators combined in
 *    order (deterministic, and index ops keep the first occurrence).
 *  - speed: hot contiguous loops get AVX2 / AVX-512 clones chosen at load time, long runs
 *    are peeled to a 64-byte boundary, and NaN-aware min/max, exp (softmax, logsumexp)
 *    use explicit vectors (Note [Explicit vectors]).
 * Nothing inside the driver calls Python or raises: all checks run before it.
 * softmax / log_softmax are not reductions of the output's shape; they have their own
 * row (last dim) and column-block (other dims) loops at the end of this file.
 */
#include "../iter.h"
#include "../op.h"
#include "../../python/pyobjects.h"
#include "../error.h"
#include "../out.h"
#include "blas.h"
#include "pointwise.h"
#include "fast_exp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------------------------ */
/* per-dtype helpers                                                                     */


/* accumulator of sums: floats in float (double for double), integers wrap in uint64 */
#define RED_SUMT_BOOL uint64_t
#define RED_SUMT_UINT8 uint64_t
#define RED_SUMT_INT8 uint64_t
#define RED_SUMT_INT16 uint64_t
#define RED_SUMT_INT32 uint64_t
#define RED_SUMT_INT64 uint64_t
#define RED_SUMT_FLOAT16 float
#define RED_SUMT_BFLOAT16 float
#define RED_SUMT_FLOAT32 float
#define RED_SUMT_FLOAT64 double
#define RED_SUMT_UINT16 uint64_t
#define RED_SUMT_UINT32 uint64_t
#define RED_SUMT_UINT64 uint64_t

#define RED_ISNAN_BOOL(x) 0
#define RED_ISNAN_UINT8(x) 0
#define RED_ISNAN_INT8(x) 0
#define RED_ISNAN_INT16(x) 0
#define RED_ISNAN_INT32(x) 0
#define RED_ISNAN_INT64(x) 0
#define RED_ISNAN_FLOAT16(x) ((x) != (x))
#define RED_ISNAN_BFLOAT16(x) ((x) != (x))
#define RED_ISNAN_FLOAT32(x) ((x) != (x))
#define RED_ISNAN_FLOAT64(x) ((x) != (x))
#define RED_ISNAN_UINT16(x) 0
#define RED_ISNAN_UINT32(x) 0
#define RED_ISNAN_UINT64(x) 0

#define RED_LOWEST_BOOL false
#define RED_LOWEST_UINT8 0
#define RED_LOWEST_INT8 INT8_MIN
#define RED_LOWEST_INT16 INT16_MIN
#define RED_LOWEST_INT32 INT32_MIN
#define RED_LOWEST_INT64 INT64_MIN
#define RED_LOWEST_FLOAT16 (-INFINITY)
#define RED_LOWEST_BFLOAT16 (-INFINITY)
#define RED_LOWEST_FLOAT32 (-INFINITY)
#define RED_LOWEST_FLOAT64 (-INFINITY)
#define RED_LOWEST_UINT16 0
#define RED_LOWEST_UINT32 0
#define RED_LOWEST_UINT64 0
#define RED_NAN_BOOL 0
#define RED_NAN_UINT8 0
#define RED_NAN_INT8 0
#define RED_NAN_INT16 0
#define RED_NAN_INT32 0
#define RED_NAN_INT64 0
#define RED_NAN_FLOAT16 NAN
#define RED_NAN_BFLOAT16 NAN
#define RED_NAN_FLOAT32 NAN
#define RED_NAN_FLOAT64 NAN
#define RED_NAN_UINT16 0
#define RED_NAN_UINT32 0
#define RED_NAN_UINT64 0
#define RED_HIGHEST_BOOL true
#define RED_HIGHEST_UINT8 UINT8_MAX
#define RED_HIGHEST_INT8 INT8_MAX
#define RED_HIGHEST_INT16 INT16_MAX
#define RED_HIGHEST_INT32 INT32_MAX
#define RED_HIGHEST_INT64 INT64_MAX
#define RED_HIGHEST_FLOAT16 INFINITY
#define RED_HIGHEST_BFLOAT16 INFINITY
#define RED_HIGHEST_FLOAT32 INFINITY
#define RED_HIGHEST_FLOAT64 INFINITY
#define RED_HIGHEST_UINT16 UINT16_MAX
#define RED_HIGHEST_UINT32 UINT32_MAX
#define RED_HIGHEST_UINT64 UINT64_MAX

/* float math in the compute type: expf for float, exp for double */
#define RED_FN_FLOAT16(fn) fn##f
#define RED_FN_BFLOAT16(fn) fn##f
#define RED_FN_FLOAT32(fn) fn##f
#define RED_FN_FLOAT64(fn) fn
#define RED_FN(E, fn) RED_FN_##E(fn)

/* 1 for the 16-bit floats (stored narrower than they are computed) */
#define RED_NARROW_FLOAT16 1
#define RED_NARROW_BFLOAT16 1
#define RED_NARROW_FLOAT32 0
#define RED_NARROW_FLOAT64 0

/* Instantiation over dtype subsets. */
#define RED_FLT_BOOL(t, e) e
#define RED_FLT_UINT8(t, e) e
#define RED_FLT_INT8(t, e) e
#define RED_FLT_INT16(t, e) e
#define RED_FLT_INT32(t, e) e
#define RED_FLT_INT64(t, e) e
#define RED_FLT_FLOAT16(t, e) t
#define RED_FLT_BFLOAT16(t, e) t
#define RED_FLT_FLOAT32(t, e) t
#define RED_FLT_FLOAT64(t, e) t
#define RED_FLT_UINT16(t, e) e
#define RED_FLT_UINT32(t, e) e
#define RED_FLT_UINT64(t, e) e
#define RED_IF_FLOAT(E, t, e) RED_FLT_##E(t, e)
#define RED_NOTHING(...)

/* Hot contiguous loops get AVX-512 / AVX2 clones picked at load time (never -march=native). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PCT_NO_TARGET_CLONES) && !defined(PCT_NO_AVX512)
#define RED_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PCT_NO_TARGET_CLONES)
#define RED_HOT __attribute__((target_clones("avx2", "default")))
#else
#define RED_HOT
#endif

/* ------------------------------------------------------------------------------------ */
/* the kernel interface                                                                  */

typedef struct red_ctx {
    int64_t count;      /* reduced elements per output */
    double p;           /* norm order */
    double correction;  /* var/std */
    bool take_sqrt;     /* std */
    bool with_mean;     /* var_mean / std_mean: second output */
    bool ordered;       /* the op reports an index: fold positions in order */
} red_ctx;

typedef struct red_kernel {
    size_t acc_size;
    void (*init)(void *acc, int64_t nb, const red_ctx *ctx);
    void (*combine)(void *acc, const void *later, int64_t nb, const red_ctx *ctx);
    void (*run)(void *acc, const char *p, int64_t n, int64_t stride, int64_t idx, const red_ctx *ctx);
    /* rows reduced positions, rs bytes apart, the first at position idx */
    void (*vrun)(void *acc, const char *p, int64_t nb, int64_t stride, int64_t rows, int64_t rs, int64_t idx,
                 const red_ctx *ctx);
    void (*finish)(void *acc, int64_t nb, char *const *outs, const int64_t *ostrides, const red_ctx *ctx);
} red_kernel;

#define RED_NB 256          /* outputs per vertical block */
#define RED_VSMALL 32       /* vertical blocks of at most this many outputs fold rows in registers */
#define RED_VROWS 8         /* rows folded at once there */
#define RED_VCHUNK 64       /* lanes of a dense block of rows folded at once */
#define RED_ACC_MAX 32      /* bytes of the largest accumulator */
#define RED_FOLD 256        /* runs (or positions) per cascade level */
#define RED_PW_BLOCK 8192   /* elements per pairwise leaf */
#define RED_NACC 64         /* independent accumulators in a leaf (4 AVX-512 vectors of float) */

/* Pairwise fold (OP is + or *, ID its identity) of MAP(x) over a strided run, in A
 * accumulators. MAP may use x, m and ctx. */
#define RED_PFOLD(name, E, T, C, A, MAP, OP, ID)                                               \
    /* runs of at most 4 * RED_NACC (rows of a small inner reduction, e.g. 7x7 spatial means): 16 \
     * accumulators, one AVX-512 vector of float (8 gave GCC a shuffle-heavy vectorization),  \
     * instead of initialising and folding all RED_NACC */                                     \
    RED_HOT static A name##_short_c(const T *restrict q, int64_t n, double m, const red_ctx *ctx) \
    {                                                                                          \
        (void)m; (void)ctx;                                                                    \
        A acc[16];                                                                             \
        for (int j = 0; j < 16; j++) acc[j] = ID;                                              \
        int64_t k = 0;                                                                         \
        for (; k + 16 <= n; k += 16)                                                           \
            for (int j = 0; j < 16; j++) { C x = PCT_TO_COMPUTE_##E(q[k + j]); acc[j] = acc[j] OP (A)(MAP); } \
        for (int j = 0; k < n; k++, j++) { C x = PCT_TO_COMPUTE_##E(q[k]); acc[j] = acc[j] OP (A)(MAP); } \
        for (int w = 8; w > 0; w /= 2)                                                         \
            for (int j = 0; j < w; j++) acc[j] = acc[j] OP acc[j + w];                         \
        return acc[0];                                                                         \
    }                                                                                          \
    RED_HOT static A name##_leaf_c(const T *restrict q, int64_t n, double m, const red_ctx *ctx) \
    {                                                                                          \
        if (n <= 4 * RED_NACC) return name##_short_c(q, n, m, ctx);                            \
        (void)m; (void)ctx;                                                                    \
        A acc[RED_NACC];                                                                       \
        for (int j = 0; j < RED_NACC; j++) acc[j] = ID;                                        \
        int64_t k = 0;                                                                         \
        for (; k + RED_NACC <= n; k += RED_NACC)                                               \
            for (int j = 0; j < RED_NACC; j++) { C x = PCT_TO_COMPUTE_##E(q[k + j]); acc[j] = acc[j] OP (A)(MAP); } \
        for (int j = 0; k < n; k++, j++) { C x = PCT_TO_COMPUTE_##E(q[k]); acc[j] = acc[j] OP (A)(MAP); } \
        for (int w = RED_NACC / 2; w > 0; w /= 2)                                              \
            for (int j = 0; j < w; j++) acc[j] = acc[j] OP acc[j + w];                         \
        return acc[0];                                                                         \
    }                                                                                          \
    static A name##_leaf_s(const char *p, int64_t n, int64_t s, double m, const red_ctx *ctx)   \
    {                                                                                          \
        (void)m; (void)ctx;                                                                    \
        A acc[8];                                                                              \
        for (int j = 0; j < 8; j++) acc[j] = ID;                                               \
        int64_t k = 0;                                                                         \
        for (; k + 8 <= n; k += 8)                                                             \
            for (int j = 0; j < 8; j++) {                                                      \
                C x = PCT_TO_COMPUTE_##E(*(const T *)(p + (k + j) * s));                       \
                acc[j] = acc[j] OP (A)(MAP);                                                   \
            }                                                                                  \
        for (int j = 0; k < n; k++, j++) { C x = PCT_TO_COMPUTE_##E(*(const T *)(p + k * s)); acc[j] = acc[j] OP (A)(MAP); } \
        for (int w = 4; w > 0; w /= 2)                                                         \
            for (int j = 0; j < w; j++) acc[j] = acc[j] OP acc[j + w];                         \
        return acc[0];                                                                         \
    }                                                                                          \
    static A name##_rec(const char *p, int64_t n, int64_t s, double m, const red_ctx *ctx)      \
    {                                                                                          \
        if (n <= RED_PW_BLOCK)                                                                 \
            return s == (int64_t)sizeof(T) ? name##_leaf_c((const T *)p, n, m, ctx)            \
                                           : name##_leaf_s(p, n, s, m, ctx);                   \
        int64_t h = (n / 2 + RED_NACC - 1) / RED_NACC * RED_NACC;                              \
        return name##_rec(p, h, s, m, ctx) OP name##_rec(p + h * s, n - h, s, m, ctx);          \
    }                                                                                          \
    /* long contiguous runs start with a head up to a 64-byte boundary: vector loads that    \
     * straddle cache lines cost ~10% even when memory-bound */                              \
    static A name(const char *p, int64_t n, int64_t s, double m, const red_ctx *ctx)            \
    {                                                                                          \
        if (s == (int64_t)sizeof(T) && n > RED_PW_BLOCK && ((uintptr_t)p % sizeof(T)) == 0) {  \
            int64_t h = (int64_t)(((64 - ((uintptr_t)p & 63)) & 63) / sizeof(T));             \
            if (h > 0) return name##_leaf_c((const T *)p, h, m, ctx) OP name##_rec(p + h * s, n - h, s, m, ctx); \
        }                                                                                      \
        return name##_rec(p, n, s, m, ctx);                                                    \
    }
#define RED_PSUM(name, E, T, C, A, MAP) RED_PFOLD(name, E, T, C, A, MAP, +, 0)

#define RED_EXP_FLOAT16(x) pct_fast_expf(x)
#define RED_EXP_BFLOAT16(x) pct_fast_expf(x)
#define RED_EXP_FLOAT32(x) pct_fast_expf(x)
#define RED_EXP_FLOAT64(x) exp(x)
#define RED_EXP(E, x) RED_EXP_##E(x)

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
        VF acc0 = (VF){0} + a, acc1 = acc0;                                                    \
        VI nan = {0};                                                                          \
        int64_t k = 0;                                                                         \
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

/* softmax / log_softmax of contiguous float rows [r0, r1) of length len: a max pass, an exp
 * pass (writing exp to out for softmax) and a scale pass, like torch. Row tails go through a
 * vector padded with -inf (exp 0). Rows go in chunks of up to RED_SM_CHUNK whose max and sum
 * are kept, so the per-row log of log_softmax is one vectorized loop per chunk (short rows,
 * e.g. (2048, 96), are dominated by per-row work); a chunk stays within ~16 KiB so the later
 * passes read from L1, and all its max passes run before its exp passes so that rows' exp
 * chains overlap instead of each waiting for its max. The max pass prefetches the next chunk:
 * a row of 1024 floats is one 4 KiB page and hardware prefetchers stop at page boundaries,
 * so without it every row starts with cache misses (measured ~25% of (4096, 1024)). */
#define RED_SM_CHUNK 16
#define RED_VSOFTMAX(name, ATTR, VF, VI, L)                                                    \
    RED_VHMAX(name##_hmax, ATTR, VF, VI, L)                                                    \
    RED_VHSUM(name##_hsum, ATTR, VF, VI, L)                                                    \
    ATTR static void name(const float *restrict in, float *restrict out, int64_t r0, int64_t r1, \
                          int64_t len, bool lg)                                                \
    {                                                                                          \
        const int64_t tail = len % L, body = len - tail;                                       \
        const int64_t chunk = len >= 4096 / RED_SM_CHUNK ? (4096 + len - 1) / len : RED_SM_CHUNK; \
        /* prefetch distance in elements: the same row of the next chunk */                    \
        const int64_t pf = chunk * len < 4096 ? chunk * len : 4096;                            \
        const VF ninf = (VF){0} - INFINITY;                                                    \
        float mxs[RED_SM_CHUNK], sh[RED_SM_CHUNK];                                             \
        for (int64_t c0 = r0; c0 < r1; c0 += chunk) {                                          \
            const int64_t nr = r1 - c0 < chunk ? r1 - c0 : chunk;                              \
            for (int64_t g = 0; g < nr; g++) {                                                 \
                const float *x = in + (c0 + g) * len;                                          \
                const float *y = out + (c0 + g) * len;                                         \
                VF m0 = ninf, m1 = ninf, xt = ninf;                                            \
                if (tail) memcpy(&xt, x + body, sizeof(float) * (size_t)tail);                 \
                int64_t k = 0;                                                                 \
                for (; k + 2 * L <= body; k += 2 * L) {                                        \
                    VF a, b;                                                                   \
                    __builtin_prefetch(x + k + pf);                                            \
                    __builtin_prefetch(y + k + pf, 1);                                         \
                    memcpy(&a, x + k, sizeof a);                                               \
                    memcpy(&b, x + k + L, sizeof b);                                           \
                    m0 = RED_VSEL(VI, VF, a > m0, a, m0);                                      \
                    m1 = RED_VSEL(VI, VF, b > m1, b, m1);                                      \
                }                                                                              \
                if (k < body) {                                                                \
                    VF a;                                                                      \
                    memcpy(&a, x + k, sizeof a);                                               \
                    m0 = RED_VSEL(VI, VF, a > m0, a, m0);                                      \
                }                                                                              \
                m0 = RED_VSEL(VI, VF, xt > m0, xt, m0);                                        \
                m0 = RED_VSEL(VI, VF, m1 > m0, m1, m0);                                        \
                mxs[g] = name##_hmax(m0);                                                      \
            }                                                                                  \
            /* exp passes after all max passes: rows' exp chains overlap, none waits for a max */ \
            for (int64_t g = 0; g < nr; g++) {                                                 \
                const float *x = in + (c0 + g) * len;                                          \
                float *y = out + (c0 + g) * len;                                               \
                const float mx = mxs[g];                                                       \
                VF s0 = {0}, s1 = {0}, xt = ninf;                                              \
                int64_t k;                                                                     \
                for (k = 0; k + 2 * L <= body; k += 2 * L) {                                   \
                    VF a, b, ea, eb;                                                           \
                    memcpy(&a, x + k, sizeof a);                                               \
                    memcpy(&b, x + k + L, sizeof b);                                           \
                    PCT_VEXPF_NEG(VF, VI, ea, a - mx);                                         \
                    PCT_VEXPF_NEG(VF, VI, eb, b - mx);                                         \
                    if (!lg) {                                                                 \
                        memcpy(y + k, &ea, sizeof ea);                                         \
                        memcpy(y + k + L, &eb, sizeof eb);                                     \
                    }                                                                          \
                    s0 += ea;                                                                  \
                    s1 += eb;                                                                  \
                }                                                                              \
                if (k < body) {                                                                \
                    VF a, ea;                                                                  \
                    memcpy(&a, x + k, sizeof a);                                               \
                    PCT_VEXPF_NEG(VF, VI, ea, a - mx);                                         \
                    if (!lg) memcpy(y + k, &ea, sizeof ea);                                    \
                    s0 += ea;                                                                  \
                }                                                                              \
                if (tail) {                                                                    \
                    VF et;                                                                     \
                    memcpy(&xt, x + body, sizeof(float) * (size_t)tail);                       \
                    PCT_VEXPF_NEG(VF, VI, et, xt - mx);                                        \
                    if (!lg) memcpy(y + body, &et, sizeof(float) * (size_t)tail);              \
                    s0 += et;                                                                  \
                }                                                                              \
                sh[g] = name##_hsum(s0 + s1);                                                  \
            }                                                                                  \
            for (int64_t g = nr; g < RED_SM_CHUNK; g++) mxs[g] = 0, sh[g] = 1;                 \
            if (lg)                                                                            \
                for (int g = 0; g < RED_SM_CHUNK; g++) sh[g] = mxs[g] + pct_fast_logf(sh[g]);  \
            else                                                                               \
                for (int g = 0; g < RED_SM_CHUNK; g++) sh[g] = 1 / sh[g];                      \
            for (int64_t g = 0; g < nr; g++) {                                                 \
                const float *x = in + (c0 + g) * len;                                          \
                float *y = out + (c0 + g) * len;                                               \
                const float v = sh[g];                                                         \
                int64_t k = 0;                                                                 \
                if (lg) {                                                                      \
                    for (; k < body; k += L) {                                                 \
                        VF a;                                                                  \
                        memcpy(&a, x + k, sizeof a);                                           \
                        a -= v;                                                                \
                        memcpy(y + k, &a, sizeof a);                                           \
                    }                                                                          \
                    for (; k < len; k++) y[k] = x[k] - v;                                      \
                } else {                                                                       \
                    for (; k < body; k += L) {                                                 \
                        VF a;                                                                  \
                        memcpy(&a, y + k, sizeof a);                                           \
                        a *= v;                                                                \
                        memcpy(y + k, &a, sizeof a);                                           \
                    }                                                                          \
                    for (; k < len; k++) y[k] *= v;                                            \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

typedef struct red_vec_impl {
    float (*max_f32)(float, const float *, int64_t);
    float (*min_f32)(float, const float *, int64_t);
    double (*max_f64)(double, const double *, int64_t);
    double (*min_f64)(double, const double *, int64_t);
    float (*sumexp_f32)(const float *, int64_t, float);
    void (*softmax_rows_f32)(const float *, float *, int64_t, int64_t, int64_t, bool);
} red_vec_impl;

#define RED_VEC_SET(sfx, ATTR, VF, VI, LF, VD, VL, LD)                                         \
    RED_VMINMAX(red_vmax_f32_##sfx, ATTR, float, VF, VI, LF, >)                                \
    RED_VMINMAX(red_vmin_f32_##sfx, ATTR, float, VF, VI, LF, <)                                \
    RED_VMINMAX(red_vmax_f64_##sfx, ATTR, double, VD, VL, LD, >)                               \
    RED_VMINMAX(red_vmin_f64_##sfx, ATTR, double, VD, VL, LD, <)                               \
    RED_VSUMEXP(red_vsumexp_f32_##sfx, ATTR, VF, VI, LF)                                       \
    RED_VSOFTMAX(red_vsoftmax_rows_f32_##sfx, ATTR, VF, VI, LF)                                \
    static const red_vec_impl red_vec_##sfx = {red_vmax_f32_##sfx, red_vmin_f32_##sfx,         \
        red_vmax_f64_##sfx, red_vmin_f64_##sfx, red_vsumexp_f32_##sfx, red_vsoftmax_rows_f32_##sfx};

#define RED_ATTR_BASE
RED_VEC_SET(base, RED_ATTR_BASE, red_v4f, red_v4i, 4, red_v2d, red_v2l, 2)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PCT_NO_TARGET_CLONES)
#define RED_VEC_X86 1
/* FMA contraction (off under -std=c11) shortens exp's polynomial chain: ~20% of short-row softmax */
#define RED_ATTR_AVX2 __attribute__((target("avx2,fma"), optimize("fp-contract=fast")))
RED_VEC_SET(avx2, RED_ATTR_AVX2, red_v8f, red_v8i, 8, red_v4d, red_v4l, 4)
#if !defined(PCT_NO_AVX512)
#define RED_VEC_AVX512 1
#define RED_ATTR_AVX512 __attribute__((target("avx512f"), optimize("fp-contract=fast")))
RED_VEC_SET(avx512, RED_ATTR_AVX512, red_v16f, red_v16i, 16, red_v8d, red_v8l, 8)
#endif
#endif

/* The vector kernels for this CPU (chosen once; a benign race stores the same pointer). */
static const red_vec_impl *red_vec(void)
{
    static const red_vec_impl *impl;
    const red_vec_impl *v = __atomic_load_n(&impl, __ATOMIC_ACQUIRE);
    if (v) return v;
    v = &red_vec_base;
#ifdef RED_VEC_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v = &red_vec_avx2;
#ifdef RED_VEC_AVX512
    if (__builtin_cpu_supports("avx512f")) v = &red_vec_avx512;
#endif
#endif
    __atomic_store_n(&impl, v, __ATOMIC_RELEASE);
    return v;
}
static inline float red_vmax_f32(float a, const float *q, int64_t n) { return red_vec()->max_f32(a, q, n); }
static inline float red_vmin_f32(float a, const float *q, int64_t n) { return red_vec()->min_f32(a, q, n); }
static inline double red_vmax_f64(double a, const double *q, int64_t n) { return red_vec()->max_f64(a, q, n); }
static inline double red_vmin_f64(double a, const double *q, int64_t n) { return red_vec()->min_f64(a, q, n); }
static inline float red_vsumexp_f32(const float *q, int64_t n, float m) { return red_vec()->sumexp_f32(q, n, m); }
static inline void red_vsoftmax_rows_f32(const float *in, float *out, int64_t r0, int64_t r1, int64_t len, bool lg)
{
    red_vec()->softmax_rows_f32(in, out, r0, r1, len, lg);
}
#define RED_IS_F32_FLOAT16 0
#define RED_IS_F32_BFLOAT16 0
#define RED_IS_F32_FLOAT32 1
#define RED_IS_F32_FLOAT64 0

/* The default RUN: ACC over every element of the run. */
#define RED_RUN_LOOP(op, E, N, T, C, a, p, n, s, idx)                                          \
    do {                                                                                       \
        if ((s) == (int64_t)sizeof(T)) {                                                       \
            const T *restrict q_ = (const T *)(p);                                             \
            for (int64_t k_ = 0; k_ < (n); k_++) {                                             \
                C x = PCT_TO_COMPUTE_##E(q_[k_]);                                              \
                op##_ACC(E, N, T, C, a, x, (idx) + k_);                                        \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t k_ = 0; k_ < (n); k_++) {                                             \
                C x = PCT_TO_COMPUTE_##E(*(const T *)((p) + k_ * (s)));                        \
                op##_ACC(E, N, T, C, a, x, (idx) + k_);                                        \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* The five kernel functions of op for one dtype, from op's functor macros:
 *   op_A(E,N,T,C)                   accumulator type
 *   op_PRE(E,N,T,C)                 helper definitions (pairwise sums, ...)
 *   op_INIT(E,N,T,C,a)              empty accumulator
 *   op_ACC(E,N,T,C,a,x,idx)         fold element x (compute type C) at reduced position idx
 *   op_COMBINE(E,N,T,C,a,b)         a = a (+) b, b holding later elements
 *   op_RUN(E,N,T,C,a,p,n,s,idx)     fold a strided run (usually RED_RUN_LOOP or a pairwise sum)
 *   op_FINISH(E,N,T,C,a,o0,o1)      write results (o1: second output, for two-output ops) */
#define RED_KERNEL(op, E, N, T, C)                                                             \
    typedef op##_A(E, N, T, C) op##_acc_##N;                                                   \
    static void op##_init_##N(void *buf, int64_t nb, const red_ctx *ctx)                       \
    {                                                                                          \
        op##_acc_##N *a = buf;                                                                 \
        (void)ctx;                                                                             \
        for (int64_t j = 0; j < nb; j++) { op##_INIT(E, N, T, C, a[j]); }                      \
    }                                                                                          \
    static void op##_combine_##N(void *dst, const void *src, int64_t nb, const red_ctx *ctx)   \
    {                                                                                          \
        op##_acc_##N *a = dst;                                                                 \
        const op##_acc_##N *b = src;                                                           \
        (void)ctx;                                                                             \
        for (int64_t j = 0; j < nb; j++) { op##_COMBINE(E, N, T, C, a[j], b[j]); }             \
    }                                                                                          \
    static void op##_run_##N(void *buf, const char *p, int64_t n, int64_t s, int64_t idx, const red_ctx *ctx) \
    {                                                                                          \
        op##_acc_##N *a = buf;                                                                 \
        (void)ctx; (void)idx;                                                                  \
        op##_RUN(E, N, T, C, (*a), p, n, s, idx);                                              \
    }                                                                                          \
    RED_HOT static void op##_vrun_##N(void *buf, const char *p, int64_t nb, int64_t s, int64_t rows,     \
                                      int64_t rs, int64_t idx, const red_ctx *ctx)             \
    {                                                                                          \
        op##_acc_##N *restrict a = buf;                                                        \
        (void)ctx; (void)idx;                                                                  \
        int64_t r = 0;                                                                         \
        /* Few outputs (e.g. x.sum(1) of (64, 512, 8)): a[j] += x row by row would wait on the  \
         * store of the previous row's a[j]. Dense rows (rs = nb elements) are one contiguous   \
         * run whose lane i belongs to output i % nb: fold it RED_VCHUNK lanes at a time (lanes \
         * interleave rows, so not for ops that report an index); other rows fold RED_VROWS    \
         * rows into a register before touching a[j]. */                                       \
        if (nb <= RED_VSMALL && s == (int64_t)sizeof(T)) {                                     \
            if (!ctx->ordered && rs == nb * (int64_t)sizeof(T) && RED_VCHUNK % nb == 0 &&      \
                rows >= RED_VCHUNK / nb) {                                                     \
                const int64_t rpc = RED_VCHUNK / nb, nch = rows / rpc;                         \
                const T *restrict q = (const T *)p;                                            \
                op##_acc_##N t[RED_VCHUNK];                                                    \
                for (int i = 0; i < RED_VCHUNK; i++) { op##_INIT(E, N, T, C, t[i]); }          \
                for (int64_t c = 0; c < nch; c++, q += RED_VCHUNK)                             \
                    for (int i = 0; i < RED_VCHUNK; i++) {                                     \
                        C x = PCT_TO_COMPUTE_##E(q[i]);                                        \
                        op##_ACC(E, N, T, C, t[i], x, idx + c * rpc + i / nb);                 \
                    }                                                                          \
                for (int64_t w = RED_VCHUNK / 2; w >= nb; w /= 2) /* w % nb == 0: same output */ \
                    for (int64_t i = 0; i < w; i++) { op##_COMBINE(E, N, T, C, t[i], t[i + w]); } \
                for (int64_t j = 0; j < nb; j++) { op##_COMBINE(E, N, T, C, a[j], t[j]); }      \
                r = nch * rpc;                                                                 \
                idx += r;                                                                      \
                p += r * rs;                                                                   \
            }                                                                                  \
            for (; r + RED_VROWS <= rows; r += RED_VROWS, idx += RED_VROWS, p += RED_VROWS * rs) \
                for (int64_t j = 0; j < nb; j++) {                                             \
                    op##_acc_##N t;                                                            \
                    op##_INIT(E, N, T, C, t);                                                  \
                    for (int i = 0; i < RED_VROWS; i++) {                                      \
                        C x = PCT_TO_COMPUTE_##E(((const T *)(p + i * rs))[j]);                \
                        op##_ACC(E, N, T, C, t, x, idx + i);                                   \
                    }                                                                          \
                    op##_COMBINE(E, N, T, C, a[j], t);                                         \
                }                                                                              \
        }                                                                                      \
        for (; r < rows; r++, idx++, p += rs) {                                                \
            if (s == (int64_t)sizeof(T)) {                                                     \
                const T *restrict q = (const T *)p;                                            \
                for (int64_t j = 0; j < nb; j++) { C x = PCT_TO_COMPUTE_##E(q[j]); op##_ACC(E, N, T, C, a[j], x, idx); } \
            } else {                                                                           \
                for (int64_t j = 0; j < nb; j++) {                                             \
                    C x = PCT_TO_COMPUTE_##E(*(const T *)(p + j * s));                         \
                    op##_ACC(E, N, T, C, a[j], x, idx);                                        \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    static void op##_finish_##N(void *buf, int64_t nb, char *const *o, const int64_t *os, const red_ctx *ctx) \
    {                                                                                          \
        op##_acc_##N *a = buf;                                                                 \
        (void)ctx;                                                                             \
        for (int64_t j = 0; j < nb; j++) { op##_FINISH(E, N, T, C, a[j], (o[0] + j * os[0]), (o[1] + j * os[1])); } \
    }                                                                                          \
    static const red_kernel op##_kernel_##N = {sizeof(op##_acc_##N), op##_init_##N, op##_combine_##N, \
                                               op##_run_##N, op##_vrun_##N, op##_finish_##N};

#define RED_INST(op, E, N, T, C) op##_PRE(E, N, T, C) RED_KERNEL(op, E, N, T, C)
#define RED_X_ALL(E, N, T, C, S, op, b, c, d) RED_INST(op, E, N, T, C)
#define RED_X_FLT(E, N, T, C, S, op, b, c, d) RED_IF_FLOAT(E, RED_INST, RED_NOTHING)(op, E, N, T, C)
#define RED_ENTRY(op, E, N) [PCT_##E] = &op##_kernel_##N,
#define RED_X_ENTRY_ALL(E, N, T, C, S, op, b, c, d) RED_ENTRY(op, E, N)
#define RED_X_ENTRY_FLT(E, N, T, C, S, op, b, c, d) RED_IF_FLOAT(E, RED_ENTRY, RED_NOTHING)(op, E, N)
/* Defines op's kernels for every dtype (ALL) or the floating ones (FLT), and its table. */
#define RED_DEFINE_ALL(op)                                                                     \
    PCT_FORALL_DTYPES_PAIRED(RED_X_ALL, op, 0, 0, 0)                                           \
    static const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_DTYPES_PAIRED(RED_X_ENTRY_ALL, op, 0, 0, 0)};
#define RED_DEFINE_FLT(op)                                                                     \
    PCT_FORALL_DTYPES_PAIRED(RED_X_FLT, op, 0, 0, 0)                                           \
    static const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_DTYPES_PAIRED(RED_X_ENTRY_FLT, op, 0, 0, 0)};
/* RED_DEFINE_ALL with uint16/uint32/uint64 too (the reductions torch has for them) */
#define RED_DEFINE_ALLU(op)                                                                    \
    PCT_FORALL_ALL_DTYPES_PAIRED(RED_X_ALL, op, 0, 0, 0)                                       \
    static const red_kernel *const op##_table[PCT_NUM_DTYPES] = {PCT_FORALL_ALL_DTYPES_PAIRED(RED_X_ENTRY_ALL, op, 0, 0, 0)};

/* ------------------------------------------------------------------------------------ */
/* the ops, as functors                                                                  */

/* sum (every dtype; integers accumulate in 64 bits and wrap like torch) */
#define sum_A(E, N, T, C) RED_SUMT_##E
#define sum_PRE(E, N, T, C) RED_PSUM(sum_ps_##N, E, T, C, RED_SUMT_##E, x)
#define sum_INIT(E, N, T, C, a) ((a) = 0)
#define sum_ACC(E, N, T, C, a, x, idx) ((a) += (RED_SUMT_##E)(x))
#define sum_COMBINE(E, N, T, C, a, b) ((a) += (b))
#define sum_RUN(E, N, T, C, a, p, n, s, idx) ((a) += sum_ps_##N(p, n, s, 0, ctx))
#define sum_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(a))
RED_DEFINE_ALL(sum)

/* nansum (floating; integral inputs use sum) */
#define RED_NONAN(x) ((x) != (x) ? 0 : (x))
#define nansum_A(E, N, T, C) RED_SUMT_##E
#define nansum_PRE(E, N, T, C) RED_PSUM(nansum_ps_##N, E, T, C, RED_SUMT_##E, RED_NONAN(x))
#define nansum_INIT sum_INIT
#define nansum_ACC(E, N, T, C, a, x, idx) ((a) += RED_NONAN(x))
#define nansum_COMBINE sum_COMBINE
#define nansum_RUN(E, N, T, C, a, p, n, s, idx) ((a) += nansum_ps_##N(p, n, s, 0, ctx))
#define nansum_FINISH sum_FINISH
RED_DEFINE_FLT(nansum)

/* mean = sum rounded to the dtype, divided by the count (as torch: sum().div_(n)) */
#define mean_A sum_A
#define mean_PRE(E, N, T, C)
#define mean_INIT sum_INIT
#define mean_ACC sum_ACC
#define mean_COMBINE sum_COMBINE
#define mean_RUN sum_RUN
#define mean_FINISH(E, N, T, C, a, o0, o1)                                                     \
    do {                                                                                       \
        C s_ = PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E(a));                                    \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E(s_ / (C)ctx->count);                                 \
    } while (0)
RED_DEFINE_FLT(mean)

/* nanmean = nansum / number of non-NaN elements */
#define nanmean_A(E, N, T, C) struct { RED_SUMT_##E s; int64_t n; }
#define nanmean_PRE(E, N, T, C) RED_PSUM(nnan_ps_##N, E, T, C, int64_t, (x) == (x))
#define nanmean_INIT(E, N, T, C, a) ((a).s = 0, (a).n = 0)
#define nanmean_ACC(E, N, T, C, a, x, idx) ((a).s += RED_NONAN(x), (a).n += (x) == (x))
#define nanmean_COMBINE(E, N, T, C, a, b) ((a).s += (b).s, (a).n += (b).n)
#define nanmean_RUN(E, N, T, C, a, p, n, s, idx)                                               \
    ((a).s += nansum_ps_##N(p, n, s, 0, ctx), (a).n += nnan_ps_##N(p, n, s, 0, ctx))
#define nanmean_FINISH(E, N, T, C, a, o0, o1)                                                  \
    do {                                                                                       \
        C s_ = PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E((a).s));                                \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E(s_ / (C)(a).n);                                      \
    } while (0)
RED_DEFINE_FLT(nanmean)

/* prod */
#define prod_A sum_A
#define prod_PRE(E, N, T, C) RED_PFOLD(prod_pp_##N, E, T, C, RED_SUMT_##E, x, *, 1)
#define prod_INIT(E, N, T, C, a) ((a) = 1)
#define prod_ACC(E, N, T, C, a, x, idx) ((a) *= (RED_SUMT_##E)(x))
#define prod_COMBINE(E, N, T, C, a, b) ((a) *= (b))
#define prod_RUN(E, N, T, C, a, p, n, s, idx) ((a) *= prod_pp_##N(p, n, s, 0, ctx))
#define prod_FINISH sum_FINISH
RED_DEFINE_ALL(prod)


/* The contiguous min/max scan of a dtype: the vector one for float and double, else the
 * generic `dflt`. DIR is gt (max) or lt (min). */
#define RED_VMM_BOOL(DIR, dflt) dflt
#define RED_VMM_UINT8(DIR, dflt) dflt
#define RED_VMM_INT8(DIR, dflt) dflt
#define RED_VMM_INT16(DIR, dflt) dflt
#define RED_VMM_INT32(DIR, dflt) dflt
#define RED_VMM_INT64(DIR, dflt) dflt
#define RED_VMM_FLOAT16(DIR, dflt) dflt
#define RED_VMM_BFLOAT16(DIR, dflt) dflt
#define RED_VMM_FLOAT32(DIR, dflt) RED_VMM_##DIR(f32)
#define RED_VMM_FLOAT64(DIR, dflt) RED_VMM_##DIR(f64)
#define RED_VMM_gt(sfx) red_vmax_##sfx
#define RED_VMM_lt(sfx) red_vmin_##sfx

/* amax / amin: NaN wins. The pick uses a bitwise | so the compare-and-blend vectorizes. */
#define RED_MINMAX_RUN_FN(name, E, T, C, CMP, DIR)                                                \
    __attribute__((unused)) RED_HOT static C name##_c(C a, const T *restrict q, int64_t n)     \
    {                                                                                          \
        C acc[16];                                                                             \
        for (int j = 0; j < 16; j++) acc[j] = a;                                               \
        int64_t k = 0;                                                                         \
        for (; k + 16 <= n; k += 16)                                                           \
            for (int j = 0; j < 16; j++) {                                                     \
                C x = PCT_TO_COMPUTE_##E(q[k + j]);                                            \
                acc[j] = RED_PICK(E, CMP, acc[j], x);                                          \
            }                                                                                  \
        for (; k < n; k++) {                                                                   \
            C x = PCT_TO_COMPUTE_##E(q[k]);                                                    \
            acc[0] = RED_PICK(E, CMP, acc[0], x);                                              \
        }                                                                                      \
        for (int j = 1; j < 16; j++) acc[0] = RED_PICK(E, CMP, acc[0], acc[j]);                \
        return acc[0];                                                                         \
    }                                                                                          \
    static C name(C a, const char *p, int64_t n, int64_t s)                                    \
    {                                                                                          \
        if (RED_ISNAN_##E(a)) return a;                                                        \
        if (s == (int64_t)sizeof(T)) return RED_VMM_##E(DIR, name##_c)(a, (const T *)p, n);     \
        for (int64_t k = 0; k < n; k++) {                                                      \
            C x = PCT_TO_COMPUTE_##E(*(const T *)(p + k * s));                                 \
            a = RED_PICK(E, CMP, a, x);                                                        \
        }                                                                                      \
        return a;                                                                              \
    }
#define RED_PICK(E, CMP, a, x) ((((x) CMP (a)) | RED_ISNAN_##E(x)) ? (x) : (a))

#define amax_A(E, N, T, C) C
#define amax_PRE(E, N, T, C) RED_MINMAX_RUN_FN(amax_scan_##N, E, T, C, >, gt)
#define amax_INIT(E, N, T, C, a) ((a) = RED_LOWEST_##E)
#define amax_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, >, a, x))
#define amax_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, >, a, b))
#define amax_RUN(E, N, T, C, a, p, n, s, idx) ((a) = amax_scan_##N(a, p, n, s))
#define amax_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(a))
RED_DEFINE_ALL(amax)

#define amin_A(E, N, T, C) C
#define amin_PRE(E, N, T, C) RED_MINMAX_RUN_FN(amin_scan_##N, E, T, C, <, lt)
#define amin_INIT(E, N, T, C, a) ((a) = RED_HIGHEST_##E)
#define amin_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, <, a, x))
#define amin_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, <, a, b))
#define amin_RUN(E, N, T, C, a, p, n, s, idx) ((a) = amin_scan_##N(a, p, n, s))
#define amin_FINISH amax_FINISH
RED_DEFINE_ALL(amin)

/* argmax / argmin / max.dim / min.dim: (value, index); the first occurrence wins ties and
 * the first NaN wins over numbers. i < 0 marks an empty accumulator. */
#define RED_BETTER(E, CMP, x, v) ((x) CMP (v) || (RED_ISNAN_##E(x) && !RED_ISNAN_##E(v)))
#define RED_ARG_ACC(E, CMP, a, x, idx)                                                         \
    do {                                                                                       \
        if ((a).i < 0 || RED_BETTER(E, CMP, x, (a).v)) { (a).v = (x); (a).i = (idx); }         \
    } while (0)
#define RED_ARG_COMBINE(E, CMP, a, b)                                                          \
    do {                                                                                       \
        if ((b).i >= 0 && ((a).i < 0 || RED_BETTER(E, CMP, (b).v, (a).v))) (a) = (b);          \
    } while (0)
#define argmax_A(E, N, T, C) struct { C v; int64_t i; }
#define argmax_PRE(E, N, T, C)
#define argmax_INIT(E, N, T, C, a) ((a).v = 0, (a).i = -1)
#define argmax_ACC(E, N, T, C, a, x, idx) RED_ARG_ACC(E, >, a, x, idx)
#define argmax_COMBINE(E, N, T, C, a, b) RED_ARG_COMBINE(E, >, a, b)
#define argmax_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(argmax, E, N, T, C, a, p, n, s, idx)
#define argmax_FINISH(E, N, T, C, a, o0, o1) (*(int64_t *)(o0) = (a).i)
RED_DEFINE_ALL(argmax)

#define argmin_A argmax_A
#define argmin_PRE(E, N, T, C)
#define argmin_INIT argmax_INIT
#define argmin_ACC(E, N, T, C, a, x, idx) RED_ARG_ACC(E, <, a, x, idx)
#define argmin_COMBINE(E, N, T, C, a, b) RED_ARG_COMBINE(E, <, a, b)
#define argmin_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(argmin, E, N, T, C, a, p, n, s, idx)
#define argmin_FINISH argmax_FINISH
RED_DEFINE_ALL(argmin)

#define RED_VALIDX_FINISH(E, N, T, C, a, o0, o1)                                              \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E((a).v), *(int64_t *)(o1) = (a).i)
#define maxdim_A argmax_A
#define maxdim_PRE(E, N, T, C)
#define maxdim_INIT argmax_INIT
#define maxdim_ACC argmax_ACC
#define maxdim_COMBINE argmax_COMBINE
#define maxdim_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(maxdim, E, N, T, C, a, p, n, s, idx)
#define maxdim_FINISH RED_VALIDX_FINISH
RED_DEFINE_ALLU(maxdim) /* uint16/32/64: only for the 0-d and empty inputs torch answers (dispatch.c) */

#define mindim_A argmax_A
#define mindim_PRE(E, N, T, C)
#define mindim_INIT argmax_INIT
#define mindim_ACC argmin_ACC
#define mindim_COMBINE argmin_COMBINE
#define mindim_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(mindim, E, N, T, C, a, p, n, s, idx)
#define mindim_FINISH RED_VALIDX_FINISH
RED_DEFINE_ALLU(mindim)

/* aminmax: (min, max), NaN wins both */
#define aminmax_A(E, N, T, C) struct { C mn, mx; }
#define aminmax_PRE(E, N, T, C)
#define aminmax_INIT(E, N, T, C, a) ((a).mn = RED_HIGHEST_##E, (a).mx = RED_LOWEST_##E)
#define aminmax_ACC(E, N, T, C, a, x, idx) ((a).mn = RED_PICK(E, <, (a).mn, x), (a).mx = RED_PICK(E, >, (a).mx, x))
#define aminmax_COMBINE(E, N, T, C, a, b)                                                     \
    ((a).mn = RED_PICK(E, <, (a).mn, (b).mn), (a).mx = RED_PICK(E, >, (a).mx, (b).mx))
#define aminmax_RUN(E, N, T, C, a, p, n, s, idx)                                               \
    ((a).mn = amin_scan_##N((a).mn, p, n, s), (a).mx = amax_scan_##N((a).mx, p, n, s))
#define aminmax_FINISH(E, N, T, C, a, o0, o1)                                                  \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E((a).mn), *(T *)(o1) = PCT_FROM_COMPUTE_##E((a).mx))
RED_DEFINE_ALL(aminmax)

/* all / any: read any dtype, write one byte (bool, or uint8 for uint8 inputs) */
#define all_A(E, N, T, C) uint8_t
#define all_PRE(E, N, T, C)
#define all_INIT(E, N, T, C, a) ((a) = 1)
#define all_ACC(E, N, T, C, a, x, idx) ((a) &= (uint8_t)((x) != 0))
#define all_COMBINE(E, N, T, C, a, b) ((a) &= (b))
#define all_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(all, E, N, T, C, a, p, n, s, idx)
#define all_FINISH(E, N, T, C, a, o0, o1) (*(uint8_t *)(o0) = (a))
RED_DEFINE_ALLU(all)

#define any_A(E, N, T, C) uint8_t
#define any_PRE(E, N, T, C)
#define any_INIT(E, N, T, C, a) ((a) = 0)
#define any_ACC(E, N, T, C, a, x, idx) ((a) |= (uint8_t)((x) != 0))
#define any_COMBINE(E, N, T, C, a, b) ((a) |= (b))
#define any_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(any, E, N, T, C, a, p, n, s, idx)
#define any_FINISH all_FINISH
RED_DEFINE_ALLU(any)

/* count_nonzero -> int64 */
#define cnz_A(E, N, T, C) int64_t
#define cnz_PRE(E, N, T, C) RED_PSUM(cnz_ps_##N, E, T, C, int64_t, (x) != 0)
#define cnz_INIT(E, N, T, C, a) ((a) = 0)
#define cnz_ACC(E, N, T, C, a, x, idx) ((a) += (x) != 0)
#define cnz_COMBINE(E, N, T, C, a, b) ((a) += (b))
#define cnz_RUN(E, N, T, C, a, p, n, s, idx) ((a) += cnz_ps_##N(p, n, s, 0, ctx))
#define cnz_FINISH(E, N, T, C, a, o0, o1) (*(int64_t *)(o0) = (a))
RED_DEFINE_ALLU(cnz) /* count_nonzero along dims takes uint16/32/64 */

/* var / std (and their _mean forms): Welford state in double. A run is reduced in two
 * passes (mean, then squared deviations) and merged with Chan's formula. */
typedef struct red_welford { double mean, m2; int64_t n; } red_welford;
static inline void red_welford_merge(red_welford *a, int64_t nb, double meanb, double m2b)
{
    if (nb == 0) return;
    if (a->n == 0) { a->n = nb; a->mean = meanb; a->m2 = m2b; return; }
    double n = (double)(a->n + nb), delta = meanb - a->mean;
    a->mean += delta * ((double)nb / n);
    a->m2 += m2b + delta * delta * ((double)a->n * (double)nb / n);
    a->n += nb;
}
static inline void red_welford_finish(const red_welford *a, const red_ctx *ctx, double *var, double *mean)
{
    double dof = (double)ctx->count - ctx->correction;
    if (dof < 0) dof = 0;
    double v = a->n ? a->m2 / dof : NAN; /* torch fills NaN for empty inputs, whatever the correction */
    *var = ctx->take_sqrt ? sqrt(v) : v;
    *mean = a->n ? a->mean : NAN;
}
#define var_A(E, N, T, C) red_welford
#define var_PRE(E, N, T, C)                                                                    \
    RED_PSUM(var_s1_##N, E, T, C, double, (double)x)                                           \
    RED_PSUM(var_s2_##N, E, T, C, double, ((double)x - m) * ((double)x - m))
#define var_INIT(E, N, T, C, a) ((a).mean = 0, (a).m2 = 0, (a).n = 0)
#define var_ACC(E, N, T, C, a, x, idx)                                                         \
    do {                                                                                       \
        double x_ = (double)(x), d_ = x_ - (a).mean;                                           \
        (a).n++;                                                                               \
        (a).mean += d_ / (double)(a).n;                                                        \
        (a).m2 += d_ * (x_ - (a).mean);                                                        \
    } while (0)
#define var_COMBINE(E, N, T, C, a, b) red_welford_merge(&(a), (b).n, (b).mean, (b).m2)
/* a run with inf or NaN goes element by element, as torch's Welford does (its NaN/inf pattern: the mean of
 * [inf, 1] is NaN there, inf by the sum) */
#define var_RUN(E, N, T, C, a, p, n, s, idx)                                                   \
    do {                                                                                       \
        if ((n) > 0) {                                                                         \
            double mr_ = var_s1_##N(p, n, s, 0, ctx) / (double)(n);                            \
            if (isfinite(mr_)) {                                                               \
                red_welford_merge(&(a), n, mr_, var_s2_##N(p, n, s, mr_, ctx));                \
            } else {                                                                           \
                red_welford w_ = {0, 0, 0};                                                    \
                RED_RUN_LOOP(var, E, N, T, C, w_, p, n, s, idx);                               \
                red_welford_merge(&(a), w_.n, w_.mean, w_.m2);                                 \
            }                                                                                  \
        }                                                                                      \
    } while (0)
#define var_FINISH(E, N, T, C, a, o0, o1)                                                      \
    do {                                                                                       \
        double v_, m_;                                                                         \
        red_welford_finish(&(a), ctx, &v_, &m_);                                               \
        *(T *)(o0) = PCT_FROM_COMPUTE_##E((C)v_);                                              \
        if (ctx->with_mean) *(T *)(o1) = PCT_FROM_COMPUTE_##E((C)m_);                          \
    } while (0)
RED_DEFINE_FLT(var)

/* logsumexp: (m, s) stands for log(s) + shift(m), shift(m) = m if finite else 0, so
 * infinities and NaN come out as torch's (max-shifted) formula gives them. */
#define RED_LSE_HELPERS(C, sfx, EXP)                                                           \
    static inline C red_lse_shift_##sfx(C m) { return isfinite(m) ? m : 0; }                   \
    static inline void red_lse_merge_##sfx(C *am, C *as, C bm, C bs)                          \
    {                                                                                          \
        C M = (*am != *am) ? *am : (bm != bm) ? bm : (bm > *am ? bm : *am);                    \
        C sh = red_lse_shift_##sfx(M);                                                         \
        C s = 0;                                                                               \
        if (*as != 0) s += *as * EXP(red_lse_shift_##sfx(*am) - sh);                           \
        if (bs != 0) s += bs * EXP(red_lse_shift_##sfx(bm) - sh);                              \
        *am = M;                                                                               \
        *as = s;                                                                               \
    }
RED_LSE_HELPERS(float, f, expf)
RED_LSE_HELPERS(double, d, exp)
#define RED_LSE_SFX_FLOAT16 f
#define RED_LSE_SFX_BFLOAT16 f
#define RED_LSE_SFX_FLOAT32 f
#define RED_LSE_SFX_FLOAT64 d
#define RED_LSE_CAT(a, b) a##b
#define RED_LSE_CAT2(a, b) RED_LSE_CAT(a, b)
#define RED_LSE(E, fn) RED_LSE_CAT2(fn, RED_LSE_SFX_##E)
#define lse_A(E, N, T, C) struct { C m, s; }
#define lse_PRE(E, N, T, C) RED_PSUM(lse_ps_##N, E, T, C, C, RED_EXP(E, x - (C)m))
#define lse_INIT(E, N, T, C, a) ((a).m = -INFINITY, (a).s = 0)
#define lse_ACC(E, N, T, C, a, x, idx)                                                         \
    RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, x, isfinite(x) ? (C)1 : RED_EXP(E, x))
#define lse_COMBINE(E, N, T, C, a, b) RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, (b).m, (b).s)
#define lse_RUN(E, N, T, C, a, p, n, s, idx)                                                   \
    do {                                                                                       \
        if ((n) > 0) {                                                                         \
            C mr_ = amax_scan_##N(-INFINITY, p, n, s);                                          \
            C sh_ = RED_LSE(E, red_lse_shift_)(mr_);                                           \
            C sr_ = (RED_IS_F32_##E && (s) == 4) ? (C)red_vsumexp_f32((const float *)(p), n, (float)sh_) \
                                                 : lse_ps_##N(p, n, s, sh_, ctx);               \
            RED_LSE(E, red_lse_merge_)(&(a).m, &(a).s, mr_, sr_);                              \
        }                                                                                      \
    } while (0)
#define lse_FINISH(E, N, T, C, a, o0, o1)                                                      \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, log)((a).s) + RED_LSE(E, red_lse_shift_)((a).m)))
RED_DEFINE_FLT(lse)

/* vector norms (floating): sums of |x|^p with pairwise accumulation, or max/min |x| */
#define norm2_A sum_A
#define norm2_PRE(E, N, T, C) RED_PSUM(norm2_ps_##N, E, T, C, RED_SUMT_##E, x * x)
#define norm2_INIT sum_INIT
#define norm2_ACC(E, N, T, C, a, x, idx) ((a) += (x) * (x))
#define norm2_COMBINE sum_COMBINE
#define norm2_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm2_ps_##N(p, n, s, 0, ctx))
#define norm2_FINISH(E, N, T, C, a, o0, o1) (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, sqrt)(a)))
RED_DEFINE_FLT(norm2)

#define norm1_A sum_A
#define norm1_PRE(E, N, T, C) RED_PSUM(norm1_ps_##N, E, T, C, RED_SUMT_##E, RED_FN(E, fabs)(x))
#define norm1_INIT sum_INIT
#define norm1_ACC(E, N, T, C, a, x, idx) ((a) += RED_FN(E, fabs)(x))
#define norm1_COMBINE sum_COMBINE
#define norm1_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm1_ps_##N(p, n, s, 0, ctx))
#define norm1_FINISH sum_FINISH
RED_DEFINE_FLT(norm1)

#define norm0_A sum_A
#define norm0_PRE(E, N, T, C) RED_PSUM(norm0_ps_##N, E, T, C, RED_SUMT_##E, (x) != 0)
#define norm0_INIT sum_INIT
#define norm0_ACC(E, N, T, C, a, x, idx) ((a) += (x) != 0)
#define norm0_COMBINE sum_COMBINE
#define norm0_RUN(E, N, T, C, a, p, n, s, idx) ((a) += norm0_ps_##N(p, n, s, 0, ctx))
#define norm0_FINISH sum_FINISH
RED_DEFINE_FLT(norm0)

#define normp_A sum_A
#define normp_PRE(E, N, T, C)                                                                  \
    RED_PSUM(normp_ps_##N, E, T, C, RED_SUMT_##E, RED_FN(E, pow)(RED_FN(E, fabs)(x), (C)ctx->p))
#define normp_INIT sum_INIT
#define normp_ACC(E, N, T, C, a, x, idx) ((a) += RED_FN(E, pow)(RED_FN(E, fabs)(x), (C)ctx->p))
#define normp_COMBINE sum_COMBINE
#define normp_RUN(E, N, T, C, a, p, n, s, idx) ((a) += normp_ps_##N(p, n, s, 0, ctx))
#define normp_FINISH(E, N, T, C, a, o0, o1)                                                    \
    (*(T *)(o0) = PCT_FROM_COMPUTE_##E(RED_FN(E, pow)((a), (C)(1.0 / ctx->p))))
RED_DEFINE_FLT(normp)

#define norminf_A(E, N, T, C) C
#define norminf_PRE(E, N, T, C)
#define norminf_INIT(E, N, T, C, a) ((a) = 0)
#define norminf_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, >, a, RED_FN(E, fabs)(x)))
#define norminf_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, >, a, b))
#define norminf_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(norminf, E, N, T, C, a, p, n, s, idx)
#define norminf_FINISH amax_FINISH
RED_DEFINE_FLT(norminf)

#define normninf_A(E, N, T, C) C
#define normninf_PRE(E, N, T, C)
#define normninf_INIT(E, N, T, C, a) ((a) = INFINITY)
#define normninf_ACC(E, N, T, C, a, x, idx) ((a) = RED_PICK(E, <, a, RED_FN(E, fabs)(x)))
#define normninf_COMBINE(E, N, T, C, a, b) ((a) = RED_PICK(E, <, a, b))
#define normninf_RUN(E, N, T, C, a, p, n, s, idx) RED_RUN_LOOP(normninf, E, N, T, C, a, p, n, s, idx)
#define normninf_FINISH amax_FINISH
RED_DEFINE_FLT(normninf)

/* ------------------------------------------------------------------------------------ */
/* the plan and the driver (Note [Reduction plan])                                      */

typedef struct red_plan {
    int nk, nr, nouts;
    bool vertical;
    int64_t nout, nred, units, nblk;
    int64_t ksize[PCT_MAX_DIMS], kin[PCT_MAX_DIMS], kout[2][PCT_MAX_DIMS];
    int64_t rsize[PCT_MAX_DIMS], rin[PCT_MAX_DIMS];
    const char *in;
    char *out[2];
} red_plan;

static char red_dummy_out[16];

/* Sorts dims [0, n) by `key` descending (stable insertion sort), moving the rows along. */
static void red_sort_dims(int n, int64_t *key, int64_t *size, int64_t (*kout)[PCT_MAX_DIMS], int nouts)
{
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && key[j - 1] < key[j]; j--) {
            int64_t t;
            t = key[j]; key[j] = key[j - 1]; key[j - 1] = t;
            t = size[j]; size[j] = size[j - 1]; size[j - 1] = t;
            for (int o = 0; kout && o < nouts; o++) { t = kout[o][j]; kout[o][j] = kout[o][j - 1]; kout[o][j - 1] = t; }
        }
    }
}

/* Merges neighbours (outer i-1, inner i) that are contiguous in every operand. */
static int red_coalesce(int n, int64_t *key, int64_t *size, int64_t (*kout)[PCT_MAX_DIMS], int nouts)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0) {
            bool merge = key[m - 1] == size[i] * key[i];
            for (int o = 0; kout && o < nouts && merge; o++) merge = kout[o][m - 1] == size[i] * kout[o][i];
            if (merge) {
                size[m - 1] *= size[i];
                key[m - 1] = key[i];
                for (int o = 0; kout && o < nouts; o++) kout[o][m - 1] = kout[o][i];
                continue;
            }
        }
        key[m] = key[i];
        size[m] = size[i];
        for (int o = 0; kout && o < nouts; o++) kout[o][m] = kout[o][i];
        m++;
    }
    return m;
}

static void red_plan_build(red_plan *pl, const pct_tensor *in, uint64_t mask, bool keep_order, int nouts,
                           pct_tensor *const *outs, bool keepdim)
{
    int64_t item = pct_tensor_itemsize(in);
    int od = 0, nk = 0, nr = 0;
    pl->nouts = nouts;
    pl->nout = 1;
    pl->nred = 1;
    for (int d = 0; d < in->ndim; d++) {
        int64_t sz = in->sizes[d];
        if ((mask >> d) & 1) {
            pl->nred *= sz;
            if (keepdim) od++;
            if (sz == 1) continue;
            pl->rsize[nr] = sz;
            pl->rin[nr] = in->strides[d] * item;
            nr++;
        } else {
            pl->nout *= sz;
            if (sz != 1) {
                pl->ksize[nk] = sz;
                pl->kin[nk] = in->strides[d] * item;
                for (int o = 0; o < nouts; o++) pl->kout[o][nk] = outs[o]->strides[od] * pct_tensor_itemsize(outs[o]);
                nk++;
            }
            od++;
        }
    }
    red_sort_dims(nk, pl->kin, pl->ksize, pl->kout, nouts);
    nk = red_coalesce(nk, pl->kin, pl->ksize, pl->kout, nouts);
    if (!keep_order) red_sort_dims(nr, pl->rin, pl->rsize, NULL, 0);
    nr = red_coalesce(nr, pl->rin, pl->rsize, NULL, 0);
    pl->nk = nk;
    pl->nr = nr;
    pl->in = pct_tensor_data(in);
    for (int o = 0; o < 2; o++) pl->out[o] = o < nouts ? pct_tensor_data(outs[o]) : red_dummy_out;
    for (int o = nouts; o < 2; o++)
        for (int d = 0; d < nk; d++) pl->kout[o][d] = 0;
    /* vertical when the innermost kept dim is more contiguous than the innermost reduced
     * one, or when reductions are so short that per-output overhead would dominate */
    pl->vertical = nk > 0 && nr > 0 && pl->ksize[nk - 1] >= 8 &&
                   (pl->kin[nk - 1] < pl->rin[nr - 1] || pl->nred <= 16);
    if (pl->vertical) {
        pl->nblk = (pl->ksize[nk - 1] + RED_NB - 1) / RED_NB;
        pl->units = pl->nout / pl->ksize[nk - 1] * pl->nblk;
    } else {
        pl->nblk = 1;
        pl->units = pl->nout;
    }
}

/* The input pointer, output pointers and width of work unit u. */
static int64_t red_unit_locate(const red_plan *pl, int64_t u, const char **inp, char **outp)
{
    int64_t in_off = 0, off0 = 0, off1 = 0, nb = 1;
    int last = pl->nk;
    if (pl->vertical) {
        int64_t b = u % pl->nblk, K = pl->ksize[pl->nk - 1];
        u /= pl->nblk;
        last = pl->nk - 1;
        in_off = b * RED_NB * pl->kin[last];
        off0 = b * RED_NB * pl->kout[0][last];
        off1 = b * RED_NB * pl->kout[1][last];
        nb = K - b * RED_NB < RED_NB ? K - b * RED_NB : RED_NB;
    }
    for (int d = last - 1; d >= 0; d--) {
        int64_t i = u % pl->ksize[d];
        u /= pl->ksize[d];
        in_off += i * pl->kin[d];
        off0 += i * pl->kout[0][d];
        off1 += i * pl->kout[1][d];
    }
    *inp = pl->in + in_off;
    outp[0] = pl->out[0] + off0;
    outp[1] = pl->out[1] + off1;
    return nb;
}

/* Reduces positions [rb, re) of the reduced space for one unit into res (nb accumulators). */
static void red_partial(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, const char *base,
                        int64_t nb, int64_t rb, int64_t re, char *res)
{
    _Alignas(64) char l0[RED_NB * RED_ACC_MAX], l1[RED_NB * RED_ACC_MAX];
    int64_t vstride = pl->vertical ? pl->kin[pl->nk - 1] : 0;
    k->init(res, nb, ctx);
    if (rb >= re) return;
    int nr = pl->nr;
    if (nr == 0) { /* nothing reduced: the one position at offset 0 */
        if (pl->vertical || nb > 1) k->vrun(res, base, nb, vstride, 1, 0, 0, ctx);
        else k->run(res, base, 1, 0, 0, ctx);
        return;
    }
    if (!pl->vertical && nr == 1 && rb == 0 && re == pl->rsize[0]) { /* one run: no cascade needed */
        k->run(res, base, re, pl->rin[0], 0, ctx);
        return;
    }
    k->init(l0, nb, ctx);
    k->init(l1, nb, ctx);
    int c0 = 0, c1 = 0;
    int64_t idx[PCT_MAX_DIMS], rem = rb;
    for (int d = nr - 1; d >= 0; d--) { idx[d] = rem % pl->rsize[d]; rem /= pl->rsize[d]; }
    const int64_t inner = pl->rsize[nr - 1], sin = pl->rin[nr - 1];
    int64_t pos = rb;
    while (pos < re) {
        int64_t off = 0;
        for (int d = 0; d < nr; d++) off += idx[d] * pl->rin[d];
        const char *p = base + off;
        int64_t n = inner - idx[nr - 1];
        if (n > re - pos) n = re - pos;
        for (int64_t t = 0; t < n;) {
            int64_t step = 1;
            if (pl->vertical) {
                step = n - t < RED_FOLD - c0 ? n - t : RED_FOLD - c0;
                k->vrun(l0, p + t * sin, nb, vstride, step, sin, pos + t, ctx);
                c0 += (int)step - 1;
            } else {
                k->run(l0, p, n, sin, pos, ctx);
                step = n;
            }
            t += step;
            if (++c0 == RED_FOLD) {
                k->combine(l1, l0, nb, ctx);
                k->init(l0, nb, ctx);
                c0 = 0;
                if (++c1 == RED_FOLD) {
                    k->combine(res, l1, nb, ctx);
                    k->init(l1, nb, ctx);
                    c1 = 0;
                }
            }
        }
        pos += n;
        idx[nr - 1] += n;
        for (int d = nr - 1; d > 0 && idx[d] >= pl->rsize[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
    k->combine(res, l1, nb, ctx);
    k->combine(res, l0, nb, ctx);
}

static void red_do_unit(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int64_t u)
{
    _Alignas(64) char res[RED_NB * RED_ACC_MAX];
    const char *inp;
    char *outp[2];
    int64_t nb = red_unit_locate(pl, u, &inp, outp);
    red_partial(k, pl, ctx, inp, nb, 0, pl->nred, res);
    int64_t os[2] = {0, 0};
    if (pl->vertical) { os[0] = pl->kout[0][pl->nk - 1]; os[1] = pl->kout[1][pl->nk - 1]; }
    k->finish(res, nb, outp, os, ctx);
}

/* Units [u0, u1). Outputs that are one run each (horizontal, one reduced dim) are walked
 * with an odometer over the kept dims instead of being located one by one. */
static void red_do_units(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int64_t u0, int64_t u1)
{
    if (pl->vertical || pl->nr != 1 || pl->nk == 0) {
        for (int64_t u = u0; u < u1; u++) red_do_unit(k, pl, ctx, u);
        return;
    }
    _Alignas(64) char res[RED_ACC_MAX];
    const char *inp;
    char *outp[2];
    int64_t idx[PCT_MAX_DIMS], rem = u0, os[2] = {0, 0};
    const int nk = pl->nk;
    const int64_t n = pl->rsize[0], s = pl->rin[0];
    red_unit_locate(pl, u0, &inp, outp);
    for (int d = nk - 1; d >= 0; d--) { idx[d] = rem % pl->ksize[d]; rem /= pl->ksize[d]; }
    for (int64_t u = u0; u < u1; u++) {
        k->init(res, 1, ctx);
        k->run(res, inp, n, s, 0, ctx);
        k->finish(res, 1, outp, os, ctx);
        for (int d = nk - 1; d >= 0; d--) {
            inp += pl->kin[d];
            outp[0] += pl->kout[0][d];
            outp[1] += pl->kout[1][d];
            if (++idx[d] < pl->ksize[d]) break;
            inp -= pl->ksize[d] * pl->kin[d];
            outp[0] -= pl->ksize[d] * pl->kout[0][d];
            outp[1] -= pl->ksize[d] * pl->kout[1][d];
            idx[d] = 0;
        }
    }
}

/* Splits each unit's reduced range across nth threads and combines the partials in
 * order (few units, long reductions). 0, or -1 when the scratch could not be allocated. */
__attribute__((unused)) static int red_run_split(const red_kernel *k, const red_plan *pl, const red_ctx *ctx, int nth)
{
#ifdef _OPENMP
    size_t slot = RED_NB * RED_ACC_MAX;
    char *parts = malloc(slot * (size_t)nth);
    if (!parts) return -1;
    int64_t os[2] = {0, 0};
    if (pl->vertical) { os[0] = pl->kout[0][pl->nk - 1]; os[1] = pl->kout[1][pl->nk - 1]; }
    for (int64_t u = 0; u < pl->units; u++) {
        const char *inp;
        char *outp[2];
        int64_t nb = red_unit_locate(pl, u, &inp, outp);
        for (int t = 0; t < nth; t++) k->init(parts + slot * (size_t)t, nb, ctx);
        #pragma omp parallel num_threads(nth)
        {
            int t = omp_get_thread_num(), T = omp_get_num_threads();
            int64_t chunk = (pl->nred + T - 1) / T;
            int64_t b = t * chunk, e = b + chunk < pl->nred ? b + chunk : pl->nred;
            if (b < e) red_partial(k, pl, ctx, inp, nb, b, e, parts + slot * (size_t)t);
        }
        for (int t = 1; t < nth; t++) k->combine(parts, parts + slot * (size_t)t, nb, ctx);
        k->finish(parts, nb, outp, os, ctx);
    }
    free(parts);
    return 0;
#else
    (void)k; (void)pl; (void)ctx; (void)nth;
    return -1;
#endif
}

/* Runs the plan: serially, over units in parallel, or splitting each unit's reduction.
 * Called with the GIL held; releases it for large work. */
static void red_run(const red_kernel *k, const red_plan *pl, const red_ctx *ctx)
{
    if (pl->nout == 0) return;
    int64_t work = pl->nout * (pl->nred > 0 ? pl->nred : 1);
    if (work < PCT_PARALLEL_GRAIN) {
        red_do_units(k, pl, ctx, 0, pl->units);
        return;
    }
    int nth = 1;
#ifdef _OPENMP
    if (!omp_in_parallel()) nth = omp_get_max_threads();
#endif
    Py_BEGIN_ALLOW_THREADS
    if (nth <= 1) {
        red_do_units(k, pl, ctx, 0, pl->units);
    }
#ifdef _OPENMP
    else if (pl->units >= nth || pl->nred < 2 * nth || red_run_split(k, pl, ctx, nth) < 0) {
        #pragma omp parallel num_threads(nth)
        {
            int64_t T = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = (pl->units + T - 1) / T;
            int64_t b = t * chunk, e = b + chunk < pl->units ? b + chunk : pl->units;
            if (b < e) red_do_units(k, pl, ctx, b, e);
        }
    }
#endif
    Py_END_ALLOW_THREADS
}

/* ------------------------------------------------------------------------------------ */
/* argument helpers                                                                      */

static uint64_t red_all_mask(int ndim) { return ndim ? (~0ULL >> (64 - ndim)) : 0; }

/* Reduced-dim mask from an int[]? value. None, or an empty list when empty_all, means every dim.
 * torch's TensorIterator reductions wrap every dim before they look for repeats (wrap_first); its
 * var/std and vector_norm check dim by dim, so a repeat before an out-of-range dim is the error. */
static int red_mask(const pct_tensor *t, const pct_value *v, bool empty_all, bool wrap_first, uint64_t *mask)
{
    int nd = t->ndim;
    if (v->none || (v->n == 0 && empty_all)) { *mask = red_all_mask(nd); return 0; }
    uint64_t seen = 0;
    for (int i = 0; wrap_first && i < v->n; i++)
        if (pct_wrap_dim(v->list[i], nd) < 0) return -1;
    for (int i = 0; i < v->n; i++) {
        int d = pct_wrap_dim(v->list[i], nd);
        if (d < 0) return -1;
        if ((seen >> d) & 1) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        seen |= 1ULL << d;
    }
    *mask = seen & red_all_mask(nd);
    return 0;
}

static int red_mask_one(const pct_tensor *t, int64_t dim, uint64_t *mask, int *wrapped)
{
    int d = pct_wrap_dim(dim, t->ndim);
    if (d < 0) return -1;
    if (wrapped) *wrapped = d;
    *mask = t->ndim ? (1ULL << d) : 0;
    return 0;
}

static int red_out_shape(const pct_tensor *t, uint64_t mask, bool keepdim, int64_t *shape)
{
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if ((mask >> d) & 1) {
            if (keepdim) shape[n++] = 1;
        } else {
            shape[n++] = t->sizes[d];
        }
    }
    return n;
}

static int64_t red_count(const pct_tensor *t, uint64_t mask)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        if ((mask >> d) & 1) n *= t->sizes[d];
    return n;
}

static bool red_is_float(int d) { return pct_dtype_is_floating(d); }

/* Runs kernel k over `in` (already of the kernel's dtype) reducing `mask`, into nouts
 * results of dtypes[i]. outs_arg[i] are out= targets or NULL; results[i] receive new
 * references (the out= tensors themselves when given). */
static int red_exec(const red_kernel *k, red_ctx *ctx, pct_tensor *in, uint64_t mask, bool keepdim, bool keep_order,
                    int nouts, const int *dtypes, pct_tensor *const *outs_arg, pct_tensor **results)
{
    int64_t shape[PCT_MAX_DIMS];
    int ndim = red_out_shape(in, mask, keepdim, shape);
    pct_tensor *dst[2] = {NULL, NULL};
    for (int o = 0; o < nouts; o++) results[o] = NULL;
    if (!k) {
        PyErr_Format(PyExc_RuntimeError, "pyctorch internal error: no reduction kernel for %s; please report a bug",
                     pct_dtype_name[in->dtype]);
        return -1;
    }
    for (int o = 0; o < nouts; o++) {
        pct_tensor *oa = outs_arg ? outs_arg[o] : NULL;
        if (oa) {
            if (pct_out_resize(oa, ndim, shape) < 0) goto fail;
            Py_INCREF(oa);
            results[o] = oa;
            if (oa->dtype == dtypes[o]) {
                Py_INCREF(oa);
                dst[o] = oa;
                continue;
            }
        }
        if (!(dst[o] = pct_tensor_empty(ndim, shape, dtypes[o], PCT_CPU, -1))) goto fail;
        if (!results[o]) {
            Py_INCREF(dst[o]);
            results[o] = dst[o];
        }
    }
    ctx->count = red_count(in, mask);
    red_plan pl;
    ctx->ordered = keep_order;
    red_plan_build(&pl, in, mask, keep_order, nouts, dst, keepdim);
    red_run(k, &pl, ctx);
    for (int o = 0; o < nouts; o++) {
        if (dst[o] != results[o]) {
            if (pct_copy_(results[o], dst[o]) < 0) goto fail;
        } else if (outs_arg && outs_arg[o]) {
            pct_tensor_bump_version(results[o]);
        }
        Py_CLEAR(dst[o]);
    }
    return 0;
fail:
    for (int o = 0; o < nouts; o++) { Py_CLEAR(dst[o]); Py_CLEAR(results[o]); }
    return -1;
}

/* One-output reduction: converts self to in_dtype, runs k, returns the result. */
static PyObject *red_simple(const red_kernel *const *table, red_ctx *ctx, pct_tensor *self, int in_dtype,
                            uint64_t mask, bool keepdim, bool keep_order, int out_dtype, pct_tensor *out)
{
    pct_tensor *in = pct_to_dtype(self, in_dtype, false);
    if (!in) return NULL;
    pct_tensor *res = NULL;
    int r = red_exec(table[in_dtype], ctx, in, mask, keepdim, keep_order, 1, &out_dtype, &out, &res);
    Py_DECREF(in);
    return r < 0 ? NULL : (PyObject *)res;
}

/* ------------------------------------------------------------------------------------ */
/* torch.return_types                                                                    */


/* ------------------------------------------------------------------------------------ */
/* kernels: sum, nansum, mean, nanmean, prod                                              */

enum { RED_SUM, RED_NANSUM, RED_MEAN, RED_NANMEAN, RED_PROD };

static PyObject *red_sum_family(pct_call *c, int kind)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    bool keepdim = c->v[2].b;
    bool has_dtype = !c->v[3].none;
    int rd;
    if (kind == RED_NANMEAN && !red_is_float(self->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "nanmean(): expected input to have floating point or complex dtype but got %s",
                     pct_dtype_cpp_name[self->dtype]);
        return NULL;
    }
    if (kind == RED_MEAN || kind == RED_NANMEAN) {
        const char *name = kind == RED_MEAN ? "mean" : "nanmean";
        if (has_dtype && !red_is_float(c->v[3].dtype)) {
            PyErr_Format(PyExc_RuntimeError, "%s(): could not infer output dtype. Optional dtype must be either a "
                         "floating point or complex dtype. Got: %s", name, pct_dtype_cpp_name[c->v[3].dtype]);
            return NULL;
        }
        if (!has_dtype && !red_is_float(self->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "%s(): could not infer output dtype. Input dtype must be either a "
                         "floating point or complex dtype. Got: %s", name, pct_dtype_cpp_name[self->dtype]);
            return NULL;
        }
    }
    uint64_t mask;
    if (kind == RED_PROD) {
        if (c->v[1].none) mask = red_all_mask(self->ndim);
        else if (red_mask_one(self, c->v[1].i, &mask, NULL) < 0) return NULL;
    } else if (red_mask(self, &c->v[1], true, kind != RED_NANSUM, &mask) < 0) {
        return NULL;
    }
    if (has_dtype) {
        rd = c->v[3].dtype;
        if (pct_out_check_dtype(out, rd) < 0) return NULL;
    } else if (out) {
        rd = out->dtype;
        /* torch: mean divides a float result into out (a cast); nansum and nanmean run nansum at out's dtype */
        if (kind == RED_MEAN && pct_out_check_cast(self->dtype, out) < 0) return NULL;
        if ((kind == RED_NANSUM || kind == RED_NANMEAN) && red_is_float(self->dtype) && !red_is_float(rd)) {
            PyErr_Format(PyExc_NotImplementedError, "\"nansum_cpu\" not implemented for '%s'", pct_dtype_cpp_name[rd]);
            return NULL;
        }
    } else {
        rd = pct_dtype_is_integral(self->dtype, true) ? PCT_INT64 : self->dtype;
    }
    const red_kernel *const *table = sum_table;
    switch (kind) {
    case RED_NANSUM: table = red_is_float(rd) ? nansum_table : sum_table; break;
    case RED_MEAN: table = mean_table; break;
    case RED_NANMEAN: table = nanmean_table; break;
    case RED_PROD: table = prod_table; break;
    default: break;
    }
    if (!table[rd]) {
        PyErr_Format(PyExc_RuntimeError, "%s(): could not infer output dtype. Input dtype must be either a floating "
                     "point or complex dtype. Got: %s", c->op->sig.name, pct_dtype_cpp_name[rd]);
        return NULL;
    }
    red_ctx ctx = {0};
    return red_simple(table, &ctx, self, rd, mask, keepdim, false, rd, out);
}

PyObject *pct_cpu_sum(pct_call *c) { return red_sum_family(c, RED_SUM); }
PyObject *pct_cpu_nansum(pct_call *c) { return red_sum_family(c, RED_NANSUM); }
PyObject *pct_cpu_mean(pct_call *c) { return red_sum_family(c, RED_MEAN); }
PyObject *pct_cpu_nanmean(pct_call *c) { return red_sum_family(c, RED_NANMEAN); }
PyObject *pct_cpu_prod(pct_call *c) { return red_sum_family(c, RED_PROD); }

/* ------------------------------------------------------------------------------------ */
/* amax, amin, max(), min(), max.dim, min.dim, argmax, argmin, aminmax                    */

/* torch's checks for reductions without identity over empty dims. */
static int red_check_nonempty(const pct_tensor *t, uint64_t mask, const char *name, bool dim_given, bool paren)
{
    if (t->numel != 0) return 0;
    if (!dim_given) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                     "with the 'dim' argument.", name);
        return -1;
    }
    for (int d = 0; d < t->ndim; d++) {
        if (((mask >> d) & 1) && t->sizes[d] == 0) {
            PyErr_Format(PyExc_IndexError, "%s%s: Expected reduction dim %d to have non-zero size.", name,
                         paren ? "()" : "", d);
            return -1;
        }
    }
    return 0;
}

static PyObject *red_amax_family(pct_call *c, bool is_max)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    const char *name = is_max ? "amax" : "amin";
    uint64_t mask;
    if (red_mask(self, &c->v[1], true, true, &mask) < 0) return NULL;
    if (red_check_nonempty(self, mask, name, !c->v[1].none && c->v[1].n > 0, true) < 0) return NULL;
    if (out && out->dtype != self->dtype) {
        PyErr_Format(PyExc_RuntimeError, "Expected the dtype for input and out to match, but got %s for input's dtype "
                     "and %s for out's dtype.", pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[out->dtype]);
        return NULL;
    }
    red_ctx ctx = {0};
    return red_simple(is_max ? amax_table : amin_table, &ctx, self, self->dtype, mask, c->v[2].b, false,
                      self->dtype, out);
}

PyObject *pct_cpu_amax(pct_call *c) { return red_amax_family(c, true); }
PyObject *pct_cpu_amin(pct_call *c) { return red_amax_family(c, false); }

static PyObject *red_all_minmax(pct_call *c, bool is_max)
{
    pct_tensor *self = c->v[0].t;
    uint64_t mask = red_all_mask(self->ndim);
    if (red_check_nonempty(self, mask, is_max ? "max" : "min", false, true) < 0) return NULL;
    red_ctx ctx = {0};
    return red_simple(is_max ? amax_table : amin_table, &ctx, self, self->dtype, mask, false, false, self->dtype, NULL);
}

PyObject *pct_cpu_max_all(pct_call *c) { return red_all_minmax(c, true); }
PyObject *pct_cpu_min_all(pct_call *c) { return red_all_minmax(c, false); }

static PyObject *red_max_dim(pct_call *c, bool is_max)
{
    pct_tensor *self = c->v[0].t;
    const char *name = is_max ? "max" : "min";
    uint64_t mask;
    pct_tensor *outs[2], *res[2];
    if (pct_out_parse_pair(&c->v[3], name, outs) < 0) return NULL; /* torch's parser: before any other check */
    if (red_mask_one(self, c->v[1].i, &mask, NULL) < 0) return NULL;
    if (red_check_nonempty(self, mask, name, true, true) < 0) return NULL;
    if (outs[0] && pct_out_check_dtype(outs[0], self->dtype) < 0) return NULL;
    if (outs[1] && pct_out_check_dtype(outs[1], PCT_INT64) < 0) return NULL;
    int dtypes[2] = {self->dtype, PCT_INT64};
    red_ctx ctx = {0};
    const red_kernel *k = (is_max ? maxdim_table : mindim_table)[self->dtype];
    if (red_exec(k, &ctx, self, mask, c->v[2].b, true, 2, dtypes, outs, res) < 0) return NULL;
    if (outs[0])
        return pct_return_pair(is_max ? "torch.return_types.max_out" : "torch.return_types.min_out", "values",
                               "indices", res[0], res[1]);
    return pct_return_pair(is_max ? "torch.return_types.max" : "torch.return_types.min", "values", "indices", res[0], res[1]);
}

PyObject *pct_cpu_max_dim(pct_call *c) { return red_max_dim(c, true); }
PyObject *pct_cpu_min_dim(pct_call *c) { return red_max_dim(c, false); }

PyObject *pct_cpu_max_other(pct_call *c)
{
    pct_pw_ctx ctx = {0};
    pct_tensor *in[2] = {c->v[0].t, c->v[1].t};
    return pct_pw_run(c, PCT_OP_maximum, 2, in, &ctx);
}

PyObject *pct_cpu_min_other(pct_call *c)
{
    pct_pw_ctx ctx = {0};
    pct_tensor *in[2] = {c->v[0].t, c->v[1].t};
    return pct_pw_run(c, PCT_OP_minimum, 2, in, &ctx);
}

static PyObject *red_argmax_family(pct_call *c, bool is_max)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    const char *name = is_max ? "argmax" : "argmin";
    uint64_t mask;
    bool dim_given = !c->v[1].none;
    if (self->dtype == PCT_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "%s(): does not support bool input", name);
        return NULL;
    }
    if (dim_given) {
        if (red_mask_one(self, c->v[1].i, &mask, NULL) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    if (self->numel == 0 && !dim_given) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
        return NULL;
    }
    if (red_check_nonempty(self, mask, name, true, true) < 0) return NULL;
    if (pct_out_check_dtype(out, PCT_INT64) < 0) return NULL;
    red_ctx ctx = {0};
    return red_simple(is_max ? argmax_table : argmin_table, &ctx, self, self->dtype, mask, c->v[2].b, true,
                      PCT_INT64, out);
}

PyObject *pct_cpu_argmax(pct_call *c) { return red_argmax_family(c, true); }
PyObject *pct_cpu_argmin(pct_call *c) { return red_argmax_family(c, false); }

PyObject *pct_cpu_aminmax(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    uint64_t mask;
    bool dim_given = !c->v[1].none;
    if (dim_given) {
        if (red_mask_one(self, c->v[1].i, &mask, NULL) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    if (self->numel == 0 && !dim_given) {
        PyErr_SetString(PyExc_RuntimeError,
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
        return NULL;
    }
    if (red_check_nonempty(self, mask, "aminmax", true, false) < 0) return NULL;
    int dtypes[2] = {self->dtype, self->dtype};
    pct_tensor *res[2];
    red_ctx ctx = {0};
    if (red_exec(aminmax_table[self->dtype], &ctx, self, mask, c->v[2].b, false, 2, dtypes, NULL, res) < 0) return NULL;
    return pct_return_pair("torch.return_types.aminmax", "min", "max", res[0], res[1]);
}

/* ------------------------------------------------------------------------------------ */
/* all, any, count_nonzero                                                               */

static PyObject *red_all_any(pct_call *c, bool is_all)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    uint64_t mask;
    int rd = self->dtype == PCT_UINT8 ? PCT_UINT8 : PCT_BOOL;
    if (out) { /* torch checks out's dtype before the dims */
        if (out->dtype != PCT_BOOL && out->dtype != PCT_UINT8) {
            PyErr_Format(PyExc_RuntimeError, "%s only supports bool tensor for result, got: %s", is_all ? "all" : "any",
                         pct_dtype_cpp_name[out->dtype]);
            return NULL;
        }
        rd = out->dtype;
    }
    /* torch: dim=() reduces nothing for all/any */
    if (red_mask(self, &c->v[1], false, true, &mask) < 0) return NULL;
    red_ctx ctx = {0};
    return red_simple(is_all ? all_table : any_table, &ctx, self, self->dtype, mask, c->v[2].b, false, rd, out);
}

PyObject *pct_cpu_all(pct_call *c) { return red_all_any(c, true); }
PyObject *pct_cpu_any(pct_call *c) { return red_all_any(c, false); }

PyObject *pct_cpu_count_nonzero(pct_call *c)
{
    pct_tensor *self = c->v[0].t;
    uint64_t mask;
    if (red_mask(self, &c->v[1], true, true, &mask) < 0) return NULL;
    red_ctx ctx = {0};
    return red_simple(cnz_table, &ctx, self, self->dtype, mask, false, false, PCT_INT64, NULL);
}

/* ------------------------------------------------------------------------------------ */
/* var, std, var_mean, std_mean                                                           */

/* torch's var/std with one output element for float and double (its std_var_all_cpu): the mean as mean() gives it
 * (a sum in the dtype, which may overflow to inf where Welford would not), then the squared deviations summed in
 * double; the value overwrites res's one element. */
static int var_all_two_pass(pct_tensor *in, const red_ctx *vctx, pct_tensor *res)
{
    red_ctx mctx = {0};
    pct_tensor *m = (pct_tensor *)red_simple(mean_table, &mctx, in, in->dtype, red_all_mask(in->ndim), false, false,
                                              in->dtype, NULL);
    if (!m) return -1;
    double mean = pct_load_as_double(pct_tensor_data(m), m->dtype);
    Py_DECREF(m);
    pct_tensor *x = pct_contiguous(in);
    if (!x) return -1;
    const int64_t n = x->numel;
    const char *p = pct_tensor_data(x);
    const bool f64 = x->dtype == PCT_FLOAT64;
    double s2 = 0;
    Py_BEGIN_ALLOW_THREADS
#pragma omp parallel for reduction(+ : s2) if (n > PCT_PARALLEL_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        double d = (f64 ? ((const double *)p)[i] : (double)((const float *)p)[i]) - mean;
        s2 += d * d;
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(x);
    double dof = (double)vctx->count - vctx->correction;
    double v = s2 / (dof > 0 ? dof : 0);
    pct_store_double(pct_tensor_data(res), res->dtype, vctx->take_sqrt ? sqrt(v) : v);
    return 0;
}

static PyObject *red_var_family(pct_call *c, const pct_value *dimv, const pct_value *unbiased, bool keepdim,
                                const pct_value *correction, pct_tensor *out, bool take_sqrt, bool with_mean)
{
    pct_tensor *self = c->v[0].t;
    const char *name = c->op->sig.name;
    /* torch rejects this combination while parsing, before any other check */
    if (unbiased && !unbiased->none && correction && !correction->none) {
        PyErr_Format(PyExc_TypeError, "%s() received an invalid combination of arguments - got (unbiased=bool, "
                     "correction=Number): pass only one of unbiased and correction", name);
        return NULL;
    }
    if (!red_is_float(self->dtype)) { /* torch names var_mean and std_mean; var and std share one message */
        if (with_mean) PyErr_Format(PyExc_RuntimeError, "%s only support floating point and complex dtypes", name);
        else PyErr_SetString(PyExc_RuntimeError, "std and var only support floating point and complex dtypes");
        return NULL;
    }
    if (pct_out_check_cast(self->dtype, out) < 0) return NULL;
    uint64_t mask;
    if (dimv) {
        if (red_mask(self, dimv, true, false, &mask) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    red_ctx ctx = {0};
    ctx.correction = 1;
    if (correction && !correction->none) ctx.correction = correction->s.d;
    else if (unbiased && !unbiased->none) ctx.correction = unbiased->b ? 1 : 0;
    ctx.take_sqrt = take_sqrt;
    ctx.with_mean = with_mean;
    int rd = self->dtype;
    if (out) {
        if (!red_is_float(out->dtype)) {
            PyErr_SetString(PyExc_RuntimeError, "std and var only support floating point and complex dtypes");
            return NULL;
        }
        rd = out->dtype;
    }
    int64_t count = red_count(self, mask);
    if ((double)count - ctx.correction <= 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s(): degrees of freedom is <= 0. Correction should be strictly less than the "
                 "reduction factor (input numel divided by output numel).", take_sqrt ? "std" : "var");
        if (PyErr_WarnEx(PyExc_UserWarning, msg, 1) < 0) return NULL;
    }
    pct_tensor *in = pct_to_dtype(self, rd, false);
    if (!in) return NULL;
    int dtypes[2] = {rd, rd};
    pct_tensor *outs[2] = {out, NULL}, *res[2] = {NULL, NULL};
    int r = red_exec(var_table[rd], &ctx, in, mask, keepdim, false, with_mean ? 2 : 1, dtypes, outs, res);
    if (r == 0 && !with_mean && count > 0 && res[0]->numel == 1 && (rd == PCT_FLOAT32 || rd == PCT_FLOAT64) &&
        var_all_two_pass(in, &ctx, res[0]) < 0) {
        Py_CLEAR(res[0]);
        r = -1;
    }
    Py_DECREF(in);
    if (r < 0) return NULL;
    if (!with_mean) return (PyObject *)res[0];
    PyObject *t = PyTuple_New(2);
    if (!t) { Py_DECREF(res[0]); Py_DECREF(res[1]); return NULL; }
    PyTuple_SET_ITEM(t, 0, (PyObject *)res[0]);
    PyTuple_SET_ITEM(t, 1, (PyObject *)res[1]);
    return t;
}

/* var(input, dim, unbiased, keepdim, *, correction, out) */
PyObject *pct_cpu_var(pct_call *c) { return red_var_family(c, &c->v[1], &c->v[2], c->v[3].b, &c->v[4], c->out, false, false); }
PyObject *pct_cpu_std(pct_call *c) { return red_var_family(c, &c->v[1], &c->v[2], c->v[3].b, &c->v[4], c->out, true, false); }
PyObject *pct_cpu_var_mean(pct_call *c) { return red_var_family(c, &c->v[1], &c->v[2], c->v[3].b, &c->v[4], NULL, false, true); }
PyObject *pct_cpu_std_mean(pct_call *c) { return red_var_family(c, &c->v[1], &c->v[2], c->v[3].b, &c->v[4], NULL, true, true); }
/* the var(input, bool unbiased) overloads */
PyObject *pct_cpu_var_unbiased(pct_call *c) { return red_var_family(c, NULL, &c->v[1], false, NULL, NULL, false, false); }
PyObject *pct_cpu_std_unbiased(pct_call *c) { return red_var_family(c, NULL, &c->v[1], false, NULL, NULL, true, false); }
PyObject *pct_cpu_var_mean_unbiased(pct_call *c) { return red_var_family(c, NULL, &c->v[1], false, NULL, NULL, false, true); }
PyObject *pct_cpu_std_mean_unbiased(pct_call *c) { return red_var_family(c, NULL, &c->v[1], false, NULL, NULL, true, true); }

/* ------------------------------------------------------------------------------------ */
/* logsumexp, norm                                                                        */

PyObject *pct_cpu_logsumexp(pct_call *c)
{
    pct_tensor *self = c->v[0].t, *out = c->out;
    uint64_t mask;
    int rd = red_is_float(self->dtype) ? self->dtype : pct_default_dtype;
    if (out) { /* torch checks out's dtype before the dims */
        if (!red_is_float(out->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                         pct_dtype_cpp_name[out->dtype]);
            return NULL;
        }
        rd = out->dtype;
    }
    if (red_mask(self, &c->v[1], true, true, &mask) < 0) return NULL;
    if (c->v[1].n == 0 && !c->v[2].b && self->ndim > 0 && self->numel > 0) {
        /* torch reduces every dim for dim=[] but adds the max back with keepdim's shape, in place: refused */
        int64_t ones[PCT_MAX_DIMS];
        char b[PCT_SHAPE_BUF];
        for (int d = 0; d < self->ndim; d++) ones[d] = 1;
        PyErr_Format(PyExc_RuntimeError, "output with shape [] doesn't match the broadcast shape %s",
                     pct_shape_str(b, sizeof b, self->ndim, ones));
        return NULL;
    }
    red_ctx ctx = {0};
    return red_simple(lse_table, &ctx, self, rd, mask, c->v[2].b, false, rd, out);
}

static PyObject *red_norm(pct_call *c, double p, const pct_value *dimv, bool keepdim, const pct_value *dtypev,
                          pct_tensor *out)
{
    pct_tensor *self = c->v[0].t;
    if (!red_is_float(self->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     pct_dtype_cpp_name[self->dtype]);
        return NULL;
    }
    uint64_t mask;
    if (red_mask(self, dimv, true, false, &mask) < 0) return NULL;
    int rd = self->dtype;
    if (!dtypev->none) {
        int d = dtypev->dtype;
        if (!red_is_float(d)) {
            PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: dtype should be floating point or complex, but got %s",
                         pct_dtype_cpp_name[d]);
            return NULL;
        }
        if (pct_promote_types(self->dtype, d) != d) {
            PyErr_Format(PyExc_RuntimeError, "linalg.vector_norm: the dtype of the input (%s) should be convertible "
                         "without narrowing to the specified dtype (%s)", pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[d]);
            return NULL;
        }
        rd = d;
    }
    if (pct_out_check_dtype(out, rd) < 0) return NULL;
    if (self->numel == 0 && (p < 0 || p == INFINITY)) {
        char ps[64], msg[256];
        snprintf(ps, sizeof ps, "%g", p);
        if (dimv->none || dimv->n == 0) {
            snprintf(msg, sizeof msg, "linalg.vector_norm cannot compute the %s norm on an empty tensor because the "
                     "operation does not have an identity", ps);
            PyErr_SetString(PyExc_RuntimeError, msg);
            return NULL;
        }
        for (int i = 0; i < dimv->n; i++) {
            int d = pct_wrap_dim(dimv->list[i], self->ndim);
            if (d >= 0 && self->ndim && self->sizes[d] == 0) {
                /* torch's message has no space before "because" */
                snprintf(msg, sizeof msg, "linalg.vector_norm cannot compute the %s norm on the dimension %d"
                         "because this dimension is empty and the operation does not have an identity", ps, d);
                PyErr_SetString(PyExc_RuntimeError, msg);
                return NULL;
            }
        }
    }
    const red_kernel *const *table;
    if (p == 2) table = norm2_table;
    else if (p == 1) table = norm1_table;
    else if (p == 0) table = norm0_table;
    else if (p == INFINITY) table = norminf_table;
    else if (p == -INFINITY) table = normninf_table;
    else table = normp_table;
    red_ctx ctx = {0};
    ctx.p = p;
    return red_simple(table, &ctx, self, rd, mask, keepdim, false, rd, out);
}

/* norm(input, Scalar? p=2, int[1]? dim=None, bool keepdim=False, *, dtype=None, out=None) */
PyObject *pct_cpu_norm(pct_call *c)
{
    double p = c->v[1].none ? 2.0 : c->v[1].s.d;
    return red_norm(c, p, &c->v[2], c->v[3].b, &c->v[4], c->out);
}

/* norm(input, str p, ...): as torch.functional.norm, 'fro' over at most two dims is the
 * 2-norm; everything else (the nuclear norm, 'fro' over more dims: an error) goes to
 * linalg.matrix_norm over the given dims, or all of them. */
PyObject *pct_cpu_norm_str(pct_call *c)
{
    const char *s = PyUnicode_AsUTF8(c->v[1].obj);
    if (!s) return NULL;
    const pct_value *dim = &c->v[2];
    if (strcmp(s, "fro") == 0 && (dim->none || dim->n <= 2)) return red_norm(c, 2.0, dim, c->v[3].b, &c->v[4], c->out);
    pct_tensor *self = c->v[0].t;
    int64_t all[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) all[d] = d;
    return pct_linalg_matrix_norm_str(self, s, dim->none ? all : dim->list, dim->none ? self->ndim : dim->n, c->v[3].b,
                                      !c->v[4].none, c->v[4].dtype, c->out);
}

/* ------------------------------------------------------------------------------------ */
/* softmax, log_softmax                                                                  */

/* The input is contiguous and viewed as (outer, len, inner). Rows (inner == 1) are reduced
 * in place; otherwise blocks of RED_NB columns are reduced together so loads stay
 * contiguous. Computed in float for 16-bit floats (exp recomputed instead of stored). */
#define RED_SOFTMAX(E, N, T, C)                                                                \
    RED_HOT static void softmax_rows_##N(const T *restrict in, T *restrict out, int64_t r0, int64_t r1, int64_t len, bool lg) \
    {                                                                                          \
        for (int64_t r = r0; r < r1; r++) {                                                    \
            const T *x = in + r * len;                                                         \
            T *y = out + r * len;                                                              \
            C mx = -INFINITY;                                                                  \
            for (int64_t k = 0; k < len; k++) { C v = PCT_TO_COMPUTE_##E(x[k]); mx = v > mx ? v : mx; } \
            C acc[8] = {0};                                                                    \
            int64_t k = 0;                                                                     \
            if (lg || RED_NARROW_##E) {                                                        \
                for (; k + 8 <= len; k += 8)                                                   \
                    for (int j = 0; j < 8; j++) acc[j] += RED_EXP(E, PCT_TO_COMPUTE_##E(x[k + j]) - mx); \
                for (; k < len; k++) acc[0] += RED_EXP(E, PCT_TO_COMPUTE_##E(x[k]) - mx);   \
            } else {                                                                           \
                for (; k + 8 <= len; k += 8)                                                   \
                    for (int j = 0; j < 8; j++) {                                              \
                        C e = RED_EXP(E, PCT_TO_COMPUTE_##E(x[k + j]) - mx);               \
                        y[k + j] = PCT_FROM_COMPUTE_##E(e);                                     \
                        acc[j] += e;                                                           \
                    }                                                                          \
                for (; k < len; k++) {                                                         \
                    C e = RED_EXP(E, PCT_TO_COMPUTE_##E(x[k]) - mx);                       \
                    y[k] = PCT_FROM_COMPUTE_##E(e);                                            \
                    acc[0] += e;                                                               \
                }                                                                              \
            }                                                                                  \
            C sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); \
            if (lg) { /* (x - max) - log(sum), as torch: max + log(sum) would round away small terms */ \
                C ls = RED_FN(E, log)(sum);                                                    \
                for (k = 0; k < len; k++) y[k] = PCT_FROM_COMPUTE_##E((PCT_TO_COMPUTE_##E(x[k]) - mx) - ls); \
            } else if (RED_NARROW_##E) {                                                       \
                C inv = 1 / sum;                                                               \
                for (k = 0; k < len; k++)                                                      \
                    y[k] = PCT_FROM_COMPUTE_##E(RED_EXP(E, PCT_TO_COMPUTE_##E(x[k]) - mx) * inv); \
            } else {                                                                           \
                C inv = 1 / sum;                                                               \
                for (k = 0; k < len; k++) y[k] = PCT_FROM_COMPUTE_##E(PCT_TO_COMPUTE_##E(y[k]) * inv); \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    RED_HOT static void softmax_cols_##N(const T *restrict in, T *restrict out, int64_t u0, int64_t u1, int64_t len, \
                                 int64_t inner, bool lg)                                       \
    {                                                                                          \
        int64_t nblk = (inner + RED_NB - 1) / RED_NB;                                          \
        C mx[RED_NB], sum[RED_NB];                                                             \
        for (int64_t u = u0; u < u1; u++) {                                                    \
            int64_t o = u / nblk, j0 = (u % nblk) * RED_NB;                                    \
            int64_t nb = inner - j0 < RED_NB ? inner - j0 : RED_NB;                            \
            const T *x = in + o * len * inner + j0;                                            \
            T *y = out + o * len * inner + j0;                                                 \
            for (int64_t j = 0; j < nb; j++) { mx[j] = -INFINITY; sum[j] = 0; }                \
            for (int64_t r = 0; r < len; r++)                                                  \
                for (int64_t j = 0; j < nb; j++) {                                             \
                    C v = PCT_TO_COMPUTE_##E(x[r * inner + j]);                                \
                    mx[j] = v > mx[j] ? v : mx[j];                                             \
                }                                                                              \
            for (int64_t r = 0; r < len; r++)                                                  \
                for (int64_t j = 0; j < nb; j++)                                               \
                    sum[j] += RED_EXP(E, PCT_TO_COMPUTE_##E(x[r * inner + j]) - mx[j]);    \
            if (lg) {                                                                          \
                for (int64_t j = 0; j < nb; j++) sum[j] = RED_FN(E, log)(sum[j]);              \
                for (int64_t r = 0; r < len; r++)                                              \
                    for (int64_t j = 0; j < nb; j++)                                           \
                        y[r * inner + j] = PCT_FROM_COMPUTE_##E((PCT_TO_COMPUTE_##E(x[r * inner + j]) - mx[j]) - sum[j]); \
            } else {                                                                           \
                for (int64_t j = 0; j < nb; j++) sum[j] = 1 / sum[j];                          \
                for (int64_t r = 0; r < len; r++)                                              \
                    for (int64_t j = 0; j < nb; j++)                                           \
                        y[r * inner + j] = PCT_FROM_COMPUTE_##E(                               \
                            RED_EXP(E, PCT_TO_COMPUTE_##E(x[r * inner + j]) - mx[j]) * sum[j]); \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    static void softmax_run_##N(const char *in, char *out, int64_t outer, int64_t len, int64_t inner, bool lg) \
    {                                                                                          \
        int64_t units = inner == 1 ? outer : outer * ((inner + RED_NB - 1) / RED_NB);         \
        int64_t numel = outer * len * inner;                                                   \
        int nth = 1;                                                                           \
        RED_OMP_THREADS(nth, numel, units);                                                    \
        if (nth <= 1) {                                                                        \
            if (inner == 1 && RED_IS_F32_##E) red_vsoftmax_rows_f32((const float *)in, (float *)out, 0, outer, len, lg); \
            else if (inner == 1) softmax_rows_##N((const T *)in, (T *)out, 0, outer, len, lg); \
            else softmax_cols_##N((const T *)in, (T *)out, 0, units, len, inner, lg);          \
            return;                                                                            \
        }                                                                                      \
        RED_OMP_SPLIT(units, nth,                                                              \
            if (inner == 1 && RED_IS_F32_##E) red_vsoftmax_rows_f32((const float *)in, (float *)out, b_, e_, len, lg); \
            else if (inner == 1) softmax_rows_##N((const T *)in, (T *)out, b_, e_, len, lg);   \
            else softmax_cols_##N((const T *)in, (T *)out, b_, e_, len, inner, lg));           \
    }

#ifdef _OPENMP
#define RED_OMP_THREADS(nth, numel, units)                                                     \
    do {                                                                                       \
        if ((numel) >= PCT_PARALLEL_GRAIN && (units) > 1 && !omp_in_parallel()) nth = omp_get_max_threads(); \
    } while (0)
#define RED_OMP_SPLIT(units, nth, BODY)                                                        \
    do {                                                                                       \
        Py_BEGIN_ALLOW_THREADS                                                                 \
        _Pragma("omp parallel num_threads(nth)")                                               \
        {                                                                                      \
            int64_t T_ = omp_get_num_threads(), t_ = omp_get_thread_num();                     \
            int64_t ch_ = ((units) + T_ - 1) / T_;                                             \
            int64_t b_ = t_ * ch_, e_ = b_ + ch_ < (units) ? b_ + ch_ : (units);               \
            if (b_ < e_) { BODY; }                                                             \
        }                                                                                      \
        Py_END_ALLOW_THREADS                                                                   \
    } while (0)
#else
#define RED_OMP_THREADS(nth, numel, units) ((void)(numel), (void)(units))
#define RED_OMP_SPLIT(units, nth, BODY) do { (void)(nth); } while (0)
#endif

#define RED_X_SOFTMAX(E, N, T, C, S, a, b, c, d) RED_IF_FLOAT(E, RED_SOFTMAX, RED_NOTHING)(E, N, T, C)
PCT_FORALL_DTYPES_PAIRED(RED_X_SOFTMAX, 0, 0, 0, 0)

typedef void (*red_softmax_fn)(const char *, char *, int64_t, int64_t, int64_t, bool);
static const red_softmax_fn softmax_table[PCT_NUM_DTYPES] = {
#define RED_SOFTMAX_ENTRY(E, N) [PCT_##E] = softmax_run_##N,
#define RED_X_SOFTMAX_ENTRY(E, N, T, C, S, a, b, c, d) RED_IF_FLOAT(E, RED_SOFTMAX_ENTRY, RED_NOTHING)(E, N)
    PCT_FORALL_DTYPES_PAIRED(RED_X_SOFTMAX_ENTRY, 0, 0, 0, 0)
};

static PyObject *red_softmax(pct_call *c, bool lg)
{
    pct_tensor *self = c->v[0].t, *in = NULL, *cont = NULL, *out = NULL;
    int dim = pct_wrap_dim(c->v[1].i, self->ndim);
    if (dim < 0) return NULL;
    int rd = c->v[2].none ? self->dtype : c->v[2].dtype;
    if (self->numel == 0) return (PyObject *)pct_tensor_empty(self->ndim, self->sizes, rd, PCT_CPU, -1);
    if (!softmax_table[rd]) {
        bool last = self->ndim == 0 || dim == self->ndim - 1;
        PyErr_Format(PyExc_NotImplementedError, "\"%s%s_kernel_impl\" not implemented for '%s'",
                     lg ? "log_softmax" : "softmax", last ? "_lastdim" : "", pct_dtype_cpp_name[rd]);
        return NULL;
    }
    PCT_TRY(in = pct_to_dtype(self, rd, false));
    PCT_TRY(cont = pct_contiguous(in));
    PCT_TRY(out = pct_tensor_empty(self->ndim, self->sizes, rd, PCT_CPU, -1));
    int64_t outer = 1, len = self->ndim ? self->sizes[dim] : 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= self->sizes[d];
    for (int d = dim + 1; d < self->ndim; d++) inner *= self->sizes[d];
    if (out->numel > 0) softmax_table[rd](pct_tensor_data(cont), pct_tensor_data(out), outer, len, inner, lg);
    Py_DECREF(in);
    Py_DECREF(cont);
    return (PyObject *)out;
fail:
    Py_XDECREF(in);
    Py_XDECREF(cont);
    Py_XDECREF(out);
    return NULL;
}

PyObject *pct_cpu_softmax(pct_call *c) { return red_softmax(c, false); }
PyObject *pct_cpu_log_softmax(pct_call *c) { return red_softmax(c, true); }
