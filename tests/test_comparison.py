"""The one comparison (comparison.assert_same) must fail where pyctorch and torch differ: a comparison that
cannot fail would make every test built on it pass vacuously."""
import math

import pytest

import pyctorch as P
from comparison import assert_same, assert_same_outcome, outcome
from conftest import requires_torch, torch as T


@requires_torch
def test_equal_outcomes_pass():
    assert_same(P.tensor([1.0, math.nan, math.inf]), T.tensor([1.0, math.nan, math.inf]))
    assert_same((P.tensor([1, 2]), [P.tensor(True)]), (T.tensor([1, 2]), [T.tensor(True)]))
    assert_same(P.tensor([1.0], dtype=P.float16) + 1e-4, T.tensor([1.0], dtype=T.float16))
    assert_same(P.float32, T.float32)
    assert_same([1, 2.5, None, True], [1, 2.5, None, True])
    assert_same_outcome(lambda: P.ones(2) + P.ones(3), lambda: T.ones(2) + T.ones(3))


@requires_torch
@pytest.mark.parametrize("got,expected", [
    (lambda: P.tensor([1.0]), lambda: T.tensor([1.0], dtype=T.float64)),        # dtype
    (lambda: P.ones(2, 1), lambda: T.ones(1, 2)),                                # shape
    (lambda: P.tensor([1.0, 2.0]), lambda: T.tensor([1.0, 2.001])),              # values beyond float32's tolerance
    (lambda: P.tensor([math.nan]), lambda: T.tensor([0.0])),                     # NaN against a number
    (lambda: P.tensor([math.inf]), lambda: T.tensor([-math.inf])),               # infinities of other signs
    (lambda: P.tensor([3]), lambda: T.tensor([4])),                               # integers exactly
    (lambda: (P.ones(1),), lambda: (T.ones(1), T.ones(1))),                      # sequence length
    (lambda: 1, lambda: 1.0),                                                     # scalar types
    (lambda: P.ones(1), lambda: None),                                            # None
    (lambda: P.ones(2), lambda: T.ones(2) + T.ones(3)),                          # torch raises, pyctorch returns
    (lambda: P.ones(2)[5], lambda: T.ones(2) + T.ones(3)),                       # other exception types
])
def test_differences_fail(got, expected):
    with pytest.raises(AssertionError):
        assert_same(outcome(got), outcome(expected))


@requires_torch
def test_options():
    with pytest.raises(AssertionError):
        assert_same(P.tensor([1.0]), T.tensor([1.0 + 1e-6]), exact=True)
    assert_same(P.tensor([1.0]), T.tensor([1.5]), values=False)
    assert_same(P.tensor([1.0]), T.tensor([1.05]), 0.1, 0.0)
    with pytest.raises(AssertionError):
        assert_same(P.tensor([1.0]), T.tensor([1.05]), 0.01, 0.0)
