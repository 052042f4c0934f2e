"""F.ctc_loss / nn.CTCLoss against torch: reductions none / mean / sum, zero_infinity, blank, padded
(2-d) and concatenated (1-d) targets, lengths as lists and tensors, unbatched input, repeated
labels, infeasible alignments, float32 / float64; gradients w.r.t. log_probs; errors; gradcheck in
float64 and a hand-computed loss without torch."""
import math

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn as PN
import pyctorch.nn.functional as PF
from pyctorch.autograd import gradcheck
from conftest import requires_torch, assert_same, torch as T

TF = T.nn.functional if T is not None else None
TN, B, C = 12, 4, 6
RNG = np.random.default_rng(0)
LP = np.log(RNG.dirichlet(np.ones(C), size=(TN, B)))
IL = [12, 10, 7, 0]
TL = [4, 3, 6, 0]
TG2 = RNG.integers(1, C, (B, 6))
TG2[0, 1] = TG2[0, 2]  # a repeated label needs a blank between
TG1 = np.concatenate([TG2[b, :TL[b]] for b in range(B)])


def test_loss_by_hand():
    # one frame, one label: the only path emits the label, loss = -log p(label)
    lp = P.tensor([[[math.log(0.25), math.log(0.75)]]], dtype=P.float64)
    loss = PF.ctc_loss(lp, P.tensor([[1]]), [1], [1], reduction="sum")
    assert abs(loss.item() + math.log(0.75)) < 1e-12
    # two frames, label 1: paths (1,1), (0,1), (1,0)
    p = np.array([[0.3, 0.7], [0.6, 0.4]])
    lp = P.tensor(np.log(p)[:, None, :].tolist(), dtype=P.float64)
    want = -math.log(p[0, 1] * p[1, 1] + p[0, 0] * p[1, 1] + p[0, 1] * p[1, 0])
    assert abs(PF.ctc_loss(lp, P.tensor([1]), [2], [1], reduction="sum").item() - want) < 1e-12


def test_gradcheck():
    lp = P.tensor(LP.tolist(), dtype=P.float64, requires_grad=True)
    for tg in (TG1, TG2):
        for red in ("none", "mean", "sum"):
            # through log_softmax: the CTC gradient (torch's too) assumes normalized log_probs
            assert gradcheck(lambda a: PF.ctc_loss(a.log_softmax(2), P.tensor(tg.tolist()), IL, TL, reduction=red), (lp,))


def _run(tg, red, zi, dtype="float64", blank=0, il=IL, tl=TL, lp=LP, as_tensor=False):
    pl = P.tensor(lp.tolist(), dtype=getattr(P, dtype), requires_grad=True)
    tlp = T.tensor(lp, dtype=getattr(T, dtype), requires_grad=True)
    pil, ptl = (P.tensor(il), P.tensor(tl)) if as_tensor else (il, tl)
    til, ttl = (T.tensor(il), T.tensor(tl)) if as_tensor else (il, tl)
    po = PF.ctc_loss(pl, P.tensor(tg.tolist()), pil, ptl, blank, red, zi)
    to = TF.ctc_loss(tlp, T.tensor(tg), til, ttl, blank, red, zi)
    tol = (1e-5, 1e-5) if dtype == "float32" else (None, None)
    assert_same(po, to, *tol)
    g = np.random.default_rng(3).standard_normal(tuple(to.shape))
    po.backward(P.tensor(g.tolist(), dtype=po.dtype))
    to.backward(T.tensor(g, dtype=to.dtype))
    assert_same(pl.grad, tlp.grad, *tol)


@requires_torch
@pytest.mark.parametrize("red", ["none", "mean", "sum"])
@pytest.mark.parametrize("zi", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("concat", [False, True])
def test_vs_torch(red, zi, dtype, concat):
    _run(TG1 if concat else TG2, red, zi, dtype, as_tensor=concat)


@requires_torch
@pytest.mark.parametrize("zi", [False, True])
def test_infeasible_and_blank_vs_torch(zi):
    _run(np.array([[1, 2, 3, 4]]), "sum", zi, il=[3], tl=[4], lp=LP[:3, :1])
    tg = np.where(TG2 == 5, 0, TG2)  # blank = 5
    _run(tg, "mean", zi, blank=5)


@requires_torch
def test_float_and_int32_targets_vs_torch():
    _run(TG2.astype(np.float32), "mean", False)
    _run(TG1.astype(np.int32), "sum", False, as_tensor=True)


@requires_torch
def test_unbatched_and_module_vs_torch():
    lp = LP[:, 0]
    pl = P.tensor(lp.tolist(), dtype=P.float64, requires_grad=True)
    tlp = T.tensor(lp, dtype=T.float64, requires_grad=True)
    for red in ("none", "mean"):
        po = PN.CTCLoss(reduction=red)(pl, P.tensor(TG2[0, :4].tolist()), P.tensor(12), P.tensor(4))
        to = T.nn.CTCLoss(reduction=red)(tlp, T.tensor(TG2[0, :4]), T.tensor(12), T.tensor(4))
        assert_same(po, to)
        po.sum().backward()
        to.sum().backward()
        assert_same(pl.grad, tlp.grad)


ERRORS = [
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [12] * 4, [2] * 3),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [12] * 3, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [13] * 4, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [12] * 4, [3] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([1, 2] * 3), [12] * 4, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 3), [12] * 4, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [12] * 4, [2] * 4, blank=6),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[[1, 2]]] * 4), [12] * 4, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp.bfloat16(), m.tensor([[1, 2]] * 4), [12] * 4, [2] * 4),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), m.tensor([12.0] * 4), m.tensor([2] * 4)),
    lambda F, m, lp: F.ctc_loss(lp, m.tensor([[1, 2]] * 4), [12] * 4, [2] * 4, reduction="avg"),
]


@requires_torch
@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, T, T.tensor(LP, dtype=T.float32))
    with pytest.raises(Exception) as pe:
        call(PF, P, P.tensor(LP.tolist(), dtype=P.float32))
    assert type(pe.value) is type(te.value), (te.value, pe.value)
    assert str(pe.value) == str(te.value).split("\n")[0]
