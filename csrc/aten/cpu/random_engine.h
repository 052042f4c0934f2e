/*
 * random_engine.h - pyctorch CPU random engine.
 *
 * A pure C11 re-implementation of the PyTorch CPU generator (mt19937 +
 * Box-Muller cache) and of the CPU random kernels, reproducing the numbers of
 * torch 2.13.0 (x86-64 CPU wheel, which dispatches its random kernels to the
 * AVX2 build on AVX2 / AVX-512 machines) bit for bit.  See the "what matches"
 * notes next to every function and in random_engine.c.
 *
 * Build requirements (random_engine.c):
 *   - C11, link with -lm (uses log, log1p, sin, cos, tan, exp, sqrt, fma,
 *     fmaf from the C library; torch calls the same glibc functions, which is
 *     why the transcendental results agree bit for bit).
 *   - Plain "gcc -O3 -std=c11" is fine.  Any -march / -mfma is fine too.
 *   - Do NOT compile with -ffast-math / -Ofast / -ffinite-math-only /
 *     -fassociative-math / -freciprocal-math: the bit patterns depend on
 *     strict IEEE evaluation.  No FMA contraction is needed or harmful: every
 *     fused multiply-add that torch's compiled code performs is written as an
 *     explicit fma()/fmaf() call, and the file contains no other a*b+c
 *     expression that a compiler could contract.
 *   - x86 AVX2+FMA fast path for float normal_ is selected at run time
 *     (GCC/clang on x86 only); the portable scalar fallback gives identical
 *     bits.
 *
 * Threading: a generator is plain data; callers must serialise access to one
 * generator (torch holds the generator mutex for the whole kernel).  Nothing
 * here allocates except pct_rng_multinomial (temporary scratch, freed before
 * return); nothing calls abort/exit/assert.
 *
 * Ownership: every output pointer is owned by the caller and must have room
 * for n elements of the stated dtype; inputs are only read.  Half and
 * bfloat16 buffers are arrays of uint16_t bit patterns.  Bool buffers hold
 * one byte per element (0 or 1).
 *
 * Element order: all fills write n elements in the order in which torch's
 * TensorIterator visits a *contiguous* tensor, i.e. linear (C) order.  For a
 * non-contiguous output torch visits elements in memory order (dimensions
 * sorted by stride, smallest stride fastest); fill a temporary and scatter it
 * in that order.  Only normal_ has a different *algorithm* for
 * non-contiguous tensors (see pct_rng_normal_ex).
 *
 * Scope / known limits (details in the function comments):
 *   - Reproduces torch's AVX2 kernel build, which is what torch runs on every
 *     x86-64 CPU with AVX2 (AVX-512 machines included).  On a CPU without
 *     AVX2, or with ATEN_CPU_CAPABILITY=default, torch runs its DEFAULT
 *     kernels instead and then differs from this engine (and from itself on
 *     AVX2 hardware) in float/half/bfloat16 normal_ with n >= 16 and in the
 *     last bit of some uniform_(from,to)/normal_(mean,std)/log_normal_
 *     values (no fused multiply-adds there).  The
 *     scalar fallback of this file reproduces the AVX2 numbers on any CPU.
 *   - Errors are detected before drawing anything.  torch detects a few of
 *     them (bad entries of a bernoulli probability tensor, bad rows of a
 *     multinomial with replacement) only after it has consumed random numbers
 *     for the earlier elements, so the generator state after such an error
 *     differs.
 */
#ifndef PCT_RANDOM_ENGINE_H
#define PCT_RANDOM_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include "../generator_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dtype codes for the fill functions. */
enum pct_rng_dtype {
    PCT_RNG_F32 = 0,
    PCT_RNG_F64 = 1,
    PCT_RNG_F16 = 2,  /* uint16_t IEEE half bit patterns   */
    PCT_RNG_BF16 = 3, /* uint16_t bfloat16 bit patterns    */
    PCT_RNG_I64 = 4,
    PCT_RNG_I32 = 5,
    PCT_RNG_I16 = 6,
    PCT_RNG_I8 = 7,
    PCT_RNG_U8 = 8,
    PCT_RNG_BOOL = 9, /* one byte per element, 0 or 1      */
    PCT_RNG_U16 = 10, /* the unsigned dtypes: integer draws only (random_, randint) */
    PCT_RNG_U32 = 11,
    PCT_RNG_U64 = 12
};

/* Element size in bytes of a dtype code, 0 for an unknown code. */
size_t pct_rng_dtype_size(int dtype);

/* ---------------------------------------------------------------- generator */


/* One raw mt19937 output (CPUGeneratorImpl::random). */
uint32_t pct_generator_random32(pct_cpu_generator *g);

/* Two raw outputs, first one in the high half (CPUGeneratorImpl::random64). */
uint64_t pct_generator_random64(pct_cpu_generator *g);


/* -------------------------------------------------------------- fills
 * All fills return 0 on success and -1 on invalid arguments (unsupported
 * dtype, NULL buffer with n > 0, n < 0, or an argument torch would reject with
 * a RuntimeError).  On -1 nothing is written and no random number is drawn.
 * n == 0 draws nothing (torch does not touch the generator for empty
 * tensors). */

/* torch.rand / Tensor.uniform_(from, to).  Floating dtypes only
 * (F32, F64, F16, BF16).
 *   F64:       u = (random64() & (2^53-1)) * 2^-53, v = fma(u, to-from, from)
 *   F32/F16/BF16: u = (random() & (2^24-1)) * 2^-24 computed in float with
 *              float from/to, v = fmaf(u, to-from, from), then rounded to the
 *              dtype (RNE).  Half and bfloat16 therefore use 24 random bits
 *              too (torch 2.13 behaviour).
 *   In every dtype a result equal to `to` is replaced by `from`.
 * Rejected like torch: from/to outside the dtype's finite range, from > to,
 * to - from > dtype max. */
int pct_rng_uniform(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                    double from, double to);

/* torch.randn / Tensor.normal_(mean, std) on a contiguous tensor.
 * Floating dtypes only; std < 0 (or NaN) is rejected.
 *   n < 16 (any dtype): per element torch's scalar Box-Muller in double with
 *     the cached second sample (the generator's double cache is consumed and
 *     refilled), value = fma(z, std, mean), then rounded to the dtype (half /
 *     bfloat16 via float).
 *   n >= 16, F32: torch's AVX2 normal_fill (24-bit uniforms into the whole
 *     buffer, then groups of 16 through the avx_mathfun log/sincos
 *     polynomials exactly as compiled into torch, tail recomputed from 16
 *     fresh uniforms).  Does not touch the Box-Muller cache.
 *   n >= 16, F16/BF16: same float kernel, run chunk by chunk (16 fresh
 *     uniforms per chunk, then 16 more for a tail), results rounded RNE.
 *   n >= 16, F64: scalar normal_fill in double with glibc log/sin/cos. */
int pct_rng_normal(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                   double mean, double std);

/* As pct_rng_normal; contiguous == 0 selects what torch does for a
 * non-contiguous output tensor of numel n: the per-element scalar path for
 * every n (values in TensorIterator order). */
int pct_rng_normal_ex(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                      double mean, double std, int contiguous);

/* torch.normal(mean, std) with tensor arguments is a composition in torch:
 *   normal(Tensor mean, Tensor std): out = normal_(0, 1) over the broadcast
 *       shape (out's dtype, contiguous rules above), then out = out * std
 *       (one rounding, out's dtype), then out = out + mean (second rounding);
 *       never fused.
 *   normal(Tensor mean, double std): out = normal_(0, std), then out += mean.
 *   normal(double mean, Tensor std): out = normal_(0, 1), then out *= std,
 *       then out += mean.
 * So callers use pct_rng_normal(..., 0.0, 1.0 or std) and then ordinary
 * elementwise mul/add kernels. */

/* torch.randint(low, high, size) / Tensor.random_(from, to) /
 * Tensor.random_(to) (== random_(0, to)), to exclusive.  All dtypes.
 * range = to - from (as uint64); each element draws random64() if
 * range >= 2^28, else random(); value = (int64)(r % range + from), then
 * converted to the dtype (integers: wrap to the width; F16/BF16 via float,
 * RNE).  For floating dtypes from/to are first adjusted like torch's
 * update_from/update_to.  Rejected like torch: from >= to; integer dtypes:
 * from or to-1 outside the dtype's range; floating dtypes: from or to-1
 * outside the dtype's finite range.  (torch additionally emits a UserWarning
 * when a floating dtype gets from or to-1 outside [-2^digits, 2^digits],
 * digits = 24/53/11/8 for F32/F64/F16/BF16; the caller may replicate it.) */
int pct_rng_random_from_to(pct_cpu_generator *g, void *out, int dtype,
                           int64_t n, int64_t from, int64_t to_exclusive);

/* Tensor.random_(from) with to=None, i.e. [from, dtype max] (floating dtypes:
 * [from, 2^digits]).  from == INT64_MIN selects torch's full 64-bit range
 * kernel: value = (int64)random64() converted to the dtype (only I64, F32,
 * F64, BF16 accepted, as in torch). */
int pct_rng_random_from(pct_cpu_generator *g, void *out, int dtype,
                        int64_t n, int64_t from);

/* Tensor.random_() without arguments.
 *   I64: random64() % 2^63        F64: random64() % (2^53+1)
 *   I32: random()   % 2^31        F32: random()   % (2^24+1)
 *   I16: random()   % 2^15        F16: random()   % (2^11+1)
 *   I8:  random()   % 2^7         BF16: random()  % (2^8+1)
 *   U8:  random()   % 2^8         BOOL: random() & 1 */
int pct_rng_random_default(pct_cpu_generator *g, void *out, int dtype,
                           int64_t n);

/* Tensor.exponential_(lambd): floating dtypes,
 * value = (-1/lambd) * log1p(-u53) in double, then rounded to the dtype.
 * torch (2.13) rejects lambd <= 0 (and NaN); so does this function.  The MKL
 * variant in torch's sources is compiled out of the public builds. */
int pct_rng_exponential(pct_cpu_generator *g, void *out, int dtype,
                        int64_t n, double lambd);

/* Tensor.bernoulli_(p) / torch.bernoulli(x, p) with a scalar p in [0, 1]:
 * value = (u53 < p), any dtype.  Matches torch bit for bit on Intel and AMD
 * alike: the MKL/VSL bernoulli (and exponential) paths present in torch's
 * sources are compiled out of the public torch builds (guarded by
 * FBCODE_CAFFE2; the shipped libtorch_cpu.so references no VSL function and
 * its bernoulli_scalar_kernel has no CPU-vendor test), so torch itself uses
 * this generator-driven kernel.  Nothing here needs MKL. */
int pct_rng_bernoulli_scalar(pct_cpu_generator *g, void *out, int dtype,
                             int64_t n, double p);

/* torch.bernoulli(probs) / Tensor.bernoulli_(probs) with a float64
 * probability tensor: value_i = (u53 < p[i]).  p must already be broadcast
 * to n elements in the output's iteration order.  Rejects p outside [0,1]
 * (NaN included), like torch. */
int pct_rng_bernoulli_tensor(pct_cpu_generator *g, void *out, int dtype,
                             const double *p, int64_t n);

/* Same for float32 / float16 / bfloat16 probability tensors (pass the
 * probabilities widened to float, which is exact): torch then uses float
 * bernoulli: value_i = (u24 < p[i]) with u24 = (random() & (2^24-1)) * 2^-24. */
int pct_rng_bernoulli_tensor_f32(pct_cpu_generator *g, void *out, int dtype,
                                 const float *p, int64_t n);

/* torch.randperm(n) (int64 result).  n < 214748364: out = 0..n-1 then for
 * i in [0, n-2]: swap(out[i], out[i + random() % (n-i)]).  Larger n: torch's
 * "inside-out" Fisher-Yates with random64().  For other result dtypes torch
 * runs the same algorithm; convert the int64 values.  Returns -1 for n < 0. */
int pct_rng_randperm(pct_cpu_generator *g, int64_t *out, int64_t n);

/* torch.multinomial(probs, n_sample, replacement).
 * probs: n_dist rows of n_categories elements (row-major, contiguous; a 1-D
 * tensor is n_dist = 1), dtype F32, F64, F16 or BF16 (the dtype matters:
 * torch computes in it).  out: n_dist * n_sample int64 indices, row-major.
 * (For a non-contiguous probs tensor torch draws the exponential samples of
 * the no-replacement path in the memory order of probs; the caller would have
 * to permute accordingly.)
 *   replacement && n_sample > 1: cumulative distribution per row in the
 *     probs dtype (float accumulation for F16/BF16), normalised by the row
 *     sum, last bucket forced to 1, one u53 per sample, binary search.
 *   otherwise (no replacement, or n_sample == 1): q = exponential_(1) over
 *     the whole probs-shaped tensor (probs dtype), q = probs / q, then per row
 *     argmax (n_sample == 1, first maximum wins) or topk(n_sample) sorted
 *     descending.  Ties inside topk are ordered exactly as torch's
 *     std::partial_sort / std::nth_element + std::sort (libstdc++) order them.
 * Returns -1 on what torch rejects: n_dist < 1, n_categories < 1 or > 2^24,
 * n_sample < 1, n_sample > n_categories without replacement, negative / inf /
 * NaN probabilities, a row summing to 0. */
int pct_rng_multinomial(pct_cpu_generator *g, int64_t *out, const void *probs,
                        int probs_dtype, int64_t n_dist, int64_t n_categories,
                        int64_t n_sample, int replacement);

/* Extra distributions (same kernels as torch, all computed in double from one
 * u53 per element and rounded to the dtype; floating dtypes only except
 * geometric, which accepts every dtype except BOOL):
 *   cauchy_(median, sigma):   median + sigma * tan(pi * (u - 0.5))   (fused)
 *   log_normal_(mean, std):   exp(normal)  (scalar Box-Muller + cache)
 *   geometric_(p):            ceil(log(u) / log1p(-p)) */
int pct_rng_cauchy(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                   double median, double sigma);
int pct_rng_log_normal(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                       double mean, double std);
int pct_rng_geometric(pct_cpu_generator *g, void *out, int dtype, int64_t n,
                      double p);

/* Testing hook: force_scalar != 0 makes the float normal_ kernel use the
 * portable scalar emulation even where the AVX2+FMA path is available (both
 * give identical bits; this only exists so tests can prove it).  Not
 * thread-safe with concurrent fills; call it before using the engine. */
void pct_rng_debug_force_scalar_normal(int force_scalar);

#ifdef __cplusplus
}
#endif

#endif /* PCT_RANDOM_ENGINE_H */
