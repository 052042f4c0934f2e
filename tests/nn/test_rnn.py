"""Recurrent layers, cells and sequence packing against torch with identical weights (same seed)."""
import numpy as np
import pytest

import pyctorch as P
from pyctorch.nn.utils import rnn as prnn
from conftest import assert_same, requires_torch, torch as T


def arr(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def pair(cls, *args, **kw):
    P.manual_seed(3)
    T.manual_seed(3)
    return getattr(P.nn, cls)(*args, **kw), getattr(T.nn, cls)(*args, **kw)


def check_grads(a, b, xa, xb, tol=2e-5):
    assert_same(xa.grad, xb.grad, tol, tol)
    for (n, p), (m, q) in zip(a.named_parameters(), b.named_parameters()):
        assert n == m
        assert_same(p.grad, q.grad, tol, tol)


def hsum(h):
    return sum(x.sum() for x in h) if isinstance(h, tuple) else h.sum()


CONFIGS = [dict(), dict(num_layers=2, bidirectional=True, batch_first=True), dict(bias=False, num_layers=2),
           dict(bidirectional=True)]


@requires_torch
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", CONFIGS, ids=str)
def test_layer_matches_torch(cls, kw):
    a, b = pair(cls, 4, 5, **kw)
    assert repr(a) == repr(b)
    assert list(a.state_dict()) == list(b.state_dict())
    for k, v in b.state_dict().items():  # seeded init equals torch's
        np.testing.assert_array_equal(arr(a.state_dict()[k]).astype(np.float32), v.numpy())
    x = np.random.RandomState(0).randn(3, 6, 4).astype(np.float32)
    xa, xb = P.tensor(x, requires_grad=True), T.tensor(x, requires_grad=True)
    oa, ha = a(xa)
    ob, hb = b(xb)
    assert_same(oa, ob, 2e-5, 2e-5)
    (oa.sum() * 0.5 + hsum(ha)).backward()
    (ob.sum() * 0.5 + hsum(hb)).backward()
    check_grads(a, b, xa, xb)


@requires_torch
def test_rnn_relu_lstm_proj_and_initial_state():
    for cls, kw in (("RNN", dict(nonlinearity="relu", num_layers=2)), ("LSTM", dict(proj_size=3, num_layers=2))):
        a, b = pair(cls, 4, 5, **kw)
        assert repr(a) == repr(b)
        rs = np.random.RandomState(1)
        x = rs.randn(5, 2, 4).astype(np.float32)
        hsize = 3 if cls == "LSTM" else 5
        h0 = rs.randn(2, 2, hsize).astype(np.float32)
        c0 = rs.randn(2, 2, 5).astype(np.float32)
        ha0 = (P.tensor(h0), P.tensor(c0)) if cls == "LSTM" else P.tensor(h0)
        hb0 = (T.tensor(h0), T.tensor(c0)) if cls == "LSTM" else T.tensor(h0)
        oa, ha = a(P.tensor(x), ha0)
        ob, hb = b(T.tensor(x), hb0)
        assert_same(oa, ob, 2e-5, 2e-5)
        for u, v in zip(ha if isinstance(ha, tuple) else (ha,), hb if isinstance(hb, tuple) else (hb,)):
            assert_same(u, v, 2e-5, 2e-5)


@requires_torch
@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_unbatched_input(cls):
    a, b = pair(cls, 3, 4)
    x = np.random.RandomState(2).randn(7, 3).astype(np.float32)
    oa, ha = a(P.tensor(x))
    ob, hb = b(T.tensor(x))
    assert tuple(oa.shape) == tuple(ob.shape) == (7, 4)
    assert_same(oa, ob, 2e-5, 2e-5)


@requires_torch
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence(cls, enforce_sorted):
    a, b = pair(cls, 3, 4, num_layers=2, bidirectional=True)
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    x = np.random.RandomState(4).randn(6, 4, 3).astype(np.float32)
    xa, xb = P.tensor(x, requires_grad=True), T.tensor(x, requires_grad=True)
    pa = prnn.pack_padded_sequence(xa, lengths, enforce_sorted=enforce_sorted)
    pb = T.nn.utils.rnn.pack_padded_sequence(xb, lengths, enforce_sorted=enforce_sorted)
    assert_same(pa.data, pb.data, 2e-5, 2e-5)
    assert pa.batch_sizes.tolist() == pb.batch_sizes.tolist()
    oa, ha = a(pa)
    ob, hb = b(pb)
    assert isinstance(oa, prnn.PackedSequence)
    assert_same(oa.data, ob.data, 2e-5, 2e-5)
    for u, v in zip(ha if isinstance(ha, tuple) else (ha,), hb if isinstance(hb, tuple) else (hb,)):
        assert_same(u, v, 2e-5, 2e-5)
    ua, la = prnn.pad_packed_sequence(oa, batch_first=True)
    ub, lb = T.nn.utils.rnn.pad_packed_sequence(ob, batch_first=True)
    assert_same(ua, ub, 2e-5, 2e-5)
    assert la.tolist() == lb.tolist() and la.dtype == P.int64
    (ua.sum() + hsum(ha)).backward()
    (ub.sum() + hsum(hb)).backward()
    check_grads(a, b, xa, xb)


@requires_torch
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells(cls):
    a, b = pair(cls, 3, 5)
    assert repr(a) == repr(b) and list(a.state_dict()) == list(b.state_dict())
    rs = np.random.RandomState(5)
    x = rs.randn(2, 3).astype(np.float32)
    xa, xb = P.tensor(x, requires_grad=True), T.tensor(x, requires_grad=True)
    ra, rb = a(xa), b(xb)
    ra2, rb2 = a(xa, ra), b(xb, rb)  # feed the state back
    for u, v in zip(ra2 if isinstance(ra2, tuple) else (ra2,), rb2 if isinstance(rb2, tuple) else (rb2,)):
        assert_same(u, v, 2e-5, 2e-5)
    hsum(ra2).backward()
    hsum(rb2).backward()
    check_grads(a, b, xa, xb)
    ua, ub = a(P.tensor(x[0])), b(T.tensor(x[0]))  # unbatched
    for u, v in zip(ua if isinstance(ua, tuple) else (ua,), ub if isinstance(ub, tuple) else (ub,)):
        assert_same(u, v, 2e-5, 2e-5)


def test_rnn_errors():
    lstm = P.nn.LSTM(3, 4)
    with pytest.raises(ValueError):
        lstm(P.zeros(2, 3, 4, 3))
    with pytest.raises(RuntimeError, match="input_size"):
        lstm(P.zeros(5, 2, 7))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        lstm(P.zeros(5, 2, 3), (P.zeros(1, 3, 4), P.zeros(1, 2, 4)))
    with pytest.raises(ValueError):
        P.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError):
        P.nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError):
        P.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        prnn.pack_padded_sequence(P.zeros(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        prnn.pack_padded_sequence(P.zeros(3, 2, 1), [3, 0])


def test_lstm_gradcheck():
    P.manual_seed(0)
    lstm = P.nn.LSTM(2, 3, bidirectional=True).double()
    x = P.randn(4, 2, 2, dtype=P.float64, requires_grad=True)
    assert P.autograd.gradcheck(lambda x: lstm(x)[0], (x,))


@requires_torch
def test_pad_and_pack_sequence_helpers():
    rs = np.random.RandomState(6)
    seqs = [rs.randn(n, 2).astype(np.float32) for n in (3, 5, 1)]
    for bf in (False, True):
        for side in ("right", "left"):
            a = prnn.pad_sequence([P.tensor(s) for s in seqs], batch_first=bf, padding_value=-1.0, padding_side=side)
            b = T.nn.utils.rnn.pad_sequence([T.tensor(s) for s in seqs], batch_first=bf, padding_value=-1.0,
                                            padding_side=side)
            assert_same(a, b, 2e-5, 2e-5)
    pa = prnn.pack_sequence([P.tensor(s) for s in seqs], enforce_sorted=False)
    pb = T.nn.utils.rnn.pack_sequence([T.tensor(s) for s in seqs], enforce_sorted=False)
    assert_same(pa.data, pb.data, 2e-5, 2e-5)
    assert pa.sorted_indices.tolist() == pb.sorted_indices.tolist()
    for u, s in zip(prnn.unpack_sequence(pa), seqs):
        np.testing.assert_allclose(arr(u), s, rtol=0, atol=0)
