/* dtype_foreach_complex.h: dtype_foreach.h's idiom for complex64 and complex128 (Note [Complex and float8 dtypes] in
 * ../dtype.h): includes PCT_FOREACH_TEMPLATE once per complex dtype with PCT_TPL_E/N/T/C set (the compute type is
 * the storage type, C11 _Complex) and PCT_TPL_FLOATING 1, then undefines them and PCT_FOREACH_TEMPLATE.
 * C only (no .cu file computes on complex). No include guard: by design. */
#define PCT_TPL_FLOATING 1
#define PCT_TPL_E COMPLEX64
#define PCT_TPL_N ComplexFloat
#define PCT_TPL_T pct_cfloat
#define PCT_TPL_C pct_cfloat
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#define PCT_TPL_E COMPLEX128
#define PCT_TPL_N ComplexDouble
#define PCT_TPL_T pct_cdouble
#define PCT_TPL_C pct_cdouble
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#undef PCT_FOREACH_TEMPLATE
