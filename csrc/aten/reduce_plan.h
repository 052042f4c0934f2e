/* reduce_plan.h: a reduction as a device other than the CPU runs it (Note [Device reductions] in
 * cpu/reduce_plan.c).
 *
 * The entry points of cpu/reduce.c are device-neutral: argument checks, dtypes, out= and result tensors, and the plan
 * (kept and reduced dims split, sorted and merged) are the same on every device. The plan's walk is the device's: on
 * the CPU the driver of reduce_plan.c; elsewhere the backend's reduce, handed a pct_red_call.
 *
 * Ownership: a pct_red_call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_REDUCE_PLAN_H
#define PCT_REDUCE_PLAN_H
#include <stdint.h>
#include "reduce_ops.h"

/* dims a device plan holds after merging (torch's offset calculators hold 25) */
#define PCT_RED_DEVICE_DIMS 25

typedef struct pct_red_call {
    int op;            /* PCT_RED_OP_<op> (reduce_ops.h) */
    int dtype;         /* of the input: the functor's E */
    int device_index;
    int nouts;         /* 1 or 2 (value and index, var and mean, min and max) */
    red_ctx ctx;
    int nk, nr;        /* kept and reduced dims, innermost last */
    int64_t nout, nred;
    int64_t ksize[PCT_RED_DEVICE_DIMS], kin[PCT_RED_DEVICE_DIMS], kout[2][PCT_RED_DEVICE_DIMS]; /* byte strides */
    int64_t rsize[PCT_RED_DEVICE_DIMS], rin[PCT_RED_DEVICE_DIMS];
    const char *in;
    char *out[2];      /* out[1] NULL for one output */
} pct_red_call;

#endif
