/* build_guard.h: whether this build compiles the CUDA backend's C files (PCT_CUDA_SOURCES).
 *
 * Note [CUDA sources in a CPU-only build]: the CUDA backend's C files include the CUDA runtime's header. The core's
 * build (setup.py) globs csrc/ for .c files, and where it meets one of them without the CUDA headers on its include
 * path (a CPU-only build) the file compiles to nothing; the CUDA backend's build, which has them, compiles it whole.
 * Each such file includes this header first and wraps its body in #ifdef PCT_CUDA_SOURCES. */
#ifndef PCT_CUDA_BUILD_GUARD_H
#define PCT_CUDA_BUILD_GUARD_H
#if defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#define PCT_CUDA_SOURCES 1
#endif
#endif
#endif
