"""torch's Number overloads (rsub's positional alpha, bucketize of a number, where's `self`), the
explicit-decimals overload of round and relu/hardtanh dtype checks: what torch accepts is accepted with
its values, what it refuses raises its exception type."""
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import requires_torch, torch


def _outcome(m, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(m)
        except Exception as e:  # noqa: BLE001 -- the exception type is what is compared
            return type(e).__name__, None
    return str(r.dtype).split(".")[-1], r.tolist()


CASES = {
    "rsub 0-d other, positional alpha": lambda m: m.rsub(m.tensor([1.0, 2.0, 3.0]), m.tensor(2.0), 3),
    "rsub number, positional alpha": lambda m: m.rsub(m.tensor([1.0, 2.0, 3.0]), 2, 3),
    "rsub tensor, keyword alpha": lambda m: m.rsub(m.tensor([1.0, 2.0, 3.0]), m.tensor([2.0]), alpha=3),
    "rsub 0-d other requiring grad, positional alpha":
        lambda m: m.rsub(m.ones(2), m.tensor(2.0, requires_grad=True), 3),
    "where self= 0-d requiring grad":
        lambda m: m.where(m.tensor([True, False]), self=m.tensor(2.0, requires_grad=True), other=m.ones(2)),
    "rsub 1-d other, positional alpha": lambda m: m.rsub(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.0, 3.0]), 3),
    "rsub int number float alpha": lambda m: m.rsub(m.tensor([1, 2]), 2, 0.5),
    "bucketize number": lambda m: m.bucketize(2.5, m.tensor([1.0, 2.0, 3.0])),
    "bucketize number out_int32": lambda m: m.bucketize(2.5, m.tensor([1.0, 2.0, 3.0]), out_int32=True),
    "bucketize number out=": lambda m: m.bucketize(2.5, m.tensor([1.0, 2.0, 3.0]), out=m.empty(0, dtype=m.int64)),
    "bucketize tensor out=": lambda m: m.bucketize(m.tensor([2.5]), m.tensor([1.0, 2.0]), out=m.empty(0, dtype=m.int64)),
    "where self= keyword": lambda m: m.where(m.tensor([True, False]), self=1.5, other=m.tensor([1.0, 2.0])),
    "where input= number": lambda m: m.where(m.tensor([True, False]), input=1.5, other=m.tensor([1.0, 2.0])),
    "where input= tensor": lambda m: m.where(m.tensor([True, False]), input=m.tensor([3.0, 4.0]), other=0.5),
    "where two numbers": lambda m: m.where(m.tensor([True, False]), 1, 0),
    "where out= with a number": lambda m: m.where(m.tensor([True, False]), 1.0, m.tensor([1.0, 2.0]), out=m.empty(2)),
    "where condition= keyword": lambda m: m.where(condition=m.tensor([True, False]), input=m.tensor([3.0, 4.0]), other=0.5),
    "round int": lambda m: m.round(m.tensor([1, 2])),
    "round int decimals=0": lambda m: m.round(m.tensor([1, 2]), decimals=0),
    "round int decimals=1": lambda m: m.round(m.tensor([1, 2]), decimals=1),
    "round float decimals=0": lambda m: m.round(m.tensor([1.25, 2.5]), decimals=0),
    "round float decimals=1": lambda m: m.round(m.tensor([1.25, 2.5]), decimals=1),
    "round decimals=None": lambda m: m.round(m.tensor([1.25]), decimals=None),
    "method round int decimals=0": lambda m: m.tensor([1, 2]).round(decimals=0),
    "special.round int": lambda m: m.special.round(m.tensor([1, 2])),
    "relu bool": lambda m: m.relu(m.tensor([True, False])),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_as_torch(case):
    assert _outcome(pyctorch, CASES[case]) == _outcome(torch, CASES[case])


def test_values_by_hand():
    t = pyctorch.tensor([1.0, 2.0, 3.0])
    assert pyctorch.rsub(t, 2, 3).tolist() == [-1.0, -4.0, -7.0]
    assert pyctorch.rsub(t, pyctorch.tensor(2.0), 3).tolist() == [-1.0, -4.0, -7.0]
    with pytest.raises(TypeError, match="invalid combination of arguments - got \\(Tensor, Tensor, int\\)"):
        pyctorch.rsub(t, t, 3)
    assert int(pyctorch.bucketize(2.5, t)) == 2
    with pytest.raises(TypeError):
        pyctorch.bucketize(2.5, t, out=pyctorch.empty(0, dtype=pyctorch.int64))
    c = pyctorch.tensor([True, False, True])
    np.testing.assert_array_equal(pyctorch.where(c, self=1.5, other=t).numpy(), [1.5, 2.0, 1.5])
    with pytest.raises(TypeError):
        pyctorch.where(c, input=1.5, other=t)
    with pytest.raises(NotImplementedError, match="round_vml_cpu"):
        pyctorch.round(pyctorch.tensor([1, 2]), decimals=0)
    assert pyctorch.round(pyctorch.tensor([1, 2])).tolist() == [1, 2]
