/* index_call.h: the index family's loops (Note [Index loops] in cpu/index.c) as a device other than the CPU runs them
 * (Note [Device indexing] in cpu/index_device.c).
 *
 * A call is a built pct_iter's plan (merged shape, byte strides dim-major with dim ndim - 1 innermost, data pointers)
 * plus what the CPU loop takes in its context. Three kinds:
 *  - LOOP: the index loop. Operands dst, src, idx (int64, checked and wrapped), cnt (int64, IX_MEAN only). At each
 *    position of the plan, for i in [0, n): j = idx[i * idx_step], then op on dst + i*dst_si + j*dst_sj and
 *    src + i*src_si + j*src_sj (cnt + j*cnt_sj counts IX_MEAN's contributions). The dims where dst's stride is 0 (of
 *    size > 1) are walked serially by one thread, in the plan's order, and so is i when the writes go through j
 *    (dst_sj != 0): each destination element receives its contributions in the CPU's order, without atomics. The
 *    exception, on a real GPU only: a copy or an add with too few independent destinations to fill the device runs a
 *    thread per contribution (a copy of duplicate indices keeps one value, which one unspecified; an add uses
 *    atomics, exact for int32 / int64, order-dependent for float32 / float64), as torch's CUDA kernels do.
 *  - OFFSETS: out (int64) from in (int32 / int64, broadcast): a value v outside [lo, hi) is an error; a negative one
 *    gets hi added; the offset is v * mul, or (linear) the element offset of row-major index v in a tensor of
 *    lin_sizes / lin_strides; accumulate adds it to out. The first bad value in the plan's order is reported back
 *    (found_bad, bad), the device writing the position of the first bad element to a flag the host reads after it.
 *  - MEAN_DIV: dst / cnt in place (a count of 0 counts as 1; floor division for integral dtypes).
 *
 * Ownership: a call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_INDEX_CALL_H
#define PCT_INDEX_CALL_H
#include <stdbool.h>
#include <stdint.h>

enum { PCT_INDEX_CALL_LOOP, PCT_INDEX_CALL_OFFSETS, PCT_INDEX_CALL_MEAN_DIV };
/* the loop's ops, in the order of index_internal.h's IX_* (index_device.c checks they agree) */
enum { PCT_INDEX_COPY, PCT_INDEX_ADD, PCT_INDEX_MUL, PCT_INDEX_MAX, PCT_INDEX_MIN, PCT_INDEX_MEAN };

#define PCT_INDEX_CALL_MAX_DIMS 64
#define PCT_INDEX_CALL_OPERANDS 4

typedef struct pct_index_call {
    int kind;                /* PCT_INDEX_CALL_* */
    int dtype;               /* LOOP, MEAN_DIV: dst's dtype (a dtype of PCT_FORALL_ALL_DTYPES) */
    int device_index;
    int ndim, noperands;
    int64_t numel;
    int64_t shape[PCT_INDEX_CALL_MAX_DIMS];
    int64_t strides[PCT_INDEX_CALL_MAX_DIMS][PCT_INDEX_CALL_OPERANDS]; /* bytes; strides[d][k] of operand k */
    char *data[PCT_INDEX_CALL_OPERANDS];
    /* LOOP: src is one element passed by value (a Python number, the identity of a reduction) */
    bool src_by_value;
    uint64_t src_value;
    int op;                  /* PCT_INDEX_* */
    int64_t n, idx_step, dst_si, dst_sj, src_si, src_sj, cnt_sj; /* bytes, as the CPU loop's ix_ctx */
    double alpha_d;
    int64_t alpha_i;
    /* OFFSETS */
    bool in32, accumulate, linear;
    int64_t lo, hi, mul;
    int lin_ndim;
    int64_t lin_sizes[PCT_INDEX_CALL_MAX_DIMS], lin_strides[PCT_INDEX_CALL_MAX_DIMS];
    /* OFFSETS' answer, written by the backend */
    bool found_bad;
    int64_t bad;
} pct_index_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/index_device.c); 0, or -1 with an error. */
int pct_index_on_device(pct_index_call *call, int device_type);
#endif
#endif
