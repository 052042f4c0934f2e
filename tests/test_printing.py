"""Tensor printing: ``repr(pyctorch.tensor(...))`` must match PyTorch exactly.

* hand-written expectations always run;
* oracle comparisons against real torch run when torch is installed;
* a pure-Python fake tensor exercises the suffixes (grad_fn, device) that
  cannot be produced from ``pyctorch.tensor(...)`` alone.
"""

import math
import random

import pytest

import pyctorch
from pyctorch import _tensor_str

NAN = float("nan")
INF = float("inf")


@pytest.fixture(autouse=True)
def _restore_printoptions():
    pyctorch.set_printoptions(profile="default")
    yield
    pyctorch.set_printoptions(profile="default")


def _reshape(flat, shape):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat[: shape[0]])
    step = len(flat) // shape[0] if shape[0] else 0
    return [_reshape(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# --------------------------------------------------------------------------
# hand-written expectations (no torch needed)
# --------------------------------------------------------------------------

HAND = [
    (lambda: pyctorch.tensor([1.0, 2.5]), "tensor([1.0000, 2.5000])"),
    (lambda: pyctorch.tensor([1.0, 2.0]), "tensor([1., 2.])"),
    (lambda: pyctorch.tensor(3.0), "tensor(3.)"),
    (lambda: pyctorch.tensor(2.5), "tensor(2.5000)"),
    (lambda: pyctorch.tensor(7), "tensor(7)"),
    (lambda: pyctorch.tensor([]), "tensor([])"),
    (lambda: pyctorch.tensor([[], []]), "tensor([], size=(2, 0))"),
    (lambda: pyctorch.tensor([], dtype=pyctorch.int32), "tensor([], dtype=torch.int32)"),
    (lambda: pyctorch.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: pyctorch.tensor([1, -20], dtype=pyctorch.int32), "tensor([  1, -20], dtype=torch.int32)"),
    (lambda: pyctorch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: pyctorch.tensor([1.0, 2.0], dtype=pyctorch.float64), "tensor([1., 2.], dtype=torch.float64)"),
    (lambda: pyctorch.tensor([0.1], dtype=pyctorch.float16), "tensor([0.1000], dtype=torch.float16)"),
    (lambda: pyctorch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: pyctorch.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: pyctorch.tensor([NAN, INF, 1.5]), "tensor([   nan,    inf, 1.5000])"),
    (lambda: pyctorch.tensor([0.0, NAN, -INF]), "tensor([0., nan, -inf])"),
    (lambda: pyctorch.tensor([-0.0]), "tensor([-0.])"),
    (lambda: pyctorch.tensor([-0.0, 1.5]), "tensor([-0.0000, 1.5000])"),
    (lambda: pyctorch.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: pyctorch.tensor([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    (
        lambda: pyctorch.tensor([[[1.5, 2.0]], [[3.0, -4.0]]]),
        "tensor([[[ 1.5000,  2.0000]],\n\n        [[ 3.0000, -4.0000]]])",
    ),
    (lambda: pyctorch.tensor(list(range(2000))), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (
        lambda: pyctorch.tensor([float(i) for i in range(12)]),
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.])",
    ),
    (
        lambda: pyctorch.tensor([i * 1.5 for i in range(12)]),
        "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "        12.0000, 13.5000, 15.0000, 16.5000])",
    ),
]


@pytest.mark.parametrize("make,expected", HAND, ids=[e for _, e in HAND])
def test_hand_written(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_precision_option():
    pyctorch.set_printoptions(precision=2)
    assert repr(pyctorch.tensor([1.12345])) == "tensor([1.12])"
    pyctorch.set_printoptions(profile="default")
    assert repr(pyctorch.tensor([1.12345])) == "tensor([1.1235])"


def test_threshold_option():
    pyctorch.set_printoptions(threshold=5)
    assert repr(pyctorch.tensor(list(range(10)))) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    pyctorch.set_printoptions(profile="default")
    assert repr(pyctorch.tensor(list(range(10)))) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_sci_mode_option():
    pyctorch.set_printoptions(sci_mode=True)
    assert repr(pyctorch.tensor([1.5, 2.0])) == "tensor([1.5000e+00, 2.0000e+00])"
    pyctorch.set_printoptions(sci_mode=False)
    assert repr(pyctorch.tensor([1e-5, 1.0])) == "tensor([0.0000, 1.0000])"


def test_edgeitems_zero_adds_size():
    pyctorch.set_printoptions(threshold=5, edgeitems=0)
    assert repr(pyctorch.tensor(list(range(10)))) == "tensor([...], size=(10,))"


def test_get_printoptions_and_context_manager():
    opts = _tensor_str.get_printoptions()
    assert opts == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    _tensor_str.set_printoptions(profile="short")
    assert _tensor_str.get_printoptions()["precision"] == 2
    assert _tensor_str.get_printoptions()["edgeitems"] == 2
    _tensor_str.set_printoptions(profile="full")
    assert _tensor_str.get_printoptions()["threshold"] == math.inf
    _tensor_str.set_printoptions(profile="default")
    with _tensor_str.printoptions(precision=1, sci_mode=True):
        assert repr(pyctorch.tensor([1.25])) == "tensor([1.2e+00])"
    assert _tensor_str.get_printoptions() == opts


# --------------------------------------------------------------------------
# duck-typed fake tensor: suffixes that need autograd / another device
# --------------------------------------------------------------------------


class _FakeDevice:
    def __init__(self, kind, index=None):
        self.type = kind
        self.index = index

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


class _FakeGradFn:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _FakeTensor:
    def __init__(self, data, shape, dtype, device=None, requires_grad=False, grad_fn=None):
        self._data = data
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device or _FakeDevice("cpu")
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.is_leaf = grad_fn is None

    def dim(self):
        return len(self.shape)

    def numel(self):
        return _count(self.shape)

    def tolist(self):
        return self._data

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            rows = self._data[idx]
            return _FakeTensor(rows, (len(rows),) + self.shape[1:], self.dtype, self.device)
        return _FakeTensor(self._data[idx], self.shape[1:], self.dtype, self.device)


def test_fake_grad_fn_suffix():
    t = _FakeTensor([2.0, 4.0], (2,), pyctorch.float32, requires_grad=True,
                    grad_fn=_FakeGradFn("MulBackward0"))
    assert _tensor_str.tensor_str_with_suffix(t, pyctorch) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


def test_fake_device_suffix():
    t = _FakeTensor([1.0, 2.0], (2,), pyctorch.float32, device=_FakeDevice("cuda", 0))
    assert _tensor_str.tensor_str_with_suffix(t, pyctorch) == "tensor([1., 2.], device='cuda:0')"
    t = _FakeTensor([], (0, 3), pyctorch.int32, device=_FakeDevice("cuda", 1), requires_grad=True)
    assert _tensor_str.tensor_str_with_suffix(t, pyctorch) == (
        "tensor([], device='cuda:1', size=(0, 3), dtype=torch.int32, requires_grad=True)"
    )


def test_fake_suffix_wraps_at_linewidth():
    data = [float(i) + 0.5 for i in range(8)]
    t = _FakeTensor(data, (8,), pyctorch.float64, requires_grad=True,
                    grad_fn=_FakeGradFn("AddBackward0"))
    assert _tensor_str.tensor_str_with_suffix(t, pyctorch) == (
        "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000],\n"
        "       dtype=torch.float64, grad_fn=<AddBackward0>)"
    )


# --------------------------------------------------------------------------
# oracle comparison against real torch
# --------------------------------------------------------------------------

_FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
_INT_RANGES = {
    "int64": (-10**12, 10**12),
    "int32": (-10**6, 10**6),
    "int16": (-30000, 30000),
    "int8": (-128, 127),
    "uint8": (0, 255),
}


def _float_values(rng, n, kind):
    out = []
    for _ in range(n):
        if kind == "mag":
            v = 10 ** rng.uniform(-6, 11) * rng.choice((1, -1))
        elif kind == "unit":
            v = rng.uniform(-1, 1)
        elif kind == "int":
            v = float(rng.randint(-1000, 1000))
        elif kind == "special":
            v = rng.choice((0.0, -0.0, NAN, INF, -INF, 1.5, -2.0, 3.0, 1e-7, 1e9))
        elif kind == "small":
            v = rng.uniform(-1e-3, 1e-3)
        else:  # narrow band
            v = rng.uniform(100, 120)
        out.append(v)
    return out


def _oracle_cases():
    rng = random.Random(20240613)
    cases = []
    shapes = [(), (1,), (6,), (13,), (2, 3), (3, 1, 4), (2, 2, 2, 3), (4, 25), (1001,), (7, 150)]
    for shape in shapes:
        n = _count(shape)
        for kind in ("mag", "unit", "int", "special", "small", "narrow"):
            for dt in _FLOAT_DTYPES:
                if kind in ("small", "narrow") and dt in ("float16", "bfloat16"):
                    continue
                cases.append((_reshape(_float_values(rng, n, kind), shape), dt, {}, False))
        for dt, (lo, hi) in _INT_RANGES.items():
            cases.append((_reshape([rng.randint(lo, hi) for _ in range(n)], shape), dt, {}, False))
        cases.append((_reshape([rng.random() > 0.5 for _ in range(n)], shape), "bool", {}, False))
    options = [
        {"precision": 2},
        {"sci_mode": True},
        {"sci_mode": False},
        {"profile": "full"},
        {"profile": "short"},
        {"linewidth": 40},
        {"threshold": 5},
        {"edgeitems": 2, "threshold": 5},
        {"threshold": 5, "edgeitems": 0},
    ]
    for opts in options:
        for kind in ("mag", "unit", "int", "special"):
            for shape in ((17,), (3, 9), (2, 3, 5)):
                data = _reshape(_float_values(rng, _count(shape), kind), shape)
                cases.append((data, "float32", opts, False))
        cases.append((_reshape([rng.randint(-999, 999) for _ in range(40)], (4, 10)), "int64", opts, False))
    # autograd leaves, wrapping with suffixes
    for n in (3, 8, 11, 16):
        cases.append(([i * 1.5 for i in range(n)], "float32", {}, True))
        cases.append(([i * 1.5 for i in range(n)], "float64", {}, True))
        cases.append(([i * 1.5 for i in range(n)], "float16", {}, True))
    cases.append((2.0, "float32", {}, True))
    cases.append(([[0.25, -1e-6], [3e4, 5.0]], "float64", {}, True))
    # empties
    for data in ([], [[]], [[], [], []]):
        for dt in ("float32", "float64", "int64", "int32", "bool", "float16"):
            cases.append((data, dt, {}, False))
    return cases


_ORACLE = _oracle_cases()


def _group_key(case):
    data, dt, opts, rg = case
    if opts:
        return "opts"
    if rg:
        return "requires_grad"
    return dt


_GROUPS = {}
for _case in _ORACLE:
    _GROUPS.setdefault(_group_key(_case), []).append(_case)


@pytest.mark.parametrize("group", sorted(_GROUPS))
def test_matches_torch(group):
    torch = pytest.importorskip("torch")
    mismatches = []
    for data, dt, opts, rg in _GROUPS[group]:
        pyctorch.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        try:
            kw = {"requires_grad": True} if rg else {}
            expected = repr(torch.tensor(data, dtype=getattr(torch, dt), **kw))
            got = repr(pyctorch.tensor(data, dtype=getattr(pyctorch, dt), **kw))
        finally:
            torch.set_printoptions(profile="default")
            pyctorch.set_printoptions(profile="default")
        if got != expected:
            mismatches.append("dtype=%s opts=%r\nexpected:\n%s\ngot:\n%s" % (dt, opts, expected, got))
    assert not mismatches, "%d of %d differ; first ones:\n\n%s" % (
        len(mismatches), len(_GROUPS[group]), "\n\n".join(mismatches[:3]))
