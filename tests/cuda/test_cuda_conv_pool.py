"""Convolutions on CUDA through the device-neutral driver (Note [Device convolution] in csrc/aten/cpu/conv_device.c):
the backend's im2col / col2im kernels (csrc/cuda/conv_cols.cu) and its GEMM, against the CPU's results (and torch's
CPU results where torch is installed) for values and the three gradients, over 1-d, 2-d and 3-d problems, strides,
paddings ('same' too), dilations, groups, transposed convolutions, non-contiguous inputs and dtypes; errors as torch's;
the ops served by the device (not the CPU fallback) and deterministic."""
import numpy as np
import pytest

import pyctorch as torch
from comparison import assert_same

try:
    import torch as _real_torch  # noqa: F401  (the oracle; its comparisons skip without it)
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

DEV = "cuda"
F = torch.nn.functional


def close(got, want, tol):
    assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    assert_same(got.cpu().double().numpy(), want.double().numpy(), rtol=tol, atol=tol)


def run(f, args, dtype, lib=torch):
    """f(*args) and the gradients of every argument for a fixed random upstream gradient, on the device of the args
    (lib: pyctorch, or torch for the oracle); returns (output, grads)."""
    leaves = [a.detach().clone().requires_grad_(True) for a in args]
    out = f(*leaves)
    up_np = np.random.default_rng(7).standard_normal(tuple(out.shape))
    up = lib.tensor(up_np).to(dtype).to(out.device)
    out.backward(up)
    return out.detach(), [leaf.grad for leaf in leaves]


def both(f, args, dtype=torch.float32, tol=1e-4, cuda_args=None):
    """The same call on the CPU and on CUDA (cuda_args: the CUDA inputs when they are views made on the device);
    outputs and gradients must agree. Returns the CPU outcome."""
    args = [a.to(dtype) for a in args]
    want = run(f, args, dtype)
    got = run(f, cuda_args(args) if cuda_args else [a.to(DEV) for a in args], dtype)
    close(got[0], want[0], tol)
    for gw, gg in zip(want[1], got[1]):
        close(gg, gw, tol)
    return want, args


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def with_torch(f, args, want):
    """torch's CPU result for the same float64 call agrees with pyctorch's CPU one (skipped without torch)."""
    if not HAVE_TORCH:
        return
    import torch as real
    got = run(f, [real.tensor(a.double().numpy()) for a in args], real.float64, real)
    assert np.allclose(got[0].numpy(), want[0].double().numpy(), rtol=1e-6, atol=1e-6)


def test_convolutions_run_on_the_device():
    assert {"convolution", "convolution_backward"} <= set(torch._C._cuda_kernel_ops())


CASES_2D = [  # (N, Cin, H, W), (Cout, Cin/groups, KH, KW), kwargs
    ((2, 3, 9, 8), (4, 3, 3, 3), {}),
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(stride=2, padding=1)),
    ((1, 4, 11, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(2, 1), groups=2)),
    ((3, 6, 8, 8), (6, 1, 3, 3), dict(padding=1, groups=6)),                   # depthwise
    ((2, 4, 5, 6), (8, 4, 1, 1), {}),                                        # 1x1: no columns
    ((2, 4, 5, 6), (8, 4, 1, 1), dict(stride=2)),
    ((2, 2, 7, 7), (3, 2, 3, 3), dict(padding="same", dilation=2)),
    ((1, 3, 6, 9), (2, 3, 2, 4), dict(padding="valid", stride=(1, 3))),
    ((2, 3, 4, 4), (5, 3, 4, 4), dict(padding=2, dilation=1)),               # kernel as large as the input
]


@pytest.mark.parametrize("xs,ws,kw", CASES_2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(xs, ws, kw, bias):
    x, w, b = rand(*xs, seed=1), rand(*ws, seed=2), rand(ws[0], seed=3)
    f = (lambda x, w, b: F.conv2d(x, w, b, **kw)) if bias else (lambda x, w: F.conv2d(x, w, None, **kw))
    want, args = both(f, [x, w, b] if bias else [x, w], torch.float32, tol=1e-4)
    with_torch((lambda x, w, b: __import__("torch").nn.functional.conv2d(x, w, b, **kw)) if bias
               else (lambda x, w: __import__("torch").nn.functional.conv2d(x, w, None, **kw)), args, want)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 17), (4, 3, 3), dict(stride=2, padding=1)),
    ((1, 4, 12), (4, 2, 5), dict(dilation=2, groups=2, padding="same")),
    ((2, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    ((1, 4, 4, 5, 6), (4, 1, 3, 3, 3), dict(groups=4, dilation=(1, 2, 1), padding=1)),
])
def test_conv1d_and_conv3d(xs, ws, kw):
    conv = {3: F.conv1d, 5: F.conv3d}[len(xs)]
    x, w, b = rand(*xs, seed=4), rand(*ws, seed=5), rand(ws[0], seed=6)
    both(lambda x, w, b: conv(x, w, b, **kw), [x, w, b], torch.float64, tol=1e-10)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 6, 4), (4, 2, 2, 3), dict(groups=2, dilation=(2, 1))),
    ((2, 3, 4, 4), (3, 5, 1, 1), {}),
    ((2, 2, 7), (2, 3, 4), dict(stride=3, padding=2)),
])
def test_conv_transpose(xs, ws, kw):
    conv = {3: F.conv_transpose1d, 4: F.conv_transpose2d}[len(xs)]
    groups = kw.get("groups", 1)
    x, w, b = rand(*xs, seed=7), rand(*ws, seed=8), rand(ws[1] * groups, seed=9)
    want, args = both(lambda x, w, b: conv(x, w, b, **kw), [x, w, b], torch.float32, tol=1e-4)
    name = {3: "conv_transpose1d", 4: "conv_transpose2d"}[len(xs)]
    with_torch(lambda x, w, b: getattr(__import__("torch").nn.functional, name)(x, w, b, **kw), args, want)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float16, 2e-2), (torch.bfloat16, 1e-1)])
def test_dtypes(dtype, tol):
    x, w, b = rand(2, 4, 7, 6, seed=10), rand(6, 2, 3, 3, seed=11), rand(6, seed=12)
    both(lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2), [x, w, b], dtype, tol=tol)


def test_non_contiguous_inputs():
    x, w = rand(2, 6, 9, 10, seed=13), rand(3, 3, 3, 3, seed=14)

    def on_device(args):  # the same views, made of device tensors
        xd, wd = x.to(DEV), w.to(DEV)
        return [xd[:, ::2].transpose(2, 3), wd.transpose(2, 3)]

    both(lambda x, w: F.conv2d(x, w, padding=1), [x[:, ::2].transpose(2, 3), w.transpose(2, 3)], torch.float32,
         tol=1e-4, cuda_args=on_device)
    xc = x.to(DEV).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # channels-last strides
    close(F.conv2d(xc, w[:, :1].expand(3, 6, 3, 3).to(DEV)), F.conv2d(x, w[:, :1].expand(3, 6, 3, 3)), 1e-4)


def test_empty_batch_and_channels():
    w, b = rand(4, 3, 3, 3, seed=15), rand(4, seed=16)
    x0 = torch.zeros(0, 3, 5, 5)
    close(F.conv2d(x0.to(DEV), w.to(DEV), b.to(DEV)), F.conv2d(x0, w, b), 0)
    x = rand(2, 3, 5, 5, seed=17).to(DEV).requires_grad_(True)
    wd = w.to(DEV).requires_grad_(True)
    F.conv2d(x, wd, None, padding=1).sum().backward()
    xn = torch.zeros(0, 3, 5, 5, device=DEV, requires_grad=True)
    wn = w.to(DEV).requires_grad_(True)
    bn = b.to(DEV).requires_grad_(True)
    F.conv2d(xn, wn, bn).sum().backward()
    assert float(wn.grad.abs().sum()) == 0 and float(bn.grad.abs().sum()) == 0


def test_the_backward_is_deterministic():
    x = rand(4, 3, 12, 12, seed=18).to(DEV)
    w = rand(5, 3, 3, 3, seed=19).to(DEV)
    grads = []
    for _ in range(2):
        xi, wi = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        F.conv2d(xi, wi, stride=2, padding=2, dilation=2).pow(2).sum().backward()
        grads.append((xi.grad.cpu().numpy(), wi.grad.cpu().numpy()))
    assert np.array_equal(grads[0][0], grads[1][0]) and np.array_equal(grads[0][1], grads[1][1])


def test_module_training_step_matches_the_cpu():
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3, 2))
    dev_model = torch.nn.Sequential(*[m for m in model]).to(DEV) if False else None
    x = rand(2, 3, 10, 10, seed=20)
    out = model(x).sum()
    out.backward()
    cpu_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.to(DEV)
    out_d = model(x.to(DEV)).sum()
    out_d.backward()
    assert abs(float(out_d) - float(out)) <= 1e-3 and dev_model is None
    for gc, p in zip(cpu_grads, model.parameters()):
        close(p.grad, gc, 1e-4)


def errors(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


@pytest.mark.parametrize("make", [
    lambda d: (torch.zeros(2, 4, 5, 5, device=d), torch.zeros(3, 3, 3, 3, device=d)),        # channels
    lambda d: (torch.zeros(2, 3, 2, 2, device=d), torch.zeros(3, 3, 3, 3, device=d)),        # kernel too large
    lambda d: (torch.zeros(3, 5, 5, device=d).unsqueeze(0)[0], torch.zeros(3, 3, 3, device=d)),  # weight dims
])
def test_errors_match_the_cpu(make):
    cpu = errors(lambda: F.conv2d(*make("cpu")))
    assert cpu is not None and errors(lambda: F.conv2d(*make(DEV))) is cpu


def test_mixed_devices_and_dtypes_refused():
    x, w = torch.zeros(1, 3, 5, 5, device=DEV), torch.zeros(2, 3, 3, 3)
    assert issubclass(errors(lambda: F.conv2d(x, w)), RuntimeError)
    assert issubclass(errors(lambda: F.conv2d(x, w.to(DEV).double())), RuntimeError)
    assert issubclass(errors(lambda: F.conv2d(x.long(), w.to(DEV).long())), RuntimeError)
