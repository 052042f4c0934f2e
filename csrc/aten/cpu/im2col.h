/* im2col.h: the lowering shared by convolution (conv.c) and unfold/fold (fold.c).
 *
 * Note [Convolution geometry]
 * Every convolution, transposed or not, is described from the side of the ordinary
 * convolution that relates two tensors: the "big" tensor (the input of an ordinary
 * convolution, the output of a transposed one) and the "small" tensor (the output of an
 * ordinary convolution, the input of a transposed one). Spatial dims are always three
 * (depth, height, width); 1-d and 2-d problems use size 1, kernel 1, stride 1, no padding
 * for the leading dims. Small position (od, oh, ow) and kernel offset (kd, kh, kw) read big
 * position (od*sd - pd + kd*dd, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw), or zero outside.
 *
 * The column matrix of `channels` big channels has channels * kvol rows (row c*kvol + k for
 * kernel offset k = (kd*KH + kh)*KW + kw) and one column per small position. Both routines
 * work on a range of channels (the unit of parallelism: threads never share a channel) and
 * a range [j0, j1) of flattened small positions (the unit of cache blocking: column j - j0
 * of `col` is position j, rows are `ld` elements apart). The big tensor is contiguous,
 * channels * big volume elements. Neither needs the GIL nor raises. */
#ifndef PCT_IM2COL_H
#define PCT_IM2COL_H
#include "simd_levels.h"
#include <stdint.h>
#include <stdbool.h>

typedef struct pct_im2col_geom {
    int64_t channels;             /* big channels in one call's tensor */
    int64_t big[3], small[3];     /* spatial sizes (depth, height, width) */
    int64_t kernel[3], stride[3], pad[3], dil[3];
} pct_im2col_geom;

/* The small positions o in [0, n_out) whose big position o*s + off lies in [0, n_in):
 * [*lo, *hi) (empty when *lo == *hi). s > 0. */
static inline void pct_conv_valid_range(int64_t n_in, int64_t n_out, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = n_in - off <= 0 ? 0 : (n_in - off + s - 1) / s;
    if (h > n_out) h = n_out;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

static inline int64_t pct_geom_kvol(const pct_im2col_geom *g) { return g->kernel[0] * g->kernel[1] * g->kernel[2]; }
static inline int64_t pct_geom_bvol(const pct_im2col_geom *g) { return g->big[0] * g->big[1] * g->big[2]; }
static inline int64_t pct_geom_svol(const pct_im2col_geom *g) { return g->small[0] * g->small[1] * g->small[2]; }

/* Copies the columns [j0, j1) of channels [c0, c1) into col (zeros where the window leaves
 * the big tensor). Element size 1, 2, 4 or 8 bytes (a copy: any dtype). */
void pct_im2col(const pct_im2col_geom *g, int itemsize, const void *big, void *col, int64_t ld,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1);

/* Adds the columns [j0, j1) of col into channels [c0, c1) of big (the adjoint of
 * pct_im2col). dtype: a pct dtype with an accumulating loop (pct_col2im_supports). */
void pct_col2im(const pct_im2col_geom *g, int dtype, const void *col, int64_t ld, void *big,
                int64_t c0, int64_t c1, int64_t j0, int64_t j1);
bool pct_col2im_supports(int dtype);

#endif
