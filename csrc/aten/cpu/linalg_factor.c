/* linalg_factor.c: the factorisations of torch.linalg through LAPACK (Note [LAPACK layout] in
 * linalg_lapack.h): LU (getrf: linalg.lu_factor_ex), Cholesky (potrf: linalg.cholesky_ex), QR
 * (geqrf + orgqr: linalg.qr, torch.geqrf, linalg.householder_product, torch.ormqr), the symmetric
 * eigendecomposition (syevd: linalg.eigh, linalg.eigvalsh) and LDL^T (sytrf:
 * linalg.ldl_factor_ex). The Python wrappers without _ex (pyctorch/linalg/) check the info
 * tensors through _linalg_check_errors, as torch's do. */
#include "linalg_lapack.h"
#include "linalg_spectral_complex.h"
#include "../out.h"
#include <stdlib.h>
#include <string.h>

/* ---- LU: linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False, pct_object? out=None) ---- */

typedef struct {
    int dt;
    int m, n, k;
    char *a;
    int *piv, *info;
    size_t esz;
} lu_ctx;

static void lu_body(void *vc, int64_t b, void *sc)
{
    (void)sc;
    lu_ctx *c = vc;
    lap_getrf(c->dt, c->m, c->n, c->a + (size_t)b * c->m * c->n * c->esz, c->m > 1 ? c->m : 1, c->piv + b * c->k,
              &c->info[b]);
}

pct_object *pct_cpu_linalg_lu_factor_ex(pct_call *c)
{
    PCT_ARGS(linalg_lu_factor_ex);
    pct_tensor *A = arg.A, *outs[3] = {NULL, NULL, NULL}, *res[3] = {NULL, NULL, NULL};
    if (pct_out_parse_tuple(arg.out, "linalg_lu_factor_ex", 3, outs) < 0) return NULL;
    if (A->ndim < 2) {
        char buf[256];
        PCT_FAIL(PCT_ERR_RUNTIME, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: %s instead",
                 pct_shape_str(buf, sizeof buf, A->ndim, A->sizes));
    }
    PCT_TRY_INT(lap_check_matrix(A, "linalg.lu_factor", "A", false, "lu_cpu", "lu_cpu"));
    PCT_CHECK(arg.pivot, PCT_ERR_RUNTIME, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    PCT_TRY(res[0] = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(res[1] = lap_empty(&bt, 1, k, 0, PCT_INT32));
    PCT_TRY(res[2] = pct_tensor_zeros(bt.nb, bt.shape, PCT_INT32));
    lu_ctx ctx = {A->dtype, (int)m, (int)n, (int)k, pct_tensor_data(res[0]), (int *)pct_tensor_data(res[1]),
                  (int *)pct_tensor_data(res[2]), (size_t)pct_tensor_itemsize(A)};
    if (m > 0 && n > 0) lap_run(bt.batch, k, 0, lu_body, &ctx, ctx.info);
    if (arg.check_errors) PCT_TRY_INT(lap_check_errors(ctx.info, bt.batch, "torch.linalg.lu_factor_ex", A->ndim == 2));
    return lap_finish(3, res, outs);
fail:
    for (int i = 0; i < 3; i++) lap_release(res[i]);
    return NULL;
}

/* ---- Cholesky: linalg_cholesky_ex(Tensor A, *, bool upper=False, bool check_errors=False, pct_object? out=None) ---- */

typedef struct {
    int dt, n;
    char uplo;
    char *a;
    int *info;
    size_t esz;
} chol_ctx;

static void chol_body(void *vc, int64_t b, void *sc)
{
    (void)sc;
    chol_ctx *c = vc;
    char *a = c->a + (size_t)b * c->n * c->n * c->esz;
    lap_potrf(c->dt, c->uplo, c->n, a, c->n > 1 ? c->n : 1, &c->info[b]);
    /* reference LAPACK (and MKL, torch's) stop at a NaN pivot; OpenBLAS's potrf does not */
    for (int i = 0; c->info[b] == 0 && i < c->n; i++) {
        const size_t at = (size_t)i * (size_t)(c->n + 1);
        const double d = pct_load_as_double(a + at * c->esz, c->dt); /* a complex one's real part */
        if (d != d) c->info[b] = i + 1;
    }
}

/* The Cholesky factor of A (lower, or upper), its info in *info (a new int32 tensor). */
static pct_tensor *cholesky(pct_tensor *A, bool upper, const char *api, const char *kernel, pct_tensor **info)
{
    pct_tensor *L = NULL;
    *info = NULL;
    PCT_TRY_INT(lap_check_matrix(A, api, "A", true, kernel, "cholesky_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(L = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(*info = pct_tensor_zeros(bt.nb, bt.shape, PCT_INT32));
    chol_ctx ctx = {A->dtype, (int)n, upper ? 'U' : 'L', pct_tensor_data(L), (int *)pct_tensor_data(*info),
                    (size_t)pct_tensor_itemsize(A)};
    if (n > 0) lap_run(bt.batch, n, 0, chol_body, &ctx, ctx.info);
    lap_zero_triangle(L, upper);
    return L;
fail:
    lap_release(L);
    lap_release(*info);
    *info = NULL;
    return NULL;
}

pct_object *pct_cpu_linalg_cholesky_ex(pct_call *c)
{
    PCT_ARGS(linalg_cholesky_ex);
    pct_tensor *A = arg.A, *outs[2] = {NULL, NULL}, *res[2] = {NULL, NULL};
    if (pct_out_parse_tuple(arg.out, "linalg_cholesky_ex", 2, outs) < 0) return NULL;
    if (!(res[0] = cholesky(A, arg.upper, "linalg.cholesky", NULL, &res[1]))) return NULL;
    if (arg.check_errors &&
        lap_check_errors((int *)pct_tensor_data(res[1]), res[1]->numel, "linalg.cholesky_ex", A->ndim == 2) < 0) {
        lap_release(res[0]);
        lap_release(res[1]);
        return NULL;
    }
    return lap_finish(2, res, outs);
}

/* cholesky(Tensor input, bool upper=False, *, Tensor? out=None): torch's older interface, which
 * raises for a matrix that is not positive-definite. */
pct_object *pct_cpu_cholesky(pct_call *c)
{
    PCT_ARGS(cholesky);
    pct_tensor *A = arg.input;
    /* torch's older interface returns an empty input's contiguous twin before any check */
    if (A->numel == 0 && !c->out) return (pct_object *)pct_tensor_empty(A->ndim, A->sizes, A->dtype, PCT_CPU, -1);
    pct_tensor *info = NULL, *L = cholesky(A, arg.upper, "cholesky", "cholesky_cpu", &info);
    if (!L) return NULL;
    const int r = lap_check_errors((int *)pct_tensor_data(info), info->numel, "cholesky", A->ndim == 2);
    lap_release(info);
    if (r < 0) {
        lap_release(L);
        return NULL;
    }
    return lap_finish1_legacy(L, c->out, LAP_OUT_CAST_COPY, "cholesky", "result");
}

/* ---- QR ----------------------------------------------------------------------------------- */

typedef struct {
    int dt, m, n, k;
    int lwork;
    char *a;   /* the matrices, overwritten by geqrf's reflectors */
    char *tau;
    char *q;   /* Q's matrices (m x qc), or NULL */
    int qc;
    int *info;
    size_t esz;
} qr_ctx;

static void qr_body(void *vc, int64_t b, void *sc)
{
    qr_ctx *c = vc;
    const size_t esz = c->esz, lda = (size_t)(c->m > 1 ? c->m : 1);
    char *a = c->a + (size_t)b * c->m * c->n * esz, *tau = c->tau + (size_t)b * c->k * esz;
    int info = 0;
    lap_geqrf(c->dt, c->m, c->n, a, (int)lda, tau, sc, c->lwork, &info);
    if (info == 0 && c->q) {
        char *q = c->q + (size_t)b * c->m * c->qc * esz;
        const int kk = c->n < c->qc ? c->n : c->qc;
        memcpy(q, a, (size_t)c->m * (size_t)kk * esz);
        if (c->m > 0 && c->qc > 0) lap_orgqr(c->dt, c->m, c->qc, c->k, q, (int)lda, tau, sc, c->lwork, &info);
    }
    c->info[b] = info;
}

/* geqrf of A's matrices (and Q with qc columns when want_q): *a the reflectors (column-major),
 * *tau, *q. 0 or -1 with exception. */
static int qr_compute(pct_tensor *A, const char *api, bool want_q, int qc, pct_tensor **a, pct_tensor **tau,
                      pct_tensor **q)
{
    int *info = NULL;
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    *a = *tau = *q = NULL;
    PCT_TRY(*a = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(*tau = lap_empty(&bt, 1, k, 0, A->dtype));
    if (want_q) PCT_TRY(*q = lap_empty_cm(&bt, m, qc, A->dtype));
    if (bt.batch == 0 || (m == 0 && !want_q)) return 0;
    if (m == 0 || n == 0) { /* Q is the identity */
        if (*q && (*q)->numel) {
            memset(pct_tensor_data(*q), 0, (size_t)((*q)->numel * pct_tensor_itemsize(*q)));
            for (int64_t b = 0; b < bt.batch; b++)
                for (int64_t i = 0; i < m && i < qc; i++)
                    pct_store_double(pct_tensor_data(*q) + ((b * m * qc) + i * m + i) * pct_tensor_itemsize(*q),
                                     A->dtype, 1.0);
        }
        return 0;
    }
    PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "%s: out of memory", api);
    double query[2] = {0, 0};
    int qi = 0, lwork;
    lap_geqrf(A->dtype, (int)m, (int)n, NULL, (int)m, NULL, query, -1, &qi);
    lwork = lap_lwork(A->dtype, query, (int)(n > m ? n : m));
    if (want_q) {
        lap_orgqr(A->dtype, (int)m, qc, (int)k, NULL, (int)m, NULL, query, -1, &qi);
        const int l2 = lap_lwork(A->dtype, query, qc);
        if (l2 > lwork) lwork = l2;
    }
    qr_ctx ctx = {A->dtype, (int)m, (int)n, (int)k, lwork, pct_tensor_data(*a), pct_tensor_data(*tau),
                  *q ? pct_tensor_data(*q) : NULL, qc, info, (size_t)pct_tensor_itemsize(A)};
    lap_run(bt.batch, k, (size_t)lwork * ctx.esz, qr_body, &ctx, info);
    PCT_TRY_INT(lap_check_errors(info, bt.batch, api, A->ndim == 2));
    free(info);
    return 0;
fail:
    free(info);
    lap_release(*a);
    lap_release(*tau);
    lap_release(*q);
    *a = *tau = *q = NULL;
    return -1;
}

/* linalg_qr(Tensor A, str mode="reduced", *, pct_object? out=None) */
pct_object *pct_cpu_linalg_qr(pct_call *c)
{
    PCT_ARGS(linalg_qr);
    pct_tensor *A = arg.A, *outs[2] = {NULL, NULL}, *res[2] = {NULL, NULL}, *a = NULL, *tau = NULL;
    const char *mode = arg.mode;
    if (!mode || pct_out_parse_tuple(arg.out, "linalg_qr", 2, outs) < 0) return NULL;
    const bool complete = strcmp(mode, "complete") == 0, ronly = strcmp(mode, "r") == 0;
    PCT_CHECK(complete || ronly || strcmp(mode, "reduced") == 0, PCT_ERR_RUNTIME,
              "qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or 'complete'", mode);
    PCT_TRY_INT(lap_check_matrix(A, "linalg.qr", "A", false, NULL, "geqrf_cpu"));
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    const int64_t qc = complete ? m : k, rr = complete ? m : k;
    PCT_TRY_INT(qr_compute(A, "linalg.qr", !ronly, (int)qc, &a, &tau, &res[0]));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    if (ronly) {
        const int64_t zero = 0;
        PCT_TRY(res[0] = pct_tensor_empty(1, &zero, A->dtype, PCT_CPU, -1));
    }
    PCT_TRY(res[1] = lap_empty_cm(&bt, rr, n, A->dtype));
    {
        const size_t esz = (size_t)pct_tensor_itemsize(A);
        char *src = pct_tensor_data(a), *dst = pct_tensor_data(res[1]);
        for (int64_t b = 0; b < bt.batch; b++)
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < rr; i++) {
                    char *d = dst + ((b * n + j) * rr + i) * esz;
                    if (i <= j && i < m) memcpy(d, src + ((b * n + j) * m + i) * esz, esz);
                    else memset(d, 0, esz);
                }
    }
    lap_release(a);
    lap_release(tau);
    return lap_finish(2, res, outs);
fail:
    lap_release(a);
    lap_release(tau);
    lap_release(res[0]);
    lap_release(res[1]);
    return NULL;
}

/* geqrf(Tensor input, *, pct_object? out=None) */
pct_object *pct_cpu_geqrf(pct_call *c)
{
    PCT_ARGS(geqrf);
    static const char *const fields[2] = {"a", "tau"};
    pct_tensor *A = arg.input, *outs[2] = {NULL, NULL}, *res[2] = {NULL, NULL}, *q = NULL;
    if (pct_out_parse_tuple(arg.out, "geqrf", 2, outs) < 0) return NULL;
    PCT_CHECK(A->ndim >= 2, PCT_ERR_RUNTIME, "torch.geqrf: input must have at least 2 dimensions.");
    PCT_TRY_INT(lap_check_matrix(A, "torch.geqrf", "input", false, "geqrf_cpu", "geqrf_cpu"));
    PCT_TRY_INT(qr_compute(A, "torch.geqrf", false, 0, &res[0], &res[1], &q));
    return lap_finish_legacy(fields, 2, res, outs,
                             "torch.geqrf");
fail:
    return NULL;
}

typedef struct {
    int dt, m, n, k, lwork;
    char *a, *tau;
    int *info;
    size_t esz;
} hh_ctx;

static void hh_body(void *vc, int64_t b, void *sc)
{
    hh_ctx *c = vc;
    lap_orgqr(c->dt, c->m, c->n, c->k, c->a + (size_t)b * c->m * c->n * c->esz, c->m > 1 ? c->m : 1,
              c->tau + (size_t)b * c->k * c->esz, sc, c->lwork, &c->info[b]);
}

/* linalg_householder_product(Tensor A, Tensor tau, *, Tensor? out=None) (also torch.orgqr) */
static pct_object *householder_product(pct_tensor *A, pct_tensor *tau, pct_tensor *out)
{
    const char *api = "torch.linalg.householder_product";
    pct_tensor *Q = NULL, *t = NULL;
    int *info = NULL;
    PCT_CHECK(A->ndim >= 2, PCT_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", api);
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    PCT_CHECK(m >= n, PCT_ERR_RUNTIME, "%s: input.shape[-2] must be greater than or equal to input.shape[-1]", api);
    PCT_CHECK(tau->ndim >= 1 && n >= tau->sizes[tau->ndim - 1], PCT_ERR_RUNTIME,
              "%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", api);
    PCT_CHECK(A->ndim - tau->ndim == 1, PCT_ERR_RUNTIME,
              "%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim is "
              "equal to %d", api, tau->ndim, A->ndim);
    for (int i = 0; i < A->ndim - 2; i++) {
        char buf[256];
        PCT_CHECK(A->sizes[i] == tau->sizes[i], PCT_ERR_RUNTIME,
                  "%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %s", api,
                  pct_shape_str(buf, sizeof buf, tau->ndim - 1, tau->sizes));
    }
    PCT_CHECK(A->dtype == tau->dtype, PCT_ERR_RUNTIME,
              "%s: tau dtype %s does not match input dtype %s", api, pct_dtype_cpp_name[tau->dtype],
              pct_dtype_cpp_name[A->dtype]);
    PCT_TRY_INT(lap_check_matrix(A, api, "input", false, "orgqr_cpu", "orgqr_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t k = tau->sizes[tau->ndim - 1];
    PCT_TRY(Q = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(t = lap_copy_batch(tau, 1, &bt, A->dtype));
    if (bt.batch > 0 && m > 0 && n > 0) {
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "%s: out of memory", api);
        double query[2] = {0, 0};
        int qi = 0;
        lap_orgqr(A->dtype, (int)m, (int)n, (int)k, NULL, (int)m, NULL, query, -1, &qi);
        hh_ctx ctx = {A->dtype, (int)m, (int)n, (int)k, lap_lwork(A->dtype, query, (int)n), pct_tensor_data(Q),
                      pct_tensor_data(t), info, (size_t)pct_tensor_itemsize(A)};
        lap_run(bt.batch, n, (size_t)ctx.lwork * ctx.esz, hh_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, api, A->ndim == 2));
    }
    free(info);
    lap_release(t);
    return lap_finish1_legacy(Q, out, LAP_OUT_CAST, api, "result");
fail:
    free(info);
    lap_release(Q);
    lap_release(t);
    return NULL;
}

pct_object *pct_cpu_linalg_householder_product(pct_call *c)
{
    PCT_ARGS(linalg_householder_product);
    return householder_product(arg.input, arg.tau, c->out);
}

pct_object *pct_cpu_orgqr(pct_call *c) { PCT_ARGS(orgqr); return householder_product(arg.input, arg.input2, c->out); }

typedef struct {
    int dt, m, n, k, na, acols, lwork;
    char side, trans;
    char *a, *tau, *c;
    int *info;
    size_t esz;
} ormqr_ctx;

static void ormqr_body(void *vc, int64_t b, void *sc)
{
    ormqr_ctx *c = vc;
    lap_ormqr(c->dt, c->side, c->trans, c->m, c->n, c->k, c->a + (size_t)b * c->na * c->acols * c->esz,
              c->na > 1 ? c->na : 1, c->tau + (size_t)b * c->k * c->esz, c->c + (size_t)b * c->m * c->n * c->esz,
              c->m > 1 ? c->m : 1, sc, c->lwork, &c->info[b]);
}

/* ormqr(Tensor input, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor? out=None):
 * Q C, C Q, Q^T C or C Q^T for the Q of geqrf's reflectors (input) and tau (input2). */
pct_object *pct_cpu_ormqr(pct_call *c)
{
    PCT_ARGS(ormqr);
    const char *api = "torch.ormqr";
    pct_tensor *A = arg.input, *tau = arg.input2, *C = arg.input3, *a = NULL, *t = NULL, *X = NULL;
    const bool left = arg.left, trans = arg.transpose;
    int *info = NULL;
    PCT_CHECK(A->ndim >= 2, PCT_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", api);
    PCT_CHECK(C->ndim >= 2, PCT_ERR_RUNTIME, "%s: other must have at least 2 dimensions.", api);
    const int lc = left ? C->ndim - 2 : C->ndim - 1;
    PCT_CHECK(tau->ndim >= 1 && C->sizes[lc] >= tau->sizes[tau->ndim - 1], PCT_ERR_RUNTIME,
              "%s: other.shape[%d] must be greater than or equal to tau.shape[-1]", api, left ? -2 : -1);
    PCT_CHECK(C->sizes[lc] == A->sizes[A->ndim - 2], PCT_ERR_RUNTIME,
              "%s: other.shape[%d] must be equal to input.shape[-2]", api, left ? -2 : -1);
    PCT_CHECK(tau->sizes[tau->ndim - 1] <= A->sizes[A->ndim - 1], PCT_ERR_RUNTIME,
              "%s: tau.shape[-1] must be equal to min(other.shape[%d], input.shape[-1])", api, left ? -2 : -1);
    PCT_CHECK(A->ndim - tau->ndim == 1, PCT_ERR_RUNTIME,
              "%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim is "
              "equal to %d", api, tau->ndim, A->ndim);
    PCT_CHECK(A->ndim == C->ndim, PCT_ERR_RUNTIME,
              "%s: Expected other to have the same number of dimensions as input, but got other.ndim equal to %d and "
              "input.ndim is equal to %d", api, C->ndim, A->ndim);
    for (int i = 0; i < A->ndim - 2; i++)
        PCT_CHECK(A->sizes[i] == tau->sizes[i] && A->sizes[i] == C->sizes[i], PCT_ERR_RUNTIME,
                  "%s: Expected batch dimensions of tau and other to be equal to input.shape[:-2]", api);
    PCT_CHECK(A->dtype == tau->dtype, PCT_ERR_RUNTIME,
              "%s: Expected input and tau to have the same dtype, but input has dtype%s and tau has dtype %s", api,
              pct_dtype_cpp_name[A->dtype], pct_dtype_cpp_name[tau->dtype]);
    PCT_CHECK(A->dtype == C->dtype, PCT_ERR_RUNTIME,
              "%s: Expected input and other to have the same dtype, but input has dtype%s and other has dtype %s", api,
              pct_dtype_cpp_name[A->dtype], pct_dtype_cpp_name[C->dtype]);
    PCT_TRY_INT(lap_check_matrix(A, api, "input", false, "ormqr_cpu", "ormqr_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t m = C->sizes[C->ndim - 2], n = C->sizes[C->ndim - 1], k = tau->sizes[tau->ndim - 1];
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(t = lap_copy_batch(tau, 1, &bt, A->dtype));
    PCT_TRY(X = lap_copy_cm(C, &bt, false, A->dtype));
    if (bt.batch > 0 && m > 0 && n > 0 && k > 0) {
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "%s: out of memory", api);
        double query[2] = {0, 0};
        int qi = 0;
        const int na = (int)A->sizes[A->ndim - 2];
        lap_ormqr(A->dtype, left ? 'L' : 'R', trans ? 'T' : 'N', (int)m, (int)n, (int)k, NULL, na, NULL, NULL, (int)m,
                  query, -1, &qi);
        ormqr_ctx ctx = {A->dtype, (int)m, (int)n, (int)k, na, (int)A->sizes[A->ndim - 1], lap_lwork(A->dtype, query, (int)(m > n ? m : n)),
                         left ? 'L' : 'R', trans ? 'T' : 'N', pct_tensor_data(a), pct_tensor_data(t),
                         pct_tensor_data(X), info, (size_t)pct_tensor_itemsize(A)};
        lap_run(bt.batch, m, (size_t)ctx.lwork * ctx.esz, ormqr_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, api, A->ndim == 2));
    }
    free(info);
    lap_release(a);
    lap_release(t);
    return lap_finish1_legacy(X, c->out, LAP_OUT_SAME, api, "result");
fail:
    free(info);
    lap_release(a);
    lap_release(t);
    lap_release(X);
    return NULL;
}

/* ---- symmetric eigendecomposition: linalg_eigh / linalg_eigvalsh ---------------------------- */

typedef struct {
    int dt, n, lwork, liwork;
    char jobz, uplo;
    char *a, *w;
    int *info;
    size_t esz;
} eigh_ctx;

static void eigh_body(void *vc, int64_t b, void *sc)
{
    eigh_ctx *c = vc;
    int *iwork = (int *)((char *)sc + (size_t)c->lwork * c->esz);
    lap_syevd(c->dt, c->jobz, c->uplo, c->n, c->a + (size_t)b * c->n * c->n * c->esz, c->n > 1 ? c->n : 1,
              c->w + (size_t)b * c->n * c->esz, sc, c->lwork, iwork, c->liwork, &c->info[b]);
}

static int eigh_compute(pct_tensor *A, const char *uplo, bool vectors, pct_tensor **w, pct_tensor **v)
{
    int *info = NULL;
    pct_tensor *a = NULL;
    *w = *v = NULL;
    PCT_CHECK((uplo[0] == 'L' || uplo[0] == 'U' || uplo[0] == 'l' || uplo[0] == 'u') && uplo[1] == 0,
              PCT_ERR_RUNTIME, "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
    if (pct_dtype_is_complex(A->dtype)) return lapc_eigh(A, (char)(uplo[0] & ~0x20), vectors, w, v);
    PCT_TRY_INT(lap_check_matrix(A, "linalg.eigh", "A", true, "linalg_eigh_cpu", "linalg_eigh_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(*w = lap_empty(&bt, 1, n, 0, A->dtype));
    if (bt.batch > 0 && n > 0) {
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.eigh: out of memory");
        double query[2] = {0, 0};
        int iq = 0, qi = 0;
        const char jobz = vectors ? 'V' : 'N', up = (char)(uplo[0] & ~0x20);
        lap_syevd(A->dtype, jobz, up, (int)n, NULL, (int)n, NULL, query, -1, &iq, -1, &qi);
        eigh_ctx ctx = {A->dtype, (int)n, lap_lwork(A->dtype, query, (int)(2 * n + 1)), iq > 1 ? iq : 1, jobz, up,
                        pct_tensor_data(a), pct_tensor_data(*w), info, (size_t)pct_tensor_itemsize(A)};
        lap_run(bt.batch, n, (size_t)ctx.lwork * ctx.esz + sizeof(int) * (size_t)ctx.liwork, eigh_body, &ctx, info);
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

/* linalg_eigh(Tensor A, str UPLO="L", *, pct_object? out=None) */
pct_object *pct_cpu_linalg_eigh(pct_call *c)
{
    PCT_ARGS(linalg_eigh);
    pct_tensor *outs[2] = {NULL, NULL}, *res[2];
    if (pct_out_parse_tuple(arg.out, "linalg_eigh", 2, outs) < 0) return NULL;
    if (eigh_compute(arg.A, arg.UPLO, true, &res[0], &res[1]) < 0) return NULL;
    return lap_finish(2, res, outs);
}

/* linalg_eigvalsh(Tensor A, str UPLO="L", *, Tensor? out=None) */
pct_object *pct_cpu_linalg_eigvalsh(pct_call *c)
{
    PCT_ARGS(linalg_eigvalsh);
    pct_tensor *w, *v;
    if (eigh_compute(arg.A, arg.UPLO, false, &w, &v) < 0) return NULL;
    return lap_finish1(w, c->out);
}

/* ---- LDL^T: linalg_ldl_factor_ex(Tensor A, *, bool hermitian=False, bool check_errors=False, pct_object? out=None) ---- */

typedef struct {
    int dt, n, lwork;
    bool herm;
    char *a;
    int *piv, *info;
    size_t esz;
} ldl_ctx;

static void ldl_body(void *vc, int64_t b, void *sc)
{
    ldl_ctx *c = vc;
    lap_sytrf(c->dt, c->herm, 'L', c->n, c->a + (size_t)b * c->n * c->n * c->esz, c->n > 1 ? c->n : 1, c->piv + b * c->n, sc,
              c->lwork, &c->info[b]);
}

pct_object *pct_cpu_linalg_ldl_factor_ex(pct_call *c)
{
    PCT_ARGS(linalg_ldl_factor_ex);
    pct_tensor *A = arg.A, *outs[3] = {NULL, NULL, NULL}, *res[3] = {NULL, NULL, NULL};
    if (pct_out_parse_tuple(arg.out, "linalg_ldl_factor_ex", 3, outs) < 0) return NULL;
    PCT_TRY_INT(lap_check_matrix(A, "torch.linalg.ldl_factor_ex", "A", true, NULL, "ldl_factor_kernel_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(res[0] = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(res[1] = lap_empty(&bt, 1, n, 0, PCT_INT32));
    PCT_TRY(res[2] = pct_tensor_zeros(bt.nb, bt.shape, PCT_INT32));
    if (bt.batch > 0 && n > 0) {
        double query[2] = {0, 0};
        int qi = 0, ipq = 0;
        lap_sytrf(A->dtype, arg.hermitian, 'L', (int)n, NULL, (int)n, &ipq, query, -1, &qi);
        ldl_ctx ctx = {A->dtype, (int)n, lap_lwork(A->dtype, query, (int)n), arg.hermitian, pct_tensor_data(res[0]),
                       (int *)pct_tensor_data(res[1]), (int *)pct_tensor_data(res[2]), (size_t)pct_tensor_itemsize(A)};
        lap_run(bt.batch, n, (size_t)ctx.lwork * ctx.esz, ldl_body, &ctx, ctx.info);
    }
    lap_zero_triangle(res[0], false);
    if (arg.check_errors)
        PCT_TRY_INT(lap_check_errors((int *)pct_tensor_data(res[2]), bt.batch, "torch.linalg.ldl_factor_ex",
                                     A->ndim == 2));
    return lap_finish(3, res, outs);
fail:
    for (int i = 0; i < 3; i++) lap_release(res[i]);
    return NULL;
}
