/* linalg_lapack.h: what the LAPACK-backed kernels of torch.linalg share (linalg_lapack.c,
 * linalg_factor.c, linalg_solve.c): typed wrappers over LAPACK's Fortran entry points,
 * column-major batched copies, torch's input checks and torch's error reports.
 *
 * Note [LAPACK layout]: LAPACK is column-major, and so are torch's results of the
 * factorisations (LU, Q, R, L, eigenvectors, solutions: strides (..., 1, rows)). Every kernel
 * copies its inputs into a fresh column-major tensor (lap_copy_cm), which LAPACK then
 * overwrites in place, one matrix after the other (a matrix of the batch is contiguous), and
 * that tensor is the result. float32, float64, complex64 and complex128 (float16/bfloat16 and
 * complex32 have no kernel in torch either). A complex kernel conjugates where torch's operation
 * is an adjoint (ormqr's transpose, lu_solve's adjoint: LAPACK's trans 'C'; lap_conj_).
 *
 * Threads: a batch runs one LAPACK call per OpenMP thread (OpenBLAS is single-threaded inside
 * an active OpenMP region); a lone small matrix is also run in a region of two threads, as
 * linalg_svd.c does, because OpenBLAS's threading of LAPACK's many small BLAS-2 calls is slower
 * than one thread; a lone large matrix (order 512 and up) leaves OpenBLAS its own threads (lap_team). A
 * thread takes about an eighth of its share of the batch at a time (lap_run).
 *
 * Ownership: every pct_tensor * returned is a new reference (NULL with an exception set);
 * arguments are borrowed.
 */
#ifndef PCT_LINALG_LAPACK_H
#define PCT_LINALG_LAPACK_H
#include "../op.h"
#include "../error.h"
#include <stdbool.h>
#include <stdint.h>

/* Typed LAPACK/BLAS calls: dt is PCT_FLOAT32, PCT_FLOAT64, PCT_COMPLEX64 or PCT_COMPLEX128 (the s, d, c
 * and z routines; orgqr/ormqr are ungqr/unmqr for complex, where ormqr's trans 'T' means 'C'), arrays
 * are of that type (void *), real scalars are passed as double. lwork == -1 is LAPACK's workspace query (the optimal size
 * comes back in work[0], read it with lap_lwork). Without OpenBLAS they set info = -1000. */
void lap_getrf(int dt, int m, int n, void *a, int lda, int *ipiv, int *info);
void lap_getri(int dt, int n, void *a, int lda, const int *ipiv, void *work, int lwork, int *info);
void lap_getrs(int dt, char trans, int n, int nrhs, const void *a, int lda, const int *ipiv, void *b, int ldb, int *info);
void lap_potrf(int dt, char uplo, int n, void *a, int lda, int *info);
void lap_geqrf(int dt, int m, int n, void *a, int lda, void *tau, void *work, int lwork, int *info);
void lap_orgqr(int dt, int m, int n, int k, void *a, int lda, const void *tau, void *work, int lwork, int *info);
void lap_ormqr(int dt, char side, char trans, int m, int n, int k, void *a, int lda, const void *tau, void *c, int ldc,
               void *work, int lwork, int *info);
void lap_syevd(int dt, char jobz, char uplo, int n, void *a, int lda, void *w, void *work, int lwork, int *iwork,
               int liwork, int *info);
void lap_trsm(int dt, char side, char uplo, char transa, char diag, int m, int n, const void *a, int lda, void *b,
              int ldb);
void lap_gels(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *work, int lwork, int *info);
/* s (the singular values) and rwork are of dt's real type; rwork (complex dt only: 2 n reals for gelsy, 5 min(m, n)
 * for gelss, the size a query writes to rwork[0] for gelsd) may be NULL for a real dt. */
void lap_gelsy(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, int *jpvt, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *info);
void lap_gelsd(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *s, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *iwork, int *info);
void lap_gelss(int dt, int m, int n, int nrhs, void *a, int lda, void *b, int ldb, void *s, double rcond, int *rank,
               void *work, int lwork, void *rwork, int *info);
/* herm: the hermitian factorisation (hetrf / hetrs) of a complex dt; the symmetric one otherwise */
void lap_sytrf(int dt, bool herm, char uplo, int n, void *a, int lda, int *ipiv, void *work, int lwork, int *info);
void lap_sytrs(int dt, bool herm, char uplo, int n, int nrhs, const void *a, int lda, const int *ipiv, void *b, int ldb,
               int *info);
/* (syevd and geev: real dt only) */
/* The general eigenproblem, right eigenvectors only (jobvr 'V') or none ('N'): eigenvalues wr + i wi, and, for a
 * complex pair (wi[j] > 0), the vectors vr[:, j] +- i vr[:, j + 1] (LAPACK's geev packing). */
void lap_geev(int dt, char jobvr, int n, void *a, int lda, void *wr, void *wi, void *vr, int ldvr, void *work,
              int lwork, int *info);
/* The size a workspace query wrote to work[0] (plus one), at least `least`. */
int lap_lwork(int dt, const void *work, int least);

/* Whether dt is complex64 / complex128; its real counterpart (dt itself for a real one). */
bool lap_is_complex(int dt);
int lap_real_dtype(int dt);

/* info value of a matrix that was not computed because of a NaN or memory */
enum { LAP_NOMEM = -2000 };

/* The threads for a batch of `batch` matrices of order n (see the header comment). */
int lap_team(int64_t batch, int64_t n);

/* The batch part of a shape: the sizes of all dims of t but the last `mdims`. */
typedef struct {
    int nb;
    int64_t shape[PCT_MAX_DIMS];
    int64_t batch; /* product of shape */
} lap_batch;
void lap_batch_of(const pct_tensor *t, int mdims, lap_batch *b);
/* torch's broadcast of the batch parts of a and b; -1 with torch's "The size of tensor a ..." error. */
int lap_batch_broadcast(const pct_tensor *a, int amdims, const pct_tensor *b, int bmdims, lap_batch *out);

/* A new uninitialised tensor (batch..., r, c), each matrix column-major. */
pct_tensor *lap_empty_cm(const lap_batch *b, int64_t r, int64_t c, int dtype);
/* A new tensor (batch..., extra dims...), contiguous; n extra dims (0, 1 or 2). */
pct_tensor *lap_empty(const lap_batch *b, int n, int64_t e0, int64_t e1, int dtype);
/* A new column-major copy of the matrices of A (its last two dims; transposed when `transpose`)
 * expanded to batch b and converted to dtype. */
pct_tensor *lap_copy_cm(pct_tensor *A, const lap_batch *b, bool transpose, int dtype);
/* Copies A (its last mdims dims, reversed when transpose and mdims == 2) into dst, A's batch dims
 * broadcast to dst's, converting the dtype. */
int lap_copy_into(pct_tensor *dst, pct_tensor *A, int mdims, bool transpose);
/* A new contiguous copy of t (its last mdims dims) with its batch expanded to b, in dtype. */
pct_tensor *lap_copy_batch(pct_tensor *t, int mdims, const lap_batch *b, int dtype);
/* Index in t's own batch (t's batch dims are broadcast to full's) of element b of full. */
int64_t lap_batch_index(const lap_batch *full, const pct_tensor *t, int mdims, int64_t b);
/* Runs body(ctx, b, scratch) for b in [0, batch) without the GIL, on lap_team(batch, n) threads,
 * each with its own scratch of `scratch` bytes (info[b] = LAP_NOMEM where it could not be had;
 * info may be NULL). body must not touch Python. */
typedef void (*lap_body)(void *ctx, int64_t b, void *scratch);
void lap_run(int64_t batch, int64_t n, size_t scratch, lap_body body, void *ctx, int *info);
/* A view of t (batch..., r, c) with its last two dims swapped. */
pct_tensor *lap_mT(pct_tensor *t);
/* t's matrices with the strict lower (lower=true) or upper triangle zeroed, in place; t is a
 * column-major tensor from lap_empty_cm / lap_copy_cm. */
void lap_zero_triangle(pct_tensor *t, bool lower);
/* t's elements conjugated in place (a no-op for a real t); t is contiguous (lap_empty_cm / lap_copy_cm). */
void lap_conj_(pct_tensor *t);

/* torch's checks of a matrix argument, in torch's order: at least 2 dims ("<api>: The input
 * tensor <name> must have at least 2 dimensions."), square when `square`, a floating or complex
 * dtype, and a LAPACK dtype (float32/float64/complex64/complex128). With `kernel`, a non-floating dtype is torch's
 * NotImplementedError '"<kernel>" not implemented for ...' instead, and with `lowp_kernel` the same for
 * float16/bfloat16. */
int lap_check_matrix(const pct_tensor *A, const char *api, const char *name, bool square, const char *kernel,
                     const char *lowp_kernel);

/* torch's _linalg_check_errors: -1 with torch's error for the first nonzero info of the batch
 * (is_matrix: no "(Batch element i)"). The message depends on the words in api as in torch. */
int lap_check_errors(const int *info, int64_t batch, const char *api, bool is_matrix);

/* The results as a tuple (named by the binding: ops_returns.def), copied into the out= tensors outs[0..n) first when
 * given (dtype-checked and resized by torch's out= rules). Steals res. */
pct_object *lap_finish(int n, pct_tensor **res, pct_tensor **outs);
/* The same for a single tensor result and a `Tensor? out=`. Steals r. */
pct_object *lap_finish1(pct_tensor *r, pct_tensor *out);
/* torch's out= rules of its older (non-structured) linalg kernels, for lap_finish1_legacy / lap_finish_legacy:
 * LAP_OUT_CAST: any dtype r casts to ("<api>: Expected <what> to be safely castable from <T> dtype, but got <what>
 * with dtype <U>"), resized contiguous; LAP_OUT_SAME: "<api>: Expected input and result to have the same dtype, but
 * input has dtype<T> and result has dtype <U>", resized contiguous; LAP_OUT_SCALAR: "expected scalar type <T> but
 * found <U>", resized to the result's column-major layout. An empty out= of the result's dtype takes the result's
 * column-major layout (torch computes into it) except with LAP_OUT_CAST_COPY. */
enum { LAP_OUT_CAST, LAP_OUT_SAME, LAP_OUT_SCALAR, LAP_OUT_CAST_COPY /* LAP_OUT_CAST, an empty out= too */ };
pct_object *lap_finish1_legacy(pct_tensor *r, pct_tensor *out, int kind, const char *api, const char *what);
/* fields: the results' names in the dtype errors */
pct_object *lap_finish_legacy(const char *const *fields, int n, pct_tensor **res, pct_tensor **outs, const char *api);
/* PCT_XDECREF / PCT_INCREF of a tensor and the UTF-8 text of a str argument: the only Python API the LAPACK kernels
 * use besides the results' named tuples and the GIL release of lap_run, kept here for the layering work. */
void lap_release(pct_tensor *t);
pct_tensor *lap_retain(pct_tensor *t);

#endif
