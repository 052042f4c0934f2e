"""F.interpolate's bicubic mode and antialias=True (bilinear, bicubic) on 4-d inputs, computed as Mh @ x @ Mw^T
with the per-axis matrices of pyctorch/nn/_interp_weights.py: values and input gradients against torch (float64 to
1e-12, float32 at its default tolerance, uint8 exactly with torch's fixed-point rounding, float16 / bfloat16
bicubic), every scale up and down, align_corners, size= and scale_factor= with and without recompute_scale_factor,
batched, non-contiguous and channels-last inputs, torch's errors, nn.Upsample; without torch: properties of the
weights (rows summing to 1, identities, constant images staying constant)."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.nn import _interp_weights
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None

MODES = [("bicubic", False), ("bicubic", True), ("bilinear", True)]  # (mode, antialias)
TOL64 = dict(rtol=1e-12, atol=1e-12)


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(arr, dtype="float64", grad=False):
    p = P.tensor(arr, dtype=getattr(P, dtype)).requires_grad_(grad)
    t = T.tensor(arr, dtype=getattr(T, dtype)).requires_grad_(grad)
    return p, t


def check(xp, xt, seed=0, **kw):
    """Values, and the gradient of sum(output * a fixed random tensor), of pyctorch's and torch's interpolate."""
    yp, yt = PF.interpolate(xp, **kw), TF.interpolate(xt, **kw)
    tol = TOL64 if yt.dtype == T.float64 else {}
    assert_same(yp, yt, **tol)
    if not yt.requires_grad:
        return
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape))
    (yp * P.tensor(g, dtype=yp.dtype)).sum().backward()
    (yt * T.tensor(g, dtype=yt.dtype)).sum().backward()
    assert_same(xp.grad, xt.grad, **tol)


# ---- without torch --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,antialias", MODES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_rows_sum_to_one(mode, antialias, align_corners):
    for n_in in (1, 2, 3, 5, 8, 17, 32):
        for n_out in (1, 2, 3, 4, 7, 16, 33):
            for sf in (None, n_out / n_in * 1.01):
                m = _interp_weights.matrix(n_in, n_out, mode, antialias, align_corners, sf, "float64")
                assert m.shape == (n_out, n_in)
                np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_identities_and_constants():
    x = P.tensor(rand((2, 3, 5, 7)), requires_grad=True)
    y = PF.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True)
    assert y.tolist() == x.tolist()
    y.sum().backward()
    assert (x.grad == 1).all()
    for mode in ("bilinear", "bicubic"):  # anti-aliased halving of a constant image: the same constant
        c = P.full((1, 2, 8, 12), 3.25, dtype=P.float64)
        y = PF.interpolate(c, scale_factor=0.5, mode=mode, antialias=True)
        assert y.shape == (1, 2, 4, 6)
        np.testing.assert_allclose(np.array(y.tolist()), 3.25, rtol=0, atol=1e-14)
        u = PF.interpolate(P.full((1, 3, 9, 9), 200, dtype=P.uint8), size=(4, 13), mode=mode, antialias=True)
        assert u.dtype == P.uint8 and (u == 200).all()


def test_bicubic_by_hand():
    # 1 -> 4: the input's only pixel everywhere. 2 -> 4, output 0: source -0.25, taps -2..1 clamped to 0, 0, 0, 1,
    # so the value is input[1] times the cubic (a = -0.75) at distance 1.25: ((a*x - 5a)*x + 8a)*x - 4a = -0.10546875
    assert PF.interpolate(P.ones(1, 1, 1, 1), size=(4, 4), mode="bicubic").tolist() == [[[[1.0] * 4] * 4]]
    y = PF.interpolate(P.tensor([[[[0.0, 1.0]]]], dtype=P.float64), size=(1, 4), mode="bicubic")
    np.testing.assert_allclose(np.array(y.tolist()).ravel(), [-0.10546875, 0.2265625, 0.7734375, 1.10546875])


def test_errors():
    x = P.ones(1, 1, 4, 4)
    with pytest.raises(NotImplementedError, match="compute_indices_weights_cubic.*Long"):
        PF.interpolate(x.long(), size=3, mode="bicubic")
    with pytest.raises(NotImplementedError, match="compute_index_ranges_weights.*Half"):
        PF.interpolate(x.half(), size=3, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match="greater than 0"):
        PF.interpolate(x, size=(0, 3), mode="bicubic")
    with pytest.raises(RuntimeError, match="Non-empty 4D"):
        PF.interpolate(x[:, :0], size=3, mode="bicubic", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias"):
        PF.interpolate(x, size=3, mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError):  # lanczos is not there yet
        PF.interpolate(x, size=3, mode="lanczos", antialias=True)


# ---- against torch --------------------------------------------------------------------------------------------

SIZES = [(5, 3), (7, 2), (3, 8), (32, 17), (17, 32), (1, 4), (4, 1), (6, 6)]  # (in, out) along one axis
SCALES = [0.3, 1.7, 2.0, 0.5, 1.1, (0.7, 2.3)]


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode,antialias", MODES)
def test_sizes_against_torch(mode, antialias, align_corners, dtype):
    for n, ((h, oh), (w, ow)) in enumerate(zip(SIZES, SIZES[3:] + SIZES[:3])):
        if antialias and ow == 1 and oh != h:
            continue  # torch's bug: test_width_one_output
        xp, xt = both(rand((2, 3, h, w), seed=n), dtype, grad=True)
        check(xp, xt, n, size=(oh, ow), mode=mode, antialias=antialias, align_corners=align_corners)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode,antialias", MODES)
def test_scale_factors_against_torch(mode, antialias, dtype):
    for n, sf in enumerate(SCALES):
        for rsf in (None, True):
            h, w = (11, 9) if n % 2 else (5, 14)
            xp, xt = both(rand((1, 2, h, w), seed=n), dtype, grad=True)
            check(xp, xt, n, scale_factor=sf, recompute_scale_factor=rsf, mode=mode, antialias=antialias,
                  align_corners=n == 3)


@requires_torch
@pytest.mark.parametrize("mode,antialias", MODES)
def test_uint8_against_torch(mode, antialias):
    rng = np.random.default_rng(7)
    for n, channels in enumerate((1, 3, 5)):  # torch's AVX2 path takes <= 4 channels: the same numbers
        for kw in (dict(size=(13, 4)), dict(size=(2, 29)), dict(scale_factor=0.3), dict(scale_factor=1.7),
                   dict(size=(9, 7), align_corners=True)):
            a = rng.integers(0, 256, size=(2, channels, 9, 11))
            xp, xt = both(a, "uint8")
            assert_same(PF.interpolate(xp, mode=mode, antialias=antialias, **kw),
                        TF.interpolate(xt, mode=mode, antialias=antialias, **kw))


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_float_bicubic_against_torch(dtype):
    for n, size in enumerate(((3, 8), (13, 5))):
        xp, xt = both(rand((1, 2, 6, 7), seed=n) * 3, dtype, grad=True)
        check(xp, xt, n, size=size, mode="bicubic", align_corners=n == 1)


@requires_torch
@pytest.mark.parametrize("mode,antialias", MODES)
def test_same_size_under_a_scale_factor(mode, antialias):
    """5 * 1.1 -> 5: torch's anti-aliased kernel copies such an axis but its backward resamples it; its bicubic
    kernel resamples it but its backward copies when both axes keep their size."""
    for sf in (1.1, (1.1, 2.0), (0.9, 1.1)):
        xp, xt = both(rand((1, 2, 5, 6)), grad=True)
        check(xp, xt, scale_factor=sf, mode=mode, antialias=antialias)


@requires_torch
@pytest.mark.parametrize("mode,antialias", MODES)
def test_non_contiguous_and_channels_last(mode, antialias):
    base = rand((2, 4, 9, 12), seed=3)
    xp, xt = both(base, "float32")
    cp = xp.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    ct = xt.contiguous(memory_format=T.channels_last)
    assert tuple(cp.stride()) == tuple(ct.stride())
    for size in ((5, 17), (20, 4)):
        assert_same(PF.interpolate(cp, size=size, mode=mode, antialias=antialias),
                    TF.interpolate(ct, size=size, mode=mode, antialias=antialias))
    xp, xt = both(base, grad=True)
    yp = PF.interpolate(xp.transpose(-1, -2)[:, 1:, ::2], size=(7, 3), mode=mode, antialias=antialias)
    yt = TF.interpolate(xt.transpose(-1, -2)[:, 1:, ::2], size=(7, 3), mode=mode, antialias=antialias)
    assert_same(yp, yt, **TOL64)
    yp.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    assert_same(xp.grad, xt.grad, **TOL64)


@requires_torch
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_width_one_output(mode):
    """torch's anti-aliased float kernel, for an output of width 1 from a channels-first input, gives every output
    row the first row's value (its vertical pass reads the first row's taps for its whole inner loop, which runs
    along H there): a torch bug that pyctorch does not copy. Its values are those of torch's channels-last kernel,
    its gradient torch's (which resamples every row)."""
    xp, xt = both(rand((1, 2, 11, 4)), grad=True)
    yp = PF.interpolate(xp, size=(3, 1), mode=mode, antialias=True)
    yt = TF.interpolate(xt.contiguous(memory_format=T.channels_last), size=(3, 1), mode=mode, antialias=True)
    assert_same(yp, yt, **TOL64)
    gp, = P.autograd.grad(yp.sum(), xp)
    gt, = T.autograd.grad(TF.interpolate(xt, size=(3, 1), mode=mode, antialias=True).sum(), xt)
    assert_same(gp, gt, **TOL64)


@requires_torch
def test_upsample_module_bicubic():
    for spec in ("Upsample(scale_factor=2, mode='bicubic')",
                 "Upsample(size=(3, 7), mode='bicubic', align_corners=True)"):
        mp, mt = eval("P.nn." + spec), eval("T.nn." + spec)
        assert repr(mp) == repr(mt)
        xp, xt = both(rand((2, 3, 4, 5), seed=6))
        assert_same(mp(xp), mt(xt), **TOL64)
