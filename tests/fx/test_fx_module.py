"""GraphModule (code, recompile, print_readable, copies, pickles, to_folder), tracing errors and the
temporary patches of Note [Tracing torch functions], wrap(), and the torch.fx alias."""
import copy
import io
import pickle
import subprocess
import sys

import pytest

import pyctorch
import pyctorch.fx as fx
import pyctorch.nn as nn
import pyctorch.nn.functional as F
from fx_helpers import torch  # noqa: F401
from pyctorch import cat as imported_cat, relu as imported_relu
from pyctorch.nn.functional import gelu as imported_gelu
from fx_models import build_pair


def _helper_sum_half(x):
    return x[: len(x) // 2].sum()  # len() of a Proxy would fail: wrap() keeps this call opaque


fx.wrap("_helper_sum_half")


def _torch_helper_sum_half(x):
    return x[: len(x) // 2].sum()


try:  # torch's wrap() also insists on module scope
    import torch.fx as _torch_fx
    _torch_fx.wrap("_torch_helper_sum_half")
except ImportError:
    pass


def _traced_mlp(torch):
    ours, _, (x,), _, _ = build_pair("mlp", torch)
    return ours, fx.symbolic_trace(ours), x


def test_recompile_after_editing_the_graph(torch):
    ours, gm, x = _traced_mlp(torch)
    node = next(n for n in gm.graph.nodes if n.target is F.gelu)
    node.target = pyctorch.relu
    gm.recompile()
    assert "torch.relu(body_2)" in gm.code
    expected = ours.head(pyctorch.relu(ours.body(x))).softmax(dim=-1)
    assert gm(x).tolist() == expected.tolist()


def test_print_readable_and_str(torch, capsys):
    _, gm, _ = _traced_mlp(torch)
    text = gm.print_readable()
    assert capsys.readouterr().out.strip() == text.strip()
    assert text.startswith("class MLP(torch.nn.Module):\n    def forward(self, x):")
    assert "gm.print_readable()" not in text and "graph_module.print_readable()" in str(gm)
    assert type(gm).__name__ == "MLP" and isinstance(gm, fx.GraphModule)


def test_deepcopy_and_pickle_roundtrip(torch):
    _, gm, x = _traced_mlp(torch)
    expected = gm(x)
    for clone in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm))):
        assert type(clone) is not type(gm) and type(clone).__name__ == "MLP"
        assert clone.code == gm.code
        assert clone(x).tolist() == expected.tolist()
        assert list(clone.state_dict()) == list(gm.state_dict())
        clone.graph.lint()
        assert clone.head.weight.data_ptr() != gm.head.weight.data_ptr()


def test_pyctorch_save_load_of_a_graph_module(torch):
    _, gm, x = _traced_mlp(torch)
    buf = io.BytesIO()
    pyctorch.save(gm, buf)
    buf.seek(0)
    loaded = pyctorch.load(buf, weights_only=False)
    assert loaded(x).tolist() == gm(x).tolist()


def test_graph_module_from_a_dict_root_and_to_folder(tmp_path, torch):
    _, gm, x = _traced_mlp(torch)
    modules = {n.target: gm.get_submodule(n.target) for n in gm.graph.nodes if n.op == "call_module"}
    rebuilt = fx.GraphModule(modules, copy.deepcopy(gm.graph), "Rebuilt")
    assert rebuilt(x).tolist() == gm(x).tolist()
    gm.to_folder(tmp_path / "saved", "SavedMLP")
    sys.path.insert(0, str(tmp_path))
    try:
        from saved import SavedMLP
        assert SavedMLP()(x).tolist() == gm(x).tolist()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("saved", None)
        sys.modules.pop("saved.module", None)


def _control_flow(lib):
    def fn(x):
        if x.sum() > 0:
            return x
        return -x
    return fn


@pytest.mark.parametrize("case", ["control_flow", "iteration", "len", "star_args"])
def test_tracing_errors_match_torch(case, torch):
    def build(lib):
        if case == "control_flow":
            return _control_flow(lib)
        if case == "iteration":
            return lambda x: [row for row in x]
        if case == "len":
            return lambda x: len(x)
        return lambda x: lib.stack([*x])

    with pytest.raises(Exception) as theirs:
        torch.fx.symbolic_trace(build(torch))
    with pytest.raises(Exception) as ours:
        fx.symbolic_trace(build(pyctorch))
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)
    if case == "control_flow":
        assert isinstance(ours.value, fx.proxy.TraceError) and isinstance(ours.value, ValueError)


def test_patches_are_undone_after_a_failed_trace():
    relu, f_relu, call, getattr_ = pyctorch.relu, F.relu, nn.Module.__call__, nn.Module.__getattr__

    class Bad(nn.Module):
        def forward(self, x):
            y = pyctorch.relu(x)
            if y.sum() > 0:
                return y
            return x

    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(Bad())
    assert pyctorch.relu is relu and F.relu is f_relu
    assert nn.Module.__call__ is call and nn.Module.__getattr__ is getattr_
    assert type(pyctorch.relu).__name__ == "builtin_function"


def test_wrap_keeps_a_function_opaque(torch):
    def ours(x):
        return _helper_sum_half(x) + 1

    def theirs(x):
        return _torch_helper_sum_half(x) + 1

    gm, tgm = fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    assert [(n.op, n.name) for n in gm.graph.nodes] == [(n.op, n.name.replace("_torch", "")) for n in
                                                         tgm.graph.nodes]
    x = pyctorch.arange(6.0)
    assert gm(x).item() == 4.0
    assert fx.symbolic_trace(gm).code == gm.code  # the generated code re-traces to itself


def test_concrete_args_none_and_defaults(torch):
    def fn(x, mask=None, scale=2.0):
        if mask is not None:
            x = x * mask
        return x * scale

    gm = fx.symbolic_trace(fn, concrete_args={"mask": None})
    tgm = torch.fx.symbolic_trace(fn, concrete_args={"mask": None})
    assert [(n.op, n.name) for n in gm.graph.nodes] == [(n.op, n.name) for n in tgm.graph.nodes]
    assert gm.code == tgm.code
    assert gm(pyctorch.ones(2), None).tolist() == [2.0, 2.0]
    gm.graph.eliminate_dead_code()  # the check has no users but must stay
    gm.recompile()
    with pytest.raises(AssertionError, match="specialized to have value None"):
        gm(pyctorch.ones(2), pyctorch.ones(2))


def test_leaf_modules_custom_tracer():
    class Inner(nn.Module):
        def forward(self, x):
            return x + 1

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) * 2

    class KeepInner(fx.Tracer):
        def is_leaf_module(self, m, name):
            return isinstance(m, Inner) or super().is_leaf_module(m, name)

    assert [n.op for n in fx.symbolic_trace(Outer()).graph.nodes] == \
        ["placeholder", "call_function", "call_function", "output"]
    graph = KeepInner().trace(Outer())
    assert [n.op for n in graph.nodes] == ["placeholder", "call_module", "call_function", "output"]


def test_import_is_lazy_and_torch_alias_shares_the_module():
    code = ("import sys, pyctorch; assert 'pyctorch.fx' not in sys.modules; "
            "pyctorch.install_as_torch(); import torch.fx, torch; from torch.fx import symbolic_trace; "
            "assert torch.fx is pyctorch.fx and symbolic_trace is pyctorch.fx.symbolic_trace; "
            "gm = torch.fx.symbolic_trace(lambda x: torch.nn.functional.relu(x) + 1); "
            "print(gm(torch.tensor([-1.0, 2.0])).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1.0, 3.0]"


def test_submodule_surgery(torch):
    _, gm, x = _traced_mlp(torch)
    assert gm.add_submodule("extra.deep", nn.ReLU()) is True
    assert isinstance(gm.extra.deep, nn.ReLU)
    node = next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == "head")
    with gm.graph.inserting_after(node):
        act = gm.graph.call_module("extra.deep", (node,))
    node.replace_all_uses_with(act)
    gm.recompile()
    assert "extra_deep = self.extra.deep(head)" in gm.code
    assert gm.delete_submodule("nope.missing") is False
    act.replace_all_uses_with(node)
    gm.graph.erase_node(act)
    gm.recompile()
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra")
    assert [name for name, _ in gm.named_modules()] == ["", "body", "body.0", "body.1", "body.2", "head"]


def test_star_args_and_kwargs_are_traced_as_torch(torch):
    def fn(x, *args, **kw):
        return x + args[0] * args[1] + kw["z"]

    gm, tgm = fx.symbolic_trace(fn), torch.fx.symbolic_trace(fn)
    assert gm.code == tgm.code
    one = pyctorch.ones(1)
    assert gm(one, one * 2, one * 3, z=one * 4).tolist() == [11.0]
    assert fx.symbolic_trace(gm).code == gm.code


class _ImportedByName(nn.Module):
    def forward(self, x):
        return imported_cat([imported_relu(x), imported_gelu(x)])


def test_torch_functions_imported_by_name_are_recorded():
    gm = fx.symbolic_trace(nn.Sequential(_ImportedByName()))  # found in the globals of a traced-through forward
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [pyctorch.relu, F.gelu, pyctorch.cat]
    assert imported_relu is pyctorch.relu and globals()["imported_cat"] is pyctorch.cat  # restored
    x = pyctorch.tensor([-1.0, 1.0])
    assert gm(x).tolist() == _ImportedByName()(x).tolist()
