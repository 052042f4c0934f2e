"""Per-op dispatch overhead on tiny float32 tensors (1 and 100 elements).

Target: candidate time / torch time <= 0.5 (a C core with a thin Python
binding should beat torch's dispatcher by 2x on tiny tensors).
"""
import sys

from _harness import rand, setup, thread_list

TARGET = 0.5
SIZES = (1, 100)

# name -> builder(module, a, b) returning the zero-argument callable to time
OPS = {
    "a + b":       lambda m, a, b: (lambda: a + b),
    "a.add_(b)":   lambda m, a, b: (lambda: a.add_(b)),
    "a.sum()":     lambda m, a, b: (lambda: a.sum()),
    "a[0]":        lambda m, a, b: (lambda: a[0]),
    "a.view(-1)":  lambda m, a, b: (lambda: a.view(-1)),
}


def main():
    args, suite = setup("overhead", __doc__, threads="1")
    for n in thread_list(args):
        suite.set_threads(n)
        for size in SIZES:
            for name, op in OPS.items():
                def make(m, op=op, size=size):
                    a = rand(m, (size,), suite.device)
                    b = rand(m, (size,), suite.device)
                    return op(m, a, b)
                suite.bench(name, "numel=%d threads=%d" % (size, n), make,
                            target=TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
