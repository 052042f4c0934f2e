/* range.c: the range factories arange, linspace and logspace.
 *
 * Note [Range factories and dtypes]: torch computes these in the result dtype's own terms, and so do we:
 *  - the result dtype is out='s (an explicit dtype= must agree), else dtype=, else inferred from the arguments;
 *  - arange checks its bounds in double, sizes the result in double, except for int64 where start, end and step
 *    are first truncated to int64 and the size is an exact (wrapping) integer division; integral results are
 *    start + i * step in int64 with start and step truncated; linspace and logspace convert start and end to the
 *    result dtype first (a range-checked conversion: "value cannot be converted ... without overflow"), and
 *    integral results convert the double value as x86 does (out of range: the minimum of int32 or int64);
 *  - an out= tensor keeps its shape when it already has the right number of elements (a 0-d out stays 0-d), is
 *    resized to (n,) otherwise, and is written in row-major order of its own shape;
 *  - bool has no kernel (NotImplementedError), except where nothing is computed (linspace/logspace of <= 1 step).
 */
#include "../op.h"
#include "../error.h"
#include "../out.h"
#include "../iter.h"
#include "fill.h"
#include "factory.h"
#include <complex.h>
#include <math.h>

#define TWO63 9223372036854775808.0

/* double -> integer as the x86 conversion torch's kernels compile to: cvttsd2si, which gives the minimum of the
 * 32- or 64-bit range for NaN and out-of-range values; narrower types keep the low bits of the 32-bit result. */
static int64_t x86_to_int(double v, int dtype)
{
    if (dtype == PCT_INT64) return v > -TWO63 - 1024.0 && v < TWO63 ? (int64_t)v : INT64_MIN;
    return v > -2147483649.0 && v < 2147483648.0 ? (int64_t)v : (int64_t)INT32_MIN;
}

static void store_value(char *p, int dtype, double v)
{
    if (pct_dtype_is_integral(dtype, false)) pct_store_int64(p, dtype, x86_to_int(v, dtype));
    else pct_store_double(p, dtype, v);
}

/* A scalar converted to dtype (range-checked), read back as double (and as int64 for integral dtypes). */
static int scalar_in_dtype(const pct_scalar *s, int dtype, double *d, int64_t *i)
{
    if (pct_scalar_check_fits(s, dtype) < 0) return -1;
    int64_t buf = 0;
    if (s->kind == PCT_SCALAR_FLOAT) pct_store_double(&buf, dtype, s->d);
    else pct_store_int64(&buf, dtype, s->i);
    *d = pct_load_as_double(&buf, dtype);
    *i = pct_load_as_int64(&buf, dtype);
    return 0;
}

/* A scalar truncated to int64 (torch's accumulate type of integral dtypes), range-checked. */
static int scalar_to_int64(const pct_scalar *s, int64_t *out)
{
    if (s->kind != PCT_SCALAR_FLOAT) { *out = s->i; return 0; }
    if (!(s->d >= -TWO63 && s->d < TWO63)) {
        pct_error_str(PCT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
        return -1;
    }
    *out = (int64_t)s->d;
    return 0;
}

static int no_bool_kernel(int dtype, const char *name)
{
    if (dtype != PCT_BOOL) return 0;
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", name);
    return -1;
}

/* The tensor a range factory writes: out= (kept when it has n elements, else resized to (n,)) or a new one. */
static pct_tensor *range_target(pct_call *c, int64_t n, int dtype)
{
    pct_tensor *t = c->out;
    if (!t) return pct_factory_requires_grad(c, pct_tensor_empty(1, &n, dtype, PCT_CPU, -1));
    if (t->numel != n) {
        /* arange warns about a non-empty out of another size (its own text); linspace and logspace do not */
        bool is_arange = c->op_index == PCT_OP_arange || c->op_index == PCT_OP_arange_end;
        char b[PCT_SHAPE_BUF];
        if (is_arange && t->numel != 0 && n >= 0 &&
            pct_warn(PCT_WARN_USER, "The number of elements in the out tensor of shape %s is %lld which does "
                             "not match the computed number of elements %lld. Note that this may occur as a result of "
                             "rounding error. The out tensor will be resized to a tensor of shape (%lld,).",
                             pct_shape_str(b, sizeof b, t->ndim, t->sizes), (long long)t->numel, (long long)n, (long long)n) < 0)
            return NULL;
        if (pct_out_resize_quiet(t, 1, &n) < 0) return NULL;
    } else if (pct_check_written_overlap(t, 0, NULL) < 0) {
        return NULL;
    }
    PCT_INCREF(t);
    return pct_factory_requires_grad(c, t);
}

/* Contiguous memory for writing t's elements in row-major order: t itself, or a scratch copy written back by
 * range_commit. */
static pct_tensor *range_work(pct_tensor *t)
{
    if (pct_tensor_is_contiguous(t)) { PCT_INCREF(t); return t; }
    return pct_tensor_empty(t->ndim, t->sizes, t->dtype, PCT_CPU, -1);
}

/* Finishes a range factory: copies the scratch back, drops it; returns t (stolen) or NULL. An out= tensor
 * counts the write in its version; a new tensor starts at version 0, as in torch. */
static pct_object *range_commit(pct_call *c, pct_tensor *t, pct_tensor *work)
{
    int rc = work == t ? 0 : pct_copy_(t, work);
    PCT_DECREF(work);
    if (rc < 0) { PCT_DECREF(t); return NULL; }
    if (!c->out) atomic_store(&t->version->value, 0);
    else if (work == t) pct_tensor_bump_version(t);
    return (pct_object *)t;
}

/* arange(start, end, step), and arange(end) with start 0 and step 1. */
static pct_object *arange_impl(pct_call *c, pct_scalar start, pct_scalar end, pct_scalar step)
{
    bool any_float = start.kind == PCT_SCALAR_FLOAT || end.kind == PCT_SCALAR_FLOAT || step.kind == PCT_SCALAR_FLOAT;
    int dtype = pct_factory_dtype(c, any_float ? pct_default_dtype : PCT_INT64);
    if (dtype < 0 || no_bool_kernel(dtype, "arange_cpu") < 0) return NULL;
    if (!pct_dtype_is_floating(dtype) &&
        (pct_scalar_is_uint64(&start) || pct_scalar_is_uint64(&end) || pct_scalar_is_uint64(&step))) {
        /* torch computes an integral arange in int64: a Python int past it (2 ** 64 - 1) does not convert */
        pct_error_str(PCT_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
        return NULL;
    }
    if (!(step.d > 0 || step.d < 0)) { pct_error_str(PCT_ERR_RUNTIME, "step must be nonzero"); return NULL; }
    if (!isfinite(start.d) || !isfinite(end.d)) {
        pct_error(PCT_ERR_RUNTIME, "unsupported range: %g -> %g", start.d, end.d);
        return NULL;
    }
    if (!((step.d > 0 && end.d >= start.d) || (step.d < 0 && end.d <= start.d))) {
        pct_error_str(PCT_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
        return NULL;
    }
    double n_d;
    if (dtype == PCT_INT64) {
        int64_t xs, xe, xst;
        if (scalar_to_int64(&start, &xs) < 0 || scalar_to_int64(&end, &xe) < 0 || scalar_to_int64(&step, &xst) < 0)
            return NULL;
        if (xst == 0) { pct_error_str(PCT_ERR_VALUE, "step must be nonzero"); return NULL; }
        /* (end - start + step - sign) / step, wrapping as torch's int64 arithmetic does */
        int64_t num = (int64_t)((uint64_t)xe - (uint64_t)xs + (uint64_t)xst - (uint64_t)(xst > 0 ? 1 : -1));
        n_d = xst == -1 && num == INT64_MIN ? -TWO63 : (double)(num / xst);
    } else {
        n_d = ceil((end.d - start.d) / step.d);
    }
    if (!(n_d >= 0 && n_d <= TWO63)) {
        pct_error_str(PCT_ERR_RUNTIME, "invalid size, possible overflow?");
        return NULL;
    }
    int64_t n = n_d >= TWO63 ? INT64_MIN : (int64_t)n_d; /* torch's cast of 2**63 */
    pct_tensor *t = range_target(c, n, dtype);
    if (!t) return NULL;
    /* the kernel's accumulate type: int64 for integral dtypes, float for float16/bfloat16 (range-checked) */
    int64_t xs = 0, xst = 0;
    bool integral = pct_dtype_is_integral(dtype, false);
    if ((integral && (scalar_to_int64(&start, &xs) < 0 || scalar_to_int64(&step, &xst) < 0)) ||
        (pct_dtype_is_reduced_float(dtype) &&
         (pct_scalar_check_fits(&start, PCT_FLOAT32) < 0 || pct_scalar_check_fits(&step, PCT_FLOAT32) < 0))) {
        PCT_DECREF(t);
        return NULL;
    }
    pct_tensor *work = range_work(t);
    if (!work) { PCT_DECREF(t); return NULL; }
    char *p = pct_tensor_data(work);
    int item = pct_dtype_itemsize[dtype];
    for (int64_t i = 0; i < n; i++) {
        if (integral) pct_store_int64(p + i * item, dtype, (int64_t)((uint64_t)xs + (uint64_t)xst * (uint64_t)i));
        else pct_store_double(p + i * item, dtype, start.d + (double)i * step.d);
    }
    return range_commit(c, t, work);
}

pct_object *pct_cpu_arange(pct_call *c) { PCT_ARGS(arange); return arange_impl(c, arg.start, arg.end, arg.step); }

pct_object *pct_cpu_arange_end(pct_call *c)
{
    PCT_ARGS(arange_end);
    return arange_impl(c, (pct_scalar){PCT_SCALAR_INT, 0, 0, 0, 0}, arg.end, (pct_scalar){PCT_SCALAR_INT, 1, 1, 0, 0});
}

/* linspace (log_base false) or logspace values into contiguous memory p (torch fills from both ends toward the
 * middle so both endpoints are exact). */
static void linspace_fill(char *p, int dtype, double start, double end, int64_t istart, int64_t iend, int64_t steps,
                          bool log_base, double base)
{
    int item = pct_dtype_itemsize[dtype];
    int64_t half = steps / 2;
    if (pct_dtype_is_integral(dtype, false)) {
        double step;
        if (log_base) {
            /* end - start in the dtype's own arithmetic (int and wider wrap) */
            int64_t diff = (int64_t)((uint64_t)iend - (uint64_t)istart);
            if (dtype == PCT_INT32) diff = (int32_t)(uint32_t)(uint64_t)diff;
            step = (double)diff / (double)(steps - 1);
        } else {
            step = (end - start) / (double)(steps - 1);
        }
        for (int64_t i = 0; i < steps; i++) {
            double v = i < half ? start + step * (double)i : end - step * (double)(steps - i - 1);
            store_value(p + i * item, dtype, log_base ? pow(base, v) : v);
        }
        return;
    }
    bool single = dtype == PCT_FLOAT32 || pct_dtype_is_reduced_float(dtype);
    double step = (end - start) / (double)(steps - 1);
    float stepf = (float)step, startf = (float)start, endf = (float)end;
    /* linspace as torch's kernel computes it for float32/64 (bit-identical): the step in the output's
     * precision, each value one fused multiply-add from the nearer end; logspace, float16 and bfloat16
     * without the fusion (torch's reduced-precision kernels round differently: up to 1 ulp apart) */
    bool fused = !log_base && (dtype == PCT_FLOAT32 || dtype == PCT_FLOAT64);
    if (fused && single) stepf = (endf - startf) / (float)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
        double v;
        if (fused && single) {
            v = i < half ? fmaf(stepf, (float)i, startf) : fmaf(-stepf, (float)(steps - i - 1), endf);
        } else if (fused) {
            v = i < half ? fma(step, (double)i, start) : fma(-step, (double)(steps - i - 1), end);
        } else {
            if (single) v = i < half ? startf + stepf * (float)i : endf - stepf * (float)(steps - i - 1);
            else v = i < half ? start + step * (double)i : end - step * (double)(steps - i - 1);
            if (log_base) v = single ? (double)powf((float)base, (float)v) : pow(base, v);
        }
        pct_store_double(p + i * item, dtype, v);
    }
}

/* complex linspace / logspace, as torch's kernel: the step (end - start) / (steps - 1) and each value from the nearer
 * end, the real and imaginary parts apart (the count and index are real numbers: a NaN real part leaves the imaginary
 * part alone), base ** value for logspace */
#define RANGE_COMPLEX_FILL(T, R)                                                                                 \
    {                                                                                                            \
        T *q = (T *)p;                                                                                           \
        const T s = (T)start, e = (T)end, step = steps > 1 ? (e - s) / (R)(steps - 1) : 0, b = (T)base;          \
        if (steps == 1) q[0] = log_base ? cpow(b, s) : s;                                                        \
        for (int64_t i = 0; i < steps && steps > 1; i++) {                                                       \
            T v = i < half ? s + step * (R)i : e - step * (R)(steps - i - 1);                                    \
            q[i] = log_base ? cpow(b, v) : v;                                                                    \
        }                                                                                                        \
    }
static void linspace_fill_complex(char *p, int dtype, pct_cdouble start, pct_cdouble end, int64_t steps, bool log_base,
                                  double base)
{
    const int64_t half = steps / 2;
    if (dtype == PCT_COMPLEX64) RANGE_COMPLEX_FILL(pct_cfloat, float)
    else RANGE_COMPLEX_FILL(pct_cdouble, double)
}
#undef RANGE_COMPLEX_FILL

static pct_object *linspace_impl(pct_call *c, const pct_scalar *start, const pct_scalar *end, int64_t steps, bool log_base,
                                 double base)
{
    const bool complex_ends = start->kind == PCT_SCALAR_COMPLEX || end->kind == PCT_SCALAR_COMPLEX;
    const int default_complex = pct_dtype_to_complex(pct_default_dtype);
    int dtype = pct_factory_dtype(c, complex_ends ? default_complex : pct_default_dtype);
    if (dtype < 0) return NULL;
    if (complex_ends && !pct_dtype_is_complex(dtype) && !pct_arg(c, "dtype")->none) { /* torch's inference check */
        pct_error(PCT_ERR_RUNTIME, "torch.%s(): inferred dtype %s can't be safely cast to passed dtype %s",
                  log_base ? "logspace" : "linspace", pct_dtype_cpp_type_name[default_complex],
                  pct_dtype_cpp_name[dtype]);
        return NULL;
    }
    if (steps < 0) { pct_error_str(PCT_ERR_RUNTIME, "number of steps must be non-negative"); return NULL; }
    pct_tensor *t = range_target(c, steps, dtype);
    if (!t || steps == 0) return (pct_object *)t;
    if (steps == 1 && !pct_dtype_is_complex(dtype)) { /* a fill: start, or base ** start */
        pct_scalar v = *start;
        if (log_base) v = (pct_scalar){PCT_SCALAR_FLOAT, 0, pow(base, start->d), 0, 0};
        if (pct_fill_check_value(&v, t) < 0 || pct_fill_scalar(t, &v) < 0) { PCT_DECREF(t); return NULL; }
        if (!c->out) atomic_store(&t->version->value, 0);
        return (pct_object *)t;
    }
    double s, e;
    int64_t is, ie;
    pct_tensor *work = NULL;
    if (pct_dtype_is_complex(dtype)) {
        if (!(work = range_work(t))) { PCT_DECREF(t); return NULL; }
        const pct_cdouble zs = CMPLX(start->d, start->kind == PCT_SCALAR_COMPLEX ? start->im : 0);
        const pct_cdouble ze = CMPLX(end->d, end->kind == PCT_SCALAR_COMPLEX ? end->im : 0);
        linspace_fill_complex(pct_tensor_data(work), dtype, zs, ze, steps, log_base, base);
        return range_commit(c, t, work);
    }
    if (no_bool_kernel(dtype, log_base ? "logspace_cpu" : "linspace_cpu") < 0 ||
        scalar_in_dtype(start, dtype, &s, &is) < 0 || scalar_in_dtype(end, dtype, &e, &ie) < 0 ||
        !(work = range_work(t))) {
        PCT_DECREF(t);
        return NULL;
    }
    linspace_fill(pct_tensor_data(work), dtype, s, e, is, ie, steps, log_base, base);
    return range_commit(c, t, work);
}

pct_object *pct_cpu_linspace(pct_call *c)
{
    PCT_ARGS(linspace);
    return linspace_impl(c, &arg.start, &arg.end, arg.steps, false, 0);
}

pct_object *pct_cpu_logspace(pct_call *c)
{
    PCT_ARGS(logspace);
    return linspace_impl(c, &arg.start, &arg.end, arg.steps, true, arg.base);
}
