/* pool.cu: 2-d max / avg / adaptive pooling on CUDA, forward and backward (the backend's pool, Note [Device pooling] in
 * csrc/aten/cpu/pool_device.c; pool_call.h gives the rules). A thread per output scans its window forward; a thread per
 * input element gathers its gradient backward from the outputs whose window holds it, in the CPU's order, so results
 * are the same on every run, without atomics. The simulated device runs the same element functions on the host. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include "loops.cuh"
#include "pool_runner.h"
#include "aten/dtype.h"

/* torch's adaptive windows: output i of `out` covers [start, end) of `in` */
__host__ __device__ static inline int64_t adaptive_start(int64_t i, int64_t out, int64_t in)
{
    return (i / out) * in + ((i % out) * in) / out;
}
__host__ __device__ static inline int64_t adaptive_end(int64_t i, int64_t out, int64_t in)
{
    return 1 + ((i + 1) * in - 1) / out;
}

/* a max window along one dim: [lo, hi) step d, padding skipped (cpu/pool.h's pct_pool_span) */
__host__ __device__ static inline void max_span(int64_t o, int64_t s, int64_t p, int64_t k, int64_t d, int64_t n,
                                                int64_t *lo, int64_t *hi)
{
    int64_t a = o * s - p, b = a + (k - 1) * d + 1;
    if (b > n) b = n;
    if (a < 0) a += ((-a + d - 1) / d) * d;
    *lo = a;
    *hi = b;
}

/* an avg window along one dim clipped to the input, and its size counting the padding (pct_avg_span) */
__host__ __device__ static inline int64_t avg_span(int64_t o, int64_t s, int64_t p, int64_t k, int64_t n, int64_t *lo,
                                                   int64_t *hi)
{
    int64_t a = o * s - p, b = a + k;
    if (b > n + p) b = n + p;
    const int64_t padded = b - a;
    *lo = a < 0 ? 0 : a;
    *hi = b > n ? n : b;
    return padded;
}

/* the divisor of avg output (oy, ox) */
__host__ __device__ static inline int64_t avg_divisor(const pct_pool_call &c, int64_t oy, int64_t ox)
{
    int64_t hs, he, ws, we;
    const int64_t hp = avg_span(oy, c.sh, c.ph, c.kh, c.ih, &hs, &he), wp = avg_span(ox, c.sw, c.pw, c.kw, c.iw, &ws, &we);
    return c.has_divisor ? c.divisor : c.count_pad ? hp * wp : (he - hs) * (we - ws);
}

/* output t of planes x oh x ow */
template <typename T>
__host__ __device__ static void forward_element(const pct_pool_call &c, int64_t t)
{
    const int64_t oplane = c.oh * c.ow, oy = t % oplane / c.ow, ox = t % c.ow;
    const T *x = (const T *)c.src + t / oplane * c.ih * c.iw;
    int64_t h0, h1, w0, w1, dh = 1, dw = 1;
    if (c.kind == PCT_POOL_CALL_MAX) {
        max_span(oy, c.sh, c.ph, c.kh, c.dh, c.ih, &h0, &h1);
        max_span(ox, c.sw, c.pw, c.kw, c.dw, c.iw, &w0, &w1);
        dh = c.dh;
        dw = c.dw;
    } else if (c.kind == PCT_POOL_CALL_AVG) {
        avg_span(oy, c.sh, c.ph, c.kh, c.ih, &h0, &h1);
        avg_span(ox, c.sw, c.pw, c.kw, c.iw, &w0, &w1);
    } else {
        h0 = adaptive_start(oy, c.oh, c.ih);
        h1 = adaptive_end(oy, c.oh, c.ih);
        w0 = adaptive_start(ox, c.ow, c.iw);
        w1 = adaptive_end(ox, c.ow, c.iw);
    }
    if (c.kind == PCT_POOL_CALL_MAX || c.kind == PCT_POOL_CALL_ADAPTIVE_MAX) {
        T best = (T)-INFINITY;
        int64_t at = h0 * c.iw + w0;
        for (int64_t h = h0; h < h1; h += dh)
            for (int64_t w = w0; w < w1; w += dw) {
                const T v = x[h * c.iw + w];
                if (v > best || v != v) { /* the first maximum; a NaN wins over what follows it */
                    best = v;
                    at = h * c.iw + w;
                }
            }
        ((T *)c.dst)[t] = best;
        if (c.dst_indices) c.dst_indices[t] = at;
        return;
    }
    T sum = 0;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) sum += x[h * c.iw + w];
    ((T *)c.dst)[t] = c.kind == PCT_POOL_CALL_AVG ? sum / (T)avg_divisor(c, oy, ox) : sum / (T)(h1 - h0) / (T)(w1 - w0);
}

/* the outputs [*lo, *hi) along one dim whose window may hold input position i (k taps d apart; adaptive: in / out) */
__host__ __device__ static inline void candidates(const pct_pool_call &c, int64_t i, int64_t in, int64_t out, int64_t k,
                                                  int64_t s, int64_t p, int64_t d, int64_t *lo, int64_t *hi)
{
    if (c.kind == PCT_POOL_CALL_ADAPTIVE_AVG || c.kind == PCT_POOL_CALL_ADAPTIVE_MAX) {
        *lo = i * out / in;
        *hi = ((i + 1) * out + in - 1) / in;
    } else {
        const int64_t first = i + p - (k - 1) * d; /* the window of output o spans [o * s - p, o * s - p + (k-1) * d] */
        *lo = first <= 0 ? 0 : (first + s - 1) / s;
        *hi = (i + p) / s + 1;
    }
    if (*hi > out) *hi = out;
}

/* input element t of planes x ih x iw */
template <typename T>
__host__ __device__ static void backward_element(const pct_pool_call &c, int64_t t)
{
    const int64_t iplane = c.ih * c.iw, y = t % iplane / c.iw, x = t % c.iw, oplane = c.oh * c.ow;
    const int64_t base = t / iplane * oplane;
    const T *g = (const T *)c.src + base;
    const bool is_max = c.kind == PCT_POOL_CALL_MAX || c.kind == PCT_POOL_CALL_ADAPTIVE_MAX;
    const bool adaptive = c.kind == PCT_POOL_CALL_ADAPTIVE_AVG || c.kind == PCT_POOL_CALL_ADAPTIVE_MAX;
    int64_t ylo, yhi, xlo, xhi;
    candidates(c, y, c.ih, c.oh, c.kh, c.sh, c.ph, is_max ? c.dh : 1, &ylo, &yhi);
    candidates(c, x, c.iw, c.ow, c.kw, c.sw, c.pw, is_max ? c.dw : 1, &xlo, &xhi);
    T acc = 0;
    for (int64_t oy = ylo; oy < yhi; oy++) {
        const int64_t hs = adaptive ? adaptive_start(oy, c.oh, c.ih) : 0, he = adaptive ? adaptive_end(oy, c.oh, c.ih) : 0;
        if (adaptive && (y < hs || y >= he)) continue;
        for (int64_t ox = xlo; ox < xhi; ox++) {
            const int64_t j = oy * c.ow + ox;
            if (is_max) {
                if (c.indices[base + j] == y * c.iw + x) acc += g[j];
            } else if (adaptive) {
                const int64_t ws = adaptive_start(ox, c.ow, c.iw), we = adaptive_end(ox, c.ow, c.iw);
                if (x >= ws && x < we) acc += g[j] / (T)(he - hs) / (T)(we - ws);
            } else {
                acc += g[j] / (T)avg_divisor(c, oy, ox);
            }
        }
    }
    ((T *)c.dst)[t] = acc;
}

template <typename F>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_pool_kernel(const pct_pool_call c, int64_t n, F f)
{
    for (int64_t t = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; t < n; t += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        f(c, t);
}

template <typename F>
static int run(const pct_pool_call *c, int64_t n, int on_host, cudaStream_t stream, F f)
{
    if (n == 0) return 0;
    if (on_host) {
        for (int64_t t = 0; t < n; t++) f(*c, t);
        return 0;
    }
    unsigned blocks;
    cudaError_t err = pct_cuda_on_device::grid(n, &blocks);
    if (err != cudaSuccess) return (int)err;
    pct_pool_kernel<<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(*c, n, f);
    return (int)cudaGetLastError();
}

/* the element functions as functors a kernel can take */
template <typename T> struct forward_fn {
    __host__ __device__ void operator()(const pct_pool_call &c, int64_t t) const { forward_element<T>(c, t); }
};
template <typename T> struct backward_fn {
    __host__ __device__ void operator()(const pct_pool_call &c, int64_t t) const { backward_element<T>(c, t); }
};

extern "C" int pct_cuda_pool_launch(const pct_pool_call *c, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    const int64_t n = c->planes * (c->backward ? c->ih * c->iw : c->oh * c->ow);
    if (c->dtype == PCT_FLOAT64)
        return c->backward ? run(c, n, on_host, st, backward_fn<double>()) : run(c, n, on_host, st, forward_fn<double>());
    if (c->dtype == PCT_FLOAT32)
        return c->backward ? run(c, n, on_host, st, backward_fn<float>()) : run(c, n, on_host, st, forward_fn<float>());
    return (int)cudaErrorInvalidValue;
}
