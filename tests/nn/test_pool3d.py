"""3-d pooling (max with indices, avg, adaptive avg / max) and max unpooling against torch: values,
indices, input gradients, ceil_mode / padding / dilation / count_include_pad / divisor_override,
ties and NaN, unbatched and non-contiguous inputs, dtypes, errors (type and text), modules; float64
gradcheck of every op, and hand-computed values that run without torch."""
import math

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn as PN
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(arr, dtype="float64", grad=False):
    p = P.tensor(arr.tolist(), dtype=getattr(P, dtype)).requires_grad_(grad)
    t = T.tensor(arr, dtype=getattr(T, dtype)).requires_grad_(grad) if T is not None else None
    return p, t


def check(pfn, tfn, arr, dtype="float64", seed=0):
    xp, xt = both(arr, dtype, grad=True)
    op, ot = pfn(xp), tfn(xt)
    op = op if isinstance(op, tuple) else (op,)
    ot = ot if isinstance(ot, tuple) else (ot,)
    assert len(op) == len(ot)
    for a, b in zip(op, ot):
        assert_same(a, b)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ot[0].shape))
    op[0].backward(P.tensor(g.tolist(), dtype=op[0].dtype))
    ot[0].backward(T.tensor(g, dtype=ot[0].dtype))
    assert_same(xp.grad, xt.grad)


# ---- without torch ----

def test_max_pool3d_by_hand():
    x = P.arange(27.0).view(1, 1, 3, 3, 3)
    y, i = PF.max_pool3d(x, 2, 1, return_indices=True)
    assert y.tolist() == [[[[[13.0, 14.0], [16.0, 17.0]], [[22.0, 23.0], [25.0, 26.0]]]]]
    assert i.tolist() == [[[[[13, 14], [16, 17]], [[22, 23], [25, 26]]]]]
    assert PF.avg_pool3d(x, 3).item() == 13.0
    assert PF.adaptive_avg_pool3d(x, 1).item() == 13.0
    y = PF.max_pool3d(P.tensor([[[[[1.0, float("nan")], [2.0, 3.0]]] * 2]]), 2)
    assert math.isnan(y.item())


def test_gradcheck_every_op():
    x = P.randn(2, 2, 4, 5, 4, dtype=P.float64, requires_grad=True)
    fns = [lambda a: PF.max_pool3d(a, 2, 1, 1), lambda a: PF.max_pool3d(a, (2, 3, 2), 2, 0, (1, 1, 2), True),
           lambda a: PF.avg_pool3d(a, 3, 2, 1), lambda a: PF.avg_pool3d(a, 2, 1, 1, True, False, 3),
           lambda a: PF.adaptive_avg_pool3d(a, (3, 2, 3)), lambda a: PF.adaptive_max_pool3d(a, (2, 4, 3)),
           lambda a: PF.max_unpool3d(*PF.max_pool3d(a, 2, return_indices=True), 2, output_size=a.shape)]
    for fn in fns:
        assert gradcheck(fn, (x,))
    for fn in fns[2:5]:
        assert gradgradcheck(fn, (x,))


def test_modules_shapes():
    x = P.randn(2, 3, 6, 7, 8)
    assert PN.MaxPool3d(2)(x).shape == (2, 3, 3, 3, 4)
    y, i = PN.MaxPool3d(3, 2, 1, return_indices=True)(x)
    assert y.shape == i.shape == (2, 3, 3, 4, 4)
    assert PN.MaxUnpool3d(3, 2, 1)(y, i, output_size=x.shape).shape == x.shape
    assert PN.AvgPool3d((2, 3, 4), ceil_mode=True)(x).shape == (2, 3, 3, 3, 2)
    assert PN.AdaptiveAvgPool3d((None, 2, 1))(x).shape == (2, 3, 6, 2, 1)
    assert PN.AdaptiveMaxPool3d(2)(x[0]).shape == (3, 2, 2, 2)
    assert PN.AdaptiveMaxPool3d(2, return_indices=True)(x)[1].dtype == P.int64


# ---- against torch ----

MAX_CASES = [((3,), dict()), ((3, 2, 1), dict()), (((2, 3, 2), (1, 2, 1), (1, 1, 0), (1, 1, 2), True), dict()),
             ((2,), dict(stride=2, ceil_mode=True)), ((3, 1, 1, 2), dict())]


@requires_torch
@pytest.mark.parametrize("args,kw", MAX_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 6, 8), (3, 5, 6, 7)])
def test_max_pool3d_vs_torch(args, kw, shape):
    check(lambda x: PF.max_pool3d(x, *args, return_indices=True, **kw),
          lambda x: TF.max_pool3d(x, *args, return_indices=True, **kw), rand(shape))


AVG_CASES = [(3,), (3, 2, 1), ((2, 3, 2), (1, 2, 1), (1, 1, 0), True, False), ((2, 3, 2), (1, 2, 1), (1, 1, 0), True),
             ((3, 2, 2), 2, 1, False, True, 5), (2, 2, 1, True, False, -3)]


@requires_torch
@pytest.mark.parametrize("args", AVG_CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 6, 8), (3, 5, 6, 7)])
def test_avg_pool3d_vs_torch(args, shape):
    check(lambda x: PF.avg_pool3d(x, *args), lambda x: TF.avg_pool3d(x, *args), rand(shape))


@requires_torch
@pytest.mark.parametrize("osize", [1, (3, 2, 4), (5, 1, 3), (None, 4, 2), (8, 9, 10)])
@pytest.mark.parametrize("shape", [(2, 3, 5, 6, 7), (3, 5, 6, 7)])
def test_adaptive_pool3d_vs_torch(osize, shape):
    arr = rand(shape)
    check(lambda x: PF.adaptive_avg_pool3d(x, osize), lambda x: TF.adaptive_avg_pool3d(x, osize), arr)
    check(lambda x: PF.adaptive_max_pool3d(x, osize, True), lambda x: TF.adaptive_max_pool3d(x, osize, True), arr)


@requires_torch
def test_ties_nan_and_noncontiguous_vs_torch():
    arr = np.round(rand((2, 2, 5, 6, 4), 3))
    arr[0, 0, 1, 2, 3] = np.nan
    check(lambda x: PF.max_pool3d(x, 2, 1, return_indices=True), lambda x: TF.max_pool3d(x, 2, 1, return_indices=True),
          arr)
    check(lambda x: PF.adaptive_max_pool3d(x, 3, True), lambda x: TF.adaptive_max_pool3d(x, 3, True), arr)
    check(lambda x: PF.max_pool3d(x.transpose(2, 4), 2, return_indices=True),
          lambda x: TF.max_pool3d(x.transpose(2, 4), 2, return_indices=True), rand((2, 3, 4, 5, 6)))
    check(lambda x: PF.avg_pool3d(x[:, :, ::2], 2, 1, 1), lambda x: TF.avg_pool3d(x[:, :, ::2], 2, 1, 1),
          rand((2, 3, 8, 5, 6)))


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_dtypes_vs_torch(dtype):
    # windows that do not overlap: torch's reduced-precision backward rounds after every addition
    arr = rand((2, 3, 6, 4, 8))
    check(lambda x: PF.max_pool3d(x, 2, 2, return_indices=True),
          lambda x: TF.max_pool3d(x, 2, 2, return_indices=True), arr, dtype)
    if dtype == "float32":  # torch's avg_pool3d has no float16 / bfloat16 CPU kernel
        check(lambda x: PF.avg_pool3d(x, 2, 2), lambda x: TF.avg_pool3d(x, 2, 2), arr, dtype)
    else:
        with pytest.raises(NotImplementedError, match="avg_pool3d_out_frame"):
            PF.avg_pool3d(P.tensor(arr.tolist(), dtype=getattr(P, dtype)), 2)
    check(lambda x: PF.adaptive_avg_pool3d(x, (3, 2, 4)), lambda x: TF.adaptive_avg_pool3d(x, (3, 2, 4)), arr, dtype)
    check(lambda x: PF.adaptive_max_pool3d(x, (3, 2, 4), True), lambda x: TF.adaptive_max_pool3d(x, (3, 2, 4), True),
          arr, dtype)


@requires_torch
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_max_pool3d_integers_vs_torch(dtype):
    arr = np.random.default_rng(5).integers(0, 100, (2, 3, 5, 6, 7))
    xp, xt = P.tensor(arr.tolist(), dtype=getattr(P, dtype)), T.tensor(arr, dtype=getattr(T, dtype))
    for a, b in zip(PF.max_pool3d(xp, 3, 2, 1, return_indices=True), TF.max_pool3d(xt, 3, 2, 1, return_indices=True)):
        assert_same(a, b)


@requires_torch
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_vs_torch(n):
    shape = [(2, 3, 9), (2, 3, 6, 7), (2, 2, 4, 6, 5)][n - 1]
    arr = rand(shape)
    pool = [PF.max_pool1d, PF.max_pool2d, PF.max_pool3d][n - 1]
    tpool = [TF.max_pool1d, TF.max_pool2d, TF.max_pool3d][n - 1]
    unpool = [PF.max_unpool1d, PF.max_unpool2d, PF.max_unpool3d][n - 1]
    tunpool = [TF.max_unpool1d, TF.max_unpool2d, TF.max_unpool3d][n - 1]
    check(lambda x: unpool(*pool(x, 2, return_indices=True), 2, output_size=shape),
          lambda x: tunpool(*tpool(x, 2, return_indices=True), 2, output_size=shape), arr)
    check(lambda x: unpool(*pool(x, 3, 2, 1, return_indices=True), 3, 2, 1, output_size=shape[-n:]),
          lambda x: tunpool(*tpool(x, 3, 2, 1, return_indices=True), 3, 2, 1, output_size=shape[-n:]), arr)


ERRORS = [
    lambda F, x: F.max_pool3d(x, 0), lambda F, x: F.max_pool3d(x, 2, 0), lambda F, x: F.max_pool3d(x, 2, 1, 2),
    lambda F, x: F.max_pool3d(x, [2, 2]), lambda F, x: F.max_pool3d(x[0, 0], 2), lambda F, x: F.max_pool3d(x, 9),
    lambda F, x: F.max_pool3d(x, 2, dilation=0), lambda F, x: F.max_pool3d(x[:, :0], 2),
    lambda F, x: F.max_pool3d(x.bool(), 2), lambda F, x: F.avg_pool3d(x, 2, divisor_override=0),
    lambda F, x: F.avg_pool3d(x, 6), lambda F, x: F.avg_pool3d(x, 3, 1, 2), lambda F, x: F.avg_pool3d(x.int(), 2),
    lambda F, x: F.avg_pool3d(x, [2, 2]), lambda F, x: F.avg_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x, [1, 2]), lambda F, x: F.adaptive_avg_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_avg_pool3d(x, -1), lambda F, x: F.adaptive_avg_pool3d(x[:, :, :0], 2),
    lambda F, x: F.adaptive_max_pool3d(x.long(), 2), lambda F, x: F.adaptive_max_pool3d(x[0, 0], 2),
    lambda F, x: F.adaptive_max_pool3d(x[:, :0], 2), lambda F, x: F.adaptive_avg_pool3d(x.long(), 1),
    lambda F, x: F.adaptive_avg_pool3d(x.long(), 2),
]


@requires_torch
@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    xp, xt = both(rand((2, 3, 5, 5, 5)), "float32")
    with pytest.raises(Exception) as te:
        call(TF, xt)
    with pytest.raises(Exception) as pe:
        call(PF, xp)
    assert type(pe.value) is type(te.value), (te.value, pe.value)
    assert str(pe.value) == str(te.value).split("\n")[0]
