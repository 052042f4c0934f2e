"""torch.func.vmap: a small MLP over 1000 samples, and per-sample gradients of its loss.

mlp forward: vmap of an 8-32-4 MLP (functional_call) with softmax over a batch of 1000 samples, each sample a
vector (pyctorch: the batching rules of Note [vmap batching rules], one call per op on the physical tensors).
per-sample grads: vmap(grad(loss), in_dims=(None, 0)) over the same batch, as in torch's per-sample-gradients
tutorial. Target: <= 3.0x torch (the rules run in Python around each op).
"""
import sys

import numpy as np

from _harness import setup

TARGET = 3.0


def _mlp(m):
    rs = np.random.RandomState(0)
    model = m.nn.Sequential(m.nn.Linear(8, 32), m.nn.ReLU(), m.nn.Linear(32, 4))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = m.tensor(rs.randn(1000, 8).astype(np.float32))
    return model, params, x


def forward(m):
    model, params, x = _mlp(m)
    f = m.func.vmap(lambda a: m.func.functional_call(model, params, (a,)).softmax(-1))
    return lambda: f(x)


def per_sample_grads(m):
    model, params, x = _mlp(m)

    def loss(p, a):
        return m.func.functional_call(model, p, (a,)).logsumexp(-1)
    g = m.func.vmap(m.func.grad(loss), in_dims=(None, 0))
    return lambda: g(params, x)


def main():
    args, suite = setup("vmap", __doc__)
    suite.bench("vmap mlp forward", "8-32-4 B=1000", forward, target=TARGET)
    suite.bench("vmap(grad) per-sample", "8-32-4 B=1000", per_sample_grads, target=TARGET)
    return suite.finish()


if __name__ == "__main__":
    sys.exit(main())
