"""Autograd semantics: the graph, the engine, grad modes, in-place rules, hooks, custom Functions,
checkpointing, anomaly mode and autograd.functional. Per-op gradients are in test_autograd_ops.py."""
import gc
import sys

import numpy as np
import pytest

import pyctorch as P
from conftest import requires_torch, assert_same, torch as T


def leaf(m, values, dtype=None):
    return m.tensor(values, dtype=dtype or m.float64, requires_grad=True)


# ---- the graph --------------------------------------------------------------------------------

def test_graph_structure_and_names():
    x = leaf(P, [1.0, 2.0])
    y = x * 2
    z = (y + 1).sum()
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None
    assert z.grad_fn.name() == "SumBackward0"
    add = z.grad_fn.next_functions[0][0]
    assert add.name() == "AddBackward0"
    mul = add.next_functions[0][0]
    assert mul.name() == "MulBackward0"
    acc, nr = mul.next_functions[0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and nr == 0
    assert repr(acc).startswith("<AccumulateGrad object at") and acc.variable is x
    assert mul.next_functions[1] == (None, 0)  # the Python scalar 2 needs no gradient
    # one accumulator per leaf
    assert (x + 1).grad_fn.next_functions[0][0] is acc
    assert isinstance(z.grad_fn.metadata, dict)
    assert isinstance(z.grad_fn, P.autograd.graph.Node)


def test_requires_grad_propagation_and_integer_outputs():
    x = leaf(P, [1.0, -2.0, 3.0])
    assert (x > 0).requires_grad is False and (x > 0).grad_fn is None
    assert x.argmax().requires_grad is False
    v, i = x.max(0)
    assert v.requires_grad and not i.requires_grad
    assert (x.detach() * 2).requires_grad is False
    assert P.ones(2).requires_grad is False
    with pytest.raises(RuntimeError, match="floating point"):
        P.ones(2, dtype=P.int64).requires_grad_()


@requires_torch
def test_backward_accumulates_and_matches_torch():
    for m in (P, T):
        x = leaf(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        w = leaf(m, [0.5, -1.0, 2.0])
        (x * w).sum().backward()
        (x * w).pow(2).mean().backward()
        if m is P:
            px, pw = x.grad, w.grad
        else:
            assert_same(px, x.grad)
            assert_same(pw, w.grad)


def test_grad_function_returns_and_does_not_accumulate():
    x = leaf(P, [1.0, 2.0, 3.0])
    y = (x ** 3).sum()
    (g,) = P.autograd.grad(y, x)
    np.testing.assert_allclose(g.tolist(), [3.0, 12.0, 27.0])
    assert x.grad is None
    a, b = leaf(P, [1.0]), leaf(P, [2.0])
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        P.autograd.grad((a * 2).sum(), [a, b])
    ga, gb = P.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)
    assert gb is None and ga.tolist() == [2.0]
    ga, gb = P.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)
    assert gb.tolist() == [0.0]


def test_grad_of_non_leaf_and_grad_outputs():
    x = leaf(P, [1.0, 2.0])
    h = x * 3
    y = h * h
    (gh,) = P.autograd.grad(y, h, grad_outputs=P.ones(2, dtype=P.float64))
    assert gh.tolist() == [6.0, 12.0]


def test_backward_inputs_restricts_accumulation():
    a, b = leaf(P, [1.0]), leaf(P, [2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None
    h = a * 3
    h.retain_grad()
    (h * b).sum().backward(inputs=[h])
    assert h.grad.tolist() == [2.0]


def test_retain_grad_and_grad_setter():
    x = leaf(P, [1.0, 2.0])
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]
    x.grad = None
    assert x.grad is None
    x.grad = P.zeros(2, dtype=P.float64)
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = P.zeros(3, dtype=P.float64)


def test_broadcast_inputs_get_summed_gradients():
    x = leaf(P, [[1.0], [2.0]])       # (2, 1)
    w = leaf(P, [1.0, 2.0, 3.0])      # (3,)
    (x * w).sum().backward()
    assert x.grad.tolist() == [[6.0], [6.0]]
    assert w.grad.tolist() == [3.0, 3.0, 3.0]


def test_version_counter_and_base():
    x = P.zeros(3)
    v = x[1:]
    assert v._base is x and x._base is None
    assert x._version == 0
    x.add_(1)
    assert x._version == 1 and v._version == 1
    d = x.detach()
    d.add_(1)
    assert x._version == 2
    data = x.data
    data.add_(1)
    assert x._version == 2  # .data has its own counter


# ---- classic errors ----------------------------------------------------------------------------

def test_backward_twice_raises_torchs_error():
    x = leaf(P, [1.0, 2.0])
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_non_scalar_backward_without_gradient():
    x = leaf(P, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        P.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(P.ones(3, dtype=P.float64))


def test_inplace_on_saved_tensor_raises():
    x = leaf(P, [1.0, 2.0])
    y = x * 1
    z = y.exp()         # saves its result
    w = y * y           # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
    a = x.sigmoid()
    b = a * 2
    del b
    a.mul_(2)           # a's own node saved a as its output
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        a.sum().backward()


def test_inplace_on_leaf_and_view_of_leaf_raise():
    x = leaf(P, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 3.0
    with P.no_grad():
        x.add_(1)  # allowed without grad mode
    assert x.tolist() == [2.0, 3.0]


def test_out_argument_with_grad_raises():
    x = leaf(P, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        P.add(x, 1, out=P.empty(2, dtype=P.float64))


# ---- in-place and views -----------------------------------------------------------------------

@requires_torch
def test_inplace_on_view_rebases_history():
    def run(m):
        x = leaf(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        y = x * 1
        y[:, 0] *= 2
        y[1].add_(y[0])
        z = y.narrow(1, 1, 2)
        z.mul_(3)
        (y * y).sum().backward()
        return x.grad, y.grad_fn.name()
    (pg, pn), (tg, tn) = run(P), run(T)
    assert_same(pg, tg)
    assert pn == tn == "torch::autograd::CopySlices"


@requires_torch
def test_setitem_with_grad():
    def run(m):
        x = leaf(m, [1.0, 2.0, 3.0, 4.0])
        v = leaf(m, [10.0, 20.0])
        y = x * 2
        y[m.tensor([0, 2])] = v * 3
        y[1:2] = v[:1]
        (y * y).sum().backward()
        return x.grad, v.grad
    for p, t in zip(run(P), run(T)):
        assert_same(p, t)


@requires_torch
def test_getitem_with_repeated_indices_accumulates():
    def run(m):
        x = leaf(m, [1.0, 2.0, 3.0])
        x[[0, 0, 2, 0]].sum().backward()
        return x.grad
    assert_same(run(P), run(T))


# ---- grad modes --------------------------------------------------------------------------------

def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf(P, [1.0])
    with P.no_grad():
        assert not P.is_grad_enabled()
        assert (x * 2).requires_grad is False
        with P.enable_grad():
            assert (x * 2).requires_grad
    assert P.is_grad_enabled()

    @P.no_grad()
    def f():
        return x * 2
    assert f().requires_grad is False

    P.set_grad_enabled(False)
    assert not P.is_grad_enabled()
    P.set_grad_enabled(True)
    with P.set_grad_enabled(False):
        assert (x * 2).grad_fn is None
    assert P.is_grad_enabled()
    with P.inference_mode():
        assert (x * 2).requires_grad is False
        assert P.is_inference_mode_enabled()
    assert not P.is_inference_mode_enabled()

    @P.no_grad()
    def gen():
        yield (x * 2).requires_grad
    assert list(gen()) == [False]


def test_detach_and_data_share_storage():
    x = leaf(P, [1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.data_ptr() == y.data_ptr()
    assert x.data.requires_grad is False and x.data.data_ptr() == x.data_ptr()


# ---- higher order ------------------------------------------------------------------------------

@requires_torch
def test_double_backward_of_gradient_norm_matches_torch():
    def run(m):
        m.manual_seed(0)
        w1 = m.randn(4, 3, dtype=m.float64).requires_grad_()
        w2 = m.randn(2, 4, dtype=m.float64).requires_grad_()
        x = m.randn(5, 3, dtype=m.float64)
        loss = (w2 @ (w1 @ x.t()).tanh()).sigmoid().pow(2).mean()
        g1, g2 = m.autograd.grad(loss, (w1, w2), create_graph=True)
        penalty = g1.pow(2).sum() + g2.pow(2).sum()
        penalty.backward()
        return w1.grad, w2.grad
    for p, t in zip(run(P), run(T)):
        assert_same(p, t)


@requires_torch
def test_hessian_vector_product_matches_torch():
    def run(m):
        x = leaf(m, [0.3, -1.2, 2.0])
        v = m.tensor([1.0, 0.5, -2.0], dtype=m.float64)
        y = (x.exp() * x.sin()).sum() + (x[0] * x[2]) ** 2
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (hv,) = m.autograd.grad(g, x, grad_outputs=v)
        return hv
    assert_same(run(P), run(T))


def test_gradcheck_and_gradgradcheck():
    x = leaf(P, [[0.2, -0.4], [1.1, 0.7]])
    w = leaf(P, [0.3, -0.9])
    assert P.autograd.gradcheck(lambda a, b: (a @ b).tanh() * a.sum(), (x, w))
    assert P.autograd.gradgradcheck(lambda a, b: (a * b).exp().sum(1), (x, w))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        class Wrong(P.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3
        P.autograd.gradcheck(Wrong.apply, (x,))


# ---- the engine --------------------------------------------------------------------------------

def test_long_chain_neither_overflows_backward_nor_teardown():
    x = leaf(P, [1.0], dtype=P.float32)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    y = x
    for _ in range(100_000):
        y = y + 0.0
    del y  # iterative teardown: no recursion per node
    gc.collect()


def test_diamond_graph_sums_gradients():
    x = leaf(P, [2.0])
    a = x * 3
    b = a * a
    c = a + b
    c.sum().backward()
    assert x.grad.tolist() == [3.0 + 2 * 6.0 * 3.0]


def test_multiple_roots_and_shared_subgraph():
    x = leaf(P, [1.0, 2.0])
    y = x * 2
    P.autograd.backward([y.sum(), (y * y).sum()])
    assert x.grad.tolist() == [2.0 + 8.0, 2.0 + 16.0]


def test_returned_gradient_validation():
    class BadShape(P.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return P.ones(5, dtype=g.dtype)
    x = leaf(P, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        BadShape.apply(x).sum().backward()


# ---- hooks ------------------------------------------------------------------------------------

def test_tensor_hooks_and_handles():
    x = leaf(P, [1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    h2 = x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [30.0, 30.0]
    h.remove()
    h2.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]
    y = x * 2
    y.register_hook(lambda g: g * 0.5)
    x.grad = None
    (y * y).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        P.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook_and_node_hooks():
    x = leaf(P, [1.0])
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.tolist()))
    y = x * 2
    pre, post = [], []
    y.grad_fn.register_prehook(lambda go: pre.append(go[0].tolist()))
    y.grad_fn.register_hook(lambda gi, go: post.append((gi[0].tolist(), go[0].tolist())))
    (y * 5).sum().backward()
    assert calls == [[10.0]]
    assert pre == [[5.0]] and post == [([10.0], [5.0])]


# ---- custom Functions --------------------------------------------------------------------------

class Exp(P.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


class MulConst(P.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_function_forward_backward_and_setup_context():
    x = leaf(P, [0.0, 1.0])
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    (y * MulConst.apply(x, 3.0)).sum().backward()
    e = np.exp([0.0, 1.0])
    np.testing.assert_allclose(x.grad.tolist(), e * 3 * np.array([0.0, 1.0]) + e * 3)


def test_function_ctx_features():
    class F(P.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_non_differentiable_called = True
            idx = a.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.set_materialize_grads(False)
            ctx.flags = ctx.needs_input_grad
            return a * b, idx

        @staticmethod
        def backward(ctx, g, gidx):
            assert gidx is None
            return g * 2, None

    a = leaf(P, [1.0, 3.0])
    b = P.tensor([1.0, 1.0], dtype=P.float64)
    y, idx = F.apply(a, b)
    assert y.grad_fn.flags == (True, False)
    assert not idx.requires_grad
    y.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_function_mark_dirty_and_straight_through():
    class AddOneInplace(P.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    class RoundSTE(P.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.round()

        @staticmethod
        @P.autograd.function.once_differentiable
        def backward(ctx, g):
            return g

    x = leaf(P, [1.4, 2.6])
    y = x * 1
    z = AddOneInplace.apply(y)
    assert z is y
    RoundSTE.apply(z).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_function_saved_tensor_checks():
    x = leaf(P, [1.0])
    y = Exp.apply(x * 1)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


# ---- anomaly mode ------------------------------------------------------------------------------

def test_detect_anomaly_names_the_op():
    x = leaf(P, [0.0, 1.0])
    with P.autograd.detect_anomaly():
        y = x.sqrt()  # d sqrt at 0 = inf; times 0 grad = nan
        with pytest.warns(UserWarning, match="Traceback of forward call"):
            with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan values"):
                (y * 0).sum().backward()
    assert not P.autograd.is_anomaly_enabled()


# ---- checkpointing ----------------------------------------------------------------------------

def _block(x, w):
    for _ in range(6):
        x = (x @ w).tanh()
    return x


def test_checkpoint_matches_and_saves_memory():
    from pyctorch.utils.checkpoint import checkpoint
    P.manual_seed(0)
    w = (P.randn(256, 256) * 0.05).requires_grad_()
    x = P.randn(512, 256, requires_grad=True)

    def run(use_ckpt):
        w.grad, x.grad = None, None
        P._C._cpu_memory_stats(True)
        base = P._C._cpu_memory_stats()[0]
        h = x
        for _ in range(4):
            h = checkpoint(_block, h, w, use_reentrant=False) if use_ckpt else _block(h, w)
        peak = P._C._cpu_memory_stats()[1] - base
        h.sum().backward()
        return x.grad.clone(), w.grad.clone(), peak

    gx0, gw0, peak_plain = run(False)
    gx1, gw1, peak_ckpt = run(True)
    np.testing.assert_allclose(gx0.tolist(), gx1.tolist(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw0.tolist(), gw1.tolist(), rtol=1e-4, atol=1e-5)
    assert peak_ckpt < peak_plain / 3, (peak_ckpt, peak_plain)


# ---- autograd.functional -----------------------------------------------------------------------

@requires_torch
def test_functional_jacobian_hessian_vjp_jvp():
    def f(m):
        return lambda a, b: (a.exp() * b).sum(0) + a[0] * b[1]

    def run(m):
        a = m.tensor([[0.1, 0.2], [0.3, -0.4]], dtype=m.float64)
        b = m.tensor([[1.0, -2.0], [0.5, 0.25]], dtype=m.float64)
        F = m.autograd.functional
        jac = F.jacobian(f(m), (a, b))
        hes = F.hessian(lambda x: (x.sin() * x).sum(), a)
        out, vj = F.vjp(f(m), (a, b), m.ones(2, dtype=m.float64))
        out2, jv = F.jvp(f(m), (a, b), (m.ones(2, 2, dtype=m.float64), m.zeros(2, 2, dtype=m.float64)))
        return [jac[0], jac[1], hes, out, vj[0], vj[1], out2, jv]
    for p, t in zip(run(P), run(T)):
        assert_same(p, t)


# ---- a hand-written MLP backward equals autograd ------------------------------------------------

def test_manual_backprop_mlp_matches_autograd():
    P.manual_seed(1)
    x = P.randn(8, 5, dtype=P.float64)
    t = P.randn(8, 3, dtype=P.float64)
    w1 = P.randn(5, 7, dtype=P.float64).requires_grad_()
    w2 = P.randn(7, 3, dtype=P.float64).requires_grad_()
    h = (x @ w1).tanh()
    y = h @ w2
    loss = ((y - t) ** 2).mean()
    loss.backward()
    with P.no_grad():
        dy = 2 * (y - t) / y.numel()
        dw2 = h.t() @ dy
        dh = dy @ w2.t()
        dw1 = x.t() @ (dh * (1 - h * h))
    np.testing.assert_allclose(w1.grad.tolist(), dw1.tolist(), rtol=1e-12)
    np.testing.assert_allclose(w2.grad.tolist(), dw2.tolist(), rtol=1e-12)


def test_no_reference_cycle_per_op():
    # a saved output must not own its node: the graph is freed by refcounting alone
    x = leaf(P, [1.0])
    y = x.exp()
    node = y.grad_fn
    import weakref
    r = weakref.ref(node)
    del node, y
    assert r() is None
    assert sys.getrefcount(x) >= 2


@requires_torch
def test_stale_views_get_history_from_their_base():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[0:2]
        w = y[1:]
        y.mul_(2)          # v and w were made before this write
        w.add_(1)
        (v.sum() * 3 + w.sum()).backward()
        return x.grad, v.grad_fn.name()
    (pg, pn), (tg, tn) = run(P), run(T)
    assert_same(pg, tg)
    assert pn == tn


def test_every_output_of_a_many_output_op_gets_history():
    x = P.arange(100.0, requires_grad=True)
    parts = x.split(1)  # 100 outputs of one node
    assert all(p.requires_grad for p in parts)
    sum(p.sum() * i for i, p in enumerate(parts)).backward()
    assert x.grad.tolist() == [float(i) for i in range(100)]


def test_input_read_only_by_unneeded_formulas_is_not_saved():
    # torch saves `input` of input * other only for other's gradient: when other needs none, an
    # in-place change of input after the op does not break backward
    x = P.ones(3, requires_grad=True)
    b = x * 1
    z = b * 2.0
    b.add_(1)
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    # ... while a tensor a needed formula reads is still version-checked
    w = P.ones(3, requires_grad=True)
    y = P.ones(3)
    out = w * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("lib_name", ["pyctorch", "torch"])
def test_grad_runs_leaf_hooks_on_the_captured_gradient(lib_name):
    """autograd.grad of a leaf: the leaf's hooks see the gradient and their result is what grad() returns
    (the leaf's .grad stays untouched); hooks of a non-leaf input run likewise."""
    if lib_name == "torch" and T is None:
        pytest.skip("torch is not installed (oracle comparisons skip)")
    lib = P if lib_name == "pyctorch" else T
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: (seen.append(g.tolist()), g * 10)[1])
    x.register_hook(lambda g: None)  # a hook returning None keeps the gradient
    g, = lib.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [20.0, 40.0] and seen == [[2.0, 4.0]] and x.grad is None
    z = x * 3
    z.register_hook(lambda g: g + 1)
    gz, = lib.autograd.grad((z * 2).sum(), z)
    assert gz.tolist() == [3.0, 3.0]
    (x * x).sum().backward()  # backward() still runs the hooks once, into .grad
    assert x.grad.tolist() == [20.0, 40.0] and len(seen) == 2


@requires_torch
@pytest.mark.parametrize("case", ["batch_norm", "batch_norm_eval", "group_norm", "layer_norm", "rms_norm", "max_dim"])
def test_in_place_after_an_op_that_saves_only_some_outputs(case):
    """Ops save what torch saves: batch/group/layer/RMS norm keep their statistics, not their output, so an in-place
    ReLU after them (every ResNet) backpropagates as in torch; max(dim) keeps its indices, not its values."""
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(4, 3, 5, 5, dtype=lib.float64).requires_grad_()
        if case == "max_dim":
            y = x.max(dim=1).values
        else:
            norm = {"batch_norm": lambda: lib.nn.BatchNorm2d(3), "batch_norm_eval": lambda: lib.nn.BatchNorm2d(3).eval(),
                    "group_norm": lambda: lib.nn.GroupNorm(1, 3), "layer_norm": lambda: lib.nn.LayerNorm([5, 5]),
                    "rms_norm": lambda: lib.nn.RMSNorm([5, 5])}[case]().double()
            y = norm(x)
        y = lib.relu_(y)
        (y * lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape)).sum().backward()
        return x.grad
    assert_same(run(P), run(T))


def _modified_cases(lib):
    """In-place changes to saved tensors; each returns the version-check error's text."""
    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    def saved_output():  # exp saves its result: named by exp's node
        y = lib.ones(3, requires_grad=True).exp()
        y.add_(1)
        y.sum().backward()

    def saved_input():  # mul saves its inputs: named by the tensor's grad_fn now (the add_)
        y = lib.ones(3, requires_grad=True) * 1
        z = y * y
        y.add_(1)
        z.sum().backward()

    def leaf():  # a leaf has no grad_fn: no "which is" clause
        w = lib.ones(3, requires_grad=True)
        z = w * w
        with lib.no_grad():
            w.add_(1)
        z.sum().backward()

    def custom():  # a Function's saved output: its node, "SqBackward" shortened as torch does
        y = Sq.apply(lib.ones(3, requires_grad=True))
        y.add_(1)
        y.sum().backward()

    def through_view():  # an in-place change through a view: CopySlices
        y = lib.ones(3, 3, requires_grad=True).clone()
        z = y * y
        y[1].mul_(2)
        z.sum().backward()

    out = {}
    for name, fn in [("saved_output", saved_output), ("saved_input", saved_input), ("leaf", leaf), ("custom", custom),
                     ("through_view", through_view)]:
        with pytest.raises(RuntimeError) as info:
            fn()
        out[name] = str(info.value)
    return out


def test_modified_saved_tensor_error_reads_as_torch():
    """torch 2.13's wording: the tensor type, the node that made the tensor with its name shortened ("Exp" for
    ExpBackward0), the versions, and the anomaly-mode hint."""
    hint = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")
    head = "one of the variables needed for gradient computation has been modified by an inplace operation: "
    want = {
        "saved_output": head + "[torch.FloatTensor [3]], which is output 0 of Exp, is at version 1; expected version "
                               "0 instead." + hint,
        "saved_input": head + "[torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 "
                              "instead." + hint,
        "leaf": head + "[torch.FloatTensor [3]] is at version 1; expected version 0 instead." + hint,
        "custom": head + "[torch.FloatTensor [3]], which is output 0 of Sq, is at version 1; expected version 0 "
                         "instead." + hint,
        "through_view": head + "[torch.FloatTensor [3, 3]], which is output 0 of torch::autograd::CopySlices, is at "
                               "version 1; expected version 0 instead." + hint,
    }
    assert _modified_cases(P) == want
    if T is not None:
        assert _modified_cases(T) == want


def test_outputs_are_saved_only_for_the_gradients_that_read_them():
    """pow's result feeds only the exponent's gradient: with a number as the exponent torch does not save it
    (PowBackward0), so an in-place change of the result leaves backward intact; with a tensor exponent (PowBackward1)
    it is saved and the change is caught, whether or not the exponent needs a gradient. exp's result feeds the
    input's gradient and stays checked."""
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.pow(2.5)
        y.add_(1)
        y.sum().backward()
        got = [x.grad.tolist()]
        x.grad = None
        z = x.pow(2)
        z.mul_(2)
        z.sum().backward()
        got.append(x.grad.tolist())
        for e in (lib.tensor([2.0, 2.0, 2.0]), lib.tensor([2.0, 2.0, 2.0], requires_grad=True)):
            w = x.pow(e)
            w.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                w.sum().backward()
        v = x.exp()
        v.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            v.sum().backward()
        return got

    ours = run(P)
    assert np.allclose(ours[0], [2.5 * 1.0, 2.5 * 2.0 ** 1.5, 2.5 * 3.0 ** 1.5])
    assert np.allclose(ours[1], [4.0, 8.0, 12.0])
    if T is not None:
        assert np.allclose(ours, run(T))
