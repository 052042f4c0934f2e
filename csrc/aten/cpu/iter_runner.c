/* iter_runner.c: the CPU runner of the loop machine. iter.c plans (broadcast shape, common dtype, outputs allocated
 * on the operands' device, out= checks, merged dimensions, byte strides: device-neutral); this file runs a plan's
 * inner loops over it on the CPU, split across OpenMP threads above a grain size, with streaming stores for large
 * outputs. A CUDA runner takes the same pct_iter. */
#include "../shapes_only.h"
#include "../iter.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h>
#define PCT_STREAM_STORES 1
#endif

/* Note [Streaming stores]
 * Writing an output bigger than the last-level cache costs two memory transfers per line: the
 * line is read for ownership, then written back. Non-temporal stores skip the read, so a
 * memory-bound op like add (two reads, one write) moves 3 instead of 4 arrays' worth of bytes.
 * When the output of a pure-output loop (pct_iter.stream_output) is at least the size of the
 * last-level cache and contiguous along the inner dimension, the loop writes each run in pieces
 * of STREAM_BUF bytes into an L1 buffer, which is then copied out with non-temporal stores
 * (the first elements are written directly until the destination is 64-byte aligned). Smaller
 * outputs stay cached, as the next op will likely read them. */
#define STREAM_BUF 4096

static int64_t streaming_threshold(void)
{
    static int64_t bytes; /* benign race: the same value */
    if (!bytes) {
        long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
        l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        bytes = l3 > 0 ? (int64_t)l3 : (int64_t)32 << 20;
    }
    return bytes;
}

static bool use_streaming(const pct_iter *it)
{
#ifdef PCT_STREAM_STORES
    if (!it->stream_output || it->ndim == 0) return false;
    const int64_t isz = pct_dtype_itemsize[it->ops[0]->dtype];
    return it->strides[it->ndim - 1][0] == isz && it->numel * isz >= streaming_threshold();
#else
    (void)it;
    return false;
#endif
}

#ifdef PCT_STREAM_STORES
static void stream_copy(char *dst, const char *src, int64_t bytes)
{
    int64_t i = 0;
    for (; i + 64 <= bytes; i += 64)
        for (int q = 0; q < 64; q += 16)
            _mm_stream_si128((__m128i *)(dst + i + q), _mm_load_si128((const __m128i *)(src + i + q)));
    if (i < bytes) memcpy(dst + i, src + i, (size_t)(bytes - i));
}

/* loop over one run of n elements, its output written through the L1 buffer */
static void stream_run(const pct_iter *it, pct_loop_fn loop, void *ctx, char **ptrs, int64_t n, const int64_t *strides)
{
    char buf[STREAM_BUF] __attribute__((aligned(64)));
    const int nt = it->ntensors;
    const int64_t isz = strides[0], per = STREAM_BUF / isz;
    char *p[PCT_ITER_MAX_OPERANDS];
    int64_t st[PCT_ITER_MAX_OPERANDS];
    for (int k = 0; k < nt; k++) { p[k] = ptrs[k]; st[k] = strides[k]; }
    const uintptr_t addr = (uintptr_t)p[0];
    int64_t head = addr % (uintptr_t)isz ? n : (int64_t)((64 - addr % 64) % 64) / isz;
    if (head > n) head = n;
    if (head > 0) {
        loop(p, &head, st, ctx);
        for (int k = 0; k < nt; k++) p[k] += head * st[k];
        n -= head;
    }
    while (n > 0) {
        int64_t m = n < per ? n : per;
        char *dst = p[0];
        p[0] = buf;
        loop(p, &m, st, ctx);
        stream_copy(dst, buf, m * isz);
        p[0] = dst + m * isz;
        for (int k = 1; k < nt; k++) p[k] += m * st[k];
        n -= m;
    }
}
#endif

/* Runs the loop over linear elements [begin, end) of the iteration space. */
static void run_range(const pct_iter *it, pct_loop_fn loop, void *ctx, int64_t begin, int64_t end)
{
    int nd = it->ndim, nt = it->ntensors;
    char *ptrs[PCT_ITER_MAX_OPERANDS];
    if (nd == 0) {
        int64_t one = 1;
        int64_t zero[PCT_ITER_MAX_OPERANDS] = {0};
        for (int k = 0; k < nt; k++) ptrs[k] = it->data[k];
        loop(ptrs, &one, zero, ctx);
        return;
    }
    const bool streaming = use_streaming(it);
    int64_t idx[PCT_MAX_DIMS];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; d--) { idx[d] = rem % it->shape[d]; rem /= it->shape[d]; }
    while (begin < end) {
        for (int k = 0; k < nt; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) off += idx[d] * it->strides[d][k];
            ptrs[k] = it->data[k] + off;
        }
        int64_t n = it->shape[nd - 1] - idx[nd - 1];
        if (n > end - begin) n = end - begin;
#ifdef PCT_STREAM_STORES
        if (streaming) stream_run(it, loop, ctx, ptrs, n, it->strides[nd - 1]);
        else
#endif
            loop(ptrs, &n, it->strides[nd - 1], ctx);
        begin += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= it->shape[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
#ifdef PCT_STREAM_STORES
    if (streaming) _mm_sfence(); /* the non-temporal stores are visible before the threads join */
#endif
}

void pct_iter_run_serial(pct_iter *it, pct_loop_fn loop, void *ctx)
{
    if (it->numel > 0 && !pct_shapes_only) run_range(it, loop, ctx, 0, it->numel);
}

void pct_iter_run(pct_iter *it, pct_loop_fn loop, void *ctx) { pct_iter_run_work(it, loop, ctx, 1); }

void pct_iter_run_work(pct_iter *it, pct_loop_fn loop, void *ctx, int64_t work)
{
    int64_t n = it->numel;
    if (n == 0 || pct_shapes_only) return; /* Note [Shapes-only runs] */
#ifdef _OPENMP
    if (n * work >= PCT_PARALLEL_GRAIN && n > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
        PCT_NOGIL_BEGIN
        #pragma omp parallel
        {
            int nthreads = omp_get_num_threads(), tid = omp_get_thread_num();
            /* chunks aligned to 16 elements so threads never share a cache line of output */
            int64_t chunk = ((n + nthreads - 1) / nthreads + 15) & ~(int64_t)15;
            int64_t b = tid * chunk, e = b + chunk < n ? b + chunk : n;
            if (b < e) run_range(it, loop, ctx, b, e);
        }
        PCT_NOGIL_END
        return;
    }
#endif
    run_range(it, loop, ctx, 0, n);
}
