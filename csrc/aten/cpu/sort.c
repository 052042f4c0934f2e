/* sort.c: sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian,
 * mode. The rest of the family shares its keys and row driver (sort_common.c, declared in
 * sort_internal.h): scans (scan.c), unique and unique_consecutive (unique.c), bincount and
 * histc (histogram.c), searchsorted and bucketize (searchsorted.c).
 *
 * Note [Sort keys]
 * Every comparison-based kernel works on (key, index) pairs: the key is a uint64 whose
 * unsigned order is torch's order of the values (integers with the sign bit flipped,
 * floats by their bit pattern made monotonic, -0.0 folded into +0.0 and every NaN into
 * UINT64_MAX, the largest key, as torch sorts NaN after +inf). Two keys are equal exactly
 * when torch's comparators find neither value less than the other, so a single set of
 * algorithms over pairs serves every dtype; values are written back by gathering the
 * original elements through the indices (which keeps -0.0 and NaN payloads).
 *
 * Note [Matching std::sort]
 * torch's CPU kernels call libstdc++'s std::sort (sort with stable=False, mode),
 * std::partial_sort and std::nth_element (topk), and its own quick_select_template
 * (kthvalue). Which of several equal elements ends up where -- the indices returned for
 * ties -- is a property of those exact algorithms, so sort_stl_impl.h reproduces
 * libstdc++'s introsort / heap-select / introselect step by step (median-of-three pivot
 * moved to the front, unguarded partition, insertion sort below 16 elements, heapsort
 * after 2*log2(n) levels) and sort_quick_select reproduces torch's selection. The
 * unguarded loops carry bounds checks that never fire with a consistent comparator, so
 * an inconsistent one (unique(dim=) over rows holding NaN) cannot run off the array.
 * Stable sorts (stable=True, and torch's radix-sort path for large 1-D integer inputs)
 * sort by (key, index), which has a single answer.
 *
 * Threads: row kernels run through sort_run_rows, which releases the GIL and splits rows
 * across OpenMP threads when the work is large. Nothing inside it calls Python: every
 * check runs before, and allocation failures set a flag turned into MemoryError after.
 */
#include "sort_internal.h"

/* ------------------------------------------------------------------------------------ */
/* libstdc++'s algorithms (Note [Matching std::sort])                                    */

/* P_sort, P_partial_sort, P_nth_element (and helpers) over arrays of T ordered by LESS(x, y):
 * one include of sort_stl_impl.h each. */
/* torch's comparators over keys: ascending / descending (NaN largest), and the strict
 * total orders by (key, index) used for stable sorts and median. */
#define SORT_LESS_ASC(x, y) ((x).k < (y).k)
#define SORT_LESS_DESC(x, y) ((x).k > (y).k)
#define SORT_LESS_LEX(x, y) ((x).k < (y).k || ((x).k == (y).k && (x).i < (y).i))
#define SORT_LESS_LEXD(x, y) ((x).k > (y).k || ((x).k == (y).k && (x).i < (y).i))
#define STL_P kva
#define STL_T sort_kv
#define STL_LESS SORT_LESS_ASC
#include "sort_stl_impl.h"
#define STL_P kvd
#define STL_T sort_kv
#define STL_LESS SORT_LESS_DESC
#include "sort_stl_impl.h"
#define STL_P kvl
#define STL_T sort_kv
#define STL_LESS SORT_LESS_LEX
#include "sort_stl_impl.h"
#define STL_P kvld
#define STL_T sort_kv
#define STL_LESS SORT_LESS_LEXD
#include "sort_stl_impl.h"
#define SORT_LESS_VALUE(x, y) ((x).v < (y).v)
#define STL_P dva
#define STL_T sort_dv
#define STL_LESS SORT_LESS_VALUE
#include "sort_stl_impl.h"
/* median() / nanmedian() select among the values themselves (which of -0.0 and 0.0 they
 * return depends on it) */
#define SORT_LESS_PLAIN(x, y) ((x) < (y))
#define SORT_LESS_NANLAST(x, y) ((x) < (y) || (isnan(y) && !isnan(x)))
#define STL_P dmed
#define STL_T double
#define STL_LESS SORT_LESS_PLAIN
#include "sort_stl_impl.h"
#define STL_P dnanmed
#define STL_T double
#define STL_LESS SORT_LESS_NANLAST
#include "sort_stl_impl.h"

/* A stable LSD radix sort of n pairs by key (descending: by complemented key), in 8-bit
 * digits, skipping digits every key shares; tmp holds n more pairs. Same order as
 * kvl_sort / kvld_sort (ties keep their positions), in linear time. */
static void sort_radix(sort_kv *a, sort_kv *tmp, int64_t n, bool desc)
{
    uint64_t flip = desc ? ~0ull : 0;
    int64_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (int64_t j = 0; j < n; j++) {
        uint64_t k = a[j].k ^ flip;
        for (int b = 0; b < 8; b++) cnt[b][(k >> (8 * b)) & 255]++;
    }
    sort_kv *src = a, *dst = tmp;
    for (int b = 0; b < 8; b++) {
        int64_t *c = cnt[b], sum = 0;
        bool trivial = false;
        for (int d = 0; d < 256; d++) {
            if (c[d] == n) trivial = true;
            int64_t t = c[d];
            c[d] = sum;
            sum += t;
        }
        if (trivial) continue;
        for (int64_t j = 0; j < n; j++) dst[c[((src[j].k ^ flip) >> (8 * b)) & 255]++] = src[j];
        sort_kv *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, sizeof(sort_kv) * (size_t)n);
}

/* A stable sort of n pairs (tmp: room for n more, or NULL). */
void pct_sort_stable(sort_kv *a, sort_kv *tmp, int64_t n, bool desc)
{
    if (tmp && n >= 256) sort_radix(a, tmp, n, desc);
    else if (desc) kvld_sort(a, n, NULL);
    else kvl_sort(a, n, NULL);
}

/* torch's quick_select_template (kthvalue) with gt_or_nan on keys. */
static void sort_quick_select(sort_kv *a, int64_t n, int64_t k)
{
#define QS_GT(x, y) ((x).k > (y).k)
#define QS_SWAP(p, q) do { sort_kv t_ = a[p]; a[p] = a[q]; a[q] = t_; } while (0)
    int64_t L = 0, R = n - 1;
    for (;;) {
        if (R <= L) return;
        if (R == L + 1) {
            if (QS_GT(a[L], a[R])) QS_SWAP(L, R);
            return;
        }
        int64_t P = L + (R - L) / 2;
        QS_SWAP(P, L + 1);
        if (QS_GT(a[L + 1], a[R])) QS_SWAP(L + 1, R);
        if (QS_GT(a[L], a[R])) QS_SWAP(L, R);
        if (QS_GT(a[L + 1], a[L])) QS_SWAP(L + 1, L);
        int64_t i = L + 1, j = R;
        sort_kv piv = a[L];
        for (;;) {
            do i++; while (i < R && QS_GT(piv, a[i]));
            do j--; while (j > L && QS_GT(a[j], piv));
            if (j < i) break;
            QS_SWAP(i, j);
        }
        QS_SWAP(L, j);
        if (j <= k) L = i;
        if (j >= k) R = j - 1;
    }
#undef QS_GT
#undef QS_SWAP
}

void pct_sort_unstable_asc(sort_kv *a, int64_t n) { kva_sort(a, n, NULL); }

/* ------------------------------------------------------------------------------------ */
/* sort, argsort, msort, topk, kthvalue, median(dim), nanmedian(dim), mode               */

enum {
    SEL_SORT_ASC, SEL_SORT_DESC, SEL_SORT_STABLE_ASC, SEL_SORT_STABLE_DESC, SEL_SORT_IDENTITY,
    SEL_TOPK, SEL_KTHVALUE, SEL_MEDIAN, SEL_NANMEDIAN, SEL_MODE
};

typedef struct sort_sel_ctx {
    sort_rows rp;
    int dtype;
    int op;            /* SEL_* */
    char *vout;        /* values, contiguous (NULL: indices only) */
    int64_t *iout;     /* indices, contiguous */
    int64_t m;         /* output elements per row: n (sort), k (topk), 1 (reductions) */
    int64_t k;         /* topk: k; kthvalue: k - 1 */
    bool largest, sorted;
} sort_sel_ctx;

static void sort_sel_row(void *vctx, int64_t r, void *scratch)
{
    const sort_sel_ctx *c = vctx;
    const sort_rows *rp = &c->rp;
    const char *in = sort_rows_in(rp, r);
    int64_t n = rp->n, m = c->m, os = rp->inner, o = sort_rows_out(rp, r, m);
    int isz = rp->itemsize;
    sort_kv *kv = scratch;
    int64_t first = 0; /* kv[first .. first + m) are the results */
    int64_t pick = -1;  /* or this one position (mode over floats) */
    if (c->op == SEL_SORT_IDENTITY || n < 2) {
        for (int64_t j = 0; j < m; j++) kv[j].i = j;
    } else {
        pct_sort_load[c->dtype](kv, in, rp->st, n);
        switch (c->op) {
        case SEL_SORT_ASC: kva_sort(kv, n, NULL); break;
        case SEL_SORT_DESC: kvd_sort(kv, n, NULL); break;
        case SEL_SORT_STABLE_ASC: pct_sort_stable(kv, kv + n, n, false); break;
        case SEL_SORT_STABLE_DESC: pct_sort_stable(kv, kv + n, n, true); break;
        case SEL_TOPK: {
            /* torch's topk_impl_loop */
            int64_t k = c->k;
            if (k * 64 <= n) {
                if (c->largest) kvd_partial_sort(kv, k, n, NULL);
                else kva_partial_sort(kv, k, n, NULL);
            } else if (c->largest) {
                kvd_nth_element(kv, k - 1, n, NULL);
                if (c->sorted) kvd_sort(kv, k - 1, NULL);
            } else {
                kva_nth_element(kv, k - 1, n, NULL);
                if (c->sorted) kva_sort(kv, k - 1, NULL);
            }
            break;
        }
        case SEL_KTHVALUE:
            sort_quick_select(kv, n, c->k);
            first = c->k;
            break;
        case SEL_MEDIAN:
        case SEL_NANMEDIAN: {
            /* torch's median_with_indices_impl: median returns the first NaN if there is
             * one; both select by (value, index), so ties resolve to a single answer. */
            int64_t nnan = 0;
            if (pct_dtype_is_floating(c->dtype)) {
                for (int64_t j = 0; j < n; j++) {
                    if (kv[j].k != SORT_NAN_KEY) continue;
                    if (c->op == SEL_MEDIAN) {
                        first = j;
                        goto write;
                    }
                    nnan++;
                }
            }
            first = (n - nnan - 1) / 2;
            kvl_nth_element(kv, first, n, NULL);
            break;
        }
        case SEL_MODE: {
            /* torch's mode kernel: std::sort by value with a plain < (floats compared as
             * doubles, so NaN behaves as it does there), then the longest run of == values
             * (the first of equal length wins), reporting the position of its last element */
            int64_t run = 0, best = 0;
            if (pct_dtype_is_floating(c->dtype)) {
                sort_dv *dv = scratch;
                pct_sort_loadv[c->dtype](dv, in, rp->st, n);
                dva_sort(dv, n, NULL);
                for (int64_t j = 0; j < n; j++) {
                    run++;
                    if (j == n - 1 || dv[j].v != dv[j + 1].v) {
                        if (run > best) {
                            best = run;
                            pick = dv[j].i;
                        }
                        run = 0;
                    }
                }
                break;
            }
            kva_sort(kv, n, NULL);
            for (int64_t j = 0; j < n; j++) {
                run++;
                if (j == n - 1 || kv[j].k != kv[j + 1].k) {
                    if (run > best) {
                        best = run;
                        first = j;
                    }
                    run = 0;
                }
            }
            break;
        }
        default: break;
        }
    }
write:
    for (int64_t j = 0; j < m; j++) {
        int64_t src = pick >= 0 ? pick : kv[first + j].i;
        c->iout[o + j * os] = src;
        if (c->vout) sort_copy_elem(c->vout + (o + j * os) * isz, in + src * rp->st, isz);
    }
}

/* Runs a selection op over the rows of self along dim into fresh contiguous results of
 * shape (ndim, shape); vals NULL: indices only. */
static int sort_sel_run(pct_tensor *self, int dim, int op, int64_t m, int64_t k, bool largest, bool sorted_,
                        int ndim, const int64_t *shape, pct_tensor **vals, pct_tensor **idx)
{
    pct_tensor *v = NULL, *i = NULL;
    if (vals && !(v = pct_tensor_empty(ndim, shape, self->dtype, PCT_CPU, -1))) goto fail;
    if (!(i = pct_tensor_empty(ndim, shape, PCT_INT64, PCT_CPU, -1))) goto fail;
    sort_sel_ctx c = {.dtype = self->dtype, .op = op, .vout = v ? pct_tensor_data(v) : NULL,
                      .iout = (int64_t *)pct_tensor_data(i), .m = m, .k = k, .largest = largest, .sorted = sorted_};
    pct_sort_rows_init(&c.rp, self, dim);
    if (i->numel > 0 && c.rp.n > 0) {
        int64_t n = c.rp.n;
        if ((op == SEL_SORT_ASC || op == SEL_SORT_DESC || op == SEL_SORT_STABLE_ASC || op == SEL_SORT_STABLE_DESC) &&
            self->ndim > 0 && self->strides[dim] == 0)
            c.op = SEL_SORT_IDENTITY; /* torch leaves rows of an expanded dim in place */
        double work = (double)c.rp.nrows * (double)n * (double)(sort_lg(n + 1) + 1);
        bool two = c.op == SEL_SORT_STABLE_ASC || c.op == SEL_SORT_STABLE_DESC; /* radix sort's second buffer */
        if (pct_sort_run_rows(c.rp.nrows, work, sizeof(sort_kv) * (size_t)n * (two ? 2 : 1), sort_sel_row, &c) < 0)
            goto fail;
    }
    if (vals) *vals = v;
    *idx = i;
    return 0;
fail:
    PCT_XDECREF(v);
    PCT_XDECREF(i);
    return -1;
}

static int sort_op_for(const pct_tensor *self, bool stable, bool descending)
{
    /* torch radix-sorts large 1-D integer inputs (ascending), which is stable */
    if (!stable && !descending && self->ndim == 1 && pct_dtype_is_integral(self->dtype, false) &&
        self->numel >= PCT_PARALLEL_GRAIN)
        stable = true;
    if (stable) return descending ? SEL_SORT_STABLE_DESC : SEL_SORT_STABLE_ASC;
    return descending ? SEL_SORT_DESC : SEL_SORT_ASC;
}

/* sort and sort(stable=): out is the out= pair as given (NULL or None: not given) */
static pct_object *sort_impl(pct_tensor *self, bool stable, int64_t dim_arg, bool desc, pct_object *out)
{
    pct_tensor *outs[2], *v = NULL, *i = NULL;
    if (pct_out_parse_pair(out, "sort", outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (outs[0] && (pct_out_check_dtype(outs[0], self->dtype) < 0 || pct_out_check_dtype(outs[1], PCT_INT64) < 0))
        return NULL;
    if (sort_sel_run(self, dim, sort_op_for(self, stable, desc), self->ndim ? self->sizes[dim] : 1, 0, false, false,
                     self->ndim, self->sizes, &v, &i) < 0)
        return NULL;
    if (!outs[0]) {
        v = pct_sort_relayout(v, self);
        i = pct_sort_relayout(i, self);
    }
    return pct_sort_finish_pair(v, i, outs);
}

pct_object *pct_cpu_sort(pct_call *c)
{
    PCT_ARGS(sort);
    return sort_impl(arg.input, false, arg.dim, arg.descending, arg.out);
}

pct_object *pct_cpu_sort_stable(pct_call *c)
{
    PCT_ARGS(sort_stable);
    return sort_impl(arg.input, !arg.stable.none && arg.stable.v, arg.dim, arg.descending, arg.out);
}

static pct_object *argsort_impl(pct_call *c, pct_tensor *self, bool stable, int64_t dim_arg, bool desc)
{
    pct_tensor *i = NULL;
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (pct_out_check_dtype(c->out, PCT_INT64) < 0) return NULL;
    if (sort_sel_run(self, dim, sort_op_for(self, stable, desc), self->ndim ? self->sizes[dim] : 1, 0, false, false,
                     self->ndim, self->sizes, NULL, &i) < 0)
        return NULL;
    return pct_sort_finish(c->out ? i : pct_sort_relayout(i, self), c->out);
}

pct_object *pct_cpu_argsort(pct_call *c)
{
    PCT_ARGS(argsort);
    return argsort_impl(c, arg.input, false, arg.dim, arg.descending);
}

pct_object *pct_cpu_argsort_stable(pct_call *c)
{
    PCT_ARGS(argsort_stable);
    return argsort_impl(c, arg.input, arg.stable, arg.dim, arg.descending);
}

pct_object *pct_cpu_msort(pct_call *c)
{
    PCT_ARGS(msort);
    pct_tensor *self = arg.input, *v = NULL, *i = NULL;
    if (pct_out_check_dtype(c->out, self->dtype) < 0) return NULL;
    if (sort_sel_run(self, 0, sort_op_for(self, false, false), self->ndim ? self->sizes[0] : 1, 0, false, false,
                     self->ndim, self->sizes, &v, &i) < 0)
        return NULL;
    PCT_DECREF(i);
    return pct_sort_finish(c->out ? v : pct_sort_relayout(v, self), c->out);
}

pct_object *pct_cpu_topk(pct_call *c)
{
    PCT_ARGS(topk);
    pct_tensor *self = arg.input, *outs[2], *v = NULL, *i = NULL;
    int64_t k = arg.k;
    if (pct_out_parse_pair(arg.out, "topk", outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(arg.dim, self->ndim);
    if (dim < 0) return NULL;
    int64_t n = self->ndim ? self->sizes[dim] : 1;
    if (k < 0 || k > n) {
        pct_error_str(PCT_ERR_RUNTIME, "selected index k out of range");
        return NULL;
    }
    if (outs[0] && (pct_out_check_dtype(outs[0], self->dtype) < 0 || pct_out_check_dtype(outs[1], PCT_INT64) < 0))
        return NULL;
    if (self->dtype == PCT_BOOL) {
        pct_error_str(PCT_ERR_RUNTIME, "topk does not support bool dtypes on CPU");
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) shape[dim] = k;
    /* a 0-d input is copied whatever k (0 or 1) */
    int64_t m = self->ndim ? k : 1;
    if (sort_sel_run(self, dim, m ? SEL_TOPK : SEL_SORT_IDENTITY, m, m, arg.largest, arg.sorted, self->ndim, shape, &v,
                     &i) < 0)
        return NULL;
    return pct_sort_finish_pair(v, i, outs);
}

/* kthvalue, median(dim), nanmedian(dim), mode: one value and index per row. */
static pct_object *sort_reduce_sel(int op, const char *name, pct_tensor *self, int64_t dim_arg, bool keepdim,
                                   pct_object *out, int64_t k)
{
    pct_tensor *outs[2], *v = NULL, *i = NULL;
    if (pct_out_parse_pair(out, name, outs) < 0) return NULL; /* torch's parser: before any other check */
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    if (pct_sort_check_nonempty_dim(self, dim, op == SEL_NANMEDIAN ? "median" : name) < 0) return NULL;
    if (op == SEL_KTHVALUE) {
        int64_t n = self->ndim ? self->sizes[dim] : 1;
        if (k < 1 || k > n) {
            pct_error(PCT_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %d", dim);
            return NULL;
        }
    }
    if (outs[0]) {
        const char *bad = NULL;
        switch (op) {
        case SEL_KTHVALUE:
            if (outs[0]->dtype != self->dtype) bad = "output values must be of same type as input";
            else if (outs[1]->dtype != PCT_INT64) bad = "output indices must be of scalar type Long";
            if (bad) {
                pct_error_str(PCT_ERR_RUNTIME, bad);
                return NULL;
            }
            break;
        case SEL_MEDIAN:
        case SEL_NANMEDIAN:
            if (outs[0]->dtype != self->dtype) {
                pct_error(PCT_ERR_RUNTIME, "Expected tensor for 'values' to have the same type as tensor for argument "
                             "#2 'self'; but type torch.%sTensor does not equal torch.%sTensor (while checking arguments "
                             "for median)", pct_dtype_cpp_name[outs[0]->dtype], pct_dtype_cpp_name[self->dtype]);
                return NULL;
            }
            if (outs[1]->dtype != PCT_INT64) {
                pct_error(PCT_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                             "torch.%sTensor instead (while checking arguments for median)", pct_dtype_cpp_name[outs[1]->dtype]);
                return NULL;
            }
            break;
        default:
            if (outs[0]->dtype != self->dtype) {
                pct_error(PCT_ERR_RUNTIME, "expected scalar type '%s' but got '%s' for values output",
                             pct_dtype_cpp_name[self->dtype], pct_dtype_cpp_name[outs[0]->dtype]);
                return NULL;
            }
            if (outs[1]->dtype != PCT_INT64) {
                pct_error(PCT_ERR_RUNTIME, "expected scalar type 'Long' but got '%s' for indices output",
                             pct_dtype_cpp_name[outs[1]->dtype]);
                return NULL;
            }
            break;
        }
    }
    if (pct_dtype_is_complex(self->dtype)) { /* Note [Complex selections]; median(dim) refuses even a 0-d input */
        if (op == SEL_MEDIAN || op == SEL_NANMEDIAN) {
            sort_not_implemented("median_out", self->dtype);
            return NULL;
        }
        return pct_sort_complex_scalar_pair(self, op == SEL_KTHVALUE ? "kthvalue_cpu" : "mode_cpu", outs);
    }
    if (self->dtype == PCT_BOOL && op != SEL_MODE) {
        sort_not_implemented(op == SEL_KTHVALUE ? "kthvalue_cpu" : "median_out", PCT_BOOL);
        return NULL;
    }
    int64_t shape[PCT_MAX_DIMS];
    int nd = pct_sort_reduced_shape(self, dim, keepdim, shape);
    if (sort_sel_run(self, dim, op, 1, k - 1, false, false, nd, shape, &v, &i) < 0) return NULL;
    return pct_sort_finish_pair(v, i, outs);
}

pct_object *pct_cpu_kthvalue(pct_call *c)
{
    PCT_ARGS(kthvalue);
    return sort_reduce_sel(SEL_KTHVALUE, "kthvalue", arg.input, arg.dim, arg.keepdim, arg.out, arg.k);
}

pct_object *pct_cpu_median_dim(pct_call *c)
{
    PCT_ARGS(median_dim);
    return sort_reduce_sel(SEL_MEDIAN, "median", arg.input, arg.dim, arg.keepdim, arg.out, 1);
}

pct_object *pct_cpu_nanmedian_dim(pct_call *c)
{
    PCT_ARGS(nanmedian_dim);
    return sort_reduce_sel(SEL_NANMEDIAN, "nanmedian", arg.input, arg.dim, arg.keepdim, arg.out, 1);
}

pct_object *pct_cpu_mode(pct_call *c)
{
    PCT_ARGS(mode);
    return sort_reduce_sel(SEL_MODE, "mode", arg.input, arg.dim, arg.keepdim, arg.out, 1);
}

/* median() / nanmedian() over all elements: the lower median, as a 0-d tensor. */
static pct_object *sort_median_all(pct_tensor *self, bool ignore_nan)
{
    pct_tensor *res = NULL;
    if (self->dtype == PCT_BOOL) {
        sort_not_implemented("median_cpu", PCT_BOOL);
        return NULL;
    }
    if (pct_dtype_is_complex(self->dtype) && self->numel > 0) { /* torch: only an empty tensor's NaN */
        sort_not_implemented("median_cpu", self->dtype);
        return NULL;
    }
    if (!(res = pct_tensor_empty(0, NULL, self->dtype, PCT_CPU, -1))) return NULL;
    int64_t n = self->numel;
    if (n == 0 && pct_dtype_is_complex(self->dtype)) { /* NaN converted to the complex dtype: nan+0j */
        pct_store_complex(pct_tensor_data(res), self->dtype, NAN, 0);
        return (pct_object *)res;
    }
    if (n == 0) {
        /* torch converts a NaN to the dtype: NaN for floats, what the CPU makes of it otherwise */
        int64_t iv = self->dtype == PCT_INT64 ? INT64_MIN : self->dtype == PCT_INT32 ? INT32_MIN : 0;
        if (pct_dtype_is_floating(self->dtype)) pct_store_double(pct_tensor_data(res), self->dtype, NAN);
        else pct_store_int64(pct_tensor_data(res), self->dtype, iv);
        return (pct_object *)res;
    }
    /* torch selects in a clone of the input, which keeps its memory layout: the order of
     * the elements (and so which of -0.0 / 0.0 comes out) is the memory order */
    int perm[PCT_MAX_DIMS], nd = 0;
    int64_t psz[PCT_MAX_DIMS], pst[PCT_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        if (self->sizes[d] == 1) continue;
        int at = nd++;
        while (at > 0 && self->strides[perm[at - 1]] < self->strides[d]) {
            perm[at] = perm[at - 1];
            at--;
        }
        perm[at] = d;
    }
    for (int k = 0; k < nd; k++) {
        psz[k] = self->sizes[perm[k]];
        pst[k] = self->strides[perm[k]];
    }
    pct_tensor *pv = pct_tensor_view_of(self, nd, psz, pst, self->offset);
    if (!pv) goto fail;
    pct_tensor *flat = pct_contiguous(pv);
    PCT_DECREF(pv);
    if (!flat) goto fail;
    const char *p = pct_tensor_data(flat);
    int isz = (int)pct_tensor_itemsize(flat);
    if (pct_dtype_is_floating(self->dtype)) {
        /* torch: std::nth_element over a copy of the values */
        double *d = malloc(sizeof(double) * (size_t)n);
        if (!d) {
            PCT_DECREF(flat);
            pct_error_nomem();
            goto fail;
        }
        int64_t nnan = 0;
        for (int64_t j = 0; j < n; j++) {
            d[j] = pct_load_as_double(p + j * isz, self->dtype);
            nnan += d[j] != d[j];
        }
        double med = NAN;
        if (ignore_nan || nnan == 0) {
            int64_t rank = (n - nnan - 1) / 2;
            void *ts = n >= PCT_PARALLEL_GRAIN ? pct_gil_release() : NULL;
            if (ignore_nan) dnanmed_nth_element(d, rank, n, NULL);
            else dmed_nth_element(d, rank, n, NULL);
            if (ts) pct_gil_restore(ts);
            med = d[rank];
        }
        pct_store_double(pct_tensor_data(res), self->dtype, med);
        free(d);
        PCT_DECREF(flat);
        return (pct_object *)res;
    }
    sort_kv *kv = malloc(sizeof(sort_kv) * (size_t)n);
    if (!kv) {
        PCT_DECREF(flat);
        pct_error_nomem();
        goto fail;
    }
    pct_sort_load[self->dtype](kv, p, isz, n);
    int64_t rank = (n - 1) / 2;
    void *ts = n >= PCT_PARALLEL_GRAIN ? pct_gil_release() : NULL;
    kvl_nth_element(kv, rank, n, NULL);
    if (ts) pct_gil_restore(ts);
    sort_copy_elem(pct_tensor_data(res), p + kv[rank].i * isz, isz);
    free(kv);
    PCT_DECREF(flat);
    return (pct_object *)res;
fail:
    PCT_XDECREF(res);
    return NULL;
}

pct_object *pct_cpu_median_all(pct_call *c) { PCT_ARGS(median); return sort_median_all(arg.input, false); }
pct_object *pct_cpu_nanmedian_all(pct_call *c) { PCT_ARGS(nanmedian); return sort_median_all(arg.input, true); }

