"""timm resnet18 (random init, 10 classes): forward, backward and 3 SGD steps on a 2x3x32x32 batch.

float64: with batch 2 the last stage's BatchNorm normalizes 2 values at 1x1, so float32 rounding
differences between any two implementations (torch's own float32 against its float64 differs by 1e-2
at step 2) grow step by step; in float64 pyctorch and torch agree to about 1e-10.
"""
import torch
import timm

torch.manual_seed(0)
model = timm.create_model("resnet18", pretrained=False, num_classes=10).double()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
g = torch.Generator().manual_seed(1)
x = torch.randn(2, 3, 32, 32, generator=g).double()
y = torch.tensor([1, 7])
for step in range(3):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.10f}")
