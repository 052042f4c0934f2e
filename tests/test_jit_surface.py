"""pyctorch.jit: torch.jit's names with TorchScript's eager meaning (decorators, script, trace, fork, flags)."""
import subprocess
import sys
import typing
import warnings
from typing import Dict, List, Optional, Tuple, Union

import pytest

import pyctorch
import pyctorch.jit as pj
from conftest import HAVE_TORCH, requires_torch

if HAVE_TORCH:
    import torch
    import torch.jit as tj


def outcome(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e))


@pytest.fixture(autouse=True)
def _quiet_deprecations():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def test_lazy_attribute_and_import():
    assert pyctorch.jit is pj
    assert pj.is_scripting() is False and pj.is_tracing() is False
    assert pj.annotations.List is typing.List and pj.Final is typing.Final


@requires_torch
def test_names_cover_torch_all():
    assert [n for n in tj.__all__ if not hasattr(pj, n)] == []
    extras = ["is_scripting", "is_tracing", "annotations", "_overload", "_overload_method", "script_method",
              "RecursiveScriptModule", "ScriptWarning", "TracerWarning", "TracingCheckError", "fuser",
              "optimized_execution", "_unwrap_optional", "_script_if_tracing", "Final"]
    assert [n for n in extras if hasattr(tj, n) and not hasattr(pj, n)] == []


def _decorated(jit):
    class M:
        @jit.export
        def exported(self, x):
            return x + 1

        @jit.ignore
        def ignored(self, x):
            return x + 2

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # ignore(True) is deprecated in torch

            @jit.ignore(drop=True)
            def dropped(self, x):
                return x + 3

        @jit.unused
        def unused_(self, x):
            return x + 4

        @jit.unused
        @property
        def prop(self):
            return 5

        @jit._overload_method
        def over(self, x: int) -> int:
            pass

        @jit._overload_method
        def over(self, x: str) -> str:  # noqa: F811
            ...

        def over(self, x):  # noqa: F811
            return x * 2
    return M


@requires_torch
def test_decorators_leave_functions_callable_with_torchs_markers():
    pm, tm = _decorated(pj)(), _decorated(tj)()
    for name in ("exported", "ignored", "dropped", "unused_"):
        assert getattr(pm, name)(1) == getattr(tm, name)(1)
        assert getattr(type(pm), name)._torchscript_modifier == getattr(type(tm), name)._torchscript_modifier
    assert pm.prop == tm.prop == 5
    assert type(pm).prop.fget._torchscript_modifier == type(tm).prop.fget._torchscript_modifier
    assert pm.over(3) == tm.over(3) == 6 and pm.over("a") == "aa"
    assert outcome(pj.ignore, 3) == outcome(tj.ignore, 3)


def test_overload_declarations():
    @pj._overload
    def f(x: int) -> int:
        pass

    @pj._overload
    def f(x: float) -> float:  # noqa: F811
        ...

    def f(x):  # noqa: F811
        return x + 1

    assert f(1) == 2 and len(pj._modifiers._get_fn_overloads(f"{__name__}.{f.__qualname__}")) == 2
    with pytest.raises(RuntimeError, match="Only `pass` statement or `...` can be the body"):
        @pj._overload
        def g(x: int) -> int:
            return x


def test_script_returns_its_argument():
    def fn(x, y: int = 2):
        return x * y

    lin = pyctorch.nn.Linear(2, 2)
    assert pj.script(fn) is fn and pj.script(lin) is lin and pj.script(dict) is dict
    assert pj.script_if_tracing(fn)(3) == 6
    assert pj.script_if_tracing(fn).__wrapped__ is fn
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pj.script(fn)
    assert any(w.category is DeprecationWarning and "torch.jit.script" in str(w.message) for w in caught)


def test_script_module_subclass_and_attribute():
    class M(pj.ScriptModule):
        def __init__(self):
            super().__init__()
            self.scale = pj.Attribute(2.0, float)
            self.names = pj.Attribute({}, Dict[str, int])
            self.lin = pyctorch.nn.Linear(2, 1)

        @pj.script_method
        def forward(self, x):
            return self.lin(x) * self.scale

    m = M()
    assert m.scale == 2.0 and m.names == {} and isinstance(m, pyctorch.nn.Module)
    assert isinstance(m, pj.ScriptModule) and not isinstance(pyctorch.nn.Linear(1, 1), pj.ScriptModule)
    assert tuple(m(pyctorch.ones(3, 2)).shape) == (3, 1)
    assert issubclass(pj.RecursiveScriptModule, pj.ScriptModule)
    assert pj.Attribute(1, int) == (1, int) and pj.Attribute(1, int).value == 1
    with pytest.raises(RuntimeError, match="not available in pyctorch"):
        m.save("never-written.pt")


def test_trace_runs_once_and_returns_the_callable():
    calls = []

    def fn(x, y=None):
        calls.append(x)
        return x * 2

    x = pyctorch.ones(2)
    assert pj.trace(fn, x) is fn and len(calls) == 1 and calls[0] is x  # a lone tensor is the one argument
    assert pj.trace(fn, (x, 1), check_inputs=[(x,), (x, 2)]) is fn and len(calls) == 4
    assert pj.trace(fn, example_kwarg_inputs={"x": x}) is fn and len(calls) == 5
    with pytest.raises(ZeroDivisionError):
        pj.trace(lambda t: 1 / 0, x)
    lin = pyctorch.nn.Linear(2, 3)
    traced = pj.trace(lin, pyctorch.ones(1, 2))
    assert traced is lin and tuple(traced(pyctorch.ones(4, 2)).shape) == (4, 3)
    assert pj.trace_module(lin, {"forward": pyctorch.ones(1, 2)}) is lin
    with pytest.raises(AttributeError, match="expected a dictionary"):
        pj.trace_module(lin, pyctorch.ones(1, 2))
    assert "Note [Tracing without a graph]" in pj._trace.__doc__
    assert issubclass(pj.TracerWarning, Warning) and issubclass(pj.ScriptWarning, Warning)


def test_fork_wait_future():
    fut = pj.fork(lambda a, b=1: a + b, 2, b=3)
    assert isinstance(fut, pj.Future) and fut.done() and pj.wait(fut) == 5 and fut.value() == 5
    assert pj.Future is pyctorch.futures.Future

    def boom():
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        pj.fork(boom)  # the call runs at once, so its error comes from fork, as in torch's eager mode
    with pytest.raises(TypeError, match="incompatible function arguments"):
        pj.wait(3)


def test_freeze_and_optimize_for_inference():
    lin = pyctorch.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        pj.freeze(lin)
    assert pj.freeze(lin.eval()) is lin
    lin.train()
    assert pj.optimize_for_inference(lin) is lin and not lin.training
    with pytest.raises(RuntimeError, match="expects a ScriptModule"):
        pj.freeze(lambda x: x)


def test_serialization_refuses_clearly(tmp_path):
    for call in (lambda: pj.save(pyctorch.nn.Linear(1, 1), tmp_path / "m.pt"), lambda: pj.load(tmp_path / "m.pt")):
        with pytest.raises(RuntimeError, match="TorchScript serialization is not available in pyctorch") as info:
            call()
        assert "state_dict" in str(info.value)
    assert not (tmp_path / "m.pt").exists()
    with pytest.raises(RuntimeError, match="no TorchScript graph"):
        pj.export_opnames(pyctorch.nn.Linear(1, 1))


@requires_torch
def test_fusion_flags_match_torch():
    for jit in (pj, tj):
        before = jit.onednn_fusion_enabled()
        jit.enable_onednn_fusion(True)
        assert jit.onednn_fusion_enabled() is True
        jit.enable_onednn_fusion(before)
    first = [outcome(jit.set_fusion_strategy, [("DYNAMIC", 3)]) for jit in (pj, tj)]
    assert first[0] == first[1] == [("STATIC", 2), ("DYNAMIC", 10)]
    assert outcome(pj.set_fusion_strategy, [("STATIC", 2), ("DYNAMIC", 10)]) == [("DYNAMIC", 3)]
    tj.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
    assert outcome(pj.set_fusion_strategy, [("FOO", 1)]) == outcome(tj.set_fusion_strategy, [("FOO", 1)])
    with pytest.warns(UserWarning, match="Only works in script mode"):
        with pj.strict_fusion():
            pass
    with pj.fuser("fuser1"), pj.optimized_execution(False):
        pass
    with pytest.raises(Exception, match="unrecognized fuser option"):
        with pj.fuser("nope"):
            pass


ISINSTANCE_CASES = [
    ([1, 2], List[int]), ([1, "a"], List[int]), ([[1], [2]], List[List[int]]), ({"a": [1]}, Dict[str, List[int]]),
    ({"a": 1}, Dict[int, int]), ((1, "a"), Tuple[int, str]), ((1,), Tuple[int, str]), (None, Optional[int]),
    (1, Optional[int]), ("a", Optional[int]), (1, (str, int)), (1, int), (1.0, int), (1, int | None),
    ([1], Union[List[int], str]), ([1], list[int]), ({"k": (1, 2.0)}, dict[str, tuple[int, float]]),
    ([], List[int]), ([1], list), ({}, dict), ((1,), tuple), ([1], typing.List), ({}, typing.Dict),
    (1, typing.Optional), ([1], [int]), (pyctorch.ones(1), List[int]),
]


@requires_torch
def test_isinstance_matches_torch():
    for obj, target in ISINSTANCE_CASES:
        assert outcome(pj.isinstance, obj, target) == outcome(tj.isinstance, obj, target), (obj, target)
    with pytest.warns(UserWarning, match="inner type of a container is lost"):
        assert pj.isinstance([], List[str])
    assert pj.isinstance(1, Union[List[str], int])  # every Union member is tried (torch stops at List[str])


def test_small_helpers():
    assert pj.annotate(List[int], [1]) == [1]
    assert pj.annotations.BroadcastingList2[int] is None
    assert pj.annotations.is_list(List[int]) and pj.annotations.is_optional(Optional[int])
    assert not pj.annotations.is_dict(List[int]) and pj.annotations.is_tensor(pyctorch.Tensor)
    assert issubclass(pj.Error, Exception)
    assert pj._unwrap_optional(3) == 3

    @pj.interface
    class Iface:
        def run(self, x: int) -> int:
            pass
    assert isinstance(Iface.__torch_script_interface__, str)
    with pytest.raises(RuntimeError, match="interface must be applied to a class"):
        pj.interface(lambda: 0)


def test_compilation_unit_runs_source_as_python():
    cu = pj.CompilationUnit("""
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2

def first(xs: List[int]) -> int:
    return xs[0]
""")
    assert cu.double(pyctorch.ones(2)).tolist() == [2.0, 2.0] and cu.first([4, 5]) == 4
    assert cu.find_function("first") is cu.first and cu.find_function("nope") is None
    with pytest.raises(AttributeError):
        cu.nope


def test_alias_paths():
    """Under the torch alias, torch.jit, torch.hub and torch.utils._pytree are these modules."""
    code = ("import torch, torch.jit, torch.hub, torch.utils._pytree as p, pyctorch\n"
            "assert torch.jit is pyctorch.jit and torch.hub is pyctorch.hub\n"
            "assert p is pyctorch.utils._pytree and torch.utils._pytree is p\n"
            "from torch.jit.annotations import BroadcastingList2, List\n"
            "print(torch.jit.is_scripting(), p.tree_leaves({'a': [1, None]}))\n")
    out = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False [1, None]"
