/* conv.h: the convolution plan and tasks shared by the convolution files of the CPU backend
 * (internal): conv.c (checks, dispatch, the ops), conv_engine.c (im2col + GEMM), conv_gemm.c
 * (whole-batch float32 products), conv_direct.c (direct float32 AVX-512 kernels), conv_winograd.c
 * (3x3 float32 forwards by F(2x2, 3x3)) and conv_depthwise.c (direct loops for depthwise
 * convolutions).
 *
 * A plan describes one convolution in the terms of Note [Convolution geometry] (im2col.h):
 * a big tensor [N, G*cb, big volume], a small tensor [N, G*cs, small volume] and a weight
 * [G*cs, cb, kvol], all contiguous, of one compute dtype. The three primitives are
 *   fwd     small  = conv(big, weight) (+ bias over small channels)
 *   data    big    = conv^T(small, weight) (+ bias over big channels)
 *   wgrad   weight = sum over the batch of small x im2col(big)^T
 * An ordinary convolution is fwd; its input gradient is data, its weight gradient wgrad.
 * A transposed convolution is data; its input gradient is fwd, its weight gradient wgrad
 * with the roles of the tensors swapped (big = grad_output, small = input). */
#ifndef PCT_CONV_H
#define PCT_CONV_H
#include "im2col.h"
#include "../tensor.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#define PCT_OMP(x) _Pragma(#x) /* an OpenMP pragma, or nothing in a build without OpenMP */
#else
#define PCT_OMP(x)
#endif

typedef struct pct_conv_plan {
    int dtype;                 /* compute dtype: float16 runs as float32, and so does bfloat16 except on the
                                  bfloat16 GEMM (Note [bfloat16 convolution] in conv_engine.c) */
    int acc_dtype;             /* dtype of sums over calls (wgrad, data columns): float32 for bfloat16 */
    int64_t N, G;              /* batch, groups */
    int64_t cb, cs;            /* big / small channels per group */
    pct_im2col_geom geo;       /* geo.channels == cb */
    int64_t bvol, svol, kvol;  /* spatial volumes */
    int64_t K;                 /* cb * kvol: the reduction length of fwd */
    bool direct;               /* 1x1 kernel, stride 1, no padding: im2col(big) is big itself */
    bool depthwise;            /* cb == 1, several groups, kvol <= PCT_DW_MAX_KVOL, float32/64 */
    bool fast32;               /* pct_conv_sgemm_available() and float32 */
} pct_conv_plan;

/* One call of the engines: which primitives (PCT_CONV_*) on which contiguous buffers. */
enum { PCT_CONV_FWD = 1, PCT_CONV_DATA = 2, PCT_CONV_WGRAD = 4 };

typedef struct pct_conv_task {
    const pct_conv_plan *p;
    int what;                    /* PCT_CONV_* bits */
    const char *big;             /* im2col source of fwd and wgrad */
    const char *small_in;        /* source of data, gradient of wgrad */
    const char *w;               /* weight of fwd and data */
    const char *bias_small;      /* fwd bias (per small channel) or NULL */
    const char *bias_big;        /* data bias (per big channel) or NULL */
    char *small_out;             /* fwd result */
    char *big_out;               /* data result */
} pct_conv_task;

/* below this many multiply-adds per call, threads cost more than they save */
#define PCT_CONV_PARALLEL_MIN ((double)(1 << 17))

/* Scratch memory of Note [Convolution scratch cache] (conv_engine.c): get returns NULL when
 * out of memory; put takes the block back (NULL is ignored), `bytes` as asked for. */
void *pct_conv_scratch_get(size_t bytes);
void pct_conv_scratch_put(void *p, size_t bytes);
/* OpenMP threads a call may use (1 inside a parallel region). */
int pct_conv_threads(void);
/* dst[i] += srcs[s * count + i] for s < nsrc, in that order (dtype dt; conv_engine.c). */
void pct_conv_sum_into(int dt, char *dst, const char *srcs, int64_t count, int nsrc);
/* The im2col + GEMM engine (conv_engine.c): any task, any dtype but bool and float16 (and
 * bfloat16 only where the plan says so). gw: the weight gradient (written whole, in the plan's
 * acc_dtype) when the task has PCT_CONV_WGRAD. 0, or -1 when out of memory. GIL-free. */
int pct_conv_engine_run(const pct_conv_task *t, char *gw);
/* The direct float32 kernels (conv_direct.c, Note [Direct convolution]): fwd and/or wgrad of
 * a plan pct_conv_direct_usable accepts (0, or -1 when out of memory); data of a stride-1
 * plan through the flipped weight (1 when done, 0 when it does not apply, -1 out of memory). */
int pct_conv_direct_task(const pct_conv_task *t, float *gw);
int pct_conv_direct_data(const pct_conv_task *t);
/* The data primitive of a stride-1 plan p is the fwd of plan q over the padded small tensor with the
 * flipped, transposed weight w'[c][o][k] = w[o][c][kvol - 1 - k]: fills q and says whether it is. */
bool pct_conv_data_as_fwd(const pct_conv_plan *p, pct_conv_plan *q);

/* kernels with more taps than this take the GEMM path */
#define PCT_DW_MAX_KVOL 64

/* Depthwise primitives (conv_depthwise.c): GIL-free, threads over channels. bias may be
 * NULL. Each writes its whole result (no accumulation into the caller's memory). */
void pct_dw_fwd(const pct_conv_plan *p, const void *big, const void *w, const void *bias, void *small);
void pct_dw_data(const pct_conv_plan *p, const void *small, const void *w, const void *bias, void *big);
void pct_dw_wgrad(const pct_conv_plan *p, const void *big, const void *small, void *gw);

/* float32 on an AVX-512 CPU (and PYCTORCH_NO_AVX512 unset): the products of the convolution
 * run on the packed float32 GEMM (gemm_f32.h) and the direct kernels may run. */
bool pct_conv_sgemm_available(void);
/* Note [Convolution GEMM] (conv_gemm.c): a task that is fwd alone, or data alone of a 1x1
 * plan (p->direct), as one product per group over the whole batch, using up to nt threads.
 * Needs p->K, p->cs, p->cb and N * svol > 0. 0; 1 when the float32 GEMM is not available
 * (nothing done); -1 when out of memory. GIL-free. */
int pct_conv_gemm_batch(const pct_conv_task *t, int nt);
/* Note [Tap table] and Note [Live taps] (conv_taps.c). tap_table: [kvol][svol] input offsets within
 * a channel plane, -1 on padding (NULL when out of memory; usable when tap_table_fits). live_rows:
 * the im2col rows (c * kvol + t) whose tap reads something, *count of them; NULL (and *count = K)
 * when all do or none does, or out of memory. Both are scratch memory, given back by the _free. */
bool pct_conv_tap_table_fits(const pct_conv_plan *p);
int32_t *pct_conv_tap_table(const pct_conv_plan *p);
void pct_conv_tap_table_free(const pct_conv_plan *p, int32_t *tab);
int32_t *pct_conv_live_rows(const pct_conv_plan *p, const int32_t *taps, int64_t *count);
void pct_conv_live_rows_free(int32_t *map, int64_t count);
/* Note [Winograd convolution] (conv_winograd.c): the fwd of a float32 3x3 stride-1 plan on small images by
 * F(2x2, 3x3). usable: where it applies (and pays); fwd: 0, 1 when not built for this CPU (nothing done), or -1
 * when out of memory. GIL-free, up to nt threads. */
bool pct_conv_winograd_usable(const pct_conv_plan *p);
int pct_conv_winograd_fwd(const pct_conv_task *t, int nt);
/* data of a stride-1 plan as the Winograd fwd of pct_conv_data_as_fwd's plan (the weight flipped and
 * transposed inside the weight transform): 0 when it ran, 1 when it does not apply, -1 out of memory. */
int pct_conv_winograd_data(const pct_conv_task *t, int nt);
/* Note [Batch columns] (conv_batch_columns.c): float32/float64 plans of a few positions per
 * sample run every primitive as one product over the batch. run: 0, or -1 when out of memory. */
bool pct_conv_batch_columns_usable(const pct_conv_plan *p);
int pct_conv_batch_columns_run(const pct_conv_task *t, char *gw_out);

/* The pieces of the direct convolution of Note [Direct convolution] (conv_direct.c), fwd:
 * weights packed once (pack_w), tap offsets once (offsets: K entries), then per sample and
 * group the input padded into an xsize-float buffer (pad) and the tiles [t0, t1) of
 * [0, ntiles) computed into out [cs, svol] (run; GIL-free, threads may split the tiles). */
bool pct_conv_direct_usable(const pct_conv_plan *p);
int64_t pct_conv_direct_wpack_size(const pct_conv_plan *p);
void pct_conv_direct_pack_w(const pct_conv_plan *p, const float *w, float *dst);
void pct_conv_direct_offsets(const pct_conv_plan *p, int64_t *off);
int64_t pct_conv_direct_xsize(const pct_conv_plan *p);
void pct_conv_direct_pad(const pct_conv_plan *p, const float *big, float *xp);
int64_t pct_conv_direct_ntiles(const pct_conv_plan *p);
void pct_conv_direct_run(const pct_conv_plan *p, const float *xp, const float *wpack, const int64_t *off,
                         const float *bias, float *out, int64_t t0, int64_t t1);
/* wgrad the same way: the small tensor of a sample and group moved into a gsize-float buffer
 * (transpose), then tiles [t0, t1) of [0, wtiles) added into gw [cs, K] (wgrad). */
int64_t pct_conv_direct_gsize(const pct_conv_plan *p);
int64_t pct_conv_direct_wtiles(const pct_conv_plan *p);
void pct_conv_direct_transpose(const pct_conv_plan *p, const float *small, float *got);
void pct_conv_direct_wgrad(const pct_conv_plan *p, const float *xp, const float *got, const int64_t *off,
                           float *gw, int64_t t0, int64_t t1);

/* The primitives on a device other than the CPU (conv_device.c, Note [Device convolution]): the task's buffers as
 * contiguous tensors of the plan's dtype on that device (NULL where the task has no use for them); gw is written whole
 * when what has PCT_CONV_WGRAD. 0, or -1 with an error. */
typedef struct pct_conv_tensors {
    int what;
    pct_tensor *big, *small_in, *w, *bias_small, *bias_big, *small_out, *big_out, *gw;
} pct_conv_tensors;
int pct_conv_device_run(const pct_conv_plan *p, const pct_conv_tensors *t);
/* gb[c] = the sum of go[n, c, :] over the N samples and vol positions (go contiguous on the device); 0, or -1. */
int pct_conv_device_bias_grad(pct_tensor *go, int64_t N, int64_t C, int64_t vol, pct_tensor *gb);

#endif
