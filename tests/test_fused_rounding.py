"""Bit-for-bit agreement with torch where torch's vectorized CPU kernels round once (a fused multiply-add):
add/sub/rsub with alpha, lerp, addcmul, and addcdiv's (value * t1) / t2 order; a float16/bfloat16 alpha is
rounded to the tensor's dtype first. Contiguous, strided, broadcast-scalar and in-place forms, every float
dtype (Note [Loop ISA clones] in csrc/aten/cpu/pointwise.h). Optimizers built from these ops then follow
torch's numbers exactly."""
import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

DTYPES = ["float32", "float64", "bfloat16", "float16"]
N = 4099  # not a multiple of any vector width


def _inputs(m, dtype, layout):
    rs = np.random.RandomState(7)
    arrs = [rs.randn(2 * N).astype(np.float32) for _ in range(3)]
    ts = [m.from_numpy(x).to(getattr(m, dtype)) for x in arrs]
    if layout == "strided":
        return [t[::2] for t in ts]
    if layout == "scalar_b":
        return [ts[0][:N], ts[1][:1].expand(N), ts[2][:N]]
    return [t[:N].contiguous() for t in ts]


def _ops(m, a, b, c, w):
    return {
        "add": m.add(a, b, alpha=0.1),
        "sub": m.sub(a, b, alpha=0.3),
        "rsub": m.rsub(a, b, alpha=0.7),
        "add_inplace": a.clone().add_(b, alpha=-1.7),
        "lerp_scalar_small": m.lerp(a, b, 0.1),
        "lerp_scalar_large": m.lerp(a, b, 0.9),
        "lerp_tensor": m.lerp(a, b, w),
        "addcmul": m.addcmul(a, b, c, value=0.001),
        "addcmul_inplace": a.clone().addcmul_(b, c, value=-0.25),
        "addcdiv": m.addcdiv(a, b, c, value=0.001),
    }


def _run(m, dtype, layout):
    a, b, c = _inputs(m, dtype, layout)
    w = (c.float().abs() * 0.4).to(c.dtype)  # weights on both sides of 0.5
    return {k: v.float().numpy() for k, v in _ops(m, a, b, c, w).items()}


@requires_torch
@pytest.mark.parametrize("layout", ["contiguous", "strided", "scalar_b"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_bitwise_equal_to_torch(dtype, layout):
    """float32/float64: bit for bit. float16/bfloat16: torch's own strided (scalar) path rounds differently
    from its vectorized one, so the comparison allows one unit in the last place there, and only lerp
    (whose weight is never rounded to the dtype) must be exact."""
    ours, theirs = _run(pyctorch, dtype, layout), _run(torch, dtype, layout)
    for name in ours:
        o, t = ours[name], theirs[name]
        if dtype in ("float32", "float64") or name.startswith("lerp"):
            same = (o == t) | (np.isnan(o) & np.isnan(t))
            assert same.all(), f"{name}: {np.count_nonzero(~same)} of {same.size} elements differ"
        else:
            ulp = 2.0 ** (-7 if dtype == "bfloat16" else -10)
            np.testing.assert_allclose(o, t, rtol=ulp, atol=8 * ulp, err_msg=name)  # inputs are O(1)


def test_single_rounding_float32():
    """Without torch: add with alpha and lerp round once (the float64 product rounded to float32)."""
    a, b = _inputs(pyctorch, "float32", "contiguous")[:2]
    an, bn = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
    got = pyctorch.add(a, b, alpha=0.1).numpy()
    np.testing.assert_array_equal(got, (an + np.float64(np.float32(0.1)) * bn).astype(np.float32))
    w = np.float64(np.float32(0.25))
    d = (b - a).numpy().astype(np.float64)
    np.testing.assert_array_equal(pyctorch.lerp(a, b, 0.25).numpy(), (an + w * d).astype(np.float32))


def test_integer_alpha_is_exact():
    a = pyctorch.tensor([2 ** 40 + 1, -7, 3], dtype=pyctorch.int64)
    b = pyctorch.tensor([3, 5, -2 ** 40], dtype=pyctorch.int64)
    assert pyctorch.add(a, b, alpha=3).tolist() == [2 ** 40 + 10, 8, 3 - 3 * 2 ** 40]
    assert pyctorch.addcmul(a, b, b, value=2).tolist() == [2 ** 40 + 19, 43, 3]  # 2 * 2**80 wraps to 0


@requires_torch
def test_scalar_arithmetic_in_formulas_is_double():
    """Backward formulas that compute with Python numbers (pow's exponent - 1, lerp's 1 - weight, elu's
    alpha * scale) keep double precision, as torch's C++ Scalars (Note [Arithmetic of Python numbers])."""
    out = []
    for m in (pyctorch, torch):
        x = m.tensor([2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([5.0, 1.0], dtype=m.float64, requires_grad=True)
        (x.pow(1 / 3).sum() + m.lerp(x, y, 0.1).sum() + m.nn.functional.elu(-x, alpha=0.3).sum()).backward()
        out.append((x.grad.tolist(), y.grad.tolist()))
    assert out[0] == out[1]
    assert pyctorch.tensor([1.0]).dtype == pyctorch.float32 and (pyctorch.ones(2) * 0.1).dtype == pyctorch.float32
