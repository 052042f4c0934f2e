"""torch.export: capture of an MLP, a CNN with BatchNorm, an LSTM and a tiny GPT with a dynamic batch; the
graph's results against eager at other batch sizes, its signature against torch's, guards, data-dependent
errors, decompositions, save/load and printing."""
import io
import math

import pytest

import pyctorch
from pyctorch.export import Dim
from export_models import build, example_inputs

NAMES = ["mlp", "cnn", "lstm", "gpt"]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _export(name, max_batch=64, **kw):
    model = build(pyctorch, name)
    ep = pyctorch.export.export(model, example_inputs(pyctorch, name),
                                dynamic_shapes=({0: Dim("batch", max=max_batch)},), **kw)
    return model, ep


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _torch_copy(torch, name, model):
    theirs = build(torch, name)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    return theirs.eval()


@pytest.fixture(scope="module", params=NAMES)
def exported(request):
    return (request.param,) + _export(request.param)


def test_module_runs_as_eager_at_other_batch_sizes(exported):
    name, model, ep = exported
    gm = ep.module()
    for batch in (2, 3, 7):
        x = example_inputs(pyctorch, name, batch)
        with pyctorch.no_grad():
            got, want = _as_tuple(gm(*x)), _as_tuple(model(*x))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.shape[0 if name != "lstm" or g.dim() == 2 else 1] == batch
            assert pyctorch.equal(g, w)  # the graph runs the same kernels on the same values


def test_signature_has_torch_inputs(exported, torch):
    name, model, ep = exported
    theirs = _torch_copy(torch, name, model)
    tx = tuple(torch.from_numpy(t.numpy().copy()) for t in example_inputs(pyctorch, name))
    tep = torch.export.export(theirs, tx, dynamic_shapes=({0: torch.export.Dim("batch", max=64)},))
    ours = [str(s) for s in ep.graph_signature.input_specs]
    assert ours == [str(s) for s in tep.graph_signature.input_specs]
    assert [s.kind.name for s in ep.graph_signature.output_specs] == \
        [s.kind.name for s in tep.graph_signature.output_specs]
    assert ep.graph_signature.parameters == tep.graph_signature.parameters
    assert ep.graph_signature.buffers == tep.graph_signature.buffers
    assert list(ep.state_dict) == list(tep.state_dict)
    assert [str(v) for v in ep.range_constraints.values()] == [str(v) for v in tep.range_constraints.values()]
    assert list(ep.range_constraints) == ["s0"] and str(ep.range_constraints["s0"]) == "VR[0, 64]"
    # the same model run by both graphs gives the same numbers
    x = example_inputs(pyctorch, name, 4)
    with pyctorch.no_grad(), torch.no_grad():
        got = _as_tuple(ep.module()(*x))
        want = _as_tuple(tep.module()(*(torch.from_numpy(t.numpy().copy()) for t in x)))
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        assert float((g - pyctorch.from_numpy(w.numpy())).abs().max()) < 1e-5


def test_graph_is_aten_ops_with_symbolic_sizes(exported):
    name, _, ep = exported
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    import operator
    from pyctorch._ops import OpOverload
    assert all(isinstance(t, OpOverload) or t in (operator.getitem, operator.mul, operator.add) for t in targets)
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    x = placeholders[-1]
    assert str(x.meta["val"].shape[0]) == "s0"
    out = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0]
    batch_dim = 0
    assert str(out.meta["val"].shape[batch_dim]) == "s0"
    if name == "gpt":  # a reshape folds batch and time: 6*s0
        sizes = {str(s) for n in ep.graph.nodes if n.op == "call_function" for s in
                 (n.meta["val"].shape if hasattr(n.meta.get("val"), "shape") else ())}
        assert "6*s0" in sizes


def test_guards_of_module(exported):
    name, _, ep = exported
    gm = ep.module()
    big = example_inputs(pyctorch, name, 65)
    with pytest.raises(AssertionError, match=r"Guard failed: \w+\.size\(\)\[0\] <= 64"):
        gm(*big)
    x = example_inputs(pyctorch, name, 3)[0]
    wrong = pyctorch.cat([x, x], 1)
    with pytest.raises(AssertionError, match=r"Guard failed: \w+\.size\(\)\[1\] == "):
        gm(wrong)


def test_guard_messages_match_torch(torch):
    model, ep = _export("mlp")
    theirs = _torch_copy(torch, "mlp", model)
    tep = torch.export.export(theirs, (torch.randn(3, 6),), dynamic_shapes=({0: torch.export.Dim("batch", max=64)},))
    for bad in ((70, 6), (4, 5)):
        with pytest.raises(AssertionError) as ours:
            ep.module()(pyctorch.randn(*bad))
        with pytest.raises(AssertionError) as want:
            tep.module()(torch.randn(*bad))
        assert str(ours.value) == str(want.value)


def test_print_matches_torch_layout(torch):
    model, ep = _export("mlp")
    text = str(ep)
    assert text.startswith("ExportedProgram:\n    class GraphModule(torch.nn.Module):\n")
    assert 'x: "f32[s0, 6]"' in text
    assert 'addmm: "f32[s0, 16]" = torch.ops.aten.addmm.default(p_fc1_bias, x, t)' in text
    assert "Range constraints: {s0: VR[0, 64]}" in text
    theirs = _torch_copy(torch, "mlp", model)
    tep = torch.export.export(theirs, (torch.randn(3, 6),), dynamic_shapes=({0: torch.export.Dim("batch", max=64)},))
    ttext = str(tep)

    def signature_inputs(t):
        return t.split("# inputs")[1].split("# outputs")[0].split()
    assert signature_inputs(text) == signature_inputs(ttext)


def test_run_decompositions():
    model, ep = _export("gpt")
    dec = ep.run_decompositions()
    names = {n.target._opname for n in dec.graph.nodes if n.op == "call_function" and hasattr(n.target, "_opname")}
    assert {"t", "transpose", "reshape", "matmul", "split"}.isdisjoint(names)
    assert {"permute", "view", "split_with_sizes", "addmm"} <= names
    x = example_inputs(pyctorch, "gpt", 5)
    with pyctorch.no_grad():
        assert pyctorch.equal(dec.module()(*x), model(*x))
    assert [str(s) for s in dec.graph_signature.input_specs] == [str(s) for s in ep.graph_signature.input_specs]
    assert ep.run_decompositions({}).graph_module.code == ep.graph_module.code  # an empty table changes nothing


def test_run_decompositions_as_torch(torch):
    """The MLP's linear layers decompose into permute + addmm in both frameworks."""
    model, ep = _export("mlp")
    theirs = _torch_copy(torch, "mlp", model)
    tep = torch.export.export(theirs, (torch.randn(3, 6),)).run_decompositions()
    ours = [n.target._opname for n in ep.run_decompositions().graph.nodes if n.op == "call_function"]
    want = [n.target._opname for n in tep.graph.nodes if n.op == "call_function"]
    assert [t for t in ours if t in ("permute", "addmm")] == [t for t in want if t in ("permute", "addmm")]


@pytest.mark.parametrize("to_file", [True, False])
def test_save_load(tmp_path, to_file):
    model, ep = _export("cnn")
    target = tmp_path / "cnn.pt2" if to_file else io.BytesIO()
    pyctorch.export.save(ep, target, extra_files={"note.txt": "hello"})
    if not to_file:
        target.seek(0)
    extra = {"note.txt": ""}
    loaded = pyctorch.export.load(target, extra_files=extra)
    assert extra["note.txt"] == "hello"
    assert str(loaded) == str(ep)
    assert [str(s) for s in loaded.graph_signature.input_specs] == [str(s) for s in ep.graph_signature.input_specs]
    x = example_inputs(pyctorch, "cnn", 6)
    with pyctorch.no_grad():
        assert pyctorch.equal(loaded.module()(*x), model(*x))
    with pytest.raises(AssertionError, match="<= 64"):
        loaded.module()(*example_inputs(pyctorch, "cnn", 65))


class _DataBranch(pyctorch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


class _Item(pyctorch.nn.Module):
    def forward(self, x):
        return x * x.max().item()


@pytest.mark.parametrize("cls", [_DataBranch, _Item])
def test_data_dependent_python_raises(cls, torch):
    from pyctorch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    with pytest.raises(GuardOnDataDependentSymNode, match="Could not guard on data-dependent expression"):
        pyctorch.export.export(cls(), (pyctorch.randn(4),))
    if cls is _DataBranch:  # torch raises the same error (for .item() it records an unbacked symbol instead)
        class Theirs(torch.nn.Module):
            forward = cls.forward
        with pytest.raises(torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode):
            torch.export.export(Theirs(), (torch.randn(4),))


def test_shape_branch_on_dynamic_dim_raises():
    class M(pyctorch.nn.Module):
        def forward(self, x):
            return x * 2 if x.shape[0] % 2 else x + 1
    with pytest.raises(pyctorch._dynamo.exc.UserError, match="different operations"):
        pyctorch.export.export(M(), (pyctorch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    ep = pyctorch.export.export(M(), (pyctorch.randn(4, 3),))  # static: specialized, fine
    assert pyctorch.equal(ep.module()(pyctorch.ones(4, 3)), pyctorch.full((4, 3), 2.0))


def test_two_dynamic_dims_and_products():
    model = build(pyctorch, "gpt")
    ep = pyctorch.export.export(model, (pyctorch.randint(0, 11, (3, 5)),),
                                dynamic_shapes=({0: Dim("batch"), 1: Dim("seq", max=8)},))
    sizes = {str(s) for n in ep.graph.nodes for s in getattr(n.meta.get("val"), "shape", ())}
    assert {"s0", "s1", "s0*s1"} <= sizes
    for b, t in ((2, 2), (4, 8), (6, 3)):
        x = pyctorch.randint(0, 11, (b, t))
        with pyctorch.no_grad():
            assert pyctorch.equal(ep.module()(x), model(x))
    with pytest.raises(AssertionError, match=r"size\(\)\[1\] <= 8"):
        ep.module()(pyctorch.randint(0, 11, (2, 9)))


def test_inplace_setitem_and_constants(torch):
    class M(pyctorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = pyctorch.tensor([1.0, 2.0, 3.0])  # a plain tensor attribute: a lifted constant
            self.register_buffer("shift", pyctorch.ones(3), persistent=False)

        def forward(self, x):
            y = x.clone()
            y[:, 0] = 0.0
            y[1:, 1:] = x[:-1, :2] * 2
            y.add_(self.shift)
            return y * self.scale, y[..., None].float()

    model = M()
    ep = pyctorch.export.export(model, (pyctorch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    kinds = [(s.kind.name, s.target, s.persistent) for s in ep.graph_signature.input_specs]
    assert kinds == [("BUFFER", "shift", False), ("CONSTANT_TENSOR", "scale", None), ("USER_INPUT", None, None)]
    for b in (2, 5):
        x = pyctorch.randn(b, 3)
        got, want = ep.module()(x), model(x)
        for g, w in zip(got, want):
            assert pyctorch.equal(g, w)

    class Theirs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.tensor([1.0, 2.0, 3.0])
            self.register_buffer("shift", torch.ones(3), persistent=False)
        forward = M.forward
    tep = torch.export.export(Theirs(), (torch.randn(4, 3),))
    theirs = [(s.kind.name, s.target, s.persistent) for s in tep.graph_signature.input_specs]
    # torch also lifts the 0.0 its setitem turns into a tensor (lifted_tensor_0)
    assert [k for k in theirs if not str(k[1]).startswith("lifted_tensor_")] == kinds


def test_dim_and_errors():
    d = Dim("batch", min=2, max=10)
    assert repr(d) == "Dim('batch', max=10)" and (d.min, d.max) == (2, 10)
    assert repr(Dim("n", min=4)) == "Dim('n', min=4)" and Dim("n").max == math.inf
    with pytest.raises(ValueError):
        Dim("bad", min=5, max=3)
    with pytest.raises(ValueError, match="Expected `mod` to be an instance of `torch.nn.Module`"):
        pyctorch.export.export(lambda x: x, (pyctorch.ones(2),))
    with pytest.raises(pyctorch._dynamo.exc.UserError, match="Expecting `args` to be a tuple"):
        pyctorch.export.export(build(pyctorch, "mlp"), pyctorch.ones(2, 6))
    with pytest.raises(pyctorch._dynamo.exc.UserError, match="top-level keys must be the arg names"):
        pyctorch.export.export(build(pyctorch, "mlp"), (pyctorch.ones(2, 6),), dynamic_shapes={"y": {0: d}})
    with pytest.raises(pyctorch._dynamo.exc.UserError, match="specialized"):
        pyctorch.export.export(build(pyctorch, "mlp"), (pyctorch.ones(1, 6),), dynamic_shapes={"x": {0: d}})
    _, ep = _export("mlp")
    with pytest.raises(RuntimeError, match="Unable to call ExportedProgram directly"):
        ep(pyctorch.ones(2, 6))


def test_export_leaves_the_model_unchanged():
    model = build(pyctorch, "cnn").train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = example_inputs(pyctorch, "cnn", 4)
    pyctorch.export.export(model, x, dynamic_shapes=({0: Dim("b")},))
    assert all(pyctorch.equal(before[k], v) for k, v in model.state_dict().items())


def test_importing_pyctorch_does_not_import_onnx():
    import subprocess
    import sys
    code = "import sys, pyctorch, pyctorch.export, pyctorch.onnx; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
