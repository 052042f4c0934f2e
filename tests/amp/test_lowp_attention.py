"""Fused CPU attention in bfloat16 and float16 (csrc/aten/cpu/attention.c, Note [Reduced-precision
attention]): F.scaled_dot_product_attention and the raw ops _flash_attention_cpu(_backward) against
torch's fused CPU flash-attention kernels on the same reduced-precision inputs: output and gradient
values and dtypes (outputs in the input dtype, logsumexp float32), causal, bool / additive / float32
masks, scale, non-contiguous inputs, ragged lengths, rows that attend to nothing, bad arguments.
Without torch: the reduced-precision results are exactly the float32 kernel's on the widened inputs,
rounded."""
import math

import numpy as np
import pytest

import pyctorch as P
import pyctorch.nn.functional as F
from conftest import assert_same, requires_torch, torch as T

LOWP = ["bfloat16", "float16"]
# a couple of units in the last place of the output dtype, relative to the largest magnitude: torch
# rounds the probabilities to the input dtype before the second product, this kernel keeps them float32
TOL = {"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5}
TOLS = {name: (tol, tol) for name, tol in TOL.items()}  # atol scaled by the output's magnitude (scale_atol)


def pt(x, grad=False):
    """pyctorch copy of a torch tensor (values, dtype, shape)."""
    name = str(x.dtype).split(".")[1]
    arr = x.detach().float().numpy() if name in LOWP else x.detach().numpy()
    out = P.tensor(np.array(arr)).to(getattr(P, name))
    return out.requires_grad_() if grad else out


def npy(x):
    x = x.detach()
    return np.array(x.float().tolist() if x.dim() else [float(x)], dtype=np.float64).reshape(tuple(x.shape))


def inputs(dtype, b=2, h=3, tq=37, tk=37, e=16, ev=16, seed=0, layout="c"):
    """torch q, k, v of (b, h, t, e) shape; layout "t": views of (b, t, h, e) tensors (non-contiguous)."""
    g = T.Generator().manual_seed(seed)
    dt = getattr(T, dtype)
    if layout == "t":
        return tuple(T.randn(b, t, h, d, generator=g).to(dt).transpose(1, 2)
                     for t, d in ((tq, e), (tk, e), (tk, ev)))
    return tuple(T.randn(b, h, t, d, generator=g).to(dt) for t, d in ((tq, e), (tk, e), (tk, ev)))


def sdpa_both(q, k, v, **kw):
    """SDPA forward and backward in both libraries: (output, dq, dk, dv) each."""
    tq, tk, tv = (x.detach().clone().requires_grad_() for x in (q, k, v))
    pq, pk, pv = pt(tq, True), pt(tk, True), pt(tv, True)
    pkw = {n: (pt(x) if n == "attn_mask" and x is not None else x) for n, x in kw.items()}
    to = T.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kw)
    po = F.scaled_dot_product_attention(pq, pk, pv, **pkw)
    g = T.randn(to.shape, generator=T.Generator().manual_seed(5)).to(to.dtype)
    to.backward(g)
    po.backward(pt(g))
    return (po, pq.grad, pk.grad, pv.grad), (to, tq.grad, tk.grad, tv.grad)


def check_sdpa(q, k, v, **kw):
    got, want = sdpa_both(q, k, v, **kw)
    for p, t in zip(got, want):
        assert_same(p, t, tol=TOLS, scale_atol=True)


@requires_torch
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("tq,tk", [(37, 37), (1, 5), (70, 300), (300, 70)])
def test_sdpa_matches_torch(dtype, causal, tq, tk):
    check_sdpa(*inputs(dtype, tq=tq, tk=tk), is_causal=causal)


@requires_torch
@pytest.mark.parametrize("dtype", LOWP)
def test_sdpa_noncontiguous_scale_and_batch_one(dtype):
    check_sdpa(*inputs(dtype, b=1, h=2, tq=65, tk=129, e=32, ev=32, layout="t"), scale=0.3)
    q, k, v = inputs(dtype, tq=20, tk=30)
    check_sdpa(q[..., ::2, :], k[..., ::3, :], v[..., ::3, :], is_causal=True)


@requires_torch
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("kind", ["bool", "same", "float32"])
def test_sdpa_masks(dtype, kind):
    q, k, v = inputs(dtype, tq=33, tk=45)
    g = T.Generator().manual_seed(3)
    keep = T.rand(2, 1, 33, 45, generator=g) > 0.3
    keep[:, :, :, 0] = True
    if kind == "bool":
        mask = keep
    else:  # additive, with values that bfloat16 does not hold exactly
        mask = (T.randn(2, 1, 33, 45, generator=g) * 0.7).masked_fill(~keep, -math.inf)
        mask = mask.to(getattr(T, dtype)) if kind == "same" else mask
    check_sdpa(q, k, v, attn_mask=mask)


@requires_torch
def test_float32_mask_is_added_in_float32():
    """torch's fused kernel adds a float32 mask to the float32 scores of a bfloat16 query unrounded."""
    q, k, v = inputs("bfloat16", b=1, h=1, tq=4, tk=64, e=8, ev=8)
    q, k = q * 0, k * 0  # equal scores: the weights are softmax(mask)
    mask = (256 + T.linspace(0, 0.99, 64)).expand(1, 1, 4, 64).contiguous()  # all 256 in bfloat16
    v = T.eye(64)[:, :8].reshape(1, 1, 64, 8).to(T.bfloat16) * 64
    got, want = sdpa_both(q, k, v, attn_mask=mask)
    assert_same(got[0], want[0], tol=TOLS, scale_atol=True)
    rounded = T.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(T.bfloat16))
    assert np.abs(npy(rounded) - npy(want[0])).max() > 0.2  # the check above can tell the two apart


@requires_torch
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("causal", [False, True])
def test_raw_ops_match_torch_kernels(dtype, causal):
    """_flash_attention_cpu(_backward) against aten::_scaled_dot_product_flash_attention_for_cpu(_backward):
    logsumexp float32, outputs and gradients in the input dtype."""
    q, k, v = inputs(dtype, tq=50, tk=70, e=24, ev=24)
    if causal:
        q, k, v = inputs(dtype, tq=70, tk=70, e=24, ev=24)
    to, tl = T.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)
    po, pl = P._C._flash_attention_cpu(pt(q), pt(k), pt(v), None, causal)
    assert pl.dtype == P.float32 and tl.dtype == T.float32
    assert_same(po, to, tol=TOLS, scale_atol=True)
    # torch's exp is a fast approximation (relative error ~1e-5): rows with few keys show it
    np.testing.assert_allclose(npy(pl), npy(tl), rtol=1e-4, atol=1e-4)
    go = T.randn(to.shape, generator=T.Generator().manual_seed(1)).to(to.dtype)
    tg = T.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(go, q, k, v, to, tl, 0.0, causal)
    pg = P._C._flash_attention_cpu_backward(pt(go), pt(q), pt(k), pt(v), po, pl, None, causal, None, None, [1, 1, 1])
    for p, t in zip(pg, tg):
        assert_same(p, t, tol=TOLS, scale_atol=True)


@requires_torch
@pytest.mark.parametrize("dtype", LOWP)
def test_rows_attending_to_nothing(dtype):
    q, k, v = inputs(dtype, b=1, h=2, tq=6, tk=9)
    keep = T.ones(1, 2, 6, 9, dtype=T.bool)
    keep[:, :, 2] = False
    to, tl = T.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, 0.0, False, attn_mask=T.zeros(keep.shape).masked_fill(~keep, -math.inf).to(q.dtype))
    po, pl = P._C._flash_attention_cpu(pt(q), pt(k), pt(v), pt(keep))
    assert_same(po, to, tol=TOLS, scale_atol=True)
    assert npy(po)[:, :, 2].tolist() == np.zeros((1, 2, 16)).tolist()
    assert (npy(pl)[:, :, 2] == 0).all() and (npy(tl)[:, :, 2] == 0).all()  # logsumexp 0, as torch's
    check_sdpa(q, k, v, attn_mask=keep)


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("causal", [False, True])
def test_is_the_float32_kernel_rounded(dtype, causal):
    """The reduced-precision results are the float32 kernel's on the widened inputs, rounded once."""
    g = P.Generator().manual_seed(0)
    q, k, v = (P.randn(2, 2, 45, 16, generator=g).to(getattr(P, dtype)) for _ in range(3))
    go = P.randn(2, 2, 45, 16, generator=g).to(getattr(P, dtype))
    o, lse = P._C._flash_attention_cpu(q, k, v, None, causal)
    o32, lse32 = P._C._flash_attention_cpu(q.float(), k.float(), v.float(), None, causal)
    assert o.dtype == getattr(P, dtype) and lse.dtype == P.float32
    assert P.equal(o, o32.to(o.dtype)) and P.equal(lse, lse32)
    grads = P._C._flash_attention_cpu_backward(go, q, k, v, o, lse, None, causal, None, None, [1, 1, 1])
    grads32 = P._C._flash_attention_cpu_backward(go.float(), q.float(), k.float(), v.float(), o.float(), lse, None,
                                                 causal, None, None, [1, 1, 1])
    for a, b in zip(grads, grads32):
        assert a.dtype == q.dtype and P.equal(a, b.to(a.dtype))


@pytest.mark.parametrize("dtype", LOWP)
def test_autograd_through_sdpa_and_logsumexp(dtype):
    """Gradients reach q/k/v in their dtype, also through the float32 logsumexp output."""
    g = P.Generator().manual_seed(1)
    q, k, v = (P.randn(1, 2, 9, 8, generator=g).to(getattr(P, dtype)).requires_grad_() for _ in range(3))
    o, lse = P._C._flash_attention_cpu(q, k, v, None, False)
    (o.float().sum() + lse.sum()).backward()
    for x in (q, k, v):
        assert x.grad.dtype == x.dtype and tuple(x.grad.shape) == tuple(x.shape)
    # numpy: d(sum lse)/dq = scale * softmax(s) @ k, and d(sum o)/dq adds the output term (checked in float)
    qf, kf, vf = (npy(x) for x in (q, k, v))
    s = qf @ np.swapaxes(kf, -1, -2) / math.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = np.ones((1, 2, 9, 8)) @ np.swapaxes(vf, -1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True)) + p
    want = ds @ kf / math.sqrt(8)
    np.testing.assert_allclose(npy(q.grad), want, rtol=TOL[dtype], atol=TOL[dtype] * max(1, np.abs(want).max()))


@pytest.mark.parametrize("dtype", LOWP)
def test_bad_arguments(dtype):
    dt = getattr(P, dtype)
    q = P.randn(1, 2, 5, 4).to(dt)
    o, lse = P._C._flash_attention_cpu(q, q, q)
    with pytest.raises(RuntimeError, match="logsumexp of dtype Float"):
        P._C._flash_attention_cpu_backward(o, q, q, q, o, lse.to(dt), None, False, None, None, [1, 1, 1])
    with pytest.raises(RuntimeError, match="grad_logsumexp"):
        P._C._flash_attention_cpu_backward(o, q, q, q, o, lse, None, False, None, lse.to(dt), [1, 1, 1])
    with pytest.raises(RuntimeError, match="attn_mask of dtype"):
        P._C._flash_attention_cpu(q, q, q, P.zeros(1, 2, 5, 5, dtype=P.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        P._C._flash_attention_cpu(q, q.float(), q)


@pytest.mark.parametrize("dtype", LOWP)
def test_double_backward_computes_in_float32(dtype):
    """The composite double backward (F._flash_attention_double_backward) on reduced-precision inputs
    gives the float64 result to the dtype's precision, gradients in the input dtype."""
    g = P.Generator().manual_seed(2)
    base = [P.randn(1, 2, 7, 4, generator=g) for _ in range(3)]
    res = {}
    for dt in (dtype, "float64"):
        q, k, v = (x.to(getattr(P, dtype)).to(getattr(P, dt)).requires_grad_() for x in base)
        o, lse = P._C._flash_attention_cpu(q, k, v, None, True)
        gq, = P.autograd.grad((o.double() ** 2).sum() + (lse.double() ** 2).sum(), [q], create_graph=True)
        (gq.double() * P.linspace(-1, 1, 4, dtype=P.float64)).sum().backward()
        res[dt] = [q.grad, k.grad, v.grad]
    for a, b in zip(res[dtype], res["float64"]):
        assert a.dtype == getattr(P, dtype)
        want = npy(b)
        np.testing.assert_allclose(npy(a), want, rtol=4 * TOL[dtype], atol=4 * TOL[dtype] * max(1, np.abs(want).max()))
