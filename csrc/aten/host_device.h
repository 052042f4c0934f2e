/* host_device.h: PCT_HOST_DEVICE, the mark of a header function that CUDA files also call on the device.
 *
 * Note [One math for both devices]: the CPU and CUDA runners of the loop machine expand the same X-macro expression
 * bodies of the op table (ops.def's PCT_UNARY and PCT_BINARY entries), so an op's math is written once. The helpers
 * those bodies call (cpu/pointwise_math.h, cpu/pointwise_special.h, cpu/special_polynomials.h) and the float16 /
 * bfloat16 conversions of dtype.h are therefore plain static inline functions that compile as C11 and as CUDA C++:
 * marked PCT_HOST_DEVICE (__host__ __device__ under nvcc, nothing in C), with C-only constructs (<tgmath.h>,
 * _Generic, GCC's __atomic builtins) each given a C++ spelling of the same choice beside them. A helper defined out of
 * line in a .c file (special_functions.c) has no device code: the ops whose bodies call one stay on the CPU
 * (Note [Ops left to the CPU] in csrc/cuda/pointwise.cuh lists them). */
#ifndef PCT_HOST_DEVICE_H
#define PCT_HOST_DEVICE_H

#ifdef __CUDACC__
#define PCT_HOST_DEVICE __host__ __device__
#else
#define PCT_HOST_DEVICE
#endif

#endif
