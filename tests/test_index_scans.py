"""max/min along a dim and argmax/argmin on contiguous float rows (Note [Index scans], reduce_kernels_argmax.c): the
vector best-value scan and a first-occurrence search must keep the element the element-by-element loop keeps: the
first of ties, the first NaN, the first zero with its own sign. Checked against numpy (first occurrence) always and
against torch, over short and long rows, 1 and 2 threads, and rows split between threads."""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T


def _rows(dtype, n):
    rng = np.random.default_rng(n)
    base = rng.integers(-3, 4, size=(9, n)).astype(dtype)  # many ties
    base[1, n // 2] = np.nan
    base[2, [3 % n, n - 1]] = np.nan
    base[3] = 0.0
    base[3, ::2] = -0.0
    base[4] = -0.0
    base[5, -1] = 100
    base[6, 0] = -100
    base[7] = rng.standard_normal(n)
    base[8, :] = np.inf
    return base


def _numpy_best(a, is_max):
    idx = np.argmax(a, axis=-1) if is_max else np.argmin(a, axis=-1)
    nan_rows = np.isnan(a).any(axis=-1)
    idx[nan_rows] = np.isnan(a[nan_rows]).argmax(axis=-1)
    return idx


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [31, 32, 33, 100, 1024, 5000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_occurrence_like_numpy(dtype, n, threads):
    a = _rows(dtype, n)
    x = P.tensor(a)
    old = P.get_num_threads()
    P.set_num_threads(threads)
    try:
        for is_max in (True, False):
            want = _numpy_best(a, is_max)
            v, i = x.max(-1) if is_max else x.min(-1)
            assert np.array_equal(i.numpy(), want)
            assert np.array_equal((x.argmax(-1) if is_max else x.argmin(-1)).numpy(), want)
            got_v = v.numpy()
            picked = a[np.arange(a.shape[0]), want]
            assert np.array_equal(got_v, picked, equal_nan=True)
            assert np.array_equal(np.signbit(got_v), np.signbit(picked))  # the first zero, with its sign
    finally:
        P.set_num_threads(old)


def test_whole_tensor_argmax_and_strided_rows():
    a = _rows(np.float32, 300)
    x = P.tensor(a)
    assert int(x.argmax()) == int(_numpy_best(a.reshape(1, -1), True)[0])  # the first NaN of the flattened tensor
    assert int(x[7:].argmin()) == int(_numpy_best(a[7:].reshape(1, -1), False)[0])
    assert int(x[7].argmax()) == int(np.argmax(a[7]))
    strided = P.tensor(a.T.copy()).t()  # the same rows, not contiguous: the loop
    assert np.array_equal(strided.max(-1).indices.numpy(), x.max(-1).indices.numpy())
    assert np.array_equal(x.max(0).indices.numpy(), _numpy_best(a.T.copy(), True))


@requires_torch
@pytest.mark.parametrize("n", [40, 1024])
def test_matches_torch(n):
    a = _rows(np.float32, n)
    for fn in ("max", "min"):
        pv, pi = getattr(P.tensor(a), fn)(-1)
        tv, ti = getattr(T.tensor(a), fn)(-1)
        assert np.array_equal(pi.numpy(), ti.numpy()) and np.array_equal(pv.numpy(), tv.numpy(), equal_nan=True)
        assert np.array_equal(np.signbit(pv.numpy()), np.signbit(tv.numpy()))
    assert np.array_equal(P.tensor(a).argmax(1).numpy(), T.tensor(a).argmax(1).numpy())
    assert np.array_equal(P.tensor(a).argmin(1).numpy(), T.tensor(a).argmin(1).numpy())


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64", "int64", "complex128", "bfloat16"])
def test_masked_fill_blend_on_contiguous_runs(dtype):
    """masked_fill's contiguous runs are blended by bit masks (masked.c); strided runs keep the branch: both give
    numpy's np.where, for every element width."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 50, size=(33, 65))
    mask = rng.random((33, 65)) > 0.5
    x = P.tensor(a).to(getattr(P, dtype))
    m = P.tensor(mask)
    want = np.where(mask, 7, a)

    def f64(t):
        return (t.real if t.is_complex() else t).to(P.float64).numpy()
    got = f64(x.masked_fill(m, 7))
    np.testing.assert_array_equal(got, want.astype(np.float64) if dtype != "bool" else np.where(mask, 1, a != 0))
    strided = P.tensor(a.T.copy()).to(getattr(P, dtype)).t()
    got_s = f64(strided.masked_fill(m, 7))
    np.testing.assert_array_equal(got_s, got)
    y = x.clone()
    y.masked_fill_(m[0], 7)  # the mask broadcast along rows
    filled = 1.0 if dtype == "bool" else 7.0
    np.testing.assert_array_equal(f64(y)[:, mask[0]], np.full((33, mask[0].sum()), filled))
