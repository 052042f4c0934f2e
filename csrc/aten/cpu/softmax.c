/* softmax.c: softmax and log_softmax over one dim (forward; the backward is softmax_backward.c).
 * Not reductions of the output's shape, they have their own loops: rows (the last dim) and
 * column blocks (other dims), float32 rows through the explicit vectors of reduce_vec.c.
 */
#include "../shapes_only.h"
#include "reduce_internal.h"
#include "../backend.h"

/* ------------------------------------------------------------------------------------ */
/* softmax, log_softmax                                                                  */

#ifdef _OPENMP
#define RED_OMP_THREADS(nth, numel, units)                                                     \
    do {                                                                                       \
        if ((numel) >= PCT_PARALLEL_GRAIN && (units) > 1 && !omp_in_parallel()) nth = omp_get_max_threads(); \
    } while (0)
#define RED_OMP_SPLIT(units, nth, BODY)                                                        \
    do {                                                                                       \
        PCT_NOGIL_BEGIN                                                                 \
        _Pragma("omp parallel num_threads(nth)")                                               \
        {                                                                                      \
            int64_t T_ = omp_get_num_threads(), t_ = omp_get_thread_num();                     \
            int64_t ch_ = ((units) + T_ - 1) / T_;                                             \
            int64_t b_ = t_ * ch_, e_ = b_ + ch_ < (units) ? b_ + ch_ : (units);               \
            if (b_ < e_) { BODY; }                                                             \
        }                                                                                      \
        PCT_NOGIL_END                                                                   \
    } while (0)
#else
#define RED_OMP_THREADS(nth, numel, units) ((void)(numel), (void)(units))
#define RED_OMP_SPLIT(units, nth, BODY) do { (void)(nth); } while (0)
#endif

/* The loops of each floating dtype (softmax_impl.h): softmax_rows_<N>, softmax_cols_<N>, softmax_run_<N>. */
#define SM_E FLOAT16
#define SM_N Half
#define SM_T pct_half
#define SM_C float
#include "softmax_impl.h"
#define SM_E BFLOAT16
#define SM_N BFloat16
#define SM_T pct_bfloat16
#define SM_C float
#include "softmax_impl.h"
#define SM_E FLOAT32
#define SM_N Float
#define SM_T float
#define SM_C float
#include "softmax_impl.h"
#define SM_E FLOAT64
#define SM_N Double
#define SM_T double
#define SM_C double
#include "softmax_impl.h"

typedef void (*red_softmax_fn)(const char *, char *, int64_t, int64_t, int64_t, bool);
static const red_softmax_fn softmax_table[PCT_NUM_DTYPES] = {
#define RED_SOFTMAX_ENTRY(E, N) [PCT_##E] = softmax_run_##N,
#define RED_X_SOFTMAX_ENTRY(E, N, T, C, S, a, b, c, d) RED_IF_FLOAT(E, RED_SOFTMAX_ENTRY, RED_NOTHING)(E, N)
    PCT_FORALL_DTYPES_PAIRED(RED_X_SOFTMAX_ENTRY, 0, 0, 0, 0)
};

/* Note [Device softmax]: the entry points of softmax, log_softmax and their backward (softmax_backward.c) are
 * device-neutral: checks, dtypes, the contiguous operands and the result tensor (on the input's device) are the same
 * everywhere; on a device other than the CPU the rows are that backend's softmax, handed a pct_softmax_call
 * (softmax_call.h). 0, or -1 with an error. */
int pct_softmax_on_device(const pct_softmax_call *call, int device_type)
{
    const pct_backend *b = pct_backend_of(device_type);
    if (!b) return -1;
    if (!b->softmax) {
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "softmax is not implemented on the '%s' device", pct_device_type_name(device_type));
        return -1;
    }
    return b->softmax(call);
}

/* softmax or (lg) log_softmax of self along dim_arg, in dtype (PCT_NO_DTYPE: self's) */
static pct_object *red_softmax(bool lg, pct_tensor *self, int64_t dim_arg, int dtype)
{
    pct_tensor *in = NULL, *cont = NULL, *out = NULL;
    int dim = pct_wrap_dim(dim_arg, self->ndim);
    if (dim < 0) return NULL;
    int rd = dtype == PCT_NO_DTYPE ? self->dtype : dtype;
    if (self->numel == 0) return (pct_object *)pct_tensor_empty(self->ndim, self->sizes, rd, self->device_type, self->device_index);
    if (!softmax_table[rd]) {
        bool last = self->ndim == 0 || dim == self->ndim - 1;
        pct_error(PCT_ERR_NOT_IMPLEMENTED, "\"%s%s_kernel_impl\" not implemented for '%s'",
                     lg ? "log_softmax" : "softmax", last ? "_lastdim" : "", pct_dtype_cpp_name[rd]);
        return NULL;
    }
    PCT_TRY(in = pct_to_dtype(self, rd, false));
    PCT_TRY(cont = pct_contiguous(in));
    PCT_TRY(out = pct_tensor_empty(self->ndim, self->sizes, rd, self->device_type, self->device_index));
    int64_t outer = 1, len = self->ndim ? self->sizes[dim] : 1, inner = 1;
    for (int d = 0; d < dim; d++) outer *= self->sizes[d];
    for (int d = dim + 1; d < self->ndim; d++) inner *= self->sizes[d];
    if (self->device_type != PCT_CPU) {
        const pct_softmax_call call = {.dtype = rd, .device_index = self->device_index, .log = lg, .outer = outer,
                                       .len = len, .inner = inner, .x = pct_tensor_data(cont),
                                       .out = pct_tensor_data(out)};
        if (pct_softmax_on_device(&call, self->device_type) < 0) goto fail;
    } else if (out->numel > 0 && !pct_shapes_only) {
        softmax_table[rd](pct_tensor_data(cont), pct_tensor_data(out), outer, len, inner, lg);
    }
    PCT_DECREF(in);
    PCT_DECREF(cont);
    return (pct_object *)out;
fail:
    PCT_XDECREF(in);
    PCT_XDECREF(cont);
    PCT_XDECREF(out);
    return NULL;
}

pct_object *pct_cpu_softmax(pct_call *c)
{
    PCT_ARGS(softmax);
    return red_softmax(false, arg.input, arg.dim, arg.dtype);
}

pct_object *pct_cpu_log_softmax(pct_call *c)
{
    PCT_ARGS(log_softmax);
    return red_softmax(true, arg.input, arg.dim, arg.dtype);
}
