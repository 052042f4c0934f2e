/* linalg_svd.c: the singular value decomposition A = U diag(S) Vh, batched over the
 * leading dims (torch.linalg.svd, torch.linalg.svdvals, torch.svd). The matrix norms built on
 * the singular values (2, -2, 'nuc') are composites over svdvals (composite/linalg_norm.c).
 *
 * float32/float64 go to LAPACK's divide-and-conquer gesdd (part of OpenBLAS), as torch's
 * CPU backend does; complex64/complex128 to cgesdd/zgesdd (linalg_spectral_complex.c: real S,
 * complex U and Vh). A build without OpenBLAS uses a one-sided Jacobi SVD in double
 * (Note [Jacobi fallback]). Half and bfloat16 have no kernel, as in torch.
 *
 * Layout: LAPACK is column-major and so are torch's U and Vh (strides (..., 1, rows)).
 * Each matrix is copied into a column-major scratch buffer (gesdd destroys its input) and
 * gesdd writes U and Vh straight into the result tensors. A batch runs in parallel, one
 * LAPACK call per thread (OpenBLAS runs single-threaded inside an OpenMP region); a lone
 * matrix leaves LAPACK its own threads.
 *
 * Ownership: scratch buffers are malloc'ed and freed here; results are new references
 * handed to the caller; inputs are borrowed.
 */
#include "../op.h"
#include "../error.h"
#include "../iter.h"
#include "../out.h"
#include "blas.h"
#include "linalg_spectral_complex.h"
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef PCT_HAVE_OPENBLAS
/* LAPACK's Fortran entry points as OpenBLAS exports them (32-bit integers; the trailing
 * size_t is gfortran's hidden length of the character argument). */
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
#endif

/* What one batch of SVDs computes: matrices of rows x cols (dims d0, d1 of the input),
 * k = min(rows, cols) singular values, U of rows x ucols and Vh of vtrows x cols. */
typedef struct {
    const pct_tensor *A;
    int d0, d1;
    int64_t rows, cols, k, batch;
    char jobz;              /* 'N' values only, 'S' reduced, 'A' full */
    int64_t ucols, vtrows;
    int64_t bshape[PCT_MAX_DIMS], bstride[PCT_MAX_DIMS];
    int nb;
} svd_plan;

/* per-matrix status, kept to report the first failing batch element as torch does */
enum { SVD_OK = 0, SVD_NONFINITE = -1000, SVD_NOMEM = -2000 };

static int64_t batch_offset(const svd_plan *p, int64_t b)
{
    int64_t off = 0;
    for (int i = p->nb - 1; i >= 0; i--) {
        off += (b % p->bshape[i]) * p->bstride[i];
        b /= p->bshape[i];
    }
    return off;
}

#ifndef PCT_HAVE_OPENBLAS
/* ---- Note [Jacobi fallback] ----------------------------------------------------------
 * One-sided Jacobi (Hestenes): rotate column pairs of the tall matrix W (rows >= cols,
 * column-major) until all are orthogonal; then W = U S and the accumulated rotations are V.
 * Accurate to the last bits in double, O(rows cols^2) per sweep; used only without LAPACK.
 * Columns of U for zero singular values (and the extra columns of a full U) are completed
 * by Gram-Schmidt against the unit vectors. */
static void jacobi_rotate(double *w, int64_t rows, int64_t cols, double *v)
{
    for (int sweep = 0; sweep < 80; sweep++) {
        double off = 0.0;
        for (int64_t i = 0; i < cols - 1; i++)
            for (int64_t j = i + 1; j < cols; j++) {
                double *wi = w + i * rows, *wj = w + j * rows;
                double alpha = 0, beta = 0, gamma = 0;
                for (int64_t r = 0; r < rows; r++) {
                    alpha += wi[r] * wi[r];
                    beta += wj[r] * wj[r];
                    gamma += wi[r] * wj[r];
                }
                if (gamma == 0.0 || fabs(gamma) <= 1e-15 * sqrt(alpha * beta)) continue;
                double c = fabs(gamma) / sqrt(alpha * beta);
                if (c > off) off = c;
                double zeta = (beta - alpha) / (2.0 * gamma);
                double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                double cs = 1.0 / sqrt(1.0 + t * t), sn = cs * t;
                for (int64_t r = 0; r < rows; r++) {
                    double x = wi[r], y = wj[r];
                    wi[r] = cs * x - sn * y;
                    wj[r] = sn * x + cs * y;
                }
                if (v)
                    for (int64_t r = 0; r < cols; r++) {
                        double x = v[i * cols + r], y = v[j * cols + r];
                        v[i * cols + r] = cs * x - sn * y;
                        v[j * cols + r] = sn * x + cs * y;
                    }
            }
        if (off <= 1e-15) break;
    }
}

/* Makes column c of q (n x ?, column-major) a unit vector orthogonal to columns [0, c). */
static void complete_column(double *q, int64_t n, int64_t c)
{
    double *x = q + c * n;
    for (int64_t e = 0; e < n; e++) {
        memset(x, 0, sizeof(double) * (size_t)n);
        x[e] = 1.0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t j = 0; j < c; j++) {
                double d = 0;
                for (int64_t r = 0; r < n; r++) d += q[j * n + r] * x[r];
                for (int64_t r = 0; r < n; r++) x[r] -= d * q[j * n + r];
            }
        double nrm = 0;
        for (int64_t r = 0; r < n; r++) nrm += x[r] * x[r];
        if (nrm > 0.25) {
            nrm = sqrt(nrm);
            for (int64_t r = 0; r < n; r++) x[r] /= nrm;
            return;
        }
    }
}

/* The SVD of the tall matrix w (rows >= cols, column-major, destroyed): s (cols values,
 * descending); with uv, q gets U (rows x ucols) and v gets V (cols x cols), column-major.
 * scratch holds 2 cols doubles. -1 when out of memory. */
static int jacobi_svd(double *w, int64_t rows, int64_t cols, double *s, bool uv, int64_t ucols, double *q, double *v,
                       double *scratch)
{
    if (uv) {
        memset(v, 0, sizeof(double) * (size_t)(cols * cols));
        for (int64_t i = 0; i < cols; i++) v[i * cols + i] = 1.0;
    }
    jacobi_rotate(w, rows, cols, uv ? v : NULL);
    for (int64_t j = 0; j < cols; j++) {
        double t = 0;
        for (int64_t r = 0; r < rows; r++) t += w[j * rows + r] * w[j * rows + r];
        scratch[j] = sqrt(t);
    }
    /* order by descending value (selection sort: cols is small where this runs) */
    int64_t *order = (int64_t *)(scratch + cols);
    for (int64_t j = 0; j < cols; j++) order[j] = j;
    for (int64_t a = 0; a < cols; a++) {
        int64_t best = a;
        for (int64_t b = a + 1; b < cols; b++)
            if (scratch[order[b]] > scratch[order[best]]) best = b;
        int64_t t = order[a]; order[a] = order[best]; order[best] = t;
    }
    for (int64_t j = 0; j < cols; j++) s[j] = scratch[order[j]];
    if (!uv) return 0;
    double *vs = malloc(sizeof(double) * (size_t)(cols * cols));
    if (!vs) return -1;
    for (int64_t j = 0; j < cols; j++) {
        memcpy(vs + j * cols, v + order[j] * cols, sizeof(double) * (size_t)cols);
        const double *src = w + order[j] * rows;
        double *dst = q + j * rows;
        if (s[j] > 0) {
            for (int64_t r = 0; r < rows; r++) dst[r] = src[r] / s[j];
        }
    }
    memcpy(v, vs, sizeof(double) * (size_t)(cols * cols));
    free(vs);
    for (int64_t j = 0; j < ucols; j++)
        if (j >= cols || !(s[j] > 0)) complete_column(q, rows, j);
    return 0;
}
#endif /* !PCT_HAVE_OPENBLAS */

/* ---- one matrix --------------------------------------------------------------------- */

/* Per-thread scratch: the column-major copy of the input and LAPACK's workspaces. */
typedef struct {
    void *a, *work;
    int *iwork;
    int lwork;
} svd_scratch;

/* Copies matrix b into column-major x (rows x cols). Returns what torch makes of its values:
 * 0 all finite, 1 an infinity (then every result is NaN), SVD_NONFINITE a NaN (an error). */
#define SVD_LOAD(T)                                                                                      \
    static int load_##T(const svd_plan *p, int64_t b, T *x)                                              \
    {                                                                                                    \
        const T *src = (const T *)pct_tensor_data(p->A) + batch_offset(p, b);                            \
        const int64_t rs = p->A->strides[p->d0], cs = p->A->strides[p->d1];                              \
        bool finite = true;                                                                              \
        for (int64_t j = 0; j < p->cols; j++)                                                            \
            for (int64_t i = 0; i < p->rows; i++) {                                                      \
                T v = src[i * rs + j * cs];                                                              \
                x[j * p->rows + i] = v;                                                                  \
                finite &= isfinite(v) != 0;                                                              \
            }                                                                                            \
        if (finite) return 0;                                                                            \
        for (int64_t i = 0; i < p->rows * p->cols; i++)                                                  \
            if (isnan(x[i])) return SVD_NONFINITE;                                                       \
        return 1;                                                                                        \
    }
SVD_LOAD(float)
SVD_LOAD(double)

#ifdef PCT_HAVE_OPENBLAS
#define SVD_LAPACK(T, GESDD)                                                                             \
    static int lwork_##T(const svd_plan *p)                                                              \
    {                                                                                                    \
        int m = (int)p->rows, n = (int)p->cols, ldu = (int)p->rows, ldvt = (int)(p->vtrows > 0 ? p->vtrows : 1); \
        int lwork = -1, info = 0, iw = 0;                                                                \
        T q = 0, dummy = 0;                                                                              \
        GESDD(&p->jobz, &m, &n, &dummy, &m, &dummy, &dummy, &ldu, &dummy, &ldvt, &q, &lwork, &iw, &info, 1); \
        return info == 0 ? (int)q + 1 : -1;                                                              \
    }                                                                                                    \
    static int one_##T(const svd_plan *p, svd_scratch *sc, T *s, T *u, T *vt)                             \
    {                                                                                                    \
        int m = (int)p->rows, n = (int)p->cols, ldu = (int)p->rows, ldvt = (int)(p->vtrows > 0 ? p->vtrows : 1); \
        int info = 0;                                                                                    \
        T dummy = 0;                                                                                     \
        GESDD(&p->jobz, &m, &n, (T *)sc->a, &m, s, u ? u : &dummy, &ldu, vt ? vt : &dummy, &ldvt,        \
              (T *)sc->work, &sc->lwork, sc->iwork, &info, 1);                                           \
        return info;                                                                                     \
    }
SVD_LAPACK(float, sgesdd_)
SVD_LAPACK(double, dgesdd_)
#else
#define SVD_LAPACK(T)                                                                                    \
    static int lwork_##T(const svd_plan *p)                                                              \
    {                                                                                                    \
        int64_t r = p->rows > p->cols ? p->rows : p->cols;                                               \
        /* transposed copy, V, U (full), values, ordering */                                            \
        return (int)(r * p->cols + 2 * r * r + 4 * r + 4);                                               \
    }                                                                                                    \
    static int one_##T(const svd_plan *p, svd_scratch *sc, T *s, T *u, T *vt)                             \
    {                                                                                                    \
        const bool tall = p->rows >= p->cols, uv = p->jobz != 'N';                                       \
        const int64_t R = tall ? p->rows : p->cols, C = tall ? p->cols : p->rows;                        \
        /* the tall matrix w: A itself, or A^T for a wide A (then A = V' S U'^T) */                     \
        double *w = sc->work, *v = w + R * C, *q = v + R * R, *sv = q + R * R, *scr = sv + R;            \
        const T *a = sc->a;                                                                              \
        for (int64_t j = 0; j < C; j++)                                                                  \
            for (int64_t i = 0; i < R; i++)                                                              \
                w[j * R + i] = tall ? a[j * p->rows + i] : a[i * p->rows + j];                           \
        /* U of the tall problem: ucols columns when A is tall, vtrows when it is wide */              \
        const int64_t qcols = tall ? p->ucols : p->vtrows;                                               \
        if (jacobi_svd(w, R, C, sv, uv, qcols, q, v, scr) < 0) return SVD_NOMEM;                        \
        for (int64_t j = 0; j < C; j++) s[j] = (T)sv[j];                                                 \
        if (!uv) return 0;                                                                               \
        /* tall: U = q (rows x ucols), Vh = V^T;  wide: U = V (rows x rows), Vh = q^T */               \
        const int64_t ur = p->rows, vr = p->vtrows;                                                      \
        for (int64_t j = 0; j < p->ucols; j++)                                                           \
            for (int64_t i = 0; i < ur; i++)                                                             \
                u[j * ur + i] = (T)(tall ? q[j * R + i] : v[j * C + i]);                                 \
        for (int64_t j = 0; j < p->cols; j++)                                                            \
            for (int64_t i = 0; i < vr; i++)                                                             \
                vt[j * vr + i] = (T)(tall ? v[i * C + j] : q[i * R + j]);                                \
        return 0;                                                                                        \
    }
SVD_LAPACK(float)
SVD_LAPACK(double)
#endif

/* ---- a batch ------------------------------------------------------------------------ */

/* Threads for a batch: one matrix at a time per thread, LAPACK itself single-threaded.
 * OpenBLAS runs single-threaded inside any active OpenMP region, so a lone matrix still gets
 * a region of two threads, one of them idle: OpenBLAS's own threading of gesdd's many small
 * BLAS-2 calls is ~10x slower than one thread on this machine (a 256 x 256 SVD: 5 ms on one
 * thread, 60 ms on two; benchmarks/bench_linalg.py). */
static int svd_team(int64_t batch)
{
#ifdef _OPENMP
    const int max = omp_get_max_threads();
    if (max <= 1) return 1;
    return batch > 1 ? (batch < max ? (int)batch : max) : 2;
#else
    (void)batch;
    return 1;
#endif
}

/* Runs every matrix of the plan; s, u, vt are the results' data (u, vt NULL for 'N'), each
 * matrix contiguous in its slot. info gets one status per matrix. Without the GIL. */
#define SVD_BATCH(T)                                                                                     \
    static void batch_##T(const svd_plan *p, int lwork, T *s, T *u, T *vt, int *info)                    \
    {                                                                                                    \
        const int64_t usz = p->rows * p->ucols, vsz = p->vtrows * p->cols;                               \
        _Pragma("omp parallel num_threads(svd_team(p->batch))")                                          \
        {                                                                                                \
            svd_scratch sc = {0};                                                                        \
            sc.lwork = lwork;                                                                            \
            sc.a = malloc(sizeof(T) * (size_t)(p->rows * p->cols));                                      \
            sc.work = malloc(sizeof(double) * (size_t)lwork);                                            \
            sc.iwork = malloc(sizeof(int) * (size_t)(8 * p->k + 1));                                     \
            const bool ok = sc.a && sc.work && sc.iwork;                                                 \
            _Pragma("omp for schedule(dynamic, 1)")                                                      \
            for (int64_t b = 0; b < p->batch; b++) {                                                     \
                if (!ok) { info[b] = SVD_NOMEM; continue; }                                              \
                T *sb = s + b * p->k, *ub = u ? u + b * usz : NULL, *vb = vt ? vt + b * vsz : NULL;          \
                const int status = load_##T(p, b, (T *)sc.a);                                            \
                if (status != 0) { /* a NaN is an error; an infinity makes every result NaN */         \
                    info[b] = status == 1 ? SVD_OK : status;                                             \
                    for (int64_t j = 0; j < p->k; j++) sb[j] = (T)NAN;                                   \
                    for (int64_t j = 0; ub && j < usz; j++) ub[j] = (T)NAN;                              \
                    for (int64_t j = 0; vb && j < vsz; j++) vb[j] = (T)NAN;                              \
                    continue;                                                                            \
                }                                                                                        \
                info[b] = one_##T(p, &sc, sb, ub, vb);                                                   \
            }                                                                                            \
            free(sc.a);                                                                                  \
            free(sc.work);                                                                               \
            free(sc.iwork);                                                                              \
        }                                                                                                \
    }
SVD_BATCH(float)
SVD_BATCH(double)

static int plan_svd(svd_plan *p, const pct_tensor *A, int d0, int d1, char jobz)
{
    memset(p, 0, sizeof *p);
    p->A = A;
    p->d0 = d0;
    p->d1 = d1;
    p->rows = A->sizes[d0];
    p->cols = A->sizes[d1];
    p->k = p->rows < p->cols ? p->rows : p->cols;
    p->jobz = jobz;
    p->ucols = jobz == 'A' ? p->rows : jobz == 'S' ? p->k : 0;
    p->vtrows = jobz == 'A' ? p->cols : jobz == 'S' ? p->k : 0;
    p->batch = 1;
    for (int d = 0; d < A->ndim; d++) {
        if (d == d0 || d == d1) continue;
        p->bshape[p->nb] = A->sizes[d];
        p->bstride[p->nb++] = A->strides[d];
        p->batch *= A->sizes[d];
    }
    if (p->rows > INT_MAX / 2 || p->cols > INT_MAX / 2 || p->rows * p->cols > INT_MAX / 2) {
        pct_error(PCT_ERR_RUNTIME, "linalg.svd: a %lld x %lld matrix is too large for LAPACK's 32-bit sizes",
                     (long long)p->rows, (long long)p->cols);
        return -1;
    }
    return 0;
}

/* Raises torch's error for the first failing matrix. */
static int check_infos(const svd_plan *p, const int *info)
{
    for (int64_t b = 0; b < p->batch; b++) {
        int e = info[b];
        if (e == SVD_OK) continue;
        if (e == SVD_NOMEM) {
            pct_error_nomem();
            return -1;
        }
        char where[64] = "";
        if (p->nb > 0) snprintf(where, sizeof where, " (Batch element %lld):", (long long)b);
        if (e == SVD_NONFINITE)
            pct_error(PCT_ERR_LINALG, "linalg.svd:%s The algorithm failed to converge because the input matrix "
                         "contained non-finite values.", where);
        else if (e > 0)
            pct_error(PCT_ERR_LINALG, "linalg.svd:%s The algorithm failed to converge because the input matrix is "
                         "ill-conditioned or has too many repeated singular values (error code: %d).", where, e);
        else
            pct_error(PCT_ERR_RUNTIME, "linalg.svd:%s Argument %d has illegal value. Most certainly there is a bug "
                         "in the implementation calling the backend library.", where, -e);
        return -1;
    }
    return 0;
}

/* legacy: torch.svd's own rank message */
static int check_input(const pct_tensor *A, const char *api, bool legacy)
{
    if (A->ndim < 2) {
        if (legacy)
            pct_error(PCT_ERR_RUNTIME, "%s: input should have at least 2 dimensions, but has %d dimensions instead",
                         api, A->ndim);
        else
            pct_error(PCT_ERR_RUNTIME, "%s: The input tensor A must have at least 2 dimensions.", api);
        return -1;
    }
    if (pct_dtype_is_complex(A->dtype)) return 0; /* cgesdd / zgesdd: linalg_spectral_complex.c */
    if (!pct_dtype_is_floating(A->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "%s: Expected a floating point or complex tensor as input. Got %s", api,
                     pct_dtype_cpp_name[A->dtype]);
        return -1;
    }
    if (A->dtype != PCT_FLOAT32 && A->dtype != PCT_FLOAT64 && A->numel > 0) { /* torch's kernel check: never reached empty */
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"linalg_svd_cpu\" not implemented for '%s'", pct_dtype_cpp_name[A->dtype]);
        return -1;
    }
    return 0;
}

/* The SVD of dims (d0, d1) of A. s: (batch..., k); u/vt (for jobz != 'N'): (batch..., rows,
 * ucols) and (batch..., vtrows, cols), column-major per matrix. Results are new references. */
static int svd_compute(const pct_tensor *A, int d0, int d1, char jobz, pct_tensor **s, pct_tensor **u, pct_tensor **vt)
{
    svd_plan p;
    int *info = NULL;
    *s = *u = *vt = NULL;
    if (pct_dtype_is_complex(A->dtype)) return lapc_svd((pct_tensor *)A, jobz, s, u, vt); /* (d0, d1): the last dims */
    if (plan_svd(&p, A, d0, d1, jobz) < 0) return -1;
    int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    int nb = p.nb;
    memcpy(shape, p.bshape, sizeof(int64_t) * (size_t)nb);
    shape[nb] = p.k;
    PCT_TRY(*s = pct_tensor_empty(nb + 1, shape, A->dtype, PCT_CPU, -1));
    if (jobz != 'N') {
        /* column-major matrices: strides (..., 1, rows) */
        for (int pass = 0; pass < 2; pass++) {
            const int64_t r = pass ? p.vtrows : p.rows, c = pass ? p.cols : p.ucols;
            shape[nb] = r;
            shape[nb + 1] = c;
            int64_t acc = r * c;
            st[nb] = 1;
            st[nb + 1] = r > 0 ? r : 1;
            for (int i = nb - 1; i >= 0; i--) {
                st[i] = acc > 0 ? acc : 1;
                acc *= shape[i];
            }
            pct_tensor *t = pct_tensor_empty(nb + 2, shape, A->dtype, PCT_CPU, -1);
            if (pass) *vt = t; else *u = t;
            PCT_TRY(t);
            PCT_TRY_INT(pct_tensor_set_shape(t, nb + 2, shape, st));
        }
    }
    if (p.k == 0) { /* empty matrices: a full U / Vh is the identity */
        for (int pass = 0; jobz == 'A' && pass < 2; pass++) {
            pct_tensor *t = pass ? *vt : *u;
            const int64_t n = pass ? p.cols : p.rows;
            memset(pct_tensor_data(t), 0, (size_t)(t->numel * pct_tensor_itemsize(t)));
            for (int64_t b = 0; b < p.batch; b++)
                for (int64_t i = 0; i < n; i++)
                    pct_store_double(pct_tensor_data(t) + (b * n * n + i * n + i) * pct_tensor_itemsize(t), t->dtype, 1.0);
        }
        return 0;
    }
    if (p.batch == 0) return 0;
    PCT_CHECK(info = calloc((size_t)p.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.svd: out of memory");
    const bool f32 = A->dtype == PCT_FLOAT32;
    const int lwork = f32 ? lwork_float(&p) : lwork_double(&p);
    PCT_CHECK(lwork > 0, PCT_ERR_RUNTIME, "linalg.svd: LAPACK's workspace query failed");
    void *ud = *u ? pct_tensor_data(*u) : NULL, *vd = *vt ? pct_tensor_data(*vt) : NULL;
    PCT_NOGIL_BEGIN
    if (f32) batch_float(&p, lwork, (float *)pct_tensor_data(*s), ud, vd, info);
    else batch_double(&p, lwork, (double *)pct_tensor_data(*s), ud, vd, info);
    PCT_NOGIL_END
    PCT_TRY_INT(check_infos(&p, info));
    free(info);
    return 0;
fail:
    free(info);
    PCT_CLEAR(*s);
    PCT_CLEAR(*u);
    PCT_CLEAR(*vt);
    return -1;
}

/* ---- out= and results ---------------------------------------------------------------- */

/* Copies results into the out= tensors (checked and resized as torch's out= rules say) and
 * returns them as the named tuple; steals res. */
static pct_object *finish(int n, pct_tensor **res, pct_tensor **outs)
{
    pct_object *r = NULL;
    if (outs && outs[0]) {
        for (int i = 0; i < n; i++)
            if (pct_out_check_dtype(outs[i], res[i]->dtype) < 0) goto done;
        for (int i = 0; i < n; i++) {
            /* an out= of another shape is resized to the result's layout (column-major U, Vh), as
             * torch's structured kernels do; one of the right shape keeps its strides */
            pct_tensor *o = outs[i];
            const bool same = o->ndim == res[i]->ndim &&
                              memcmp(o->sizes, res[i]->sizes, sizeof(int64_t) * (size_t)o->ndim) == 0;
            if (pct_out_resize(o, res[i]->ndim, res[i]->sizes) < 0) goto done;
            if (!same && pct_tensor_set_shape(o, res[i]->ndim, res[i]->sizes, res[i]->strides) < 0) goto done;
            if (pct_copy_(o, res[i]) < 0) goto done;
        }
        for (int i = 0; i < n; i++) {
            PCT_DECREF(res[i]);
            PCT_INCREF(outs[i]);
            res[i] = outs[i];
        }
    }
    r = pct_result_tuple(n, res);
    for (int i = 0; i < n; i++) res[i] = NULL; /* stolen */
done:
    for (int i = 0; i < n; i++) PCT_XDECREF(res[i]);
    return r;
}

/* torch checks driver= in the kernel, which an empty input never reaches */
static int check_driver(const char *driver)
{
    if (!driver) return 0;
    pct_error_str(PCT_ERR_RUNTIME,
                    "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
    return -1;
}

/* linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None, pct_object? out=None) */
pct_object *pct_cpu_linalg_svd(pct_call *c)
{
    PCT_ARGS(linalg_svd);
    pct_tensor *A = arg.A, *outs[3] = {NULL, NULL, NULL}, *res[3];
    if (pct_out_parse_tuple(arg.out, "linalg_svd", 3, outs) < 0) return NULL;
    if (check_input(A, "linalg.svd", false) < 0 || (A->numel > 0 && check_driver(arg.driver) < 0)) return NULL;
    if (svd_compute(A, A->ndim - 2, A->ndim - 1, arg.full_matrices ? 'A' : 'S', &res[1], &res[0], &res[2]) < 0) return NULL;
    return finish(3, res, outs);
}

/* linalg_svdvals(Tensor A, *, str? driver=None, Tensor? out=None) */
pct_object *pct_cpu_linalg_svdvals(pct_call *c)
{
    PCT_ARGS(linalg_svdvals);
    pct_tensor *A = arg.A, *s, *u, *vt;
    if (check_input(A, "linalg.svd", false) < 0 || (A->numel > 0 && check_driver(arg.driver) < 0)) return NULL;
    if (svd_compute(A, A->ndim - 2, A->ndim - 1, 'N', &s, &u, &vt) < 0) return NULL;
    if (!c->out) return (pct_object *)s;
    pct_object *r = NULL;
    if (pct_out_check_dtype(c->out, s->dtype) == 0 && pct_out_resize(c->out, s->ndim, s->sizes) == 0 &&
        pct_copy_(c->out, s) == 0) {
        PCT_INCREF(c->out);
        r = (pct_object *)c->out;
    }
    PCT_DECREF(s);
    return r;
}

/* negates the imaginary parts of a new (dense) complex tensor */
static void conj_in_place(pct_tensor *t)
{
    char *d = pct_tensor_data(t);
    for (int64_t i = 0; i < t->numel; i++) {
        if (t->dtype == PCT_COMPLEX64) ((float *)d)[2 * i + 1] = -((float *)d)[2 * i + 1];
        else ((double *)d)[2 * i + 1] = -((double *)d)[2 * i + 1];
    }
}

/* svd(Tensor input, bool some=True, bool compute_uv=True, *, pct_object? out=None): torch's
 * older interface, V instead of Vh; without compute_uv, U and V are zero-filled full squares. */
pct_object *pct_cpu_svd(pct_call *c)
{
    PCT_ARGS(svd);
    pct_tensor *A = arg.input, *outs[3] = {NULL, NULL, NULL}, *res[3] = {NULL, NULL, NULL}, *vt = NULL;
    const bool some = arg.some, uv = arg.compute_uv;
    if (pct_out_parse_tuple(arg.out, "svd", 3, outs) < 0) return NULL;
    if (check_input(A, "linalg.svd", true) < 0) return NULL;
    const int nd = A->ndim;
    if (svd_compute(A, nd - 2, nd - 1, uv ? (some ? 'S' : 'A') : 'N', &res[1], &res[0], &vt) < 0) return NULL;
    if (uv) { /* V = Vh^H: a view of Vh^T, Vh conjugated in place first for complex dtypes */
        if (pct_dtype_is_complex(vt->dtype)) conj_in_place(vt);
        int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
        memcpy(sz, vt->sizes, sizeof(int64_t) * (size_t)nd);
        memcpy(st, vt->strides, sizeof(int64_t) * (size_t)nd);
        sz[nd - 2] = vt->sizes[nd - 1]; sz[nd - 1] = vt->sizes[nd - 2];
        st[nd - 2] = vt->strides[nd - 1]; st[nd - 1] = vt->strides[nd - 2];
        res[2] = pct_tensor_view_of(vt, nd, sz, st, vt->offset);
        PCT_DECREF(vt);
    } else {
        int64_t sz[PCT_MAX_DIMS];
        memcpy(sz, A->sizes, sizeof(int64_t) * (size_t)nd);
        sz[nd - 1] = A->sizes[nd - 2];
        res[0] = pct_tensor_zeros(nd, sz, A->dtype);
        sz[nd - 2] = sz[nd - 1] = A->sizes[nd - 1];
        res[2] = pct_tensor_zeros(nd, sz, A->dtype);
    }
    if (!res[0] || !res[2]) {
        for (int i = 0; i < 3; i++) PCT_XDECREF(res[i]);
        return NULL;
    }
    return finish(3, res, outs);
}

