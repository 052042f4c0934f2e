/* embedding_bag.c: torch's _embedding_bag forward (F.embedding_bag / nn.EmbeddingBag).
 *
 * Note [Embedding bags]: indices (1-d) are cut into bags by offsets: bag b holds positions
 * [offsets[b], offsets[b + 1]), the last one up to the end of indices (also with
 * include_last_offset, where the last offset only says how many bags there are, as torch's CPU kernel). mode 0 sums the weight rows of a bag (each times its
 * per_sample_weight), 1 averages them, 2 takes their column-wise maximum (the first maximum; its row
 * goes to max_indices); rows equal to padding_idx are skipped (they count in no mean) and an
 * empty bag gives zeros. Returns (output, offset2bag, bag_size, max_indices) as torch does;
 * offset2bag (the bag of every position) is always filled, since the gradients
 * (pyctorch/autograd/_nn_extra_formulas.py) gather by it; max_indices is -1 for a column of a
 * bag with no row. float16 / bfloat16 weights are computed in float32 and rounded once. */
#include "spatial.h"
#include "norm_rows.h"
#include <stdio.h>
#include <stdlib.h>

#define EB_KERNEL(E, T)                                                                          \
    static void bag_##E(const T *w, int64_t dim, const int64_t *ind, const int64_t *start,      \
                        const int64_t *end, int64_t nbags, int mode, const T *psw, int64_t pad, T *out, \
                        int64_t *bag_size, int64_t *maxi)                                        \
    {                                                                                            \
        _Pragma("omp parallel for if (nbags > 1 && (end[nbags - 1] - start[0]) * dim > PCT_SPATIAL_GRAIN)") \
        for (int64_t b = 0; b < nbags; b++) {                                                    \
            T *o = out + b * dim;                                                                \
            int64_t *mi = maxi ? maxi + b * dim : NULL;                                          \
            int64_t count = 0;                                                                   \
            for (int64_t d = 0; d < dim; d++) o[d] = 0;                                          \
            if (mi) for (int64_t d = 0; d < dim; d++) mi[d] = -1;                                \
            for (int64_t p = start[b]; p < end[b]; p++) {                                        \
                int64_t r = ind[p];                                                              \
                if (r == pad) continue;                                                          \
                const T *row = w + r * dim;                                                      \
                if (mode == 2) {                                                                 \
                    for (int64_t d = 0; d < dim; d++)                                            \
                        if (count == 0 || row[d] > o[d]) { o[d] = row[d]; mi[d] = r; }           \
                } else if (psw) {                                                                \
                    T s = psw[p];                                                                \
                    for (int64_t d = 0; d < dim; d++) o[d] += row[d] * s;                        \
                } else {                                                                         \
                    for (int64_t d = 0; d < dim; d++) o[d] += row[d];                            \
                }                                                                                \
                count++;                                                                         \
            }                                                                                    \
            if (mode == 1 && count > 0)                                                          \
                for (int64_t d = 0; d < dim; d++) o[d] /= (T)count;                              \
            bag_size[b] = count;                                                                 \
        }                                                                                        \
    }
EB_KERNEL(FLOAT32, float)
EB_KERNEL(FLOAT64, double)

/* A contiguous int64 copy of an index tensor (a new reference). */
static pct_tensor *as_long(pct_tensor *t) { return t->dtype == PCT_INT64 ? pct_contiguous(t) : pct_to_dtype(t, PCT_INT64, false); }

pct_object *pct_cpu_embedding_bag(pct_call *c)
{
    PCT_ARGS(embedding_bag);
    pct_tensor *weight = arg.weight, *indices = arg.indices, *offsets = arg.offsets;
    pct_tensor *psw = (arg.per_sample_weights == NULL) ? NULL : arg.per_sample_weights;
    int mode = (int)arg.mode;
    bool last = arg.include_last_offset;
    int64_t pad = arg.padding_idx;
    pct_tensor *ic = NULL, *oc = NULL, *wc = NULL, *pc = NULL, *res[4] = {NULL, NULL, NULL, NULL};
    int64_t *start = NULL;
    PCT_CHECK(indices->dtype == PCT_INT64 || indices->dtype == PCT_INT32, PCT_ERR_RUNTIME,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
              "torch.%sTensor instead (while checking arguments for embedding_bag)", pct_dtype_cpp_name[indices->dtype]);
    PCT_CHECK(offsets->dtype == PCT_INT64 || offsets->dtype == PCT_INT32, PCT_ERR_RUNTIME,
              "Expected tensor for argument #1 'offsets' to have one of the following scalar types: Long, Int; but got "
              "torch.%sTensor instead (while checking arguments for embedding_bag)", pct_dtype_cpp_name[offsets->dtype]);
    PCT_CHECK(indices->ndim == 1, PCT_ERR_RUNTIME, "input has to be a 1D or 2D Tensor, but got Tensor of dimension %d",
              indices->ndim);
    PCT_CHECK(offsets->ndim == 1, PCT_ERR_RUNTIME, "offsets has to be a 1D Tensor, but got Tensor of dimension %d",
              offsets->ndim);
    PCT_CHECK(weight->ndim == 2, PCT_ERR_RUNTIME, "weight has to be a 2D Tensor, but got Tensor of dimension %d",
              weight->ndim);
    PCT_CHECK(pct_dtype_is_floating(weight->dtype), PCT_ERR_NOT_IMPLEMENTED,
              "\"embedding_bag_cpu\" not implemented for '%s'", pct_dtype_cpp_name[weight->dtype]);
    PCT_CHECK(mode >= 0 && mode <= 2, PCT_ERR_RUNTIME, "mode has to be one of sum, mean or max");
    if (psw) {
        PCT_CHECK(psw->dtype == weight->dtype, PCT_ERR_RUNTIME, "Expected tensor for argument #1 'weight' to have the "
                  "same type as tensor for argument #1 'per_sample_weights'; but type torch.%sTensor does not equal torch.%sTensor (while "
                  "checking arguments for embedding_bag)", pct_dtype_cpp_name[weight->dtype],
                  pct_dtype_cpp_name[psw->dtype]);
        PCT_CHECK(mode == 0, PCT_ERR_RUNTIME, "embedding_bag: per_sample_weights only supported with mode='sum'");
        PCT_CHECK(psw->ndim == 1 && psw->numel == indices->numel, PCT_ERR_RUNTIME,
                  "Expected per_sample_weights.value().numel() == indices.numel() to be true, but got false.  (Could "
                  "this error message be improved?  If so, please report an enhancement request to PyTorch.)");
    }
    int64_t n = indices->numel, nw = weight->sizes[0], dim = weight->sizes[1], noff = offsets->sizes[0];
    int64_t nbags = last ? (noff > 0 ? noff - 1 : 0) : noff;
    PCT_TRY(ic = as_long(indices));
    PCT_TRY(oc = as_long(offsets));
    const int64_t *ind = (const int64_t *)pct_tensor_data(ic), *off = (const int64_t *)pct_tensor_data(oc);
    if (noff > 0) {
        PCT_CHECK(off[0] == 0, PCT_ERR_RUNTIME, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                  "has to start from position 0. However, got %lld", (long long)off[0]);
        PCT_CHECK(off[noff - 1] <= n, PCT_ERR_RUNTIME, "offsets[-1] can not be greater than input's length %lld but "
                  "got offsets[-1] of %lld", (long long)n, (long long)off[noff - 1]);
        for (int64_t b = 1; b < noff; b++)
            PCT_CHECK(off[b] >= off[b - 1], PCT_ERR_RUNTIME, "embedding_bag: offsets must be non-decreasing, but "
                      "offsets[%lld] = %lld is smaller than offsets[%lld] = %lld", (long long)b, (long long)off[b],
                      (long long)(b - 1), (long long)off[b - 1]);
    }
    for (int64_t p = 0; p < n; p++) {
        if (ind[p] >= 0 && ind[p] < nw) continue;
        if (mode == 2)
            PCT_FAIL(PCT_ERR_RUNTIME, "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                     "%lld", (long long)ind[p]);
        PCT_FAIL(PCT_ERR_RUNTIME, "Index %lld of input takes value %lld which is not in the valid range [0, %lld)",
                 (long long)p, (long long)ind[p], (long long)nw);
    }
    /* outputs: (nbags, dim), offset2bag (n), bag_size (nbags), max_indices ((nbags, dim) for max, else (nbags)) */
    {
        int cd = pct_spatial_compute_dtype(weight->dtype), idt = indices->dtype;
        int64_t osz[2] = {nbags, dim};
        PCT_TRY(res[0] = pct_tensor_empty(2, osz, cd, PCT_CPU, -1));
        PCT_TRY(res[1] = pct_tensor_empty(1, &n, PCT_INT64, PCT_CPU, -1));
        PCT_TRY(res[2] = pct_tensor_empty(1, &nbags, PCT_INT64, PCT_CPU, -1));
        if (mode == 2) PCT_TRY(res[3] = pct_tensor_empty(2, osz, PCT_INT64, PCT_CPU, -1));
        else PCT_TRY(res[3] = pct_tensor_zeros(1, &nbags, PCT_INT64));
        start = malloc(sizeof(int64_t) * (size_t)(2 * nbags + 1));
        if (!start) { pct_error_nomem(); goto fail; }
        int64_t *end = start + nbags, *o2b = (int64_t *)pct_tensor_data(res[1]);
        for (int64_t b = 0; b < nbags; b++) {
            start[b] = off[b];
            end[b] = b + 1 < nbags ? off[b + 1] : n; /* torch: the last bag runs to the end */
            for (int64_t p = start[b]; p < end[b]; p++) o2b[p] = b;
        }
        if (!nbags) memset(o2b, 0, sizeof(int64_t) * (size_t)n);
        if (nbags && dim) {
            PCT_TRY(wc = pct_spatial_input(weight));
            if (psw) PCT_TRY(pc = pct_spatial_input(psw));
            int64_t *mi = mode == 2 ? (int64_t *)pct_tensor_data(res[3]) : NULL;
            if (cd == PCT_FLOAT32)
                bag_FLOAT32((const float *)pct_tensor_data(wc), dim, ind, start, end, nbags, mode,
                            pc ? (const float *)pct_tensor_data(pc) : NULL, pad, (float *)pct_tensor_data(res[0]),
                            (int64_t *)pct_tensor_data(res[2]), mi);
            else
                bag_FLOAT64((const double *)pct_tensor_data(wc), dim, ind, start, end, nbags, mode,
                            pc ? (const double *)pct_tensor_data(pc) : NULL, pad, (double *)pct_tensor_data(res[0]),
                            (int64_t *)pct_tensor_data(res[2]), mi);
        } else {
            int64_t *bs = (int64_t *)pct_tensor_data(res[2]);
            for (int64_t b = 0; b < nbags; b++) {
                int64_t k = 0;
                for (int64_t p = start[b]; p < end[b]; p++) k += ind[p] != pad;
                bs[b] = k;
            }
            if (mode == 2 && res[3]->numel) {
                int64_t *mi = (int64_t *)pct_tensor_data(res[3]);
                for (int64_t k = 0; k < res[3]->numel; k++) mi[k] = -1;
            }
            memset(pct_tensor_data(res[0]), 0, (size_t)res[0]->numel * (size_t)pct_dtype_itemsize[cd]);
        }
        free(start);
        start = NULL;
        pct_tensor *o = (pct_tensor *)pct_spatial_finish(res[0], weight->dtype);
        res[0] = o;
        PCT_TRY(o);
        for (int k = 1; k < 4 && idt != PCT_INT64; k++) {
            pct_tensor *t = pct_to_dtype(res[k], idt, false);
            PCT_DECREF(res[k]);
            res[k] = t;
            PCT_TRY(t);
        }
    }
    PCT_XDECREF(ic);
    PCT_XDECREF(oc);
    PCT_XDECREF(wc);
    PCT_XDECREF(pc);
    return pct_norm_tuple_steal(4, res);
fail:
    free(start);
    PCT_XDECREF(ic);
    PCT_XDECREF(oc);
    PCT_XDECREF(wc);
    PCT_XDECREF(pc);
    for (int k = 0; k < 4; k++) PCT_XDECREF(res[k]);
    return NULL;
}
