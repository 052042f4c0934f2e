"""torch-namespace composites and special functions (pyctorch/_composites.py, csrc/aten/ops_api.def).

Cases (float32 unless noted): the unary special functions lgamma, digamma, i0 on 2^20 elements; gcd of two
2^20 int64 tensors; cdist (p=2 through the matmul form, and p=1) with forward+backward; quantile of
(1024, 1024) along dim 1; cov of (64, 4096); diff of 2^20 elements; histogram of 2^20 values in 100 bins;
isin of 2^20 int64 values in 1000; cross of (2^16, 3); pixel_shuffle (8, 64, 56, 56) with factor 2.
"fwd+bwd" runs the forward, then backward of a sum and clears the gradients. Threads default to 1 and 2.
Target: ratio <= 1.0.
"""
import sys

from _harness import setup

TARGET = 1.0
N = 1 << 20


def unary(name, lo, hi):
    def make(m):
        g = m.Generator().manual_seed(0)
        x = m.rand(N, generator=g) * (hi - lo) + lo
        f = getattr(m, name)
        return lambda: f(x)
    return make


def gcd(m):
    g = m.Generator().manual_seed(0)
    a, b = m.randint(0, 1 << 30, (N,), generator=g), m.randint(0, 1 << 30, (N,), generator=g)
    return lambda: m.gcd(a, b)


def cdist(rows, cols, p, backward):
    def make(m):
        g = m.Generator().manual_seed(0)
        a = m.randn(rows, cols, generator=g).requires_grad_(backward)
        b = m.randn(rows, cols, generator=g).requires_grad_(backward)
        if not backward:
            return lambda: m.cdist(a, b, p=p)

        def run():
            m.cdist(a, b, p=p).sum().backward()
            a.grad = b.grad = None
        return run
    return make


def simple(build):
    def make(m):
        g = m.Generator().manual_seed(0)
        return build(m, g)
    return make


def main():
    args, suite = setup("api", __doc__, threads="1,2")
    cases = [
        ("lgamma", "2^20", unary("lgamma", 0.1, 20.0)),
        ("digamma", "2^20", unary("digamma", 0.1, 20.0)),
        ("i0", "2^20", unary("i0", -20.0, 20.0)),
        ("gcd", "2^20 int64", gcd),
        ("cdist p=2 fwd", "(1024, 64)x(1024, 64)", cdist(1024, 64, 2.0, False)),
        ("cdist p=2 fwd+bwd", "(1024, 64)x(1024, 64)", cdist(1024, 64, 2.0, True)),
        ("cdist p=1 fwd", "(256, 32)x(256, 32)", cdist(256, 32, 1.0, False)),
        ("cdist p=1 fwd+bwd", "(256, 32)x(256, 32)", cdist(256, 32, 1.0, True)),
        ("quantile", "(1024, 1024) dim=1 q=[.1,.5,.9]", simple(lambda m, g: (
            lambda x, q: lambda: m.quantile(x, q, dim=1))(m.randn(1024, 1024, generator=g),
                                                         m.tensor([0.1, 0.5, 0.9])))),
        ("cov", "(64, 4096)", simple(lambda m, g: (lambda x: lambda: m.cov(x))(m.randn(64, 4096, generator=g)))),
        ("diff", "2^20", simple(lambda m, g: (lambda x: lambda: m.diff(x))(m.randn(N, generator=g)))),
        ("histogram", "2^20, 100 bins", simple(lambda m, g: (lambda x: lambda: m.histogram(x, 100))(
            m.randn(N, generator=g)))),
        ("isin", "2^20 in 1000 int64", simple(lambda m, g: (lambda e, t: lambda: m.isin(e, t))(
            m.randint(0, 5000, (N,), generator=g), m.randint(0, 5000, (1000,), generator=g)))),
        ("cross", "(2^16, 3) dim=1", simple(lambda m, g: (lambda a, b: lambda: m.cross(a, b, dim=1))(
            m.randn(1 << 16, 3, generator=g), m.randn(1 << 16, 3, generator=g)))),
        ("pixel_shuffle", "(8, 64, 56, 56) r=2", simple(lambda m, g: (lambda x: lambda: m.pixel_shuffle(x, 2))(
            m.randn(8, 64, 56, 56, generator=g)))),
    ]
    return suite.bench_cases(cases, TARGET)


if __name__ == "__main__":
    sys.exit(main())
