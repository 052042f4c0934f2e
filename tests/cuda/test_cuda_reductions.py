"""Reductions on CUDA through the backend's reduction runner (Note [Device reductions], Note [CUDA reduction walk] in
csrc/cuda/reduce.cuh) against the CPU's results for the same inputs: each walk (a thread per output, groups of lanes
per output, outputs split into chunks combined in a second pass), index ops keeping the first occurrence across lanes
and chunks, every family, out= and dtypes. The op-table tests cover the ops' arguments and errors on CUDA too."""
import numpy as np
import pytest

import pyctorch as torch
from comparison import assert_same

DEV = "cuda"


def on_both(f, x, rtol=1e-5, atol=1e-5):
    want, got = f(x), f(x.to(DEV))
    for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
        assert g.device.type == "cuda" and g.dtype == w.dtype and g.shape == w.shape
        if w.dtype.is_floating_point:
            assert_same(g.cpu().double().numpy(), w.double().numpy(), rtol=rtol, atol=atol)
        else:
            assert_same(g.cpu(), w)


def test_reductions_run_on_the_device():
    assert {"sum", "mean", "amax", "argmax", "max", "var", "norm", "logsumexp", "all"} <= set(torch._C._cuda_kernel_ops())


@pytest.mark.parametrize("shape,dim", [((37, 53), 1), ((37, 53), 0), ((5000,), 0), ((3, 70000), 1), ((70000, 3), 0),
                                       ((6, 5, 4), (0, 2)), ((2, 3, 4, 5), None), ((4, 0, 3), 1), ((0,), 0)])
def test_sum_walks(shape, dim):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=g)
    on_both(lambda t: t.sum(dim) if dim is not None else t.sum(), x, rtol=1e-4, atol=1e-3)
    on_both(lambda t: t.mean(dim) if dim is not None else t.mean(), x, rtol=1e-4, atol=1e-4)
    on_both(lambda t: t.amax(dim) if dim is not None else t.amax(), x) if x.numel() else None


def test_strided_and_transposed_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 60, generator=g)
    on_both(lambda t: t.t().sum(1), x, atol=1e-4)
    on_both(lambda t: t[::3, 5:].sum(0), x, atol=1e-4)
    on_both(lambda t: t.t()[:, ::2].amin(0), x)
    on_both(lambda t: t.unsqueeze(1).expand(40, 3, 60).sum((0, 2)), x, atol=1e-3)


def test_index_ops_keep_the_first_occurrence():
    # ties everywhere: lanes and chunks must combine in order
    for n in (50, 5000, 300000):
        x = torch.zeros(n)
        x[n // 3] = x[2 * n // 3] = 1.0
        assert x.to(DEV).argmax().item() == n // 3
        assert torch.zeros(n, device=DEV).argmin().item() == 0
    x = torch.tensor([[1.0, 3.0, 3.0, float("nan"), 2.0, float("nan")]] * 3)
    on_both(lambda t: t.argmax(1), x)
    on_both(lambda t: t.max(1), x)
    on_both(lambda t: t.min(0), x)
    g = torch.Generator().manual_seed(2)
    y = torch.randint(0, 4, (30, 200), generator=g)
    on_both(lambda t: t.argmax(1), y)
    on_both(lambda t: t.argmin(0), y)
    on_both(lambda t: t.max(dim=1, keepdim=True), y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
                                   torch.int64, torch.uint8, torch.bool])
def test_dtypes(dtype):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(20, 300, generator=g) * 10).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-1) if dtype in (torch.float16, torch.bfloat16) else dict(rtol=1e-5, atol=1e-3)
    on_both(lambda t: t.sum(1), x, **tol)
    on_both(lambda t: t.amax(0), x)
    if dtype != torch.bool:  # argmax refuses bool (the op tests check that error on CUDA too)
        on_both(lambda t: t.argmax(1), x)
    on_both(lambda t: t.any(1), x)
    on_both(lambda t: t.count_nonzero(0), x)
    if dtype.is_floating_point:
        on_both(lambda t: t.prod(1) if dtype == torch.float64 else t[:, :5].prod(1), x, **tol)
        on_both(lambda t: t.var(1), x, **tol)


def test_statistics_and_norms():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(64, 3000, generator=g, dtype=torch.float64)
    on_both(lambda t: t.var(1, correction=0), x, rtol=1e-10)
    on_both(lambda t: t.std(), x, rtol=1e-10)
    on_both(lambda t: torch.var_mean(t, 0), x, rtol=1e-10, atol=1e-12)
    on_both(lambda t: torch.std_mean(t, 1, keepdim=True), x, rtol=1e-10, atol=1e-12)
    on_both(lambda t: t.logsumexp(1), x, rtol=1e-10)
    for p in (2, 1, 0, 3.5, float("inf"), float("-inf")):
        on_both(lambda t: t.norm(p=p, dim=1), x, rtol=1e-10)
    on_both(lambda t: torch.aminmax(t, dim=0), x)
    on_both(lambda t: t.nansum(0), torch.where(x > 1, float("nan"), x), rtol=1e-10, atol=1e-10)
    on_both(lambda t: t.nanmean(1), torch.where(x > 1, float("nan"), x), rtol=1e-10, atol=1e-10)
    on_both(lambda t: t.float().sum(1, dtype=torch.float64), x, rtol=1e-6)


def test_out_and_autograd():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(8, 9, generator=g)
    out = torch.empty(9, device=DEV)
    r = torch.sum(x.to(DEV), 0, out=out)
    assert r.data_ptr() == out.data_ptr()
    np.testing.assert_allclose(out.cpu().numpy(), x.sum(0).numpy(), rtol=1e-5)
    xc = x.to(DEV).requires_grad_()
    (xc.softmax(1) * xc).sum().backward()
    xr = x.clone().requires_grad_()
    (xr.softmax(1) * xr).sum().backward()
    assert xc.grad.device.type == "cuda"
    np.testing.assert_allclose(xc.grad.cpu().numpy(), xr.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        torch.ones(3, dtype=torch.int64, device=DEV).var()


@pytest.mark.parametrize("shape,dim", [((7, 50), 1), ((7, 50), 0), ((3, 5000), 1), ((4, 40, 3), 1), ((2, 3, 64), 1),
                                       ((5,), 0), ((2, 0, 3), 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_softmax_forward_and_backward(shape, dim, dtype):
    """softmax and log_softmax on CUDA (Note [Device softmax]): each walk (a thread per row where the inner dims are
    wide, lanes along the row otherwise), and their backward kernels, against the CPU's."""
    g = torch.Generator().manual_seed(6)
    x = (torch.randn(*shape, generator=g) * 3).to(dtype)
    w = torch.randn(*shape, generator=g).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)
    for f in (torch.softmax, torch.log_softmax):
        assert {"softmax", "log_softmax", "_softmax_backward_data"} <= set(torch._C._cuda_kernel_ops())
        on_both(lambda t: f(t, dim), x, **tol)
        xr, xc = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        (f(xr, dim) * w).sum().backward()
        (f(xc, dim) * w.to(DEV)).sum().backward()
        assert xc.grad.device.type == "cuda"
        np.testing.assert_allclose(xc.grad.cpu().double().numpy(), xr.grad.double().numpy(), **tol)
    # NaN rows stay NaN, -inf entries get 0 probability
    y = torch.tensor([[0.0, float("-inf"), 1.0], [float("nan"), 0.0, 1.0]], dtype=dtype)
    on_both(lambda t: torch.softmax(t, 1), y, **tol)


@pytest.mark.parametrize("shape,ns", [((6, 50), (50,)), ((3, 4, 70), (4, 70)), ((2, 5000), (5000,)), ((300, 8), (8,)),
                                      ((0, 16), (16,))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("rms", [False, True])
def test_layer_and_rms_norm(shape, ns, dtype, rms):
    """layer_norm and rms_norm on CUDA (Note [Device row norms]): outputs, the saved statistics, and the backward's
    input and parameter gradients (column sums over chunks of rows combined in a second pass), against the CPU's."""
    g = torch.Generator().manual_seed(7)
    x = (torch.randn(*shape, generator=g) * 2 + 1).to(dtype)
    w = torch.randn(*ns, generator=g).to(dtype)
    b = torch.randn(*ns, generator=g).to(dtype)
    up = torch.randn(*shape, generator=g).to(dtype)
    tol = dict(rtol=3e-2, atol=3e-2) if dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-5)

    def run(dev):
        xs, ws, bs = (t.detach().to(dev).requires_grad_() for t in (x, w, b))
        if rms:
            y = torch.nn.functional.rms_norm(xs, ns, ws, eps=1e-5)
        else:
            y = torch.nn.functional.layer_norm(xs, ns, ws, bs, eps=1e-5)
        (y * up.to(dev)).sum().backward()
        return [y] + [t.grad for t in (xs, ws) + (() if rms else (bs,))]

    for want, got in zip(run("cpu"), run(DEV)):
        assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.detach().cpu().double().numpy(), want.detach().double().numpy(), **tol)
    if not rms and x.numel():
        stats = torch.native_layer_norm(x.to(DEV), ns, None, None, 1e-5)
        want = torch.native_layer_norm(x, ns, None, None, 1e-5)
        for a, e in zip(stats[1:], want[1:]):
            np.testing.assert_allclose(a.cpu().double().numpy(), e.double().numpy(), **tol)


@pytest.mark.parametrize("n,c", [(7, 5), (33, 70), (3, 5000), (0, 4)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("opts", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.1},
                                  {"ignore_index": 1}, {"weight": True, "label_smoothing": 0.2}])
def test_cross_entropy(n, c, dtype, opts):
    """cross_entropy with class targets on CUDA (Note [Device cross entropy]): loss and input gradient against the
    CPU's, with every reduction, label smoothing, class weights and ignore_index."""
    g = torch.Generator().manual_seed(8)
    x = (torch.randn(n, c, generator=g) * 3).to(dtype)
    t = torch.randint(0, c, (n,), generator=g)
    opts = dict(opts)
    w = torch.rand(c, generator=g).to(dtype) + 0.5 if opts.pop("weight", False) else None
    tol = dict(rtol=3e-2, atol=3e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)

    def run(dev):
        xs = x.detach().to(dev).requires_grad_()
        loss = torch.nn.functional.cross_entropy(xs, t.to(dev), weight=None if w is None else w.to(dev), **opts)
        (loss.sum() if loss.ndim else loss).backward()
        return loss, xs.grad

    for want, got in zip(run("cpu"), run(DEV)):
        assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.detach().cpu().double().numpy(), want.detach().double().numpy(), **tol)
    assert {"_cross_entropy_loss", "_cross_entropy_loss_backward"} <= set(torch._C._cuda_kernel_ops())
    if n:
        with pytest.raises(IndexError, match="out of bounds"):
            torch.nn.functional.cross_entropy(x.to(DEV), torch.full((n,), c, device=DEV))


@pytest.mark.parametrize("opts", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True}])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_embedding(opts, dtype):
    """embedding's lookup and dense backward on CUDA (Note [Device embedding]): repeated indices summed in index order,
    the padding row, scale_grad_by_freq, a transposed weight; torch's error for an index out of range."""
    g = torch.Generator().manual_seed(9)
    weight = torch.randn(10, 6, generator=g).to(dtype)
    idx = torch.tensor([[1, 2, 2, 9], [0, 2, 1, 1]])
    up = torch.randn(2, 4, 6, generator=g).to(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-6, atol=1e-7)

    def run(dev):
        w = weight.detach().to(dev).requires_grad_()
        out = torch.nn.functional.embedding(idx.to(dev), w, **opts)
        (out * up.to(dev)).sum().backward()
        return out, w.grad

    for want, got in zip(run("cpu"), run(DEV)):
        assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.detach().cpu().double().numpy(), want.detach().double().numpy(), **tol)
    on_both(lambda w: torch.nn.functional.embedding(idx.to(w.device), w.t()), weight.t().contiguous())
    on_both(lambda w: torch.nn.functional.embedding(idx.to(w.device).int(), w), torch.arange(30).view(10, 3))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.functional.embedding(torch.tensor([10], device=DEV), weight.to(DEV))


@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 8), (2, 5, 70), (1, 3, 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(shape, dtype, training):
    """batch norm on CUDA (Note [Device batch norm]): outputs, running statistics updated in place (their version
    counters untouched), and the input and parameter gradients, in training and eval, against the CPU's."""
    g = torch.Generator().manual_seed(10)
    C = shape[1]
    x = (torch.randn(*shape, generator=g) * 2 + 1).to(dtype)
    up = torch.randn(*shape, generator=g).to(dtype)
    pdt = torch.float32 if dtype == torch.bfloat16 else dtype
    w, b = torch.randn(C, generator=g).to(pdt), torch.randn(C, generator=g).to(pdt)
    rm, rv = torch.randn(C, generator=g).to(pdt), torch.rand(C, generator=g).to(pdt) + 0.5
    tol = dict(rtol=3e-2, atol=3e-2) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-6)

    def run(dev):
        xs, ws, bs = (t.detach().to(dev).requires_grad_() for t in (x, w, b))
        rms, rvs = rm.to(dev).clone(), rv.to(dev).clone()
        versions = (rms._version, rvs._version)
        y = torch.nn.functional.batch_norm(xs, rms, rvs, ws, bs, training=training, momentum=0.3, eps=1e-4)
        assert (rms._version, rvs._version) == versions
        (y * up.to(dev)).sum().backward()
        return y, rms, rvs, xs.grad, ws.grad, bs.grad

    for want, got in zip(run("cpu"), run(DEV)):
        assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.detach().cpu().double().numpy(), want.detach().double().numpy(), **tol)
    assert {"native_batch_norm", "native_batch_norm_backward"} <= set(torch._C._cuda_kernel_ops())
