"""torch.autocast on the CPU: per-op output dtypes against torch's for float32, bfloat16 and float16
inputs under bfloat16 and float16 autocast (the op lists of csrc/autograd/autocast.c and the wrapped
composite functions), values and gradients against torch, gradients in the original dtype, nesting,
enabled=False, the decorator form, the weight cache, thread-locality, the state functions and their
errors, torch.cpu.amp aliases, custom_fwd/custom_bwd."""
import threading
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import assert_same, requires_torch, torch

TGT = [0, 1, 2, 3]


def _x(lib, dtype, shape=(4, 4), seed=0):
    v = np.random.RandomState(seed).rand(*shape).astype(np.float32) + 0.1
    return lib.tensor(v).to(getattr(lib, dtype))


# name -> f(lib, x): x is a (4, 4) floating tensor of the dtype under test
CASES = {
    "mm": lambda L, x: L.mm(x, x),
    "matmul": lambda L, x: x @ x,
    "matmul_vec": lambda L, x: x @ x[0],
    "addmm": lambda L, x: L.addmm(x, x, x),
    "bmm": lambda L, x: L.bmm(x[None], x[None]),
    "baddbmm": lambda L, x: L.baddbmm(x[None], x[None], x[None]),
    "linear": lambda L, x: L.nn.functional.linear(x, x, x[0]),
    "conv1d": lambda L, x: L.nn.functional.conv1d(x[None], x[:, :, None]),
    "conv2d": lambda L, x: L.nn.functional.conv2d(x[None, None], x[None, None, :2, :2]),
    "conv_transpose1d": lambda L, x: L.nn.functional.conv_transpose1d(x[None], x[:, :2, None]),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25])),
    "sdpa": lambda L, x: L.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True),
    "einsum_pair": lambda L, x: L.einsum("ij,jk->ik", x, x),
    "einsum_single": lambda L, x: L.einsum("ij->i", x),
    "tensordot": lambda L, x: L.tensordot(x, x, dims=1),
    "inner": lambda L, x: L.inner(x, x),
    "mv": lambda L, x: L.mv(x, x[0]),
    "dot": lambda L, x: L.dot(x[0], x[1]),
    "outer": lambda L, x: L.outer(x[0], x[1]),
    "softmax": lambda L, x: L.softmax(x, -1),
    "log_softmax": lambda L, x: L.log_softmax(x, -1),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (4,)),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x[None], 2),
    "exp": lambda L, x: L.exp(x),
    "sum": lambda L, x: x.sum(),
    "cumsum": lambda L, x: x.cumsum(0),
    "prod": lambda L, x: x.prod(),
    "prod_dim": lambda L, x: x.prod(1),
    "trace": lambda L, x: L.trace(x),
    "mse_loss": lambda L, x: L.nn.functional.mse_loss(x, x * 0.5),
    "l1_loss": lambda L, x: L.nn.functional.l1_loss(x, x * 0.5),
    "smooth_l1_loss": lambda L, x: L.nn.functional.smooth_l1_loss(x, x * 0.5),
    "huber_loss": lambda L, x: L.nn.functional.huber_loss(x, x * 0.5),
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor(TGT)),
    "cross_entropy_probs": lambda L, x: L.nn.functional.cross_entropy(x, x.softmax(1)),
    "nll_loss": lambda L, x: L.nn.functional.nll_loss(x, L.tensor(TGT)),
    "bce": lambda L, x: L.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid() * 0.5),
    "bce_logits": lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(x, x.sigmoid()),
    "kl_div": lambda L, x: L.nn.functional.kl_div(x, x, reduction="batchmean"),
    "cosine_embedding_loss": lambda L, x: L.nn.functional.cosine_embedding_loss(x, x * 2, L.ones(4)),
    "reflect_pad": lambda L, x: L.nn.functional.pad(x[None], (1, 1), mode="reflect"),
    "replicate_pad": lambda L, x: L.nn.functional.pad(x[None], (1, 1), mode="replicate"),
    "constant_pad": lambda L, x: L.nn.functional.pad(x, (1, 1)),
    "relu": lambda L, x: L.relu(x),
    "gelu": lambda L, x: L.nn.functional.gelu(x),
    "norm": lambda L, x: L.linalg.vector_norm(x),
    "cat_same": lambda L, x: L.cat([x, x]),
    "stack_same": lambda L, x: L.stack([x, x]),
    "cat_f32": lambda L, x: L.cat([x, x.float()]),
    "cat_f64": lambda L, x: L.cat([x, x.double()]),
    "stack_f32": lambda L, x: L.stack([x.float(), x]),
    "index_copy": lambda L, x: x.float().index_copy(0, L.tensor([0]), x[:1]),
    "add_f32": lambda L, x: x + x.float(),
    "mm_f64": lambda L, x: L.mm(x.double(), x.double()),
}


def _run(lib, name, dtype, fast):
    x = _x(lib, dtype)
    with lib.autocast("cpu", dtype=getattr(lib, fast)):
        return CASES[name](lib, x)


@requires_torch
@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_output_dtype_matches_torch(name, dtype, fast):
    try:
        t = _run(torch, name, dtype, fast)
    except RuntimeError as e:  # torch refuses (e.g. bfloat16 with float16 in one cat): so must we
        with pytest.raises(RuntimeError):
            _run(pyctorch, name, dtype, fast)
        return
    p = _run(pyctorch, name, dtype, fast)
    assert str(p.dtype) == str(t.dtype), f"{name}: {p.dtype} vs torch {t.dtype}"
    assert tuple(p.shape) == tuple(t.shape)
    if dtype == "float32":  # same inputs: the values agree within the reduced dtype's precision
        tol = 3e-2 if "bfloat16" in (str(t.dtype), fast) else 5e-3
        np.testing.assert_allclose(np.array(p.float().tolist()), np.array(t.float().tolist()), rtol=tol, atol=tol)


@requires_torch
def test_values_and_gradients_match_torch():
    out = []
    for lib in (pyctorch, torch):
        rs = np.random.RandomState(3)
        x = lib.tensor(rs.randn(8, 16).astype(np.float32), requires_grad=True)
        w = lib.tensor(rs.randn(12, 16).astype(np.float32), requires_grad=True)
        b = lib.tensor(rs.randn(12).astype(np.float32), requires_grad=True)
        with lib.autocast("cpu"):
            h = lib.nn.functional.linear(x, w, b)
            loss = lib.nn.functional.cross_entropy(h, lib.tensor([i % 12 for i in range(8)]))
        loss.backward()
        out.append((h, loss, x.grad, w.grad, b.grad))
    for p, t in zip(*out):
        assert_same(p, t, rtol=2e-2, atol=2e-2)
    assert out[0][2].dtype == pyctorch.float32  # gradients in the leaves' own dtype


def test_gradients_flow_through_casts():
    x = pyctorch.randn(4, 5, requires_grad=True)
    w = pyctorch.randn(5, 3, requires_grad=True)
    with pyctorch.autocast("cpu"):
        y = x @ w
    assert y.dtype == pyctorch.bfloat16 and y.requires_grad
    y.float().sum().backward()
    assert x.grad.dtype == pyctorch.float32 and w.grad.dtype == pyctorch.float32
    expect = np.ones((4, 3)) @ np.array(w.tolist()).T
    np.testing.assert_allclose(np.array(x.grad.tolist()), expect, rtol=2e-2, atol=2e-2)


def test_nesting_disable_and_decorator():
    a = pyctorch.randn(3, 3)
    assert not pyctorch.is_autocast_enabled("cpu")
    with pyctorch.autocast("cpu"):
        assert pyctorch.is_autocast_enabled("cpu") and (a @ a).dtype == pyctorch.bfloat16
        with pyctorch.autocast("cpu", enabled=False):
            assert not pyctorch.is_autocast_enabled("cpu") and (a @ a).dtype == pyctorch.float32
            with pyctorch.autocast("cpu", dtype=pyctorch.float16):
                assert (a @ a).dtype == pyctorch.float16
                assert pyctorch.get_autocast_dtype("cpu") == pyctorch.float16
        assert (a @ a).dtype == pyctorch.bfloat16 and pyctorch.get_autocast_dtype("cpu") == pyctorch.bfloat16
    assert (a @ a).dtype == pyctorch.float32

    @pyctorch.autocast("cpu")
    def f(u):
        return u @ u
    assert f(a).dtype == pyctorch.bfloat16 and (a @ a).dtype == pyctorch.float32
    with pytest.raises(TypeError, match="requires a callable"):
        pyctorch.autocast("cpu")(3)


def test_inplace_and_out_are_not_autocast():
    a = pyctorch.randn(3, 3)
    with pyctorch.autocast("cpu"):
        c = a.clone()
        c.addmm_(a, a)
        assert c.dtype == pyctorch.float32
        out = pyctorch.empty(3, 3)
        pyctorch.mm(a, a, out=out)
        assert out.dtype == pyctorch.float32


def _count_casts(fn):
    with pyctorch.profiler.profile() as prof:
        fn()
    return sum(1 for e in prof.events() if e.name == "aten::to")


def test_weight_cache():
    w = pyctorch.randn(4, 4, requires_grad=True)
    x = pyctorch.randn(2, 4)

    def two_calls(cache):
        with pyctorch.autocast("cpu", cache_enabled=cache):
            pyctorch.nn.functional.linear(x, w)
            pyctorch.nn.functional.linear(x, w)
    assert _count_casts(lambda: two_calls(True)) == 3   # x twice, the leaf weight once
    assert _count_casts(lambda: two_calls(False)) == 4
    # the cache ends with the outermost region; non-leaves are never cached
    assert _count_casts(lambda: (two_calls(True), two_calls(True))) == 6
    h = w * 1

    def nonleaf():
        with pyctorch.autocast("cpu"):
            h @ x.t()
            h @ x.t()
    assert _count_casts(nonleaf) == 4


def test_cached_weight_gradients_accumulate():
    w = pyctorch.randn(3, 3, requires_grad=True)
    x = pyctorch.randn(2, 3)
    with pyctorch.autocast("cpu"):
        loss = (x @ w).float().sum() + (x @ w).float().sum()
    loss.backward()
    expect = 2 * np.array(x.tolist()).sum(0)[:, None] * np.ones((1, 3))
    np.testing.assert_allclose(np.array(w.grad.tolist()), expect, rtol=2e-2, atol=2e-2)


def test_state_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = pyctorch.is_autocast_enabled("cpu")
        a = pyctorch.randn(2, 2)
        seen["dtype"] = (a @ a).dtype

    with pyctorch.autocast("cpu"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": pyctorch.float32}


@requires_torch
def test_state_functions_match_torch():
    for lib in (pyctorch, torch):
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert lib.get_autocast_dtype("cuda") == lib.float16
        assert lib.is_autocast_cache_enabled()
        assert lib.autocast_increment_nesting() == 1 and lib.autocast_decrement_nesting() == 0
        lib.set_autocast_enabled("cpu", True)
        assert lib.is_autocast_enabled("cpu")
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.float16)
        assert lib.get_autocast_dtype("cpu") == lib.float16
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        with pytest.raises(RuntimeError, match="Expected one of cpu"):
            lib.is_autocast_enabled("foo")
        with pytest.raises(RuntimeError, match="Expected one of cpu"):
            lib.autocast("foo")
        with pytest.raises(ValueError):
            lib.autocast(3)
        assert lib.amp.is_autocast_available("cpu")
        with pytest.warns(DeprecationWarning):
            assert lib.is_autocast_cpu_enabled() is False
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float64):
                assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with lib.autocast("cuda"):
                assert not lib.is_autocast_enabled("cuda")


def test_cpu_amp_aliases():
    a = pyctorch.randn(2, 2)
    with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
        ctx = pyctorch.cpu.amp.autocast()
    with ctx:
        assert (a @ a).dtype == pyctorch.bfloat16
    with pytest.warns(FutureWarning):
        with pyctorch.cpu.amp.autocast(dtype=pyctorch.float16):
            assert (a @ a).dtype == pyctorch.float16
    assert pyctorch.amp.autocast is pyctorch.autocast


def test_exception_inside_region_restores_state():
    with pytest.raises(ZeroDivisionError):
        with pyctorch.autocast("cpu"):
            1 / 0
    assert not pyctorch.is_autocast_enabled("cpu")
    # an error inside a wrapped composite re-enables autocast for the rest of the region
    with pyctorch.autocast("cpu"):
        with pytest.raises(RuntimeError):
            pyctorch.nn.functional.linear(pyctorch.randn(2, 3), pyctorch.randn(4, 5))
        assert pyctorch.is_autocast_enabled("cpu")


def test_bf16_with_f16_promote_raises():
    with pyctorch.autocast("cpu"):
        with pytest.raises(RuntimeError, match="prioritize"):
            pyctorch.cat([pyctorch.ones(2).bfloat16(), pyctorch.ones(2).half()])


def test_custom_fwd_bwd():
    class MyMM(pyctorch.autograd.Function):
        @staticmethod
        @pyctorch.amp.custom_fwd(device_type="cpu", cast_inputs=pyctorch.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.inner = pyctorch.is_autocast_enabled("cpu")
            return a.mm(b)

        @staticmethod
        @pyctorch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g.mm(b.t()), a.t().mm(g)

    a = pyctorch.randn(3, 3, requires_grad=True)
    with pyctorch.autocast("cpu"):
        y = MyMM.apply(a.bfloat16(), a)
    assert y.dtype == pyctorch.float32
    y.sum().backward()
    assert a.grad.dtype == pyctorch.float32
    with pytest.raises(ValueError):
        pyctorch.amp.custom_fwd(device_type=3)


def test_policy_table_lists_torch_ops():
    pol = pyctorch._C._autocast_policies()
    for op in ("mm", "bmm", "addmm", "baddbmm", "matmul", "convolution"):
        assert pol[op] == "lower_precision_fp"
    for op in ("prod", "trace"):
        assert pol[op] == "fp32"
    for op in ("cat", "stack", "index_copy"):
        assert pol[op] == "promote"


def test_disabled_autocast_adds_no_work():
    a = pyctorch.randn(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pyctorch.autocast("cpu", enabled=False):
            assert _count_casts(lambda: a @ a) == 0
    assert pyctorch._C._autocast_cpu_active() is None


@requires_torch
@pytest.mark.parametrize("name", ["hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss", "soft_margin_loss",
                                  "triplet_margin_loss", "multi_margin_loss"])
def test_fp32_listed_losses_of_the_extras_run_in_float32(name):
    """The losses torch's CPU autocast runs in float32, those of functional.py's last section included: bfloat16
    inputs give a float32 loss with torch's value."""
    def run(L):
        F = L.nn.functional
        g = np.random.RandomState(3)
        a, b = (L.tensor(g.randn(4, 5).astype(np.float32)).bfloat16() for _ in range(2))
        y = L.ones(4, 5).bfloat16()
        call = {"hinge_embedding_loss": lambda: F.hinge_embedding_loss(a, y),
                "margin_ranking_loss": lambda: F.margin_ranking_loss(a[:, 0], b[:, 0], y[:, 0]),
                "poisson_nll_loss": lambda: F.poisson_nll_loss(a, b.abs()),
                "soft_margin_loss": lambda: F.soft_margin_loss(a, y),
                "triplet_margin_loss": lambda: F.triplet_margin_loss(a, b, a + 1),
                "multi_margin_loss": lambda: F.multi_margin_loss(a, L.tensor([0, 1, 2, 3]))}[name]
        with L.autocast("cpu", dtype=L.bfloat16):
            out = call()
        return str(out.dtype).split(".")[1], out.item()
    got, exp = run(pyctorch), run(torch)
    assert got[0] == exp[0] == "float32"
    assert abs(got[1] - exp[1]) <= 1e-5 * max(1.0, abs(exp[1]))
