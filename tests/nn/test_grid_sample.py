"""F.grid_sample (bilinear / nearest / bicubic, every padding mode, align_corners, 4-d and 5-d) and
F.affine_grid against torch: values and the gradients of input and grid, dtypes, errors; float64
gradcheck through pyctorch.autograd.gradcheck and hand-computed values without torch."""
import warnings

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None
MODES2 = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]


def rand(shape, seed=0, lo=None, hi=None):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, shape) if lo is not None else rng.standard_normal(shape)


def test_identity_grid_by_hand():
    x = P.arange(12.0).view(1, 1, 3, 4)
    theta = P.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    for ac in (False, True):
        grid = PF.affine_grid(theta, [1, 1, 3, 4], align_corners=ac)
        for mode in MODES2:
            y = PF.grid_sample(x, grid, mode, align_corners=ac)
            np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-5)
    # a point far outside reads zeros / the border
    g = P.tensor([[[[5.0, 5.0]]]])
    assert PF.grid_sample(x, g, align_corners=True).item() == 0.0
    assert PF.grid_sample(x, g, padding_mode="border", align_corners=True).item() == 11.0


def test_gradcheck_input_and_grid():
    x = P.randn(2, 2, 4, 5, dtype=P.float64, requires_grad=True)
    g = (P.rand(2, 3, 2, 2, dtype=P.float64) * 2.2 - 1.1).requires_grad_()
    for mode in ("bilinear", "bicubic"):
        for pad in PADS:
            for ac in (False, True):
                assert gradcheck(lambda a, b: PF.grid_sample(a, b, mode, pad, ac), (x, g))
    assert gradcheck(lambda a: PF.grid_sample(a, g.detach(), "nearest", "zeros", False), (x,))
    x3 = P.randn(1, 2, 3, 4, 3, dtype=P.float64, requires_grad=True)
    g3 = (P.rand(1, 2, 2, 3, 3, dtype=P.float64) * 2.2 - 1.1).requires_grad_()
    for pad in PADS:
        assert gradcheck(lambda a, b: PF.grid_sample(a, b, "bilinear", pad, True), (x3, g3))
    th = P.randn(2, 2, 3, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda t: PF.affine_grid(t, [2, 1, 3, 4], align_corners=False), (th,))


def test_align_corners_none_warns():
    x = P.randn(1, 1, 3, 3)
    with pytest.warns(UserWarning, match="align_corners"):
        PF.grid_sample(x, P.zeros(1, 2, 2, 2))
    with pytest.warns(UserWarning, match="align_corners"):
        PF.affine_grid(P.zeros(1, 2, 3), [1, 1, 2, 2])


def _check(xarr, garr, dtype, fn_p, fn_t, rtol=None, atol=None):
    px = P.tensor(xarr.tolist(), dtype=getattr(P, dtype), requires_grad=True)
    pg = P.tensor(garr.tolist(), dtype=getattr(P, dtype), requires_grad=True)
    tx = T.tensor(xarr, dtype=getattr(T, dtype), requires_grad=True)
    tg = T.tensor(garr, dtype=getattr(T, dtype), requires_grad=True)
    po, to = fn_p(px, pg), fn_t(tx, tg)
    assert_same(po, to, rtol, atol)
    go = np.random.default_rng(9).standard_normal(tuple(to.shape))
    po.backward(P.tensor(go.tolist(), dtype=po.dtype))
    to.backward(T.tensor(go, dtype=to.dtype))
    assert_same(px.grad, tx.grad, rtol, atol)
    assert_same(pg.grad, tg.grad, rtol, atol)


@requires_torch
@pytest.mark.parametrize("mode", MODES2)
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_2d_vs_torch(mode, pad, ac, dtype):
    x, g = rand((2, 3, 5, 6)), rand((2, 4, 3, 2), 1, -1.4, 1.4)
    g[0, 0, 0] = [1.0, -1.0]  # exactly on corners
    tol = (1e-4, 1e-4) if dtype == "float32" else (None, None)
    _check(x, g, dtype, lambda a, b: PF.grid_sample(a, b, mode, pad, ac),
           lambda a, b: TF.grid_sample(a, b, mode, pad, ac), *tol)


@requires_torch
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_3d_vs_torch(mode, pad, ac):
    x, g = rand((2, 2, 4, 5, 3)), rand((2, 3, 2, 4, 3), 1, -1.4, 1.4)
    _check(x, g, "float64", lambda a, b: PF.grid_sample(a, b, mode, pad, ac),
           lambda a, b: TF.grid_sample(a, b, mode, pad, ac))


@requires_torch
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 1, 6], [2, 3, 2, 4, 3]])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid_vs_torch(size, ac):
    n = len(size) - 2
    th = rand((2, n, n + 1), 3)
    pt = P.tensor(th.tolist(), dtype=P.float64, requires_grad=True)
    tt = T.tensor(th, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        po, to = PF.affine_grid(pt, size, ac), TF.affine_grid(tt, size, ac)
    assert_same(po, to)
    go = rand(tuple(to.shape), 4)
    po.backward(P.tensor(go.tolist(), dtype=P.float64))
    to.backward(T.tensor(go))
    assert_same(pt.grad, tt.grad)


ERRORS = [
    lambda F, m, x, g: F.grid_sample(x, g, "linear", align_corners=False),
    lambda F, m, x, g: F.grid_sample(x, g, padding_mode="wrap", align_corners=False),
    lambda F, m, x, g: F.grid_sample(x, g.double(), align_corners=False),
    lambda F, m, x, g: F.grid_sample(x, g[0], align_corners=False),
    lambda F, m, x, g: F.grid_sample(x, g[:1], align_corners=False),
    lambda F, m, x, g: F.grid_sample(x, g[..., :1], align_corners=False),
    lambda F, m, x, g: F.grid_sample(x[..., :0], g, align_corners=False),
    lambda F, m, x, g: F.grid_sample(x.unsqueeze(2), g.unsqueeze(1).expand(2, 1, 3, 4, 2)[..., [0, 1, 1]],
                                     "bicubic", align_corners=False),
    lambda F, m, x, g: F.grid_sample(x.long(), g.long(), align_corners=False),
    lambda F, m, x, g: F.grid_sample(x.to(m.uint16), g.to(m.uint16), align_corners=False),
    lambda F, m, x, g: F.grid_sample(x[..., None].to(m.uint16), g[:, None, ..., [0, 1, 1]].to(m.uint16),
                                     align_corners=False),
    lambda F, m, x, g: F.affine_grid(m.zeros(2, 2, 3, dtype=m.long), [2, 1, 3, 3], False),
    lambda F, m, x, g: F.affine_grid(m.zeros(2, 3, 3), [2, 1, 3, 3], False),
    lambda F, m, x, g: F.affine_grid(m.zeros(2, 3, 4), [2, 1, 3, 3, 3, 3], False),
    lambda F, m, x, g: F.affine_grid(m.zeros(2, 2, 3), [2, 1, 0, 3], False),
]


@requires_torch
@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    x, g = rand((2, 3, 4, 5)), rand((2, 3, 4, 2), 1)
    with pytest.raises(Exception) as te:
        call(TF, T, T.tensor(x, dtype=T.float32), T.tensor(g, dtype=T.float32))
    with pytest.raises(Exception) as pe:
        call(PF, P, P.tensor(x.tolist(), dtype=P.float32), P.tensor(g.tolist(), dtype=P.float32))
    assert type(pe.value) is type(te.value), (te.value, pe.value)
    assert str(pe.value) == str(te.value).split("\n")[0]


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_reduced_float_dtypes_vs_torch(dtype, mode):
    # grid points on a coarse lattice, so the reduced-precision coordinates are exact. (Bicubic is left out:
    # torch's CPU kernel rounds its cubic coefficients to the reduced dtype, pyctorch computes in float32.)
    x, g = rand((2, 3, 5, 6)), np.round(rand((2, 4, 3, 2), 1, -1.2, 1.2) * 8) / 8
    px = P.tensor(x.tolist(), dtype=getattr(P, dtype))
    tx = T.tensor(x, dtype=getattr(T, dtype))
    po = PF.grid_sample(px, P.tensor(g.tolist(), dtype=getattr(P, dtype)), mode, "border", True)
    to = TF.grid_sample(tx, T.tensor(g, dtype=getattr(T, dtype)), mode, "border", True)
    assert_same(po, to, 3e-2, 3e-2)


def test_gradgradcheck():
    from pyctorch.autograd import gradgradcheck
    x = P.randn(1, 2, 3, 4, dtype=P.float64, requires_grad=True)
    g = (P.rand(1, 2, 2, 2, dtype=P.float64) * 2.2 - 1.1).requires_grad_()
    for mode in MODES2:
        for pad in PADS:
            assert gradgradcheck(lambda a, b: PF.grid_sample(a, b, mode, pad, pad == "border"), (x, g))


@requires_torch
@pytest.mark.parametrize("nd,mode", [(2, "bilinear"), (2, "nearest"), (2, "bicubic"), (3, "bilinear"), (3, "nearest")])
@pytest.mark.parametrize("pad", PADS)
def test_double_backward_vs_torch(nd, mode, pad):
    x0 = rand((1, 2, 3, 4) if nd == 2 else (1, 2, 3, 2, 3), 5)
    g0 = rand((1, 2, 3, 2) if nd == 2 else (1, 2, 2, 2, 3), 6, -1.2, 1.2)
    res = []
    for lib, F in ((P, PF), (T, TF)):
        x = lib.tensor(x0.tolist(), dtype=lib.float64, requires_grad=True)
        g = lib.tensor(g0.tolist(), dtype=lib.float64, requires_grad=True)
        o = F.grid_sample(x, g, mode, pad, align_corners=pad == "reflection")
        gi, gg = lib.autograd.grad((o * o).sum(), (x, g), create_graph=True)
        s = (gi * gi).sum() + (gg * gg.sin()).sum()
        res.append(lib.autograd.grad(s, (x, g), allow_unused=True))
    for a, b in zip(*res):
        if b is None:
            assert a is None or not bool(a.ne(0).any())
        else:
            assert_same(a, b)
