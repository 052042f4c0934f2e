"""Transforms (forward, inverse, log|det J|, shapes, caching), constraints' check() and the
biject_to / transform_to registries, against torch."""
import numpy as np
import pytest

import pyctorch as P
from conftest import HAVE_TORCH, requires_torch, torch as T
from comparison import assert_same
from distribution_oracle import single_thread  # noqa: F401  (autouse fixture)
from distribution_oracle import np_of, to_pyctorch

_RNG = np.random.default_rng(7)
X_REAL = _RNG.normal(size=(2, 3))
X_POS = np.exp(_RNG.normal(size=(2, 3)))
X_SQUARE = _RNG.normal(size=(2, 3, 3))
X_VEC6 = _RNG.normal(size=(2, 6))  # 6 = 4 * 3 / 2 entries of a 4 x 4 correlation factor


def _t(m, x):
    return m.tensor(np.asarray(x).tolist(), dtype=m.float64)


# (id, make(module) -> transform, input x (numpy, in the domain), bijective on that input)
TRANSFORMS = [
    ("exp", lambda m: m.distributions.ExpTransform(), X_REAL),
    ("affine", lambda m: m.distributions.AffineTransform(_t(m, [1.0, -2.0, 0.5]), _t(m, [2.0, -0.5, 3.0])), X_REAL),
    ("affine-scalar", lambda m: m.distributions.AffineTransform(1.5, -2.0), X_REAL),
    ("affine-event", lambda m: m.distributions.AffineTransform(_t(m, 0.5), _t(m, [1.0, 2.0, 3.0]), event_dim=1),
     X_REAL),
    ("sigmoid", lambda m: m.distributions.SigmoidTransform(), X_REAL),
    ("softplus", lambda m: m.distributions.SoftplusTransform(), X_REAL),
    ("tanh", lambda m: m.distributions.TanhTransform(), X_REAL),
    ("power", lambda m: m.distributions.PowerTransform(_t(m, [0.5, 2.0, -1.5])), X_POS),
    ("stick-breaking", lambda m: m.distributions.StickBreakingTransform(), X_REAL),
    ("lower-cholesky", lambda m: m.distributions.LowerCholeskyTransform(), X_SQUARE),
    ("positive-definite", lambda m: m.distributions.PositiveDefiniteTransform(), X_SQUARE),
    ("corr-cholesky", lambda m: m.distributions.CorrCholeskyTransform(), X_VEC6),
    ("softmax", lambda m: m.distributions.SoftmaxTransform(), X_REAL),
    ("abs", lambda m: m.distributions.AbsTransform(), X_POS),
    ("reshape", lambda m: m.distributions.ReshapeTransform((3,), (3, 1)), X_REAL),
    ("compose", lambda m: m.distributions.ComposeTransform([m.distributions.AffineTransform(0.5, 2.0),
                                                            m.distributions.ExpTransform()]), X_REAL),
    ("compose-event", lambda m: m.distributions.ComposeTransform([m.distributions.ExpTransform(),
                                                                  m.distributions.StickBreakingTransform()]), X_REAL),
    ("independent", lambda m: m.distributions.IndependentTransform(m.distributions.ExpTransform(), 1), X_REAL),
    ("inverse", lambda m: m.distributions.ExpTransform().inv, X_POS),
    ("cat", lambda m: m.distributions.CatTransform([m.distributions.ExpTransform(), m.distributions.SigmoidTransform()],
                                                   dim=1, lengths=[1, 2]), X_REAL),
    ("stack", lambda m: m.distributions.StackTransform([m.distributions.ExpTransform(), m.distributions.TanhTransform(),
                                                       m.distributions.AffineTransform(1.0, 3.0)], dim=1), X_REAL),
    ("cdf", lambda m: m.distributions.CumulativeDistributionTransform(
        m.distributions.Normal(_t(m, [0.0, 1.0, 2.0]), _t(m, [1.0, 2.0, 0.5]))), X_REAL),
    ("identity", lambda m: m.distributions.transforms.identity_transform, X_REAL),
]
IDS = [t[0] for t in TRANSFORMS]


@requires_torch
@pytest.mark.parametrize("make,x", [t[1:] for t in TRANSFORMS], ids=IDS)
def test_transform_matches_torch(make, x):
    pt, tt = make(P), make(T)
    px, tx = _t(P, x), _t(T, x)
    py, ty = pt(px), tt(tx)
    assert_same(py, ty, 1e-10, 1e-12)
    assert_same(pt.inv(py), tt.inv(ty), 1e-8, 1e-10)
    for attr in ("bijective", "event_dim"):
        try:
            expected = getattr(tt, attr)
        except ValueError:
            continue
        assert getattr(pt, attr) == expected
    assert repr(pt.domain) == repr(tt.domain) and repr(pt.codomain) == repr(tt.codomain)
    assert tuple(pt.forward_shape(px.shape)) == tuple(tt.forward_shape(tx.shape))
    assert tuple(pt.inverse_shape(py.shape)) == tuple(tt.inverse_shape(ty.shape))
    try:
        expected = tt.log_abs_det_jacobian(tx, ty)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            pt.log_abs_det_jacobian(px, py)
        return
    assert_same(pt.log_abs_det_jacobian(px, py), expected, 1e-9, 1e-10)


# not injective on their whole domain: abs, softmax; lower-cholesky and positive-definite read only
# the lower triangle of a square input
_ROUND_TRIP = [t for t in TRANSFORMS if t[0] not in ("abs", "softmax", "identity", "lower-cholesky",
                                                      "positive-definite")]


@pytest.mark.parametrize("make,x", [t[1:] for t in _ROUND_TRIP], ids=[t[0] for t in _ROUND_TRIP])
def test_inverse_round_trip_and_cache(make, x):
    """Runs without torch: inv(t(x)) = x, and with cache_size=1 the exact object comes back."""
    tr = make(P)
    px = _t(P, x)
    np.testing.assert_allclose(np_of(tr.inv(tr(px))), x, rtol=1e-7, atol=1e-9)
    assert tr.inv.inv is tr
    try:
        cached = tr.with_cache(1)
    except NotImplementedError:
        return
    y = cached(px)
    assert cached.inv(y) is px
    assert cached(px) is y


def test_log_abs_det_jacobian_by_autograd():
    """For elementwise bijections, log|dy/dx| is the log of autograd's derivative."""
    D = P.distributions
    for tr in (D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform(), D.SoftplusTransform(),
               D.AffineTransform(0.3, -2.5), D.PowerTransform(P.tensor(1.7, dtype=P.float64))):
        x = _t(P, X_POS).requires_grad_()
        y = tr(x)
        (grad,) = P.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(np_of(tr.log_abs_det_jacobian(x, y)), np.log(np.abs(np_of(grad))), rtol=1e-9)


def test_transform_errors():
    D = P.distributions
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        D.ReshapeTransform((2,), (3,))
    with pytest.raises(ValueError, match="Please use either .domain.event_dim or .codomain.event_dim"):
        D.CorrCholeskyTransform().event_dim  # noqa: B018
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
    assert D.ComposeTransform([D.ExpTransform()]).inv == D.ComposeTransform([D.ExpTransform().inv])


# ---- constraints -------------------------------------------------------------------------------

_PROBE = np.array([[-1.0, 0.0, 0.5, 1.0], [2.0, 3.0, float("nan"), 0.25]])
_SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.5, 0.6, -0.1]])
_ONE_HOT = np.array([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
_MATS = np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.3, 1.0]], [[-1.0, 0.0], [0.2, 1.0]],
                  [[2.0, 3.0], [3.0, 2.0]]])
_CORR = np.array([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]])

# (id, make(constraints module), values)
CONSTRAINTS = [
    ("real", lambda c: c.real, _PROBE), ("positive", lambda c: c.positive, _PROBE),
    ("nonnegative", lambda c: c.nonnegative, _PROBE), ("unit_interval", lambda c: c.unit_interval, _PROBE),
    ("boolean", lambda c: c.boolean, _PROBE), ("nonnegative_integer", lambda c: c.nonnegative_integer, _PROBE),
    ("positive_integer", lambda c: c.positive_integer, _PROBE),
    ("integer_interval", lambda c: c.integer_interval(0, 2), _PROBE),
    ("greater_than", lambda c: c.greater_than(0.5), _PROBE),
    ("greater_than_eq", lambda c: c.greater_than_eq(0.5), _PROBE),
    ("less_than", lambda c: c.less_than(0.5), _PROBE), ("interval", lambda c: c.interval(0.0, 2.0), _PROBE),
    ("half_open_interval", lambda c: c.half_open_interval(0.0, 1.0), _PROBE),
    ("real_vector", lambda c: c.real_vector, _PROBE), ("independent", lambda c: c.independent(c.positive, 1), _PROBE),
    ("simplex", lambda c: c.simplex, _SIMPLEX), ("one_hot", lambda c: c.one_hot, _ONE_HOT),
    ("multinomial", lambda c: c.multinomial(1), _ONE_HOT),
    ("lower_triangular", lambda c: c.lower_triangular, _MATS), ("lower_cholesky", lambda c: c.lower_cholesky, _MATS),
    ("corr_cholesky", lambda c: c.corr_cholesky, _CORR), ("square", lambda c: c.square, _MATS),
    ("symmetric", lambda c: c.symmetric, _MATS), ("positive_definite", lambda c: c.positive_definite, _MATS[1:]),
    ("positive_semidefinite", lambda c: c.positive_semidefinite, _MATS[1:]),
    ("cat", lambda c: c.cat([c.positive, c.real], dim=1, lengths=[2, 2]), _PROBE),
    ("stack", lambda c: c.stack([c.positive, c.real, c.unit_interval, c.real], dim=1), _PROBE),
    ("mixture", lambda c: c.MixtureSameFamilyConstraint(c.positive), _PROBE),
]


@requires_torch
@pytest.mark.parametrize("make,values", [c[1:] for c in CONSTRAINTS], ids=[c[0] for c in CONSTRAINTS])
def test_constraint_check_matches_torch(make, values):
    pc, tc = make(P.distributions.constraints), make(T.distributions.constraints)
    assert_same(pc.check(_t(P, values)), tc.check(_t(T, values)), 0, 0)
    assert repr(pc) == repr(tc)
    assert (pc.is_discrete, pc.event_dim) == (tc.is_discrete, tc.event_dim)


def test_constraints_by_hand():
    c = P.distributions.constraints
    assert np_of(c.positive.check(P.tensor([-1.0, 0.0, 2.0]))).tolist() == [False, False, True]
    assert np_of(c.simplex.check(P.tensor([[0.5, 0.5], [0.9, 0.2]]))).tolist() == [True, False]
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        c.dependent.check(P.tensor(0.0))
    assert c.dependent(is_discrete=True, event_dim=1).event_dim == 1
    with pytest.raises(NotImplementedError, match=".event_dim cannot be determined statically"):
        c.dependent.event_dim  # noqa: B018
    assert sorted(c.__all__) == sorted(set(c.__all__))


@requires_torch
def test_every_public_constraint_exists():
    assert sorted(P.distributions.constraints.__all__) == sorted(T.distributions.constraints.__all__)
    assert sorted(P.distributions.__all__) == sorted(T.distributions.__all__)


# ---- biject_to / transform_to -----------------------------------------------------------------

REGISTRY_CONSTRAINTS = [c for c in CONSTRAINTS if c[0] not in ("boolean", "nonnegative_integer", "positive_integer",
                                                                "integer_interval", "one_hot", "multinomial",
                                                                "lower_triangular", "square", "symmetric", "mixture")]


@requires_torch
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("make", [c[1] for c in REGISTRY_CONSTRAINTS], ids=[c[0] for c in REGISTRY_CONSTRAINTS])
def test_registries_match_torch(registry, make):
    pc, tc = make(P.distributions.constraints), make(T.distributions.constraints)
    try:
        expected = getattr(T.distributions, registry)(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            getattr(P.distributions, registry)(pc)
        return
    got = getattr(P.distributions, registry)(pc)
    assert repr(got) == repr(expected)
    if repr(tc) == "CorrCholesky()":
        shape = (3, 3)  # a 3 x 3 factor from 3 free entries
    else:
        shape = (3, 2, 2) if tc.event_dim >= 2 else (3, 4)
    x = np.random.default_rng(3).normal(size=shape)
    px, tx = _t(P, x), _t(T, x)
    py, ty = got(px), expected(tx)
    assert_same(py, ty, 1e-9, 1e-10)
    assert bool(pc.check(py).all())


def test_registry_errors_and_registration():
    D = P.distributions
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        D.biject_to.register(3, lambda c: None)

    class _Mine(D.constraints.Constraint):
        pass
    D.transform_to.register(_Mine, lambda c: D.ExpTransform())
    assert isinstance(D.transform_to(_Mine()), D.ExpTransform)


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
def test_transformed_distribution_cdf_with_decreasing_chain():
    """A decreasing chain flips the base CDF (the sign bookkeeping of _monotonize_cdf)."""
    def make(m):
        base = m.distributions.Normal(_t(m, [0.0, 1.0]), _t(m, [1.0, 2.0]))
        return m.distributions.TransformedDistribution(base, [m.distributions.AffineTransform(0.0, -1.0),
                                                              m.distributions.ExpTransform()])
    v = T.tensor([0.5, 3.0], dtype=T.float64)
    assert_same(make(P).cdf(to_pyctorch(v)), make(T).cdf(v), 1e-10, 1e-12)
    assert_same(make(P).icdf(to_pyctorch(v / 4)), make(T).icdf(v / 4), 1e-10, 1e-12)
