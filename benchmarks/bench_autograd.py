"""Autograd overhead: forward + backward of tiny graphs, and of a small MLP.

Cases: a chain of 1, 10 and 100 ops on a 1-element float32 tensor that requires
grad (forward, then .backward()), and a 2-layer MLP (batch 8, 64 -> 64 -> 10,
tanh, mean-squared loss). Target: candidate time / torch time <= 0.5 for the
tiny graphs (torch's engine hands every backward to a worker thread; ours runs
on the calling thread with one node object per op).
"""
import sys

from _harness import setup, thread_list

TARGET = 0.5


def chain(m, length, device):
    x = m.ones(1, device=device, requires_grad=True)

    def run():
        y = x
        for _ in range(length):
            y = y * 1.0001
        y.sum().backward()
        x.grad = None
    return run


def mlp(m, device):
    g = m.Generator().manual_seed(0)
    w1 = (m.randn(64, 64, generator=g) * 0.1).to(device).requires_grad_()
    w2 = (m.randn(64, 10, generator=g) * 0.1).to(device).requires_grad_()
    x = m.randn(8, 64, generator=g).to(device)
    t = m.randn(8, 10, generator=g).to(device)

    def run():
        loss = (((x @ w1).tanh() @ w2 - t) ** 2).mean()
        loss.backward()
        w1.grad = None
        w2.grad = None
    return run


def main():
    args, suite = setup("autograd", __doc__, threads="1")
    for n in thread_list(args):
        suite.set_threads(n)
        for length in (1, 10, 100):
            suite.bench("chain fwd+bwd", "ops=%d threads=%d" % (length, n),
                        lambda m, length=length: chain(m, length, suite.device), target=TARGET)
        suite.bench("MLP 8x64-64-10 fwd+bwd", "threads=%d" % n, lambda m: mlp(m, suite.device))
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
