"""Tensors and hand-written gradients: fit y = cos(x) with a + b x + c x^2 (float64)."""
import math

import torch

assert torch.__version__ >= "2.0", torch.__version__
dtype = torch.float64
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.linspace(-math.pi, math.pi, 500, device=device, dtype=dtype)
y = torch.cos(x)
a = torch.tensor(0.5, dtype=dtype)
b = torch.tensor(-0.25, dtype=dtype)
c = torch.tensor(0.1, dtype=dtype)
lr = 2e-5
for t in range(300):
    y_pred = a + b * x + c * x ** 2
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print("loss", t, repr(loss))
    g = 2.0 * (y_pred - y)
    a -= lr * g.sum()
    b -= lr * (g * x).sum()
    c -= lr * (g * x ** 2).sum()
print("result", a.item(), b.item(), c.item())
