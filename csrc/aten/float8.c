/* float8.c: the float8 storage formats (Note [Complex and float8 dtypes] in dtype.h): decoding to float and encoding
 * from float with torch's rules. Encoding rounds to nearest, ties to even, on the format's grid (its subnormals
 * included); what happens past the largest finite value depends on the format:
 *   e5m2        IEEE-like: overflow and inf give inf, NaN a NaN (0x7f with the sign)
 *   e4m3fn      no inf: overflow and inf saturate to +-448, NaN is 0x7f with the sign
 *   e4m3fnuz, e5m2fnuz   no inf, no negative zero: overflow, inf and NaN give the one NaN, 0x80
 *   e8m0fnu     a bare exponent (2^-127 .. 2^127, no sign): NaN and inf give 0xff */
#include "dtype.h"
#include <math.h>

typedef struct float8_format {
    int mbits, bias;
    bool ieee;  /* e5m2: the top exponent holds inf and NaN */
    bool fnuz;  /* 0x80 is the NaN */
    double max; /* the largest finite value */
} float8_format;

static const float8_format *format_of(int dtype)
{
    static const float8_format e5m2 = {2, 15, true, false, 57344.0}, e4m3fn = {3, 7, false, false, 448.0},
                               e5m2fnuz = {2, 16, false, true, 57344.0}, e4m3fnuz = {3, 8, false, true, 240.0};
    switch (dtype) {
    case PCT_FLOAT8_E5M2: return &e5m2;
    case PCT_FLOAT8_E4M3FN: return &e4m3fn;
    case PCT_FLOAT8_E5M2FNUZ: return &e5m2fnuz;
    default: return &e4m3fnuz;
    }
}

float pct_float8_to_float(uint8_t bits, int dtype)
{
    if (dtype == PCT_FLOAT8_E8M0FNU) {
        if (bits == 0xff) return NAN;
        return ldexpf(1.0f, (int)bits - 127);
    }
    const float8_format *f = format_of(dtype);
    const bool neg = bits & 0x80;
    const int exp = (bits & 0x7f) >> f->mbits, mant = bits & ((1 << f->mbits) - 1), top = 0x7f >> f->mbits;
    if (f->fnuz && bits == 0x80) return NAN;
    if (f->ieee && exp == top) return mant ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
    if (!f->ieee && !f->fnuz && exp == top && mant == (1 << f->mbits) - 1) return neg ? -NAN : NAN;
    /* a subnormal has no implicit one and the smallest normal exponent */
    const float v = exp ? ldexpf((float)(mant + (1 << f->mbits)), exp - f->bias - f->mbits)
                        : ldexpf((float)mant, 1 - f->bias - f->mbits);
    return neg ? -v : v;
}

/* e8m0fnu: the float's exponent rounded by its significand (to nearest, ties to even, where the "even" digit is the
 * float's implicit one), the sign ignored. */
static uint8_t to_e8m0(float x)
{
    const uint32_t u = pct_float_bits(x);
    uint32_t exp = (u >> 23) & 0xff;
    if (exp == 0xff) return 0xff;
    const bool guard = u & 0x400000, rest = u & 0x3fffff;
    if (guard && (rest || exp > 0)) exp++;
    return (uint8_t)exp;
}

uint8_t pct_float_to_float8(float x, int dtype)
{
    if (dtype == PCT_FLOAT8_E8M0FNU) return to_e8m0(x);
    const float8_format *f = format_of(dtype);
    const uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x)) return f->fnuz ? 0x80 : (uint8_t)(sign | 0x7f);
    double a = fabs((double)x);
    /* the grid's spacing at a: 2^(e - mbits) in a binade of exponent e, the subnormals' spacing below */
    int e;
    frexp(a, &e);
    e -= 1;
    const int emin = 1 - f->bias;
    if (e < emin) e = emin;
    const double q = ldexp(1.0, e - f->mbits);
    const double r = isinf(a) ? a : rint(a / q) * q; /* exact scaling by powers of two: rint's ties to even */
    if (r > f->max) {
        if (f->fnuz) return 0x80;
        if (f->ieee) return (uint8_t)(sign | 0x7c);
        return (uint8_t)(sign | 0x7e); /* e4m3fn saturates */
    }
    if (r == 0) return f->fnuz ? 0 : sign;
    int re;
    frexp(r, &re);
    re -= 1;
    uint32_t bits;
    if (re < emin) bits = (uint32_t)(r / ldexp(1.0, emin - f->mbits)); /* subnormal: the count of the spacing */
    else bits = ((uint32_t)(re + f->bias) << f->mbits) | ((uint32_t)(r / ldexp(1.0, re - f->mbits)) & ((1u << f->mbits) - 1));
    return (uint8_t)(sign | bits);
}
