"""nn.Embedding and F.embedding (csrc/aten/cpu/embedding.c) against torch and numpy: lookups, the
race-free dense backward (repeated indices accumulate, padding_idx rows get no gradient,
scale_grad_by_freq), max_norm renormalization in place, seeded init, from_pretrained, repr, errors
(out-of-range indices raise IndexError, never crash), float64 gradcheck and gradgradcheck."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T


def to_pct(t):
    return P.tensor(np.array(t.detach().tolist()), dtype=getattr(P, str(t.dtype).split(".")[1]))


@requires_torch
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_forward_backward_matches_torch(kwargs):
    w = T.randn(7, 4)
    idx = T.tensor([[0, 2, 2, 6], [1, 2, 0, 6], [6, 6, 6, 3]])
    wt, wp = w.clone().requires_grad_(), to_pct(w).requires_grad_()
    yt = T.nn.functional.embedding(idx, wt, **kwargs)
    yp = PF.embedding(to_pct(idx), wp, **kwargs)
    assert_same(yp, yt)
    g = T.randn(yt.shape)
    yt.backward(g)
    yp.backward(to_pct(g))
    assert_same(wp.grad, wt.grad)


def test_backward_against_numpy_and_padding():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((50, 6))
    idx = rng.integers(0, 50, size=(40, 9))
    idx[0, :4] = 7  # repeated indices accumulate
    wp = P.tensor(w, requires_grad=True)
    g = rng.standard_normal((40, 9, 6))
    y = PF.embedding(P.tensor(idx), wp, padding_idx=7)
    np.testing.assert_array_equal(np.array(y.tolist()), w[idx])
    y.backward(P.tensor(g))
    ref = np.zeros_like(w)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 6))
    ref[7] = 0  # padding_idx gets no gradient
    np.testing.assert_allclose(np.array(wp.grad.tolist()), ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_dense_backward_large_parallel(threads):
    old = P.get_num_threads()
    P.set_num_threads(threads)
    try:
        rng = np.random.default_rng(threads)
        v, d = 3000, 40
        idx = rng.integers(0, v, size=5000)
        idx[:100] = 17
        g = rng.standard_normal((5000, d)).astype(np.float32)
        out = P.embedding_dense_backward(P.tensor(g), P.tensor(idx), v, -1, True)
        counts = np.bincount(idx, minlength=v).astype(np.float64)
        ref = np.zeros((v, d))
        np.add.at(ref, idx, g / counts[idx][:, None])
        np.testing.assert_allclose(np.array(out.tolist()), ref, rtol=1e-4, atol=1e-5)
        assert out.dtype == P.float32 and tuple(out.shape) == (v, d)
    finally:
        P.set_num_threads(old)


@requires_torch
def test_dense_backward_op_matches_torch():
    g = T.randn(3, 5, 4, dtype=T.float64)
    idx = T.randint(0, 9, (3, 5))
    for pad, freq in ((-1, False), (3, False), (-1, True), (idx[0, 0].item(), True)):
        ref = T.ops.aten.embedding_dense_backward(g, idx, 9, pad, freq)
        got = P.embedding_dense_backward(to_pct(g), to_pct(idx), 9, pad, freq)
        assert_same(got, ref)
    gb = g.float().bfloat16()
    ref = T.ops.aten.embedding_dense_backward(gb, idx, 9, -1, False)
    gp = P.tensor(np.array(gb.float().tolist()), dtype=P.bfloat16)
    got = P.embedding_dense_backward(gp, to_pct(idx), 9, -1, False)
    assert_same(got, ref, rtol=2e-2, atol=2e-2)


@requires_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_max_norm_renorm_matches_torch(norm_type):
    w = T.randn(8, 5) * 3
    idx = T.tensor([1, 3, 3, 7, 0])
    wt, wp = w.clone().requires_grad_(), to_pct(w).requires_grad_()
    yt = T.nn.functional.embedding(idx, wt, max_norm=1.5, norm_type=norm_type)
    yp = PF.embedding(to_pct(idx), wp, max_norm=1.5, norm_type=norm_type)
    assert_same(yp, yt)
    assert_same(wp.detach(), wt.detach())  # the referenced rows were renormalized in place
    yt.sum().backward()
    yp.sum().backward()
    assert_same(wp.grad, wt.grad)


@requires_torch
def test_module_init_repr_and_from_pretrained():
    for kwargs in ({}, {"padding_idx": -2}, {"max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True},
                   {"padding_idx": 0}):
        T.manual_seed(11)
        P.manual_seed(11)
        tm, pm = T.nn.Embedding(6, 3, **kwargs), P.nn.Embedding(6, 3, **kwargs)
        assert repr(pm) == repr(tm)
        assert_same(pm.weight, tm.weight)  # seeded init gives torch's numbers, padding row zeroed
        assert pm.padding_idx == tm.padding_idx
        assert list(pm.state_dict()) == list(tm.state_dict())
    w = T.randn(4, 2)
    for freeze in (True, False):
        tm = T.nn.Embedding.from_pretrained(w, freeze=freeze, padding_idx=1)
        pm = P.nn.Embedding.from_pretrained(to_pct(w), freeze=freeze, padding_idx=1)
        assert pm.weight.requires_grad == tm.weight.requires_grad and repr(pm) == repr(tm)
        assert_same(pm(P.tensor([1, 3])), tm(T.tensor([1, 3])))
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        P.nn.Embedding.from_pretrained(P.randn(4))


def test_errors():
    w = P.randn(10, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        PF.embedding(P.tensor([10]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        PF.embedding(P.tensor([[0, 1], [-1, 2]]), w)
    with pytest.raises(IndexError):
        P.nn.Embedding(4, 2)(P.tensor([4]))
    with pytest.raises(IndexError):
        P.embedding_dense_backward(P.randn(2, 3), P.tensor([0, 5]), 5, -1, False)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got torch.FloatTensor instead"):
        PF.embedding(P.tensor([1.0]), w)
    assert tuple(PF.embedding(P.tensor([1], dtype=P.int32), w).shape) == (1, 3)
    assert tuple(PF.embedding(P.tensor(1), w).shape) == (3,)
    assert tuple(PF.embedding(P.zeros(0, 4, dtype=P.int64), w).shape) == (0, 4, 3)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        PF.embedding(P.tensor([1]), P.randn(10))
    for bad in (10, -11):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            PF.embedding(P.tensor([1]), w, padding_idx=bad)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            P.nn.Embedding(10, 3, padding_idx=bad)
    with pytest.raises(NotImplementedError, match="sparse"):
        P.nn.Embedding(10, 3, sparse=True)(P.tensor([1]))
    with P.no_grad():  # no gradient wanted: sparse changes nothing
        assert tuple(P.nn.Embedding(10, 3, sparse=True)(P.tensor([1])).shape) == (1, 3)


def test_non_contiguous_weight_and_indices():
    base = P.randn(5, 8)
    w = base.t()  # (8, 5), column-major
    idx = P.tensor([[1, 7, 3], [0, 2, 2]]).t()
    y = PF.embedding(idx, w)
    ref = np.array(w.tolist())[np.array(idx.tolist())]
    np.testing.assert_array_equal(np.array(y.tolist()), ref)


def test_gradcheck_and_gradgradcheck():
    P.manual_seed(0)
    w = P.randn(7, 3, dtype=P.float64, requires_grad=True)
    idx = P.tensor([[1, 2, 1], [0, 6, 1]])
    assert gradcheck(lambda w: PF.embedding(idx, w), (w,))
    assert gradgradcheck(lambda w: PF.embedding(idx, w).pow(2), (w,))
    g = P.randn(2, 3, 3, dtype=P.float64, requires_grad=True)
    assert gradcheck(lambda g: P.embedding_dense_backward(g, idx, 7, 1, True), (g,))
    # padding_idx: that row's gradient is zero by definition (not a derivative), as torch
    y = PF.embedding(idx, w, padding_idx=1)
    y.sum().backward()
    assert w.grad[1].tolist() == [0.0, 0.0, 0.0] and w.grad[0].tolist() == [1.0, 1.0, 1.0]
