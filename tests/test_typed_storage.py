"""TypedStorage and the legacy storage classes (pyctorch/storage.py), Tensor.storage()/storage_type() and
as_strided_, against torch and by hand."""
import copy
import pickle
import warnings

import pytest

import pyctorch as P
from comparison import assert_same_outcome
from conftest import requires_torch, torch as T


def _quiet(fn):
    def run(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m)
    return run


CASES = {
    "basics": lambda m: (lambda x, s: (s.size(), len(s), s.dtype, s.device.type, s[1], s[-1], s.tolist(),
                                       s.element_size(), s.nbytes(), s.data_ptr() == x.data_ptr(), repr(s),
                                       s.type(), s.is_shared(), s.is_cuda))(*(lambda x: (x, x.storage()))(
                                           m.arange(4.))),
    "write_through": lambda m: (lambda x: (x.storage().__setitem__(0, 9), x.storage().fill_(2) and x, x))(
        m.arange(3)),
    "view_sees_whole_storage": lambda m: m.arange(6.)[2:4].storage().tolist(),
    "legacy_new": lambda m: (m.FloatStorage(3).size(), m.FloatStorage([1, 2]).tolist(), m.LongStorage([5]).dtype,
                             m.BoolStorage([True, False]).tolist(), repr(m.DoubleStorage([1.5]))),
    "legacy_isinstance": lambda m: (isinstance(m.ones(2).storage(), m.FloatStorage),
                                    isinstance(m.ones(2).storage(), m.DoubleStorage),
                                    isinstance(m.ones(2).storage(), m.storage.TypedStorage),
                                    m.is_storage(m.ones(2).storage()), m.is_storage(m.ones(2))),
    "storage_type": lambda m: [str(m.ones(1, dtype=d).storage_type()) for d in (m.float32, m.int64, m.bool,
                                                                               m.float16, m.uint8)],
    "conversions": lambda m: (lambda s: (s.double().tolist(), s.long().dtype, s.half().tolist()))(
        m.tensor([1.5, -2.0]).storage()),
    "copy_clone": lambda m: (lambda s: (s.clone().tolist(), s.clone().data_ptr() != s.data_ptr(),
                                        m.FloatStorage(2).copy_(s).tolist()))(m.tensor([1.0, 2.0]).storage()),
    "bad_kwarg": lambda m: m.FloatStorage(2, dtype=m.int64),
    "index_error": lambda m: m.ones(2).storage()[5],
    "slice": lambda m: m.ones(2).storage()[0:1],
    "wrap": lambda m: m.storage.TypedStorage(wrap_storage=m.arange(3).untyped_storage(), dtype=m.int64).tolist(),
    "as_strided_": lambda m: (lambda y: (y.as_strided_((2, 2), (1, 2), 1), y.shape, y.stride(),
                                         y.storage_offset()))(m.arange(6.)),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(case):
    fn = _quiet(CASES[case])
    assert_same_outcome(lambda: fn(P), lambda: fn(T))


def test_by_hand():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = P.arange(3.).storage()
    assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
    assert s.tolist() == [0.0, 1.0, 2.0] and list(s) == [0.0, 1.0, 2.0]
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.tolist() == s.tolist() and s2.dtype == P.float32
    assert copy.deepcopy(s).tolist() == s.tolist()
    y = P.arange(6.)
    assert y.as_strided_((3,), (2,)) is y and y.tolist() == [0.0, 2.0, 4.0]
