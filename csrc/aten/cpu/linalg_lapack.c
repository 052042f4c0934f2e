/* linalg_lapack.c: the helpers of linalg_lapack.h (see its header comment): LAPACK's typed
 * wrappers, column-major batched copies, torch's checks, error reports and out= handling. */
#include "linalg_lapack.h"
#include "../iter.h"
#include "../out.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef PCT_HAVE_OPENBLAS
/* LAPACK/BLAS Fortran entry points as OpenBLAS exports them (32-bit integers; each trailing
 * size_t is gfortran's hidden length of a character argument). T is the element type, P the
 * routine prefix (s, d, c, z); the routines whose arguments differ between real and complex
 * types are declared below, one family at a time. */
#define LAP_DECL(T, P)                                                                                      \
    void P##getrf_(const int *m, const int *n, T *a, const int *lda, int *ipiv, int *info);                \
    void P##getri_(const int *n, T *a, const int *lda, const int *ipiv, T *work, const int *lwork, int *info); \
    void P##getrs_(const char *trans, const int *n, const int *nrhs, const T *a, const int *lda, const int *ipiv, \
                   T *b, const int *ldb, int *info, size_t);                                                \
    void P##potrf_(const char *uplo, const int *n, T *a, const int *lda, int *info, size_t);               \
    void P##geqrf_(const int *m, const int *n, T *a, const int *lda, T *tau, T *work, const int *lwork, int *info); \
    void P##trsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,   \
                  const int *n, const T *alpha, const T *a, const int *lda, T *b, const int *ldb, size_t, size_t, \
                  size_t, size_t);                                                                          \
    void P##gels_(const char *trans, const int *m, const int *n, const int *nrhs, T *a, const int *lda, T *b, \
                  const int *ldb, T *work, const int *lwork, int *info, size_t);                            \
    void P##sytrf_(const char *uplo, const int *n, T *a, const int *lda, int *ipiv, T *work, const int *lwork, \
                   int *info, size_t);                                                                      \
    void P##sytrs_(const char *uplo, const int *n, const int *nrhs, const T *a, const int *lda, const int *ipiv, \
                   T *b, const int *ldb, int *info, size_t);
LAP_DECL(float, s)
LAP_DECL(double, d)
LAP_DECL(pct_cfloat, c)
LAP_DECL(pct_cdouble, z)
/* Q of the reflectors and products with it: or* (real), un* (complex; trans 'C', the conjugate transpose) */
#define LAP_DECL_Q(T, P, Q)                                                                                 \
    void P##Q##gqr_(const int *m, const int *n, const int *k, T *a, const int *lda, const T *tau, T *work,  \
                    const int *lwork, int *info);                                                           \
    void P##Q##mqr_(const char *side, const char *trans, const int *m, const int *n, const int *k, T *a,    \
                    const int *lda, const T *tau, T *c, const int *ldc, T *work, const int *lwork, int *info, size_t, \
                    size_t);
LAP_DECL_Q(float, s, or)
LAP_DECL_Q(double, d, or)
LAP_DECL_Q(pct_cfloat, c, un)
LAP_DECL_Q(pct_cdouble, z, un)
/* least squares: the complex drivers take a real workspace rwork besides work (R: the real type) */
#define LAP_DECL_LS(T, R, P, RW)                                                                            \
    void P##gelsy_(const int *m, const int *n, const int *nrhs, T *a, const int *lda, T *b, const int *ldb,  \
                   int *jpvt, const R *rcond, int *rank, T *work, const int *lwork, RW int *info);          \
    void P##gelsd_(const int *m, const int *n, const int *nrhs, T *a, const int *lda, T *b, const int *ldb,  \
                   R *s, const R *rcond, int *rank, T *work, const int *lwork, RW int *iwork, int *info);   \
    void P##gelss_(const int *m, const int *n, const int *nrhs, T *a, const int *lda, T *b, const int *ldb,  \
                   R *s, const R *rcond, int *rank, T *work, const int *lwork, RW int *info);
#define LAP_NO_RWORK
#define LAP_RWORK_F float *rwork,
#define LAP_RWORK_D double *rwork,
LAP_DECL_LS(float, float, s, LAP_NO_RWORK)
LAP_DECL_LS(double, double, d, LAP_NO_RWORK)
LAP_DECL_LS(pct_cfloat, float, c, LAP_RWORK_F)
LAP_DECL_LS(pct_cdouble, double, z, LAP_RWORK_D)
/* the hermitian LDL^H (complex only) */
void chetrf_(const char *uplo, const int *n, pct_cfloat *a, const int *lda, int *ipiv, pct_cfloat *work,
             const int *lwork, int *info, size_t);
void zhetrf_(const char *uplo, const int *n, pct_cdouble *a, const int *lda, int *ipiv, pct_cdouble *work,
             const int *lwork, int *info, size_t);
void chetrs_(const char *uplo, const int *n, const int *nrhs, const pct_cfloat *a, const int *lda, const int *ipiv,
             pct_cfloat *b, const int *ldb, int *info, size_t);
void zhetrs_(const char *uplo, const int *n, const int *nrhs, const pct_cdouble *a, const int *lda, const int *ipiv,
             pct_cdouble *b, const int *ldb, int *info, size_t);
/* real only (the complex eigenproblems are linalg_eig.c's and the eigh helper's own) */
#define LAP_DECL_EIG(T, P)                                                                                  \
    void P##syevd_(const char *jobz, const char *uplo, const int *n, T *a, const int *lda, T *w, T *work,   \
                   const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);             \
    void P##geev_(const char *jobvl, const char *jobvr, const int *n, T *a, const int *lda, T *wr, T *wi, T *vl, \
                  const int *ldvl, T *vr, const int *ldvr, T *work, const int *lwork, int *info, size_t, size_t);
LAP_DECL_EIG(float, s)
LAP_DECL_EIG(double, d)
/* The call of the routine of dt's type: s, d, c or z prefixed to name (c and z to cname where the complex routine
 * has another name). */
#define LAP_CALL4(dt, name, cname, ...)                                                                     \
    do {                                                                                                    \
        switch (dt) {                                                                                       \
        case PCT_FLOAT32: s##name##_(__VA_ARGS__); break;                                                   \
        case PCT_FLOAT64: d##name##_(__VA_ARGS__); break;                                                   \
        case PCT_COMPLEX64: c##cname##_(__VA_ARGS__); break;                                                \
        default: z##cname##_(__VA_ARGS__); break;                                                           \
        }                                                                                                   \
    } while (0)
#define LAP_CALL(dt, name, ...) LAP_CALL4(dt, name, name, __VA_ARGS__)
#define LAP_CALL_REAL(dt, name, ...)                                                                        \
    do {                                                                                                    \
        if ((dt) == PCT_FLOAT32) s##name##_(__VA_ARGS__);                                                   \
        else d##name##_(__VA_ARGS__);                                                                       \
    } while (0)
#else
#define LAP_CALL4(dt, name, cname, ...) do { (void)(dt); } while (0)
#define LAP_CALL(dt, name, ...) do { (void)(dt); } while (0)
#define LAP_CALL_REAL(dt, name, ...) do { (void)(dt); } while (0)
#endif

bool lap_is_complex(int dt)
{
    return dt == PCT_COMPLEX64 || dt == PCT_COMPLEX128;
}

int lap_real_dtype(int dt)
{
    return dt == PCT_COMPLEX64 ? PCT_FLOAT32 : dt == PCT_COMPLEX128 ? PCT_FLOAT64 : dt;
}

/* Without OpenBLAS, every call reports a failure the kernels turn into an error. */
#ifdef PCT_HAVE_OPENBLAS
#define LAP_NONE(info) (void)0
#else
#define LAP_NONE(info) (*(info) = -1000)
#endif

/* The Fortran calls take pointers; these wrappers take values. The (void)s keep a build
 * without OpenBLAS free of unused-parameter warnings. */
void lap_getrf(int dt, int m, int n, void *a, int lda, int *ipiv, int *info)
{
    (void)m; (void)n; (void)a; (void)lda; (void)ipiv;
    LAP_NONE(info);
    LAP_CALL(dt, getrf, &m, &n, a, &lda, ipiv, info);
}

void lap_getri(int dt, int n, void *a, int lda, const int *ipiv, void *work, int lwork, int *info)
{
    (void)n; (void)a; (void)lda; (void)ipiv; (void)work; (void)lwork;
    LAP_NONE(info);
    LAP_CALL(dt, getri, &n, a, &lda, ipiv, work, &lwork, info);
}

void lap_getrs(int dt, char trans, int n, int nrhs, const void *a, int lda, const int *ipiv, void *b, int ldb, int *info)
{
    (void)trans; (void)n; (void)nrhs; (void)a; (void)lda; (void)ipiv; (void)b; (void)ldb;
    LAP_NONE(info);
    LAP_CALL(dt, getrs, &trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}

void lap_potrf(int dt, char uplo, int n, void *a, int lda, int *info)
{
    (void)uplo; (void)n; (void)a; (void)lda;
    LAP_NONE(info);
    LAP_CALL(dt, potrf, &uplo, &n, a, &lda, info, 1);
}

void lap_geqrf(int dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork, int *info)
{
    (void)m; (void)n; (void)a; (void)lda; (void)tau; (void)work; (void)lwork;
    LAP_NONE(info);
    LAP_CALL(dt, geqrf, &m, &n, a, &lda, tau, work, &lwork, info);
}

void lap_orgqr(int dt, int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork, int *info)
{
    (void)m; (void)n; (void)k; (void)a; (void)lda; (void)tau; (void)work; (void)lwork;
    LAP_NONE(info);
    LAP_CALL4(dt, orgqr, ungqr, &m, &n, &k, a, &lda, tau, work, &lwork, info);
}

void lap_ormqr(int dt, char side, char trans, int m, int n, int k, void *a, int lda, const void *tau, void *c, int ldc,
               void *work, int lwork, int *info)
{
    (void)side; (void)trans; (void)m; (void)n; (void)k; (void)a; (void)lda; (void)tau; (void)c; (void)ldc; (void)work;
    (void)lwork;
    LAP_NONE(info);
    if (lap_is_complex(dt) && trans == 'T') trans = 'C'; /* unmqr: Q^H */
    LAP_CALL4(dt, ormqr, unmqr, &side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
}

void lap_syevd(int dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work, int lwork, int *iwork,
               int liwork, int *info)
{
    (void)jobz; (void)uplo; (void)n; (void)a; (void)lda; (void)w; (void)work; (void)lwork; (void)iwork; (void)liwork;
    LAP_NONE(info);
    LAP_CALL_REAL(dt, syevd, &jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}

void lap_geev(int dt, char jobvr, int n, void *a, int lda, void *wr, void *wi, void *vr, int ldvr, void *work,
              int lwork, int *info)
{
    (void)jobvr; (void)n; (void)a; (void)lda; (void)wr; (void)wi; (void)vr; (void)ldvr; (void)work; (void)lwork;
    LAP_NONE(info);
    const char jobvl = 'N';
    const int ldvl = 1;
    (void)jobvl; (void)ldvl;
    LAP_CALL_REAL(dt, geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, NULL, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}

void lap_trsm(int dt, char side, char uplo, char transa, char diag, int m, int n, const void *a, int lda, void *b,
              int ldb)
{
    (void)side; (void)uplo; (void)transa; (void)diag; (void)m; (void)n; (void)a; (void)lda; (void)b; (void)ldb;
    /* alpha = 1 in dt's type (a real one is the real part of the complex pair) */
    static const float onef[2] = {1.0f, 0.0f};
    static const double oned[2] = {1.0, 0.0};
    const void *alpha = dt == PCT_FLOAT32 || dt == PCT_COMPLEX64 ? (const void *)onef : (const void *)oned;
    (void)alpha;
    LAP_CALL(dt, trsm, &side, &uplo, &transa, &diag, &m, &n, alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}

void lap_gels(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *work, int lwork, int *info)
{
    (void)m; (void)n; (void)nrhs; (void)a; (void)lda; (void)b; (void)ldb; (void)work; (void)lwork;
    LAP_NONE(info);
    LAP_CALL(dt, gels, "N", &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}

/* The least-squares drivers: rcond is passed in the real type of dt; rwork (complex dt only) is their real
 * workspace. */
void lap_gelsy(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, int *jpvt, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *info)
{
    (void)m; (void)n; (void)nrhs; (void)a; (void)lda; (void)b; (void)ldb; (void)jpvt; (void)rcond; (void)rank;
    (void)work; (void)lwork; (void)rwork;
    LAP_NONE(info);
#ifdef PCT_HAVE_OPENBLAS
    const float rc = (float)rcond;
    switch (dt) {
    case PCT_FLOAT32: sgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rc, rank, work, &lwork, info); break;
    case PCT_FLOAT64: dgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info); break;
    case PCT_COMPLEX64: cgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rc, rank, work, &lwork, rwork, info); break;
    default: zgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, rwork, info); break;
    }
#else
    (void)dt;
#endif
}

void lap_gelsd(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *s, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *iwork, int *info)
{
    (void)m; (void)n; (void)nrhs; (void)a; (void)lda; (void)b; (void)ldb; (void)s; (void)rcond; (void)rank;
    (void)work; (void)lwork; (void)rwork; (void)iwork;
    LAP_NONE(info);
#ifdef PCT_HAVE_OPENBLAS
    const float rc = (float)rcond;
    switch (dt) {
    case PCT_FLOAT32: sgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rc, rank, work, &lwork, iwork, info); break;
    case PCT_FLOAT64: dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info); break;
    case PCT_COMPLEX64:
        cgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rc, rank, work, &lwork, rwork, iwork, info);
        break;
    default: zgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork, info); break;
    }
#else
    (void)dt;
#endif
}

void lap_gelss(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *s, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *info)
{
    (void)m; (void)n; (void)nrhs; (void)a; (void)lda; (void)b; (void)ldb; (void)s; (void)rcond; (void)rank;
    (void)work; (void)lwork; (void)rwork;
    LAP_NONE(info);
#ifdef PCT_HAVE_OPENBLAS
    const float rc = (float)rcond;
    switch (dt) {
    case PCT_FLOAT32: sgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rc, rank, work, &lwork, info); break;
    case PCT_FLOAT64: dgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info); break;
    case PCT_COMPLEX64: cgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rc, rank, work, &lwork, rwork, info); break;
    default: zgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, info); break;
    }
#else
    (void)dt;
#endif
}

void lap_sytrf(int dt, bool herm, char uplo, int n, void *a, int lda, int *ipiv, void *work, int lwork, int *info)
{
    (void)uplo; (void)n; (void)a; (void)lda; (void)ipiv; (void)work; (void)lwork;
    LAP_NONE(info);
    if (herm && lap_is_complex(dt)) LAP_CALL4(dt, sytrf, hetrf, &uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
    else LAP_CALL(dt, sytrf, &uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
}

void lap_sytrs(int dt, bool herm, char uplo, int n, int nrhs, const void *a, int lda, const int *ipiv, void *b,
               int ldb, int *info)
{
    (void)uplo; (void)n; (void)nrhs; (void)a; (void)lda; (void)ipiv; (void)b; (void)ldb;
    LAP_NONE(info);
    if (herm && lap_is_complex(dt)) LAP_CALL4(dt, sytrs, hetrs, &uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
    else LAP_CALL(dt, sytrs, &uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}

int lap_lwork(int dt, const void *work, int least)
{
    /* a complex size is the real part of work[0], the first of its pair */
    double w = dt == PCT_FLOAT32 || dt == PCT_COMPLEX64 ? (double)*(const float *)work : *(const double *)work;
    int n = (int)w + 1;
    return n > least ? n : least;
}

int lap_team(int64_t batch, int64_t n)
{
#ifdef _OPENMP
    const int max = omp_get_max_threads();
    if (max <= 1 || omp_in_parallel()) return 1;
    /* Never a batch outside a region: OpenBLAS's own threading of getrf/getrs on tiny matrices costs
     * milliseconds a call on a loaded machine (2000 4 x 4 inverses: 800 ms instead of 1 ms). */
    if (batch > 1) return batch < max ? (int)batch : max;
    return n < 512 ? 2 : 1;
#else
    (void)batch;
    (void)n;
    return 1;
#endif
}

/* ---- shapes and copies ---------------------------------------------------------------- */

void lap_batch_of(const pct_tensor *t, int mdims, lap_batch *b)
{
    b->nb = t->ndim - mdims > 0 ? t->ndim - mdims : 0;
    b->batch = 1;
    for (int i = 0; i < b->nb; i++) {
        b->shape[i] = t->sizes[i];
        b->batch *= t->sizes[i];
    }
}

int lap_batch_broadcast(const pct_tensor *a, int amdims, const pct_tensor *b, int bmdims, lap_batch *out)
{
    const int na = a->ndim - amdims > 0 ? a->ndim - amdims : 0, nbb = b->ndim - bmdims > 0 ? b->ndim - bmdims : 0;
    const int n = na > nbb ? na : nbb;
    out->nb = n;
    out->batch = 1;
    for (int i = 0; i < n; i++) {
        const int ia = i - (n - na), ib = i - (n - nbb);
        const int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        PCT_CHECK(sa == sb || sa == 1 || sb == 1, PCT_ERR_RUNTIME,
                  "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                  (long long)sa, (long long)sb, i);
        out->shape[i] = sa == 1 ? sb : sa;
        out->batch *= out->shape[i];
    }
    return 0;
fail:
    return -1;
}

pct_tensor *lap_empty_cm(const lap_batch *b, int64_t r, int64_t c, int dtype)
{
    int64_t shape[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    const int nb = b->nb;
    memcpy(shape, b->shape, sizeof(int64_t) * (size_t)nb);
    shape[nb] = r;
    shape[nb + 1] = c;
    int64_t acc = r * c;
    st[nb] = 1;
    st[nb + 1] = r > 0 ? r : 1;
    for (int i = nb - 1; i >= 0; i--) {
        st[i] = acc > 0 ? acc : 1;
        acc *= shape[i];
    }
    pct_tensor *t = pct_tensor_empty(nb + 2, shape, dtype, PCT_CPU, -1);
    if (t && pct_tensor_set_shape(t, nb + 2, shape, st) < 0) {
        lap_release(t);
        return NULL;
    }
    return t;
}

pct_tensor *lap_empty(const lap_batch *b, int n, int64_t e0, int64_t e1, int dtype)
{
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, b->shape, sizeof(int64_t) * (size_t)b->nb);
    if (n > 0) shape[b->nb] = e0;
    if (n > 1) shape[b->nb + 1] = e1;
    return pct_tensor_empty(b->nb + n, shape, dtype, PCT_CPU, -1);
}

int lap_copy_into(pct_tensor *dst, pct_tensor *A, int mdims, bool transpose)
{
    const int nd = A->ndim, dn = dst->ndim, nb = dn - mdims, na = nd - mdims;
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        const int ia = i - (nb - na);
        sz[i] = dst->sizes[i];
        st[i] = ia >= 0 && A->sizes[ia] != 1 ? A->strides[ia] : 0;
    }
    for (int i = 0; i < mdims; i++) {
        const int src = transpose && mdims == 2 ? nd - 1 - i : nd - mdims + i;
        sz[nb + i] = dst->sizes[nb + i];
        st[nb + i] = A->strides[src];
    }
    pct_tensor *view = pct_tensor_view_of(A, dn, sz, st, A->offset);
    const int r = view ? pct_copy_(dst, view) : -1;
    lap_release(view);
    return r;
}

pct_tensor *lap_copy_cm(pct_tensor *A, const lap_batch *b, bool transpose, int dtype)
{
    const int nd = A->ndim;
    const int64_t r = A->sizes[nd - (transpose ? 1 : 2)], c = A->sizes[nd - (transpose ? 2 : 1)];
    pct_tensor *dst = lap_empty_cm(b, r, c, dtype);
    if (dst && lap_copy_into(dst, A, 2, transpose) < 0) {
        lap_release(dst);
        return NULL;
    }
    return dst;
}

pct_tensor *lap_copy_batch(pct_tensor *t, int mdims, const lap_batch *b, int dtype)
{
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, b->shape, sizeof(int64_t) * (size_t)b->nb);
    for (int i = 0; i < mdims; i++) shape[b->nb + i] = t->sizes[t->ndim - mdims + i];
    pct_tensor *dst = pct_tensor_empty(b->nb + mdims, shape, dtype, PCT_CPU, -1);
    if (dst && lap_copy_into(dst, t, mdims, false) < 0) {
        lap_release(dst);
        return NULL;
    }
    return dst;
}

int64_t lap_batch_index(const lap_batch *full, const pct_tensor *t, int mdims, int64_t b)
{
    const int nt = t->ndim - mdims;
    int64_t idx = 0, mul = 1;
    for (int i = full->nb - 1; i >= 0; i--) {
        const int64_t coord = b % full->shape[i];
        b /= full->shape[i];
        const int it = i - (full->nb - nt);
        if (it < 0) break;
        if (t->sizes[it] != 1) idx += coord * mul;
        mul *= t->sizes[it];
    }
    return idx;
}

typedef struct {
    int64_t batch;
    size_t scratch;
    lap_body body;
    void *ctx;
    int *info;
    int team;
    int64_t chunk; /* matrices a thread takes at a time: about 8 chunks a thread */
} run_args;

static void run_batch(run_args *r)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(r->team) if (r->team > 1)
#endif
    {
        void *sc = r->scratch ? malloc(r->scratch) : NULL;
        const bool ok = !r->scratch || sc;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, r->chunk)
#endif
        for (int64_t b = 0; b < r->batch; b++) {
            if (!ok) {
                if (r->info) r->info[b] = LAP_NOMEM;
                continue;
            }
            r->body(r->ctx, b, sc);
        }
        free(sc);
    }
}

void lap_run(int64_t batch, int64_t n, size_t scratch, lap_body body, void *ctx, int *info)
{
    if (batch <= 0) return;
    const int team = lap_team(batch, n);
    const int64_t chunk = batch / (8 * (int64_t)team) > 1 ? batch / (8 * (int64_t)team) : 1;
    run_args r = {batch, scratch, body, ctx, info, team, chunk};
    PCT_NOGIL_BEGIN
    run_batch(&r);
    PCT_NOGIL_END
}

pct_tensor *lap_mT(pct_tensor *t)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    const int nd = t->ndim;
    memcpy(sz, t->sizes, sizeof(int64_t) * (size_t)nd);
    memcpy(st, t->strides, sizeof(int64_t) * (size_t)nd);
    sz[nd - 2] = t->sizes[nd - 1]; sz[nd - 1] = t->sizes[nd - 2];
    st[nd - 2] = t->strides[nd - 1]; st[nd - 1] = t->strides[nd - 2];
    return pct_tensor_view_of(t, nd, sz, st, t->offset);
}

void lap_zero_triangle(pct_tensor *t, bool lower)
{
    const int nd = t->ndim;
    const int64_t r = t->sizes[nd - 2], c = t->sizes[nd - 1], mat = r * c;
    if (mat == 0) return;
    const int64_t batch = t->numel / mat, isz = pct_tensor_itemsize(t);
    char *d = pct_tensor_data(t);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < c; j++) {
            /* column j: rows i > j are the strict lower triangle */
            char *col = d + (b * mat + j * r) * isz;
            if (lower) {
                if (j + 1 < r) memset(col + (j + 1) * isz, 0, (size_t)((r - j - 1) * isz));
            } else {
                memset(col, 0, (size_t)((j < r ? j : r) * isz));
            }
        }
}

void lap_conj_(pct_tensor *t)
{
    if (!lap_is_complex(t->dtype)) return;
    /* the imaginary parts: every second real of the (contiguous) storage of t */
    const int64_t n = t->numel;
    if (t->dtype == PCT_COMPLEX64) {
        float *d = (float *)pct_tensor_data(t);
        for (int64_t i = 0; i < n; i++) d[2 * i + 1] = -d[2 * i + 1];
    } else {
        double *d = (double *)pct_tensor_data(t);
        for (int64_t i = 0; i < n; i++) d[2 * i + 1] = -d[2 * i + 1];
    }
}

/* ---- checks and errors ------------------------------------------------------------------- */

int lap_check_matrix(const pct_tensor *A, const char *api, const char *name, bool square, const char *kernel,
                     const char *lowp_kernel)
{
    PCT_CHECK(A->ndim >= 2, PCT_ERR_RUNTIME, "%s: The input tensor %s must have at least 2 dimensions.", api, name);
    PCT_CHECK(!square || A->sizes[A->ndim - 1] == A->sizes[A->ndim - 2], PCT_ERR_RUNTIME,
              "%s: %s must be batches of square matrices, but they are %lld by %lld matrices", api, name,
              (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
    PCT_CHECK(!kernel || pct_dtype_is_differentiable(A->dtype), PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
              kernel, pct_dtype_cpp_name[A->dtype]);
    PCT_CHECK(pct_dtype_is_differentiable(A->dtype), PCT_ERR_RUNTIME,
              "%s: Expected a floating point or complex tensor as input. Got %s", api, pct_dtype_cpp_name[A->dtype]);
    const bool lapack_dtype = A->dtype == PCT_FLOAT32 || A->dtype == PCT_FLOAT64 || lap_is_complex(A->dtype);
    PCT_CHECK(!lowp_kernel || lapack_dtype, PCT_ERR_NOT_IMPLEMENTED,
              "\"%s\" not implemented for '%s'", lowp_kernel, pct_dtype_cpp_name[A->dtype]);
    PCT_CHECK(lapack_dtype, PCT_ERR_RUNTIME,
              "%s: Low precision dtypes not supported. Got %s", api, pct_dtype_cpp_name[A->dtype]);
#ifndef PCT_HAVE_OPENBLAS
    PCT_FAIL(PCT_ERR_RUNTIME, "%s: pyctorch was built without LAPACK (OpenBLAS)", api);
#endif
    PCT_CHECK(A->sizes[A->ndim - 1] <= INT32_MAX / 2 && A->sizes[A->ndim - 2] <= INT32_MAX / 2 &&
              A->sizes[A->ndim - 1] * A->sizes[A->ndim - 2] <= INT32_MAX / 2, PCT_ERR_RUNTIME,
              "%s: the matrices are too large for LAPACK's 32-bit sizes", api);
    return 0;
fail:
    return -1;
}

int lap_check_errors(const int *info, int64_t batch, const char *api, bool is_matrix)
{
    int64_t b = 0;
    while (b < batch && info[b] == 0) b++;
    if (b == batch) return 0;
    const int e = info[b];
    char where[64] = "";
    if (!is_matrix) snprintf(where, sizeof where, ": (Batch element %lld)", (long long)b);
    PCT_CHECK(e != LAP_NOMEM, PCT_ERR_MEMORY, "%s: out of memory", api);
    if (e == -1000) PCT_FAIL(PCT_ERR_RUNTIME, "%s: pyctorch was built without LAPACK (OpenBLAS)", api);
    if (e < 0)
        PCT_FAIL(PCT_ERR_RUNTIME, "%s%s: Argument %d has illegal value. Most certainly there is a bug in the "
                 "implementation calling the backend library.", api, where, -e);
    if (strstr(api, "inv"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The diagonal element %d is zero, the inversion could not be completed because "
                 "the input matrix is singular.", api, where, e);
    if (strstr(api, "solve"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The solver failed because the input matrix is singular.", api, where);
    if (strstr(api, "cholesky"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The factorization could not be completed because the input is not "
                 "positive-definite (the leading minor of order %d is not positive-definite).", api, where, e);
    if (strstr(api, "svd"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The algorithm failed to converge because the input matrix is ill-conditioned "
                 "or has too many repeated singular values (error code: %d).", api, where, e);
    if (strstr(api, "eig") || strstr(api, "syevd"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The algorithm failed to converge because the input matrix is ill-conditioned "
                 "or has too many repeated eigenvalues (error code: %d).", api, where, e);
    if (strstr(api, "lstsq"))
        PCT_FAIL(PCT_ERR_LINALG, "%s%s: The least squares solution could not be computed because the input matrix "
                 "does not have full rank (error code: %d).", api, where, e);
    if (strstr(api, "lu_factor"))
        PCT_FAIL(PCT_ERR_RUNTIME, "%s%s: U[%d,%d] is zero and using it on lu_solve would result in a division by "
                 "zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                 "linalg.lu_factor_ex(A, pivot)", api, where, e, e);
    PCT_FAIL(PCT_ERR_RUNTIME, "%s: Unknown error code: %d.", api, e);
fail:
    return -1;
}

/* ---- results ---------------------------------------------------------------------------- */

void lap_release(pct_tensor *t)
{
    PCT_XDECREF(t);
}

pct_tensor *lap_retain(pct_tensor *t)
{
    PCT_INCREF(t);
    return t;
}

/* out= of another shape is resized to the result's layout (column-major matrices), as torch's
 * structured kernels do; one of the right shape keeps its strides. */
static int copy_out(pct_tensor *o, pct_tensor *r)
{
    const bool same = o->ndim == r->ndim && memcmp(o->sizes, r->sizes, sizeof(int64_t) * (size_t)o->ndim) == 0;
    if (pct_out_check_dtype(o, r->dtype) < 0 || pct_out_resize(o, r->ndim, r->sizes) < 0) return -1;
    if (!same && r->numel > 0 && pct_tensor_set_shape(o, r->ndim, r->sizes, r->strides) < 0) return -1;
    return pct_copy_(o, r);
}

pct_object *lap_finish(int n, pct_tensor **res, pct_tensor **outs)
{
    pct_object *r = NULL;
    for (int i = 0; i < n; i++)
        if (!res[i]) goto done;
    if (outs && outs[0]) {
        for (int i = 0; i < n; i++)
            if (pct_out_check_dtype(outs[i], res[i]->dtype) < 0) goto done;
        for (int i = 0; i < n; i++)
            if (copy_out(outs[i], res[i]) < 0) goto done;
        for (int i = 0; i < n; i++) {
            lap_release(res[i]);
            res[i] = lap_retain(outs[i]);
        }
    }
    r = pct_result_tuple(n, res);
    for (int i = 0; i < n; i++) res[i] = NULL; /* stolen */
done:
    for (int i = 0; i < n; i++) lap_release(res[i]);
    return r;
}

static int legacy_check(const pct_tensor *o, int dtype, int kind, const char *api, const char *what)
{
    if (o->dtype == dtype) return 0;
    const char *from = pct_dtype_cpp_name[dtype], *to = pct_dtype_cpp_name[o->dtype];
    if ((kind == LAP_OUT_CAST || kind == LAP_OUT_CAST_COPY) && pct_can_cast(dtype, o->dtype)) return 0;
    if (kind == LAP_OUT_CAST || kind == LAP_OUT_CAST_COPY)
        PCT_FAIL(PCT_ERR_RUNTIME, "%s: Expected %s to be safely castable from %s dtype, but got %s with dtype %s", api,
                 what, from, what, to);
    if (kind == LAP_OUT_SAME)
        PCT_FAIL(PCT_ERR_RUNTIME, "%s: Expected input and result to have the same dtype, but input has dtype%s and "
                 "result has dtype %s", api, from, to);
    PCT_FAIL(PCT_ERR_RUNTIME, "expected scalar type %s but found %s", from, to);
fail:
    return -1;
}

static int legacy_copy(pct_tensor *o, pct_tensor *r, int kind)
{
    /* torch computes straight into an empty out= of the result's dtype (its layout then column-major) and copies
     * into any other (resized contiguous) */
    if (kind == LAP_OUT_SCALAR || (kind != LAP_OUT_CAST_COPY && o->numel == 0 && o->dtype == r->dtype)) {
        const bool same = o->ndim == r->ndim && memcmp(o->sizes, r->sizes, sizeof(int64_t) * (size_t)o->ndim) == 0;
        if (pct_out_resize(o, r->ndim, r->sizes) < 0) return -1;
        if (!same && r->numel > 0 && pct_tensor_set_shape(o, r->ndim, r->sizes, r->strides) < 0) return -1;
    } else if (pct_out_resize(o, r->ndim, r->sizes) < 0) {
        return -1;
    }
    return pct_copy_(o, r);
}

pct_object *lap_finish1_legacy(pct_tensor *r, pct_tensor *out, int kind, const char *api, const char *what)
{
    if (!r || !out) return (pct_object *)r;
    pct_object *ret = NULL;
    if (legacy_check(out, r->dtype, kind, api, what) == 0 && legacy_copy(out, r, kind) == 0) {
        ret = (pct_object *)lap_retain(out);
    }
    lap_release(r);
    return ret;
}

pct_object *lap_finish_legacy(const char *const *fields, int n, pct_tensor **res, pct_tensor **outs, const char *api)
{
    pct_object *r = NULL;
    for (int i = 0; i < n; i++)
        if (!res[i]) goto done;
    if (outs && outs[0]) {
        for (int i = 0; i < n; i++)
            if (legacy_check(outs[i], res[i]->dtype, LAP_OUT_CAST, api, fields[i]) < 0) goto done;
        for (int i = 0; i < n; i++)
            if (legacy_copy(outs[i], res[i], LAP_OUT_CAST) < 0) goto done;
        for (int i = 0; i < n; i++) {
            lap_release(res[i]);
            res[i] = lap_retain(outs[i]);
        }
    }
    r = pct_result_tuple(n, res);
    for (int i = 0; i < n; i++) res[i] = NULL; /* stolen */
done:
    for (int i = 0; i < n; i++) lap_release(res[i]);
    return r;
}

pct_object *lap_finish1(pct_tensor *r, pct_tensor *out)
{
    if (!r || !out) return (pct_object *)r;
    pct_object *ret = NULL;
    if (copy_out(out, r) == 0) {
        ret = (pct_object *)lap_retain(out);
    }
    lap_release(r);
    return ret;
}
