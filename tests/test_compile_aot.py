"""torch.compile's backward built ahead of time (Note [AOT backward] in pyctorch/_inductor/aot.py): a captured
graph that needs gradients runs as a forward graph and a backward graph recorded from the derivative formulas,
both compiled (fused by inductor), with eager's numbers."""
import math

import numpy as np
import pytest

import pyctorch
from pyctorch.testing import assert_close

try:
    import torch as real_torch
except ImportError:  # the comparisons with torch are skipped; the others run
    real_torch = None

nn, F = pyctorch.nn, pyctorch.nn.functional


def _compiled_of(f):
    """The backend's callable of the newest entry of a compiled module or function."""
    cc = f._compiled_call if isinstance(f, nn.Module) else f._compiled_callable
    return cc.entries[-1].compiled


def _is_aot(f):
    return hasattr(_compiled_of(f), "backward_graph")


def _targets(gm):
    names = []
    for node in gm.graph.nodes:
        if node.op == "call_function":
            names.append(getattr(node.target, "__name__", str(node.target)))
        elif node.op == "call_method":
            names.append(node.target)
    return names


def tiny_gpt(m, vocab=32, block=8, embd=16, heads=2):
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = m.nn.LayerNorm(embd), m.nn.LayerNorm(embd)
            self.qkv, self.proj = m.nn.Linear(embd, 3 * embd), m.nn.Linear(embd, embd)
            self.mlp = m.nn.Sequential(m.nn.Linear(embd, 4 * embd), m.nn.GELU(approximate="tanh"),
                                       m.nn.Linear(4 * embd, embd))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(embd, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp(self.ln2(x))

    class GPT(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = m.nn.Embedding(vocab, embd), m.nn.Embedding(block, embd)
            self.blocks = m.nn.ModuleList([Block(), Block()])
            self.ln_f, self.head = m.nn.LayerNorm(embd), m.nn.Linear(embd, vocab, bias=False)

        def forward(self, idx, tgt):
            x = self.tok(idx) + self.pos(m.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            return m.nn.functional.cross_entropy(self.head(self.ln_f(x)).view(-1, vocab), tgt.view(-1))

    return GPT()


def _gpt_run(m, backend, steps=3):
    m.manual_seed(0)
    model = tiny_gpt(m)
    rs = np.random.RandomState(0)
    idx, tgt = m.tensor(rs.randint(0, 32, (4, 8))), m.tensor(rs.randint(0, 32, (4, 8)))
    opt = m.optim.AdamW(model.parameters(), lr=1e-2)
    forward = model if backend is None else m.compile(model, backend=backend)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = forward(idx, tgt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, forward, losses


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_gpt_training_matches_eager(backend):
    eager, _, eager_losses = _gpt_run(pyctorch, None)
    model, compiled, losses = _gpt_run(pyctorch, backend)
    assert _is_aot(compiled)
    run = _compiled_of(compiled)
    names = _targets(run.backward_graph)
    # the table's formulas, recorded: layer norm's, cross entropy's and attention's backward kernels
    assert "native_layer_norm_backward" in names and "_cross_entropy_loss_backward" in names
    assert any("flash_attention" in n and "backward" in n for n in names)
    for a, b in zip(eager.parameters(), model.parameters()):
        if backend == "aot_eager":  # the same formulas in the engine's order: eager's bits
            assert pyctorch.equal(a, b)
        else:
            assert_close(b, a)
    assert_close(losses, eager_losses)


def test_gpt_training_matches_torch():
    if real_torch is None:
        pytest.skip("torch is not installed: the comparison with torch is skipped")
    _, _, ours = _gpt_run(pyctorch, "inductor")
    _, _, theirs = _gpt_run(real_torch, None)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_output_node_is_the_compiled_function():
    model, compiled, _ = _gpt_run(pyctorch, "aot_eager", steps=1)
    rs = np.random.RandomState(1)
    idx, tgt = pyctorch.tensor(rs.randint(0, 32, (4, 8))), pyctorch.tensor(rs.randint(0, 32, (4, 8)))
    loss = compiled(idx, tgt)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    # no node of the ops' own: the graph's backward is one node over the parameters' accumulators
    assert all(n is None or n.name().endswith("AccumulateGrad") for n, _ in loss.grad_fn.next_functions)


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + pyctorch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * pyctorch.pow(x, 3.0))))


def test_backward_pointwise_chains_are_fused():
    pyctorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), NewGELU(), nn.Linear(64, 16))
    compiled = pyctorch.compile(model)
    x = pyctorch.randn(32, 16)
    compiled(x).square().mean().backward()
    got = [p.grad.clone() for p in model.parameters()]
    run = _compiled_of(compiled)
    # the forward's chain is one kernel writing its result only: the backward graph computes the chain's
    # intermediates again from the saved first linear's output, fused with the formulas that read them
    assert run.forward_graph.fused_kernels == 1 and run.backward_graph.fused_kernels >= 1
    kernel = next(n.target for n in run.forward_graph.graph.nodes if "pct_fused" in getattr(n.target, "__name__", ""))
    assert kernel.n_out == 1
    saved = len([n for n in run.backward_graph.graph.nodes if n.op == "placeholder"]) - 1  # less the gradient
    assert saved == 4  # the input, the first linear's output, the activation (read by a GEMM), the weight
    model.zero_grad()
    model(x).square().mean().backward()
    for g, p in zip(got, model.parameters()):
        assert_close(g, p.grad)


def test_dropout_draws_as_eager():
    def run(backend):
        pyctorch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Dropout(0.5), nn.Linear(32, 1))
        f = model if backend is None else pyctorch.compile(model, backend=backend)
        x = pyctorch.randn(16, 8)
        out = []
        for _ in range(3):
            model.zero_grad()
            loss = f(x).square().mean()
            loss.backward()
            out.append((loss.detach(), model[0].weight.grad.clone()))
        return f, out
    _, eager = run(None)
    compiled, ours = run("aot_eager")
    assert _is_aot(compiled)
    for (la, ga), (lb, gb) in zip(eager, ours):
        assert pyctorch.equal(la, lb) and pyctorch.equal(ga, gb)


def test_input_with_history_and_uneven_outputs():
    def fn(x, w):
        y = (x @ w).sin()
        return y, y.argmax(-1), (x * 3).exp()
    compiled = pyctorch.compile(fn, backend="aot_eager")
    pyctorch.manual_seed(0)
    a = pyctorch.randn(5, 4, requires_grad=True)
    w = pyctorch.randn(4, 3, requires_grad=True)
    grads = []
    for f in (fn, compiled, compiled):
        y, idx, z = f(a * 2, w)  # an input with history outside the graph
        assert idx.dtype == pyctorch.int64 and not idx.requires_grad
        grads.append(pyctorch.autograd.grad(y.sum(), (a, w)))  # z unused: its gradient is zeros
    assert _is_aot(compiled)
    for got in grads[1:]:
        for g, e in zip(got, grads[0]):
            assert pyctorch.equal(g, e)


def test_gradients_summed_where_values_meet():
    def fn(x):
        return x * x + x.sin() + x.exp().sum()  # three paths back to x: the engine's adds are in the graph
    compiled = pyctorch.compile(fn, backend="aot_eager")
    x = pyctorch.randn(6, requires_grad=True)
    expected, = pyctorch.autograd.grad(fn(x).sum(), x)
    compiled(x)
    got, = pyctorch.autograd.grad(compiled(x).sum(), x)
    assert _is_aot(compiled) and "add" in _targets(_compiled_of(compiled).backward_graph)
    assert pyctorch.equal(got, expected)
    np.testing.assert_allclose(got.numpy(), (2 * x + x.cos() + 6 * x.exp()).detach().numpy(), rtol=1e-6)


def test_double_backward_raises_as_torch():
    compiled = pyctorch.compile(lambda x: (x ** 3).sum(), backend="aot_eager")
    x = pyctorch.randn(4, requires_grad=True)
    compiled(x)
    g, = pyctorch.autograd.grad(compiled(x), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), (3 * x ** 2).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        g.sum().backward()


def test_saved_value_written_in_place_raises():
    def fn(x, w):
        return (x * w).sum()
    w = pyctorch.randn(4, requires_grad=True)
    messages = []
    for f in (fn, pyctorch.compile(fn, backend="aot_eager")):
        for _ in range(2):
            x = pyctorch.randn(4)
            loss = f(x, w)
            x.add_(1)  # mul saved x for w's gradient
            with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
                loss.backward()
            messages.append(str(info.value))
    assert len(messages) == 4


def test_in_place_ops_on_the_graphs_own_values_and_state():
    def run(backend):
        pyctorch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 1))
        f = model if backend is None else pyctorch.compile(model, backend=backend)
        x = pyctorch.randn(6, 4)
        for _ in range(3):  # relu_ on an intermediate; batch norm's counter and running statistics
            model.zero_grad()
            f(x).sum().backward()
        return f, model
    _, eager = run(None)
    compiled, model = run("aot_eager")
    assert _is_aot(compiled)
    assert int(model[1].num_batches_tracked) == 3  # the trial run's writes were undone
    for a, b in zip(list(eager.parameters()) + list(eager.buffers()), list(model.parameters()) + list(model.buffers())):
        assert pyctorch.equal(a, b)
    for a, b in zip(eager.parameters(), model.parameters()):
        assert pyctorch.equal(a.grad, b.grad)


def test_graphs_it_cannot_take_run_as_before():
    import pyctorch._inductor.aot as aot

    def fn(x):
        x.mul_(2)  # writes into an input that needs a gradient
        return x.sin()
    compiled = pyctorch.compile(fn, backend="aot_eager")
    a = pyctorch.randn(5, requires_grad=True)
    grads = []
    for f in (fn, compiled, compiled):
        grads.append(pyctorch.autograd.grad(f(a * 1).sum(), a)[0])
    assert not _is_aot(compiled) and "in-place" in aot.last_refusal
    assert pyctorch.equal(grads[1], grads[0]) and pyctorch.equal(grads[2], grads[0])
    with pyctorch.no_grad():  # nothing to differentiate: no pair
        f = pyctorch.compile(lambda t: t.sin() * 2)
        f(pyctorch.randn(3, requires_grad=True))
    assert not _is_aot(f)


def test_trial_run_leaves_the_callers_tensors_alone():
    def fn(x, w):
        x.add_(1)  # an input written in place, then saved by mul for w's gradient
        return (x * w).sum()
    w = pyctorch.randn(4, requires_grad=True)
    compiled = pyctorch.compile(fn, backend="aot_eager")
    x = pyctorch.zeros(4)
    losses = [compiled(x, w) for _ in range(3)]
    assert _is_aot(compiled)
    assert x.tolist() == [3.0] * 4  # one write per call: none from the trial run
    for loss in losses[-1:]:  # the newest call's graph: x as saved, no version error
        g, = pyctorch.autograd.grad(loss, w)
        assert g.tolist() == [3.0] * 4
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        pyctorch.autograd.grad(losses[0], w)  # as eager: x was written again after this call saved it
    first = pyctorch.compile(fn, backend="aot_eager")
    y = pyctorch.zeros(4)
    g, = pyctorch.autograd.grad(first(y, w), w)  # the first call's own graph survives the trial run
    assert g.tolist() == [1.0] * 4


def test_formula_chains_of_the_backward_are_fused():
    pyctorch.manual_seed(0)
    w = pyctorch.randn(8, 8, requires_grad=True)

    def fn(x):
        return (x.sin() @ w).tanh().sum()  # single pointwise ops forward; their formulas chain backward
    compiled = pyctorch.compile(fn)
    x = pyctorch.randn(4, 8, requires_grad=True)
    expected = pyctorch.autograd.grad(fn(x), (x, w))
    compiled(x)
    got = pyctorch.autograd.grad(compiled(x), (x, w))
    assert _compiled_of(compiled).backward_graph.fused_kernels >= 1
    for g, e in zip(got, expected):
        assert_close(g, e)
    xs, ws = x.detach().numpy().astype(np.float64), w.detach().numpy().astype(np.float64)
    t = np.tanh(np.sin(xs) @ ws)
    np.testing.assert_allclose(got[1].numpy(), np.sin(xs).T @ (1 - t ** 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0].numpy(), ((1 - t ** 2) @ ws.T) * np.cos(xs), rtol=1e-5, atol=1e-6)


def test_autocast_around_backward_leaves_the_graph_as_recorded():
    pyctorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    compiled = pyctorch.compile(model)
    x = pyctorch.randn(4, 8)
    compiled(x)
    loss = compiled(x).sum()
    assert _is_aot(compiled)
    with pyctorch.autocast("cpu", dtype=pyctorch.bfloat16):
        loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(got, model.parameters()):
        assert g.dtype == pyctorch.float32
        assert_close(g, p.grad)
    with pyctorch.autocast("cpu", dtype=pyctorch.bfloat16):  # captured under autocast: the recorder's backward
        f = pyctorch.compile(lambda a: (a @ a.t()).sum())
        f(pyctorch.randn(3, 3, requires_grad=True))
    assert not _is_aot(f)


def _lstm_grads(f, model, x):
    model.zero_grad()
    f(x)[0].square().mean().backward()
    return [p.grad.clone() for p in model.parameters()]


def test_lstm_indexing_backward_is_recorded():
    # the projection of every step is read by x[t]: its backward adds into zeros through _C._index_accumulate,
    # which reports itself to the trace
    pyctorch.manual_seed(0)
    model = nn.LSTM(8, 16, num_layers=2, batch_first=True)
    x = pyctorch.randn(4, 5, 8)
    expected = _lstm_grads(model, model, x)
    compiled = pyctorch.compile(model, backend="aot_eager")
    _lstm_grads(compiled, model, x)
    got = _lstm_grads(compiled, model, x)
    assert _is_aot(compiled) and "_index_accumulate" in _targets(_compiled_of(compiled).backward_graph)
    for g, e in zip(got, expected):
        assert pyctorch.equal(g, e)


def test_a_write_the_trace_cannot_see_refuses_the_pair(monkeypatch):
    import pyctorch._inductor.aot as aot
    real = pyctorch._C._index_accumulate

    def unseen(t, key, value):  # the same write, with the trace hook off
        hook = pyctorch._C._set_op_trace_hook(None)
        try:
            return real(t, key, value)
        finally:
            pyctorch._C._set_op_trace_hook(hook)
    monkeypatch.setattr(pyctorch._C, "_index_accumulate", unseen)
    pyctorch.manual_seed(0)
    model = nn.LSTM(8, 16, batch_first=True)
    x = pyctorch.randn(4, 5, 8)
    expected = _lstm_grads(model, model, x)
    compiled = pyctorch.compile(model, backend="aot_eager")
    _lstm_grads(compiled, model, x)
    assert not _is_aot(compiled) and "could not see" in aot.last_refusal
    for g, e in zip(_lstm_grads(compiled, model, x), expected):
        assert pyctorch.equal(g, e)


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_transformer_layer_values_made_inside_composites(dropout):
    # matmul copies its strided 3-d input before the mm; the mm's backward reads that copy: made again by the
    # same op call in the backward graph (never a random one: with dropout, values must still be eager's)
    def run(backend):
        pyctorch.manual_seed(0)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=dropout, batch_first=True)
        f = layer if backend is None else pyctorch.compile(layer, backend=backend)
        x = pyctorch.randn(2, 3, 16)
        out = []
        for _ in range(3):
            layer.zero_grad()
            loss = f(x).square().mean()
            loss.backward()
            out.append([loss.detach()] + [p.grad.clone() for p in layer.parameters()])
        return f, out
    _, eager = run(None)
    compiled, ours = run("aot_eager")
    assert _is_aot(compiled) and "_op_again" in _targets(_compiled_of(compiled).backward_graph)
    # the same dropout draws; the forward without recording folds the strided matmul otherwise (rounding)
    for a, b in zip(eager, ours):
        for x, y in zip(a, b):
            assert_close(y, x, rtol=1e-5, atol=1e-7)


def test_engine_casts_are_in_the_graph():
    def fn(x, w):
        return (x * w).sin().sum()  # float32 * float64: x's gradient comes back float64, the engine casts it
    compiled = pyctorch.compile(fn, backend="aot_eager")
    x = pyctorch.randn(5, requires_grad=True)
    w = pyctorch.randn(5, dtype=pyctorch.float64, requires_grad=True)
    expected = pyctorch.autograd.grad(fn(x, w), (x, w))
    compiled(x, w)
    got = pyctorch.autograd.grad(compiled(x, w), (x, w))
    assert _is_aot(compiled) and "to" in _targets(_compiled_of(compiled).backward_graph)
    assert got[0].dtype == pyctorch.float32 and got[1].dtype == pyctorch.float64
    for g, e in zip(got, expected):
        assert pyctorch.equal(g, e)


def test_only_elementwise_and_layout_ops_are_made_again():
    from pyctorch._inductor.aot import _Producers
    names = {entry["name"] for k, entry in enumerate(pyctorch._C._op_table()) if k in _Producers().redoable}
    assert {"reshape", "contiguous", "clone", "exp", "mul"} <= names
    # kernels that write state (batch norm's running statistics), draw random numbers, or are costly: never redone
    assert not names & {"native_batch_norm", "bernoulli", "normal", "rand", "randn", "mm", "addmm", "convolution"}
