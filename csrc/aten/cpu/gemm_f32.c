/* gemm_f32.c: float32 GEMM with AVX-512 (gemm_f32.h): one family of register-blocked
 * micro-kernels, used unpacked for small products (attention tiles) and under the packed
 * driver (gemm_packed.h) for everything blas.c multiplies.
 *
 * Note [float32 micro-kernels]
 * C is cut into panels of 64 columns (four 16-float vectors, the last one masked at the
 * right edge) and each panel into blocks of up to 6 rows: 6 x 4 accumulator registers,
 * 4 B vectors and 1 broadcast A value fit the 32 AVX-512 registers. For each step of K a
 * block loads one 64-float row of B and broadcasts 6 elements of A: 24 FMAs for 10 loads,
 * so the FMA units, not the loads, set the pace. Kernels are instantiated for every
 * (rows 1..6) x (vectors 1..4) so that narrow products (attention heads of 16 or 32) do
 * not run masked-off FMAs; masked loads never fault on the masked-off lanes.
 *
 * Note [float32 GEMM]
 * OpenBLAS picks its kernels once, from the CPU model; the Debian build on these machines
 * does not know AMD Zen 5 and runs its AVX2 (Haswell) kernels, and OPENBLAS_CORETYPE may
 * pin them on purpose. Zen 5 executes two full-width AVX-512 FMAs per cycle, twice the AVX2
 * rate, so on CPUs with AVX-512 float32 products run here, about twice OpenBLAS's Haswell
 * speed: the packed driver of Note [Packed GEMM] with the 6 x 64 kernel above, one packed
 * step per element of K. K is sliced (KC) so the slices of a block's A and B panels stay in
 * L2; later slices add into C. An A whose rows are contiguous is not packed: the kernel
 * broadcasts straight from six rows in place (only a ragged last panel is packed), which
 * saves a pass over A that costs up to a tenth of a small product.
 * PYCTORCH_GEMM=openblas sends float32 products back to OpenBLAS. */
#include "gemm_f32.h"
#include "gemm_packed.h"
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCT_NO_AVX512)
#define PCT_F32_X86 1
#include <immintrin.h>
#endif

#define MR PCT_GEMM_MR
#define NR PCT_GEMM_NR
#define KC 256

bool pct_gemm_f32_available(void)
{
    static int off = -1; /* PYCTORCH_GEMM=openblas, read once */
    if (off < 0) {
        const char *e = getenv("PYCTORCH_GEMM");
        off = e && strcmp(e, "openblas") == 0;
    }
    return !off && (pct_cpu_features() & PCT_CPU_AVX512) != 0;
}

#ifdef PCT_F32_X86
#define F32_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

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


/* rows (<= MR) rows of A, k deep, as one panel: dst[q * MR + r] = A[r][q] */
static void pack_a(uint32_t *restrict dst_, const char *a_, int64_t rows, int64_t k, int64_t ars, int64_t acs)
{
    const float *a = (const float *)a_;
    float *dst = (float *)dst_;
    if (rows == MR && ars == 1) { /* columns of A contiguous: six floats per step */
        for (int64_t q = 0; q < k; q++) memcpy(dst + q * MR, a + q * acs, MR * sizeof(float));
        return;
    }
    for (int64_t r = 0; r < MR; r++) {
        const float *row = a + r * ars;
        if (r >= rows)
            for (int64_t q = 0; q < k; q++) dst[q * MR + r] = 0.0f;
        else
            for (int64_t q = 0; q < k; q++) dst[q * MR + r] = row[q * acs];
    }
}

/* cols (<= NR) columns of B, k deep, as one panel: dst[q * NR + j] = B[q][j] */
static void pack_b(uint32_t *restrict dst_, const char *b_, int64_t cols, int64_t k, int64_t brs, int64_t bcs)
{
    const float *b = (const float *)b_;
    float *dst = (float *)dst_;
    int64_t q = 0;
    if (bcs == 1) { /* rows of B contiguous */
        for (; q < k; q++) {
            memcpy(dst + q * NR, b + q * brs, (size_t)cols * sizeof(float));
            if (cols < NR) memset(dst + q * NR + cols, 0, (size_t)(NR - cols) * sizeof(float));
        }
        return;
    }
    if (brs == 1 && cols == NR) { /* columns contiguous (B = W^T of a row-major W): transpose */
        pct_gemm_transpose_words(dst_, b_, bcs * (int64_t)sizeof(float), 0, k / 16);
        q = k / 16 * 16;
    }
    for (int64_t j = 0; j < NR; j++) {
        const float *col = b + j * bcs;
        if (j >= cols)
            for (int64_t t = q; t < k; t++) dst[t * NR + j] = 0.0f;
        else
            for (int64_t t = q; t < k; t++) dst[t * NR + j] = col[t * brs];
    }
}

/* The packed driver's micro-kernels are the 6 x 4-vector instance of the family above:
 * a packed A panel is A with strides (1, MR), a packed B panel B with ldb = NR. */
F32_TARGET static void ukernel(int64_t steps, const uint32_t *a, const uint32_t *b, float *tile)
{
    mk_6_4(steps, 1.0f, (const float *)a, 1, MR, (const float *)b, NR, 0.0f, tile, NR, (__mmask16)0xFFFF);
}

/* MR rows of A read in place (row r at a + r * ars, contiguous) */
F32_TARGET static void ukernel_rows(int64_t steps, const char *a, int64_t ars, const uint32_t *b, float *tile)
{
    mk_6_4(steps, 1.0f, (const float *)a, ars, 1, (const float *)b, NR, 0.0f, tile, NR, (__mmask16)0xFFFF);
}

#define F32_IDENTITY(x) (x)
#define F32_STORE16(mask, p, x) _mm512_mask_storeu_ps((p), (mask), (x))
PCT_GEMM_DEFINE_STORE(store_tile, F32_TARGET, float, _mm512_maskz_loadu_ps, F32_STORE16, F32_IDENTITY, F32_IDENTITY)

static const pct_gemm_kernel f32_kernel = {4, 4, 1, KC, pack_a, pack_b, ukernel, store_tile, ukernel_rows};
#endif

int pct_gemm_f32_problem(const pct_gemm_problem *p, int nt)
{
#ifdef PCT_F32_X86
    if (!pct_gemm_f32_available()) return 1;
    return pct_gemm_packed(&f32_kernel, p, nt);
#else
    (void)p; (void)nt;
    return 1;
#endif
}

int pct_gemm_f32_native(int64_t m, int64_t n, int64_t k, float alpha, float beta, bool beta_zero, const float *a,
                        int64_t ars, int64_t acs, const float *b, int64_t brs, int64_t bcs, float *c, int64_t crs,
                        int64_t ccs, int nt)
{
#ifdef PCT_F32_X86
    const pct_gemm_problem p = {m, n, k, alpha, beta, beta_zero, (const char *)a, (const char *)b, (char *)c,
                                ars, acs, brs, bcs, crs, ccs, NULL};
    return pct_gemm_f32_problem(&p, nt);
#else
    (void)m; (void)n; (void)k; (void)alpha; (void)beta; (void)beta_zero; (void)a; (void)ars; (void)acs;
    (void)b; (void)brs; (void)bcs; (void)c; (void)crs; (void)ccs; (void)nt;
    return 1;
#endif
}

/* ---- small products without packing (attention tiles) ---- */

bool pct_sgemm_small_available(void) { return (pct_cpu_features() & PCT_CPU_AVX512) != 0; }

#ifdef PCT_F32_X86
void pct_sgemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
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
void pct_sgemm_small(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t ars, int64_t acs,
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
