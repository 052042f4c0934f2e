/* simd_levels.h: instantiating one GCC-vector-extension kernel per instruction set.
 * PCT_SIMD_LEVELS(IMPL) expands IMPL(sfx, attributes, float lanes) for the SSE2 baseline
 * (4 lanes) and, on x86-64 GCC builds, AVX2 + FMA (8) and AVX-512 (16, unless
 * PCT_NO_AVX512); PCT_SIMD_X86 / PCT_SIMD_AVX512 say which exist. Every level compiles with
 * FMA contraction, which ISO C mode (-std=c11) otherwise turns off. Pick one at run time
 * with __builtin_cpu_supports (never -march=native).
 *
 * Note [One clone set]
 * Loops written in plain C rather than vector extensions get their instruction sets from
 * GCC's target_clones instead: PCT_HOT clones a function for AVX-512, AVX2 and the
 * baseline, and the loader's ifunc picks one at load time. It is the one definition every
 * kernel file uses: reduce.c and softmax_impl.h directly; norm.c, cross_entropy.c and
 * softmax_backward.c through NORM_HOT / CE_HOT / SMB_HOT, and im2col and the conv, pool and
 * upsample files through im2col.h's PCT_CONV_HOT, all aliases of it. The one exception is
 * PCT_HOT_AVX2 (AVX2 and baseline only) for spatial.h's row loops (PCT_SPATIAL_HOT): on
 * Zen 4 the AVX-512 clone of those short rows measured slower than the AVX2 one (1.6x on
 * the 7 x 7 window sums). Both are empty under clang (other clone semantics), off Linux
 * x86-64 (no ifunc) and with PCT_NO_TARGET_CLONES; PCT_NO_AVX512 (valgrind builds) drops
 * PCT_HOT's AVX-512 clone. */
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
#endif
