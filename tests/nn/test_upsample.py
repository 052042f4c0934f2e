"""Resampling (F.interpolate: nearest, nearest-exact, linear, bilinear, area) against torch: output
sizes, the exact source indices torch uses for a given scale_factor (with and without
recompute_scale_factor, align_corners), values and input gradients, channels-last and
non-contiguous inputs, dtypes, errors, the Upsample modules; float64 gradcheck and hand values."""
import warnings

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(arr, dtype="float64", grad=False):
    p = P.tensor(arr.tolist(), dtype=getattr(P, dtype)).requires_grad_(grad)
    t = T.tensor(arr, dtype=getattr(T, dtype)).requires_grad_(grad) if T is not None else None
    return p, t


def check(arr, dtype="float64", seed=0, **kw):
    xp, xt = both(arr, dtype, grad=True)
    yp, yt = PF.interpolate(xp, **kw), TF.interpolate(xt, **kw)
    assert_same(yp, yt)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(yt.shape))
    yp.backward(P.tensor(g.tolist(), dtype=yp.dtype))
    yt.backward(T.tensor(g, dtype=yt.dtype))
    assert_same(xp.grad, xt.grad)


# ---- hand values ------------------------------------------------------------------------------

def test_values_by_hand():
    x = P.arange(4.0).view(1, 1, 4)
    assert PF.interpolate(x, scale_factor=2).tolist() == [[[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]]]
    assert PF.interpolate(x, size=7, mode="linear", align_corners=True).tolist() == \
        [[[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]]]
    assert PF.interpolate(x, scale_factor=2, mode="linear").tolist() == \
        [[[0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0]]]
    # nearest with scale_factor=1.7: torch's source index floor(o / 1.7) (float), not floor(o * 5 / 8)
    y = PF.interpolate(P.arange(5.0).view(1, 1, 5), scale_factor=1.7)
    assert y.tolist() == [[[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0]]]
    y = PF.interpolate(P.arange(5.0).view(1, 1, 5), scale_factor=1.7, recompute_scale_factor=True)
    assert y.tolist() == [[[0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0]]]
    y = PF.interpolate(P.arange(5.0).view(1, 1, 5), scale_factor=1.7, mode="nearest-exact")
    assert y.tolist() == [[[0.0, 0.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]]]
    x2 = P.arange(4.0).view(1, 1, 2, 2)
    assert PF.interpolate(x2, size=3, mode="bilinear", align_corners=True).tolist() == \
        [[[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]]]
    assert PF.interpolate(x2, size=(1, 1), mode="area").tolist() == [[[[1.5]]]]


def test_nearest_gradient_by_hand():
    x = P.ones(1, 1, 3, requires_grad=True)
    PF.interpolate(x, size=7).sum().backward()
    assert x.grad.tolist() == [[[3.0, 2.0, 2.0]]]  # sources floor(o * 3 / 7)


@pytest.mark.parametrize("kw", [
    dict(mode="nearest", scale_factor=2), dict(mode="nearest", size=5), dict(mode="nearest-exact", scale_factor=1.5),
    dict(mode="linear", size=7), dict(mode="linear", scale_factor=0.6, align_corners=True),
])
def test_gradcheck_1d(kw):
    x = P.tensor(rand((2, 2, 4)).tolist(), dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(lambda t: PF.interpolate(t, **kw), (x,))
    assert P.autograd.gradgradcheck(lambda t: PF.interpolate(t, **kw), (x,))


@pytest.mark.parametrize("kw", [
    dict(mode="nearest", scale_factor=2), dict(mode="nearest", size=(5, 3)), dict(mode="nearest-exact", size=(2, 7)),
    dict(mode="bilinear", scale_factor=2), dict(mode="bilinear", size=(5, 2), align_corners=True),
    dict(mode="bilinear", scale_factor=(0.7, 1.6)),
])
def test_gradcheck_2d(kw):
    x = P.tensor(rand((1, 2, 3, 4)).tolist(), dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(lambda t: PF.interpolate(t, **kw), (x,))
    assert P.autograd.gradgradcheck(lambda t: PF.interpolate(t, **kw), (x,))


def test_deprecated_aliases_warn():
    x = P.ones(1, 1, 2, 2)
    for fn, want in ((lambda: PF.upsample(x, scale_factor=2), "upsample"),
                     (lambda: PF.upsample_nearest(x, scale_factor=2), "upsample_nearest"),
                     (lambda: PF.upsample_bilinear(x, size=3), "upsample_bilinear")):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn()
        assert any(f"nn.functional.{want}` is deprecated" in str(m.message) for m in w)


# ---- against torch ----------------------------------------------------------------------------

SCALES = [2, 3, 0.5, 1.7, 1.1, 0.9, 2.5, 1 / 3, 0.6, 7 / 3, 1.3333]


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
def test_1d_against_torch(mode, dtype):
    rng = np.random.default_rng(1)
    for n in range(60):
        w = int(rng.integers(1, 13))
        kw = {"mode": mode}
        if n % 3 == 0:
            kw["size"] = int(rng.integers(1, 30))
        else:
            kw["scale_factor"] = SCALES[n % len(SCALES)]
            if int(w * kw["scale_factor"]) < 1:
                continue
            kw["recompute_scale_factor"] = n % 4 == 1
        if mode == "linear" and n % 5 == 0:
            kw["align_corners"] = True
        check(rand((2, 3, w), seed=n), dtype, n, **kw)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear"])
def test_2d_against_torch(mode, dtype):
    rng = np.random.default_rng(2)
    for n in range(40):
        big = n % 4 == 3  # outputs with oh + ow > 128 take torch's other nearest kernel
        h, w = (int(v) for v in rng.integers(1, 40 if big else 9, size=2))
        kw = {"mode": mode}
        if n % 3 == 0:
            kw["size"] = tuple(int(v) for v in rng.integers(1, 150 if big else 20, size=2))
        else:
            s = (SCALES[n % len(SCALES)], SCALES[(3 * n) % len(SCALES)])
            if int(h * s[0]) < 1 or int(w * s[1]) < 1:
                continue
            kw["scale_factor"] = s if n % 2 else s[0]
            if isinstance(kw["scale_factor"], float) and int(w * s[0]) < 1:
                continue
            kw["recompute_scale_factor"] = n % 5 == 1
        if mode == "bilinear" and n % 4 == 0:
            kw["align_corners"] = True
        check(rand((1, 2, h, w), seed=n), dtype, n, **kw)


@requires_torch
def test_channels_last_and_non_contiguous_inputs():
    base = rand((1, 5, 30, 40), seed=4)
    for s in (1.1, 0.9, 2.5, 1.7):
        for mode in ("nearest", "nearest-exact", "bilinear"):
            xp, xt = both(base, "float32")
            cp = xp.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # channels-last strides
            ct = xt.contiguous(memory_format=T.channels_last)
            assert tuple(cp.stride()) == tuple(ct.stride())
            assert_same(PF.interpolate(cp, scale_factor=s, mode=mode), TF.interpolate(ct, scale_factor=s, mode=mode))
    xp, xt = both(rand((2, 3, 6, 7), seed=5), grad=True)
    for mode in ("nearest", "bilinear"):
        yp = PF.interpolate(xp.transpose(-1, -2)[:, :, ::2], size=(5, 9), mode=mode)
        yt = TF.interpolate(xt.transpose(-1, -2)[:, :, ::2], size=(5, 9), mode=mode)
        assert_same(yp, yt)
        yp.pow(2).sum().backward()
        yt.pow(2).sum().backward()
        assert_same(xp.grad, xt.grad)


@requires_torch
def test_area_mode_and_dtypes():
    check(rand((2, 3, 7, 5), seed=1), size=(3, 2), mode="area")
    check(rand((2, 3, 7), seed=1), scale_factor=0.5, mode="area")
    arr = rand((1, 2, 5, 6), seed=3) * 40 + 100
    for dtype in ("float16", "bfloat16"):
        xp, xt = both(arr, dtype)
        assert_same(PF.interpolate(xp, scale_factor=2), TF.interpolate(xt, scale_factor=2))
        assert_same(PF.interpolate(xp, scale_factor=1.5, mode="bilinear"),
                    TF.interpolate(xt, scale_factor=1.5, mode="bilinear"), rtol=2e-2, atol=1.0)
    xp, xt = both(np.clip(arr, 0, 255), "uint8")  # torch.tensor(list, dtype=uint8) refuses values out of range
    assert_same(PF.interpolate(xp, size=(7, 9)), TF.interpolate(xt, size=(7, 9)))
    with pytest.raises(NotImplementedError):  # torch rounds uint8 bilinear with its own fixed-point kernel
        PF.interpolate(xp, scale_factor=2, mode="bilinear")


@requires_torch
@pytest.mark.parametrize("call", [
    lambda F, x: F.interpolate(x), lambda F, x: F.interpolate(x, 3, 2), lambda F, x: F.interpolate(x, [3]),
    lambda F, x: F.interpolate(x, scale_factor=[2]), lambda F, x: F.interpolate(x, 3, align_corners=True),
    lambda F, x: F.interpolate(x, 3, mode="bilinear", recompute_scale_factor=True),
    lambda F, x: F.interpolate(x, 3, antialias=True), lambda F, x: F.interpolate(x[0], 3, mode="bilinear"),
    lambda F, x: F.interpolate(x, 3, mode="linear"), lambda F, x: F.interpolate(x, 3, mode="trilinear"),
    lambda F, x: F.interpolate(x, 3, mode="bogus"), lambda F, x: F.interpolate(x[0, 0], 3),
    lambda F, x: F.interpolate(x, scale_factor=0.1), lambda F, x: F.interpolate(x, 0),
    lambda F, x: F.interpolate(x, (2.5, 3)), lambda F, x: F.interpolate(x[:, :0], scale_factor=2),
    lambda F, x: F.interpolate(x.long(), scale_factor=2), lambda F, x: F.interpolate(x[0].bool(), 3, mode="linear"),
    lambda F, x: F.interpolate(x, scale_factor=-1),
    # bicubic and anti-aliased resampling (tests/test_interpolate_resample.py has their values)
    lambda F, x: F.interpolate(x.long(), 3, mode="bicubic"),
    lambda F, x: F.interpolate(x.long(), 3, mode="bicubic", antialias=True),
    lambda F, x: F.interpolate(x.half(), 3, mode="bicubic", antialias=True),
    lambda F, x: F.interpolate(x.bool(), 3, mode="bilinear", antialias=True),
    lambda F, x: F.interpolate(x, (0, 2), mode="bicubic"),
    lambda F, x: F.interpolate(x[:, :0], 3, mode="bilinear", antialias=True),
    lambda F, x: F.interpolate(x[0], 3, mode="bicubic"),
    lambda F, x: F.interpolate(x[0], 3, mode="bilinear", antialias=True),
    lambda F, x: F.interpolate(x, 3, mode="nearest", antialias=True),
    lambda F, x: F.interpolate(x, 3, mode="bicubic", recompute_scale_factor=True),
])
def test_errors_match_torch(call):
    xp, xt = both(rand((1, 2, 4, 4)), "float32")
    with pytest.raises(Exception) as te:
        call(TF, xt)
    with pytest.raises(Exception) as pe:
        call(PF, xp)
    assert isinstance(pe.value, type(te.value)) or isinstance(te.value, type(pe.value)), (te.value, pe.value)


def test_backward_op_checks_shapes():
    with pytest.raises(RuntimeError, match="grad_output"):
        P.upsample_nearest2d_backward(P.ones(1, 2, 5, 5), [4, 4], [1, 2, 2, 2])
    with pytest.raises(RuntimeError, match="input_size equals to 4"):
        P.upsample_bilinear2d_backward(P.ones(1, 2, 4, 4), [4, 4], [1, 2, 2], False)


# ---- modules ----------------------------------------------------------------------------------

MODULES = ["Upsample(scale_factor=2)", "Upsample(size=(3, 5), mode='bilinear')",
           "Upsample(scale_factor=(1.5, 2), mode='bilinear', align_corners=True)",
           "Upsample(scale_factor=1.7, mode='nearest-exact', recompute_scale_factor=True)",
           "UpsamplingNearest2d(scale_factor=3)", "UpsamplingBilinear2d(size=(5, 4))"]


@requires_torch
@pytest.mark.parametrize("spec", MODULES)
def test_modules_match_torch(spec):
    mp, mt = eval("P.nn." + spec), eval("T.nn." + spec)
    assert repr(mp) == repr(mt)
    xp, xt = both(rand((2, 3, 4, 5), seed=6))
    assert_same(mp(xp), mt(xt))
