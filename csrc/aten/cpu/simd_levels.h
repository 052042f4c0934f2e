/* simd_levels.h: the one instruction-set policy of the CPU kernels.
 *
 * Vector-extension kernels: PCT_SIMD_LEVELS(IMPL) expands IMPL(sfx, attributes, float lanes)
 * for the SSE2 baseline (4 lanes) and, on x86-64 GCC builds, AVX2 + FMA (8) and AVX-512 (16,
 * unless PCT_NO_AVX512); PCT_SIMD_X86 / PCT_SIMD_AVX512 say which exist, and
 * PCT_SIMD_ATTR_BASE / _AVX2 / _AVX512 are the levels' attributes for a file that
 * instantiates its kernels per level itself (a template header included per level:
 * attention_rows.c; or other types than float lanes: reduce_vec.c).
 * Every level compiles with FMA contraction, which ISO C mode (-std=c11) otherwise turns off.
 * Pick one at run time with __builtin_cpu_supports (never -march=native).
 *
 * Note [One clone set]
 * Loops written in plain C rather than vector extensions get their instruction sets from
 * GCC's target_clones instead, and the loader's ifunc picks one at load time. Every kernel
 * file names one of these policies directly (no file has an alias of its own):
 *   PCT_HOT            AVX-512, AVX2 and the baseline: the default for hot loops (reductions,
 *                      softmax, norms, cross entropy, im2col and the convolutions).
 *   PCT_HOT_AVX2       AVX2 and the baseline only: spatial.h's row loops (pooling, upsampling,
 *                      the gather rows of spatial.c). On Zen 4 the AVX-512 clone of those short
 *                      rows measured slower than the AVX2 one (1.6x on the 7 x 7 window sums).
 *   PCT_HOT_X86_64_V3  x86-64-v3 and the baseline: the elementwise loops of the op table
 *                      (Note [Loop ISA clones]).
 *   PCT_HOT_X86_64_V4  x86-64-v4 (AVX-512 F/BW/DQ/VL) as well: the table's bfloat16 and float16
 *                      loops, which are bound by their conversions' integer work, not by memory
 *                      (pointwise_loops.h's PCT_PW_CLONES_<dtype>).
 * PCT_HOT and PCT_HOT_AVX2 are empty under clang (other clone semantics), off Linux x86-64
 * (no ifunc) and with PCT_NO_TARGET_CLONES; PCT_NO_AVX512 (valgrind builds) drops PCT_HOT's
 * AVX-512 clone.
 *
 * Note [Loop ISA clones]: each elementwise loop is compiled for x86-64-v3 (AVX2 with FMA) as well
 * as the x86-64 baseline; the loader picks one at import through an ifunc (never -march=native).
 * The FMA matters for numbers as well as speed: torch's vectorized kernels compute add/sub with
 * alpha, lerp and addcmul with one fused multiply-add, and so do ours (fma() in the expressions;
 * the baseline clone calls libm's correctly rounded fma, slower but the same result). It is off
 * only off x86-64 and under AddressSanitizer. */
#ifndef PCT_SIMD_LEVELS_H
#define PCT_SIMD_LEVELS_H

#if defined(__GNUC__) && !defined(__clang__)
#define PCT_SIMD_FMA optimize("fp-contract=fast")
#else
#define PCT_SIMD_FMA
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define PCT_SIMD_X86 1
#define PCT_SIMD_ATTR_AVX2 __attribute__((target("avx2,fma"), PCT_SIMD_FMA))
#define PCT_SIMD_X86_LEVELS_(IMPL) IMPL(avx2, PCT_SIMD_ATTR_AVX2, 8)
#ifndef PCT_NO_AVX512
#define PCT_SIMD_AVX512 1
#define PCT_SIMD_ATTR_AVX512 __attribute__((target("avx512f"), PCT_SIMD_FMA))
#define PCT_SIMD_AVX512_LEVEL_(IMPL) IMPL(avx512, PCT_SIMD_ATTR_AVX512, 16)
#else
#define PCT_SIMD_AVX512_LEVEL_(IMPL)
#endif
#else
#define PCT_SIMD_X86_LEVELS_(IMPL)
#define PCT_SIMD_AVX512_LEVEL_(IMPL)
#endif

#define PCT_SIMD_ATTR_BASE __attribute__((PCT_SIMD_FMA))
#define PCT_SIMD_LEVELS(IMPL) \
    IMPL(base, PCT_SIMD_ATTR_BASE, 4) PCT_SIMD_X86_LEVELS_(IMPL) PCT_SIMD_AVX512_LEVEL_(IMPL)

/* Note [One clone set] */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PCT_NO_TARGET_CLONES) && !defined(PCT_NO_AVX512)
#define PCT_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#define PCT_HOT_AVX2 __attribute__((target_clones("avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PCT_NO_TARGET_CLONES)
#define PCT_HOT __attribute__((target_clones("avx2", "default")))
#define PCT_HOT_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define PCT_HOT
#define PCT_HOT_AVX2
#endif

/* Note [Loop ISA clones] */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define PCT_HOT_X86_64_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
#if !defined(PCT_NO_AVX512)
#define PCT_HOT_X86_64_V4 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PCT_HOT_X86_64_V4 PCT_HOT_X86_64_V3
#endif
#else
#define PCT_HOT_X86_64_V3
#define PCT_HOT_X86_64_V4
#endif
#endif
