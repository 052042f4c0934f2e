/* scan.c: cumulative scans along a dim: cumsum, cumprod, logcumsumexp, cummax, cummin, with
 * torch's accumulator types, through the sort family's row driver (sort_internal.h).
 */
#include "sort_internal.h"
#include "complex_math.h"

/* ------------------------------------------------------------------------------------ */
/* scans: cumsum, cumprod, logcumsumexp, cummax, cummin                                  */

/* Accumulators as torch's CPU acc_type: double for float and double, float for the 16-bit
 * floats, 64 bits for integers (unsigned here, so overflow wraps as in torch). */
#define SCAN_ACC_BOOL uint64_t
#define SCAN_ACC_UINT8 uint64_t
#define SCAN_ACC_INT8 uint64_t
#define SCAN_ACC_INT16 uint64_t
#define SCAN_ACC_INT32 uint64_t
#define SCAN_ACC_INT64 uint64_t
#define SCAN_ACC_FLOAT16 float
#define SCAN_ACC_BFLOAT16 float
#define SCAN_ACC_FLOAT32 double
#define SCAN_ACC_FLOAT64 double
#define SCAN_ACC_UINT16 uint64_t
#define SCAN_ACC_UINT32 uint64_t
#define SCAN_ACC_UINT64 uint64_t
#define SCAN_TOACC_BOOL(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_UINT8(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT8(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT16(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT32(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_INT64(x) ((uint64_t)(int64_t)(x))
#define SCAN_TOACC_FLOAT16(x) (x)
#define SCAN_TOACC_BFLOAT16(x) (x)
#define SCAN_TOACC_FLOAT32(x) ((double)(x))
#define SCAN_TOACC_FLOAT64(x) (x)
#define SCAN_TOACC_UINT16(x) ((uint64_t)(x))
#define SCAN_TOACC_UINT32(x) ((uint64_t)(x))
#define SCAN_TOACC_UINT64(x) ((uint64_t)(x))

enum { SCAN_SUM, SCAN_PROD, SCAN_LOGSUMEXP, SCAN_MAX, SCAN_MIN };

/* torch's _log_add_exp_helper (std::min / std::max keep their first argument on NaN) */
static inline double scan_lae_d(double x, double y)
{
    double mn = isnan(y) ? y : (y < x ? y : x);
    double mx = isnan(y) ? y : (x < y ? y : x);
    if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
    return x;
}
static inline float scan_lae_f(float x, float y)
{
    float mn = isnan(y) ? y : (y < x ? y : x);
    float mx = isnan(y) ? y : (x < y ? y : x);
    if (mn != mx || isfinite(mn)) return log1pf(expf(mn - mx)) + mx;
    return x;
}
#define SCAN_NEGINF_BOOL 0
#define SCAN_NEGINF_UINT8 0
#define SCAN_NEGINF_INT8 0
#define SCAN_NEGINF_INT16 0
#define SCAN_NEGINF_INT32 0
#define SCAN_NEGINF_INT64 0
#define SCAN_NEGINF_FLOAT16 (-INFINITY)
#define SCAN_NEGINF_BFLOAT16 (-INFINITY)
#define SCAN_NEGINF_FLOAT32 (-INFINITY)
#define SCAN_NEGINF_FLOAT64 (-INFINITY)
#define SCAN_NEGINF_UINT16 0
#define SCAN_NEGINF_UINT32 0
#define SCAN_NEGINF_UINT64 0
#define SCAN_LAE_float scan_lae_f
#define SCAN_LAE_double scan_lae_d
#define SCAN_LAE_uint64_t(x, y) (x)
#define SCAN_LAE_(A) SCAN_LAE_##A
#define SCAN_LAE(A) SCAN_LAE_(A)

/* scan_row_<N> per dtype (scan_impl.h); uint16/32/64: for the 0-d and empty inputs torch answers */
#define PCT_FOREACH_TEMPLATE "scan_impl.h"
#define PCT_FOREACH_UNSIGNED
#include "dtype_foreach.h"

/* complex64 / complex128: cumsum, cumprod and logcumsumexp (torch's complex logaddexp, complex_math.h; cummax and
 * cummin are refused by the dispatcher, ops_complex.def), accumulating in complex128 as torch's CPU acc_type does */
#define SCAN_COMPLEX_ROW(E, N, T, C, S)                                                                       \
    static void scan_row_##N(int op, char *o, int64_t ost, int64_t *io, int64_t ist, const char *p, int64_t st, \
                             int64_t n)                                                                       \
    {                                                                                                         \
        (void)io; (void)ist;                                                                                  \
        pct_cdouble acc = op == SCAN_PROD ? 1 : op == SCAN_LOGSUMEXP ? -INFINITY : 0;                          \
        for (int64_t j = 0; j < n; j++) {                                                                     \
            const pct_cdouble x = *(const T *)(p + j * st);                                                   \
            acc = op == SCAN_PROD ? cpx_mul_d(acc, x) : op == SCAN_LOGSUMEXP ? cpx_logaddexp_d(x, acc) : acc + x; \
            *(T *)(o + j * ost) = (T)acc;                                                                     \
        }                                                                                                     \
    }
PCT_FORALL_COMPLEX_DTYPES(SCAN_COMPLEX_ROW)
#undef SCAN_COMPLEX_ROW

typedef void (*scan_row_fn)(int, char *, int64_t, int64_t *, int64_t, const char *, int64_t, int64_t);
static const scan_row_fn scan_rows[PCT_NUM_DTYPES] = {
#define SCAN_ENTRY(E, N, T, C, S) [PCT_##E] = scan_row_##N,
    PCT_FORALL_ALL_DTYPES(SCAN_ENTRY)
    PCT_FORALL_COMPLEX_DTYPES(SCAN_ENTRY)
#undef SCAN_ENTRY
};

typedef struct scan_ctx {
    sort_rows rp;
    int op;
    scan_row_fn fn;
    char *out;
    int64_t *iout;
} scan_ctx;

static void scan_row(void *vctx, int64_t r, void *scratch)
{
    (void)scratch;
    const scan_ctx *c = vctx;
    const sort_rows *rp = &c->rp;
    int64_t o = sort_rows_out(rp, r, rp->n);
    c->fn(c->op, c->out + o * rp->itemsize, rp->inner * rp->itemsize, c->iout ? c->iout + o : NULL, rp->inner,
          sort_rows_in(rp, r), rp->st, rp->n);
}

/* Runs a scan of `in` (already of the result dtype) along dim into a new contiguous
 * tensor (and indices for cummax / cummin). */
static int scan_run(pct_tensor *in, int dim, int op, pct_tensor **res, pct_tensor **idx)
{
    pct_tensor *r = NULL, *i = NULL;
    if (!(r = pct_tensor_empty(in->ndim, in->sizes, in->dtype, PCT_CPU, -1))) goto fail;
    if (idx && !(i = pct_tensor_empty(in->ndim, in->sizes, PCT_INT64, PCT_CPU, -1))) goto fail;
    if (in->numel > 0) {
        scan_ctx c = {.op = op, .fn = scan_rows[in->dtype], .out = pct_tensor_data(r),
                      .iout = i ? (int64_t *)pct_tensor_data(i) : NULL};
        pct_sort_rows_init(&c.rp, in, dim);
        double work = (double)in->numel * (op == SCAN_LOGSUMEXP ? 8.0 : 1.0);
        if (pct_sort_run_rows(c.rp.nrows, work, 0, scan_row, &c) < 0) goto fail;
    }
    *res = r;
    if (idx) *idx = i;
    return 0;
fail:
    PCT_XDECREF(r);
    PCT_XDECREF(i);
    return -1;
}

/* cumsum, cumprod along dim, in dtype (PCT_NO_DTYPE: not given) */
static pct_object *scan_cum(pct_call *c, int op, pct_tensor *self, int64_t dim_arg, int dtype)
{
    pct_tensor *out = c->out;
    const char *kname = op == SCAN_SUM ? "cumsum_out_cpu" : "cumprod_out_cpu";
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    bool has_dtype = dtype != PCT_NO_DTYPE;
    int rd;
    if (c->inplace) {
        if (has_dtype && dtype != self->dtype) {
            pct_error(PCT_ERR_RUNTIME, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                         pct_dtype_cpp_type_name[self->dtype], pct_dtype_cpp_type_name[dtype]);
            return NULL;
        }
        rd = self->dtype;
    } else if (out) {
        rd = has_dtype ? dtype : out->dtype;
        if (pct_out_check_dtype(out, rd) < 0) return NULL;
    } else {
        rd = has_dtype ? dtype : pct_dtype_is_integral(self->dtype, true) ? PCT_INT64 : self->dtype;
    }
    if (rd == PCT_BOOL && self->ndim > 0 && self->numel > 0) {
        sort_not_implemented(kname, rd);
        return NULL;
    }
    if (c->inplace && pct_check_written_overlap(self, 0, NULL) < 0) return NULL; /* an expanded self: torch refuses */
    pct_tensor *in = pct_to_dtype(self, rd, false), *res = NULL;
    if (!in) return NULL;
    int r = scan_run(in, dim, op, &res, NULL);
    PCT_DECREF(in);
    if (r < 0) return NULL;
    return pct_sort_finish(res, out);
}

pct_object *pct_cpu_cumsum(pct_call *c)
{
    PCT_ARGS(cumsum);
    return scan_cum(c, SCAN_SUM, arg.input, arg.dim, arg.dtype);
}

pct_object *pct_cpu_cumprod(pct_call *c)
{
    PCT_ARGS(cumprod);
    return scan_cum(c, SCAN_PROD, arg.input, arg.dim, arg.dtype);
}

pct_object *pct_cpu_logcumsumexp(pct_call *c)
{
    PCT_ARGS(logcumsumexp);
    pct_tensor *self = arg.input, *out = c->out, *res = NULL;
    int dim = pct_wrap_dim(arg.dim, self->ndim);
    if (dim < 0) return NULL;
    if (!pct_dtype_is_floating(self->dtype) && !pct_dtype_is_complex(self->dtype)) {
        sort_not_implemented("logcumsumexp_out_cpu", self->dtype);
        return NULL;
    }
    if (out && out->dtype != self->dtype) {
        pct_error(PCT_ERR_RUNTIME, "expected scalar_type %s but found %s", pct_dtype_cpp_name[self->dtype],
                     pct_dtype_cpp_name[out->dtype]);
        return NULL;
    }
    if (scan_run(self, dim, SCAN_LOGSUMEXP, &res, NULL) < 0) return NULL;
    return pct_sort_finish(res, out);
}

/* cummax, cummin along dim; out: the out= pair as given (NULL or None: not given) */
static pct_object *scan_cummax(bool is_max, pct_tensor *self, int64_t dim_arg, pct_object *out)
{
    pct_tensor *outs[2], *v = NULL, *i = NULL;
    const char *name = is_max ? "cummax" : "cummin";
    if (pct_out_parse_pair(out, name, outs) < 0) return NULL; /* torch's parser: before any other check */
    /* torch returns empty results for an empty input before it looks at dim */
    int dim = self->numel == 0 ? 0 : pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (outs[0]) {
        int want[2] = {self->dtype, PCT_INT64};
        for (int k = 0; k < 2; k++) {
            if (outs[k]->dtype != want[k]) {
                pct_error(PCT_ERR_RUNTIME, "expected scalar_type %s but found %s", pct_dtype_cpp_name[want[k]],
                             pct_dtype_cpp_name[outs[k]->dtype]);
                return NULL;
            }
        }
    }
    if (pct_dtype_is_complex(self->dtype)) /* Note [Complex selections] */
        return pct_sort_complex_scalar_pair(self, is_max ? "cummax_cpu" : "cummin_cpu", outs);
    if (scan_run(self, dim, is_max ? SCAN_MAX : SCAN_MIN, &v, &i) < 0) return NULL;
    return pct_sort_finish_pair(v, i, outs);
}

pct_object *pct_cpu_cummax(pct_call *c)
{
    PCT_ARGS(cummax);
    return scan_cummax(true, arg.input, arg.dim, arg.out);
}

pct_object *pct_cpu_cummin(pct_call *c)
{
    PCT_ARGS(cummin);
    return scan_cummax(false, arg.input, arg.dim, arg.out);
}

