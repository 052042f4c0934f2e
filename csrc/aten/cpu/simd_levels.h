/* simd_levels.h: instantiating one GCC-vector-extension kernel per instruction set.
 * PCT_SIMD_LEVELS(IMPL) expands IMPL(sfx, attributes, float lanes) for the SSE2 baseline
 * (4 lanes) and, on x86-64 GCC builds, AVX2 + FMA (8) and AVX-512 (16, unless
 * PCT_NO_AVX512); PCT_SIMD_X86 / PCT_SIMD_AVX512 say which exist. Every level compiles with
 * FMA contraction, which ISO C mode (-std=c11) otherwise turns off. Pick one at run time
 * with __builtin_cpu_supports (never -march=native). */
#ifndef PCT_SIMD_LEVELS_H
#define PCT_SIMD_LEVELS_H

#if defined(__GNUC__) && !defined(__clang__)
#define PCT_SIMD_FMA optimize("fp-contract=fast")
#else
#define PCT_SIMD_FMA
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define PCT_SIMD_X86 1
#define PCT_SIMD_X86_LEVELS_(IMPL) IMPL(avx2, __attribute__((target("avx2,fma"), PCT_SIMD_FMA)), 8)
#ifndef PCT_NO_AVX512
#define PCT_SIMD_AVX512 1
#define PCT_SIMD_AVX512_LEVEL_(IMPL) IMPL(avx512, __attribute__((target("avx512f"), PCT_SIMD_FMA)), 16)
#else
#define PCT_SIMD_AVX512_LEVEL_(IMPL)
#endif
#else
#define PCT_SIMD_X86_LEVELS_(IMPL)
#define PCT_SIMD_AVX512_LEVEL_(IMPL)
#endif

#define PCT_SIMD_LEVELS(IMPL) \
    IMPL(base, __attribute__((PCT_SIMD_FMA)), 4) PCT_SIMD_X86_LEVELS_(IMPL) PCT_SIMD_AVX512_LEVEL_(IMPL)
#endif
