/* linalg_spectral_complex.c: complex eigh, SVD and eig through LAPACK's complex drivers
 * (linalg_spectral_complex.h). Each kernel copies its input into a fresh column-major tensor
 * (lap_copy_cm), which LAPACK overwrites one matrix at a time on lap_run's threads, each thread
 * with one scratch block holding the complex workspace, then the real one (rwork), then the
 * integer one, sized by LAPACK's workspace queries.
 *
 * Non-finite inputs as torch's CPU kernels treat them: the SVD fails on a NaN ("... contained
 * non-finite values") and makes every result NaN for an infinity, as linalg_svd.c does; eig
 * refuses both kinds (torch's "input tensor should not contain infs or NaNs") except that an
 * infinity alone gives NaN results, as linalg_eig.c does; eigh leaves them to LAPACK. */
#include "linalg_spectral_complex.h"
#include "linalg_lapack.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PCT_HAVE_OPENBLAS
/* LAPACK's Fortran entry points as OpenBLAS exports them (32-bit integers; each trailing size_t is gfortran's hidden
 * length of a character argument). Complex arrays are void *, real ones R *. */
#define LAPC_DECL(R, P)                                                                                        \
    void P##heevd_(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, R *w, void *work,  \
                   const int *lwork, R *rwork, const int *lrwork, int *iwork, const int *liwork, int *info, size_t, \
                   size_t);                                                                                    \
    void P##gesdd_(const char *jobz, const int *m, const int *n, void *a, const int *lda, R *s, void *u,         \
                   const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, R *rwork, int *iwork, \
                   int *info, size_t);                                                                         \
    void P##geev_(const char *jobvl, const char *jobvr, const int *n, void *a, const int *lda, void *w, void *vl, \
                  const int *ldvl, void *vr, const int *ldvr, void *work, const int *lwork, R *rwork, int *info, \
                  size_t, size_t);
LAPC_DECL(float, c)
LAPC_DECL(double, z)
#endif

int lapc_real_dtype(int complex_dtype) { return complex_dtype == PCT_COMPLEX64 ? PCT_FLOAT32 : PCT_FLOAT64; }

/* the parts (2 n reals) of a complex array of dtype dt: 0 all finite, 1 an infinity, -1 a NaN */
static int nonfinite_parts(int dt, const void *x, int64_t n)
{
    int kind = 0;
    for (int64_t i = 0; i < 2 * n; i++) {
        const double v = dt == PCT_COMPLEX64 ? ((const float *)x)[i] : ((const double *)x)[i];
        if (isnan(v)) return -1;
        if (isinf(v)) kind = 1;
    }
    return kind;
}

static void fill_nan(int dt, void *x, int64_t nreal)
{
    for (int64_t i = 0; i < nreal; i++) {
        if (dt == PCT_FLOAT32 || dt == PCT_COMPLEX64) ((float *)x)[i] = NAN;
        else ((double *)x)[i] = NAN;
    }
}

/* The largest of a LAPACK workspace query's answer (a real number, the real part of a complex one) and least. */
static int query_size(int real_dt, const void *q, int least)
{
    const double v = real_dt == PCT_FLOAT32 ? (double)((const float *)q)[0] : ((const double *)q)[0];
    const int n = v > 0 && v < 1e9 ? (int)v + 1 : 0;
    return n > least ? n : least;
}

static size_t round8(size_t n) { return (n + 7) & ~(size_t)7; }

/* torch's checks of a matrix argument for the complex kernels (the shared ones of linalg_lapack.c): at least 2 dims,
 * square when asked, small enough for LAPACK's 32-bit sizes, and a LAPACK build; complex32 refused with the name of
 * torch's kernel (kernel). */
static int check_matrix(const pct_tensor *A, const char *api, bool square, const char *kernel)
{
    return lap_check_matrix(A, api, "A", square, NULL, kernel);
}

/* ---- Hermitian eigendecomposition: cheevd / zheevd ------------------------------------------ */

typedef struct {
    int dt, n, lwork, lrwork, liwork;
    char jobz, uplo;
    char *a, *w;
    int *info;
} heevd_ctx;

static void heevd_call(int dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work, int lwork,
                       void *rwork, int lrwork, int *iwork, int liwork, int *info)
{
#ifdef PCT_HAVE_OPENBLAS
    if (dt == PCT_COMPLEX64)
        cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
    else
        zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
#else
    (void)dt; (void)jobz; (void)uplo; (void)n; (void)a; (void)lda; (void)w; (void)work; (void)lwork; (void)rwork;
    (void)lrwork; (void)iwork; (void)liwork;
    *info = -1000;
#endif
}

static void heevd_body(void *vc, int64_t b, void *sc)
{
    heevd_ctx *c = vc;
    const size_t csz = (size_t)pct_dtype_itemsize[c->dt], rsz = csz / 2;
    char *work = sc, *rwork = work + round8((size_t)c->lwork * csz);
    int *iwork = (int *)(rwork + round8((size_t)c->lrwork * rsz));
    heevd_call(c->dt, c->jobz, c->uplo, c->n, c->a + (size_t)b * c->n * c->n * csz, c->n > 1 ? c->n : 1,
               c->w + (size_t)b * c->n * rsz, work, c->lwork, rwork, c->lrwork, iwork, c->liwork, &c->info[b]);
}

int lapc_eigh(pct_tensor *A, char uplo, bool vectors, pct_tensor **w, pct_tensor **v)
{
    int *info = NULL;
    pct_tensor *a = NULL;
    *w = *v = NULL;
    PCT_TRY_INT(check_matrix(A, "linalg.eigh", true, "linalg_eigh_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    const int rdt = lapc_real_dtype(A->dtype);
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(*w = lap_empty(&bt, 1, n, 0, rdt));
    if (bt.batch > 0 && n > 0) {
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.eigh: out of memory");
        double qw[2] = {0, 0}, qr[2] = {0, 0};
        int qi = 0, qinfo = 0;
        const char jobz = vectors ? 'V' : 'N';
        heevd_call(A->dtype, jobz, uplo, (int)n, NULL, (int)n, NULL, qw, -1, qr, -1, &qi, -1, &qinfo);
        heevd_ctx ctx = {A->dtype, (int)n, query_size(rdt, qw, (int)(2 * n + n * n)),
                         query_size(rdt, qr, (int)(1 + 5 * n + 2 * n * n)), qi > 3 + 5 * (int)n ? qi : 3 + 5 * (int)n,
                         jobz, uplo, pct_tensor_data(a), pct_tensor_data(*w), info};
        const size_t csz = (size_t)pct_tensor_itemsize(A);
        const size_t scratch = round8((size_t)ctx.lwork * csz) + round8((size_t)ctx.lrwork * csz / 2) +
                               sizeof(int) * (size_t)ctx.liwork;
        lap_run(bt.batch, n, scratch, heevd_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, "linalg.eigh", A->ndim == 2));
    }
    free(info);
    if (vectors) *v = a;
    else lap_release(a);
    return 0;
fail:
    free(info);
    lap_release(a);
    lap_release(*w);
    *w = NULL;
    return -1;
}

/* ---- the SVD: cgesdd / zgesdd ------------------------------------------------------------ */

enum { SVDC_NONFINITE = -1001 };

typedef struct {
    int dt, m, n, k, ucols, vtrows, lwork, lrwork;
    char jobz;
    char *a, *s, *u, *vt;
    int *info;
} gesdd_ctx;

static void gesdd_call(int dt, char jobz, int m, int n, void *a, int lda, void *s, void *u, int ldu, void *vt,
                       int ldvt, void *work, int lwork, void *rwork, int *iwork, int *info)
{
#ifdef PCT_HAVE_OPENBLAS
    if (dt == PCT_COMPLEX64) cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
    else zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
#else
    (void)dt; (void)jobz; (void)m; (void)n; (void)a; (void)lda; (void)s; (void)u; (void)ldu; (void)vt; (void)ldvt;
    (void)work; (void)lwork; (void)rwork; (void)iwork;
    *info = -1000;
#endif
}

static void gesdd_body(void *vc, int64_t b, void *sc)
{
    gesdd_ctx *c = vc;
    const size_t csz = (size_t)pct_dtype_itemsize[c->dt], rsz = csz / 2;
    const int64_t usz = (int64_t)c->m * c->ucols, vsz = (int64_t)c->vtrows * c->n;
    char *a = c->a + (size_t)b * c->m * c->n * csz, *s = c->s + (size_t)b * c->k * rsz;
    char *u = c->u ? c->u + (size_t)(b * usz) * csz : NULL, *vt = c->vt ? c->vt + (size_t)(b * vsz) * csz : NULL;
    const int kind = nonfinite_parts(c->dt, a, (int64_t)c->m * c->n);
    if (kind != 0) { /* a NaN is an error; an infinity makes every result NaN */
        c->info[b] = kind < 0 ? SVDC_NONFINITE : 0;
        fill_nan(c->dt == PCT_COMPLEX64 ? PCT_FLOAT32 : PCT_FLOAT64, s, c->k);
        if (u) fill_nan(c->dt, u, 2 * usz);
        if (vt) fill_nan(c->dt, vt, 2 * vsz);
        return;
    }
    char *work = sc, *rwork = work + round8((size_t)c->lwork * csz);
    int *iwork = (int *)(rwork + round8((size_t)c->lrwork * rsz));
    double dummy[2] = {0, 0};
    gesdd_call(c->dt, c->jobz, c->m, c->n, a, c->m > 1 ? c->m : 1, s, u ? (void *)u : dummy, c->m > 1 ? c->m : 1,
               vt ? (void *)vt : dummy, c->vtrows > 1 ? c->vtrows : 1, work, c->lwork, rwork, iwork, &c->info[b]);
}

/* torch's reports for the first failing matrix (linalg_svd.c's messages) */
static int svd_errors(const int *info, int64_t batch, bool batched)
{
    for (int64_t b = 0; b < batch; b++) {
        const int e = info[b];
        if (e == 0) continue;
        char where[64] = "";
        if (batched) snprintf(where, sizeof where, " (Batch element %lld):", (long long)b);
        if (e == LAP_NOMEM) PCT_FAIL(PCT_ERR_MEMORY, "linalg.svd: out of memory");
        if (e == SVDC_NONFINITE)
            PCT_FAIL(PCT_ERR_LINALG, "linalg.svd:%s The algorithm failed to converge because the input matrix "
                     "contained non-finite values.", where);
        if (e == -1000) PCT_FAIL(PCT_ERR_RUNTIME, "linalg.svd: pyctorch was built without LAPACK (OpenBLAS)");
        if (e > 0)
            PCT_FAIL(PCT_ERR_LINALG, "linalg.svd:%s The algorithm failed to converge because the input matrix is "
                     "ill-conditioned or has too many repeated singular values (error code: %d).", where, e);
        PCT_FAIL(PCT_ERR_RUNTIME, "linalg.svd:%s Argument %d has illegal value. Most certainly there is a bug in the "
                 "implementation calling the backend library.", where, -e);
    }
    return 0;
fail:
    return -1;
}

int lapc_svd(pct_tensor *A, char jobz, pct_tensor **s, pct_tensor **u, pct_tensor **vh)
{
    int *info = NULL;
    pct_tensor *a = NULL;
    *s = *u = *vh = NULL;
    PCT_TRY_INT(check_matrix(A, "linalg.svd", false, "linalg_svd_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    const int64_t ucols = jobz == 'A' ? m : jobz == 'S' ? k : 0, vtrows = jobz == 'A' ? n : jobz == 'S' ? k : 0;
    const int rdt = lapc_real_dtype(A->dtype);
    PCT_TRY(*s = lap_empty(&bt, 1, k, 0, rdt));
    if (jobz != 'N') {
        PCT_TRY(*u = lap_empty_cm(&bt, m, ucols, A->dtype));
        PCT_TRY(*vh = lap_empty_cm(&bt, vtrows, n, A->dtype));
    }
    if (k == 0) { /* empty matrices: a full U / Vh is the identity */
        for (int pass = 0; jobz == 'A' && pass < 2; pass++) {
            pct_tensor *t = pass ? *vh : *u;
            const int64_t d = pass ? n : m, isz = pct_tensor_itemsize(t);
            char *data = pct_tensor_data(t);
            memset(data, 0, (size_t)(t->numel * isz));
            for (int64_t b = 0; b < bt.batch; b++)
                for (int64_t i = 0; i < d; i++) pct_store_complex(data + (b * d * d + i * d + i) * isz, t->dtype, 1, 0);
        }
        return 0;
    }
    if (bt.batch == 0) return 0;
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.svd: out of memory");
    {
        double q[2] = {0, 0}, dummy[2] = {0, 0};
        int qinfo = 0, iw = 0;
        const int ld = m > 1 ? (int)m : 1, ldvt = vtrows > 1 ? (int)vtrows : 1;
        gesdd_call(A->dtype, jobz, (int)m, (int)n, dummy, ld, dummy, dummy, ld, dummy, ldvt, q, -1, dummy, &iw, &qinfo);
        const int64_t mx = m > n ? m : n;
        int64_t lr = jobz == 'N' ? 7 * k : 5 * k * k + 5 * k;
        if (jobz != 'N' && 2 * mx * k + 2 * k * k + k > lr) lr = 2 * mx * k + 2 * k * k + k;
        PCT_CHECK(lr <= INT32_MAX / 2, PCT_ERR_RUNTIME, "linalg.svd: the matrices are too large for LAPACK's 32-bit sizes");
        gesdd_ctx ctx = {A->dtype, (int)m, (int)n, (int)k, (int)ucols, (int)vtrows, query_size(rdt, q, (int)(2 * k + mx)),
                         (int)lr + 1, jobz, pct_tensor_data(a), pct_tensor_data(*s),
                         *u ? pct_tensor_data(*u) : NULL, *vh ? pct_tensor_data(*vh) : NULL, info};
        const size_t csz = (size_t)pct_tensor_itemsize(A);
        const size_t scratch = round8((size_t)ctx.lwork * csz) + round8((size_t)ctx.lrwork * csz / 2) +
                               sizeof(int) * (size_t)(8 * k + 1);
        lap_run(bt.batch, k, scratch, gesdd_body, &ctx, info);
        PCT_TRY_INT(svd_errors(info, bt.batch, bt.nb > 0));
    }
    free(info);
    lap_release(a);
    return 0;
fail:
    free(info);
    lap_release(a);
    lap_release(*s);
    lap_release(*u);
    lap_release(*vh);
    *s = *u = *vh = NULL;
    return -1;
}

/* ---- the general eigenproblem: cgeev / zgeev -------------------------------------------- */

typedef struct {
    int dt, n, lwork;
    char jobvr;
    char *a, *w, *vr;
    int *info;
} geev_ctx;

static void geev_call(int dt, char jobvr, int n, void *a, int lda, void *w, void *vr, int ldvr, void *work, int lwork,
                      void *rwork, int *info)
{
#ifdef PCT_HAVE_OPENBLAS
    const char jobvl = 'N';
    const int ldvl = 1;
    if (dt == PCT_COMPLEX64) cgeev_(&jobvl, &jobvr, &n, a, &lda, w, NULL, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
    else zgeev_(&jobvl, &jobvr, &n, a, &lda, w, NULL, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
#else
    (void)dt; (void)jobvr; (void)n; (void)a; (void)lda; (void)w; (void)vr; (void)ldvr; (void)work; (void)lwork;
    (void)rwork;
    *info = -1000;
#endif
}

static void geev_body(void *vc, int64_t b, void *sc)
{
    geev_ctx *c = vc;
    const size_t csz = (size_t)pct_dtype_itemsize[c->dt], mat = (size_t)c->n * c->n * csz;
    char *rwork = (char *)sc + round8((size_t)c->lwork * csz);
    double dummy[2] = {0, 0};
    geev_call(c->dt, c->jobvr, c->n, c->a + (size_t)b * mat, c->n, c->w + (size_t)b * c->n * csz,
              c->vr ? (void *)(c->vr + (size_t)b * mat) : dummy, c->n, sc, c->lwork, rwork, &c->info[b]);
}

int lapc_eig(pct_tensor *A, bool vectors, pct_tensor **w, pct_tensor **v)
{
    int *info = NULL;
    pct_tensor *a = NULL;
    *w = *v = NULL;
    PCT_TRY_INT(check_matrix(A, "linalg.eig", true, "linalg_eig_out_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    const int kind = nonfinite_parts(A->dtype, pct_tensor_data(a), a->numel);
    PCT_CHECK(kind >= 0, PCT_ERR_RUNTIME, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
    PCT_TRY(*w = lap_empty(&bt, 1, n, 0, A->dtype));
    if (vectors) PCT_TRY(*v = lap_empty_cm(&bt, n, n, A->dtype));
    if (kind) { /* an infinity: every result is NaN, as for real inputs */
        fill_nan(A->dtype, pct_tensor_data(*w), 2 * (*w)->numel);
        if (vectors) fill_nan(A->dtype, pct_tensor_data(*v), 2 * (*v)->numel);
    } else if (bt.batch > 0 && n > 0) {
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.eig: out of memory");
        double q[2] = {0, 0}, dummy[2] = {0, 0};
        int qinfo = 0;
        const char jobvr = vectors ? 'V' : 'N';
        geev_call(A->dtype, jobvr, (int)n, dummy, (int)n, dummy, dummy, (int)n, q, -1, dummy, &qinfo);
        geev_ctx ctx = {A->dtype, (int)n, query_size(lapc_real_dtype(A->dtype), q, (int)(2 * n)), jobvr,
                        pct_tensor_data(a), pct_tensor_data(*w), vectors ? pct_tensor_data(*v) : NULL, info};
        const size_t csz = (size_t)pct_tensor_itemsize(A);
        lap_run(bt.batch, n, round8((size_t)ctx.lwork * csz) + (size_t)(2 * n) * csz / 2, geev_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, "linalg.eig", A->ndim == 2));
    }
    free(info);
    lap_release(a);
    return 0;
fail:
    free(info);
    lap_release(a);
    lap_release(*w);
    lap_release(*v);
    *w = *v = NULL;
    return -1;
}
