"""Transcendental pointwise kernels (float32): exact GELU (approximate='none') forward and its
backward (gelu_backward), and the tanh form, on an MLP activation (64, 3072) that stays in
cache and a (4096, 1024) tensor that does not. Threads default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0


def gelu(m, shape, approximate, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(*shape, generator=g)
    f = m.nn.functional.gelu
    if not backward:
        return lambda: f(x, approximate=approximate)
    grad = m.randn(*shape, generator=g)
    back = m.ops.aten.gelu_backward if hasattr(m, "ops") and hasattr(m.ops, "aten") else m.gelu_backward
    return lambda: back(grad, x, approximate=approximate)


def main():
    args, suite = setup("pointwise_math", __doc__, threads="1,2")
    shapes = [(64, 3072), (4096, 1024)]
    for n in thread_list(args):
        suite.set_threads(n)
        for shape in shapes:
            for approximate in ("none", "tanh"):
                for backward in (False, True):
                    suite.bench("gelu_backward" if backward else "gelu",
                                "%s approximate=%s t=%d" % (shape, approximate, n),
                                lambda m, s=shape, a=approximate, b=backward: gelu(m, s, a, b), TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
