/* softmax.cu: softmax and log_softmax, forward and backward, on CUDA (the backend's softmax, Note [Device softmax] in
 * csrc/aten/cpu/softmax.c), over contiguous (outer, len, inner) operands.
 *
 * A row (one of the outer * inner) is walked by a group of G lanes as reductions are (Note [CUDA reduction walk] in
 * reduce.cuh): G = 1 where inner is wide, so neighbouring threads take neighbouring rows and read neighbouring
 * elements; else 32 or 256 lanes per row, lane l taking positions l, l + G, .... Each pass over the row folds a value
 * per lane (the maximum, then the sum of exponentials; the backward's sum), the lanes' values are combined neighbour
 * by neighbour in shared memory and shared with every lane, and a last pass writes. Computed in float for float16
 * and bfloat16, in double for double, as torch's kernels accumulate. The launch policies (Note [Launch policies] in
 * loops.cuh) are the device's and, for the simulated device, the host's, which runs the same lane passes in turn.
 */
#include <cuda_runtime.h>
#include <math.h>
#include "loops.cuh"
#include "softmax_runner.h"
#include "float_types.cuh"
#include "lanes.cuh"
#include "aten/dtype.h"

template <int DT>
struct pct_sm_rows {
    typedef typename pct_sm_type<DT>::T T;
    typedef typename pct_sm_type<DT>::C C;
    pct_softmax_call s;
    int group;

    __host__ __device__ int64_t rows() const { return s.outer * s.inner; }
    __host__ __device__ int64_t base(int64_t row) const { return (row / s.inner) * s.len * s.inner + row % s.inner; }
    __host__ __device__ C at(const char *p, int64_t row, int64_t k) const
    {
        return pct_sm_type<DT>::load(((const T *)p)[base(row) + k * s.inner]);
    }
    /* pass 1 of a lane: the forward's maximum, or the backward's sum */
    __host__ __device__ C first(int64_t row, int lane) const
    {
        C v = s.backward ? (C)0 : (C)-INFINITY;
        for (int64_t k = lane; k < s.len; k += group) {
            if (!s.backward) {
                const C x = at(s.x, row, k);
                v = (x != x || x > v) ? x : v; /* NaN wins */
            } else {
                const C g = at(s.grad, row, k);
                v += s.log ? g : g * at(s.x, row, k);
            }
        }
        return v;
    }
    __host__ __device__ C combine_first(C a, C b) const
    {
        if (s.backward) return a + b;
        return (a != a || b != b) ? (a != a ? a : b) : (b > a ? b : a);
    }
    /* pass 2 of a lane (forward): the sum of exp(x - max) */
    __host__ __device__ C second(int64_t row, int lane, C mx) const
    {
        C v = 0;
        for (int64_t k = lane; k < s.len; k += group) v += exp(at(s.x, row, k) - mx);
        return v;
    }
    /* the last pass of a lane: the outputs of its positions */
    __host__ __device__ void write(int64_t row, int lane, C a, C b) const
    {
        T *out = (T *)s.out;
        for (int64_t k = lane; k < s.len; k += group) {
            C r;
            if (!s.backward) {
                const C d = at(s.x, row, k) - a; /* a: the maximum, b: the sum */
                r = s.log ? d - log(b) : exp(d) / b;
            } else {
                const C g = at(s.grad, row, k), y = at(s.x, row, k); /* a: the sum */
                r = s.log ? g - exp(y) * a : y * (g - a);
            }
            out[base(row) + k * s.inner] = pct_sm_type<DT>::store(r);
        }
    }
};

template <int DT>
__global__ void __launch_bounds__(PCT_CUDA_BLOCK) pct_sm_kernel(const pct_sm_rows<DT> w)
{
    typedef typename pct_sm_rows<DT>::C C;
    __shared__ C lanes[PCT_CUDA_BLOCK];
    const int G = w.group;
    int lane;
    const int64_t row = pct_lanes_group(G, &lane);
    const bool live = row < w.rows();
    const C a = pct_lanes_combine(lanes, live ? w.first(row, lane) : (C)0, lane, G,
                                  [&](C x, C y) { return w.combine_first(x, y); });
    C b = 0;
    if (!w.s.backward)
        b = pct_lanes_combine(lanes, live ? w.second(row, lane, a) : (C)0, lane, G, [](C x, C y) { return x + y; });
    if (live) w.write(row, lane, a, b);
}

/* the host's run of the same passes (the simulated device) */
template <int DT>
static void pct_sm_on_host(const pct_sm_rows<DT> &w)
{
    typedef typename pct_sm_rows<DT>::C C;
    C lanes[PCT_CUDA_BLOCK];
    for (int64_t row = 0; row < w.rows(); row++) {
        for (int l = 0; l < w.group; l++) lanes[l] = w.first(row, l);
        const C a = pct_lanes_combine_host(lanes, w.group, [&](C x, C y) { return w.combine_first(x, y); });
        C b = 0;
        if (!w.s.backward) {
            for (int l = 0; l < w.group; l++) lanes[l] = w.second(row, l, a);
            b = pct_lanes_combine_host(lanes, w.group, [](C x, C y) { return x + y; });
        }
        for (int l = 0; l < w.group; l++) w.write(row, l, a, b);
    }
}

template <int DT>
static int pct_sm_run(const pct_softmax_call *s, int group, int on_host, cudaStream_t stream)
{
    pct_sm_rows<DT> w;
    w.s = *s;
    w.group = group;
    if (on_host) {
        pct_sm_on_host<DT>(w);
        return 0;
    }
    const int64_t blocks = (w.rows() + PCT_CUDA_BLOCK / group - 1) / (PCT_CUDA_BLOCK / group);
    if (blocks > 0x7fffffff) return (int)cudaErrorInvalidConfiguration;
    pct_sm_kernel<DT><<<(unsigned)blocks, PCT_CUDA_BLOCK, 0, stream>>>(w);
    return (int)cudaGetLastError();
}

extern "C" int pct_cuda_softmax_launch(const pct_softmax_call *s, int group, int on_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    switch (s->dtype) {
    case PCT_FLOAT16: return pct_sm_run<PCT_FLOAT16>(s, group, on_host, st);
    case PCT_BFLOAT16: return pct_sm_run<PCT_BFLOAT16>(s, group, on_host, st);
    case PCT_FLOAT32: return pct_sm_run<PCT_FLOAT32>(s, group, on_host, st);
    case PCT_FLOAT64: return pct_sm_run<PCT_FLOAT64>(s, group, on_host, st);
    default: return (int)cudaErrorInvalidValue;
    }
}
