"""Binary pointwise arithmetic by dtype: a + b, a * b, a.add_(b, alpha=2) and a * 2 (a scalar) on 1M elements
(4 MB of float32: out of the first caches, in the last) for float32, float16, bfloat16, int64 and int32, and a + b of
float32 with one operand transposed (the strided loop); pow by the scalars torch's kernel recognises (x ** 3 as in
minGPT's GELU, 2, -2, 0.5, -0.5, -1) and by another (1.5), sqrt and rsqrt, in float32 on positive values. Threads
default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0
N = 1 << 20

OPS = {
    "a + b": lambda a, b: (lambda: a + b),
    "a * b": lambda a, b: (lambda: a * b),
    "a.add_(b, alpha=2)": lambda a, b: (lambda: a.add_(b, alpha=2)),
    "a * 2": lambda a, b: (lambda: a * 2),
}

POW_OPS = {"x ** %s" % e: (lambda m, a, e=e: a ** e) for e in (3.0, 2, -2.0, 0.5, -0.5, -1.0, 1.5)}
POW_OPS.update({"sqrt(x)": lambda m, a: m.sqrt(a), "rsqrt(x)": lambda m, a: m.rsqrt(a)})


def operands(m, dtype, shape=(N,)):
    g = m.Generator().manual_seed(0)
    if dtype in ("int64", "int32"):
        make = lambda: m.randint(-1000, 1000, shape, generator=g, dtype=getattr(m, dtype))  # noqa: E731
    else:
        make = lambda: m.randn(*shape, generator=g).to(getattr(m, dtype))  # noqa: E731
    return make(), make()


def main():
    args, suite = setup("pointwise", __doc__, threads="1,2")
    for n in thread_list(args):
        suite.set_threads(n)
        for dtype in ("float32", "float16", "bfloat16", "int64", "int32"):
            for name, op in OPS.items():
                def make(m, op=op, dtype=dtype):
                    a, b = operands(m, dtype)
                    return op(a, b)
                suite.bench(name + " " + dtype, "numel=2^20 threads=%d" % n, make, target=TARGET)

        def transposed(m):
            a, b = operands(m, "float32", (1024, 1024))
            bt = b.t()
            return lambda: a + bt
        suite.bench("a + b.t() float32", "1024x1024 threads=%d" % n, transposed, target=TARGET)

        for name, f in POW_OPS.items():
            def make(m, f=f):
                a, _ = operands(m, "float32")
                a = a.abs() + 0.1
                return lambda: f(m, a)
            suite.bench(name + " float32", "numel=2^20 threads=%d" % n, make, target=TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
