/* attention_gemm.c: see attention_gemm.h.
 *
 * Note [Attention micro-kernel]
 * C is cut into panels of 64 columns (four 16-float vectors, the last ones masked at the
 * right edge) and each panel into blocks of up to 6 rows: 6 x 4 accumulator registers,
 * 4 B vectors and 1 broadcast A value fit the 32 AVX-512 registers. For each p the
 * block loads one 64-float row of B and broadcasts 6 elements of A: 24 FMAs for 10 loads,
 * so the FMA units, not the loads, set the pace. Kernels are instantiated for every
 * (rows 1..6) x (vectors 1..4) so that narrow heads (E = 16, 32) do not run masked-off
 * FMAs; only the last vector of a panel is masked (masked loads never fault on the
 * masked-off lanes). */
#include "attention_gemm.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCT_NO_AVX512)
#include <immintrin.h>

#define MK_UNROLL(n) _Pragma(#n)

#define MK_KERNEL(MR, NV)                                                                            \
    __attribute__((target("avx512f"))) static void mk_##MR##_##NV(                                  \
        int64_t k, float alpha, const float *a, int64_t ars, int64_t acs, const float *b, int64_t ldb, \
        float beta, float *c, int64_t ldc, __mmask16 ml)                                              \
    {                                                                                                \
        __m512 acc[MR][NV];                                                                          \
        MK_UNROLL(GCC unroll 6) for (int r = 0; r < MR; r++)                                         \
            MK_UNROLL(GCC unroll 4) for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();     \
        for (int64_t p = 0; p < k; p++) {                                                            \
            const float *bp = b + p * ldb, *ap = a + p * acs;                                        \
            __m512 bv[NV];                                                                           \
            MK_UNROLL(GCC unroll 4) for (int v = 0; v < NV - 1; v++) bv[v] = _mm512_loadu_ps(bp + 16 * v); \
            bv[NV - 1] = _mm512_maskz_loadu_ps(ml, bp + 16 * (NV - 1));                              \
            MK_UNROLL(GCC unroll 6) for (int r = 0; r < MR; r++) {                                   \
                const __m512 av = _mm512_set1_ps(ap[r * ars]);                                       \
                MK_UNROLL(GCC unroll 4) for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]); \
            }                                                                                        \
        }                                                                                            \
        const __m512 al = _mm512_set1_ps(alpha);                                                     \
        MK_UNROLL(GCC unroll 6) for (int r = 0; r < MR; r++) {                                       \
            float *cr = c + r * ldc;                                                                 \
            MK_UNROLL(GCC unroll 4) for (int v = 0; v < NV; v++) {                                   \
                const __mmask16 m = v == NV - 1 ? ml : (__mmask16)0xFFFF;                            \
                __m512 x = _mm512_mul_ps(al, acc[r][v]);                                             \
                if (beta != 0.0f)                                                                    \
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, cr + 16 * v));                     \
                _mm512_mask_storeu_ps(cr + 16 * v, m, x);                                            \
            }                                                                                        \
        }                                                                                            \
    }

#define MK_ROW(MR) MK_KERNEL(MR, 1) MK_KERNEL(MR, 2) MK_KERNEL(MR, 3) MK_KERNEL(MR, 4)
MK_ROW(1)
MK_ROW(2)
MK_ROW(3)
MK_ROW(4)
MK_ROW(5)
MK_ROW(6)

typedef void (*mk_fn)(int64_t, float, const float *, int64_t, int64_t, const float *, int64_t, float, float *,
                      int64_t, __mmask16);
#define MK_ENTRY(MR) {mk_##MR##_1, mk_##MR##_2, mk_##MR##_3, mk_##MR##_4}
static const mk_fn kernels[6][4] = {MK_ENTRY(1), MK_ENTRY(2), MK_ENTRY(3), MK_ENTRY(4), MK_ENTRY(5), MK_ENTRY(6)};

bool pct_attn_sgemm_available(void)
{
    static int avail = -1;
    if (avail < 0) {
        __builtin_cpu_init();
        avail = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return avail == 1;
}

void pct_attn_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                    const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    /* beta is 0 or 1 (the kernels add C as it is) */
    for (int64_t j0 = 0; j0 < n; j0 += 64) {
        const int64_t w = n - j0 < 64 ? n - j0 : 64;
        const int nv = (int)((w + 15) / 16);
        const int64_t last = w - 16 * (nv - 1); /* 1..16 columns in the last vector */
        const __mmask16 ml = last >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << last) - 1);
        for (int64_t i0 = 0; i0 < m; i0 += 6) {
            const int mr = (int)(m - i0 < 6 ? m - i0 : 6);
            kernels[mr - 1][nv - 1](k, alpha, a + i0 * ars, ars, acs, b + j0, ldb, beta, c + i0 * ldc + j0, ldc, ml);
        }
    }
}

#else
bool pct_attn_sgemm_available(void) { return false; }

void pct_attn_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
                    const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    /* never called when unavailable; a plain loop keeps the symbol honest */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float s = 0;
            for (int64_t p = 0; p < k; p++) s += a[i * ars + p * acs] * b[p * ldb + j];
            c[i * ldc + j] = alpha * s + (beta != 0.0f ? c[i * ldc + j] : 0.0f);
        }
}
#endif
