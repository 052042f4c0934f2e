"""Attention: F.scaled_dot_product_attention (the fused CPU kernel _flash_attention_cpu and the math
path), F.multi_head_attention_forward, nn.MultiheadAttention and the Transformer modules, against torch
with identical inputs and weights (copied through state_dict), and against a numpy reference."""
import math

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as F
from pyctorch.autograd import gradcheck, gradgradcheck
from conftest import assert_same, requires_torch, torch as T

TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def pt(x, grad=False):
    """pyctorch copy of a torch tensor (values, dtype, shape)."""
    out = P.tensor(np.array(x.detach().numpy()), dtype=getattr(P, str(x.dtype).split(".")[1]))
    return out.requires_grad_() if grad else out


def grads(module):
    return {name: p.grad for name, p in module.named_parameters()}


def sd_to_pct(module):
    return {k: pt(v) for k, v in module.state_dict().items()}


def run_both(fq, fk, fv, **kw):
    """SDPA on torch tensors fq/fk/fv and their pyctorch copies: outputs and q/k/v gradients."""
    tq, tk, tv = (x.detach().clone().requires_grad_() for x in (fq, fk, fv))
    pq, pk, pv = pt(tq, True), pt(tk, True), pt(tv, True)
    tkw = dict(kw)
    pkw = {k: (pt(v) if k == "attn_mask" and v is not None else v) for k, v in kw.items()}
    to = T.nn.functional.scaled_dot_product_attention(tq, tk, tv, **tkw)
    po = F.scaled_dot_product_attention(pq, pk, pv, **pkw)
    g = T.randn(to.shape, dtype=to.dtype)
    to.backward(g)
    po.backward(pt(g))
    return (po, pq.grad, pk.grad, pv.grad), (to, tq.grad, tk.grad, tv.grad)


def check_both(fq, fk, fv, **kw):
    dtype = str(fq.dtype).split(".")[1]
    got, want = run_both(fq, fk, fv, **kw)
    for p, t in zip(got, want):
        assert_same(p, t, **TOL[dtype])


# ---- numpy reference (always runs) ---------------------------------------------------------------

def np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    s = (q @ np.swapaxes(k, -1, -2)) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if causal:
        s = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = ~np.isfinite(m)
    e = np.exp(s - np.where(dead, 0, m))
    w = np.where(dead, 0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))
    return w @ v


@pytest.mark.parametrize("tq,tk,causal", [(1, 1, False), (7, 7, True), (64, 64, False), (300, 300, True),
                                          (70, 300, False), (300, 70, True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_matches_numpy(tq, tk, causal, dtype):
    rng = np.random.default_rng(tq * 1000 + tk)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, tq, 16), (2, 3, tk, 16), (2, 3, tk, 24)))
    out = F.scaled_dot_product_attention(*(P.tensor(x, dtype=getattr(P, dtype)) for x in (q, k, v)),
                                         is_causal=causal)
    assert out.dtype == getattr(P, dtype) and tuple(out.shape) == (2, 3, tq, 24)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, causal=causal), **TOL[dtype])


def test_sdpa_masks_numpy():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((2, 4, 11, 8)), rng.standard_normal((2, 4, 11, 5))
    bm = rng.random((9, 11)) > 0.4
    bm[3] = False  # a row that attends to nothing: zeros
    fm = rng.standard_normal((2, 1, 9, 11))
    args = [P.tensor(x) for x in (q, k, v)]
    out = F.scaled_dot_product_attention(*args, attn_mask=P.tensor(bm))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, bm), rtol=1e-10, atol=1e-12)
    assert np.all(out.numpy()[:, :, 3] == 0)
    out = F.scaled_dot_product_attention(*args, attn_mask=P.tensor(fm), scale=0.3)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, fm, scale=0.3), rtol=1e-10, atol=1e-12)


def test_flash_op_outputs_and_logsumexp():
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((3, 40, 8)), rng.standard_normal((3, 50, 8)), rng.standard_normal((3, 50, 6))
    out, lse = P._C._flash_attention_cpu(P.tensor(q), P.tensor(k), P.tensor(v), None, True)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(8)
    s = np.where(np.tril(np.ones((40, 50), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    ref = (m + np.log(np.exp(s - m).sum(-1, keepdims=True)))[..., 0]
    assert tuple(lse.shape) == (3, 40)
    np.testing.assert_allclose(lse.numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, causal=True), rtol=1e-10, atol=1e-12)
    # a fully masked row: output 0 and logsumexp 0 (torch's CPU kernel)
    m = np.ones((3, 40, 50), bool)
    m[:, 5] = False
    out, lse = P._C._flash_attention_cpu(P.tensor(q), P.tensor(k), P.tensor(v), P.tensor(m))
    assert np.all(out.numpy()[:, 5] == 0) and np.all(lse.numpy()[:, 5] == 0)


def test_flash_op_rejects_bad_arguments():
    f = P._C._flash_attention_cpu
    q, k, v = P.randn(2, 5, 8), P.randn(2, 6, 8), P.randn(2, 6, 4)
    with pytest.raises(RuntimeError, match="batch"):
        f(q, P.randn(3, 6, 8), v)
    with pytest.raises(RuntimeError, match="rank"):
        f(P.randn(8), k, v)
    with pytest.raises(RuntimeError, match="dtype"):
        f(q, k.double(), v)
    with pytest.raises(RuntimeError, match="float32 and float64"):
        f(q.long(), k.long(), v.long())
    with pytest.raises(RuntimeError, match="attn_mask"):
        f(q, k, v, P.ones(2, 5, 5, dtype=P.bool))
    with pytest.raises(RuntimeError, match="attn_mask"):
        f(q, k, v, P.ones(2, 5, 6, dtype=P.int64))
    g = P._C._flash_attention_cpu_backward
    out, lse = f(q, k, v)
    with pytest.raises(RuntimeError, match="grad_out"):
        g(P.ones(2, 5, 3), q, k, v, out, lse)
    with pytest.raises(RuntimeError, match="logsumexp"):
        g(P.ones_like(out), q, k, v, out, lse[:, :3])
    with pytest.raises(RuntimeError, match="output_mask"):
        g(P.ones_like(out), q, k, v, out, lse, output_mask=[1, 1])


def test_empty_and_degenerate_shapes():
    out = F.scaled_dot_product_attention(P.randn(2, 0, 8), P.randn(2, 4, 8), P.randn(2, 4, 3))
    assert tuple(out.shape) == (2, 0, 3)
    out = F.scaled_dot_product_attention(P.randn(2, 3, 8), P.randn(2, 0, 8), P.randn(2, 0, 3))
    assert tuple(out.shape) == (2, 3, 3) and float(out.abs().sum()) == 0.0
    v = P.randn(2, 4, 5)
    out = F.scaled_dot_product_attention(P.randn(2, 3, 0), P.randn(2, 4, 0), v)  # E = 0: uniform weights
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(v.numpy().mean(1, keepdims=True), (2, 3, 5)), rtol=1e-6)


# ---- against torch ------------------------------------------------------------------------------

SHAPES = [(1, 1, 1, 1, 8, 8), (2, 3, 7, 7, 16, 16), (2, 2, 64, 64, 32, 32), (1, 2, 300, 300, 64, 64),
          (2, 2, 7, 64, 16, 8), (1, 2, 300, 70, 32, 48), (1, 1, 64, 300, 64, 64)]


@requires_torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_vs_torch(shape, causal):
    b, h, tq, tk, e, ev = shape
    T.manual_seed(sum(shape))
    check_both(T.randn(b, h, tq, e), T.randn(b, h, tk, e), T.randn(b, h, tk, ev), is_causal=causal)


@requires_torch
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_vs_torch_float64(causal):
    T.manual_seed(3)
    d = T.float64
    check_both(T.randn(2, 3, 33, 16, dtype=d), T.randn(2, 3, 45, 16, dtype=d), T.randn(2, 3, 45, 8, dtype=d),
               is_causal=causal)


@requires_torch
@pytest.mark.parametrize("mshape", [(9, 11), (2, 1, 9, 11), (1, 3, 1, 11), (3, 9, 11), (2, 3, 9, 11)])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_masks_vs_torch(mshape, kind):
    T.manual_seed(4)
    m = T.rand(mshape) > 0.3 if kind == "bool" else T.randn(mshape)
    check_both(T.randn(2, 3, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 3, 11, 8), attn_mask=m)


@requires_torch
def test_sdpa_fully_masked_rows_vs_torch():
    T.manual_seed(5)
    m = T.rand(9, 11) > 0.5
    m[2] = False
    fm = T.zeros(9, 11)
    fm[4] = -math.inf
    nan = T.zeros(9, 11)
    nan[5] = math.nan  # a row of NaN scores is NaN, not "masked"
    nan[6, 3] = math.nan
    for mask in (m, fm, nan):
        got, want = run_both(T.randn(2, 3, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 3, 11, 8), attn_mask=mask)
        for p, t in zip(got, want):
            assert_same(p, t, 2e-5, 2e-5)


@requires_torch
def test_sdpa_scale_gqa_and_broadcast_vs_torch():
    T.manual_seed(6)
    check_both(T.randn(2, 3, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 3, 11, 8), scale=0.05)
    check_both(T.randn(2, 3, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 3, 11, 8), scale=0.5, is_causal=True)
    # grouped-query attention: 6 query heads over 2 (or key 3 / value 2) kv heads
    check_both(T.randn(2, 6, 9, 16), T.randn(2, 2, 11, 16), T.randn(2, 2, 11, 8), enable_gqa=True)
    check_both(T.randn(2, 6, 9, 16), T.randn(2, 2, 11, 16), T.randn(2, 2, 11, 8), enable_gqa=True, is_causal=True)
    check_both(T.randn(2, 6, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 2, 11, 8), enable_gqa=True)
    check_both(T.randn(2, 6, 9, 16), T.randn(2, 2, 11, 16), T.randn(2, 2, 11, 8), enable_gqa=True,
               attn_mask=T.rand(6, 9, 11) > 0.2)
    # batch dims broadcast between query, key and value; 3-D and 2-D inputs
    check_both(T.randn(2, 3, 5, 8), T.randn(3, 6, 8), T.randn(3, 6, 2))
    check_both(T.randn(3, 5, 8), T.randn(1, 6, 8), T.randn(1, 6, 2))
    check_both(T.randn(5, 8), T.randn(6, 8), T.randn(6, 2), is_causal=True)


@requires_torch
def test_sdpa_non_contiguous_vs_torch():
    T.manual_seed(7)
    # (B, T, H, E) projections viewed as (B, H, T, E), as MultiheadAttention and GPTs do
    q, k, v = (T.randn(2, 70, 4, 16).transpose(1, 2) for _ in range(3))
    check_both(q, k, v)
    check_both(q, k, v, is_causal=True)
    # a transposed last dim (copied by the kernel) and an expanded key
    check_both(T.randn(2, 4, 16, 70).transpose(-1, -2), T.randn(2, 1, 50, 16).expand(2, 4, 50, 16),
               T.randn(2, 4, 50, 16)[..., :8])
    check_both(T.randn(2, 4, 70, 16), T.randn(2, 4, 11, 16), T.randn(2, 4, 11, 8),
               attn_mask=T.rand(2, 4, 11, 70).transpose(-1, -2) > 0.3)


@requires_torch
def test_sdpa_math_paths_vs_torch():
    T.manual_seed(8)
    # a float mask that needs a gradient takes the math path: its gradient matches torch's
    q, k, v = T.randn(2, 3, 9, 16), T.randn(2, 3, 11, 16), T.randn(2, 3, 11, 8)
    m = T.randn(9, 11, requires_grad=True)
    pm = pt(m, True)
    to = T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
    po = F.scaled_dot_product_attention(pt(q), pt(k), pt(v), attn_mask=pm)
    to.sum().backward()
    po.sum().backward()
    assert_same(po, to, 2e-5, 2e-5)
    assert_same(pm.grad, m.grad, 2e-5, 2e-5)
    # float16 runs through the math path in float16
    h = [x.half() for x in (q, k, v)]
    got = F.scaled_dot_product_attention(*(pt(x) for x in h))
    assert got.dtype == P.float16
    assert_same(got.float(), T.nn.functional.scaled_dot_product_attention(*h).float(), 1e-2, 1e-2)


def test_sdpa_dropout_statistics():
    P.manual_seed(0)
    q, k = P.randn(4, 8, 32, 16), P.randn(4, 8, 48, 16)
    v = P.ones(4, 8, 48, 1)
    base = F.scaled_dot_product_attention(q, k, v)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    # each output is sum_j keep_j w_j / 0.7 with E = 1: mean 1, but not every row is 1
    assert abs(float(out.mean()) - 1.0) < 0.02
    assert float((out - base).abs().max()) > 0.05
    assert float(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).abs().sum()) == 0.0
    x = P.randn(2, 4, 16, 8, requires_grad=True)
    F.scaled_dot_product_attention(x, x, x, dropout_p=0.5).sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == (2, 4, 16, 8)


@requires_torch
def test_sdpa_errors_match_torch():
    def both(*shapes, dtypes=None, **kw):
        dtypes = dtypes or ["float32"] * len(shapes)
        errs = []
        for lib, fn in ((T, T.nn.functional.scaled_dot_product_attention), (P, F.scaled_dot_product_attention)):
            args = [lib.ones(s, dtype=getattr(lib, d)) for s, d in zip(shapes, dtypes)]
            kwl = {k: (lib.ones(v[0], dtype=getattr(lib, v[1])) if k == "attn_mask" else v) for k, v in kw.items()}
            with pytest.raises(Exception) as info:
                fn(*args, **kwl)
            errs.append(info.value)
        assert type(errs[1]) is type(errs[0]), (errs[1], errs[0])
        return str(errs[1]), str(errs[0])

    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 6, 4), attn_mask=((5, 6), "bool"), is_causal=True)
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 6, 4), dtypes=["float32", "float64", "float32"])
    assert mine == theirs
    mine, theirs = both((8,), (8,), (8,))
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 6, 4), attn_mask=((5, 6), "int64"))
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 7), (2, 6, 4))
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 7, 4))
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 6, 4), attn_mask=((4, 6), "float32"))
    assert mine == theirs
    mine, theirs = both((2, 5, 8), (2, 6, 8), (2, 6, 4), attn_mask=((2, 2, 5, 6), "float32"))
    assert mine == theirs
    both((2, 6, 5, 8), (2, 4, 6, 8), (2, 4, 6, 4), enable_gqa=True)
    both((3, 5, 8), (2, 6, 8), (2, 6, 4))
    both((2, 5, 8), (2, 6, 8), (2, 6, 4), dropout_p=1.5)
    both((2, 5, 8), (2, 6, 8), (2, 6, 4), dtypes=["int64"] * 3)


def test_gradcheck_float64():
    P.manual_seed(1)
    d = P.float64
    q, k, v = (P.randn(s, dtype=d, requires_grad=True) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)))
    bm = P.rand(3, 5) > 0.3
    bm[1] = False
    for kw in (dict(), dict(is_causal=True), dict(attn_mask=bm), dict(attn_mask=P.randn(2, 3, 5, dtype=d)),
               dict(scale=0.3)):
        def f(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, **kw)
        assert gradcheck(f, (q, k, v))
        assert gradgradcheck(f, (q, k, v))  # the backward op's composite formula

    def both_outputs(q, k, v):  # the logsumexp output has a gradient too
        return P._C._flash_attention_cpu(q, k, v, None, True)
    assert gradcheck(both_outputs, (q, k, v))
    assert gradgradcheck(both_outputs, (q, k, v))


def test_backward_parallel_schemes_agree():
    """Few batches split their query blocks between threads (per-thread dK/dV buffers), many batches
    go whole to a thread: both give the single-thread gradients."""
    P.manual_seed(2)
    saved = P.get_num_threads()
    try:
        for shape in ((1, 1, 400, 32), (5, 1, 200, 32), (4, 2, 100, 32)):
            q, k, v = (P.randn(shape, dtype=P.float64, requires_grad=True) for _ in range(3))
            grads = []
            for n in (1, 2, 3):
                P.set_num_threads(n)
                q.grad = k.grad = v.grad = None
                F.scaled_dot_product_attention(q, k, v, is_causal=True).pow(2).sum().backward()
                grads.append([g.clone() for g in (q.grad, k.grad, v.grad)])
            for other in grads[1:]:
                for a, b in zip(grads[0], other):
                    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    finally:
        P.set_num_threads(saved)


def test_long_sequence_memory_is_linear():
    """T = 4096: forward + backward never holds a T x T score matrix (64 MiB in float32)."""
    t = 4096
    q, k, v = (P.randn(1, 2, t, 64, requires_grad=True) for _ in range(3))
    live0, _ = P._C._cpu_memory_stats(True)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.sum().backward()
    _, peak = P._C._cpu_memory_stats()
    assert peak - live0 < t * t * 4 // 4, (peak - live0)
    assert q.grad is not None and bool(P.isfinite(q.grad).all())


# ---- MultiheadAttention ---------------------------------------------------------------------------

@requires_torch
def test_mha_init_state_dict_and_repr_match_torch():
    for kw in (dict(), dict(bias=False), dict(add_bias_kv=True), dict(kdim=5, vdim=7), dict(batch_first=True)):
        T.manual_seed(0)
        P.manual_seed(0)
        tm, pm = T.nn.MultiheadAttention(16, 4, **kw), P.nn.MultiheadAttention(16, 4, **kw)
        assert list(tm.state_dict()) == list(pm.state_dict())
        for (name, a), b in zip(tm.state_dict().items(), pm.state_dict().values()):
            assert_same(b, a, 0, 0)
        assert repr(tm) == repr(pm)
    with pytest.raises(AssertionError):
        P.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError):
        P.nn.MultiheadAttention(0, 3)


def mha_pair(**kw):
    T.manual_seed(1)
    tm = T.nn.MultiheadAttention(16, 4, **kw).double().eval()
    pm = P.nn.MultiheadAttention(16, 4, **kw).double().eval()
    pm.load_state_dict(sd_to_pct(tm))
    return tm, pm


def mha_compare(tm, pm, q, k, v, **kw):
    tq, tk, tv = (x.detach().clone().requires_grad_() for x in (q, k, v))
    if q is k and k is v:
        tk = tv = tq
    pq = pt(tq, True)
    pk = pq if tk is tq else pt(tk, True)
    pv = pk if tv is tk else pt(tv, True)
    pkw = {n: (pt(x) if hasattr(x, "numpy") else x) for n, x in kw.items()}
    to, tw = tm(tq, tk, tv, **kw)
    po, pw = pm(pq, pk, pv, **pkw)
    assert_same(po, to, 1e-9, 1e-9)
    assert (pw is None) == (tw is None)
    if tw is not None:
        assert_same(pw, tw, 1e-9, 1e-9)
    to.pow(2).sum().backward()
    po.pow(2).sum().backward()
    assert_same(pq.grad, tq.grad, 1e-9, 1e-9)
    for (name, a), b in zip(tm.named_parameters(), pm.parameters()):
        assert_same(b.grad, a.grad, 1e-9, 1e-9)


@requires_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_vs_torch(batch_first, need_weights):
    tm, pm = mha_pair(batch_first=batch_first)
    T.manual_seed(2)
    n, l, s = 3, 5, 7
    x = T.randn((n, l, 16) if batch_first else (l, n, 16), dtype=T.float64)
    mem = T.randn((n, s, 16) if batch_first else (s, n, 16), dtype=T.float64)
    kpm = T.zeros(n, s, dtype=T.bool)
    kpm[0, -2:] = True
    fmask = T.randn(l, s, dtype=T.float64)
    bmask = T.rand(l, s) > 0.8
    mha_compare(tm, pm, x, x, x, need_weights=need_weights)
    mha_compare(tm, pm, x, mem, mem, need_weights=need_weights, key_padding_mask=kpm)
    mha_compare(tm, pm, x, mem, mem, need_weights=need_weights, attn_mask=fmask)
    mha_compare(tm, pm, x, mem, mem, need_weights=need_weights, attn_mask=bmask, key_padding_mask=kpm)
    mha_compare(tm, pm, x, mem, mem.clone(), need_weights=need_weights, attn_mask=T.randn(n * 4, l, s,
                                                                                          dtype=T.float64))
    causal = T.nn.Transformer.generate_square_subsequent_mask(l, dtype=T.float64)
    mha_compare(tm, pm, x, x, x, need_weights=need_weights, attn_mask=causal, is_causal=True)


@requires_torch
def test_mha_variants_vs_torch():
    T.manual_seed(3)
    x = T.randn(5, 3, 16, dtype=T.float64)
    tm, pm = mha_pair()
    mha_compare(tm, pm, x, x, x, average_attn_weights=False)
    mha_compare(tm, pm, x[:, 0], x[:, 0], x[:, 0])  # unbatched
    mha_compare(tm, pm, x[:, 0], x[:, 0], x[:, 0], key_padding_mask=T.tensor([False] * 4 + [True]))
    tm, pm = mha_pair(add_bias_kv=True, add_zero_attn=True)
    mha_compare(tm, pm, x, x, x, key_padding_mask=T.zeros(3, 5, dtype=T.bool), attn_mask=T.zeros(5, 5,
                                                                                                  dtype=T.float64))
    mha_compare(tm, pm, x, x, x, need_weights=False)
    q = T.randn(3, 5, 16, dtype=T.float64)  # merge_masks takes batch-first queries
    am, kpm = T.randn(5, 5, dtype=T.float64), T.randn(3, 5, dtype=T.float64)
    for a_, k_ in ((am, kpm), (None, kpm), (am, None), (T.randn(3 * 4, 5, 5, dtype=T.float64), kpm)):
        mt, tt = tm.merge_masks(a_, k_, q)
        mp, tp = pm.merge_masks(None if a_ is None else pt(a_), None if k_ is None else pt(k_), pt(q))
        assert tp == tt
        assert_same(mp, mt, 1e-10, 1e-10)
    tm, pm = mha_pair(kdim=6, vdim=9, bias=False)
    mha_compare(tm, pm, x, T.randn(7, 3, 6, dtype=T.float64), T.randn(7, 3, 9, dtype=T.float64))
    mha_compare(tm, pm, x, T.randn(7, 3, 6, dtype=T.float64), T.randn(7, 3, 9, dtype=T.float64), need_weights=False)


@requires_torch
def test_mha_errors_match_torch():
    tm, pm = mha_pair()
    for args, kw in ((((5, 3, 16), (5, 3, 16), (5, 3, 16)), dict(attn_mask=(4, 5))),
                     (((5, 3, 16), (5, 3, 16), (5, 3, 16)), dict(attn_mask=(2, 5, 5))),
                     (((5, 3, 16), (5, 3, 16), (5, 3, 16)), dict(key_padding_mask=(3, 5, 1))),
                     (((5, 3, 16), (5, 16), (5, 16)), dict()),
                     (((5, 3, 16), (5, 3, 16), (5, 3, 16)), dict(is_causal=True))):
        errs = []
        for lib, m in ((T, tm), (P, pm)):
            a = [lib.randn(s, dtype=lib.float64) for s in args]
            k = {n: lib.zeros(s, dtype=lib.float64) for n, s in kw.items() if not isinstance(s, bool)}
            k.update({n: s for n, s in kw.items() if isinstance(s, bool)})
            with pytest.raises(Exception) as info:
                m(*a, **k)
            errs.append(info.value)
        assert type(errs[1]) is type(errs[0]), (errs[1], errs[0])


# ---- Transformer layers ---------------------------------------------------------------------------

def layer_pair(cls, seed=4, **kw):
    T.manual_seed(seed)
    tl = getattr(T.nn, cls)(16, 4, 32, **kw).double().eval()
    pl = getattr(P.nn, cls)(16, 4, 32, **kw).double().eval()
    assert list(tl.state_dict()) == list(pl.state_dict())
    pl.load_state_dict(sd_to_pct(tl))
    return tl, pl


@requires_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_vs_torch(batch_first, norm_first):
    for act in ("relu", "gelu", T.nn.functional.silu):
        pact = F.silu if callable(act) else act
        T.manual_seed(5)
        tl = T.nn.TransformerEncoderLayer(16, 4, 32, batch_first=batch_first, norm_first=norm_first,
                                          activation=act).double().eval()
        pl = P.nn.TransformerEncoderLayer(16, 4, 32, batch_first=batch_first, norm_first=norm_first,
                                          activation=pact).double().eval()
        pl.load_state_dict(sd_to_pct(tl))
        x = T.randn(3, 5, 16, dtype=T.float64, requires_grad=True)
        px = pt(x, True)
        n = 3 if batch_first else 5
        kpm = T.zeros(n, 5 if batch_first else 3, dtype=T.bool)
        kpm[0, -1] = True
        for kw in (dict(), dict(src_key_padding_mask=kpm),
                   dict(src_mask=T.nn.Transformer.generate_square_subsequent_mask(5 if batch_first else 3,
                                                                                   dtype=T.float64),
                        is_causal=True)):
            x.grad = px.grad = None
            tl.zero_grad()
            pl.zero_grad()
            to = tl(x, **kw)
            po = pl(px, **{k: pt(v) if hasattr(v, "numpy") else v for k, v in kw.items()})
            assert_same(po, to, 1e-9, 1e-9)
            to.pow(2).sum().backward()
            po.pow(2).sum().backward()
            assert_same(px.grad, x.grad, 1e-9, 1e-9)
            assert_same(grads(pl), grads(tl), 1e-9, 1e-9)


@requires_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_vs_torch(batch_first, norm_first):
    tl, pl = layer_pair("TransformerDecoderLayer", batch_first=batch_first, norm_first=norm_first)
    T.manual_seed(6)
    x = T.randn(3, 5, 16, dtype=T.float64, requires_grad=True)
    mem = T.randn((3, 7, 16) if batch_first else (7, 5, 16), dtype=T.float64, requires_grad=True)
    px, pmem = pt(x, True), pt(mem, True)
    tgt_len = 5 if batch_first else 3
    causal = T.nn.Transformer.generate_square_subsequent_mask(tgt_len, dtype=T.float64)
    mkpm = T.zeros(3 if batch_first else 5, 7, dtype=T.bool)
    mkpm[1, -3:] = True
    kw = dict(tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=mkpm)
    to = tl(x, mem, **kw)
    po = pl(px, pmem, **{k: pt(v) if hasattr(v, "numpy") else v for k, v in kw.items()})
    assert_same(po, to, 1e-9, 1e-9)
    to.pow(2).sum().backward()
    po.pow(2).sum().backward()
    assert_same(px.grad, x.grad, 1e-9, 1e-9)
    assert_same(pmem.grad, mem.grad, 1e-9, 1e-9)
    assert_same(grads(pl), grads(tl), 1e-9, 1e-9)


@requires_torch
def test_encoder_decoder_stacks_and_transformer_vs_torch():
    import warnings
    T.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tenc = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2,
                                       norm=T.nn.LayerNorm(16)).eval()
    penc = P.nn.TransformerEncoder(P.nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2,
                                   norm=P.nn.Transformer(16, 4, 1, 1, 32).encoder.norm).eval()
    assert list(tenc.state_dict()) == list(penc.state_dict())
    penc.load_state_dict(sd_to_pct(tenc))
    x = T.randn(2, 5, 16)
    kpm = T.zeros(2, 5, dtype=T.bool)
    kpm[0, 3:] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.no_grad(), P.no_grad():  # torch's inference path: padded positions come out as zeros
            assert_same(penc(pt(x), src_key_padding_mask=pt(kpm)), tenc(x, src_key_padding_mask=kpm), 1e-5, 1e-5)
        assert_same(penc(pt(x), src_key_padding_mask=pt(kpm)), tenc(x, src_key_padding_mask=kpm), 1e-5, 1e-5)
        causal = T.nn.Transformer.generate_square_subsequent_mask(5)
        assert_same(penc(pt(x), mask=pt(causal)), tenc(x, mask=causal), 1e-5, 1e-5)
    # a seeded Transformer has torch's weights (xavier_uniform_ over every matrix) and outputs
    T.manual_seed(8)
    P.manual_seed(8)
    tt = T.nn.Transformer(16, 4, 2, 2, 32, dropout=0.0).double()
    ptr = P.nn.Transformer(16, 4, 2, 2, 32, dropout=0.0).double()
    assert list(tt.state_dict()) == list(ptr.state_dict())
    for a, b in zip(tt.state_dict().values(), ptr.state_dict().values()):
        assert_same(b, a, 1e-12, 1e-12)
    src, tgt = T.randn(6, 2, 16, dtype=T.float64), T.randn(4, 2, 16, dtype=T.float64)
    mask = T.nn.Transformer.generate_square_subsequent_mask(4, dtype=T.float64)
    assert_same(ptr(pt(src), pt(tgt), tgt_mask=pt(mask)), tt(src, tgt, tgt_mask=mask), 1e-9, 1e-9)
    with pytest.raises(RuntimeError, match="batch number"):
        ptr(P.randn(6, 2, 16), P.randn(4, 3, 16))


def test_transformer_training_step_runs_with_dropout():
    P.manual_seed(0)
    layer = P.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.2, batch_first=True)
    x = P.randn(2, 5, 16)
    out = layer(x)
    assert tuple(out.shape) == (2, 5, 16)
    out.sum().backward()
    assert all(p.grad is not None for p in layer.parameters())
    layer.eval()
    a, b = layer(x), layer(x)
    assert bool((a == b).all())  # eval: no dropout
