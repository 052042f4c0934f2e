"""nn.utils: gradient clipping and parameter/vector conversion, against torch and by hand."""
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T


def grads(rs, shapes):
    return [np.asarray(rs.randn(*s) * 3, dtype=np.float32) for s in shapes]


def params_with(gs, lib):
    ps = []
    for g in gs:
        p = lib.zeros(g.shape, requires_grad=True)
        p.grad = lib.tensor(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.5])
def test_clip_grad_norm_by_hand(norm_type):
    rs = np.random.RandomState(0)
    gs = grads(rs, [(3, 4), (5,), ()])
    ps = params_with(gs, P)
    total = P.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=norm_type)
    flat = np.concatenate([g.ravel() for g in gs]).astype(np.float64)
    want = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    np.testing.assert_allclose(total.item(), want, rtol=1e-5)
    coef = min(1.0, 1.5 / (want + 1e-6))
    for p, g in zip(ps, gs):
        np.testing.assert_allclose(np.array(p.grad.tolist()), g * coef, rtol=1e-5, atol=1e-6)


@requires_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_matches_torch(norm_type):
    rs = np.random.RandomState(1)
    gs = grads(rs, [(7, 3), (3,), (2, 2, 2)])
    pa, pb = params_with(gs, P), params_with(gs, T)
    ta = P.nn.utils.clip_grad_norm_(iter(pa), 0.7, norm_type)  # a generator works
    tb = T.nn.utils.clip_grad_norm_(iter(pb), 0.7, norm_type)
    assert ta.dtype == P.float32 and ta.dim() == 0
    np.testing.assert_allclose(ta.item(), tb.item(), rtol=1e-6)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(np.array(a.grad.tolist()), b.grad.numpy(), rtol=1e-6, atol=1e-7)
    # below the threshold nothing changes
    pa = params_with(gs, P)
    P.nn.utils.clip_grad_norm_(pa, 1e6)
    for a, g in zip(pa, gs):
        np.testing.assert_allclose(np.array(a.grad.tolist()), g, rtol=1e-6)


def test_clip_grad_norm_nonfinite_and_empty():
    p = P.zeros(2, requires_grad=True)
    p.grad = P.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        P.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert P.nn.utils.clip_grad_norm_([P.zeros(2, requires_grad=True)], 1.0).item() == 0.0


def test_clip_grad_value():
    p = P.zeros(4, requires_grad=True)
    p.grad = P.tensor([-3.0, -0.5, 0.5, 3.0])
    P.nn.utils.clip_grad_value_([p], 1.0)
    assert p.grad.tolist() == [-1.0, -0.5, 0.5, 1.0]


def test_parameters_vector_round_trip():
    net = P.nn.Sequential(P.nn.Linear(3, 2), P.nn.Linear(2, 1))
    vec = P.nn.utils.parameters_to_vector(net.parameters())
    assert tuple(vec.shape) == (3 * 2 + 2 + 2 + 1,)
    P.nn.utils.vector_to_parameters(P.arange(11.0), net.parameters())
    assert net[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert net[1].bias.tolist() == [10.0]
    assert P.nn.utils.parameters_to_vector(net.parameters()).tolist() == list(map(float, range(11)))
    with pytest.raises(TypeError):
        P.nn.utils.vector_to_parameters([1.0], net.parameters())
