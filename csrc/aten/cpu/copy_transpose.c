/* copy_transpose.c: same-dtype copies whose source is a transpose of the destination's layout, in tiles.
 *
 * Note [Tiled transposes]: x.t().contiguous() (and any copy whose destination runs along a dim in which the source
 * jumps, while the source runs along the other) reads one element per cache line when walked in the destination's
 * order: a (1024, 1024) float32 transpose touched 1024 lines per destination row, more than the first-level cache
 * holds, and took 5.7x torch's time. Walked in tiles of TILE_I destination rows by TILE_J elements, each source line
 * is read whole by one tile and each destination line is finished by neighbouring tiles. The tiles are small because
 * both strides are often powers of two: every row of a tile then falls into the same cache set, and 32 rows of one
 * set (32 x 32 tiles: 3x torch's time); 16 x 8 measured best of 4 to 64 by 4 to 32. The values
 * are moved, not converted: the same bytes as the element-by-element loop. Only 2-d plans (after the iterator
 * coalesced the dims) are tiled.
 */
#include "../iter.h"
#include "../runtime.h"
#include "../shapes_only.h"
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TILE_I 16  /* destination rows of a tile: the source's contiguous direction */
#define TILE_J 8  /* destination elements of a tile row: the source's strided direction */

/* one tile: rows [i0, i1) of the destination's outer dim, elements [j0, j1) of its inner one */
#define TILE_COPY(T)                                                                                          \
    for (int64_t i = i0; i < i1; i++) {                                                                       \
        T *restrict o = (T *)(dst + i * os0);                                                                 \
        const char *in = src + i * is0;                                                                       \
        for (int64_t j = j0; j < j1; j++) o[j] = *(const T *)(in + j * is1);                                  \
    }

static void copy_tiles(char *dst, const char *src, int64_t rows, int64_t cols, int64_t os0, int64_t is0, int64_t is1,
                       int64_t sz, int64_t t0, int64_t t1)
{
    const int64_t col_tiles = (cols + TILE_J - 1) / TILE_J;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t i0 = t / col_tiles * TILE_I, j0 = t % col_tiles * TILE_J;
        const int64_t i1 = i0 + TILE_I < rows ? i0 + TILE_I : rows, j1 = j0 + TILE_J < cols ? j0 + TILE_J : cols;
        switch (sz) {
        case 1: TILE_COPY(uint8_t) break;
        case 2: TILE_COPY(uint16_t) break;
        case 4: TILE_COPY(uint32_t) break;
        default: TILE_COPY(uint64_t) break;
        }
    }
}

bool pct_copy_transposed(const pct_iter *it, int64_t sz)
{
    const int nd = it->ndim;
    if (nd != 2 || it->ntensors != 2 || (sz != 1 && sz != 2 && sz != 4 && sz != 8)) return false;
    /* the destination runs along dim 1; the source runs along dim 0 and jumps along dim 1 */
    if (it->strides[1][0] != sz || it->strides[0][1] != sz || it->strides[1][1] == sz) return false;
    const int64_t rows = it->shape[0], cols = it->shape[1];
    if (rows < TILE_I || cols < TILE_J) return false;
    if (pct_shapes_only) return true; /* Note [Shapes-only runs] */
    const int64_t os0 = it->strides[0][0], is0 = it->strides[0][1], is1 = it->strides[1][1];
    const int64_t tiles = (rows + TILE_I - 1) / TILE_I * ((cols + TILE_J - 1) / TILE_J);
#ifdef _OPENMP
    if (it->numel >= PCT_PARALLEL_GRAIN && omp_get_max_threads() > 1 && !omp_in_parallel()) {
        PCT_NOGIL_BEGIN
        #pragma omp parallel
        {
            const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
            const int64_t per = (tiles + nth - 1) / nth, b = tid * per, e = b + per < tiles ? b + per : tiles;
            if (b < e) copy_tiles(it->data[0], it->data[1], rows, cols, os0, is0, is1, sz, b, e);
        }
        PCT_NOGIL_END
        return true;
    }
#endif
    copy_tiles(it->data[0], it->data[1], rows, cols, os0, is0, is1, sz, 0, tiles);
    return true;
}
