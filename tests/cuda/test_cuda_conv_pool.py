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
    x = rand(2, 3, 10, 10, seed=20)
    out = model(x).sum()
    out.backward()
    cpu_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.to(DEV)
    out_d = model(x.to(DEV)).sum()
    out_d.backward()
    assert abs(float(out_d) - float(out)) <= 1e-3
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


# ---- pooling (Note [Device pooling] in csrc/aten/cpu/pool_device.c, csrc/cuda/pool.cu) ----

POOL_OPS = {"max_pool2d", "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "max_pool1d",
            "max_pool1d_with_indices", "avg_pool2d", "avg_pool2d_backward", "avg_pool1d", "adaptive_avg_pool2d",
            "_adaptive_avg_pool2d_backward", "adaptive_avg_pool1d", "adaptive_max_pool2d", "adaptive_max_pool2d_backward"}


def test_pools_run_on_the_device():
    assert POOL_OPS <= set(torch._C._cuda_kernel_ops())


MAX_CASES = [  # input shape, kwargs
    ((2, 3, 9, 8), dict(kernel_size=2)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 10, 11), dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), dilation=(2, 1))),
    ((2, 2, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ((1, 3, 8, 9), dict(kernel_size=(2, 4), stride=1, padding=(1, 2), dilation=2, ceil_mode=True)),
    ((3, 5, 6), dict(kernel_size=2, stride=1)),                       # unbatched
]


@pytest.mark.parametrize("shape,kw", MAX_CASES)
def test_max_pool2d(shape, kw):
    x = rand(*shape, seed=30)
    want, args = both(lambda x: F.max_pool2d(x, **kw), [x], torch.float32, tol=0)  # a max and its gather are exact
    v, i = F.max_pool2d(x, return_indices=True, **kw)
    vd, idd = F.max_pool2d(x.to(DEV), return_indices=True, **kw)
    close(vd, v, 0)
    assert idd.dtype == torch.int64 and np.array_equal(idd.cpu().numpy(), i.numpy())
    with_torch(lambda x: __import__("torch").nn.functional.max_pool2d(x, **kw), args, want)


def test_max_pool_ties_and_nans_keep_the_cpus_choice():
    x = torch.tensor([[[[1.0, 3.0, 3.0, 0.0], [3.0, float("nan"), 2.0, float("nan")], [0.0, 0.0, 0.0, 0.0],
                        [float("nan"), 5.0, 5.0, float("nan")]]]])
    for kw in (dict(kernel_size=2, stride=1), dict(kernel_size=3, stride=1, padding=1)):
        v, i = F.max_pool2d(x, return_indices=True, **kw)
        vd, idd = F.max_pool2d(x.to(DEV), return_indices=True, **kw)
        assert np.array_equal(idd.cpu().numpy(), i.numpy())
        assert np.array_equal(vd.cpu().numpy(), v.numpy(), equal_nan=True)


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9, 8), dict(kernel_size=2)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((1, 2, 7, 10), dict(kernel_size=(3, 4), stride=(2, 3), padding=(1, 2), ceil_mode=True)),
    ((1, 2, 7, 10), dict(kernel_size=(3, 4), stride=(2, 3), padding=(1, 2), ceil_mode=True, count_include_pad=False)),
    ((2, 2, 6, 6), dict(kernel_size=3, padding=1, divisor_override=5)),
    ((3, 5, 5), dict(kernel_size=2, stride=1)),                       # unbatched
])
def test_avg_pool2d(shape, kw):
    x = rand(*shape, seed=31)
    want, args = both(lambda x: F.avg_pool2d(x, **kw), [x], torch.float64, tol=0)  # the CPU's order of additions
    with_torch(lambda x: __import__("torch").nn.functional.avg_pool2d(x, **kw), args, want)


@pytest.mark.parametrize("shape,size", [((2, 3, 9, 8), (1, 1)), ((2, 3, 9, 8), (3, 3)), ((1, 2, 7, 10), (4, 3)),
                                        ((1, 2, 5, 5), (7, 6)), ((3, 6, 6), (2, 3)), ((2, 4, 7, 7), (None, 3))])
def test_adaptive_pools(shape, size):
    x = rand(*shape, seed=32)
    want, args = both(lambda x: F.adaptive_avg_pool2d(x, size), [x], torch.float32, tol=1e-6)
    with_torch(lambda x: __import__("torch").nn.functional.adaptive_avg_pool2d(x, size), args, want)
    both(lambda x: F.adaptive_max_pool2d(x, size), [x], torch.float32, tol=0)
    v, i = F.adaptive_max_pool2d(x, size, return_indices=True)
    vd, idd = F.adaptive_max_pool2d(x.to(DEV), size, return_indices=True)
    assert np.array_equal(idd.cpu().numpy(), i.numpy()) and np.array_equal(vd.cpu().numpy(), v.numpy())


def test_1d_pools():
    x = rand(2, 3, 17, seed=33)
    both(lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), [x], torch.float32, tol=0)
    both(lambda x: F.max_pool1d(x, 2, dilation=2), [x], torch.float32, tol=0)
    both(lambda x: F.avg_pool1d(x, 4, 3, 2, count_include_pad=False), [x], torch.float32, tol=1e-6)
    both(lambda x: F.adaptive_avg_pool1d(x, 5), [x], torch.float32, tol=1e-6)
    both(lambda x: F.adaptive_max_pool1d(x, 6), [x], torch.float32, tol=0)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 0), (torch.float16, 1e-3), (torch.bfloat16, 1e-2)])
def test_pool_dtypes(dtype, tol):
    x = rand(2, 3, 8, 9, seed=34)
    both(lambda x: F.max_pool2d(x, 3, 2, 1), [x], dtype, tol=0)
    both(lambda x: F.avg_pool2d(x, 3, 2, 1), [x], dtype, tol=tol)
    both(lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [x], dtype, tol=tol)


def test_integer_pools_still_work_on_the_device():
    x = torch.randint(-50, 50, (2, 3, 8, 8), generator=torch.Generator().manual_seed(35))
    close(F.max_pool2d(x.to(DEV), 2), F.max_pool2d(x, 2), 0)
    close(F.avg_pool2d(x.to(DEV), 2), F.avg_pool2d(x, 2), 0)


def test_pools_of_non_contiguous_inputs():
    x = rand(2, 8, 10, 12, seed=36)

    def on_device(args):
        return [x.to(DEV)[:, ::2].transpose(2, 3)]

    view = [x[:, ::2].transpose(2, 3)]
    both(lambda x: F.max_pool2d(x, 3, 2, 1), view, torch.float32, tol=0, cuda_args=on_device)
    both(lambda x: F.avg_pool2d(x, 2, 1), view, torch.float32, tol=1e-6, cuda_args=on_device)
    both(lambda x: F.adaptive_avg_pool2d(x, 3), view, torch.float32, tol=1e-6, cuda_args=on_device)


def test_pool_backward_is_deterministic_and_the_cpus():
    x = rand(4, 3, 15, 15, seed=37)
    for f in (lambda t: F.max_pool2d(t, 3, 1, 1), lambda t: F.avg_pool2d(t, 4, 1, 2, ceil_mode=True)):
        runs = []
        for dev in ("cpu", DEV, DEV):
            t = x.to(dev).detach().clone().requires_grad_(True)
            f(t).pow(2).sum().backward()
            runs.append(t.grad.cpu().numpy())
        assert np.array_equal(runs[1], runs[2]) and np.allclose(runs[0], runs[1], rtol=1e-6, atol=1e-6)


def test_small_cnn_step_runs_natively():
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(6, 8, 3), torch.nn.AvgPool2d(2, ceil_mode=True),
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 3))
    x, y = rand(4, 3, 12, 12, seed=38), torch.tensor([0, 2, 1, 2])
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    want = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model.to(DEV)
    with torch.profiler.profile() as prof:
        loss_d = F.cross_entropy(model(x.to(DEV)), y.to(DEV))
        loss_d.backward()
    assert abs(float(loss_d) - float(loss)) <= 1e-5
    for w, p in zip(want, model.parameters()):
        close(p.grad, w, 1e-4)
    # every convolution and pooling op of the step, forward and backward, has a kernel of the device's own
    ran = {e.key[len("aten::"):] for e in prof.key_averages() if e.key.startswith("aten::")}
    spatial = {n for n in ran if "conv" in n or "pool" in n}
    assert {"convolution", "convolution_backward", "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
            "avg_pool2d", "avg_pool2d_backward", "adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward"} <= spatial
    assert spatial <= set(torch._C._cuda_kernel_ops()), spatial - set(torch._C._cuda_kernel_ops())


@pytest.mark.parametrize("f", [
    lambda d: F.max_pool2d(torch.zeros(1, 1, 2, 2, device=d), 3),               # output too small
    lambda d: F.max_pool2d(torch.zeros(1, 1, 4, 4, device=d), 2, padding=2),    # padding over half the kernel
    lambda d: F.avg_pool2d(torch.zeros(1, 1, 4, 4, device=d), 2, divisor_override=0),
    lambda d: F.adaptive_avg_pool2d(torch.zeros(1, 1, 4, 4, device=d), (1, 2, 3)),
    lambda d: F.max_pool2d(torch.zeros(2, 1, 1, 4, 4, device=d), 2),             # 5-d input
])
def test_pool_errors_match_the_cpu(f):
    cpu = errors(lambda: f("cpu"))
    assert cpu is not None and errors(lambda: f(DEV)) is cpu


def test_pool_backward_refuses_mixed_devices():
    x = rand(1, 1, 4, 4, seed=39)
    out, ind = F.max_pool2d(x, 2, return_indices=True)
    assert issubclass(errors(lambda: torch.ops.aten.max_pool2d_with_indices_backward(
        out.to(DEV), x, [2, 2], [2, 2], [0, 0], [1, 1], False, ind)), RuntimeError)
