/* cross_entropy.cu: cross entropy's rows on CUDA, forward and backward (the backend's cross_entropy, Note [Device cross
 * entropy] in csrc/aten/cpu/cross_entropy.c, whose header gives the formulas).
 *
 * Forward: a row is walked by a group of lanes (as softmax.cu's rows): the maximum (NaN skipped, as the CPU's), then
 * the sum of exponentials (and, with label smoothing, the weighted sum of the logits) combined over the lanes; lane 0
 * writes the row's logsumexp and loss. Backward: the row's softmax from the saved logsumexp, each lane writing its
 * classes; the target's class subtracts its term after the rounding to the dtype, as the CPU's loop does. The
 * simulated device runs the same passes on the host.
 */
#include <cuda_runtime.h>
#include <math.h>
#include "loops.cuh"
#include "float_types.cuh"
#include "lanes.cuh"
#include "cross_entropy_runner.h"

template <int DT>
struct pct_ce {
    typedef typename pct_sm_type<DT>::T T;
    typedef typename pct_sm_type<DT>::C C;
    struct pair { C e; double wx; };
    pct_ce_call a;
    int group;

    __host__ __device__ C x(int64_t i, int64_t j) const { return pct_sm_type<DT>::load(((const T *)a.x)[i * a.c + j]); }
    __host__ __device__ double w(int64_t j) const { return a.weight ? a.weight[j] : 1.0; }
    __host__ __device__ C row_max(int64_t i, int lane) const
    {
        C mx = -INFINITY;
        for (int64_t j = lane; j < a.c; j += group) { const C v = x(i, j); mx = v > mx ? v : mx; }
        return mx;
    }
    __host__ __device__ pair sums(int64_t i, int lane, C shift) const
    {
        pair p = {0, 0};
        for (int64_t j = lane; j < a.c; j += group) {
            const C v = x(i, j);
            p.e += exp(v - shift);
            if (a.eps > 0) p.wx += w(j) * (double)v;
        }
        return p;
    }
    /* lane 0: the row's logsumexp and loss */
    __host__ __device__ void finish(int64_t i, C shift, pair p) const
    {
        const double lse = (double)shift + log((double)p.e);
        ((C *)a.lse)[i] = (C)lse;
        const int64_t t = a.target[i];
        if (t == a.ignore) { a.rows[i] = 0; return; }
        double loss = (1 - a.eps) * w(t) * (lse - (double)x(i, t));
        if (a.eps > 0) loss += a.eps / (double)a.c * (lse * a.wsum - p.wx);
        a.rows[i] = loss;
    }
    __host__ __device__ void backward(int64_t i, int lane) const
    {
        T *gi = (T *)a.grad_input + i * a.c;
        const int64_t t = a.target[i];
        if (t == a.ignore) {
            for (int64_t j = lane; j < a.c; j += group) gi[j] = pct_sm_type<DT>::store((C)0);
            return;
        }
        const double coef = a.grad[i * a.grad_stride] * a.scale, e = a.eps, wt = w(t);
        const C lse = (C)((const double *)a.lse)[i];
        const C pa = (C)(coef * ((1 - e) * wt + e / (double)a.c * a.wsum)), sub = (C)(coef * e / (double)a.c);
        for (int64_t j = lane; j < a.c; j += group) {
            T v = pct_sm_type<DT>::store(exp(x(i, j) - lse) * pa - sub * (C)(a.weight && e > 0 ? a.weight[j] : 1.0));
            if (j == t) v = pct_sm_type<DT>::store(pct_sm_type<DT>::load(v) - (C)(coef * (1 - e) * wt));
            gi[j] = v;
        }
    }
};

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_ce_kernel(const pct_ce<DT> r)
{
    typedef typename pct_ce<DT>::C C;
    typedef typename pct_ce<DT>::pair pair;
    __shared__ pair lanes[PCT_CUDA_BLOCK];
    const int G = r.group;
    int lane;
    const int64_t i = pct_lanes_group(G, &lane);
    const bool live = i < r.a.n;
    if (r.a.backward) {
        if (live) r.backward(i, lane);
        return;
    }
    const C mx = pct_lanes_combine(lanes, pair{live ? r.row_max(i, lane) : (C)-INFINITY, 0}, lane, G,
                                   [](pair u, pair v) { return pair{v.e > u.e ? v.e : u.e, 0}; }).e;
    const C shift = isinf(mx) ? (C)0 : mx; /* all -inf (or +inf): the sum gives the right inf/NaN */
    const pair p = pct_lanes_combine(lanes, live ? r.sums(i, lane, shift) : pair{0, 0}, lane, G,
                                     [](pair u, pair v) { return pair{u.e + v.e, u.wx + v.wx}; });
    if (live && lane == 0) r.finish(i, shift, p);
}

template <int DT>
static void pct_ce_on_host(const pct_ce<DT> &r)
{
    typedef typename pct_ce<DT>::C C;
    typedef typename pct_ce<DT>::pair pair;
    pair lanes[PCT_CUDA_BLOCK];
    for (int64_t i = 0; i < r.a.n; i++) {
        if (r.a.backward) {
            for (int l = 0; l < r.group; l++) r.backward(i, l);
            continue;
        }
        for (int l = 0; l < r.group; l++) lanes[l] = pair{r.row_max(i, l), 0};
        const C mx = pct_lanes_combine_host(lanes, r.group, [](pair u, pair v) { return pair{v.e > u.e ? v.e : u.e, 0}; }).e;
        const C shift = isinf(mx) ? (C)0 : mx;
        for (int l = 0; l < r.group; l++) lanes[l] = r.sums(i, l, shift);
        r.finish(i, shift, pct_lanes_combine_host(lanes, r.group, [](pair u, pair v) { return pair{u.e + v.e, u.wx + v.wx}; }));
    }
}

template <int DT>
static int pct_ce_run(const pct_ce_call *a, int group, int on_host, cudaStream_t stream)
{
    pct_ce<DT> r;
    r.a = *a;
    r.group = group;
    if (on_host) {
        pct_ce_on_host<DT>(r);
        return 0;
    }
    const int64_t per_block = PCT_CUDA_BLOCK / group, blocks = (a->n + per_block - 1) / per_block;
    if (blocks > 0x7fffffff) return (int)cudaErrorInvalidConfiguration;
    pct_ce_kernel<DT><<<(unsigned)blocks, PCT_CUDA_BLOCK, 0, stream>>>(r);
    return (int)cudaGetLastError();
}

extern "C" int pct_cuda_cross_entropy_launch(const pct_ce_call *a, int group, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    switch (a->dtype) {
    case PCT_FLOAT16: return pct_ce_run<PCT_FLOAT16>(a, group, on_host, st);
    case PCT_BFLOAT16: return pct_ce_run<PCT_BFLOAT16>(a, group, on_host, st);
    case PCT_FLOAT32: return pct_ce_run<PCT_FLOAT32>(a, group, on_host, st);
    case PCT_FLOAT64: return pct_ce_run<PCT_FLOAT64>(a, group, on_host, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
