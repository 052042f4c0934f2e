"""torch.func: the transforms against torch.func on the same functions, and hand-checked values."""
import pytest

import pyctorch as P
from conftest import requires_torch, assert_same, torch as T


def _tensors(m, *shapes, seed=0):
    g = m.Generator().manual_seed(seed)
    return [m.randn(s, generator=g, dtype=m.float64) for s in shapes]


def _np(x):
    """A pyctorch result tree as torch tensors (for comparing two runs of one function)."""
    if isinstance(x, P.Tensor):
        return x
    return x


def _both(fn):
    """fn(m) in pyctorch, and in torch when installed (None otherwise)."""
    got = fn(P)
    return got, (fn(T) if T is not None else None)


def _check(fn, **kw):
    got, expected = _both(fn)
    if expected is not None:
        assert_same(got, expected, **kw)
    return got


def f_scalar(m, x):
    return (x.sin() * x).sum()


def test_grad_hand_checked():
    x = P.tensor([0.5, -1.0, 2.0], dtype=P.float64)
    g = P.func.grad(lambda x: (x ** 3).sum())(x)
    assert g.tolist() == [0.75, 3.0, 12.0]
    assert g.grad_fn is None and not g.requires_grad
    h = P.func.hessian(lambda x: (x ** 3).sum())(x)
    assert h.tolist() == [[3.0, 0, 0], [0, -6.0, 0], [0, 0, 12.0]]


def test_grad_argnums_aux_and_trees():
    def fn(m):
        x, y = _tensors(m, (3,), (3,))
        f = lambda a, b: ((a * b).sum(), {"aux": a + 1})  # noqa: E731
        g1, aux = m.func.grad(f, argnums=(0, 1), has_aux=True)(x, y)
        (gv, v), _ = m.func.grad_and_value(f, argnums=1, has_aux=True)(x, y), None
        d = m.func.grad(lambda p: (p["w"] * p["b"]).sum() ** 2)({"w": x, "b": y})
        return g1, aux, gv, v, d
    _check(fn)


def test_vjp_jvp_linearize():
    def fn(m):
        x, y, u, v = _tensors(m, (3, 2), (2,), (3, 2), (2,))
        out, vjp_fn = m.func.vjp(lambda a, b: (a * b).tanh(), x, y)
        ct = vjp_fn(u)
        o2, t2 = m.func.jvp(lambda a, b: ((a @ b).exp(), a.sum()), (x, y), (u, v))
        o3, t3, aux = m.func.jvp(lambda a: (a.sin(), a.cos()), (x,), (u,), has_aux=True)
        lo, jfn = m.func.linearize(lambda a: a.sin() * 2, x)
        return out, ct, o2, t2, o3, t3, aux, lo, jfn(u)
    _check(fn)


@pytest.mark.parametrize("kind", ["jacrev", "jacfwd"])
def test_jacobians(kind):
    def fn(m):
        x, y = _tensors(m, (3,), (2, 3))
        jac = getattr(m.func, kind)
        f = lambda a, b: ((b @ a).sin(), a.prod())  # noqa: E731
        return jac(f)(x, y), jac(f, argnums=(0, 1))(x, y), jac(lambda a: a.exp(), has_aux=False)(y)
    _check(fn)


@pytest.mark.parametrize("outer,inner", [("jacrev", "jacrev"), ("jacfwd", "jacrev"), ("jacrev", "jacfwd"),
                                         ("jacfwd", "jacfwd")])
def test_second_order(outer, inner):
    def fn(m):
        (x,) = _tensors(m, (4,))
        f = lambda a: (a.sin() * a.cumsum(0)).sum() + a.softmax(0)[0]  # noqa: E731
        return getattr(m.func, outer)(getattr(m.func, inner)(f))(x), m.func.hessian(f)(x)
    got = _check(fn)
    assert_same(got[0], got[1])


def test_nested_grad_and_jvp():
    def fn(m):
        (x,) = _tensors(m, (3,))
        gg = m.func.grad(lambda a: m.func.grad(lambda b: (b ** 3).sum())(a).sum())(x)
        one = m.ones(3, dtype=m.float64)
        jj = m.func.jvp(lambda a: m.func.jvp(lambda b: (b.sin() * b).sum(), (a,), (one,))[1], (x,), (one,))
        return gg, jj
    _check(fn)


def test_vmap_dims():
    def fn(m):
        x, y, z = _tensors(m, (4, 3), (3, 4), (3,))
        r = [m.func.vmap(lambda a, b: a * b)(x, y.t()),
             m.func.vmap(lambda a, b: a @ b, in_dims=(0, 1))(x, y),
             m.func.vmap(lambda a, b: a + b, in_dims=(0, None))(x, z),
             m.func.vmap(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(x),
             m.func.vmap(lambda d: d["p"] * d["q"], in_dims=({"p": 0, "q": None},))({"p": x, "q": z}),
             m.func.vmap(m.func.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(1, None))(x, z[0]),
             m.func.vmap(lambda a, k=1: a * k, chunk_size=2)(x, k=3),
             m.func.vmap(lambda a: m.ones(2, dtype=m.float64))(x)]
        return r
    _check(fn)


def test_vmap_randomness():
    x = P.randn(3, 2)
    same = P.func.vmap(lambda a: a + P.rand(2), randomness="same")(P.zeros(3, 2))
    assert_same(same[0], same[1])
    diff = P.func.vmap(lambda a: a + P.rand(2), randomness="different")(P.zeros(3, 2))
    assert not bool((diff[0] == diff[1]).all())
    with pytest.raises(RuntimeError, match="randomness error mode"):
        P.func.vmap(lambda a: a + P.rand(2))(x)


def test_per_sample_grads_and_ensembles():
    def fn(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2)).double()
        (data,) = _tensors(m, (5, 3), seed=1)
        target = m.tensor([0, 1, 1, 0, 1])
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, t):
            out = m.func.functional_call(model, p, (x.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, t.unsqueeze(0))
        per_sample = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, data, target)
        models = [m.nn.Linear(3, 2).double() for _ in range(3)]
        sp, sb = m.func.stack_module_state(models)
        ens = m.func.vmap(lambda p, x: m.func.functional_call(models[0], p, (x,)), in_dims=(0, None))(sp, data)
        return per_sample, ens, {k: (v.shape, v.requires_grad) for k, v in sp.items()}, sb
    got = _check(fn)
    # each sample's gradient is the gradient of that sample's loss alone
    P.manual_seed(0)


def _message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _errors(m):
    x = m.randn(3)
    fn = m.func
    cases = [
        lambda: fn.grad(lambda a: a)(x),
        lambda: fn.grad(lambda a: 1.0)(x),
        lambda: fn.grad(lambda a: a.sum(), has_aux=True)(x),
        lambda: fn.grad(lambda a: a.sum(), argnums=1)(x),
        lambda: fn.grad(lambda a: a.sum(), argnums=1.0)(x),
        lambda: fn.grad(lambda a: a.sum(), argnums=())(x),
        lambda: fn.grad(lambda a, b: a.sum(), argnums=(0, 0))(x, x),
        lambda: fn.grad(lambda a: a.sum())(1.0),
        lambda: fn.vmap(lambda a: a)(1.0),
        lambda: fn.vmap(lambda a: a, in_dims=1)(x),
        lambda: fn.vmap(lambda a, b: a)(x, m.randn(4)),
        lambda: fn.vmap(lambda a: a, in_dims=None)(x),
        lambda: fn.vmap(lambda a: 1.0)(x),
        lambda: fn.vmap(lambda a: a, randomness="foo")(x),
        lambda: fn.vmap(lambda a: a, chunk_size=0)(x),
        lambda: fn.vmap(lambda a: a, in_dims="a")(x),
        lambda: fn.vmap(lambda a: a)(),
        lambda: fn.vjp(lambda a: a, 1.0),
        lambda: fn.jvp(lambda a: a, (x,), (m.randn(4),)),
        lambda: fn.jvp(lambda a: a, x, x),
        lambda: fn.jvp(lambda a: 1.0, (x,), (x,)),
    ]
    return [_message(c) for c in cases]


def test_errors():
    got = _errors(P)
    assert all(g is not None for g in got)
    if T is not None:
        expected = _errors(T)
        for g, e in zip(got, expected):
            assert g[0] == e[0], (g, e)
            if "TreeSpec" not in e[1]:
                assert g[1] == e[1]


def test_hessian_of_a_network_loss():
    """forward over reverse through the fused activations, norms and losses (their backward ops' forward formulas)"""
    def fn(m):
        F = m.nn.functional
        w, b, x = _tensors(m, (4, 3), (4,), (2, 3))
        target = m.tensor([1, 3])

        def loss(wb):
            h = F.linear(x, wb[:, :3], wb[:, 3])
            h = F.layer_norm(F.gelu(h) + F.silu(h) + m.tanh(h) + F.relu(h) + F.softplus(h), (4,))
            return F.cross_entropy(h, target) + F.mse_loss(h.softmax(-1), h.sigmoid())
        wb = m.cat([w, b[:, None]], 1)
        return m.func.hessian(loss)(wb), m.func.jacrev(m.func.jacrev(loss))(wb)
    got = _check(fn, rtol=1e-6, atol=1e-8)
    assert_same(got[0], got[1], rtol=1e-6, atol=1e-8)


def _tuples(x):
    return tuple(_tuples(i) for i in x) if isinstance(x, (tuple, list)) else x.detach()


def test_autograd_functional_forward_mode():
    """jacobian(strategy="forward-mode") and hessian(outer_jacobian_strategy="forward-mode") run on forward AD
    (torch returns lists there; the values are compared)"""
    def fn(m):
        x, y = _tensors(m, (3,), (2,))
        F = m.autograd.functional
        f = lambda a, b: (a.sin()[:2] * b, a.sum() * b.prod())  # noqa: E731
        return (_tuples(F.jacobian(f, (x, y), vectorize=True, strategy="forward-mode")),
                _tuples(F.hessian(lambda a, b: a.sin().sum() * b.prod(), (x, y), vectorize=True,
                                  outer_jacobian_strategy="forward-mode")),
                _tuples(F.hessian(lambda a: (a ** 3).sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode")))
    got = _check(fn)
    (x,) = _tensors(P, (3,))
    assert_same(got[2], P.diag(6 * x))
