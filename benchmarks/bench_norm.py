"""Normalization layers, softmax, cross-entropy and embedding (float32), forward and forward+backward.

Cases: LayerNorm (32*128, 768) and (8*1024, 1024); softmax (4096, 1024) over the last dim;
cross_entropy with class indices, (4096, 1000) and (2048, 32000); BatchNorm2d (8, 64, 56, 56)
in training mode; Embedding 50257x768 looked up with (8, 256) indices. "fwd+bwd" runs the
forward, then backward of the sum of the output (of the loss for cross_entropy) and clears the
gradients. Threads default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

from _harness import setup, thread_list

TARGET = 1.0


def layer_norm(m, rows, d, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(rows, d, generator=g).requires_grad_(backward)
    ln = m.nn.LayerNorm(d)
    if not backward:
        def run():
            with m.no_grad():
                ln(x)
        return run

    def run():
        ln(x).sum().backward()
        x.grad = None
        ln.weight.grad = None
        ln.bias.grad = None
    return run


def softmax(m, rows, d, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(rows, d, generator=g).requires_grad_(backward)
    if not backward:
        return lambda: m.softmax(x, -1)
    w = m.randn(rows, d, generator=g)

    def run():
        (m.softmax(x, -1) * w).sum().backward()
        x.grad = None
    return run


def cross_entropy(m, rows, classes, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(rows, classes, generator=g).requires_grad_(backward)
    t = m.randint(0, classes, (rows,), generator=g)
    f = m.nn.functional.cross_entropy
    if not backward:
        return lambda: f(x, t)

    def run():
        f(x, t).backward()
        x.grad = None
    return run


def batch_norm(m, shape, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(*shape, generator=g).requires_grad_(backward)
    bn = m.nn.BatchNorm2d(shape[1])
    if not backward:
        def run():
            with m.no_grad():
                bn(x)
        return run

    def run():
        bn(x).sum().backward()
        x.grad = None
        bn.weight.grad = None
        bn.bias.grad = None
    return run


def embedding(m, vocab, dim, idx_shape, backward):
    g = m.Generator().manual_seed(0)
    emb = m.nn.Embedding(vocab, dim)
    idx = m.randint(0, vocab, idx_shape, generator=g)
    if not backward:
        def run():
            with m.no_grad():
                emb(idx)
        return run

    def run():
        emb(idx).sum().backward()
        emb.weight.grad = None
    return run


def main():
    args, suite = setup("norm", __doc__, threads="1,2")
    cases = [
        ("LayerNorm", "(4096, 768)", lambda m, b: layer_norm(m, 32 * 128, 768, b)),
        ("LayerNorm", "(8192, 1024)", lambda m, b: layer_norm(m, 8 * 1024, 1024, b)),
        ("softmax", "(4096, 1024) dim=-1", lambda m, b: softmax(m, 4096, 1024, b)),
        ("cross_entropy", "(4096, 1000)", lambda m, b: cross_entropy(m, 4096, 1000, b)),
        ("cross_entropy", "(2048, 32000)", lambda m, b: cross_entropy(m, 2048, 32000, b)),
        ("BatchNorm2d", "(8, 64, 56, 56) train", lambda m, b: batch_norm(m, (8, 64, 56, 56), b)),
        ("Embedding", "50257x768 idx (8, 256)", lambda m, b: embedding(m, 50257, 768, (8, 256), b)),
    ]
    for n in thread_list(args):
        suite.set_threads(n)
        for name, params, make in cases:
            for backward in (False, True):
                suite.bench("%s %s" % (name, "fwd+bwd" if backward else "fwd"), "%s t=%d" % (params, n),
                            lambda m, make=make, backward=backward: make(m, backward), TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
