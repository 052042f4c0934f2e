/* pointwise.c: the elementwise loops of ops.def's PCT_UNARY and PCT_BINARY entries, and the CPU runner that runs
 * them through the loop machine (the device-neutral checks and plan of a call: ../pointwise_call.c; how an entry
 * expands into loops: ../pointwise_expand.h, which the CUDA runner shares).
 *
 * Each loop has three shapes the compiler vectorizes (all operands contiguous; one
 * input a broadcast scalar; the other) and a strided fallback. Loops exist for every
 * dtype; the entry's dtype mask decides which are reachable. */
#include "../iter.h"
#include <tgmath.h>
#include "../op.h"
#include "../error.h"
#include "pointwise_math.h"
#include "special_functions.h"
#include "special_polynomials.h"
#include "pointwise.h"
#include "vecmath.h"

#include "pointwise_loops.h"

/* Generate the loops: for each entry, one loop per dtype of its set (pointwise_expand.h). */
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) PCT_PW_LOOPS(PCT_UNARY_LOOP, id, fexpr, iexpr, dtypes, promo)
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    PCT_PW_LOOPS(PCT_BINARY_LOOP, id, fexpr, iexpr, dtypes, promo)
#include "../ops.def"

/* Loop tables, indexed [op][dtype], and dtype masks. */
#define PCT_UNARY_ENTRY(E, N, T, C, S, id, set, b, c) PCT_SEL(set, E, unary_##id##_##N, NULL),
#define PCT_BINARY_ENTRY(E, N, T, C, S, id, set, b, c) PCT_SEL(set, E, binary_##id##_##N, NULL),
static const pct_loop_fn loop_table[PCT_NUM_OPS][PCT_NUM_DTYPES] = {
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {PCT_FORALL_ALL_DTYPES_PAIRED(PCT_UNARY_ENTRY, id, dtypes, 0, 0)},
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr) \
    [PCT_OP_##id] = {PCT_FORALL_ALL_DTYPES_PAIRED(PCT_BINARY_ENTRY, id, dtypes, 0, 0)},
#include "../ops.def"
};
pct_loop_fn pct_pw_loop(int op_index, int dtype)
{
    return dtype >= PCT_COMPLEX64 ? pct_pw_complex_loop(op_index, dtype) : loop_table[op_index][dtype];
}

int pct_pw_check_dtype(int op_index, int dtype, const char *name)
{
    return pct_pw_loop(op_index, dtype) ? 0 : pct_pw_refuse_dtype(op_index, dtype, name, "cpu");
}

/* The CPU runner of the table's ops (pointwise_call.h): the loop machine's CPU runner over loop_table, or the SIMD
 * loop of vecmath.c where the op has one. */
static bool cpu_has_loop(int op_index, int dtype) { return pct_pw_loop(op_index, dtype) != NULL; }

static int cpu_run(pct_iter *it, int op_index, pct_pw_ctx *ctx)
{
    pct_loop_fn loop = pct_vec_loop(op_index, it->compute_dtype);
    it->stream_output = true; /* the table's loops only write their output */
    pct_iter_run(it, loop ? loop : pct_pw_loop(op_index, it->compute_dtype), ctx);
    return 0;
}

static const pct_pw_runner cpu_runner = {"cpu", cpu_has_loop, cpu_run, false, false};

pct_object *pct_pw_run(pct_call *c, int op_index, int ninputs, pct_tensor **inputs, pct_pw_ctx *ctx)
{
    return pct_pw_run_on(&cpu_runner, c, op_index, ninputs, inputs, ctx);
}

/* One typed entry per unary op of the table (all take `Tensor input`). */
#define PCT_UNARY(id, variants, promo, dtypes, fexpr, iexpr) \
    pct_object *pct_cpu_unary_##id(pct_call *c) { PCT_ARGS(id); return pct_pw_unary_call(&cpu_runner, c, arg.input); }
#include "../ops.def"

/* One typed entry per binary op of the table (op_args.h reads its operands and alpha by their names). */
#define PCT_BINARY(id, schema, variants, promo, dtypes, fexpr, iexpr)                                 \
    pct_object *pct_cpu_binary_##id(pct_call *c)                                                      \
    {                                                                                                  \
        const pct_binary_args args = pct_binary_args_read_##id(c);                                     \
        return pct_pw_binary_call(&cpu_runner, c, &args);                                              \
    }
#include "../ops.def"
