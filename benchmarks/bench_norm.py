"""Normalization layers, softmax, cross-entropy and embedding (float32), forward and forward+backward.

Cases: LayerNorm (32*128, 768) and (8*1024, 1024); softmax (4096, 1024) over the last dim;
cross_entropy with class indices, (4096, 1000) and (2048, 32000); BatchNorm2d (8, 64, 56, 56)
in training mode; Embedding 50257x768 looked up with (8, 256) indices. "fwd+bwd" runs the
forward, then backward of the sum of the output (of the loss for cross_entropy) and clears the
gradients. Also log_softmax on short rows (2048, 96); linalg.vector_norm of small tensors and
clip_grad_norm_ over the 50 gradients of 25 Linear(64, 64) layers (per-call overhead); mean
over short dims (forward only). Threads default to 1 and 2. Target: ratio <= 1.0.
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


def log_softmax(m, rows, d, backward):
    g = m.Generator().manual_seed(0)
    x = m.randn(rows, d, generator=g).requires_grad_(backward)
    if not backward:
        return lambda: m.log_softmax(x, -1)

    def run():
        m.log_softmax(x, -1).sum().backward()
        x.grad = None
    return run


def vector_norm(m, shape, dim):
    x = m.randn(*shape, generator=m.Generator().manual_seed(0))
    return lambda: m.linalg.vector_norm(x, dim=dim)


def clip_grad_norm(m, layers, width):
    m.manual_seed(0)
    net = m.nn.Sequential(*[m.nn.Linear(width, width) for _ in range(layers)])
    for p in net.parameters():
        p.grad = m.randn(*p.shape)
    params = list(net.parameters())
    return lambda: m.nn.utils.clip_grad_norm_(params, 1e9)


def mean(m, shape, dim):
    x = m.randn(*shape, generator=m.Generator().manual_seed(0))
    return lambda: x.mean(dim)


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
    cases.append(("log_softmax", "(2048, 96) dim=-1", lambda m, b: log_softmax(m, 2048, 96, b)))
    forward_only = [
        ("linalg.vector_norm", "(64, 64)", lambda m: vector_norm(m, (64, 64), None)),
        ("linalg.vector_norm", "(256, 256)", lambda m: vector_norm(m, (256, 256), None)),
        ("linalg.vector_norm", "(256, 256) dim=1", lambda m: vector_norm(m, (256, 256), 1)),
        ("clip_grad_norm_", "50 grads of 25 Linear(64, 64)", lambda m: clip_grad_norm(m, 25, 64)),
        ("mean", "(64, 512, 8) dim=-1", lambda m: mean(m, (64, 512, 8), -1)),
        ("mean", "(64, 512, 8) dim=1", lambda m: mean(m, (64, 512, 8), 1)),
        ("mean", "(4096, 16) dim=1", lambda m: mean(m, (4096, 16), 1)),
    ]
    for n in thread_list(args):
        suite.set_threads(n)
        for name, params, make in cases:
            for backward in (False, True):
                suite.bench("%s %s" % (name, "fwd+bwd" if backward else "fwd"), "%s t=%d" % (params, n),
                            lambda m, make=make, backward=backward: make(m, backward), TARGET)
        for name, params, make in forward_only:
            suite.bench(name, "%s t=%d" % (params, n), make, TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
