"""torch.compile: captured graphs replayed under guards, recompilation, graph breaks, explain and TORCH_LOGS.

The compiled results are compared with eager pyctorch bit for bit (a graph runs the same kernels in the same
order), and a compiled training run with torch's when torch is installed."""
import operator
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, requires_torch

if HAVE_TORCH:
    import torch

nn, F = pyctorch.nn, pyctorch.nn.functional
dynamo = pyctorch._dynamo


@pytest.fixture(autouse=True)
def _default_compile_state():
    """Each test starts from torch's defaults: the default stance and recompile limit, and no garbage left whose
    finalizers could run inside a capture (tests count the graphs their captures make)."""
    import gc
    gc.collect()
    limit = dynamo.config.recompile_limit
    dynamo.config.recompile_limit = 8
    with pyctorch.compiler.set_stance("default"):
        yield
    dynamo.config.recompile_limit = limit


class CountingBackend:
    """A backend that counts its compilations and the runs of what it returned."""

    def __init__(self):
        self.graphs, self.runs = [], 0

    def __call__(self, gm, example_inputs):
        self.graphs.append((gm, list(example_inputs)))

        def run(*args):
            self.runs += 1
            return gm.forward(*args)
        return run


def _mlp():
    pyctorch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(approximate="tanh"), nn.LayerNorm(16), nn.Dropout(0.25),
                         nn.Linear(16, 3))


def test_module_values_and_gradients_match_eager_bit_for_bit():
    model, twin = _mlp(), _mlp()
    compiled = pyctorch.compile(twin, backend=CountingBackend())
    x = pyctorch.randn(5, 6)
    for step in range(3):
        pyctorch.manual_seed(step)  # dropout draws the same numbers in the graph as eagerly
        y0 = model(x)
        pyctorch.manual_seed(step)
        y1 = compiled(x)
        assert pyctorch.equal(y0, y1)
        y0.square().sum().backward()
        y1.square().sum().backward()
        for p, q in zip(model.parameters(), twin.parameters()):
            assert pyctorch.equal(p.grad, q.grad)
    backend = compiled._compiled_call.backend
    assert len(backend.graphs) == 1 and backend.runs == 2  # the first call is the capture run itself


def test_the_graph_holds_table_ops_and_lints():
    backend = CountingBackend()
    compiled = pyctorch.compile(_mlp(), backend=backend)
    x = pyctorch.randn(2, 6)
    compiled(x)
    gm, example = backend.graphs[0]
    gm.graph.lint()
    assert [n.op for n in gm.graph.nodes].count("placeholder") == 1 and example[0] is x
    code = gm.code
    assert "torch.addmm" in code and "torch.native_layer_norm" in code and "torch.gelu" in code
    assert "self_0_weight" in code  # parameters are attributes of the graph module, by their names


def test_guards_recompile_on_shape_dtype_grad_mode_and_module_state():
    backend = CountingBackend()
    model = _mlp().eval()
    compiled = pyctorch.compile(model, backend=backend)
    x = pyctorch.randn(4, 6)
    compiled(x)
    compiled(x)
    assert len(backend.graphs) == 1
    compiled(pyctorch.randn(7, 6))
    assert len(backend.graphs) == 2  # a new shape
    compiled(x.double().float())
    assert len(backend.graphs) == 2  # same metadata: cached
    model.train()
    pyctorch.manual_seed(3)
    y1 = compiled(x)
    pyctorch.manual_seed(3)
    assert pyctorch.equal(y1, model(x)) and len(backend.graphs) == 3  # training mode: dropout now draws
    with pyctorch.no_grad():
        assert not compiled(x).requires_grad
    assert len(backend.graphs) == 4
    model[3].p = 0.5  # a plain attribute the graph depends on
    pyctorch.manual_seed(4)
    y2 = compiled(x)
    pyctorch.manual_seed(4)
    assert pyctorch.equal(y2, model(x)) and len(backend.graphs) == 5


SCALE = 2.0


def test_guards_on_arguments_globals_and_closures():
    global SCALE
    backend = CountingBackend()
    offset = [1.0]

    def make(shift):
        def f(x, n, flag=True):
            y = x * SCALE + n
            return (y + shift if flag else y - shift), n
        return f
    f = pyctorch.compile(make(offset[0]), backend=backend)
    x = pyctorch.ones(3)
    out, n = f(x, 1)
    assert out.tolist() == [4.0] * 3 and n == 1
    assert f(x, 2)[0].tolist() == [5.0] * 3 and len(backend.graphs) == 2
    assert f(x, 2, flag=False)[0].tolist() == [3.0] * 3 and len(backend.graphs) == 3
    assert f(x, 2)[0].tolist() == [5.0] * 3 and len(backend.graphs) == 3
    SCALE = 3.0
    try:
        assert f(x, 2)[0].tolist() == [6.0] * 3 and len(backend.graphs) == 4
    finally:
        SCALE = 2.0


def test_data_dependent_control_flow_is_a_graph_break_that_runs_eagerly():
    backend = CountingBackend()

    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1
    cf = pyctorch.compile(f, backend=backend)
    pos, neg = pyctorch.ones(3), -pyctorch.ones(3)
    assert cf(pos).tolist() == [3.0] * 3 and cf(neg).tolist() == [-3.0] * 3 and cf(pos).tolist() == [3.0] * 3
    assert backend.graphs == []  # never a graph that would have baked one branch in
    with pytest.raises(dynamo.exc.Unsupported, match="Data-dependent"):
        pyctorch.compile(f, fullgraph=True)(pos)


@pytest.mark.parametrize("body", [
    "return x * x.sum().item()",
    "return x[: int(x.max())]",
    "return x.new_zeros(x.nonzero().shape[0])",
    "return x.new_zeros(len(x[x > 0]))",
    "y = x * 2\n    y.backward(pyctorch.ones_like(y))\n    return x.grad",
    "return pyctorch.tensor(x.tolist()) + 1",
])
def test_each_kind_of_break_gives_eager_results(body):
    ns = {"pyctorch": pyctorch}
    exec(f"def f(x):\n    {body}\n", ns)
    f = ns["f"]
    backend = CountingBackend()
    cf = pyctorch.compile(f, backend=backend)
    for values in ([0.0, 2.0, 3.0], [1.0, -1.0, 1.0], [3.0, 1.0, 0.5]):
        x = pyctorch.tensor(values, requires_grad="backward" in body)
        expected = f(x.detach().requires_grad_(x.requires_grad))
        got = cf(x)
        assert got.shape == expected.shape and pyctorch.equal(got, expected)
    assert backend.graphs == []


def test_state_switches_inside_are_replayed_and_restored():
    def f(x):
        with pyctorch.no_grad():
            y = x * 2
        return x + y, y
    cf = pyctorch.compile(f)
    x = pyctorch.ones(2, requires_grad=True)
    for _ in range(2):
        z, y = cf(x)
        assert z.requires_grad and not y.requires_grad and pyctorch.is_grad_enabled()
    with pyctorch.autocast("cpu", dtype=pyctorch.bfloat16):
        for _ in range(2):
            assert cf(x)[0].dtype == pyctorch.float32

    def g(a, b):
        with pyctorch.autocast("cpu", dtype=pyctorch.bfloat16):
            c = a @ b
        return c.float() + 1
    cg = pyctorch.compile(g)
    a, b = pyctorch.randn(3, 4), pyctorch.randn(4, 2)
    for _ in range(2):
        assert pyctorch.equal(cg(a, b), g(a, b))
        assert not pyctorch.is_autocast_enabled("cpu")


def test_buffers_updated_in_place_follow_eager():
    pyctorch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    pyctorch.manual_seed(0)
    twin = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    compiled = pyctorch.compile(twin)
    for step in range(3):
        x = pyctorch.randn(2, 2, 6, 6)
        assert pyctorch.equal(model(x), compiled(x))
    assert pyctorch.equal(model[1].running_mean, twin[1].running_mean)
    assert int(twin[1].num_batches_tracked) == 3


def test_module_attribute_written_by_forward_is_a_break():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls
    model = Counter()
    compiled = pyctorch.compile(model)
    x = pyctorch.ones(2)
    assert [compiled(x).tolist()[0] for _ in range(4)] == [1.0, 2.0, 3.0, 4.0]


def test_indexing_inputs_and_outputs_structures():
    def f(d, k):
        x = d["x"]
        x[0] = 5.0
        return {"head": x[:2], "last": x[-1], "mask": x[x > 1], "k": k}
    cf = pyctorch.compile(f)
    for _ in range(3):
        a, b = pyctorch.arange(4.0), pyctorch.arange(4.0)
        got, expected = cf({"x": a}, "key"), f({"x": b}, "key")
        assert pyctorch.equal(a, b) and got["k"] == "key"
        for name in ("head", "last", "mask"):
            assert pyctorch.equal(got[name], expected[name])


def test_recompile_limit_then_eager_with_torch_warning():
    backend = CountingBackend()
    cf = pyctorch.compile(lambda x: x + 1, backend=backend)
    with dynamo.config.patch(recompile_limit=3), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 7):
            assert cf(pyctorch.zeros(n)).tolist() == [1.0] * n
    assert len(backend.graphs) == 3
    assert any("hit config.recompile_limit (3)" in str(w.message) for w in caught)


def test_stances_and_reset():
    backend = CountingBackend()
    cf = pyctorch.compile(lambda x: x - 1, backend=backend)
    with pyctorch.compiler.set_stance("force_eager"):
        cf(pyctorch.zeros(2))
    assert backend.graphs == []
    cf(pyctorch.zeros(2))
    with pyctorch.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            cf(pyctorch.zeros(3))
    with pyctorch.compiler.set_stance("eager_on_recompile"):
        assert cf(pyctorch.zeros(3)).tolist() == [-1.0] * 3
    assert len(backend.graphs) == 1
    dynamo.reset()
    cf(pyctorch.zeros(2))
    assert len(backend.graphs) == 2


def test_invalid_backend_and_nested_compiled_calls():
    with pytest.raises(dynamo.exc.InvalidBackend, match="Invalid backend: 'nope'"):
        pyctorch.compile(lambda x: x, backend="nope")
    inner_backend, outer_backend = CountingBackend(), CountingBackend()
    inner = pyctorch.compile(lambda x: x * 3, backend=inner_backend)
    outer = pyctorch.compile(lambda x: inner(x) + 1, backend=outer_backend)
    for _ in range(2):
        assert outer(pyctorch.ones(2)).tolist() == [4.0, 4.0]
    assert inner_backend.graphs == [] and len(outer_backend.graphs) == 1
    assert "mul" in outer_backend.graphs[0][0].code


def test_explain_reports_graphs_and_breaks():
    def ok(x):
        return (x.sin() + 1).relu()
    out = dynamo.explain(ok)(pyctorch.randn(3))
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 3
    assert "Graph Count: 1" in str(out)

    def broken(x):
        if x.sum() > 0:
            return x
        return -x
    out = dynamo.explain(broken)(pyctorch.randn(3))
    assert out.graph_count == 0 and out.graph_break_count == 1
    reason = out.break_reasons[0]
    assert "Data-dependent" in reason.reason and reason.user_stack[0].name == "broken"
    with pytest.warns(FutureWarning, match="deprecated"):
        assert dynamo.explain(ok, pyctorch.randn(3)).graph_count == 1


def test_torch_logs_print_breaks_and_recompiles():
    code = textwrap.dedent("""
        import pyctorch as torch
        def f(x):
            if x.sum() > 0:
                return x
            return x + 1
        g = torch.compile(lambda x: x * 2)
        torch.compile(f)(torch.ones(2))
        g(torch.ones(2)); g(torch.ones(3))
    """)
    # the environment is inherited (the sanitizer build's LD_PRELOAD with it), TORCH_LOGS set or cleared on top
    base = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    env = dict(base, TORCH_LOGS="graph_breaks,recompiles", PYTHONPATH=":".join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "[__graph_breaks] Graph break in user code at <string>:4" in out.stderr
    assert "Graph Break Reason: Data-dependent operation: bool()" in out.stderr
    assert "[__recompiles] Recompiling function <lambda>" in out.stderr
    assert "size mismatch at index 0. expected 2, actual 3" in out.stderr
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(base, PYTHONPATH=":".join(sys.path)), check=True)
    assert "__graph_breaks" not in quiet.stderr


def _tiny_gpt(m, compiled):
    nn_ = m.nn

    class Block(nn_.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.ln1, self.ln2, self.heads = nn_.LayerNorm(d), nn_.LayerNorm(d), heads
            self.qkv, self.proj = nn_.Linear(d, 3 * d), nn_.Linear(d, d)
            self.mlp = nn_.Sequential(nn_.Linear(d, 4 * d), nn_.GELU(approximate="tanh"), nn_.Linear(4 * d, d))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp(self.ln2(x))

    class GPT(nn_.Module):
        def __init__(self, vocab=17, d=32):
            super().__init__()
            self.tok, self.pos = nn_.Embedding(vocab, d), nn_.Embedding(16, d)
            self.blocks = nn_.Sequential(Block(), Block())
            self.head = nn_.Linear(d, vocab)

        def forward(self, idx, tgt):
            x = self.tok(idx) + self.pos(m.arange(idx.shape[1]))
            logits = self.head(self.blocks(x))
            return m.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), tgt.view(-1))

    m.manual_seed(0)
    model = GPT()
    opt = m.optim.AdamW(model.parameters(), lr=1e-2)
    forward = m.compile(model) if compiled else model
    rs = np.random.RandomState(0)
    losses = []
    for _ in range(6):
        idx = m.tensor(rs.randint(0, 17, (4, 16)))
        tgt = m.tensor(rs.randint(0, 17, (4, 16)))
        loss = forward(idx, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_compiled_training_gives_eager_losses():
    assert _tiny_gpt(pyctorch, True) == _tiny_gpt(pyctorch, False)


@requires_torch
def test_compiled_training_gives_torch_losses():
    ours = _tiny_gpt(pyctorch, True)
    theirs = _tiny_gpt(torch, False)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


# ---- the inductor backend's pointwise fusion (pyctorch/_inductor/fusion.py) ----

def _new_gelu(m):
    import math

    def f(x):
        return 0.5 * x * (1.0 + m.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * m.pow(x, 3.0))))
    return f


def _fused_entry(compiled):
    return compiled._compiled_callable.entries[-1]


def _forward_graph(compiled):
    """The fused graph that computes the values: the pair's forward graph where gradients are needed (Note [AOT
    backward]), else the captured graph fused in place."""
    entry = _fused_entry(compiled)
    return getattr(entry.compiled, "forward_graph", entry.gm)


def test_pointwise_chain_becomes_one_kernel_with_its_backward(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    f = _new_gelu(pyctorch)
    cf = pyctorch.compile(f)
    x = pyctorch.randn(64, 33, requires_grad=True)
    expected = f(x)
    expected.backward(pyctorch.ones_like(expected) * 0.5)
    grad, x.grad = x.grad, None
    for _ in range(2):
        got = cf(x)
        got.backward(pyctorch.ones_like(got) * 0.5)
        pyctorch.testing.assert_close(got, expected)
        pyctorch.testing.assert_close(x.grad, grad)
        x.grad = None
    gm = _forward_graph(cf)
    assert gm.fused_kernels == 1 and _fused_entry(cf).compiled.backward_graph.fused_kernels >= 1
    calls = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    fused = [n for n in calls if "pct_fused" in getattr(n.target, "__name__", "")]
    # one kernel, which also writes the values the backward graph reads (getitem of its outputs)
    assert len(fused) == 1 and all(n in fused or n.target is operator.getitem for n in calls)
    assert len(list(tmp_path.glob("k*.so"))) == 2  # the forward's and the backward's, compiled once each
    with pyctorch.no_grad():
        pyctorch.testing.assert_close(cf(x.detach()), expected.detach())


@requires_torch
def test_fused_values_and_gradients_match_torch():
    values = np.random.RandomState(0).randn(3000).astype(np.float32) * 3
    x = pyctorch.tensor(values, requires_grad=True)
    xt = torch.tensor(values, requires_grad=True)
    cf = pyctorch.compile(_new_gelu(pyctorch))
    cf(x)
    y = cf(x)
    yt = _new_gelu(torch)(xt)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_fusion_groups_outputs_scalars_and_boundaries():
    def f(x, y):
        a = x * y                # read outside the group below: an output of the kernel
        b = (1 - a).sigmoid()    # 1 - a: a 0-d constant operand
        c = b * x + a.relu()
        d = c @ y.t()            # not pointwise: closes the group
        return a, (d * 2).exp(), c.sum()
    x = pyctorch.randn(8, 8, requires_grad=True)
    y = pyctorch.randn(8, 8, requires_grad=True)
    cf = pyctorch.compile(f)
    outs0 = f(x, y)
    sum(o.sum() for o in outs0).backward()
    grads0 = (x.grad, y.grad)
    x.grad = y.grad = None
    cf(x, y)
    outs1 = cf(x, y)
    sum(o.sum() for o in outs1).backward()
    for a, b in zip(outs0, outs1):
        pyctorch.testing.assert_close(a, b)
    pyctorch.testing.assert_close(x.grad, grads0[0], rtol=1e-5, atol=1e-5)  # through exp(2 d): amplified ulps
    pyctorch.testing.assert_close(y.grad, grads0[1], rtol=1e-5, atol=1e-5)
    gm = _forward_graph(cf)
    assert gm.fused_kernels == 2  # x*y .. + relu(a), and (d * 2).exp()
    names = [str(getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes if n.op != "placeholder"]
    assert sum("pct_fused" in name for name in names) == 2 and "matmul" in names and "sum" in names


def test_fusion_keeps_ieee_special_values():
    def f(x):
        return (x * 1.0).relu() + x.abs().sqrt()
    cf = pyctorch.compile(f)
    x = pyctorch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 2.0])
    cf(x)
    got, expected = cf(x), f(x)
    assert pyctorch.equal(got.isnan(), expected.isnan())
    ok = ~expected.isnan()
    assert pyctorch.equal(got[ok], expected[ok])


def test_a_group_reading_another_groups_value(monkeypatch):
    def f(x):
        a = (x * 2).exp()
        s = a.sum(-1, keepdim=True)       # recorded: a reduction closes the first group
        c = (a + 1).tanh() * 3            # a second group, reading the first's output
        return c / s
    x = pyctorch.randn(6, 5, requires_grad=True)
    with pyctorch.no_grad():
        expected = f(x)
    cf = pyctorch.compile(f)
    cf(x)
    got = cf(x)
    got.sum().backward()
    pyctorch.testing.assert_close(got, expected)
    assert _fused_entry(cf).gm.fused_kernels == 1  # without recording: one row kernel (Note [Row kernels])
    ref = x.detach().clone().requires_grad_()
    f(ref).sum().backward()
    pyctorch.testing.assert_close(x.grad, ref.grad)
    import pyctorch._inductor.aot as aot
    monkeypatch.setattr(aot, "aot_compile", lambda *a, **k: None)  # no pair: the graph records as it runs
    cf = pyctorch.compile(f)
    cf(x)
    assert _fused_entry(cf).gm.fused_kernels == 2  # so the reduction stays out: two groups


def test_transformers_models_compile_to_one_graph():
    pytest.importorskip("transformers", reason="transformers is not installed")
    code = textwrap.dedent("""
        import torch, transformers
        transformers.logging.set_verbosity_error()
        torch.manual_seed(0)
        cfg = transformers.GPT2Config(vocab_size=50, n_embd=32, n_layer=2, n_head=4, n_positions=16)
        model = transformers.GPT2LMHeadModel(cfg)
        compiled = torch.compile(model)
        ids = torch.randint(0, 50, (2, 12))
        for step in range(2):
            torch.manual_seed(step)
            eager = model(ids, labels=ids).loss
            torch.manual_seed(step)
            loss = compiled(ids, labels=ids).loss
            torch.testing.assert_close(loss, eager)
            loss.backward()
        entry = compiled._compiled_call.entries[0]
        print(len(compiled._compiled_call.entries), entry.gm is not None)
    """)
    out = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=":".join(sys.path), OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["1", "True"]  # one graph, no break, the same losses and a backward


@pytest.mark.parametrize("wrap", [lambda t: {"a": t}, lambda t: [t], lambda t: (t,), lambda t: t])
def test_a_container_of_one_tensor_stays_a_container(wrap):
    cf = pyctorch.compile(lambda x: wrap(x * 2), backend=CountingBackend())
    x = pyctorch.ones(2)
    for _ in range(2):
        out, expected = cf(x), wrap(x * 2)
        assert type(out) is type(expected)
        assert pyctorch.equal(pyctorch.utils._pytree.tree_leaves(out)[0], x * 2)


def test_a_broken_module_compiles_its_submodules():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(2)])
            self.head = nn.Linear(4, 1)

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            if x.sum() > 0:          # a break at the top level
                x = -x
            return self.head(x)
    pyctorch.manual_seed(0)
    net = Net()
    compiled = pyctorch.compile(net)
    for _ in range(3):
        x = pyctorch.randn(3, 4)
        pyctorch.testing.assert_close(compiled(x), net(x))
    top = compiled._compiled_call
    assert top.entries[0].compiled is None and len(top.children) == 3
    for child, sub in top.children:
        assert len(sub.entries) == 1 and sub.entries[0].gm is not None
    assert "forward" not in vars(net.head)  # the fallback leaves the modules as they were


def test_a_disabled_function_breaks_the_graph_and_runs_each_call():
    calls = []

    @pyctorch.compiler.disable
    def log(x):
        calls.append(float(x.sum()))
        return x

    cf = pyctorch.compile(lambda x: log(x * 2) + 1, backend=CountingBackend())
    for k in range(3):
        assert cf(pyctorch.full((2,), float(k))).tolist() == [2.0 * k + 1] * 2
    assert calls == [0.0, 4.0, 8.0]
    assert dynamo.explain(lambda x: log(x) + 1)(pyctorch.ones(2)).break_reasons[0].reason.startswith(
        "torch.compiler.disable")


def test_broadcast_operands_fuse_with_their_gradients_reduced():
    def f(x, w, b, m):
        r = pyctorch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)   # a group of the row shape
        y = x * r * w                                                # row and suffix operands
        return pyctorch.nn.functional.gelu(y @ m + b, approximate="tanh") * 0.5  # a bias, then an activation
    pyctorch.manual_seed(0)
    args = [pyctorch.randn(2, 5, 8, requires_grad=True), pyctorch.randn(8, requires_grad=True),
            pyctorch.randn(6, requires_grad=True), pyctorch.randn(8, 6, requires_grad=True)]
    cf = pyctorch.compile(f)
    cf(*args)
    expected = f(*args)
    expected.sum().backward()
    grads = [a.grad for a in args]
    for a in args:
        a.grad = None
    got = cf(*args)
    got.sum().backward()
    pyctorch.testing.assert_close(got, expected)
    for a, g in zip(args, grads):
        pyctorch.testing.assert_close(a.grad, g, rtol=1e-5, atol=1e-5)
    assert _forward_graph(cf).fused_kernels == 2  # the RMS norm as one row kernel; the bias and the activation
