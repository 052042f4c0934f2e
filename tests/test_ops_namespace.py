"""torch.ops / torch._ops: aten OpOverloadPackets and OpOverloads over pyctorch's op table."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, assert_same, requires_torch

if HAVE_TORCH:
    import torch

aten = pyctorch.ops.aten


def pair(shape, seed):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return pyctorch.tensor(data), (torch.tensor(data) if HAVE_TORCH else None)


def test_ops_is_reachable_without_import_and_is_the_registry():
    code = ("import pyctorch; ops = pyctorch.ops; import pyctorch._ops as m; "
            "assert ops is m.ops and type(ops).__name__ == '_Ops'; print(type(ops.aten).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "_OpNamespace"


def test_every_table_op_has_a_packet():
    from pyctorch._op_overloads import _ATEN_NAME
    names = set()
    for entry in pyctorch._C._op_table():
        name = _ATEN_NAME.get(entry["name"], entry["name"])
        # an entry with only an in-place variant (uniform_, normal_) is aten's `name_` operator
        names.add(name if set(entry["variants"]) & set("FM") or name.endswith("_") else name + "_")
    for name in names:
        packet = getattr(aten, name)
        assert isinstance(packet, pyctorch._ops.OpOverloadPacket)
        assert packet.overloads(), name
        for overload in packet.overloads():
            op = getattr(packet, overload)
            assert isinstance(op, pyctorch._ops.OpOverload)
            assert str(op._schema).startswith(f"aten::{name}")


def test_packets_and_overloads_are_cached_and_pickle_by_name():
    assert aten.add is aten.add and aten.add.Tensor is aten.add.Tensor
    assert aten.add.Tensor.overloadpacket is aten.add
    assert pickle.loads(pickle.dumps(aten.add.Tensor)) is aten.add.Tensor
    assert pickle.loads(pickle.dumps(aten.mm)) is aten.mm


@requires_torch
@pytest.mark.parametrize("name", ["add", "sum", "mm", "relu", "view", "max", "pow", "div", "transpose",
                                  "softmax", "add_", "where", "clamp", "arange"])
def test_names_strings_and_overloads_match_torch(name):
    ours, theirs = getattr(aten, name), getattr(torch.ops.aten, name)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert ours._qualified_op_name == theirs._qualified_op_name
    assert set(ours.overloads()) <= set(theirs.overloads())
    for overload in ours.overloads():
        a, b = getattr(ours, overload), getattr(theirs, overload)
        assert (str(a), repr(a), a.name(), a.__name__) == (str(b), repr(b), b.name(), b.__name__)


@requires_torch
@pytest.mark.parametrize("name,overload", [
    ("add", "Tensor"), ("add", "Scalar"), ("add", "out"), ("add_", "Tensor"), ("sum", "default"),
    ("sum", "dim_IntList"), ("mm", "default"), ("mm", "out"), ("relu", "default"), ("relu_", "default"),
    ("view", "default"), ("view", "dtype"), ("max", "dim"), ("pow", "Tensor_Scalar"), ("div", "Tensor_mode"),
    ("transpose", "int"), ("softmax", "int"), ("clone", "default"), ("eq", "Scalar"), ("cat", "default"),
    ("expand", "default"), ("permute", "default"), ("squeeze", "dim")])
def test_schema_text_matches_torch(name, overload):
    ours = getattr(getattr(aten, name), overload)._schema
    theirs = getattr(getattr(torch.ops.aten, name), overload)._schema
    assert str(ours) == str(theirs)
    assert ours.name == theirs.name and ours.overload_name == theirs.overload_name
    assert [a.name for a in ours.arguments] == [a.name for a in theirs.arguments]
    assert [a.kwarg_only for a in ours.arguments] == [a.kwarg_only for a in theirs.arguments]
    assert ours.is_mutable == theirs.is_mutable
    assert len(ours.returns) == len(theirs.returns)


@requires_torch
def test_overload_names_mostly_exist_in_torch():
    # every overload of an op torch has must carry one of torch's names (pyctorch-only ops aside)
    for name in aten:  # iterating a namespace gives its op names
        if not hasattr(torch.ops.aten, name):
            continue
        theirs = set(getattr(torch.ops.aten, name).overloads())
        assert set(getattr(aten, name).overloads()) <= theirs, name


@requires_torch
def test_calls_match_torch():
    (a, ta), (b, tb) = pair((3, 4), 0), pair((3, 4), 1)
    (m, tm) = pair((4, 5), 2)
    cases = [
        (aten.add.Tensor(a, b), torch.ops.aten.add.Tensor(ta, tb)),
        (aten.add.Tensor(a, b, alpha=2), torch.ops.aten.add.Tensor(ta, tb, alpha=2)),
        (aten.add.Scalar(a, 2.5), torch.ops.aten.add.Scalar(ta, 2.5)),
        (aten.add(a, b), torch.ops.aten.add(ta, tb)),
        (aten.add.Tensor(self=a, other=b), torch.ops.aten.add.Tensor(self=ta, other=tb)),
        (aten.sum.dim_IntList(a, [1]), torch.ops.aten.sum.dim_IntList(ta, [1])),
        (aten.sum.dim_IntList(a, [0], True), torch.ops.aten.sum.dim_IntList(ta, [0], True)),
        (aten.sum.default(a), torch.ops.aten.sum.default(ta)),
        (aten.mm.default(a, m), torch.ops.aten.mm.default(ta, tm)),
        (aten.relu.default(a), torch.ops.aten.relu.default(ta)),
        (aten.view.default(a, [2, 6]), torch.ops.aten.view.default(ta, [2, 6])),
        (aten.transpose.int(a, 0, 1), torch.ops.aten.transpose.int(ta, 0, 1)),
        (aten.softmax.int(a, 1), torch.ops.aten.softmax.int(ta, 1)),
        (aten.pow.Tensor_Scalar(a, 2), torch.ops.aten.pow.Tensor_Scalar(ta, 2)),
        (aten.add.Tensor(a, 2), torch.ops.aten.add.Tensor(ta, 2)),  # a number for a later tensor argument
    ]
    for got, expected in cases:
        assert_same(got, expected)
    values, indices = aten.max.dim(a, 1)
    t_values, t_indices = torch.ops.aten.max.dim(ta, 1)
    assert_same(values, t_values)
    assert_same(indices, t_indices)


def test_inplace_and_out_overloads_write_their_target():
    a = pyctorch.ones(2, 3)
    result = aten.add_.Tensor(a, pyctorch.ones(2, 3))
    assert result is a and a.tolist() == [[2.0] * 3] * 2
    out = pyctorch.empty(2, 3)
    aten.mul.out(a, a, out=out)
    assert out.tolist() == [[4.0] * 3] * 2
    assert aten.view.default(a, [6])._base is a


def test_view_overload_flags_and_schema_parts():
    assert aten.view.default.is_view and not aten.add.Tensor.is_view
    schema = aten.add_.Tensor._schema
    assert schema.is_mutable and schema.arguments[0].alias_info.is_write
    assert schema.arguments[2].name == "alpha" and schema.arguments[2].default_value == 1
    assert aten.max.dim._schema.returns[0].name == "values"
    assert aten.add.Tensor.tags == []


@requires_torch
def test_errors_match_torch():
    def message(fn):
        with pytest.raises(Exception) as info:
            fn()
        return type(info.value), str(info.value).splitlines()[0]

    assert message(lambda: pyctorch.ops.foo.bar) == message(lambda: torch.ops.foo.bar)
    assert message(lambda: aten.no_such_op) == message(lambda: torch.ops.aten.no_such_op)
    assert message(lambda: aten.add.no_such) == message(lambda: torch.ops.aten.add.no_such)
    a, ta = pair((2,), 0)
    assert message(lambda: aten.add.Scalar(a, a)) == message(lambda: torch.ops.aten.add.Scalar(ta, ta))
    assert message(lambda: aten.relu.default(1.0)) == message(lambda: torch.ops.aten.relu.default(1.0))
    assert not hasattr(pyctorch.ops.torchvision, "nms")


def test_load_library_says_what_is_missing():
    with pytest.raises(OSError, match="cannot load PyTorch C\\+\\+ extension"):
        pyctorch.ops.load_library("libcustom_ops.so")


def test_alias_paths():
    code = ("import torch, torch.ops, torch._ops\n"
            "from torch._ops import OpOverload, OpOverloadPacket\n"
            "assert torch.ops is torch._ops.ops\n"
            "assert isinstance(torch.ops.aten.add, OpOverloadPacket)\n"
            "assert isinstance(torch.ops.aten.add.Tensor, OpOverload)\n"
            "print(torch.ops.aten.mm.default(torch.ones(1, 2), torch.ones(2, 1)).item())\n")
    out = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2.0"
