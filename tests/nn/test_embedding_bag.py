"""F.embedding_bag / nn.EmbeddingBag against torch: modes sum / mean / max, offsets and 2-d input,
per_sample_weights, include_last_offset, padding_idx, scale_grad_by_freq, empty bags, dtypes;
gradients of weight and per_sample_weights; errors; gradcheck in float64 without torch."""
import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn as PN
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None
RNG = np.random.default_rng(0)
W = RNG.standard_normal((10, 4))
IND = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2])
OFF = np.array([0, 4, 4, 6])
PSW = RNG.standard_normal(9)


def test_values_by_hand():
    w = P.arange(12.0).view(6, 2)
    i, o = P.tensor([0, 2, 5, 1]), P.tensor([0, 2, 2])
    assert PF.embedding_bag(i, w, o, mode="sum").tolist() == [[4.0, 6.0], [0.0, 0.0], [12.0, 14.0]]
    assert PF.embedding_bag(i, w, o, mode="mean").tolist() == [[2.0, 3.0], [0.0, 0.0], [6.0, 7.0]]
    assert PF.embedding_bag(i, w, o, mode="max").tolist() == [[4.0, 5.0], [0.0, 0.0], [10.0, 11.0]]
    assert PF.embedding_bag(i, w, o, mode="mean", padding_idx=5).tolist() == [[2.0, 3.0], [0.0, 0.0], [2.0, 3.0]]
    bag = PN.EmbeddingBag.from_pretrained(w, mode="sum")
    assert bag(P.tensor([[0, 1], [2, 3]])).tolist() == [[2.0, 4.0], [10.0, 12.0]]


def test_gradcheck():
    w = P.randn(10, 3, dtype=P.float64, requires_grad=True)
    psw = P.randn(9, dtype=P.float64, requires_grad=True)
    i, o = P.tensor(IND.tolist()), P.tensor(OFF.tolist())
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda a: PF.embedding_bag(i, a, o, mode=mode, padding_idx=2), (w,))
    assert gradcheck(lambda a, b: PF.embedding_bag(i, a, o, mode="sum", per_sample_weights=b), (w, psw))
    assert gradgradcheck(lambda a, b: PF.embedding_bag(i, a, o, mode="sum", per_sample_weights=b), (w, psw))


def _run(mode, pad, last, usew, sgf, dtype="float64", ind=IND, off=OFF):
    pw = P.tensor(W.tolist(), dtype=getattr(P, dtype), requires_grad=True)
    tw = T.tensor(W, dtype=getattr(T, dtype), requires_grad=True)
    psw = PSW if ind.ndim == 1 else np.random.default_rng(2).standard_normal(ind.shape)
    pp = P.tensor(psw.tolist(), dtype=getattr(P, dtype), requires_grad=True) if usew else None
    tp = T.tensor(psw, dtype=getattr(T, dtype), requires_grad=True) if usew else None
    kw = dict(mode=mode, padding_idx=pad, include_last_offset=last, scale_grad_by_freq=sgf)
    po = PF.embedding_bag(P.tensor(ind.tolist()), pw, None if off is None else P.tensor(off.tolist()),
                          per_sample_weights=pp, **kw)
    to = TF.embedding_bag(T.tensor(ind), tw, None if off is None else T.tensor(off), per_sample_weights=tp, **kw)
    assert_same(po, to)
    g = np.random.default_rng(1).standard_normal(tuple(to.shape))
    po.backward(P.tensor(g.tolist(), dtype=po.dtype))
    to.backward(T.tensor(g, dtype=to.dtype))
    assert_same(pw.grad, tw.grad)
    if usew:
        assert_same(pp.grad, tp.grad)


@requires_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("pad", [None, 2, -8])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("sgf", [False, True])
def test_vs_torch(mode, pad, last, sgf):
    if mode == "max" and sgf:
        return
    _run(mode, pad, last, False, sgf)
    if mode == "sum":
        _run(mode, pad, last, True, sgf)


@requires_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_2d_input_and_dtypes_vs_torch(mode, dtype):
    _run(mode, None, False, False, False, dtype, RNG.integers(0, 10, (3, 5)), None)
    _run(mode, 1, False, mode == "sum", False, dtype, RNG.integers(0, 10, (4, 2)), None)


@requires_torch
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_dtypes_forward_vs_torch(dtype):
    for mode in ("sum", "mean", "max"):
        po = PF.embedding_bag(P.tensor(IND.tolist()), P.tensor(W.tolist(), dtype=getattr(P, dtype)),
                              P.tensor(OFF.tolist()), mode=mode)
        to = TF.embedding_bag(T.tensor(IND), T.tensor(W, dtype=getattr(T, dtype)), T.tensor(OFF), mode=mode)
        assert_same(po, to)


@requires_torch
def test_module_vs_torch():
    pm = PN.EmbeddingBag(10, 4, mode="max", padding_idx=3)
    tm = T.nn.EmbeddingBag(10, 4, mode="max", padding_idx=3)
    with P.no_grad():
        pm.weight.copy_(P.tensor(tm.weight.detach().numpy().tolist()))
    assert repr(pm) == repr(tm)
    assert_same(pm(P.tensor(IND.tolist()), P.tensor(OFF.tolist())), tm(T.tensor(IND), T.tensor(OFF)))
    assert [k for k, _ in pm.named_parameters()] == [k for k, _ in tm.named_parameters()]


ERRORS = [
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([1])),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0, 3])),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 12]), w, m.tensor([0]), mode="sum"),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 12]), w, m.tensor([0]), mode="max"),
    lambda F, m, w: F.embedding_bag(m.tensor([1, -1]), w, m.tensor([0]), mode="mean"),
    lambda F, m, w: F.embedding_bag(m.tensor([1.0, 2.0]), w, m.tensor([0])),
    lambda F, m, w: F.embedding_bag(m.tensor([[1, 2]]), w, m.tensor([0])),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([[0]])),
    lambda F, m, w: F.embedding_bag(m.tensor([[[1, 2]]]), w),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w[0], m.tensor([0])),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="avg"),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="max", scale_grad_by_freq=True),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="mean",
                                    per_sample_weights=m.ones(2)),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="sum", per_sample_weights=m.ones(3)),
    lambda F, m, w: F.embedding_bag(m.tensor([1, 2]), w, m.tensor([0]), mode="sum",
                                    per_sample_weights=m.ones(2, dtype=m.float64)),
]


@requires_torch
@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, T, T.tensor(W, dtype=T.float32))
    with pytest.raises(Exception) as pe:
        call(PF, P, P.tensor(W.tolist(), dtype=P.float32))
    assert type(pe.value) is type(te.value), (te.value, pe.value)
    assert str(pe.value).replace("pyctorch.", "torch.") == str(te.value).split("\n")[0]
