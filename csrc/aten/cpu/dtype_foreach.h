/* dtype_foreach.h: the per-dtype template idiom (NumPy's .c.src loops) beside dtype.h's
 * X-macros. Includes the template named by PCT_FOREACH_TEMPLATE (a quoted file name) once per
 * dtype of PCT_FORALL_DTYPES, in that order, then, when PCT_FOREACH_UNSIGNED is defined, once
 * per dtype of PCT_FORALL_UNSIGNED_DTYPES_PAIRED. Each time it defines
 *   PCT_TPL_E  the enum suffix (FLOAT32: PCT_FLOAT32, PCT_TO_COMPUTE_FLOAT32, ...)
 *   PCT_TPL_N  the name (Float: functions named <base>_Float)
 *   PCT_TPL_T  the storage type, PCT_TPL_C the compute type (float for float16 / bfloat16)
 *   PCT_TPL_FLOATING  1 for the floating dtypes, else 0 (for #if in a template)
 * and undefines them after the template; at the end it undefines PCT_FOREACH_TEMPLATE and
 * PCT_FOREACH_UNSIGNED. The preprocessor cannot #include from inside an X-macro, so the list
 * repeats dtype.h's: the assertion stops the build when a dtype is added there and not here.
 * No include guard: by design. */
_Static_assert(PCT_UINT64 + 1 == 13, "dtype_foreach.h lists the 13 dtypes of PCT_FORALL_ALL_DTYPES: add the new one");

#define PCT_TPL_E BOOL
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Bool
#define PCT_TPL_T uint8_t
#define PCT_TPL_C bool
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E UINT8
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Byte
#define PCT_TPL_T uint8_t
#define PCT_TPL_C uint8_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E INT8
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Char
#define PCT_TPL_T int8_t
#define PCT_TPL_C int8_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E INT16
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Short
#define PCT_TPL_T int16_t
#define PCT_TPL_C int16_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E INT32
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Int
#define PCT_TPL_T int32_t
#define PCT_TPL_C int32_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E INT64
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N Long
#define PCT_TPL_T int64_t
#define PCT_TPL_C int64_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E FLOAT16
#define PCT_TPL_FLOATING 1
#define PCT_TPL_N Half
#define PCT_TPL_T pct_half
#define PCT_TPL_C float
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E BFLOAT16
#define PCT_TPL_FLOATING 1
#define PCT_TPL_N BFloat16
#define PCT_TPL_T pct_bfloat16
#define PCT_TPL_C float
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E FLOAT32
#define PCT_TPL_FLOATING 1
#define PCT_TPL_N Float
#define PCT_TPL_T float
#define PCT_TPL_C float
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E FLOAT64
#define PCT_TPL_FLOATING 1
#define PCT_TPL_N Double
#define PCT_TPL_T double
#define PCT_TPL_C double
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING

#ifdef PCT_FOREACH_UNSIGNED
#define PCT_TPL_E UINT16
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N UInt16
#define PCT_TPL_T uint16_t
#define PCT_TPL_C uint16_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E UINT32
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N UInt32
#define PCT_TPL_T uint32_t
#define PCT_TPL_C uint32_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#define PCT_TPL_E UINT64
#define PCT_TPL_FLOATING 0
#define PCT_TPL_N UInt64
#define PCT_TPL_T uint64_t
#define PCT_TPL_C uint64_t
#include PCT_FOREACH_TEMPLATE
#undef PCT_TPL_E
#undef PCT_TPL_N
#undef PCT_TPL_T
#undef PCT_TPL_C
#undef PCT_TPL_FLOATING
#endif

#undef PCT_FOREACH_TEMPLATE
#undef PCT_FOREACH_UNSIGNED
