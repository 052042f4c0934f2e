/* iter.h: the one loop machine for elementwise work (a TensorIterator in C).
 *
 * Building an iterator does, once for all ops: broadcasting of the inputs (stride 0),
 * the common dtype (torch's result_type, Python scalars included), conversion of
 * inputs to it, allocation of the output or checks of out=/in-place targets, byte
 * strides, and merging of dimensions that are contiguous for every operand. Running
 * it calls an inner loop with the NumPy ufunc signature over 1-D runs, split across
 * OpenMP threads above a grain size, with the GIL released.
 *
 * Operand 0 is the output; operands 1.. are inputs. All tensors in a pct_iter are
 * owned references, released by pct_iter_release (pct_iter_finish calls it).
 */
#ifndef PCT_ITER_H
#define PCT_ITER_H
#include "tensor.h"

#define PCT_ITER_MAX_OPERANDS 6
/* Below this many elements a loop runs on one thread (as torch's GRAIN_SIZE). */
#define PCT_PARALLEL_GRAIN 32768

typedef void (*pct_loop_fn)(char **args, const int64_t *n, const int64_t *strides, void *ctx);

typedef struct pct_iter_config {
    pct_tensor *out;          /* out= target or in-place self (borrowed); NULL: allocate */
    bool inplace;             /* out is also inputs[0]: its shape may not change */
    int ninputs;
    pct_tensor *inputs[PCT_ITER_MAX_OPERANDS - 1]; /* borrowed */
    int compute_dtype;        /* -1: torch's result_type of the inputs */
    bool int_to_float;        /* integral/bool common dtypes become the default float */
    int out_dtype;            /* -1: the compute dtype (e.g. PCT_BOOL for comparisons) */
    bool mixed_dtypes;        /* copy: keep each operand's own dtype (no conversion) */
    bool keep_order;          /* iterate in C order of the shape (loops whose result depends on the
                                 order of visits); otherwise the order follows memory, as in torch,
                                 and allocated outputs take the inputs' layout */
    bool check_overlap;       /* refuse a written tensor with internal overlap or partially overlapping an
                                 input (Note [Written-tensor overlap]); ops set it, internal users do not */
} pct_iter_config;

typedef struct pct_iter {
    int ntensors;             /* output + inputs */
    pct_tensor *ops[PCT_ITER_MAX_OPERANDS];
    pct_tensor *result;       /* the tensor handed back to the caller */
    int ndim;
    int64_t numel;
    bool stream_output;       /* set by the caller after building: the loop only writes operand 0, never
                                 reads it, so a large output may be written around the caches (Note
                                 [Streaming stores] in cpu/iter_runner.c). Zeroed by pct_iter_build. */
    int64_t shape[PCT_MAX_DIMS];
    /* byte strides, dim-major: strides[d][k] is operand k's stride in dim d */
    int64_t strides[PCT_MAX_DIMS][PCT_ITER_MAX_OPERANDS];
    char *data[PCT_ITER_MAX_OPERANDS];
    int compute_dtype;
    int out_dtype;
} pct_iter;

/* Builds the iterator; -1 with exception set (and nothing to release). */
int pct_iter_build(pct_iter *it, const pct_iter_config *cfg);
/* The CPU runner (cpu/iter_runner.c): runs loop over all elements. Data-dependent errors go through ctx (see
 * pct_loop_error). */
void pct_iter_run(pct_iter *it, pct_loop_fn loop, void *ctx);
/* A same-dtype copy (operand 0 from operand 1, elements of sz bytes) whose source is a transpose of the destination,
 * moved in tiles (cpu/copy_transpose.c, Note [Tiled transposes]): false, having done nothing, for other plans. */
bool pct_copy_transposed(const pct_iter *it, int64_t sz);
/* pct_iter_run for loops that do `work` elements' worth per element of the plan (an index loop's inner run): the
 * threads start where the plan's elements times work reach the parallel grain */
void pct_iter_run_work(pct_iter *it, pct_loop_fn loop, void *ctx, int64_t work);
/* Single-threaded variant, for loops with state carried across elements. */
void pct_iter_run_serial(pct_iter *it, pct_loop_fn loop, void *ctx);
/* Copies back into the real out= target if a temporary was used, releases operands,
 * and returns the result (new reference) or NULL with exception. */
pct_object *pct_iter_finish(pct_iter *it);
void pct_iter_release(pct_iter *it);

/* Broadcast two shapes; -1 with torch's RuntimeError text. */
int pct_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out);
/* Result dtype of a set of tensors (wrapped numbers and 0-d tensors weigh less); -1 with torch's error where it
 * refuses a uint64 number's promotion (Note [uint64 scalars] in op.h). */
int pct_result_type_of(int n, pct_tensor *const *ts);
/* pct_result_type_finish, raising torch's error for a refused promotion; -1 then. */
int pct_result_type_done(pct_result_type_state *st);
/* pct_promote_types, raising torch's "Promotion for uint16, uint32, uint64 types is not supported" where it refuses. */
int pct_promote_types_or_raise(int a, int b);

/* The order in which TensorIterator lays out and walks dims (perm[0] fastest): C order, insertion-sorted
 * by the operands' strides (strides[k][d], 0 where operand k broadcasts). */
void pct_layout_perm(int ndim, const int64_t *sizes, int nops, const int64_t *const *strides, int *perm);
/* c10's is_non_overlapping_and_dense: the dims of size >= 2, sorted by stride, tile their memory exactly. */
bool pct_tensor_non_overlapping_and_dense(const pct_tensor *t);
/* Strides of a new tensor shaped like t under preserve_format: t's own when t is non-overlapping and
 * dense, else dense strides in t's stride order (at::infer_dense_strides). */
void pct_preserved_strides(const pct_tensor *t, int64_t *out);
/* A new uninitialised tensor like t (dtype given) in t's preserved layout; NULL with exception. */
pct_tensor *pct_empty_preserving(const pct_tensor *t, int dtype);
/* The same on another device (empty_like(meta_tensor, device="cpu")). */
pct_tensor *pct_empty_preserving_on(const pct_tensor *t, int dtype, int device_type, int device_index);
/* A copy of t converted to dtype, in t's preserved layout (clone, to, *_like semantics). */
pct_tensor *pct_copy_preserving(pct_tensor *t, int dtype);

/* Note [Written-tensor overlap]: torch's assert_no_internal_overlap / assert_no_partial_overlap for a tensor
 * an op writes (in-place self or out=) and its inputs: -1 with torch's RuntimeError. */
int pct_check_written_overlap(const pct_tensor *out, int ninputs, pct_tensor *const *inputs);
/* Copies src into dst with broadcasting and dtype conversion; -1 with exception. */
int pct_copy_(pct_tensor *dst, pct_tensor *src);
/* A contiguous tensor with t's values (t itself, with a new reference, if it already is). */
pct_tensor *pct_contiguous(pct_tensor *t);
/* t converted to dtype (t itself, new reference, when the dtype matches and !force_copy). */
pct_tensor *pct_to_dtype(pct_tensor *t, int dtype, bool force_copy);

#endif
