/* embedding_call.h: embedding's lookup and dense backward as a device other than the CPU runs them (Note [Device
 * embedding] in cpu/embedding.c).
 *
 * Forward: out[i, :] = weight[index[i], :] for the k indices (out contiguous (k, D); weight with strides ws0, ws1 in
 * elements). Backward: out[r, :] = sum over the indices i with index[i] == r, in index order, of grad[i, :]
 * (times 1 / count[r] with scale_grad_by_freq), 0 for the padding row and rows no index names; the positions of row r
 * are order[row_start[r] .. row_start[r + 1]) (a stable grouping of the indices made on the host), so every row is
 * summed by one thread in the CPU's order, without atomics.
 *
 * Ownership: an embedding call borrows its data pointers (device addresses) for the duration of the call.
 */
#ifndef PCT_EMBEDDING_CALL_H
#define PCT_EMBEDDING_CALL_H
#include <stdbool.h>
#include <stdint.h>

typedef struct pct_embedding_call {
    int dtype;               /* forward: the weight's; backward: the compute dtype (float32 or float64) */
    int device_index;
    bool backward;
    int64_t k, D, V;         /* indices, embedding dim, rows of the weight */
    const int64_t *index;    /* forward: k indices, in range */
    const char *weight;      /* forward */
    int64_t ws0, ws1;
    const char *grad;        /* backward: (k, D) contiguous, of dtype */
    const int64_t *order, *row_start; /* backward: the grouping (k and V + 1 values) */
    int64_t padding_idx;     /* backward: the row left at zero (-1: none after wrapping) */
    bool by_freq;            /* backward: scale_grad_by_freq */
    char *out;
} pct_embedding_call;

#ifndef __CUDACC__
/* Runs call on the backend of device_type (cpu/embedding.c); 0, or -1 with an error. */
int pct_embedding_on_device(const pct_embedding_call *call, int device_type);
#endif
#endif
