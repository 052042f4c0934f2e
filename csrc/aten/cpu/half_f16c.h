/* half_f16c.h: float16 <-> float32 conversion of contiguous runs with the x86 F16C instructions (8 values per
 * instruction), for the float16 pointwise loops (Note [float16 loops] in pointwise_loops.h). The portable conversions
 * of dtype.h take about ten vector instructions per value each way, which made a float16 add five times slower than
 * torch's. On a CPU without F16C (or not x86-64) pct_have_f16c() is false and the loops keep dtype.h's.
 * The conversions are static inline with their own target: inlined into the loops' x86-64-v3 clones (a call per
 * chunk from there cost four times the loop's time), called out of line from the others. */
#ifndef PCT_CPU_HALF_F16C_H
#define PCT_CPU_HALF_F16C_H
#include <stdbool.h>
#include <stdint.h>
#include "../dtype.h"

/* values per chunk of the loops' float buffers (3 KB of stack for a binary loop) */
#define PCT_F16C_CHUNK 256

/* whether this CPU has F16C and AVX (checked once) */
bool pct_have_f16c(void);

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PCT_F16C_TARGET __attribute__((target("avx,f16c")))
#else
#define PCT_F16C_TARGET
#endif

/* dst[i] = src[i] as float, exactly, for i < n */
static inline PCT_F16C_TARGET void pct_f16c_to_float(const pct_half *src, float *dst, int64_t n)
{
    int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
#endif
    for (; i < n; i++) dst[i] = pct_half_to_float(src[i]);
}

/* dst[i] = src[i] rounded to float16, to nearest even (as pct_float_to_half; a NaN stays a NaN), for i < n */
static inline PCT_F16C_TARGET void pct_f16c_from_float(const float *src, pct_half *dst, int64_t n)
{
    int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++) dst[i] = pct_float_to_half(src[i]);
}

#endif
