"""A small model trains on CUDA to the CPU's loss curve (the same seed, the same data)."""
import pyctorch as torch


def _curve(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(4 * 6 * 6, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 1, 8, 8, generator=g), torch.randint(0, 3, (8,), generator=g)
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_cnn_curve_matches_the_cpu():
    cpu, cuda = _curve("cpu"), _curve("cuda")
    assert all(abs(a - b) <= 1e-4 * max(1.0, abs(a)) for a, b in zip(cpu, cuda)), (cpu, cuda)
    assert cuda[-1] < cuda[0]
