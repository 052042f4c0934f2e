"""Property-based conv2d: random batch, channels, image sizes, kernels, strides, paddings, dilations, groups and
input layouts (contiguous or a transposed view), float32 and float64 (a third of the examples in the shapes Winograd's
F(2x2, 3x3) takes). Each example checks the forward against the
float64 numpy convolution and the input and weight gradients through the adjoint identities (<dL/dx, x'> =
<dY, conv(x')>, and the same for the weight), always; against torch when present. So the Winograd path (Note
[Winograd convolution]), the direct kernels and the GEMM engine's products are all drawn."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import pyctorch as P
from test_conv import np_conv2d
from conftest import torch as T

F = P.nn.functional


@st.composite
def conv_cases(draw):
    if draw(st.integers(0, 2)) == 0:  # a third of the examples: what Winograd takes (float32 3x3, stride 1, >= 16 channels)
        ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        return dict(n=draw(st.integers(1, 3)), cin=draw(st.integers(16, 40)), cout=draw(st.integers(16, 40)),
                    h=draw(st.integers(max(1, 4 - 2 * ph), 11)), w=draw(st.integers(max(1, 4 - 2 * pw), 11)), k=(3, 3), s=(1, 1),
                    p=(ph, pw), d=(1, 1), g=1, bias=draw(st.booleans()), transposed=draw(st.booleans()),
                    dtype="float32", seed=draw(st.integers(0, 2**31 - 1)))
    else:
        groups = draw(st.sampled_from([1, 1, 1, 2, 4]))
        cin = groups * draw(st.integers(1, 24 // groups))
        cout = groups * draw(st.integers(1, 24 // groups))
        kh, kw = draw(st.sampled_from([(3, 3), (3, 3), (1, 1), (2, 3), (5, 5), (3, 1)]))
        sh, sw = draw(st.sampled_from([(1, 1), (1, 1), (2, 2), (1, 2)]))
        dh, dw = draw(st.sampled_from([(1, 1), (1, 1), (1, 1), (2, 2)]))
    ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    h = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 11))
    w = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 11))
    return dict(n=draw(st.integers(0, 3)), cin=cin, cout=cout, h=h, w=w, k=(kh, kw), s=(sh, sw), p=(ph, pw),
                d=(dh, dw), g=groups, bias=draw(st.booleans()), transposed=draw(st.booleans()),
                dtype=draw(st.sampled_from(["float32", "float64"])), seed=draw(st.integers(0, 2**31 - 1)))


def _tensor(a, dtype, transposed):
    """a as a pyctorch tensor of dtype; with transposed, a view whose last two dims are swapped in memory"""
    if transposed and a.ndim == 4:
        return P.from_numpy(np.ascontiguousarray(np.swapaxes(a, 2, 3))).to(getattr(P, dtype)).transpose(2, 3)
    return P.from_numpy(np.ascontiguousarray(a)).to(getattr(P, dtype))


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(conv_cases())
def test_random_conv2d_forward_and_gradients(c):
    rng = np.random.default_rng(c["seed"])
    kh, kw = c["k"]
    x = rng.uniform(-1, 1, (c["n"], c["cin"], c["h"], c["w"]))
    wt = rng.uniform(-1, 1, (c["cout"], c["cin"] // c["g"], kh, kw)) * 0.3
    b = rng.uniform(-1, 1, c["cout"]) if c["bias"] else None
    if c["dtype"] == "float32":  # the reference sees the values the float32 run sees
        x, wt = x.astype(np.float32).astype(np.float64), wt.astype(np.float32).astype(np.float64)
        b = None if b is None else b.astype(np.float32).astype(np.float64)
    xp = _tensor(x, c["dtype"], c["transposed"]).requires_grad_()
    wp = _tensor(wt, c["dtype"], False).requires_grad_()
    bp = None if b is None else _tensor(b, c["dtype"], False)
    y = F.conv2d(xp, wp, bp, c["s"], c["p"], c["d"], c["g"])
    want = np_conv2d(x, wt, b, c["s"], c["p"], c["d"], c["g"])
    assert tuple(y.shape) == want.shape
    tol = 1e-5 if c["dtype"] == "float32" else 1e-12
    scale = max(1.0, np.abs(want).max()) if want.size else 1.0
    got = y.detach().double().numpy()
    assert np.abs(got - want).max(initial=0) <= tol * scale

    go = rng.uniform(-1, 1, want.shape)
    if c["dtype"] == "float32":
        go = go.astype(np.float32).astype(np.float64)
    y.backward(_tensor(go, c["dtype"], False))
    x2, w2 = rng.uniform(-1, 1, x.shape), rng.uniform(-1, 1, wt.shape)
    dx_dot = (go * np_conv2d(x2, wt, None, c["s"], c["p"], c["d"], c["g"])).sum()
    dw_dot = (go * np_conv2d(x, w2, None, c["s"], c["p"], c["d"], c["g"])).sum()
    mag = max(1.0, np.abs(go).sum() * max(1.0, scale))
    assert abs((xp.grad.double().numpy() * x2).sum() - dx_dot) <= tol * mag
    assert abs((wp.grad.double().numpy() * w2).sum() - dw_dot) <= tol * mag

    if T is not None:
        xt = T.from_numpy(x).to(getattr(T, c["dtype"])).requires_grad_()
        wtt = T.from_numpy(wt).to(getattr(T, c["dtype"])).requires_grad_()
        bt = None if b is None else T.from_numpy(b).to(getattr(T, c["dtype"]))
        yt = T.nn.functional.conv2d(xt, wtt, bt, c["s"], c["p"], c["d"], c["g"])
        yt.backward(T.from_numpy(go).to(getattr(T, c["dtype"])))
        assert np.abs(got - yt.detach().double().numpy()).max(initial=0) <= tol * scale
        gscale = max(1.0, np.abs(xt.grad.double().numpy()).max(initial=0))
        assert np.abs(xp.grad.double().numpy() - xt.grad.double().numpy()).max(initial=0) <= tol * gscale
        wscale = max(1.0, np.abs(wtt.grad.double().numpy()).max(initial=0))
        assert np.abs(wp.grad.double().numpy() - wtt.grad.double().numpy()).max(initial=0) <= 10 * tol * wscale
