"""autograd.grad(..., is_grads_batched=True) (a loop over the batch until pyctorch has vmap) and
autograd.functional.jacobian/hessian(..., vectorize=True), which use it as torch does."""
import pytest

import pyctorch as P
from conftest import requires_torch, assert_same, torch as T


def _err(f, m):
    try:
        f(m)
    except Exception as e:  # noqa: BLE001  (the error is the result)
        return type(e), str(e)
    return None


# ---- hand-checked values (always run) -----------------------------------------------------------

def test_batched_vjp_rows_of_the_jacobian():
    x = P.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = P.autograd.grad(x ** 2, x, P.eye(3), is_grads_batched=True)
    assert g.tolist() == [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]]
    assert x.grad is None  # grad() accumulates nothing


def test_batched_two_outputs_and_unused_input():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    y = P.tensor([3.0, 4.0], requires_grad=True)
    z = P.tensor(5.0, requires_grad=True)
    v = P.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    s = P.tensor([1.0, 2.0, 0.0])
    gx, gy, gz = P.autograd.grad((x * y, (x ** 3).sum()), (x, y, z), (v, s), is_grads_batched=True,
                                 allow_unused=True)
    # d(x*y)/dx = y, d(sum x^3)/dx = 3x^2 = [3, 12]
    # row b: y * v[b] + 3x^2 * s[b]
    assert gx.tolist() == [[3.0 + 3.0, 0.0 + 12.0], [0.0 + 6.0, 4.0 + 24.0], [3.0, 4.0]]
    assert gy.tolist() == [[1.0, 0.0], [0.0, 2.0], [1.0, 2.0]]
    assert gz is None
    mz = P.autograd.grad((x * y,), (x, z), (v,), is_grads_batched=True, materialize_grads=True)[1]
    assert tuple(mz.shape) == ()  # torch materializes the input's own shape, no batch dim


def test_batched_create_graph_second_derivative():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    (g,) = P.autograd.grad(x ** 3, x, P.tensor([[1.0, 0.0], [0.0, 1.0]]), is_grads_batched=True,
                           create_graph=True)
    assert g.requires_grad and g.tolist() == [[3.0, 0.0], [0.0, 12.0]]
    (h,) = P.autograd.grad(g.sum(), x)
    assert h.tolist() == [6.0, 12.0]  # 6x


def test_batched_retain_graph_default_frees_the_graph():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp() * 2
    P.autograd.grad(y, x, P.ones(3, 2), is_grads_batched=True)  # all 3 vectors need the graph
    with pytest.raises(RuntimeError, match="second time"):
        P.autograd.grad(y, x, P.ones(2))


def test_batched_errors():
    x = P.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"got sizes \[2, 3\] for the mapped dimension"):
        P.autograd.grad((x * 2, x * 3), x, (P.ones(2, 2), P.ones(3, 2)), is_grads_batched=True)
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of torch.Size\(\[\]\) and output\[0\] has "
                                           r"a shape of torch.Size\(\[2\]\)"):
        P.autograd.grad(x * 2, x, P.ones(4, 3), is_grads_batched=True)


def test_jacobian_vectorized_hand_values():
    x = P.tensor([1.0, 2.0])
    j = P.autograd.functional.jacobian(lambda a: P.stack([a[0] * a[1], a[0] + 3 * a[1], a[1] ** 2]), x,
                                       vectorize=True)
    assert j.tolist() == [[2.0, 1.0], [1.0, 3.0], [0.0, 4.0]]
    h = P.autograd.functional.hessian(lambda a: (a ** 3).sum() + a[0] * a[1], x, vectorize=True)
    assert h.tolist() == [[6.0, 1.0], [1.0, 12.0]]


def test_fill_tensor_value_gets_the_sum_of_the_gradient():
    x = P.zeros(2, 3, requires_grad=True)
    v = P.tensor(1.5, requires_grad=True)
    y = (x * 1).fill_(v)
    (y * P.arange(6.0).reshape(2, 3)).sum().backward()
    assert v.grad.item() == 15.0 and x.grad.tolist() == [[0.0] * 3] * 2


# ---- against torch -------------------------------------------------------------------------------

def _grad_case(m, fn, shapes, go_shapes, create_graph=False, seed=0):
    g = m.Generator().manual_seed(seed)
    ins = tuple(m.randn(s, generator=g, dtype=m.float64).requires_grad_() for s in shapes)
    outs = fn(m, *ins)
    gos = tuple(m.randn(s, generator=g, dtype=m.float64) for s in go_shapes)
    r = m.autograd.grad(outs, ins, gos, is_grads_batched=True, create_graph=create_graph, allow_unused=True)
    if create_graph:
        second = m.autograd.grad(sum((t * t).sum() for t in r if t is not None), ins, allow_unused=True)
        return r, second
    return r


CASES = [
    ("tanh", lambda m, x: x.tanh(), [(3, 4)], [(5, 3, 4)]),
    ("matmul", lambda m, a, b: a @ b, [(3, 4), (4, 2)], [(6, 3, 2)]),
    ("two_outputs", lambda m, a, b: (a.sin() * b, (a * b).sum(0)), [(2, 3), (2, 3)], [(4, 2, 3), (4, 3)]),
    ("softmax", lambda m, x: m.softmax(x, -1), [(2, 5)], [(3, 2, 5)]),
    ("scalar_out", lambda m, x: (x ** 2).sum(), [(4,)], [(7,)]),
    ("batch_of_one", lambda m, x: x.exp()[1:], [(4,)], [(1, 3)]),
]


@requires_torch
@pytest.mark.parametrize("name,fn,shapes,gos", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_grad_vs_torch(name, fn, shapes, gos, create_graph):
    p = _grad_case(P, fn, shapes, gos, create_graph)
    t = _grad_case(T, fn, shapes, gos, create_graph)
    assert_same(p, t)


def _y(m):
    return m.ones(1, requires_grad=True)


ERRORS = {
    "batch_sizes": lambda m, x: m.autograd.grad((x * 2, x * 3), x, (m.ones(2, 2), m.ones(3, 2)), is_grads_batched=True),
    "shape": lambda m, x: m.autograd.grad(x * 2, x, m.ones(4, 3), is_grads_batched=True),
    "second_shape": lambda m, x: m.autograd.grad((x * 2, x * 3), x, (m.ones(4, 2), m.ones(4, 1)),
                                                 is_grads_batched=True),
    "zero_d_grad": lambda m, x: m.autograd.grad(x * 2, x, m.tensor(1.0), is_grads_batched=True),
    "empty_batch": lambda m, x: m.autograd.grad(x * 2, x, m.ones(0, 2), is_grads_batched=True),
    "implicit_scalar": lambda m, x: m.autograd.grad(x.sum(), x, is_grads_batched=True),
    "implicit_nonscalar": lambda m, x: m.autograd.grad(x * 2, x, is_grads_batched=True),
    "not_a_tensor": lambda m, x: m.autograd.grad(x * 2, x, [3], is_grads_batched=True),
    "none_grad_output": lambda m, x: m.autograd.grad((x * 2, m.ones(2)), x, (m.ones(3, 2), None),
                                                     is_grads_batched=True),
    "no_outputs": lambda m, x: m.autograd.grad((), x, (), is_grads_batched=True),
    "unused": lambda m, x: m.autograd.grad(x * 2, (x, _y(m)), m.ones(3, 2), is_grads_batched=True),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_batched_errors_vs_torch(name):
    def f(m):
        return ERRORS[name](m, m.ones(2, requires_grad=True))
    pe, te = _err(f, P), _err(f, T)
    assert te is not None and pe is not None, (pe, te)
    assert pe[0].__name__ == te[0].__name__ and pe[1] == te[1], (pe, te)


def _f_multi(m):
    return lambda a, b: (a.exp() * b[:3], (a ** 2).sum().reshape(1), m.zeros(2))


JAC_CASES = [
    ("sin", lambda m: (lambda a: a.sin()), [(3, 2)]),
    ("reduce", lambda m: (lambda a: a.exp().sum(dim=1)), [(2, 2)]),
    ("two_in", lambda m: (lambda a, b: 2 * a.exp() + 3 * b), [(2,), (2,)]),
    ("multi_out_const", _f_multi, [(3,), (4,)]),
    ("unused_in", lambda m: (lambda a, b: (a * a,)), [(3,), (2, 2)]),
]


@requires_torch
@pytest.mark.parametrize("name,mk,shapes", JAC_CASES, ids=[c[0] for c in JAC_CASES])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_vectorize_vs_torch(name, mk, shapes, create_graph):
    def run(m):
        g = m.Generator().manual_seed(1)
        ins = tuple(m.randn(s, generator=g, dtype=m.float64) for s in shapes)
        arg = ins if len(ins) > 1 else ins[0]
        vec = m.autograd.functional.jacobian(mk(m), arg, create_graph=create_graph, vectorize=True)
        loop = m.autograd.functional.jacobian(mk(m), arg, create_graph=create_graph)
        return vec, loop
    (pv, pl), (tv, tl) = run(P), run(T)
    assert_same(pv, tv)
    assert_same(pv, pl)  # the vectorized Jacobian is the row-by-row one


@requires_torch
def test_hessian_vectorize_and_jacobian_options_vs_torch():
    def run(m):
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64)
        h = m.autograd.functional.hessian(lambda a: (a.sin() * a).sum(), x, vectorize=True)
        fwd = m.autograd.functional.jacobian(lambda a: a.exp(), x, vectorize=True, strategy="forward-mode")
        return h, fwd
    assert_same(run(P), run(T))
    for bad in (dict(strategy="sideways"), dict(strategy="forward-mode"),
                dict(strategy="forward-mode", vectorize=True, create_graph=True), dict(vectorize=True, strict=True)):
        def f(m):
            return m.autograd.functional.jacobian(lambda a: a * 2, m.ones(2), **bad)
        pe, te = _err(f, P), _err(f, T)
        assert te is not None and pe is not None and pe[0].__name__ == te[0].__name__ and pe[1] == te[1], (bad, pe, te)


@requires_torch
def test_fill_tensor_value_grad_vs_torch():
    def run(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        v = m.tensor(0.25, dtype=m.float64, requires_grad=True)
        y = (x * 1).t().fill_(v)
        (y * y.detach().cumsum(0)).sum().backward()
        return x.grad, v.grad
    assert_same(run(P), run(T))


def test_unused_input_message_names_its_index():
    x, y = P.ones(2, requires_grad=True), P.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="^The differentiated Tensor at index 0 appears to not have been used in the "
                                           "graph. Set allow_unused=True if this is the desired behavior.$"):
        P.autograd.grad((x * 2).sum(), (y, x))


JAC_EDGE = {
    "empty_out": lambda m: m.autograd.functional.jacobian(lambda a: a[:0] * 2, m.ones(3), vectorize=True),
    "empty_in": lambda m: m.autograd.functional.jacobian(lambda a: a.sum().reshape(1) + 1, m.ones(0), vectorize=True),
    "const_out": lambda m: m.autograd.functional.jacobian(lambda a: m.ones(2), m.ones(3), vectorize=True),
    "scalar_out": lambda m: m.autograd.functional.jacobian(lambda a: (a * a).sum(), m.arange(3.0), vectorize=True),
    "tuple_in": lambda m: m.autograd.functional.jacobian(lambda a, b: (a * b).sum(), (m.arange(2.0), m.tensor(3.0)),
                                                         vectorize=True),
    "hessian_tuple": lambda m: m.autograd.functional.hessian(lambda a, b: (a * a * b).sum(),
                                                             (m.tensor([1.0, 2.0]), m.tensor(3.0)), vectorize=True),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(JAC_EDGE))
def test_jacobian_vectorize_edges_vs_torch(name):
    def run(m):
        try:
            return JAC_EDGE[name](m)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    p, t = run(P), run(T)
    if isinstance(t, tuple) and isinstance(t[0], str):
        assert p == t
    else:
        assert_same(p, t)
