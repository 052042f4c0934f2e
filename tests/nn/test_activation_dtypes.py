"""Activations on integer and bool inputs, as torch 2.13: most have no integer kernel (NotImplementedError naming
torch's kernel and dtype), hardtanh/relu6 clamp in the integer dtype, sigmoid/tanh return float."""
import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

NAMES = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "hardtanh",
         "hardswish", "hardsigmoid", "sigmoid", "tanh", "logsigmoid", "softsign", "tanhshrink", "hardshrink",
         "softshrink"]
# where pyctorch's error type differs from torch's (torch: RuntimeError "Boolean inputs not supported for relu")
DIFFERENT_ERROR = {("relu", "bool")}


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
    if (name, dtype) in DIFFERENT_ERROR:
        assert te is not None and pe is not None
        return
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
