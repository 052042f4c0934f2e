"""Advanced indexing (x[idx], x[idx] = v) and the index op family, against torch.

Every oracle test builds the same inputs in pyctorch and torch from numpy arrays, runs the
same code on both (the `lib` argument is the module) and compares values, dtypes and shapes,
or the exception type when torch raises. A few hand-checked asserts run without torch.
"""

import numpy as np
import pytest

import pyctorch as pt

from oracle_helpers import DTYPES, assert_same, same, torch  # noqa: F401  (torch: a fixture)

rng = np.random.default_rng(0)


def arr(*shape, lo=-5, hi=10):
    return rng.integers(lo, hi, size=shape).astype(np.float32)


def T(lib, a, dtype=None):
    return lib.tensor(a, dtype=getattr(lib, dtype) if dtype else None)


# ---------------------------------------------------------------------------------------
# hand-checked (always run)
# ---------------------------------------------------------------------------------------

def test_getitem_values_by_hand():
    x = pt.arange(12).reshape(3, 4)
    assert x[pt.tensor([2, 0])].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert x[[0, 2], [1, 3]].tolist() == [1, 11]
    assert x[x > 8].tolist() == [9, 10, 11]
    assert x[:, [-1, 0]].tolist() == [[3, 0], [7, 4], [11, 8]]
    assert x[[[0], [2]], [1, 3]].tolist() == [[1, 3], [9, 11]]
    assert x[True].shape == (1, 3, 4) and x[False].shape == (0, 3, 4)
    assert x[[]].shape == (0, 4)
    y = pt.arange(120).reshape(2, 3, 4, 5)
    assert y[:, [0, 1], :, [1, 2]].shape == (2, 2, 4)  # separated: index dims first
    assert y[:, [0, 1], [1, 2]].shape == (2, 2, 5)  # adjacent: in place
    assert y[..., [0, 1]].shape == (2, 3, 4, 2)
    assert y[None, 1, [0, 2]].shape == (1, 2, 4, 5)


def test_setitem_by_hand():
    x = pt.zeros(3, 4)
    x[x == 0] = 1.0
    assert x.tolist() == [[1.0] * 4] * 3
    x[[0, 2], [1, 3]] = pt.tensor([5.0, 6.0])
    assert x[0, 1].item() == 5.0 and x[2, 3].item() == 6.0
    x[:, [0]] = pt.tensor([[7.0], [8.0], [9.0]])
    assert x[:, 0].tolist() == [7.0, 8.0, 9.0]
    v = x._version
    x[[1]] = 0.0
    assert x._version == v + 1 and x[1].tolist() == [0.0] * 4
    a = pt.zeros(5, dtype=pt.int64)
    a.index_put_((pt.tensor([1, 1, 3]),), pt.tensor([1, 2, 3]), accumulate=True)
    assert a.tolist() == [0, 3, 0, 3, 0]


def test_errors_by_hand():
    x = pt.arange(6).reshape(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[pt.tensor([5])]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 0 with size 3"):
        x[:, pt.tensor([-4])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[pt.tensor([0.0])]
    with pytest.raises(IndexError, match="The shape of the mask"):
        x[pt.tensor([True, False, True])]
    with pytest.raises(IndexError, match="shape mismatch"):
        x[pt.tensor([0, 1]), pt.tensor([0, 1, 2])]
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor"):
        x[[0, 1]] = pt.ones(2, 2, dtype=pt.int64)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x[pt.tensor([0])] = pt.ones(1)


def test_ops_by_hand():
    x = pt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.gather(1, pt.tensor([[2, 0], [1, 1]])).tolist() == [[3.0, 1.0], [5.0, 5.0]]
    assert x.index_select(1, pt.tensor([2, 0])).tolist() == [[3.0, 1.0], [6.0, 4.0]]
    assert pt.zeros(2, 3).scatter_add(1, pt.tensor([[0, 0, 2]]), pt.ones(1, 3)).tolist() == [[2.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    assert x.masked_select(x > 2).tolist() == [3.0, 4.0, 5.0, 6.0]
    assert x.take(pt.tensor([0, -1])).tolist() == [1.0, 6.0]
    assert pt.nonzero(pt.tensor([0, 3, 0, 4])).tolist() == [[1], [3]]
    assert [t.tolist() for t in pt.where(pt.tensor([[0, 1], [1, 0]]))] == [[0, 1], [1, 0]]
    assert pt.zeros(3).index_fill(0, pt.tensor([-1]), 2.0).tolist() == [0.0, 0.0, 2.0]
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, pt.tensor([[3]]))


# ---------------------------------------------------------------------------------------
# advanced indexing against torch: the cases of NumPy's indexing guide and more
# ---------------------------------------------------------------------------------------

GET_CASES = [
    # integer array indexing
    lambda L, x: x[T(L, np.array([3, 3, 1, 4]))],
    lambda L, x: x[[3, 3, -3, 4]],
    lambda L, x: x[[[1, 2], [3, 4]]],
    lambda L, x: x[[0, 2, 4], [0, 1, 2]],
    lambda L, x: x[[0, 2, 4], 1],
    lambda L, x: x[[0, 2, 4]],
    lambda L, x: x[[0, 2, 4], [0, 1]],  # cannot broadcast
    lambda L, x: x[[[0], [2]], [1, 3]],  # ix_-like
    lambda L, x: x[[0, 2], 1:3],
    lambda L, x: x[1:4:2, [0, -1]],
    lambda L, x: x[..., [0, 1]],
    lambda L, x: x[None, [1, 2]],
    lambda L, x: x[[1, 2], None],
    lambda L, x: x[:, None, [1, 2]],
    lambda L, x: x[T(L, np.array([1, 2], dtype=np.int32))],
    lambda L, x: x[T(L, np.array([[0, 1], [2, 3]])).t()],
    lambda L, x: x[T(L, np.zeros((0,), dtype=np.int64))],
    lambda L, x: x[T(L, np.zeros((2, 0), dtype=np.int64))],
    lambda L, x: x[[]],
    lambda L, x: x[:, []],
    lambda L, x: x[[5]],  # out of range
    lambda L, x: x[[-6]],
    lambda L, x: x[:, [7]],
    # boolean masks
    lambda L, x: x[x > 3],
    lambda L, x: x[(x > 3)[:, 2]],
    lambda L, x: x[:, (x > 3)[0]],
    lambda L, x: x[[True, False, True, False, True]],
    lambda L, x: x[(x > 100)],
    lambda L, x: x[x.t() > 3],  # mask shape mismatch
    lambda L, x: x[T(L, np.array([1, 0, 1, 0, 1], dtype=np.uint8))],
    lambda L, x: x[True],
    lambda L, x: x[False],
    lambda L, x: x[True, [0, 1]],
    lambda L, x: x[False, [0]],
    lambda L, x: x[..., True],
    lambda L, x: x[None, True, 1],
    lambda L, x: x[T(L, np.array(True))],
    lambda L, x: x[(x > 3)[:, 0], [0]],
    lambda L, x: x[(x > 3)[:, 0], 1:],
    # errors
    lambda L, x: x[T(L, np.array([0.0]))],
    lambda L, x: x[T(L, np.array([0], dtype=np.int16))],
    lambda L, x: x[[0], [0], [0]],
]


@pytest.mark.parametrize("case", range(len(GET_CASES)))
def test_getitem_2d(torch, case):
    a = arr(5, 7)
    same(torch, lambda L: GET_CASES[case](L, T(L, a)))


@pytest.mark.parametrize("case", range(len(GET_CASES)))
def test_getitem_2d_noncontiguous(torch, case):
    a = arr(7, 10)
    same(torch, lambda L: GET_CASES[case](L, T(L, a)[1:, ::2].t().t()))


GET4 = [
    lambda L, x: x[:, [0, 1], :, [1, 2]],
    lambda L, x: x[[0, 1], :, [1, 2]],
    lambda L, x: x[:, [[0], [2]], [0, 2]],
    lambda L, x: x[1, :, [0, 1], [2, 3]],
    lambda L, x: x[:, 1, :, [2, 3]],
    lambda L, x: x[..., [1, 0], 2],
    lambda L, x: x[[1], ..., [4]],
    lambda L, x: x[None, :, [2], None, [1], ...],
    lambda L, x: x[x > 50],
    lambda L, x: x[(x > 50)[0]],
    lambda L, x: x[:, (x > 50)[0, 0]],
    lambda L, x: x[(x > 50)[:, :, 0, 0], 1:3],
    lambda L, x: x[[1, 0], (x > 50)[0, :, 0, 0]],
    lambda L, x: x[(x > 50)[:, 0, 0, 0], :, :, [0]],
    lambda L, x: x[:, :, :, :, None][[0, 1], 0, [1, 2]],
    lambda L, x: x[T(L, np.array([[1, 0]])), T(L, np.array([[0], [1], [2]]))],
    lambda L, x: x[T(L, np.array(1)), :, T(L, np.array([0, 3]))],
    lambda L, x: x.permute(3, 1, 0, 2)[[0, 4], :, 1],
]


@pytest.mark.parametrize("case", range(len(GET4)))
def test_getitem_4d(torch, case):
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    same(torch, lambda L: GET4[case](L, T(L, a)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_dtypes(torch, dtype):
    a = arr(4, 6, lo=-3, hi=4)
    same(torch, lambda L: T(L, a, dtype)[[0, 3, 3], [1, -1, 0]])
    same(torch, lambda L: T(L, a, dtype)[T(L, a) > 0])
    same(torch, lambda L: T(L, a, dtype).t()[[1, 2]])


def test_getitem_0d(torch):
    same(torch, lambda L: T(L, np.array(5.0))[True])
    same(torch, lambda L: T(L, np.array(5.0))[False])
    same(torch, lambda L: T(L, np.array(5.0))[None, True])
    same(torch, lambda L: T(L, np.array(5.0))[T(L, np.array([0]))])
    same(torch, lambda L: T(L, np.array([5.0, 6.0]))[T(L, np.array(1))])
    same(torch, lambda L: T(L, np.array([5.0, 6.0]))[T(L, np.array(1, dtype=np.uint8))])
    same(torch, lambda L: T(L, np.array([5.0, 6.0]))[T(L, np.array(0, dtype=np.uint8))])


def test_getitem_large_parallel(torch):
    a = arr(400, 500)
    idx = rng.integers(-400, 400, size=(300, 20))
    same(torch, lambda L: T(L, a)[T(L, a) > 2])
    same(torch, lambda L: T(L, a)[T(L, idx)])
    same(torch, lambda L: T(L, a)[:, T(L, idx % 500)])
    same(torch, lambda L: T(L, a).t()[T(L, idx % 500), 3])


def test_result_is_a_copy(torch):
    x = pt.arange(6.0)
    y = x[[0, 1]]
    y[0] = 100.0
    assert x[0].item() == 0.0
    assert y._version == 1 and x[[0]]._version == 0


# ---------------------------------------------------------------------------------------
# setitem / index_put_
# ---------------------------------------------------------------------------------------

SET_CASES = [
    (lambda L, x: x.__setitem__([0, 2], 1.5)),
    (lambda L, x: x.__setitem__((x > 2), 0.0)),
    (lambda L, x: x.__setitem__((x > 2), T(L, np.array(7)))),  # masked_fill path converts
    (lambda L, x: x.__setitem__((x > 2), T(L, np.array([7.0])))),
    (lambda L, x: x.__setitem__((x > 2), T(L, np.array([[7.0]])))),
    (lambda L, x: x.__setitem__((x > 100), T(L, np.array([7.0])))),
    (lambda L, x: x.__setitem__(((x > 2)[:, 0],), T(L, np.arange(6, dtype=np.float32)))),
    (lambda L, x: x.__setitem__(([0, 2], [1, 3]), T(L, np.array([9.0, 8.0])))),
    (lambda L, x: x.__setitem__(([0, 2], slice(None)), T(L, np.arange(6, dtype=np.float32)))),
    (lambda L, x: x.__setitem__(([0, 2], slice(None)), T(L, np.ones((1, 1, 6), dtype=np.float32)))),
    (lambda L, x: x.__setitem__((slice(None), [1, 0]), T(L, np.ones((4, 1), dtype=np.float32)))),
    (lambda L, x: x.__setitem__((slice(None), [1, 0]), T(L, np.ones((3, 2), dtype=np.float32)))),  # shape mismatch
    (lambda L, x: x.__setitem__([0], T(L, np.ones((1,), dtype=np.int64)))),  # dtype mismatch
    (lambda L, x: x.__setitem__([0], T(L, np.array(3, dtype=np.int64)))),
    (lambda L, x: x.__setitem__([[0], [3]], T(L, np.array([[1.0], [2.0]])))),
    (lambda L, x: x.__setitem__([9], 1.0)),
    (lambda L, x: x.__setitem__((Ellipsis, [-1]), 2.0)),
    (lambda L, x: x.__setitem__((None, [1], [2]), 2.0)),
    (lambda L, x: x.__setitem__([], 2.0)),
    (lambda L, x: x.__setitem__((x > 2), T(L, -np.arange(24, dtype=np.float32))[: len(x[x > 2])])),
    (lambda L, x: x.__setitem__(0, T(L, np.ones((1, 6), dtype=np.float32)))),
    (lambda L, x: x.__setitem__(slice(0, 2), T(L, np.ones((1, 1, 6), dtype=np.float32)))),
    (lambda L, x: x.__setitem__(True, 3.0)),
    (lambda L, x: x.__setitem__(False, 3.0)),
    (lambda L, x: x.t().__setitem__([1, 2], -1.0)),
    (lambda L, x: x.__setitem__([1, 1, 1], T(L, np.array([1.0, 2.0, 3.0]))[:, None] + x[[1]] * 0)),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_setitem(torch, case):
    a = arr(4, 6)

    def f(L):
        x = T(L, a)
        SET_CASES[case](L, x)
        return x, x._version

    same(torch, f)


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_dtypes(torch, dtype):
    a = arr(4, 6, lo=-3, hi=4)

    def f(L):
        x = T(L, a, dtype)
        x[[0, 2], [1, 3]] = T(L, np.array([1, 0]), dtype)
        x[T(L, a) > 2] = 1
        x.t()[[5]] = T(L, np.array(0), dtype)
        return x

    same(torch, f)


def test_setitem_augmented(torch):
    def f(L):
        x = T(L, np.zeros(8, dtype=np.float32))
        x[[1, 1, 3, 1]] += 1  # numpy's example: the duplicate is incremented once
        x[T(L, np.arange(8) % 2 == 0)] *= 3
        return x

    same(torch, f)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(torch, accumulate):
    a = arr(5, 4)

    def f(L):
        x = T(L, a)
        r = L.index_put(x, (T(L, np.array([0, 2, 4])),), T(L, np.array([1.0, 2.0, 3.0, 4.0])), accumulate=accumulate)
        x.index_put_((T(L, np.array([1, 1, 1, 3])), T(L, np.array([0, 0, 0, 2]))), T(L, np.array(2.5)), accumulate)
        y = T(L, a).index_put((T(L, a) > 0,), T(L, np.array(1.0)), accumulate)
        z = T(L, a).index_put_((T(L, np.array([0, 0])), T(L, np.array([1, 1]))), T(L, np.array([1.0, 2.0])), accumulate)
        return r, x, y, z, x._version, r._version

    same(torch, f)


def test_index_put_errors(torch):
    a3, a32 = arr(3), arr(3, 2)
    same(torch, lambda L: T(L, a3).index_put_((T(L, np.array([0])),), T(L, np.array([1]))))
    same(torch, lambda L: T(L, a3).index_put_((T(L, np.array([5])),), T(L, np.array([1.0]))))
    same(torch, lambda L: T(L, a3).index_put_((T(L, np.array([0, 1])),), T(L, np.array([1.0, 2.0, 3.0]))))
    same(torch, lambda L: T(L, a3).index_put_(T(L, np.array([0])), T(L, np.array([1.0]))))
    same(torch, lambda L: T(L, a32).index_put_((T(L, np.array([0])), T(L, np.array([0])), T(L, np.array([0]))),
                                                     T(L, np.array([1.0]))))


def test_index_put_accumulate_large(torch):
    a = np.zeros(1000, dtype=np.float64)
    idx = rng.integers(-1000, 1000, size=50000)
    v = rng.integers(0, 5, size=50000).astype(np.float64)
    same(torch, lambda L: T(L, a).index_put_((T(L, idx),), T(L, v), accumulate=True))


# ---------------------------------------------------------------------------------------
# index_select, gather, scatter family
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_gather_dtypes(torch, dtype):
    a = arr(4, 5, lo=-3, hi=4)
    idx = np.array([[0, 4, 4], [1, 0, 2]])
    same(torch, lambda L: T(L, a, dtype).index_select(1, T(L, np.array([4, 0, 0]))))
    same(torch, lambda L: T(L, a, dtype).gather(1, T(L, idx)))
    same(torch, lambda L: T(L, a, dtype).scatter(1, T(L, idx[:, :2] % 3), T(L, a, dtype)))
    same(torch, lambda L: T(L, a, dtype).scatter(0, T(L, idx % 4), 1))
    same(torch, lambda L: T(L, a, dtype).index_fill(0, T(L, np.array([1, -1])), 1))
    same(torch, lambda L: T(L, a, dtype).index_copy(0, T(L, np.array([3, 0])), T(L, a[:2], dtype)))
    same(torch, lambda L: T(L, a, dtype).masked_fill(T(L, a) > 0, 1))
    same(torch, lambda L: T(L, a, dtype).masked_select(T(L, a) > 0))
    same(torch, lambda L: T(L, a, dtype).masked_scatter(T(L, a) > 0, T(L, a, dtype).flip(1)))
    same(torch, lambda L: T(L, a, dtype).take(T(L, np.array([[0, -1], [7, 3]]))))
    same(torch, lambda L: T(L, a, dtype).put_(T(L, np.array([0, -1])), T(L, np.array([1, 0]), dtype)))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_accumulating_dtypes(torch, dtype):
    a = arr(4, 5, lo=0, hi=4)
    idx = np.array([[0, 1, 1, 3, 0], [2, 2, 2, 2, 1]])
    same(torch, lambda L: T(L, a, dtype).scatter_add(0, T(L, idx), T(L, a, dtype)))
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            same(torch, lambda L: T(L, a, dtype).scatter_reduce(0, T(L, idx), T(L, a, dtype), red, include_self=inc))
    same(torch, lambda L: T(L, a, dtype).index_add(1, T(L, np.array([0, 0, 4])), T(L, a[:, :3], dtype)))
    same(torch, lambda L: T(L, a, dtype).index_add(1, T(L, np.array([0, 0, 4])), T(L, a[:, :3], dtype), alpha=2))
    same(torch, lambda L: T(L, a, dtype).put_(T(L, np.array([0, 0, 3])), T(L, np.array([1, 2, 3]), dtype), accumulate=True))
    same(torch, lambda L: T(L, a, dtype).scatter(1, T(L, idx[:, :2] % 5), T(L, a, dtype), reduce="add"))
    same(torch, lambda L: T(L, a, dtype).scatter(1, T(L, idx[:, :2] % 5), 2, reduce="multiply"))


def test_scatter_reduce_float_specials(torch):
    a = np.array([[1.0, np.nan, 3.0], [-np.inf, 0.0, -0.0]], dtype=np.float32)
    s = np.array([[np.nan, 2.0, 1.0], [5.0, -1.0, np.inf]], dtype=np.float32)
    idx = np.array([[0, 0, 2], [1, 2, 2]])
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            same(torch, lambda L: T(L, a).scatter_reduce(1, T(L, idx), T(L, s), red, include_self=inc))
    same(torch, lambda L: T(L, np.array([[1.0, 2.0, 3.0]])).scatter_reduce(1, T(L, np.array([[0, 0, 0]])),
                                                                          T(L, np.array([[1.0, 2.0, 4.0]])), "mean"))
    same(torch, lambda L: T(L, np.array([[-7, 2, 3]])).scatter_reduce(1, T(L, np.array([[0, 0]])),
                                                                     T(L, np.array([[1, 2]])), "mean"))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_gather_scatter_dims_noncontiguous(torch, dim):
    a = arr(4, 5, 6)
    idx = rng.integers(0, 4, size=(3, 4, 4))

    def f(L):
        x = T(L, a).permute(2, 0, 1).permute(1, 2, 0)  # same shape, non-contiguous
        i = T(L, idx).transpose(0, 2).transpose(0, 2)
        g = x.gather(dim, i)
        s = x.clone().scatter_(dim, i, T(L, a)[:3] * 0 + 1)
        sa = L.scatter_add(x, dim, i, x[1:])
        sel = x.index_select(dim, T(L, np.array([3, 0, 1])))
        return g, s, sa, sel

    same(torch, f)


def test_gather_scatter_errors(torch):
    a = arr(3, 4)
    same(torch, lambda L: T(L, a).gather(1, T(L, np.array([[0, 4]]))))
    same(torch, lambda L: T(L, a).gather(1, T(L, np.array([[0, -1]]))))
    same(torch, lambda L: T(L, a).gather(1, T(L, np.array([0, 1]))))
    same(torch, lambda L: T(L, a).gather(0, T(L, np.array([[0, 1, 1, 1, 1]]))))
    same(torch, lambda L: T(L, a).gather(2, T(L, np.array([[0]]))))
    same(torch, lambda L: T(L, a).gather(1, T(L, np.array([[0.0]]))))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.array([[0, 4]])), T(L, a)))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.array([[0, 1]])), T(L, a[:1, :1])))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.array([[0, 1]])), T(L, a, "float64")))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.array([[0, 1]])), T(L, a), reduce="mean"))
    same(torch, lambda L: T(L, a).scatter_reduce(1, T(L, np.array([[0, 1]])), T(L, a), "max"))
    same(torch, lambda L: T(L, a).index_select(1, T(L, np.array([0, 5]))))
    same(torch, lambda L: T(L, a).index_select(1, T(L, np.array([[0]]))))
    same(torch, lambda L: T(L, a).index_select(1, T(L, np.array([0.0]))))
    same(torch, lambda L: T(L, a).index_add(1, T(L, np.array([0, 9])), T(L, a[:, :2])))
    same(torch, lambda L: T(L, a).index_add(1, T(L, np.array([0, 1])), T(L, a[:, :3])))
    same(torch, lambda L: T(L, a).index_add(1, T(L, np.array([0, 1])), T(L, a[:2, :2])))
    same(torch, lambda L: T(L, a).index_add(1, T(L, np.array([0, 1])), T(L, a[:, :2], "float64")))
    same(torch, lambda L: T(L, a).index_copy(1, T(L, np.array([0, 9])), T(L, a[:, :2])))
    same(torch, lambda L: T(L, a).index_copy(1, T(L, np.array([0, 1])), T(L, a[:, :3])))
    same(torch, lambda L: T(L, a).index_fill(1, T(L, np.array([0, 9])), 1.0))
    same(torch, lambda L: T(L, a).index_fill(1, T(L, np.array([0])), T(L, np.array([1.0]))))
    same(torch, lambda L: T(L, a).take(T(L, np.array([12]))))
    same(torch, lambda L: T(L, a).take(T(L, np.array([0], dtype=np.int32))))
    same(torch, lambda L: T(L, np.zeros(0)).take(T(L, np.array([0]))))
    same(torch, lambda L: T(L, a).put_(T(L, np.array([0, 1])), T(L, np.array([1.0]))))
    same(torch, lambda L: T(L, a).put_(T(L, np.array([-13])), T(L, np.array([1.0]))))


def test_index_ops_0d_and_empty(torch):
    s = np.array(5.0, dtype=np.float32)
    a = arr(3, 4)
    same(torch, lambda L: T(L, s).index_select(0, T(L, np.array([0]))))
    same(torch, lambda L: T(L, s).index_select(0, T(L, np.array(0))))
    same(torch, lambda L: T(L, s).index_select(0, T(L, np.array([0, 0]))))
    same(torch, lambda L: T(L, s).gather(0, T(L, np.array([0, 0]))))
    same(torch, lambda L: T(L, s).gather(0, T(L, np.array(0))))
    same(torch, lambda L: T(L, np.array([5.0, 6.0])).gather(0, T(L, np.array(1))))
    same(torch, lambda L: T(L, s).scatter(0, T(L, np.array(0)), 2.0))
    same(torch, lambda L: T(L, a).gather(1, T(L, np.zeros((3, 0), dtype=np.int64))))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.zeros((3, 0), dtype=np.int64)), 1.0))
    same(torch, lambda L: T(L, a).index_select(0, T(L, np.zeros(0, dtype=np.int64))))
    same(torch, lambda L: T(L, np.zeros((0, 4), np.float32)).index_select(1, T(L, np.array([1, 2]))))
    same(torch, lambda L: T(L, a).index_add(0, T(L, np.zeros(0, dtype=np.int64)), T(L, np.zeros((0, 4), np.float32))))
    same(torch, lambda L: T(L, a).take(T(L, np.zeros((0, 2), dtype=np.int64))))
    same(torch, lambda L: T(L, np.zeros((3, 0), np.float32)).masked_select(T(L, np.zeros((3, 0), bool))))


def test_out_and_inplace(torch):
    a = arr(3, 4)

    def f(L):
        x = T(L, a)
        idx = T(L, np.array([[0, 1, 2, 0]]))
        o1 = L.empty(0)
        L.index_select(x, 0, T(L, np.array([2, 0])), out=o1)
        o2 = L.empty(7)
        L.gather(x, 0, idx, out=o2)
        o3 = L.empty(0)
        L.masked_select(x, x > 1, out=o3)
        o4 = L.empty(0, dtype=L.int64)
        L.nonzero(x, out=o4)
        o5 = L.empty(0)
        L.take(x, idx, out=o5)
        o6 = L.empty(3, 4)
        L.scatter_add(x, 0, idx, x, out=o6)
        y = x.clone()
        r = y.scatter_(0, idx, 7.0)
        z = x.clone()
        z.masked_fill_(z > 2, T(L, np.array(-1.0)))
        w = x.clone().index_add_(0, T(L, np.array([1])), x[:1])
        return o1, o2, o3, o4, o5, o6, r is y, y, z, z._version, w, o1._version

    same(torch, f)
    same(torch, lambda L: L.nonzero(T(L, a), out=L.empty(0)))
    same(torch, lambda L: L.index_select(T(L, a), 0, T(L, np.array([0])), out=L.empty(0, dtype=L.int64)))


# ---------------------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------------------

def test_masked_ops(torch):
    a = arr(3, 4)
    m = np.array([[True, False, True, False]])
    same(torch, lambda L: T(L, a).masked_fill(T(L, m), 2.5))
    same(torch, lambda L: T(L, a[0]).masked_fill(T(L, np.stack([m[0], ~m[0]])), 2.5))  # broadcasts self
    same(torch, lambda L: T(L, a, "int32").masked_fill(T(L, m), T(L, np.array(2.5))))
    same(torch, lambda L: T(L, a).masked_fill_(T(L, m).t(), 1.0))  # cannot broadcast in place
    same(torch, lambda L: T(L, a).masked_fill(T(L, m.astype(np.uint8)), 1.0))
    same(torch, lambda L: T(L, a).masked_fill(T(L, m), T(L, np.array([1.0]))))
    same(torch, lambda L: T(L, a).masked_select(T(L, m)))
    same(torch, lambda L: T(L, a[0]).masked_select(T(L, np.stack([m[0], ~m[0]]))))
    same(torch, lambda L: T(L, a).t().masked_select(T(L, a).t() > 0))
    same(torch, lambda L: T(L, a).masked_select(T(L, m.astype(np.uint8))))
    same(torch, lambda L: T(L, a).masked_scatter(T(L, m), T(L, np.arange(20, dtype=np.float32)).reshape(4, 5)))
    same(torch, lambda L: T(L, a).t().masked_scatter_(T(L, m).t(), T(L, np.arange(20, dtype=np.float32))))
    same(torch, lambda L: T(L, a).masked_scatter(T(L, np.ones((3, 4), bool)), T(L, np.arange(5, dtype=np.float32))))
    same(torch, lambda L: T(L, a).masked_scatter(T(L, m), T(L, np.arange(20))))
    same(torch, lambda L: T(L, a).masked_scatter(T(L, m.astype(np.uint8)), T(L, a)))


def test_masks_large_parallel(torch):
    a = arr(300, 400)
    same(torch, lambda L: T(L, a).masked_select(T(L, a) > 3))
    same(torch, lambda L: T(L, a).masked_scatter(T(L, a) > 3, -T(L, a)))
    same(torch, lambda L: L.nonzero(T(L, a) > 3))
    same(torch, lambda L: L.nonzero(T(L, a).t() > 3, as_tuple=True))
    same(torch, lambda L: T(L, a).t().masked_fill(T(L, a).t() > 3, 0.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero(torch, dtype):
    a = arr(3, 4, 5, lo=-1, hi=2)
    same(torch, lambda L: L.nonzero(T(L, a, dtype)))
    same(torch, lambda L: T(L, a, dtype).permute(2, 0, 1).nonzero(as_tuple=True))
    same(torch, lambda L: L.argwhere(T(L, a, dtype)))
    same(torch, lambda L: L.where(T(L, a, dtype)))


def test_nonzero_special(torch):
    same(torch, lambda L: L.nonzero(T(L, np.array([0.0, -0.0, np.nan, np.inf]))))
    for v in (0.0, 3.0):
        same(torch, lambda L: L.nonzero(T(L, np.array(v))))
        same(torch, lambda L: L.nonzero(T(L, np.array(v)), as_tuple=True))
        same(torch, lambda L: L.where(T(L, np.array(v))))
        same(torch, lambda L: L.argwhere(T(L, np.array(v))))
    same(torch, lambda L: L.nonzero(T(L, np.zeros((2, 0, 3)))))
    same(torch, lambda L: L.nonzero(T(L, np.zeros((2, 0, 3))), as_tuple=True))


def test_put_take_noncontiguous(torch):
    a = arr(4, 6)
    idx = np.array([[0, 23], [-1, 5], [7, 7]])

    def f(L):
        x = T(L, a).t()
        t = x.take(T(L, idx))
        y = T(L, a).t()
        y.put_(T(L, idx), T(L, np.arange(6, dtype=np.float32)).reshape(2, 3), accumulate=True)
        z = L.put(T(L, a)[:, ::2], T(L, np.array([1, -2])), T(L, np.array([9.0, 8.0])))
        return t, y, z

    same(torch, f)


# ---------------------------------------------------------------------------------------
# regressions found by fuzzing against torch
# ---------------------------------------------------------------------------------------

def test_scatter_one_index_per_run(torch):
    a = np.arange(9, dtype=np.float32).reshape(3, 1, 3)
    idx = np.array([[[0, 1]]])
    same(torch, lambda L: T(L, a).scatter(0, T(L, idx), 100.0))
    same(torch, lambda L: T(L, a).scatter(-3, T(L, idx), T(L, a) * 10))
    same(torch, lambda L: T(L, a).scatter_reduce(0, T(L, idx), T(L, a) * 10, "sum", include_self=False))
    same(torch, lambda L: T(L, a).scatter_reduce(0, T(L, idx), T(L, a) * 10, "amax", include_self=False))


def test_broadcast_of_index_shapes(torch):
    a = np.arange(3, dtype=np.float32).reshape(1, 3)
    same(torch, lambda L: T(L, a)[[-1, -1, -1], T(L, np.array([[-2], [-1]], dtype=np.int32))])
    b = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    same(torch, lambda L: T(L, b)[1:2, None, [0], T(L, np.array([[2], [-3]]))])


def test_empty_results_and_size0_dims(torch):
    a = np.zeros((3, 0, 1), np.float32)
    same(torch, lambda L: T(L, a)[..., T(L, np.array([[2, 0, -1]]))])  # empty result: no bounds check
    same(torch, lambda L: T(L, np.zeros((0, 1), np.float32))[T(L, np.array([0, 0]))])  # size-0 dim, non-empty index
    same(torch, lambda L: T(L, np.zeros((0, 0, 0), np.float32))[[], T(L, np.array([[0], [0]])), []])
    same(torch, lambda L: T(L, np.zeros((0, 0), np.float32)).index_fill(1, T(L, np.array([0, 0])), 1.0))
    same(torch, lambda L: T(L, np.zeros((2, 0), np.float32)).index_fill(1, T(L, np.array([0])), 1.0))
    same(torch, lambda L: T(L, np.zeros((0, 3), np.float32)).index_add(1, T(L, np.array([5])), T(L, np.zeros((0, 1), np.float32))))
    same(torch, lambda L: T(L, np.zeros((2, 3), np.float32)).index_select(0, T(L, np.array([5]))))
    same(torch, lambda L: T(L, np.zeros((2, 3), np.float32)).index_select(1, T(L, np.array([5]))))
    same(torch, lambda L: T(L, np.zeros(0, np.float32)).index_select(0, T(L, np.array([0]))))
    same(torch, lambda L: T(L, np.array(3.0)).index_add(0, T(L, np.array([0])), T(L, np.array(2.0))))
    same(torch, lambda L: T(L, np.array(3.0)).index_add(0, T(L, np.array([0])), T(L, np.array([2.0]))))
    same(torch, lambda L: T(L, np.array(3.0)).index_add(0, T(L, np.array([0, 0])), T(L, np.array(2.0))))
    same(torch, lambda L: T(L, np.zeros(3, np.float32)).index_copy(0, T(L, np.array([0])), T(L, np.array(2.0))))


def test_zero_dim_int_tensor_index_is_a_select(torch):
    b = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    same(torch, lambda L: T(L, b)[T(L, np.array(1)), :, T(L, np.array([0, 3]))])
    same(torch, lambda L: T(L, b)[:, T(L, np.array(-1, dtype=np.int32))])
    x = pt.arange(6.0)
    y = x[pt.tensor(2)]
    y.fill_(50.0)
    assert x[2].item() == 50.0  # a view, as in torch


def test_sources_overlapping_the_written_tensor(torch):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    perm = np.array([[1, 0, 2, 3, 4]] * 4)
    same(torch, lambda L: (lambda x: x.scatter_(1, T(L, perm), x))(T(L, a)))  # overlap: error
    same(torch, lambda L: (lambda x: x.scatter_(1, T(L, perm), x.t().t()[:, ::2]))(T(L, a)))  # torch can't tell: copy
    same(torch, lambda L: (lambda x: x[:2].scatter_(1, T(L, np.array([[1, 0]])), x[2:]))(T(L, a)))  # disjoint
    same(torch, lambda L: (lambda x: x.index_add_(0, T(L, np.array([1, 0, 3, 2])), x))(T(L, a)))
    same(torch, lambda L: (lambda x: x.index_copy_(0, T(L, np.array([1, 0, 3, 2])), x))(T(L, a)))
    same(torch, lambda L: (lambda x: x.put_(T(L, np.array([1, 0, 3, 2])), x[0, :4]))(T(L, a)))
    same(torch, lambda L: (lambda x: (x.__setitem__([1, 0], x[0]), x)[1])(T(L, a)))
    same(torch, lambda L: (lambda x: (x[:2].__setitem__([1, 0], x[3]), x)[1])(T(L, a)))
    same(torch, lambda L: (lambda x: (x.__setitem__(x > 3, x[0, 0]), x)[1])(T(L, a)))  # one element: masked fill


def test_fill_values_must_fit_the_dtype(torch):
    cases = [("uint8", 255), ("uint8", 256), ("uint8", -1), ("uint8", -256), ("uint8", -0.5), ("uint8", float("nan")),
             ("int8", -129), ("float16", 65520.0), ("float16", float("inf")), ("bfloat16", 3.5e38), ("bool", 7),
             ("int64", 2 ** 63 - 1), ("int32", 2.5e9)]
    for dt, v in cases:
        same(torch, lambda L: L.zeros(2, dtype=getattr(L, dt)).masked_fill(T(L, np.array([True, False])), v))
        same(torch, lambda L: L.zeros(2, dtype=getattr(L, dt)).index_fill(0, T(L, np.array([0])), v))
        same(torch, lambda L: L.zeros(2, dtype=getattr(L, dt)).scatter(0, T(L, np.array([0])), v))


def test_written_tensor_overlap_rules(torch):
    ex = lambda L: L.zeros(3).expand(2, 3)  # noqa: E731 - an expanded (stride-0) tensor
    same(torch, lambda L: ex(L).scatter_(0, T(L, np.array([[0]])), 1.0))
    same(torch, lambda L: ex(L).index_add_(0, T(L, np.array([0])), L.ones(1, 3)))
    same(torch, lambda L: ex(L).masked_scatter_(L.ones(2, 3).bool(), L.ones(6)))
    same(torch, lambda L: ex(L).put_(T(L, np.array([0])), L.ones(1)))
    same(torch, lambda L: ex(L).index_fill_(0, T(L, np.array([0])), 1.0))  # torch only warns
    same(torch, lambda L: ex(L).masked_fill_(L.ones(2, 3).bool(), 1.0))  # torch only warns
    a = arr(6)
    same(torch, lambda L: (lambda x: L.index_select(x, 0, T(L, np.array([0, 1])), out=x[:2]))(T(L, a)))
    same(torch, lambda L: (lambda x: L.masked_select(x, x > 0, out=x))(T(L, a)))
    same(torch, lambda L: (lambda x: L.gather(x, 0, T(L, np.array([0, 1])), out=x[4:]))(T(L, a)))


def test_check_order(torch):
    a = arr(3, 4)
    # index_put_: dtype before index bounds
    same(torch, lambda L: T(L, a).index_put_((T(L, np.array([5])),), T(L, np.array([1.0]), "float64")))
    # index_copy / index_fill: int64 indices only; index_add takes int32
    same(torch, lambda L: T(L, a).index_copy(0, T(L, np.array([0], dtype=np.int32)), T(L, a[:1])))
    same(torch, lambda L: T(L, a).index_fill(0, T(L, np.array([0], dtype=np.int32)), 1.0))
    same(torch, lambda L: T(L, a).index_add(0, T(L, np.array([0], dtype=np.int32)), T(L, a[:1])))
    same(torch, lambda L: T(L, a).index_add(0, T(L, np.array([0], dtype=np.uint8)), T(L, a[:1])))
    # scatter family: an empty index of any dtype is accepted
    same(torch, lambda L: L.scatter_add(L.zeros(2), 0, L.zeros(0), L.zeros(0)))
    same(torch, lambda L: T(L, a).scatter(0, L.zeros(0, 4), 1.0))
    same(torch, lambda L: T(L, a).scatter(1, T(L, np.array([[0]])), T(L, a), reduce=None))
    same(torch, lambda L: T(L, a).scatter_reduce(3, T(L, np.array([[0]])), T(L, a), "bogus"))
