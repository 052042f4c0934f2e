"""Complex linear algebra, pyctorch's LAPACK and BLAS c/z routines (OpenBLAS) against torch's (MKL's on the x86
wheels): the products (addmm through cgemm/zgemm, mv, vdot) and the factorisations and solvers of torch.linalg.

Cases, complex64 and complex128: addmm (128, 128), mv (512, 512), vdot 65536; inv, solve, cholesky, qr, eigh and svd of
one (128, 128) matrix; inv and eigh of a batch of 256 (8, 8) matrices (per-matrix overhead, parallel over the batch);
det's forward+backward (128, 128) complex128. Threads default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup

TARGET = 1.0


def _z(m, shape, dtype, hermitian_pd=False):
    g = m.Generator().manual_seed(0)
    z = m.randn(*shape, generator=g, dtype=getattr(m, dtype))
    if hermitian_pd:  # Z Z^H + n I: hermitian positive definite (cholesky, eigh)
        n = shape[-1]
        return z @ z.mH + n * m.eye(n, dtype=z.dtype)
    return z + shape[-1] * m.eye(shape[-1], dtype=z.dtype) if len(shape) >= 2 and shape[-1] == shape[-2] else z


def op(m, name, shape, dtype, hermitian_pd=False):
    x = _z(m, shape, dtype, hermitian_pd)
    fns = {"inv": lambda: m.linalg.inv(x), "cholesky": lambda: m.linalg.cholesky(x), "qr": lambda: m.linalg.qr(x),
           "eigh": lambda: m.linalg.eigh(x), "svd": lambda: m.linalg.svd(x, full_matrices=False),
           "mv": lambda: m.mv(x, x[0]), "vdot": lambda: m.vdot(x, x)}
    if name == "solve":
        b = _z(m, shape[:-1] + (4,), dtype)
        return lambda: m.linalg.solve(x, b)
    if name == "addmm":
        return lambda: m.addmm(x, x, x, beta=0.5, alpha=2.0)
    return fns[name]


def det_backward(m, shape, dtype):
    x = _z(m, shape, dtype).requires_grad_()

    def run():
        m.linalg.det(x).abs().backward()
        x.grad = None
    return run


def main():
    args, suite = setup("linalg_complex", __doc__, threads="1,2")
    cases = []
    for dt in ("complex64", "complex128"):
        cases += [
            ("addmm", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "addmm", (128, 128), dt)),
            ("mv", "(512, 512) %s" % dt, lambda m, dt=dt: op(m, "mv", (512, 512), dt)),
            ("vdot", "65536 %s" % dt, lambda m, dt=dt: op(m, "vdot", (65536,), dt)),
            ("linalg.inv", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "inv", (128, 128), dt)),
            ("linalg.solve", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "solve", (128, 128), dt)),
            ("linalg.cholesky", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "cholesky", (128, 128), dt, True)),
            ("linalg.qr", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "qr", (128, 128), dt)),
            ("linalg.eigh", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "eigh", (128, 128), dt, True)),
            ("linalg.svd", "(128, 128) %s" % dt, lambda m, dt=dt: op(m, "svd", (128, 128), dt)),
            ("linalg.inv", "(256, 8, 8) %s" % dt, lambda m, dt=dt: op(m, "inv", (256, 8, 8), dt)),
            ("linalg.eigh", "(256, 8, 8) %s" % dt, lambda m, dt=dt: op(m, "eigh", (256, 8, 8), dt, True)),
        ]
    cases.append(("linalg.det fwd+bwd", "(128, 128) complex128", lambda m: det_backward(m, (128, 128), "complex128")))
    return suite.bench_cases(cases, TARGET)


if __name__ == "__main__":
    sys.exit(main())
