"""A custom nn.Module with parameters, a buffer, state_dict round trip and SGD with momentum."""
import torch
import torch.nn.functional as F


class Poly(torch.nn.Module):
    def __init__(self, degree):
        super().__init__()
        self.coef = torch.nn.Parameter(torch.zeros(degree + 1))
        self.register_buffer("powers", torch.arange(degree + 1, dtype=torch.float32))

    def forward(self, x):
        return (x.unsqueeze(-1) ** self.powers) @ self.coef

    def extra_repr(self):
        return f"degree={self.coef.numel() - 1}"


torch.manual_seed(2)
model = Poly(3)
print(model)
print("keys", list(model.state_dict().keys()))
x = torch.linspace(-1, 1, 200)
y = torch.tanh(3 * x)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for t in range(200):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if t % 50 == 49:
        print("loss", t, f"{loss.item():.8f}")
copy = Poly(3)
copy.load_state_dict(model.state_dict())
print("coef", [f"{v:.6f}" for v in copy.coef.tolist()])
print("same", torch.equal(copy(x), model(x)))
