/* vecmath.h: SIMD loops for transcendental pointwise ops on contiguous float32/float64,
 * through glibc's vector math library (libmvec: AVX2 and AVX-512 variants chosen at run
 * time). Results are within libmvec's documented error (<= 4 ulp), like torch's SLEEF path. */
#ifndef PCT_VECMATH_H
#define PCT_VECMATH_H
#include "../iter.h"

/* A loop for op_index on dtype that uses SIMD when the run is contiguous, or NULL when
 * there is none (no libmvec, no AVX2, or the op has no vector form). Unary ops, silu, and the binary atan2 (arctan2)
 * and hypot. */
pct_loop_fn pct_vec_loop(int op_index, int dtype);
#endif
