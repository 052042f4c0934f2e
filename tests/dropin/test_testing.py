"""pyctorch.testing (torch.testing): assert_close's rules and messages, make_tensor's values."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import pyctorch as P
from pyctorch.testing import assert_close, make_tensor
from conftest import CUDA_USABLE, cuda_refusal, requires_torch, torch as T


def cases(M):
    """(actual, expected, kwargs) built with module M (pyctorch or torch)."""
    nan, inf = float("nan"), float("inf")
    t = M.tensor
    return [
        (t([1., 2., 3.]), t([1., 4., 3.]), {}),
        (t([1., 2., 3.]), t([1., 4., 3.]), dict(msg="Argh")),
        (t([1., 2., 3.]), t([1., 4., 3.]), dict(msg=lambda m: "Header\n\n" + m + "\n\nFooter")),
        (t([[1., 2.], [3., 4.]]), t([[1.1, 2.], [3., 0.]]), {}),
        (t([1., nan]), t([1., nan]), {}),
        (t([1., nan]), t([1., nan]), dict(equal_nan=True)),
        (t([1., 2.]), t([1., 2.], dtype=M.float64), {}),
        (t([1., 2.]), t([1., 2.5], dtype=M.float64), dict(check_dtype=False)),
        (t([1., 2.]), t([1., 2., 3.]), {}),
        (t([1, 2, 3]), t([1, 2, 4]), {}),
        (t([1, 2, 0]), t([1, 2, 0], dtype=M.int32), {}),
        (t([5, 2, 0], dtype=M.uint8), t([7, 2, 1], dtype=M.uint8), {}),
        (t([True, False]), t([True, True]), {}),
        (t(1.5), t(2.5), {}),
        (t([1., 2.]), t([1.1, 2.]), dict(rtol=0, atol=0)),
        (t([1., 2.]), t([1.1, 2.]), dict(rtol=0.2, atol=0)),
        (t([1., 2.]), t([1.1, 2.]), dict(rtol=0.2)),
        (t([1., 2.]), t([1.1, 2.]), dict(atol=0.2, msg="not used: argument errors keep their text")),
        (t([1., inf]), t([1., -inf]), {}),
        (t([1., inf]), t([1., inf]), {}),
        (t([1., 2.], dtype=M.float16), t([1., 2.002], dtype=M.float16), {}),
        (t([1., 2.], dtype=M.float16), t([1., 2.004], dtype=M.float16), {}),
        (t([1., 2.], dtype=M.bfloat16), t([1., 2.1], dtype=M.bfloat16), {}),
        (t([1., 2.], dtype=M.float64), t([1., 2. + 1e-7], dtype=M.float64), {}),
        (t([1., 2.], dtype=M.float64), t([1., 2. + 1e-6], dtype=M.float64), {}),
        (M.ones(2, 3), M.ones(3, 2).t(), dict(check_stride=True)),
        (M.ones(2, 3), M.ones(3, 2).t(), {}),
        (M.ones(2, 3)[:, ::2], M.ones(2, 2), {}),
        (1, 1.0, {}),
        (1, 1.0, dict(check_dtype=False)),
        (1.0, 1.0 + 1e-6, {}),
        (1.0, 1.0 + 1e-8, {}),
        (nan, nan, {}),
        (nan, nan, dict(equal_nan=True)),
        (1e-9, 1e-10, dict(rtol=0, atol=0)),
        (0.0, 1e-3, {}),
        (3, 4, {}),
        (True, False, {}),
        (True, True, {}),
        (np.float32(1.0), np.float32(1.1), {}),
        (np.int64(3), 3, {}),
        (None, 1, {}),
        (None, None, {}),
        ([1, 2, [3., 4.]], [1, 2, [3., 4.5]], {}),
        ([1, 2], [1, 2, 3], {}),
        ((1, 2), [1, 2], {}),
        ({"a": 1, "b": t([1., 2.])}, {"a": 1, "b": t([1., 3.])}, {}),
        ({"a": 1, "b": t([1., 2.])}, {"a": 1, "b": t([1., 3.])}, dict(msg=lambda m: m.upper())),
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, {}),
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, dict(msg="custom")),
        (OrderedDict(x=M.zeros(2)), {"x": M.zeros(2)}, {}),
        ([1, [2, 3]], [2, [2]], {}),
        (np.array([1., 2.]), np.array([1., 2.1]), {}),
        (np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int64), {}),
        ([t([1.]), t([2.])], (t([1.]), t([2.5])), {}),
        ("abc", "abd", {}),
        (object(), object(), {}),
        (t([1e-6, 2.]), t([0., 2.]), {}),
        (t([3., 2.]), t([0., 2.]), {}),
        (M.arange(24.).reshape(2, 3, 4), M.arange(24.).reshape(2, 3, 4) * 1.01, {}),
        (M.zeros(0), M.zeros(0), {}),
        (M.zeros(2, 0), M.zeros(0, 2), {}),
        (t([1., nan, 3.]), t([1., 2., 5.]), {}),
        (t([1., 2.]), t([1., 2.]), dict(atol=1e-3)),
        (t([100.]), t([100.0001]), {}),
        (t([[1, 2], [3, 4]], dtype=M.int16), t([[1, 2], [30, 4]], dtype=M.int16), {}),
        (t([1.5, 2.5]), t([1.5, 2.5]), dict(check_device=False, check_layout=False)),
        (M.nn.Parameter(t([1., 2.])), t([1., 2.]), dict(allow_subclasses=False)),
        (M.nn.Parameter(t([1., 2.])), t([1., 2.5]), {}),
    ]


def outcome(M, actual, expected, kw):
    try:
        M.testing.assert_close(actual, expected, **kw)
        return "OK"
    except Exception as e:  # the type and the full message
        text = str(e).replace("pyctorch.Tensor", "torch.Tensor").replace("pyctorch.nn.parameter", "torch.nn.parameter")
        return f"{type(e).__name__}: {text}"


@requires_torch
@pytest.mark.parametrize("i", range(len(cases(P))))
def test_assert_close_matches_torch(i):
    ours = outcome(P, *cases(P)[i])
    theirs = outcome(T, *cases(T)[i])
    assert ours == theirs


def test_assert_close_hand_messages():
    msg = outcome(P, P.tensor([1., 2., 3.]), P.tensor([1., 4., 3.]), {})
    assert msg == ("AssertionError: Tensor-likes are not close!\n\n"
                   "Mismatched elements: 1 / 3 (33.3%)\n"
                   "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)")
    msg = outcome(P, P.tensor([[1, 2], [3, 4]]), P.tensor([[1, 2], [3, 9]]), {})
    assert msg == ("AssertionError: Tensor-likes are not equal!\n\n"
                   "Mismatched elements: 1 / 4 (25.0%)\n"
                   "Greatest absolute difference: 5 at index (1, 1)\n"
                   "Greatest relative difference: 0.5555555820465088 at index (1, 1)")
    assert outcome(P, 1e-9, 1e-10, dict(rtol=0, atol=0)) == (
        "AssertionError: Scalars are not equal!\n\nExpected 1e-10 but got 1e-09.\n"
        "Absolute difference: 9.000000000000001e-10\nRelative difference: 9.0")
    assert outcome(P, P.ones(2), P.ones(2, dtype=P.float64), {}) == (
        "AssertionError: The values for attribute 'dtype' do not match: torch.float32 != torch.float64.")
    assert outcome(P, {"a": [1, 2]}, {"a": [1, 3]}, {}).endswith("\n\nThe failure occurred for item ['a'][1]")
    assert outcome(P, P.ones(2), P.ones(2), dict(rtol=1e-3)) == (
        "ValueError: Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.")
    assert outcome(P, object(), object(), {}) == ("TypeError: No comparison pair was able to handle inputs of "
                                                  "type <class 'object'> and <class 'object'>.")
    assert outcome(P, np.array([1.]), P.ones(1, dtype=P.float64), {}).startswith(
        "TypeError: No comparison pair was able to handle inputs of type <class 'numpy.ndarray'>")


def test_assert_close_tolerances_and_rules():
    # the default tolerance table: just inside passes, just outside fails
    for dtype, (rtol, atol) in {P.float16: (1e-3, 1e-5), P.bfloat16: (1.6e-2, 1e-5),
                                P.float32: (1.3e-6, 1e-5), P.float64: (1e-7, 1e-7)}.items():
        base = P.tensor([256.0], dtype=dtype)
        assert_close(base, base)
        with pytest.raises(AssertionError):
            assert_close(base * (1 + 4 * rtol), base)
    assert P.testing._comparison.default_tolerances(P.float16, P.ones(1)) == (1e-3, 1e-5)
    assert P.testing._comparison.default_tolerances(P.int64) == (0.0, 0.0)
    assert_close(P.tensor([1.0, 2.0]), P.tensor([1.0, 2.0]) + 5e-6)  # atol 1e-5
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert_close([P.ones(2), {"k": (1, 2.5)}], [P.ones(2), {"k": (1, 2.5)}])
    assert_close(P.ones(2, 3), P.ones(3, 2).t())  # strides differ, not checked by default
    with pytest.raises(AssertionError, match="stride"):
        assert_close(P.ones(2, 3), P.ones(3, 2).t(), check_stride=True)
    with pytest.raises(AssertionError, match="Argh"):
        assert_close(P.ones(1), P.zeros(1), msg="Argh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        P.testing.assert_allclose(P.tensor([1.0]), [1.00001])  # looser legacy defaults, lists accepted
    with pytest.warns(FutureWarning):
        P.testing.assert_allclose(1.0, 1.0)


@requires_torch
def test_make_tensor_matches_torch():
    dtypes = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    variants = [{}, dict(low=-3, high=4), dict(noncontiguous=True), dict(exclude_zero=True, low=-1, high=2),
                dict(low=-1e30, high=1e30), dict(low=100)]
    for name in dtypes:
        for kw in variants:
            results = []
            for M in (P, T):
                M.manual_seed(0)
                try:
                    t = M.testing.make_tensor((3, 5), dtype=getattr(M, name), device="cpu", **kw)
                    results.append((t.float().tolist(), t.is_contiguous(), tuple(t.stride()), str(t.dtype),
                                    t.requires_grad))
                except Exception as e:
                    results.append((type(e).__name__, str(e).replace("pyctorch", "torch")))
            assert results[0] == results[1], (name, kw)
    for M in (P, T):
        M.manual_seed(1)
    p = P.testing.make_tensor(2, 3, 4, 5, dtype=P.float32, device="cpu", memory_format=P.channels_last,
                              requires_grad=True)
    t = T.testing.make_tensor(2, 3, 4, 5, dtype=T.float32, device="cpu", memory_format=T.channels_last,
                              requires_grad=True)
    assert p.stride() == t.stride() and p.requires_grad and p.tolist() == t.tolist()


def test_make_tensor_ranges_and_errors():
    P.manual_seed(0)
    for dtype, lo, hi in ((P.float32, -9, 9), (P.float64, -9, 9), (P.int64, -9, 9), (P.uint8, 0, 9),
                          (P.bool, 0, 1)):
        v = np.array(make_tensor(4000, dtype=dtype, device="cpu").float().tolist())
        assert v.min() >= lo and v.max() <= hi and v.max() > v.min()
    t = make_tensor((4, 6), dtype=P.float32, device="cpu", low=2, high=3)
    assert t.shape == (4, 6) and t.is_contiguous() and 2 <= t.min().item() and t.max().item() < 3
    t = make_tensor(4, 6, dtype=P.float32, device="cpu", noncontiguous=True)
    assert t.shape == (4, 6) and not t.is_contiguous() and t.stride() == (12, 2)
    assert make_tensor(1, dtype=P.float32, device="cpu", noncontiguous=True).is_contiguous()
    z = make_tensor(2000, dtype=P.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert (z != 0).all().item() and set(z.tolist()) <= {-1, 1}
    zf = make_tensor(10, dtype=P.float32, device="cpu", low=0, high=1e-38, exclude_zero=True)
    assert (zf != 0).all().item()
    assert make_tensor(3, dtype=P.float64, device="cpu", requires_grad=True).requires_grad
    cl = make_tensor(2, 3, 4, 5, dtype=P.float32, device="cpu", memory_format=P.channels_last)
    assert cl.stride() == (60, 1, 15, 3)
    with pytest.raises(ValueError, match="requires_grad=True"):
        make_tensor(2, dtype=P.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        make_tensor(2, dtype=P.float32, device="cpu", low=3, high=1)
    with pytest.raises(ValueError, match="cannot be NaN"):
        make_tensor(2, dtype=P.float32, device="cpu", low=math.nan)
    with pytest.raises(ValueError, match="only supports"):
        make_tensor(2, dtype=P.uint8, device="cpu", low=-10, high=-1)
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(2, 2, 2, 2, dtype=P.float32, device="cpu", noncontiguous=True, memory_format=P.channels_last)
    with pytest.warns(FutureWarning):
        make_tensor(2, dtype=P.float32, device="cpu", low=1, high=1)
    if not CUDA_USABLE:
        refusal, message = cuda_refusal()
        with pytest.raises(refusal, match=message):
            make_tensor(2, dtype=P.float32, device="cuda")
