/* pointwise_expand.h: how an ops.def PCT_UNARY / PCT_BINARY entry expands into per-dtype loops, for every device's
 * runner (cpu/pointwise.c, csrc/cuda/pointwise.cuh): which dtypes of the entry's set have a loop, which of its two
 * expressions a dtype uses, what the loop stores. Plain preprocessor, valid in C11 and CUDA C++ (Note [One math for
 * both devices] in host_device.h). */
#ifndef PCT_POINTWISE_EXPAND_H
#define PCT_POINTWISE_EXPAND_H
#include "dtype.h"

/* float expressions for floating dtypes, integer expressions for the rest */
#define PCT_PICK_BOOL(f, i) i
#define PCT_PICK_UINT8(f, i) i
#define PCT_PICK_INT8(f, i) i
#define PCT_PICK_INT16(f, i) i
#define PCT_PICK_INT32(f, i) i
#define PCT_PICK_INT64(f, i) i
#define PCT_PICK_FLOAT16(f, i) f
#define PCT_PICK_BFLOAT16(f, i) f
#define PCT_PICK_FLOAT32(f, i) f
#define PCT_PICK_FLOAT64(f, i) f
#define PCT_PICK_UINT16(f, i) i
#define PCT_PICK_UINT32(f, i) i
#define PCT_PICK_UINT64(f, i) i
#define PCT_PICK_COMPLEX64(f, i) f /* the complex loops (cpu/pointwise_complex.c) pass their own expression as f */
#define PCT_PICK_COMPLEX128(f, i) f

/* The output's storage type (comparisons and the logical ops write bool) and the stored value of a result v. */
#define PCT_OUT_T_PCT_PROMOTE_DEFAULT(T) T
#define PCT_OUT_T_PCT_PROMOTE_INT_TO_FLOAT(T) T
#define PCT_OUT_T_PCT_PROMOTE_COMPARE(T) bool
#define PCT_OUT_T_PCT_PROMOTE_BOOL_OUT(T) bool
#define PCT_STORE_PCT_PROMOTE_DEFAULT(E, v) PCT_FROM_COMPUTE_##E(v)
#define PCT_STORE_PCT_PROMOTE_INT_TO_FLOAT(E, v) PCT_FROM_COMPUTE_##E(v)
#define PCT_STORE_PCT_PROMOTE_COMPARE(E, v) ((bool)(v))
#define PCT_STORE_PCT_PROMOTE_BOOL_OUT(E, v) ((bool)(v))
/* complex loops with a real result (abs, angle): the real type of the same precision */
#define PCT_OUT_T_PCT_CPX_REAL(T) PCT_REAL_OF_##T
#define PCT_REAL_OF_pct_cfloat float
#define PCT_REAL_OF_pct_cdouble double
#define PCT_STORE_PCT_CPX_REAL(E, v) (v)

/* What a loop of dtype E stores for one element: the entry's float or integer expression over x (unary) or a, b
 * (binary) in the compute type, with ctx, alpha and OT (the output's storage type) in scope. */
#define PCT_PW_RESULT(E, fexpr, iexpr, promo) PCT_STORE_##promo(E, PCT_PICK_##E(fexpr, iexpr))

/* A Python scalar argument (alpha, value) as torch's kernels see it: converted to the tensor's
 * dtype T first (a float16/bfloat16 rounding), then to the compute type. */
#define PCT_SCALAR_AS_T(E, v) PCT_TO_COMPUTE_##E(PCT_FROM_COMPUTE_##E(v))
/* add/sub's alpha in a loop of dtype E (compute type C), from ctx */
#define PCT_PW_ALPHA(E, C, ctx) ((C)PCT_PICK_##E(PCT_SCALAR_AS_T(E, (C)(ctx)->alpha_d), (ctx)->alpha_i))

/* Which loops exist: PCT_SEL_<set>_<category>(then, else), category CBOOL, CINT, CFLT (float32/64), CRED
 * (float16/bfloat16), CUNS (uint16/32/64; not I or F: <complex.h> defines I). The set FLT32 is float32 and float64
 * only (torch has no reduced-precision kernel for most of torch.special). */
#define PCT_CAT_BOOL CBOOL
#define PCT_CAT_UINT8 CINT
#define PCT_CAT_INT8 CINT
#define PCT_CAT_INT16 CINT
#define PCT_CAT_INT32 CINT
#define PCT_CAT_INT64 CINT
#define PCT_CAT_FLOAT16 CRED
#define PCT_CAT_BFLOAT16 CRED
#define PCT_CAT_FLOAT32 CFLT
#define PCT_CAT_FLOAT64 CFLT
#define PCT_CAT_UINT16 CUNS
#define PCT_CAT_UINT32 CUNS
#define PCT_CAT_UINT64 CUNS
#define PCT_SEL_ALL_CBOOL(t, e) t
#define PCT_SEL_ALL_CINT(t, e) t
#define PCT_SEL_ALL_CFLT(t, e) t
#define PCT_SEL_NUM_CBOOL(t, e) e
#define PCT_SEL_NUM_CINT(t, e) t
#define PCT_SEL_NUM_CFLT(t, e) t
#define PCT_SEL_FLOAT_CBOOL(t, e) e
#define PCT_SEL_FLOAT_CINT(t, e) e
#define PCT_SEL_FLOAT_CFLT(t, e) t
#define PCT_SEL_INT_CBOOL(t, e) e
#define PCT_SEL_INT_CINT(t, e) t
#define PCT_SEL_INT_CFLT(t, e) e
#define PCT_SEL_INTB_CBOOL(t, e) t
#define PCT_SEL_INTB_CINT(t, e) t
#define PCT_SEL_INTB_CFLT(t, e) e
#define PCT_SEL_ALL_CUNS(t, e) e
#define PCT_SEL_NUM_CUNS(t, e) e
#define PCT_SEL_FLOAT_CUNS(t, e) e
#define PCT_SEL_INT_CUNS(t, e) e
#define PCT_SEL_INTB_CUNS(t, e) e
/* the sets with the unsigned dtypes */
#define PCT_SEL_ALLU_CBOOL(t, e) t
#define PCT_SEL_ALLU_CINT(t, e) t
#define PCT_SEL_ALLU_CFLT(t, e) t
#define PCT_SEL_ALLU_CUNS(t, e) t
#define PCT_SEL_NUMU_CBOOL(t, e) e
#define PCT_SEL_NUMU_CINT(t, e) t
#define PCT_SEL_NUMU_CFLT(t, e) t
#define PCT_SEL_NUMU_CUNS(t, e) t
#define PCT_SEL_INTBU_CBOOL(t, e) t
#define PCT_SEL_INTBU_CINT(t, e) t
#define PCT_SEL_INTBU_CFLT(t, e) e
#define PCT_SEL_INTBU_CUNS(t, e) t
/* the reduced floats are in every set that has the other floats, except FLT32 */
#define PCT_SEL_ALL_CRED(t, e) t
#define PCT_SEL_NUM_CRED(t, e) t
#define PCT_SEL_FLOAT_CRED(t, e) t
#define PCT_SEL_INT_CRED(t, e) e
#define PCT_SEL_INTB_CRED(t, e) e
#define PCT_SEL_ALLU_CRED(t, e) t
#define PCT_SEL_NUMU_CRED(t, e) t
#define PCT_SEL_INTBU_CRED(t, e) e
#define PCT_SEL_FLT32_CBOOL(t, e) e
#define PCT_SEL_FLT32_CINT(t, e) e
#define PCT_SEL_FLT32_CFLT(t, e) t
#define PCT_SEL_FLT32_CRED(t, e) e
#define PCT_SEL_FLT32_CUNS(t, e) e
#define PCT_SEL_CAT(set, cat, t, e) PCT_SEL_##set##_##cat(t, e)
#define PCT_SEL_CAT2(set, cat, t, e) PCT_SEL_CAT(set, cat, t, e)
#define PCT_SEL(set, E, t, e) PCT_SEL_CAT2(set, PCT_CAT_##E, t, e)

/* PCT_PW_LOOPS(LOOP, id, fexpr, iexpr, dtypes, promo): LOOP(E, N, T, C, S, id, fexpr, iexpr, promo) for each dtype of
 * the entry's set `dtypes` (the dtype list's X arguments, then the entry's). The loop macro and the set ride along
 * in the paired list's last slot as a triple. */
#define PCT_PW_LOOPS(LOOP, id, fexpr, iexpr, dtypes, promo) \
    PCT_FORALL_ALL_DTYPES_PAIRED(PCT_PW_LOOP_IN_SET, id, fexpr, iexpr, (LOOP, dtypes, promo))
#define PCT_PW_LOOP_IN_SET(E, N, T, C, S, id, fexpr, iexpr, lsp) \
    PCT_PW_LOOP_IN_SET_(E, N, T, C, S, id, fexpr, iexpr, PCT_PW_ARG1 lsp, PCT_PW_ARG2 lsp, PCT_PW_ARG3 lsp)
#define PCT_PW_LOOP_IN_SET_(E, N, T, C, S, id, fexpr, iexpr, LOOP, set, promo) \
    PCT_SEL(set, E, LOOP, PCT_NO_LOOP)(E, N, T, C, S, id, fexpr, iexpr, promo)
#define PCT_NO_LOOP(...)
#define PCT_PW_ARG1_(a, b, c) a
#define PCT_PW_ARG2_(a, b, c) b
#define PCT_PW_ARG3_(a, b, c) c
#define PCT_PW_ARG1 PCT_PW_ARG1_
#define PCT_PW_ARG2 PCT_PW_ARG2_
#define PCT_PW_ARG3 PCT_PW_ARG3_

#endif
