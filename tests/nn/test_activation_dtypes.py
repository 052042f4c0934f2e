"""Activations on integer and bool inputs, as torch 2.13: most have no integer kernel (NotImplementedError naming
torch's kernel and dtype), hardtanh/relu6 clamp in the integer dtype, sigmoid/tanh return float."""
import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

NAMES = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "hardtanh",
         "hardswish", "hardsigmoid", "sigmoid", "tanh", "logsigmoid", "softsign", "tanhshrink", "hardshrink",
         "softshrink"]


def _outcome(m, name, dtype):
    x = m.tensor([-3, -1, 0, 2, 5], dtype=getattr(m, dtype))
    try:
        r = getattr(m.nn.functional, name)(x)
    except Exception as e:  # noqa: BLE001 -- the error is the outcome compared
        return type(e), str(e), None
    return None, str(r.dtype).split(".")[-1], r.double().numpy()


@requires_torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", NAMES)
def test_integer_inputs_as_torch(name, dtype):
    te, tinfo, tval = _outcome(torch, name, dtype)
    pe, pinfo, pval = _outcome(pyctorch, name, dtype)
    assert (te is None) == (pe is None), (tinfo, pinfo)
    if te is not None:
        assert pe.__mro__[0].__name__ == te.__name__ or issubclass(pe, te), (pe, pinfo, te, tinfo)
        assert pinfo == tinfo, (pinfo, tinfo)
    else:
        assert pinfo == tinfo
        np.testing.assert_allclose(pval, tval, rtol=1e-6)


def test_hand_values():
    F = pyctorch.nn.functional
    x = pyctorch.tensor([-3, -1, 0, 2, 5])
    r = F.hardtanh(x)
    assert r.dtype == pyctorch.int64 and r.tolist() == [-1, -1, 0, 1, 1]
    assert F.relu6(x).tolist() == [0, 0, 0, 2, 5] and F.relu6(x).dtype == pyctorch.int64
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        F.hardtanh(x.to(pyctorch.uint8))
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.relu6(x > 0)
    with pytest.raises(NotImplementedError, match="\"elu_cpu\" not implemented for 'Long'"):
        F.elu(x)
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Byte'"):
        F.gelu(x.to(pyctorch.uint8))
    assert F.elu(x.float()).dtype == pyctorch.float32


HARDTANH_CASES = {
    "int": lambda m, h: h(m.tensor([-3, -1, 0, 2, 5])),
    "int fractional limits": lambda m, h: h(m.tensor([-3, -1, 0, 2, 5]), -1.5, 2.5),
    "uint8 negative limit": lambda m, h: h(m.tensor([0, 1, 3, 7], dtype=m.uint8), -1, 2),
    "uint8 limit truncated to 0": lambda m, h: h(m.tensor([0, 3], dtype=m.uint8), -0.5, 1),
    "uint8": lambda m, h: h(m.tensor([0, 1, 3, 7], dtype=m.uint8), 0, 2),
    "bool": lambda m, h: h(m.tensor([True, False])),
    "min above max": lambda m, h: h(m.tensor([-3, 0, 5]), 2, 1),
    "int8 limits overflow": lambda m, h: h(m.tensor([1, 2], dtype=m.int8), -1000, 1000),
    "float": lambda m, h: h(m.tensor([-3.0, 0.5, 3.0]), -1, 2),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(HARDTANH_CASES))
def test_hardtanh_op_as_torch(case):
    """The op itself (torch._C._nn.hardtanh; pyctorch.hardtanh), not only F.hardtanh's checks."""
    def run(m, h):
        try:
            r = HARDTANH_CASES[case](m, h)
        except Exception as e:  # noqa: BLE001 -- the error is the outcome compared
            return type(e).__name__, str(e)
        return str(r.dtype), r.tolist()
    assert run(pyctorch, pyctorch.hardtanh) == run(torch, torch._C._nn.hardtanh)
    x = pyctorch.tensor([-3, -1, 0, 2, 5])
    assert pyctorch.nn.functional.hardtanh(x, -1.5, 2.5, inplace=True) is x and x.tolist() == [-1, -1, 0, 2, 2]


@pytest.mark.parametrize("call", [lambda m, b: m.relu(b), lambda m, b: b.relu_(), lambda m, b: m.nn.functional.relu(b),
                                  lambda m, b: m.nn.ReLU()(b)])
def test_relu_refuses_bool(call):
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        call(pyctorch, pyctorch.tensor([True, False]))
