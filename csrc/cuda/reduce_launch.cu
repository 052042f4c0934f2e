/* reduce_launch.cu: the CUDA reduction runner's C entry points (reduce_runner.h) over the families' lookups. */
#include "reduce.cuh"

static const pct_red_entry *find(int op, int dtype)
{
    const pct_red_entry *e = pct_red_sum_family(op, dtype);
    if (!e) e = pct_red_minmax_family(op, dtype);
    if (!e) e = pct_red_stats_family(op, dtype);
    return e;
}

extern "C" size_t pct_cuda_reduce_acc_size(int op, int dtype)
{
    const pct_red_entry *e = find(op, dtype);
    return e ? e->acc_size : 0;
}

extern "C" int pct_cuda_reduce_launch(const pct_red_call *r, const pct_red_walk *w, int on_host, void *stream)
{
    const pct_red_entry *e = find(r->op, r->dtype);
    if (!e) return (int)cudaErrorInvalidValue;
    pct_red_args a;
    a.r = *r;
    a.group = w->group;
    a.splits = w->splits;
    a.chunk = w->chunk;
    a.work = w->work;
    return (int)(on_host ? e->host : e->device)(a, (cudaStream_t)stream);
}
