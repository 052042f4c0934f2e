/* dtype.c: dtype tables and torch's promotion rules (c10/core/ScalarType.h semantics). */
#include "dtype.h"
#include <complex.h>

const int pct_dtype_itemsize[PCT_NUM_DTYPES] = {
#define PCT_DTYPE_SIZE(E, N, T, C, S) (int)sizeof(T),
    PCT_FORALL_EVERY_DTYPE(PCT_DTYPE_SIZE)
#undef PCT_DTYPE_SIZE
};

const char *const pct_dtype_name[PCT_NUM_DTYPES] = {
#define PCT_DTYPE_STR(E, N, T, C, S) S,
    PCT_FORALL_EVERY_DTYPE(PCT_DTYPE_STR)
#undef PCT_DTYPE_STR
};

const char *const pct_dtype_cpp_name[PCT_NUM_DTYPES] = {
#define PCT_DTYPE_CPP(E, N, T, C, S) #N,
    PCT_FORALL_EVERY_DTYPE(PCT_DTYPE_CPP)
#undef PCT_DTYPE_CPP
};

const char *const pct_dtype_cpp_type_name[PCT_NUM_DTYPES] = {
#define PCT_DTYPE_TYPEMETA(E, kind, lo, hi, ihi, digits, typemeta, overflow) [PCT_##E] = typemeta,
    PCT_FORALL_DTYPE_PROPERTIES(PCT_DTYPE_TYPEMETA)
#undef PCT_DTYPE_TYPEMETA
};

const pct_dtype_info pct_dtype_infos[PCT_NUM_DTYPES] = {
#define PCT_DTYPE_ROW(E, kind_, lo, hi, ihi, digits_, typemeta, overflow)                                          \
    [PCT_##E] = {.kind = kind_, .reduced_float = PCT_##E == PCT_FLOAT16 || PCT_##E == PCT_BFLOAT16,                 \
                 .barebones = PCT_##E >= PCT_UINT16 && PCT_##E <= PCT_UINT64,   \
                 .storage_only = PCT_##E >= PCT_COMPLEX32, .float8 = PCT_##E >= PCT_FLOAT8_E5M2, .digits = digits_, .lowest = lo, .highest = hi,               \
                 .int_lowest = kind_ == PCT_KIND_FLOAT ? INT64_MIN : (int64_t)(lo), .int_highest = ihi,            \
                 .overflow_name = overflow},
    PCT_FORALL_DTYPE_PROPERTIES(PCT_DTYPE_ROW)
#undef PCT_DTYPE_ROW
};

int pct_default_dtype = PCT_FLOAT32;

/* Rank inside a category: larger wins. */
static int float_rank(int d)
{
    switch (d) {
    case PCT_FLOAT16: case PCT_BFLOAT16: return 1;
    case PCT_FLOAT32: return 2;
    default: return 3;
    }
}

int pct_dtype_to_real(int d)
{
    switch (d) {
    case PCT_COMPLEX32: return PCT_FLOAT16;
    case PCT_COMPLEX64: return PCT_FLOAT32;
    case PCT_COMPLEX128: return PCT_FLOAT64;
    default: return d;
    }
}

int pct_dtype_to_complex(int d)
{
    switch (d) {
    case PCT_FLOAT16: return PCT_COMPLEX32;
    case PCT_BFLOAT16: case PCT_FLOAT32: return PCT_COMPLEX64; /* bfloat16 has float's range */
    case PCT_FLOAT64: return PCT_COMPLEX128;
    default: return d;
    }
}

int pct_promote_types(int a, int b)
{
    if (a == b) return a;
    if (a == PCT_DTYPE_UNDEFINED) return b;
    if (b == PCT_DTYPE_UNDEFINED) return a;
    if (pct_dtype_is_float8(a) || pct_dtype_is_float8(b)) return -1; /* torch promotes no float8 with anything */
    if (pct_dtype_is_complex(a) || pct_dtype_is_complex(b)) {
        if (pct_dtype_is_barebones(a) || pct_dtype_is_barebones(b)) return -1;
        /* the complex of the promoted real parts (a real dtype is its own real part) */
        int r = pct_promote_types(pct_dtype_to_real(a), pct_dtype_to_real(b));
        return r < 0 ? r : pct_dtype_to_complex(r);
    }
    /* torch promotes uint16/32/64 only with floating dtypes (the float wins) */
    if (pct_dtype_is_barebones(a) || pct_dtype_is_barebones(b)) {
        if (pct_dtype_is_floating(a)) return a;
        if (pct_dtype_is_floating(b)) return b;
        return -1;
    }
    if (a == PCT_BOOL) return b;
    if (b == PCT_BOOL) return a;
    bool fa = pct_dtype_is_floating(a), fb = pct_dtype_is_floating(b);
    if (fa && fb) {
        /* float16 with bfloat16 has no common 16-bit type: go to float32 */
        if (pct_dtype_is_reduced_float(a) && pct_dtype_is_reduced_float(b)) return PCT_FLOAT32;
        return float_rank(a) >= float_rank(b) ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integral, not bool */
    if (a == PCT_UINT8 || b == PCT_UINT8) {
        int other = a == PCT_UINT8 ? b : a;
        return other == PCT_INT8 ? PCT_INT16 : other;
    }
    return a > b ? a : b; /* enum order int8 < int16 < int32 < int64 */
}

static int category(int d)
{
    if (d == PCT_BOOL) return 0;
    if (pct_dtype_is_integral(d, false)) return 1;
    return pct_dtype_is_complex(d) ? 3 : 2;
}

bool pct_can_cast(int from, int to) { return category(from) <= category(to); }

/* promote_types where a or b may be a uint64 number (Note [uint64 scalars] in op.h): a float wins, anything else
 * is refused (the first refused pair is kept; the uint64 goes on so the rest of the state stays defined). */
static int promote_u(pct_result_type_state *s, int a, int b)
{
    if (a != PCT_UINT64_SCALAR && b != PCT_UINT64_SCALAR) {
        int r = pct_promote_types(a, b);
        if (r >= 0) return r;
        if (!s->refused_a && !s->refused_b) { s->refused_a = a; s->refused_b = b; }
        return a; /* refused: keep a defined state */
    }
    if (a == b || b == PCT_DTYPE_UNDEFINED) return a;
    if (a == PCT_DTYPE_UNDEFINED) return b;
    int other = a == PCT_UINT64_SCALAR ? b : a;
    if (pct_dtype_is_floating(other)) return other;
    if (!s->refused_a && !s->refused_b) { s->refused_a = a; s->refused_b = b; }
    return PCT_UINT64_SCALAR;
}

void pct_result_type_update(pct_result_type_state *s, int dtype, int tier)
{
    if (tier == 2 && pct_dtype_is_floating(dtype)) dtype = pct_default_dtype;
    if (tier == 2 && pct_dtype_is_complex(dtype)) dtype = pct_dtype_to_complex(pct_default_dtype);
    int *slot = tier == 0 ? &s->dim_result : tier == 1 ? &s->zero_result : &s->wrapped_result;
    *slot = promote_u(s, *slot, dtype);
}

/* A lower tier only matters when it is of a higher category than the higher tier. */
static int combine_categories(pct_result_type_state *s, int higher, int lower)
{
    if (lower == PCT_UINT64_SCALAR && higher != PCT_DTYPE_UNDEFINED) /* a uint64 number: the higher tier decides */
        return higher == PCT_BOOL ? promote_u(s, higher, lower) : higher;
    if (pct_dtype_is_complex(higher)) return higher;
    /* a complex lower tier keeps a floating higher tier's precision: float64 with a complex number is complex128 */
    if (pct_dtype_is_complex(lower) && pct_dtype_is_floating(higher) && !pct_dtype_is_float8(higher))
        return pct_dtype_to_complex(higher);
    if (higher != PCT_DTYPE_UNDEFINED && pct_dtype_is_floating(higher)) return higher;
    if (higher == PCT_BOOL || (lower != PCT_DTYPE_UNDEFINED && (pct_dtype_is_floating(lower) || pct_dtype_is_complex(lower))))
        return promote_u(s, higher, lower);
    if (higher != PCT_DTYPE_UNDEFINED) return higher;
    return lower;
}

int pct_result_type_finish(pct_result_type_state *s)
{
    int r = combine_categories(s, s->dim_result, combine_categories(s, s->zero_result, s->wrapped_result));
    if (s->refused_a || s->refused_b) return -1;
    return r == PCT_UINT64_SCALAR ? PCT_INT64 : r; /* only uint64 numbers: torch's uint64, held as int64 here */
}

/* The storage-only and complex dtypes read and written through a complex pair (a real dtype: the real part). */
static void load_extra(const void *p, int d, double *re, double *im)
{
    *im = 0;
    switch (d) {
    case PCT_COMPLEX64: { const pct_cfloat z = *(const pct_cfloat *)p; *re = crealf(z); *im = cimagf(z); break; }
    case PCT_COMPLEX128: { const pct_cdouble z = *(const pct_cdouble *)p; *re = creal(z); *im = cimag(z); break; }
    case PCT_COMPLEX32: {
        const pct_chalf z = *(const pct_chalf *)p;
        *re = pct_half_to_float(z.re);
        *im = pct_half_to_float(z.im);
        break;
    }
    default: *re = pct_float8_to_float(*(const uint8_t *)p, d); break;
    }
}

static void store_extra(void *p, int d, double re, double im)
{
    switch (d) {
    case PCT_COMPLEX64: *(pct_cfloat *)p = CMPLXF((float)re, (float)im); break;
    case PCT_COMPLEX128: *(pct_cdouble *)p = CMPLX(re, im); break;
    case PCT_COMPLEX32: *(pct_chalf *)p = (pct_chalf){pct_float_to_half((float)re), pct_float_to_half((float)im)}; break;
    default: *(uint8_t *)p = pct_float_to_float8((float)re, d); break;
    }
}

void pct_load_as_complex(const void *p, int d, double *re, double *im)
{
    if (d >= PCT_COMPLEX64) load_extra(p, d, re, im);
    else { *re = pct_load_as_double(p, d); *im = 0; }
}

void pct_store_complex(void *p, int d, double re, double im)
{
    if (d >= PCT_COMPLEX64) store_extra(p, d, re, im);
    else pct_store_double(p, d, re);
}

double pct_load_as_double(const void *p, int d)
{
    switch (d) {
#define PCT_LOAD_D(E, N, T, C, S) case PCT_##E: return (double)PCT_TO_COMPUTE_##E(*(const T *)p);
        PCT_FORALL_ALL_DTYPES(PCT_LOAD_D)
#undef PCT_LOAD_D
    default: {
        double re, im;
        load_extra(p, d, &re, &im);
        return re;
    }
    }
}

int64_t pct_load_as_int64(const void *p, int d)
{
    switch (d) {
#define PCT_LOAD_I(E, N, T, C, S) case PCT_##E: return (int64_t)PCT_TO_COMPUTE_##E(*(const T *)p);
        PCT_FORALL_ALL_DTYPES(PCT_LOAD_I)
#undef PCT_LOAD_I
    default: return (int64_t)pct_load_as_double(p, d);
    }
}

void pct_store_double(void *p, int d, double v)
{
    switch (d) {
#define PCT_STORE_D(E, N, T, C, S) case PCT_##E: *(T *)p = PCT_FROM_COMPUTE_##E((C)v); break;
        PCT_FORALL_ALL_DTYPES(PCT_STORE_D)
#undef PCT_STORE_D
    default: store_extra(p, d, v, 0); break;
    }
}

void pct_store_int64(void *p, int d, int64_t v)
{
    switch (d) {
#define PCT_STORE_I(E, N, T, C, S) case PCT_##E: *(T *)p = PCT_FROM_COMPUTE_##E((C)v); break;
        PCT_FORALL_ALL_DTYPES(PCT_STORE_I)
#undef PCT_STORE_I
    default: store_extra(p, d, (double)v, 0); break;
    }
}
