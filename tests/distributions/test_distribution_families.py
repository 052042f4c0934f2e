"""Every family of the registry (distribution_cases.py) against torch: densities, moments,
entropies, CDFs, seeded samples, rsample gradients, expand, enumerate_support, flags and supports.
The families whose sampler is replicated in Python are also checked by moments, without torch."""
import math
import warnings

import numpy as np
import pytest

import pyctorch as P
from distribution_cases import CASES, CASE_IDS
from conftest import requires_torch, torch as T
from comparison import assert_same
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)
from distribution_oracle import build, build_both, np_of, outcome, to_pyctorch

SEED = 1234


def torch_values(case, shape=(5,)):
    """Points in the support: torch's own draws (the same seed every time)."""
    t_dist, _ = build(case, T)
    T.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's Wishart warns on every draw
        return t_dist.sample(shape)


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_log_prob(case):
    p, t, _, _ = build_both(case)
    value = torch_values(case)
    assert_same(p.log_prob(to_pyctorch(value)), t.log_prob(value), case.tol, case.tol)
    assert tuple(p.batch_shape) == tuple(t.batch_shape) and tuple(p.event_shape) == tuple(t.event_shape)


@requires_torch
@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode", "entropy", "perplexity"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_statistics(case, prop):
    p, t, _, _ = build_both(case)

    def read(d):
        return getattr(d, prop)() if prop in ("entropy", "perplexity") else getattr(d, prop)
    p_kind, p_val = outcome(lambda: read(p))
    t_kind, t_val = outcome(lambda: read(t))
    assert p_kind == t_kind, f"{prop}: torch {t_kind}, pyctorch {p_kind}"
    if t_kind == "ok":
        assert_same(p_val, t_val, max(case.tol, 1e-8), 1e-8)


@requires_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.cdf or c.icdf], ids=lambda c: c.name)
def test_cdf_icdf(case):
    p, t, _, _ = build_both(case)
    value = torch_values(case)
    if case.cdf:
        assert_same(p.cdf(to_pyctorch(value)), t.cdf(value), max(case.tol, 1e-8), case.tol)
    if case.icdf:
        q = T.tensor([0.05, 0.3, 0.5, 0.9], dtype=value.dtype).expand(tuple(t.batch_shape) or (4,))
        assert_same(p.icdf(to_pyctorch(q)), t.icdf(q), case.tol, case.tol)


@requires_torch
@pytest.mark.filterwarnings("ignore:Singular sample detected")
@pytest.mark.parametrize("case", [c for c in CASES if c.seeded], ids=lambda c: c.name)
def test_seeded_samples_equal_torch(case):
    p, t, _, _ = build_both(case)
    for shape in [(), (3, 2)]:
        P.manual_seed(SEED)
        T.manual_seed(SEED)
        tol = 1e-10 if case.dtype == "float64" else 1e-6
        assert_same(p.sample(shape), t.sample(shape), tol, tol)
        if t.has_rsample:
            assert_same(p.rsample(shape), t.rsample(shape), tol, tol)
    # the generator is left where torch leaves it: the next draw agrees too
    assert_same(P.rand(3, dtype=P.float64), T.rand(3, dtype=T.float64), 0, 0)


def _weights(shape, module, dtype):
    w = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    return module.tensor(w.tolist(), dtype=getattr(module, dtype))


@requires_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.rsample], ids=lambda c: c.name)
def test_rsample_gradients_equal_torch(case):
    p, t, p_leaves, t_leaves = build_both(case, grad=True)
    P.manual_seed(SEED)
    T.manual_seed(SEED)
    # a smooth function of the draws that weighs every entry differently
    p_x, t_x = p.rsample((4,)), t.rsample((4,))
    shape = tuple(t_x.shape)
    (p_x * _weights(shape, P, case.dtype)).sin().sum().backward()
    (t_x * _weights(shape, T, case.dtype)).sin().sum().backward()
    assert any(leaf.grad is not None for leaf in t_leaves)
    for pl, tl in zip(p_leaves, t_leaves):
        if tl.grad is None:
            assert pl.grad is None or not np.any(np_of(pl.grad))
        else:
            tol = case.grad_tol or max(case.tol, 1e-7)
            assert_same(pl.grad, tl.grad, tol, max(case.tol, 1e-9))


@pytest.mark.filterwarnings("ignore:Singular sample detected")  # torch's Wishart warns on every draw; so do we
@pytest.mark.parametrize("case", [c for c in CASES if c.moments], ids=lambda c: c.name)
def test_sample_moments(case):
    """Families whose sampler is replicated in Python: the sample mean and variance of n draws fall
    within 5 standard errors of the distribution's mean and variance (the error of a variance
    estimate uses the sample fourth moment). Runs without torch."""
    dist, _ = build(case, P)
    n = 5000
    P.manual_seed(0)
    x = np_of(dist.sample((n,)))
    assert x.shape == (n,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert bool(dist.support.check(P.tensor(x[:200].tolist(), dtype=getattr(P, case.dtype))).all())
    if case.name == "LKJCholesky":  # no mean property: the correlation matrix L L^T has mean I
        corr = x @ np.swapaxes(x, -1, -2)
        np.testing.assert_allclose(corr.mean(0), np.broadcast_to(np.eye(3), corr.shape[1:]), atol=0.03)
        return
    mean, var = np_of(dist.mean), np_of(dist.variance) if case.var_moment else None
    sample_mean, sample_var = x.mean(0), x.var(0)
    std_err = np.sqrt(x.var(0) / n)
    assert np.all(np.abs(sample_mean - mean) <= 5 * std_err + 1e-12), (sample_mean, mean)
    if var is not None:
        fourth = ((x - sample_mean) ** 4).mean(0)
        var_err = np.sqrt(np.maximum(fourth - sample_var ** 2, 0) / n)
        assert np.all(np.abs(sample_var - var) <= 5 * var_err + 1e-12), (sample_var, var)


@pytest.mark.filterwarnings("ignore:Singular sample detected")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_sample_shapes_and_support(case):
    dist, _ = build(case, P)
    P.manual_seed(0)
    x = dist.sample((2, 3))
    assert tuple(x.shape) == (2, 3) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert bool(dist.support.check(x).all())
    assert tuple(dist.log_prob(x).shape) == (2, 3) + tuple(dist.batch_shape)


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_expand(case):
    p, t, _, _ = build_both(case)
    new_batch = (2,) + tuple(t.batch_shape)
    pe, te = p.expand(new_batch), t.expand(new_batch)
    assert type(pe).__name__ == type(te).__name__
    assert tuple(pe.batch_shape) == tuple(te.batch_shape) and tuple(pe.event_shape) == tuple(te.event_shape)
    value = torch_values(case, (1,))
    assert_same(pe.log_prob(to_pyctorch(value)), te.log_prob(value), case.tol, case.tol)


@requires_torch
@pytest.mark.parametrize("case", [c for c in CASES if c.name.split("-")[0] in
                                  ("Bernoulli", "Categorical", "OneHotCategorical", "Binomial")],
                         ids=lambda c: c.name)
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(case, expand):
    p, t, _, _ = build_both(case)
    assert p.has_enumerate_support and t.has_enumerate_support
    if case.name in ("Binomial", "Binomial-large"):  # inhomogeneous counts: both refuse alike
        with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
            p.enumerate_support(expand)
        return
    assert_same(p.enumerate_support(expand), t.enumerate_support(expand), 0, 0)


@requires_torch
def test_float32_parameters_follow_torch():
    p = P.distributions.Gamma(P.tensor([2.0, 3.0]), P.tensor([1.0, 0.5]))
    t = T.distributions.Gamma(T.tensor([2.0, 3.0]), T.tensor([1.0, 0.5]))
    v = T.tensor([[0.5, 4.0]])
    assert_same(p.log_prob(to_pyctorch(v)), t.log_prob(v), 1e-6, 1e-6)
    P.manual_seed(3)
    T.manual_seed(3)
    assert_same(P.distributions.Normal(P.tensor(0.0), P.tensor(1.0)).sample((4,)),
                T.distributions.Normal(T.tensor(0.0), T.tensor(1.0)).sample((4,)), 0, 0)


def test_hand_computed_values():
    """Values checked against closed forms, independent of torch."""
    D = P.distributions
    n = D.Normal(P.tensor([0.0], dtype=P.float64), P.tensor([2.0], dtype=P.float64))
    expected = -0.125 - math.log(2 * math.sqrt(2 * math.pi))
    assert abs(float(n.log_prob(P.tensor([1.0], dtype=P.float64))) - expected) < 1e-12
    assert abs(float(n.entropy()) - (0.5 * math.log(2 * math.pi * math.e * 4))) < 1e-12
    e = D.Exponential(P.tensor(2.0, dtype=P.float64))
    assert abs(float(e.cdf(P.tensor(0.5, dtype=P.float64))) - (1 - math.exp(-1))) < 1e-12
    b = D.Beta(P.tensor(2.0, dtype=P.float64), P.tensor(3.0, dtype=P.float64))
    # density 12 x (1 - x)^2
    assert abs(float(b.log_prob(P.tensor(0.25, dtype=P.float64))) - math.log(12 * 0.25 * 0.75 ** 2)) < 1e-12
    pois = D.Poisson(P.tensor(3.0, dtype=P.float64))
    assert abs(float(pois.log_prob(P.tensor(2.0, dtype=P.float64))) - math.log(9 / 2 * math.exp(-3))) < 1e-12
    g = D.Gamma(P.tensor(3.0, dtype=P.float64), P.tensor(2.0, dtype=P.float64))
    # P(3, 2x) at x = 1: 1 - e^-2 (1 + 2 + 2)
    assert abs(float(g.cdf(P.tensor(1.0, dtype=P.float64))) - (1 - 5 * math.exp(-2))) < 1e-10


def test_sample_n_and_generic_helpers():
    d = P.distributions.Normal(P.tensor([0.0, 1.0]), P.tensor([1.0, 2.0]))
    with pytest.warns(FutureWarning, match="sample_n"):
        assert tuple(d.sample_n(3).shape) == (3, 2)
    assert np.allclose(np_of(d.perplexity()), np.exp(np_of(d.entropy())))
    assert repr(d) == "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(P.distributions.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert P.distributions.Normal.has_rsample and not P.distributions.Bernoulli.has_rsample
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P.distributions.Normal(0.0, 1.0).log_prob(P.tensor(0.3))


@requires_torch
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_flags_support_and_constraints_match_torch(case):
    p, t, _, _ = build_both(case)
    assert p.has_rsample == t.has_rsample
    assert p.has_enumerate_support == t.has_enumerate_support
    assert repr(p.support) == repr(t.support)
    assert (p.support.is_discrete, p.support.event_dim) == (t.support.is_discrete, t.support.event_dim)
    assert {k: repr(v) for k, v in p.arg_constraints.items()} == {k: repr(v) for k, v in t.arg_constraints.items()}
    assert repr(p) == repr(t)
    if not t.has_rsample:
        for d in (p, t):
            with pytest.raises(NotImplementedError):
                d.rsample()


@pytest.mark.parametrize("case", [c for c in CASES if c.seeded], ids=lambda c: c.name)
def test_sample_is_detached(case):
    dist, leaves = build(case, P, grad=True)
    P.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not dist.sample((2,)).requires_grad
