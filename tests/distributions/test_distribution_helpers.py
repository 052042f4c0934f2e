"""The private numerical helpers pyctorch.distributions needs where pyctorch lacks torch's op:
the replicated gamma / Dirichlet / Poisson / binomial samplers, the gamma draws' implicit gradient,
the incomplete gamma function, Cholesky and triangular solves, and the unbiasedness of the
gamma-route rsample gradients."""
import math

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)
from distribution_oracle import np_of
from pyctorch.distributions import _linalg, _sampling, _special, _torch_samplers

ALPHA = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 60.0])
X = np.array([1e-4, 0.8, 0.3, 4.0, 12.0, 55.0])


_SAMPLER_INPUTS = {
    # op: (torch op, our replica, argument values chosen to reach every branch of the algorithm)
    "gamma": (lambda m: m._standard_gamma, _torch_samplers.standard_gamma,
              [[0.0, 1e-3, 0.05, 0.3, 0.999, 1.0, 2.5, 7.3, 60.0]]),
    "dirichlet": (lambda m: m._sample_dirichlet, lambda c: _torch_samplers.dirichlet(c)[0],
                  [[[0.7, 1.5, 3.0], [2.0, 2.0, 5.0], [0.01, 0.02, 0.5]]]),
    "poisson": (lambda m: m.poisson, _torch_samplers.poisson, [[0.0, 0.5, 3.0, 9.99, 10.0, 35.5, 1e4]]),
    "binomial": (lambda m: m.binomial, _torch_samplers.binomial,
                 [[0.0, 1.0, 5.0, 20.0, 100.0, 1000.0, 1e5, 7.0, 30.0, 50.0],
                  [0.3, 0.5, 0.9, 0.55, 0.02, 0.4, 0.7, 1.0, 0.95, 0.0]]),
}


@requires_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", list(_SAMPLER_INPUTS))
def test_replicated_samplers_equal_torch(op, dtype):
    """Note [Sampling like torch]: bit-equal draws, and the generator left in torch's state."""
    torch_op, ours, args = _SAMPLER_INPUTS[op]
    t_args = [T.tensor(a, dtype=getattr(T, dtype)).repeat(*([25] + [1] * (len(np.shape(a)) - 1))) for a in args]
    p_args = [P.tensor(a.tolist(), dtype=getattr(P, dtype)) for a in t_args]
    T.manual_seed(21)
    P.manual_seed(21)
    T.randn(1, dtype=T.float64)  # leave a cached Box-Muller normal in both generators
    P.randn(1, dtype=P.float64)
    expected = torch_op(T)(*t_args)
    got = ours(*p_args)
    assert str(got.dtype) == str(expected.dtype) and got.tolist() == expected.tolist()
    assert P.randn(3, dtype=P.float64).tolist() == T.randn(3, dtype=T.float64).tolist()


@requires_torch
def test_standard_gamma_grad_matches_torch():
    ours = _sampling.standard_gamma_grad(P.tensor(X.tolist(), dtype=P.float64),
                                         P.tensor(ALPHA.tolist(), dtype=P.float64))
    theirs = T._standard_gamma_grad(T.tensor(ALPHA.tolist(), dtype=T.float64), T.tensor(X.tolist(), dtype=T.float64))
    # torch evaluates an approximation (series / asymptotic / rational fit); ours sums the exact series
    np.testing.assert_allclose(np_of(ours), np_of(theirs), rtol=2e-3)


def _gamma_cdf(a, x):
    return float(_special.gammainc(P.tensor(a, dtype=P.float64), P.tensor(x, dtype=P.float64)))


def _gamma_quantile(a, u, x):
    """Newton's method on P(a, x) = u from a starting point x (the density is the derivative)."""
    for _ in range(30):
        density = math.exp((a - 1) * math.log(x) - x - math.lgamma(a))
        x = max(x - (_gamma_cdf(a, x) - u) / density, x / 10)
    return x


def test_standard_gamma_grad_by_finite_differences():
    """dx/dalpha at a fixed CDF level u is the central difference of the quantile function."""
    for alpha, x in [(0.7, 0.4), (3.0, 2.5), (8.0, 11.0)]:
        u, h = _gamma_cdf(alpha, x), 1e-5
        numeric = (_gamma_quantile(alpha + h, u, x) - _gamma_quantile(alpha - h, u, x)) / (2 * h)
        ours = float(_sampling.standard_gamma_grad(P.tensor(x, dtype=P.float64), P.tensor(alpha, dtype=P.float64)))
        assert abs(ours - numeric) < 1e-5 * max(1, abs(numeric))


@requires_torch
def test_gammainc_matches_torch():
    a = np.array([0.1, 0.5, 1.0, 3.0, 20.0, 200.0])
    x = np.array([0.01, 2.0, 0.5, 3.0, 25.0, 180.0])
    ours = _special.gammainc(P.tensor(a.tolist(), dtype=P.float64), P.tensor(x.tolist(), dtype=P.float64))
    theirs = T.special.gammainc(T.tensor(a.tolist(), dtype=T.float64), T.tensor(x.tolist(), dtype=T.float64))
    np.testing.assert_allclose(np_of(ours), np_of(theirs), rtol=1e-10, atol=1e-14)


def test_linalg_helpers_against_numpy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 4, 4))
    spd = a @ a.transpose(0, 2, 1) + np.eye(4)
    L = _linalg.cholesky(P.tensor(spd.tolist(), dtype=P.float64))
    np.testing.assert_allclose(np_of(L), np.linalg.cholesky(spd), atol=1e-12)
    b = rng.normal(size=(2, 4, 3))
    x = _linalg.solve_triangular(L, P.tensor(b.tolist(), dtype=P.float64), upper=False)
    np.testing.assert_allclose(np.linalg.cholesky(spd) @ np_of(x), b, atol=1e-12)
    np.testing.assert_allclose(np_of(_linalg.cholesky_inverse(L)), np.linalg.inv(spd), atol=1e-12)
    np.testing.assert_allclose(np_of(_linalg.logdet_pd(P.tensor(spd.tolist(), dtype=P.float64))),
                               np.linalg.slogdet(spd)[1], atol=1e-12)
    assert np_of(_linalg.cholesky_succeeds(P.tensor([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]]]))).tolist() \
        == [False, True]


def test_mvlgamma_and_bessel_by_hand():
    x = P.tensor([2.5, 4.0], dtype=P.float64)
    expected = [3 * 2 / 4 * math.log(math.pi) + sum(math.lgamma(v - j / 2) for j in range(3)) for v in (2.5, 4.0)]
    np.testing.assert_allclose(np_of(_special.mvlgamma(x, 3)), expected, rtol=1e-12)
    # I0(1) = 1.2660658777520082
    assert abs(float(_special.i0e(P.tensor(1.0, dtype=P.float64))) - 1.2660658777520082 * math.exp(-1)) < 1e-9


@pytest.mark.parametrize("family,grad_of_mean", [
    # d E[x] / d concentration1, which the mean reparameterised gradient must estimate
    ("Gamma", lambda a, b: 1 / b),
    ("Beta", lambda a, b: b / (a + b) ** 2),
])
def test_reparameterised_gradient_by_moments(family, grad_of_mean):
    """The gamma-route rsample gradients (Note [Gamma gradients]) are unbiased: over n draws
    (one concentration entry per draw, so each entry's .grad is that draw's dx/da) the mean of
    dx/da is within 5 standard errors of d E[x]/da."""
    a_val, b_val, n = 2.0, 3.0, 20000
    a = P.full((n,), a_val, dtype=P.float64, requires_grad=True)
    dist = getattr(P.distributions, family)(a, P.full((n,), b_val, dtype=P.float64))
    P.manual_seed(5)
    dist.rsample().sum().backward()
    per_draw = np_of(a.grad)
    std_err = per_draw.std() / math.sqrt(n)
    assert abs(per_draw.mean() - grad_of_mean(a_val, b_val)) < 5 * std_err
