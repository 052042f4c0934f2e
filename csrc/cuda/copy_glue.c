/* copy_glue.c: the CUDA backend's copy within a device and its fill (loop_plan.h), over plans built as the CPU's
 * copy_ and fill build theirs (iter.c's pct_copy_, cpu/convert.c's pct_fill_scalar), launched by copy.cu. */
#include "../aten/iter.h"
#include "../aten/op.h"
#include "loop_plan.h"

typedef struct copy_launch {
    int dst_dtype, src_dtype;
} copy_launch;

static int launch_copy(const pct_cuda_loop *plan, void *stream, void *arg)
{
    const copy_launch *c = arg;
    return pct_cuda_copy_launch(plan, c->dst_dtype, c->src_dtype, stream);
}

int pct_cuda_copy_on_device(pct_tensor *dst, const pct_tensor *src)
{
    if (dst->numel == 0) return 0;
    /* pct_copy_'s plan: dst written in place, src broadcast to it, each keeping its dtype (cast: the iterator holds
     * a reference to src, which counting does not change) */
    pct_iter it;
    pct_iter_config cfg = {.out = dst, .inplace = true, .ninputs = 1, .inputs = {(pct_tensor *)src},
                           .compute_dtype = src->dtype, .out_dtype = dst->dtype, .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    copy_launch c = {dst->dtype, src->dtype};
    const int rc = pct_cuda_loop_run(&it, launch_copy, &c);
    pct_iter_release(&it);
    return rc;
}

typedef struct fill_launch {
    int dtype;
    double value_d;   /* the value as t's dtype holds it, read back as a double (floating dtypes) */
    int64_t value_i;  /* ... and as an int64 (the others) */
} fill_launch;

static int launch_fill(const pct_cuda_loop *plan, void *stream, void *arg)
{
    const fill_launch *f = arg;
    return pct_cuda_fill_launch(plan, f->dtype, f->value_d, f->value_i, stream);
}

int pct_cuda_fill_on_device(pct_tensor *t, const pct_scalar *value)
{
    if (t->numel == 0) return 0;
    /* converted on the host exactly as the CPU's fill converts (a 0-d tensor of t's dtype), then read back in a form
     * that converts to the same element again */
    pct_tensor *v = pct_scalar_tensor_of(t->dtype, value);
    if (!v) return -1;
    fill_launch f = {t->dtype, pct_load_as_double(pct_tensor_data(v), t->dtype),
                     pct_load_as_int64(pct_tensor_data(v), t->dtype)};
    PCT_DECREF(v);
    pct_iter it;
    pct_iter_config cfg = {.out = t, .inplace = true, .ninputs = 0, .compute_dtype = t->dtype, .out_dtype = t->dtype,
                           .mixed_dtypes = true};
    if (pct_iter_build(&it, &cfg) < 0) return -1;
    const int rc = pct_cuda_loop_run(&it, launch_fill, &f);
    pct_iter_release(&it);
    return rc;
}

