/* fused_bias_gelu.c: an extension of pyctorch written against its public C header, <pyctorch/extension.h>.
 *
 * One fused op, y = gelu(x + bias) (the exact, erf form of GELU), and its backward, each a single pass over memory
 * where the composition gelu(x + bias) takes two (and its backward three). fused_bias_gelu.py wires the two kernels
 * into autograd with torch.autograd.Function.
 *
 *   forward(x, bias) -> y              x: [..., C] (any number of leading dims), bias: [C], y like x
 *   backward(grad_y, x, bias) -> (grad_x, grad_bias)
 *       z = x + bias, gelu'(z) = Phi(z) + z * phi(z)   (Phi, phi: the standard normal's cdf and density)
 *       grad_x = grad_y * gelu'(z),  grad_bias[c] = sum over the leading dims of grad_x[..., c]
 *
 * Checks, with the exceptions torch's TORCH_CHECK family raises (the header's PCT_EXT_CHECK_* macros):
 *   an argument that is not a tensor, or a dtype other than float32/float64, or x and bias of different dtypes:
 *     TypeError;  a tensor not on the CPU: RuntimeError;  x with no dims, bias not 1-d, or bias's size not x's
 *     last size: ValueError;  shapes of grad_y and x that differ: ValueError.
 * Inputs of any layout are accepted: the kernels read contiguous copies (pct_ext_contiguous).
 *
 * Note [References in an extension]: every pct_ext_contiguous / pct_ext_empty* result is a new reference this file
 * owns until it returns it or releases it; arguments from PyArg_ParseTuple are borrowed and never released. Each
 * function keeps its owned references in locals that start NULL and a single `done:` path Py_XDECREFs them, so an
 * error anywhere leaks nothing (tests/test_cpp_extension.py counts references and memory blocks over many calls).
 */
#include <pyctorch/extension.h>
#include <math.h>

/* 0 when t is a float32/float64 CPU tensor; -1 with the error. */
static int check_float_cpu(PyObject *t, const char *what)
{
    if (!pct_ext_is_tensor(t)) {
        pct_ext_error(PCT_EXT_TYPE_ERROR, "fused_bias_gelu: %s must be a Tensor, got %s", what, Py_TYPE(t)->tp_name);
        return -1;
    }
    const int dtype = pct_ext_dtype_of(t);
    if (dtype != PCT_EXT_FLOAT32 && dtype != PCT_EXT_FLOAT64) {
        pct_ext_error(PCT_EXT_TYPE_ERROR, "fused_bias_gelu: %s must be float32 or float64, got %s", what,
                      pct_ext_dtype_name(dtype));
        return -1;
    }
    if (pct_ext_device_type_of(t) != PCT_EXT_CPU) {
        pct_ext_error(PCT_EXT_RUNTIME_ERROR, "fused_bias_gelu: %s must be a CPU tensor", what);
        return -1;
    }
    return 0;
}

/* 0 when x ([..., C]) and bias ([C]) fit together; -1 with the error. *rows and *channels get the flat shape. */
static int check_pair(PyObject *x, PyObject *bias, int64_t *rows, int64_t *channels)
{
    if (check_float_cpu(x, "x") < 0 || check_float_cpu(bias, "bias") < 0) return -1;
    if (pct_ext_dtype_of(x) != pct_ext_dtype_of(bias)) {
        pct_ext_error(PCT_EXT_TYPE_ERROR, "fused_bias_gelu: x and bias must have the same dtype, got %s and %s",
                      pct_ext_dtype_name(pct_ext_dtype_of(x)), pct_ext_dtype_name(pct_ext_dtype_of(bias)));
        return -1;
    }
    const int ndim = pct_ext_ndim(x);
    if (ndim < 1 || pct_ext_ndim(bias) != 1) {
        pct_ext_error(PCT_EXT_VALUE_ERROR, "fused_bias_gelu: expected x with at least 1 dim and a 1-d bias, got %d-d "
                      "x and %d-d bias", ndim, pct_ext_ndim(bias));
        return -1;
    }
    *channels = pct_ext_sizes(x)[ndim - 1];
    if (pct_ext_sizes(bias)[0] != *channels) {
        pct_ext_error(PCT_EXT_VALUE_ERROR, "fused_bias_gelu: bias has %lld elements but x's last dim is %lld",
                      (long long)pct_ext_sizes(bias)[0], (long long)*channels);
        return -1;
    }
    *rows = *channels ? pct_ext_numel(x) / *channels : 0;
    return 0;
}

#define SQRT1_2 0.70710678118654752440       /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143267794  /* 1 / sqrt(2 pi), phi(0) */

/* The kernels, once per dtype: T the element type, SUF the libm suffix (f for float). */
#define GELU_KERNELS(T, NAME, SUF)                                                                                    \
    static void NAME##_forward(const T *x, const T *bias, T *y, int64_t rows, int64_t channels)                       \
    {                                                                                                                 \
        for (int64_t r = 0; r < rows; r++)                                                                            \
            for (int64_t c = 0; c < channels; c++) {                                                                  \
                const T z = x[r * channels + c] + bias[c];                                                            \
                y[r * channels + c] = (T)0.5 * z * ((T)1 + erf##SUF(z * (T)SQRT1_2));                                 \
            }                                                                                                         \
    }                                                                                                                 \
    static void NAME##_backward(const T *grad_y, const T *x, const T *bias, T *grad_x, T *grad_bias,                  \
                                int64_t rows, int64_t channels)                                                       \
    {                                                                                                                 \
        for (int64_t c = 0; c < channels; c++) grad_bias[c] = 0;                                                      \
        for (int64_t r = 0; r < rows; r++)                                                                            \
            for (int64_t c = 0; c < channels; c++) {                                                                  \
                const T z = x[r * channels + c] + bias[c];                                                            \
                const T cdf = (T)0.5 * ((T)1 + erf##SUF(z * (T)SQRT1_2));                                             \
                const T pdf = exp##SUF((T)-0.5 * z * z) * (T)INV_SQRT_2PI;                                            \
                const T g = grad_y[r * channels + c] * (cdf + z * pdf);                                               \
                grad_x[r * channels + c] = g;                                                                         \
                grad_bias[c] += g;                                                                                    \
            }                                                                                                         \
    }
GELU_KERNELS(float, gelu_f32, f)
GELU_KERNELS(double, gelu_f64, )
#undef GELU_KERNELS

static PyObject *forward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x_arg, *bias_arg, *x = NULL, *bias = NULL, *y = NULL, *result = NULL;
    int64_t rows, channels;
    if (!PyArg_ParseTuple(args, "OO:forward", &x_arg, &bias_arg) || check_pair(x_arg, bias_arg, &rows, &channels) < 0)
        return NULL;
    if (!(x = pct_ext_contiguous(x_arg)) || !(bias = pct_ext_contiguous(bias_arg)) || !(y = pct_ext_empty_like(x)))
        goto done;
    const void *xp = pct_ext_const_data_ptr(x), *bp = pct_ext_const_data_ptr(bias);
    void *yp = pct_ext_data_ptr(y);
    if (rows * channels > 0 && (!xp || !bp || !yp)) goto done;
    const int dtype = pct_ext_dtype_of(x);
    Py_BEGIN_ALLOW_THREADS /* the loop touches no Python object */
    if (dtype == PCT_EXT_FLOAT32) gelu_f32_forward(xp, bp, yp, rows, channels);
    else gelu_f64_forward(xp, bp, yp, rows, channels);
    Py_END_ALLOW_THREADS
    result = y;
    y = NULL;
done:
    Py_XDECREF(x);
    Py_XDECREF(bias);
    Py_XDECREF(y);
    return result;
}

static PyObject *backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *grad_arg, *x_arg, *bias_arg, *grad = NULL, *x = NULL, *bias = NULL, *grad_x = NULL, *grad_bias = NULL;
    PyObject *result = NULL;
    int64_t rows, channels;
    if (!PyArg_ParseTuple(args, "OOO:backward", &grad_arg, &x_arg, &bias_arg) ||
        check_pair(x_arg, bias_arg, &rows, &channels) < 0 || check_float_cpu(grad_arg, "grad") < 0)
        return NULL;
    PCT_EXT_CHECK_TYPE(pct_ext_dtype_of(grad_arg) == pct_ext_dtype_of(x_arg),
                       "fused_bias_gelu: grad must have x's dtype %s, got %s",
                       pct_ext_dtype_name(pct_ext_dtype_of(x_arg)), pct_ext_dtype_name(pct_ext_dtype_of(grad_arg)));
    const int ndim = pct_ext_ndim(x_arg);
    int same = pct_ext_ndim(grad_arg) == ndim;
    for (int d = 0; same && d < ndim; d++) same = pct_ext_sizes(grad_arg)[d] == pct_ext_sizes(x_arg)[d];
    PCT_EXT_CHECK_VALUE(same, "fused_bias_gelu: grad must have x's shape (%d dims, %lld elements), got %d dims and "
                        "%lld elements", ndim, (long long)pct_ext_numel(x_arg), pct_ext_ndim(grad_arg),
                        (long long)pct_ext_numel(grad_arg));
    if (!(grad = pct_ext_contiguous(grad_arg)) || !(x = pct_ext_contiguous(x_arg)) ||
        !(bias = pct_ext_contiguous(bias_arg)) || !(grad_x = pct_ext_empty_like(x)) ||
        !(grad_bias = pct_ext_empty_like(bias)))
        goto done;
    const void *gp = pct_ext_const_data_ptr(grad), *xp = pct_ext_const_data_ptr(x), *bp = pct_ext_const_data_ptr(bias);
    void *gxp = pct_ext_data_ptr(grad_x), *gbp = pct_ext_data_ptr(grad_bias);
    if ((rows * channels > 0 && (!gp || !xp || !gxp)) || (channels > 0 && (!bp || !gbp))) goto done;
    const int dtype = pct_ext_dtype_of(x);
    Py_BEGIN_ALLOW_THREADS
    if (dtype == PCT_EXT_FLOAT32) gelu_f32_backward(gp, xp, bp, gxp, gbp, rows, channels);
    else gelu_f64_backward(gp, xp, bp, gxp, gbp, rows, channels);
    Py_END_ALLOW_THREADS
    result = PyTuple_Pack(2, grad_x, grad_bias);
done:
    Py_XDECREF(grad);
    Py_XDECREF(x);
    Py_XDECREF(bias);
    Py_XDECREF(grad_x);
    Py_XDECREF(grad_bias);
    return result;
}

static PyMethodDef methods[] = {
    {"forward", forward, METH_VARARGS, "forward(x, bias) -> gelu(x + bias), bias broadcast over x's last dim"},
    {"backward", backward, METH_VARARGS, "backward(grad, x, bias) -> (grad_x, grad_bias)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fused_bias_gelu_ext", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_fused_bias_gelu_ext(void)
{
    if (pct_ext_import() < 0) return NULL;
    return PyModule_Create(&module);
}
