"""nn.Sequential + Adam + a learning-rate schedule on random regression data."""
import torch
from torch import nn

torch.manual_seed(1)
torch.backends.cudnn.benchmark = True
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1), nn.Flatten(0, 1))
loss_fn = nn.MSELoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.5)
x = torch.randn(64, 5)
y = (x[:, 0] * 2 - x[:, 1] + 0.5 * x[:, 2] ** 2).sin()
for t in range(90):
    loss = loss_fn(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if t % 30 == 29:
        print("loss", t, f"{loss.item():.7f}", "lr", sched.get_last_lr()[0])
print("bias", model[2].bias.item())
torch.testing.assert_close(model(x).detach(), model(x).detach())
print("params", sum(p.numel() for p in model.parameters()))
