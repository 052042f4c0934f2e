/* linalg_reduce.c: the strided reduction engine of the linear-algebra kernels (declared in
 * blas_internal.h): sums and vector norms (L0, L1, L2, Lp, max/min of |x|, max/min) over a
 * set of dims, accumulated in double (integral sums in 64-bit wrap-around), split over
 * threads along the kept or the reduced elements. einsum, tensordot and linalg_norm.c
 * reduce through it; the fast float norms of torch.norm are reduce.c's.
 */
#include "blas_internal.h"

/* ---- reductions: sums and norms over a set of dims ---- */


typedef struct red_acc {
    double s;
    uint64_t si; /* integral sums */
} red_acc;

static red_acc red_init(int kind)
{
    red_acc a = {0.0, 0};
    if (kind == RED_MIN_ABS || kind == RED_MIN) a.s = INFINITY;
    if (kind == RED_MAX) a.s = -INFINITY;
    return a;
}

#define RED_LOOP(EXPR_CONTIG, EXPR_STRIDED) \
    do {                                     \
        if (st == 1)                         \
            for (int64_t i = 0; i < n; i++) { EXPR_CONTIG; } \
        else                                 \
            for (int64_t i = 0; i < n; i++) { EXPR_STRIDED; } \
    } while (0)

#define RED_MAXUP(s, v) do { double v_ = (v); if (v_ > (s) || v_ != v_) (s) = v_; } while (0)
#define RED_MINUP(s, v) do { double v_ = (v); if (v_ < (s) || v_ != v_) (s) = v_; } while (0)

#define PCT_RED_DEFINE(N, T, LOAD, ISINT)                                                           \
    static void red_run_##N(int kind, double p, const char *ptr, int64_t n, int64_t st, red_acc *acc) \
    {                                                                                              \
        const T *x = (const T *)ptr;                                                               \
        double s = acc->s;                                                                         \
        switch (kind) {                                                                            \
        case RED_SUM:                                                                              \
            if (ISINT) {                                                                           \
                uint64_t si = acc->si;                                                             \
                RED_LOOP(si += (uint64_t)(int64_t)LOAD(x[i]), si += (uint64_t)(int64_t)LOAD(x[i * st]));     \
                acc->si = si;                                                                      \
            } else {                                                                               \
                RED_LOOP(s += (double)LOAD(x[i]), s += (double)LOAD(x[i * st]));                   \
            }                                                                                      \
            break;                                                                                 \
        case RED_L0: RED_LOOP(s += LOAD(x[i]) != 0, s += LOAD(x[i * st]) != 0); break;             \
        case RED_L1: RED_LOOP(s += fabs((double)LOAD(x[i])), s += fabs((double)LOAD(x[i * st]))); break; \
        case RED_L2:                                                                               \
            RED_LOOP(double v = (double)LOAD(x[i]); s += v * v, double v = (double)LOAD(x[i * st]); s += v * v); \
            break;                                                                                 \
        case RED_LP:                                                                               \
            RED_LOOP(s += pow(fabs((double)LOAD(x[i])), p), s += pow(fabs((double)LOAD(x[i * st])), p)); \
            break;                                                                                 \
        case RED_MAX_ABS: RED_LOOP(RED_MAXUP(s, fabs((double)LOAD(x[i]))), RED_MAXUP(s, fabs((double)LOAD(x[i * st])))); break; \
        case RED_MIN_ABS: RED_LOOP(RED_MINUP(s, fabs((double)LOAD(x[i]))), RED_MINUP(s, fabs((double)LOAD(x[i * st])))); break; \
        case RED_MAX: RED_LOOP(RED_MAXUP(s, (double)LOAD(x[i])), RED_MAXUP(s, (double)LOAD(x[i * st]))); break; \
        case RED_MIN: RED_LOOP(RED_MINUP(s, (double)LOAD(x[i])), RED_MINUP(s, (double)LOAD(x[i * st]))); break; \
        default: break;                                                                            \
        }                                                                                          \
        acc->s = s;                                                                                \
    }

#define PCT_RED_ID(x) (x)
/* bools are read as bytes, any nonzero byte true (a view of other data may hold any byte) */
#define PCT_RED_BOOL(x) ((x) != 0)
PCT_RED_DEFINE(Bool, uint8_t, PCT_RED_BOOL, 1)
PCT_RED_DEFINE(Byte, uint8_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Char, int8_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Short, int16_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Int, int32_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Long, int64_t, PCT_RED_ID, 1)
PCT_RED_DEFINE(Half, pct_half, pct_half_to_float, 0)
PCT_RED_DEFINE(BFloat16, pct_bfloat16, pct_bf16_to_float, 0)
PCT_RED_DEFINE(Float, float, PCT_RED_ID, 0)
PCT_RED_DEFINE(Double, double, PCT_RED_ID, 0)

typedef void (*red_run_fn)(int kind, double p, const char *ptr, int64_t n, int64_t st, red_acc *acc);
static const red_run_fn red_runs[PCT_NUM_DTYPES] = {
    red_run_Bool, red_run_Byte, red_run_Char, red_run_Short, red_run_Int,
    red_run_Long, red_run_Half, red_run_BFloat16, red_run_Float, red_run_Double,
};

typedef struct red_plan {
    int kind;
    double p;
    int in_dtype, out_dtype;
    const char *in;
    char *out;
    int no, ni;                                     /* outer (kept) and inner (reduced) dims */
    int64_t osize[PCT_MAX_DIMS], oin[PCT_MAX_DIMS], oout[PCT_MAX_DIMS];
    int64_t isize[PCT_MAX_DIMS], ist[PCT_MAX_DIMS];
    int64_t outer_n, inner_n;
} red_plan;

static void red_combine(int kind, red_acc *a, const red_acc *b)
{
    switch (kind) {
    case RED_MAX_ABS: case RED_MAX: RED_MAXUP(a->s, b->s); break;
    case RED_MIN_ABS: case RED_MIN: RED_MINUP(a->s, b->s); break;
    default: a->s += b->s; a->si += b->si; break;
    }
}

/* Accumulates inner elements [begin, end) (flattened) of the reduction at `base`. */
static void red_inner(const red_plan *pl, const char *base, int64_t begin, int64_t end, red_acc *acc)
{
    const int isz = pct_dtype_itemsize[pl->in_dtype];
    const red_run_fn run = red_runs[pl->in_dtype];
    if (begin >= end) return;
    if (pl->ni == 0) {
        if (begin < end) run(pl->kind, pl->p, base, 1, 1, acc);
        return;
    }
    int nd = pl->ni;
    int64_t idx[PCT_MAX_DIMS], rem = begin;
    for (int d = nd - 1; d >= 0; d--) { idx[d] = rem % pl->isize[d]; rem /= pl->isize[d]; }
    while (begin < end) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * pl->ist[d];
        int64_t n = pl->isize[nd - 1] - idx[nd - 1];
        if (n > end - begin) n = end - begin;
        run(pl->kind, pl->p, base + off * isz, n, pl->ist[nd - 1], acc);
        begin += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] >= pl->isize[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
}

static void red_store(const red_plan *pl, char *dst, const red_acc *acc, const char *single)
{
    double v;
    switch (pl->kind) {
    case RED_SUM:
        if (!pct_dtype_is_floating(pl->in_dtype)) { pct_store_int64(dst, pl->out_dtype, (int64_t)acc->si); return; }
        v = acc->s;
        break;
    case RED_L2: v = sqrt(acc->s); break;
    case RED_LP: v = pow(acc->s, 1.0 / pl->p); break;
    case RED_MAX: case RED_MIN: v = pl->inner_n == 0 ? 0.0 : acc->s; break; /* matrix norms of empty matrices are 0 */
    default: v = acc->s; break;
    }
    if (single && pl->kind != RED_SUM && pl->kind != RED_MAX && pl->kind != RED_MIN) {
        /* a norm over one element is |x| (x != 0 for ord 0), as torch's shortcut computes it */
        double x = pct_load_as_double(single, pl->in_dtype);
        v = pl->kind == RED_L0 ? (double)(x != 0) : fabs(x);
    }
    pct_store_double(dst, pl->out_dtype, v);
}

/* Plans a reduction of `in` over the dims in mask into `out` (contiguous; with or
 * without the reduced dims as given by keepdim). */
static void red_build(red_plan *pl, const pct_tensor *in, const bool *mask, bool keepdim, pct_tensor *out, int kind,
                      double p)
{
    pl->kind = kind;
    pl->p = p;
    pl->in_dtype = in->dtype;
    pl->out_dtype = out->dtype;
    pl->in = pct_tensor_data(in);
    pl->out = pct_tensor_data(out);
    pl->no = pl->ni = 0;
    pl->outer_n = pl->inner_n = 1;
    int j = 0;
    int64_t pairs_size[PCT_MAX_DIMS], pairs_st[PCT_MAX_DIMS];
    int np = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (mask[d]) {
            pl->inner_n *= in->sizes[d];
            if (keepdim) j++;
            if (in->sizes[d] != 1) { pairs_size[np] = in->sizes[d]; pairs_st[np] = in->strides[d]; np++; }
        } else {
            pl->osize[pl->no] = in->sizes[d];
            pl->oin[pl->no] = in->strides[d];
            pl->oout[pl->no] = out->strides[j++];
            pl->outer_n *= in->sizes[d];
            pl->no++;
        }
    }
    /* inner dims by decreasing stride, then merge neighbours that are contiguous */
    for (int a = 1; a < np; a++)
        for (int b = a; b > 0 && pairs_st[b] > pairs_st[b - 1]; b--) {
            int64_t ts = pairs_size[b], tt = pairs_st[b];
            pairs_size[b] = pairs_size[b - 1]; pairs_st[b] = pairs_st[b - 1];
            pairs_size[b - 1] = ts; pairs_st[b - 1] = tt;
        }
    for (int a = 0; a < np; a++) {
        if (pl->ni > 0 && pl->ist[pl->ni - 1] == pairs_st[a] * pairs_size[a]) {
            pl->isize[pl->ni - 1] *= pairs_size[a];
            pl->ist[pl->ni - 1] = pairs_st[a];
            continue;
        }
        pl->isize[pl->ni] = pairs_size[a];
        pl->ist[pl->ni] = pairs_st[a];
        pl->ni++;
    }
}

static void red_outer(const red_plan *pl, int64_t o, int isz, int osz)
{
    int64_t rem = o, ioff = 0, ooff = 0;
    for (int d = pl->no - 1; d >= 0; d--) {
        int64_t i = rem % pl->osize[d];
        rem /= pl->osize[d];
        ioff += i * pl->oin[d];
        ooff += i * pl->oout[d];
    }
    red_acc acc = red_init(pl->kind);
    const char *base = pl->in + ioff * isz;
    red_inner(pl, base, 0, pl->inner_n, &acc);
    red_store(pl, pl->out + ooff * osz, &acc, pl->inner_n == 1 ? base : NULL);
}

static void red_execute(const red_plan *pl)
{
    const int isz = pct_dtype_itemsize[pl->in_dtype], osz = pct_dtype_itemsize[pl->out_dtype];
    if (pl->outer_n == 0) return;
    const int nt = num_threads();
    const int64_t total = pl->outer_n * pl->inner_n;
    if (pl->outer_n == 1 && pl->inner_n >= 65536 && nt > 1) {
        red_acc parts[256];
        int used = nt < 256 ? nt : 256;
        for (int t = 0; t < used; t++) parts[t] = red_init(pl->kind);
        const int64_t n = pl->inner_n;
PCT_OMP(omp parallel num_threads(used))
        {
#ifdef _OPENMP
            int tid = omp_get_thread_num(), cnt = omp_get_num_threads();
#else
            int tid = 0, cnt = 1;
#endif
            int64_t chunk = (n + cnt - 1) / cnt, b = tid * chunk, e = b + chunk < n ? b + chunk : n;
            if (b < e) red_inner(pl, pl->in, b, e, &parts[tid]);
        }
        for (int t = 1; t < used; t++) red_combine(pl->kind, &parts[0], &parts[t]);
        red_store(pl, pl->out, &parts[0], pl->inner_n == 1 ? pl->in : NULL);
        return;
    }
    if (nt > 1 && total >= 65536 && pl->outer_n > 1) {
PCT_OMP(omp parallel for schedule(static))
        for (int64_t o = 0; o < pl->outer_n; o++) red_outer(pl, o, isz, osz);
    } else {
        for (int64_t o = 0; o < pl->outer_n; o++) red_outer(pl, o, isz, osz);
    }
}

/* Output shape of a reduction over mask. */
static int red_shape(const pct_tensor *in, const bool *mask, bool keepdim, int64_t *shape)
{
    int nd = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!mask[d]) shape[nd++] = in->sizes[d];
        else if (keepdim) shape[nd++] = 1;
    }
    return nd;
}

/* Reduces `in` over mask into a new contiguous tensor of out_dtype. */
pct_tensor *pct_la_reduce(pct_tensor *in, const bool *mask, bool keepdim, int out_dtype, int kind, double p)
{
    int64_t shape[PCT_MAX_DIMS];
    int nd = red_shape(in, mask, keepdim, shape);
    pct_tensor *out = pct_tensor_empty(nd, shape, out_dtype, PCT_CPU, -1);
    if (!out) return NULL;
    red_plan pl;
    red_build(&pl, in, mask, keepdim, out, kind, p);
    if (pl.outer_n * pl.inner_n >= 65536) {
        PCT_NOGIL_BEGIN
        red_execute(&pl);
        PCT_NOGIL_END
    } else {
        red_execute(&pl);
    }
    return out;
}

