"""torch.special: every function pyctorch provides, against torch (values, dtype, gradients) and hand values."""
import math

import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

X = [-2.0, -0.5, 0.0, 0.3, 1.7, 40.0, float("inf"), float("-inf"), float("nan")]
UNARY = ["digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expm1", "expit", "gammaln", "i0", "i1", "log1p",
         "logit", "sinc", "ndtr", "entr", "round"]


@requires_torch
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unary_matches_torch(name, dtype):
    values = X if dtype != "int64" else [-2, 0, 1, 3]
    try:
        t = getattr(torch.special, name)(torch.tensor(values, dtype=getattr(torch, dtype)))
    except Exception as e:  # noqa: BLE001 -- round of an integer tensor: the same error type
        with pytest.raises(type(e)):
            getattr(pyctorch.special, name)(pyctorch.tensor(values, dtype=getattr(pyctorch, dtype)))
        return
    p = getattr(pyctorch.special, name)(pyctorch.tensor(values, dtype=getattr(pyctorch, dtype)))
    assert str(p.dtype) == str(t.dtype)
    tol = 1e-12 if p.dtype == pyctorch.float64 else 2e-6
    np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=tol, atol=tol, equal_nan=True)


@requires_torch
@pytest.mark.parametrize("name", ["ndtr", "entr", "expit", "gammaln"])
def test_gradients_match_torch(name):
    values = [0.2, 0.7, 1.5, 3.0]
    p = pyctorch.tensor(values, dtype=pyctorch.float64, requires_grad=True)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    getattr(pyctorch.special, name)(p).sum().backward()
    getattr(torch.special, name)(t).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@requires_torch
def test_binary_and_reductions_match_torch():
    x, y = [0.0, 0.0, 1.0, 2.0, 3.0], [float("nan"), 1.0, 1.0, -1.0, 0.5]
    for name in ("xlogy", "xlog1py"):
        p = getattr(pyctorch.special, name)(pyctorch.tensor(x), pyctorch.tensor(y))
        t = getattr(torch.special, name)(torch.tensor(x), torch.tensor(y))
        np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)
    a = [[2.5, 3.0], [4.0, 7.5]]
    np.testing.assert_allclose(pyctorch.special.multigammaln(pyctorch.tensor(a, dtype=pyctorch.float64), 3).numpy(),
                               torch.special.multigammaln(torch.tensor(a, dtype=torch.float64), 3).numpy(), rtol=1e-12)
    z = [[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]
    for name in ("softmax", "log_softmax"):
        p = getattr(pyctorch.special, name)(pyctorch.tensor(z), 1, dtype=pyctorch.float64)
        t = getattr(torch.special, name)(torch.tensor(z), 1, dtype=torch.float64)
        assert str(p.dtype) == str(t.dtype)
        np.testing.assert_allclose(p.numpy(), t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(pyctorch.special.logsumexp(pyctorch.tensor(z), 1).numpy(),
                               torch.special.logsumexp(torch.tensor(z), 1).numpy(), rtol=1e-6)
    assert pyctorch.special.multigammaln(pyctorch.tensor([0.5, 1.0]), 3).tolist() == \
        torch.special.multigammaln(torch.tensor([0.5, 1.0]), 3).tolist()
    for m in (torch, pyctorch):
        with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
            m.special.multigammaln(m.tensor([2.0]), 0)


def test_hand_values():
    s = pyctorch.special
    assert s.ndtr(pyctorch.tensor([0.0])).item() == 0.5
    assert abs(s.ndtr(pyctorch.tensor([1.0], dtype=pyctorch.float64)).item() - 0.8413447460685429) < 1e-15
    assert s.entr(pyctorch.tensor([0.0, -1.0])).tolist() == [0.0, -math.inf]
    assert s.xlog1py(pyctorch.tensor([0.0]), pyctorch.tensor([-1.0])).tolist() == [0.0]
    assert s.expit(pyctorch.tensor([0.0])).item() == 0.5
    assert abs(s.multigammaln(pyctorch.tensor([2.0], dtype=pyctorch.float64), 1).item()) < 1e-15  # lgamma(2) = 0
    out = pyctorch.zeros(2)
    assert s.ndtr(pyctorch.tensor([0.0, 0.0]), out=out) is out and out.tolist() == [0.5, 0.5]
    assert math.isnan(pyctorch.i0(pyctorch.tensor([math.inf])).item())  # as torch's Chebyshev series
    assert abs(s.zeta(2.0, pyctorch.tensor([1.0], dtype=pyctorch.float64)).item() - math.pi ** 2 / 6) < 1e-15
