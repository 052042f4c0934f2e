"""Horizontal reductions walk the innermost kept dim through the kernel's rows (reduce_plan.c's red_do_units): each
output is the same bits as reducing its row alone, for every op, dtype, layout and thread count; and the values and
indices agree with numpy."""
import numpy as np
import pytest

import pyctorch

SHAPES = [(7, 16), (33, 64), (5, 96), (9, 256), (3, 1000), (2, 8192), (2, 8193), (4, 3, 70)]


def rows_alone(x, fn):
    """fn over each row of x's last dim, one call per row (a one-run reduction: no rows walk)"""
    flat = x.reshape(-1, x.shape[-1])
    return pyctorch.stack([fn(flat[i]) for i in range(flat.shape[0])]).reshape(x.shape[:-1])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
@pytest.mark.parametrize("threads", [1, 2])
def test_sum_and_mean_rows_are_the_single_row_bits(shape, dtype, threads):
    old = pyctorch.get_num_threads()
    pyctorch.set_num_threads(threads)
    try:
        g = pyctorch.Generator().manual_seed(len(shape) * 1000 + shape[-1])
        x = (pyctorch.randn(*shape, generator=g) * 100).to(getattr(pyctorch, dtype))
        assert pyctorch.equal(x.sum(-1), rows_alone(x, lambda r: r.sum()))
        if x.is_floating_point():
            assert pyctorch.equal(x.mean(-1), rows_alone(x, lambda r: r.mean()))
            ref = x.double().numpy().sum(-1)
            np.testing.assert_allclose(x.sum(-1).double().numpy(), ref, rtol=1e-2 if dtype == "bfloat16" else 1e-5,
                                       atol=1e-3)
        else:
            np.testing.assert_array_equal(x.sum(-1).numpy(), x.numpy().sum(-1))
    finally:
        pyctorch.set_num_threads(old)


@pytest.mark.parametrize("shape", SHAPES)
def test_strided_and_offset_rows(shape):
    g = pyctorch.Generator().manual_seed(1)
    base = pyctorch.randn(*shape[:-1], 2 * shape[-1] + 1, generator=g)
    x = base[..., 1::2]  # rows with a stride of 2 elements
    assert pyctorch.equal(x.sum(-1), rows_alone(x, lambda r: r.sum()))
    y = base[..., 1:shape[-1] + 1]  # contiguous rows starting one element in (not 64-byte aligned)
    assert pyctorch.equal(y.sum(-1), rows_alone(y, lambda r: r.sum()))
    np.testing.assert_allclose(y.sum(-1).numpy(), y.numpy().astype(np.float64).sum(-1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape", SHAPES)
def test_two_output_reductions(shape):
    g = pyctorch.Generator().manual_seed(2)
    x = pyctorch.randint(-50, 50, shape, generator=g).float()  # ties: the first index wins, as numpy's argmax
    for fn, npfn in ((pyctorch.max, np.argmax), (pyctorch.min, np.argmin)):
        v, i = fn(x, -1)
        np.testing.assert_array_equal(i.numpy(), npfn(x.numpy(), -1))
        np.testing.assert_array_equal(v.numpy(), np.take_along_axis(x.numpy(), i.numpy()[..., None], -1)[..., 0])
    v, m = pyctorch.var_mean(x, -1)
    np.testing.assert_allclose(v.numpy(), x.numpy().var(-1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(m.numpy(), x.numpy().mean(-1), rtol=1e-5, atol=1e-6)


def test_keepdim_and_out():
    x = pyctorch.arange(24.0).reshape(2, 3, 4)
    assert x.sum(-1, keepdim=True).shape == (2, 3, 1)
    out = pyctorch.empty(4, 2).t()  # a transposed out: (2, 4) with strides (1, 2)
    pyctorch.sum(pyctorch.arange(40.0).reshape(2, 4, 5), -1, out=out)
    np.testing.assert_array_equal(out.numpy(), np.arange(40.0).reshape(2, 4, 5).sum(-1))
