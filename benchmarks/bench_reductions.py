"""Sums and means over one dim or all elements: the reduction kernels' layouts, by dtype.

Cases: sum over the inner dim (rows), over the outer dim (column sums: tall, square and wide
matrices, the layout whose accumulation order sets its accuracy), over a middle dim of a 3-d
tensor, over all elements; mean and the float64 sum of a tall matrix's columns; bfloat16 and float16 column and
row sums (float accumulators; the bias gradients under autocast) and int64/int32 sums (int64 results). Threads
default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup

TARGET = 1.0


def reduce_case(shape, op="sum", dim=None, dtype="float32"):
    def make(m):
        g = m.Generator().manual_seed(0)
        if dtype.startswith("int"):
            x = m.randint(-100, 100, shape, generator=g, dtype=getattr(m, dtype))
        else:
            x = m.randn(*shape, generator=g).to(getattr(m, dtype))
        fn = getattr(x, op)
        if dim is None:
            return lambda: fn()
        return lambda: fn(dim)
    return make


CASES = [
    ("sum", "(4096, 256) dim=1", reduce_case((4096, 256), dim=1)),
    ("sum", "(4096, 256) dim=0", reduce_case((4096, 256), dim=0)),
    ("sum", "(256, 4096) dim=0", reduce_case((256, 4096), dim=0)),
    ("sum", "(1024, 1024) dim=0", reduce_case((1024, 1024), dim=0)),
    ("sum", "(100000, 3) dim=0", reduce_case((100000, 3), dim=0)),
    ("sum", "(100000, 64) dim=0", reduce_case((100000, 64), dim=0)),
    ("sum", "(32, 512, 64) dim=1", reduce_case((32, 512, 64), dim=1)),
    ("sum", "(1048576,) all", reduce_case((1 << 20,))),
    ("mean", "(4096, 256) dim=0", reduce_case((4096, 256), op="mean", dim=0)),
    ("sum float64", "(100000, 16) dim=0", reduce_case((100000, 16), dim=0, dtype="float64")),
    ("sum bfloat16", "(4096, 256) dim=0", reduce_case((4096, 256), dim=0, dtype="bfloat16")),
    ("sum bfloat16", "(4096, 256) dim=1", reduce_case((4096, 256), dim=1, dtype="bfloat16")),
    ("sum float16", "(4096, 256) dim=0", reduce_case((4096, 256), dim=0, dtype="float16")),
    ("sum int64", "(4096, 256) dim=0", reduce_case((4096, 256), dim=0, dtype="int64")),
    ("sum int64", "(4096, 256) dim=1", reduce_case((4096, 256), dim=1, dtype="int64")),
    ("sum int32", "(1048576,) all", reduce_case((1 << 20,), dtype="int32")),
]


def main():
    args, suite = setup("reductions", __doc__, threads="1,2")
    return suite.bench_cases(CASES, TARGET)


if __name__ == "__main__":
    sys.exit(main())
