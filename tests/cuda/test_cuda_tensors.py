"""CUDA tensors against the same work on the CPU: moving, factories, views and in-place writes, mixed devices, host
reads, autograd, serialization. Values are compared with the CPU's results (torch's, by the CPU op tests)."""
import io

import numpy as np
import pytest

import pyctorch as torch
from comparison import assert_same

DEV = torch.device("cuda", 0)


def test_devices_and_properties():
    assert torch.cuda.is_available() and torch.cuda.device_count() >= 1
    assert torch.cuda.is_initialized()
    p = torch.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.major >= 8 and isinstance(p.name, str)
    assert torch.cuda.get_device_capability(0) == (p.major, p.minor)
    assert torch.cuda.current_device() == 0
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total
    if torch.cuda.device_count() > 1:
        with torch.cuda.device(1):
            assert torch.cuda.current_device() == 1
            assert torch.zeros(1, device="cuda").device == torch.device("cuda", 1)
        assert torch.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1, device=f"cuda:{torch.cuda.device_count()}")


def test_moving_between_devices():
    x = torch.arange(12.0).reshape(3, 4)
    c = x.cuda()
    assert c.is_cuda and c.device == DEV and str(c.device) == "cuda:0"
    assert_same(c.cpu(), x)
    assert c.cpu().device.type == "cpu" and x.cpu() is x
    assert c.to("cuda") is c and c.to(DEV, torch.float64).dtype == torch.float64
    t = c.t()
    assert_same(t.contiguous().cpu(), x.t())
    assert_same(x.t().cuda().cpu(), x.t())  # a transposed source keeps its values
    assert_same(c.to("cpu", torch.int32), x.to(torch.int32))
    assert_same(x.to(c).cpu(), x)  # to(other): other's device and dtype
    assert x.to(c).is_cuda and x.type_as(c).is_cuda
    h = torch.tensor([1.5, 2.5], dtype=torch.float16).cuda()
    assert h.dtype == torch.float16 and h.cpu().tolist() == [1.5, 2.5]


def test_factories_on_the_device():
    assert_same(torch.zeros(2, 3, device="cuda").cpu(), torch.zeros(2, 3))
    assert_same(torch.ones(4, dtype=torch.int64, device=DEV).cpu(), torch.ones(4, dtype=torch.int64))
    assert_same(torch.full((2,), 2.5, device="cuda").cpu(), torch.full((2,), 2.5))
    assert torch.empty(3, device="cuda").device == DEV
    x = torch.randn(2, 3, device="cuda")
    assert x.device == DEV and torch.zeros_like(x).device == DEV and x.new_ones(5).device == DEV
    assert torch.zeros_like(torch.ones(2), device="cuda").device == DEV
    assert torch.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]
    assert torch.eye(2, device="cuda").cpu().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.tensor([[1, 2]], device="cuda").device == DEV
    with torch.device("cuda"):
        assert torch.zeros(1).device == DEV and torch.tensor([1.0]).device == DEV
    assert torch.zeros(1).device.type == "cpu"


def test_views_and_in_place_writes_alias():
    x = torch.zeros(3, 4, device="cuda")
    v = x[1]
    v.fill_(2.0)
    x.t()[0].add_(1.0)  # a view of a view: column 0
    expected = torch.zeros(3, 4)
    expected[1] = 2.0
    expected[:, 0] += 1.0
    assert_same(x.cpu(), expected)
    x[2, 3] = 7.0
    assert x[2, 3].item() == 7.0
    y = torch.arange(6.0, device="cuda")
    torch.add(y[3:], 1, out=y[:3])
    assert y.cpu().tolist() == [4.0, 5.0, 6.0, 3.0, 4.0, 5.0]
    assert y._version > 0


def test_ops_match_the_cpu():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    ca, cb = torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda")
    pa, pb = torch.tensor(a), torch.tensor(b)
    for f in (lambda p, q: p @ q, lambda p, q: (p.exp() + 1).log().sum(0), lambda p, q: p.softmax(-1),
              lambda p, q: p.max(1), lambda p, q: p.sort(1), lambda p, q: p[p > 0],
              lambda p, q: torch.nn.functional.layer_norm(p, (7,)), lambda p, q: p.cumsum(1)):
        got, want = f(ca, cb), f(pa, pb)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert g.device == DEV
            assert_same(g.cpu(), w, 1e-6, 1e-6)
    idx = torch.tensor([0, 4, 2], device="cuda")
    assert_same(ca[idx].cpu(), pa[torch.tensor([0, 4, 2])])
    assert_same((ca + torch.tensor(2.0)).cpu(), pa + 2.0)  # a 0-d CPU tensor joins a CUDA op


def test_mixed_devices_refuse():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(2, device="cuda") + torch.ones(2)


def test_host_reads():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x[1, 0].item() == 3.0
    assert float(x[0, 1]) == 2.0 and int(x[1, 1]) == 4 and bool(x[0, 0])
    assert repr(x) == "tensor([[1., 2.],\n        [3., 4.]], device='cuda:0')"
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    np.testing.assert_array_equal(x.numpy(force=True), [[1.0, 2.0], [3.0, 4.0]])
    assert torch.tensor([x[0, 0], x[1, 1]]).tolist() == [1.0, 4.0]


def test_autograd_keeps_gradients_on_the_device():
    w = torch.randn(4, 3, device="cuda", dtype=torch.float64, requires_grad=True)
    x = torch.randn(5, 4, device="cuda", dtype=torch.float64)
    loss = (x @ w).tanh().sum()
    loss.backward()
    assert w.grad.device == DEV
    wc = w.detach().cpu().requires_grad_()
    (x.cpu() @ wc).tanh().sum().backward()
    assert_same(w.grad.cpu(), wc.grad, 1e-12, 1e-12)


def test_save_and_load_keep_the_location():
    x = torch.arange(4.0, device="cuda")
    buf = io.BytesIO()
    torch.save({"x": x, "tail": x[1:]}, buf)
    buf.seek(0)
    d = torch.load(buf)
    assert d["x"].device == DEV and d["tail"].cpu().tolist() == [1.0, 2.0, 3.0]
    buf.seek(0)
    assert torch.load(buf, map_location="cpu")["x"].device.type == "cpu"


def test_pinned_memory():
    x = torch.arange(6.0)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.device.type == "cpu"
    c = p.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    assert_same(c.cpu(), x)


def test_dlpack_and_the_cuda_array_interface_share_device_memory():
    x = torch.arange(6.0, device="cuda").reshape(2, 3)
    assert x.__dlpack_device__() == (2, 0)  # kDLCUDA
    y = torch.from_dlpack(x)
    assert y.device == DEV and y.data_ptr() == x.data_ptr()
    y[0, 0] = 5.0
    assert x[0, 0].item() == 5.0
    cai = x.t().__cuda_array_interface__
    assert cai["typestr"] == "<f4" and cai["shape"] == (3, 2) and cai["strides"] == (4, 12)
    assert cai["data"] == (x.data_ptr(), False) and cai["version"] == 2
    assert not hasattr(torch.ones(1), "__cuda_array_interface__")


def test_dataloader_pins_its_batches():
    data = torch.utils.data.TensorDataset(torch.arange(8.0).reshape(4, 2))
    batches = list(torch.utils.data.DataLoader(data, batch_size=2, pin_memory=True))
    assert all(b[0].is_pinned() for b in batches)
    assert batches[1][0].to("cuda", non_blocking=True).cpu().tolist() == [[4.0, 5.0], [6.0, 7.0]]


def test_gradients_go_back_to_the_source_device():
    """to()'s backward moves the gradient to the input's device and dtype (torch's ToCopyBackward0)."""
    x = torch.randn(3, requires_grad=True)
    (x.to(DEV) * 2).sum().backward()
    assert x.grad.device.type == "cpu"
    assert_same(x.grad, torch.full((3,), 2.0))
    c = torch.randn(3, device=DEV, requires_grad=True)
    (c.cpu() * 3).sum().backward()
    assert c.grad.device == DEV
    d = torch.randn(3, requires_grad=True)
    y = d.to(torch.ones(1, device=DEV, dtype=torch.float64))
    assert y.dtype == torch.float64 and y.device == DEV
    y.sum().backward()
    assert d.grad.device.type == "cpu" and d.grad.dtype == torch.float32


def test_views_are_views_of_the_device_storage():
    """View ops take their device-neutral kernels on CUDA (Note [Device-neutral views]): no copy through the host,
    the same storage, writes seen through every view."""
    kernels = set(torch._C._cuda_kernel_ops())
    assert {"view", "reshape", "permute", "transpose", "t", "expand", "narrow", "select", "squeeze", "unsqueeze",
            "split", "chunk", "unbind", "as_strided", "diagonal", "unfold", "detach", "flatten"} <= kernels
    x = torch.arange(24.0, device=DEV)
    v = x.view(2, 3, 4).permute(2, 0, 1)[1:3].transpose(0, 2)
    assert v.data_ptr() == x.data_ptr() + v.storage_offset() * 4 and v.untyped_storage().data_ptr() == x.data_ptr()
    v.zero_()
    ref = torch.arange(24.0).view(2, 3, 4)
    ref[:, :, 1:3] = 0
    assert_same(x.cpu(), ref.view(-1))
    parts = x.view(4, 6).chunk(2, dim=1)
    assert all(p.untyped_storage().data_ptr() == x.data_ptr() for p in parts)
    y = torch.ones(3, 4, device=DEV)
    y.t_()
    assert y.shape == (4, 3) and y.stride() == (1, 4)
