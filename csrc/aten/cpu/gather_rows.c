/* gather_rows.c: gather along the last dim in one pass (Note [Fused gather]).
 *
 * Note [Fused gather]: the general index path (index.c over index_common.c) first copies the index into a checked
 * int64 tensor of element offsets, then walks it: two passes and a temporary as large as the index, which made
 * x.gather(1, idx) of a (1024, 1024) index 4x torch's time. A gather along the last dim with an int64 index of
 * rows at least RUN long reads each index value, checks it and copies its element in the same loop, row by row on
 * the threads. A value out of range stops it (the result is discarded) and the general path runs instead, so the
 * error, and which value it names, stay the general path's. */
#include "index_internal.h"
#include "../runtime.h"
#include "../shapes_only.h"
#include <stdatomic.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define RUN 16 /* the shortest index rows taken here: shorter ones spend more on locating rows than on moving */

/* one index row: o[j] = row[idx[j] * step], false at the first value outside [0, lim) */
#define GATHER_ROW(T)                                                                                         \
    for (int64_t j = 0; j < cols; j++) {                                                                      \
        const int64_t v = ip[j * istep];                                                                      \
        if ((uint64_t)v >= (uint64_t)lim) return false;                                                       \
        ((T *)o)[j] = *(const T *)(sp + v * sstep);                                                           \
    }

static bool gather_row(char *o, const char *sp, const int64_t *ip, int64_t cols, int64_t istep, int64_t lim,
                       int64_t sstep, int64_t sz)
{
    switch (sz) {
    case 1: GATHER_ROW(uint8_t) break;
    case 2: GATHER_ROW(uint16_t) break;
    case 4: GATHER_ROW(uint32_t) break;
    default: GATHER_ROW(uint64_t) break;
    }
    return true;
}

/* rows [r0, r1): false when a value was out of range */
static bool gather_rows(pct_tensor *out, const pct_tensor *self, const pct_tensor *index, int64_t r0, int64_t r1)
{
    const int nd = index->ndim;
    const int64_t sz = pct_dtype_itemsize[self->dtype], cols = index->sizes[nd - 1];
    const int64_t lim = self->sizes[nd - 1], sstep = self->strides[nd - 1] * sz, istep = index->strides[nd - 1];
    char *obase = (char *)pct_tensor_data(out);
    const char *sbase = (const char *)pct_tensor_data(self);
    const int64_t *ibase = (const int64_t *)pct_tensor_data(index);
    for (int64_t r = r0; r < r1; r++) {
        int64_t rem = r, soff = 0, ioff = 0;
        for (int d = nd - 2; d >= 0; d--) { /* the row's position in the leading dims */
            const int64_t k = rem % index->sizes[d];
            rem /= index->sizes[d];
            soff += k * self->strides[d];
            ioff += k * index->strides[d];
        }
        if (!gather_row(obase + r * cols * sz, sbase + soff * sz, ibase + ioff, cols, istep, lim, sstep, sz))
            return false;
    }
    return true;
}

int pct_gather_last_dim(pct_tensor *out, const pct_tensor *self, const pct_tensor *index)
{
    const int nd = index->ndim;
    if (nd < 1 || self->ndim != nd || index->dtype != PCT_INT64 || out->dtype != self->dtype ||
        self->device_type != PCT_CPU || index->device_type != PCT_CPU || !pct_tensor_is_contiguous(out) ||
        pct_shapes_only) /* Note [Shapes-only runs]: the general path knows them */
        return -1;
    const int64_t sz = pct_dtype_itemsize[self->dtype], cols = index->sizes[nd - 1];
    if ((sz != 1 && sz != 2 && sz != 4 && sz != 8) || cols < RUN) return -1;
    const int64_t rows = index->numel / cols;
    atomic_bool ok = true;
#ifdef _OPENMP
    if (index->numel >= PCT_PARALLEL_GRAIN && rows > 1 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
        PCT_NOGIL_BEGIN
        #pragma omp parallel
        {
            const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
            const int64_t per = (rows + nth - 1) / nth, b = tid * per, e = b + per < rows ? b + per : rows;
            if (b < e && !gather_rows(out, self, index, b, e)) atomic_store(&ok, false);
        }
        PCT_NOGIL_END
        return atomic_load(&ok) ? 0 : 1;
    }
#endif
    return gather_rows(out, self, index, 0, rows) ? 0 : 1;
}
