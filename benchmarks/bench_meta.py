"""Ops on the meta device (shapes and dtypes only, no data): building and running a model's shapes before loading
weights. pyctorch runs each CPU kernel on data-free stand-ins and skips its products and loops (Note [Shapes-only
runs]); torch runs meta kernels. A meta op should cost what its checks cost, whatever its size.

Target: candidate time / torch time <= 1.5 (torch's meta kernels are shape functions in C++).
"""
import sys

from _harness import setup

TARGET = 1.5

# name -> builder(module) returning the zero-argument callable to time
OPS = {
    "mm 2048":           lambda m: (lambda a: (lambda: a @ a))(m.empty(2048, 2048, device="meta")),
    "bmm 8x1024":        lambda m: (lambda a: (lambda: m.bmm(a, a)))(m.empty(8, 1024, 1024, device="meta")),
    "linear 4096":       lambda m: (lambda x, w: (lambda: m.nn.functional.linear(x, w)))(
                             m.empty(64, 4096, device="meta"), m.empty(4096, 4096, device="meta")),
    "conv2d 8x64x128":   lambda m: (lambda x, w: (lambda: m.nn.functional.conv2d(x, w, padding=1)))(
                             m.empty(8, 64, 128, 128, device="meta"), m.empty(64, 64, 3, 3, device="meta")),
    "a * b + a 4M":      lambda m: (lambda a: (lambda: a * a + a))(m.empty(2048, 2048, device="meta")),
    "softmax 4M":        lambda m: (lambda a: (lambda: m.softmax(a, -1)))(m.empty(2048, 2048, device="meta")),
    "Linear(4096) init": lambda m: (lambda: m.nn.Linear(4096, 4096, device="meta")),
}


def main():
    args, suite = setup("meta", __doc__, threads="1")
    for name, op in OPS.items():
        suite.bench(name, "meta", op, target=TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
