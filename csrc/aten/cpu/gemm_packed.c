/* gemm_packed.c: CPU feature detection, packing buffers and the blocked, threaded driver of
 * Note [Packed GEMM] (gemm_packed.h). The micro-kernels live in gemm_f32.c and gemm_lowp.c. */
#include "gemm_packed.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PCT_NO_AVX512)
#define PCT_PACKED_X86 1
#include <immintrin.h>
#include "transpose16.h"
#endif

#ifdef _OPENMP
#define PACKED_OMP(x) _Pragma(#x)
#else
#define PACKED_OMP(x)
#endif

#define MR PCT_GEMM_MR
#define NR PCT_GEMM_NR
/* products below this many multiply-adds per thread run on one thread */
#define PACKED_GRAIN (32768 * 8)

/* ---- CPU features ---- */

static int cpu_flags = -1; /* benign race: every thread computes the same value */

int pct_cpu_features(void)
{
    int f = cpu_flags;
    if (f >= 0) return f;
    f = 0;
#ifdef PCT_PACKED_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512dq")) {
        f |= PCT_CPU_AVX512;
        if (__builtin_cpu_supports("avx512bf16")) f |= PCT_CPU_AVX512_BF16;
    }
#endif
    cpu_flags = f;
    return f;
}

/* ---- packing buffers ---- */

/* Note [Packing buffers]
 * The packed copies of A and B live in per-thread buffers that are kept between calls (up to
 * KEEP_BYTES each; larger ones are freed after the call): a fresh allocation of megabytes is a
 * fresh mmap whose page faults cost as much as the packing itself. */
#define KEEP_BYTES ((size_t)16 << 20)
typedef struct pack_bufs { void *ptr[2]; size_t cap[2]; } pack_bufs; /* owns both buffers */
static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;
static int bufs_key_ok;

static void bufs_free(void *p)
{
    pack_bufs *b = p;
    free(b->ptr[0]);
    free(b->ptr[1]);
    free(b);
}
static void bufs_init(void) { bufs_key_ok = pthread_key_create(&bufs_key, bufs_free) == 0; }

/* The calling thread's buffer `which` (0: A, 1: B) of at least `bytes`, or NULL. */
static uint32_t *pack_buffer(int which, size_t bytes)
{
    pthread_once(&bufs_once, bufs_init);
    if (!bufs_key_ok) return NULL;
    pack_bufs *b = pthread_getspecific(bufs_key);
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) return NULL;
        if (pthread_setspecific(bufs_key, b) != 0) { free(b); return NULL; }
    }
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes == 0) bytes = 64;
    if (b->cap[which] < bytes) {
        free(b->ptr[which]);
        b->ptr[which] = aligned_alloc(64, bytes);
        b->cap[which] = b->ptr[which] ? bytes : 0;
    }
    return b->ptr[which];
}

/* Buffers above KEEP_BYTES are not kept. */
static void release_buffers(void)
{
    pack_bufs *b = bufs_key_ok ? pthread_getspecific(bufs_key) : NULL;
    for (int i = 0; b && i < 2; i++)
        if (b->cap[i] > KEEP_BYTES) {
            free(b->ptr[i]);
            b->ptr[i] = NULL;
            b->cap[i] = 0;
        }
}

/* ---- 16 x 16 word transposes ---- */

#ifdef PCT_PACKED_X86
__attribute__((target("avx512f"))) void pct_gemm_transpose_words(uint32_t *dst, const char *col0, int64_t col_stride,
                                                                 int64_t q0, int64_t blocks)
{
    for (int64_t blk = 0; blk < blocks; blk++, q0 += 16)
        for (int64_t j0 = 0; j0 < NR; j0 += 16) {
            __m512i r[16];
            for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_si512(col0 + (j0 + i) * col_stride + q0 * 4);
            pct_transpose16_words(r);
            for (int i = 0; i < 16; i++) _mm512_storeu_si512(dst + (q0 + i) * NR + j0, r[i]);
        }
}
#else
void pct_gemm_transpose_words(uint32_t *dst, const char *col0, int64_t col_stride, int64_t q0, int64_t blocks)
{
    for (int64_t q = q0; q < q0 + 16 * blocks; q++)
        for (int64_t j = 0; j < NR; j++) memcpy(dst + q * NR + j, col0 + j * col_stride + q * 4, 4);
}
#endif

/* ---- the driver ---- */

#define MC_PANELS 16
#define NC_PANELS 8

typedef struct packed_job {
    const pct_gemm_kernel *kern;
    int64_t m, n, steps, mp, np;
    const uint32_t *ap, *bp;
    const char *a; /* A's slice, when full row panels are read in place (else NULL) */
    int64_t ars;
    float alpha, beta;
    bool beta_zero;
    char *c;
    int64_t crs, ccs;
    const pct_gemm_hooks *hooks; /* NULL: none */
    int64_t k0;                  /* the slice's first element of K */
    int64_t mc, nc;              /* row and column panels per block */
} packed_job;

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* blocks [b0, b1), column blocks outermost */
static void run_blocks(const packed_job *J, int64_t b0, int64_t b1)
{
    float tile[MR * NR] __attribute__((aligned(64)));
    const pct_gemm_kernel *K = J->kern;
    const int64_t mblocks = (J->mp + J->mc - 1) / J->mc;
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t jb = blk / mblocks, ib = blk % mblocks;
        const int64_t jp1 = min64(jb * J->nc + J->nc, J->np), ip1 = min64(ib * J->mc + J->mc, J->mp);
        for (int64_t jp = jb * J->nc; jp < jp1; jp++)
            for (int64_t ip = ib * J->mc; ip < ip1; ip++) {
                const int64_t i0 = ip * MR, j0 = jp * NR;
                const uint32_t *bpanel = J->bp + jp * NR * J->steps;
                if (J->a && i0 + MR <= J->m)
                    K->ukernel_rows(J->steps, J->a + i0 * J->ars * K->a_size, J->ars, bpanel, tile);
                else
                    K->ukernel(J->steps, J->ap + ip * MR * J->steps, bpanel, tile);
                const int64_t rows = min64(J->m - i0, MR), cols = min64(J->n - j0, NR);
                if (J->hooks && J->hooks->store)
                    J->hooks->store(J->hooks->ctx, tile, i0, rows, j0, cols, J->k0 > 0);
                else
                    K->store(tile, rows, cols, J->alpha, J->beta, J->beta_zero,
                             J->c + (i0 * J->crs + j0 * J->ccs) * K->c_size, J->crs, J->ccs);
            }
    }
}

static void pack_panels_a(const packed_job *J, const pct_gemm_problem *p, const char *a, int64_t k, int64_t ip)
{
    if (J->hooks && J->hooks->pack_a) {
        J->hooks->pack_a(J->hooks->ctx, (uint32_t *)J->ap + ip * MR * J->steps, ip * MR, min64(p->m - ip * MR, MR),
                         J->k0, k);
        return;
    }
    J->kern->pack_a((uint32_t *)J->ap + ip * MR * J->steps, a + ip * MR * p->ars * J->kern->a_size,
                    min64(p->m - ip * MR, MR), k, p->ars, p->acs);
}

static void pack_panels_b(const packed_job *J, const pct_gemm_problem *p, const char *b, int64_t k, int64_t jp)
{
    if (J->hooks && J->hooks->pack_b) {
        J->hooks->pack_b(J->hooks->ctx, (uint32_t *)J->bp + jp * NR * J->steps, jp * NR, min64(p->n - jp * NR, NR),
                         J->k0, k);
        return;
    }
    J->kern->pack_b((uint32_t *)J->bp + jp * NR * J->steps, b + jp * NR * p->bcs * J->kern->a_size,
                    min64(p->n - jp * NR, NR), k, p->brs, p->bcs);
}

int pct_gemm_packed(const pct_gemm_kernel *K, const pct_gemm_problem *p, int nt)
{
    if (p->m <= 0 || p->n <= 0 || p->k <= 0) return 0;
    const int64_t kc = K->kc > 0 && K->kc < p->k ? K->kc : p->k;
    const int64_t max_steps = (kc + K->k_per_step - 1) / K->k_per_step;
    const int64_t mp = (p->m + MR - 1) / MR, np = (p->n + NR - 1) / NR;
    uint32_t *ap = pack_buffer(0, (size_t)(mp * MR * max_steps) * 4), *bp = pack_buffer(1, (size_t)(np * NR * max_steps) * 4);
    if (!ap || !bp) return -1;
    const bool threaded = nt > 1 && p->m * p->n * p->k > PACKED_GRAIN;
    /* Blocks of MC_PANELS x NC_PANELS panels, made smaller (the larger side halved first) until there
     * are 4 a thread: a 64 x 512 product was one block (one thread busy), 256 x 256 three (2:1). */
    int64_t mc = MC_PANELS, nc = NC_PANELS;
#define PACKED_BLOCKS(mc, nc) (((mp + (mc) - 1) / (mc)) * ((np + (nc) - 1) / (nc)))
    while (threaded && PACKED_BLOCKS(mc, nc) < 4 * nt && (mc > 1 || nc > 1)) {
        if (mc >= 2 * nc || nc == 1) mc = (mc + 1) / 2;
        else nc = (nc + 1) / 2;
    }
    const int64_t blocks = PACKED_BLOCKS(mc, nc);
#undef PACKED_BLOCKS
    const bool in_place = K->ukernel_rows && p->acs == 1 && !(p->hooks && p->hooks->pack_a);
    for (int64_t k0 = 0; k0 < p->k; k0 += kc) {
        const int64_t k = min64(kc, p->k - k0);
        const bool first = k0 == 0;
        const char *a = p->a + k0 * p->acs * K->a_size, *b = p->b + k0 * p->brs * K->a_size;
        const packed_job J = {K, p->m, p->n, (k + K->k_per_step - 1) / K->k_per_step, mp, np, ap, bp,
                              in_place ? a : NULL, p->ars, p->alpha, first ? p->beta : 1.0f, first && p->beta_zero,
                              p->c, p->crs, p->ccs, p->hooks, k0, mc, nc};
        /* with A read in place only a ragged last row panel is packed */
        const int64_t ip0 = in_place ? p->m / MR : 0;
        if (threaded) {
            const int64_t na = mp - ip0; /* A panels to pack; then the B panels, in one loop (one barrier) */
PACKED_OMP(omp parallel num_threads(nt))
            {
PACKED_OMP(omp for schedule(dynamic, 2))
                for (int64_t t = 0; t < na + np; t++) {
                    if (t < na) pack_panels_a(&J, p, a, k, ip0 + t);
                    else pack_panels_b(&J, p, b, k, t - na);
                }
PACKED_OMP(omp for schedule(dynamic, 1))
                for (int64_t blk = 0; blk < blocks; blk++) run_blocks(&J, blk, blk + 1);
            }
        } else {
            for (int64_t ip = ip0; ip < mp; ip++) pack_panels_a(&J, p, a, k, ip);
            for (int64_t jp = 0; jp < np; jp++) pack_panels_b(&J, p, b, k, jp);
            run_blocks(&J, 0, blocks);
        }
    }
    release_buffers();
    return 0;
}
