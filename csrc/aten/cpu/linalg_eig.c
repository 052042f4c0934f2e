/* linalg_eig.c: the general (non-symmetric) eigendecomposition, torch.linalg.eig and torch.linalg.eigvals, through
 * LAPACK's geev (linalg_lapack.h). A real input gives complex results (complex64 from float32, complex128 from
 * float64): geev returns real and imaginary parts of the eigenvalues apart, and a complex conjugate pair of
 * eigenvectors packed as two real columns, which unpack_results turns into complex columns. The eigenvectors are
 * column-major and normalized as geev leaves them (unit 2-norm, largest component real), which is what torch's CPU
 * kernel returns. Complex inputs go to cgeev/zgeev (linalg_spectral_complex.c), which return complex eigenvalues and
 * vectors of the input's dtype directly.
 *
 * Ownership: every pct_tensor * returned is a new reference; arguments are borrowed.
 */
#include "linalg_lapack.h"
#include "linalg_spectral_complex.h"
#include "../out.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int dt, n, lwork;
    char jobvr;
    char *a, *wr, *wi, *vr;  /* batch-major: a and vr n * n per matrix, wr and wi n per matrix */
    int *info;
    size_t esz;
} eig_ctx;

static void eig_body(void *vc, int64_t b, void *scratch)
{
    eig_ctx *c = vc;
    const size_t mat = (size_t)c->n * c->n * c->esz, vec = (size_t)c->n * c->esz;
    lap_geev(c->dt, c->jobvr, c->n, c->a + (size_t)b * mat, c->n, c->wr + (size_t)b * vec, c->wi + (size_t)b * vec,
             c->vr ? c->vr + (size_t)b * mat : NULL, c->n, scratch, c->lwork, &c->info[b]);
}

/* The complex eigenvalues (and vectors) of one matrix of the batch from geev's real packing. */
#define EIG_UNPACK(T)                                                                                     \
    static void unpack_##T(int64_t n, const T *wr, const T *wi, const T *vr, T *w, T *v)                  \
    {                                                                                                     \
        for (int64_t j = 0; j < n; j++) {                                                                 \
            w[2 * j] = wr[j];                                                                             \
            w[2 * j + 1] = wi[j];                                                                         \
        }                                                                                                 \
        if (!v) return;                                                                                   \
        for (int64_t j = 0; j < n; j++) {                                                                 \
            const T *re = vr + j * n;                                                                     \
            T *col = v + 2 * j * n;                                                                       \
            if (wi[j] != 0 && j + 1 < n) { /* a pair: columns j and j + 1 are re +- i im */                \
                const T *im = vr + (j + 1) * n;                                                           \
                T *next = col + 2 * n;                                                                    \
                for (int64_t i = 0; i < n; i++) {                                                         \
                    col[2 * i] = re[i]; col[2 * i + 1] = im[i];                                           \
                    next[2 * i] = re[i]; next[2 * i + 1] = -im[i];                                        \
                }                                                                                         \
                j++;                                                                                      \
                continue;                                                                                 \
            }                                                                                             \
            for (int64_t i = 0; i < n; i++) { col[2 * i] = re[i]; col[2 * i + 1] = 0; }                  \
        }                                                                                                 \
    }
EIG_UNPACK(float)
EIG_UNPACK(double)

/* 0 all finite, 1 an infinity (torch's results are then all NaN), -1 a NaN (torch's error) */
static int nonfinite_kind(const pct_tensor *a)
{
    const char *d = pct_tensor_data((pct_tensor *)a);
    int kind = 0;
    for (int64_t i = 0; i < a->numel; i++) {
        const double x = a->dtype == PCT_FLOAT32 ? ((const float *)d)[i] : ((const double *)d)[i];
        if (isnan(x)) return -1;
        if (isinf(x)) kind = 1;
    }
    return kind;
}

/* every element of a new (dense) complex tensor set to NaN + NaN i */
static void fill_nan(pct_tensor *t)
{
    char *d = pct_tensor_data(t);
    for (int64_t i = 0; i < 2 * t->numel; i++) {
        if (t->dtype == PCT_COMPLEX64) ((float *)d)[i] = NAN;
        else ((double *)d)[i] = NAN;
    }
}

static int check_input(const pct_tensor *A)
{
    /* torch looks up the complex counterpart of the dtype first */
    PCT_CHECK(pct_dtype_is_floating(A->dtype), PCT_ERR_RUNTIME, "Unknown Complex ScalarType for %s",
              pct_dtype_cpp_name[A->dtype]);
    return lap_check_matrix(A, "linalg.eig", "A", true, "linalg_eig_out_cpu", "linalg_eig_out_cpu");
fail:
    return -1;
}

static int eig_compute(pct_tensor *A, bool vectors, pct_tensor **w, pct_tensor **v)
{
    int *info = NULL;
    pct_tensor *a = NULL;
    char *raw = NULL;
    *w = *v = NULL;
    if (pct_dtype_is_complex(A->dtype)) return lapc_eig(A, vectors, w, v);
    PCT_TRY_INT(check_input(A));
    lap_batch bt;
    lap_batch_of(A, 2, &bt);
    const int64_t n = A->sizes[A->ndim - 1];
    const int cdt = A->dtype == PCT_FLOAT32 ? PCT_COMPLEX64 : PCT_COMPLEX128;
    const size_t esz = (size_t)pct_tensor_itemsize(A);
    PCT_TRY(a = lap_copy_cm(A, &bt, false, A->dtype));
    const int nonfinite = nonfinite_kind(a);
    PCT_CHECK(nonfinite >= 0, PCT_ERR_RUNTIME, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
    PCT_TRY(*w = lap_empty(&bt, 1, n, 0, cdt));
    if (vectors) PCT_TRY(*v = lap_empty_cm(&bt, n, n, cdt));
    if (nonfinite) { /* an infinity: every result is NaN, as torch's */
        fill_nan(*w);
        if (vectors) fill_nan(*v);
    } else if (bt.batch > 0 && n > 0) {
        const size_t vecs = (size_t)bt.batch * n * esz, mats = (size_t)bt.batch * n * n * esz;
        PCT_CHECK(info = calloc((size_t)bt.batch, sizeof(int)), PCT_ERR_MEMORY, "linalg.eig: out of memory");
        PCT_CHECK(raw = malloc(2 * vecs + (vectors ? mats : 0)), PCT_ERR_MEMORY, "linalg.eig: out of memory");
        double query[2] = {0, 0};
        int qi = 0;
        const char jobvr = vectors ? 'V' : 'N';
        lap_geev(A->dtype, jobvr, (int)n, NULL, (int)n, NULL, NULL, NULL, (int)n, query, -1, &qi);
        eig_ctx ctx = {A->dtype, (int)n, lap_lwork(A->dtype, query, (int)(4 * n)), jobvr, pct_tensor_data(a), raw,
                       raw + vecs, vectors ? raw + 2 * vecs : NULL, info, esz};
        lap_run(bt.batch, n, (size_t)ctx.lwork * esz, eig_body, &ctx, info);
        PCT_TRY_INT(lap_check_errors(info, bt.batch, "linalg.eig", A->ndim == 2));
        for (int64_t b = 0; b < bt.batch; b++) {
            const size_t vo = (size_t)b * n, mo = (size_t)b * n * n;
            if (A->dtype == PCT_FLOAT32)
                unpack_float(n, (float *)ctx.wr + vo, (float *)ctx.wi + vo, vectors ? (float *)ctx.vr + mo : NULL,
                             (float *)pct_tensor_data(*w) + 2 * vo, vectors ? (float *)pct_tensor_data(*v) + 2 * mo : NULL);
            else
                unpack_double(n, (double *)ctx.wr + vo, (double *)ctx.wi + vo, vectors ? (double *)ctx.vr + mo : NULL,
                              (double *)pct_tensor_data(*w) + 2 * vo,
                              vectors ? (double *)pct_tensor_data(*v) + 2 * mo : NULL);
        }
    }
    free(info);
    free(raw);
    lap_release(a);
    return 0;
fail:
    free(info);
    free(raw);
    lap_release(a);
    lap_release(*w);
    lap_release(*v);
    *w = *v = NULL;
    return -1;
}

/* torch's refusal of an out= tensor a complex result cannot be cast to */
static int check_out_dtype(const pct_tensor *out, const char *api, const char *what, int input_dtype)
{
    const int result = pct_dtype_is_complex(input_dtype) ? input_dtype
                       : input_dtype == PCT_FLOAT64 ? PCT_COMPLEX128 : PCT_COMPLEX64;
    PCT_CHECK(!out || pct_dtype_is_complex(out->dtype), PCT_ERR_RUNTIME,
              "%s: Expected %s to be safely castable from %s dtype, but got %s with dtype %s", api, what,
              pct_dtype_cpp_name[result], what, pct_dtype_cpp_name[out->dtype]);
    return 0;
fail:
    return -1;
}

/* linalg_eig(Tensor A, *, pct_object? out=None) */
pct_object *pct_cpu_linalg_eig(pct_call *c)
{
    PCT_ARGS(linalg_eig);
    pct_tensor *outs[2] = {NULL, NULL}, *res[2];
    if (pct_out_parse_tuple(arg.out, "linalg_eig", 2, outs) < 0) return NULL;
    if (check_out_dtype(outs[0], "torch.linalg.eig", "eigenvalues", arg.A->dtype) < 0 ||
        check_out_dtype(outs[1], "torch.linalg.eig", "eigenvectors", arg.A->dtype) < 0)
        return NULL;
    if (eig_compute(arg.A, true, &res[0], &res[1]) < 0) return NULL;
    return lap_finish(2, res, outs);
}

/* linalg_eigvals(Tensor A, *, Tensor? out=None) */
pct_object *pct_cpu_linalg_eigvals(pct_call *c)
{
    PCT_ARGS(linalg_eigvals);
    pct_tensor *w, *v;
    if (check_out_dtype(c->out, "torch.linalg.eigvals", "eigenvalues", arg.A->dtype) < 0) return NULL;
    if (eig_compute(arg.A, false, &w, &v) < 0) return NULL;
    return lap_finish1(w, c->out);
}
