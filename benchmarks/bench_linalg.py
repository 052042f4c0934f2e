"""The SVD and the norms built on it (float32 and float64), pyctorch's LAPACK (OpenBLAS's gesdd)
against torch's (MKL's on the x86 wheels).

Cases: linalg.svd (reduced) of one square matrix 64, 256 and 512; of a batch of 256 small
(16, 16) matrices (per-matrix overhead, parallel over the batch); a tall (1024, 128); svdvals
of (512, 512); linalg.matrix_norm(ord='nuc') and ord=2 of (128, 128); the nuclear norm's
forward+backward (an SVD with vectors). Threads default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup

TARGET = 1.0


def _x(m, shape, dtype):
    return m.randn(*shape, generator=m.Generator().manual_seed(0), dtype=getattr(m, dtype))


def svd(m, shape, dtype):
    x = _x(m, shape, dtype)
    return lambda: m.linalg.svd(x, full_matrices=False)


def svdvals(m, shape, dtype):
    x = _x(m, shape, dtype)
    return lambda: m.linalg.svdvals(x)


def matrix_norm(m, shape, dtype, ord):
    x = _x(m, shape, dtype)
    return lambda: m.linalg.matrix_norm(x, ord)


def nuc_backward(m, shape, dtype):
    x = _x(m, shape, dtype).requires_grad_()

    def run():
        m.linalg.matrix_norm(x, "nuc").backward()
        x.grad = None
    return run


def main():
    args, suite = setup("linalg", __doc__, threads="1,2")
    cases = []
    for dt in ("float32", "float64"):
        cases += [
            ("linalg.svd", "(64, 64) %s" % dt, lambda m, dt=dt: svd(m, (64, 64), dt)),
            ("linalg.svd", "(256, 256) %s" % dt, lambda m, dt=dt: svd(m, (256, 256), dt)),
            ("linalg.svd", "(256, 16, 16) %s" % dt, lambda m, dt=dt: svd(m, (256, 16, 16), dt)),
            ("linalg.svd", "(1024, 128) %s" % dt, lambda m, dt=dt: svd(m, (1024, 128), dt)),
        ]
    cases += [
        ("linalg.svd", "(512, 512) float32", lambda m: svd(m, (512, 512), "float32")),
        ("linalg.svdvals", "(512, 512) float32", lambda m: svdvals(m, (512, 512), "float32")),
        ("matrix_norm nuc", "(128, 128) float32", lambda m: matrix_norm(m, (128, 128), "float32", "nuc")),
        ("matrix_norm 2", "(128, 128) float32", lambda m: matrix_norm(m, (128, 128), "float32", 2)),
        ("matrix_norm nuc fwd+bwd", "(128, 128) float64", lambda m: nuc_backward(m, (128, 128), "float64")),
    ]
    return suite.bench_cases(cases, TARGET)


if __name__ == "__main__":
    sys.exit(main())
