/* dtype.h: the closed list of dtypes, their C types, and type promotion.
 *
 * PCT_FORALL_DTYPES(X) expands X(ENUM, Name, ctype, ctype_compute, "torch_name")
 * for every dtype. `ctype` is the storage type; `ctype_compute` is what kernels
 * compute in (float16 and bfloat16 compute in float, per DESIGN.md). The list
 * expands in .c and .cu files alike.
 */
#ifndef PCT_DTYPE_H
#define PCT_DTYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "host_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t pct_half;     /* IEEE binary16 bit pattern */
typedef uint16_t pct_bfloat16; /* upper 16 bits of a binary32 */

#define PCT_FORALL_DTYPES(X)                                   \
    X(BOOL, Bool, uint8_t, bool, "bool")                       \
    X(UINT8, Byte, uint8_t, uint8_t, "uint8")                  \
    X(INT8, Char, int8_t, int8_t, "int8")                      \
    X(INT16, Short, int16_t, int16_t, "int16")                 \
    X(INT32, Int, int32_t, int32_t, "int32")                   \
    X(INT64, Long, int64_t, int64_t, "int64")                  \
    X(FLOAT16, Half, pct_half, float, "float16")               \
    X(BFLOAT16, BFloat16, pct_bfloat16, float, "bfloat16")     \
    X(FLOAT32, Float, float, float, "float32")                 \
    X(FLOAT64, Double, double, double, "float64")

/* The "barebones" unsigned dtypes torch has with limited support (uint16, uint32, uint64): after the
 * dtypes above in the enum, and not in PCT_FORALL_DTYPES, so a kernel that expands loops over
 * PCT_FORALL_DTYPES has no loop for them (its table holds NULL there). Code that supports them (copies,
 * conversions, sort, the few pointwise ops torch has) expands PCT_FORALL_ALL_DTYPES, torch's
 * AT_BAREBONES_UNSIGNED_TYPES. Note [Barebones unsigned dtypes] in csrc/aten/dispatch.c says how an op
 * that does not list them refuses them. They compute in their own type. */
#define PCT_FORALL_UNSIGNED_DTYPES(X)                          \
    X(UINT16, UInt16, uint16_t, uint16_t, "uint16")            \
    X(UINT32, UInt32, uint32_t, uint32_t, "uint32")            \
    X(UINT64, UInt64, uint64_t, uint64_t, "uint64")

#define PCT_FORALL_ALL_DTYPES(X) PCT_FORALL_DTYPES(X) PCT_FORALL_UNSIGNED_DTYPES(X)

/* Note [Complex and float8 dtypes]: torch's complex dtypes and its float8 storage formats follow the unsigned ones in
 * the enum and are in neither list above, so no kernel that expands those lists has a loop for them (CUDA's included:
 * nvcc never sees their C types). The dispatcher refuses them as it refuses the unsigned ones, except for the ops
 * that opt in (ops_complex.def); what runs on them (copies and conversions, fills, printing, the complex pointwise
 * loops, sums, BLAS and LAPACK) is written against these lists. complex32 and the float8 dtypes are storage formats:
 * creation, copies and conversions, views and joins, no arithmetic (as in torch on the CPU).
 *   complex: X(ENUM, Name, ctype, ctype_compute, "torch_name"), computing in C11's _Complex types (<complex.h>). */
#define PCT_FORALL_COMPLEX_DTYPES(X)                                     \
    X(COMPLEX64, ComplexFloat, pct_cfloat, pct_cfloat, "complex64")      \
    X(COMPLEX128, ComplexDouble, pct_cdouble, pct_cdouble, "complex128")
/* storage-only: a half-precision complex (two float16) and the five float8 formats (one byte, computed in float) */
#define PCT_FORALL_STORAGE_DTYPES(X)                                     \
    X(COMPLEX32, ComplexHalf, pct_chalf, pct_cfloat, "complex32")        \
    X(FLOAT8_E5M2, Float8_e5m2, uint8_t, float, "float8_e5m2")           \
    X(FLOAT8_E4M3FN, Float8_e4m3fn, uint8_t, float, "float8_e4m3fn")     \
    X(FLOAT8_E5M2FNUZ, Float8_e5m2fnuz, uint8_t, float, "float8_e5m2fnuz") \
    X(FLOAT8_E4M3FNUZ, Float8_e4m3fnuz, uint8_t, float, "float8_e4m3fnuz") \
    X(FLOAT8_E8M0FNU, Float8_e8m0fnu, uint8_t, float, "float8_e8m0fnu")
/* Every dtype, in enum order. */
#define PCT_FORALL_EVERY_DTYPE(X) PCT_FORALL_ALL_DTYPES(X) PCT_FORALL_COMPLEX_DTYPES(X) PCT_FORALL_STORAGE_DTYPES(X)

/* The C types of the complex dtypes: C only (CUDA C++ has no _Complex; no .cu file expands the lists above). */
typedef struct pct_chalf { uint16_t re, im; } pct_chalf;
#ifndef __cplusplus
typedef float _Complex pct_cfloat;
typedef double _Complex pct_cdouble;
#endif

/* The same list, passing a fixed first dtype along, so loops over pairs of dtypes can
 * nest: X(E, N, T, C, S, OE, ON, OT, OC). */
#define PCT_FORALL_DTYPES_PAIRED(X, OE, ON, OT, OC)                 \
    X(BOOL, Bool, uint8_t, bool, "bool", OE, ON, OT, OC)             \
    X(UINT8, Byte, uint8_t, uint8_t, "uint8", OE, ON, OT, OC)        \
    X(INT8, Char, int8_t, int8_t, "int8", OE, ON, OT, OC)            \
    X(INT16, Short, int16_t, int16_t, "int16", OE, ON, OT, OC)       \
    X(INT32, Int, int32_t, int32_t, "int32", OE, ON, OT, OC)         \
    X(INT64, Long, int64_t, int64_t, "int64", OE, ON, OT, OC)        \
    X(FLOAT16, Half, pct_half, float, "float16", OE, ON, OT, OC)     \
    X(BFLOAT16, BFloat16, pct_bfloat16, float, "bfloat16", OE, ON, OT, OC) \
    X(FLOAT32, Float, float, float, "float32", OE, ON, OT, OC)       \
    X(FLOAT64, Double, double, double, "float64", OE, ON, OT, OC)

#define PCT_FORALL_UNSIGNED_DTYPES_PAIRED(X, OE, ON, OT, OC)               \
    X(UINT16, UInt16, uint16_t, uint16_t, "uint16", OE, ON, OT, OC)          \
    X(UINT32, UInt32, uint32_t, uint32_t, "uint32", OE, ON, OT, OC)          \
    X(UINT64, UInt64, uint64_t, uint64_t, "uint64", OE, ON, OT, OC)
#define PCT_FORALL_ALL_DTYPES_PAIRED(X, OE, ON, OT, OC) \
    PCT_FORALL_DTYPES_PAIRED(X, OE, ON, OT, OC) PCT_FORALL_UNSIGNED_DTYPES_PAIRED(X, OE, ON, OT, OC)

typedef enum pct_dtype {
#define PCT_DTYPE_ENUM(E, N, T, C, S) PCT_##E,
    PCT_FORALL_EVERY_DTYPE(PCT_DTYPE_ENUM)
#undef PCT_DTYPE_ENUM
    PCT_NUM_DTYPES,
    PCT_DTYPE_UNDEFINED = 255
} pct_dtype;

/* Subsets used by kernels: X(ENUM, Name, ctype, ctype_compute, name). */
#define PCT_FORALL_FLOAT_DTYPES(X)                             \
    X(FLOAT16, Half, pct_half, float, "float16")               \
    X(BFLOAT16, BFloat16, pct_bfloat16, float, "bfloat16")     \
    X(FLOAT32, Float, float, float, "float32")                 \
    X(FLOAT64, Double, double, double, "float64")

#define PCT_FORALL_INT_DTYPES(X)                               \
    X(UINT8, Byte, uint8_t, uint8_t, "uint8")                  \
    X(INT8, Char, int8_t, int8_t, "int8")                      \
    X(INT16, Short, int16_t, int16_t, "int16")                 \
    X(INT32, Int, int32_t, int32_t, "int32")                   \
    X(INT64, Long, int64_t, int64_t, "int64")

/* Note [The dtype table]: everything known of a dtype is written once, in two lists: the dtype list above (the enum,
 * the C storage and compute types, torch's name, the ScalarType name) and PCT_FORALL_DTYPE_PROPERTIES below (its
 * kind, its range, the C++ type names torch prints). dtype.c builds from them the columns callers index
 * (pct_dtype_itemsize, pct_dtype_name, pct_dtype_cpp_name, pct_dtype_cpp_type_name) and the rows of pct_dtype_infos
 * that the predicates below and the kernels' range checks read, so no file keeps a switch of its own over dtypes'
 * properties. A kernel's per-dtype *code* (loops, identities such as -inf for max) is not a property: it stays with
 * the kernel. */
typedef enum pct_dtype_kind {
    PCT_KIND_BOOL,
    PCT_KIND_UNSIGNED,   /* uint8 and the barebones unsigned dtypes */
    PCT_KIND_SIGNED,     /* int8 ... int64 */
    PCT_KIND_FLOAT,      /* the float8 formats too (torch's is_floating_point) */
    PCT_KIND_COMPLEX,
} pct_dtype_kind;

/* X(ENUM, kind, lowest, highest, int_highest, mantissa digits, TypeMeta name, overflow name):
 * lowest / highest  the finite range as doubles (int64's and uint64's ends rounded)
 * int_highest       the largest value as an int64 (uint64: saturated at INT64_MAX; floats: INT64_MAX); the
 *                   int64 range starts at lowest for the integral dtypes and at INT64_MIN for the floating ones
 * digits            floating dtypes: the significand's bits, the implicit one included (bfloat16: 8)
 * TypeMeta name     the C++ type torch prints for a tensor's TypeMeta ("long int", "c10::Half")
 * overflow name     the C++ type torch names in "value cannot be converted to type %s without overflow" */
#define PCT_FORALL_DTYPE_PROPERTIES(X) \
    X(BOOL, PCT_KIND_BOOL, 0.0, 1.0, 1, 0, "bool", "bool") \
    X(UINT8, PCT_KIND_UNSIGNED, 0.0, 255.0, UINT8_MAX, 0, "unsigned char", "uint8_t") \
    X(INT8, PCT_KIND_SIGNED, -128.0, 127.0, INT8_MAX, 0, "signed char", "int8_t") \
    X(INT16, PCT_KIND_SIGNED, -32768.0, 32767.0, INT16_MAX, 0, "short int", "int16_t") \
    X(INT32, PCT_KIND_SIGNED, -2147483648.0, 2147483647.0, INT32_MAX, 0, "int", "int") \
    X(INT64, PCT_KIND_SIGNED, -9223372036854775808.0, 9223372036854775807.0, INT64_MAX, 0, "long int", "int64_t") \
    X(FLOAT16, PCT_KIND_FLOAT, -65504.0, 65504.0, INT64_MAX, 11, "c10::Half", "c10::Half") \
    X(BFLOAT16, PCT_KIND_FLOAT, -3.3895313892515355e+38, 3.3895313892515355e+38, INT64_MAX, 8, "c10::BFloat16", "c10::BFloat16") \
    X(FLOAT32, PCT_KIND_FLOAT, -3.4028234663852886e+38, 3.4028234663852886e+38, INT64_MAX, 24, "float", "float") \
    X(FLOAT64, PCT_KIND_FLOAT, -1.7976931348623157e+308, 1.7976931348623157e+308, INT64_MAX, 53, "double", "double") \
    X(UINT16, PCT_KIND_UNSIGNED, 0.0, 65535.0, UINT16_MAX, 0, "short unsigned int", "uint16_t") \
    X(UINT32, PCT_KIND_UNSIGNED, 0.0, 4294967295.0, UINT32_MAX, 0, "unsigned int", "uint32_t") \
    X(UINT64, PCT_KIND_UNSIGNED, 0.0, 18446744073709551615.0, INT64_MAX, 0, "long unsigned int", "uint64_t") \
    X(COMPLEX64, PCT_KIND_COMPLEX, -3.4028234663852886e+38, 3.4028234663852886e+38, INT64_MAX, 24, "c10::complex<float>", "c10::complex<float>") \
    X(COMPLEX128, PCT_KIND_COMPLEX, -1.7976931348623157e+308, 1.7976931348623157e+308, INT64_MAX, 53, "c10::complex<double>", "c10::complex<double>") \
    X(COMPLEX32, PCT_KIND_COMPLEX, -65504.0, 65504.0, INT64_MAX, 11, "c10::complex<c10::Half>", "c10::complex<c10::Half>") \
    X(FLOAT8_E5M2, PCT_KIND_FLOAT, -57344.0, 57344.0, INT64_MAX, 3, "c10::Float8_e5m2", "c10::Float8_e5m2") \
    X(FLOAT8_E4M3FN, PCT_KIND_FLOAT, -448.0, 448.0, INT64_MAX, 4, "c10::Float8_e4m3fn", "c10::Float8_e4m3fn") \
    X(FLOAT8_E5M2FNUZ, PCT_KIND_FLOAT, -57344.0, 57344.0, INT64_MAX, 3, "c10::Float8_e5m2fnuz", "c10::Float8_e5m2fnuz") \
    X(FLOAT8_E4M3FNUZ, PCT_KIND_FLOAT, -240.0, 240.0, INT64_MAX, 4, "c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz") \
    X(FLOAT8_E8M0FNU, PCT_KIND_FLOAT, 5.877471754111438e-39, 1.7014118346046923e+38, INT64_MAX, 1, "c10::Float8_e8m0fnu", "c10::Float8_e8m0fnu")

/* One row of Note [The dtype table]. */
typedef struct pct_dtype_info {
    uint8_t kind;                  /* pct_dtype_kind */
    bool reduced_float;            /* float16, bfloat16: stored in 16 bits, computed in float */
    bool barebones;                /* uint16, uint32, uint64 (PCT_FORALL_UNSIGNED_DTYPES) */
    bool storage_only;             /* complex32 and the float8 dtypes (Note [Complex and float8 dtypes]) */
    bool float8;                   /* the float8 formats */
    int digits;
    double lowest, highest;
    int64_t int_lowest, int_highest;
    const char *overflow_name;
} pct_dtype_info;
extern const pct_dtype_info pct_dtype_infos[PCT_NUM_DTYPES];

/* Columns of the same table, indexed by dtype. */
extern const int pct_dtype_itemsize[PCT_NUM_DTYPES];
extern const char *const pct_dtype_name[PCT_NUM_DTYPES];
/* torch's C++ ScalarType names (Float, Long, BFloat16...) used in its error messages */
extern const char *const pct_dtype_cpp_name[PCT_NUM_DTYPES];
/* C++ type names torch prints for a tensor's TypeMeta ("float", "long int", "c10::Half") */
extern const char *const pct_dtype_cpp_type_name[PCT_NUM_DTYPES];

/* The predicates take any int (a result-type state may hold PCT_DTYPE_UNDEFINED or PCT_UINT64_SCALAR): false
 * outside the table. */
static inline bool pct_dtype_valid(int d) { return (unsigned)d < (unsigned)PCT_NUM_DTYPES; }
static inline bool pct_dtype_is_floating(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].kind == PCT_KIND_FLOAT; }
static inline bool pct_dtype_is_barebones(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].barebones; }
static inline bool pct_dtype_is_complex(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].kind == PCT_KIND_COMPLEX; }
static inline bool pct_dtype_is_float8(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].float8; }
/* torch's isDifferentiableType: floating and complex dtypes may require gradients */
static inline bool pct_dtype_is_differentiable(int d) { return pct_dtype_is_floating(d) || pct_dtype_is_complex(d); }
static inline bool pct_dtype_is_storage_only(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].storage_only; }
/* Whether kernels of the fully supported lists lack loops for d: the dispatcher's refusal applies (dispatch.c) */
static inline bool pct_dtype_is_limited(int d) { return d >= PCT_UINT16 && pct_dtype_valid(d); }
/* complex <-> real of the same precision (torch's toRealValueType / toComplexType); d itself where there is none */
int pct_dtype_to_real(int d);
int pct_dtype_to_complex(int d);
static inline bool pct_dtype_is_integral(int d, bool include_bool)
{
    if (!pct_dtype_valid(d)) return false;
    const int k = pct_dtype_infos[d].kind;
    return k == PCT_KIND_UNSIGNED || k == PCT_KIND_SIGNED || (include_bool && k == PCT_KIND_BOOL);
}
/* Signed: the signed integers and the floats. */
static inline bool pct_dtype_is_signed(int d)
{
    if (!pct_dtype_valid(d) || d == PCT_FLOAT8_E8M0FNU) return false; /* e8m0 has no sign bit */
    const int k = pct_dtype_infos[d].kind;
    return k == PCT_KIND_SIGNED || k == PCT_KIND_FLOAT || k == PCT_KIND_COMPLEX;
}
static inline bool pct_dtype_is_reduced_float(int d) { return pct_dtype_valid(d) && pct_dtype_infos[d].reduced_float; }

/* torch.promote_types for two dtypes; -1 where torch refuses (uint16/32/64 with any other non-float dtype:
 * pct_promote_types_or_raise in iter.h raises torch's error). */
int pct_promote_types(int a, int b);
/* torch.can_cast(from, to): category may not go "down" (float->int, int->bool). */
bool pct_can_cast(int from, int to);

/* Accumulates torch's result_type over operands of three priority tiers:
 * tensors with dim > 0, 0-dim tensors, wrapped Python numbers. */
typedef struct pct_result_type_state {
    int dim_result, zero_result, wrapped_result; /* PCT_DTYPE_UNDEFINED when unset */
    int refused_a, refused_b; /* a promotion with a uint64 number torch refuses (both 0: none) */
} pct_result_type_state;
/* The dtype of a Python int in [2^63, 2^64) in pct_result_type_update (Note [uint64 scalars] in op.h). */
#define PCT_UINT64_SCALAR PCT_NUM_DTYPES
#define PCT_RESULT_TYPE_STATE_INIT {PCT_DTYPE_UNDEFINED, PCT_DTYPE_UNDEFINED, PCT_DTYPE_UNDEFINED, 0, 0}
/* tier: 0 = dim > 0 tensor, 1 = 0-dim tensor, 2 = wrapped number */
void pct_result_type_update(pct_result_type_state *s, int dtype, int tier);
/* The result dtype, or -1 where torch refuses to promote a uint64 number (with bools, or with another int number):
 * s->refused_a/b name the pair; pct_result_type_done (iter.h) raises torch's error for it. */
int pct_result_type_finish(pct_result_type_state *s);

/* The process-wide default floating dtype (torch.get_default_dtype). */
extern int pct_default_dtype;

/* ---- float16 / bfloat16 conversions (round to nearest even), on the CPU and on the device (Note [One math for both
 * devices] in host_device.h) ---- */
static inline PCT_HOST_DEVICE uint32_t pct_float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline PCT_HOST_DEVICE float pct_bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Note [Reduced floats on the device]: a GPU converts between float and float16 (and, from sm_80, bfloat16) in one
 * instruction, rounding to nearest even as the code below does, so device code takes the instruction; the results
 * differ only in a NaN's bits (the device gives its canonical NaN, as torch's CUDA kernels do). */
#ifdef __CUDA_ARCH__
#define PCT_DEVICE_CVT(name, To, From, instr, to_reg, from_reg) \
    static inline __device__ To name(From x) { To y; asm(instr " %0, %1;" : to_reg(y) : from_reg(x)); return y; }
PCT_DEVICE_CVT(pct_device_half_to_float, float, pct_half, "cvt.f32.f16", "=f", "h")
PCT_DEVICE_CVT(pct_device_float_to_half, pct_half, float, "cvt.rn.f16.f32", "=h", "f")
#if __CUDA_ARCH__ >= 800
PCT_DEVICE_CVT(pct_device_float_to_bf16, pct_bfloat16, float, "cvt.rn.bf16.f32", "=h", "f")
#endif
#endif
static inline PCT_HOST_DEVICE float pct_bf16_to_float(pct_bfloat16 h) { return pct_bits_float((uint32_t)h << 16); }
static inline PCT_HOST_DEVICE pct_bfloat16 pct_float_to_bf16(float f)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return pct_device_float_to_bf16(f);
#else
    uint32_t u = pct_float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (pct_bfloat16)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (pct_bfloat16)(u >> 16);
#endif
}

/* The float16 conversions are branch-free, their cases picked by masks, so that loops over float16 vectorize (with
 * branches, float16 sums and adds took 20x torch's time). Same results as the case-by-case conversion for every one of
 * the 2^16 halves and 2^32 floats (NaN payloads aside: a NaN stays a NaN).
 * Half to float: normal numbers, infinities and NaNs get their exponent rebiased by 224 and are scaled by 2^-112 (a
 * normal float product, also under flush-to-zero); subnormals are their 10 bits as the mantissa of a float just above
 * 0.5, less 0.5 (exact). */
static inline PCT_HOST_DEVICE float pct_half_to_float(pct_half h)
{
#ifdef __CUDA_ARCH__
    return pct_device_half_to_float(h);
#else
    const uint32_t w = (uint32_t)h << 16, sign = w & 0x80000000u, magnitude = w << 1; /* exponent at the top */
    const uint32_t normal = pct_float_bits(pct_bits_float((magnitude >> 4) + (224u << 23)) * 0x1p-112f);
    const uint32_t subnormal = pct_float_bits(pct_bits_float((magnitude >> 17) | 0x3f000000u) - 0.5f);
    const uint32_t is_subnormal = (uint32_t) - (int32_t)((h & 0x7c00u) == 0);
    return pct_bits_float(sign | (subnormal & is_subnormal) | (normal & ~is_subnormal));
#endif
}

/* Float to half, rounding to nearest even: normal results rebias the exponent and round on the 13 dropped bits;
 * subnormal results (|f| < 2^-14) let the FPU round, adding 0.5; then overflow to infinity and NaN (quiet). */
static inline PCT_HOST_DEVICE pct_half pct_float_to_half(float f)
{
#ifdef __CUDA_ARCH__
    return pct_device_float_to_half(f);
#else
    const uint32_t u = pct_float_bits(f), sign = (u >> 16) & 0x8000u, magnitude = u & 0x7fffffffu;
    const int32_t m = (int32_t)magnitude; /* sign cleared: signed compares, which vectorize */
    const uint32_t normal = (magnitude + 0xc8000fffu + ((magnitude >> 13) & 1u)) >> 13;
    const uint32_t subnormal = pct_float_bits(pct_bits_float(magnitude) + 0.5f) - 0x3f000000u;
    const uint32_t is_subnormal = (uint32_t) - (int32_t)(m < 0x38800000), is_inf = (uint32_t) - (int32_t)(m >= 0x477ff000),
                   is_nan = (uint32_t) - (int32_t)(m > 0x7f800000);
    uint32_t r = (subnormal & is_subnormal) | (normal & ~is_subnormal);
    r = (r & ~is_inf) | (0x7c00u & is_inf);
    r = (r & ~is_nan) | (0x7e00u & is_nan);
    return (pct_half)(sign | r);
#endif
}


/* Conversions between a dtype's storage type and its compute type. */
/* bool storage is read as bytes: any nonzero byte (a view of other data) is true, never UB */
#define PCT_TO_COMPUTE_BOOL(v) ((v) != 0)
#define PCT_TO_COMPUTE_UINT8(v) (v)
#define PCT_TO_COMPUTE_INT8(v) (v)
#define PCT_TO_COMPUTE_INT16(v) (v)
#define PCT_TO_COMPUTE_INT32(v) (v)
#define PCT_TO_COMPUTE_INT64(v) (v)
#define PCT_TO_COMPUTE_FLOAT16(v) pct_half_to_float(v)
#define PCT_TO_COMPUTE_BFLOAT16(v) pct_bf16_to_float(v)
#define PCT_TO_COMPUTE_FLOAT32(v) (v)
#define PCT_TO_COMPUTE_FLOAT64(v) (v)
#define PCT_TO_COMPUTE_UINT16(v) (v)
#define PCT_TO_COMPUTE_UINT32(v) (v)
#define PCT_TO_COMPUTE_UINT64(v) (v)
#define PCT_TO_COMPUTE_COMPLEX64(v) (v)
#define PCT_TO_COMPUTE_COMPLEX128(v) (v)
#define PCT_FROM_COMPUTE_BOOL(v) ((v) != 0)
#define PCT_FROM_COMPUTE_UINT8(v) ((uint8_t)(int64_t)(v))
#define PCT_FROM_COMPUTE_INT8(v) ((int8_t)(int64_t)(v))
#define PCT_FROM_COMPUTE_INT16(v) ((int16_t)(int64_t)(v))
#define PCT_FROM_COMPUTE_INT32(v) ((int32_t)(int64_t)(v))
#define PCT_FROM_COMPUTE_INT64(v) ((int64_t)(v))
#define PCT_FROM_COMPUTE_FLOAT16(v) pct_float_to_half((float)(v))
#define PCT_FROM_COMPUTE_BFLOAT16(v) pct_float_to_bf16((float)(v))
#define PCT_FROM_COMPUTE_FLOAT32(v) ((float)(v))
#define PCT_FROM_COMPUTE_FLOAT64(v) ((double)(v))
#define PCT_FROM_COMPUTE_UINT16(v) ((uint16_t)(v))
#define PCT_FROM_COMPUTE_UINT32(v) ((uint32_t)(v))
#define PCT_FROM_COMPUTE_UINT64(v) ((uint64_t)(v))
#define PCT_FROM_COMPUTE_COMPLEX64(v) ((pct_cfloat)(v))
#define PCT_FROM_COMPUTE_COMPLEX128(v) ((pct_cdouble)(v))
/* Element v of dtype SE (storage type) as dtype DE (storage type; DC its compute type), as torch's copy_ converts:
 * through the compute types (float16/bfloat16 in float), a float truncated toward zero into an integer type, anything
 * nonzero (NaN too) true. The copy loops of every device (cpu/copy.c, csrc/cuda/copy.cu) convert with it. */
#define PCT_CONVERT(DE, DC, SE, v) PCT_FROM_COMPUTE_##DE((DC)PCT_TO_COMPUTE_##SE(v))

/* Read element p (of dtype d) as double / int64, write a double into p. For scalars. */
double pct_load_as_double(const void *p, int d);
int64_t pct_load_as_int64(const void *p, int d);
void pct_store_double(void *p, int d, double v);
void pct_store_int64(void *p, int d, int64_t v);
/* Read element p (any dtype) as a complex pair; write one (a real dtype takes the real part, as torch's copy does). */
void pct_load_as_complex(const void *p, int d, double *re, double *im);
void pct_store_complex(void *p, int d, double re, double im);

/* The float8 formats (float8.c): bits <-> float, torch's rounding (to nearest even), saturation and NaN rules. */
float pct_float8_to_float(uint8_t bits, int dtype);
uint8_t pct_float_to_float8(float f, int dtype);

#ifdef __cplusplus
}
#endif

#endif
