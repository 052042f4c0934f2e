/* random.c: the random sampling ops (rand, randn, randint, randperm, normal, bernoulli,
 * multinomial, rand_like / randn_like / randint_like and the in-place distributions
 * uniform_, normal_, random_, bernoulli_, exponential_, cauchy_, log_normal_,
 * geometric_) over the bit-exact CPU engine in random_engine.h.
 *
 * Every kernel validates its arguments first, raising torch's exceptions with torch's
 * texts and in torch's order (argument checks, then the empty-tensor early return, then
 * dtype dispatch errors, as each of torch's kernels does), and only then draws.
 *
 * Note [Random fill order]: torch fills an in-place target through a TensorIterator:
 * a contiguous tensor in linear order, any other tensor in the iterator's order
 * (dimensions sorted by stride, smallest stride fastest, torch's insertion sort with
 * its tie rules; see plan_build). The engine fills a buffer in that order: when the
 * order walks memory linearly (contiguous tensors, and dense permuted ones such as a
 * transpose) the engine writes straight into the tensor, otherwise it fills a
 * temporary that is scattered in iterator order. normal_ is the one op whose
 * algorithm depends on layout: torch's vectorised normal_fill runs only for
 * contiguous tensors, everything else goes element by element (engine's
 * pct_rng_normal_ex contiguous flag).
 *
 * Note [Random GIL]: draws happen inside pct_generator_run (python/generator.c), which
 * holds the generator's lock and releases the GIL for large fills; the job callbacks
 * below therefore never touch Python objects. */
#include "../op.h"
#include "../out.h"
#include "../error.h"
#include "../iter.h"
#include "pointwise.h"
#include "random_engine.h"
#include "factory.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The generator argument, through the runtime table (python/generator.c, Note [Generator locking] there). */
static int generator_check(pct_object *obj, const char *opname) { return pct_runtime.generator_check(obj, opname); }
static int generator_run(pct_object *obj, int64_t work, int (*fn)(pct_cpu_generator *, void *), void *ctx)
{
    return pct_runtime.generator_run(obj, work, fn, ctx);
}

/* ---- dtype names and codes ---- */



static const int rng_code[PCT_NUM_DTYPES] = {
    [PCT_BOOL] = PCT_RNG_BOOL, [PCT_UINT8] = PCT_RNG_U8, [PCT_INT8] = PCT_RNG_I8, [PCT_INT16] = PCT_RNG_I16,
    [PCT_INT32] = PCT_RNG_I32, [PCT_INT64] = PCT_RNG_I64, [PCT_FLOAT16] = PCT_RNG_F16, [PCT_BFLOAT16] = PCT_RNG_BF16,
    [PCT_FLOAT32] = PCT_RNG_F32, [PCT_FLOAT64] = PCT_RNG_F64,
    [PCT_UINT16] = PCT_RNG_U16, [PCT_UINT32] = PCT_RNG_U32, [PCT_UINT64] = PCT_RNG_U64,
};

static double float_max(int dtype) { return pct_dtype_infos[dtype].highest; }
static int float_digits(int dtype) { return pct_dtype_infos[dtype].digits; }

/* A double as C++'s ostream prints it (6 significant digits). */
static const char *fmt_g(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%g", v);
    return buf;
}
#define G(v) fmt_g((char[40]){0}, 40, (v))

static int not_implemented(const char *kernel, int dtype)
{
    pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, pct_dtype_cpp_name[dtype]);
    return -1;
}

static int internal_error(const char *what)
{
    pct_error(PCT_ERR_RUNTIME, "pyctorch internal error: the random engine rejected %s; please report a bug", what);
    return -1;
}

/* ---- iteration order (Note [Random fill order]) ---- */

typedef struct rng_plan {
    int nd;     /* dimensions after dropping size-1 dims and coalescing, fastest first */
    int nops;
    int64_t size[PCT_MAX_DIMS];
    int64_t stride[2][PCT_MAX_DIMS]; /* element strides of each operand */
} rng_plan;

static void plan_build(rng_plan *p, int ndim, const int64_t *sizes, int nops, const int64_t *const *strides)
{
    int perm[PCT_MAX_DIMS];
    pct_layout_perm(ndim, sizes, nops, strides, perm);
    p->nops = nops;
    p->nd = 0;
    for (int i = 0; i < ndim; i++) {
        int d = perm[i];
        if (sizes[d] == 1) continue;
        if (p->nd > 0) {
            bool merge = true;
            for (int k = 0; k < nops; k++)
                if (strides[k][d] != p->stride[k][p->nd - 1] * p->size[p->nd - 1]) merge = false;
            if (merge) {
                p->size[p->nd - 1] *= sizes[d];
                continue;
            }
        }
        p->size[p->nd] = sizes[d];
        for (int k = 0; k < nops; k++) p->stride[k][p->nd] = strides[k][d];
        p->nd++;
    }
}

static void plan_build1(rng_plan *p, const pct_tensor *t)
{
    const int64_t *st[1] = {t->strides};
    plan_build(p, t->ndim, t->sizes, 1, st);
}

/* True when operand 0 is visited at consecutive addresses. */
static bool plan_linear(const rng_plan *p) { return p->nd == 0 || (p->nd == 1 && p->stride[0][0] == 1); }

/* Where a walk over a plan stands: idx[d] in each dimension, base offsets of the
 * current row (the fastest dimension's start). Zero-initialise to start. */
typedef struct plan_cursor {
    int64_t idx[PCT_MAX_DIMS];
    int64_t base0, base1;
} plan_cursor;

/* Visits the next n elements in plan order from *cur (advancing it); BODY sees `pos`
 * (rank within this walk) and `off0` / `off1` (operand 0's / 1's element offsets). The
 * fastest dimension is a tight inner loop. */
#define PLAN_WALK(p, cur, n, BODY)                                                       \
    do {                                                                                 \
        int64_t pos = 0, n_ = (n);                                                       \
        int64_t in_size_ = (p)->nd ? (p)->size[0] : 1;                                   \
        int64_t in_s0_ = (p)->nd ? (p)->stride[0][0] : 0;                                \
        int64_t in_s1_ = (p)->nd && (p)->nops > 1 ? (p)->stride[1][0] : 0;               \
        while (pos < n_) {                                                               \
            int64_t i0_ = (cur)->idx[0];                                                 \
            int64_t cnt_ = in_size_ - i0_ < n_ - pos ? in_size_ - i0_ : n_ - pos;        \
            for (int64_t i_ = i0_; i_ < i0_ + cnt_; i_++, pos++) {                       \
                int64_t off0 = (cur)->base0 + i_ * in_s0_, off1 = (cur)->base1 + i_ * in_s1_; \
                (void)off0;                                                              \
                (void)off1;                                                              \
                BODY;                                                                    \
            }                                                                            \
            (cur)->idx[0] = i0_ + cnt_;                                                  \
            if ((cur)->idx[0] < in_size_) break;                                         \
            (cur)->idx[0] = 0;                                                           \
            for (int d_ = 1; d_ < (p)->nd; d_++) {                                       \
                (cur)->base0 += (p)->stride[0][d_];                                      \
                if ((p)->nops > 1) (cur)->base1 += (p)->stride[1][d_];                   \
                if (++(cur)->idx[d_] < (p)->size[d_]) break;                             \
                (cur)->base0 -= (p)->stride[0][d_] * (p)->size[d_];                      \
                if ((p)->nops > 1) (cur)->base1 -= (p)->stride[1][d_] * (p)->size[d_];   \
                (cur)->idx[d_] = 0;                                                      \
            }                                                                            \
        }                                                                                \
    } while (0)

/* Writes src[0..n) to operand 0's next n elements in plan order. */
static void plan_scatter(const rng_plan *p, plan_cursor *cur, char *dst, const char *src, int item, int64_t n)
{
    switch (item) {
    case 1: PLAN_WALK(p, cur, n, dst[off0] = src[pos]); break;
    case 2: PLAN_WALK(p, cur, n, ((uint16_t *)dst)[off0] = ((const uint16_t *)src)[pos]); break;
    case 4: PLAN_WALK(p, cur, n, ((uint32_t *)dst)[off0] = ((const uint32_t *)src)[pos]); break;
    default: PLAN_WALK(p, cur, n, ((uint64_t *)dst)[off0] = ((const uint64_t *)src)[pos]); break;
    }
}

/* torch's has_internal_overlap == YES (an empty tensor never has it): Note [Written-tensor overlap]. */
static int check_no_internal_overlap(const pct_tensor *t) { return pct_check_written_overlap(t, 0, NULL); }

/* ---- jobs run under the generator lock ---- */

enum {
    J_UNIFORM, J_NORMAL, J_RANDOM_FROM_TO, J_RANDOM_FROM, J_RANDOM_DEFAULT, J_EXPONENTIAL, J_CAUCHY,
    J_LOG_NORMAL, J_GEOMETRIC, J_BERNOULLI, J_BERNOULLI_T64, J_BERNOULLI_T32, J_RANDPERM, J_MULTINOMIAL,
};

typedef struct rng_job {
    int kind;
    int code;              /* engine dtype code of the output */
    int contiguous;        /* normal_: torch's is_contiguous() */
    int64_t n;
    void *buf;
    double a, b;
    int64_t i0, i1;
    const void *p;         /* bernoulli probabilities (double or float, in fill order) */
    /* scatter after the fill (NULL plan: the fill went straight into the tensor) */
    const rng_plan *plan;
    char *dst;
    int item;
    /* multinomial */
    const void *probs;
    int pcode;
    int64_t n_dist, n_cat, n_sample, q_stride0, q_stride1;
    int replacement;
    int rc_detail;         /* -1: out of memory */
} rng_job;

static int multinomial_job(pct_cpu_generator *g, rng_job *j);

/* Draws n elements of job j's distribution into buf; `first` is the rank of buf[0] in
 * the whole fill (for per-element probabilities). */
static int job_fill(pct_cpu_generator *g, const rng_job *j, void *buf, int64_t n, int64_t first)
{
    switch (j->kind) {
    case J_UNIFORM: return pct_rng_uniform(g, buf, j->code, n, j->a, j->b);
    case J_NORMAL: return pct_rng_normal_ex(g, buf, j->code, n, j->a, j->b, j->contiguous);
    case J_RANDOM_FROM_TO: return pct_rng_random_from_to(g, buf, j->code, n, j->i0, j->i1);
    case J_RANDOM_FROM: return pct_rng_random_from(g, buf, j->code, n, j->i0);
    case J_RANDOM_DEFAULT: return pct_rng_random_default(g, buf, j->code, n);
    case J_EXPONENTIAL: return pct_rng_exponential(g, buf, j->code, n, j->a);
    case J_CAUCHY: return pct_rng_cauchy(g, buf, j->code, n, j->a, j->b);
    case J_LOG_NORMAL: return pct_rng_log_normal(g, buf, j->code, n, j->a, j->b);
    case J_GEOMETRIC: return pct_rng_geometric(g, buf, j->code, n, j->a);
    case J_BERNOULLI: return pct_rng_bernoulli_scalar(g, buf, j->code, n, j->a);
    case J_BERNOULLI_T64: return pct_rng_bernoulli_tensor(g, buf, j->code, (const double *)j->p + first, n);
    case J_BERNOULLI_T32: return pct_rng_bernoulli_tensor_f32(g, buf, j->code, (const float *)j->p + first, n);
    case J_RANDPERM: return pct_rng_randperm(g, (int64_t *)buf, n);
    default: return -1;
    }
}

/* Elements per chunk when a fill goes through a temporary and a scatter. */
#define RNG_CHUNK 4096

static int job_run(pct_cpu_generator *g, void *ctx)
{
    rng_job *j = ctx;
    if (j->kind == J_MULTINOMIAL) return multinomial_job(g, j);
    if (!j->plan) return job_fill(g, j, j->buf, j->n, 0);
    /* Every distribution filled through a plan draws element by element (normal_ takes
     * its per-element path for such tensors), so chunks give the same numbers. */
    plan_cursor cur;
    memset(&cur, 0, sizeof cur);
    for (int64_t done = 0; done < j->n; done += RNG_CHUNK) {
        int64_t m = j->n - done < RNG_CHUNK ? j->n - done : RNG_CHUNK;
        int rc = job_fill(g, j, j->buf, m, done);
        if (rc) return rc;
        plan_scatter(j->plan, &cur, j->dst, (const char *)j->buf, j->item, m);
    }
    return 0;
}

/* Runs a job; -1 with an exception when the generator is bad or the engine refused. */
static int run_job(pct_object *gen, rng_job *j, const char *what)
{
    int rc = generator_run(gen, j->n, job_run, j);
    if (rc == -2) return -1;
    if (rc < 0) {
        if (j->rc_detail == -1) { pct_error_nomem(); return -1; }
        return internal_error(what);
    }
    return 0;
}

/* Fills all of t (in torch's order) with job j's distribution. */
static int fill_tensor(pct_tensor *t, rng_job *j, pct_object *gen, const char *what)
{
    int64_t n = t->numel;
    if (n == 0) return 0;
    if (check_no_internal_overlap(t) < 0) return -1;
    rng_plan plan;
    void *tmp = NULL;
    char *data = pct_tensor_data(t);
    j->code = rng_code[t->dtype];
    j->n = n;
    j->plan = NULL;
    j->contiguous = pct_tensor_is_contiguous(t);
    if (j->contiguous) {
        j->buf = data;
    } else {
        plan_build1(&plan, t);
        if (plan_linear(&plan)) {
            j->buf = data;
        } else {
            int item = (int)pct_tensor_itemsize(t);
            tmp = malloc((size_t)RNG_CHUNK * (size_t)item);
            if (!tmp) { pct_error_nomem(); return -1; }
            j->buf = tmp;
            j->plan = &plan;
            j->dst = data;
            j->item = item;
        }
    }
    int rc = run_job(gen, j, what);
    free(tmp);
    if (rc == 0) pct_tensor_bump_version(t);
    return rc;
}

/* ---- the distributions on a tensor (shared by the in-place ops and the factories) ---- */

/* torch fills a complex tensor through its real view (view_as_real): the real and imaginary parts are drawn in
 * memory order, each from the real distribution (normal_ with std / sqrt(2), so that E|z - mean|^2 = std^2). */
static pct_tensor *complex_as_real(pct_tensor *t)
{
    if (t->ndim >= PCT_MAX_DIMS) {
        pct_error(PCT_ERR_RUNTIME, "pyctorch supports at most %d dimensions", PCT_MAX_DIMS);
        return NULL;
    }
    int64_t sizes[PCT_MAX_DIMS], strides[PCT_MAX_DIMS];
    const int n = t->ndim;
    for (int i = 0; i < n; i++) { sizes[i] = t->sizes[i]; strides[i] = t->strides[i] * 2; }
    sizes[n] = 2;
    strides[n] = 1;
    return pct_tensor_view_as_dtype(t, n + 1, sizes, strides, t->offset * 2, pct_dtype_to_real(t->dtype));
}

static int do_uniform(pct_tensor *t, double from, double to, pct_object *gen);
static int do_normal(pct_tensor *t, double mean, double std, pct_object *gen);

/* a distribution of a complex tensor, drawn in its real view (complex_as_real) */
static int complex_fill(pct_tensor *t, bool normal, double a, double b, pct_object *gen)
{
    pct_tensor *r = complex_as_real(t);
    if (!r) return -1;
    int rc = normal ? do_normal(r, a, b / sqrt(2.0), gen) : do_uniform(r, a, b, gen);
    PCT_DECREF(r);
    return rc;
}

static int do_uniform(pct_tensor *t, double from, double to, pct_object *gen)
{
    int dt = t->dtype;
    if (dt == PCT_COMPLEX64 || dt == PCT_COMPLEX128) return complex_fill(t, false, from, to, gen);
    if (!pct_dtype_is_floating(dt)) return not_implemented("check_uniform_bounds", dt);
    double mx = float_max(dt);
    if (!(from >= -mx && from <= mx)) {
        pct_error(PCT_ERR_RUNTIME, "from is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
        return -1;
    }
    if (!(to >= -mx && to <= mx)) {
        pct_error(PCT_ERR_RUNTIME, "to is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
        return -1;
    }
    if (!(from <= to)) {
        pct_error(PCT_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%s > to=%s",
                     G(from), G(to));
        return -1;
    }
    if (!(to - from <= mx)) {
        pct_error(PCT_ERR_RUNTIME,
                     "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%s and from=%s which "
                     "result in to-from to exceed the limit",
                     pct_dtype_cpp_name[dt], G(to), G(from));
        return -1;
    }
    if (dt != PCT_FLOAT64 && !((float)to - (float)from <= 3.4028234663852886e38)) {
        /* to-from fits the dtype in double but overflows float: torch computes inf */
        pct_error(PCT_ERR_RUNTIME,
                     "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%s and from=%s which "
                     "result in to-from to exceed the limit",
                     pct_dtype_cpp_name[dt], G(to), G(from));
        return -1;
    }
    rng_job j = {.kind = J_UNIFORM, .a = from, .b = to};
    return fill_tensor(t, &j, gen, "uniform_");
}

static int check_normal_std(double std)
{
    if (!(std >= 0.0)) {
        pct_error(PCT_ERR_RUNTIME, "normal expects std >= 0.0, but found std %s", G(std));
        return -1;
    }
    return 0;
}

static int do_normal(pct_tensor *t, double mean, double std, pct_object *gen)
{
    if (check_normal_std(std) < 0) return -1;
    if (t->numel == 0) return 0;
    if (t->dtype == PCT_COMPLEX64 || t->dtype == PCT_COMPLEX128) return complex_fill(t, true, mean, std, gen);
    if (!pct_dtype_is_floating(t->dtype)) return not_implemented("normal_kernel_cpu", t->dtype);
    rng_job j = {.kind = J_NORMAL, .a = mean, .b = std};
    return fill_tensor(t, &j, gen, "normal_");
}

/* static_cast<int64_t>(static_cast<scalar_t>(v)) with x86 conversion semantics */
static int64_t through_dtype(int dtype, int64_t v)
{
    double d;
    switch (dtype) {
    case PCT_FLOAT64: d = (double)v; break;
    case PCT_FLOAT32: d = (double)(float)v; break;
    case PCT_FLOAT16: d = (double)pct_half_to_float(pct_float_to_half((float)v)); break;
    default: d = (double)pct_bf16_to_float(pct_float_to_bf16((float)v)); break;
    }
    if (!(d >= -0x1p63 && d < 0x1p63)) return INT64_MIN;
    return (int64_t)d;
}

static int ilog2_u64(uint64_t v)
{
    int k = 0;
    while (v >>= 1) k++;
    return k;
}

static uint64_t abs_u64(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

/* torch's update_from / update_to for floating dtypes */
static int64_t update_from(int dtype, int64_t from)
{
    int64_t fp1 = (int64_t)((uint64_t)from + 1u);
    int64_t from_plus_1 = through_dtype(dtype, fp1);
    if (from_plus_1 < from) {
        int sh = ilog2_u64(abs_u64(fp1)) - float_digits(dtype) + 1;
        if (sh >= 0 && sh < 63) from = (int64_t)((uint64_t)from_plus_1 + ((uint64_t)1 << sh));
    }
    return from;
}

static int64_t update_to(int dtype, int64_t to)
{
    int64_t tm1 = (int64_t)((uint64_t)to - 1u);
    int64_t to_minus_1 = through_dtype(dtype, tm1);
    if (to_minus_1 >= to) {
        int sh = ilog2_u64(abs_u64(tm1)) - float_digits(dtype) + 1;
        if (sh >= 0 && sh < 63) to = (int64_t)((uint64_t)to_minus_1 - ((uint64_t)1 << sh));
    }
    return to;
}

/* torch's check_from_to_in_range: errors, then precision warnings for floating dtypes. */
static int check_from_to_in_range(int dt, int64_t from, int64_t to_inc)
{
    if (pct_dtype_is_floating(dt)) {
        double mx = float_max(dt);
        if (!((double)from >= -mx && (double)from <= mx)) {
            pct_error(PCT_ERR_RUNTIME, "from is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
            return -1;
        }
        if (!((double)to_inc >= -mx && (double)to_inc <= mx)) {
            pct_error(PCT_ERR_RUNTIME, "to - 1 is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
            return -1;
        }
        int digits = float_digits(dt);
        int64_t lim = (int64_t)1 << digits;
        const char *names[2] = {"from", "to - 1"};
        int64_t vals[2] = {from, to_inc};
        for (int i = 0; i < 2; i++) {
            if (vals[i] >= -lim && vals[i] <= lim) continue;
            if (pct_warn(PCT_WARN_USER,
                                 "%s is out of bounds [-(2^%d), 2^%d]. Due to precision limitations %s can support "
                                 "discrete uniform distribution only within this range. This warning will become an "
                                 "error in version 1.7 release, please fix the code in advance",
                                 names[i], digits, digits, pct_dtype_cpp_type_name[dt]) < 0)
                return -1;
        }
        return 0;
    }
    /* uint64's int_highest is INT64_MAX: an int64 bound beyond that is negative here */
    const int64_t lo = pct_dtype_infos[dt].int_lowest, hi = pct_dtype_infos[dt].int_highest;
    if (!(from >= lo && from <= hi)) {
        pct_error(PCT_ERR_RUNTIME, "from is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
        return -1;
    }
    if (!(to_inc >= lo && to_inc <= hi)) {
        pct_error(PCT_ERR_RUNTIME, "to - 1 is out of bounds for %s", pct_dtype_cpp_type_name[dt]);
        return -1;
    }
    return 0;
}

/* random_(from, to): to exclusive */
static int do_random_from_to(pct_tensor *t, int64_t from, int64_t to, pct_object *gen)
{
    int dt = t->dtype;
    if (!(from < to)) {
        pct_error(PCT_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)from, (long long)to);
        return -1;
    }
    int64_t f = from, e = to;
    if (pct_dtype_is_floating(dt)) {
        f = update_from(dt, from);
        e = update_to(dt, to);
        if (!(f < e)) {
            pct_error(PCT_ERR_RUNTIME,
                         "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=%lld "
                         ">= to=%lld",
                         (long long)f, (long long)e);
            return -1;
        }
    }
    if (check_from_to_in_range(dt, f, (int64_t)((uint64_t)e - 1u)) < 0) return -1;
    rng_job j = {.kind = J_RANDOM_FROM_TO, .i0 = from, .i1 = to};
    return fill_tensor(t, &j, gen, "random_");
}

/* random_(from, None): [from, dtype max] */
static int do_random_from(pct_tensor *t, int64_t from, pct_object *gen)
{
    int dt = t->dtype;
    if (from == INT64_MIN) {
        if (t->numel == 0) return 0;
        if (dt == PCT_FLOAT16 || dt == PCT_BOOL || pct_dtype_is_barebones(dt))
            return not_implemented("random_full_64_bits_range_kernel_cpu", dt);
        if (dt != PCT_INT64 && dt != PCT_FLOAT64 && dt != PCT_FLOAT32 && dt != PCT_BFLOAT16) {
            pct_error_str(PCT_ERR_RUNTIME,
                            "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
            return -1;
        }
        rng_job j = {.kind = J_RANDOM_FROM, .i0 = from};
        return fill_tensor(t, &j, gen, "random_");
    }
    int64_t to_inc, f = from;
    if (pct_dtype_is_floating(dt)) {
        to_inc = (int64_t)1 << float_digits(dt);
        f = update_from(dt, from);
        if (!(f < to_inc)) {
            pct_error(PCT_ERR_RUNTIME,
                         "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, "
                         "but got from=%lld > to_inc=%lld",
                         (long long)f, (long long)to_inc);
            return -1;
        }
    } else {
        /* uint64: 2^64 - 1 as an int64, out of bounds, as in torch */
        to_inc = dt == PCT_UINT64 ? -1 : pct_dtype_infos[dt].int_highest;
    }
    if (check_from_to_in_range(dt, f, to_inc) < 0) return -1;
    rng_job j = {.kind = J_RANDOM_FROM, .i0 = from};
    return fill_tensor(t, &j, gen, "random_");
}

static int do_random_default(pct_tensor *t, pct_object *gen)
{
    if (pct_dtype_is_barebones(t->dtype)) return not_implemented("random_kernel_cpu", t->dtype);
    rng_job j = {.kind = J_RANDOM_DEFAULT};
    return fill_tensor(t, &j, gen, "random_");
}

static int do_bernoulli_scalar(pct_tensor *t, double p, pct_object *gen)
{
    if (!(p >= 0.0 && p <= 1.0)) {
        pct_error(PCT_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%s", G(p));
        return -1;
    }
    rng_job j = {.kind = J_BERNOULLI, .a = p};
    return fill_tensor(t, &j, gen, "bernoulli_");
}

static const char *type_string(char *buf, size_t n, int dtype)
{
    snprintf(buf, n, "torch.%sTensor", pct_dtype_cpp_name[dtype]);
    return buf;
}

/* bernoulli_(Tensor p): p is expanded to self's shape and read in iterator order. */
static int do_bernoulli_tensor(pct_tensor *self, pct_tensor *p, pct_object *gen)
{
    char b1[PCT_SHAPE_BUF], b2[PCT_SHAPE_BUF], b3[64];
    if (check_no_internal_overlap(self) < 0) return -1;
    int nd = self->ndim;
    if (p->ndim > nd) {
        pct_error(PCT_ERR_RUNTIME,
                     "expand(%s{%s}, size=%s): the number of sizes provided (%d) must be greater or equal to the number "
                     "of dimensions in the tensor (%d)",
                     type_string(b3, sizeof b3, p->dtype), pct_shape_str(b1, sizeof b1, p->ndim, p->sizes),
                     pct_shape_str(b2, sizeof b2, nd, self->sizes), nd, p->ndim);
        return -1;
    }
    int64_t pstrides[PCT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int pi = i - (nd - p->ndim);
        int64_t ps = pi >= 0 ? p->sizes[pi] : 1;
        if (ps != self->sizes[i] && ps != 1) {
            pct_error(PCT_ERR_RUNTIME,
                         "The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton "
                         "dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                         (long long)self->sizes[i], (long long)ps, i, pct_shape_str(b1, sizeof b1, nd, self->sizes),
                         pct_shape_str(b2, sizeof b2, p->ndim, p->sizes));
            return -1;
        }
        pstrides[i] = pi < 0 || (ps == 1 && self->sizes[i] != 1) ? 0 : p->strides[pi];
    }
    int64_t n = self->numel;
    if (n == 0) return 0;
    if (!pct_dtype_is_floating(p->dtype)) return not_implemented("bernoulli_tensor_cpu_p_", p->dtype);
    if (p->device_type != PCT_CPU) {
        pct_error_str(PCT_ERR_RUNTIME, "bernoulli_: the probability tensor must be on the CPU");
        return -1;
    }
    rng_plan plan;
    const int64_t *st[2] = {self->strides, pstrides};
    plan_build(&plan, nd, self->sizes, 2, st);
    bool dbl = p->dtype == PCT_FLOAT64;
    int item = (int)pct_tensor_itemsize(self);
    bool linear = plan_linear(&plan);
    void *pbuf = malloc((size_t)n * (dbl ? sizeof(double) : sizeof(float)));
    void *tmp = linear ? NULL : malloc((size_t)RNG_CHUNK * (size_t)item);
    if (!pbuf || (!linear && !tmp)) {
        free(pbuf);
        free(tmp);
        pct_error_nomem();
        return -1;
    }
    /* gather p in fill order and find the first invalid probability */
    const char *pdata = pct_tensor_data(p);
    int pdt = p->dtype, pitem = (int)pct_tensor_itemsize(p);
    int64_t first_bad = n;
    plan_cursor cur;
    memset(&cur, 0, sizeof cur);
    if (dbl) {
        double *pb = pbuf;
        PLAN_WALK(&plan, &cur, n, {
            double v = ((const double *)pdata)[off1];
            pb[pos] = v;
            if (first_bad == n && !(v >= 0.0 && v <= 1.0)) first_bad = pos;
        });
    } else {
        float *pb = pbuf;
        PLAN_WALK(&plan, &cur, n, {
            float v = (float)pct_load_as_double(pdata + off1 * pitem, pdt);
            pb[pos] = v;
            if (first_bad == n && !(v >= 0.0f && v <= 1.0f)) first_bad = pos;
        });
    }
    /* torch draws for the elements before a bad probability, then raises */
    rng_job j = {.kind = dbl ? J_BERNOULLI_T64 : J_BERNOULLI_T32, .code = rng_code[self->dtype], .n = first_bad, .p = pbuf};
    j.buf = linear ? (void *)pct_tensor_data(self) : tmp;
    if (!linear) {
        j.plan = &plan;
        j.dst = pct_tensor_data(self);
        j.item = item;
    }
    int rc = 0;
    if (first_bad > 0) rc = run_job(gen, &j, "bernoulli_");
    free(pbuf);
    free(tmp);
    if (rc < 0) return -1;
    pct_tensor_bump_version(self);
    if (first_bad < n) {
        pct_error_str(PCT_ERR_RUNTIME,
                        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                        "improved?  If so, please report an enhancement request to PyTorch.)");
        return -1;
    }
    return 0;
}

static int do_exponential(pct_tensor *t, double lambd, pct_object *gen)
{
    if (!(lambd > 0.0)) {
        pct_error(PCT_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%s", G(lambd));
        return -1;
    }
    if (t->numel == 0) return 0;
    if (!pct_dtype_is_floating(t->dtype)) {
        pct_error(PCT_ERR_RUNTIME,
                     "Exponential distribution is a continuous probability distribution. dtype must be a floating "
                     "point but you specified %s",
                     pct_dtype_cpp_name[t->dtype]);
        return -1;
    }
    rng_job j = {.kind = J_EXPONENTIAL, .a = lambd};
    return fill_tensor(t, &j, gen, "exponential_");
}

static int do_cauchy(pct_tensor *t, double median, double sigma, pct_object *gen)
{
    if (!(sigma > 0.0)) {
        pct_error(PCT_ERR_RUNTIME, "cauchy_ expects sigma > 0.0, but found sigma=%s", G(sigma));
        return -1;
    }
    if (!pct_dtype_is_floating(t->dtype)) {
        pct_error(PCT_ERR_RUNTIME,
                     "Cauchy distribution is a continuous probability distribution. dtype must be a floating point "
                     "but you specified %s",
                     pct_dtype_cpp_type_name[t->dtype]);
        return -1;
    }
    rng_job j = {.kind = J_CAUCHY, .a = median, .b = sigma};
    return fill_tensor(t, &j, gen, "cauchy_");
}

static int do_log_normal(pct_tensor *t, double mean, double std, pct_object *gen)
{
    if (!(std > 0.0)) {
        pct_error(PCT_ERR_RUNTIME, "log_normal_ expects std > 0.0, but found std=%s", G(std));
        return -1;
    }
    if (t->numel == 0) return 0;
    if (!pct_dtype_is_floating(t->dtype)) return not_implemented("log_normal_cpu", t->dtype);
    rng_job j = {.kind = J_LOG_NORMAL, .a = mean, .b = std};
    return fill_tensor(t, &j, gen, "log_normal_");
}

static int do_geometric(pct_tensor *t, double p, pct_object *gen)
{
    if (!(p > 0.0 && p < 1.0)) {
        pct_error(PCT_ERR_RUNTIME, "geometric_ expects p to be in (0, 1), but got p=%s", G(p));
        return -1;
    }
    if (t->numel == 0) return 0;
    if (t->dtype == PCT_BOOL) return not_implemented("geometric_cpu", t->dtype);
    rng_job j = {.kind = J_GEOMETRIC, .a = p};
    return fill_tensor(t, &j, gen, "geometric_");
}

/* ---- argument helpers ---- */

static pct_object *gen_arg(pct_call *c)
{
    const pct_value *v = pct_arg(c, "generator");
    return v->none ? NULL : v->obj;
}

static int check_gen(pct_call *c) { return generator_check(gen_arg(c), c->op->sig.name); }

/* In-place ops return self. */
static pct_object *ret_self(pct_tensor *self, int rc)
{
    if (rc < 0) return NULL;
    PCT_INCREF(self);
    return (pct_object *)self;
}

/* at::native::resize_output (warn) or Tensor.resize_ (no warning), Note [out= arguments] */
static int resize_out(pct_tensor *out, int nd, const int64_t *sizes, bool warn)
{
    return warn ? pct_out_resize(out, nd, sizes) : pct_out_resize_quiet(out, nd, sizes);
}

static int check_cpu_device(pct_call *c)
{
    return pct_check_cpu_device(pct_arg(c, "device"));
}

/* The output of a factory: out= (resized, new reference) or a new contiguous tensor. */
static pct_tensor *factory_new(pct_call *c, int nd, const int64_t *sizes, int default_dtype)
{
    if (check_cpu_device(c) < 0) return NULL;
    const pct_value *dt = pct_arg(c, "dtype");
    if (c->out) {
        if (!dt->none && dt->dtype != c->out->dtype) {
            pct_error(PCT_ERR_RUNTIME, "dtype %s does not match dtype of out parameter (%s)",
                         pct_dtype_cpp_name[dt->dtype], pct_dtype_cpp_name[c->out->dtype]);
            return NULL;
        }
        /* rand_out & co. call result.resize_(size): no deprecation warning */
        if (resize_out(c->out, nd, sizes, false) < 0) return NULL;
        PCT_INCREF(c->out);
        return c->out;
    }
    return pct_tensor_empty(nd, sizes, dt->none ? default_dtype : dt->dtype, PCT_CPU, -1);
}

/* Applies requires_grad=True after the fill; steals t. */
static pct_object *factory_finish(pct_call *c, pct_tensor *t, int rc)
{
    if (rc < 0) { PCT_DECREF(t); return NULL; }
    if (pct_arg(c, "requires_grad")->b) {
        if (!pct_dtype_is_differentiable(t->dtype)) {
            PCT_DECREF(t);
            pct_error_str(PCT_ERR_RUNTIME, "Only Tensors of floating point and complex dtype can require gradients");
            return NULL;
        }
        t->flags |= PCT_FLAG_REQUIRES_GRAD;
    }
    return (pct_object *)t;
}

/* ---- in-place ops ---- */

/* The in-place distributions with one or two float parameters: validate the generator, fill self (typed arguments,
   Note [Typed arguments]), return self. */
#define RNG_INPLACE_OP(NAME, ...)                                                                                     \
    pct_object *pct_cpu_##NAME(pct_call *c)                                                                           \
    {                                                                                                                 \
        PCT_ARGS(NAME);                                                                                               \
        if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;                                         \
        return ret_self(arg.input, __VA_ARGS__);                                                                      \
    }
RNG_INPLACE_OP(uniform_, do_uniform(arg.input, arg.from, arg.to, arg.generator))
RNG_INPLACE_OP(normal_, do_normal(arg.input, arg.mean, arg.std, arg.generator))
RNG_INPLACE_OP(cauchy_, do_cauchy(arg.input, arg.median, arg.sigma, arg.generator))
RNG_INPLACE_OP(log_normal_, do_log_normal(arg.input, arg.mean, arg.std, arg.generator))
RNG_INPLACE_OP(exponential_, do_exponential(arg.input, arg.lambd, arg.generator))
RNG_INPLACE_OP(geometric_, do_geometric(arg.input, arg.p, arg.generator))
#undef RNG_INPLACE_OP

pct_object *pct_cpu_random_from_(pct_call *c)
{
    PCT_ARGS(random_from_);
    if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;
    return ret_self(arg.input, arg.to.none ? do_random_from(arg.input, arg.from, arg.generator)
                                           : do_random_from_to(arg.input, arg.from, arg.to.v, arg.generator));
}

pct_object *pct_cpu_random_to_(pct_call *c)
{
    PCT_ARGS(random_to_);
    if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;
    return ret_self(arg.input, do_random_from_to(arg.input, 0, arg.to, arg.generator));
}

pct_object *pct_cpu_random_default_(pct_call *c)
{
    PCT_ARGS(random_default_);
    if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;
    return ret_self(arg.input, do_random_default(arg.input, arg.generator));
}

pct_object *pct_cpu_bernoulli_float_(pct_call *c)
{
    PCT_ARGS(bernoulli_float_);
    if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;
    return ret_self(arg.input, do_bernoulli_scalar(arg.input, arg.p, arg.generator));
}

pct_object *pct_cpu_bernoulli_tensor_(pct_call *c)
{
    PCT_ARGS(bernoulli_tensor_);
    if (generator_check(arg.generator, c->op->sig.name) < 0) return NULL;
    return ret_self(arg.input, do_bernoulli_tensor(arg.input, arg.p, arg.generator));
}

/* ---- factories ---- */

/* rand, randn, rand_like, randn_like: a new tensor (sized by `size`, or like `like` where that is not NULL) filled
   from U[0, 1) or N(0, 1). */
static pct_object *standard_factory(pct_call *c, pct_tensor *like, const pct_int_list *size, bool normal)
{
    if (check_gen(c) < 0) return NULL;
    pct_tensor *t = like ? pct_like_new(c, like) : factory_new(c, size->n, size->v, pct_default_dtype);
    if (!t) return NULL;
    return factory_finish(c, t, normal ? do_normal(t, 0.0, 1.0, gen_arg(c)) : do_uniform(t, 0.0, 1.0, gen_arg(c)));
}

pct_object *pct_cpu_rand(pct_call *c) { PCT_ARGS(rand); return standard_factory(c, NULL, &arg.size, false); }
pct_object *pct_cpu_randn(pct_call *c) { PCT_ARGS(randn); return standard_factory(c, NULL, &arg.size, true); }
pct_object *pct_cpu_rand_like(pct_call *c) { PCT_ARGS(rand_like); return standard_factory(c, arg.input, NULL, false); }
pct_object *pct_cpu_randn_like(pct_call *c) { PCT_ARGS(randn_like); return standard_factory(c, arg.input, NULL, true); }

/* randint and randint_like: integers in [low, high), sized by `size` or like `like` (where not NULL); int64 unless
   dtype= (or out=) says otherwise. */
static pct_object *randint_factory(pct_call *c, pct_tensor *like, const pct_int_list *size, int64_t low, int64_t high)
{
    if (check_gen(c) < 0) return NULL;
    pct_tensor *t = like ? pct_like_new(c, like) : factory_new(c, size->n, size->v, c->out ? c->out->dtype : PCT_INT64);
    if (!t) return NULL;
    return factory_finish(c, t, do_random_from_to(t, low, high, gen_arg(c)));
}

pct_object *pct_cpu_randint(pct_call *c) { PCT_ARGS(randint); return randint_factory(c, NULL, &arg.size, 0, arg.high); }

pct_object *pct_cpu_randint_low(pct_call *c)
{
    PCT_ARGS(randint_low);
    return randint_factory(c, NULL, &arg.size, arg.low, arg.high);
}

pct_object *pct_cpu_randint_like(pct_call *c)
{
    PCT_ARGS(randint_like);
    return randint_factory(c, arg.input, NULL, 0, arg.high);
}

pct_object *pct_cpu_randint_like_low(pct_call *c)
{
    PCT_ARGS(randint_like_low);
    return randint_factory(c, arg.input, NULL, arg.low, arg.high);
}

/* check_supported_max_int_with_precision */
static int randperm_check(int64_t n, int dtype)
{
    int64_t v = n > 0 ? n - 1 : n;
    if (pct_dtype_is_integral(dtype, false) && !pct_dtype_is_barebones(dtype) && v > pct_dtype_infos[dtype].int_highest) {
        pct_error(PCT_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
                  pct_dtype_infos[dtype].overflow_name);
        return -1;
    }
    if (dtype == PCT_FLOAT16 && n > (1 << 11) + 1) {
        pct_error_str(PCT_ERR_RUNTIME, "n cannot be greater than 2049 for Half type.");
        return -1;
    }
    if (dtype == PCT_FLOAT32 && n > ((int64_t)1 << 24) + 1) {
        pct_error_str(PCT_ERR_RUNTIME, "n cannot be greater than 2^24+1 for Float type.");
        return -1;
    }
    if (dtype == PCT_FLOAT64 && n > ((int64_t)1 << 53) + 1) {
        pct_error_str(PCT_ERR_RUNTIME, "n cannot be greater than 2^53+1 for Double type.");
        return -1;
    }
    return 0;
}

pct_object *pct_cpu_randperm(pct_call *c)
{
    PCT_ARGS(randperm);
    if (check_gen(c) < 0 || check_cpu_device(c) < 0) return NULL;
    int64_t n = arg.n;
    const int dt = arg.dtype;
    pct_tensor *t;
    if (c->out) {
        if (dt != PCT_NO_DTYPE && dt != c->out->dtype) {
            pct_error(PCT_ERR_RUNTIME, "dtype %s does not match dtype of out parameter (%s)",
                         pct_dtype_cpp_name[dt], pct_dtype_cpp_name[c->out->dtype]);
            return NULL;
        }
        if (n < 0) {
            pct_error(PCT_ERR_RUNTIME, "n must be non-negative, got%lld", (long long)n);
            return NULL;
        }
        if (randperm_check(n, c->out->dtype) < 0 || resize_out(c->out, 1, &n, false) < 0) return NULL;
        t = c->out;
        PCT_INCREF(t);
    } else {
        if (!(t = pct_tensor_empty(1, &n, dt == PCT_NO_DTYPE ? PCT_INT64 : dt, PCT_CPU, -1))) return NULL;
        if (randperm_check(n, t->dtype) < 0) { PCT_DECREF(t); return NULL; }
    }
    if (t->dtype == PCT_BOOL) return factory_finish(c, t, not_implemented("randperm", t->dtype));
    bool direct = t->dtype == PCT_INT64 && pct_tensor_is_contiguous(t);
    int64_t *buf = direct ? (int64_t *)pct_tensor_data(t) : malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!buf) {
        PCT_DECREF(t);
        return pct_error_nomem();
    }
    rng_job j = {.kind = J_RANDPERM, .n = n, .buf = buf};
    int rc = 0;
    if (n > 0) rc = run_job(gen_arg(c), &j, "randperm");
    if (rc == 0 && !direct) {
        char *p = pct_tensor_data(t);
        int64_t st = t->strides[0] * pct_tensor_itemsize(t);
        for (int64_t i = 0; i < n; i++) pct_store_int64(p + i * st, t->dtype, buf[i]);
    }
    if (!direct) free(buf);
    if (rc == 0) pct_tensor_bump_version(t);
    return factory_finish(c, t, rc);
}

/* ---- normal with tensor arguments (Note [Random fill order]; composition as torch) ---- */

/* out op= other (in place, torch's promotion and rounding) */
static int pw_inplace(pct_tensor *out, int op, pct_tensor *other)
{
    pct_call c2;
    memset(&c2, 0, sizeof c2);
    c2.op = &pct_ops[op];
    c2.op_index = op;
    c2.out = out;
    c2.inplace = true;
    pct_pw_ctx ctx = {.alpha_d = 1, .alpha_i = 1};
    pct_tensor *in[2] = {out, other};
    pct_object *r = pct_pw_run(&c2, op, 2, in, &ctx);
    if (!r) return -1;
    PCT_DECREF(r);
    return 0;
}

/* CHECK_NORMAL_TENSOR_STD: every element >= 0 (NaN fails) */
static int check_normal_tensor_std(pct_tensor *std)
{
    if (pct_dtype_is_complex(std->dtype)) { /* a complex mean is fine (a complex result), a complex std is not */
        pct_error_str(PCT_ERR_RUNTIME, "normal expects standard deviation to be non-complex");
        return -1;
    }
    if (std->numel == 0) return 0;
    pct_tensor *s = pct_contiguous(std);
    if (!s) return -1;
    const char *p = pct_tensor_data(s);
    int item = (int)pct_tensor_itemsize(s);
    bool ok = true;
    for (int64_t i = 0; i < s->numel && ok; i++) ok = pct_load_as_double(p + i * item, s->dtype) >= 0.0;
    PCT_DECREF(s);
    if (!ok) {
        pct_error_str(PCT_ERR_RUNTIME, "normal expects all elements of std >= 0.0");
        return -1;
    }
    return 0;
}

/* The result of a normal() with tensor arguments: out= resized to shape (with resize_output's warning), or new. */
static pct_tensor *normal_out(pct_call *c, int nd, const int64_t *shape, int dtype)
{
    if (!c->out) return pct_tensor_empty(nd, shape, dtype, PCT_CPU, -1);
    if (resize_out(c->out, nd, shape, true) < 0) return NULL;
    PCT_INCREF(c->out);
    return c->out;
}

/* Returns out, or releases it and returns NULL where rc < 0. */
static pct_object *normal_done(pct_tensor *out, int rc)
{
    if (rc < 0) {
        PCT_DECREF(out);
        return NULL;
    }
    return (pct_object *)out;
}

pct_object *pct_cpu_normal_float_float(pct_call *c)
{
    PCT_ARGS(normal_float_float);
    if (check_gen(c) < 0) return NULL;
    pct_tensor *out = factory_new(c, arg.size.n, arg.size.v, pct_default_dtype);
    if (!out) return NULL;
    return factory_finish(c, out, do_normal(out, arg.mean, arg.std, arg.generator));
}

pct_object *pct_cpu_normal_tensor_float(pct_call *c)
{
    PCT_ARGS(normal_tensor_float);
    if (check_gen(c) < 0) return NULL;
    pct_tensor *mean = arg.mean, *out;
    int nd = mean->ndim;
    int64_t shape[PCT_MAX_DIMS];
    if (check_normal_std(arg.std) < 0) return NULL;
    if (c->out) {
        if (pct_broadcast_shapes(mean->ndim, mean->sizes, c->out->ndim, c->out->sizes, &nd, shape) < 0) return NULL;
    } else {
        memcpy(shape, mean->sizes, sizeof(int64_t) * (size_t)nd);
    }
    if (!(out = normal_out(c, nd, shape, mean->dtype))) return NULL;
    return normal_done(out, do_normal(out, 0.0, arg.std, arg.generator) < 0 || pw_inplace(out, PCT_OP_add, mean) < 0
                                ? -1 : 0);
}

pct_object *pct_cpu_normal_tensor_tensor(pct_call *c)
{
    PCT_ARGS(normal_tensor_tensor);
    if (check_gen(c) < 0) return NULL;
    pct_tensor *mean = arg.mean, *std = arg.std, *out;
    int nd;
    int64_t shape[PCT_MAX_DIMS];
    if (check_normal_tensor_std(std) < 0) return NULL;
    if (pct_broadcast_shapes(mean->ndim, mean->sizes, std->ndim, std->sizes, &nd, shape) < 0) return NULL;
    if (!(out = normal_out(c, nd, shape, mean->dtype))) return NULL;
    return normal_done(out, do_normal(out, 0.0, 1.0, arg.generator) < 0 || pw_inplace(out, PCT_OP_mul, std) < 0 ||
                                    pw_inplace(out, PCT_OP_add, mean) < 0 ? -1 : 0);
}

pct_object *pct_cpu_normal_float_tensor(pct_call *c)
{
    PCT_ARGS(normal_float_tensor);
    if (check_gen(c) < 0) return NULL;
    pct_tensor *std = arg.std, *out, *m = NULL;
    if (check_normal_tensor_std(std) < 0) return NULL;
    if (!(out = normal_out(c, std->ndim, std->sizes, std->dtype))) return NULL;
    /* torch adds at::full({}, mean, output.options()): a 0-d tensor of out's dtype */
    int rc = do_normal(out, 0.0, 1.0, arg.generator) < 0 || pw_inplace(out, PCT_OP_mul, std) < 0 ||
             !(m = pct_tensor_scalar(out->dtype, arg.mean, (int64_t)arg.mean, pct_dtype_is_floating(out->dtype))) ||
             pw_inplace(out, PCT_OP_add, m) < 0 ? -1 : 0;
    PCT_XDECREF(m);
    return normal_done(out, rc);
}

/* ---- bernoulli (functional) ---- */

/* bernoulli(input) draws with input's probabilities, bernoulli(input, p) with p (where p is not NULL). */
static pct_object *bernoulli_new(pct_call *c, pct_tensor *self, const double *p)
{
    if (check_gen(c) < 0) return NULL;
    pct_tensor *out;
    if (c->out) {
        /* bernoulli_out: result.resize_(self.sizes()) then result.bernoulli_(self) */
        if (resize_out(c->out, self->ndim, self->sizes, false) < 0) return NULL;
        out = c->out;
        PCT_INCREF(out);
    } else if (!(out = pct_tensor_empty(self->ndim, self->sizes, self->dtype, PCT_CPU, -1))) {
        return NULL;
    }
    int rc = p ? do_bernoulli_scalar(out, *p, gen_arg(c)) : do_bernoulli_tensor(out, self, gen_arg(c));
    if (rc < 0) {
        PCT_DECREF(out);
        return NULL;
    }
    return (pct_object *)out;
}

pct_object *pct_cpu_bernoulli(pct_call *c) { PCT_ARGS(bernoulli); return bernoulli_new(c, arg.input, NULL); }
pct_object *pct_cpu_bernoulli_p(pct_call *c) { PCT_ARGS(bernoulli_p); return bernoulli_new(c, arg.input, &arg.p); }

/* ---- multinomial ---- */

/* Inverse of mt19937's output tempering. */
static uint32_t untemper(uint32_t y)
{
    uint32_t r;
    y ^= y >> 18;
    r = y;
    for (int i = 0; i < 3; i++) r = y ^ ((r << 15) & 0xefc60000u);
    y = r;
    r = y;
    for (int i = 0; i < 5; i++) r = y ^ ((r << 7) & 0x9d2c5680u);
    y = r;
    r = y;
    for (int i = 0; i < 3; i++) r = y ^ (r >> 11);
    return r;
}

static double load_prob(const void *p, int code, int64_t i)
{
    switch (code) {
    case PCT_RNG_F64: return ((const double *)p)[i];
    case PCT_RNG_F32: return (double)((const float *)p)[i];
    case PCT_RNG_F16: return (double)pct_half_to_float(((const uint16_t *)p)[i]);
    default: return (double)pct_bf16_to_float(((const uint16_t *)p)[i]);
    }
}

/* probs / q in the probability dtype; q is an exponential sample already rounded to it */
static double div_in_dtype(int code, double pv, double q)
{
    switch (code) {
    case PCT_RNG_F64: return pv / q;
    case PCT_RNG_F32: return (double)((float)pv / (float)q);
    case PCT_RNG_F16: return (double)pct_half_to_float(pct_float_to_half((float)pv / (float)q));
    default: return (double)pct_bf16_to_float(pct_float_to_bf16((float)pv / (float)q));
    }
}

typedef struct { double v; int64_t i; } mn_pair;

/* descending, NaN first, ties by index (stable) */
static int mn_cmp(const void *a, const void *b)
{
    const mn_pair *x = a, *y = b;
    bool xn = x->v != x->v, yn = y->v != y->v;
    if (xn != yn) return xn ? -1 : 1;
    if (!xn && x->v != y->v) return x->v > y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Note [Multinomial with a permuted probability tensor]: without replacement torch
 * draws q = exponential_(1) into empty_like(probs), i.e. in the memory order of
 * probs (a transposed probs tensor fills q column by column), while the engine draws
 * row by row. We draw the raw mt19937 outputs in torch's order, then give the engine
 * one row at a time a private generator whose state words replay exactly that row's
 * outputs (untempered, read before any twist: up to 312 draws per row), so values and
 * torch's topk tie order are reproduced exactly. Rows longer than 312 fall back to our
 * own argmax / stable sort, which only differs from torch on exact ties of p / q. */
static int multinomial_permuted(pct_cpu_generator *g, rng_job *j)
{
    int64_t nd = j->n_dist, nc = j->n_cat, total = nd * nc, ns = j->n_sample;
    int64_t *out = j->buf;
    if (ns > 1 && nc <= PCT_MT19937_N / 2) {
        uint32_t *raw = malloc(sizeof(uint32_t) * 2 * (size_t)total);
        void *row = malloc(8 * (size_t)nc);
        if (!raw || !row) { free(raw); free(row); j->rc_detail = -1; return -1; }
        for (int64_t k = 0; k < 2 * total; k++) raw[k] = pct_generator_random32(g);
        size_t psz = pct_rng_dtype_size(j->pcode);
        int rc = 0;
        for (int64_t r = 0; r < nd && rc == 0; r++) {
            pct_cpu_generator rg;
            memset(&rg, 0, sizeof rg);
            for (int64_t cc = 0; cc < nc; cc++) {
                int64_t m = r * j->q_stride0 + cc * j->q_stride1;
                rg.state[2 * cc] = untemper(raw[2 * m]);
                rg.state[2 * cc + 1] = untemper(raw[2 * m + 1]);
            }
            rg.left = (int32_t)(2 * nc + 1);
            rg.next = 0;
            rg.seeded = 1;
            memcpy(row, (const char *)j->probs + (size_t)(r * nc) * psz, psz * (size_t)nc);
            rc = pct_rng_multinomial(&rg, out + r * ns, row, j->pcode, 1, nc, ns, 0);
        }
        free(raw);
        free(row);
        return rc;
    }
    /* q = exponential_(1) in memory order, rounded to the dtype */
    size_t esz = pct_rng_dtype_size(j->pcode);
    void *e = malloc(esz * (size_t)total);
    mn_pair *q = malloc(sizeof(mn_pair) * (size_t)nc);
    if (!e || !q) { free(e); free(q); j->rc_detail = -1; return -1; }
    int rc = pct_rng_exponential(g, e, j->pcode, total, 1.0);
    for (int64_t r = 0; r < nd && rc == 0; r++) {
        for (int64_t cc = 0; cc < nc; cc++) {
            int64_t m = r * j->q_stride0 + cc * j->q_stride1;
            q[cc].v = div_in_dtype(j->pcode, load_prob(j->probs, j->pcode, r * nc + cc), load_prob(e, j->pcode, m));
            q[cc].i = cc;
        }
        if (ns == 1) {
            int64_t best = 0;
            for (int64_t cc = 1; cc < nc; cc++) {
                double bv = q[best].v, v = q[cc].v;
                if (bv != bv) break;
                if (v != v || v > bv) best = cc;
            }
            out[r] = best;
        } else {
            qsort(q, (size_t)nc, sizeof(mn_pair), mn_cmp);
            for (int64_t s = 0; s < ns; s++) out[r * ns + s] = q[s].i;
        }
    }
    free(e);
    free(q);
    return rc;
}

static int multinomial_job(pct_cpu_generator *g, rng_job *j)
{
    if (j->q_stride1 != 1) return multinomial_permuted(g, j);
    return pct_rng_multinomial(g, (int64_t *)j->buf, j->probs, j->pcode, j->n_dist, j->n_cat, j->n_sample,
                               j->replacement);
}

pct_object *pct_cpu_multinomial(pct_call *c)
{
    PCT_ARGS(multinomial);
    if (check_gen(c) < 0) return NULL;
    pct_tensor *self = arg.input, *result = NULL, *probs = NULL, *tmp = NULL;
    int64_t ns = arg.num_samples;
    bool repl = arg.replacement;
    pct_object *ret = NULL;
    if (self->ndim < 1 || self->ndim > 2) {
        pct_error_str(PCT_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
        return NULL;
    }
    if (!pct_dtype_is_floating(self->dtype)) {
        pct_error(PCT_ERR_RUNTIME, "multinomial only supports floating-point dtypes for input, got: %s",
                     pct_dtype_cpp_name[self->dtype]);
        return NULL;
    }
    if (c->out && c->out->dtype != PCT_INT64) {
        pct_error(PCT_ERR_RUNTIME, "multinomial expects Long tensor out, got: %s", pct_dtype_cpp_name[c->out->dtype]);
        return NULL;
    }
    if (ns <= 0) {
        pct_error_str(PCT_ERR_RUNTIME, "cannot sample n_sample <= 0 samples");
        return NULL;
    }
    int64_t nc = self->sizes[self->ndim - 1];
    int64_t ndist = self->ndim == 1 ? 1 : self->sizes[0];
    if (!repl && ns > nc) {
        pct_error_str(PCT_ERR_RUNTIME, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
        return NULL;
    }
    if (nc > ((int64_t)1 << 24)) {
        pct_error_str(PCT_ERR_RUNTIME, "number of categories cannot exceed 2^24");
        return NULL;
    }
    int64_t rshape[2] = {ndist, ns};
    int rnd = self->ndim;
    const int64_t *rs = self->ndim == 1 ? &rshape[1] : rshape;
    if (c->out) {
        if (resize_out(c->out, rnd, rs, false) < 0) return NULL;
        result = c->out;
        PCT_INCREF(result);
    } else if (!(result = pct_tensor_empty(rnd, rs, PCT_INT64, PCT_CPU, -1))) {
        return NULL;
    }
    if (result->numel == 0) return (pct_object *)result;
    if (!(probs = pct_contiguous(self))) goto done;
    int pcode = rng_code[self->dtype];
    const void *pd = pct_tensor_data(probs);
    int64_t total = ndist * nc;
    int64_t good_rows = ndist;
    const char *err = NULL;
    if (!repl || ns == 1) {
        bool any_bad = false;
        for (int64_t i = 0; i < total && !any_bad; i++) {
            double v = load_prob(pd, pcode, i);
            any_bad = !(v >= 0.0) || isinf(v);
        }
        if (any_bad) {
            pct_error_str(PCT_ERR_RUNTIME, "probability tensor contains either `inf`, `nan` or element < 0");
            goto done;
        }
        for (int64_t r = 0; r < ndist; r++) {
            bool nonzero = false;
            for (int64_t k = 0; k < nc && !nonzero; k++) nonzero = load_prob(pd, pcode, r * nc + k) > 0.0;
            if (!nonzero) {
                pct_error_str(PCT_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
                goto done;
            }
        }
    } else {
        /* torch validates row by row while sampling: rows before a bad one are drawn */
        for (int64_t r = 0; r < ndist && !err; r++) {
            bool nonzero = false;
            for (int64_t k = 0; k < nc && !err; k++) {
                double v = load_prob(pd, pcode, r * nc + k);
                if (!(v >= 0.0)) err = "invalid multinomial distribution (encountering probability entry < 0)";
                else if (isinf(v))
                    err = "invalid multinomial distribution (encountering probability entry = infinity or NaN)";
                else if (v > 0.0) nonzero = true;
            }
            if (!err && !nonzero) err = "invalid multinomial distribution (sum of probabilities <= 0)";
            if (err) good_rows = r;
        }
    }
    /* the order torch draws q in: that of empty_like(probs) (Note [Multinomial with a permuted ...]) */
    int64_t qs0 = nc, qs1 = 1;
    if (self->ndim == 2 && (!repl || ns == 1)) {
        int64_t qst[2];
        pct_preserved_strides(self, qst);
        if (!(nc == 1 || ndist == 1) && qst[1] != 1) {
            qs0 = qst[0];
            qs1 = qst[1];
        }
    }
    bool direct = pct_tensor_is_contiguous(result);
    if (!direct && !(tmp = pct_tensor_empty(result->ndim, result->sizes, PCT_INT64, PCT_CPU, -1))) goto done;
    if (good_rows > 0) {
        rng_job j = {.kind = J_MULTINOMIAL, .n = good_rows * nc, .buf = pct_tensor_data(direct ? result : tmp),
                     .probs = pd, .pcode = pcode, .n_dist = good_rows, .n_cat = nc, .n_sample = ns,
                     .q_stride0 = qs0, .q_stride1 = qs1, .replacement = repl};
        if (run_job(gen_arg(c), &j, "multinomial") < 0) goto done;
    }
    if (err) {
        pct_error_str(PCT_ERR_RUNTIME, err);
        goto done;
    }
    if (!direct && pct_copy_(result, tmp) < 0) goto done;
    pct_tensor_bump_version(result);
    ret = (pct_object *)result;
    result = NULL;
done:
    PCT_XDECREF(result);
    PCT_XDECREF(probs);
    PCT_XDECREF(tmp);
    return ret;
}
