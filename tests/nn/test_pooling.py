"""Pooling (max, avg, adaptive; 1-d and 2-d) against torch: values, indices, input gradients,
ceil_mode / padding / dilation / count_include_pad / divisor_override, ties and NaN in windows,
unbatched and non-contiguous inputs, dtypes, errors, modules; float64 gradcheck of every op and
hand-computed values that run without torch."""
import itertools
import math

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None


def rand(shape, seed=0, ints=False):
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, size=shape).astype(np.float64) if ints else rng.standard_normal(shape)


def both(arr, dtype="float64", grad=False):
    """The same values as a pyctorch and a torch tensor."""
    p = P.tensor(arr.tolist(), dtype=getattr(P, dtype)).requires_grad_(grad)
    t = T.tensor(arr, dtype=getattr(T, dtype)).requires_grad_(grad) if T is not None else None
    return p, t


def grad_pair(shape, seed):
    g = np.random.default_rng(seed + 100).standard_normal(shape)
    return g


def check_fwd_bwd(pfn, tfn, arr, dtype="float64", seed=0):
    """Forward outputs (values and indices) and the input gradient against torch."""
    xp, xt = both(arr, dtype, grad=True)
    op, ot = pfn(xp), tfn(xt)
    op = op if isinstance(op, tuple) else (op,)
    ot = ot if isinstance(ot, tuple) else (ot,)
    assert len(op) == len(ot)
    for a, b in zip(op, ot):
        assert_same(a, b)
    g = grad_pair(tuple(ot[0].shape), seed)
    op[0].backward(P.tensor(g.tolist(), dtype=op[0].dtype))
    ot[0].backward(T.tensor(g, dtype=ot[0].dtype))
    assert_same(xp.grad, xt.grad)


# ---- hand-computed values (no torch needed) ----------------------------------------------------

def test_max_pool2d_values_and_indices_by_hand():
    x = P.arange(16.0).view(1, 1, 4, 4)
    y, i = PF.max_pool2d(x, 2, return_indices=True)
    assert y.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert i.tolist() == [[[[5, 7], [13, 15]]]]
    y = PF.max_pool2d(x, 3, 2, 1)  # padding never wins
    assert y.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    y = PF.max_pool2d(x, 2, 2, ceil_mode=True)
    assert tuple(y.shape) == (1, 1, 2, 2)
    y = PF.max_pool2d(P.arange(25.0).view(1, 5, 5), 2, 2, ceil_mode=True)  # unbatched, partial last window
    assert y.tolist() == [[[6.0, 8.0, 9.0], [16.0, 18.0, 19.0], [21.0, 23.0, 24.0]]]


def test_max_pool_ties_take_the_first_and_nan_wins():
    x = P.tensor([[[1.0, 3.0, 3.0, 2.0, float("nan"), 0.0, float("nan"), 5.0]]])
    y, i = PF.max_pool1d(x, 4, return_indices=True)
    assert y[0, 0, 0].item() == 3.0 and i.tolist() == [[[1, 6]]]  # first of the ties; the last NaN
    assert math.isnan(y[0, 0, 1].item())
    x = P.tensor([[[1.0, 1.0, 1.0, 0.0]]], requires_grad=True)
    PF.max_pool1d(x, 3, 1).sum().backward()  # overlapping windows: each its first maximum
    assert x.grad.tolist() == [[[1.0, 1.0, 0.0, 0.0]]]


def test_avg_pool_divisors_by_hand():
    x = P.ones(1, 1, 4, 4)
    inc = PF.avg_pool2d(x, 3, 2, 1, ceil_mode=True)
    exc = PF.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    div = PF.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=2)
    np.testing.assert_allclose(np.array(inc.tolist())[0, 0], [[4 / 9, 6 / 9, 2 / 6], [6 / 9, 1, 3 / 6], [2 / 6, 3 / 6, 1 / 4]])
    assert exc.tolist() == [[[[1.0] * 3] * 3]]
    assert div.tolist() == [[[[2.0, 3.0, 1.0], [3.0, 4.5, 1.5], [1.0, 1.5, 0.5]]]]
    xi = P.arange(16).view(1, 1, 4, 4)  # int64: truncating division
    assert PF.avg_pool2d(xi, 3, 2, 1, True, True, -3).tolist() == [[[[-3, -8, -3], [-17, -30, -11], [-8, -14, -5]]]]


def test_adaptive_windows_by_hand():
    x = P.arange(10.0).view(1, 1, 10)
    assert PF.adaptive_avg_pool1d(x, 3).tolist() == [[[1.5, 4.5, 7.5]]]  # [0,4) [3,7) [6,10)
    y, i = PF.adaptive_max_pool1d(x, 4, return_indices=True)
    assert y.tolist() == [[[2.0, 4.0, 7.0, 9.0]]] and i.tolist() == [[[2, 4, 7, 9]]]
    x2 = P.arange(12.0).view(1, 3, 4)
    assert PF.adaptive_avg_pool2d(x2, (None, 2)).tolist() == [[[0.5, 2.5], [4.5, 6.5], [8.5, 10.5]]]
    assert PF.adaptive_avg_pool2d(x2, 1).tolist() == [[[5.5]]]
    assert tuple(PF.adaptive_avg_pool2d(x2, (0, 2)).shape) == (1, 0, 2)


@pytest.mark.parametrize("fn", [
    lambda x: PF.max_pool1d(x, 3, 2, 1), lambda x: PF.max_pool1d(x, 2, 1, 1, 2, True),
    lambda x: PF.max_pool2d(x.view(2, 3, 4), 3, 2, 1), lambda x: PF.max_pool2d(x.view(2, 3, 4), (2, 3), 1, (1, 1), (1, 2)),
    lambda x: PF.avg_pool1d(x, 3, 2, 1), lambda x: PF.avg_pool1d(x, 2, 3, 1, True, False),
    lambda x: PF.avg_pool2d(x.view(2, 3, 4), 3, 2, 1, False, False),
    lambda x: PF.avg_pool2d(x.view(2, 3, 4), 2, 1, 1, True, True, 3),
    lambda x: PF.adaptive_avg_pool1d(x, 5), lambda x: PF.adaptive_avg_pool2d(x.view(2, 3, 4), (2, 3)),
    lambda x: PF.adaptive_max_pool1d(x, 5), lambda x: PF.adaptive_max_pool2d(x.view(2, 3, 4), (2, 3)),
], ids=["max1", "max1_dil_ceil", "max2", "max2_rect", "avg1", "avg1_exc", "avg2", "avg2_div", "aavg1", "aavg2", "amax1",
        "amax2"])
def test_gradcheck_float64(fn):
    x = P.tensor(rand((2, 12), seed=3).tolist(), dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(fn, (x,))
    assert P.autograd.gradgradcheck(fn, (x,))


def test_top_level_functions_exist():
    for name in ("max_pool1d", "max_pool2d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
                 "max_pool1d_with_indices"):
        assert callable(getattr(P, name))


# ---- against torch --------------------------------------------------------------------------------

MAX_ARGS = [dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=c)
            for k, s, p, d, c in itertools.product([2, 3, (3, 2)], [None, 1, 2, (2, 1)], [0, 1], [1, 2], [False, True])
            if not (isinstance(k, int) and p > k // 2)]


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool2d_grid(dtype):
    for n, kw in enumerate(MAX_ARGS):
        for ints in (False, True):  # integer-valued inputs: many ties across overlapping windows
            arr = rand((2, 3, 7, 8), seed=n, ints=ints)
            try:
                T.nn.functional.max_pool2d(T.tensor(arr), **kw)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    PF.max_pool2d(P.tensor(arr.tolist()), **kw)
                continue
            check_fwd_bwd(lambda x: PF.max_pool2d(x, **kw, return_indices=True),
                          lambda x: TF.max_pool2d(x, **kw, return_indices=True), arr, dtype, seed=n)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool1d_grid(dtype):
    for n, kw in enumerate(MAX_ARGS):
        kw = {k: (v[0] if isinstance(v, tuple) else v) for k, v in kw.items()}
        for shape in ((2, 3, 9), (3, 9)):  # batched and unbatched
            arr = rand(shape, seed=n, ints=n % 2 == 0)
            check_fwd_bwd(lambda x: PF.max_pool1d(x, **kw, return_indices=True),
                          lambda x: TF.max_pool1d(x, **kw, return_indices=True), arr, dtype, seed=n)
            check_fwd_bwd(lambda x: PF.max_pool1d(x, **kw), lambda x: TF.max_pool1d(x, **kw), arr, dtype, seed=n)
            check_fwd_bwd(lambda x: P.max_pool1d(x, **kw), lambda x: T.max_pool1d(x, **kw), arr, dtype, seed=n)


@requires_torch
def test_max_pool_nan_and_inf_windows():
    arr = rand((1, 2, 6, 6), seed=1)
    arr[0, 0, 1, 2] = arr[0, 0, 3, 3] = np.nan
    arr[0, 1] = -np.inf
    arr[0, 1, 2, 2] = np.nan
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=3, stride=2, ceil_mode=True)):
        xp, xt = both(arr)
        yp, ip = PF.max_pool2d(xp, **kw, return_indices=True)
        yt, it = TF.max_pool2d(xt, **kw, return_indices=True)
        assert_same(yp, yt)
        assert_same(ip, it)
        assert_same(P.max_pool2d(xp, **kw), T.max_pool2d(xt, **kw))
    # adaptive windows of 16 and more elements are scanned in eight lanes: ties, NaN and -inf there
    rng = np.random.default_rng(2)
    for trial in range(40):
        arr = rng.integers(-2, 3, size=(2, 3, 8, 9)).astype(np.float64)
        if trial % 3 == 0:
            arr[rng.random(arr.shape) < 0.05] = np.nan
        if trial % 3 == 1:
            arr[rng.random(arr.shape) < 0.7] = -np.inf
        if trial == 2:
            arr[:] = -np.inf
        for out in (1, (2, 1), (1, 2)):
            for dtype in ("float32", "float64"):
                xp, xt = both(arr, dtype)
                yp, ip = PF.adaptive_max_pool2d(xp, out, True)
                yt, it = TF.adaptive_max_pool2d(xt, out, True)
                assert_same(yp, yt)
                assert_same(ip, it)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool2d_grid(dtype):
    n = 0
    for k, s, p, c, inc, div in itertools.product([2, 3, (3, 2)], [None, 1, 2], [0, 1], [False, True], [False, True],
                                                  [None, 2, -5]):
        n += 1
        kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=c, count_include_pad=inc, divisor_override=div)
        arr = rand((2, 2, 7, 6), seed=n)
        check_fwd_bwd(lambda x: PF.avg_pool2d(x, **kw), lambda x: TF.avg_pool2d(x, **kw), arr, dtype, seed=n)
    arr = rand((3, 7, 6), seed=9)  # unbatched
    check_fwd_bwd(lambda x: PF.avg_pool2d(x, 3, 2, 1), lambda x: TF.avg_pool2d(x, 3, 2, 1), arr, dtype)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool1d_grid(dtype):
    n = 0
    for k, s, p, c, inc in itertools.product([1, 2, 3], [None, 1, 2], [0, 1], [False, True], [False, True]):
        if p > k // 2:
            continue
        n += 1
        kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=c, count_include_pad=inc)
        for shape in ((2, 3, 8), (3, 7)):
            check_fwd_bwd(lambda x: PF.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw), rand(shape, n), dtype, n)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_grid(dtype):
    for n, (h, w) in enumerate([(7, 7), (5, 9), (3, 2), (1, 6)]):
        for out in [(1, 1), (2, 3), (h, w), (h + 3, 2 * w), (None, 2), 4]:
            arr = rand((2, 3, h, w), seed=n, ints=n % 2 == 1)
            check_fwd_bwd(lambda x: PF.adaptive_avg_pool2d(x, out), lambda x: TF.adaptive_avg_pool2d(x, out), arr, dtype, n)
            check_fwd_bwd(lambda x: PF.adaptive_max_pool2d(x, out, True), lambda x: TF.adaptive_max_pool2d(x, out, True),
                          arr, dtype, n)
            o1 = out if isinstance(out, int) else (out[1] if out[1] is not None else 3)
            for a1 in (arr[:, :, 0], arr[0, 0:2, 0]):  # batched (N, C, W) and unbatched (C, W)
                check_fwd_bwd(lambda x: PF.adaptive_avg_pool1d(x, o1), lambda x: TF.adaptive_avg_pool1d(x, o1), a1, dtype)
                check_fwd_bwd(lambda x: PF.adaptive_max_pool1d(x, o1, True),
                              lambda x: TF.adaptive_max_pool1d(x, o1, True), a1, dtype)


@requires_torch
def test_non_contiguous_and_batch_one_inputs():
    base = rand((2, 3, 9, 8), seed=4)
    for view in (lambda x: x.transpose(-1, -2), lambda x: x[:, :, ::2, 1::2], lambda x: x[:1], lambda x: x[0]):
        xp, xt = both(base, grad=True)
        vp, vt = view(xp), view(xt)
        assert_same(PF.max_pool2d(vp, 3, 2, 1), TF.max_pool2d(vt, 3, 2, 1))
        assert_same(PF.avg_pool2d(vp, 2, 1, 1), TF.avg_pool2d(vt, 2, 1, 1))
        assert_same(PF.adaptive_avg_pool2d(vp, (2, 3)), TF.adaptive_avg_pool2d(vt, (2, 3)))
        assert_same(PF.adaptive_max_pool2d(vp, 3), TF.adaptive_max_pool2d(vt, 3))
        (PF.max_pool2d(vp, 3, 1, 1).sum() + PF.avg_pool2d(vp, 2).sum()).backward()
        (TF.max_pool2d(vt, 3, 1, 1).sum() + TF.avg_pool2d(vt, 2).sum()).backward()
        assert_same(xp.grad, xt.grad)


@requires_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "uint8", "int8", "int32", "int64"])
def test_dtypes(dtype):
    arr = rand((2, 3, 6, 6), seed=5, ints=True) + (3 if dtype == "uint8" else 0)
    xp, xt = both(arr, dtype)
    assert_same(PF.max_pool2d(xp, 3, 2, 1), TF.max_pool2d(xt, 3, 2, 1))
    assert_same(P.max_pool1d_with_indices(xp[0], 2)[1], T.max_pool1d_with_indices(xt[0], 2)[1])
    for call in (lambda m, F, x: F.avg_pool2d(x, 2), lambda m, F, x: F.adaptive_avg_pool2d(x, 2),
                 lambda m, F, x: F.adaptive_max_pool2d(x, 2)[0], lambda m, F, x: m.max_pool1d(x[0], 2)):
        try:
            want = call(T, TF, xt)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                call(P, PF, xp)
            continue
        assert_same(call(P, PF, xp), want)


@requires_torch
@pytest.mark.parametrize("call", [
    lambda m, F, x: m.max_pool2d(x, 0), lambda m, F, x: m.max_pool2d(x, [2, 2, 2]), lambda m, F, x: m.max_pool2d(x, 2, 0),
    lambda m, F, x: m.max_pool2d(x, 2, 1, 2), lambda m, F, x: m.max_pool2d(x, 2, 1, -1), lambda m, F, x: m.max_pool2d(x, 9),
    lambda m, F, x: m.max_pool2d(x, 2, 1, 1, 0), lambda m, F, x: m.max_pool2d(x[0, 0], 2),
    lambda m, F, x: m.max_pool2d(x[:, :0], 2), lambda m, F, x: m.max_pool2d(x.bool(), 2),
    lambda m, F, x: m.max_pool1d(x[0], 0), lambda m, F, x: m.max_pool1d(x[0, 0], 6),
    lambda m, F, x: m.max_pool1d(x[0, 0, 0], 2), lambda m, F, x: m.max_pool1d(x[0], [2, 2]),
    lambda m, F, x: m.max_pool1d(x[0].long(), 2), lambda m, F, x: m.max_pool1d_with_indices(x[0, 0], 7),
    lambda m, F, x: m.avg_pool1d(x[0, 0, 0], 2), lambda m, F, x: m.avg_pool1d(x[0], [2, 2]),
    lambda m, F, x: F.avg_pool2d(x, 2, divisor_override=0), lambda m, F, x: F.avg_pool2d(x[0, 0], 2),
    lambda m, F, x: F.avg_pool2d(x.int(), 2), lambda m, F, x: F.avg_pool2d(x, 3, 1, 2),
    lambda m, F, x: F.adaptive_avg_pool2d(x, [1, 2, 3]), lambda m, F, x: F.adaptive_avg_pool2d(x[0, 0], 2),
    lambda m, F, x: F.adaptive_avg_pool2d(x, -1), lambda m, F, x: F.adaptive_avg_pool2d(x[:, :, :0], 2),
    lambda m, F, x: F.adaptive_max_pool2d(x.long(), 2), lambda m, F, x: F.adaptive_max_pool2d(x[0, 0], 2),
    lambda m, F, x: m.adaptive_avg_pool1d(x[0], [1, 2]), lambda m, F, x: m.adaptive_max_pool1d(x[0, :, :0, 0], 2),
    lambda m, F, x: F.adaptive_avg_pool2d(x, (None, 2, 2)),
])
def test_errors_match_torch(call):
    arr = rand((2, 3, 5, 5))
    xp, xt = both(arr, "float32")
    with pytest.raises(Exception) as te:
        call(T, TF, xt)
    with pytest.raises(Exception) as pe:
        call(P, PF, xp)
    assert isinstance(pe.value, type(te.value)) or isinstance(te.value, type(pe.value)), (te.value, pe.value)


def test_backward_ops_reject_bad_shapes():
    x = P.randn(1, 2, 6, 6)
    y, i = P.max_pool2d_with_indices(x, 2)
    with pytest.raises(RuntimeError, match="grad_output"):
        P.max_pool2d_with_indices_backward(P.ones(1, 2, 4, 4), x, [2, 2], None, [0, 0], [1, 1], False, i)
    with pytest.raises(RuntimeError, match="indices"):
        P.max_pool2d_with_indices_backward(P.ones(1, 2, 3, 3), x, [2, 2], None, [0, 0], [1, 1], False, i.int())
    with pytest.raises(RuntimeError, match="grad_output"):
        P.avg_pool2d_backward(P.ones(1, 2, 2, 2), x, [2, 2], None, [0, 0], False, True, None)
    # indices outside the plane (a window that holds no input element) receive nothing
    g = P.max_pool2d_with_indices_backward(P.ones(1, 2, 3, 3), x, [2, 2], None, [0, 0], [1, 1], False, i * 0 + 99)
    assert g.abs().sum().item() == 0


def test_empty_window_with_dilation_is_lowest_and_gets_no_gradient():
    x = P.tensor([[[0.0, 1.0]]], requires_grad=True)
    y, i = PF.max_pool1d(x, 2, 1, 1, 3, return_indices=True)
    assert y.tolist() == [[[-math.inf]]] and i.tolist() == [[[2]]]  # torch's values
    y.sum().backward()
    assert x.grad.tolist() == [[[0.0, 0.0]]]  # torch writes out of bounds here


# ---- modules --------------------------------------------------------------------------------------

MODULES = ["MaxPool2d(3, 2, 1)", "MaxPool2d((2, 3), dilation=2, ceil_mode=True)", "MaxPool1d(3)",
           "MaxPool1d(2, return_indices=True)", "AvgPool1d(3, 2, 1)", "AvgPool2d((2, 3), 1, count_include_pad=False)",
           "AvgPool2d(3, divisor_override=2)", "AdaptiveAvgPool2d((None, 3))", "AdaptiveAvgPool1d(4)",
           "AdaptiveMaxPool1d(5, True)", "AdaptiveMaxPool2d(2)"]


@requires_torch
@pytest.mark.parametrize("spec", MODULES)
def test_modules_match_torch(spec):
    mp, mt = eval("P.nn." + spec), eval("T.nn." + spec)
    assert repr(mp) == repr(mt)
    one = "1d" in spec
    arr = rand((2, 3, 9) if one else (2, 3, 8, 9), seed=7)
    xp, xt = both(arr)
    rp, rt = mp(xp), mt(xt)
    rp, rt = (rp, rt) if isinstance(rt, tuple) else ((rp,), (rt,))
    for a, b in zip(rp, rt):
        assert_same(a, b)
