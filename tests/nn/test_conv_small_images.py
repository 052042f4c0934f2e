"""Convolutions over a batch of small images (ResNet's later stages on 32x32 inputs): the transposed batch product
(Note [Transposed convolution product], conv_gemm.c), the tap table (Note [Tap table]) and the batch columns of the
backward (Note [Batch columns], conv_batch_columns.c), which take over below 64 output positions per sample.

Every case runs forward and backward (input, weight and bias gradients) against numpy always (the forward against
tests/nn/test_conv.py's reference, the weight gradient as the forward's adjoint) and against torch when present."""
import numpy as np
import pytest

import pyctorch as P
from test_conv import TOL, compare, np_conv2d, npy, rand, to_pct
from conftest import requires_torch, torch as T

F = P.nn.functional

# N, C, O, H, W, kernel, stride, padding, dilation, groups
CASES = [  # ResNet-18's tail shapes with fewer channels (the path choices depend on positions, not channels)
    (8, 32, 64, 8, 8, 3, 2, 1, 1, 1),      # 8x8 -> 4x4, stride 2
    (8, 64, 64, 4, 4, 3, 1, 1, 1, 1),      # 4x4 (the tap table; plain product)
    (8, 64, 128, 4, 4, 3, 2, 1, 1, 1),     # 4x4 -> 2x2: the transposed product
    (8, 96, 128, 2, 2, 3, 1, 1, 1, 1),     # 2x2, most taps on padding
    (8, 64, 160, 2, 2, 3, 2, 1, 1, 1),     # 2x2 -> 1x1
    (8, 128, 192, 1, 1, 3, 1, 1, 1, 1),    # 1x1: 8 of 9 taps on padding
    (8, 64, 128, 2, 2, 1, 2, 0, 1, 1),     # the 1x1 stride-2 shortcut
    (4, 64, 96, 5, 3, 3, 1, 2, 2, 2),      # dilation, groups, a non-square image
    (3, 40, 72, 3, 5, (1, 3), (2, 1), (0, 1), 1, 4),
    (2, 24, 80, 6, 6, 3, 1, 1, 1, 1),      # two samples
]


def _pair(v):
    return (v, v) if isinstance(v, int) else v


def _arrays(n, c, o, h, w, k, groups):
    kh, kw = _pair(k)
    return rand(n, c, h, w), rand(o, c // groups, kh, kw, seed=1) * 0.1, rand(o, seed=2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}x{c[1]}x{c[3]}x{c[4]}-o{c[2]}-k{c[5]}s{c[6]}" for c in CASES])
def test_small_image_convolution_matches_numpy(case, dtype):
    n, c, o, h, w, k, s, p, d, g = case
    x, wt, b = _arrays(n, c, o, h, w, k, g)
    xp, wp, bp = (to_pct(a, dtype, requires_grad=True) for a in (x, wt, b))
    y = F.conv2d(xp, wp, bp, s, p, d, g)
    want = np_conv2d(x, wt, b, _pair(s), _pair(p), _pair(d), g)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(npy(y), want, rtol=rtol, atol=atol)
    # gradients: <dL/dx, x'> = <dY, conv(x') - conv(0)> (linearity in x), same for the weight; the bias sums dY
    go = rand(*want.shape, seed=3)
    y.backward(to_pct(go, dtype))
    x2, w2 = rand(*x.shape, seed=4), rand(*wt.shape, seed=5)
    dx_dot = (go * (np_conv2d(x2, wt, None, _pair(s), _pair(p), _pair(d), g))).sum()
    dw_dot = (go * (np_conv2d(x, w2, None, _pair(s), _pair(p), _pair(d), g))).sum()
    assert np.isclose((npy(xp.grad) * x2).sum(), dx_dot, rtol=1e-3 if dtype == "float32" else 1e-10)
    assert np.isclose((npy(wp.grad) * w2).sum(), dw_dot, rtol=1e-3 if dtype == "float32" else 1e-10)
    np.testing.assert_allclose(npy(bp.grad), go.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}x{c[1]}x{c[3]}x{c[4]}-o{c[2]}-k{c[5]}s{c[6]}" for c in CASES])
def test_small_image_convolution_matches_torch(case, dtype):
    n, c, o, h, w, k, s, p, d, g = case
    x, wt, b = _arrays(n, c, o, h, w, k, g)
    tol = (1e-4, 1e-4) if dtype == "float32" else None
    compare(lambda x_, w_, b_: F.conv2d(x_, w_, b_, s, p, d, g),
            lambda x_, w_, b_: T.nn.functional.conv2d(x_, w_, b_, s, p, d, g), [x, wt, b], dtype, tol=tol)


@requires_torch
def test_no_bias_and_non_contiguous_input_match_torch():
    x, wt, _ = _arrays(8, 64, 128, 4, 4, 3, 1)
    compare(lambda x_, w_: F.conv2d(x_, w_, None, 2, 1), lambda x_, w_: T.nn.functional.conv2d(x_, w_, None, 2, 1),
            [x, wt], "float32", layouts=["t", None], tol=(1e-4, 1e-4))
