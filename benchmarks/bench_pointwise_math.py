"""Transcendental pointwise kernels (float32): exact GELU (approximate='none') forward and its
backward (gelu_backward), and the tanh form, on an MLP activation (64, 3072) that stays in
cache and a (4096, 1024) tensor that does not; erfinv on the same shapes (uniform inputs in
(-1, 1): pyctorch's double polynomials of vecmath.c against torch's MKL VML), and
nn.init.trunc_normal_(std=0.02) on a (3072, 768) weight, the initialisation timm's ViT spends its
creation time in (uniform_, erfinv_, mul_, add_, clamp_). Threads default to 1 and 2. Target:
ratio <= 1.0.
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


def erfinv(m, shape):
    x = m.empty(*shape).uniform_(-1, 1, generator=m.Generator().manual_seed(0))
    return lambda: m.erfinv(x)


def trunc_normal(m):
    w = m.empty(3072, 768)
    return lambda: m.nn.init.trunc_normal_(w, std=0.02)


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
            suite.bench("erfinv", "%s t=%d" % (shape, n), lambda m, s=shape: erfinv(m, s), TARGET)
        suite.bench("trunc_normal_", "(3072, 768) std=0.02 t=%d" % n, trunc_normal, TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
