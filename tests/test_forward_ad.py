"""torch.autograd.forward_ad: dual tensors and the JVP formulas (PCT_FWGRAD lines of the op table).

Every case's tangent is checked against central finite differences (always) and against torch's forward AD on the
same inputs (when torch is installed)."""
import math

import pytest

import pyctorch as P
import pyctorch.autograd.forward_ad as fwAD
from conftest import requires_torch, assert_same, torch as T


def _inputs(m, shapes, seed):
    g = m.Generator().manual_seed(seed)
    out = []
    for s in shapes:
        if isinstance(s, tuple) and len(s) == 2 and s[0] == "pos":
            out.append(m.rand(s[1], generator=g, dtype=m.float64) + 0.5)
        elif isinstance(s, tuple) and len(s) == 2 and s[0] == "unit":
            out.append(m.rand(s[1], generator=g, dtype=m.float64) * 1.6 - 0.8)
        else:
            out.append(m.randn(s, generator=g, dtype=m.float64))
    return out


def _jvp(m, fn, primals, tangents):
    ad = m.autograd.forward_ad
    with ad.dual_level():
        duals = [ad.make_dual(p, t) for p, t in zip(primals, tangents)]
        out = fn(m, *duals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        res = [ad.unpack_dual(o) for o in outs]
        return [r.primal for r in res], [r.tangent for r in res]


def _fd(fn, primals, tangents, eps=1e-6):
    plus = fn(P, *[p + eps * t for p, t in zip(primals, tangents)])
    minus = fn(P, *[p - eps * t for p, t in zip(primals, tangents)])
    plus = plus if isinstance(plus, (tuple, list)) else (plus,)
    minus = minus if isinstance(minus, (tuple, list)) else (minus,)
    return [(a - b) / (2 * eps) for a, b in zip(plus, minus)]


F = "nn.functional"


def f_(m):
    return m.nn.functional


CASES = {
    # pointwise unary
    "sin": (lambda m, x: x.sin(), [(3, 4)]),
    "exp_log": (lambda m, x: (x.exp() + 1).log(), [(3, 4)]),
    "tanh_sigmoid": (lambda m, x: x.tanh() * x.sigmoid(), [(5,)]),
    "sqrt_rsqrt": (lambda m, x: x.sqrt() + x.rsqrt() + x.reciprocal(), [("pos", (4,))]),
    "trig": (lambda m, x: x.asin() + x.acos() + x.atan() + x.atanh() + x.erfinv(), [("unit", (4,))]),
    "hyper": (lambda m, x: x.sinh() + x.cosh() + x.asinh() + x.erf() + x.erfc() + x.log1p() + x.expm1(),
              [("pos", (4,))]),
    "abs_neg": (lambda m, x: -x.abs() + x.square(), [(6,)]),
    "relu": (lambda m, x: m.relu(x) + f_(m).gelu(x) + f_(m).silu(x) + f_(m).softplus(x) + f_(m).elu(x)
             + f_(m).leaky_relu(x) + f_(m).hardtanh(x) + f_(m).gelu(x, approximate="tanh"), [(7,)]),
    "lgamma": (lambda m, x: x.lgamma() + x.digamma(), [("pos", (3,))]),
    "clamp": (lambda m, x: x.clamp(-0.5, 0.5) + x.clamp(min=0.1), [(8,)]),
    # pointwise binary
    "arith": (lambda m, x, y: x * y + x / y - 2 * x + y ** 2 + x.pow(y.abs()), [("pos", (3, 4)), ("pos", (4,))]),
    "add_alpha": (lambda m, x, y: m.add(x, y, alpha=3) - m.sub(y, x, alpha=0.5) + m.rsub(x, y), [(3,), (3,)]),
    "pow_scalar": (lambda m, x: x ** 3 + 2 ** x + x.pow(0.5), [("pos", (4,))]),
    "atan2_hypot": (lambda m, x, y: m.atan2(x, y) + m.hypot(x, y) + m.logaddexp(x, y), [(4,), (4,)]),
    "maximum": (lambda m, x, y: m.maximum(x, y) + m.minimum(x, y) + m.fmax(x, y), [(5,), (5,)]),
    "where_lerp": (lambda m, x, y: m.where(x > 0, x, y) + m.lerp(x, y, 0.3) + m.addcmul(x, x, y, value=2)
                   + m.addcdiv(x, x, y.exp()), [(4,), (4,)]),
    "xlogy": (lambda m, x, y: m.xlogy(x, y), [(4,), ("pos", (4,))]),
    # reductions
    "sum_mean": (lambda m, x: x.sum() + x.sum(1).mean() + x.mean((0, 1), keepdim=True).squeeze(), [(3, 4)]),
    "prod": (lambda m, x: (x.prod(), x.prod(1), x.prod(0, keepdim=True)), [(3, 4)]),
    "amax": (lambda m, x: (x.amax(1), x.amin((0, 1)), x.max(), x.min()), [(3, 4)]),
    "max_dim": (lambda m, x: (x.max(1).values, x.min(0, keepdim=True)[0], x.median(1).values,
                              x.sort(1).values, x.topk(2).values, x.cummax(1).values), [(3, 4)]),
    "var_std": (lambda m, x: (x.var(), x.std(1), x.var(0, correction=0), m.var_mean(x, 1)[0], x.norm(),
                              m.linalg.vector_norm(x, 3, 1)), [(3, 4)]),
    "logsumexp": (lambda m, x: (x.logsumexp(1), x.logsumexp((0, 1), keepdim=True)), [(3, 4)]),
    "cumsum_cumprod": (lambda m, x: (x.cumsum(1), x.cumprod(0)), [(3, 4)]),
    # linear algebra
    "matmul": (lambda m, a, b: (a @ b, m.mm(a, b), a.matmul(b[:, 0])), [(3, 4), (4, 5)]),
    "bmm": (lambda m, a, b: (m.bmm(a, b), a @ b, m.baddbmm(a @ b, a, b, beta=0.5, alpha=2)), [(2, 3, 4), (2, 4, 3)]),
    "addmm_linear": (lambda m, x, w, b: (m.addmm(b, x, w.t()), f_(m).linear(x, w, b), f_(m).linear(x, w)),
                     [(3, 4), (5, 4), (5,)]),
    "dot_outer": (lambda m, x, y: (m.dot(x, y), m.outer(x, y), m.mv(m.outer(x, y), y)), [(4,), (4,)]),
    "det_inv": (lambda m, a: (m.linalg.det(a), m.linalg.inv(a), m.trace(a)), [(3, 3)]),
    # views and shapes
    "views": (lambda m, x: (x.view(4, 3), x.reshape(-1), x.t(), x.transpose(0, 1), x.permute(1, 0),
                            x.unsqueeze(1).expand(3, 2, 4), x[None].squeeze(0), x.flatten(), x.unflatten(1, (2, 2)),
                            x.narrow(1, 1, 2), x.select(0, 1), x.diagonal(), x.flip(0), x.roll(1, 1),
                            x.repeat(2, 1), x.tril(), x.movedim(0, 1), x.unfold(1, 2, 1)), [(3, 4)]),
    "split": (lambda m, x: (*x.split(2, 1), *x.chunk(3, 0), *x.unbind(1)), [(3, 4)]),
    "cat_stack": (lambda m, x, y: (m.cat([x, y]), m.stack([x, y], 1), m.hstack([x, y]), m.vstack([x, y])),
                  [(2, 3), (2, 3)]),
    "index": (lambda m, x: (x[1], x[:, 1:3], x[[0, 2]], x[x > 0], x[..., None, 1], x.index_select(1, m.tensor([0, 3])),
                            x.gather(1, m.tensor([[0], [1], [3]])), x.masked_fill(x > 0, 2.0)), [(3, 4)]),
    "scatter": (lambda m, x, s: (x.scatter(0, m.tensor([[1, 0, 2, 0]]), s), x.scatter_add(0, m.tensor([[1, 0, 2, 0]]), s),
                                 x.index_add(0, m.tensor([2]), s)), [(3, 4), (1, 4)]),
    "setitem": (None, [(3, 4), (4,)]),
    "inplace": (None, [(3, 4), (3, 4)]),
    "to_clone": (lambda m, x: (x.to(m.float64, copy=True), x.clone(), x.contiguous(), x.t().contiguous()), [(3, 4)]),
    # nn
    "softmax": (lambda m, x: (x.softmax(1), x.log_softmax(0), f_(m).softmax(x, -1, dtype=m.float64)),
                [(3, 4)]),
    "layer_norm": (lambda m, x, w, b: (f_(m).layer_norm(x, (4,), w, b), f_(m).layer_norm(x, (3, 4))),
                   [(2, 3, 4), (4,), (4,)]),
    "norms": (lambda m, x, w, b: (f_(m).group_norm(x, 2, w, b), f_(m).batch_norm(x, None, None, w, b, training=True),
                                  f_(m).rms_norm(x, (5,))), [(2, 4, 5), (4,), (4,)]),
    # the saved statistics' tangents (the backward ops read them: forward over reverse needs them)
    "norm_stats": (lambda m, x, w, b: (*m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
                                       *m.native_group_norm(x, w, b, 2, 4, 5, 2, 1e-5),
                                       *m.native_layer_norm(x, (5,), None, None, 1e-5)),
                   [(2, 4, 5), (4,), (4,)]),
    "rms_stats": (lambda m, x, w: (m._fused_rms_norm if m is T else m._C._fused_rms_norm)(x, (5,), w, 1e-6),
                  [(2, 4, 5), (5,)]),
    "batch_norm_eval": (lambda m, x, w, b: f_(m).batch_norm(x, m.zeros(4, dtype=m.float64) + 0.5,
                                                            m.ones(4, dtype=m.float64) * 2, w, b),
                        [(2, 4, 5), (4,), (4,)]),
    "conv2d": (lambda m, x, w, b: f_(m).conv2d(x, w, b, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "pool": (lambda m, x: (f_(m).max_pool2d(x, 2), f_(m).avg_pool2d(x, 2), f_(m).adaptive_avg_pool2d(x, 3)),
             [(1, 2, 6, 6)]),
    "losses": (lambda m, x, y: (f_(m).mse_loss(x, y), f_(m).l1_loss(x, y), f_(m).smooth_l1_loss(x, y),
                                f_(m).huber_loss(x, y), f_(m).binary_cross_entropy_with_logits(x, y.sigmoid())),
               [(3, 4), (3, 4)]),
    "cross_entropy": (lambda m, x: (f_(m).cross_entropy(x, m.tensor([0, 3, 1])), f_(m).nll_loss(x.log_softmax(1),
                                   m.tensor([1, 1, 2])), f_(m).kl_div(x.log_softmax(1), x.softmax(0))), [(3, 4)]),
    "embedding": (lambda m, w: f_(m).embedding(m.tensor([[0, 2], [1, 1]]), w), [(3, 4)]),
    "attention": (lambda m, q, k, v: f_(m).scaled_dot_product_attention(q, k, v), [(1, 2, 3, 4)] * 3),
    "pad_interp": (lambda m, x: (f_(m).pad(x, (1, 2)), f_(m).pad(x, (1, 1), mode="reflect"),
                                 f_(m).interpolate(x, scale_factor=2, mode="linear")), [(1, 2, 4)]),
}


def _setitem(m, x, y):
    z = x.clone()
    z[1] = y
    z[0, 1:3] = 5.0
    return z


def _inplace(m, x, y):
    z = x.clone()
    z.mul_(y)
    z.add_(y, alpha=2)
    z.sin_()
    w = m.zeros(3, 4, dtype=m.float64)
    w.copy_(z)
    w.clamp_(-0.5, 0.5)
    return z, w


SPECIAL = {"setitem": _setitem, "inplace": _inplace}
# torch's CPU flash attention has no forward formula (torch raises); ours transposes its backward
TORCH_REFUSES = {"attention"}
STATS_WITHOUT_TORCH_TANGENT = {"norm_stats", "rms_stats"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_finite_differences_and_torch(name):
    fn, shapes = CASES[name]
    fn = fn or SPECIAL[name]
    primals = _inputs(P, shapes, 0)
    tangents = _inputs(P, [s[1] if isinstance(s[0], str) else s for s in shapes], 1)
    outs, tans = _jvp(P, fn, primals, tangents)
    expected_outs = fn(P, *primals)
    expected_outs = expected_outs if isinstance(expected_outs, (tuple, list)) else (expected_outs,)
    assert_same(outs, list(expected_outs))
    for got, fd in zip(tans, _fd(fn, primals, tangents)):
        assert got is not None
        assert_same(got, fd, rtol=1e-4, atol=1e-5)
    if T is None or name in TORCH_REFUSES:
        return
    tp = [T.from_numpy(p.numpy()) for p in primals]
    tt = [T.from_numpy(t.numpy()) for t in tangents]
    _, ttans = _jvp(T, fn, tp, tt)
    if name in STATS_WITHOUT_TORCH_TANGENT:
        # torch leaves the saved statistics of batch and group norm without tangents (its backward ops differentiate
        # them otherwise); ours carry theirs, checked against finite differences above
        tans, ttans = zip(*[(a, b) for a, b in zip(tans, ttans) if b is not None])
    assert_same(list(tans), list(ttans), rtol=1e-6, atol=1e-8)


HESSIAN_CASES = {
    "batch_norm": lambda m, x, w, b: f_(m).batch_norm(x, None, None, w, b, training=True).pow(3).sum(),
    "batch_norm_eval": lambda m, x, w, b: f_(m).batch_norm(x, m.zeros(3, dtype=m.float64),
                                                           m.ones(3, dtype=m.float64) * 2, w, b).pow(3).sum(),
    "group_norm": lambda m, x, w, b: f_(m).group_norm(x.reshape(2, 6, 1), 3, w.repeat(2), b.repeat(2)).pow(3).sum(),
    "instance_norm": lambda m, x, w, b: f_(m).instance_norm(x.reshape(2, 2, 3)).pow(3).sum(),
    "rms_norm": lambda m, x, w, b: f_(m).rms_norm(x, (3,), w).pow(3).sum(),
    "attention": lambda m, x, w, b: f_(m).scaled_dot_product_attention(x.reshape(1, 4, 3), 2 * x.reshape(1, 4, 3),
                                                                      x.reshape(1, 4, 3) * w).pow(3).sum(),
    "attention_causal": lambda m, x, w, b: f_(m).scaled_dot_product_attention(
        x.reshape(1, 4, 3), x.reshape(1, 4, 3), x.reshape(1, 4, 3), is_causal=True).pow(3).sum(),
}


@pytest.mark.parametrize("name", sorted(HESSIAN_CASES))
def test_hessian_through_fused_backward_ops(name):
    """torch.func.hessian is forward over reverse: the fused backward ops of the norms and of attention need JVPs, and
    those need the saved statistics' tangents; checked against reverse over reverse (always) and torch."""
    fn = HESSIAN_CASES[name]
    x, w, b = _inputs(P, [(4, 3), (3,), (3,)], 2)
    h = P.func.hessian(lambda a: fn(P, a, w, b))(x)
    assert h.shape == (4, 3, 4, 3)
    assert_same(h, P.func.jacrev(P.func.jacrev(lambda a: fn(P, a, w, b)))(x), rtol=1e-7, atol=1e-9)
    if T is None:
        return
    tx, tw, tb = (T.from_numpy(t.numpy()) for t in (x, w, b))
    assert_same(h, T.func.hessian(lambda a: fn(T, a, tw, tb))(tx), rtol=1e-7, atol=1e-9)


# ---- the API ------------------------------------------------------------------------------------

def test_levels_and_unpack():
    x = P.tensor([1.0, 2.0])
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(x, P.tensor([3.0, 4.0]))
        assert d._base is x
        u = fwAD.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert u.tangent.tolist() == [3.0, 4.0] and u.primal.tolist() == [1.0, 2.0]
        assert fwAD.unpack_dual(u.primal).tangent is None  # the primal view carries no tangent
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None  # integer outputs carry none
        t = fwAD.unpack_dual(d.double()).tangent
        assert t.dtype == P.float64 and t.tolist() == [3.0, 4.0]
        y = P.zeros(2)
        y.add_(d)  # an in-place op on a plain tensor with a dual argument makes it dual
        assert fwAD.unpack_dual(y).tangent.tolist() == [3.0, 4.0]
    assert fwAD.unpack_dual(d).tangent is None  # the level's tangents went with it
    assert fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def test_tangent_dies_with_primal():
    from pyctorch.autograd import _forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(P.randn(3), P.randn(3))
        e = d * 2
        assert len(_forward_ad._levels[0].table) == 2
        del d, e
        assert len(_forward_ad._levels[0].table) == 0


def test_forward_over_reverse_and_reverse_over_forward():
    x = P.tensor([0.5, -1.0, 2.0], dtype=P.float64, requires_grad=True)
    v = P.tensor([1.0, 2.0, 3.0], dtype=P.float64)
    # reverse over forward: d/dx <grad f, v> with f = sum(sin(x) * x)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        t = fwAD.unpack_dual((d.sin() * d).sum()).tangent
    (hv,) = P.autograd.grad(t, x)
    h = (-x.sin() * x + 2 * x.cos()).detach()
    assert_same(hv, h * v)
    # forward over reverse: the tangent of the gradient
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach().requires_grad_(True), v)
        (g,) = P.autograd.grad((d.sin() * d).sum(), d, create_graph=True)
        assert_same(fwAD.unpack_dual(g).tangent, h * v)


def _message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _errors(m):
    ad = m.autograd.forward_ad
    out = [_message(lambda: ad.make_dual(m.randn(3), m.randn(3)))]
    with ad.dual_level():
        out.append(_message(lambda: ad.enter_dual_level()))
        out.append(_message(lambda: ad.make_dual(m.randn(3), m.randn(4))))
        out.append(_message(lambda: ad.make_dual(m.arange(3), m.arange(3))))
        d = ad.make_dual(m.rand(3) + 1, m.randn(3))
        out.append(_message(lambda: m.special.zeta(d, d)))
        out.append(_message(lambda: m.sin(d, out=m.empty(3))))
    out.append(_message(lambda: ad.exit_dual_level()))
    return out


def test_errors():
    got = _errors(P)
    assert got[0][0] == "RuntimeError" and "no level exists" in got[0][1]
    assert got[1] == ("RuntimeError", "Nested forward mode AD is not supported at the moment")
    assert got[4][0] == "NotImplementedError" and "Trying to use forward AD with special_zeta" in got[4][1]
    if T is not None:
        assert got == _errors(T)


def test_no_references_left():
    import gc
    import sys
    import weakref
    x = P.randn(4, dtype=P.float64)
    t = P.randn(4, dtype=P.float64)
    before = (sys.getrefcount(x), sys.getrefcount(t))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = (d.sin() * d).sum()
        out = weakref.ref(fwAD.unpack_dual(y).tangent)
        del d, y
    gc.collect()
    assert out() is None  # tangents die with their primal or their level
    assert (sys.getrefcount(x), sys.getrefcount(t)) == before
