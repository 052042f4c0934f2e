"""Dynamic graph: Python control flow picks how many times a shared layer is applied."""
import random

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(3, 8)
        self.mid = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 1)

    def forward(self, x):
        h = self.inp(x).clamp(min=0)
        for _ in range(random.randint(0, 3)):
            h = self.mid(h).relu()
        return self.out(h)


random.seed(3)
torch.manual_seed(3)
net = DynamicNet()
x = torch.randn(32, 3)
y = x.sum(1, keepdim=True).sin()
opt = torch.optim.SGD(net.parameters(), lr=2e-3, momentum=0.9)
crit = torch.nn.MSELoss(reduction="sum")
for t in range(60):
    loss = crit(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if t % 20 == 19:
        print("loss", t, f"{loss.item():.6f}")
print("weight-norms", [f"{p.norm().item():.6f}" for p in net.parameters()])
