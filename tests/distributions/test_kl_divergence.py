"""kl_divergence for torch's registered pairs, against torch, plus dispatch and registration."""
import warnings

import numpy as np
import pytest

import pyctorch as P
from distribution_cases import ALL_BUILDERS, KL_PAIRS
from conftest import requires_torch, torch as T
from comparison import assert_same
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)
from distribution_oracle import build


@requires_torch
@pytest.mark.parametrize("p_name,q_name", KL_PAIRS, ids=[f"{p}||{q}" for p, q in KL_PAIRS])
def test_kl_matches_torch(p_name, q_name):
    p_case, q_case = ALL_BUILDERS[p_name], ALL_BUILDERS[q_name]
    pp, _ = build(p_case, P)
    pq, _ = build(q_case, P)
    tp, _ = build(p_case, T)
    tq, _ = build(q_case, T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own warnings (e.g. a Wishart's) are not the subject
        assert_same(P.distributions.kl_divergence(pp, pq), T.distributions.kl_divergence(tp, tq), 1e-8, 1e-8)


def test_kl_of_a_distribution_with_itself_is_zero():
    for name in ["Normal", "Gamma", "Beta", "Dirichlet", "MultivariateNormal-cov", "Categorical-probs",
                 "LowRankMultivariateNormal", "Independent"]:
        d, _ = build(ALL_BUILDERS[name], P)
        np.testing.assert_allclose(P.distributions.kl_divergence(d, d).tolist(), 0.0, atol=1e-10)


def test_kl_errors_and_dispatch():
    D = P.distributions
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type VonMises and q "
                                                  "type Normal"):
        D.kl_divergence(D.VonMises(P.tensor(0.0), P.tensor(1.0)), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="Bregman"):  # exponential families of different types
        D.kl_divergence(D.Poisson(P.tensor(1.0)), D.Gamma(P.tensor(1.0), P.tensor(1.0)))

    class MyNormal(D.Normal):
        pass
    # a subclass uses its parent's pair until it registers its own
    a, b = MyNormal(P.tensor(0.0), P.tensor(1.0)), D.Normal(P.tensor(1.0), P.tensor(1.0))
    assert abs(float(D.kl_divergence(a, b)) - 0.5) < 1e-7

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return P.tensor(42.0)
    assert float(D.kl_divergence(a, b)) == 42.0


@requires_torch
def test_kl_messages_match_torch():
    def message(module, fn):
        try:
            fn(module.distributions)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return None

    cases = [
        lambda D: D.kl_divergence(D.MultivariateNormal(D.Normal(0.0, 1.0).loc.new_zeros(2), scale_tril=_eye(D, 2)),
                                  D.MultivariateNormal(D.Normal(0.0, 1.0).loc.new_zeros(3), scale_tril=_eye(D, 3))),
        lambda D: D.kl_divergence(D.Binomial(2, probs=D.Normal(0.5, 1.0).loc),
                                  D.Binomial(5, probs=D.Normal(0.5, 1.0).loc)),
    ]
    for fn in cases:
        assert message(P, fn) == message(T, fn)


def _eye(D, n):
    return D.Normal(0.0, 1.0).loc.new_ones(n).diag_embed()
