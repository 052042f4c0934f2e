/* reduce.c: reductions (sum, mean, prod, amax, max, argmax, all, var, norm, logsumexp, ...):
 * their entry points. Their kernels, generated per op and dtype from functor macros, are the
 * reduce_kernels_*.c files.
 * The plan and the driver are reduce_plan.c, the explicit-vector loops reduce_vec.c,
 * softmax / log_softmax softmax.c; what they share is reduce_internal.h.
 *
 * Note [Reduction plan]
 * Every reduction goes through one plan and one driver (red_plan_build, red_run):
 *  - the kept dims and the reduced dims of the input are split into two lists (size,
 *    byte stride in the input, byte stride in each output), size-1 dims dropped and
 *    neighbours that are contiguous merged. Kept dims are ordered by input stride so
 *    the innermost has the smallest; reduced dims too, except for ops that report an
 *    index (argmax, max.dim), which keep the logical order so linear positions are
 *    torch's indices.
 *  - a kernel (red_kernel) is five functions generated per op and dtype from a small
 *    element-level functor (INIT, ACC, COMBINE, RUN, FINISH macros): init and combine
 *    accumulators, `run` folds one strided 1-D run of the input into one accumulator,
 *    `vrun` folds rows of `nb` neighbouring input elements into the `nb` accumulators of
 *    neighbouring outputs, and `finish` writes results.
 *  - horizontal mode: for each output element, the reduced space is walked as 1-D runs
 *    along the innermost reduced dim (`run`). Vertical mode (the innermost kept dim is
 *    more contiguous than the innermost reduced dim, e.g. x.sum(0) of a row-major
 *    matrix) or very short reductions: blocks of RED_NB neighbouring outputs are reduced
 *    together, row by row (`vrun`), so loads stay contiguous and vectorize. Consecutive
 *    horizontal outputs are walked with an odometer (red_do_units).
 *  - accuracy: runs are summed pairwise (blocks of RED_PW_BLOCK elements with RED_NACC
 *    independent accumulators, which also lets the compiler vectorize without
 *    -ffast-math); successive runs / positions are folded through a four-level
 *    cascade (RED_FOLD runs per level); vertical rows of sum-like ops go through a cascade
 *    of RED_VFOLD rows per level, kept in registers for a strip of columns, as torch's
 *    cascade sum.
 *  - threads: above PCT_PARALLEL_GRAIN elements the GIL is released and OpenMP splits
 *    the output units across threads; when there are fewer units than threads, each
 *    unit's reduced range is split instead at blocks of the cascade, whose values are
 *    then added through the cascade's upper levels in order (red_run_split): the same
 *    bits for any thread count, and index ops keep the first occurrence. (A horizontal
 *    reduction of one run is split in equal parts: its bits depend on the thread count.)
 *  - speed: hot contiguous loops get AVX2 / AVX-512 clones chosen at load time, long runs
 *    are peeled to a 64-byte boundary, and NaN-aware min/max, exp (softmax, logsumexp)
 *    use explicit vectors (Note [Explicit vectors]).
 * Nothing inside the driver calls Python or raises: all checks run before it.
 * softmax / log_softmax are not reductions of the output's shape; they have their own
 * row (last dim) and column-block (other dims) loops (softmax.c).
 */
#include "../shapes_only.h"
#include "reduce_kernels.h"
#include <complex.h> /* the complex kernels: prod, logsumexp */
#include "complex_arith.h"
#include "blas.h"

/* ------------------------------------------------------------------------------------ */
/* kernels: sum, nansum, mean, nanmean, prod                                              */

enum { RED_SUM, RED_NANSUM, RED_MEAN, RED_NANMEAN, RED_PROD };

/* sum and mean of a complex tensor (Note [Complex and float8 dtypes] in dtype.h): those of its real and imaginary
 * parts, reduced as two columns of its real view (view_as_real) by the real kernels, the result seen as complex. */
/* Note [Complex mean's division]: torch's mean divides the complex sum by the count as a complex number, (a + bi) /
 * (n + 0i), whose cross terms b * 0 and a * 0 turn an infinite or NaN part into a NaN in the other part (nan+infj ->
 * nan+nanj); var_mean's mean does not. The parts of r (pairs of its real dtype) get those terms. */
static void red_complex_mean_spread(pct_tensor *r)
{
    const int64_t n = r->numel / 2;
    if (r->dtype == PCT_FLOAT32) {
        float *p = (float *)pct_tensor_data(r);
        for (int64_t k = 0; k < n; k++) {
            const float a = p[2 * k], b = p[2 * k + 1];
            p[2 * k] = a + b * 0.0f;
            p[2 * k + 1] = b - a * 0.0f;
        }
    } else {
        double *p = (double *)pct_tensor_data(r);
        for (int64_t k = 0; k < n; k++) {
            const double a = p[2 * k], b = p[2 * k + 1];
            p[2 * k] = a + b * 0.0;
            p[2 * k + 1] = b - a * 0.0;
        }
    }
}

/* spread: mean's cross terms (Note [Complex mean's division]) */
static pct_object *red_complex_sum(const red_kernel *const *table, pct_tensor *self, uint64_t mask, bool keepdim,
                                   int rd, pct_tensor *out, bool spread)
{
    if (!pct_dtype_is_complex(rd)) {
        pct_error(PCT_ERR_RUNTIME, "Expected a complex dtype for the result of a complex sum, got %s",
                  pct_dtype_cpp_name[rd]);
        return NULL;
    }
    pct_tensor *z = pct_to_dtype(self, rd, false);
    if (!z) return NULL;
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    for (int i = 0; i < z->ndim; i++) { sizes[i] = z->sizes[i]; strides[i] = z->strides[i] * 2; }
    sizes[z->ndim] = 2;
    strides[z->ndim] = 1;
    const int real = pct_dtype_to_real(rd);
    pct_tensor *parts = pct_tensor_view_as_dtype(z, z->ndim + 1, sizes, strides, z->offset * 2, real);
    PCT_DECREF(z);
    if (!parts) return NULL;
    red_ctx ctx = {0};
    pct_tensor *r = (pct_tensor *)pct_red_simple(table, &ctx, parts, real, mask, keepdim, false, real, NULL);
    PCT_DECREF(parts);
    if (!r) return NULL;
    if (spread && !pct_shapes_only) red_complex_mean_spread(r);
    for (int i = 0; i < r->ndim - 1; i++) strides[i] = r->strides[i] / 2; /* r is contiguous: its last dim is the pair */
    pct_tensor *res = pct_tensor_view_as_dtype(r, r->ndim - 1, r->sizes, strides, r->offset / 2, rd);
    PCT_DECREF(r);
    if (!res || !out) return (pct_object *)res;
    int rc = pct_out_resize(out, res->ndim, res->sizes) < 0 ? -1 : pct_copy_(out, res);
    PCT_DECREF(res);
    if (rc < 0) return NULL;
    PCT_INCREF(out);
    return (pct_object *)out;
}

/* dims: sum, nansum, mean, nanmean reduce a list of dims; prod_dim: prod's one optional dim (dims NULL) */
static pct_object *red_sum_family(pct_call *c, int kind, pct_tensor *self, const pct_int_list *dims, pct_int_opt prod_dim,
                                  bool keepdim, int dtype)
{
    pct_tensor *out = c->out;
    bool has_dtype = dtype != PCT_NO_DTYPE;
    int rd;
    if (kind == RED_NANMEAN && !red_is_float(self->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "nanmean(): expected input to have floating point or complex dtype but got %s",
                     pct_dtype_cpp_name[self->dtype]);
        return NULL;
    }
    if (kind == RED_MEAN || kind == RED_NANMEAN) {
        if (pct_dtype_is_complex(self->dtype) || (has_dtype && pct_dtype_is_complex(dtype))) goto dtype_ok;
        const char *name = kind == RED_MEAN ? "mean" : "nanmean";
        if (has_dtype && !red_is_float(dtype)) {
            pct_error(PCT_ERR_RUNTIME, "%s(): could not infer output dtype. Optional dtype must be either a "
                         "floating point or complex dtype. Got: %s", name, pct_dtype_cpp_name[dtype]);
            return NULL;
        }
        if (!has_dtype && !red_is_float(self->dtype)) {
            pct_error(PCT_ERR_RUNTIME, "%s(): could not infer output dtype. Input dtype must be either a "
                         "floating point or complex dtype. Got: %s", name, pct_dtype_cpp_name[self->dtype]);
            return NULL;
        }
    }
dtype_ok:;
    uint64_t mask;
    if (kind == RED_PROD) {
        if (prod_dim.none) mask = red_all_mask(self->ndim);
        else if (pct_red_mask_one(self, prod_dim.v, &mask, NULL) < 0) return NULL;
    } else if (pct_red_mask(self, dims, true, kind != RED_NANSUM, &mask) < 0) {
        return NULL;
    }
    if (has_dtype) {
        rd = dtype;
        if (pct_out_check_dtype(out, rd) < 0) return NULL;
    } else if (out) {
        rd = out->dtype;
        /* torch: mean divides a float result into out (a cast); nansum and nanmean run nansum at out's dtype */
        if (kind == RED_MEAN && pct_out_check_cast(self->dtype, out) < 0) return NULL;
        if ((kind == RED_NANSUM || kind == RED_NANMEAN) && red_is_float(self->dtype) && !red_is_float(rd)) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"nansum_cpu\" not implemented for '%s'", pct_dtype_cpp_name[rd]);
            return NULL;
        }
    } else {
        rd = pct_dtype_is_integral(self->dtype, true) ? PCT_INT64 : self->dtype;
    }
    if (pct_dtype_is_complex(self->dtype) && !pct_dtype_is_complex(rd) && (kind == RED_SUM || kind == RED_MEAN)) {
        /* a real dtype= (or out=): torch casts the input first, keeping the real parts */
        pct_tensor *re = pct_to_dtype(self, rd, false);
        if (!re) return NULL;
        red_ctx ctx = {0};
        pct_object *r = pct_red_simple(kind == RED_SUM ? sum_table : mean_table, &ctx, re, rd, mask, keepdim, false, rd, out);
        PCT_DECREF(re);
        return r;
    }
    if (pct_dtype_is_complex(rd) || pct_dtype_is_complex(self->dtype)) {
        if (kind == RED_PROD && pct_dtype_is_complex(rd)) {
            red_ctx ctx = {0};
            return pct_red_simple(prod_table, &ctx, self, rd, mask, keepdim, false, rd, out);
        }
        if (kind != RED_SUM && kind != RED_MEAN) {
            pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", c->op->sig.name,
                      pct_dtype_cpp_name[self->dtype]);
            return NULL;
        }
        return red_complex_sum(kind == RED_SUM ? sum_table : mean_table, self, mask, keepdim, rd, out, kind == RED_MEAN);
    }
    const red_kernel *const *table = sum_table;
    switch (kind) {
    case RED_NANSUM: table = red_is_float(rd) ? nansum_table : sum_table; break;
    case RED_MEAN: table = mean_table; break;
    case RED_NANMEAN: table = nanmean_table; break;
    case RED_PROD: table = prod_table; break;
    default: break;
    }
    if (!table[rd]) {
        pct_error(PCT_ERR_RUNTIME, "%s(): could not infer output dtype. Input dtype must be either a floating "
                     "point or complex dtype. Got: %s", c->op->sig.name, pct_dtype_cpp_name[rd]);
        return NULL;
    }
    red_ctx ctx = {0};
    return pct_red_simple(table, &ctx, self, rd, mask, keepdim, false, rd, out);
}

#define RED_SUM_ENTRY(op, kind)                                                                                       \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return red_sum_family(c, kind, arg.input, &arg.dim, (pct_int_opt){true, 0}, arg.keepdim, arg.dtype);          \
    }
RED_SUM_ENTRY(sum, RED_SUM)
RED_SUM_ENTRY(nansum, RED_NANSUM)
RED_SUM_ENTRY(mean, RED_MEAN)
RED_SUM_ENTRY(nanmean, RED_NANMEAN)

pct_object *pct_cpu_prod(pct_call *c)
{
    PCT_ARGS(prod);
    return red_sum_family(c, RED_PROD, arg.input, NULL, arg.dim, arg.keepdim, arg.dtype);
}

/* ------------------------------------------------------------------------------------ */
/* amax, amin, max(), min(), max.dim, min.dim, argmax, argmin, aminmax                    */

/* torch's checks for reductions without identity over empty dims. */
static int red_check_nonempty(const pct_tensor *t, uint64_t mask, const char *name, bool dim_given, bool paren)
{
    if (t->numel != 0) return 0;
    if (!dim_given) {
        pct_error(PCT_ERR_RUNTIME,
                     "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                     "with the 'dim' argument.", name);
        return -1;
    }
    for (int d = 0; d < t->ndim; d++) {
        if (((mask >> d) & 1) && t->sizes[d] == 0) {
            pct_error(PCT_ERR_INDEX, "%s%s: Expected reduction dim %d to have non-zero size.", name,
                         paren ? "()" : "", d);
            return -1;
        }
    }
    return 0;
}

static pct_object *red_amax_family(pct_call *c, bool is_max, pct_tensor *self, const pct_int_list *dims, bool keepdim)
{
    pct_tensor *out = c->out;
    const char *name = is_max ? "amax" : "amin";
    uint64_t mask;
    if (pct_red_mask(self, dims, true, true, &mask) < 0) return NULL;
    if (red_check_nonempty(self, mask, name, !dims->none && dims->n > 0, true) < 0) return NULL;
    if (out && out->dtype != self->dtype) {
        pct_error(PCT_ERR_RUNTIME, "Expected the dtype for input and out to match, but got %s for input's dtype "
                     "and %s for out's dtype.", pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[out->dtype]);
        return NULL;
    }
    red_ctx ctx = {0};
    return pct_red_simple(is_max ? amax_table : amin_table, &ctx, self, self->dtype, mask, keepdim, false,
                      self->dtype, out);
}

pct_object *pct_cpu_amax(pct_call *c)
{
    PCT_ARGS(amax);
    return red_amax_family(c, true, arg.input, &arg.dim, arg.keepdim);
}

pct_object *pct_cpu_amin(pct_call *c)
{
    PCT_ARGS(amin);
    return red_amax_family(c, false, arg.input, &arg.dim, arg.keepdim);
}

static pct_object *red_all_minmax(bool is_max, pct_tensor *self)
{
    uint64_t mask = red_all_mask(self->ndim);
    if (red_check_nonempty(self, mask, is_max ? "max" : "min", false, true) < 0) return NULL;
    red_ctx ctx = {0};
    return pct_red_simple(is_max ? amax_table : amin_table, &ctx, self, self->dtype, mask, false, false, self->dtype, NULL);
}

pct_object *pct_cpu_max_all(pct_call *c)
{
    PCT_ARGS(max);
    return red_all_minmax(true, arg.input);
}

pct_object *pct_cpu_min_all(pct_call *c)
{
    PCT_ARGS(min);
    return red_all_minmax(false, arg.input);
}

static pct_object *red_max_dim(bool is_max, pct_tensor *self, int64_t dim, bool keepdim, pct_object *out)
{
    const char *name = is_max ? "max" : "min";
    uint64_t mask;
    pct_tensor *outs[2], *res[2];
    if (pct_out_parse_pair(out, name, outs) < 0) return NULL; /* torch's parser: before any other check */
    if (pct_red_mask_one(self, dim, &mask, NULL) < 0) return NULL;
    if (red_check_nonempty(self, mask, name, true, true) < 0) return NULL;
    if (outs[0] && pct_out_check_dtype(outs[0], self->dtype) < 0) return NULL;
    if (outs[1] && pct_out_check_dtype(outs[1], PCT_INT64) < 0) return NULL;
    int dtypes[2] = {self->dtype, PCT_INT64};
    red_ctx ctx = {0};
    const red_kernel *k = (is_max ? maxdim_table : mindim_table)[self->dtype];
    if (pct_red_exec(k, &ctx, self, mask, keepdim, true, 2, dtypes, outs, res) < 0) return NULL;
    return pct_result_tuple(2, res);
}

/* out=(values, indices): the parsed sequence (its two tensors are checked by pct_out_parse_pair) */
pct_object *pct_cpu_max_dim(pct_call *c)
{
    PCT_ARGS(max_dim);
    return red_max_dim(true, arg.input, arg.dim, arg.keepdim, arg.out.seq);
}

pct_object *pct_cpu_min_dim(pct_call *c)
{
    PCT_ARGS(min_dim);
    return red_max_dim(false, arg.input, arg.dim, arg.keepdim, arg.out.seq);
}

pct_object *pct_cpu_max_other(pct_call *c)
{
    PCT_ARGS(max_other);
    pct_pw_ctx ctx = {0};
    pct_tensor *in[2] = {arg.input, arg.other};
    return pct_pw_run(c, PCT_OP_maximum, 2, in, &ctx);
}

pct_object *pct_cpu_min_other(pct_call *c)
{
    PCT_ARGS(min_other);
    pct_pw_ctx ctx = {0};
    pct_tensor *in[2] = {arg.input, arg.other};
    return pct_pw_run(c, PCT_OP_minimum, 2, in, &ctx);
}

static pct_object *red_argmax_family(pct_call *c, bool is_max, pct_tensor *self, pct_int_opt dim, bool keepdim)
{
    pct_tensor *out = c->out;
    const char *name = is_max ? "argmax" : "argmin";
    uint64_t mask;
    bool dim_given = !dim.none;
    if (self->dtype == PCT_BOOL) {
        pct_error(PCT_ERR_RUNTIME, "%s(): does not support bool input", name);
        return NULL;
    }
    if (dim_given) {
        if (pct_red_mask_one(self, dim.v, &mask, NULL) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    if (self->numel == 0 && !dim_given) {
        pct_error(PCT_ERR_INDEX, "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
        return NULL;
    }
    if (red_check_nonempty(self, mask, name, true, true) < 0) return NULL;
    if (pct_out_check_dtype(out, PCT_INT64) < 0) return NULL;
    red_ctx ctx = {0};
    return pct_red_simple(is_max ? argmax_table : argmin_table, &ctx, self, self->dtype, mask, keepdim, true,
                      PCT_INT64, out);
}

pct_object *pct_cpu_argmax(pct_call *c)
{
    PCT_ARGS(argmax);
    return red_argmax_family(c, true, arg.input, arg.dim, arg.keepdim);
}

pct_object *pct_cpu_argmin(pct_call *c)
{
    PCT_ARGS(argmin);
    return red_argmax_family(c, false, arg.input, arg.dim, arg.keepdim);
}

pct_object *pct_cpu_aminmax(pct_call *c)
{
    PCT_ARGS(aminmax);
    pct_tensor *self = arg.input;
    uint64_t mask;
    bool dim_given = !arg.dim.none;
    if (dim_given) {
        if (pct_red_mask_one(self, arg.dim.v, &mask, NULL) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    if (self->numel == 0 && !dim_given) {
        pct_error_str(PCT_ERR_RUNTIME,
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
        return NULL;
    }
    if (red_check_nonempty(self, mask, "aminmax", true, false) < 0) return NULL;
    int dtypes[2] = {self->dtype, self->dtype};
    pct_tensor *res[2];
    red_ctx ctx = {0};
    if (pct_red_exec(aminmax_table[self->dtype], &ctx, self, mask, arg.keepdim, false, 2, dtypes, NULL, res) < 0) return NULL;
    return pct_result_tuple(2, res);
}

/* ------------------------------------------------------------------------------------ */
/* all, any, count_nonzero                                                               */

static pct_object *red_all_any(pct_call *c, bool is_all, pct_tensor *self, const pct_int_list *dims, bool keepdim)
{
    pct_tensor *out = c->out;
    uint64_t mask;
    int rd = self->dtype == PCT_UINT8 ? PCT_UINT8 : PCT_BOOL;
    if (out) { /* torch checks out's dtype before the dims */
        if (out->dtype != PCT_BOOL && out->dtype != PCT_UINT8) {
            pct_error(PCT_ERR_RUNTIME, "%s only supports bool tensor for result, got: %s", is_all ? "all" : "any",
                         pct_dtype_cpp_name[out->dtype]);
            return NULL;
        }
        rd = out->dtype;
    }
    /* torch: dim=() reduces nothing for all/any */
    if (pct_red_mask(self, dims, false, true, &mask) < 0) return NULL;
    red_ctx ctx = {0};
    if (pct_dtype_is_complex(self->dtype)) { /* a complex element is true where it is not 0 + 0j */
        pct_tensor *b = pct_to_dtype(self, PCT_BOOL, false);
        if (!b) return NULL;
        pct_object *r = pct_red_simple(is_all ? all_table : any_table, &ctx, b, PCT_BOOL, mask, keepdim, false, rd, out);
        PCT_DECREF(b);
        return r;
    }
    return pct_red_simple(is_all ? all_table : any_table, &ctx, self, self->dtype, mask, keepdim, false, rd, out);
}

pct_object *pct_cpu_all(pct_call *c)
{
    PCT_ARGS(all);
    return red_all_any(c, true, arg.input, &arg.dim, arg.keepdim);
}

pct_object *pct_cpu_any(pct_call *c)
{
    PCT_ARGS(any);
    return red_all_any(c, false, arg.input, &arg.dim, arg.keepdim);
}

pct_object *pct_cpu_count_nonzero(pct_call *c)
{
    PCT_ARGS(count_nonzero);
    pct_tensor *self = arg.input;
    uint64_t mask;
    if (pct_red_mask(self, &arg.dim, true, true, &mask) < 0) return NULL;
    red_ctx ctx = {0};
    if (pct_dtype_is_complex(self->dtype)) { /* the count of elements other than 0 + 0j */
        pct_tensor *b = pct_to_dtype(self, PCT_BOOL, false);
        if (!b) return NULL;
        pct_object *r = pct_red_simple(cnz_table, &ctx, b, PCT_BOOL, mask, false, false, PCT_INT64, NULL);
        PCT_DECREF(b);
        return r;
    }
    return pct_red_simple(cnz_table, &ctx, self, self->dtype, mask, false, false, PCT_INT64, NULL);
}

/* ------------------------------------------------------------------------------------ */
/* var, std, var_mean, std_mean                                                           */

/* torch's var/std with one output element for float and double (its std_var_all_cpu): the mean as mean() gives it
 * (a sum in the dtype, which may overflow to inf where Welford would not), then the squared deviations summed in
 * double; the value overwrites res's one element. */
static int var_all_two_pass(pct_tensor *in, const red_ctx *vctx, pct_tensor *res)
{
    red_ctx mctx = {0};
    pct_tensor *m = (pct_tensor *)pct_red_simple(mean_table, &mctx, in, in->dtype, red_all_mask(in->ndim), false, false,
                                              in->dtype, NULL);
    if (!m) return -1;
    double mean = pct_load_as_double(pct_tensor_data(m), m->dtype);
    PCT_DECREF(m);
    pct_tensor *x = pct_contiguous(in);
    if (!x) return -1;
    const int64_t n = x->numel;
    const char *p = pct_tensor_data(x);
    const bool f64 = x->dtype == PCT_FLOAT64;
    double s2 = 0;
    PCT_NOGIL_BEGIN
#pragma omp parallel for reduction(+ : s2) if (n > PCT_PARALLEL_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        double d = (f64 ? ((const double *)p)[i] : (double)((const float *)p)[i]) - mean;
        s2 += d * d;
    }
    PCT_NOGIL_END
    PCT_DECREF(x);
    double dof = (double)vctx->count - vctx->correction;
    double v = s2 / (dof > 0 ? dof : 0);
    pct_store_double(pct_tensor_data(res), res->dtype, vctx->take_sqrt ? sqrt(v) : v);
    return 0;
}

static pct_object *red_var_family(pct_call *c, pct_tensor *self, const pct_int_list *dimv, pct_bool_opt unbiased,
                                  bool keepdim, const pct_scalar *correction, pct_tensor *out, bool take_sqrt,
                                  bool with_mean);

/* The real (part 0) or imaginary (part 1) part of a complex tensor as a strided real view. */
static pct_tensor *red_complex_part(pct_tensor *z, int part)
{
    int64_t strides[PCT_MAX_DIMS];
    for (int i = 0; i < z->ndim; i++) strides[i] = z->strides[i] * 2;
    return pct_tensor_view_as_dtype(z, z->ndim, z->sizes, strides, z->offset * 2 + part, pct_dtype_to_real(z->dtype));
}

/* var/std(_mean) of a complex tensor, as torch: the variances of the real and imaginary parts (each with the
 * correction) added in the real dtype, then the square root for std; the mean is the complex mean. */
static pct_object *red_var_complex(pct_call *c, pct_tensor *self, const pct_int_list *dimv, pct_bool_opt unbiased,
                                   bool keepdim, const pct_scalar *correction, pct_tensor *out, bool take_sqrt,
                                   bool with_mean, uint64_t mask)
{
    pct_tensor *parts[2] = {NULL, NULL}, *vars[2] = {NULL, NULL}, *res = NULL;
    pct_object *mean = NULL;
    for (int k = 0; k < 2; k++) {
        if (!(parts[k] = red_complex_part(self, k))) goto fail;
        vars[k] = (pct_tensor *)red_var_family(c, parts[k], dimv, unbiased, keepdim, correction, NULL, false, false);
        if (!vars[k]) goto fail;
    }
    res = vars[0]; /* fresh and contiguous, as vars[1]: the sum is written into it */
    vars[0] = NULL;
    {
        const int64_t n = res->numel;
        if (res->dtype == PCT_FLOAT64) {
            double *a = (double *)pct_tensor_data(res);
            const double *b = (const double *)pct_tensor_data(vars[1]);
            for (int64_t i = 0; i < n; i++) a[i] = take_sqrt ? sqrt(a[i] + b[i]) : a[i] + b[i];
        } else {
            float *a = (float *)pct_tensor_data(res);
            const float *b = (const float *)pct_tensor_data(vars[1]);
            for (int64_t i = 0; i < n; i++) a[i] = take_sqrt ? sqrtf(a[i] + b[i]) : a[i] + b[i];
        }
    }
    if (with_mean) {
        if (!(mean = red_complex_sum(mean_table, self, mask, keepdim, self->dtype, NULL, false))) goto fail;
    } else if (out) {
        if (pct_out_resize(out, res->ndim, res->sizes) < 0 || pct_copy_(out, res) < 0) goto fail;
        PCT_DECREF(res);
        PCT_INCREF(out);
        res = out;
    }
    for (int k = 0; k < 2; k++) { PCT_XDECREF(parts[k]); PCT_XDECREF(vars[k]); }
    if (!with_mean) return (pct_object *)res;
    pct_object *items[2] = {(pct_object *)res, mean};
    return pct_tuple_steal(2, items);
fail:
    for (int k = 0; k < 2; k++) { PCT_XDECREF(parts[k]); PCT_XDECREF(vars[k]); }
    PCT_XDECREF(res);
    PCT_XDECREF(mean);
    return NULL;
}

/* var/std(_mean) over dims (NULL: every dim) with unbiased or correction (none or NULL: not given) */
static pct_object *red_var_family(pct_call *c, pct_tensor *self, const pct_int_list *dimv, pct_bool_opt unbiased, bool keepdim,
                                const pct_scalar *correction, pct_tensor *out, bool take_sqrt, bool with_mean)
{
    const char *name = c->op->sig.name;
    /* torch rejects this combination while parsing, before any other check */
    if (!unbiased.none && correction) {
        pct_error(PCT_ERR_TYPE, "%s() received an invalid combination of arguments - got (unbiased=bool, "
                     "correction=Number): pass only one of unbiased and correction", name);
        return NULL;
    }
    if (!red_is_float(self->dtype) && !pct_dtype_is_complex(self->dtype)) { /* torch names var_mean and std_mean; var and std share one message */
        if (with_mean) pct_error(PCT_ERR_RUNTIME, "%s only support floating point and complex dtypes", name);
        else pct_error_str(PCT_ERR_RUNTIME, "std and var only support floating point and complex dtypes");
        return NULL;
    }
    if (pct_out_check_cast(pct_dtype_is_complex(self->dtype) ? pct_dtype_to_real(self->dtype) : self->dtype, out) < 0)
        return NULL;
    uint64_t mask;
    if (dimv) {
        if (pct_red_mask(self, dimv, true, false, &mask) < 0) return NULL;
    } else {
        mask = red_all_mask(self->ndim);
    }
    if (pct_dtype_is_complex(self->dtype))
        return red_var_complex(c, self, dimv, unbiased, keepdim, correction, out, take_sqrt, with_mean, mask);
    red_ctx ctx = {0};
    ctx.correction = 1;
    if (correction) ctx.correction = correction->d;
    else if (!unbiased.none) ctx.correction = unbiased.v ? 1 : 0;
    ctx.take_sqrt = take_sqrt;
    ctx.with_mean = with_mean;
    int rd = self->dtype;
    if (out) {
        if (!red_is_float(out->dtype)) {
            pct_error_str(PCT_ERR_RUNTIME, "std and var only support floating point and complex dtypes");
            return NULL;
        }
        rd = out->dtype;
    }
    int64_t count = pct_red_count(self, mask);
    if ((double)count - ctx.correction <= 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s(): degrees of freedom is <= 0. Correction should be strictly less than the "
                 "reduction factor (input numel divided by output numel).", take_sqrt ? "std" : "var");
        if (pct_warn(PCT_WARN_USER, "%s", msg) < 0) return NULL;
    }
    pct_tensor *in = pct_to_dtype(self, rd, false);
    if (!in) return NULL;
    int dtypes[2] = {rd, rd};
    pct_tensor *outs[2] = {out, NULL}, *res[2] = {NULL, NULL};
    int r = pct_red_exec(var_table[rd], &ctx, in, mask, keepdim, false, with_mean ? 2 : 1, dtypes, outs, res);
    if (r == 0 && !with_mean && count > 0 && res[0]->numel == 1 && (rd == PCT_FLOAT32 || rd == PCT_FLOAT64) &&
        in->device_type == PCT_CPU && /* torch's CPU kernel; its CUDA one is Welford's throughout */
        var_all_two_pass(in, &ctx, res[0]) < 0) {
        PCT_CLEAR(res[0]);
        r = -1;
    }
    PCT_DECREF(in);
    if (r < 0) return NULL;
    if (!with_mean) return (pct_object *)res[0];
    pct_object *items[2] = {(pct_object *)res[0], (pct_object *)res[1]};
    return pct_tuple_steal(2, items);
}

/* var(input, dim, unbiased, keepdim, *, correction, out) and its family */
#define RED_VAR_ENTRY(op, out_, take_sqrt, with_mean)                                                                 \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return red_var_family(c, arg.input, &arg.dim, arg.unbiased, arg.keepdim, arg.correction, out_, take_sqrt, with_mean);   \
    }
RED_VAR_ENTRY(var, c->out, false, false)
RED_VAR_ENTRY(std, c->out, true, false)
RED_VAR_ENTRY(var_mean, NULL, false, true)
RED_VAR_ENTRY(std_mean, NULL, true, true)
/* the var(input, bool unbiased) overloads */
#define RED_VAR_UNBIASED_ENTRY(op, take_sqrt, with_mean)                                                              \
    pct_object *pct_cpu_##op(pct_call *c)                                                                             \
    {                                                                                                                 \
        PCT_ARGS(op);                                                                                                 \
        return red_var_family(c, arg.input, NULL, (pct_bool_opt){false, arg.unbiased}, false, NULL, NULL, take_sqrt, with_mean); \
    }
RED_VAR_UNBIASED_ENTRY(var_unbiased, false, false)
RED_VAR_UNBIASED_ENTRY(std_unbiased, true, false)
RED_VAR_UNBIASED_ENTRY(var_mean_unbiased, false, true)
RED_VAR_UNBIASED_ENTRY(std_mean_unbiased, true, true)

/* ------------------------------------------------------------------------------------ */
/* logsumexp, norm                                                                        */

pct_object *pct_cpu_logsumexp(pct_call *c)
{
    PCT_ARGS(logsumexp);
    pct_tensor *self = arg.input, *out = c->out;
    uint64_t mask;
    int rd = red_is_float(self->dtype) || pct_dtype_is_complex(self->dtype) ? self->dtype : pct_default_dtype;
    if (out) { /* torch checks out's dtype before the dims */
        if (!red_is_float(out->dtype) && !pct_dtype_is_complex(out->dtype)) {
            pct_error(PCT_ERR_RUNTIME, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                         pct_dtype_cpp_name[out->dtype]);
            return NULL;
        }
        rd = out->dtype;
    }
    if (pct_red_mask(self, &arg.dim, true, true, &mask) < 0) return NULL;
    if (arg.dim.n == 0 && !arg.keepdim && self->ndim > 0 && self->numel > 0) {
        /* torch reduces every dim for dim=[] but adds the max back with keepdim's shape, in place: refused */
        int64_t ones[PCT_MAX_DIMS];
        char b[PCT_SHAPE_BUF];
        for (int d = 0; d < self->ndim; d++) ones[d] = 1;
        pct_error(PCT_ERR_RUNTIME, "output with shape [] doesn't match the broadcast shape %s",
                     pct_shape_str(b, sizeof b, self->ndim, ones));
        return NULL;
    }
    red_ctx ctx = {0};
    if (pct_dtype_is_complex(rd)) return pct_red_simple(clse_table, &ctx, self, rd, mask, arg.keepdim, false, rd, out);
    return pct_red_simple(lse_table, &ctx, self, rd, mask, arg.keepdim, false, rd, out);
}

static pct_object *red_norm(pct_tensor *self, double p, const pct_int_list *dimv, bool keepdim, int dtype_arg,
                          pct_tensor *out)
{
    if (!red_is_float(self->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     pct_dtype_cpp_name[self->dtype]);
        return NULL;
    }
    uint64_t mask;
    if (pct_red_mask(self, dimv, true, false, &mask) < 0) return NULL;
    int rd = self->dtype;
    if (dtype_arg != PCT_NO_DTYPE) {
        int d = dtype_arg;
        if (!red_is_float(d)) {
            pct_error(PCT_ERR_RUNTIME, "linalg.vector_norm: dtype should be floating point or complex, but got %s",
                         pct_dtype_cpp_name[d]);
            return NULL;
        }
        if (pct_promote_types(self->dtype, d) != d) {
            pct_error(PCT_ERR_RUNTIME, "linalg.vector_norm: the dtype of the input (%s) should be convertible "
                         "without narrowing to the specified dtype (%s)", pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[d]);
            return NULL;
        }
        rd = d;
    }
    if (pct_out_check_dtype(out, rd) < 0) return NULL;
    if (self->numel == 0 && (p < 0 || p == INFINITY)) {
        char ps[64], msg[256];
        snprintf(ps, sizeof ps, "%g", p);
        if (dimv->none || dimv->n == 0) {
            snprintf(msg, sizeof msg, "linalg.vector_norm cannot compute the %s norm on an empty tensor because the "
                     "operation does not have an identity", ps);
            pct_error_str(PCT_ERR_RUNTIME, msg);
            return NULL;
        }
        for (int i = 0; i < dimv->n; i++) {
            int d = pct_wrap_dim(dimv->v[i], self->ndim);
            if (d >= 0 && self->ndim && self->sizes[d] == 0) {
                /* torch's message has no space before "because" */
                snprintf(msg, sizeof msg, "linalg.vector_norm cannot compute the %s norm on the dimension %d"
                         "because this dimension is empty and the operation does not have an identity", ps, d);
                pct_error_str(PCT_ERR_RUNTIME, msg);
                return NULL;
            }
        }
    }
    const red_kernel *const *table;
    if (p == 2) table = norm2_table;
    else if (p == 1) table = norm1_table;
    else if (p == 0) table = norm0_table;
    else if (p == INFINITY) table = norminf_table;
    else if (p == -INFINITY) table = normninf_table;
    else table = normp_table;
    red_ctx ctx = {0};
    ctx.p = p;
    return pct_red_simple(table, &ctx, self, rd, mask, keepdim, false, rd, out);
}

/* norm(input, Scalar? p=2, int[1]? dim=None, bool keepdim=False, *, dtype=None, out=None) */
pct_object *pct_cpu_norm(pct_call *c)
{
    PCT_ARGS(norm);
    double p = (arg.p == NULL) ? 2.0 : arg.p->d;
    if (pct_dtype_is_complex(arg.input->dtype)) { /* the norm of the moduli (blas.h) */
        pct_tensor *m = pct_complex_modulus(arg.input, arg.dtype, "linalg.vector_norm");
        if (!m) return NULL;
        pct_object *r = red_norm(m, p, &arg.dim, arg.keepdim, PCT_NO_DTYPE, c->out);
        PCT_DECREF(m);
        return r;
    }
    return red_norm(arg.input, p, &arg.dim, arg.keepdim, arg.dtype, c->out);
}
