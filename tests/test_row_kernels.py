"""Row kernels (Note [Row kernels] in pyctorch/_inductor/row_kernels.py): last-dim reductions fused with the
pointwise ops around them (softmax, RMS norm and layer norm written in Python) where a graph runs without
recording: compiled under no_grad, and the two graphs of an ahead-of-time backward."""
import numpy as np
import pytest

import pyctorch
from pyctorch.testing import assert_close

try:
    import torch as real_torch
except ImportError:  # the comparisons with torch are skipped; the others run
    real_torch = None


def softmax(m, x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def rms_norm(m, x, w):
    return x * m.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def layer_norm(m, x, w, b):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d * m.rsqrt(var + 1e-5) * w + b


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _kernels(compiled):
    entry = compiled._compiled_callable.entries[-1]
    graph = getattr(entry.compiled, "forward_graph", entry.gm)
    return [n.target for n in graph.graph.nodes if type(n.target).__name__ == "RowKernel"]


def _compiled_no_grad(fn, *args):
    cf = pyctorch.compile(fn)
    with pyctorch.no_grad():
        cf(*args)
        return cf, cf(*args)


@pytest.mark.parametrize("shape", [(7, 33), (2, 3, 16), (5, 1), (512, 128)])
@pytest.mark.parametrize("threads", [1, 2])
def test_softmax_is_one_row_kernel(shape, threads):
    before = pyctorch.get_num_threads()
    pyctorch.set_num_threads(threads)
    try:
        values = np.random.RandomState(0).randn(*shape).astype(np.float32) * 4
        x = pyctorch.tensor(values)
        cf, got = _compiled_no_grad(lambda t: softmax(pyctorch, t), x)
    finally:
        pyctorch.set_num_threads(before)
    assert len(_kernels(cf)) == 1
    np.testing.assert_allclose(got.numpy(), _np_softmax(values.astype(np.float64)), rtol=2e-6, atol=1e-7)
    assert_close(got, pyctorch.softmax(x, -1))
    if real_torch is not None:
        np.testing.assert_allclose(got.numpy(), real_torch.softmax(real_torch.tensor(values), -1).numpy(),
                                   rtol=2e-6, atol=1e-7)


def test_nan_and_infinities_propagate_as_eager():
    x = pyctorch.tensor([[1.0, float("nan"), 2.0], [float("-inf"), 0.0, 1.0], [3.0, float("inf"), 0.0],
                         [-1.0, -2.0, -3.0]])

    def f(t):
        return t.amax(-1, keepdim=True) + t.amin(-1, keepdim=True) * 2 + (t * 0.5).sum(-1, keepdim=True)
    cf, got = _compiled_no_grad(f, x)
    assert len(_kernels(cf)) == 1
    expected = f(x)
    assert pyctorch.equal(got.isnan(), expected.isnan())
    ok = ~expected.isnan()
    assert pyctorch.equal(got[ok], expected[ok])
    assert got.isnan()[0, 0] and got[1, 0] == float("-inf") and got[2, 0] == float("inf")


def test_rms_norm_with_a_weight_is_one_row_kernel():
    rs = np.random.RandomState(1)
    xv, wv = rs.randn(4, 6, 32).astype(np.float32), rs.randn(32).astype(np.float32)
    x, w = pyctorch.tensor(xv), pyctorch.tensor(wv)
    cf, got = _compiled_no_grad(lambda a, b: rms_norm(pyctorch, a, b), x, w)
    assert len(_kernels(cf)) == 1
    x64 = xv.astype(np.float64)
    expected = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * wv
    np.testing.assert_allclose(got.numpy(), expected, rtol=2e-6, atol=2e-6)


def test_layer_norm_two_passes_in_one_kernel():
    rs = np.random.RandomState(2)
    xv = (rs.randn(16, 48) * 3 + 5).astype(np.float32)
    wv, bv = rs.randn(48).astype(np.float32), rs.randn(48).astype(np.float32)
    args = [pyctorch.tensor(v) for v in (xv, wv, bv)]
    cf, got = _compiled_no_grad(lambda *a: layer_norm(pyctorch, *a), *args)
    assert len(_kernels(cf)) == 1
    assert_close(got, pyctorch.nn.functional.layer_norm(args[0], (48,), args[1], args[2]), rtol=1e-5, atol=1e-5)
    x64 = xv.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    expected = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * wv + bv
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_a_per_row_output_and_a_row_operand():
    rs = np.random.RandomState(3)
    xv, sv = rs.randn(10, 20).astype(np.float32), rs.rand(10, 1).astype(np.float32) + 0.5
    x, s = pyctorch.tensor(xv), pyctorch.tensor(sv)

    def f(a, scale):
        total = (a * scale).sum(-1, keepdim=True)   # a row operand inside the reduction
        return total * 2, a / total                   # a per-row output and an element output
    cf, (t, y) = _compiled_no_grad(f, x, s)
    assert len(_kernels(cf)) == 1
    tot = (xv.astype(np.float64) * sv).sum(-1, keepdims=True)
    np.testing.assert_allclose(t.numpy(), tot * 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.numpy(), xv / tot, rtol=1e-4, atol=1e-5)
    assert tuple(t.shape) == (10, 1) and tuple(y.shape) == (10, 20)


def test_training_through_the_pair_fuses_norms_and_matches_eager():
    class RMSNorm(pyctorch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = pyctorch.nn.Parameter(pyctorch.ones(n))

        def forward(self, x):
            return rms_norm(pyctorch, x, self.weight)

    def run(compiled):
        pyctorch.manual_seed(0)
        model = pyctorch.nn.Sequential(pyctorch.nn.Linear(16, 32), RMSNorm(32), pyctorch.nn.Linear(32, 4))
        f = pyctorch.compile(model) if compiled else model
        x = pyctorch.randn(8, 16)
        opt = pyctorch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = softmax(pyctorch, f(x)).square().sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return f, model, losses
    _, eager, eager_losses = run(False)
    compiled, model, losses = run(True)
    entry = compiled._compiled_call.entries[-1]
    assert hasattr(entry.compiled, "backward_graph")
    assert any(type(n.target).__name__ == "RowKernel" for n in entry.compiled.forward_graph.graph.nodes)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for a, b in zip(eager.parameters(), model.parameters()):
        assert_close(b, a, rtol=1e-5, atol=1e-6)


def test_an_expanded_row_value_is_read_as_a_row_operand():
    # a sum's backward gives grad.expand(shape) and casts to the dtype it already has: without recording, the
    # pointwise ops read the row value itself, so the chain stays one kernel
    x = pyctorch.randn(6, 10)

    def f(t):
        s = t.amax(-1, keepdim=True).expand(6, 10).to(pyctorch.float32)
        return (t * 2 + s).exp() * 0.5
    cf, got = _compiled_no_grad(f, x)
    graph = cf._compiled_callable.entries[-1].gm.graph
    names = [getattr(n.target, "__name__", n.target) for n in graph.nodes if n.op in ("call_function", "call_method")]
    assert len(_kernels(cf)) == 1 and "expand" not in names and "to" not in names
    assert_close(got, f(x))
    xv = x.numpy().astype(np.float64)
    np.testing.assert_allclose(got.numpy(), np.exp(xv * 2 + xv.max(-1, keepdims=True)) * 0.5, rtol=2e-6)
