"""mul/div of a float16/bfloat16 tensor by a 0-d `other` (a Python number or a 0-d tensor) compute in float
with the scalar's own value, not its float16/bfloat16 rounding, as torch's kernels do: bit-equal results."""
import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch

SCALARS = [1.7019, 3.3, -0.1234567, 1e-4, 100000, 2 ** 63 - 1, 70000.0, True, 3]


def test_float16_by_hand():
    x = np.array([1e-3, 2.0, 0.333], np.float16)
    px = pyctorch.tensor(x)
    for s in (1.7019, 100000, 3.3):
        want = (x.astype(np.float32) * np.float32(s)).astype(np.float16)
        np.testing.assert_array_equal((px * s).numpy(), want)
        want = (x.astype(np.float32) / np.float32(s)).astype(np.float16)
        np.testing.assert_array_equal((px / s).numpy(), want)


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ["mul", "div", "multiply", "true_divide", "divide", "add", "sub"])
def test_bit_equal_to_torch(dtype, op):
    x = (np.random.default_rng(0).standard_normal(4096) * 10).astype(np.float32)
    px, tx = pyctorch.tensor(x).to(getattr(pyctorch, dtype)), torch.tensor(x).to(getattr(torch, dtype))
    for s in SCALARS:
        if op == "sub" and s is True:
            continue  # subtracting a bool is an error in both
        for other in (s, "tensor"):
            po = pyctorch.tensor(s) if other == "tensor" else s
            to = torch.tensor(s) if other == "tensor" else s
            a = getattr(pyctorch, op)(px, po).float().numpy()
            b = getattr(torch, op)(tx, to).float().numpy()
            np.testing.assert_array_equal(a, b, err_msg=f"{op}({dtype}, {s!r} as {other})")
    # in place and operators
    a, b = px.clone(), tx.clone()
    a.mul_(1.7019)
    b.mul_(1.7019)
    a /= 3.3
    b /= 3.3
    np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())
