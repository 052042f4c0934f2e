// fft_pocketfft.cc: the C interface of fft_pocketfft.h over pocketfft's C++ templates (c2c, r2c, c2r).
//
// Compiled apart by g++ -std=c++17 (setup.py) when build/third_party/pocketfft/pocketfft_hdronly.h exists. pocketfft
// runs single-threaded here (POCKETFFT_NO_MULTITHREADING: no thread pool of its own beside OpenMP's, and fork stays
// safe) and keeps a small cache of plans keyed by length (its mutex guards it, so calls from several threads are safe).
#define POCKETFFT_NO_MULTITHREADING
#define POCKETFFT_CACHE_SIZE 16
#include "fft_pocketfft.h"

#include <complex>
#include <cstdio>
#include <exception>
#include <new>

#include "pocketfft_hdronly.h"

namespace {

template <typename T>
void run(int kind, const pocketfft::shape_t &shape, const pocketfft::stride_t &si, const pocketfft::stride_t &so,
         const pocketfft::shape_t &axes, bool forward, const void *in, void *out, T fct)
{
    using C = std::complex<T>;
    switch (kind) {
    case PCT_FFT_C2C:
        pocketfft::c2c<T>(shape, si, so, axes, forward, static_cast<const C *>(in), static_cast<C *>(out), fct, 1);
        break;
    case PCT_FFT_R2C:
        pocketfft::r2c<T>(shape, si, so, axes, true, static_cast<const T *>(in), static_cast<C *>(out), fct, 1);
        break;
    default:
        pocketfft::c2r<T>(shape, si, so, axes, false, static_cast<const C *>(in), static_cast<T *>(out), fct, 1);
        break;
    }
}

}  // namespace

extern "C" int pct_pocketfft_exec(int kind, int is_double, int ndim, const int64_t *shape, const int64_t *stride_in,
                                  const int64_t *stride_out, int naxes, const int64_t *axes, int forward,
                                  const void *data_in, void *data_out, double fct, char *err, size_t errlen)
{
    try {
        pocketfft::shape_t sh(shape, shape + ndim), ax(axes, axes + naxes);
        pocketfft::stride_t si(stride_in, stride_in + ndim), so(stride_out, stride_out + ndim);
        if (is_double)
            run<double>(kind, sh, si, so, ax, forward != 0, data_in, data_out, fct);
        else
            run<float>(kind, sh, si, so, ax, forward != 0, data_in, data_out, static_cast<float>(fct));
        return 0;
    } catch (const std::bad_alloc &) {
        std::snprintf(err, errlen, "pocketfft: out of memory");
    } catch (const std::exception &e) {
        std::snprintf(err, errlen, "pocketfft: %s", e.what());
    } catch (...) {
        std::snprintf(err, errlen, "pocketfft: unknown error");
    }
    return -1;
}
