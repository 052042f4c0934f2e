/* fft_pocketfft.h: the C interface to pocketfft (fft_pocketfft.cc), the C++ header-only FFT library that NumPy,
 * SciPy and torch's CPU backend use. The Makefile's `pocketfft` target fetches the header into
 * build/third_party/pocketfft; setup.py compiles the shim and defines PCT_HAVE_POCKETFFT only when it is there.
 *
 * Every call transforms `data_in` into `data_out` (distinct buffers) over the axes listed, scaling by `fct`:
 *   shape   the sizes of the real side for r2c (input) and c2r (output); the common shape for c2c
 *   strides in bytes, one per dimension, for the input and the output
 *   kind    PCT_FFT_C2C (complex -> complex, `forward` picks the sign), PCT_FFT_R2C (real -> the non-negative half of
 *           the last axis, always forward), PCT_FFT_C2R (that half -> real, always backward)
 *   is_double  float64/complex128 when nonzero, else float32/complex64.
 * The returned value is 0, or -1 with a message in err (bad_alloc, an internal error): no exception reaches C. */
#ifndef PCT_FFT_POCKETFFT_H
#define PCT_FFT_POCKETFFT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { PCT_FFT_C2C = 0, PCT_FFT_R2C = 1, PCT_FFT_C2R = 2 };

int pct_pocketfft_exec(int kind, int is_double, int ndim, const int64_t *shape, const int64_t *stride_in,
                       const int64_t *stride_out, int naxes, const int64_t *axes, int forward, const void *data_in,
                       void *data_out, double fct, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
