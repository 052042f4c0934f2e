/* linalg_solve.c: the solvers of torch.linalg through LAPACK (Note [LAPACK layout] in
 * linalg_lapack.h): inverses (getrf + getrs on the identity: linalg.inv_ex), linear systems (getrf + getrs:
 * linalg.solve_ex, linalg.lu_solve), determinants (getrf: linalg.det, linalg.slogdet),
 * triangular systems (trsm: linalg.solve_triangular), least squares (gels, gelsy, gelsd, gelss:
 * linalg.lstsq), LDL^T systems (sytrs: linalg.ldl_solve) and torch._linalg_check_errors. */
#include "linalg_lapack.h"
#include "../out.h"
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- _linalg_check_errors(Tensor info, str api_name, *, bool is_matrix) ---- */
pct_object *pct_cpu_linalg_check_errors(pct_call *c)
{
    PCT_ARGS(linalg_check_errors);
    pct_tensor *info = arg.info, *ci = NULL;
    const char *api = arg.api_name;
    if (!api) return NULL;
    PCT_CHECK(info->dtype == PCT_INT32, PCT_ERR_RUNTIME, "_linalg_check_errors: info must be an int32 tensor");
    lap_batch bt;
    lap_batch_of(info, 0, &bt);
    PCT_TRY(ci = lap_copy_batch(info, 0, &bt, PCT_INT32));
    const int r = lap_check_errors((const int *)pct_tensor_data(ci), ci->numel, api, arg.is_matrix);
    lap_release(ci);
    if (r < 0) return NULL;
    return pct_none();
fail:
    return NULL;
}

/* ---- LU of a batch (shared by inv, solve, det) ---- */

typedef struct {
    int dt, n, nrhs, lwork;
    char *a, *b;          /* LU (n x n), right-hand sides (n x nrhs) or NULL */
    int *piv, *info;
    const int64_t *amap;  /* b's matrix -> a's matrix (NULL: the same) */
    char trans;
    int mode;             /* 0 LU only, 1 inverse (getrs into b, the identity), 3 determinant */
    char *r0, *r1;        /* det / slogdet results */
    size_t esz;
    size_t r1sz;          /* r1's element size (the real dtype's) */
} lu_ctx;

/* The determinant of matrix b from its LU (a, piv): the product of U's diagonal, negated per row swap; for slogdet
 * (c->r1) the sign (the product of the diagonal's phases, 0 where an element is 0 or NaN, as torch's) and
 * log |det| (in the real dtype). */
static void det_of_lu(lu_ctx *c, const char *a, const int *piv, int64_t b)
{
    if (!lap_is_complex(c->dt)) {
        double prod = 1.0, logabs = 0.0;
        bool swap = false, neg = false, zero = false, nan = false;
        for (int i = 0; i < c->n; i++) {
            const double d = pct_load_as_double(a + (size_t)i * (size_t)(c->n + 1) * c->esz, c->dt);
            swap ^= piv[i] != i + 1;
            neg ^= d < 0;
            zero |= d == 0;
            nan |= d != d;
            prod *= d;
            logabs += log(fabs(d));
        }
        const double det = swap ? -prod : prod, sign /* a NaN's sign is 0, as torch's */ = nan || zero ? 0.0 : (neg != swap) ? -1.0 : 1.0;
        pct_store_double(c->r0 + (size_t)b * c->esz, c->dt, c->r1 ? sign : det);
        if (c->r1) pct_store_double(c->r1 + (size_t)b * c->r1sz, c->dt, logabs);
        c->info[b] = 0;
        return;
    }
    double complex prod = 1.0, phase = 1.0;
    double logabs = 0.0;
    bool swap = false, zero = false, nan = false;
    for (int i = 0; i < c->n; i++) {
        double re, im;
        pct_load_as_complex(a + (size_t)i * (size_t)(c->n + 1) * c->esz, c->dt, &re, &im);
        const double complex d = re + I * im;
        const double ad = cabs(d);
        swap ^= piv[i] != i + 1;
        zero |= ad == 0;
        nan |= re != re || im != im;
        prod *= d;
        if (ad > 0) phase *= d / ad;
        logabs += log(ad);
    }
    const double complex det = swap ? -prod : prod;
    const double complex sign = nan || zero ? 0.0 : swap ? -phase : phase;
    const double complex r0 = c->r1 ? sign : det;
    pct_store_complex(c->r0 + (size_t)b * c->esz, c->dt, creal(r0), cimag(r0));
    if (c->r1) pct_store_double(c->r1 + (size_t)b * c->r1sz, lap_real_dtype(c->dt), logabs);
    c->info[b] = 0;
}

static void lu_body(void *vc, int64_t b, void *sc)
{
    (void)sc;
    lu_ctx *c = vc;
    const size_t nn = (size_t)c->n * (size_t)c->n;
    const int lda = c->n > 1 ? c->n : 1;
    char *a = c->a + (size_t)b * nn * c->esz;
    int *piv = c->piv + b * c->n;
    lap_getrf(c->dt, c->n, c->n, a, lda, piv, &c->info[b]);
    if (c->mode == 1 && c->info[b] == 0) /* the inverse solves A X = I, as torch's */
        lap_getrs(c->dt, 'N', c->n, c->n, a, lda, piv, c->b + (size_t)b * nn * c->esz, lda, &c->info[b]);
    if (c->mode == 3) det_of_lu(c, a, piv, b);
}

static void getrs_body(void *vc, int64_t b, void *sc)
{
    (void)sc;
    lu_ctx *c = vc;
    const int64_t ai = c->amap ? c->amap[b] : b;
    if (c->info[ai] != 0) return;
    const int lda = c->n > 1 ? c->n : 1;
    int info = 0;
    lap_getrs(c->dt, c->trans, c->n, c->nrhs, c->a + (size_t)ai * c->n * c->n * c->esz, lda, c->piv + ai * c->n,
              c->b + (size_t)b * c->n * c->nrhs * c->esz, lda, &info);
    if (info != 0) c->info[ai] = info;
}

/* ---- inverse: linalg_inv_ex(Tensor A, *, bool check_errors=False, pct_object? out=None): getrf, then getrs on I ---- */
pct_object *pct_cpu_linalg_inv_ex(pct_call *c)
{
    PCT_ARGS(linalg_inv_ex);
    pct_tensor *A = arg.A, *outs[2] = {NULL, NULL}, *res[2] = {NULL, NULL}, *lu = NULL;
    int *piv = NULL;
    if (pct_out_parse_tuple(arg.out, "linalg_inv_ex", 2, outs) < 0) return NULL;
    PCT_TRY_INT(lap_check_matrix(A, "linalg.inv", "A", true, NULL, NULL));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(lu = lap_copy_cm(A, &bt, false, A->dtype));
    PCT_TRY(res[0] = lap_empty_cm(&bt, n, n, A->dtype));
    PCT_TRY(res[1] = pct_tensor_zeros(bt.nb, bt.shape, PCT_INT32));
    {
        const int64_t isz = pct_tensor_itemsize(A);
        char *d = pct_tensor_data(res[0]);
        memset(d, 0, (size_t)(res[0]->numel * isz));
        for (int64_t b = 0; b < bt.batch; b++)
            for (int64_t i = 0; i < n; i++) pct_store_double(d + ((b * n + i) * n + i) * isz, A->dtype, 1.0);
    }
    if (bt.batch > 0 && n > 0) {
        PCT_CHECK(piv = malloc(sizeof(int) * (size_t)(bt.batch * n)), PCT_ERR_MEMORY, "linalg.inv: out of memory");
        lu_ctx ctx = {A->dtype, (int)n, (int)n, 0, pct_tensor_data(lu), pct_tensor_data(res[0]), piv,
                      (int *)pct_tensor_data(res[1]), NULL, 'N', 1, NULL, NULL, (size_t)pct_tensor_itemsize(A), 0};
        lap_run(bt.batch, n, 0, lu_body, &ctx, ctx.info);
    }
    free(piv);
    piv = NULL;
    lap_release(lu);
    lu = NULL;
    if (arg.check_errors)
        PCT_TRY_INT(lap_check_errors((int *)pct_tensor_data(res[1]), bt.batch, "linalg.inv_ex", A->ndim == 2));
    return lap_finish(2, res, outs);
fail:
    free(piv);
    lap_release(lu);
    lap_release(res[0]);
    lap_release(res[1]);
    return NULL;
}

/* ---- determinants: linalg_det(Tensor A, *, Tensor? out=None), linalg_slogdet / slogdet ---- */

static int det_compute(pct_tensor *A, const char *api, bool logs, pct_tensor **r0, pct_tensor **r1)
{
    pct_tensor *a = NULL;
    int *piv = NULL, *info = NULL;
    *r0 = *r1 = NULL;
    PCT_TRY_INT(lap_check_matrix(A, api, "A", true, NULL, logs ? NULL : "lu_cpu"));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_TRY(*r0 = lap_empty(&bt, 0, 0, 0, A->dtype));
    if (logs) PCT_TRY(*r1 = lap_empty(&bt, 0, 0, 0, lap_real_dtype(A->dtype)));
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    if (bt.batch > 0) {
        PCT_CHECK((piv = malloc(sizeof(int) * (size_t)(bt.batch * (n + 1)))) &&
                  (info = calloc((size_t)bt.batch, sizeof(int))), PCT_ERR_MEMORY, "%s: out of memory", api);
        lu_ctx ctx = {A->dtype, (int)n, 0, 0, pct_tensor_data(a), NULL, piv, info, NULL, 'N', 3, pct_tensor_data(*r0),
                      *r1 ? pct_tensor_data(*r1) : NULL, (size_t)pct_tensor_itemsize(A),
                      (size_t)pct_dtype_itemsize[lap_real_dtype(A->dtype)]};
        lap_run(bt.batch, n, 0, lu_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, api, A->ndim == 2));
    }
    free(piv);
    free(info);
    lap_release(a);
    return 0;
fail:
    free(piv);
    free(info);
    lap_release(a);
    lap_release(*r0);
    lap_release(*r1);
    *r0 = *r1 = NULL;
    return -1;
}

static pct_object *det(pct_tensor *A, pct_tensor *out)
{
    pct_tensor *d, *unused;
    if (det_compute(A, "linalg.det", false, &d, &unused) < 0) return NULL;
    return lap_finish1(d, out);
}

pct_object *pct_cpu_linalg_det(pct_call *c) { PCT_ARGS(linalg_det); return det(arg.A, c->out); }
pct_object *pct_cpu_det(pct_call *c) { PCT_ARGS(det); return det(arg.input, c->out); }

static pct_object *slogdet(pct_tensor *A, pct_object *out)
{
    pct_tensor *outs[2] = {NULL, NULL}, *res[2];
    if (pct_out_parse_tuple(out, "linalg_slogdet", 2, outs) < 0) return NULL;
    if (det_compute(A, "linalg.slogdet", true, &res[0], &res[1]) < 0) return NULL;
    return lap_finish(2, res, outs);
}

/* linalg_slogdet(Tensor A, *, pct_object? out=None) */
pct_object *pct_cpu_linalg_slogdet(pct_call *c)
{
    PCT_ARGS(linalg_slogdet);
    return slogdet(arg.A, arg.out);
}

/* slogdet(Tensor input, *, pct_object? out=None) */
pct_object *pct_cpu_slogdet(pct_call *c)
{
    PCT_ARGS(slogdet);
    return slogdet(arg.input, arg.out);
}

/* ---- linear systems: linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, pct_object? out=None) ---- */

/* torch's linalg_solve_is_vector_rhs: B is a vector (or a batch of vectors matching A.shape[:-1]) */
static bool vector_rhs(const pct_tensor *A, const pct_tensor *B)
{
    if (B->ndim == 1) return true;
    if (B->ndim != A->ndim - 1) return false;
    for (int i = 0; i < B->ndim; i++)
        if (B->sizes[i] != A->sizes[i]) return false;
    return true;
}

/* A view of B (..., n) as (..., n, 1). */
static pct_tensor *unsqueeze_last(pct_tensor *B)
{
    int64_t sz[PCT_MAX_DIMS], st[PCT_MAX_DIMS];
    memcpy(sz, B->sizes, sizeof(int64_t) * (size_t)B->ndim);
    memcpy(st, B->strides, sizeof(int64_t) * (size_t)B->ndim);
    sz[B->ndim] = 1;
    st[B->ndim] = 1;
    return pct_tensor_view_of(B, B->ndim + 1, sz, st, B->offset);
}

/* A view of X (..., n, 1) as (..., n) (X column-major, so the n values are contiguous). */
static pct_tensor *squeeze_last(pct_tensor *X)
{
    pct_tensor *r = pct_tensor_view_of(X, X->ndim - 1, X->sizes, X->strides, X->offset);
    lap_release(X);
    return r;
}

static int64_t *batch_map(const lap_batch *full, const pct_tensor *A)
{
    int64_t *map = malloc(sizeof(int64_t) * (size_t)(full->batch > 0 ? full->batch : 1));
    PCT_CHECK(map, PCT_ERR_MEMORY, "linalg.solve: out of memory");
    for (int64_t b = 0; b < full->batch; b++) map[b] = lap_batch_index(full, A, 2, b);
    return map;
fail:
    return NULL;
}

pct_object *pct_cpu_linalg_solve_ex(pct_call *c)
{
    PCT_ARGS(linalg_solve_ex);
    pct_tensor *A = arg.A, *B0 = arg.B, *B = NULL, *outs[2] = {NULL, NULL}, *res[2] = {NULL, NULL}, *lu = NULL;
    int *piv = NULL;
    int64_t *map = NULL;
    const bool left = arg.left;
    if (pct_out_parse_tuple(arg.out, "linalg_solve_ex", 2, outs) < 0) return NULL;
    PCT_TRY_INT(lap_check_matrix(A, "linalg.solve", "A", true, NULL, "lu_cpu"));
    PCT_CHECK(A->dtype == B0->dtype, PCT_ERR_RUNTIME,
              "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
              pct_dtype_cpp_name[A->dtype], pct_dtype_cpp_name[B0->dtype]);
    const bool vec = vector_rhs(A, B0);
    PCT_TRY(B = vec ? unsqueeze_last(B0) : lap_retain(B0));
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_CHECK(B->ndim >= 2 && (left ? B->sizes[B->ndim - 2] : B->sizes[B->ndim - 1]) == n, PCT_ERR_RUNTIME,
              "linalg.solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
              left ? "AX = B" : "XA = B", (long long)n, (long long)n,
              (long long)(B->ndim >= 2 ? B->sizes[B->ndim - 2] : 1), (long long)B->sizes[B->ndim - 1]);
    PCT_CHECK(!vec || left, PCT_ERR_RUNTIME,
              "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
              "linalg.solve is equivalent to B / A.squeeze(-1)");
    lap_batch ab, full;
    lap_batch_of(A, 2, &ab);
    PCT_TRY_INT(lap_batch_broadcast(B, 2, A, 2, &full)); /* torch broadcasts B against A */
    const int64_t k = left ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2];
    PCT_TRY(lu = lap_copy_cm(A, &ab, false, A->dtype));
    PCT_TRY(res[0] = lap_copy_cm(B, &full, !left, A->dtype));
    PCT_TRY(res[1] = pct_tensor_zeros(ab.nb, ab.shape, PCT_INT32));
    if (ab.batch > 0 && n > 0) {
        PCT_CHECK(piv = malloc(sizeof(int) * (size_t)(ab.batch * n)), PCT_ERR_MEMORY, "linalg.solve: out of memory");
        PCT_TRY(map = batch_map(&full, A));
        lu_ctx ctx = {A->dtype, (int)n, (int)k, 0, pct_tensor_data(lu), pct_tensor_data(res[0]), piv,
                      (int *)pct_tensor_data(res[1]), map, left ? 'N' : 'T', 0, NULL, NULL,
                      (size_t)pct_tensor_itemsize(A), 0};
        lap_run(ab.batch, n, 0, lu_body, &ctx, ctx.info);
        if (k > 0) lap_run(full.batch, n, 0, getrs_body, &ctx, NULL);
    }
    free(piv);
    free(map);
    piv = NULL;
    map = NULL;
    lap_release(lu);
    lu = NULL;
    if (arg.check_errors)
        PCT_TRY_INT(lap_check_errors((int *)pct_tensor_data(res[1]), ab.batch, "torch.linalg.solve_ex", A->ndim == 2));
    if (!left) {
        pct_tensor *t = res[0];
        res[0] = lap_mT(t);
        lap_release(t);
        PCT_TRY(res[0]);
    } else if (vec) {
        PCT_TRY(res[0] = squeeze_last(res[0]));
    }
    lap_release(B);
    return lap_finish(2, res, outs);
fail:
    free(piv);
    free(map);
    lap_release(lu);
    lap_release(B);
    lap_release(res[0]);
    lap_release(res[1]);
    return NULL;
}

/* ---- linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, Tensor? out=None) ---- */
pct_object *pct_cpu_linalg_lu_solve(pct_call *c)
{
    PCT_ARGS(linalg_lu_solve);
    pct_tensor *LU = arg.LU, *P = arg.pivots, *B = arg.B, *lu = NULL, *piv = NULL, *X = NULL;
    const bool left = arg.left, adjoint = arg.adjoint;
    PCT_TRY_INT(lap_check_matrix(LU, "linalg.lu_solve", "LU", true, NULL, "linalg.lu_solve_cpu"));
    PCT_CHECK(B->ndim >= 2, PCT_ERR_RUNTIME, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
    PCT_CHECK(P->dtype == PCT_INT32, PCT_ERR_RUNTIME,
              "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
    PCT_CHECK(LU->dtype == B->dtype, PCT_ERR_RUNTIME,
              "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s and B of type %s "
              "instead", pct_dtype_cpp_name[LU->dtype], pct_dtype_cpp_name[B->dtype]);
    const int64_t n = LU->sizes[LU->ndim - 1];
    PCT_CHECK((left ? B->sizes[B->ndim - 2] : B->sizes[B->ndim - 1]) == n, PCT_ERR_RUNTIME,
              "linalg.lu_solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
              left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
              (long long)B->sizes[B->ndim - 1]);
    PCT_CHECK(P->ndim == LU->ndim - 1 && P->sizes[P->ndim - 1] == n, PCT_ERR_RUNTIME,
              "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
    for (int i = 0; i < P->ndim - 1; i++)
        PCT_CHECK(P->sizes[i] == LU->sizes[i], PCT_ERR_RUNTIME,
                  "linalg.lu_solve: Expected LU.shape[:-2] == pivots.shape[:-1]");
    lap_batch full;
    PCT_TRY_INT(lap_batch_broadcast(LU, 2, B, 2, &full));
    const int64_t k = left ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2];
    PCT_TRY(lu = lap_copy_cm(LU, &full, false, LU->dtype));
    PCT_TRY(piv = lap_copy_batch(P, 1, &full, PCT_INT32));
    {
        const int *pv = (const int *)pct_tensor_data(piv);
        for (int64_t i = 0; i < piv->numel; i++)
            PCT_CHECK(pv[i] >= 1 && pv[i] <= n, PCT_ERR_RUNTIME,
                      "linalg.lu_solve: the pivots must be between 1 and %lld, but got %d", (long long)n, pv[i]);
    }
    PCT_TRY(X = lap_copy_cm(B, &full, !left, LU->dtype));
    if (full.batch > 0 && n > 0 && k > 0) {
        int *info = calloc((size_t)full.batch, sizeof(int));
        PCT_CHECK(info, PCT_ERR_MEMORY, "linalg.lu_solve: out of memory");
        /* left: A X = B ('N') or A^H X = B ('C'; 'T' for a real A); right: X A = B is A^T X^T = B^T ('T'), and
         * X A^H = B is A conj(X^T) = conj(B^T), a solve 'N' between two conjugations of the data */
        const bool cplx = lap_is_complex(LU->dtype), conj_around = cplx && !left && adjoint;
        const char trans = (adjoint != !left) ? (cplx && left ? 'C' : 'T') : 'N';
        lu_ctx ctx = {LU->dtype, (int)n, (int)k, 0, pct_tensor_data(lu), pct_tensor_data(X), (int *)pct_tensor_data(piv),
                      info, NULL, trans, 0, NULL, NULL, (size_t)pct_tensor_itemsize(LU), 0};
        if (conj_around) lap_conj_(X);
        lap_run(full.batch, n, 0, getrs_body, &ctx, NULL);
        if (conj_around) lap_conj_(X);
        free(info);
    }
    lap_release(lu);
    lap_release(piv);
    if (!left) {
        pct_tensor *t = X;
        X = lap_mT(t);
        lap_release(t);
        if (!X) return NULL;
    }
    return lap_finish1(X, c->out);
fail:
    lap_release(lu);
    lap_release(piv);
    lap_release(X);
    return NULL;
}

/* ---- triangular systems: linalg_solve_triangular(Tensor A, Tensor B, *, bool upper, bool left=True,
 *      bool unitriangular=False, Tensor? out=None) ---- */

typedef struct {
    int dt, n, m, k;
    char side, uplo, diag;
    char *a, *b;
    size_t esz;
} trsm_ctx;

static void trsm_body(void *vc, int64_t b, void *sc)
{
    (void)sc;
    trsm_ctx *c = vc;
    lap_trsm(c->dt, c->side, c->uplo, 'N', c->diag, c->m, c->k, c->a + (size_t)b * c->n * c->n * c->esz,
             c->n > 1 ? c->n : 1, c->b + (size_t)b * c->m * c->k * c->esz, c->m > 1 ? c->m : 1);
}

pct_object *pct_cpu_linalg_solve_triangular(pct_call *c)
{
    PCT_ARGS(linalg_solve_triangular);
    pct_tensor *A = arg.A, *B = arg.B, *a = NULL, *X = NULL;
    const bool upper = arg.upper, left = arg.left, unit = arg.unitriangular;
    PCT_TRY_INT(lap_check_matrix(A, "linalg.solve_triangular", "A", true, "triangular_solve_cpu",
                                 "triangular_solve_cpu"));
    PCT_CHECK(B->ndim >= 2, PCT_ERR_RUNTIME,
              "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
    const int64_t n = A->sizes[A->ndim - 1];
    PCT_CHECK((left ? B->sizes[B->ndim - 2] : B->sizes[B->ndim - 1]) == n, PCT_ERR_RUNTIME,
              "linalg.solve_triangular: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
              left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
              (long long)B->sizes[B->ndim - 1]);
    const int dt = A->dtype; /* torch solves in A's dtype */
    lap_batch full;
    PCT_TRY_INT(lap_batch_broadcast(A, 2, B, 2, &full));
    PCT_TRY(a = lap_copy_cm(A, &full, false, dt));
    PCT_TRY(X = lap_copy_cm(B, &full, false, dt));
    const int64_t m = B->sizes[B->ndim - 2], k = B->sizes[B->ndim - 1];
    if (full.batch > 0 && m > 0 && k > 0) {
        trsm_ctx ctx = {dt, (int)n, (int)m, (int)k, left ? 'L' : 'R', upper ? 'U' : 'L', unit ? 'U' : 'N',
                        pct_tensor_data(a), pct_tensor_data(X), (size_t)pct_dtype_itemsize[dt]};
        lap_run(full.batch, n, 0, trsm_body, &ctx, NULL);
    }
    lap_release(a);
    return lap_finish1_legacy(X, c->out, LAP_OUT_SCALAR, "linalg.solve_triangular", "result");
fail:
    lap_release(a);
    lap_release(X);
    return NULL;
}

/* ---- least squares: linalg_lstsq(Tensor A, Tensor B, float? rcond=None, *, str? driver=None) ---- */

enum { GELS, GELSY, GELSD, GELSS };

typedef struct {
    int dt, m, n, k, mx, driver, lwork, lrwork;
    double rcond;
    char *a, *b, *s;
    int64_t *rank;
    int *info;
    size_t esz, ssz; /* the element sizes of dt and of its real type (s, rwork) */
} lstsq_ctx;

static void lstsq_body(void *vc, int64_t bi, void *sc)
{
    lstsq_ctx *c = vc;
    const int lda = c->m > 1 ? c->m : 1, ldb = c->mx > 1 ? c->mx : 1, mn = c->m < c->n ? c->m : c->n;
    char *a = c->a + (size_t)bi * c->m * c->n * c->esz, *b = c->b + (size_t)bi * c->mx * c->k * c->esz;
    char *s = c->s ? c->s + (size_t)bi * mn * c->ssz : NULL;
    /* scratch: work (lwork elements), rwork (lrwork reals: complex dt only), then iwork; the reals stay aligned
     * to their size (OpenBLAS's kernels need it) */
    void *rw = (char *)sc + (size_t)c->lwork * c->esz;
    int rank = 0, *iw = (int *)((char *)rw + (size_t)c->lrwork * c->ssz);
    switch (c->driver) {
    case GELS: lap_gels(c->dt, c->m, c->n, c->k, a, lda, b, ldb, sc, c->lwork, &c->info[bi]); break;
    case GELSY:
        memset(iw, 0, sizeof(int) * (size_t)(c->n > 0 ? c->n : 1));
        lap_gelsy(c->dt, c->m, c->n, c->k, a, lda, b, ldb, iw, c->rcond, &rank, sc, c->lwork, rw, &c->info[bi]);
        break;
    case GELSD:
        lap_gelsd(c->dt, c->m, c->n, c->k, a, lda, b, ldb, s, c->rcond, &rank, sc, c->lwork, rw, iw, &c->info[bi]);
        break;
    default: lap_gelss(c->dt, c->m, c->n, c->k, a, lda, b, ldb, s, c->rcond, &rank, sc, c->lwork, rw, &c->info[bi]); break;
    }
    if (c->rank) c->rank[bi] = rank;
}

pct_object *pct_cpu_linalg_lstsq(pct_call *c)
{
    PCT_ARGS(linalg_lstsq);
    const char *api = "torch.linalg.lstsq";
    pct_tensor *A = arg.A, *B0 = arg.B, *B = NULL, *a = NULL, *X = NULL, *res[4] = {NULL, NULL, NULL, NULL};
    int *info = NULL;
    PCT_CHECK(A->ndim >= 2, PCT_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", api);
    PCT_CHECK(B0->ndim >= 1, PCT_ERR_RUNTIME, "%s: other must have at least 1 dimension.", api);
    PCT_CHECK(A->ndim - B0->ndim >= 0 && A->ndim - B0->ndim <= 1, PCT_ERR_RUNTIME,
              "%s: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1", api);
    PCT_CHECK(A->dtype == B0->dtype, PCT_ERR_RUNTIME,
              "%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s",
              api, pct_dtype_cpp_name[A->dtype], pct_dtype_cpp_name[B0->dtype]);
    PCT_CHECK(A->dtype == PCT_FLOAT32 || A->dtype == PCT_FLOAT64 || lap_is_complex(A->dtype) ||
              !pct_dtype_is_differentiable(A->dtype),
              PCT_ERR_RUNTIME, "This function doesn't handle types other than float and double");
    PCT_TRY_INT(lap_check_matrix(A, api, "input", false, NULL, NULL));
    const bool vec = B0->ndim == A->ndim - 1;
    PCT_TRY(B = vec ? unsqueeze_last(B0) : lap_retain(B0));
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = B->sizes[B->ndim - 1];
    const int64_t mx = m > n ? m : n, mn = m < n ? m : n;
    int driver = GELSY;
    if (!(arg.driver == NULL)) {
        const char *d = arg.driver;
        if (!d) goto fail;
        driver = !strcmp(d, "gels") ? GELS : !strcmp(d, "gelsy") ? GELSY : !strcmp(d, "gelsd") ? GELSD
                 : !strcmp(d, "gelss") ? GELSS : -1;
        PCT_CHECK(driver >= 0, PCT_ERR_RUNTIME,
                  "%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", api);
    }
    const int rdt = lap_real_dtype(A->dtype); /* the dtype of the singular values and residuals */
    const double eps = rdt == PCT_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    const double rcond = arg.rcond.none ? eps * (double)mx : arg.rcond.v;
    lap_batch full;
    PCT_TRY_INT(lap_batch_broadcast(A, 2, B, 2, &full));
    PCT_CHECK(B->sizes[B->ndim - 2] == m, PCT_ERR_RUNTIME, "%s: input.size(-2) should match other.size(-%d)", api,
              vec ? 1 : 2);
    PCT_TRY(a = lap_copy_cm(A, &full, false, A->dtype));
    PCT_TRY(X = lap_empty_cm(&full, mx, k, A->dtype));
    memset(pct_tensor_data(X), 0, (size_t)(X->numel * pct_tensor_itemsize(X))); /* an empty A solves to zeros */
    {
        int64_t sz[PCT_MAX_DIMS];
        memcpy(sz, X->sizes, sizeof(int64_t) * (size_t)X->ndim);
        sz[X->ndim - 2] = m;
        pct_tensor *top = pct_tensor_view_of(X, X->ndim, sz, X->strides, X->offset);
        PCT_TRY(top);
        const int r = lap_copy_into(top, B, 2, false);
        lap_release(top);
        PCT_TRY_INT(r);
    }
    const int64_t zero = 0;
    if (driver == GELSD || driver == GELSS) PCT_TRY(res[3] = lap_empty(&full, 1, mn, 0, rdt));
    else PCT_TRY(res[3] = pct_tensor_empty(1, &zero, rdt, PCT_CPU, -1));
    if (driver != GELS) PCT_TRY(res[2] = pct_tensor_zeros(full.nb, full.shape, PCT_INT64));
    else PCT_TRY(res[2] = pct_tensor_empty(1, &zero, PCT_INT64, PCT_CPU, -1));
    if (full.batch > 0 && m > 0 && n > 0 && k > 0) {
        PCT_CHECK(info = calloc((size_t)full.batch, sizeof(int)), PCT_ERR_MEMORY, "%s: out of memory", api);
        double query[2] = {0, 0}, sdummy[2], rq[2] = {0, 0};
        int qi = 0, rk = 0, iq[2] = {0, 0};
        const int M = (int)m, N = (int)n, K = (int)k, LDB = (int)mx;
        switch (driver) {
        case GELS: lap_gels(A->dtype, M, N, K, NULL, M, NULL, LDB, query, -1, &qi); break;
        case GELSY: lap_gelsy(A->dtype, M, N, K, NULL, M, NULL, LDB, iq, rcond, &rk, query, -1, rq, &qi); break;
        case GELSD: lap_gelsd(A->dtype, M, N, K, NULL, M, NULL, LDB, sdummy, rcond, &rk, query, -1, rq, iq, &qi); break;
        default: lap_gelss(A->dtype, M, N, K, NULL, M, NULL, LDB, sdummy, rcond, &rk, query, -1, rq, &qi); break;
        }
        const int liwork = driver == GELSD ? (iq[0] > 1 ? iq[0] : 1) : driver == GELSY ? N : 0;
        /* the complex drivers' real workspace: 2 n (gelsy), 5 min(m, n) (gelss), the queried size (gelsd) */
        const int lrwork = !lap_is_complex(A->dtype) ? 0 : driver == GELSY ? 2 * N : driver == GELSS ? 5 * (int)mn + 1
                           : driver == GELSD ? lap_lwork(rdt, rq, 1) : 0;
        const size_t ssz = (size_t)pct_dtype_itemsize[rdt];
        lstsq_ctx ctx = {A->dtype, M, N, K, LDB, driver, lap_lwork(A->dtype, query, 1), lrwork, rcond,
                         pct_tensor_data(a), pct_tensor_data(X),
                         driver == GELSD || driver == GELSS ? pct_tensor_data(res[3]) : NULL,
                         driver != GELS ? (int64_t *)pct_tensor_data(res[2]) : NULL, info,
                         (size_t)pct_tensor_itemsize(A), ssz};
        lap_run(full.batch, mn, (size_t)ctx.lwork * ctx.esz + ssz * (size_t)lrwork + sizeof(int) * (size_t)(liwork + 1),
                lstsq_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, full.batch, api, A->ndim == 2 && B->ndim == 2));
    }
    /* residuals: sum of squares of rows n..m of the solution buffer, for m > n and a full rank */
    bool resid = m > n && driver != GELSY;
    if (resid && driver != GELS) {
        const int64_t *rk = (const int64_t *)pct_tensor_data(res[2]);
        for (int64_t b = 0; b < full.batch; b++) resid &= rk[b] == n;
    }
    if (resid) {
        PCT_TRY(res[1] = lap_empty(&full, 1, k, 0, rdt));
        const char *xd = pct_tensor_data(X);
        char *rd = pct_tensor_data(res[1]);
        const int64_t isz = pct_tensor_itemsize(A), rsz = pct_dtype_itemsize[rdt];
        for (int64_t b = 0; b < full.batch; b++)
            for (int64_t j = 0; j < k; j++) {
                double s = 0;
                for (int64_t i = n; i < m; i++) { /* |v|^2 */
                    double re, im;
                    pct_load_as_complex(xd + ((b * k + j) * mx + i) * isz, A->dtype, &re, &im);
                    s += re * re + im * im;
                }
                pct_store_double(rd + (b * k + j) * rsz, rdt, s);
            }
    } else {
        PCT_TRY(res[1] = pct_tensor_empty(1, &zero, rdt, PCT_CPU, -1));
    }
    {
        /* the solution: the first n rows */
        int64_t sz[PCT_MAX_DIMS];
        memcpy(sz, X->sizes, sizeof(int64_t) * (size_t)X->ndim);
        sz[X->ndim - 2] = n;
        PCT_TRY(res[0] = pct_tensor_view_of(X, X->ndim - (vec ? 1 : 0), sz, X->strides, X->offset));
    }
    free(info);
    lap_release(a);
    lap_release(X);
    lap_release(B);
    return lap_finish(4, res, NULL);
fail:
    free(info);
    lap_release(a);
    lap_release(X);
    lap_release(B);
    for (int i = 0; i < 4; i++) lap_release(res[i]);
    return NULL;
}

/* ---- linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor? out=None) ---- */

typedef struct {
    int dt, n, k;
    bool herm;
    char *a, *b;
    int *piv;
    size_t esz;
} ldls_ctx;

static void ldls_body(void *vc, int64_t bi, void *sc)
{
    (void)sc;
    ldls_ctx *c = vc;
    int info = 0;
    lap_sytrs(c->dt, c->herm, 'L', c->n, c->k, c->a + (size_t)bi * c->n * c->n * c->esz, c->n > 1 ? c->n : 1,
              c->piv + bi * c->n, c->b + (size_t)bi * c->n * c->k * c->esz, c->n > 1 ? c->n : 1, &info);
}

pct_object *pct_cpu_linalg_ldl_solve(pct_call *c)
{
    PCT_ARGS(linalg_ldl_solve);
    const char *api = "torch.linalg.ldl_solve";
    pct_tensor *LD = arg.LD, *P = arg.pivots, *B = arg.B, *ld = NULL, *piv = NULL, *X = NULL;
    PCT_TRY_INT(lap_check_matrix(LD, api, "LD", true, NULL, NULL));
    PCT_CHECK(B->ndim >= 2, PCT_ERR_RUNTIME, "%s: The input tensor B must have at least 2 dimensions.", api);
    PCT_CHECK(P->dtype == PCT_INT32, PCT_ERR_RUNTIME, "%s: Expected pivots to be integers. Got %s", api,
              pct_dtype_cpp_name[P->dtype]);
    PCT_CHECK(LD->dtype == B->dtype, PCT_ERR_RUNTIME,
              "%s: LD dtype %s does not match b dtype %s", api, pct_dtype_cpp_name[LD->dtype],
              pct_dtype_cpp_name[B->dtype]);
    const int64_t n = LD->sizes[LD->ndim - 1];
    PCT_CHECK(P->ndim == LD->ndim - 1 && P->sizes[P->ndim - 1] == n, PCT_ERR_RUNTIME,
              "%s: Expected LD.shape[:-1] and pivots.shape to be the same", api);
    PCT_CHECK(B->sizes[B->ndim - 2] == n, PCT_ERR_RUNTIME,
              "%s: Incompatible shapes of A and B for the equation AX = B (%lldx%lld and %lldx%lld)", api, (long long)n,
              (long long)n, (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]);
    lap_batch full;
    PCT_TRY_INT(lap_batch_broadcast(LD, 2, B, 2, &full));
    const int64_t k = B->sizes[B->ndim - 1];
    PCT_TRY(ld = lap_copy_cm(LD, &full, false, LD->dtype));
    PCT_TRY(piv = lap_copy_batch(P, 1, &full, PCT_INT32));
    {
        const int *pv = (const int *)pct_tensor_data(piv);
        for (int64_t i = 0; i < piv->numel; i++)
            PCT_CHECK(pv[i] != 0 && pv[i] <= n && pv[i] >= -n, PCT_ERR_RUNTIME, "%s: invalid pivots", api);
    }
    PCT_TRY(X = lap_copy_cm(B, &full, false, LD->dtype));
    if (full.batch > 0 && n > 0 && k > 0) {
        ldls_ctx ctx = {LD->dtype, (int)n, (int)k, arg.hermitian, pct_tensor_data(ld), pct_tensor_data(X), (int *)pct_tensor_data(piv),
                        (size_t)pct_tensor_itemsize(LD)};
        lap_run(full.batch, n, 0, ldls_body, &ctx, NULL);
    }
    lap_release(ld);
    lap_release(piv);
    return lap_finish1(X, c->out);
fail:
    lap_release(ld);
    lap_release(piv);
    lap_release(X);
    return NULL;
}
