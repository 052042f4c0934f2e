"""torch.func.vmap with batching rules (Note [vmap batching rules]): against torch.func.vmap over many ops, the
compositions with the autodiff transforms, and checks that ruled ops run once (not per sample) while the others
take the labelled fallback, which warns."""
import warnings

import pytest

import pyctorch as P
from pyctorch._functorch import batching_rules
from conftest import assert_same, torch as T


def _tensors(m, *shapes, seed=0):
    g = m.Generator().manual_seed(seed)
    return [m.randn(s, generator=g, dtype=m.float64) for s in shapes]


def _check(fn, no_fallback=True, **kw):
    """fn(m) in pyctorch against torch; with no_fallback, no op of fn's pyctorch run went per sample."""
    batching_rules.fallback_calls.clear()
    got = fn(P)
    if no_fallback:
        assert batching_rules.fallback_calls == [], batching_rules.fallback_calls
    if T is not None:
        assert_same(got, fn(T), **kw)
    return got


def _vm(m, f, *xs, **kw):
    return m.func.vmap(f, **kw)(*xs)


# ---- one function per op family: (name, fn(m, x, y, v, s)) with x: (5, 3, 4), y: (5, 4), v: (4,), s: (5,)
CASES = {
    "pointwise_ranks": lambda m, x, y, v, s: _vm(m, lambda a, b, c: a * b - c.exp() + 2, x, y, s),
    "pointwise_unbatched": lambda m, x, y, v, s: _vm(m, lambda a, b: (a + b).tanh() / (b.abs() + 1), x, v,
                                                     in_dims=(0, None)),
    "where_clamp": lambda m, x, y, v, s: _vm(m, lambda a, b: m.where(a > 0, a, b).clamp(-0.5, 0.5), x, y),
    "addcmul_lerp": lambda m, x, y, v, s: _vm(m, lambda a, b, c: m.addcmul(a, b, c, value=0.5).lerp(b, 0.3),
                                              x, y, s),
    "scalar_tensor_ops": lambda m, x, y, v, s: _vm(m, lambda a, c: (a * c, 2 - a, a ** 2, 1 / (a.abs() + 1)), x, s),
    "inplace": lambda m, x, y, v, s: _vm(m, lambda a, b: a.clone().mul_(2).add_(b), x, y),
    "reductions": lambda m, x, y, v, s: _vm(m, lambda a: (
        a.sum(), a.sum(0), a.sum((0, 1), keepdim=True), a.mean(-1), a.amax(1, keepdim=True), a.argmax(),
        a.argmax(0), a.std(1), a.var(), a.norm(), a.norm(dim=1), a.logsumexp(1), a.prod(1), a.max(),
        a.max(1).values, a.min(0)[1], a.all(), (a > 0).any(1), a.mean(dim=None, keepdim=True)), x),
    "scans_sort": lambda m, x, y, v, s: _vm(m, lambda a: (
        a.cumsum(0), a.cumprod(-1), a.sort(1).values, a.fliplr(), a.flipud(), a.msort(), a.sort(0, descending=True)[1], a.topk(2, 0).values,
        a.softmax(0), a.log_softmax(-1), a.flip(0), a.roll(1, 1)), x),
    "views": lambda m, x, y, v, s: _vm(m, lambda a: (
        a.view(-1), a.reshape(4, 3), a.flatten(), a.unflatten(1, (2, 2)), a.permute(1, 0), a.transpose(0, 1),
        a.t(), a.T, a.movedim(0, 1), a.unsqueeze(0), a.unsqueeze(-1).squeeze(), a.expand(2, 3, 4),
        a.select(1, 2), a.narrow(1, 1, 2), a.diagonal(), a.contiguous(), a.clone(), a.detach(), a.float(),
        a.to(m.float32)), x),
    "splits": lambda m, x, y, v, s: _vm(m, lambda a: (a.split(2, 1), a.chunk(3, 0), a.unbind(1)), x),
    "indexing": lambda m, x, y, v, s: _vm(m, lambda a: (
        a[0], a[:, 1], a[..., ::2], a[None, 1:, -1], a[m.tensor([0, 2])], a[:, m.tensor([1, 3])],
        a[:, [0, 0]], a[1, m.tensor([1, 2])], a[m.tensor([0, 1]), m.tensor([2, 3])],
        a[m.tensor([[0], [1]]), m.tensor([2, 3])], a[None, 1:, m.tensor([2, 3])]), x),
    "setitem": lambda m, x, y, v, s: _vm(m, lambda a, b: _setitem(a.clone(), b), x, y),
    "matmul_family": lambda m, x, y, v, s: _vm(m, lambda a, b: (
        a @ b, b @ a.t(), a @ v, a.t() @ a, m.mm(a, a.t()), m.mv(a, b), m.dot(b, b), m.outer(b, b),
        m.matmul(b, b), m.addmm(a, a, m.eye(4, dtype=a.dtype)),
        m.addmm(v, a, m.eye(4, dtype=a.dtype), beta=0.5, alpha=2),
        m.einsum("ij,j->i", a, b), m.einsum("ij,kj", a, a), m.bmm(a[None], a.t()[None])), x, y),
    "matmul_unbatched": lambda m, x, y, v, s: _vm(m, lambda b: (
        x[0] @ b, b @ x[0].t(), x[0] @ m.outer(b, b), v @ x[:, 0].t()), y),
    "cat_stack": lambda m, x, y, v, s: _vm(m, lambda a, b: (
        m.cat([a, b[None, :]], 0), m.cat([a, a], -1), m.stack([b, v, b]), m.stack([b, b], 1)), x, y),
    "factories": lambda m, x, y, v, s: _vm(m, lambda a: (m.zeros_like(a), m.ones_like(a) * a, m.full_like(a, 3.0),
                                                         a.new_zeros(2), a.new_ones(2, 3)), x),
    "nn_functional": lambda m, x, y, v, s: _vm(m, lambda a, b: (
        m.nn.functional.linear(a, m.ones(2, 4, dtype=a.dtype)),
        m.nn.functional.linear(b, m.ones(3, 4, dtype=a.dtype), m.arange(3.0, dtype=a.dtype)),
        m.nn.functional.softmax(a, dim=-1), m.nn.functional.relu(a), m.nn.functional.gelu(a),
        m.nn.functional.layer_norm(a, (4,)), m.nn.functional.silu(a),
        m.nn.functional.pad(a, (1, 2)), m.nn.functional.normalize(a, dim=-1)), x, y),
    "cross_entropy": lambda m, x, y, v, s: _vm(m, lambda a, t: (
        m.nn.functional.cross_entropy(a, t), m.nn.functional.cross_entropy(a, t, reduction="sum"),
        m.nn.functional.cross_entropy(a, t, reduction="none"),
        m.nn.functional.cross_entropy(a, t, label_smoothing=0.1, ignore_index=1)),
        x, m.tensor([[0, 1, 3], [2, 1, 0], [3, 3, 3], [1, 0, 2], [0, 0, 1]])),
    "conv_pool": lambda m, x, y, v, s: _vm(m, lambda a: (
        m.nn.functional.conv2d(a, m.ones(2, 1, 2, 2, dtype=a.dtype)),
        m.nn.functional.conv2d(a[None], m.ones(2, 1, 2, 2, dtype=a.dtype), padding=1),
        m.nn.functional.max_pool2d(a, 2), m.nn.functional.avg_pool2d(a[None], 2),
        m.nn.functional.adaptive_avg_pool2d(a, 1)), x[:, None]),
    "conv_batched_filter": lambda m, x, y, v, s: _vm(m, lambda a, w, b: (
        m.nn.functional.conv2d(a[None], w, b), m.nn.functional.conv2d(a[None], w, padding=1, stride=2)),
        x[:, None], x[:, None, None, :2, :2].expand(5, 2, 1, 2, 2) * m.tensor([1.0, -1.0])[:, None, None, None],
        y[:, :2]),
    "linalg": lambda m, x, y, v, s: _vm(m, lambda a: (m.linalg.det(a), a.tril(), m.triu(a, 1), a.trace(),
                                                      m.linalg.inv(a)), x[:, :3, :3]),
}


def _setitem(a, b):
    a[0] = b
    a[1, :2] = 7.0
    a[:, -1] = b[:3]
    return a


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_against_torch(name):
    _check(lambda m: CASES[name](m, *_tensors(m, (5, 3, 4), (5, 4), (4,), (5,))))


def test_in_dims_out_dims_trees_and_chunks():
    def fn(m):
        x, y, z = _tensors(m, (4, 3), (3, 4), (3,))
        return [
            _vm(m, lambda a, b: a * b, x, y.t(), in_dims=(1, -1)),
            _vm(m, lambda d, c: d["p"] @ d["q"] + c, {"p": x, "q": y}, z, in_dims=({"p": 1, "q": 0}, None)),
            _vm(m, lambda a: (a.sum(), a * 2, {"k": a}), x, out_dims=(0, -1, {"k": 1})),
            _vm(m, lambda a: (a, 3.0), x, out_dims=(0, None)),
            _vm(m, lambda a: a.sum() * z, x, chunk_size=3, out_dims=1),
            _vm(m, lambda a, k: a * k, x, 2.0, in_dims=(0, None)),
            _vm(m, lambda a: a.sum(0), m.randn(0, 3, dtype=m.float64)),
            _vm(m, lambda a: m.ones(2, dtype=m.float64), x),
        ]
    _check(fn)


def test_nested_vmap():
    def fn(m):
        x, y = _tensors(m, (4, 3, 5), (5, 3))
        return [
            _vm(m, m.func.vmap(lambda a, b: a * b + a.sum(), in_dims=(0, None)), x, y, in_dims=(2, 0)),
            _vm(m, m.func.vmap(lambda a, b: a @ b, in_dims=(1, None)), x, y.t(), in_dims=(0, None)),
            _vm(m, m.func.vmap(m.func.vmap(lambda a: a.softmax(0))), x),
            _vm(m, m.func.vmap(lambda a, b: m.stack([a, a * b]).sum(0), in_dims=(1, 0)), x, y, in_dims=(2, 0)),
        ]
    _check(fn)


def test_compositions():
    def fn(m):
        x, w, u = _tensors(m, (5, 4), (4,), (5, 4))
        f = lambda a: (a.sin() * a).sum()  # noqa: E731
        g = lambda a: a.sin() * a.sum()  # noqa: E731
        return [
            m.func.vmap(m.func.grad(f))(x),
            m.func.vmap(m.func.grad(lambda p, a: (p * a).sin().sum()), in_dims=(None, 0))(w, x),
            m.func.vmap(m.func.jacrev(g))(x),
            m.func.vmap(m.func.jacfwd(g))(x),
            m.func.vmap(m.func.hessian(f))(x),
            m.func.grad(lambda a: m.func.vmap(lambda r: (r.exp() * r).sum())(a).sum())(x),
            m.func.jacrev(m.func.jacrev(g))(w),
            m.func.vmap(lambda p, t: m.func.jvp(g, (p,), (t,)))(x, u),
            m.func.vmap(lambda t: m.func.jvp(g, (w,), (t,)))(u),
            m.func.vmap(lambda p, c: m.func.vjp(g, p)[1](c))(x, u),
            m.func.vmap(m.func.vmap(m.func.grad(lambda a, b: (a * b).sin().sum()), in_dims=(0, None)),
                        in_dims=(None, 0))(x, x),
            m.func.vmap(m.func.grad(m.func.grad(lambda a: a.sin() * a)))(x[:, 0]),
        ]
    _check(fn)


def test_vjp_fn_vmapped_over_cotangents():
    def fn(m):
        x, cts = _tensors(m, (4,), (6, 4))
        _, vjp_fn = m.func.vjp(lambda a: a.sin() * a.sum(), x)
        return m.func.vmap(vjp_fn)(cts)
    _check(fn)


def test_model_ensembling_tutorial():
    def fn(m):
        m.manual_seed(0)
        models = [m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 3)).double() for _ in range(3)]
        (data,) = _tensors(m, (6, 4), seed=1)
        (minis,) = _tensors(m, (3, 6, 4), seed=2)
        params, buffers = m.func.stack_module_state(models)
        base = models[0]

        def fmodel(p, b, x):
            return m.func.functional_call(base, (p, b), (x,))
        same = m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
        different = m.func.vmap(fmodel)(params, buffers, minis)
        return same, different
    _check(fn)


def test_per_sample_gradients_tutorial():
    def fn(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Conv2d(1, 2, 3), m.nn.ReLU(), m.nn.Flatten(), m.nn.Linear(2 * 4 * 4, 3)).double()
        (data,) = _tensors(m, (4, 1, 6, 6), seed=3)
        targets = m.tensor([0, 2, 1, 2])
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def loss(p, b, sample, target):
            out = m.func.functional_call(model, (p, b), (sample.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, target.unsqueeze(0))
        per_sample = m.func.vmap(m.func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
        alone = m.func.grad(loss)(params, buffers, data[2], targets[2])  # sample 2's loss, no vmap
        return per_sample, alone
    per_sample, alone = _check(fn)
    for name, g in alone.items():
        assert_same(per_sample[name][2], g)


def test_ruled_ops_run_once(monkeypatch):
    """Ruled ops run once on the physical tensors: with the per-sample fallback made to fail, they still run, and
    an op without a rule does reach it."""
    def refuse(func, args, kwargs, level, name):
        raise AssertionError(f"{name} ran per sample")
    monkeypatch.setattr(batching_rules, "per_sample", refuse)
    x = P.randn(7, 3, 3, dtype=P.float64)
    out = P.func.vmap(lambda a: ((a @ a.t()).softmax(-1).sum(0) + a[0].sin(), a.mean(), a.view(9)[2:]))(x)
    assert_same(out[0], P.stack([(r @ r.t()).softmax(-1).sum(0) + r[0].sin() for r in x]))
    assert_same(out[1], x.mean((1, 2)))
    with pytest.raises(AssertionError, match="histc ran per sample"):
        P.func.vmap(lambda a: P.histc(a, bins=3))(x)


def test_fallback_warns_and_is_correct():
    batching_rules._warned.discard("histc")
    batching_rules.fallback_calls.clear()
    x = P.rand(4, 10, dtype=P.float64)
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                         "batching rule for aten::histc"):
        out = P.func.vmap(lambda a: P.histc(a, bins=3, min=0, max=1))(x)
    assert batching_rules.fallback_calls == ["histc"]
    assert_same(out, P.stack([P.histc(r, bins=3, min=0, max=1) for r in x]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per op
        P.func.vmap(lambda a: P.histc(a, bins=3, min=0, max=1))(x)


def _errors(m):
    x = m.randn(3, 4)
    cases = [
        lambda: _vm(m, lambda a: a.sum().item(), x),
        lambda: _vm(m, lambda a: 1 if a.sum() > 0 else 0, x),
        lambda: _vm(m, lambda a: m.nonzero(a), x),
        lambda: _vm(m, lambda a: float(a.sum()), x),
        lambda: _vm(m, lambda a: int(a.sum()), x),
        lambda: _vm(m, lambda a: f"{a.sum():.3f}", x),
        lambda: _vm(m, lambda a: a.masked_select(a > 0), x),
        lambda: _vm(m, lambda a: m.rand_like(a), x),
        lambda: _vm(m, lambda a: a + m.rand(4), x),
        lambda: _vm(m, lambda a: a, x, out_dims=None),
        lambda: _vm(m, lambda a: m.unique(a), x),
        lambda: _vm(m, lambda a: a[a.new_ones(4, dtype=m.bool)], x),
    ]
    out = []
    for c in cases:
        try:
            c()
            out.append(None)
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def test_errors_match_torch():
    got = _errors(P)
    assert all(g is not None for g in got), got
    if T is not None:
        for g, e in zip(got, _errors(T)):
            assert g[1] == e[1]
            # the data-dependent errors are a RuntimeError subclass (the per-op path tells them apart)
            assert g[0] == e[0] or (g[0] == "DataDependentError" and e[0] == "RuntimeError")


def test_tolist_and_zero_d_dims():
    with pytest.raises(RuntimeError, match="item"):
        P.func.vmap(lambda a: a.tolist())(P.randn(3, 2))
    _check(lambda m: _vm(m, lambda a: (a.softmax(0), a.sum(0), a.sum(-1, keepdim=True), a.cumsum(0),
                                       a.sort(0).values, a.topk(1).indices, a.unsqueeze(0)),
                         *_tensors(m, (4,))))


def test_inplace_needs_batched_self():
    with pytest.raises(RuntimeError, match="vmapped over but `self` not being vmapped"):
        P.func.vmap(lambda a, b: b.add_(a), in_dims=(0, None))(P.randn(3, 4), P.randn(4))
    x = P.zeros(3, 4)
    P.func.vmap(lambda a: a.add_(1))(x)  # writes through to the input, as torch
    assert bool((x == 1).all())


def test_randomness_modes():
    x = P.zeros(4, 3)
    for f in (lambda a: a + P.rand(3), lambda a: P.rand_like(a), lambda a: a + P.randn(3),
              lambda a: P.nn.functional.dropout(a + 1, 0.5), lambda a: P.empty_like(a).uniform_()):
        same = P.func.vmap(f, randomness="same")(x)
        assert bool((same == same[0]).all())
        diff = P.func.vmap(f, randomness="different")(x)
        assert not bool((diff == diff[0]).all())
        with pytest.raises(RuntimeError, match="randomness error mode"):
            P.func.vmap(f)(x)
    same = P.func.vmap(lambda a: a + P.rand(3), randomness="same", chunk_size=2)(x)
    assert bool((same == same[0]).all())


def test_many_samples_equal_the_per_sample_loop():
    """A 1000-sample MLP through the rules gives what the per-sample loop gives (the timing is in
    benchmarks/bench_vmap.py, not here)."""
    from pyctorch._functorch.vmap import vmap_by_samples
    w1, w2, x = P.randn(16, 8), P.randn(4, 16), P.randn(1000, 8)
    f = lambda a: (w2 @ (w1 @ a).relu()).softmax(0)  # noqa: E731
    assert_same(P.func.vmap(f)(x), vmap_by_samples(f)(x), rtol=1e-5, atol=1e-6)


def test_gather_scatter_and_fallback_ops_against_torch():
    def fn(m):
        x, y = _tensors(m, (5, 3, 4), (5, 4))
        idx = m.tensor([[0, 3], [1, 1], [2, 0]])
        bidx = m.tensor([[0, 1], [2, 3], [3, 3], [1, 0], [2, 2]])
        return [
            _vm(m, lambda a: a.gather(1, idx), x),
            _vm(m, lambda a, i: a.gather(0, i), y, bidx),
            _vm(m, lambda a, i: m.zeros(4, dtype=a.dtype).scatter_add(0, i, a[:2]), y, bidx),
            _vm(m, lambda a: a.index_select(1, m.tensor([3, 0])), x),
        ]
    _check(fn)

    def fallback(m):
        x, y, s = _tensors(m, (5, 3, 4), (5, 4), (5,))
        bidx = m.tensor([[0, 1], [2, 3], [3, 3], [1, 0], [2, 2]])
        return [
            _vm(m, lambda c, v: c + v, s, y.float()),  # a batched 0-d tensor promotes as a scalar
            _vm(m, lambda a, i: a.index_select(0, i), y, bidx),
            _vm(m, lambda a: m.nn.functional.batch_norm(a, None, None, training=True), x),
            _vm(m, lambda a: m.kron(a, a), x[:, :2, :2]),
        ]
    _check(fallback, no_fallback=False)


def test_fill_values_and_debug_unwrap():
    def fn(m):
        x, s = _tensors(m, (5, 3), (5,))
        return [
            _vm(m, lambda a, c: a.masked_fill(a > 0, c), x, s),
            _vm(m, lambda a, c: a.clone().masked_fill_(a > 0, c), x, s),
            _vm(m, lambda a, c: a.clone().fill_(c), x, s),
            _vm(m, lambda a: a.masked_fill(a > 0, 2.0), x),
        ]
    _check(fn)
    x = P.randn(4, 3)
    seen = []
    P.func.vmap(lambda a: seen.append(P.func.debug_unwrap(a)) or a)(x)
    assert type(seen[0]) is P.Tensor and seen[0].shape == (4, 3)
    with pytest.raises(RuntimeError, match="vmapped over but `self` not being vmapped"):
        P.func.vmap(lambda i: P.zeros(3, 2).scatter_(0, i, 1.0))(P.zeros(4, 1, 2, dtype=P.long))


def test_batched_index_tensors():
    def fn(m):
        x, y = _tensors(m, (5, 3, 4), (6, 7))
        i = m.tensor([[0, 1], [2, 3], [3, 3], [1, 0], [2, 2]])
        j = m.tensor([2, 0, 1, 1, 2])
        return [
            _vm(m, lambda a, k: a[k], y[:5], i),
            _vm(m, lambda a, k: a[:, k], x, i),
            _vm(m, lambda a, k, l: a[l, k], x, i, j),
            _vm(m, lambda k: y[k], i),
            _vm(m, lambda k: y[:, k], i),
            _vm(m, lambda k, l: y[l, k], i, j),
            _vm(m, lambda k: y[None, 1:, k], i),
            _vm(m, lambda k: x[0, :, k], i),
            _vm(m, lambda k: x[k, :, 1], j),
            _vm(m, lambda k, l: x[l, 0, k], i, j),
            _vm(m, lambda a, k: a[0, :, k], x[:, :, None].expand(5, 3, 2, 4), i),
            _vm(m, lambda a, k: a[k, 1:], x, j),
            _vm(m, m.func.vmap(lambda a, b: y[a, b]), i, i),
        ]
    _check(fn)
