"""Joining and shape ops (cat, stack, hstack/vstack/dstack, flip, roll, repeat, tile,
repeat_interleave, tril/triu, diag, diag_embed) against torch.

Oracle tests build the same inputs in pyctorch and torch from numpy arrays, run the same code
on both (`lib` is the module) and compare values, dtypes and shapes, or the exception type
when torch raises. A few hand-checked asserts run without torch.
"""

import numpy as np
import pytest

import pyctorch as pt

from oracle_helpers import DTYPES, assert_same, same, torch  # noqa: F401  (torch: a fixture)

rng = np.random.default_rng(1)


def arr(*shape, lo=-5, hi=10):
    return rng.integers(lo, hi, size=shape).astype(np.float32)


def T(lib, a, dtype=None):
    return lib.tensor(a, dtype=getattr(lib, dtype) if dtype else None)


# ---------------------------------------------------------------------------------------
# hand-checked (always run)
# ---------------------------------------------------------------------------------------

def test_by_hand():
    a = pt.tensor([[1, 2], [3, 4]])
    assert pt.cat([a, a], 1).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert pt.cat([a, pt.tensor([[5.5, 6.0]])]).dtype == pt.float32
    assert pt.cat([pt.tensor([]), a]).tolist() == [[1.0, 2.0], [3.0, 4.0]]  # legacy empty skipped, dtype promoted
    assert pt.stack([a, a], -1).shape == (2, 2, 2)
    assert pt.hstack([pt.tensor([1]), pt.tensor([2, 3])]).tolist() == [1, 2, 3]
    assert pt.vstack([pt.tensor([1, 2]), pt.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]
    assert pt.dstack([pt.tensor(1), pt.tensor(2)]).shape == (1, 1, 2)
    assert a.flip(0).tolist() == [[3, 4], [1, 2]] and a.fliplr().tolist() == [[2, 1], [4, 3]]
    assert pt.roll(pt.arange(5), 2).tolist() == [3, 4, 0, 1, 2]
    assert pt.roll(a, (1, -1), (0, 1)).tolist() == [[4, 3], [2, 1]]
    assert pt.tensor([1, 2]).repeat(2, 2).tolist() == [[1, 2, 1, 2], [1, 2, 1, 2]]
    assert pt.tile(pt.tensor([1, 2]), (2,)).tolist() == [1, 2, 1, 2]
    assert pt.repeat_interleave(pt.tensor([1, 2]), 2).tolist() == [1, 1, 2, 2]
    assert pt.repeat_interleave(pt.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert pt.ones(3, 3).tril(-1).tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    assert pt.ones(2, 3).triu(1).tolist() == [[0, 1, 1], [0, 0, 1]]
    assert pt.diag(pt.tensor([1, 2]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert pt.diag(pt.arange(9).reshape(3, 3), -1).tolist() == [3, 7]
    assert pt.diag_embed(pt.tensor([[1, 2]])).tolist() == [[[1, 0], [0, 2]]]
    assert pt.cat([a, a])._version == 0


def test_errors_by_hand():
    a = pt.ones(2, 3)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        pt.cat([a, pt.ones(3, 3)], 1)
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        pt.cat([a, pt.tensor(1.0)])
    with pytest.raises(ValueError, match="expected a non-empty list"):
        pt.cat([])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        pt.stack([pt.ones(2), pt.ones(3)])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        a.flip(0, 0)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        pt.roll(a, (1, 2), (0,))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        pt.tril(pt.ones(3))


# ---------------------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("da", DTYPES)
def test_cat_promotion(torch, da):
    a = arr(2, 3, lo=0, hi=3)
    for db in ["bool", "uint8", "int8", "int32", "float16", "bfloat16", "float64"]:
        same(torch, lambda L: L.cat([T(L, a, da), T(L, a[:1], db)]))
        same(torch, lambda L: L.stack([T(L, a, da), T(L, a, db)], 1))


CAT_CASES = [
    lambda L, a, b: L.cat([a, b], 0),
    lambda L, a, b: L.cat([a, b.t().t()], -2),
    lambda L, a, b: L.cat([a.t(), a.t()], 1),
    lambda L, a, b: L.cat([a[:, ::2], a[:, 1::2]], 1),
    lambda L, a, b: L.cat([a, a, a, a], dim=1),
    lambda L, a, b: L.cat((a,)),
    lambda L, a, b: L.cat([a[:0], a[:0]]),
    lambda L, a, b: L.cat([a[:, :0], a], 1),
    lambda L, a, b: L.cat([a[:0], a], 1),  # size mismatch in dim 0
    lambda L, a, b: L.cat([L.tensor([]), a, L.tensor([], dtype=L.float64)], 1),
    lambda L, a, b: L.cat([L.tensor([]), L.tensor([])]),
    lambda L, a, b: L.cat([a, b], 2),
    lambda L, a, b: L.cat([a, b], -3),
    lambda L, a, b: L.cat([a, b[0]]),
    lambda L, a, b: L.cat([a, b[0, 0]]),
    lambda L, a, b: L.cat([a, b], 1),
    lambda L, a, b: L.cat([]),
    lambda L, a, b: L.concat([a, b]),
    lambda L, a, b: L.concatenate([a, b]),
    lambda L, a, b: L.concatenate([a, a], axis=1),
    lambda L, a, b: L.stack([a, a]),
    lambda L, a, b: L.stack([a, a.t().t()], 2),
    lambda L, a, b: L.stack([a, a], -1),
    lambda L, a, b: L.stack([a, a], 3),
    lambda L, a, b: L.stack([a, b]),
    lambda L, a, b: L.stack([a[0, 0], b[0, 0]]),
    lambda L, a, b: L.stack([a[:0], a[:0]], 1),
    lambda L, a, b: L.stack([]),
    lambda L, a, b: L.stack((a,), 0),
]


@pytest.mark.parametrize("case", range(len(CAT_CASES)))
def test_cat_stack(torch, case):
    a, b = arr(3, 4), arr(2, 4)
    same(torch, lambda L: CAT_CASES[case](L, T(L, a), T(L, b)))


def test_cat_out(torch):
    a = arr(2, 3)

    def f(L):
        o = L.empty(0)
        r = L.cat([T(L, a), T(L, a)], out=o)
        o2 = L.empty(4, 3, dtype=L.float64)
        L.cat([T(L, a, "int32"), T(L, a)], out=o2)
        o3 = L.empty(2, 2, 3)
        L.stack([T(L, a), T(L, a)], out=o3)
        return r is o, o, o._version, o2, o2._version, o3

    same(torch, f)
    same(torch, lambda L: L.cat([T(L, a)], out=L.empty(0, dtype=L.int64)))
    same(torch, lambda L: L.cat([T(L, a, "int64")], out=L.empty(0, dtype=L.bool)))


def test_cat_many_and_large(torch):
    parts = [arr(k % 3, 5) for k in range(40)]
    same(torch, lambda L: L.cat([T(L, p) for p in parts]))
    big = arr(300, 200)
    same(torch, lambda L: L.cat([T(L, big), T(L, big).t()[:200, :200].t()], 0))
    same(torch, lambda L: L.stack([T(L, big)] * 3, 1))


XSTACK = [
    lambda L, x: L.hstack([x, x]),
    lambda L, x: L.vstack([x, x]),
    lambda L, x: L.dstack([x, x]),
]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 2), (0,), (2, 0)])
@pytest.mark.parametrize("which", range(3))
def test_xstack(torch, shape, which):
    a = arr(*shape)
    same(torch, lambda L: XSTACK[which](L, T(L, a)))


def test_xstack_mixed(torch):
    a32, a23, a234, a21, a3 = arr(3, 2), arr(2, 3), arr(2, 3, 4), arr(2, 1), arr(3)
    same(torch, lambda L: L.hstack([T(L, np.array(1.0)), T(L, np.array([2, 3]))]))
    same(torch, lambda L: L.vstack([T(L, np.array([1.0, 2])), T(L, a32)]))
    same(torch, lambda L: L.vstack([T(L, np.array(1.0)), T(L, np.array([2, 3]))]))
    same(torch, lambda L: L.dstack([T(L, a23), T(L, a234)]))
    same(torch, lambda L: L.hstack([T(L, a23), T(L, a21, "int64")]))
    same(torch, lambda L: L.hstack([]))
    same(torch, lambda L: L.vstack([]))
    same(torch, lambda L: L.dstack([]))
    same(torch, lambda L: L.hstack([T(L, a23), T(L, a3)]))

    def f(L):
        o = L.empty(0)
        L.vstack([T(L, np.array([1.0, 2])), T(L, np.array([3.0, 4]))], out=o)
        return o

    same(torch, f)


# ---------------------------------------------------------------------------------------
# flip, roll
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_dtypes(torch, dtype):
    a = arr(3, 4, 5, lo=0, hi=3)
    same(torch, lambda L: T(L, a, dtype).flip(0))
    same(torch, lambda L: T(L, a, dtype).flip((0, 2)))
    same(torch, lambda L: L.flip(T(L, a, dtype).permute(2, 0, 1), [-1, 1]))
    same(torch, lambda L: T(L, a, dtype).fliplr())
    same(torch, lambda L: L.flipud(T(L, a, dtype)[:, ::2]))


FLIP_CASES = [
    lambda L, x: x.flip([]),
    lambda L, x: x.flip(0, 1, 2),
    lambda L, x: x.flip(-3),
    lambda L, x: x.flip(3),
    lambda L, x: x.flip(1, -2),
    lambda L, x: x[0, 0, 0].flip(0),
    lambda L, x: x[0, 0, 0].flip([]),
    lambda L, x: x[:0].flip(0, 2),
    lambda L, x: x[0, 0, 0].fliplr(),
    lambda L, x: x[0, 0].fliplr(),
    lambda L, x: x[0, 0, 0].flipud(),
    lambda L, x: x.t().flip(1) if x.ndim == 2 else x.transpose(0, 2).flip(1),
]


@pytest.mark.parametrize("case", range(len(FLIP_CASES)))
def test_flip_cases(torch, case):
    a = arr(3, 4, 5)
    same(torch, lambda L: FLIP_CASES[case](L, T(L, a)))


ROLL_CASES = [
    lambda L, x: L.roll(x, 1),
    lambda L, x: L.roll(x, -7),
    lambda L, x: L.roll(x, 100),
    lambda L, x: L.roll(x, 2, 0),
    lambda L, x: L.roll(x, -1, -1),
    lambda L, x: L.roll(x, (1, 2), (0, 1)),
    lambda L, x: L.roll(x, (1, 2, 3), (0, 1, 2)),
    lambda L, x: L.roll(x, (1, 1), (1, 1)),
    lambda L, x: L.roll(x, (1, -1), (1, 1)),
    lambda L, x: L.roll(x, 3, 1),  # full turn
    lambda L, x: L.roll(x.permute(2, 1, 0), (2, 1), (0, 2)),
    lambda L, x: L.roll(x[:, ::2], 1),
    lambda L, x: L.roll(x[:0], 1),
    lambda L, x: L.roll(x[:0], 1, 0),
    lambda L, x: L.roll(x[0, 0, 0], 1),
    lambda L, x: L.roll(x[0, 0, 0], 1, 0),
    lambda L, x: L.roll(x, (1, 2), (0,)),
    lambda L, x: L.roll(x, (1, 2)),
    lambda L, x: L.roll(x, 1, 3),
    lambda L, x: x.roll(1, 0),
]


@pytest.mark.parametrize("case", range(len(ROLL_CASES)))
def test_roll(torch, case):
    a = arr(4, 3, 5)
    same(torch, lambda L: ROLL_CASES[case](L, T(L, a)))


def test_roll_dtypes_and_many_dims(torch):
    for dt in DTYPES:
        a = arr(3, 4, lo=0, hi=3)
        same(torch, lambda L: L.roll(T(L, a, dt), (1, 3), (0, 1)))
    a = arr(*([2] * 11))
    same(torch, lambda L: L.roll(T(L, a), tuple(range(1, 12)), tuple(range(11))))
    big = arr(500, 300)
    same(torch, lambda L: L.roll(T(L, big), (77, -5), (0, 1)))


# ---------------------------------------------------------------------------------------
# repeat, tile, repeat_interleave
# ---------------------------------------------------------------------------------------

REPEAT_CASES = [
    lambda L, x: x.repeat(1, 1),
    lambda L, x: x.repeat(2, 3),
    lambda L, x: x.repeat(2, 1, 1),
    lambda L, x: x.repeat((3, 2, 1, 2)),
    lambda L, x: x.repeat(0, 2),
    lambda L, x: x.t().repeat(2, 2),
    lambda L, x: x[:, ::2].repeat(2, 1),
    lambda L, x: x[:1].repeat(4, 1),
    lambda L, x: x.repeat(2),
    lambda L, x: x.repeat(-1, 2),
    lambda L, x: x[0, 0].repeat(3),
    lambda L, x: x[0, 0].repeat([]),
    lambda L, x: x[:0].repeat(2, 2),
    lambda L, x: x.tile((2,)),
    lambda L, x: x.tile((2, 1, 2)),
    lambda L, x: L.tile(x, (1, 1)),
    lambda L, x: L.tile(x.t(), (0,)),
    lambda L, x: L.tile(x[0, 0], (2, 2)),
    lambda L, x: L.tile(x, ()),
    lambda L, x: L.tile(x, (-1,)),
]


@pytest.mark.parametrize("case", range(len(REPEAT_CASES)))
def test_repeat_tile(torch, case):
    a = arr(3, 4)
    same(torch, lambda L: REPEAT_CASES[case](L, T(L, a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_dtypes(torch, dtype):
    a = arr(2, 3, lo=0, hi=3)
    same(torch, lambda L: T(L, a, dtype).repeat(2, 1, 2))
    same(torch, lambda L: T(L, a, dtype).repeat_interleave(2, dim=1))


RI_CASES = [
    lambda L, x: L.repeat_interleave(x, 2),
    lambda L, x: L.repeat_interleave(x, 2, dim=0),
    lambda L, x: L.repeat_interleave(x, 3, -1),
    lambda L, x: x.repeat_interleave(0, 1),
    lambda L, x: x.t().repeat_interleave(T(L, np.array([1, 0, 2, 1])), dim=0),
    lambda L, x: x.repeat_interleave(T(L, np.array([2])), dim=1),
    lambda L, x: x.repeat_interleave(T(L, np.array(2)), dim=1),
    lambda L, x: x.repeat_interleave(T(L, np.array([1, 2, 3], dtype=np.int32)), dim=0),
    lambda L, x: x.repeat_interleave(T(L, np.arange(12))),
    lambda L, x: x.repeat_interleave(T(L, np.array([1, 2])), dim=0),
    lambda L, x: x.repeat_interleave(T(L, np.array([1, -2, 1])), dim=0),
    lambda L, x: x.repeat_interleave(T(L, np.array([[1, 2, 1]])), dim=0),
    lambda L, x: x.repeat_interleave(T(L, np.array([1.0, 2, 1])), dim=0),
    lambda L, x: x.repeat_interleave(-1),
    lambda L, x: x.repeat_interleave(2, dim=2),
    lambda L, x: L.repeat_interleave(x, 2, dim=1, output_size=8),
    lambda L, x: L.repeat_interleave(x, 2, dim=1, output_size=7),
    lambda L, x: L.repeat_interleave(x[0, 0], 3),
    lambda L, x: L.repeat_interleave(x[:0], 3, 0),
    lambda L, x: L.repeat_interleave(T(L, np.array([2, 0, 3]))),
    lambda L, x: L.repeat_interleave(T(L, np.array([2, 0, 3], dtype=np.int32)), output_size=5),
    lambda L, x: L.repeat_interleave(T(L, np.array([2, 0, 3])), output_size=4),
    lambda L, x: L.repeat_interleave(T(L, np.array([[2, 0, 3]]))),
    lambda L, x: L.repeat_interleave(T(L, np.zeros(0, dtype=np.int64))),
]


@pytest.mark.parametrize("case", range(len(RI_CASES)))
def test_repeat_interleave(torch, case):
    a = arr(3, 4)
    same(torch, lambda L: RI_CASES[case](L, T(L, a)))


# ---------------------------------------------------------------------------------------
# tril / triu / diag / diag_embed
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [-5, -2, -1, 0, 1, 3, 7])
def test_tril_triu(torch, k):
    a = arr(2, 4, 5)

    def f(L):
        x = T(L, a)
        r = [L.tril(x, k), L.triu(x, k), x.transpose(1, 2).tril(k), x[:, ::2].triu(k), x[0].tril(diagonal=k)]
        y = T(L, a).transpose(1, 2)
        y.tril_(k)
        z = T(L, a)[:, :, 1:]
        z.triu_(k)
        o = L.empty(0)
        L.triu(x, k, out=o)
        return r, y, z, o, y._version, o._version

    same(torch, f)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu_dtypes(torch, dtype):
    a = arr(3, 4, lo=1, hi=3)
    same(torch, lambda L: T(L, a, dtype).tril())
    same(torch, lambda L: T(L, a, dtype).triu(1))
    same(torch, lambda L: L.diag(T(L, a, dtype), -1))
    same(torch, lambda L: L.diag(T(L, a[0], dtype), 1))
    same(torch, lambda L: L.diag_embed(T(L, a, dtype), 1))


def test_tri_edge(torch):
    same(torch, lambda L: L.tril(T(L, np.ones(3))))
    same(torch, lambda L: L.triu(T(L, np.array(1.0))))
    same(torch, lambda L: L.tril(T(L, np.ones((0, 3)))))
    same(torch, lambda L: L.triu(T(L, np.ones((2, 0, 3))), 1))
    big = arr(3, 200, 150)
    same(torch, lambda L: L.tril(T(L, big), 3))
    same(torch, lambda L: T(L, big).transpose(1, 2).triu_(-2))


DIAG_CASES = [
    lambda L, x: L.diag(x),
    lambda L, x: L.diag(x, 1),
    lambda L, x: L.diag(x, -2),
    lambda L, x: L.diag(x, 10),
    lambda L, x: L.diag(x, -10),
    lambda L, x: L.diag(x.t(), 1),
    lambda L, x: L.diag(x[0]),
    lambda L, x: L.diag(x[0], 2),
    lambda L, x: L.diag(x[0, ::2], -3),
    lambda L, x: L.diag(x[0, :0]),
    lambda L, x: L.diag(x[0, 0]),
    lambda L, x: L.diag(x[None]),
    lambda L, x: x.diag(-1),
    lambda L, x: L.diag_embed(x),
    lambda L, x: L.diag_embed(x, 1),
    lambda L, x: L.diag_embed(x, -2, 0, 2),
    lambda L, x: L.diag_embed(x, 0, 2, 0),
    lambda L, x: L.diag_embed(x, 1, -1, 1),
    lambda L, x: L.diag_embed(x.t(), 0, 1, 0),
    lambda L, x: L.diag_embed(x[0]),
    lambda L, x: L.diag_embed(x[0, 0]),
    lambda L, x: L.diag_embed(x, 0, 0, 0),
    lambda L, x: L.diag_embed(x, 0, 0, 3),
    lambda L, x: x.diag_embed(),
]


@pytest.mark.parametrize("case", range(len(DIAG_CASES)))
def test_diag(torch, case):
    a = arr(3, 4)
    same(torch, lambda L: DIAG_CASES[case](L, T(L, a)))


def test_diag_out(torch):
    a = arr(3, 4)

    def f(L):
        o = L.empty(0)
        L.diag(T(L, a), 1, out=o)
        o2 = L.empty(0)
        L.diag(T(L, a[0]), out=o2)
        return o, o2, o._version

    same(torch, f)


def test_edge_cases_from_fuzzing(torch):
    same(torch, lambda L: L.roll(T(L, np.zeros((3, 0, 2), np.float32)), 1, 5))  # empty: dims not checked
    same(torch, lambda L: L.cat([L.tensor([]), L.tensor([])], 5))  # all legacy-empty: dim not checked
    same(torch, lambda L: T(L, np.array(3.0)).repeat_interleave(2, 0))
    same(torch, lambda L: T(L, np.array(3.0)).repeat_interleave(T(L, np.array([2])), 0))
