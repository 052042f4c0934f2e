"""The one registry of (family, parameters) cases every distribution test runs over.
Parameters are float64 except where torch itself only works in float32 (GeneralizedPareto compares
its float64 concentration with a float32 zero, which torch's isclose refuses).

A case builds the same distribution in pyctorch and in torch: `build(D, t)` gets the framework's
`distributions` module D and a tensor maker t (numpy/float -> float64 tensor of that framework,
a leaf requiring grad when the test asks for gradients). Flags say what a case supports:
  seeded   samples equal torch's for one seed (the same generator calls in the same order)
  rsample  rsample gradients equal torch's (implies seeded), to grad_tol: gamma-based draws
           differentiate exactly where torch uses approximations good to ~1e-3 (Note [Gamma
           gradients] in pyctorch/distributions/_sampling.py)
  moments  sample mean (and variance) are also checked against the distribution's own, for the
           families whose sampler pyctorch replicates in Python (this part runs without torch)
  cdf, icdf  the family defines them
"""
import numpy as np


def _rng(seed):
    return np.random.default_rng(seed)


LOC = np.array([-1.0, 0.0, 0.5, 2.0])
SCALE = np.array([0.5, 1.0, 1.5, 3.0])
PROBS = np.array([0.1, 0.3, 0.5, 0.85])
LOGITS = np.array([-2.0, -0.3, 0.4, 1.7])
CAT_PROBS = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
CAT_LOGITS = np.array([[0.5, -1.0, 0.2, 1.5], [0.0, 0.3, -0.4, 0.1]])
CONC_A = np.array([0.6, 1.0, 2.5, 7.0])
CONC_B = np.array([0.8, 2.0, 1.3, 4.0])
RATE = np.array([0.5, 1.0, 2.0, 4.0])
DIRICHLET = np.array([[0.7, 1.5, 3.0], [2.0, 2.0, 5.0]])
COV_FACTOR = np.array([[[1.0, 0.2], [0.5, -0.3], [0.1, 0.8]]])
COV_DIAG = np.array([[0.5, 1.0, 0.7]])
MVN_LOC = np.array([[0.0, 1.0, -1.0], [0.5, 0.5, 0.5]])
_A = _rng(1).normal(size=(2, 3, 3))
COV = _A @ _A.transpose(0, 2, 1) + 0.5 * np.eye(3)
SCALE_TRIL = np.linalg.cholesky(COV)
PRECISION = np.linalg.inv(COV)
WISHART_COV = COV[:1]


class Case:
    def __init__(self, name, build, seeded=False, rsample=False, moments=False, cdf=False, icdf=False,
                 var_moment=True, tol=1e-9, dtype="float64", grad_tol=None):
        self.name, self.build = name, build
        self.seeded, self.rsample, self.moments = seeded, rsample, moments
        self.cdf, self.icdf, self.var_moment, self.tol, self.dtype = cdf, icdf, var_moment, tol, dtype
        self.grad_tol = grad_tol

    def __repr__(self):
        return self.name


CASES = [
    Case("Normal", lambda D, t: D.Normal(t(LOC), t(SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("Normal-scalar", lambda D, t: D.Normal(0.3, 2.0), seeded=True, cdf=True, icdf=True, tol=1e-6),
    Case("MultivariateNormal-cov", lambda D, t: D.MultivariateNormal(t(MVN_LOC), covariance_matrix=t(COV)),
         seeded=True, rsample=True, tol=1e-8),
    Case("MultivariateNormal-tril", lambda D, t: D.MultivariateNormal(t(MVN_LOC), scale_tril=t(SCALE_TRIL)),
         seeded=True, rsample=True, tol=1e-8),
    Case("MultivariateNormal-prec", lambda D, t: D.MultivariateNormal(t(MVN_LOC[0]), precision_matrix=t(PRECISION)),
         seeded=True, rsample=True, tol=1e-8),
    Case("LowRankMultivariateNormal", lambda D, t: D.LowRankMultivariateNormal(t(MVN_LOC), t(COV_FACTOR), t(COV_DIAG)),
         seeded=True, rsample=True, tol=1e-8),
    Case("Bernoulli-probs", lambda D, t: D.Bernoulli(probs=t(PROBS)), seeded=True),
    Case("Bernoulli-logits", lambda D, t: D.Bernoulli(logits=t(LOGITS)), seeded=True),
    Case("Categorical-probs", lambda D, t: D.Categorical(probs=t(CAT_PROBS)), seeded=True),
    Case("Categorical-logits", lambda D, t: D.Categorical(logits=t(CAT_LOGITS)), seeded=True),
    Case("OneHotCategorical", lambda D, t: D.OneHotCategorical(probs=t(CAT_PROBS)), seeded=True),
    Case("Multinomial", lambda D, t: D.Multinomial(7, probs=t(CAT_PROBS)), seeded=True),
    Case("Binomial", lambda D, t: D.Binomial(t(np.array([3.0, 8.0, 10.0, 20.0])), t(PROBS)), seeded=True,
         moments=True),
    Case("Binomial-large", lambda D, t: D.Binomial(t(np.array([40.0, 1000.0, 1e5, 3e4])),
                                                   t(np.array([0.5, 0.02, 0.7, 0.999]))), seeded=True, moments=True),
    Case("Binomial-logits", lambda D, t: D.Binomial(6, logits=t(LOGITS)), seeded=True, moments=True),
    Case("Poisson", lambda D, t: D.Poisson(t(np.array([0.5, 2.0, 6.0, 15.0]))), seeded=True, moments=True),
    Case("Geometric", lambda D, t: D.Geometric(probs=t(PROBS)), seeded=True),
    Case("NegativeBinomial", lambda D, t: D.NegativeBinomial(t(np.array([1.0, 2.5, 4.0, 10.0])), t(PROBS * 0.8)),
         seeded=True, moments=True),
    Case("Beta", lambda D, t: D.Beta(t(CONC_A), t(CONC_B)), seeded=True, moments=True),
    Case("Gamma", lambda D, t: D.Gamma(t(CONC_A), t(RATE)),
         seeded=True, rsample=True, grad_tol=5e-3, moments=True, cdf=True),
    Case("Chi2", lambda D, t: D.Chi2(t(np.array([1.0, 2.0, 5.0, 9.0]))),
         seeded=True, rsample=True, grad_tol=5e-3, moments=True, cdf=True),
    Case("Dirichlet", lambda D, t: D.Dirichlet(t(DIRICHLET)), seeded=True, moments=True),
    Case("Exponential", lambda D, t: D.Exponential(t(RATE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("Laplace", lambda D, t: D.Laplace(t(LOC), t(SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("LogNormal", lambda D, t: D.LogNormal(t(LOC), t(SCALE * 0.5)), seeded=True, rsample=True, cdf=True,
         icdf=True),
    Case("Cauchy", lambda D, t: D.Cauchy(t(LOC), t(SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("HalfNormal", lambda D, t: D.HalfNormal(t(SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("HalfCauchy", lambda D, t: D.HalfCauchy(t(SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("StudentT", lambda D, t: D.StudentT(t(np.array([3.0, 5.0, 8.0, 30.0])), t(LOC), t(SCALE)),
         seeded=True, rsample=True, grad_tol=5e-3, moments=True),
    Case("Uniform", lambda D, t: D.Uniform(t(LOC), t(LOC + SCALE)), seeded=True, rsample=True, cdf=True, icdf=True),
    Case("Gumbel", lambda D, t: D.Gumbel(t(LOC), t(SCALE)), seeded=True, cdf=True, icdf=True),
    Case("Weibull", lambda D, t: D.Weibull(t(SCALE), t(CONC_B + 0.5)), seeded=True, cdf=True, icdf=True),
    Case("Pareto", lambda D, t: D.Pareto(t(SCALE), t(CONC_A + 2.5)), seeded=True, cdf=True, icdf=True),
    Case("VonMises", lambda D, t: D.VonMises(t(LOC), t(np.array([0.5, 1.0, 4.0, 10.0]))), seeded=True),
    Case("RelaxedBernoulli", lambda D, t: D.RelaxedBernoulli(t(np.array(0.7)), probs=t(PROBS)), seeded=True,
         rsample=True),
    Case("RelaxedOneHotCategorical", lambda D, t: D.RelaxedOneHotCategorical(t(np.array(0.5)), probs=t(CAT_PROBS)),
         seeded=True, rsample=True),
    Case("ContinuousBernoulli", lambda D, t: D.ContinuousBernoulli(probs=t(np.array([0.1, 0.3, 0.4995, 0.8]))),
         seeded=True, rsample=True, cdf=True, icdf=True),
    Case("Kumaraswamy", lambda D, t: D.Kumaraswamy(t(CONC_A + 0.5), t(CONC_B + 0.5)), seeded=True, rsample=True),
    Case("LKJCholesky", lambda D, t: D.LKJCholesky(3, t(np.array([0.5, 1.0, 3.0]))), seeded=True, moments=True,
         var_moment=False),
    Case("Wishart", lambda D, t: D.Wishart(t(np.array([4.0])), covariance_matrix=t(WISHART_COV)), seeded=True,
         moments=True,
         tol=1e-8),
    Case("MixtureSameFamily", lambda D, t: D.MixtureSameFamily(D.Categorical(probs=t(CAT_PROBS)),
                                                               D.Normal(t(MVN_LOC), t(np.abs(MVN_LOC) + 0.5))),
         seeded=True,
         cdf=True),
    Case("Independent", lambda D, t: D.Independent(D.Normal(t(MVN_LOC), t(np.abs(MVN_LOC) + 0.5)), 1), seeded=True,
         rsample=True),
    Case("TransformedDistribution", lambda D, t: D.TransformedDistribution(
        D.Normal(t(LOC), t(SCALE)), [D.AffineTransform(t(np.array(1.0)), t(np.array(2.0))), D.ExpTransform()]),
        seeded=True, rsample=True, cdf=True, icdf=True),
    Case("FisherSnedecor", lambda D, t: D.FisherSnedecor(t(np.array([3.0, 5.0, 10.0, 20.0])),
                                                         t(np.array([9.0, 12.0, 15.0, 30.0]))),
         seeded=True, rsample=True, grad_tol=2e-2, moments=True),  # a ratio: the approximation error grows
    Case("LogisticNormal", lambda D, t: D.LogisticNormal(t(MVN_LOC), t(np.abs(MVN_LOC) + 0.5)), seeded=True,
         rsample=True),
    Case("GeneralizedPareto", lambda D, t: D.GeneralizedPareto(t(LOC), t(SCALE), t(np.array([-0.2, 0.0, 0.1, 0.3]))),
         seeded=True, rsample=True, cdf=True, icdf=True, tol=2e-6, dtype="float32"),
    Case("InverseGamma", lambda D, t: D.InverseGamma(t(CONC_A + 3.0), t(RATE)), seeded=True, rsample=True,
         grad_tol=5e-3, moments=True),
    # shapes and compositions beyond one family with a flat batch
    Case("Normal-broadcast", lambda D, t: D.Normal(t(LOC[:3].reshape(3, 1)), t(SCALE[:2])), seeded=True,
         rsample=True, cdf=True, icdf=False),
    Case("Uniform-scalar", lambda D, t: D.Uniform(-1.0, 3.0), seeded=True, cdf=True, icdf=True, tol=1e-6),
    Case("OneHotCategoricalStraightThrough", lambda D, t: D.OneHotCategoricalStraightThrough(logits=t(CAT_LOGITS)),
         seeded=True, rsample=True),
    Case("MixtureSameFamily-mvn", lambda D, t: D.MixtureSameFamily(
        D.Categorical(logits=t(np.array([0.3, -0.2]))),
        D.MultivariateNormal(t(MVN_LOC), scale_tril=t(SCALE_TRIL))), seeded=True, tol=1e-8),
    Case("TransformedDistribution-reshape", lambda D, t: D.TransformedDistribution(
        D.Independent(D.Normal(t(np.zeros((2, 6))), t(np.ones((2, 6)))), 1),
        [D.ReshapeTransform((6,), (2, 3)), D.ExpTransform()]), seeded=True, rsample=True),
    Case("Independent-Bernoulli", lambda D, t: D.Independent(D.Bernoulli(probs=t(CAT_PROBS)), 1), seeded=True),
    Case("Exponential-float32", lambda D, t: D.Exponential(t(RATE)), seeded=True, rsample=True, cdf=True, icdf=True,
         tol=1e-6, dtype="float32"),
    Case("Gamma-float32", lambda D, t: D.Gamma(t(CONC_A), t(RATE)), seeded=True, rsample=True,
         grad_tol=5e-3, moments=True, tol=1e-5, dtype="float32"),
]

CASE_IDS = [c.name for c in CASES]
BY_NAME = {c.name: c for c in CASES}

# KL pairs: (p case, q case) built from the registry's builders or small ad-hoc ones.
KL_PAIRS = [
    ("Normal", "Normal2"), ("Bernoulli-probs", "Bernoulli2"), ("Beta", "Beta2"), ("Binomial", "Binomial2"),
    ("Categorical-probs", "Categorical2"), ("ContinuousBernoulli", "ContinuousBernoulli2"),
    ("Dirichlet", "Dirichlet2"), ("Exponential", "Exponential2"), ("Gamma", "Gamma2"), ("Gumbel", "Gumbel2"),
    ("Geometric", "Geometric2"), ("HalfNormal", "HalfNormal2"), ("Laplace", "Laplace2"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal2"),
    ("MultivariateNormal-cov", "LowRankMultivariateNormal2"),
    ("LowRankMultivariateNormal", "MultivariateNormal-tril"), ("MultivariateNormal-cov", "MultivariateNormal-tril"),
    ("OneHotCategorical", "OneHotCategorical2"), ("Pareto", "Pareto2"), ("Poisson", "Poisson2"),
    ("TransformedDistribution", "TransformedDistribution2"), ("Uniform", "Uniform2"), ("Independent", "Independent2"),
    ("Cauchy", "Cauchy2"), ("LogNormal", "LogNormal2"), ("Chi2", "Chi2"), ("Wishart", "Wishart2"),
    ("Bernoulli-probs", "Poisson2"), ("Beta", "ContinuousBernoulli2"), ("Beta", "Pareto2"), ("Beta", "Exponential2"),
    ("Beta", "Gamma2"), ("Beta", "Normal2"), ("Beta", "Uniform01"), ("ContinuousBernoulli", "Pareto2"),
    ("ContinuousBernoulli", "Exponential2"), ("ContinuousBernoulli", "Normal2"), ("ContinuousBernoulli", "Uniform01"),
    ("Exponential", "Gamma2"), ("Exponential", "Gumbel2"), ("Exponential", "Normal2"), ("Exponential", "Uniform2"),
    ("Gamma", "Exponential2"), ("Gamma", "Gumbel2"), ("Gamma", "Normal2"), ("Gamma", "Beta2"),
    ("Gumbel", "Normal2"), ("Gumbel", "Gamma2"), ("Laplace", "Normal2"), ("Laplace", "Uniform2"),
    ("Normal", "Gumbel2"), ("Normal", "Laplace2"), ("Normal", "Uniform2"), ("Pareto", "Exponential2"),
    ("Pareto", "Gamma2"), ("Pareto", "Normal2"), ("Pareto", "Uniform2"), ("Poisson", "Bernoulli2"),
    ("Uniform01in", "Beta2"), ("Uniform01in", "ContinuousBernoulli2"), ("Uniform", "Exponential2"),
    ("Uniform", "Gamma2"), ("Uniform", "Gumbel2"), ("Uniform", "Normal2"), ("Uniform", "Pareto2"),
]

_KL_ONLY = [
    Case("Normal2", lambda D, t: D.Normal(t(LOC[::-1].copy()), t(SCALE + 0.3))),
    Case("Bernoulli2", lambda D, t: D.Bernoulli(probs=t(PROBS[::-1].copy()))),
    Case("Beta2", lambda D, t: D.Beta(t(CONC_B), t(CONC_A))),
    Case("Binomial2", lambda D, t: D.Binomial(t(np.array([3.0, 5.0, 10.0, 20.0])), t(PROBS[::-1].copy()))),
    Case("Categorical2", lambda D, t: D.Categorical(probs=t(CAT_PROBS[::-1].copy()))),
    Case("ContinuousBernoulli2", lambda D, t: D.ContinuousBernoulli(probs=t(np.array([0.6, 0.2, 0.7, 0.45])))),
    Case("Dirichlet2", lambda D, t: D.Dirichlet(t(DIRICHLET[::-1].copy()))),
    Case("Exponential2", lambda D, t: D.Exponential(t(RATE[::-1].copy()))),
    Case("Gamma2", lambda D, t: D.Gamma(t(CONC_B), t(RATE[::-1].copy()))),
    Case("Gumbel2", lambda D, t: D.Gumbel(t(LOC[::-1].copy()), t(SCALE + 1.0))),
    Case("Geometric2", lambda D, t: D.Geometric(probs=t(PROBS[::-1].copy()))),
    Case("HalfNormal2", lambda D, t: D.HalfNormal(t(SCALE + 0.4))),
    Case("Laplace2", lambda D, t: D.Laplace(t(LOC[::-1].copy()), t(SCALE + 0.2))),
    Case("LowRankMultivariateNormal2", lambda D, t: D.LowRankMultivariateNormal(
        t(MVN_LOC[::-1].copy()), t(COV_FACTOR[:, ::-1].copy()), t(COV_DIAG + 0.3))),
    Case("OneHotCategorical2", lambda D, t: D.OneHotCategorical(probs=t(CAT_PROBS[::-1].copy()))),
    Case("Pareto2", lambda D, t: D.Pareto(t(SCALE * 0.5), t(CONC_B + 1.0))),
    Case("Poisson2", lambda D, t: D.Poisson(t(RATE[::-1].copy()))),
    Case("TransformedDistribution2", lambda D, t: D.TransformedDistribution(
        D.Normal(t(LOC[::-1].copy()), t(SCALE + 0.5)), [D.AffineTransform(t(np.array(1.0)), t(np.array(2.0))),
                                                        D.ExpTransform()])),
    Case("Uniform2", lambda D, t: D.Uniform(t(LOC - 1.0), t(LOC + SCALE + 1.0))),
    Case("Uniform01", lambda D, t: D.Uniform(t(np.zeros(4)), t(np.ones(4)))),
    Case("Uniform01in", lambda D, t: D.Uniform(t(np.array([0.1, 0.2, 0.0, 0.5])), t(np.array([0.3, 0.9, 1.0, 0.6])))),
    Case("Independent2", lambda D, t: D.Independent(D.Normal(t(MVN_LOC[::-1].copy()), t(np.abs(MVN_LOC) + 1.0)), 1)),
    Case("Wishart2", lambda D, t: D.Wishart(t(np.array([5.5])), scale_tril=t(SCALE_TRIL[1:]))),
    Case("Cauchy2", lambda D, t: D.Cauchy(t(LOC[::-1].copy()), t(SCALE + 0.5))),
    Case("LogNormal2", lambda D, t: D.LogNormal(t(LOC[::-1].copy()), t(SCALE + 0.5))),
]
ALL_BUILDERS = {c.name: c for c in CASES + _KL_ONLY}
