"""Feature dropout, PReLU, Bilinear, KL divergence, cosine/pairwise distances and relu, against torch."""
import warnings

import numpy as np
import pytest

import pyctorch as P
from conftest import assert_same, requires_torch, torch as T


def both(x, grad=True):
    x = np.asarray(x, dtype=np.float32)
    return P.tensor(x, requires_grad=grad), T.tensor(x, requires_grad=grad)


RS = np.random.RandomState(0)


def test_relu_gradient_at_zero_and_nan():
    x = P.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
    y = P.relu(x)
    assert str(y.tolist()) == str([0.0, 0.0, 2.0, float("nan")])
    y.sum().backward()
    assert x.grad.tolist()[:3] == [0.0, 0.0, 1.0]  # relu'(0) = 0, unlike clamp
    assert P.relu(P.tensor([-3, 4])).tolist() == [0, 4]
    z = P.tensor([-1.0, 1.0])
    P.nn.functional.relu(z, inplace=True)
    assert z.tolist() == [0.0, 1.0]


@requires_torch
@pytest.mark.parametrize("name,shape", [("dropout1d", (2, 3, 5)), ("dropout2d", (2, 3, 4, 4)),
                                        ("dropout2d", (3, 4, 4)), ("dropout3d", (2, 2, 2, 3, 3))])
def test_feature_dropout_matches_torch_seeded(name, shape):
    x = RS.randn(*shape).astype(np.float32)
    xa, xb = both(x)
    P.manual_seed(7)
    T.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d of a 3-D input warns in both
        a = getattr(P.nn.functional, name)(xa, 0.4, True)
        b = getattr(T.nn.functional, name)(xb, 0.4, True)
    assert_same(a, b, 1e-5, 1e-5)
    a.sum().backward()
    b.sum().backward()
    assert_same(xa.grad, xb.grad, 1e-5, 1e-5)
    ya = getattr(P.nn.functional, name)(xa, 0.4, False)
    assert ya is xa
    mod = P.nn.Dropout2d(0.3)
    assert repr(mod) == repr(T.nn.Dropout2d(0.3))


def test_feature_dropout_zeroes_whole_channels():
    P.manual_seed(0)
    y = P.nn.functional.dropout2d(P.ones(4, 16, 3, 3), 0.5)
    per_channel = np.array(y.tolist()).reshape(4, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    with pytest.warns(UserWarning), pytest.raises(RuntimeError):
        P.nn.functional.dropout2d(P.ones(4), 0.5)


@requires_torch
@pytest.mark.parametrize("num", [1, 3])
def test_prelu(num):
    a, b = P.nn.PReLU(num, init=0.1), T.nn.PReLU(num, init=0.1)
    assert repr(a) == repr(b)
    xa, xb = both(RS.randn(2, 3, 4))
    ya, yb = a(xa), b(xb)
    assert_same(ya, yb, 1e-5, 1e-5)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    assert_same(xa.grad, xb.grad, 1e-5, 1e-5)
    assert_same(a.weight.grad, b.weight.grad, 1e-4, 1e-4)
    with pytest.raises(RuntimeError):
        P.nn.PReLU(4)(P.ones(2, 3))


@requires_torch
def test_bilinear_seeded_and_grads():
    P.manual_seed(1)
    T.manual_seed(1)
    a, b = P.nn.Bilinear(3, 4, 5), T.nn.Bilinear(3, 4, 5)
    assert repr(a) == repr(b)
    assert_same(a.weight, b.weight, 0, 0)
    assert_same(a.bias, b.bias, 0, 0)
    x1a, x1b = both(RS.randn(2, 6, 3))
    x2a, x2b = both(RS.randn(2, 6, 4))
    ya, yb = a(x1a, x2a), b(x1b, x2b)
    assert_same(ya, yb, 1e-5, 1e-5)
    ya.square().sum().backward()
    yb.square().sum().backward()
    for u, v in ((x1a.grad, x1b.grad), (x2a.grad, x2b.grad), (a.weight.grad, b.weight.grad),
                 (a.bias.grad, b.bias.grad)):
        assert_same(u, v, 1e-4, 1e-4)


@requires_torch
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    inp = np.log(RS.dirichlet(np.ones(5), 3)).astype(np.float32)
    tgt = RS.dirichlet(np.ones(5), 3).astype(np.float32)
    tgt[0, 0] = 0.0  # xlogy(0, 0) = 0
    if log_target:
        tgt = np.log(tgt + 1e-3).astype(np.float32)
    xa, xb = both(inp)
    ta, tb = both(tgt, False)
    with pytest.warns(UserWarning) if reduction == "mean" else _nothing():
        la = P.nn.KLDivLoss(reduction=reduction, log_target=log_target)(xa, ta)
    lb = T.nn.KLDivLoss(reduction=reduction, log_target=log_target)(xb, tb)
    assert_same(la, lb, 1e-5, 1e-5)
    la.sum().backward()
    lb.sum().backward()
    assert_same(xa.grad, xb.grad, 1e-5, 1e-5)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@requires_torch
def test_cosine_similarity_pairwise_and_embedding_loss():
    x1a, x1b = both(RS.randn(4, 6))
    x2a, x2b = both(RS.randn(1, 6))
    assert_same(P.nn.functional.cosine_similarity(x1a, x2a), T.nn.functional.cosine_similarity(x1b, x2b), 1e-5, 1e-5)
    assert_same(P.nn.CosineSimilarity(dim=0)(x1a, x1a * 2), T.nn.CosineSimilarity(dim=0)(x1b, x1b * 2), 1e-5, 1e-5)
    za, zb = both(np.zeros((2, 3)))
    assert_same(P.nn.functional.cosine_similarity(za, za), T.nn.functional.cosine_similarity(zb, zb), 1e-5, 1e-5)  # eps guard
    x3a, x3b = both(RS.randn(4, 6))
    for p in (2.0, 1.0, 3.0):
        da = P.nn.PairwiseDistance(p=p, keepdim=True)(x1a, x3a)
        db = T.nn.PairwiseDistance(p=p, keepdim=True)(x1b, x3b)
        assert_same(da, db, 1e-5, 1e-5)
    tgt = np.array([1, -1, 1, -1], dtype=np.float32)
    la = P.nn.CosineEmbeddingLoss(margin=0.2)(x1a, x3a, P.tensor(tgt))
    lb = T.nn.CosineEmbeddingLoss(margin=0.2)(x1b, x3b, T.tensor(tgt))
    assert_same(la, lb, 1e-5, 1e-5)
    la.backward()
    lb.backward()
    assert_same(x1a.grad, x1b.grad, 1e-5, 1e-5)
    assert_same(x3a.grad, x3b.grad, 1e-5, 1e-5)
