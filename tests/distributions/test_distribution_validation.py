"""Argument and sample validation: the same exception type and message as torch's."""
import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, torch as T
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)


def _error(module, fn):
    try:
        fn(module)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


# (id, fn(module)) where fn builds or uses a distribution the way a user would and should fail
BAD = [
    ("normal-scale", lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -1.0]))),
    ("normal-scalar-scale", lambda m: m.distributions.Normal(0.0, -2.0)),
    ("bernoulli-both", lambda m: m.distributions.Bernoulli(probs=m.tensor(0.3), logits=m.tensor(0.1))),
    ("bernoulli-probs", lambda m: m.distributions.Bernoulli(probs=m.tensor([1.5]))),
    ("categorical-0d", lambda m: m.distributions.Categorical(probs=m.tensor(0.5))),
    ("categorical-simplex", lambda m: m.distributions.Categorical(probs=m.tensor([[0.5, -0.5]]))),
    ("gamma-rate", lambda m: m.distributions.Gamma(m.tensor([1.0]), m.tensor([0.0]))),
    ("uniform-order", lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.0]))),
    ("beta", lambda m: m.distributions.Beta(m.tensor([-1.0]), m.tensor([1.0]))),
    ("dirichlet-0d", lambda m: m.distributions.Dirichlet(m.tensor(1.0))),
    ("dirichlet", lambda m: m.distributions.Dirichlet(m.tensor([1.0, -1.0]))),
    ("geometric-zero", lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5]))),
    ("mvn-two-params", lambda m: m.distributions.MultivariateNormal(m.zeros(2), covariance_matrix=m.eye(2),
                                                                   scale_tril=m.eye(2))),
    ("mvn-not-pd", lambda m: m.distributions.MultivariateNormal(m.zeros(2), covariance_matrix=m.tensor(
        [[1.0, 2.0], [2.0, 1.0]]))),
    ("mvn-tril", lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                             scale_tril=m.tensor([[1.0, 1.0], [0.0, 1.0]]))),
    ("mvn-loc-0d", lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), covariance_matrix=m.eye(2))),
    ("lowrank-shape", lambda m: m.distributions.LowRankMultivariateNormal(m.zeros(3), m.ones(2, 1), m.ones(3))),
    ("binomial-count", lambda m: m.distributions.Binomial(m.tensor([2.5]), m.tensor([0.5]))),
    ("multinomial-count", lambda m: m.distributions.Multinomial(m.tensor(3), m.tensor([0.5, 0.5]))),
    ("lkj-dim", lambda m: m.distributions.LKJCholesky(1, 1.0)),
    ("wishart-df", lambda m: m.distributions.Wishart(m.tensor(0.5), covariance_matrix=m.eye(2))),
    ("independent-ndims", lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2), m.ones(2)), 2)),
    ("transformed-list", lambda m: m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0), [1])),
    ("transformed-type", lambda m: m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0), 3)),
    ("mixture-type", lambda m: m.distributions.MixtureSameFamily(m.distributions.Normal(0.0, 1.0),
                                                                 m.distributions.Normal(0.0, 1.0))),
    ("mixture-k", lambda m: m.distributions.MixtureSameFamily(m.distributions.Categorical(m.ones(3)),
                                                              m.distributions.Normal(m.zeros(2), m.ones(2)))),
    ("cb-probs", lambda m: m.distributions.ContinuousBernoulli(probs=m.tensor([1.5]), validate_args=True)),
    ("studentt-df", lambda m: m.distributions.StudentT(m.tensor([-1.0]))),
    ("vonmises-conc", lambda m: m.distributions.VonMises(m.tensor([0.0]), m.tensor([-1.0]))),
    ("pareto-alpha", lambda m: m.distributions.Pareto(m.tensor([1.0]), m.tensor([-1.0]))),
    # sample validation
    ("log_prob-not-tensor", lambda m: m.distributions.Normal(0.0, 1.0).log_prob(0.5)),
    ("log_prob-support", lambda m: m.distributions.Exponential(m.tensor([1.0, 2.0])).log_prob(m.tensor([-1.0, 1.0]))),
    ("log_prob-event-shape", lambda m: m.distributions.Dirichlet(m.ones(3)).log_prob(m.ones(2) / 2)),
    ("log_prob-broadcast", lambda m: m.distributions.Normal(m.zeros(3), m.ones(3)).log_prob(m.zeros(2))),
    ("log_prob-bernoulli", lambda m: m.distributions.Bernoulli(m.tensor([0.5])).log_prob(m.tensor([0.5]))),
    ("log_prob-categorical", lambda m: m.distributions.Categorical(m.ones(3)).log_prob(m.tensor([3]))),
    ("log_prob-uniform", lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0))),
    ("cdf-support", lambda m: m.distributions.Gamma(m.tensor(2.0), m.tensor(1.0)).cdf(m.tensor(-1.0))),
    ("binomial-entropy", lambda m: m.distributions.Binomial(m.tensor([2.0, 3.0]), m.tensor([0.5, 0.5])).entropy()),
    ("mode-missing", lambda m: m.distributions.VonMises(m.tensor(0.0), m.tensor(1.0)).entropy()),
    ("set-default", lambda m: m.distributions.Distribution.set_default_validate_args(1.5)),
]


@requires_torch
@pytest.mark.parametrize("fn", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_errors_match_torch(fn):
    expected = _error(T, fn)
    assert expected is not None, "torch accepts this case"
    assert _error(P, fn) == expected


@requires_torch
def test_validate_args_false_skips_checks():
    for m in (P, T):
        d = m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0]), validate_args=False)
        assert d.log_prob(m.tensor([0.0])).shape == (1,)
        e = m.distributions.Exponential(m.tensor([1.0]), validate_args=False)
        assert np.isfinite(float(e.log_prob(m.tensor([-1.0]))))


def test_set_default_validate_args_round_trip():
    D = P.distributions
    assert D.Distribution._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(P.tensor([0.0]), P.tensor([-1.0]))  # no error now
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(P.tensor([0.0]), P.tensor([-1.0]))


def test_missing_arg_constraints_warns():
    class NoConstraints(P.distributions.Distribution):
        pass
    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        NoConstraints(validate_args=True)
