/* special_ops.c: the kernels of ops_special.def that are more than a table loop: polygamma, whose integer order n
 * reaches the loop of _polygamma_loop through ctx->p1_i. */
#include "pointwise.h"
#include "../error.h"

static pct_object *polygamma_run(pct_call *c, int64_t n, pct_tensor *input)
{
    if (n < 0) {
        pct_error_str(PCT_ERR_RUNTIME, "polygamma(n, x) does not support negative n.");
        return NULL;
    }
    pct_pw_ctx ctx = {.p1_i = n, .has_p1 = 1};
    return pct_pw_run(c, PCT_OP__polygamma_loop, 1, &input, &ctx);
}

pct_object *pct_cpu_polygamma(pct_call *c)
{
    PCT_ARGS(polygamma);
    return polygamma_run(c, arg.n, arg.input);
}

pct_object *pct_cpu_polygamma_method(pct_call *c)
{
    PCT_ARGS(polygamma_method);
    return polygamma_run(c, arg.n, arg.input);
}
