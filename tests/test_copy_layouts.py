"""Copies that the CPU kernels take other paths for: transposed sources in tiles (Note [Tiled transposes] in
cpu/copy_transpose.c) and float32 <-> float16 through F16C (cpu/copy.c): the same values as numpy's, element by
element, for every element size, ragged edges, offsets and thread counts."""
import numpy as np
import pytest

import pyctorch

DTYPES = ["uint8", "int16", "float16", "bfloat16", "int32", "float32", "int64", "float64", "complex64", "complex128",
          "bool"]


def make(dtype, shape, seed=0):
    rs = np.random.RandomState(seed)
    x = pyctorch.tensor(rs.randn(*shape) * 50)
    return x.to(getattr(pyctorch, dtype)) if dtype != "complex64" and dtype != "complex128" \
        else pyctorch.complex(x, x * 0.5).to(getattr(pyctorch, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1024, 1024), (37, 129), (16, 8), (15, 7), (300, 17), (1, 40), (8, 1000)])
@pytest.mark.parametrize("threads", [1, 2])
def test_transpose_contiguous(dtype, shape, threads):
    old = pyctorch.get_num_threads()
    pyctorch.set_num_threads(threads)
    try:
        x = make(dtype, shape)
        ref = x.view(pyctorch.int16).numpy() if dtype == "bfloat16" else x.numpy()  # bfloat16: compare its bits
        y = x.t().contiguous()
        assert y.is_contiguous() and y.shape == (shape[1], shape[0])
        got = y.view(pyctorch.int16).numpy() if dtype == "bfloat16" else y.numpy()
        np.testing.assert_array_equal(got, ref.T)
    finally:
        pyctorch.set_num_threads(old)


def test_transposed_slices_and_copy_into_views():
    base = make("float32", (70, 90))
    x = base[3:67, 5:88:1]  # an offset and a row stride wider than the row
    np.testing.assert_array_equal(x.t().contiguous().numpy(), base.numpy()[3:67, 5:88].T)
    out = pyctorch.zeros(100, 80)
    out[10:93, 7:71].copy_(x.t())  # a destination view with its own row stride
    expect = np.zeros((100, 80), np.float32)
    expect[10:93, 7:71] = base.numpy()[3:67, 5:88].T
    np.testing.assert_array_equal(out.numpy(), expect)
    # permutes of more dims that coalesce into a 2-d transpose, and ones that do not
    z = make("float32", (6, 40, 50))
    np.testing.assert_array_equal(z.permute(2, 0, 1).contiguous().numpy(), z.numpy().transpose(2, 0, 1))
    np.testing.assert_array_equal(z.permute(1, 2, 0).contiguous().numpy(), z.numpy().transpose(1, 2, 0))
    np.testing.assert_array_equal(z.transpose(1, 2).contiguous().numpy(), z.numpy().transpose(0, 2, 1))


def test_float32_float16_round_trip_matches_numpy():
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    got = pyctorch.tensor(halves.view(np.int16)).view(pyctorch.float16).float().numpy()
    np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(got)], halves.astype(np.float32).view(np.uint32)[~np.isnan(got)])
    assert np.isnan(got).sum() == np.isnan(halves).sum()
    rs = np.random.RandomState(0)
    f = np.concatenate([rs.randn(100000).astype(np.float32) * 10.0 ** rs.randint(-9, 6, 100000),
                        np.array([65504, 65520, 65519.99, 7e4, -7e4, 2 ** -24, 2 ** -25, 2 ** -25 * 1.0001, 5.96e-8,
                                  0.0, -0.0, np.inf, -np.inf, 1e-40], np.float32)]).astype(np.float32)
    with np.errstate(over="ignore"):
        expect = f.astype(np.float16)
    got = pyctorch.tensor(f).half()
    np.testing.assert_array_equal(got.view(pyctorch.int16).numpy(), expect.view(np.int16))
    # a strided source takes the element-by-element conversion: the same values
    np.testing.assert_array_equal(pyctorch.tensor(f)[::3].half().view(pyctorch.int16).numpy(),
                                  expect[::3].view(np.int16))
    nan = pyctorch.tensor(np.array([np.nan, -np.nan], np.float32)).half()
    assert pyctorch.isnan(nan).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 1000), (5, 17), (1, 1), (2, 3, 33)])
def test_flip_reversed_runs(dtype, shape):
    """flip's copy walks its source backwards (the reversed-run loop of cpu/copy.c)"""
    x = make(dtype, shape, seed=3)
    ref = x.view(pyctorch.int16).numpy() if dtype == "bfloat16" else x.numpy()
    for dims in ([-1], [0], [0, -1], list(range(len(shape)))):
        got = x.flip(dims)
        got = got.view(pyctorch.int16).numpy() if dtype == "bfloat16" else got.numpy()
        np.testing.assert_array_equal(got, np.flip(ref, dims))
    # a reversed, strided source: every other element backwards
    y = x[..., ::2].flip(-1)
    got = y.view(pyctorch.int16).numpy() if dtype == "bfloat16" else y.numpy()
    np.testing.assert_array_equal(got, np.flip(ref[..., ::2], -1))
