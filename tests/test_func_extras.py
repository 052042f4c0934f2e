"""torch.func.rearrange, functionalize, debug_unwrap and replace_all_batch_norm_modules_ against torch, and by hand."""
import numpy as np
import pytest

import pyctorch as P
from comparison import assert_same_outcome
from conftest import requires_torch, torch as T


def _images(m):
    return m.tensor(np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3))


PATTERNS = [
    ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}), ("b h w c -> b (c h w)", {}),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", dict(h1=2, w1=2)),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", dict(h1=2, w1=3)),
    ("b ... c -> c b ...", {}), ("... c -> (...) c", {}), ("b h w c -> b 1 h w c 1", {}),
    ("b h w c -> b () h w c", {}), ("b h w c -> b (h w) () c", {}),
    # errors
    ("b h w -> b h w", {}), ("b h w c -> b h w", {}), ("b (h1 h) w c -> b h w c", {}),
    ("b (h1 h) w c -> b h h1 w c", dict(h1=3)), ("b h w c -> b h w c", dict(q=2)), ("b h w c", {}),
    ("b ((h) w) c -> b h w c", {}), ("b h h c -> b h c", {}), ("b h w c -> b h w c 2", {}),
]


@requires_torch
@pytest.mark.parametrize("pattern, lengths", PATTERNS)
def test_rearrange_matches_torch(pattern, lengths):
    assert_same_outcome(lambda: P.func.rearrange(_images(P), pattern, **lengths),
                        lambda: T.func.rearrange(_images(T), pattern, **lengths))


@requires_torch
def test_rearrange_sequence_matches_torch():
    assert_same_outcome(lambda: P.func.rearrange([P.ones(2, 3) * k for k in range(4)], "n a b -> a (n b)"),
                        lambda: T.func.rearrange([T.ones(2, 3) * k for k in range(4)], "n a b -> a (n b)"))


def test_rearrange_by_hand():
    x = P.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(P.func.rearrange(x, "a b c -> c a b").numpy(), x.numpy().transpose(2, 0, 1))
    np.testing.assert_array_equal(P.func.rearrange(x, "a (b1 b) c -> b1 a b c", b1=3).numpy(),
                                  x.numpy().reshape(2, 3, 1, 4).transpose(1, 0, 2, 3))
    y = P.arange(6.).requires_grad_()
    P.func.rearrange(y, "(a b) -> b a", a=2).sum().backward()
    assert y.grad.tolist() == [1.0] * 6


def _mutating(x):
    y = x.clone()
    y.add_(1)
    x.mul_(2)
    return y, x.view(-1)


@requires_torch
@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views", "nothing"])
def test_functionalize_matches_torch(remove):
    def run(m):
        x = m.arange(4.).reshape(2, 2)
        y, v = m.func.functionalize(_mutating, remove=remove)(x)
        return y, v, x, v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert_same_outcome(lambda: run(P), lambda: run(T))


def test_functionalize_keeps_semantics():
    x = P.ones(3)
    y, v = P.func.functionalize(_mutating)(x)
    assert y.tolist() == [2.0] * 3 and x.tolist() == [2.0] * 3 and v.tolist() == [2.0] * 3


def test_debug_unwrap_and_batch_norm_replacement():
    x = P.ones(2)
    assert P.func.debug_unwrap(x) is x
    net = P.nn.Sequential(P.nn.Linear(3, 4), P.nn.BatchNorm1d(4), P.nn.Sequential(P.nn.BatchNorm1d(4)))
    assert P.func.replace_all_batch_norm_modules_(net) is net
    for bn in (net[1], net[2][0]):
        assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    out = net.eval()(P.randn(5, 3))  # eval uses batch statistics now, as torch's does
    np.testing.assert_allclose(out.mean(0).detach().numpy(), np.zeros(4), atol=1e-5)


@requires_torch
def test_batch_norm_replacement_matches_torch():
    def run(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4))
        m.func.replace_all_batch_norm_modules_(net)
        return net.eval()(m.arange(15.).reshape(5, 3) / 7), sorted(net.state_dict())
    assert_same_outcome(lambda: run(P), lambda: run(T), rtol=1e-5, atol=1e-6)
