/* scalar.c: Scalar arguments (pct_scalar, op.h): their dtype, torch's range checks, and their tensors. Device-neutral:
 * the binding's parser, the kernels of every backend and the autograd formulas share them. */
#include "op.h"
#include "error.h"
#include <math.h>

int pct_scalar_check_fits(const pct_scalar *s, int dtype)
{
    if (!pct_dtype_valid(dtype) || dtype == PCT_BOOL || (dtype == PCT_FLOAT64 && s->kind != PCT_SCALAR_COMPLEX))
        return 0; /* they take any value */
    const pct_dtype_info *info = &pct_dtype_infos[dtype];
    const double lo = info->lowest, hi = info->highest;
    if (s->kind == PCT_SCALAR_BOOL) return 0;
    bool bad;
    if (pct_dtype_is_complex(dtype)) {
        bad = (isfinite(s->d) && (s->d < -hi || s->d > hi)) || (isfinite(s->im) && (s->im < -hi || s->im > hi));
        if (dtype == PCT_COMPLEX128) bad = false;
    } else if (s->kind == PCT_SCALAR_COMPLEX && s->im != 0) {
        bad = true; /* a complex value with an imaginary part fits no real dtype */
    } else if (pct_dtype_is_floating(dtype)) {
        /* an int fits where its value is in range (only float16's is narrower than int64's; rounding is fine);
         * a double may be inf or nan, not beyond the finite range */
        if (s->kind == PCT_SCALAR_INT) bad = s->d < -hi || s->d > hi; /* d: the value, also of ints in [2^63, 2^64) */
        else bad = isfinite(s->d) && (s->d < -hi || s->d > hi);
    } else if (s->kind == PCT_SCALAR_INT) {
        int64_t v = s->i;
        if (v < 0 && s->d > 0) bad = dtype != PCT_UINT64; /* a Python int in [2^63, 2^64): i holds it wrapped, d its value */
        else if (dtype == PCT_INT64 || dtype == PCT_UINT64) bad = false;
        else if (dtype == PCT_UINT8 || pct_dtype_is_barebones(dtype))
            bad = (double)v > hi || (double)v < -hi; /* negative ints wrap (two's complement), as in torch */
        else bad = (double)v < lo || (double)v > hi;
    } else {
        bad = !(s->d >= lo && s->d <= hi); /* nan and inf too */
        if (dtype == PCT_INT64 && s->d >= 9223372036854775808.0) bad = true;
    }
    if (!bad) return 0;
    pct_error(PCT_ERR_RUNTIME, "value cannot be converted to type %s without overflow", info->overflow_name);
    return -1;
}

int pct_scalar_check_opmath(const pct_scalar *s, int dtype)
{
    if (dtype == PCT_FLOAT64) return 0;
    return pct_scalar_check_fits(s, pct_dtype_is_floating(dtype) ? PCT_FLOAT32 : dtype);
}

void pct_tensor_item_scalar(const pct_tensor *t, pct_scalar *s)
{
    const char *p = pct_tensor_data(t);
    s->from_tensor = !(t->flags & PCT_FLAG_WRAPPED_NUMBER);
    s->im = 0;
    if (pct_dtype_is_complex(t->dtype)) {
        s->kind = PCT_SCALAR_COMPLEX;
        pct_load_as_complex(p, t->dtype, &s->d, &s->im);
        s->i = 0;
    } else if (pct_dtype_is_floating(t->dtype)) {
        s->kind = PCT_SCALAR_FLOAT;
        s->d = pct_load_as_double(p, t->dtype);
        s->i = 0;
    } else {
        s->kind = t->dtype == PCT_BOOL ? PCT_SCALAR_BOOL : PCT_SCALAR_INT;
        s->i = pct_load_as_int64(p, t->dtype);
        /* a uint64 beyond int64 (a tensor's or a wrapped number's) is a uint64 Scalar (Note [uint64 scalars]) */
        s->d = (t->flags & PCT_FLAG_UINT64_NUMBER) || t->dtype == PCT_UINT64 ? (double)(uint64_t)s->i : (double)s->i;
    }
}

pct_tensor *pct_scalar_tensor_of(int dtype, const pct_scalar *s)
{
    /* an int in [2^63, 2^64) (i wrapped, d its value) becomes its value in a float dtype */
    if (s->kind == PCT_SCALAR_COMPLEX || pct_dtype_is_complex(dtype)) { /* both parts (a real dtype: the real one) */
        pct_tensor *t = pct_tensor_empty(0, NULL, dtype, PCT_CPU, -1);
        if (t) pct_store_complex(t->storage->data, dtype, s->d, s->kind == PCT_SCALAR_COMPLEX ? s->im : 0);
        return t;
    }
    bool by_value = s->kind == PCT_SCALAR_FLOAT || (pct_scalar_is_uint64(s) && pct_dtype_is_floating(dtype));
    return pct_tensor_scalar(dtype, s->d, s->i, by_value);
}
