/* batch_norm.cu: batch norm on CUDA, forward and backward (the backend's batch_norm, Note [Device batch norm] in
 * csrc/aten/cpu/batch_norm.c). A channel's statistics are walked by a group of lanes over its N * L elements (lanes.cuh
 * combines them), in double as the CPU's; lane 0 writes the channel's mean and invstd (and updates the running
 * statistics, or, backward, the parameter gradients and the three coefficients of grad_input). A second kernel writes
 * the output elementwise from those per-channel vectors. The simulated device runs the same functions on the host. */
#include <cuda_runtime.h>
#include <math.h>
#include "loops.cuh"
#include "float_types.cuh"
#include "lanes.cuh"
#include "batch_norm_runner.h"

template <int DT>
struct pct_bn {
    typedef typename pct_sm_type<DT>::T T;
    struct pair { double a, b; };
    pct_bn_call n;
    int group;

    /* element p (of N * L) of channel c */
    __host__ __device__ int64_t at(int64_t c, int64_t p) const { return ((p / n.L) * n.C + c) * n.L + p % n.L; }
    __host__ __device__ double x(int64_t i) const { return (double)pct_sm_type<DT>::load(((const T *)n.x)[i]); }
    __host__ __device__ double g(int64_t i) const { return (double)pct_sm_type<DT>::load(((const T *)n.grad)[i]); }
    __host__ __device__ int64_t M() const { return n.N * n.L; }

    /* forward pass 1 (training): the sum; pass 2: squared deviations from mu */
    __host__ __device__ pair sums(int64_t c, int lane, double mu, bool deviations) const
    {
        pair s = {0, 0};
        for (int64_t p = lane; p < M(); p += group) {
            const double v = x(at(c, p));
            s.a += deviations ? (v - mu) * (v - mu) : v;
        }
        return s;
    }
    __host__ __device__ double round_stat(double v) const { return n.f32 ? (double)(float)v : v; }
    /* lane 0, forward: the channel's statistics */
    __host__ __device__ void statistics(int64_t c, double sum, double dev) const
    {
        double mean, inv;
        if (n.training) {
            const double m = (double)M();
            mean = M() ? sum / m : NAN;
            inv = round_stat(1.0 / sqrt(dev / m + n.eps));
            mean = round_stat(mean);
            if (n.running_mean) n.running_mean[c] = n.momentum * mean + (1 - n.momentum) * n.running_mean[c];
            if (n.running_var) n.running_var[c] = n.momentum * (dev / (m - 1)) + (1 - n.momentum) * n.running_var[c];
        } else {
            mean = n.running_mean[c];
            inv = round_stat(1.0 / sqrt(n.running_var[c] + n.eps));
        }
        n.mean[c] = mean;
        n.invstd[c] = inv;
    }
    __host__ __device__ void forward_element(int64_t i) const
    {
        const int64_t c = (i / n.L) % n.C;
        const double ka = n.invstd[c] * (n.weight ? n.weight[c] : 1.0);
        const double kb = (n.bias ? n.bias[c] : 0.0) - n.mean[c] * ka;
        ((T *)n.out)[i] = pct_sm_type<DT>::store((typename pct_sm_type<DT>::C)(x(i) * ka + kb));
    }
    /* backward: sum(grad * x), sum(grad) of a lane */
    __host__ __device__ pair grad_sums(int64_t c, int lane) const
    {
        pair s = {0, 0};
        for (int64_t p = lane; p < M(); p += group) {
            const int64_t i = at(c, p);
            const double gv = g(i);
            s.a += gv * x(i);
            s.b += gv;
        }
        return s;
    }
    /* lane 0, backward: the parameter gradients and grad_input's coefficients */
    __host__ __device__ void coefficients(int64_t c, pair s) const
    {
        const double mean = n.mean[c], inv = n.invert_var ? 1.0 / sqrt(n.invstd[c] + n.eps) : n.invstd[c];
        const double dot = s.a - mean * s.b, sg = s.b, wc = n.weight ? n.weight[c] : 1.0;
        double *k = n.k;
        k[c] = inv * wc;
        if (n.training && M() > 0) {
            k[n.C + c] = -inv * inv * inv * wc * dot / (double)M();
            k[2 * n.C + c] = -inv * wc * sg / (double)M() - mean * k[n.C + c];
        } else {
            k[n.C + c] = 0;
            k[2 * n.C + c] = 0;
        }
        if (n.grad_weight) n.grad_weight[c] = dot * inv;
        if (n.grad_bias) n.grad_bias[c] = sg;
    }
    __host__ __device__ void backward_element(int64_t i) const
    {
        const int64_t c = (i / n.L) % n.C;
        const double v = g(i) * n.k[c] + x(i) * n.k[n.C + c] + n.k[2 * n.C + c];
        ((T *)n.out)[i] = pct_sm_type<DT>::store((typename pct_sm_type<DT>::C)v);
    }
    /* one channel's walk by lane `lane` of its group, the lanes' values combined by `combine` (device or host) */
    template <typename Combine>
    __host__ __device__ void channel(int64_t c, int lane, bool live, Combine combine) const
    {
        auto add = [](pair u, pair v) { return pair{u.a + v.a, u.b + v.b}; };
        if (!n.backward) {
            double sum = 0, dev = 0;
            if (n.training) {
                sum = combine(live ? sums(c, lane, 0, false) : pair{0, 0}, add).a;
                const double mu = M() ? sum / (double)M() : 0;
                dev = combine(live ? sums(c, lane, mu, true) : pair{0, 0}, add).a;
            }
            if (live && lane == 0) statistics(c, sum, dev);
        } else {
            const pair s = combine(live ? grad_sums(c, lane) : pair{0, 0}, add);
            if (live && lane == 0) coefficients(c, s);
        }
    }
};

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_bn_channel_kernel(const pct_bn<DT> r)
{
    typedef typename pct_bn<DT>::pair pair;
    __shared__ pair lanes[PCT_CUDA_BLOCK];
    int lane;
    const int64_t c = pct_lanes_group(r.group, &lane);
    r.channel(c, lane, c < r.n.C, [&](pair v, auto op) { return pct_lanes_combine(lanes, v, lane, r.group, op); });
}

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_bn_element_kernel(const pct_bn<DT> r, int64_t numel)
{
    for (int64_t i = (int64_t)blockIdx.x * PCT_CUDA_BLOCK + threadIdx.x; i < numel; i += (int64_t)gridDim.x * PCT_CUDA_BLOCK)
        r.n.backward ? r.backward_element(i) : r.forward_element(i);
}

template <int DT>
static int pct_bn_run(const pct_bn_call *call, int group, int on_host, cudaStream_t stream)
{
    typedef typename pct_bn<DT>::pair pair;
    pct_bn<DT> r;
    r.n = *call;
    r.group = group;
    const int64_t numel = call->N * call->C * call->L;
    const bool elements = call->out && numel > 0;
    if (on_host) {
        pair lanes[PCT_CUDA_BLOCK];
        auto add = [](pair u, pair v) { return pair{u.a + v.a, u.b + v.b}; };
        for (int64_t c = 0; c < call->C; c++) { /* the passes of channel(), lane by lane */
            if (call->backward) {
                for (int l = 0; l < group; l++) lanes[l] = r.grad_sums(c, l);
                r.coefficients(c, pct_lanes_combine_host(lanes, group, add));
                continue;
            }
            double sum = 0, dev = 0;
            if (call->training) {
                for (int l = 0; l < group; l++) lanes[l] = r.sums(c, l, 0, false);
                sum = pct_lanes_combine_host(lanes, group, add).a;
                const double mu = r.M() ? sum / (double)r.M() : 0;
                for (int l = 0; l < group; l++) lanes[l] = r.sums(c, l, mu, true);
                dev = pct_lanes_combine_host(lanes, group, add).a;
            }
            r.statistics(c, sum, dev);
        }
        if (elements)
            for (int64_t i = 0; i < numel; i++) call->backward ? r.backward_element(i) : r.forward_element(i);
        return 0;
    }
    const int64_t per_block = PCT_CUDA_BLOCK / group;
    pct_bn_channel_kernel<DT><<<(unsigned)((call->C + per_block - 1) / per_block), PCT_CUDA_BLOCK, 0, stream>>>(r);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || !elements) return (int)err;
    unsigned blocks;
    if ((err = pct_cuda_on_device::grid(numel, &blocks)) != cudaSuccess) return (int)err;
    pct_bn_element_kernel<DT><<<blocks, PCT_CUDA_BLOCK, 0, stream>>>(r, numel);
    return (int)cudaGetLastError();
}

extern "C" int pct_cuda_batch_norm_launch(const pct_bn_call *call, int group, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    switch (call->dtype) {
    case PCT_FLOAT16: return pct_bn_run<PCT_FLOAT16>(call, group, on_host, st);
    case PCT_BFLOAT16: return pct_bn_run<PCT_BFLOAT16>(call, group, on_host, st);
    case PCT_FLOAT32: return pct_bn_run<PCT_FLOAT32>(call, group, on_host, st);
    case PCT_FLOAT64: return pct_bn_run<PCT_FLOAT64>(call, group, on_host, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
