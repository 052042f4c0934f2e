"""gather along the last dim in one pass (cpu/gather_rows.c, Note [Fused gather]): numpy's take_along_axis values for
every element size, strided and transposed operands, leading dims, rows shorter than the fused path takes, out=,
and the general path's errors for values out of range; against torch too."""
import numpy as np
import pytest

import pyctorch

try:
    import torch
except ImportError:
    torch = None

DTYPES = ["bool", "uint8", "int16", "float16", "bfloat16", "int32", "float32", "int64", "float64", "complex64",
          "complex128"]


def source(dtype, shape, seed=0):
    x = pyctorch.tensor(np.random.RandomState(seed).randn(*shape) * 40)
    if dtype.startswith("complex"):
        return pyctorch.complex(x, -x).to(getattr(pyctorch, dtype))
    return x.to(getattr(pyctorch, dtype))


def as_numpy(t):
    return t.view(pyctorch.int16).numpy() if t.dtype == pyctorch.bfloat16 else t.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,cols", [((64, 300), 500), ((3, 5, 40), 17), ((8, 9), 15), ((2, 70), 16), ((1, 50000), 40000)])
@pytest.mark.parametrize("threads", [1, 2])
def test_values(dtype, shape, cols, threads):
    old = pyctorch.get_num_threads()
    pyctorch.set_num_threads(threads)
    try:
        x = source(dtype, shape)
        idx = np.random.RandomState(1).randint(0, shape[-1], shape[:-1] + (cols,))
        got = x.gather(-1, pyctorch.tensor(idx))
        np.testing.assert_array_equal(as_numpy(got), np.take_along_axis(as_numpy(x), idx, -1))
    finally:
        pyctorch.set_num_threads(old)


def test_strided_operands_and_out():
    x = source("float32", (300, 64)).t()  # rows with a stride of 64 elements
    idx = np.random.RandomState(2).randint(0, 300, (40, 64)).T.copy()  # (64, 40)
    it = pyctorch.tensor(idx.T.copy()).t()  # a transposed index
    np.testing.assert_array_equal(x.gather(1, it).numpy(), np.take_along_axis(x.numpy(), idx, 1))
    out = pyctorch.empty(64, 40)
    pyctorch.gather(x, 1, it, out=out)
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(x.numpy(), idx, 1))
    small = pyctorch.tensor(idx[:, :20]).to(pyctorch.int32)  # int32 indices take the general path
    np.testing.assert_array_equal(x.gather(1, small).numpy(), np.take_along_axis(x.numpy(), idx[:, :20], 1))


@pytest.mark.parametrize("bad", [300, -1, 10 ** 12])
def test_out_of_range_raises_the_general_message(bad):
    x = source("float32", (16, 300))
    idx = pyctorch.tensor(np.random.RandomState(3).randint(0, 300, (16, 64)))
    idx[9, 33] = bad
    with pytest.raises(RuntimeError, match="index %d is out of bounds for dimension 1 with size 300" % bad):
        x.gather(1, idx)
    if torch is not None:
        with pytest.raises(RuntimeError, match="index %d is out of bounds for dimension 1 with size 300" % bad):
            torch.tensor(x.numpy()).gather(1, torch.tensor(idx.numpy()))


@pytest.mark.skipif(torch is None, reason="torch is not installed: the comparison with torch is skipped")
def test_matches_torch_with_gradient():
    a = np.random.RandomState(4).randn(32, 100).astype(np.float32)
    idx = np.random.RandomState(5).randint(0, 100, (32, 50))
    xt, xp = torch.tensor(a, requires_grad=True), pyctorch.tensor(a, requires_grad=True)
    yt, yp = xt.gather(1, torch.tensor(idx)), xp.gather(1, pyctorch.tensor(idx))
    np.testing.assert_array_equal(yp.detach().numpy(), yt.detach().numpy())
    (yt * yt).sum().backward()
    (yp * yp).sum().backward()
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
