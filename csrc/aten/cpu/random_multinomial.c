/*
 * random_multinomial.c - pyctorch CPU random engine: multinomial with and without
 * replacement, torch's topk-based sampling included (libstdc++'s heap and introselect),
 * (see random_engine.h; the build-flag rules of random_engine.c hold here too).
 */
#include "random_engine_internal.h"

/* ===================================================================== */
/* multinomial                                                            */
/* ===================================================================== */

typedef struct {
    double v;
    int64_t i;
} rng_pair;

/* topk comparator (largest first, NaN counts as largest) */
static inline int rng_gt(const rng_pair *a, const rng_pair *b)
{
    int an = (a->v != a->v), bn = (b->v != b->v);
    return (an && !bn) || (a->v > b->v);
}

/* --- faithful re-implementations of the libstdc++ (GCC 13) algorithms used
 *     by torch's topk, so that equal keys come out in the same order. --- */

static void rng_push_heap(rng_pair *a, int64_t hole, int64_t top, rng_pair val)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && rng_gt(&a[parent], &val)) {
        a[hole] = a[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    a[hole] = val;
}

static void rng_adjust_heap(rng_pair *a, int64_t hole, int64_t len,
                            rng_pair val)
{
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (rng_gt(&a[child], &a[child - 1]))
            child--;
        a[hole] = a[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        a[hole] = a[child - 1];
        hole = child - 1;
    }
    rng_push_heap(a, hole, top, val);
}

static void rng_make_heap(rng_pair *a, int64_t len)
{
    int64_t parent;
    if (len < 2)
        return;
    parent = (len - 2) / 2;
    for (;;) {
        rng_adjust_heap(a, parent, len, a[parent]);
        if (parent == 0)
            return;
        parent--;
    }
}

static void rng_pop_heap(rng_pair *a, int64_t len, int64_t result)
{
    rng_pair val = a[result];
    a[result] = a[0];
    rng_adjust_heap(a, 0, len, val);
}

static void rng_heap_select(rng_pair *a, int64_t middle, int64_t last)
{
    int64_t i;
    rng_make_heap(a, middle);
    for (i = middle; i < last; i++)
        if (rng_gt(&a[i], &a[0]))
            rng_pop_heap(a, middle, i);
}

static void rng_sort_heap(rng_pair *a, int64_t last)
{
    while (last > 1) {
        --last;
        rng_pop_heap(a, last, last);
    }
}

static void rng_partial_sort(rng_pair *a, int64_t middle, int64_t last)
{
    rng_heap_select(a, middle, last);
    rng_sort_heap(a, middle);
}

static inline void rng_swap(rng_pair *a, int64_t i, int64_t j)
{
    rng_pair t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void rng_move_median_to_first(rng_pair *x, int64_t result, int64_t a,
                                     int64_t b, int64_t c)
{
    if (rng_gt(&x[a], &x[b])) {
        if (rng_gt(&x[b], &x[c]))
            rng_swap(x, result, b);
        else if (rng_gt(&x[a], &x[c]))
            rng_swap(x, result, c);
        else
            rng_swap(x, result, a);
    } else if (rng_gt(&x[a], &x[c])) {
        rng_swap(x, result, a);
    } else if (rng_gt(&x[b], &x[c])) {
        rng_swap(x, result, c);
    } else {
        rng_swap(x, result, b);
    }
}

static int64_t rng_unguarded_partition(rng_pair *x, int64_t first,
                                       int64_t last, int64_t pivot)
{
    for (;;) {
        while (rng_gt(&x[first], &x[pivot]))
            ++first;
        --last;
        while (rng_gt(&x[pivot], &x[last]))
            --last;
        if (!(first < last))
            return first;
        rng_swap(x, first, last);
        ++first;
    }
}

static int64_t rng_partition_pivot(rng_pair *x, int64_t first, int64_t last)
{
    int64_t mid = first + (last - first) / 2;
    rng_move_median_to_first(x, first, first + 1, mid, last - 1);
    return rng_unguarded_partition(x, first + 1, last, first);
}

static void rng_unguarded_linear_insert(rng_pair *x, int64_t last)
{
    rng_pair val = x[last];
    int64_t next = last - 1;
    while (rng_gt(&val, &x[next])) {
        x[last] = x[next];
        last = next;
        --next;
    }
    x[last] = val;
}

static void rng_insertion_sort(rng_pair *x, int64_t first, int64_t last)
{
    int64_t i;
    if (first == last)
        return;
    for (i = first + 1; i != last; ++i) {
        if (rng_gt(&x[i], &x[first])) {
            rng_pair val = x[i];
            memmove(&x[first + 1], &x[first],
                    (size_t)(i - first) * sizeof(rng_pair));
            x[first] = val;
        } else {
            rng_unguarded_linear_insert(x, i);
        }
    }
}

static int rng_lg(int64_t n)
{
    return rng_ilog2_u64((uint64_t)n);
}

static void rng_introsort_loop(rng_pair *x, int64_t first, int64_t last,
                               int depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            rng_partial_sort(x + first, last - first, last - first);
            return;
        }
        --depth;
        {
            int64_t cut = rng_partition_pivot(x, first, last);
            rng_introsort_loop(x, cut, last, depth);
            last = cut;
        }
    }
}

static void rng_std_sort(rng_pair *x, int64_t first, int64_t last)
{
    int64_t i;
    if (first == last)
        return;
    rng_introsort_loop(x, first, last, rng_lg(last - first) * 2);
    if (last - first > 16) {
        rng_insertion_sort(x, first, first + 16);
        for (i = first + 16; i != last; ++i)
            rng_unguarded_linear_insert(x, i);
    } else {
        rng_insertion_sort(x, first, last);
    }
}

static void rng_nth_element(rng_pair *x, int64_t first, int64_t nth,
                            int64_t last)
{
    int depth;
    if (first == last || nth == last)
        return;
    depth = rng_lg(last - first) * 2;
    while (last - first > 3) {
        if (depth == 0) {
            rng_heap_select(x + first, nth + 1 - first, last - first);
            rng_swap(x, first, nth);
            return;
        }
        --depth;
        {
            int64_t cut = rng_partition_pivot(x, first, last);
            if (cut <= nth)
                first = cut;
            else
                last = cut;
        }
    }
    rng_insertion_sort(x, first, last);
}

/* torch topk(k, largest=True, sorted=True) on one row -> indices */
static void rng_topk_row(rng_pair *q, int64_t len, int64_t k, int64_t *out)
{
    int64_t j;
    if (k * 64 <= len) {
        rng_partial_sort(q, k, len);
    } else {
        rng_nth_element(q, 0, k - 1, len);
        rng_std_sort(q, 0, k - 1);
    }
    for (j = 0; j < k; j++)
        out[j] = q[j].i;
}

static double rng_load_prob(const void *p, int dtype, int64_t i)
{
    switch (dtype) {
    case PCT_RNG_F64: return ((const double *)p)[i];
    case PCT_RNG_F32: return (double)((const float *)p)[i];
    case PCT_RNG_F16: return (double)rng_f16_to_f32(((const uint16_t *)p)[i]);
    default: return (double)rng_bf16_to_f32(((const uint16_t *)p)[i]);
    }
}

/* p / q in the probability dtype; q is the exponential sample in double,
 * first rounded to the dtype as torch's exponential_ kernel does. */
static double rng_div_in_dtype(int dtype, double pv, double qd)
{
    switch (dtype) {
    case PCT_RNG_F64: return pv / qd;
    case PCT_RNG_F32: return (double)((float)pv / (float)qd);
    case PCT_RNG_F16: {
        float qf = rng_f16_to_f32(rng_f32_to_f16((float)qd));
        return (double)rng_f16_to_f32(rng_f32_to_f16((float)pv / qf));
    }
    default: {
        float qf = rng_bf16_to_f32(rng_f32_to_bf16((float)qd));
        return (double)rng_bf16_to_f32(rng_f32_to_bf16((float)pv / qf));
    }
    }
}

/* One row of the with-replacement kernel; cum is scratch of ncat doubles
 * holding values of the accumulation type. */
static void rng_multinomial_repl_row(pct_cpu_generator *g, const void *probs,
                                     int dtype, int64_t row, int64_t ncat,
                                     int64_t nsample, double *cum,
                                     int64_t *out)
{
    int64_t j, s;
    if (dtype == PCT_RNG_F64) {
        double sum = 0.0;
        for (j = 0; j < ncat; j++) {
            sum += ((const double *)probs)[row * ncat + j];
            cum[j] = sum;
        }
        for (j = 0; j < ncat; j++)
            cum[j] = cum[j] / sum;
    } else {
        float sum = 0.0f;
        for (j = 0; j < ncat; j++) {
            sum += (float)rng_load_prob(probs, dtype, row * ncat + j);
            cum[j] = (double)sum;
        }
        for (j = 0; j < ncat; j++)
            cum[j] = (double)((float)cum[j] / sum);
    }
    for (s = 0; s < nsample; s++) {
        double u = rng_u53(g);
        int64_t left = 0, right = ncat;
        cum[ncat - 1] = 1.0;
        while (right - left > 0) {
            int64_t mid = left + (right - left) / 2;
            if (cum[mid] < u)
                left = mid + 1;
            else
                right = mid;
        }
        out[s] = left;
    }
}

int pct_rng_multinomial(pct_cpu_generator *g, int64_t *out, const void *probs,
                        int probs_dtype, int64_t n_dist, int64_t n_categories,
                        int64_t n_sample, int replacement)
{
    int64_t r, j, total;
    if (g == NULL || out == NULL || probs == NULL)
        return -1;
    if (!rng_is_float_dtype(probs_dtype))
        return -1;
    if (n_dist < 1 || n_categories < 1 || n_categories > ((int64_t)1 << 24))
        return -1;
    if (n_sample < 1 || (!replacement && n_sample > n_categories))
        return -1;
    if (n_dist > INT64_MAX / n_categories ||
        (size_t)(n_dist * n_categories) > SIZE_MAX / sizeof(rng_pair))
        return -1;
    total = n_dist * n_categories;

    /* validation (torch checks before sampling on the no-replacement path and
     * row by row on the replacement path; we check everything up front) */
    for (r = 0; r < n_dist; r++) {
        double dsum = 0.0;
        float fsum = 0.0f;
        for (j = 0; j < n_categories; j++) {
            double v = rng_load_prob(probs, probs_dtype, r * n_categories + j);
            if (!(v >= 0.0) || isinf(v))
                return -1;
            dsum += v;
            fsum += (float)v;
        }
        if (probs_dtype == PCT_RNG_F64 ? !(dsum > 0.0) : !(fsum > 0.0f))
            return -1;
    }

    if (replacement && n_sample > 1) {
        double *cum = (double *)malloc((size_t)n_categories * sizeof(double));
        if (cum == NULL)
            return -1;
        for (r = 0; r < n_dist; r++)
            rng_multinomial_repl_row(g, probs, probs_dtype, r, n_categories,
                                     n_sample, cum, out + r * n_sample);
        free(cum);
        return 0;
    }

    {
        rng_pair *q = (rng_pair *)malloc((size_t)total * sizeof(rng_pair));
        if (q == NULL)
            return -1;
        /* q = exponential_(1) over the whole tensor, then q = probs / q */
        for (j = 0; j < total; j++) {
            double e = rng_exponential_sample(g, 1.0);
            if (probs_dtype == PCT_RNG_F32)
                e = (double)(float)e;
            q[j].v = rng_div_in_dtype(probs_dtype,
                                      rng_load_prob(probs, probs_dtype, j), e);
            q[j].i = j % n_categories;
        }
        for (r = 0; r < n_dist; r++) {
            rng_pair *row = q + r * n_categories;
            if (n_sample == 1) {
                int64_t best = 0;
                for (j = 1; j < n_categories; j++) {
                    double bv = row[best].v, v = row[j].v;
                    if (bv != bv)
                        break;
                    if (v != v || v > bv)
                        best = j;
                }
                out[r] = best;
            } else {
                rng_topk_row(row, n_categories, n_sample, out + r * n_sample);
            }
        }
        free(q);
    }
    return 0;
}
