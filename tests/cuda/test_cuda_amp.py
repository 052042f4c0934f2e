"""torch.autocast("cuda") with torch's CUDA lists, and torch.amp.GradScaler("cuda")."""
import pyctorch as torch


def test_autocast_cuda_casts_by_torchs_cuda_lists():
    a, b = torch.randn(4, 4, device="cuda"), torch.randn(4, 4, device="cuda")
    for dtype in (torch.float16, torch.bfloat16):
        with torch.autocast("cuda", dtype=dtype):
            c = a @ b
            assert c.dtype == dtype  # lower_precision_fp
            assert c.exp().dtype == torch.float32 and c.softmax(-1).dtype == torch.float32  # fp32
            assert c.sum().dtype == torch.float32 and c.sum(dtype=dtype).dtype == dtype  # fp32 unless dtype=
            assert torch.cat([a, c]).dtype == torch.float32  # promote
            assert (a + b).dtype == torch.float32  # not listed: as is
            assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32  # CPU tensors: the CPU's autocast
        assert (a @ b).dtype == torch.float32
    with torch.autocast("cuda", dtype=torch.float16, enabled=False):
        assert (a @ b).dtype == torch.float32


def test_gradients_flow_back_through_the_casts():
    w = torch.randn(4, 4, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = (w @ w).float().sum()
    out.backward()
    assert w.grad.dtype == torch.float32 and w.grad.device.type == "cuda"


def _scaled_run(device):
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2).to(device)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device)
    x = torch.randn(3, 4).to(device)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = m(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses, scaler.get_scale()


def test_grad_scaler_cuda_matches_the_cpu():
    (gpu, gpu_scale), (cpu, cpu_scale) = _scaled_run("cuda"), _scaled_run("cpu")
    assert gpu_scale == cpu_scale == 65536.0
    assert all(abs(a - b) <= 2e-2 * abs(b) for a, b in zip(gpu, cpu)), (gpu, cpu)  # bf16 GEMMs round differently
