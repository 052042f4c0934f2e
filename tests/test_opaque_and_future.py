"""torch._library.opaque_object's registry and torch._opaque_base, torch.__future__'s conversion switches,
torch.utils._python_dispatch's subclass checks, and the names nn.utils.parametrize re-exports, against torch."""
import enum

import pytest

from conftest import HAVE_TORCH, requires_torch

import pyctorch

if HAVE_TORCH:
    import torch


def _libs():
    return [pyctorch] + ([torch] if HAVE_TORCH else [])


def _opaque(lib):
    import importlib
    oo = importlib.import_module(lib.__name__ + "._library.opaque_object")
    base = importlib.import_module(lib.__name__ + "._opaque_base")

    class Ref(base.OpaqueBase):
        pass

    class SubRef(Ref):
        pass

    class Val:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return isinstance(other, Val) and other.v == self.v

        def __hash__(self):
            return hash(self.v)

        def __fx_repr__(self):
            return (f"Val({self.v})", {"Val": Val})

    class Color(enum.Enum):
        RED = 1

    class Plain:
        pass

    class NoRepr:
        def __eq__(self, other):
            return True

        def __hash__(self):
            return 0

    out = [oo.is_opaque_type(Ref), isinstance(Ref(), base.OpaqueBase)]
    oo.register_opaque_type(Ref, typ="reference")
    oo.register_opaque_type(Val, typ="value")
    oo.register_opaque_type(Color, typ="value")
    out += [oo.is_opaque_type(Ref), oo.is_opaque_type(SubRef), oo.is_opaque_reference_type(Ref),
            oo.is_opaque_reference_type(SubRef), oo.is_opaque_value_type(Ref), oo.is_opaque_value_type(Val),
            oo.is_opaque_reference_type(Val), oo.is_opaque_type(Color), oo.is_opaque_type(Plain),
            isinstance(Ref(), base.OpaqueBase), isinstance(Val(1), base.OpaqueBase),
            isinstance(Plain(), base.OpaqueBase), isinstance(SubRef(), Ref),
            oo.get_opaque_type_name(Ref).endswith("Ref"), oo.is_opaque_type(oo.get_opaque_type_name(Val)),
            oo.is_opaque_reference_type(oo.get_opaque_type_name(Ref))]
    for cls, typ in [(int, "value"), (lib.Tensor, "reference"), (Plain, "reference"), (Ref, "other"),
                     (Plain, "value"), (NoRepr, "value")]:
        try:
            oo.register_opaque_type(cls, typ=typ)
            out.append(None)
        except (TypeError, ValueError, AssertionError) as e:
            out.append(type(e).__name__)
    try:
        oo.register_opaque_type(Val, typ="value", guard_fn=lambda x: [x.v])
    except TypeError as e:
        out.append(type(e).__name__)
    try:
        oo.get_opaque_type_name(Plain)
    except ValueError as e:
        out.append(str(e).split(" is not")[1])
    return out


def test_opaque_registry():
    ours = _opaque(pyctorch)
    assert ours[:2] == [False, False] and ours[2:6] == [True, True, True, True]
    if HAVE_TORCH:
        assert ours == _opaque(torch)


def _future(lib):
    out = []
    fut = lib.__future__
    out.append((fut.get_overwrite_module_params_on_conversion(), fut.get_swap_module_params_on_conversion()))
    try:
        for overwrite in (False, True):
            fut.set_overwrite_module_params_on_conversion(overwrite)
            m = lib.nn.Linear(2, 2)
            w = m.weight
            m.weight.grad = lib.ones(2, 2)
            m.double()
            out.append((m.weight is w, str(w.dtype), str(m.weight.dtype), str(m.weight.grad.dtype), str(w.grad.dtype),
                        type(m.weight).__name__, m.weight.requires_grad))
        fut.set_swap_module_params_on_conversion(True)
        out.append(fut.get_swap_module_params_on_conversion())
        m = lib.nn.Linear(2, 2)
        w = m.weight
        m.double()
        out.append((m.weight is w, str(m.weight.dtype)))  # swap keeps the Parameter object (and wins over overwrite)
    finally:
        fut.set_overwrite_module_params_on_conversion(False)
        fut.set_swap_module_params_on_conversion(False)
    return out


def test_future_switches():
    ours = _future(pyctorch)
    assert ours[1][0] is True and ours[2][0] is False
    if HAVE_TORCH:
        assert ours == _future(torch)


def _dispatch_checks(lib):
    import importlib
    pd = importlib.import_module(lib.__name__ + ".utils._python_dispatch")

    class Wrapper(lib.Tensor):
        def __tensor_flatten__(self):
            return [], None

        @staticmethod
        def __tensor_unflatten__(inner, ctx, size, stride):
            return None

    class Half(lib.Tensor):
        def __tensor_flatten__(self):
            return [], None

    w = lib.ones(2).as_subclass(Wrapper)
    h = lib.ones(2).as_subclass(Half)
    return [pd.is_traceable_wrapper_subclass(w), pd.is_traceable_wrapper_subclass(h),
            pd.is_traceable_wrapper_subclass(lib.ones(2)), pd.is_traceable_wrapper_subclass(Wrapper),
            pd.is_traceable_wrapper_subclass_type(Wrapper), pd.is_traceable_wrapper_subclass_type(Half),
            pd.is_traceable_wrapper_subclass_type(lib.Tensor), _raises(pd.is_traceable_wrapper_subclass_type, 3)]


def _raises(fn, *args):
    try:
        fn(*args)
        return None
    except TypeError:
        return "TypeError"


def test_traceable_wrapper_subclass_checks():
    ours = _dispatch_checks(pyctorch)
    assert ours == [True, False, False, False, True, False, False, "TypeError"]
    if HAVE_TORCH:
        assert ours == _dispatch_checks(torch)


@pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)
def test_parametrize_namespace(lib):
    p = lib.nn.utils.parametrize
    assert p.Module is lib.nn.Module
    assert p.get_swap_module_params_on_conversion is lib.__future__.get_swap_module_params_on_conversion
    assert p.OpaqueBase.__name__ == "OpaqueBase"
    assert callable(p.is_opaque_reference_type) and callable(p.is_traceable_wrapper_subclass)


@requires_torch
def test_namespaces_have_torchs_names():
    import importlib
    for mod in ["_library.opaque_object", "_opaque_base", "utils._python_dispatch", "__future__"]:
        ours = importlib.import_module("pyctorch." + mod)
        theirs = importlib.import_module("torch." + mod)
        wanted = {"register_opaque_type", "is_opaque_type", "is_opaque_value_type", "is_opaque_reference_type",
                  "is_opaque_value", "get_opaque_type_name", "MemberType", "OpaqueBase", "OpaqueBaseMeta",
                  "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
                  "set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
                  "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"}
        for name in wanted & set(dir(theirs)):
            assert hasattr(ours, name), (mod, name)
