"""torch.fft: pyctorch's (pocketfft, single-threaded) against torch's (MKL's DFTI on the x86 wheels).

Cases: rfft and fft (complex64) of one signal of 1024, 4096 and 65536 points and of a prime length (4099); a batch
of 256 rows of 1024 points (per-call overhead and batching over pocketfft's strided axes); rfft2 of (512, 512);
irfft of 4096 points; stft of 16000 samples (n_fft 512, hann window). Threads default to 1. Target: ratio <= 1.5
(MKL's FFT is hand-tuned assembly, pocketfft portable C++).
"""
import sys

from _harness import setup

TARGET = 1.5


def _x(m, shape, dtype="float32"):
    return m.randn(*shape, generator=m.Generator().manual_seed(0), dtype=getattr(m, dtype))


def rfft(m, shape):
    x = _x(m, shape)
    return lambda: m.fft.rfft(x)


def fft(m, shape):
    x = _x(m, shape).to(m.complex64)
    return lambda: m.fft.fft(x)


def irfft(m, n):
    x = m.fft.rfft(_x(m, (n,)))
    return lambda: m.fft.irfft(x, n=n)


def rfft2(m, shape):
    x = _x(m, shape)
    return lambda: m.fft.rfft2(x)


def stft(m, n):
    x = _x(m, (n,))
    w = m.hann_window(512)
    return lambda: m.stft(x, 512, window=w, return_complex=True)


def main():
    args, suite = setup("fft", __doc__, threads="1")
    cases = []
    for n in (1024, 4096, 4099, 65536):
        cases += [("fft.rfft", "(%d,) float32" % n, lambda m, n=n: rfft(m, (n,))),
                  ("fft.fft", "(%d,) complex64" % n, lambda m, n=n: fft(m, (n,)))]
    cases += [
        ("fft.rfft", "(256, 1024) float32", lambda m: rfft(m, (256, 1024))),
        ("fft.fft", "(256, 1024) complex64", lambda m: fft(m, (256, 1024))),
        ("fft.irfft", "(4096,) float32", lambda m: irfft(m, 4096)),
        ("fft.rfft2", "(512, 512) float32", lambda m: rfft2(m, (512, 512))),
        ("stft", "16000 n_fft=512", lambda m: stft(m, 16000)),
    ]
    return suite.bench_cases(cases, TARGET)


if __name__ == "__main__":
    sys.exit(main())
