/* gemm_packed.h: the packed-panel GEMM driver under pyctorch's own AVX-512 micro-kernels
 * (gemm_f32.c for float32, gemm_lowp.c for bfloat16 with AVX512-BF16).
 *
 * Note [Packed GEMM]
 * C(m, n) = alpha * A(m, k) @ B(k, n) + beta * C is computed in tiles of PCT_GEMM_MR rows by
 * PCT_GEMM_NR columns. K is walked in "steps" of kernel->k_per_step elements (2 for bfloat16
 * pairs, 1 for float32); a packed step of one row or column is one 32-bit word. A is packed
 * into panels of MR rows ([step][row] words), B into panels of NR columns ([step][column]
 * words), ragged edges and an odd K padded with zeros. The micro-kernel multiplies one A
 * panel by one B panel into a float32 tile in L1; the kernel's epilogue scales it, adds
 * beta * C and writes it in C's dtype.
 *
 * K is cut into slices of kernel->kc elements (0: never cut). Each slice is packed and
 * multiplied in turn; slices after the first add into C (beta 1), so only kernels whose C
 * holds float32 may cut (a bfloat16 C would be rounded once per slice).
 *
 * Work goes by blocks of MC_PANELS row panels by NC_PANELS column panels (smaller where that
 * leaves fewer than 4 blocks a thread), column panel outermost inside a block so one B panel
 * serves all the block's row panels; threads take blocks one at a time (a thread the OS preempts delays one block, not a fixed share).
 * Every element of C is computed by one micro-kernel call per slice in the same order
 * whatever the thread count, so results do not depend on it.
 *
 * Nothing here needs the GIL or raises: the driver returns 0, or -1 when out of memory.
 */
#ifndef PCT_GEMM_PACKED_H
#define PCT_GEMM_PACKED_H
#include <stdbool.h>
#include <stdint.h>

#define PCT_GEMM_MR 6
#define PCT_GEMM_NR 64

/* CPU features the kernels need (cached after the first call). */
#define PCT_CPU_AVX512 1      /* AVX-512 F, BW, VL, DQ */
#define PCT_CPU_AVX512_BF16 2 /* AVX512-BF16 as well */
int pct_cpu_features(void);

/* Optional callbacks that replace how a product reads A or B or writes C, for operands that
 * are no strided matrix (a convolution's im2col columns spread over a batch, its NCHW output
 * with a bias). Each may be NULL (the kernel's own code on the strided operand then runs);
 * all get `ctx`, run on the driver's threads and must not fail.
 *   pack_a  rows [i0, i0 + rows) (rows <= MR) of A, elements [k0, k0 + k) of K, as the
 *           kernel's pack_a would pack them (zero rows up to MR, zeros up to a whole step)
 *   pack_b  columns [j0, j0 + cols) (cols <= NR) of B the same way (zero columns up to NR)
 *   store   C(i0 + r, j0 + j) for r < rows, j < cols from the float32 tile (row stride NR):
 *           written on the first K slice (add false), added on later ones (add true); alpha,
 *           beta and beta_zero are then not used. */
typedef struct pct_gemm_hooks {
    const void *ctx;
    void (*pack_a)(const void *ctx, uint32_t *dst, int64_t i0, int64_t rows, int64_t k0, int64_t k);
    void (*pack_b)(const void *ctx, uint32_t *dst, int64_t j0, int64_t cols, int64_t k0, int64_t k);
    void (*store)(const void *ctx, const float *tile, int64_t i0, int64_t rows, int64_t j0, int64_t cols, bool add);
} pct_gemm_hooks;

/* One product; strides in elements of the kernel's dtypes. */
typedef struct pct_gemm_problem {
    int64_t m, n, k;
    float alpha, beta;
    bool beta_zero; /* ignore C's contents (NaN included) */
    const char *a, *b;
    char *c;
    int64_t ars, acs, brs, bcs, crs, ccs;
    const pct_gemm_hooks *hooks; /* NULL: plain strided operands */
} pct_gemm_problem;

typedef struct pct_gemm_kernel {
    int a_size, c_size; /* bytes per element of A and B / of C */
    int k_per_step;     /* elements of K in one packed 32-bit word */
    int64_t kc;         /* K slice in elements (0: whole K; see the note) */
    /* rows (<= MR) rows of A / cols (<= NR) columns of B, k elements deep, as one panel */
    void (*pack_a)(uint32_t *dst, const char *a, int64_t rows, int64_t k, int64_t ars, int64_t acs);
    void (*pack_b)(uint32_t *dst, const char *b, int64_t cols, int64_t k, int64_t brs, int64_t bcs);
    /* tile[MR][NR] = A panel @ B panel over `steps` packed steps */
    void (*ukernel)(int64_t steps, const uint32_t *a, const uint32_t *b, float *tile);
    /* C(rows, cols) = alpha * tile + beta * C (beta_zero: alpha * tile) */
    void (*store)(const float *tile, int64_t rows, int64_t cols, float alpha, float beta, bool beta_zero, char *c,
                  int64_t crs, int64_t ccs);
    /* optional (NULL): ukernel reading MR rows of an A whose rows are contiguous (acs == 1) in
     * place, row r at a + r * ars elements; full panels of such an A are then not packed */
    void (*ukernel_rows)(int64_t steps, const char *a, int64_t ars, const uint32_t *b, float *tile);
} pct_gemm_kernel;

int pct_gemm_packed(const pct_gemm_kernel *kernel, const pct_gemm_problem *p, int nt);

/* Defines the `store` epilogue NAME of a kernel whose C holds T, compiled for TARGET (an
 * AVX-512 target attribute; include <immintrin.h> first): C = alpha * tile + beta * C, by
 * masked 16-lane vectors along a unit-stride row of C, element by element otherwise.
 * LOAD16(mask, T *) gives 16 floats, STORE16(mask, T *, __m512) writes them; TO_F / FROM_F
 * convert one element. */
#define PCT_GEMM_DEFINE_STORE(NAME, TARGET, T, LOAD16, STORE16, TO_F, FROM_F)                              \
    TARGET static void NAME(const float *tile, int64_t rows, int64_t cols, float alpha, float beta,         \
                            bool beta_zero, char *c_, int64_t crs, int64_t ccs)                           \
    {                                                                                                       \
        T *c = (T *)c_;                                                                                     \
        if (ccs != 1) {                                                                                     \
            for (int64_t r = 0; r < rows; r++)                                                              \
                for (int64_t j = 0; j < cols; j++) {                                                        \
                    T *p = c + r * crs + j * ccs;                                                           \
                    const float v = alpha * tile[r * PCT_GEMM_NR + j];                                      \
                    *p = FROM_F(beta_zero ? v : v + beta * TO_F(*p));                                       \
                }                                                                                           \
            return;                                                                                         \
        }                                                                                                   \
        const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);                                 \
        for (int64_t r = 0; r < rows; r++) {                                                                \
            T *crow = c + r * crs;                                                                          \
            for (int64_t j0 = 0; j0 < cols; j0 += 16) {                                                     \
                const __mmask16 mask = cols - j0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (cols - j0)) - 1); \
                __m512 x = _mm512_load_ps(tile + r * PCT_GEMM_NR + j0);                                     \
                if (alpha != 1.0f) x = _mm512_mul_ps(x, va);                                                \
                if (!beta_zero) x = _mm512_fmadd_ps(LOAD16(mask, crow + j0), vb, x);                         \
                STORE16(mask, crow + j0, x);                                                                \
            }                                                                                               \
        }                                                                                                   \
    }

/* Panel packing helper for operands whose columns are contiguous (a transposed row-major
 * matrix): words [q0, q0 + 16 * blocks) of NR columns, column j's words starting at
 * col0 + j * col_stride bytes, transposed 16 x 16 at a time into dst[q * NR + j].
 * Requires PCT_CPU_AVX512. */
void pct_gemm_transpose_words(uint32_t *dst, const char *col0, int64_t col_stride, int64_t q0, int64_t blocks);

#endif
