"""atan2 (arctan2) and hypot through libmvec's two-input SIMD forms (cpu/vecmath.c) where runs are contiguous, the
scalar libm elsewhere: within a few ulp of float64 numpy either way, torch's special values, and the same values as
torch's to its tolerance."""
import numpy as np
import pytest

import pyctorch

try:
    import torch
except ImportError:
    torch = None

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 1e-40, -3e38, 2.5], np.float32)


def operands(dtype, n=10007):
    rs = np.random.RandomState(0)
    a = (rs.randn(n) * 10.0 ** rs.randint(-4, 5, n)).astype(dtype)
    b = (rs.randn(n) * 10.0 ** rs.randint(-4, 5, n)).astype(dtype)
    A, B = np.meshgrid(SPECIAL.astype(dtype), SPECIAL.astype(dtype))
    return np.concatenate([a, A.ravel()]), np.concatenate([b, B.ravel()])


@pytest.mark.parametrize("name", ["atan2", "arctan2", "hypot"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_float64_numpy(name, dtype):
    a, b = operands(dtype)
    ref = getattr(np, name)(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(over="ignore"):  # hypot of two values near float32's largest is inf in float32
        ref_t = ref.astype(dtype)
    eps = np.finfo(dtype).eps
    for got in (getattr(pyctorch, name)(pyctorch.tensor(a), pyctorch.tensor(b)).numpy(),  # contiguous: SIMD
                getattr(pyctorch, name)(pyctorch.tensor(np.stack([a, a]))[:, ::1][0],     # and a strided other
                                        pyctorch.tensor(np.stack([b, b]).T.copy()).t()[0]).numpy()):
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        ok = ~np.isnan(ref)
        np.testing.assert_allclose(got[ok], ref_t[ok], rtol=4 * eps, atol=0)
        # the signs of zero results (atan2(-0, x) is -0 or -pi) are IEEE's
        np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(ref_t[ok]))


def test_broadcast_scalar_operand():
    a = pyctorch.linspace(-3, 3, 101)
    np.testing.assert_allclose(pyctorch.atan2(a, pyctorch.tensor(2.0)).numpy(), np.arctan2(a.numpy(), np.float32(2)),
                               rtol=4e-7)
    np.testing.assert_allclose(pyctorch.hypot(a, pyctorch.tensor(2.0)).numpy(), np.hypot(a.numpy(), np.float32(2)),
                               rtol=4e-7)


@pytest.mark.skipif(torch is None, reason="torch is not installed: the comparison with torch is skipped")
@pytest.mark.parametrize("name", ["atan2", "hypot"])
def test_matches_torch(name):
    a, b = operands(np.float32)
    t = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
    p = getattr(pyctorch, name)(pyctorch.tensor(a), pyctorch.tensor(b)).numpy()
    np.testing.assert_allclose(p, t, rtol=5e-7, atol=0, equal_nan=True)
