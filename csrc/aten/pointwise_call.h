/* pointwise_call.h: the device-neutral half of a call of an ops.def PCT_UNARY / PCT_BINARY op: torch's argument
 * checks, the loop context (alpha, the opmath scalar), the plan (pct_iter), the errors. Each device's runner brings
 * the other half, its loops (cpu/pointwise.c, csrc/cuda/pointwise_glue.c), through a pct_pw_runner, so the two
 * devices build every call's plan the same way. */
#ifndef PCT_POINTWISE_CALL_H
#define PCT_POINTWISE_CALL_H
#include "iter.h"
#include "op.h"
#include "cpu/pointwise_math.h"

/* A device's loops of the pointwise table (static data of its runner file; the functions borrow their arguments). */
typedef struct pct_pw_runner {
    const char *device;                         /* torch's kernel-name suffix in "not implemented" errors: "cpu", "cuda" */
    bool (*has_loop)(int op_index, int dtype);  /* whether op_index has a loop for compute dtype `dtype` */
    /* runs op_index's loop over the built plan `it` (inputs already in its compute dtype); a data-dependent error goes
     * to ctx->error (pct_pw_raise raises it); -1 with an error set where the run itself failed */
    int (*run)(pct_iter *it, int op_index, pct_pw_ctx *ctx);
    /* Note [CPU scalars in opmath]: whether add/sub/mul/div over float16/bfloat16 take a 0-d CPU operand on either
     * side with its value before the cast to that dtype (ctx->scalar_a, scalar_b), as torch's CUDA kernels read CPU
     * scalars; false: only mul/div's `other`, as torch's CPU kernels (pointwise_call.c) */
    bool cpu_scalars_in_opmath;
    /* whether pow(Tensor, Scalar) by 0.5, -0.5 or -1 runs sqrt, rsqrt or reciprocal for float16 too (torch's CUDA kernel
     * does for every dtype, its CPU kernel for float32, float64 and bfloat16 only: pointwise_call.c) */
    bool pow_unary_for_float16;
} pct_pw_runner;

/* Runs op `op_index` (a PCT_UNARY/PCT_BINARY op) over inputs on runner r's device, honouring c->out and c->inplace: a new
 * reference, or NULL with an error. */
pct_object *pct_pw_run_on(const pct_pw_runner *r, pct_call *c, int op_index, int ninputs, pct_tensor **inputs,
                          pct_pw_ctx *ctx);
/* The typed entries of the table's ops: c is a call of a PCT_UNARY op with input x, or of a PCT_BINARY op with the
 * operands and alpha of args (pow's and alpha's checks included). */
pct_object *pct_pw_unary_call(const pct_pw_runner *r, pct_call *c, pct_tensor *x);
pct_object *pct_pw_binary_call(const pct_pw_runner *r, pct_call *c, const pct_binary_args *args);

/* -1 with torch's "not implemented for" error of op op_index (named `name`) on a dtype without a loop on `device`. */
int pct_pw_refuse_dtype(int op_index, int dtype, const char *name, const char *device);
/* Raises the error a loop recorded in ctx; 0 when none. */
int pct_pw_raise(const pct_pw_ctx *ctx);
/* The promotion's part of an iterator's configuration. */
void pct_pw_config(pct_iter_config *cfg, int promotion);
/* torch's dtype rule for the out= tensor of a unary op that keeps its input's dtype: -1 with its error. */
int pct_pw_check_out_dtype(int op_index, const pct_tensor *out, const pct_tensor *in);
#endif
