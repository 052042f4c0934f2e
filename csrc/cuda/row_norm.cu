/* row_norm.cu: layer norm and RMS norm, forward and backward, on CUDA (the backend's row_norm, Note [Device row norms]
 * in csrc/aten/cpu/norm.c; the formulas are in row_norm_call.h).
 *
 * Rows are walked by groups of lanes as softmax's are (softmax.cu): each pass folds a value per lane, the group
 * combines them (lanes.cuh) and every lane reads the result. Forward: the row sum (of squares for RMS norm), then the
 * squared deviations from the mean (two passes, as accurate as the CPU's), then the outputs; lane 0 writes mean and
 * rstd. Backward: sum(gw) and sum(gw * xc) in one pass, then grad_input. The parameter gradients are column sums
 * over the rows: a thread per column and chunk of rows, the chunks' partial sums combined in order by a second pass
 * (no atomics: the same bits on every run). Statistics and parameters are in the compute type C (float for 16-bit
 * floats). The simulated device runs the same passes on the host.
 */
#include <cuda_runtime.h>
#include <math.h>
#include "loops.cuh"
#include "float_types.cuh"
#include "lanes.cuh"
#include "row_norm_runner.h"

template <int DT>
struct pct_rn {
    typedef typename pct_sm_type<DT>::T T;
    typedef typename pct_sm_type<DT>::C C;
    struct pair { C a, b; };
    pct_row_norm_call n;
    int group;
    int64_t splits, chunk; /* column sums: chunks of rows */
    C *work;               /* splits > 1: splits * 2 * D partial sums */

    __host__ __device__ C x(int64_t i, int64_t d) const { return pct_sm_type<DT>::load(((const T *)n.x)[i * n.D + d]); }
    __host__ __device__ C g(int64_t i, int64_t d) const { return pct_sm_type<DT>::load(((const T *)n.grad)[i * n.D + d]); }
    __host__ __device__ C w(int64_t d) const { return n.weight ? ((const C *)n.weight)[d] : (C)1; }
    __host__ __device__ C mean(int64_t i) const { return n.mean ? ((const C *)n.mean)[i] : (C)0; }
    __host__ __device__ C rstd(int64_t i) const { return ((const C *)n.rstd)[i]; }

    /* forward pass 1: sum of x (x^2 for RMS norm) */
    __host__ __device__ C sum1(int64_t i, int lane) const
    {
        C s = 0;
        for (int64_t d = lane; d < n.D; d += group) { const C v = x(i, d); s += n.rms ? v * v : v; }
        return s;
    }
    /* forward pass 2 (layer norm): squared deviations from mu */
    __host__ __device__ C sum2(int64_t i, int lane, C mu) const
    {
        C s = 0;
        for (int64_t d = lane; d < n.D; d += group) { const C v = x(i, d) - mu; s += v * v; }
        return s;
    }
    __host__ __device__ void write(int64_t i, int lane, C mu, C rs) const
    {
        T *y = (T *)n.out;
        for (int64_t d = lane; d < n.D; d += group) {
            C v = (x(i, d) - mu) * rs * w(d);
            if (n.bias) v += ((const C *)n.bias)[d];
            y[i * n.D + d] = pct_sm_type<DT>::store(v);
        }
        if (lane == 0) {
            if (n.mean) ((C *)n.mean)[i] = mu;
            ((C *)n.rstd)[i] = rs;
        }
    }
    __host__ __device__ C rstd_of(C sum_sq_or_dev) const
    {
        return (C)1 / sqrt(sum_sq_or_dev / (C)n.D + (C)n.eps);
    }
    /* backward pass 1: sum(gw), sum(gw * xc) */
    __host__ __device__ pair bsums(int64_t i, int lane) const
    {
        pair p = {0, 0};
        const C mu = mean(i);
        for (int64_t d = lane; d < n.D; d += group) {
            const C gw = g(i, d) * w(d);
            p.a += gw;
            p.b += gw * (x(i, d) - mu);
        }
        return p;
    }
    __host__ __device__ void bwrite(int64_t i, int lane, pair p) const
    {
        T *gi = (T *)n.out;
        const C mu = mean(i), rs = rstd(i), inv_d = (C)1 / (C)n.D;
        for (int64_t d = lane; d < n.D; d += group) {
            const C gw = g(i, d) * w(d), xc = x(i, d) - mu;
            C v = gw - xc * rs * rs * p.b * inv_d;
            if (!n.rms) v -= p.a * inv_d;
            gi[i * n.D + d] = pct_sm_type<DT>::store(rs * v);
        }
    }
    /* column sums over rows [i0, i1) of column d: grad * xc * rstd and grad */
    __host__ __device__ pair columns(int64_t d, int64_t i0, int64_t i1) const
    {
        pair p = {0, 0};
        for (int64_t i = i0; i < i1; i++) {
            const C gv = g(i, d);
            p.a += gv * (x(i, d) - mean(i)) * rstd(i);
            p.b += gv;
        }
        return p;
    }
    __host__ __device__ void column_write(int64_t d, pair p) const
    {
        if (n.grad_weight) ((C *)n.grad_weight)[d] = p.a;
        if (n.grad_bias) ((C *)n.grad_bias)[d] = p.b;
    }
    /* column job j of D * splits: column j % D, chunk j / D */
    __host__ __device__ void column_job(int64_t j) const
    {
        const int64_t d = j % n.D, s = j / n.D, i0 = s * chunk, i1 = i0 + chunk < n.M ? i0 + chunk : n.M;
        const pair p = columns(d, i0, i1);
        if (splits == 1) { column_write(d, p); return; }
        work[(s * 2) * n.D + d] = p.a;
        work[(s * 2 + 1) * n.D + d] = p.b;
    }
    __host__ __device__ void column_finish(int64_t d) const
    {
        pair p = {0, 0};
        for (int64_t s = 0; s < splits; s++) { p.a += work[(s * 2) * n.D + d]; p.b += work[(s * 2 + 1) * n.D + d]; }
        column_write(d, p);
    }
};

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_rn_rows_kernel(const pct_rn<DT> r)
{
    typedef typename pct_rn<DT>::C C;
    typedef typename pct_rn<DT>::pair pair;
    __shared__ pair lanes[PCT_CUDA_BLOCK];
    const int G = r.group;
    int lane;
    const int64_t i = pct_lanes_group(G, &lane);
    const bool live = i < r.n.M;
    auto add = [](pair u, pair v) { return pair{u.a + v.a, u.b + v.b}; };
    if (!r.n.backward) {
        const pair s1 = pct_lanes_combine(lanes, pair{live ? r.sum1(i, lane) : (C)0, 0}, lane, G, add);
        const C mu = r.n.rms ? (C)0 : s1.a / (C)r.n.D;
        C dev = s1.a;
        if (!r.n.rms) dev = pct_lanes_combine(lanes, pair{live ? r.sum2(i, lane, mu) : (C)0, 0}, lane, G, add).a;
        if (live) r.write(i, lane, mu, r.rstd_of(dev));
    } else {
        const pair p = pct_lanes_combine(lanes, live ? r.bsums(i, lane) : pair{0, 0}, lane, G, add);
        if (live && r.n.out) r.bwrite(i, lane, p);
    }
}

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_rn_columns_kernel(const pct_rn<DT> r)
{
    const int64_t j = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x;
    if (j < r.n.D * r.splits) r.column_job(j);
}

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_rn_columns_finish_kernel(const pct_rn<DT> r)
{
    const int64_t d = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x;
    if (d < r.n.D) r.column_finish(d);
}

/* the host's run of the same passes (the simulated device) */
template <int DT>
static void pct_rn_on_host(const pct_rn<DT> &r)
{
    typedef typename pct_rn<DT>::C C;
    typedef typename pct_rn<DT>::pair pair;
    pair lanes[PCT_CUDA_BLOCK];
    auto add = [](pair u, pair v) { return pair{u.a + v.a, u.b + v.b}; };
    for (int64_t i = 0; i < r.n.M; i++) {
        if (!r.n.backward) {
            for (int l = 0; l < r.group; l++) lanes[l] = pair{r.sum1(i, l), 0};
            const C s1 = pct_lanes_combine_host(lanes, r.group, add).a, mu = r.n.rms ? (C)0 : s1 / (C)r.n.D;
            C dev = s1;
            if (!r.n.rms) {
                for (int l = 0; l < r.group; l++) lanes[l] = pair{r.sum2(i, l, mu), 0};
                dev = pct_lanes_combine_host(lanes, r.group, add).a;
            }
            for (int l = 0; l < r.group; l++) r.write(i, l, mu, r.rstd_of(dev));
        } else if (r.n.out) {
            for (int l = 0; l < r.group; l++) lanes[l] = r.bsums(i, l);
            const pair p = pct_lanes_combine_host(lanes, r.group, add);
            for (int l = 0; l < r.group; l++) r.bwrite(i, l, p);
        }
    }
    if (r.n.backward && (r.n.grad_weight || r.n.grad_bias)) {
        for (int64_t j = 0; j < r.n.D * r.splits; j++) r.column_job(j);
        if (r.splits > 1)
            for (int64_t d = 0; d < r.n.D; d++) r.column_finish(d);
    }
}

static unsigned blocks_for(int64_t threads) { return (unsigned)((threads + PCT_CUDA_BLOCK - 1) / PCT_CUDA_BLOCK); }

template <int DT>
static int pct_rn_run(const pct_row_norm_call *n, const pct_rn_walk *walk, int on_host, cudaStream_t stream)
{
    pct_rn<DT> r;
    r.n = *n;
    r.group = walk->group;
    r.splits = walk->splits;
    r.chunk = walk->chunk;
    r.work = (typename pct_rn<DT>::C *)walk->work;
    if (on_host) {
        pct_rn_on_host<DT>(r);
        return 0;
    }
    const int64_t per_block = PCT_CUDA_BLOCK / r.group;
    if (n->M > 0 && (!n->backward || n->out)) {
        pct_rn_rows_kernel<DT><<<(unsigned)((n->M + per_block - 1) / per_block), PCT_CUDA_BLOCK, 0, stream>>>(r);
        const cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) return (int)err;
    }
    if (n->backward && (n->grad_weight || n->grad_bias) && n->D > 0) {
        pct_rn_columns_kernel<DT><<<blocks_for(n->D * r.splits), PCT_CUDA_BLOCK, 0, stream>>>(r);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess || r.splits == 1) return (int)err;
        pct_rn_columns_finish_kernel<DT><<<blocks_for(n->D), PCT_CUDA_BLOCK, 0, stream>>>(r);
        return (int)cudaGetLastError();
    }
    return 0;
}

extern "C" int pct_cuda_row_norm_launch(const pct_row_norm_call *n, const pct_rn_walk *walk, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    switch (n->dtype) {
    case PCT_FLOAT16: return pct_rn_run<PCT_FLOAT16>(n, walk, on_host, st);
    case PCT_BFLOAT16: return pct_rn_run<PCT_BFLOAT16>(n, walk, on_host, st);
    case PCT_FLOAT32: return pct_rn_run<PCT_FLOAT32>(n, walk, on_host, st);
    case PCT_FLOAT64: return pct_rn_run<PCT_FLOAT64>(n, walk, on_host, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
