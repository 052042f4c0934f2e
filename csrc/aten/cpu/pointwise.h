/* pointwise.h: running ops.def pointwise loops from other kernels. */
#ifndef PCT_POINTWISE_H
#define PCT_POINTWISE_H
#include "../iter.h"
#include "../op.h"
#include "../pointwise_call.h"   /* pct_pw_raise, pct_pw_config, ... (device-neutral) */
#include "../pointwise_expand.h" /* PCT_SCALAR_AS_T, PCT_SEL, ... */
#include "pointwise_math.h"
#include "simd_levels.h" /* PCT_HOT_X86_64_V3: the elementwise loops' clones, Note [Loop ISA clones] */

/* The loop of a PCT_UNARY/PCT_BINARY op for a dtype. */
pct_loop_fn pct_pw_loop(int op_index, int dtype);
/* The complex64/complex128 loop of a table op (pointwise_complex.c), or NULL. */
pct_loop_fn pct_pw_complex_loop(int op_index, int dtype);
/* 0 if the op has a loop for dtype, else -1 with torch's "not implemented for" error. */
int pct_pw_check_dtype(int op_index, int dtype, const char *name);
/* Runs op `op_index` (a PCT_UNARY/PCT_BINARY op) over inputs, honouring c->out and c->inplace. */
pct_object *pct_pw_run(pct_call *c, int op_index, int ninputs, pct_tensor **inputs, pct_pw_ctx *ctx);
#endif
