/* pointwise_glue.c: the CUDA kernels of the op table's PCT_UNARY and PCT_BINARY ops, for their CUDA slots
 * (pct_ops[].kernels[PCT_CUDA]). Each op's typed entry reads its arguments as the CPU's does (cpu/pointwise.c) and
 * goes through the same device-neutral call (../aten/pointwise_call.c: torch's checks, alpha, the plan); only the
 * runner differs: the plan becomes a pct_cuda_loop, launched on the device's current stream by pointwise.cu. */
#include "../aten/pointwise_call.h"
#include "loop_plan.h"

static bool cuda_has_loop(int op_index, int dtype) { return pct_cuda_pointwise_has_loop(op_index, dtype) != 0; }

typedef struct pointwise_launch {
    int op_index, dtype;
    pct_pw_ctx *ctx; /* borrowed from the call */
} pointwise_launch;

static int launch_pointwise(const pct_cuda_loop *plan, void *stream, void *arg)
{
    const pointwise_launch *p = arg;
    return pct_cuda_pointwise_launch(p->op_index, p->dtype, plan, p->ctx, stream);
}

static int cuda_run(pct_iter *it, int op_index, pct_pw_ctx *ctx)
{
    pointwise_launch p = {op_index, it->compute_dtype, ctx};
    return pct_cuda_loop_run(it, launch_pointwise, &p);
}

static const pct_pw_runner cuda_runner = {"cuda", cuda_has_loop, cuda_run, true, true};

/* One typed entry per op, as the CPU's. */
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    static pct_object *cuda_unary_##id(pct_call *c) { PCT_ARGS(id); return pct_pw_unary_call(&cuda_runner, c, arg.input); }
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr)  \
    static pct_object *cuda_binary_##id(pct_call *c)                   \
    {                                                                   \
        const pct_binary_args args = pct_binary_args_read_##id(c);      \
        return pct_pw_binary_call(&cuda_runner, c, &args);              \
    }
#include "../aten/ops.def"

void pct_cuda_register_pointwise(void)
{
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    if (pct_cuda_pointwise_has_loops(PCT_OP_##id)) pct_ops[PCT_OP_##id].kernels[PCT_CUDA] = cuda_unary_##id;
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    if (pct_cuda_pointwise_has_loops(PCT_OP_##id)) pct_ops[PCT_OP_##id].kernels[PCT_CUDA] = cuda_binary_##id;
#include "../aten/ops.def"
}

