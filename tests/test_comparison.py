"""The one comparison (comparison.assert_same) must fail where pyctorch and torch differ: a comparison that
cannot fail would make every test built on it pass vacuously."""
import collections
import math

import numpy as np
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
    (lambda: P.ones(2, device="meta"), lambda: T.ones(2)),                       # devices
    (lambda: [P.ones(1)], lambda: (T.ones(1),)),                                  # a list for a tuple
    (lambda: (P.ones(2), P.zeros(2, dtype=P.int64)), lambda: T.ones(2, 2).max(0)),  # a tuple for return_types.max
    (lambda: {"a": P.ones(1), "b": P.ones(1)}, lambda: {"b": T.ones(1), "a": T.ones(1)}),  # dict keys' order
    (lambda: {"a": P.ones(1)}, lambda: {"a": T.zeros(1)}),                       # dict values
    (lambda: P.tensor([1.0, 2.0]), lambda: np.array([1.0, 2.5], dtype=np.float32)),  # a numpy oracle's values
    (lambda: P.tensor([1.0]), lambda: np.array([1.0])),                          # a numpy oracle's dtype
    (lambda: np.array([1.0], dtype=np.float32), lambda: T.tensor([1.0])),        # an array for a tensor
    (lambda: "abc", lambda: "abd"),                                              # strings
    (lambda: np.int64(3), lambda: np.int64(4)),                                  # other values by ==
    (lambda: collections.OrderedDict(a=1), lambda: {"a": 1}),                    # dict classes
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


@requires_torch
def test_exact_tells_signed_zeros_apart():
    assert_same(P.tensor([-0.0]), T.tensor([0.0]))
    with pytest.raises(AssertionError):
        assert_same(P.tensor([-0.0]), T.tensor([0.0]), exact=True)
    with pytest.raises(AssertionError):
        assert_same(-0.0, 0.0, exact=True)


@requires_torch
def test_check_dtype_false_compares_values_of_other_dtypes():
    assert_same(P.tensor([1.0, 2.0]), np.array([1.0, 2.0]), check_dtype=False)
    with pytest.raises(AssertionError):
        assert_same(P.tensor([1.0, 2.0]), np.array([1.0, 2.0]))  # dtype float32 != float64
    with pytest.raises(AssertionError):  # values and shapes are still compared
        assert_same(P.tensor([1.0, 2.0]), np.array([1.0, 2.5]), check_dtype=False)
    with pytest.raises(AssertionError):
        assert_same(P.tensor([1.0, 2.0]), np.array([[1.0, 2.0]]), check_dtype=False)


@requires_torch
def test_scale_atol_scales_with_the_largest_finite_value():
    t = T.tensor([1000.0, 1.0, math.inf])
    assert_same(P.tensor([1000.5, 1.5, math.inf]), t, 0.0, 1e-3, scale_atol=True)  # atol 1e-3 * 1000
    with pytest.raises(AssertionError):
        assert_same(P.tensor([1000.5, 1.5, math.inf]), t, 0.0, 1e-3)
    with pytest.raises(AssertionError):  # beyond the scaled atol
        assert_same(P.tensor([1000.5, 2.5, math.inf]), t, 0.0, 1e-3, scale_atol=True)
    with pytest.raises(AssertionError):  # small values: the scale is at least 1
        assert_same(P.tensor([0.5]), T.tensor([0.25]), 0.0, 1e-3, scale_atol=True)


@requires_torch
def test_message_compares_the_exceptions_text():
    assert_same_outcome(lambda: P.ones(2) + P.ones(3), lambda: T.ones(2) + T.ones(3), message=True)
    got, expected = outcome(lambda: P.ones(2) + P.ones(3)), outcome(lambda: T.ones(2) + T.ones(4))
    assert_same(got, expected)
    with pytest.raises(AssertionError):
        assert_same(got, expected, message=True)
    expected = outcome(lambda: T.ones(2).view(-1, -1))
    assert_same(NotImplementedError(str(expected)), expected)  # a RuntimeError, the same text
    with pytest.raises(AssertionError):  # but not the same class
        assert_same(NotImplementedError(str(expected)), expected, message=True)


@requires_torch
def test_containers_pass_when_equal():
    sd = collections.OrderedDict(w=T.ones(2), b=T.zeros(1))
    assert_same(collections.OrderedDict(w=P.ones(2), b=P.zeros(1)), sd)
    assert_same(P.ones(2, 3).shape, T.ones(2, 3).shape)
    assert_same(P.ones(2, 2).max(0), T.ones(2, 2).max(0))
    assert_same(P.tensor([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32))
    assert_same(P.ones(2, device="meta"), T.ones(2, device="meta"), values=False)


def test_assert_same_text():
    from comparison import assert_same_text
    ours = "step 1 loss 0.50000\nsample: the cat\n"
    assert_same_text(ours, "step 1 loss 0.500001\nsample: the cat\n", rtol=1e-4, atol=1e-6, exact_prefixes=("sample",))
    bad = [("step 1 loss 0.6\nsample: the cat\n", "values differ"),            # a number beyond tolerance
           ("step 1 cost 0.5\nsample: the cat\n", "line differs"),             # a word
           ("step 1 loss 0.5\nsample: the dog\n", "line differs"),             # an exact line
           ("step 1 loss 0.5\n", "pyctorch"),                                  # a line missing
           ("step 1 loss nan\nsample: the cat\n", "values differ")]            # NaN against a number
    for theirs, message in bad:
        with pytest.raises(AssertionError, match=message):
            assert_same_text(ours, theirs, rtol=1e-4, atol=1e-6, exact_prefixes=("sample",))
